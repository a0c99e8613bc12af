//! The misaal command line.

use clap::{Args, Parser, Subcommand};
use misaal_isa::{BitVec, Instr, Semantics, SpecLibrary};
use misaal_reports::SemanticsRow;
use misaal_verifier::DiffConfig;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(name = "misaal", version, about = "Verified rewrite rules from vector instruction semantics")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Instruction semantics: list, show, evaluate and check specs.
    #[command(subcommand)]
    Isa(IsaCmd),
    /// Similarity classes (AutoLLVM ops) and per-lane facts; writes
    /// reports/<target>_classes.csv and reports/<target>_lanes.csv.
    Classes(ClassesArgs),
    /// Audit rewrite rules: Z3 proof and quickcheck for every instantiation;
    /// writes reports/verify_<target>.csv.
    Verify(VerifyArgs),
    /// Compile a Halide lowered Stmt to C (one .c and one .h) with the
    /// halide_buffer_t ABI of Halide's AOT output.
    Compile(CompileArgs),
    /// Build, check and time every kernel of a suite against Halide's own
    /// object; writes reports/bench_x86.csv and reports/bench_x86.png.
    Bench(BenchArgs),
    /// Offline rule synthesis from the verified specs: the whole pipeline
    /// (relevance, swizzles, enumerate, abstract) into
    /// rulesets/<target>.egg (beside the hand-written <target>_hand.egg), or one `--phase`; `--shard K/N` runs a
    /// share of the enumeration and `misaal synth merge --shards N`
    /// finishes the run from the shards.
    Synth(SynthArgs),
}

#[derive(Args)]
struct SynthArgs {
    /// `merge`: combine the finished shards' enumeration (`--shards N`)
    /// and run the phases after it, as the whole run would.
    #[arg(value_parser = ["merge"])]
    action: Option<String>,
    #[command(flatten)]
    spec: SpecArgs,
    /// Run one phase only: `relevance`, `swizzles` (discovery, classes and
    /// proved lowering rules) or `enumerate` (Halide and x86 terms matched
    /// by fingerprint, proved lowering rules) or `abstract` (those rules
    /// and the swizzle rules folded into abstract rules, every instance
    /// proved, written to rulesets/x86.egg, arm.egg or hvx.egg). Without it, all
    /// four in order, with a checkpoint after each.
    #[arg(long)]
    phase: Option<String>,
    /// enumerate: the deepest Halide term (default 3).
    #[arg(long)]
    depth: Option<u8>,
    /// enumerate: the deepest target term (x86 default 2, 1 is a quick
    /// run; ARM and HVX default 1, HVX's pair results also shuffled back
    /// into lane order). `--target-depth` is the same option.
    #[arg(long, alias = "target-depth")]
    x86_depth: Option<u8>,
    /// enumerate: only these units (Halide input signatures), e.g.
    /// `u8x16;u16x8,u16x8` (default: one and two inputs of each 128-bit
    /// integer type, and u8x16,i8x16); for small runs.
    #[arg(long, value_name = "SIGS")]
    units: Option<String>,
    /// enumerate: x86 terms over only these verified instructions
    /// (comma-separated; default all); for small runs.
    #[arg(long, value_name = "NAMES")]
    instructions: Option<String>,
    /// enumerate: run only shard K of N (units with index % N == K).
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Continue where a killed run stopped (its checkpoints).
    #[arg(long)]
    resume: bool,
    /// enumerate and abstract: worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// `--phase enumerate`: combine the N shards' checkpoints into one rule
    /// file (`misaal synth merge --shards N` also runs the later phases).
    #[arg(long, value_name = "N")]
    merge: Option<usize>,
    /// `merge`: how many shards the run was split into.
    #[arg(long, value_name = "N")]
    shards: Option<usize>,
    /// abstract: where to write the abstract ruleset (default
    /// rulesets/x86.egg, arm.egg or hvx.egg).
    #[arg(long, value_name = "FILE")]
    rules_out: Option<PathBuf>,
    /// Also read specs that have not met their oracle (for study only:
    /// rules are never synthesized from them).
    #[arg(long)]
    include_unverified: bool,
    /// Only instructions whose CPUID features are all in this list, as the
    /// specs name them (`sse2,ssse3,sse4_1,sse4_2,avx,avx2`): rules for
    /// CPUs that stop there, and a much shorter search than over every
    /// AVX-512 spec (the pipeline tests use it).
    #[arg(long, value_name = "FEATURES")]
    cpu_features: Option<String>,
    /// Folder for the CSV reports.
    #[arg(long, default_value = "reports")]
    out_dir: PathBuf,
}

