//! The audit engine on a tiny Halide library: verdicts, instantiation of
//! abstract rules at every width, counterexamples and the cache.

use misaal_isa::SpecLibrary;
use misaal_verifier::audit::{AuditConfig, Libraries, VerdictCache, Verdict, plan, run_job};
use misaal_rulesets::parse_rules;
use std::sync::Mutex;

const HALIDE: &str = "
instr add<S, E, N>(a: bv(N*E), b: bv(N*E)) -> bv(N*E) [halide ir add]
FOR j := 0 to N-1
    dst[j*E+E-1:j*E] := a[j*E+E-1:j*E] + b[j*E+E-1:j*E]
ENDFOR
instr mul<S, E, N>(a: bv(N*E), b: bv(N*E)) -> bv(N*E) [halide ir mul]
FOR j := 0 to N-1
    dst[j*E+E-1:j*E] := a[j*E+E-1:j*E] * b[j*E+E-1:j*E]
ENDFOR
";

fn run(src: &str) -> Vec<(String, String, Verdict, String, bool)> {
    let x86 = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap();
    let halide = SpecLibrary::from_sources(&[("halide.sema".into(), HALIDE.into())]).unwrap();
    let libs = Libraries { target: &x86, halide: &halide };
    let rules = parse_rules("t.egg", src).unwrap();
    let cfg = AuditConfig { quickcheck_cases: 200, ..Default::default() };
    let jobs = plan(&rules, &cfg).unwrap();
    let cache = Mutex::new(VerdictCache::default());
    let mut out: Vec<_> = jobs.iter().map(|j| run_job(&libs, j, &cfg, &cache)).map(|r| (r.rule, r.instantiation, r.verdict, r.counterexample, r.cached)).collect();
    // A second pass over the same jobs comes from the cache.
    let again: Vec<bool> = jobs.iter().map(|j| run_job(&libs, j, &cfg, &cache).cached).collect();
    for (o, c) in out.iter_mut().zip(again) {
        o.4 = c;
    }
    out
}

