//! Class-level enumeration (issue 11, item 3; ARM and HVX: issues 13, 14):
//! Halide IR terms and target instruction terms (x86, ARM NEON or HVX, as
//! the [`crate::target::SynthTarget`] of the configuration describes) are
//! enumerated bottom-up, fingerprinted by their
//! outputs on fixed random and edge inputs, and matched; only a pair whose
//! fingerprints agree goes to the verifier, and only a proved pair becomes a
//! lowering rule. Halide terms are evaluated at reduced lanes (half of the
//! unit's 128 or 64 bits), target terms on whole registers (an HVX register
//! is 8 units wide); a match compares the low bits, then the whole result at
//! full lanes (Halide at register width), then Z3 decides.
//!
//! The work is split into units, one per Halide input signature (the types
//! of the variables), so that `--shard K/N` takes every N-th unit and the
//! merged shards are the whole run, byte for byte. A unit's result is
//! checkpointed (whole file, temp + rename) as soon as it is done.

pub mod checkpoint;
pub mod deepen;
pub mod driver;
pub mod fixup;
pub mod halide;
pub mod inputs;
pub mod terms;

use halide::{HPool, HTy};
use misaal_isa::{BitVec, SpecLibrary};
use misaal_verifier::audit::{AuditConfig, Libraries, Verdict, VerdictCache};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use crate::target::{NameStyle, SynthTarget};
use std::sync::Mutex;
use terms::XPool;

/// What to enumerate and how far.
#[derive(Clone, Debug)]
pub struct Config {
    pub halide_depth: u8,
    pub halide_max_size: u8,
    pub halide_per_level: usize,
    pub x86_depth: u8,
    pub x86_max_apps: usize,
    /// Fingerprint inputs per term.
    pub cases: usize,
    pub seed: u64,
    /// The units: the variables' types of each.
    pub signatures: Vec<Vec<HTy>>,
    /// x86 terms tried per Halide term (fewest instructions first).
    pub max_tries: usize,
    /// Enumerate only these x86 instructions (all verified ones if `None`);
    /// for small, fast runs.
    pub x86_only: Option<Vec<String>>,
    /// The target whose terms are enumerated and whose rules are written.
    pub target: &'static SynthTarget,
    /// Depth and ops added for a unit of three variables (an accumulator
    /// and two operands: the dot products).
    pub accumulator_extra: u8,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            halide_depth: 3,
            halide_max_size: 3,
            halide_per_level: 60_000,
            x86_depth: 2,
            x86_max_apps: 2_000_000,
            cases: 40,
            seed: 0x656e_756d,
            signatures: default_signatures(),
            max_tries: 3,
            x86_only: None,
            target: &crate::target::X86,
            accumulator_extra: 1,
        }
    }
}

impl Config {
    /// Everything that decides the output, for checkpoints: a checkpoint of
    /// another configuration or of other x86 semantics is never resumed.
    pub fn for_target(target: &'static SynthTarget) -> Config {
        Config { signatures: target.default_signatures(), target, x86_depth: target.depth, ..Config::default() }
    }

    pub fn digest(&self, x86: &SpecLibrary) -> String {
        let x86_names: Vec<String> = x86.instrs().iter().map(|i| format!("{}:{}", i.name, x86.digest(&i.name).unwrap_or("-"))).collect();
        let sigs: Vec<String> = self.signatures.iter().map(|s| sig_text(s)).collect();
        let mut text = format!(
            "{} {} {} {} {} {} {} {} {} {} {:?}",
            self.halide_depth,
            self.halide_max_size,
            self.halide_per_level,
            self.x86_depth,
            self.x86_max_apps,
            self.cases,
            self.seed,
            self.max_tries,
            sigs.join(","),
            x86_names.join(","),
            self.x86_only
        );
        if self.signatures.iter().any(|s| s.len() >= 3) {
            text.push_str(&format!(" accumulator +{}", self.accumulator_extra));
        }
        // x86's digest is what it was before there were other targets.
        if self.target.names() != NameStyle::X86 {
            text.push_str(&format!(" target {}", self.target.name()));
        }
        if self.target.deepen && self.x86_depth < 2 {
            text.push_str(" deepen");
        }
        let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        format!("{h:016x}")
    }
}

