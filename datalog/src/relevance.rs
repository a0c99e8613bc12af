//! Relevance sets (MISAAL's Algorithms 1 and 2): for each class R, the
//! classes I whose lane operation appears inside one of R's output lanes, so
//! that enumeration only combines classes that can help build R.
//!
//! A lane is read as a term over its `BvSlices` (the operand bits it reads).
//! Terms are normalised so that spelling does not hide a match: sums,
//! products and bitwise and/or/xor are flattened and their operands sorted
//! (associativity and commutativity), and the relevance DSL's one rewrite
//! turns a signed-to-unsigned saturation into an unsigned saturation of
//! `max(x, 0)`, which is the same function. I is relevant to R when a lane
//! of some member of I matches a subterm of a unique lane of R with I's
//! operand slices bound consistently:
//! - `direct`: every slice of I is bound to a `BvSlice` of R (Algorithm 1);
//! - `generalized`: some are bound to R's intermediate values (Algorithm 2).
//!
//! A sum or product of I may match part of a larger one in R (R adds more
//! terms to I's result): that is what makes `vpmaddwd` relevant to
//! `vpdpwssd`. Lanes are taken once per distinct shape (`UniqueLanes`), which
//! scales R down to its reduction group. The matching is plain Rust; the
//! per-pair verdict (the strongest kind and its witness) is an ascent
//! aggregation.

use crate::classes::ClassSet;
use crate::lanes::analyze;
use ascent::aggregators::min;
use ascent::ascent;
use misaal_isa::dag::{BvOp, CmpOp, Node, NodeId, SatKind};
use misaal_isa::{BitVec, Semantics, SpecLibrary};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

type Id = u32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Term {
    Leaf { operand: u16, lo: u32, hi: u32 },
    Const(BitVec),
    Ext { signed: bool, src: Id },
    Sat { kind: SatKind, src: Id },
    /// Flattened associative-commutative operation, operands sorted.
    Ac(BvOp, Vec<Id>),
    Bin(BvOp, Id, Id),
    Cmp(CmpOp, Id, Id),
    Ite(Id, Id, Id),
    Not(Id),
    Neg(Id),
    Slice { src: Id, lo: u32, hi: u32 },
    DynSlice { src: Id, offset: Id },
    Concat(Id, Id),
}

fn is_ac(op: BvOp) -> bool {
    matches!(op, BvOp::Add | BvOp::Mul | BvOp::And | BvOp::Or | BvOp::Xor)
}

/// Hash-consed normalised terms of one or more lanes of one instruction.
#[derive(Default, Clone, Debug)]
pub struct LaneTerms {
    terms: Vec<Term>,
    widths: Vec<u32>,
    memo: HashMap<(Term, u32), Id>,
}

impl LaneTerms {
    fn add(&mut self, t: Term, width: u32) -> Id {
        if let Some(&id) = self.memo.get(&(t.clone(), width)) {
            return id;
        }
        let id = self.terms.len() as Id;
        self.terms.push(t.clone());
        self.widths.push(width);
        self.memo.insert((t, width), id);
        id
    }

    /// Reads the lane rooted at `root` of `sem`; returns its term.
    pub fn read(&mut self, sem: &Semantics, root: NodeId) -> Id {
        let mut done: HashMap<NodeId, Id> = HashMap::new();
        self.read_node(sem, root, &mut done)
    }

