//! Expansions of mixed-width Halide ops, searched from their semantics.
//!
//! A Halide op whose vector operands are narrower than its result
//! (`widen_right_add(a: 2E, b: E)`, `widening_mul(a: E, b: E) -> 2E`, ...)
//! meets no x86 term in the enumeration when an operand is narrower than a
//! register (the units' inputs are whole 128-bit registers). Such an op is
//! rewritten here, at the Halide level, into one op whose operands and
//! result all have the result's type, over the operands widened by casts;
//! the lowering rules of that op and of the casts then chain.
//!
//! The right side is searched, not written: for every op of the library
//! with such operands, every same-type binary op `U` of the library (the
//! ops whose two operands and result are one type), every result sign and
//! every choice of cast for each operand is evaluated against the op on
//! random and edge inputs at probe widths, for each combination of the
//! op's sign generics. The first that agrees at every probe width of a
//! sign combination becomes a template ([`Split`]) over `?sign ?bw ?n`
//! (and `?s2`) restricted to the sign combinations it won; like every
//! legalization template, each of its instances is proved by the caller
//! and the written rule keeps exactly the proved ones.

use super::Split;
use misaal_isa::{BitVec, SpecLibrary};

/// A template's sign: a variable of the rule or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sign {
    Op,
    S2,
    Lit(i128),
}

impl Sign {
    fn text(self) -> String {
        match self {
            Sign::Op => "?sign".into(),
            Sign::S2 => "?s2".into(),
            Sign::Lit(v) => v.to_string(),
        }
    }
    fn at(self, s: i128, s2: i128) -> i128 {
        match self {
            Sign::Op => s,
            Sign::S2 => s2,
            Sign::Lit(v) => v,
        }
    }
}

/// One operand of the left side: its per-lane width as a multiple of `E`
/// (1 or 2) and its sign.
#[derive(Clone, Copy, Debug)]
struct Operand {
    mult: u32,
    sign: Sign,
}

/// A candidate right side: `U` at the result's width over each operand,
/// cast to the result's width (with `cast_sign`) where it is narrower.
#[derive(Clone, Debug)]
struct Candidate {
    u: String,
    /// Whether `U` takes a fourth generic (the sign of its second operand).
    u_s2: bool,
    sign: Sign,
    /// The sign of `U`'s second operand (its fourth generic) and of the
    /// second operand's cast, where not `sign`: a shift's amount may keep
    /// its own sign (see [`expansions`]).
    amt: Option<Sign>,
}

impl Candidate {
    fn amt(&self) -> Sign {
        self.amt.unwrap_or(self.sign)
    }
}

/// Width of an `E`-relative multiple, in template text.
fn width_text(mult: u32) -> &'static str {
    match mult {
        1 => "?bw",
        2 => "(* 2 ?bw)",
        _ => "(* 4 ?bw)",
    }
}

/// Deterministic inputs: random words, then all-ones, zero and the
/// sign-bit patterns of every lane width (the edges where signs differ).
pub(super) fn inputs(arity: usize, widths: &[u32], cases: usize, seed: u64) -> Vec<Vec<BitVec>> {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for c in 0..cases {
        let case: Vec<BitVec> = (0..arity)
            .map(|k| {
                let w = widths[k];
                match c {
                    0 => BitVec::ones(w),
                    1 => BitVec::zero(w),
                    // Odd cases: each 64-bit word shifted right by a random
                    // amount, so that lanes also hold small magnitudes (the
                    // values where saturation and clamps differ).
                    _ => {
                        let limbs: Vec<u64> = (0..w.div_ceil(64))
                            .map(|_| {
                                let v = next();
                                if c % 2 == 1 { v >> (next() % 64) } else { v }
                            })
                            .collect();
                        BitVec::from_limbs(w, &limbs)
                    }
                }
            })
            .collect();
        out.push(case);
    }
    out
}

/// The op's generics at a probe: `S`, `E`, `N` and `S2` by name.
fn generics_at(names: &[String], s: i128, e: i128, n: i128, s2: i128) -> Option<Vec<i128>> {
    names
        .iter()
        .map(|g| match g.as_str() {
            "S" => Some(s),
            "E" => Some(e),
            "N" => Some(n),
            "S2" => Some(s2),
            _ => None,
        })
        .collect()
}

/// The same-type binary ops: generics `<S, E, N>` or `<S, E, N, S2>`,
/// two operands and a result of `N*E` bits, lane-local.
pub(super) fn uniform_ops(halide: &SpecLibrary) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for op in halide.generic_names() {
        let Some(g) = halide.generic(op) else { continue };
        let names: Vec<&str> = g.generics.iter().map(|s| s.as_str()).collect();
        let s2 = match names.as_slice() {
            ["S", "E", "N"] => false,
            ["S", "E", "N", "S2"] => true,
            _ => continue,
        };
        let Ok(i) = halide.instantiate_signature(op, &if s2 { vec![0, 16, 8, 0] } else { vec![0, 16, 8] }) else { continue };
        if i.params.len() == 2 && i.params.iter().all(|p| p.ty.width() == 128) && i.ret.width() == 128 {
            out.push((op.to_string(), s2));
        }
    }
    // The plain wrapping ops first (the simplest right side wins), then
    // the rest in name order.
    let plain = ["add", "sub", "mul", "shl", "shr"];
    out.sort_by_key(|(op, _)| (plain.iter().position(|p| p == op).unwrap_or(plain.len()), op.clone()));
    out
}

