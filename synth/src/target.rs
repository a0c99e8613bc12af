//! What synthesis needs to know about a target, as data: one enumerator,
//! one abstraction and one writer serve x86, ARM NEON and HVX, each
//! parametrized by a [`SynthTarget`]. The rule head, the register widths,
//! the spec folder and the name style come from the target registry
//! (`misaal_targets::TargetDesc`, seen through `misaal_rulesets::TargetIsa`),
//! which the verifier and the compiler read too; this file adds only what
//! the enumeration needs.

use crate::enumerate::halide::HTy;
use misaal_rulesets::TargetIsa;

/// How a target spells element types in its instruction names, which the
/// abstraction turns into name templates: the registry's
/// [`misaal_targets::TargetDesc::name_style`].
pub use misaal_targets::NameStyle;

/// `shuffle(hi(x), lo(x), control)` for a pair-valued term `x`.
#[derive(Debug)]
pub struct PairShuffle {
    pub shuffle: &'static str,
    pub hi: &'static str,
    pub lo: &'static str,
    pub controls: &'static [i128],
}

#[derive(Debug)]
pub struct SynthTarget {
    pub isa: &'static TargetIsa,
    /// Widths of instruction operands and results the enumeration uses
    /// (registers and register pairs).
    pub operand_widths: &'static [u32],
    /// Halide unit types are 64 or 128 bits wide (see [`Self::unit_widths`]);
    /// a target register holds `lane_scale` times that (HVX: 8, a 1024-bit
    /// register for a 128-bit unit). Fingerprints compare the Halide term
    /// at reduced lanes with the low bits of the register-wide target term,
    /// so the Halide side never runs at 1024 bits until a match is checked.
    pub lane_scale: u32,
    /// Widths of the Halide unit types: x86 and HVX 128; ARM 128 (Q
    /// registers) and 64 (D registers, whose long forms give 128 bits).
    pub unit_widths: &'static [u32],
    /// Scalar (`bv8` to `bv32`) operands are enumerated like immediates
    /// (ARM's `_n` forms, HVX's `Rt`); x86's scalar forms are left out.
    pub scalar_operands: bool,
    /// The deepest target term enumerated by default. x86's 280 verified
    /// specs take depth 2 in a few minutes; ARM's 2,036 make the depth-2
    /// products (every instruction over every pair of depth-1 terms) too
    /// many to list on two cores, so ARM stays at depth 1 (NEON has one
    /// instruction for most Halide compositions: `vqdmulh`, `vrshrn`,
    /// `vabal`...), as HVX does, whose 1024-bit evaluations are 8 times
    /// dearer; HVX's lane-order fix-ups of pairs come from [`PairShuffle`].
    pub depth: u8,
    /// Register-pair results (HVX's widening instructions put even lanes in
    /// the lo register and odd lanes in the hi one) are also tried through
    /// this shuffle of their halves, for each control value.
    pub pair_shuffle: Option<PairShuffle>,
    /// Immediate operands tried.
    pub immediates: &'static [i128],
    /// The ruleset the synthesis writes: `rulesets/<name>.egg`, beside the
    /// hand-written `<name>_hand.egg`.
    pub output: &'static str,
    /// Also enumerate the three-variable accumulator units
    /// ([`accumulator_signatures`]).
    pub accumulator_units: bool,
    /// Also enumerate the one-variable units twice the unit width
    /// ([`narrowing_signatures`]).
    pub narrowing_units: bool,
    /// Comparisons are enumerated, and matched with instructions whose
    /// result is a mask register (AVX-512's k registers).
    pub mask_results: bool,
    /// Where the pool stops at depth 1: the one-op Halide heads a unit
    /// leaves without a rule get a directed second level
    /// ([`crate::enumerate::deepen`]).
    pub deepen: bool,
}

pub const X86: SynthTarget = SynthTarget {
    isa: &misaal_rulesets::X86,
    operand_widths: &[128, 256],
    lane_scale: 1,
    unit_widths: &[128],
    scalar_operands: false,
    depth: 2,
    pair_shuffle: None,
    immediates: &[1, 7, 15, 31, 63],
    output: "x86",
    accumulator_units: true,
    narrowing_units: true,
    mask_results: true,
    deepen: false,
};

pub const ARM: SynthTarget = SynthTarget {
    isa: &misaal_rulesets::ARM,
    operand_widths: &[64, 128],
    lane_scale: 1,
    unit_widths: &[128, 64],
    scalar_operands: true,
    depth: 1,
    pair_shuffle: None,
    // Shift counts (1 and E-1, and E for the narrowing shifts' E/2 range), lane indices.
    immediates: &[1, 7, 8, 15, 16, 31, 32, 63],
    output: "arm",
    accumulator_units: false,
    narrowing_units: false,
    mask_results: false,
    deepen: false,
};

