//! The abstraction phase end to end: templates, candidate instances, the
//! verifier's verdict on each, the exact cover of the proved ones, and a
//! last audit of the written text (every instance of every rule proved,
//! or nothing is returned).

use super::{Abstract, Concrete, classes_of, cover, generalize_for, project};
use crate::target::SynthTarget;
use misaal_isa::SpecLibrary;
use misaal_verifier::audit::{AuditConfig, Job, Libraries, Verdict, VerdictCache, load_rules, plan, run_job};
use rayon::prelude::*;
use super::loops::Ground;
use std::collections::HashSet;
use std::sync::Mutex;

/// What the phase produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rule file, header included.
    pub text: String,
    pub concrete: usize,
    /// Distinct templates the concrete rules folded into.
    pub templates: usize,
    /// Abstract rules written (a template whose proved instances are not
    /// one product of value sets is written as several).
    pub rules: usize,
    /// Proved instances of the written rules.
    pub instances: usize,
    /// Instances tried (names exist, specs verified here).
    pub candidates: usize,
    pub refuted: usize,
    pub unknown: usize,
    /// Concrete rules no written rule has as an instance (should be none:
    /// a template at its own parameters is its concrete rule).
    pub uncovered: Vec<String>,
    /// Legalization (split) rules written, and their proved instances.
    pub split_rules: usize,
    pub split_instances: usize,
    pub split_tried: usize,
    /// Of the split instances tried, those refuted and those the solver
    /// left undecided (an undecided one is never cached, so each run
    /// spends its whole budget on it again).
    pub split_refuted: usize,
    pub split_unknown: usize,
    /// Wall time of the abstract phase's parts: the instances of the
    /// templates proved, the split rules searched, their instances proved,
    /// and the written file's audit.
    pub times: PartTimes,
    /// Proved Halide-level instances left out because, with the others,
    /// they rewrite in a loop (`super::loops`).
    pub loop_dropped: Vec<String>,
}

/// Seconds spent in each part of [`run_for`] (wall time).
#[derive(Clone, Copy, Debug, Default)]
pub struct PartTimes {
    pub instances: f64,
    pub split_search: f64,
    pub split_proofs: f64,
    pub audit: f64,
}

/// `header`: comment lines for the top of the file (generator, command).
/// `with_legalize`: also derive and prove the split rules (a few thousand
/// instances; tests of the abstraction itself leave them out).
/// An instance's verdict: by pre-key when a verdict file records one (no
/// side is unrolled), else through `run_job`. Unrolling both sides of every
/// candidate for its proof key was most of a re-run's abstract phase
/// (10,000 legalization instances).
fn verdict(libs: &Libraries, rule: &misaal_rulesets::Rule, env: &misaal_rulesets::Assignment, cfg: &AuditConfig, cache: &Mutex<VerdictCache>) -> Verdict {
    instance_result(libs, &Job { rule, env: Some(env.clone()) }, cfg, cache).verdict
}

/// A job's result, by pre-key when it has one with a proved row, else
/// through `run_job`.
fn instance_result(libs: &Libraries, job: &Job, cfg: &AuditConfig, cache: &Mutex<VerdictCache>) -> misaal_verifier::audit::InstanceResult {
    job.env.as_ref().and_then(|env| misaal_verifier::prekey::proved_by_pre_key(libs, job.rule, env, cache)).unwrap_or_else(|| run_job(libs, job, cfg, cache))
}

pub fn run(concrete: &[Concrete], x86: &SpecLibrary, halide: &SpecLibrary, cfg: &AuditConfig, cache: &Mutex<VerdictCache>, header: &str, with_legalize: bool) -> Result<Outcome, String> {
    run_for(&crate::target::X86, concrete, x86, halide, cfg, cache, header, with_legalize)
}

