//! Constant vectors (issue 30): a vector expression of constants with a
//! `ramp` or a comparison in it (Halide's GuardWithIf tail predicate
//! `ramp(0, 1, 24) <= x24(7)`) is computed at compile time by the reference
//! interpreter and emitted as a `static const` array, never a naive op; a
//! load or store under such a predicate touches only its active lanes,
//! without a per-lane branch. Fixtures: `data/const_predicate.stmt` (AVX2,
//! run natively under AddressSanitizer, so a read of an inactive lane past
//! a buffer's end fails) and `data/const_mask_zen4.stmt` (AVX-512, a
//! constant select mask as a k register; run natively or against SIMDe).

use crate::common;
use misaal_compiler::c::{EmitOptions, IselReport, emit_with};
use misaal_compiler::isel::Options;
use misaal_compiler::isel::encode::{Encoder, Op, is_constant_vector};
use misaal_frontends::stmt::ast::Module;
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(name: &str) -> Module {
    let text = std::fs::read_to_string(root().join("compiler/tests/data").join(name)).unwrap();
    parse_module(name, &text).expect("the Stmt parses")
}

/// The bundled x86 rules (their shipped verdicts), or with `extra` rule
/// files the hand-written ones and those, proved in process (as
/// tests/avx512_emit.rs).
fn opts(extra: &[&str], features: Option<&str>) -> Options {
    let features = features.map(|f| misaal_compiler::isel::features::CpuFeatures::from_feature_list(f).expect("known features"));
    let base = Options { verdict_cache: common::test_verdict_cache(), features, ..Options::default() };
    if extra.is_empty() {
        return base;
    }
    let mut files = vec![root().join("rulesets/x86_hand.egg")];
    files.extend(extra.iter().map(|f| root().join(f)));
    let text = misaal_rulesets::read_sources(&files).expect("rule files read");
    Options { rules: Some(files[0].clone()), rules_text: Some(text), ..base }
}

fn compile(m: &Module, isel: Options) -> (misaal_compiler::c::CProgram, IselReport) {
    let (p, r) = emit_with(m, "misaal_fn", &EmitOptions { isel: Some(isel) }).expect("compiles");
    (p, r.expect("a report"))
}

fn body(c: &str) -> &str {
    &c[c.find("int misaal_fn(").expect("the function")..]
}

#[test]
fn the_encoder_takes_a_tail_predicate_as_one_leaf_and_keeps_broadcasts() {
    let m = fixture("const_predicate.stmt");
    let mut enc = Encoder::new();
    enc.stmt(&common::external(&m).body);
    // `let t12 = ramp(0, 1, 32) <= x32(20)` is one leaf, no ramp or le op.
    let t12 = enc.roots.iter().find(|r| r.label == "let t12").expect("a root for t12");
    assert!(matches!(&enc.dag.nodes[t12.node].op, Op::Leaf { text, bits: 32 } if text == "ramp(0, 1, 32) <= x32(20)"), "{:?}", enc.dag.nodes[t12.node]);
    let heads: Vec<String> = enc.dag.halide_heads().into_iter().map(|(n, _)| n).collect();
    assert!(!heads.iter().any(|h| h == "ramp" || h == "le"), "{heads:?}");
    // A broadcast of a constant is not folded (rules read it as a splat),
    // nor is anything that reads memory.
    let x32 = |v: i64| misaal_frontends::stmt::ast::Expr::new(Type::uint(8).with_lanes(32), misaal_frontends::stmt::ast::ExprKind::Broadcast { value: Box::new(misaal_frontends::stmt::ast::Expr::new(Type::uint(8), misaal_frontends::stmt::ast::ExprKind::UInt(v as u64))), lanes: 32 });
    assert!(!is_constant_vector(&x32(3)));
}

#[test]
fn guard_with_if_tail_is_constant_data_and_matches_the_interpreter() {
    let m = fixture("const_predicate.stmt");
    let (prog, r) = compile(&m, opts(&[], Some("avx2")));
    let (c, b) = (&prog.c, body(&prog.c));
    eprint!("{}", r.summary());
    // out holds 96 elements, the tail writes up to 85: a write to an
    // inactive lane shows in out[85..96]; a and b hold 85, so a read of an
    // inactive lane overruns them (AddressSanitizer fails the run).
    let mut flags = vec!["-march=native"];
    flags.extend(common::asan());
    common::agrees_with_interpreter("const_predicate", &m, &prog, &[("uint8", 85), ("uint8", 85), ("uint8", 96), ("uint8", 32), ("uint16", 17)], &flags);
    // Nothing naive: the predicate is data, the rest instructions.
    assert!(r.fallback_exprs() == 0 && r.selected_fallbacks == 0, "{}{}", r.summary(), r.explain);
    assert!(!r.explain.contains("naive ramp") && !r.explain.contains("naive le"), "{}", r.explain);
    // t12's lanes, computed at compile time: 21 on, 11 off.
    let lanes = [vec!["1u"; 21], vec!["0u"; 11]].concat().join(", ");
    assert!(b.contains("static const uint8_t cv_") && b.contains(&format!("= {{{lanes}}};")), "{c}");
    // No per-lane branch on a predicate, no lane loop computing one.
    assert!(!b.contains(" ? ") && !b.contains("{ if ("), "a per-lane branch survives:\n{c}");
    // The tail reads and writes lanes 0..21 only (a's tail read for the
    // store and for the sum, b's, the store); every third lane by a table.
    assert!(b.matches("for (int l = 0; l < 21; l++) {").count() == 4, "{c}");
    assert!(b.contains("static const int32_t lanes_") && b.contains("= {0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30};"), "{c}");
    // All-on predicates are plain vector accesses: sum's is a 128-bit load
    // and a 256-bit store.
    assert!(b.contains("_mm256_storeu_si256((__m256i *)((uint16_t *)") && b.contains("_mm_loadu_si128((const __m128i *)((const char *)((const uint8_t *)v_b_"), "{c}");
}

#[test]
fn a_constant_select_mask_is_a_k_register_literal() {
    let m = fixture("const_mask_zen4.stmt");
    let (prog, r) = compile(&m, opts(&["compiler/tests/data/avx512_mask_rules.egg"], Some("avx512_zen4")));
    let (c, b) = (&prog.c, body(&prog.c));
    assert!(r.fallback_exprs() == 0, "{}{}", r.summary(), r.explain);
    // select(ramp(0, 1, 32) < x32(11), a, b) is vpblendmw on the mask 0x7ff.
    assert!(b.contains("_mm512_mask_blend_epi16(") && b.contains("__mmask32 k_") && b.contains(" = (__mmask32)(0x7ffULL);"), "{c}");
    assert!(!b.contains("_i++) k_"), "the mask is built lane by lane:\n{c}");
    let simde = std::path::Path::new("/usr/include/simde/x86/avx512.h").is_file();
    let native = std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|f| f.lines().any(|l| l.starts_with("flags") && l.split_whitespace().any(|w| w == "avx512bw")));
    if !native && !simde {
        misaal_testkit::skip("this CPU lacks AVX-512BW and SIMDe (apt-get install libsimde-dev) is not installed: the C is not run");
        return;
    }
    // `common::cc` builds against SIMDe where this CPU lacks AVX-512.
    common::agrees_with_interpreter("const_mask_zen4", &m, &prog, &[("uint16", 32), ("uint16", 32), ("uint16", 32)], &["-march=native"]);
}
