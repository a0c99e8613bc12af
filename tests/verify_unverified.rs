//! `misaal verify` audits only rule instances whose x86 specs met their
//! oracle (issue 9, defect 3): an instance over a spec no current evidence
//! vouches for is counted as `unverified-spec`, never proved, unless
//! `--include-unverified` is given. An audit that left instances unaudited
//! has not passed: it exits 4 unless `--allow-unaudited` (issue 27).
//!
//! The unverified specs come from an evidence folder holding only the AVX2
//! machine's file (`--evidence`), so these run the same on every machine.
//! This runs the built binary, so it fails if `src/verify.rs` stops filtering.

use std::path::{Path, PathBuf};
use std::process::Command;

const EVIDENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/isa/specs/x86/evidence");

/// The count on a summary line such as `  unverified-spec   1  (not audited: ...)`.
fn summary_count(stdout: &str, verdict: &str) -> Option<usize> {
    stdout.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some(verdict)).then(|| w.next()?.parse().ok()).flatten()
    })
}

/// A scratch folder holding an evidence folder with only the committed
/// evidence of the AVX2 machine (no AVX-512 spec is verified by it).
fn avx2_only_evidence(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("misaal-verify-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ev = dir.join("evidence");
    std::fs::create_dir_all(&ev).unwrap();
    let avx2 = Path::new(EVIDENCE).join("amd-epyc-unknown.tsv");
    let text = std::fs::read_to_string(&avx2).unwrap();
    assert!(text.contains("\n_mm_add_epi8\tsilicon\t") && !text.contains("\n_mm512_"), "{} should hold SSE-AVX2 rows only", avx2.display());
    std::fs::write(ev.join("amd-epyc-unknown.tsv"), text).unwrap();
    (dir, ev)
}

fn verify(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(dir).args(["verify", "--no-cache", "--cases", "10", "--out", "v.csv"]).args(args).output().expect("run misaal verify");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let csv = std::fs::read_to_string(dir.join("v.csv")).unwrap_or_default();
    (out.status.code(), stdout, csv)
}

#[test]
fn verify_leaves_out_instances_over_unverified_specs() {
    let (dir, ev) = avx2_only_evidence("unverified");
    let ev = ev.to_str().unwrap();
    // The verified partner every x86 CPU runs, and a 512-bit add the AVX2
    // machine's evidence does not vouch for.
    let (base, wide, ty) = ("_mm_add_epi8", "_mm512_add_epi8", "(u 8 64)");
    std::fs::write(
        dir.join("mixed.egg"),
        format!(
            "(rewrite (add (u 8 16) ?a ?b) (x86 {base} ?a ?b) :name \"add-verified\")\n\
             (rewrite (add {ty} ?a ?b) (x86 {wide} ?a ?b) :name \"add-unverified\")\n"
        ),
    )
    .unwrap();

    // Default: the wide instance is excluded, counted, named with its
    // reason, and the audit does not pass (exit 4).
    let (code, stdout, csv) = verify(&dir, &["--rules", "mixed.egg", "--evidence", ev]);
    assert_eq!(code, Some(4), "{stdout}");
    assert!(stdout.contains("2 rules, 1 instantiations"), "only the verified instance is audited:\n{stdout}");
    assert_eq!(summary_count(&stdout, "proved"), Some(1), "{stdout}");
    assert_eq!(summary_count(&stdout, "unverified-spec"), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("e.g. {wide}:")), "the summary names the unverified spec:\n{stdout}");
    assert!(stdout.contains("NOT AUDITED: 1 instantiation(s)"), "{stdout}");
    assert!(csv.contains("add-verified,-,proved,"), "{csv}");
    let row = csv.lines().find(|l| l.starts_with("add-unverified,-,unverified-spec,0.0,0,")).unwrap_or_else(|| panic!("{csv}"));
    assert!(row.contains(&format!("{wide}: `{wide}` was never checked against its oracle")), "{csv}");
    assert!(!csv.contains("add-unverified,-,proved"), "{csv}");

    // --allow-unaudited: the same audit, exit 0, and the summary says so.
    let (code, stdout, _) = verify(&dir, &["--rules", "mixed.egg", "--evidence", ev, "--allow-unaudited"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("1 not audited (unverified specs), allowed by --allow-unaudited"), "{stdout}");

    // --include-unverified: the wide instance is audited (and proved).
    let (code, stdout, csv) = verify(&dir, &["--rules", "mixed.egg", "--evidence", ev, "--include-unverified"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("--include-unverified"), "{stdout}");
    assert!(stdout.contains("2 rules, 2 instantiations"), "{stdout}");
    assert_eq!(summary_count(&stdout, "proved"), Some(2), "{stdout}");
    assert_eq!(summary_count(&stdout, "unverified-spec"), Some(0), "{stdout}");
    assert!(csv.contains("add-unverified,-,proved,"), "{csv}");

    // With the committed evidence (the Zen 4's included) the wide add is
    // verified on every machine: both instances audited and proved.
    let (code, stdout, _) = verify(&dir, &["--rules", "mixed.egg"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!((summary_count(&stdout, "proved"), summary_count(&stdout, "unverified-spec")), (Some(2), Some(0)), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The two broken VNNI rules of issue 27: without AVX-512 evidence nothing
/// is audited and `verify` fails (4, not 0); with the committed evidence
/// they are refuted (1) on every machine.
#[test]
fn broken_vnni_rules_are_refuted_not_passed() {
    let (dir, ev) = avx2_only_evidence("vnni");
    for f in ["dpbusd-saturating.egg", "dpbusd-operands-swapped.egg"] {
        let rules = format!("{}/tests/broken-rules/{f}", env!("CARGO_MANIFEST_DIR"));
        let (code, stdout, _) = verify(&dir, &["--rules", &rules, "--evidence", ev.to_str().unwrap()]);
        assert_eq!(code, Some(4), "{f}: an audit that audited nothing has not passed:\n{stdout}");
        assert_eq!(summary_count(&stdout, "proved").unwrap_or(0) + summary_count(&stdout, "refuted").unwrap_or(0), 0, "{stdout}");
        let (code, stdout, _) = verify(&dir, &["--rules", &rules]);
        assert_eq!(code, Some(1), "{f}: refuted through the committed evidence:\n{stdout}");
        assert!(summary_count(&stdout, "refuted").unwrap_or(0) > 0 && summary_count(&stdout, "unverified-spec") == Some(0), "{stdout}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
