//! The 32-bit multiply-shifts (`mul_shift_right`, `rounding_mul_shift_right`
//! by a broadcast q; the quantized kernels' requantizing multiply is the
//! rounding one on i32 by 31), searched from the semantics. x86 has no
//! 32x32 -> high-32 multiply, and the enumeration (depth 2) cannot reach
//! the product-of-even-lanes sequence, so these had no lowering.
//!
//! The grammar: the 64-bit products of the even dwords through one
//! widening multiply P, and of the odd dwords after a one-operand move M;
//! each product plus an optional broadcast constant c (64-bit add A); the
//! bits q.. placed into the low dword of the even products' quadwords (L)
//! and the high dword of the odd ones' (H); one dword join B at an
//! immediate; then a saturation fix-up among a few forms. Each piece is
//! found in stages, each the cheapest (measured throughput, then name)
//! equal to its role, stated through the Halide semantics where there is
//! one:
//! - P: the even lanes' `widening_mul` (sign of the op);
//! - M: P of the moved operands is the odd lanes' `widening_mul`;
//! - A: Halide's 64-bit `add`;
//! - L, H, B: found on `mul_shift_right` (c none): L's low dwords and H's
//!   high dwords are the op's even and odd lanes, B joins them, on every
//!   lane that does not saturate (the op's result is not MIN or MAX);
//! - c: the first of none, 2^0 .. 2^62 with which the join equals the op
//!   (rounding or not) on the unsaturated lanes;
//! - fix-up: none, or `T(J, sat, B(G(0, A(r_e, K)), G(0, A(r_o, K))))`
//!   with G the 64-bit sign mask (Halide `shr` by 63 from a zero operand),
//!   T a three-operand instruction, K none or a power of two, and `sat`
//!   either MAX xor B(G(0, p_e), G(0, p_o)) (X Halide's `xor`) or MAX.
//!   The sign-of-p form comes first: it is right for every 64-bit p, so
//!   Z3 needs no fact about the product (for i32 the MAX form passes the
//!   tests only because no product overflows downwards; rulesets/x86_hand.egg's
//!   note says such a clamp times out). The first candidate equal to the
//!   op on every random and edge input (MIN*MIN, MAX*MIN, zeros, +-1) is
//!   kept. The signed rounding by 32 is found but unknown to Z3 within
//!   60 s (its "no saturation" needs the product's range), so not written.
//!
//! Like every legalization template each instance is proved by the
//! caller, which keeps exactly the proved ones.

use super::Split;
use misaal_isa::{BitVec, Semantics, SpecLibrary, ast::Ty};
use std::collections::HashMap;
use std::sync::Arc;

/// An instruction, at one immediate where it takes one.
#[derive(Clone)]
struct Ins {
    name: String,
    imm: Option<(i128, u32)>,
    sem: Arc<Semantics>,
}

impl Ins {
    fn eval(&self, args: &[&BitVec]) -> Option<BitVec> {
        let imm = self.imm.map(|(v, w)| BitVec::from_i128(w, v));
        let mut v: Vec<&BitVec> = args.to_vec();
        v.extend(imm.as_ref());
        self.sem.eval(&v).ok()
    }
    fn text(&self, args: &[&str]) -> String {
        let imm = self.imm.map(|(v, _)| format!(" {v}")).unwrap_or_default();
        format!("(x86 {} {}{imm})", self.name, args.join(" "))
    }
}

/// An optional move: `None` is the operand itself.
fn apply(m: &Option<Ins>, x: &BitVec) -> Option<BitVec> {
    match m {
        Some(m) => m.eval(&[x]),
        None => Some(x.clone()),
    }
}

fn text1(m: &Option<Ins>, x: &str) -> String {
    m.as_ref().map_or(x.to_string(), |m| m.text(&[x]))
}

/// The saturation fix-up.
#[derive(Clone)]
struct Fix {
    /// The 64-bit sign mask from a zero first operand.
    g: Ins,
    /// Some: the saturated value is MAX xor the product's sign mask.
    x: Option<Ins>,
    k: Option<u64>,
    t: Ins,
}

/// A found right side over vectors of `n` 32-bit lanes.
#[derive(Clone)]
struct Found {
    n: u32,
    sign: i128,
    p: Ins,
    m: Ins,
    a: Ins,
    l: Option<Ins>,
    h: Option<Ins>,
    b: Ins,
    c: Option<u64>,
    fix: Option<Fix>,
}