    fn read_node(&mut self, sem: &Semantics, n: NodeId, done: &mut HashMap<NodeId, Id>) -> Id {
        if let Some(&id) = done.get(&n) {
            return id;
        }
        let dag = &sem.dag;
        let w = dag.width(n);
        let mut go = |s: &mut Self, c: NodeId| s.read_node(sem, c, done);
        let id = match *dag.node(n) {
            Node::Operand(i) => self.add(Term::Leaf { operand: i, lo: 0, hi: w - 1 }, w),
            Node::Slice { src, hi, lo } if matches!(dag.node(src), Node::Operand(_)) => {
                let Node::Operand(i) = *dag.node(src) else { unreachable!() };
                self.add(Term::Leaf { operand: i, lo, hi }, w)
            }
            Node::Const(ref c) => self.add(Term::Const(c.clone()), w),
            Node::Slice { src, hi, lo } => {
                let s = go(self, src);
                self.add(Term::Slice { src: s, lo, hi }, w)
            }
            Node::DynSlice { src, offset, .. } => {
                let (s, o) = (go(self, src), go(self, offset));
                self.add(Term::DynSlice { src: s, offset: o }, w)
            }
            Node::Not(a) => {
                let a = go(self, a);
                self.add(Term::Not(a), w)
            }
            Node::Neg(a) => {
                let a = go(self, a);
                self.add(Term::Neg(a), w)
            }
            Node::Bin(op, a, b) if is_ac(op) => {
                let mut args = Vec::new();
                for c in [a, b] {
                    let c = go(self, c);
                    match &self.terms[c as usize] {
                        Term::Ac(o, inner) if *o == op && self.widths[c as usize] == w => args.extend(inner.iter().copied()),
                        _ => args.push(c),
                    }
                }
                args.sort_unstable();
                self.add(Term::Ac(op, args), w)
            }
            Node::Bin(op, a, b) => {
                let (a, b) = (go(self, a), go(self, b));
                self.add(Term::Bin(op, a, b), w)
            }
            Node::Cmp(op, a, b) => {
                let (a, b) = (go(self, a), go(self, b));
                self.add(Term::Cmp(op, a, b), 1)
            }
            Node::Ite(p, a, b) => {
                let (p, a, b) = (go(self, p), go(self, a), go(self, b));
                self.add(Term::Ite(p, a, b), w)
            }
            Node::Ext { signed, src, .. } => {
                let s = go(self, src);
                self.add(Term::Ext { signed, src: s }, w)
            }
            // The DSL's rewrite: saturating a signed value into an unsigned
            // range is saturating max(x, 0) as unsigned.
            Node::Sat { kind: SatKind::SignedToUnsigned, src, .. } => {
                let s = go(self, src);
                let sw = dag.width(src);
                let zero = self.add(Term::Const(BitVec::zero(sw)), sw);
                let neg = self.add(Term::Cmp(CmpOp::Slt, s, zero), 1);
                let clamped = self.add(Term::Ite(neg, zero, s), sw);
                self.add(Term::Sat { kind: SatKind::Unsigned, src: clamped }, w)
            }
            Node::Sat { kind, src, .. } => {
                let s = go(self, src);
                self.add(Term::Sat { kind, src: s }, w)
            }
            Node::Concat(h, l) => {
                let (h, l) = (go(self, h), go(self, l));
                self.add(Term::Concat(h, l), w)
            }
        };
        done.insert(n, id);
        id
    }

    /// The term as text, operands named by `names`.
    pub fn show(&self, id: Id, names: &[String]) -> String {
        let mut s = String::new();
        self.show_into(id, names, &mut s);
        s
    }

    fn show_into(&self, id: Id, names: &[String], s: &mut String) {
        self.show_leaves(id, names, s, &mut |_| None)
    }

    /// The term as text with some leaves replaced (a pattern whose operand
    /// slices are shown as what they are bound to).
    fn show_with(&self, id: Id, names: &[String], leaf: &mut dyn FnMut(Id) -> Option<String>) -> String {
        let mut s = String::new();
        self.show_leaves(id, names, &mut s, leaf);
        s
    }

