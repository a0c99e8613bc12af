//! Halide's lowered Stmt text, as Halide 21 and Halide 19 print it (`compile_to_lowered_stmt(...,
//! StmtOutputFormat.Text)`), parsed into a typed AST.
//!
//! Stages: [`lexer`] (tokens), [`parser`] (syntax, scoping, and typing as it
//! goes, by the rules in [`infer`]), [`ast`] (the result), [`print`](mod@print)
//! (`Display`, Halide-style text that parses back to the same AST), and
//! [`types`] (Halide types).
//!
//! ```text
//! module name=blur, target=x86-64-linux-avx512-no_runtime
//! external_plus_metadata func blur (input, blur) {
//! let input = (void *)_halide_buffer_get_host((struct halide_buffer_t *)input.buffer)
//! assert(input.type == (uint32)67585, halide_error_bad_type(...))
//! ...
//! for (blur.s0.y, 0, t18) {
//!  blur[ramp(t11, 1, 64) aligned(64, 0)] = (uint16x64)widening_add(input[ramp(t12, 1, 64)], ...)
//! }
//! }
//! ```
//!
//! Types Halide leaves out are inferred: a bare integer is int32, a call or
//! free variable printed without a `(type)` prefix is int32, a load has its
//! buffer's element type (from `allocate`, the `NAME.type` check, a bounds
//! query, [`ParseOptions::buffer_types`], or how the Stmt uses the buffer:
//! see [`parser`]) and its index's lanes, and operators and intrinsics follow Halide's rules. A
//! `(type)` prefix on a literal, variable, call or load states that node's
//! own type (checked against the rules); `T(e)` and `(T)(e)` are casts.
//!
//! Errors are `file:line:col: error: message`. Constructs Halide can print
//! but this module does not model say `unsupported: WHAT at line N`:
//! GPU and `extern` loops, `fork`, `acquire`, `realize`, `prefetch`,
//! custom allocators, `bfloat` types, GPU memory types, a second `module`
//! header, and intrinsics such as `image_load` or `debug_to_file`. A call to
//! a name that is neither a Halide intrinsic nor a runtime/math function
//! (`halide_*`, `_halide_*`, `*_f32`, ...) is an `unknown intrinsic`.
//!
//! A line starting with `#` is a comment (Halide never prints one).
//!
//! Halide 19's Stmt reads the same; it prints a few parentheses and types
//! differently, which [`Module::print_as`] reproduces ([`Dialect`]).
//!
//! Halide 14 to 18 printed a few forms since renamed (`(uint64)reinterpret(x)`,
//! `vector_reduce(Add, x)`, `(halide_buffer_t *)`, ...); the parser reads
//! them as their current forms (`parser/older.rs`, `docs/stmt-releases.md`).
//!
//! `samples/` holds Stmt files from Halide 21 (`samples/gen.py` makes them)
//! that `tests/stmt_corpus.rs` parses and prints back byte for byte, as it
//! does every benchmark Stmt, Halide 21's and Halide 19's.

pub mod ast;
pub mod infer;
pub mod lexer;
pub mod parser;
pub mod print;
pub mod types;

pub use ast::*;
pub use misaal_isa::Diagnostic;
pub use parser::{ParseOptions, buffer_type_arg};
pub use print::Dialect;
pub use types::{HandleName, Type, TypeCode};

/// The parser recurses once per nesting level, at up to ~16 KiB a level in
/// debug builds; it runs on a thread with room for its whole depth limit,
/// whatever the caller's stack.
const PARSE_STACK: usize = 64 << 20;

/// Parses and type-checks one Stmt file; `file` names it in diagnostics.
pub fn parse_module(file: &str, text: &str) -> Result<Module, Diagnostic> {
    parse_module_with(file, text, &ParseOptions::default())
}

/// [`parse_module`], told what `opts` says (buffer element types the Stmt
/// does not give).
pub fn parse_module_with(file: &str, text: &str, opts: &ParseOptions) -> Result<Module, Diagnostic> {
    let run = || lexer::lex(file, text).and_then(|toks| parser::parse_with(file, toks, opts));
    std::thread::scope(|s| match std::thread::Builder::new().stack_size(PARSE_STACK).spawn_scoped(s, run) {
        Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        Err(_) => run(),
    })
}