fn splat(w: u32, e: u32, v: u64) -> BitVec {
    let mut out = BitVec::zero(w);
    for j in 0..w / e {
        for b in 0..e {
            out.set_bit(j * e + b, (v >> b) & 1 == 1);
        }
    }
    out
}

/// Lanes `first, first + 2, ...` of 32-bit lanes.
fn every_other(x: &BitVec, first: u32) -> BitVec {
    let n = x.width() / 32;
    let mut out = BitVec::zero(x.width() / 2);
    for (k, j) in (first..n).step_by(2).enumerate() {
        for b in 0..32 {
            out.set_bit(k as u32 * 32 + b, x.bit(j * 32 + b));
        }
    }
    out
}

impl Found {
    fn max(&self) -> u64 {
        if self.sign == 1 { 0x7fff_ffff } else { 0xffff_ffff }
    }
    fn plus(&self, x: &BitVec, c: Option<u64>) -> Option<BitVec> {
        match c {
            Some(c) => self.a.eval(&[x, &splat(x.width(), 64, c)]),
            None => Some(x.clone()),
        }
    }
    /// The products of the even and the odd lanes.
    fn products(&self, a: &BitVec, b: &BitVec) -> Option<(BitVec, BitVec)> {
        let (ma, mb) = (self.m.eval(&[a])?, self.m.eval(&[b])?);
        Some((self.p.eval(&[a, b])?, self.p.eval(&[&ma, &mb])?))
    }
    fn join(&self, re: &BitVec, ro: &BitVec) -> Option<BitVec> {
        self.b.eval(&[&apply(&self.l, re)?, &apply(&self.h, ro)?])
    }
    fn eval(&self, a: &BitVec, b: &BitVec) -> Option<BitVec> {
        let (pe, po) = self.products(a, b)?;
        let (re, ro) = (self.plus(&pe, self.c)?, self.plus(&po, self.c)?);
        let j = self.join(&re, &ro)?;
        let Some(f) = &self.fix else { return Some(j) };
        let w = a.width();
        let zero = BitVec::zero(w);
        let sign = |x: &BitVec| f.g.eval(&[&zero, x]);
        let over = self.b.eval(&[&sign(&self.plus(&re, f.k)?)?, &sign(&self.plus(&ro, f.k)?)?])?;
        let max = splat(w, 32, self.max());
        let sat = match &f.x {
            Some(x) => x.eval(&[&max, &self.b.eval(&[&sign(&pe)?, &sign(&po)?])?])?,
            None => max,
        };
        f.t.eval(&[&j, &sat, &over])
    }
    fn text(&self) -> String {
        let (w, n) = (self.n * 32, self.n);
        let b64 = |c: u64| format!("(broadcast (t 0 64 {}) {c})", w / 64);
        let plus = |x: String, c: Option<u64>| match c {
            Some(c) => self.a.text(&[&x, &b64(c)]),
            None => x,
        };
        let pe = self.p.text(&["?a", "?b"]);
        let po = self.p.text(&[&self.m.text(&["?a"]), &self.m.text(&["?b"])]);
        let (re, ro) = (plus(pe.clone(), self.c), plus(po.clone(), self.c));
        let j = self.b.text(&[&text1(&self.l, &re), &text1(&self.h, &ro)]);
        let Some(f) = &self.fix else { return j };
        let sign = |x: &str| f.g.text(&[&b64(0), x]);
        let over = self.b.text(&[&sign(&plus(re.clone(), f.k)), &sign(&plus(ro.clone(), f.k))]);
        let max = format!("(broadcast (t {} 32 {n}) {})", self.sign, self.max());
        let sat = match &f.x {
            Some(x) => x.text(&[&max, &self.b.text(&[&sign(&pe), &sign(&po)])]),
            None => max,
        };
        f.t.text(&[&j, &sat, &over])
    }
    fn names(&self) -> Vec<String> {
        let mut v = vec![&self.p, &self.m, &self.a, &self.b].into_iter().map(|i| i.name.clone()).collect::<Vec<_>>();
        v.extend(self.l.iter().chain(&self.h).map(|i| i.name.clone()));
        if let Some(f) = &self.fix {
            v.extend([f.g.name.clone(), f.t.name.clone()]);
            v.extend(f.x.iter().map(|i| i.name.clone()));
        }
        v.sort();
        v.dedup();
        v
    }
}

