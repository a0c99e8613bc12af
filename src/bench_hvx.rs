//! `misaal bench --target hvx`: each kernel of the HVX suite
//! (`benchmarks/hvx`) built freestanding for Hexagon (clang 19, ld.lld 19,
//! the shared qemu runtime of `misaal-oracle-hvx`), run under
//! `qemu-hexagon -cpu v67` on the x86 bench's seeded input sets, and
//! compared byte for byte with the reference interpreter, our naive build
//! and Halide's own HVX object where it links. Time under qemu means
//! nothing, so speed is a static estimate: the packets (instruction
//! bundles) of the innermost loops in `llvm-objdump-19 -d` of the linked
//! program, for ours and Halide's.

use crate::BenchArgs;
use crate::bench::{WorkLock, exit_status, halide_include, input_data, input_seed, interpret, manifest, manifest_target, public_func, write_atomic};
use misaal_compiler::manifest::ArgSpec;
use misaal_frontends::stmt::ast::ArgKind;
use misaal_oracle_hvx::runtime::{RUNTIME_C, RUNTIME_H};
use misaal_oracle_hvx::{Toolchain, runtime};
use std::fmt::Write as _;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const OBJDUMP: &str = "llvm-objdump-19";
/// One kernel's qemu run (all variants, all input sets) may take this long.
const QEMU_TIMEOUT: Duration = Duration::from_secs(1200);

/// The few libc headers our generated C and HalideRuntime.h include; no
/// Hexagon libc exists here, and the C uses only these declarations.
const SHIM_HEADERS: &[(&str, &str)] = &[
    ("string.h", "#pragma once\n#include <stddef.h>\nvoid *memcpy(void *, const void *, size_t);\nvoid *memset(void *, int, size_t);\n"),
    ("stdlib.h", "#pragma once\n#include <stddef.h>\nvoid *malloc(size_t);\nvoid free(void *);\nvoid abort(void);\n"),
    // The kernels are integer only: no libm function is called.
    ("math.h", "#pragma once\n"),
];

/// What Halide's object and its runtime (`runtime.o`) call that no libc
/// provides here. The heap is a bump allocator reset before every call (a
/// pipeline frees all it allocates before it returns); qurt's HVX lock is
/// a no-op (one thread, HVX always on under qemu); the runtime's debug
/// hooks (`getenv`, `fopen`) see an empty environment.
const HALIDE_SUPPORT_C: &str = r#"
static unsigned char heap[256 << 20] __attribute__((aligned(128)));
static __SIZE_TYPE__ heap_top;
void heap_reset(void) { heap_top = 0; }
void *malloc(__SIZE_TYPE__ n) {
  __SIZE_TYPE__ at = (heap_top + 127) & ~(__SIZE_TYPE__)127;
  if (at + n > sizeof heap) return 0;
  heap_top = at + n;
  return heap + at;
}
void free(void *p) { (void)p; }
void abort(void) { sys(SYS_EXIT, 134, 0, 0); for (;;) {} }
int qurt_hvx_lock(int mode) { (void)mode; return 0; }
int qurt_hvx_unlock(void) { return 0; }
char *getenv(const char *name) { (void)name; return 0; }
int atoi(const char *s) { int v = 0; while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0'); return v; }
void *fopen(const char *p, const char *m) { (void)p; (void)m; return 0; }
void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *d, const void *s, __SIZE_TYPE__ n) { return memcpy(d, s, n); }
void halide_print(void *uc, const char *s) { (void)uc; unsigned long n = 0; while (s[n]) n++; sys(SYS_WRITE, 2, (long)s, (long)n); }
/* Halide's hexagon-32-noos runtime leaves its error hook to the host. */
void halide_error(void *uc, const char *s) { halide_print(uc, s); }
"#;

/// A program on PATH.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(program)).find(|p| p.is_file()))
}

fn c_type(a: &ArgSpec) -> String {
    format!("{}int{}_t", if a.ty.is_int() { "" } else { "u" }, a.ty.bits)
}

fn bytes_of(a: &ArgSpec) -> usize {
    a.elements() * (a.ty.bits as usize).div_ceil(8)
}

/// One variant the harness calls: its label and C function.
struct Variant {
    label: &'static str,
    function: String,
}

