//! Similarity classes (AutoLLVM ops): instructions with one shape, each with
//! a row of parameters. A class instantiated with a member's row rebuilds
//! that member's semantics; `misaal-verifier` checks that it does.

use crate::shape::{InstrShape, Kind, PositionFit, ShapeContext, ShapeKey, position};
use crate::template::{HoleKind, Reading, TNode, ZERO_OPERAND, has_product, has_zero_branch};
use crate::widths::representatives;
use ascent::ascent;
use ascent::aggregators::{count, min};
use misaal_isa::dag::{Dag, NodeId, SatKind};
use misaal_isa::{BitVec, Instr, Lane, Semantics, SpecLibrary};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

ascent! {
    /// Groups instructions by shape; a class's representative is its
    /// lowest-numbered member.
    pub struct Grouping;
    relation has_shape(u32, u32);
    relation class_of(u32, u32);
    relation class_size(u32, usize);
    class_of(i, rep) <-- has_shape(i, s), agg rep = min(j) in has_shape(j, s);
    class_size(rep, n) <-- class_of(_, rep), agg n = count() in class_of(_, rep);
}

#[derive(Clone, Debug)]
pub struct Member {
    pub instr: Arc<Instr>,
    pub values: Vec<u128>,
    pub declared: Vec<u16>,
}

#[derive(Clone, Debug)]
pub struct Class {
    pub name: String,
    pub key: ShapeKey,
    pub param_names: Vec<String>,
    pub members: Vec<Member>,
}

impl Class {
    /// `name=value` pairs of a member's row, for reports.
    pub fn params_text(&self, m: &Member) -> String {
        let mut parts: Vec<String> = self.param_names.iter().zip(&m.values).map(|(n, v)| format!("{n}={v}")).collect();
        let perm: Vec<String> = m.declared.iter().map(|&d| if d == ZERO_OPERAND { "zero".to_string() } else { d.to_string() }).collect();
        parts.push(format!("operands=[{}]", perm.join(",")));
        parts.join(";")
    }
}

pub struct ClassSet {
    pub classes: Vec<Class>,
    /// Instructions whose shape could not be extracted, with the reason.
    pub rejected: Vec<(String, String)>,
}

impl ClassSet {
    pub fn member_count(&self) -> usize {
        self.classes.iter().map(|c| c.members.len()).sum()
    }
    pub fn get(&self, name: &str) -> Option<&Class> {
        self.classes.iter().find(|c| c.name == name)
    }
    pub fn class_of(&self, instr: &str) -> Option<(&Class, &Member)> {
        self.classes.iter().find_map(|c| c.members.iter().find(|m| m.instr.name == instr).map(|m| (c, m)))
    }
}

/// Builds the classes of every instruction in `lib`.
pub fn classify(lib: &SpecLibrary) -> ClassSet {
    let pairs: Vec<(Arc<Instr>, Arc<Semantics>)> = lib.iter().map(|(i, s)| (i.clone(), s.clone())).collect();
    classify_pairs(&pairs)
}

