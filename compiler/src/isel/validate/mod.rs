//! Translation validation of instruction selection: for every root of a
//! [`Selection`], the bit-vector meaning of the expression as the Stmt wrote
//! it ([`Selection::source`] at [`RootResult::source_node`]) is proved equal,
//! with Z3 at the kernel's concrete widths, to the meaning of the extracted
//! instruction DAG ([`Selection::dag`] at [`RootResult::node`]).
//!
//! Both sides are composed by the verifier ([`misaal_verifier::compose`])
//! from the same semantics the rules were proved with: a Halide node is
//! `halide.instantiate(name, generics)`, an x86 node its bundled spec, a
//! constant its bits, and every leaf one free operand, shared by both sides
//! by its text. Nothing here trusts the rules, the e-graph or the extractor.
//!
//! Verdicts per root:
//! - **trivial**: both sides are the same term (a root no instruction was
//!   selected for); proved without a solver call;
//! - **proved**: Z3 proved them equal (after a few random inputs found no
//!   difference);
//! - **mismatch**: operand values on which they differ (the selection is
//!   wrong; `misaal compile --validate` exits 1);
//! - **unknown**: the solver ran out of budget. Not a proof: the compile
//!   says "not validated" and exits 3, as `misaal verify` does;
//! - **internal error**: the selected DAG names an x86 spec or Halide op with
//!   no semantics, a leaf the source expression does not have (or has at
//!   another width), or the two sides differ in width. A bug in selection,
//!   reported and counted as a failure (exit 1).
//!
//! `misaal compile --isel --validate` validates the selections the emitter
//! itself made and lowered ([`crate::c::IselReport::selections`], one per
//! function, from `State::begin`), not a second selection run. Roots the
//! emitter lowered naively anyway are validated too; their C does not come
//! from the selection.

use super::encode::{Node, Op, TermDag};
use super::{Selection, Target};
use misaal_isa::{BitVec, Semantics};
use misaal_verifier::compose::{Part, check_equal, compose};
use misaal_verifier::smt::{Budget, Equivalence};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

mod cuts;

/// How hard to try.
#[derive(Clone, Debug)]
pub struct ValidateOptions {
    /// Per solver query (a wide root is proved in slices, each a query).
    pub budget: Budget,
    /// Random inputs evaluated on both sides before the solver runs.
    pub cases: usize,
    pub seed: u64,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions { budget: Budget { timeout_ms: 20_000, rlimit: 0 }, cases: 16, seed: 0x7661_6c69 }
    }
}

/// A root whose selected DAG computes something else.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub label: String,
    pub source_expr: String,
    pub selected_expr: String,
    /// `leaf = 0x..` for every operand, then both results, in hex.
    pub counterexample: String,
}

/// A root the solver could not decide: not validated.
#[derive(Clone, Debug)]
pub struct Undecided {
    pub label: String,
    pub source_expr: String,
    pub selected_expr: String,
    pub why: String,
}

/// A root that could not be checked because its selection is malformed.
#[derive(Clone, Debug)]
pub struct InternalError {
    pub label: String,
    pub message: String,
}

#[derive(Clone, Debug, Default)]
pub struct ValidationReport {
    pub roots: usize,
    /// Roots proved equal, trivial ones included.
    pub proved: usize,
    /// Of `proved`, those whose two sides are the same term.
    pub trivial: usize,
    pub mismatches: Vec<Mismatch>,
    pub unknown: Vec<Undecided>,
    pub errors: Vec<InternalError>,
    pub secs: f64,
    /// The roots that took longest to check, slowest first (at most [`SLOWEST`]).
    pub slowest: Vec<(String, f64)>,
}

/// How many of the slowest roots a report keeps.
pub const SLOWEST: usize = 3;

/// The most characters of an expression printed in a report.
const EXPR_CHARS: usize = 1200;

impl ValidationReport {
    /// Every root proved.
    pub fn ok(&self) -> bool {
        self.proved == self.roots
    }

    /// 0 when every root is proved; 1 for a mismatch or an internal error;
    /// 3 when the only failures are undecided roots ("not validated").
    pub fn exit_code(&self) -> u8 {
        if !self.mismatches.is_empty() || !self.errors.is_empty() {
            1
        } else if !self.unknown.is_empty() {
            3
        } else {
            0
        }
    }

