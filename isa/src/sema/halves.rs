//! Vector pairs in the unroller: a `pairN` operand or result is one 2N-bit
//! value; `x.lo` / `x.hi` read its halves and `dst.lo[h:l] := e` writes into
//! one, with slice bounds relative to (and checked against) the half.

use super::{Frame, R, Unroller, Val};
use crate::ast::*;
use crate::diag::Span;
use std::collections::HashMap;

/// The pair-typed names among `params` (and `out`, if its form is a pair).
pub(super) fn pair_halves(params: &[Param], out: Option<(&str, Ty, Form)>) -> HashMap<String, u32> {
    let mut h: HashMap<String, u32> = params.iter().filter(|p| p.form == Form::Pair).map(|p| (p.name.clone(), p.ty.width() / 2)).collect();
    if let Some((name, ty, Form::Pair)) = out {
        h.insert(name.to_string(), ty.width() / 2);
    }
    h
}

impl Unroller<'_> {
    /// `p.lo[h:l] := e` / `p.hi := e`: the slice is relative to the half,
    /// checked against the half's width, then written at its place in `p`.
    pub(super) fn assign_half(&mut self, f: &mut Frame, target: &LValue, hi_half: bool, value: &Expr, span: Span) -> R<()> {
        let name = target.name.as_str();
        let part = if hi_half { "hi" } else { "lo" };
        let Some(&half) = f.halves.get(name) else {
            return self.err(f, target.span, format!("`{name}.{part}` needs a vector pair (declared pairN); `{name}` is not one"));
        };
        let (h, l) = match &target.index {
            None => (half as i128 - 1, 0),
            Some(Index::Range(h, l)) => (self.int(f, h, "a constant slice bound in an assignment target")?, self.int(f, l, "a constant slice bound in an assignment target")?),
            Some(Index::Bit(b)) => {
                let i = self.int(f, b, "a constant bit index in an assignment target")?;
                (i, i)
            }
        };
        if l < 0 || h < l || h >= half as i128 {
            return self.err(f, target.span, format!("slice [{h}:{l}] of `{name}.{part}` is out of range (a half is bv{half}, bits {}..0)", half - 1));
        }
        let off = if hi_half { half as i128 } else { 0 };
        let num = |n: i128| Box::new(Expr { kind: ExprKind::Num(n), span: target.span });
        let whole = LValue { name: target.name.clone(), half: None, index: Some(Index::Range(num(h + off), num(l + off))), span: target.span };
        self.assign(f, &whole, value, span)
    }

    /// The value of `name.lo` (`hi` false) or `name.hi`.
    pub(super) fn half(&mut self, f: &mut Frame, name: &str, hi: bool, span: Span) -> R<Val> {
        let part = if hi { "hi" } else { "lo" };
        let Some(&half) = f.halves.get(name) else {
            return self.err(f, span, format!("`{name}.{part}` needs a vector pair (declared pairN); `{name}` is not one"));
        };
        let whole = Expr { kind: ExprKind::Var(name.to_string()), span };
        let Val::Bv(n) = self.expr(f, &whole)? else {
            return self.err(f, span, format!("`{name}` holds a compile-time integer, not a vector pair"));
        };
        let lo = if hi { half } else { 0 };
        Ok(Val::Bv(self.dag.slice(n, lo + half - 1, lo)))
    }
}
