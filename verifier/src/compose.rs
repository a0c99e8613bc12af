//! Composing semantics: a DAG of instructions and ops applied to shared
//! operands and constants, flattened into one [`Semantics`] the way a rule
//! audit builds each side of a rule instance (`Dag::inline` per op, then
//! `compact`). Callers that are not rules (translation validation of a
//! selected instruction DAG against its source expression) describe their
//! DAG as [`Part`]s; this crate stays free of their term types.

use crate::smt::{Budget, Equivalence, prove_equivalent};
use misaal_isa::dag::{Dag, NodeId};
use misaal_isa::{BitVec, Lane, Semantics};
use std::sync::Arc;

/// One node of a composition.
#[derive(Clone, Debug)]
pub enum Part {
    /// The composition's operand `index` (its width is given to [`compose`]).
    Operand(u16),
    /// A constant at its own width.
    Const(BitVec),
    /// An instruction or op (named for errors) applied to other parts, its
    /// operands in order; each must have the width its semantics expects.
    Apply { name: String, sem: Arc<Semantics>, kids: Vec<usize> },
    /// Bits `hi..=lo` of another part (a register-sized piece of a wider
    /// value, as translation validation cuts them).
    Slice { kid: usize, hi: u32, lo: u32 },
}

impl Part {
    fn kids(&self) -> &[usize] {
        match self {
            Part::Apply { kids, .. } => kids,
            Part::Slice { kid, .. } => std::slice::from_ref(kid),
            _ => &[],
        }
    }
}

/// The semantics of part `root` of `parts` over operands of
/// `operand_widths`: only the parts `root` reaches are built, each once.
/// Parts may be in any order but must not form a cycle.
pub fn compose(operand_widths: &[u32], parts: &[Part], root: usize) -> Result<Semantics, String> {
    let mut dag = Dag::new(operand_widths.to_vec());
    let mut ids: Vec<Option<NodeId>> = vec![None; parts.len()];
    let mut on_stack = vec![false; parts.len()];
    // Iterative post-order: deep expression DAGs do not grow the call stack.
    let mut stack: Vec<(usize, bool)> = vec![(root, false)];
    while let Some((p, expanded)) = stack.pop() {
        if p >= parts.len() {
            return Err(format!("part {p} does not exist ({} parts)", parts.len()));
        }
        if ids[p].is_some() {
            continue;
        }
        if !expanded {
            if std::mem::replace(&mut on_stack[p], true) {
                return Err(format!("part {p} is its own operand"));
            }
            stack.push((p, true));
            stack.extend(parts[p].kids().iter().rev().map(|&k| (k, false)));
            continue;
        }
        let id = match &parts[p] {
            Part::Operand(i) if (*i as usize) < operand_widths.len() => dag.operand(*i),
            Part::Operand(i) => return Err(format!("operand {i} does not exist ({} operands)", operand_widths.len())),
            Part::Const(v) => dag.constant(v.clone()),
            Part::Apply { name, sem, kids } => {
                let args: Vec<NodeId> = kids.iter().map(|&k| ids[k].ok_or_else(|| format!("`{name}`: operand part {k} is its own user"))).collect::<Result<_, _>>()?;
                dag.inline(sem, &args).map_err(|e| format!("`{name}`: {e}"))?
            }
            Part::Slice { kid, hi, lo } => {
                let src = ids[*kid].ok_or_else(|| format!("slice: operand part {kid} is its own user"))?;
                if hi < lo || *hi >= dag.width(src) {
                    return Err(format!("slice [{hi}:{lo}] of a {}-bit part", dag.width(src)));
                }
                dag.slice(src, *hi, *lo)
            }
        };
        ids[p] = Some(id);
    }
    let top = ids[root].expect("built");
    let width = dag.width(top);
    let (dag, roots) = dag.compact(&[top]);
    Ok(Semantics { dag, lanes: vec![Lane { lo: 0, width, root: roots[0] }], result_width: width })
}

/// Whether `a` and `b` (over the same operands) agree everywhere: a few
/// random inputs first (a difference there is a counterexample without a
/// solver call), then [`prove_equivalent`]. `Unknown` is never a proof.
pub fn check_equal(a: &Semantics, b: &Semantics, budget: Budget, cases: usize, seed: u64) -> Equivalence {
    if a.dag.operand_widths() != b.dag.operand_widths() || a.result_width != b.result_width {
        return Equivalence::Differ(Vec::new());
    }
    let types = a.dag.operand_widths().iter().map(|&w| misaal_isa::ast::Ty::Bv(w)).collect();
    let gen_cases = crate::differential::CaseGen::from_types(types);
    let mut g = quickcheck::Gen::from_size_and_seed(64, seed);
    for _ in 0..cases {
        let c = gen_cases.case(&mut g);
        if a.eval(&c).ok() != b.eval(&c).ok() {
            return Equivalence::Differ(c);
        }
    }
    prove_equivalent(a, b, budget)
}
