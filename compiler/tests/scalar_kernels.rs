//! The scalar C baselines in `benchmarks/scalar/` (one `scalar_<function>`
//! per benchmark kernel, written from the Halide generator) against Halide's
//! results, byte for byte, at the manifest's shapes and scalar values.
//!
//! Each kernel's C is compiled with `clang -O3 -march=native` (`cc` when
//! there is no clang; the test prints which) and run on up to three input
//! sets ([`SETS`]): uniform random bytes, every element all ones (the
//! maximum of each unsigned type, -1 of each signed one) and an edge mix
//! (40% of elements 0, all ones, signed MIN or signed MAX, the rest
//! uniform). References:
//!
//! - Halide's own objects, `benchmarks/build/halide/<name>.o` with
//!   `runtime.o`, for all 33 kernels on the all-maximum and edge-mix sets,
//!   when they exist and run on this CPU (`python3 benchmarks/generate.py
//!   --object-target host` builds them; the default AVX-512 objects stop
//!   with SIGILL elsewhere, which the test reports and passes over; a
//!   kernel with neither reference then only compiles and runs);
//! - the reference interpreter (`misaal_frontends::interp`) on the kernel's
//!   Stmt, for [`DEFAULT_KERNELS`] (three of the 33) on the edge mix: it
//!   takes 10-40 s per kernel and input set here.
//!
//! `MISAAL_SLOW=1` checks all 33 kernels on all three sets against both
//! references (about 25 minutes on two cores); `MISAAL_KERNELS=a,b`
//! checks only the kernels listed, against both, on the default sets.
//!
//! It also checks that the manifest's argument order is the Stmt function's,
//! the ABI `scalar_<function>` copies.
//!
//! Needs a C compiler and HalideRuntime.h from the pip `halide` package.

use crate::common::*;
use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::manifest::{Kernel, Manifest, load_manifest};
use misaal_frontends::stmt::ast::{ArgKind, Func};
use misaal_frontends::stmt::parse_module;
use misaal_isa::SpecLibrary;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

const BENCHMARKS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks");

/// Checked against the interpreter by default, slowest first: a row
/// reduction with a polynomial and a division, a box blur (rounded
/// division) and an int8 matrix-vector product requantized to int8. The
/// three slowest, a quantized convolution, the median network and an int16
/// matmul, are checked with `MISAAL_SLOW=1`, like every other kernel.
const DEFAULT_KERNELS: &[&str] = &["softmax", "blur3x3", "fully_connected"];

/// The input sets, by name. `MISAAL_SLOW=1` runs all three against every
/// reference; the default run the last two against Halide's objects and
/// the edge mix (whose other 60% of elements are uniform) against the
/// interpreter, to stay near two minutes.
const SETS: &[&str] = &["uniform", "all maximum", "edge mix"];
const INTERP_DEFAULT_SET: &str = "edge mix";

fn sets() -> &'static [&'static str] {
    if slow() { SETS } else { &SETS[1..] }
}

use misaal_testkit::slow;

/// `clang` if it runs, else `cc`; printed once.
fn compiler() -> &'static str {
    static CC: OnceLock<&'static str> = OnceLock::new();
    CC.get_or_init(|| {
        let runs = |c: &str| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success());
        let cc = if runs("clang") {
            "clang"
        } else if runs("cc") {
            "cc"
        } else {
            panic!("no C compiler: install clang (scripts/setup.sh does) or gcc")
        };
        eprintln!("compiling the scalar baselines with `{cc} -O3 -march=native`");
        cc
    })
}

/// One manifest argument.
struct Spec {
    name: String,
    ctype: String,
    arg: Arg,
    output: bool,
}

fn specs(kernel: &Kernel) -> Vec<Spec> {
    let mut out = Vec::new();
    for s in &kernel.args {
        let t = s.ty;
        let arg = if s.buffer {
            let n: i64 = s.dims.iter().product();
            Arg::Buffer { elem: t, dims: s.dims.iter().map(|&e| (0, e)).collect(), data: vec![0; n as usize * elem_bytes(t)] }
        } else {
            Arg::Scalar { ty: t, value: s.value }
        };
        // The manifest's types are `int8` .. `uint64`, C's `int8_t` .. `uint64_t`.
        let ctype = format!("{}int{}_t", if t.is_int() { "" } else { "u" }, t.bits);
        out.push(Spec { name: s.name.clone(), ctype, arg, output: s.output });
    }
    out
}

/// Writes `dir/prog.h` declaring `symbol` with the manifest's C signature
/// (after `include`, a line of C), and the harness calling it.
fn write_harness(dir: &Path, include: &str, symbol: &str, specs: &[Spec]) {
    let params: Vec<String> = specs.iter().map(|s| if matches!(s.arg, Arg::Buffer { .. }) { "struct halide_buffer_t *".into() } else { s.ctype.clone() }).collect();
    let h = format!("#include <stdint.h>\n#include \"HalideRuntime.h\"\n{include}\nint {symbol}({});\n", params.join(", "));
    std::fs::write(dir.join("prog.h"), h).unwrap();
    let args: Vec<Arg> = specs.iter().map(|s| s.arg.clone()).collect();
    std::fs::write(dir.join("harness.c"), harness(symbol, &args)).unwrap();
}

