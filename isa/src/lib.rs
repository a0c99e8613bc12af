//! The semantics language and the meaning of every target instruction.
//!
//! Owns: the lexer, parser, AST and checker of `.sema` files, the unroller to
//! per-lane bit-vector DAGs, the concrete evaluator, and the spec files under
//! `specs/<target>/`. Knows nothing of oracles, Z3, Datalog or Halide; those
//! consume [`Semantics`].

pub mod ast;
pub mod bitvec;
pub mod dag;
pub mod diag;
pub mod eval;
pub mod lexer;
pub mod library;
pub mod parser;
pub mod sema;

pub use ast::{Instr, Ty};
pub use bitvec::BitVec;
pub use diag::{Diagnostic, Diagnostics};
pub use library::SpecLibrary;
pub use sema::{Lane, Semantics};

/// The specs shipped with misaal: `<this crate>/specs/<target>/`.
pub fn bundled_spec_dir(target: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs").join(target)
}
