//! `isa/specs/<target>/DIGESTS.tsv` records each spec's semantics digest
//! with a key of what it is computed from, so that a compile checks a
//! spec's status against the evidence without unrolling it. A stale row
//! is never wrong (it is ignored, and the spec unrolled), only slow: this
//! test keeps the shipped memos current.

use misaal_isa::{DIGEST_MEMO_FILE, SpecLibrary};
use misaal_verifier::prekey::ENGINE_DIGEST;
use std::collections::HashMap;

#[test]
fn the_shipped_digest_memos_are_current() {
    for isa in [&misaal_rulesets::X86, &misaal_rulesets::ARM, &misaal_rulesets::HVX] {
        let dir = isa.spec_dir();
        let lib = SpecLibrary::load_dir(&dir).unwrap_or_else(|d| panic!("{d}"));
        let path = dir.join(DIGEST_MEMO_FILE);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let rows: HashMap<&str, (&str, &str)> = text.lines().filter(|l| !l.starts_with('#')).filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, (f.next()?, f.next()?)))
        }).collect();
        let stale: Vec<&str> = lib
            .instrs()
            .iter()
            .map(|i| i.name.as_str())
            .filter(|n| {
                let key = lib.text_key(n, ENGINE_DIGEST).expect("a spec that unrolls has its source");
                rows.get(n).copied() != Some((key.as_str(), lib.digest(n).expect("unrolls")))
            })
            .collect();
        assert!(
            stale.is_empty() && rows.len() == lib.len(),
            "{}: {} of {} specs have no current row in {} ({} rows; a spec or isa/src changed); regenerate it with\n    scripts/run.sh isa digests --target {}\nfirst: {}",
            isa.name,
            stale.len(),
            lib.len(),
            path.display(),
            rows.len(),
            isa.name,
            stale.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
        // A compile's lazy library takes every digest from the memo.
        let mut lazy = SpecLibrary::load_dir_lazy(&dir).unwrap();
        lazy.use_digest_memo(&path, ENGINE_DIGEST).unwrap_or_else(|d| panic!("{d}"));
        let differ: Vec<&str> = lib.instrs().iter().map(|i| i.name.as_str()).filter(|n| lazy.digest(n) != lib.digest(n)).collect();
        assert!(differ.is_empty(), "{}: the memo's digest differs from the spec's for {differ:?}", isa.name);
    }
}