/// Every expansion template the search finds.
pub fn expansions(halide: &SpecLibrary) -> Vec<Split> {
    let uniform = uniform_ops(halide);
    let mut out = Vec::new();
    for op in halide.generic_names() {
        let Some(g) = halide.generic(op) else { continue };
        let names: Vec<String> = g.generics.clone();
        let has_s2 = match names.iter().map(|s| s.as_str()).collect::<Vec<_>>().as_slice() {
            ["S", "E", "N"] => false,
            ["S", "E", "N", "S2"] => true,
            _ => continue,
        };
        // Operand and result widths at the probe E = 8, N = 4.
        let Some(probe) = generics_at(&names, 0, 8, 4, 0) else { continue };
        let Ok(sig) = halide.instantiate_signature(op, &probe) else { continue };
        if sig.params.len() != 2 || sig.ret.width() % 32 != 0 {
            continue;
        }
        let res_mult = sig.ret.width() / 32;
        let mults: Vec<u32> = sig.params.iter().map(|p| p.ty.width() / 32).collect();
        if mults.iter().any(|&m| !(1..=2).contains(&m)) || !(1..=2).contains(&res_mult) || (mults.iter().all(|&m| m == res_mult)) {
            continue;
        }
        // The second operand's sign is S2 where the op has one.
        let operands: Vec<Operand> = mults.iter().enumerate().map(|(k, &m)| Operand { mult: m, sign: if k == 1 && has_s2 { Sign::S2 } else { Sign::Op } }).collect();
        let combos: Vec<(i128, i128)> = if has_s2 { vec![(0, 0), (0, 1), (1, 0), (1, 1)] } else { vec![(0, 0), (1, 0)] };
        let mut cands = Vec::new();
        for (u, u_s2) in &uniform {
            for sign in [Sign::Op, Sign::Lit(0), Sign::Lit(1), Sign::S2] {
                if sign == Sign::S2 && !has_s2 {
                    continue;
                }
                cands.push(Candidate { u: u.clone(), u_s2: *u_s2, sign, amt: None });
            }
        }
        // For each sign combination, the first candidate agreeing at every probe width.
        let mut won: Vec<(usize, Vec<(i128, i128)>)> = Vec::new();
        for &(s, s2) in &combos {
            let Some(k) = cands.iter().position(|c| agrees(halide, op, &names, &operands, res_mult, c, s, s2)) else { continue };
            match won.iter_mut().find(|(j, _)| *j == k) {
                Some((_, v)) => v.push((s, s2)),
                None => won.push((k, vec![(s, s2)])),
            }
        }
        let several = won.len() > 1;
        // Where a winner is a shift-like `U` whose amount (a narrower
        // operand of sign ?s2) it reads at the op's sign, the same shape
        // with the amount kept at its own sign, for the sign combinations
        // where that differs and agrees too: a signed value shifted by an
        // unsigned amount otherwise shifts by a signed one (`shr<i16, S2
        // = 1>`), which no instruction does, though the amount, zero
        // extended, is never negative; kept at its sign it is `vpsravw`.
        let mut found: Vec<(Candidate, Vec<(i128, i128)>, String)> = Vec::new();
        for (j, (k, signs)) in won.into_iter().enumerate() {
            let suffix = if several { format!(".{}", j + 1) } else { String::new() };
            let c = cands[k].clone();
            if has_s2 && c.u_s2 && operands.get(1).is_some_and(|o| o.mult != res_mult && o.sign == Sign::S2) {
                let v = Candidate { amt: Some(Sign::S2), ..c.clone() };
                let own: Vec<(i128, i128)> = signs.iter().copied().filter(|&(s, s2)| c.sign.at(s, s2) != s2 && agrees(halide, op, &names, &operands, res_mult, &v, s, s2)).collect();
                if !own.is_empty() {
                    found.push((v, own, format!("{suffix}.amount")));
                }
            }
            found.push((c, signs, suffix));
        }
        for (c, signs, suffix) in found {
            let mut t = template(op, has_s2, &operands, res_mult, &c, &signs);
            t.name = format!("{}{suffix}", t.name);
            // The amount kept at its sign is for vectors by a vector: a
            // broadcast constant and one lane already have the forms above.
            if c.amt.is_some() {
                out.push(t);
                continue;
            }
            // A shift-like op (an amount of sign ?s2) by a broadcast
            // constant: the cast of the amount is the constant broadcast at
            // the wide type (no instruction), for the amounts below the
            // wide width (a widened i8 shifted right by 9 is meaningful;
            // below the narrow width only, it fell back to a lane loop);
            // each instance is proved like the rest.
            let cast_amount = format!("(cast (t ?s2 ?bw ?n) {} {} ?x1)", c.amt().text(), width_text(res_mult));
            if has_s2 && operands[1].mult != res_mult && t.rhs.contains(&cast_amount) {
                let mut b = t.clone();
                b.name = format!("{}.const", t.name);
                b.lhs = t.lhs.replace(" ?x1)", " (broadcast (t ?s2 ?bw ?n) ?c))");
                b.rhs = t.rhs.replace(&cast_amount, &format!("(broadcast (t {} {} ?n) ?c)", c.amt().text(), width_text(res_mult)));
                b.conds.push("(< ?c (* 2 ?bw))".into());
                b.free.push(("c".into(), (0..32).collect()));
                b.provenance = format!("{}; with a broadcast constant amount, its cast is the broadcast at the wide type", t.provenance);
                out.push(b);
            }
            // The scalar form (one lane, below any register's width): the
            // same expansion, where a Stmt's scalar code meets a vector
            // rule's operand.
            let mut one = t.clone();
            one.name = format!("{}.scalar", t.name);
            one.conds.retain(|c| !c.contains("(* ?n "));
            if let Some(n) = one.free.iter_mut().find(|(v, _)| v == "n") {
                n.1 = vec![1];
            }
            out.push(one);
            out.push(t);
        }
    }
    out
}