    /// `validate: N roots, P proved (T trivial), M mismatches, U unknown in S s`
    /// (and internal errors, when there are any).
    pub fn line(&self) -> String {
        let errors = if self.errors.is_empty() { String::new() } else { format!(", {} internal error(s)", self.errors.len()) };
        format!(
            "validate: {} roots, {} proved ({} trivial), {} mismatches, {} unknown{errors} in {:.2} s",
            self.roots,
            self.proved,
            self.trivial,
            self.mismatches.len(),
            self.unknown.len(),
            self.secs
        )
    }

    /// Each failure with its expressions, then [`ValidationReport::line`].
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for m in &self.mismatches {
            s.push_str(&format!("validate: MISMATCH {}\n  source:   {}\n  selected: {}\n  counterexample: {}\n", m.label, m.source_expr, m.selected_expr, m.counterexample));
        }
        for u in &self.unknown {
            s.push_str(&format!("validate: NOT VALIDATED {} (solver: {})\n  source:   {}\n  selected: {}\n", u.label, u.why, u.source_expr, u.selected_expr));
        }
        for e in &self.errors {
            s.push_str(&format!("validate: INTERNAL ERROR {}: {}\n", e.label, e.message));
        }
        if self.slowest.first().is_some_and(|(_, t)| *t >= 1.0) {
            let each: Vec<String> = self.slowest.iter().map(|(l, t)| format!("{l} {t:.2} s")).collect();
            s.push_str(&format!("validate: slowest roots: {}\n", each.join("; ")));
        }
        s.push_str(&self.line());
        s.push('\n');
        s
    }

    /// Adds `other`'s roots, labels prefixed with `prefix` (e.g. a function name).
    pub fn absorb(&mut self, prefix: &str, other: ValidationReport) {
        let name = |l: String| if prefix.is_empty() { l } else { format!("{prefix}: {l}") };
        self.roots += other.roots;
        self.proved += other.proved;
        self.trivial += other.trivial;
        self.mismatches.extend(other.mismatches.into_iter().map(|m| Mismatch { label: name(m.label), ..m }));
        self.unknown.extend(other.unknown.into_iter().map(|u| Undecided { label: name(u.label), ..u }));
        self.errors.extend(other.errors.into_iter().map(|e| InternalError { label: name(e.label), ..e }));
        self.secs += other.secs;
        self.slowest.extend(other.slowest.into_iter().map(|(l, t)| (name(l), t)));
        self.slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
        self.slowest.truncate(SLOWEST);
    }
}

/// Validates every function's selection (as [`crate::c::IselReport::selections`]
/// lists them). The target's and Halide's semantics are loaded
/// ([`Target::load`] of the selection's ISA) only if some root is not
/// trivial, and the time is counted.
pub fn validate_all(selections: &[(String, Selection)], opts: &ValidateOptions) -> ValidationReport {
    let cells: std::collections::BTreeMap<&str, OnceCell<Result<Target, String>>> = selections.iter().map(|(_, s)| (s.isa, OnceCell::new())).collect();
    let mut r = ValidationReport::default();
    for (func, sel) in selections {
        let cell = &cells[sel.isa];
        let target = || cell.get_or_init(|| Target::load(sel.isa)).as_ref().map_err(|e| e.clone());
        r.absorb(if selections.len() > 1 { func } else { "" }, run(&target, sel, opts));
    }
    r
}

/// Validates every root of one selection.
pub fn validate(target: &Target, sel: &Selection, opts: &ValidateOptions) -> ValidationReport {
    run(&|| Ok(target), sel, opts)
}

/// What a root's check needs only when it is not trivial.
type Lazy<'t> = dyn Fn() -> Result<&'t Target, String> + 't;

fn run(target: &Lazy, sel: &Selection, opts: &ValidateOptions) -> ValidationReport {
    let t = Instant::now();
    let mut r = ValidationReport { roots: sel.roots.len(), ..Default::default() };
    for root in &sel.roots {
        let started = Instant::now();
        let verdict = check_root(target, sel, root.source_node, root.node, opts);
        r.slowest.push((root.label.clone(), started.elapsed().as_secs_f64()));
        match verdict {
            Ok(Verdict::Trivial) => {
                r.proved += 1;
                r.trivial += 1;
            }
            Ok(Verdict::Proved) => r.proved += 1,
            Ok(Verdict::Differ(counterexample)) => r.mismatches.push(Mismatch {
                label: root.label.clone(),
                source_expr: render(&sel.source.nodes, root.source_node),
                selected_expr: render(&sel.dag, root.node),
                counterexample,
            }),
            Ok(Verdict::Unknown(why)) => r.unknown.push(Undecided {
                label: root.label.clone(),
                source_expr: render(&sel.source.nodes, root.source_node),
                selected_expr: render(&sel.dag, root.node),
                why,
            }),
            Err(message) => r.errors.push(InternalError { label: root.label.clone(), message }),
        }
    }
    r.slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
    r.slowest.truncate(SLOWEST);
    r.secs = t.elapsed().as_secs_f64();
    r
}

