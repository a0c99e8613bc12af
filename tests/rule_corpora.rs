//! File-driven rule corpora; every rule or file is its own test.
//!
//! - `rulesets/x86_hand.egg`, `arm_hand.egg`, `arm.egg`, `hvx_hand.egg` and `hvx.egg`, the bundled rulesets
//!   users compile with: every instantiation of every rule is `proved` (one
//!   test per rule, `bundled::<target>::<rule>`). An
//!   instantiation over x86 specs no current evidence vouches for (see
//!   `isa/specs/x86/evidence/`) is not audited and is named on stderr; a
//!   rule with none left is ignored (counted as skipped), never passed.
//!   By default each rule proves a deterministic sample of its audited
//!   instantiations ([`SAMPLE`]: one in eight, at least one, the offset
//!   picked by the rule's name so the widths rotate across rules);
//!   `MISAAL_SLOW=1` proves every one.
//!   The broken VNNI rules ([`MUST_AUDIT`]) are never ignored: the
//!   committed Zen 4 evidence verifies their specs on every machine.
//! - `tests/broken-rules/*.egg` hold one rule each (every instantiation
//!   audited, sampled or not). Line 1 states the
//!   verdict: `; expect: refuted` (every instantiation refuted) or
//!   `; expect: refuted at I1; I2` (exactly those refuted, every other one
//!   proved). Line 2 states why: `; reason: counterexample` (inputs on which
//!   the two sides differ, confirmed by the evaluator) or
//!   `; reason: type-check: TEXT` (the sides do not fit at that width, and
//!   the message contains TEXT). The harness checks both.
//! - `tests/rule-load-errors/*.egg` do not load: line 1 is
//!   `; error: LINE:COL: TEXT`, the position and message of the error. An
//!   unknown name is a load error, never a verdict.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_isa::{SpecLibrary, StatusTable};
use misaal_rulesets::{Rule, TargetIsa};
use misaal_verifier::audit::{AuditConfig, Job, Libraries, VerdictCache, Verdict, load_rules, load_rules_verified, plan, run_job, unverified_specs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

struct Libs {
    specs: SpecLibrary,
    halide: SpecLibrary,
    status: StatusTable,
    isa: &'static TargetIsa,
}

/// The libraries of one target, loaded once.
fn libs_for(isa: &'static TargetIsa) -> &'static Libs {
    static L: [OnceLock<Libs>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let k = misaal_rulesets::TARGETS.iter().position(|t| *t == isa).expect("a known target");
    L[k].get_or_init(|| {
        let dir = isa.spec_dir();
        Libs {
            specs: SpecLibrary::load_dir(&dir).unwrap_or_else(|d| panic!("{d}")),
            halide: misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}")),
            status: StatusTable::for_spec_dir(&dir).unwrap_or_else(|d| panic!("{d}")),
            isa,
        }
    })
}

/// The libraries of the rules' target (x86 for none).
fn libs_of(rules: &[Rule]) -> &'static Libs {
    libs_for(rules.first().map_or(&misaal_rulesets::X86, |r| r.target))
}

/// ARM's 32-bit multiply-highs (vqdmulhq_s32, vqrdmulhq_s32) take Z3 more
/// than the default 10 s; they are proved with the budget
/// `misaal verify --rules arm --timeout 120000` uses.
fn cfg_for(isa: &TargetIsa) -> AuditConfig {
    let timeout_ms = if isa.name == "x86" { AuditConfig::default().timeout_ms } else { 120_000 };
    AuditConfig { quickcheck_cases: 300, timeout_ms, vector_widths: isa.vector_widths.to_vec(), ..Default::default() }
}

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "egg")).collect();
    v.sort();
    assert!(!v.is_empty(), "no .egg files in {}", dir.display());
    v
}

/// Loads a rule file as `misaal verify` does: names resolved against the
/// Halide ops and the specs of the file's target, verified ones only for
/// ARM and HVX.
fn load(path: &Path) -> Result<Vec<Rule>, misaal_isa::Diagnostics> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.display().to_string();
    let isa = misaal_rulesets::file_target(&file, &text)?;
    let l = libs_for(isa);
    let libs = Libraries { target: &l.specs, halide: &l.halide };
    if isa.name == "x86" { load_rules(&file, &text, &libs, &cfg_for(isa)) } else { load_rules_verified(&file, &text, &libs, &cfg_for(isa), &l.status) }
}

