//! Signed division, negative divisors and `mod` by a constant, reduced to
//! the unsigned division the other searches lower (`expand::division_
//! expansions` at 16 bits, `widen` from 8 bits), searched from the
//! semantics.
//!
//! Halide's division rounds towards negative infinity for a positive
//! divisor and its `mod` is Euclidean, so neither is x86's or C's. Each
//! search evaluates a small grammar against Halide's `div` or `mod` on
//! random and edge inputs at sample divisors, and the first candidate that
//! agrees becomes a template over the divisor `?c`:
//!
//! - a signed `div(x, c)`, c > 0: `R(U2(div_u(U1(u(x), m), c), m))`, with
//!   `u`/`R` the same-width reinterpretations, `m` the sign mask `u(x >> (E
//!   - 1))`, and `U1`, `U2` same-type ops (finds the flip `x ^ m`);
//! - a negative divisor: `U(0, div(x, -c))`, `U` a same-type op (finds the
//!   negation);
//! - `mod(x, c)`: `U(x, V(div(x, k), k))` with k = c or -c (finds
//!   `x - div(x, c) * c`, and the same k = |c| for a negative c);
//! - a power of two: `shr(x, j)` (finds j = log2 c, arithmetic for a
//!   signed x), at 8 and 16 bits and for u32.
//!
//! No rule divides i32 at all, nor u32 by any other constant: the
//! multiply-high form of the 16-bit rules is found, but Z3 does not prove
//! 32-bit division within the synthesis budget (u32 by 3 `unknown` at 4
//! lanes in 10 s; i32 by 8 takes ~20 s), and an unproved rule is never
//! written.
//!
//! Like `widen`'s, these templates are fallbacks: the caller keeps an
//! instance only where nothing else lowers its op and everything its right
//! side builds is lowered (so a divisor no unsigned division rule covers
//! writes no rule).

use super::Split;
use super::expand::{inputs, splat, uniform_ops};
use misaal_isa::{BitVec, SpecLibrary};

/// The name prefix of this module's templates (a fallback, as `widen`'s).
pub const PREFIX: &str = "synth.divide-";

/// Sample divisors a candidate must agree at (all below 2^(E-1)).
const SAMPLES: [i128; 5] = [3, 7, 10, 100, 127];

/// The divisors each template is instantiated at: the magnitudes from 2 (1
/// is the identity the simplifier removes) to 255 (the unsigned division
/// rules' own range; an instance no rule lowers is never written anyway).
fn magnitudes(e: i128) -> Vec<i128> {
    (2..=((1i128 << (e - 1)) - 1).min(255)).collect()
}

/// The lane counts of an E-bit register.
fn lanes(e: i128) -> Vec<i128> {
    super::register_lanes(&[e])
}

fn eval(halide: &SpecLibrary, op: &str, g: &[i128], args: &[&BitVec]) -> Option<BitVec> {
    halide.instantiate(op, g).ok()?.1.eval(args).ok()
}

/// Whether `cand(x, c)` equals `want(x, c)` on random and edge inputs at
/// every sample divisor (signed, `sign` of them) and two lane counts.
fn agrees(e: i128, sign: i128, want: &dyn Fn(i128, &BitVec, i128) -> Option<BitVec>, cand: &dyn Fn(i128, &BitVec, i128) -> Option<BitVec>) -> bool {
    [4i128, 8].iter().all(|&n| {
        SAMPLES.iter().filter(|&&c| c < 1 << (e - 1)).all(|&c| {
            let c = sign * c;
            inputs(1, &[(e * n) as u32], 48, 0x6469_7669 ^ (e * n + c) as u64).iter().all(|xs| {
                let w = want(n, &xs[0], c);
                w.is_some() && w == cand(n, &xs[0], c)
            })
        })
    })
}

