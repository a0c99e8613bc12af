//! Cut points for translation validation. A whole root composed down to the
//! loads can hold several 32x32->64 multipliers on each side (the i32
//! requantize), related through sums of products; Z3 does not relate such
//! cones within its budget, although every rule in them was proved with its
//! operands free in seconds.
//!
//! So the proof follows the selection's own structure, without trusting it:
//! every node of both sides is evaluated on random leaf values, and a
//! selected node whose values match a source node's is a candidate cut.
//! Bottom-up, each candidate is proved equal to its source node with the
//! candidates already proved below it replaced, on both sides, by one fresh
//! operand each. Then the root is proved the same way. That is sound: a
//! proof with a cut value free holds in particular for the value both sides
//! were proved to compute there.
//!
//! It is incomplete: a cut forgets facts about its value (a range, a tie to
//! another operand) that a proof above may need. A candidate that fails is
//! not cut; a root that fails with cuts is proved whole as before
//! (`None` here), so a cut can cost time but never a verdict.

use super::{Cut, Target, ValidateOptions, Verdict, postorder, semantics, side};
use crate::isel::Selection;
use crate::isel::encode::{Node, Op};
use misaal_isa::BitVec;
use misaal_isa::ast::Ty;
use misaal_verifier::CaseGen;
use misaal_verifier::compose::check_equal;
use misaal_verifier::differential::edge_values;
use misaal_verifier::smt::{Budget, Equivalence};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Random leaf assignments evaluated to find candidate cuts.
const CASES: usize = 12;

/// Random cases, and the solver budget in ms, for an interior piece.
const PIECE_CASES: usize = 256;
const PIECE_MS: u32 = 5_000;

/// What every piece's proof of one root reads.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    target: &'a Target,
    sel: &'a Selection,
    /// The root's leaves, as the source names them.
    vars: &'a [(&'a str, i64)],
    /// Each source node's values on the random cases (their widths too).
    val_src: &'a HashMap<usize, Vec<BitVec>>,
    opts: &'a ValidateOptions,
}

/// Bits `hi..=lo` of source node `node`: where a selected node's value
/// lies. Legalization splits wide source values into register-sized
/// pieces, so most selected nodes compute a piece, not a whole node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    node: usize,
    hi: u32,
    lo: u32,
}

/// Proves the root `src_order`/`sel_order` end at through cut points;
/// `None` when that does not succeed (the caller then proves it whole).
pub(super) fn prove_by_cuts(
    target: &Target,
    sel: &Selection,
    src_order: &[usize],
    sel_order: &[usize],
    vars: &[(&str, i64)],
    opts: &ValidateOptions,
) -> Option<Verdict> {
    let (src, dag) = (&sel.source.nodes, &sel.dag);
    let cases = cases(vars, opts.seed);
    let val_src = values(target, src, src_order, vars, &cases)?;
    let val_sel = values(target, dag, sel_order, vars, &cases)?;
    let width = |vals: &HashMap<usize, Vec<BitVec>>, n: usize| vals[&n][0].width();
    let hash = |vs: &mut dyn Iterator<Item = BitVec>| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in vs {
            for &x in v.limbs() {
                h = (h ^ x).wrapping_mul(0x100_0000_01b3);
            }
            h = (h ^ v.width() as u64).wrapping_mul(0x100_0000_01b3);
        }
        h
    };
    let computes = |d: usize| !matches!(dag[d].op, Op::Leaf { .. } | Op::Const { .. });
    // The widths selected nodes have: the piece sizes worth hashing.
    let pieces: BTreeSet<u32> = sel_order.iter().filter(|&&d| computes(d)).map(|&d| width(&val_sel, d)).collect();
    // A source piece for each signature (the first, children before
    // parents). A node whose value repeats piecewise (a broadcast) is not
    // cut at all: a selected node may read any of its equal pieces (the low
    // half of a vpbroadcastb where the source reads the high one), and a
    // cut makes them different values.
    let mut by_sig: HashMap<u64, Piece> = HashMap::new();
    for &n in src_order {
        if matches!(src[n].op, Op::Const { .. }) {
            continue;
        }
        let w = width(&val_src, n);
        let cuts: Vec<(u64, Piece)> = pieces
            .iter()
            .filter(|&&p| p <= w && w % p == 0)
            .flat_map(|&p| (0..w / p).map(move |k| (k * p + p - 1, k * p)))
            .map(|(hi, lo)| (hash(&mut val_src[&n].iter().map(|v| v.extract(hi, lo))), Piece { node: n, hi, lo }))
            .collect();
        let repeats = |p: &Piece, sig: u64| cuts.iter().any(|(s, q)| *s == sig && q.hi - q.lo == p.hi - p.lo && q.lo != p.lo);
        if cuts.iter().any(|(sig, p)| repeats(p, *sig)) {
            continue;
        }
        for (sig, p) in cuts {
            by_sig.entry(sig).or_insert(p);
        }
    }
    let src_root = *src_order.last()?;
    let sel_root = *sel_order.last()?;
    let root = Piece { node: src_root, hi: width(&val_src, src_root) - 1, lo: 0 };
    if hash(&mut val_sel[&sel_root].iter().cloned()) != hash(&mut val_src[&src_root].iter().cloned()) {
        return None;
    }
    // `MISAAL_VALIDATE_TRACE=1`: each cut tried, for finding why a root is slow.
    let trace = std::env::var_os("MISAAL_VALIDATE_TRACE").is_some();
    let ctx = Ctx { target, sel, vars, val_src: &val_src, opts };
    // Selected nodes proved equal to their source piece.
    let mut proved: HashMap<usize, Piece> = HashMap::new();
    for &d in sel_order {
        if !computes(d) {
            continue;
        }
        let piece = if d == sel_root {
            root
        } else {
            match by_sig.get(&hash(&mut val_sel[&d].iter().cloned())) {
                Some(&p) => p,
                None => continue,
            }
        };
        let started = std::time::Instant::now();
        let ok = prove_piece(&ctx, d, piece, &proved, d == sel_root);
        if trace {
            let verdict = if ok { "proved" } else { "not cut" };
            eprintln!("validate trace: selected node {d} ({}) = bits {}..{} of source node {} ({}): {verdict} in {:.3} s", dag[d].op, piece.hi, piece.lo, piece.node, src[piece.node].op, started.elapsed().as_secs_f64());
        }
        if d == sel_root {
            return ok.then_some(Verdict::Proved);
        }
        if ok {
            proved.insert(d, piece);
        }
    }
    None
}

