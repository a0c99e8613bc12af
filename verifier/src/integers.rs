//! Proofs over the integers, for cones that divide by constants.
//!
//! Z3 bit-blasts a 32-bit division by a constant into a divider circuit and
//! cannot relate that to a multiply-high (u32 / 3 against `(x * 0xaaaaaaab)
//! >> 33` is still `unknown` after 120 s). Read as integers, the same claim
//! is linear arithmetic, which Z3 decides in milliseconds: a node of width
//! w is its unsigned value in [0, 2^w), a product by a constant is a
//! multiple, and slices, shifts and wrap-around are quotients and
//! remainders by powers of two.
//!
//! The translation is exact node by node (the tests check it against the
//! evaluator on random inputs), so an `unsat` here is a proof as strong as
//! one over bit-vectors. A node it cannot state linearly (a product of two
//! variables, a bitwise op on two variables, a shift by a variable) makes
//! it decline, and the bit-vector proof stands alone.

use crate::smt::{Budget, Equivalence};
use misaal_isa::dag::{BvOp, CmpOp, Node, NodeId, SatKind};
use misaal_isa::{BitVec, Semantics};
use std::str::FromStr;
use z3::ast::{Ast, Bool, Int};

/// Bounds on a node's value (inclusive), where its width leaves room for
/// them in `i128` arithmetic. They let a sum, a product by a constant or a
/// negation wrap by one conditional correction, or not at all, instead of a
/// remainder: Z3 decides a chain of remainders by 2^w slowly (an i32
/// division through the unsigned one took 20 s).
type Range = Option<(i128, i128)>;

/// Widths up to which bounds are kept.
const RANGED: u32 = 120;

fn full(w: u32) -> Range {
    (w <= RANGED).then(|| (0, (1i128 << w) - 1))
}

fn hull(a: Range, b: Range) -> Range {
    Some((a?.0.min(b?.0), a?.1.max(b?.1)))
}

/// A node's value: its unsigned integer and bounds on it, and, where the
/// node is known to be all zeros or all ones (a comparison, a sign mask),
/// the condition under which it is all ones, so that bitwise ops with it
/// stay linear.
#[derive(Clone)]
struct Term {
    v: Int,
    r: Range,
    ones_if: Option<Bool>,
    /// The node's value when it reads no operand.
    known: Option<BitVec>,
}

impl Term {
    fn new(v: Int, r: Range) -> Term {
        Term { v, r, ones_if: None, known: None }
    }

    fn mask(mut self, ones_if: Option<Bool>) -> Term {
        self.ones_if = ones_if;
        self
    }
}

/// The decimal numeral of an unsigned integer given as 64-bit limbs, least
/// significant first: repeated division by 10^18.
fn decimal(limbs: &[u64]) -> String {
    let mut limbs: Vec<u64> = limbs.iter().rev().copied().collect();
    let mut parts = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem: u128 = 0;
        for l in limbs.iter_mut() {
            let cur = (rem << 64) | *l as u128;
            *l = (cur / 1_000_000_000_000_000_000) as u64;
            rem = cur % 1_000_000_000_000_000_000;
        }
        parts.push(rem as u64);
    }
    let mut s = parts.pop().map(|p| p.to_string()).unwrap_or_else(|| "0".into());
    for p in parts.iter().rev() {
        s.push_str(&format!("{p:018}"));
    }
    s
}

fn int_of(v: &BitVec) -> Int {
    if v.width() <= 128 {
        return Int::from_u128(v.to_u128());
    }
    Int::from_str(&decimal(v.limbs())).expect("a decimal numeral")
}

/// 2^k, for any k (a 4,096-bit node wraps at 2^4096, one bit past what a
/// `BitVec` holds).
fn pow2(k: u32) -> Int {
    if k < 128 {
        return Int::from_u128(1u128 << k);
    }
    let mut limbs = vec![0u64; k as usize / 64 + 1];
    limbs[k as usize / 64] = 1 << (k % 64);
    Int::from_str(&decimal(&limbs)).expect("a decimal numeral")
}

fn ones(w: u32) -> Int {
    int_of(&BitVec::ones(w))
}

fn num(x: i128) -> Int {
    Int::from_i128(x)
}

