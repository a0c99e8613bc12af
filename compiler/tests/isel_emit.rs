//! Emission of selected instructions as native vector C
//! (`c::emit_with` with `isel`): the C calls the selected intrinsics by
//! name, compiles with `cc -O2 -march=native`, and runs bit-exact against
//! the reference interpreter on random and edge-value inputs; without rules
//! it still compiles (naively) and reports its fallbacks.
//!
//! The kernels are 256-bit (AVX2). On a CPU without AVX2 the tests that run
//! the code are ignored (counted as skipped, the feature in their names),
//! never passed. Needs `cc` and HalideRuntime.h, as `c_backend.rs` does.

mod common;

use common::*;
use libtest_mimic::{Arguments, Failed, Trial};
use misaal_compiler::c::{EmitOptions, IselReport, emit, emit_with};
use misaal_compiler::isel::Options;
use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::ast::{ArgKind, Module};
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;

/// Halide's `fpir_u8` sample (frontends/src/stmt/samples) at 32 lanes
/// instead of 64: a loop of 256-bit u8 vectors and a tail.
fn fpir_u8_32() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../frontends/src/stmt/samples/fpir_u8.stmt");
    let text = std::fs::read_to_string(path).expect("fpir_u8.stmt");
    let mut out = String::new();
    // Every `64` that is a lane count or a vector extent (not `uint64` or `x86-64`).
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("64") && (i == 0 || !b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'x') && !text[..i].ends_with("x86-") && !b.get(i + 2).is_some_and(|c| c.is_ascii_alphanumeric())
        {
            out.push_str("32");
            i += 2;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    assert!(out.contains("(uint8x32)rounding_halving_add") && out.contains("(uint64)0") && out.contains("target=x86-64-") && !out.contains("x64"), "{out}");
    out
}

/// The kernel of `tests/isel.rs`: the u8 expression at constant offsets and
/// the `vpmaddwd`-shaped pairwise i16 dot product.
const KERNEL: &str = include_str!("data/isel_kernel.stmt");

/// A loop of `vpmaddwd`-shaped dot products (for the timing comparison).
const DOT: &str = r#"module name=dot, target=x86-64-linux-avx2-no_runtime
external func dot (c, d, acc) {
let c = (void *)_halide_buffer_get_host((struct halide_buffer_t *)c.buffer)
let d = (void *)_halide_buffer_get_host((struct halide_buffer_t *)d.buffer)
let acc = (void *)_halide_buffer_get_host((struct halide_buffer_t *)acc.buffer)
for (acc.s0.x, 0, 512) {
 let p = (int16x16)c[ramp(acc.s0.x*16, 1, 16)]
 let q = (int16x16)d[ramp(acc.s0.x*16, 1, 16)]
 acc[ramp(acc.s0.x*8, 1, 8)] = (int32x8)vector_reduce_add((int32x16)widening_mul(p, q))
}
}
"#;

/// A broadcast constant as a vector operand (set1), a shift by a constant
/// (an `imm8` operand) and a 128-bit instruction on `__m128i`.
const IMM: &str = r#"module name=imm, target=x86-64-linux-avx2-no_runtime
external func imm (a, h, out, out16, out8) {
let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)
let h = (void *)_halide_buffer_get_host((struct halide_buffer_t *)h.buffer)
let out = (void *)_halide_buffer_get_host((struct halide_buffer_t *)out.buffer)
let out16 = (void *)_halide_buffer_get_host((struct halide_buffer_t *)out16.buffer)
let out8 = (void *)_halide_buffer_get_host((struct halide_buffer_t *)out8.buffer)
let t = (uint8x32)a[ramp(0, 1, 32)]
out[ramp(0, 1, 32)] = (uint8x32)saturating_add(t, x32((uint8)200))
let w = (uint16x16)h[ramp(0, 1, 16)]
out16[ramp(0, 1, 16)] = (uint16x16)shift_left(w, x16((uint16)3))
let s = (uint8x16)a[ramp(0, 1, 16)]
let s2 = (uint8x16)a[ramp(16, 1, 16)]
out8[ramp(0, 1, 16)] = (uint8x16)rounding_halving_add(s, s2)
}
"#;

