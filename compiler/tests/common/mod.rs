//! Builds and runs C emitted by `misaal_compiler::c` with a generated
//! harness that owns the `halide_buffer_t`s.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use misaal_compiler::c::{CProgram, emit};
use misaal_frontends::interp::{ArgValue, Buffer, Interp, InterpError};
use misaal_frontends::manifest::{ArgSpec, Manifest};
use misaal_frontends::stmt::ast::{ArgKind, Func, Linkage, Module};
use misaal_frontends::stmt::types::{Type, TypeCode};

/// Where `HalideRuntime.h` lives: `$HALIDE_INCLUDE_DIR`, else the pip
/// `halide` package's `include` folder. Panics with install instructions.
pub fn halide_include() -> PathBuf {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let how = "the C backend tests need HalideRuntime.h from the pip halide package: run `python3 -m pip install halide==21.0.0` \
                   (or set HALIDE_INCLUDE_DIR to a folder holding HalideRuntime.h)";
        if let Some(d) = std::env::var_os("HALIDE_INCLUDE_DIR") {
            let d = PathBuf::from(d);
            return if d.join("HalideRuntime.h").is_file() { Ok(d) } else { Err(format!("HALIDE_INCLUDE_DIR={} has no HalideRuntime.h; {how}", d.display())) };
        }
        let out = Command::new("python3")
            .args(["-c", "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'include'))"])
            .output()
            .map_err(|e| format!("cannot run python3 ({e}); {how}"))?;
        if !out.status.success() {
            return Err(format!("python3 cannot import halide ({}); {how}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        let d = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if d.join("HalideRuntime.h").is_file() { Ok(d) } else { Err(format!("{} has no HalideRuntime.h; {how}", d.display())) }
    })
    .clone()
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Checks that `cc` runs; panics with install instructions if not.
pub fn check_cc() {
    static OK: OnceLock<Result<(), String>> = OnceLock::new();
    OK.get_or_init(|| match Command::new("cc").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("`cc --version` failed: {}", String::from_utf8_lossy(&o.stderr))),
        Err(e) => Err(format!("no C compiler `cc` ({e}): install GCC or Clang, e.g. `apt-get install gcc`")),
    })
    .clone()
    .unwrap_or_else(|e| panic!("{e}"));
}

/// A fresh folder for one case, per process (test runs may overlap) and
/// per call: the tests of one binary run in parallel threads, and two
/// modules of tests/integration.rs may name a case alike (c_backend's and
/// bench_kernels' `bench_add`), so the name gets the call's number.
pub fn work_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_backend").join(std::process::id().to_string()).join(format!("{name}.{n}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Removes a case's folder once it passed (failures keep theirs).
pub fn cleanup(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    if let Some(p) = dir.parent() {
        let _ = std::fs::remove_dir(p); // only if now empty
    }
}

/// Flags that turn C mistakes the emitter could make into errors.
pub const STRICT: &[&str] = &[
    "-Werror=implicit-function-declaration",
    "-Werror=int-conversion",
    "-Werror=incompatible-pointer-types",
    "-Werror=return-type",
    "-Werror=uninitialized",
];

/// How [`cc`]'s error starts when the C cannot be built here at all (the
/// test skips, naming why).
pub const CANNOT: &str = "cannot build here: ";

/// Runs `cc` with `args`, returning its stderr on failure. C for an
/// AVX-512 target that GCC refuses on this CPU ("target specific option
/// mismatch") is built again: a compile only (`-c`) with the target's
/// AVX-512 flags, a program to run against SIMDe, as `misaal bench` does
/// on such a CPU ([`misaal_testkit::avx512_cc_flags`]).
pub fn cc(dir: &Path, args: &[&str]) -> Result<(), String> {
    match cc_with(dir, args, &[]) {
        Err(e) if e.contains("target specific option mismatch") && args.contains(&"-c") => {
            let flags: Vec<String> = misaal_testkit::AVX512_COMPILE_FLAGS.iter().map(|s| s.to_string()).collect();
            cc_with(dir, args, &flags)
        }
        Err(e) if e.contains("target specific option mismatch") => match misaal_testkit::avx512_cc_flags() {
            Ok(extra) if !extra.is_empty() => cc_with(dir, args, &extra).map_err(|e| format!("against SIMDe (this CPU lacks AVX-512): {e}")),
            Ok(_) => Err(e),
            Err(why) => Err(format!("{CANNOT}{why}")),
        },
        r => r,
    }
}