/// `x`, lying in `r`, reduced to [0, 2^w): as it is where it lies there
/// already, by one conditional correction either way where it lies within
/// a period of it, else by a remainder.
fn wrap(x: Int, r: Range, w: u32) -> Term {
    let p = 1i128.checked_shl(w).filter(|_| w <= RANGED);
    match (r, p) {
        (Some((lo, hi)), Some(p)) if lo >= 0 && hi < p => Term::new(x, r),
        (Some((lo, hi)), Some(p)) if lo >= -p && hi < 2 * p => {
            let mut v = x.clone();
            if hi >= p {
                v = x.ge(num(p)).ite(&Int::sub(&[x.clone(), num(p)]), &v);
            }
            if lo < 0 {
                v = x.lt(num(0)).ite(&Int::add(&[x.clone(), num(p)]), &v);
            }
            Term::new(v, full(w))
        }
        _ => Term::new(x.modulo(pow2(w)), full(w)),
    }
}

/// The value of the unsigned `w`-bit `x` read as signed, with its bounds.
fn signed(x: &Term, w: u32) -> (Int, Range) {
    let half = 1i128.checked_shl(w - 1).filter(|_| w <= RANGED);
    match (x.r, half) {
        (Some((_, hi)), Some(h)) if hi < h => (x.v.clone(), x.r),
        (Some((lo, hi)), Some(h)) if lo >= h => (Int::sub(&[x.v.clone(), num(2 * h)]), Some((lo - 2 * h, hi - 2 * h))),
        _ => {
            let neg = x.v.ge(pow2(w - 1));
            (neg.ite(&Int::sub(&[x.v.clone(), pow2(w)]), &x.v), half.map(|h| (-h, h - 1)))
        }
    }
}

