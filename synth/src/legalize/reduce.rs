//! Reductions to one lane (a scalar), searched from the semantics. The
//! enumeration has only the pairwise reductions (factor 2 and 4, one
//! instruction), so a kernel's sum or max over a whole vector (l2norm's
//! and softmax's) had no lowering.
//!
//! Two searches, for every Halide `vector_reduce_*` op:
//! - halves: the reduction of 2f lanes is the reduction of f lanes of
//!   `U(low half, high half)`, `U` the first same-type op of the library
//!   for which that holds on random inputs at several widths and both
//!   signs (none for the saturating sum). A template over `?bw ?f`.
//! - one register (128 bits, f = 128 / bw lanes) to lane 0, then out: `V`,
//!   the first verified two-operand instruction equal to `U` at that type,
//!   folds the register onto itself log2(f) times, `y := V(y, P(y))`, with
//!   each `P` the first one-operand move (an instruction with an immediate
//!   at each of its values, or a two-operand one given `y` twice) after
//!   which the first half of the live lanes still reduces to the answer;
//!   then the first instruction reading a 128-bit vector and an immediate
//!   whose result (cast back to the lane width where it is wider) is the
//!   answer. Greedy by construction: each step is kept when it is right,
//!   so the search is linear in the steps, not exponential.
//!
//! Like every legalization template each instance is proved by the
//! caller, which keeps exactly the proved ones.

use super::Split;
use misaal_isa::{BitVec, Semantics, SpecLibrary, ast::Ty};
use std::sync::Arc;

fn random(width: u32, seed: u64) -> BitVec {
    // Some words with small magnitudes (where signs and saturation differ).
    super::xorshift_bits(width, seed, |k, x| if k % 3 == 2 { x >> (x % 61) } else { x })
}

/// Bits [lo, lo + w) of `v`.
fn bits(v: &BitVec, lo: u32, w: u32) -> BitVec {
    let mut out = BitVec::zero(w);
    for b in 0..w {
        out.set_bit(b, v.bit(lo + b));
    }
    out
}

/// A one-operand move of the fold: an instruction with one vector operand
/// and an immediate, or a two-operand instruction given `y` twice.
#[derive(Clone)]
struct Move {
    name: String,
    imm: Option<(i128, u32)>,
    sem: Arc<Semantics>,
}

impl Move {
    fn eval(&self, y: &BitVec) -> Option<BitVec> {
        match self.imm {
            Some((v, w)) => self.sem.eval(&[y, &BitVec::from_i128(w, v)]).ok(),
            None => self.sem.eval(&[y, y]).ok(),
        }
    }
    fn text(&self, y: &str) -> String {
        match self.imm {
            Some((v, _)) => format!("(x86 {} {y} {v})", self.name),
            None => format!("(x86 {} {y} {y})", self.name),
        }
    }
}

/// The halves template's op `U` for reduction `r`, if any.
fn halves_op(halide: &SpecLibrary, r: &str, bins: &[String]) -> Option<String> {
    'u: for u in bins {
        for s in [0i128, 1] {
            for (e, f) in [(8i128, 16i128), (16, 8), (32, 4), (32, 8)] {
                let (Ok((_, whole)), Ok((_, half)), Ok((_, us))) =
                    (halide.instantiate(r, &[s, e, 1, 2 * f]), halide.instantiate(r, &[s, e, 1, f]), halide.instantiate(u, &[s, e, f]))
                else {
                    continue 'u;
                };
                for c in 0..16u64 {
                    let x = random((2 * f * e) as u32, 0x7265_6475 + 131 * c + e as u64);
                    let w = (f * e) as u32;
                    let (lo, hi) = (bits(&x, 0, w), bits(&x, w, w));
                    let got = us.eval(&[&lo, &hi]).ok().and_then(|m| half.eval(&[&m]).ok());
                    if got.is_none() || got != whole.eval(&[&x]).ok() {
                        continue 'u;
                    }
                }
            }
        }
        return Some(u.clone());
    }
    None
}

