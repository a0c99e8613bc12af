//! Ops computed at twice their width, where no instruction computes them at
//! their own, searched from the semantics.
//!
//! x86 has no 8-bit multiply or shift by a vector, no 32-bit saturating
//! add, no `halving_sub` and no multiply-shift but at 16 bits; Halide's back
//! ends compute such an op on widened operands and narrow the result. So
//! for every same-type op `F<S, E>` (two or three operands and a result of
//! one type), every sign and E = 8, 16, 32, the right side is searched over
//!
//! - `N(G(W(x0), W(x1), ..))`: `G` a same-type op at 2E;
//! - `N(H(G(W(x0), W(x1)), W(x2)))` and `N(H(G(W(x0), W(x1)), broadcast 1))`:
//!   two same-type ops at 2E;
//!
//! with `W` a sign or zero extension of each operand and `N` a wrapping or
//! saturating cast back to E bits. The first candidate of each shape that
//! equals `F` on random and edge inputs at two lane counts becomes a
//! template over the lane count (extraction picks the cheaper shape). An
//! operand that Halide code gives as a constant (a shift amount, the `q` of
//! a multiply-shift, an 8-bit divisor) also gets a `.const` template whose
//! widened operand is the constant broadcast at the wide type.
//!
//! Also the saturating casts into a type at least as wide (`u8 -> u16`,
//! `i16 -> u16`, `u8 -> i8`), which no instruction performs as such: the
//! right side is searched over `cast(x)` and `cast(V(x, broadcast k))`.
//!
//! These are fallbacks, not competitors: the caller
//! (`abstraction::run::legalize`) proves each instance and keeps only those
//! whose op, at that type and operand shape, no instruction rule and no
//! other expansion lowers.

use super::Split;
use super::expand::{inputs, splat, uniform_ops};
use misaal_isa::{BitVec, SpecLibrary};

/// The name prefix of this module's templates: the caller's filter keys on it.
pub const PREFIX: &str = "synth.widened-";

/// A candidate term at one element width and sign per node, over lanes `?n`.
#[derive(Clone, Debug)]
pub(super) enum Tm {
    X(usize),
    /// A broadcast constant at (sign, bits).
    Const(i128, i128, i128),
    /// The rule's constant `?c` broadcast at (sign, bits).
    CVar(i128, i128),
    /// An op with its sign, bits and the generics after the lane count.
    Op(String, i128, i128, Vec<i128>, Vec<Tm>),
}

impl Tm {
    pub(super) fn op(name: &str, sign: i128, bits: i128, extra: Vec<i128>, args: Vec<Tm>) -> Tm {
        Tm::Op(name.to_string(), sign, bits, extra, args)
    }

    pub(super) fn text(&self) -> String {
        match self {
            Tm::X(k) => format!("?x{k}"),
            Tm::Const(s, b, c) => format!("(broadcast (t {s} {b} ?n) {c})"),
            Tm::CVar(s, b) => format!("(broadcast (t {s} {b} ?n) ?c)"),
            Tm::Op(op, s, b, extra, args) => {
                let mut parts = vec![format!("({op} (t {s} {b} ?n)")];
                parts.extend(extra.iter().map(|g| g.to_string()));
                parts.extend(args.iter().map(Tm::text));
                format!("{})", parts.join(" "))
            }
        }
    }

    pub(super) fn eval(&self, halide: &SpecLibrary, n: i128, xs: &[BitVec]) -> Option<BitVec> {
        match self {
            Tm::X(k) => xs.get(*k).cloned(),
            Tm::Const(_, b, c) => Some(splat(*b, n, *c)),
            Tm::CVar(..) => None,
            Tm::Op(op, s, b, extra, args) => {
                let mut g = vec![*s, *b, n];
                g.extend(extra);
                let (_, sem) = halide.instantiate(op, &g).ok()?;
                let vals: Vec<BitVec> = args.iter().map(|a| a.eval(halide, n, xs)).collect::<Option<_>>()?;
                sem.eval(&vals).ok()
            }
        }
    }
}

