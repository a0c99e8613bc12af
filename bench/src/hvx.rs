//! The HVX backend (`misaal bench --target hvx`): each kernel of the HVX
//! suite (`benchmarks/hvx`) built freestanding for Hexagon (clang 19,
//! ld.lld 19, the shared qemu runtime of `misaal-oracle-hvx`), run under
//! `qemu-hexagon -cpu v67` on the shared input sets, and compared byte for
//! byte with the reference interpreter, our naive build and Halide's own
//! HVX object where it links. Time under qemu means nothing, so speed is
//! a static estimate ([`crate::packets`]).

use crate::check::{Outcome, Verdict, interpret_all, outcome};
use crate::compile::{Job, compile};
use crate::inputs::{InputSet, input_set};
use crate::keep::{halide_files, keep_and_note};
use crate::run::{EstimateRow, KernelRow, Run};
use crate::lock::WorkLock;
use crate::packets::{Packets, count_packets, halide_functions};
use crate::{Config, Kernel, Suite, bytes_of, c_type, exit_status, halide_include, halide_type_code, which, write_atomic};
use misaal_frontends::manifest::ArgSpec;
use misaal_oracle_hvx::runtime::{RUNTIME_C, RUNTIME_H};
use misaal_oracle_hvx::{Toolchain, runtime};
use std::fmt::Write as _;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const OBJDUMP: &str = crate::mca::OBJDUMP;
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

/// One variant the harness calls: its label and C function.
struct Variant {
    label: &'static str,
    function: String,
}

/// The harness: reads the number of input sets, then each set's input
/// buffers (manifest order) from stdin; per set, calls every variant and
/// writes its status (i32) and every output buffer to stdout.
fn harness(args: &[ArgSpec], variants: &[Variant]) -> Result<String, String> {
    let mut c = format!("#include <stdint.h>\n#include <stddef.h>\n#include \"HalideRuntime.h\"\n{RUNTIME_H}void *memset(void *, int, __SIZE_TYPE__);\nvoid heap_reset(void);\n");
    let mut proto = Vec::new();
    for a in args {
        proto.push(if a.buffer { "struct halide_buffer_t *".to_string() } else { c_type(a.ty)? });
    }
    for v in variants {
        let _ = writeln!(c, "int {}({});", v.function, proto.join(", "));
    }
    for (i, a) in args.iter().enumerate().filter(|(_, a)| a.buffer) {
        let _ = writeln!(c, "static uint8_t h{i}[{}] __attribute__((aligned(128)));", bytes_of(a).max(1));
    }
    c.push_str(
        "static void make(struct halide_buffer_t *b, struct halide_dimension_t *d, void *host, int code, int bits, const int *min, const int *ext, int nd) {\n\
         \x20 memset(b, 0, sizeof *b); int s = 1; for (int i = 0; i < nd; i++) { d[i].min = min[i]; d[i].extent = ext[i]; d[i].stride = s; d[i].flags = 0; s *= ext[i]; }\n\
         \x20 b->host = (uint8_t *)host; b->type.code = (halide_type_code_t)code; b->type.bits = bits; b->type.lanes = 1; b->dimensions = nd; b->dim = d; }\n\
         void _start(void) {\n  uint32_t sets;\n  if (!read_exact(&sets, 4)) sys(SYS_EXIT, 3, 0, 0);\n",
    );
    let mut call_args = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if !a.buffer {
            let t = c_type(a.ty)?;
            let _ = writeln!(c, "  {t} s{i} = ({t}){}LL;", a.value);
            call_args.push(format!("s{i}"));
            continue;
        }
        let ext: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
        let min: Vec<String> = (0..a.dims.len()).map(|d| a.min.get(d).copied().unwrap_or(0).to_string()).collect();
        let _ = writeln!(c, "  static const int e{i}[] = {{{}}}, m{i}[] = {{{}}}; struct halide_dimension_t d{i}[{}]; struct halide_buffer_t b{i};", ext.join(", "), min.join(", "), a.dims.len().max(1));
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
            let _ = writeln!(c, "      make(&b{i}, d{i}, h{i}, {}, {}, m{i}, e{i}, {});", halide_type_code(a.ty), a.ty.bits, a.dims.len());
        }
        let _ = writeln!(c, "      heap_reset();\n      int32_t r = {}({});\n      write_all(&r, 4);", v.function, call_args.join(", "));
        for (i, a) in args.iter().enumerate().filter(|(_, a)| a.output) {
            let _ = writeln!(c, "      write_all(h{i}, {});", bytes_of(a));
        }
        c.push_str("    }\n");
    }
    c.push_str("  }\n  sys(SYS_EXIT, 0, 0, 0);\n  for (;;) {}\n}\n");
    Ok(c)
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

