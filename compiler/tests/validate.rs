//! Translation validation (`misaal_compiler::isel::validate`): a kernel's
//! selection is proved equal to its Stmt root by root, and a selection made
//! wrong on purpose is caught with a counterexample.

use misaal_compiler::c::{EmitOptions, emit_with};
use misaal_compiler::isel::encode::{Node, Op};
use misaal_compiler::isel::validate::{ValidateOptions, validate, validate_all};
use misaal_compiler::isel::{Options, Selection, Target, select_module};
use misaal_frontends::stmt::parse_module;
use std::sync::OnceLock;

fn target() -> &'static Target {
    static T: OnceLock<Target> = OnceLock::new();
    T.get_or_init(|| Target::x86().expect("the bundled x86 target loads"))
}

/// An AVX2 kernel (`tests/data/validate_avx2.stmt`): u8 absd, saturating
/// add of a broadcast constant and rounding average in a loop; u16 shift by
/// a constant and saturating subtract; a 128-bit u8 average; the
/// `vpmaddwd`-shaped i16 dot product plus an i32 max.
fn kernel() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/validate_avx2.stmt")).expect("the kernel file")
}

/// Proves every loaded instantiation on the spot: no shared cache file.
/// AVX2's instructions, as the kernel's name says (with VNNI, the dot
/// product would be one `vpdpwssd`).
fn opts() -> Options {
    Options { verdict_cache: None, features: Some(misaal_compiler::isel::features::CpuFeatures::from_feature_list("avx2").expect("avx2")), ..Options::default() }
}

fn selection() -> Selection {
    let m = parse_module("validate_avx2.stmt", &kernel()).expect("the Stmt parses");
    select_module(target(), &m, &opts()).expect("selection runs")
}

/// The selection with the `k`th x86 node named `to` instead.
fn mutated(sel: &Selection, from: &str, to: &str) -> Selection {
    let mut bad = sel.clone();
    let n = bad.dag.iter_mut().find(|n| matches!(&n.op, Op::Instr { name } if name == from)).unwrap_or_else(|| panic!("{from} is selected"));
    n.op = Op::Instr { name: to.into() };
    bad
}

#[test]
fn a_kernel_selection_is_proved_root_by_root() {
    let sel = selection();
    let r = validate(target(), &sel, &ValidateOptions::default());
    eprint!("{}", r.summary());
    assert_eq!(r.roots, sel.roots.len());
    assert!(r.mismatches.is_empty() && r.unknown.is_empty() && r.errors.is_empty(), "{}", r.summary());
    assert_eq!(r.proved, r.roots);
    assert!(r.proved > r.trivial, "some root needs a proof: {}", r.line());
    assert!(r.ok());
    assert_eq!(r.exit_code(), 0);
    assert!(r.line().starts_with(&format!("validate: {} roots, {} proved ({} trivial), 0 mismatches, 0 unknown in ", r.roots, r.proved, r.trivial)));
}

#[test]
fn the_emitted_selections_are_validated() {
    // What `misaal compile --isel --validate` checks: the emitter's own selections.
    let m = parse_module("validate_avx2.stmt", &kernel()).expect("the Stmt parses");
    let (_, report) = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(opts()) }).expect("emits");
    let report = report.expect("an isel report");
    assert_eq!(report.selections.len(), 1);
    let r = validate_all(&report.selections, &ValidateOptions::default());
    assert!(r.ok() && r.proved > r.trivial, "{}", r.summary());
}

