//! `misaal bench`: one harness for every target. It owns what the targets
//! share: the kernel list and input sets ([`inputs`]), the compile of our C
//! in a child process, timed with its peak memory ([`compile`]), the
//! hosted C harness ([`harness_c`]), byte comparison against the reference
//! interpreter and the verdict string ([`check`]), the work-dir lock
//! ([`lock`]), the folder a row that is not bit-exact keeps ([`keep`]),
//! the loop over the kernels and the report file ([`run`]) and the report
//! rows. Each target is a small backend:
//! [`x86`] (native timing, or SIMDe when this CPU lacks a feature the
//! code needs; an llvm-mca znver4 estimate), [`arm`] (qemu-aarch64, an
//! llvm-mca neoverse-n1 estimate) and [`hvx`] (qemu-hexagon, a packet
//! count). The static estimates live in [`mca`] and [`packets`].
//!
//! It knows nothing of the CLI: the `misaal` binary fills a [`Config`] and
//! names itself as the compiler to run.

pub mod arm;
pub mod check;
pub mod compile;
pub mod harness_c;
pub mod hvx;
pub mod inputs;
pub mod keep;
pub mod lock;
pub mod mca;
pub mod packets;
pub mod run;
pub mod usage;
pub mod x86;

use misaal_frontends::manifest::ArgSpec;
use misaal_frontends::stmt::types::Type;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// How the x86 backend runs our code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emulate {
    /// Decided per kernel: native when this CPU has every feature the
    /// kernel's target implies, else SIMDe.
    Auto,
    /// Our C built against SIMDe's portable intrinsics with `-mavx2`,
    /// whatever this CPU has (to test that path on an AVX-512 machine).
    Simde,
}

/// One `misaal bench` run, as the CLI parsed it.
#[derive(Clone, Debug)]
pub struct Config {
    /// `x86`, `arm` or `hvx`.
    pub target: String,
    /// The suite folder: manifest.json, stmt/, build/halide/.
    pub suite: PathBuf,
    pub kernel: Option<String>,
    pub inputs: usize,
    /// Run the reference interpreter on every input set.
    pub interp: bool,
    pub allow_unchecked: bool,
    /// Compile ours with `misaal compile --naive`.
    pub naive: bool,
    pub work_dir: PathBuf,
    pub report_dir: PathBuf,
    /// `--rules` files passed to every target's compile.
    pub rules: Vec<PathBuf>,
    /// Pass `--ymm` to every x86 compile (256-bit registers at most).
    pub ymm: bool,
    /// Pass `--target-features` to every x86 compile; it also decides which
    /// CPU features the code needs.
    pub target_features: Option<String>,
    pub emulate: Emulate,
    /// This CPU's feature flags from a file (`flags : ...` as in
    /// /proc/cpuinfo, or whitespace-separated names) instead of
    /// /proc/cpuinfo: a CPU without AVX-512 pretended on one with it.
    pub cpu_flags: Option<PathBuf>,
    /// The `misaal` binary whose `compile` subcommand builds our C.
    pub compiler: PathBuf,
    /// The running misaal's version and git revision, for the README of a
    /// kept mismatch ([`keep`]).
    pub version: String,
}

/// Runs the bench for `cfg.target`.
pub fn run(cfg: &Config) -> Result<ExitCode, String> {
    use misaal_targets::BenchBackend as B;
    match misaal_targets::by_name(&cfg.target).map(|desc| desc.bench) {
        Some(B::NativeTimingAndMca) => x86::bench(cfg),
        Some(B::EmulatedAndMca) => arm::bench(cfg),
        Some(B::EmulatedAndPacketCount) => hvx::bench(cfg),
        Some(B::None) | None => Err(format!("error: no bench backend for target `{}` (x86, arm, hvx)", cfg.target)),
    }
}

/// One kernel of a suite's manifest.
pub struct Kernel {
    pub name: String,
    pub function: String,
    pub args: Vec<ArgSpec>,
}

/// A suite: its kernels and the Halide target its Stmt were printed for.
pub struct Suite {
    pub dir: PathBuf,
    pub kernels: Vec<Kernel>,
    /// The manifest's `target`, or `unknown`.
    pub target: String,
}

impl Suite {
    /// `cfg.suite`, or the target's own suite when it is the default
    /// `benchmarks` (x86's) and the target is not x86.
    pub fn load(cfg: &Config) -> Result<Suite, String> {
        let dir = if cfg.suite == Path::new("benchmarks") && cfg.target != "x86" { PathBuf::from("benchmarks").join(&cfg.target) } else { cfg.suite.clone() };
        let m = misaal_frontends::manifest::load_manifest(&dir.join("manifest.json")).map_err(|e| format!("error: {e}"))?;
        let kernels = m.kernels.into_iter().map(|k| Kernel { name: k.name, function: k.function, args: k.args }).collect();
        Ok(Suite { dir, kernels, target: m.target.unwrap_or_else(|| "unknown".into()) })
    }

