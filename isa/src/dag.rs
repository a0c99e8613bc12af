//! Hash-consed bit-vector DAGs: the one meaning that the evaluator, the Z3
//! encoder and the Datalog fact export all read.
//!
//! Smart constructors fold constants and push slices through concatenations
//! and extensions, so leaves stay operand slices, immediates and constants.

use crate::bitvec::BitVec;
use std::collections::HashMap;
use std::fmt::Write;

pub type NodeId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BvOp {
    Add,
    Sub,
    Mul,
    /// Unsigned division and remainder; a zero divisor gives all ones and
    /// the dividend (SMT-LIB).
    UDiv,
    URem,
    And,
    Or,
    Xor,
    /// Shift amounts are unsigned and may have any width; amounts at or past
    /// the width give 0 (`Shl`, `LShr`) or the sign fill (`AShr`).
    Shl,
    LShr,
    AShr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Ult,
    Ule,
    Slt,
    Sle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SatKind {
    /// Signed input, signed result range.
    Signed,
    /// Unsigned input, unsigned result range.
    Unsigned,
    /// Signed input, unsigned result range (x86 `packus`).
    SignedToUnsigned,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// The whole operand `index` of the instruction (vector, mask or immediate).
    Operand(u16),
    Const(BitVec),
    Slice { src: NodeId, hi: u32, lo: u32 },
    /// `width` bits of `src` starting at the run-time bit `offset`; bits past
    /// the top of `src` read as zero.
    DynSlice { src: NodeId, offset: NodeId, width: u32 },
    Not(NodeId),
    Neg(NodeId),
    Bin(BvOp, NodeId, NodeId),
    /// One-bit result.
    Cmp(CmpOp, NodeId, NodeId),
    /// `cond` is one bit wide.
    Ite(NodeId, NodeId, NodeId),
    Ext { signed: bool, src: NodeId, width: u32 },
    Sat { kind: SatKind, src: NodeId, width: u32 },
    /// High part first, as in vendor pseudocode.
    Concat(NodeId, NodeId),
}

impl Node {
    pub fn children(&self) -> Vec<NodeId> {
        match *self {
            Node::Operand(_) | Node::Const(_) => vec![],
            Node::Slice { src, .. } | Node::Ext { src, .. } | Node::Sat { src, .. } | Node::Not(src) | Node::Neg(src) => vec![src],
            Node::DynSlice { src, offset, .. } => vec![src, offset],
            Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Concat(a, b) => vec![a, b],
            Node::Ite(c, t, e) => vec![c, t, e],
        }
    }

    pub(crate) fn map_children(&self, f: impl Fn(NodeId) -> NodeId) -> Node {
        match self.clone() {
            n @ (Node::Operand(_) | Node::Const(_)) => n,
            Node::Slice { src, hi, lo } => Node::Slice { src: f(src), hi, lo },
            Node::DynSlice { src, offset, width } => Node::DynSlice { src: f(src), offset: f(offset), width },
            Node::Not(a) => Node::Not(f(a)),
            Node::Neg(a) => Node::Neg(f(a)),
            Node::Bin(op, a, b) => Node::Bin(op, f(a), f(b)),
            Node::Cmp(op, a, b) => Node::Cmp(op, f(a), f(b)),
            Node::Ite(c, t, e) => Node::Ite(f(c), f(t), f(e)),
            Node::Ext { signed, src, width } => Node::Ext { signed, src: f(src), width },
            Node::Sat { kind, src, width } => Node::Sat { kind, src: f(src), width },
            Node::Concat(a, b) => Node::Concat(f(a), f(b)),
        }
    }
}

/// Applies one node's operation to already computed child values.
pub fn apply(node: &Node, operands: &[BitVec], val: impl Fn(NodeId) -> BitVec) -> BitVec {
    match node {
        Node::Operand(i) => operands[*i as usize].clone(),
        Node::Const(c) => c.clone(),
        Node::Slice { src, hi, lo } => val(*src).extract(*hi, *lo),
        Node::DynSlice { src, offset, width } => val(*src).lshr(&val(*offset)).truncate(*width),
        Node::Not(a) => val(*a).not(),
        Node::Neg(a) => val(*a).neg(),
        Node::Bin(op, a, b) => {
            let (a, b) = (val(*a), val(*b));
            match op {
                BvOp::Add => a.add(&b),
                BvOp::Sub => a.sub(&b),
                BvOp::Mul => a.mul(&b),
                BvOp::UDiv => a.udiv(&b),
                BvOp::URem => a.urem(&b),
                BvOp::And => a.and(&b),
                BvOp::Or => a.or(&b),
                BvOp::Xor => a.xor(&b),
                BvOp::Shl => a.shl(&b),
                BvOp::LShr => a.lshr(&b),
                BvOp::AShr => a.ashr(&b),
            }
        }
        Node::Cmp(op, a, b) => {
            let (a, b) = (val(*a), val(*b));
            let r = match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                CmpOp::Ult => a.ult(&b),
                CmpOp::Ule => a.ule(&b),
                CmpOp::Slt => a.slt(&b),
                CmpOp::Sle => a.sle(&b),
            };
            BitVec::from_u64(1, r as u64)
        }
        Node::Ite(c, t, e) => {
            if val(*c).is_zero() {
                val(*e)
            } else {
                val(*t)
            }
        }
        Node::Ext { signed: true, src, width } => val(*src).sext(*width),
        Node::Ext { signed: false, src, width } => val(*src).zext(*width),
        Node::Sat { kind, src, width } => {
            let v = val(*src);
            match kind {
                SatKind::Signed => v.sat_signed(*width),
                SatKind::Unsigned => v.sat_unsigned(*width),
                SatKind::SignedToUnsigned => v.sat_signed_to_unsigned(*width),
            }
        }
        Node::Concat(h, l) => BitVec::concat(&val(*h), &val(*l)),
    }
}