/// Whether candidate `c` equals `op` at signs (s, s2) on every probe width.
#[allow(clippy::too_many_arguments)]
fn agrees(halide: &SpecLibrary, op: &str, names: &[String], operands: &[Operand], res_mult: u32, c: &Candidate, s: i128, s2: i128) -> bool {
    let rs = c.sign.at(s, s2);
    let ra = c.amt().at(s, s2);
    for (e, n) in [(8i128, 8i128), (16, 8), (8, 16)] {
        let Some(g) = generics_at(names, s, e, n, s2) else { return false };
        let Ok((_, lhs)) = halide.instantiate(op, &g) else { return false };
        let w = res_mult as i128 * e;
        let ug = if c.u_s2 { vec![rs, w, n, ra] } else { vec![rs, w, n] };
        let Ok((_, u)) = halide.instantiate(&c.u, &ug) else { return false };
        let casts: Vec<Option<std::sync::Arc<misaal_isa::Semantics>>> = operands
            .iter()
            .enumerate()
            .map(|(k, o)| {
                if o.mult == res_mult {
                    return Ok(None);
                }
                halide.instantiate("cast", &[o.sign.at(s, s2), o.mult as i128 * e, n, if k == 1 { ra } else { rs }, w]).map(|(_, sem)| Some(sem))
            })
            .collect::<Result<_, _>>()
            .unwrap_or_else(|_| vec![]);
        if casts.len() != operands.len() {
            return false;
        }
        let widths: Vec<u32> = operands.iter().map(|o| (o.mult as i128 * e * n) as u32).collect();
        for case in inputs(2, &widths, 24, 0x6578_7061_6e64 ^ (e * 131 + n) as u64) {
            let args: Vec<&BitVec> = case.iter().collect();
            let Ok(want) = lhs.eval(&args) else { return false };
            let wide: Vec<BitVec> = case.iter().zip(&casts).map(|(v, c)| match c { Some(c) => c.eval(&[v]), None => Ok(v.clone()) }).collect::<Result<_, _>>().unwrap_or_default();
            if wide.len() != 2 {
                return false;
            }
            match u.eval(&[&wide[0], &wide[1]]) {
                Ok(got) if got == want => {}
                _ => return false,
            }
        }
    }
    true
}

/// The template of candidate `c` for `op`, over the sign combinations it won.
fn template(op: &str, has_s2: bool, operands: &[Operand], res_mult: u32, c: &Candidate, signs: &[(i128, i128)]) -> Split {
    let w = width_text(res_mult);
    let rs = c.sign.text();
    let ra = c.amt().text();
    let args: Vec<String> = operands
        .iter()
        .enumerate()
        .map(|(k, o)| {
            let v = format!("?x{k}");
            let to = if k == 1 { &ra } else { &rs };
            if o.mult == res_mult { v } else { format!("(cast (t {} {} ?n) {to} {w} {v})", o.sign.text(), width_text(o.mult)) }
        })
        .collect();
    let lhs_ty = if has_s2 { "(t ?sign ?bw ?n) ?s2".to_string() } else { "(t ?sign ?bw ?n)".to_string() };
    let lhs = format!("({op} {lhs_ty} ?x0 ?x1)");
    let u_ty = if c.u_s2 { format!("(t {rs} {w} ?n) {ra}") } else { format!("(t {rs} {w} ?n)") };
    let rhs = format!("({} {u_ty} {})", c.u, args.join(" "));
    let sign_dom: Vec<i128> = {
        let mut v: Vec<i128> = signs.iter().map(|x| x.0).collect();
        v.dedup();
        v
    };
    let mut free = vec![("sign".to_string(), sign_dom), ("bw".to_string(), vec![8, 16, 32]), ("n".to_string(), vec![4, 8, 16, 32, 64])];
    let mut conds = vec![format!("(>= (* ?n {w}) 128)"), format!("(<= (* ?n {w}) 1024)")];
    if has_s2 {
        let mut v: Vec<i128> = signs.iter().map(|x| x.1).collect();
        v.sort();
        v.dedup();
        free.push(("s2".to_string(), v));
        // Only the (sign, s2) pairs the search won, when not all four.
        if signs.len() == 2 && signs[0].0 != signs[1].0 && signs[0].1 != signs[1].1 {
            let rel = if signs.iter().all(|x| x.0 == x.1) { "(= ?sign ?s2)" } else { "(!= ?sign ?s2)" };
            conds.push(rel.into());
        }
    }
    let what = match c.sign {
        Sign::Op => "the op's sign",
        Sign::S2 => "the second operand's sign",
        Sign::Lit(0) => "unsigned",
        Sign::Lit(_) => "signed",
    };
    Split {
        op: op.to_string(),
        name: format!("synth.expand-{op}.{}", c.u),
        lhs,
        rhs,
        conds,
        free,
        provenance: format!(
            "phase legalize; expansion searched over the same-type binary ops and the operands' casts: `{op}` (operands of mixed width) is `{}` at the result's width, {what}, over its operands cast to that width (first candidate equal on random and edge inputs at three probe widths){}",
            c.u,
            if c.amt.is_some() { "; the same shape with the amount cast to, and read at, its own sign (?s2), also equal there" } else { "" }
        ),
    }
}

/// A constant of an amount template: `?c`, `?c - 1`, 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum K {
    C,
    CMinus1,
    Zero,
    One,
}

impl K {
    fn at(self, c: i128) -> i128 {
        match self {
            K::C => c,
            K::CMinus1 => c - 1,
            K::Zero => 0,
            K::One => 1,
        }
    }
    fn text(self) -> &'static str {
        match self {
            K::C => "?c",
            K::CMinus1 => "(- ?c 1)",
            K::Zero => "0",
            K::One => "1",
        }
    }
}

/// A right-side term over `?x0` at the left side's type.
#[derive(Clone, Debug)]
enum Tm {
    X,
    /// A shift-like op (a fourth generic, the amount's sign `?s2`) of a
    /// term by a broadcast amount.
    Shift(String, Box<Tm>, K),
    /// A same-type op of a term and a broadcast constant of its type.
    WithConst(String, Box<Tm>, K),
    Bin(String, Box<Tm>, Box<Tm>),
}

