//! What the C backend emits for speed, and that it still matches the
//! reference interpreter bit for bit:
//! - index arithmetic (indices and the `let`s only indices read) is plain
//!   signed C, as Halide's own `nsw` code generation; data arithmetic keeps
//!   the interpreter's wrapping helpers, so overflowing data stays exact;
//! - a scalar load from a buffer a loop never writes is read once before it;
//! - with instruction selection, a dense load wider than a register is
//!   loaded as registers (no lane loop), and GCC's predictive commoning is
//!   turned off;
//! - with instruction selection, a small accumulator read and written only
//!   in whole registers at constant offsets is held in register locals;
//!   one with any other access stays an array.
//!
//! Needs `cc` and HalideRuntime.h, as `c_backend.rs` does.

use crate::common;

use crate::common::*;
use misaal_compiler::c::{EmitOptions, emit_with};
use misaal_compiler::isel::Options;
use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::ast::Module;
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;

const INDEX: &str = r#"module name=ix, target=x86-64-linux-avx2-no_runtime
external func ix (a, w, o) {
let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)
let w = (void *)_halide_buffer_get_host((struct halide_buffer_t *)w.buffer)
let o = (void *)_halide_buffer_get_host((struct halide_buffer_t *)o.buffer)
for (o.s0.y, 0, 4) {
 let row = o.s0.y*64
 for (o.s0.x, 0, 16) {
  let i0 = (o.s0.x*4) + row
  let i1 = i0 + 1
  o[i0] = (int32)a[i1] + (int32)w[1]
  o[i1] = ((int32)a[i0]*(int32)w[0]) + (int32)a[i1]
  if (o.s0.x < 3) {
   o[i1 + 1] = (int32)w[2]
  }
 }
}
}
"#;

const WIDE: &str = r#"module name=wide, target=x86-64-linux-avx2-no_runtime
external func wide (a, o) {
let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)
let o = (void *)_halide_buffer_get_host((struct halide_buffer_t *)o.buffer)
for (o.s0.x, 0, 4) {
 let t = (uint8x64)a[ramp(o.s0.x*64, 1, 64)]
 let u = (uint8x64)a[ramp((o.s0.x*64) + 1, 1, 64)]
 o[ramp(o.s0.x*64, 1, 64)] = max(t, u)
}
}
"#;

fn parse(text: &str) -> Module {
    parse_module("k.stmt", text).expect("the Stmt parses")
}

/// Random bytes, a third of the 4-byte words INT32_MIN or INT32_MAX (so
/// that data arithmetic overflows).
fn data(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let r = xorshift(&mut s);
        let word: u32 = match r % 3 {
            0 => if r & 8 == 0 { 0x8000_0000 } else { 0x7fff_ffff },
            _ => (r >> 16) as u32,
        };
        v.extend_from_slice(&word.to_le_bytes());
    }
    v.truncate(n);
    v
}

/// Emits `m` (with isel when `isel`), runs it on `shapes` (element type and
/// extent of each 1-D buffer argument) against the interpreter; the C.
fn check(name: &str, m: &Module, isel: bool, shapes: &[(Type, i64)]) -> String {
    let opts = EmitOptions { isel: isel.then(|| Options { verdict_cache: common::test_verdict_cache(), ..Options::default() }) };
    let (prog, _) = emit_with(m, "misaal_fn", &opts).unwrap_or_else(|e| panic!("{name}: emit: {e}"));
    let dir = work_dir(name);
    std::fs::write(dir.join("prog.c"), &prog.c).unwrap();
    std::fs::write(dir.join("prog.h"), &prog.h).unwrap();
    let mut args = Vec::new();
    let mut vals = Vec::new();
    for (k, &(t, extent)) in shapes.iter().enumerate() {
        let mut b = Buffer::dense(t, &[0], &[extent]);
        b.data = data(extent as usize * elem_bytes(t), 0x5eed + k as u64);
        args.push(Arg::Buffer { elem: t, dims: vec![(0, extent)], data: b.data.clone() });
        vals.push(ArgValue::Buffer(b));
    }
    std::fs::write(dir.join("harness.c"), harness("misaal_fn", &args)).unwrap();
    cc(&dir, &["-O2", "-march=native", "prog.c", "harness.c", "-o", "prog", "-lm"]).unwrap_or_else(|e| panic!("{name}: cc (C in {}): {e}", dir.display()));
    let ours = exec(&dir, &args).unwrap_or_else(|e| panic!("{name}: run: {e}"));
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let want = Interp::new(&ops).run(external(m), vals).unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
    for (k, (o, w)) in ours.iter().zip(&want).enumerate() {
        assert!(*o == w.data, "{name}: buffer {k} differs from the interpreter; C kept in {}", dir.display());
    }
    cleanup(&dir);
    prog.c
}