#[test]
fn a_wrong_instruction_is_a_mismatch_with_a_counterexample() {
    let sel = selection();
    // Same operand and result widths, other meaning.
    let swaps = [
        ("_mm256_sub_epi8", "_mm256_add_epi8"),
        ("_mm256_max_epu8", "_mm256_min_epu8"),
        ("_mm256_adds_epu8", "_mm256_subs_epu8"),
        ("_mm256_avg_epu8", "_mm256_max_epu8"),
        ("_mm256_slli_epi16", "_mm256_srli_epi16"),
        ("_mm256_subs_epu16", "_mm256_subs_epi16"),
        ("_mm_avg_epu8", "_mm_max_epu8"),
        ("_mm256_madd_epi16", "_mm256_mullo_epi16"),
        ("_mm256_add_epi32", "_mm256_sub_epi32"),
    ];
    // No random inputs first: Z3 itself must find each counterexample.
    let z3_only = ValidateOptions { cases: 0, ..ValidateOptions::default() };
    for (from, to) in swaps {
        for o in [&z3_only, &ValidateOptions::default()] {
            let r = validate(target(), &mutated(&sel, from, to), o);
            assert_eq!(r.mismatches.len(), 1, "{from} -> {to}: {}", r.summary());
            assert_eq!(r.exit_code(), 1);
            assert!(!r.ok());
            let m = &r.mismatches[0];
            assert!(m.selected_expr.contains(to) && !m.source_expr.contains(to), "{from} -> {to}: {}", r.summary());
            assert!(m.label.starts_with("store "), "{}", m.label);
            // Every operand and both results in hex; the results differ.
            let src = m.counterexample.split("source = ").nth(1).and_then(|t| t.split(',').next()).expect("the source's value");
            let got = m.counterexample.split("selected = ").nth(1).expect("the selected value");
            assert!(src.starts_with("0x") && got.starts_with("0x") && src != got, "{}", m.counterexample);
            assert!(m.counterexample.contains("[ramp(") && m.counterexample.contains("] = 0x"), "{}", m.counterexample);
            assert_eq!(r.proved + 1, r.roots, "the other roots still prove");
        }
    }
}

#[test]
fn selections_without_instructions_are_trivially_proved() {
    let m = parse_module("validate_avx2.stmt", &kernel()).expect("the Stmt parses");
    let none = Options { rules_text: Some("(ruleset x86)\n".into()), ..opts() };
    let sel = select_module(target(), &m, &none).expect("selection runs");
    let r = validate(target(), &sel, &ValidateOptions::default());
    assert_eq!((r.proved, r.trivial, r.roots), (sel.roots.len(), sel.roots.len(), sel.roots.len()), "{}", r.summary());
}

#[test]
fn a_malformed_selection_is_an_internal_error() {
    let sel = selection();
    let r = validate(target(), &mutated(&sel, "_mm256_avg_epu8", "_mm256_no_such_thing"), &ValidateOptions::default());
    assert_eq!(r.errors.len(), 1, "{}", r.summary());
    assert!(r.errors[0].message.contains("no x86 spec `_mm256_no_such_thing`"), "{}", r.summary());
    assert_eq!(r.exit_code(), 1);
    // A leaf the source expression does not read.
    let mut bad = sel.clone();
    let leaf = bad.dag.iter_mut().find(|n| matches!(&n.op, Op::Leaf { text, .. } if text.contains(")c[ramp"))).expect("the load of c");
    let Op::Leaf { bits, .. } = leaf.op else { unreachable!() };
    leaf.op = Op::Leaf { text: "elsewhere".into(), bits };
    let r = validate(target(), &bad, &ValidateOptions::default());
    assert!(r.errors.iter().any(|e| e.message.contains("leaf `elsewhere`")), "{}", r.summary());
}

#[test]
fn an_undecided_root_is_not_validated() {
    // One unit of Z3 resources decides nothing: unknown, exit 3, never proved.
    let o = ValidateOptions { cases: 0, budget: misaal_verifier::smt::Budget { timeout_ms: 10_000, rlimit: 1 }, ..ValidateOptions::default() };
    let r = validate(target(), &selection(), &o);
    assert!(!r.unknown.is_empty() && r.mismatches.is_empty(), "{}", r.summary());
    assert!(!r.ok());
    assert_eq!(r.exit_code(), 3);
    assert!(r.summary().contains("NOT VALIDATED"));
}


