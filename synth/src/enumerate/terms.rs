//! Bottom-up enumeration of target instruction terms (x86, ARM NEON, HVX:
//! whatever the [`crate::target::SynthTarget`] describes) over
//! register-wide inputs, on full vectors. Depth 1 applies every verified
//! instruction to the inputs (immediates from the target's small set); depth 2 applies an instruction to depth-1
//! terms, but only where the relevance sets or the lane types say the two
//! can meet: the inner instruction's class is relevant to the outer's (or
//! the other way round), they are of one class, they work on lanes of one
//! width, or one is a whole-register (bitwise) operation; and two inner
//! instructions are one instruction or read the same inputs. Operands of an
//! instruction found commutative on the fingerprint inputs come in one
//! order. Terms equal on every input keep the first (fewest instructions).

use super::inputs::fingerprint;
use misaal_isa::ast::Ty;
use misaal_isa::{BitVec, Semantics};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::target::SynthTarget;

/// One usable instruction.
#[derive(Clone)]
pub struct XInstr {
    pub name: String,
    pub class: String,
    pub sem: Arc<Semantics>,
    /// Per parameter: `Some(width)` for a vector operand, `None` for an immediate.
    pub params: Vec<(Option<u32>, u32)>,
    /// Per parameter: the values an immediate may take, where its spec
    /// declares fewer than its width holds (`n: imm4 in 1 to 8`).
    pub ranges: Vec<Option<(u64, u64)>>,
    /// Output lane width when all lanes are one width and there are several;
    /// `None` for whole-register operations.
    pub lane_bits: Option<u32>,
}

#[derive(Clone, Debug)]
pub enum XArg {
    Term(u32),
    Imm(i128),
}

#[derive(Clone, Debug)]
pub enum XNode {
    Var(usize),
    Instr { instr: u32, args: Vec<XArg> },
}

#[derive(Clone, Debug)]
pub struct XEntry {
    pub node: XNode,
    pub width: u32,
    /// Full-width values, one per fingerprint case; empty at the last depth,
    /// where no term is built on them (see [`values`]), to save memory.
    pub vals: Vec<BitVec>,
    /// Fingerprint of the low half of each value: what a Halide term at
    /// reduced lanes is compared with.
    pub low_fp: u64,
    pub depth: u8,
    /// Instructions in the term.
    pub cost: u8,
    pub vars: u8,
}

pub struct XPool {
    pub instrs: Vec<XInstr>,
    pub entries: Vec<XEntry>,
    pub evaluated: usize,
    /// Depth-2 applications left out because the cap was reached.
    pub truncated: usize,
}

