//! `misaal isa check`: every spec against its oracle, then the status table.
//!
//! A spec that agreed on every case is `silicon`. One the CPU cannot run is
//! `proven-twin` when Z3 proves it equal to a verified spec of the same
//! instruction (same mnemonic and operands, another encoding: the VEX
//! AVX-VNNI dot products against their EVEX AVX512-VNNI forms), and
//! `skipped` otherwise. The statuses go to `<specs>/STATUS.tsv`, which
//! everything downstream reads. ARM specs run under qemu-aarch64
//! (`misaal_verifier::qemu`) and HVX specs under qemu-hexagon
//! (`misaal_verifier::hexagon`, freestanding harnesses built by clang 19),
//! all cases of all specs batched up front; a spec that agreed is
//! `emulator`.

use crate::{Outcome, SpecArgs, load};
use indicatif::{ProgressBar, ProgressStyle};
use misaal_isa::status::{SpecStatus, StatusRow, StatusTable, digest};
use misaal_isa::{Instr, Semantics, SpecLibrary};
use misaal_reports::SemanticsRow;
use misaal_verifier::smt::{Equivalence, prove_equivalent};
use misaal_verifier::{ArmQemu, DiffConfig, HvxQemu, Oracle, Verdict, X86Silicon, check_against};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

pub struct CheckArgs {
    pub family: Option<String>,
    pub filter: Option<String>,
    pub cfg: DiffConfig,
    pub out: Option<PathBuf>,
    pub jobs: Option<usize>,
    pub status: Option<PathBuf>,
}

/// Z3's budget for one twin proof; a timeout leaves the spec `skipped`.
const TWIN_TIMEOUT_MS: u32 = 60_000;