/// Every reduction template the searches find.
pub fn reductions(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let (bins, _) = super::shift::same_type_ops(halide);
    let mut two: Vec<(String, Arc<Semantics>)> = Vec::new();
    let mut moves: Vec<Move> = Vec::new();
    let mut extracts: Vec<(String, u32, u32, Arc<Semantics>)> = Vec::new();
    let mut instrs: Vec<_> = x86.iter().collect();
    instrs.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    for (i, sem) in instrs {
        let ps: Vec<Ty> = i.params.iter().map(|p| p.ty.clone()).collect();
        match (ps.as_slice(), &i.ret) {
            ([Ty::Bv(128), Ty::Bv(128)], Ty::Bv(128)) => {
                two.push((i.name.clone(), sem.clone()));
                moves.push(Move { name: i.name.clone(), imm: None, sem: sem.clone() });
            }
            ([Ty::Bv(128), Ty::Imm(w)], Ty::Bv(128)) if *w <= 8 => {
                moves.extend((0..1i128 << w).map(|v| Move { name: i.name.clone(), imm: Some((v, *w)), sem: sem.clone() }));
            }
            ([Ty::Bv(128), Ty::Imm(w)], Ty::Bv(r)) if *w <= 8 && *r <= 64 => extracts.push((i.name.clone(), *w, *r, sem.clone())),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for r in halide.generic_names().into_iter().filter(|r| r.starts_with("vector_reduce_")) {
        let Some(u) = halves_op(halide, r, &bins) else { continue };
        out.push(Split {
            op: r.into(),
            name: format!("synth.reduce-halves-{r}.{u}"),
            lhs: format!("({r} (t ?sign ?bw 1) (* 2 ?f) ?x)"),
            rhs: format!("({r} (t ?sign ?bw 1) ?f ({u} (t ?sign ?bw ?f) (slice (t ?sign ?bw ?f) (* 2 ?f) 0 1 ?x) (slice (t ?sign ?bw ?f) (* 2 ?f) ?f 1 ?x)))"),
            conds: vec!["(>= (* ?f ?bw) 128)".into(), "(<= (* 2 (* ?f ?bw)) 2048)".into()],
            free: vec![("sign".into(), vec![0, 1]), ("bw".into(), vec![8, 16, 32]), ("f".into(), vec![4, 8, 16, 32, 64, 128])],
            provenance: format!(
                "phase legalize; reduction of halves searched over the same-type ops: `{r}` of 2f lanes is `{r}` of f lanes of `{u}` of the two halves (the first op equal on 16 random inputs at four widths, both signs)"
            ),
        });
        for s in [0i128, 1] {
            for bw in [8u32, 16, 32] {
                let f = 128 / bw;
                let (Ok((_, whole)), Ok((_, us))) = (halide.instantiate(r, &[s, bw as i128, 1, f as i128]), halide.instantiate(&u, &[s, bw as i128, f as i128])) else { continue };
                // Random registers, and dense (or of four) and sparse (and
                // of four) ones, and denser (or of eight), so that and/or reductions are not constant.
                let xs: Vec<BitVec> = (0..48u64)
                    .map(|c| {
                        let r = |k: u64| random(128, 0x666f_6c64 + 977 * c + 31 * k + bw as u64);
                        let four = (1..4).map(r);
                        let eight = (1..8).map(r);
                        match c % 4 {
                            0 => r(0),
                            3 => eight.fold(r(0), |a, b| BitVec::from_limbs(128, &a.limbs().iter().zip(b.limbs()).map(|(x, y)| x | y).collect::<Vec<_>>())),
                            1 => four.fold(r(0), |a, b| BitVec::from_limbs(128, &a.limbs().iter().zip(b.limbs()).map(|(x, y)| x | y).collect::<Vec<_>>())),
                            _ => four.fold(r(0), |a, b| BitVec::from_limbs(128, &a.limbs().iter().zip(b.limbs()).map(|(x, y)| x & y).collect::<Vec<_>>())),
                        }
                    })
                    .collect();
                let Some(want) = xs.iter().map(|x| whole.eval(&[x]).ok()).collect::<Option<Vec<_>>>() else { continue };
                // V: the instruction equal to U at this type.
                let Some((v, vsem)) = two.iter().find(|(_, sem)| {
                    xs.windows(2).all(|p| {
                        let w = us.eval(&[&p[0], &p[1]]).ok();
                        w.is_some() && sem.eval(&[&p[0], &p[1]]).ok() == w
                    })
                }) else {
                    continue;
                };
                // The folds: after step k the first f / 2^k lanes reduce to the answer.
                let (mut ys, mut text, mut live, mut ok) = (xs.clone(), "?x".to_string(), f, true);
                while live > 1 {
                    live /= 2;
                    let Ok((_, part)) = halide.instantiate(r, &[s, bw as i128, 1, live as i128]) else {
                        ok = false;
                        break;
                    };
                    let step = |m: &Move| -> Option<Vec<BitVec>> {
                        let next: Vec<BitVec> = ys.iter().map(|y| m.eval(y).and_then(|p| vsem.eval(&[y, &p]).ok())).collect::<Option<_>>()?;
                        next.iter().zip(&want).all(|(y, w)| part.eval(&[&bits(y, 0, live * bw)]).ok().as_ref() == Some(w)).then_some(next)
                    };
                    let Some((m, next)) = moves.iter().find_map(|m| step(m).map(|n| (m, n))) else {
                        ok = false;
                        break;
                    };
                    text = format!("(x86 {v} {text} {})", m.text(&text));
                    ys = next;
                }
                if !ok {
                    continue;
                }
                // The way out: lane 0 as a scalar, cast back where wider.
                let Ok((_, narrow)) = halide.instantiate("cast", &[0, 32, 1, s, bw as i128]) else { continue };
                let found = extracts.iter().find_map(|(name, iw, rw, sem)| {
                    (0..1i128 << iw).find_map(|imm| {
                        let fits = ys.iter().zip(&want).all(|(y, w)| {
                            let Ok(e) = sem.eval(&[y, &BitVec::from_i128(*iw, imm)]) else { return false };
                            let got = if *rw == bw { Some(e) } else if *rw == 32 { narrow.eval(&[&e]).ok() } else { None };
                            got.as_ref() == Some(w)
                        });
                        fits.then(|| if *rw == bw { format!("(x86 {name} {text} {imm})") } else { format!("(cast (t 0 32 1) ?sign {bw} (x86 {name} {text} {imm}))") })
                    })
                });
                let Some(rhs) = found else { continue };
                let letter = super::sign_letter(s);
                out.push(Split {
                    op: r.into(),
                    name: format!("synth.reduce-{r}-{letter}{bw}x{f}"),
                    lhs: format!("({r} (t ?sign {bw} 1) {f} ?x)"),
                    rhs,
                    conds: vec![],
                    free: vec![("sign".into(), vec![s])],
                    provenance: format!(
                        "phase legalize; one register reduced to a scalar, searched: {v} (equal to `{u}` at {letter}{bw}) folds the register onto the first move after which the first half of the live lanes still reduces to the answer, {} times, then the first extract (cast back where wider) equal on 48 random, dense and sparse inputs",
                        f.trailing_zeros()
                    ),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_reductions() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = misaal_isa::SpecLibrary::load_dir(&root.join("frontends/halide")).expect("halide library");
        let x86 = misaal_isa::SpecLibrary::load_dir(&root.join("isa/specs/x86")).expect("x86 library");
        let t = std::time::Instant::now();
        let v = super::reductions(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        eprintln!("{:?}", t.elapsed());
        assert!(v.iter().any(|s| s.name == "synth.reduce-vector_reduce_add-i32x4"));
        assert!(v.iter().any(|s| s.name == "synth.reduce-halves-vector_reduce_max.max"));
    }
}

#[cfg(test)]
mod verified_tests {
    #[test]
    fn finds_the_u8_max_over_verified_specs() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = misaal_isa::SpecLibrary::load_dir(&root.join("frontends/halide")).expect("halide library");
        let dir = root.join("isa/specs/x86");
        let mut x86 = misaal_isa::SpecLibrary::load_dir(&dir).expect("x86 library");
        x86.retain_verified(&misaal_isa::StatusTable::load(&misaal_isa::StatusTable::path_for(&dir)).expect("status"));
        let v = super::reductions(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        assert!(v.iter().any(|s| s.name == "synth.reduce-vector_reduce_max-u8x16"));
    }
}