/// Whether `rhs` equals `lhs` (an op instantiated at `generics(n)`) on
/// random and edge inputs at two lane counts.
fn agrees(halide: &SpecLibrary, op: &str, generics: &dyn Fn(i128) -> Vec<i128>, arity: usize, e: i128, rhs: &Tm) -> bool {
    [4i128, 8].iter().all(|&n| {
        let Ok((_, lhs)) = halide.instantiate(op, &generics(n)) else { return false };
        inputs(arity, &vec![(e * n) as u32; arity], 48, 0x7769_6465 ^ (e * n) as u64).iter().all(|xs| match (lhs.eval(xs), rhs.eval(halide, n, xs)) {
            (Ok(want), Some(got)) => want == got,
            _ => false,
        })
    })
}

/// Whether `t` equals the one-operand `op<generics(n)>` (an E-bit operand)
/// on random and edge inputs at 4 and 8 lanes.
fn agrees_unary(halide: &SpecLibrary, op: &str, generics: &dyn Fn(i128) -> Vec<i128>, e: i128, seed: u64, t: &Tm) -> bool {
    [4i128, 8].iter().all(|&n| {
        let Ok((_, lhs)) = halide.instantiate(op, &generics(n)) else { return false };
        inputs(1, &[(e * n) as u32], 48, seed ^ (e * n) as u64).iter().all(|xs| lhs.eval(xs).ok() == t.eval(halide, n, xs))
    })
}

/// Lane counts that put the wide type in a register and the narrow one in
/// at least 128 bits.
fn lanes(e: i128, regs: super::Registers) -> Vec<i128> {
    regs.lanes(&[e]).into_iter().filter(|n| n * 2 * e <= regs.widest).collect()
}

/// The operand a Halide program gives as a constant, if the op has one,
/// and the constants its `.const` template is instantiated at.
fn constant_operand(op: &str, has_s2: bool, arity: usize, sign: i128, e: i128) -> Option<(usize, Vec<i128>)> {
    if has_s2 {
        return Some((1, (0..e).collect()));
    }
    if arity == 3 {
        return Some((2, (0..2 * e).collect()));
    }
    // Divisors: the wide division has proved lowerings only at 16 bits.
    if matches!(op, "div" | "mod") && e == 8 {
        let top = if sign == 1 { 127 } else { 255 };
        return Some((1, (1..=top).collect()));
    }
    None
}

