//! Address arithmetic: which scalar `let`s only ever feed load and store
//! indices, so that the backend may compute them, and the indices
//! themselves, with plain signed C arithmetic.
//!
//! Halide treats overflow of signed integers of 32 bits or more as
//! undefined: its LLVM code generator emits `add nsw`, `sub nsw` and
//! `mul nsw` for them (`CodeGen_LLVM::visit(const Add *)` and friends), and
//! its bounds checks (`buffer_allocation_too_large`,
//! `buffer_extents_too_large`) make every in-bounds index fit in 32 bits.
//! The backend's helpers wrap instead, exactly as the reference interpreter
//! does, which makes GCC truncate and re-sign-extend (`movslq`) every index
//! and keeps it from folding `base + 1` into the address. In address
//! position the backend therefore writes `a + b` on `int32_t`/`int64_t`,
//! as Halide does; everywhere else (data, vector lanes, 8- and 16-bit and
//! unsigned types) it keeps the interpreter's wrapping, so that programs
//! whose scalar data arithmetic overflows (the `c_ops` tests do) stay exact
//! and free of C undefined behaviour.

use std::collections::{HashMap, HashSet};

use misaal_frontends::stmt::ast::*;

/// The names of `let`s (statement or expression) whose every use is in an
/// index, directly or through other such `let`s. A name bound more than
/// once is judged over all its bindings.
pub(super) fn address_lets(body: &Stmt) -> HashSet<String> {
    let mut w = Walk::default();
    w.stmt(body);
    // A let used as data makes everything its value reads data too.
    let mut todo: Vec<String> = w.escaped.iter().cloned().collect();
    while let Some(n) = todo.pop() {
        for d in w.deps.get(&n).into_iter().flatten() {
            if w.escaped.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    w.lets.retain(|n| !w.escaped.contains(n));
    w.lets
}

#[derive(Default)]
struct Walk {
    lets: HashSet<String>,
    /// Names used outside an index (other than in a let's value).
    escaped: HashSet<String>,
    /// Let name -> the names its value reads outside an index.
    deps: HashMap<String, Vec<String>>,
}

impl Walk {
    /// Only 32- and 64-bit signed scalars change how they are computed.
    fn add_let(&mut self, name: &str, value: &Expr) {
        if value.ty.is_int() && value.ty.is_scalar() && value.ty.bits >= 32 {
            self.lets.insert(name.to_string());
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        // Iteratively down `let` chains and blocks: a function's prologue is
        // a long chain of lets.
        let mut stack = vec![s];
        while let Some(s) = stack.pop() {
            match s {
                Stmt::Let { name, value, .. } => {
                    self.add_let(name, value);
                    self.expr(value, false, Some(name));
                }
                Stmt::Store { index, value, predicate, .. } => {
                    self.expr(index, true, None);
                    self.expr(value, false, None);
                    if let Some(p) = predicate {
                        self.expr(p, false, None);
                    }
                }
                other => {
                    for e in other.exprs() {
                        self.expr(e, false, None);
                    }
                }
            }
            stack.extend(s.children().into_iter().rev());
        }
    }

    /// `addr`: `e` is (part of) an index. `sink`: the let whose value `e`
    /// is part of, which decides for the names it reads outside an index.
    fn expr(&mut self, e: &Expr, addr: bool, sink: Option<&String>) {
        match &e.kind {
            ExprKind::Var(n) if !addr => match sink {
                Some(l) => self.deps.entry(l.clone()).or_default().push(n.clone()),
                None => {
                    self.escaped.insert(n.clone());
                }
            },
            ExprKind::Load { index, predicate, .. } => {
                self.expr(index, true, sink);
                if let Some(p) = predicate {
                    self.expr(p, false, sink);
                }
            }
            ExprKind::Let { name, value, body } => {
                self.add_let(name, value);
                // An expression let in an index is as much an index as its
                // uses are; its value is judged through its own name.
                self.expr(value, false, Some(name));
                self.expr(body, addr, sink);
            }
            _ => {
                for c in e.children() {
                    self.expr(c, addr, sink);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misaal_frontends::stmt::parse_module;

    fn lets_of(text: &str) -> Vec<String> {
        let m = parse_module("t", text).expect("parses");
        let mut v: Vec<String> = address_lets(&m.funcs[0].body).into_iter().collect();
        v.sort();
        v
    }

    #[test]
    fn index_only_lets_are_found_and_data_lets_are_not() {
        let text = "module name=t, target=x86-64-linux-avx2\nexternal func t (a, o) {\n\
            let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)\n\
            let o = (void *)_halide_buffer_get_host((struct halide_buffer_t *)o.buffer)\n\
            for (x, 0, 16) {\n\
             let i0 = x*4\n\
             let i1 = i0 + 1\n\
             let d = a[i1] + x\n\
             let both = x*2\n\
             o[both] = d + both\n\
             o[i1 + 2] = a[i0]\n\
            }\n}\n";
        // i0 and i1 only index; d is data; `both` is also stored as data.
        let got = lets_of(text);
        assert!(got.contains(&"i0".to_string()) && got.contains(&"i1".to_string()), "{got:?}");
        assert!(!got.contains(&"d".to_string()) && !got.contains(&"both".to_string()), "{got:?}");
    }
}
