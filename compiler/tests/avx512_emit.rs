//! The emitter speaks AVX-512 when the target has it: one kernel
//! (tests/data/avx512_kernel.stmt: a widening i16 dot product accumulated
//! into i32 lanes, and a select on a comparison) compiled for
//! `avx512_zen4` holds values in zmm registers (`__m512i`), comparisons in
//! k registers (`__mmask32`) and the dot product in `vpdpwssd`; compiled
//! for `avx2` it has none of them. Both selections are proved by
//! translation validation, and both C files are run against the naive
//! lowering where the CPU (or SIMDe) can run them.
//!
//! Rules: rulesets/x86_hand.egg (its dpwssd and cmpgt-mask rules) plus
//! tests/data/avx512_mask_rules.egg, a hand-written blend on a mask: the
//! synthesized x86.egg has neither a VNNI rule nor a blend on a k register
//! yet.

use crate::common;

use crate::common::Arg;
use misaal_compiler::c::{EmitOptions, IselReport, emit_with};
use misaal_compiler::isel::Options;
use misaal_compiler::isel::features::CpuFeatures;
use misaal_compiler::isel::validate::{ValidateOptions, validate_all};
use misaal_frontends::stmt::parse_module;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kernel() -> misaal_frontends::stmt::Module {
    let text = std::fs::read_to_string(root().join("compiler/tests/data/avx512_kernel.stmt")).unwrap();
    parse_module("avx512_kernel.stmt", &text).expect("the Stmt parses")
}

fn rules_text() -> String {
    misaal_rulesets::read_sources(&[root().join("rulesets/x86_hand.egg"), root().join("compiler/tests/data/avx512_mask_rules.egg")]).expect("rule files read")
}

/// The AVX-512 specs this test needs, if any is not verified here
/// (by the committed evidence, isa/specs/x86/evidence/): rules over them
/// are never loaded.
fn unverified_avx512() -> Vec<String> {
    let status = misaal_isa::StatusTable::for_spec_dir(&root().join("isa/specs/x86")).expect("the x86 evidence loads");
    ["_mm512_dpwssd_epi32", "_mm512_cmpgt_epi16_mask", "_mm512_mask_blend_epi16", "_mm512_sub_epi16"]
        .iter()
        .filter(|n| !status.rows.get(**n).is_some_and(|r| r.status.is_verified()))
        .map(|n| n.to_string())
        .collect()
}

fn compile(features: Option<&str>) -> (String, IselReport) {
    let (p, r) = compile_program(features);
    (p.c, r)
}

fn compile_program(features: Option<&str>) -> (misaal_compiler::c::CProgram, IselReport) {
    let features = features.map(|f| CpuFeatures::from_feature_list(f).expect("known features"));
    let isel = Options { verdict_cache: common::test_verdict_cache(), rules: Some(root().join("rulesets/x86_hand.egg")), rules_text: Some(rules_text()), features, zmm: true, ..Options::default() };
    let (prog, report) = emit_with(&kernel(), "misaal_fn", &EmitOptions { isel: Some(isel) }).expect("compiles");
    (prog, report.expect("a report"))
}

const AVX512_MARKS: &[&str] = &["__m512i", "_mm512_", "__mmask", "dpwssd", "dpbusd"];

#[test]
fn avx512_zen4_gets_zmm_masks_and_vnni_and_avx2_none() {
    let missing = unverified_avx512();
    if !missing.is_empty() {
        misaal_testkit::skip(&format!("AVX-512 specs not verified by isa/specs/x86/evidence/ (run `misaal isa check` on an AVX-512 CPU or import its evidence): {}", missing.join(", ")));
        return;
    }
    let (zen4, r) = compile(None);
    let s = r.summary();
    assert!(s.contains("isel: target x86-64-linux-avx512_zen4"), "{s}");
    assert!(zen4.contains("__m512i") && zen4.contains("_mm512_loadu_si512"), "zmm registers:\n{s}\n{zen4}");
    assert!(zen4.contains("__mmask32") && zen4.contains("_mm512_cmpgt_epi16_mask") && zen4.contains("_mm512_mask_blend_epi16"), "k registers:\n{s}\n{zen4}");
    assert!(zen4.contains("_mm512_dpwssd_epi32"), "VNNI:\n{s}\n{zen4}");
    assert!(zen4.contains("#if defined(MISAAL_SIMDE)\n#include <simde/x86/avx512.h>\n#else\n#include <immintrin.h>\n#endif"), "{zen4}");
    assert!(r.naive_roots.is_empty() && r.fallback_exprs() == 0, "every root lowered from its selection:\n{s}");

    let (avx2, r2) = compile(Some("avx2"));
    for m in AVX512_MARKS {
        assert!(!avx2.contains(m), "AVX2 code has `{m}`:\n{}\n{avx2}", r2.summary());
    }
    assert!(avx2.contains("__m256i") && avx2.contains("#include <immintrin.h>"), "{}", r2.summary());

    for (what, rep) in [("zen4", &r), ("avx2", &r2)] {
        let v = validate_all(&rep.selections, &ValidateOptions::default());
        assert!(v.ok() && v.proved > v.trivial, "{what}: {}", v.summary());
    }
}

