//! Lane counts that are not powers of two (issue 30): a 24-lane u8, a
//! 5-lane i32 and a 12-lane i16 vector are padded to 32, 8 and 16 lanes by
//! the pad rules (`synth.pad-*`, `synth.dup-*` in rulesets/x86.egg, from
//! lane facts, every instance proved), so they compile to instructions, not
//! lane loops, and only their loads and stores copy bytes. Fixture
//! `data/odd_lanes.stmt` (AVX2), run natively under AddressSanitizer: each
//! input holds exactly the lanes read, so a pad that read past a vector's
//! own lanes would overrun its buffer, and a store of the pad lanes would
//! show in the output's last elements.

use crate::common;

#[test]
fn odd_lane_counts_are_padded_to_registers_and_match_the_interpreter() {
    let (m, prog, r) = common::avx2_fixture("odd_lanes");
    let c = &prog.c[prog.c.find("int misaal_fn(").expect("the function")..];
    // Every op an instruction: no naive op, no lane loop.
    assert!(r.fallback_exprs() == 0 && r.selected_fallbacks == 0, "{}{}", r.summary(), r.explain);
    assert!(!c.contains("for (int l = 0;"), "a lane loop survives:\n{c}");
    // Each chain in registers of the padded width: 32 u8 lanes (vpavgb,
    // vpmaxub), 8 i32 (vpmaxsd), 16 i16 (vpaddsw).
    for i in ["_mm256_avg_epu8(", "_mm256_max_epu8(", "_mm256_max_epi32(", "_mm256_adds_epi16("] {
        assert!(c.contains(i), "no {i}:\n{c}");
    }
    // Loads padded with their own first lanes, stores of exactly the lanes.
    assert!(c.contains(", 24);\n") && c.contains(", 20);\n") && c.contains(", 12);\n"), "{c}");
    // a, b: 96 u8 (4 x 24); c: 16 i32 (3 x 5, +1); d: 24 i16 (2 x 12);
    // out 100 (4 past the stores), w 16 (1 past), q 26 (2 past).
    common::agrees_natively_on_avx2("odd_lanes", &m, &prog, &[("uint8", 96), ("uint8", 96), ("int32", 16), ("int16", 24), ("uint8", 100), ("int32", 16), ("int16", 26)]);
}
