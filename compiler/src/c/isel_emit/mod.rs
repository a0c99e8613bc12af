//! Stage 4, emission: a [`Selection`] lowered to native vector C.
//!
//! A child of the C backend (`c::isel_emit`), so that it drives the
//! backend's own [`Emitter`] and reuses its naive lowering for everything it
//! does not lower itself. Opt-in: only [`crate::c::emit_with`] with `isel`
//! set runs it; `c::emit` never does.
//!
//! For every vector `let` and store the encoder made a root of (met in the
//! same Stmt order), the root's extracted DAG is lowered children first:
//! - target instruction nodes are intrinsic calls by name on registers
//!   (the spec's operand widths) written in the target's C dialect
//!   ([`crate::isel::dialect`]: x86 `__m128i`/`__m256i`, NEON
//!   `uint8x16_t` with `vreinterpret` casts at each call); an `immN`
//!   operand is the constant itself, a vector operand that is a constant
//!   is a splat (`_mm{,256}_set1_epi*`, `vdupq_n_*`);
//! - leaves are the Stmt expressions they name: a dense load (a ramp of
//!   stride 1, no predicate, 128 or 256 bits) is one unaligned vector load,
//!   anything else is lowered naively into its lane array and loaded; a
//!   constant vector leaf (`ramp(0, 1, 24) <= x24(7)`) is computed here, at
//!   compile time, into a `static const` array (`isel_emit/constant.rs`);
//! - Halide nodes (naive fallbacks) are rebuilt as Stmt expressions over
//!   placeholder variables bound to their operands' lane arrays, lowered by
//!   the naive lowering, and counted;
//! - a dense, unpredicated store of a register is one unaligned vector store.
//!
//! A root with a scalar result (a vector reduced to one lane, stored to
//! `acc[0]`) is lowered the same way: an x86 node that returns at most 64
//! bits (`_mm_extract_epi32`) is a C scalar, and the scalar Halide ops
//! around it ([`Selection::scalar`], `sum + acc[0]`) are plain C, as all of
//! the Stmt's scalar code is; they are counted apart from the fallbacks.
//!
//! On an AVX-512 target registers are up to 512 bits (`__m512i`), and a
//! spec's mask operands and results are k registers (`__mmask*`, see
//! `isel_emit/mask.rs`); on AVX2 up to 256, and a mask operand is refused.
//!
//! A root this cannot lower (a mask operand without AVX-512, a register
//! wider than the target's) is lowered wholly naively and counted with the
//! reason; nothing here fails the compile because a rule is missing.

use super::{CompileError, Emitter, R, ctype};
use crate::isel::dialect::{Arg, Dialect, Ret};
use crate::isel::encode::Op;
use crate::isel::rules::RuleBook;
use crate::isel::{Options, Selection, Target};
use misaal_frontends::stmt::ast::*;
use misaal_frontends::stmt::types::{Type, TypeCode};
use misaal_isa::ast::Ty;
use std::collections::{BTreeMap, HashMap};

mod constant;
mod mask;
mod promote;

pub(in crate::c) use constant::ConstMask;
pub(in crate::c) use promote::Promoted;

/// What emission with instruction selection did, summed over a module.
#[derive(Clone, Debug, Default)]
pub struct IselReport {
    /// Roots (vector `let`s and stores) lowered from their selected DAG.
    pub vector_roots: usize,
    /// Roots lowered wholly naively: `label: reason`.
    pub naive_roots: Vec<String>,
    /// Roots with no instruction selected, lowered naively as a whole (one
    /// fused lane loop); their Halide ops are counted in `naive_nodes`.
    pub fused_roots: usize,
    /// Halide nodes of selected DAGs lowered naively (each time emitted).
    pub naive_nodes: usize,
    /// Scalar Halide nodes of selected DAGs lowered as C expressions (each
    /// time emitted): not fallbacks, see [`Selection::scalar`].
    pub scalar_nodes: usize,
    /// Naive Halide ops in the extracted DAGs, as selection counted them.
    pub selected_fallbacks: usize,
    /// Intrinsic calls emitted, by name (set1, loads and stores included).
    pub intrinsics: BTreeMap<String, usize>,
    /// Selection's own account, per function.
    pub explain: String,
    /// Each function's selection, as lowered here: what
    /// `isel::validate::validate_all` checks.
    pub selections: Vec<(String, Selection)>,
    /// The CPUID features instructions were chosen for.
    pub features: Option<crate::isel::features::CpuFeatures>,
    /// The `#include` lines of the target's intrinsics (its C dialect).
    pub header: String,
    /// The cost table selection read, and why (`CostModel::choice`).
    pub cost_table: String,
    /// Seconds loading the target (specs, status, costs) and building the rule book.
    pub target_secs: f64,
    pub rule_book_secs: f64,
}

impl IselReport {
    /// `--explain`: for each emitted instruction, the chains of proved rules
    /// that produced it ([`Selection::rule_chains`]), per function.
    pub fn explain_chains(&self) -> String {
        let mut s = String::new();
        for (f, sel) in &self.selections {
            s.push_str(&format!("explain: function {f}\n"));
            for (instr, chains) in sel.rule_chains() {
                for c in chains {
                    s.push_str(&format!("explain:   {instr} <= {}\n", c.join(" <= ")));
                }
            }
            for (op, n) in &sel.fallbacks {
                s.push_str(&format!("explain:   naive {op} x{n} (no proved rule covers it)\n"));
            }
        }
        s
    }

    /// Expressions left to the naive lowering: naive nodes plus naive roots.
    pub fn fallback_exprs(&self) -> usize {
        self.naive_nodes + self.naive_roots.len()
    }

    /// One line per fact, each starting with `isel:` (for a C comment or a log).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "isel: {} vector root(s), {} root(s) with no instruction (fused naive loop), {} naive root(s), {} naive op(s) emitted, {} naive op(s) selected, {} scalar C op(s); fallback_exprs {}\n",
            self.vector_roots,
            self.fused_roots,
            self.naive_roots.len(),
            self.naive_nodes,
            self.selected_fallbacks,
            self.scalar_nodes,
            self.fallback_exprs()
        );
        if let Some(f) = &self.features {
            let outside: usize = self.selections.iter().map(|(_, sel)| sel.rules.outside_target.len()).sum();
            s.push_str(&format!("isel: target {f}; {outside} rule instance(s) left out for needing other features or wider registers\n"));
        }
        for r in &self.naive_roots {
            s.push_str(&format!("isel: naive root {r}\n"));
        }
        let calls: Vec<String> = self.intrinsics.iter().map(|(k, v)| format!("{k} x{v}")).collect();
        s.push_str(&format!("isel: intrinsics {}\n", calls.join(", ")));
        s
    }

    /// Where selection's time went, summed over the functions: one line
    /// for `misaal compile --explain-isel` (never in the C, whose comments
    /// [`summary`](Self::summary) writes).
    pub fn times(&self) -> String {
        let sum = |f: &dyn Fn(&Selection) -> f64| self.selections.iter().map(|(_, s)| f(s)).sum::<f64>() * 1e3;
        format!(
            "target {:.1} ms, rule book {:.1} ms, select {:.1} ms (encode {:.1}, rules {:.1} [verdict files {:.1}, verdicts {:.1}, egglog {:.1}], saturate {:.1}, extract {:.1})",
            self.target_secs * 1e3,
            self.rule_book_secs * 1e3,
            sum(&|s| s.encode_secs + s.rules_secs + s.saturate_secs + s.extract_secs),
            sum(&|s| s.encode_secs),
            sum(&|s| s.rules_secs),
            sum(&|s| s.rules.verdict_files_secs),
            sum(&|s| s.rules.verify_secs),
            sum(&|s| s.egglog_rules_secs),
            sum(&|s| s.saturate_secs),
            sum(&|s| s.extract_secs),
        )
    }
}

