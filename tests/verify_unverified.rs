//! `misaal verify` audits only rule instances whose x86 specs met their
//! oracle (issue 9, defect 3): an instance over a spec that
//! `isa/specs/x86/STATUS.tsv` does not vouch for is counted as
//! `unverified-spec`, never proved, unless `--include-unverified` is given.
//! This runs the built binary, so it fails if `src/verify.rs` stops filtering.

use std::process::Command;

const STATUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/isa/specs/x86/STATUS.tsv");

/// The status column of `intrinsic`'s row in the committed STATUS.tsv.
fn status_of(table: &str, intrinsic: &str) -> Option<String> {
    table.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let mut cols = l.split('\t');
        (cols.next() == Some(intrinsic)).then(|| cols.next().unwrap_or("").to_string())
    })
}

fn verified(status: Option<&str>) -> bool {
    matches!(status, Some("silicon" | "emulator" | "proven-twin"))
}

/// The count on a summary line such as `  unverified-spec   1  (not audited: ...)`.
fn summary_count(stdout: &str, verdict: &str) -> Option<usize> {
    stdout.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some(verdict)).then(|| w.next()?.parse().ok()).flatten()
    })
}

#[test]
fn verify_leaves_out_instances_over_unverified_specs() {
    let table = std::fs::read_to_string(STATUS).expect("read isa/specs/x86/STATUS.tsv");
    // The verified partner every x86 CPU runs.
    let base = "_mm_add_epi8";
    if !verified(status_of(&table, base).as_deref()) {
        eprintln!("skipped: {STATUS} does not mark `{base}` silicon/proven-twin, so there is no verified rule to contrast with");
        return;
    }
    // A 512-bit add that STATUS.tsv does not vouch for (on an AVX2-only
    // machine all of them are `skipped`).
    let candidates = [("_mm512_add_epi8", "(u 8 64)"), ("_mm512_add_epi16", "(u 16 32)"), ("_mm512_add_epi32", "(u 32 16)"), ("_mm512_add_epi64", "(u 64 8)")];
    let Some(&(wide, ty)) = candidates.iter().find(|(name, _)| !verified(status_of(&table, name).as_deref())) else {
        eprintln!(
            "skipped: {STATUS} marks every one of {:?} silicon/proven-twin (this STATUS.tsv was written on an AVX-512 machine), so no unverified spec is left to exclude",
            candidates.iter().map(|c| c.0).collect::<Vec<_>>()
        );
        return;
    };
    let row = status_of(&table, wide);
    eprintln!("using `{wide}`, whose STATUS.tsv status is {row:?}");

    let dir = std::env::temp_dir().join(format!("misaal-verify-unverified-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mixed.egg"),
        format!(
            "(rewrite (add (u 8 16) ?a ?b) (x86 {base} ?a ?b) :name \"add-verified\")\n\
             (rewrite (add {ty} ?a ?b) (x86 {wide} ?a ?b) :name \"add-unverified\")\n"
        ),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
            .current_dir(&dir)
            .args(["verify", "--rules", "mixed.egg", "--no-cache", "--cases", "10", "--out", "v.csv"])
            .args(extra)
            .output()
            .expect("run misaal verify");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let csv = std::fs::read_to_string(dir.join("v.csv")).unwrap_or_default();
        (out.status.code(), stdout, csv)
    };

    // Default: the wide instance is excluded, counted, and named with its reason.
    let (code, stdout, csv) = run(&[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("2 rules, 1 instantiations"), "only the verified instance is audited:\n{stdout}");
    assert_eq!(summary_count(&stdout, "proved"), Some(1), "{stdout}");
    assert_eq!(summary_count(&stdout, "unverified-spec"), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("e.g. {wide}:")), "the summary names the unverified spec:\n{stdout}");
    assert!(csv.contains("add-verified,-,proved,"), "{csv}");
    assert!(csv.contains(&format!("add-unverified,-,unverified-spec,0.0,0,\"{wide}: ")), "{csv}");
    assert!(!csv.contains("add-unverified,-,proved"), "{csv}");

    // --include-unverified: the wide instance is audited (and proved).
    let (code, stdout, csv) = run(&["--include-unverified"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("--include-unverified"), "{stdout}");
    assert!(stdout.contains("2 rules, 2 instantiations"), "{stdout}");
    assert_eq!(summary_count(&stdout, "proved"), Some(2), "{stdout}");
    assert_eq!(summary_count(&stdout, "unverified-spec"), Some(0), "{stdout}");
    assert!(csv.contains("add-unverified,-,proved,"), "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}
