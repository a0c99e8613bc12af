//! The HVX oracle's machinery: freestanding C harnesses for the `Q6_*`
//! intrinsics in 128-byte mode, built by clang 19 for
//! `hexagon-unknown-none-elf` (`-mv67 -mhvx -mhvx-length=128B`), linked by
//! `ld.lld-19`, and run under `qemu-hexagon -cpu v67`.
//!
//! No Hexagon libc is needed: the harness brings its own `_start`,
//! `memcpy` and `memset`, and reads cases from standard input and writes
//! results to standard output through `trap0(#1)`, the Linux system call
//! trap qemu's user mode serves. One qemu process runs a whole batch of
//! cases of many specs, as each start-up costs several milliseconds.
//!
//! Owns: finding the tools, reading prototypes (and the HVX version each
//! intrinsic needs) from clang's `hvx_hexagon_protos.h`, generating and
//! caching the harness, the batch wire format. Knows nothing of verdicts;
//! `misaal-verifier` wraps this in its `Oracle` trait.

pub mod harness;
pub mod proto;
pub mod runtime;

pub use harness::{Harness, Problem, Toolchain};

/// This oracle as `misaal-verifier` runs it.
pub const ORACLE: misaal_oracle_qemu::QemuOracle = misaal_oracle_qemu::QemuOracle { name: "hvx", tools: harness::TOOLS, cpu: "-cpu v67 (HVX 128B)", build: harness::build };
