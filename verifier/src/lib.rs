//! Verification: oracles for instruction semantics (today only this CPU,
//! for x86; the [`oracle::Oracle`] interface takes batches so that an
//! emulator for ARM or HVX can be added later, but none exists yet),
//! quickcheck-driven differential testing against the concrete evaluator,
//! mutants, class membership, Z3 proofs, and rule audits.
//!
//! Owns: verdicts. Reads semantics from `misaal-isa` and rule files through
//! `misaal-rulesets`. A rule audit takes the Halide op library as data (a
//! `SpecLibrary` the caller loads from `misaal-frontends`); this crate does
//! not depend on the front end, and knows nothing of egglog or code
//! generation.

pub mod audit;
pub mod compose;
pub mod differential;
pub mod membership;
pub mod mutation;
pub mod oracle;
pub mod silicon;
pub mod smt;

pub use differential::{CaseGen, Counterexample, DiffConfig, Verdict, check_against};
pub use oracle::{Oracle, OracleError};
pub use silicon::X86Silicon;