/// Sums reduced to a scalar and accumulated in `acc[0]`, `acc[1]`, as
/// l2norm and softmax do: a sum of i16 squares (vpmaddwd, then halves
/// added) and a sum of u16 widened to i32, each folded to one lane by
/// x86.reduce-add-i32x4 and stored as a scalar.
const SUMS: &str = r#"module name=sums, target=x86-64-linux-avx2-no_runtime
external func sums (c, d, acc) {
let c = (void *)_halide_buffer_get_host((struct halide_buffer_t *)c.buffer)
let d = (void *)_halide_buffer_get_host((struct halide_buffer_t *)d.buffer)
let acc = (void *)_halide_buffer_get_host((struct halide_buffer_t *)acc.buffer)
acc[0] = 0
acc[1] = 0
for (acc.s1.k, 0, 16) {
 let p = (int16x64)c[ramp(acc.s1.k*64, 1, 64)]
 acc[0] = (int32)vector_reduce_add((int32x64)widening_mul(p, p)) + acc[0]
 acc[1] = (int32)vector_reduce_add(int32x32((uint16x32)d[ramp(acc.s1.k*32, 1, 32)])) + acc[1]
}
}
"#;

/// An accumulator tile of 1 KB (32 ymm registers) read and written at
/// constant offsets in a loop, as matmul's `acc`; `VAR` indexes it by the
/// loop variable instead.
fn tile(index: &str) -> String {
    format!(
        r#"module name=tile, target=x86-64-linux-avx2-no_runtime
external func tile (b, out) {{
let b = (void *)_halide_buffer_get_host((struct halide_buffer_t *)b.buffer)
let out = (void *)_halide_buffer_get_host((struct halide_buffer_t *)out.buffer)
allocate acc[int32 * 256]
produce acc {{
 acc[ramp(0, 1, 16)] = x16(0)
 for (acc.s1.k, 0, 4) {{
  acc[ramp({index}, 1, 16)] = acc[ramp({index}, 1, 16)] + int32x16((int16x16)b[ramp(acc.s1.k*16, 1, 16)])
 }}
}}
consume acc {{
 out[ramp(0, 1, 16)] = acc[ramp(0, 1, 16)]
}}
free acc
}}
"#
    )
}