pub fn check(spec: &SpecArgs, args: CheckArgs) -> Result<ExitCode, String> {
    let CheckArgs { family, filter, cfg, out, jobs, status } = args;
    if !["x86", "arm", "hvx"].contains(&spec.target.as_str()) {
        return Err(format!("error: no oracle for target `{}`; x86 is checked on silicon, arm and hvx under qemu", spec.target));
    }
    if cfg.cases == 0 {
        return Err("error: --cases must be at least 1: a spec is `silicon` only after agreeing with the CPU on cases that ran".into());
    }
    let lib = load(spec)?;
    let spec_dir = spec.specs.clone().unwrap_or_else(|| misaal_isa::bundled_spec_dir(&spec.target));
    let status_path = status.unwrap_or_else(|| StatusTable::path_for(&spec_dir));
    let mut table = StatusTable::load(&status_path).map_err(|d| d.to_string())?;
    let todo: Vec<(&Arc<Instr>, &Arc<Semantics>)> = lib
        .iter()
        .filter(|(i, _)| family.as_ref().is_none_or(|f| &i.family == f))
        .filter(|(i, _)| filter.as_ref().is_none_or(|f| i.name.contains(f.as_str())))
        .collect();
    if todo.is_empty() {
        return Err("error: no spec matches the filters".into());
    }
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let started = Instant::now();
    // ARM: one harness for every spec, and all their cases run up front in
    // one qemu process per job; x86 runs each spec on this CPU.
    let arm = if spec.target == "arm" {
        let instrs: Vec<&Instr> = todo.iter().map(|(i, _)| i.as_ref()).collect();
        let q = ArmQemu::new(&instrs).map_err(|e| format!("error: cannot check ARM specs: {e}"))?;
        q.prefetch(&instrs, &cfg, jobs);
        Some(q)
    } else {
        None
    };
    // HVX likewise: one freestanding harness, batched under qemu-hexagon.
    // Without its tools every spec is skipped with the reason, as specs a
    // CPU lacks the features for are; a harness that fails to build is an error.
    let hvx_missing = if spec.target == "hvx" { HvxQemu::tools().err().map(NoTools) } else { None };
    let hvx = if spec.target == "hvx" && hvx_missing.is_none() {
        let instrs: Vec<&Instr> = todo.iter().map(|(i, _)| i.as_ref()).collect();
        let q = HvxQemu::new(&instrs).map_err(|e| format!("error: cannot check HVX specs: {e}"))?;
        q.prefetch(&instrs, &cfg, jobs);
        Some(q)
    } else {
        None
    };
    let (oracle, agreed, cpu): (&dyn Oracle, SpecStatus, String) = match (&arm, &hvx, &hvx_missing) {
        (Some(q), _, _) => (q, SpecStatus::Emulator, q.evidence.clone()),
        (_, Some(q), _) => (q, SpecStatus::Emulator, q.evidence.clone()),
        (_, _, Some(m)) => (m, SpecStatus::Emulator, "no HVX toolchain".into()),
        _ => (&X86Silicon, SpecStatus::Silicon, cpu_model()),
    };
    let pb = ProgressBar::new(todo.len() as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}").expect("template"));
    // Its own pool, so `--jobs N` means N threads whatever rayon's global pool holds.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(|e| format!("error: cannot start {jobs} threads: {e}"))?;
    // One spec per task (they differ a lot in cost); `collect` keeps spec order.
    let mut outcomes: Vec<Outcome> = pool.install(|| {
        todo.par_iter()
            .with_max_len(1)
            .map(|(i, sem)| {
                let t = Instant::now();
                let verdict = check_against(oracle, i, sem, &cfg);
                let seconds = t.elapsed().as_secs_f64();
                let (status, cases, detail) = match verdict {
                    // Fewer cases than asked for is not a pass.
                    Verdict::Agreed { cases } if cases >= cfg.cases && cases > 0 => (agreed, cases as u64, None),
                    Verdict::Agreed { cases } => (SpecStatus::Failed, cases as u64, Some(format!("FAILED {}: only {cases} of {} cases ran", i.name, cfg.cases))),
                    Verdict::Unavailable(why) => (SpecStatus::Skipped, 0, Some(format!("SKIPPED {}: {why}", i.name))),
                    Verdict::Failed(cx) => (SpecStatus::Failed, cfg.cases as u64, Some(format!("FAILED {} ({}:{}):\n{cx}", i.name, i.file, i.span.line))),
                    Verdict::OracleFailed(why) => (SpecStatus::Failed, 0, Some(format!("FAILED {}: {why}", i.name))),
                };
                if let Some(d) = &detail
                    && status != SpecStatus::Skipped
                {
                    pb.println(d);
                }
                pb.set_message(i.name.clone());
                pb.inc(1);
                let row = SemanticsRow {
                    intrinsic: i.name.clone(),
                    instruction: i.mnemonic.clone(),
                    feature: i.features.join("+"),
                    status: status.label().into(),
                    cases,
                    seconds,
                };
                // Silicon names the CPU; otherwise the evidence is why not.
                let evidence = match (&status, &detail) {
                    (SpecStatus::Silicon | SpecStatus::Emulator, _) => cpu.clone(),
                    (_, Some(d)) => format!("{}: {}", cpu, d.split_once(": ").map(|(_, why)| why).unwrap_or(d).lines().next().unwrap_or_default()),
                    _ => cpu.clone(),
                };
                Outcome { family: i.family.clone(), row, detail, status, evidence }
            })
            .collect()
    });
    pb.finish_and_clear();

    // Twins: a skipped spec proven equal to a spec verified in this run (or
    // in the table, unchanged since) counts as verified.
    let verified_now: BTreeMap<String, SpecStatus> = outcomes.iter().filter(|o| o.status.is_verified()).map(|o| (o.row.intrinsic.clone(), o.status)).collect();
    // (x86 only: no ARM or HVX spec has a second encoding.)
    for o in outcomes.iter_mut().filter(|o| o.status == SpecStatus::Skipped && spec.target == "x86") {
        let (i, sem) = lib.get(&o.row.intrinsic).expect("checked spec");
        if let Some(twin) = find_twin(&lib, &table, &verified_now, i, sem) {
            o.status = SpecStatus::ProvenTwin;
            o.row.status = o.status.label().into();
            o.evidence = format!("= {twin} (Z3)");
            o.detail = Some(format!("PROVEN-TWIN {}: not runnable here ({}), proven equal to {twin}", i.name, o.detail.take().unwrap_or_default()));
        }
    }

    let mut fams: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let column = |s: SpecStatus| match s {
        SpecStatus::Silicon | SpecStatus::Emulator => 0,
        SpecStatus::ProvenTwin => 1,
        SpecStatus::Skipped => 2,
        SpecStatus::Failed => 3,
    };
    for o in &outcomes {
        fams.entry(&o.family).or_default()[column(o.status)] += 1;
    }
    println!("{:<16} {:>6} {:>8} {:>7} {:>8} {:>7}", "family", "specs", oracle.name(), "twin", "skipped", "failed");
    let mut tot = [0usize; 4];
    for (f, c) in &fams {
        println!("{:<16} {:>6} {:>8} {:>7} {:>8} {:>7}", f, c.iter().sum::<usize>(), c[0], c[1], c[2], c[3]);
        for k in 0..4 {
            tot[k] += c[k];
        }
    }
    println!("{:<16} {:>6} {:>8} {:>7} {:>8} {:>7}", "total", tot.iter().sum::<usize>(), tot[0], tot[1], tot[2], tot[3]);
    for o in outcomes.iter().filter(|o| o.status == SpecStatus::ProvenTwin) {
        println!("{}", o.detail.as_deref().unwrap_or_default());
    }
    let skipped: Vec<&str> = outcomes.iter().filter(|o| o.status == SpecStatus::Skipped).map(|o| o.row.intrinsic.as_str()).collect();
    if !skipped.is_empty() {
        let more = if skipped.len() > 12 { format!(", ... ({} in all; {} lists them)", skipped.len(), status_path.display()) } else { String::new() };
        println!("unverified (skipped, excluded from classes, rules and code): {}{more}", skipped[..skipped.len().min(12)].join(", "));
    }
    let failed = outcomes.iter().filter(|o| o.status == SpecStatus::Failed).count();
    for o in outcomes.iter().filter(|o| o.status == SpecStatus::Failed) {
        if let Some(d) = &o.detail {
            eprintln!("{d}");
        }
    }

    for o in &outcomes {
        let (_, sem) = lib.get(&o.row.intrinsic).expect("checked spec");
        let row = StatusRow { status: o.status, cases: o.row.cases, digest: digest(sem), evidence: o.evidence.clone() };
        // A quick re-check (fewer cases) does not weaken an equal verdict, and
        // a machine that cannot run a spec does not erase the evidence of one
        // that did (machines differ in features; the table spans them).
        let keep_old = table.rows.get(&o.row.intrinsic).is_some_and(|old| {
            old.digest == row.digest && ((old.status == row.status && old.cases > row.cases) || (row.status == SpecStatus::Skipped && old.status.is_verified()))
        });
        if !keep_old {
            table.rows.insert(o.row.intrinsic.clone(), row);
        }
    }
    table.rows.retain(|name, _| lib.get(name).is_some());
    table.save(&status_path).map_err(|e| format!("error: writing {}: {e}", status_path.display()))?;

    let path = out.unwrap_or_else(|| PathBuf::from(format!("reports/{}_semantics.csv", spec.target)));
    let rows: Vec<SemanticsRow> = outcomes.into_iter().map(|o| o.row).collect();
    misaal_reports::write_semantics_csv(&rows, &path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
    println!(
        "{} specs checked with {} cases each (seed {}) in {:.1}s; wrote {} and {}",
        rows.len(),
        cfg.cases,
        cfg.seed,
        started.elapsed().as_secs_f64(),
        path.display(),
        status_path.display()
    );
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The oracle of a machine without the HVX tools: every spec is unavailable,
/// and the reason names the missing tool.
struct NoTools(String);

impl Oracle for NoTools {
    fn name(&self) -> &'static str {
        "emulator"
    }
    fn available(&self, _: &Instr) -> Result<(), misaal_verifier::OracleError> {
        Err(misaal_verifier::OracleError::Unavailable(self.0.clone()))
    }
    fn run_batch(&self, _: &Instr, _: &[Vec<misaal_isa::BitVec>]) -> Result<Vec<misaal_isa::BitVec>, misaal_verifier::OracleError> {
        Err(misaal_verifier::OracleError::Unavailable(self.0.clone()))
    }
}

/// A verified spec of the same instruction (mnemonic, operand types and
/// result width) that Z3 proves equal to `i`.
fn find_twin(lib: &SpecLibrary, table: &StatusTable, now: &BTreeMap<String, SpecStatus>, i: &Instr, sem: &Semantics) -> Option<String> {
    let sig = |x: &Instr| (x.mnemonic.clone(), x.params.iter().map(|p| p.ty).collect::<Vec<_>>(), x.ret);
    lib.iter()
        .filter(|(t, _)| t.name != i.name && sig(t) == sig(i))
        // Only a spec verified by its own oracle: twins of twins prove nothing new.
        .filter(|(t, s)| match now.get(&t.name) {
            Some(st) => *st != SpecStatus::ProvenTwin,
            None => table.verified(&t.name, s).is_ok() && table.rows[&t.name].status != SpecStatus::ProvenTwin,
        })
        .find(|(_, s)| prove_equivalent(sem, s, TWIN_TIMEOUT_MS) == Equivalence::Proved)
        .map(|(t, _)| t.name.clone())
}

/// The CPU model, as `/proc/cpuinfo` names it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string())))
        .unwrap_or_else(|| "unknown CPU".into())
}
