//! The C dialect of a target's intrinsics: everything emission
//! (`c/isel_emit/`) writes that depends on the ISA, behind one trait, so
//! the emitter lowers a selected DAG the same way for x86, ARM and HVX.
//!
//! A register value is held in C in one canonical type per width (x86
//! `__m128i`/`__m256i`, NEON `uint8x8_t`/`uint8x16_t`, HVX `HVX_Vector`):
//! the emitter moves registers between instructions without knowing their
//! lane types, and [`Dialect::call`] converts at each intrinsic call to and
//! from the C types the intrinsic declares (on NEON `vreinterpret*`, which
//! emit no instruction).
//!
//! To add a dialect: implement [`Dialect`] in its own file in this folder
//! (see `arm.rs`), declare it below and return it from [`for_isa`].
//! x86's implementation is here, byte for byte the text emission wrote
//! before there were dialects.

use misaal_isa::ast::Ty;

pub mod arm;
pub mod hvx;

/// An operand of an intrinsic call, already lowered.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A register of the canonical type of its width.
    Reg(String, u32),
    /// A scalar operand: a C expression (cast to its width by the dialect).
    Scalar { expr: String, bits: u32 },
    /// A constant scalar operand, modulo 2^bits.
    ScalarConst { value: i64, bits: u32 },
    /// An immediate: the constant itself.
    Imm(i64),
    /// A mask register (x86 `__mmask*`, AVX-512's k registers) of this many lanes.
    Mask(String, u32),
}

/// What an intrinsic call returns.
#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    /// A register of the canonical type of this width.
    Reg(u32),
    /// A C scalar of this width, declared with [`Call::ctype`].
    Scalar(u32),
    /// A mask register of this many lanes ([`Dialect::mask_type`]).
    Mask(u32),
}

/// One intrinsic call: the C expression of its value (already converted
/// to the canonical register type), and the C type to declare it with.
#[derive(Clone, Debug)]
pub struct Call {
    pub expr: String,
    pub ctype: String,
}

