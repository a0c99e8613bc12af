//! Per-lane facts as an ascent fixpoint over facts exported from the
//! unrolled DAGs: which operand bits each output lane reads (`BvSlices`),
//! which lanes compute distinct operations (`UniqueLanes`), how many input
//! elements fold into one output element (the reduction factor), and, for
//! pure data movement, which input element feeds each output lane.

use crate::shape::Kind;
use crate::template::{OperandOrder, lane_instances};
use ascent::ascent;
use ascent::aggregators::{count, max, min};
use misaal_isa::dag::Node;
use misaal_isa::{Instr, Semantics};
use std::collections::{BTreeMap, HashMap};

ascent! {
    #![measure_rule_times]
    pub struct LaneProgram;
    // Exported facts. `op` numbers instructions; nodes are DAG node ids.
    relation lane_root(u32, u32, u32);
    relation edge(u32, u32, u32);
    relation leaf(u32, u32, u16, u32, u32);
    relation vector_operand(u32, u16);
    relation lane_shape(u32, u32, u32);
    relation arithmetic(u32, u32);
    relation instr(u32);

    // BvSlices(op, lane, operand, lo, hi).
    relation reach(u32, u32, u32);
    reach(op, lane, n) <-- lane_root(op, lane, n);
    reach(op, lane, c) <-- reach(op, lane, n), edge(op, n, c);
    relation bv_slice(u32, u32, u16, u32, u32);
    bv_slice(op, lane, o, lo, hi) <-- reach(op, lane, n), leaf(op, n, o, lo, hi);

    // UniqueLanes: the first lane of every distinct lane shape.
    relation unique_lane(u32, u32);
    unique_lane(op, first) <-- lane_shape(op, _, s), agg first = min(l) in lane_shape(op, l, s);

    // Reduction factor: input elements (slices not inside a larger slice of
    // the same operand) per output lane, for vector operands.
    relation inside(u32, u32, u16, u32, u32);
    inside(op, lane, o, lo, hi) <--
        bv_slice(op, lane, o, lo, hi), bv_slice(op, lane, o, lo2, hi2),
        if *lo2 <= *lo && *hi <= *hi2 && (lo2, hi2) != (lo, hi);
    relation element(u32, u32, u16, u32, u32);
    element(op, lane, o, lo, hi) <-- bv_slice(op, lane, o, lo, hi), vector_operand(op, o), !inside(op, lane, o, lo, hi);
    relation lane_elements(u32, u32, u16, usize);
    lane_elements(op, lane, o, n) <-- element(op, lane, o, _, _), agg n = count() in element(op, lane, o, _, _);
    relation reduction_factor(u32, usize);
    reduction_factor(op, r) <-- instr(op), agg r = max(n) in lane_elements(op, _, _, n);

    // Swizzle access: for instructions without arithmetic, the input element
    // (slice position divided by slice width) each output lane reads.
    relation data_movement(u32);
    data_movement(op) <-- instr(op), !arithmetic(op, _);
    relation swizzle_access(u32, u32, u16, u32);
    swizzle_access(op, lane, o, lo / (hi - lo + 1)) <-- data_movement(op), element(op, lane, o, lo, hi);
}

/// Lane facts of one instruction, read back from the fixpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneFacts {
    /// lane -> (operand name, lo, hi), sorted.
    pub bv_slices: BTreeMap<u32, Vec<(String, u32, u32)>>,
    pub unique_lanes: Vec<u32>,
    /// 0 when no vector operand is read (constants only).
    pub reduction_factor: usize,
    /// For data movement: lane -> (operand name, element index).
    pub swizzle: Option<BTreeMap<u32, Vec<(String, u32)>>>,
}

pub struct LaneAnalysis {
    pub facts: Vec<LaneFacts>,
    pub timings: String,
}

/// Runs the lane program over every instruction at once.
pub fn analyze(instrs: &[(&Instr, &Semantics)]) -> LaneAnalysis {
    let mut p = LaneProgram::default();
    for (op, (instr, sem)) in instrs.iter().enumerate() {
        let op = op as u32;
        p.instr.push((op,));
        for (i, param) in instr.params.iter().enumerate() {
            if Kind::of(param.ty) == Kind::Vector {
                p.vector_operand.push((op, i as u16));
            }
        }
        for (l, lane) in sem.lanes.iter().enumerate() {
            p.lane_root.push((op, l as u32, lane.root));
        }
        for (id, n) in sem.dag.nodes().iter().enumerate() {
            let id = id as u32;
            match *n {
                Node::Operand(i) => p.leaf.push((op, id, i, 0, sem.dag.width(id) - 1)),
                Node::Slice { src, hi, lo } if matches!(sem.dag.node(src), Node::Operand(_)) => {
                    let Node::Operand(i) = *sem.dag.node(src) else { unreachable!() };
                    p.leaf.push((op, id, i, lo, hi));
                }
                _ => {}
            }
            if !matches!(n, Node::Slice { src, .. } if matches!(sem.dag.node(*src), Node::Operand(_))) {
                for c in n.children() {
                    p.edge.push((op, id, c));
                }
            }
            if matches!(n, Node::Not(_) | Node::Neg(_) | Node::Bin(..) | Node::Cmp(..) | Node::Sat { .. }) {
                p.arithmetic.push((op, id));
            }
        }
        // Lane shape: the lane's template and its non-position numbers.
        let mut order = OperandOrder::default();
        let lanes = lane_instances(sem, &mut order);
        let mut ids: HashMap<(crate::template::LaneTemplate, Vec<u128>), u32> = HashMap::new();
        for (l, li) in lanes.into_iter().enumerate() {
            let key = (li.template.clone(), li.shape_values());
            let next = ids.len() as u32;
            let s = *ids.entry(key).or_insert(next);
            p.lane_shape.push((op, l as u32, s));
        }
    }
    p.run();
    let mut facts = vec![LaneFacts::default(); instrs.len()];
    let name = |op: u32, o: u16| instrs[op as usize].0.params[o as usize].name.clone();
    for &(op, lane, o, lo, hi) in &p.bv_slice {
        facts[op as usize].bv_slices.entry(lane).or_default().push((name(op, o), lo, hi));
    }
    for f in &mut facts {
        for v in f.bv_slices.values_mut() {
            v.sort();
        }
    }
    for &(op, lane) in &p.unique_lane {
        facts[op as usize].unique_lanes.push(lane);
    }
    for &(op, r) in &p.reduction_factor {
        facts[op as usize].reduction_factor = r;
    }
    for &(op,) in &p.data_movement {
        facts[op as usize].swizzle = Some(BTreeMap::new());
    }
    for &(op, lane, o, e) in &p.swizzle_access {
        if let Some(s) = facts[op as usize].swizzle.as_mut() {
            s.entry(lane).or_default().push((name(op, o), e));
        }
    }
    for f in &mut facts {
        f.unique_lanes.sort();
        if let Some(s) = f.swizzle.as_mut() {
            for v in s.values_mut() {
                v.sort();
            }
        }
    }
    LaneAnalysis { facts, timings: p.scc_times_summary() }
}