/// Compiles `dir/harness.c` with `sources` into `dir/prog`.
fn compile(cc: &str, dir: &Path, sources: &[PathBuf], flags: &[&str]) -> Result<(), String> {
    let out = Command::new(cc)
        .current_dir(dir)
        .args(["-O3", "-march=native", "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types"])
        .arg(format!("-I{}", halide_include().display()))
        .arg("-I.")
        .args(flags)
        .arg("harness.c")
        .args(sources)
        .args(["-o", "prog", "-lpthread", "-ldl", "-lm"])
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if out.status.success() { Ok(()) } else { Err(format!("{cc}: {}", String::from_utf8_lossy(&out.stderr).chars().take(3000).collect::<String>())) }
}

/// Input buffer data of `n` elements of `size` bytes for input set `set`.
fn set_data(set: &str, n: usize, size: usize, state: &mut u64) -> Vec<u8> {
    match set {
        "all maximum" => vec![0xFF; n * size],
        "edge mix" => input(1, n, size, state),
        _ => input(0, n, size, state),
    }
}

/// None if equal, else how `got` differs from `want` (elements of `size` bytes).
fn mismatch(got: &[u8], want: &[u8], size: usize) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} output bytes, the reference has {}", got.len(), want.len()));
    }
    let bad: Vec<usize> = (0..got.len() / size).filter(|&i| got[i * size..(i + 1) * size] != want[i * size..(i + 1) * size]).collect();
    let &first = bad.first()?;
    let el = |b: &[u8]| format!("{:02x?}", &b[first * size..(first + 1) * size]);
    Some(format!("{} of {} elements differ, first #{first}: scalar {} reference {}", bad.len(), got.len() / size, el(got), el(want)))
}

/// What checking one kernel found.
struct Outcome {
    /// Input sets compared per reference, e.g. "interpreter 3, Halide 3".
    summary: String,
    /// A reference that could not run (not a failure).
    note: Option<String>,
}

