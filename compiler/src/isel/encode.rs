//! Stage 1, encoding: Halide vector expressions as egglog terms.
//!
//! The constructor scheme (one sort, `V`, for every vector value):
//!
//! - **One constructor per Halide op, its generic parameters as `i64`
//!   arguments**: `(h.add S E N a b)`, `(h.cast S E N S2 E2 a)`,
//!   `(h.vector_reduce_add S E N F a)`. The parameters are exactly the op's
//!   `<S, E, N, ...>` in `frontends/halide/*.sema`, so a rule pattern is the
//!   rule file's term with its numeric variables filled in, and a term maps
//!   back to one instantiation of one verified semantics. A constructor per
//!   (op, type) pair would multiply the declarations by every width the
//!   suite uses and hide the width from the pattern. Halide constructors are
//!   `:unextractable`: egglog's own extractor can never return one, and our
//!   extractor takes one only as a counted naive fallback.
//! - **One constructor per x86 spec**, declared on demand for the specs the
//!   loaded rules name: `(x._mm256_avg_epu8 a b)`. Each instruction has a
//!   fixed arity and its own `:cost`, the extracted term names the
//!   intrinsic directly, and the e-graph holds only the few dozen
//!   instructions a kernel's rules can reach instead of 1,806 declarations.
//!   (A generic `(X86 "name" args)` form would need one constructor per
//!   arity and a cost model that reads a string argument.)
//! - **Leaves**: `(Leaf "text" bits)` for a value the selector does not look
//!   into (a load, a scalar, a float expression), and `(Const bits value)`
//!   for an integer constant, the value taken modulo 2^bits, so `-32768` in
//!   a rule and `(uint16)32768` in a Stmt are one term. A vector
//!   expression of constants with a `ramp` or a comparison in it (see
//!   [`is_constant_vector`]) is one leaf too: a constant, computed when the
//!   C is emitted, never a per-lane loop.
//!
//! Terms are first built in a hash-consed [`TermDag`] (a Stmt `let` is one
//! node, however often it is used), then inserted through egglog's Rust API
//! (`EGraph::update` + `Write::add`), one `add` per distinct node.

use egglog::{Core, EGraph, RawValues, Read, Value, Write};
use misaal_frontends::stmt::{BinOp, Callee, Expr, ExprKind, Intrinsic, Stmt, Type, TypeCode};
use misaal_isa::SpecLibrary;
use std::collections::HashMap;

/// The one sort of vector (and scalar) values.
pub const SORT: &str = "V";
pub const LEAF: &str = "Leaf";
pub const CONST: &str = "Const";

pub fn halide_ctor(op: &str) -> String {
    format!("h.{op}")
}
pub fn instr_ctor(name: &str) -> String {
    format!("x.{name}")
}

/// What a node is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Halide { name: String, generics: Vec<i64> },
    /// A target instruction (x86, ARM or HVX spec), by its intrinsic name.
    Instr { name: String },
    Leaf { text: String, bits: i64 },
    Const { bits: i64, value: i64 },
}

impl Op {
    /// The egglog constructor and its `i64`/`String` arguments.
    pub fn ctor(&self) -> String {
        match self {
            Op::Halide { name, .. } => halide_ctor(name),
            Op::Instr { name } => instr_ctor(name),
            Op::Leaf { .. } => LEAF.into(),
            Op::Const { .. } => CONST.into(),
        }
    }
    pub fn is_halide(&self) -> bool {
        matches!(self, Op::Halide { .. })
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Halide { name, generics } => write!(f, "{name}<{}>", generics.iter().map(|g| g.to_string()).collect::<Vec<_>>().join(", ")),
            Op::Instr { name } => write!(f, "{name}"),
            Op::Leaf { text, bits } => write!(f, "leaf[{bits}]({text})"),
            Op::Const { bits, value } => write!(f, "const[{bits}]({value})"),
        }
    }
}

/// A constant at `bits` bits in its canonical form: modulo 2^bits, as the
/// i64 with the same low 64 bits for 64 bits and more.
pub fn canonical_const(bits: i64, v: i128) -> i64 {
    if bits >= 64 { v as i64 } else { (v.rem_euclid(1i128 << bits)) as i64 }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub op: Op,
    pub kids: Vec<usize>,
}

