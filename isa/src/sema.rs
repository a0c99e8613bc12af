//! Type checking and unrolling, in one pass.
//!
//! Slice bounds are computed from loop variables, so widths are only known
//! once loops are unrolled: the checker therefore executes the spec
//! abstractly. Compile-time integers (loop variables, literals) are computed;
//! everything that depends on operands becomes a DAG node. Conditions that
//! depend on operands execute both branches and merge them with `ite`.
//!
//! Checked here: widths agree, slices stay in range, every bit of `dst` is
//! written exactly once, locals are not read before they are written, and
//! every name and function exists.

use crate::ast::*;
use crate::bitvec::BitVec;
use crate::dag::{BvOp, CmpOp, Dag, NodeId, SatKind};
use crate::diag::{Diagnostic, Span};
use std::collections::{BTreeMap, HashMap};

// Vector pairs: `x.lo` / `x.hi` reads and `dst.lo[..]` writes.
mod halves;
use halves::pair_halves;

/// An output lane: bits `lo .. lo+width` of the result, computed by `root`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    pub lo: u32,
    pub width: u32,
    pub root: NodeId,
}

/// The unrolled meaning of one instruction.
#[derive(Clone, Debug)]
pub struct Semantics {
    pub dag: Dag,
    /// Sorted by `lo`; together they cover the result exactly once.
    pub lanes: Vec<Lane>,
    pub result_width: u32,
}

const MAX_LOOP_TRIPS: i128 = 1 << 16;
const MAX_CALL_DEPTH: usize = 32;
/// The work one instruction may take to unroll, counted in statements run
/// (through every loop trip and call) plus the bit segments of the
/// variables they copy and merge. Nested loops, or functions that call each
/// other several times a level deep, multiply; this bounds the product.
/// The costliest bundled spec, a 512-bit masked ternarylogic with an
/// operand-dependent IF per bit, takes about 534,000 (1/8 of this).
pub const MAX_UNROLL_STEPS: u64 = 1 << 22;
/// Nodes the unrolled DAG of one instruction may reach before compaction.
/// The largest bundled spec (the same ternarylogic) builds about 4,100.
pub const MAX_DAG_NODES: usize = 1 << 18;

#[derive(Clone, Copy, Debug)]
enum Val {
    Int(i128),
    Bv(NodeId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seg {
    hi: u32,
    node: NodeId,
    span: Span,
}

/// Written bit ranges of a variable, keyed by their low bit.
#[derive(Clone, Debug, PartialEq)]
struct Bits {
    width: u32,
    segs: BTreeMap<u32, Seg>,
}

#[derive(Clone, Debug, PartialEq)]
enum Binding {
    Int(i128),
    LoopVar(i128),
    Operand(NodeId),
    Bits(Bits),
}

struct Frame<'a> {
    file: &'a str,
    env: HashMap<String, Binding>,
    /// `dst` in an instruction; in a function, RETURN writes this name.
    out: &'static str,
    out_width: u32,
    /// Names declared as vector pairs (`pairN`), with the width of one
    /// half: what `x.lo` / `x.hi` read and `dst.lo[..]` writes.
    halves: HashMap<String, u32>,
}


pub struct Unroller<'a> {
    pub defs: &'a HashMap<String, Def>,
    dag: Dag,
    depth: usize,
    /// Work done so far; see [`MAX_UNROLL_STEPS`].
    steps: u64,
}

type R<T> = Result<T, Diagnostic>;

const RESULT: &str = "RETURN";

pub fn unroll(instr: &Instr, defs: &HashMap<String, Def>) -> R<Semantics> {
    if instr.is_generic() {
        return Err(Diagnostic::new(&instr.file, instr.span, format!("`{}` is generic: instantiate <{}> first", instr.name, instr.generics.join(", "))));
    }
    let widths = instr.params.iter().map(|p| p.ty.width()).collect();
    let mut u = Unroller { defs, dag: Dag::new(widths), depth: 0, steps: 0 };
    let halves = pair_halves(&instr.params, Some(("dst", instr.ret, instr.ret_form)));
    let mut f = Frame { file: &instr.file, env: HashMap::new(), out: "dst", out_width: instr.ret.width(), halves };
    for (g, v) in &instr.bindings {
        f.env.insert(g.clone(), Binding::LoopVar(*v));
    }
    for (i, p) in instr.params.iter().enumerate() {
        let n = u.dag.operand(i as u16);
        f.env.insert(p.name.clone(), Binding::Operand(n));
    }
    f.env.insert("dst".into(), Binding::Bits(Bits { width: instr.ret.width(), segs: BTreeMap::new() }));
    u.block(&mut f, &instr.body)?;
    let Some(Binding::Bits(dst)) = f.env.get("dst") else { unreachable!("dst is always bound") };
    let gaps = gaps(dst);
    if !gaps.is_empty() {
        let list: Vec<String> = gaps.iter().map(|(l, h)| if l == h { format!("{l}") } else { format!("{l}..{h}") }).collect();
        return Err(Diagnostic::new(&instr.file, instr.span, format!("bits {} of dst (bv{}) are never written", list.join(", "), dst.width)));
    }
    let roots: Vec<NodeId> = dst.segs.values().map(|s| s.node).collect();
    let (dag, roots) = u.dag.compact(&roots);
    let lanes = dst.segs.iter().zip(roots).map(|((&lo, s), root)| Lane { lo, width: s.hi - lo + 1, root }).collect();
    Ok(Semantics { dag, lanes, result_width: instr.ret.width() })
}

