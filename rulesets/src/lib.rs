//! Rule files and rulesets: the egglog subset misaal's rules are written in
//! (s-expression reader, parser, AST), instantiation of numeric variables
//! with default domains, template expansion of instruction names, the check
//! that every name a rule uses exists, and where the bundled rulesets live.
//!
//! Owns: the on-disk rule format. The verifier (which proves rules) and the
//! compiler (which rewrites with them) both read rules through this crate.
//! Knows nothing of how rules are found or proved: no Z3, no egglog.

pub mod ast;
pub mod instantiate;
pub mod names;
pub mod parser;
pub mod sexp;
pub mod target;

pub use ast::{Cond, IntExpr, Rule, Term};
pub use instantiate::{Assignment, TEMPLATE_KEYS, X86_VECTOR_WIDTHS, is_template_key, describe_env, expand_name, instantiations, op_generics};
pub use names::{check_names, check_names_at, closest};
pub use parser::{SOURCE_MARK, file_target, join_sources, parse_rules, read_sources};
pub use target::{ARM, HVX, TARGETS, TargetIsa, X86};
pub use sexp::{Sexp, parse_sexps};

use std::path::PathBuf;

/// `rulesets/<target>.egg` in this repository.
pub fn bundled_ruleset(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("{target}.egg"))
}