pub trait Dialect: Send + Sync {
    /// `x86`, `arm` or `hvx`.
    fn isa(&self) -> &'static str;
    /// The `#include` lines (and a blank line) the intrinsics need.
    fn header(&self) -> &'static str;
    /// The target's registers: each width in bits with its canonical C
    /// type, the table [`Self::reg_type`] reads.
    fn registers(&self) -> &'static [(u32, &'static str)];
    /// Which widths [`Self::registers`] has, as the error for any other
    /// width says it (`NEON has 64 and 128`).
    fn registers_described(&self) -> &'static str;
    /// The canonical C type of a register of `bits`, from
    /// [`Self::registers`]; an error naming the legal widths otherwise.
    fn reg_type(&self, bits: u32) -> Result<String, String> {
        match self.registers().iter().find(|(b, _)| *b == bits) {
            Some((_, ty)) => Ok(ty.to_string()),
            None => Err(format!("a {bits}-bit register ({})", self.registers_described())),
        }
    }
    /// The C type of a mask register of `lanes` one-bit lanes (AVX-512's
    /// k registers); an error where the target has none.
    fn mask_type(&self, lanes: u32) -> Result<String, String> {
        Err(format!("a mask{lanes} operand (no mask registers here)"))
    }
    /// An unaligned load of a register of `bits` from the C pointer
    /// expression `ptr` (any pointer type, a parenthesized expression or a
    /// name): (the C expression, the intrinsic's name, for counting).
    fn load(&self, bits: u32, ptr: &str) -> Result<(String, String), String>;
    /// An unaligned store of register `reg` of `bits` to `ptr`: (the C
    /// statement, with its `;`, the intrinsic's name).
    fn store(&self, bits: u32, ptr: &str, reg: &str) -> Result<(String, String), String>;
    /// The C type a scalar of `bits` is cast to as a splat's or an
    /// intrinsic's scalar operand.
    fn scalar_type(&self, bits: u32) -> Result<&'static str, String>;
    /// A register of `bits` whose `elem`-bit lanes all hold `arg` (a C
    /// expression already cast by [`Self::scalar_type`]): (expression, name).
    fn splat(&self, bits: u32, elem: u32, arg: &str) -> Result<(String, String), String>;
    /// The C type a register of `bits` whose lanes are `elem`-bit integers
    /// is best kept in across statements, and the functions converting it
    /// to and from the canonical type: (type, to canonical, from
    /// canonical); `None` where the canonical type is the one (x86, HVX).
    fn typed_reg(&self, _bits: u32, _signed: bool, _elem: u32) -> Option<(String, String, String)> {
        None
    }
    /// The register that splits into two halves and is joined from them,
    /// one intrinsic each, from which [`Self::half`] and [`Self::join`]
    /// follow; `None` where there is none (x86 writes its own `half`).
    fn register_pair(&self) -> Option<RegisterPair> {
        None
    }
    /// The low (`hi` false) or high half of register `reg` of `bits`, if
    /// the dialect does that in one instruction: (expression, name).
    fn half(&self, bits: u32, reg: &str, hi: bool) -> Option<(String, String)> {
        let pair = self.register_pair().filter(|p| p.bits == bits)?;
        let f = if hi { pair.hi_half } else { pair.lo_half };
        Some((format!("{f}({reg})"), f.to_string()))
    }
    /// The register of `2 * bits` whose low half is `lo` and high half
    /// `hi`, if the dialect forms it in one instruction (HVX
    /// `vcombine`, NEON `vcombine`): (expression, name). The inverse of
    /// [`Self::half`]; x86 has none here (no proved rule justifies a
    /// `vinserti128` yet), so a concat feeding a wider register falls back.
    fn join(&self, bits: u32, lo: &str, hi: &str) -> Option<(String, String)> {
        let pair = self.register_pair().filter(|p| p.bits == 2 * bits)?;
        let (first, second) = if pair.combine_hi_first { (hi, lo) } else { (lo, hi) };
        let f = pair.combine;
        Some((format!("{f}({first}, {second})"), f.to_string()))
    }
    /// Whether operand `k` of intrinsic `name` (`None`: its result), `bits`
    /// wide in its spec, is a vector register (else a C scalar).
    fn register_operand(&self, name: &str, k: Option<usize>, bits: u32) -> bool;
    /// A call of intrinsic `name` on `args`, its spec's operand types
    /// `params` and result type `ret`.
    fn call(&self, name: &str, args: &[Arg], params: &[Ty], ret: Ret) -> Result<Call, String>;
}

/// A register made of two halves, as the intrinsics that split and join it
/// name them (NEON: a Q register of two D registers; HVX: a vector pair).
#[derive(Clone, Copy, Debug)]
pub struct RegisterPair {
    /// The width of the whole register.
    pub bits: u32,
    /// The intrinsic giving the low half of a whole register.
    pub lo_half: &'static str,
    /// The intrinsic giving the high half of a whole register.
    pub hi_half: &'static str,
    /// The intrinsic forming a whole register from its two halves.
    pub combine: &'static str,
    /// Whether `combine` takes the high half first (HVX's header order).
    pub combine_hi_first: bool,
}

/// `<stdint.h>`'s unsigned type of `bits`: the scalar operand type of ARM's
/// and HVX's intrinsics (their splats repeat its bits, no sign spill).
pub(crate) fn unsigned_scalar_type(bits: u32) -> Result<&'static str, String> {
    Ok(match bits {
        8 => "uint8_t",
        16 => "uint16_t",
        32 => "uint32_t",
        64 => "uint64_t",
        _ => return Err(format!("a {bits}-bit scalar")),
    })
}

/// The dialect of an ISA, with its narrowest widest register (x86: AVX2).
pub fn for_isa(isa: &str) -> Result<Box<dyn Dialect>, String> {
    for_registers(isa, None)
}

