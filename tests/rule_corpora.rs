//! File-driven rule corpora; every file is its own test.
//!
//! `tests/good-rules/*.egg`: every instantiation of every rule is `proved`.
//! `tests/broken-rules/*.egg` hold one rule each and open with
//! `; expect: refuted` (every instantiation refuted) or
//! `; expect: refuted at I1; I2` (exactly those instantiations refuted,
//! every other one proved). A refutation must come with a counterexample
//! whose two sides the evaluator confirms differ.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_isa::SpecLibrary;
use misaal_verifier::audit::{AuditConfig, Libraries, VerdictCache, Verdict, plan, run_job};
use misaal_verifier::rules::parse_rules;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

struct Libs {
    x86: SpecLibrary,
    halide: SpecLibrary,
}

fn libs() -> &'static Libs {
    static L: OnceLock<Libs> = OnceLock::new();
    L.get_or_init(|| Libs {
        x86: SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}")),
        halide: misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}")),
    })
}

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "egg")).collect();
    v.sort();
    v
}

/// (rule, instantiation, verdict, counterexample) for every job of a file.
fn audit(path: &Path) -> Result<Vec<(String, String, Verdict, String)>, Failed> {
    let text = std::fs::read_to_string(path).unwrap();
    let rules = parse_rules(&path.display().to_string(), &text).map_err(|d| d.to_string())?;
    let l = libs();
    let libs = Libraries { x86: &l.x86, halide: &l.halide };
    let cfg = AuditConfig { quickcheck_cases: 300, ..Default::default() };
    let jobs = plan(&rules, &cfg).map_err(|(_, e)| e)?;
    let cache = Mutex::new(VerdictCache::default());
    Ok(jobs
        .iter()
        .map(|j| {
            let r = run_job(&libs, j, &cfg, &cache);
            (r.rule, r.instantiation, r.verdict, r.counterexample)
        })
        .collect())
}

fn good(path: &Path) -> Result<(), Failed> {
    let results = audit(path)?;
    if results.is_empty() {
        return Err("no rules".into());
    }
    let bad: Vec<String> = results.iter().filter(|r| r.2 != Verdict::Proved).map(|r| format!("{} [{}]: {} {}", r.0, r.1, r.2.label(), r.3)).collect();
    if bad.is_empty() { Ok(()) } else { Err(bad.join("\n").into()) }
}

fn broken(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).unwrap();
    let expect = text.lines().next().and_then(|l| l.strip_prefix("; expect: ")).ok_or("first line must be `; expect: refuted [at I1; I2]`")?;
    let at: Option<Vec<String>> = match expect.trim() {
        "refuted" => None,
        e => Some(e.strip_prefix("refuted at ").ok_or(format!("unknown expectation `{e}`"))?.split(';').map(|s| s.trim().to_string()).collect()),
    };
    let results = audit(path)?;
    let mut errors = Vec::new();
    for (rule, inst, v, cx) in &results {
        let want_refuted = at.as_ref().is_none_or(|a| a.contains(inst));
        match (want_refuted, v) {
            (true, Verdict::Refuted) => {
                if !cx.contains("lhs=") && !cx.contains("does not type-check") {
                    errors.push(format!("{rule} [{inst}]: refuted without a counterexample: {cx}"));
                }
            }
            (false, Verdict::Proved) => {}
            (w, v) => errors.push(format!("{rule} [{inst}]: expected {}, got {} {cx}", if w { "refuted" } else { "proved" }, v.label())),
        }
    }
    if let Some(a) = &at {
        for i in a {
            if !results.iter().any(|r| &r.1 == i) {
                errors.push(format!("no instantiation `{i}`; have {:?}", results.iter().map(|r| &r.1).collect::<Vec<_>>()));
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors.join("\n").into()) }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for p in files("good-rules") {
        let p = Arc::new(p);
        trials.push(Trial::test(format!("good::{}", p.file_stem().unwrap().to_string_lossy()), move || good(&p)));
    }
    for p in files("broken-rules") {
        let p = Arc::new(p);
        trials.push(Trial::test(format!("broken::{}", p.file_stem().unwrap().to_string_lossy()), move || broken(&p)));
    }
    libtest_mimic::run(&args, trials).exit();
}
