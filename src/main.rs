//! The misaal command line.

// A compile is a few hundred milliseconds of small allocations (spec and
// rule parsing, instantiation, egglog's program), and glibc's malloc and
// free were ~40% of its samples. jemalloc with one arena and dirty pages
// purged after 20 ms: the 33 kernels' compile geomean 0.62x glibc's at the
// same peak RSS (57.6 MB max; benchmarks/RESULTS.md, 2026-11-30).
// mimalloc was 0.5x but 69-146 MB. One arena keeps threads' garbage
// reusable by the others (glibc needed `M_ARENA_MAX` 1 for that: ~10 MB
// of a compile's peak); decay 0 costs 20% more time for 1.5 MB.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read when it starts (`_RJEM_MALLOC_CONF` in the
/// environment still overrides them). `thp:never`: where the kernel backs
/// every anonymous mapping with 2 MB pages (transparent huge pages
/// `always`, the default of some distributions), a compile's peak RSS
/// grew by 6-8 MB (conv_nn 76 -> 84 MB, dilate3x3 36 -> 44 MB; issue 27's
/// "on every machine"); jemalloc then asks for small pages on its own.
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &[u8; 55] = b"narenas:1,dirty_decay_ms:20,muzzy_decay_ms:0,thp:never\0";

use bench::BenchArgs;
use clap::{Args, Parser, Subcommand};
use classes::ClassesArgs;
use compile::CompileArgs;
use isa::IsaCmd;
use misaal_isa::SpecLibrary;
use std::path::PathBuf;
use std::process::ExitCode;
use synth::SynthArgs;
use verify::VerifyArgs;

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

#[derive(Args, Clone)]
struct SpecArgs {
    /// Target ISA (a folder under isa/specs).
    #[arg(long, default_value = "x86")]
    target: String,
    /// Read specs from this folder instead of the bundled isa/specs/<target>.
    #[arg(long)]
    specs: Option<PathBuf>,
}

/// The verdict cache every command shares, relative to the working folder
/// (`misaal verify` fills it, compiles and synthesis read it).
const VERDICT_CACHE: &str = ".misaal-cache/verify.tsv";

mod bench;
mod check;
mod classes;
mod compile;
mod isa;
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

/// A compile's worker threads: its parallel parts (spec parsing, instance
/// building) are short, and each thread keeps an allocator cache of its
/// own, so on a many-core machine more threads only add peak memory
/// (`RAYON_NUM_THREADS=32` here: 57 -> 70 MB for the largest kernel).
const COMPILE_THREADS: usize = 4;

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
        Cmd::Isa(cmd) => isa::run(cmd),
        Cmd::Classes(args) => classes::run(args),
        Cmd::Verify(args) => verify::run(args),
        Cmd::Compile(args) => {
            // An explicit RAYON_NUM_THREADS wins (rayon reads it only when
            // the builder leaves the count unset).
            if std::env::var_os("RAYON_NUM_THREADS").is_none() {
                let n = std::thread::available_parallelism().map_or(1, |n| n.get()).min(COMPILE_THREADS);
                // Fails only if the pool already exists: then it is used as is.
                let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
            }
            compile::compile(args)
        }
        Cmd::Bench(args) => bench::bench(args),
        Cmd::Synth(args) => synth::run(args),
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
