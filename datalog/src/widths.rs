//! Use-def width analysis (Hydride's rule against extracting one width
//! twice): width holes that the typing rules force to be equal, such as the
//! two operands of an add or the two arms of a select, become one parameter.

use crate::template::{HoleId, HoleKind, LaneTemplate, TNode};
use ascent::ascent;
use ascent::aggregators::min;
use misaal_isa::dag::BvOp;

ascent! {
    #![measure_rule_times]
    /// Width unification over one lane template.
    pub struct WidthUnification;
    relation width_hole_decl(u16);
    /// `node` carries width hole `hole` itself (leaves, slices, extensions...).
    relation own_width(u16, u16);
    /// `parent` has the width of `child` (add, not, select...).
    relation passes_width(u16, u16);
    /// Two nodes the typing rules give one width.
    relation same_width(u16, u16);
    relation width_of(u16, u16);
    relation unify(u16, u16);
    relation representative(u16, u16);

    width_of(n, h) <-- own_width(n, h);
    width_of(p, h) <-- passes_width(p, c), width_of(c, h);
    unify(h, h) <-- width_hole_decl(h);
    unify(h1, h2), unify(h2, h1) <-- same_width(a, b), width_of(a, h1), width_of(b, h2);
    unify(a, c) <-- unify(a, b), unify(b, c);
    representative(h, m) <-- width_hole_decl(h), agg m = min(k) in unify(h, k);
}

/// For every hole, the hole whose value it shares (itself unless it is a
/// width unified with a lower-numbered one).
pub fn representatives(t: &LaneTemplate) -> Vec<HoleId> {
    let mut p = WidthUnification {
        width_hole_decl: t.holes.iter().enumerate().filter(|(_, k)| **k == HoleKind::Width).map(|(h, _)| (h as u16,)).collect(),
        ..Default::default()
    };
    for (i, n) in t.nodes.iter().enumerate() {
        let i = i as u16;
        match *n {
            TNode::Leaf { width, .. }
            | TNode::Const { width, .. }
            | TNode::Slice { width, .. }
            | TNode::DynSlice { width, .. }
            | TNode::Ext { width, .. }
            | TNode::Sat { width, .. } => p.own_width.push((i, width)),
            TNode::Not(a) | TNode::Neg(a) => p.passes_width.push((i, a)),
            TNode::Bin(BvOp::Shl | BvOp::LShr | BvOp::AShr, a, _) => p.passes_width.push((i, a)),
            TNode::Bin(_, a, b) => {
                p.passes_width.push((i, a));
                p.same_width.push((a, b));
            }
            TNode::Cmp(_, a, b) => p.same_width.push((a, b)),
            TNode::Ite(_, a, b) => {
                p.passes_width.push((i, a));
                p.same_width.push((a, b));
            }
            TNode::Concat(..) | TNode::WideConst(_) => {}
        }
    }
    p.run();
    let mut rep: Vec<HoleId> = (0..t.holes.len() as HoleId).collect();
    for &(h, m) in &p.representative {
        rep[h as usize] = m;
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::{OperandOrder, lane_instances};

    #[test]
    fn operands_of_one_add_share_one_width() {
        let lib = misaal_isa::SpecLibrary::from_sources(&[(
            "t.sema".into(),
            "instr f(a: bv32, b: bv32) -> bv32 [x86 sse2 nop]\ndst := SignExtend32(a[15:0]) + SignExtend32(b[31:16])\n".into(),
        )])
        .unwrap();
        let lanes = lane_instances(lib.get("f").unwrap().1, &mut OperandOrder::default());
        let t = &lanes[0].template;
        let rep = representatives(t);
        let widths: Vec<usize> = t.holes.iter().enumerate().filter(|(_, k)| **k == HoleKind::Width).map(|(h, _)| h).collect();
        // leaf a (16), sext (32), leaf b (16), sext (32): the two extensions unify
        // through the add; the two 16-bit leaves stay apart (nothing forces them equal).
        assert_eq!(widths.len(), 4);
        let distinct: std::collections::BTreeSet<_> = widths.iter().map(|&h| rep[h]).collect();
        assert_eq!(distinct.len(), 3, "{rep:?}");
    }
}