/// Instructions the enumeration can use: vector operands and results of
/// the target's operand widths (x86 128 or 256 bits, ARM 64 or 128, HVX
/// 1024 or a 2048-bit pair) and immediates, no masks; on ARM and HVX a
/// scalar operand (`vdup_n_u8`'s, HVX's `Rt`) takes an immediate's
/// values. `class_of` names each one's class.
pub fn usable(lib: &misaal_isa::SpecLibrary, class_of: &dyn Fn(&str) -> Option<String>, target: &SynthTarget) -> Vec<XInstr> {
    let mut out = Vec::new();
    let widths = target.operand_widths;
    for (i, s) in lib.iter() {
        let mut params = Vec::new();
        let mut ok = true;
        for p in &i.params {
            match p.ty {
                Ty::Bv(w) if widths.contains(&w) => params.push((Some(w), w)),
                Ty::Imm(w) => params.push((None, w)),
                Ty::Bv(w) if target.scalar_operands && w <= 32 => params.push((None, w)),
                _ => ok = false,
            }
        }
        // A mask result (a comparison into a mask register) is a term of
        // its own; no instruction here reads one.
        let mask_result = target.mask_results && matches!(i.ret, Ty::Mask(_));
        if !ok || params.is_empty() || (target.scalar_operands && !params.iter().any(|p| p.0.is_some())) || !(widths.contains(&s.result_width) || mask_result) {
            continue;
        }
        let lane_bits = {
            let w = s.lanes[0].width;
            (s.lanes.len() > 1 && s.lanes.iter().all(|l| l.width == w)).then_some(w)
        };
        let class = class_of(&i.name).unwrap_or_else(|| i.name.clone());
        let ranges = i.params.iter().map(|p| p.range).collect();
        out.push(XInstr { name: i.name.clone(), class, sem: s.clone(), params, ranges, lane_bits });
    }
    // Of two instructions equal on every input only the first is kept in
    // the pool, so x86's come widest family first: the form that exists at
    // every register width (`_mm{,256,512}_dpbusd_epi32`) rather than a
    // twin that stops at 256 bits, whose rule could not abstract to 512.
    if target.names() == crate::target::NameStyle::X86 {
        let width = crate::legalize::family_width(lib);
        // Yet an instruction an AVX2 CPU has comes before its AVX-512VL
        // twin (`vbroadcasti128` before `vbroadcasti32x4`): the rule is
        // then usable on both kinds of CPU.
        let beyond = |n: &str| lib.instr(n).is_some_and(|i| i.features.iter().any(|f| crate::legalize::beyond_avx2(f)));
        out.sort_by_key(|x| (beyond(&x.name), std::cmp::Reverse(width(&x.name))));
    }
    out
}

pub struct XLimits<'a> {
    pub depth: u8,
    /// Width of the input variables (one register).
    pub var_bits: u32,
    /// A term's low `width / (2 * lane_scale)` bits are what a Halide
    /// term at reduced lanes is compared with.
    pub lane_scale: u32,
    pub immediates: &'a [i128],
    /// Pair-valued terms also tried with their halves shuffled (HVX).
    pub pair_shuffle: Option<&'a crate::target::PairShuffle>,
    /// Most depth-2 applications evaluated (a deterministic cut, reported).
    pub max_apps: usize,
}

