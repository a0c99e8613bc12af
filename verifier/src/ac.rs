//! Equality of min/max trees by normal form.
//!
//! A reduction by max (or min) over many lanes is a chain of selects
//! `acc >u y ? y : acc`, and a rule that regroups it (halves first, a
//! shuffle tree, a different lane order) is true because max is
//! associative, commutative and idempotent. Z3 has no such theory for
//! selects: it bit-blasts both chains and times out at 16 lanes or more.
//! Here both sides are rebuilt into one hash-consed DAG in which every
//! maximal min/max tree of one kind (signed or unsigned, min or max)
//! becomes one left-leaning chain over its sorted, de-duplicated set of
//! operands. When the two rebuilt results are the same node, the two sides
//! compute the same function: each step rewrites a term into an equal one.
//! When they are not, nothing follows, and the caller goes on to Z3.

use misaal_isa::dag::{BvOp, CmpOp, Dag, Node, NodeId};
use misaal_isa::Semantics;
use std::collections::HashMap;

/// Which of the four lattice operations a select computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Kind {
    signed: bool,
    max: bool,
}

/// Trees over more operands than this are left alone: each node of a
/// chain holds its operand list, so a huge shared tree would cost
/// quadratic memory for no proof Z3 could not also attempt.
const MAX_OPERANDS: usize = 512;

struct Normalizer {
    dag: Dag,
    /// For a rebuilt chain node: its kind and its sorted operand set.
    trees: HashMap<NodeId, (Kind, Vec<NodeId>)>,
}

impl Normalizer {
    /// The kind of `c ? t : e` when it is a min or max of the two values
    /// `c` compares: `p < q ? q : p` (or `<=`) is max, `p < q ? p : q` min.
    fn kind(&self, c: NodeId, t: NodeId, e: NodeId) -> Option<(Kind, NodeId, NodeId)> {
        let Node::Cmp(op, p, q) = *self.dag.node(c) else { return None };
        let signed = match op {
            CmpOp::Ult | CmpOp::Ule => false,
            CmpOp::Slt | CmpOp::Sle => true,
            CmpOp::Eq | CmpOp::Ne => return None,
        };
        if p == q {
            return None;
        }
        if (t, e) == (q, p) {
            Some((Kind { signed, max: true }, p, q))
        } else if (t, e) == (p, q) {
            Some((Kind { signed, max: false }, p, q))
        } else {
            None
        }
    }

    fn operands(&self, x: NodeId, kind: Kind) -> Vec<NodeId> {
        match self.trees.get(&x) {
            Some((k, ops)) if *k == kind => ops.clone(),
            _ => vec![x],
        }
    }

    /// A slice, looking through shifts by constants: bits `hi..lo` of
    /// `x >> k` are bits `hi+k..lo+k` of `x` while those exist (for an
    /// arithmetic shift too: the sign fills only bits past them), and of
    /// `x << k` bits `hi-k..lo-k` once `lo >= k`. Byte shifts, `srli` and
    /// `srai` feed reductions their second halves this way.
    fn slice(&mut self, src: NodeId, hi: u32, lo: u32) -> NodeId {
        if let Node::Bin(op @ (BvOp::LShr | BvOp::AShr | BvOp::Shl), x, k) = *self.dag.node(src)
            && let Some(k) = self.dag.as_const(k).and_then(|k| k.as_small_u64())
            && k < u64::from(self.dag.width(x))
        {
            let k = k as u32;
            match op {
                BvOp::LShr | BvOp::AShr if hi + k < self.dag.width(x) => return self.slice(x, hi + k, lo + k),
                BvOp::Shl if lo >= k => return self.slice(x, hi - k, lo - k),
                _ => {}
            }
        }
        self.dag.slice(src, hi, lo)
    }

    /// `x` op `y` in the one form this module builds.
    fn select(&mut self, kind: Kind, x: NodeId, y: NodeId) -> NodeId {
        let c = self.dag.cmp(if kind.signed { CmpOp::Slt } else { CmpOp::Ult }, x, y);
        if kind.max { self.dag.ite(c, y, x) } else { self.dag.ite(c, x, y) }
    }

