//! Generates two timing kernels per x86 spec from its signature: a latency
//! loop (a dependency chain through the result) and a throughput loop
//! (independent accumulators). Only signatures are read: the specs and
//! their features come from `misaal-x86-build`, as for the oracle's glue.
//!
//! Every kernel is an `unsafe fn(u64)` running that many loop iterations.
//! Between operations an empty `asm!` names the value in a register: it
//! emits no instruction but stops LLVM from folding a chain (`x+y+y` into
//! `x+2y`) or hoisting a loop-invariant operation out of the loop.

use misaal_isa::ast::{Instr, Ty};
use misaal_x86_build::{generate, rust_features};
use std::fmt::Write;
use std::path::Path;

/// Operations per iteration of the long and the short latency loop (one
/// chain); the runner subtracts the short loop's time from the long one's,
/// so the loop's own cost and the fixed overheads cancel (nanoBench's two
/// unroll counts).
const LAT_UNROLL: [usize; 2] = [16, 8];
/// Independent accumulators of a throughput loop, and how often each is
/// updated per iteration in the long and the short loop.
const TPUT_CHAINS: usize = 10;
const TPUT_UNROLL: [usize; 2] = [2, 1];
/// Function name prefixes of the long and the short loops.
const VARIANT: [&str; 2] = ["", "short_"];

/// The Rust type and the `asm!` register class that holds it.
fn rust_ty(ty: Ty) -> Option<(String, &'static str)> {
    Some(match ty {
        Ty::Bv(128) => ("__m128i".into(), "xmm_reg"),
        Ty::Bv(256) => ("__m256i".into(), "ymm_reg"),
        Ty::Bv(512) => ("__m512i".into(), "zmm_reg"),
        Ty::Bv(8) => ("i8".into(), "reg_byte"),
        Ty::Bv(w @ (16 | 32 | 64)) => (format!("i{w}"), "reg"),
        Ty::Mask(w @ (8 | 16 | 32 | 64)) => (format!("__mmask{w}"), "kreg"),
        _ => return None,
    })
}

/// A fixed legal immediate that is not a degenerate case LLVM could fold
/// into another instruction (a shift by 1 becomes an add; a compare
/// predicate 3 is "false").
fn imm_value(name: &str, w: u32) -> u32 {
    if name.contains("ternarylogic") {
        return 0x96; // a three-input xor: every operand matters
    }
    if w <= 3 { 1 } else { 3 }
}

/// A free reinterpretation between vector widths (no instruction).
fn cast(from: u32, to: u32) -> Option<&'static str> {
    Some(match (from, to) {
        (256, 128) => "_mm256_castsi256_si128",
        (128, 256) => "_mm256_castsi128_si256",
        (512, 256) => "_mm512_castsi512_si256",
        (256, 512) => "_mm512_castsi256_si512",
        (512, 128) => "_mm512_castsi512_si128",
        (128, 512) => "_mm512_castsi128_si512",
        _ => return None,
    })
}

