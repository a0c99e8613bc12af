//! Front ends: the Halide lowered-Stmt parser, Halide IR and FPIR semantics,
//! and a Stmt interpreter used as the reference for generated code.
//!
//! Owns: source-language meaning. Knows nothing of target instructions.