#[derive(Args)]
struct CompileArgs {
    /// A `.stmt` file as Halide prints it.
    input: PathBuf,
    /// `x86`, `arm` or `hvx`; by default the Stmt header's `target=`
    /// (`x86-64-...`, `arm-64-...`, `hexagon-32-...`) decides. A Stmt
    /// lowered for another target is compiled for this one from its
    /// target-neutral vector IR, with a warning (features from
    /// `--target-features`, else the ISA's baseline).
    #[arg(long)]
    target: Option<String>,
    /// The C file to write; the header goes next to it with `.h`.
    #[arg(short, long)]
    output: PathBuf,
    /// The C function's name (default: the module's).
    #[arg(long)]
    name: Option<String>,
    /// The element type of a buffer the Stmt does not type, as NAME=TYPE
    /// (e.g. input=uint8); repeatable. A Stmt printed with `no_asserts` has
    /// no `.type` checks; the compile says which buffer needs one.
    #[arg(long = "buffer-type", value_name = "NAME=TYPE", value_parser = misaal_frontends::stmt::buffer_type_arg)]
    buffer_type: Vec<(String, misaal_frontends::stmt::Type)>,
    /// Also print to stderr what instruction selection (egglog, proved rules,
    /// DAG-cost extraction) chooses for the Stmt; the C written is unchanged.
    #[arg(long)]
    explain_isel: bool,
    /// The old path: every vector op lowered lane by lane, no instruction
    /// selection. By default the C comes from instruction selection
    /// (intrinsics chosen by proved rules; what no rule covers lowered
    /// naively and counted in a comment atop the C and on stderr).
    #[arg(long, conflicts_with = "isel")]
    naive: bool,
    /// Instruction selection (the default; kept so older scripts run).
    #[arg(long, hide = true)]
    isel: bool,
    /// Print, for each emitted instruction, the chain of proved rules that
    /// produced it (to stderr).
    #[arg(long, conflicts_with = "naive")]
    explain: bool,
    /// Prove (Z3, at the kernel's widths) that every selected
    /// instruction DAG computes what its Stmt expression does. A mismatch
    /// prints both and a counterexample and exits 1, writing no C; a root
    /// the solver cannot decide is "not validated" and exits 3.
    #[arg(long, conflicts_with = "naive")]
    validate: bool,
    /// `--validate`'s wall-clock budget per solver query, in milliseconds
    /// (a root too big for one query is proved in slices, each a query). A
    /// query that runs out is `unknown`, never success; on a loaded machine
    /// raise it, or use `--validate-rlimit` for a budget that does not
    /// depend on the load.
    #[arg(long, value_name = "MS", default_value_t = 20_000, requires = "validate")]
    validate_timeout: u32,
    /// `--validate`'s Z3 resource limit per query (0: none): Z3's own work
    /// units, the same verdict on every machine whatever its load.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "validate")]
    validate_rlimit: u32,
    /// Write this kernel's rule usage (`rule,matches,search_apply_ms,
    /// used_in_extraction`, summed over its functions) and the intrinsics
    /// it emitted into this folder (`rule_usage.csv`, `emitted.txt`); what
    /// `misaal bench` gathers into reports/rule_usage_x86.csv.
    #[arg(long, hide = true, conflicts_with = "naive")]
    usage_dir: Option<PathBuf>,
    /// The x86 features the code may use, as Halide names them (`sse41`,
    /// `avx2`, `avx512_skylake`, `avx512_zen4`, `avxvnni`, ... separated by
    /// `,` or `-`), or a whole target string (`x86-64-linux-avx2`). By
    /// default the Stmt header's `target=` decides. Only instructions whose
    /// CPUID features it has are emitted.
    #[arg(long, value_name = "FEATURES", conflicts_with = "naive")]
    target_features: Option<String>,
    /// x86: hold values in 256-bit registers at most, even when the target
    /// has AVX-512F (the AVX2 code). By default an AVX-512 target's values
    /// are held in 512-bit zmm registers.
    #[arg(long, conflicts_with = "naive")]
    ymm: bool,
    /// A rule file to select with instead of the target's default files
    /// (x86: the synthesized rulesets/x86.egg; e.g. the hand-written
    /// rulesets/x86_hand.egg); repeat it to load several
    /// together. Loaded like the default: every instantiation a kernel uses
    /// must be proved, or the ruleset is refused.
    #[arg(long = "rules", value_name = "FILE", conflicts_with = "naive")]
    rules: Vec<PathBuf>,
}

