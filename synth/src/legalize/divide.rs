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
//!   signed x), at 8, 16, 32 and 64 bits (`vpsraq` on AVX-512);
//!
//! - an unsigned 32-bit `div(x, c)`: `shr(mul_shift_right(x, m, 32), s)`
//!   or, where the multiplier needs 33 bits, `shr(halving_add(x,
//!   mul_shift_right(x, m - 2^32, 32)), s - 1)` (the 16-bit rules' forms,
//!   see `expand::division_expansions`), m and s by Granlund and
//!   Montgomery's bound and checked against Halide's `div` on random and
//!   edge inputs. Z3 cannot prove a 32-bit divider equal to a multiply-high
//!   by bit-blasting; the verifier reads such cones as integers
//!   (`misaal_verifier::integers`), and proves each instance there.
//!
//! Like `widen`'s, these templates are fallbacks: the caller keeps an
//! instance only where nothing else lowers its op and everything its right
//! side builds is lowered (so a divisor no unsigned division rule covers
//! writes no rule).

use super::Split;
use super::expand::{inputs, splat, uniform_ops, vector};
use misaal_isa::{BitVec, SpecLibrary};

/// The name prefix of this module's templates (a fallback, as `widen`'s).
pub const PREFIX: &str = "synth.divide-";

/// Sample divisors a candidate must agree at (all below 2^(E-1)).
const SAMPLES: [i128; 5] = [3, 7, 10, 100, 127];

/// Divisors past 255 the 16- and 32-bit rules also take: a power of ten
/// and 2^16 - 1 (both among the random pipeline generator's divisors).
pub(super) const WIDE_DIVISORS: [i128; 2] = [1000, 65535];

/// The divisors each template is instantiated at: the magnitudes from 2 (1
/// is the identity the simplifier removes) to 255 (the unsigned division
/// rules' own range; an instance no rule lowers is never written anyway),
/// then the powers of two past 255 that [`powers_of_two`] divides by
/// (a negative one, -256, is the negation of a shift), and
/// [`WIDE_DIVISORS`], each below 2^(E-1) (16 bits took neither: an i16
/// divided by -1000 fell back to a lane loop).
fn magnitudes(e: i128) -> Vec<i128> {
    let pow2 = (8..=e - 2).map(|k| 1i128 << k);
    (2..=((1i128 << (e - 1)) - 1).min(255)).chain(pow2).chain(WIDE_DIVISORS).filter(|&c| c < 1 << (e - 1)).collect()
}

