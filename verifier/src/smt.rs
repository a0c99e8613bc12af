//! Z3: the linked version, and the bit-vector encoding of unrolled
//! semantics, shared by every proof.
//!
//! A query that times out or that Z3 cannot decide is `Unknown`, never a
//! proof.

use misaal_isa::dag::{BvOp, CmpOp, Dag, Node, NodeId, SatKind};
use misaal_isa::{BitVec, Semantics};
use z3::ast::{BV, Bool};

/// The linked libz3's version as `(major, minor, build, revision)`, parsed
/// from `Z3_get_full_version`.
pub fn z3_version() -> (u32, u32, u32, u32) {
    let full = z3::full_version();
    let nums: Vec<u32> = full
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(4)
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    let g = |i: usize| nums.get(i).copied().unwrap_or(0);
    (g(0), g(1), g(2), g(3))
}

/// The libz3 that `scripts/setup.sh` installs.
pub const EXPECTED_Z3: (u32, u32, u32) = (5, 4, 0);

fn bv_const(v: &BitVec) -> BV {
    // Z3_mk_bv_numeral takes the least significant bit first.
    let bits: Vec<bool> = (0..v.width()).map(|i| v.bit(i)).collect();
    BV::from_bits(&bits).expect("non-empty constant")
}

fn bit(b: &Bool) -> BV {
    b.ite(&BV::from_u64(1, 1), &BV::from_u64(0, 1))
}

/// Brings a shift amount of any width to width `w`, saturating at `w` so
/// that over-wide amounts keep their meaning.
fn amount(a: &BV, w: u32) -> BV {
    let aw = a.get_size();
    if aw < w {
        return a.zero_ext(w - aw);
    }
    let low = if aw == w { a.clone() } else { a.extract(w - 1, 0) };
    if aw == w {
        return low;
    }
    let limit = BV::from_u64(w as u64, aw);
    a.bvuge(&limit).ite(&BV::from_u64(w as u64, w), &low)
}

fn sat(x: &BV, kind: SatKind, n: u32) -> BV {
    let w = x.get_size();
    let ones = |k: u32| BitVec::unsigned_max(k);
    match kind {
        SatKind::Signed if n >= w => x.sign_ext(n - w),
        SatKind::Signed => {
            let max = bv_const(&BitVec::signed_max(n).sext(w));
            let min = bv_const(&BitVec::signed_min(n).sext(w));
            x.bvsgt(&max).ite(&max.extract(n - 1, 0), &x.bvslt(&min).ite(&min.extract(n - 1, 0), &x.extract(n - 1, 0)))
        }
        SatKind::Unsigned if n >= w => x.zero_ext(n - w),
        SatKind::Unsigned => {
            let max = bv_const(&ones(n).zext(w));
            x.bvugt(&max).ite(&bv_const(&ones(n)), &x.extract(n - 1, 0))
        }
        SatKind::SignedToUnsigned => {
            let neg = x.bvslt(BV::from_u64(0, w));
            let kept = if n >= w {
                x.zero_ext(n - w)
            } else {
                let max = bv_const(&ones(n).zext(w));
                x.bvsgt(&max).ite(&bv_const(&ones(n)), &x.extract(n - 1, 0))
            };
            neg.ite(&BV::from_u64(0, n), &kept)
        }
    }
}