/// Inputs: every pair of edge values at every lane (both parities), then
/// random lanes, some of small magnitude.
fn cases(n: u32) -> Vec<(BitVec, BitVec)> {
    let edges: [u32; 8] = [0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff, 0x8000_0001, 1 << 30, 0xc000_0000];
    let lanes = |f: &dyn Fn(u32) -> u32| {
        let mut v = BitVec::zero(n * 32);
        for j in 0..n {
            let x = f(j);
            for b in 0..32 {
                v.set_bit(j * 32 + b, (x >> b) & 1 == 1);
            }
        }
        v
    };
    let mut out = Vec::new();
    for &e in &edges {
        for rot in 0..edges.len() {
            out.push((lanes(&|_| e), lanes(&|j| edges[(rot + j as usize) % edges.len()])));
        }
    }
    let mut x = 0x6d75_6c73_6872u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = x as u32;
        if x >> 60 < 4 { v >> ((x >> 32) % 31) } else { v }
    };
    for _ in 0..48 {
        let a: Vec<u32> = (0..n).map(|_| next()).collect();
        let b: Vec<u32> = (0..n).map(|_| next()).collect();
        out.push((lanes(&|j| a[j as usize]), lanes(&|j| b[j as usize])));
    }
    out
}

/// The verified instructions at width `w`, by shape, each list cheapest
/// first (measured throughput, then name).
struct Lib {
    two: Vec<Ins>,
    one_imm: Vec<Ins>,
    two_imm: Vec<Ins>,
    three: Vec<Ins>,
}

fn library(x86: &SpecLibrary, w: u32, cost: &HashMap<String, f64>) -> Lib {
    let mut lib = Lib { two: vec![], one_imm: vec![], two_imm: vec![], three: vec![] };
    for (i, sem) in x86.iter() {
        let ps: Vec<Ty> = i.params.iter().map(|p| p.ty.clone()).collect();
        if i.ret != Ty::Bv(w) {
            continue;
        }
        let at = |imm| Ins { name: i.name.clone(), imm, sem: sem.clone() };
        let v = Ty::Bv(w);
        match ps.as_slice() {
            [x, y] if *x == v && *y == v => lib.two.push(at(None)),
            [x, y, z] if *x == v && *y == v && *z == v => lib.three.push(at(None)),
            [x, Ty::Imm(k)] if *x == v && *k <= 8 => lib.one_imm.extend((0..1i128 << k).map(|c| at(Some((c, *k))))),
            [x, y, Ty::Imm(k)] if *x == v && *y == v && *k <= 8 => lib.two_imm.extend((0..1i128 << k).map(|c| at(Some((c, *k))))),
            _ => {}
        }
    }
    for l in [&mut lib.two, &mut lib.one_imm, &mut lib.two_imm, &mut lib.three] {
        let key = |x: &Ins| (cost.get(&x.name).copied().unwrap_or(2.0), x.name.clone(), x.imm.map(|i| i.0));
        l.sort_by(|x, y| key(x).partial_cmp(&key(y)).unwrap());
    }
    lib
}

/// One Halide op's lanes on every case.
fn halide_op(halide: &SpecLibrary, op: &str, args: &[i128], xs: &[Vec<&BitVec>]) -> Option<Vec<BitVec>> {
    let (_, sem) = halide.instantiate(op, args).ok()?;
    xs.iter().map(|x| sem.eval(x).ok()).collect()
}

/// 32-bit lane `j` of `x`.
fn lane(x: &BitVec, j: u32) -> u64 {
    x.bits_u64(j * 32, 32)
}

