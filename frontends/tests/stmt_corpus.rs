//! File-driven Stmt corpora; every file is its own test.
//!
//! - `tests/fail/*.stmt` opens with `# expect: LINE:COL: MESSAGE`: parsing
//!   must fail at that place with a message starting with MESSAGE. (`#` lines
//!   are comments to the parser, so positions count that line.)
//! - `src/stmt/samples/*.stmt` (Halide 21 output, from `gen.py` there, and
//!   one hand-written file) must parse fully typed, and print back to exactly
//!   the input text without its `#` lines.
//! - every benchmark suite's Stmt (`../benchmarks/stmt/*.stmt`, Halide 21,
//!   and `../benchmarks/halide19/stmt/*.stmt`, Halide 19) must parse fully
//!   typed and print back to exactly the input text. Each suite's
//!   `manifest.json` names its kernels: a suite folder, manifest or Stmt
//!   file that is missing fails the run instead of yielding fewer trials.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_frontends::stmt::{ArgKind, Dialect, Module, Stmt, parse_module};
use std::path::{Path, PathBuf};

fn stmt_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return vec![] };
    let mut v: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "stmt")).collect();
    v.sort();
    v
}

fn read(path: &Path) -> Result<String, Failed> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn parse(path: &Path) -> Result<(String, Module), Failed> {
    let text = read(path)?;
    let m = parse_module(&path.display().to_string(), &text).map_err(|d| d.to_string())?;
    Ok((text, m))
}

fn fail_case(path: &Path) -> Result<(), Failed> {
    let text = read(path)?;
    let expect = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# expect: "))
        .ok_or("first line must be `# expect: LINE:COL: MESSAGE`")?;
    let (pos, msg) = expect.split_once(": ").ok_or("expect line needs `LINE:COL: MESSAGE`")?;
    let file = path.display().to_string();
    let want = format!("{file}:{pos}: error: {msg}");
    match parse_module(&file, &text) {
        Ok(_) => Err(format!("parsed without error; expected `{want}`").into()),
        Err(d) if d.to_string().starts_with(&want) => Ok(()),
        Err(d) => Err(format!("expected `{want}`\n     got `{d}`").into()),
    }
}

/// Every type in the module is one Halide can form.
fn check_types(m: &Module) -> Result<(), Failed> {
    let mut bad = Vec::new();
    for f in &m.funcs {
        for a in &f.args {
            let (ArgKind::Buffer { ty, .. } | ArgKind::Scalar { ty }) = a.kind;
            if !ty.is_valid() {
                bad.push(format!("argument {} of {}: {ty:?}", a.name, f.name));
            }
        }
        f.body.visit(&mut |s| {
            if let Stmt::Allocate { name, ty, .. } = s
                && !(ty.is_valid() && ty.is_scalar())
            {
                bad.push(format!("allocation {name}: {ty:?}"));
            }
        });
        f.body.visit_exprs(&mut |e| {
            if !e.ty.is_valid() {
                bad.push(format!("{e}: {:?}", e.ty));
            }
        });
    }
    if bad.is_empty() { Ok(()) } else { Err(bad.join("\n").into()) }
}

fn round_trip(m: &Module, dialect: Dialect) -> Result<String, Failed> {
    let printed = m.print_as(dialect);
    let again = parse_module("printed", &printed).map_err(|d| format!("printed text does not parse: {d}\n{printed}"))?;
    if &again != m {
        return Err("printed text parses to a different AST".into());
    }
    Ok(printed)
}

fn sample_case(path: &Path) -> Result<(), Failed> {
    printed_back(path, Dialect::Halide21)
}

fn halide19_case(path: &Path) -> Result<(), Failed> {
    printed_back(path, Dialect::Halide19)
}

/// Parses fully typed, and prints (as `dialect`) to text that parses back to
/// the same AST and equals the input byte for byte, `#` lines aside.
fn printed_back(path: &Path, dialect: Dialect) -> Result<(), Failed> {
    let (text, m) = parse(path)?;
    check_types(&m)?;
    let printed = round_trip(&m, dialect)?;
    let halide: String = text.split_inclusive('\n').filter(|l| !l.starts_with('#')).collect();
    if printed != halide {
        let line = printed.lines().zip(halide.lines()).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!(
            "printed text differs from the input at line {}:\n  input:   {}\n  printed: {}",
            line + 1,
            halide.lines().nth(line).unwrap_or(""),
            printed.lines().nth(line).unwrap_or("")
        )
        .into());
    }
    Ok(())
}

