//! Instruction selection by equality saturation in egglog, in process.
//!
//! One module per stage, as cranelift-isle keeps one file per stage:
//! - [`encode`]: Halide vector expressions to egglog terms, inserted with
//!   `EGraph::update` and `Write::add`, one e-class per Stmt `let`;
//! - [`rules`]: the ruleset file, instantiated at the kernel's widths, every
//!   loaded instantiation `proved` (from the verdict cache or on the spot);
//! - [`schedule`]: saturation under iteration, e-node and time limits, with
//!   the reason each phase stopped and per-rule statistics;
//! - [`extract`]: greedy DAG-cost extraction over the e-graph, once for all
//!   roots, counting the subterms left to the naive lowering; each chosen
//!   instruction keeps the proved rule instances that produced it.
//!
//! The stages end at a chosen instruction DAG per expression.
//! [`crate::c::isel_emit`] lowers it to C intrinsics; it is a child of the
//! C backend, whose per-lane lowering it reuses for leaves and fallbacks,
//! and runs with `misaal compile --isel`. Nothing in this module
//! fails because a rule is missing: an expression no rule covers is
//! extracted as naive Halide ops and counted.

pub mod chain;
pub mod encode;
pub mod extract;
pub mod dialect;
pub mod features;
pub mod matchable;
pub mod rules;
pub mod schedule;
pub mod validate;

use encode::{Encoder, Op};
use extract::{CostModel, CostSource, Graph};
use misaal_frontends::stmt::{Func, Module};
use misaal_isa::{SpecLibrary, StatusTable};
use rules::{LoadedRules, RuleBook, RuleEnv, Verdicts};
use schedule::{Limits, PhaseReport};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// The egglog ruleset the loaded rules are put in.
pub const RULESET: &str = "isel";
/// E-graphs up to this many e-nodes are also extracted exactly
/// ([`extract::exact_dag`]), within [`EXACT_BUDGET`] search steps.
pub const EXACT_MAX_NODES: usize = 400;
pub const EXACT_BUDGET: usize = 20_000;
/// The extraction cost of a scalar Halide op (see [`scalar_op`]): one
/// plain C operation, in cycles.
pub const SCALAR_OP_COST: f64 = 1.0;

/// The instruction sets the compiler selects for: the registry's targets
/// ([`misaal_targets::TARGETS`]), each a folder of specs under
/// `isa/specs/` and a Halide architecture.
pub const ISAS: &[&str] = &misaal_targets::NAMES;

/// The ISA a Halide target string names by its architecture
/// (`x86-64-...`, `arm-64-...`, `hexagon-32-...`: the registry's
/// [`misaal_targets::TargetDesc::halide_arch`]).
pub fn isa_of_halide_target(target: &str) -> Result<&'static str, String> {
    match misaal_targets::of_halide_target(target) {
        Some(desc) => Ok(desc.name),
        None => Err(format!("target `{target}` is none of x86-64, arm-64, hexagon-32 (the ISAs misaal compiles for)")),
    }
}

/// The target's libraries, loaded once and shared by every kernel.
pub struct Target {
    /// `x86`, `arm` or `hvx` (see [`ISAS`]): the spec folder, the rule
    /// file's default name and the C dialect ([`dialect::for_isa`]).
    pub isa: &'static str,
    /// The registry's description of `isa`.
    pub desc: &'static misaal_targets::TargetDesc,
    /// The target's instruction specs (bodies of unverified ones withheld).
    pub instrs: SpecLibrary,
    pub halide: SpecLibrary,
    pub status: StatusTable,
    pub costs: CostModel,
    pub vector_widths: Vec<i128>,
    /// The widest vector register: a value wider than this is held as
    /// several registers, low lanes first (AVX2 256, NEON 128, HVX 1024).
    pub register_bits: i64,
}

impl Target {
    /// The bundled x86 target.
    pub fn x86() -> Result<Target, String> {
        Target::load("x86")
    }