fn check(name: &str, manifest: &Manifest, ops: Option<&SpecLibrary>) -> Result<Outcome, String> {
    let t = Instant::now();
    let kernel = manifest.kernels.iter().find(|k| k.name == name).ok_or(format!("{name}: not in the manifest"))?;
    let function = kernel.function.as_str();
    let mut specs = specs(kernel);
    let stmt_path = format!("{BENCHMARKS}/stmt/{name}.stmt");
    let module = parse_module(name, &std::fs::read_to_string(&stmt_path).map_err(|e| format!("{stmt_path}: {e}"))?).map_err(|d| format!("{name}: {d}"))?;
    let func = external(&module);
    let stmt_order: Vec<&str> = func.args.iter().map(|a| a.name.as_str()).collect();
    let manifest_order: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    if stmt_order != manifest_order {
        return Err(format!("{name}: the Stmt's arguments {stmt_order:?} are not the manifest's {manifest_order:?}"));
    }
    let buffers: Vec<usize> = (0..specs.len()).filter(|&i| matches!(specs[i].arg, Arg::Buffer { .. })).collect();
    let out_pos = buffers.iter().position(|&i| specs[i].output).ok_or(format!("{name}: no output buffer"))?;
    let out_size = match &specs[buffers[out_pos]].arg {
        Arg::Buffer { elem, .. } => elem_bytes(*elem),
        Arg::Scalar { .. } => unreachable!(),
    };

    let cc = compiler();
    let scalar_dir = PathBuf::from(BENCHMARKS).join("scalar");
    let ours = work_dir(&format!("scalar_{name}"));
    write_harness(&ours, "", &format!("scalar_{function}"), &specs);
    compile(cc, &ours, &[scalar_dir.join(format!("{name}.c"))], &[&format!("-I{}", scalar_dir.display())]).map_err(|e| format!("{name}: {e}"))?;

    let hl_dir = PathBuf::from(BENCHMARKS).join("build").join("halide");
    let mut note = None;
    let mut halide = None;
    if hl_dir.join(format!("{name}.o")).exists() && hl_dir.join("runtime.o").exists() {
        let d = work_dir(&format!("scalar_{name}_halide"));
        write_harness(&d, &format!("#include \"{name}.h\""), function, &specs);
        match compile(cc, &d, &[hl_dir.join(format!("{name}.o")), hl_dir.join("runtime.o")], &[&format!("-I{}", hl_dir.display())]) {
            Ok(()) => halide = Some(d),
            Err(e) => note = Some(format!("{name}: Halide's object did not link, so it was not compared: {}", e.lines().next().unwrap_or(""))),
        }
    }

    let (mut by_interp, mut by_halide) = (0, 0);
    for set_name in sets() {
        let what = format!("{name} ({set_name} inputs)");
        let set = SETS.iter().position(|s| s == set_name).unwrap();
        let mut state = 0x5ca1_ab1e_u64 ^ (set as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ name.bytes().fold(0u64, |h, b| h.wrapping_mul(131).wrapping_add(b as u64));
        for s in specs.iter_mut().filter(|s| !s.output) {
            if let Arg::Buffer { elem, data, .. } = &mut s.arg {
                *data = set_data(set_name, data.len() / elem_bytes(*elem), elem_bytes(*elem), &mut state);
            }
        }
        let args: Vec<Arg> = specs.iter().map(|s| s.arg.clone()).collect();
        let got = exec(&ours, &args).map_err(|e| format!("{what}: scalar C: {e}; kept in {}", ours.display()))?;
        let got = &got[out_pos];
        if let Some(d) = &halide {
            match exec(d, &args) {
                Ok(want) => {
                    if let Some(why) = mismatch(got, &want[out_pos], out_size) {
                        return Err(format!("{what}: differs from Halide's object: {why}; kept in {}", ours.display()));
                    }
                    by_halide += 1;
                }
                Err(e) => {
                    note = Some(format!("{name}: Halide's object did not run here ({e}), so it was not compared; `python3 benchmarks/generate.py --object-target host` builds objects for this CPU"));
                    cleanup(d);
                    halide = None;
                }
            }
        }
        if let Some(ops) = ops.filter(|_| slow() || *set_name == INTERP_DEFAULT_SET) {
            let want = interpret(ops, func, &args).map_err(|e| format!("{what}: interpreter: {e}"))?;
            if let Some(why) = mismatch(got, &want[out_pos].data, out_size) {
                return Err(format!("{what}: differs from the interpreter: {why}; kept in {}", ours.display()));
            }
            by_interp += 1;
        }
    }
    cleanup(&ours);
    if let Some(d) = &halide {
        cleanup(d);
    }
    if by_interp + by_halide == 0 {
        // Without Halide's objects (they are not committed) a kernel outside
        // the interpreter's list only compiles and runs.
        let why = note.take().unwrap_or_else(|| format!("no Halide object in {}", hl_dir.display()));
        return Ok(Outcome { summary: format!("{name}: compiled and ran, not compared: {why}"), note: None });
    }
    Ok(Outcome { summary: format!("{name}: equal on {by_interp} input sets by the interpreter, {by_halide} by Halide's object ({:.1}s)", t.elapsed().as_secs_f64()), note })
}

/// The interpreter on `func` with the harness's arguments.
fn interpret(ops: &SpecLibrary, func: &Func, args: &[Arg]) -> Result<Vec<Buffer>, String> {
    let mut vals = Vec::new();
    for (a, fa) in args.iter().zip(&func.args) {
        vals.push(match (a, &fa.kind) {
            (Arg::Scalar { ty, value }, _) => ArgValue::Scalar(*ty, *value),
            (Arg::Buffer { elem, dims, data }, ArgKind::Buffer { .. }) => {
                let mins: Vec<i64> = dims.iter().map(|d| d.0).collect();
                let extents: Vec<i64> = dims.iter().map(|d| d.1).collect();
                let mut b = Buffer::dense(*elem, &mins, &extents);
                b.data = data.clone();
                ArgValue::Buffer(b)
            }
            (Arg::Buffer { .. }, _) => return Err(format!("`{}` is a buffer in the manifest, a scalar in the Stmt", fa.name)),
        });
    }
    Interp::new(ops).run(func, vals).map_err(|e| e.to_string())
}

#[test]
fn scalar_baselines_match_halide_byte_for_byte() {
    let manifest = load_manifest(format!("{BENCHMARKS}/manifest.json").as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let mut all: Vec<String> = manifest.kernels.iter().map(|k| k.name.clone()).collect();
    all.sort();
    // (kernels checked, those of them also checked by the interpreter)
    // A list in MISAAL_KERNELS is checked both ways; else every kernel
    // against Halide and the chosen ones also against the interpreter.
    let interp = misaal_testkit::kernels(DEFAULT_KERNELS, &all);
    let kernels = if misaal_testkit::kernels_listed() { interp.clone() } else { all.clone() };
    for k in &all {
        assert!(Path::new(BENCHMARKS).join("scalar").join(format!("{k}.c")).is_file(), "benchmarks/scalar/{k}.c is missing");
    }
    halide_include();
    compiler();
    // Interpreted kernels first: they take longest.
    let mut order: Vec<(String, bool)> = interp.iter().map(|k| (k.clone(), true)).collect();
    order.extend(kernels.iter().filter(|k| !interp.contains(k)).map(|k| (k.clone(), false)));
    let t = Instant::now();
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let results = par_map(&order, |(k, i)| check(k, &manifest, i.then_some(&ops)));
    let mut failures = Vec::new();
    for r in results {
        match r {
            Ok(o) => {
                eprintln!("{}", o.summary);
                if let Some(n) = o.note {
                    eprintln!("  note: {n}");
                }
            }
            Err(e) => failures.push(e),
        }
    }
    eprintln!("{} kernels, {} by the interpreter, in {:.1}s", order.len(), interp.len(), t.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{} of {} scalar kernels differ or failed:\n{}", failures.len(), order.len(), failures.join("\n"));
}
