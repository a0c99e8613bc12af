//! Halide 21's own ARM objects (`benchmarks/arm`), linked with the AArch64
//! cross toolchain and run under qemu-aarch64, against the reference
//! interpreter on the committed ARM Stmt: both sides compute the same
//! kernel, so their outputs must agree byte for byte.
//!
//! The objects are not committed (build/ is ignored): they are generated
//! into a temporary suite by `benchmarks/generate.py --target`, which also
//! rewrites each kernel's Stmt; that Stmt must equal the committed one, so
//! the interpreter runs exactly what Halide compiled.

use misaal_frontends::manifest::{ArgSpec, load_manifest};
use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::ast::{ArgKind, Linkage};
use misaal_frontends::stmt::types::{Type, TypeCode};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const TARGET: &str = "arm-64-linux-arm_dot_prod";

/// The suite, as `benchmarks/generate.py --list` prints it.
pub const ALL_KERNELS: &[&str] = &[
    "sobel3x3", "sobel5x5", "dilate3x3", "dilate5x5", "dilate7x7", "blur3x3", "blur5x5", "blur7x7", "median3x3", "gaussian3x3", "gaussian5x5", "gaussian7x7", "l2norm",
    "conv_nn", "conv3x3a16", "depthwise_conv", "average_pool", "max_pool", "fully_connected", "add", "mul", "softmax", "matmul_b1", "matmul_b2", "matmul_b4",
    "average_pool_add", "max_pool_add", "matmul_bias", "matmul_bias_relu", "matmul_bias_gelu", "matmul_bias_add", "matmul_bias_relu_matmul", "matmul_bias_gelu_matmul",
];
const CC: &str = "aarch64-linux-gnu-gcc";
const QEMU: &str = "qemu-aarch64";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `Some(what is missing)` when the check cannot run here.
pub fn missing() -> Option<String> {
    for t in [CC, QEMU] {
        if misaal_bench::which(t).is_none() {
            return Some(format!("{t} not found on PATH (scripts/setup.sh installs it)"));
        }
    }
    halide_include().err()
}

/// Where pip's Halide keeps HalideRuntime.h, as the bench finds it, and
/// that the header is there.
fn halide_include() -> Result<PathBuf, String> {
    let dir = misaal_bench::halide_include()?;
    if dir.join("HalideRuntime.h").is_file() { Ok(dir) } else { Err(format!("no HalideRuntime.h in {}", dir.display())) }
}

fn run(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{what} failed: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(out.stdout)
}

fn c_type(t: Type) -> String {
    format!("{}int{}_t", if t.code == TypeCode::UInt { "u" } else { "" }, t.bits)
}

/// `n` deterministic uniform input bytes, a different stream per seed:
/// the bench's generator, as its first (uniform) input set draws them.
fn input_bytes(n: usize, mut seed: u64) -> Vec<u8> {
    misaal_bench::inputs::input_data(0, n, 1, &mut seed)
}