/// A 512-bit i16 add as legalization selects it for AVX2: both operands
/// sliced in halves, `_mm256_add_epi16` on each, the halves concatenated.
/// Built by hand over the source of a selection that chose nothing.
#[test]
fn split_and_concat_are_validated_like_any_halide_op() {
    const WIDE: &str = "module name=w, target=x86-64-linux-avx2-no_runtime\nexternal func w (a, b, out) {\nout[ramp(0, 1, 32)] = (int16x32)a[ramp(0, 1, 32)] + (int16x32)b[ramp(0, 1, 32)]\n}\n";
    let m = parse_module("w.stmt", WIDE).expect("the Stmt parses");
    let none = Options { rules_text: Some("(ruleset x86)\n".into()), ..opts() };
    let sel = select_module(target(), &m, &none).expect("selection runs");
    let root = sel.roots.iter().position(|r| r.label.starts_with("store out")).expect("the store");
    let leaf_ops: Vec<Op> = sel.source.nodes.iter().filter(|n| matches!(n.op, Op::Leaf { .. })).map(|n| n.op.clone()).collect();
    assert_eq!(leaf_ops.len(), 2);
    let split = |sel: &mut Selection, lo_first: bool| {
        let node = |op: Op, kids: Vec<usize>| Node { op, kids };
        let h = |name: &str, generics: &[i64]| Op::Halide { name: name.into(), generics: generics.to_vec() };
        let add = Op::Instr { name: "_mm256_add_epi16".into() };
        sel.dag = vec![
            node(leaf_ops[0].clone(), vec![]),
            node(leaf_ops[1].clone(), vec![]),
            node(h("slice", &[1, 16, 16, 32, 0, 1]), vec![0]),
            node(h("slice", &[1, 16, 16, 32, 0, 1]), vec![1]),
            node(add.clone(), vec![2, 3]),
            node(h("slice", &[1, 16, 16, 32, 16, 1]), vec![0]),
            node(h("slice", &[1, 16, 16, 32, 16, 1]), vec![1]),
            node(add, vec![5, 6]),
            node(h("concat", &[1, 16, 16, 16]), if lo_first { vec![4, 7] } else { vec![7, 4] }),
        ];
        sel.roots[root].node = 8;
    };
    let mut good = sel.clone();
    split(&mut good, true);
    let r = validate(target(), &good, &ValidateOptions::default());
    assert!(r.ok() && r.trivial + 1 == r.roots, "{}", r.summary());
    // The halves swapped: wrong.
    let mut bad = sel.clone();
    split(&mut bad, false);
    let r = validate(target(), &bad, &ValidateOptions { cases: 0, ..ValidateOptions::default() });
    assert_eq!(r.mismatches.len(), 1, "{}", r.summary());
}

/// The emitter's selections of suite kernels (`benchmarks/stmt`), each
/// validated with nothing left unproved; prints each summary. By default
/// `add` only; `MISAAL_SLOW=1` adds `blur3x3`, `matmul_b1` and `conv_nn`
/// (minutes of selection and proofs), `MISAAL_KERNELS=softmax,mul`
/// picks others.
#[test]
fn suite_kernels_validate() {
    let dir = format!("{}/../benchmarks/stmt", env!("CARGO_MANIFEST_DIR"));
    let mut all: Vec<String> = std::fs::read_dir(&dir).expect("benchmarks/stmt").filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".stmt").map(str::to_string)).collect();
    all.sort();
    for name in misaal_testkit::kernels_or(&["add"], &["add", "blur3x3", "matmul_b1", "conv_nn"], &all) {
        let path = format!("{}/../benchmarks/stmt/{name}.stmt", env!("CARGO_MANIFEST_DIR"));
        let m = parse_module(&path, &std::fs::read_to_string(&path).expect("a suite kernel")).expect("the Stmt parses");
        let (_, report) = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(Options::default()) }).expect("emits");
        let r = validate_all(&report.expect("an isel report").selections, &ValidateOptions::default());
        eprint!("{name}: {}", r.summary());
        assert!(r.ok(), "{name}: {}", r.summary());
    }
}