/// [`run`] for any target's concrete rules and specs (`x86` is the
/// target's library), with `legalize`'s split rules for that target.
#[allow(clippy::too_many_arguments)]
pub fn run_for(
    target: &'static SynthTarget,
    concrete: &[Concrete],
    x86: &SpecLibrary,
    halide: &SpecLibrary,
    cfg: &AuditConfig,
    cache: &Mutex<VerdictCache>,
    header: &str,
    with_legalize: bool,
) -> Result<Outcome, String> {
    let libs = Libraries { target: x86, halide };
    let t0 = std::time::Instant::now();
    let templates = generalize_for(concrete, halide, target);
    let mut rules = Vec::new();
    for a in &templates {
        rules.push(a.full_rule()?);
    }
    // Every candidate instance of every template, proved in parallel.
    let usable = |n: &str| x86.instr(n).is_some();
    let jobs: Vec<(usize, misaal_rulesets::Assignment)> =
        templates.iter().zip(&rules).enumerate().flat_map(|(k, (a, r))| a.candidates(r, x86, &usable).into_iter().map(move |e| (k, e))).collect();
    let verdicts: Vec<Verdict> = jobs.par_iter().with_max_len(1).map(|(k, env)| verdict(&libs, &rules[*k], env, cfg, cache)).collect();
    let mut out = Outcome { concrete: concrete.len(), templates: templates.len(), candidates: jobs.len(), ..Default::default() };
    out.times.instances = t0.elapsed().as_secs_f64();
    out.refuted = verdicts.iter().filter(|v| **v == Verdict::Refuted).count();
    out.unknown = verdicts.iter().filter(|v| !matches!(v, Verdict::Proved | Verdict::Refuted)).count();

    let mut body = String::new();
    for (k, a) in templates.iter().enumerate() {
        let vars: Vec<String> = a.free.iter().map(|(v, _)| v.clone()).collect();
        let points: Vec<Vec<i128>> = jobs.iter().zip(&verdicts).filter(|((j, _), v)| *j == k && **v == Verdict::Proved).map(|((_, e), _)| project(e, &vars)).collect();
        let universe: std::collections::HashSet<Vec<i128>> =
            misaal_rulesets::instantiations(&rules[k], target.vector_widths()).unwrap_or_default().iter().map(|e| project(e, &vars)).collect();
        let boxes = best_cover(&points, vars.len(), &|p| universe.contains(p));
        if boxes.is_empty() {
            for m in a.members.iter().filter(|_| a.variant_of.is_none()) {
                out.uncovered.push(concrete[*m].rule.name.clone());
            }
            continue;
        }
        for (b, bx) in boxes.iter().enumerate() {
            let name = if boxes.len() == 1 { a.name.clone() } else { format!("{}.{}", a.name, b + 1) };
            body.push_str(&provenance(a, &name, concrete, points.len()));
            let domains: Vec<(String, Vec<i128>)> = vars.iter().cloned().zip(bx.iter().cloned()).collect();
            body.push_str(&a.text(&name, &domains));
            body.push('\n');
            out.rules += 1;
        }
        out.instances += points.len();
        // Its members are instances when their own parameters were proved.
        for m in a.members.iter().filter(|_| a.variant_of.is_none()) {
            if !covers(target, &concrete[*m], &points, &vars) {
                out.uncovered.push(concrete[*m].rule.name.clone());
            }
        }
    }
    if with_legalize {
        // The left sides the instruction rules above lower: an expansion
        // of one of those is the first to go when expansions loop.
        let lowered: HashSet<Ground> =
            jobs.iter().zip(&verdicts).filter(|(_, v)| **v == Verdict::Proved).filter_map(|((k, e), _)| super::loops::sides(&rules[*k], e)).filter(|(_, r)| r.has_instr()).map(|(l, _)| l).collect();
        body.push_str(&legalize(target, halide, &libs, cfg, cache, lowered, &mut out)?);
    }
    out.text = format!("{header}{}\n(ruleset {})\n\n{body}", counts_line(target, &out), target.name());
    let t = std::time::Instant::now();
    audit_as(&format!("{}.egg", target.output), &out.text, &libs, cfg, cache)?;
    out.times.audit = t.elapsed().as_secs_f64();
    Ok(out)
}

/// The cover with the fewest boxes over every order of the variables
/// (at most 4! orders): which variable is split first decides how many.
fn best_cover(points: &[Vec<i128>], arity: usize, universe: &dyn Fn(&[i128]) -> bool) -> Vec<Vec<Vec<i128>>> {
    let mut orders: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..arity {
        orders = orders.iter().flat_map(|o| (0..arity).filter(|i| !o.contains(i)).map(move |i| [o.clone(), vec![i]].concat())).collect();
    }
    let mut best: Option<Vec<Vec<Vec<i128>>>> = None;
    for ord in orders {
        let permuted: Vec<Vec<i128>> = points.iter().map(|p| ord.iter().map(|&i| p[i]).collect()).collect();
        let unperm = |q: &[i128]| {
            let mut p = vec![0; arity];
            for (k, &i) in ord.iter().enumerate() {
                p[i] = q[k];
            }
            p
        };
        let boxes: Vec<Vec<Vec<i128>>> = cover(&permuted, arity, &|q| universe(&unperm(q)))
            .into_iter()
            .map(|b| {
                let mut back = vec![Vec::new(); arity];
                for (k, &i) in ord.iter().enumerate() {
                    back[i] = b[k].clone();
                }
                back
            })
            .collect();
        if best.as_ref().is_none_or(|b| boxes.len() < b.len()) {
            best = Some(boxes);
        }
    }
    best.unwrap_or_default()
}

