//! Pre-keys (`misaal_verifier::prekey`): a rule instance's verdict found
//! without unrolling its sides, and never a `proved` the sides would not get.

use misaal_isa::SpecLibrary;
use misaal_rulesets::{Rule, instantiations, parse_rules};
use misaal_verifier::audit::{AuditConfig, Job, Libraries, VerdictCache, Verdict, run_job};
use misaal_verifier::prekey::{pre_key, proved_by_pre_key};
use std::sync::Mutex;

const HALIDE: &str = "
instr add<S, E, N>(a: bv(N*E), b: bv(N*E)) -> bv(N*E) [halide ir add]
FOR j := 0 to N-1
    dst[j*E+E-1:j*E] := a[j*E+E-1:j*E] + b[j*E+E-1:j*E]
ENDFOR
";

/// Two x86 adds, the 128-bit one through a function (`def_op` its
/// operator) and `op 0` (the same meaning for `+` and `-`).
fn x86(op: &str, def_op: &str) -> SpecLibrary {
    let text = format!(
        "def Add16(x: bv16, y: bv16) -> bv16
RETURN x {def_op} y

instr _mm_add_epi16(a: bv128, b: bv128) -> bv128 [x86 sse2 paddw]
FOR j := 0 to 7
    i := j*16
    dst[i+15:i] := Add16(a[i+15:i], b[i+15:i]) {op} 0
ENDFOR

instr _mm256_add_epi16(a: bv256, b: bv256) -> bv256 [x86 avx2 vpaddw]
FOR j := 0 to 15
    i := j*16
    dst[i+15:i] := a[i+15:i] + b[i+15:i]
ENDFOR
"
    );
    SpecLibrary::from_sources(&[("add.sema".into(), text)]).unwrap()
}

fn halide(text: &str) -> SpecLibrary {
    SpecLibrary::from_sources(&[("halide.sema".into(), text.into())]).unwrap()
}

const RULE: &str = r#"(rewrite (add (u 16 ?n) ?a ?b) (x86 "_{mm}_add_epi16" ?a ?b) :when ((= ?n (/ ?vsize 16))) :name "add16")"#;

fn rule(text: &str) -> Rule {
    parse_rules("t.egg", text).unwrap().remove(0)
}

/// The pre-key of each instantiation (128 and 256 bits).
fn keys(x86: &SpecLibrary, halide: &SpecLibrary, r: &Rule) -> Vec<String> {
    let libs = Libraries { target: x86, halide };
    let envs = instantiations(r, &[128, 256]).unwrap();
    assert_eq!(envs.len(), 2);
    envs.iter().map(|e| pre_key(&libs, r, e).expect("every spec has source text")).collect()
}

#[test]
fn a_pre_key_changes_with_the_width_a_side_or_a_spec_text() {
    let (h, r) = (halide(HALIDE), rule(RULE));
    let base = keys(&x86("+", "+"), &h, &r);
    assert_ne!(base[0], base[1], "the two widths");
    assert!(base.iter().all(|k| k.len() == 33 && k.starts_with('i')), "{base:?}");
    assert_eq!(base, keys(&x86("+", "+"), &h, &r), "the same inputs, the same key");
    // The rule's name is no input to its sides.
    assert_eq!(base, keys(&x86("+", "+"), &h, &rule(&RULE.replace("\"add16\"", "\"other\""))));
    let changed = [
        ("a spec's body", keys(&x86("-", "+"), &h, &r)),
        ("a function it may call", keys(&x86("+", "-"), &h, &r)),
        ("a Halide op's text", keys(&x86("+", "+"), &halide(&HALIDE.replace("FOR j", "// a comment\nFOR j")), &r)),
        ("the right side", keys(&x86("+", "+"), &h, &rule(&RULE.replace("?a ?b)", "?b ?a)")))),
    ];
    for (what, k) in changed {
        assert_ne!(k[0], base[0], "{what} changed, the 128-bit key did not");
    }
}

#[test]
fn a_recorded_pre_key_settles_the_instance_and_a_stale_one_never_proves() {
    let (h, r) = (halide(HALIDE), rule(RULE));
    let good = x86("+", "+");
    let env = instantiations(&r, &[128]).unwrap().remove(0);
    let cfg = AuditConfig { vector_widths: vec![128], quickcheck_cases: 100, ..Default::default() };
    let job = Job { rule: &r, env: Some(env.clone()) };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("prekey-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("verify.tsv");
    let cache = Mutex::new(VerdictCache::load(&path));
    let libs = Libraries { target: &good, halide: &h };
    assert!(proved_by_pre_key(&libs, &r, &env, &cache).is_none(), "nothing recorded yet");
    assert_eq!(run_job(&libs, &job, &cfg, &cache).verdict, Verdict::Proved);
    let hit = proved_by_pre_key(&libs, &r, &env, &cache).expect("recorded beside the proof");
    assert!(hit.verdict == Verdict::Proved && hit.cached);
    // Saved and read back: the pre-key row is kept.
    cache.lock().unwrap().save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.lines().any(|l| l.starts_with('i') && l.split('\t').nth(1) == Some("proof-key")), "{text}");
    let reread = Mutex::new(VerdictCache::load(&path));
    assert!(proved_by_pre_key(&libs, &r, &env, &reread).is_some());
    // A wrong spec (its function subtracts): its pre-key differs, so only
    // the sides answer.
    let wrong = x86("+", "-");
    let bad = Libraries { target: &wrong, halide: &h };
    assert!(proved_by_pre_key(&bad, &r, &env, &reread).is_none());
    assert_eq!(run_job(&bad, &job, &cfg, &reread).verdict, Verdict::Refuted);
    // A pre-key row naming a proof key with no `proved` row answers nothing.
    let pre = pre_key(&libs, &r, &env).unwrap();
    let forged = format!("{pre}\tproof-key\tp{}\n", "0".repeat(32));
    std::fs::write(&path, forged).unwrap();
    assert!(proved_by_pre_key(&libs, &r, &env, &Mutex::new(VerdictCache::load(&path))).is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