/// Every widening template the search finds.
pub fn widenings(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let uniform = uniform_ops(halide);
    // Three-operand same-type ops at 2E, for shape A of a three-operand op.
    let ternary: Vec<String> = halide
        .generic_names()
        .into_iter()
        .filter(|o| halide.generic(o).is_some_and(|g| g.generics.len() == 3))
        .filter(|o| halide.instantiate_signature(o, &[0, 16, 8]).is_ok_and(|s| s.params.len() == 3 && s.ret.width() == 128 && s.params.iter().all(|p| p.ty.width() == 128)))
        .map(|o| o.to_string())
        .collect();
    let mut out = Vec::new();
    for op in halide.generic_names() {
        let op: &str = op;
        // absd's result is unsigned whatever its operands: not one type.
        if op == "absd" {
            continue;
        }
        let Some(g) = halide.generic(op) else { continue };
        let has_s2 = match g.generics.iter().map(|s| s.as_str()).collect::<Vec<_>>().as_slice() {
            ["S", "E", "N"] => false,
            ["S", "E", "N", "S2"] => true,
            _ => continue,
        };
        let probe = if has_s2 { vec![0, 16, 8, 0] } else { vec![0, 16, 8] };
        let Ok(sig) = halide.instantiate_signature(op, &probe) else { continue };
        let arity = sig.params.len();
        if !(2..=3).contains(&arity) || sig.ret.width() != 128 || sig.params.iter().any(|p| p.ty.width() != 128) {
            continue;
        }
        for e in [8i128, 16, 32] {
            for s in [0i128, 1] {
                for s2 in if has_s2 { vec![0i128, 1] } else { vec![-1] } {
                    let generics = |n: i128| if has_s2 { vec![s, e, n, s2] } else { vec![s, e, n] };
                    let op_sign = |k: usize| if has_s2 && k == 1 { s2 } else { s };
                    for (shape, rhs) in search(halide, op, &generics, arity, e, s, &op_sign, &uniform, &ternary) {
                        let extra = if has_s2 { format!(" {s2}") } else { String::new() };
                        let vars: Vec<String> = (0..arity).map(|k| format!("?x{k}")).collect();
                        let letter = super::sign_letter(s);
                        let amount = if has_s2 { format!(".s{s2}") } else { String::new() };
                        let name = format!("{PREFIX}{op}-{letter}{e}{amount}.{shape}");
                        let lhs = format!("({op} (t {s} {e} ?n){extra} {})", vars.join(" "));
                        let provenance = format!(
                            "phase legalize; searched over N(G(W(x0), W(x1), ..)) and N(H(G(W(x0), W(x1)), W(x2) or broadcast 1)) (G, H same-type ops at twice the width, W a sign or zero extension, N a wrapping or saturating cast back): `{op}` at {letter}{e} is `{}` (equal on random and edge inputs at 4 and 8 lanes); kept only where nothing lowers the op at its own width",
                            rhs.text()
                        );
                        let free = vec![("n".to_string(), lanes(e, regs))];
                        // The constant operand's template: its widening is the
                        // broadcast at the wide type.
                        if let Some((k, cs)) = constant_operand(op, has_s2, arity, s, e) {
                            // A multiply-shift's `q` is unsigned in Halide
                            // whatever the operands' sign: `(uint16)7`.
                            let so = if super::pad::unsigned_operand(op) == Some(k) { 0 } else { op_sign(k) };
                            if let Some(crhs) = with_constant(&rhs, k) {
                                let clhs = lhs.replace(&format!(" ?x{k})"), &format!(" (broadcast (t {so} {e} ?n) ?c))"));
                                let mut cfree = free.clone();
                                cfree.push(("c".into(), cs));
                                out.push(Split {
                                    op: op.to_string(),
                                    name: format!("{name}.const"),
                                    lhs: clhs,
                                    rhs: crhs.text(),
                                    conds: vec![],
                                    free: cfree,
                                    provenance: format!("{provenance}; with operand {k} a broadcast constant, its widening is the constant broadcast at the wide type"),
                                });
                            }
                        }
                        out.push(Split { op: op.to_string(), name, lhs, rhs: rhs.text(), conds: vec![], free, provenance });
                    }
                }
            }
        }
    }
    out.extend(saturating_widenings(halide, regs));
    out.extend(stepped_widenings(halide, regs));
    out
}

/// The lane counts of a widening from `e` to `e2` bits: a register of the
/// wide type, and past it (to 2048 bits) where the operand is under two
/// filled registers, which the cast's split cannot halve into operands that
/// fill one (on x86, an u8x16 to u64x16: 1,024 bits from 128).
fn widening_lanes(e: i128, e2: i128, regs: super::Registers) -> Vec<i128> {
    let mut ns = regs.lanes(&[e2]);
    ns.extend((1..=9).map(|k| 1i128 << k).filter(|n| n * e2 > regs.widest && n * e2 <= 2048 && n * e < 2 * regs.fill));
    ns
}