/// Hash-consed terms: a node is stored once, children before parents.
#[derive(Default, Debug, Clone)]
pub struct TermDag {
    pub nodes: Vec<Node>,
    memo: HashMap<Node, usize>,
}

impl TermDag {
    pub fn add(&mut self, op: Op, kids: Vec<usize>) -> usize {
        let n = Node { op, kids };
        if let Some(&i) = self.memo.get(&n) {
            return i;
        }
        self.nodes.push(n.clone());
        self.memo.insert(n, self.nodes.len() - 1);
        self.nodes.len() - 1
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    /// The distinct Halide ops (name and generics) among the nodes.
    pub fn halide_heads(&self) -> Vec<(String, Vec<i64>)> {
        let mut v: Vec<(String, Vec<i64>)> = self.nodes.iter().filter_map(|n| if let Op::Halide { name, generics } = &n.op { Some((name.clone(), generics.clone())) } else { None }).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// One expression to select instructions for.
#[derive(Clone, Debug)]
pub struct Root {
    /// Where it comes from: `store f[...]`, `let t12`, or a caller's label.
    pub label: String,
    pub node: usize,
    pub ty: Type,
}

/// `<S, E, N>` of a Halide type.
fn sen(t: Type) -> [i64; 3] {
    [matches!(t.code, TypeCode::Int) as i64, t.bits as i64, t.lanes as i64]
}

fn is_integer(t: Type) -> bool {
    matches!(t.code, TypeCode::Int | TypeCode::UInt | TypeCode::Bool)
}

/// Whether `e` is a vector or computes on one: a scalar sum of a
/// `vector_reduce_add` is selected like a vector expression, a scalar load
/// or index arithmetic is not.
pub fn has_vector(e: &Expr) -> bool {
    if e.ty.lanes > 1 {
        return true;
    }
    match &e.kind {
        ExprKind::Cast(a) | ExprKind::Reinterpret(a) | ExprKind::Not(a) => has_vector(a),
        ExprKind::Binary(_, a, b) => has_vector(a) || has_vector(b),
        ExprKind::Select(c, a, b) => has_vector(c) || has_vector(a) || has_vector(b),
        ExprKind::Let { value, body, .. } => has_vector(value) || has_vector(body),
        ExprKind::Call { callee: Callee::Intrinsic(_), args } => args.iter().any(has_vector),
        ExprKind::Shuffle { vectors, .. } => vectors.iter().any(has_vector),
        ExprKind::VectorReduce { .. } => true,
        _ => false,
    }
}

/// Whether `e` is a closed integer expression: its leaves are integer
/// literals and each op is one the reference interpreter evaluates
/// ([`misaal_frontends::interp::Interp::eval_closed`]); no variable, load
/// or runtime call.
pub fn is_closed(e: &Expr) -> bool {
    use Intrinsic::*;
    if !is_integer(e.ty) {
        return false;
    }
    match &e.kind {
        ExprKind::Int(_) | ExprKind::UInt(_) => true,
        ExprKind::Cast(a) | ExprKind::Reinterpret(a) | ExprKind::Not(a) => is_closed(a),
        ExprKind::Binary(_, a, b) => is_closed(a) && is_closed(b),
        ExprKind::Select(c, a, b) => is_closed(c) && is_closed(a) && is_closed(b),
        ExprKind::Ramp { base, stride, .. } => base.ty.lanes == 1 && is_closed(base) && is_closed(stride),
        ExprKind::Broadcast { value, .. } => is_closed(value),
        ExprKind::Shuffle { vectors, .. } => !vectors.is_empty() && vectors.iter().all(is_closed),
        ExprKind::VectorReduce { value, .. } => is_closed(value),
        ExprKind::Call { callee: Callee::Intrinsic(i), args } => {
            let pure = matches!(
                i,
                Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped | WideningMul | SaturatingCast | CountLeadingZeros | ShiftLeft | ShiftRight | WideningShiftLeft | WideningShiftRight
                    | RoundingShiftLeft | RoundingShiftRight | BitwiseAnd | BitwiseOr | BitwiseXor | BitwiseNot | WideningAdd | WideningSub | WidenRightAdd | WidenRightSub | WidenRightMul
                    | SaturatingAdd | SaturatingSub | HalvingAdd | HalvingSub | RoundingHalvingAdd | MulShiftRight | RoundingMulShiftRight | Absd | Abs
            );
            pure && !args.is_empty() && args.iter().all(is_closed)
        }
        _ => false,
    }
}

/// Whether the encoder takes vector `e` as one constant: a closed
/// expression (see [`is_closed`]) with a `ramp` or a comparison in it, as
/// Halide's GuardWithIf tail predicate `ramp(0, 1, 24) <= x24(7)`. No rule
/// reads a `ramp` (nor a comparison of constants, which is data), so as
/// Halide ops it could only be lowered naively, lane by lane at run time;
/// as a leaf it is computed once, at compile time, by the reference
/// interpreter, and emitted as a constant array
/// (`c::isel_emit::constant`). A broadcast of a constant is not one: rules
/// read it (as a splat, an immediate), and it stays Halide ops.
pub fn is_constant_vector(e: &Expr) -> bool {
    fn has_ramp_or_compare(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Ramp { .. } => true,
            ExprKind::Binary(op, ..) if op.is_comparison() && e.ty.lanes > 1 => true,
            _ => e.children().into_iter().any(has_ramp_or_compare),
        }
    }
    e.ty.lanes > 1 && is_closed(e) && has_ramp_or_compare(e)
}

/// Encodes Stmt expressions into a [`TermDag`].
#[derive(Default)]
pub struct Encoder {
    pub dag: TermDag,
    /// In Stmt order (a `let`'s value before its body), so an emitter that
    /// walks the Stmt again meets them in this order.
    pub roots: Vec<Root>,
    /// The Stmt expression of each leaf, by its text (a variable by name).
    /// A name is one leaf in every scope: rewriting treats it as a symbol,
    /// so a choice made for it holds in each scope, and an emitter lowers it
    /// where it is used.
    pub leaves: HashMap<String, Expr>,
    /// Vector `let`s in scope: name to node.
    env: Vec<(String, usize)>,
}

impl Encoder {
    pub fn new() -> Self {
        Self::default()
    }

    fn leaf(&mut self, e: &Expr) -> usize {
        let text = match &e.kind {
            ExprKind::Var(n) => n.clone(),
            _ => e.to_string(),
        };
        self.leaves.entry(text.clone()).or_insert_with(|| e.clone());
        self.dag.add(Op::Leaf { text, bits: e.ty.bits as i64 * e.ty.lanes as i64 }, vec![])
    }

    fn halide(&mut self, name: &str, generics: Vec<i64>, kids: Vec<usize>) -> usize {
        self.dag.add(Op::Halide { name: name.into(), generics }, kids)
    }

    /// Adds a vector expression (a scalar becomes a leaf or a constant) and
    /// records it as a root.
    pub fn root(&mut self, label: impl Into<String>, e: &Expr) -> usize {
        let node = self.expr(e);
        self.roots.push(Root { label: label.into(), node, ty: e.ty });
        node
    }

    /// The node of `e`. Anything the Halide op semantics do not model
    /// (floats, pointers, loads, runtime calls) is a leaf.
    pub fn expr(&mut self, e: &Expr) -> usize {
        let t = e.ty;
        if !is_integer(t) || is_constant_vector(e) {
            return self.leaf(e);
        }
        match &e.kind {
            ExprKind::Int(v) if t.lanes == 1 => self.dag.add(Op::Const { bits: t.bits as i64, value: canonical_const(t.bits as i64, *v as i128) }, vec![]),
            ExprKind::UInt(v) if t.lanes == 1 => self.dag.add(Op::Const { bits: t.bits as i64, value: canonical_const(t.bits as i64, *v as i128) }, vec![]),
            ExprKind::Var(n) => match self.env.iter().rev().find(|(m, _)| m == n) {
                Some((_, id)) => *id,
                None => self.leaf(e),
            },
            _ if t.lanes == 1 && !has_vector(e) => self.leaf(e),
            ExprKind::Cast(a) if is_integer(a.ty) && !t.is_bool() && !a.ty.is_bool() => {
                let k = self.expr(a);
                let [s, el, n] = sen(a.ty);
                self.halide("cast", vec![s, el, n, sen(t)[0], sen(t)[1]], vec![k])
            }
            ExprKind::Reinterpret(a) if is_integer(a.ty) => {
                let k = self.expr(a);
                let mut g = sen(a.ty).to_vec();
                g.extend(sen(t));
                self.halide("reinterpret", g, vec![k])
            }
            ExprKind::Binary(op, a, b) if is_integer(a.ty) && a.ty.lanes == t.lanes && !matches!(op, BinOp::And | BinOp::Or) || matches!(op, BinOp::And | BinOp::Or) && a.ty.is_bool() => {
                let (x, y) = (self.expr(a), self.expr(b));
                self.halide(op.op_name(), sen(a.ty).to_vec(), vec![x, y])
            }
            ExprKind::Not(a) => {
                let x = self.expr(a);
                self.halide("not", sen(a.ty).to_vec(), vec![x])
            }
            ExprKind::Select(c, x, y) if c.ty.lanes == x.ty.lanes => {
                let (c, xa, ya) = (self.expr(c), self.expr(x), self.expr(y));
                self.halide("select", sen(x.ty).to_vec(), vec![c, xa, ya])
            }
            ExprKind::Ramp { base, stride, lanes } if base.ty.lanes == 1 => {
                let (b, s) = (self.expr(base), self.expr(stride));
                let [sg, el, _] = sen(base.ty);
                self.halide("ramp", vec![sg, el, *lanes as i64], vec![b, s])
            }
            ExprKind::Broadcast { value, lanes } if value.ty.lanes == 1 => {
                let v = self.broadcast_value(value);
                let [sg, el, _] = sen(value.ty);
                self.halide("broadcast", vec![sg, el, *lanes as i64], vec![v])
            }
            ExprKind::Let { name, value, body } => {
                let v = self.expr(value);
                self.env.push((name.clone(), v));
                let r = self.expr(body);
                self.env.pop();
                r
            }
            ExprKind::Shuffle { vectors, indices } => self.shuffle(e, vectors, indices),
            ExprKind::VectorReduce { op, value } if value.ty.lanes % t.lanes == 0 => {
                let v = self.expr(value);
                let [s, el, _] = sen(value.ty);
                self.halide(op.name(), vec![s, el, t.lanes as i64, (value.ty.lanes / t.lanes) as i64], vec![v])
            }
            ExprKind::Call { callee: Callee::Intrinsic(i), args } => self.intrinsic(e, *i, args),
            _ => self.leaf(e),
        }
    }

    /// The scalar value of a broadcast. Its integer casts, adds and subs are
    /// Halide ops over leaves (not one leaf), so a rule can see what the
    /// value's range is: conv_nn's `x16(int16(input[..]) - int16(zero))`
    /// is a difference of two u8, which is what lets its product with an i8
    /// be taken by vpmaddwd (it never wraps at 16 bits). They are scalar C
    /// when extracted, as the Stmt's other scalar code.
    ///
    /// Only a value that is (a cast of) a sub is split; anything else (a
    /// cast of a variable, `x64(int16(output_zero))`; l2norm's
    /// `x64(inv_sqrt[0]/2 + 7)`) stays one leaf, as before.
    fn broadcast_value(&mut self, e: &Expr) -> usize {
        fn arith(e: &Expr) -> bool {
            match &e.kind {
                ExprKind::Cast(a) => arith(a),
                ExprKind::Binary(BinOp::Sub, ..) => true,
                _ => false,
            }
        }
        if arith(e) { self.scalar_ops(e) } else { self.expr(e) }
    }

    fn scalar_ops(&mut self, e: &Expr) -> usize {
        let t = e.ty;
        if t.lanes != 1 || !is_integer(t) || t.is_bool() || has_vector(e) {
            return self.expr(e);
        }
        match &e.kind {
            ExprKind::Cast(a) if is_integer(a.ty) && !a.ty.is_bool() && a.ty.lanes == 1 => {
                let k = self.scalar_ops(a);
                let [s, el, n] = sen(a.ty);
                self.halide("cast", vec![s, el, n, sen(t)[0], sen(t)[1]], vec![k])
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) if is_integer(a.ty) && a.ty == t && b.ty == t => {
                let (x, y) = (self.scalar_ops(a), self.scalar_ops(b));
                self.halide(op.op_name(), sen(t).to_vec(), vec![x, y])
            }
            _ => self.expr(e),
        }
    }

    fn intrinsic(&mut self, e: &Expr, i: Intrinsic, args: &[Expr]) -> usize {
        use Intrinsic::*;
        if args.is_empty() || args.iter().any(|a| !is_integer(a.ty)) {
            return self.leaf(e);
        }
        let g = sen(args[0].ty);
        let s2 = |k: usize| sen(args[k].ty)[0];
        let (name, generics): (&str, Vec<i64>) = match i {
            Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped => return self.expr(&args[0]),
            WideningMul => ("widening_mul", vec![g[0], g[1], g[2], s2(1)]),
            SaturatingCast => ("saturating_cast", vec![g[0], g[1], g[2], sen(e.ty)[0], sen(e.ty)[1]]),
            CountLeadingZeros => ("count_leading_zeros", g.to_vec()),
            ShiftLeft => ("shl", vec![g[0], g[1], g[2], s2(1)]),
            ShiftRight => ("shr", vec![g[0], g[1], g[2], s2(1)]),
            WideningShiftLeft | WideningShiftRight | RoundingShiftLeft | RoundingShiftRight => (i.name(), vec![g[0], g[1], g[2], s2(1)]),
            BitwiseAnd => ("and", g.to_vec()),
            BitwiseOr => ("or", g.to_vec()),
            BitwiseXor => ("xor", g.to_vec()),
            BitwiseNot => ("not", g.to_vec()),
            WidenRightAdd | WidenRightSub | WidenRightMul if args.len() == 2 => (i.name(), sen(args[1].ty).to_vec()),
            WideningAdd | WideningSub | SaturatingAdd | SaturatingSub | HalvingAdd | HalvingSub | RoundingHalvingAdd | MulShiftRight | RoundingMulShiftRight | Absd | Abs => {
                (i.name(), g.to_vec())
            }
            _ => return self.leaf(e),
        };
        let kids = args.iter().map(|a| self.expr(a)).collect();
        self.halide(name, generics, kids)
    }

    /// Concatenations (folded left, two at a time), interleavings of two
    /// vectors, and dense or strided slices of one vector (a deinterleave is
    /// a slice with stride 2); any other shuffle is a leaf.
    fn shuffle(&mut self, e: &Expr, vectors: &[Expr], indices: &[u32]) -> usize {
        let total: u32 = vectors.iter().map(|v| v.ty.lanes).sum();
        let same = vectors.iter().all(|v| v.ty.code == e.ty.code && v.ty.bits == e.ty.bits);
        if !same || vectors.is_empty() {
            return self.leaf(e);
        }
        let [s, el, _] = sen(e.ty);
        if vectors.len() >= 2 && indices.len() as u32 == total && indices.iter().enumerate().all(|(k, &i)| k as u32 == i) {
            let mut acc = self.expr(&vectors[0]);
            let mut n = vectors[0].ty.lanes as i64;
            for v in &vectors[1..] {
                let b = self.expr(v);
                acc = self.halide("concat", vec![s, el, n, v.ty.lanes as i64], vec![acc, b]);
                n += v.ty.lanes as i64;
            }
            return acc;
        }
        let n = vectors[0].ty.lanes;
        if vectors.len() == 2 && vectors[1].ty.lanes == n && indices.len() as u32 == 2 * n && indices.iter().enumerate().all(|(k, &i)| i == if k % 2 == 0 { k as u32 / 2 } else { n + k as u32 / 2 }) {
            let (a, b) = (self.expr(&vectors[0]), self.expr(&vectors[1]));
            return self.halide("interleave", vec![s, el, n as i64], vec![a, b]);
        }
        if vectors.len() == 1 && !indices.is_empty() {
            let begin = indices[0] as i64;
            let stride = if indices.len() > 1 { indices[1] as i64 - begin } else { 1 };
            if stride > 0 && indices.iter().enumerate().all(|(k, &i)| i as i64 == begin + k as i64 * stride) {
                let a = self.expr(&vectors[0]);
                return self.halide("slice", vec![s, el, indices.len() as i64, vectors[0].ty.lanes as i64, begin, stride], vec![a]);
            }
        }
        self.leaf(e)
    }

    /// Every store value and `let` that computes on vectors (see
    /// [`has_vector`]) becomes a root; a `let` is one node wherever it is
    /// used.
    pub fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { name, value, body } => {
                let scoped = is_integer(value.ty) && has_vector(value);
                if scoped {
                    let id = self.root(format!("let {name}"), value);
                    self.env.push((name.clone(), id));
                }
                self.stmt(body);
                if scoped {
                    self.env.pop();
                }
            }
            Stmt::Store { name, index, value, .. } if is_integer(value.ty) && has_vector(value) => {
                self.root(format!("store {name}[{index}]"), value);
            }
            Stmt::ProducerConsumer { body, .. } | Stmt::For { body, .. } | Stmt::Atomic { body, .. } | Stmt::Allocate { body, .. } => self.stmt(body),
            Stmt::IfThenElse { then_case, else_case, .. } => {
                self.stmt(then_case);
                if let Some(e) = else_case {
                    self.stmt(e);
                }
            }
            Stmt::Block(v) => v.iter().for_each(|s| self.stmt(s)),
            _ => {}
        }
    }
}

