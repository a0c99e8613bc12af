//! `misaal bench --target arm`: the ARM suite (`benchmarks/arm`) compiled by
//! misaal for AArch64 NEON, cross-built with `aarch64-linux-gnu-gcc -O3`
//! for exactly the features of each Stmt's header, linked in one program
//! with Halide 21's own ARM object (built for `arm_dot_prod`, every feature
//! misaal may use) and run under `qemu-aarch64 -cpu max` on the x86 bench's
//! input sets. Both outputs are compared byte for byte with each other and
//! with the reference interpreter.
//!
//! qemu's run time says nothing about an ARM core, so it is never reported.
//! Speed is a static estimate instead, for ours and Halide's alike: the
//! innermost loops of each object (a backward branch whose range holds no
//! other backward branch, with at least [`MIN_SIMD`] SIMD instructions),
//! each fed to `llvm-mca-19 -mtriple=aarch64 -mcpu=neoverse-n1` for its
//! cycles per iteration, summed over the loops, and the loops' instruction
//! count. Loop trip counts are not weighed in: the two columns compare the
//! same Stmt's loops, they are not times.

use crate::BenchArgs;
use crate::bench::{WorkLock, halide_include, input_data, input_seed, interpret, manifest, manifest_target, output_buffer, public_func, write_atomic};
use misaal_compiler::manifest::ArgSpec;
use misaal_frontends::stmt::types::{Type, TypeCode};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

const CC: &str = "aarch64-linux-gnu-gcc";
const QEMU: &str = "qemu-aarch64";
const MCA: &str = "llvm-mca-19";
const OBJDUMP: &str = "llvm-objdump-19";
/// The core whose scheduling model llvm-mca uses.
pub const MCA_CPU: &str = "neoverse-n1";
/// An innermost loop counts when it holds at least this many SIMD instructions.
pub const MIN_SIMD: usize = 4;
/// The CSV's columns, in order (documented in README's bench_arm table).
pub const COLUMNS: &str = "kernel,bit_exact,ours_mca_cycles,halide_mca_cycles,ratio,ours_loop_instrs,halide_loop_instrs,ours_loops,halide_loops,fallback_exprs,compile_ms,method,target,march";

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(program)).find(|p| p.is_file()))
}

fn run(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        return Err(format!("{what} failed: {}", text.lines().take(6).collect::<Vec<_>>().join(" | ")));
    }
    Ok(out.stdout)
}

/// GCC's `-march` for exactly the spec features a Stmt's target has.
pub fn march(features: &misaal_compiler::isel::features::CpuFeatures) -> String {
    let f = |n: &str| features.features.contains(n);
    let mut m = String::from(if f("rdm") { "armv8.1-a" } else { "armv8-a" });
    for (feat, ext) in [("dotprod", "+dotprod"), ("fp16", "+fp16"), ("i8mm", "+i8mm")] {
        if f(feat) {
            m.push_str(ext);
        }
    }
    if !f("neon") {
        m.push_str("+nosimd");
    }
    m
}

fn c_type(t: Type) -> String {
    format!("{}int{}_t", if t.code == TypeCode::UInt { "u" } else { "" }, t.bits)
}

fn bytes_of(a: &ArgSpec) -> usize {
    a.dims.iter().product::<i64>().max(0) as usize * (a.ty.bits as usize).div_ceil(8)
}

