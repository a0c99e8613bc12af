//! Spec mutants, to show that an oracle notices small semantic slips.
//!
//! A mutant changes one DAG node of the unrolled semantics, so only the
//! lanes that use that node change: a harder target than rewriting the spec
//! text, which would change every lane at once. Kinds: swap a signedness
//! (extension, comparison, arithmetic shift, saturation input), shift an
//! operand slice by one bit, drop a saturation (keep the low bits).

use misaal_isa::Semantics;
use misaal_isa::dag::{BvOp, CmpOp, Node, NodeId, SatKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MutationKind {
    SwapSignedness,
    ShiftSlice,
    DropSaturation,
}

impl MutationKind {
    pub const ALL: [MutationKind; 3] = [MutationKind::SwapSignedness, MutationKind::ShiftSlice, MutationKind::DropSaturation];
}

#[derive(Clone, Debug)]
pub struct Mutant {
    pub kind: MutationKind,
    pub node: NodeId,
    pub description: String,
    pub semantics: Semantics,
}

fn mutate(sem: &Semantics, id: NodeId, kind: MutationKind) -> Option<(Node, String)> {
    let dag = &sem.dag;
    let n = dag.node(id).clone();
    let r = match (kind, n) {
        (MutationKind::SwapSignedness, Node::Ext { signed, src, width }) => {
            (Node::Ext { signed: !signed, src, width }, format!("{} extension made {}", if signed { "sign" } else { "zero" }, if signed { "zero" } else { "sign" }))
        }
        (MutationKind::SwapSignedness, Node::Cmp(op, a, b)) => {
            let flipped = match op {
                CmpOp::Slt => CmpOp::Ult,
                CmpOp::Ult => CmpOp::Slt,
                CmpOp::Sle => CmpOp::Ule,
                CmpOp::Ule => CmpOp::Sle,
                CmpOp::Eq | CmpOp::Ne => return None,
            };
            (Node::Cmp(flipped, a, b), format!("{op:?} comparison made {flipped:?}"))
        }
        (MutationKind::SwapSignedness, Node::Bin(BvOp::AShr, a, b)) => (Node::Bin(BvOp::LShr, a, b), "arithmetic shift made logical".into()),
        (MutationKind::SwapSignedness, Node::Bin(BvOp::LShr, a, b)) => (Node::Bin(BvOp::AShr, a, b), "logical shift made arithmetic".into()),
        (MutationKind::SwapSignedness, Node::Sat { kind, src, width }) => {
            let k = match kind {
                SatKind::Signed => SatKind::Unsigned,
                SatKind::Unsigned => SatKind::Signed,
                SatKind::SignedToUnsigned => SatKind::Unsigned,
            };
            (Node::Sat { kind: k, src, width }, format!("{kind:?} saturation made {k:?}"))
        }
        (MutationKind::ShiftSlice, Node::Slice { src, hi, lo }) if matches!(dag.node(src), Node::Operand(_)) => {
            let w = dag.width(src);
            if hi + 1 < w {
                (Node::Slice { src, hi: hi + 1, lo: lo + 1 }, format!("slice [{hi}:{lo}] moved up to [{}:{}]", hi + 1, lo + 1))
            } else if lo > 0 {
                (Node::Slice { src, hi: hi - 1, lo: lo - 1 }, format!("slice [{hi}:{lo}] moved down to [{}:{}]", hi - 1, lo - 1))
            } else {
                return None;
            }
        }
        (MutationKind::DropSaturation, Node::Sat { kind, src, width }) if width < dag.width(src) => {
            (Node::Slice { src, hi: width - 1, lo: 0 }, format!("{kind:?} saturation to {width} bits dropped (truncation)"))
        }
        _ => return None,
    };
    Some(r)
}

/// Every single-node mutant of `kind`.
pub fn mutants(sem: &Semantics, kind: MutationKind) -> Vec<Mutant> {
    (0..sem.dag.len() as NodeId)
        .filter_map(|id| {
            let (node, description) = mutate(sem, id, kind)?;
            let mut s = sem.clone();
            s.dag = sem.dag.with_node_replaced(id, node);
            Some(Mutant { kind, node: id, description, semantics: s })
        })
        .collect()
}