fn gaps(b: &Bits) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0;
    for (&lo, s) in &b.segs {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = s.hi + 1;
    }
    if next < b.width {
        out.push((next, b.width - 1));
    }
    out
}

fn fits(v: i128, w: u32) -> bool {
    if w >= 127 {
        return true;
    }
    v >= -(1i128 << (w - 1)) && v < (1i128 << w)
}

impl<'a> Unroller<'a> {
    fn err<T>(&self, f: &Frame, span: Span, msg: impl Into<String>) -> R<T> {
        Err(Diagnostic::new(f.file, span, msg))
    }

    fn block(&mut self, f: &mut Frame, stmts: &[Stmt]) -> R<()> {
        stmts.iter().try_for_each(|s| self.stmt(f, s))
    }

    /// Counts `n` steps of work against [`MAX_UNROLL_STEPS`].
    fn charge(&mut self, f: &Frame, span: Span, n: usize) -> R<()> {
        self.steps = self.steps.saturating_add(n as u64);
        if self.steps > MAX_UNROLL_STEPS {
            return self.err(
                f,
                span,
                format!("unrolling takes more than {MAX_UNROLL_STEPS} steps (statements run, through every loop trip and call); are loops nested too deep or too long?"),
            );
        }
        if self.dag.len() > MAX_DAG_NODES {
            return self.err(f, span, format!("the unrolled semantics grow past {MAX_DAG_NODES} DAG nodes; are loops nested too deep or too long?"));
        }
        Ok(())
    }

    /// The bit segments held by an environment: what cloning it costs.
    fn env_size(env: &HashMap<String, Binding>) -> usize {
        env.values().map(|b| if let Binding::Bits(b) = b { b.segs.len() + 1 } else { 1 }).sum()
    }

    fn stmt(&mut self, f: &mut Frame, s: &Stmt) -> R<()> {
        let span = match s {
            Stmt::For { span, .. } | Stmt::If { span, .. } | Stmt::Assign { span, .. } | Stmt::Return { span, .. } => *span,
        };
        self.charge(f, span, 1)?;
        match s {
            Stmt::For { var, from, to, down, body, span } => {
                if f.env.contains_key(var) {
                    return self.err(f, *span, format!("loop variable `{var}` shadows an existing name"));
                }
                let a = self.int(f, from, "a loop bound")?;
                let b = self.int(f, to, "a loop bound")?;
                let Some(trips) = if *down { a.checked_sub(b) } else { b.checked_sub(a) }.and_then(|d| d.checked_add(1)) else {
                    return self.err(f, *span, format!("loop from {a} to {b} runs more than 2^127 times; at most {MAX_LOOP_TRIPS} are allowed"));
                };
                if trips > MAX_LOOP_TRIPS {
                    return self.err(f, *span, format!("loop runs {trips} times; at most {MAX_LOOP_TRIPS} are allowed"));
                }
                for k in 0..trips.max(0) {
                    let j = if *down { a - k } else { a + k };
                    f.env.insert(var.clone(), Binding::LoopVar(j));
                    self.block(f, body)?;
                }
                f.env.remove(var);
                Ok(())
            }
            Stmt::If { cond, then, els, span } => match self.cond(f, cond)? {
                Val::Int(c) => self.block(f, if c != 0 { then } else { els }),
                Val::Bv(c) => {
                    // Both branches run on a copy of the environment.
                    self.charge(f, *span, 2 * Self::env_size(&f.env))?;
                    let before = f.env.clone();
                    self.block(f, then)?;
                    let after_then = std::mem::replace(&mut f.env, before);
                    self.block(f, els)?;
                    let after_else = std::mem::take(&mut f.env);
                    f.env = self.merge(f, c, after_then, after_else, *span)?;
                    Ok(())
                }
            },
            Stmt::Assign { target, value, span } => self.assign(f, target, value, *span),
            Stmt::Return { value, span } => {
                if f.out != RESULT {
                    return self.err(f, *span, "RETURN is only allowed in a `def`; an instruction writes `dst`");
                }
                let lv = LValue { name: RESULT.into(), half: None, index: None, span: *span };
                self.assign(f, &lv, value, *span)
            }
        }
    }

