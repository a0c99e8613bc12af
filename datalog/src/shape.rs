//! An instruction's parameterized shape: which lane templates it has, the
//! order in which its lanes use them, and how each operand slice position
//! moves from lane to lane. Everything numeric becomes a named parameter;
//! what remains (the `ShapeKey`) decides class membership.
//!
//! Lane order is a block of template runs repeated `reps` times, followed
//! by an optional zero tail (the upper bits a narrowing op clears). A slice
//! position in the r-th lane of a template is `off + s*(r mod P) + bs*(r div P)`,
//! which covers strided elements, per-128-bit-lane ops (unpack, pack, hadd)
//! and offsets (unpacklo against unpackhi).

use crate::template::{HoleKind, LaneInstance, LaneTemplate, OperandOrder, Reading, ZERO_OPERAND, lane_instances_with};
use crate::widths::representatives;
use misaal_isa::ast::Ty;
use misaal_isa::{Instr, Semantics};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Vector,
    Mask,
    Imm,
}

impl Kind {
    pub fn of(ty: Ty) -> Kind {
        match ty {
            Ty::Bv(_) => Kind::Vector,
            Ty::Mask(_) => Kind::Mask,
            Ty::Imm(_) => Kind::Imm,
        }
    }
}

/// How a position or constant hole is fitted across a group's lanes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PositionFit {
    /// One value in every lane (constants only).
    Same,
    /// `off + s*(r mod P) + bs*(r div P)`.
    NestedAffine,
    /// No affine form: one parameter per lane.
    Table(usize),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupKey {
    pub template: LaneTemplate,
    pub fits: Vec<PositionFit>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShapeKey {
    pub operands: Vec<Kind>,
    pub result: Kind,
    pub groups: Vec<GroupKey>,
    /// Template index of each run of the repeated block.
    pub block: Vec<usize>,
}

/// One instruction as a shape and the numbers that instantiate it.
#[derive(Clone, Debug)]
pub struct InstrShape {
    pub key: ShapeKey,
    pub names: Vec<String>,
    pub values: Vec<u128>,
    /// Declared operand index of each canonical operand.
    pub declared: Vec<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

fn fit(seq: &[u128]) -> Option<(u128, u128, u128, u128)> {
    let m = seq.len();
    let sub = |a: u128, b: u128| a.wrapping_sub(b);
    for p in (1..=m).filter(|p| m.is_multiple_of(*p)) {
        let off = seq[0];
        let s = if p > 1 { sub(seq[1], seq[0]) } else { 0 };
        let bs = if m > p { sub(seq[p], seq[0]) } else { 0 };
        let ok = seq.iter().enumerate().all(|(r, &v)| {
            let r = r as u128;
            off.wrapping_add(s.wrapping_mul(r % p as u128)).wrapping_add(bs.wrapping_mul(r / p as u128)) == v
        });
        if ok {
            return Some((off, s, p as u128, bs));
        }
    }
    None
}

/// Evaluates a fitted position for rank `r`.
pub fn position(off: u128, s: u128, p: u128, bs: u128, r: u128) -> u128 {
    off.wrapping_add(s.wrapping_mul(r % p)).wrapping_add(bs.wrapping_mul(r / p))
}

/// Smallest block whose repetition gives `seq`.
fn period<T: PartialEq>(seq: &[T]) -> usize {
    let n = seq.len();
    (1..=n).find(|&b| n.is_multiple_of(b) && (b..n).all(|i| seq[i] == seq[i - b])).unwrap_or(n)
}

/// Per-template cache of width representatives (the ascent program is the
/// costly part of shape extraction).
#[derive(Default)]
pub struct ShapeContext {
    reps: HashMap<LaneTemplate, Vec<u16>>,
}

impl ShapeContext {
    fn reps(&mut self, t: &LaneTemplate) -> &Vec<u16> {
        self.reps.entry(t.clone()).or_insert_with(|| representatives(t))
    }

    pub fn shape(&mut self, instr: &Instr, sem: &Semantics) -> Result<InstrShape, ShapeError> {
        self.shape_with(instr, sem, Reading::default())
    }

    /// The shape under another [`Reading`] of the lanes.
    pub fn shape_with(&mut self, instr: &Instr, sem: &Semantics, reading: Reading) -> Result<InstrShape, ShapeError> {
        let mut order = OperandOrder::default();
        let mut lanes = lane_instances_with(sem, &mut order, reading);
        order.finish(instr.params.len());
        let width_of = |d: u16| if d == ZERO_OPERAND { instr.ret.width() } else { instr.params[d as usize].ty.width() };
        let mut names = Vec::new();
        let mut values = Vec::new();
        let mut param = |n: String, v: u128| {
            names.push(n);
            values.push(v);
        };
        for (c, &d) in order.declared.iter().enumerate() {
            param(format!("w_x{c}"), width_of(d) as u128);
        }
        param("w_dst".into(), instr.ret.width() as u128);

        // A trailing zero lane is a tail (the bits a narrowing op clears)
        // unless the same zero lane also occurs inside the pattern (sad).
        let mut tail = 0u128;
        if let Some(last) = lanes.last()
            && lanes.len() > 1
            && last.template.is_zero_constant(&last.values)
        {
            let (t, v) = (last.template.clone(), last.values.clone());
            if !lanes[..lanes.len() - 1].iter().any(|l| l.template == t && l.values == v) {
                tail = sem.lanes.last().expect("lanes").width as u128;
                lanes.pop();
            }
        }
        // Lanes with one template and one set of non-position numbers form a group.
        let mut group_of: Vec<usize> = Vec::new();
        let mut groups: Vec<(LaneTemplate, Vec<u128>)> = Vec::new();
        for l in &lanes {
            let sv = l.group_values();
            let g = match groups.iter().position(|(t, v)| *t == l.template && *v == sv) {
                Some(g) => g,
                None => {
                    groups.push((l.template.clone(), sv));
                    groups.len() - 1
                }
            };
            group_of.push(g);
        }
        let b = period(&group_of);
        let reps = group_of.len() / b;
        let mut runs: Vec<(usize, u128)> = Vec::new();
        for &g in &group_of[..b] {
            match runs.last_mut() {
                Some((last, n)) if *last == g => *n += 1,
                _ => runs.push((g, 1)),
            }
        }
        param("reps".into(), reps as u128);
        for (i, (_, n)) in runs.iter().enumerate() {
            param(format!("run{i}"), *n);
        }
        param("tail".into(), tail);

        let mut gkeys = Vec::new();
        for (g, (template, _)) in groups.iter().enumerate() {
            let members: Vec<&LaneInstance> = lanes.iter().zip(&group_of).filter(|(_, gg)| **gg == g).map(|(l, _)| l).collect();
            let rep = self.reps(template).clone();
            let first = members[0];
            let mut fits = Vec::new();
            for (h, kind) in template.holes.iter().enumerate() {
                let tag = match kind {
                    HoleKind::Position | HoleKind::Value => {
                        let seq: Vec<u128> = members.iter().map(|l| l.values[h]).collect();
                        if *kind == HoleKind::Value && seq.iter().all(|v| *v == seq[0]) {
                            param(format!("g{g}.c{h}"), seq[0]);
                            fits.push(PositionFit::Same);
                            continue;
                        }
                        match fit(&seq) {
                            Some((off, s, p, bs)) => {
                                param(format!("g{g}.off{h}"), off);
                                param(format!("g{g}.s{h}"), s);
                                param(format!("g{g}.P{h}"), p);
                                param(format!("g{g}.bs{h}"), bs);
                                fits.push(PositionFit::NestedAffine);
                            }
                            None => {
                                for (r, v) in seq.iter().enumerate() {
                                    param(format!("g{g}.t{h}[{r}]"), *v);
                                }
                                fits.push(PositionFit::Table(seq.len()));
                            }
                        }
                        continue;
                    }
                    HoleKind::Width => "w",
                    HoleKind::Offset => "o",
                };
                let r = rep[h] as usize;
                if r != h {
                    if first.values[r] != first.values[h] {
                        return Err(ShapeError(format!("{}: width holes {r} and {h} must agree but hold {} and {}", instr.name, first.values[r], first.values[h])));
                    }
                    continue;
                }
                param(format!("g{g}.{tag}{h}"), first.values[h]);
            }
            gkeys.push(GroupKey { template: template.clone(), fits });
        }
        let key = ShapeKey {
            operands: order.declared.iter().map(|&d| if d == ZERO_OPERAND { Kind::Vector } else { Kind::of(instr.params[d as usize].ty) }).collect(),
            result: Kind::of(instr.ret),
            groups: gkeys,
            block: runs.iter().map(|(g, _)| *g).collect(),
        };
        Ok(InstrShape { key, names, values, declared: order.declared })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_affine_fits_per_128_bit_lane_positions() {
        // unpacklo_epi16 at 256 bits: a-lanes read 0,16,32,48 then 128..176.
        let seq: Vec<u128> = [0, 16, 32, 48, 128, 144, 160, 176].to_vec();
        assert_eq!(fit(&seq), Some((0, 16, 4, 128)));
        assert_eq!(fit(&[64, 80, 96, 112]), Some((64, 0, 1, 16)));
        assert_eq!(fit(&[3, 1, 4, 1, 5]), None);
        assert_eq!(period(&[0, 1, 0, 1, 0, 1]), 2);
        assert_eq!(period(&[0, 0, 1, 1, 0, 0, 1, 1]), 4);
    }
}
