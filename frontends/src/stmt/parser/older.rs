//! Forms only older Halide printers (releases 14 to 18) wrote, read into the
//! AST the current forms make, so everything after the parser sees one IR.
//! `docs/stmt-releases.md` says which release printed which form.
//!
//! - `(uint64)reinterpret(x)`: `reinterpret` as a call typed by its prefix
//!   (no prefix is int32), before it became its own node printed
//!   `reinterpret<uint64>(x)`.
//! - `(int32x8)vector_reduce(Add, x)`: the operator as a capitalized first
//!   argument, before `vector_reduce_add(x)`.
//! - `(halide_buffer_t *)`: a runtime struct pointer without `struct`; read
//!   as `struct halide_buffer_t *`, which the C back end needs.
//! - `make_typed_struct(...)`: the closure prototype of a parallel task,
//!   a struct of its arguments' types, as `make_struct` is now.
//! - `rounding_halving_sub(a, b)`: an FPIR op later releases dropped, read as
//!   what it computes, `T((widening_sub(a, b) + 1)/2)` (Halide's `/` floors).

use super::*;

impl Parser<'_> {
    /// An older-release form starting with the name `name` (already read),
    /// or `None` if `name` starts none. `annot` is a `(type)` printed before.
    pub(super) fn older_form(&mut self, name: &str, span: Span, annot: Option<(Type, Span)>) -> PResult<Option<Expr>> {
        if !self.follows(0, &Tok::LParen) {
            return Ok(None);
        }
        match name {
            "reinterpret" => {
                let args = self.args()?;
                let [e] = <[Expr; 1]>::try_from(args).map_err(|a| self.err(span, format!("`reinterpret` takes 1 argument, not {}", a.len())))?;
                // Halide printed a call's type unless it was int32.
                let (t, tspan) = annot.unwrap_or((Type::I32, span));
                let ty = infer::reinterpret_type(t, e.ty).map_err(|m| self.err(tspan, m))?;
                Ok(Some(Expr::new(ty, ExprKind::Reinterpret(Box::new(e)))))
            }
            "vector_reduce" => {
                self.bump(); // `(`
                let (word, wspan) = self.ident("a reduction operator (Add, SaturatingAdd, Mul, Min, Max, And, Or)")?;
                let op = reduce_op_of_word(&word).ok_or_else(|| {
                    self.err(wspan, format!("unknown reduction operator `{word}` (expected Add, SaturatingAdd, Mul, Min, Max, And or Or)"))
                })?;
                self.expect(Tok::Comma, "`,`")?;
                let mut args = vec![self.expr()?];
                self.expect(Tok::RParen, "`)`")?;
                self.resolve_call_args(op.name(), &mut args, annot.map(|(t, _)| t));
                let value = args.pop().unwrap();
                let ty = infer::reduce_type(op, value.ty, annot.map(|(t, _)| t)).map_err(|m| self.err(span, m))?;
                Ok(Some(Expr::new(ty, ExprKind::VectorReduce { op, value: Box::new(value) })))
            }
            "rounding_halving_sub" => {
                let args = self.args()?;
                let [a, b] = <[Expr; 2]>::try_from(args).map_err(|a| self.err(span, format!("`rounding_halving_sub` takes 2 arguments, not {}", a.len())))?;
                let err = |m: String| self.err(span, m);
                let (a, b) = infer::unify(a, b).map_err(err)?;
                let result = a.ty;
                let wide = infer::intrinsic_type(Intrinsic::WideningSub, &[a.ty, b.ty], None).map_err(err)?;
                let diff = Expr::new(wide, ExprKind::Call { callee: Callee::Intrinsic(Intrinsic::WideningSub), args: vec![a, b] });
                let splat = |v: i64| {
                    let one = Expr::new(wide.element(), ExprKind::Int(v));
                    if wide.is_vector() { Expr::new(wide, ExprKind::Broadcast { value: Box::new(one), lanes: wide.lanes }) } else { one }
                };
                let plus_one = self.make_binary(BinOp::Add, diff, splat(1), span)?;
                let halved = self.make_binary(BinOp::Div, plus_one, splat(2), span)?;
                let ty = infer::cast_type(result, halved.ty).map_err(err)?;
                let e = Expr::new(ty, ExprKind::Cast(Box::new(halved)));
                self.check_annot(e, annot).map(Some)
            }
            _ => Ok(None),
        }
    }
}

/// The operator word of `vector_reduce(OP, x)`, as Halide's
/// `VectorReduce::Operator` printed it before the name took it in lower case.
fn reduce_op_of_word(word: &str) -> Option<ReduceOp> {
    Some(match word {
        "Add" => ReduceOp::Add,
        "SaturatingAdd" => ReduceOp::SaturatingAdd,
        "Mul" => ReduceOp::Mul,
        "Min" => ReduceOp::Min,
        "Max" => ReduceOp::Max,
        "And" => ReduceOp::And,
        "Or" => ReduceOp::Or,
        _ => return None,
    })
}

/// A call name older releases printed for what is now another: the closure
/// prototype `make_typed_struct` is `make_struct`.
pub(super) fn current_call_name(name: &str) -> &str {
    match name {
        "make_typed_struct" => "make_struct",
        other => other,
    }
}

/// The handle spelling the current printer gives a C type: releases before
/// it printed a runtime struct pointer (`halide_buffer_t *`) without
/// `struct`. Function-pointer typedefs (`halide_task_t`) have no `*`.
pub(super) fn current_handle_spelling(words: &[&str], stars: usize) -> Option<String> {
    match words {
        [w] if stars > 0 && w.starts_with("halide_") && w.ends_with("_t") => Some(format!("struct {w} {}", "*".repeat(stars))),
        _ => None,
    }
}