/// Selection state for one module's emission.
pub(super) struct State {
    target: Target,
    dialect: Box<dyn Dialect>,
    /// `None` once the module's last function has been selected (the
    /// book is dropped then, see [`crate::isel::select_encoded_last`]).
    book: Option<RuleBook>,
    opts: Options,
    sel: Option<Selection>,
    cursor: usize,
    /// A vector `let` lowered here: its lane array's C name -> (its node,
    /// the register or registers holding it).
    lets: HashMap<String, (usize, Option<Val>)>,
    /// Node -> names of the `let`s bound to it.
    let_names: HashMap<usize, Vec<String>>,
    /// Constant vectors emitted as `static const` arrays: name -> lanes
    /// (see `isel_emit/constant.rs`).
    consts: HashMap<String, constant::Lanes>,
    pub report: IselReport,
}

impl State {
    /// For a module whose header says `target=module_target` (its
    /// architecture picks the ISA, specs, rules and C dialect).
    pub fn new(opts: &Options, module_target: &str) -> R<State> {
        let t = std::time::Instant::now();
        // The verdict files (~7 MB) are read while the target loads: the
        // two are independent, and each is tens of milliseconds.
        let isa = crate::isel::isa_of_halide_target(module_target).map_err(CompileError::new)?;
        let load_cache = || opts.verdict_cache.as_ref().map(|p| (p.clone(), misaal_verifier::audit::VerdictCache::load_for_target(p, isa)));
        // Costs belong to the CPU the code is for: `--target-features`
        // (x86-64-linux-avx2 on a zen4 Stmt) names it when given.
        let cpu = opts.features.as_ref().map_or_else(|| module_target.to_string(), |f| f.source.replace(',', "-"));
        let (target, cache) = rayon::join(|| Target::for_halide_target(module_target, &cpu), load_cache);
        let mut target = target.map_err(CompileError::new)?;
        // The widest register is the compile's, not the ISA's: 512 bits on
        // an AVX-512 target when asked for (`Options::zmm`), else 256.
        if let Some(f) = opts.features.as_ref().filter(|_| opts.zmm) {
            target.register_bits = f.register_bits(target.isa, target.register_bits);
        }
        let target_secs = t.elapsed().as_secs_f64();
        let dialect = crate::isel::dialect::for_registers(target.isa, Some(target.register_bits)).map_err(CompileError::new)?;
        let t = std::time::Instant::now();
        let book = crate::isel::rule_book(&target, opts).map_err(CompileError::new)?;
        if let Some((path, cache)) = cache {
            book.preload_verdicts(&path, cache);
        }
        let rule_book_secs = t.elapsed().as_secs_f64();
        let report = IselReport { features: opts.features.clone(), header: dialect.header().to_string(), cost_table: target.costs.choice.to_string(), target_secs, rule_book_secs, ..IselReport::default() };
        Ok(State { target, dialect, book: Some(book), opts: opts.clone(), sel: None, cursor: 0, lets: HashMap::new(), let_names: HashMap::new(), consts: HashMap::new(), report })
    }

    /// Selects instructions for one function, before it is emitted;
    /// `last`: the module's last one (with `release_rule_caches`, the rule
    /// book is dropped once its rules are loaded).
    pub fn begin(&mut self, f: &Func, last: bool) -> R<()> {
        let t = std::time::Instant::now();
        let mut enc = crate::isel::encode::Encoder::new();
        enc.stmt(&f.body);
        let sel = match self.book.take() {
            Some(book) if last && self.opts.release_rule_caches => crate::isel::select_encoded_last(&self.target, book, enc, t, &self.opts),
            Some(book) => {
                let sel = crate::isel::select_encoded(&self.target, &book, enc, t, &self.opts);
                self.book = Some(book);
                sel
            }
            None => Err("internal: instruction selection after the module's last function".to_string()),
        }
        .map_err(CompileError::new)?;
        self.report.selected_fallbacks += sel.fallback_count();
        self.report.explain.push_str(&format!("function {}:\n{}", f.name, sel.explain()));
        self.report.selections.push((f.name.clone(), sel.clone()));
        self.sel = Some(sel);
        self.cursor = 0;
        self.lets.clear();
        self.let_names.clear();
        self.consts.clear();
        Ok(())
    }
}

/// A lowered DAG value.
#[derive(Clone, Debug)]
enum Val {
    /// A `__m128i`/`__m256i` variable.
    Reg(String, u32),
    /// A value wider than a register, legalized: registers of equal width,
    /// low lanes first.
    Regs(Vec<String>, u32),
    /// A C array of lanes.
    Arr(String, Type),
    /// An integer constant, modulo 2^bits.
    Const(i64, i64),
    /// A scalar C expression.
    Scalar(String),
    /// A mask register (`__mmask*`) of this many one-bit lanes.
    Mask(String, u32),
}

/// Where a store's value went.
pub(super) enum StoreHook {
    /// Not taken over: lower naively.
    Naive,
    /// Stored already (one vector store).
    Done,
    /// The value's lane array, for the backend's store loop.
    Array(String),
    /// A scalar value's C expression, for the backend's scalar store.
    Scalar(String),
}

fn is_integer(t: Type) -> bool {
    matches!(t.code, TypeCode::Int | TypeCode::UInt | TypeCode::Bool)
}

/// Whether the encoder made a root of a `let` or store of `value`.
fn is_root(value: &Expr) -> bool {
    is_integer(value.ty) && crate::isel::encode::has_vector(value)
}

/// The type `<S, E, N>` stands for (E = 1 is bool).
fn sen(s: i64, e: i64, n: i64) -> Type {
    let t = if e == 1 {
        Type::bool()
    } else if s != 0 {
        Type::int(e as u8)
    } else {
        Type::uint(e as u8)
    };
    t.with_lanes(n as u32)
}


/// The literal of constant `value` (modulo 2^bits) as an expression of scalar type `t`.
fn literal(t: Type, bits: i64, value: i64) -> Expr {
    let sh = 64 - bits.clamp(1, 64) as u32;
    let kind = if t.is_int() { ExprKind::Int(((value as u64) << sh) as i64 >> sh) } else { ExprKind::UInt(((value as u64) << sh) >> sh) };
    Expr::new(t.element(), kind)
}

/// A dense load: (buffer, base) of `name[ramp(base, 1, n)]`, unpredicated.
fn dense_load(e: &Expr) -> Option<(&str, &Expr)> {
    let ExprKind::Load { name, index, predicate: None, .. } = &e.kind else {
        return None;
    };
    let ExprKind::Ramp { base, stride, .. } = &index.kind else {
        return None;
    };
    let one = matches!(stride.kind, ExprKind::Int(1) | ExprKind::UInt(1));
    (one && base.ty.lanes == 1 && e.ty.is_int_or_uint()).then_some((name.as_str(), base))
}

/// `e` as an operand of type `t`: itself, or reinterpreted from a type of
/// the same lanes and width.
fn fit(e: Expr, t: Type, user: &str) -> R<Expr> {
    if e.ty == t {
        Ok(e)
    } else if e.ty.total_bits() == t.total_bits() && e.ty.lanes == t.lanes && !e.ty.is_bool() && !t.is_bool() {
        Ok(Expr::new(t, ExprKind::Reinterpret(Box::new(e))))
    } else {
        Err(CompileError::new(format!("`{e}` of type {} where `{user}` takes {t}", e.ty)))
    }
}