    /// A bundled ISA: its specs, their `STATUS.tsv` (rules over a spec it
    /// does not vouch for are never loaded), the Halide ops, and its cost
    /// table (`isa/costs/<isa>.csv` if present, else spec cost lines).
    pub fn load(isa: &str) -> Result<Target, String> {
        // The widest register emission holds a value in (AVX2 here, NEON's
        // Q registers, one HVX vector); rules instantiate at the rule
        // target's widths.
        let desc = misaal_targets::by_name(isa).ok_or_else(|| format!("error: unknown target `{isa}` (known: {})", ISAS.join(", ")))?;
        let (isa, register_bits, widths) = (desc.name, desc.register_bits, desc.vector_widths);
        let dir = misaal_isa::bundled_spec_dir(isa);
        let mut instrs = SpecLibrary::load_dir_lazy(&dir).map_err(|d| d.to_string())?;
        // Status checks take spec digests from the memo instead of unrolling.
        instrs.use_digest_memo(&dir.join(misaal_isa::DIGEST_MEMO_FILE), misaal_verifier::prekey::ENGINE_DIGEST).map_err(|d| d.to_string())?;
        let status = StatusTable::load(&StatusTable::path_for(&dir)).map_err(|d| d.to_string())?;
        // Rules over unverified specs are never loaded: their bodies are not needed.
        instrs.withhold_bodies(|i| status.rows.get(&i.name).is_some_and(|r| r.status.is_verified()), "unverified here");
        // The rest are parsed again when a rule first needs their semantics
        // (a few hundred specs): the peak RSS of a compile, not its result.
        instrs.release_bodies();
        let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
        let costs = CostModel::load(&instrs, Some(&extract::bundled_cost_table_for(isa)));
        Ok(Target { isa, desc, instrs, halide, status, costs, vector_widths: widths.to_vec(), register_bits })
    }

    /// The narrowest vector register (x86's xmm, 128 bits; NEON's D, 64):
    /// a vector narrower than it is held in memory, and the glue around it
    /// copies bytes.
    pub fn narrowest_register_bits(&self) -> i64 {
        self.vector_widths.iter().min().map_or(self.register_bits, |&w| w as i64)
    }

    /// The target of a Stmt whose header says `target=`, or of `--target`,
    /// costed for the CPU `cpu` names (a Halide target or feature list:
    /// the same string, or `--target-features`).
    pub fn for_halide_target(target: &str, cpu: &str) -> Result<Target, String> {
        let mut t = Target::load(isa_of_halide_target(target)?)?;
        // Costs of the CPU's microarchitecture (`avx512_zen4` -> znver4).
        t.costs = CostModel::for_halide_target(&t.instrs, t.isa, cpu);
        Ok(t)
    }

    pub fn rule_env(&self) -> RuleEnv<'_> {
        RuleEnv { instrs: &self.instrs, halide: &self.halide, status: &self.status, vector_widths: &self.vector_widths, register_bits: self.desc.wider_registers.is_some().then_some(self.register_bits) }
    }
}

/// Where the rules come from and how hard to try.
#[derive(Clone, Debug)]
pub struct Options {
    /// A rule file; `None` is the target's bundled `rulesets/<isa>.egg`.
    pub rules: Option<PathBuf>,
    /// Replaces the file's text (for tests and tools); `rules` still names it.
    pub rules_text: Option<String>,
    pub limits: Limits,
    /// The verdict cache (by default the repository's
    /// `.misaal-cache/verify.tsv`, shared with `misaal verify`); `None`
    /// proves every instantiation a kernel needs in this process (a
    /// [`RuleBook`] remembers the verdicts it settled).
    pub verdict_cache: Option<PathBuf>,
    /// Leave out (and list) instantiations that are not proved, instead of
    /// refusing the ruleset.
    pub allow_unproved: bool,
    /// The CPUID features the code may use: instances whose right side
    /// needs another are left out (and counted). `None`: the C backend
    /// takes them from the module's target; selection alone uses every
    /// verified spec.
    pub features: Option<features::CpuFeatures>,
    /// Hold values in 512-bit zmm registers where `features` has AVX-512F
    /// (the default; `misaal compile --ymm` turns it off). With the
    /// synthesized halves of a zmm (`vextracti32x8`/`vinserti32x8`) and
    /// `vpdpwssd zmm`, the suite ran at 0.935x of Halide's zen4 objects
    /// with zmm and 0.788x without, back to back (benchmarks/RESULTS.md).
    /// Mask operands are k registers either way.
    pub zmm: bool,
    /// Free the rule book's caches once a function's rules are loaded,
    /// before saturating ([`RuleBook::release_caches`]): the lower peak
    /// memory of a one-function compile, at the price of rebuilding them
    /// for the next function; and the freed heap handed back to the OS
    /// before extraction. `misaal compile` sets it.
    pub release_rule_caches: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rules: None,
            rules_text: None,
            limits: Limits::default(),
            verdict_cache: Some(default_verdict_cache()),
            allow_unproved: false,
            features: None,
            zmm: true,
            release_rule_caches: false,
        }
    }
}