/// Enumerates over `arity` register-wide variables on `inputs` (full width).
/// `relevant(outer_class, inner_class)` is the relevance relation.
pub fn enumerate(instrs: Vec<XInstr>, inputs: &[Vec<BitVec>], arity: usize, relevant: &dyn Fn(&str, &str) -> bool, limits: &XLimits) -> XPool {
    let mut pool = XPool { instrs, entries: Vec::new(), evaluated: 0, truncated: 0 };
    let mut seen: HashSet<(u32, u64)> = HashSet::new();
    for k in 0..arity {
        let vals: Vec<BitVec> = inputs.iter().map(|c| c[k].clone()).collect();
        seen.insert((limits.var_bits, fingerprint(&vals)));
        let low_fp = low_fingerprint(&vals, limits.lane_scale);
        pool.entries.push(XEntry { node: XNode::Var(k), width: limits.var_bits, vals, depth: 0, cost: 0, vars: 1 << k, low_fp });
    }
    let mut commutative: HashSet<u32> = HashSet::new();
    for d in 1..=limits.depth {
        let mut apps: Vec<(u32, Vec<XArg>)> = Vec::new();
        let n = pool.entries.len() as u32;
        for (k, ins) in pool.instrs.iter().enumerate() {
            let k = k as u32;
            // Choices per parameter.
            let choices: Vec<Vec<XArg>> = ins
                .params
                .iter()
                .zip(&ins.ranges)
                .map(|(&(vec, w), range)| match vec {
                    Some(vw) => (0..n)
                        .filter(|&t| {
                            let e = &pool.entries[t as usize];
                            e.width == vw
                                && e.depth < d
                                && match &e.node {
                                    XNode::Var(_) => true,
                                    XNode::Instr { instr, .. } => {
                                        let inner = &pool.instrs[*instr as usize];
                                        inner.class == ins.class
                                            || relevant(&ins.class, &inner.class)
                                            || relevant(&inner.class, &ins.class)
                                            || inner.lane_bits.is_none()
                                            || ins.lane_bits.is_none()
                                            || inner.lane_bits == ins.lane_bits
                                    }
                                }
                        })
                        .map(XArg::Term)
                        .collect(),
                    None => immediate_choices(limits, w, *range),
                })
                .collect();
            if choices.iter().any(|c| c.is_empty()) {
                continue;
            }
            let two_vectors: Vec<usize> = ins.params.iter().enumerate().filter(|(_, p)| p.0.is_some()).map(|(i, _)| i).collect();
            let mut idx = vec![0usize; choices.len()];
            'combos: loop {
                let args: Vec<XArg> = idx.iter().zip(&choices).map(|(&i, c)| c[i].clone()).collect();
                let terms: Vec<u32> = args.iter().filter_map(|a| if let XArg::Term(t) = a { Some(*t) } else { None }).collect();
                let deepest = terms.iter().map(|&t| pool.entries[t as usize].depth).max().unwrap_or(0);
                let ordered = !(commutative.contains(&k) && two_vectors.len() == 2 && terms.len() == 2 && terms[0] > terms[1]);
                if deepest + 1 == d && ordered && siblings(&pool, &terms) {
                    if d >= 2 && apps.len() >= limits.max_apps {
                        pool.truncated += 1;
                    } else {
                        apps.push((k, args));
                    }
                }
                if next_combination(&mut idx, &choices) {
                    continue 'combos;
                }
                break;
            }
        }
        let cases = inputs.len();
        pool.evaluated += apps.len();
        let mut by_args: HashMap<(u32, Vec<u32>), u64> = HashMap::new();
        let mut apps = apps.into_iter().peekable();
        // In chunks, so that the values of all applications are never held at once.
        while apps.peek().is_some() {
            let chunk: Vec<(u32, Vec<XArg>)> = apps.by_ref().take(65_536).collect();
            let entries = &pool.entries;
            let instrs = &pool.instrs;
            let evaluated: Vec<Option<Vec<BitVec>>> = chunk
                .par_iter()
                .map(|(k, args)| {
                    let ins = &instrs[*k as usize];
                    (0..cases)
                        .map(|c| {
                            let ops: Vec<BitVec> = args
                                .iter()
                                .zip(&ins.params)
                                .map(|(a, &(_, w))| match a {
                                    XArg::Term(t) => entries[*t as usize].vals[c].clone(),
                                    XArg::Imm(v) => BitVec::from_i128(w, *v),
                                })
                                .collect();
                            ins.sem.eval(&ops).ok()
                        })
                        .collect()
                })
                .collect();
            for ((k, args), vals) in chunk.into_iter().zip(evaluated) {
                let Some(vals) = vals else { continue };
                let fp = fingerprint(&vals);
                let terms: Vec<u32> = args.iter().filter_map(|a| if let XArg::Term(t) = a { Some(*t) } else { None }).collect();
                if d == 1 && args.iter().all(|a| matches!(a, XArg::Term(_))) {
                    by_args.insert((k, terms.clone()), fp);
                }
                if vals.iter().all(|v| *v == vals[0]) {
                    continue;
                }
                let width = vals[0].width();
                if !seen.insert((width, fp)) {
                    continue;
                }
                let mut cost = 1u8;
                let mut vars = 0u8;
                for &t in &terms {
                    cost = cost.saturating_add(pool.entries[t as usize].cost);
                    vars |= pool.entries[t as usize].vars;
                }
                let low_fp = low_fingerprint(&vals, limits.lane_scale);
                let vals = if d == limits.depth { Vec::new() } else { vals };
                pool.entries.push(XEntry { node: XNode::Instr { instr: k, args }, width, vals, depth: d, cost, vars, low_fp });
            }
        }
        if d == 1
            && let Some(ps) = limits.pair_shuffle
        {
            pair_shuffles(&mut pool, ps, inputs, &mut seen, limits);
        }
        // An instruction whose two vector operands swap without changing a
        // value on the inputs is taken as commutative from here on.
        if d == 1 && arity >= 2 {
            for ((k, terms), fp) in &by_args {
                if terms.len() == 2 && terms[0] == 0 && terms[1] == 1 && by_args.get(&(*k, vec![1, 0])) == Some(fp) {
                    commutative.insert(*k);
                }
            }
        }
    }
    pool
}