/// How the latency loop chains one result into the next operation.
enum Chain {
    /// Through an operand of the result's type.
    Direct(usize),
    /// Through a vector operand of another width, via a free cast.
    Cast(usize, &'static str),
    /// No chain: the result is a scalar or mask and no operand has its type.
    None,
}

/// Intrinsics that Rust's `core::arch` implements with generic SIMD, which
/// LLVM does not turn back into the instruction here (`_mm256_avg_epu8`
/// became vpmovzxbw + vpaddw + vpsrlw + vpand + vpackuswb + vpermq per call,
/// timed at 5.7 cycles): timed through inline assembly of the spec's
/// mnemonic instead. (mnemonic, register class, VEX three-operand form)
fn asm_form(name: &str) -> Option<(&'static str, &'static str, bool)> {
    Some(match name {
        "_mm256_avg_epu8" => ("vpavgb", "ymm_reg", true),
        "_mm256_avg_epu16" => ("vpavgw", "ymm_reg", true),
        "_mm256_mulhi_epu16" => ("vpmulhuw", "ymm_reg", true),
        "_mm_avg_epu8" => ("pavgb", "xmm_reg", false),
        "_mm_avg_epu16" => ("pavgw", "xmm_reg", false),
        _ => return None,
    })
}

/// The inline-assembly stand-in for `name` (see `asm_form`).
fn asm_wrapper(name: &str, ty: &str, attr: &str) -> Option<String> {
    let (mnemonic, reg, vex) = asm_form(name)?;
    let body = if vex {
        format!("core::arch::asm!(\"{mnemonic} {{r}}, {{a}}, {{b}}\", r = lateout({reg}) r, a = in({reg}) a, b = in({reg}) b, options(pure, nomem, nostack, preserves_flags));")
    } else {
        format!("core::arch::asm!(\"{mnemonic} {{a}}, {{b}}\", a = inout({reg}) a => r, b = in({reg}) b, options(pure, nomem, nostack, preserves_flags));")
    };
    Some(format!("{attr}\n#[inline]\n#[allow(non_snake_case)]\nfn asm{name}(a: {ty}, b: {ty}) -> {ty} {{\n    let r: {ty};\n    unsafe {{ {body} }}\n    r\n}}\n"))
}

fn kernels(i: &Instr, v: usize, out: &mut String) -> Result<&'static str, String> {
    let pre = VARIANT[v];
    let (ret, ret_reg) = rust_ty(i.ret).ok_or_else(|| format!("result type {} has no Rust counterpart", i.ret))?;
    let mut ops: Vec<(String, &'static str)> = Vec::new();
    let mut generic = String::new();
    for p in &i.params {
        match p.ty {
            Ty::Imm(w) => {
                if !generic.is_empty() {
                    return Err("more than one immediate".into());
                }
                generic = format!("::<{}>", imm_value(&i.name, w));
                ops.push((String::new(), ""));
            }
            t => ops.push(rust_ty(t).ok_or_else(|| format!("operand type {t} has no Rust counterpart"))?),
        }
    }
    let vars: Vec<usize> = (0..ops.len()).filter(|&k| !ops[k].0.is_empty()).collect();
    if vars.is_empty() {
        return Err("no register operand".into());
    }
    let chain = match vars.iter().find(|&&k| i.params[k].ty == i.ret) {
        Some(&k) => Chain::Direct(k),
        None => match (i.ret, vars.iter().find(|&&k| matches!(i.params[k].ty, Ty::Bv(w) if w >= 128))) {
            (Ty::Bv(r), Some(&k)) => match cast(r, i.params[k].ty.width()) {
                Some(c) => Chain::Cast(k, c),
                None => Chain::None,
            },
            _ => Chain::None,
        },
    };
    let feats = rust_features(i);
    let attr = format!("#[target_feature(enable = \"{}\")]", feats.join(","));
    let name = &i.name;
    // Once per intrinsic (variant 0): its inline-assembly stand-in, if any.
    let callee = match asm_wrapper(name, &rust_ty(i.ret).map(|t| t.0).unwrap_or_default(), &attr) {
        Some(w) => {
            if v == 0 {
                out.push_str(&w);
            }
            format!("asm{name}")
        }
        None => name.clone(),
    };
    // The call with operand `k` replaced by `var`.
    let call = |subst: Option<(usize, &str)>| {
        let args: Vec<String> = vars
            .iter()
            .map(|&k| match subst {
                Some((s, v)) if s == k => v.to_string(),
                _ => format!("o{k}"),
            })
            .collect();
        format!("{callee}{generic}({})", args.join(", "))
    };
    let inputs = |skip: Option<usize>, out: &mut String| {
        for &k in vars.iter().filter(|&&k| Some(k) != skip) {
            let _ = writeln!(out, "    let o{k}: {} = unsafe {{ val({k}) }};", ops[k].0);
        }
    };

    // Latency: one chain of LAT_UNROLL operations per iteration.
    match chain {
        Chain::Direct(k) | Chain::Cast(k, _) => {
            let (ty, reg) = &ops[k];
            let _ = writeln!(out, "{attr}\nunsafe fn {pre}lat_{name}(n: u64) {{");
            inputs(Some(k), out);
            let _ = writeln!(out, "    let mut x: {ty} = unsafe {{ val({k}) }};\n    for _ in 0..n {{");
            // A barrier on the full-width result before a cast, so LLVM
            // cannot narrow the operation to the part the cast keeps.
            let step = match chain {
                Chain::Cast(_, c) => format!("let mut r = {}; bar!({ret_reg}, r); x = {c}(r); bar!({reg}, x);", call(Some((k, "x")))),
                _ => format!("x = {}; bar!({reg}, x);", call(Some((k, "x")))),
            };
            for _ in 0..LAT_UNROLL[v] {
                let _ = writeln!(out, "        {step}");
            }
            let _ = writeln!(out, "    }}\n    black_box(x);\n}}");
        }
        Chain::None => {}
    }

    // Throughput: TPUT_CHAINS independent accumulators through the chained
    // operand, or, with no operand of the result's type, independent
    // operations on operands the barrier makes opaque each time.
    let _ = writeln!(out, "{attr}\nunsafe fn {pre}tput_{name}(n: u64) {{");
    let (k, direct) = match chain {
        Chain::Direct(k) => (k, true),
        Chain::Cast(k, _) => (k, false),
        Chain::None => (vars[0], false),
    };
    let (ty, reg) = &ops[k];
    inputs(Some(k), out);
    for c in 0..TPUT_CHAINS {
        let _ = writeln!(out, "    let mut x{c}: {ty} = unsafe {{ val({}) }};", k + c);
    }
    let _ = writeln!(out, "    for _ in 0..n {{");
    for _ in 0..TPUT_UNROLL[v] {
        for c in 0..TPUT_CHAINS {
            let op = call(Some((k, &format!("x{c}"))));
            let step = if direct {
                format!("x{c} = {op}; bar!({reg}, x{c});")
            } else {
                format!("bar!({reg}, x{c}); let r = {op}; sink!({ret_reg}, r);")
            };
            let _ = writeln!(out, "        {step}");
        }
    }
    let _ = writeln!(out, "    }}");
    for c in 0..TPUT_CHAINS {
        let _ = writeln!(out, "    black_box(x{c});");
    }
    let _ = writeln!(out, "    let _: {ret};");
    let _ = writeln!(out, "}}");
    Ok(match chain {
        Chain::Direct(_) => "Chain::Direct",
        Chain::Cast(..) => "Chain::Cast",
        Chain::None => "Chain::None",
    })
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/x86");
    let (body, table, features) = generate(&dir, "no timing kernels", |i, f, code| {
        let chain = kernels(i, 0, code).and_then(|c| kernels(i, 1, code).map(|_| c))?;
        let lat = if chain == "Chain::None" { "None".to_string() } else { format!("Some([lat_{n}, short_lat_{n}])", n = i.name) };
        Ok(format!("    Kernel {{ name: \"{n}\", features: &[{f}], chain: {chain}, lat: {lat}, tput: [tput_{n}, short_tput_{n}] }},\n", n = i.name))
    });
    let detect = format!("pub(crate) fn detect(feature: &str) -> bool {{\n    match feature {{\n{}        _ => false,\n    }}\n}}\n", features.detect_arms());
    let consts = format!(
        "/// Operations the long latency loop runs per iteration more than the short one.\npub const LAT_EXTRA: u64 = {};\n\
         /// Likewise for the throughput loops.\npub const TPUT_EXTRA: u64 = {};\n\
         /// Operations per iteration of the long latency loop.\npub const LAT_OPS: u64 = {};\n\
         /// Operations per iteration of the long throughput loop.\npub const TPUT_OPS: u64 = {};\n",
        LAT_UNROLL[0] - LAT_UNROLL[1],
        TPUT_CHAINS * (TPUT_UNROLL[0] - TPUT_UNROLL[1]),
        LAT_UNROLL[0],
        TPUT_CHAINS * TPUT_UNROLL[0]
    );
    let src = format!("{consts}{body}\npub static KERNELS: &[Kernel] = &[\n{table}];\n\n{detect}");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("kernels.rs");
    std::fs::write(out, src).expect("write kernels.rs");
}