/// One row of reports/bench_hvx.csv (columns in docs/reports.md): the
/// shared columns, both sides' packet counts and what Halide's object did
/// (`note`).
type Row = EstimateRow<Packets>;

/// The rows of `reports/bench_hvx.csv` (schema in `misaal-reports`).
fn report_rows(rows: &[Row]) -> Vec<misaal_reports::BenchHvxRow> {
    rows.iter().map(|r| misaal_reports::BenchHvxRow { base: r.base.report_cells(), loops: r.loop_cells(), halide: r.note.clone() }).collect()
}

struct Context<'a> {
    run: Run<'a>,
    tc: &'a Toolchain,
    objdump: Option<PathBuf>,
    include: &'a Path,
}

fn bench_one(cx: &Context, k: &Kernel) -> Result<Row, String> {
    let (cfg, suite, function, args) = (cx.run.cfg, cx.run.suite, &k.function, &k.args);
    let stmt = suite.stmt(&k.name);
    let dir = crate::keep::kernel_dir(cx.run.work, &k.name)?;
    crate::keep::fresh_dir(&dir)?;
    std::fs::create_dir_all(dir.join("include")).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (h, text) in SHIM_HEADERS {
        write_atomic(&dir.join("include").join(h), text)?;
    }
    let method = if cfg.naive { "naive" } else { "isel" };
    let ours_sym = format!("misaal_{function}");
    let compiled = compile(cfg, &Job { stmt: &stmt, isa: "hvx", symbol: &ours_sym, out: &dir.join("ours.c"), naive: cfg.naive, usage_dir: None })?;
    let ours_c = std::fs::read_to_string(dir.join("ours.c")).map_err(|e| e.to_string())?;
    let hl = suite.halide_objects(&k.name);
    let mut variants = vec![Variant { label: "ours", function: ours_sym.clone() }];
    let mut units = vec![("harness".to_string(), String::new()), ("runtime".to_string(), format!("{RUNTIME_H}{RUNTIME_C}{HALIDE_SUPPORT_C}")), ("ours".to_string(), ours_c)];
    if !cfg.naive {
        let naive_sym = format!("misaal_naive_{function}");
        compile(cfg, &Job { stmt: &stmt, isa: "hvx", symbol: &naive_sym, out: &dir.join("naive.c"), naive: true, usage_dir: None })?;
        units.push(("naive".to_string(), std::fs::read_to_string(dir.join("naive.c")).map_err(|e| e.to_string())?));
        variants.push(Variant { label: "naive", function: naive_sym });
    }
    if hl.is_some() {
        variants.push(Variant { label: "halide", function: function.to_string() });
    }
    units[0].1 = harness(args, &variants)?;
    for (n, text) in &units {
        write_atomic(&dir.join(format!("{n}.c")), text)?;
    }
    let flags: Vec<String> = ["-O3", "-ffunction-sections", "-fdata-sections"]
        .iter()
        .map(|s| s.to_string())
        .chain(["-I".to_string(), dir.join("include").display().to_string(), "-I".to_string(), cx.include.display().to_string()])
        .collect();
    let objects: Vec<PathBuf> = hl.iter().flat_map(|(o, rt)| [o.clone(), rt.clone()]).collect();
    let exe = dir.join("kernel.elf");
    runtime::build(&cx.tc.cc, &cx.tc.ld, &dir, &units, &flags, &objects, &exe)?;

    let sets: Vec<InputSet> = (0..cfg.inputs).map(|r| input_set(k, r)).collect();
    let mut input = (cfg.inputs as u32).to_le_bytes().to_vec();
    for (_, data) in sets.iter().flatten() {
        input.extend_from_slice(data);
    }
    // On disk first, so a run that fails keeps the bytes it was fed
    // (`qemu-hexagon -cpu v67 kernel.elf < stdin.bin` runs it again).
    std::fs::write(dir.join("stdin.bin"), &input).map_err(|e| format!("{}: {e}", dir.join("stdin.bin").display()))?;
    let out = run_qemu(&cx.tc.qemu, &exe, input)?;
    // Per set, per variant: status, then the outputs in argument order.
    let per_variant = 4 + args.iter().filter(|a| a.output).map(bytes_of).sum::<usize>();
    if out.len() != cfg.inputs * variants.len() * per_variant {
        return Err(format!("the harness wrote {} bytes, {} expected", out.len(), cfg.inputs * variants.len() * per_variant));
    }
    let mut v = Verdict::new(cfg.inputs);
    let mut halide_ok = hl.is_some();
    let mut results: Vec<Vec<&[u8]>> = Vec::new(); // [set][variant] -> output bytes
    for set in 0..cfg.inputs {
        let mut row = Vec::new();
        for (i, var) in variants.iter().enumerate() {
            let at = (set * variants.len() + i) * per_variant;
            let status = i32::from_le_bytes(out[at..at + 4].try_into().expect("4 bytes"));
            if status != 0 {
                if var.label == "halide" {
                    halide_ok = false;
                }
                v.problems.push(format!("input {set}: {} returned {status}", var.label));
            }
            row.push(&out[at + 4..at + per_variant]);
        }
        results.push(row);
    }
    let mut halide_verdicts = Vec::new();
    for (set, row) in results.iter().enumerate() {
        for (i, var) in variants.iter().enumerate().skip(1) {
            if var.label == "halide" {
                if row[i] != row[0] {
                    halide_verdicts.push(format!("input {set}: differs from ours"));
                    v.details.push(crate::check::difference(set, "Halide's object", row[0], row[i]));
                }
            } else {
                v.baseline(set, row[0], row[i], var.label);
            }
        }
    }
    v.compared = if hl.is_some() { cfg.inputs } else { 0 };
    let mut interp_outs = Vec::new();
    if cfg.interp {
        let module = crate::parse_stmt(&stmt)?;
        let want = interpret_all(&module, k, &sets)?;
        let halide_at = variants.iter().position(|var| var.label == "halide");
        for (set, w) in want.iter().enumerate() {
            v.compare(set, results[set][0], w, "the reference interpreter");
            if let Some(i) = halide_at
                && results[set][i] != w.as_slice()
            {
                halide_verdicts.push(format!("input {set}: Halide's object differs from the reference interpreter"));
            }
        }
        interp_outs = want;
    } else {
        // Halide's object disagreeing with us is our failure only when the
        // interpreter did not decide it (otherwise it is the judge).
        v.problems.extend(halide_verdicts.iter().cloned());
    }
    // Halide is named only where its object agreed: a wrong object (the
    // `halide` column says so) was overruled by the interpreter, not matched.
    if hl.is_some() && halide_ok && halide_verdicts.is_empty() {
        v.refs.push("Halide");
    }
    if cfg.interp {
        v.refs.push("interpreter");
    }
    v.unchecked_why = vec!["no Halide object".into(), "interpreter skipped".into()];
    let halide = match &hl {
        None => format!("absent: no {} (python3 benchmarks/generate.py --suite benchmarks/hvx --target hexagon-32-noos-hvx-hvx_128)", suite.dir.join("build/halide").join(format!("{}.o", k.name)).display()),
        Some(_) if !halide_ok || !halide_verdicts.is_empty() => format!("linked, wrong: {}", halide_verdicts.join("; ")),
        Some(_) => format!("linked, agrees{}", if cfg.interp { " with the interpreter" } else { " with ours" }),
    };
    // The static estimate, from the linked program.
    let (mut ours_packets, mut halide_packets) = (None, None);
    if let Some(objdump) = &cx.objdump {
        let out = Command::new(objdump).args(["-d", "--no-show-raw-insn", "--mcpu=hexagonv67", "--mattr=+hvxv67,+hvx-length128b"]).arg(&exe).output().map_err(|e| format!("{OBJDUMP}: {e}"))?;
        if !out.status.success() {
            return Err(format!("{OBJDUMP} failed on {}", exe.display()));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        ours_packets = Some(count_packets(&text, &|s| s == ours_sym || s.starts_with(&format!("{ours_sym}."))));
        if let Some((hl_obj, _)) = &hl {
            let hl_syms = halide_functions(hl_obj, objdump, function)?;
            halide_packets = Some(count_packets(&text, &|s| hl_syms.iter().any(|h| h == s)));
        }
    }
    let mut bit_exact = v.cell();
    if outcome(&bit_exact) == Outcome::Failed {
        // qemu's output exists only here: each set's inputs and each
        // side's outputs as files, as the hosted harness writes them.
        let mut ev = cx.run.evidence(k, &bit_exact, &v.details, format!("qemu-hexagon -cpu v67, {method}"));
        ev.files.extend(halide_files(objects.iter().cloned()));
        for (set, inputs) in sets.iter().enumerate() {
            for (name, data) in inputs {
                ev.blobs.push((format!("input{set}/{name}.bin"), data.clone()));
            }
            for (i, var) in variants.iter().enumerate() {
                ev.blobs.push((format!("input{set}/out_{}.bin", var.label), results[set][i].to_vec()));
            }
            if let Some(w) = interp_outs.get(set) {
                ev.blobs.push((format!("input{set}/out_interpreter.bin"), w.clone()));
            }
        }
        ev.blobs.push(("stdout.bin".into(), out.clone()));
        bit_exact = keep_and_note(cfg, &ev);
    }
    Ok(Row { base: KernelRow { kernel: k.name.clone(), bit_exact, compiled: Some(compiled), method, target: suite.target.clone() }, ours: ours_packets, halide: halide_packets, note: halide })
}

/// How to run a kept HVX program again.
const RERUN: &str = "qemu-hexagon -cpu v67 ./kernel.elf < stdin.bin > again.bin   (per set, per variant: an i32 status, then the outputs; compare with stdout.bin)";

pub fn bench(cfg: &Config) -> Result<ExitCode, String> {
    let suite = Suite::load(cfg)?;
    let tc = Toolchain::find(&misaal_oracle_hvx::harness::TOOLS).map_err(|e| format!("error: misaal bench --target hvx needs {e}"))?;
    let objdump = which(OBJDUMP);
    if objdump.is_none() {
        eprintln!("note: skipped the packet estimate: {OBJDUMP} not found on PATH (apt install llvm-19)");
    }
    let include = halide_include().map_err(|e| format!("error: {e}"))?;
    let work = cfg.work_dir.join("hvx");
    let _lock = WorkLock::take(&work)?;
    let cx = Context { run: Run { cfg, suite: &suite, work: &work, target: "hvx", rerun: RERUN }, tc: &tc, objdump, include: &include };
    let failed = |k: &Kernel, e: String| Row { base: cx.run.failed_row(k, &e), ..Row::default() };
    let p = |p: Option<Packets>| p.map(|p| format!("{:>4} in {:>2}", p.packets, p.loops)).unwrap_or_else(|| "       -".into());
    let print = |row: &Row, secs| row.base.print("packets", p(row.ours), p(row.halide), secs);
    let rows = cx.run.rows(|k| bench_one(&cx, k), failed, print)?;
    let n = cx.run.counts(rows.iter().map(|r| r.base.bit_exact.as_str()));
    println!("{} of {} kernels bit-exact under qemu-hexagon", n.exact, rows.len());
    cx.run.note_kept(rows.iter().map(|r| r.base.bit_exact.as_str()));
    let path = cx.run.write_report("bench_hvx.csv", |p| misaal_reports::write_bench_hvx_csv(&report_rows(&rows), p))?;
    println!("wrote {}", path.display());
    if n.unchecked > 0 {
        eprintln!("{} {} of {} kernels unchecked", if cfg.allow_unchecked { "note:" } else { "error:" }, n.unchecked, rows.len());
    }
    Ok(exit_status(n.failed, n.unchecked, cfg.allow_unchecked))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::Compiled;

    #[test]
    fn report_quotes_and_formats_as_documented() {
        let compiled = Some(Compiled { ms: 12.345, peak_rss_kb: 5000, fallback_exprs: Some(3) });
        let row = |kernel: &str, ours, halide_packets, compiled, halide: &str| Row {
            base: KernelRow { kernel: kernel.into(), bit_exact: "yes".into(), compiled, method: "packets", target: "hexagon-32-noos-hvx-hvx_128".into() },
            ours,
            halide: halide_packets,
            note: halide.into(),
        };
        let p = |packets, loops| Some(Packets { packets, loops });
        let rows = vec![
            row("add", p(40, 2), p(44, 2), compiled, "21.0.0"),
            row("a,b", None, p(1, 1), None, ""),
            row("q\"x", p(3, 1), None, Some(Compiled { ms: 1.0, peak_rss_kb: 7, fallback_exprs: None }), "x\ny"),
        ];
        let text = crate::run::written_text("bench-hvx", |p| misaal_reports::write_bench_hvx_csv(&report_rows(&rows), p));
        // What the hand-written CSV of the same rows was, byte for byte.
        assert_eq!(
            text,
            "kernel,bit_exact,ours_packets,halide_packets,fallback_exprs,compile_ms,method,ours_loops,halide_loops,halide,target,peak_rss_kb\n\
             add,yes,40,44,3,12.3,packets,2,2,21.0.0,hexagon-32-noos-hvx-hvx_128,5000\n\
             \"a,b\",yes,,1,,NaN,packets,,1,,hexagon-32-noos-hvx-hvx_128,\n\
             \"q\"\"x\",yes,3,,,1.0,packets,1,,\"x\ny\",hexagon-32-noos-hvx-hvx_128,7\n"
        );
    }
}