/// Every instantiation proved in this process: no shared cache file.
/// The hand-written x86 rules (rulesets/x86_hand.egg), proved in process:
/// a small, stable ruleset whose rule names and choices the assertions
/// cite (the default, synthesized rulesets/x86.egg, is tested by the
/// benchmarks and tests/shipped_verdicts.rs).
fn isel_opts() -> Options {
    Options { verdict_cache: common::test_verdict_cache(), rules: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../rulesets/x86_hand.egg").into()), ..Options::default() }
}

fn no_rules() -> Options {
    Options { rules_text: Some("(ruleset x86)\n".into()), ..isel_opts() }
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// `n` bytes of elements `size` bytes wide: uniform random, or (edge) 40%
/// of elements 0, all ones, signed MIN or signed MAX, the rest random.
fn input(n: usize, size: usize, edge: bool, s: &mut u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(n * size);
    for _ in 0..n {
        let r = xorshift(s);
        let mut e: Vec<u8> = (0..size).map(|k| (r >> (8 * (k % 8))) as u8).collect();
        if edge && r % 10 < 4 {
            let kind = (r >> 60) % 4;
            for (k, byte) in e.iter_mut().enumerate() {
                let top = k + 1 == size;
                *byte = match kind {
                    0 => 0,
                    1 => 0xff,
                    2 => {
                        if top {
                            0x80
                        } else {
                            0
                        }
                    }
                    _ => {
                        if top {
                            0x7f
                        } else {
                            0xff
                        }
                    }
                };
            }
        }
        v.extend(e);
    }
    v
}

/// Emits `m` (with `isel` if given), compiles it with a harness for
/// `shapes` (element type, extent of each 1-D buffer, in argument order)
/// and runs it on one random and one edge-value input set against the
/// reference interpreter. Returns the C and the isel report.
fn check(name: &str, m: &Module, isel: Option<Options>, shapes: &[(Type, i64)]) -> Result<(String, Option<IselReport>), String> {
    let (prog, report) = emit_with(m, "misaal_fn", &EmitOptions { isel }).map_err(|e| format!("{name}: emit: {e}"))?;
    let dir = work_dir(name);
    std::fs::write(dir.join("prog.c"), &prog.c).unwrap();
    std::fs::write(dir.join("prog.h"), &prog.h).unwrap();
    let func = external(m);
    assert_eq!(func.args.len(), shapes.len(), "{name}: one shape per argument");
    assert!(func.args.iter().all(|a| matches!(a.kind, ArgKind::Buffer { .. })));
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let mut built = false;
    for (set, edge) in [(0u64, false), (1, true)] {
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (set + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut args = Vec::new();
        let mut vals = Vec::new();
        for &(t, extent) in shapes {
            let mut b = Buffer::dense(t, &[0], &[extent]);
            b.data = input(extent as usize, elem_bytes(t), edge, &mut state);
            args.push(Arg::Buffer { elem: t, dims: vec![(0, extent)], data: b.data.clone() });
            vals.push(ArgValue::Buffer(b));
        }
        if !built {
            std::fs::write(dir.join("harness.c"), harness("misaal_fn", &args)).unwrap();
            cc(&dir, &["-O2", "-march=native", "prog.c", "harness.c", "-o", "prog", "-lm"]).map_err(|e| format!("{name}: cc (C kept in {}): {e}", dir.display()))?;
            built = true;
        }
        let ours = exec(&dir, &args).map_err(|e| format!("{name}: run: {e}"))?;
        let want = Interp::new(&ops).run(func, vals).map_err(|e| format!("{name}: interpreter: {e}"))?;
        for (k, (o, w)) in ours.iter().zip(&want).enumerate() {
            if *o != w.data {
                let first = o.iter().zip(&w.data).position(|(a, b)| a != b).unwrap_or(0);
                return Err(format!("{name} ({} inputs): buffer {k} differs from the interpreter first at byte {first}; C kept in {}", if edge { "edge" } else { "random" }, dir.display()));
            }
        }
    }
    cleanup(&dir);
    Ok((prog.c, report))
}

fn parse(text: &str) -> Module {
    parse_module("k.stmt", text).expect("the Stmt parses")
}

/// The body of the C function, without the helpers (whose names say what
/// the naive lowering used).
fn body(c: &str) -> &str {
    &c[c.find("int misaal_fn(").expect("the function")..]
}

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond { Ok(()) } else { Err(msg().into()) }
}

fn fpir_u8_avx2() -> Result<(), Failed> {
    let m = parse(&fpir_u8_32());
    let u8 = Type::uint(8);
    let n = 32 * 40 + 7; // 40 loop iterations and a tail
    let (c, report) = check("isel_fpir_u8", &m, Some(isel_opts()), &[(u8, n), (u8, n), (u8, n)])?;
    let r = report.expect("a report with isel");
    eprint!("{}", r.summary());
    // Every root is lowered from its selection: the saturating u16 -> u8
    // cast is vpminuw + vpackuswb (x86.packus-u16-u8), the last op that
    // used to send these roots to the fused lane loop; the output matches
    // the interpreter (`check`). A root that keeps a naive op is covered by
    // `avx2_without_rules_compiles_naively_and_counts_fallbacks`.
    ensure(r.naive_roots.is_empty() && r.fused_roots == 0 && r.vector_roots > 0, || r.summary())?;
    ensure(r.fallback_exprs() == 0 && r.intrinsics.contains_key("_mm256_packus_epi16"), || r.summary())?;
    ensure(c.contains(&format!("fallback_exprs {}", r.fallback_exprs())), || c[..400].to_string())?;
    ensure(c.starts_with("// isel:") && c.contains("#include <immintrin.h>"), || c[..200].to_string())?;
    Ok(())
}

fn kernel_avx2() -> Result<(), Failed> {
    let m = parse(KERNEL);
    let (c, report) = check("isel_kernel", &m, Some(isel_opts()), &[(Type::uint(8), 32), (Type::uint(8), 32), (Type::int(16), 16), (Type::int(16), 16), (Type::uint(8), 32), (Type::int(32), 8)])?;
    let r = report.expect("a report");
    eprint!("{}", r.summary());
    // The dot product is one vpmaddwd between two vector loads and a vector store.
    ensure(body(&c).contains("= _mm256_madd_epi16(") && r.intrinsics.get("_mm256_storeu_si256").is_some_and(|&k| k >= 1), || c.clone())?;
    ensure(!c.contains("h_wmul_i16_i16"), || format!("a per-lane dot product survives:\n{c}"))?;
    // The root with the u8 average is lowered wholly too (its saturating
    // u16 -> u8 cast by x86.packus-u16-u8).
    ensure(r.fused_roots == 0 && r.fallback_exprs() == 0, || r.summary())?;
    Ok(())
}

fn dot_avx2() -> Result<(), Failed> {
    let m = parse(DOT);
    let shapes = [(Type::int(16), 16 * 512), (Type::int(16), 16 * 512), (Type::int(32), 8 * 512)];
    let (c, report) = check("isel_dot", &m, Some(isel_opts()), &shapes)?;
    let r = report.expect("a report");
    // The loop body is two vector loads, vpmaddwd and a vector store to
    // `acc` (the lets' lane arrays are stored too, for naive uses; here
    // there are none and cc drops them): no lane loop, nothing naive.
    let b = body(&c);
    ensure(r.fallback_exprs() == 0 && r.selected_fallbacks == 0, || r.summary())?;
    ensure(!b.contains("for (int l = 0;"), || format!("a lane loop survives:\n{c}"))?;
    ensure(b.matches("_mm256_storeu_si256((__m256i *)((int32_t *)").count() == 1, || c.clone())?;
    for (i, k) in [("_mm256_loadu_si256", 2), ("_mm256_madd_epi16", 1)] {
        ensure(b.matches(&format!("{i}(")).count() == k, || format!("{i} is not called {k} time(s):\n{c}"))?;
    }
    Ok(())
}

fn imm_avx2() -> Result<(), Failed> {
    let m = parse(IMM);
    let (u8, u16) = (Type::uint(8), Type::uint(16));
    let (c, report) = check("isel_imm", &m, Some(isel_opts()), &[(u8, 32), (u16, 16), (u8, 32), (u16, 16), (u8, 16)])?;
    let r = report.expect("a report");
    eprint!("{}", r.summary());
    let b = body(&c);
    ensure(b.contains("_mm256_set1_epi8((char)200LL)") && b.contains("_mm256_adds_epu8("), || c.clone())?;
    ensure(b.contains("_mm256_slli_epi16(") && b.contains(", 3);"), || c.clone())?;
    ensure(b.contains("__m128i") && b.contains("_mm_avg_epu8(") && b.contains("_mm_loadu_si128(") && b.contains("_mm_storeu_si128("), || c.clone())?;
    ensure(r.fallback_exprs() == 0 && !b.contains("for (int l = 0;"), || format!("{}\n{c}", r.summary()))?;
    Ok(())
}

fn without_rules_avx2() -> Result<(), Failed> {
    let m = parse(&fpir_u8_32());
    let u8 = Type::uint(8);
    let n = 32 * 3 + 5;
    let (c, report) = check("isel_no_rules", &m, Some(no_rules()), &[(u8, n), (u8, n), (u8, n)])?;
    let r = report.expect("a report");
    eprint!("{}", r.summary());
    ensure(!c.contains("_mm256_avg_epu8") && !c.contains("_mm256_adds_epu8"), || c.clone())?;
    // Every Halide op of both roots is a naive fallback, and counted: 9 in
    // the u8 expression (see tests/isel.rs), in the loop and in the tail,
    // each lowered there; selection counts the broadcast of 3, one node
    // for both, once.
    ensure(r.selected_fallbacks == 17 && r.naive_nodes == 18 && r.fallback_exprs() == 18, || r.summary())?;
    // The two stores select nothing: each is one fused naive lane loop.
    ensure(r.fused_roots == 2 && r.naive_roots.is_empty(), || r.summary())?;
    ensure(c.contains("fallback_exprs 18"), || c[..300].to_string())?;
    // With the rules, fewer.
    let with = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(isel_opts()) }).map_err(|e| e.to_string())?.1.expect("a report");
    ensure(with.fallback_exprs() < r.fallback_exprs(), || with.summary())?;
    Ok(())
}