    /// Joins the two environments after an operand-dependent IF.
    fn merge(&mut self, f: &Frame, c: NodeId, t: HashMap<String, Binding>, e: HashMap<String, Binding>, span: Span) -> R<HashMap<String, Binding>> {
        let mut out = HashMap::new();
        for (name, bt) in t {
            let Some(be) = e.get(&name) else {
                if name == f.out {
                    return self.one_branch_writes_out(f, span);
                }
                continue;
            };
            let merged = match (&bt, be) {
                (x, y) if x == y => Some(bt.clone()),
                (Binding::Int(_), Binding::Int(_)) => {
                    return self.err(f, span, format!("`{name}` gets different integers in the branches of an operand-dependent IF; give it a bit-vector width"));
                }
                (Binding::Bits(a), Binding::Bits(b)) if a.width == b.width => {
                    let same_ranges = a.segs.iter().map(|(l, s)| (*l, s.hi)).eq(b.segs.iter().map(|(l, s)| (*l, s.hi)));
                    if name == f.out && !same_ranges {
                        return self.err(f, span, format!("the branches of this IF write different bits of `{name}`; each branch must write the same bits"));
                    }
                    Some(Binding::Bits(self.merge_bits(c, a, b)))
                }
                _ => None,
            };
            if let Some(m) = merged {
                out.insert(name, m);
            }
        }
        if e.contains_key(f.out) && !out.contains_key(f.out) {
            return self.one_branch_writes_out(f, span);
        }
        Ok(out)
    }

    fn one_branch_writes_out<T>(&self, f: &Frame, span: Span) -> R<T> {
        if f.out == RESULT {
            return self.err(f, span, "only one branch of this IF reaches RETURN; every path through a `def` must end in RETURN");
        }
        self.err(f, span, format!("only one branch of this IF writes `{}`; write it in both", f.out))
    }

    /// Bits written in both branches become `ite(c, then, else)`; bits
    /// written in only one branch are unwritten afterwards.
    fn merge_bits(&mut self, c: NodeId, a: &Bits, b: &Bits) -> Bits {
        let mut cuts: Vec<u32> = a.segs.iter().chain(b.segs.iter()).flat_map(|(l, s)| [*l, s.hi + 1]).collect();
        cuts.sort();
        cuts.dedup();
        let mut segs = BTreeMap::new();
        for w in cuts.windows(2) {
            let (lo, hi) = (w[0], w[1] - 1);
            if let (Some((na, sa)), Some((nb, _))) = (self.read_range(a, hi, lo), self.read_range(b, hi, lo)) {
                let node = self.dag.ite(c, na, nb);
                segs.insert(lo, Seg { hi, node, span: sa });
            }
        }
        Bits { width: a.width, segs }
    }

    /// The value of bits `hi..=lo`, or None if any of them is unwritten.
    fn read_range(&mut self, b: &Bits, hi: u32, lo: u32) -> Option<(NodeId, Span)> {
        let mut parts = Vec::new();
        let mut next = lo;
        let start = b.segs.range(..=lo).next_back().map(|(l, _)| *l).unwrap_or(lo);
        for (&sl, s) in b.segs.range(start..=hi) {
            if s.hi < next {
                continue;
            }
            if sl > next {
                return None;
            }
            let top = s.hi.min(hi);
            parts.push((self.dag.slice(s.node, top - sl, next - sl), s.span));
            next = top + 1;
            if next > hi {
                break;
            }
        }
        if next <= hi {
            return None;
        }
        let span = parts[0].1;
        let mut acc = parts[0].0;
        for (p, _) in &parts[1..] {
            acc = self.dag.concat(*p, acc);
        }
        Some((acc, span))
    }

    fn unwritten(&self, b: &Bits, hi: u32, lo: u32) -> String {
        let mut probe = Bits { width: b.width, segs: BTreeMap::new() };
        for (&l, s) in b.segs.range(..=hi) {
            if s.hi >= lo {
                probe.segs.insert(l.max(lo), Seg { hi: s.hi.min(hi), ..*s });
            }
        }
        let missing: Vec<String> = gaps(&probe).into_iter().filter(|(l, h)| *h >= lo && *l <= hi).map(|(l, h)| format!("{}..{}", l.max(lo), h.min(hi))).collect();
        missing.join(", ")
    }