/// The placement and join, found on `mul_shift_right` (sign `s`, shift `q`)
/// with no rounding constant; the fix-up is left to [`finish`].
fn placement(halide: &SpecLibrary, lib: &Lib, s: i128, q: u32, n: u32, cs: &[(BitVec, BitVec)]) -> Option<Found> {
    let w = n * 32;
    let qv = splat(w, 32, q as u64);
    let want = halide_op(halide, "mul_shift_right", &[s, 32, n as i128], &cs.iter().map(|(a, b)| vec![a, b, &qv]).collect::<Vec<_>>())?;
    let halves = |first| cs.iter().map(|(a, b)| (every_other(a, first), every_other(b, first))).collect::<Vec<_>>();
    let (ev, od) = (halves(0), halves(1));
    let wmul = |h: &[(BitVec, BitVec)]| halide_op(halide, "widening_mul", &[s, 32, n as i128 / 2, s], &h.iter().map(|(a, b)| vec![a, b]).collect::<Vec<_>>());
    let (we, wo) = (wmul(&ev)?, wmul(&od)?);
    let p = lib.two.iter().find(|p| cs.iter().zip(&we).all(|((a, b), w)| p.eval(&[a, b]).as_ref() == Some(w)))?.clone();
    let m = lib.one_imm.iter().find(|m| cs.iter().zip(&wo).all(|((a, b), w)| m.eval(&[a]).zip(m.eval(&[b])).and_then(|(x, y)| p.eval(&[&x, &y])).as_ref() == Some(w)))?.clone();
    let pairs: Vec<Vec<&BitVec>> = we.iter().zip(&wo).map(|(x, y)| vec![x, y]).collect();
    let sums = halide_op(halide, "add", &[0, 64, w as i128 / 64], &pairs)?;
    let a = lib.two.iter().find(|a| pairs.iter().zip(&sums).all(|(x, s)| a.eval(x).as_ref() == Some(s)))?.clone();
    let mut f = Found { n, sign: s, p, m, a, l: None, h: None, b: lib.two[0].clone(), c: None, fix: None };
    let prods: Vec<(BitVec, BitVec)> = cs.iter().map(|(a, b)| f.products(a, b)).collect::<Option<_>>()?;
    let (lo, hi) = if s == 1 { (0x8000_0000u64, 0x7fff_ffffu64) } else { (0, 0xffff_ffff) };
    let free = |x: u64| x != lo && x != hi;
    // Moves, the operand itself first.
    let moves: Vec<Option<Ins>> = std::iter::once(None).chain(lib.one_imm.iter().cloned().map(Some)).collect();
    let place = |parity: u32, pick: &dyn Fn(&(BitVec, BitVec)) -> &BitVec| {
        moves.iter().find(|mv| {
            prods.iter().zip(&want).all(|(pr, w)| {
                let Some(y) = apply(mv, pick(pr)) else { return false };
                (parity..n).step_by(2).all(|j| !free(lane(w, j)) || lane(&y, j) == lane(w, j))
            })
        })
    };
    f.l = place(0, &|pr| &pr.0)?.clone();
    f.h = place(1, &|pr| &pr.1)?.clone();
    f.b = lib
        .two_imm
        .iter()
        .find(|b| {
            prods.iter().zip(&want).all(|((pe, po), w)| {
                let Some(y) = apply(&f.l, pe).zip(apply(&f.h, po)).and_then(|(x, y)| b.eval(&[&x, &y])) else { return false };
                (0..n).all(|j| !free(lane(w, j)) || lane(&y, j) == lane(w, j))
            })
        })?
        .clone();
    Some(f)
}

