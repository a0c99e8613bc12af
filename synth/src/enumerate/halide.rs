//! Bottom-up enumeration of typed Halide IR / FPIR terms over a few input
//! variables, evaluated at reduced lanes. Terms equal on every fingerprint
//! input (observational equivalence) keep only the first, cheapest one, so
//! a bigger term is only built from representatives. Commutative operands
//! come in one order and associative chains nest to the left only.

use super::inputs::{FULL_BITS, REDUCED_BITS, fingerprint};
use misaal_isa::{BitVec, Semantics, SpecLibrary};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// A Halide vector type at full lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HTy {
    pub signed: bool,
    pub bits: u32,
    pub lanes: u32,
}

impl HTy {
    pub fn new(signed: bool, bits: u32, lanes: u32) -> HTy {
        HTy { signed, bits, lanes }
    }
    pub fn width(self) -> u32 {
        self.bits * self.lanes
    }
    /// `(u 16 8)`, the rule language's spelling.
    pub fn render(self) -> String {
        format!("({} {} {})", if self.signed { 'i' } else { 'u' }, self.bits, self.lanes)
    }
    /// `u16x8`, for names and comments.
    pub fn short(self) -> String {
        format!("{}{}x{}", if self.signed { 'i' } else { 'u' }, self.bits, self.lanes)
    }
    fn s(self) -> i128 {
        self.signed as i128
    }
    pub fn parse(s: &str) -> Option<HTy> {
        let signed = match s.chars().next()? {
            'i' => true,
            'u' => false,
            _ => return None,
        };
        let (b, l) = s[1..].split_once('x')?;
        let (bits, lanes) = (b.parse().ok()?, l.parse().ok()?);
        (matches!(bits, 8 | 16 | 32 | 64) && lanes > 0 && bits * lanes == FULL_BITS).then_some(HTy { signed, bits, lanes })
    }
}

