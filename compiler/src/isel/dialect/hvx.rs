//! Hexagon HVX in 128-byte mode (`hexagon_types.h`, `hexagon_protos.h`,
//! which brings clang's `hvx_hexagon_protos.h`).
//!
//! Every HVX intrinsic takes and returns the same untyped C types whatever
//! its lanes are: `HVX_Vector` (1024 bits), `HVX_VectorPair` (2048, the low
//! vector in the low half), `Word32`/`Word64` scalars and immediates. So a
//! register needs no conversion at a call, and the spec's operand types
//! say the C type: they met `hvx_hexagon_protos.h`'s prototypes when the
//! spec met its qemu oracle (`misaal-oracle-hvx` refuses a spec whose
//! operands disagree with the header), and only such specs reach rules.
//!
//! Glue: unaligned loads and stores are plain C accesses through a
//! 1-byte-aligned vector type (clang emits `vmemu`); a pair is two of them
//! joined by `Q6_W_vcombine_VV` or split by `Q6_V_lo_W`/`Q6_V_hi_W`; a
//! splat is `Q6_V_vsplat_R` of the element repeated across a word (HVX
//! v60 has no byte or halfword splat; v62's `Q6_Vb_vsplat_R` and
//! `Q6_Vh_vsplat_R` would need a feature the suite's target lacks).
//! Predicates (`HVX_VectorPred`) are not registers here: the emitter
//! refuses mask operands, so a rule over one falls back, counted.

use super::{Arg, Call, Dialect, RegisterPair, Ret};
use misaal_isa::ast::Ty;

pub struct Hvx;

/// The unaligned vector type the header below declares.
const UVEC: &str = "misaal_hvx_uvector";

impl Hvx {
    /// The C type of a scalar operand or result of an intrinsic.
    fn word(bits: u32) -> Result<&'static str, String> {
        match bits {
            32 => Ok("int"),
            64 => Ok("long long"),
            b => Err(format!("a {b}-bit scalar operand (HVX intrinsics take Word32 and Word64)")),
        }
    }
}

