//! Offline rule synthesis. Built so far: lowering-rule candidates for the
//! swizzles that x86 instructions perform (`swizzle_rules`), from the
//! swizzle discovery in `misaal-datalog`. Proofs are the verifier's job (the
//! CLI audits every candidate and keeps only those proved at every width).
//! Class-level enumeration, fingerprinting and abstraction are to come.

pub mod swizzle_rules;
