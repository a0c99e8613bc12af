//! Iterative deepening of the target side, for the Halide heads depth 1
//! left without a rule (issue 31). A target whose pool stops at depth 1
//! (HVX: its 1024-bit evaluations make a full depth-2 product too dear)
//! has ops with no one-instruction lowering, such as a 32-bit multiply or
//! a rounding high-half multiply, that two instructions do. For each unit,
//! the one-op Halide terms over all its variables that no proved rule
//! covers are the heads; only for them is a second level built, and only
//! in one shape: an instruction whose result has the head's width and
//! lanes (its lane facts), reading one depth-1 term that the relevance
//! sets or lane widths relate to it, every other operand a variable or an
//! immediate (an accumulator fed by a product, a correction added to a
//! result). Each application is first evaluated on a few probe cases and
//! compared with the heads' values there; only the survivors are
//! evaluated on every case, and those whose low bits meet a head's go to
//! the same checks and proof as a depth-1 match, fewest instructions
//! first. Nothing here names an instruction or an op: the heads are what
//! the unit's own enumeration left uncovered, the shape is a property of
//! terms, and the filters are lane widths and relevance.

use super::halide::HPool;
use super::inputs::fingerprint;
use super::terms::{XArg, XEntry, XInstr, XLimits, XNode, XPool};
use misaal_isa::BitVec;
use rayon::prelude::*;
use std::collections::HashMap;

/// Probe cases evaluated before the rest: the last ones, which are random
/// tuples (the first are edge patterns, which many terms share).
const PROBES: usize = 4;

/// What the search found: a pool holding the variables, the inner terms
/// and the depth-2 terms (values recomputed from the variables on demand),
/// the candidates per head (Halide entry, pool entries in the order to
/// try), and how many applications were probed.
pub struct Deepened {
    pub pool: XPool,
    pub candidates: Vec<(u32, Vec<u32>)>,
    pub probed: usize,
}

/// Values of a depth-1 entry `e` (its operands are variables or
/// immediates) on the cases `which` of `inputs`.
fn eval_depth1(ins: &XInstr, args: &[XArg], inputs: &[Vec<BitVec>], which: &[usize]) -> Option<Vec<BitVec>> {
    which
        .iter()
        .map(|&c| {
            let ops: Vec<BitVec> = args
                .iter()
                .zip(&ins.params)
                .map(|(a, &(_, w))| match a {
                    XArg::Term(t) => Some(inputs[c][*t as usize].clone()),
                    XArg::Imm(v) => Some(BitVec::from_i128(w, *v)),
                })
                .collect::<Option<_>>()?;
            ins.sem.eval(&ops).ok()
        })
        .collect()
}