/// The dialect of an ISA whose widest register is `register_bits` (x86:
/// 512 with AVX-512F, see `CpuFeatures::register_bits`; `None` is the
/// ISA's default).
pub fn for_registers(isa: &str, register_bits: Option<i64>) -> Result<Box<dyn Dialect>, String> {
    use misaal_targets::Dialect as D;
    match misaal_targets::by_name(isa).map(|desc| desc.dialect) {
        Some(D::X86Intrinsics) => Ok(Box::new(X86 { zmm: register_bits == Some(512) })),
        Some(D::NeonIntrinsics) => Ok(Box::new(arm::Arm::new()?)),
        Some(D::HvxIntrinsics) => Ok(Box::new(hvx::Hvx)),
        Some(D::None) | None => Err(format!("no C dialect for ISA `{isa}`")),
    }
}

/// x86: `__m128i`/`__m256i` with AVX2, and `__m512i` and the `__mmask*`
/// k registers with AVX-512 (`zmm`); `_mm*` intrinsics from `immintrin.h`.
pub struct X86 {
    /// AVX-512: 512-bit registers and mask registers.
    pub zmm: bool,
}

impl X86 {
    fn prefix(bits: u32) -> &'static str {
        match bits {
            128 => "_mm",
            512 => "_mm512",
            _ => "_mm256",
        }
    }
    /// The `set1` suffix for `bits`-bit elements in a register of `reg` bits
    /// (AVX-512's 64-bit set1 has no `x`).
    fn set1_suffix(bits: u32, reg: u32) -> Result<&'static str, String> {
        Ok(match bits {
            8 => "epi8",
            16 => "epi16",
            32 => "epi32",
            64 if reg == 512 => "epi64",
            64 => "epi64x",
            _ => return Err(format!("a {bits}-bit element in a register")),
        })
    }
}

