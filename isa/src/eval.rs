//! The concrete evaluator: runs unrolled semantics on operand values of any
//! width. Every consumer that needs a reference result calls this.

use crate::bitvec::BitVec;
use crate::dag::{BvOp, CmpOp, Dag, Node, NodeId, SatKind, apply};
use crate::sema::Semantics;
use std::borrow::{Borrow, Cow};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    Arity { expected: usize, found: usize },
    Width { operand: usize, expected: u32, found: u32 },
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Arity { expected, found } => write!(f, "expected {expected} operand(s), found {found}"),
            EvalError::Width { operand, expected, found } => write!(f, "operand {operand} must be {expected} bits, found {found}"),
        }
    }
}

impl std::error::Error for EvalError {}

impl Semantics {
    /// The value of every DAG node (node ids index the result).
    pub fn eval_nodes(&self, operands: &[BitVec]) -> Vec<BitVec> {
        let mut vals: Vec<BitVec> = Vec::with_capacity(self.dag.len());
        for n in self.dag.nodes() {
            let v = apply(n, operands, |c| vals[c as usize].clone());
            vals.push(v);
        }
        vals
    }

    /// Evaluates the whole result. Node ids are topological, so one forward
    /// sweep computes every node exactly once. Nodes of at most 64 bits are
    /// computed in machine words; wider ones fall back to `BitVec`.
    pub fn eval<B: Borrow<BitVec>>(&self, operands: &[B]) -> Result<BitVec, EvalError> {
        self.check_operands(operands)?;
        let dag = &self.dag;
        let mut vals: Vec<Word> = Vec::with_capacity(dag.len());
        for (id, n) in dag.nodes().iter().enumerate() {
            let w = dag.width(id as NodeId);
            let v = match n {
                Node::Operand(i) if w <= 64 => Word::N(operands[*i as usize].borrow().bits_u64(0, w)),
                Node::Operand(i) => Word::W(Cow::Borrowed(operands[*i as usize].borrow())),
                Node::Const(c) if w <= 64 => Word::N(c.bits_u64(0, w)),
                Node::Const(c) => Word::W(Cow::Borrowed(c)),
                Node::Ite(c, t, e) => {
                    let pick = if vals[*c as usize].is_zero() { *e } else { *t };
                    vals[pick as usize].clone()
                }
                _ => match narrow(n, w, &vals, dag) {
                    Some(x) => Word::N(x),
                    // Operands never get here, so `apply` needs none.
                    None => Word::W(Cow::Owned(apply(n, &[], |c| vals[c as usize].to_bitvec(dag.width(c))))),
                },
            };
            vals.push(v);
        }
        let mut limbs = vec![0u64; self.result_width.div_ceil(64) as usize];
        let mut at = 0u32;
        for lane in &self.lanes {
            match &vals[lane.root as usize] {
                Word::N(x) => or_bits(&mut limbs, at, *x),
                Word::W(b) => b.limbs().iter().enumerate().for_each(|(k, &x)| or_bits(&mut limbs, at + 64 * k as u32, x)),
            }
            at += lane.width;
        }
        Ok(BitVec::from_limbs(self.result_width, &limbs))
    }

    /// The plain `BitVec` evaluation, node by node: the reference the word
    /// evaluator is tested against.
    pub fn eval_reference(&self, operands: &[BitVec]) -> Result<BitVec, EvalError> {
        self.check_operands(operands)?;
        let vals = self.eval_nodes(operands);
        let mut out: Option<BitVec> = None;
        for lane in &self.lanes {
            let v = &vals[lane.root as usize];
            out = Some(match out {
                None => v.clone(),
                Some(low) => BitVec::concat(v, &low),
            });
        }
        Ok(out.expect("a result has at least one lane"))
    }

    fn check_operands<B: Borrow<BitVec>>(&self, operands: &[B]) -> Result<(), EvalError> {
        let widths = self.dag.operand_widths();
        if operands.len() != widths.len() {
            return Err(EvalError::Arity { expected: widths.len(), found: operands.len() });
        }
        for (i, (o, &w)) in operands.iter().zip(widths).enumerate() {
            let found = o.borrow().width();
            if found != w {
                return Err(EvalError::Width { operand: i, expected: w, found });
            }
        }
        Ok(())
    }
}

/// A node's value: up to 64 bits in a word (zero-extended), else a `BitVec`.
#[derive(Clone)]
enum Word<'a> {
    N(u64),
    W(Cow<'a, BitVec>),
}

