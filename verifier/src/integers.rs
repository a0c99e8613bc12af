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

/// A node's value: its unsigned integer, and, where the node is known to
/// be all zeros or all ones (a comparison, a sign mask), the condition
/// under which it is all ones, so that bitwise ops with it stay linear.
#[derive(Clone)]
struct Term {
    v: Int,
    ones_if: Option<Bool>,
    /// The node's value when it reads no operand.
    known: Option<BitVec>,
}

fn decimal(v: &BitVec) -> String {
    if v.width() <= 128 {
        return v.to_u128().to_string();
    }
    // Repeated division by 10^18 over the 64-bit limbs, most significant first.
    let mut limbs: Vec<u64> = v.limbs().iter().rev().copied().collect();
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
    Int::from_str(&decimal(v)).expect("a decimal numeral")
}

/// 2^k.
fn pow2(k: u32) -> Int {
    let mut b = BitVec::zero(k + 1);
    b.set_bit(k, true);
    int_of(&b)
}

/// The value of a unsigned `w`-bit `v` read as signed.
fn signed(v: &Int, w: u32) -> Int {
    let neg = v.ge(pow2(w - 1));
    neg.ite(&Int::sub(&[v.clone(), pow2(w)]), v)
}

fn ones(w: u32) -> Int {
    int_of(&BitVec::ones(w))
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
            t.push(Term { v: int_of(&v), ones_if, known: Some(v) });
            continue;
        }
        let g = |i: NodeId| &t[i as usize];
        let wrap = |x: Int| x.modulo(pow2(w));
        let plain = |v: Int| Term { v, ones_if: None, known: None };
        let slice = |x: &Int, lo: u32, width: u32| x.div(pow2(lo)).modulo(pow2(width));
        let term = match n {
            Node::Operand(i) => plain(ops[*i as usize].clone()),
            Node::Const(_) => unreachable!("constants read no operand"),
            Node::Slice { src, hi, lo } => {
                let x = g(*src);
                Term { v: slice(&x.v, *lo, hi - lo + 1), ones_if: x.ones_if.clone(), known: None }
            }
            Node::DynSlice { src, offset, width } => {
                // A shift right by the offset (saturating at the source's
                // width, as the bit-vector encoding's `amount`), then the
                // low `width` bits.
                let k = g(*offset).known.as_ref()?;
                let sw = dag.width(*src);
                let k = k.as_small_u64().map_or(sw, |k| k.min(sw as u64) as u32);
                plain(slice(&g(*src).v, k, *width))
            }
            Node::Not(a) => {
                let x = g(*a);
                Term { v: Int::sub(&[ones(w), x.v.clone()]), ones_if: x.ones_if.as_ref().map(|c| c.not()), known: None }
            }
            Node::Neg(a) => plain(wrap(Int::sub(&[Int::from_u64(0), g(*a).v.clone()]))),
            Node::Bin(op, a, b) => {
                let (x, y) = (g(*a), g(*b));
                match op {
                    BvOp::Add => plain(wrap(Int::add(&[x.v.clone(), y.v.clone()]))),
                    BvOp::Sub => plain(wrap(Int::sub(&[x.v.clone(), y.v.clone()]))),
                    BvOp::Mul if x.known.is_some() || y.known.is_some() => plain(wrap(Int::mul(&[x.v.clone(), y.v.clone()]))),
                    BvOp::Mul => return None,
                    BvOp::UDiv | BvOp::URem => {
                        let d = y.known.as_ref()?;
                        plain(match (op, d.is_zero()) {
                            // SMT-LIB's (and the evaluator's) zero divisor.
                            (BvOp::UDiv, true) => ones(w),
                            (BvOp::UDiv, false) => x.v.div(int_of(d)),
                            (_, true) => x.v.clone(),
                            _ => x.v.modulo(int_of(d)),
                        })
                    }
                    BvOp::And | BvOp::Or | BvOp::Xor => bitwise(*op, x, y, w)?,
                    BvOp::Shl | BvOp::LShr | BvOp::AShr => {
                        // The encoding's `amount`: a shift by w or more is a
                        // shift by w.
                        let k = y.known.as_ref()?;
                        let k = k.as_small_u64().map_or(w, |k| k.min(w as u64) as u32);
                        match op {
                            BvOp::Shl if k >= w => plain(Int::from_u64(0)),
                            BvOp::Shl => plain(wrap(Int::mul(&[x.v.clone(), pow2(k)]))),
                            BvOp::LShr if k >= w => plain(Int::from_u64(0)),
                            BvOp::LShr => plain(x.v.div(pow2(k))),
                            _ => {
                                // Int's div floors for a positive divisor,
                                // as an arithmetic shift does.
                                let ones_if = if k + 1 >= w { Some(x.v.ge(pow2(w - 1))) } else { x.ones_if.clone() };
                                Term { v: wrap(signed(&x.v, w).div(pow2(k))), ones_if, known: None }
                            }
                        }
                    }
                }
            }
            Node::Cmp(op, a, b) => {
                let (x, y) = (&g(*a).v, &g(*b).v);
                let aw = dag.width(*a);
                let c = match op {
                    CmpOp::Eq => x.eq(y),
                    CmpOp::Ne => x.eq(y).not(),
                    CmpOp::Ult => x.lt(y),
                    CmpOp::Ule => x.le(y),
                    CmpOp::Slt => signed(x, aw).lt(signed(y, aw)),
                    CmpOp::Sle => signed(x, aw).le(signed(y, aw)),
                };
                Term { v: c.ite(&Int::from_u64(1), &Int::from_u64(0)), ones_if: Some(c), known: None }
            }
            Node::Ite(c, a, b) => {
                let cond = g(*c).v.eq(Int::from_u64(1));
                let (x, y) = (g(*a), g(*b));
                let ones_if = match (&x.ones_if, &y.ones_if) {
                    (Some(p), Some(q)) => Some(cond.ite(p, q)),
                    _ => None,
                };
                Term { v: cond.ite(&x.v, &y.v), ones_if, known: None }
            }
            Node::Ext { signed: s, src, width } => {
                let x = g(*src);
                let sw = dag.width(*src);
                if *s {
                    let neg = x.v.ge(pow2(sw - 1));
                    let fill = Int::sub(&[pow2(*width), pow2(sw)]);
                    Term { v: neg.ite(&Int::add(&[x.v.clone(), fill]), &x.v), ones_if: x.ones_if.clone(), known: None }
                } else {
                    plain(x.v.clone())
                }
            }
            Node::Sat { kind, src, width } => plain(saturate(&g(*src).v, dag.width(*src), *kind, *width)),
            Node::Concat(h, l) => {
                let lw = dag.width(*l);
                let (x, y) = (g(*h), g(*l));
                let ones_if = match (&x.ones_if, &y.ones_if) {
                    (Some(p), Some(q)) if p == q => Some(p.clone()),
                    _ => None,
                };
                Term { v: Int::add(&[Int::mul(&[x.v.clone(), pow2(lw)]), y.v.clone()]), ones_if, known: None }
            }
        };
        t.push(term);
    }
    Some(t)
}