/// The terms of every node of `s` over the integer operands `ops`, or
/// `None` at the first node with no linear reading.
fn encode(s: &Semantics, ops: &[Int]) -> Option<Vec<Term>> {
    let dag = &s.dag;
    // Nodes that read no operand are constants, valued by the evaluator.
    let mut reads = vec![false; dag.len()];
    for (id, n) in dag.nodes().iter().enumerate() {
        reads[id] = matches!(n, Node::Operand(_)) || n.children().iter().any(|&c| reads[c as usize]);
    }
    let zeros: Vec<BitVec> = dag.operand_widths().iter().map(|&w| BitVec::zero(w)).collect();
    let values = s.eval_nodes(&zeros);
    let mut t: Vec<Term> = Vec::with_capacity(dag.len());
    for (id, n) in dag.nodes().iter().enumerate() {
        let w = dag.width(id as NodeId);
        if !reads[id] {
            let v = values[id].clone();
            let ones_if = if v.is_zero() {
                Some(Bool::from_bool(false))
            } else if v == BitVec::ones(w) {
                Some(Bool::from_bool(true))
            } else {
                None
            };
            let r = (w <= RANGED).then(|| (v.to_u128() as i128, v.to_u128() as i128));
            t.push(Term { v: int_of(&v), r, ones_if, known: Some(v) });
            continue;
        }
        let g = |i: NodeId| &t[i as usize];
        let term = match n {
            Node::Operand(i) => Term::new(ops[*i as usize].clone(), full(w)),
            Node::Const(_) => unreachable!("constants read no operand"),
            Node::Slice { src, hi, lo } => {
                let x = g(*src);
                slice(x, *lo, hi - lo + 1).mask(x.ones_if.clone())
            }
            Node::DynSlice { src, offset, width } => {
                // A shift right by the offset (saturating at the source's
                // width, as the bit-vector encoding's `amount`), then the
                // low `width` bits.
                let k = g(*offset).known.as_ref()?;
                let sw = dag.width(*src);
                let k = k.as_small_u64().map_or(sw, |k| k.min(sw as u64) as u32);
                slice(g(*src), k, *width)
            }
            Node::Not(a) => {
                let x = g(*a);
                let m = full(w).map(|(_, m)| m);
                let r = x.r.zip(m).map(|((lo, hi), m)| (m - hi, m - lo));
                Term::new(Int::sub(&[ones(w), x.v.clone()]), r).mask(x.ones_if.as_ref().map(|c| c.not()))
            }
            Node::Neg(a) => {
                let x = g(*a);
                wrap(Int::sub(&[num(0), x.v.clone()]), x.r.map(|(lo, hi)| (-hi, -lo)), w)
            }
            Node::Bin(op, a, b) => {
                let (x, y) = (g(*a), g(*b));
                match op {
                    BvOp::Add => wrap(Int::add(&[x.v.clone(), y.v.clone()]), x.r.zip(y.r).map(|(p, q)| (p.0 + q.0, p.1 + q.1)), w),
                    BvOp::Sub => wrap(Int::sub(&[x.v.clone(), y.v.clone()]), x.r.zip(y.r).map(|(p, q)| (p.0 - q.1, p.1 - q.0)), w),
                    BvOp::Mul => {
                        let (k, x) = match (&x.known, &y.known) {
                            (_, Some(_)) => (y, x),
                            (Some(_), _) => (x, y),
                            _ => return None,
                        };
                        let r = k.r.zip(x.r).and_then(|(k, p)| Some((k.0.checked_mul(p.0)?, k.0.checked_mul(p.1)?)));
                        wrap(Int::mul(&[x.v.clone(), k.v.clone()]), r, w)
                    }
                    BvOp::UDiv | BvOp::URem => {
                        let d = y.known.as_ref()?;
                        let dr = y.r.map(|(d, _)| d);
                        match (op, d.is_zero()) {
                            // SMT-LIB's (and the evaluator's) zero divisor.
                            (BvOp::UDiv, true) => Term::new(ones(w), full(w).map(|(_, m)| (m, m))),
                            (BvOp::UDiv, false) => Term::new(x.v.div(int_of(d)), x.r.zip(dr).map(|((lo, hi), d)| (lo / d, hi / d))),
                            (_, true) => x.clone().mask(None),
                            // Below the divisor, the remainder is the dividend.
                            _ if x.r.zip(dr).is_some_and(|((_, hi), d)| hi < d) => x.clone().mask(None),
                            _ => Term::new(x.v.modulo(int_of(d)), dr.map(|d| (0, d - 1))),
                        }
                    }
                    BvOp::And | BvOp::Or | BvOp::Xor => bitwise(*op, x, y, w)?,
                    BvOp::Shl | BvOp::LShr | BvOp::AShr => {
                        // The encoding's `amount`: a shift by w or more is a
                        // shift by w.
                        let k = y.known.as_ref()?;
                        let k = k.as_small_u64().map_or(w, |k| k.min(w as u64) as u32);
                        match op {
                            BvOp::Shl | BvOp::LShr if k >= w => Term::new(num(0), Some((0, 0))),
                            BvOp::Shl => wrap(Int::mul(&[x.v.clone(), pow2(k)]), x.r.and_then(|(lo, hi)| Some((lo.checked_mul(1i128.checked_shl(k)?)?, hi.checked_mul(1i128.checked_shl(k)?)?))).filter(|_| k < 100), w),
                            BvOp::LShr => Term::new(x.v.div(pow2(k)), x.r.map(|(lo, hi)| (lo >> k.min(127), hi >> k.min(127)))),
                            _ => {
                                // Int's div floors for a positive divisor,
                                // as an arithmetic shift does.
                                let ones_if = if k + 1 >= w { Some(x.v.ge(pow2(w - 1))) } else { x.ones_if.clone() };
                                let (sv, sr) = signed(x, w);
                                let q = if k == 0 { sv } else { sv.div(pow2(k)) };
                                wrap(q, sr.map(|(lo, hi)| (lo >> k.min(127), hi >> k.min(127))), w).mask(ones_if)
                            }
                        }
                    }
                }
            }
            Node::Cmp(op, a, b) => {
                let (x, y) = (g(*a), g(*b));
                let aw = dag.width(*a);
                let c = match op {
                    CmpOp::Eq => x.v.eq(&y.v),
                    CmpOp::Ne => x.v.eq(&y.v).not(),
                    CmpOp::Ult => x.v.lt(&y.v),
                    CmpOp::Ule => x.v.le(&y.v),
                    CmpOp::Slt => signed(x, aw).0.lt(signed(y, aw).0),
                    CmpOp::Sle => signed(x, aw).0.le(signed(y, aw).0),
                };
                Term::new(c.ite(&num(1), &num(0)), Some((0, 1))).mask(Some(c))
            }
            Node::Ite(c, a, b) => {
                let cond = g(*c).v.eq(num(1));
                let (x, y) = (g(*a), g(*b));
                let ones_if = match (&x.ones_if, &y.ones_if) {
                    (Some(p), Some(q)) => Some(cond.ite(p, q)),
                    _ => None,
                };
                Term::new(cond.ite(&x.v, &y.v), hull(x.r, y.r)).mask(ones_if)
            }
            Node::Ext { signed: s, src, width } => {
                let x = g(*src);
                if *s {
                    // The signed value, back at the wider width.
                    let (sv, sr) = signed(x, dag.width(*src));
                    wrap(sv, sr, *width).mask(x.ones_if.clone())
                } else {
                    Term::new(x.v.clone(), x.r)
                }
            }
            Node::Sat { kind, src, width } => saturate(g(*src), dag.width(*src), *kind, *width),
            Node::Concat(h, l) => {
                let lw = dag.width(*l);
                let (x, y) = (g(*h), g(*l));
                let ones_if = match (&x.ones_if, &y.ones_if) {
                    (Some(p), Some(q)) if p == q => Some(p.clone()),
                    _ => None,
                };
                let r = x.r.zip(y.r).filter(|_| w <= RANGED).map(|(p, q)| ((p.0 << lw) + q.0, (p.1 << lw) + q.1));
                Term::new(Int::add(&[Int::mul(&[x.v.clone(), pow2(lw)]), y.v.clone()]), r).mask(ones_if)
            }
        };
        t.push(term);
    }
    Some(t)
}

