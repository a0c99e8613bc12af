//! The online path: egglog encoding of Halide IR, the saturation schedule,
//! extraction of the cheapest target term, lowering and C code generation.
//!
//! Owns: compile-time search and emission. Never proves rules itself; it only
//! loads rulesets that `misaal-verifier` has audited.

pub mod c;
pub mod manifest;
