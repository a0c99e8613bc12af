//! Repairs of one-instruction lowerings that are right except at edge
//! values, searched from the semantics.
//!
//! Some x86 instructions equal a Halide op on random inputs but not at an
//! edge: vpmulhrsw is `rounding_mul_shift_right(a, b, 15)` on i16 except
//! at -32768 * -32768, which Halide saturates and the instruction wraps.
//! Neither the enumeration (it keeps only candidates equal everywhere)
//! nor a plain template finds such a lowering, so it had none.
//!
//! For every same-type Halide op (two operands, or three with the third
//! a broadcast constant 1..E: the multiply-shifts' q), every sign, lane
//! width and register (128, 256 bits), the candidates are the verified
//! two-register instructions `I(a, b)` or `I(b, a)` equal to the op on
//! random inputs. One that also holds on the edge inputs is a plain
//! lowering (the enumeration's) and is skipped; for one that does not,
//! the repair `select(mask, broadcast(v), I)` is searched, the mask an
//! equality of an operand or of the candidate's result to an edge
//! constant, then a conjunction of two such equalities (over different
//! terms), and `v` an edge constant: the first equal on every random and
//! edge input becomes a template. Each instance is proved by the caller,
//! which keeps exactly the proved ones.

use super::Split;
use super::narrowing::{Ins, instructions, splat};
use misaal_isa::{BitVec, Semantics, SpecLibrary};
use std::sync::Arc;

/// The edge values of an `e`-bit lane: 0, 1, the signed maximum and
/// minimum, and all ones (-1, the unsigned maximum).
fn edges(e: u32) -> [u128; 5] {
    let top = 1u128 << (e - 1);
    [0, 1, top - 1, top, (top << 1) - 1]
}

