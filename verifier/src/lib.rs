//! Verification: oracles for instruction semantics (this CPU for x86; an
//! emulator, batched, for ARM and HVX), quickcheck-driven differential
//! testing against the concrete evaluator, and Z3 proofs.
//!
//! Owns: verdicts. Reads semantics from `misaal-isa`; knows nothing of
//! Halide, egglog or code generation.

pub mod audit;
pub mod differential;
pub mod membership;
pub mod mutation;
pub mod oracle;
pub mod rules;
pub mod silicon;
pub mod smt;

pub use differential::{CaseGen, Counterexample, DiffConfig, Verdict, check_against};
pub use oracle::{Oracle, OracleError};
pub use silicon::X86Silicon;