fn cc_with(dir: &Path, args: &[&str], extra: &[String]) -> Result<(), String> {
    check_cc();
    let inc = halide_include();
    let out = Command::new("cc")
        .current_dir(dir)
        .arg(format!("-I{}", inc.display()))
        .arg("-I.")
        .args(STRICT)
        .args(extra)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run cc: {e}"))?;
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).chars().take(4000).collect()) }
}

/// Emits `module` as `symbol` into `dir/prog.{c,h}`.
pub fn write_program(dir: &Path, module: &Module, symbol: &str) -> Result<CProgram, String> {
    let p = emit(module, symbol).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("prog.c"), &p.c).unwrap();
    std::fs::write(dir.join("prog.h"), &p.h).unwrap();
    Ok(p)
}

/// One argument value for the harness.
#[derive(Clone, Debug)]
pub enum Arg {
    /// Element type, per-dimension (min, extent), dense little-endian data
    /// (dimension 0 innermost).
    Buffer { elem: Type, dims: Vec<(i64, i64)>, data: Vec<u8> },
    Scalar { ty: Type, value: i64 },
}

pub fn elem_bytes(t: Type) -> usize {
    (t.bits as usize).div_ceil(8)
}

fn ctype(t: Type) -> String {
    match t.code {
        TypeCode::Int => format!("int{}_t", t.bits),
        TypeCode::UInt => format!("uint{}_t", t.bits),
        TypeCode::Bool => "bool".into(),
        TypeCode::Float => if t.bits == 32 { "float".into() } else { "double".into() },
        TypeCode::Handle(h) => h.as_str().into(),
    }
}

/// A C `main` that builds the buffers from the file named by argv[1],
/// calls `symbol`, prints its return code to stderr and, if 0, writes every
/// buffer's bytes (in argument order) to stdout.
pub fn harness(symbol: &str, args: &[Arg]) -> String {
    let mut s = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"prog.h\"\n\nstatic uint8_t *rd(FILE *f, size_t n) {\n  uint8_t *p = (uint8_t *)calloc(n ? n : 1, 1);\n  if (n && fread(p, 1, n, f) != n) { fprintf(stderr, \"short input\\n\"); exit(3); }\n  return p;\n}\n\nint main(int argc, char **argv) {\n  if (argc < 2) return 5;\n  FILE *f = fopen(argv[1], \"rb\");\n  if (!f) return 4;\n",
    );
    let mut call = Vec::new();
    let mut dumps = Vec::new();
    for (k, a) in args.iter().enumerate() {
        match a {
            Arg::Buffer { elem, dims, data } => {
                let mut stride = 1i64;
                let mut ds = Vec::new();
                for (m, e) in dims {
                    ds.push(format!("{{{m}, {e}, {stride}, 0}}"));
                    stride *= e;
                }
                let code = match elem.code {
                    TypeCode::Int => 0,
                    TypeCode::UInt | TypeCode::Bool => 1,
                    TypeCode::Float => 2,
                    TypeCode::Handle(_) => 3,
                };
                s.push_str(&format!("  static halide_dimension_t d{k}[{}] = {{{}}};\n", dims.len().max(1), ds.join(", ")));
                s.push_str(&format!("  struct halide_buffer_t b{k};\n  memset(&b{k}, 0, sizeof b{k});\n"));
                s.push_str(&format!("  b{k}.host = rd(f, {});\n", data.len()));
                s.push_str(&format!("  b{k}.type.code = (halide_type_code_t){code};\n  b{k}.type.bits = {};\n  b{k}.type.lanes = 1;\n", elem.bits));
                s.push_str(&format!("  b{k}.dimensions = {};\n  b{k}.dim = d{k};\n", dims.len()));
                call.push(format!("&b{k}"));
                dumps.push(format!("  fwrite(b{k}.host, 1, {}, stdout);\n", data.len()));
            }
            Arg::Scalar { ty, value } => call.push(format!("({})({value}LL)", ctype(*ty))),
        }
    }
    s.push_str(&format!("  int r = {symbol}({});\n", call.join(", ")));
    s.push_str("  fprintf(stderr, \"returned %d\\n\", r);\n  if (r != 0) return 2;\n");
    for d in dumps {
        s.push_str(&d);
    }
    s.push_str("  return 0;\n}\n");
    s
}