/// A bitwise op where one side is a constant of contiguous ones, or all
/// zeros or all ones under a condition; `None` for any other.
fn bitwise(op: BvOp, x: &Term, y: &Term, w: u32) -> Option<Term> {
    let plain = |v: Int| Term { v, ones_if: None, known: None };
    // The mask-like side second.
    let (x, y) = if y.ones_if.is_some() || y.known.is_some() { (x, y) } else { (y, x) };
    if let Some(c) = &y.ones_if {
        let v = match op {
            BvOp::And => c.ite(&x.v, &Int::from_u64(0)),
            BvOp::Or => c.ite(&ones(w), &x.v),
            _ => c.ite(&Int::sub(&[ones(w), x.v.clone()]), &x.v),
        };
        let ones_if = x.ones_if.as_ref().map(|p| match op {
            BvOp::And => Bool::and(&[p, c]),
            BvOp::Or => Bool::or(&[p, c]),
            _ => p.xor(c),
        });
        return Some(Term { v, ones_if, known: None });
    }
    // An `and` with low ones keeps a remainder, with high ones drops one.
    let k = y.known.as_ref()?;
    if op != BvOp::And {
        return None;
    }
    let low = k.trailing_zeros();
    let run = (low..w).take_while(|&i| k.bit(i)).count() as u32;
    if low == 0 {
        (run == w || (run..w).all(|i| !k.bit(i))).then(|| plain(x.v.modulo(pow2(run))))
    } else if low + run == w {
        Some(plain(Int::sub(&[x.v.clone(), x.v.modulo(pow2(low))])))
    } else {
        None
    }
}

/// `bit-vector`'s `sat` (see `smt::sat`) over the integers.
fn saturate(x: &Int, w: u32, kind: SatKind, n: u32) -> Int {
    let clamp_high = |v: &Int, max: Int| v.gt(&max).ite(&max, v);
    match kind {
        SatKind::Signed if n >= w => {
            let neg = x.ge(pow2(w - 1));
            neg.ite(&Int::add(&[x.clone(), Int::sub(&[pow2(n), pow2(w)])]), x)
        }
        SatKind::Signed => {
            let s = signed(x, w);
            let max = Int::sub(&[pow2(n - 1), Int::from_u64(1)]);
            let min = Int::sub(&[Int::from_u64(0), pow2(n - 1)]);
            let c = s.gt(&max).ite(&max, &s.lt(&min).ite(&min, &s));
            c.modulo(pow2(n))
        }
        SatKind::Unsigned if n >= w => x.clone(),
        SatKind::Unsigned => clamp_high(x, ones(n)),
        SatKind::SignedToUnsigned => {
            let neg = x.ge(pow2(w - 1));
            let kept = if n >= w { x.clone() } else { clamp_high(x, ones(n)) };
            neg.ite(&Int::from_u64(0), &kept)
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
