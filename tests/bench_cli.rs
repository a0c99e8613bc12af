//! `misaal bench` as a user runs it, on a scratch copy of the suite that has
//! no Halide objects: a row may say `yes` only when something was compared
//! byte for byte (Halide's object or the reference interpreter).
//!
//! Needs `cc` and HalideRuntime.h from the pip `halide` package
//! (`python3 -m pip install halide==21.0.0`), as `misaal bench` does.

use misaal_testkit::wrong_compiler::{Corruption, write_wrong_compiler};
use std::path::{Path, PathBuf};
use std::process::Command;

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks");
/// A small kernel: 2048x1536 u8, fast to compile, run and interpret.
const KERNEL: &str = "blur3x3";

/// A fresh folder holding `suite/` (manifest.json and the one kernel's
/// Stmt, no `build/halide/`). `misaal bench` runs with it as the current
/// folder, so its `reports/` and `target/misaal-bench/` land there too.
fn scratch(case: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli").join(std::process::id().to_string()).join(case);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("suite/stmt")).unwrap();
    std::fs::copy(format!("{SUITE}/manifest.json"), root.join("suite/manifest.json")).unwrap();
    std::fs::copy(format!("{SUITE}/stmt/{KERNEL}.stmt"), root.join(format!("suite/stmt/{KERNEL}.stmt"))).unwrap();
    root
}