/// `.misaal-cache/verify.tsv` at the repository root, where `misaal verify` keeps it.
pub fn default_verdict_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.misaal-cache/verify.tsv")
}

/// One chosen instruction, and the proved rules that can have produced it.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub instruction: String,
    /// Uses in the extracted DAG (each distinct node once).
    pub count: usize,
    /// Of those, the constants (an instruction of constants only, such as a
    /// broadcast immediate): hoisted out of the loop, each weighs
    /// [`extract::HOISTED_SHARE`] of `cost` in the DAG cost.
    pub hoisted: usize,
    pub cost: f64,
    pub cost_source: CostSource,
    /// Loaded (so proved) rule instances that produced it: each one's right
    /// side matches the extracted DAG around an occurrence of the
    /// instruction, and its left side's root op is in that e-class.
    pub rules: Vec<String>,
    /// Whether `rules` was found that way for every occurrence; if not (a
    /// right side rewritten further after the rule fired), `rules` lists the
    /// instances that produce the instruction and matched.
    pub exact: bool,
}

/// One selected expression.
#[derive(Clone, Debug)]
pub struct RootResult {
    pub label: String,
    /// Its node in [`Selection::dag`].
    pub node: usize,
    /// The extracted term (`naive:` marks Halide ops left to the naive lowering).
    pub term: String,
    /// Naive Halide ops in this root's extracted DAG.
    pub fallbacks: usize,
    /// Its node in [`Selection::source`]: the expression as the Stmt wrote it.
    pub source_node: usize,
}

/// Everything selection did for one kernel.
#[derive(Clone, Debug)]
pub struct Selection {
    /// The ISA its instructions are from ([`Target::isa`]).
    pub isa: &'static str,
    pub roots: Vec<RootResult>,
    /// The kernel's expressions as encoded from the Stmt, before rewriting
    /// (what translation validation compares [`Selection::dag`] against).
    pub source: encode::TermDag,
    /// The extracted DAG of every root, each shared node once, children
    /// before parents: what the emitter lowers (x86 nodes as intrinsics,
    /// Halide nodes naively, leaves as the Stmt expressions they name).
    pub dag: Vec<encode::Node>,
    /// For each node of `dag`, whether it is legalization glue (a slice or
    /// concat of whole registers, see [`extract::glue_shape`]): lowered by
    /// regrouping registers, not counted as a fallback.
    pub glue: Vec<bool>,
    /// For each node of `dag`, whether it is a scalar Halide op (every
    /// operand and the result at most 64 bits, see [`scalar_op`]): plain C
    /// on scalars, as the Stmt's other scalar code is, not a vector
    /// fallback (a reduction's `sum + acc[0]` once the sum is a scalar).
    pub scalar: Vec<bool>,
    /// For each node of `dag`, the proved rule instances that produced it
    /// (x86 nodes; see [`Chosen::rules`]).
    pub provenance: Vec<Vec<String>>,
    /// The Stmt expression of every leaf, by the leaf's text.
    pub leaves: std::collections::HashMap<String, misaal_frontends::stmt::Expr>,
    pub rules: LoadedRules,
    pub phases: Vec<PhaseReport>,
    /// Instructions in the extracted DAG (all roots), by name.
    pub chosen: Vec<Chosen>,
    /// Halide ops (with their generics) left to the naive lowering, with counts.
    pub fallbacks: BTreeMap<String, usize>,
    /// Scalar Halide ops in the extracted DAG ([`Selection::scalar`]), with counts.
    pub scalar_ops: BTreeMap<String, usize>,
    /// `exact` when the bounded exact search finished, else `greedy-dag`.
    pub extractor: &'static str,
    /// Cost of the whole extracted DAG, each shared node once.
    pub dag_cost: f64,
    /// The same choices costed as trees (what a tree extractor would pay).
    pub tree_cost: f64,
    pub input_nodes: usize,
    pub egraph_nodes: usize,
    pub encode_secs: f64,
    pub rules_secs: f64,
    /// Of `rules_secs`: egglog parsing, type-checking and compiling the
    /// rules' program.
    pub egglog_rules_secs: f64,
    pub saturate_secs: f64,
    pub extract_secs: f64,
}