#[derive(Args)]
struct BenchArgs {
    /// `x86` (Halide's objects timed on this CPU) or `hvx` (built
    /// freestanding, run under qemu-hexagon, a static packet estimate;
    /// suite benchmarks/hvx, reports/bench_hvx.csv) or `arm` (cross-built,
    /// run under qemu-aarch64, an llvm-mca estimate; benchmarks/arm,
    /// reports/bench_arm.csv).
    #[arg(long, default_value = "x86", value_parser = ["x86", "arm", "hvx"])]
    target: String,
    /// The suite folder: manifest.json, stmt/, build/halide/.
    #[arg(long, default_value = "benchmarks")]
    suite: PathBuf,
    /// Only this kernel.
    #[arg(long)]
    kernel: Option<String>,
    /// Input sets checked bit for bit: the first (timed) is uniform random,
    /// then all-maximum elements and edge-value mixes alternate.
    #[arg(long, default_value_t = 3)]
    inputs: usize,
    /// Skip the (slow) reference-interpreter check.
    #[arg(long)]
    no_interp: bool,
    /// Exit 0 even when a kernel is `unchecked` (no Halide object and no
    /// interpreter, so nothing was compared); for timing only.
    #[arg(long)]
    allow_unchecked: bool,
    /// Compile our code with `misaal compile --naive` (the old lane-by-lane
    /// path). The naive build is timed in every run anyway (`naive_us`).
    #[arg(long, conflicts_with = "isel")]
    naive: bool,
    /// Instruction selection (the default; kept so older scripts run).
    #[arg(long, hide = true)]
    isel: bool,
    /// Where each kernel's C, objects, inputs and outputs are built. One run
    /// at a time may use a folder (a second one is refused); give concurrent
    /// runs their own.
    #[arg(long, default_value = "target/misaal-bench")]
    work_dir: PathBuf,
    /// Where bench_x86.csv/.png, rule_usage_x86.csv and coverage_x86.csv go.
    #[arg(long, default_value = "reports")]
    report_dir: PathBuf,
    /// Compile with these rule files instead of the target's default
    /// files (x86: the synthesized rulesets/x86.egg; passed to `misaal
    /// compile --rules`); repeatable.
    #[arg(long = "rules", value_name = "FILE", conflicts_with = "naive")]
    rules: Vec<PathBuf>,
    /// x86: compile with `misaal compile --ymm` (256-bit registers at
    /// most, even where the target has AVX-512F).
    #[arg(long, conflicts_with = "naive")]
    ymm: bool,
    /// x86: compile with `misaal compile --target-features FEATURES`
    /// (e.g. `x86-64-linux-avx2`: the code for an AVX2 CPU), timed against
    /// the suite's own Halide objects as usual. The features also decide
    /// whether this CPU can run the code natively.
    #[arg(long, value_name = "FEATURES", conflicts_with = "naive")]
    target_features: Option<String>,
    /// Compile with this `misaal` binary instead of the running one, for an
    /// A/B of two builds through one harness (its `compile` must take the
    /// flags this bench passes).
    #[arg(long, value_name = "BIN")]
    compiler: Option<PathBuf>,
    /// x86: build our C against SIMDe's portable intrinsics (`-mavx2`,
    /// libsimde-dev) and check it against the interpreter only, even on a
    /// CPU that could run it natively. Without this flag SIMDe is used
    /// when this CPU lacks a feature the kernel's target implies.
    #[arg(long, value_name = "HOW", value_parser = ["simde"])]
    emulate: Option<String>,
    /// x86: read this CPU's feature flags from FILE (a `flags : ...` line
    /// as in /proc/cpuinfo, or names separated by spaces) instead of
    /// /proc/cpuinfo, to see what the bench does on another CPU.
    #[arg(long, value_name = "FILE")]
    cpu_flags: Option<PathBuf>,
}

