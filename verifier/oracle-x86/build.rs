//! Generates one `core::arch` call per x86 spec from its signature, so the
//! glue for hundreds of intrinsics is never written by hand. Only signatures
//! are read here: a spec with a body error still gets glue, and `isa check`
//! reports the error.

use misaal_isa::ast::{Instr, Ty};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

fn rust_feature(f: &str) -> String {
    // Spec identifiers cannot hold dots: `sse4_1` is Rust's `sse4.1`.
    match f {
        "sse4_1" => "sse4.1".into(),
        "sse4_2" => "sse4.2".into(),
        other => other.into(),
    }
}

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
    let feats: Vec<String> = i.features.iter().map(|f| rust_feature(f)).collect();
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
    println!("cargo:rerun-if-changed={}", dir.display());
    let files = misaal_isa::spec_files(&dir).unwrap_or_default();
    let mut body = String::new();
    let mut table = String::new();
    let mut features = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable spec file");
        let file = match misaal_isa::parser::parse_file(&path.display().to_string(), &text) {
            Ok(f) => f,
            Err(e) => {
                println!("cargo:warning=no oracle glue for {}: {e}", path.display());
                continue;
            }
        };
        for i in file.instrs.iter().filter(|i| i.target == "x86") {
            if !seen.insert(i.name.clone()) {
                continue;
            }
            let mut g = String::new();
            match glue(i, &mut g) {
                Ok(()) => {
                    body.push_str(&g);
                    let feats: Vec<String> = i.features.iter().map(|f| rust_feature(f)).collect();
                    features.extend(feats.iter().cloned());
                    let _ = writeln!(
                        table,
                        "    X86Intrinsic {{ name: \"{}\", features: &[{}], imp: imp_{} }},",
                        i.name,
                        feats.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", "),
                        i.name
                    );
                }
                Err(e) => println!("cargo:warning=no oracle glue for {}: {e}", i.name),
            }
        }
    }
    let mut detect = String::from("pub(crate) fn detect(feature: &str) -> Option<bool> {\n    Some(match feature {\n");
    for f in &features {
        let _ = writeln!(detect, "        \"{f}\" => std::arch::is_x86_feature_detected!(\"{f}\"),");
    }
    detect.push_str("        _ => return None,\n    })\n}\n");
    let src = format!("{body}\npub static INTRINSICS: &[X86Intrinsic] = &[\n{table}];\n\n{detect}");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("glue.rs");
    std::fs::write(out, src).expect("write glue.rs");
}
