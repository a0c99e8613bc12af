//! Spec mutants, to show that an oracle notices small semantic slips.
//!
//! A mutant changes one DAG node of the unrolled semantics, so only the
//! lanes that use that node change: a harder target than rewriting the spec
//! text, which would change every lane at once. Kinds: swap a signedness
//! (extension, comparison, arithmetic shift, saturation input), shift an
//! operand slice by one bit, drop a saturation (keep the low bits).

use misaal_isa::Semantics;
use misaal_isa::dag::{BvOp, CmpOp, Node, NodeId, SatKind};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MutationKind {
    SwapSignedness,
    ShiftSlice,
    DropSaturation,
}

impl MutationKind {
    pub const ALL: [MutationKind; 3] = [MutationKind::SwapSignedness, MutationKind::ShiftSlice, MutationKind::DropSaturation];
}

#[derive(Clone, Debug)]
pub struct Mutant {
    pub kind: MutationKind,
    pub node: NodeId,
    pub description: String,
    pub semantics: Semantics,
}

fn mutate(sem: &Semantics, id: NodeId, kind: MutationKind) -> Option<(Node, String)> {
    let dag = &sem.dag;
    let n = dag.node(id).clone();
    let r = match (kind, n) {
        (MutationKind::SwapSignedness, Node::Ext { signed, src, width }) => {
            (Node::Ext { signed: !signed, src, width }, format!("{} extension made {}", if signed { "sign" } else { "zero" }, if signed { "zero" } else { "sign" }))
        }
        (MutationKind::SwapSignedness, Node::Cmp(op, a, b)) => {
            let flipped = match op {
                CmpOp::Slt => CmpOp::Ult,
                CmpOp::Ult => CmpOp::Slt,
                CmpOp::Sle => CmpOp::Ule,
                CmpOp::Ule => CmpOp::Sle,
                CmpOp::Eq | CmpOp::Ne => return None,
            };
            (Node::Cmp(flipped, a, b), format!("{op:?} comparison made {flipped:?}"))
        }
        (MutationKind::SwapSignedness, Node::Bin(BvOp::AShr, a, b)) => (Node::Bin(BvOp::LShr, a, b), "arithmetic shift made logical".into()),
        (MutationKind::SwapSignedness, Node::Bin(BvOp::LShr, a, b)) => (Node::Bin(BvOp::AShr, a, b), "logical shift made arithmetic".into()),
        (MutationKind::SwapSignedness, Node::Sat { kind, src, width }) => {
            let k = match kind {
                SatKind::Signed => SatKind::Unsigned,
                SatKind::Unsigned => SatKind::Signed,
                SatKind::SignedToUnsigned => SatKind::Unsigned,
            };
            (Node::Sat { kind: k, src, width }, format!("{kind:?} saturation made {k:?}"))
        }
        (MutationKind::ShiftSlice, Node::Slice { src, hi, lo }) if matches!(dag.node(src), Node::Operand(_)) => {
            let w = dag.width(src);
            if hi + 1 < w {
                (Node::Slice { src, hi: hi + 1, lo: lo + 1 }, format!("slice [{hi}:{lo}] moved up to [{}:{}]", hi + 1, lo + 1))
            } else if lo > 0 {
                (Node::Slice { src, hi: hi - 1, lo: lo - 1 }, format!("slice [{hi}:{lo}] moved down to [{}:{}]", hi - 1, lo - 1))
            } else {
                return None;
            }
        }
        (MutationKind::DropSaturation, Node::Sat { kind, src, width }) if width < dag.width(src) => {
            (Node::Slice { src, hi: width - 1, lo: 0 }, format!("{kind:?} saturation to {width} bits dropped (truncation)"))
        }
        _ => return None,
    };
    Some(r)
}

/// The nodes where a mutant of `kind` exists, without building any: each
/// mutant copies the whole DAG, and a 128-lane HVX spec has hundreds of
/// sites, so a test that tries one site builds only that one
/// ([`mutant_at`]).
pub fn mutant_sites(sem: &Semantics, kind: MutationKind) -> Vec<NodeId> {
    (0..sem.dag.len() as NodeId).filter(|&id| mutate(sem, id, kind).is_some()).collect()
}

