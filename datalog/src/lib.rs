//! Datalog fixpoints (ascent) over facts exported from unrolled semantics:
//! constant extraction, similarity classes (AutoLLVM ops) with their
//! parameter tables, `BvSlices`, `UniqueLanes`, reduction factors and
//! swizzle access patterns.
//!
//! Owns: lane templates, shapes, classes and lane facts. Knows nothing of
//! Z3, oracles, rulesets, Halide or code generation: membership checks live
//! in `misaal-verifier`.

pub mod baseline;
pub mod classes;
pub mod lanes;
pub mod relevance;
pub mod swizzles;
pub mod shape;
pub mod template;
pub mod widths;

pub use baseline::{Baseline, FamilyComparison, compare};
pub use classes::{Class, ClassSet, Member, classify, classify_pairs, instantiate};
pub use lanes::{LaneFacts, analyze};
pub use relevance::{Relevance, RelevanceKind, budget_cuts, relevance};
pub use swizzles::{Swizzle, discover as discover_swizzles};
