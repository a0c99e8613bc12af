//! `misaal compile` and `misaal bench`: our C against Halide's own object,
//! on the same inputs, in the same run.

use crate::{BenchArgs, CompileArgs};
use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;
use misaal_reports::BenchRow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| format!("error: writing {}: {e}", path.display()))
}

/// The ISA a compile is for: the Stmt header's architecture; `--target`,
/// when given, must agree with it.
pub fn compile_isa(flag: Option<&str>, module: &misaal_frontends::stmt::Module) -> Result<&'static str, String> {
    let isa = misaal_compiler::isel::isa_of_halide_target(&module.target).map_err(|e| format!("error: {e}"))?;
    match flag {
        Some(t) if t != isa => Err(format!("error: --target {t}, but the Stmt's header says target={} ({isa})", module.target)),
        _ => Ok(isa),
    }
}

pub fn compile(args: CompileArgs) -> Result<ExitCode, String> {
    let started = std::time::Instant::now();
    let text = std::fs::read_to_string(&args.input).map_err(|e| format!("error: cannot read {}: {e}", args.input.display()))?;
    let opts = misaal_frontends::stmt::ParseOptions { buffer_types: args.buffer_type.clone() };
    let module = misaal_frontends::stmt::parse_module_with(&args.input.display().to_string(), &text, &opts).map_err(|d| d.to_string())?;
    let parse_secs = started.elapsed().as_secs_f64();
    let mut isel_times = String::new();
    let mut emit_secs = 0.0;
    compile_isa(args.target.as_deref(), &module)?;
    // Halide's AOT object names the function after the func, not the module.
    let default = module.funcs.iter().find(|f| f.linkage != misaal_frontends::stmt::ast::Linkage::Internal).map(|f| f.name.clone()).unwrap_or_else(|| module.name.clone());
    let symbol = args.name.clone().unwrap_or(default);
    let prog = if !args.naive {
        let features = misaal_compiler::isel::features::CpuFeatures::for_module(args.target_features.as_deref(), &module.target).map_err(|e| format!("error: {e}"))?;
        let mut isel = misaal_compiler::isel::Options { verdict_cache: Some(crate::VERDICT_CACHE.into()), features: Some(features), ..Default::default() };
        if let Some((path, text)) = rule_files(&args.rules)? {
            isel.rules = Some(path);
            isel.rules_text = text;
        }
        let t = std::time::Instant::now();
        let (prog, report) = misaal_compiler::c::emit_with(&module, &symbol, &misaal_compiler::c::EmitOptions { isel: Some(isel) }).map_err(|e| format!("error: {e}"))?;
        emit_secs = t.elapsed().as_secs_f64();
        isel_times = report.as_ref().map(|r| r.times()).unwrap_or_default();
        eprint!("{}", report.as_ref().map(|r| r.summary()).unwrap_or_default());
        if let (Some(dir), Some(r)) = (&args.usage_dir, &report) {
            write_usage(dir, r)?;
        }
        if args.explain {
            eprint!("{}", report.as_ref().map(|r| r.explain_chains()).unwrap_or_default());
        }
        if args.validate {
            let selections = report.map(|r| r.selections).unwrap_or_default();
            let opts = misaal_compiler::isel::validate::ValidateOptions { budget: misaal_verifier::smt::Budget { timeout_ms: args.validate_timeout, rlimit: args.validate_rlimit }, ..Default::default() };
            let v = misaal_compiler::isel::validate::validate_all(&selections, &opts);
            eprint!("{}", v.summary());
            if v.exit_code() != 0 {
                eprintln!("error: {}: the selection is {}; no C written", args.input.display(), if v.exit_code() == 3 { "not validated" } else { "wrong" });
                return Ok(ExitCode::from(v.exit_code()));
            }
        }
        prog
    } else {
        misaal_compiler::c::emit(&module, &symbol).map_err(|e| format!("error: {e}"))?
    };
    let header = args.output.with_extension("h");
    let t = std::time::Instant::now();
    write_atomic(&header, &prog.h)?;
    write_atomic(&args.output, &prog.c)?;
    let write_secs = t.elapsed().as_secs_f64();
    println!("wrote {} and {}", args.output.display(), header.display());
    if args.explain_isel {
        // The whole compile (not --explain-isel's own selection before it):
        // emission holds the target, rule book and selection times.
        eprintln!(
            "compile times: parse {:.1} ms, emit {:.1} ms ({isel_times}), write {:.1} ms; total {:.1} ms",
            parse_secs * 1e3,
            emit_secs * 1e3,
            write_secs * 1e3,
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    if std::env::var_os(PEAK_RSS_ENV).is_some()
        && let Some(kb) = own_peak_rss_kb()
    {
        eprintln!("peak_rss_kb {kb}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Set by `misaal bench` on the compile it measures: the compile then
/// prints its own peak RSS. `wait4`'s `ru_maxrss` cannot be used alone:
/// Linux carries the spawning process's high-water mark into the child at
/// exec, so a bench that has run the interpreter (200 MB) would report
/// every compile at 200 MB.
const PEAK_RSS_ENV: &str = "MISAAL_REPORT_PEAK_RSS";

/// This process's peak resident set (`VmHWM`), in KiB.
fn own_peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// `--rules`: one file is read by the compiler as the default ruleset is;
/// several are joined into one text by `read_sources` (each error still
/// at its own file's line), their rule names distinct.
pub fn rule_files(paths: &[PathBuf]) -> Result<Option<(PathBuf, Option<String>)>, String> {
    match paths {
        [] => Ok(None),
        [one] => Ok(Some((one.clone(), None))),
        [first, ..] => Ok(Some((first.clone(), Some(misaal_rulesets::read_sources(paths)?)))),
    }
}

// Kernels and their arguments, as `benchmarks/manifest.json` lists them.
use misaal_compiler::manifest::ArgSpec;

fn c_type(t: Type) -> String {
    format!("{}int{}_t", if t.is_int() { "" } else { "u" }, t.bits)
}

pub(crate) fn manifest(suite: &Path) -> Result<Vec<(String, String, Vec<ArgSpec>)>, String> {
    let m = misaal_compiler::manifest::load_manifest(&suite.join("manifest.json")).map_err(|e| e.to_string())?;
    Ok(m.kernels.into_iter().map(|k| (k.name, k.function, k.args)).collect())
}

/// One kernel's rule usage and emitted intrinsics, for the bench reports.
fn write_usage(dir: &Path, r: &misaal_compiler::c::IselReport) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("error: {}: {e}", dir.display()))?;
    let mut by_rule: std::collections::BTreeMap<String, (usize, f64, bool)> = std::collections::BTreeMap::new();
    for (_, sel) in &r.selections {
        for u in sel.rule_usage() {
            let e = by_rule.entry(u.rule).or_default();
            e.0 += u.matches;
            e.1 += u.search_apply_ms;
            e.2 |= u.used_in_extraction;
        }
    }
    let mut csv = String::from("rule,matches,search_apply_ms,used_in_extraction\n");
    for (rule, (m, ms, used)) in by_rule {
        let _ = writeln!(csv, "\"{rule}\",{m},{ms:.3},{used}");
    }
    write_atomic(&dir.join("rule_usage.csv"), &csv)?;
    let emitted: Vec<&str> = r.intrinsics.keys().map(String::as_str).collect();
    write_atomic(&dir.join("emitted.txt"), &(emitted.join("\n") + "\n"))
}

/// `reports/rule_usage_x86.csv` (`rule,kernel,matches,search_apply_ms,
/// used_in_extraction`: every proved rule instance a kernel loaded, with
/// egglog's match counts and search-and-apply time summed over its
/// functions) and `reports/coverage_x86.csv` (`instruction,class,
/// reachable_by_rules,emitted_in_suite`: every verified x86 spec; `class`
/// is its similarity class from `reports/x86_classes.csv` when `misaal
/// classes` has written it, else `family:NAME`, the spec file).
fn write_usage_reports(work: &Path, reports: &Path, kernels: &[&str]) -> Result<String, String> {
    let mut usage = String::from("rule,kernel,matches,search_apply_ms,used_in_extraction\n");
    let mut emitted: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for k in kernels {
        let dir = work.join(k).join("usage");
        let Ok(text) = std::fs::read_to_string(dir.join("rule_usage.csv")) else { continue };
        for line in text.lines().skip(1) {
            // "rule",matches,ms,used: the rule is quoted (its name has commas).
            let Some((rule, rest)) = line.rsplit_once('"').map(|(r, rest)| (r.trim_start_matches('"'), rest.trim_start_matches(','))) else { continue };
            let _ = writeln!(usage, "\"{rule}\",{k},{rest}");
        }
        if let Ok(text) = std::fs::read_to_string(dir.join("emitted.txt")) {
            emitted.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_string));
        }
    }
    std::fs::create_dir_all(reports).map_err(|e| format!("{}: {e}", reports.display()))?;
    let usage_csv = reports.join("rule_usage_x86.csv");
    write_atomic(&usage_csv, &usage)?;
    let target = misaal_compiler::isel::Target::x86()?;
    let book = misaal_compiler::isel::rule_book(&target, &Default::default())?;
    let reachable = book.reachable_instructions(&target.rule_env());
    let classes: std::collections::HashMap<String, String> = std::fs::read_to_string(reports.join("x86_classes.csv"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((f.get(1)?.trim_matches('"').to_string(), f.first()?.trim_matches('"').to_string()))
        })
        .collect();
    let mut cov = String::from("instruction,class,reachable_by_rules,emitted_in_suite\n");
    let (mut n, mut r, mut e) = (0, 0, 0);
    for (i, sem) in target.instrs.iter() {
        if target.status.verified(&i.name, sem).is_err() {
            continue;
        }
        let class = classes.get(&i.name).cloned().unwrap_or_else(|| format!("family:{}", i.family));
        let (reach, emit) = (reachable.contains(&i.name), emitted.contains(&i.name));
        n += 1;
        r += reach as usize;
        e += emit as usize;
        let _ = writeln!(cov, "{},{class},{reach},{emit}", i.name);
    }
    let coverage_csv = reports.join("coverage_x86.csv");
    write_atomic(&coverage_csv, &cov)?;
    Ok(format!("wrote {} and {}: {n} verified x86 specs, {r} reachable by rules, {e} emitted in these kernels", usage_csv.display(), coverage_csv.display()))
}

/// The Halide target the suite's Stmt and objects were built for, from the
/// manifest (`target`), or `unknown`.
fn suite_target(suite: &Path) -> String {
    manifest_target(suite).unwrap_or_else(|| "unknown".into())
}

/// A program on PATH.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(program)).find(|p| p.is_file()))
}

