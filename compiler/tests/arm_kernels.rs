//! ARM kernels end to end: `benchmarks/arm/stmt/<kernel>.stmt` compiled by
//! instruction selection into C with `arm_neon.h` intrinsics, cross-built
//! with `aarch64-linux-gnu-gcc -O2` for the Stmt's own features, run under
//! `qemu-aarch64 -cpu max`, and compared byte for byte with the reference
//! interpreter on the same inputs. CI runs [`CI_KERNELS`];
//! `MISAAL_SLOW=1` or `MISAAL_KERNELS=all` (or a list) runs others. `misaal bench --target
//! arm` checks all 33 against Halide's ARM objects too.
//!
//! Also: the code for a dot product holds `vdot` (sdot/udot) exactly when
//! the Stmt's target has `arm_dot_prod`.
//!
//! Without the cross compiler, qemu or Halide's HalideRuntime.h the trials
//! that need them are reported as skipped, naming what is missing.

mod common;

use common::*;
use libtest_mimic::{Arguments, Failed};
use misaal_frontends::interp::Interp;
use misaal_frontends::manifest::{Manifest, load_manifest};
use misaal_frontends::stmt::parse_module;
use std::path::{Path, PathBuf};
use std::process::Command;

const ARM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks/arm");
const CC: &str = "aarch64-linux-gnu-gcc";
const QEMU: &str = "qemu-aarch64";

/// One kernel of several kinds (elementwise with saturation, a strided
/// pool, a widening stencil), fast in the interpreter.
const CI_KERNELS: &[&str] = &["add", "max_pool", "gaussian3x3"];

fn which(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// `Some(what is missing)` when the qemu trials cannot run.
fn missing() -> Option<String> {
    for t in [CC, QEMU] {
        if !which(t) {
            return Some(format!("{t} not found on PATH (scripts/setup.sh installs it)"));
        }
    }
    let out = Command::new("python3").args(["-c", "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'include'))"]).output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (!out.status.success() || !dir.join("HalideRuntime.h").is_file()).then(|| "HalideRuntime.h from the pip halide package (pip install halide==21.0.0)".to_string())
}

/// Selected C for `module` (its own target's features), written to `dir`.
fn emit_arm(dir: &Path, module: &misaal_frontends::stmt::Module) -> Result<misaal_compiler::c::IselReport, String> {
    let opts = misaal_compiler::c::EmitOptions { isel: Some(misaal_compiler::isel::Options::default()) };
    let (p, r) = misaal_compiler::c::emit_with(module, "misaal_fn", &opts).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("prog.c"), &p.c).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("prog.h"), &p.h).map_err(|e| e.to_string())?;
    r.ok_or_else(|| "no selection report".into())
}

fn check_kernel(name: &str, manifest: &Manifest) -> Result<String, String> {
    let path = format!("{ARM}/stmt/{name}.stmt");
    let m = parse_module(&path, &std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?).map_err(|d| d.to_string())?;
    let func = external(&m);
    let (specs, out_pos) = manifest_args(func, manifest, name)?;
    // The edge mix (0, all ones, MIN, MAX among random bytes), as bench's third set.
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ name_seed(name);
    let (args, vals) = call_args(&specs, 2, &mut state);
    let dir = work_dir(&format!("arm_{name}"));
    let report = emit_arm(&dir, &m)?;
    let calls: usize = report.intrinsics.iter().filter(|(n, _)| n.starts_with('v')).map(|(_, c)| c).sum();
    if calls == 0 {
        return Err("no NEON intrinsic was emitted".into());
    }
    std::fs::write(dir.join("harness.c"), harness("misaal_fn", &args)).map_err(|e| e.to_string())?;
    let features = misaal_compiler::isel::features::CpuFeatures::from_halide_target(&m.target)?;
    let march = if features.features.contains("dotprod") { "-march=armv8.2-a+dotprod" } else { "-march=armv8-a" };
    let out = Command::new(CC)
        .current_dir(&dir)
        .arg(format!("-I{}", halide_include().display()))
        .args(["-I.", "-O2", march, "-static", "prog.c", "harness.c", "-o", "prog", "-lm"])
        .output()
        .map_err(|e| format!("{CC}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{CC}: {}", String::from_utf8_lossy(&out.stderr).chars().take(3000).collect::<String>()));
    }
    let mut input_bytes = Vec::new();
    for a in &args {
        if let Arg::Buffer { data, .. } = a {
            input_bytes.extend_from_slice(data);
        }
    }
    std::fs::write(dir.join("input.bin"), &input_bytes).map_err(|e| e.to_string())?;
    let run = Command::new(QEMU).args(["-cpu", "max"]).arg(dir.join("prog")).arg(dir.join("input.bin")).output().map_err(|e| format!("{QEMU}: {e}"))?;
    if !run.status.success() {
        return Err(format!("{QEMU}: {:?} {}", run.status, String::from_utf8_lossy(&run.stderr)));
    }
    // The buffers in argument order; the output is the out_pos-th.
    let mut bufs = Vec::new();
    let mut pos = 0;
    for a in &args {
        if let Arg::Buffer { data, .. } = a {
            bufs.push(run.stdout.get(pos..pos + data.len()).ok_or("short output")?.to_vec());
            pos += data.len();
        }
    }
    let ops = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let want = Interp::new(&ops).run(func, vals).map_err(|e| format!("interpreter: {e}"))?;
    let (ours, want) = (&bufs[out_pos], &want[out_pos].data);
    if ours != want {
        let first = ours.iter().zip(want).position(|(a, b)| a != b);
        return Err(format!("differs from the interpreter (first byte {first:?} of {}); C kept in {}", want.len(), dir.display()));
    }
    cleanup(&dir);
    Ok(format!("{name}: {} output bytes equal under qemu; {calls} NEON calls, {} fallback expression(s)", ours.len(), report.fallback_exprs()))
}

