//! The C backend: a lowered Halide module to one C translation unit with
//! the same ABI as Halide's ahead-of-time output.
//!
//! [`emit`] gives `int SYMBOL(struct halide_buffer_t *NAME_buffer, ...,
//! TYPE scalar, ...)` (arguments in the function's order) returning 0, or
//! a negative `halide_error_code_t` when an assert fails, plus a header
//! declaring it. The code includes `HalideRuntime.h` (shipped in the pip
//! `halide` package) for `struct halide_buffer_t`; it needs no Halide
//! runtime library, only a GNU C compiler (statement expressions,
//! `__int128`, `__builtin_*_overflow`).
//!
//! Lowering is naive by design:
//!
//! * Scalars are C scalars (`int8_t` .. `uint64_t`; bools are `uint8_t`
//!   holding 0 or 1; `float`/`double`; handles keep their C spelling).
//! * A vector value is a C array of its lanes, computed by one simple loop
//!   `for (int l = 0; l < N; l++) v[l] = <lane expression>;` in which
//!   element-wise operations are fused. Every vector expression goes
//!   through [`Emitter::lower_vector_expr`], the one seam where an
//!   instruction selector can take over.
//! * Every Halide op is an exact `static inline` helper per element type
//!   (see [`ops`]), following `frontends/halide/*.sema` bit for bit and free
//!   of C undefined behaviour.
//! * Index arithmetic (indices, and the `let`s only indices read) is plain
//!   signed C, as Halide's own code generation treats it ([`emit_addr`]);
//!   a scalar load a loop cannot change is read once before the loop
//!   ([`emit_licm`]).
//! * Statements map one to one: `let` declares a variable, `assert` returns
//!   the error code of its `halide_error_*` message (the message itself is
//!   not printed), loops of every kind run serially, `allocate` uses a
//!   stack array for constant sizes up to 64 KiB and `malloc` otherwise
//!   (freed at `free`, at the end of its scope, and before an error return),
//!   `atomic` runs its body.
//! * The `_halide_buffer_*` accessors read the `halide_buffer_t` fields;
//!   `_halide_buffer_is_bounds_query` is true for a null host and device, and
//!   the bounds-query branch (`_halide_buffer_init` with a `make_struct`
//!   shape) fills in the shape as Halide's runtime does.
//! * Parallel loops: `halide_do_par_for` runs its task serially; the task
//!   (an internal function) becomes a `static` `halide_task_t`, its closure a
//!   `make_struct` compound literal read back with `load_typed_struct_member`.
//! * Floats (32 and 64 bits) are C floats with contraction off;
//!   float-to-integer conversions pin out-of-range values to what the
//!   target's x86 instructions give (AVX-512 for an `avx512` target).
//!
//! Not handled (a [`CompileError`] saying `unsupported: ...`): float16,
//! constant buffers (Halide does not print their contents), float
//! `saturating_cast`, `require`, `div_round_to_zero`, `mod_round_to_zero`,
//! `sorted_avg`, `lerp`, runtime calls other than the buffer accessors,
//! `halide_do_par_for` and float math (`sqrt_f32`, ...), internal functions
//! that are not parallel tasks, several external functions in one module,
//! and reinterpreting bool vectors across lane counts.

mod emit_addr;
mod emit_licm;
#[path = "../isel/emit.rs"]
pub mod isel_emit;
pub mod ops;

pub use isel_emit::IselReport;

use std::collections::{HashMap, HashSet};
use std::fmt;

use misaal_frontends::stmt::ast::*;
use misaal_frontends::stmt::types::{Type, TypeCode};

use ops::{Helpers, IT};

/// A translation unit and the header declaring its function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CProgram {
    pub c: String,
    pub h: String,
}

/// Why a module could not be compiled to C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub message: String,
}

impl CompileError {
    fn unsupported(what: impl fmt::Display) -> Self {
        CompileError { message: format!("unsupported: {what}") }
    }
    fn new(msg: impl Into<String>) -> Self {
        CompileError { message: msg.into() }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CompileError {}

type R<T> = Result<T, CompileError>;

/// Emits the module's non-internal function as the C function `symbol`
/// (internal functions, the tasks of parallel loops, become static helpers).
pub fn emit(module: &Module, symbol: &str) -> Result<CProgram, CompileError> {
    emit_with(module, symbol, &EmitOptions::default()).map(|(p, _)| p)
}

/// Options of [`emit_with`].
#[derive(Clone, Debug, Default)]
pub struct EmitOptions {
    /// Opt-in instruction selection: vector `let`s and stores are lowered
    /// from their selected instruction DAG as native vector C with
    /// intrinsics ([`isel_emit`]); `None` is the naive lowering alone.
    pub isel: Option<crate::isel::Options>,
}

/// [`emit`] with options; with `isel`, also what selection did.
pub fn emit_with(module: &Module, symbol: &str, opts: &EmitOptions) -> Result<(CProgram, Option<IselReport>), CompileError> {
    // Emission recurses once per nesting level; give it room whatever the
    // caller's stack.
    std::thread::scope(|s| match std::thread::Builder::new().stack_size(EMIT_STACK).spawn_scoped(s, || emit_module(module, symbol, opts)) {
        Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        Err(_) => emit_module(module, symbol, opts),
    })
}

const EMIT_STACK: usize = 64 << 20;

fn emit_module(module: &Module, symbol: &str, opts: &EmitOptions) -> Result<(CProgram, Option<IselReport>), CompileError> {
    if symbol.is_empty() || !symbol.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') || symbol.as_bytes()[0].is_ascii_digit() {
        return Err(CompileError::new(format!("`{symbol}` is not a C identifier")));
    }
    if symbol.starts_with("h_") || symbol.starts_with("v_") || symbol == "main" {
        return Err(CompileError::new(format!("`{symbol}` is reserved (the backend's own names start with `h_` and `v_`)")));
    }
    let externals: Vec<&Func> = module.funcs.iter().filter(|f| f.linkage != Linkage::Internal).collect();
    let main = match externals[..] {
        [f] => f,
        [] => return Err(CompileError::new(format!("module `{}` has no external function", module.name))),
        _ => return Err(CompileError::unsupported(format!("{} external functions in one module", externals.len()))),
    };
    if !module.buffers.is_empty() {
        return Err(CompileError::unsupported("constant buffers"));
    }
    let mut g = Globals { avx512: module.target.contains("avx512"), ..Globals::default() };
    if let Some(o) = &opts.isel {
        // Only instructions the module's target has, unless told otherwise.
        let mut o = o.clone();
        if o.features.is_none() {
            o.features = Some(crate::isel::features::CpuFeatures::from_halide_target(&module.target).map_err(CompileError::new)?);
        }
        g.isel = Some(Box::new(isel_emit::State::new(&o)?));
    }
    for f in module.funcs.iter().filter(|f| f.linkage == Linkage::Internal) {
        g.tasks.insert(f.name.clone(), format!("h_task_{}", sanitize(&f.name)));
    }
    let mut bodies = String::new();
    let mut protos = String::new();
    for f in module.funcs.iter().filter(|f| f.linkage == Linkage::Internal) {
        let name = g.tasks[&f.name].clone();
        if let Some(st) = g.isel.as_mut() {
            st.begin(f)?;
        }
        let (proto, text) = Emitter::new(&mut g).task(f, &name)?;
        protos.push_str(&format!("{proto};\n"));
        bodies.push_str(&text);
        bodies.push('\n');
    }
    if let Some(st) = g.isel.as_mut() {
        st.begin(main)?;
    }
    let (proto, text) = Emitter::new(&mut g).external(main, symbol)?;
    bodies.push_str(&text);

    let mut c = String::new();
    c.push_str(&format!("// Generated by misaal-compiler from Halide module `{}` (target {}).\n", module.name, module.target));
    c.push_str("#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include \"HalideRuntime.h\"\n\n");
    let report = g.isel.take().map(|st| st.report);
    if let Some(r) = &report {
        c.insert_str(0, &r.summary().lines().map(|l| format!("// {l}\n")).collect::<String>());
        c.push_str("#include <immintrin.h>\n\n");
        // GCC's predictive commoning (on at -O3) carries the rows a stencil
        // re-reads on the next iteration in registers; with 16 ymm registers
        // they spill, and every spill is a store and a reload per iteration
        // (median3x3 ran at 0.76x of Halide with it, 1.0x without; dilate7x7
        // 0.6x against 0.9x). Halide's LLVM has no such pass.
        c.push_str("#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"no-predictive-commoning\")\n#endif\n\n");
        // GCC on x86 does not schedule before register allocation, and its
        // reassociation sinks each add chain to its root, past the loads of
        // the next register's taps: the loads of a whole 64-lane row are
        // then live at once and spill (blur7x7's sum_x loop: 15 ymm stores
        // and reloads per iteration against Halide's none). Scheduling with
        // register pressure in mind (as LLVM's scheduler does for Halide)
        // interleaves them again: 62 instructions and no spill.
        c.push_str("#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"schedule-insns\", \"sched-pressure\")\n#endif\n\n");
        // GCC's scalar replacement of aggregates turns an accumulator tile
        // (matmul's `acc`, 32 ymm registers' worth, read and written only
        // at constant offsets) into 32 loop-carried values; with 16 ymm
        // registers the allocator then stores each twice per iteration (49
        // vector stores per k step of matmul_b2 against Halide's 28, bound
        // by one 256-bit store a cycle). Left in memory it is 32 stores:
        // matmul_b2 0.64x -> 1.0x of Halide, matmul_b4 0.77x -> 1.15x. Only
        // for such tiles: SRA of the lane arrays in stencils helps them
        // (blur5x5 0.84x of its speed without it).
        if module.funcs.iter().any(|f| has_register_tile(&f.body)) {
            c.push_str("#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"no-tree-sra\")\n#endif\n\n");
        }
    }
    let mut floats = false;
    for f in &module.funcs {
        f.body.visit_exprs(&mut |e| floats |= e.ty.is_float());
    }
    if floats {
        // Halide does not fuse float multiplies and adds; GCC does by default.
        c.push_str("#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#elif defined(__GNUC__)\n#pragma GCC optimize(\"fp-contract=off\")\n#endif\n\n");
    }
    for (fields, name) in &g.structs {
        c.push_str(&format!("struct {name} {{"));
        for (i, f) in fields.iter().enumerate() {
            c.push_str(&format!(" {f} f{i};"));
        }
        c.push_str(" };\n");
    }
    c.push_str(&g.helpers.text());
    c.push('\n');
    c.push_str(&protos);
    c.push_str(&format!("{proto};\n\n"));
    c.push_str(&bodies);

    let guard = format!("MISAAL_{}_H", symbol.to_ascii_uppercase());
    let h = format!(
        "// Generated by misaal-compiler from Halide module `{}`.\n#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n#include <stdbool.h>\n#include \"HalideRuntime.h\"\n\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n{proto};\n\n#ifdef __cplusplus\n}}  // extern \"C\"\n#endif\n\n#endif\n",
        module.name
    );
    Ok((CProgram { c, h }, report))
}

/// Shared by every function of the translation unit.
#[derive(Default)]
struct Globals {
    helpers: Helpers,
    /// Struct types for `make_struct`, by field C types.
    structs: Vec<(Vec<String>, String)>,
    /// Internal function name -> C name.
    tasks: HashMap<String, String>,
    /// The target has AVX-512 (float to unsigned conversions differ).
    avx512: bool,
    /// Instruction selection, when asked for.
    isel: Option<Box<isel_emit::State>>,
}

impl Globals {
    fn struct_name(&mut self, fields: Vec<String>) -> String {
        if let Some((_, n)) = self.structs.iter().find(|(f, _)| *f == fields) {
            return n.clone();
        }
        let n = format!("h_struct_{}", self.structs.len());
        self.structs.push((fields, n.clone()));
        n
    }
}

/// A name in scope.
#[derive(Clone, Debug)]
struct Binding {
    name: String,
    /// The C variable; for a vector, the C array of its lanes.
    cname: String,
    ty: Type,
    /// Field types, for a pointer made by `make_struct`.
    fields: Option<Vec<Type>>,
    /// A `malloc`ed allocation (freed by `free` or at the end of its scope).
    heap: bool,
}

/// Largest constant allocation put on the stack.
const STACK_LIMIT: u64 = 64 * 1024;

/// Emits one function.
pub struct Emitter<'g> {
    g: &'g mut Globals,
    out: String,
    indent: usize,
    scope: Vec<Binding>,
    counter: usize,
    /// Emitting an index: signed 32- and 64-bit scalar `+ - *` are plain C
    /// (see [`emit_addr`]).
    addr: bool,
    /// The function's `let`s that only feed indices ([`emit_addr::address_lets`]).
    addr_lets: HashSet<String>,
    /// Loads read before an enclosing loop: (key, C variable), innermost
    /// last ([`emit_licm`]).
    invariant: Vec<(String, String)>,
}

