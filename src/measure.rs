//! `misaal isa measure`: latency and reciprocal throughput of every x86 spec
//! this CPU can run, timed with the generated kernels of
//! `misaal-measure-x86`, written to this machine's own table,
//! `isa/costs/x86-<machine>.csv` (costs belong to a microarchitecture; the
//! compiler picks a table by the target's CPU, see
//! `misaal_compiler::isel::extract::cost_table_for_target`).
//!
//! The timestamp counter does not count core cycles (it ticks at a fixed
//! rate while the core's clock moves) and this machine may offer no cycle
//! counter, so every timing is divided by the latency of a chain of
//! one-cycle operations (the fastest of `vpaddd`, `vpsubd`, `vpaddq` and
//! `vpxor` in this run, since in a rare process one loop, once `vpaddd`'s,
//! runs slow throughout) timed in turn with it.
//!
//! This machine is shared: programs on the other CPUs slow a loop by up
//! to 2x for seconds at a time, so the timings of one moment, however
//! many, can all be wrong. Every loop is therefore visited many times
//! (passes over all of them, alternately forwards and backwards, so its
//! visits are spread over the whole run), each visit converting ticks to
//! cycles with the clock chain timed in that same visit (but never at a
//! clock more than 5% below the highest the chain showed in the run,
//! since the chain itself is sometimes slowed); a loop's cost
//! is its fastest visit that a second visit confirms (within 2%), since
//! interference only adds time; loops with few visits near that fastest
//! are visited again. The long loop alone is used: nanoBench's
//! long-minus-short difference is exact on a quiet core, but here the two
//! loops are slowed by different amounts and it came out both too large
//! and too small (0.10 cycles for `vpaddd`'s 0.25 throughput).

use misaal_measure_x86::method::{CLOCK_CHAINS, CONFIRM, Clock, Job, Kind, Rounds, dump, visit_all};
use misaal_measure_x86::{Chain, Loops, REFERENCE, Timer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

pub struct MeasureArgs {
    pub filter: Option<String>,
    pub out: Option<PathBuf>,
    pub repeats: usize,
    pub allow_unoptimized: bool,
}

/// One row of the cost table (schema and writer in `misaal-reports`).
pub use misaal_reports::CostRow;

/// This machine's table, `isa/costs/<target>-<machine>.csv` (the machine
/// named as its evidence file is: CPU name, family, model, stepping).
pub fn this_machine_table(target: &str) -> PathBuf {
    let specs = misaal_isa::bundled_spec_dir(target);
    let root = specs.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
    root.join("costs").join(format!("{target}-{}.csv", misaal_isa::evidence::Machine::this_cpu().slug()))
}

/// Reads a cost table: `Ok(empty)` when the file does not exist, an error
/// when its header is not [`misaal_reports::COST_COLUMNS`] or a row is
/// malformed.
pub fn read_table(path: &Path) -> Result<BTreeMap<String, CostRow>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("error: cannot read {}: {e}", path.display())),
    };
    let mut lines = text.lines();
    let head = lines.next().unwrap_or("");
    let header = misaal_reports::COST_COLUMNS.join(",");
    if head.trim() != header {
        return Err(format!("error: {}: the header is `{head}`, expected `{header}`", path.display()));
    }
    let mut rows = BTreeMap::new();
    for (n, l) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = |what: &str| format!("error: {}:{}: {what}: `{l}`", path.display(), n + 2);
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        if f.len() != 7 {
            return Err(bad("expected 7 fields"));
        }
        let num = |s: &str| s.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0);
        let (Some(latency), Some(rthroughput), Some(uops_estimate)) = (num(f[2]), num(f[3]), num(f[4])) else {
            return Err(bad("latency, rthroughput and uops_estimate must be positive numbers"));
        };
        let row = CostRow {
            intrinsic: f[0].into(),
            instruction: f[1].into(),
            latency,
            rthroughput,
            uops_estimate,
            cpu: f[5].into(),
            method: f[6].into(),
        };
        rows.insert(row.intrinsic.clone(), row);
    }
    Ok(rows)
}

/// Writes the table through a temporary file and a rename, so a reader
/// never sees half a file.
fn write_table(path: &Path, rows: &BTreeMap<String, CostRow>) -> Result<(), String> {
    let rows: Vec<CostRow> = rows.values().cloned().collect();
    misaal_reports::write_costs_csv(&rows, path).map_err(|e| format!("error: cannot write {}: {e}", path.display()))
}

/// The CPU model, as `/proc/cpuinfo` names it.
fn cpu_name() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info.lines().filter_map(|l| l.split_once(':')).find(|(k, _)| k.trim() == "model name").map(|(_, v)| v.trim().to_string());
    model.unwrap_or_else(|| "unknown CPU".into())
}

