//! The online path: a Halide Stmt compiled to one C translation unit with
//! Halide's AOT ABI.
//!
//! Owns: code generation ([`c`]) and instruction selection ([`isel`]); the
//! suite manifest is read by `misaal_frontends::manifest`. By default the
//! vector code comes from instruction selection by equality saturation in
//! egglog, in process:
//! `isel::encode` (Halide vector expressions as egglog terms),
//! `isel::rules` (the ruleset read through `misaal-rulesets`, instantiated
//! at the kernel's widths, every instance used `proved`), `isel::schedule`
//! (saturation under explicit limits), `isel::extract` (DAG-cost
//! extraction), `c::isel_emit` (the chosen instructions as C intrinsics) and
//! `isel::validate` (translation validation with Z3, `--validate`). What
//! no rule covers, and everything under `misaal compile --naive`, is
//! lowered lane by lane by the C backend.
//!
//! Reads Stmt and op meaning from `misaal-frontends` and x86 semantics and
//! their status from `misaal-isa`. Depends on `misaal-verifier` to prove
//! rule instances not yet in the verdict cache and to compose both sides of
//! translation validation.

pub mod c;
pub mod isel;