/// The mutant of `kind` at node `id`, if there is one.
pub fn mutant_at(sem: &Semantics, id: NodeId, kind: MutationKind) -> Option<Mutant> {
    let (node, description) = mutate(sem, id, kind)?;
    let mut s = sem.clone();
    s.dag = sem.dag.with_node_replaced(id, node);
    Some(Mutant { kind, node: id, description, semantics: s })
}

/// The sites of `kind` a mutation test tries in the `spec`-th spec of its
/// library: every one with `all_sites`, else one picked per spec and kind
/// (deterministically, spread over the library), or none.
pub fn sampled_sites(sem: &Semantics, kind: MutationKind, spec: usize, all_sites: bool) -> Vec<NodeId> {
    let sites = mutant_sites(sem, kind);
    if all_sites || sites.is_empty() {
        return sites;
    }
    vec![sites[(spec * 7919 + kind as usize * 104_729) % sites.len()]]
}

/// How a mutation test samples, from its environment:
/// `MISAAL_MUTATION_SITES=all` tries every site instead of one per kind,
/// `MISAAL_MUTATION_FILTER=vadd` keeps only specs whose name contains it.
pub struct MutationSampling {
    pub all_sites: bool,
    pub only: String,
}

impl MutationSampling {
    pub fn from_env() -> Self {
        MutationSampling { all_sites: std::env::var("MISAAL_MUTATION_SITES").is_ok_and(|v| v == "all"), only: std::env::var("MISAAL_MUTATION_FILTER").unwrap_or_default() }
    }

    pub fn keeps(&self, name: &str) -> bool {
        name.contains(self.only.as_str())
    }
}

/// What a mutation test found: per kind, mutants the oracle caught and
/// those Z3 proved equal to the spec; and each that escaped both.
#[derive(Default)]
pub struct MutationTally {
    pub caught: BTreeMap<MutationKind, usize>,
    pub proved: BTreeMap<MutationKind, usize>,
    pub escaped: Vec<String>,
}

impl MutationTally {
    pub fn caught(&mut self, kind: MutationKind) {
        *self.caught.entry(kind).or_default() += 1;
    }

    pub fn proved(&mut self, kind: MutationKind) {
        *self.proved.entry(kind).or_default() += 1;
    }

    pub fn add(&mut self, other: MutationTally) {
        for (k, n) in other.caught {
            *self.caught.entry(k).or_default() += n;
        }
        for (k, n) in other.proved {
            *self.proved.entry(k).or_default() += n;
        }
        self.escaped.extend(other.escaped);
    }

    /// Prints the counts per kind (`oracle`: who caught them), then fails
    /// if a mutant escaped, or if a kind was never caught in an unfiltered
    /// run (a filtered one may hold no site of some kind).
    pub fn verdict(&self, oracle: &str, sampling: &MutationSampling) -> Result<(), String> {
        for kind in MutationKind::ALL {
            eprintln!("{kind:?}: {} caught by {oracle}, {} proven equivalent by Z3", self.caught.get(&kind).unwrap_or(&0), self.proved.get(&kind).unwrap_or(&0));
        }
        if !self.escaped.is_empty() {
            return Err(format!("{} mutant(s) escaped {oracle}:\n{}", self.escaped.len(), self.escaped.join("\n")));
        }
        for kind in MutationKind::ALL.iter().filter(|_| sampling.only.is_empty()) {
            if self.caught.get(kind).copied().unwrap_or(0) == 0 {
                return Err(format!("no {kind:?} mutant was exercised"));
            }
        }
        Ok(())
    }
}

/// Every single-node mutant of `kind`.
pub fn mutants(sem: &Semantics, kind: MutationKind) -> Vec<Mutant> {
    (0..sem.dag.len() as NodeId)
        .filter_map(|id| {
            let (node, description) = mutate(sem, id, kind)?;
            let mut s = sem.clone();
            s.dag = sem.dag.with_node_replaced(id, node);
            Some(Mutant { kind, node: id, description, semantics: s })
        })
        .collect()
}

