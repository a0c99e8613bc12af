//! Auditing rewrite rules: every instantiation of a rule is checked for
//! applicability, then equivalence (Z3), then run on the concrete
//! evaluator (quickcheck). Five verdicts, as cranelift-isle's verifier has.

use crate::differential::CaseGen;
use misaal_rulesets::{Assignment, IntExpr, Rule, Term, describe_env, expand_name, instantiations, op_generics};
use crate::smt::{Budget, Equivalence, prove_equivalent};
use misaal_isa::ast::Ty;
use misaal_isa::dag::{Dag, NodeId};
use misaal_isa::{BitVec, Lane, Semantics, SpecLibrary};
use quickcheck::Gen;
use std::collections::BTreeMap;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    Proved,
    /// With a counterexample the evaluator confirms.
    Refuted,
    /// Timeout or an undecided solver query: never counted as proved.
    Unknown,
    /// No instantiation satisfies the side conditions.
    Inapplicable,
    /// Z3 and the concrete evaluator disagree: a bug in the encoder or the
    /// evaluator, never in the rule.
    EncoderMismatch,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Proved => "proved",
            Verdict::Refuted => "refuted",
            Verdict::Unknown => "unknown",
            Verdict::Inapplicable => "inapplicable",
            Verdict::EncoderMismatch => "encoder-mismatch",
        }
    }
    pub fn parse(s: &str) -> Option<Verdict> {
        [Verdict::Proved, Verdict::Refuted, Verdict::Unknown, Verdict::Inapplicable, Verdict::EncoderMismatch].into_iter().find(|v| v.label() == s)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct InstanceResult {
    pub rule: String,
    /// `bw=16,vsize=256`, or `-` for a concrete rule.
    pub instantiation: String,
    pub verdict: Verdict,
    pub solver_ms: f64,
    pub quickcheck_cases: usize,
    pub counterexample: String,
    pub cached: bool,
}

#[derive(Clone, Debug)]
pub struct AuditConfig {
    pub timeout_ms: u32,
    /// Z3 resource limit per query (0: none); unlike the timeout, the same
    /// on every machine.
    pub rlimit: u32,
    pub quickcheck_cases: usize,
    pub seed: u64,
    /// Vector widths the target supports (x86: 128, 256, 512).
    pub vector_widths: Vec<i128>,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig { timeout_ms: 10_000, rlimit: 0, quickcheck_cases: 1000, seed: 0x7275_6c65, vector_widths: vec![128, 256, 512] }
    }
}

/// The instruction libraries a rule may name.
pub struct Libraries<'a> {
    /// The rule file's target's specs: x86, ARM or HVX.
    pub target: &'a SpecLibrary,
    pub halide: &'a SpecLibrary,
}

/// How an instantiation whose immediate lies outside the range its spec
/// declares (`n: imm4 in 1 to 8`) is refused: such an instantiation is
/// `inapplicable`, never proved, since the instruction does not exist there.
pub const IMMEDIATE_OUT_OF_RANGE: &str = "immediate out of range";

/// The first immediate operand of `t` (at `env`) outside its spec's
/// declared range, with its position and why; also an immediate with a
/// declared range given as a vector input, which Z3 would prove over every
/// value of its width, in range or not.
pub fn immediate_error(libs: &Libraries, t: &Term, env: &Assignment, numeric: &[String]) -> Option<(misaal_isa::diag::Span, String)> {
    let (Term::Instr(name, args, _) | Term::Op(name, args, _)) = t else { return None };
    if let Term::Instr(..) = t
        && let Ok(n) = expand_name(name, env)
        && let Some(i) = libs.target.instr(&n)
    {
        for (a, p) in args.iter().zip(&i.params) {
            let (Ty::Imm(_), Some((lo, hi))) = (p.ty, p.range) else { continue };
            let value = match a {
                Term::Int(e, _) => e.eval(env),
                Term::Var(v, _) if numeric.contains(v) => IntExpr::Var(v.clone()).eval(env),
                _ => return Some((a.span(), format!("`{n}` operand `{}` is an immediate in {lo} to {hi}: give an integer or a numeric ?var, not a vector input", p.name))),
            };
            match value {
                Ok(v) if v >= lo as i128 && v <= hi as i128 => {}
                Ok(v) => return Some((a.span(), format!("{IMMEDIATE_OUT_OF_RANGE}: `{n}` operand `{}` takes {lo} to {hi}, given {v}", p.name))),
                Err(e) => return Some((a.span(), e)),
            }
        }
    }
    args.iter().find_map(|a| immediate_error(libs, a, env, numeric))
}