/// Bits `lo..lo + width` of `x`: a quotient by 2^lo, and a remainder by
/// 2^width only where the quotient can reach it.
fn slice(x: &Term, lo: u32, width: u32) -> Term {
    let q = if lo == 0 { x.v.clone() } else { x.v.div(pow2(lo)) };
    let r = x.r.map(|(a, b)| (a >> lo.min(127), b >> lo.min(127)));
    match (r, full(width)) {
        (Some((_, hi)), Some((_, m))) if hi <= m => Term::new(q, r),
        _ => Term::new(q.modulo(pow2(width)), full(width)),
    }
}

/// A bitwise op where one side is a constant of contiguous ones, or all
/// zeros or all ones under a condition; `None` for any other.
fn bitwise(op: BvOp, x: &Term, y: &Term, w: u32) -> Option<Term> {
    // The mask-like side second.
    let (x, y) = if y.ones_if.is_some() || y.known.is_some() { (x, y) } else { (y, x) };
    let m = full(w).map(|(_, m)| m);
    if let Some(c) = &y.ones_if {
        let (v, r) = match op {
            BvOp::And => (c.ite(&x.v, &num(0)), hull(x.r, Some((0, 0)))),
            BvOp::Or => (c.ite(&ones(w), &x.v), hull(x.r, m.map(|m| (m, m)))),
            _ => (c.ite(&Int::sub(&[ones(w), x.v.clone()]), &x.v), full(w)),
        };
        let ones_if = x.ones_if.as_ref().map(|p| match op {
            BvOp::And => Bool::and(&[p, c]),
            BvOp::Or => Bool::or(&[p, c]),
            _ => p.xor(c),
        });
        return Some(Term::new(v, r).mask(ones_if));
    }
    // An `and` with low ones keeps a remainder, with high ones drops one.
    let k = y.known.as_ref()?;
    if op != BvOp::And {
        return None;
    }
    let low = k.trailing_zeros();
    let run = (low..w).take_while(|&i| k.bit(i)).count() as u32;
    if low == 0 && (run..w).all(|i| !k.bit(i)) {
        Some(slice(x, 0, run))
    } else if low > 0 && low + run == w {
        Some(Term::new(Int::sub(&[x.v.clone(), x.v.modulo(pow2(low))]), x.r.map(|(_, hi)| (0, hi))))
    } else {
        None
    }
}

/// The bit-vector encoding's `sat` (see `smt::sat`) over the integers.
fn saturate(x: &Term, w: u32, kind: SatKind, n: u32) -> Term {
    // `v` clamped to at most `max`, unless its bounds say it is already.
    let clamp_high = |v: &Int, r: Range, max: i128| -> (Int, Range) {
        match r {
            Some((_, hi)) if hi <= max => (v.clone(), r),
            _ => (v.gt(num(max)).ite(&num(max), v), r.map(|(lo, _)| (lo.min(max), max))),
        }
    };
    let big = n > RANGED || w > RANGED;
    match kind {
        SatKind::Signed if n >= w => {
            let (sv, sr) = signed(x, w);
            wrap(sv, sr, n)
        }
        SatKind::Unsigned if n >= w => x.clone().mask(None),
        _ if big => {
            // Past the widths bounds are kept for, the plain clamps.
            let s = signed(x, w).0;
            let v = match kind {
                SatKind::Signed => {
                    let (max, min) = (Int::sub(&[pow2(n - 1), num(1)]), Int::sub(&[num(0), pow2(n - 1)]));
                    s.gt(&max).ite(&max, &s.lt(&min).ite(&min, &s)).modulo(pow2(n))
                }
                SatKind::Unsigned => x.v.gt(ones(n)).ite(&ones(n), &x.v),
                SatKind::SignedToUnsigned => {
                    let kept = if n >= w { x.v.clone() } else { x.v.gt(ones(n)).ite(&ones(n), &x.v) };
                    x.v.ge(pow2(w - 1)).ite(&num(0), &kept)
                }
            };
            Term::new(v, full(n))
        }
        SatKind::Signed => {
            let (sv, sr) = signed(x, w);
            let (max, min) = ((1i128 << (n - 1)) - 1, -(1i128 << (n - 1)));
            let (hv, hr) = clamp_high(&sv, sr, max);
            let (v, r) = match hr {
                Some((lo, _)) if lo >= min => (hv, hr),
                _ => (hv.lt(num(min)).ite(&num(min), &hv), hr.map(|(lo, hi)| (lo.max(min), hi.max(min)))),
            };
            wrap(v, r, n)
        }
        SatKind::Unsigned => {
            let (v, r) = clamp_high(&x.v, x.r, (1i128 << n) - 1);
            Term::new(v, r)
        }
        SatKind::SignedToUnsigned => {
            let (sv, sr) = signed(x, w);
            let (kept, kr) = if n >= w { (sv.clone(), sr) } else { clamp_high(&sv, sr, (1i128 << n) - 1) };
            match sr {
                Some((lo, _)) if lo >= 0 => Term::new(kept, kr),
                _ => Term::new(sv.lt(num(0)).ite(&num(0), &kept), hull(kr, Some((0, 0))).map(|(lo, hi)| (lo.max(0), hi))),
            }
        }
    }
}

