//! `Display` for the AST, in Halide 21's Stmt style.
//!
//! Output parses back to an equal AST. As Halide does, it prints a
//! `(type)` prefix on a call whose type is not int32, and on a variable or
//! load whose name is not bound by an enclosing `let`, `for` or `allocate`;
//! nested binary operators are parenthesized; one space indents each level.
//! Shuffles print in the most specific of Halide's spellings.
//!
//! [`Module::print_as`] prints in another release's style instead
//! ([`Dialect`]): Halide 19 parenthesizes a binary operator inside a cast
//! (`uint8((a/b))`), and prints a `vector_reduce_*` operand with a fresh
//! printer, so names bound outside it get their `(type)` prefix again.

use std::collections::HashMap;
use std::fmt::{self, Write};

use super::ast::*;
use super::types::{Type, round_float};

/// The Halide release whose Stmt printing to reproduce. The AST is the same
/// for both; only where parentheses and `(type)` prefixes go differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// Halide 21 (`Display`).
    #[default]
    Halide21,
    /// Halide 19.
    Halide19,
}

impl Module {
    /// The module as the given Halide release prints it.
    pub fn print_as(&self, dialect: Dialect) -> String {
        let mut out = format!("module name={}, target={}\n", self.name, self.target);
        for b in &self.buffers {
            let _ = writeln!(out, "buffer {b} = {{...}}\n");
        }
        for func in &self.funcs {
            let _ = writeln!(out, "{}", func.print_as(dialect));
        }
        out
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.print_as(Dialect::Halide21))
    }
}

impl Func {
    /// The function as the given Halide release prints it.
    pub fn print_as(&self, dialect: Dialect) -> String {
        let args: Vec<&str> = self.args.iter().map(|a| a.name.as_str()).collect();
        let mut p = Printer { dialect, ..Printer::default() };
        p.stmt(&self.body);
        // Halide ends a function with a blank line.
        format!("{} func {} ({}) {{\n{}}}\n\n", self.linkage.name(), self.name, args.join(", "), p.out)
    }
}

impl fmt::Display for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.print_as(Dialect::Halide21))
    }
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut p = Printer::default();
        p.stmt(self);
        f.write_str(&p.out)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut p = Printer::default();
        p.expr(self, false);
        f.write_str(&p.out)
    }
}

#[derive(Default)]
struct Printer {
    out: String,
    indent: usize,
    /// Names bound in the enclosing scopes, with how many times.
    known: HashMap<String, usize>,
    dialect: Dialect,
}

impl Printer {
    fn bind(&mut self, name: &str) {
        *self.known.entry(name.to_string()).or_default() += 1;
    }

    fn unbind(&mut self, name: &str) {
        if let Some(n) = self.known.get_mut(name) {
            *n -= 1;
            if *n == 0 {
                self.known.remove(name);
            }
        }
    }