impl Tm {
    fn size(&self) -> usize {
        match self {
            Tm::X => 0,
            Tm::Shift(_, a, _) | Tm::WithConst(_, a, _) => 1 + a.size(),
            Tm::Bin(_, a, b) => 1 + a.size() + b.size(),
        }
    }
    fn text(&self) -> String {
        match self {
            Tm::X => "?x0".into(),
            Tm::Shift(op, a, k) => format!("({op} (t ?sign ?bw ?n) ?s2 {} (broadcast (t ?s2 ?bw ?n) {}))", a.text(), k.text()),
            Tm::WithConst(op, a, k) => format!("({op} (t ?sign ?bw ?n) {} (broadcast (t ?sign ?bw ?n) {}))", a.text(), k.text()),
            Tm::Bin(op, a, b) => format!("({op} (t ?sign ?bw ?n) {} {})", a.text(), b.text()),
        }
    }
    fn ops<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Tm::X => {}
            Tm::Shift(op, a, _) | Tm::WithConst(op, a, _) => {
                out.push(op);
                a.ops(out);
            }
            Tm::Bin(op, a, b) => {
                out.push(op);
                a.ops(out);
                b.ops(out);
            }
        }
    }
}

/// One probe of the amount search: signs, element width, lanes, amount.
#[derive(Clone, Copy)]
struct Probe {
    s: i128,
    s2: i128,
    e: i128,
    n: i128,
    c: i128,
}

pub(super) fn splat(e: i128, n: i128, v: i128) -> BitVec {
    vector(e, &vec![v; n as usize])
}

/// A vector of `e`-bit lanes with these values (lane 0 first), each
/// truncated to `e` bits.
pub(super) fn vector(e: i128, values: &[i128]) -> BitVec {
    let mut w = BitVec::zero((e * values.len() as i128) as u32);
    for (l, &v) in values.iter().enumerate() {
        let lane = BitVec::from_i128(e as u32, v);
        for b in 0..e as u32 {
            if lane.bit(b) {
                w.set_bit(l as u32 * e as u32 + b, true);
            }
        }
    }
    w
}

/// The values of `t` on each input at probe `p`, or `None` where an op
/// does not instantiate.
fn eval_tm(halide: &SpecLibrary, t: &Tm, p: Probe, xs: &[BitVec]) -> Option<Vec<BitVec>> {
    match t {
        Tm::X => Some(xs.to_vec()),
        Tm::Shift(op, a, k) => {
            let (_, sem) = halide.instantiate(op, &[p.s, p.e, p.n, p.s2]).ok()?;
            let amt = splat(p.e, p.n, k.at(p.c));
            eval_tm(halide, a, p, xs)?.iter().map(|v| sem.eval(&[v, &amt]).ok()).collect()
        }
        Tm::WithConst(op, a, k) => {
            let (_, sem) = halide.instantiate(op, &[p.s, p.e, p.n]).ok()?;
            let kv = splat(p.e, p.n, k.at(p.c));
            eval_tm(halide, a, p, xs)?.iter().map(|v| sem.eval(&[v, &kv]).ok()).collect()
        }
        Tm::Bin(op, a, b) => {
            let (_, sem) = halide.instantiate(op, &[p.s, p.e, p.n]).ok()?;
            let (va, vb) = (eval_tm(halide, a, p, xs)?, eval_tm(halide, b, p, xs)?);
            va.iter().zip(&vb).map(|(x, y)| sem.eval(&[x, y]).ok()).collect()
        }
    }
}

