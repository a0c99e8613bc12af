//! Offline rule synthesis: class-level enumeration inside relevance sets,
//! fingerprinting at reduced lane counts, Z3 concretization, and parameter
//! abstraction into rulesets.
//!
//! Owns: enumeration and search. Proofs are delegated to `misaal-verifier`;
//! knows nothing of Halide or code generation.