/// `s` evaluated at `operands` through its integer reading (the tests hold
/// it to the evaluator); `None` where the translation declines.
pub fn evaluate(s: &Semantics, operands: &[BitVec]) -> Option<BitVec> {
    let ops: Vec<Int> = (0..operands.len()).map(|i| Int::new_const(format!("iop{i}"))).collect();
    let t = encode(s, &ops)?;
    let vals: Vec<Int> = operands.iter().map(int_of).collect();
    let subst: Vec<(&Int, &Int)> = ops.iter().zip(&vals).collect();
    let v = whole(s, &t).substitute(&subst);
    let mut out = BitVec::zero(s.result_width);
    for k in 0..s.result_width.div_ceil(64) {
        let limb = v.div(pow2(64 * k)).modulo(pow2(64)).simplify().as_u64()?;
        for b in 0..64.min(s.result_width - 64 * k) {
            out.set_bit(64 * k + b, limb >> b & 1 == 1);
        }
    }
    Some(out)
}

/// The whole result: the lanes' values at their bit offsets.
fn whole(s: &Semantics, t: &[Term]) -> Int {
    let parts: Vec<Int> = s.lanes.iter().map(|l| Int::mul(&[t[l.root as usize].v.clone(), pow2(l.lo)])).collect();
    Int::add(&parts)
}

/// Whether either side divides: the cones bit-blasting cannot decide and
/// this translation can.
pub fn divides(a: &Semantics, b: &Semantics) -> bool {
    [a, b].iter().any(|s| s.dag.nodes().iter().any(|n| matches!(n, Node::Bin(BvOp::UDiv | BvOp::URem, _, _))))
}

/// Proves `a` and `b` equal over the integers; `None` when either has a
/// node with no linear reading. A model Z3 finds is checked on the
/// evaluator before it is reported as a difference.
pub fn prove(a: &Semantics, b: &Semantics, budget: Budget) -> Option<Equivalence> {
    let widths = a.dag.operand_widths();
    let ops: Vec<Int> = widths.iter().enumerate().map(|(i, _)| Int::new_const(format!("iop{i}"))).collect();
    let ta = encode(a, &ops)?;
    let tb = encode(b, &ops)?;
    let solver = budget.solver();
    for (o, &w) in ops.iter().zip(widths) {
        solver.assert(o.ge(Int::from_u64(0)));
        solver.assert(o.lt(pow2(w)));
    }
    solver.assert(whole(a, &ta).eq(whole(b, &tb)).not());
    Some(match solver.check() {
        z3::SatResult::Unsat => Equivalence::Proved,
        z3::SatResult::Sat => {
            let m = solver.get_model()?;
            let vals: Option<Vec<BitVec>> = ops
                .iter()
                .zip(widths)
                .map(|(o, &w)| {
                    let v = m.eval(o, true)?;
                    let bits: Vec<u8> = (0..w.div_ceil(8)).map(|k| m.eval(&v.div(pow2(8 * k)).modulo(Int::from_u64(256)), true).and_then(|b| b.as_u64()).unwrap_or(0) as u8).collect();
                    Some(BitVec::from_bytes_le(w, &bits))
                })
                .collect();
            let vals = vals?;
            match (a.eval(&vals), b.eval(&vals)) {
                (Ok(x), Ok(y)) if x != y => Equivalence::Differ(vals),
                _ => Equivalence::Unknown("integers: a model the evaluator does not confirm".into()),
            }
        }
        z3::SatResult::Unknown => Equivalence::Unknown(format!("integers: {}", solver.get_reason_unknown().unwrap_or_else(|| "unknown".into()))),
    })
}
