//! Front ends: the Halide lowered-Stmt parser, Halide IR and FPIR semantics,
//! a Stmt interpreter used as the reference for generated code, and the
//! benchmark manifest that describes each Halide kernel's arguments
//! ([`manifest`]; the compiler, the bench harness and the fuzz targets all
//! read it here).
//!
//! Owns: source-language meaning. Knows nothing of target instructions.

use std::path::{Path, PathBuf};

pub mod interp;
pub mod manifest;
pub mod stmt;

/// The folder of Halide's op semantics: `<this crate>/halide/`, one generic
/// instruction per Halide IR or FPIR op (`add<S, E, N>`, `widening_mul<S, E,
/// N, S2>`, ...), checked against Halide by `halide/vectors.py`.
pub fn halide_spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("halide")
}

/// Loads and checks every Halide op. Instantiate one with
/// `lib.instantiate("add", &[1, 16, 8])`.
pub fn halide_ops() -> Result<misaal_isa::SpecLibrary, misaal_isa::Diagnostics> {
    misaal_isa::SpecLibrary::load_dir(&halide_spec_dir())
}
