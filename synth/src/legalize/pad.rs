//! Pad rules from lane facts: a lane-local Halide op on a lane count that
//! is not a power of two (24 lanes) is the low part of the op on the next
//! power of two (32), whose operands are padded with their own first lanes:
//!
//! ```text
//! op<n>(a, b) = slice<n of m>(op<m>(concat<n, p>(a, slice<p of n>(a)), concat<n, p>(b, slice<p of n>(b))))
//! ```
//!
//! with m the next power of two and p = m - n < n. The pad lanes are copies
//! of defined lanes, so every lane of both sides is defined and the rule is
//! an equality the verifier proves. A lane-local op keeps the pad's shape
//! ("dup"): op<m> of padded operands is the n-lane op padded the same way,
//! so a chain of padded ops stays in registers (the next op's padded
//! operand is the last op's m-lane form), and only the loads and the store
//! at the ends go through memory. This is how Halide's back ends widen an
//! odd vector (LLVM legalizes <24 x i8> by widening to <32 x i8>); what
//! no register holds is copied in and out as bytes by the emitter.
//!
//! A vector of a power-of-two lane count narrower than the narrowest
//! register (x86's u8x8 in 64 bits, under the 128 of an xmm) is doubled
//! instead, each operand repeated (`concat(a, a)`), until it fills one,
//! as LLVM widens <8 x i8> to <16 x i8> ([`doubling_lanes`]).
//!
//! Which ops get the templates is decided by their lane facts, as for the
//! split rules ([`super::lane_ops`]); each instance is proved by the caller.

use super::{LaneOp, Split, lane_ops};
use misaal_isa::SpecLibrary;

/// The lane counts padded, by odd factor: 3, 5 or 7 times a power of two,
/// as vectorizing by a non-power-of-two factor gives them (3 RGB channels,
/// 24-wide tiles, 5- and 7-tap rows), up to 48; and the next power of two
/// of each family, `?n * NUM / DEN`. One template per family with the pad
/// width defined from `?n`, not a free `?m`. Every compile enumerates
/// every instance of the file (`misaal_verifier::audit::load_rules_counted`),
/// about 1.5 ms per lane count here, so the rarer ones (40, 56, 96) are
/// left out.
pub const FAMILIES: [(&str, i128, i128, &[i128]); 3] = [("x3", 4, 3, &[3, 6, 12, 24, 48]), ("x5", 8, 5, &[5, 10, 20]), ("x7", 8, 7, &[7, 14, 28])];

/// The widest padded side: the widest value a split halves, so that 48
/// lanes of 64 bits (3,072 bits) pad to 64 and split down to registers, as
/// 48 lanes of 32 bits did.
const PADDED_BITS: i128 = 2 * super::SPLIT_HALF_BITS;

/// The power-of-two lane counts doubled (`x2`) where a vector side of the
/// op is narrower than `fill` bits, the target's narrowest register
/// ([`super::Registers::narrowest`]: x86's xmm, 128; NEON's D, 64; HVX's
/// vector, 1,024), so that a chain of doublings reaches one: every count
/// whose byte lanes are narrower (2, 4 and 8 lanes at 128 bits; up to 64
/// at 1,024).
pub fn doubling_lanes(fill: i128) -> Vec<i128> {
    (1..=7).map(|k| 1i128 << k).filter(|n| n * 8 < fill).collect()
}

/// The sign variable of a part of element width `e`.
fn sign_of(lop: &LaneOp, e: &str) -> &'static str {
    match e {
        "1" => "0",
        "?bw2" if lop.s2 => "?s2",
        _ => "?sign",
    }
}

/// The operand Halide types unsigned whatever the op's sign: a
/// multiply-shift's `q` (`(uint16)7`). Padded at the op's sign, it would
/// be a concat no padded broadcast of `q` shares a class with.
pub(super) fn unsigned_operand(op: &str) -> Option<usize> {
    matches!(op, "mul_shift_right" | "rounding_mul_shift_right").then_some(2)
}

/// `lanes` (over `?n`) at `?m` or `?p` instead.
fn at(lanes: &str, var: &str) -> String {
    lanes.replace("?n", var)
}

/// `v` of element width `e` and `lanes` (over `?n`) padded to `?m` lanes:
/// with its own first `?p` lanes, or (`doubled`, where `?p` is `?n`) with
/// itself.
fn padded(sign: &str, e: &str, lanes: &str, v: &str, doubled: bool) -> String {
    let (n, p) = (lanes, at(lanes, "?p"));
    if doubled {
        return format!("(concat (t {sign} {e} {n}) {n} {v} {v})");
    }
    format!("(concat (t {sign} {e} {n}) {p} {v} (slice (t {sign} {e} {p}) {n} 0 1 {v}))")
}

