//! Benchmark kernels whose roots went to the fused naive lane loop until a
//! rule of rulesets/x86_hand.egg covered their last naive op: each now selects
//! every op (no fallback) and uses the instruction the rule names. Every
//! instantiation is proved in this process (no shared verdict cache), so a
//! rule that stops proving fails here too. Bit-exactness against Halide and
//! the interpreter is `misaal bench`'s (and bench_kernels.rs's) job.

use crate::common;
use misaal_compiler::c::{EmitOptions, IselReport, emit_with};
use misaal_compiler::isel::Options;
use misaal_frontends::stmt::parse_module;

/// The C and the isel report of benchmarks/stmt/`kernel`.stmt.
fn select(kernel: &str) -> (String, IselReport) {
    let path = format!("{}/../benchmarks/stmt/{kernel}.stmt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let m = parse_module(&path, &text).expect("parses");
    // Saturation stops at 2 s by default; an unoptimized test build (or a
    // loaded machine) can need longer for matmul_bias_gelu, and a time limit
    // would then leave fallbacks that say nothing about the rules.
    let limits = misaal_compiler::isel::schedule::Limits { time: std::time::Duration::from_secs(600), ..Default::default() };
    let isel = Options { verdict_cache: common::test_verdict_cache(), limits, ..Options::default() };
    let (prog, report) = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(isel) }).expect("compiles");
    (prog.c, report.expect("a report"))
}

/// No naive root, no fused root, no naive op.
fn all_selected(kernel: &str, r: &IselReport) {
    assert!(r.naive_roots.is_empty() && r.fused_roots == 0 && r.fallback_exprs() == 0, "{kernel}: {}", r.summary());
}

fn uses(kernel: &str, r: &IselReport, c: &str, intrinsic: &str) {
    assert!(r.intrinsics.contains_key(intrinsic) && c.contains(&format!("{intrinsic}(")), "{kernel} does not use {intrinsic}: {}", r.summary());
}

/// The intrinsics of an instruction family at every register width:
/// `mulhi_epu16` is `_mm_`, `_mm256_` and `_mm512_mulhi_epu16` (the
/// benchmarks target avx512_zen4, so their values are held in zmm).
fn family(f: &str) -> [String; 3] {
    [format!("_mm_{f}"), format!("_mm256_{f}"), format!("_mm512_{f}")]
}

/// Some width of instruction family `f` is used.
fn uses_family(kernel: &str, r: &IselReport, c: &str, f: &str) {
    let hit = family(f).into_iter().find(|i| r.intrinsics.contains_key(i) && c.contains(&format!("{i}(")));
    assert!(hit.is_some(), "{kernel} does not use {f} at any width: {}", r.summary());
}

/// `x / 9` on u16 (x86.div-u16-mulhi): vpmulhuw by 0xE38F, then vpsrlw 3.
#[test]
fn blur3x3_divides_by_9_with_mulhi() {
    let (c, r) = select("blur3x3");
    all_selected("blur3x3", &r);
    uses_family("blur3x3", &r, &c, "mulhi_epu16");
    uses_family("blur3x3", &r, &c, "srli_epi16");
    // The magic number, as the emitter writes a u16 constant either way.
    assert!(c.contains("58255") || c.contains("-7281"), "no 0xE38F in the C");
}

/// `x / 25` needs the 17-bit multiplier (x86.div-u16-mulhi-avg).
#[test]
fn blur5x5_divides_by_25_with_mulhi_and_avg() {
    let (c, r) = select("blur5x5");
    all_selected("blur5x5", &r);
    uses_family("blur5x5", &r, &c, "mulhi_epu16");
    uses_family("blur5x5", &r, &c, "avg_epu16");
}

/// The requantize chain: rounding_mul_shift_right by 31 (vpmuldq), the
/// rounding shift by a runtime amount (vpsravd/vpsllvd), the saturating
/// narrowing, all vector.
#[test]
fn mul_requantizes_with_vector_instructions() {
    let (c, r) = select("mul");
    all_selected("mul", &r);
    uses_family("mul", &r, &c, "mul_epi32");
    uses_family("mul", &r, &c, "srav_epi32");
    uses_family("mul", &r, &c, "sllv_epi32");
}

/// `a*x + b*y` on i16 -> i32 is one vpmaddwd per 8 lanes (x86.madd-pair).
#[test]
fn add_fuses_two_products_into_madd() {
    let (c, r) = select("add");
    all_selected("add", &r);
    uses_family("add", &r, &c, "madd_epi16");
    assert!(family("mullo_epi32").iter().all(|i| !r.intrinsics.contains_key(i)), "add still multiplies with vpmulld: {}", r.summary());
}

/// u16 <-> i16 casts are free (x86.reinterpret-16); GELU's select on an
/// i16 comparison is vpcmpgtw + vpblendvb (x86.select-lt-i16-i32).
#[test]
fn sobel5x5_and_gelu_have_no_fallback() {
    let (_, r) = select("sobel5x5");
    all_selected("sobel5x5", &r);
    let (c, r) = select("matmul_bias_gelu");
    all_selected("matmul_bias_gelu", &r);
    uses("matmul_bias_gelu", &r, &c, "_mm256_blendv_epi8");
}