/// The jobs of `rules` whose target specs are all verified, and how many were
/// left out.
fn verified_jobs(rules: &[Rule]) -> Result<(Vec<Job<'_>>, Vec<String>), Failed> {
    let l = libs_of(rules);
    let libs = Libraries { target: &l.specs, halide: &l.halide };
    let all = plan(rules, &cfg_for(l.isa)).map_err(|(_, e)| e)?;
    let n = all.len();
    let mut left_out = Vec::new();
    let mut skipped = Vec::new();
    let jobs: Vec<Job> = all
        .into_iter()
        .filter(|j| {
            let missing = j.env.as_ref().map(|e| unverified_specs(&libs, j.rule, e, &l.status)).unwrap_or_default();
            if let Some((spec, why)) = missing.first() {
                left_out.push(format!("{spec}: {why}"));
                skipped.push(misaal_rulesets::describe_env(j.env.as_ref().expect("planned")));
            }
            missing.is_empty()
        })
        .collect();
    if !left_out.is_empty() {
        left_out.sort();
        left_out.dedup();
        eprintln!("{}: {} of {n} instantiations not audited: {}", rules[0].name, n - jobs.len(), left_out.join("; "));
    }
    Ok((jobs, skipped))
}

/// A bundled rule proves one in `SAMPLE` of its audited instantiations by
/// default (at least one); `MISAAL_SLOW=1` proves all of them.
const SAMPLE: usize = 8;

use misaal_testkit::slow;

/// The sampled share of `jobs` (see [`SAMPLE`]): those at an index equal
/// to an offset drawn from the rule's name modulo `SAMPLE`, or the one at
/// the offset modulo their count when that leaves none.
fn sampled<'a>(name: &str, jobs: Vec<Job<'a>>) -> Vec<Job<'a>> {
    if slow() || jobs.len() <= 1 {
        return jobs;
    }
    let off = name.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
    let n = jobs.len();
    let keep = |i: usize| if n >= SAMPLE { i % SAMPLE == off % SAMPLE } else { i == off % n };
    jobs.into_iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, j)| j).collect()
}

/// (rule, instantiation, verdict, counterexample) for every job whose
/// specs are verified (a sample of them with `sample`, see [`sampled`]).
fn audit(rules: &[Rule], sample: bool) -> Result<Vec<(String, String, Verdict, String)>, Failed> {
    let l = libs_of(rules);
    let libs = Libraries { target: &l.specs, halide: &l.halide };
    let cfg = cfg_for(l.isa);
    let (jobs, _) = verified_jobs(rules)?;
    let jobs = if sample { sampled(&rules[0].name, jobs) } else { jobs };
    let cache = Mutex::new(VerdictCache::default());
    Ok(jobs
        .iter()
        .map(|j| {
            let r = run_job(&libs, j, &cfg, &cache);
            (r.rule, r.instantiation, r.verdict, r.counterexample)
        })
        .collect())
}

fn good(rule: &Rule) -> Result<(), Failed> {
    let results = audit(std::slice::from_ref(rule), true)?;
    let bad: Vec<String> = results.iter().filter(|r| r.2 != Verdict::Proved).map(|r| format!("{} [{}]: {} {}", r.0, r.1, r.2.label(), r.3)).collect();
    if bad.is_empty() { Ok(()) } else { Err(bad.join("\n").into()) }
}

enum Reason {
    Counterexample,
    TypeCheck(String),
}

/// Broken rules that must be audited (refuted) on every machine, through
/// the committed evidence (issue 27: on a CPU without AVX512-VNNI they were
/// once "passed" with nothing audited).
const MUST_AUDIT: [&str; 2] = ["dpbusd-saturating", "dpbusd-operands-swapped"];

