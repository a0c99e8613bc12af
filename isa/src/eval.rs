//! The concrete evaluator: runs unrolled semantics on operand values of any
//! width. Every consumer that needs a reference result calls this.

use crate::bitvec::BitVec;
use crate::dag::apply;
use crate::sema::Semantics;

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
    /// sweep computes every node exactly once.
    pub fn eval(&self, operands: &[BitVec]) -> Result<BitVec, EvalError> {
        let widths = self.dag.operand_widths();
        if operands.len() != widths.len() {
            return Err(EvalError::Arity { expected: widths.len(), found: operands.len() });
        }
        for (i, (o, &w)) in operands.iter().zip(widths).enumerate() {
            if o.width() != w {
                return Err(EvalError::Width { operand: i, expected: w, found: o.width() });
            }
        }
        let mut vals: Vec<BitVec> = Vec::with_capacity(self.dag.len());
        for n in self.dag.nodes() {
            let v = apply(n, operands, |c| vals[c as usize].clone());
            vals.push(v);
        }
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
}
