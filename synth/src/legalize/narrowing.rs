//! Narrowing of two 256-bit registers into one, searched over the x86
//! instruction semantics, and the 32 -> 8 bit narrowings as two steps.
//!
//! The enumeration's packs are 128-bit (its units read whole 128-bit
//! registers), and x86's 256-bit packs work per 128-bit lane, so a
//! 256-bit narrowing needs a cross-lane fix-up after the pack and, for
//! unsigned sources or wrapping casts, a clamp or mask before it (the
//! packs read their operands as signed and saturate). Neither is met by
//! the enumeration, so kernels narrowing u16 to u8 (sobel's output) fell
//! back to scalar code.
//!
//! The search space, not the answer: for each narrowing (`cast` and
//! `saturating_cast`, from 16 or 32 bits to half, every pair of signs) of
//! 2n lanes given as `concat(a, b)` of two registers, every term
//! `F(P(Q(a), Q(b)))` where `P` is a verified two-register instruction,
//! `Q` is the operand itself or a verified two-register instruction with
//! one operand a broadcast of a bound of the narrow type (its unsigned or
//! signed maximum), in either order, and `F` is nothing or a verified
//! one-register instruction at any value of its immediate. `P` and `Q`
//! are screened first: `P(Q(a), Q(b))` must hold the wanted 64-bit
//! blocks in some order; then `F` is searched. The first term equal on
//! random and edge inputs becomes a template; each instance is proved by
//! the caller, which keeps exactly the proved ones. The same right side
//! is also written for the narrowing of one 2n-lane value, over its two
//! halves (`slice`), as split ops leave it.

use super::Split;
use misaal_isa::{BitVec, Semantics, SpecLibrary, ast::Ty};
use std::sync::Arc;

/// A verified x86 instruction whose parameters are vectors and at most
/// one immediate of up to 8 bits.
pub(crate) struct Ins {
    pub name: String,
    /// Per parameter: `Some(width)` for a vector, `None` for the immediate.
    pub params: Vec<Option<u32>>,
    pub imm_width: u32,
    pub ret: u32,
    pub sem: Arc<Semantics>,
}

impl Ins {
    pub fn vectors(&self) -> Vec<u32> {
        self.params.iter().flatten().copied().collect()
    }
    pub fn has_imm(&self) -> bool {
        self.params.iter().any(|p| p.is_none())
    }
    /// Evaluates with the vectors in order and the immediate (if any).
    pub fn eval(&self, vecs: &[&BitVec], imm: i128) -> Option<BitVec> {
        let immv = BitVec::from_i128(self.imm_width.max(1), imm);
        let mut k = 0;
        let args: Vec<&BitVec> = self
            .params
            .iter()
            .map(|p| match p {
                Some(_) => {
                    k += 1;
                    vecs[k - 1]
                }
                None => &immv,
            })
            .collect();
        self.sem.eval(&args).ok()
    }
    /// The term text with the vectors' texts in order.
    pub fn render(&self, vecs: &[String], imm: i128) -> String {
        let mut k = 0;
        let args: Vec<String> = self
            .params
            .iter()
            .map(|p| match p {
                Some(_) => {
                    k += 1;
                    vecs[k - 1].clone()
                }
                None => imm.to_string(),
            })
            .collect();
        format!("(x86 {} {})", self.name, args.join(" "))
    }
}

