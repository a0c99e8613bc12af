//! Constant extraction: a lane's DAG with every number (widths, constants,
//! slice positions) replaced by a numbered hole.
//!
//! Two lanes, or two instructions, have the same template when they compute
//! the same bit-vector operation up to those numbers. Operands are renamed by
//! first use, so argument order does not matter.

use misaal_isa::Semantics;
use misaal_isa::dag::{BvOp, CmpOp, Node, NodeId, SatKind};
use std::collections::HashMap;

pub type HoleId = u16;

/// Declared index that stands for an all-zero vector operand. Zero-masking
/// (`k ? op : 0`) is merge-masking (`k ? op : src`) with `src` bound to 0,
/// as Hydride folds them.
pub const ZERO_OPERAND: u16 = u16::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HoleKind {
    /// Bit position of an operand slice: varies from lane to lane.
    Position,
    Width,
    /// The value of a constant.
    Value,
    /// Low bit of a slice of a computed value (not an operand).
    Offset,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TNode {
    /// A slice of (canonical) operand `operand`.
    Leaf { operand: u16, lo: HoleId, width: HoleId },
    Const { value: HoleId, width: HoleId },
    /// Constants wider than 128 bits stay literal.
    WideConst(misaal_isa::BitVec),
    Slice { src: u16, lo: HoleId, width: HoleId },
    DynSlice { src: u16, offset: u16, width: HoleId },
    Not(u16),
    Neg(u16),
    Bin(BvOp, u16, u16),
    Cmp(CmpOp, u16, u16),
    Ite(u16, u16, u16),
    Ext { signed: bool, src: u16, width: HoleId },
    Sat { kind: SatKind, src: u16, width: HoleId },
    Concat(u16, u16),
}

/// The shape of one lane: nodes in post-order (the root is last) and the
/// kind of every hole. Equality of templates is equality of shapes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaneTemplate {
    pub nodes: Vec<TNode>,
    pub holes: Vec<HoleKind>,
}

/// A lane's template together with the numbers that fill its holes.
#[derive(Clone, Debug)]
pub struct LaneInstance {
    pub template: LaneTemplate,
    pub values: Vec<u128>,
}

impl LaneInstance {
    /// Hole values other than positions: lanes that agree on these and on the
    /// template compute the same operation on different data.
    pub fn shape_values(&self) -> Vec<u128> {
        self.template.holes.iter().zip(&self.values).filter(|(k, _)| **k != HoleKind::Position).map(|(_, v)| *v).collect()
    }

    /// Widths and offsets: lanes that agree on these and on the template
    /// belong to one lane group, whose positions and constants may still
    /// vary from lane to lane (`imm == j` in lane j).
    pub fn group_values(&self) -> Vec<u128> {
        self.template.holes.iter().zip(&self.values).filter(|(k, _)| !matches!(k, HoleKind::Position | HoleKind::Value)).map(|(_, v)| *v).collect()
    }
}

/// Assigns canonical operand numbers in order of first use.
#[derive(Default, Clone, Debug)]
pub struct OperandOrder {
    canonical: HashMap<u16, u16>,
    /// `declared[c]` is the declared index of canonical operand `c`.
    pub declared: Vec<u16>,
}

impl OperandOrder {
    fn canon(&mut self, declared: u16) -> u16 {
        let next = self.declared.len() as u16;
        *self.canonical.entry(declared).or_insert_with(|| {
            self.declared.push(declared);
            next
        })
    }
    /// Appends operands never read (e.g. an ignored immediate).
    pub fn finish(&mut self, count: usize) {
        for d in 0..count as u16 {
            self.canon(d);
        }
    }
}

/// How a lane is read into a template. The plain reading is the default;
/// the others are tried only to join a class an instruction is equal to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// A lane-wide zero arm of the lane's root select as a slice of
    /// [`ZERO_OPERAND`]: zero-masking as merge-masking.
    pub zero_source: bool,
    /// A product's low half as the low half of the zero-extended widening
    /// product: `a * b` and `(sext a * sext b)[w-1:0]` both read as
    /// `(zext a * zext b)[w-1:0]`, since the low half ignores extension.
    pub low_product: bool,
}

struct Builder<'a> {
    sem: &'a Semantics,
    order: &'a mut OperandOrder,
    low_product: bool,
    nodes: Vec<TNode>,
    holes: Vec<HoleKind>,
    values: Vec<u128>,
    memo: HashMap<NodeId, u16>,
}

