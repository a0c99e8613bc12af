//! Which instances of the fallback templates are worth proving.
//!
//! `legalize::widen` (an op computed at twice its width) and
//! `legalize::divide` (signed division and `mod` through unsigned division)
//! write a rule for every op they can, but such a rule only helps where
//! nothing else lowers the op, and only if what its right side builds is
//! lowered. An instance is tried when no instruction rule and no other
//! expansion has its left side's head (op, type and operand shapes, as
//! `loops::head`), and every op its right side builds (casts and
//! broadcasts aside) is matched by some lowering's left side. The tiers go
//! in order, each seeing the instances the ones before it kept: a signed
//! 8-bit division divides unsigned 8-bit values, which only the widened
//! 8-bit division lowers.

use super::loops::{self, Ground};
use crate::legalize::Split;
use misaal_rulesets::{Assignment, Rule};
use std::collections::{HashMap, HashSet};

/// The fallback tiers, in the order they are decided.
const TIERS: [&str; 3] = [crate::legalize::widen::PREFIX, crate::legalize::divide::PREFIX, crate::legalize::select_width::PREFIX];

/// Templates that lower nothing themselves: splits, pads, slices of
/// concats and commutations.
const HELPERS: [&str; 5] = ["synth.split-", "synth.pad-", "synth.dup-", "synth.slice-concat-", "synth.commute-"];

fn tier(name: &str) -> Option<usize> {
    TIERS.iter().position(|p| name.starts_with(p))
}

/// The left sides that lower an op, by head and by root op.
#[derive(Default)]
struct Lowerings {
    heads: HashSet<String>,
    /// `loops::op_key` of every lowering over variables only.
    ops: HashSet<String>,
    by_op: HashMap<String, Vec<Ground>>,
}

impl Lowerings {
    fn add(&mut self, l: Ground) {
        if let Some(h) = loops::head(&l) {
            self.heads.insert(h);
        }
        if let Some(k) = loops::op_key(&l).filter(|_| general(&l)) {
            self.ops.insert(k);
        }
        if let Ground::Node(op, _) = &l {
            self.by_op.entry(op.clone()).or_default().push(l);
        }
    }

    fn lowers(&self, n: &Ground) -> bool {
        matches!(n, Ground::Node(op, _) if self.by_op.get(op).is_some_and(|ps| ps.iter().any(|p| loops::feeds(n, p))))
    }

    /// Whether `n` is lowered as it stands, or at half, twice or four times
    /// its lanes: the splits of a 512-bit select into two blends, and the
    /// doublings of a 64-bit one into an xmm, are the helpers' business, and
    /// a 32-bit one (an i8x4 select on an i32x4 compare) is doubled twice.
    fn lowers_resized(&self, n: &Ground) -> bool {
        self.lowers(n) || [(1, 2), (2, 1), (4, 1)].iter().any(|&(num, den)| lanes_scaled(n, num, den).is_some_and(|m| self.lowers(&m)))
    }

    /// Whether an instance `l => r` may help. A left side over variables
    /// only (`shr(x, y)`) also matches every term a lowering of the op at
    /// some constant (`shr(x, 3)`) matches: it is kept where no lowering
    /// over variables only has the op at its type (an i8 shift by a vector
    /// has no instruction even though an i8 shift by 3 has one).
    fn keeps(&self, l: &Ground, r: &Ground) -> bool {
        let mut built = Vec::new();
        loops::op_nodes(r, &mut built);
        let covered = if general(l) { loops::op_key(l).is_some_and(|k| self.ops.contains(&k)) } else { loops::head(l).is_some_and(|h| self.heads.contains(&h)) };
        !covered
            && built.iter().filter(|n| !matches!(n, Ground::Node(op, _) if op == "cast" || op == "broadcast")).all(|n| self.lowers_resized(n))
    }
}

/// Whether a left side's operands are all variables (types aside).
fn general(l: &Ground) -> bool {
    matches!(l, Ground::Node(_, ks) if ks.iter().all(|k| !matches!(k, Ground::Node(h, _) if h != "t")))
}

/// `g` with every type's lane count times `num / den` (None where a count
/// does not divide or a lane count appears outside a type).
fn lanes_scaled(g: &Ground, num: i128, den: i128) -> Option<Ground> {
    match g {
        Ground::Node(h, ks) if h == "t" => match ks.as_slice() {
            [s, e, Ground::Int(n)] if (n * num) % den == 0 => Some(Ground::Node(h.clone(), vec![s.clone(), e.clone(), Ground::Int(n * num / den)])),
            _ => None,
        },
        Ground::Node(h, _) if h == "slice" || h == "concat" => None,
        Ground::Node(h, ks) => Some(Ground::Node(h.clone(), ks.iter().map(|k| lanes_scaled(k, num, den)).collect::<Option<_>>()?)),
        other => Some(other.clone()),
    }
}

/// Every instance of `rules` (the templates of `splits`) at `widths`, the
/// fallback templates' only where they may help. `lowered` holds the left
/// sides the instruction rules lower.
pub fn jobs(splits: &[Split], rules: &[Rule], widths: &[i128], lowered: &HashSet<Ground>) -> Vec<(usize, Assignment)> {
    let all: Vec<(usize, Assignment)> =
        rules.iter().enumerate().flat_map(|(k, r)| misaal_rulesets::instantiations(r, widths).unwrap_or_default().into_iter().map(move |e| (k, e))).collect();
    let tiers: Vec<Option<usize>> = all.iter().map(|(k, _)| tier(&splits[*k].name)).collect();
    // Both sides of each instance, once: the lowerings read the left sides
    // of all but the helpers, the tiers both sides of their own.
    let sides: Vec<Option<(Ground, Ground)>> = all
        .iter()
        .zip(&tiers)
        .map(|((k, e), t)| if t.is_some() || !HELPERS.iter().any(|p| splits[*k].name.starts_with(p)) { loops::sides(&rules[*k], e) } else { None })
        .collect();
    let mut low = Lowerings::default();
    lowered.iter().cloned().for_each(|l| low.add(l));
    for (side, t) in sides.iter().zip(&tiers) {
        if let (Some((l, _)), None) = (side, t) {
            low.add(l.clone());
        }
    }
    // Each tier to a fixpoint (a negative divisor divides by the positive
    // one, which the same tier's signed division lowers).
    let mut keep: Vec<bool> = tiers.iter().map(Option::is_none).collect();
    for t in 0..TIERS.len() {
        loop {
            let mut kept = Vec::new();
            for (i, side) in sides.iter().enumerate() {
                if keep[i] || tiers[i] != Some(t) {
                    continue;
                }
                if let Some((l, _)) = side.as_ref().filter(|(l, r)| low.keeps(l, r)) {
                    keep[i] = true;
                    kept.push(l.clone());
                }
            }
            if kept.is_empty() {
                break;
            }
            kept.into_iter().for_each(|l| low.add(l));
        }
    }
    all.into_iter().zip(keep).filter(|(_, k)| *k).map(|(j, _)| j).collect()
}
