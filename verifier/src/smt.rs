//! Z3: the linked version, and the bit-vector encoding of unrolled
//! semantics, shared by every proof.
//!
//! A query that times out or that Z3 cannot decide is `Unknown`, never a
//! proof.

use misaal_isa::dag::{BvOp, CmpOp, Dag, Node, NodeId, SatKind};
use misaal_isa::{BitVec, Semantics};
use z3::ast::{Ast, BV, Bool};
use std::collections::HashMap;

/// The linked libz3's version as `(major, minor, build, revision)`, parsed
/// from `Z3_get_full_version`.
pub fn z3_version() -> (u32, u32, u32, u32) {
    let full = z3::full_version();
    let nums: Vec<u32> = full
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(4)
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    let g = |i: usize| nums.get(i).copied().unwrap_or(0);
    (g(0), g(1), g(2), g(3))
}

/// The libz3 that `scripts/setup.sh` installs.
pub const EXPECTED_Z3: (u32, u32, u32) = (5, 4, 0);

fn bv_const(v: &BitVec) -> BV {
    // Z3_mk_bv_numeral takes the least significant bit first.
    let bits: Vec<bool> = (0..v.width()).map(|i| v.bit(i)).collect();
    BV::from_bits(&bits).expect("non-empty constant")
}

fn bit(b: &Bool) -> BV {
    b.ite(&BV::from_u64(1, 1), &BV::from_u64(0, 1))
}

/// Brings a shift amount of any width to width `w`, saturating at `w` so
/// that over-wide amounts keep their meaning.
fn amount(a: &BV, w: u32) -> BV {
    let aw = a.get_size();
    if aw < w {
        return a.zero_ext(w - aw);
    }
    let low = if aw == w { a.clone() } else { a.extract(w - 1, 0) };
    if aw == w {
        return low;
    }
    let limit = BV::from_u64(w as u64, aw);
    a.bvuge(&limit).ite(&BV::from_u64(w as u64, w), &low)
}

fn sat(x: &BV, kind: SatKind, n: u32) -> BV {
    let w = x.get_size();
    let ones = |k: u32| BitVec::unsigned_max(k);
    match kind {
        SatKind::Signed if n >= w => x.sign_ext(n - w),
        SatKind::Signed => {
            let max = bv_const(&BitVec::signed_max(n).sext(w));
            let min = bv_const(&BitVec::signed_min(n).sext(w));
            x.bvsgt(&max).ite(&max.extract(n - 1, 0), &x.bvslt(&min).ite(&min.extract(n - 1, 0), &x.extract(n - 1, 0)))
        }
        SatKind::Unsigned if n >= w => x.zero_ext(n - w),
        SatKind::Unsigned => {
            let max = bv_const(&ones(n).zext(w));
            x.bvugt(&max).ite(&bv_const(&ones(n)), &x.extract(n - 1, 0))
        }
        SatKind::SignedToUnsigned => {
            let neg = x.bvslt(BV::from_u64(0, w));
            let kept = if n >= w {
                x.zero_ext(n - w)
            } else {
                let max = bv_const(&ones(n).zext(w));
                x.bvsgt(&max).ite(&bv_const(&ones(n)), &x.extract(n - 1, 0))
            };
            neg.ite(&BV::from_u64(0, n), &kept)
        }
    }
}

/// Encodes every node of `dag` over the given operand terms; returns one
/// term per node (ids are topological, so one sweep suffices).
pub fn encode(dag: &Dag, operands: &[BV]) -> Vec<BV> {
    encode_with(dag, operands, |_, t| t)
}

/// `encode`, letting `subst` replace each node's term as it is made (used to
/// share terms proved equal).
pub fn encode_with(dag: &Dag, operands: &[BV], mut subst: impl FnMut(NodeId, BV) -> BV) -> Vec<BV> {
    let mut t: Vec<BV> = Vec::with_capacity(dag.len());
    for (id, n) in dag.nodes().iter().enumerate() {
        let g = |i: NodeId| t[i as usize].clone();
        let e = match n {
            Node::Operand(i) => operands[*i as usize].clone(),
            Node::Const(c) => bv_const(c),
            Node::Slice { src, hi, lo } => g(*src).extract(*hi, *lo),
            Node::DynSlice { src, offset, width } => {
                let s = g(*src);
                s.bvlshr(amount(&g(*offset), s.get_size())).extract(width - 1, 0)
            }
            Node::Not(a) => g(*a).bvnot(),
            Node::Neg(a) => g(*a).bvneg(),
            Node::Bin(op, a, b) => {
                let (a, b) = (g(*a), g(*b));
                match op {
                    BvOp::Add => a.bvadd(&b),
                    BvOp::Sub => a.bvsub(&b),
                    BvOp::Mul => a.bvmul(&b),
                    BvOp::UDiv => a.bvudiv(&b),
                    BvOp::URem => a.bvurem(&b),
                    BvOp::And => a.bvand(&b),
                    BvOp::Or => a.bvor(&b),
                    BvOp::Xor => a.bvxor(&b),
                    BvOp::Shl => a.bvshl(amount(&b, a.get_size())),
                    BvOp::LShr => a.bvlshr(amount(&b, a.get_size())),
                    BvOp::AShr => a.bvashr(amount(&b, a.get_size())),
                }
            }
            Node::Cmp(op, a, b) => {
                let (a, b) = (g(*a), g(*b));
                bit(&match op {
                    CmpOp::Eq => a.eq(&b),
                    CmpOp::Ne => a.eq(&b).not(),
                    CmpOp::Ult => a.bvult(&b),
                    CmpOp::Ule => a.bvule(&b),
                    CmpOp::Slt => a.bvslt(&b),
                    CmpOp::Sle => a.bvsle(&b),
                })
            }
            Node::Ite(c, x, y) => g(*c).eq(BV::from_u64(1, 1)).ite(&g(*x), &g(*y)),
            Node::Ext { signed, src, width } => {
                let s = g(*src);
                let k = width - s.get_size();
                if *signed { s.sign_ext(k) } else { s.zero_ext(k) }
            }
            Node::Sat { kind, src, width } => sat(&g(*src), *kind, *width),
            Node::Concat(h, l) => g(*h).concat(g(*l)),
        };
        let e = subst(id as NodeId, e);
        t.push(e);
    }
    t
}

