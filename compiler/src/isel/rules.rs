//! Stage 2, rules: the ruleset file read through `misaal-rulesets` (and
//! name-checked by the verifier's loader), instantiated at the widths and
//! lane counts the kernel uses, vetted, and rendered as egglog `rewrite`s.
//!
//! Which instantiations are loaded:
//! 1. Every instantiation of every rule (`misaal_rulesets::instantiations`,
//!    at the target's vector widths).
//! 2. Those whose left side's root op, with its generic parameters, occurs
//!    in the kernel, closed under what the loaded right sides introduce
//!    (a rule that splits an `add` at 512 lanes brings in the `add` rules at
//!    256). Nothing else is proved or loaded. Of those, an instance whose
//!    left side needs a node (with its children and grandchildren) that
//!    neither the kernel nor another such instance can put in the e-graph
//!    is left out too ([`matchable`](super::matchable)).
//! 3. Those over target specs that `STATUS.tsv` does not vouch for are left
//!    out and counted (on a CPU without AVX-512, every 512-bit rule).
//! 4. The rest need the verdict `proved`, from the verdict cache or proved
//!    on the spot (`misaal_verifier::audit::run_job`). Any other verdict
//!    refuses the whole ruleset, unless `allow_unproved` is set; then that
//!    instantiation is left out, and listed. So every loaded rewrite is a
//!    proved one.

use super::features::CpuFeatures;
use super::matchable::{Analysis, Shape, matchable};
use super::encode::{CONST, SORT, canonical_const, halide_ctor, instr_ctor};
use misaal_isa::ast::Ty;
use misaal_isa::{SpecLibrary, StatusTable};
use misaal_rulesets::{Assignment, IntExpr, Rule, Term, describe_env, expand_name, instantiations, op_generics};
use misaal_verifier::audit::{AuditConfig, Job, Libraries, VerdictCache, Verdict, load_rules_counted, run_job, unverified_specs};
use misaal_verifier::prekey::proved_by_pre_key;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// A rule side with its numeric variables filled in.
#[derive(Clone, Debug, PartialEq)]
pub enum Pat {
    Var(String),
    Const { bits: i64, value: i64 },
    Halide { name: String, generics: Vec<i64>, kids: Vec<Pat> },
    /// A target instruction (a spec of the rule file's target).
    Instr { name: String, kids: Vec<Pat> },
}

impl Pat {
    /// The egglog pattern, each variable a pattern variable `v_NAME`.
    pub fn render(&self) -> String {
        self.render_with(&|v| format!("v_{v}"))
    }
    /// The egglog term, each variable written by `var`.
    pub fn render_with(&self, var: &dyn Fn(&str) -> String) -> String {
        match self {
            Pat::Var(v) => var(v),
            Pat::Const { bits, value } => format!("({CONST} {bits} {value})"),
            Pat::Halide { name, generics, kids } => {
                let mut parts = vec![halide_ctor(name)];
                parts.extend(generics.iter().map(|g| g.to_string()));
                parts.extend(kids.iter().map(|k| k.render_with(var)));
                format!("({})", parts.join(" "))
            }
            Pat::Instr { name, kids } => {
                let mut parts = vec![instr_ctor(name)];
                parts.extend(kids.iter().map(|k| k.render_with(var)));
                format!("({})", parts.join(" "))
            }
        }
    }
    /// The egglog expression [`render`](Self::render) writes, as egglog's
    /// parser reads it, every node with `span`.
    pub fn expr(&self, span: &egglog::ast::Span) -> egglog::ast::Expr {
        use egglog::ast::{Expr, Literal};
        let int = |v: i64| Expr::Lit(span.clone(), Literal::Int(v));
        match self {
            Pat::Var(v) => Expr::Var(span.clone(), format!("v_{v}")),
            Pat::Const { bits, value } => Expr::Call(span.clone(), CONST.to_string(), vec![int(*bits), int(*value)]),
            Pat::Halide { name, generics, kids } => Expr::Call(span.clone(), halide_ctor(name), generics.iter().map(|&g| int(g)).chain(kids.iter().map(|k| k.expr(span))).collect()),
            Pat::Instr { name, kids } => Expr::Call(span.clone(), instr_ctor(name), kids.iter().map(|k| k.expr(span)).collect()),
        }
    }
    /// Every node of the pattern, variables included, parents first.
    pub(super) fn walk<'p>(&'p self, f: &mut dyn FnMut(&'p Pat)) {
        f(self);
        if let Pat::Halide { kids, .. } | Pat::Instr { kids, .. } = self {
            kids.iter().for_each(|k| k.walk(f));
        }
    }
    /// The lane counts of the pattern's vectors (a Halide op's `N`, a
    /// slice's source `M`) that are not powers of two.
    fn odd_lanes(&self) -> BTreeSet<i64> {
        let mut v = BTreeSet::new();
        self.walk(&mut |p| {
            // A slice's source lanes (`M`), which must exist; its own may be
            // anything (the 3 pad lanes of a 5-lane vector).
            if let Pat::Halide { name, generics, .. } = p
                && let Some(&n) = generics.get(if name == "slice" { 3 } else { 2 })
                && n > 0
                && n & (n - 1) != 0
            {
                v.insert(n);
            }
        });
        v
    }
    /// The Halide ops (name, generics) in the pattern.
    pub fn halide_heads(&self) -> Vec<(String, Vec<i64>)> {
        let mut v = Vec::new();
        self.walk(&mut |p| {
            if let Pat::Halide { name, generics, .. } = p {
                v.push((name.clone(), generics.clone()));
            }
        });
        v
    }
    /// The target instructions in the pattern.
    pub fn instructions(&self) -> Vec<String> {
        let mut v = Vec::new();
        self.walk(&mut |p| {
            if let Pat::Instr { name, .. } = p
                && !v.contains(name)
            {
                v.push(name.clone());
            }
        });
        v
    }
    fn root_head(&self) -> Option<(String, Vec<i64>)> {
        match self {
            Pat::Halide { name, generics, .. } => Some((name.clone(), generics.clone())),
            _ => None,
        }
    }
}

