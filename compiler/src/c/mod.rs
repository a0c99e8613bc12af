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
//! One file per stage: this one the translation unit and the ABI
//! (functions, scope, pragmas), [`stmt`] statements, [`scalar`] scalar
//! expressions and runtime calls, [`vector`] the naive vector lowering,
//! [`tile`] register tiles, [`isel_emit`] the selected instructions.
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
mod scalar;
mod stmt;
mod tile;
mod vector;
pub mod isel_emit;
pub mod ops;

pub use isel_emit::IselReport;

use std::collections::{HashMap, HashSet};
use std::fmt;

use misaal_frontends::stmt::ast::*;
use misaal_frontends::stmt::types::{Type, TypeCode};

use ops::{Helpers, IT};
use scalar::math_fn;
use tile::{has_register_tile, register_file_bits, split_tile_loops};

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
    // With instruction selection for x86, register-tile loops are split
    // into loops whose accumulators fit the 16 ymm registers (see
    // `split_tile_loops`; its budget is x86's, so ARM and HVX are left
    // as they were).
    let split;
    let module = if opts.isel.is_some() && module.target.starts_with("x86") {
        let file_bits = register_file_bits(opts.isel.as_ref());
        split = Module { funcs: module.funcs.iter().map(|f| Func { body: split_tile_loops(&f.body, file_bits), ..f.clone() }).collect(), ..module.clone() };
        &split
    } else {
        module
    };
    let externals: Vec<&Func> = module.funcs.iter().filter(|f| f.linkage != Linkage::Internal).collect();
    let main = match externals[..] {
        [f] => f,
        [] => return Err(CompileError::new(format!("module `{}` has no external function", module.name))),
        _ => return Err(CompileError::unsupported(format!("{} external functions in one module", externals.len()))),
    };
    if !module.buffers.is_empty() {
        return Err(CompileError::unsupported("constant buffers"));
    }
    // Halide's 32-bit targets (`hexagon-32-...`): see `Globals::narrow_counters`.
    let narrow_counters = module.target.split('-').nth(1) == Some("32");
    let mut g = Globals { avx512: module.target.contains("avx512"), narrow_counters, ..Globals::default() };
    if let Some(o) = &opts.isel {
        // Only instructions the module's target has, unless told otherwise.
        let mut o = o.clone();
        if o.features.is_none() {
            o.features = Some(crate::isel::features::CpuFeatures::from_halide_target(&module.target).map_err(CompileError::new)?);
        }
        g.isel = Some(Box::new(isel_emit::State::new(&o, &module.target)?));
    }
    for f in module.funcs.iter().filter(|f| f.linkage == Linkage::Internal) {
        g.tasks.insert(f.name.clone(), format!("h_task_{}", sanitize(&f.name)));
    }
    let mut bodies = String::new();
    let mut protos = String::new();
    for f in module.funcs.iter().filter(|f| f.linkage == Linkage::Internal) {
        let name = g.tasks[&f.name].clone();
        if let Some(st) = g.isel.as_mut() {
            st.begin(f, false)?;
        }
        let (proto, text) = Emitter::new(&mut g).task(f, &name)?;
        protos.push_str(&format!("{proto};\n"));
        bodies.push_str(&text);
        bodies.push('\n');
    }
    if let Some(st) = g.isel.as_mut() {
        st.begin(main, true)?;
    }
    let (proto, text) = Emitter::new(&mut g).external(main, symbol)?;
    bodies.push_str(&text);

    let mut c = String::new();
    c.push_str(&format!("// Generated by misaal-compiler from Halide module `{}` (target {}).\n", module.name, module.target));
    c.push_str("#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include \"HalideRuntime.h\"\n\n");
    // GCC 12.2's loop vectorizer (-O2 -mavx2 and above) miscompiles the
    // lane loops this C uses for ops without a rule: a select on a
    // truncated u32 load came out 0 in 6 of 1,000 random pipelines
    // (tests/random_regressions/gcc12_lane_loop_select, with a reproducer
    // without misaal). -O0, this flag and clang agree with the
    // interpreter. Other GCC releases are unchecked, so all are kept off
    // it; the intrinsics do not depend on it.
    c.push_str("#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"no-tree-loop-vectorize\")\n#endif\n\n");
    let report = g.isel.take().map(|st| st.report);
    if let Some(r) = &report {
        c.insert_str(0, &r.summary().lines().map(|l| format!("// {l}\n")).collect::<String>());
        c.push_str(&r.header);
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
        // interleaves them again: 62 instructions and no spill. Not with a
        // register tile: there the pre-allocation schedule hoists all eight
        // b loads of a k step and the tile's own stores spill around them
        // (matmul k loop: 33-35 stack stores per step with it, 32 without;
        // paired runs: matmul_bias_gelu_matmul +5%, matmul_bias_relu_matmul
        // +4%, matmul_bias_gelu +7%; conv_nn -5% though it stores 32, not 37).
        let tile = module.funcs.iter().any(|f| has_register_tile(&f.body, register_file_bits(opts.isel.as_ref())));
        if !tile {
            c.push_str("#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"schedule-insns\", \"sched-pressure\")\n#endif\n\n");
        }
        // GCC's scalar replacement of aggregates turns an accumulator tile
        // (matmul's `acc`, 32 ymm registers' worth, read and written only
        // at constant offsets) into 32 loop-carried values; with 16 ymm
        // registers the allocator then stores each twice per iteration (49
        // vector stores per k step of matmul_b2 against Halide's 28, bound
        // by one 256-bit store a cycle). Left in memory it is 32 stores:
        // matmul_b2 0.64x -> 1.0x of Halide, matmul_b4 0.77x -> 1.15x. Only
        // for such tiles: SRA of the lane arrays in stencils helps them
        // (blur5x5 0.84x of its speed without it).
        if tile {
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
    /// A 32-bit target: loops count 0..extent in `int32_t` and add the
    /// minimum with a wrapping add, the same values as the `int64_t` counter
    /// 64-bit targets use, without 64-bit register pairs that keep LLVM
    /// from Hexagon's hardware loops.
    narrow_counters: bool,
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
    /// Allocations held in vector locals, by C name ([`isel_emit::Promoted`]).
    promoted: HashMap<String, isel_emit::Promoted>,
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
        Emitter { g, out: String::new(), indent: 1, scope: Vec::new(), counter: 0, addr: false, addr_lets: HashSet::new(), invariant: Vec::new(), promoted: HashMap::new() }
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
        // No pointer: reads go through `read_host`, stores through `store`.
        if self.promoted.contains_key(&b.cname) {
            return Err(CompileError::unsupported(format!("`{name}` is held in registers")));
        }
        Ok(b.cname.clone())
    }

    /// Frees every live heap allocation (before an early return).
    fn free_all(&self) -> String {
        self.scope.iter().filter(|b| b.heap).map(|b| format!("free({}); ", b.cname)).collect()
    }
}