impl Builder<'_> {
    fn hole(&mut self, kind: HoleKind, v: u128) -> HoleId {
        self.holes.push(kind);
        self.values.push(v);
        (self.holes.len() - 1) as HoleId
    }

    fn push(&mut self, n: TNode) -> u16 {
        self.nodes.push(n);
        (self.nodes.len() - 1) as u16
    }

    /// `(zext a * zext b)[w-1:0]` over template nodes `a` and `b`.
    fn low_product(&mut self, a: NodeId, b: NodeId, wide: u32, w: u32) -> u16 {
        let ext = |s: &mut Self, x: NodeId| {
            let x = s.visit(x);
            let width = s.hole(HoleKind::Width, wide as u128);
            s.push(TNode::Ext { signed: false, src: x, width })
        };
        let (ea, eb) = (ext(self, a), ext(self, b));
        let mul = self.push(TNode::Bin(BvOp::Mul, ea, eb));
        let lo = self.hole(HoleKind::Offset, 0);
        let width = self.hole(HoleKind::Width, w as u128);
        self.push(TNode::Slice { src: mul, lo, width })
    }

    /// The low-product reading of `id`, if it is a product or a product's low half.
    fn as_low_product(&mut self, id: NodeId) -> Option<u16> {
        let dag = &self.sem.dag;
        let ext_src = |x: NodeId| match dag.node(x) {
            Node::Ext { src, .. } => Some(*src),
            _ => None,
        };
        match *dag.node(id) {
            Node::Slice { src, hi, lo: 0 } => {
                let Node::Bin(BvOp::Mul, x, y) = *dag.node(src) else { return None };
                let (a, b) = (ext_src(x)?, ext_src(y)?);
                (dag.width(a) == hi + 1 && dag.width(b) == hi + 1).then(|| self.low_product(a, b, dag.width(src), hi + 1))
            }
            Node::Bin(BvOp::Mul, a, b) if ext_src(a).is_none() && ext_src(b).is_none() => {
                let w = dag.width(id);
                (2 * w <= misaal_isa::bitvec::MAX_WIDTH).then(|| self.low_product(a, b, 2 * w, w))
            }
            _ => None,
        }
    }

    fn visit(&mut self, id: NodeId) -> u16 {
        if self.low_product
            && let Some(t) = self.as_low_product(id)
        {
            return t;
        }
        // Constants are values, not shared computations: two equal constants
        // meet in one DAG node only when their widths happen to agree.
        let shareable = !matches!(self.sem.dag.node(id), Node::Const(_));
        if shareable && let Some(&t) = self.memo.get(&id) {
            return t;
        }
        let dag = &self.sem.dag;
        let w = dag.width(id) as u128;
        let t = match dag.node(id).clone() {
            Node::Operand(i) => {
                let operand = self.order.canon(i);
                let lo = self.hole(HoleKind::Position, 0);
                let width = self.hole(HoleKind::Width, w);
                self.push(TNode::Leaf { operand, lo, width })
            }
            Node::Slice { src, hi, lo } if matches!(dag.node(src), Node::Operand(_)) => {
                let Node::Operand(i) = *dag.node(src) else { unreachable!() };
                let operand = self.order.canon(i);
                let width = (hi - lo + 1) as u128;
                let lo = self.hole(HoleKind::Position, lo as u128);
                let width = self.hole(HoleKind::Width, width);
                self.push(TNode::Leaf { operand, lo, width })
            }
            Node::Const(c) if c.width() <= 128 => {
                let value = self.hole(HoleKind::Value, c.to_u128());
                let width = self.hole(HoleKind::Width, w);
                self.push(TNode::Const { value, width })
            }
            Node::Const(c) => self.push(TNode::WideConst(c)),
            Node::Slice { src, hi, lo } => {
                let s = self.visit(src);
                let lo_h = self.hole(HoleKind::Offset, lo as u128);
                let width = self.hole(HoleKind::Width, (hi - lo + 1) as u128);
                self.push(TNode::Slice { src: s, lo: lo_h, width })
            }
            Node::DynSlice { src, offset, width } => {
                let s = self.visit(src);
                let o = self.visit(offset);
                let width = self.hole(HoleKind::Width, width as u128);
                self.push(TNode::DynSlice { src: s, offset: o, width })
            }
            Node::Not(a) => {
                let a = self.visit(a);
                self.push(TNode::Not(a))
            }
            Node::Neg(a) => {
                let a = self.visit(a);
                self.push(TNode::Neg(a))
            }
            Node::Bin(op, a, b) => {
                let (a, b) = (self.visit(a), self.visit(b));
                self.push(TNode::Bin(op, a, b))
            }
            Node::Cmp(op, a, b) => {
                let (a, b) = (self.visit(a), self.visit(b));
                self.push(TNode::Cmp(op, a, b))
            }
            Node::Ite(c, t, e) => {
                let (c, t, e) = (self.visit(c), self.visit(t), self.visit(e));
                self.push(TNode::Ite(c, t, e))
            }
            Node::Ext { signed, src, width } => {
                let s = self.visit(src);
                let width = self.hole(HoleKind::Width, width as u128);
                self.push(TNode::Ext { signed, src: s, width })
            }
            Node::Sat { kind, src, width } => {
                let s = self.visit(src);
                let width = self.hole(HoleKind::Width, width as u128);
                self.push(TNode::Sat { kind, src: s, width })
            }
            Node::Concat(h, l) => {
                let (h, l) = (self.visit(h), self.visit(l));
                self.push(TNode::Concat(h, l))
            }
        };
        self.memo.insert(id, t);
        t
    }
}