/// A C main that reads each input from `DIR/NAME.bin`, calls ours
/// (`misaal_F`) and Halide's (`F`) on their own output buffers and writes
/// `DIR/out_ours.bin` and `DIR/out_halide.bin`.
fn harness(function: &str, args: &[ArgSpec]) -> String {
    let mut c = String::from("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <stdint.h>\n#include \"HalideRuntime.h\"\n#include \"ours.h\"\n");
    let proto: Vec<String> = args.iter().map(|a| if a.buffer { "struct halide_buffer_t *".to_string() } else { c_type(a.ty) }).collect();
    let _ = writeln!(c, "int {function}({});", proto.join(", "));
    c.push_str(
        "static void *slurp(const char *p, size_t n) { void *b = calloc(1, n ? n : 1); FILE *f = fopen(p, \"rb\"); if (!f || fread(b, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", p); exit(3); } fclose(f); return b; }\n\
         static void spit(const char *p, const void *b, size_t n) { FILE *f = fopen(p, \"wb\"); if (!f || fwrite(b, 1, n, f) != n) { fprintf(stderr, \"cannot write %s\\n\", p); exit(3); } fclose(f); }\n\
         int main(int argc, char **argv) {\n  const char *dir = argc > 1 ? argv[1] : \".\"; char path[4096];\n",
    );
    let mut calls: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    for (i, a) in args.iter().enumerate() {
        if !a.buffer {
            let _ = writeln!(c, "  {} s{i} = ({}){};", c_type(a.ty), c_type(a.ty), a.value);
            calls.iter_mut().for_each(|v| v.push(format!("s{i}")));
            continue;
        }
        let bytes = bytes_of(a);
        let mut dims = Vec::new();
        let mut stride = 1i64;
        for (k, e) in a.dims.iter().enumerate() {
            dims.push(format!("{{{}, {e}, {stride}, 0}}", a.min.get(k).copied().unwrap_or(0)));
            stride *= e;
        }
        if !a.output {
            let _ = writeln!(c, "  snprintf(path, sizeof path, \"%s/{}.bin\", dir); void *h{i} = slurp(path, {bytes});", a.name);
        }
        let code = if a.ty.code == TypeCode::UInt { "halide_type_uint" } else { "halide_type_int" };
        for (k, v) in calls.iter_mut().enumerate() {
            let host = if a.output { format!("calloc(1, {bytes})") } else { format!("h{i}") };
            let _ = writeln!(
                c,
                "  halide_dimension_t d{i}_{k}[{nd}] = {{{dims}}}; halide_buffer_t b{i}_{k}; memset(&b{i}_{k}, 0, sizeof b{i}_{k}); b{i}_{k}.host = (uint8_t *){host}; b{i}_{k}.type.code = {code}; b{i}_{k}.type.bits = {bits}; b{i}_{k}.type.lanes = 1; b{i}_{k}.dimensions = {nd}; b{i}_{k}.dim = d{i}_{k};",
                nd = a.dims.len(),
                dims = dims.join(", "),
                bits = a.ty.bits
            );
            v.push(format!("&b{i}_{k}"));
        }
    }
    for (k, (label, f)) in [("ours", format!("misaal_{function}")), ("halide", function.to_string())].iter().enumerate() {
        let _ = writeln!(c, "  {{ int r = {f}({}); if (r) {{ fprintf(stderr, \"{label} returned %d\\n\", r); return 4 + {k}; }} }}", calls[k].join(", "));
        for (i, a) in args.iter().enumerate().filter(|(_, a)| a.output) {
            let _ = writeln!(c, "  snprintf(path, sizeof path, \"%s/out_{label}.bin\", dir); spit(path, b{i}_{k}.host, {});", bytes_of(a));
        }
    }
    c.push_str("  return 0;\n}\n");
    c
}

/// One instruction of a disassembly: address, mnemonic, operands.
type Ins = (u64, String, String);

fn disasm(objdump: &Path, obj: &Path) -> Result<Vec<Ins>, String> {
    let out = run(Command::new(objdump).args(["-d", "--no-show-raw-insn"]).arg(obj), OBJDUMP)?;
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out).lines() {
        // `     1c: 	add	x0, x1, x2`
        let Some((addr, rest)) = line.trim_start().split_once(':') else { continue };
        let Ok(a) = u64::from_str_radix(addr.trim(), 16) else { continue };
        let rest = rest.trim();
        if rest.is_empty() || rest.starts_with('<') {
            continue;
        }
        let (mn, ops) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        v.push((a, mn.to_string(), ops.trim().to_string()));
    }
    Ok(v)
}

/// The target of a branch, if `mn` is one (`b`, `b.ne`, `cbz`, `tbnz`, ...).
fn branch_target(mn: &str, ops: &str) -> Option<u64> {
    let is_branch = mn == "b" || mn.starts_with("b.") || matches!(mn, "cbz" | "cbnz" | "tbz" | "tbnz");
    if !is_branch {
        return None;
    }
    // The target is the last operand: `0x1c <f+0x1c>` or `1c <f+0x1c>`.
    let last = ops.split(',').next_back()?.split_whitespace().next()?;
    u64::from_str_radix(last.trim_start_matches("0x").trim_start_matches('#'), 16).ok()
}