fn default_is_unchanged() -> Result<(), Failed> {
    let m = parse(&fpir_u8_32());
    let plain = emit(&m, "misaal_fn").map_err(|e| e.to_string())?;
    let (same, report) = emit_with(&m, "misaal_fn", &EmitOptions::default()).map_err(|e| e.to_string())?;
    ensure(report.is_none() && plain == same, || "emit_with without isel differs from emit".into())?;
    ensure(!plain.c.contains("immintrin") && !plain.c.contains("_mm256_"), || plain.c.clone())?;
    Ok(())
}

fn sums_avx2() -> Result<(), Failed> {
    let m = parse(SUMS);
    let shapes = [(Type::int(16), 64 * 16), (Type::uint(16), 32 * 16), (Type::int(32), 2)];
    let (c, report) = check("isel_sums", &m, Some(isel_opts()), &shapes)?;
    let r = report.expect("a report");
    eprint!("{}", r.summary());
    let b = body(&c);
    // Both scalar stores are selected, not left to the naive lowering: the
    // squares by vpmaddwd, each sum folded by vpunpckhqdq/vpshufd/vpaddd and
    // read out by vpextrd; the `+ acc[k]` is scalar C, not a fallback.
    ensure(r.naive_roots.is_empty() && r.fused_roots == 0 && r.fallback_exprs() == 0, || r.summary())?;
    ensure(r.scalar_nodes == 2, || r.summary())?;
    ensure(b.matches("_mm_extract_epi32(").count() == 2, || c.clone())?;
    ensure(b.contains("_mm256_madd_epi16(") || b.contains("_mm_madd_epi16("), || format!("no vpmaddwd:\n{c}"))?;
    for i in ["_mm256_cvtepu16_epi32(", "_mm_unpackhi_epi64(", "_mm_shuffle_epi32("] {
        ensure(b.contains(i), || format!("no {i}:\n{c}"))?;
    }
    ensure(!b.contains("for (int l = 0;") && !b.contains("h_wmul"), || format!("a lane loop survives:\n{c}"))?;
    Ok(())
}

