//! Datalog fixpoints (ascent) over facts exported from unrolled semantics:
//! similarity classes, `BvSlices`, `UniqueLanes`, reduction factors, relevance
//! sets and swizzle access patterns.
//!
//! Owns: the fact schemas and the fixpoint programs. Knows nothing of Z3,
//! rulesets, Halide or code generation.
