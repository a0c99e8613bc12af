//! The skip ledger. A test that cannot run here (a CPU feature, an
//! emulator or a tool is missing) must be counted as skipped, never as
//! passed. The standard test harness has no runtime skip, so such a test
//! calls [`skip`] and returns: the harness counts it passed, and
//! `scripts/test.sh` moves every test named in the ledger from passed to
//! skipped, printing each reason. A check skipped inside a test that
//! otherwise ran ([`skip_part`]) is listed as a skipped check.
//!
//! The ledger is the file named by `MISAAL_SKIP_LOG`, one line per skip:
//! `whole|part <TAB> binary::test <TAB> reason`. Without the variable (a
//! plain `cargo test`) the reason goes to stderr only.

use std::io::Write;

/// Records that the calling test skips entirely, and why (naming what is
/// missing). The caller returns right after.
pub fn skip(reason: &str) {
    record("whole", reason);
}

/// Records that one check of the calling test was skipped, and why; the
/// test's other checks ran.
pub fn skip_part(reason: &str) {
    record("part", reason);
}

fn record(kind: &str, reason: &str) {
    let binary = std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned())).unwrap_or_default();
    // Cargo names test binaries `<name>-<hash>`.
    let binary = binary.rsplit_once('-').map(|(n, _)| n.to_string()).unwrap_or(binary);
    let test = std::thread::current().name().unwrap_or("main").to_string();
    let reason = reason.replace(['\n', '\t'], " ");
    eprintln!("SKIPPED ({kind}) {binary}::{test}: {reason}");
    if let Some(path) = std::env::var_os("MISAAL_SKIP_LOG") {
        // One short line per append: concurrent tests do not interleave.
        let line = format!("{kind}\t{binary}::{test}\t{reason}\n");
        if let Ok(mut f) = std::fs::OpenOptions::new().append(true).create(true).open(path) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_skip_is_written_to_the_ledger_with_its_test_and_reason() {
        let path = std::env::temp_dir().join(format!("misaal-skip-ledger-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        // SAFETY: this crate's only test; no other thread reads the environment.
        unsafe { std::env::set_var("MISAAL_SKIP_LOG", &path) };
        super::skip("no\tqemu-aarch64\nhere");
        super::skip_part("llvm-mca-19 missing");
        let text = std::fs::read_to_string(&path).expect("the ledger");
        let _ = std::fs::remove_file(&path);
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0][0], "whole");
        assert!(lines[0][1].ends_with("::tests::a_skip_is_written_to_the_ledger_with_its_test_and_reason"), "{text}");
        assert_eq!(lines[0][2], "no qemu-aarch64 here");
        assert_eq!((lines[1][0], lines[1][2]), ("part", "llvm-mca-19 missing"));
    }
}
