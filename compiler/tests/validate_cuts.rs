//! Translation validation through cut points: a requantizing kernel, whose
//! whole-root proof relates 32x32->64 multipliers through sums of
//! products, is proved piece by piece within a budget that the whole proof
//! cannot meet; and a wrong instruction inside it is still a mismatch.

use misaal_compiler::c::{EmitOptions, emit_with};
use misaal_compiler::isel::encode::Op;
use misaal_compiler::isel::validate::{ValidateOptions, validate_all};
use misaal_compiler::isel::{Options, Selection};
use misaal_frontends::stmt::parse_module;
use misaal_verifier::smt::Budget;

/// The suite's `mul` kernel (u8 quantized multiply: widening products,
/// i32 `rounding_mul_shift_right` by 31, a runtime rounding shift,
/// saturating narrows), as the emitter selects it.
fn mul_selections() -> Vec<(String, Selection)> {
    suite_selections("mul")
}

fn suite_selections(kernel: &str) -> Vec<(String, Selection)> {
    let path = format!("{}/../benchmarks/stmt/{kernel}.stmt", env!("CARGO_MANIFEST_DIR"));
    let m = parse_module(&path, &std::fs::read_to_string(&path).expect("a suite kernel")).expect("the Stmt parses");
    let (_, report) = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(Options::default()) }).expect("emits");
    report.expect("an isel report").selections
}

/// 4 s per query: each rule-sized piece fits; the whole root (about
/// 140 s before cut points) does not.
fn tight() -> ValidateOptions {
    ValidateOptions { budget: Budget { timeout_ms: 4_000, rlimit: 0 }, ..ValidateOptions::default() }
}

#[test]
fn a_requantizing_kernel_is_proved_through_cut_points() {
    let sels = mul_selections();
    assert!(
        sels.iter().any(|(_, s)| s.dag.iter().any(|n| matches!(&n.op, Op::Instr { name } if name.ends_with("_mul_epi32")))),
        "mul selects vpmuldq (the requantize rule); otherwise this test checks nothing"
    );
    let r = validate_all(&sels, &tight());
    eprint!("{}", r.summary());
    assert!(r.ok(), "{}", r.summary());
    assert!(r.proved > r.trivial, "{}", r.line());
}

/// softmax's exp2 root shifts by y = 0 - max(..): the selection reads both
/// the max and y, the source only y. Cutting y forgets it is 0 - max, so
/// that piece is proved with y left uncut.
#[test]
fn a_cut_that_hides_a_value_the_selection_reads_is_retried_without_it() {
    let r = validate_all(&suite_selections("softmax"), &tight());
    eprint!("{}", r.summary());
    assert!(r.ok(), "{}", r.summary());
}

#[test]
fn a_wrong_shift_inside_the_requantize_is_still_a_mismatch() {
    let mut sels = mul_selections();
    // The rounding shift's arithmetic `>> 1` made logical: wrong for
    // negative values only, which the cut pieces do not hide.
    let n = sels
        .iter_mut()
        .flat_map(|(_, s)| s.dag.iter_mut())
        .find(|n| matches!(&n.op, Op::Instr { name } if name == "_mm256_srai_epi32"))
        .expect("the rounding shift uses vpsrad");
    n.op = Op::Instr { name: "_mm256_srli_epi32".into() };
    let r = validate_all(&sels, &tight());
    eprint!("{}", r.summary());
    assert_eq!(r.mismatches.len(), 1, "{}", r.summary());
    assert_eq!(r.exit_code(), 1);
}