    fn assign(&mut self, f: &mut Frame, target: &LValue, value: &Expr, span: Span) -> R<()> {
        if let Some(hi) = target.half {
            return self.assign_half(f, target, hi, value, span);
        }
        let name = target.name.as_str();
        match f.env.get(name) {
            Some(Binding::Operand(_)) => return self.err(f, target.span, format!("cannot assign to operand `{name}`")),
            Some(Binding::LoopVar(_)) => return self.err(f, target.span, format!("cannot assign to loop variable `{name}`")),
            _ => {}
        }
        let is_out = name == f.out;
        let (hi, lo) = match &target.index {
            None => {
                let v = if is_out { self.expr_of_width(f, value, f.out_width)? } else { self.expr(f, value)? };
                if is_out {
                    let node = self.as_bv(f, v, f.out_width, value.span)?;
                    let w = self.dag.width(node);
                    if w != f.out_width {
                        return self.err(f, span, format!("width mismatch: `{name}` is bv{} but the value is bv{w}", f.out_width));
                    }
                    return self.write(f, name, f.out_width - 1, 0, node, span);
                }
                let b = match v {
                    Val::Int(i) => Binding::Int(i),
                    Val::Bv(n) => {
                        let w = self.dag.width(n);
                        Binding::Bits(Bits { width: w, segs: BTreeMap::from([(0, Seg { hi: w - 1, node: n, span })]) })
                    }
                };
                f.env.insert(name.to_string(), b);
                return Ok(());
            }
            Some(Index::Range(h, l)) => (self.int(f, h, "a constant slice bound in an assignment target")?, self.int(f, l, "a constant slice bound in an assignment target")?),
            Some(Index::Bit(b)) => {
                let i = self.int(f, b, "a constant bit index in an assignment target")?;
                (i, i)
            }
        };
        if lo < 0 || hi < lo {
            return self.err(f, target.span, format!("slice [{hi}:{lo}] of `{name}` is empty or negative"));
        }
        let bound = match f.env.get(name) {
            Some(Binding::Bits(b)) => b.width,
            _ if is_out => f.out_width,
            _ => crate::bitvec::MAX_WIDTH,
        };
        if hi >= bound as i128 {
            return self.err(f, span, format!("slice [{hi}:{lo}] is out of range for `{name}` (bv{bound}, bits {}..0)", bound - 1));
        }
        let w = (hi - lo + 1) as u32;
        let v = self.expr_of_width(f, value, w)?;
        let node = self.as_bv(f, v, w, value.span)?;
        let vw = self.dag.width(node);
        if vw != w {
            return self.err(f, span, format!("width mismatch: `{name}[{hi}:{lo}]` is {w} bits but the value is bv{vw}"));
        }
        if !is_out && !f.env.contains_key(name) {
            f.env.insert(name.to_string(), Binding::Bits(Bits { width: hi as u32 + 1, segs: BTreeMap::new() }));
        }
        self.write(f, name, hi as u32, lo as u32, node, span)
    }

    fn write(&mut self, f: &mut Frame, name: &str, hi: u32, lo: u32, node: NodeId, span: Span) -> R<()> {
        let is_out = name == f.out;
        let bits = match f.env.get(name) {
            Some(Binding::Bits(b)) => {
                self.charge(f, span, b.segs.len())?;
                b.clone()
            }
            None if is_out => Bits { width: f.out_width, segs: BTreeMap::new() },
            Some(Binding::Int(_)) => return self.err(f, span, format!("`{name}` holds a compile-time integer and has no bits to assign; assign it whole")),
            _ => unreachable!("operands and loop variables are rejected earlier"),
        };
        if hi >= bits.width {
            return self.err(f, span, format!("slice [{hi}:{lo}] is out of range for `{name}` (bv{}, bits {}..0)", bits.width, bits.width - 1));
        }
        let mut segs = BTreeMap::new();
        for (&l, s) in &bits.segs {
            if s.hi < lo || l > hi {
                segs.insert(l, *s);
                continue;
            }
            if is_out {
                let (a, b) = (l.max(lo), s.hi.min(hi));
                return self.err(
                    f,
                    span,
                    format!("bits {a}..{b} of `{name}` are written twice (first at line {}:{})", s.span.line, s.span.col),
                );
            }
            // Overwriting a local keeps the parts outside [hi:lo].
            if l < lo {
                let keep = self.dag.slice(s.node, lo - 1 - l, 0);
                segs.insert(l, Seg { hi: lo - 1, node: keep, span: s.span });
            }
            if s.hi > hi {
                let keep = self.dag.slice(s.node, s.hi - l, hi + 1 - l);
                segs.insert(hi + 1, Seg { hi: s.hi, node: keep, span: s.span });
            }
        }
        segs.insert(lo, Seg { hi, node, span });
        f.env.insert(name.to_string(), Binding::Bits(Bits { width: bits.width, segs }));
        Ok(())
    }