/// What one solver query may spend. The timeout is wall-clock and so
/// depends on the machine; `rlimit` counts Z3's own resource units and gives
/// the same verdict on every machine (0 means no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub timeout_ms: u32,
    pub rlimit: u32,
}

impl From<u32> for Budget {
    fn from(timeout_ms: u32) -> Self {
        Budget { timeout_ms, rlimit: 0 }
    }
}

impl Budget {
    /// Half of each limit, never none: half of an rlimit of 1 is still 1,
    /// not 0 (which is no limit at all).
    fn half(self) -> Budget {
        let half = |x: u32| if x == 0 { 0 } else { (x / 2).max(1) };
        Budget { timeout_ms: half(self.timeout_ms), rlimit: half(self.rlimit) }
    }

    pub(crate) fn solver(self) -> z3::Solver {
        let solver = z3::Solver::new();
        let mut p = z3::Params::new();
        p.set_u32("timeout", self.timeout_ms);
        if self.rlimit > 0 {
            p.set_u32("rlimit", self.rlimit);
        }
        solver.set_params(&p);
        solver
    }
}

fn check(budget: Budget, claim: &Bool) -> z3::SatResult {
    let solver = budget.solver();
    solver.assert(claim.not());
    solver.check()
}

/// Terms of `b` proved equal to terms of `a` (equivalence sweeping): nodes
/// with equal values on random inputs are proved equal with small queries,
/// bottom-up, and `b` is encoded over the shared terms. A proof of the whole
/// then no longer has to rediscover them through adders.
fn sweep(a: &Semantics, b: &Semantics, ops: &[BV], ta: &[BV], budget: Budget) -> Vec<BV> {
    const CASES: usize = 24;
    let widths: Vec<misaal_isa::ast::Ty> = a.dag.operand_widths().iter().map(|&w| misaal_isa::ast::Ty::Bv(w)).collect();
    let cases = crate::differential::CaseGen::from_types(widths);
    let mut g = quickcheck::Gen::from_size_and_seed(64, 0x5eed_5eed);
    let mut sig_a: Vec<u64> = vec![0xcbf2_9ce4_8422_2325; a.dag.len()];
    let mut sig_b: Vec<u64> = vec![0xcbf2_9ce4_8422_2325; b.dag.len()];
    let mix = |h: &mut u64, v: &BitVec| {
        for &x in v.limbs() {
            *h = (*h ^ x).wrapping_mul(0x100_0000_01b3);
        }
        *h = (*h ^ v.width() as u64).wrapping_mul(0x100_0000_01b3);
    };
    for _ in 0..CASES {
        let c = cases.case(&mut g);
        for (h, v) in sig_a.iter_mut().zip(a.eval_nodes(&c)) {
            mix(h, &v);
        }
        for (h, v) in sig_b.iter_mut().zip(b.eval_nodes(&c)) {
            mix(h, &v);
        }
    }
    let mut by_sig: std::collections::HashMap<u64, NodeId> = std::collections::HashMap::new();
    for (i, &h) in sig_a.iter().enumerate() {
        by_sig.entry(h).or_insert(i as NodeId);
    }
    encode_with(&b.dag, ops, |id, term| {
        let Some(&i) = by_sig.get(&sig_b[id as usize]) else { return term };
        let other = &ta[i as usize];
        if other == &term || matches!(b.dag.node(id), Node::Operand(_) | Node::Const(_)) {
            return term;
        }
        // A failed or slow lemma only costs the sharing, never soundness.
        let lemma = Budget { timeout_ms: budget.timeout_ms.min(500), ..budget };
        match check(lemma, &other.eq(&term)) {
            z3::SatResult::Unsat => other.clone(),
            _ => term,
        }
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Equivalence {
    Proved,
    /// Operand values on which the two differ.
    Differ(Vec<BitVec>),
    /// Timeout or an undecided query: not a proof.
    Unknown(String),
}

/// The bits `hi..=lo` of `s`'s result, keeping only their cone of influence.
fn result_slice(s: &Semantics, hi: u32, lo: u32) -> Semantics {
    let mut dag = s.dag.clone();
    let mut whole: Option<NodeId> = None;
    for lane in &s.lanes {
        whole = Some(match whole {
            None => lane.root,
            Some(low) => dag.concat(lane.root, low),
        });
    }
    let part = narrow(&mut dag, whole.expect("lanes"), hi, lo, &mut HashMap::new());
    let (dag, roots) = dag.compact(&[part]);
    Semantics { dag, lanes: vec![misaal_isa::Lane { lo: 0, width: hi - lo + 1, root: roots[0] }], result_width: hi - lo + 1 }
}

/// Bits `hi..=lo` of `n`, with the slice pushed through the operations
/// whose result bits depend only on the same bits of their operands
/// (bitwise ops, selects, concatenation). Not through add, sub or mul from
/// bit 0, though that holds too: Z3 then loses the sign-extension facts
/// that decide the mutants of `vpmullw`, and times out. A whole-register `vpor` or `vpand` otherwise keeps
/// every lane of both operands in one lane's cone, and the slices of a wide
/// result stop being small or alike.
fn narrow(dag: &mut Dag, n: NodeId, hi: u32, lo: u32, memo: &mut HashMap<(NodeId, u32, u32), NodeId>) -> NodeId {
    narrow_at(dag, n, hi, lo, memo, 0)
}

/// [`narrow`] at recursion depth `depth`; past [`NARROW_DEPTH`] it slices
/// without pushing, so a deep chain (a long reduction) cannot exhaust the
/// stack of a worker thread.
fn narrow_at(dag: &mut Dag, n: NodeId, hi: u32, lo: u32, memo: &mut HashMap<(NodeId, u32, u32), NodeId>, depth: u32) -> NodeId {
    if lo == 0 && hi + 1 == dag.width(n) {
        return n;
    }
    if let Some(&m) = memo.get(&(n, hi, lo)) {
        return m;
    }
    if depth > NARROW_DEPTH {
        return dag.slice(n, hi, lo);
    }
    let out = match dag.node(n).clone() {
        Node::Slice { src, lo: l0, .. } => narrow_at(dag, src, hi + l0, lo + l0, memo, depth + 1),
        Node::Concat(h, l) => {
            let lw = dag.width(l);
            if hi < lw {
                narrow_at(dag, l, hi, lo, memo, depth + 1)
            } else if lo >= lw {
                narrow_at(dag, h, hi - lw, lo - lw, memo, depth + 1)
            } else {
                let (x, y) = (narrow_at(dag, h, hi - lw, 0, memo, depth + 1), narrow_at(dag, l, lw - 1, lo, memo, depth + 1));
                dag.concat(x, y)
            }
        }
        Node::Bin(op @ (BvOp::And | BvOp::Or | BvOp::Xor), a, b) => {
            let (x, y) = (narrow_at(dag, a, hi, lo, memo, depth + 1), narrow_at(dag, b, hi, lo, memo, depth + 1));
            dag.bin(op, x, y)
        }
        Node::Not(a) => {
            let x = narrow_at(dag, a, hi, lo, memo, depth + 1);
            dag.not(x)
        }
        Node::Ite(c, t, e) => {
            let (x, y) = (narrow_at(dag, t, hi, lo, memo, depth + 1), narrow_at(dag, e, hi, lo, memo, depth + 1));
            dag.ite(c, x, y)
        }
        _ => dag.slice(n, hi, lo),
    };
    memo.insert((n, hi, lo), out);
    out
}

const NARROW_DEPTH: u32 = 2_000;

/// The shape of a slice's cone with each operand's bit positions made
/// relative to the lowest one it reads. Two slices with one key pose the same
/// query up to renaming operand bits, so one proof covers both: this is how
/// a 512-bit SIMD rule costs one lane's proof.
fn cone_key(x: &Semantics, y: &Semantics) -> String {
    use std::fmt::Write;
    let mut base: Vec<u32> = vec![u32::MAX; x.dag.operand_widths().len()];
    for s in [x, y] {
        for n in s.dag.nodes() {
            if let Node::Slice { src, lo, .. } = n
                && let Node::Operand(i) = s.dag.node(*src)
            {
                base[*i as usize] = base[*i as usize].min(*lo);
                continue;
            }
            // An operand read whole by anything but a slice pins its bits.
            for c in n.children() {
                if let Node::Operand(i) = s.dag.node(c) {
                    base[*i as usize] = 0;
                }
            }
        }
    }
    // Numbered in DFS post-order from the root, so the key does not depend
    // on the order in which shared nodes were created.
    let mut key = String::new();
    for s in [x, y] {
        let mut num: std::collections::HashMap<NodeId, usize> = std::collections::HashMap::new();
        let mut stack: Vec<(NodeId, bool)> = vec![(s.lanes[0].root, false)];
        while let Some((id, done)) = stack.pop() {
            if num.contains_key(&id) {
                continue;
            }
            let n = s.dag.node(id);
            let leaf = matches!(n, Node::Slice { src, .. } if matches!(s.dag.node(*src), Node::Operand(_)));
            if !done && !leaf {
                stack.push((id, true));
                for c in n.children().into_iter().rev() {
                    stack.push((c, false));
                }
                continue;
            }
            let k = num.len();
            num.insert(id, k);
            let c = |x: &NodeId| num[x];
            let _ = match n {
                Node::Slice { src, hi, lo } if leaf => {
                    let Node::Operand(i) = s.dag.node(*src) else { unreachable!() };
                    write!(key, "L{i}+{}:{};", lo - base[*i as usize], hi - lo + 1)
                }
                Node::Operand(i) => write!(key, "O{i}@{};", base[*i as usize]),
                Node::Const(v) => write!(key, "K{v}:{};", v.width()),
                Node::Slice { src, hi, lo } => write!(key, "S{}[{hi}:{lo}];", c(src)),
                Node::DynSlice { src, offset, width } => write!(key, "D{},{},{width};", c(src), c(offset)),
                Node::Not(a) => write!(key, "N{};", c(a)),
                Node::Neg(a) => write!(key, "G{};", c(a)),
                Node::Bin(op, a, b) => write!(key, "{op:?}{},{};", c(a), c(b)),
                Node::Cmp(op, a, b) => write!(key, "{op:?}{},{};", c(a), c(b)),
                Node::Ite(p, a, b) => write!(key, "I{},{},{};", c(p), c(a), c(b)),
                Node::Ext { signed, src, width } => write!(key, "E{signed}{},{width};", c(src)),
                Node::Sat { kind, src, width } => write!(key, "T{kind:?}{},{width};", c(src)),
                Node::Concat(h, l) => write!(key, "C{},{};", c(h), c(l)),
            };
        }
        key.push('|');
    }
    key
}

/// The operand bits a semantics reads, as (operand, bit) pairs; `None` when
/// there are more than `limit` of them.
fn read_bits(sems: [&Semantics; 2], limit: usize) -> Option<Vec<(usize, u32)>> {
    let widths = sems[0].dag.operand_widths();
    let mut read: Vec<Vec<bool>> = widths.iter().map(|&w| vec![false; w as usize]).collect();
    for s in sems {
        for n in s.dag.nodes() {
            if let Node::Slice { src, hi, lo } = n
                && let Node::Operand(i) = s.dag.node(*src)
            {
                read[*i as usize][*lo as usize..=*hi as usize].iter_mut().for_each(|b| *b = true);
                continue;
            }
            for c in n.children() {
                if let Node::Operand(i) = s.dag.node(c) {
                    read[*i as usize].iter_mut().for_each(|b| *b = true);
                }
            }
        }
    }
    let bits: Vec<(usize, u32)> =
        read.iter().enumerate().flat_map(|(i, r)| r.iter().enumerate().filter(|(_, b)| **b).map(move |(k, _)| (i, k as u32))).collect();
    (bits.len() <= limit).then_some(bits)
}

/// Cones that read at most this many operand bits are decided by running
/// both sides on every input instead of asking Z3: 2^20 evaluations take
/// about a second, while Z3 needs tens of seconds to relate a 16-bit divider
/// to a multiply-high (unsigned division by a constant).
const EXHAUSTIVE_BITS: usize = 20;

/// Decides a small cone by exhaustion; `None` when it reads too many bits.
/// Both evaluations are the evaluator the Z3 encoding is tested against, so
/// a proof by exhaustion is as strong as an `unsat`.
fn prove_exhaustively(a: &Semantics, b: &Semantics) -> Option<Equivalence> {
    let bits = read_bits([a, b], EXHAUSTIVE_BITS)?;
    let widths = a.dag.operand_widths();
    let mut ops: Vec<BitVec> = widths.iter().map(|&w| BitVec::zero(w)).collect();
    for m in 0u64..1 << bits.len() {
        for (k, &(i, bit)) in bits.iter().enumerate() {
            ops[i].set_bit(bit, m >> k & 1 == 1);
        }
        let (x, y) = (a.eval(&ops).ok()?, b.eval(&ops).ok()?);
        if x != y {
            return Some(Equivalence::Differ(ops));
        }
    }
    Some(Equivalence::Proved)
}

/// Proves that two semantics over the same operands compute the same result
/// on every input. Wide results are cut into slices (8 to 64 bits, whichever
/// leaves the least work); each query holds only its slice's cone of
/// influence, slices whose cones match up to operand bit positions share one
/// proof (`cone_key`), and together the slices prove the whole. A cone that
/// reads at most `EXHAUSTIVE_BITS` operand bits is decided by evaluating it
/// on every input.
pub fn prove_equivalent(a: &Semantics, b: &Semantics, budget: impl Into<Budget>) -> Equivalence {
    let budget = budget.into();
    let widths = a.dag.operand_widths();
    if widths != b.dag.operand_widths() || a.result_width != b.result_width {
        return Equivalence::Differ(Vec::new());
    }
    // Z3 hash-conses terms: when both encodings are the same term, the two
    // compute the same function and there is nothing to solve.
    {
        let ops: Vec<BV> = widths.iter().enumerate().map(|(i, &w)| BV::new_const(format!("op{i}"), w)).collect();
        let whole = |s: &Semantics| {
            let t = encode(&s.dag, &ops);
            s.lanes.iter().map(|l| t[l.root as usize].clone()).reduce(|low, high| high.concat(&low)).expect("lanes")
        };
        if whole(a) == whole(b) {
            return Equivalence::Proved;
        }
    }
    // Regrouped min/max reductions: equal by normal form, where Z3 would
    // bit-blast two select chains and time out.
    if crate::ac::equal_up_to_minmax(a, b) {
        return Equivalence::Proved;
    }
    let w = a.result_width;
    if w <= 8 {
        return prove_whole(a, b, budget);
    }
    // For each slice width, the distinct cones to prove.
    let mut best: Option<(u64, Vec<(Semantics, Semantics)>)> = None;
    for chunk in [64u32, 32, 16, 8] {
        if chunk >= w || !w.is_multiple_of(chunk) {
            continue;
        }
        let mut seen = std::collections::HashSet::new();
        let mut todo = Vec::new();
        for k in 0..w / chunk {
            let (lo, hi) = (k * chunk, k * chunk + chunk - 1);
            let (x, y) = (result_slice(a, hi, lo), result_slice(b, hi, lo));
            if seen.insert(cone_key(&x, &y)) {
                todo.push((x, y));
            }
        }
        let cost = todo.len() as u64 * chunk as u64;
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, todo));
        }
    }
    let Some((_, todo)) = best else { return prove_whole(a, b, budget) };
    let mut unknown = None;
    let operands = format!("{widths:?}{budget:?}");
    for (x, y) in &todo {
        match prove_slice(x, y, budget, &operands) {
            Equivalence::Proved => {}
            d @ Equivalence::Differ(_) => return d,
            u @ Equivalence::Unknown(_) => unknown = Some(u),
        }
    }
    unknown.unwrap_or(Equivalence::Proved)
}