impl Emitter<'_> {
    fn isel(&mut self) -> &mut State {
        self.g.isel.as_mut().expect("isel is on")
    }

    fn dialect(&mut self) -> &dyn Dialect {
        &*self.isel().dialect
    }

    fn reg_type(&mut self, bits: u32) -> R<String> {
        self.dialect().reg_type(bits).map_err(CompileError::unsupported)
    }

    /// Declares `{type} {r} = {load};` of a register of `bits` from `ptr` (counted).
    fn load_reg(&mut self, bits: u32, ptr: &str) -> R<String> {
        let rt = self.reg_type(bits)?;
        let (e, f) = self.dialect().load(bits, ptr).map_err(CompileError::unsupported)?;
        let r = self.fresh("r");
        self.line(&format!("{rt} {r} = {e};"));
        self.count(&f);
        Ok(r)
    }

    /// Stores register `reg` of `bits` to `ptr` (counted).
    fn store_reg(&mut self, bits: u32, ptr: &str, reg: &str) -> R<()> {
        let (st, f) = self.dialect().store(bits, ptr, reg).map_err(CompileError::unsupported)?;
        self.line(&st);
        self.count(&f);
        Ok(())
    }

    /// Declares a register of `bits` whose `elem`-bit lanes are all `v`
    /// (a constant or a scalar C expression), counted.
    fn splat_reg(&mut self, bits: u32, elem: u32, v: Val) -> R<String> {
        let rt = self.reg_type(bits)?;
        let ct = self.dialect().scalar_type(elem).map_err(CompileError::unsupported)?;
        let arg = match v {
            Val::Const(_, value) => format!("({ct}){value}LL"),
            Val::Scalar(c) => format!("({ct})({c})"),
            other => return Err(CompileError::unsupported(format!("a broadcast of {other:?}"))),
        };
        let (e, f) = self.dialect().splat(bits, elem, &arg).map_err(CompileError::unsupported)?;
        let r = self.fresh("r");
        self.line(&format!("{rt} {r} = {e};"));
        self.count(&f);
        Ok(r)
    }

    fn count(&mut self, name: &str) {
        *self.isel().report.intrinsics.entry(name.to_string()).or_default() += 1;
    }

    /// Counts Halide node `n` of the DAG as emitted: a naive op, or scalar C.
    fn count_halide(&mut self, n: usize) {
        let st = self.isel();
        if st.sel.as_ref().is_some_and(|s| s.scalar.get(n) == Some(&true)) {
            st.report.scalar_nodes += 1;
        } else {
            st.report.naive_nodes += 1;
        }
    }

    /// Takes the next root (`label` as the encoder names it) if isel is on:
    /// its node, or None when isel is off or the Stmt walk lost step.
    fn next_root(&mut self, label: &str) -> Option<usize> {
        let st = self.g.isel.as_mut()?;
        let sel = st.sel.as_ref()?;
        let r = sel.roots.get(st.cursor)?;
        if r.label != label {
            st.report.naive_roots.push(format!("{label}: out of step with selection (next root `{}`); isel off for the rest of the function", r.label));
            st.sel = None;
            return None;
        }
        st.cursor += 1;
        Some(r.node)
    }

    /// Runs `f` on a root; on an error its output is dropped and the root
    /// is counted as naive.
    fn try_root<T>(&mut self, label: &str, f: impl FnOnce(&mut Self) -> R<T>) -> Option<T> {
        let scope = self.scope.len();
        let (calls, naive) = (self.isel().report.intrinsics.clone(), self.isel().report.naive_nodes);
        match self.capture(f) {
            Ok((text, v)) => {
                self.out.push_str(&text);
                self.isel().report.vector_roots += 1;
                Some(v)
            }
            Err(e) => {
                self.scope.truncate(scope);
                let rep = &mut self.isel().report;
                (rep.intrinsics, rep.naive_nodes) = (calls, naive);
                rep.naive_roots.push(format!("{label}: {e}"));
                None
            }
        }
    }

    /// A Stmt `let`: Ok(true) if it was bound here (as its lane array, and
    /// its register when it has one).
    pub(super) fn isel_let(&mut self, name: &str, value: &Expr) -> R<bool> {
        if self.g.isel.is_none() || !is_root(value) {
            return Ok(false);
        }
        let label = format!("let {name}");
        let Some(node) = self.next_root(&label) else {
            return Ok(false);
        };
        let ty = value.ty;
        if ty.lanes == 1 {
            return self.isel_scalar_let(name, &label, node, value);
        }
        let lowered = if self.fused_naive(node)? {
            None
        } else {
            self.bind_scalar_lets(value)?;
            self.try_root(&label, |s| {
                let mut memo = HashMap::new();
                let v = s.node_val(node, &mut memo)?;
                let reg = matches!(v, Val::Reg(..) | Val::Regs(..)).then(|| v.clone());
                Ok((s.as_lane_array(v, ty)?, reg))
            })
        };
        let (arr, reg) = match lowered {
            Some((arr, reg)) => {
                self.bind(name.to_string(), arr.clone(), ty);
                (arr, reg)
            }
            None => {
                // Naively, but later roots still read it by name.
                self.bind_let(name, value)?;
                (self.lookup(name)?.cname.clone(), None)
            }
        };
        let st = self.isel();
        st.lets.insert(arr, (node, reg));
        st.let_names.entry(node).or_default().push(name.to_string());
        Ok(true)
    }

    /// A `let` of a scalar computed from vectors: bound as a C local.
    fn isel_scalar_let(&mut self, name: &str, label: &str, node: usize, value: &Expr) -> R<bool> {
        let ty = value.ty;
        let lowered = if self.fused_naive(node)? {
            None
        } else {
            self.bind_scalar_lets(value)?;
            self.try_root(label, |s| {
                let mut memo = HashMap::new();
                let v = s.node_val(node, &mut memo)?;
                s.as_scalar(v, ty)
            })
        };
        match lowered {
            Some(c) => {
                let cname = self.fresh_var(name);
                self.line(&format!("{} {cname} = {c};", ctype(ty)?));
                self.bind(name.to_string(), cname.clone(), ty);
                let st = self.isel();
                st.lets.insert(cname, (node, None));
                st.let_names.entry(node).or_default().push(name.to_string());
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// `v` as a C expression of scalar type `t`.
    fn as_scalar(&mut self, v: Val, t: Type) -> R<String> {
        let ct = ctype(t)?;
        match v {
            Val::Scalar(c) => Ok(format!("(({ct})({c}))")),
            Val::Const(bits, value) => self.scalar(&literal(t, bits, value)),
            other => Err(CompileError::unsupported(format!("{other:?} as a scalar {t}"))),
        }
    }

    /// Binds the scalar `let`s wrapping a root's value (`let t = x + y in
    /// min(load(t*64), ...)`, as Halide's CSE prints them) as C locals: the
    /// encoder folded them into the DAG, but the leaves it kept (load
    /// indices) still name them.
    fn bind_scalar_lets(&mut self, mut value: &Expr) -> R<()> {
        while let ExprKind::Let { name, value: v, body } = &value.kind {
            if v.ty.lanes == 1 {
                self.bind_let(name, v)?;
            }
            value = body;
        }
        Ok(())
    }

    /// Whether the root at `node` keeps any naive Halide op: then the naive
    /// lowering, which fuses its ops into one lane loop, takes the whole
    /// root, and its ops are counted as naive. Mixing registers with lane
    /// arrays costs a store and a load at every boundary: blur3x3 ran in
    /// 14.6 ms mixed, 6.8 ms when only roots with fewer naive ops than
    /// instructions mixed, and 0.8 ms fused. Lets bound elsewhere are their
    /// own roots.
    fn fused_naive(&mut self, node: usize) -> R<bool> {
        let bound: std::collections::HashSet<usize> = {
            let keys: Vec<usize> = self.isel().let_names.keys().copied().collect();
            keys.into_iter().filter(|&k| k != node && self.let_val(k).is_some()).collect()
        };
        let sel = self.isel().sel.as_ref().ok_or_else(|| CompileError::new("internal: no selection"))?;
        let (mut halide, mut seen, mut stack) = (0, std::collections::HashSet::new(), vec![node]);
        while let Some(n) = stack.pop() {
            if !seen.insert(n) || bound.contains(&n) {
                continue;
            }
            let d = &sel.dag[n];
            if d.op.is_halide() && sel.glue.get(n) != Some(&true) && sel.scalar.get(n) != Some(&true) {
                halide += 1;
            }
            stack.extend(d.kids.iter().copied());
        }
        let fused = halide > 0;
        if fused {
            let rep = &mut self.isel().report;
            rep.naive_nodes += halide;
            rep.fused_roots += 1;
        }
        Ok(fused)
    }

    /// A Stmt store (before the backend lowers it).
    pub(super) fn isel_store(&mut self, name: &str, index: &Expr, value: &Expr, predicate: Option<&Expr>) -> R<StoreHook> {
        if self.g.isel.is_none() || !is_root(value) {
            return Ok(StoreHook::Naive);
        }
        let label = format!("store {name}[{index}]");
        let Some(node) = self.next_root(&label) else {
            return Ok(StoreHook::Naive);
        };
        let ty = value.ty;
        if self.fused_naive(node)? {
            return Ok(StoreHook::Naive);
        }
        if ty.lanes == 1 {
            self.bind_scalar_lets(value)?;
            let r = self.try_root(&label, |s| {
                let mut memo = HashMap::new();
                let v = s.node_val(node, &mut memo)?;
                s.as_scalar(v, ty)
            });
            return Ok(r.map_or(StoreHook::Naive, StoreHook::Scalar));
        }
        let promoted = self.promoted(name);
        self.bind_scalar_lets(value)?;
        let r = self.try_root(&label, |s| {
            let mut memo = HashMap::new();
            let v = s.node_val(node, &mut memo)?;
            let dense = match &index.kind {
                ExprKind::Ramp { base, stride, .. } if base.ty.lanes == 1 && matches!(stride.kind, ExprKind::Int(1) | ExprKind::UInt(1)) => Some(base),
                _ => None,
            };
            let pieces = match &v {
                Val::Reg(r, bits) => Some((vec![r.clone()], *bits)),
                Val::Regs(rs, bits) => Some((rs.clone(), *bits)),
                _ => None,
            };
            if let (Some((regs, bits)), Some(base), None) = (pieces, dense, predicate)
                && ty.is_int_or_uint()
                && ty.total_bits() == bits as u64 * regs.len() as u64
            {
                if let Some(pr) = &promoted {
                    if s.store_promoted_regs(pr, index, ty, &regs, bits) {
                        return Ok(StoreHook::Done);
                    }
                    return Ok(StoreHook::Array(s.as_lane_array(v, ty)?));
                }
                let p = s.host(name)?;
                let b = s.hoist_addr(base)?;
                let lanes_per = bits as u64 / ty.bits as u64;
                for (k, r) in regs.iter().enumerate() {
                    let at = format!("(({} *){p} + (int64_t)({b}) + {})", ctype(ty.element())?, k as u64 * lanes_per);
                    s.store_reg(bits, &at, r)?;
                }
                return Ok(StoreHook::Done);
            }
            // A dense store of a lane count that is not a power of two, or
            // of a vector narrower than any register (from a pad's slice,
            // a lane array): exactly its bytes.
            if let (Val::Arr(a, at), Some(base), None, None) = (&v, dense, predicate, &promoted)
                && (!ty.lanes.is_power_of_two() || s.below_registers(ty.total_bits() as u32))
                && ty.is_int_or_uint()
                && at.total_bits() == ty.total_bits()
                && !at.is_bool()
            {
                let (p, b, ct) = (s.host(name)?, s.hoist_addr(base)?, ctype(ty.element())?);
                s.line(&format!("memcpy(({ct} *){p} + (int64_t)({b}), {a}, {});", ty.total_bits() / 8));
                return Ok(StoreHook::Done);
            }
            Ok(StoreHook::Array(s.as_lane_array(v, ty)?))
        });
        Ok(r.unwrap_or(StoreHook::Naive))
    }

    /// Lowers node `n` of the selection's DAG (each node once per root).
    fn node_val(&mut self, n: usize, memo: &mut HashMap<usize, Val>) -> R<Val> {
        if let Some(v) = memo.get(&n) {
            return Ok(v.clone());
        }
        let v = self.node_val_uncached(n, memo)?;
        memo.insert(n, v.clone());
        Ok(v)
    }

    fn dag_node(&mut self, n: usize) -> R<crate::isel::encode::Node> {
        let sel = self.isel().sel.as_ref().ok_or_else(|| CompileError::new("internal: no selection"))?;
        sel.dag.get(n).cloned().ok_or_else(|| CompileError::new(format!("internal: no DAG node {n}")))
    }

    fn leaf_expr(&mut self, text: &str) -> R<Expr> {
        let sel = self.isel().sel.as_ref().ok_or_else(|| CompileError::new("internal: no selection"))?;
        sel.leaves.get(text).cloned().ok_or_else(|| CompileError::new(format!("internal: no Stmt expression for leaf `{text}`")))
    }

    /// A `let` in scope bound to node `n` by [`Self::isel_let`]: its value.
    fn let_val(&mut self, n: usize) -> Option<Val> {
        self.let_binding(n).map(|(_, cname, ty, reg)| match reg {
            Some(r) => r,
            None if ty.lanes == 1 => Val::Scalar(cname),
            None => Val::Arr(cname, ty),
        })
    }

    /// A `let` in scope bound to node `n`: its name, lane array, type and register.
    fn let_binding(&mut self, n: usize) -> Option<(String, String, Type, Option<Val>)> {
        let names = self.isel().let_names.get(&n)?.clone();
        for name in names {
            let Ok(b) = self.lookup(&name) else { continue };
            let (cname, ty) = (b.cname.clone(), b.ty);
            if let Some((node, reg)) = self.isel().lets.get(&cname).cloned()
                && node == n
            {
                return Some((name, cname, ty, reg));
            }
        }
        None
    }

    fn node_val_uncached(&mut self, n: usize, memo: &mut HashMap<usize, Val>) -> R<Val> {
        if let Some(v) = self.let_val(n) {
            return Ok(v);
        }
        let node = self.dag_node(n)?;
        match &node.op {
            Op::Const { bits, value } => Ok(Val::Const(*bits, *value)),
            Op::Leaf { text, .. } => {
                let e = self.leaf_expr(text)?;
                self.leaf_val(&e)
            }
            Op::Instr { name } => self.instr_call(name, &node.kids, memo),
            Op::Halide { name, generics } if self.isel().sel.as_ref().is_some_and(|s| s.glue.get(n) == Some(&true)) => self.glue_val(name, generics, &node.kids, memo),
            Op::Halide { name, generics } if name == "broadcast" && matches!(generics[..], [_, 8 | 16 | 32 | 64, _]) && self.reg_type((generics[1] * generics[2]) as u32).is_ok() => {
                // A broadcast of a constant or a scalar is one splat.
                let (bits, v) = ((generics[1] * generics[2]) as u32, self.node_val(node.kids[0], memo)?);
                let r = self.splat_reg(bits, generics[1] as u32, v)?;
                Ok(Val::Reg(r, bits))
            }
            Op::Halide { name, generics } => {
                self.count_halide(n);
                self.halide_node(name, generics, &node.kids, memo)
            }
        }
    }

    fn leaf_val(&mut self, e: &Expr) -> R<Val> {
        if let ExprKind::Var(v) = &e.kind
            && let Ok(cname) = self.lookup(v).map(|b| b.cname.clone())
            && let Some((_, Some(v))) = self.isel().lets.get(&cname).cloned()
        {
            return Ok(v);
        }
        if e.ty.lanes == 1 {
            return Ok(Val::Scalar(self.hoist(e)?));
        }
        if let Some(v) = self.constant_leaf(e)? {
            return Ok(v);
        }
        // A load under a constant all-on predicate is a plain load.
        if let ExprKind::Load { predicate: Some(pr), .. } = &e.kind
            && self.const_mask(pr)? == Some(ConstMask::All)
        {
            let mut plain = e.clone();
            if let ExprKind::Load { predicate, .. } = &mut plain.kind {
                *predicate = None;
            }
            return self.leaf_val(&plain);
        }
        let bits = e.ty.total_bits() as u32;
        let reg = self.isel().target.register_bits as u32;
        // A dense load wider than a register (a 64-lane u8 `let`) is loaded
        // as registers too: copying it through a lane array and reloading
        // it 32 bytes at a time stalls on store forwarding (median3x3 ran
        // at 0.36x of Halide that way).
        if let Some((buf, base)) = dense_load(e)
            && (self.reg_type(bits).is_ok() || bits % reg == 0)
        {
            if let Some(pr) = self.promoted(buf) {
                if let Some(v) = self.load_promoted(&pr, e)? {
                    return Ok(v);
                }
                return Ok(Val::Arr(self.lower_vector_expr(e)?, e.ty));
            }
            let p = self.host(buf)?;
            let b = self.hoist_addr(base)?;
            let ct = ctype(e.ty.element())?;
            return self.load_pieces(&format!("(const char *)((const {ct} *){p} + (int64_t)({b}))"), bits);
        }
        // A dense load of a lane count that is not a power of two (24 u16
        // lanes, 384 bits): no register holds it, so its bytes are copied.
        if let Some((buf, base)) = dense_load(e)
            && !e.ty.lanes.is_power_of_two()
            && self.sub_register(bits)
            && self.promoted(buf).is_none()
        {
            let (p, b, ct) = (self.host(buf)?, self.hoist_addr(base)?, ctype(e.ty.element())?);
            return self.copy_arr(&format!("(const char *)((const {ct} *){p} + (int64_t)({b}))"), e.ty);
        }
        Ok(Val::Arr(self.lower_vector_expr(e)?, e.ty))
    }

    /// `v` in a `bits`-wide register.
    fn in_reg(&mut self, v: Val, bits: u32) -> R<String> {
        self.reg_type(bits)?;
        match v {
            Val::Reg(r, b) if b == bits => Ok(r),
            Val::Reg(_, b) => Err(CompileError::new(format!("a {b}-bit register where {bits} bits are expected"))),
            // Two registers of a concat into one twice as wide (an HVX pair),
            // where the dialect joins them in one instruction.
            Val::Regs(rs, b) => match (rs.len() == 2 && b * 2 == bits).then(|| self.dialect().join(b, &rs[0], &rs[1])).flatten() {
                Some((e, f)) => {
                    let rt = self.reg_type(bits)?;
                    let x = self.fresh("r");
                    self.line(&format!("{rt} {x} = {e};"));
                    self.count(&f);
                    Ok(x)
                }
                None => Err(CompileError::unsupported(format!("{} {b}-bit registers where one of {bits} bits is expected", rs.len()))),
            },
            Val::Arr(a, t) if t.total_bits() == bits as u64 && !t.is_bool() => self.load_reg(bits, &a),
            Val::Arr(_, t) => Err(CompileError::unsupported(format!("a {t} value in a {bits}-bit register"))),
            Val::Const(cb, value) => self.splat_reg(bits, cb as u32, Val::Const(cb, value)),
            Val::Scalar(_) => Err(CompileError::unsupported("a scalar operand of a vector instruction")),
            Val::Mask(..) => Err(CompileError::unsupported("a mask where a vector register is expected")),
        }
    }

    /// `v` as a lane array of type `t` (a vector).
    fn as_lane_array(&mut self, v: Val, t: Type) -> R<String> {
        let ct = ctype(t.element())?;
        let n = t.lanes;
        match v {
            Val::Arr(a, at) if ctype(at.element())? == ct && at.lanes == n => Ok(a),
            Val::Arr(a, at) if at.total_bits() == t.total_bits() && !at.is_bool() && !t.is_bool() => {
                let out = self.fresh("v");
                self.line(&format!("{ct} {out}[{n}]; memcpy({out}, {a}, sizeof {out});"));
                Ok(out)
            }
            Val::Reg(r, bits) if t.total_bits() == bits as u64 && !t.is_bool() => {
                let out = self.fresh("v");
                let (st, f) = self.dialect().store(bits, &out, &r).map_err(CompileError::unsupported)?;
                self.line(&format!("{ct} {out}[{n}]; {st}"));
                self.count(&f);
                Ok(out)
            }
            Val::Regs(rs, bits) if t.total_bits() == bits as u64 * rs.len() as u64 && !t.is_bool() => {
                let out = self.fresh("v");
                self.line(&format!("{ct} {out}[{n}];"));
                for (k, r) in rs.iter().enumerate() {
                    self.store_reg(bits, &format!("((char *){out} + {})", k as u32 * bits / 8), r)?;
                }
                Ok(out)
            }
            Val::Const(bits, value) => {
                let e = Expr::new(t, ExprKind::Broadcast { value: Box::new(literal(t, bits, value)), lanes: n });
                self.lower_vector_expr(&e)
            }
            Val::Mask(m, lanes) if t.is_bool() && lanes == n => self.mask_to_bools(&m, n),
            v => Err(CompileError::unsupported(format!("{v:?} as {t}"))),
        }
    }

    /// Legalization glue: a slice or concat on register boundaries
    /// ([`crate::isel::extract::glue_shape`]), lowered by regrouping
    /// registers; a slice out of a load loads only its piece.
    fn glue_val(&mut self, name: &str, g: &[i64], kids: &[usize], memo: &mut HashMap<usize, Val>) -> R<Val> {
        match (name, g) {
            ("slice", &[_, e, n, _, b, 1]) => {
                let (start, piece) = ((b * e) as u32, (n * e) as u32);
                // Down a chain of glue slices to a dense load: load the piece.
                let (base, offset) = self.glue_slice_base(kids[0])?;
                if let Some(addr) = self.dense_leaf_at(base)? {
                    let from = format!("{addr} + {}", (start as i64 + offset) / 8);
                    // A sub-register piece reads only its own bytes.
                    return if self.sub_register(piece) { self.copy_arr(&from, sen(g[0], e, n)) } else { self.load_pieces(&from, piece) };
                }
                let v = self.node_val(kids[0], memo)?;
                if self.sub_register(piece) {
                    return self.sub_piece(v, start, sen(g[0], e, n));
                }
                self.piece_of(v, start, piece)
            }
            ("concat", &[s, e, n, m]) if [n, m, n + m].iter().any(|&l| self.sub_register((l * e) as u32)) || self.below_registers((n * e) as u32) => {
                self.concat_sub(sen(s, e, 1), (n as u32, m as u32), kids, memo)
            }
            ("concat", _) => {
                let mut regs = Vec::new();
                let mut width = None;
                for &k in kids {
                    let v = self.node_val(k, memo)?;
                    let v = match v {
                        Val::Arr(a, t) => self.load_pieces(&format!("(const char *){a}"), t.total_bits() as u32)?,
                        v => v,
                    };
                    let (rs, w) = match v {
                        Val::Reg(r, w) => (vec![r], w),
                        Val::Regs(rs, w) => (rs, w),
                        other => return Err(CompileError::unsupported(format!("a concat of {other:?}"))),
                    };
                    if width.is_some_and(|x| x != w) {
                        return Err(CompileError::unsupported("a concat of registers of different widths"));
                    }
                    width = Some(w);
                    regs.extend(rs);
                }
                let w = width.ok_or_else(|| CompileError::new("internal: a concat of nothing"))?;
                Ok(Val::Regs(regs, w))
            }
            _ => Err(CompileError::new(format!("internal: `{name}` is not glue"))),
        }
    }

    /// Whether no register, nor whole registers, hold a value of `bits`:
    /// narrower than a register with no register class of its own (HVX's
    /// 512 bits), or not a multiple of a register (the 384 bits of a
    /// 24-lane i16 vector). Then it is a lane array, and the glue around it
    /// ([`crate::isel::extract::Glue::Mem`]) copies bytes. x86 and NEON
    /// meet these only in vectors of lane counts that are not powers of two.
    fn sub_register(&mut self, bits: u32) -> bool {
        let reg = self.isel().target.register_bits as u32;
        self.reg_type(bits).is_err() && (bits < reg || bits % reg != 0)
    }

    /// Whether `bits` is narrower than the target's narrowest vector
    /// register (x86's 64-bit class is a scalar register, not a vector
    /// one): two such halves are joined through memory.
    fn below_registers(&mut self, bits: u32) -> bool {
        i64::from(bits) < self.isel().target.narrowest_register_bits()
    }

    /// A lane array of type `t` copied from the address `at` (a C
    /// expression of a byte pointer): exactly its bytes are read.
    fn copy_arr(&mut self, at: &str, t: Type) -> R<Val> {
        let (ct, n, align) = (ctype(t.element())?, t.lanes, self.isel().target.register_bits / 8);
        let out = self.fresh("v");
        self.line(&format!("{ct} {out}[{n}] __attribute__((aligned({align}))); memcpy({out}, {at}, sizeof {out});"));
        Ok(Val::Arr(out, t))
    }

    /// The byte address of node `k` if it is a dense load leaf (not a `let`).
    fn dense_leaf_at(&mut self, k: usize) -> R<Option<String>> {
        if self.let_val(k).is_some() {
            return Ok(None);
        }
        let Op::Leaf { text, .. } = self.dag_node(k)?.op else { return Ok(None) };
        let le = self.leaf_expr(&text)?;
        let Some((buf, base)) = dense_load(&le) else { return Ok(None) };
        if self.promoted(buf).is_some() {
            return Ok(None);
        }
        let (p, base) = (self.host(buf)?, self.hoist_addr(base)?);
        let ct = ctype(le.ty.element())?;
        Ok(Some(format!("(const char *)((const {ct} *){p} + (int64_t)({base}))")))
    }

    /// A sub-register slice (type `t`, from bit `start`) of `v`: registers
    /// are stored to an aligned temporary first; the piece is a lane array.
    fn sub_piece(&mut self, v: Val, start: u32, t: Type) -> R<Val> {
        let (rs, w) = match v {
            Val::Arr(a, _) => return self.copy_arr(&format!("(const char *){a} + {}", start / 8), t),
            Val::Const(b, value) => return Ok(Val::Const(b, value)),
            Val::Reg(r, w) => (vec![r], w),
            Val::Regs(rs, w) => (rs, w),
            other => return Err(CompileError::unsupported(format!("a slice of {other:?}"))),
        };
        let (ct, align) = (ctype(t.element())?, self.isel().target.register_bits / 8);
        let spill = self.fresh("spill");
        self.line(&format!("{ct} {spill}[{}] __attribute__((aligned({align})));", rs.len() as u32 * w / t.bits as u32));
        for (k, r) in rs.iter().enumerate() {
            self.store_reg(w, &format!("((char *){spill} + {})", k as u32 * w / 8), r)?;
        }
        if start == 0 {
            return Ok(Val::Arr(spill, t));
        }
        self.copy_arr(&format!("(const char *){spill} + {}", start / 8), t)
    }

    /// A concat of two parts, `first` then `second` lanes of one element
    /// type, at least one of which no register holds (an HVX half, or the
    /// 24 and 8 lanes that pad a 24-lane vector to 32): their bytes in an
    /// aligned temporary (a dense load's, or a slice of one, copied
    /// straight from its buffer, reading only its own bytes), loaded if the
    /// whole fills registers.
    fn concat_sub(&mut self, elem: Type, (first, second): (u32, u32), kids: &[usize], memo: &mut HashMap<usize, Val>) -> R<Val> {
        let whole = elem.with_lanes(first + second);
        let parts = [elem.with_lanes(first), elem.with_lanes(second)];
        let (ct, align) = (ctype(whole.element())?, self.isel().target.register_bits / 8);
        let mut srcs: Vec<String> = Vec::new();
        for (i, &k) in kids.iter().enumerate() {
            if i > 0 && k == kids[0] && first == second {
                // concat(a, a), as pad rules make it: one source.
                srcs.push(srcs[0].clone());
                continue;
            }
            let src = match self.dense_glue_at(k)? {
                Some(at) => at,
                None => {
                    let v = self.node_val(k, memo)?;
                    self.as_lane_array(v, parts[i])?
                }
            };
            srcs.push(src);
        }
        let tmp = self.fresh("cat");
        self.line(&format!("{ct} {tmp}[{}] __attribute__((aligned({align})));", whole.lanes));
        let mut offset = 0;
        for (src, part) in srcs.iter().zip(parts) {
            let bytes = part.total_bits() / 8;
            self.line(&format!("memcpy((char *){tmp} + {offset}, {src}, {bytes});"));
            offset += bytes;
        }
        let bits = whole.total_bits() as u32;
        // Narrower than any vector register (x86's 64 bits: a long long),
        // it stays in memory for the concat or store that reads it next.
        if self.below_registers(bits) {
            return Ok(Val::Arr(tmp, whole));
        }
        if self.reg_type(bits).is_ok() {
            let r = self.load_reg(bits, &tmp)?;
            return Ok(Val::Reg(r, bits));
        }
        if !self.sub_register(bits) {
            return self.load_pieces(&format!("(const char *){tmp}"), bits);
        }
        Ok(Val::Arr(tmp, whole))
    }

    /// The byte address of node `k` if it is a dense load leaf or a `let`
    /// held as a lane array, or a glue slice (of a glue slice ...) of one:
    /// where its bytes are in memory.
    fn dense_glue_at(&mut self, k: usize) -> R<Option<String>> {
        let (base, offset) = self.glue_slice_base(k)?;
        if let Some(addr) = self.dense_leaf_at(base)? {
            return Ok(Some(if offset == 0 { addr } else { format!("{addr} + {}", offset / 8) }));
        }
        Ok(match self.let_val(base) {
            Some(Val::Arr(a, _)) => Some(format!("(const char *){a} + {}", offset / 8)),
            _ => None,
        })
    }

    /// The node under `k`'s chain of glue slices (stopping at a `let`),
    /// and the bit offset of `k`'s first lane in it.
    fn glue_slice_base(&mut self, k: usize) -> R<(usize, i64)> {
        let (mut at, mut offset) = (k, 0i64);
        while self.let_val(at).is_none() {
            let kid = self.dag_node(at)?;
            match &kid.op {
                Op::Halide { name, generics } if name == "slice" && self.isel().sel.as_ref().is_some_and(|s| s.glue.get(at) == Some(&true)) => {
                    offset += generics[1] * generics[4];
                    at = kid.kids[0];
                }
                _ => break,
            }
        }
        Ok((at, offset))
    }

    /// `bits` bits from the address `at` (a C expression of a byte
    /// pointer), as one register or several of at most 256 bits.
    fn load_pieces(&mut self, at: &str, bits: u32) -> R<Val> {
        let w = bits.min(self.isel().target.register_bits as u32);
        let mut regs = Vec::new();
        for k in 0..bits / w {
            let r = self.load_reg(w, &format!("({at} + {})", k * w / 8))?;
            regs.push(r);
        }
        Ok(if regs.len() == 1 { Val::Reg(regs.remove(0), w) } else { Val::Regs(regs, w) })
    }

    /// The `piece` bits at bit `start` of `v`: whole registers picked out,
    /// anything else read back through memory (stores and loads, counted).
    fn piece_of(&mut self, v: Val, start: u32, piece: u32) -> R<Val> {
        let (rs, w) = match v {
            Val::Arr(a, _) => return self.load_pieces(&format!("(const char *){a} + {}", start / 8), piece),
            Val::Reg(r, w) => (vec![r], w),
            Val::Regs(rs, w) => (rs, w),
            other => return Err(CompileError::unsupported(format!("a slice of {other:?}"))),
        };
        if piece % w == 0 && start % w == 0 {
            let mut pick: Vec<String> = rs[(start / w) as usize..((start + piece) / w) as usize].to_vec();
            return Ok(if pick.len() == 1 { Val::Reg(pick.remove(0), w) } else { Val::Regs(pick, w) });
        }
        if piece * 2 == w && start % piece == 0 {
            // A half of a register (a slice out of a load that a `let`
            // holds in registers), where the dialect has one instruction
            // for it (x86 vextracti128, NEON vget_high).
            let (r, hi) = (rs[(start / w) as usize].clone(), (start % w) / piece == 1);
            if let Some((e, f)) = self.dialect().half(w, &r, hi) {
                let rt = self.reg_type(piece)?;
                let x = self.fresh("r");
                self.line(&format!("{rt} {x} = {e};"));
                self.count(&f);
                return Ok(Val::Reg(x, piece));
            }
        }
        let tmp = self.fresh("spill");
        self.line(&format!("uint8_t {tmp}[{}];", rs.len() as u32 * w / 8));
        for (k, r) in rs.iter().enumerate() {
            self.store_reg(w, &format!("({tmp} + {})", k as u32 * w / 8), r)?;
        }
        self.load_pieces(&format!("(const char *){tmp} + {}", start / 8), piece)
    }

    /// A target instruction node: its intrinsic called by name, in the
    /// target's C dialect.
    fn instr_call(&mut self, name: &str, kids: &[usize], memo: &mut HashMap<usize, Val>) -> R<Val> {
        let (instr, _) = self.isel().target.instrs.get(name).ok_or_else(|| CompileError::new(format!("no spec for `{name}`")))?;
        let (params, ret): (Vec<Ty>, Ty) = (instr.params.iter().map(|p| p.ty).collect(), instr.ret);
        if params.len() != kids.len() {
            return Err(CompileError::new(format!("`{name}` takes {} operands, the DAG gives {}", params.len(), kids.len())));
        }
        let mut args = Vec::new();
        for (k, (ty, &kid)) in params.iter().zip(kids).enumerate() {
            let v = self.node_val(kid, memo)?;
            args.push(match ty {
                // A scalar operand (set1's): the C value, cast to its width.
                Ty::Bv(w) if !self.dialect().register_operand(name, Some(k), *w) => match v {
                    Val::Const(_, value) => Arg::ScalarConst { value, bits: *w },
                    Val::Scalar(c) => Arg::Scalar { expr: c, bits: *w },
                    // A register of the dialect's class that is a C scalar
                    // (x86's 64-bit pieces of a load, for movq).
                    Val::Reg(r, rw) if rw == *w && self.dialect().reg_type(rw).is_ok_and(|t| t == self.dialect().scalar_type(rw).unwrap_or("")) => Arg::Scalar { expr: r, bits: *w },
                    other => return Err(CompileError::unsupported(format!("{other:?} as a {w}-bit scalar operand of `{name}`"))),
                },
                Ty::Bv(w) => Arg::Reg(self.in_reg(v, *w)?, *w),
                Ty::Imm(_) => match v {
                    Val::Const(_, value) => Arg::Imm(value),
                    _ => {
                        return Err(CompileError::unsupported(format!("a non-constant immediate of `{name}`")));
                    }
                },
                Ty::Mask(w) => Arg::Mask(self.in_mask(v, *w)?, *w),
            });
        }
        let bits = match ret {
            Ty::Bv(bits) => bits,
            Ty::Mask(lanes) => return self.mask_call(name, &args, &params, lanes),
            Ty::Imm(_) => return Err(CompileError::unsupported(format!("`{name}` returns {ret}"))),
        };
        // A scalar result (`_mm_extract_epi32`, `vaddvq_u32`): a C integer of its width.
        let scalar = !self.dialect().register_operand(name, None, bits);
        let r = if scalar { Ret::Scalar(bits) } else { Ret::Reg(bits) };
        let call = self.dialect().call(name, &args, &params, r).map_err(CompileError::unsupported)?;
        let v = self.fresh(if scalar { "s" } else { "r" });
        self.line(&format!("{} {v} = {};", call.ctype, call.expr));
        self.count(name);
        Ok(if scalar { Val::Scalar(v) } else { Val::Reg(v, bits) })
    }

    /// A Halide node: rebuilt as a Stmt expression over its operands (Halide
    /// operands inlined, so element-wise ops fuse into one lane loop) and
    /// lowered naively.
    fn halide_node(&mut self, name: &str, g: &[i64], kids: &[usize], memo: &mut HashMap<usize, Val>) -> R<Val> {
        let scope = self.scope.len();
        let r = self.halide_expr(name, g, kids, memo).and_then(|e| if e.ty.lanes == 1 { self.hoist(&e).map(Val::Scalar) } else { self.lower_vector_expr(&e).map(|a| Val::Arr(a, e.ty)) });
        self.scope.truncate(scope);
        r
    }

    /// The Stmt expression of a Halide node; its non-Halide operands are
    /// placeholder variables bound (until the caller truncates the scope)
    /// to their lane arrays.
    fn halide_expr(&mut self, name: &str, g: &[i64], kids: &[usize], memo: &mut HashMap<usize, Val>) -> R<Expr> {
        let gp = |k: usize| g.get(k).copied().ok_or_else(|| CompileError::new(format!("`{name}` lacks generic {k}")));
        let (s, e, n) = (gp(0)?, gp(1)?, gp(2)?);
        let t = sen(s, e, n);
        let bool_n = Type::bool().with_lanes(n as u32);
        fn bx(e: Expr) -> Box<Expr> {
            Box::new(e)
        }
        let binop = |op: &str| -> Option<BinOp> {
            use BinOp::*;
            [Add, Sub, Mul, Div, Mod, Min, Max, Eq, Ne, Lt, Le, Gt, Ge].into_iter().find(|b| b.op_name() == op)
        };
        // (operand types, result type, how the operands make the expression)
        type Build = Box<dyn Fn(Vec<Expr>) -> ExprKind>;
        let call = |i: Intrinsic| -> Build { Box::new(move |a| ExprKind::Call { callee: Callee::Intrinsic(i), args: a }) };
        let (kid_tys, rt, build): (Vec<Type>, Type, Build) = match name {
            "cast" => (vec![t], sen(gp(3)?, gp(4)?, n), Box::new(|a: Vec<Expr>| ExprKind::Cast(bx(a[0].clone())))),
            "reinterpret" => (vec![t], sen(gp(3)?, gp(4)?, gp(5)?), Box::new(|a: Vec<Expr>| ExprKind::Reinterpret(bx(a[0].clone())))),
            "and" | "or" if e == 1 => {
                let op = if name == "and" { BinOp::And } else { BinOp::Or };
                (vec![t, t], t, Box::new(move |a: Vec<Expr>| ExprKind::Binary(op, bx(a[0].clone()), bx(a[1].clone()))))
            }
            "and" => (vec![t, t], t, call(Intrinsic::BitwiseAnd)),
            "or" => (vec![t, t], t, call(Intrinsic::BitwiseOr)),
            "xor" => (vec![t, t], t, call(Intrinsic::BitwiseXor)),
            "not" if e == 1 => (vec![t], t, Box::new(|a: Vec<Expr>| ExprKind::Not(bx(a[0].clone())))),
            "not" => (vec![t], t, call(Intrinsic::BitwiseNot)),
            op if binop(op).is_some() => {
                let b = binop(op).expect("checked");
                let rt = if b.is_comparison() { bool_n } else { t };
                (vec![t, t], rt, Box::new(move |a: Vec<Expr>| ExprKind::Binary(b, bx(a[0].clone()), bx(a[1].clone()))))
            }
            "select" => (vec![bool_n, t, t], t, Box::new(|a: Vec<Expr>| ExprKind::Select(bx(a[0].clone()), bx(a[1].clone()), bx(a[2].clone())))),
            "ramp" => (vec![t.element(), t.element()], t, Box::new(move |a: Vec<Expr>| ExprKind::Ramp { base: bx(a[0].clone()), stride: bx(a[1].clone()), lanes: n as u32 })),
            "broadcast" => (vec![t.element()], t, Box::new(move |a: Vec<Expr>| ExprKind::Broadcast { value: bx(a[0].clone()), lanes: n as u32 })),
            "concat" => {
                let m = gp(3)?;
                let total = (n + m) as u32;
                (vec![t, sen(s, e, m)], sen(s, e, n + m), Box::new(move |a: Vec<Expr>| ExprKind::Shuffle { vectors: a, indices: (0..total).collect() }))
            }
            "interleave" => {
                let nn = n as u32;
                (vec![t, t], sen(s, e, 2 * n), Box::new(move |a: Vec<Expr>| ExprKind::Shuffle { vectors: a, indices: (0..2 * nn).map(|k| k / 2 + (k % 2) * nn).collect() }))
            }
            "slice" => {
                let (m, begin, stride) = (gp(3)?, gp(4)?, gp(5)?);
                let idx: Vec<u32> = (0..n).map(|k| (begin + k * stride) as u32).collect();
                (vec![sen(s, e, m)], t, Box::new(move |a: Vec<Expr>| ExprKind::Shuffle { vectors: a, indices: idx.clone() }))
            }
            r if ReduceOp::from_name(r).is_some() => {
                let op = ReduceOp::from_name(r).expect("checked");
                (vec![sen(s, e, n * gp(3)?)], t, Box::new(move |a: Vec<Expr>| ExprKind::VectorReduce { op, value: bx(a[0].clone()) }))
            }
            "shl" | "shr" | "rounding_shift_left" | "rounding_shift_right" | "widening_shift_left" | "widening_shift_right" | "widening_mul" => {
                let i = match name {
                    "shl" => Intrinsic::ShiftLeft,
                    "shr" => Intrinsic::ShiftRight,
                    other => Intrinsic::from_name(other).ok_or_else(|| CompileError::new(format!("intrinsic `{other}`")))?,
                };
                let s2 = gp(3)?;
                let rt = match name {
                    "widening_mul" => sen((s != 0 || s2 != 0) as i64, 2 * e, n),
                    "widening_shift_left" | "widening_shift_right" => sen(s, 2 * e, n),
                    _ => t,
                };
                (vec![t, sen(s2, e, n)], rt, call(i))
            }
            "widen_right_add" | "widen_right_sub" | "widen_right_mul" => {
                let i = Intrinsic::from_name(name).ok_or_else(|| CompileError::new(format!("intrinsic `{name}`")))?;
                (vec![sen(s, 2 * e, n), t], sen(s, 2 * e, n), call(i))
            }
            "saturating_cast" => (vec![t], sen(gp(3)?, gp(4)?, n), call(Intrinsic::SaturatingCast)),
            "widening_add" | "widening_sub" => {
                let i = Intrinsic::from_name(name).ok_or_else(|| CompileError::new(format!("intrinsic `{name}`")))?;
                let rs = if name == "widening_sub" { 1 } else { s };
                (vec![t, t], sen(rs, 2 * e, n), call(i))
            }
            "mul_shift_right" | "rounding_mul_shift_right" => {
                let i = Intrinsic::from_name(name).ok_or_else(|| CompileError::new(format!("intrinsic `{name}`")))?;
                (vec![t, t, sen(0, e, n)], t, call(i))
            }
            "absd" | "abs" => {
                let i = Intrinsic::from_name(name).ok_or_else(|| CompileError::new(format!("intrinsic `{name}`")))?;
                (vec![t; kids.len()], sen(0, e, n), call(i))
            }
            other => {
                let i = Intrinsic::from_name(other).ok_or_else(|| CompileError::unsupported(format!("Halide op `{other}`")))?;
                (vec![t; kids.len()], t, call(i))
            }
        };
        if kid_tys.len() != kids.len() {
            return Err(CompileError::new(format!("`{name}` with {} operands", kids.len())));
        }
        let mut args = Vec::new();
        for (&kt, &k) in kid_tys.iter().zip(kids) {
            let node = self.dag_node(k)?;
            let arg = match &node.op {
                Op::Const { bits, value } if kt.lanes == 1 => literal(kt, *bits, *value),
                Op::Leaf { text, .. } if self.let_val(k).is_none() && !self.leaf_expr(text).is_ok_and(|e| crate::isel::encode::is_constant_vector(&e)) => {
                    let le = self.leaf_expr(text)?;
                    fit(le, kt, name)?
                }
                _ if kt.lanes > 1 && self.let_binding(k).is_some() => {
                    // A let's lane array, by its name.
                    let (var, _, ty, _) = self.let_binding(k).expect("checked");
                    fit(Expr::new(ty, ExprKind::Var(var)), kt, name)?
                }
                Op::Halide { name: kn, generics: kg } if self.let_val(k).is_none() && !memo.contains_key(&k) => {
                    self.count_halide(k);
                    let ke = self.halide_expr(kn, kg, &node.kids, memo)?;
                    fit(ke, kt, name)?
                }
                _ if kt.lanes == 1 => match self.node_val(k, memo)? {
                    Val::Scalar(c) => {
                        let v = self.fresh("s");
                        self.line(&format!("{} {v} = {c};", ctype(kt)?));
                        self.bind(v.clone(), v.clone(), kt);
                        Expr::new(kt, ExprKind::Var(v))
                    }
                    other => {
                        return Err(CompileError::unsupported(format!("{other:?} as a scalar operand of `{name}`")));
                    }
                },
                _ => {
                    let v = self.node_val(k, memo)?;
                    let arr = self.as_lane_array(v, kt)?;
                    let ph = format!("isel.{arr}");
                    self.bind(ph.clone(), arr, kt);
                    Expr::new(kt, ExprKind::Var(ph))
                }
            };
            args.push(arg);
        }
        Ok(Expr::new(rt, build(args)))
    }
}