/// The rounding constant and the fix-up for `op`, given the placement.
fn finish(halide: &SpecLibrary, lib: &Lib, op: &str, q: u32, base: &Found, cs: &[(BitVec, BitVec)]) -> Option<Found> {
    let (n, s) = (base.n, base.sign);
    let w = n * 32;
    let qv = splat(w, 32, q as u64);
    let want = halide_op(halide, op, &[s, 32, n as i128], &cs.iter().map(|(a, b)| vec![a, b, &qv]).collect::<Vec<_>>())?;
    let (lo, hi) = if s == 1 { (0x8000_0000u64, 0x7fff_ffffu64) } else { (0, 0xffff_ffff) };
    let consts: Vec<Option<u64>> = std::iter::once(None).chain((0..63).map(|k| Some(1u64 << k))).collect();
    let mut f = base.clone();
    f.c = *consts.iter().find(|&&c| {
        let g = Found { c, ..base.clone() };
        cs.iter().zip(&want).all(|((a, b), wv)| {
            let Some(y) = g.products(a, b).and_then(|(pe, po)| g.join(&g.plus(&pe, c)?, &g.plus(&po, c)?)) else { return false };
            (0..n).all(|j| matches!(lane(wv, j), x if x == lo || x == hi) || lane(&y, j) == lane(wv, j))
        })
    })?;
    let fits = |g: &Found| cs.iter().zip(&want).all(|((a, b), wv)| g.eval(a, b).as_ref() == Some(wv));
    if fits(&f) {
        return Some(f);
    }
    // G: the 64-bit sign mask from a zero first operand (Halide `shr` by 63).
    let zero = BitVec::zero(w);
    let ys: Vec<BitVec> = cs.iter().filter_map(|(a, b)| f.products(a, b)).flat_map(|(x, y)| [x, y]).collect();
    let s63 = splat(w, 64, 63);
    let masks = halide_op(halide, "shr", &[1, 64, w as i128 / 64, 0], &ys.iter().map(|y| vec![y, &s63]).collect::<Vec<_>>())?;
    let g = lib.two.iter().find(|g| ys.iter().zip(&masks).all(|(y, m)| g.eval(&[&zero, y]).as_ref() == Some(m)))?.clone();
    let pairs: Vec<Vec<&BitVec>> = cs.iter().map(|(a, b)| vec![a, b]).collect();
    let xors = halide_op(halide, "xor", &[0, 32, n as i128], &pairs)?;
    let x = lib.two.iter().find(|x| pairs.iter().zip(&xors).all(|(p, r)| x.eval(p).as_ref() == Some(r))).cloned();
    for k in &consts {
        for sat in [x.clone(), None] {
            for t in &lib.three {
                f.fix = Some(Fix { g: g.clone(), x: sat.clone(), k: *k, t: t.clone() });
                if fits(&f) {
                    return Some(f);
                }
            }
            if x.is_none() {
                break;
            }
        }
    }
    None
}

/// Every multiply-shift template the search finds.
pub fn mul_shifts(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let cost = super::narrowing::throughputs();
    let mut out = Vec::new();
    for w in [128u32, 256] {
        let lib = library(x86, w, &cost);
        let n = w / 32;
        let cs = cases(n);
        for s in [1i128, 0] {
            for q in [31u32, 32] {
                let Some(base) = placement(halide, &lib, s, q, n, &cs) else { continue };
                for op in ["rounding_mul_shift_right", "mul_shift_right"] {
                    // Signed rounding by 32: its proof needs the product's
                    // range, and Z3 takes the whole budget (unknown at 256
                    // bits; 9 to 11 s at 128, so a proof here need not hold
                    // in an audit on a loaded or slower machine). No kernel
                    // uses it.
                    if s == 1 && q == 32 && op == "rounding_mul_shift_right" {
                        continue;
                    }
                    let Some(f) = finish(halide, &lib, op, q, &base, &cs) else { continue };
                    let letter = super::sign_letter(s);
                    out.push(Split {
                        op: op.into(),
                        name: format!("synth.mulshr-{op}-{letter}32x{n}-{q}"),
                        lhs: format!("({op} (t ?sign 32 {n}) ?a ?b (broadcast (t 0 32 {n}) {q}))"),
                        rhs: f.text(),
                        conds: vec![],
                        free: vec![("sign".into(), vec![s])],
                        provenance: format!(
                            "phase legalize; multiply-shift searched over even/odd 64-bit products through one widening multiply, an optional rounding constant, dword placement, one join and a saturation fix-up (see synth/src/mulshr.rs): `{op}` ({letter}32 by {q}) uses {} (each piece the cheapest in its role, the whole equal on {} edge and random inputs)",
                            f.names().join(", "),
                            cs.len()
                        ),
                    });
                }
            }
        }
    }
    out
}

/// A term of the double-width search over the 2E-bit product `W =
/// widening_mul(a, b)`: `C(S(V, q))` with `V` either `W` or `U(W, k)`.
#[derive(Clone)]
struct Wide {
    /// `U` and `k`: a same-type op of the product with a broadcast constant.
    u: Option<(String, u64)>,
    /// The shift by the broadcast amount q (read unsigned).
    s: String,
    /// The narrowing back to 32 bits, with the op's sign.
    c: String,
}