/// The harness: reads the number of input sets, then each set's input
/// buffers (manifest order) from stdin; per set, calls every variant and
/// writes its status (i32) and every output buffer to stdout.
fn harness(args: &[ArgSpec], variants: &[Variant]) -> String {
    let mut c = format!("#include <stdint.h>\n#include <stddef.h>\n#include \"HalideRuntime.h\"\n{RUNTIME_H}void *memset(void *, int, __SIZE_TYPE__);\nvoid heap_reset(void);\n");
    let proto: Vec<String> = args.iter().map(|a| if a.buffer { "struct halide_buffer_t *".to_string() } else { c_type(a) }).collect();
    for v in variants {
        let _ = writeln!(c, "int {}({});", v.function, proto.join(", "));
    }
    for (i, a) in args.iter().enumerate().filter(|(_, a)| a.buffer) {
        let _ = writeln!(c, "static uint8_t h{i}[{}] __attribute__((aligned(128)));", bytes_of(a).max(1));
    }
    c.push_str(
        "static void make(struct halide_buffer_t *b, struct halide_dimension_t *d, void *host, int code, int bits, const int *ext, int nd) {\n\
         \x20 memset(b, 0, sizeof *b); int s = 1; for (int i = 0; i < nd; i++) { d[i].min = 0; d[i].extent = ext[i]; d[i].stride = s; d[i].flags = 0; s *= ext[i]; }\n\
         \x20 b->host = (uint8_t *)host; b->type.code = (halide_type_code_t)code; b->type.bits = bits; b->type.lanes = 1; b->dimensions = nd; b->dim = d; }\n\
         void _start(void) {\n  uint32_t sets;\n  if (!read_exact(&sets, 4)) sys(SYS_EXIT, 3, 0, 0);\n",
    );
    let mut call_args = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if !a.buffer {
            let _ = writeln!(c, "  {} s{i} = ({}){}LL;", c_type(a), c_type(a), a.value);
            call_args.push(format!("s{i}"));
            continue;
        }
        let ext: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
        let _ = writeln!(c, "  static const int e{i}[] = {{{}}}; struct halide_dimension_t d{i}[{}]; struct halide_buffer_t b{i};", ext.join(", "), a.dims.len().max(1));
        call_args.push(format!("&b{i}"));
    }
    c.push_str("  for (uint32_t set = 0; set < sets; set++) {\n");
    for (i, a) in args.iter().enumerate().filter(|(_, a)| a.buffer && !a.output) {
        let _ = writeln!(c, "    if (!read_exact(h{i}, {})) sys(SYS_EXIT, 5, 0, 0);", bytes_of(a));
    }
    for v in variants {
        let _ = writeln!(c, "    {{ /* {} */", v.label);
        for (i, a) in args.iter().enumerate().filter(|(_, a)| a.buffer) {
            if a.output {
                let _ = writeln!(c, "      memset(h{i}, 0, {});", bytes_of(a));
            }
            let _ = writeln!(c, "      make(&b{i}, d{i}, h{i}, {}, {}, e{i}, {});", if a.ty.is_int() { 0 } else { 1 }, a.ty.bits, a.dims.len());
        }
        let _ = writeln!(c, "      heap_reset();\n      int32_t r = {}({});\n      write_all(&r, 4);", v.function, call_args.join(", "));
        for (i, a) in args.iter().enumerate().filter(|(_, a)| a.output) {
            let _ = writeln!(c, "      write_all(h{i}, {});", bytes_of(a));
        }
        c.push_str("    }\n");
    }
    c.push_str("  }\n  sys(SYS_EXIT, 0, 0, 0);\n  for (;;) {}\n}\n");
    c
}

/// Runs `exe` under qemu-hexagon with `input` on stdin; its stdout, or why not.
fn run_qemu(qemu: &Path, exe: &Path, input: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut child = Command::new(qemu).args(["-cpu", "v67"]).arg(exe).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("{}: {e}", qemu.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        stdout.read_to_end(&mut v).map(|_| v)
    });
    let mut stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > QEMU_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("qemu-hexagon ran over {} s", QEMU_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = writer.join();
    let out = reader.join().map_err(|_| "reader panicked")?.map_err(|e| e.to_string())?;
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("the harness exited with {status} under qemu-hexagon: {}", err.trim().lines().take(5).collect::<Vec<_>>().join(" | ")));
    }
    Ok(out)
}

/// The static speed estimate of one function set in a linked program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packets {
    /// Innermost loops found (hardware `loopN`/`endloopN` pairs and
    /// backward jumps that contain no other loop).
    pub loops: usize,
    /// Packets summed over those loops.
    pub packets: usize,
}