impl Dialect for X86 {
    fn isa(&self) -> &'static str {
        "x86"
    }
    fn header(&self) -> &'static str {
        if self.zmm {
            // Compiled natively with immintrin.h, or against SIMDe's portable
            // AVX-512 on a CPU without it (the bench's `-DMISAAL_SIMDE
            // -DSIMDE_ENABLE_NATIVE_ALIASES`), so the same C checks anywhere.
            "#if defined(MISAAL_SIMDE)\n#include <simde/x86/avx512.h>\n#else\n#include <immintrin.h>\n#endif\n\n"
        } else {
            "#include <immintrin.h>\n\n"
        }
    }
    fn registers(&self) -> &'static [(u32, &'static str)] {
        // 64 bits: a GPR (the scalar operand of movq, `_mm_cvtsi64_si128`),
        // so gcc folds its load into the instruction reading it.
        const AVX2: &[(u32, &str)] = &[(64, "long long"), (128, "__m128i"), (256, "__m256i")];
        const AVX512: &[(u32, &str)] = &[(64, "long long"), (128, "__m128i"), (256, "__m256i"), (512, "__m512i")];
        if self.zmm { AVX512 } else { AVX2 }
    }
    fn registers_described(&self) -> &'static str {
        if self.zmm { "AVX-512 has 128, 256 and 512" } else { "AVX2 has 128 and 256" }
    }
    fn mask_type(&self, lanes: u32) -> Result<String, String> {
        match lanes {
            _ if !self.zmm => Err(format!("a mask{lanes} operand (no AVX-512 here)")),
            1..=8 => Ok("__mmask8".into()),
            16 | 32 | 64 => Ok(format!("__mmask{lanes}")),
            n => Err(format!("a mask of {n} lanes")),
        }
    }
    fn load(&self, bits: u32, ptr: &str) -> Result<(String, String), String> {
        if bits == 64 {
            // An unaligned, alias-safe 64-bit load (one `mov`, or folded).
            let f = "_mm_loadl_epi64";
            return Ok((format!("_mm_cvtsi128_si64({f}((const __m128i *){ptr}))"), f.into()));
        }
        let (rt, f) = (self.reg_type(bits)?, format!("{}_loadu_si{bits}", Self::prefix(bits)));
        Ok((format!("{f}((const {rt} *){ptr})"), f))
    }
    fn store(&self, bits: u32, ptr: &str, reg: &str) -> Result<(String, String), String> {
        if bits == 64 {
            let f = "_mm_storel_epi64";
            return Ok((format!("{f}((__m128i *){ptr}, _mm_cvtsi64_si128({reg}));"), f.into()));
        }
        let (rt, f) = (self.reg_type(bits)?, format!("{}_storeu_si{bits}", Self::prefix(bits)));
        Ok((format!("{f}(({rt} *){ptr}, {reg});"), f))
    }
    fn scalar_type(&self, bits: u32) -> Result<&'static str, String> {
        Ok(match bits {
            8 => "char",
            16 => "short",
            32 => "int",
            64 => "long long",
            _ => return Err(format!("a {bits}-bit element in a register")),
        })
    }
    fn splat(&self, bits: u32, elem: u32, arg: &str) -> Result<(String, String), String> {
        self.reg_type(bits)?;
        if bits == 64 {
            // A 64-bit vector lives in a GPR (`long long`): the low half of
            // a 128-bit splat, not a 256-bit one assigned to an integer.
            let f = format!("_mm_set1_{}", Self::set1_suffix(elem, 128)?);
            return Ok((format!("_mm_cvtsi128_si64({f}({arg}))"), f));
        }
        let f = format!("{}_set1_{}", Self::prefix(bits), Self::set1_suffix(elem, bits)?);
        Ok((format!("{f}({arg})"), f))
    }
    fn half(&self, bits: u32, reg: &str, hi: bool) -> Option<(String, String)> {
        // vextracti128 and vextracti64x4, as the proved rules
        // x86.extract-lo128 / x86.extract-hi128 (and their 512-bit
        // counterparts) lower that slice.
        match bits {
            256 => Some((format!("_mm256_extracti128_si256({reg}, {})", hi as u32), "_mm256_extracti128_si256".to_string())),
            512 if self.zmm => Some((format!("_mm512_extracti64x4_epi64({reg}, {})", hi as u32), "_mm512_extracti64x4_epi64".to_string())),
            _ => None,
        }
    }
    fn register_operand(&self, _name: &str, _k: Option<usize>, bits: u32) -> bool {
        bits > 64
    }
    fn call(&self, name: &str, args: &[Arg], _params: &[Ty], ret: Ret) -> Result<Call, String> {
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                Ok(match a {
                    Arg::Reg(r, _) | Arg::Mask(r, _) => r.clone(),
                    Arg::Scalar { expr, bits } => format!("({})({expr})", self.scalar_type(*bits)?),
                    Arg::ScalarConst { value, bits } => format!("({}){value}LL", self.scalar_type(*bits)?),
                    Arg::Imm(v) => format!("{v}"),
                })
            })
            .collect::<Result<_, String>>()?;
        let ctype = match ret {
            Ret::Scalar(bits) => self.scalar_type(bits)?.to_string(),
            Ret::Reg(bits) => self.reg_type(bits)?,
            Ret::Mask(lanes) => self.mask_type(lanes)?,
        };
        Ok(Call { expr: format!("{name}({})", args.join(", ")), ctype })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_registers_and_the_error_for_other_widths() {
        let (avx2, avx512) = (X86 { zmm: false }, X86 { zmm: true });
        for d in [&avx2, &avx512] {
            assert_eq!(d.reg_type(64).unwrap(), "long long");
            assert_eq!(d.reg_type(128).unwrap(), "__m128i");
            assert_eq!(d.reg_type(256).unwrap(), "__m256i");
        }
        assert_eq!(avx512.reg_type(512).unwrap(), "__m512i");
        assert_eq!(avx2.reg_type(512).unwrap_err(), "a 512-bit register (AVX2 has 128 and 256)");
        assert_eq!(avx512.reg_type(1024).unwrap_err(), "a 1024-bit register (AVX-512 has 128, 256 and 512)");
    }
}
