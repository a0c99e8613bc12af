//! The ARM oracle's machinery: a C harness for NEON intrinsics, built with
//! the cross compiler and run under `qemu-aarch64 -cpu max`.
//!
//! One harness binary holds every spec it was built for; one qemu process
//! runs a whole batch of cases of many specs (read from standard input), as
//! each start-up costs about 10 ms. The harness depends only on the specs'
//! names and signatures, not their bodies, so a mutant reuses its original's.
//!
//! Owns: finding the tools, reading prototypes from `arm_neon.h`, generating
//! and caching the harness, the batch wire format. Knows nothing of
//! verdicts; `misaal-verifier` wraps this in its `Oracle` trait.

pub mod harness;
pub mod proto;

pub use harness::{Harness, Problem, Toolchain};

/// This oracle as `misaal-verifier` runs it.
pub const ORACLE: misaal_oracle_qemu::QemuOracle = misaal_oracle_qemu::QemuOracle { name: "arm", tools: harness::TOOLS, cpu: "-cpu max", build: harness::build };