    fn int(&mut self, f: &mut Frame, e: &Expr, what: &str) -> R<i128> {
        match self.expr(f, e)? {
            Val::Int(i) => Ok(i),
            Val::Bv(n) => match self.dag.as_const(n).and_then(|c| c.as_small_u64()) {
                Some(v) => Ok(v as i128),
                None => self.err(f, e.span, format!("expected {what}, but this depends on operand values")),
            },
        }
    }

    fn cond(&mut self, f: &mut Frame, e: &Expr) -> R<Val> {
        let v = self.expr(f, e)?;
        if let Val::Bv(n) = v {
            let w = self.dag.width(n);
            if w != 1 {
                return self.err(f, e.span, format!("a condition must be 1 bit wide, found bv{w}; compare it, e.g. `!= 0`"));
            }
        }
        Ok(v)
    }

    /// Gives an integer the width `w`, or checks a bit-vector is that wide.
    fn as_bv(&mut self, f: &Frame, v: Val, w: u32, span: Span) -> R<NodeId> {
        match v {
            Val::Bv(n) => Ok(n),
            Val::Int(i) => {
                if !fits(i, w) {
                    return self.err(f, span, format!("constant {i} does not fit in {w} bits"));
                }
                Ok(self.dag.constant(BitVec::from_i128(w, i)))
            }
        }
    }

    fn expr(&mut self, f: &mut Frame, e: &Expr) -> R<Val> {
        match &e.kind {
            ExprKind::Num(n) => Ok(Val::Int(*n)),
            ExprKind::Var(name) => match f.env.get(name) {
                Some(Binding::Int(i) | Binding::LoopVar(i)) => Ok(Val::Int(*i)),
                Some(Binding::Operand(n)) => Ok(Val::Bv(*n)),
                Some(Binding::Bits(b)) => {
                    let b = b.clone();
                    self.charge(f, e.span, b.segs.len())?;
                    match self.read_range(&b, b.width - 1, 0) {
                        Some((n, _)) => Ok(Val::Bv(n)),
                        None => self.err(f, e.span, format!("bits {} of `{name}` are read before they are written", self.unwritten(&b, b.width - 1, 0))),
                    }
                }
                None => self.err(f, e.span, format!("unknown name `{name}`")),
            },
            ExprKind::Unary(op, a) => match (op, self.expr(f, a)?) {
                (UnOp::Neg, Val::Int(i)) => match i.checked_neg() {
                    Some(n) => Ok(Val::Int(n)),
                    None => self.err(f, e.span, format!("integer overflow in `-({i})`")),
                },
                (UnOp::Neg, Val::Bv(n)) => Ok(Val::Bv(self.dag.neg(n))),
                (UnOp::Not, Val::Bv(n)) => Ok(Val::Bv(self.dag.not(n))),
                (UnOp::Not, Val::Int(_)) => self.err(f, e.span, "NOT of an integer constant has no width; apply it to a bit-vector"),
            },
            ExprKind::Binary(op, a, b) => {
                let (va, vb) = (self.expr(f, a)?, self.expr(f, b)?);
                self.binary(f, *op, va, vb, e.span)
            }
            ExprKind::Ternary(c, t, el) => match self.cond(f, c)? {
                Val::Int(ci) => self.expr(f, if ci != 0 { t } else { el }),
                Val::Bv(cn) => {
                    let (vt, ve) = (self.expr(f, t)?, self.expr(f, el)?);
                    let (nt, ne) = self.unify(f, vt, ve, e.span, "?:")?;
                    Ok(Val::Bv(self.dag.ite(cn, nt, ne)))
                }
            },
            ExprKind::Index(base, idx) => {
                let b = self.expr(f, base)?;
                let Val::Bv(src) = b else {
                    return self.err(f, e.span, "cannot slice a compile-time integer; slice an operand or a bit-vector");
                };
                self.index(f, src, idx, e.span)
            }
            ExprKind::Call(name, args) => self.call(f, name, args, e.span),
            ExprKind::Half(name, hi) => self.half(f, name, *hi, e.span),
        }
    }

    /// Like `expr`, but a top-level `c ? 0xFF : 0` takes the width of the
    /// bits it is assigned to, as the manuals write masks.
    fn expr_of_width(&mut self, f: &mut Frame, e: &Expr, w: u32) -> R<Val> {
        let ExprKind::Ternary(c, t, el) = &e.kind else { return self.expr(f, e) };
        match self.cond(f, c)? {
            Val::Int(ci) => self.expr_of_width(f, if ci != 0 { t } else { el }, w),
            Val::Bv(cn) => {
                let vt = self.expr_of_width(f, t, w)?;
                let ve = self.expr_of_width(f, el, w)?;
                let (vt, ve) = match (vt, ve) {
                    (Val::Int(_), Val::Int(_)) => (Val::Bv(self.as_bv(f, vt, w, t.span)?), Val::Bv(self.as_bv(f, ve, w, el.span)?)),
                    other => other,
                };
                let (nt, ne) = self.unify(f, vt, ve, e.span, "?:")?;
                Ok(Val::Bv(self.dag.ite(cn, nt, ne)))
            }
        }
    }