#[test]
fn an_abstract_rule_is_proved_at_every_width() {
    let r = run(r#"(rewrite (add (u ?bw ?n) ?a ?b) (x86 "_{mm}_add_epi{bw}" ?a ?b) :when ((= ?n (/ ?vsize ?bw))) :name "add")"#);
    assert_eq!(r.len(), 12, "4 element widths x 3 vector widths");
    assert!(r.iter().all(|x| x.2 == Verdict::Proved), "{r:#?}");
    assert!(r.iter().any(|x| x.1 == "bw=64,vsize=512,n=8"), "{:?}", r.iter().map(|x| &x.1).collect::<Vec<_>>());
    assert!(r.iter().all(|x| x.4), "re-runs come from the cache");
}

#[test]
fn a_rule_right_at_one_width_is_refuted_at_the_others() {
    let r = run(r#"(rewrite (mul (u ?bw ?n) ?a ?b) (x86 "_{mm}_mullo_epi16" ?a ?b) :when ((= ?n (/ ?vsize ?bw))) :name "mullo")"#);
    for (_, inst, v, cx, _) in &r {
        if inst.starts_with("bw=16,") {
            assert_eq!(*v, Verdict::Proved, "{inst}");
        } else {
            assert_eq!(*v, Verdict::Refuted, "{inst}");
            assert!(cx.contains("?a=0x") && cx.contains("lhs=0x") && cx.contains("rhs=0x"), "{cx}");
        }
    }
}

#[test]
fn unsatisfiable_conditions_are_inapplicable_and_bad_names_do_not_prove() {
    let r = run(r#"(rewrite (add (u 8 16) ?a ?b) (x86 _mm_add_epi8 ?a ?b) :when ((< 2 1)) :name "never")
(rewrite (add (u 8 16) ?a ?b) (x86 _mm_add_epi9 ?a ?b) :name "typo")
(rewrite (add (u 8 16) ?a ?b) (x86 _mm256_add_epi8 ?a ?b) :name "width")"#);
    assert_eq!(r[0].2, Verdict::Inapplicable);
    assert_eq!(r[1].2, Verdict::Refuted);
    assert!(r[1].3.contains("no x86 spec `_mm_add_epi9`"), "{}", r[1].3);
    assert_eq!(r[2].2, Verdict::Refuted);
    assert!(r[2].3.contains("does not type-check"), "{}", r[2].3);
}

#[test]
fn malformed_rule_files_get_locations() {
    let e = parse_rules("bad.egg", "(rewrite (add (u 8 16) ?a ?b)\n  (x86 _mm_add_epi8 ?a ?b)").unwrap_err().to_string();
    assert!(e.starts_with("bad.egg:2:27: error: unbalanced `(`"), "{e}");
    let e = parse_rules("bad.egg", "(rewrite ?a ?b)").unwrap_err().to_string();
    assert!(e.contains("bad.egg:1:1: error: every rule needs :name"), "{e}");
    let e = parse_rules("bad.egg", "(rewrite ?a ?b :name \"x\" :when ((frob ?x)))").unwrap_err().to_string();
    assert!(e.contains("unknown condition `frob`"), "{e}");
}

/// Every instantiation draws its own quickcheck stream: the seed mixes in
/// the content of both sides (it once mixed in only the key's length, which
/// is the same for every key).
#[test]
fn each_instance_draws_its_own_quickcheck_stream() {
    use misaal_verifier::audit::{build_sides, quickcheck_seed};
    let x86 = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap();
    let halide = SpecLibrary::from_sources(&[("halide.sema".into(), HALIDE.into())]).unwrap();
    let libs = Libraries { target: &x86, halide: &halide };
    let rules = parse_rules("t.egg", r#"(rewrite (add (u ?bw ?n) ?a ?b) (x86 "_{mm}_add_epi{bw}" ?a ?b) :when ((= ?n (/ ?vsize ?bw))) :name "add")"#).unwrap();
    let cfg = AuditConfig::default();
    let seeds: Vec<u64> = misaal_rulesets::instantiations(&rules[0], &cfg.vector_widths)
        .unwrap()
        .iter()
        .map(|env| quickcheck_seed(&build_sides(&libs, &rules[0], env).unwrap(), &cfg))
        .collect();
    let distinct: std::collections::BTreeSet<u64> = seeds.iter().copied().collect();
    assert_eq!(distinct.len(), seeds.len(), "{seeds:x?}");
    let env = &misaal_rulesets::instantiations(&rules[0], &cfg.vector_widths).unwrap()[0];
    assert_eq!(quickcheck_seed(&build_sides(&libs, &rules[0], env).unwrap(), &cfg), seeds[0], "a re-run draws the same cases");
}

/// An instantiation may use only specs the status table vouches for,
/// unchanged since their check; `unverified_specs` names the others.
#[test]
fn instantiations_over_unverified_specs_are_named() {
    use misaal_isa::status::{SpecStatus, StatusRow, StatusTable, digest};
    use misaal_verifier::audit::{load_rules, unverified_specs};
    let x86 = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap();
    let halide = SpecLibrary::from_sources(&[("halide.sema".into(), HALIDE.into())]).unwrap();
    let libs = Libraries { target: &x86, halide: &halide };
    let cfg = AuditConfig::default();
    let rules = load_rules("t.egg", "(rewrite (add (u 8 16) ?a ?b)\n  (x86 _mm_add_epi8 ?a ?b) :name \"add\")", &libs, &cfg).unwrap();
    let sem = x86.get("_mm_add_epi8").unwrap().1;
    let row = |status, digest: String| StatusRow { status, cases: 1000, digest, evidence: "test".into() };
    let table = |r: StatusRow| StatusTable::from_rows([("_mm_add_epi8".to_string(), r)].into_iter().collect());
    let why = |t: &StatusTable| unverified_specs(&libs, &rules[0], &Vec::new(), t).into_iter().map(|(n, w)| format!("{n}: {w}")).collect::<Vec<_>>().join("\n");
    assert_eq!(why(&table(row(SpecStatus::Silicon, digest(sem)))), "");
    assert_eq!(why(&table(row(SpecStatus::ProvenTwin, digest(sem)))), "");
    assert!(why(&StatusTable::default()).contains("never checked"));
    assert!(why(&table(row(SpecStatus::Skipped, digest(sem)))).contains("is skipped"));
    assert!(why(&table(row(SpecStatus::Failed, digest(sem)))).contains("is failed"));
    assert!(why(&table(row(SpecStatus::Silicon, "0".repeat(32)))).contains("changed since it was checked"));
}