fn counts_line(target: &SynthTarget, o: &Outcome) -> String {
    // MISAAL's own figure is for x86.
    let misaal = if target.names() == crate::target::NameStyle::X86 { "; MISAAL: 5,806 concrete x86 rules into 329 abstract" } else { "" };
    format!(
        "; Counts: {} concrete rules in, {} templates, {} abstract rules out ({} proved instances of {} tried: {} refuted, {} unknown){misaal}.\n\
         ; Legalize: {} split rules ({} proved instances of {} tried; {} proved Halide-level instances left out as rewrite loops).",
        o.concrete, o.templates, o.rules, o.instances, o.candidates, o.refuted, o.unknown, o.split_rules, o.split_instances, o.split_tried, o.loop_dropped.len()
    )
}

/// The split rules of lane-local Halide ops (`crate::legalize`), each
/// written with exactly its proved instances: splits to the target's
/// registers, pads and Halide-level expansions, and on x86 the templates
/// searched over its instructions too.
#[allow(clippy::too_many_arguments)]
fn legalize(
    target: &SynthTarget,
    halide: &SpecLibrary,
    libs: &Libraries,
    cfg: &AuditConfig,
    cache: &Mutex<VerdictCache>,
    mut lowered: HashSet<Ground>,
    out: &mut Outcome,
) -> Result<String, String> {
    let t = std::time::Instant::now();
    let splits = match target.names() {
        crate::target::NameStyle::X86 => crate::legalize::splits_for(halide, libs.target),
        _ => crate::legalize::splits(halide, crate::legalize::Registers::of(target.isa)),
    };
    let ruleset = target.name();
    out.times.split_search = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let mut rules = Vec::new();
    for s in &splits {
        let text = s.text(ruleset, &s.name, &s.free);
        let mut r = misaal_rulesets::parse_rules("legalize", &text).map_err(|d| format!("{}: {d}", s.name))?;
        rules.push(r.pop().ok_or("no rule")?);
    }
    let jobs = super::fallback::jobs(&splits, &rules, target.vector_widths(), &lowered);
    let verdicts: Vec<Verdict> = jobs.par_iter().with_max_len(1).map(|(k, env)| verdict(libs, &rules[*k], env, cfg, cache)).collect();
    out.split_tried = jobs.len();
    out.times.split_proofs = t.elapsed().as_secs_f64();
    out.split_refuted = verdicts.iter().filter(|v| **v == Verdict::Refuted).count();
    out.split_unknown = verdicts.iter().filter(|v| **v == Verdict::Unknown).count();
    // Proved instances that loop with others are not written.
    let grounds: Vec<Option<(Ground, Ground)>> = jobs.iter().zip(&verdicts).map(|((k, e), v)| if *v == Verdict::Proved { super::loops::sides(&rules[*k], e) } else { None }).collect();
    lowered.extend(grounds.iter().flatten().filter(|(_, r)| r.has_instr()).map(|(l, _)| l.clone()));
    // A dup instance (`crate::legalize::pad`) is the inverse of its pad: its
    // left side is the pad's right side, and its right side rebuilds the
    // pad's left side from the same variables, an e-class already there.
    // The pair puts two forms of one value in one class and adds nothing
    // that re-fires, but read as terms the pad feeds the dup and the dup the
    // pad; so dups are left out of the loop analysis (pads stay in it).
    let inverse = |i: usize| splits[jobs[i].0].name.starts_with("synth.dup-");
    let halide_level: Vec<usize> = (0..jobs.len()).filter(|&i| !inverse(i) && grounds[i].as_ref().is_some_and(|(l, r)| !r.has_instr() && !super::loops::permutes(l, r))).collect();
    let rewrites: Vec<(Ground, Ground)> = halide_level.iter().map(|&i| grounds[i].clone().expect("proved")).collect();
    // Proved, but left out of the covers below.
    let mut dropped: HashSet<usize> = HashSet::new();
    for d in super::loops::breakers(&rewrites, &lowered) {
        let i = halide_level[d];
        out.loop_dropped.push(format!("{}[{}]", splits[jobs[i].0].name, misaal_rulesets::describe_env(&jobs[i].1)));
        dropped.insert(i);
    }
    let mut body = String::from("\n; == legalize: split rules of lane-local Halide ops (phase legalize) ==\n");
    for (k, s) in splits.iter().enumerate() {
        let vars: Vec<String> = s.free.iter().map(|(v, _)| v.clone()).collect();
        let points: Vec<Vec<i128>> =
            jobs.iter().zip(&verdicts).enumerate().filter(|(i, ((j, _), v))| *j == k && **v == Verdict::Proved && !dropped.contains(i)).map(|(_, ((_, e), _))| project(e, &vars)).collect();
        let universe: std::collections::HashSet<Vec<i128>> = jobs.iter().filter(|(j, _)| *j == k).map(|(_, e)| project(e, &vars)).collect();
        let boxes = best_cover(&points, vars.len(), &|p| universe.contains(p));
        if boxes.is_empty() {
            continue;
        }
        for (b, bx) in boxes.iter().enumerate() {
            let name = if boxes.len() == 1 { s.name.clone() } else { format!("{}.{}", s.name, b + 1) };
            body.push_str(&format!("; {name}: {}; template proved at {} instance(s)\n", s.provenance, points.len()));
            let domains: Vec<(String, Vec<i128>)> = vars.iter().cloned().zip(bx.iter().cloned()).collect();
            body.push_str(&s.text(ruleset, &name, &domains));
            body.push('\n');
            out.split_rules += 1;
        }
        out.split_instances += points.len();
    }
    Ok(body)
}