pub const HVX: SynthTarget = SynthTarget {
    isa: &misaal_rulesets::HVX,
    operand_widths: &[1024, 2048],
    lane_scale: 8,
    unit_widths: &[128],
    scalar_operands: true,
    depth: 1,
    // `vshuff` of the halves with control -2 interleaves halfwords, -4 words.
    pair_shuffle: Some(PairShuffle { shuffle: "Q6_W_vshuff_VVR", hi: "Q6_V_hi_W", lo: "Q6_V_lo_W", controls: &[-2, -4] }),
    // Shift counts.
    immediates: &[1, 7, 15, 31],
    output: "hvx",
    accumulator_units: false,
    narrowing_units: false,
    mask_results: false,
    // A 32-bit multiply or rounding high half is two instructions.
    deepen: true,
};

pub const TARGETS: [&SynthTarget; 3] = [&X86, &ARM, &HVX];

impl SynthTarget {
    pub fn by_name(name: &str) -> Option<&'static SynthTarget> {
        TARGETS.into_iter().find(|t| t.isa.name == name)
    }
    /// The rule head and ruleset name: `x86`, `arm`, `hvx`.
    pub fn name(&self) -> &'static str {
        self.isa.name
    }
    /// How its instruction names spell types and widths (the registry's
    /// [`misaal_targets::TargetDesc::name_style`]).
    pub fn names(&self) -> NameStyle {
        self.isa.name_style
    }
    /// The register widths a rule's `?vsize` ranges over.
    pub fn vector_widths(&self) -> &'static [i128] {
        self.isa.vector_widths
    }
    /// One and two variables of each integer type of every unit width, and
    /// u8 x i8 for the mixed-sign products.
    pub fn default_signatures(&self) -> Vec<Vec<HTy>> {
        let mut out = Vec::new();
        for &w in self.unit_widths {
            let tys: Vec<HTy> = [(false, 8), (true, 8), (false, 16), (true, 16), (false, 32), (true, 32)].iter().map(|&(s, b)| HTy::new(s, b, w / b)).collect();
            out.extend(tys.iter().map(|&t| vec![t]));
            out.extend(tys.iter().map(|&t| vec![t, t]));
            out.push(vec![HTy::new(false, 8, w / 8), HTy::new(true, 8, w / 8)]);
        }
        if self.accumulator_units {
            for &w in self.unit_widths {
                out.extend(accumulator_signatures(w));
            }
        }
        if self.narrowing_units {
            for &w in self.unit_widths {
                out.extend(narrowing_signatures(w));
            }
        }
        out
    }

    /// Whether `sig` is a unit of this target: variables of one unit width,
    /// or one variable twice as wide ([`narrowing_signatures`]).
    pub fn unit_ok(&self, sig: &[HTy]) -> bool {
        let w = sig[0].width();
        sig.iter().all(|t| t.width() == w) && (self.unit_widths.contains(&w) || (self.narrowing_units && sig.len() == 1 && w.is_multiple_of(2) && self.unit_widths.contains(&(w / 2))))
    }
}

/// One variable two units wide, of 16- or 32-bit elements: the terms of
/// these units that end a unit wide are the narrowings whose input fills
/// a wider register than their output (one instruction for a whole
/// register's truncation or saturation, vpmovdw and friends).
pub fn narrowing_signatures(w: u32) -> Vec<Vec<HTy>> {
    let mut out = Vec::new();
    for bits in [16u32, 32] {
        for signed in [false, true] {
            out.push(vec![HTy::new(signed, bits, 2 * w / bits)]);
        }
    }
    out
}

/// Three-variable units of one width: an accumulator of 16 or 32 bits and
/// two operands of a narrower element (u x u, i x i, u x i), the
/// accumulator signed when a product is. Multiply-accumulates into wider
/// lanes (dot products of pairs and quads) are terms over these.
pub fn accumulator_signatures(w: u32) -> Vec<Vec<HTy>> {
    let mut out = Vec::new();
    for acc in [32u32, 16] {
        for op in [16u32, 8] {
            if op >= acc {
                continue;
            }
            for (sa, sb) in [(false, false), (true, true), (false, true)] {
                out.push(vec![HTy::new(sa || sb, acc, w / acc), HTy::new(sa, op, w / op), HTy::new(sb, op, w / op)]);
            }
        }
    }
    out
}
