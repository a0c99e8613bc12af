//! A root whose value is wrapped in scalar `let`s (`let t130 = x + y in
//! min(load(t130*64 + 256), ...)`, as median3x3's Stmt has it) is lowered
//! from its selection: its load indices name the `let`, so the C binds it.
//! It once went naive ("unknown variable `t130`") and ran at 0.26x Halide.

use crate::common;
use misaal_compiler::c::{EmitOptions, emit_with};
use misaal_compiler::isel::Options;
use misaal_frontends::stmt::parse_module;

#[test]
fn median3x3_roots_with_scalar_lets_are_selected() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks/stmt/median3x3.stmt");
    let text = std::fs::read_to_string(path).expect("median3x3.stmt");
    assert!(text.contains("= let t130 = "), "the fixture still has a let-wrapped root");
    let m = parse_module(path, &text).expect("parses");
    let isel = Options { verdict_cache: common::test_verdict_cache(), ..Options::default() };
    let (prog, report) = emit_with(&m, "misaal_fn", &EmitOptions { isel: Some(isel) }).expect("compiles");
    let report = report.expect("a report");
    assert!(report.naive_roots.is_empty(), "{}", report.summary());
    assert_eq!(report.fallback_exprs(), 0, "{}", report.summary());
    // median3x3 targets avx512_zen4: its u8 rows are held in zmm registers.
    assert!(prog.c.contains("_mm512_min_epu8") && prog.c.contains("_mm512_max_epu8"), "{}", report.summary());
}