/// Casts to four or eight times the width, which the enumeration (128-bit
/// units over whole registers) never meets: searched over two casts
/// through every intermediate width and sign, the first equal on random
/// and edge inputs kept (x86 then has a one-step rule for each).
fn stepped_widenings(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let letter = super::sign_letter;
    let mut out = Vec::new();
    for e in [8i128, 16] {
        for e2 in [4 * e, 8 * e] {
            if e2 > 64 {
                continue;
            }
            for (s, s2) in [(0i128, 0i128), (0, 1), (1, 0), (1, 1)] {
                let generics = |n: i128| vec![s, e, n, s2, e2];
                let mids = (1..).map(|k| e << k).take_while(|&m| m < e2).flat_map(|m| [(s, m), (1 - s, m)]);
                let cands = mids.map(|(sm, m)| Tm::op("cast", sm, m, vec![s2, e2], vec![Tm::op("cast", s, e, vec![sm, m], vec![Tm::X(0)])]));
                let Some(rhs) = cands.into_iter().find(|t| agrees_unary(halide, "cast", &generics, e, 0x7374_6570, t)) else { continue };
                let ns = widening_lanes(e, e2, regs);
                out.push(Split {
                    op: "cast".into(),
                    name: format!("{PREFIX}cast-{}{e}-{}{e2}", letter(s), letter(s2)),
                    lhs: format!("(cast (t {s} {e} ?n) {s2} {e2} ?x0)"),
                    rhs: rhs.text(),
                    conds: vec![],
                    free: vec![("n".into(), ns)],
                    provenance: format!(
                        "phase legalize; searched over cast(cast(x)) through every intermediate width and sign: the cast from {}{e} to {}{e2} is `{}` (equal on random and edge inputs at 4 and 8 lanes)",
                        letter(s),
                        letter(s2),
                        rhs.text()
                    ),
                });
            }
        }
    }
    out
}

/// `rhs` with the widening of operand `k` replaced by `?c` broadcast at the
/// wide type (None if operand `k` is not widened by one cast of itself).
fn with_constant(rhs: &Tm, k: usize) -> Option<Tm> {
    fn go(t: &Tm, k: usize, hit: &mut bool) -> Tm {
        match t {
            // A cast of the operand, or of its same-width reinterpretation.
            Tm::Op(op, _, _, extra, args)
                if op == "cast"
                    && match args.as_slice() {
                        [Tm::X(j)] => *j == k,
                        [Tm::Op(inner, _, _, _, a)] => inner == "cast" && matches!(a.as_slice(), [Tm::X(j)] if *j == k),
                        _ => false,
                    } =>
            {
                *hit = true;
                Tm::CVar(extra[0], extra[1])
            }
            Tm::Op(op, s, b, extra, args) => Tm::Op(op.clone(), *s, *b, extra.clone(), args.iter().map(|a| go(a, k, hit)).collect()),
            other => other.clone(),
        }
    }
    let mut hit = false;
    let t = go(rhs, k, &mut hit);
    hit.then_some(t)
}