/// Expansions of the rounding shifts by a constant amount (Halide's
/// `rounding_shift_right(x, c)` for c > 1 meets no x86 term of depth 2):
/// the right side is searched over terms of the plain ops, two levels
/// deep: `U(p, q)` where `p` and `q` are `x`, a plain shift of `x` by `c`
/// or `c - 1`, or one of those combined with the constant 1 or 0 by a
/// same-type op. The smallest candidate equal to the op on random and
/// edge inputs at every probe (both signs, both amount signs, two widths,
/// three amounts) becomes a template over `?sign ?bw ?n ?s2 ?c`, c from 2.
pub fn amount_expansions(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let uniform = uniform_ops(halide);
    let plain_shift: Vec<String> = uniform.iter().filter(|(op, s2)| *s2 && !op.starts_with("rounding_")).map(|(op, _)| op.clone()).collect();
    let same: Vec<String> = uniform.iter().filter(|(_, s2)| !*s2).map(|(op, _)| op.clone()).collect();
    let mut out = Vec::new();
    for (op, s2) in &uniform {
        if !*s2 || !op.starts_with("rounding_") {
            continue;
        }
        let probes: Vec<Probe> = [(0, 0), (0, 1), (1, 0), (1, 1)]
            .iter()
            .flat_map(|&(s, s2)| [(16i128, 8i128), (32, 4)].into_iter().flat_map(move |(e, n)| [2i128, 3, e - 1].into_iter().map(move |c| Probe { s, s2, e, n, c })))
            .collect();
        // Inputs per probe width (shared by the candidates).
        let xs_of = |p: &Probe| -> Vec<BitVec> { inputs(1, &[(p.e * p.n) as u32], 24, 0x726f_756e_6421 ^ p.e as u64).into_iter().map(|mut v| v.remove(0)).collect() };
        let want: Vec<Option<Vec<BitVec>>> = probes
            .iter()
            .map(|p| {
                let (_, sem) = halide.instantiate(op, &[p.s, p.e, p.n, p.s2]).ok()?;
                let amt = splat(p.e, p.n, p.c);
                xs_of(p).iter().map(|x| sem.eval(&[x, &amt]).ok()).collect()
            })
            .collect();
        if want.iter().any(|w| w.is_none()) {
            continue;
        }
        // Level 1: x and its plain shifts; level 2: those with the constant
        // 1 or 0 (0 finds the rounding ops' own rounding: vpavgw against
        // zero is a rounding halve in one instruction).
        let mut atoms = vec![Tm::X];
        for sh in &plain_shift {
            for k in [K::C, K::CMinus1] {
                atoms.push(Tm::Shift(sh.clone(), Box::new(Tm::X), k));
            }
        }
        let level1 = atoms.clone();
        for a in &level1 {
            for v in &same {
                for k in [K::One, K::Zero] {
                    atoms.push(Tm::WithConst(v.clone(), Box::new(a.clone()), k));
                }
            }
        }
        // Observational equivalence at the first screen's probe: an atom
        // constant on every input, or equal to its own operand (an identity
        // like `add(a, 0)`), is dropped, and so is one equal to an earlier
        // atom with the same root op. Equal atoms with different roots stay:
        // `halving_add(a, 1)` is `rounding_halving_add(a, 0)`, and only the
        // second has a one-instruction lowering (vpavgw).
        let first = probes.iter().position(|p| p.s == 1 && p.s2 == 0 && p.e == 16 && p.c == 3).unwrap_or(0);
        let at_first = |t: &Tm| eval_tm(halide, t, probes[first], &xs_of(&probes[first]));
        let mut seen: Vec<(Vec<BitVec>, String)> = Vec::new();
        atoms.retain(|a| {
            let Some(v) = at_first(a) else { return false };
            let (root, operand) = match a {
                Tm::X => (String::new(), None),
                Tm::Shift(op, x, _) | Tm::WithConst(op, x, _) => (op.clone(), at_first(x)),
                Tm::Bin(op, ..) => (op.clone(), None),
            };
            if v.iter().all(|x| *x == v[0]) || operand.as_ref() == Some(&v) || seen.iter().any(|(w, r)| *w == v && *r == root) {
                return false;
            }
            seen.push((v, root));
            true
        });
        let mut cands: Vec<Tm> = Vec::new();
        for u in &same {
            for a in &atoms {
                for b in &atoms {
                    cands.push(Tm::Bin(u.clone(), Box::new(a.clone()), Box::new(b.clone())));
                }
            }
        }
        cands.extend(atoms.iter().cloned());
        cands.sort_by_key(|t| t.size());
        // A cheap first screen at one probe, then every probe.
        // Up to three expansions, each with another root op: the smallest
        // may use an op with no lowering at some width (halving_add at 32
        // bits), and extraction picks among the lowered ones.
        let mut roots: Vec<String> = Vec::new();
        for t in cands {
            if roots.len() == 3 {
                break;
            }
            let root = match &t {
                Tm::Bin(u, ..) | Tm::Shift(u, ..) | Tm::WithConst(u, ..) => u.clone(),
                Tm::X => continue,
            };
            if roots.contains(&root) {
                continue;
            }
            let check = |i: usize| eval_tm(halide, &t, probes[i], &xs_of(&probes[i])).as_ref() == want[i].as_ref();
            if !(check(first) && (0..probes.len()).all(check)) {
                continue;
            }
            roots.push(root);
            let mut ops = Vec::new();
            t.ops(&mut ops);
            out.push(Split {
                op: op.clone(),
                name: format!("synth.expand-{op}.{}", ops.join("-")),
                lhs: format!("({op} (t ?sign ?bw ?n) ?s2 ?x0 (broadcast (t ?s2 ?bw ?n) ?c))"),
                rhs: t.text(),
                conds: [vec!["(< ?c ?bw)".to_string()], regs.conds("?bw")].concat(),
                free: vec![
                    ("sign".into(), vec![0, 1]),
                    // 64 bits for the widened 32-bit multiply-shifts' rounding.
                    ("bw".into(), vec![16, 32, 64]),
                    ("n".into(), regs.lanes(&[16, 32, 64])),
                    ("s2".into(), vec![0, 1]),
                    ("c".into(), (2..64).collect()),
                ],
                provenance: format!(
                    "phase legalize; expansion searched over terms of the plain ops (shifts of x by c or c - 1, same-type ops with the constant 1 or 0, two levels): `{op}` by a constant c >= 2 is `{}` (candidate {} of the smallest with root `{}`, equal on random and edge inputs at 24 probes: both signs, both amount signs, widths 16 and 32, c = 2, 3 and the width - 1)",
                    ops.join(" "),
                    roots.len(),
                    roots.last().map(|s| s.as_str()).unwrap_or("")
                ),
            });
        }
    }
    out
}

