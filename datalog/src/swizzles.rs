//! Swizzle discovery (MISAAL's swizzle phase, first half): the element
//! permutations that x86 instructions perform or need, read from their lane
//! facts, and folded into classes by the permutation family they belong to.
//!
//! Three sources, each a pattern `out[l] = input_o[e]` at one element width:
//! - `instruction`: a data-movement instruction (no arithmetic) is itself a
//!   swizzle (`vpunpcklbw`, `vpermq`, `vperm2i128`);
//! - `read`: an arithmetic instruction whose output lanes take their inputs
//!   out of order (`vpackuswb` at 256 bits interleaves its two operands per
//!   128-bit lane), so its result needs the inverse to be read in order;
//! - `feed`: a reduction that folds k adjacent elements (`vpmaddwd`,
//!   `vpmaddubsw`, `vphaddw`) needs its operand built from k vectors by the
//!   interleave (or, when it reads per 128-bit lane, the pattern it reads).
//!
//! A class is a permutation family (interleave, deinterleave, block
//! permutation, ...) with its input count, whole-vector or per 128-bit lane;
//! the widths, lane counts and offsets are the class's parameters. Patterns
//! controlled by an immediate (`vpshufd`) are not enumerated per immediate
//! value, and the lowering rules for each class are not synthesized yet.

use crate::lanes::analyze;
use misaal_isa::{Instr, Semantics};
use std::collections::{BTreeMap, BTreeSet};

/// One element of a pattern: input `o`'s element `e`, or a zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Src {
    Elem(u8, u32),
    Zero,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swizzle {
    /// `interleave/2`, `in-lane interleave/2`, `block-permute/1`, ...
    pub class: String,
    pub elem_bits: u32,
    pub inputs: u8,
    /// Output element l reads `pattern[l]`.
    pub pattern: Vec<Src>,
    /// `instruction`, `read` or `feed`, and the first instruction it came from.
    pub role: &'static str,
    pub source: String,
    /// Every instruction that performs or needs this exact pattern.
    pub instructions: Vec<String>,
    /// The data-movement instructions that perform it (role `instruction`).
    pub performers: Vec<String>,
}