#[derive(Clone, Debug, Default)]
pub struct Dag {
    nodes: Vec<Node>,
    widths: Vec<u32>,
    memo: HashMap<Node, NodeId>,
    operand_widths: Vec<u32>,
}

impl Dag {
    pub fn new(operand_widths: Vec<u32>) -> Self {
        Dag { operand_widths, ..Default::default() }
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }
    pub fn width(&self, id: NodeId) -> u32 {
        self.widths[id as usize]
    }
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    pub fn operand_widths(&self) -> &[u32] {
        &self.operand_widths
    }
    pub fn as_const(&self, id: NodeId) -> Option<&BitVec> {
        match self.node(id) {
            Node::Const(c) => Some(c),
            _ => None,
        }
    }

    fn width_of(&self, n: &Node) -> u32 {
        match *n {
            Node::Operand(i) => self.operand_widths[i as usize],
            Node::Const(ref c) => c.width(),
            Node::Slice { hi, lo, .. } => hi - lo + 1,
            Node::DynSlice { width, .. } | Node::Ext { width, .. } | Node::Sat { width, .. } => width,
            Node::Not(a) | Node::Neg(a) | Node::Bin(_, a, _) => self.width(a),
            Node::Cmp(..) => 1,
            Node::Ite(_, t, _) => self.width(t),
            Node::Concat(a, b) => self.width(a) + self.width(b),
        }
    }

    /// Interns `n`, folding it to a constant when every child is constant.
    fn intern(&mut self, n: Node) -> NodeId {
        let kids = n.children();
        if !kids.is_empty() && kids.iter().all(|&k| self.as_const(k).is_some()) {
            let v = apply(&n, &[], |k| self.as_const(k).expect("constant child").clone());
            return self.constant(v);
        }
        self.raw(n)
    }

    fn raw(&mut self, n: Node) -> NodeId {
        if let Some(&id) = self.memo.get(&n) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.widths.push(self.width_of(&n));
        self.memo.insert(n.clone(), id);
        self.nodes.push(n);
        id
    }

    pub fn operand(&mut self, index: u16) -> NodeId {
        self.raw(Node::Operand(index))
    }
    pub fn constant(&mut self, v: BitVec) -> NodeId {
        self.raw(Node::Const(v))
    }

