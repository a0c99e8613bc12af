//! The ARM backend (`misaal bench --target arm`): the ARM suite
//! (`benchmarks/arm`) compiled by misaal for AArch64 NEON, cross-built
//! with `aarch64-linux-gnu-gcc -O3` for exactly the features of each
//! Stmt's header, linked in one program with Halide 21's own ARM object
//! (built for `arm_dot_prod`, every feature misaal may use) and run under
//! `qemu-aarch64 -cpu max` on the shared input sets. Both outputs are
//! compared byte for byte with each other and with the reference
//! interpreter. qemu's run time says nothing about an ARM core, so speed
//! is llvm-mca's estimate on a Neoverse N1 ([`crate::mca`]).

use crate::check::{Outcome, Verdict, outcome};
use crate::compile::{Job, compile};
use crate::keep::{drop_later_sets, halide_files, keep_and_note, write_input_set};
use crate::run::{EstimateRow, KernelRow, Run};
use crate::lock::WorkLock;
use crate::mca::{Arch, Estimate, Tools, estimate, per_byte_ratio, ratio};
use crate::{Config, Kernel, Suite, geomean, halide_include, run_tool, which, write_atomic};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const CC: &str = "aarch64-linux-gnu-gcc";
const QEMU: &str = "qemu-aarch64";
/// The core whose scheduling model llvm-mca uses.
pub const MCA_CPU: &str = "neoverse-n1";
/// GCC's `-march` for exactly the spec features a Stmt's target has.
pub fn march(features: &misaal_compiler::isel::features::CpuFeatures) -> String {
    let f = |n: &str| features.features.contains(n);
    let mut m = String::from(if f("rdm") { "armv8.1-a" } else { "armv8-a" });
    for (feat, ext) in [("dotprod", "+dotprod"), ("fp16", "+fp16"), ("i8mm", "+i8mm")] {
        if f(feat) {
            m.push_str(ext);
        }
    }
    if !f("neon") {
        m.push_str("+nosimd");
    }
    m
}

/// One row of reports/bench_arm.csv: the shared columns, llvm-mca's
/// estimates of both sides and the `-march` both were built for (`note`).
type Row = EstimateRow<Estimate>;

/// The rows of `reports/bench_arm.csv` (schema in `misaal-reports`).
fn report_rows(rows: &[Row]) -> Vec<misaal_reports::BenchArmRow> {
    let per_byte = |e: Option<Estimate>| e.map(|e| e.cycles_per_byte);
    rows.iter()
        .map(|r| misaal_reports::BenchArmRow {
            base: r.base.report_cells(),
            ours_mca_cycles: r.ours.map(|e| e.cycles),
            halide_mca_cycles: r.halide.map(|e| e.cycles),
            ratio: ratio(r.ours, r.halide),
            loops: r.loop_cells(),
            march: r.note.clone(),
            ours_mca_cycles_per_byte: per_byte(r.ours),
            halide_mca_cycles_per_byte: per_byte(r.halide),
            per_byte_ratio: per_byte_ratio(r.ours, r.halide),
        })
        .collect()
}

struct Context<'a> {
    run: Run<'a>,
    cc: PathBuf,
    qemu: PathBuf,
    tools: Tools,
    include: &'a Path,
}

