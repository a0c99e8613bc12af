//! The online path today: a C backend that emits a whole Halide Stmt as C
//! with Halide's AOT ABI, lowering every vector op lane by lane (no
//! instruction selection yet), and the benchmark manifest format.
//!
//! Owns: code generation and the suite manifest. Reads Stmt and op meaning
//! from `misaal-frontends`. Instruction selection by egglog over the
//! verified rulesets (read through `misaal-rulesets`) is being built in
//! [`isel`]: encoding, proved rules, saturation and DAG-cost extraction, not
//! yet wired into the emitted C.

pub mod c;
pub mod isel;
pub mod manifest;
