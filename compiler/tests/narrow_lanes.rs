//! Vectors narrower than a register (issue 30): a u8x8 chain, an i32x4
//! narrowed to u16x4, a u8x6 widened to u16x6 and a u8x4 saturating add
//! are doubled (`synth.pad-*.x2`, `synth.dup-*.x2` in rulesets/x86.egg,
//! from lane facts, every instance proved) until they fill an xmm, so they
//! compile to instructions, not lane loops; the u8x6 is first padded to 8
//! lanes (`synth.pad-*.x3`). Before, an op of at most 64 bits counted as
//! a scalar op and went to a lane loop uncounted. Fixture
//! `data/narrow_lanes.stmt` (AVX2), run natively under AddressSanitizer:
//! each input holds exactly the lanes read and each output a few lanes
//! more than are stored, so a doubling that read or wrote past a vector's
//! own lanes fails.

use crate::common;

#[test]
fn narrow_vectors_are_doubled_to_registers_and_match_the_interpreter() {
    let (m, prog, r) = common::avx2_fixture("narrow_lanes");
    let c = &prog.c[prog.c.find("int misaal_fn(").expect("the function")..];
    // Every op an instruction: no naive op, no scalar op, no lane loop.
    assert!(r.fallback_exprs() == 0 && r.selected_fallbacks == 0 && r.scalar_nodes == 0 && r.vector_roots == 4, "{}{}", r.summary(), r.explain);
    assert!(!c.contains("for (int l = 0;"), "a lane loop survives:\n{c}");
    // Each chain in an xmm: 16 u8 lanes (vpavgb, vpmaxub, vpaddusb), 4 i32
    // (vpmaxsd, vpackusdw), 8 i16 (vpsubw of the absd).
    for i in ["_mm_avg_epu8(", "_mm_max_epu8(", "_mm_adds_epu8(", "_mm_max_epi32(", "_mm_packus_epi32(", "_mm_sub_epi16("] {
        assert!(c.contains(i), "no {i}:\n{c}");
    }
    // A 64-bit result stored as its 8 bytes.
    assert!(c.contains("_mm_storel_epi64("), "{c}");
    // a, b: 40 u8 (5 x 8); c: 13 i32 (3 x 4, +1); d: 24 i16 (4 x 6);
    // out 44 (4 past the stores), w 14 (2 past), q 26 (2 past), r 20 (4 past).
    common::agrees_natively_on_avx2("narrow_lanes", &m, &prog, &[("uint8", 40), ("uint8", 40), ("int32", 13), ("int16", 24), ("uint8", 44), ("uint16", 14), ("uint16", 26), ("uint8", 20)]);
}