#[derive(Args)]
struct VerifyArgs {
    /// A target (`x86`: the synthesized rulesets/x86.egg; `arm`, `hvx`: the hand-written `<t>_hand.egg` and synthesized `<t>.egg` together) or a rule file.
    #[arg(long, default_value = "x86")]
    rules: String,
    /// Only the rule with this name.
    #[arg(long)]
    rule: Option<String>,
    /// Z3 timeout per instantiation, in milliseconds; a timeout is `unknown`.
    #[arg(long, default_value_t = 10_000)]
    timeout: u32,
    /// Z3 resource limit per query (0: none). Unlike --timeout it does not
    /// depend on the machine's speed: the same rule gets the same verdict
    /// everywhere. Exhausting it is `unknown`.
    #[arg(long, default_value_t = 0)]
    rlimit: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Quickcheck cases per instantiation on the concrete evaluator.
    #[arg(long, default_value_t = 1000)]
    cases: usize,
    /// Where to write the CSV (default reports/verify_<target>.csv).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Ignore and do not update the verdict cache (.misaal-cache/verify.tsv)
    /// or the verdicts shipped with the rulesets (rulesets/*.verdicts.tsv).
    #[arg(long)]
    no_cache: bool,
    /// Also write the settled verdicts of this run's instantiations to FILE
    /// (sorted, tab-separated): `rulesets/x86.verdicts.tsv` ships them, so a
    /// fresh checkout compiles without proving every rule first.
    #[arg(long)]
    export_verdicts: Option<PathBuf>,
    /// Let rules use x86 specs that have not met their oracle (see
    /// isa/specs/x86/evidence/); the output then says so.
    #[arg(long)]
    include_unverified: bool,
    /// Exit 0 even when instantiations over unverified specs were left
    /// unaudited (otherwise an audit that audited nothing has not passed).
    #[arg(long)]
    allow_unaudited: bool,
    /// Derive spec statuses from this evidence folder instead of the
    /// target's (`isa/specs/<target>/evidence`): what another set of
    /// machines' evidence vouches for.
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
    /// Exit 0 even when a rule is `inapplicable` (no instantiation meets its
    /// side conditions), which is otherwise an error in the ruleset.
    #[arg(long)]
    allow_inapplicable: bool,
}

#[derive(Args)]
struct ClassesArgs {
    #[command(subcommand)]
    show: Option<ClassesCmd>,
    #[command(flatten)]
    spec: SpecArgs,
    /// Print the time of every phase and of every Datalog rule.
    #[arg(long)]
    timings: bool,
    /// Z3 timeout per membership proof, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    timeout: u32,
    /// Folder for the CSV reports.
    #[arg(long, default_value = "reports")]
    out_dir: PathBuf,
    /// A `class,instruction` table to compare with, family by family
    /// (default: the bundled Hydride table for the target, if any).
    #[arg(long, conflicts_with = "no_baseline")]
    baseline: Option<PathBuf>,
    /// Compare with no baseline.
    #[arg(long)]
    no_baseline: bool,
    /// Also classify specs that have not met their oracle (see `<specs>/evidence/`).
    #[arg(long)]
    include_unverified: bool,
}

#[derive(Subcommand)]
enum ClassesCmd {
    /// Print a class's parameterized semantics and its members' parameters.
    Show { class: String },
}

#[derive(Args, Clone)]
struct SpecArgs {
    /// Target ISA (a folder under isa/specs).
    #[arg(long, default_value = "x86")]
    target: String,
    /// Read specs from this folder instead of the bundled isa/specs/<target>.
    #[arg(long)]
    specs: Option<PathBuf>,
}