/// The verified instructions of those shapes, sorted by name (the search
/// order is deterministic).
pub(crate) fn instructions(x86: &SpecLibrary) -> Vec<Ins> {
    let mut out = Vec::new();
    for (i, sem) in x86.iter() {
        let mut params = Vec::new();
        let mut imm_width = 0;
        let mut ok = matches!(i.ret, Ty::Bv(_));
        for p in &i.params {
            match p.ty {
                Ty::Bv(w) => params.push(Some(w)),
                Ty::Imm(w) if w <= 8 && imm_width == 0 => {
                    imm_width = w;
                    params.push(None);
                }
                _ => ok = false,
            }
        }
        if ok {
            out.push(Ins {
                name: i.name.clone(),
                params,
                imm_width,
                ret: i.ret.width(),
                sem: sem.clone(),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Deterministic inputs of `width` bits: all-ones, zero, random words
/// (odd cases shifted right per word, for small magnitudes) and words
/// whose `lane`-bit lanes are picked among the values where clamps and
/// signs differ (0, 1, the signed and unsigned maxima and minima of half
/// and whole lanes).
pub(crate) fn inputs(width: u32, lane: u32, cases: usize, seed: u64) -> Vec<BitVec> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let h = lane / 2;
    let edges: Vec<u128> = vec![
        0,
        1,
        (1 << (h - 1)) - 1,
        1 << (h - 1),
        (1 << h) - 1,
        1 << h,
        (1 << (lane - 1)) - 1,
        1 << (lane - 1),
        (1u128 << lane) - 1,
        (1u128 << lane) - 2,
    ];
    (0..cases)
        .map(|c| match c {
            0 => BitVec::ones(width),
            1 => BitVec::zero(width),
            _ if c % 3 == 2 => {
                let mut v = BitVec::zero(width);
                for l in 0..width / lane {
                    let e = edges[(next() % edges.len() as u64) as usize];
                    for b in 0..lane {
                        v.set_bit(l * lane + b, (e >> b) & 1 == 1);
                    }
                }
                v
            }
            _ => {
                let limbs: Vec<u64> = (0..width.div_ceil(64))
                    .map(|_| {
                        let v = next();
                        if c % 2 == 1 { v >> (next() % 64) } else { v }
                    })
                    .collect();
                BitVec::from_limbs(width, &limbs)
            }
        })
        .collect()
}

fn concat(a: &BitVec, b: &BitVec) -> BitVec {
    let limbs: Vec<u64> = a.limbs().iter().chain(b.limbs()).copied().collect();
    BitVec::from_limbs(a.width() + b.width(), &limbs)
}

/// `n` lanes of `w` bits, each `v`.
pub(crate) fn splat(w: u32, n: u32, v: u128) -> BitVec {
    let mut out = BitVec::zero(w * n);
    for l in 0..n {
        for b in 0..w {
            out.set_bit(l * w + b, (v >> b) & 1 == 1);
        }
    }
    out
}

fn blocks(v: &BitVec) -> Vec<u64> {
    let mut b = v.limbs().to_vec();
    b.sort_unstable();
    b
}

/// The operand preparation `Q`: the operand, or an instruction with a
/// broadcast constant on one side.
#[derive(Clone, Copy)]
enum Prep {
    Id,
    With {
        ins: usize,
        k: u128,
        const_first: bool,
    },
}

/// How the pack's blocks are put in order: not at all, by a one-register
/// instruction after it (at an immediate), or by feeding the pack two
/// block selections of both operands (a two-register instruction at two
/// immediates). At 512 bits no one-register instruction at an immediate
/// moves a 64-bit block across the 256-bit halves, so the order must be
/// set before the pack.
#[derive(Clone, Copy)]
enum Fix {
    None,
    After(usize, i128),
    Feed(usize, i128, i128),
}

/// A found right side: the preparation, the pack and the fix-up.
type Found = (Prep, usize, Fix);

/// Measured reciprocal throughputs by intrinsic, from the cost table of the
/// CPU the suite targets (`avx512_zen4`: `isa/costs/x86-znver4.csv`, the
/// only table with AVX-512 rows). The searches keep the cheapest candidate,
/// so a missing table must stop the run: with no costs every candidate
/// ties and name order alone would choose.
pub(super) fn throughputs() -> std::collections::HashMap<String, f64> {
    let path = misaal_isa::bundled_spec_dir("x86").join("../../costs/x86-znver4.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("the bundled cost table {} cannot be read ({e}); synthesis ranks candidates by it", path.display()));
    let costs: std::collections::HashMap<String, f64> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((f.first()?.to_string(), f.get(3)?.parse().ok()?))
        })
        .collect();
    assert!(!costs.is_empty(), "{} has no rows", path.display());
    costs
}

/// One narrowing's search: every term `F(P(Q(a), Q(b)))` equal to `want`
/// (for each `Q` and `P`, the first `F`), cheapest first by measured
/// throughput (an unmeasured instruction counts 2 cycles), name order
/// breaking ties; the cheapest is kept.
fn search(
    ins: &[Ins],
    r: u32,
    w: u32,
    e: u32,
    cases: &[(BitVec, BitVec)],
    want: &[BitVec],
    cost: &std::collections::HashMap<String, f64>,
    prepare: bool,
) -> Vec<(Found, f64)> {
    let mut out: Vec<Found> = Vec::new();
    let two: Vec<usize> = (0..ins.len())
        .filter(|&k| !ins[k].has_imm() && ins[k].ret == r && ins[k].vectors() == [r, r])
        .collect();
    let fixes: Vec<usize> = (0..ins.len())
        .filter(|&k| ins[k].has_imm() && ins[k].ret == r && ins[k].vectors() == [r])
        .collect();
    let feeds: Vec<usize> = (0..ins.len())
        .filter(|&k| ins[k].has_imm() && ins[k].ret == r && ins[k].vectors() == [r, r])
        .collect();
    let mut preps = vec![Prep::Id];
    let bounds = if prepare {
        vec![(1u128 << e) - 1, (1u128 << (e - 1)) - 1]
    } else {
        vec![]
    };
    for k in bounds {
        for &p in &two {
            for const_first in [false, true] {
                preps.push(Prep::With {
                    ins: p,
                    k,
                    const_first,
                });
            }
        }
    }
    let kvec = |k: u128| splat(w, r / w, k);
    let prep = |p: Prep, x: &BitVec| -> Option<BitVec> {
        match p {
            Prep::Id => Some(x.clone()),
            Prep::With {
                ins: q,
                k,
                const_first,
            } => {
                let kv = kvec(k);
                if const_first {
                    ins[q].eval(&[&kv, x], 0)
                } else {
                    ins[q].eval(&[x, &kv], 0)
                }
            }
        }
    };
    for p in preps {
        let Some(prepped) = cases
            .iter()
            .map(|(a, b)| Some((prep(p, a)?, prep(p, b)?)))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        // A preparation that leaves every operand as it was is the operand.
        if !matches!(p, Prep::Id)
            && prepped
                .iter()
                .zip(cases)
                .all(|((x, y), (a, b))| x == a && y == b)
        {
            continue;
        }
        for &pk in &two {
            let Some(got) = prepped
                .iter()
                .map(|(x, y)| ins[pk].eval(&[x, y], 0))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            if got.iter().zip(want).any(|(g, w)| blocks(g) != blocks(w)) {
                continue;
            }
            let fix = if got == want {
                Some(Fix::None)
            } else {
                fixes
                    .iter()
                    .find_map(|&f| {
                        (0..(1i128 << ins[f].imm_width))
                            .find(|&imm| {
                                got.iter()
                                    .zip(want)
                                    .all(|(g, w)| ins[f].eval(&[g], imm).as_ref() == Some(w))
                            })
                            .map(|imm| Fix::After(f, imm))
                    })
                    .or_else(|| feed(ins, &feeds, pk, &prepped, want))
            };
            if let Some(fix) = fix {
                out.push((p, pk, fix));
            }
        }
    }
    let c = |k: usize| cost.get(&ins[k].name).copied().unwrap_or(2.0);
    let total = |f: &Found| {
        let q = match f.0 {
            Prep::Id => 0.0,
            Prep::With { ins: q, .. } => 2.0 * c(q),
        };
        q + c(f.1)
            + match f.2 {
                Fix::None => 0.0,
                Fix::After(k, _) => c(k),
                Fix::Feed(k, _, _) => 2.0 * c(k),
            }
    };
    // A stable sort: equal costs keep the search order.
    out.sort_by(|a, b| total(a).total_cmp(&total(b)));
    out.into_iter().map(|f| (f, total(&f))).collect()
}

/// The first feed of the pack `pk` equal to `want`: a two-register
/// instruction `g` at immediates `i` and `j` with
/// `pk(g(a, b, i), g(a, b, j)) == want` on every case. Only the
/// immediates at which `g` selects whole 64-bit blocks of its operands
/// (on every case) are tried, one per distinct selection.
fn feed(
    ins: &[Ins],
    feeds: &[usize],
    pk: usize,
    cases: &[(BitVec, BitVec)],
    want: &[BitVec],
) -> Option<Fix> {
    for &g in feeds {
        let mut sels: Vec<(i128, Vec<BitVec>)> = Vec::new();
        for imm in 0..(1i128 << ins[g].imm_width) {
            let Some(vals) = cases
                .iter()
                .map(|(a, b)| {
                    let v = ins[g].eval(&[a, b], imm)?;
                    let from: Vec<u64> = a.limbs().iter().chain(b.limbs()).copied().collect();
                    v.limbs().iter().all(|l| from.contains(l)).then_some(v)
                })
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            if !sels.iter().any(|s| s.1 == vals) {
                sels.push((imm, vals));
            }
        }
        for (i, x) in &sels {
            for (j, y) in &sels {
                let ok = x.iter().zip(y).zip(want).all(|((x, y), w)| ins[pk].eval(&[x, y], 0).as_ref() == Some(w));
                if ok {
                    return Some(Fix::Feed(g, *i, *j));
                }
            }
        }
    }
    None
}

/// The text of a found right side over operand texts `a` and `b`.
fn render(ins: &[Ins], (p, pk, fix): Found, w: u32, half: u32, a: &str, b: &str) -> String {
    let q = |v: &str| match p {
        Prep::Id => v.to_string(),
        Prep::With {
            ins: q,
            k,
            const_first,
        } => {
            let kt = format!("(broadcast (t ?sign {w} {half}) {k})");
            if const_first {
                ins[q].render(&[kt, v.into()], 0)
            } else {
                ins[q].render(&[v.into(), kt], 0)
            }
        }
    };
    match fix {
        Fix::None => ins[pk].render(&[q(a), q(b)], 0),
        Fix::After(f, imm) => ins[f].render(&[ins[pk].render(&[q(a), q(b)], 0)], imm),
        Fix::Feed(g, i, j) => {
            let (qa, qb) = (q(a), q(b));
            let fed = |imm| ins[g].render(&[qa.clone(), qb.clone()], imm);
            ins[pk].render(&[fed(i), fed(j)], 0)
        }
    }
}

/// Narrowings of two registers that are right shifts by a constant c
/// (sobel5x5's output: after a shift the values may fit the pack's signed
/// input, so the clamp or mask may go). Where the plain narrowing needs a
/// preparation `Q`, searched per c over the same space without it
/// (`F(P(a, b))`) on the shifted values; the cheapest found is written
/// for the c that share it (a template over `?c`, each instance proved by
/// the caller).
pub fn shifted_packs(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let ins = instructions(x86);
    let cost = throughputs();
    let letter = super::sign_letter;
    let mut out = Vec::new();
    for op in ["saturating_cast", "cast"] {
        for w in [16u32, 32] {
            let (e, half) = (w / 2, 256 / w);
            let n = 2 * half;
            for s in [0i128, 1] {
                for s2 in [0i128, 1] {
                    let (Ok((_, lhs)), Ok((_, shr))) = (
                        halide.instantiate(op, &[s, w as i128, n as i128, s2, e as i128]),
                        halide.instantiate("shr", &[s, w as i128, half as i128, 0]),
                    ) else {
                        continue;
                    };
                    let seed = 0x7368_7266 ^ ((w as u64) << 8) ^ ((s as u64) << 4) ^ s2 as u64;
                    let cases: Vec<(BitVec, BitVec)> = inputs(256, w, 24, seed)
                        .into_iter()
                        .zip(inputs(256, w, 24, !seed))
                        .collect();
                    let at = |c: u32| -> Option<(Vec<(BitVec, BitVec)>, Vec<BitVec>)> {
                        let cv = splat(w, half, c as u128);
                        let sh: Vec<(BitVec, BitVec)> = cases
                            .iter()
                            .map(|(a, b)| {
                                Some((shr.eval(&[a, &cv]).ok()?, shr.eval(&[b, &cv]).ok()?))
                            })
                            .collect::<Option<_>>()?;
                        let want = sh
                            .iter()
                            .map(|(a, b)| lhs.eval(&[&concat(a, b)]).ok())
                            .collect::<Option<Vec<_>>>()?;
                        Some((sh, want))
                    };
                    let Some((_, want0)) = at(0) else { continue };
                    let Some(bf) = search(&ins, 256, w, e, &cases, &want0, &cost, true)
                        .first()
                        .map(|f| f.0)
                    else {
                        continue;
                    };
                    if matches!(bf.0, Prep::Id) {
                        continue;
                    }
                    // Every term found for each c, then each c given the
                    // cheapest term, among equals the one valid for most c.
                    let a = format!(
                        "(shr (t ?sign {w} {half}) ?s3 ?a (broadcast (t ?s3 {w} {half}) ?c))"
                    );
                    let b = format!(
                        "(shr (t ?sign {w} {half}) ?s3 ?b (broadcast (t ?s3 {w} {half}) ?c))"
                    );
                    let mut terms: Vec<(String, f64, Vec<i128>)> = Vec::new();
                    for c in 1..w {
                        let Some((sh, want)) = at(c) else { continue };
                        for (f, price) in search(&ins, 256, w, e, &sh, &want, &cost, false) {
                            let rhs = render(&ins, f, w, half, &a, &b);
                            match terms.iter_mut().find(|t| t.0 == rhs) {
                                Some(t) => t.2.push(c as i128),
                                None => terms.push((rhs, price, vec![c as i128])),
                            }
                        }
                    }
                    terms.sort_by(|x, y| x.1.total_cmp(&y.1).then(y.2.len().cmp(&x.2.len())));
                    let mut groups: Vec<(String, Vec<i128>)> = Vec::new();
                    for c in 1..w as i128 {
                        let Some(t) = terms.iter().find(|t| t.2.contains(&c)) else {
                            continue;
                        };
                        match groups.iter_mut().find(|g| g.0 == t.0) {
                            Some(g) => g.1.push(c),
                            None => groups.push((t.0.clone(), vec![c])),
                        }
                    }
                    for (k, (rhs, cs)) in groups.into_iter().enumerate() {
                        let a = format!(
                            "(shr (t ?sign {w} {half}) ?s3 ?a (broadcast (t ?s3 {w} {half}) ?c))"
                        );
                        let b = format!(
                            "(shr (t ?sign {w} {half}) ?s3 ?b (broadcast (t ?s3 {w} {half}) ?c))"
                        );
                        out.push(Split {
                            op: op.into(),
                            name: format!("synth.narrow-{op}-{}{w}-{}{e}.shifted{}", letter(s), letter(s2), if k == 0 { String::new() } else { format!(".{}", k + 1) }),
                            lhs: format!("({op} (t ?sign {w} {n}) {s2} {e} (concat (t ?sign {w} {half}) {half} {a} {b}))"),
                            rhs: rhs.clone(),
                            conds: vec![],
                            free: vec![("sign".into(), vec![s]), ("s3".into(), vec![0, 1]), ("c".into(), cs.clone())],
                            provenance: format!(
                                "phase legalize; 256-bit narrowing of two right-shifted registers searched per shift c over F(P(a, b)) (the plain narrowing's space without its operand preparation), on shifted values: for c in {cs:?} the cheapest by measured throughput is {rhs}"
                            ),
                        });
                    }
                }
            }
        }
    }
    out
}

/// The 256- and 512-bit narrowing templates (both left-side forms), and
/// the 128-bit ones over the halves of one 256-bit value only: the
/// enumeration's 128-bit units find the `concat` form (`vpackuswb` of two
/// registers) but never meet a 256-bit value narrowed into one register
/// (i16x16 -> u8x16, or an i32x7 padded to eight lanes), which otherwise
/// fell back to a lane loop.
pub fn packs(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let ins = instructions(x86);
    let cost = throughputs();
    let letter = super::sign_letter;
    let mut out = Vec::new();
    for reg in [128u32, 256, 512] {
    for op in ["saturating_cast", "cast"] {
        for w in [16u32, 32] {
            let e = w / 2;
            let half = reg / w;
            let n = 2 * half;
            for s in [0i128, 1] {
                for s2 in [0i128, 1] {
                    let Ok((_, lhs)) =
                        halide.instantiate(op, &[s, w as i128, n as i128, s2, e as i128])
                    else {
                        continue;
                    };
                    let xs = inputs(
                        reg,
                        w,
                        24,
                        0x6e72_6f77 ^ ((w as u64) << 8) ^ ((s as u64) << 4) ^ s2 as u64,
                    );
                    let ys = inputs(
                        reg,
                        w,
                        24,
                        0x7061_636b ^ ((w as u64) << 8) ^ ((s as u64) << 4) ^ s2 as u64,
                    );
                    let cases: Vec<(BitVec, BitVec)> = xs.into_iter().zip(ys).collect();
                    let Some(want) = cases
                        .iter()
                        .map(|(a, b)| lhs.eval(&[&concat(a, b)]).ok())
                        .collect::<Option<Vec<_>>>()
                    else {
                        continue;
                    };
                    for (nth, ((p, pk, fix), _)) in search(&ins, reg, w, e, &cases, &want, &cost, true)
                        .into_iter()
                        .take(1)
                        .enumerate()
                    {
                        let term = |a: &str, b: &str| render(&ins, (p, pk, fix), w, half, a, b);
                        let found = term("?a", "?b");
                        let ty = format!("(t ?sign {w} {n}) {s2} {e}");
                        let forms = [
                            (
                                "concat",
                                format!("({op} {ty} (concat (t ?sign {w} {half}) {half} ?a ?b))"),
                                found.clone(),
                            ),
                            (
                                "halves",
                                format!("({op} {ty} ?x)"),
                                term(
                                    &format!("(slice (t ?sign {w} {half}) {n} 0 1 ?x)"),
                                    &format!("(slice (t ?sign {w} {half}) {n} {half} 1 ?x)"),
                                ),
                            ),
                        ];
                        for (form, l, r) in forms {
                            if reg == 128 && form == "concat" {
                                continue;
                            }
                            out.push(Split {
                            op: op.into(),
                            name: format!("synth.narrow-{op}-{}{w}-{}{e}.{form}{}{}", letter(s), letter(s2), if nth == 0 { String::new() } else { format!(".{}", nth + 1) }, if reg == 256 { String::new() } else { format!(".r{reg}") }),
                            lhs: l,
                            rhs: r,
                            conds: vec![],
                            free: vec![("sign".into(), vec![s])],
                            provenance: format!(
                                "phase legalize; {reg}-bit narrowing searched over F(P(Q(a), Q(b))) and P(G(Q(a), Q(b), i), G(Q(a), Q(b), j)) (P a two-register instruction, Q the operand or an instruction with a broadcast bound of the narrow type, F none or a one-register instruction at every immediate, G a two-register instruction at the immediates where it selects whole 64-bit blocks): a term equal on 24 random and edge inputs, the cheapest by measured throughput, is {found}{}",
                                if form == "halves" { ", over the two halves of one value" } else { "" }
                            ),
                        });
                        }
                    }
                }
            }
        }
    }
    }
    out
}

/// Narrowings by a factor of four or eight (32 -> 8, 64 -> 16, 64 -> 8
/// bits) as two narrowings, the first by two (to 16 bits from 32, to 32
/// from 64, where one instruction narrows: `vpmovqd`, `vpmovdw`),
/// searched: every choice of the first step (`cast` or `saturating_cast`
/// to the middle width of either sign) and of the second (`cast` or
/// `saturating_cast` to the wanted type); every composition equal to the
/// op on random and edge inputs at 4, 8 and 16 lanes is kept (the lowering
/// of each differs; extraction picks the cheapest). Each instance proved
/// by the caller.
pub fn two_steps(halide: &SpecLibrary) -> Vec<Split> {
    let letter = super::sign_letter;
    let mut out = Vec::new();
    // (from, middle, to) widths, and the lane counts: from 256 to 2048 bits
    // of the wide operand.
    for (e, em, e2) in [(32i128, 16i128, 8i128), (64, 32, 16), (64, 32, 8)] {
        let ns: Vec<i128> = (2..=6).map(|k| 1i128 << k).filter(|n| (256..=2048).contains(&(n * e))).collect();
        for op in ["cast", "saturating_cast"] {
            for s in [0i128, 1] {
                for s2 in [0i128, 1] {
                    for op1 in ["cast", "saturating_cast"] {
                        for sm in [s, 1 - s] {
                            for op2 in ["cast", "saturating_cast"] {
                                let ok = [4i128, 8, 16].iter().all(|&n| {
                                    let (Ok((_, l)), Ok((_, f)), Ok((_, g))) = (
                                        halide.instantiate(op, &[s, e, n, s2, e2]),
                                        halide.instantiate(op1, &[s, e, n, sm, em]),
                                        halide.instantiate(op2, &[sm, em, n, s2, e2]),
                                    ) else {
                                        return false;
                                    };
                                    inputs((e * n) as u32, e as u32, 40, 0x7477_6f73 ^ n as u64 ^ (((e - 32) as u64) << 16) ^ (((e2 - 8) as u64) << 24))
                                        .iter()
                                        .all(|x| match (l.eval(&[x]), f.eval(&[x])) {
                                            (Ok(want), Ok(m)) => g.eval(&[&m]).ok() == Some(want),
                                            _ => false,
                                        })
                                });
                                if !ok {
                                    continue;
                                }
                                let smt = if sm == s {
                                    "?sign".to_string()
                                } else {
                                    sm.to_string()
                                };
                                let rhs = format!(
                                    "({op2} (t {smt} {em} ?n) ?s2 {e2} ({op1} (t ?sign {e} ?n) {smt} {em} ?x0))"
                                );
                                out.push(Split {
                                    op: op.into(),
                                    name: format!("synth.narrow-{op}-{}{e}-{}{e2}.{op1}-{}{em}-{op2}", letter(s), letter(s2), letter(sm)),
                                    lhs: format!("({op} (t ?sign {e} ?n) ?s2 {e2} ?x0)"),
                                    rhs,
                                    conds: vec![format!("(>= (* ?n {e}) 256)"), format!("(<= (* ?n {e}) 2048)")],
                                    free: vec![("sign".into(), vec![s]), ("s2".into(), vec![s2]), ("n".into(), ns.clone())],
                                    provenance: format!(
                                        "phase legalize; {e} -> {e2} bit narrowing searched over two narrowings (cast or saturating_cast to {em} bits of either sign, then cast or saturating_cast): `{op}` is `{op1}` to {}{em} then `{op2}` (equal on random and edge inputs at 4, 8 and 16 lanes)",
                                        letter(sm)
                                    ),
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    fn libs() -> (misaal_isa::SpecLibrary, misaal_isa::SpecLibrary) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = misaal_isa::SpecLibrary::load_dir(&root.join("frontends/halide"))
            .expect("halide library");
        let x86 =
            misaal_isa::SpecLibrary::load_dir(&root.join("isa/specs/x86")).expect("x86 library");
        (halide, x86)
    }

    /// The pack search takes over a minute; both width tests read one run.
    fn packs() -> &'static [super::Split] {
        static FOUND: std::sync::OnceLock<Vec<super::Split>> = std::sync::OnceLock::new();
        FOUND.get_or_init(|| {
            let (halide, x86) = libs();
            super::packs(&halide, &x86)
        })
    }

    #[test]
    fn finds_the_256_bit_packs() {
        if !misaal_testkit::slow_tier("the pack search over every x86 spec takes two minutes in CI; synth_pipeline runs it over SSE2 and the compiler tests check the packs the bundled rules emit") {
            return;
        }
        let found = packs();
        for s in found {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        // u16 -> u8 saturating needs a clamp before the pack and a fix-up after.
        let u = found
            .iter()
            .find(|s| s.name == "synth.narrow-saturating_cast-u16-u8.concat")
            .expect("u16 -> u8");
        assert!(
            u.rhs.contains("packus_epi16") && u.rhs.contains("255"),
            "{}",
            u.rhs
        );
    }

    #[test]
    fn finds_the_512_bit_packs() {
        if !misaal_testkit::slow_tier("the pack search over every x86 spec takes two minutes in CI; synth_pipeline runs it over SSE2 and the compiler tests check the packs the bundled rules emit") {
            return;
        }
        let found = packs();
        // i16 -> u8 (conv3x3a16's output): the 512-bit pack, its blocks put
        // in order across the 256-bit halves, in zmm only.
        for name in [
            "synth.narrow-saturating_cast-i16-u8.concat.r512",
            "synth.narrow-saturating_cast-i32-i16.concat.r512",
        ] {
            let s = found.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} not found"));
            assert!(s.rhs.contains("_mm512_pack") && !s.rhs.contains("_mm256_") && !s.rhs.contains("(x86 _mm_"), "{}", s.rhs);
            assert!(s.lhs.contains(" 32 ?a ?b") || s.lhs.contains(" 16 ?a ?b"), "{}", s.lhs);
        }
    }

    #[test]
    fn finds_the_128_bit_halves() {
        if !misaal_testkit::slow_tier("the pack search over every x86 spec takes two minutes in CI; synth_pipeline runs it over SSE2 and the compiler tests check the packs the bundled rules emit") {
            return;
        }
        let found = packs();
        // i16x16 -> u8x16 (a 256-bit value into one xmm): one 128-bit pack
        // of its two halves; no concat form at 128 bits (the enumeration's).
        let s = found
            .iter()
            .find(|s| s.name == "synth.narrow-saturating_cast-i16-u8.halves.r128")
            .expect("i16 -> u8 over halves at 128 bits");
        assert_eq!(s.lhs, "(saturating_cast (t ?sign 16 16) 0 8 ?x)");
        assert!(s.rhs.starts_with("(x86 _mm_packus_epi16 (slice (t ?sign 16 8) 16 0 1 ?x)"), "{}", s.rhs);
        assert!(!found.iter().any(|s| s.name.ends_with(".r128") && s.name.contains(".concat")));
    }

    #[test]
    fn finds_the_shifted_packs() {
        if !misaal_testkit::slow_tier("the shifted-pack search over every x86 spec takes over a minute; synth_pipeline runs it over SSE2") {
            return;
        }
        let (halide, x86) = libs();
        let found = super::shifted_packs(&halide, &x86);
        for s in &found {
            eprintln!("{}: {:?} {} => {}", s.name, s.free, s.lhs, s.rhs);
        }
        // After a shift by c >= 1 a u16 fits vpackuswb's signed input: no
        // clamp, for every c (the cheapest term may differ between shifts,
        // one rule per group of c).
        let us: Vec<_> = found.iter().filter(|s| s.name.starts_with("synth.narrow-saturating_cast-u16-u8.shifted")).collect();
        assert!(!us.is_empty(), "u16 -> u8 shifted");
        for u in &us {
            assert!(!u.rhs.contains("min_epu16"), "{}", u.rhs);
        }
        let mut cs: Vec<i128> = us.iter().flat_map(|u| u.free[2].1.clone()).collect();
        cs.sort();
        assert_eq!(cs, (1..16).collect::<Vec<i128>>());
    }

    #[test]
    fn finds_two_step_narrowings() {
        let (halide, _) = libs();
        let found = super::two_steps(&halide);
        for s in &found {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        assert!(
            found
                .iter()
                .any(|s| s.name.starts_with("synth.narrow-cast-u32-u8."))
        );
        // From 64-bit lanes: through 32 bits, where one instruction narrows.
        for name in ["synth.narrow-cast-i64-u8.", "synth.narrow-cast-u64-i16.", "synth.narrow-saturating_cast-u64-u8.", "synth.narrow-saturating_cast-i64-i16."] {
            let s = found.iter().find(|s| s.name.starts_with(name)).unwrap_or_else(|| panic!("{name}"));
            assert!(s.rhs.contains(" 32 ?n) ?s2 ") && s.lhs.contains(" 64 ?n) ?s2 "), "{}: {}", s.name, s.rhs);
            assert_eq!(s.free.iter().find(|(v, _)| v == "n").unwrap().1, vec![4, 8, 16, 32]);
        }
        // A saturating narrowing of a signed value to an unsigned type is
        // not two wrapping steps.
        assert!(!found.iter().any(|s| s.name.starts_with("synth.narrow-saturating_cast-i64-u8.cast-")));
        // A wrapping cast is never a saturating one: no composition of two
        // saturating steps may be found for it.
        assert!(
            !found
                .iter()
                .any(|s| s.name.starts_with("synth.narrow-cast-")
                    && s.name.ends_with(".saturating_cast-u16-saturating_cast"))
        );
    }
}