enum Verdict {
    Trivial,
    Proved,
    Differ(String),
    Unknown(String),
}

/// The nodes `root` reaches, children before parents.
fn postorder(nodes: &[Node], root: usize) -> Result<Vec<usize>, String> {
    // 0 unvisited, 1 expanded (its children are being visited), 2 done.
    let mut state = vec![0u8; nodes.len()];
    let mut out = Vec::new();
    let mut stack = vec![(root, false)];
    while let Some((n, expanded)) = stack.pop() {
        let node = nodes.get(n).ok_or_else(|| format!("node {n} does not exist ({} nodes)", nodes.len()))?;
        match (state[n], expanded) {
            (2, _) => {}
            (_, true) => {
                state[n] = 2;
                out.push(n);
            }
            (1, false) => return Err(format!("node {n} is its own operand")),
            _ => {
                state[n] = 1;
                stack.push((n, true));
                stack.extend(node.kids.iter().rev().map(|&k| (k, false)));
            }
        }
    }
    Ok(out)
}

/// Whether the two sides are the same term: both interned into one
/// hash-consed dag land on one node.
fn same_term(a: &[Node], ra: &[usize], b: &[Node], rb: &[usize]) -> bool {
    let mut common = TermDag::default();
    let mut intern = |nodes: &[Node], order: &[usize]| {
        let mut ids: HashMap<usize, usize> = HashMap::new();
        for &n in order {
            let kids = nodes[n].kids.iter().map(|k| ids[k]).collect();
            ids.insert(n, common.add(nodes[n].op.clone(), kids));
        }
        order.last().map(|n| ids[n])
    };
    let x = intern(a, ra);
    x == intern(b, rb)
}

/// The leaves of `order`, by text, with their widths.
fn leaves<'a>(nodes: &'a [Node], order: &[usize]) -> Result<Vec<(&'a str, i64)>, String> {
    let mut out: Vec<(&str, i64)> = Vec::new();
    for &n in order {
        if let Op::Leaf { text, bits } = &nodes[n].op {
            match out.iter().find(|(t, _)| t == text) {
                Some((_, b)) if b != bits => return Err(format!("leaf `{text}` is both {b} and {bits} bits wide")),
                Some(_) => {}
                None => out.push((text, *bits)),
            }
        }
    }
    Ok(out)
}

/// A node replaced by (bits `hi..=lo` of) an operand when a side is built.
#[derive(Clone, Copy, Debug)]
struct Cut {
    operand: u16,
    bits: Option<(u32, u32)>,
}

/// One side as verifier parts: `order`'s nodes, leaves as the operands `vars`
/// numbers, each node of `cuts` as what it says (its cone is not built), and
/// the result cut to bits `top` when given.
fn side(target: &Target, nodes: &[Node], order: &[usize], vars: &[(&str, i64)], cuts: &HashMap<usize, Cut>, top: Option<(u32, u32)>) -> Result<Semantics, String> {
    let mut index: HashMap<usize, usize> = HashMap::new();
    let mut parts = Vec::with_capacity(order.len());
    for &n in order {
        let node = &nodes[n];
        let part = if let Some(cut) = cuts.get(&n) {
            match cut.bits {
                None => Part::Operand(cut.operand),
                Some((hi, lo)) => {
                    parts.push(Part::Operand(cut.operand));
                    Part::Slice { kid: parts.len() - 1, hi, lo }
                }
            }
        } else {
            match &node.op {
                Op::Leaf { text, .. } => Part::Operand(vars.iter().position(|(t, _)| t == text).ok_or_else(|| format!("leaf `{text}` is not in the source expression"))? as u16),
                Op::Const { bits, value } => Part::Const(BitVec::from_i128(*bits as u32, *value as i128)),
                op => Part::Apply { name: op.to_string(), sem: semantics(target, op)?, kids: node.kids.iter().map(|k| index[k]).collect() },
            }
        };
        index.insert(n, parts.len());
        parts.push(part);
    }
    if let Some((hi, lo)) = top {
        parts.push(Part::Slice { kid: parts.len() - 1, hi, lo });
    }
    let widths: Vec<u32> = vars.iter().map(|(_, b)| *b as u32).collect();
    compose(&widths, &parts, parts.len() - 1)
}