/// Emits, compiles with `cc -O2 -march=native` and runs `module` on `args`.
/// Ok(buffers after the call, in argument order) or Err(return code or
/// failure text).
pub fn run(name: &str, module: &Module, args: &[Arg]) -> Result<Vec<Vec<u8>>, RunError> {
    let dir = build(name, module, args)?;
    let bufs = exec(&dir, args);
    match &bufs {
        Ok(_) if std::env::var_os("MISAAL_KEEP_C").is_none() => cleanup(&dir),
        Err(RunError::Returned(_)) => cleanup(&dir),
        _ => {}
    }
    bufs
}

/// Emits `module` and compiles it with a harness for arguments shaped as
/// `args` (their data is read at run time) into `dir/prog`; returns `dir`.
pub fn build(name: &str, module: &Module, args: &[Arg]) -> Result<PathBuf, RunError> {
    build_with(name, module, args, false)
}

/// [`build`], with the C from instruction selection when `selected` (what
/// `misaal compile` emits by default) instead of the naive lowering.
pub fn build_with(name: &str, module: &Module, args: &[Arg], selected: bool) -> Result<PathBuf, RunError> {
    let dir = work_dir(name);
    let symbol = "misaal_fn";
    if selected {
        let opts = misaal_compiler::c::EmitOptions { isel: Some(misaal_compiler::isel::Options::default()) };
        let (p, _) = misaal_compiler::c::emit_with(module, symbol, &opts).map_err(|e| RunError::Emit(e.to_string()))?;
        std::fs::write(dir.join("prog.c"), &p.c).unwrap();
        std::fs::write(dir.join("prog.h"), &p.h).unwrap();
    } else {
        write_program(&dir, module, symbol).map_err(RunError::Emit)?;
    }
    std::fs::write(dir.join("harness.c"), harness(symbol, args)).unwrap();
    cc(&dir, &["-O2", "-march=native", "prog.c", "harness.c", "-o", "prog", "-lm"]).map_err(|e| match e.strip_prefix(CANNOT) {
        Some(why) => RunError::Missing(why.to_string()),
        None => RunError::Compile(e),
    })?;
    Ok(dir)
}

/// Runs `dir/prog` (from [`build`] with arguments of the same shapes) on
/// `args`' data; Ok(buffers after the call, in argument order).
pub fn exec(dir: &Path, args: &[Arg]) -> Result<Vec<Vec<u8>>, RunError> {
    let mut input = Vec::new();
    for a in args {
        if let Arg::Buffer { data, .. } = a {
            input.extend_from_slice(data);
        }
    }
    std::fs::write(dir.join("input.bin"), &input).unwrap();
    let out = Command::new(dir.join("prog")).arg(dir.join("input.bin")).output().map_err(|e| RunError::Run(e.to_string()))?;
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    match out.status.code() {
        Some(0) => {}
        Some(2) => {
            let code = err.trim().strip_prefix("returned ").and_then(|c| c.parse().ok()).unwrap_or(0);
            return Err(RunError::Returned(code));
        }
        _ => return Err(RunError::Run(format!("{:?}: {err}", out.status))),
    }
    let mut bufs = Vec::new();
    let mut pos = 0;
    for a in args {
        if let Arg::Buffer { data, .. } = a {
            bufs.push(out.stdout.get(pos..pos + data.len()).ok_or_else(|| RunError::Run("short output".into()))?.to_vec());
            pos += data.len();
        }
    }
    Ok(bufs)
}

#[derive(Debug)]
pub enum RunError {
    Emit(String),
    Compile(String),
    /// A tool or CPU feature the run needs is missing (the test skips).
    Missing(String),
    Run(String),
    Returned(i32),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Emit(e) => write!(f, "emit: {e}"),
            RunError::Compile(e) => write!(f, "cc: {e}"),
            RunError::Missing(e) => write!(f, "cannot run here: {e}"),
            RunError::Run(e) => write!(f, "run: {e}"),
            RunError::Returned(c) => write!(f, "returned {c}"),
        }
    }
}

/// The one non-internal function of a module.
pub fn external(m: &Module) -> &Func {
    m.funcs.iter().find(|f| f.linkage != Linkage::Internal).expect("an external function")
}

pub fn is_buffer(f: &Func, name: &str) -> bool {
    f.args.iter().any(|a| a.name == name && matches!(a.kind, ArgKind::Buffer { .. }))
}