/// Combinations of ranged immediate values [`prove_equivalent_in_range`]
/// proves one by one before it gives up with `Unknown`.
pub const MAX_RANGED_COMBINATIONS: usize = 4096;

/// ARM immediates often take fewer values than their width holds
/// (`vshrn_n_u64` shifts by 1 to 32 only), and outside that range a mutant
/// may differ where no program can reach it: `ashr` and `lshr` agree on the
/// kept bits for every legal shift. So each ranged immediate of `instr` is
/// fixed to each of its values in turn, and `a` and `b` are proved equal
/// for every combination. Without ranged immediates this is
/// [`prove_equivalent`](crate::smt::prove_equivalent).
pub fn prove_equivalent_in_range(instr: &misaal_isa::Instr, a: &Semantics, b: &Semantics, budget_ms: u32) -> crate::smt::Equivalence {
    use crate::smt::{Equivalence, prove_equivalent};
    let ranged: Vec<(u16, u32, u64, u64)> = instr
        .params
        .iter()
        .enumerate()
        .filter_map(|(k, p)| p.range.map(|(lo, hi)| (k as u16, a.dag.operand_widths().get(k).copied().unwrap_or(0), lo, hi)))
        .collect();
    if ranged.is_empty() || a.dag.operand_widths().len() != instr.params.len() {
        return prove_equivalent(a, b, budget_ms);
    }
    // Equal for every immediate is equal for the legal ones, and a
    // difference at legal immediates is a difference: one proof decides
    // most mutants without stepping through the range.
    match prove_equivalent(a, b, budget_ms) {
        Equivalence::Proved => return Equivalence::Proved,
        Equivalence::Differ(ops) if ranged.iter().all(|&(k, _, lo, hi)| ops.get(k as usize).is_some_and(|v| (lo..=hi).contains(&v.to_u64()))) => {
            return Equivalence::Differ(ops);
        }
        _ => {}
    }
    let combos = ranged.iter().try_fold(1usize, |n, &(_, _, lo, hi)| n.checked_mul((hi.saturating_sub(lo) + 1) as usize));
    if combos.is_none_or(|n| n > MAX_RANGED_COMBINATIONS) {
        return Equivalence::Unknown(format!("more than {MAX_RANGED_COMBINATIONS} combinations of immediate values"));
    }
    let fix = |s: &Semantics, vals: &[u64]| {
        let mut out = s.clone();
        for (&(k, w, _, _), &v) in ranged.iter().zip(vals) {
            for id in 0..out.dag.len() as NodeId {
                if matches!(out.dag.node(id), Node::Operand(o) if *o == k) {
                    out.dag = out.dag.with_node_replaced(id, Node::Const(misaal_isa::BitVec::from_u128(w, v as u128)));
                }
            }
        }
        out
    };
    let mut vals: Vec<u64> = ranged.iter().map(|r| r.2).collect();
    let mut unknown = None;
    loop {
        match prove_equivalent(&fix(a, &vals), &fix(b, &vals), budget_ms) {
            Equivalence::Proved => {}
            Equivalence::Differ(mut ops) => {
                // The solver saw the fixed immediate as a free operand: report the value proved.
                for (&(k, w, _, _), &v) in ranged.iter().zip(&vals) {
                    if let Some(o) = ops.get_mut(k as usize) {
                        *o = misaal_isa::BitVec::from_u128(w, v as u128);
                    }
                }
                return Equivalence::Differ(ops);
            }
            u @ Equivalence::Unknown(_) => unknown = Some(u),
        }
        // Next combination, the first immediate fastest.
        let mut i = 0;
        loop {
            if i == vals.len() {
                return unknown.unwrap_or(Equivalence::Proved);
            }
            if vals[i] < ranged[i].3 {
                vals[i] += 1;
                break;
            }
            vals[i] = ranged[i].2;
            i += 1;
        }
    }
}