/// Whether the concrete rule's own assignment is among the proved points:
/// its template evaluated there is the concrete rule itself.
fn covers(target: &SynthTarget, c: &Concrete, points: &[Vec<i128>], vars: &[String]) -> bool {
    if vars.is_empty() {
        return !points.is_empty();
    }
    let Some(p) = super::fit::params_for(&c.rule.lhs, &c.rule.rhs, target) else { return false };
    // `?c` is the rule's own lifted constant, whichever it was.
    let own = |pt: &Vec<i128>| vars.iter().zip(pt).all(|(v, x)| match v.as_str() {
        "bw" => *x == p.bw,
        "vsize" => *x == p.vsize,
        "sign" => *x == p.sign,
        _ => true,
    });
    points.iter().any(own)
}

fn provenance(a: &Abstract, name: &str, concrete: &[Concrete], proved: usize) -> String {
    let mut classes: Vec<String> = Vec::new();
    let mut phases: Vec<String> = Vec::new();
    for m in &a.members {
        let c = classes_of(&concrete[*m].comment);
        if !c.is_empty() && !classes.contains(&c) {
            classes.push(c);
        }
        if !phases.contains(&concrete[*m].phase) {
            phases.push(concrete[*m].phase.clone());
        }
    }
    let names: Vec<&str> = a.members.iter().take(4).map(|m| concrete[*m].rule.name.as_str()).collect();
    let variant = match (&a.variant_of, a.target.names()) {
        (Some(v), crate::target::NameStyle::X86) => format!(" (name variant of {v}: the `x` of Intel's 64-bit form dropped)"),
        (Some(v), _) => format!(" (variant of {v})"),
        (None, _) => String::new(),
    };
    format!(
        "; {name}{variant}: phase {} then abstract; classes {}; from {} concrete rule(s): {}{}; template proved at {proved} instance(s)\n",
        phases.join("+"),
        if classes.is_empty() { "-".into() } else { classes.join(", ") },
        a.members.len(),
        names.join(", "),
        if a.members.len() > 4 { ", ..." } else { "" }
    )
}

/// Loads the text as the verifier does (names resolved at every instance)
/// and requires every instance proved; verdicts come from the cache the
/// proofs above filled.
pub fn audit(text: &str, libs: &Libraries, cfg: &AuditConfig, cache: &Mutex<VerdictCache>) -> Result<usize, String> {
    audit_as("x86.egg", text, libs, cfg, cache)
}

/// [`audit`] of a file named `file` in messages.
pub fn audit_as(file: &str, text: &str, libs: &Libraries, cfg: &AuditConfig, cache: &Mutex<VerdictCache>) -> Result<usize, String> {
    let rules = load_rules(file, text, libs, cfg).map_err(|d| format!("error: the abstract rules do not load: {d}"))?;
    let jobs = plan(&rules, cfg).map_err(|(_, e)| e)?;
    let bad: Vec<String> = jobs
        .par_iter()
        .with_max_len(1)
        // The instances were proved above, so their pre-keys answer without
        // unrolling either side (that was 20 s of a small run's audit).
        .map(|j| instance_result(libs, j, cfg, cache))
        .filter(|r| r.verdict != Verdict::Proved)
        .map(|r| format!("{} [{}]: {} {}", r.rule, r.instantiation, r.verdict.label(), r.counterexample))
        .collect();
    if !bad.is_empty() {
        return Err(format!("error: {} instance(s) of the abstract rules are not proved; nothing written:\n  {}", bad.len(), bad.join("\n  ")));
    }
    Ok(jobs.len())
}