/// A C main that reads each input buffer from `NAME.bin`, calls the kernel
/// with the manifest's scalars, and writes the output to `out.bin`.
fn harness_c(function: &str, args: &[ArgSpec]) -> String {
    let mut s = format!("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"HalideRuntime.h\"\n#include \"{function}.h\"\n\n");
    s += "static void *slurp(const char *path, size_t n) {\n    void *p = calloc(n ? n : 1, 1);\n    FILE *f = fopen(path, \"rb\");\n    if (f) { if (fread(p, 1, n, f) != n) { fprintf(stderr, \"short read %s\\n\", path); exit(2); } fclose(f); }\n    return p;\n}\n\nint main(void) {\n";
    let mut call = Vec::new();
    for a in args {
        if !a.buffer {
            call.push(format!("({}){}", c_type(a.ty), a.value));
            continue;
        }
        let n = &a.name;
        let bytes = misaal_bench::bytes_of(a);
        let mut dims = Vec::new();
        let mut stride = 1i64;
        for (k, e) in a.dims.iter().enumerate() {
            dims.push(format!("{{{}, {e}, {stride}, 0}}", a.min.get(k).copied().unwrap_or(0)));
            stride *= e;
        }
        let code = if a.ty.code == TypeCode::UInt { "halide_type_uint" } else { "halide_type_int" };
        s += &format!(
            "    halide_dimension_t d_{n}[{}] = {{{}}};\n    halide_buffer_t b_{n};\n    memset(&b_{n}, 0, sizeof b_{n});\n    b_{n}.host = slurp(\"{n}.bin\", {bytes});\n    b_{n}.type.code = {code};\n    b_{n}.type.bits = {};\n    b_{n}.type.lanes = 1;\n    b_{n}.dimensions = {};\n    b_{n}.dim = d_{n};\n",
            a.dims.len(),
            dims.join(", "),
            a.ty.bits,
            a.dims.len()
        );
        call.push(format!("&b_{n}"));
    }
    let out = args.iter().find(|a| a.output).expect("an output");
    let out_bytes = misaal_bench::bytes_of(out);
    s += &format!(
        "    int r = {function}({});\n    if (r != 0) {{ fprintf(stderr, \"{function} returned %d\\n\", r); return 1; }}\n    FILE *f = fopen(\"out.bin\", \"wb\");\n    if (!f || fwrite(b_{}.host, 1, {out_bytes}, f) != {out_bytes}) return 3;\n    fclose(f);\n    return 0;\n}}\n",
        call.join(", "),
        out.name
    );
    s
}

