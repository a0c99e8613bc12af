//! AArch64 NEON (`arm_neon.h`), as ACLE spells it.
//!
//! NEON intrinsics are typed by lane (`int16x8_t`, `uint8x16_t`, ...); the
//! emitter keeps every register as `uint8x16_t` (128 bits) or `uint8x8_t`
//! (64), and each call converts its operands to the types the intrinsic
//! declares and its result back with `vreinterpret{q}_<to>_<from>`, which
//! only relabel a register (no instruction). The declared types are read
//! from the cross compiler's own `arm_neon.h`
//! (`misaal_oracle_arm::proto::parse_header`, as the qemu harness reads
//! them), so no table of ours can drift from the header.

use super::{Arg, Call, Dialect, RegisterPair, Ret};
use misaal_isa::ast::Ty;
use misaal_oracle_arm::proto::{Proto, parse_header};
use std::collections::HashMap;
use std::sync::OnceLock;

const CC: &str = "aarch64-linux-gnu-gcc";

pub struct Arm {
    protos: &'static HashMap<String, Proto>,
}

/// The prototypes of the cross compiler's `arm_neon.h`, read once.
fn protos() -> Result<&'static HashMap<String, Proto>, String> {
    static P: OnceLock<Result<HashMap<String, Proto>, String>> = OnceLock::new();
    P.get_or_init(|| {
        let why = |m: String| format!("compiling for arm reads the intrinsics' C types from {CC}'s arm_neon.h: {m} (scripts/setup.sh installs gcc-aarch64-linux-gnu)");
        let out = std::process::Command::new(CC).arg("-print-file-name=include").output().map_err(|e| why(format!("{CC}: {e}")))?;
        let header = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("arm_neon.h");
        let text = std::fs::read_to_string(&header).map_err(|e| why(format!("{}: {e}", header.display())))?;
        Ok(parse_header(&text))
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl Arm {
    pub fn new() -> Result<Arm, String> {
        Ok(Arm { protos: protos()? })
    }
}

/// The ACLE suffix of a vector C type: `int16x8_t` -> (`s16`, 128 bits).
fn suffix(ty: &str) -> Option<(String, u32)> {
    let t = ty.strip_suffix("_t")?;
    let (kind, rest) = [("uint", "u"), ("int", "s"), ("poly", "p")].iter().find_map(|(p, s)| t.strip_prefix(p).map(|r| (*s, r)))?;
    let (elem, lanes) = rest.split_once('x')?;
    let (elem, lanes): (u32, u32) = (elem.parse().ok()?, lanes.parse().ok()?);
    Some((format!("{kind}{elem}"), elem * lanes))
}

fn q(bits: u32) -> &'static str {
    if bits == 128 { "q" } else { "" }
}

impl Dialect for Arm {
    fn isa(&self) -> &'static str {
        "arm"
    }
    fn header(&self) -> &'static str {
        "#include <arm_neon.h>\n\n"
    }
    fn registers(&self) -> &'static [(u32, &'static str)] {
        &[(64, "uint8x8_t"), (128, "uint8x16_t")]
    }
    fn registers_described(&self) -> &'static str {
        "NEON has 64 and 128"
    }
    fn load(&self, bits: u32, ptr: &str) -> Result<(String, String), String> {
        self.reg_type(bits)?;
        let f = format!("vld1{}_u8", q(bits));
        Ok((format!("{f}((const uint8_t *){ptr})"), f))
    }
    fn store(&self, bits: u32, ptr: &str, reg: &str) -> Result<(String, String), String> {
        self.reg_type(bits)?;
        let f = format!("vst1{}_u8", q(bits));
        Ok((format!("{f}((uint8_t *){ptr}, {reg});"), f))
    }
    fn scalar_type(&self, bits: u32) -> Result<&'static str, String> {
        super::unsigned_scalar_type(bits)
    }
    fn splat(&self, bits: u32, elem: u32, arg: &str) -> Result<(String, String), String> {
        self.reg_type(bits)?;
        self.scalar_type(elem)?;
        let f = format!("vdup{}_n_u{elem}", q(bits));
        let e = if elem == 8 { format!("{f}({arg})") } else { format!("vreinterpret{}_u8_u{elem}({f}({arg}))", q(bits)) };
        Ok((e, f))
    }
    fn typed_reg(&self, bits: u32, signed: bool, elem: u32) -> Option<(String, String, String)> {
        // GCC gives `uint8x16_t` and `int32x4_t` different modes and does
        // not coalesce a loop-carried `uint8x16_t` with the `int32x4_t` adds
        // that update it: one `mov` per accumulator per iteration.
        self.reg_type(bits).ok()?;
        if !matches!(elem, 8 | 16 | 32 | 64) || (elem == 8 && !signed) {
            return None;
        }
        let (s, q) = (format!("{}{elem}", if signed { "s" } else { "u" }), q(bits));
        let ty = format!("{}int{elem}x{}_t", if signed { "" } else { "u" }, bits / elem);
        Some((ty, format!("vreinterpret{q}_u8_{s}"), format!("vreinterpret{q}_{s}_u8")))
    }
    fn register_pair(&self) -> Option<RegisterPair> {
        // A Q register is two D registers: its low half is the D register
        // itself, its high half one DUP.
        Some(RegisterPair {
            bits: 128,
            lo_half: "vget_low_u8",
            hi_half: "vget_high_u8",
            combine: "vcombine_u8",
            combine_hi_first: false,
        })
    }
    fn register_operand(&self, name: &str, k: Option<usize>, bits: u32) -> bool {
        // A D register and a 64-bit scalar are both 64 bits: the header says which.
        let p = self.protos.get(name);
        let ty = match k {
            None => p.map(|p| p.ret.as_str()),
            Some(k) => p.and_then(|p| p.params.get(k)).map(|(t, _)| t.as_str()),
        };
        match ty {
            Some(t) => suffix(t).is_some(),
            None => bits > 64,
        }
    }
    fn call(&self, name: &str, args: &[Arg], params: &[Ty], ret: Ret) -> Result<Call, String> {
        let p = self.protos.get(name).ok_or_else(|| format!("`{name}` is not in this arm_neon.h"))?;
        if p.params.len() != args.len() || params.len() != args.len() {
            return Err(format!("`{name}` takes {} operand(s) in arm_neon.h, the DAG gives {}", p.params.len(), args.len()));
        }
        let mut out = Vec::new();
        for (a, (cty, _)) in args.iter().zip(&p.params) {
            out.push(match a {
                Arg::Reg(r, bits) => match suffix(cty) {
                    Some((s, b)) if b == *bits => {
                        if s == "u8" {
                            r.clone()
                        } else {
                            format!("vreinterpret{}_{s}_u8({r})", q(b))
                        }
                    }
                    _ => return Err(format!("`{name}` takes {cty} where the DAG gives a {bits}-bit register")),
                },
                Arg::Scalar { expr, .. } => format!("({cty})({expr})"),
                Arg::ScalarConst { value, .. } => format!("({cty}){value}LL"),
                Arg::Imm(v) => format!("{v}"),
                Arg::Mask(..) => return Err(format!("`{name}`: a mask operand (NEON has no mask registers)")),
            });
        }
        let call = format!("{name}({})", out.join(", "));
        match ret {
            Ret::Reg(bits) => match suffix(&p.ret) {
                Some((s, b)) if b == bits => {
                    let expr = if s == "u8" { call } else { format!("vreinterpret{}_u8_{s}({call})", q(b)) };
                    Ok(Call { expr, ctype: self.reg_type(bits)? })
                }
                _ => Err(format!("`{name}` returns {} where its spec returns {bits} bits", p.ret)),
            },
            Ret::Scalar(_) => Ok(Call { expr: call, ctype: p.ret.clone() }),
            Ret::Mask(_) => Err(format!("`{name}` returns a mask (NEON has no mask registers)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        assert_eq!(suffix("int16x8_t"), Some(("s16".into(), 128)));
        assert_eq!(suffix("uint8x8_t"), Some(("u8".into(), 64)));
        assert_eq!(suffix("poly8x16_t"), Some(("p8".into(), 128)));
        assert_eq!(suffix("int32_t"), None);
    }

    #[test]
    fn registers_and_the_error_for_other_widths() {
        // No prototypes needed: the register table is the dialect's own.
        let arm = Arm { protos: Box::leak(Box::default()) };
        assert_eq!(arm.reg_type(64).unwrap(), "uint8x8_t");
        assert_eq!(arm.reg_type(128).unwrap(), "uint8x16_t");
        assert_eq!(arm.reg_type(256).unwrap_err(), "a 256-bit register (NEON has 64 and 128)");
    }

    #[test]
    fn typed_registers_take_the_lane_type() {
        let arm = Arm { protos: Box::leak(Box::default()) };
        let t = |bits, signed, elem| arm.typed_reg(bits, signed, elem);
        assert_eq!(t(128, true, 32), Some(("int32x4_t".into(), "vreinterpretq_u8_s32".into(), "vreinterpretq_s32_u8".into())));
        assert_eq!(t(64, false, 16), Some(("uint16x4_t".into(), "vreinterpret_u8_u16".into(), "vreinterpret_u16_u8".into())));
        // uint8 lanes are the canonical type itself; no 256-bit register.
        assert_eq!(t(128, false, 8), None);
        assert_eq!(t(256, true, 32), None);
    }
}
