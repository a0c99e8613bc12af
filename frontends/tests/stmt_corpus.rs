//! File-driven Stmt corpora; every file is its own test.
//!
//! - `tests/fail/*.stmt` opens with `# expect: LINE:COL: MESSAGE`: parsing
//!   must fail at that place with a message starting with MESSAGE. (`#` lines
//!   are comments to the parser, so positions count that line.)
//! - `src/stmt/samples/*.stmt` (Halide 21 output, from `gen.py` there, and
//!   one hand-written file) must parse fully typed, and print back to exactly
//!   the input text without its `#` lines.
//! - `../benchmarks/stmt/*.stmt`, when present, must parse fully typed, and
//!   print to text that parses back to the same AST.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_frontends::stmt::{ArgKind, Module, Stmt, parse_module};
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

fn round_trip(m: &Module) -> Result<String, Failed> {
    let printed = m.to_string();
    let again = parse_module("printed", &printed).map_err(|d| format!("printed text does not parse: {d}\n{printed}"))?;
    if &again != m {
        return Err("printed text parses to a different AST".into());
    }
    Ok(printed)
}

fn sample_case(path: &Path) -> Result<(), Failed> {
    let (text, m) = parse(path)?;
    check_types(&m)?;
    let printed = round_trip(&m)?;
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

fn benchmark_case(path: &Path) -> Result<(), Failed> {
    let (_, m) = parse(path)?;
    check_types(&m)?;
    round_trip(&m).map(|_| ())
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
    let benchmarks = trials("benchmark", &root.join("../benchmarks/stmt"), benchmark_case);
    let all = fail.into_iter().chain(samples).chain(benchmarks).collect();
    libtest_mimic::run(&Arguments::from_args(), all).exit();
}