/// The semantics of an x86 or Halide node.
fn semantics(target: &Target, op: &Op) -> Result<Arc<Semantics>, String> {
    match op {
        Op::Instr { name } => target.instrs.get(name).map(|(_, sem)| sem.clone()).ok_or_else(|| format!("no {} spec `{name}`", target.isa)),
        Op::Halide { name, generics } => {
            let g: Vec<i128> = generics.iter().map(|&g| g as i128).collect();
            target.halide.instantiate(name, &g).map(|(_, sem)| sem).map_err(|d| format!("no semantics for `{op}`: {}", d.message))
        }
        Op::Leaf { .. } | Op::Const { .. } => Err(format!("`{op}` has no semantics")),
    }
}

fn check_root(target: &Lazy, sel: &Selection, source: usize, selected: usize, opts: &ValidateOptions) -> Result<Verdict, String> {
    let src_order = postorder(&sel.source.nodes, source).map_err(|e| format!("source: {e}"))?;
    let sel_order = postorder(&sel.dag, selected).map_err(|e| format!("selected: {e}"))?;
    if same_term(&sel.source.nodes, &src_order, &sel.dag, &sel_order) {
        return Ok(Verdict::Trivial);
    }
    let target = target().map_err(|e| format!("cannot load the semantics: {e}"))?;
    let vars = leaves(&sel.source.nodes, &src_order)?;
    for (text, bits) in leaves(&sel.dag, &sel_order)? {
        match vars.iter().find(|(t, _)| *t == text) {
            None => return Err(format!("the selected DAG reads leaf `{text}`, which the source expression does not")),
            Some((_, b)) if *b != bits => return Err(format!("leaf `{text}` is {b} bits in the source and {bits} in the selected DAG")),
            Some(_) => {}
        }
    }
    if let Some(verdict) = cuts::prove_by_cuts(target, sel, &src_order, &sel_order, &vars, opts) {
        return Ok(verdict);
    }
    let none = HashMap::new();
    let a = side(target, &sel.source.nodes, &src_order, &vars, &none, None).map_err(|e| format!("source: {e}"))?;
    let b = side(target, &sel.dag, &sel_order, &vars, &none, None).map_err(|e| format!("selected: {e}"))?;
    if a.result_width != b.result_width {
        return Err(format!("the source is {} bits wide and the selected DAG {}", a.result_width, b.result_width));
    }
    Ok(match check_equal(&a, &b, opts.budget, opts.cases, opts.seed) {
        Equivalence::Proved => Verdict::Proved,
        Equivalence::Differ(ops) => {
            let mut s: Vec<String> = vars.iter().zip(&ops).map(|((t, _), v)| format!("{t} = {}", v.to_hex())).collect();
            let hex = |x: &Semantics| x.eval(&ops).map(|v| v.to_hex()).unwrap_or_else(|e| format!("<{e}>"));
            let (x, y) = (hex(&a), hex(&b));
            if x == y {
                // Z3's encoding and the evaluator disagree: still a failure.
                s.push("(the evaluator finds both equal here: an encoder bug)".into());
            }
            s.push(format!("source = {x}"));
            s.push(format!("selected = {y}"));
            Verdict::Differ(s.join(", "))
        }
        Equivalence::Unknown(why) => Verdict::Unknown(why),
    })
}

/// The term at `root` as text (leaves by their text), cut at [`EXPR_CHARS`].
pub fn render(nodes: &[Node], root: usize) -> String {
    fn go(nodes: &[Node], n: usize, out: &mut String) {
        if out.len() > EXPR_CHARS {
            return;
        }
        let Some(node) = nodes.get(n) else {
            out.push_str(&format!("<node {n}?>"));
            return;
        };
        match &node.op {
            Op::Leaf { text, .. } => out.push_str(text),
            op => out.push_str(&op.to_string()),
        }
        if !node.kids.is_empty() {
            out.push('(');
            for (i, &k) in node.kids.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                go(nodes, k, out);
            }
            out.push(')');
        }
    }
    let mut s = String::new();
    go(nodes, root, &mut s);
    if s.len() > EXPR_CHARS {
        let mut cut = EXPR_CHARS;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str(" …");
    }
    s
}