    fn is_known(&self, name: &str) -> bool {
        self.known.contains_key(name)
    }

    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push(' ');
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { name, value, body } => {
                self.line_start();
                let _ = write!(self.out, "let {name} = ");
                self.expr(value, false);
                self.out.push('\n');
                self.bind(name);
                self.stmt(body);
                self.unbind(name);
            }
            Stmt::Assert { cond, message } => {
                self.line_start();
                self.out.push_str("assert(");
                self.expr(cond, false);
                self.out.push_str(", ");
                self.expr(message, false);
                self.out.push_str(")\n");
            }
            Stmt::ProducerConsumer { name, is_producer, body } => {
                self.line_start();
                let _ = writeln!(self.out, "{} {name} {{", if *is_producer { "produce" } else { "consume" });
                self.nested(body);
            }
            Stmt::For { name, kind, min, extent, body } => {
                self.line_start();
                let _ = write!(self.out, "{} ({name}, ", kind.keyword());
                self.expr(min, false);
                self.out.push_str(", ");
                self.expr(extent, false);
                self.out.push_str(") {\n");
                self.bind(name);
                self.nested(body);
                self.unbind(name);
            }
            Stmt::IfThenElse { cond, then_case, else_case } => {
                self.line_start();
                let mut cond = cond;
                let mut then_case = then_case;
                let mut else_case = else_case;
                loop {
                    self.out.push_str("if (");
                    self.expr(cond, false);
                    self.out.push_str(") {\n");
                    self.indent += 1;
                    self.stmt(then_case);
                    self.indent -= 1;
                    match else_case.as_deref() {
                        None => break,
                        Some(Stmt::IfThenElse { cond: c, then_case: t, else_case: e }) => {
                            self.line_start();
                            self.out.push_str("} else ");
                            (cond, then_case, else_case) = (c, t, e);
                        }
                        Some(other) => {
                            self.line_start();
                            self.out.push_str("} else {\n");
                            self.indent += 1;
                            self.stmt(other);
                            self.indent -= 1;
                            break;
                        }
                    }
                }
                self.line_start();
                self.out.push_str("}\n");
            }
            Stmt::Allocate { name, ty, extents, memory, condition, body } => {
                self.line_start();
                let _ = write!(self.out, "allocate {name}[{ty}");
                for e in extents {
                    self.out.push_str(" * ");
                    self.expr(e, true);
                }
                self.out.push(']');
                if *memory != MemoryType::Auto {
                    let _ = write!(self.out, " in {}", memory.name());
                }
                if let Some(c) = condition {
                    self.out.push_str(" if ");
                    self.expr(c, true);
                }
                self.out.push('\n');
                self.bind(name);
                self.stmt(body);
                self.unbind(name);
            }
            Stmt::Free { name } => {
                self.line_start();
                let _ = writeln!(self.out, "free {name}");
            }
            Stmt::Store { name, index, value, predicate, alignment } => {
                self.line_start();
                if let Some(p) = predicate {
                    self.out.push_str("predicate (");
                    self.expr(p, false);
                    self.out.push_str(")\n");
                    self.indent += 1;
                    self.line_start();
                    self.indent -= 1;
                }
                let _ = write!(self.out, "{name}[");
                self.index(index, alignment);
                self.out.push_str(" = ");
                if let ExprKind::Let { .. } = value.kind {
                    // Halide puts each `let ... in` of a stored value on its
                    // own line, then leaves a blank line.
                    self.out.push('\n');
                    self.indent += if predicate.is_some() { 3 } else { 2 };
                    self.store_lets(value);
                    self.indent -= if predicate.is_some() { 3 } else { 2 };
                } else {
                    self.expr(value, false);
                }
                self.out.push('\n');
            }
            Stmt::Evaluate(e) => {
                self.line_start();
                self.expr(e, false);
                self.out.push('\n');
            }
            Stmt::Atomic { mutex, body } => {
                self.line_start();
                match mutex {
                    Some(m) => {
                        let _ = writeln!(self.out, "atomic ({m}) {{");
                    }
                    None => self.out.push_str("atomic {\n"),
                }
                // Halide indents an atomic body by two.
                self.indent += 2;
                self.stmt(body);
                self.indent -= 2;
                self.line_start();
                self.out.push_str("}\n");
            }
            Stmt::Block(v) => {
                for s in v {
                    self.stmt(s);
                }
            }
        }
    }

    /// A chain of `let NAME = VALUE in` lines, then the body on its own line.
    fn store_lets(&mut self, e: &Expr) {
        self.line_start();
        match &e.kind {
            ExprKind::Let { name, value, body } => {
                let _ = write!(self.out, "let {name} = ");
                self.expr(value, false);
                self.out.push_str(" in\n");
                self.bind(name);
                self.store_lets(body);
                self.unbind(name);
            }
            _ => {
                self.expr(e, false);
                self.out.push('\n');
            }
        }
    }

    /// An indented body and its closing brace.
    fn nested(&mut self, body: &Stmt) {
        self.indent += 1;
        self.stmt(body);
        self.indent -= 1;
        self.line_start();
        self.out.push_str("}\n");
    }

    /// `INDEX [aligned(M, R)]]`, after the `[`.
    fn index(&mut self, index: &Expr, alignment: &Option<Alignment>) {
        self.expr(index, false);
        if let Some(a) = alignment {
            let _ = write!(self.out, " aligned({}, {})", a.modulus, a.remainder);
        }
        self.out.push(']');
    }

    /// A `(type)` prefix; handle types carry their own parentheses.
    fn annotation(&mut self, t: Type) {
        if t.is_handle() {
            let _ = write!(self.out, "{t}");
        } else {
            let _ = write!(self.out, "({t})");
        }
    }

    fn list(&mut self, es: &[Expr]) {
        for (i, e) in es.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(e, false);
        }
    }

    /// `parens`: parenthesize a binary operator or `let` (Halide's `print`
    /// as opposed to `print_no_parens`).
    fn expr(&mut self, e: &Expr, parens: bool) {
        match &e.kind {
            ExprKind::Int(v) => {
                if e.ty != Type::I32 {
                    self.annotation(e.ty);
                }
                let _ = write!(self.out, "{v}");
            }
            ExprKind::UInt(v) => {
                self.annotation(e.ty);
                let _ = write!(self.out, "{v}");
            }
            ExprKind::Float(v) => self.out.push_str(&float_literal(*v, e.ty.bits)),
            ExprKind::Str(s) => self.out.push_str(&string_literal(s)),
            ExprKind::Var(name) => {
                if e.ty != Type::I32 && !self.is_known(name) {
                    self.annotation(e.ty);
                }
                self.out.push_str(name);
            }
            ExprKind::Cast(a) => {
                let _ = write!(self.out, "{}(", e.ty);
                self.expr(a, self.dialect == Dialect::Halide19);
                self.out.push(')');
            }
            ExprKind::Reinterpret(a) => {
                let _ = write!(self.out, "reinterpret<{}>(", e.ty);
                self.expr(a, false);
                self.out.push(')');
            }
            ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), a, b) => {
                let _ = write!(self.out, "{}(", op.symbol());
                self.expr(a, false);
                self.out.push_str(", ");
                self.expr(b, false);
                self.out.push(')');
            }
            ExprKind::Binary(op, a, b) => {
                if parens {
                    self.out.push('(');
                }
                self.expr(a, true);
                match op {
                    BinOp::Mul | BinOp::Div => self.out.push_str(op.symbol()),
                    _ => {
                        let _ = write!(self.out, " {} ", op.symbol());
                    }
                }
                self.expr(b, true);
                if parens {
                    self.out.push(')');
                }
            }
            ExprKind::Not(a) => {
                self.out.push('!');
                self.expr(a, true);
            }
            ExprKind::Select(c, t, f) => {
                self.out.push_str("select(");
                self.expr(c, false);
                self.out.push_str(", ");
                self.expr(t, false);
                self.out.push_str(", ");
                self.expr(f, false);
                self.out.push(')');
            }
            ExprKind::Load { name, index, predicate, alignment } => {
                let pred_parens = predicate.is_some() && parens;
                if pred_parens {
                    self.out.push('(');
                }
                if !self.is_known(name) {
                    self.annotation(e.ty);
                }
                let _ = write!(self.out, "{name}[");
                self.index(index, alignment);
                if let Some(p) = predicate {
                    self.out.push_str(" if ");
                    self.expr(p, true);
                }
                if pred_parens {
                    self.out.push(')');
                }
            }
            ExprKind::Ramp { base, stride, lanes } => {
                self.out.push_str("ramp(");
                self.expr(base, false);
                self.out.push_str(", ");
                self.expr(stride, false);
                let _ = write!(self.out, ", {lanes})");
            }
            ExprKind::Broadcast { value, lanes } => {
                let _ = write!(self.out, "x{lanes}(");
                self.expr(value, false);
                self.out.push(')');
            }
            ExprKind::Let { name, value, body } => {
                if parens {
                    self.out.push('(');
                }
                let _ = write!(self.out, "let {name} = ");
                self.expr(value, true);
                self.out.push_str(" in ");
                self.bind(name);
                self.expr(body, true);
                self.unbind(name);
                if parens {
                    self.out.push(')');
                }
            }
            ExprKind::Call { callee, args } => {
                if e.ty != Type::I32 {
                    self.annotation(e.ty);
                }
                let _ = write!(self.out, "{}(", callee.name());
                self.list(args);
                self.out.push(')');
            }
            ExprKind::Shuffle { vectors, indices } => self.shuffle(vectors, indices),
            ExprKind::VectorReduce { op, value } => {
                self.annotation(e.ty);
                let _ = write!(self.out, "{}(", op.name());
                if self.dialect == Dialect::Halide19 {
                    // `<< op->value`: a fresh printer, knowing no names,
                    // parenthesizing a binary operator.
                    let known = std::mem::take(&mut self.known);
                    self.expr(value, true);
                    self.known = known;
                } else {
                    self.expr(value, false);
                }
                self.out.push(')');
            }
        }
    }

    fn shuffle(&mut self, vectors: &[Expr], indices: &[u32]) {
        let lanes: Vec<u32> = vectors.iter().map(|v| v.ty.lanes).collect();
        let total: u32 = lanes.iter().sum();
        let (k, n) = (lanes.len() as u32, lanes.first().copied().unwrap_or(0));
        let is_concat = indices.len() as u32 == total && indices.iter().enumerate().all(|(i, &x)| x == i as u32);
        let is_interleave = k >= 2
            && lanes.iter().all(|&l| l == n)
            && indices.len() as u32 == total
            && indices.iter().enumerate().all(|(i, &x)| x == (i as u32 % k) * n + i as u32 / k);
        let stride = if indices.len() >= 2 { indices[1].checked_sub(indices[0]) } else { None };
        let is_slice = matches!(stride, Some(s) if s > 0)
            && indices.iter().enumerate().all(|(i, &x)| Some(x as u64) == stride.map(|s| indices[0] as u64 + s as u64 * i as u64));
        if is_concat {
            self.out.push_str("concat_vectors(");
            self.list(vectors);
            self.out.push(')');
        } else if is_interleave {
            self.out.push_str("interleave_vectors(");
            self.list(vectors);
            self.out.push(')');
        } else if indices.len() == 1 {
            self.out.push_str("extract_element(");
            self.list(vectors);
            let _ = write!(self.out, ", {})", indices[0]);
        } else if is_slice {
            self.out.push_str("slice_vectors(");
            self.list(vectors);
            let _ = write!(self.out, ", {}, {}, {})", indices[0], stride.unwrap_or(1), indices.len());
        } else {
            self.out.push_str("shuffle(");
            self.list(vectors);
            for i in indices {
                let _ = write!(self.out, ", {i}");
            }
            self.out.push(')');
        }
    }
}

/// Halide prints floats with six decimals (`0.500000f`); where that would
/// not read back as the same value, print every digit needed.
fn float_literal(v: f64, bits: u8) -> String {
    let suffix = match bits {
        32 => "f",
        16 => "h",
        _ => "",
    };
    if v.is_nan() {
        return format!("nan{suffix}");
    }
    let fixed = format!("{v:.6}");
    let back: f64 = fixed.parse().unwrap_or(f64::NAN);
    let digits = if round_float(back, bits) == v {
        fixed
    } else {
        // Shortest digits that read back as `v` (f32 for float16 too: every
        // float16 is an f32).
        let mut s = if bits == 64 { format!("{v}") } else { format!("{}", v as f32) };
        if !s.contains('.') {
            s.push_str(".0");
        }
        s
    };
    format!("{digits}{suffix}")
}

/// A string literal with Halide's escapes.
fn string_literal(s: &str) -> String {
    let mut out = String::from("\"");
    for &c in s.as_bytes() {
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            b' '..=b'~' => out.push(c as char),
            _ => {
                let _ = write!(out, "\\x{c:02X}");
            }
        }
    }
    out.push('"');
    out
}