fn arm_kernels_match_the_interpreter() -> Result<(), Failed> {
    let manifest = load_manifest(format!("{ARM}/manifest.json").as_ref()).map_err(|e| e.to_string())?;
    let mut all: Vec<String> = manifest.kernels.iter().map(|k| k.name.clone()).collect();
    all.sort();
    let kernels = misaal_testkit::kernels(CI_KERNELS, &all);
    let results = par_map(&kernels, |k| check_kernel(k, &manifest).map_err(|e| format!("{k}: {e}")));
    let mut bad = Vec::new();
    for r in results {
        match r {
            Ok(s) => eprintln!("{s}"),
            Err(e) => bad.push(e),
        }
    }
    if bad.is_empty() { Ok(()) } else { Err(bad.join("\n").into()) }
}

/// A u8 dot product accumulated into u32 lanes, as Halide writes it.
fn dot_stmt(target: &str) -> String {
    format!(
        "module name=dot, target={target}\nexternal func dot (c, d, acc) {{\n\
         let c = (void *)_halide_buffer_get_host((struct halide_buffer_t *)c.buffer)\n\
         let d = (void *)_halide_buffer_get_host((struct halide_buffer_t *)d.buffer)\n\
         let acc = (void *)_halide_buffer_get_host((struct halide_buffer_t *)acc.buffer)\n\
         for (acc.s0.x, 0, 64) {{\n\
         \x20acc[ramp(acc.s0.x*4, 1, 4)] = (uint32x4)acc[ramp(acc.s0.x*4, 1, 4)] + (uint32x4)vector_reduce_add(uint32x16(widening_mul((uint8x16)c[ramp(acc.s0.x*16, 1, 16)], (uint8x16)d[ramp(acc.s0.x*16, 1, 16)])))\n\
         }}\n}}\n"
    )
}

fn dot_calls(target: &str) -> Result<(usize, String), String> {
    let text = dot_stmt(target);
    let opts = misaal_frontends::stmt::ParseOptions { buffer_types: vec![("c".into(), misaal_frontends::stmt::Type::uint(8)), ("d".into(), misaal_frontends::stmt::Type::uint(8)), ("acc".into(), misaal_frontends::stmt::Type::uint(32))] };
    let m = misaal_frontends::stmt::parse_module_with("dot.stmt", &text, &opts).map_err(|d| d.to_string())?;
    let eo = misaal_compiler::c::EmitOptions { isel: Some(misaal_compiler::isel::Options::default()) };
    let (p, r) = misaal_compiler::c::emit_with(&m, "misaal_fn", &eo).map_err(|e| e.to_string())?;
    let r = r.ok_or("no report")?;
    let dots = r.intrinsics.iter().filter(|(n, _)| n.starts_with("vdot")).map(|(_, c)| c).sum();
    Ok((dots, p.c))
}

/// vdot needs FEAT_DotProd: emitted for `arm_dot_prod`, never without it.
fn dot_product_only_with_arm_dot_prod() -> Result<(), Failed> {
    let (with, c) = dot_calls("arm-64-linux-arm_dot_prod-no_runtime")?;
    if with == 0 || !c.contains("vdotq_u32") {
        return Err(format!("no vdot for arm_dot_prod:\n{}", c.lines().filter(|l| l.contains("= v")).take(20).collect::<Vec<_>>().join("\n")).into());
    }
    let (without, c) = dot_calls("arm-64-linux-no_runtime")?;
    if without != 0 || c.contains("vdot") {
        return Err("vdot emitted for a target without arm_dot_prod".into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let missing = missing();
    let qemu = |name: &str, f: fn() -> Result<(), Failed>| misaal_testkit::trial_unless_missing(name, missing.as_deref(), f);
    // The dot-product trial needs arm_neon.h's prototypes (the cross compiler).
    let trials = vec![qemu("arm_kernels_match_the_interpreter_under_qemu", arm_kernels_match_the_interpreter), qemu("arm_dot_product_only_with_arm_dot_prod", dot_product_only_with_arm_dot_prod)];
    libtest_mimic::run(&args, trials).exit();
}