/// Counts packets in the innermost loops of the functions whose symbol
/// `keep` accepts, from `llvm-objdump -d` text of a linked program. A
/// packet is one `{ ... }` bundle; a loop runs from a `loopN(start, ...)`
/// target to the bundle marked `:endloopN`, or from a backward jump's
/// target to the jump.
pub fn count_packets(disasm: &str, keep: &dyn Fn(&str) -> bool) -> Packets {
    let mut total = Packets::default();
    let mut func: Option<Vec<(u64, String)>> = None;
    let mut flush = |f: Option<Vec<(u64, String)>>| {
        if let Some(b) = f {
            let p = loops_of(&b);
            total.loops += p.loops;
            total.packets += p.packets;
        }
    };
    let mut cur: Option<(u64, String)> = None;
    for line in disasm.lines() {
        // `00001234 <name>:` opens a function.
        if let Some(name) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")).map(|(_, n)| n) {
            flush(func.take());
            cur = None;
            func = keep(name).then(Vec::new);
            continue;
        }
        let Some(bundles) = func.as_mut() else {
            continue;
        };
        let Some((addr, text)) = line.split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let text = text.trim();
        if let Some(rest) = text.strip_prefix('{') {
            cur = Some((addr, rest.to_string()));
        } else if let Some((_, t)) = cur.as_mut() {
            t.push('\n');
            t.push_str(text);
        } else {
            continue;
        }
        if text.contains('}')
            && let Some(b) = cur.take()
        {
            bundles.push(b);
        }
    }
    flush(func.take());
    total
}

/// Whether a bundle in `[start, end)` leaves that range unconditionally
/// (a `jump` elsewhere, a return): then a backward jump from `end` to
/// `start` is block layout (code placed out of order), not a loop.
fn leaves(bundles: &[(u64, String)], start: u64, end: u64) -> bool {
    bundles.iter().filter(|(a, _)| *a >= start && *a < end).any(|(_, text)| {
        text.split(['\n', ';']).map(|i| i.trim().trim_start_matches('{').trim()).any(|i| {
            if i.starts_with("jumpr") || i.starts_with("dealloc_return") || i.starts_with("return") {
                return true;
            }
            let Some(rest) = i.strip_prefix("jump ") else {
                return false;
            };
            u64::from_str_radix(rest.trim().trim_end_matches('}').trim().trim_start_matches("0x"), 16).is_ok_and(|t| t < start || t > end)
        })
    })
}

/// The innermost loops of one function's bundles.
fn loops_of(bundles: &[(u64, String)]) -> Packets {
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    let mut setups: Vec<(u8, u64)> = Vec::new();
    let mut loops: Vec<(u64, u64)> = Vec::new();
    for (addr, text) in bundles {
        for n in [0u8, 1] {
            let tag = format!("loop{n}(");
            for (k, _) in text.match_indices(&tag) {
                if let Some(t) = text[k + tag.len()..].split(',').next().and_then(hex) {
                    setups.push((n, t));
                }
            }
            // `:endloop01` closes both levels in one packet.
            if text.contains(&format!(":endloop{n}")) || text.contains(":endloop01") {
                // The body starts at the latest setup target of this level before the end.
                if let Some(&(_, t)) = setups.iter().filter(|(m, t)| *m == n && *t <= *addr).max_by_key(|(_, t)| *t) {
                    loops.push((t, *addr));
                }
            }
        }
        for (k, _) in text.match_indices("jump") {
            let rest = &text[k + 4..];
            let rest = rest.trim_start_matches(":t").trim_start_matches(":nt").trim_start();
            if let Some(t) = rest.split(|c: char| c.is_whitespace() || c == '}').next().filter(|t| t.starts_with("0x")).and_then(hex)
                && t <= *addr
                && bundles.first().is_some_and(|(f, _)| t >= *f)
                && !leaves(bundles, t, *addr)
            {
                loops.push((t, *addr));
            }
        }
    }
    loops.sort();
    loops.dedup();
    let inner: Vec<&(u64, u64)> = loops.iter().filter(|(s, e)| !loops.iter().any(|(s2, e2)| (s2, e2) != (s, e) && s <= s2 && e2 <= e)).collect();
    if std::env::var_os("MISAAL_HVX_LOOPS").is_some() {
        for (s, e) in &inner {
            eprintln!("innermost loop {s:#x}..={e:#x}: {} packets", bundles.iter().filter(|(a, _)| a >= s && a <= e).count());
        }
    }
    let packets = inner.iter().map(|(s, e)| bundles.iter().filter(|(a, _)| a >= s && a <= e).count()).sum();
    Packets { loops: inner.len(), packets }
}

