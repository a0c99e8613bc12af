//! `misaal bench` as a user runs it, on a scratch copy of the suite that has
//! no Halide objects: a row may say `yes` only when something was compared
//! byte for byte (Halide's object or the reference interpreter).
//!
//! Needs `cc` and HalideRuntime.h from the pip `halide` package
//! (`python3 -m pip install halide==21.0.0`), as `misaal bench` does.

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
    // bit_exact holds commas inside quotes; the columns before it do not.
    let cell = row.splitn(col + 1, ',').nth(col).unwrap().trim_start_matches('"');
    (out.status.code(), stdout, stderr, cell.to_string())
}

#[test]
fn nothing_compared_is_unchecked_and_fails_the_run() {
    let root = scratch("unchecked");
    let (code, out, err, cell) = bench(&root, &["--no-interp", "--inputs", "1"]);
    assert!(cell.starts_with("unchecked"), "bit_exact must be `unchecked` when neither Halide nor the interpreter ran, got `{cell}`\n{out}\n{err}");
    assert!(!cell.contains("yes"), "{cell}");
    assert!(cell.contains("no Halide object") && cell.contains("interpreter skipped"), "{cell}");
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
    let _ = std::fs::remove_dir_all(&root);
}

/// A work folder held by a live run is refused with the way out named; one
/// left behind by a run that died is taken over; `--work-dir` and
/// `--report-dir` put everything where they say.
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
        .args(["bench", "--suite", "suite", "--kernel", KERNEL, "--work-dir", "busy", "--report-dir", "mine", "--inputs", "1"])
        .output()
        .expect("run misaal");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!root.join("busy/.lock").exists(), "the lock is released");

    // A pid that cannot be running (above the kernel's pid_max).
    std::fs::write(root.join("busy/.lock"), "4194305").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&root)
        .args(["bench", "--suite", "suite", "--kernel", KERNEL, "--work-dir", "busy", "--report-dir", "mine", "--inputs", "1"])
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
