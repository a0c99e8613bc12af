//! The x86 backend (`misaal bench`, the default): each kernel of the x86
//! suite compiled by misaal, built with `cc`, run on the shared input sets
//! and compared byte for byte with Halide's own object, the reference
//! interpreter and our naive and scalar baselines.
//!
//! How ours runs depends on this CPU. When it has every feature the
//! kernel's target implies (`avx512_zen4`: AVX-512 F/CD/VL/BW/DQ, IFMA,
//! VBMI, VNNI, ...), natively, timed against Halide's object in the same
//! run. When it lacks one (or `--emulate simde`), our C is built against
//! SIMDe's portable AVX-512 intrinsics with `-mavx2`, checked against the
//! interpreter only (Halide's object would fault), and the timing columns
//! stay empty: emulated time means nothing. SIMDe only checks compiled
//! kernels; it is never evidence for a spec.
//!
//! On every machine, a static estimate: llvm-mca's znver4 cycles of the
//! innermost loops of our C built natively for Zen 4 (`clang-19
//! -march=znver4 -c`, never run) and of Halide's zen4 object.

use crate::check::{Outcome, Verdict, outcome};
use crate::compile::{Job, compile};
use crate::harness_c::{harness, parse_times};
use crate::keep::{drop_later_sets, halide_files, keep_and_note, write_input_set};
use crate::run::Run;
use crate::lock::WorkLock;
use crate::mca::{Arch, Estimate, Tools, estimate, per_byte_ratio, ratio};
use crate::{Config, Emulate, Kernel, Suite, exit_status, geomean, halide_include, run_tool, which, write_atomic};
use misaal_reports::BenchRow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The core whose scheduling model llvm-mca uses: the suite's target.
pub const MCA_CPU: &str = "znver4";
/// Builds our C for Zen 4, for the estimate only (GCC 12 has no znver4).
const MCA_CC: &str = "clang-19";

/// A feature name as /proc/cpuinfo and the specs both spell it, reduced
/// to one form: `avx512_vnni` and `avx512vnni`, `sse4_1` and `sse41`,
/// `amx-int8` and `amx_int8` meet; cpuinfo calls SSE3 `pni`.
pub fn normalize(flag: &str) -> String {
    let f: String = flag.to_ascii_lowercase().chars().filter(|c| *c != '_' && *c != '-').collect();
    if f == "pni" { "sse3".into() } else { f }
}

/// This CPU's feature flags, normalized: from `file` when given (a
/// `flags : ...` line as in /proc/cpuinfo, or whitespace-separated
/// names), else /proc/cpuinfo.
pub fn host_flags(file: Option<&Path>) -> Result<BTreeSet<String>, String> {
    let path = file.unwrap_or(Path::new("/proc/cpuinfo"));
    let text = std::fs::read_to_string(path).map_err(|e| format!("error: cannot read this CPU's flags from {}: {e}", path.display()))?;
    let flags = match text.lines().find(|l| l.starts_with("flags")) {
        Some(line) => line.split_once(':').map(|(_, f)| f).unwrap_or(""),
        None => text.as_str(),
    };
    Ok(flags.split_whitespace().map(normalize).collect())
}

/// The CPUID features the code for `target` (narrowed to `--target-features`
/// `flag` when given) needs that `host` lacks, as the specs name them.
pub fn missing_features(flag: Option<&str>, target: &str, host: &BTreeSet<String>) -> Result<Vec<String>, String> {
    let needs = misaal_compiler::isel::features::CpuFeatures::for_module(flag, target)?;
    Ok(needs.features.into_iter().filter(|f| !host.contains(&normalize(f))).collect())
}

/// How one kernel runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Native,
    /// Built against SIMDe; why (the features this CPU lacks, or the flag).
    Simde(String),
}

/// The AVX-512 intrinsics SIMDe lacks, as SIMDe's narrower ones (see the
/// file; `tests/bench_cli.rs` checks each against the CPU's).
pub const SIMDE_GAPS: &str = include_str!("../c/simde_gaps.h");

/// Whether SIMDe's AVX-512 header compiles here (Debian's libsimde-dev).
fn simde_available() -> bool {
    let probe = std::env::temp_dir().join(format!("misaal-simde-probe-{}.c", std::process::id()));
    if std::fs::write(&probe, "#include <simde/x86/avx512.h>\nint main(void) { return 0; }\n").is_err() {
        return false;
    }
    let ok = Command::new("cc").args(["-fsyntax-only", "-mavx2"]).arg(&probe).output().is_ok_and(|o| o.status.success());
    let _ = std::fs::remove_file(&probe);
    ok
}