/// `heads`: Halide entries of `hp` (reduced lanes, values stored) to find
/// two-instruction terms for; `xp` the depth-1 pool over `arity`
/// variables of `var_bits`; `full` its inputs.
#[allow(clippy::too_many_arguments)]
pub fn search(hp: &HPool, heads: &[u32], xp: &XPool, full: &[Vec<BitVec>], arity: usize, relevant: &dyn Fn(&str, &str) -> bool, limits: &XLimits, max_tries: usize) -> Deepened {
    let scale = limits.lane_scale;
    let all_vars = (1u8 << arity) - 1;
    let cases = full.len();
    let probes: Vec<usize> = (cases.saturating_sub(PROBES)..cases).collect();
    // Heads by (register width, low bits on the probes), and by their
    // fingerprint on every case.
    let low = |v: &BitVec| v.truncate(v.width() / 2 / scale);
    let mut by_probe: HashMap<(u32, u64), Vec<usize>> = HashMap::new();
    for (k, &h) in heads.iter().enumerate() {
        let e = &hp.entries[h as usize];
        let p: Vec<BitVec> = probes.iter().map(|&c| e.vals[c].clone()).collect();
        by_probe.entry((e.ty.width() * scale, fingerprint(&p))).or_default().push(k);
    }
    let head_bits: Vec<u32> = heads.iter().map(|&h| hp.entries[h as usize].ty.bits).collect();
    let widths: Vec<u32> = heads.iter().map(|&h| hp.entries[h as usize].ty.width() * scale).collect();

    // Inner terms: depth-1 instruction terms over the variables.
    let inner: Vec<u32> = (0..xp.entries.len() as u32)
        .filter(|&i| {
            let e = &xp.entries[i as usize];
            e.depth == 1 && e.cost == 1 && matches!(&e.node, XNode::Instr { args, .. } if args.iter().all(|a| matches!(a, XArg::Term(t) if (*t as usize) < arity) || matches!(a, XArg::Imm(_))))
        })
        .collect();
    let inner_probe: Vec<Option<Vec<BitVec>>> = inner
        .par_iter()
        .map(|&i| {
            let XNode::Instr { instr, args } = &xp.entries[i as usize].node else { return None };
            eval_depth1(&xp.instrs[*instr as usize], args, full, &probes)
        })
        .collect();

    // Applications: (outer instruction, position of the inner term, inner
    // index into `inner`, the other operands).
    let mut apps: Vec<(u32, Vec<XArg>, usize)> = Vec::new();
    for (k, ins) in xp.instrs.iter().enumerate() {
        let w = ins.sem.result_width;
        // Lane facts: the result is one of the heads' registers, in their
        // lanes (or a whole-register operation).
        if !widths.iter().zip(&head_bits).any(|(&hw, &hb)| hw == w && ins.lane_bits.is_none_or(|b| b == hb)) {
            continue;
        }
        let vec_pos: Vec<usize> = ins.params.iter().enumerate().filter(|(_, p)| p.0.is_some()).map(|(i, _)| i).collect();
        for &p in &vec_pos {
            for (n, &t) in inner.iter().enumerate() {
                let te = &xp.entries[t as usize];
                if te.width != ins.params[p].1 || inner_probe[n].is_none() {
                    continue;
                }
                let XNode::Instr { instr: ik, .. } = &te.node else { continue };
                let ii = &xp.instrs[*ik as usize];
                let related = ii.class == ins.class
                    || relevant(&ins.class, &ii.class)
                    || relevant(&ii.class, &ins.class)
                    || ii.lane_bits.is_none()
                    || ins.lane_bits.is_none()
                    || ii.lane_bits == ins.lane_bits;
                if !related {
                    continue;
                }
                // Every other operand: a variable of its width or an immediate.
                let choices: Vec<Vec<XArg>> = ins
                    .params
                    .iter()
                    .zip(&ins.ranges)
                    .enumerate()
                    .map(|(q, (&(vec, w), range))| match vec {
                        _ if q == p => vec![XArg::Term(t)],
                        Some(vw) => (0..arity as u32).filter(|_| vw == limits.var_bits).map(XArg::Term).collect(),
                        None => super::terms::immediate_choices(limits, w, *range),
                    })
                    .collect();
                if choices.iter().any(|c| c.is_empty()) {
                    continue;
                }
                let mut idx = vec![0usize; choices.len()];
                'combos: loop {
                    let args: Vec<XArg> = idx.iter().zip(&choices).map(|(&i, c)| c[i].clone()).collect();
                    let vars = args.iter().enumerate().fold(0u8, |v, (q, a)| match a {
                        XArg::Term(_) if q == p => v | te.vars,
                        XArg::Term(x) => v | (1 << x),
                        XArg::Imm(_) => v,
                    });
                    if vars == all_vars {
                        apps.push((k as u32, args, n));
                    }
                    if super::terms::next_combination(&mut idx, &choices) {
                        continue 'combos;
                    }
                    break;
                }
            }
        }
    }
    let probed = apps.len();

    // The probes: an application survives when its low bits on the probe
    // cases are some head's.
    let eval = |k: u32, args: &[XArg], which: &[usize], inner_vals: &[BitVec]| -> Option<Vec<BitVec>> {
        let ins = &xp.instrs[k as usize];
        which
            .iter()
            .enumerate()
            .map(|(j, &c)| {
                let ops: Vec<BitVec> = args
                    .iter()
                    .zip(&ins.params)
                    .map(|(a, &(_, w))| match a {
                        XArg::Term(t) if *t as usize >= arity => inner_vals[j].clone(),
                        XArg::Term(t) => full[c][*t as usize].clone(),
                        XArg::Imm(v) => BitVec::from_i128(w, *v),
                    })
                    .collect();
                ins.sem.eval(&ops).ok()
            })
            .collect()
    };
    let survivors: Vec<(usize, Vec<usize>)> = apps
        .par_iter()
        .enumerate()
        .filter_map(|(a, (k, args, n))| {
            let iv = inner_probe[*n].as_ref()?;
            let vals = eval(*k, args, &probes, iv)?;
            let lows: Vec<BitVec> = vals.iter().map(low).collect();
            let hs = by_probe.get(&(vals[0].width(), fingerprint(&lows)))?;
            Some((a, hs.clone()))
        })
        .collect();

    // Every case, for the survivors: the low bits must be a head's on all.
    let all: Vec<usize> = (0..cases).collect();
    let head_fp: Vec<u64> = heads.iter().map(|&h| fingerprint(&hp.entries[h as usize].vals)).collect();
    let confirmed: Vec<(usize, Vec<usize>)> = survivors
        .par_iter()
        .filter_map(|(a, hs)| {
            let (k, args, n) = &apps[*a];
            let XNode::Instr { instr, args: iargs } = &xp.entries[inner[*n] as usize].node else { return None };
            let iv = eval_depth1(&xp.instrs[*instr as usize], iargs, full, &all)?;
            let vals = eval(*k, args, &all, &iv)?;
            let fp = fingerprint(&vals.iter().map(low).collect::<Vec<_>>());
            let hs: Vec<usize> = hs.iter().copied().filter(|&h| head_fp[h] == fp).collect();
            (!hs.is_empty()).then_some((*a, hs))
        })
        .collect();

    // The pool the proofs read: the variables, then each confirmed term's
    // inner term and itself.
    let mut pool = XPool { instrs: xp.instrs.clone(), entries: xp.entries[..arity].to_vec(), evaluated: probed, truncated: 0 };
    let mut per_head: Vec<Vec<u32>> = vec![Vec::new(); heads.len()];
    for (a, hs) in confirmed {
        if hs.iter().all(|&h| per_head[h].len() >= max_tries) {
            continue;
        }
        let (k, args, n) = &apps[a];
        let ie = &xp.entries[inner[*n] as usize];
        pool.entries.push(XEntry { vals: Vec::new(), ..ie.clone() });
        let at = pool.entries.len() as u32 - 1;
        let args: Vec<XArg> = args.iter().map(|x| if matches!(x, XArg::Term(t) if *t as usize >= arity) { XArg::Term(at) } else { x.clone() }).collect();
        let vars = args.iter().fold(0u8, |v, x| if let XArg::Term(t) = x { v | pool.entries[*t as usize].vars } else { v });
        let width = xp.instrs[*k as usize].sem.result_width;
        pool.entries.push(XEntry { node: XNode::Instr { instr: *k, args }, width, vals: Vec::new(), low_fp: 0, depth: 2, cost: ie.cost + 1, vars });
        let x = pool.entries.len() as u32 - 1;
        for h in hs {
            if per_head[h].len() < max_tries {
                per_head[h].push(x);
            }
        }
    }
    let candidates = heads.iter().zip(per_head).filter(|(_, xs)| !xs.is_empty()).map(|(&h, xs)| (h, xs)).collect();
    Deepened { pool, candidates, probed }
}
