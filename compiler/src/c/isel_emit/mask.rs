//! Mask values in emission: AVX-512's k registers (`__mmask8/16/32/64`).
//!
//! A spec operand or result typed `maskN` (`_mm512_cmpgt_epi16_mask`,
//! `_mm512_mask_blend_epi32`'s `k`) is a Halide bool vector of N lanes,
//! one bit per lane, lane 0 in bit 0: the rules relate the two, and
//! validation proves it. Here such a value lives in a `__mmask*` variable
//! ([`Val::Mask`]). Where a mask meets the naive lowering (a bool lane
//! array of the Stmt, or a naive op reading a mask) it is converted bit by
//! bit, which is correct at any width but slow; rules that keep masks in k
//! registers avoid it.

use super::{CompileError, Emitter, R, Val, ctype};
use crate::isel::dialect::{Arg, Ret};
use misaal_frontends::stmt::types::Type;
use misaal_isa::ast::Ty;

impl Emitter<'_> {
    fn mask_type(&mut self, lanes: u32) -> R<String> {
        self.dialect().mask_type(lanes).map_err(CompileError::unsupported)
    }

    /// `v` as a mask of `lanes` lanes: a mask as is, a bool lane array or a
    /// bool constant converted.
    pub(super) fn in_mask(&mut self, v: Val, lanes: u32) -> R<String> {
        let mt = self.mask_type(lanes)?;
        match v {
            Val::Mask(m, l) if l == lanes => Ok(m),
            Val::Mask(_, l) => Err(CompileError::new(format!("a mask of {l} lanes where {lanes} are expected"))),
            Val::Arr(a, t) if t.is_bool() && t.lanes == lanes && self.const_mask_literal(&a, lanes).is_some() => {
                // A constant (isel_emit/constant.rs): the mask is a literal.
                let m = self.const_mask_literal(&a, lanes).expect("checked");
                let k = self.fresh("k");
                self.line(&format!("{mt} {k} = ({mt})({m});"));
                Ok(k)
            }
            Val::Arr(a, t) if t.is_bool() && t.lanes == lanes => {
                let k = self.fresh("k");
                self.line(&format!("{mt} {k} = 0; for (int {k}_i = 0; {k}_i < {lanes}; {k}_i++) {k} |= ({mt})({a}[{k}_i] != 0) << {k}_i;"));
                Ok(k)
            }
            Val::Const(_, value) => {
                let all = if lanes >= 64 { "~0ULL".to_string() } else { format!("{:#x}ULL", (1u64 << lanes) - 1) };
                let k = self.fresh("k");
                self.line(&format!("{mt} {k} = ({mt})({});", if value & 1 != 0 { all.as_str() } else { "0" }));
                Ok(k)
            }
            other => Err(CompileError::unsupported(format!("{other:?} as a mask of {lanes} lanes"))),
        }
    }

    /// A mask of `n` lanes as a bool lane array of the naive lowering.
    pub(super) fn mask_to_bools(&mut self, m: &str, n: u32) -> R<String> {
        let ct = ctype(Type::bool())?;
        let out = self.fresh("v");
        self.line(&format!("{ct} {out}[{n}]; for (int {out}_i = 0; {out}_i < {n}; {out}_i++) {out}[{out}_i] = ({m} >> {out}_i) & 1;"));
        Ok(out)
    }

    /// A call of intrinsic `name` that returns a mask of `lanes` lanes.
    pub(super) fn mask_call(&mut self, name: &str, args: &[Arg], params: &[Ty], lanes: u32) -> R<Val> {
        let call = self.dialect().call(name, args, params, Ret::Mask(lanes)).map_err(CompileError::unsupported)?;
        let k = self.fresh("k");
        self.line(&format!("{} {k} = {};", call.ctype, call.expr));
        self.count(name);
        Ok(Val::Mask(k, lanes))
    }
}