/// Slice verdicts already reached in this process, by operand widths,
/// budget and [`cone_key`]: translation validation proves the same lane
/// cone for every register-sized piece of a value, and the rule verifier
/// for every instantiation that differs only in where its lanes sit. Only
/// `Proved` and `Unknown` are kept; a difference is re-derived, as its
/// counterexample names this query's operands.
static SLICE_VERDICTS: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, Equivalence>>> = std::sync::LazyLock::new(Default::default);

fn prove_slice(x: &Semantics, y: &Semantics, budget: Budget, operands: &str) -> Equivalence {
    let key = format!("{operands}|{}", cone_key(x, y));
    if let Some(v) = SLICE_VERDICTS.lock().expect("slice verdicts").get(&key) {
        return v.clone();
    }
    let v = prove_whole(x, y, budget);
    if !matches!(v, Equivalence::Differ(_)) {
        SLICE_VERDICTS.lock().expect("slice verdicts").insert(key, v.clone());
    }
    v
}

fn prove_whole(a: &Semantics, b: &Semantics, budget: Budget) -> Equivalence {
    if let Some(verdict) = prove_exhaustively(a, b) {
        return verdict;
    }
    // A division by a constant: linear over the integers, hopeless for
    // bit-blasting past 16 bits (see `integers`).
    let divides = crate::integers::divides(a, b);
    if divides && let Some(v @ (Equivalence::Proved | Equivalence::Differ(_))) = crate::integers::prove(a, b, budget) {
        return v;
    }
    let widths = a.dag.operand_widths();
    let ops: Vec<BV> = widths.iter().enumerate().map(|(i, &w)| BV::new_const(format!("op{i}"), w)).collect();
    let ta = encode(&a.dag, &ops);
    let tb = sweep(a, b, &ops, &ta, budget);
    let whole = |s: &Semantics, t: &[BV]| s.lanes.iter().map(|l| t[l.root as usize].clone()).reduce(|low, high| high.concat(&low)).expect("lanes");
    let claim = whole(a, &ta).eq(whole(b, &tb));
    // A claim with products cut, proved under its facts in half the budget.
    let proved_cut = |(cut, facts): (Bool, Vec<Bool>)| {
        let solver = budget.half().solver();
        facts.iter().for_each(|f| solver.assert(f));
        solver.assert(cut.not());
        solver.check() == z3::SatResult::Unsat
    };
    // The claim with its products cut (see `products`); what that does
    // not prove goes on as it was.
    let mut products = crate::products::products(&a.dag, &ta);
    products.extend(crate::products::products(&b.dag, &tb));
    if crate::products::abstract_products(&claim, &products).is_some_and(proved_cut) {
        return Equivalence::Proved;
    }
    // A wide product one side does in pieces: both sides as sums of digit
    // products, those cut (see `digits`); what that does not prove goes on
    // as it was.
    if crate::digits::has_wide_product(&a.dag) || crate::digits::has_wide_product(&b.dag) {
        // Exact digits first (a quick counterexample when the low digits
        // are read with different signs), then modular ones.
        for exact in [true, false] {
            let mut prods = Vec::new();
            let da = crate::digits::encode(&a.dag, &ops, exact, &mut prods);
            let db = crate::digits::encode(&b.dag, &ops, exact, &mut prods);
            let expanded = whole(a, &da).eq(whole(b, &db));
            if crate::digits::cut(&expanded, &prods).is_some_and(proved_cut) {
                return Equivalence::Proved;
            }
        }
    }
    let solver = budget.solver();
    solver.assert(claim.not());
    let started = std::time::Instant::now();
    match solver.check() {
        z3::SatResult::Unsat => Equivalence::Proved,
        z3::SatResult::Sat => {
            let m = solver.get_model().expect("a model for sat");
            let vals = ops
                .iter()
                .zip(widths)
                .map(|(o, &w)| {
                    let v = m.eval(o, true).expect("operand value");
                    let bits: Vec<u8> = (0..w.div_ceil(8))
                        .map(|k| {
                            let hi = (k * 8 + 7).min(w - 1);
                            m.eval(&v.extract(hi, k * 8), true).and_then(|b| b.as_u64()).unwrap_or(0) as u8
                        })
                        .collect();
                    BitVec::from_bytes_le(w, &bits)
                })
                .collect();
            Equivalence::Differ(vals)
        }
        z3::SatResult::Unknown => {
            let why = unknown_reason(solver.get_reason_unknown().unwrap_or_else(|| "unknown".into()), budget, started.elapsed());
            // Tried first where the cone divides.
            if !divides && let Some(v @ (Equivalence::Proved | Equivalence::Differ(_))) = crate::integers::prove(a, b, budget) {
                return v;
            }
            Equivalence::Unknown(why)
        }
    }
}