/// Keeps the process on the CPU it runs on, so a migration does not land
/// in the middle of a timing.
fn pin_to_current_cpu() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain libc calls on a zeroed cpu_set_t owned here.
    unsafe {
        let cpu = libc::sched_getcpu();
        if cpu >= 0 {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut set);
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

fn round(x: f64) -> f64 {
    // Three significant decimals are below the run-to-run noise.
    (x * 1000.0).round() / 1000.0
}

pub fn run(spec: &super::SpecArgs, args: MeasureArgs) -> Result<ExitCode, String> {
    if spec.target != "x86" {
        return Err(format!(
            "error: --target {}: `isa measure` times instructions on this machine's CPU, so only --target x86 is supported",
            spec.target
        ));
    }
    let lib = super::load(spec)?;
    let mut names: Vec<&str> =
        lib.instrs().iter().map(|i| i.name.as_str()).filter(|n| args.filter.as_ref().is_none_or(|f| n.contains(f.as_str()))).collect();
    names.sort_unstable();
    if names.is_empty() {
        return Err(format!("error: --filter `{}` matches no spec of target x86", args.filter.as_deref().unwrap_or("")));
    }
    let out = args.out.clone().unwrap_or_else(|| this_machine_table("x86"));
    let mut rows = read_table(&out)?;
    if !misaal_measure_x86::OPTIMIZED && !args.allow_unoptimized {
        return Err("error: this misaal is an unoptimized (debug) build, whose kernels time function calls, not instructions; \
                    build with `cargo build --release -p misaal` and run target/release/misaal (or pass --allow-unoptimized for a smoke test)"
            .into());
    }
    let reference = misaal_measure_x86::lookup(REFERENCE).ok_or("error: no timing kernel for the reference instruction")?;
    if !reference.missing_features().is_empty() {
        return Err(format!(
            "error: this CPU lacks {} and cannot run the reference instruction `{REFERENCE}` (vpaddd) that calibrates the timings",
            reference.missing_features().join(", ")
        ));
    }
    let cpu = cpu_name();
    pin_to_current_cpu();
    let start = Instant::now();
    let timer = Timer::default();
    let (Some(_), Some(ref_tput)) = (reference.latency_loops(), reference.throughput_loops()) else {
        return Err("error: the reference instruction has no timing loops".into());
    };
    // The clock: a chain of one-cycle operations. In a rare process one
    // loop runs slow on every run (the vpaddd chain once ran at 1.8 cycles
    // an operation for a whole run, and every number came out at 0.55 of
    // itself), so the fastest of four such chains is the clock.
    let chains: Vec<(&str, Loops, u64)> = CLOCK_CHAINS
        .iter()
        .filter_map(|n| misaal_measure_x86::lookup(n).and_then(|k| k.latency_loops()).map(|l| (*n, l, timer.size(&l))))
        .collect();
    let mut chain_tpc = vec![f64::INFINITY; chains.len()];
    for _ in 0..8 {
        for (t, (_, l, n)) in chain_tpc.iter_mut().zip(&chains) {
            *t = t.min(timer.ticks_per_cycle(l, *n));
        }
    }
    let best = (0..chains.len()).min_by(|&a, &b| chain_tpc[a].total_cmp(&chain_tpc[b])).expect("vpaddd's chain is one");
    let (clock_name, ref_lat, nr) = chains[best];
    let clock_mnemonic = lib.get(clock_name).map_or(clock_name.to_string(), |(i, _)| i.mnemonic.clone());
    let base = if misaal_measure_x86::OPTIMIZED {
        format!(
            "cycles = time / {clock_mnemonic} latency (1 cycle; the fastest of vpaddd/vpsubd/vpaddq/vpxor) timed in the same visit; \
             fastest confirmed of many visits spread over the run; long loop"
        )
    } else {
        "UNOPTIMIZED BUILD (not instruction timings); time / vpaddd latency".to_string()
    };

    // The specs to measure and their jobs: one per loop kind, and the
    // reference's throughput for the uops estimate.
    let mut lacking: BTreeMap<String, usize> = BTreeMap::new();
    let mut no_kernel = Vec::new();
    let mut specs = Vec::new();
    let mut jobs = vec![Job::new(None, Kind::Throughput, ref_tput)];
    for name in &names {
        let Some(k) = misaal_measure_x86::lookup(name) else {
            no_kernel.push(*name);
            continue;
        };
        let Some(tput) = k.throughput_loops() else {
            *lacking.entry(k.missing_features().join("+")).or_default() += 1;
            continue;
        };
        jobs.push(Job::new(Some(specs.len()), Kind::Throughput, tput));
        if let Some(lat) = k.latency_loops() {
            jobs.push(Job::new(Some(specs.len()), Kind::Latency, lat));
        }
        specs.push((*name, k));
    }

    // Warm-up: every loop's length, then the visits. Each pass visits
    // every job once, alternately forwards and backwards, so each job's
    // visits are spread over the whole run and meet different
    // interference. Then the unsettled jobs, those with fewer than
    // [`SETTLED`] visits near their fastest (a busy machine throughout
    // their visits, or a latency that varies from run to run by itself,
    // as lane-crossing shuffles' do here), are visited again in rounds,
    // up to [`EXTRA`] times the passes: the fastest of 200 visits of such
    // a loop varies much less than the fastest of 40 (some of these
    // latencies also shift from one process to the next, 1.3 against 1.5
    // cycles, which no number of visits in one process removes).
    let t0 = (Instant::now(), misaal_measure_x86::ticks_now());
    for j in &mut jobs {
        j.n = timer.size(&j.loops);
    }
    let mut clock = Clock::new(timer.ticks_per_cycle(&ref_lat, nr));
    let Rounds { passes, extra, revisited } = visit_all(&timer, &mut jobs, &mut clock, (&ref_lat, nr), args.repeats);
    let unconfirmed: Vec<String> = jobs.iter().filter(|j| j.estimate(clock).is_none()).map(|j| j.label(&specs)).collect();
    if let Some(path) = std::env::var_os("MISAAL_MEASURE_DUMP") {
        dump(Path::new(&path), &jobs, &specs, clock)?;
    }
    // The highest core clock seen, from the timestamp counter's rate over
    // the run, for the log.
    let ghz = misaal_measure_x86::ticks_now().wrapping_sub(t0.1) as f64 / t0.0.elapsed().as_secs_f64() / clock.floor / 1e9;

    let ref_tp = jobs[0].value(clock);
    let mut results: Vec<(Option<f64>, Option<f64>)> = vec![(None, None); specs.len()];
    for j in &jobs[1..] {
        let r = &mut results[j.spec.expect("a spec's job")];
        match j.kind {
            Kind::Latency => r.0 = Some(j.value(clock)),
            Kind::Throughput => r.1 = Some(j.value(clock)),
        }
    }
    let mut measured = 0;
    for ((name, k), (lat, tput)) in specs.iter().zip(results) {
        let (i, _) = lib.get(name).expect("listed");
        let rthroughput = round(tput.expect("every measured spec has a throughput job")).max(0.001);
        let lat = lat.map(|l| round(l).max(0.001));
        let spec_lat = i.cost.as_ref().map(|c| c.latency).filter(|l| *l > 0.0);
        let (latency, how) = match (k.chain, lat) {
            (Chain::Direct, Some(l)) => (l, "latency: chain through the result".to_string()),
            (Chain::Cast, Some(l)) => (l, "latency: chain via a free cast to the operand's width".to_string()),
            _ => match spec_lat {
                Some(l) => (l, "latency: spec line (the result type matches no operand so there is no chain)".to_string()),
                None => (rthroughput, "latency: not measured (no chain) so the rthroughput as a lower bound".to_string()),
            },
        };
        let uops = (rthroughput / ref_tp).round().max(1.0);
        rows.insert(
            name.to_string(),
            CostRow {
                intrinsic: name.to_string(),
                instruction: i.mnemonic.clone(),
                latency,
                rthroughput,
                uops_estimate: uops,
                cpu: cpu.clone(),
                method: format!("{base}; {how}"),
            },
        );
        measured += 1;
    }
    // A row for a spec that no longer exists names nothing.
    let stale: Vec<String> = rows.keys().filter(|n| lib.get(n).is_none()).cloned().collect();
    for n in &stale {
        rows.remove(n);
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{cpu}: core clock up to {ghz:.2} GHz (timestamp counter over {clock_mnemonic} latency; chains' ticks per cycle {}); {} visits of {} loops ({passes} passes over all, then {extra} rounds over the {revisited} unsettled)",
        chain_tpc.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(" "),
        jobs.iter().map(|j| j.visits.len()).sum::<usize>(),
        jobs.len()
    );
    if !unconfirmed.is_empty() {
        eprintln!(
            "note: {} loop(s) had no two visits within {:.0}% of each other at their fastest; their median visit is used: {}",
            unconfirmed.len(),
            CONFIRM * 100.0,
            unconfirmed.join(", ")
        );
    }
    for (f, n) in &lacking {
        eprintln!("note: {n} spec(s) need {f}, which this CPU lacks: not measured (their rows, if any, are kept)");
    }
    if !no_kernel.is_empty() {
        eprintln!("note: {} spec(s) have no timing kernel (signature Rust cannot call): {}", no_kernel.len(), no_kernel.join(", "));
    }
    if !stale.is_empty() {
        eprintln!("note: dropped {} row(s) naming no spec: {}", stale.len(), stale.join(", "));
    }
    if measured == 0 && stale.is_empty() {
        eprintln!("measured 0 of {} matching spec(s) in {secs:.1} s; {} left unchanged", names.len(), out.display());
        return Ok(ExitCode::SUCCESS);
    }
    write_table(&out, &rows)?;
    eprintln!("measured {measured} of {} matching spec(s) in {secs:.1} s; wrote {} ({} rows)", names.len(), out.display(), rows.len());
    eprintln!("note: the compiler reads `isa/costs/x86-<llvm cpu>.csv` for a target naming that CPU (`avx512_zen4`: x86-znver4.csv); name the table so to use it");
    if !misaal_measure_x86::OPTIMIZED {
        eprintln!("warning: unoptimized build: these numbers time function calls, not instructions");
    }
    Ok(ExitCode::SUCCESS)
}