/// x86's units: one and two variables of each 128-bit integer type, and
/// u8 x i8 for the mixed-sign products.
pub fn default_signatures() -> Vec<Vec<HTy>> {
    crate::target::X86.default_signatures()
}

/// `u16x8,u16x8`.
pub fn sig_text(sig: &[HTy]) -> String {
    sig.iter().map(|t| t.short()).collect::<Vec<_>>().join(",")
}

/// A proved rule, ready to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvedRule {
    pub name: String,
    /// One line: where the rule came from.
    pub provenance: String,
    /// One line: `(rewrite ...)`.
    pub text: String,
}

/// What one unit found.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UnitResult {
    pub index: usize,
    pub sig: String,
    /// Halide terms evaluated (before deduplication).
    pub halide_terms: usize,
    /// Distinct Halide terms left out by the per-level cap.
    pub halide_cut: usize,
    pub x86_terms: usize,
    /// Halide terms whose fingerprint met an x86 term's.
    pub matched: usize,
    /// Pairs sent to the verifier.
    pub proofs: usize,
    pub refuted: usize,
    pub unknown: usize,
    pub rules: Vec<ProvedRule>,
    /// Pairs the verifier did not prove, with the verdict: never written.
    pub not_proved: Vec<String>,
}

/// `K/N`: this shard's units are those with index % N == K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl Shard {
    pub const WHOLE: Shard = Shard { k: 0, n: 1 };
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (k, n) = s.split_once('/').ok_or_else(|| format!("--shard {s}: expected K/N, e.g. 0/4"))?;
        let k: usize = k.trim().parse().map_err(|_| format!("--shard {s}: K is not a number"))?;
        let n: usize = n.trim().parse().map_err(|_| format!("--shard {s}: N is not a number"))?;
        if n == 0 || k >= n {
            return Err(format!("--shard {s}: need 0 <= K < N"));
        }
        Ok(Shard { k, n })
    }
    pub fn owns(self, unit: usize) -> bool {
        unit % self.n == self.k
    }
}

/// What the enumeration reads.
pub struct Inputs<'a> {
    /// The target's verified specs: x86, ARM or HVX.
    pub target: &'a SpecLibrary,
    pub halide: &'a SpecLibrary,
    /// Class name of an instruction.
    pub class_of: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// (class, relevant class) pairs of the relevance sets.
    pub relevant: &'a BTreeSet<(String, String)>,
    pub audit: &'a AuditConfig,
    pub cache: &'a Mutex<VerdictCache>,
}

/// The target-term pools, one per arity and register width of the
/// variables, built once and shared by the units.
pub struct TargetPools {
    pools: HashMap<(usize, u32), (XPool, Vec<Vec<BitVec>>)>,
}

/// The name the x86-only enumeration gave the pools.
pub type X86Pools = TargetPools;

impl TargetPools {
    pub fn new() -> Self {
        TargetPools { pools: HashMap::new() }
    }
    fn get(&mut self, inp: &Inputs, cfg: &Config, arity: usize, var_bits: u32) -> &(XPool, Vec<Vec<BitVec>>) {
        self.pools.entry((arity, var_bits)).or_insert_with(|| {
            let t = cfg.target;
            let cases = inputs::input_set_bits(arity, cfg.cases, cfg.seed ^ arity as u64, var_bits);
            let mut instrs = terms::usable(inp.target, inp.class_of, t);
            if let Some(only) = &cfg.x86_only {
                instrs.retain(|i| only.contains(&i.name));
            }
            let rel = |a: &str, b: &str| inp.relevant.contains(&(a.to_string(), b.to_string()));
            // A unit of three variables has no one-op Halide term (no op of
            // the grammar reads three vectors), and a term of several ops
            // is only matched with one instruction (see `run_unit`): the
            // deeper target terms would be built for nothing.
            let depth = if arity >= 3 { 1 } else { cfg.x86_depth };
            let limits = terms::XLimits { depth, max_apps: cfg.x86_max_apps, var_bits, lane_scale: t.lane_scale, immediates: t.immediates, pair_shuffle: t.pair_shuffle.as_ref() };
            let pool = terms::enumerate(instrs, &cases, arity, &rel, &limits);
            (pool, cases)
        })
    }
    /// Terms and evaluated applications of the pool of each arity built
    /// (arity, terms, evaluated, cut), in arity order.
    pub fn stats(&self) -> Vec<(usize, usize, usize, usize)> {
        let mut v: Vec<_> = self.pools.iter().map(|((a, w), (p, _))| ((*a, *w), p.entries.len(), p.evaluated, p.truncated)).collect();
        v.sort();
        v.into_iter().map(|((a, _), t, e, c)| (a, t, e, c)).collect()
    }
}