struct Builder<'a> {
    libs: &'a Libraries<'a>,
    target: &'static str,
    env: &'a Assignment,
    numeric: Vec<String>,
    /// Vector inputs in order of first appearance, with their widths.
    vars: Vec<(String, u32)>,
}

impl Builder<'_> {
    fn resolve(&self, name: &str, args: &[Term], x86: bool) -> Result<(std::sync::Arc<Semantics>, Vec<Ty>, usize), String> {
        if x86 {
            let n = expand_name(name, self.env)?;
            let (i, s) = self.libs.target.get(&n).ok_or_else(|| format!("no {} spec `{n}`", self.target))?;
            return Ok((s.clone(), i.params.iter().map(|p| p.ty).collect(), 0));
        }
        let g = self.libs.halide.generic(name).ok_or_else(|| format!("no Halide op `{name}`"))?;
        let (generics, used) = op_generics(name, args, g.generics.len(), self.env, &self.numeric).map_err(|e| format!("{e} <{}>", g.generics.join(", ")))?;
        let (i, s) = self.libs.halide.instantiate(name, &generics).map_err(|d| d.message)?;
        Ok((s, i.params.iter().map(|p| p.ty).collect(), used))
    }

    /// Records the widths of vector inputs; returns the term's width.
    fn infer(&mut self, t: &Term, want: Option<u32>) -> Result<u32, String> {
        match t {
            Term::Var(v, _) if !self.numeric.contains(v) => {
                if let Some((_, w)) = self.vars.iter().find(|(n, _)| n == v) {
                    return Ok(*w);
                }
                let w = want.ok_or_else(|| format!("cannot tell the width of ?{v}"))?;
                self.vars.push((v.clone(), w));
                Ok(w)
            }
            Term::Var(..) | Term::Int(..) => want.ok_or_else(|| "a constant needs a position that gives it a width".to_string()),
            Term::Type(..) => Err("a type (i E N) is only allowed among a Halide op's generic parameters".into()),
            Term::Instr(name, args, _) | Term::Op(name, args, _) => {
                let (sem, tys, skip) = self.resolve(name, args, matches!(t, Term::Instr(..)))?;
                let operands = &args[skip..];
                if operands.len() != tys.len() {
                    return Err(format!("`{name}` takes {} operand(s), given {}", tys.len(), operands.len()));
                }
                for (a, ty) in operands.iter().zip(&tys) {
                    let w = self.infer(a, Some(ty.width()))?;
                    if w != ty.width() {
                        return Err(format!("an operand of `{name}` must be {} bits, given {w}", ty.width()));
                    }
                }
                Ok(sem.result_width)
            }
        }
    }

    fn build(&self, t: &Term, dag: &mut Dag, want: u32) -> Result<NodeId, String> {
        match t {
            Term::Var(v, _) if !self.numeric.contains(v) => {
                let i = self.vars.iter().position(|(n, _)| n == v).expect("inferred");
                Ok(dag.operand(i as u16))
            }
            Term::Var(v, _) => self.constant(dag, IntExpr::Var(v.clone()).eval(self.env)?, want),
            Term::Int(e, _) => self.constant(dag, e.eval(self.env)?, want),
            Term::Type(..) => Err("misplaced type".into()),
            Term::Instr(name, args, _) | Term::Op(name, args, _) => {
                let (sem, tys, skip) = self.resolve(name, args, matches!(t, Term::Instr(..)))?;
                let ids = args[skip..].iter().zip(&tys).map(|(a, ty)| self.build(a, dag, ty.width())).collect::<Result<Vec<_>, _>>()?;
                dag.inline(&sem, &ids).map_err(|e| format!("`{name}`: {e}"))
            }
        }
    }

    fn constant(&self, dag: &mut Dag, v: i128, w: u32) -> Result<NodeId, String> {
        let fits = w >= 127 || (v >= -(1i128 << (w - 1)) && v < (1i128 << w));
        if !fits {
            return Err(format!("constant {v} does not fit in {w} bits"));
        }
        Ok(dag.constant(BitVec::from_i128(w, v)))
    }
}

