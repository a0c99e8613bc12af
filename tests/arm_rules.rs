//! ARM and HVX rule files: what the target of a file fixes (the library its
//! names resolve against, the default `?vsize` domain, the name templates)
//! and how a spec's immediate range limits instantiations. The bundled
//! rulesets themselves are proved in `tests/rule_corpora.rs`.

use misaal_isa::{SpecLibrary, StatusTable};
use misaal_rulesets::{ARM, HVX, TargetIsa, X86, expand_name, instantiations, parse_rules};
use misaal_verifier::audit::{AuditConfig, Libraries, Verdict, VerdictCache, load_rules, load_rules_verified, plan, run_job};
use std::sync::{Mutex, OnceLock};

fn specs(isa: &'static TargetIsa) -> &'static SpecLibrary {
    static L: [OnceLock<SpecLibrary>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let k = misaal_rulesets::TARGETS.iter().position(|t| *t == isa).unwrap();
    L[k].get_or_init(|| SpecLibrary::load_dir(&isa.spec_dir()).unwrap())
}

fn halide() -> &'static SpecLibrary {
    static H: OnceLock<SpecLibrary> = OnceLock::new();
    H.get_or_init(|| misaal_frontends::halide_ops().unwrap())
}

fn cfg(isa: &TargetIsa) -> AuditConfig {
    AuditConfig { quickcheck_cases: 200, vector_widths: isa.vector_widths.to_vec(), ..Default::default() }
}

#[test]
fn the_heads_give_the_target_and_its_vector_widths() {
    let arm = parse_rules("a.egg", "(rewrite (add (t ?sign ?bw ?n) ?a ?b) (arm \"vadd{q}_{su}{bw}\" ?a ?b) :when ((= ?n (/ ?vsize ?bw))) :name \"add\")").unwrap();
    assert_eq!(arm[0].target, &ARM);
    let envs = instantiations(&arm[0], arm[0].target.vector_widths).unwrap();
    let mut sizes: Vec<i128> = envs.iter().map(|e| e.iter().find(|(v, _)| &**v == "vsize").unwrap().1).collect();
    sizes.sort();
    sizes.dedup();
    assert_eq!(sizes, vec![64, 128]);
    let names: Vec<String> = envs.iter().map(|e| expand_name("vadd{q}_{su}{bw}", e).unwrap()).collect();
    for want in ["vadd_u8", "vaddq_s16", "vadd_s64", "vaddq_u32"] {
        assert!(names.iter().any(|n| n == want), "{want} not among {names:?}");
    }
    let hvx = parse_rules("h.egg", "(ruleset hvx)\n(rewrite (add (t ?sign ?bw ?n) ?a ?b) ?a :when ((= ?n (/ ?vsize ?bw))) :name \"add\")").unwrap();
    assert_eq!(hvx[0].target, &HVX);
    let envs = instantiations(&hvx[0], hvx[0].target.vector_widths).unwrap();
    assert!(envs.iter().all(|e| e.iter().any(|(v, x)| &**v == "vsize" && *x == 1024)));
    // {ty} spells HVX element types; {e} the letter alone.
    let env = vec![("sign".into(), 0), ("bw".into(), 16)];
    assert_eq!(expand_name("Q6_V{ty}_vavg_V{ty}V{ty}_rnd", &env).unwrap(), "Q6_Vuh_vavg_VuhVuh_rnd");
    assert_eq!(expand_name("Q6_V{e}_vadd_V{e}V{e}", &env).unwrap(), "Q6_Vh_vadd_VhVh");
    // A file without heads is x86.
    assert_eq!(parse_rules("x.egg", "(rewrite (add (i 8 16) ?a ?b) ?a :name \"x\")").unwrap()[0].target, &X86);
}

#[test]
fn names_resolve_against_the_files_target_only() {
    let text = "(rewrite (add (i 8 16) ?a ?b) (arm _mm_add_epi8 ?a ?b) :name \"x86-name\")";
    let libs = Libraries { target: specs(&ARM), halide: halide() };
    let err = load_rules("a.egg", text, &libs, &cfg(&ARM)).unwrap_err().to_string();
    assert!(err.contains("no arm spec `_mm_add_epi8`"), "{err}");
    // The x86 library given for an ARM file is the caller's mistake, said once.
    let good = "(rewrite (add (i 8 16) ?a ?b) (arm vaddq_s8 ?a ?b) :name \"add\")";
    let libs = Libraries { target: specs(&X86), halide: halide() };
    let err = load_rules("a.egg", good, &libs, &cfg(&ARM)).unwrap_err().to_string();
    assert!(err.contains("the rules are for arm, but the instruction library given holds x86 specs"), "{err}");
}

#[test]
fn an_unverified_arm_spec_is_a_load_error() {
    let text = "(rewrite (add (i 8 16) ?a ?b) (arm vaddq_s8 ?a ?b) :name \"add\")";
    let libs = Libraries { target: specs(&ARM), halide: halide() };
    let mut status = StatusTable::for_spec_dir(&ARM.spec_dir()).unwrap();
    assert!(load_rules_verified("a.egg", text, &libs, &cfg(&ARM), &status).is_ok());
    status.rows.get_mut("vaddq_s8").unwrap().status = misaal_isa::SpecStatus::Failed;
    let err = load_rules_verified("a.egg", text, &libs, &cfg(&ARM), &status).unwrap_err().to_string();
    assert!(err.contains("not a verified arm spec"), "{err}");
}

#[test]
fn an_immediate_outside_its_range_is_inapplicable_never_proved() {
    // vshr_n_s8 takes 1 to 8: c = 0 and c = 9 are not instructions.
    let text = "(rewrite (shr (i 8 8) 0 ?a (broadcast (u 8 8) ?c)) (arm vshr_n_s8 ?a ?c) :when ((range ?c 0 9)) :name \"sshr\")";
    let libs = Libraries { target: specs(&ARM), halide: halide() };
    let c = cfg(&ARM);
    let rules = load_rules("a.egg", text, &libs, &c).unwrap();
    let cache = Mutex::new(VerdictCache::default());
    let results: Vec<(String, Verdict, String)> = plan(&rules, &c).unwrap().iter().map(|j| run_job(&libs, j, &c, &cache)).map(|r| (r.instantiation, r.verdict, r.counterexample)).collect();
    assert_eq!(results.len(), 10);
    for (inst, v, why) in &results {
        let out = inst == "c=0" || inst == "c=9";
        if out {
            assert_eq!(*v, Verdict::Inapplicable, "{inst}: {why}");
            assert!(why.contains("immediate out of range: `vshr_n_s8` operand `n` takes 1 to 8"), "{why}");
        } else {
            assert_eq!(*v, Verdict::Proved, "{inst}: {why}");
        }
    }
}