fn sanitize(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    s.trim_start_matches('_').to_string()
}

/// The C type of one element of `t` (bools are bytes).
fn ctype(t: Type) -> R<String> {
    Ok(match t.code {
        TypeCode::Int => format!("int{}_t", t.bits),
        TypeCode::UInt => format!("uint{}_t", t.bits),
        TypeCode::Bool => "uint8_t".into(),
        TypeCode::Float if t.bits == 32 => "float".into(),
        TypeCode::Float if t.bits == 64 => "double".into(),
        TypeCode::Float => return Err(CompileError::unsupported(format!("float{}", t.bits))),
        TypeCode::Handle(h) => h.as_str().trim().to_string(),
    })
}

/// The integer view of `t`, for the integer op helpers.
fn int_type(t: Type, what: &str) -> R<IT> {
    match t.code {
        TypeCode::Int | TypeCode::UInt if matches!(t.bits, 8 | 16 | 32 | 64) => Ok(IT::new(t.is_int(), t.bits)),
        _ => Err(CompileError::unsupported(format!("`{what}` of {}", t.element()))),
    }
}

/// The `halide_error_code_t` a `halide_error_*` call returns.
fn error_code(name: &str) -> i32 {
    let n = name.strip_prefix("halide_error_").unwrap_or(name);
    let base = n.trim_end_matches("_i64").trim_end_matches("_u64").trim_end_matches("_f64");
    match base {
        "explicit_bounds_too_small" => -2,
        "bad_type" => -3,
        "access_out_of_bounds" => -4,
        "buffer_allocation_too_large" => -5,
        "buffer_extents_too_large" => -6,
        "constraints_make_required_region_smaller" => -7,
        "constraint_violated" => -8,
        "param_too_small" => -9,
        "param_too_large" => -10,
        "out_of_memory" => -11,
        "buffer_argument_is_null" => -12,
        "debug_to_file_failed" => -13,
        "unaligned_host_ptr" => -24,
        "bad_fold" => -25,
        "fold_factor_too_small" => -26,
        "requirement_failed" => -27,
        "buffer_extents_negative" => -28,
        "specialize_fail" => -31,
        "host_is_null" => -34,
        "bad_extern_fold" => -35,
        "device_interface_no_device" => -36,
        "host_and_device_dirty" => -37,
        "buffer_is_null" => -38,
        "bad_dimensions" => -43,
        "device_dirty_with_no_device_support" => -44,
        "storage_bound_too_small" => -45,
        "split_factor_not_positive" => -46,
        _ => -1,
    }
}

fn c_string(s: &str) -> String {
    let mut o = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            0x20..=0x7e => o.push(b as char),
            _ => o.push_str(&format!("\\{b:03o}")),
        }
    }
    o.push('"');
    o
}

fn float_lit(t: Type, v: f64) -> String {
    let f = if t.bits == 32 { "float" } else { "double" };
    if v.is_nan() {
        format!("(({f})__builtin_nan(\"\"))")
    } else if v.is_infinite() {
        format!("(({f}){}__builtin_inf())", if v < 0.0 { "-" } else { "" })
    } else {
        format!("(({f}){v:e})")
    }
}

/// The value of an integer literal, if `e` is one.
/// Whether `body` allocates a tile larger than the 16 ymm registers (over
/// 512 bytes, constant extents) that it only reads and writes at constant
/// offsets: an accumulator GCC would otherwise split into registers.
fn has_register_tile(body: &Stmt) -> bool {
    let mut tiles: Vec<String> = Vec::new();
    body.visit(&mut |s| {
        if let Stmt::Allocate { name, ty, extents, condition: None, .. } = s {
            let n = extents.iter().map(const_int).try_fold(ty.lanes as i128, |acc, x| x.and_then(|x| acc.checked_mul(x)));
            if n.is_some_and(|n| n * ((ty.bits as i128 + 7) / 8) > 512) {
                tiles.push(name.clone());
            }
        }
    });
    let constant = |i: &Expr| match &i.kind {
        ExprKind::Ramp { base, stride, .. } => const_int(base).is_some() && const_int(stride).is_some(),
        _ => const_int(i).is_some(),
    };
    tiles.retain(|t| {
        let mut ok = true;
        body.visit(&mut |s| {
            if let Stmt::Store { name, index, .. } = s
                && name == t
            {
                ok &= constant(index);
            }
        });
        body.visit_exprs(&mut |e| {
            if let ExprKind::Load { name, index, .. } = &e.kind
                && name == t
            {
                ok &= constant(index);
            }
            // Passed by name (to a call): not a tile.
            if let ExprKind::Var(v) = &e.kind {
                ok &= v != t;
            }
        });
        ok
    });
    !tiles.is_empty()
}