/// A constant as the rule text writes it at sign `s`.
fn literal(v: u128, e: u32, s: i128) -> String {
    if s == 1 && v >> (e - 1) & 1 == 1 { format!("-{}", (1u128 << e) - v) } else { v.to_string() }
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// Uniformly random operand pairs: an edge value in a lane is rare.
fn random_cases(vsize: u32, count: usize, seed: u64) -> Vec<[BitVec; 2]> {
    let mut next = xorshift(seed);
    let mut word = || BitVec::from_limbs(vsize, &(0..vsize / 64).map(|_| next()).collect::<Vec<_>>());
    (0..count).map(|_| [word(), word()]).collect()
}

/// Edge inputs: every pair of edge values, lane by lane over the cases,
/// and an edge value beside a random one in each operand.
fn edge_cases(vsize: u32, e: u32, seed: u64) -> Vec<[BitVec; 2]> {
    let ed = edges(e);
    let n = vsize / e;
    let mut next = xorshift(seed);
    let mask = if e == 128 { u128::MAX } else { (1u128 << e) - 1 };
    let mut out = Vec::new();
    let lanes = |f: &mut dyn FnMut(u32) -> (u128, u128)| {
        let (mut a, mut b) = (BitVec::zero(vsize), BitVec::zero(vsize));
        for l in 0..n {
            let (x, y) = f(l);
            for bit in 0..e {
                a.set_bit(l * e + bit, x >> bit & 1 == 1);
                b.set_bit(l * e + bit, y >> bit & 1 == 1);
            }
        }
        [a, b]
    };
    let pairs = ed.len() * ed.len();
    for k in 0..pairs.div_ceil(n as usize) * 2 {
        out.push(lanes(&mut |l| {
            let p = (k * n as usize + l as usize) % pairs;
            (ed[p / ed.len()], ed[p % ed.len()])
        }));
    }
    for k in 0..2 * ed.len() {
        out.push(lanes(&mut |l| {
            let (x, r) = (ed[(k + l as usize) % ed.len()], ((next() as u128) << 64 | next() as u128) & mask);
            if k % 2 == 0 { (x, r) } else { (r, x) }
        }));
    }
    out
}

/// One term a mask compares: an operand or the candidate's result.
const TERMS: [&str; 3] = ["?a", "?b", "r"];

/// Every repair template the search finds.
pub fn repairs(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let ins = instructions(x86);
    let mut out = Vec::new();
    for vsize in [128u32, 256] {
        let two: Vec<&Ins> = ins.iter().filter(|i| !i.has_imm() && i.ret == vsize && i.vectors() == [vsize, vsize]).collect();
        let random = random_cases(vsize, 16, 0x6669_7875 ^ vsize as u64);
        // Each candidate's values on the random cases, computed once.
        let cand_vals: Vec<(usize, bool, Vec<BitVec>)> = two
            .iter()
            .enumerate()
            .flat_map(|(k, i)| [false, true].map(|swap| (k, swap, i)))
            .filter_map(|(k, swap, i)| {
                let v = random.iter().map(|c| if swap { i.eval(&[&c[1], &c[0]], 0) } else { i.eval(&[&c[0], &c[1]], 0) }).collect::<Option<Vec<_>>>()?;
                Some((k, swap, v))
            })
            .collect();
        for op in halide.generic_names() {
            let Some(g) = halide.generic(op) else { continue };
            if g.generics != ["S", "E", "N"] {
                continue;
            }
            let Ok(sig) = halide.instantiate_signature(op, &[0, 16, 8]) else { continue };
            if !(2..=3).contains(&sig.params.len()) || sig.ret.width() != 128 || sig.params.iter().any(|p| p.ty.width() != 128) {
                continue;
            }
            for e in [8u32, 16, 32, 64] {
                let n = vsize / e;
                let qs: Vec<Option<u128>> = if sig.params.len() == 3 { (1..=e as u128).map(Some).collect() } else { vec![None] };
                for s in [1i128, 0] {
                    let Ok((_, sem)) = halide.instantiate(op, &[s, e as i128, n as i128]) else { continue };
                    for &q in &qs {
                        if let Some(t) = search(halide, &sem, s, e, n, q, &two, &random, &cand_vals) {
                            out.push(t.split(op, s, e, n, q, s));
                            // Halide's Stmt types q unsigned whatever the
                            // operands' sign: that form too (the same bits).
                            if q.is_some() && s == 1 {
                                out.push(t.split(op, s, e, n, q, 0));
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// A found repair: candidate `I` (operands swapped or not), mask atoms
/// (term, edge index) and the value's edge index.
struct Found {
    name: String,
    swap: bool,
    atoms: Vec<(usize, usize)>,
    value: usize,
}

impl Found {
    /// The template; `qs` is the sign of q's broadcast (a three-operand op).
    fn split(&self, op: &str, s: i128, e: u32, n: u32, q: Option<u128>, qs: i128) -> Split {
        let ty = format!("(t ?sign {e} {n})");
        let cand = if self.swap { format!("(x86 {} ?b ?a)", self.name) } else { format!("(x86 {} ?a ?b)", self.name) };
        let ed = edges(e);
        let atom = |&(t, c): &(usize, usize)| {
            let x = if TERMS[t] == "r" { cand.clone() } else { TERMS[t].to_string() };
            format!("(eq {ty} {x} (broadcast {ty} {}))", literal(ed[c], e, s))
        };
        let mask = match self.atoms.as_slice() {
            [one] => atom(one),
            many => format!("(and (t 0 1 {n}) {})", many.iter().map(atom).collect::<Vec<_>>().join(" ")),
        };
        let qty = if qs == s { ty.clone() } else { format!("(t {qs} {e} {n})") };
        let third = q.map(|q| format!(" (broadcast {qty} {q})")).unwrap_or_default();
        let letter = super::sign_letter(s);
        let qname = q.map(|q| format!("-q{q}{}", if qs == s { "" } else { "u" })).unwrap_or_default();
        Split {
            op: op.into(),
            name: format!("synth.repair-{op}{qname}-{letter}{e}-{}", n * e),
            lhs: format!("({op} {ty} ?a ?b{third})"),
            rhs: format!("(select {ty} {mask} (broadcast {ty} {}) {cand})", literal(ed[self.value], e, s)),
            conds: vec![],
            free: vec![("sign".into(), vec![s])],
            provenance: format!(
                "phase legalize; repair searched: {} equals `{op}` on random inputs but not at edge values; select(mask, broadcast v, it) with the mask one equality (or two) of an operand or its result to an edge constant and v an edge constant: the first equal on 16 random and {} edge inputs",
                self.name,
                edge_cases(n * e, e, 0).len()
            ),
        }
    }
}

/// The first candidate equal to the op on random inputs whose repair is
/// equal on random and edge inputs, when the candidate alone is not.
#[allow(clippy::too_many_arguments)]
fn search(
    halide: &SpecLibrary,
    sem: &Arc<Semantics>,
    s: i128,
    e: u32,
    n: u32,
    q: Option<u128>,
    two: &[&Ins],
    random: &[[BitVec; 2]],
    cand_vals: &[(usize, bool, Vec<BitVec>)],
) -> Option<Found> {
    let qv = q.map(|q| splat(e, n, q));
    let want = |c: &[BitVec; 2]| match &qv {
        Some(qv) => sem.eval(&[&c[0], &c[1], qv]).ok(),
        None => sem.eval(&[&c[0], &c[1]]).ok(),
    };
    // The first random case screens (most ops match no candidate), then all.
    let first = want(&random[0])?;
    let matching: Vec<&(usize, bool, Vec<BitVec>)> = cand_vals.iter().filter(|(_, _, v)| v[0] == first).collect();
    if matching.is_empty() {
        return None;
    }
    let want_random: Vec<BitVec> = random.iter().map(want).collect::<Option<_>>()?;
    let vsize = n * e;
    let edge = edge_cases(vsize, e, 0x6564_6765 ^ e as u64);
    let want_edge: Vec<BitVec> = edge.iter().map(want).collect::<Option<_>>()?;
    let (Ok((_, eq)), Ok((_, and)), Ok((_, sel))) = (
        halide.instantiate("eq", &[s, e as i128, n as i128]),
        halide.instantiate("and", &[0, 1, n as i128]),
        halide.instantiate("select", &[s, e as i128, n as i128]),
    ) else {
        return None;
    };
    let ed = edges(e);
    for &&(k, swap, ref vals) in &matching {
        if vals != &want_random {
            continue;
        }
        let i = two[k];
        let run = |c: &[BitVec; 2]| if swap { i.eval(&[&c[1], &c[0]], 0) } else { i.eval(&[&c[0], &c[1]], 0) };
        // All cases: random then edge, with the candidate's values.
        let cases: Vec<&[BitVec; 2]> = random.iter().chain(&edge).collect();
        let wants: Vec<&BitVec> = want_random.iter().chain(&want_edge).collect();
        let Some(r) = cases.iter().map(|c| run(c)).collect::<Option<Vec<_>>>() else { continue };
        if r.iter().zip(&wants).all(|(x, w)| x == *w) {
            continue; // a plain lowering: not a repair
        }
        // Atom values: eq(term, edge) per case.
        let term = |t: usize, c: usize| -> &BitVec { if t < 2 { &cases[c][t] } else { &r[c] } };
        let atom = |t: usize, v: usize| -> Option<Vec<BitVec>> { (0..cases.len()).map(|c| eq.eval(&[term(t, c), &splat(e, n, ed[v])]).ok()).collect() };
        let atoms: Vec<((usize, usize), Vec<BitVec>)> =
            (0..TERMS.len()).flat_map(|t| (0..ed.len()).map(move |v| (t, v))).filter_map(|(t, v)| Some(((t, v), atom(t, v)?))).collect();
        let mut masks: Vec<(Vec<(usize, usize)>, Vec<BitVec>)> = atoms.iter().map(|(a, m)| (vec![*a], m.clone())).collect();
        for (x, (a, ma)) in atoms.iter().enumerate() {
            for (b, mb) in &atoms[x + 1..] {
                if a.0 == b.0 {
                    continue;
                }
                let Some(m) = ma.iter().zip(mb).map(|(p, q)| and.eval(&[p, q]).ok()).collect::<Option<Vec<_>>>() else { continue };
                masks.push((vec![*a, *b], m));
            }
        }
        for (atoms, m) in &masks {
            for v in 0..ed.len() {
                let val = splat(e, n, ed[v]);
                let ok = (0..cases.len()).all(|c| sel.eval(&[&m[c], &val, &r[c]]).ok().as_ref() == Some(wants[c]));
                if ok {
                    return Some(Found { name: i.name.clone(), swap, atoms: atoms.clone(), value: v });
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use misaal_isa::SpecLibrary;

    fn libs() -> (SpecLibrary, SpecLibrary) {
        super::super::test_libraries()
    }

    #[test]
    fn finds_the_mulhrs_repair() {
        let (halide, x86) = libs();
        let t = std::time::Instant::now();
        let v = super::repairs(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        eprintln!("{:?}", t.elapsed());
        for (n, mm) in [(8, "_mm_mulhrs_epi16"), (16, "_mm256_mulhrs_epi16")] {
            let s = v.iter().find(|s| s.lhs == format!("(rounding_mul_shift_right (t ?sign 16 {n}) ?a ?b (broadcast (t ?sign 16 {n}) 15))")).expect("the mulhrs repair");
            assert!(s.rhs.contains(mm) && s.rhs.starts_with("(select") && s.free[0].1 == [1], "{}", s.rhs);
        }
        // The form Halide's Stmt has: q unsigned.
        assert!(v.iter().any(|s| s.lhs == "(rounding_mul_shift_right (t ?sign 16 16) ?a ?b (broadcast (t 0 16 16) 15))"));
        // vpmulhw equals mul_shift_right by 16 everywhere: a plain lowering, never a repair.
        assert!(!v.iter().any(|s| s.lhs.starts_with("(mul_shift_right (t ?sign 16 8) ?a ?b (broadcast (t ?sign 16 8) 16))")));
    }

    #[test]
    fn a_repair_needs_the_edges_to_be_checked() {
        // Without the edge cases the unrepaired candidate would pass: the
        // random cases alone never meet -32768 * -32768.
        let (halide, x86) = libs();
        let (_, sem) = halide.instantiate("rounding_mul_shift_right", &[1, 16, 8]).unwrap();
        let (_, mm) = x86.get("_mm_mulhrs_epi16").unwrap();
        let q = super::splat(16, 8, 15);
        let agree = |c: &[misaal_isa::BitVec; 2]| sem.eval(&[&c[0], &c[1], &q]).ok() == mm.eval(&[&c[0], &c[1]]).ok();
        assert!(super::random_cases(128, 16, 1).iter().all(agree));
        assert!(!super::edge_cases(128, 16, 1).iter().all(agree));
    }
}