    pub fn slice(&mut self, src: NodeId, hi: u32, lo: u32) -> NodeId {
        assert!(lo <= hi && hi < self.width(src), "slice [{hi}:{lo}] of a {}-bit node", self.width(src));
        if lo == 0 && hi + 1 == self.width(src) {
            return src;
        }
        match *self.node(src) {
            Node::Slice { src: s, lo: l0, .. } => return self.slice(s, hi + l0, lo + l0),
            Node::Concat(h, l) => {
                let lw = self.width(l);
                if hi < lw {
                    return self.slice(l, hi, lo);
                }
                if lo >= lw {
                    return self.slice(h, hi - lw, lo - lw);
                }
            }
            Node::Ext { src: s, .. } if hi < self.width(s) => return self.slice(s, hi, lo),
            Node::Ext { signed: false, src: s, .. } if lo >= self.width(s) => {
                return self.constant(BitVec::zero(hi - lo + 1));
            }
            _ => {}
        }
        self.intern(Node::Slice { src, hi, lo })
    }

    pub fn dyn_slice(&mut self, src: NodeId, offset: NodeId, width: u32) -> NodeId {
        if let Some(off) = self.as_const(offset).and_then(|c| c.as_small_u64()) {
            let lo = off as u32;
            let sw = self.width(src);
            if (off as u128) + (width as u128) <= sw as u128 {
                return self.slice(src, lo + width - 1, lo);
            }
        }
        self.intern(Node::DynSlice { src, offset, width })
    }

    pub fn concat(&mut self, hi: NodeId, lo: NodeId) -> NodeId {
        if let (Node::Slice { src: s1, hi: h1, lo: l1 }, Node::Slice { src: s2, hi: h2, lo: l2 }) = (self.node(hi).clone(), self.node(lo).clone())
            && s1 == s2
            && l1 == h2 + 1
        {
            return self.slice(s1, h1, l2);
        }
        // Re-associate to the right so adjacent slices of one source meet.
        if let Node::Concat(a, b) = *self.node(hi) {
            let inner = self.concat(b, lo);
            return self.concat(a, inner);
        }
        if let Node::Concat(a, b) = *self.node(lo)
            && let (Node::Slice { src: s1, lo: l1, .. }, Node::Slice { src: s2, hi: h2, .. }) = (self.node(hi).clone(), self.node(a).clone())
            && s1 == s2
            && l1 == h2 + 1
        {
            let merged = self.concat(hi, a);
            return self.concat(merged, b);
        }
        self.intern(Node::Concat(hi, lo))
    }

    pub fn not(&mut self, a: NodeId) -> NodeId {
        self.intern(Node::Not(a))
    }
    pub fn neg(&mut self, a: NodeId) -> NodeId {
        self.intern(Node::Neg(a))
    }
    pub fn bin(&mut self, op: BvOp, a: NodeId, b: NodeId) -> NodeId {
        self.intern(Node::Bin(op, a, b))
    }
    pub fn cmp(&mut self, op: CmpOp, a: NodeId, b: NodeId) -> NodeId {
        self.intern(Node::Cmp(op, a, b))
    }
    pub fn ite(&mut self, c: NodeId, t: NodeId, e: NodeId) -> NodeId {
        if t == e {
            return t;
        }
        if let Some(cv) = self.as_const(c) {
            return if cv.is_zero() { e } else { t };
        }
        // One form per select, so that `x != y ? a : b` and `x == y ? b : a`
        // are the same node (and the same class).
        match *self.node(c) {
            Node::Cmp(CmpOp::Ne, x, y) => {
                let eq = self.cmp(CmpOp::Eq, x, y);
                self.ite(eq, e, t)
            }
            Node::Not(x) => self.ite(x, e, t),
            _ => self.intern(Node::Ite(c, t, e)),
        }
    }
    pub fn ext(&mut self, signed: bool, src: NodeId, width: u32) -> NodeId {
        if width == self.width(src) {
            return src;
        }
        self.intern(Node::Ext { signed, src, width })
    }
    pub fn sat(&mut self, kind: SatKind, src: NodeId, width: u32) -> NodeId {
        self.intern(Node::Sat { kind, src, width })
    }

