//! Offline rule synthesis for x86, ARM NEON and HVX, one pipeline
//! parametrized by a target description (`target`): lowering-rule
//! candidates for the swizzles that instructions perform (`swizzle_rules`),
//! from the swizzle discovery in `misaal-datalog`; the enumeration of
//! Halide and target terms matched by fingerprint and proved by the
//! verifier (`enumerate`); and the
//! abstraction of those proved concrete rules into rules over element
//! width, lane count, vector size and signedness (`abstraction`), with the split rules of lane-local Halide
//! ops (`legalize`); the whole pipeline's checkpoint (`pipeline`). Nothing
//! is written as a rule unless the verifier proved it.

pub mod abstraction;
pub mod enumerate;
pub mod legalize;
pub mod pipeline;
pub mod swizzle_rules;
pub mod target;