/// Encodes every node of `dag` over the given operand terms; returns one
/// term per node (ids are topological, so one sweep suffices).
pub fn encode(dag: &Dag, operands: &[BV]) -> Vec<BV> {
    let mut t: Vec<BV> = Vec::with_capacity(dag.len());
    for n in dag.nodes() {
        let g = |i: NodeId| t[i as usize].clone();
        let e = match n {
            Node::Operand(i) => operands[*i as usize].clone(),
            Node::Const(c) => bv_const(c),
            Node::Slice { src, hi, lo } => g(*src).extract(*hi, *lo),
            Node::DynSlice { src, offset, width } => {
                let s = g(*src);
                s.bvlshr(amount(&g(*offset), s.get_size())).extract(width - 1, 0)
            }
            Node::Not(a) => g(*a).bvnot(),
            Node::Neg(a) => g(*a).bvneg(),
            Node::Bin(op, a, b) => {
                let (a, b) = (g(*a), g(*b));
                match op {
                    BvOp::Add => a.bvadd(&b),
                    BvOp::Sub => a.bvsub(&b),
                    BvOp::Mul => a.bvmul(&b),
                    BvOp::UDiv => a.bvudiv(&b),
                    BvOp::URem => a.bvurem(&b),
                    BvOp::And => a.bvand(&b),
                    BvOp::Or => a.bvor(&b),
                    BvOp::Xor => a.bvxor(&b),
                    BvOp::Shl => a.bvshl(amount(&b, a.get_size())),
                    BvOp::LShr => a.bvlshr(amount(&b, a.get_size())),
                    BvOp::AShr => a.bvashr(amount(&b, a.get_size())),
                }
            }
            Node::Cmp(op, a, b) => {
                let (a, b) = (g(*a), g(*b));
                bit(&match op {
                    CmpOp::Eq => a.eq(&b),
                    CmpOp::Ne => a.eq(&b).not(),
                    CmpOp::Ult => a.bvult(&b),
                    CmpOp::Ule => a.bvule(&b),
                    CmpOp::Slt => a.bvslt(&b),
                    CmpOp::Sle => a.bvsle(&b),
                })
            }
            Node::Ite(c, x, y) => g(*c).eq(BV::from_u64(1, 1)).ite(&g(*x), &g(*y)),
            Node::Ext { signed, src, width } => {
                let s = g(*src);
                let k = width - s.get_size();
                if *signed { s.sign_ext(k) } else { s.zero_ext(k) }
            }
            Node::Sat { kind, src, width } => sat(&g(*src), *kind, *width),
            Node::Concat(h, l) => g(*h).concat(g(*l)),
        };
        t.push(e);
    }
    t
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Equivalence {
    Proved,
    /// Operand values on which the two differ.
    Differ(Vec<BitVec>),
    /// Timeout or an undecided query: not a proof.
    Unknown(String),
}

/// Proves that two semantics over the same operands compute the same result
/// on every input, lane by lane.
pub fn prove_equivalent(a: &Semantics, b: &Semantics, timeout_ms: u32) -> Equivalence {
    let widths = a.dag.operand_widths();
    if widths != b.dag.operand_widths() || a.result_width != b.result_width {
        return Equivalence::Differ(Vec::new());
    }
    let ops: Vec<BV> = widths.iter().enumerate().map(|(i, &w)| BV::new_const(format!("op{i}"), w)).collect();
    let (ta, tb) = (encode(&a.dag, &ops), encode(&b.dag, &ops));
    let whole = |s: &Semantics, t: &[BV]| s.lanes.iter().map(|l| t[l.root as usize].clone()).reduce(|low, high| high.concat(&low)).expect("lanes");
    let solver = z3::Solver::new();
    let mut p = z3::Params::new();
    p.set_u32("timeout", timeout_ms);
    solver.set_params(&p);
    solver.assert(whole(a, &ta).eq(whole(b, &tb)).not());
    match solver.check() {
        z3::SatResult::Unsat => Equivalence::Proved,
        z3::SatResult::Sat => {
            let m = solver.get_model().expect("a model for sat");
            let vals = ops
                .iter()
                .zip(widths)
                .map(|(o, &w)| {
                    let v = m.eval(o, true).expect("operand value");
                    let bits: Vec<u8> = (0..w.div_ceil(8))
                        .map(|k| {
                            let hi = (k * 8 + 7).min(w - 1);
                            m.eval(&v.extract(hi, k * 8), true).and_then(|b| b.as_u64()).unwrap_or(0) as u8
                        })
                        .collect();
                    BitVec::from_bytes_le(w, &bits)
                })
                .collect();
            Equivalence::Differ(vals)
        }
        z3::SatResult::Unknown => Equivalence::Unknown(solver.get_reason_unknown().unwrap_or_else(|| "unknown".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_z3_is_the_one_setup_installs() {
        let (ma, mi, b, _) = z3_version();
        assert_eq!((ma, mi, b), EXPECTED_Z3, "linked Z3 is {}; run scripts/setup.sh", z3::full_version());
    }

    #[test]
    fn linked_z3_solves_a_bitvector_query() {
        // Catches a mismatch between the bindings' enum numbering and the library.
        let s = z3::Solver::new();
        let x = BV::new_const("x", 8);
        s.assert(x.bvadd(BV::from_u64(1, 8)).eq(BV::from_u64(0, 8)));
        assert_eq!(s.check(), z3::SatResult::Sat);
        let m = s.get_model().expect("model");
        assert_eq!(m.eval(&x, true).and_then(|v| v.as_u64()), Some(255));
    }

    fn lib(src: &str) -> misaal_isa::SpecLibrary {
        misaal_isa::SpecLibrary::from_sources(&[("t.sema".into(), src.into())]).unwrap()
    }

    #[test]
    fn encoding_agrees_with_the_evaluator_on_counterexamples() {
        let l = lib("instr a(x: bv16, n: bv8) -> bv16 [x86 sse2 nop]\ndst := SaturateS16(SignExtend32(x) * 3) >>s n\n\
                     instr b(x: bv16, n: bv8) -> bv16 [x86 sse2 nop]\ndst := SaturateS16(SignExtend32(x) * 3) >>u n\n");
        let (sa, sb) = (l.get("a").unwrap().1, l.get("b").unwrap().1);
        match prove_equivalent(sa, sb, 10_000) {
            Equivalence::Differ(ops) => assert_ne!(sa.eval(&ops).unwrap(), sb.eval(&ops).unwrap(), "Z3's witness must separate them concretely"),
            other => panic!("expected a difference, got {other:?}"),
        }
    }

    #[test]
    fn proves_a_true_identity_and_rejects_a_false_one() {
        let l = lib("instr a(x: bv8) -> bv8 [x86 sse2 nop]\ndst := SaturateSU8(SignExtend16(x))\n\
                     instr b(x: bv8) -> bv8 [x86 sse2 nop]\ndst := x <s 0 ? 0 : x\n\
                     instr c(x: bv8) -> bv8 [x86 sse2 nop]\ndst := x <u 0x80 ? x : 0\n\
                     instr d(x: bv8) -> bv8 [x86 sse2 nop]\ndst := x <=u 0x80 ? x : 0\n");
        let g = |n: &str| l.get(n).unwrap().1.clone();
        assert_eq!(prove_equivalent(&g("a"), &g("b"), 10_000), Equivalence::Proved);
        assert_eq!(prove_equivalent(&g("b"), &g("c"), 10_000), Equivalence::Proved);
        assert!(matches!(prove_equivalent(&g("c"), &g("d"), 10_000), Equivalence::Differ(_)));
    }
}