fn const_int(e: &Expr) -> Option<i128> {
    match e.kind {
        ExprKind::Int(v) => Some(v as i128),
        ExprKind::UInt(v) => Some(v as i128),
        _ => None,
    }
}

/// Whether a scalar expression is cheap and pure enough to repeat per lane.
fn trivial(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Int(_) | ExprKind::UInt(_) | ExprKind::Float(_) | ExprKind::Var(_))
}

/// If `indices` are `base + i*stride` for every lane i, (base, stride).
fn affine(indices: &[u32]) -> Option<(i64, i64)> {
    let b = *indices.first()? as i64;
    let s = if indices.len() > 1 { indices[1] as i64 - b } else { 0 };
    indices.iter().enumerate().all(|(i, &x)| x as i64 == b + i as i64 * s).then_some((b, s))
}

fn peel_lets(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Let { body, .. } => peel_lets(body),
        _ => e,
    }
}

impl<'g> Emitter<'g> {
    fn new(g: &'g mut Globals) -> Self {
        Emitter { g, out: String::new(), indent: 1, scope: Vec::new(), counter: 0, addr: false, addr_lets: HashSet::new(), invariant: Vec::new() }
    }

    // ---- functions ----

    /// The external function: its prototype and definition.
    fn external(mut self, f: &Func, symbol: &str) -> R<(String, String)> {
        let mut params = Vec::new();
        let mut used = HashSet::new();
        for a in &f.args {
            let mut base = format!("_{}", sanitize(&a.name));
            if matches!(a.kind, ArgKind::Buffer { .. }) {
                base.push_str("_buffer");
            }
            let mut cname = base.clone();
            let mut k = 1;
            while !used.insert(cname.clone()) {
                cname = format!("{base}_{k}");
                k += 1;
            }
            match &a.kind {
                ArgKind::Buffer { .. } => {
                    params.push(format!("struct halide_buffer_t *{cname}"));
                    self.bind(format!("{}.buffer", a.name), cname, Type::handle("struct halide_buffer_t *"));
                }
                ArgKind::Scalar { ty } => {
                    let ct = if ty.is_bool() { "bool".to_string() } else { ctype(*ty)? };
                    params.push(format!("{ct} {cname}"));
                    self.bind(a.name.clone(), cname, *ty);
                }
            }
        }
        let proto = format!("int {symbol}({})", if params.is_empty() { "void".to_string() } else { params.join(", ") });
        self.addr_lets = emit_addr::address_lets(&f.body);
        self.stmt(&f.body)?;
        Ok((proto.clone(), format!("{proto} {{\n{}  return 0;\n}}\n", self.out)))
    }

    /// An internal function: a `halide_task_t` for `halide_do_par_for`.
    fn task(mut self, f: &Func, cname: &str) -> R<(String, String)> {
        let kinds: Vec<Option<Type>> = f.args.iter().map(|a| if let ArgKind::Scalar { ty } = a.kind { Some(ty) } else { None }).collect();
        let ok = matches!(kinds[..], [Some(a), Some(b), Some(c)] if a.is_handle() && b == Type::I32 && c.is_handle());
        if !ok {
            return Err(CompileError::unsupported(format!("internal function `{}` that is not a parallel task", f.name)));
        }
        let proto = format!("static int {cname}(void *p_user_context, int32_t p_index, uint8_t *p_closure)");
        let pnames = ["p_user_context", "p_index", "p_closure"];
        for ((a, p), ty) in f.args.iter().zip(pnames).zip(&kinds) {
            let ty = ty.unwrap_or(Type::I32);
            let v = self.fresh_var(&a.name);
            let ct = ctype(ty)?;
            self.line(&format!("{ct} {v} = ({ct}){p};"));
            self.bind(a.name.clone(), v, ty);
        }
        self.addr_lets = emit_addr::address_lets(&f.body);
        self.stmt(&f.body)?;
        Ok((proto.clone(), format!("{proto} {{\n{}  return 0;\n}}\n", self.out)))
    }

    fn h(&mut self) -> &mut Helpers {
        &mut self.g.helpers
    }

