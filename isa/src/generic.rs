//! Generic instructions: Halide's ops are defined once for every element
//! type and lane count (`instr add<S, E, N>(a: bv(N*E), ...)`) and
//! instantiated with concrete sizes before unrolling.

use crate::ast::{BinOp, Expr, ExprKind, Instr, Ty, UnOp};
use crate::diag::Diagnostic;

/// Evaluates a width expression over the generic parameters.
fn eval(e: &Expr, env: &[(String, i128)]) -> Result<i128, String> {
    Ok(match &e.kind {
        ExprKind::Num(n) => *n,
        ExprKind::Var(v) => env.iter().find(|(n, _)| n == v).map(|(_, x)| *x).ok_or_else(|| format!("unknown generic parameter `{v}`"))?,
        ExprKind::Unary(UnOp::Neg, a) => eval(a, env)?.checked_neg().ok_or("overflow in a width")?,
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::UDiv => x.checked_div_euclid(y),
                BinOp::URem => x.checked_rem_euclid(y),
                BinOp::Shl => u32::try_from(y).ok().and_then(|s| x.checked_shl(s)),
                BinOp::LShr | BinOp::AShr => u32::try_from(y).ok().map(|s| x >> s.min(127)),
                _ => return Err(format!("`{}` is not allowed in a width", op.symbol())),
            };
            r.ok_or("overflow in a width")?
        }
        ExprKind::Ternary(c, t, f) => {
            if eval(c, env)? != 0 {
                eval(t, env)?
            } else {
                eval(f, env)?
            }
        }
        _ => return Err("a width may only use numbers, generic parameters, + - * << >> and ?:".into()),
    })
}

impl Instr {
    pub fn is_generic(&self) -> bool {
        !self.generics.is_empty()
    }

    /// `add<1,16,32>`.
    pub fn instance_name(&self, args: &[i128]) -> String {
        let a: Vec<String> = args.iter().map(|x| x.to_string()).collect();
        format!("{}<{}>", self.name, a.join(","))
    }

    /// A concrete copy with the generic parameters bound to `args`.
    pub fn instantiate(&self, args: &[i128]) -> Result<Instr, Diagnostic> {
        let fail = |msg: String| Diagnostic::new(&self.file, self.span, format!("{}: {msg}", self.instance_name(args)));
        if args.len() != self.generics.len() {
            return Err(fail(format!("takes {} generic parameter(s) <{}>, given {}", self.generics.len(), self.generics.join(", "), args.len())));
        }
        let env: Vec<(String, i128)> = self.generics.iter().cloned().zip(args.iter().copied()).collect();
        let width = |e: &Option<Expr>, ty: Ty| -> Result<Ty, Diagnostic> {
            let Some(e) = e else { return Ok(ty) };
            let w = eval(e, &env).map_err(&fail)?;
            if !(1..=crate::bitvec::MAX_WIDTH as i128).contains(&w) {
                return Err(fail(format!("width {w} is outside 1..{}", crate::bitvec::MAX_WIDTH)));
            }
            Ok(Ty::Bv(w as u32))
        };
        let mut out = self.clone();
        out.name = self.instance_name(args);
        for p in &mut out.params {
            p.ty = width(&p.size, p.ty)?;
            p.size = None;
        }
        out.ret = width(&self.ret_size, self.ret)?;
        out.ret_size = None;
        out.generics.clear();
        out.bindings = env;
        Ok(out)
    }
}