impl Dialect for Hvx {
    fn isa(&self) -> &'static str {
        "hvx"
    }
    fn header(&self) -> &'static str {
        "#include <hexagon_types.h>\n#include <hexagon_protos.h>\n\
         /* Unaligned 128-byte accesses (vmemu) on every HVX version. */\n\
         typedef long misaal_hvx_uvector __attribute__((__vector_size__(128), __aligned__(1)));\n\n"
    }
    fn registers(&self) -> &'static [(u32, &'static str)] {
        &[(1024, "HVX_Vector"), (2048, "HVX_VectorPair")]
    }
    fn registers_described(&self) -> &'static str {
        "HVX in 128-byte mode has 1024-bit vectors and 2048-bit pairs"
    }
    fn load(&self, bits: u32, ptr: &str) -> Result<(String, String), String> {
        match bits {
            1024 => Ok((format!("(HVX_Vector)(*(const {UVEC} *)({ptr}))"), "vmemu".into())),
            2048 => Ok((format!("Q6_W_vcombine_VV((HVX_Vector)(*(const {UVEC} *)((const char *)({ptr}) + 128)), (HVX_Vector)(*(const {UVEC} *)({ptr})))"), "Q6_W_vcombine_VV".into())),
            b => Err(self.reg_type(b).unwrap_err()),
        }
    }
    fn store(&self, bits: u32, ptr: &str, reg: &str) -> Result<(String, String), String> {
        match bits {
            1024 => Ok((format!("*({UVEC} *)({ptr}) = ({UVEC})({reg});"), "vmemu".into())),
            2048 => Ok((format!("*({UVEC} *)({ptr}) = ({UVEC})Q6_V_lo_W({reg}); *({UVEC} *)((char *)({ptr}) + 128) = ({UVEC})Q6_V_hi_W({reg});"), "vmemu".into())),
            b => Err(self.reg_type(b).unwrap_err()),
        }
    }
    fn scalar_type(&self, bits: u32) -> Result<&'static str, String> {
        super::unsigned_scalar_type(bits)
    }
    fn splat(&self, bits: u32, elem: u32, arg: &str) -> Result<(String, String), String> {
        // `arg` is already cast to `scalar_type(elem)`, an unsigned type, so
        // the product repeats its bits across the word without sign spill.
        let word = match elem {
            8 => format!("(uint32_t)({arg}) * 0x01010101u"),
            16 => format!("(uint32_t)({arg}) * 0x00010001u"),
            32 => format!("(uint32_t)({arg})"),
            e => return Err(format!("a splat of {e}-bit elements (HVX splats words)")),
        };
        match bits {
            1024 => Ok((format!("Q6_V_vsplat_R((int)({word}))"), "Q6_V_vsplat_R".into())),
            2048 => Ok((format!("Q6_W_vcombine_VV(Q6_V_vsplat_R((int)({word})), Q6_V_vsplat_R((int)({word})))"), "Q6_V_vsplat_R".into())),
            b => Err(self.reg_type(b).unwrap_err()),
        }
    }
    fn register_pair(&self) -> Option<RegisterPair> {
        // A pair's vectors are registers of their own: splitting it is no
        // instruction. The header takes the high vector first.
        Some(RegisterPair {
            bits: 2048,
            lo_half: "Q6_V_lo_W",
            hi_half: "Q6_V_hi_W",
            combine: "Q6_W_vcombine_VV",
            combine_hi_first: true,
        })
    }
    fn register_operand(&self, _name: &str, _k: Option<usize>, bits: u32) -> bool {
        // Vectors are 1024 or 2048 bits; scalars Word32 or Word64.
        bits > 64
    }
    fn call(&self, name: &str, args: &[Arg], params: &[Ty], ret: Ret) -> Result<Call, String> {
        if params.len() != args.len() {
            return Err(format!("`{name}` takes {} operand(s), the DAG gives {}", params.len(), args.len()));
        }
        let mut out = Vec::new();
        for (a, p) in args.iter().zip(params) {
            out.push(match (a, p) {
                (Arg::Reg(r, bits), Ty::Bv(w)) if bits == w => {
                    self.reg_type(*bits)?;
                    r.clone()
                }
                (Arg::Scalar { expr, bits }, _) => format!("({})({expr})", Self::word(*bits)?),
                (Arg::ScalarConst { value, bits }, _) => format!("({}){value}LL", Self::word(*bits)?),
                (Arg::Imm(v), Ty::Imm(_)) => format!("{v}"),
                (a, p) => return Err(format!("`{name}`: {a:?} where the spec has {p}")),
            });
        }
        let ctype = match ret {
            Ret::Reg(bits) => self.reg_type(bits)?,
            Ret::Scalar(bits) => Self::word(bits)?.to_string(),
            Ret::Mask(_) => return Err(format!("`{name}` returns a mask (no mask values here)")),
        };
        Ok(Call { expr: format!("{name}({})", out.join(", ")), ctype })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_pairs_and_splats() {
        let h = Hvx;
        assert_eq!(h.reg_type(1024).unwrap(), "HVX_Vector");
        assert_eq!(h.reg_type(2048).unwrap(), "HVX_VectorPair");
        assert_eq!(h.reg_type(512).unwrap_err(), "a 512-bit register (HVX in 128-byte mode has 1024-bit vectors and 2048-bit pairs)");
        assert_eq!(h.half(2048, "w", true).unwrap().1, "Q6_V_hi_W");
        assert!(h.half(1024, "v", false).is_none());
        assert!(h.splat(1024, 8, "(uint8_t)(x)").unwrap().0.contains("0x01010101u"));
        assert!(h.splat(1024, 64, "x").is_err());
        let c = h.call("Q6_Vb_vadd_VbVb", &[Arg::Reg("a".into(), 1024), Arg::Reg("b".into(), 1024)], &[Ty::Bv(1024), Ty::Bv(1024)], Ret::Reg(1024)).unwrap();
        assert_eq!((c.expr.as_str(), c.ctype.as_str()), ("Q6_Vb_vadd_VbVb(a, b)", "HVX_Vector"));
        // A register where the spec wants a pair is refused, not miscompiled.
        assert!(h.call("Q6_Wh_vadd_WhWh", &[Arg::Reg("a".into(), 1024), Arg::Reg("b".into(), 2048)], &[Ty::Bv(2048), Ty::Bv(2048)], Ret::Reg(2048)).is_err());
    }
}
