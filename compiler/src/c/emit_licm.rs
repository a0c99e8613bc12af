//! Loop-invariant scalar loads, read once before their loop.
//!
//! conv3x3a16 reads its nine `mask[k]` weights in every iteration of the
//! loop over x, and GCC cannot hoist them: the output is stored through a
//! `uint8_t *`, which may alias anything, and GCC honours `restrict` only on
//! function parameters, not on the locals the buffers' host pointers are
//! here (tried: no change). Halide assumes distinct buffers never alias (its
//! buffer arguments are `noalias` and each buffer gets its own TBAA type),
//! so a load from a buffer the loop never writes has the same value in every
//! iteration. Such a load is read once before the loop, and the loads in
//! the loop become that variable; GCC then also hoists what is computed
//! from it (the broadcasts of the weights).
//!
//! A load is hoisted only if the loop body always evaluates it (not under an
//! `if`, a `select` arm, a predicate or a loop that may run no times), its
//! index reads only names bound before the loop, and nothing in the body
//! stores to, frees or reallocates its buffer, calls out (a parallel task
//! may store anything) or asserts (an assert may be what keeps the load in
//! bounds). It is read only when the loop runs at least once.

use misaal_frontends::stmt::ast::*;

use super::{ctype, Emitter, R};

/// A load the body of a loop always evaluates, with an invariant index.
struct Candidate<'a> {
    name: &'a str,
    ty: misaal_frontends::stmt::types::Type,
    index: &'a Expr,
}

/// What a loop body does to memory and names, for [`Emitter::hoist_invariant_loads`].
#[derive(Default)]
struct Body<'a> {
    /// Buffers stored to, allocated or freed.
    written: Vec<&'a str>,
    /// Names bound in the body (lets, loops, allocations).
    bound: Vec<&'a str>,
    /// A call that may write memory, or an assert (which may return early).
    calls_out: bool,
    /// Scalar loads always evaluated.
    loads: Vec<Candidate<'a>>,
}

impl<'a> Body<'a> {
    fn stmt(&mut self, s: &'a Stmt, always: bool) {
        match s {
            Stmt::Let { name, value, body } => {
                self.bound.push(name);
                self.expr(value, always);
                self.stmt(body, always);
            }
            Stmt::For { name, min, extent, body, .. } => {
                self.bound.push(name);
                self.expr(min, always);
                self.expr(extent, always);
                let runs = matches!(extent.kind, ExprKind::Int(n) if n > 0) || matches!(extent.kind, ExprKind::UInt(n) if n > 0);
                self.stmt(body, always && runs);
            }
            Stmt::IfThenElse { cond, then_case, else_case } => {
                self.expr(cond, always);
                self.stmt(then_case, false);
                if let Some(e) = else_case {
                    self.stmt(e, false);
                }
            }
            Stmt::Allocate { name, extents, condition, body, .. } => {
                self.bound.push(name);
                self.written.push(name);
                for e in extents.iter().chain(condition) {
                    self.expr(e, always);
                }
                self.stmt(body, always);
            }
            Stmt::Free { name } => self.written.push(name),
            Stmt::Store { name, index, value, predicate, .. } => {
                self.written.push(name);
                self.expr(index, always);
                // A predicated scalar store evaluates its value only if the
                // predicate holds.
                self.expr(value, always && predicate.is_none());
                if let Some(p) = predicate {
                    self.expr(p, always);
                }
            }
            // An assert may guard what follows it (an index it checks), and
            // its message is evaluated only when it fails: nothing is
            // hoisted out of a loop with one.
            Stmt::Assert { cond, message } => {
                self.calls_out = true;
                self.expr(cond, always);
                self.expr(message, false);
            }
            Stmt::Evaluate(e) => self.expr(e, always),
            Stmt::ProducerConsumer { body, .. } | Stmt::Atomic { body, .. } => self.stmt(body, always),
            Stmt::Block(v) => {
                for s in v {
                    self.stmt(s, always);
                }
            }
        }
    }