/// The lane counts of an E-bit register.
fn lanes(e: i128, regs: super::Registers) -> Vec<i128> {
    regs.lanes(&[e])
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
pub fn divisions(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    // The bitwise ops first (one instruction at every width and sign), then
    // the plain wrapping ops, then the rest.
    let mut same: Vec<String> = uniform_ops(halide).into_iter().filter(|(_, s2)| !*s2).map(|(op, _)| op).collect();
    same.sort_by_key(|op| !["xor", "and", "or"].contains(&op.as_str()));
    let mut out = powers_of_two(halide, regs);
    out.extend(unsigned_32(halide, regs));
    for e in [8i128, 16, 32, 64] {
        let free = |cs: Vec<i128>| vec![("n".to_string(), lanes(e, regs)), ("c".to_string(), cs)];
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

/// Unsigned 32-bit division by each non-power-of-two magnitude: the
/// multiply-high of the 16-bit rules with the multiplier m = ceil(2^(32+s)
/// / c) of the smallest s for which m * c - 2^(32+s) <= 2^s (then the
/// error of x * m / 2^(32+s) stays below 1/c of a step for every u32 x,
/// and the floor is x / c). An m of 33 bits is added as x plus the high
/// half of x * (m - 2^32), halved without overflow by `halving_add`.
/// Each is checked against Halide's `div` on random and edge inputs, and
/// proved per instance by the verifier.
fn unsigned_32(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let n = 8i128;
    let ops = ["div", "mul_shift_right", "halving_add"].map(|op| halide.instantiate(op, &[0, 32, n]).ok().map(|(_, s)| s));
    let (Some(div), Some(msr), Some(havg), Ok((_, shr))) = (&ops[0], &ops[1], &ops[2], halide.instantiate("shr", &[0, 32, n, 0])) else { return Vec::new() };
    let mut out = Vec::new();
    for c in magnitudes(32).into_iter().filter(|c| c.count_ones() != 1) {
        let Some((m, s)) = (0..32).find_map(|s| {
            let m = ((1i128 << (32 + s)) + c - 1) / c;
            (m * c - (1i128 << (32 + s)) <= 1 << s).then_some((m, s))
        }) else {
            continue;
        };
        let wide = m >= 1 << 32;
        let shift = if wide { s - 1 } else { s };
        let v = |x: i128| splat(32, n, x);
        // Quotients change at multiples of c: the edges sit on both sides
        // of the first and the last.
        let top = (u32::MAX as i128) / c * c;
        let edges = [[0, 1, c - 1, c, c + 1, top - 1, top, u32::MAX as i128], [top - c, top - c - 1, 2 * c - 1, (1 << 31) - 1, 1 << 31, u32::MAX as i128 - 1, c * c, c * c - 1]].map(|ls| vector(32, &ls));
        let mut xs: Vec<BitVec> = inputs(1, &[32 * n as u32], 64, 0x7533_32 ^ c as u64).into_iter().map(|mut x| x.remove(0)).collect();
        xs.extend(edges);
        let ok = xs.iter().all(|x| {
            let want = div.eval(&[x, &v(c)]).ok();
            let high = msr.eval(&[x, &v(m & 0xffff_ffff), &v(32)]).ok();
            let high = if wide { high.and_then(|h| havg.eval(&[x, &h]).ok()) } else { high };
            let got = high.and_then(|h| shr.eval(&[&h, &v(shift)]).ok());
            want.is_some() && want == got
        });
        if !ok {
            continue;
        }
        let t = "(t 0 32 ?n)";
        let high = format!("(mul_shift_right {t} ?x0 (broadcast {t} {}) (broadcast {t} 32))", m & 0xffff_ffff);
        let inner = if wide { format!("(halving_add {t} ?x0 {high})") } else { high };
        out.push(Split {
            op: "div".into(),
            name: format!("{PREFIX}div-u32-{c}"),
            lhs: format!("(div {t} ?x0 (broadcast {t} {c}))"),
            rhs: if shift == 0 { inner } else { format!("(shr {t} 0 {inner} (broadcast {t} {shift}))") },
            conds: vec![],
            free: vec![("n".to_string(), lanes(32, regs))],
            provenance: format!(
                "phase legalize; the multiply-high of the 16-bit division rules at 32 bits: u32 division by {c} is {} with m = ceil(2^{}/{c}) (the smallest s with m * c - 2^(32+s) <= 2^s; equal to Halide's div on random and edge inputs)",
                if wide { format!("shr(halving_add(x, mul_shift_right(x, m - 2^32, 32)), {shift})") } else { format!("shr(mul_shift_right(x, m, 32), {shift})") },
                32 + s
            ),
        });
    }
    out
}

/// Division by a power of two 2^k, searched over shifts right by a
/// constant: `div(x, 2^k)` is `shr(x, j)` for the first j in 0..E that
/// agrees on random and edge inputs (j = k: Halide's division floors, as
/// an arithmetic shift does). One template per divisor, over the lanes.
fn powers_of_two(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let mut out = Vec::new();
    for e in [8i128, 16, 32, 64] {
        for s in [0i128, 1] {
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
                    free: vec![("n".to_string(), lanes(e, regs))],
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
        let all = divisions(&halide, crate::legalize::Registers::x86());
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
        assert_eq!(rhs("synth.divide-div-i32.pow2-8"), "(shr (t 1 32 ?n) 0 ?x0 (broadcast (t 0 32 ?n) 3))");
        // 64 bits (an i64 divided by -16 fell back to a lane loop): the
        // arithmetic shift, and a negative divisor through it.
        assert_eq!(rhs("synth.divide-div-i64.pow2-16"), "(shr (t 1 64 ?n) 0 ?x0 (broadcast (t 0 64 ?n) 4))");
        assert_eq!(rhs("synth.divide-div-u64.pow2-4611686018427387904"), "(shr (t 0 64 ?n) 0 ?x0 (broadcast (t 0 64 ?n) 62))");
        assert!(rhs("synth.divide-div-i64.negative").contains("(div (t 1 64 ?n) ?x0 (broadcast (t 1 64 ?n) ?c))"));
        // 32 bits: x / 3 with the 32-bit multiplier, x / 7 with the 33-bit
        // one halved, and signed division and mod through them.
        assert_eq!(rhs("synth.divide-div-u32-3"), "(shr (t 0 32 ?n) 0 (mul_shift_right (t 0 32 ?n) ?x0 (broadcast (t 0 32 ?n) 2863311531) (broadcast (t 0 32 ?n) 32)) (broadcast (t 0 32 ?n) 1))");
        assert!(rhs("synth.divide-div-u32-7").starts_with("(shr (t 0 32 ?n) 0 (halving_add (t 0 32 ?n) ?x0 (mul_shift_right"), "{}", rhs("synth.divide-div-u32-7"));
        assert!(rhs("synth.divide-div-u32-1000").contains("(mul_shift_right"));
        assert!(rhs("synth.divide-div-i32.unsigned").contains("(div (t 0 32 ?n) (xor "));
        assert!(rhs("synth.divide-mod-i32").contains("(div (t 1 32 ?n) ?x0"));
        // Past 255: -256 (a power of two) at 32 bits, -1000 at 16 bits.
        let cs = |name: &str| all.iter().find(|s| s.name == name).and_then(|s| s.free.iter().find(|(v, _)| v == "c").map(|(_, c)| c.clone())).unwrap_or_default();
        assert!(cs("synth.divide-div-i32.negative").contains(&256));
        assert!(cs("synth.divide-div-i16.negative").contains(&1000) && cs("synth.divide-div-i16.unsigned").contains(&1000));
        assert!(!cs("synth.divide-div-i16.negative").contains(&65535) && !cs("synth.divide-div-i16.negative").contains(&32768));
    }
}