#[derive(Subcommand)]
enum IsaCmd {
    /// List specs as a table.
    List {
        #[command(flatten)]
        spec: SpecArgs,
        /// Only specs that need this CPUID feature.
        #[arg(long)]
        feature: Option<String>,
        /// Only specs of this family (spec file name).
        #[arg(long)]
        family: Option<String>,
    },
    /// Print a spec and the unrolled expression of its lane 0.
    Show {
        name: String,
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Evaluate a spec on hexadecimal operands (immediates too), in order.
    Eval {
        name: String,
        operands: Vec<String>,
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Differential-test every spec against its oracle, write this machine's
    /// evidence (`<specs>/evidence/<machine>.tsv`) and
    /// reports/<target>_semantics.csv; or merge evidence (`--import`).
    Check {
        #[command(flatten)]
        spec: SpecArgs,
        /// Only this family (spec file name), e.g. `add`.
        #[arg(long)]
        family: Option<String>,
        /// Only intrinsics whose name contains this.
        #[arg(long)]
        filter: Option<String>,
        /// Cases per intrinsic.
        #[arg(long, default_value_t = 1000)]
        cases: usize,
        #[arg(long, default_value_t = DiffConfig::default().seed)]
        seed: u64,
        /// Where to write the CSV report.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// The evidence folder: one `<machine>.tsv` per machine (default:
        /// `evidence/` in the specs folder). Only this machine's file is written.
        #[arg(long)]
        evidence: Option<PathBuf>,
        /// x86: the only CPU features the oracle may use, e.g. `avx2` (each
        /// SSE/AVX level implies the ones below it). It can only make specs
        /// unavailable, never add evidence. Also `MISAAL_CPU_FEATURES`.
        #[arg(long)]
        cpu_features: Option<String>,
        /// After the check, write this machine's current evidence to DIR
        /// (`<machine>.tsv`, a README with its provenance, the CPU flags).
        #[arg(long, value_name = "DIR")]
        export: Option<PathBuf>,
        /// Merge evidence folders written by `--export` elsewhere (no check
        /// runs). Rows for changed specs are refused, named, and make the
        /// exit status 1; the other rows are merged.
        #[arg(long, value_name = "DIR")]
        import: Vec<PathBuf>,
    },
    /// Time every spec this CPU can run (latency chain and independent
    /// chains, in core cycles against vpaddd) and write this machine's
    /// table, isa/costs/x86-<machine>.csv.
    /// Use a release build.
    Measure {
        #[command(flatten)]
        spec: SpecArgs,
        /// Only intrinsics whose name contains this.
        #[arg(long)]
        filter: Option<String>,
        /// The cost table to update (default: isa/costs/<target>-<machine>.csv).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Timed runs per measurement; the fastest is kept.
        #[arg(long, default_value_t = 151)]
        repeats: usize,
        /// Run even in a debug build (whose numbers time calls, not
        /// instructions): for smoke tests.
        #[arg(long)]
        allow_unoptimized: bool,
    },
    /// Write the specs folder's digest memo (`DIGESTS.tsv`): each spec's
    /// semantics digest and a digest of what it is computed from, so that
    /// a compile checks a spec's status without unrolling it. Run it after
    /// editing a spec or `isa/src` (`tests/shipped_digests.rs` says when).
    Digests {
        #[command(flatten)]
        spec: SpecArgs,
    },
}

/// The verdict cache every command shares, relative to the working folder
/// (`misaal verify` fills it, compiles and synthesis read it).
const VERDICT_CACHE: &str = ".misaal-cache/verify.tsv";

mod bench;
mod compile;
mod check;
mod classes;
mod measure;
mod synth;
mod verify;

fn load(spec: &SpecArgs) -> Result<SpecLibrary, String> {
    let dir = spec.specs.clone().unwrap_or_else(|| misaal_isa::bundled_spec_dir(&spec.target));
    SpecLibrary::load_dir(&dir).map_err(|d| format!("{d}\n{} error(s) in {}", d.0.len(), dir.display()))
}

/// The specs that met their oracle (per the evidence in the specs folder),
/// or all of them with `include_unverified`, which is then said on stderr.
fn load_verified(spec: &SpecArgs, include_unverified: bool) -> Result<SpecLibrary, String> {
    let mut lib = load(spec)?;
    let dir = spec.specs.clone().unwrap_or_else(|| misaal_isa::bundled_spec_dir(&spec.target));
    let table = misaal_isa::StatusTable::for_spec_dir(&dir).map_err(|d| d.to_string())?;
    let total = lib.len();
    if include_unverified {
        let unverified = lib.instrs().iter().filter(|i| table.verified(&i.name, lib.get(&i.name).expect("listed").1).is_err()).count();
        eprintln!("note: --include-unverified: {unverified} of {total} specs have not met their oracle and are used anyway");
        return Ok(lib);
    }
    let excluded = lib.retain_verified(&table);
    if !excluded.is_empty() {
        let names: Vec<&str> = excluded.iter().take(8).map(|(n, _)| n.as_str()).collect();
        eprintln!(
            "note: {} of {total} specs are unverified and left out ({}{}); `misaal isa check` verifies them",
            excluded.len(),
            names.join(", "),
            if excluded.len() > 8 { ", ..." } else { "" }
        );
    }
    if lib.is_empty() {
        return Err(format!("error: no spec in {} has met its oracle; run `misaal isa check --target {}` first", dir.display(), spec.target));
    }
    Ok(lib)
}

/// One malloc arena for the whole process. A compile is mostly one thread,
/// with short parallel parts (spec parsing, instance building) whose worker
/// threads each got an arena of their own in glibc; what they freed stayed
/// there, about 10 MB of a compile's peak RSS. Synthesis and verification
/// keep the default: their threads allocate all the time.
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; M_ARENA_MAX takes
    // effect for arenas created from now on, and any value is valid.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

fn main() -> ExitCode {
    // Exit quietly when the reader goes away (`misaal ... | head`), as Unix
    // tools do, instead of panicking on a failed print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Isa(IsaCmd::List { spec, feature, family }) => list(&spec, feature, family),
        Cmd::Isa(IsaCmd::Show { name, spec }) => show(&spec, &name),
        Cmd::Isa(IsaCmd::Digests { spec }) => digests(&spec),
        Cmd::Isa(IsaCmd::Eval { name, operands, spec }) => eval(&spec, &name, &operands),
        Cmd::Isa(IsaCmd::Measure { spec, filter, out, repeats, allow_unoptimized }) => {
            measure::run(&spec, measure::MeasureArgs { filter, out, repeats, allow_unoptimized })
        }
        Cmd::Classes(args) => classes::run(args),
        Cmd::Verify(args) => verify::run(args),
        Cmd::Compile(args) => {
            one_malloc_arena();
            compile::compile(args)
        }
        Cmd::Bench(args) => bench::bench(args),
        Cmd::Synth(args) => synth::run(args),
        Cmd::Isa(IsaCmd::Check { spec, family, filter, cases, seed, out, jobs, evidence, cpu_features, export, import }) => {
            let cpu_features = cpu_features.or_else(|| std::env::var("MISAAL_CPU_FEATURES").ok().filter(|f| !f.is_empty()));
            check::check(&spec, check::CheckArgs { family, filter, cfg: DiffConfig { cases, seed, ..Default::default() }, out, jobs, evidence, cpu_features, export, import })
        }
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            // 2 for unusable input (a malformed file, a bad argument), so it
            // is never mistaken for 1, "something failed a check".
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn signature(i: &Instr) -> String {
    let ps: Vec<String> = i.params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
    format!("{}({}) -> {}", i.name, ps.join(", "), i.ret)
}

fn list(spec: &SpecArgs, feature: Option<String>, family: Option<String>) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let rows: Vec<&Instr> = lib
        .instrs()
        .iter()
        .map(|i| i.as_ref())
        .filter(|i| feature.as_ref().is_none_or(|f| i.features.iter().any(|x| x == f)))
        .filter(|i| family.as_ref().is_none_or(|f| &i.family == f))
        .collect();
    let w = rows.iter().map(|i| i.name.len()).max().unwrap_or(9).max(9);
    // Measured costs (`misaal isa measure`) where the table has a row, else the spec's cost line.
    // The table a compile without an AVX-512 CPU in its target reads.
    let measured = measure::read_table(&misaal_compiler::isel::extract::bundled_cost_table_for(&spec.target)).unwrap_or_else(|e| {
        eprintln!("warning: {e}; showing the specs' cost lines");
        Default::default()
    });
    println!("{:<w$}  {:<12}  {:<22}  {:<12}  {:>7}  {:>6}  source", "intrinsic", "instruction", "feature", "family", "latency", "tput");
    for i in &rows {
        let (lat, tp, src) = match (measured.get(&i.name), &i.cost) {
            (Some(m), _) => (format!("{}", m.latency), format!("{}", m.rthroughput), format!("measured ({})", m.cpu)),
            (None, Some(c)) => (format!("{}", c.latency), format!("{}", c.throughput), "spec line".to_string()),
            (None, None) => ("-".into(), "-".into(), "-".to_string()),
        };
        println!("{:<w$}  {:<12}  {:<22}  {:<12}  {:>7}  {:>6}  {src}", i.name, i.mnemonic, i.features.join("+"), i.family, lat, tp);
    }
    println!("{} of {} specs", rows.len(), lib.len());
    Ok(ExitCode::SUCCESS)
}

/// The spec's source text: from its `instr` line to the next item.
fn source_text(i: &Instr) -> String {
    let Ok(text) = std::fs::read_to_string(&*i.file) else { return String::new() };
    let lines: Vec<&str> = text.lines().collect();
    let start = i.span.line as usize - 1;
    let mut end = start + 1;
    while end < lines.len() {
        let t = lines[end].trim_start();
        if t.starts_with("instr ") || t.starts_with("def ") {
            break;
        }
        end += 1;
    }
    while end > start + 1 && (lines[end - 1].trim().is_empty() || lines[end - 1].trim_start().starts_with("//")) {
        end -= 1;
    }
    lines[start..end].join("\n")
}

fn lookup<'a>(lib: &'a SpecLibrary, name: &str) -> Result<(&'a Arc<Instr>, &'a Arc<Semantics>), String> {
    lib.get(name).ok_or_else(|| {
        let close: Vec<&str> = lib.instrs().iter().map(|i| i.name.as_str()).filter(|n| n.contains(name.trim_start_matches('_'))).take(5).collect();
        let hint = if close.is_empty() { String::new() } else { format!(" (similar: {})", close.join(", ")) };
        format!("error: no spec named `{name}`{hint}")
    })
}

fn digests(spec: &SpecArgs) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let dir = spec.specs.clone().unwrap_or_else(|| misaal_isa::bundled_spec_dir(&spec.target));
    let path = dir.join(misaal_isa::DIGEST_MEMO_FILE);
    let text = lib.digest_memo_text(misaal_verifier::prekey::ENGINE_DIGEST);
    misaal_isa::evidence::write_atomic(&path, &text).map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
    println!("wrote {} spec digests to {}", text.lines().filter(|l| !l.starts_with('#')).count(), path.display());
    Ok(ExitCode::SUCCESS)
}