/// The egglog declarations of the sort, the leaves and every Halide op of
/// `halide` (each `:unextractable`).
pub fn declarations(halide: &SpecLibrary) -> String {
    let mut out = format!("(sort {SORT})\n(constructor {LEAF} (String i64) {SORT} :cost 0)\n(constructor {CONST} (i64 i64) {SORT} :cost 0)\n");
    for name in halide.generic_names() {
        let g = halide.generic(name).expect("listed");
        let args: Vec<&str> = std::iter::repeat_n("i64", g.generics.len()).chain(std::iter::repeat_n(SORT, g.params.len())).collect();
        out.push_str(&format!("(constructor {} ({}) {SORT} :unextractable)\n", halide_ctor(name), args.join(" ")));
    }
    out
}

/// The i64/String columns of a node, then its children.
fn row<'a, 'db: 'a>(st: &impl Core<'a, 'db>, op: &Op, kids: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut v: Vec<Value> = match op {
        Op::Halide { generics, .. } => generics.iter().map(|g| st.base_to_value(*g)).collect(),
        Op::Instr { .. } => vec![],
        Op::Leaf { text, bits } => vec![st.base_to_value(egglog::sort::S::new(text.clone())), st.base_to_value(*bits)],
        Op::Const { bits, value } => vec![st.base_to_value(*bits), st.base_to_value(*value)],
    };
    v.extend(kids);
    v
}