/// Whether selected node `d` computes `piece`, with the proved pieces below
/// both cut: a source node one of them lies in becomes a fresh operand, and
/// each proved selected node below `d` that operand's bits.
fn prove_piece(ctx: &Ctx, d: usize, piece: Piece, proved: &HashMap<usize, Piece>, root: bool) -> bool {
    let (src, dag) = (&ctx.sel.source.nodes, &ctx.sel.dag);
    let (Ok(src_cone), Ok(sel_cone)) = (postorder(src, piece.node), postorder(dag, d)) else { return false };
    let in_src: HashSet<usize> = src_cone.iter().copied().collect();
    // Only source nodes a proved selected node below `d` lies in are cut:
    // cutting others would free a value one side still ties to its inputs.
    let cands: Vec<(usize, Piece)> = sel_cone
        .iter()
        .filter_map(|&d2| proved.get(&d2).map(|&p2| (d2, p2)))
        .filter(|&(d2, p2)| d2 != d && p2.node != piece.node && in_src.contains(&p2.node))
        .collect();
    let attempt = |cands: &[(usize, Piece)]| attempt_cuts(ctx, piece, cands, &src_cone, &sel_cone, root);
    if attempt(&cands) {
        return true;
    }
    // A selected cut can stand for a source node hidden below another cut
    // (softmax's y = 0 - m: the selection reads m and y, the source only
    // y), and the cut of y forgets that it is 0 - m. Retry with each such
    // source cut (on the frontier reached from the piece without passing
    // another cut) left uncut, which keeps the tie and every other cut.
    let frontier = |start: usize, nodes: &[Node], is_cut: &dyn Fn(usize) -> bool| {
        let (mut out, mut seen, mut stack) = (HashSet::new(), HashSet::new(), vec![start]);
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if n != start && is_cut(n) {
                out.insert(n);
            } else {
                stack.extend(nodes[n].kids.iter().copied());
            }
        }
        out
    };
    let cut_src: HashSet<usize> = cands.iter().map(|(_, p)| p.node).collect();
    let cut_sel: HashMap<usize, usize> = cands.iter().map(|&(d2, p)| (d2, p.node)).collect();
    let src_front = frontier(piece.node, src, &|n| cut_src.contains(&n));
    let read: HashSet<usize> = frontier(d, dag, &|n| cut_sel.contains_key(&n)).iter().map(|d2| cut_sel[d2]).collect();
    let upper: HashSet<usize> =
        src_front.iter().copied().filter(|&f| postorder(src, f).is_ok_and(|cone| cone.iter().any(|n| *n != f && read.contains(n)))).collect();
    if upper.is_empty() {
        return false;
    }
    let kept: Vec<(usize, Piece)> = cands.iter().copied().filter(|(_, p)| !upper.contains(&p.node)).collect();
    attempt(&kept)
}

