//! The semantics language and the meaning of every target instruction.
//!
//! Owns: the lexer, parser, AST and checker of `.sema` files, the unroller to
//! per-lane bit-vector DAGs, the concrete evaluator, the spec files under
//! `specs/<target>/`, each machine's evidence (`specs/<target>/evidence/`,
//! [`evidence`]) and the status derived from it ([`status`]): which specs
//! met their oracle (`silicon`, `emulator`, `proven-twin`) and so may flow
//! into classes, rules and code. Knows nothing of oracles, Z3, Datalog or
//! Halide; those consume [`Semantics`] and write the evidence.
//!
//! # The language
//!
//! A spec reads like the vendor manual's pseudocode, with every width and
//! every signedness explicit:
//!
//! ```text
//! // comments start with two slashes
//! instr _mm256_madd_epi16(a: bv256, b: bv256) -> bv256 [x86 avx2 vpmaddwd]
//! cost latency 3 throughput 0.5 source "uops.info, Zen 4"
//! FOR j := 0 to 7
//!     i := j*32
//!     dst[i+31:i] := SignExtend32(a[i+31:i+16]) * SignExtend32(b[i+31:i+16]) + SignExtend32(a[i+15:i]) * SignExtend32(b[i+15:i])
//! ENDFOR
//! ```
//!
//! * **Header.** `instr NAME(operands) -> TYPE [TARGET FEATURE(+FEATURE)* MNEMONIC]`.
//!   Operand order is the intrinsic's argument order. Types: `bvN` (a vector
//!   or scalar of N bits), `maskN` (an AVX-512 mask register), `immN` (an
//!   immediate; the x86 oracle tries all 2^N values; `immN in LO to HI`
//!   narrows it to the values the intrinsic accepts), and for HVX `pairN`
//!   (a vector pair: a `bv(2N)` whose halves `x.lo`, `x.hi` are the lo and
//!   hi registers; `dst.lo[h:l] := e` writes into a half) and `predN` (a Q
//!   register: a `maskN`, one bit per byte of the vector). Features are Rust
//!   `target_feature` names with `.` written `_` (`sse4_1`, `avx512bw`,
//!   `avx512vl`, `avxvnni`). The optional `cost` line gives latency and
//!   reciprocal throughput in cycles and where they came from. The body runs
//!   to the next `instr`, `def` or the end of the file. The family of a spec
//!   is its file name.
//! * **Output.** The body writes `dst`, bit slice by bit slice; every bit
//!   exactly once. Each slice written becomes one output lane.
//! * **Values.** Operands and results are bit-vectors. Literals and loop
//!   variables are compile-time integers; next to a bit-vector an integer
//!   takes its width and must fit (negative values are two's complement).
//!   `x := e` binds a local; `t[h:l] := e` writes part of a local (creating
//!   it `h+1` bits wide if new); reading bits never written is an error.
//! * **Slices.** `a[h:l]` (inclusive) and `a[i]` with compile-time bounds are
//!   checked against the width. A run-time slice `a[o+K:o]`, where `o`
//!   depends on operands and `K` is a constant, reads `K+1` bits at bit `o`;
//!   bits past the top read as 0. Write its offset with a width that cannot
//!   overflow, e.g. `ZeroExtend16(b[i+3:i]) * 8`.
//! * **Operators**, loosest first: `c ? x : y`; `OR`; `XOR`; `AND`; `==`
//!   `!=` and comparisons with a signedness (`<s` `<u` `<=s` `<=u` `>s` `>u`
//!   `>=s` `>=u`; the bare `<` `<=` `>` `>=` only compare compile-time
//!   integers); `|`; `^`; `&`; shifts `<<`, `>>u` (logical), `>>s`
//!   (arithmetic); `+` `-`; `*`; unary `-`, `NOT`, `~`. The words combine
//!   conditions; the symbols bind tighter than comparisons (as in Rust), so
//!   `j & 1 == 0` is `(j & 1) == 0`. Both are bitwise on any width. Arithmetic wraps at
//!   the operands' common width; both sides must have the same width.
//!   Comparisons give one bit. A shift amount may have any width and is
//!   unsigned: shifting by the width or more gives 0 (`<<`, `>>u`) or the sign
//!   fill (`>>s`), like the x86 variable shifts. Write other out-of-range
//!   behaviour with an IF, as the manual does.
//! * **Statements.** `FOR v := a to b` / `downto` ... `ENDFOR` (constant
//!   bounds, inclusive); `IF c [THEN] ... [ELSE IF ... | ELSE ...] FI`, where
//!   `c` is one bit or a compile-time integer. When `c` depends on operands,
//!   both branches run and merge with `ite`; both must write the same bits of
//!   `dst`.
//! * **Builtins** (the width is part of the name): `SignExtendN(x)`,
//!   `ZeroExtendN(x)` (N >= width), `TruncateN(x)` (low N bits),
//!   `SaturateSN(x)` (signed input, clamp to the signed N-bit range),
//!   `SaturateUN(x)` (unsigned input, clamp to 0..2^N-1), `SaturateSUN(x)`
//!   (signed input, clamp to 0..2^N-1, as `packus` does), `Concat(hi, .., lo)`.
//! * **Functions.** `def NAME(params) -> TYPE` with a body that ends in
//!   `RETURN e`. Functions are shared by every file of a target's folder.
//! * **Generic instructions** (Halide's ops, for every type and lane count):
//!   `instr add<S, E, N>(a: bv(N*E), b: bv(N*E)) -> bv(N*E) [halide ir add]`.
//!   Generic parameters start with an upper-case letter and are compile-time
//!   integers in the body; `bv(EXPR)` computes a width from them. Builtins
//!   also take the width as an argument: `SignExtend(x, 2*E)`,
//!   `SaturateS(x, E)`. A generic instruction is checked when instantiated
//!   (`Instr::instantiate`, `SpecLibrary::instantiate`).

pub mod ast;
pub mod bitvec;
pub mod dag;
pub mod diag;
pub mod eval;
pub mod evidence;
pub mod generic;
pub mod lexer;
pub mod library;
pub mod parser;
pub mod sema;
pub mod status;

pub use ast::{Instr, Ty};
pub use bitvec::BitVec;
pub use diag::{Diagnostic, Diagnostics};
pub use library::{DIGEST_MEMO_FILE, SpecLibrary, spec_files};
pub use sema::{Lane, Semantics};
pub use status::{SpecStatus, StatusTable};

/// The specs shipped with misaal: `<this crate>/specs/<target>/`.
pub fn bundled_spec_dir(target: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs").join(target)
}