impl Wide {
    fn eval(&self, halide: &SpecLibrary, sign: i128, n: u32, q: u32, a: &BitVec, b: &BitVec) -> Option<BitVec> {
        let ni = n as i128;
        let (_, w) = halide.instantiate("widening_mul", &[sign, 32, ni, sign]).ok()?;
        let mut v = w.eval(&[a, b]).ok()?;
        if let Some((u, k)) = &self.u {
            let (_, us) = halide.instantiate(u, &[sign, 64, ni]).ok()?;
            v = us.eval(&[&v, &splat(64 * n, 64, *k)]).ok()?;
        }
        let (_, sh) = halide.instantiate(&self.s, &[sign, 64, ni, 0]).ok()?;
        let v = sh.eval(&[&v, &splat(64 * n, 64, q as u64)]).ok()?;
        let (_, c) = halide.instantiate(&self.c, &[sign, 64, ni, sign, 32]).ok()?;
        c.eval(&[&v]).ok()
    }
    fn text(&self, q: u32) -> String {
        let mut v = "(widening_mul (t ?sign 32 ?n) ?sign ?a ?b)".to_string();
        if let Some((u, k)) = &self.u {
            v = format!("({u} (t ?sign 64 ?n) {v} (broadcast (t ?sign 64 ?n) {k}))");
        }
        format!("({} (t ?sign 64 ?n) ?sign 32 ({} (t ?sign 64 ?n) 0 {v} (broadcast (t 0 64 ?n) {q})))", self.c, self.s)
    }
    fn ops(&self) -> Vec<String> {
        let mut v = vec![self.c.clone(), self.s.clone()];
        v.extend(self.u.iter().map(|(u, _)| u.clone()));
        v.push("widening_mul".into());
        v
    }
}