/// Generates, builds and runs `kernels` under qemu, and compares each with
/// the interpreter; `Err` lists every kernel that differs or fails.
pub fn check(kernels: &[&str]) -> Result<String, String> {
    let include = halide_include()?;
    let tmp = std::env::temp_dir().join(format!("misaal-arm-halide-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let suite = tmp.join("suite");
    let mut generate = Command::new("python3");
    generate.arg(repo().join("benchmarks/generate.py")).arg("--suite").arg(&suite).arg("--target").arg(TARGET).args(kernels);
    run(&mut generate, "benchmarks/generate.py")?;
    let manifest = load_manifest(&repo().join("benchmarks/arm/manifest.json")).map_err(|e| e.to_string())?;
    let ops = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let build = suite.join("build/halide");
    // The interpreter takes tens of seconds a kernel: one worker a core,
    // each taking the next kernel.
    let mut results = misaal_testkit::on_every_core(kernels, |&name| (name, check_one(name, &manifest, &ops, &suite, &build, &include, &tmp.join(name))));
    results.sort_by_key(|(n, _)| kernels.iter().position(|k| k == n));
    let (mut report, mut bad) = (Vec::new(), Vec::new());
    for (name, r) in results {
        match r {
            Ok(line) => report.push(line),
            Err(e) => bad.push(format!("{name}: {e}")),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if bad.is_empty() { Ok(report.join("\n")) } else { Err(bad.join("\n")) }
}

fn check_one(
    name: &str,
    manifest: &misaal_frontends::manifest::Manifest,
    ops: &misaal_isa::SpecLibrary,
    suite: &Path,
    build: &Path,
    include: &Path,
    dir: &Path,
) -> Result<String, String> {
    let committed_path = repo().join("benchmarks/arm/stmt").join(format!("{name}.stmt"));
    let committed = std::fs::read_to_string(&committed_path).map_err(|e| format!("{}: {e}", committed_path.display()))?;
    let fresh = std::fs::read_to_string(suite.join("stmt").join(format!("{name}.stmt"))).map_err(|e| e.to_string())?;
    if fresh != committed {
        return Err(format!("{} is stale: Halide now lowers it differently (rerun benchmarks/generate.py --suite benchmarks/arm --target {TARGET})", committed_path.display()));
    }
    let kernel = manifest.kernels.iter().find(|k| k.name == name).ok_or("not in benchmarks/arm/manifest.json")?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    // Inputs, written for the harness and kept for the interpreter.
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for (k, a) in kernel.args.iter().enumerate().filter(|(_, a)| a.buffer && !a.output) {
        let data = input_bytes(misaal_bench::bytes_of(a), 0x9e37_79b9_7f4a_7c15 ^ (k as u64 + 1));
        std::fs::write(dir.join(format!("{}.bin", a.name)), &data).map_err(|e| e.to_string())?;
        inputs.push((a.name.clone(), data));
    }
    std::fs::write(dir.join("main.c"), harness_c(&kernel.function, &kernel.args)).map_err(|e| e.to_string())?;
    let exe = dir.join("kernel");
    run(
        Command::new(CC)
            .arg("-O1")
            .arg("-static")
            .arg("-I")
            .arg(include)
            .arg("-I")
            .arg(build)
            .arg(dir.join("main.c"))
            .arg(build.join(format!("{name}.o")))
            .arg(build.join("runtime.o"))
            .arg("-o")
            .arg(&exe)
            .args(["-lpthread", "-ldl", "-lm"]),
        CC,
    )?;
    let t = std::time::Instant::now();
    run(Command::new(QEMU).args(["-cpu", "max"]).arg(&exe).current_dir(dir), QEMU)?;
    let t_qemu = t.elapsed();
    let got = std::fs::read(dir.join("out.bin")).map_err(|e| e.to_string())?;
    // The same program on other input bytes must give other output, or the
    // comparison below could pass with a harness that ignores its inputs.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).map_err(|e| e.to_string())?;
    for (n, d) in &inputs {
        std::fs::write(other.join(format!("{n}.bin")), input_bytes(d.len(), 0x2545_f491_4f6c_dd1d ^ d.len() as u64)).map_err(|e| e.to_string())?;
    }
    run(Command::new(QEMU).args(["-cpu", "max"]).arg(&exe).current_dir(&other), QEMU)?;
    let got_other = std::fs::read(other.join("out.bin")).map_err(|e| e.to_string())?;
    // The interpreter on the committed Stmt, with the same inputs.
    let module = misaal_frontends::stmt::parse_module(&committed_path.display().to_string(), &committed).map_err(|d| d.to_string())?;
    let func = module.funcs.iter().find(|f| f.linkage != Linkage::Internal).ok_or("no public function in the Stmt")?;
    let mut vals = Vec::new();
    let mut out_index = None;
    for fa in &func.args {
        let spec = kernel.args.iter().find(|a| a.name == fa.name).ok_or(format!("manifest lacks argument `{}`", fa.name))?;
        match fa.kind {
            ArgKind::Scalar { .. } => vals.push(ArgValue::Scalar(spec.ty, spec.value)),
            _ => {
                let mins: Vec<i64> = (0..spec.dims.len()).map(|k| spec.min.get(k).copied().unwrap_or(0)).collect();
                let mut b = Buffer::dense(spec.ty, &mins, &spec.dims);
                if let Some((_, d)) = inputs.iter().find(|(n, _)| *n == spec.name) {
                    b.data = d.clone();
                }
                if spec.output {
                    out_index = Some(vals.iter().filter(|v| matches!(v, ArgValue::Buffer(_))).count());
                }
                vals.push(ArgValue::Buffer(b));
            }
        }
    }
    let t = std::time::Instant::now();
    let res = Interp::new(ops).run(func, vals).map_err(|e| format!("interpreter: {e}"))?;
    let want = &res[out_index.ok_or("no output buffer")?].data;
    if *want == got_other {
        return Err("the output does not depend on the input bytes: the harness cannot tell a wrong kernel".into());
    }
    if *want != got {
        let first = want.iter().zip(&got).position(|(a, b)| a != b);
        return Err(format!("Halide's ARM object under qemu differs from the interpreter (first differing byte {first:?} of {})", want.len()));
    }
    Ok(format!("{name}: {} output bytes equal (qemu {:.1} s, interpreter {:.1} s)", got.len(), t_qemu.as_secs_f64(), t.elapsed().as_secs_f64()))
}