/// One row of reports/bench_hvx.csv (columns in README's table).
struct Row {
    kernel: String,
    bit_exact: String,
    ours_packets: Option<Packets>,
    halide_packets: Option<Packets>,
    fallback_exprs: Option<u64>,
    compile_ms: f64,
    method: &'static str,
    halide: String,
    target: String,
}

const CSV_HEADER: &str = "kernel,bit_exact,ours_packets,halide_packets,fallback_exprs,compile_ms,method,ours_loops,halide_loops,halide,target";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn csv(rows: &[Row]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    let opt = |v: Option<usize>| v.map(|n| n.to_string()).unwrap_or_default();
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{:.1},{},{},{},{},{}",
            csv_field(&r.kernel),
            csv_field(&r.bit_exact),
            opt(r.ours_packets.map(|p| p.packets)),
            opt(r.halide_packets.map(|p| p.packets)),
            r.fallback_exprs.map(|n| n.to_string()).unwrap_or_default(),
            r.compile_ms,
            r.method,
            opt(r.ours_packets.map(|p| p.loops)),
            opt(r.halide_packets.map(|p| p.loops)),
            csv_field(&r.halide),
            csv_field(&r.target)
        );
    }
    out
}

struct Context<'a> {
    tc: &'a Toolchain,
    objdump: Option<PathBuf>,
    suite: &'a Path,
    work: &'a Path,
    include: &'a Path,
    inputs: usize,
    interp: bool,
    naive: bool,
    /// `--rules` files for our compile (empty: rulesets/hvx.egg).
    rules: &'a [PathBuf],
    target: &'a str,
}

/// Our C for one kernel: (method, C text, fallbacks, compile ms).
fn compile_ours(cx: &Context, stmt: &Path, symbol: &str, out: &Path) -> Result<(&'static str, String, Option<u64>, f64), String> {
    // `misaal compile --target hvx` in a child, as a user runs it, timed whole.
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.arg("compile").arg(stmt).args(["--target", "hvx", "--name", symbol]).arg("-o").arg(out);
    if cx.naive {
        cmd.arg("--naive");
    }
    for r in cx.rules {
        cmd.arg("--rules").arg(r);
    }
    let t = Instant::now();
    let res = cmd.output().map_err(|e| format!("misaal compile: {e}"))?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let err = String::from_utf8_lossy(&res.stderr);
    if !res.status.success() {
        return Err(format!("compile failed: {}", err.trim()));
    }
    // Subterms left to the naive lowering, as the compile counted them.
    let fallbacks = err.lines().find_map(|l| l.strip_prefix("isel: ").and_then(|l| l.split("fallback_exprs ").nth(1)).and_then(|n| n.trim().parse().ok()));
    let c = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok((if cx.naive { "naive" } else { "isel" }, c, fallbacks, ms))
}

/// One input set's disagreements with the interpreter: (ours, Halide's).
type SetVerdict = (Vec<String>, Vec<String>);