    fn expr(&mut self, e: &'a Expr, always: bool) {
        match &e.kind {
            ExprKind::Load { name, index, predicate, .. } => {
                if always && predicate.is_none() && e.ty.lanes == 1 && simple_index(index) {
                    self.loads.push(Candidate { name, ty: e.ty, index });
                }
                self.expr(index, always);
                if let Some(p) = predicate {
                    self.expr(p, always);
                }
            }
            ExprKind::Select(c, t, f) => {
                self.expr(c, always);
                self.expr(t, false);
                self.expr(f, false);
            }
            ExprKind::Let { name, value, body } => {
                self.bound.push(name);
                self.expr(value, always);
                self.expr(body, always);
            }
            ExprKind::Call { callee, args } => {
                match callee {
                    Callee::Intrinsic(Intrinsic::IfThenElse) => {
                        if let Some(c) = args.first() {
                            self.expr(c, always);
                        }
                        for a in args.iter().skip(1) {
                            self.expr(a, false);
                        }
                        return;
                    }
                    Callee::Extern(n) if !(n.starts_with("_halide_buffer_get_") || n == "_halide_buffer_is_bounds_query" || super::math_fn(n).is_some()) => self.calls_out = true,
                    _ => {}
                }
                for a in args {
                    self.expr(a, always);
                }
            }
            _ => {
                for c in e.children() {
                    self.expr(c, always);
                }
            }
        }
    }
}

/// An index of names, constants and integer arithmetic: cheap, pure, and
/// emitted without statements.
fn simple_index(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::UInt(_) | ExprKind::Var(_) => e.ty.is_scalar(),
        ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => e.ty.is_int() && simple_index(a) && simple_index(b),
        ExprKind::Cast(a) => e.ty.is_int_or_uint() && simple_index(a),
        _ => false,
    }
}

fn names(e: &Expr, out: &mut Vec<String>) {
    e.visit(&mut |x| {
        if let ExprKind::Var(n) = &x.kind {
            out.push(n.clone());
        }
    });
}

impl Emitter<'_> {
    /// Before the loop over `body` (whose extent is the C variable `ext`,
    /// `runs` if it is known to be positive): reads each invariant scalar
    /// load once and records it for [`Self::invariant_load`]. Returns how
    /// many were recorded, to drop after the loop.
    pub(super) fn hoist_invariant_loads(&mut self, loop_var: &str, body: &Stmt, ext: &str, runs: bool) -> R<usize> {
        let mut b = Body::default();
        b.stmt(body, true);
        if b.calls_out {
            return Ok(0);
        }
        let before = self.invariant.len();
        for c in &b.loads {
            if b.written.contains(&c.name) || b.bound.contains(&c.name) {
                continue;
            }
            let mut used = Vec::new();
            names(c.index, &mut used);
            if used.iter().any(|n| n == loop_var || b.bound.contains(&n.as_str()) || self.lookup(n).is_err()) {
                continue;
            }
            let Ok(p) = self.host(c.name) else { continue };
            let i = format!("(int64_t)({})", self.addr_scalar(c.index)?);
            let key = invariant_key(&p, &ctype(c.ty)?, &i);
            if self.invariant.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let v = self.load_elem(&p, c.ty, &i)?;
            let name = self.fresh("inv");
            let ct = ctype(c.ty)?;
            if runs {
                self.line(&format!("{ct} {name} = {v};"));
            } else {
                self.line(&format!("{ct} {name} = {ext} > 0 ? {v} : ({ct})0;"));
            }
            self.invariant.push((key, name));
        }
        Ok(self.invariant.len() - before)
    }

    /// The variable holding the load of element `index` (a C expression)
    /// of buffer `p` as `ct`, if it was read before an enclosing loop.
    pub(super) fn invariant_load(&self, p: &str, ct: &str, index: &str) -> Option<String> {
        let key = invariant_key(p, ct, index);
        self.invariant.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| v.clone())
    }
}

/// C variable names are unique, so equal text means the same value while
/// the loop runs.
fn invariant_key(p: &str, ct: &str, index: &str) -> String {
    format!("{p}\u{1}{ct}\u{1}{index}")
}