    fn index(&mut self, f: &mut Frame, src: NodeId, idx: &Index, span: Span) -> R<Val> {
        let sw = self.dag.width(src);
        let (hv, lv) = match idx {
            Index::Range(h, l) => (self.expr(f, h)?, self.expr(f, l)?),
            Index::Bit(b) => {
                let v = self.expr(f, b)?;
                (v, v)
            }
        };
        match (hv, lv) {
            (Val::Int(h), Val::Int(l)) => {
                if l < 0 || h < l || h >= sw as i128 {
                    return self.err(f, span, format!("slice [{h}:{l}] is out of range for a bv{sw} (bits {}..0)", sw - 1));
                }
                Ok(Val::Bv(self.dag.slice(src, h as u32, l as u32)))
            }
            (Val::Bv(h), Val::Bv(l)) => {
                // A run-time slice must have a fixed width: `x[o+K:o]`.
                let width = if h == l {
                    1
                } else {
                    match self.dag.node(h).clone() {
                        crate::dag::Node::Bin(BvOp::Add, a, k) if a == l => match self.dag.as_const(k).and_then(|c| c.as_small_u64()) {
                            Some(k) if k < sw as u64 => k as u32 + 1,
                            _ => return self.err(f, span, "a run-time slice must read `x[o+K:o]` with a constant K below the width"),
                        },
                        _ => return self.err(f, span, "a run-time slice must read `x[o+K:o]` with a constant K, the same `o` on both sides"),
                    }
                };
                Ok(Val::Bv(self.dag.dyn_slice(src, l, width)))
            }
            _ => self.err(f, span, "a slice's bounds must both be constants or both depend on operands (`x[o+K:o]`)"),
        }
    }

    /// Gives two values one width, widening integers to the other side.
    fn unify(&mut self, f: &Frame, a: Val, b: Val, span: Span, op: &str) -> R<(NodeId, NodeId)> {
        let (na, nb) = match (a, b) {
            (Val::Bv(x), Val::Bv(y)) => (x, y),
            (Val::Bv(x), Val::Int(i)) => (x, self.as_bv(f, Val::Int(i), self.dag.width(x), span)?),
            (Val::Int(i), Val::Bv(y)) => (self.as_bv(f, Val::Int(i), self.dag.width(y), span)?, y),
            (Val::Int(_), Val::Int(_)) => return self.err(f, span, format!("both sides of `{op}` are integer constants; the result has no width")),
        };
        let (wa, wb) = (self.dag.width(na), self.dag.width(nb));
        if wa != wb {
            return self.err(f, span, format!("width mismatch: bv{wa} {op} bv{wb}; extend or truncate one side"));
        }
        Ok((na, nb))
    }