    fn show_leaves(&self, id: Id, names: &[String], s: &mut String, leaf: &mut dyn FnMut(Id) -> Option<String>) {
        let w = self.widths[id as usize];
        if let Some(text) = leaf(id) {
            s.push_str(&text);
            return;
        }
        let mut call = |s: &mut String, head: &str, args: &[Id]| {
            let _ = write!(s, "({head}");
            for &a in args {
                s.push(' ');
                self.show_leaves(a, names, s, leaf);
            }
            s.push(')');
        };
        match &self.terms[id as usize] {
            Term::Leaf { operand, lo, hi } => {
                let n = names.get(*operand as usize).map(String::as_str).unwrap_or("?");
                let _ = write!(s, "{n}[{hi}:{lo}]");
            }
            Term::Const(c) => {
                let _ = write!(s, "{}:{w}", c.to_hex());
            }
            Term::Ext { signed, src } => call(s, &format!("{}ext{w}", if *signed { "s" } else { "z" }), &[*src]),
            Term::Sat { kind, src } => call(s, &format!("sat{}{w}", match kind {
                SatKind::Signed => "s",
                SatKind::Unsigned => "u",
                SatKind::SignedToUnsigned => "su",
            }), &[*src]),
            Term::Ac(op, args) => call(s, &format!("{op:?}").to_lowercase(), args),
            Term::Bin(op, a, b) => call(s, &format!("{op:?}").to_lowercase(), &[*a, *b]),
            Term::Cmp(op, a, b) => call(s, &format!("{op:?}").to_lowercase(), &[*a, *b]),
            Term::Ite(p, a, b) => call(s, "ite", &[*p, *a, *b]),
            Term::Not(a) => call(s, "not", &[*a]),
            Term::Neg(a) => call(s, "neg", &[*a]),
            Term::Slice { src, lo, hi } => call(s, &format!("slice{hi}:{lo}"), &[*src]),
            Term::DynSlice { src, offset } => call(s, &format!("dynslice{w}"), &[*src, *offset]),
            Term::Concat(h, l) => call(s, "concat", &[*h, *l]),
        }
    }

    /// A key that names the head of a term, for indexing match roots.
    fn head(&self, id: Id) -> (u8, u32, u32) {
        let w = self.widths[id as usize];
        let (tag, sub) = match &self.terms[id as usize] {
            Term::Leaf { .. } => (0, 0),
            Term::Const(_) => (1, 0),
            Term::Ext { signed, .. } => (2, *signed as u32),
            Term::Sat { kind, .. } => (3, *kind as u32),
            Term::Ac(op, _) => (4, *op as u32),
            Term::Bin(op, ..) => (5, *op as u32),
            Term::Cmp(op, ..) => (6, *op as u32),
            Term::Ite(..) => (7, 0),
            Term::Not(_) => (8, 0),
            Term::Neg(_) => (9, 0),
            Term::Slice { .. } => (10, 0),
            Term::DynSlice { .. } => (11, 0),
            Term::Concat(..) => (12, 0),
        };
        (tag, sub, w)
    }

    /// Whether the term reads an operand and does more than move bits
    /// (slices, concatenations, constants): pure data movement would match
    /// every value of its width and is left to swizzle discovery.
    fn computes(&self, root: Id) -> bool {
        let nodes = self.reachable(root);
        nodes.iter().any(|&n| matches!(self.terms[n as usize], Term::Leaf { .. }))
            && nodes.iter().any(|&n| !matches!(self.terms[n as usize], Term::Leaf { .. } | Term::Const(_) | Term::Slice { .. } | Term::Concat(..)))
    }

    fn reachable(&self, root: Id) -> Vec<Id> {
        let mut seen = vec![false; self.terms.len()];
        let mut stack = vec![root];
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id as usize], true) {
                continue;
            }
            out.push(id);
            stack.extend(self.children(id));
        }
        out.sort_unstable();
        out
    }

    fn children(&self, id: Id) -> Vec<Id> {
        match &self.terms[id as usize] {
            Term::Leaf { .. } | Term::Const(_) => vec![],
            Term::Ext { src, .. } | Term::Sat { src, .. } | Term::Not(src) | Term::Neg(src) | Term::Slice { src, .. } => vec![*src],
            Term::Ac(_, args) => args.clone(),
            Term::Bin(_, a, b) | Term::Cmp(_, a, b) | Term::Concat(a, b) => vec![*a, *b],
            Term::DynSlice { src, offset } => vec![*src, *offset],
            Term::Ite(p, a, b) => vec![*p, *a, *b],
        }
    }
}

