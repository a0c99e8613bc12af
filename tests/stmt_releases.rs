//! `misaal compile --target x86` on Stmt as Halide 14 to 18 printed it
//! (`frontends/tests/stmt_releases/`, `docs/stmt-releases.md`): every
//! fixture compiles, and its C compiles with `cc`. A fixture lowered for
//! ARM (`arm-64-osx-arm_dot_prod-...-sve-sve2`) compiles for x86 with a
//! warning naming the features left unused; a target feature misaal does
//! not know is a warning, not an error.
//!
//! Needs `cc` and HalideRuntime.h from the pip `halide` package
//! (`scripts/setup.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/frontends/tests/stmt_releases");

/// A fresh folder for one test of this process (tests run in parallel).
fn work_dir(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stmt_releases").join(std::process::id().to_string()).join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = (14..=18)
        .filter_map(|r| std::fs::read_dir(format!("{FIXTURES}/halide{r}")).ok())
        .flat_map(|d| d.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "stmt"))
        .collect();
    v.sort();
    v
}

/// `misaal compile STMT --target x86 -o OUT`: exit code and stderr.
fn compile(stmt: &Path, out: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_misaal")).arg("compile").arg(stmt).args(["--target", "x86", "-o"]).arg(out).output().expect("run misaal");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn halide_include() -> PathBuf {
    misaal_bench::halide_include().unwrap_or_else(|e| panic!("{e}"))
}

/// Compiles (never runs) the C; where this CPU lacks the AVX-512 subsets
/// the C uses, with the target's AVX-512 flags.
fn cc(c: &Path) -> Result<(), String> {
    let run = |extra: &[&str]| -> Result<(), String> {
        let o = Command::new("cc")
            .arg(format!("-I{}", halide_include().display()))
            .args(["-O1", "-march=native", "-c", "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types"])
            .args(extra)
            .arg("-o")
            .arg(c.with_extension("o"))
            .arg(c)
            .output()
            .map_err(|e| format!("cannot run cc: {e}"))?;
        if o.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&o.stderr).chars().take(3000).collect()) }
    };
    match run(&[]) {
        Err(e) if e.contains("target specific option mismatch") => run(misaal_testkit::AVX512_COMPILE_FLAGS),
        r => r,
    }
}

#[test]
fn every_older_release_fixture_compiles_for_x86() {
    let dir = work_dir("fixtures");
    let all = fixtures();
    assert!(all.len() >= 5, "only {} fixtures under {FIXTURES}", all.len());
    let mut bad = Vec::new();
    for f in &all {
        let out = dir.join(format!("{}_{}.c", f.parent().unwrap().file_name().unwrap().to_string_lossy(), f.file_stem().unwrap().to_string_lossy()));
        let (code, err) = compile(f, &out);
        if code != Some(0) {
            bad.push(format!("{}: misaal compile exited {code:?}:\n{err}", f.display()));
            continue;
        }
        let foreign = std::fs::read_to_string(f).unwrap().contains("target=arm-");
        if foreign && !(err.contains("warning:") && err.contains("compiling its target-neutral vector IR for x86") && err.contains("arm_dot_prod")) {
            bad.push(format!("{}: an ARM Stmt compiled for x86 without the warning naming arm_dot_prod:\n{err}", f.display()));
        }
        if let Err(e) = cc(&out) {
            bad.push(format!("{}: cc: {e}", out.display()));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_target_feature_is_a_warning_not_an_error() {
    let dir = work_dir("unknown");
    let text = std::fs::read_to_string(format!("{FIXTURES}/halide15/l2norm.stmt")).unwrap();
    let renamed = text.replace("target=x86-64-linux-avx512_skylake-no_runtime", "target=x86-64-linux-avx512_skylake-avx10_9_frob-no_runtime");
    assert_ne!(text, renamed, "the fixture's header changed; update this test");
    let stmt = dir.join("l2norm.stmt");
    std::fs::write(&stmt, renamed).unwrap();
    let (code, err) = compile(&stmt, &dir.join("l2norm.c"));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("warning:") && err.contains("target feature `avx10_9_frob`"), "{err}");
    // On the command line a feature name is still checked.
    let o = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .arg("compile")
        .arg(&stmt)
        .args(["--target-features", "avx2,avx10_9_frob", "-o"])
        .arg(dir.join("l2norm2.c"))
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown x86 target feature `avx10_9_frob`"));
}