/// The kernel names a suite's `manifest.json` lists, in suite order.
fn manifest_kernels(suite: &Path) -> Result<Vec<String>, String> {
    let path = suite.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let kernels = v["kernels"].as_object().ok_or_else(|| format!("{}: no `kernels` object", path.display()))?;
    Ok(kernels.keys().cloned().collect())
}

/// One trial per kernel of the suite; an error when the suite, its manifest
/// or a kernel's Stmt is missing, or the suite has fewer than `at_least`
/// kernels. `main` turns the error into a failed run.
fn suite_trials(kind: &'static str, suite: &Path, at_least: usize, run: fn(&Path) -> Result<(), Failed>) -> Result<Vec<Trial>, String> {
    let names = manifest_kernels(suite).map_err(|e| format!("benchmark suite {kind}: {e}"))?;
    if names.len() < at_least {
        return Err(format!("{}: {} kernels, expected at least {at_least}", suite.display(), names.len()));
    }
    let stmt_dir = suite.join("stmt");
    let files = stmt_files(&stmt_dir);
    let missing: Vec<&String> = names.iter().filter(|n| !files.iter().any(|p| p.file_stem().is_some_and(|s| s == n.as_str()))).collect();
    if !missing.is_empty() {
        return Err(format!("{}: no Stmt for {missing:?}", stmt_dir.display()));
    }
    Ok(trials(kind, &stmt_dir, run))
}

/// A missing suite folder, or a manifest kernel without its Stmt, is an
/// error, never an empty list of trials.
fn missing_suites_fail() -> Result<(), Failed> {
    let tmp = std::env::temp_dir().join(format!("misaal-stmt-corpus-{}", std::process::id()));
    let result = (|| {
        if suite_trials("x", &tmp.join("absent"), 1, sample_case).is_ok() {
            return Err("a missing suite folder gave trials".to_string());
        }
        std::fs::create_dir_all(tmp.join("stmt")).map_err(|e| e.to_string())?;
        std::fs::write(tmp.join("manifest.json"), r#"{"kernels": {"a": {}, "b": {}}}"#).map_err(|e| e.to_string())?;
        std::fs::write(tmp.join("stmt/a.stmt"), "").map_err(|e| e.to_string())?;
        match suite_trials("x", &tmp, 1, sample_case) {
            Ok(_) => Err("a manifest kernel without its Stmt gave trials".to_string()),
            Err(e) if e.contains("\"b\"") => Ok(()),
            Err(e) => Err(format!("the error does not name the missing kernel: {e}")),
        }
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result.map_err(Failed::from)
}

fn trials(kind: &'static str, dir: &Path, run: fn(&Path) -> Result<(), Failed>) -> Vec<Trial> {
    stmt_files(dir)
        .into_iter()
        .map(|p| {
            let name = format!("{kind}::{}", p.file_stem().unwrap_or_default().to_string_lossy());
            Trial::test(name, move || run(&p))
        })
        .collect()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fail = trials("fail", &root.join("tests/fail"), fail_case);
    let samples = trials("sample", &root.join("src/stmt/samples"), sample_case);
    assert!(fail.len() >= 10, "tests/fail needs at least 10 files, has {}", fail.len());
    assert!(!samples.is_empty(), "no samples in src/stmt/samples");
    let suite = |kind, dir: &str, run| suite_trials(kind, &root.join(dir), 33, run).unwrap_or_else(|e| panic!("{e}"));
    let benchmarks = suite("benchmark", "../benchmarks", sample_case);
    let halide19 = suite("halide19", "../benchmarks/halide19", halide19_case);
    let guard = Trial::test("missing_suites_fail", missing_suites_fail);
    let all = fail.into_iter().chain(samples).chain(benchmarks).chain(halide19).chain([guard]).collect();
    libtest_mimic::run(&Arguments::from_args(), all).exit();
}