/// One loaded rewrite.
#[derive(Clone, Debug)]
pub struct Instance {
    /// `x86.avg-u8[vsize=256]`: the rule's name and its instantiation; the
    /// egglog rule's `:name`.
    pub name: String,
    pub rule: String,
    pub instantiation: String,
    pub lhs: Pat,
    pub rhs: Pat,
    pub verdict: Verdict,
    /// A `birewrite`: loaded in both directions (the reverse named `NAME:rev`).
    pub bidirectional: bool,
    /// Whether the verdict came from the verdict cache file (else it was
    /// proved in this process).
    pub cached: bool,
}

/// An instantiation that was not loaded, and why.
#[derive(Clone, Debug)]
pub struct Excluded {
    pub name: String,
    pub reason: String,
}

/// The rules loaded for one kernel.
#[derive(Clone, Debug, Default)]
pub struct LoadedRules {
    pub instances: Vec<Instance>,
    /// Instantiations over specs `STATUS.tsv` does not vouch for.
    pub unverified_spec: Vec<Excluded>,
    /// Instantiations left out because their verdict is not `proved`
    /// (only with `allow_unproved`; otherwise loading fails).
    pub unproved: Vec<Excluded>,
    /// Instantiations that need a CPUID feature the target lacks.
    pub outside_target: Vec<Excluded>,
    /// Instantiations whose root op never occurs in the kernel.
    pub irrelevant: usize,
    /// Seconds spent on verdicts (cache reads and proofs).
    pub verify_secs: f64,
    /// Of which reading the verdict cache and the shipped verdict files.
    pub verdict_files_secs: f64,
}

impl LoadedRules {
    /// Every target instruction the loaded rules can produce.
    pub fn instructions(&self) -> BTreeSet<String> {
        self.instances.iter().flat_map(|i| i.rhs.instructions()).collect()
    }
}

/// Where verdicts come from.
pub enum Verdicts<'a> {
    /// The verdict cache at this path (read, and written with new proofs).
    Cache(&'a std::path::Path),
    /// Prove every instantiation now, remembering nothing.
    NoCache,
}

/// What loading needs to know about the target.
pub struct RuleEnv<'a> {
    /// The target's instruction specs, which `(x86 NAME ...)` terms name.
    pub instrs: &'a SpecLibrary,
    pub halide: &'a SpecLibrary,
    pub status: &'a StatusTable,
    pub vector_widths: &'a [i128],
    /// The widest register this compile holds a value in (x86: 256, or
    /// 512 with `--zmm`); an instance with a wider instruction is left out,
    /// as the emitter could not hold its values. `None`: no limit.
    pub register_bits: Option<i64>,
}

struct PatBuilder<'a> {
    env: &'a RuleEnv<'a>,
    assign: &'a Assignment,
    numeric: Vec<String>,
}

impl PatBuilder<'_> {
    fn int(&self, t: &Term) -> Result<Option<i64>, String> {
        Ok(match t {
            Term::Int(e, _) => Some(e.eval(self.assign)? as i64),
            Term::Var(v, _) if self.numeric.contains(v) => Some(IntExpr::Var(v.clone()).eval(self.assign)? as i64),
            _ => None,
        })
    }

    /// `t` in an operand position `bits` wide.
    fn pat(&self, t: &Term, bits: Option<u32>) -> Result<Pat, String> {
        match t {
            Term::Var(v, _) if !self.numeric.contains(v) => Ok(Pat::Var(v.clone())),
            Term::Var(..) | Term::Int(..) => {
                let v = self.int(t)?.expect("numeric");
                let bits = bits.ok_or("a constant needs a position that gives it a width")? as i64;
                Ok(Pat::Const { bits, value: canonical_const(bits, v as i128) })
            }
            Term::Type(..) => Err("a type (i E N) is only allowed among a Halide op's generic parameters".into()),
            Term::Instr(name, args, _) => {
                let n = expand_name(name, self.assign)?;
                let i = self.env.instrs.instr(&n).ok_or_else(|| format!("no target spec `{n}`"))?;
                if i.params.len() != args.len() {
                    return Err(format!("`{n}` takes {} operand(s), given {}", i.params.len(), args.len()));
                }
                let kids = args.iter().zip(&i.params).map(|(a, p)| self.pat(a, Some(width(p.ty)))).collect::<Result<_, _>>()?;
                Ok(Pat::Instr { name: n, kids })
            }
            Term::Op(name, args, _) => {
                let g = self.env.halide.generic(name).ok_or_else(|| format!("no Halide op `{name}`"))?;
                let (wide, used) = op_generics(name, args, g.generics.len(), self.assign, &self.numeric)?;
                let generics: Vec<i64> = wide.iter().map(|&x| x as i64).collect();
                let i = self.env.halide.instantiate_signature(name, &wide).map_err(|d| d.message)?;
                let ops = &args[used..];
                if ops.len() != i.params.len() {
                    return Err(format!("`{name}` takes {} operand(s), given {}", i.params.len(), ops.len()));
                }
                let kids = ops.iter().zip(&i.params).map(|(a, p)| self.pat(a, Some(width(p.ty)))).collect::<Result<_, _>>()?;
                Ok(Pat::Halide { name: name.clone(), generics, kids })
            }
        }
    }
}