    fn chain(&mut self, kind: Kind, mut ops: Vec<NodeId>) -> NodeId {
        ops.sort_unstable();
        ops.dedup();
        let mut acc = ops[0];
        for i in 1..ops.len() {
            acc = self.select(kind, acc, ops[i]);
            self.trees.insert(acc, (kind, ops[..=i].to_vec()));
        }
        acc
    }

    /// Rebuilds `sem`'s result in the shared DAG; `None` when its DAG is
    /// not in creation order (children before parents), which every
    /// unrolled semantics is.
    fn result(&mut self, sem: &Semantics) -> Option<NodeId> {
        let mut map: Vec<NodeId> = Vec::with_capacity(sem.dag.len());
        for (id, node) in sem.dag.nodes().iter().enumerate() {
            if node.children().iter().any(|&k| k as usize >= id) {
                return None;
            }
            let m = |k: NodeId| map[k as usize];
            let new = match *node {
                Node::Operand(i) => self.dag.operand(i),
                Node::Const(ref c) => self.dag.constant(c.clone()),
                Node::Slice { src, hi, lo } => self.slice(m(src), hi, lo),
                Node::DynSlice { src, offset, width } => self.dag.dyn_slice(m(src), m(offset), width),
                Node::Not(a) => self.dag.not(m(a)),
                Node::Neg(a) => self.dag.neg(m(a)),
                Node::Bin(op, a, b) => self.dag.bin(op, m(a), m(b)),
                Node::Cmp(op, a, b) => self.dag.cmp(op, m(a), m(b)),
                Node::Ext { signed, src, width } => self.dag.ext(signed, m(src), width),
                Node::Sat { kind, src, width } => self.dag.sat(kind, m(src), width),
                Node::Concat(h, l) => self.dag.concat(m(h), m(l)),
                Node::Ite(c, t, e) => {
                    let (c, t, e) = (m(c), m(t), m(e));
                    match self.kind(c, t, e) {
                        Some((kind, p, q)) => {
                            let mut ops = self.operands(p, kind);
                            ops.extend(self.operands(q, kind));
                            if ops.len() <= MAX_OPERANDS { self.chain(kind, ops) } else { self.dag.ite(c, t, e) }
                        }
                        None => self.dag.ite(c, t, e),
                    }
                }
            };
            map.push(new);
        }
        let mut lanes = sem.lanes.iter();
        let first = map[lanes.next()?.root as usize];
        Some(lanes.fold(first, |low, lane| self.dag.concat(map[lane.root as usize], low)))
    }
}

