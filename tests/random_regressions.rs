//! Random pipelines (benchmarks/random, issue 30) as `misaal bench` runs
//! them: every minimized regression case in `tests/random_regressions/`
//! holds what its `EXPECT` says, and a fixed-seed batch of fresh random
//! pipelines is bit-exact.
//!
//! A case is a one-kernel suite (`stmt/<name>.stmt`, `manifest.json`,
//! with `program.json`, the program benchmarks/random/build.py turns into
//! Halide). There are no Halide objects in it: the check is against the
//! reference interpreter on 3 input sets (random, all-maximum, edge mix).
//! `EXPECT` is `bit-exact` (a miscompile fixed; the row must be `yes`) or
//! `fails: <why>` (a known open bug; the row must still fail, and this test
//! fails once it is fixed, so the case gets flipped).
//!
//! The fresh batch needs Halide's Python bindings (scripts/setup.sh
//! installs them) and runs `MISAAL_RANDOM_COUNT` pipelines (default
//! [`CI_COUNT`]; `MISAAL_SLOW=1`: [`SLOW_COUNT`]) of seed
//! `MISAAL_RANDOM_SEED` (default [`CI_SEED`]), checked against Halide's
//! objects and the interpreter.

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The fixed seed and count of the batch `scripts/test.sh` runs (its fast
/// tier): 25 pipelines took 39 s in a release build on 2 shared cores, 100
/// about 3 minutes (benchmarks/random/README.md), and 12 took 66 s in CI's
/// test build beside the other tests; 6 keep CI within its budget.
const CI_SEED: u64 = 30;
const CI_COUNT: usize = 6;
/// The batch with `MISAAL_SLOW=1`.
const SLOW_COUNT: usize = 1000;

/// Runs `misaal bench` on `suite`; each row's (kernel, bit_exact), or why
/// the run could not be read.
fn bench(suite: &Path, scratch: &Path, inputs: usize) -> Result<Vec<(String, String)>, String> {
    let (work, reports) = (scratch.join("work"), scratch.join("reports"));
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .arg("bench")
        .arg("--suite")
        .arg(suite)
        .arg("--work-dir")
        .arg(&work)
        .arg("--report-dir")
        .arg(&reports)
        .args(["--inputs", &inputs.to_string()])
        .output()
        .map_err(|e| format!("misaal bench: {e}"))?;
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(reports.join("bench_x86.csv")).map_err(|e| format!("no bench_x86.csv ({e}):\n{log}"))?;
    let header: Vec<String> = csv_cells(csv.lines().next().unwrap_or(""));
    let col = |name: &str| header.iter().position(|h| h == name).ok_or(format!("no `{name}` column in {header:?}"));
    let (k, b) = (col("kernel")?, col("bit_exact")?);
    Ok(csv.lines().skip(1).map(csv_cells).map(|c| (c[k].clone(), c[b].clone())).collect())
}

/// The cells of a CSV line whose quoted cells hold commas.
fn csv_cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    for ch in line.chars() {
        match (ch, quoted) {
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(String::new()),
            (c, _) => cells.last_mut().expect("one cell").push(c),
        }
    }
    cells
}

/// What keeps the bench from checking x86 code here, if anything: `cc`
/// and Halide's runtime header are needed, and on a CPU without the
/// suite's AVX-512 features SIMDe (the bench then says `skipped`).
fn bench_missing() -> Option<String> {
    if Command::new("cc").arg("--version").output().is_err() {
        return Some("cc not found".into());
    }
    let py = Command::new("python3").args(["-c", "import halide"]).output();
    if !py.is_ok_and(|o| o.status.success()) {
        return Some("Halide's Python package is missing (scripts/setup.sh pip-installs halide==21.0.0)".into());
    }
    None
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("random_regressions").join(std::process::id().to_string()).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_regression_case_holds_its_expectation() {
    if let Some(why) = bench_missing() {
        misaal_testkit::skip(&why);
        return;
    }
    let dir = Path::new(ROOT).join("tests/random_regressions");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("EXPECT").is_file()).collect();
    cases.sort();
    assert!(!cases.is_empty(), "no case in {}", dir.display());
    let mut wrong = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let expect = std::fs::read_to_string(case.join("EXPECT")).unwrap();
        let want_exact = match expect.trim() {
            "bit-exact" => true,
            e if e.starts_with("fails:") => false,
            e => panic!("{name}/EXPECT: `{e}` is neither `bit-exact` nor `fails: <why>`"),
        };
        let rows = bench(case, &scratch(&name), 3).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(rows.len(), 1, "{name}: a case is one kernel: {rows:?}");
        let cell = &rows[0].1;
        if cell.starts_with("skipped") || cell.starts_with("unchecked") {
            misaal_testkit::skip_part(&format!("{name}: {cell}"));
            continue;
        }
        match (want_exact, cell.starts_with("yes")) {
            (true, false) => wrong.push(format!("{name}: expected bit-exact, got `{cell}`")),
            (false, true) => wrong.push(format!("{name}: expected `{}` but it is bit-exact now: flip EXPECT to `bit-exact`", expect.trim())),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{} of {} cases:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
}

/// A fresh batch: `benchmarks/random/generate.py` then `misaal bench`
/// with Halide's objects and the interpreter; every row must be `yes`.
#[test]
fn a_fixed_seed_batch_of_random_pipelines_is_bit_exact() {
    if let Some(why) = bench_missing() {
        misaal_testkit::skip(&why);
        return;
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let slow = misaal_testkit::slow();
    let count: usize = env("MISAAL_RANDOM_COUNT").map(|v| v.parse().expect("MISAAL_RANDOM_COUNT")).unwrap_or(if slow { SLOW_COUNT } else { CI_COUNT });
    let seed: u64 = env("MISAAL_RANDOM_SEED").map(|v| v.parse().expect("MISAAL_RANDOM_SEED")).unwrap_or(CI_SEED);
    let dir = scratch("batch");
    let suite = dir.join("suite");
    let generated = Command::new("python3")
        .arg(Path::new(ROOT).join("benchmarks/random/generate.py"))
        .args(["--count", &count.to_string(), "--seed", &seed.to_string()])
        // Halide's objects for this CPU: its avx512_zen4 code may use AMD's
        // SSE4a (`insertq`), which an Intel CPU with AVX-512 lacks.
        .args(["--object-target", "host"])
        .arg("--suite")
        .arg(&suite)
        .output()
        .expect("python3");
    let glog = format!("{}{}", String::from_utf8_lossy(&generated.stdout), String::from_utf8_lossy(&generated.stderr));
    assert!(generated.status.success(), "generate.py --count {count} --seed {seed}:\n{glog}");
    let rows = bench(&suite, &dir, 3).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), count, "one row per pipeline");
    let skipped = rows.iter().filter(|(_, c)| c.starts_with("skipped")).count();
    if skipped == rows.len() {
        misaal_testkit::skip(&format!("every pipeline skipped: {}", rows[0].1));
        return;
    }
    let bad: Vec<String> = rows.iter().filter(|(_, c)| !c.starts_with("yes") && !c.starts_with("skipped")).map(|(k, c)| format!("{k}: {c}")).collect();
    assert!(
        bad.is_empty(),
        "{} of {count} random pipelines (seed {seed}) not bit-exact; minimize each with\n  python3 benchmarks/random/minimize.py --suite {} --kernel NAME --case tests/random_regressions/NAME\n{}",
        bad.len(),
        suite.display(),
        bad.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
