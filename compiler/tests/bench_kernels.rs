//! Benchmark kernels end to end against the reference interpreter: each
//! `benchmarks/stmt/<kernel>.stmt` is emitted as C by instruction selection
//! (the default `misaal compile` path), compiled with
//! `cc -O2 -march=native`, run on seeded inputs at its manifest sizes (the
//! Stmt fixes them), and its output compared byte for byte with
//! `misaal_frontends::interp` on the same inputs.
//!
//! CI runs [`CI_KERNELS`], one of each kind; `MISAAL_SLOW=1` or `MISAAL_KERNELS=all` (or
//! a comma-separated list) runs others by hand. `misaal bench` checks all
//! 33 against Halide's objects and the interpreter.
//!
//! Needs `cc` and HalideRuntime.h from the pip `halide` package
//! (`python3 -m pip install halide==21.0.0`).

use crate::common::*;
use misaal_frontends::interp::{ArgValue, Interp};
use misaal_frontends::manifest::{Manifest, load_manifest};
use misaal_frontends::stmt::ast::Func;
use misaal_frontends::stmt::parse_module;
use std::time::Instant;

const BENCHMARKS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks");

/// One kernel of each kind the suite has.
/// Slowest first, so the two threads finish together.
const CI_KERNELS: &[&str] = &[
    "matmul_b1",       // matmul: i16 x i16 -> i32
    "max_pool",        // pool: strided window max, clamp
    "gaussian3x3",     // stencil: widening multiply-adds, rounding shift
    "fully_connected", // NN dot product: i8 x i8 -> i32, requantize with a rounding doubling multiply
    "add",             // elementwise: quantized add, saturate
];

/// The input set: each element is, with probability 0.4, an edge value (0,
/// all ones, signed MIN or signed MAX; so saturating, rounding and
/// overflowing paths run) and otherwise uniform random. `misaal bench`
/// draws the same mix as its third set. One set per kernel keeps this test
/// near a minute: the interpreter takes 10-40 s per kernel here.
const SETS: &[&str] = &["edge mix"];




/// Where two byte strings first differ, for the failure message.
fn differ(ours: &[u8], want: &[u8]) -> Option<String> {
    if ours == want {
        return None;
    }
    if ours.len() != want.len() {
        return Some(format!("{} bytes, the interpreter's {}", ours.len(), want.len()));
    }
    let first = ours.iter().zip(want).position(|(a, b)| a != b).unwrap();
    let n = ours.iter().zip(want).filter(|(a, b)| a != b).count();
    Some(format!("{n} bytes differ, first at byte {first} (ours {:#04x}, interpreter {:#04x})", ours[first], want[first]))
}

/// Runs one kernel on every input set; Ok(summary) or Err(what differs).
fn check(name: &str, manifest: &Manifest, reference: &Reference) -> Result<String, String> {
    let t = Instant::now();
    let path = format!("{BENCHMARKS}/stmt/{name}.stmt");
    let m = parse_module(name, &std::fs::read_to_string(&path).map_err(|e| format!("{name}: {path}: {e}"))?).map_err(|d| format!("{name}: {d}"))?;
    let func = external(&m);
    // The function's arguments in its own order, sized from the manifest.
    let (specs, out_pos) = manifest_args(func, manifest, name).map_err(|e| format!("{name}: {e}"))?;
    let mut dir = None;
    let mut bytes = 0;
    for (set, what) in SETS.iter().enumerate() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (set as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ name_seed(name);
        let (args, vals) = call_args(&specs, 1, &mut state);
        if dir.is_none() {
            match build_with(&format!("bench_{name}"), &m, &args, true) {
                Ok(d) => dir = Some(d),
                Err(RunError::Missing(why)) => {
                    misaal_testkit::skip_part(&format!("{name}: {why}"));
                    return Ok(format!("{name}: skipped ({why})"));
                }
                Err(e) => return Err(format!("{name}: {e}")),
            }
        }
        let d = dir.as_ref().unwrap();
        let ours = exec(d, &args).map_err(|e| format!("{name} ({what} inputs): ours: {e}"))?;
        let want = reference(func, vals).map_err(|e| format!("{name} ({what} inputs): interpreter: {e}"))?;
        let (ours, want) = (&ours[out_pos], &want[out_pos].data);
        if let Some(why) = differ(ours, want) {
            return Err(format!("{name} ({what} inputs): {why}; C kept in {}", d.display()));
        }
        // The comparison itself must notice one wrong byte.
        let mut bad = ours.clone();
        bad[ours.len() / 2] ^= 1;
        assert!(differ(&bad, want).is_some(), "{name}: a corrupted byte went unnoticed");
        bytes = ours.len();
    }
    if let Some(d) = dir {
        cleanup(&d);
    }
    Ok(format!("{name}: {} input sets, {bytes} output bytes each, equal ({:.1}s)", SETS.len(), t.elapsed().as_secs_f64()))
}

#[test]
fn benchmark_kernels_match_the_interpreter_byte_for_byte() {
    let manifest = load_manifest(format!("{BENCHMARKS}/manifest.json").as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let mut all: Vec<String> = manifest.kernels.iter().map(|k| k.name.clone()).collect();
    all.sort();
    let kernels = misaal_testkit::kernels(CI_KERNELS, &all);
    halide_include();
    check_cc();
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let reference = |f: &Func, args: Vec<ArgValue>| Interp::new(&ops).run(f, args);
    let results = par_map(&kernels, |k| check(k, &manifest, &reference));
    let mut failures = Vec::new();
    for r in results {
        match r {
            Ok(s) => eprintln!("{s}"),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{} of {} kernels differ from the reference interpreter:\n{}", failures.len(), kernels.len(), failures.join("\n"));
}