fn is_simd(ops: &str) -> bool {
    ops.split(|c: char| !c.is_ascii_alphanumeric() && c != '.').any(|w| {
        let w = w.split('.').next().unwrap_or("");
        (w.starts_with('v') || w.starts_with('q')) && w.len() > 1 && w[1..].bytes().all(|b| b.is_ascii_digit())
    })
}

/// The innermost loops with at least [`MIN_SIMD`] SIMD instructions: each
/// a slice of `ins` from the branch target to the backward branch.
fn inner_loops(ins: &[Ins]) -> Vec<&[Ins]> {
    // Each section of an object starts at address 0: the target is looked
    // for backwards from the branch, within its run of rising addresses.
    let start_of = |i: usize, t: u64| -> Option<usize> {
        let mut j = i;
        loop {
            if ins[j].0 == t {
                return Some(j);
            }
            if j == 0 || ins[j - 1].0 >= ins[j].0 || ins[j].0 < t {
                return None;
            }
            j -= 1;
        }
    };
    let spans: Vec<(usize, usize)> = ins
        .iter()
        .enumerate()
        .filter_map(|(i, (a, mn, ops))| branch_target(mn, ops).filter(|t| t <= a).and_then(|t| start_of(i, t)).map(|s| (s, i)))
        .collect();
    spans
        .iter()
        .filter(|s| !spans.iter().any(|o| o != *s && o.0 >= s.0 && o.1 <= s.1))
        .map(|&(s, e)| &ins[s..=e])
        .filter(|body| body.iter().filter(|(_, _, ops)| is_simd(ops)).count() >= MIN_SIMD)
        .collect()
}