fn bench_one(cx: &Context, name: &str, function: &str, args: &[ArgSpec]) -> Result<Row, String> {
    let stmt = cx.suite.join("stmt").join(format!("{name}.stmt"));
    let dir = cx.work.join(name);
    std::fs::create_dir_all(dir.join("include")).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (h, text) in SHIM_HEADERS {
        write_atomic(&dir.join("include").join(h), text)?;
    }
    let (method, ours_c, fallback_exprs, compile_ms) = compile_ours(cx, &stmt, &format!("misaal_{function}"), &dir.join("misaal.c"))?;
    let naive_c = misaal_compiler::c::emit(
        &misaal_frontends::stmt::parse_module(&stmt.display().to_string(), &std::fs::read_to_string(&stmt).map_err(|e| e.to_string())?).map_err(|d| d.to_string())?,
        &format!("misaal_naive_{function}"),
    )
    .map_err(|e| e.to_string())?
    .c;
    let hl_dir = cx.suite.join("build").join("halide");
    let (hl_obj, hl_rt) = (hl_dir.join(format!("{name}.o")), hl_dir.join("runtime.o"));
    let have_halide = hl_obj.is_file() && hl_rt.is_file();
    let mut variants = vec![Variant { label: "ours", function: format!("misaal_{function}") }];
    if method != "naive" {
        variants.push(Variant { label: "naive", function: format!("misaal_naive_{function}") });
    }
    if have_halide {
        variants.push(Variant { label: "halide", function: function.to_string() });
    }
    let mut units = vec![("harness".to_string(), harness(args, &variants)), ("runtime".to_string(), format!("{RUNTIME_H}{RUNTIME_C}{HALIDE_SUPPORT_C}")), ("ours".to_string(), ours_c)];
    if method != "naive" {
        units.push(("naive".to_string(), naive_c));
    }
    for (n, text) in &units {
        write_atomic(&dir.join(format!("{n}.c")), text)?;
    }
    let flags: Vec<String> = ["-O3", "-ffunction-sections", "-fdata-sections"]
        .iter()
        .map(|s| s.to_string())
        .chain(["-I".to_string(), dir.join("include").display().to_string(), "-I".to_string(), cx.include.display().to_string()])
        .collect();
    let objects: Vec<PathBuf> = if have_halide { vec![hl_obj.clone(), hl_rt.clone()] } else { Vec::new() };
    let exe = dir.join("kernel.elf");
    runtime::build(&cx.tc.cc, &cx.tc.ld, &dir, &units, &flags, &objects, &exe)?;

    // Input sets: the x86 bench's, seed for seed.
    let mut sets: Vec<Vec<(String, Vec<u8>)>> = Vec::new();
    let mut input = (cx.inputs as u32).to_le_bytes().to_vec();
    for run in 0..cx.inputs {
        let mut state = input_seed(name, run);
        let mut bufs = Vec::new();
        for a in args.iter().filter(|a| a.buffer && !a.output) {
            let data = input_data(run, a.elements(), (a.ty.bits as usize).div_ceil(8), &mut state);
            input.extend_from_slice(&data);
            bufs.push((a.name.clone(), data));
        }
        sets.push(bufs);
    }
    let out = run_qemu(&cx.tc.qemu, &exe, input)?;
    // Per set, per variant: status, then the outputs in argument order.
    let outputs: Vec<&ArgSpec> = args.iter().filter(|a| a.output).collect();
    let per_variant = 4 + outputs.iter().map(|a| bytes_of(a)).sum::<usize>();
    if out.len() != cx.inputs * variants.len() * per_variant {
        return Err(format!("the harness wrote {} bytes, {} expected", out.len(), cx.inputs * variants.len() * per_variant));
    }
    let mut problems = Vec::new();
    let mut results: Vec<Vec<&[u8]>> = Vec::new(); // [set][variant] -> outputs bytes
    let mut halide_ok = have_halide;
    for set in 0..cx.inputs {
        let mut row = Vec::new();
        for (k, v) in variants.iter().enumerate() {
            let at = (set * variants.len() + k) * per_variant;
            let status = i32::from_le_bytes(out[at..at + 4].try_into().expect("4 bytes"));
            if status != 0 {
                if v.label == "halide" {
                    halide_ok = false;
                }
                problems.push(format!("input {set}: {} returned {status}", v.label));
            }
            row.push(&out[at + 4..at + per_variant]);
        }
        results.push(row);
    }
    let mut halide_verdicts = Vec::new();
    for (set, row) in results.iter().enumerate() {
        for (k, v) in variants.iter().enumerate().skip(1) {
            if row[k] != row[0] {
                if v.label == "halide" {
                    halide_verdicts.push(format!("input {set}: differs from ours"));
                } else {
                    problems.push(format!("input {set}: {} differs from ours", v.label));
                }
            }
        }
    }
    let mut compared = if have_halide { cx.inputs } else { 0 };
    if cx.interp {
        let ops = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
        let module = misaal_frontends::stmt::parse_module(&stmt.display().to_string(), &std::fs::read_to_string(&stmt).map_err(|e| e.to_string())?).map_err(|d| d.to_string())?;
        let func = public_func(&module)?;
        let buffer_args: Vec<&str> = func.args.iter().filter(|a| matches!(a.kind, ArgKind::Buffer { .. })).map(|a| a.name.as_str()).collect();
        use rayon::prelude::*;
        let verdicts: Vec<Result<SetVerdict, String>> = sets
            .par_iter()
            .enumerate()
            .map(|(set, bufs)| {
                let res = interpret(&ops, func, args, bufs)?;
                let mut want = Vec::new();
                for a in &outputs {
                    let k = buffer_args.iter().position(|n| *n == a.name).ok_or(format!("output `{}` is not a buffer of the Stmt", a.name))?;
                    want.extend_from_slice(&res[k].data);
                }
                let (mut ours, mut hl) = (Vec::new(), Vec::new());
                if results[set][0] != want.as_slice() {
                    ours.push(format!("input {set}: differs from the reference interpreter"));
                }
                if let Some(k) = variants.iter().position(|v| v.label == "halide")
                    && results[set][k] != want.as_slice()
                {
                    hl.push(format!("input {set}: Halide's object differs from the reference interpreter"));
                }
                Ok((ours, hl))
            })
            .collect();
        for v in verdicts {
            let (o, h) = v?;
            problems.extend(o);
            halide_verdicts.extend(h);
            compared += 1;
        }
    }
    // Halide's object disagreeing with us is our failure only when the
    // interpreter did not decide it (otherwise the interpreter is the judge).
    if !cx.interp {
        problems.extend(halide_verdicts.iter().cloned());
    }
    let bit_exact = if !problems.is_empty() {
        format!("no: {}", problems.join("; "))
    } else if compared == 0 {
        "unchecked (no Halide object, interpreter skipped)".to_string()
    } else {
        // Halide is named only where its object agreed: a wrong object (the
        // `halide` column says so) was overruled by the interpreter, not matched.
        let halide_agreed = have_halide && halide_ok && halide_verdicts.is_empty();
        format!("yes ({} inputs{}{})", cx.inputs, if halide_agreed { ", Halide" } else { "" }, if cx.interp { ", interpreter" } else { "" })
    };
    let halide = if !have_halide {
        format!("absent: no {} (python3 benchmarks/generate.py --suite benchmarks/hvx --target hexagon-32-noos-hvx-hvx_128)", if hl_obj.is_file() { hl_rt.display() } else { hl_obj.display() })
    } else if !halide_ok || !halide_verdicts.is_empty() {
        format!("linked, wrong: {}", halide_verdicts.join("; "))
    } else {
        format!("linked, agrees{}", if cx.interp { " with the interpreter" } else { " with ours" })
    };
    // The static estimate, from the linked program.
    let (mut ours_packets, mut halide_packets) = (None, None);
    if let Some(objdump) = &cx.objdump {
        let out = Command::new(objdump).args(["-d", "--no-show-raw-insn", "--mcpu=hexagonv67", "--mattr=+hvxv67,+hvx-length128b"]).arg(&exe).output().map_err(|e| format!("{OBJDUMP}: {e}"))?;
        if !out.status.success() {
            return Err(format!("{OBJDUMP} failed on {}", exe.display()));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let ours_sym = format!("misaal_{function}");
        ours_packets = Some(count_packets(&text, &|s| s == ours_sym || s.starts_with(&format!("{ours_sym}."))));
        if have_halide {
            let hl_syms = halide_functions(&hl_obj, objdump, function)?;
            halide_packets = Some(count_packets(&text, &|s| hl_syms.iter().any(|h| h == s)));
        }
    }
    Ok(Row { kernel: name.to_string(), bit_exact, ours_packets, halide_packets, fallback_exprs, compile_ms, method, halide, target: cx.target.to_string() })
}

/// The pipeline's own functions in Halide's object: the function and its
/// closures (`<function>` and names starting with `<function>_`), not the
/// runtime pieces the object carries.
fn halide_functions(obj: &Path, objdump: &Path, function: &str) -> Result<Vec<String>, String> {
    let out = Command::new(objdump).arg("-t").arg(obj).output().map_err(|e| format!("{OBJDUMP}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter(|l| l.contains(" F "))
        .filter_map(|l| l.split_whitespace().last())
        .filter(|s| *s == function || (s.starts_with(&format!("{function}_")) && !s.ends_with("_argv") && !s.ends_with("_metadata")))
        .map(str::to_string)
        .collect())
}

pub fn bench(args: BenchArgs) -> Result<ExitCode, String> {
    // The x86 suite is the default `--suite`; HVX has its own.
    let suite = if args.suite == Path::new("benchmarks") { PathBuf::from("benchmarks/hvx") } else { args.suite.clone() };
    let tc = Toolchain::find().map_err(|e| format!("error: misaal bench --target hvx needs {e}"))?;
    let objdump = which(OBJDUMP);
    if objdump.is_none() {
        eprintln!("note: {OBJDUMP} not found on PATH (apt install llvm-19): no packet estimate");
    }
    let kernels = manifest(&suite)?;
    let target = manifest_target(&suite).unwrap_or_else(|| "unknown".into());
    let include = halide_include().map_err(|e| format!("error: {e}"))?;
    let work = args.work_dir.join("hvx");
    let _lock = WorkLock::take(&work)?;
    let cx = Context { tc: &tc, objdump, suite: &suite, work: &work, include: &include, inputs: args.inputs, interp: !args.no_interp, naive: args.naive, rules: &args.rules, target: &target };
    let mut rows = Vec::new();
    let (mut failed, mut unchecked) = (0, 0);
    for (name, function, specs) in &kernels {
        if args.kernel.as_ref().is_some_and(|k| k != name) {
            continue;
        }
        let t = Instant::now();
        let row = bench_one(&cx, name, function, specs).unwrap_or_else(|e| Row {
            kernel: name.clone(),
            bit_exact: format!("no: {}", e.lines().next().unwrap_or("")),
            ours_packets: None,
            halide_packets: None,
            fallback_exprs: None,
            compile_ms: f64::NAN,
            method: if args.naive { "naive" } else { "isel" },
            halide: String::new(),
            target: target.clone(),
        });
        let p = |p: Option<Packets>| p.map(|p| format!("{:>4} in {:>2}", p.packets, p.loops)).unwrap_or_else(|| "       -".into());
        println!(
            "{:<24} {:<5} compile {:>7.1} ms  packets ours {}  halide {}  fallbacks {:>3}  {:.0} s  {}",
            row.kernel,
            row.method,
            row.compile_ms,
            p(row.ours_packets),
            p(row.halide_packets),
            row.fallback_exprs.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            t.elapsed().as_secs_f64(),
            row.bit_exact
        );
        if row.bit_exact.starts_with("unchecked") {
            unchecked += 1;
        } else if !row.bit_exact.starts_with("yes") {
            failed += 1;
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err("error: no kernel matches".into());
    }
    let exact = rows.iter().filter(|r| r.bit_exact.starts_with("yes")).count();
    println!("{exact} of {} kernels bit-exact under qemu-hexagon", rows.len());
    std::fs::create_dir_all(&args.report_dir).map_err(|e| format!("error: {}: {e}", args.report_dir.display()))?;
    let path = args.report_dir.join("bench_hvx.csv");
    write_atomic(&path, &csv(&rows))?;
    println!("wrote {}", path.display());
    if unchecked > 0 {
        eprintln!("{} {unchecked} of {} kernels unchecked", if args.allow_unchecked { "note:" } else { "error:" }, rows.len());
    }
    Ok(exit_status(failed, unchecked, args.allow_unchecked))
}

#[cfg(test)]
mod tests {
    use super::count_packets;

    #[test]
    fn counts_bundles_of_the_innermost_loops() {
        let d = "\
00001000 <f>:
    1000: { \tr0 = #0 }
    1004: { \tloop1(0x1008,r5) }
    1008: { \tloop0(0x1010,#0xd)
    100c:   \tr1 = #1 }
    1010: { \tv0 = vmem(r2++#1)
    1014:   \tv1 = vadd(v0,v0) }
    1018: { \tvmem(r3++#1) = v1 }  :endloop0
    101c: { \tr4 = add(r4,#1) }  :endloop1
    1020: { \tp0 = cmp.gt(r4,#3)
    1024:   \tif (p0.new) jump:t 0x1020 }
    1028: { \tjumpr r31 }
    102c: { \tr5 = #0 }
    1030: { \tjump 0x1000 }
    1034: { \tp0 = cmp.eq(r5,#0); if (p0.new) jump:nt 0x102c }

00002000 <g>:
    2000: { \tjump 0x2000 }
";
        let p = count_packets(d, &|s| s == "f");
        // loop0 body 0x1010..0x1018 (2 packets) and the jump loop at 0x1020
        // (1); the jump back from 0x1034 passes an unconditional jump out.
        assert_eq!((p.loops, p.packets), (2, 3));
        assert_eq!(count_packets(d, &|s| s == "g").packets, 1);
        assert_eq!(count_packets(d, &|_| false).loops, 0);
    }
}