/// Builds the classes of `pairs`, which may come from several targets'
/// libraries: a cross-ISA run folds x86 and ARM instructions of one shape
/// into one class, as Hydride's combined table does.
pub fn classify_pairs(pairs: &[(Arc<Instr>, Arc<Semantics>)]) -> ClassSet {
    let sem_of: HashMap<&str, &Semantics> = pairs.iter().map(|(i, s)| (i.name.as_str(), s.as_ref())).collect();
    let mut ctx = ShapeContext::default();
    let mut shapes: Vec<(Arc<Instr>, InstrShape)> = Vec::new();
    let mut rejected = Vec::new();
    for (instr, sem) in pairs {
        match ctx.shape(instr, sem) {
            Ok(s) => shapes.push((instr.clone(), s)),
            Err(e) => rejected.push((instr.name.clone(), e.0)),
        }
    }
    // An instruction joins another class when another reading of its lanes
    // (zero-masking as merge-masking, a low product as a widening one's low
    // half) gives exactly that class's shape.
    let normal: std::collections::HashSet<&ShapeKey> = shapes.iter().map(|(_, s)| &s.key).collect();
    let readings = [
        Reading { zero_source: true, low_product: false },
        Reading { zero_source: false, low_product: true },
        Reading { zero_source: true, low_product: true },
    ];
    let lifted: Vec<(usize, InstrShape)> = shapes
        .iter()
        .enumerate()
        .filter_map(|(i, (instr, own))| {
            let sem = sem_of[instr.name.as_str()];
            let (zero, product) = (has_zero_branch(sem), has_product(sem));
            readings.iter().filter(|r| (!r.zero_source || zero) && (!r.low_product || product)).find_map(|&r| {
                let alt = ctx.shape_with(instr, sem, r).ok()?;
                (alt.key != own.key && normal.contains(&alt.key)).then_some((i, alt))
            })
        })
        .collect();
    for (i, alt) in lifted {
        shapes[i].1 = alt;
    }
    let mut key_ids: HashMap<&ShapeKey, u32> = HashMap::new();
    let mut g = Grouping::default();
    for (i, (_, s)) in shapes.iter().enumerate() {
        let next = key_ids.len() as u32;
        let k = *key_ids.entry(&s.key).or_insert(next);
        g.has_shape.push((i as u32, k));
    }
    g.run();
    let mut by_rep: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &(i, rep) in &g.class_of {
        by_rep.entry(rep).or_default().push(i);
    }
    let mut classes: Vec<Class> = by_rep
        .into_values()
        .map(|mut idx| {
            idx.sort();
            let first = &shapes[idx[0] as usize].1;
            Class {
                name: String::new(),
                key: first.key.clone(),
                param_names: first.names.clone(),
                members: idx
                    .iter()
                    .map(|&i| {
                        let (instr, s) = &shapes[i as usize];
                        Member { instr: instr.clone(), values: s.values.clone(), declared: s.declared.clone() }
                    })
                    .collect(),
            }
        })
        .collect();
    name_classes(&mut classes);
    classes.sort_by(|a, b| a.name.cmp(&b.name));
    ClassSet { classes, rejected }
}

fn name_classes(classes: &mut [Class]) {
    let mut base: Vec<String> = classes.iter().map(|c| core_name(&c.key)).collect();
    let mut count: HashMap<String, usize> = HashMap::new();
    for b in &base {
        *count.entry(b.clone()).or_default() += 1;
    }
    // Colliding names take the members' most common intrinsic stem
    // (`_mm256_mulhi_epu16` -> `mulhi`), then a number if still equal.
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by(|&a, &b| classes[a].members[0].instr.name.cmp(&classes[b].members[0].instr.name));
    for &i in &order {
        if count[&base[i]] > 1 {
            base[i] = format!("{}.{}", base[i], common_stem(&classes[i]));
        }
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for &i in &order {
        let n = seen.entry(base[i].clone()).or_default();
        *n += 1;
        classes[i].name = if *n == 1 { base[i].clone() } else { format!("{}.{}", base[i], n) };
    }
}

/// `_mm512_maskz_cmpeq_epi8_mask` -> `cmpeq`.
fn stem(name: &str) -> String {
    let s = name.trim_start_matches('_');
    let s = s.strip_prefix("mm").map(|r| r.trim_start_matches(|c: char| c.is_ascii_digit())).unwrap_or(s);
    let s = s.trim_start_matches('_');
    let s = s.strip_prefix("maskz_").or_else(|| s.strip_prefix("mask_")).unwrap_or(s);
    let s = s.strip_suffix("_mask").unwrap_or(s);
    let mut parts: Vec<&str> = s.split('_').collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| ["epi", "epu", "si"].iter().any(|k| p.starts_with(k) && p[k.len()..].chars().all(|c| c.is_ascii_digit()))) {
        parts.pop();
    }
    parts.join("_")
}

