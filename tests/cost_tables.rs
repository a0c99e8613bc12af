//! Which cost table a target reads (issue 27): one measured table per
//! CPU under `isa/costs/`, and the compiler picks the one of the Halide
//! target's CPU (`avx512_zen4` -> `x86-znver4.csv`), falling back as
//! `cost_table_for_target` states; `--explain-isel` says which and why.

use misaal_compiler::isel::extract::{CostModel, CostSource, cost_table_for_target};
use std::process::Command;

#[test]
fn the_table_follows_the_targets_cpu() {
    let (zen4, why) = cost_table_for_target("x86", "x86-64-linux-avx512_zen4-no_runtime");
    assert!(zen4.ends_with("x86-znver4.csv") && zen4.exists(), "{}", zen4.display());
    assert!(why.contains("`avx512_zen4`") && !why.contains("fallback"), "{why}");
    let (avx2, why) = cost_table_for_target("x86", "x86-64-linux-avx2-no_runtime");
    assert!(avx2.ends_with("x86-znver3.csv") && avx2.exists(), "{}", avx2.display());
    assert!(why.contains("fallback") && why.contains("AVX2"), "{why}");
    // An AVX-512 CPU without its own table: Zen 4's, the one with AVX-512 rows.
    let (sky, why) = cost_table_for_target("x86", "x86-64-linux-avx512_skylake-no_runtime");
    assert_eq!(sky, zen4);
    assert!(why.contains("fallback") && why.contains("x86-skylake.csv"), "{why}");
    let (arm, _) = cost_table_for_target("arm", "arm-64-linux-arm_dot_prod-no_runtime");
    assert!(arm.ends_with("arm.csv"), "{}", arm.display());
}

#[test]
fn each_table_is_measured_on_its_cpu() {
    let t = misaal_compiler::isel::Target::x86().unwrap();
    let zen4 = CostModel::for_halide_target(&t.instrs, "x86", "x86-64-linux-avx512_zen4-no_runtime");
    let avx2 = CostModel::for_halide_target(&t.instrs, "x86", "x86-64-linux-avx2");
    assert!(zen4.measured_table && avx2.measured_table);
    assert!(zen4.choice.contains("x86-znver4.csv") && avx2.choice.contains("x86-znver3.csv"), "{} / {}", zen4.choice, avx2.choice);
    // Zen 4 measured the AVX-512 forms; the AVX2 machine could not.
    assert_eq!(zen4.instr("_mm512_add_epi8").1, CostSource::Measured);
    assert_ne!(avx2.instr("_mm512_add_epi8").1, CostSource::Measured);
    assert_eq!(avx2.instr("_mm256_add_epi8").1, CostSource::Measured);
    let rows = |p: &str| std::fs::read_to_string(format!("{}/isa/costs/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap().lines().skip(1).count();
    assert_eq!((rows("x86-znver4.csv"), rows("x86-znver3.csv")), (1800, 279));
}

#[test]
fn explain_isel_names_the_cost_table() {
    let dir = std::env::temp_dir().join(format!("misaal-costs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stmt = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/stmt/dilate3x3.stmt");
    assert!(std::fs::read_to_string(stmt).unwrap().contains("target=x86-64-linux-avx512_zen4"), "{stmt} is built for avx512_zen4");
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).args(["compile", stmt, "--explain-isel", "-o"]).arg(dir.join("k.c")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let line = err.lines().find(|l| l.starts_with("cost table: ")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("x86-znver4.csv") && line.contains("`avx512_zen4`"), "{line}");
    // The code for an AVX2 CPU is costed by the AVX2 table, whatever CPU the
    // Stmt was printed for.
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).args(["compile", stmt, "--explain-isel", "--target-features", "x86-64-linux-avx2", "-o"]).arg(dir.join("k2.c")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let line = err.lines().find(|l| l.starts_with("cost table: ")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("x86-znver3.csv"), "{line}");
    std::fs::remove_dir_all(&dir).unwrap();
}