fn width(t: Ty) -> u32 {
    t.width()
}

/// Both sides of one instantiation of `rule`.
pub fn instantiate(env: &RuleEnv, rule: &Rule, assign: &Assignment) -> Result<(Pat, Pat), String> {
    let b = PatBuilder { env, assign, numeric: rule.numeric_vars() };
    Ok((b.pat(&rule.lhs, None)?, b.pat(&rule.rhs, None)?))
}

type Head = (String, Vec<i64>);

/// One instantiation of one rule, ready to load.
#[derive(Clone)]
struct Candidate {
    rule: usize,
    /// The rule's instantiations (shared with the book's cache) and which
    /// one this is: a copy of each was 2.5 MB of softmax's peak.
    envs: Arc<Vec<Assignment>>,
    env: usize,
    name: String,
    lhs: Pat,
    /// Built the first time it is asked for ([`Candidate::rhs`]); `None`:
    /// it does not type-check, and the instance is never loaded (the
    /// verifier calls it refuted). Given the kernel, only the instances
    /// whose left side can match need it: softmax's 3,000 division
    /// instances by divisors it lacks were half its instances' nodes.
    rhs: std::sync::OnceLock<Option<Pat>>,
    /// Why it cannot be used here: target specs `STATUS.tsv` does not vouch for.
    unverified: Option<String>,
}

impl Candidate {
    fn assign(&self) -> &Assignment {
        &self.envs[self.env]
    }

    fn rhs(&self, env: &RuleEnv, rule: &Rule) -> Option<&Pat> {
        self.rhs
            .get_or_init(|| {
                let b = PatBuilder { env, assign: self.assign(), numeric: rule.numeric_vars() };
                b.pat(&rule.rhs, None).ok()
            })
            .as_ref()
    }

    /// The right side of an instance that was loaded (so built).
    fn built_rhs(&self) -> &Pat {
        self.rhs.get().and_then(Option::as_ref).expect("a loaded instance's right side is built")
    }
}

/// Whether a candidate's right side can be loaded in this compile.
enum Usable<'c> {
    Yes(&'c Pat),
    /// It does not type-check, or writes a lane count the kernel lacks.
    No,
    /// It needs wider registers or features than the target's.
    Outside(Excluded),
}

/// A rule file parsed, name-checked and its instantiations enumerated at
/// every width: built once per target and rule file, and shared by every
/// kernel. Instances are built (type-checked, their specs' status looked
/// up) per root op, the first time a kernel needs that op, and verdicts
/// are settled only for the instances some kernel can use; both are
/// remembered. A rule book over the whole x86 ruleset is then a few
/// milliseconds and a few megabytes, not every instance of every rule.
pub struct RuleBook {
    pub file: String,
    rules: Vec<Rule>,
    /// By the Halide op at the root of the left side: each rule's index. A
    /// rule rooted elsewhere is never loaded.
    by_op: BTreeMap<String, Vec<usize>>,
    /// Each rule's instantiations, enumerated again the first time a kernel
    /// has its root op: kept for every rule they were a tenth of a compile's
    /// peak heap, and a kernel uses the ops of a few dozen rules.
    assignments: Mutex<HashMap<usize, Arc<Vec<Assignment>>>>,
    vector_widths: Vec<i128>,
    total: usize,
    /// Per root op, the instantiations by exact head (rule and assignment
    /// positions in `by_op`), from the root's generics alone.
    heads: Mutex<HashMap<String, Arc<BTreeMap<Head, Vec<(usize, usize)>>>>>,
    /// The instances of one exact head, once built. Built per head, not
    /// per op: `add` has instances at every type and width, and building
    /// one (type-checking both sides, digesting the specs they name) for a
    /// head no kernel has was most of a compile's rule time.
    built: Mutex<HashMap<Head, Arc<Vec<Candidate>>>>,
    settled: Mutex<HashMap<String, (Verdict, String, bool)>>,
    /// The verdict cache file last read, and what it holds: read once for
    /// every kernel and function the book selects (~70,000 rows).
    verdict_cache: Mutex<Option<(std::path::PathBuf, Arc<Mutex<VerdictCache>>)>>,
    /// Seconds spent building the book.
    pub build_secs: f64,
}