/// llvm-mca's cycles per iteration of a loop body (its branch left out).
fn mca_cycles(mca: &Path, body: &[Ins]) -> Result<f64, String> {
    let text: String = body.iter().filter(|(_, mn, ops)| branch_target(mn, ops).is_none() && mn != "nop").map(|(_, mn, ops)| format!("{mn} {}\n", ops.split("//").next().unwrap_or("").split('<').next().unwrap_or("").trim())).collect();
    const ITER: u32 = 100;
    let mut child = Command::new(mca)
        .args(["-mtriple=aarch64", &format!("-mcpu={MCA_CPU}"), &format!("-iterations={ITER}")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{MCA}: {e}"))?;
    {
        use std::io::Write;
        child.stdin.take().expect("piped").write_all(text.as_bytes()).map_err(|e| format!("{MCA}: {e}"))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("{MCA}: {e}"))?;
    let s = String::from_utf8_lossy(&out.stdout);
    let total = s.lines().find_map(|l| l.trim().strip_prefix("Total Cycles:")).and_then(|v| v.trim().parse::<f64>().ok());
    total.map(|t| t / ITER as f64).ok_or_else(|| {
        let err = String::from_utf8_lossy(&out.stderr);
        // `<stdin>:LINE:COL: error: ...`: name the line it could not read.
        let line = err.split(':').nth(1).and_then(|l| l.parse::<usize>().ok()).and_then(|l| text.lines().nth(l.saturating_sub(1))).unwrap_or("");
        format!("{MCA} gave no cycle count: {} (`{line}`)", err.lines().next().unwrap_or(""))
    })
}

/// The static estimate of one object: (mca cycles summed over its inner
/// loops, their instructions, how many loops).
#[derive(Clone, Copy, Debug, Default)]
pub struct Estimate {
    pub cycles: f64,
    pub instrs: usize,
    pub loops: usize,
}

fn estimate(tools: &Tools, obj: &Path) -> Result<Estimate, String> {
    let ins = disasm(&tools.objdump, obj)?;
    let mut e = Estimate::default();
    for body in inner_loops(&ins) {
        e.cycles += mca_cycles(&tools.mca, body)?;
        e.instrs += body.len();
        e.loops += 1;
    }
    Ok(e)
}

struct Tools {
    cc: PathBuf,
    qemu: PathBuf,
    mca: PathBuf,
    objdump: PathBuf,
}

impl Tools {
    fn find() -> Result<Tools, String> {
        let get = |t: &str, pkg: &str| which(t).ok_or_else(|| format!("{t} not found on PATH (scripts/setup.sh installs {pkg})"));
        Ok(Tools { cc: get(CC, "gcc-aarch64-linux-gnu")?, qemu: get(QEMU, "qemu-user")?, mca: get(MCA, "llvm-19")?, objdump: get(OBJDUMP, "llvm-19")? })
    }
}

struct Row {
    kernel: String,
    bit_exact: String,
    ours: Option<Estimate>,
    halide: Option<Estimate>,
    fallback_exprs: Option<usize>,
    compile_ms: f64,
    method: &'static str,
    target: String,
    march: String,
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn csv(rows: &[Row]) -> String {
    let mut s = format!("{COLUMNS}\n");
    let num = |x: Option<f64>| x.filter(|v| v.is_finite()).map(|v| format!("{v:.2}")).unwrap_or_default();
    for r in rows {
        let ratio = match (r.ours, r.halide) {
            (Some(o), Some(h)) if o.cycles > 0.0 => Some(h.cycles / o.cycles),
            _ => None,
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{:.1},{},{},{}",
            csv_field(&r.kernel),
            csv_field(&r.bit_exact),
            num(r.ours.map(|e| e.cycles)),
            num(r.halide.map(|e| e.cycles)),
            ratio.map(|x| format!("{x:.3}")).unwrap_or_default(),
            r.ours.map(|e| e.instrs.to_string()).unwrap_or_default(),
            r.halide.map(|e| e.instrs.to_string()).unwrap_or_default(),
            r.ours.map(|e| e.loops.to_string()).unwrap_or_default(),
            r.halide.map(|e| e.loops.to_string()).unwrap_or_default(),
            r.fallback_exprs.map(|n| n.to_string()).unwrap_or_default(),
            r.compile_ms,
            r.method,
            csv_field(&r.target),
            csv_field(&r.march)
        );
    }
    s
}

struct Context<'a> {
    tools: &'a Tools,
    suite: &'a Path,
    work: &'a Path,
    include: &'a Path,
    inputs: usize,
    interp: bool,
    naive: bool,
}

/// Compiles our C for kernel `name` in process: (fallback_exprs, compile
/// ms, -march for the Stmt's features, the Stmt's target).
fn compile_ours(cx: &Context, name: &str, function: &str, dir: &Path) -> Result<(Option<usize>, f64, String, misaal_frontends::stmt::Module), String> {
    let stmt = cx.suite.join("stmt").join(format!("{name}.stmt"));
    let text = std::fs::read_to_string(&stmt).map_err(|e| format!("{}: {e}", stmt.display()))?;
    let t = Instant::now();
    let module = misaal_frontends::stmt::parse_module(&stmt.display().to_string(), &text).map_err(|d| d.to_string())?;
    let features = misaal_compiler::isel::features::CpuFeatures::from_halide_target(&module.target)?;
    let symbol = format!("misaal_{function}");
    let (prog, fallbacks) = if cx.naive {
        (misaal_compiler::c::emit(&module, &symbol).map_err(|e| e.to_string())?, None)
    } else {
        let isel = misaal_compiler::isel::Options { verdict_cache: Some(crate::VERDICT_CACHE.into()), features: Some(features.clone()), ..Default::default() };
        let (p, r) = misaal_compiler::c::emit_with(&module, &symbol, &misaal_compiler::c::EmitOptions { isel: Some(isel) }).map_err(|e| e.to_string())?;
        (p, r.map(|r| r.fallback_exprs()))
    };
    let ms = t.elapsed().as_secs_f64() * 1e3;
    write_atomic(&dir.join("ours.h"), &prog.h)?;
    write_atomic(&dir.join("ours.c"), &prog.c)?;
    Ok((fallbacks, ms, march(&features), module))
}

fn bench_one(cx: &Context, name: &str, function: &str, args: &[ArgSpec], target: &str) -> Result<Row, String> {
    let dir = cx.work.join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (fallback_exprs, compile_ms, march, module) = compile_ours(cx, name, function, &dir)?;
    let halide_dir = cx.suite.join("build/halide");
    let (hobj, runtime) = (halide_dir.join(format!("{name}.o")), halide_dir.join("runtime.o"));
    if !hobj.is_file() || !runtime.is_file() {
        return Err(format!("no {} or {} (python3 benchmarks/generate.py --suite {} --target {target})", hobj.display(), runtime.display(), cx.suite.display()));
    }
    std::fs::write(dir.join("main.c"), harness(function, args)).map_err(|e| e.to_string())?;
    let inc = |c: &mut Command| {
        c.arg("-I").arg(cx.include).arg("-I").arg(&dir).arg("-I").arg(&halide_dir);
    };
    // Our object alone, for the static estimate; then the program.
    let obj = dir.join("ours.o");
    let mut cc = Command::new(&cx.tools.cc);
    cc.args(["-O3", &format!("-march={march}"), "-c"]).arg(dir.join("ours.c")).arg("-o").arg(&obj);
    inc(&mut cc);
    run(&mut cc, "aarch64-linux-gnu-gcc (ours.c)")?;
    let exe = dir.join("kernel");
    let mut link = Command::new(&cx.tools.cc);
    link.args(["-O2", "-static", &format!("-march={march}")]).arg(dir.join("main.c")).arg(&obj).arg(&hobj).arg(&runtime).arg("-o").arg(&exe).args(["-lpthread", "-ldl", "-lm"]);
    inc(&mut link);
    run(&mut link, "aarch64-linux-gnu-gcc (link)")?;

    let mut problems = Vec::new();
    let mut pending = Vec::new();
    for r in 0..cx.inputs {
        let mut state = input_seed(name, r);
        let mut bufs = Vec::new();
        for a in args.iter().filter(|a| a.buffer && !a.output) {
            let data = input_data(r, a.dims.iter().product::<i64>().max(0) as usize, (a.ty.bits as usize).div_ceil(8), &mut state);
            std::fs::write(dir.join(format!("{}.bin", a.name)), &data).map_err(|e| e.to_string())?;
            bufs.push((a.name.clone(), data));
        }
        run(Command::new(&cx.tools.qemu).args(["-cpu", "max"]).arg(&exe).arg(&dir), QEMU)?;
        let ours = std::fs::read(dir.join("out_ours.bin")).map_err(|e| e.to_string())?;
        let halide = std::fs::read(dir.join("out_halide.bin")).map_err(|e| e.to_string())?;
        if ours != halide {
            let first = ours.iter().zip(&halide).position(|(a, b)| a != b);
            problems.push(format!("input {r}: differs from Halide's object (first byte {first:?} of {})", ours.len()));
        }
        if cx.interp {
            pending.push((r, bufs, ours));
        }
    }
    if cx.interp {
        use rayon::prelude::*;
        let ops = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
        let func = public_func(&module)?;
        let k = output_buffer(func, args)?;
        let verdicts: Vec<Result<Option<String>, String>> = pending
            .par_iter()
            .map(|(r, bufs, ours)| {
                let res = interpret(&ops, func, args, bufs)?;
                Ok((res[k].data != *ours).then(|| format!("input {r}: differs from the reference interpreter")))
            })
            .collect();
        for v in verdicts {
            problems.extend(v?);
        }
    }
    let bit_exact = if problems.is_empty() {
        format!("yes ({} inputs, Halide{})", cx.inputs, if cx.interp { ", interpreter" } else { "" })
    } else {
        format!("no: {}", problems.join("; "))
    };
    let ours = estimate(cx.tools, &obj).map_err(|e| format!("estimate (ours): {e}"))?;
    let halide = estimate(cx.tools, &hobj).map_err(|e| format!("estimate (Halide): {e}"))?;
    Ok(Row {
        kernel: name.into(),
        bit_exact,
        ours: Some(ours),
        halide: Some(halide),
        fallback_exprs,
        compile_ms,
        method: if cx.naive { "naive" } else { "isel" },
        target: module.target.clone(),
        march,
    })
}

pub fn bench(args: BenchArgs) -> Result<ExitCode, String> {
    // The x86 suite is the default `--suite`; ARM has its own.
    let suite = if args.suite == Path::new("benchmarks") { PathBuf::from("benchmarks/arm") } else { args.suite.clone() };
    let tools = Tools::find().map_err(|e| format!("error: misaal bench --target arm needs {e}"))?;
    let kernels = manifest(&suite)?;
    let target = manifest_target(&suite).unwrap_or_else(|| "arm-64-linux-arm_dot_prod".into());
    let include = halide_include().map_err(|e| format!("error: {e}"))?;
    let work = args.work_dir.join("arm");
    let _lock = WorkLock::take(&work)?;
    let cx = Context { tools: &tools, suite: &suite, work: &work, include: &include, inputs: args.inputs, interp: !args.no_interp, naive: args.naive };
    let mut rows = Vec::new();
    let mut failed = 0;
    for (name, function, specs) in &kernels {
        if args.kernel.as_ref().is_some_and(|k| k != name) {
            continue;
        }
        let t = Instant::now();
        let row = bench_one(&cx, name, function, specs, &target).unwrap_or_else(|e| Row {
            kernel: name.clone(),
            bit_exact: format!("no: {}", e.lines().next().unwrap_or("")),
            ours: None,
            halide: None,
            fallback_exprs: None,
            compile_ms: f64::NAN,
            method: if args.naive { "naive" } else { "isel" },
            target: target.clone(),
            march: String::new(),
        });
        let cyc = |e: Option<Estimate>| e.map(|e| format!("{:>7.1} cyc {:>4} ins {:>2} loops", e.cycles, e.instrs, e.loops)).unwrap_or_else(|| "-".into());
        println!(
            "{:<24} {:<5} compile {:>7.1} ms  mca ours {}  halide {}  fallbacks {:>3}  {:.0} s  {}",
            row.kernel,
            row.method,
            row.compile_ms,
            cyc(row.ours),
            cyc(row.halide),
            row.fallback_exprs.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            t.elapsed().as_secs_f64(),
            row.bit_exact
        );
        if !row.bit_exact.starts_with("yes") {
            failed += 1;
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err("error: no kernel matches".into());
    }
    let exact = rows.iter().filter(|r| r.bit_exact.starts_with("yes")).count();
    let ratios: Vec<f64> = rows.iter().filter_map(|r| match (r.ours, r.halide) {
        (Some(o), Some(h)) if o.cycles > 0.0 && h.cycles > 0.0 => Some(h.cycles / o.cycles),
        _ => None,
    }).collect();
    let geomean = if ratios.is_empty() { f64::NAN } else { (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp() };
    let fallbacks: usize = rows.iter().filter_map(|r| r.fallback_exprs).sum();
    println!(
        "{exact} of {} kernels bit-exact under qemu-aarch64; static estimate (llvm-mca -mcpu={MCA_CPU}, inner loops) Halide/ours geomean {geomean:.3} over {} kernels; {fallbacks} fallback expression(s)",
        rows.len(),
        ratios.len()
    );
    std::fs::create_dir_all(&args.report_dir).map_err(|e| format!("error: {}: {e}", args.report_dir.display()))?;
    let path = args.report_dir.join("bench_arm.csv");
    write_atomic(&path, &csv(&rows))?;
    println!("wrote {}", path.display());
    Ok(if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_innermost_vector_loops() {
        let ins = |v: &[(u64, &str, &str)]| v.iter().map(|(a, m, o)| (*a, m.to_string(), o.to_string())).collect::<Vec<Ins>>();
        let code = ins(&[
            (0x0, "mov", "x0, #0"),
            (0x4, "ldr", "q0, [x1]"),
            (0x8, "add", "v0.16b, v0.16b, v1.16b"),
            (0xc, "umax", "v2.16b, v0.16b, v1.16b"),
            (0x10, "str", "q2, [x2]"),
            (0x14, "subs", "x3, x3, #1"),
            (0x18, "b.ne", "0x4 <f+0x4>"),
            (0x1c, "cbnz", "x4, 0x0 <f>"),
        ]);
        let loops = inner_loops(&code);
        assert_eq!(loops.len(), 1, "the outer loop holds the inner one");
        assert_eq!(loops[0].len(), 6);
        assert!(is_simd("v0.16b, v1.16b") && is_simd("q2, [x2]") && !is_simd("x3, x3, #1"));
    }

    #[test]
    fn march_follows_the_features() {
        let f = |t: &str| march(&misaal_compiler::isel::features::CpuFeatures::from_halide_target(t).unwrap());
        assert_eq!(f("arm-64-linux-arm_dot_prod-no_runtime"), "armv8-a+dotprod");
        assert_eq!(f("arm-64-linux"), "armv8-a");
    }
}
