//! Verification: oracles for instruction semantics (this CPU for x86,
//! qemu-aarch64 for ARM NEON and qemu-hexagon for HVX; the [`oracle::Oracle`] interface takes
//! batches, since an emulator pays per process),
//! quickcheck-driven differential testing against the concrete evaluator,
//! mutants, class membership, Z3 proofs, and rule audits.
//!
//! Owns: verdicts. Reads semantics from `misaal-isa` and rule files through
//! `misaal-rulesets`. A rule audit takes the Halide op library as data (a
//! `SpecLibrary` the caller loads from `misaal-frontends`); this crate does
//! not depend on the front end, and knows nothing of egglog or code
//! generation.

pub mod ac;
pub mod audit;
pub mod compose;
pub mod differential;
pub mod emulated;
pub mod emulated_checks;
pub mod integers;
pub mod membership;
pub mod mutation;
pub mod oracle;
pub mod prekey;
mod products;
mod digits;
pub mod silicon;
pub mod smt;
pub mod twin;
pub mod verdicts;

pub use emulated::{ArmQemu, HvxQemu};
pub use differential::{CaseGen, Counterexample, DiffConfig, Verdict, cases_for, check_against};
pub use oracle::{Oracle, OracleError};
pub use silicon::X86Silicon;