struct Context<'a> {
    run: Run<'a>,
    include: &'a Path,
    host: BTreeSet<String>,
    simde: bool,
    /// llvm-mca, llvm-objdump and clang-19, or the one that is missing.
    mca: Result<(Tools, PathBuf), String>,
}

fn cc_out(cmd: &mut Command, what: &str) -> Result<(), String> {
    run_tool(cmd, what).map(|_| ())
}

fn bench_one(cx: &Context, k: &Kernel) -> Result<BenchRow, String> {
    let (cfg, suite, function) = (cx.run.cfg, cx.run.suite, &k.function);
    let stmt = suite.stmt(&k.name);
    let dir = crate::keep::kernel_dir(cx.run.work, &k.name)?;
    crate::keep::fresh_dir(&dir)?;
    let usage = dir.join("usage");
    let compiled = compile(cfg, &Job { stmt: &stmt, isa: "x86", symbol: &format!("misaal_{function}"), out: &dir.join("ours.c"), naive: cfg.naive, usage_dir: (!cfg.naive).then_some(usage.as_path()) })?;
    // The naive build, for `naive_us` and as a cross-check.
    compile(cfg, &Job { stmt: &stmt, isa: "x86", symbol: &format!("misaal_naive_{function}"), out: &dir.join("naive.c"), naive: true, usage_dir: None })?;
    let module = crate::parse_stmt(&stmt)?;
    let mut row = BenchRow::unmeasured(&k.name, &suite.target);
    row.compile_ms = compiled.ms;
    row.peak_rss_kb = compiled.peak_rss_kb;
    row.fallback_exprs = compiled.fallback_exprs;
    let missing = missing_features(cfg.target_features.as_deref(), &module.target, &cx.host)?;
    let mode = match cfg.emulate {
        Emulate::Simde => Mode::Simde("--emulate simde".into()),
        Emulate::Auto if missing.is_empty() => Mode::Native,
        Emulate::Auto => Mode::Simde(format!("this CPU lacks {}", missing.join(", "))),
    };
    row.run = if mode == Mode::Native { "native" } else { "simde" }.into();
    // The static estimate first: it needs no run, so a SIMDe row without
    // SIMDe still has it.
    let hl = suite.halide_objects(&k.name);
    if let Ok((tools, clang)) = &cx.mca {
        match mca_estimates(tools, clang, cx.include, &dir, hl.as_ref().map(|(o, _)| o.as_path())) {
            Ok((ours, halide)) => {
                row.ours_mca_cycles = ours.cycles;
                row.ours_mca_loops = Some(ours.loops as u64);
                row.ours_mca_cycles_per_byte = ours.cycles_per_byte;
                if let Some(h) = halide {
                    row.halide_mca_cycles = h.cycles;
                    row.halide_mca_loops = Some(h.loops as u64);
                    row.halide_mca_cycles_per_byte = h.cycles_per_byte;
                }
                row.mca_speedup = ratio(Some(ours), halide).unwrap_or(f64::NAN);
                row.mca_per_byte_speedup = per_byte_ratio(Some(ours), halide).unwrap_or(f64::NAN);
            }
            Err(e) => eprintln!("warning: {}: no llvm-mca estimate: {e}", k.name),
        }
    }
    if let Mode::Simde(_) = mode
        && !cx.simde
    {
        row.bit_exact = "skipped: SIMDe's <simde/x86/avx512.h> not found (apt install libsimde-dev)".into();
        return Ok(row);
    }
    write_atomic(&dir.join("harness.c"), &harness(function, &k.args)?)?;
    // The scalar C baseline, by clang -O3 -march=native (benchmarks/scalar).
    let scalar_c = suite.dir.join("scalar").join(format!("{}.c", k.name));
    let scalar_obj = dir.join("scalar.o");
    let have_scalar = match (which("clang"), scalar_c.exists()) {
        (Some(clang), true) => {
            cc_out(Command::new(clang).args(["-O3", "-march=native", "-c", "-o"]).arg(&scalar_obj).arg(&scalar_c).arg("-I").arg(cx.include).arg("-I").arg(suite.dir.join("scalar")), &format!("clang on {}", scalar_c.display()))?;
            true
        }
        _ => false,
    };
    let inc = |c: &mut Command| {
        c.arg("-I").arg(cx.include).arg("-I").arg(&dir);
    };
    let link_halide = hl.is_some() && mode == Mode::Native;
    let mut cc = Command::new("cc");
    match &mode {
        Mode::Native => {
            cc.args(["-O3", "-march=native"]).arg(dir.join("ours.c"));
        }
        Mode::Simde(_) => {
            // Ours alone against SIMDe: the harness and baselines need no
            // AVX-512, and SIMDe's aliases must not rename their code.
            let obj = dir.join("ours_simde.o");
            let mut simde = Command::new("cc");
            simde.args(["-O3", "-mavx2", "-Wno-psabi", "-DMISAAL_SIMDE", "-DSIMDE_ENABLE_NATIVE_ALIASES"]);
            // SIMDe, then the intrinsics it lacks (`bench/c/simde_gaps.h`),
            // before the C (whose own include of SIMDe is then a no-op).
            let gaps = dir.join("simde_gaps.h");
            std::fs::write(&gaps, SIMDE_GAPS).map_err(|e| format!("{}: {e}", gaps.display()))?;
            simde.args(["-include", "simde/x86/avx512.h", "-include"]).arg(&gaps);
            simde.arg("-c").arg(dir.join("ours.c")).arg("-o").arg(&obj);
            inc(&mut simde);
            cc_out(&mut simde, "cc (ours.c against SIMDe)")?;
            cc.args(["-O3", "-mavx2"]).arg(&obj);
        }
    }
    cc.args(["-DHAVE_NAIVE", "-o"]).arg(dir.join("harness")).arg(dir.join("harness.c")).arg(dir.join("naive.c"));
    inc(&mut cc);
    match (&hl, link_halide) {
        (Some((o, rt)), true) => {
            cc.arg(o).arg(rt);
        }
        _ => {
            cc.arg("-DNO_HALIDE");
        }
    }
    if have_scalar {
        cc.arg("-DHAVE_SCALAR").arg(&scalar_obj);
    }
    cc.args(["-lpthread", "-ldl", "-lm"]);
    cc_out(&mut cc, "cc")?;

    let mut v = Verdict::new(cfg.inputs);
    let (mut sets, mut outs) = (Vec::new(), Vec::new());
    for r in 0..cfg.inputs {
        // Each set in its own folder, inputs and outputs: what a failed row
        // keeps.
        let (sd, set) = write_input_set(&dir, k, r)?;
        let mut run = Command::new(dir.join("harness"));
        run.arg(&sd);
        let timed = r == 0 && mode == Mode::Native;
        if timed {
            run.arg("time");
        }
        let out = run.output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            // A signal (SIGILL: an instruction this CPU lacks) prints nothing.
            return Err(format!("harness failed on input {r}: {}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
        }
        if timed {
            for (label, t) in parse_times(&String::from_utf8_lossy(&out.stdout)) {
                match label.as_str() {
                    "ours" => row.ours_us = t,
                    "halide" => row.halide_us = t,
                    "naive" => row.naive_us = t,
                    "scalar" => row.clang_us = t,
                    _ => {}
                }
            }
        }
        let ours = std::fs::read(sd.join("out_ours.bin")).map_err(|e| e.to_string())?;
        if link_halide {
            v.compare(r, &ours, &std::fs::read(sd.join("out_halide.bin")).map_err(|e| e.to_string())?, "Halide's object");
        }
        // The baselines must compute the same thing, or their times mean nothing.
        for (file, what, have) in [("out_naive.bin", "the naive build", true), ("out_scalar.bin", "the scalar C", have_scalar)] {
            if have {
                v.baseline(r, &ours, &std::fs::read(sd.join(file)).map_err(|e| e.to_string())?, what);
            }
        }
        sets.push(set);
        outs.push(ours);
    }
    if link_halide {
        v.refs.push("Halide");
    }
    let interp_outs = v.against_interpreter(cfg.interp, &module, k, &sets, &outs)?;
    match &mode {
        Mode::Native if hl.is_none() => v.unchecked_why.push("no Halide object".into()),
        Mode::Native => {}
        Mode::Simde(why) => {
            v.refs.push("simde");
            v.unchecked_why.push(format!("Halide's object not run: {why}"));
        }
    }
    if !cfg.interp {
        v.unchecked_why.push("interpreter skipped".into());
    }
    if cfg.inputs == 0 {
        v.unchecked_why.insert(0, "no input sets".into());
    }
    row.bit_exact = v.cell();
    if outcome(&row.bit_exact) == Outcome::Failed {
        let mut ev = cx.run.evidence(k, &row.bit_exact, &v.details, format!("{}{}", row.run, if let Mode::Simde(why) = &mode { format!(": {why}") } else { String::new() }));
        if link_halide && let Some((o, rt)) = &hl {
            ev.files.extend(halide_files([o.clone(), rt.clone()]));
        }
        ev.blobs = interp_outs.into_iter().enumerate().map(|(r, b)| (format!("input{r}/out_interpreter.bin"), b)).collect();
        row.bit_exact = keep_and_note(cfg, &ev);
    } else {
        drop_later_sets(&dir, cfg.inputs);
    }
    row.speedup = row.halide_us / row.ours_us;
    row.speedup_vs_clang = row.clang_us / row.ours_us;
    Ok(row)
}

/// How to run a kept x86 harness again.
const RERUN: &str = "cp -r input0 again && ./harness again   (writes each side's out_LABEL.bin into again/; a second argument also times them)";

/// Ours built for Zen 4 (never run) and Halide's zen4 object, each through
/// llvm-mca.
fn mca_estimates(tools: &Tools, clang: &Path, include: &Path, dir: &Path, halide: Option<&Path>) -> Result<(Estimate, Option<Estimate>), String> {
    let obj = dir.join("ours_znver4.o");
    let mut cc = Command::new(clang);
    cc.args(["-O3", &format!("-march={MCA_CPU}"), "-c"]).arg(dir.join("ours.c")).arg("-o").arg(&obj).arg("-I").arg(include).arg("-I").arg(dir);
    cc_out(&mut cc, &format!("{MCA_CC} -march={MCA_CPU} (ours.c)"))?;
    let ours = estimate(tools, Arch::X86_64, MCA_CPU, &obj).map_err(|e| format!("ours: {e}"))?;
    let halide = halide.map(|h| estimate(tools, Arch::X86_64, MCA_CPU, h).map_err(|e| format!("Halide's: {e}"))).transpose()?;
    Ok((ours, halide))
}

pub fn bench(cfg: &Config) -> Result<ExitCode, String> {
    let suite = Suite::load(cfg)?;
    let include = halide_include().map_err(|e| format!("error: {e}"))?;
    let host = host_flags(cfg.cpu_flags.as_deref())?;
    let work = cfg.work_dir.clone();
    let _lock = WorkLock::take(&work)?;
    if !suite.dir.join("build/halide/runtime.o").exists() {
        eprintln!(
            "note: Halide's baseline objects are missing in {}; build them with\n    python3 {}/generate.py\n(pip install halide==21.0.0 numpy). Timing ours alone.",
            suite.dir.join("build/halide").display(),
            suite.dir.display()
        );
    }
    let mca = Tools::find().and_then(|t| which(MCA_CC).map(|c| (t, c)).ok_or_else(|| format!("{MCA_CC} not found on PATH (scripts/setup.sh installs clang-19)")));
    if let Err(e) = &mca {
        eprintln!("note: skipped the llvm-mca {MCA_CPU} estimate: {e}");
    }
    let cx = Context { run: Run { cfg, suite: &suite, work: &work, target: "x86", rerun: RERUN }, include: &include, host, simde: simde_available(), mca };
    let failed = |k: &Kernel, e: String| {
        println!("{:<26} FAILED: {e}", k.name);
        // A harness that crashed on an input set: what the run left is
        // kept as a mismatch's is.
        BenchRow { bit_exact: cx.run.error_cell(k, &e), ..BenchRow::unmeasured(&k.name, &suite.target) }
    };
    let rows = cx.run.rows(|k| bench_one(&cx, k), failed, |r, _| print_row(r))?;
    let n = cx.run.counts(rows.iter().map(|r| r.bit_exact.as_str()));
    summary(&rows, cx.mca.as_ref().err());
    cx.run.note_kept(rows.iter().map(|r| r.bit_exact.as_str()));
    if !cfg.naive {
        let names: Vec<&str> = rows.iter().map(|r| r.kernel.as_str()).collect();
        match crate::usage::write_usage_reports(&work, &cfg.report_dir, &names) {
            Ok(msg) => println!("{msg}"),
            Err(e) => eprintln!("warning: rule usage and coverage reports: {e}"),
        }
    }
    let csv = cx.run.write_report("bench_x86.csv", |p| misaal_reports::write_bench_csv(&rows, p))?;
    let png = cfg.report_dir.join("bench_x86.png");
    let font = std::fs::read("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").map_err(|e| format!("error: the chart needs DejaVuSans (apt install fonts-dejavu-core): {e}"))?;
    match misaal_reports::write_speedup_chart(&rows, &png, &font) {
        Ok(()) => println!("wrote {} and {}", csv.display(), png.display()),
        Err(e) => println!("wrote {} (no chart: {e})", csv.display()),
    }
    if n.unchecked > 0 {
        eprintln!(
            "{} {} of {} kernels unchecked or skipped: nothing compared their output{}",
            if cfg.allow_unchecked { "note:" } else { "error:" },
            n.unchecked,
            rows.len(),
            if cfg.allow_unchecked { " (allowed by --allow-unchecked)" } else { "; build Halide's objects, drop --no-interp, install what a skip names, or pass --allow-unchecked to time only" }
        );
    }
    Ok(exit_status(n.failed, n.unchecked, cfg.allow_unchecked))
}

/// One row as it comes.
fn print_row(r: &BenchRow) {
    let mca = if r.ours_mca_cycles.is_finite() { format!("mca ours {:>6.1} halide {:>6.1} {:>5.2}x per byte {:>5.2}x", r.ours_mca_cycles, r.halide_mca_cycles, r.mca_speedup, r.mca_per_byte_speedup) } else if r.ours_mca_loops == Some(0) { "mca - (no inner loop in ours)".into() } else { "mca -".into() };
    // Not measured (a SIMDe row's times) prints as `-`.
    let n = |x: f64, w: usize, p: usize| if x.is_finite() { format!("{x:>w$.p$}") } else { format!("{:>w$}", "-") };
    println!(
        "{:<24} {:<6} compile {} ms  ours {} us  halide {} us {}x  naive {} us  clang {} us {}x  {mca}  fallbacks {:>3}  {}",
        r.kernel,
        r.run,
        n(r.compile_ms, 7, 1),
        n(r.ours_us, 9, 1),
        n(r.halide_us, 9, 1),
        n(r.speedup, 5, 2),
        n(r.naive_us, 9, 1),
        n(r.clang_us, 9, 1),
        n(r.speedup_vs_clang, 5, 2),
        r.fallback_exprs.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
        r.bit_exact
    );
}

/// The run's headline figures.
fn summary(rows: &[BenchRow], mca_missing: Option<&String>) {
    let exact = rows.iter().filter(|r| outcome(&r.bit_exact) == Outcome::Exact).count();
    let simde = rows.iter().filter(|r| r.run == "simde").count();
    let skipped = rows.iter().filter(|r| r.bit_exact.starts_with("skipped")).count();
    let fallbacks: u64 = rows.iter().filter_map(|r| r.fallback_exprs).sum();
    println!("{exact} of {} kernels bit-exact ({simde} built against SIMDe, {skipped} skipped); {fallbacks} fallback expression(s)", rows.len());
    if let Some((geo, n)) = geomean(rows.iter().map(|r| r.speedup)) {
        println!("geomean speedup over Halide: {geo:.3}x over {n} kernels");
    }
    match (geomean(rows.iter().map(|r| r.mca_speedup)), mca_missing) {
        (Some((geo, n)), _) => println!("static estimate (llvm-mca -mcpu={MCA_CPU}, inner loops) Halide/ours geomean {geo:.3} over {n} kernels"),
        (None, Some(e)) => println!("static estimate skipped: {e}"),
        (None, None) => println!("static estimate: no kernel has both estimates"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_and_spec_names_meet() {
        let host: BTreeSet<String> = "fpu sse sse2 pni ssse3 sse4_1 sse4_2 avx avx2 fma f16c".split_whitespace().map(normalize).collect();
        assert!(missing_features(None, "x86-64-linux-avx2", &host).unwrap().is_empty());
        let m = missing_features(None, "x86-64-linux-avx512_zen4", &host).unwrap();
        assert!(m.contains(&"avx512f".to_string()) && m.contains(&"avx512vnni".to_string()), "{m:?}");
        let zen4: BTreeSet<String> = "sse sse2 pni ssse3 sse4_1 sse4_2 avx avx2 fma f16c avx512f avx512cd avx512vl avx512bw avx512dq avx512ifma avx512vbmi avx512_vnni avx512_bf16 avx512_vbmi2 avx512_bitalg avx512_vpopcntdq gfni".split_whitespace().map(normalize).collect();
        assert!(missing_features(None, "x86-64-linux-avx512_zen4", &zen4).unwrap().is_empty());
        // `--target-features avx2` on a zen4 suite: the AVX2 CPU runs it.
        assert!(missing_features(Some("avx2"), "x86-64-linux-avx512_zen4", &host).unwrap().is_empty());
        assert!(missing_features(Some("x86-64-linux-avx2"), "x86-64-linux-avx512_zen4", &host).unwrap().is_empty());
    }
}