/// Maps `f` over `items` in parallel on one rayon pool shared by the
/// process's tests (up to 8 threads), keeping order.
pub fn par_map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync + Send) -> Vec<U> {
    use rayon::prelude::*;
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(8);
        // Deeply nested lets recurse deeply in the interpreter.
        rayon::ThreadPoolBuilder::new().num_threads(threads).stack_size(256 << 20).build().expect("a rayon pool")
    });
    pool.install(|| items.par_iter().map(f).collect())
}

/// The reference interpreter on one function call.
pub type Reference<'a> = dyn Fn(&Func, Vec<ArgValue>) -> Result<Vec<Buffer>, InterpError> + Sync + 'a;

/// Kernel `name`'s manifest arguments in its function's own order, and
/// the position of its output among the buffers.
pub fn manifest_args(func: &Func, manifest: &Manifest, name: &str) -> Result<(Vec<ArgSpec>, usize), String> {
    let k = manifest.kernels.iter().find(|k| k.name == name).ok_or("not in the manifest")?;
    let mut specs = Vec::new();
    for a in &func.args {
        specs.push(k.args.iter().find(|s| s.name == a.name).ok_or_else(|| format!("the manifest lacks `{}`", a.name))?.clone());
    }
    let out_pos = func
        .args
        .iter()
        .filter(|a| matches!(a.kind, ArgKind::Buffer { .. }))
        .position(|a| specs.iter().any(|s| s.name == a.name && s.output))
        .ok_or("no output buffer")?;
    Ok((specs, out_pos))
}

/// A kernel name folded into a seed, so each kernel draws its own inputs.
pub fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
}

/// One call's arguments, for the harness and for the interpreter: the
/// scalars from the manifest, the input buffers drawn from `state` as
/// input set `set` ([`input`]), the outputs zero.
pub fn call_args(specs: &[ArgSpec], set: usize, state: &mut u64) -> (Vec<Arg>, Vec<ArgValue>) {
    let (mut args, mut vals) = (Vec::new(), Vec::new());
    for s in specs {
        let t = s.ty;
        if !s.buffer {
            args.push(Arg::Scalar { ty: t, value: s.value });
            vals.push(ArgValue::Scalar(t, s.value));
            continue;
        }
        let mut b = Buffer::dense(t, &vec![0; s.dims.len()], &s.dims);
        if !s.output {
            b.data = input(set, b.len(), elem_bytes(t), state);
        }
        args.push(Arg::Buffer { elem: t, dims: s.dims.iter().map(|&e| (0, e)).collect(), data: b.data.clone() });
        vals.push(ArgValue::Buffer(b));
    }
    (args, vals)
}

pub fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Uniform random bytes, or (set 1) an edge mix: 40% of elements 0, all
/// ones, signed MIN or signed MAX.
pub fn input(set: usize, n: usize, size: usize, s: &mut u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * size);
    for _ in 0..n {
        let r = xorshift(s);
        let edge = if set == 0 || r % 10 >= 4 { None } else { Some((r >> 8) % 4) };
        for k in 0..size {
            let last = k + 1 == size;
            out.push(match edge {
                None => (xorshift(s) >> 24) as u8,
                Some(0) => 0,
                Some(1) => 0xFF,
                Some(2) => if last { 0x80 } else { 0 },
                _ => if last { 0x7F } else { 0xFF },
            });
        }
    }
    out
}

pub fn ty(s: &str) -> Type {
    let bits: u8 = s.trim_start_matches(|c: char| c.is_alphabetic()).parse().unwrap();
    if s.starts_with("uint") { Type::uint(bits) } else { Type::int(bits) }
}

/// A verdict cache for a test process: an empty local file of its own under
/// the temp folder, so that the shipped verdicts (`rulesets/*.verdicts.tsv`)
/// answer and nothing is written to the repository's `.misaal-cache`. With
/// no cache at all (`verdict_cache: None`) every instance a test selects with
/// was proved again, under a wall-clock timeout a loaded machine can miss.
pub fn test_verdict_cache() -> Option<PathBuf> {
    Some(std::env::temp_dir().join(format!("misaal-compiler-tests-{}", std::process::id())).join("verify.tsv"))
}

/// 1-D buffers of these (type, extent), random bytes from `seed`.
pub fn buffers(shapes: &[(&str, i64)], seed: u64) -> (Vec<Arg>, Vec<ArgValue>) {
    let mut s = seed;
    let (mut args, mut vals) = (Vec::new(), Vec::new());
    for &(t, n) in shapes {
        let ty = ty(t);
        let mut b = Buffer::dense(ty, &[0], &[n]);
        b.data = (0..b.data.len()).map(|_| xorshift(&mut s) as u8).collect();
        args.push(Arg::Buffer { elem: ty, dims: vec![(0, n)], data: b.data.clone() });
        vals.push(ArgValue::Buffer(b));
    }
    (args, vals)
}