fn broken(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let expect = lines.next().and_then(|l| l.strip_prefix("; expect: ")).ok_or("line 1 must be `; expect: refuted [at I1; I2]`")?;
    let at: Option<Vec<String>> = match expect.trim() {
        "refuted" => None,
        e => Some(e.strip_prefix("refuted at ").ok_or(format!("unknown expectation `{e}`"))?.split(';').map(|s| s.trim().to_string()).collect()),
    };
    let reason = match lines.next().and_then(|l| l.strip_prefix("; reason: ")).map(str::trim) {
        Some("counterexample") => Reason::Counterexample,
        Some(r) if r.starts_with("type-check: ") => Reason::TypeCheck(r["type-check: ".len()..].to_string()),
        _ => return Err("line 2 must be `; reason: counterexample` or `; reason: type-check: TEXT`".into()),
    };
    let rules = load(path).map_err(|d| format!("a broken rule must load (its names must exist); it does not:\n{d}"))?;
    let (_, unaudited) = verified_jobs(&rules)?;
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    if MUST_AUDIT.contains(&stem.as_ref()) && !unaudited.is_empty() {
        return Err(format!("{} instantiation(s) not audited ({}): the committed evidence must verify every spec this rule names", unaudited.len(), unaudited.join("; ")).into());
    }
    let results = audit(&rules, false)?;
    if results.is_empty() {
        return Err("no instantiation over verified specs".into());
    }
    let mut errors = Vec::new();
    for (rule, inst, v, cx) in &results {
        let want_refuted = at.as_ref().is_none_or(|a| a.contains(inst));
        match (want_refuted, v) {
            (true, Verdict::Refuted) => {
                let type_error = cx.strip_prefix("does not type-check here: ");
                match (&reason, type_error) {
                    (Reason::Counterexample, None) if cx.contains("lhs=") && cx.contains("rhs=") => {}
                    (Reason::TypeCheck(want), Some(msg)) if msg.contains(want.as_str()) => {}
                    (Reason::Counterexample, _) => errors.push(format!("{rule} [{inst}]: expected a counterexample, got: {cx}")),
                    (Reason::TypeCheck(want), _) => errors.push(format!("{rule} [{inst}]: expected a type-check failure containing {want:?}, got: {cx}")),
                }
            }
            (false, Verdict::Proved) => {}
            (w, v) => errors.push(format!("{rule} [{inst}]: expected {}, got {} {cx}", if w { "refuted" } else { "proved" }, v.label())),
        }
    }
    if let Some(a) = &at {
        for i in a {
            if !results.iter().any(|r| &r.1 == i) && !unaudited.contains(i) {
                errors.push(format!("no instantiation `{i}`; have {:?}", results.iter().map(|r| &r.1).collect::<Vec<_>>()));
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors.join("\n").into()) }
}

fn load_error(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).unwrap();
    let want = text.lines().next().and_then(|l| l.strip_prefix("; error: ")).ok_or("line 1 must be `; error: LINE:COL: TEXT`")?;
    let (pos, msg) = want.split_once(": ").ok_or("line 1 must be `; error: LINE:COL: TEXT`")?;
    match load(path) {
        Ok(rules) => Err(format!("loaded {} rule(s); expected the error {want:?}", rules.len()).into()),
        Err(d) => {
            let file = path.display().to_string();
            if d.0.iter().any(|e| e.to_string().starts_with(&format!("{file}:{pos}:")) && e.message.contains(msg)) {
                Ok(())
            } else {
                Err(format!("expected an error at {pos} containing {msg:?}, got:\n{d}").into())
            }
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    // Each bundled ruleset: the hand rules of each target and ARM's and
    // HVX's synthesized rules. x86's synthesized rulesets/x86.egg is checked
    // by its shipped verdicts instead (tests/shipped_verdicts.rs): its
    // 12,000 instances include reductions of 64 and 128 lanes that take Z3
    // up to a minute each, about 4 minutes with `misaal verify --rules x86
    // --no-cache` on two cores, too long for every CI run.
    for (target, least) in [("x86_hand", 50), ("arm_hand", 1), ("arm", 1), ("hvx_hand", 1), ("hvx", 1)] {
    let bundled = misaal_rulesets::bundled_ruleset(target);
    let rules = load(&bundled).unwrap_or_else(|d| panic!("the bundled ruleset {} does not load:\n{d}", bundled.display()));
    assert!(rules.len() >= least, "the bundled ruleset {target} holds only {} rules", rules.len());
    for r in rules {
        let (jobs, left_out) = verified_jobs(std::slice::from_ref(&r)).unwrap_or_else(|e| panic!("{e:?}"));
        let none_left = jobs.is_empty() && !left_out.is_empty();
        drop(jobs);
        let name = if none_left { format!("bundled::{target}::{} (unverified specs only)", r.name) } else { format!("bundled::{target}::{}", r.name) };
        trials.push(Trial::test(name, move || good(&r)).with_ignored_flag(none_left));
    }
    }
    for p in files("broken-rules") {
        // A broken rule over unverified specs only is ignored (skipped).
        let none_left = load(&p).ok().and_then(|r| verified_jobs(&r).ok().map(|(j, u)| j.is_empty() && !u.is_empty())).unwrap_or(false);
        let p = Arc::new(p);
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let none_left = none_left && !MUST_AUDIT.contains(&stem.as_str());
        let name = format!("broken::{stem}{}", if none_left { " (unverified specs only)" } else { "" });
        trials.push(Trial::test(name, move || broken(&p)).with_ignored_flag(none_left));
    }
    for p in files("rule-load-errors") {
        let p = Arc::new(p);
        trials.push(Trial::test(format!("load_error::{}", p.file_stem().unwrap().to_string_lossy()), move || load_error(&p)));
    }
    libtest_mimic::run(&args, trials).exit();
}