/// One loaded rule instance's work for a kernel: the columns of
/// `reports/rule_usage_x86.csv` but the kernel's name.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleUsage {
    pub rule: String,
    pub matches: usize,
    pub search_apply_ms: f64,
    /// Whether an instruction it produces is in the extracted DAG.
    pub used_in_extraction: bool,
}

impl Selection {
    pub fn fallback_count(&self) -> usize {
        self.fallbacks.values().sum()
    }

    /// Every loaded instance (a `birewrite`'s reverse as `NAME:rev`), with
    /// egglog's match counts and search-and-apply times summed over the phases.
    pub fn rule_usage(&self) -> Vec<RuleUsage> {
        let names = self.rules.instances.iter().flat_map(|i| {
            let rev = i.bidirectional.then(|| format!("{}:rev", i.name));
            std::iter::once(i.name.clone()).chain(rev)
        });
        names
            .map(|rule| {
                let stats = self.phases.iter().filter_map(|p| p.rules.get(&rule));
                let (matches, secs) = stats.fold((0, 0.0), |(m, t), s| (m + s.matches, t + s.search_apply.as_secs_f64()));
                let used_in_extraction = self.chosen.iter().any(|c| c.rules.contains(&rule));
                RuleUsage { rule, matches, search_apply_ms: secs * 1e3, used_in_extraction }
            })
            .collect()
    }
    /// For each instruction in the extracted DAG, the chains of proved rule
    /// instances that lead to it from the kernel's own ops: the instance
    /// that produced it, then the one whose right side introduced that
    /// instance's left-side op, and so on back to an op the Stmt has.
    /// Instances are linked by op (name and generics) among those that
    /// matched, so a chain names every rewrite kind on the way.
    pub fn rule_chains(&self) -> Vec<(String, Vec<Vec<String>>)> {
        let source: std::collections::BTreeSet<(String, Vec<i64>)> = self.source.halide_heads().into_iter().collect();
        let matched = |name: &str| self.phases.iter().any(|p| p.rules.get(name).is_some_and(|s| s.matches > 0));
        let by_name: BTreeMap<&str, &rules::Instance> = self.rules.instances.iter().map(|i| (i.name.as_str(), i)).collect();
        let head = |p: &rules::Pat| match p {
            rules::Pat::Halide { name, generics, .. } => Some((name.clone(), generics.clone())),
            _ => None,
        };
        // One chain per starting instance: follow the first matched
        // instance that introduces the current left-side op.
        let chain = |start: &str| -> Vec<String> {
            let mut out = vec![start.to_string()];
            let mut at = by_name.get(start).and_then(|i| head(&i.lhs));
            while let Some(h) = at.take() {
                if source.contains(&h) || out.len() > 12 {
                    break;
                }
                let Some(prev) = self.rules.instances.iter().find(|i| !out.contains(&i.name) && matched(&i.name) && i.rhs.halide_heads().contains(&h)) else { break };
                out.push(prev.name.clone());
                at = head(&prev.lhs);
            }
            out
        };
        self.chosen.iter().map(|c| (c.instruction.clone(), c.rules.iter().map(|r| chain(r)).collect())).collect()
    }