/// For every pair-valued depth-1 term `x`, `shuffle(hi(x), lo(x), c)` for
/// each control `c`: HVX's widening instructions deal even lanes to the lo
/// register and odd lanes to the hi one, and this puts them back in order
/// (`vshuff` with -2 for halfwords, -4 for words), as the hand rules do.
/// The three instructions count as one level; the halves are entries too.
fn pair_shuffles(pool: &mut XPool, ps: &crate::target::PairShuffle, inputs: &[Vec<BitVec>], seen: &mut HashSet<(u32, u64)>, limits: &XLimits) {
    let find = |n: &str| pool.instrs.iter().position(|i| i.name == n).map(|k| k as u32);
    let (Some(sh), Some(hi), Some(lo)) = (find(ps.shuffle), find(ps.hi), find(ps.lo)) else { return };
    let pair_bits = pool.instrs[hi as usize].params[0].1;
    let ctl_bits = pool.instrs[sh as usize].params.get(2).map(|p| p.1).unwrap_or(32);
    let pairs: Vec<u32> = (0..pool.entries.len() as u32).filter(|&i| pool.entries[i as usize].width == pair_bits && matches!(pool.entries[i as usize].node, XNode::Instr { .. })).collect();
    let keep = limits.depth > 1;
    for x in pairs {
        let Some(xv) = values(pool, x, inputs) else { continue };
        let half = |k: u32| -> Option<Vec<BitVec>> { xv.iter().map(|v| pool.instrs[k as usize].sem.eval(std::slice::from_ref(v)).ok()).collect() };
        let (Some(hv), Some(lv)) = (half(hi), half(lo)) else { continue };
        let shuffled: Vec<(i128, Vec<BitVec>)> = ps
            .controls
            .iter()
            .filter_map(|&c| {
                let vals: Option<Vec<BitVec>> = hv.iter().zip(&lv).map(|(h, l)| pool.instrs[sh as usize].sem.eval(&[h.clone(), l.clone(), BitVec::from_i128(ctl_bits, c)]).ok()).collect();
                vals.map(|v| (c, v))
            })
            .filter(|(_, v)| seen.insert((v[0].width(), fingerprint(v))))
            .collect();
        if shuffled.is_empty() {
            continue;
        }
        let e = pool.entries[x as usize].clone();
        let push = |pool: &mut XPool, node: XNode, vals: Vec<BitVec>, depth: u8, cost: u8| {
            let low_fp = low_fingerprint(&vals, limits.lane_scale);
            let width = vals[0].width();
            pool.entries.push(XEntry { node, width, vals: if keep { vals } else { Vec::new() }, depth, cost, vars: e.vars, low_fp });
            pool.entries.len() as u32 - 1
        };
        let h = push(pool, XNode::Instr { instr: hi, args: vec![XArg::Term(x)] }, hv, e.depth + 1, e.cost + 1);
        let l = push(pool, XNode::Instr { instr: lo, args: vec![XArg::Term(x)] }, lv, e.depth + 1, e.cost + 1);
        for (c, vals) in shuffled {
            push(pool, XNode::Instr { instr: sh, args: vec![XArg::Term(h), XArg::Term(l), XArg::Imm(c)] }, vals, e.depth, e.cost + 3);
        }
    }
}

/// The fingerprint of the bits a Halide term at reduced lanes holds: half
/// of the Halide unit, which is `1 / lane_scale` of the register.
fn low_fingerprint(vals: &[BitVec], lane_scale: u32) -> u64 {
    fingerprint(vals.iter().map(|v| v.truncate(v.width() / 2 / lane_scale)).collect::<Vec<_>>().iter())
}

