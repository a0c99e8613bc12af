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
pub mod runner;
pub mod swizzle_rules;
pub mod target;

/// Z3's resource limit per synthesis query. Synthesis writes a rule only
/// when its instances are proved, so a wall-clock budget made the ruleset
/// depend on the machine's load: a loaded CI run dropped a multiply-high
/// rule that a quiet run kept. Z3's own work units give the same verdict
/// on every machine; 50 million is several times what the hardest proved
/// rules of x86.egg need (`x86.mulhrs`: between 1 and 10 million).
pub const SYNTH_RLIMIT: u32 = 50_000_000;