    /// A copy with node `id` replaced by `node` of the same width; every
    /// user of `id` sees the replacement. Used to build mutants.
    pub fn with_node_replaced(&self, id: NodeId, node: Node) -> Dag {
        let w = self.width_of(&node);
        assert_eq!(w, self.width(id), "replacement must keep the width");
        assert!(node.children().iter().all(|&c| c < id), "replacement may only use earlier nodes");
        let mut d = self.clone();
        d.memo.remove(&d.nodes[id as usize]);
        d.nodes[id as usize] = node;
        d
    }

    /// Copies `sem` into this DAG with its operands replaced by `args`, and
    /// returns the node of its whole result. Composes semantics, e.g. the
    /// sides of a rewrite rule.
    pub fn inline(&mut self, sem: &crate::sema::Semantics, args: &[NodeId]) -> Result<NodeId, String> {
        let want = sem.dag.operand_widths();
        if args.len() != want.len() {
            return Err(format!("takes {} operand(s), given {}", want.len(), args.len()));
        }
        for (i, (&a, &w)) in args.iter().zip(want).enumerate() {
            if self.width(a) != w {
                return Err(format!("operand {i} must be {w} bits, given {}", self.width(a)));
            }
        }
        let mut map: Vec<NodeId> = Vec::with_capacity(sem.dag.len());
        for n in sem.dag.nodes() {
            let id = match n {
                Node::Operand(i) => args[*i as usize],
                Node::Const(c) => self.constant(c.clone()),
                Node::Slice { src, hi, lo } => self.slice(map[*src as usize], *hi, *lo),
                Node::DynSlice { src, offset, width } => self.dyn_slice(map[*src as usize], map[*offset as usize], *width),
                Node::Not(a) => self.not(map[*a as usize]),
                Node::Neg(a) => self.neg(map[*a as usize]),
                Node::Bin(op, a, b) => self.bin(*op, map[*a as usize], map[*b as usize]),
                Node::Cmp(op, a, b) => self.cmp(*op, map[*a as usize], map[*b as usize]),
                Node::Ite(c, t, e) => self.ite(map[*c as usize], map[*t as usize], map[*e as usize]),
                Node::Ext { signed, src, width } => self.ext(*signed, map[*src as usize], *width),
                Node::Sat { kind, src, width } => self.sat(*kind, map[*src as usize], *width),
                Node::Concat(h, l) => self.concat(map[*h as usize], map[*l as usize]),
            };
            map.push(id);
        }
        let mut out: Option<NodeId> = None;
        for lane in &sem.lanes {
            let v = map[lane.root as usize];
            out = Some(match out {
                None => v,
                Some(low) => self.concat(v, low),
            });
        }
        out.ok_or_else(|| "no lanes".to_string())
    }

    /// Keeps only the nodes reachable from `roots`, renumbered in
    /// topological order; returns the new ids of the roots.
    pub fn compact(&self, roots: &[NodeId]) -> (Dag, Vec<NodeId>) {
        let mut live = vec![false; self.nodes.len()];
        let mut stack: Vec<NodeId> = roots.to_vec();
        while let Some(n) = stack.pop() {
            if !std::mem::replace(&mut live[n as usize], true) {
                stack.extend(self.node(n).children());
            }
        }
        let mut out = Dag::new(self.operand_widths.clone());
        let mut map = vec![NodeId::MAX; self.nodes.len()];
        // Ids are created children-first, so increasing order is topological.
        for (i, n) in self.nodes.iter().enumerate() {
            if live[i] {
                map[i] = out.raw(n.map_children(|c| map[c as usize]));
            }
        }
        (out, roots.iter().map(|r| map[*r as usize]).collect())
    }