/// The values of entry `i` on `inputs` (stored or recomputed).
pub fn values(pool: &XPool, i: u32, inputs: &[Vec<BitVec>]) -> Option<Vec<BitVec>> {
    let e = &pool.entries[i as usize];
    if !e.vals.is_empty() {
        return Some(e.vals.clone());
    }
    let XNode::Instr { instr, args } = &e.node else { return None };
    let ins = &pool.instrs[*instr as usize];
    let argv: Vec<Option<Vec<BitVec>>> = args.iter().map(|a| if let XArg::Term(t) = a { values(pool, *t, inputs) } else { None }).collect();
    (0..inputs.len())
        .map(|c| {
            let ops: Vec<BitVec> = args
                .iter()
                .zip(&ins.params)
                .zip(&argv)
                .map(|((a, &(_, w)), v)| match a {
                    XArg::Term(_) => v.as_ref().map(|v| v[c].clone()),
                    XArg::Imm(x) => Some(BitVec::from_i128(w, *x)),
                })
                .collect::<Option<_>>()?;
            ins.sem.eval(&ops).ok()
        })
        .collect()
}

/// Instruction operands of one application: at most one, or all of one
/// instruction (cvt(a) + cvt(b)), or all reading the same inputs
/// (max(a, b) - min(a, b)). Pairs of unrelated inner terms are what makes
/// depth 2 quadratic; these two shapes are the ones lowerings use.
/// The immediates of `limits` a `w`-bit immediate operand allowed `range`
/// can take.
pub(super) fn immediate_choices(limits: &XLimits, w: u32, range: Option<(u64, u64)>) -> Vec<XArg> {
    limits.immediates.iter().filter(|&&v| (w >= 127 || v < (1i128 << w)) && range.is_none_or(|(lo, hi)| v >= lo as i128 && v <= hi as i128)).map(|&v| XArg::Imm(v)).collect()
}

/// Steps `idx` to the next choice of one item per list of `choices`, the
/// last fastest (an odometer); false once every combination was visited.
pub(super) fn next_combination<T>(idx: &mut [usize], choices: &[Vec<T>]) -> bool {
    for p in (0..idx.len()).rev() {
        idx[p] += 1;
        if idx[p] < choices[p].len() {
            return true;
        }
        idx[p] = 0;
    }
    false
}

fn siblings(pool: &XPool, terms: &[u32]) -> bool {
    let inner: Vec<&XEntry> = terms.iter().map(|&t| &pool.entries[t as usize]).filter(|e| matches!(e.node, XNode::Instr { .. })).collect();
    let instr = |e: &XEntry| if let XNode::Instr { instr, .. } = e.node { instr } else { u32::MAX };
    inner.len() < 2 || inner.iter().all(|e| instr(e) == instr(inner[0])) || inner.iter().all(|e| e.vars == inner[0].vars)
}

/// The rule-language text of entry `i`, under rule head `head` (`x86`,
/// `arm`, `hvx`).
pub fn render(pool: &XPool, i: u32, name: &dyn Fn(usize) -> String, head: &str) -> String {
    match &pool.entries[i as usize].node {
        XNode::Var(k) => name(*k),
        XNode::Instr { instr, args } => {
            let mut s = format!("({head} {}", pool.instrs[*instr as usize].name);
            for a in args {
                s.push(' ');
                match a {
                    XArg::Term(t) => s.push_str(&render(pool, *t, name, head)),
                    XArg::Imm(v) => s.push_str(&v.to_string()),
                }
            }
            s.push(')');
            s
        }
    }
}

/// The instructions of a term, outermost first.
pub fn instrs_of(pool: &XPool, i: u32, out: &mut Vec<u32>) {
    if let XNode::Instr { instr, args } = &pool.entries[i as usize].node {
        out.push(*instr);
        for a in args {
            if let XArg::Term(t) = a {
                instrs_of(pool, *t, out);
            }
        }
    }
}