/// An ARM intrinsic's name packs vector width, element type and lane forms
/// around the operation (`vabdl_high_s16`), so its instruction mnemonic
/// (`sabdl2`) names the operation better; x86 names carry it in the middle.
fn member_stem(i: &Instr) -> String {
    if i.target == "arm" && !i.mnemonic.is_empty() {
        return i.mnemonic.split_whitespace().next().unwrap_or_default().to_string();
    }
    stem(&i.name)
}

fn common_stem(c: &Class) -> String {
    let mut n: BTreeMap<String, usize> = BTreeMap::new();
    for m in &c.members {
        *n.entry(member_stem(&m.instr)).or_default() += 1;
    }
    let best = n.values().copied().max().unwrap_or(0);
    n.into_iter().find(|(_, k)| *k == best).map(|(s, _)| s).unwrap_or_default()
}

/// Nodes that carry data to the result: not select conditions, shift
/// amounts or run-time slice offsets.
fn data_path(t: &crate::template::LaneTemplate, root: u16) -> Vec<u16> {
    let mut seen = vec![false; t.nodes.len()];
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n as usize], true) {
            continue;
        }
        match t.nodes[n as usize] {
            TNode::Ite(_, a, b) | TNode::Concat(a, b) => stack.extend([a, b]),
            TNode::Bin(misaal_isa::dag::BvOp::Shl | misaal_isa::dag::BvOp::LShr | misaal_isa::dag::BvOp::AShr, a, _) => stack.push(a),
            TNode::Bin(_, a, b) | TNode::Cmp(_, a, b) => stack.extend([a, b]),
            TNode::DynSlice { src, .. } => stack.push(src),
            TNode::Not(a) | TNode::Neg(a) | TNode::Slice { src: a, .. } | TNode::Ext { src: a, .. } | TNode::Sat { src: a, .. } => stack.push(a),
            TNode::Leaf { .. } | TNode::Const { .. } | TNode::WideConst(_) => {}
        }
    }
    (0..t.nodes.len() as u16).filter(|&n| seen[n as usize]).collect()
}

fn cmp_name(op: misaal_isa::dag::CmpOp) -> &'static str {
    use misaal_isa::dag::CmpOp::*;
    match op {
        Eq => "eq",
        Ne => "ne",
        Ult => "ult",
        Ule => "ule",
        Slt => "slt",
        Sle => "sle",
    }
}

/// A readable name: that of the lane group whose data path does the most
/// (shufflehi's copied low half says little).
fn core_name(key: &ShapeKey) -> String {
    let mut best: Option<(usize, String)> = None;
    for g in 0..key.groups.len() {
        let t = &key.groups[g].template;
        let work = data_path(t, (t.nodes.len() - 1) as u16).len();
        if best.as_ref().is_none_or(|(w, _)| work > *w) {
            best = Some((work, group_name(key, g)));
        }
    }
    best.map(|(_, n)| n).unwrap_or_default()
}