/// What a rule file's whole-file check ([`load_rules_counted`]) depends
/// on: the file's name and text, the code that checks it
/// ([`misaal_verifier::prekey::ENGINE_DIGEST`]), the vector widths, and
/// the names of the target's specs and of the Halide ops (a name the
/// check found is one a spec or op still has). A spec whose immediate's
/// range changed under the same name is not seen here; an instance it
/// makes out of range is never proved, so never loaded.
pub fn check_memo_key(env: &RuleEnv, file: &str, text: &str) -> String {
    let mut names = String::new();
    for i in env.instrs.instrs() {
        names.push_str(&i.name);
        names.push('\n');
    }
    for n in env.halide.generic_names() {
        names.push_str(n);
        names.push('\n');
    }
    misaal_isa::status::text_digest(&format!("rulebook 1\nengine {}\nwidths {:?}\nnames {}\nfile {file}\n{text}", misaal_verifier::prekey::ENGINE_DIGEST, env.vector_widths, misaal_isa::status::text_digest(&names)))
}

impl RuleBook {
    pub fn new(env: &RuleEnv, file: &str, text: &str) -> Result<RuleBook, String> {
        Self::new_with_memo(env, file, text, None)
    }

    /// [`new`](Self::new), with the whole-file check remembered in folder
    /// `memo` (see [`check_memo_key`]): a file checked once with these
    /// specs is only parsed again, and its counts read back.
    pub fn new_with_memo(env: &RuleEnv, file: &str, text: &str, memo: Option<&std::path::Path>) -> Result<RuleBook, String> {
        let started = std::time::Instant::now();
        let libs = Libraries { target: env.instrs, halide: env.halide };
        let cfg = AuditConfig { vector_widths: env.vector_widths.to_vec(), ..Default::default() };
        // Every rule's assignments are enumerated at load, so that a rule
        // that has none is an error of the file whatever the kernel (taken
        // in rule order, so the first error is the same), and every name
        // and immediate at every assignment is checked; only the number of
        // assignments is kept. That is most of a small kernel's rule book,
        // so a file that passed is remembered by its text and the specs'
        // and ops' names, and the next load only parses it.
        let memo_path = memo.map(|d| d.join(format!("rulebook-{}.counts", check_memo_key(env, file, text))));
        let remembered: Option<Vec<usize>> = memo_path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()).and_then(|t| t.lines().map(|l| l.parse().ok()).collect());
        // A memo of another length than the file has rules is not this
        // file's: checked again (and rewritten).
        let parsed = match remembered {
            Some(counts) => Some((misaal_rulesets::parse_rules(file, text).map_err(|d| format!("{d}\n{} error(s) loading {file}", d.0.len()))?, counts)),
            None => None,
        };
        let (rules, all) = match parsed {
            Some((rules, counts)) if counts.len() == rules.len() => (rules, counts.into_iter().map(Ok).collect::<Vec<_>>()),
            _ => {
                let (rules, all) = load_rules_counted(file, text, &libs, &cfg).map_err(|d| format!("{d}\n{} error(s) loading {file}", d.0.len()))?;
                if let (Some(p), Some(counts)) = (&memo_path, all.iter().map(|c| c.as_ref().ok().copied()).collect::<Option<Vec<usize>>>()) {
                    // Written whole or not at all; a failure only costs the next load the check.
                    let tmp = p.with_extension(format!("tmp{}", std::process::id()));
                    let body: String = counts.iter().map(|c| format!("{c}\n")).collect();
                    let _ = std::fs::create_dir_all(p.parent().expect("a folder")).and_then(|()| std::fs::write(&tmp, body)).and_then(|()| std::fs::rename(&tmp, p));
                }
                (rules, all)
            }
        };
        let mut by_op: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut total = 0;
        for (k, (rule, n)) in rules.iter().zip(all).enumerate() {
            total += n.map_err(|e| format!("{file}:{}:{}: error: rule {:?}: {e}", rule.span.line, rule.span.col, rule.name))?;
            if let Term::Op(op, _, _) = &rule.lhs {
                by_op.entry(op.clone()).or_default().push(k);
            }
        }
        Ok(RuleBook { file: file.into(), rules, by_op, assignments: Mutex::default(), vector_widths: env.vector_widths.to_vec(), total, heads: Mutex::new(HashMap::new()), built: Mutex::new(HashMap::new()), settled: Mutex::new(HashMap::new()), verdict_cache: Mutex::new(None), build_secs: started.elapsed().as_secs_f64() })
    }

    /// Hands the book the verdict cache at `path`, read beforehand (say,
    /// while the target loaded): [`load`](Self::load) with
    /// `Verdicts::Cache(path)` then reads no file.
    pub fn preload_verdicts(&self, path: &std::path::Path, cache: VerdictCache) {
        *self.verdict_cache.lock().expect("verdict cache") = Some((path.to_path_buf(), Arc::new(Mutex::new(cache))));
    }

    /// The verdict cache at `path`, read the first time it is asked for.
    fn verdict_cache(&self, path: &std::path::Path) -> Arc<Mutex<VerdictCache>> {
        let mut slot = self.verdict_cache.lock().expect("verdict cache");
        match &*slot {
            Some((p, c)) if p == path => c.clone(),
            _ => slot.insert((path.to_path_buf(), Arc::new(Mutex::new(VerdictCache::load(path))))).1.clone(),
        }
    }

    /// Rule `k`'s instantiations (enumerated without error when the book
    /// was built).
    fn assignments(&self, k: usize) -> Arc<Vec<Assignment>> {
        if let Some(a) = self.assignments.lock().expect("rule book").get(&k) {
            return a.clone();
        }
        let a = Arc::new(instantiations(&self.rules[k], &self.vector_widths).unwrap_or_default());
        self.assignments.lock().expect("rule book").insert(k, a.clone());
        a
    }

    /// Frees what [`load`](Self::load) built and read (instances, each
    /// rule's instantiations, the verdict files): a tenth of a compile's
    /// peak memory while the e-graph saturates. A later `load` builds them
    /// again; settled verdicts are kept.
    pub fn release_caches(&self) {
        self.assignments.lock().expect("rule book").clear();
        self.heads.lock().expect("rule book").clear();
        self.built.lock().expect("rule book").clear();
        *self.verdict_cache.lock().expect("verdict cache") = None;
    }

    /// The instantiations of the rules rooted at `op`, by exact head: the
    /// root's generics under each assignment (no side is built).
    fn heads_of(&self, env: &RuleEnv, op: &str) -> Arc<BTreeMap<Head, Vec<(usize, usize)>>> {
        if let Some(h) = self.heads.lock().expect("rule book").get(op) {
            return h.clone();
        }
        let mut by_head: BTreeMap<Head, Vec<(usize, usize)>> = BTreeMap::new();
        for (p, &k) in self.by_op.get(op).into_iter().flatten().enumerate() {
            let envs = self.assignments(k);
            let rule = &self.rules[k];
            let (Term::Op(name, args, _), Some(g)) = (&rule.lhs, env.halide.generic(op)) else { continue };
            let numeric = rule.numeric_vars();
            for (j, assign) in envs.iter().enumerate() {
                // One the root's generics cannot be read for fails to
                // instantiate too: it is never loaded either way.
                if let Ok((wide, _)) = misaal_rulesets::op_generics(name, args, g.generics.len(), assign, &numeric) {
                    by_head.entry((name.clone(), wide.iter().map(|&x| x as i64).collect())).or_default().push((p, j));
                }
            }
        }
        let h = Arc::new(by_head);
        self.heads.lock().expect("rule book").insert(op.to_string(), h.clone());
        h
    }

    /// The instances whose left side has exact head `head`.
    fn instances_of(&self, env: &RuleEnv, head: &Head) -> Arc<Vec<Candidate>> {
        if let Some(b) = self.built.lock().expect("rule book").get(head) {
            return b.clone();
        }
        let libs = Libraries { target: env.instrs, halide: env.halide };
        let index = self.heads_of(env, &head.0);
        let ops = self.by_op.get(&head.0);
        // Each instantiation is type-checked and its specs' status looked
        // up (unrolling them the first time) in parallel; `collect` keeps
        // rule order, so the candidates are the same, in the same order.
        use rayon::prelude::*;
        let envs: HashMap<usize, Arc<Vec<Assignment>>> = ops.into_iter().flatten().map(|&k| (k, self.assignments(k))).collect();
        let jobs: Vec<(usize, usize)> = index.get(head).into_iter().flatten().filter_map(|&(p, j)| ops.map(|o| (o[p], j))).collect();
        let built: Vec<Option<Candidate>> = jobs
            .par_iter()
            .map(|&(k, j)| {
                let rule = &self.rules[k];
                let assign = &envs[&k][j];
                // An instantiation whose sides do not type-check is never
                // loaded (the verifier calls it refuted).
                let b = PatBuilder { env, assign, numeric: rule.numeric_vars() };
                let lhs = b.pat(&rule.lhs, None).ok()?;
                if lhs.root_head().as_ref() != Some(head) {
                    return None;
                }
                let missing = unverified_specs(&libs, rule, assign, env.status);
                let unverified = (!missing.is_empty()).then(|| missing.iter().map(|(s, w)| format!("{s}: {w}")).collect::<Vec<_>>().join("; "));
                let name = format!("{}[{}]", rule.name, describe_env(assign));
                Some(Candidate { rule: k, envs: envs[&k].clone(), env: j, name, lhs, rhs: std::sync::OnceLock::new(), unverified })
            })
            .collect();
        let b = Arc::new(built.into_iter().flatten().collect::<Vec<_>>());
        self.built.lock().expect("rule book").insert(head.clone(), b.clone());
        b
    }

    /// Every target instruction some instantiation's right side names, over
    /// verified specs only: what the rules can reach at all. (Builds every
    /// instance of the book.)
    pub fn reachable_instructions(&self, env: &RuleEnv) -> BTreeSet<String> {
        let ops: Vec<String> = self.by_op.keys().cloned().collect();
        let heads: Vec<Head> = ops.iter().flat_map(|op| self.heads_of(env, op).keys().cloned().collect::<Vec<_>>()).collect();
        heads.iter().flat_map(|h| self.instances_of(env, h).iter().filter(|c| c.unverified.is_none()).filter_map(|c| c.rhs(env, &self.rules[c.rule])).flat_map(|r| r.instructions()).collect::<Vec<_>>()).collect()
    }

    /// Candidate `c`'s right side, if this compile can load it: it
    /// type-checks, writes no lane count the kernel lacks, and needs no
    /// register or feature the target lacks.
    fn usable<'c>(&self, env: &RuleEnv, c: &'c Candidate, kernel_odd: &BTreeSet<i64>, features: Option<&CpuFeatures>) -> Usable<'c> {
        let Some(rhs) = c.rhs(env, &self.rules[c.rule]) else { return Usable::No };
        if !rhs.odd_lanes().is_subset(kernel_odd) {
            return Usable::No;
        }
        if let Some(bits) = env.register_bits {
            let wide: Vec<String> = rhs
                .instructions()
                .into_iter()
                .filter(|n| env.instrs.instr(n).is_some_and(|i| i.params.iter().map(|p| &p.ty).chain([&i.ret]).any(|t| matches!(t, misaal_isa::ast::Ty::Bv(w) if i64::from(*w) > bits))))
                .collect();
            if !wide.is_empty() {
                return Usable::Outside(Excluded { name: c.name.clone(), reason: format!("{} wider than this compile's {bits}-bit registers", wide.join(", ")) });
            }
        }
        if let Some(f) = features {
            let outside: Vec<String> = rhs
                .instructions()
                .into_iter()
                .filter_map(|n| env.instrs.instr(&n).map(|i| (n, f.missing(&i.features).join("+"))))
                .filter(|(_, m)| !m.is_empty())
                .map(|(n, m)| format!("{n} needs {m}"))
                .collect();
            if !outside.is_empty() {
                return Usable::Outside(Excluded { name: c.name.clone(), reason: format!("{} (target {})", outside.join("; "), f.source) });
            }
        }
        Usable::Yes(rhs)
    }

    /// The proved instances a kernel with the Halide ops `heads` can use;
    /// see the module documentation.
    /// With `kernel` (the shapes of the kernel's nodes), instances that can
    /// never match are left out before their verdicts are settled (see
    /// [`matchable`]).
    pub fn load(&self, env: &RuleEnv, heads: &[Head], kernel: Option<&[Shape]>, verdicts: Verdicts, allow_unproved: bool, features: Option<&CpuFeatures>) -> Result<LoadedRules, String> {
        let started = std::time::Instant::now();
        let libs = Libraries { target: env.instrs, halide: env.halide };
        let cfg = AuditConfig { vector_widths: env.vector_widths.to_vec(), ..Default::default() };
        let mut out = LoadedRules::default();
        // The closure of the kernel's ops under the usable right sides.
        let mut seen: BTreeSet<Head> = BTreeSet::new();
        let mut todo: Vec<Head> = heads.to_vec();
        // Each chosen candidate as its head's list (cached in `built`) and
        // its place there: a clone of each was a seventh of softmax's peak.
        let mut chosen: Vec<(Arc<Vec<Candidate>>, usize)> = Vec::new();
        // A lane count that is not a power of two comes only from the
        // kernel: rules pad such vectors to a power of two and never make
        // one of a power of two. An instance whose left side has a lane
        // count the kernel lacks can never match (a dup of a pad rule at
        // 32 lanes reads a 24-lane concat), and one whose right side has
        // one writes what no other rule uses (a broadcast's dup); the
        // matchable analysis, which over-approximates, kept hundreds of
        // them in every compile.
        let kernel_odd: BTreeSet<i64> = heads.iter().filter_map(|(_, g)| g.get(2).copied()).filter(|&n| n > 0 && n & (n - 1) != 0).collect();
        // Given the kernel's shapes, an op's instances are built only once
        // the kernel has the op or a kept instance writes it, and an
        // instance's right side only once its left side can match (see
        // `matchable::Analysis`); the instances kept are the same. A
        // two-way rule can match its right side before anything writes its
        // left side's root op, so a book with one builds the whole closure
        // and every right side first.
        let mut analysis = kernel.filter(|_| !self.rules.iter().any(|r| r.bidirectional)).map(|k| Analysis::new(k.iter().cloned()));
        let mut analysed = 0;
        loop {
            while let Some(h) = todo.pop() {
                if !seen.insert(h.clone()) {
                    continue;
                }
                let list = self.instances_of(env, &h);
                for (at, c) in list.iter().enumerate() {
                    if !c.lhs.odd_lanes().is_subset(&kernel_odd) {
                        continue;
                    }
                    if let Some(why) = &c.unverified {
                        out.unverified_spec.push(Excluded { name: c.name.clone(), reason: why.clone() });
                        continue;
                    }
                    if analysis.is_none() {
                        match self.usable(env, c, &kernel_odd, features) {
                            Usable::Yes(rhs) => todo.extend(rhs.halide_heads()),
                            Usable::No => continue,
                            Usable::Outside(e) => {
                                out.outside_target.push(e);
                                continue;
                            }
                        }
                    }
                    chosen.push((list.clone(), at));
                }
            }
            let Some(a) = analysis.as_mut() else { break };
            let lefts: Vec<&Pat> = chosen[analysed..].iter().map(|(l, at)| &l[*at].lhs).collect();
            a.add_left(&lefts);
            analysed = chosen.len();
            let outside = &mut out.outside_target;
            let newly = a.run(&mut |k| {
                let (list, at) = &chosen[k];
                match self.usable(env, &list[*at], &kernel_odd, features) {
                    Usable::Yes(rhs) => Some(rhs),
                    Usable::No => None,
                    Usable::Outside(e) => {
                        outside.push(e);
                        None
                    }
                }
            });
            for k in newly {
                let (list, at) = &chosen[k];
                todo.extend(list[*at].built_rhs().halide_heads());
            }
            if todo.is_empty() {
                break;
            }
        }
        let keep = match (analysis, kernel) {
            (Some(a), _) => Some(a.kept()),
            (None, Some(kernel)) => {
                let sides: Vec<(&Pat, &Pat, bool)> = chosen.iter().map(|(l, at)| &l[*at]).map(|c| (&c.lhs, c.built_rhs(), self.rules[c.rule].bidirectional)).collect();
                Some(matchable(&sides, kernel.iter().cloned()))
            }
            (None, None) => None,
        };
        if let Some(keep) = keep {
            let mut flags = keep.iter();
            chosen.retain(|_| *flags.next().expect("one flag per instance"));
        }
        // Settle the verdicts not settled yet, in parallel: by pre-key when
        // a verdict file records one, else with both sides' semantics
        // unrolled for the proof key (milliseconds each), and a proof when
        // no cache holds it.
        let pending: Vec<&Candidate> = {
            let settled = self.settled.lock().expect("verdicts");
            chosen.iter().map(|(l, at)| &l[*at]).filter(|c| !settled.contains_key(&c.name)).collect()
        };
        let mut cache: Option<Arc<Mutex<VerdictCache>>> = None;
        if !pending.is_empty() {
            let t = std::time::Instant::now();
            let cache = &**cache.insert(match verdicts {
                Verdicts::Cache(p) => self.verdict_cache(p),
                Verdicts::NoCache => Arc::new(Mutex::new(VerdictCache::default())),
            });
            out.verdict_files_secs = t.elapsed().as_secs_f64();
            use rayon::prelude::*;
            let settled: Vec<(String, (Verdict, String, bool))> = pending
                .par_iter()
                .map(|c| {
                    let rule = &self.rules[c.rule];
                    // A pre-key hit skips unrolling the sides for the proof key.
                    let assign = c.assign();
                    let r = proved_by_pre_key(&libs, rule, assign, cache).unwrap_or_else(|| run_job(&libs, &Job { rule, env: Some(assign.clone()) }, &cfg, cache));
                    (c.name.clone(), (r.verdict, r.counterexample, r.cached))
                })
                .collect();
            self.settled.lock().expect("verdicts").extend(settled);
        }
        for (list, at) in &chosen {
            let c = &list[*at];
            let rule = &self.rules[c.rule];
            let (verdict, why, cached) = self.settled.lock().expect("verdicts").get(&c.name).cloned().ok_or_else(|| format!("internal: no verdict for {}", c.name))?;
            if verdict != Verdict::Proved {
                let reason = format!("{}: {why}", verdict.label());
                if !allow_unproved {
                    if let Some(cache) = &cache {
                        let _ = cache.lock().expect("cache").save();
                    }
                    return Err(format!(
                        "{}:{}:{}: error: rule {} is not proved ({reason}); the ruleset is refused (allow unproved rules to leave it out)",
                        rule.file, rule.span.line, rule.span.col, c.name
                    ));
                }
                out.unproved.push(Excluded { name: c.name.clone(), reason });
                continue;
            }
            out.instances.push(Instance {
                name: c.name.clone(),
                rule: rule.name.clone(),
                instantiation: describe_env(c.assign()),
                lhs: c.lhs.clone(),
                rhs: c.built_rhs().clone(),
                verdict,
                bidirectional: rule.bidirectional,
                cached,
            });
        }
        if let Some(cache) = &cache
            && let Err(e) = cache.lock().expect("cache").save()
        {
            eprintln!("warning: could not save the verdict cache: {e}");
        }
        out.irrelevant = self.total - out.instances.len() - out.unproved.len() - out.unverified_spec.len() - out.outside_target.len();
        out.verify_secs = started.elapsed().as_secs_f64();
        Ok(out)
    }
}