/// Pattern leaf -> target term, in binding order (undone by truncation).
type Binds = Vec<(Id, Id)>;

/// Matches pattern term `p` (of `pat`) against target term `t` (of `tgt`),
/// calling `k` on every complete binding until it returns true. `partial`
/// lets a top-level sum or product match a subset of the target's operands.
/// Steps one pattern's match against one target node may take. Matching
/// commutative, associative operands tries their orders, which is
/// exponential in a long sum (ARM's `vaddlvq_s8` adds 16 lanes) or a deep
/// select chain (`vclz_s16`): past the budget that one match fails, and is
/// counted in [`budget_cuts`]. x86's matches stay far below it.
pub const MATCH_STEPS: u64 = 200_000;

thread_local! {
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(MATCH_STEPS) };
}

static CUTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Matches abandoned at the step budget since the process started.
pub fn budget_cuts() -> usize {
    CUTS.load(std::sync::atomic::Ordering::Relaxed)
}

fn matches(pat: &LaneTerms, p: Id, tgt: &LaneTerms, t: Id, partial: bool, b: &mut Binds, k: &mut dyn FnMut(&Binds) -> bool) -> bool {
    let left = STEPS.with(|c| {
        let v = c.get().saturating_sub(1);
        c.set(v);
        v
    });
    if left == 0 {
        return false;
    }
    if pat.widths[p as usize] != tgt.widths[t as usize] {
        return false;
    }
    let mark = b.len();
    let found = match (&pat.terms[p as usize], &tgt.terms[t as usize]) {
        (Term::Leaf { .. }, _) => match b.iter().find(|(x, _)| *x == p) {
            Some(&(_, bound)) => bound == t && k(b),
            None => {
                b.push((p, t));
                k(b)
            }
        },
        (Term::Const(x), Term::Const(y)) => x == y && k(b),
        (Term::Ext { signed: s1, src: a }, Term::Ext { signed: s2, src: c }) if s1 == s2 => matches(pat, *a, tgt, *c, false, b, k),
        (Term::Sat { kind: k1, src: a }, Term::Sat { kind: k2, src: c }) if k1 == k2 => matches(pat, *a, tgt, *c, false, b, k),
        (Term::Not(a), Term::Not(c)) | (Term::Neg(a), Term::Neg(c)) => matches(pat, *a, tgt, *c, false, b, k),
        (Term::Slice { src: a, lo: l1, hi: h1 }, Term::Slice { src: c, lo: l2, hi: h2 }) if (l1, h1) == (l2, h2) => {
            matches(pat, *a, tgt, *c, false, b, k)
        }
        (Term::Ac(o1, ps), Term::Ac(o2, ts)) if o1 == o2 && (ps.len() == ts.len() || (partial && ps.len() < ts.len())) => {
            let mut used = vec![false; ts.len()];
            match_ac(pat, ps, tgt, ts, &mut used, b, k)
        }
        (Term::Bin(o1, a1, a2), Term::Bin(o2, c1, c2)) if o1 == o2 => match2(pat, [*a1, *a2], tgt, [*c1, *c2], b, k),
        (Term::Cmp(o1, a1, a2), Term::Cmp(o2, c1, c2)) if o1 == o2 => match2(pat, [*a1, *a2], tgt, [*c1, *c2], b, k),
        (Term::Concat(a1, a2), Term::Concat(c1, c2)) => match2(pat, [*a1, *a2], tgt, [*c1, *c2], b, k),
        (Term::DynSlice { src: a1, offset: a2 }, Term::DynSlice { src: c1, offset: c2 }) => match2(pat, [*a1, *a2], tgt, [*c1, *c2], b, k),
        (Term::Ite(p1, a1, a2), Term::Ite(q1, c1, c2)) => matches(pat, *p1, tgt, *q1, false, b, &mut |b2| {
            let mut b3 = b2.clone();
            match2(pat, [*a1, *a2], tgt, [*c1, *c2], &mut b3, k)
        }),
        _ => false,
    };
    b.truncate(mark);
    found
}