impl Word<'_> {
    fn is_zero(&self) -> bool {
        match self {
            Word::N(x) => *x == 0,
            Word::W(b) => b.is_zero(),
        }
    }
    fn to_bitvec(&self, width: u32) -> BitVec {
        match self {
            Word::N(x) => BitVec::from_u64(width, *x),
            Word::W(b) => b.as_ref().clone(),
        }
    }
}

#[inline]
fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

#[inline]
fn sext(v: u64, w: u32) -> i64 {
    let s = 64 - w;
    ((v << s) as i64) >> s
}

/// ORs `x` into `limbs` at bit `at`; bits past the end are dropped.
fn or_bits(limbs: &mut [u64], at: u32, x: u64) {
    let (i, sh) = ((at / 64) as usize, at % 64);
    if let Some(l) = limbs.get_mut(i) {
        *l |= x << sh;
    }
    if sh != 0
        && let Some(l) = limbs.get_mut(i + 1)
    {
        *l |= x >> (64 - sh);
    }
}

/// `n` in machine words when its result and the children it reads fit in 64
/// bits; `None` sends it to the `BitVec` path. Mirrors `dag::apply` exactly.
fn narrow(n: &Node, w: u32, vals: &[Word], dag: &Dag) -> Option<u64> {
    if w > 64 {
        return None;
    }
    let word = |c: NodeId| match &vals[c as usize] {
        Word::N(x) => Some(*x),
        Word::W(_) => None,
    };
    let m = mask(w);
    Some(match *n {
        Node::Slice { src, lo, .. } => match &vals[src as usize] {
            Word::N(x) => (x >> lo) & m,
            Word::W(b) => b.bits_u64(lo, w),
        },
        Node::DynSlice { src, offset, .. } => {
            let off = word(offset)?;
            let sw = dag.width(src);
            if off >= sw as u64 {
                0
            } else {
                let off = off as u32;
                let n = w.min(sw - off);
                match &vals[src as usize] {
                    Word::N(x) => (x >> off) & mask(n),
                    Word::W(b) => b.bits_u64(off, n),
                }
            }
        }
        Node::Not(a) => !word(a)? & m,
        Node::Neg(a) => word(a)?.wrapping_neg() & m,
        Node::Bin(op, a, b) => {
            let (x, y) = (word(a)?, word(b)?);
            match op {
                BvOp::Add => x.wrapping_add(y) & m,
                BvOp::Sub => x.wrapping_sub(y) & m,
                BvOp::Mul => x.wrapping_mul(y) & m,
                BvOp::UDiv => x.checked_div(y).unwrap_or(m),
                BvOp::URem => x.checked_rem(y).unwrap_or(x),
                BvOp::And => x & y,
                BvOp::Or => x | y,
                BvOp::Xor => x ^ y,
                BvOp::Shl => if y >= w as u64 { 0 } else { (x << y) & m },
                BvOp::LShr => if y >= w as u64 { 0 } else { x >> y },
                BvOp::AShr => (sext(x, w) >> y.min(63)) as u64 & m,
            }
        }
        Node::Cmp(op, a, b) => {
            let (x, y, cw) = (word(a)?, word(b)?, dag.width(a));
            (match op {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Ult => x < y,
                CmpOp::Ule => x <= y,
                CmpOp::Slt => sext(x, cw) < sext(y, cw),
                CmpOp::Sle => sext(x, cw) <= sext(y, cw),
            }) as u64
        }
        Node::Ext { signed, src, .. } => {
            let x = word(src)?;
            if signed { sext(x, dag.width(src)) as u64 & m } else { x }
        }
        Node::Sat { kind, src, .. } => {
            let (x, sw) = (word(src)?, dag.width(src));
            let (smin, smax) = (i64::MIN >> (64 - w), i64::MAX >> (64 - w));
            match kind {
                SatKind::Signed if w >= sw => sext(x, sw) as u64 & m,
                SatKind::Signed => sext(x, sw).clamp(smin, smax) as u64 & m,
                SatKind::Unsigned => x.min(m),
                SatKind::SignedToUnsigned if sext(x, sw) < 0 => 0,
                SatKind::SignedToUnsigned => x.min(m),
            }
        }
        Node::Concat(h, l) => {
            let (x, y) = (word(h)?, word(l)?);
            let lw = dag.width(l);
            if lw >= 64 { y } else { (x << lw) | y }
        }
        Node::Operand(_) | Node::Const(_) | Node::Ite(..) => unreachable!("handled by the caller"),
    })
}