fn group_name(key: &ShapeKey, g: usize) -> String {
    use misaal_isa::dag::{BvOp, CmpOp};
    let t = &key.groups[g].template;
    let root = (t.nodes.len() - 1) as u16;
    let node = |i: u16| &t.nodes[i as usize];
    let is_leaf_of = |i: u16, k: Kind| matches!(node(i), TNode::Leaf { operand, .. } if key.operands.get(*operand as usize) == Some(&k));
    let (suffix, body) = match *node(root) {
        TNode::Ite(c, a, e) if is_leaf_of(c, Kind::Mask) => (if matches!(node(e), TNode::Const { .. }) { "_maskz" } else { "_mask" }, a),
        _ => ("", root),
    };
    let cmp_prefix = if key.result == Kind::Mask { "cmpmask_" } else { "cmp_" };
    match *node(body) {
        TNode::Cmp(op, ..) => return format!("{cmp_prefix}{}{suffix}", cmp_name(op)),
        TNode::Ite(c, a, b) => {
            if let TNode::Cmp(op, x, y) = *node(c) {
                let konst = |i: u16| matches!(node(i), TNode::Const { .. });
                if konst(a) && konst(b) {
                    return format!("{cmp_prefix}{}{suffix}", cmp_name(op));
                }
                let signed = matches!(op, CmpOp::Slt | CmpOp::Sle);
                if matches!(op, CmpOp::Slt | CmpOp::Sle | CmpOp::Ult | CmpOp::Ule) {
                    let sign = if signed { "s" } else { "u" };
                    if (a, b) == (x, y) {
                        return format!("min_{sign}{suffix}");
                    }
                    if (a, b) == (y, x) {
                        return format!("max_{sign}{suffix}");
                    }
                    let neg_of = |p: u16, q: u16| matches!(node(p), TNode::Neg(z) if *z == q);
                    if signed && (neg_of(a, b) || neg_of(b, a)) {
                        return format!("abs{suffix}");
                    }
                }
            }
        }
        _ => {}
    }
    let dp = data_path(t, body);
    let mut ops: Vec<&'static str> = Vec::new();
    let sub = crate::template::LaneTemplate { nodes: dp.iter().map(|&i| t.nodes[i as usize].clone()).collect(), holes: vec![] };
    for op in sub.ops() {
        if !ops.contains(&op) {
            ops.push(op);
        }
    }
    let muls = dp.iter().filter(|&&i| matches!(node(i), TNode::Bin(BvOp::Mul, ..))).count();
    let has = |o: &str| ops.contains(&o);
    let sat = ops.iter().find(|o| o.starts_with("sat_")).map(|o| &o[3..]);
    let arith = ["add", "sub", "mul", "udiv", "urem", "and", "or", "xor", "not", "neg", "shl", "lshr", "ashr", "eq", "ne", "ucmp", "scmp"];
    let core = if muls >= 2 && has("add") {
        format!("dot_prod{}", sat.unwrap_or(""))
    } else if let (Some(s), true) = (sat, has("add")) {
        format!("sat_add{s}")
    } else if let (Some(s), true) = (sat, has("sub")) {
        format!("sat_sub{s}")
    } else if let (Some(s), false) = (sat, ops.iter().any(|o| arith.contains(o))) {
        format!("sat_narrow{s}")
    } else if !ops.iter().any(|o| arith.contains(o) || o.starts_with("sat_")) {
        if !suffix.is_empty() && ops.is_empty() {
            return format!("blend{suffix}");
        }
        movement_name(key, t, &ops)
    } else {
        let sig: Vec<&str> = ops.iter().copied().filter(|o| arith.contains(o) || o.starts_with("sat_") || *o == "sext" || *o == "zext").collect();
        sig.join("_")
    };
    format!("{core}{suffix}")
}

