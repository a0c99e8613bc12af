//! Fitting one concrete rule's numbers to arithmetic over its parameters.
//!
//! A concrete rule such as `(add (u 8 16) ?a ?b) -> _mm_add_epi8` has, at
//! its left root, a type (sign 0, element width 8, 16 lanes) and, in its
//! first instruction's `_mm`/`_mm256` prefix, a vector size (128). Every
//! other number in it (type fields, Halide generics, immediates, the digits
//! of instruction names) is matched against a small grammar over those
//! four parameters (`?bw`, `2 ?bw`, `?bw / 2`, `?bw - 1`, `?n`, `2 ?n`,
//! `?vsize`, ...) in an order that depends on what the number is: a sign
//! field tries `?sign`, a width field the widths, a lane count the lane
//! counts, and an immediate a constant unless it is a width (`?bw - 1` is
//! the sign-fill shift). The template evaluated at the rule's own
//! parameters gives back the rule exactly, so every concrete rule is an
//! instance of its abstract rule; which other instances hold is for the
//! verifier to say.

use misaal_isa::SpecLibrary;
use misaal_rulesets::{IntExpr, Term};

/// A concrete rule's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub sign: i128,
    pub bw: i128,
    pub n: i128,
    pub vsize: i128,
}

/// What a number in a rule is, which decides the grammar tried on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Sign,
    Bits,
    Lanes,
    /// An operand or immediate value, or a generic that is none of the above.
    Value,
    /// The digits of an instruction name.
    NameDigits,
}

fn var(v: &str) -> IntExpr {
    IntExpr::Var(v.into())
}
fn op(o: char, a: IntExpr, b: IntExpr) -> IntExpr {
    IntExpr::Op(o, Box::new(a), Box::new(b))
}
fn lit(x: i128) -> IntExpr {
    IntExpr::Lit(x)
}

/// The expressions tried for a slot, most preferred first. `lanes_fitted`:
/// whether `?n` is tied to `?vsize` (else lane counts stay constants).
fn grammar(slot: Slot, lanes_fitted: bool) -> Vec<IntExpr> {
    let bw = || var("bw");
    let n = || var("n");
    let mut g = Vec::new();
    match slot {
        Slot::Sign => g.push(var("sign")),
        Slot::Bits => {
            g.push(bw());
            g.push(op('*', lit(2), bw()));
            g.push(op('/', bw(), lit(2)));
            g.push(op('*', lit(4), bw()));
            g.push(op('/', bw(), lit(4)));
        }
        Slot::Lanes if lanes_fitted => {
            g.push(n());
            g.push(op('*', lit(2), n()));
            g.push(op('/', n(), lit(2)));
            g.push(op('*', lit(4), n()));
            g.push(op('/', n(), lit(4)));
            g.push(op('*', lit(8), n()));
            g.push(op('/', n(), lit(8)));
        }
        Slot::Lanes => {}
        // 0, 1 and 2 are kept as they are: a shift by 1 or a pair
        // reduction is not a width, and `?bw` where it happens to be 1
        // would not generalize.
        Slot::Value => {
            g.push(bw());
            g.push(op('-', bw(), lit(1)));
        }
        Slot::NameDigits => {
            g.push(bw());
            g.push(op('*', lit(2), bw()));
            g.push(op('/', bw(), lit(2)));
            g.push(op('*', lit(4), bw()));
            g.push(var("vsize"));
            g.push(op('/', var("vsize"), lit(2)));
        }
    }
    g
}

/// The first expression of the slot's grammar equal to `value` at `p`, or
/// the constant. Small values never fit a width (a 1 or 2 would generalize
/// into nonsense at other widths).
pub fn fit(slot: Slot, value: i128, p: &Params, lanes_fitted: bool) -> IntExpr {
    let env = [("sign".to_string(), p.sign), ("bw".to_string(), p.bw), ("n".to_string(), p.n), ("vsize".to_string(), p.vsize)];
    if slot != Slot::Sign && value <= 2 {
        return lit(value);
    }
    for e in grammar(slot, lanes_fitted) {
        if e.eval(&env) == Ok(value) && exact(&e, &env) {
            return e;
        }
    }
    lit(value)
}

/// [`fit`] without the small-value cut-off: a lane count of 2 (an ARM D
/// register of 32-bit lanes) is `?n` as 8 is. x86 keeps the cut-off, so
/// its rules are what they were.
pub fn fit_lanes(value: i128, p: &Params) -> IntExpr {
    let env = [("sign".to_string(), p.sign), ("bw".to_string(), p.bw), ("n".to_string(), p.n), ("vsize".to_string(), p.vsize)];
    for e in grammar(Slot::Lanes, true) {
        if e.eval(&env) == Ok(value) && exact(&e, &env) {
            return e;
        }
    }
    lit(value)
}

