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
/// about 1.5 ms per lane count here, so the rarer ones (40, 56, 96) and
/// 64-bit lanes (7 of 2,600 fallback ops over 200 random pipelines) are
/// left out.
pub const FAMILIES: [(&str, i128, i128, &[i128]); 3] = [("x3", 4, 3, &[3, 6, 12, 24, 48]), ("x5", 8, 5, &[5, 10, 20]), ("x7", 8, 7, &[7, 14, 28])];

/// The lane widths padded.
const WIDTHS: [i128; 3] = [8, 16, 32];

/// The sign variable of a part of element width `e`.
fn sign_of(lop: &LaneOp, e: &str) -> &'static str {
    match e {
        "1" => "0",
        "?bw2" if lop.s2 => "?s2",
        _ => "?sign",
    }
}

/// `lanes` (over `?n`) at `?m` or `?p` instead.
fn at(lanes: &str, var: &str) -> String {
    lanes.replace("?n", var)
}

/// `v` of element width `e` and `lanes` (over `?n`) padded to `?m` lanes.
fn padded(sign: &str, e: &str, lanes: &str, v: &str) -> String {
    let (n, p) = (lanes, at(lanes, "?p"));
    format!("(concat (t {sign} {e} {n}) {p} {v} (slice (t {sign} {e} {p}) {n} 0 1 {v}))")
}

/// The pad and dup templates of every lane-local Halide op.
pub fn pads(halide: &SpecLibrary) -> Vec<Split> {
    let mut out = Vec::new();
    for lop in lane_ops(halide) {
        let op = &lop.op;
        let vars: Vec<String> = lop.operands.iter().map(|(v, _)| v.clone()).collect();
        let padded_args: Vec<String> = lop.operands.iter().map(|(v, w)| match w {
            None => v.clone(),
            Some((e, l)) => padded(sign_of(&lop, e), e, l, v),
        }).collect();
        let narrow = format!("({op} {} {})", lop.generics("?n"), vars.join(" "));
        let wide = format!("({op} {} {})", lop.generics("?m"), padded_args.join(" "));
        // The result has the lanes of the op's own type (`?n`), or of a
        // vector operand grouped by `?f` (a reduction's are `?n`).
        let (out_e, out_sign) = (lop.out_e, sign_of(&lop, lop.out_e));
        let mut widths: Vec<String> = vec![];
        for e in lop.operands.iter().filter_map(|(_, w)| w.map(|(e, l)| at(&format!("(* {l} {e})"), "?m"))).chain([format!("(* ?m {out_e})")]) {
            if !e.ends_with(" 1)") && !widths.contains(&e) {
                widths.push(e);
            }
        }
        let provenance = format!("phase legalize; lane facts of Halide `{op}`: output lane i reads only lane i of each vector operand");
        for (family, num, den, lanes) in FAMILIES {
            let mut free = lop.free(lanes.to_vec());
            for (v, d) in free.iter_mut() {
                if v == "bw" || v == "bw2" {
                    *d = WIDTHS.to_vec();
                }
            }
            // A cast to the same width (a change of sign) is padded too:
            // unlike a split, no other rule reaches it at these lane counts.
            let mut conds = vec![format!("(= ?m (/ (* ?n {num}) {den}))"), "(= ?p (- ?m ?n))".to_string()];
            conds.extend(widths.iter().map(|w| format!("(<= {w} 2048)")));
            out.push(Split {
                op: op.clone(),
                name: format!("synth.pad-{op}.{family}"),
                lhs: narrow.clone(),
                rhs: format!("(slice (t {out_sign} {out_e} ?n) ?m 0 1 {wide})"),
                conds: conds.clone(),
                free: free.clone(),
                provenance: format!("{provenance}; padded to the next power of two with its own first lanes"),
            });
            out.push(Split {
                op: op.clone(),
                name: format!("synth.dup-{op}.{family}"),
                lhs: wide.clone(),
                rhs: padded(out_sign, out_e, "?n", &narrow),
                conds,
                free,
                provenance: format!("{provenance}; the op of padded operands is the padded op"),
            });
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
        let p = pads(&halide);
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
}
