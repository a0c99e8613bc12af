//! Halide 19's Stmt of benchmark kernels end to end: each
//! `benchmarks/halide19/stmt/<kernel>.stmt` is emitted as C, compiled with
//! `cc -O2 -march=native` and run on seeded inputs at its manifest sizes;
//! its output must equal, byte for byte, the reference interpreter's on the
//! same Stmt, and our C's from Halide 21's Stmt of the same kernel
//! (`benchmarks/stmt/`): both releases compile one generator.
//!
//! CI runs [`CI_KERNELS`] on one random input set (the interpreter takes
//! ~15 s a kernel in a debug build): between them they hold what Halide 19
//! prints differently (parenthesized casts) and every generate.py stand-in
//! for an intrinsic Halide 19's Python lacks. `MISAAL_SLOW=1` or `MISAAL_KERNELS=all` (or a
//! comma-separated list) runs others, on a random and an edge-value set;
//! `misaal bench --suite benchmarks/halide19` checks all 33 against Halide
//! 19's own objects and the interpreter.
//!
//! Needs `cc` and HalideRuntime.h from the pip `halide` package.

use crate::common::*;
use misaal_frontends::interp::{ArgValue, Interp};
use misaal_frontends::manifest::{Manifest, load_manifest};
use misaal_frontends::stmt::ast::{Func, Module};
use misaal_frontends::stmt::parse_module;
use std::time::Instant;

const BENCHMARKS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks");

const CI_KERNELS: &[&str] = &[
    "blur3x3",         // a cast of a quotient printed `uint8x64((... / ...))`
    "fully_connected", // widening_mul, rounding_mul_shift_right, rounding_shift_right and saturating_add stand-ins
];




fn load(path: &str) -> Result<Module, String> {
    parse_module(path, &std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?).map_err(|d| d.to_string())
}

fn manifest(suite: &str) -> Manifest {
    load_manifest(format!("{suite}/manifest.json").as_ref()).unwrap_or_else(|e| panic!("{e}"))
}

fn check(name: &str, manifest: &Manifest, reference: &Reference, sets: usize) -> Result<String, String> {
    let t = Instant::now();
    let m19 = load(&format!("{BENCHMARKS}/halide19/stmt/{name}.stmt"))?;
    let m21 = load(&format!("{BENCHMARKS}/stmt/{name}.stmt"))?;
    let func = external(&m19);
    let (specs, out_pos) = manifest_args(func, manifest, name).map_err(|e| format!("{name}: {e}"))?;
    let names21: Vec<&str> = external(&m21).args.iter().map(|a| a.name.as_str()).collect();
    let names19: Vec<&str> = func.args.iter().map(|a| a.name.as_str()).collect();
    if names21 != names19 {
        return Err(format!("{name}: arguments {names19:?} in Halide 19's Stmt, {names21:?} in Halide 21's"));
    }
    let (mut dir19, mut dir21) = (None, None);
    for set in 0..sets {
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (set as u64 + 1) ^ name_seed(name);
        let (args, vals) = call_args(&specs, set, &mut state);
        let d19 = match &dir19 {
            Some(d) => d,
            None => dir19.insert(build(&format!("h19_{name}"), &m19, &args).map_err(|e| format!("{name}: Halide 19's Stmt: {e}"))?),
        };
        let d21 = match &dir21 {
            Some(d) => d,
            None => dir21.insert(build(&format!("h21_{name}"), &m21, &args).map_err(|e| format!("{name}: Halide 21's Stmt: {e}"))?),
        };
        let ours19 = exec(d19, &args).map_err(|e| format!("{name}: {e}"))?;
        let ours21 = exec(d21, &args).map_err(|e| format!("{name}: {e}"))?;
        let want = reference(func, vals).map_err(|e| format!("{name}: interpreter: {e}"))?;
        let (ours19, ours21, want) = (&ours19[out_pos], &ours21[out_pos], &want[out_pos].data);
        if ours19 != want {
            let n = ours19.iter().zip(want).filter(|(a, b)| a != b).count();
            return Err(format!("{name} (input set {set}): {n} bytes differ from the interpreter"));
        }
        if ours19 != ours21 {
            let n = ours19.iter().zip(ours21).filter(|(a, b)| a != b).count();
            return Err(format!("{name} (input set {set}): {n} bytes differ between Halide 19's and Halide 21's Stmt"));
        }
        if want.iter().all(|&b| b == want[0]) && set == 0 {
            return Err(format!("{name}: a constant output on random inputs compares nothing"));
        }
    }
    for d in [dir19, dir21].into_iter().flatten() {
        cleanup(&d);
    }
    Ok(format!("{name}: {sets} input set(s) equal ({:.1}s)", t.elapsed().as_secs_f64()))
}

#[test]
fn halide19_kernels_match_the_interpreter_and_halide21() {
    let m19 = manifest(&format!("{BENCHMARKS}/halide19"));
    assert_eq!(m19.halide.as_deref(), Some("19.0.0"), "benchmarks/halide19/manifest.json should come from Halide 19");
    let mut all: Vec<String> = m19.kernels.iter().map(|k| k.name.clone()).collect();
    all.sort();
    assert_eq!(all.len(), 33);
    let kernels = misaal_testkit::kernels(CI_KERNELS, &all);
    // Two input sets when the kernels were opted in, one for CI's.
    let sets = if misaal_testkit::kernels_listed() || misaal_testkit::slow() { 2 } else { 1 };
    halide_include();
    check_cc();
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let reference = |f: &Func, args: Vec<ArgValue>| Interp::new(&ops).run(f, args);
    let results = par_map(&kernels, |k| check(k, &m19, &reference, sets));
    let failures: Vec<String> = results
        .into_iter()
        .filter_map(|r| match r {
            Ok(s) => {
                eprintln!("{s}");
                None
            }
            Err(e) => Some(e),
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} kernels:\n{}", failures.len(), kernels.len(), failures.join("\n"));
}
