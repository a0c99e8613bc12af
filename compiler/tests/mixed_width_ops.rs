//! Issue 30's fallbacks of session 17: a select on a comparison of another
//! width (u16 compared, u32 chosen; i16 compared, i8 chosen), a signed
//! multiply-shift of two lanes (its unsigned `q` padded into an xmm), an
//! i32 -> u32 saturating cast wider than a register, divisions by powers
//! of two (u32 by 32, i16 by 8), an i8 shift by a vector, and a 48-lane op whose instruction path outweighed one naive
//! lane loop. Synthesis searches the selects (`synth.select-width-*`); the
//! rest were a rule whose constant had the wrong sign, a split that left
//! out casts to their own width, a fallback filter that took an i8 shift
//! by 3 for one by a vector, and a naive cost that ignored the lane count.
//! Fixture `data/mixed_width_ops.stmt` (AVX2), run natively under
//! AddressSanitizer against the interpreter on random and edge inputs.

use crate::common;

#[test]
fn mixed_width_selects_and_padded_multiply_shifts_match_the_interpreter() {
    let (m, prog, r) = common::avx2_fixture("mixed_width_ops");
    let c = &prog.c[prog.c.find("int misaal_fn(").expect("the function")..];
    assert!(r.fallback_exprs() == 0 && r.selected_fallbacks == 0 && r.scalar_nodes == 0 && r.vector_roots == 6, "{}{}", r.summary(), r.explain);
    assert!(!c.contains("for (int l = 0;"), "a lane loop survives:\n{c}");
    for rule in ["synth.select-width-lt-u16-u32", "synth.select-width-eq-i16-i8", "synth.widened-mul_shift_right-i16.b.const", "synth.split-saturating_cast", "synth.divide-div-u32.pow2-32", "synth.divide-div-i16.pow2-8"] {
        assert!(r.explain_chains().contains(rule), "no {rule} in the selection:\n{}", r.explain_chains());
    }
    // a, b: 32 u16; c, d: 32 i16; e, f: 32 i8; g: 32 i32; x, y: 32 u32; outputs exactly their lanes.
    common::agrees_natively_on_avx2(
        "mixed_width_ops",
        &m,
        &prog,
        &[("uint16", 32), ("uint16", 32), ("int16", 32), ("int16", 32), ("int8", 32), ("int8", 32), ("int32", 32), ("uint32", 32), ("uint32", 32), ("uint32", 32), ("int8", 32), ("int16", 32), ("uint32", 32), ("uint32", 32), ("int16", 32)],
    );
}

/// On Zen 4: a 48-lane i32 saturating add is six 8-lane adds of widened
/// halves (~24 instructions); priced as one naive op regardless of its
/// lanes, the lane loop looked cheaper. An i8 shift by a vector is a 16-bit
/// one (`vpsravw`, AVX-512BW). An i32 rounding multiply-shift by 38 is one
/// of i64 products, rounded at 64 bits (the rounding-shift expansions reach
/// 64 bits). Compiled only: such zmm code runs in the
/// random-pipeline benches (through SIMDe on an AVX2 machine).
#[test]
fn zen4_lowers_a_wide_saturating_add_an_i8_shift_by_a_vector_and_an_i32_rounding_multiply_shift() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("compiler/tests/data/zen4_ops.stmt")).unwrap();
    let m = misaal_frontends::stmt::parse_module("zen4_ops.stmt", &text).expect("the Stmt parses");
    let isel = misaal_compiler::isel::Options { verdict_cache: common::test_verdict_cache(), ..Default::default() };
    let (prog, r) = misaal_compiler::c::emit_with(&m, "misaal_fn", &misaal_compiler::c::EmitOptions { isel: Some(isel) }).expect("compiles");
    let r = r.expect("a report");
    assert!(r.fallback_exprs() == 0 && r.selected_fallbacks == 0 && r.vector_roots == 3, "{}{}", r.summary(), r.explain);
    for i in ["_mm512_cvtsepi64_epi32(", "_mm512_srav_epi16("] {
        assert!(prog.c.contains(i), "no {i}:\n{}", prog.c);
    }
}