/// Whether `a` and `b` (over the same operands) compute the same result
/// once their min/max trees are in normal form. `false` means only that
/// this argument does not settle it.
pub fn equal_up_to_minmax(a: &Semantics, b: &Semantics) -> bool {
    let has_select = |s: &Semantics| s.dag.nodes().iter().any(|n| matches!(n, Node::Ite(..)));
    if a.dag.operand_widths() != b.dag.operand_widths() || a.result_width != b.result_width || !(has_select(a) || has_select(b)) {
        return false;
    }
    let mut n = Normalizer { dag: Dag::new(a.dag.operand_widths().to_vec()), trees: HashMap::new() };
    match (n.result(a), n.result(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misaal_isa::sema::Lane;

    /// One `e`-bit lane: the fold `fold` builds over `n` elements of operand 0.
    fn reduce(e: u32, n: u32, fold: impl Fn(&mut Dag, &[NodeId]) -> NodeId) -> Semantics {
        let mut dag = Dag::new(vec![e * n]);
        let x = dag.operand(0);
        let elems: Vec<NodeId> = (0..n).map(|i| dag.slice(x, i * e + e - 1, i * e)).collect();
        let root = fold(&mut dag, &elems);
        Semantics { dag, lanes: vec![Lane { lo: 0, width: e, root }], result_width: e }
    }

    /// Halide's left fold: `y >u acc ? y : acc` (or `<u` for min).
    fn left_fold(max: bool, signed: bool) -> impl Fn(&mut Dag, &[NodeId]) -> NodeId {
        move |dag, xs| {
            let lt = if signed { CmpOp::Slt } else { CmpOp::Ult };
            xs[1..].iter().fold(xs[0], |acc, &y| {
                let c = if max { dag.cmp(lt, acc, y) } else { dag.cmp(lt, y, acc) };
                dag.ite(c, y, acc)
            })
        }
    }

    /// A balanced tree, as a shuffle-and-max sequence computes it, written
    /// with `<=` and the operands the other way round.
    fn tree(max: bool, signed: bool) -> impl Fn(&mut Dag, &[NodeId]) -> NodeId {
        move |dag, xs| {
            let le = if signed { CmpOp::Sle } else { CmpOp::Ule };
            let mut level = xs.to_vec();
            while level.len() > 1 {
                level = level
                    .chunks(2)
                    .map(|p| {
                        let c = dag.cmp(le, p[1], p[0]);
                        if max { dag.ite(c, p[0], p[1]) } else { dag.ite(c, p[1], p[0]) }
                    })
                    .collect();
            }
            level[0]
        }
    }

    #[test]
    fn regrouped_max_and_min_are_equal() {
        for (max, signed) in [(true, false), (true, true), (false, false), (false, true)] {
            let a = reduce(8, 64, left_fold(max, signed));
            let b = reduce(8, 64, tree(max, signed));
            assert!(equal_up_to_minmax(&a, &b), "max={max} signed={signed}");
        }
    }

    #[test]
    fn different_kinds_or_operands_are_not_settled() {
        // Signed against unsigned max.
        assert!(!equal_up_to_minmax(&reduce(8, 16, left_fold(true, false)), &reduce(8, 16, tree(true, true))));
        // Max against min.
        assert!(!equal_up_to_minmax(&reduce(8, 16, left_fold(true, false)), &reduce(8, 16, tree(false, false))));
        // A tree that drops the last element.
        let short = reduce(8, 16, |dag, xs| tree(true, false)(dag, &xs[..8]));
        let dropped = reduce(8, 16, |dag, xs| {
            let head = tree(true, false)(dag, &xs[..8]);
            let c = dag.cmp(CmpOp::Ult, head, xs[8]);
            dag.ite(c, xs[8], head)
        });
        assert!(!equal_up_to_minmax(&short, &dropped));
        // `p < q ? p : q` is min, not max, however the operands are named.
        let swapped = reduce(8, 2, |dag, xs| {
            let c = dag.cmp(CmpOp::Ult, xs[0], xs[1]);
            dag.ite(c, xs[0], xs[1])
        });
        assert!(!equal_up_to_minmax(&swapped, &reduce(8, 2, left_fold(true, false))));
    }

    #[test]
    fn slices_see_through_constant_shifts() {
        // max(x.lo8, (x op k).lo8) over one 16-bit operand.
        let max_with_shifted = |op: BvOp, k: u64| {
            reduce(8, 2, move |dag, xs| {
                let x = dag.operand(0);
                let k = dag.constant(misaal_isa::BitVec::from_u64(16, k));
                let sh = dag.bin(op, x, k);
                let hi = dag.slice(sh, 7, 0);
                let c = dag.cmp(CmpOp::Ult, xs[0], hi);
                dag.ite(c, hi, xs[0])
            })
        };
        // (x >> 8).lo8 is x1, so this is max(x0, x1).
        assert!(equal_up_to_minmax(&max_with_shifted(BvOp::LShr, 8), &reduce(8, 2, left_fold(true, false))));
        // (x >>s 8).lo8 is x1 too: the sign fills only bits 8 and up.
        assert!(equal_up_to_minmax(&max_with_shifted(BvOp::AShr, 8), &reduce(8, 2, left_fold(true, false))));
        // By 12 the sign fills bits 4..7 of the slice: not a slice of x.
        assert!(!equal_up_to_minmax(&max_with_shifted(BvOp::AShr, 12), &reduce(8, 2, left_fold(true, false))));
    }

    #[test]
    fn duplicates_collapse() {
        // max(x0, max(x0, x1)) is max(x0, x1): max is idempotent.
        let dup = reduce(8, 2, |dag, xs| {
            let inner = left_fold(true, false)(dag, xs);
            let c = dag.cmp(CmpOp::Ult, xs[0], inner);
            dag.ite(c, inner, xs[0])
        });
        assert!(equal_up_to_minmax(&dup, &reduce(8, 2, left_fold(true, false))));
    }
}