fn body(c: &str) -> &str {
    &c[c.find("int misaal_fn(").expect("the function")..]
}

/// The C line declaring the variable of Stmt `let name`.
fn decl<'a>(c: &'a str, name: &str) -> &'a str {
    let pat = format!(" v_{name}_");
    c.lines().find(|l| l.contains(&pat) && l.contains(" = ")).unwrap_or_else(|| panic!("no declaration of `{name}`:\n{c}"))
}

#[test]
fn index_arithmetic_is_plain_signed_c_and_data_still_wraps() {
    check_cc();
    let c = check("emit_index", &parse(INDEX), false, &[(Type::int(32), 256), (Type::int(32), 3), (Type::int(32), 256)]);
    let b = body(&c);
    for name in ["row", "i0", "i1"] {
        let d = decl(b, name);
        assert!(!d.contains("h_add_i32") && !d.contains("h_mul_i32"), "`{name}` is index arithmetic: {d}");
    }
    // The stores' data (INT32_MIN/MAX inputs overflow) keeps the helpers.
    assert!(b.contains("h_mul_i32(") && b.contains("h_add_i32("), "{b}");
    // The index of `o[i1 + 1]` too.
    assert!(b.contains("[(int64_t)(((int32_t)(v_i1_"), "{b}");
}

#[test]
fn loop_invariant_scalar_loads_are_read_once_before_the_loop() {
    check_cc();
    let c = check("emit_licm", &parse(INDEX), false, &[(Type::int(32), 256), (Type::int(32), 3), (Type::int(32), 256)]);
    let b = body(&c);
    let first_loop = b.find("for (").expect("a loop");
    // w[0] and w[1] are read once, before the outer loop (the loop that
    // runs 4 times needs no guard); w[2] is read only under its `if`.
    let reads: Vec<usize> = b.match_indices("((int32_t *)v_w_").map(|(i, _)| i).collect();
    assert_eq!(reads.len(), 3, "{b}");
    assert!(reads[0] < first_loop && reads[1] < first_loop && reads[2] > first_loop, "{b}");
    assert!(b[..first_loop].contains("int32_t inv_"), "{b}");
}

#[test]
fn a_dense_load_wider_than_a_register_is_loaded_as_registers() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        misaal_testkit::skip("this CPU lacks AVX2");
        return;
    }
    check_cc();
    let c = check("emit_wide", &parse(WIDE), true, &[(Type::uint(8), 4 * 64 + 32), (Type::uint(8), 4 * 64)]);
    let b = body(&c);
    assert!(!b.contains("for (int l = 0;"), "a lane loop survives:\n{b}");
    assert_eq!(b.matches("_mm256_max_epu8(").count(), 2, "{b}");
    assert_eq!(b.matches("_mm256_loadu_si256(").count(), 4, "{b}");
    assert!(c.contains("#pragma GCC optimize(\"no-predictive-commoning\")"), "{}", &c[..600]);
}

#[test]
fn nothing_is_hoisted_out_of_a_loop_with_an_assert() {
    // The assert may be what keeps w[i] in bounds: w[i] stays in the loop
    // (and the code still runs right).
    let text = r#"module name=guard, target=x86-64-linux-avx2-no_runtime
external func guard (w, o) {
let w = (void *)_halide_buffer_get_host((struct halide_buffer_t *)w.buffer)
let o = (void *)_halide_buffer_get_host((struct halide_buffer_t *)o.buffer)
for (o.s0.x, 0, 8) {
 assert(o.s0.x < 8, halide_error_requirement_failed("x", "in range"))
 o[o.s0.x] = (int32)w[1]
}
}
"#;
    check_cc();
    let c = check("emit_guard", &parse(text), false, &[(Type::int(32), 2), (Type::int(32), 8)]);
    let b = body(&c);
    assert!(!b.contains("inv_"), "{b}");
    let at = b.find("((int32_t *)v_w_").expect("the load");
    assert!(at > b.find("for (").expect("the loop"), "{b}");
}