fn register_tile_keeps_sra_off() -> Result<(), Failed> {
    // GCC's SRA splits a constant-offset tile into loop-carried values that
    // its allocator stores twice per iteration: off for such a tile only.
    let pragma = "#pragma GCC optimize(\"no-tree-sra\")";
    let with = emit_with(&parse(&tile("16")), "misaal_fn", &EmitOptions { isel: Some(isel_opts()) }).map_err(|e| e.to_string())?.0;
    ensure(with.c.contains(pragma), || with.c[..600.min(with.c.len())].to_string())?;
    let var = emit_with(&parse(&tile("acc.s1.k*16")), "misaal_fn", &EmitOptions { isel: Some(isel_opts()) }).map_err(|e| e.to_string())?.0;
    ensure(!var.c.contains(pragma), || "a tile indexed by the loop variable turned SRA off".into())?;
    let dot = emit_with(&parse(DOT), "misaal_fn", &EmitOptions { isel: Some(isel_opts()) }).map_err(|e| e.to_string())?.0;
    ensure(!dot.c.contains(pragma), || "no tile, yet SRA is off".into())?;
    Ok(())
}

/// Times one call of the DOT kernel, naive against isel, in one run (not a
/// CI check: `cargo test --test isel_emit -- --ignored dot_timing`).
fn dot_timing() -> Result<(), Failed> {
    let m = parse(DOT);
    let shapes = [(Type::int(16), 16 * 512), (Type::int(16), 16 * 512), (Type::int(32), 8 * 512)];
    let mut us = Vec::new();
    for (what, isel) in [("naive", None), ("isel", Some(isel_opts()))] {
        let (prog, _) = emit_with(&m, "misaal_fn", &EmitOptions { isel }).map_err(|e| e.to_string())?;
        let dir = work_dir(&format!("isel_timing_{what}"));
        std::fs::write(dir.join("prog.c"), &prog.c).unwrap();
        std::fs::write(dir.join("prog.h"), &prog.h).unwrap();
        let mut args = String::new();
        let mut decls = String::new();
        for (k, (t, n)) in shapes.iter().enumerate() {
            let ct = if t.bits == 16 { "int16_t" } else { "int32_t" };
            decls.push_str(&format!(
                "  static {ct} h{k}[{n}]; for (int i = 0; i < {n}; i++) h{k}[i] = ({ct})(i * 2654435761u);\n  static halide_dimension_t d{k}[1] = {{{{0, {n}, 1, 0}}}};\n  struct halide_buffer_t b{k}; memset(&b{k}, 0, sizeof b{k}); b{k}.host = (uint8_t *)h{k}; b{k}.type.code = halide_type_int; b{k}.type.bits = {}; b{k}.type.lanes = 1; b{k}.dimensions = 1; b{k}.dim = d{k};\n",
                t.bits
            ));
            args.push_str(&format!("{}&b{k}", if k > 0 { ", " } else { "" }));
        }
        let main = format!(
            "#include <stdio.h>\n#include <string.h>\n#include <time.h>\n#include \"prog.h\"\nstatic double now(void) {{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }}\nint main(void) {{\n{decls}  for (int w = 0; w < 100; w++) misaal_fn({args});\n  double best = 1e30;\n  for (int r = 0; r < 15; r++) {{ double t0 = now(); for (int i = 0; i < 1000; i++) misaal_fn({args}); double t = (now() - t0) / 1000; if (t < best) best = t; }}\n  printf(\"%f\\n\", best);\n  return 0;\n}}\n"
        );
        std::fs::write(dir.join("time.c"), main).unwrap();
        cc(&dir, &["-O2", "-march=native", "prog.c", "time.c", "-o", "time", "-lm"]).map_err(|e| format!("cc: {e}"))?;
        let out = std::process::Command::new(dir.join("time")).output().map_err(|e| e.to_string())?;
        let t: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().map_err(|e| format!("{e}"))?;
        eprintln!("dot (512 x vpmaddwd): {what} {t:.3} us per call");
        us.push(t);
        cleanup(&dir);
    }
    eprintln!("dot: isel is {:.2}x the naive lowering's speed (same run)", us[0] / us[1]);
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let avx2 = std::arch::is_x86_feature_detected!("avx2");
    let trials = vec![
        Trial::test("default_emit_is_unchanged_without_isel", default_is_unchanged),
        Trial::test("avx2_fpir_u8_32_calls_intrinsics_and_matches_the_interpreter", fpir_u8_avx2).with_ignored_flag(!avx2),
        Trial::test("avx2_madd_kernel_calls_intrinsics_and_matches_the_interpreter", kernel_avx2).with_ignored_flag(!avx2),
        Trial::test("avx2_set1_immediates_and_128_bit_match_the_interpreter", imm_avx2).with_ignored_flag(!avx2),
        Trial::test("avx2_without_rules_compiles_naively_and_counts_fallbacks", without_rules_avx2).with_ignored_flag(!avx2),
        Trial::test("avx2_dot_loop_is_vpmaddwd_and_matches_the_interpreter", dot_avx2).with_ignored_flag(!avx2),
        Trial::test("avx2_scalar_sums_are_selected_and_match_the_interpreter", sums_avx2).with_ignored_flag(!avx2),
        Trial::test("register_tile_turns_gcc_sra_off_only_for_tiles", register_tile_keeps_sra_off),
        Trial::test("avx2_dot_timing_isel_vs_naive", dot_timing).with_ignored_flag(true),
    ];
    if !avx2 {
        eprintln!("this CPU lacks AVX2: the avx2_* tests are ignored (skipped), not passed");
    }
    libtest_mimic::run(&args, trials).exit();
}