/// Z3's reason for an `unknown`, with an exhausted resource limit said as
/// [`RLIMIT_REASON`](crate::verdicts::RLIMIT_REASON) whichever way Z3 put
/// it: its SAT back end stops with `canceled`, as a timeout does. Well
/// before the wall-clock timeout, only the rlimit can have stopped it. The
/// verdict cache keeps an exhausted rlimit (the same query stops there
/// again) and never a timeout.
fn unknown_reason(why: String, budget: Budget, elapsed: std::time::Duration) -> String {
    let early = elapsed.as_millis() < u128::from(budget.timeout_ms) / 2;
    if budget.rlimit > 0 && why.contains("canceled") && early && !why.contains(crate::verdicts::RLIMIT_REASON) {
        format!("{} ({why})", crate::verdicts::RLIMIT_REASON)
    } else {
        why
    }
}

/// Evaluates the Z3 encoding of `sem` at concrete operands, to cross-check
/// the encoder against the evaluator on a specific input.
pub fn evaluate(sem: &Semantics, operands: &[BitVec]) -> Option<BitVec> {
    let ops: Vec<BV> = operands.iter().map(bv_const).collect();
    let t = encode(&sem.dag, &ops);
    let whole = sem.lanes.iter().map(|l| t[l.root as usize].clone()).reduce(|low, high| high.concat(&low))?;
    let w = whole.get_size();
    let mut bytes = Vec::with_capacity(w.div_ceil(8) as usize);
    for k in 0..w.div_ceil(64) {
        let hi = (k * 64 + 63).min(w - 1);
        let v = whole.extract(hi, k * 64).simplify().as_u64()?;
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.truncate(w.div_ceil(8) as usize);
    Some(BitVec::from_bytes_le(w, &bytes))
}

/// Outcome of a concretization search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Concretization {
    /// The candidate (by index) that equals the target on every input.
    Found(usize),
    /// Z3 proved that no candidate fits.
    NoneFits,
    Unknown(String),
}