impl Default for TargetPools {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs one unit: enumerate, match, prove.
pub fn run_unit(inp: &Inputs, cfg: &Config, pools: &mut TargetPools, index: usize) -> Result<UnitResult, String> {
    let sig = cfg.signatures.get(index).ok_or_else(|| format!("no unit {index}"))?.clone();
    let arity = sig.len();
    if arity == 0 || arity > 3 {
        return Err(format!("unit {index}: a signature has 1 to 3 variables, not {arity}"));
    }
    let target = cfg.target;
    let unit_bits = sig[0].width();
    if !target.unit_ok(&sig) {
        return Err(format!("unit {index}: [{}]: every variable of a {} unit is one of {:?} bits wide", sig_text(&sig), target.name(), target.unit_widths));
    }
    let scale = target.lane_scale;
    let (xp, full_inputs) = pools.get(inp, cfg, arity, unit_bits * scale);
    let reduced = inputs::reduced_to(full_inputs, unit_bits);
    // x86 terms by (width, fingerprint of their low half), fewest instructions first.
    let mut by_low: HashMap<(u32, u64), Vec<u32>> = HashMap::new();
    for (i, e) in xp.entries.iter().enumerate() {
        if e.cost == 0 {
            continue;
        }
        by_low.entry((e.width, e.low_fp)).or_default().push(i as u32);
    }
    for v in by_low.values_mut() {
        v.sort_by_key(|&i| (xp.entries[i as usize].cost, i));
    }
    let wanted = |t: HTy, fp: u64| by_low.contains_key(&(t.width() * scale, fp));
    // An accumulator unit (a third variable) gets one op and one level
    // more, and intermediates four units wide: acc + reduce(widen(widen(a * b))).
    let extra = if arity >= 3 { cfg.accumulator_extra } else { 0 };
    let mut limits = halide::Limits::new(cfg.halide_depth + extra, cfg.halide_max_size + extra, cfg.halide_per_level);
    if extra > 0 {
        limits.max_bits *= 2;
    }
    limits.comparisons = target.mask_results;
    let mut hp = halide::enumerate(inp.halide, &sig, &reduced, &limits, &wanted);
    let mut res = UnitResult { index, sig: sig_text(&sig), halide_terms: hp.evaluated, x86_terms: xp.entries.len(), halide_cut: hp.cut, ..Default::default() };
    let all_vars = (1u8 << arity) - 1;
    let candidates: Vec<(u32, Vec<u32>)> = hp
        .entries
        .iter()
        .enumerate()
        // A unit wider than the target's units is there for its narrowings.
        .filter(|(_, e)| e.depth >= 1 && e.vars == all_vars && (target.operand_widths.contains(&(e.ty.width() * scale)) || e.ty.bits == 1))
        .filter(|(_, e)| target.unit_widths.contains(&unit_bits) || e.ty.width() < unit_bits)
        .filter_map(|(i, e)| {
            let xs = by_low.get(&(e.ty.width() * scale, inputs::fingerprint(&e.vals)))?;
            // A cast that only changes the type at the root is covered by
            // the rule for what is under it.
            if matches!(&e.node, halide::HNode::Op { op, generics, .. } if halide::weight(op, generics) == 0) || halide::casts_a_variable(&hp, i as u32) {
                return None;
            }
            // One Halide op lowers to any x86 term. A term of several ops
            // is worth a rule of its own only when one instruction does it
            // all (a fusion, like vpmaddwd for a reduce of a widening
            // multiply); otherwise the rules of its parts, chained, cover it.
            // An x86 term that ignores an input shows the Halide term does
            // too: an identity for the simplifier, not a lowering.
            let xs: Vec<u32> = xs
                .iter()
                .copied()
                .filter(|&x| xp.entries[x as usize].vars == all_vars && (e.size <= 1 || xp.entries[x as usize].cost == 1))
                .take(cfg.max_tries)
                .collect();
            (!xs.is_empty()).then_some((i as u32, xs))
        })
        .collect();
    let mut candidates = candidates;
    if target.names() == NameStyle::X86 {
        candidates.extend(pack_candidates(inp, &mut hp, xp, &by_low, full_inputs, &sig));
    }
    res.matched = candidates.len();

    // Variables are renamed by first occurrence, so sub(b, a) and sub(a, b)
    // are one left side; it is proved once, for the first found.
    let mut lhs_seen = BTreeSet::new();
    let candidates: Vec<(u32, Vec<u32>)> = candidates.into_iter().filter(|(h, _)| lhs_seen.insert(lhs_text(&hp, *h))).collect();
    let libs = Libraries { target: inp.target, halide: inp.halide };
    // The Halide terms at register width (HVX: 8 units), for the check at
    // full lanes and the rule's types.
    let wide = (scale != 1).then(|| scaled(&hp, scale));
    let hfull = wide.as_ref().unwrap_or(&hp);
    let outcomes: Vec<Outcome> = candidates.par_iter().with_max_len(1).map(|(h, xs)| prove_candidate(inp, cfg, &libs, hfull, xp, full_inputs, &sig, *h, xs)).collect();
    // A proved 128-bit pack gets its 256-bit form, with the lane fix-up searched.
    let mut outcomes = outcomes;
    for ((h, _), o) in candidates.iter().zip(outcomes.iter_mut()) {
        let Some(r) = &o.rule else { continue };
        let halide::HNode::Op { op, generics, args } = &hp.entries[*h as usize].node else { continue };
        let is_concat = matches!(&hp.entries[args[0] as usize].node, halide::HNode::Op { op: "concat", .. });
        let rhs = r.text.trim_start_matches("(rewrite ").split(" :name").next().unwrap_or("").trim_start_matches(&lhs_text(&hp, *h)).trim();
        if !is_concat || rhs.matches("(x86").count() != 1 || !rhs.ends_with(" ?a ?b)") {
            continue;
        }
        let pack = fixup::Pack { op, from: (generics[0] == 1, generics[1] as u32), to: (generics[3] == 1, generics[4] as u32), rhs128: rhs };
        o.extra = fixup::widen(inp, &libs, &pack, &sig_text(&sig));
    }
    // Iterative deepening: the one-op heads no proved rule covers get a
    // directed second level of target terms.
    if target.deepen && cfg.x86_depth < 2 && arity < 3 {
        let proved: BTreeSet<String> = candidates.iter().zip(&outcomes).filter(|(_, o)| o.rule.is_some()).map(|((h, _), _)| lhs_text(&hp, *h)).collect();
        let mut heads_seen = BTreeSet::new();
        let heads: Vec<u32> = (0..hp.entries.len() as u32)
            .filter(|&i| {
                let e = &hp.entries[i as usize];
                e.depth >= 1
                    && e.size == 1
                    && e.vars == all_vars
                    && target.operand_widths.contains(&(e.ty.width() * scale))
                    && matches!(&e.node, halide::HNode::Op { op, generics, .. } if halide::weight(op, generics) == 1)
                    && !halide::casts_a_variable(&hp, i)
            })
            .filter(|&h| {
                let t = lhs_text(&hp, h);
                !proved.contains(&t) && heads_seen.insert(t)
            })
            .collect();
        let rel = |a: &str, b: &str| inp.relevant.contains(&(a.to_string(), b.to_string()));
        let xlimits = terms::XLimits { depth: 2, max_apps: cfg.x86_max_apps, var_bits: unit_bits * scale, lane_scale: scale, immediates: target.immediates, pair_shuffle: None };
        let d = deepen::search(&hp, &heads, xp, full_inputs, arity, &rel, &xlimits, cfg.max_tries);
        res.matched += d.candidates.len();
        let more: Vec<Outcome> = d.candidates.par_iter().with_max_len(1).map(|(h, xs)| prove_candidate(inp, cfg, &libs, hfull, &d.pool, full_inputs, &sig, *h, xs)).collect();
        for mut o in more {
            if let Some(r) = &mut o.rule {
                r.provenance = format!("{} (iterative deepening: no depth-1 term proved for this head)", r.provenance);
            }
            outcomes.push(o);
        }
    }
    let mut names: HashMap<String, usize> = HashMap::new();
    for o in outcomes {
        res.proofs += o.proofs;
        res.refuted += o.refuted;
        res.unknown += o.unknown;
        res.not_proved.extend(o.not_proved);
        if let Some(mut r) = o.rule {
            let n = names.entry(r.name.clone()).or_insert(0);
            *n += 1;
            if *n > 1 {
                let unique = format!("{}.{}", r.name, n);
                r.text = r.text.replace(&format!(":name \"{}\"", r.name), &format!(":name \"{unique}\""));
                r.name = unique;
            }
            res.rules.push(r);
        }
        res.proofs += o.extra.len();
        res.rules.extend(o.extra);
    }
    Ok(res)
}

/// Two-input narrowing packs, `cast` or `saturating_cast` of
/// `concat(a, b)` to half the element width (vpackuswb, vpackssdw and
/// friends). A concat moves `b` into the upper lanes, so its value at
/// reduced lanes is not the low half of its value at full lanes, which is
/// what the x86 terms are indexed by: these terms are evaluated at full
/// lanes instead, and the low half of that value is looked up.
fn pack_candidates(inp: &Inputs, hp: &mut HPool, xp: &XPool, by_low: &HashMap<(u32, u64), Vec<u32>>, full: &[Vec<BitVec>], sig: &[HTy]) -> Vec<(u32, Vec<u32>)> {
    let [t, t2] = sig else { return Vec::new() };
    if t != t2 || t.bits < 16 || t.width() != inputs::FULL_BITS {
        return Vec::new();
    }
    let entry = |node, ty, depth, size| halide::HEntry { node, ty, vals: Vec::new(), depth, size, vars: 0b11 };
    let wide = HTy::new(t.signed, t.bits, 2 * t.lanes);
    let concat = halide::HNode::Op { op: "concat", generics: vec![t.signed as i128, t.bits as i128, t.lanes as i128, t.lanes as i128], args: vec![0, 1] };
    hp.entries.push(entry(concat, wide, 1, 1));
    let c = hp.entries.len() as u32 - 1;
    let mut out = Vec::new();
    for op in ["saturating_cast", "cast"] {
        for signed in [false, true] {
            let to = HTy::new(signed, t.bits / 2, wide.lanes);
            let generics = vec![t.signed as i128, t.bits as i128, wide.lanes as i128, signed as i128, to.bits as i128];
            hp.entries.push(entry(halide::HNode::Op { op, generics, args: vec![c] }, to, 2, 2));
            let h = hp.entries.len() as u32 - 1;
            let Some(vals) = full_values(inp.halide, hp, h, full) else { continue };
            let low = inputs::fingerprint(vals.iter().map(|v| v.truncate(v.width() / 2)).collect::<Vec<_>>().iter());
            // Any number of instructions (fewest first): no chain of other
            // rules covers a concat, which has no lowering of its own.
            let xs: Vec<u32> = by_low.get(&(to.width(), low)).into_iter().flatten().copied().filter(|&x| xp.entries[x as usize].vars == 0b11).take(3).collect();
            if !xs.is_empty() {
                out.push((h, xs));
            }
        }
    }
    out
}

struct Outcome {
    proofs: usize,
    refuted: usize,
    unknown: usize,
    not_proved: Vec<String>,
    rule: Option<ProvedRule>,
    /// Rules derived from `rule` (the 256-bit forms of a pack).
    extra: Vec<ProvedRule>,
}

/// The whole-lane values of Halide entry `i` on the full inputs, or `None`
/// if some op does not instantiate at full lanes.
fn full_values(halide: &SpecLibrary, hp: &HPool, i: u32, full: &[Vec<BitVec>]) -> Option<Vec<BitVec>> {
    let e = &hp.entries[i as usize];
    match &e.node {
        halide::HNode::Var(k) => Some(full.iter().map(|c| c[*k].clone()).collect()),
        halide::HNode::Const(v) => {
            let lane = BitVec::from_i128(e.ty.bits, *v);
            let mut word = BitVec::zero(e.ty.width());
            for l in 0..e.ty.lanes {
                for b in 0..e.ty.bits {
                    if lane.bit(b) {
                        word.set_bit(l * e.ty.bits + b, true);
                    }
                }
            }
            Some(vec![word; full.len()])
        }
        halide::HNode::Op { op, generics, args } => {
            let (_, sem) = halide.instantiate(op, generics).ok()?;
            let argv: Vec<Vec<BitVec>> = args.iter().map(|&a| full_values(halide, hp, a, full)).collect::<Option<_>>()?;
            (0..full.len()).map(|c| sem.eval(&argv.iter().map(|v| &v[c]).collect::<Vec<_>>()).ok()).collect()
        }
    }
}

/// Variable names by first occurrence in Halide term `h`.
fn namer(hp: &HPool, h: u32) -> impl Fn(usize) -> String {
    let mut order = Vec::new();
    halide::var_order(hp, h, &mut order);
    move |k: usize| format!("?{}", ["a", "b", "c"][order.iter().position(|&v| v == k).unwrap_or(k)])
}

fn lhs_text(hp: &HPool, h: u32) -> String {
    halide::render(hp, h, &namer(hp, h))
}

/// The pool with every type `scale` times as many lanes (the first type's
/// lane count is each op's third generic); values are left out.
fn scaled(hp: &HPool, scale: u32) -> HPool {
    let entries = hp
        .entries
        .iter()
        .map(|e| {
            let node = match &e.node {
                halide::HNode::Op { op, generics, args } => {
                    let mut g = generics.clone();
                    g[2] *= scale as i128;
                    halide::HNode::Op { op, generics: g, args: args.clone() }
                }
                other => other.clone(),
            };
            halide::HEntry { node, ty: HTy::new(e.ty.signed, e.ty.bits, e.ty.lanes * scale), vals: Vec::new(), depth: e.depth, size: e.size, vars: e.vars }
        })
        .collect();
    HPool { entries, evaluated: hp.evaluated, cut: hp.cut }
}

#[allow(clippy::too_many_arguments)]
fn prove_candidate(inp: &Inputs, cfg: &Config, libs: &Libraries, hp: &HPool, xp: &XPool, full: &[Vec<BitVec>], sig: &[HTy], h: u32, xs: &[u32]) -> Outcome {
    let head = cfg.target.name();
    let mut o = Outcome { proofs: 0, refuted: 0, unknown: 0, not_proved: Vec::new(), rule: None, extra: Vec::new() };
    let Some(hv) = full_values(inp.halide, hp, h, full) else { return o };
    let name = namer(hp, h);
    let lhs = halide::render(hp, h, &name);
    let mut hops = Vec::new();
    halide::ops(hp, h, &mut hops);
    for &x in xs {
        // The low halves met; the whole results must too before Z3 is asked.
        if terms::values(xp, x, full).as_ref() != Some(&hv) {
            continue;
        }
        let rhs = terms::render(xp, x, &name, head);
        let mut ins = Vec::new();
        terms::instrs_of(xp, x, &mut ins);
        let inames: Vec<&str> = ins.iter().map(|&k| xp.instrs[k as usize].name.as_str()).collect();
        let classes: Vec<&str> = ins.iter().map(|&k| xp.instrs[k as usize].class.as_str()).collect();
        let rule_name = format!(
            "enum.{}.{}.{}",
            hops.join("-"),
            hp.entries[h as usize].ty.short(),
            inames.iter().map(|n| n.trim_start_matches('_')).collect::<Vec<_>>().join("-")
        );
        let text = format!("(rewrite {lhs} {rhs} :name \"{rule_name}\" :ruleset {head})");
        o.proofs += 1;
        match audit(inp, libs, &text) {
            Ok(Verdict::Proved) => {
                let provenance = format!(
                    "enumerate: Halide [{}] depth {} ({}) = {head} depth {} ({}; classes {})",
                    sig_text(sig),
                    hp.entries[h as usize].depth,
                    hops.join(" "),
                    xp.entries[x as usize].depth,
                    inames.join(" "),
                    classes.join(" ")
                );
                o.rule = Some(ProvedRule { name: rule_name, provenance, text });
                return o;
            }
            Ok(v @ (Verdict::Refuted | Verdict::EncoderMismatch)) => {
                o.refuted += 1;
                o.not_proved.push(format!("{} {lhs} => {rhs}", v.label()));
            }
            // Unknown (a timeout) is never a proof; inapplicable cannot
            // happen for a concrete rule but is not one either.
            Ok(v) => {
                o.unknown += 1;
                o.not_proved.push(format!("{} {lhs} => {rhs}", v.label()));
            }
            Err(e) => {
                o.unknown += 1;
                o.not_proved.push(format!("does not load ({e}): {lhs} => {rhs}"));
            }
        }
    }
    o
}

/// The verifier's verdict on one concrete rule: every instantiation proved
/// or the first that is not.
fn audit(inp: &Inputs, libs: &Libraries, text: &str) -> Result<Verdict, String> {
    use misaal_verifier::audit::{load_rules, plan, run_job};
    let rules = load_rules("enumerate", text, libs, inp.audit).map_err(|d| d.to_string())?;
    let jobs = plan(&rules, inp.audit).map_err(|(_, e)| e)?;
    if jobs.is_empty() {
        return Ok(Verdict::Inapplicable);
    }
    for j in &jobs {
        let r = run_job(libs, j, inp.audit, inp.cache);
        if r.verdict != Verdict::Proved {
            return Ok(r.verdict);
        }
    }
    Ok(Verdict::Proved)
}

/// The rule file for some unit results (in unit order), with a header that
/// depends only on the configuration and the rules, so that merged shards
/// and a whole run write the same bytes.
pub fn render_rules(cfg: &Config, units: &[UnitResult]) -> String {
    let count: usize = units.iter().map(|u| u.rules.len()).sum();
    let mut s = String::new();
    let t = cfg.target.name();
    s.push_str("; Lowering rules synthesized by `misaal synth --phase enumerate`: Halide IR\n");
    s.push_str(&format!("; terms and {t} instruction terms enumerated bottom-up, matched by their\n"));
    s.push_str("; outputs on fixed inputs, each pair proved by the verifier (Z3) before it\n");
    s.push_str(&format!("; is written. Generated; the abstract phase folds them into rulesets/{}.egg.\n", cfg.target.output));
    s.push_str(&format!(
        "; Halide depth {} (at most {} ops), {t} depth {}, {} fingerprint cases, seed {:#x}; {} units, {count} rules.\n",
        cfg.halide_depth,
        cfg.halide_max_size,
        cfg.x86_depth,
        cfg.cases,
        cfg.seed,
        cfg.signatures.len()
    ));
    s.push_str(&format!("(ruleset {t})\n"));
    // A rule two units both find (the one- and two-input units of a type
    // meet in `add(a, shr(a, 1))`) is written once; two different rules of
    // one name get the later unit's index in theirs.
    let mut names: HashMap<String, String> = HashMap::new();
    for u in units {
        if u.rules.is_empty() {
            continue;
        }
        s.push_str(&format!("\n; == [{}] ==\n", u.sig));
        for r in &u.rules {
            let body = r.text.replace(&format!(":name \"{}\"", r.name), "");
            let text = match names.get(&r.name) {
                Some(b) if *b == body => continue,
                Some(_) => r.text.replace(&format!(":name \"{}\"", r.name), &format!(":name \"{}.u{}\"", r.name, u.index)),
                None => r.text.clone(),
            };
            names.insert(r.name.clone(), body);
            s.push_str(&format!("; {}\n{text}\n", r.provenance));
        }
    }
    s
}