/// Inserts every node of `dag` (one `Write::add` each); returns their e-class values.
pub fn insert(egraph: &mut EGraph, dag: &TermDag) -> Result<Vec<Value>, egglog::Error> {
    egraph.update(|mut fs| {
        let mut ids: Vec<Value> = Vec::with_capacity(dag.len());
        for n in &dag.nodes {
            let r = row(&fs, &n.op, n.kids.iter().map(|&k| ids[k]));
            let v = fs.add(&n.op.ctor(), RawValues(r))?;
            ids.push(v);
        }
        Ok(ids)
    })
}

/// The current (canonical) e-class of every node of `dag`, after rules ran
/// and merged classes: each node is looked up again with its children's
/// canonical classes, children first.
pub fn canonical_classes(egraph: &EGraph, dag: &TermDag) -> Vec<Option<Value>> {
    egraph.read(|rs| {
        let mut ids: Vec<Option<Value>> = Vec::with_capacity(dag.len());
        for n in &dag.nodes {
            let kids: Option<Vec<Value>> = n.kids.iter().map(|&k| ids[k]).collect();
            let v = kids.and_then(|k| rs.eclass_of(&n.op.ctor(), RawValues(row(&rs, &n.op, k.into_iter()))).ok().flatten());
            ids.push(v);
        }
        ids
    })
}