fn side(widths: &[u32], b: &Builder, t: &Term, w: u32) -> Result<Semantics, String> {
    let mut dag = Dag::new(widths.to_vec());
    let root = b.build(t, &mut dag, w)?;
    let (dag, roots) = dag.compact(&[root]);
    Ok(Semantics { dag, lanes: vec![Lane { lo: 0, width: w, root: roots[0] }], result_width: w })
}

/// Both sides of one instantiation, over the same vector inputs.
pub struct Sides {
    pub vars: Vec<(String, u32)>,
    pub lhs: Semantics,
    pub rhs: Semantics,
}

pub fn build_sides(libs: &Libraries, rule: &Rule, env: &Assignment) -> Result<Sides, String> {
    let numeric = rule.numeric_vars();
    // Nothing is built, so nothing proved, over an immediate the
    // instruction does not take.
    for side in [&rule.lhs, &rule.rhs] {
        if let Some((_, e)) = immediate_error(libs, side, env, &numeric) {
            return Err(e);
        }
    }
    let mut b = Builder { libs, target: rule.target.name, env, numeric, vars: Vec::new() };
    let wl = b.infer(&rule.lhs, None)?;
    let wr = b.infer(&rule.rhs, Some(wl))?;
    if wl != wr {
        return Err(format!("the left side is {wl} bits wide and the right side {wr}"));
    }
    let widths: Vec<u32> = b.vars.iter().map(|(_, w)| *w).collect();
    let lhs = side(&widths, &b, &rule.lhs, wl)?;
    let rhs = side(&widths, &b, &rule.rhs, wl)?;
    Ok(Sides { vars: b.vars, lhs, rhs })
}

fn counterexample(sides: &Sides, ops: &[BitVec]) -> String {
    let inputs: Vec<String> = sides.vars.iter().zip(ops).map(|((n, _), v)| format!("?{n}={v}")).collect();
    let l = sides.lhs.eval(ops).map(|v| v.to_hex()).unwrap_or_else(|e| e.to_string());
    let r = sides.rhs.eval(ops).map(|v| v.to_hex()).unwrap_or_else(|e| e.to_string());
    format!("{} lhs={l} rhs={r}", inputs.join(" "))
}

/// A stable key for the verdict cache: the full meaning of both sides.
pub fn cache_key(sides: &Sides, cfg: &AuditConfig) -> String {
    let names: Vec<String> = sides.vars.iter().map(|(n, _)| format!("?{n}")).collect();
    let render = |s: &Semantics| s.dag.render(s.lanes[0].root, &names);
    let text = format!("{}\n=\n{}\n{} {} {} {}", render(&sides.lhs), render(&sides.rhs), cfg.timeout_ms, cfg.rlimit, cfg.quickcheck_cases, cfg.seed);
    let fnv = |seed: u64| text.bytes().fold(seed, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("{:016x}{:016x}", fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4))
}

/// A key for a proof alone: both sides' meaning without the audit
/// settings. A `proved` verdict holds whatever budget found it, so a proof
/// found with a longer `--timeout` (32-bit multiply-highs need one) also
/// answers a lookup under the default settings the compiler uses. Refuted
/// and unknown verdicts are kept under [`cache_key`] only.
pub fn proof_key(sides: &Sides) -> String {
    let names: Vec<String> = sides.vars.iter().map(|(n, _)| format!("?{n}")).collect();
    let render = |s: &Semantics| s.dag.render(s.lanes[0].root, &names);
    let text = format!("proof\n{}\n=\n{}", render(&sides.lhs), render(&sides.rhs));
    let fnv = |seed: u64| text.bytes().fold(seed, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("p{:016x}{:016x}", fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4))
}

/// The quickcheck stream of one instantiation: the configured seed mixed
/// with a digest of both sides, so different rule instances draw different
/// cases while a re-run of the same instance draws the same ones.
pub fn quickcheck_seed(sides: &Sides, cfg: &AuditConfig) -> u64 {
    let key = cache_key(sides, cfg);
    cfg.seed ^ u64::from_str_radix(&key[..16], 16).expect("cache keys are hex")
}