fn bench_one(cx: &Context, k: &Kernel) -> Result<Row, String> {
    let (cfg, suite) = (cx.run.cfg, cx.run.suite);
    let dir = crate::keep::kernel_dir(cx.run.work, &k.name)?;
    crate::keep::fresh_dir(&dir)?;
    let stmt = suite.stmt(&k.name);
    // `misaal compile --target arm` in a child, with `--rules`, as x86 and
    // HVX compile: its time and peak memory are its own.
    let compiled = compile(cfg, &Job { stmt: &stmt, isa: "arm", symbol: &format!("misaal_{}", k.function), out: &dir.join("ours.c"), naive: cfg.naive, usage_dir: None })?;
    let module = crate::parse_stmt(&stmt)?;
    let features = misaal_compiler::isel::features::CpuFeatures::from_halide_target(&module.target)?;
    let march = march(&features);
    let Some((hobj, runtime)) = suite.halide_objects(&k.name) else {
        return Err(format!("no Halide object for {} in {} (python3 benchmarks/generate.py --suite {} --target {})", k.name, suite.dir.join("build/halide").display(), suite.dir.display(), suite.target));
    };
    write_atomic(&dir.join("main.c"), &crate::harness_c::harness(&k.function, &k.args)?)?;
    let inc = |c: &mut Command| {
        c.arg("-I").arg(cx.include).arg("-I").arg(&dir).arg("-I").arg(hobj.parent().expect("a folder"));
    };
    // Our object alone, for the static estimate; then the program.
    let obj = dir.join("ours.o");
    let mut cc = Command::new(&cx.cc);
    cc.args(["-O3", &format!("-march={march}"), "-c"]).arg(dir.join("ours.c")).arg("-o").arg(&obj);
    inc(&mut cc);
    run_tool(&mut cc, "aarch64-linux-gnu-gcc (ours.c)")?;
    let exe = dir.join("kernel");
    let mut link = Command::new(&cx.cc);
    link.args(["-O2", "-static", &format!("-march={march}")]).arg(dir.join("main.c")).arg(&obj).arg(&hobj).arg(&runtime).arg("-o").arg(&exe).args(["-lpthread", "-ldl", "-lm"]);
    inc(&mut link);
    run_tool(&mut link, "aarch64-linux-gnu-gcc (link)")?;

    let mut v = Verdict::new(cfg.inputs);
    let mut sets = Vec::new();
    let mut ours_out = Vec::new();
    for r in 0..cfg.inputs {
        // Each set in its own folder, inputs and outputs: what a failed row
        // keeps.
        let (sd, set) = write_input_set(&dir, k, r)?;
        run_tool(Command::new(&cx.qemu).args(["-cpu", "max"]).arg(&exe).arg(&sd), QEMU)?;
        let ours = std::fs::read(sd.join("out_ours.bin")).map_err(|e| e.to_string())?;
        let halide = std::fs::read(sd.join("out_halide.bin")).map_err(|e| e.to_string())?;
        v.compare(r, &ours, &halide, "Halide's object");
        sets.push(set);
        ours_out.push(ours);
    }
    v.refs.push("Halide");
    let interp_outs = v.against_interpreter(cfg.interp, &module, k, &sets, &ours_out)?;
    let ours = estimate(&cx.tools, Arch::Aarch64, MCA_CPU, &obj).map_err(|e| format!("estimate (ours): {e}"))?;
    let halide = estimate(&cx.tools, Arch::Aarch64, MCA_CPU, &hobj).map_err(|e| format!("estimate (Halide): {e}"))?;
    let mut bit_exact = v.cell();
    if outcome(&bit_exact) == Outcome::Failed {
        let mut ev = cx.run.evidence(k, &bit_exact, &v.details, format!("qemu-aarch64 -cpu max, -march={march}"));
        ev.files.extend(halide_files([hobj.clone(), runtime.clone()]));
        ev.blobs = interp_outs.into_iter().enumerate().map(|(r, b)| (format!("input{r}/out_interpreter.bin"), b)).collect();
        bit_exact = keep_and_note(cfg, &ev);
    } else {
        drop_later_sets(&dir, cfg.inputs);
    }
    let base = KernelRow { kernel: k.name.clone(), bit_exact, compiled: Some(compiled), method: if cfg.naive { "naive" } else { "isel" }, target: module.target.clone() };
    Ok(Row { base, ours: Some(ours), halide: Some(halide), note: march })
}

/// How to run a kept ARM program again.
const RERUN: &str = "cp -r input0 again && qemu-aarch64 -cpu max ./kernel again   (writes out_ours.bin and out_halide.bin into again/)";