/// Whether this CPU runs the zen4 code natively.
fn cpu_has_avx512_vnni() -> bool {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let line = flags.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    ["avx512f", "avx512bw", "avx512vl", "avx512_vnni"].iter().all(|f| line.split_whitespace().any(|w| w == *f))
}

fn buffers(seed: u64) -> Vec<Arg> {
    let mut s = seed;
    let mut buf = |t: &str, n: i64| {
        let ty = common::ty(t);
        let data = (0..n as usize * common::elem_bytes(ty)).map(|_| common::xorshift(&mut s) as u8).collect();
        Arg::Buffer { elem: ty, dims: vec![(0, n)], data }
    };
    vec![buf("int16", 128), buf("int16", 128), buf("int16", 128), buf("int16", 128), buf("int32", 64), buf("int16", 128)]
}

/// Builds `c` in a fresh folder with the harness and `flags`.
fn build(name: &str, c: &str, h: &str, args: &[Arg], flags: &[&str]) -> PathBuf {
    let dir = common::work_dir(name);
    std::fs::write(dir.join("prog.c"), c).unwrap();
    std::fs::write(dir.join("prog.h"), h).unwrap();
    std::fs::write(dir.join("harness.c"), common::harness("misaal_fn", args)).unwrap();
    let mut all = vec!["-O2", "prog.c", "harness.c", "-o", "prog", "-lm"];
    all.extend_from_slice(flags);
    common::cc(&dir, &all).unwrap_or_else(|e| panic!("{name}: {e}"));
    dir
}

#[test]
fn zen4_code_agrees_with_the_naive_lowering_bit_for_bit() {
    let missing = unverified_avx512();
    if !missing.is_empty() {
        misaal_testkit::skip(&format!("AVX-512 specs not verified by isa/specs/x86/evidence/: {}", missing.join(", ")));
        return;
    }
    let simde = std::path::Path::new("/usr/include/simde/x86/avx512.h").is_file();
    let native = cpu_has_avx512_vnni();
    if !native && !simde {
        misaal_testkit::skip("this CPU lacks AVX-512 BW/VL/VNNI and SIMDe (apt-get install libsimde-dev) is not installed");
        return;
    }
    let m = kernel();
    let (zen4, _) = compile_program(None);
    let naive = misaal_compiler::c::emit(&m, "misaal_fn").expect("the naive lowering");
    let mut checked = 0;
    for seed in [1u64, 0x9e37_79b9_7f4a_7c15, 42] {
        let args = buffers(seed);
        let want = common::exec(&build("avx512_naive", &naive.c, &naive.h, &args, &["-mavx2"]), &args).expect("naive runs");
        let simde_flags: Vec<String>;
        let mut modes: Vec<(&str, Vec<&str>)> = Vec::new();
        if native {
            modes.push(("native", vec!["-march=native"]));
        } else if simde {
            // Only without AVX-512: SIMDe with the bench's gaps header
            // (Debian's SIMDe 0.7.4 lacks _mm512_cmpgt_epi16_mask, among
            // others), as `misaal bench` builds it on such a CPU.
            simde_flags = misaal_testkit::avx512_cc_flags().unwrap_or_else(|e| panic!("{e}"));
            let mut flags = vec!["-mavx2"];
            flags.extend(simde_flags.iter().map(String::as_str));
            modes.push(("simde", flags));
        }
        for (mode, flags) in modes {
            let got = common::exec(&build(&format!("avx512_{mode}"), &zen4.c, &zen4.h, &args, &flags), &args).unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!(got, want, "{mode} (seed {seed:#x}): the zen4 C differs from the naive lowering");
            checked += 1;
        }
    }
    assert_eq!(checked, 3);
}