/// The 32-bit multiply-shifts through the double-width product, at the
/// Halide level: `op(a, b, q)` is searched as `C(S(V, q))` over the 64-bit
/// `W = widening_mul(a, b)`, `V` either `W` or `U(W, k)` (U a same-type op,
/// k 2^(q-1) or 1), `S` a shift op of the library by the broadcast q and `C`
/// a 64 -> 32 bit narrowing. Up to two of the smallest that agree with
/// the op on the edge and random inputs at 4 and 8 lanes are kept, each with
/// another set of ops (extraction picks among the ones that lower). With
/// AVX-512 every piece has a 512-bit instruction (vpmovsxdq, vpmuldq,
/// vpsraq, vpmovsqd), where the even/odd search above ([`mul_shifts`])
/// joins dwords with 256-bit blends that AVX-512 lacks. Amounts as there:
/// q = 31 and 32. Like every legalization template each instance is
/// proved by the caller, which keeps exactly the proved ones.
pub fn double_width(halide: &SpecLibrary) -> Vec<Split> {
    let (bins, shifts) = super::shift::same_type_ops(halide);
    let narrows: Vec<String> = ["saturating_cast", "cast"].into_iter().filter(|c| halide.generic_names().contains(c)).map(String::from).collect();
    let mut out = Vec::new();
    for op in ["rounding_mul_shift_right", "mul_shift_right"] {
        for s in [1i128, 0] {
            for q in [31u32, 32] {
                let probes: Vec<(u32, Vec<(BitVec, BitVec)>, Vec<BitVec>)> = [4u32, 8]
                    .into_iter()
                    .filter_map(|n| {
                        let cs = cases(n);
                        let qv = splat(n * 32, 32, q as u64);
                        let want = halide_op(halide, op, &[s, 32, n as i128], &cs.iter().map(|(a, b)| vec![a, b, &qv]).collect::<Vec<_>>())?;
                        Some((n, cs, want))
                    })
                    .collect();
                if probes.len() != 2 {
                    continue;
                }
                let mut cands: Vec<Wide> = Vec::new();
                for u in std::iter::once(None).chain(bins.iter().flat_map(|u| [1u64 << (q - 1), 1].map(|k| Some((u.clone(), k))))) {
                    for sh in &shifts {
                        for c in &narrows {
                            cands.push(Wide { u: u.clone(), s: sh.clone(), c: c.clone() });
                        }
                    }
                }
                let mut kept: Vec<Vec<String>> = Vec::new();
                for cand in cands {
                    if kept.len() == 2 {
                        break;
                    }
                    let mut ops = cand.ops();
                    ops.sort();
                    if kept.contains(&ops) {
                        continue;
                    }
                    let agrees = probes.iter().all(|(n, cs, want)| cs.iter().zip(want).all(|((a, b), w)| cand.eval(halide, s, *n, q, a, b).as_ref() == Some(w)));
                    if !agrees {
                        continue;
                    }
                    kept.push(ops);
                    let letter = super::sign_letter(s);
                    out.push(Split {
                        op: op.into(),
                        name: format!("synth.mulshr-wide-{op}-{letter}32-{q}.{}", cand.ops().join("-")),
                        lhs: format!("({op} (t ?sign 32 ?n) ?a ?b (broadcast (t 0 32 ?n) {q}))"),
                        rhs: cand.text(q),
                        conds: vec![],
                        free: vec![("sign".into(), vec![s]), ("n".into(), super::Registers::x86().lanes(&[32]))],
                        provenance: format!(
                            "phase legalize; multiply-shift through the double-width product searched at the Halide level, C(S(V, q)) over V = widening_mul(a, b) or U(V, k), U a same-type op, k 2^(q-1) or 1, S a shift op, C a 64 -> 32 bit narrowing (see synth/src/mulshr.rs): `{op}` ({letter}32 by {q}) is `{}` (candidate {} of the smallest with other ops, equal on the edge and random inputs at 4 and 8 lanes)",
                            cand.ops().join(" "),
                            kept.len()
                        ),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libs() -> (SpecLibrary, SpecLibrary) {
        super::super::test_libraries()
    }

    #[test]
    fn finds_the_double_width_multiply_shift() {
        let (halide, _) = libs();
        let v = double_width(&halide);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        // The requantizing multiply of the quantized kernels, through a
        // 64-bit shift that AVX-512 has (vpsraq), with its rounding constant.
        assert!(v.iter().any(|s| s.lhs.starts_with("(rounding_mul_shift_right") && s.free.contains(&("sign".to_string(), vec![1])) && s.rhs.contains("(shr (t ?sign 64 ?n) 0 (add (t ?sign 64 ?n)") && s.rhs.contains("1073741824")));
    }

    #[test]
    fn finds_the_requantizing_multiply() {
        let (halide, x86) = libs();
        let t = std::time::Instant::now();
        let v = mul_shifts(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        eprintln!("{:?}", t.elapsed());
        let r = v.iter().find(|s| s.name == "synth.mulshr-rounding_mul_shift_right-i32x8-31").expect("the i32x8 by 31 template");
        assert_eq!(r.lhs, "(rounding_mul_shift_right (t ?sign 32 8) ?a ?b (broadcast (t 0 32 8) 31))");
        for piece in ["_mm256_mul_epi32", "_mm256_add_epi64", "(broadcast (t 0 64 4) 1073741824)", "_mm256_blendv_epi8", "_mm256_cmpgt_epi64"] {
            assert!(r.rhs.contains(piece), "{piece} missing from {}", r.rhs);
        }
        // The unsigned by 32 never saturates: no fix-up.
        let u = v.iter().find(|s| s.name == "synth.mulshr-mul_shift_right-u32x8-32").expect("u32 by 32");
        assert!(u.rhs.contains("_mm256_mul_epu32") && !u.rhs.contains("blendv"), "{}", u.rhs);
    }

    /// The evaluator rejects a wrong fix-up: none, the MAX-only saturated
    /// value where products can be negative, or the wrong overflow offset.
    #[test]
    fn rejects_wrong_fix_ups() {
        let (halide, x86) = libs();
        let lib = library(&x86, 256, &super::super::narrowing::throughputs());
        let cs = cases(8);
        let op = "rounding_mul_shift_right";
        let base = placement(&halide, &lib, 1, 31, 8, &cs).expect("placement");
        let f = finish(&halide, &lib, op, 31, &base, &cs).expect("found");
        let qv = splat(256, 32, 31);
        let want = halide_op(&halide, op, &[1, 32, 8], &cs.iter().map(|(a, b)| vec![a, b, &qv]).collect::<Vec<_>>()).unwrap();
        let fits = |g: &Found| cs.iter().zip(&want).all(|((a, b), w)| g.eval(a, b).as_ref() == Some(w));
        assert!(fits(&f));
        let fix = f.fix.clone().expect("i32 by 31 needs a fix-up");
        assert_eq!(fix.k, Some(1 << 62));
        assert!(!fits(&Found { fix: None, ..f.clone() }), "no fix-up must fail on MIN*MIN");
        assert!(!fits(&Found { fix: Some(Fix { k: Some(1 << 61), ..fix.clone() }), ..f.clone() }), "offset 2^61 clamps good lanes");
        assert!(!fits(&Found { c: None, ..f.clone() }), "no rounding constant must fail");
    }
}
