//! A lazily loaded library (what `misaal compile` uses) must mean the same
//! as an eager one: same specs, same semantics, and a spec that does not
//! unroll is never silently treated as present.

use misaal_isa::status::{SpecStatus, StatusRow};
use misaal_isa::{SpecLibrary, StatusTable};

const GOOD: &str = "instr good(a: bv16, b: bv16) -> bv16 [x86 sse2 paddb]\nFOR j := 0 to 1\n    i := j*8\n    dst[i+7:i] := a[i+7:i] + b[i+7:i]\nENDFOR\n";
const BAD: &str = "instr bad(a: bv32) -> bv32 [x86 sse2 nop]\ndst[7:0] := a[7:0]\n";

fn sources() -> Vec<(String, String)> {
    vec![("good.sema".into(), GOOD.into()), ("bad.sema".into(), BAD.into())]
}

fn write_dir(name: &str, files: &[(String, String)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("misaal-lazy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (f, t) in files {
        std::fs::write(dir.join(f), t).unwrap();
    }
    dir
}

#[test]
fn eager_load_reports_what_does_not_unroll() {
    let err = SpecLibrary::from_sources(&sources()).err().expect("`bad` never writes bits 8..31");
    assert!(err.to_string().contains("never written"), "{err}");
}

#[test]
fn lazy_load_defers_unrolling_but_never_hides_a_failure() {
    let dir = write_dir("mixed", &sources());
    let lib = SpecLibrary::load_dir_lazy(&dir).expect("parses and name-checks");
    assert_eq!(lib.len(), 2);
    assert!(lib.instr("bad").is_some(), "the signature is there without unrolling");
    assert!(lib.get("bad").is_none(), "a spec that does not unroll has no semantics");
    let why = lib.unrolled("bad").expect("listed").err().expect("fails to unroll");
    assert!(why.to_string().contains("never written"), "{why}");
    assert_eq!(lib.iter().map(|(i, _)| i.name.clone()).collect::<Vec<_>>(), vec!["good"]);
    // Even with a silicon row, the status check names the failure instead
    // of skipping the spec.
    let mut status = StatusTable::default();
    let row = StatusRow { status: SpecStatus::Silicon, cases: 1000, digest: "0".repeat(32), evidence: "test".into() };
    status.rows.insert("bad".into(), row);
    let reason = status.verified_in(&lib, "bad").err().expect("not verified");
    assert!(reason.contains("does not unroll"), "{reason}");
    assert!(StatusTable::default().verified_in(&lib, "good").err().expect("no row").contains("never checked"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn lazy_and_eager_agree_on_semantics_and_digests() {
    let files = vec![("good.sema".to_string(), GOOD.to_string())];
    let dir = write_dir("good", &files);
    let lazy = SpecLibrary::load_dir_lazy(&dir).unwrap();
    let eager = SpecLibrary::load_dir(&dir).unwrap();
    let (_, a) = lazy.get("good").unwrap();
    let (_, b) = eager.get("good").unwrap();
    assert_eq!(misaal_isa::status::digest(a), misaal_isa::status::digest(b));
    assert_eq!(lazy.digest("good"), Some(misaal_isa::status::digest(b).as_str()));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_bundled_x86_library_loads_the_same_lazily() {
    let dir = misaal_isa::bundled_spec_dir("x86");
    let lazy = SpecLibrary::load_dir_lazy(&dir).unwrap();
    let eager = SpecLibrary::load_dir(&dir).unwrap();
    assert_eq!(lazy.len(), eager.len());
    for (i, s) in eager.iter().take(200) {
        assert_eq!(lazy.digest(&i.name), Some(misaal_isa::status::digest(s).as_str()), "{}", i.name);
    }
}

#[test]
fn withheld_bodies_keep_signatures_and_refuse_semantics() {
    let files = vec![("good.sema".to_string(), GOOD.to_string())];
    let dir = write_dir("withheld", &files);
    let mut lib = SpecLibrary::load_dir_lazy(&dir).unwrap();
    lib.withhold_bodies(|_| false, "unverified here");
    let i = lib.instr("good").expect("signature kept");
    assert_eq!(i.params.len(), 2);
    assert!(i.body.is_empty());
    assert!(lib.get("good").is_none(), "no semantics from an empty body");
    let why = lib.unrolled("good").unwrap().err().unwrap().to_string();
    assert!(why.contains("not loaded (unverified here)"), "{why}");
    // A spec already unrolled keeps its semantics.
    let mut lib = SpecLibrary::load_dir_lazy(&dir).unwrap();
    assert!(lib.get("good").is_some());
    lib.withhold_bodies(|_| false, "unverified here");
    assert!(lib.get("good").is_some());
    std::fs::remove_dir_all(dir).ok();
}

/// A library whose bodies were released (what `misaal compile` keeps) parses
/// each spec again from its own text when first unrolled: every bundled x86
/// spec must come back with the semantics, hence the digest, it had, or a
/// shipped verdict keyed by them would no longer answer.
#[test]
fn released_bodies_come_back_with_the_same_semantics() {
    let dir = misaal_isa::bundled_spec_dir("x86");
    let eager = SpecLibrary::load_dir(&dir).unwrap();
    let mut released = SpecLibrary::load_dir_lazy(&dir).unwrap();
    released.release_bodies();
    assert!(released.instrs().iter().all(|i| i.body.is_empty()), "every body released");
    let mut n = 0;
    for (i, sem) in eager.iter() {
        let (_, again) = released.get(&i.name).unwrap_or_else(|| panic!("{} does not unroll after release", i.name));
        assert_eq!(misaal_isa::status::digest(again), misaal_isa::status::digest(sem), "{}", i.name);
        assert_eq!(released.spec_source(&i.name), eager.spec_source(&i.name), "{}", i.name);
        n += 1;
    }
    assert!(n > 1_800, "{n} specs");
}

/// The digest memo answers for a spec only while its row's key is the
/// spec's current one; a stale row is ignored, a malformed one is an error
/// at its line.
#[test]
fn the_digest_memo_answers_only_for_the_current_text() {
    let dir = write_dir("memo", &[("good.sema".into(), GOOD.into())]);
    let real = SpecLibrary::load_dir_lazy(&dir).unwrap().digest("good").expect("unrolls").to_string();
    let key = SpecLibrary::load_dir_lazy(&dir).unwrap().text_key("good", "engine-1").expect("has a source");
    let memo = dir.join(misaal_isa::DIGEST_MEMO_FILE);
    let fake = "0".repeat(32);
    assert_ne!(real, fake);

    // A current row is taken as is: the spec is not unrolled for it.
    std::fs::write(&memo, format!("# a comment\ngood\t{key}\t{fake}\n")).unwrap();
    let mut lib = SpecLibrary::load_dir_lazy(&dir).unwrap();
    assert_eq!(lib.use_digest_memo(&memo, "engine-1").unwrap(), 1);
    assert_eq!(lib.digest("good"), Some(fake.as_str()));

    // Another engine (the unroller changed): the row is stale.
    let mut lib = SpecLibrary::load_dir_lazy(&dir).unwrap();
    lib.use_digest_memo(&memo, "engine-2").unwrap();
    assert_eq!(lib.digest("good"), Some(real.as_str()));

    // Another text (the spec was edited): stale too.
    let edited = write_dir("memo-edited", &[("good.sema".into(), GOOD.replace('+', "-"))]);
    let mut lib = SpecLibrary::load_dir_lazy(&edited).unwrap();
    lib.use_digest_memo(&memo, "engine-1").unwrap();
    assert_ne!(lib.digest("good"), Some(fake.as_str()));

    // No memo file: nothing recorded, nothing wrong.
    let mut lib = SpecLibrary::load_dir_lazy(&edited).unwrap();
    assert_eq!(lib.use_digest_memo(&edited.join("none.tsv"), "engine-1").unwrap(), 0);

    std::fs::write(&memo, format!("good\t{key}\t{fake}\ngood\tnot-a-digest\n")).unwrap();
    let err = SpecLibrary::load_dir_lazy(&dir).unwrap().use_digest_memo(&memo, "engine-1").unwrap_err().to_string();
    assert!(err.contains("DIGESTS.tsv:2:1") && err.contains("expected NAME<TAB>TEXT_KEY<TAB>DIGEST"), "{err}");

    // What `misaal isa digests` writes reads back, and answers.
    let lib = SpecLibrary::load_dir(&dir).unwrap();
    std::fs::write(&memo, lib.digest_memo_text("engine-1")).unwrap();
    let mut lazy = SpecLibrary::load_dir_lazy(&dir).unwrap();
    assert_eq!(lazy.use_digest_memo(&memo, "engine-1").unwrap(), 1);
    assert_eq!(lazy.digest("good"), Some(real.as_str()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&edited);
}