fn show(spec: &SpecArgs, name: &str) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let (i, s) = lookup(&lib, name)?;
    println!("// {}:{}:{}", i.file, i.span.line, i.span.col);
    println!("{}", source_text(i));
    let lane = s.lanes[0];
    let names: Vec<String> = i.params.iter().map(|p| p.name.clone()).collect();
    println!();
    println!("// {} lanes; {} DAG nodes in all", s.lanes.len(), s.dag.len());
    println!("// lane 0 = dst[{}:{}]:", lane.lo + lane.width - 1, lane.lo);
    println!("{}", s.dag.render(lane.root, &names));
    Ok(ExitCode::SUCCESS)
}

fn eval(spec: &SpecArgs, name: &str, operands: &[String]) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let (i, s) = lookup(&lib, name)?;
    if operands.len() != i.params.len() {
        return Err(format!("error: `{}` takes {} operand(s), found {}\n  signature: {}", name, i.params.len(), operands.len(), signature(i)));
    }
    let mut vals = Vec::new();
    for (p, text) in i.params.iter().zip(operands) {
        let v = BitVec::parse_hex(p.ty.width(), text).map_err(|e| format!("error: operand `{}` ({}): {e}", p.name, p.ty))?;
        vals.push(v);
    }
    let r = s.eval(&vals).map_err(|e| format!("error: {e}"))?;
    println!("{r}");
    Ok(ExitCode::SUCCESS)
}

struct Outcome {
    family: String,
    row: SemanticsRow,
    detail: Option<String>,
    status: misaal_isa::SpecStatus,
    /// The CPU, or the twin and its proof, or why it was skipped.
    evidence: String,
}
