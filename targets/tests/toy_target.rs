//! A fourth target, added as `docs/adding-a-target.md` says: one
//! description and a spec folder (here a fixture, `tests/toy/specs/`).
//! Everything below reads the description through the registry, by the
//! code paths the bundled targets take: the spec parser accepts the
//! toy's header and features, the rule parser its head, instantiation
//! ranges `?vsize` over its widths, and the verifier proves (and refutes)
//! rules against its specs. If a crate goes back to its own table of
//! targets, one of these steps fails.

use misaal_isa::SpecLibrary;
use misaal_rulesets::{TargetIsa, expand_name, instantiations, parse_rules};
use misaal_targets::{BenchBackend, Dialect, NameStyle, Oracle, TargetDesc};
use misaal_verifier::audit::{AuditConfig, Libraries, Verdict, VerdictCache, load_rules, plan, run_job};
use std::path::PathBuf;
use std::sync::Mutex;

/// A toy ISA: byte vectors in 64- and 128-bit registers, one feature, no
/// oracle, no C dialect, no bench backend.
fn toy(vector_widths: &'static [i128]) -> TargetDesc {
    TargetDesc {
        name: "toy",
        halide_arch: "toy",
        halide_bits: "64",
        vector_widths,
        register_bits: 128,
        wider_registers: None,
        pair_bits: 0,
        sub_register_values: false,
        cpu_features: &["base"],
        example_feature: "base",
        baseline_features: &["base"],
        name_style: NameStyle::X86,
        oracle: Oracle::None,
        dialect: Dialect::None,
        rule_files: &["toy"],
        bench: BenchBackend::None,
    }
}

fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/toy/specs")
}

const ADD: &str = "(rewrite (add (i 8 ?n) ?a ?b) (toy \"toy_add_b{vsize}\" ?a ?b) :when ((= ?n (/ ?vsize 8))) :name \"add\")";
/// Wrong: a subtraction for an addition.
const WRONG: &str = "(rewrite (add (i 8 8) ?a ?b) (toy toy_sub_b64 ?a ?b) :name \"add-as-sub\")";

// One test: the registry is per process, and the steps before the toy is
// registered must see it missing.
#[test]
fn a_toy_target_is_one_description_and_a_spec_folder() {
    // Unregistered, no crate knows it.
    let err = SpecLibrary::load_dir(&spec_dir()).err().expect("a spec of an unknown target").to_string();
    assert!(err.contains("unknown target `toy`"), "{err}");
    assert!(TargetIsa::by_name("toy").is_none());

    let desc: &'static TargetDesc = Box::leak(Box::new(toy(&[64, 128])));
    misaal_targets::register(desc).expect("no target named toy yet");
    assert!(misaal_targets::register(Box::leak(Box::new(toy(&[64])))).is_err(), "a second toy with other widths");
    assert_eq!(misaal_targets::of_halide_target("toy-64-linux").map(|t| t.name), Some("toy"));

    // Specs: the header's target and features are checked against the description.
    let specs = SpecLibrary::load_dir(&spec_dir()).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(specs.instrs().len(), 3);
    assert!(specs.instrs().iter().all(|i| i.target == "toy" && i.features == ["base"]));
    let bad = misaal_isa::parser::parse_file("bad.sema", "instr toy_x(a: bv64) -> bv64 [toy avx2 x]\ndst := a\n").err().expect("avx2 is x86's").to_string();
    assert!(bad.contains("unknown toy feature `avx2` (expected one of base)"), "{bad}");

    // Rules: the head names the target; `?vsize` ranges over its widths.
    let rules = parse_rules("toy.egg", ADD).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(rules[0].target.name, "toy");
    assert!(std::ptr::eq(rules[0].target.desc(), desc));
    let envs = instantiations(&rules[0], rules[0].target.vector_widths).unwrap();
    let names: Vec<String> = envs.iter().map(|e| expand_name("toy_add_b{vsize}", e).unwrap()).collect();
    assert_eq!(names, ["toy_add_b64", "toy_add_b128"]);

    // Proofs: the verifier audits toy rules against the toy specs.
    let halide = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let libs = Libraries { target: &specs, halide: &halide };
    let cfg = AuditConfig { quickcheck_cases: 100, vector_widths: desc.vector_widths.to_vec(), ..Default::default() };
    let cache = Mutex::new(VerdictCache::default());
    let verdicts = |text: &str| -> Vec<(String, Verdict)> {
        let rules = load_rules("toy.egg", text, &libs, &cfg).unwrap_or_else(|d| panic!("{d}"));
        plan(&rules, &cfg).unwrap().iter().map(|j| run_job(&libs, j, &cfg, &cache)).map(|r| (r.instantiation, r.verdict)).collect()
    };
    let add = verdicts(ADD);
    assert_eq!(add.len(), 2, "one instance per toy width: {add:?}");
    assert!(add.iter().all(|(_, v)| *v == Verdict::Proved), "{add:?}");
    let wrong: Vec<Verdict> = verdicts(WRONG).into_iter().map(|(_, v)| v).collect();
    assert_eq!(wrong, [Verdict::Refuted]);
    // A name the toy specs lack is a load error, as for x86.
    let missing = load_rules("toy.egg", "(rewrite (add (i 8 8) ?a ?b) (toy toy_mul_b64 ?a ?b) :name \"m\")", &libs, &cfg).err().expect("no such spec").to_string();
    assert!(missing.contains("toy_mul_b64"), "{missing}");
}