    /// A short human-readable account.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        for p in &self.phases {
            s.push_str(&format!(
                "phase {}: {} after {} iteration(s), {} -> {} e-nodes, {:.1} ms\n",
                p.phase, p.stop, p.iterations, p.nodes_before, p.nodes_after, p.secs * 1e3
            ));
        }
        s.push_str(&format!(
            "rules: {} proved instance(s) loaded, {} over unverified specs, {} unproved left out; verdicts {:.1} ms\n",
            self.rules.instances.len(),
            self.rules.unverified_spec.len(),
            self.rules.unproved.len(),
            self.rules.verify_secs * 1e3
        ));
        for c in &self.chosen {
            let hoisted = if c.hoisted > 0 { format!(" ({} hoisted constant(s))", c.hoisted) } else { String::new() };
            s.push_str(&format!("  {} x{}{hoisted} cost {} ({:?}) by {}\n", c.instruction, c.count, c.cost, c.cost_source, c.rules.join(", ")));
        }
        for (op, n) in &self.fallbacks {
            s.push_str(&format!("  naive {op} x{n}\n"));
        }
        for (op, n) in &self.scalar_ops {
            s.push_str(&format!("  scalar C {op} x{n}\n"));
        }
        s.push_str(&format!("DAG cost {:.2} (as trees {:.2}, {} extraction); {} fallback op(s)\n", self.dag_cost, self.tree_cost, self.extractor, self.fallback_count()));
        s.push_str(&format!(
            "times: encode {:.1} ms, rules {:.1} ms, saturate {:.1} ms, extract {:.1} ms\n",
            self.encode_secs * 1e3,
            self.rules_secs * 1e3,
            self.saturate_secs * 1e3,
            self.extract_secs * 1e3
        ));
        if self.chosen.iter().any(|c| c.cost_source != CostSource::Measured) {
            s.push_str("costs: spec cost lines (approximate) where the ISA's isa/costs/ table has no measured row\n");
        }
        for r in &self.roots {
            s.push_str(&format!("{}: {}\n", r.label, r.term));
        }
        s
    }
}

/// The rule book of `opts`' rule file for `target`: build it once and pass
/// it to the `_with` functions to select many kernels.
pub fn rule_book(target: &Target, opts: &Options) -> Result<RuleBook, String> {
    let path = opts.rules.clone().unwrap_or_else(|| misaal_rulesets::bundled_ruleset(target.isa));
    let text = match (&opts.rules_text, &opts.rules) {
        (Some(t), _) => t.clone(),
        (None, Some(_)) => std::fs::read_to_string(&path).map_err(|e| format!("error: cannot read {}: {e}", path.display()))?,
        // The target's default files: ARM's and HVX's hand-written and
        // synthesized rules together (`TargetIsa::rule_files`).
        (None, None) => misaal_rulesets::TargetIsa::by_name(target.isa).ok_or_else(|| format!("error: no rule target `{}`", target.isa))?.default_rules_text()?,
    };
    // Beside the verdict cache: the same lifetime (a fresh checkout has neither).
    let memo = opts.verdict_cache.as_ref().and_then(|p| p.parent());
    RuleBook::new_with_memo(&target.rule_env(), &path.display().to_string(), &text, memo)
}

/// Selects instructions for every vector `let` and store of `func`.
pub fn select_func(target: &Target, func: &Func, opts: &Options) -> Result<Selection, String> {
    let book = rule_book(target, opts)?;
    let t = Instant::now();
    let mut enc = Encoder::new();
    enc.stmt(&func.body);
    select_encoded(target, &book, enc, t, opts)
}

/// [`select_func`] over every function of a module, in one e-graph.
pub fn select_module(target: &Target, module: &Module, opts: &Options) -> Result<Selection, String> {
    let book = rule_book(target, opts)?;
    select_module_with(target, &book, module, opts)
}

/// [`select_module`] with a rule book built beforehand.
pub fn select_module_with(target: &Target, book: &RuleBook, module: &Module, opts: &Options) -> Result<Selection, String> {
    let t = Instant::now();
    let mut enc = Encoder::new();
    for f in &module.funcs {
        enc.stmt(&f.body);
    }
    select_encoded(target, book, enc, t, opts)
}

/// Hands the heap's free pages back to the OS. glibc keeps what a dropped
/// e-graph freed, fragmented among live blocks, so extraction's own
/// allocations came on top of it: 2 MB of depthwise_conv's 65.7 MB peak.
/// (The `misaal` binary allocates with jemalloc, which purges freed pages
/// itself (`src/main.rs`); this is for programs that use the library with
/// glibc's malloc.)
fn return_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it reads no pointer of ours.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Runs rules, saturation and extraction on expressions already encoded
/// (`started` is when encoding began).
pub fn select_encoded(target: &Target, book: &RuleBook, enc: Encoder, started: Instant, opts: &Options) -> Result<Selection, String> {
    select_encoded_book(target, Book::Shared(book), enc, started, opts)
}