    // ---- output ----

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}_{}", self.counter)
    }

    fn fresh_var(&mut self, name: &str) -> String {
        let s = sanitize(name);
        let s: String = s.chars().take(40).collect();
        self.fresh(&format!("v_{s}"))
    }

    /// Runs `f` with output going to a fresh buffer; returns what it wrote.
    fn capture<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<(String, T)> {
        let saved = std::mem::take(&mut self.out);
        let r = f(self);
        let text = std::mem::replace(&mut self.out, saved);
        Ok((text, r?))
    }

    // ---- scope ----

    fn bind(&mut self, name: String, cname: String, ty: Type) {
        self.scope.push(Binding { name, cname, ty, fields: None, heap: false });
    }

    fn lookup(&self, name: &str) -> R<&Binding> {
        self.scope.iter().rev().find(|b| b.name == name).ok_or_else(|| CompileError::new(format!("unknown variable `{name}`")))
    }

    /// The C pointer variable of buffer `name`.
    fn host(&self, name: &str) -> R<String> {
        let b = self.lookup(name)?;
        if !b.ty.is_handle() {
            return Err(CompileError::new(format!("`{name}` is not a buffer")));
        }
        Ok(b.cname.clone())
    }

    /// Frees every live heap allocation (before an early return).
    fn free_all(&self) -> String {
        self.scope.iter().filter(|b| b.heap).map(|b| format!("free({}); ", b.cname)).collect()
    }

    // ---- statements ----

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Let { .. } => {
                // Iteratively: a function's prologue is a long chain of lets.
                let n = self.scope.len();
                let mut s = s;
                while let Stmt::Let { name, value, body } = s {
                    if !self.isel_let(name, value)? {
                        self.bind_let(name, value)?;
                    }
                    s = body;
                }
                self.stmt(s)?;
                self.scope.truncate(n);
            }
            Stmt::Assert { cond, message } => {
                let c = self.scalar(cond)?;
                let m = peel_lets(message);
                let code = match &m.kind {
                    ExprKind::Call { callee: Callee::Extern(n), .. } if n.starts_with("halide_error") => error_code(n).to_string(),
                    _ if m.ty.is_int_or_uint() && m.ty.is_scalar() => {
                        let (pre, v) = self.capture(|s| s.scalar(message))?;
                        if pre.is_empty() { format!("(int)({v})") } else { format!("(int)({{ {} {v}; }})", pre.trim()) }
                    }
                    _ => "-1".to_string(),
                };
                let frees = self.free_all();
                self.line(&format!("if (!({c})) {{ {frees}return {code}; }}"));
            }
            Stmt::ProducerConsumer { body, .. } | Stmt::Atomic { body, .. } => self.stmt(body)?,
            Stmt::For { name, min, extent, body, .. } => {
                let lo = self.fresh("lo");
                let ext = self.fresh("ext");
                let i = self.fresh("i");
                let m = self.scalar(min)?;
                self.line(&format!("int32_t {lo} = {m};"));
                let e = self.scalar(extent)?;
                self.line(&format!("int32_t {ext} = {e};"));
                let runs = const_int(extent).is_some_and(|n| n > 0);
                let hoisted = self.hoist_invariant_loads(name, body, &ext, runs)?;
                self.line(&format!("for (int64_t {i} = {lo}; {i} < (int64_t){lo} + {ext}; {i}++) {{"));
                self.indent += 1;
                let v = self.fresh_var(name);
                self.line(&format!("int32_t {v} = (int32_t){i};"));
                let n = self.scope.len();
                self.bind(name.clone(), v, Type::I32);
                self.stmt(body)?;
                self.scope.truncate(n);
                self.invariant.truncate(self.invariant.len() - hoisted);
                self.indent -= 1;
                self.line("}");
            }
            Stmt::IfThenElse { cond, then_case, else_case } => {
                let c = self.scalar(cond)?;
                self.line(&format!("if ({c}) {{"));
                self.indent += 1;
                self.stmt(then_case)?;
                self.indent -= 1;
                if let Some(e) = else_case {
                    self.line("} else {");
                    self.indent += 1;
                    self.stmt(e)?;
                    self.indent -= 1;
                }
                self.line("}");
            }
            Stmt::Allocate { name, ty, extents, condition, body, .. } => self.allocate(name, *ty, extents, condition.as_ref(), body)?,
            Stmt::Free { name } => {
                let b = self.lookup(name)?.clone();
                if b.heap {
                    self.line(&format!("free({0}); {0} = NULL;", b.cname));
                }
            }
            Stmt::Store { name, index, value, predicate, .. } => self.store(name, index, value, predicate.as_ref())?,
            Stmt::Evaluate(e) => {
                if e.ty.lanes > 1 {
                    self.lower_vector_expr(e)?;
                } else if !trivial(e) {
                    let v = self.scalar(e)?;
                    self.line(&format!("(void)({v});"));
                }
            }
            Stmt::Block(ss) => {
                for s in ss {
                    self.stmt(s)?;
                }
            }
        }
        Ok(())
    }

    /// Binds `name` to `value` in the current C block.
    fn bind_let(&mut self, name: &str, value: &Expr) -> R<()> {
        if value.ty.lanes > 1 {
            let arr = self.lower_vector_expr(value)?;
            self.bind(name.to_string(), arr, value.ty);
            return Ok(());
        }
        let addr = std::mem::replace(&mut self.addr, self.addr_lets.contains(name));
        let v = self.scalar(value);
        self.addr = addr;
        let v = v?;
        let cname = self.fresh_var(name);
        let ct = ctype(value.ty)?;
        self.line(&format!("{ct} {cname} = {v};"));
        let mut fields = None;
        let mut inner = value;
        while let ExprKind::Cast(a) = &inner.kind {
            inner = a;
        }
        if let ExprKind::Call { callee: Callee::Intrinsic(Intrinsic::MakeStruct), args } = &inner.kind {
            fields = Some(args.iter().map(|a| a.ty).collect());
        }
        if let ExprKind::Var(n) = &inner.kind
            && let Ok(b) = self.lookup(n)
        {
            fields = b.fields.clone();
        }
        self.scope.push(Binding { name: name.to_string(), cname, ty: value.ty, fields, heap: false });
        Ok(())
    }

    fn allocate(&mut self, name: &str, ty: Type, extents: &[Expr], condition: Option<&Expr>, body: &Stmt) -> R<()> {
        let et = ctype(ty.element())?;
        let cname = self.fresh_var(name);
        let consts: Option<Vec<i128>> = extents.iter().map(const_int).collect();
        let bytes_per = (ty.bits as u64).div_ceil(8).max(1);
        let mut heap = true;
        if let Some(c) = consts {
            let n = c.iter().try_fold(ty.lanes as i128, |acc, x| acc.checked_mul(*x)).unwrap_or(i128::MAX);
            if n >= 0 && (n as u128) * (bytes_per as u128) <= STACK_LIMIT as u128 {
                heap = false;
                let store = self.fresh("stack");
                // Cache-line aligned, as Halide allocates (its Stmt marks
                // these buffers' vectors `aligned(64, ..)`): a 32-byte load
                // at an odd 32-byte offset would straddle two lines, and the
                // frame's layout alone then decided a stencil's speed
                // (gaussian3x3 ran at 0.66x of the same code 32 bytes over).
                self.line(&format!("{et} {store}[{}] __attribute__((aligned(64)));", n.max(1)));
                self.line(&format!("void *{cname} = {store};"));
            }
        }
        if heap {
            let mut size = format!("(size_t){}", ty.lanes as u64 * bytes_per);
            for e in extents {
                let v = self.scalar(e)?;
                size = format!("{size} * (size_t)(int64_t)({v})");
            }
            let cond = match condition {
                Some(c) => self.scalar(c)?,
                None => "1".into(),
            };
            let sz = self.fresh("size");
            self.line(&format!("size_t {sz} = {size};"));
            self.line(&format!("void *{cname} = ({cond}) ? malloc({sz} ? {sz} : 1) : NULL;"));
            let frees = self.free_all();
            self.line(&format!("if (({cond}) && !{cname}) {{ {frees}return -11; }}"));
        }
        let n = self.scope.len();
        self.scope.push(Binding { name: name.to_string(), cname: cname.clone(), ty: Type::handle("void *"), fields: None, heap });
        self.stmt(body)?;
        self.scope.truncate(n);
        if heap {
            self.line(&format!("free({cname});"));
        }
        Ok(())
    }

    /// `((T *)p)[index]` for one element of buffer `p`.
    fn elem(p: &str, ty: Type, index: &str) -> R<String> {
        Ok(format!("(({} *){p})[{index}]", ctype(ty.element())?))
    }

    fn store(&mut self, name: &str, index: &Expr, value: &Expr, predicate: Option<&Expr>) -> R<()> {
        let (hooked, scalar) = match self.isel_store(name, index, value, predicate)? {
            isel_emit::StoreHook::Done => return Ok(()),
            isel_emit::StoreHook::Array(a) => (Some(a), None),
            isel_emit::StoreHook::Scalar(v) => (None, Some(v)),
            isel_emit::StoreHook::Naive => (None, None),
        };
        let p = self.host(name)?;
        let ty = value.ty;
        if ty.lanes == 1 {
            let v = match scalar {
                Some(v) => v,
                None => self.scalar(value)?,
            };
            let i = self.addr_scalar(index)?;
            let dst = Self::elem(&p, ty, &format!("(int64_t)({i})"))?;
            match predicate {
                Some(pr) => {
                    let c = self.scalar(pr)?;
                    self.line(&format!("if ({c}) {dst} = {v};"));
                }
                None => self.line(&format!("{dst} = {v};")),
            }
            return Ok(());
        }
        // The whole value (and predicate) first: a store may overwrite lanes
        // its own value reads.
        let v = match hooked {
            Some(a) => a,
            None => self.lower_vector_expr(value)?,
        };
        let pr = match predicate {
            Some(pr) if pr.ty.lanes > 1 => Some(format!("{}[l]", self.lower_vector_expr(pr)?)),
            Some(pr) => Some(self.hoist(pr)?),
            None => None,
        };
        let idx = self.index_lanes(index, true)?;
        let dst = Self::elem(&p, ty, &idx)?;
        let n = ty.lanes;
        match pr {
            Some(c) => self.line(&format!("for (int l = 0; l < {n}; l++) {{ if ({c}) {dst} = {v}[l]; }}")),
            None => self.line(&format!("for (int l = 0; l < {n}; l++) {dst} = {v}[l];")),
        }
        Ok(())
    }

    /// The element index of lane `l` of a vector index, as an int64
    /// expression. A ramp with scalar base and stride is computed directly
    /// (in 64 bits: Halide's 32-bit index arithmetic never overflows for an
    /// in-bounds access); any other index is computed per lane, or first
    /// into an array if `materialize`.
    fn index_lanes(&mut self, index: &Expr, materialize: bool) -> R<String> {
        if let ExprKind::Ramp { base, stride, .. } = &index.kind
            && base.ty.lanes == 1
        {
            let b = self.hoist_addr(base)?;
            let s = self.hoist_addr(stride)?;
            return Ok(format!("((int64_t){b} + (int64_t)l * (int64_t){s})"));
        }
        if materialize {
            let a = self.lower_vector_expr(index)?;
            Ok(format!("(int64_t){a}[l]"))
        } else {
            Ok(format!("(int64_t){}", self.lane(index, "l")?))
        }
    }

    // ---- expressions ----

    /// A scalar expression as a C expression (statements it needs first,
    /// such as materialized vectors, are emitted before).
    fn scalar(&mut self, e: &Expr) -> R<String> {
        let t = e.ty;
        if t.lanes != 1 {
            return Err(CompileError::new(format!("internal: scalar() of a {t}")));
        }
        Ok(match &e.kind {
            ExprKind::Int(v) => match t.code {
                TypeCode::Float => float_lit(t, *v as f64),
                TypeCode::Int | TypeCode::UInt => int_type(t, "literal")?.lit(*v as i128),
                _ => format!("(({})({v}))", ctype(t)?),
            },
            ExprKind::UInt(v) => match t.code {
                TypeCode::Int | TypeCode::UInt => int_type(t, "literal")?.lit(*v as i128),
                TypeCode::Float => float_lit(t, *v as f64),
                _ => format!("(({}){v}ULL)", ctype(t)?),
            },
            ExprKind::Float(v) => {
                if !t.is_float() {
                    return Err(CompileError::new(format!("float literal of type {t}")));
                }
                ctype(t)?;
                float_lit(t, *v)
            }
            ExprKind::Str(s) => c_string(s),
            ExprKind::Var(n) => {
                if let Some(task) = n.strip_prefix("::") {
                    let c = self.g.tasks.get(task).cloned().ok_or_else(|| CompileError::new(format!("unknown function `{task}`")))?;
                    format!("((halide_task_t){c})")
                } else {
                    self.lookup(n)?.cname.clone()
                }
            }
            ExprKind::Let { name, value, body } => {
                let n = self.scope.len();
                self.bind_let(name, value)?;
                let r = self.scalar(body);
                self.scope.truncate(n);
                r?
            }
            ExprKind::Load { name, index, predicate, .. } => {
                let p = self.host(name)?;
                let i = self.addr_scalar(index)?;
                let v = match self.invariant_load(&p, &ctype(t)?, &format!("(int64_t)({i})")) {
                    Some(v) if predicate.is_none() => v,
                    _ => self.load_elem(&p, t, &format!("(int64_t)({i})"))?,
                };
                match predicate {
                    Some(pr) => {
                        let c = self.scalar(pr)?;
                        format!("({c} ? {v} : 0)")
                    }
                    None => v,
                }
            }
            ExprKind::Shuffle { vectors, indices } => {
                let [k] = indices[..] else { return Err(CompileError::new("internal: scalar shuffle of several lanes")) };
                let (v, j) = Self::locate(vectors, k)?;
                if v.ty.lanes == 1 { self.scalar(v)? } else { self.lane(v, &j.to_string())? }
            }
            ExprKind::VectorReduce { op, value } => self.reduce(e, *op, value)?,
            ExprKind::Reinterpret(a) if a.ty.lanes != 1 => self.reinterpret_lanes(e, a)?,
            ExprKind::Call { callee: Callee::Intrinsic(i), args } if !Self::elementwise_intrinsic(*i) => self.special_call(*i, args, t)?,
            ExprKind::Call { callee: Callee::Extern(n), args } => self.runtime(n, args, t)?,
            ExprKind::Ramp { .. } | ExprKind::Broadcast { .. } => return Err(CompileError::new("internal: scalar ramp or broadcast")),
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) if self.addr && t.is_int() && t.bits >= 32 => {
                // Address arithmetic, which Halide lets not overflow (see emit_addr).
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                format!("(({})({a} {} {b}))", ctype(t)?, op.symbol())
            }
            _ => {
                let args: Vec<String> = e.children().into_iter().map(|c| self.scalar(c)).collect::<R<_>>()?;
                self.elementwise(e, &args)?
            }
        })
    }

    /// The vector among `vectors` holding lane `k` of their concatenation,
    /// and the lane within it.
    fn locate(vectors: &[Expr], k: u32) -> R<(&Expr, u32)> {
        let mut off = 0;
        for v in vectors {
            if k < off + v.ty.lanes {
                return Ok((v, k - off));
            }
            off += v.ty.lanes;
        }
        Err(CompileError::new(format!("shuffle index {k} out of range")))
    }

    /// A scalar index expression (address arithmetic; see [`emit_addr`]).
    fn addr_scalar(&mut self, e: &Expr) -> R<String> {
        let addr = std::mem::replace(&mut self.addr, true);
        let r = self.scalar(e);
        self.addr = addr;
        r
    }

    /// [`Self::hoist`] of an index expression.
    fn hoist_addr(&mut self, e: &Expr) -> R<String> {
        let addr = std::mem::replace(&mut self.addr, true);
        let r = self.hoist(e);
        self.addr = addr;
        r
    }

    /// A scalar needed inside a lane loop, computed once before it.
    fn hoist(&mut self, e: &Expr) -> R<String> {
        let s = self.scalar(e)?;
        if trivial(e) {
            return Ok(s);
        }
        let name = self.fresh("s");
        let ct = ctype(e.ty)?;
        self.line(&format!("{ct} {name} = {s};"));
        Ok(name)
    }

    fn load_elem(&mut self, p: &str, t: Type, index: &str) -> R<String> {
        let v = Self::elem(p, t, index)?;
        Ok(if t.is_bool() { format!("((uint8_t)({v} & 1))") } else { v })
    }

    /// Computes the vector expression `e` into a fresh C array of its lanes
    /// and returns the array's name.
    ///
    /// This is the seam for instruction selection: every vector value the
    /// backend computes (let-bound vectors, stored values, reduction and
    /// shuffle operands) goes through here. The naive lowering fuses
    /// element-wise operations into one lane loop,
    /// `for (int l = 0; l < N; l++) v[l] = ...;`, materializing cross-lane
    /// operations (reductions, general shuffles) into arrays first.
    pub fn lower_vector_expr(&mut self, e: &Expr) -> Result<String, CompileError> {
        let n = e.ty.lanes;
        match &e.kind {
            ExprKind::Var(name) => {
                let b = self.lookup(name)?;
                if b.ty.lanes == n {
                    return Ok(b.cname.clone());
                }
            }
            ExprKind::VectorReduce { op, value } => return self.reduce(e, *op, value),
            ExprKind::Shuffle { vectors, indices } if Self::single_source(vectors, indices).is_none() => return self.shuffle(e, vectors, indices),
            ExprKind::Reinterpret(a) if a.ty.lanes != n => return self.reinterpret_lanes(e, a),
            ExprKind::Call { callee: Callee::Intrinsic(i), args } if !Self::elementwise_intrinsic(*i) => return self.special_call(*i, args, e.ty),
            _ => {}
        }
        let le = self.lane(e, "l")?;
        let name = self.fresh("v");
        let ct = ctype(e.ty.element())?;
        self.line(&format!("{ct} {name}[{n}];"));
        self.line(&format!("for (int l = 0; l < {n}; l++) {name}[l] = {le};"));
        Ok(name)
    }

    /// A new array of `e`'s lanes, to be filled by the caller.
    fn new_array(&mut self, e: &Expr) -> R<String> {
        let name = self.fresh("v");
        let ct = ctype(e.ty.element())?;
        self.line(&format!("{ct} {name}[{}];", e.ty.lanes));
        Ok(name)
    }

    /// A shuffle reading lanes `b + i*s` of one of its vectors: (that
    /// vector's position, b within it, s).
    fn single_source(vectors: &[Expr], indices: &[u32]) -> Option<(usize, i64, i64)> {
        let (b, s) = affine(indices)?;
        let last = b + s * (indices.len() as i64 - 1);
        let mut off = 0i64;
        for (k, v) in vectors.iter().enumerate() {
            let end = off + v.ty.lanes as i64;
            if (off..end).contains(&b) && (off..end).contains(&last) && v.ty.lanes > 1 {
                return Some((k, b - off, s));
            }
            off = end;
        }
        None
    }

    /// Lane `idx` of vector expression `e` (a C expression in the lane
    /// index `idx`, with anything lane-invariant or cross-lane computed
    /// before the loop).
    fn lane(&mut self, e: &Expr, idx: &str) -> R<String> {
        if e.ty.lanes == 1 {
            return self.hoist(e);
        }
        Ok(match &e.kind {
            ExprKind::Var(n) => {
                let b = self.lookup(n)?;
                format!("{}[{idx}]", b.cname)
            }
            ExprKind::Broadcast { value, .. } => {
                if value.ty.lanes == 1 {
                    self.hoist(value)?
                } else {
                    self.lane(value, &format!("(({idx}) % {})", value.ty.lanes))?
                }
            }
            ExprKind::Ramp { base, stride, .. } => {
                let m = base.ty.lanes;
                let (j, k) = if m == 1 { (idx.to_string(), format!("({idx})")) } else { (format!("(({idx}) % {m})"), format!("(({idx}) / {m})")) };
                let b = self.lane(base, &j)?;
                let s = self.lane(stride, &j)?;
                let et = e.ty.element();
                if et.is_float() {
                    let ct = ctype(et)?;
                    format!("({b} + ({ct}){k} * {s})")
                } else {
                    let it = int_type(et, "ramp")?;
                    let add = ops::binop(&mut self.g.helpers, "add", it);
                    let mul = ops::binop(&mut self.g.helpers, "mul", it);
                    format!("{add}({b}, {mul}(({}){k}, {s}))", it.c())
                }
            }
            ExprKind::Load { name, index, predicate, .. } => {
                let p = self.host(name)?;
                let i = if idx == "l" {
                    self.index_lanes(index, false)?
                } else {
                    format!("(int64_t){}", self.lane(index, idx)?)
                };
                let v = self.load_elem(&p, e.ty, &i)?;
                match predicate {
                    Some(pr) => {
                        let c = self.lane(pr, idx)?;
                        format!("({c} ? {v} : 0)")
                    }
                    None => v,
                }
            }
            ExprKind::Let { name, value, body } => {
                let n = self.scope.len();
                self.bind_let(name, value)?;
                let r = self.lane(body, idx);
                self.scope.truncate(n);
                r?
            }
            ExprKind::Shuffle { vectors, indices } => match Self::single_source(vectors, indices) {
                Some((k, b, s)) => self.lane(&vectors[k], &format!("({b} + ({idx}) * {s})"))?,
                None => format!("{}[{idx}]", self.shuffle(e, vectors, indices)?),
            },
            ExprKind::VectorReduce { .. } => format!("{}[{idx}]", self.lower_vector_expr(e)?),
            ExprKind::Reinterpret(a) if a.ty.lanes != e.ty.lanes => format!("{}[{idx}]", self.reinterpret_lanes(e, a)?),
            ExprKind::Call { callee: Callee::Intrinsic(i), .. } if !Self::elementwise_intrinsic(*i) => format!("{}[{idx}]", self.lower_vector_expr(e)?),
            ExprKind::Call { callee: Callee::Extern(n), .. } if !Self::elementwise_extern(n) => {
                return Err(CompileError::unsupported(format!("vector call to `{n}`")));
            }
            _ => {
                let args: Vec<String> = e.children().into_iter().map(|c| self.lane(c, idx)).collect::<R<_>>()?;
                self.elementwise(e, &args)?
            }
        })
    }

    /// A general shuffle: its vectors concatenated, then lanes picked.
    fn shuffle(&mut self, e: &Expr, vectors: &[Expr], indices: &[u32]) -> R<String> {
        let ct = ctype(e.ty.element())?;
        let total: u32 = vectors.iter().map(|v| v.ty.lanes).sum();
        let mut parts = Vec::new();
        for v in vectors {
            if v.ty.lanes == 1 {
                parts.push((self.hoist(v)?, 1));
            } else {
                parts.push((self.lower_vector_expr(v)?, v.ty.lanes));
            }
        }
        let cat = self.fresh("cat");
        self.line(&format!("{ct} {cat}[{total}];"));
        let mut off = 0;
        for (p, n) in parts {
            if n == 1 {
                self.line(&format!("{cat}[{off}] = {p};"));
            } else {
                self.line(&format!("for (int l = 0; l < {n}; l++) {cat}[{off} + l] = {p}[l];"));
            }
            off += n;
        }
        let out = self.new_array(e)?;
        let n = indices.len();
        if let Some((b, s)) = affine(indices) {
            self.line(&format!("for (int l = 0; l < {n}; l++) {out}[l] = {cat}[{b} + l * {s}];"));
        } else {
            let tbl = self.fresh("idx");
            let list: Vec<String> = indices.iter().map(|i| i.to_string()).collect();
            self.line(&format!("static const int32_t {tbl}[{n}] = {{{}}};", list.join(", ")));
            self.line(&format!("for (int l = 0; l < {n}; l++) {out}[l] = {cat}[{tbl}[l]];"));
        }
        Ok(out)
    }

    /// `vector_reduce_OP`: groups of adjacent lanes combined left to right.
    /// Returns an array, or a scalar variable for a one-lane result.
    fn reduce(&mut self, e: &Expr, op: ReduceOp, value: &Expr) -> R<String> {
        let src = if value.ty.lanes == 1 { return self.scalar(value) } else { self.lower_vector_expr(value)? };
        let n = e.ty.lanes;
        let f = value.ty.lanes / n;
        let et = e.ty.element();
        let ct = ctype(et)?;
        let comb = |s: &mut Self, acc: &str, y: &str| -> R<String> {
            if et.is_bool() {
                return match op {
                    ReduceOp::And | ReduceOp::Min | ReduceOp::Mul => Ok(format!("({acc} & {y})")),
                    ReduceOp::Or | ReduceOp::Max => Ok(format!("({acc} | {y})")),
                    _ => Err(CompileError::unsupported(format!("`{}` of bools", op.name()))),
                };
            }
            if et.is_float() {
                return match op {
                    ReduceOp::Add => Ok(format!("({acc} + {y})")),
                    ReduceOp::Mul => Ok(format!("({acc} * {y})")),
                    ReduceOp::Min => Ok(format!("({y} < {acc} ? {y} : {acc})")),
                    ReduceOp::Max => Ok(format!("({y} > {acc} ? {y} : {acc})")),
                    _ => Err(CompileError::unsupported(format!("`{}` of floats", op.name()))),
                };
            }
            let it = int_type(et, op.name())?;
            let h = &mut s.g.helpers;
            Ok(match op {
                ReduceOp::Add => format!("{}({acc}, {y})", ops::binop(h, "add", it)),
                ReduceOp::Mul => format!("{}({acc}, {y})", ops::binop(h, "mul", it)),
                ReduceOp::Min => format!("{}({acc}, {y})", ops::binop(h, "min", it)),
                ReduceOp::Max => format!("{}({acc}, {y})", ops::binop(h, "max", it)),
                ReduceOp::SaturatingAdd => format!("{}({acc}, {y})", ops::saturating(h, false, it)),
                ReduceOp::And => format!("({ct})({acc} & {y})"),
                ReduceOp::Or => format!("({ct})({acc} | {y})"),
            })
        };
        let acc = self.fresh("acc");
        if n == 1 {
            let step = comb(self, &acc, &format!("{src}[k]"))?;
            self.line(&format!("{ct} {acc} = {src}[0];"));
            self.line(&format!("for (int k = 1; k < {f}; k++) {acc} = {step};"));
            return Ok(acc);
        }
        let step = comb(self, &acc, &format!("{src}[i * {f} + k]"))?;
        let out = self.new_array(e)?;
        self.line(&format!("for (int i = 0; i < {n}; i++) {{ {ct} {acc} = {src}[i * {f}]; for (int k = 1; k < {f}; k++) {acc} = {step}; {out}[i] = {acc}; }}"));
        Ok(out)
    }

    /// A reinterpret that changes the lane count: the bytes copied.
    fn reinterpret_lanes(&mut self, e: &Expr, a: &Expr) -> R<String> {
        if e.ty.is_bool() || a.ty.is_bool() {
            return Err(CompileError::unsupported("reinterpret of bool vectors"));
        }
        let src = if a.ty.lanes == 1 { self.hoist(a)? } else { self.lower_vector_expr(a)? };
        let src_ref = if a.ty.lanes == 1 { format!("&{src}") } else { src };
        if e.ty.lanes == 1 {
            let name = self.fresh("s");
            let ct = ctype(e.ty)?;
            self.line(&format!("{ct} {name}; memcpy(&{name}, {src_ref}, sizeof {name});"));
            return Ok(name);
        }
        let out = self.new_array(e)?;
        self.line(&format!("memcpy({out}, {src_ref}, sizeof {out});"));
        Ok(out)
    }

    fn elementwise_intrinsic(i: Intrinsic) -> bool {
        use Intrinsic::*;
        !matches!(i, IfThenElse | DynamicShuffle | MakeStruct | LoadTypedStructMember | GetUserContext | Alloca | Stringify | SizeOfHalideBufferT | RegisterDestructor | Require | Undef)
    }

    fn elementwise_extern(name: &str) -> bool {
        math_fn(name).is_some()
    }

    /// One lane of an element-wise node, given its operands' lanes `a`.
    fn elementwise(&mut self, e: &Expr, a: &[String]) -> R<String> {
        let t = e.ty.element();
        match &e.kind {
            ExprKind::Cast(x) => self.cast(t, x.ty.element(), &a[0]),
            ExprKind::Reinterpret(x) => self.reinterpret(t, x.ty.element(), &a[0]),
            ExprKind::Binary(op, x, _) => self.binary(*op, x.ty.element(), &a[0], &a[1]),
            ExprKind::Not(_) => Ok(format!("((uint8_t)!({}))", a[0])),
            ExprKind::Select(..) => Ok(format!("({} ? {} : {})", a[0], a[1], a[2])),
            ExprKind::Call { callee: Callee::Intrinsic(i), args } => self.intrinsic(*i, args, a, t),
            ExprKind::Call { callee: Callee::Extern(n), .. } => match math_fn(n) {
                Some(f) => Ok(format!("{f}({})", a.join(", "))),
                None => Err(CompileError::unsupported(format!("call to `{n}`"))),
            },
            other => Err(CompileError::new(format!("internal: elementwise {other:?}"))),
        }
    }

    fn cast(&mut self, to: Type, from: Type, a: &str) -> R<String> {
        if to == from {
            return Ok(a.to_string());
        }
        let tc = ctype(to)?;
        ctype(from)?;
        Ok(match (from.code, to.code) {
            (TypeCode::Handle(_), TypeCode::Handle(_)) => format!("(({tc})({a}))"),
            (TypeCode::Handle(_), _) | (_, TypeCode::Handle(_)) => format!("(({tc})(uintptr_t)({a}))"),
            (_, TypeCode::Bool) => format!("((uint8_t)(({a}) != 0))"),
            (TypeCode::Float, TypeCode::Int | TypeCode::UInt) => {
                let it = int_type(to, "cast")?;
                format!("{}({a})", ops::float_to_int(&mut self.g.helpers, from.bits, it, self.g.avx512))
            }
            _ => format!("(({tc})({a}))"),
        })
    }

    /// A reinterpret of one lane as a type of the same width.
    fn reinterpret(&mut self, to: Type, from: Type, a: &str) -> R<String> {
        if to == from {
            return Ok(a.to_string());
        }
        let tc = ctype(to)?;
        let fc = ctype(from)?;
        Ok(match (from.code, to.code) {
            (TypeCode::Handle(_), TypeCode::Handle(_)) => format!("(({tc})({a}))"),
            (TypeCode::Handle(_), _) | (_, TypeCode::Handle(_)) => format!("(({tc})(uintptr_t)({a}))"),
            (TypeCode::Float, _) | (_, TypeCode::Float) => {
                if from.bits != to.bits {
                    return Err(CompileError::new(format!("reinterpret of {from} as {to}")));
                }
                let f = ops::bitcast(&mut self.g.helpers, &fc, &tc, &from.to_string(), &to.to_string());
                format!("{f}({a})")
            }
            _ => format!("(({tc})({a}))"),
        })
    }

    fn binary(&mut self, op: BinOp, t: Type, a: &str, b: &str) -> R<String> {
        if t.is_handle() {
            return match op {
                BinOp::Eq => Ok(format!("((uint8_t)((uintptr_t)({a}) == (uintptr_t)({b})))")),
                BinOp::Ne => Ok(format!("((uint8_t)((uintptr_t)({a}) != (uintptr_t)({b})))")),
                _ => Err(CompileError::unsupported(format!("`{}` of handles", op.symbol()))),
            };
        }
        if op.is_comparison() {
            return Ok(format!("((uint8_t)({a} {} {b}))", op.symbol()));
        }
        match op {
            BinOp::And => return Ok(format!("((uint8_t)({a} & {b}))")),
            BinOp::Or => return Ok(format!("((uint8_t)({a} | {b}))")),
            _ => {}
        }
        if t.is_float() {
            let ct = ctype(t)?;
            return Ok(match op {
                BinOp::Add => format!("(({ct})({a} + {b}))"),
                BinOp::Sub => format!("(({ct})({a} - {b}))"),
                BinOp::Mul => format!("(({ct})({a} * {b}))"),
                BinOp::Div => format!("(({ct})({a} / {b}))"),
                BinOp::Min => {
                    let h = self.float_helper("min", t, "return a < b ? a : b;")?;
                    format!("{h}({a}, {b})")
                }
                BinOp::Max => {
                    let h = self.float_helper("max", t, "return a > b ? a : b;")?;
                    format!("{h}({a}, {b})")
                }
                BinOp::Mod => {
                    let fl = if t.bits == 32 { "floorf" } else { "floor" };
                    let h = self.float_helper("mod", t, &format!("return a - b * {fl}(a / b);"))?;
                    format!("{h}({a}, {b})")
                }
                _ => unreachable!(),
            });
        }
        let it = int_type(t, op.symbol())?;
        let h = ops::binop(&mut self.g.helpers, op.op_name(), it);
        Ok(format!("{h}({a}, {b})"))
    }

    fn float_helper(&mut self, op: &str, t: Type, body: &str) -> R<String> {
        let ct = ctype(t)?;
        let name = format!("h_{op}_f{}", t.bits);
        Ok(self.g.helpers.fixed(&name, &format!("static inline {ct} {name}({ct} a, {ct} b) {{ {body} }}")))
    }

    /// One lane of an element-wise intrinsic; `t` is the result element type.
    fn intrinsic(&mut self, i: Intrinsic, args: &[Expr], a: &[String], t: Type) -> R<String> {
        use Intrinsic::*;
        let name = i.name();
        let t0 = args.first().map(|x| x.ty.element()).ok_or_else(|| CompileError::new(format!("`{name}` without arguments")))?;
        let call = |f: String, a: &[String]| format!("{f}({})", a.join(", "));
        let no_wide = || CompileError::unsupported(format!("`{name}` of {t0}: no type twice as wide"));
        Ok(match i {
            Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped | StrictFloat => a[0].clone(),
            ReturnSecond => a[1].clone(),
            BitwiseAnd | BitwiseOr | BitwiseXor => {
                let sym = match i {
                    BitwiseAnd => "&",
                    BitwiseOr => "|",
                    _ => "^",
                };
                if !(t0.is_int_or_uint() || t0.is_bool()) {
                    return Err(CompileError::unsupported(format!("`{name}` of {t0}")));
                }
                format!("(({})({} {sym} {}))", ctype(t)?, a[0], a[1])
            }
            BitwiseNot => {
                if t0.is_bool() {
                    format!("((uint8_t)({} ^ 1))", a[0])
                } else {
                    int_type(t0, name)?;
                    format!("(({})~({}))", ctype(t)?, a[0])
                }
            }
            Abs if t0.is_float() => format!("{}({})", if t0.bits == 32 { "fabsf" } else { "fabs" }, a[0]),
            Absd if t0.is_float() => format!("{}(({}) - ({}))", if t0.bits == 32 { "fabsf" } else { "fabs" }, a[0], a[1]),
            _ => {
                let it = int_type(t0, name)?;
                // A shift amount has the value's width and its own signedness.
                let amt = || int_type(args[1].ty.element(), name).map(|t1| (t1.signed, format!("({})({})", t1.c(), a[1])));
                match i {
                    WideningAdd => call(ops::widening_addsub(self.h(), false, it).ok_or_else(no_wide)?, a),
                    WideningSub => call(ops::widening_addsub(self.h(), true, it).ok_or_else(no_wide)?, a),
                    WideningMul => {
                        let it1 = int_type(args[1].ty.element(), name)?;
                        call(ops::widening_mul(self.h(), it, it1).ok_or_else(no_wide)?, a)
                    }
                    WidenRightAdd | WidenRightSub | WidenRightMul => {
                        let it1 = int_type(args[1].ty.element(), name)?;
                        if it.bits != 2 * it1.bits {
                            return Err(CompileError::new(format!("`{name}` of {t0} and {}", args[1].ty)));
                        }
                        let op = match i {
                            WidenRightAdd => "add",
                            WidenRightSub => "sub",
                            _ => "mul",
                        };
                        call(ops::widen_right(self.h(), op, it, it1), a)
                    }
                    WideningShiftLeft | WideningShiftRight => {
                        let (s1, b) = amt()?;
                        let f = ops::widening_shift(self.h(), i == WideningShiftLeft, it, s1).ok_or_else(no_wide)?;
                        call(f, &[a[0].clone(), b])
                    }
                    ShiftLeft | ShiftRight => {
                        let (s1, b) = amt()?;
                        call(ops::shift(self.h(), i == ShiftLeft, it, s1), &[a[0].clone(), b])
                    }
                    RoundingShiftLeft | RoundingShiftRight => {
                        let (s1, b) = amt()?;
                        call(ops::rounding_shift(self.h(), i == RoundingShiftLeft, it, s1), &[a[0].clone(), b])
                    }
                    SaturatingAdd | SaturatingSub => call(ops::saturating(self.h(), i == SaturatingSub, it), a),
                    HalvingAdd => call(ops::halving(self.h(), "hadd", it), a),
                    HalvingSub => call(ops::halving(self.h(), "hsub", it), a),
                    RoundingHalvingAdd => call(ops::halving(self.h(), "rhadd", it), a),
                    SaturatingCast => {
                        let to = int_type(t, name)?;
                        call(ops::saturating_cast(self.h(), it, to), a)
                    }
                    MulShiftRight | RoundingMulShiftRight => {
                        let f = ops::mul_shift_right(self.h(), i == RoundingMulShiftRight, it);
                        call(f, &[a[0].clone(), a[1].clone(), format!("({})({})", it.u(), a[2])])
                    }
                    Absd => call(ops::absd(self.h(), it), a),
                    Abs => call(ops::abs(self.h(), it), a),
                    CountLeadingZeros => call(ops::bitcount(self.h(), "clz", it), a),
                    CountTrailingZeros => call(ops::bitcount(self.h(), "ctz", it), a),
                    Popcount => call(ops::bitcount(self.h(), "popcount", it), a),
                    _ => return Err(CompileError::unsupported(format!("intrinsic `{name}`"))),
                }
            }
        })
    }

    /// Intrinsics that are not one C expression per lane. Returns a C
    /// expression for a scalar result, or the name of an array.
    fn special_call(&mut self, i: Intrinsic, args: &[Expr], t: Type) -> R<String> {
        use Intrinsic::*;
        match i {
            IfThenElse => {
                let c = self.scalar(&args[0])?;
                if t.lanes == 1 {
                    let (pa, va) = self.capture(|s| s.scalar(&args[1]))?;
                    let (pb, vb) = match args.get(2) {
                        Some(b) => self.capture(|s| s.scalar(b))?,
                        None => (String::new(), format!("(({})0)", ctype(t)?)),
                    };
                    let wrap = |p: String, v: String| if p.is_empty() { v } else { format!("({{ {} {v}; }})", p.trim()) };
                    return Ok(format!("({c} ? {} : {})", wrap(pa, va), wrap(pb, vb)));
                }
                let out = self.fresh("v");
                let ct = ctype(t.element())?;
                self.line(&format!("{ct} {out}[{}];", t.lanes));
                self.line(&format!("if ({c}) {{"));
                self.indent += 1;
                let va = self.lower_vector_expr(&args[1])?;
                self.line(&format!("memcpy({out}, {va}, sizeof {out});"));
                self.indent -= 1;
                self.line("} else {");
                self.indent += 1;
                match args.get(2) {
                    Some(b) => {
                        let vb = self.lower_vector_expr(b)?;
                        self.line(&format!("memcpy({out}, {vb}, sizeof {out});"));
                    }
                    None => self.line(&format!("memset({out}, 0, sizeof {out});")),
                }
                self.indent -= 1;
                self.line("}");
                Ok(out)
            }
            DynamicShuffle => {
                let table = &args[0];
                let tbl = if table.ty.lanes == 1 { return Err(CompileError::unsupported("dynamic_shuffle of a scalar")) } else { self.lower_vector_expr(table)? };
                let n = table.ty.lanes;
                let one = |s: &mut Self, idx: &str| -> R<String> {
                    let k = s.lane(&args[1], idx)?;
                    Ok(format!("((uint64_t)(int64_t)({k}) < {n} ? {tbl}[(int64_t)({k})] : 0)"))
                };
                if t.lanes == 1 {
                    return one(self, "0");
                }
                let v = one(self, "l")?;
                let out = self.new_array(&Expr::new(t, ExprKind::Int(0)))?;
                self.line(&format!("for (int l = 0; l < {}; l++) {out}[l] = {v};", t.lanes));
                Ok(out)
            }
            MakeStruct => {
                if args.is_empty() {
                    return Ok("((void *)0)".into());
                }
                let fields: Vec<String> = args.iter().map(|a| ctype(a.ty)).collect::<R<_>>()?;
                if args.iter().any(|a| a.ty.lanes != 1) {
                    return Err(CompileError::unsupported("make_struct of vectors"));
                }
                let vals: Vec<String> = args.iter().map(|a| self.scalar(a)).collect::<R<_>>()?;
                let sn = self.g.struct_name(fields);
                Ok(format!("((void *)&(struct {sn}){{{}}})", vals.join(", ")))
            }
            LoadTypedStructMember => {
                let p = self.scalar(&args[0])?;
                let proto = match &args[1].kind {
                    ExprKind::Var(n) => self.lookup(n)?.fields.clone(),
                    ExprKind::Call { callee: Callee::Intrinsic(MakeStruct), args } => Some(args.iter().map(|a| a.ty).collect()),
                    _ => None,
                };
                let proto = proto.ok_or_else(|| CompileError::unsupported("load_typed_struct_member without a make_struct prototype"))?;
                let k = const_int(&args[2]).ok_or_else(|| CompileError::unsupported("load_typed_struct_member of a variable field"))? as usize;
                let fields: Vec<String> = proto.iter().map(|t| ctype(*t)).collect::<R<_>>()?;
                if k >= fields.len() {
                    return Err(CompileError::new(format!("struct field {k} of {}", fields.len())));
                }
                let sn = self.g.struct_name(fields);
                Ok(format!("(({})((struct {sn} *)({p}))->f{k})", ctype(t)?))
            }
            GetUserContext => Ok("((void *)0)".into()),
            SizeOfHalideBufferT => Ok("((int32_t)sizeof(struct halide_buffer_t))".into()),
            Alloca => {
                let n = self.scalar(&args[0])?;
                Ok(format!("(({})__builtin_alloca((size_t)({n})))", ctype(t)?))
            }
            Undef => {
                if t.lanes == 1 {
                    Ok(format!("(({})0)", ctype(t)?))
                } else {
                    let out = self.new_array(&Expr::new(t, ExprKind::Int(0)))?;
                    self.line(&format!("memset({out}, 0, sizeof {out});"));
                    Ok(out)
                }
            }
            _ => Err(CompileError::unsupported(format!("intrinsic `{}`", i.name()))),
        }
    }

    /// Runtime calls: buffer accessors and the rest of what lowered code
    /// calls.
    fn runtime(&mut self, name: &str, args: &[Expr], t: Type) -> R<String> {
        if let Some(f) = math_fn(name) {
            let a: Vec<String> = args.iter().map(|x| self.scalar(x)).collect::<R<_>>()?;
            return Ok(format!("{f}({})", a.join(", ")));
        }
        let a: Vec<String> = match name {
            n if n.starts_with("_halide_buffer_") || n == "halide_do_par_for" => args.iter().map(|x| self.scalar(x)).collect::<R<_>>()?,
            _ => return Err(CompileError::unsupported(format!("call to `{name}`"))),
        };
        let arity = |k: usize| -> R<()> {
            if a.len() != k { Err(CompileError::new(format!("`{name}` takes {k} arguments, not {}", a.len()))) } else { Ok(()) }
        };
        let b = || format!("((struct halide_buffer_t *)({}))", a[0]);
        Ok(match name {
            "_halide_buffer_get_host" => {
                arity(1)?;
                format!("((void *){}->host)", b())
            }
            "_halide_buffer_get_device" => {
                arity(1)?;
                format!("((uint64_t){}->device)", b())
            }
            "_halide_buffer_get_device_interface" => {
                arity(1)?;
                format!("((struct halide_device_interface_t *){}->device_interface)", b())
            }
            "_halide_buffer_get_shape" => {
                arity(1)?;
                format!("((struct halide_dimension_t *){}->dim)", b())
            }
            "_halide_buffer_get_type" => {
                arity(1)?;
                let x = b();
                format!("((uint32_t){x}->type.code | ((uint32_t){x}->type.bits << 8) | ((uint32_t){x}->type.lanes << 16))")
            }
            "_halide_buffer_get_dimensions" => {
                arity(1)?;
                format!("((int32_t){}->dimensions)", b())
            }
            "_halide_buffer_get_min" | "_halide_buffer_get_extent" | "_halide_buffer_get_stride" => {
                arity(2)?;
                let field = name.rsplit('_').next().unwrap_or("min");
                format!("((int32_t){}->dim[{}].{field})", b(), a[1])
            }
            "_halide_buffer_get_max" => {
                arity(2)?;
                let x = b();
                format!("((int32_t)((uint32_t){x}->dim[{0}].min + (uint32_t){x}->dim[{0}].extent - 1u))", a[1])
            }
            "_halide_buffer_get_host_dirty" => {
                arity(1)?;
                format!("((uint8_t)(({}->flags & 1) != 0))", b())
            }
            "_halide_buffer_get_device_dirty" => {
                arity(1)?;
                format!("((uint8_t)(({}->flags & 2) != 0))", b())
            }
            "_halide_buffer_is_bounds_query" => {
                arity(1)?;
                let x = b();
                format!("((uint8_t)({x}->host == NULL && {x}->device == 0))")
            }
            "_halide_buffer_set_host_dirty" | "_halide_buffer_set_device_dirty" => {
                arity(2)?;
                let f = ops::runtime(&mut self.g.helpers, "h_buffer_set_flag");
                let flag = if name.contains("host") { 1 } else { 2 };
                format!("{f}({}, {flag}, {})", b(), a[1])
            }
            "_halide_buffer_init" => {
                arity(10)?;
                let f = ops::runtime(&mut self.g.helpers, "h_buffer_init");
                format!(
                    "(({})(void *){f}({}, (struct halide_dimension_t *)({}), (void *)({}), (uint64_t)({}), (const struct halide_device_interface_t *)({}), {}, {}, {}, (struct halide_dimension_t *)({}), (uint64_t)({})))",
                    ctype(t)?,
                    b(),
                    a[1],
                    a[2],
                    a[3],
                    a[4],
                    a[5],
                    a[6],
                    a[7],
                    a[8],
                    a[9]
                )
            }
            "halide_do_par_for" => {
                arity(4)?;
                let f = ops::runtime(&mut self.g.helpers, "h_do_par_for");
                format!("{f}((halide_task_t)({}), {}, {}, (uint8_t *)({}))", a[0], a[1], a[2], a[3])
            }
            _ => return Err(CompileError::unsupported(format!("call to `{name}`"))),
        })
    }
}

/// The C math function for Halide's `NAME_f32` / `NAME_f64` calls.
fn math_fn(name: &str) -> Option<String> {
    let (base, suffix) = if let Some(b) = name.strip_suffix("_f32") {
        (b, "f")
    } else if let Some(b) = name.strip_suffix("_f64") {
        (b, "")
    } else {
        return None;
    };
    let c = match base {
        "sqrt" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "atan2" | "sinh" | "cosh" | "tanh" | "asinh" | "acosh" | "atanh" | "exp" | "log" | "pow" | "floor" | "ceil" | "trunc" => base,
        "round" => "nearbyint",
        "abs" => "fabs",
        _ => return None,
    };
    Some(format!("{c}{suffix}"))
}