/// MISAAL's `choose*`: is there a choice among `candidates` such that, for
/// all inputs, `target` equals it? One query: a selector `s` exists such
/// that for all operands the chosen candidate agrees with the target.
pub fn concretize(target: &Semantics, candidates: &[&Semantics], timeout_ms: u32) -> Concretization {
    let widths = target.dag.operand_widths();
    let fits: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].dag.operand_widths() == widths && candidates[i].result_width == target.result_width)
        .collect();
    if fits.is_empty() {
        return Concretization::NoneFits;
    }
    let ops: Vec<BV> = widths.iter().enumerate().map(|(i, &w)| BV::new_const(format!("op{i}"), w)).collect();
    let whole = |s: &Semantics| {
        let t = encode(&s.dag, &ops);
        s.lanes.iter().map(|l| t[l.root as usize].clone()).reduce(|low, high| high.concat(&low)).expect("lanes")
    };
    let sel_bits = (usize::BITS - fits.len().leading_zeros()).max(1);
    let sel = BV::new_const("choose", sel_bits);
    let goal = whole(target);
    let mut chosen = whole(candidates[fits[fits.len() - 1]]);
    for k in (0..fits.len() - 1).rev() {
        chosen = sel.eq(BV::from_u64(k as u64, sel_bits)).ite(&whole(candidates[fits[k]]), &chosen);
    }
    let in_range = sel.bvult(BV::from_u64(fits.len() as u64, sel_bits));
    let bounds: Vec<&dyn z3::ast::Ast> = ops.iter().map(|o| o as &dyn z3::ast::Ast).collect();
    let body = z3::ast::forall_const(&bounds, &[], &goal.eq(&chosen));
    let solver = z3::Solver::new();
    let mut p = z3::Params::new();
    p.set_u32("timeout", timeout_ms);
    solver.set_params(&p);
    solver.assert(&in_range);
    solver.assert(&body);
    match solver.check() {
        z3::SatResult::Sat => {
            let m = solver.get_model().expect("model");
            let k = m.eval(&sel, true).and_then(|v| v.as_u64()).unwrap_or(0) as usize;
            Concretization::Found(fits[k.min(fits.len() - 1)])
        }
        z3::SatResult::Unsat => Concretization::NoneFits,
        z3::SatResult::Unknown => Concretization::Unknown(solver.get_reason_unknown().unwrap_or_else(|| "unknown".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_z3_is_the_one_setup_installs() {
        let (ma, mi, b, _) = z3_version();
        assert_eq!((ma, mi, b), EXPECTED_Z3, "linked Z3 is {}; run scripts/setup.sh", z3::full_version());
    }

    #[test]
    fn linked_z3_solves_a_bitvector_query() {
        // Catches a mismatch between the bindings' enum numbering and the library.
        let s = z3::Solver::new();
        let x = BV::new_const("x", 8);
        s.assert(x.bvadd(BV::from_u64(1, 8)).eq(BV::from_u64(0, 8)));
        assert_eq!(s.check(), z3::SatResult::Sat);
        let m = s.get_model().expect("model");
        assert_eq!(m.eval(&x, true).and_then(|v| v.as_u64()), Some(255));
    }

    fn lib(src: &str) -> misaal_isa::SpecLibrary {
        misaal_isa::SpecLibrary::from_sources(&[("t.sema".into(), src.into())]).unwrap()
    }

    #[test]
    fn encoding_agrees_with_the_evaluator_on_counterexamples() {
        let l = lib("instr a(x: bv16, n: bv8) -> bv16 [x86 sse2 nop]\ndst := SaturateS16(SignExtend32(x) * 3) >>s n\n\
                     instr b(x: bv16, n: bv8) -> bv16 [x86 sse2 nop]\ndst := SaturateS16(SignExtend32(x) * 3) >>u n\n");
        let (sa, sb) = (l.get("a").unwrap().1, l.get("b").unwrap().1);
        match prove_equivalent(sa, sb, 10_000) {
            Equivalence::Differ(ops) => assert_ne!(sa.eval(&ops).unwrap(), sb.eval(&ops).unwrap(), "Z3's witness must separate them concretely"),
            other => panic!("expected a difference, got {other:?}"),
        }
    }

    #[test]
    fn concretization_picks_the_candidate_that_fits() {
        let l = lib("instr t(x: bv8, y: bv8) -> bv8 [x86 sse2 nop]\ndst := (x | y) - (x & y)\n\
                     instr c0(x: bv8, y: bv8) -> bv8 [x86 sse2 nop]\ndst := x + y\n\
                     instr c1(x: bv8, y: bv8) -> bv8 [x86 sse2 nop]\ndst := x ^ y\n\
                     instr c2(x: bv8, y: bv8) -> bv8 [x86 sse2 nop]\ndst := x - y\n");
        let g = |n: &str| l.get(n).unwrap().1.clone();
        let (t, c0, c1, c2) = (g("t"), g("c0"), g("c1"), g("c2"));
        assert_eq!(concretize(&t, &[&c0, &c1, &c2], 10_000), Concretization::Found(1));
        assert_eq!(concretize(&t, &[&c0, &c2], 10_000), Concretization::NoneFits);
    }

    #[test]
    fn proves_a_true_identity_and_rejects_a_false_one() {
        let l = lib("instr a(x: bv8) -> bv8 [x86 sse2 nop]\ndst := SaturateSU8(SignExtend16(x))\n\
                     instr b(x: bv8) -> bv8 [x86 sse2 nop]\ndst := x <s 0 ? 0 : x\n\
                     instr c(x: bv8) -> bv8 [x86 sse2 nop]\ndst := x <u 0x80 ? x : 0\n\
                     instr d(x: bv8) -> bv8 [x86 sse2 nop]\ndst := x <=u 0x80 ? x : 0\n");
        let g = |n: &str| l.get(n).unwrap().1.clone();
        assert_eq!(prove_equivalent(&g("a"), &g("b"), 10_000), Equivalence::Proved);
        assert_eq!(prove_equivalent(&g("b"), &g("c"), 10_000), Equivalence::Proved);
        assert!(matches!(prove_equivalent(&g("c"), &g("d"), 10_000), Equivalence::Differ(_)));
    }

    /// Unsigned division by 9 is a multiply-high by 0xE38F and a shift by 3
    /// on every u16; each 16-bit lane reads 16 operand bits, so the proof is
    /// by exhaustion. One wrong magic number must give a real counterexample.
    #[test]
    fn small_cones_are_decided_by_exhaustion() {
        let l = lib("instr div9(x: bv32) -> bv32 [x86 sse2 nop]\n\
                     FOR j := 0 to 1\n    i := j*16\n    dst[i+15:i] := x[i+15:i] /u 9\nENDFOR\n\
                     instr magic(x: bv32) -> bv32 [x86 sse2 nop]\n\
                     FOR j := 0 to 1\n    i := j*16\n    tmp[31:0] := ZeroExtend32(x[i+15:i]) * 0xE38F\n    dst[i+15:i] := ZeroExtend16(tmp[31:19])\nENDFOR\n\
                     instr wrong(x: bv32) -> bv32 [x86 sse2 nop]\n\
                     FOR j := 0 to 1\n    i := j*16\n    tmp[31:0] := ZeroExtend32(x[i+15:i]) * 0xE38E\n    dst[i+15:i] := ZeroExtend16(tmp[31:19])\nENDFOR\n");
        let g = |n: &str| l.get(n).unwrap().1.clone();
        // An rlimit of 1 makes every Z3 query `unknown`: only exhaustion can prove.
        let starved = Budget { timeout_ms: 10_000, rlimit: 1 };
        assert_eq!(prove_equivalent(&g("div9"), &g("magic"), starved), Equivalence::Proved);
        let Equivalence::Differ(ops) = prove_equivalent(&g("div9"), &g("wrong"), starved) else { panic!("a wrong magic number proved") };
        assert_ne!(g("div9").eval(&ops).unwrap(), g("wrong").eval(&ops).unwrap());
    }

    /// A `canceled` from Z3 counts as an exhausted rlimit only when an
    /// rlimit was set and the wall clock was far from its timeout.
    #[test]
    fn half_a_budget_is_never_no_limit() {
        assert_eq!(Budget { timeout_ms: 20_000, rlimit: 1 }.half(), Budget { timeout_ms: 10_000, rlimit: 1 });
        assert_eq!(Budget { timeout_ms: 1, rlimit: 0 }.half(), Budget { timeout_ms: 1, rlimit: 0 });
        assert_eq!(Budget { timeout_ms: 0, rlimit: 7 }.half(), Budget { timeout_ms: 0, rlimit: 3 });
    }

    #[test]
    fn canceled_early_under_an_rlimit_is_the_rlimit() {
        let r = |rlimit, ms| unknown_reason("canceled".into(), Budget { timeout_ms: 10_000, rlimit }, std::time::Duration::from_millis(ms));
        assert!(r(50_000_000, 80).contains(crate::verdicts::RLIMIT_REASON));
        assert_eq!(r(0, 80), "canceled", "no rlimit: a timeout or an interrupt");
        assert_eq!(r(50_000_000, 9_990), "canceled", "at the timeout: the wall clock");
        let other = unknown_reason("incomplete quantifiers".into(), Budget { timeout_ms: 10_000, rlimit: 5 }, std::time::Duration::ZERO);
        assert_eq!(other, "incomplete quantifiers");
    }

    /// A cone over more bits than exhaustion allows still goes to Z3.
    #[test]
    fn wide_cones_still_need_z3() {
        let l = lib("instr m(x: bv32, y: bv32) -> bv32 [x86 sse2 nop]\ndst := x * y\n\
                     instr n(x: bv32, y: bv32) -> bv32 [x86 sse2 nop]\ndst := y * x\n");
        let g = |n: &str| l.get(n).unwrap().1.clone();
        let starved = Budget { timeout_ms: 10_000, rlimit: 1 };
        let Equivalence::Unknown(why) = prove_equivalent(&g("m"), &g("n"), starved) else { panic!("decided with an rlimit of 1") };
        // What the verdict cache keys an exhausted budget on.
        assert!(why.contains(crate::verdicts::RLIMIT_REASON), "{why}");
        assert_eq!(prove_equivalent(&g("m"), &g("n"), 10_000), Equivalence::Proved);
    }
}