/// Every division template the searches find.
pub fn divisions(halide: &SpecLibrary) -> Vec<Split> {
    // The bitwise ops first (one instruction at every width and sign), then
    // the plain wrapping ops, then the rest.
    let mut same: Vec<String> = uniform_ops(halide).into_iter().filter(|(_, s2)| !*s2).map(|(op, _)| op).collect();
    same.sort_by_key(|op| !["xor", "and", "or"].contains(&op.as_str()));
    let mut out = powers_of_two(halide);
    for e in [8i128, 16] {
        let free = |cs: Vec<i128>| vec![("n".to_string(), lanes(e)), ("c".to_string(), cs)];
        let ty = |s: i128| format!("(t {s} {e} ?n)");
        let div_want = |n: i128, x: &BitVec, c: i128| eval(halide, "div", &[1, e, n], &[x, &splat(e, n, c)]);
        // Signed division by a positive constant, through the unsigned one.
        let reint = |n: i128, x: &BitVec, from: i128| eval(halide, "cast", &[from, e, n, 1 - from, e], &[x]);
        'signed: for u1 in &same {
            for u2 in &same {
                let cand = |n: i128, x: &BitVec, c: i128| -> Option<BitVec> {
                    let m = reint(n, &eval(halide, "shr", &[1, e, n, 0], &[x, &splat(e, n, e - 1)])?, 1)?;
                    let ux = reint(n, x, 1)?;
                    let inner = eval(halide, u1, &[0, e, n], &[&ux, &m])?;
                    let q = eval(halide, "div", &[0, e, n], &[&inner, &splat(e, n, c)])?;
                    reint(n, &eval(halide, u2, &[0, e, n], &[&q, &m])?, 0)
                };
                if agrees(e, 1, &div_want, &cand) {
                    let (u, i) = (ty(0), ty(1));
                    let m = format!("(cast {i} 0 {e} (shr {i} 0 ?x0 (broadcast (t 0 {e} ?n) {})))", e - 1);
                    let rhs = format!("(cast {u} 1 {e} ({u2} {u} (div {u} ({u1} {u} (cast {i} 0 {e} ?x0) {m}) (broadcast {u} ?c)) {m}))");
                    out.push(Split {
                        op: "div".into(),
                        name: format!("{PREFIX}div-i{e}.unsigned"),
                        lhs: format!("(div {i} ?x0 (broadcast {i} ?c))"),
                        rhs,
                        conds: vec![],
                        free: free(magnitudes(e)),
                        provenance: format!("phase legalize; searched over R(U2(div_u(U1(u(x), m), c), m)) (u, R the same-width reinterpretations, m the sign mask of x, U1 and U2 same-type ops): signed division of i{e} by a positive constant is the unsigned division of x {u1} m, then {u2} m (equal on random and edge inputs at divisors 3, 7, 10, 100, 127)"),
                    });
                    break 'signed;
                }
            }
        }
        // A negative divisor.
        for u in &same {
            let cand = |n: i128, x: &BitVec, c: i128| -> Option<BitVec> {
                let q = eval(halide, "div", &[1, e, n], &[x, &splat(e, n, -c)])?;
                eval(halide, u, &[1, e, n], &[&splat(e, n, 0), &q])
            };
            if agrees(e, -1, &div_want, &cand) {
                let i = ty(1);
                out.push(Split {
                    op: "div".into(),
                    name: format!("{PREFIX}div-i{e}.negative"),
                    lhs: format!("(div {i} ?x0 (broadcast {i} (- 0 ?c)))"),
                    rhs: format!("({u} {i} (broadcast {i} 0) (div {i} ?x0 (broadcast {i} ?c)))"),
                    conds: vec![],
                    free: free(magnitudes(e)),
                    provenance: format!("phase legalize; searched over U(0, div(x, -c)), U a same-type op: division of i{e} by a negative constant -c is {u}(0, div(x, c)) (equal on random and edge inputs at divisors -3, -7, -10, -100, -127)"),
                });
                break;
            }
        }
        // mod through div, at both signs of x and of the divisor.
        for s in [0i128, 1] {
            for sign in if s == 1 { vec![1i128, -1] } else { vec![1] } {
                let mod_want = |n: i128, x: &BitVec, c: i128| eval(halide, "mod", &[s, e, n], &[x, &splat(e, n, c)]);
                let mut found = None;
                // The divisor's magnitude first: a positive divisor needs no
                // further rule.
                'm: for ks in [sign, -sign] {
                    for u in &same {
                        for v in &same {
                            let cand = |n: i128, x: &BitVec, c: i128| -> Option<BitVec> {
                                let k = splat(e, n, ks * c);
                                let q = eval(halide, "div", &[s, e, n], &[x, &k])?;
                                eval(halide, u, &[s, e, n], &[x, &eval(halide, v, &[s, e, n], &[&q, &k])?])
                            };
                            if agrees(e, sign, &mod_want, &cand) {
                                found = Some((ks, u.clone(), v.clone()));
                                break 'm;
                            }
                        }
                    }
                }
                let Some((ks, u, v)) = found else { continue };
                let t = ty(s);
                let letter = super::sign_letter(s);
                // The template's ?c is the divisor's magnitude.
                let (lc, k) = match (sign, ks) {
                    (1, 1) => ("?c", "?c"),
                    (1, _) => ("?c", "(- 0 ?c)"),
                    (_, 1) => ("(- 0 ?c)", "(- 0 ?c)"),
                    _ => ("(- 0 ?c)", "?c"),
                };
                let cs: Vec<i128> = magnitudes(if s == 1 { e } else { e + 1 });
                out.push(Split {
                    op: "mod".into(),
                    name: format!("{PREFIX}mod-{letter}{e}{}", if sign < 0 { ".negative" } else { "" }),
                    lhs: format!("(mod {t} ?x0 (broadcast {t} {lc}))"),
                    rhs: format!("({u} {t} ?x0 ({v} {t} (div {t} ?x0 (broadcast {t} {k})) (broadcast {t} {k})))"),
                    conds: vec![],
                    free: free(cs),
                    provenance: format!("phase legalize; searched over U(x, V(div(x, k), k)), k = c or -c, U and V same-type ops: `mod` of {letter}{e} by a {} constant c is {u}(x, {v}(div(x, k), k)) with k = {} (equal on random and edge inputs at divisors {}3, 7, 10, 100, 127)", if sign < 0 { "negative" } else { "positive" }, if ks == 1 { "c" } else { "-c" }, if sign < 0 { "-" } else { "" }),
                });
            }
        }
    }
    out
}