    fn binary(&mut self, f: &Frame, op: BinOp, a: Val, b: Val, span: Span) -> R<Val> {
        if let (Val::Int(x), Val::Int(y)) = (a, b) {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::UDiv => x.checked_div_euclid(y),
                BinOp::URem => x.checked_rem_euclid(y),
                BinOp::And => Some(x & y),
                BinOp::Or => Some(x | y),
                BinOp::Xor => Some(x ^ y),
                BinOp::Shl => u32::try_from(y).ok().and_then(|s| x.checked_shl(s)),
                BinOp::LShr | BinOp::AShr => u32::try_from(y).ok().map(|s| x >> s.min(127)),
                BinOp::Eq => Some((x == y) as i128),
                BinOp::Ne => Some((x != y) as i128),
                BinOp::Lt { .. } => Some((x < y) as i128),
                BinOp::Le { .. } => Some((x <= y) as i128),
                BinOp::Gt { .. } => Some((x > y) as i128),
                BinOp::Ge { .. } => Some((x >= y) as i128),
            };
            return match r {
                Some(v) => Ok(Val::Int(v)),
                None => self.err(f, span, format!("integer overflow in `{x} {} {y}`", op.symbol())),
            };
        }
        let shift = |op| matches!(op, BinOp::Shl | BinOp::LShr | BinOp::AShr);
        if shift(op) {
            let Val::Bv(x) = a else {
                return self.err(f, span, "the shifted value is an integer constant and has no width; shift a bit-vector");
            };
            let amount = match b {
                Val::Bv(n) => n,
                Val::Int(i) if i >= 0 => self.dag.constant(BitVec::from_i128(32, i.min(u32::MAX as i128))),
                Val::Int(i) => return self.err(f, span, format!("negative shift amount {i}")),
            };
            let bop = match op {
                BinOp::Shl => BvOp::Shl,
                BinOp::LShr => BvOp::LShr,
                _ => BvOp::AShr,
            };
            return Ok(Val::Bv(self.dag.bin(bop, x, amount)));
        }
        let (x, y) = self.unify(f, a, b, span, &op.symbol())?;
        let need_sign = |s: Option<bool>| match s {
            Some(s) => Ok(s),
            None => self.err(f, span, format!("comparing bit-vectors needs a signedness: write `{}s` or `{}u`", op.symbol(), op.symbol())),
        };
        let n = match op {
            BinOp::Add => self.dag.bin(BvOp::Add, x, y),
            BinOp::Sub => self.dag.bin(BvOp::Sub, x, y),
            BinOp::Mul => self.dag.bin(BvOp::Mul, x, y),
            BinOp::UDiv => self.dag.bin(BvOp::UDiv, x, y),
            BinOp::URem => self.dag.bin(BvOp::URem, x, y),
            BinOp::And => self.dag.bin(BvOp::And, x, y),
            BinOp::Or => self.dag.bin(BvOp::Or, x, y),
            BinOp::Xor => self.dag.bin(BvOp::Xor, x, y),
            BinOp::Eq => self.dag.cmp(CmpOp::Eq, x, y),
            BinOp::Ne => self.dag.cmp(CmpOp::Ne, x, y),
            BinOp::Lt { signed } => {
                let o = if need_sign(signed)? { CmpOp::Slt } else { CmpOp::Ult };
                self.dag.cmp(o, x, y)
            }
            BinOp::Le { signed } => {
                let o = if need_sign(signed)? { CmpOp::Sle } else { CmpOp::Ule };
                self.dag.cmp(o, x, y)
            }
            BinOp::Gt { signed } => {
                let o = if need_sign(signed)? { CmpOp::Slt } else { CmpOp::Ult };
                self.dag.cmp(o, y, x)
            }
            BinOp::Ge { signed } => {
                let o = if need_sign(signed)? { CmpOp::Sle } else { CmpOp::Ule };
                self.dag.cmp(o, y, x)
            }
            BinOp::Shl | BinOp::LShr | BinOp::AShr => unreachable!("handled above"),
        };
        Ok(Val::Bv(n))
    }

    fn call(&mut self, f: &mut Frame, name: &str, args: &[Expr], span: Span) -> R<Val> {
        if let Some((b, n)) = builtin(name) {
            return self.call_builtin(f, b, n, name, args, span);
        }
        let Some(def) = self.defs.get(name) else {
            return self.err(
                f,
                span,
                format!("unknown function `{name}`; expected a `def` or a builtin (SignExtendN, ZeroExtendN, TruncateN, SaturateSN, SaturateUN, SaturateSUN, Concat)"),
            );
        };
        if args.len() != def.params.len() {
            return self.err(f, span, format!("`{name}` takes {} argument(s), found {}", def.params.len(), args.len()));
        }
        if self.depth >= MAX_CALL_DEPTH {
            return self.err(f, span, format!("calls nest deeper than {MAX_CALL_DEPTH}; is `{name}` recursive?"));
        }
        let mut env = HashMap::new();
        for (p, a) in def.params.iter().zip(args) {
            let v = self.expr(f, a)?;
            let n = self.as_bv(f, v, p.ty.width(), a.span)?;
            let w = self.dag.width(n);
            if w != p.ty.width() {
                return self.err(f, a.span, format!("width mismatch: parameter `{}` of `{name}` is {} but the argument is bv{w}", p.name, p.ty));
            }
            env.insert(p.name.clone(), Binding::Operand(n));
        }
        let halves = pair_halves(&def.params, None);
        let mut callee = Frame { file: &def.file, env, out: RESULT, out_width: def.ret.width(), halves };
        self.depth += 1;
        let r = self.block(&mut callee, &def.body);
        self.depth -= 1;
        r?;
        match callee.env.get(RESULT) {
            Some(Binding::Bits(b)) if gaps(b).is_empty() => {
                let b = b.clone();
                Ok(Val::Bv(self.read_range(&b, b.width - 1, 0).expect("complete").0))
            }
            _ => self.err(&callee, def.span, format!("`{name}` can finish without RETURN (called at {}:{}:{})", f.file, span.line, span.col)),
        }
    }

    fn call_builtin(&mut self, f: &mut Frame, b: Builtin, n: u32, name: &str, args: &[Expr], span: Span) -> R<Val> {
        if b == Builtin::Concat {
            if args.len() < 2 {
                return self.err(f, span, "Concat takes at least 2 arguments");
            }
            let mut acc: Option<NodeId> = None;
            for a in args {
                let Val::Bv(x) = self.expr(f, a)? else {
                    return self.err(f, a.span, "Concat of an integer constant has no width; give it one with ZeroExtendN");
                };
                acc = Some(match acc {
                    None => x,
                    Some(h) => {
                        if self.dag.width(h) + self.dag.width(x) > crate::bitvec::MAX_WIDTH {
                            return self.err(f, span, format!("Concat result is wider than {} bits", crate::bitvec::MAX_WIDTH));
                        }
                        self.dag.concat(h, x)
                    }
                });
            }
            return Ok(Val::Bv(acc.expect("at least two arguments")));
        }
        // `SignExtend(x, 2*E)`: the width is a compile-time argument.
        let n = if n == 0 {
            if args.len() != 2 {
                return self.err(f, span, format!("`{name}` takes 2 arguments (value, width), found {}", args.len()));
            }
            let w = self.int(f, &args[1], "a constant width")?;
            if !(1..=crate::bitvec::MAX_WIDTH as i128).contains(&w) {
                return self.err(f, args[1].span, format!("`{name}`: width {w} is outside 1..{}", crate::bitvec::MAX_WIDTH));
            }
            w as u32
        } else if args.len() != 1 {
            return self.err(f, span, format!("`{name}` takes 1 argument, found {}", args.len()));
        } else {
            n
        };
        if n == 0 || n > crate::bitvec::MAX_WIDTH {
            return self.err(f, span, format!("`{name}`: widths are 1 to {}", crate::bitvec::MAX_WIDTH));
        }
        let v = self.expr(f, &args[0])?;
        let x = match v {
            Val::Bv(x) => x,
            Val::Int(i) => {
                // An integer constant takes the builtin's width directly.
                let ok = match b {
                    Builtin::SignExtend | Builtin::ZeroExtend | Builtin::Truncate => fits(i, n),
                    _ => true,
                };
                if !ok {
                    return self.err(f, args[0].span, format!("constant {i} does not fit in {n} bits"));
                }
                if matches!(b, Builtin::SignExtend | Builtin::ZeroExtend | Builtin::Truncate) {
                    return Ok(Val::Bv(self.dag.constant(BitVec::from_i128(n, i))));
                }
                return self.err(f, args[0].span, format!("`{name}` of an integer constant has no input width"));
            }
        };
        let w = self.dag.width(x);
        let node = match b {
            Builtin::SignExtend | Builtin::ZeroExtend => {
                if n < w {
                    return self.err(f, span, format!("`{name}` of a bv{w} would narrow it; use Truncate{n} or a slice"));
                }
                self.dag.ext(b == Builtin::SignExtend, x, n)
            }
            Builtin::Truncate => {
                if n > w {
                    return self.err(f, span, format!("`{name}` of a bv{w} would widen it; use ZeroExtend{n} or SignExtend{n}"));
                }
                self.dag.slice(x, n - 1, 0)
            }
            Builtin::SatS => self.dag.sat(SatKind::Signed, x, n),
            Builtin::SatU => self.dag.sat(SatKind::Unsigned, x, n),
            Builtin::SatSU => self.dag.sat(SatKind::SignedToUnsigned, x, n),
            Builtin::Concat => unreachable!("handled above"),
        };
        Ok(Val::Bv(node))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Builtin {
    SignExtend,
    ZeroExtend,
    Truncate,
    SatS,
    SatU,
    SatSU,
    Concat,
}

/// Builtins carry their width in the name, as vendor pseudocode writes them.
fn builtin(name: &str) -> Option<(Builtin, u32)> {
    if name == "Concat" {
        return Some((Builtin::Concat, 0));
    }
    // Longest prefix first: `SaturateSU8` is not `SaturateS` of `U8`.
    const PREFIXES: &[(&str, Builtin)] = &[
        ("SignExtend", Builtin::SignExtend),
        ("ZeroExtend", Builtin::ZeroExtend),
        ("Truncate", Builtin::Truncate),
        ("SaturateSU", Builtin::SatSU),
        ("SaturateS", Builtin::SatS),
        ("SaturateU", Builtin::SatU),
    ];
    for (p, b) in PREFIXES {
        if name == *p {
            return Some((*b, 0));
        }
    }
    for (p, b) in PREFIXES {
        if let Some(rest) = name.strip_prefix(p)
            && !rest.is_empty()
            && rest.bytes().all(|c| c.is_ascii_digit())
        {
            return rest.parse().ok().map(|n| (*b, n));
        }
    }
    None
}