/// The candidates, smallest first within each shape; the first of each
/// shape that agrees, with the shape's letter.
#[allow(clippy::too_many_arguments)]
fn search(
    halide: &SpecLibrary,
    op: &str,
    generics: &dyn Fn(i128) -> Vec<i128>,
    arity: usize,
    e: i128,
    s: i128,
    op_sign: &dyn Fn(usize) -> i128,
    uniform: &[(String, bool)],
    ternary: &[String],
) -> Vec<(char, Tm)> {
    let w = 2 * e;
    // Each operand's widenings: from its own sign, and zero-extended if signed.
    let widen = |k: usize| -> Vec<Tm> {
        let so = op_sign(k);
        let mut v = vec![Tm::op("cast", so, e, vec![so, w], vec![Tm::X(k)])];
        if so == 1 {
            v.push(Tm::op("cast", 0, e, vec![so, w], vec![Tm::op("cast", 1, e, vec![0, e], vec![Tm::X(k)])]));
        }
        v
    };
    let narrow = |t: Tm| -> [Tm; 2] { [Tm::op("cast", s, w, vec![s, e], vec![t.clone()]), Tm::op("saturating_cast", s, w, vec![s, e], vec![t])] };
    // A same-type op at 2E over `args` (its S2 the second operand's sign).
    let apply = |u: &str, u_s2: bool, args: Vec<Tm>, second_sign: i128| Tm::op(u, s, w, if u_s2 { vec![second_sign] } else { vec![] }, args);
    let sign_of = |t: &Tm| match t {
        Tm::Op(_, _, _, extra, _) if !extra.is_empty() => extra[0],
        Tm::Const(sg, _, _) => *sg,
        _ => s,
    };
    let combos: Vec<Vec<Tm>> = {
        let mut c: Vec<Vec<Tm>> = vec![vec![]];
        for k in 0..arity {
            c = c.into_iter().flat_map(|pre| widen(k).into_iter().map(move |x| [pre.clone(), vec![x]].concat())).collect();
        }
        c
    };
    let ok = |t: &Tm| agrees(halide, op, generics, arity, e, t);
    let mut found = Vec::new();
    // Shape A.
    'a: for ws in &combos {
        let gs: Vec<(String, bool)> = if arity == 2 { uniform.to_vec() } else { ternary.iter().map(|t| (t.clone(), false)).collect() };
        for (u, u_s2) in &gs {
            let body = apply(u, *u_s2, ws.clone(), sign_of(&ws[1]));
            for t in narrow(body) {
                if ok(&t) {
                    found.push(('a', t));
                    break 'a;
                }
            }
        }
    }
    // Shape B.
    'b: for ws in &combos {
        let thirds: Vec<Tm> = if arity == 3 { vec![ws[2].clone()] } else { vec![Tm::Const(s, w, 1)] };
        for (g, g_s2) in uniform {
            let inner = apply(g, *g_s2, ws[..2].to_vec(), sign_of(&ws[1]));
            for (h, h_s2) in uniform {
                for third in &thirds {
                    // H by the constant 1 leaving its operand unchanged adds nothing to shape A.
                    if matches!(third, Tm::Const(..)) && is_identity(halide, h, *h_s2, s, w, third) {
                        continue;
                    }
                    let body = apply(h, *h_s2, vec![inner.clone(), third.clone()], sign_of(third));
                    for t in narrow(body) {
                        if ok(&t) {
                            found.push(('b', t));
                            break 'b;
                        }
                    }
                }
            }
        }
    }
    found
}

/// Whether `h(v, k)` is `v` on random inputs.
fn is_identity(halide: &SpecLibrary, h: &str, h_s2: bool, s: i128, w: i128, k: &Tm) -> bool {
    let n = 4;
    let t = Tm::op(h, s, w, if h_s2 { vec![s] } else { vec![] }, vec![Tm::X(0), k.clone()]);
    inputs(1, &[(w * n) as u32], 16, 0x6964).iter().all(|xs| t.eval(halide, n, xs).as_ref() == Some(&xs[0]))
}