/// [`RuleBook::new`] and [`RuleBook::load`] at once.
pub fn load(env: &RuleEnv, file: &str, text: &str, heads: &[Head], verdicts: Verdicts, allow_unproved: bool, features: Option<&CpuFeatures>) -> Result<LoadedRules, String> {
    RuleBook::new(env, file, text)?.load(env, heads, None, verdicts, allow_unproved, features)
}

/// The egglog program of the loaded rules: one constructor per target
/// instruction they produce (with `cost` in hundredths of a cycle), the
/// ruleset, and one named `rewrite` per instance.
pub fn program(loaded: &LoadedRules, instrs: &SpecLibrary, cost: &dyn Fn(&str) -> f64, ruleset: &str) -> String {
    let mut out = declarations(loaded, instrs, cost, ruleset);
    for i in &loaded.instances {
        out.push_str(&format!("(rewrite {} {} :ruleset {ruleset} :name {:?})\n", i.lhs.render(), i.rhs.render(), i.name));
        if i.bidirectional && !matches!(i.rhs, Pat::Var(_)) {
            out.push_str(&format!("(rewrite {} {} :ruleset {ruleset} :name {:?})\n", i.rhs.render(), i.lhs.render(), format!("{}:rev", i.name)));
        }
    }
    out
}

/// [`program`]'s rewrites as egglog commands, built without its text: what
/// egglog parses from that text, but every node's span one shared
/// `Span::Rust` instead of its own `Arc` into the program's source, which
/// the loaded rules kept alive (3 MB of conv_nn's peak, and the parse).
/// Run after [`declarations`].
pub fn rewrite_commands(loaded: &LoadedRules, ruleset: &str) -> Vec<egglog::ast::Command> {
    use egglog::ast::{Command, Rewrite};
    let span = egglog::ast::Span::Rust(Arc::new(egglog::ast::RustSpan { file: file!(), line: line!(), column: column!() }));
    let rewrite = |lhs: &Pat, rhs: &Pat, name: String| Command::Rewrite(ruleset.to_string(), Rewrite { span: span.clone(), lhs: lhs.expr(&span), rhs: rhs.expr(&span), conditions: vec![], name }, false);
    let mut out = Vec::with_capacity(loaded.instances.len());
    for i in &loaded.instances {
        out.push(rewrite(&i.lhs, &i.rhs, i.name.clone()));
        if i.bidirectional && !matches!(i.rhs, Pat::Var(_)) {
            out.push(rewrite(&i.rhs, &i.lhs, format!("{}:rev", i.name)));
        }
    }
    out
}