/// Matches two pattern operands against two target operands, in order.
fn match2(pat: &LaneTerms, p: [Id; 2], tgt: &LaneTerms, t: [Id; 2], b: &mut Binds, k: &mut dyn FnMut(&Binds) -> bool) -> bool {
    matches(pat, p[0], tgt, t[0], false, b, &mut |b2| {
        let mut b3 = b2.clone();
        matches(pat, p[1], tgt, t[1], false, &mut b3, k)
    })
}

/// Assigns each pattern operand of an AC term to a distinct target operand.
fn match_ac(pat: &LaneTerms, ps: &[Id], tgt: &LaneTerms, ts: &[Id], used: &mut Vec<bool>, b: &mut Binds, k: &mut dyn FnMut(&Binds) -> bool) -> bool {
    let Some((&first, rest)) = ps.split_first() else { return k(b) };
    for j in 0..ts.len() {
        if used[j] {
            continue;
        }
        used[j] = true;
        let mut used2 = used.clone();
        let hit = matches(pat, first, tgt, ts[j], false, b, &mut |b2| {
            let mut b3 = b2.clone();
            match_ac(pat, rest, tgt, ts, &mut used2, &mut b3, k)
        });
        used[j] = false;
        if hit {
            return true;
        }
    }
    false
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RelevanceKind {
    /// Every operand slice of I is bound to a BvSlice of R.
    Direct,
    /// Some operand slice of I is bound to an intermediate value of R.
    Generalized,
}

impl RelevanceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RelevanceKind::Direct => "direct",
            RelevanceKind::Generalized => "generalized",
        }
    }
}

/// One relevant pair with the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relevance {
    pub class: String,
    pub relevant_class: String,
    pub kind: RelevanceKind,
    /// `I-member[lane l] in R-member[lane m]: term` — the subterm of R's lane
    /// that I's lane computes, with R's operand names.
    pub witness: String,
}

ascent! {
    struct Strongest;
    // (R class, I class, kind rank, witness number): one row per lane match.
    relation lane_match(u32, u32, u8, u32);
    relation best_kind(u32, u32, u8);
    best_kind(r, i, k) <-- lane_match(r, i, _, _), agg k = min(k2) in lane_match(r, i, k2, _);
    relation best(u32, u32, u8, u32);
    best(r, i, k, w) <-- best_kind(r, i, k), agg w = min(w2) in lane_match(r, i, k, w2);
}

struct Pattern {
    class: u32,
    member: String,
    lane: u32,
    terms: LaneTerms,
    root: Id,
}

