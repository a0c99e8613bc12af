//! `rulesets/x86.verdicts.tsv` ships the proofs of the bundled rules, so a
//! fresh checkout compiles every benchmark without proving a rule first. If a
//! rule or a spec changes, its key changes, the shipped entry no longer
//! answers, and this test fails until the file is regenerated with
//!     misaal verify --rules x86 --no-cache --export-verdicts rulesets/x86.verdicts.tsv

use misaal_compiler::isel::{Options, Target, rule_book, select_module_with};
use misaal_frontends::stmt::parse_module;

#[test]
fn the_shipped_verdicts_cover_every_benchmark() {
    let t = Target::x86().expect("the bundled x86 target loads");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("shipped-verdicts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // An empty local cache: only the shipped layer can answer.
    let local = dir.join("verify.tsv");
    let o = Options { verdict_cache: Some(local.clone()), ..Options::default() };
    let book = rule_book(&t, &o).expect("the bundled ruleset loads");
    let stmts = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/stmt");
    let mut files: Vec<_> = std::fs::read_dir(stmts).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "stmt")).collect();
    files.sort();
    assert!(files.len() >= 33);
    for f in &files {
        let m = parse_module(&f.display().to_string(), &std::fs::read_to_string(f).unwrap()).unwrap();
        let s = select_module_with(&t, &book, &m, &o).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let _ = s;
        // A verdict proved now would have been saved to the local cache.
        assert!(
            !local.exists(),
            "{}: compiling proved rule instances that rulesets/x86.verdicts.tsv lacks; regenerate it:\n    misaal verify --rules x86 --no-cache --export-verdicts rulesets/x86.verdicts.tsv\nnew: {}",
            f.display(),
            std::fs::read_to_string(&local).unwrap_or_default().lines().take(3).collect::<Vec<_>>().join("\n")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