/// Expansions of the narrowing casts (`cast`, wrapping, and
/// `saturating_cast`, from 2E to E bits) that no x86 term of the
/// enumeration meets (the packs saturate, and read their operands as
/// signed): the right side is searched over `saturating_cast(V(x,
/// broadcast k))`: every same-type op `V` at either sign, every constant
/// `k` among 0, 1, the all-ones of the narrow width and of the wide width,
/// and every sign of the saturating cast's operand and result, for each
/// element width (E = 8, 16, 32: the constants are numbers of the width) and
/// each pair of signs (at E = 32 for 64-bit lanes, whose `vpmovsqd` and
/// `vpmovusqd` saturate only within one sign). A `V` that leaves its
/// operand unchanged, or a right
/// side that is the left side's own op and types, is skipped. Up to three
/// that agree on random and edge inputs at three lane counts are kept
/// (extraction picks the one that lowers cheapest); like every template,
/// each instance is proved. Also the same-width casts, searched the same
/// way with the operand itself as the only candidate (they keep the bits).
pub fn narrowing_expansions(halide: &SpecLibrary) -> Vec<Split> {
    let same: Vec<String> = uniform_ops(halide).into_iter().filter(|(_, s2)| !*s2).map(|(op, _)| op).collect();
    let mut out = Vec::new();
    let letter = super::sign_letter;
    for e in [8i128, 16, 32] {
        let w = 2 * e;
        let consts = [0i128, 1, (1 << e) - 1, (1 << w) - 1];
        for lhs_op in ["cast", "saturating_cast"] {
            for (s, s2) in [(0i128, 0i128), (0, 1), (1, 0), (1, 1)] {
                let mut kept: Vec<String> = Vec::new();
                'search: for v in &same {
                    for &k in &consts {
                        for sv in [s, 1 - s] {
                            for sa in [1i128, 0] {
                                for sd in [s2, 1 - s2] {
                                    if lhs_op == "saturating_cast" && (sa, sd) == (s, s2) {
                                        continue;
                                    }
                                    let mut identity = true;
                                    let ok = [4i128, 8, 16].iter().all(|&n| {
                                        let Ok((_, lhs)) = halide.instantiate(lhs_op, &[s, w, n, s2, e]) else { return false };
                                        let Ok((_, vsem)) = halide.instantiate(v, &[sv, w, n]) else { return false };
                                        let Ok((_, sat)) = halide.instantiate("saturating_cast", &[sa, w, n, sd, e]) else { return false };
                                        let kv = splat(w, n, k);
                                        inputs(1, &[(w * n) as u32], 48, 0x6e61_7272 ^ n as u64).iter().all(|c| {
                                            let x = &c[0];
                                            match (lhs.eval(&[x]), vsem.eval(&[x, &kv])) {
                                                (Ok(want), Ok(m)) => {
                                                    identity &= m == *x;
                                                    sat.eval(&[&m]).ok() == Some(want)
                                                }
                                                _ => false,
                                            }
                                        })
                                    });
                                    if !ok || identity {
                                        continue;
                                    }
                                    let sign = |x: i128| if x == s { "?sign".to_string() } else { x.to_string() };
                                    let (sv_t, sa_t) = (sign(sv), sign(sa));
                                    let sd_t = if sd == s2 { "?s2".to_string() } else { sd.to_string() };
                                    let rhs = format!("(saturating_cast (t {sa_t} {w} ?n) {sd_t} {e} ({v} (t {sv_t} {w} ?n) ?x0 (broadcast (t {sv_t} {w} ?n) {k})))");
                                    if kept.contains(&rhs) {
                                        continue;
                                    }
                                    kept.push(rhs.clone());
                                    out.push(Split {
                                        op: lhs_op.into(),
                                        name: format!("synth.expand-{lhs_op}-{w}-{e}.{}{}.saturating_cast-{v}", letter(s), letter(s2)),
                                        lhs: format!("({lhs_op} (t ?sign {w} ?n) ?s2 {e} ?x0)"),
                                        rhs,
                                        conds: vec![format!("(>= (* ?n {w}) 256)"), format!("(<= (* ?n {w}) 1024)")],
                                        free: vec![("sign".into(), vec![s]), ("s2".into(), vec![s2]), ("n".into(), [4i128, 8, 16, 32, 64].into_iter().filter(|n| (256..=1024).contains(&(n * w))).collect())],
                                        provenance: format!(
                                            "phase legalize; expansion searched over saturating_cast(V(x, broadcast k)) (V a same-type op at either sign, k among 0, 1 and the all-ones of either width, both signs of the saturating cast): `{lhs_op}` {w} -> {e} bits is the saturating cast of `{v}` with {k} (equal on random and edge inputs at 4, 8 and 16 lanes)"
                                        ),
                                    });
                                    if kept.len() == 3 {
                                        break 'search;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // Same-width casts: the only candidate is the operand.
    for e in [8i128, 16, 32] {
        for (s, s2) in [(0i128, 1i128), (1, 0)] {
            let ok = [4i128, 8, 16].iter().all(|&n| {
                let Ok((_, c)) = halide.instantiate("cast", &[s, e, n, s2, e]) else { return false };
                inputs(1, &[(e * n) as u32], 24, 0x7265_696e ^ n as u64).iter().all(|x| c.eval(&[&x[0]]).ok().as_ref() == Some(&x[0]))
            });
            if ok {
                out.push(Split {
                    op: "cast".into(),
                    name: format!("synth.expand-cast-{e}.{}{}.operand", letter(s), letter(s2)),
                    lhs: format!("(cast (t ?sign {e} ?n) ?s2 {e} ?x0)"),
                    rhs: "?x0".into(),
                    conds: vec![format!("(>= (* ?n {e}) 128)"), format!("(<= (* ?n {e}) 2048)")],
                    free: vec![("sign".into(), vec![s]), ("s2".into(), vec![s2]), ("n".into(), vec![4, 8, 16, 32, 64, 128])],
                    provenance: format!("phase legalize; expansion searched (the operand the only candidate): a cast between {}{e} and {}{e} keeps every bit (equal on random and edge inputs at 4, 8 and 16 lanes)", letter(s), letter(s2)),
                });
            }
        }
    }
    // Names stay unique when a search keeps two with the same op.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for s in &mut out {
        let c = seen.entry(s.name.clone()).or_insert(0);
        *c += 1;
        if *c > 1 {
            s.name = format!("{}.{}", s.name, c);
        }
    }
    out
}

/// Expansions of unsigned 16-bit division by a constant c (no x86
/// instruction divides): the right side is searched over
/// `shr(mul_shift_right(x, broadcast m, 16), broadcast s)` (the high half
/// of a product, then a shift), for every c from 3 to 255 that is not a
/// power of two, every s below 16 and the one multiplier m = ceil(2^(16+s)
/// / c) that can floor every quotient for that s. A candidate is screened
/// on every u16 value in integer arithmetic, then checked against Halide's
/// `div` on every u16 value through the semantics; the smallest s that
/// passes is kept, one template per divisor (c is a number of the rule),
/// and each instance is proved. Where no 16-bit multiplier serves, the
/// 17-bit one's sum is halved by `halving_add` and, as a second template,
/// by `rounding_halving_add` with a multiplier one below (see the forms).
pub fn division_expansions(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let mut out = Vec::new();
    let lanes = 128i128;
    let Ok((_, div)) = halide.instantiate("div", &[0, 16, lanes]) else { return out };
    let Ok((_, msr)) = halide.instantiate("mul_shift_right", &[0, 16, lanes]) else { return out };
    let Ok((_, shr)) = halide.instantiate("shr", &[0, 16, lanes, 0]) else { return out };
    let all: Vec<BitVec> = (0..65536 / lanes)
        .map(|chunk| {
            let mut w = BitVec::zero(16 * lanes as u32);
            for l in 0..lanes {
                let v = (chunk * lanes + l) as u64;
                for b in 0..16 {
                    if v >> b & 1 == 1 {
                        w.set_bit((l * 16 + b) as u32, true);
                    }
                }
            }
            w
        })
        .collect();
    // Past 255, the divisors the signed and 32-bit division rules also
    // take (`divide::WIDE_DIVISORS`).
    for c in (3u64..=255).chain(super::divide::WIDE_DIVISORS.map(|c| c as u64)) {
        if c.is_power_of_two() {
            continue;
        }
        let cv = splat(16, lanes, c as i128);
        // Form 0: shr(mul_shift_right(x, m, 16), s) with m < 2^16. Where no
        // 16-bit m floors every quotient, the 17-bit multiplier 2^16 + m
        // needs the 17-bit sum x + mul_shift_right(x, m, 16), halved without
        // overflow: form 1 halves it with halving_add (m = the low 16 bits
        // of ceil(2^(16+s) / c)), form 2 with rounding_halving_add (its +1
        // made up by a multiplier one below: vpavgw, one instruction where
        // halving_add lowers to three). Both forms are kept when both floor
        // every quotient; extraction picks the cheaper at each width.
        let (mv_of, q) = (|m: u64| splat(16, lanes, m as i128), splat(16, lanes, 16));
        let Ok((_, havg)) = halide.instantiate("halving_add", &[0, 16, lanes]) else { return out };
        let Ok((_, ravg)) = halide.instantiate("rounding_halving_add", &[0, 16, lanes]) else { return out };
        let candidate = |form: u8, s: u32| -> Option<u64> {
            let m = ((1u64 << (16 + s)) + c - 1) / c;
            let m = match form {
                0 if m < 1 << 16 => m,
                1 if s >= 1 && (1 << 16..1 << 17).contains(&m) => m - (1 << 16),
                2 if s >= 1 && (1 << 16 | 1..1 << 17).contains(&m) => m - (1 << 16) - 1,
                _ => return None,
            };
            let screen = |x: u64| match form {
                0 => (x * m) >> (16 + s),
                1 => ((x + ((x * m) >> 16)) >> 1) >> (s - 1),
                _ => ((x + ((x * m) >> 16) + 1) >> 1) >> (s - 1),
            };
            if !(0u64..65536).all(|x| screen(x) == x / c) {
                return None;
            }
            let shift = if form == 0 { s } else { s - 1 };
            let (mv, sv) = (mv_of(m), splat(16, lanes, shift as i128));
            let ok = all.iter().all(|x| {
                let want = div.eval(&[x, &cv]).ok();
                let hi = msr.eval(&[x, &mv, &q]).ok();
                let hi = match form {
                    0 => hi,
                    1 => hi.and_then(|h| havg.eval(&[x, &h]).ok()),
                    _ => hi.and_then(|h| ravg.eval(&[x, &h]).ok()),
                };
                let got = hi.and_then(|h| if shift == 0 { Some(h) } else { shr.eval(&[&h, &sv]).ok() });
                want.is_some() && want == got
            });
            ok.then_some(m)
        };
        let smallest = |form: u8| (0u32..16).find_map(|s| candidate(form, s).map(|m| (form, m, s)));
        let found: Vec<(u8, u64, u32)> = match smallest(0) {
            Some(f) => vec![f],
            None => [1u8, 2].into_iter().filter_map(smallest).collect(),
        };
        for (form, m, s) in found {
            let high = format!("(mul_shift_right (t 0 16 ?n) ?x0 (broadcast (t 0 16 ?n) {m}) (broadcast (t 0 16 ?n) 16))");
            let (inner, shift) = match form {
                0 => (high, s),
                1 => (format!("(halving_add (t 0 16 ?n) ?x0 {high})"), s - 1),
                _ => (format!("(rounding_halving_add (t 0 16 ?n) ?x0 {high})"), s - 1),
            };
            let rhs = if shift == 0 { inner } else { format!("(shr (t 0 16 ?n) 0 {inner} (broadcast (t 0 16 ?n) {shift}))") };
            out.push(Split {
                op: "div".into(),
                name: if form == 2 { format!("synth.expand-div-u16-{c}.rounding") } else { format!("synth.expand-div-u16-{c}") },
                lhs: format!("(div (t 0 16 ?n) ?x0 (broadcast (t 0 16 ?n) {c}))"),
                rhs,
                conds: regs.conds("16"),
                free: vec![("n".into(), regs.lanes(&[16]))],
                provenance: format!(
                    "phase legalize; expansion searched over shr(mul_shift_right(x, m, 16), s) and, where no 16-bit m fits, shr(halving_add(x, mul_shift_right(x, m, 16)), s - 1) and shr(rounding_halving_add(x, mul_shift_right(x, m, 16)), s - 1): u16 division by {c} is form {form} with m = {m}, s = {s} (the smallest s whose multiplier floors every u16 quotient, checked on all 65,536 values against Halide's div)"
                ),
            });
        }
    }
    out
}

/// Expansions of `mod` by a power-of-two constant c: the right side is
/// searched over `V(x, broadcast k)` (V a same-type op, k among c - 1, c
/// and c + 1), equal to Halide's (Euclidean) `mod` on random and edge
/// inputs at both signs, widths 16 and 32 and c = 2, 16, 256; the first
/// that agrees everywhere becomes a template over c (powers of two from 2
/// to 2^14), each instance proved.
pub fn modulo_expansions(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let same: Vec<String> = uniform_ops(halide).into_iter().filter(|(_, s2)| !*s2).map(|(op, _)| op).collect();
    let ks: [(&str, i128); 3] = [("(- ?c 1)", -1), ("?c", 0), ("(+ ?c 1)", 1)];
    let probes: Vec<(i128, i128, i128, i128)> =
        [0i128, 1].iter().flat_map(|&s| [(16i128, 8i128), (32, 4)].into_iter().flat_map(move |(e, n)| [2i128, 16, 256].into_iter().map(move |c| (s, e, n, c)))).collect();
    for v in &same {
        for (kt, kd) in ks {
            let ok = probes.iter().all(|&(s, e, n, c)| {
                let (Ok((_, m)), Ok((_, u))) = (halide.instantiate("mod", &[s, e, n]), halide.instantiate(v, &[s, e, n])) else { return false };
                let (cv, kv) = (splat(e, n, c), splat(e, n, c + kd));
                inputs(1, &[(e * n) as u32], 48, 0x6d6f_64 ^ (e + c) as u64).iter().all(|x| {
                    let want = m.eval(&[&x[0], &cv]).ok();
                    want.is_some() && want == u.eval(&[&x[0], &kv]).ok()
                })
            });
            if ok {
                return vec![Split {
                    op: "mod".into(),
                    name: format!("synth.expand-mod-pow2.{v}"),
                    lhs: "(mod (t ?sign ?bw ?n) ?x0 (broadcast (t ?sign ?bw ?n) ?c))".into(),
                    rhs: format!("({v} (t ?sign ?bw ?n) ?x0 (broadcast (t ?sign ?bw ?n) {kt}))"),
                    conds: regs.conds("?bw"),
                    free: vec![
                        ("sign".into(), vec![0, 1]),
                        ("bw".into(), vec![16, 32]),
                        ("n".into(), regs.lanes(&[16, 32])),
                        ("c".into(), (1..15).map(|k| 1i128 << k).collect()),
                    ],
                    provenance: format!("phase legalize; expansion searched over V(x, broadcast k), k among c - 1, c, c + 1: `mod` by a power of two c is `{v}` with {kt} (equal on random and edge inputs at both signs, widths 16 and 32, c = 2, 16, 256)"),
                }];
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_widen_right_expansions() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontends/halide");
        let halide = misaal_isa::SpecLibrary::load_dir(&dir).expect("halide library");
        let ex = super::expansions(&halide);
        let texts: Vec<String> = ex.iter().map(|s| format!("{} => {}", s.lhs, s.rhs)).collect();
        let ex: Vec<_> = ex.into_iter().chain(super::amount_expansions(&halide, crate::legalize::Registers::x86())).chain(super::narrowing_expansions(&halide)).chain(super::division_expansions(&halide, crate::legalize::Registers::x86())).chain(super::modulo_expansions(&halide, crate::legalize::Registers::x86())).collect();
        for s in &ex {
            eprintln!("{}: {} => {} | {:?} {:?}", s.name, s.lhs, s.rhs, s.free, s.conds);
        }
        assert!(texts.iter().any(|t| t == "(widen_right_add (t ?sign ?bw ?n) ?x0 ?x1) => (add (t ?sign (* 2 ?bw) ?n) ?x0 (cast (t ?sign ?bw ?n) ?sign (* 2 ?bw) ?x1))"), "{texts:#?}");
        // The rounding halve against zero (vpavgw's form) is found for the
        // rounding shift, and for the divisors that need a 17-bit multiplier.
        let rhs_of = |name: &str| ex.iter().find(|s| s.name == name).map(|s| s.rhs.clone());
        assert_eq!(
            rhs_of("synth.expand-rounding_shift_right.rounding_halving_add-shr").as_deref(),
            Some("(rounding_halving_add (t ?sign ?bw ?n) (shr (t ?sign ?bw ?n) ?s2 ?x0 (broadcast (t ?s2 ?bw ?n) (- ?c 1))) (broadcast (t ?sign ?bw ?n) 0))")
        );
        let d25 = rhs_of("synth.expand-div-u16-25.rounding").expect("div by 25, rounding form");
        assert!(d25.starts_with("(shr (t 0 16 ?n) 0 (rounding_halving_add"), "{d25}");
        assert!(rhs_of("synth.expand-div-u16-25").is_some_and(|r| r.contains("(halving_add")));
        assert!(rhs_of("synth.expand-div-u16-9.rounding").is_none(), "a 16-bit multiplier serves 9");
        assert!(rhs_of("synth.expand-div-u16-1000").is_some_and(|r| r.contains("(mul_shift_right")), "u16 by 1000, past 255");
        // A widening shift by a constant reaches amounts up to the wide
        // width (an i8 widened and shifted right by 9).
        let c = ex.iter().find(|s| s.name.starts_with("synth.expand-widening_shift_right.") && s.name.ends_with(".const")).expect("a constant widening shift");
        assert!(c.conds.iter().any(|k| k == "(< ?c (* 2 ?bw))"), "{:?}", c.conds);
        // A signed value widened and shifted by an unsigned amount: the
        // amount stays unsigned (an instruction's shift), beside the form
        // reading it signed.
        let a = ex.iter().find(|s| s.name.starts_with("synth.expand-widening_shift_right.") && s.name.ends_with(".amount")).expect("the amount at its own sign");
        assert_eq!(a.rhs, "(shr (t ?sign (* 2 ?bw) ?n) ?s2 (cast (t ?sign ?bw ?n) ?sign (* 2 ?bw) ?x0) (cast (t ?s2 ?bw ?n) ?s2 (* 2 ?bw) ?x1))");
        assert!(a.free.contains(&("sign".to_string(), vec![1])) && a.free.contains(&("s2".to_string(), vec![0])), "{:?}", a.free);
        // u64 to i32, saturating: clamped to the u32 range, then the signed
        // saturating narrowing (`vpmovsqd`); at 256 to 1,024 bits.
        let u = ex.iter().find(|s| s.name == "synth.expand-saturating_cast-64-32.ui.saturating_cast-min").expect("u64 -> i32");
        assert_eq!(u.rhs, "(saturating_cast (t 1 64 ?n) ?s2 32 (min (t ?sign 64 ?n) ?x0 (broadcast (t ?sign 64 ?n) 4294967295)))");
        assert!(u.free.contains(&("n".to_string(), vec![4, 8, 16])), "{:?}", u.free);
    }
}
