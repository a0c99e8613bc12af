//! Generates one `core::arch` call per x86 spec from its signature, so the
//! glue for hundreds of intrinsics is never written by hand. The specs and
//! their features come from `misaal-x86-build`, as for the timing kernels.

use misaal_isa::ast::{Instr, Ty};
use misaal_x86_build::{generate, rust_features};
use std::fmt::Write;
use std::path::Path;

fn rust_ty(ty: Ty) -> Option<String> {
    Some(match ty {
        Ty::Bv(128) => "__m128i".into(),
        Ty::Bv(256) => "__m256i".into(),
        Ty::Bv(512) => "__m512i".into(),
        Ty::Bv(w @ (8 | 16 | 32 | 64)) => format!("i{w}"),
        Ty::Mask(w @ (8 | 16 | 32 | 64)) => format!("__mmask{w}"),
        _ => return None,
    })
}

fn glue(i: &Instr, out: &mut String) -> Result<(), String> {
    let ret = rust_ty(i.ret).ok_or_else(|| format!("result type {} has no Rust counterpart", i.ret))?;
    let imms: Vec<usize> = i.params.iter().enumerate().filter(|(_, p)| matches!(p.ty, Ty::Imm(_))).map(|(k, _)| k).collect();
    if imms.len() > 1 {
        return Err("more than one immediate".into());
    }
    let feats = rust_features(i);
    let _ = writeln!(out, "#[target_feature(enable = \"{}\")]", feats.join(","));
    let _ = writeln!(out, "unsafe fn imp_{}(ops: &[&[u8]]) -> Vec<u8> {{", i.name);
    let mut args = Vec::new();
    for (k, p) in i.params.iter().enumerate() {
        if let Ty::Imm(_) = p.ty {
            continue;
        }
        let t = rust_ty(p.ty).ok_or_else(|| format!("operand type {} has no Rust counterpart", p.ty))?;
        let _ = writeln!(out, "    let {}: {t} = unsafe {{ ld(ops[{k}]) }};", p.name);
        args.push(p.name.clone());
    }
    let args = args.join(", ");
    match imms.first() {
        None => {
            let _ = writeln!(out, "    let r: {ret} = {}({args});", i.name);
        }
        Some(&k) => {
            let Ty::Imm(w) = i.params[k].ty else { unreachable!() };
            if w > 8 {
                return Err(format!("immediate of {w} bits (at most 8 are expanded)"));
            }
            let _ = writeln!(out, "    let r: {ret} = match imm(ops[{k}]) {{");
            for v in 0..(1u32 << w) {
                let _ = writeln!(out, "        {v} => {}::<{v}>({args}),", i.name);
            }
            let _ = writeln!(out, "        _ => unreachable!(\"immediate wider than {w} bits\"),\n    }};");
        }
    }
    let _ = writeln!(out, "    unsafe {{ st(&r) }}\n}}");
    Ok(())
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../isa/specs/x86");
    let (body, table, features) = generate(&dir, "no oracle glue", |i, feats, code| {
        glue(i, code)?;
        Ok(format!("    X86Intrinsic {{ name: \"{n}\", features: &[{feats}], imp: imp_{n} }},\n", n = i.name))
    });
    let detect = format!("pub(crate) fn detect(feature: &str) -> Option<bool> {{\n    Some(match feature {{\n{}        _ => return None,\n    }})\n}}\n", features.detect_arms());
    let src = format!("{body}\npub static INTRINSICS: &[X86Intrinsic] = &[\n{table}];\n\n{detect}");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("glue.rs");
    std::fs::write(out, src).expect("write glue.rs");
}
