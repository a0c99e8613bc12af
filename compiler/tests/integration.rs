//! The compiler's integration tests (standard harness), as one test binary:
//! each was its own crate, linked separately at opt-level 2 (13 links of a
//! large binary in every CI build); one crate links once. The modules stay
//! in their files (`tests/<name>.rs`, the shared helpers in
//! `tests/common/mod.rs`); a test is `<module>::<test>`, e.g.
//! `cargo test -p misaal-compiler --test integration c_backend::`.
//! `isel_emit.rs` and `arm_kernels.rs` (libtest-mimic, `harness = false`)
//! stay test binaries of their own.

mod common;

mod avx512_emit;
mod bench_kernels;
mod c_backend;
mod c_ops;
mod const_vectors;
mod emit_codegen;
mod halide19_kernels;
mod isel;
mod let_roots;
mod mixed_width_ops;
mod narrow_lanes;
mod widened_ops;
mod odd_lanes;
mod rules_selection;
mod scalar_kernels;
mod target_features;
mod validate;
mod validate_cuts;