    /// An S-expression for `root`; nodes used more than once are bound by `let`.
    pub fn render(&self, root: NodeId, operand_names: &[String]) -> String {
        let mut uses = vec![0u32; self.nodes.len()];
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            for c in self.node(n).children() {
                uses[c as usize] += 1;
                if !std::mem::replace(&mut seen[c as usize], true) {
                    stack.push(c);
                }
            }
        }
        let mut lets = String::new();
        let mut names: HashMap<NodeId, String> = HashMap::new();
        let mut order: Vec<NodeId> = (0..self.nodes.len() as NodeId).filter(|&n| seen[n as usize] && uses[n as usize] > 1).collect();
        order.sort();
        for n in order {
            if matches!(self.node(n), Node::Operand(_) | Node::Const(_) | Node::Slice { .. }) {
                continue;
            }
            let text = self.render_node(n, operand_names, &names);
            let name = format!("t{}", names.len());
            let _ = writeln!(lets, "  (let {name} {text})");
            names.insert(n, name);
        }
        format!("{lets}  {}", self.render_node(root, operand_names, &names))
    }

    fn render_node(&self, n: NodeId, ops: &[String], names: &HashMap<NodeId, String>) -> String {
        let r = |c: NodeId| names.get(&c).cloned().unwrap_or_else(|| self.render_node(c, ops, names));
        match self.node(n) {
            Node::Operand(i) => ops.get(*i as usize).cloned().unwrap_or_else(|| format!("op{i}")),
            Node::Const(c) => format!("{c}:bv{}", c.width()),
            Node::Slice { src, hi, lo } => format!("{}[{hi}:{lo}]", r(*src)),
            Node::DynSlice { src, offset, width } => format!("(dynslice {} {} {width})", r(*src), r(*offset)),
            Node::Not(a) => format!("(bvnot {})", r(*a)),
            Node::Neg(a) => format!("(bvneg {})", r(*a)),
            Node::Bin(op, a, b) => {
                let name = match op {
                    BvOp::Add => "bvadd",
                    BvOp::Sub => "bvsub",
                    BvOp::Mul => "bvmul",
                    BvOp::UDiv => "bvudiv",
                    BvOp::URem => "bvurem",
                    BvOp::And => "bvand",
                    BvOp::Or => "bvor",
                    BvOp::Xor => "bvxor",
                    BvOp::Shl => "bvshl",
                    BvOp::LShr => "bvlshr",
                    BvOp::AShr => "bvashr",
                };
                format!("({name} {} {})", r(*a), r(*b))
            }
            Node::Cmp(op, a, b) => {
                let name = match op {
                    CmpOp::Eq => "=",
                    CmpOp::Ne => "distinct",
                    CmpOp::Ult => "bvult",
                    CmpOp::Ule => "bvule",
                    CmpOp::Slt => "bvslt",
                    CmpOp::Sle => "bvsle",
                };
                format!("({name} {} {})", r(*a), r(*b))
            }
            Node::Ite(c, t, e) => format!("(ite {} {} {})", r(*c), r(*t), r(*e)),
            Node::Ext { signed, src, width } => format!("({} {} {width})", if *signed { "sext" } else { "zext" }, r(*src)),
            Node::Sat { kind, src, width } => {
                let k = match kind {
                    SatKind::Signed => "sat.s",
                    SatKind::Unsigned => "sat.u",
                    SatKind::SignedToUnsigned => "sat.su",
                };
                format!("({k} {} {width})", r(*src))
            }
            Node::Concat(h, l) => format!("(concat {} {})", r(*h), r(*l)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_on_negated_conditions_share_one_node() {
        let mut d = Dag::new(vec![8, 8]);
        let (a, b) = (d.operand(0), d.operand(1));
        let ne = d.cmp(CmpOp::Ne, a, b);
        let eq = d.cmp(CmpOp::Eq, a, b);
        let not_eq = d.not(eq);
        let x = d.ite(ne, a, b);
        assert_eq!(x, d.ite(eq, b, a));
        assert_eq!(x, d.ite(not_eq, a, b));
        assert!(matches!(d.node(x), Node::Ite(c, _, _) if *c == eq));
    }
}