pub fn bench(cfg: &Config) -> Result<ExitCode, String> {
    let suite = Suite::load(cfg)?;
    let get = |t: &str, pkg: &str| which(t).ok_or_else(|| format!("error: misaal bench --target arm needs {t}, not found on PATH (scripts/setup.sh installs {pkg})"));
    let (cc, qemu) = (get(CC, "gcc-aarch64-linux-gnu")?, get(QEMU, "qemu-user")?);
    let tools = Tools::find().map_err(|e| format!("error: misaal bench --target arm needs {e}"))?;
    let include = halide_include().map_err(|e| format!("error: {e}"))?;
    let work = cfg.work_dir.join("arm");
    let _lock = WorkLock::take(&work)?;
    let cx = Context { run: Run { cfg, suite: &suite, work: &work, target: "arm", rerun: RERUN }, cc, qemu, tools, include: &include };
    let failed = |k: &Kernel, e: String| Row { base: cx.run.failed_row(k, &e), ..Row::default() };
    let cyc = |e: Option<Estimate>| e.map(|e| format!("{:>7.1} cyc {:>4} ins {:>2} loops", e.cycles, e.instrs, e.loops)).unwrap_or_else(|| "-".into());
    let print = |row: &Row, secs| row.base.print("mca", cyc(row.ours), cyc(row.halide), secs);
    let rows = cx.run.rows(|k| bench_one(&cx, k), failed, print)?;
    let n = cx.run.counts(rows.iter().map(|r| r.base.bit_exact.as_str()));
    let (geo, geo_n) = geomean(rows.iter().filter_map(|r| ratio(r.ours, r.halide))).unwrap_or((f64::NAN, 0));
    let (geo_b, geo_b_n) = geomean(rows.iter().filter_map(|r| per_byte_ratio(r.ours, r.halide))).unwrap_or((f64::NAN, 0));
    let fallbacks: u64 = rows.iter().filter_map(|r| r.base.fallback_exprs()).sum();
    println!(
        "{} of {} kernels bit-exact under qemu-aarch64; static estimate (llvm-mca -mcpu={MCA_CPU}, inner loops) Halide/ours geomean {geo:.3} per iteration over {geo_n} kernels, {geo_b:.3} per byte over {geo_b_n}; {fallbacks} fallback expression(s)",
        n.exact,
        rows.len()
    );
    cx.run.note_kept(rows.iter().map(|r| r.base.bit_exact.as_str()));
    let path = cx.run.write_report("bench_arm.csv", |p| misaal_reports::write_bench_arm_csv(&report_rows(&rows), p))?;
    println!("wrote {}", path.display());
    Ok(crate::exit_status(n.failed, n.unchecked, cfg.allow_unchecked))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::Compiled;

    #[test]
    fn report_quotes_and_formats_as_documented() {
        let est = |cycles: f64| Some(Estimate { cycles, cycles_per_byte: cycles / 64.0, instrs: 12, loops: 2 });
        let compiled = Some(Compiled { ms: 12.345, peak_rss_kb: 5000, fallback_exprs: Some(3) });
        let row = |kernel: &str, ours, halide, compiled, target: &str| Row {
            base: KernelRow { kernel: kernel.into(), bit_exact: "yes".into(), compiled, method: "llvm-mca", target: target.into() },
            ours,
            halide,
            note: "armv8-a+dotprod".into(),
        };
        let rows = vec![
            row("add", est(10.0), est(12.5), compiled, "arm-64-linux"),
            row("a,b", None, est(f64::INFINITY), None, ""),
            row("q\"x", est(3.0), None, Some(Compiled { ms: 1.0, peak_rss_kb: 7, fallback_exprs: None }), "t\nu"),
        ];
        let text = crate::run::written_text("bench-arm", |p| misaal_reports::write_bench_arm_csv(&report_rows(&rows), p));
        // What the hand-written CSV of the same rows was, byte for byte.
        assert_eq!(
            text,
            "kernel,bit_exact,ours_mca_cycles,halide_mca_cycles,ratio,ours_loop_instrs,halide_loop_instrs,ours_loops,halide_loops,fallback_exprs,compile_ms,method,target,march,peak_rss_kb,ours_mca_cycles_per_byte,halide_mca_cycles_per_byte,per_byte_ratio\n\
             add,yes,10.00,12.50,1.250,12,12,2,2,3,12.3,llvm-mca,arm-64-linux,armv8-a+dotprod,5000,0.156,0.195,1.250\n\
             \"a,b\",yes,,,,,12,,2,,NaN,llvm-mca,,armv8-a+dotprod,,,,\n\
             \"q\"\"x\",yes,3.00,,,12,,2,,,1.0,llvm-mca,\"t\nu\",armv8-a+dotprod,7,0.047,,\n"
        );
    }

    #[test]
    fn march_follows_the_features() {
        let f = |t: &str| march(&misaal_compiler::isel::features::CpuFeatures::from_halide_target(t).unwrap());
        assert_eq!(f("arm-64-linux-arm_dot_prod-no_runtime"), "armv8-a+dotprod");
        assert_eq!(f("arm-64-linux"), "armv8-a");
    }
}