#[derive(Clone, Debug)]
pub enum HNode {
    Var(usize),
    /// A broadcast constant; only ever an operand where Halide code has a
    /// constant (shift amounts, the `q` of mul_shift_right).
    Const(i128),
    Op { op: &'static str, generics: Vec<i128>, args: Vec<u32> },
}

#[derive(Clone, Debug)]
pub struct HEntry {
    pub node: HNode,
    pub ty: HTy,
    /// Values at reduced lanes, one per fingerprint case.
    pub vals: Vec<BitVec>,
    pub depth: u8,
    /// Ops, not counting casts that only change the type.
    pub size: u8,
    /// Bit k set when variable k occurs.
    pub vars: u8,
}

/// Every term kept, in the order found (cheapest first within a function).
pub struct HPool {
    pub entries: Vec<HEntry>,
    /// Candidate applications evaluated (before deduplication).
    pub evaluated: usize,
    /// New terms left out because a level reached `Limits::per_level`.
    pub cut: usize,
}

/// A candidate application before evaluation.
struct App {
    op: &'static str,
    generics: Vec<i128>,
    args: Vec<u32>,
    ty: HTy,
}

/// Same-type binary ops: (name, commutative, associative).
const BINARY: &[(&str, bool, bool)] = &[
    ("add", true, true),
    ("sub", false, false),
    ("mul", true, true),
    ("min", true, true),
    ("max", true, true),
    ("and", true, true),
    ("or", true, true),
    ("xor", true, true),
    ("saturating_add", true, false),
    ("saturating_sub", false, false),
    ("halving_add", true, false),
    ("halving_sub", false, false),
    ("rounding_halving_add", true, false),
    ("absd", true, false),
];

/// Comparisons, each to a bool vector.
const COMPARISONS: [&str; 6] = ["lt", "le", "gt", "ge", "eq", "ne"];

fn legal(t: HTy, max_bits: u32) -> bool {
    matches!(t.bits, 8 | 16 | 32 | 64) && t.lanes >= 1 && t.width() <= max_bits
}

pub struct Limits {
    pub depth: u8,
    /// Most ops in one term.
    pub max_size: u8,
    /// Most new terms kept per depth level (a deterministic cut, counted in
    /// `HPool::cut`).
    pub per_level: usize,
    /// The widest intermediate vector, in bits at full lanes: twice the
    /// unit for one widening step; four times for the quad dot products
    /// of an accumulator unit (u8 products widened twice, to i32).
    pub max_bits: u32,
    /// Enumerate comparisons (bool vectors: the target has mask registers).
    pub comparisons: bool,
}

impl Limits {
    /// Twice the unit: the default before accumulator units.
    pub fn new(depth: u8, max_size: u8, per_level: usize) -> Limits {
        Limits { depth, max_size, per_level, max_bits: 2 * FULL_BITS, comparisons: false }
    }
}

/// Enumerates terms over variables of `sig` (full-lane types) on the
/// `reduced` inputs (each case: one value per variable, at reduced lanes).
/// Terms of the last depth are only kept when `wanted(type, fingerprint)`
/// says something can match them: nothing is built on them, so the rest
/// would only take memory.
pub fn enumerate(halide: &SpecLibrary, sig: &[HTy], reduced: &[Vec<BitVec>], limits: &Limits, wanted: &dyn Fn(HTy, u64) -> bool) -> HPool {
    /// Applications evaluated at once: bounds the memory their values take.
    const CHUNK: usize = 65_536;
    let mut pool = HPool { entries: Vec::new(), evaluated: 0, cut: 0 };
    let mut seen: HashMap<(HTy, u64), u32> = HashMap::new();
    let mut sems: HashMap<(&'static str, Vec<i128>), Option<Arc<Semantics>>> = HashMap::new();
    for (k, &ty) in sig.iter().enumerate() {
        let vals: Vec<BitVec> = reduced.iter().map(|c| c[k].clone()).collect();
        seen.entry((ty, fingerprint(&vals))).or_insert(pool.entries.len() as u32);
        pool.entries.push(HEntry { node: HNode::Var(k), ty, vals, depth: 0, size: 0, vars: 1 << k });
    }
    let mut consts: HashMap<(HTy, i128), u32> = HashMap::new();
    for d in 1..=limits.depth {
        let last = d == limits.depth;
        let apps = applications(&mut pool, &mut consts, d, limits, reduced.len(), sig.len() as u32);
        let mut added = 0usize;
        let mut apps = apps.into_iter().peekable();
        while apps.peek().is_some() {
            let chunk: Vec<App> = apps.by_ref().take(CHUNK).collect();
            // Resolve each distinct instance once, outside the parallel part.
            let resolved: Vec<Option<Arc<Semantics>>> = chunk
                .iter()
                .map(|a| {
                    sems.entry((a.op, a.generics.clone()))
                        .or_insert_with(|| {
                            let mut g = a.generics.clone();
                            g[2] = g[2] * REDUCED_BITS as i128 / FULL_BITS as i128;
                            halide.instantiate(a.op, &g).ok().map(|(_, s)| s)
                        })
                        .clone()
                })
                .collect();
            let entries = &pool.entries;
            let evaluated: Vec<Option<Vec<BitVec>>> = chunk
                .par_iter()
                .zip(resolved.par_iter())
                .map(|(a, s)| {
                    let s = s.as_ref()?;
                    (0..reduced.len())
                        .map(|c| {
                            let ops: Vec<&BitVec> = a.args.iter().map(|&x| &entries[x as usize].vals[c]).collect();
                            s.eval(&ops).ok()
                        })
                        .collect()
                })
                .collect();
            pool.evaluated += chunk.len();
            for (a, vals) in chunk.into_iter().zip(evaluated) {
                let Some(vals) = vals else { continue };
                // A term constant on every input is never worth a rule.
                if vals.iter().all(|v| *v == vals[0]) {
                    continue;
                }
                let key = (a.ty, fingerprint(&vals));
                if seen.contains_key(&key) {
                    continue;
                }
                seen.insert(key, u32::MAX);
                if last && !wanted(key.0, key.1) {
                    continue;
                }
                if added >= limits.per_level {
                    pool.cut += 1;
                    continue;
                }
                let (mut size, mut vars) = (weight(a.op, &a.generics), 0u8);
                for &x in &a.args {
                    size = size.saturating_add(pool.entries[x as usize].size);
                    vars |= pool.entries[x as usize].vars;
                }
                pool.entries.push(HEntry { node: HNode::Op { op: a.op, generics: a.generics, args: a.args }, ty: a.ty, vals, depth: d, size, vars });
                added += 1;
            }
        }
    }
    pool
}

/// What an op counts for in a term's size: a cast that keeps the element
/// width only changes the type (no instruction), so it counts nothing.
pub fn weight(op: &str, generics: &[i128]) -> u8 {
    if op == "cast" && generics.get(1) == generics.get(4) { 0 } else { 1 }
}

/// A constant operand of type `ty`, made once.
fn constant(pool: &mut HPool, consts: &mut HashMap<(HTy, i128), u32>, ty: HTy, v: i128, cases: usize) -> u32 {
    *consts.entry((ty, v)).or_insert_with(|| {
        let lane = BitVec::from_i128(ty.bits, v);
        let reduced_lanes = ty.lanes * REDUCED_BITS / FULL_BITS;
        let mut word = BitVec::zero(ty.bits * reduced_lanes);
        for l in 0..reduced_lanes {
            for b in 0..ty.bits {
                if lane.bit(b) {
                    word.set_bit(l * ty.bits + b, true);
                }
            }
        }
        pool.entries.push(HEntry { node: HNode::Const(v), ty, vals: vec![word; cases], depth: 0, size: 0, vars: 0 });
        pool.entries.len() as u32 - 1
    })
}

/// Every application at depth `d`: operands of depth below `d`, one of
/// them at `d - 1`, at most `max_size` ops in all.
fn applications(pool: &mut HPool, consts: &mut HashMap<(HTy, i128), u32>, d: u8, limits: &Limits, cases: usize, nvars: u32) -> Vec<App> {
    let n = pool.entries.len();
    // A comparison's bool vector (1-bit lanes) is read by no op here.
    let free: Vec<u32> = (0..n as u32).filter(|&i| !matches!(pool.entries[i as usize].node, HNode::Const(_)) && pool.entries[i as usize].depth < d && pool.entries[i as usize].ty.bits > 1).collect();
    let mut by_ty: HashMap<HTy, Vec<u32>> = HashMap::new();
    for &i in &free {
        by_ty.entry(pool.entries[i as usize].ty).or_default().push(i);
    }
    let e = |i: u32| (pool.entries[i as usize].depth, pool.entries[i as usize].size, pool.entries[i as usize].vars);
    let fits = |args: &[u32]| {
        let deepest = args.iter().map(|&a| e(a).0).max().unwrap_or(0);
        let size: u32 = 1 + args.iter().map(|&a| e(a).1 as u32).sum::<u32>();
        // Only terms over every variable become rules. A variable joins a
        // term through an op (a bare operand, or a subterm that already
        // joins two by an op of its own), so each missing variable needs
        // one more op of the size budget: what cannot get them all is
        // never evaluated.
        let vars = args.iter().fold(0u8, |v, &a| v | e(a).2);
        let missing = nvars.saturating_sub(vars.count_ones());
        // (A reinterpreting cast weighs nothing in the kept term but is
        // counted here, so that chains of them stay bounded.)
        deepest + 1 == d && size <= limits.max_size as u32 && missing <= limits.max_size as u32 - size && (d < limits.depth || missing == 0)
    };
    let is_op = |i: u32, name: &str| matches!(&pool.entries[i as usize].node, HNode::Op { op, .. } if *op == name);
    let mut out = Vec::new();
    let mut with_consts: Vec<(u32, &'static str, Vec<i128>, HTy, i128)> = Vec::new();
    for &x in &free {
        let t = pool.entries[x as usize].ty;
        let g3 = vec![t.s(), t.bits as i128, t.lanes as i128];
        // Unary.
        if fits(&[x]) {
            for op in ["abs", "not"] {
                if op == "abs" && !t.signed {
                    continue;
                }
                let ty = if op == "abs" { HTy::new(false, t.bits, t.lanes) } else { t };
                out.push(App { op, generics: g3.clone(), args: vec![x], ty });
            }
            for bits in [8u32, 16, 32] {
                for signed in [false, true] {
                    let to = HTy::new(signed, bits, t.lanes);
                    if (signed, bits) == (t.signed, t.bits) || !legal(to, limits.max_bits) {
                        continue;
                    }
                    let mut g = g3.clone();
                    g.extend([signed as i128, bits as i128]);
                    out.push(App { op: "cast", generics: g.clone(), args: vec![x], ty: to });
                    // Saturating into a wider type of the same sign is a cast.
                    if bits < t.bits || signed != t.signed {
                        out.push(App { op: "saturating_cast", generics: g, args: vec![x], ty: to });
                    }
                }
            }
            for (op, fs) in [("vector_reduce_add", &[2u32, 4, 8][..]), ("vector_reduce_saturating_add", &[2][..])] {
                for &f in fs {
                    let to = HTy::new(t.signed, t.bits, t.lanes / f);
                    // The reduced instance needs whole lanes too.
                    if !t.lanes.is_multiple_of(f) || !(t.lanes * REDUCED_BITS / FULL_BITS).is_multiple_of(f) {
                        continue;
                    }
                    out.push(App { op, generics: vec![t.s(), t.bits as i128, to.lanes as i128, f as i128], args: vec![x], ty: to });
                }
            }
            for k in [1i128, t.bits as i128 - 1] {
                for op in ["shl", "shr"] {
                    let mut g = g3.clone();
                    g.push(t.s());
                    with_consts.push((x, op, g, t, k));
                }
            }
            let mut g = g3.clone();
            g.push(t.s());
            with_consts.push((x, "rounding_shift_right", g, t, 1));
        }
        // Binary over one type. op(x, x) is an instance of op(x, y), whose
        // rule covers it.
        for &y in by_ty.get(&t).map(|v| v.as_slice()).unwrap_or(&[]) {
            if x == y || !fits(&[x, y]) {
                continue;
            }
            for &(op, comm, assoc) in BINARY {
                if (comm && y < x) || (assoc && is_op(y, op)) {
                    continue;
                }
                let ty = if op == "absd" { HTy::new(false, t.bits, t.lanes) } else { t };
                out.push(App { op, generics: g3.clone(), args: vec![x, y], ty });
            }
            // Comparisons of two variables give a bool vector, N lanes of
            // one bit: a mask register's value. Only variables: a mask is
            // read by no op of the grammar, and a term of several ops is
            // only matched with one instruction, which compares registers.
            if limits.comparisons && matches!(pool.entries[x as usize].node, HNode::Var(_)) && matches!(pool.entries[y as usize].node, HNode::Var(_)) {
                for op in COMPARISONS {
                    out.push(App { op, generics: g3.clone(), args: vec![x, y], ty: HTy::new(false, 1, t.lanes) });
                }
            }
            if t.bits <= 32 {
                let wide = |signed| HTy::new(signed, t.bits * 2, t.lanes);
                if legal(wide(t.signed), limits.max_bits) {
                    if x <= y {
                        out.push(App { op: "widening_add", generics: g3.clone(), args: vec![x, y], ty: wide(t.signed) });
                        let mut g = g3.clone();
                        g.push(t.s());
                        out.push(App { op: "widening_mul", generics: g, args: vec![x, y], ty: wide(t.signed) });
                    }
                    out.push(App { op: "widening_sub", generics: g3.clone(), args: vec![x, y], ty: wide(true) });
                }
            }
            // mul_shift_right(x, y, q): the high half of a product.
            for q in [t.bits as i128 - 1, t.bits as i128] {
                for op in ["mul_shift_right", "rounding_mul_shift_right"] {
                    if y > x {
                        with_consts.push((x, op, vec![y as i128], t, q));
                    }
                }
            }
        }
        // Mixed-sign widening multiply (u8 x i8 and the like).
        if !t.signed && t.bits <= 32 {
            let other = HTy::new(true, t.bits, t.lanes);
            for &y in by_ty.get(&other).map(|v| v.as_slice()).unwrap_or(&[]) {
                let to = HTy::new(true, t.bits * 2, t.lanes);
                if fits(&[x, y]) && legal(to, limits.max_bits) {
                    out.push(App { op: "widening_mul", generics: vec![0, t.bits as i128, t.lanes as i128, 1], args: vec![x, y], ty: to });
                }
            }
        }
        // widen_right_*(wide x, narrow y).
        if t.bits >= 16 {
            let narrow = HTy::new(t.signed, t.bits / 2, t.lanes);
            for &y in by_ty.get(&narrow).map(|v| v.as_slice()).unwrap_or(&[]) {
                if fits(&[x, y]) {
                    for op in ["widen_right_add", "widen_right_sub", "widen_right_mul"] {
                        out.push(App { op, generics: vec![t.s(), narrow.bits as i128, t.lanes as i128], args: vec![x, y], ty: t });
                    }
                }
            }
        }
    }
    // Operands that are constants: a shift amount or mul_shift_right's q.
    for (x, op, extra, t, k) in with_consts {
        let c = constant(pool, consts, t, k, cases);
        if op.ends_with("mul_shift_right") {
            let y = extra[0] as u32;
            out.push(App { op, generics: vec![t.s(), t.bits as i128, t.lanes as i128], args: vec![x, y, c], ty: t });
        } else {
            out.push(App { op, generics: extra, args: vec![x, c], ty: t });
        }
    }
    out
}

/// The rule-language text of entry `i`, with variables named by `name`.
pub fn render(pool: &HPool, i: u32, name: &dyn Fn(usize) -> String) -> String {
    let e = &pool.entries[i as usize];
    match &e.node {
        HNode::Var(k) => name(*k),
        HNode::Const(v) => format!("(broadcast {} {v})", e.ty.render()),
        HNode::Op { op, generics, args } => {
            // A type (S E N) fills the first three generics; integers the rest.
            let ty = format!("({} {} {})", if generics[0] == 1 { 'i' } else { 'u' }, generics[1], generics[2]);
            let mut s = format!("({op} {ty}");
            for g in &generics[3..] {
                s.push_str(&format!(" {g}"));
            }
            for &a in args {
                s.push(' ');
                s.push_str(&render(pool, a, name));
            }
            s.push(')');
            s
        }
    }
}

/// Variables in order of first occurrence (left to right).
pub fn var_order(pool: &HPool, i: u32, out: &mut Vec<usize>) {
    match &pool.entries[i as usize].node {
        HNode::Var(k) if !out.contains(k) => out.push(*k),
        HNode::Op { args, .. } => args.iter().for_each(|&a| var_order(pool, a, out)),
        _ => {}
    }
}

/// Whether a type-only cast is applied to a variable somewhere in term
/// `i`: then the rule with that variable at the cast's type covers it.
pub fn casts_a_variable(pool: &HPool, i: u32) -> bool {
    match &pool.entries[i as usize].node {
        HNode::Op { op, generics, args } => {
            (weight(op, generics) == 0 && matches!(pool.entries[args[0] as usize].node, HNode::Var(_))) || args.iter().any(|&a| casts_a_variable(pool, a))
        }
        _ => false,
    }
}

/// The ops of a term, outermost first, for names and comments.
pub fn ops(pool: &HPool, i: u32, out: &mut Vec<&'static str>) {
    if let HNode::Op { op, args, .. } = &pool.entries[i as usize].node {
        out.push(op);
        args.iter().for_each(|&a| ops(pool, a, out));
    }
}