/// Checks one instantiation. Quickcheck runs first: a difference it finds
/// is a counterexample at once (Z3 can take long to find one through wide
/// multiplies), and Z3's own encoding is evaluated at that input to catch
/// encoder bugs. Otherwise Z3 decides, and its counterexamples are
/// confirmed on the evaluator.
pub fn check_instance(rule: &Rule, env: &Assignment, sides: &Sides, cfg: &AuditConfig) -> InstanceResult {
    let mut r = InstanceResult {
        rule: rule.name.clone(),
        instantiation: describe_env(env),
        verdict: Verdict::Unknown,
        solver_ms: 0.0,
        quickcheck_cases: 0,
        counterexample: String::new(),
        cached: false,
    };
    let types: Vec<Ty> = sides.vars.iter().map(|(_, w)| Ty::Bv(*w)).collect();
    let case_gen = CaseGen::from_types(types);
    let mut g = Gen::from_size_and_seed(64, quickcheck_seed(sides, cfg));
    let mut differing: Option<Vec<BitVec>> = None;
    for k in 0..cfg.quickcheck_cases {
        let c = case_gen.case(&mut g);
        r.quickcheck_cases = k + 1;
        if sides.lhs.eval(&c).ok() != sides.rhs.eval(&c).ok() {
            differing = Some(c);
            break;
        }
    }
    if let Some(c) = differing {
        let t = Instant::now();
        let agree = |s: &Semantics| crate::smt::evaluate(s, &c) == s.eval(&c).ok();
        let consistent = agree(&sides.lhs) && agree(&sides.rhs);
        r.solver_ms = t.elapsed().as_secs_f64() * 1e3;
        r.verdict = if consistent { Verdict::Refuted } else { Verdict::EncoderMismatch };
        r.counterexample = if consistent { counterexample(sides, &c) } else { format!("Z3's encoding disagrees with the evaluator at: {}", counterexample(sides, &c)) };
        return r;
    }
    let t = Instant::now();
    let z3 = prove_equivalent(&sides.lhs, &sides.rhs, Budget { timeout_ms: cfg.timeout_ms, rlimit: cfg.rlimit });
    r.solver_ms = t.elapsed().as_secs_f64() * 1e3;
    match (z3, differing) {
        (Equivalence::Proved, None) => r.verdict = Verdict::Proved,
        (Equivalence::Proved, Some(c)) => {
            r.verdict = Verdict::EncoderMismatch;
            r.counterexample = format!("Z3 proved it, the evaluator differs: {}", counterexample(sides, &c));
        }
        (Equivalence::Differ(ops), _) => {
            let confirmed = sides.lhs.eval(&ops).ok() != sides.rhs.eval(&ops).ok();
            r.verdict = if confirmed { Verdict::Refuted } else { Verdict::EncoderMismatch };
            r.counterexample = if confirmed { counterexample(sides, &ops) } else { format!("Z3's counterexample does not differ on the evaluator: {}", counterexample(sides, &ops)) };
        }
        (Equivalence::Unknown(why), Some(c)) => {
            r.verdict = Verdict::Refuted;
            r.counterexample = format!("{} (found by quickcheck; Z3: {why})", counterexample(sides, &c));
        }
        (Equivalence::Unknown(why), None) => {
            r.verdict = Verdict::Unknown;
            r.counterexample = format!("Z3: {why}");
        }
    }
    r
}

/// Verdicts for a whole file's rules, per instantiation, in rule order.
pub fn summarize(results: &[InstanceResult]) -> BTreeMap<Verdict, usize> {
    let mut m = BTreeMap::new();
    for r in results {
        *m.entry(r.verdict).or_default() += 1;
    }
    m
}

pub use crate::verdicts::{VerdictCache, bundled_rulesets_dir};

/// Parses a rule file and resolves every instruction and op it names
/// against the libraries: an unknown name, a name of another target's spec,
/// or an immediate outside its declared range at every instantiation is a
/// load error at its `file:line:col`, never a verdict. Whether the named
/// specs are verified is asked per instantiation, by [`unverified_specs`]
/// (or at load, by [`load_rules_verified`]).
pub fn load_rules(file: &str, text: &str, libs: &Libraries, cfg: &AuditConfig) -> Result<Vec<Rule>, misaal_isa::Diagnostics> {
    load_with(file, text, libs, cfg, None).map(|(rules, _)| rules)
}