impl Swizzle {
    pub fn pattern_text(&self) -> String {
        let names = ["a", "b", "c", "d"];
        self.pattern
            .iter()
            .map(|s| match s {
                Src::Elem(o, e) => format!("{}{e}", names.get(*o as usize).unwrap_or(&"?")),
                Src::Zero => "0".into(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The vector operands an output lane reads: maximal slices, as (operand,
/// lo, hi), for operands that are vectors.
fn lane_reads(slices: &[(String, u32, u32)], vector: &BTreeMap<String, u8>) -> Vec<(u8, u32, u32)> {
    let mut out: Vec<(u8, u32, u32)> = Vec::new();
    for (name, lo, hi) in slices {
        let Some(&o) = vector.get(name) else { continue };
        let inside = slices.iter().any(|(n2, lo2, hi2)| n2 == name && lo2 <= lo && hi <= hi2 && (lo2, hi2) != (lo, hi));
        if !inside {
            out.push((o, *lo, *hi));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Patterns that move nothing: one input in order, or inputs concatenated
/// in order.
fn trivial(p: &[Src]) -> bool {
    let mut expect = (0u8, 0u32);
    let mut per_input = None;
    for s in p {
        let Src::Elem(o, e) = *s else { return false };
        if (o, e) == expect {
            expect.1 += 1;
            continue;
        }
        // The next input starts where the first ended.
        if o == expect.0 + 1 && e == 0 && per_input.is_none_or(|n| n == expect.1) {
            per_input = Some(expect.1);
            expect = (o, 1);
            continue;
        }
        return false;
    }
    true
}

/// The permutation family of a pattern over `inputs` inputs of `n_in`
/// elements each.
fn family(p: &[Src], inputs: u8, n_in: u32) -> Option<String> {
    let n = p.len() as u32;
    let m = inputs as u32;
    if p.iter().all(|s| *s == p[0]) {
        return Some("broadcast".into());
    }
    let flat = |s: Src| match s {
        Src::Elem(o, e) => Some(o as u32 * n_in + e),
        Src::Zero => None,
    };
    // Interleave: out[j*m + i] = input_i[off + j].
    if m >= 2 && n % m == 0 {
        let off = match p[0] {
            Src::Elem(0, e) => e,
            _ => u32::MAX,
        };
        if off != u32::MAX && (0..n).all(|l| p[l as usize] == Src::Elem((l % m) as u8, off + l / m)) {
            return Some("interleave".into());
        }
    }
    // Deinterleave: out[j] = concat(inputs)[j*k + r].
    for k in 2..=4u32 {
        for r in 0..k {
            if (0..n).all(|j| flat(p[j as usize]) == Some(j * k + r)) {
                return Some(format!("deinterleave-by-{k}"));
            }
        }
    }
    // Shift or rotate of the concatenation: out[j] = concat[s + j].
    if let Some(s) = flat(p[0])
        && (0..n).all(|j| flat(p[j as usize]) == Some(s + j))
    {
        return Some("shift".into());
    }
    if (0..n).all(|j| flat(p[j as usize]) == flat(p[(n - 1) as usize]).map(|x| x + (n - 1) - j)) {
        return Some("reverse".into());
    }
    // Blocks of b contiguous elements, moved whole.
    let mut b = n / 2;
    while b >= 2 {
        let blocks_ok = (0..n / b).all(|k| {
            let first = flat(p[(k * b) as usize]);
            first.is_some_and(|f| f % b == 0) && (1..b).all(|i| flat(p[(k * b + i) as usize]) == first.map(|f| f + i))
        });
        if blocks_ok {
            return Some(if m == 1 { "block-permute".into() } else { "block-select".into() });
        }
        b /= 2;
    }
    None
}

/// The family, trying the whole vector first and then each 128-bit lane
/// (indices taken relative to that lane of each input).
fn classify_pattern(p: &[Src], inputs: u8, n_in: u32, elem_bits: u32) -> String {
    if let Some(f) = family(p, inputs, n_in) {
        return format!("{f}/{inputs}");
    }
    let per = 128 / elem_bits.max(1);
    let n = p.len() as u32;
    if elem_bits < 128 && n > per && n % per == 0 && n_in % per == 0 {
        let mut fams = BTreeSet::new();
        for g in 0..n / per {
            let local: Option<Vec<Src>> = p[(g * per) as usize..((g + 1) * per) as usize]
                .iter()
                .map(|s| match *s {
                    Src::Elem(o, e) if e / per == g => Some(Src::Elem(o, e % per)),
                    Src::Zero => Some(Src::Zero),
                    _ => None,
                })
                .collect();
            match local.and_then(|l| family(&l, inputs, per)) {
                Some(f) => {
                    fams.insert(f);
                }
                None => return format!("permute/{inputs}"),
            }
        }
        if fams.len() == 1 {
            return format!("in-lane {}/{inputs}", fams.into_iter().next().expect("one"));
        }
    }
    format!("permute/{inputs}")
}

/// Every swizzle the instructions perform or need, deduplicated by element
/// width and pattern.
pub fn discover(instrs: &[(&Instr, &Semantics)]) -> Vec<Swizzle> {
    let facts = analyze(instrs).facts;
    let mut found: BTreeMap<(u32, Vec<Src>), Swizzle> = BTreeMap::new();
    let mut add = |elem_bits: u32, inputs: u8, n_in: u32, pattern: Vec<Src>, role: &'static str, instr: &str| {
        if pattern.len() < 2 || trivial(&pattern) {
            return;
        }
        let e = found.entry((elem_bits, pattern.clone())).or_insert_with(|| Swizzle {
            class: classify_pattern(&pattern, inputs, n_in, elem_bits),
            elem_bits,
            inputs,
            pattern,
            role,
            source: instr.to_string(),
            instructions: Vec::new(),
            performers: Vec::new(),
        });
        e.instructions.push(instr.to_string());
        if role == "instruction" {
            e.performers.push(instr.to_string());
        }
    };
    for ((instr, sem), f) in instrs.iter().zip(&facts) {
        // Vector operands only, numbered in declaration order.
        let vector: BTreeMap<String, u8> = instr
            .params
            .iter()
            .filter(|p| matches!(p.ty, misaal_isa::ast::Ty::Bv(w) if w >= 64))
            .enumerate()
            .map(|(k, p)| (p.name.clone(), k as u8))
            .collect();
        if vector.is_empty() || vector.len() > 4 || sem.lanes.len() < 2 {
            continue;
        }
        let lane_w = sem.lanes[0].width;
        if sem.lanes.iter().any(|l| l.width != lane_w) {
            continue;
        }
        let reads: Vec<Vec<(u8, u32, u32)>> = (0..sem.lanes.len() as u32).map(|l| lane_reads(f.bv_slices.get(&l).map(Vec::as_slice).unwrap_or(&[]), &vector)).collect();
        // One element width across every read, or no pattern.
        let widths: BTreeSet<u32> = reads.iter().flatten().map(|(_, lo, hi)| hi - lo + 1).collect();
        let [ew] = widths.iter().copied().collect::<Vec<_>>()[..] else { continue };
        let op_width = instr.params.iter().filter(|p| vector.contains_key(&p.name)).map(|p| p.ty.width()).max().unwrap_or(0);
        let n_in = op_width / ew;
        let inputs = vector.len() as u8;
        let elem = |&(o, lo, _): &(u8, u32, u32)| Src::Elem(o, lo / ew);
        if f.swizzle.is_some() {
            // Data movement: each lane one element, or zero.
            if ew != lane_w || reads.iter().any(|r| r.len() > 1) {
                continue;
            }
            let p: Vec<Src> = reads.iter().map(|r| r.first().map(elem).unwrap_or(Src::Zero)).collect();
            add(ew, inputs, n_in, p, "instruction", &instr.name);
            continue;
        }
        let k = f.reduction_factor as u32;
        if k >= 2 && reads.iter().all(|r| r.len() as u32 == k * inputs as u32 || r.len() as u32 == k) {
            // What one operand's elements are read in, lane after lane.
            let first_op: Vec<Src> = reads.iter().flat_map(|r| r.iter().filter(|x| x.0 == r[0].0).map(elem).collect::<Vec<_>>()).collect();
            let n = first_op.len() as u32;
            let in_order = first_op.iter().enumerate().all(|(j, s)| matches!(s, Src::Elem(_, e) if *e == j as u32));
            if in_order {
                // Built from k vectors: interleave them.
                let p: Vec<Src> = (0..n).map(|j| Src::Elem((j % k) as u8, j / k)).collect();
                add(ew, k as u8, n / k, p, "feed", &instr.name);
            } else {
                add(ew, inputs, n_in, reads.iter().flatten().map(elem).collect(), "feed", &instr.name);
            }
            continue;
        }
        // Element-wise arithmetic that takes its inputs out of order.
        if reads.iter().all(|r| !r.is_empty() && r.iter().all(|x| x.1 / ew == r[0].1 / ew && x.0 == r[0].0)) {
            let p: Vec<Src> = reads.iter().map(|r| elem(&r[0])).collect();
            add(ew, inputs, n_in, p, "read", &instr.name);
        }
    }
    found.into_values().collect()
}