/// The relevance sets of every class in `set`, whose members come from
/// `lib`. Pure data movement (lanes of slices, concatenations and
/// constants) is left to swizzle discovery: it would match every value of
/// its width.
pub fn relevance(lib: &SpecLibrary, set: &ClassSet) -> Vec<Relevance> {
    // Each member's unique lanes, read as terms.
    let members: Vec<(u32, &misaal_isa::Instr, &Semantics)> = set
        .classes
        .iter()
        .enumerate()
        .flat_map(|(c, cl)| cl.members.iter().filter_map(move |m| lib.get(&m.instr.name).map(|(i, s)| (c as u32, i.as_ref(), s.as_ref()))))
        .collect();
    let pairs: Vec<(&misaal_isa::Instr, &Semantics)> = members.iter().map(|(_, i, s)| (*i, *s)).collect();
    let facts = analyze(&pairs).facts;
    let mut patterns: Vec<Pattern> = Vec::new();
    let mut seen: HashSet<(u32, String)> = HashSet::new();
    let mut targets: Vec<(u32, String, Vec<String>, u32, LaneTerms, Id)> = Vec::new();
    for ((class, instr, sem), f) in members.iter().zip(&facts) {
        let names: Vec<String> = instr.params.iter().map(|p| p.name.clone()).collect();
        for &lane in &f.unique_lanes {
            let mut terms = LaneTerms::default();
            let root = terms.read(sem, sem.lanes[lane as usize].root);
            // One pattern per distinct lane term of a class (positions renamed away).
            let key = terms.show(root, &[]);
            if !terms.computes(root) {
                targets.push((*class, instr.name.clone(), names.clone(), lane, terms, root));
                continue;
            }
            if seen.insert((*class, key)) {
                patterns.push(Pattern { class: *class, member: instr.name.clone(), lane, terms: terms.clone(), root });
            }
            targets.push((*class, instr.name.clone(), names.clone(), lane, terms, root));
        }
    }
    // Index patterns by the head of their root.
    let mut by_head: HashMap<(u8, u32, u32), Vec<usize>> = HashMap::new();
    for (k, p) in patterns.iter().enumerate() {
        by_head.entry(p.terms.head(p.root)).or_default().push(k);
    }
    let mut program = Strongest::default();
    let mut witnesses: Vec<String> = Vec::new();
    let mut found: HashSet<(u32, u32, u8)> = HashSet::new();
    // A lane that reads as the same term as one seen before in its class
    // (`vadd_u8` and `vaddq_u8`, lane after lane) matches the same patterns
    // the same way, and only the first witness of each pair is kept: it
    // is matched once.
    let mut same: HashSet<(u32, String)> = HashSet::new();
    for (rc, rname, names, rlane, t, troot) in &targets {
        if !same.insert((*rc, t.show(*troot, names))) {
            continue;
        }
        let _t0 = std::time::Instant::now();
        for node in t.reachable(*troot) {
            let Some(cands) = by_head.get(&t.head(node)) else { continue };
            for &k in cands {
                let p = &patterns[k];
                // Both kinds of this pair have their witness already: a
                // match could add nothing (the first witness of each is kept).
                if p.class == *rc || (found.contains(&(*rc, p.class, 0)) && found.contains(&(*rc, p.class, 1))) {
                    continue;
                }
                let mut best: Option<(RelevanceKind, Binds)> = None;
                let mut b = Binds::new();
                STEPS.with(|c| c.set(MATCH_STEPS));
                matches(&p.terms, p.root, t, node, true, &mut b, &mut |binds| {
                    let direct = binds.iter().all(|(_, v)| matches!(t.terms[*v as usize], Term::Leaf { .. }));
                    let here = if direct { RelevanceKind::Direct } else { RelevanceKind::Generalized };
                    if best.as_ref().is_none_or(|(k0, _)| here < *k0) {
                        best = Some((here, binds.clone()));
                    }
                    direct
                });
                if STEPS.with(|c| c.get()) == 0 {
                    CUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                let Some((kind, binds)) = best else { continue };
                let rank = kind as u8;
                // The first witness of each (R, I, kind) in member order.
                if !found.insert((*rc, p.class, rank)) {
                    continue;
                }
                let w = witnesses.len() as u32;
                let pnames: Vec<String> = Vec::new();
                let text = p.terms.show_with(p.root, &pnames, &mut |leaf| binds.iter().find(|(x, _)| *x == leaf).map(|(_, v)| t.show(*v, names)));
                witnesses.push(format!("{}[lane {}] in {rname}[lane {rlane}]: {text}", p.member, p.lane));
                program.lane_match.push((*rc, p.class, rank, w));
            }
        }
        if std::env::var_os("MISAAL_RELEVANCE_SLOW").is_some() && _t0.elapsed().as_secs_f64() > 0.5 {
            eprintln!("slow target {rname}[{rlane}] {:.1}s nodes {}", _t0.elapsed().as_secs_f64(), t.reachable(*troot).len());
        }
    }
    program.run();
    let mut out: Vec<Relevance> = program
        .best
        .iter()
        .map(|&(r, i, k, w)| Relevance {
            class: set.classes[r as usize].name.clone(),
            relevant_class: set.classes[i as usize].name.clone(),
            kind: if k == 0 { RelevanceKind::Direct } else { RelevanceKind::Generalized },
            witness: witnesses[w as usize].clone(),
        })
        .collect();
    out.sort_by(|a, b| (&a.class, &a.relevant_class).cmp(&(&b.class, &b.relevant_class)));
    out
}
