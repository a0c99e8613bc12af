//! `misaal compile --rules FILE`: the synthesized ruleset selects
//! instructions (it is the default), and a rule file with an
//! unprovable rule is refused exactly as the default ruleset would be.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh folder of this test's own under the system's temp folder.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("misaal-rules-flag-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn compile(rules: &[PathBuf], dir: &std::path::Path) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_misaal"));
    cmd.arg("compile").arg(root().join("benchmarks/stmt/dilate3x3.stmt")).args(["--target", "x86", "-o"]).arg(dir.join("k.c"));
    for r in rules {
        cmd.arg("--rules").arg(r);
    }
    // Its own verdict cache: a proof here must not come from another run's.
    cmd.current_dir(dir).output().expect("run misaal")
}

#[test]
fn the_synthesized_ruleset_selects_instructions() {
    let dir = scratch("synth");
    let out = compile(&[root().join("rulesets/x86.egg")], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // dilate3x3 is max over u8 on avx512_zen4: 64-lane zmm registers, vpmaxub.
    assert!(err.contains("_mm512_max_epu8"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unproved_rule_file_is_refused() {
    let dir = scratch("bad");
    let bad = dir.join("bad.egg");
    // max is not min: refuted at every instance the kernel needs.
    std::fs::write(&bad, "(ruleset x86)\n(rewrite (max (u 8 32) ?a ?b) (x86 _mm256_min_epu8 ?a ?b) :name \"bad.max\" :ruleset x86)\n").unwrap();
    let out = compile(&[root().join("rulesets/x86.egg"), bad], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("bad.max") && err.contains("not proved"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
