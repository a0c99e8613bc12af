//! The HVX benchmark suite (`benchmarks/hvx/`): the 33 kernels' Stmt as
//! Halide 21 lowers them for `hexagon-32-noos-hvx-hvx_128`, with schedules
//! for 128-byte vectors. Every Stmt must parse with our front end, and the
//! reference interpreter must run it and give the same output as the x86
//! suite's Stmt of the same generator on the same inputs (both compute one
//! function; only the schedule's vector width and the target differ).
//!
//! The interpreter takes seconds to tens of seconds a kernel, so by default
//! a few kernels run; `MISAAL_SLOW=1` (or `MISAAL_KERNELS=all`)
//! runs all 33, `MISAAL_KERNELS=add,mul` a list.

use misaal_frontends::manifest::{Manifest, load_manifest};
use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::ast::{ArgKind, Linkage};
use misaal_frontends::stmt::parse_module;
use std::path::{Path, PathBuf};

const TARGET: &str = "hexagon-32-noos-hvx-hvx_128-no_runtime";
/// The smallest kernels of two kinds (a matrix-vector product; an
/// elementwise image op). The convolution layer over 64 channels (which
/// HVX vectorizes by half a register), the interpreter's slowest, runs
/// with `MISAAL_SLOW=1`, like every other kernel.
const DEFAULT_KERNELS: &[&str] = &["fully_connected", "add"];

fn repo() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).to_path_buf()
}

fn manifest(suite: &str) -> Manifest {
    load_manifest(&repo().join(suite).join("manifest.json")).unwrap_or_else(|e| panic!("{suite}/manifest.json: {e}"))
}

#[test]
fn hvx_suite_has_33_kernels_for_hvx_128() {
    let m = manifest("benchmarks/hvx");
    let x86 = manifest("benchmarks");
    assert_eq!(m.target.as_deref(), Some(TARGET));
    let names: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
    let x86_names: Vec<&str> = x86.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, x86_names, "the same kernels as the x86 suite, in its order");
    assert_eq!(names.len(), 33);
    for n in names {
        let text = std::fs::read_to_string(repo().join("benchmarks/hvx/stmt").join(format!("{n}.stmt"))).unwrap_or_else(|e| panic!("{n}: {e}"));
        assert!(text.contains(TARGET) || text.contains("x128"), "{n}.stmt is not lowered for 128-byte HVX vectors");
    }
}

#[test]
fn every_hvx_stmt_parses() {
    let mut bad = Vec::new();
    let mut wide = 0;
    for k in &manifest("benchmarks/hvx").kernels {
        let path = repo().join("benchmarks/hvx/stmt").join(format!("{}.stmt", k.name));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match parse_module(&path.display().to_string(), &text) {
            Ok(m) if m.funcs.iter().any(|f| f.linkage != Linkage::Internal) => {}
            Ok(_) => bad.push(format!("{}: no public function", k.name)),
            Err(d) => bad.push(d.to_string()),
        }
        // The schedules use 1024-bit vectors: 128 lanes of 8 bits (a
        // broadcast or a dense ramp) in the image and elementwise kernels;
        // the 64-channel NN kernels use half a register and the matmuls 32
        // lanes of int32. No x86 Stmt has a 128-lane vector.
        wide += usize::from(holds_128_lanes(&text));
        let x86 = std::fs::read_to_string(repo().join("benchmarks/stmt").join(format!("{}.stmt", k.name))).unwrap_or_default();
        assert!(!holds_128_lanes(&x86), "{}: the x86 Stmt holds a 128-lane vector", k.name);
    }
    assert!(bad.is_empty(), "{} Stmt do not parse:\n{}", bad.len(), bad.join("\n"));
    assert!(wide >= 18, "only {wide} Stmt hold 128-lane vectors");
}

fn holds_128_lanes(stmt: &str) -> bool {
    stmt.contains("x128") || stmt.contains(", 1, 128)")
}

/// Deterministic input bytes (xorshift64), a different stream per buffer.
fn input_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Runs `suite`'s Stmt of kernel `name` in the interpreter on the
/// deterministic inputs; the output buffer's bytes.
fn interpret(suite: &str, name: &str, ops: &misaal_isa::SpecLibrary) -> Result<Vec<u8>, String> {
    let m = manifest(suite);
    let kernel = m.kernels.iter().find(|k| k.name == name).ok_or(format!("{name} is not in {suite}/manifest.json"))?;
    let path = repo().join(suite).join("stmt").join(format!("{name}.stmt"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let module = parse_module(&path.display().to_string(), &text).map_err(|d| d.to_string())?;
    let func = module.funcs.iter().find(|f| f.linkage != Linkage::Internal).ok_or("no public function in the Stmt")?;
    let mut vals = Vec::new();
    let mut out_index = None;
    for fa in &func.args {
        let (k, spec) = kernel.args.iter().enumerate().find(|(_, a)| a.name == fa.name).ok_or(format!("manifest lacks argument `{}`", fa.name))?;
        match fa.kind {
            ArgKind::Scalar { .. } => vals.push(ArgValue::Scalar(spec.ty, spec.value)),
            _ => {
                let mins: Vec<i64> = (0..spec.dims.len()).map(|d| spec.min.get(d).copied().unwrap_or(0)).collect();
                let mut b = Buffer::dense(spec.ty, &mins, &spec.dims);
                if spec.output {
                    out_index = Some(vals.iter().filter(|v| matches!(v, ArgValue::Buffer(_))).count());
                } else {
                    b.data = input_bytes(spec.elements() * (spec.ty.bits as usize).div_ceil(8), 0x9e37_79b9_7f4a_7c15 ^ (k as u64 + 1));
                }
                vals.push(ArgValue::Buffer(b));
            }
        }
    }
    let res = Interp::new(ops).run(func, vals).map_err(|e| format!("interpreter: {e}"))?;
    Ok(res[out_index.ok_or("no output buffer")?].data.clone())
}

#[test]
fn hvx_stmt_runs_in_the_interpreter_like_the_x86_stmt() {
    let all: Vec<String> = manifest("benchmarks/hvx").kernels.iter().map(|k| k.name.clone()).collect();
    let kernels = misaal_testkit::kernels(DEFAULT_KERNELS, &all);
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    // One kernel at a time on each core.
    let results = misaal_testkit::on_every_core(&kernels, |name| {
        let t = std::time::Instant::now();
        let r = interpret("benchmarks/hvx", name, &ops).and_then(|hvx| {
            let x86 = interpret("benchmarks", name, &ops).map_err(|e| format!("x86 Stmt: {e}"))?;
            if hvx != x86 {
                let first = hvx.iter().zip(&x86).position(|(a, b)| a != b);
                return Err(format!("differs from the x86 Stmt's output (first differing byte {first:?} of {})", x86.len()));
            }
            Ok(hvx.len())
        });
        let line = match r {
            Ok(n) => format!("ok   {name}: {n} output bytes equal to the x86 Stmt's ({:.1} s)", t.elapsed().as_secs_f64()),
            Err(e) => format!("FAIL {name}: {e}"),
        };
        eprintln!("{line}");
        line
    });
    let failed: Vec<&String> = results.iter().filter(|l| l.starts_with("FAIL")).collect();
    assert!(failed.is_empty(), "{} of {} kernels fail:\n{}", failed.len(), results.len(), failed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
}