/// The template of every lane of `sem`, numbering operands by first use
/// across lanes in order.
pub fn lane_instances(sem: &Semantics, order: &mut OperandOrder) -> Vec<LaneInstance> {
    lane_instances_with(sem, order, Reading::default())
}

/// As [`lane_instances`], read as `reading` says. A zero source sits at the
/// lane's own bit position, the slice merge-masking reads from its source.
pub fn lane_instances_with(sem: &Semantics, order: &mut OperandOrder, reading: Reading) -> Vec<LaneInstance> {
    let dag = &sem.dag;
    sem.lanes
        .iter()
        .map(|lane| {
            let mut b = Builder { sem, order, low_product: reading.low_product, nodes: Vec::new(), holes: Vec::new(), values: Vec::new(), memo: HashMap::new() };
            let zero = |id: NodeId| is_lane_zero(dag, id, lane.width);
            match dag.node(lane.root).clone() {
                Node::Ite(c, t, e) if reading.zero_source && zero(t) != zero(e) => {
                    let arm = |b: &mut Builder, id: NodeId| {
                        if !zero(id) {
                            return b.visit(id);
                        }
                        let operand = b.order.canon(ZERO_OPERAND);
                        let lo = b.hole(HoleKind::Position, lane.lo as u128);
                        let width = b.hole(HoleKind::Width, lane.width as u128);
                        b.push(TNode::Leaf { operand, lo, width })
                    };
                    let c = b.visit(c);
                    let t = arm(&mut b, t);
                    let e = arm(&mut b, e);
                    b.push(TNode::Ite(c, t, e));
                }
                _ => {
                    b.visit(lane.root);
                }
            }
            LaneInstance { template: LaneTemplate { nodes: b.nodes, holes: b.holes }, values: b.values }
        })
        .collect()
}

fn is_lane_zero(dag: &misaal_isa::dag::Dag, id: NodeId, width: u32) -> bool {
    matches!(dag.node(id), Node::Const(c) if c.is_zero() && c.width() == width)
}

/// True when some node is a product.
pub fn has_product(sem: &Semantics) -> bool {
    sem.dag.nodes().iter().any(|n| matches!(n, Node::Bin(BvOp::Mul, ..)))
}

/// True when some lane's root is a select with a lane-wide zero arm.
pub fn has_zero_branch(sem: &Semantics) -> bool {
    let dag = &sem.dag;
    sem.lanes.iter().any(|l| matches!(dag.node(l.root), Node::Ite(_, t, e) if is_lane_zero(dag, *t, l.width) || is_lane_zero(dag, *e, l.width)))
}

impl LaneTemplate {
    /// True when the lane is a constant zero (upper bits a narrowing
    /// conversion clears).
    pub fn is_zero_constant(&self, values: &[u128]) -> bool {
        match self.nodes.as_slice() {
            [TNode::Const { value, .. }] => values[*value as usize] == 0,
            [TNode::WideConst(c)] => c.is_zero(),
            _ => false,
        }
    }

    /// Operators in the template, for naming and for telling data movement
    /// from arithmetic.
    pub fn ops(&self) -> Vec<&'static str> {
        self.nodes
            .iter()
            .filter_map(|n| {
                Some(match n {
                    TNode::Bin(op, ..) => match op {
                        BvOp::Add => "add",
                        BvOp::Sub => "sub",
                        BvOp::Mul => "mul",
                        BvOp::UDiv => "udiv",
                        BvOp::URem => "urem",
                        BvOp::And => "and",
                        BvOp::Or => "or",
                        BvOp::Xor => "xor",
                        BvOp::Shl => "shl",
                        BvOp::LShr => "lshr",
                        BvOp::AShr => "ashr",
                    },
                    TNode::Cmp(op, ..) => match op {
                        CmpOp::Eq => "eq",
                        CmpOp::Ne => "ne",
                        CmpOp::Ult | CmpOp::Ule => "ucmp",
                        CmpOp::Slt | CmpOp::Sle => "scmp",
                    },
                    TNode::Not(_) => "not",
                    TNode::Neg(_) => "neg",
                    TNode::Sat { kind, .. } => match kind {
                        SatKind::Signed => "sat_s",
                        SatKind::Unsigned => "sat_u",
                        SatKind::SignedToUnsigned => "sat_su",
                    },
                    TNode::Ext { signed: true, .. } => "sext",
                    TNode::Ext { signed: false, .. } => "zext",
                    TNode::Ite(..) => "ite",
                    TNode::DynSlice { .. } => "dynslice",
                    TNode::Concat(..) => "concat",
                    _ => return None,
                })
            })
            .collect()
    }
}