    pub fn stmt(&self, kernel: &str) -> PathBuf {
        self.dir.join("stmt").join(format!("{kernel}.stmt"))
    }

    /// Halide's object for `kernel` and its runtime, when both are built.
    pub fn halide_objects(&self, kernel: &str) -> Option<(PathBuf, PathBuf)> {
        let d = self.dir.join("build").join("halide");
        let (o, rt) = (d.join(format!("{kernel}.o")), d.join("runtime.o"));
        (o.is_file() && rt.is_file()).then_some((o, rt))
    }

    /// The kernels `cfg.kernel` selects.
    pub fn selected<'a>(&'a self, cfg: &'a Config) -> impl Iterator<Item = &'a Kernel> + 'a {
        self.kernels.iter().filter(move |k| cfg.kernel.as_ref().is_none_or(|n| *n == k.name))
    }
}

/// A program on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(program)).find(|p| p.is_file()))
}

/// The C type of a scalar argument: signed for `int`, unsigned for
/// `uint`, and the same for every target (the kernels are integer only;
/// a float or bool argument is refused, not miscompiled).
pub fn c_type(t: Type) -> Result<String, String> {
    use misaal_frontends::stmt::types::TypeCode;
    match t.code {
        TypeCode::Int => Ok(format!("int{}_t", t.bits)),
        TypeCode::UInt if t.bits == 1 => Ok("uint8_t".into()),
        TypeCode::UInt => Ok(format!("uint{}_t", t.bits)),
        _ => Err(format!("a scalar argument of type {t:?}: the bench harness passes integers only")),
    }
}

/// Halide's type code for a buffer of `t` (`halide_type_int` = 0, `uint` = 1).
pub fn halide_type_code(t: Type) -> u8 {
    if t.is_int() { 0 } else { 1 }
}

/// Bytes of one buffer argument.
pub fn bytes_of(a: &ArgSpec) -> usize {
    a.elements() * (a.ty.bits as usize).div_ceil(8)
}

/// Writes `text` through a temporary file and a rename.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| format!("error: writing {}: {e}", path.display()))
}

/// Runs a tool; its stdout, or its first lines of output as the error.
pub fn run_tool(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        return Err(format!("{what} failed: {}", text.lines().take(8).collect::<Vec<_>>().join(" | ")));
    }
    Ok(out.stdout)
}

/// HalideRuntime.h's folder, from the pip `halide` package.
pub fn halide_include() -> Result<PathBuf, String> {
    let out = Command::new("python3")
        .args(["-c", "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'include'))"])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err("Halide's Python package is missing; run scripts/setup.sh (it pip-installs halide==21.0.0)".into());
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// bench's exit status: 1 when a kernel failed or differed, 2 when some
/// were compared with nothing or skipped (unless `--allow-unchecked`), else 0.
pub fn exit_status(failed: usize, unchecked: usize, allow_unchecked: bool) -> ExitCode {
    if failed > 0 {
        ExitCode::from(1)
    } else if unchecked > 0 && !allow_unchecked {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The geometric mean of the finite positive values, and how many there were.
pub fn geomean(values: impl IntoIterator<Item = f64>) -> Option<(f64, usize)> {
    let v: Vec<f64> = values.into_iter().filter(|s| s.is_finite() && *s > 0.0).collect();
    (!v.is_empty()).then(|| ((v.iter().map(|s| s.ln()).sum::<f64>() / v.len() as f64).exp(), v.len()))
}

/// The Stmt's public function, the one a bench calls.
pub fn public_func(m: &misaal_frontends::stmt::ast::Module) -> Result<&misaal_frontends::stmt::ast::Func, String> {
    m.funcs.iter().find(|f| f.linkage != misaal_frontends::stmt::ast::Linkage::Internal).ok_or_else(|| "no public function in the Stmt".to_string())
}

/// Parses a suite's Stmt.
pub fn parse_stmt(path: &Path) -> Result<misaal_frontends::stmt::Module, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    misaal_frontends::stmt::parse_module(&path.display().to_string(), &text).map_err(|d| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use misaal_frontends::stmt::types::TypeCode;

    #[test]
    fn c_types_are_one_mapping() {
        let t = |code, bits| Type { code, bits, lanes: 1 };
        assert_eq!(c_type(t(TypeCode::Int, 16)).unwrap(), "int16_t");
        assert_eq!(c_type(t(TypeCode::UInt, 8)).unwrap(), "uint8_t");
        assert!(c_type(t(TypeCode::Float, 32)).is_err(), "a float scalar is refused, not passed as an integer");
    }
}