/// [`prove_piece`] with the selected nodes `cands` cut at their pieces.
fn attempt_cuts(ctx: &Ctx, piece: Piece, cands: &[(usize, Piece)], src_cone: &[usize], sel_cone: &[usize], root: bool) -> bool {
    let Ctx { target, sel, vars, val_src, opts } = *ctx;
    let (src, dag) = (&sel.source.nodes, &sel.dag);
    let mut names: Vec<(String, i64)> = Vec::new();
    let mut operand: HashMap<usize, u16> = HashMap::new();
    let mut src_cuts: HashMap<usize, Cut> = HashMap::new();
    let mut sel_cuts: HashMap<usize, Cut> = HashMap::new();
    for &(d2, p2) in cands {
        let w = val_src[&p2.node][0].width();
        let op = match operand.get(&p2.node) {
            Some(&op) => op,
            None => {
                let op = match &src[p2.node].op {
                    Op::Leaf { text, .. } => match vars.iter().position(|(t, _)| t == text) {
                        Some(i) => i as u16,
                        None => return false,
                    },
                    _ => {
                        names.push((format!("cut#{}", p2.node), w as i64));
                        let op = (vars.len() + names.len() - 1) as u16;
                        src_cuts.insert(p2.node, Cut { operand: op, bits: None });
                        op
                    }
                };
                operand.insert(p2.node, op);
                op
            }
        };
        let whole = p2.lo == 0 && p2.hi + 1 == w;
        sel_cuts.insert(d2, Cut { operand: op, bits: (!whole).then_some((p2.hi, p2.lo)) });
    }
    let mut all: Vec<(&str, i64)> = vars.to_vec();
    all.extend(names.iter().map(|(n, w)| (n.as_str(), *w)));
    let w = val_src[&piece.node][0].width();
    let top = (piece.lo != 0 || piece.hi + 1 != w).then_some((piece.hi, piece.lo));
    let (Ok(a), Ok(b)) = (side(target, src, src_cone, &all, &src_cuts, top), side(target, dag, sel_cone, &all, &sel_cuts, None)) else { return false };
    if a.result_width != b.result_width {
        return false;
    }
    // A piece is often matched by a node inside a rule that agrees with it
    // only on the values its cut operands can take (an unclamped multiply):
    // edge values and many random cases refute such a match in
    // microseconds, where Z3 needs its whole budget; and an interior piece
    // gets a short budget, as failing one costs only its cut.
    if !root && refuted_at_edges(&a, &b) {
        return false;
    }
    let (budget, cases) = if root { (opts.budget, opts.cases) } else { (Budget { timeout_ms: opts.budget.timeout_ms.min(PIECE_MS), ..opts.budget }, opts.cases.max(PIECE_CASES)) };
    check_equal(&a, &b, budget, cases, opts.seed) == Equivalence::Proved
}

/// Whether `a` and `b` differ with every operand's elements (at 8 to 64
/// bits) all one edge value (the oracles' [`edge_values`]), or one operand's at one
/// value and the rest at another. An unclamped multiply differs from the
/// clamped one only at MIN x MIN, which random operands of 2048 bits
/// almost never hold in the same lane of both factors.
fn refuted_at_edges(a: &misaal_isa::Semantics, b: &misaal_isa::Semantics) -> bool {
    let widths = a.dag.operand_widths();
    for e in [8u32, 16, 32, 64] {
        let edges = edge_values(e);
        let fill = |w: u32, v: &BitVec| {
            let mut out = BitVec::zero(w);
            for bit in 0..w {
                out.set_bit(bit, v.bit(bit % e));
            }
            out
        };
        for (i, x) in edges.iter().enumerate() {
            for (j, y) in edges.iter().enumerate() {
                for odd in 0..widths.len() {
                    if i == j && odd > 0 {
                        break;
                    }
                    let ops: Vec<BitVec> = widths.iter().enumerate().map(|(k, &w)| fill(w, if k == odd { x } else { y })).collect();
                    if let (Ok(p), Ok(q)) = (a.eval(&ops), b.eval(&ops))
                        && p != q
                    {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// [`CASES`] random assignments of the leaves.
fn cases(vars: &[(&str, i64)], seed: u64) -> Vec<Vec<BitVec>> {
    let gen_cases = CaseGen::from_types(vars.iter().map(|(_, b)| Ty::Bv(*b as u32)).collect());
    let mut g = quickcheck::Gen::from_size_and_seed(64, seed ^ 0x6375_7473);
    (0..CASES).map(|_| gen_cases.case(&mut g)).collect()
}

/// Each node's value on each case; `None` when a node cannot be evaluated
/// (the whole proof then reports why).
fn values(target: &Target, nodes: &[Node], order: &[usize], vars: &[(&str, i64)], cases: &[Vec<BitVec>]) -> Option<HashMap<usize, Vec<BitVec>>> {
    let mut out: HashMap<usize, Vec<BitVec>> = HashMap::with_capacity(order.len());
    for &n in order {
        let vals: Vec<BitVec> = match &nodes[n].op {
            Op::Leaf { text, .. } => {
                let i = vars.iter().position(|(t, _)| t == text)?;
                cases.iter().map(|c| c[i].clone()).collect()
            }
            Op::Const { bits, value } => vec![BitVec::from_i128(*bits as u32, *value as i128); cases.len()],
            op => {
                let sem = semantics(target, op).ok()?;
                (0..cases.len())
                    .map(|c| {
                        let kids: Vec<&BitVec> = nodes[n].kids.iter().map(|k| &out[k][c]).collect();
                        sem.eval(&kids).ok()
                    })
                    .collect::<Option<_>>()?
            }
        };
        out.insert(n, vals);
    }
    Some(out)
}