/// [`load_rules`] and each rule's number of instantiations, or why they
/// cannot be enumerated (which `load_rules` leaves to the planner): the
/// load enumerates them anyway, and a compile's rule book needs the counts.
pub fn load_rules_counted(file: &str, text: &str, libs: &Libraries, cfg: &AuditConfig) -> Result<(Vec<Rule>, Vec<Result<usize, String>>), misaal_isa::Diagnostics> {
    load_with(file, text, libs, cfg, None)
}

/// [`load_rules`], and a spec `status` does not vouch for is a load error
/// too (as `misaal verify` loads ARM and HVX rules, whose specs all met qemu).
pub fn load_rules_verified(file: &str, text: &str, libs: &Libraries, cfg: &AuditConfig, status: &misaal_isa::StatusTable) -> Result<Vec<Rule>, misaal_isa::Diagnostics> {
    load_with(file, text, libs, cfg, Some(status)).map(|(rules, _)| rules)
}

type Counts = Vec<Result<usize, String>>;

fn load_with(file: &str, text: &str, libs: &Libraries, cfg: &AuditConfig, status: Option<&misaal_isa::StatusTable>) -> Result<(Vec<Rule>, Counts), misaal_isa::Diagnostics> {
    use misaal_isa::{Diagnostic, Diagnostics};
    let rules = misaal_rulesets::parse_rules(file, text)?;
    let Some(first) = rules.first() else { return Ok((rules, Vec::new())) };
    let target = first.target.name;
    // A library of another target's specs is the caller's mistake, said once.
    if let Some(i) = libs.target.instrs().first()
        && i.target != target
    {
        return Err(Diagnostics(vec![Diagnostic::new(&first.file, first.span, format!("the rules are for {target}, but the instruction library given holds {} specs", i.target))]));
    }
    let x86 = |n: &str| -> Result<(), String> {
        match libs.target.instr(n) {
            Some(i) if i.target != target => Err(format!("`{n}` is a {} spec; this file's rules are for {target}", i.target)),
            Some(_) => match status.map(|s| s.verified_in(libs.target, n)) {
                Some(Err(why)) => Err(format!("{why}: not a verified {target} spec")),
                _ => Ok(()),
            },
            None => Err(match misaal_rulesets::closest(n, libs.target.instrs().iter().map(|i| i.name.as_str())) {
                Some(c) => format!("no {target} spec `{n}`; did you mean `{c}`?"),
                None => format!("no {target} spec `{n}`"),
            }),
        }
    };
    let op = |n: &str| -> Result<(), String> {
        match libs.halide.generic(n) {
            Some(_) => Ok(()),
            None => Err(match misaal_rulesets::closest(n, libs.halide.generic_names()) {
                Some(c) => format!("no Halide op `{n}`; did you mean `{c}`?"),
                None => format!("no Halide op `{n}`"),
            }),
        }
    };
    // Each rule's instantiations, enumerated once for the checks below (in
    // parallel; `collect` keeps rule order, so the errors' order too).
    use rayon::prelude::*;
    let enumerated: Vec<Result<Vec<Assignment>, String>> = rules.par_iter().map(|r| instantiations(r, &cfg.vector_widths)).collect();
    let counts: Counts = enumerated.iter().map(|e| e.as_ref().map(Vec::len).map_err(Clone::clone)).collect();
    let envs: Vec<Vec<Assignment>> = enumerated.into_iter().map(Result::unwrap_or_default).collect();
    misaal_rulesets::check_names_at(&rules, &envs, &x86, &op)?;
    // An immediate out of range at every instantiation (a literal one, say)
    // is a mistake in the file; out of range at some is `inapplicable` there.
    let mut errors = Vec::new();
    for (rule, envs) in rules.iter().zip(&envs) {
        let numeric = rule.numeric_vars();
        let errs: Vec<_> = envs.iter().map(|e| [&rule.lhs, &rule.rhs].iter().find_map(|t| immediate_error(libs, t, e, &numeric))).collect();
        if let Some(Some((span, msg))) = errs.first()
            && (errs.iter().all(Option::is_some) || !msg.starts_with(IMMEDIATE_OUT_OF_RANGE))
        {
            errors.push(Diagnostic::new(&rule.file, *span, format!("rule {:?}: {msg}", rule.name)));
        }
    }
    if errors.is_empty() { Ok((rules, counts)) } else { Err(Diagnostics(errors)) }
}

