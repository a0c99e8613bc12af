//! The `misaal isa` commands as a user runs them.

use std::process::Command;

fn misaal(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).args(args).output().expect("run misaal");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn list_filters_by_feature() {
    let (ok, out, _) = misaal(&["isa", "list", "--target", "x86", "--feature", "avx2"]);
    assert!(ok);
    assert!(out.lines().next().unwrap().starts_with("intrinsic"));
    assert!(out.contains("_mm256_add_epi16") && out.contains("vpaddw"));
    assert!(!out.contains("_mm512_add_epi16"), "avx512 specs must not match --feature avx2");
}

#[test]
fn show_prints_the_spec_and_lane_zero() {
    let (ok, out, _) = misaal(&["isa", "show", "_mm256_madd_epi16"]);
    assert!(ok);
    assert!(out.contains("instr _mm256_madd_epi16(a: bv256, b: bv256) -> bv256"));
    assert!(out.contains("lane 0 = dst[31:0]"));
    assert!(out.contains("bvmul") && out.contains("sext"));
}

#[test]
fn eval_computes_in_hex() {
    // Lane 0: 0x7fff + 1 saturates high; lane 1: 0x8000 + -1 saturates low.
    let a = "0x0000000000000000000000000000000000000000000000000000000080007fff";
    let b = "0x00000000000000000000000000000000000000000000000000000000ffff0001";
    let (ok, out, err) = misaal(&["isa", "eval", "_mm256_adds_epi16", a, b]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "0x0000000000000000000000000000000000000000000000000000000080007fff");
    let (ok, _, err) = misaal(&["isa", "eval", "_mm256_adds_epi16", a]);
    assert!(!ok && err.contains("takes 2 operand(s), found 1"), "{err}");
    let (ok, _, err) = misaal(&["isa", "eval", "_mm_add_epi8", "0x1", "0xzz"]);
    assert!(!ok && err.contains("operand `b`"), "{err}");
}

#[test]
fn check_writes_the_csv_with_documented_columns() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-{}", std::process::id()));
    let csv = dir.join("x86_semantics.csv");
    let (ok, out, err) = misaal(&["isa", "check", "--target", "x86", "--family", "madd", "--out", csv.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("family") && out.contains("madd"));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("intrinsic,instruction,feature,status,cases,seconds"));
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() >= 6);
    assert!(rows.iter().all(|r| r.contains(",silicon,1000,")), "{rows:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_spec_folder_is_an_error_with_location() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.sema"), "instr f(a: bv8) -> bv8 [x86 sse2 nop]\nFOR j := 0 to 1\n").unwrap();
    let (ok, _, err) = misaal(&["isa", "check", "--specs", dir.to_str().unwrap(), "--out", dir.join("r.csv").to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("bad.sema:3:1: error: expected `ENDFOR`"), "{err}");
    assert!(!dir.join("r.csv").exists(), "no report for specs that do not load");
    std::fs::remove_dir_all(&dir).unwrap();
}