/// [`select_encoded`] for the last selection a rule book serves (a
/// module's last function): the book is dropped once the function's rules
/// are loaded, before the e-graph saturates. The parsed rule file, the
/// settled verdicts and the instances built were a seventh of conv_nn's
/// peak heap, held through saturation and extraction for nothing.
pub fn select_encoded_last(target: &Target, book: RuleBook, enc: Encoder, started: Instant, opts: &Options) -> Result<Selection, String> {
    select_encoded_book(target, Book::Owned(book), enc, started, opts)
}

/// A rule book lent to selection, or handed over to be dropped after loading.
enum Book<'a> {
    Shared(&'a RuleBook),
    Owned(RuleBook),
}

fn select_encoded_book(target: &Target, book: Book, enc: Encoder, started: Instant, opts: &Options) -> Result<Selection, String> {
    let dag = enc.dag;
    let mut egraph = egglog::EGraph::default();
    egraph.set_num_threads(1);
    egraph.parse_and_run_program(None, &encode::declarations(&target.halide)).map_err(|e| format!("egglog declarations: {e}"))?;
    encode::insert(&mut egraph, &dag).map_err(|e| format!("egglog insert: {e}"))?;
    let encode_secs = started.elapsed().as_secs_f64();

    let t = Instant::now();
    let verdicts = match &opts.verdict_cache {
        Some(p) => Verdicts::Cache(p),
        None => Verdicts::NoCache,
    };
    let loaded = match &book {
        Book::Shared(b) => *b,
        Book::Owned(b) => b,
    }
    .load(&target.rule_env(), &dag.halide_heads(), Some(&matchable::kernel_shapes(&dag)), verdicts, opts.allow_unproved, opts.features.as_ref())?;
    let cost = |n: &str| target.costs.instr(n).0;
    match book {
        Book::Shared(b) if opts.release_rule_caches => b.release_caches(),
        Book::Shared(_) => {}
        Book::Owned(b) => drop(b),
    }
    let t_egglog = Instant::now();
    egraph.parse_and_run_program(None, &rules::declarations(&loaded, &target.instrs, &cost, RULESET)).map_err(|e| format!("egglog rules: {e}"))?;
    egraph.run_program(rules::rewrite_commands(&loaded, RULESET)).map_err(|e| format!("egglog rules: {e}"))?;
    let egglog_rules_secs = t_egglog.elapsed().as_secs_f64();
    let rules_secs = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let phases = vec![schedule::run(&mut egraph, "select", RULESET, &opts.limits)];
    let saturate_secs = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut graph = Graph::from_egraph(&egraph, &Graph::layouts(&target.halide, loaded.instructions()))?;
    graph.mark_glue(target.register_bits, target.desc.sub_register_values, target.narrowest_register_bits());
    let classes = encode::canonical_classes(&egraph, &dag);
    // Extraction reads the copy in `graph`: the e-graph and its compiled
    // rules (a third of a compile's peak heap) go before it allocates.
    let egraph_nodes = egraph.num_tuples();
    drop(egraph);
    if opts.release_rule_caches {
        return_free_heap();
    }
    let root_class = |node: usize| classes[node].and_then(|v| graph.class_of(v));
    // A scalar Halide op is one C expression, like the Stmt's other scalar
    // code, not a per-lane loop: it costs about one instruction. At the
    // naive price, the cast that narrows a vpextrb result (a u8 max
    // reduction) made the whole selected reduction dearer than its naive
    // loop.
    let scalar_heads: std::collections::HashMap<&Op, bool> = graph.nodes.iter().map(|n| (&n.op, scalar_op(&target.halide, &n.op))).collect();
    // An instruction over constants only: hoisted out of the loop. One
    // definition for the cost and for the report's count.
    let constant = graph.constant_classes();
    let hoisted_instr = |n: &extract::GNode| matches!(n.op, Op::Instr { .. }) && n.kids.iter().all(|&k| constant[k]);
    let node_cost = |n: &extract::GNode| {
        if !n.glue && scalar_heads.get(&n.op) == Some(&true) {
            extract::scalar_op_cost(&n.op, SCALAR_OP_COST)
        } else if hoisted_instr(n) {
            target.costs.gnode(n) * extract::HOISTED_SHARE
        } else {
            target.costs.gnode(n)
        }
    };
    let roots: Vec<usize> = enc.roots.iter().map(|r| root_class(r.node).ok_or_else(|| format!("{}: its e-class was lost", r.label))).collect::<Result<_, _>>()?;
    let greedy = extract::extract_dag(&graph, &roots, &node_cost);
    // Small e-graphs are solved exactly too (bounded search from the greedy
    // choice, so never worse).
    let exact = if graph.nodes.len() <= EXACT_MAX_NODES { extract::exact_dag(&graph, &roots, &node_cost, &greedy, EXACT_BUDGET) } else { None };
    let extractor = if exact.is_some() { "exact" } else { "greedy-dag" };
    let x = exact.unwrap_or(greedy);
    let all = x.reachable(&graph, &roots)?;
    let dag_cost = x.dag_cost(&graph, &roots, &node_cost)?;
    let tree_cost = x.tree_cost(&graph, &roots, &node_cost)?;
    let mut fallbacks: BTreeMap<String, usize> = BTreeMap::new();
    let mut scalar_ops: BTreeMap<String, usize> = BTreeMap::new();
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    let mut hoisted: BTreeMap<String, usize> = BTreeMap::new();
    let is_scalar = |n: usize| !graph.nodes[n].glue && scalar_op(&target.halide, &graph.nodes[n].op);
    for &n in &all {
        match &graph.nodes[n].op {
            _ if graph.nodes[n].glue => {}
            op @ Op::Halide { .. } if is_scalar(n) => *scalar_ops.entry(op.to_string()).or_default() += 1,
            op @ Op::Halide { .. } => *fallbacks.entry(op.to_string()).or_default() += 1,
            Op::Instr { name } => {
                *used.entry(name.clone()).or_default() += 1;
                if hoisted_instr(&graph.nodes[n]) {
                    *hoisted.entry(name.clone()).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    // The chosen nodes renumbered densely; a class's node is its position.
    let mut index: BTreeMap<usize, usize> = BTreeMap::new();
    let mut out_dag: Vec<encode::Node> = Vec::with_capacity(all.len());
    let mut out_class: Vec<usize> = Vec::with_capacity(all.len());
    let mut glue: Vec<bool> = Vec::with_capacity(all.len());
    let mut scalar: Vec<bool> = Vec::with_capacity(all.len());
    for &n in &all {
        let g = &graph.nodes[n];
        glue.push(g.glue);
        scalar.push(is_scalar(n));
        let kids = g.kids.iter().map(|k| index[k]).collect();
        index.insert(g.class, out_dag.len());
        out_dag.push(encode::Node { op: g.op.clone(), kids });
        out_class.push(g.class);
    }
    let provenance = provenance(&loaded, &graph, &out_dag, &out_class);
    let matched = |rule: &str| phases.iter().any(|p| p.rules.get(rule).is_some_and(|s| s.matches > 0));
    let chosen = used
        .into_iter()
        .map(|(name, count)| {
            let (cost, cost_source) = target.costs.instr(&name);
            let occurrences: Vec<&Vec<String>> = out_dag.iter().zip(&provenance).filter(|(n, _)| matches!(&n.op, Op::Instr { name: m } if *m == name)).map(|(_, p)| p).collect();
            let exact = occurrences.iter().all(|p| !p.is_empty());
            let mut rules: Vec<String> = occurrences.iter().flat_map(|p| p.iter().cloned()).collect();
            rules.sort();
            rules.dedup();
            if rules.is_empty() {
                // The rule's right side was partly rewritten after it fired:
                // the proved instances that produce this instruction and matched.
                rules = loaded.instances.iter().filter(|i| i.rhs.instructions().contains(&name) && matched(&i.name)).map(|i| i.name.clone()).collect();
            }
            let hoisted = hoisted.get(&name).copied().unwrap_or(0);
            Chosen { instruction: name, count, hoisted, cost, cost_source, rules, exact }
        })
        .collect();
    let root_results = enc
        .roots
        .iter()
        .zip(&roots)
        .map(|(r, &c)| {
            let mine = x.reachable(&graph, &[c]).unwrap_or_default();
            RootResult {
                label: r.label.clone(),
                node: index[&c],
                term: x.render(&graph, c),
                fallbacks: mine.iter().filter(|&&n| graph.nodes[n].op.is_halide() && !graph.nodes[n].glue && !is_scalar(n)).count(),
                source_node: r.node,
            }
        })
        .collect();
    let extract_secs = t.elapsed().as_secs_f64();
    Ok(Selection {
        isa: target.isa,
        roots: root_results,
        source: dag.clone(),
        glue,
        scalar,
        dag: out_dag,
        extractor,
        provenance,
        leaves: enc.leaves,
        rules: loaded,
        phases,
        chosen,
        fallbacks,
        scalar_ops,
        dag_cost,
        tree_cost,
        input_nodes: dag.len(),
        egraph_nodes,
        encode_secs,
        rules_secs,
        egglog_rules_secs,
        saturate_secs,
        extract_secs,
    })
}

/// Whether `op` is a Halide op on scalars: one lane in and out (every
/// lane-count generic, `N`, `M`, `F` and `N2`, is 1), its result and every
/// operand at most 64 bits (`add<1, 32, 1>`, a `cast` of one lane), so the
/// naive lowering of it is one C expression, as for every scalar the Stmt
/// computes outside the selected roots. A reduction of a vector to one lane
/// is not: its operand is a vector. Nor is a vector of 64 bits or fewer (a
/// u8x8): its naive lowering is a lane loop, a fallback like any other.
pub fn scalar_op(halide: &SpecLibrary, op: &Op) -> bool {
    let Op::Halide { name, generics } = op else { return false };
    let Some(g) = halide.generic(name) else { return false };
    if g.generics.iter().zip(generics).any(|(n, &v)| matches!(n.as_str(), "N" | "M" | "F" | "N2") && v != 1) {
        return false;
    }
    let wide: Vec<i128> = generics.iter().map(|&g| g as i128).collect();
    match halide.instantiate_signature(name, &wide) {
        Ok(i) => i.ret.width() <= 64 && i.params.iter().all(|p| p.ty.width() <= 64),
        Err(_) => false,
    }
}

/// For each node of the extracted DAG, the loaded instances that produced
/// it: instances whose right side matches the extracted DAG at some node
/// (variables bound consistently, since a class is one node there) whose
/// e-class also holds the left side's root op. Empty for non-x86 nodes and
/// for occurrences no instance explains exactly.
fn provenance(loaded: &LoadedRules, graph: &Graph, dag: &[encode::Node], class: &[usize]) -> Vec<Vec<String>> {
    use rules::Pat;
    fn matches(p: &Pat, dag: &[encode::Node], at: usize, binds: &mut BTreeMap<String, usize>, hits: &mut Vec<usize>) -> bool {
        let n = &dag[at];
        let kids_match = |kids: &[Pat], binds: &mut BTreeMap<String, usize>, hits: &mut Vec<usize>| kids.len() == n.kids.len() && kids.iter().zip(&n.kids).all(|(k, &c)| matches(k, dag, c, binds, hits));
        match p {
            Pat::Var(v) => *binds.entry(v.clone()).or_insert(at) == at,
            Pat::Const { bits, value } => n.op == Op::Const { bits: *bits, value: *value },
            Pat::Halide { name, generics, kids } => n.op == Op::Halide { name: name.clone(), generics: generics.clone() } && kids_match(kids, binds, hits),
            Pat::Instr { name, kids } => {
                let ok = n.op == Op::Instr { name: name.clone() } && kids_match(kids, binds, hits);
                if ok {
                    hits.push(at);
                }
                ok
            }
        }
    }
    let mut ops_of_class: BTreeMap<usize, Vec<&Op>> = BTreeMap::new();
    for g in &graph.nodes {
        ops_of_class.entry(g.class).or_default().push(&g.op);
    }
    let mut out = vec![Vec::new(); dag.len()];
    for i in loaded.instances.iter().filter(|i| !i.rhs.instructions().is_empty()) {
        let Pat::Halide { name, generics, .. } = &i.lhs else { continue };
        let head = Op::Halide { name: name.clone(), generics: generics.clone() };
        for at in 0..dag.len() {
            let (mut binds, mut hits) = (BTreeMap::new(), Vec::new());
            if matches(&i.rhs, dag, at, &mut binds, &mut hits) && ops_of_class.get(&class[at]).is_some_and(|ops| ops.contains(&&head)) {
                for h in hits {
                    if !out[h].contains(&i.name) {
                        out[h].push(i.name.clone());
                    }
                }
            }
        }
    }
    out
}