/// `acc` (int32 * 16: two ymm registers) set from `a`, updated in a loop
/// at constant offsets (plus `extra`), then read whole: scaled into `o` by
/// selected code, divided into `f` by the naive lowering (no rule divides).
fn acc_stmt(extra: &str) -> Module {
    parse(&format!(
        "module name=acc, target=x86-64-linux-avx2-no_runtime\n\
         external func acc (a, o, f) {{\n\
         let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)\n\
         let o = (void *)_halide_buffer_get_host((struct halide_buffer_t *)o.buffer)\n\
         let f = (void *)_halide_buffer_get_host((struct halide_buffer_t *)f.buffer)\n\
         for (o.s0.y, 0, 4) {{\n\
         allocate acc[int32 * 16]\n\
         produce acc {{\n\
          acc[ramp(0, 1, 8)] = (int32x8)a[ramp(o.s0.y*64, 1, 8)]\n\
          acc[ramp(8, 1, 8)] = (int32x8)a[ramp((o.s0.y*64) + 8, 1, 8)]\n\
          for (acc.s1.k, 0, 6) {{\n\
           acc[ramp(0, 1, 8)] = (int32x8)acc[ramp(0, 1, 8)] + (int32x8)a[ramp(((o.s0.y*64) + (acc.s1.k*8)) + 16, 1, 8)]\n\
           acc[ramp(8, 1, 8)] = max((int32x8)acc[ramp(8, 1, 8)], (int32x8)a[ramp(((o.s0.y*64) + (acc.s1.k*8)) + 16, 1, 8)])\n\
           {extra}\n\
          }}\n\
         }}\n\
         consume acc {{\n\
          o[ramp(o.s0.y*16, 1, 16)] = (int32x16)acc[ramp(0, 1, 16)] * x16(3)\n\
          f[ramp(o.s0.y*16, 1, 16)] = (int32x16)acc[ramp(0, 1, 16)] / x16(1001)\n\
         }}\n\
         free acc\n\
         }}\n}}\n"
    ))
}

const ACC_SHAPES: [(Type, i64); 3] = [(Type::int(32), 256), (Type::int(32), 64), (Type::int(32), 64)];

#[test]
fn a_small_accumulator_is_held_in_registers() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        misaal_testkit::skip("this CPU lacks AVX2");
        return;
    }
    check_cc();
    let c = check("emit_acc", &acc_stmt(""), true, &ACC_SHAPES);
    let b = body(&c);
    assert!(b.contains("__m256i v_acc_") && !b.contains("stack_"), "{b}");
    // The division has no selection (no rule divides by 1001; the 32-bit
    // division rules take 2 to 255, 1000 and 65535): its lane loop reads a
    // spilled copy.
    assert!(b.contains("spill_"), "{b}");
}

#[test]
fn an_accumulator_with_another_access_stays_an_array() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        misaal_testkit::skip("this CPU lacks AVX2");
        return;
    }
    check_cc();
    for (what, extra) in [
        ("variable", "acc[ramp((acc.s1.k % 2)*8, 1, 8)] = (int32x8)acc[ramp((acc.s1.k % 2)*8, 1, 8)] + x8(1)"),
        ("scalar", "acc[3] = (int32)acc[3] + acc.s1.k"),
        // 128 bits where the others are 256: another partition.
        ("narrow", "acc[ramp(4, 1, 4)] = (int32x4)acc[ramp(4, 1, 4)] + x4(1)"),
    ] {
        let c = check(&format!("emit_acc_{what}"), &acc_stmt(extra), true, &ACC_SHAPES);
        let b = body(&c);
        assert!(b.contains("stack_") && !b.contains("__m256i v_acc_"), "{what}:\n{b}");
    }
}