/// Builds `prog` with the harness and `flags`, runs it on several inputs
/// and compares every buffer with the reference interpreter's.
pub fn agrees_with_interpreter(name: &str, m: &Module, prog: &misaal_compiler::c::CProgram, shapes: &[(&str, i64)], flags: &[&str]) {
    let dir = work_dir(name);
    std::fs::write(dir.join("prog.c"), &prog.c).unwrap();
    std::fs::write(dir.join("prog.h"), &prog.h).unwrap();
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    for (k, seed) in [1u64, 0x9e37_79b9_7f4a_7c15, 42].into_iter().enumerate() {
        let (args, vals) = buffers(shapes, seed);
        if k == 0 {
            std::fs::write(dir.join("harness.c"), harness("misaal_fn", &args)).unwrap();
            let mut all = vec!["-O1", "-g", "prog.c", "harness.c", "-o", "prog", "-lm"];
            all.extend_from_slice(flags);
            if flags.contains(&"-fsanitize=address") {
                // The harness never frees its buffers: no leak report.
                std::fs::write(dir.join("asan_options.c"), "const char *__asan_default_options(void) { return \"detect_leaks=0\"; }\n").unwrap();
                all.push("asan_options.c");
            }
            cc(&dir, &all).unwrap_or_else(|e| panic!("{name}: cc (C kept in {}): {e}", dir.display()));
        }
        let ours = exec(&dir, &args).unwrap_or_else(|e| panic!("{name}: run (C kept in {}): {e}", dir.display()));
        let want = Interp::new(&ops).run(external(m), vals).unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
        for (b, (o, w)) in ours.iter().zip(&want).enumerate() {
            assert!(*o == w.data, "{name} (seed {seed:#x}): buffer {b} differs from the interpreter; C kept in {}", dir.display());
        }
    }
    cleanup(&dir);
}

/// AddressSanitizer's flags if `cc` can link with it here.
pub fn asan() -> Vec<&'static str> {
    let dir = work_dir("asan_probe");
    std::fs::write(dir.join("p.c"), "int main(void) { return 0; }\n").unwrap();
    let ok = std::process::Command::new("cc").current_dir(&dir).args(["-fsanitize=address", "p.c", "-o", "p"]).output().is_ok_and(|o| o.status.success());
    cleanup(&dir);
    if ok { vec!["-fsanitize=address", "-fno-omit-frame-pointer"] } else { Vec::new() }
}

/// Runs an AVX2 fixture's C natively under AddressSanitizer against the
/// interpreter (see [`agrees_with_interpreter`]); on a CPU without AVX2 the
/// run is a skip that says so.
pub fn agrees_natively_on_avx2(name: &str, m: &Module, prog: &CProgram, shapes: &[(&str, i64)]) {
    if !std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|f| f.lines().any(|l| l.starts_with("flags") && l.split_whitespace().any(|w| w == "avx2"))) {
        misaal_testkit::skip("this CPU lacks AVX2: the C is not run");
        return;
    }
    let mut flags = vec!["-march=native"];
    flags.extend(asan());
    agrees_with_interpreter(name, m, prog, shapes, &flags);
}

/// Fixture `compiler/tests/data/NAME.stmt` compiled for AVX2 by the bundled
/// rules as `misaal_fn`: the module, the program and selection's report.
pub fn avx2_fixture(name: &str) -> (Module, CProgram, misaal_compiler::c::IselReport) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let file = format!("{name}.stmt");
    let text = std::fs::read_to_string(root.join("compiler/tests/data").join(&file)).unwrap();
    let m = misaal_frontends::stmt::parse_module(&file, &text).expect("the Stmt parses");
    let features = misaal_compiler::isel::features::CpuFeatures::from_feature_list("avx2").expect("known features");
    let isel = misaal_compiler::isel::Options { verdict_cache: test_verdict_cache(), features: Some(features), ..Default::default() };
    let (prog, r) = misaal_compiler::c::emit_with(&m, "misaal_fn", &misaal_compiler::c::EmitOptions { isel: Some(isel) }).expect("compiles");
    (m, prog, r.expect("a report"))
}