fn movement_name(key: &ShapeKey, t: &crate::template::LaneTemplate, ops: &[&str]) -> String {
    if ops.contains(&"dynslice") {
        // Controlled by an immediate (shuffle_epi32) or by data (shuffle_epi8)?
        let imm_control = t.nodes.iter().any(|n| matches!(n, TNode::Leaf { operand, .. } if key.operands.get(*operand as usize) == Some(&Kind::Imm)));
        return if imm_control { "permute_imm".into() } else { "permute_var".into() };
    }
    if ops.contains(&"sext") {
        return "sext".into();
    }
    if ops.contains(&"zext") {
        return "zext".into();
    }
    let all_nodes = || key.groups.iter().flat_map(|g| g.template.nodes.iter());
    if all_nodes().any(|n| matches!(n, TNode::Ite(..))) {
        return if key.operands.contains(&Kind::Imm) { "blend_imm".into() } else { "blend_var".into() };
    }
    let vector_operands: std::collections::BTreeSet<u16> = all_nodes()
        .filter_map(|n| match n {
            TNode::Leaf { operand, .. } if key.operands.get(*operand as usize) == Some(&Kind::Vector) => Some(*operand),
            _ => None,
        })
        .collect();
    if vector_operands.len() >= 2 && key.groups.len() >= 2 {
        return "interleave".into();
    }
    if ops.contains(&"concat") {
        return "concat".into();
    }
    "move".into()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstantiateError(pub String);

/// Rebuilds a member's semantics from the class shape and the member's row.
pub fn instantiate(class: &Class, member: &Member) -> Result<Semantics, InstantiateError> {
    let key = &class.key;
    let names = &class.param_names;
    let vals = &member.values;
    let by_name: HashMap<&str, u128> = names.iter().map(|n| n.as_str()).zip(vals.iter().copied()).collect();
    let get = |n: &str| by_name.get(n).copied().ok_or_else(|| InstantiateError(format!("missing parameter {n}")));
    let nops = key.operands.len();
    let declared_count = member.declared.iter().filter(|&&d| d != ZERO_OPERAND).count();
    let mut widths = vec![0u32; declared_count];
    for c in (0..nops).filter(|&c| member.declared[c] != ZERO_OPERAND) {
        let d = member.declared[c] as usize;
        *widths.get_mut(d).ok_or_else(|| InstantiateError(format!("operand {d} out of range")))? = get(&format!("w_x{c}"))? as u32;
    }
    let mut dag = Dag::new(widths.clone());
    let reps = get("reps")? as usize;
    let runs: Vec<usize> = (0..key.block.len()).map(|i| get(&format!("run{i}")).map(|v| v as usize)).collect::<Result<_, _>>()?;
    let mut rank = vec![0u128; key.groups.len()];
    let mut lanes = Vec::new();
    let mut lo = 0u32;
    let reps_of: Vec<Vec<u16>> = key.groups.iter().map(|g| representatives(&g.template)).collect();
    for _ in 0..reps {
        for (run, &g) in runs.iter().zip(&key.block) {
            for _ in 0..*run {
                let root = build_lane(&mut dag, key, g, rank[g], &reps_of[g], &get, member)?;
                rank[g] += 1;
                let w = dag.width(root);
                lanes.push(Lane { lo, width: w, root });
                lo += w;
            }
        }
    }
    let tail = get("tail")? as u32;
    if tail > 0 {
        let root = dag.constant(BitVec::zero(tail));
        lanes.push(Lane { lo, width: tail, root });
        lo += tail;
    }
    let result_width = get("w_dst")? as u32;
    if lo != result_width {
        return Err(InstantiateError(format!("lanes cover {lo} bits but the result has {result_width}")));
    }
    let roots: Vec<NodeId> = lanes.iter().map(|l| l.root).collect();
    let (dag, roots) = dag.compact(&roots);
    let lanes = lanes.iter().zip(roots).map(|(l, r)| Lane { root: r, ..*l }).collect();
    Ok(Semantics { dag, lanes, result_width })
}

fn build_lane(
    dag: &mut Dag,
    key: &ShapeKey,
    g: usize,
    r: u128,
    rep: &[u16],
    get: &dyn Fn(&str) -> Result<u128, InstantiateError>,
    member: &Member,
) -> Result<NodeId, InstantiateError> {
    let gk = &key.groups[g];
    let t = &gk.template;
    let mut pos_index = 0usize;
    let mut hole_val = vec![0u128; t.holes.len()];
    for (h, kind) in t.holes.iter().enumerate() {
        hole_val[h] = match kind {
            HoleKind::Position | HoleKind::Value => {
                let v = match gk.fits[pos_index] {
                    PositionFit::Same => get(&format!("g{g}.c{h}"))?,
                    PositionFit::NestedAffine => position(
                        get(&format!("g{g}.off{h}"))?,
                        get(&format!("g{g}.s{h}"))?,
                        get(&format!("g{g}.P{h}"))?,
                        get(&format!("g{g}.bs{h}"))?,
                        r,
                    ),
                    PositionFit::Table(_) => get(&format!("g{g}.t{h}[{r}]"))?,
                };
                pos_index += 1;
                v
            }
            k => {
                let tag = if *k == HoleKind::Width { "w" } else { "o" };
                get(&format!("g{g}.{tag}{}", rep[h]))?
            }
        };
    }
    let hv = |h: u16| hole_val[h as usize];
    let bad = |what: &str| InstantiateError(format!("template {g}: {what}"));
    let mut ids: Vec<NodeId> = Vec::with_capacity(t.nodes.len());
    for n in &t.nodes {
        let id = match *n {
            TNode::Leaf { operand, lo, width } => {
                let d = member.declared[operand as usize];
                let (lo, w) = (hv(lo) as u32, hv(width) as u32);
                let avail = match d {
                    ZERO_OPERAND => get(&format!("w_x{operand}"))? as u32,
                    d => dag.operand_widths()[d as usize],
                };
                if w == 0 || lo + w > avail {
                    return Err(bad("operand slice out of range"));
                }
                if d == ZERO_OPERAND {
                    dag.constant(BitVec::zero(w))
                } else {
                    let src = dag.operand(d);
                    dag.slice(src, lo + w - 1, lo)
                }
            }
            TNode::Const { value, width } => dag.constant(BitVec::from_u128(hv(width) as u32, hv(value))),
            TNode::WideConst(ref c) => dag.constant(c.clone()),
            TNode::Slice { src, lo, width } => {
                let s = ids[src as usize];
                let (lo, w) = (hv(lo) as u32, hv(width) as u32);
                if w == 0 || lo + w > dag.width(s) {
                    return Err(bad("slice out of range"));
                }
                dag.slice(s, lo + w - 1, lo)
            }
            TNode::DynSlice { src, offset, width } => dag.dyn_slice(ids[src as usize], ids[offset as usize], hv(width) as u32),
            TNode::Not(a) => dag.not(ids[a as usize]),
            TNode::Neg(a) => dag.neg(ids[a as usize]),
            TNode::Bin(op, a, b) => {
                let (x, y) = (ids[a as usize], ids[b as usize]);
                let shift = matches!(op, misaal_isa::dag::BvOp::Shl | misaal_isa::dag::BvOp::LShr | misaal_isa::dag::BvOp::AShr);
                if !shift && dag.width(x) != dag.width(y) {
                    return Err(bad("operand widths differ"));
                }
                dag.bin(op, x, y)
            }
            TNode::Cmp(op, a, b) => {
                let (x, y) = (ids[a as usize], ids[b as usize]);
                if dag.width(x) != dag.width(y) {
                    return Err(bad("compared widths differ"));
                }
                dag.cmp(op, x, y)
            }
            TNode::Ite(c, a, b) => {
                let (c, x, y) = (ids[c as usize], ids[a as usize], ids[b as usize]);
                if dag.width(c) != 1 || dag.width(x) != dag.width(y) {
                    return Err(bad("select widths differ"));
                }
                dag.ite(c, x, y)
            }
            TNode::Ext { signed, src, width } => {
                let s = ids[src as usize];
                if (hv(width) as u32) < dag.width(s) {
                    return Err(bad("extension narrows"));
                }
                dag.ext(signed, s, hv(width) as u32)
            }
            TNode::Sat { kind, src, width } => {
                let k: SatKind = kind;
                dag.sat(k, ids[src as usize], hv(width) as u32)
            }
            TNode::Concat(h, l) => dag.concat(ids[h as usize], ids[l as usize]),
        };
        ids.push(id);
    }
    Ok(*ids.last().expect("non-empty template"))
}

impl Class {
    /// The parameterized semantics, as `misaal classes show` prints it.
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let key = &self.key;
        let mut out = String::new();
        let kinds: Vec<String> = key.operands.iter().enumerate().map(|(c, k)| format!("x{c}: {k:?}[$w_x{c}]")).collect();
        let _ = writeln!(out, "class {} ({} members)", self.name, self.members.len());
        let _ = writeln!(out, "  operands: {}  ->  {:?}[$w_dst]", kinds.join(", "), key.result);
        let runs: Vec<String> = key.block.iter().enumerate().map(|(i, g)| format!("$run{i} x g{g}")).collect();
        let _ = writeln!(out, "  lanes: ({}) repeated $reps times, then $tail zero bits", runs.join(", "));
        for (g, gk) in key.groups.iter().enumerate() {
            let rep = representatives(&gk.template);
            let t = &gk.template;
            // Fitted holes (positions, and constants that vary by lane) in hole order.
            let fitted: Vec<(usize, &PositionFit)> =
                t.holes.iter().enumerate().filter(|(_, k)| matches!(k, HoleKind::Position | HoleKind::Value)).map(|(h, _)| h).zip(&gk.fits).collect();
            let varies = |h: usize| fitted.iter().any(|&(x, f)| x == h && *f != PositionFit::Same);
            let hole = |h: u16| -> String {
                let h = h as usize;
                match t.holes[h] {
                    HoleKind::Position => format!("@p{h}"),
                    HoleKind::Width => format!("$g{g}.w{}", rep[h]),
                    HoleKind::Value if varies(h) => format!("@c{h}"),
                    HoleKind::Value => format!("$g{g}.c{h}"),
                    HoleKind::Offset => format!("$g{g}.o{h}"),
                }
            };
            let mut text: Vec<String> = Vec::new();
            for n in &t.nodes {
                let r = |i: u16| text[i as usize].clone();
                let s = match n {
                    TNode::Leaf { operand, lo, width } => format!("x{operand}[{} +: {}]", hole(*lo), hole(*width)),
                    TNode::Const { value, width } => format!("{}:{}", hole(*value), hole(*width)),
                    TNode::WideConst(c) => c.to_hex(),
                    TNode::Slice { src, lo, width } => format!("{}[{} +: {}]", r(*src), hole(*lo), hole(*width)),
                    TNode::DynSlice { src, offset, width } => format!("(dynslice {} {} {})", r(*src), r(*offset), hole(*width)),
                    TNode::Not(a) => format!("(bvnot {})", r(*a)),
                    TNode::Neg(a) => format!("(bvneg {})", r(*a)),
                    TNode::Bin(op, a, b) => format!("({} {} {})", format!("{op:?}").to_lowercase(), r(*a), r(*b)),
                    TNode::Cmp(op, a, b) => format!("({} {} {})", format!("{op:?}").to_lowercase(), r(*a), r(*b)),
                    TNode::Ite(c, a, b) => format!("(ite {} {} {})", r(*c), r(*a), r(*b)),
                    TNode::Ext { signed, src, width } => format!("({} {} {})", if *signed { "sext" } else { "zext" }, r(*src), hole(*width)),
                    TNode::Sat { kind, src, width } => format!("(sat.{kind:?} {} {})", r(*src), hole(*width)),
                    TNode::Concat(h, l) => format!("(concat {} {})", r(*h), r(*l)),
                };
                text.push(s);
            }
            let _ = writeln!(out, "  g{g}: {}", text.last().expect("non-empty template"));
            for &(h, f) in &fitted {
                let at = if t.holes[h] == HoleKind::Position { "p" } else { "c" };
                match f {
                    PositionFit::Same => {}
                    PositionFit::NestedAffine => {
                        let _ = writeln!(out, "      @{at}{h} = $g{g}.off{h} + $g{g}.s{h}*(r mod $g{g}.P{h}) + $g{g}.bs{h}*(r div $g{g}.P{h})");
                    }
                    PositionFit::Table(n) => {
                        let _ = writeln!(out, "      @{at}{h} = $g{g}.t{h}[r] (a table of {n})");
                    }
                }
            }
        }
        let _ = writeln!(out, "  (r is the rank of a lane among the lanes of its template)");
        let _ = writeln!(out, "members:");
        for m in &self.members {
            let _ = writeln!(out, "  {:<28} {}", m.instr.name, self.params_text(m));
        }
        out
    }
}
