//! `misaal bench`: the CLI's arguments handed to the one harness in
//! `misaal-bench`, which does the work for every target.

use clap::Args;
use misaal_bench::{Config, Emulate};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct BenchArgs {
    /// `x86` (Halide's objects timed on this CPU) or `hvx` (built
    /// freestanding, run under qemu-hexagon, a static packet estimate;
    /// suite benchmarks/hvx, reports/bench_hvx.csv) or `arm` (cross-built,
    /// run under qemu-aarch64, an llvm-mca estimate; benchmarks/arm,
    /// reports/bench_arm.csv).
    #[arg(long, default_value = "x86", value_parser = misaal_targets::NAMES)]
    pub target: String,
    /// The suite folder: manifest.json, stmt/, build/halide/.
    #[arg(long, default_value = "benchmarks")]
    pub suite: PathBuf,
    /// Only this kernel.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Input sets checked bit for bit: the first (timed) is uniform random,
    /// then all-maximum elements and edge-value mixes alternate.
    #[arg(long, default_value_t = 3)]
    pub inputs: usize,
    /// Skip the (slow) reference-interpreter check.
    #[arg(long)]
    pub no_interp: bool,
    /// Exit 0 even when a kernel is `unchecked` (no Halide object and no
    /// interpreter, so nothing was compared); for timing only.
    #[arg(long)]
    pub allow_unchecked: bool,
    /// Compile our code with `misaal compile --naive` (the old lane-by-lane
    /// path). The naive build is timed in every run anyway (`naive_us`).
    #[arg(long, conflicts_with = "isel")]
    pub naive: bool,
    /// Instruction selection (the default; kept so older scripts run).
    #[arg(long, hide = true)]
    pub isel: bool,
    /// Where each kernel's C, objects, inputs and outputs are built. One run
    /// at a time may use a folder (a second one is refused); give concurrent
    /// runs their own. A row that is not bit-exact keeps that run's files in
    /// WORK_DIR/mismatches/KERNEL-TARGET-TIME-PID/ (README.txt says what
    /// differed), and the row names the folder.
    #[arg(long, default_value = "target/misaal-bench")]
    pub work_dir: PathBuf,
    /// Where bench_x86.csv/.png, rule_usage_x86.csv and coverage_x86.csv go.
    #[arg(long, default_value = "reports")]
    pub report_dir: PathBuf,
    /// Compile with these rule files instead of the target's default
    /// files (x86: the synthesized rulesets/x86.egg; passed to `misaal
    /// compile --rules`); repeatable.
    #[arg(long = "rules", value_name = "FILE", conflicts_with = "naive")]
    pub rules: Vec<PathBuf>,
    /// x86: compile with `misaal compile --ymm` (256-bit registers at
    /// most, even where the target has AVX-512F).
    #[arg(long, conflicts_with = "naive")]
    pub ymm: bool,
    /// x86: compile with `misaal compile --target-features FEATURES`
    /// (e.g. `x86-64-linux-avx2`: the code for an AVX2 CPU), timed against
    /// the suite's own Halide objects as usual. The features also decide
    /// whether this CPU can run the code natively.
    #[arg(long, value_name = "FEATURES", conflicts_with = "naive")]
    pub target_features: Option<String>,
    /// Compile with this `misaal` binary instead of the running one, for an
    /// A/B of two builds through one harness (its `compile` must take the
    /// flags this bench passes).
    #[arg(long, value_name = "BIN")]
    pub compiler: Option<PathBuf>,
    /// x86: build our C against SIMDe's portable intrinsics (`-mavx2`,
    /// libsimde-dev) and check it against the interpreter only, even on a
    /// CPU that could run it natively. Without this flag SIMDe is used
    /// when this CPU lacks a feature the kernel's target implies.
    #[arg(long, value_name = "HOW", value_parser = ["simde"])]
    pub emulate: Option<String>,
    /// x86: read this CPU's feature flags from FILE (a `flags : ...` line
    /// as in /proc/cpuinfo, or names separated by spaces) instead of
    /// /proc/cpuinfo, to see what the bench does on another CPU.
    #[arg(long, value_name = "FILE")]
    pub cpu_flags: Option<PathBuf>,
}

pub fn bench(args: BenchArgs) -> Result<ExitCode, String> {
    let cfg = Config {
        target: args.target,
        suite: args.suite,
        kernel: args.kernel,
        inputs: args.inputs,
        interp: !args.no_interp,
        allow_unchecked: args.allow_unchecked,
        naive: args.naive,
        work_dir: args.work_dir,
        report_dir: args.report_dir,
        rules: args.rules,
        ymm: args.ymm,
        target_features: args.target_features,
        emulate: if args.emulate.as_deref() == Some("simde") { Emulate::Simde } else { Emulate::Auto },
        cpu_flags: args.cpu_flags,
        compiler: match args.compiler {
            Some(bin) => bin,
            None => std::env::current_exe().map_err(|e| format!("error: cannot find the misaal binary: {e}"))?,
        },
        version: crate::check::version(),
    };
    misaal_bench::run(&cfg)
}