/// Whether every division in `e` is exact at `env` (so the expression
/// means the same thing read backwards).
fn exact(e: &IntExpr, env: &[(String, i128)]) -> bool {
    match e {
        IntExpr::Op('/', a, b) => matches!((a.eval(env), b.eval(env)), (Ok(x), Ok(y)) if y != 0 && x % y == 0) && exact(a, env) && exact(b, env),
        IntExpr::Op(_, a, b) => exact(a, env) && exact(b, env),
        _ => true,
    }
}

/// The lane count as `?vsize / K` with K a multiple of `?bw`, if one fits.
pub fn lanes_of_vsize(p: &Params) -> Option<IntExpr> {
    let cands = [var("bw"), op('*', lit(2), var("bw")), op('*', lit(4), var("bw")), op('/', var("bw"), lit(2))];
    let env = [("bw".to_string(), p.bw), ("vsize".to_string(), p.vsize)];
    cands.into_iter().map(|k| op('/', var("vsize"), k)).find(|e| e.eval(&env) == Ok(p.n) && exact(e, &env))
}

/// `_mm256_...` -> 256; `_mm_...` -> 128.
pub fn mm_width(name: &str) -> Option<(i128, &str)> {
    for (p, w) in [("_mm512_", 512), ("_mm256_", 256), ("_mm_", 128)] {
        if let Some(rest) = name.strip_prefix(p) {
            return Some((w, rest));
        }
    }
    None
}

/// The parameters of a concrete rule of any target: x86's as [`params`];
/// ARM's and HVX's vector size is the root type's width, or half of it for
/// a register pair (HVX's `W` results).
pub fn params_for(lhs: &Term, rhs: &Term, target: &crate::target::SynthTarget) -> Option<Params> {
    if target.names() == crate::target::NameStyle::X86 {
        return params(lhs, rhs);
    }
    let Term::Op(_, args, _) = lhs else { return None };
    let Some(Term::Type(IntExpr::Lit(s), IntExpr::Lit(e), IntExpr::Lit(n), _)) = args.first() else { return None };
    let w = e * n;
    let widths = target.vector_widths();
    let vsize = if widths.contains(&w) {
        w
    } else if target.isa.pair_bits as i128 == w && widths.contains(&(w / 2)) {
        w / 2
    } else {
        return None;
    };
    Some(Params { sign: *s, bw: *e, n: *n, vsize })
}

/// The parameters of a concrete rule: the type at its left root and the
/// vector size of its first instruction (else of the root type).
pub fn params(lhs: &Term, rhs: &Term) -> Option<Params> {
    let Term::Op(_, args, _) = lhs else { return None };
    let Some(Term::Type(IntExpr::Lit(s), IntExpr::Lit(e), IntExpr::Lit(n), _)) = args.first() else { return None };
    fn first_x86(t: &Term) -> Option<&str> {
        match t {
            Term::Instr(n, args, _) => Some(n.as_str()).filter(|n| mm_width(n).is_some()).or_else(|| args.iter().find_map(first_x86)),
            Term::Op(_, args, _) => args.iter().find_map(first_x86),
            _ => None,
        }
    }
    let vsize = match first_x86(rhs).and_then(mm_width) {
        Some((w, _)) => w,
        None if [128, 256, 512].contains(&(e * n)) => e * n,
        None => return None,
    };
    Some(Params { sign: *s, bw: *e, n: *n, vsize })
}

/// The kind of a Halide op's generic parameter, by its name in the op's
/// signature (`S2` a sign, `E2` a width, `N`/`M`/`BEGIN` lane counts).
pub fn generic_slot(halide: &SpecLibrary, op: &str, index: usize) -> Slot {
    let Some(g) = halide.generic(op) else { return Slot::Value };
    match g.generics.get(index).map(|s| s.as_str()) {
        Some(s) if s.starts_with('S') && s != "STRIDE" => Slot::Sign,
        Some(s) if s.starts_with('E') => Slot::Bits,
        Some(s) if s.starts_with('N') || s == "M" || s == "BEGIN" || s == "F" => Slot::Lanes,
        _ => Slot::Value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_prefer_the_slot_kind() {
        let p = Params { sign: 0, bw: 8, n: 16, vsize: 128 };
        assert_eq!(fit(Slot::Bits, 16, &p, true), op('*', lit(2), var("bw")));
        assert_eq!(fit(Slot::Lanes, 16, &p, true), var("n"));
        assert_eq!(fit(Slot::Lanes, 16, &p, false), lit(16));
        assert_eq!(fit(Slot::Sign, 0, &p, true), var("sign"));
        assert_eq!(fit(Slot::Sign, 1, &p, true), lit(1));
        assert_eq!(fit(Slot::Value, 7, &p, true), op('-', var("bw"), lit(1)));
        assert_eq!(fit(Slot::Value, 1, &p, true), lit(1));
        assert_eq!(fit(Slot::NameDigits, 128, &p, true), var("vsize"));
        assert_eq!(lanes_of_vsize(&Params { sign: 0, bw: 8, n: 16, vsize: 256 }), Some(op('/', var("vsize"), op('*', lit(2), var("bw")))));
    }
}