fn elements(dims: &[i64]) -> usize {
    dims.iter().product::<i64>().max(0) as usize
}

/// The C harness: reads inputs from files, calls ours and each linked
/// baseline (Halide's object unless NO_HALIDE, our naive build with
/// HAVE_NAIVE, the scalar C with HAVE_SCALAR), writes every output, and with
/// `time` prints the fastest of 21 interleaved rounds of each.
fn harness(function: &str, args: &[ArgSpec]) -> String {
    let mut c = String::from("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <stdint.h>\n#include <time.h>\n#include \"HalideRuntime.h\"\n#include \"ours.h\"\n");
    let proto: Vec<String> = args.iter().map(|a| if a.buffer { "struct halide_buffer_t *".to_string() } else { c_type(a.ty) }).collect();
    // (label, C function, guard that links it)
    let variants = [
        ("ours", format!("misaal_{function}"), "1"),
        ("halide", function.to_string(), "!defined(NO_HALIDE)"),
        ("naive", format!("misaal_naive_{function}"), "defined(HAVE_NAIVE)"),
        ("scalar", format!("scalar_{function}"), "defined(HAVE_SCALAR)"),
    ];
    for (_, f, guard) in &variants[1..] {
        let _ = writeln!(c, "#if {guard}\nint {f}({});\n#endif", proto.join(", "));
    }
    c.push_str(
        "static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }\n\
         static void *slurp(const char *p, size_t n) { void *b = calloc(1, n ? n : 1); FILE *f = fopen(p, \"rb\"); if (!f || fread(b, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", p); exit(3); } fclose(f); return b; }\n\
         static void spit(const char *p, const void *b, size_t n) { FILE *f = fopen(p, \"wb\"); if (!f || fwrite(b, 1, n, f) != n) { fprintf(stderr, \"cannot write %s\\n\", p); exit(3); } fclose(f); }\n\
         static void make(struct halide_buffer_t *b, struct halide_dimension_t *d, void *host, int code, int bits, const int *ext, int nd) {\n\
           memset(b, 0, sizeof *b); int s = 1; for (int i = 0; i < nd; i++) { d[i].min = 0; d[i].extent = ext[i]; d[i].stride = s; d[i].flags = 0; s *= ext[i]; }\n\
           b->host = (uint8_t *)host; b->type.code = (halide_type_code_t)code; b->type.bits = bits; b->type.lanes = 1; b->dimensions = nd; b->dim = d; }\n\
         int main(int argc, char **argv) {\n  const char *dir = argv[1]; int timing = argc > 2; char path[4096]; enum { ROUNDS = 21 }; double t0, best[4] = {1e300, 1e300, 1e300, 1e300};\n",
    );
    let mut calls: Vec<Vec<String>> = vec![Vec::new(); variants.len()];
    for (i, a) in args.iter().enumerate() {
        if !a.buffer {
            let _ = writeln!(c, "  {} s{i} = ({}){};", c_type(a.ty), c_type(a.ty), a.value);
            calls.iter_mut().for_each(|v| v.push(format!("s{i}")));
            continue;
        }
        let n = elements(&a.dims);
        let bytes = n * (a.ty.bits as usize).div_ceil(8);
        let ext: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
        let code = if a.ty.is_int() { 0 } else { 1 };
        let nd = a.dims.len();
        let _ = writeln!(c, "  static const int e{i}[] = {{{}}};", ext.join(", "));
        if !a.output {
            let _ = writeln!(c, "  snprintf(path, sizeof path, \"%s/{}.bin\", dir); void *h{i} = slurp(path, {bytes});", a.name);
        }
        for (k, v) in calls.iter_mut().enumerate() {
            let host = if a.output {
                let _ = writeln!(c, "  void *h{i}_{k} = calloc(1, {bytes});");
                format!("h{i}_{k}")
            } else {
                format!("h{i}")
            };
            let _ = writeln!(c, "  struct halide_dimension_t d{i}_{k}[{nd}]; struct halide_buffer_t b{i}_{k}; make(&b{i}_{k}, d{i}_{k}, {host}, {code}, {}, e{i}, {nd});", a.ty.bits);
            v.push(format!("&b{i}_{k}"));
        }
    }
    for (k, (label, f, guard)) in variants.iter().enumerate() {
        let call = format!("{f}({})", calls[k].join(", "));
        let _ = writeln!(c, "#if {guard}\n  {{ int r = {call}; if (r) {{ fprintf(stderr, \"{label} returned %d\\n\", r); return 4 + {k}; }} }}");
        for (i, a) in args.iter().enumerate().filter(|(_, a)| a.output) {
            let bytes = elements(&a.dims) * (a.ty.bits as usize).div_ceil(8);
            let _ = writeln!(c, "  snprintf(path, sizeof path, \"%s/out_{label}.bin\", dir); spit(path, h{i}_{k}, {bytes});");
        }
        let _ = writeln!(c, "  if (timing) for (int w = 0; w < 3; w++) {call};\n#endif");
    }
    // Rounds interleave the variants, so a burst of load from another
    // process hits all of them alike, and each keeps its fastest call:
    // interference only ever adds time (Halide's own `benchmark` reports
    // the minimum too).
    c.push_str("  if (timing) {\n    for (int k = 0; k < ROUNDS; k++) {\n");
    for (k, (_, f, guard)) in variants.iter().enumerate() {
        let call = format!("{f}({})", calls[k].join(", "));
        let _ = writeln!(c, "#if {guard}\n      t0 = now_us(); {call}; t0 = now_us() - t0; if (t0 < best[{k}]) best[{k}] = t0;\n#endif");
    }
    c.push_str("    }\n");
    for (k, (label, _, guard)) in variants.iter().enumerate() {
        let _ = writeln!(c, "#if {guard}\n    printf(\"{label}_us=%.3f \", best[{k}]);\n#endif");
    }
    c.push_str("    printf(\"\\n\");\n  }\n  return 0;\n}\n");
    c
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Input set `run` of `n` elements of `size` bytes. Set 0 (the timed one) is
/// uniform; after it, sets alternate between all-maximum elements and an
/// edge mix, where 40% of elements are 0, all ones, signed MIN or signed MAX,
/// so saturation, rounding and overflow paths are compared too.
/// The generator state of kernel `name`'s input set `run`: every target's
/// bench feeds a kernel the same bytes.
pub(crate) fn input_seed(name: &str, run: usize) -> u64 {
    0x9e37_79b9_7f4a_7c15u64 ^ (run as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
}

pub(crate) fn input_data(run: usize, n: usize, size: usize, state: &mut u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * size);
    for _ in 0..n {
        let r = xorshift(state);
        let edge = match run {
            0 => None,
            r1 if r1 % 2 == 1 => Some(1),
            _ => (r % 10 < 4).then_some((r >> 8) % 4),
        };
        for k in 0..size {
            out.push(match edge {
                None => (xorshift(state) >> 24) as u8,
                Some(0) => 0,
                Some(1) => 0xFF,
                // Little-endian: the sign bit is in the last byte.
                Some(2) => if k + 1 == size { 0x80 } else { 0 },
                _ => if k + 1 == size { 0x7F } else { 0xFF },
            });
        }
    }
    out
}

fn peak_rss_of_child(cmd: &mut Command) -> Result<(std::process::ExitStatus, u64, String), String> {
    let child = cmd.stderr(std::process::Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by wait4 for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting on a child this process spawned and has not waited for.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    if r < 0 {
        return Err("wait4 failed".into());
    }
    let mut err = String::new();
    if let Some(mut e) = child.stderr {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    use std::os::unix::process::ExitStatusExt;
    Ok((std::process::ExitStatus::from_raw(status), ru.ru_maxrss as u64, err))
}

pub(crate) fn halide_include() -> Result<PathBuf, String> {
    let out = Command::new("python3")
        .args(["-c", "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'include'))"])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err("Halide's Python package is missing; run scripts/setup.sh (it pip-installs halide==21.0.0)".into());
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// What every kernel's run shares.
struct Context<'a> {
    suite: &'a Path,
    work: &'a Path,
    include: &'a Path,
    inputs: usize,
    interp: bool,
    /// The Halide target the suite was built for (the manifest's).
    target: &'a str,
    /// Compile ours with `--naive` (the naive build is always timed too).
    naive: bool,
    /// `--rules` files for our compile (empty: the default ruleset).
    rules: &'a [PathBuf],
}

fn bench_one(cx: &Context, name: &str, function: &str, args: &[ArgSpec]) -> Result<BenchRow, String> {
    let (suite, work, include, inputs, interp) = (cx.suite, cx.work, cx.include, cx.inputs, cx.interp);
    let stmt = suite.join("stmt").join(format!("{name}.stmt"));
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // Compile in a child process, so its time and peak memory are its own.
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let t = Instant::now();
    let (status, rss, err) = peak_rss_of_child(Command::new(&exe).env(PEAK_RSS_ENV, "1").args(["compile"]).arg(&stmt).args(["--target", "x86", "--name"]).arg(format!("misaal_{function}")).args(if cx.naive { vec!["--naive".to_string()] } else { vec!["--usage-dir".to_string(), dir.join("usage").display().to_string()] }).args(cx.rules.iter().flat_map(|r| ["--rules".to_string(), r.display().to_string()])).arg("-o").arg(dir.join("ours.c")).stdout(std::process::Stdio::null()))?;
    let compile_ms = t.elapsed().as_secs_f64() * 1e3;
    if !status.success() {
        return Err(format!("compile failed: {}", err.trim()));
    }
    // The compile's own high-water mark; `wait4`'s includes ours.
    let rss = err.lines().find_map(|l| l.strip_prefix("peak_rss_kb ")).and_then(|n| n.trim().parse().ok()).unwrap_or(rss);
    // Subterms left to the naive lowering, as the compile counted them.
    let fallback_exprs: Option<u64> = err.lines().find_map(|l| l.strip_prefix("isel: ").and_then(|l| l.split("fallback_exprs ").nth(1)).and_then(|n| n.trim().parse().ok()));
    // The naive build, for `naive_us`.
    let naive = Command::new(&exe).args(["compile"]).arg(&stmt).args(["--target", "x86", "--naive", "--name"]).arg(format!("misaal_naive_{function}")).arg("-o").arg(dir.join("naive.c")).output().map_err(|e| e.to_string())?;
    if !naive.status.success() {
        return Err(format!("naive compile failed: {}", String::from_utf8_lossy(&naive.stderr).trim()));
    }
    write_atomic(&dir.join("harness.c"), &harness(function, args))?;
    let hl_dir = suite.join("build").join("halide");
    let have_halide = hl_dir.join(format!("{name}.o")).exists() && hl_dir.join("runtime.o").exists();
    // The scalar C baseline, by clang -O3 -march=native (benchmarks/scalar).
    let scalar_c = suite.join("scalar").join(format!("{name}.c"));
    let clang = which("clang");
    let scalar_obj = dir.join("scalar.o");
    let have_scalar = match (&clang, scalar_c.exists()) {
        (Some(clang), true) => {
            let out = Command::new(clang).args(["-O3", "-march=native", "-c", "-o"]).arg(&scalar_obj).arg(&scalar_c).arg("-I").arg(include).arg("-I").arg(suite.join("scalar")).output().map_err(|e| format!("clang: {e}"))?;
            if !out.status.success() {
                return Err(format!("clang failed on {}:\n{}", scalar_c.display(), String::from_utf8_lossy(&out.stderr).lines().take(10).collect::<Vec<_>>().join("\n")));
            }
            true
        }
        _ => false,
    };
    let mut cc = Command::new("cc");
    cc.args(["-O3", "-march=native", "-DHAVE_NAIVE", "-o"]).arg(dir.join("harness")).arg(dir.join("harness.c")).arg(dir.join("ours.c")).arg(dir.join("naive.c")).arg("-I").arg(include).arg("-I").arg(&dir);
    if have_halide {
        cc.arg(hl_dir.join(format!("{name}.o"))).arg(hl_dir.join("runtime.o"));
    } else {
        cc.arg("-DNO_HALIDE");
    }
    if have_scalar {
        cc.arg("-DHAVE_SCALAR").arg(&scalar_obj);
    }
    cc.args(["-lpthread", "-ldl", "-lm"]);
    let out = cc.output().map_err(|e| format!("cc: {e}"))?;
    if !out.status.success() {
        return Err(format!("cc failed:\n{}", String::from_utf8_lossy(&out.stderr).lines().take(20).collect::<Vec<_>>().join("\n")));
    }
    let ops = if interp { Some(misaal_frontends::halide_ops().map_err(|d| d.to_string())?) } else { None };
    let module = if interp { Some(parse_module(&stmt.display().to_string(), &std::fs::read_to_string(&stmt).map_err(|e| e.to_string())?).map_err(|d| d.to_string())?) } else { None };
    let mut exact = Vec::new();
    // How many (input set, reference) pairs were compared byte for byte.
    let mut compared = 0usize;
    let (mut ours_us, mut halide_us, mut naive_us, mut clang_us) = (f64::NAN, f64::NAN, f64::NAN, f64::NAN);
    // (input set, its input buffers, our output), for the interpreter.
    let mut pending: Vec<(usize, Vec<(String, Vec<u8>)>, Vec<u8>)> = Vec::new();
    for run in 0..inputs {
        let mut state = input_seed(name, run);
        let mut bufs = Vec::new();
        for a in args.iter().filter(|a| a.buffer && !a.output) {
            let data = input_data(run, elements(&a.dims), (a.ty.bits as usize).div_ceil(8), &mut state);
            std::fs::write(dir.join(format!("{}.bin", a.name)), &data).map_err(|e| e.to_string())?;
            bufs.push((a.name.clone(), data));
        }
        let mut run_cmd = Command::new(dir.join("harness"));
        run_cmd.arg(&dir);
        if run == 0 {
            run_cmd.arg("time");
        }
        let out = run_cmd.output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("harness failed on input {run}: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        if run == 0 {
            let s = String::from_utf8_lossy(&out.stdout);
            for part in s.split_whitespace() {
                let Some((k, v)) = part.split_once("_us=") else { continue };
                let v: f64 = v.parse().unwrap_or(f64::NAN);
                match k {
                    "ours" => ours_us = v,
                    "halide" => halide_us = v,
                    "naive" => naive_us = v,
                    "scalar" => clang_us = v,
                    _ => {}
                }
            }
        }
        let ours = std::fs::read(dir.join("out_ours.bin")).map_err(|e| e.to_string())?;
        if have_halide {
            compared += 1;
            if std::fs::read(dir.join("out_halide.bin")).map_err(|e| e.to_string())? != ours {
                exact.push(format!("input {run}: differs from Halide"));
            }
        }
        // The baselines must compute the same thing, or their times mean nothing.
        for (file, what, have) in [("out_naive.bin", "the naive build", true), ("out_scalar.bin", "the scalar C", have_scalar)] {
            if have && std::fs::read(dir.join(file)).map_err(|e| e.to_string())? != ours {
                exact.push(format!("input {run}: {what} differs from ours"));
            }
        }
        if interp {
            pending.push((run, bufs, ours));
        }
    }
    // The reference interpreter is the slow check (seconds to a minute per
    // input set): it runs after the timed harness, never beside it, one
    // input set per core.
    if let (Some(ops), Some(m)) = (&ops, &module) {
        use rayon::prelude::*;
        let func = public_func(m)?;
        let k = output_buffer(func, args)?;
        let verdicts: Vec<Result<Option<String>, String>> = pending
            .par_iter()
            .map(|(run, bufs, ours)| {
                let res = interpret(ops, func, args, bufs)?;
                Ok((res[k].data != *ours).then(|| format!("input {run}: differs from the reference interpreter")))
            })
            .collect();
        for v in verdicts {
            compared += 1;
            exact.extend(v?);
        }
    }
    // `yes` only when at least one reference saw our output byte for byte.
    let bit_exact = if !exact.is_empty() {
        format!("no: {}", exact.join("; "))
    } else if compared == 0 {
        let mut why = Vec::new();
        if inputs == 0 {
            why.push("no input sets");
        }
        if !have_halide {
            why.push("no Halide object");
        }
        if !interp {
            why.push("interpreter skipped");
        }
        format!("unchecked ({})", why.join(", "))
    } else {
        format!("yes ({inputs} inputs{}{})", if have_halide { ", Halide" } else { "" }, if interp { ", interpreter" } else { "" })
    };
    Ok(BenchRow {
        kernel: name.into(),
        compile_ms,
        ours_us,
        halide_us,
        speedup: halide_us / ours_us,
        bit_exact,
        peak_rss_kb: rss,
        naive_us,
        clang_us,
        speedup_vs_clang: clang_us / ours_us,
        fallback_exprs,
        target: cx.target.to_string(),
    })
}

/// Exclusive use of a bench work folder for one run: two runs building the
/// same kernel in one folder overwrite each other's inputs and outputs and
/// report mismatches that are not there. The lock file holds the owner's pid;
/// one whose owner has exited is taken over.
pub(crate) struct WorkLock(PathBuf);

impl WorkLock {
    pub(crate) fn take(work: &Path) -> Result<WorkLock, String> {
        std::fs::create_dir_all(work).map_err(|e| format!("error: {}: {e}", work.display()))?;
        let path = work.join(".lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    use std::io::Write;
                    // A bare pid where the start time cannot be read: an
                    // unreadable start must not make a live lock look stale.
                    let me = std::process::id();
                    let _ = match process_start(me) {
                        Some(start) => write!(f, "{me} {start}"),
                        None => write!(f, "{me}"),
                    };
                    return Ok(WorkLock(path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(&path).unwrap_or_default();
                    let alive = lock_owner_alive(&owner);
                    if alive {
                        return Err(format!(
                            "error: another misaal bench (pid {}) is using {}; wait for it, or give this run its own --work-dir (and --report-dir)",
                            owner.split_whitespace().next().unwrap_or(""),
                            work.display()
                        ));
                    }
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(format!("error: {}: {e}", path.display())),
            }
        }
        Err(format!("error: cannot take {}", path.display()))
    }
}

/// A process's start time (`/proc/PID/stat` field 22, clock ticks since
/// boot): with the pid it names one process, where a pid alone can be
/// reused by another once its run has died.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the lock's owner (`PID START`, or a bare `PID` from older
/// runs) is still the process that wrote it.
fn lock_owner_alive(owner: &str) -> bool {
    let mut f = owner.split_whitespace();
    let Some(pid) = f.next().and_then(|p| p.parse::<u32>().ok()) else { return false };
    match f.next().and_then(|s| s.parse::<u64>().ok()) {
        Some(start) => process_start(pid) == Some(start),
        None => Path::new(&format!("/proc/{pid}")).exists(),
    }
}

impl Drop for WorkLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub fn bench(args: BenchArgs) -> Result<ExitCode, String> {
    let suite = args.suite.clone();
    let kernels = manifest(&suite)?;
    let target = suite_target(&suite);
    let include = halide_include().map_err(|e| format!("error: {e}"))?;
    let work = args.work_dir.clone();
    let _lock = WorkLock::take(&work)?;
    let hl_dir = suite.join("build").join("halide");
    if !hl_dir.join("runtime.o").exists() {
        eprintln!(
            "note: Halide's baseline objects are missing in {}; build them with\n    python3 {}/generate.py\n(pip install halide==21.0.0 numpy). Timing ours alone.",
            hl_dir.display(),
            suite.display()
        );
    }
    let mut rows = Vec::new();
    let mut failed = 0;
    let mut unchecked = 0;
    for (name, function, specs) in &kernels {
        if args.kernel.as_ref().is_some_and(|k| k != name) {
            continue;
        }
        let cx = Context { suite: &suite, work: &work, include: &include, inputs: args.inputs, interp: !args.no_interp, naive: args.naive, target: &target, rules: &args.rules };
        match bench_one(&cx, name, function, specs) {
            Ok(r) => {
                println!(
                    "{:<24} compile {:>7.1} ms  ours {:>9.1} us  halide {:>9.1} us {:>5.2}x  naive {:>9.1} us  clang {:>9.1} us {:>5.2}x  fallbacks {:>3}  {}",
                    r.kernel,
                    r.compile_ms,
                    r.ours_us,
                    r.halide_us,
                    r.speedup,
                    r.naive_us,
                    r.clang_us,
                    r.speedup_vs_clang,
                    r.fallback_exprs.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                    r.bit_exact
                );
                if r.bit_exact.starts_with("unchecked") {
                    unchecked += 1;
                } else if !r.bit_exact.starts_with("yes") {
                    failed += 1;
                }
                rows.push(r);
            }
            Err(e) => {
                println!("{name:<26} FAILED: {e}");
                failed += 1;
                rows.push(BenchRow {
                    kernel: name.clone(),
                    compile_ms: f64::NAN,
                    ours_us: f64::NAN,
                    halide_us: f64::NAN,
                    speedup: f64::NAN,
                    bit_exact: format!("no: {}", e.lines().next().unwrap_or("")),
                    peak_rss_kb: 0,
                    naive_us: f64::NAN,
                    clang_us: f64::NAN,
                    speedup_vs_clang: f64::NAN,
                    fallback_exprs: None,
                    target: target.clone(),
                });
            }
        }
    }
    if rows.is_empty() {
        return Err("error: no kernel matches".into());
    }
    let speedups: Vec<f64> = rows.iter().map(|r| r.speedup).filter(|s| s.is_finite() && *s > 0.0).collect();
    if !speedups.is_empty() {
        let geo = (speedups.iter().map(|s| s.ln()).sum::<f64>() / speedups.len() as f64).exp();
        println!("geomean speedup over Halide: {geo:.3}x over {} kernels", speedups.len());
    }
    if !args.naive {
        let names: Vec<&str> = rows.iter().map(|r| r.kernel.as_str()).collect();
        match write_usage_reports(&work, &args.report_dir, &names) {
            Ok(msg) => println!("{msg}"),
            Err(e) => eprintln!("warning: rule usage and coverage reports: {e}"),
        }
    }
    std::fs::create_dir_all(&args.report_dir).map_err(|e| format!("error: {}: {e}", args.report_dir.display()))?;
    let csv = args.report_dir.join("bench_x86.csv");
    misaal_reports::write_bench_csv(&rows, &csv).map_err(|e| format!("error: writing {}: {e}", csv.display()))?;
    let png = args.report_dir.join("bench_x86.png");
    let font = std::fs::read("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").map_err(|e| format!("error: the chart needs DejaVuSans (apt install fonts-dejavu-core): {e}"))?;
    match misaal_reports::write_speedup_chart(&rows, &png, &font) {
        Ok(()) => println!("wrote {} and {}", csv.display(), png.display()),
        Err(e) => println!("wrote {} (no chart: {e})", csv.display()),
    }
    if unchecked > 0 {
        eprintln!(
            "{} {unchecked} of {} kernels unchecked: neither Halide's object nor the reference interpreter was compared{}",
            if args.allow_unchecked { "note:" } else { "error:" },
            rows.len(),
            if args.allow_unchecked { " (allowed by --allow-unchecked)" } else { "; build Halide's objects, drop --no-interp, or pass --allow-unchecked to time only" }
        );
    }
    Ok(exit_status(failed, unchecked, args.allow_unchecked))
}

/// The Stmt's public function, the one a bench calls.
pub(crate) fn public_func(m: &misaal_frontends::stmt::ast::Module) -> Result<&misaal_frontends::stmt::ast::Func, String> {
    m.funcs.iter().find(|f| f.linkage != misaal_frontends::stmt::ast::Linkage::Internal).ok_or_else(|| "no public function in the Stmt".to_string())
}

/// Which of `func`'s buffer arguments (counted among buffers only, as the
/// interpreter returns them) is the manifest's output.
pub(crate) fn output_buffer(func: &misaal_frontends::stmt::ast::Func, args: &[ArgSpec]) -> Result<usize, String> {
    func.args
        .iter()
        .filter(|a| matches!(a.kind, misaal_frontends::stmt::ast::ArgKind::Buffer { .. }))
        .position(|a| args.iter().any(|s| s.name == a.name && s.output))
        .ok_or_else(|| "the manifest names no output buffer of the Stmt".to_string())
}

/// The reference interpreter on one input set: `func` run on the manifest's
/// arguments, the input buffers holding `bufs`' bytes (the rest zeroed, at
/// the manifest's mins). Returns every buffer argument, in `func`'s order.
/// The x86, ARM and HVX benches all judge their outputs by it.
pub(crate) fn interpret(ops: &misaal_isa::SpecLibrary, func: &misaal_frontends::stmt::ast::Func, args: &[ArgSpec], bufs: &[(String, Vec<u8>)]) -> Result<Vec<Buffer>, String> {
    let mut vals = Vec::new();
    for fa in &func.args {
        let spec = args.iter().find(|a| a.name == fa.name).ok_or(format!("the manifest lacks argument `{}`", fa.name))?;
        if !spec.buffer {
            vals.push(ArgValue::Scalar(spec.ty, spec.value));
            continue;
        }
        let mins: Vec<i64> = (0..spec.dims.len()).map(|d| spec.min.get(d).copied().unwrap_or(0)).collect();
        let mut b = Buffer::dense(spec.ty, &mins, &spec.dims);
        if let Some((_, d)) = bufs.iter().find(|(n, _)| *n == spec.name) {
            b.data = d.clone();
        }
        vals.push(ArgValue::Buffer(b));
    }
    Interp::new(ops).run(func, vals).map_err(|e| format!("interpreter: {e}"))
}

/// bench's exit status: 1 when a kernel failed or differed, 2 when some were
/// compared with nothing (unless `--allow-unchecked`), else 0.
pub(crate) fn exit_status(failed: usize, unchecked: usize, allow_unchecked: bool) -> ExitCode {
    if failed > 0 {
        ExitCode::from(1)
    } else if unchecked > 0 && !allow_unchecked {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The manifest's `target` (the Halide target its Stmt were printed for).
pub(crate) fn manifest_target(suite: &Path) -> Option<String> {
    std::fs::read_to_string(suite.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("target").and_then(|t| t.as_str()).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::input_data;

    #[test]
    fn input_sets_after_the_first_hit_the_edges() {
        let mut s = 0x1234_5678u64;
        let random = input_data(0, 1000, 2, &mut s);
        assert!(random.iter().filter(|&&b| b == 0xFF).count() < 50);
        assert!(input_data(1, 1000, 2, &mut s).iter().all(|&b| b == 0xFF));
        let mix: Vec<u16> = input_data(2, 1000, 2, &mut s).chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        for edge in [0, 0xFFFF, 0x8000, 0x7FFF] {
            let n = mix.iter().filter(|&&v| v == edge).count();
            assert!((60..=140).contains(&n), "{edge:#x} appears {n} times in 1000");
        }
    }
}