/// Division by a power of two 2^k, searched over shifts right by a
/// constant: `div(x, 2^k)` is `shr(x, j)` for the first j in 0..E that
/// agrees on random and edge inputs (j = k: Halide's division floors, as
/// an arithmetic shift does). One template per divisor, over the lanes.
fn powers_of_two(halide: &SpecLibrary) -> Vec<Split> {
    let mut out = Vec::new();
    for e in [8i128, 16, 32] {
        // Signed 32-bit division: Z3 needs ~20 s per 4-lane instance, over
        // the synthesis budget, and an unproved rule is never written.
        for s in if e == 32 { vec![0i128] } else { vec![0, 1] } {
            let letter = super::sign_letter(s);
            let top = if s == 1 { e - 2 } else { e - 1 };
            for k in 1..=top {
                let c = 1i128 << k;
                let want = |n: i128, x: &BitVec, _: i128| eval(halide, "div", &[s, e, n], &[x, &splat(e, n, c)]);
                let Some(j) = (0..e).find(|&j| {
                    let cand = |n: i128, x: &BitVec, _: i128| eval(halide, "shr", &[s, e, n, 0], &[x, &splat(e, n, j)]);
                    agrees(e, 1, &want, &cand)
                }) else {
                    continue;
                };
                let t = format!("(t {s} {e} ?n)");
                out.push(Split {
                    op: "div".into(),
                    name: format!("{PREFIX}div-{letter}{e}.pow2-{c}"),
                    lhs: format!("(div {t} ?x0 (broadcast {t} {c}))"),
                    rhs: format!("(shr {t} 0 ?x0 (broadcast (t 0 {e} ?n) {j}))"),
                    conds: vec![],
                    free: vec![("n".to_string(), lanes(e))],
                    provenance: format!("phase legalize; searched over shr(x, j), j below the width: division of {letter}{e} by {c} is a shift right by {j} (equal on random and edge inputs at 4 and 8 lanes)"),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_division_and_mod_are_found() {
        let (halide, _) = super::super::test_libraries();
        let all = divisions(&halide);
        let rhs = |name: &str| all.iter().find(|s| s.name == name).map(|s| s.rhs.clone()).unwrap_or_else(|| panic!("{name}: {:#?}", all.iter().map(|s| &s.name).collect::<Vec<_>>()));
        // The flip: x ^ m divided unsigned, then ^ m.
        let d = rhs("synth.divide-div-i16.unsigned");
        assert!(d.starts_with("(cast (t 0 16 ?n) 1 16 (xor (t 0 16 ?n) (div (t 0 16 ?n) (xor "), "{d}");
        assert_eq!(rhs("synth.divide-div-i8.negative"), "(sub (t 1 8 ?n) (broadcast (t 1 8 ?n) 0) (div (t 1 8 ?n) ?x0 (broadcast (t 1 8 ?n) ?c)))");
        assert_eq!(rhs("synth.divide-mod-u16"), "(sub (t 0 16 ?n) ?x0 (mul (t 0 16 ?n) (div (t 0 16 ?n) ?x0 (broadcast (t 0 16 ?n) ?c)) (broadcast (t 0 16 ?n) ?c)))");
        assert!(rhs("synth.divide-mod-i8.negative").contains("(div (t 1 8 ?n) ?x0 (broadcast (t 1 8 ?n) ?c))"));
        // Powers of two: a shift, arithmetic for a signed x (Halide floors).
        assert_eq!(rhs("synth.divide-div-i16.pow2-8"), "(shr (t 1 16 ?n) 0 ?x0 (broadcast (t 0 16 ?n) 3))");
        assert_eq!(rhs("synth.divide-div-u32.pow2-8"), "(shr (t 0 32 ?n) 0 ?x0 (broadcast (t 0 32 ?n) 3))");
        assert_eq!(rhs("synth.divide-div-u16.pow2-32768"), "(shr (t 0 16 ?n) 0 ?x0 (broadcast (t 0 16 ?n) 15))");
    }
}
