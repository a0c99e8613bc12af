//! The code uses only instructions the target has: the Stmt header's
//! `target=` decides unless `Options::features` says otherwise. One
//! kernel compiled for two targets gets two instruction sets.

use crate::common;
use misaal_compiler::c::{EmitOptions, IselReport, emit_with};
use misaal_compiler::isel::Options;
use misaal_compiler::isel::features::CpuFeatures;
use misaal_frontends::stmt::parse_module;

const KERNEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks/stmt/max_pool.stmt");

fn compile(header_target: Option<&str>, features: Option<&str>) -> (String, IselReport) {
    let mut text = std::fs::read_to_string(KERNEL).expect("max_pool.stmt");
    if let Some(t) = header_target {
        let first = text.lines().next().expect("a module line").to_string();
        let (head, _) = first.split_once("target=").expect("a target");
        text = text.replacen(&first, &format!("{head}target={t}"), 1);
    }
    let m = parse_module("max_pool.stmt", &text).expect("parses");
    let features = features.map(|f| CpuFeatures::from_feature_list(f).expect("known features"));
    let isel = Options { verdict_cache: common::test_verdict_cache(), features, ..Options::default() };
    let (prog, report) = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(isel) }).expect("compiles");
    (prog.c, report.expect("a report"))
}

fn widths(c: &str) -> (bool, bool) {
    (c.contains("_mm256_"), c.contains("_mm512_"))
}

#[test]
fn avx2_and_sse41_targets_get_different_instructions() {
    let (avx2, r2) = compile(None, Some("avx2"));
    let (sse41, r41) = compile(None, Some("sse41"));
    assert!(widths(&avx2).0, "AVX2 code uses 256-bit intrinsics:\n{}", r2.summary());
    assert_eq!(widths(&sse41), (false, false), "SSE4.1 code has no 256/512-bit intrinsic:\n{}", r41.summary());
    let left_out = |r: &IselReport| r.selections.iter().map(|(_, s)| s.rules.outside_target.len()).sum::<usize>();
    assert!(left_out(&r41) > left_out(&r2), "SSE4.1 leaves out the AVX2 instances");
    assert!(r41.summary().contains("isel: target sse41"), "{}", r41.summary());
    for (_, sel) in &r41.selections {
        for e in &sel.rules.outside_target {
            // An AVX2 instance needs avx2; a 512-bit one is also wider
            // than the 256-bit registers a CPU without AVX-512F has.
            assert!(e.reason.contains("needs avx") || e.reason.contains("wider than this compile's 256-bit registers"), "{}: {}", e.name, e.reason);
        }
    }
}

#[test]
fn the_stmt_header_decides_by_default() {
    let (c, r) = compile(Some("x86-64-linux-sse41-no_runtime"), None);
    assert_eq!(widths(&c), (false, false), "{}", r.summary());
    assert!(r.summary().contains("isel: target x86-64-linux-sse41-no_runtime"), "{}", r.summary());
    let (c, r) = compile(Some("x86-64-linux-avx2-no_runtime"), None);
    assert!(widths(&c).0, "{}", r.summary());
}

#[test]
fn a_header_of_no_known_isa_is_refused_with_its_target() {
    // x86, ARM and HVX headers each select their ISA (ARM's NEON output is
    // checked in tests/arm_kernels.rs, which skips without the cross tools
    // that emission reads arm_neon.h's types from); anything else is refused.
    let text = std::fs::read_to_string(KERNEL).unwrap();
    let first = text.lines().next().unwrap().to_string();
    let m = parse_module("max_pool.stmt", &text.replacen(&first, "module name=output, target=mips-32-linux-no_runtime", 1)).unwrap();
    let err = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(Options { verdict_cache: common::test_verdict_cache(), ..Options::default() }) }).err().expect("refused");
    assert!(err.to_string().contains("mips-32-linux-no_runtime") && err.to_string().contains("none of x86-64, arm-64, hexagon-32"), "{err}");
}
