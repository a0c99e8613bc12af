//! Offline rule synthesis. Built so far: lowering-rule candidates for the
//! swizzles that x86 instructions perform (`swizzle_rules`), from the
//! swizzle discovery in `misaal-datalog`, and the enumeration of Halide and
//! x86 terms matched by fingerprint and proved by the verifier
//! (`enumerate`). Nothing is written as a rule unless the verifier proved
//! it. Abstraction of numeric parameters is to come.

pub mod enumerate;
pub mod swizzle_rules;