/// The target specs an instantiation uses that `status` does not vouch for
/// (never checked, skipped, failed, or changed since), each with the reason.
/// Such an instantiation is not audited: its rule cannot be used there.
pub fn unverified_specs(libs: &Libraries, rule: &Rule, env: &Assignment, status: &misaal_isa::StatusTable) -> Vec<(String, String)> {
    fn walk(t: &Term, out: &mut Vec<String>, env: &Assignment) {
        if let Term::Instr(name, _, _) = t
            && let Ok(n) = expand_name(name, env)
            && !out.contains(&n)
        {
            out.push(n);
        }
        if let Term::Instr(_, args, _) | Term::Op(_, args, _) = t {
            args.iter().for_each(|a| walk(a, out, env));
        }
    }
    let mut names = Vec::new();
    walk(&rule.lhs, &mut names, env);
    walk(&rule.rhs, &mut names, env);
    names
        .into_iter()
        .filter_map(|n| status.verified_in(libs.target, &n).err().map(|why| (n, why)))
        .collect()
}

/// One unit of work: a rule and one assignment of its numeric variables.
pub struct Job<'r> {
    pub rule: &'r Rule,
    pub env: Option<Assignment>,
}

/// Expands rules into jobs; a rule with no satisfying assignment becomes
/// one `inapplicable` job (env `None`).
pub fn plan<'r>(rules: &'r [Rule], cfg: &AuditConfig) -> Result<Vec<Job<'r>>, (String, String)> {
    let mut jobs = Vec::new();
    for r in rules {
        let envs = instantiations(r, &cfg.vector_widths).map_err(|e| (r.name.clone(), format!("{}:{}:{}: error: rule {:?}: {e}", r.file, r.span.line, r.span.col, r.name)))?;
        if envs.is_empty() {
            jobs.push(Job { rule: r, env: None });
        }
        jobs.extend(envs.into_iter().map(|e| Job { rule: r, env: Some(e) }));
    }
    Ok(jobs)
}

/// Runs one job, consulting and filling the cache.
pub fn run_job(libs: &Libraries, job: &Job, cfg: &AuditConfig, cache: &std::sync::Mutex<VerdictCache>) -> InstanceResult {
    let rule = job.rule;
    let Some(env) = &job.env else {
        return InstanceResult {
            rule: rule.name.clone(),
            instantiation: "-".into(),
            verdict: Verdict::Inapplicable,
            solver_ms: 0.0,
            quickcheck_cases: 0,
            counterexample: "no assignment satisfies the side conditions".into(),
            cached: false,
        };
    };
    let sides = match build_sides(libs, rule, env) {
        Ok(s) => s,
        Err(e) if e.starts_with(IMMEDIATE_OUT_OF_RANGE) => {
            return InstanceResult {
                rule: rule.name.clone(),
                instantiation: describe_env(env),
                verdict: Verdict::Inapplicable,
                solver_ms: 0.0,
                quickcheck_cases: 0,
                counterexample: e,
                cached: false,
            };
        }
        Err(e) => {
            return InstanceResult {
                rule: rule.name.clone(),
                instantiation: describe_env(env),
                verdict: Verdict::Refuted,
                solver_ms: 0.0,
                quickcheck_cases: 0,
                counterexample: format!("does not type-check here: {e}"),
                cached: false,
            };
        }
    };
    let key = cache_key(&sides, cfg);
    let pkey = proof_key(&sides);
    // Recorded beside a proof, so that the next lookup of this instance
    // needs no sides (see `prekey`).
    let pre = crate::prekey::pre_key(libs, rule, env);
    {
        let mut c = cache.lock().expect("cache");
        let hit = match c.get(&key) {
            Some(h) => Some(h),
            None => c.get(&pkey).filter(|h| h.0 == Verdict::Proved),
        };
        if let Some((v, ms, n, cx)) = hit {
            if let Some(pre) = pre.filter(|_| v == Verdict::Proved) {
                c.put_pre_key(pre, pkey);
            }
            return InstanceResult { rule: rule.name.clone(), instantiation: describe_env(env), verdict: v, solver_ms: ms, quickcheck_cases: n, counterexample: cx, cached: true };
        }
    }
    let r = check_instance(rule, env, &sides, cfg);
    let mut c = cache.lock().expect("cache");
    c.put(key, &r);
    if r.verdict == Verdict::Proved {
        c.put(pkey.clone(), &r);
        if let Some(pre) = pre {
            c.put_pre_key(pre, pkey);
        }
    }
    drop(c);
    r
}