/// The pad and dup templates of every lane-local Halide op, doubling
/// vectors narrower than `fill` bits.
pub fn pads(halide: &SpecLibrary, fill: i128) -> Vec<Split> {
    let mut out = Vec::new();
    for lop in lane_ops(halide) {
        let op = &lop.op;
        let vars: Vec<String> = lop.operands.iter().map(|(v, _)| v.clone()).collect();
        let padded_args = |doubled: bool| -> Vec<String> {
            lop.operands.iter().enumerate().map(|(k, (v, w))| match w {
                None => v.clone(),
                Some((e, l)) => padded(if unsigned_operand(op) == Some(k) { "0" } else { sign_of(&lop, e) }, e, l, v, doubled),
            }).collect()
        };
        let narrow = format!("({op} {} {})", lop.generics("?n"), vars.join(" "));
        let wide = format!("({op} {} {})", lop.generics("?m"), padded_args(false).join(" "));
        let doubled = format!("({op} {} {})", lop.generics("?m"), padded_args(true).join(" "));
        // The result has the lanes of the op's own type (`?n`), or of a
        // vector operand grouped by `?f` (a reduction's are `?n`).
        let (out_e, out_sign) = (lop.out_e, sign_of(&lop, lop.out_e));
        // The widths of the vector sides (a bool side has none), over `?n`.
        let sides = lop.sides();
        let widths: Vec<String> = sides.iter().map(|w| at(w, "?m")).collect();
        let provenance = format!("phase legalize; lane facts of Halide `{op}`: output lane i reads only lane i of each vector operand");
        // Lanes of 8 to 64 bits (`LaneOp::free`'s widths): 64-bit lanes too,
        // where a random pipeline's values enter and leave them (an i8x12
        // saturated to i64x12 and back) and where they are shifted or
        // selected at 7 or 24 lanes.
        let free_at = |lanes: &[i128]| lop.free(lanes.to_vec());
        // A pad (`op<n>` is the low lanes of `op<m>` of padded operands)
        // and its dup (`op<m>` of padded operands is `op<n>` padded).
        let mut pair = |family: &str, wide: &str, dup_rhs: String, conds: Vec<String>, free: Vec<(String, Vec<i128>)>, why: [&str; 2]| {
            out.push(Split {
                op: op.clone(),
                name: format!("synth.pad-{op}.{family}"),
                lhs: narrow.clone(),
                rhs: format!("(slice (t {out_sign} {out_e} ?n) ?m 0 1 {wide})"),
                conds: conds.clone(),
                free: free.clone(),
                provenance: format!("{provenance}; {}", why[0]),
            });
            out.push(Split { op: op.clone(), name: format!("synth.dup-{op}.{family}"), lhs: wide.to_string(), rhs: dup_rhs, conds, free, provenance: format!("{provenance}; {}", why[1]) });
        };
        for (family, num, den, lanes) in FAMILIES {
            // A cast to the same width (a change of sign) is padded too:
            // unlike a split, no other rule reaches it at these lane counts.
            let mut conds = vec![format!("(= ?m (/ (* ?n {num}) {den}))"), "(= ?p (- ?m ?n))".to_string()];
            conds.extend(widths.iter().map(|w| format!("(<= {w} {PADDED_BITS})")));
            let why = ["padded to the next power of two with its own first lanes", "the op of padded operands is the padded op"];
            pair(family, &wide, padded(out_sign, out_e, "?n", &narrow, false), conds, free_at(lanes), why);
        }
        // Doubling: one template per side that is narrower than a
        // register while the sides before it are not, so that no instance
        // is written twice.
        for (k, side) in sides.iter().enumerate() {
            let suffix = if k == 0 { String::new() } else { format!(".{k}") };
            let mut conds = vec!["(= ?m (* 2 ?n))".to_string(), format!("(< {side} {fill})")];
            conds.extend(sides[..k].iter().map(|w| format!("(>= {w} {fill})")));
            conds.extend(widths.iter().map(|w| format!("(<= {w} {PADDED_BITS})")));
            let why = ["narrower than a register, so doubled, each operand repeated", "the op of repeated operands is the op repeated"];
            pair(&format!("x2{suffix}"), &doubled, format!("(concat (t {out_sign} {out_e} ?n) ?n {narrow} {narrow})"), conds, free_at(&doubling_lanes(fill)), why);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_pads_to_the_next_power_of_two() {
        let (halide, _) = super::super::test_libraries();
        let p = pads(&halide, 128);
        let add = p.iter().find(|s| s.name == "synth.pad-add.x3").expect("add is lane-local");
        assert_eq!(add.lhs, "(add (t ?sign ?bw ?n) ?x0 ?x1)");
        assert_eq!(
            add.rhs,
            "(slice (t ?sign ?bw ?n) ?m 0 1 (add (t ?sign ?bw ?m) (concat (t ?sign ?bw ?n) ?p ?x0 (slice (t ?sign ?bw ?p) ?n 0 1 ?x0)) (concat (t ?sign ?bw ?n) ?p ?x1 (slice (t ?sign ?bw ?p) ?n 0 1 ?x1))))"
        );
        let dup = p.iter().find(|s| s.name == "synth.dup-add.x3").expect("dup");
        assert_eq!(dup.lhs, add.rhs[add.rhs.find("(add").unwrap()..add.rhs.len() - 1]);
        // A comparison's result is a bool vector, padded as one.
        let lt = p.iter().find(|s| s.name == "synth.dup-lt.x5").expect("lt is lane-local");
        assert!(lt.rhs.starts_with("(concat (t 0 1 ?n) ?p (lt (t ?sign ?bw ?n) ?x0 ?x1)"), "{}", lt.rhs);
        // A cast's result has the cast's sign and width.
        let cast = p.iter().find(|s| s.name == "synth.pad-cast.x7").expect("cast is lane-local");
        assert!(cast.rhs.starts_with("(slice (t ?s2 ?bw2 ?n) ?m 0 1 (cast (t ?sign ?bw ?m) ?s2 ?bw2"), "{}", cast.rhs);
    }

    #[test]
    fn a_cast_to_its_own_width_splits_only_past_2048_bits() {
        let (halide, _) = super::super::test_libraries();
        let s = super::super::splits(&halide, super::super::Registers::of(&misaal_rulesets::X86));
        let same = s.iter().find(|s| s.name == "synth.split-cast.same-width").expect("same-width cast split");
        assert!(same.conds.contains(&"(= ?bw ?bw2)".to_string()) && same.conds.contains(&"(> (* ?n ?bw) 1024)".to_string()), "{:?}", same.conds);
        let plain = s.iter().find(|s| s.name == "synth.split-cast").expect("cast split");
        assert!(plain.conds.contains(&"(!= ?bw ?bw2)".to_string()));
        assert!(!s.iter().any(|s| s.name == "synth.split-saturating_cast.same-width"));
    }

    #[test]
    fn a_vector_narrower_than_a_register_is_doubled() {
        let (halide, _) = super::super::test_libraries();
        let p = pads(&halide, 128);
        let add = p.iter().find(|s| s.name == "synth.pad-add.x2").expect("add is lane-local");
        assert_eq!(add.rhs, "(slice (t ?sign ?bw ?n) ?m 0 1 (add (t ?sign ?bw ?m) (concat (t ?sign ?bw ?n) ?n ?x0 ?x0) (concat (t ?sign ?bw ?n) ?n ?x1 ?x1)))");
        assert!(add.conds.contains(&"(< (* ?n ?bw) 128)".to_string()), "{:?}", add.conds);
        let dup = p.iter().find(|s| s.name == "synth.dup-add.x2").expect("dup");
        assert_eq!(dup.rhs, "(concat (t ?sign ?bw ?n) ?n (add (t ?sign ?bw ?n) ?x0 ?x1) (add (t ?sign ?bw ?n) ?x0 ?x1))");
        // A cast has two sides: the second template takes a narrow result
        // of a wide operand, and only that, so no instance is written twice.
        let c1 = p.iter().find(|s| s.name == "synth.pad-cast.x2.1").expect("the result side");
        assert!(c1.conds.contains(&"(< (* ?n ?bw2) 128)".to_string()) && c1.conds.contains(&"(>= (* ?n ?bw) 128)".to_string()), "{:?}", c1.conds);
        assert!(!p.iter().any(|s| s.name == "synth.pad-add.x2.1"), "one side, one template");
    }

    #[test]
    fn hvx_doubles_up_to_its_1024_bit_vector_and_splits_to_it() {
        use super::super::{Registers, splits};
        let (halide, _) = super::super::test_libraries();
        assert_eq!(doubling_lanes(128), vec![2, 4, 8]);
        assert_eq!(doubling_lanes(1024), vec![2, 4, 8, 16, 32, 64]);
        let (x86, arm, hvx) = (Registers::of(&misaal_rulesets::X86), Registers::of(&misaal_rulesets::ARM), Registers::of(&misaal_rulesets::HVX));
        assert_eq!((x86.fill, x86.narrowest, x86.parity), (128, 128, false));
        assert_eq!((arm.fill, arm.narrowest, arm.parity, arm.widest), (128, 64, false, 256));
        assert_eq!((x86.widest, hvx.widest), (512, 1024));
        assert_eq!((hvx.fill, hvx.narrowest, hvx.parity), (1024, 1024, true));
        let s = splits(&halide, hvx);
        let add = s.iter().find(|s| s.name == "synth.pad-add.x2").expect("add doubles");
        assert!(add.conds.contains(&"(< (* ?n ?bw) 1024)".to_string()), "{:?}", add.conds);
        assert_eq!(add.free.iter().find(|(v, _)| v == "n").unwrap().1, doubling_lanes(1024));
        let split = s.iter().find(|s| s.name == "synth.split-add").expect("add splits");
        assert!(split.conds.contains(&"(>= (* ?n ?bw) 1024)".to_string()), "{:?}", split.conds);
        // HVX's pairs come in even and odd lanes: the parity split too.
        let parity = s.iter().find(|s| s.name == "synth.parity-add").expect("add splits by parity");
        assert!(parity.rhs.starts_with("(interleave (t ?sign ?bw ?n) (add (t ?sign ?bw ?n) (slice (t ?sign ?bw ?n) (* 2 ?n) 0 2 ?x0)"), "{}", parity.rhs);
        assert_eq!(parity.conds, split.conds);
        assert!(s.iter().any(|s| s.name == "synth.slice-concat-hi"));
        let odd = s.iter().find(|s| s.name == "synth.slice-interleave-odd").expect("the odd lanes of an interleave");
        assert_eq!((odd.lhs.as_str(), odd.rhs.as_str()), ("(slice (t ?sign ?bw ?n) (* 2 ?n) 1 2 (interleave (t ?sign2 ?bw ?n) ?x0 ?x1))", "?x1"));
        assert!(s[0].text("hvx", "n", &s[0].free).ends_with(":ruleset hvx)"));
        // x86 has no parity splits and no variants per side.
        let x = splits(&halide, x86);
        assert!(!x.iter().any(|s| s.name.starts_with("synth.parity-") || s.name.starts_with("synth.slice-interleave-") || s.name == "synth.split-add.side1"));
    }

    #[test]
    fn arm_splits_a_widening_cast_into_d_register_halves() {
        let (halide, _) = super::super::test_libraries();
        let s = super::super::splits(&halide, super::super::Registers::of(&misaal_rulesets::ARM));
        // A 64-bit vector is a D register: only narrower ones are doubled.
        let add = s.iter().find(|s| s.name == "synth.pad-add.x2").expect("add doubles");
        assert!(add.conds.contains(&"(< (* ?n ?bw) 64)".to_string()), "{:?}", add.conds);
        // The operand's side fills a Q register, or, in the second
        // template, only the result's does (u8x16 to u16x16: two D halves).
        let first = s.iter().find(|s| s.name == "synth.split-cast").expect("cast splits");
        assert!(first.conds.contains(&"(>= (* ?n ?bw) 128)".to_string()) && first.conds.contains(&"(>= (* ?n ?bw2) 64)".to_string()), "{:?}", first.conds);
        let second = s.iter().find(|s| s.name == "synth.split-cast.side1").expect("the result side");
        assert!(second.conds.contains(&"(< (* ?n ?bw) 128)".to_string()) && second.conds.contains(&"(>= (* ?n ?bw2) 128)".to_string()), "{:?}", second.conds);
        assert!(second.conds.contains(&"(>= (* ?n ?bw) 64)".to_string()), "{:?}", second.conds);
        // One side: one template.
        assert!(s.iter().any(|s| s.name == "synth.split-add") && !s.iter().any(|s| s.name == "synth.split-add.side1"));
    }

    #[test]
    fn every_op_pads_64_bit_lanes() {
        let (halide, _) = super::super::test_libraries();
        let p = pads(&halide, 128);
        let widths = |name: &str, v: &str| p.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name}")).free.iter().find(|(k, _)| k == v).unwrap().1.clone();
        assert_eq!(widths("synth.pad-cast.x3", "bw2"), vec![8, 16, 32, 64]);
        assert_eq!(widths("synth.dup-saturating_cast.x7", "bw"), vec![8, 16, 32, 64]);
        assert_eq!(widths("synth.pad-shr.x7", "bw"), vec![8, 16, 32, 64]);
        // 48 lanes of 64 bits pad to 4,096, which the splits halve.
        let shr = p.iter().find(|s| s.name == "synth.pad-shr.x3").expect("shr is lane-local");
        assert!(shr.conds.contains(&"(<= (* ?m ?bw) 4096)".to_string()), "{:?}", shr.conds);
    }
}
