//! Ops x86 lacks at their width (issue 30's fallbacks): an i8 multiply, an
//! i16 `halving_sub`, a u8 division by 7, an i16 division by -9, an i8
//! `mod` 10, an i8 -> u16 saturating cast and a u8 -> i32 cast. Synthesis computes each at
//! twice the width (`synth.widened-*`) or through unsigned division
//! (`synth.divide-*`), every instance proved; with the rules of f4f1c2d all
//! seven were lane loops. Fixture `data/widened_ops.stmt` (AVX2), run
//! natively under AddressSanitizer against the interpreter on random and
//! edge inputs (Halide's division rounds towards negative infinity and its
//! `mod` is never negative, which the C operators are not).

use crate::common;

#[test]
fn ops_without_an_instruction_are_widened_and_match_the_interpreter() {
    let (m, prog, r) = common::avx2_fixture("widened_ops");
    let c = &prog.c[prog.c.find("int misaal_fn(").expect("the function")..];
    assert!(r.fallback_exprs() == 0 && r.selected_fallbacks == 0 && r.scalar_nodes == 0 && r.vector_roots == 7, "{}{}", r.summary(), r.explain);
    assert!(!c.contains("for (int l = 0;"), "a lane loop survives:\n{c}");
    // The widened multiply and the divisions' high halves.
    for i in ["_mm256_mullo_epi16(", "_mm256_mulhi_epu16(", "_mm256_cvtepi8_epi16("] {
        assert!(c.contains(i), "no {i}:\n{c}");
    }
    for rule in ["synth.widened-mul-i8", "synth.widened-halving_sub-i16", "synth.widened-div-u8", "synth.divide-div-i16.negative", "synth.divide-mod-i8", "synth.widened-saturating_cast-i8-u16", "synth.widened-cast-u8-i32"] {
        assert!(r.explain_chains().contains(rule), "no {rule} in the selection:\n{}", r.explain_chains());
    }
    // a, b: 64 i8; c, d: 32 i16; e: 64 u8; outputs exactly their lanes.
    common::agrees_natively_on_avx2(
        "widened_ops",
        &m,
        &prog,
        &[("int8", 64), ("int8", 64), ("int16", 32), ("int16", 32), ("uint8", 64), ("int8", 64), ("int16", 32), ("uint8", 64), ("int16", 32), ("int8", 64), ("uint16", 32), ("int32", 32)],
    );
}