/// [`program`] without its rewrites: the instructions' constructors and the ruleset.
pub fn declarations(loaded: &LoadedRules, instrs: &SpecLibrary, cost: &dyn Fn(&str) -> f64, ruleset: &str) -> String {
    let mut out = String::new();
    for name in loaded.instructions() {
        let i = instrs.instr(&name).expect("resolved at load");
        let args = vec![SORT; i.params.len()].join(" ");
        let c = (cost(&name) * 100.0).round().max(1.0) as u64;
        out.push_str(&format!("(constructor {} ({args}) {SORT} :cost {c})\n", instr_ctor(&name)));
    }
    out.push_str(&format!("(ruleset {ruleset})\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rewrites built as commands are the ones egglog parses from
    /// [`program`]'s text: same rules, names, order and directions; and a
    /// pattern's expression prints as its text.
    #[test]
    fn rewrite_commands_are_the_programs_rewrites() {
        let var = |v: &str| Pat::Var(v.into());
        let bcast = |value: i64| Pat::Halide { name: "broadcast".into(), generics: vec![1, 16, 8], kids: vec![Pat::Const { bits: 16, value }] };
        let shr = Pat::Halide { name: "shr".into(), generics: vec![1, 16, 8, 0], kids: vec![var("a"), bcast(-3)] };
        let instr = Pat::Instr { name: "_mm_srai_epi16".into(), kids: vec![shr.clone(), Pat::Const { bits: 32, value: 3 }] };
        let span = egglog::ast::Span::Rust(Arc::new(egglog::ast::RustSpan { file: file!(), line: line!(), column: column!() }));
        for p in [&shr, &instr, &var("x")] {
            assert_eq!(p.expr(&span).to_string(), p.render());
        }
        let inst = |name: &str, lhs: Pat, rhs: Pat, bidirectional: bool| Instance { name: name.into(), rule: name.into(), instantiation: String::new(), lhs, rhs, verdict: Verdict::Proved, bidirectional, cached: true };
        let add = |a: &str, b: &str| Pat::Halide { name: "add".into(), generics: vec![1, 16, 8], kids: vec![var(a), var(b)] };
        let loaded = LoadedRules {
            instances: vec![
                inst("x86.shr[bw=16,n=8]", shr.clone(), add("a", "a"), false),
                inst("commute \"q\"", add("a", "b"), add("b", "a"), true),
                inst("to-var", Pat::Halide { name: "cast".into(), generics: vec![1, 16, 8, 1, 16], kids: vec![var("x")] }, var("x"), true),
            ],
            ..Default::default()
        };
        let none = SpecLibrary::from_sources(&[]).expect("empty library");
        let text = program(&loaded, &none, &|_| 1.0, "isel");
        let decls = declarations(&loaded, &none, &|_| 1.0, "isel");
        let parsed = egglog::ast::Parser::default().get_program_from_string(None, &text).expect("parses");
        let parsed_decls = egglog::ast::Parser::default().get_program_from_string(None, &decls).expect("parses").len();
        let built = rewrite_commands(&loaded, "isel");
        assert_eq!(built.len(), 4);
        let show = |c: &[egglog::ast::Command]| c.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        assert_eq!(show(&parsed[parsed_decls..]), show(&built));
    }
}