/// Saturating casts into a type at least as wide.
fn saturating_widenings(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let same: Vec<String> = uniform_ops(halide).into_iter().filter(|(_, s2)| !*s2).map(|(op, _)| op).collect();
    let letter = super::sign_letter;
    let mut out = Vec::new();
    for e in [8i128, 16, 32] {
        for e2 in [e, 2 * e, 4 * e, 8 * e] {
            if e2 > 64 {
                continue;
            }
            for (s, s2) in [(0i128, 0i128), (0, 1), (1, 0), (1, 1)] {
                if (s, e) == (s2, e2) {
                    continue;
                }
                let generics = |n: i128| vec![s, e, n, s2, e2];
                let plain = Tm::op("cast", s, e, vec![s2, e2], vec![Tm::X(0)]);
                let consts = [0i128, 1, (1 << (e - 1)) - 1, (1 << e) - 1];
                let clamped = same.iter().flat_map(|v| consts.iter().map(move |&k| Tm::op("cast", s, e, vec![s2, e2], vec![Tm::op(v, s, e, vec![], vec![Tm::X(0), Tm::Const(s, e, k)])])));
                let Some(rhs) = std::iter::once(plain).chain(clamped).find(|t| agrees_unary(halide, "saturating_cast", &generics, e, 0x7361_7477, t)) else { continue };
                let ns = widening_lanes(e, e2, regs);
                out.push(Split {
                    op: "saturating_cast".into(),
                    name: format!("{PREFIX}saturating_cast-{}{e}-{}{e2}", letter(s), letter(s2)),
                    lhs: format!("(saturating_cast (t {s} {e} ?n) {s2} {e2} ?x0)"),
                    rhs: rhs.text(),
                    conds: vec![],
                    free: vec![("n".into(), ns)],
                    provenance: format!(
                        "phase legalize; searched over cast(x) and cast(V(x, broadcast k)) (V a same-type op, k among 0, 1, the signed and the unsigned maximum): `saturating_cast` from {}{e} to {}{e2}, a type at least as wide, is `{}` (equal on random and edge inputs at 4 and 8 lanes)",
                        letter(s),
                        letter(s2),
                        rhs.text()
                    ),
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
    fn widened_forms_are_found() {
        let (halide, _) = super::super::test_libraries();
        let all = widenings(&halide, crate::legalize::Registers::x86());
        let rhs = |name: &str| all.iter().find(|s| s.name == name).map(|s| s.rhs.clone()).unwrap_or_else(|| panic!("{name} not found: {:#?}", all.iter().map(|s| &s.name).collect::<Vec<_>>()));
        // The 8-bit multiply is the 16-bit one narrowed.
        assert_eq!(rhs("synth.widened-mul-u8.a"), "(cast (t 0 16 ?n) 0 8 (mul (t 0 16 ?n) (cast (t 0 8 ?n) 0 16 ?x0) (cast (t 0 8 ?n) 0 16 ?x1)))");
        // The 32-bit saturating add saturates the 64-bit sum.
        assert!(rhs("synth.widened-saturating_add-i32.a").starts_with("(saturating_cast (t 1 64 ?n) 1 32 (add (t 1 64 ?n)"));
        // halving_sub needs two ops: the difference, then a shift by 1.
        assert!(rhs("synth.widened-halving_sub-i8.b").contains("(broadcast (t 1 16 ?n) 1)"));
        // A u8 divisor widens to the u16 division the division rules lower.
        assert!(rhs("synth.widened-div-u8.a.const").contains("(div (t 0 16 ?n) (cast (t 0 8 ?n) 0 16 ?x0) (broadcast (t 0 16 ?n) ?c))"), "{}", rhs("synth.widened-div-u8.a.const"));
        // Saturating into a wider type: a cast, or a clamp then a cast.
        assert_eq!(rhs("synth.widened-saturating_cast-u8-u16"), "(cast (t 0 8 ?n) 0 16 ?x0)");
        assert_eq!(rhs("synth.widened-saturating_cast-i8-u16"), "(cast (t 1 8 ?n) 0 16 (max (t 1 8 ?n) ?x0 (broadcast (t 1 8 ?n) 0)))");
        assert_eq!(rhs("synth.widened-saturating_cast-u8-i8"), "(cast (t 0 8 ?n) 1 8 (min (t 0 8 ?n) ?x0 (broadcast (t 0 8 ?n) 127)))");
        // A cast by four times the width, in two doubling steps.
        assert_eq!(rhs("synth.widened-cast-u8-i32"), "(cast (t 0 16 ?n) 1 32 (cast (t 0 8 ?n) 0 16 ?x0))");
        // A u8x16 widened to 1,024 bits, which no split halves (its halves
        // would read 64 bits), has its own instance; a u16x16 is split.
        let lanes = |name: &str| all.iter().find(|s| s.name == name).map(|s| s.free.iter().find(|(v, _)| v == "n").unwrap().1.clone()).unwrap();
        assert_eq!(lanes("synth.widened-cast-u8-u64"), vec![2, 4, 8, 16]);
        assert_eq!(lanes("synth.widened-saturating_cast-i8-u64"), vec![2, 4, 8, 16]);
        assert_eq!(lanes("synth.widened-cast-u16-i64"), vec![2, 4, 8]);
    }
}
