//! The entry points of the fuzz targets, one per input format. Each takes
//! the raw bytes a user could hand us and runs the same code a real load
//! runs; bad input must come back as an error, never a panic.
//!
//! `tests/fuzz_regressions.rs` in the main workspace depends on this crate
//! (without its `libfuzzer` feature) and replays `fuzz/regressions/<target>/*` through these functions, so
//! a crash the fuzzer found stays fixed under a plain `cargo test`.
//!
//! Every function returns `Err(message)` for input that is rightly rejected
//! and `Ok(())` for input that loads; the fuzz targets ignore which.

use std::fmt::Write as _;

/// `.sema`: parse, check and unroll (`SpecLibrary::from_sources`), then
/// instantiate every generic instruction at two sizes and evaluate every
/// unrolled instruction on all-zero and all-one operands.
pub fn sema(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let lib = misaal_isa::SpecLibrary::from_sources(&[("fuzz.sema".to_string(), text.to_string())]).map_err(|d| d.to_string())?;
    let mut sems = Vec::new();
    for (_, s) in lib.iter() {
        sems.push(s.clone());
    }
    let mut errors = String::new();
    for name in lib.generic_names() {
        let n = lib.generic(name).map_or(0, |g| g.generics.len());
        for args in [vec![1i128; n], vec![8; n]] {
            match lib.instantiate(name, &args) {
                Ok((_, s)) => sems.push(s),
                Err(d) => {
                    let _ = writeln!(errors, "{d}");
                }
            }
        }
    }
    for s in &sems {
        let widths: Vec<u32> = s.dag.operand_widths().to_vec();
        for fill in [misaal_isa::BitVec::zero, misaal_isa::BitVec::ones] {
            let ops: Vec<misaal_isa::BitVec> = widths.iter().map(|&w| fill(w)).collect();
            s.eval(&ops).map_err(|e| e.to_string())?;
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// `.stmt`: parse and type (`stmt::parse_module`), then print it back.
pub fn stmt(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let module = misaal_frontends::stmt::parse_module("fuzz.stmt", text).map_err(|d| d.to_string())?;
    let mut out = String::new();
    let _ = write!(out, "{module}");
    Ok(())
}

/// The baseline class table CSV (`Baseline::parse`, as `Baseline::load`).
pub fn baseline(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let b = misaal_datalog::baseline::Baseline::parse("fuzz.csv", text)?;
    let _ = (b.len(), b.class_count(), b.class_of("x"));
    Ok(())
}

/// `benchmarks/manifest.json` (`misaal_frontends::manifest::parse_manifest`),
/// then every buffer's element count as the bench harness computes it.
pub fn manifest(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let m = misaal_frontends::manifest::parse_manifest("manifest.json", text).map_err(|e| e.to_string())?;
    for k in &m.kernels {
        for a in &k.args {
            let bytes = a.elements().checked_mul((a.ty.bits as usize).div_ceil(8)).ok_or("buffer size overflows")?;
            let _ = bytes;
        }
    }
    Ok(())
}

/// `.egg` rule files (`misaal_rulesets::parse_rules`), then what loading
/// them for `misaal verify` does before any proof: every instantiation of
/// every rule at the x86 vector widths, and every templated instruction
/// name expanded and checked (here against names that all exist).
pub fn egg(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let rules = misaal_rulesets::parse_rules("fuzz.egg", text).map_err(|d| d.to_string())?;
    let widths = misaal_rulesets::X86_VECTOR_WIDTHS;
    let exists = |_: &str| Ok(());
    misaal_rulesets::check_names(&rules, &widths, &exists, &exists).map_err(|d| d.to_string())?;
    for r in &rules {
        for env in misaal_rulesets::instantiations(r, &widths)? {
            let _ = misaal_rulesets::describe_env(&env);
        }
    }
    Ok(())
}