/// Runs `misaal bench` in `root`; (exit code, stdout, stderr, bit_exact of the CSV row).
fn bench(root: &Path, extra: &[&str]) -> (Option<i32>, String, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(root)
        .args(["bench", "--suite", "suite", "--kernel", KERNEL])
        .args(extra)
        .output()
        .expect("run misaal");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let csv = std::fs::read_to_string(root.join("reports/bench_x86.csv")).unwrap_or_else(|e| panic!("no CSV ({e}); stdout:\n{stdout}\nstderr:\n{stderr}"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "bit_exact").expect("a bit_exact column");
    let row = csv.lines().nth(1).unwrap_or_else(|| panic!("no row in\n{csv}"));
    assert!(row.starts_with(KERNEL), "{row}");
    // bit_exact holds commas inside quotes.
    let cell = cells(row).swap_remove(col);
    (out.status.code(), stdout, stderr, cell)
}

#[test]
fn nothing_compared_is_unchecked_and_fails_the_run() {
    let root = scratch("unchecked");
    let (code, out, err, cell) = bench(&root, &["--no-interp", "--inputs", "1"]);
    assert!(cell.starts_with("unchecked"), "bit_exact must be `unchecked` when neither Halide nor the interpreter ran, got `{cell}`\n{out}\n{err}");
    assert!(!cell.contains("yes"), "{cell}");
    // Why Halide's object did not run: the scratch suite has none, or (on a
    // CPU without the Stmt's AVX-512 features) the row ran under SIMDe,
    // where no Halide object runs.
    assert!((cell.contains("no Halide object") || cell.contains("Halide's object not run: this CPU lacks")) && cell.contains("interpreter skipped"), "{cell}");
    assert!(out.contains("unchecked"), "{out}");
    assert!(code.is_some_and(|c| c != 0), "an unchecked row must fail the run, exit {code:?}\n{out}\n{err}");
    assert!(err.contains("--allow-unchecked"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn allow_unchecked_times_without_failing() {
    let root = scratch("allowed");
    let (code, out, err, cell) = bench(&root, &["--no-interp", "--inputs", "1", "--allow-unchecked"]);
    assert!(cell.starts_with("unchecked"), "{cell}\n{out}\n{err}");
    assert_eq!(code, Some(0), "--allow-unchecked exits 0\n{out}\n{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_interpreter_alone_makes_a_row_yes() {
    let root = scratch("interp");
    let (code, out, err, cell) = bench(&root, &["--inputs", "1"]);
    assert!(cell.starts_with("yes") && cell.contains("interpreter") && !cell.contains("Halide"), "{cell}\n{out}\n{err}");
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(!root.join("target/misaal-bench/mismatches").exists(), "a bit-exact row keeps nothing\n{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A row that is not bit-exact keeps that run's C, objects, inputs and
/// outputs in a named folder and says where (issue 31). The mismatch is
/// real: `--compiler` is a wrapper that runs misaal's compile, then makes
/// our C (not the naive build) flip bit 0 of the output's first byte, so
/// the naive build, built into the same harness, disagrees with ours.
/// `--no-interp` and one input set keep it to seconds.
#[test]
fn a_row_that_is_not_bit_exact_keeps_its_artifacts() {
    let root = scratch("mismatch");
    let params = "struct halide_buffer_t *in, struct halide_buffer_t *out";
    let corruption = Corruption { kernel: KERNEL, params, args: "in, out", corrupt: "out->host[0] ^= 1;" };
    let wrapper = write_wrong_compiler(&root, env!("CARGO_BIN_EXE_misaal"), &corruption).unwrap();
    let (code, out, err, cell) = bench(&root, &["--inputs", "1", "--no-interp", "--compiler", wrapper.to_str().unwrap()]);
    if cell.starts_with("skipped") {
        // Neither this CPU nor SIMDe can run ours: nothing ran to differ.
        misaal_testkit::skip(&cell);
        return;
    }
    assert!(cell.starts_with("no: input 0: the naive build differs from ours"), "{cell}\n{out}\n{err}");
    assert_eq!(code, Some(1), "{out}\n{err}");
    let (_, kept) = cell.split_once("; artifacts kept in ").unwrap_or_else(|| panic!("the row names no folder: {cell}\n{err}"));
    assert!(err.contains(kept) && out.contains(kept), "the folder is printed on stderr and in the row\n{out}\n{err}");
    assert!(out.contains("kept the artifacts of 1 row(s)"), "{out}");
    let kept = root.join(kept);
    assert!(kept.starts_with(root.join("target/misaal-bench/mismatches")), "{}", kept.display());
    let name = kept.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&format!("{KERNEL}-x86-")), "{name}");
    // Our C as it was built: the corrupted one.
    let ours_c = std::fs::read_to_string(kept.join("ours.c")).unwrap_or_else(|e| panic!("{e}\n{err}"));
    assert!(ours_c.contains("ours made wrong on purpose"), "the kept C is the one that ran");
    for f in ["ours.h", "naive.c", "naive.h", "harness.c", "harness", "README.txt", &format!("{KERNEL}.stmt"), "input0/input.bin", "input0/out_ours.bin", "input0/out_naive.bin"] {
        assert!(kept.join(f).is_file(), "{f} is not kept in {}", kept.display());
    }
    if row_of(&root, "reports")["run"] == "simde" {
        assert!(kept.join("ours_simde.o").is_file(), "the object that ran is kept");
    }
    let (ours, naive) = (std::fs::read(kept.join("input0/out_ours.bin")).unwrap(), std::fs::read(kept.join("input0/out_naive.bin")).unwrap());
    assert_eq!(ours.len(), 2048 * 1536);
    assert_eq!((ours[0] ^ naive[0], ours[1..] == naive[1..]), (1, true), "the outputs are the two sides of this run");
    let readme = std::fs::read_to_string(kept.join("README.txt")).unwrap();
    for want in [format!("kernel:    {KERNEL}"), "target:    x86".into(), "ours vs the naive build: 1 of 3145728 bytes differ; first at byte 0".into(), "--compiler".into(), "misaal:    0.".into(), "input0/out_ours.bin".into()] {
        assert!(readme.contains(&want), "README.txt lacks `{want}`:\n{readme}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(kept.parent().unwrap()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A work folder held by a live run is refused with the way out named; one
/// left behind by a run that died is taken over; `--work-dir` and
/// `--report-dir` put everything where they say. The runs that take the
/// folder over skip the interpreter (what they check is where things go,
/// not the bytes; the other tests compare those).
#[test]
fn a_busy_work_folder_is_refused_and_the_folders_are_chosen() {
    let root = scratch("lock");
    std::fs::create_dir_all(root.join("busy")).unwrap();
    // This test process is alive: its pid holds the lock.
    std::fs::write(root.join("busy/.lock"), std::process::id().to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&root)
        .args(["bench", "--suite", "suite", "--kernel", KERNEL, "--work-dir", "busy", "--inputs", "1"])
        .output()
        .expect("run misaal");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("another misaal bench") && err.contains("--work-dir"), "{err}");
    assert!(!root.join("busy").join(KERNEL).exists(), "nothing is built in a busy folder");

    // A live pid whose start time is not the one recorded: the run that
    // wrote the lock died and its pid went to another process.
    std::fs::write(root.join("busy/.lock"), format!("{} 1", std::process::id())).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&root)
        .args(["bench", "--suite", "suite", "--kernel", KERNEL, "--work-dir", "busy", "--report-dir", "mine", "--inputs", "1", "--no-interp", "--allow-unchecked"])
        .output()
        .expect("run misaal");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!root.join("busy/.lock").exists(), "the lock is released");

    // A pid that cannot be running (above the kernel's pid_max).
    std::fs::write(root.join("busy/.lock"), "4194305").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&root)
        .args(["bench", "--suite", "suite", "--kernel", KERNEL, "--work-dir", "busy", "--report-dir", "mine", "--inputs", "1", "--no-interp", "--allow-unchecked"])
        .output()
        .expect("run misaal");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(root.join("busy").join(KERNEL).join("ours.c").exists());
    assert!(root.join("mine/bench_x86.csv").exists() && root.join("mine/rule_usage_x86.csv").exists());
    assert!(!root.join("reports").exists(), "nothing goes to the default reports/");
    assert!(!root.join("busy/.lock").exists(), "the lock is released");
    let _ = std::fs::remove_dir_all(&root);
}

/// The cells of a CSV line (only `bit_exact` is ever quoted).
fn cells(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The CSV row of `root`'s run as column -> cell.
fn row_of(root: &Path, report_dir: &str) -> std::collections::HashMap<String, String> {
    let csv = std::fs::read_to_string(root.join(report_dir).join("bench_x86.csv")).unwrap();
    let mut lines = csv.lines();
    let header = cells(lines.next().unwrap());
    header.into_iter().zip(cells(lines.next().unwrap())).collect()
}

/// Whether SIMDe's AVX-512 header compiles here; else the reason to skip.
/// Whether this CPU has the feature (the name /proc/cpuinfo gives it).
fn cpu_has(flag: &str) -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|t| t.lines().filter(|l| l.starts_with("flags")).any(|l| l.split_whitespace().any(|f| f == flag)))
}

fn simde_missing() -> Option<String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let probe = dir.join(format!("simde-{}.c", std::process::id()));
    std::fs::write(&probe, "#include <simde/x86/avx512.h>\nint main(void) { return 0; }\n").unwrap();
    let ok = Command::new("cc").args(["-fsyntax-only", "-mavx2"]).arg(&probe).output().is_ok_and(|o| o.status.success());
    (!ok).then(|| "<simde/x86/avx512.h> does not compile here (apt install libsimde-dev)".to_string())
}

/// `--emulate simde` on any CPU: ours built against SIMDe, checked
/// against the interpreter only, no timing, and the llvm-mca znver4
/// estimate from a native Zen 4 build of the same C.
#[test]
fn simde_mode_checks_against_the_interpreter_and_times_nothing() {
    if let Some(why) = simde_missing() {
        misaal_testkit::skip(&why);
        return;
    }
    let root = scratch("simde");
    let (code, out, err, cell) = bench(&root, &["--inputs", "1", "--emulate", "simde"]);
    assert_eq!(cell, "yes (1 inputs, interpreter, simde)", "{out}\n{err}");
    assert_eq!(code, Some(0), "{out}\n{err}");
    let row = row_of(&root, "reports");
    assert_eq!(row["run"], "simde");
    for t in ["ours_us", "halide_us", "speedup", "naive_us", "clang_us"] {
        assert_eq!(row[t], "", "{t}: emulated time means nothing");
    }
    assert!(root.join(format!("target/misaal-bench/{KERNEL}/ours_simde.o")).exists(), "ours was built against SIMDe");
    if ["llvm-mca-19", "llvm-objdump-19", "clang-19"].iter().all(|t| Command::new(t).arg("--version").output().is_ok_and(|o| o.status.success())) {
        let cycles: f64 = row["ours_mca_cycles"].parse().unwrap_or_else(|e| panic!("ours_mca_cycles `{}`: {e}\n{out}\n{err}", row["ours_mca_cycles"]));
        assert!(cycles > 0.0 && row["ours_mca_loops"].parse::<u64>().unwrap() > 0, "{row:?}");
        assert!(root.join(format!("target/misaal-bench/{KERNEL}/ours_znver4.o")).exists(), "the estimate reads a native znver4 build");
    } else {
        misaal_testkit::skip_part("the llvm-mca check: llvm-mca-19, llvm-objdump-19 or clang-19 missing (apt install llvm-19 clang-19)");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The mode follows the CPU: a flags list with everything avx512_zen4
/// implies runs natively; the same list without avx512f builds against
/// SIMDe, and the row says why Halide's object was not run.
#[test]
fn a_cpu_without_a_required_feature_is_emulated_automatically() {
    if let Some(why) = simde_missing() {
        misaal_testkit::skip(&why);
        return;
    }
    let zen4 = "fpu sse sse2 pni ssse3 sse4_1 sse4_2 avx avx2 fma f16c avx512f avx512cd avx512vl avx512bw avx512dq avx512ifma avx512vbmi avx512_vnni avx512_bf16 avx512_vbmi2 avx512_bitalg avx512_vpopcntdq gfni";
    let root = scratch("auto");
    std::fs::write(root.join("zen4.flags"), format!("flags\t\t: {zen4}\n")).unwrap();
    std::fs::write(root.join("no512f.flags"), zen4.replace(" avx512f ", " ")).unwrap();
    // A CPU with every feature, per the file. The C is built with
    // -march=native, so this part needs a CPU that has the AVX-512 features
    // the kernel's C uses.
    let lacking: Vec<&str> = ["avx512f", "avx512bw", "avx512vl", "avx512dq"].into_iter().filter(|f| !cpu_has(f)).collect();
    if lacking.is_empty() {
        let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
            .current_dir(&root)
            .args(["bench", "--suite", "suite", "--kernel", KERNEL, "--inputs", "1", "--no-interp", "--allow-unchecked", "--cpu-flags", "zen4.flags", "--report-dir", "native"])
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(row_of(&root, "native")["run"], "native", "{text}");
    } else {
        misaal_testkit::skip_part(&format!("the native run of the AVX-512 C: this CPU lacks {}", lacking.join(", ")));
    }
    let (code, out, err, cell) = bench(&root, &["--inputs", "1", "--cpu-flags", "no512f.flags"]);
    assert_eq!(cell, "yes (1 inputs, interpreter, simde)", "{out}\n{err}");
    assert_eq!(code, Some(0));
    assert_eq!(row_of(&root, "reports")["run"], "simde");
    // Nothing compared: the row says why, naming the missing feature.
    let (_, out, err, cell) = bench(&root, &["--inputs", "1", "--cpu-flags", "no512f.flags", "--no-interp", "--allow-unchecked"]);
    assert!(cell.starts_with("unchecked") && cell.contains("lacks avx512f") && cell.contains("interpreter skipped"), "{cell}\n{out}\n{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// ARM's compile honours `--rules`, as x86's and HVX's do: a rule file
/// that does not exist fails the compile and is named.
#[test]
fn arm_compiles_with_the_rules_given() {
    let missing: Vec<&str> = ["aarch64-linux-gnu-gcc", "qemu-aarch64", "llvm-mca-19", "llvm-objdump-19"].into_iter().filter(|t| Command::new(t).arg("--version").output().is_err()).collect();
    if !missing.is_empty() {
        misaal_testkit::skip(&format!("{} not found", missing.join(", ")));
        return;
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli").join(std::process::id().to_string()).join("arm-rules");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&root)
        .args(["bench", "--target", "arm", "--suite", concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/arm"), "--kernel", "add", "--inputs", "1", "--no-interp", "--rules", "no-such-rules.egg"])
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_ne!(out.status.code(), Some(0), "{text}");
    let csv = std::fs::read_to_string(root.join("reports/bench_arm.csv")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(csv.contains("no-such-rules.egg"), "the compile was given --rules:\n{csv}\n{text}");
    let _ = std::fs::remove_dir_all(&root);
}

/// The intrinsics `bench/c/simde_gaps.h` adds to SIMDe give the CPU's bytes:
/// one program, built natively and against SIMDe plus the gaps header,
/// prints every one of them on the same seeded inputs (and edge counts of
/// the shifts); the two outputs must be equal. Needs an AVX-512 CPU (the
/// native side) and SIMDe.
#[test]
fn simde_gaps_give_the_cpus_bytes() {
    if let Some(why) = simde_missing() {
        misaal_testkit::skip(&why);
        return;
    }
    if !(std::arch::is_x86_feature_detected!("avx512bw") && std::arch::is_x86_feature_detected!("avx512vl")) {
        misaal_testkit::skip("this CPU lacks AVX-512 BW/VL: nothing native to compare the SIMDe gaps with");
        return;
    }
    let dir = scratch("simde-gaps");
    let gaps = dir.join("simde_gaps.h");
    std::fs::write(&gaps, misaal_bench::x86::SIMDE_GAPS).unwrap();
    let src = dir.join("gaps.c");
    std::fs::write(
        &src,
        r#"#include <stdio.h>
#include <stdint.h>
#include <string.h>
#ifndef MISAAL_SIMDE
#include <immintrin.h>
#endif
static uint64_t s = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
/* Random words, one in four an edge value. */
static void fill(void *p, size_t n) {
    static const uint64_t edge[] = {0, ~0ull, 0x8000800080008000ull, 0x7fff7fff7fff7fffull, 0x00ff00ff00ff00ffull, 0x8000000080000000ull};
    uint64_t *w = p;
    for (size_t i = 0; i < n / 8; i++) { uint64_t r = next(); w[i] = (r & 3) == 0 ? edge[(r >> 8) % 6] : next(); }
}
static void out(const void *p, size_t n) { const unsigned char *b = p; for (size_t i = 0; i < n; i++) printf("%02x", b[i]); printf("\n"); }
int main(void) {
    for (int k = 0; k < 200; k++) {
        __m512i z; __m256i y; fill(&z, 64); fill(&y, 32);
        __m512i r512; __m256i r256;
        r512 = _mm512_cvtepu8_epi16(y); out(&r512, 64);
        r512 = _mm512_cvtepi8_epi32(_mm256_castsi256_si128(y)); out(&r512, 64);
        r512 = _mm512_cvtepi16_epi32(y); out(&r512, 64);
        r512 = _mm512_cvtepu16_epi32(y); out(&r512, 64);
        r512 = _mm512_srai_epi32(z, 0); out(&r512, 64);
        r512 = _mm512_srai_epi32(z, 7); out(&r512, 64);
        r512 = _mm512_srai_epi32(z, 31); out(&r512, 64);
        r256 = _mm512_cvtusepi16_epi8(z); out(&r256, 32);
        __m512i z2; fill(&z2, 64);
        r512 = _mm512_mulhi_epu16(z, z2); out(&r512, 64);
        r512 = _mm512_madd_epi16(z, z2); out(&r512, 64);
        r256 = _mm512_cvtepi32_epi16(z); out(&r256, 32);
        r256 = _mm256_srai_epi64(y, 0); out(&r256, 32);
        r256 = _mm256_srai_epi64(y, 1); out(&r256, 32);
        r256 = _mm256_srai_epi64(y, 33); out(&r256, 32);
        r256 = _mm256_srai_epi64(y, 63); out(&r256, 32);
        r256 = _mm256_srai_epi64(y, 64); out(&r256, 32);
        r512 = _mm512_cvtepi32_epi64(y); out(&r512, 64);
        r512 = _mm512_srai_epi64(z, 0); out(&r512, 64);
        r512 = _mm512_srai_epi64(z, 31); out(&r512, 64);
        r512 = _mm512_srai_epi64(z, 63); out(&r512, 64);
        r512 = _mm512_srai_epi64(z, 64); out(&r512, 64);
        /* Counts of every size, and some under 32. */
        __m512i small = _mm512_and_si512(z2, _mm512_set1_epi32(31));
        r512 = _mm512_srav_epi32(z, z2); out(&r512, 64);
        r512 = _mm512_srav_epi32(z, small); out(&r512, 64);
        r512 = _mm512_srav_epi64(z, z2); out(&r512, 64);
        r512 = _mm512_srav_epi64(z, _mm512_and_si512(z2, _mm512_set1_epi64(63))); out(&r512, 64);
        r512 = _mm512_srav_epi64(z, _mm512_and_si512(z2, _mm512_set1_epi64(127))); out(&r512, 64);
        __mmask32 k32 = _mm512_cmpgt_epi16_mask(z, z2); out(&k32, 4);
        k32 = _mm512_cmpgt_epi16_mask(z, z); out(&k32, 4);
        __m128i r128;
        r128 = _mm256_cvtepi32_epi16(y); out(&r128, 16);
        r128 = _mm256_cvtepi16_epi8(y); out(&r128, 16);
        r128 = _mm256_cvtusepi16_epi8(y); out(&r128, 16);
        r256 = _mm256_broadcast_i32x4(_mm256_castsi256_si128(y)); out(&r256, 32);
        r256 = _mm256_broadcast_i64x2(_mm256_extracti128_si256(y, 1)); out(&r256, 32);
        r128 = _mm_srav_epi16(_mm256_castsi256_si128(y), _mm256_castsi256_si128(_mm256_and_si256(y, _mm256_set1_epi16(31)))); out(&r128, 16);
        r128 = _mm_srav_epi16(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1)); out(&r128, 16);
        __m256i y2; fill(&y2, 32);
        r256 = _mm256_srav_epi16(y, y2); out(&r256, 32);
        r256 = _mm256_srav_epi16(y, _mm256_and_si256(y2, _mm256_set1_epi16(15))); out(&r256, 32);
        r512 = _mm512_cvtepu32_epi64(y); out(&r512, 64);
        r256 = _mm512_cvtusepi32_epi16(z); out(&r256, 32);
        r256 = _mm512_cvtusepi64_epi32(z); out(&r256, 32);
        r128 = _mm256_cvtusepi32_epi16(y); out(&r128, 16);
        r128 = _mm_sllv_epi16(_mm256_castsi256_si128(y), _mm256_castsi256_si128(y2)); out(&r128, 16);
        r128 = _mm_srlv_epi16(_mm256_castsi256_si128(y), _mm256_castsi256_si128(_mm256_and_si256(y2, _mm256_set1_epi16(31)))); out(&r128, 16);
        r256 = _mm256_sllv_epi16(y, _mm256_and_si256(y2, _mm256_set1_epi16(31))); out(&r256, 32);
        r256 = _mm256_srlv_epi16(y, y2); out(&r256, 32);
        r256 = _mm256_mullo_epi64(y, y2); out(&r256, 32);
        r128 = _mm256_cvtepi64_epi32(y); out(&r128, 16);
        r128 = _mm256_cvtsepi64_epi32(y); out(&r128, 16);
        r128 = _mm256_cvtusepi64_epi32(y); out(&r128, 16);
    }
    return 0;
}
"#,
    )
    .unwrap();
    let run = |name: &str, flags: &[&str]| -> String {
        let exe = dir.join(name);
        let o = Command::new("cc").args(flags).arg(&src).arg("-o").arg(&exe).output().expect("cc runs");
        assert!(o.status.success(), "cc {flags:?}: {}", String::from_utf8_lossy(&o.stderr));
        let r = Command::new(&exe).output().expect("runs");
        assert!(r.status.success());
        String::from_utf8(r.stdout).unwrap()
    };
    let native = run("native", &["-O2", "-march=native"]);
    let gaps_flag = format!("{}", gaps.display());
    let emulated = run("simde", &["-O2", "-mavx2", "-Wno-psabi", "-DMISAAL_SIMDE", "-DSIMDE_ENABLE_NATIVE_ALIASES", "-include", "simde/x86/avx512.h", "-include", &gaps_flag]);
    // One line per `out(&...)` call in the loop, 200 rounds.
    let per_round = std::fs::read_to_string(&src).unwrap().matches("out(&").count();
    assert_eq!(native.lines().count(), 200 * per_round);
    assert_eq!(emulated.lines().count(), 200 * per_round);
    for (k, (n, e)) in native.lines().zip(emulated.lines()).enumerate() {
        assert_eq!(n, e, "line {k} (output {} of the {per_round} per round) differs", k % per_round);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
