//! Wide products as sums of digit products, then cut (issue 31).
//!
//! A 32-bit multiply that one side does at once and the other in pieces
//! (a 32x16 product plus a 16x16 one shifted up, as targets without a
//! 32-bit multiplier do it) is an identity of integer arithmetic that a
//! SAT solver cannot see: it bit-blasts two multipliers of different
//! shapes and compares them, which does not finish at 32 bits. But every
//! product modulo 2^n is the sum of the products of its operands' 16-bit
//! digits, each shifted to its place:
//!
//!   x * y = sum over i, j with 16 (i + j) < n of (x_i * y_j) << 16 (i + j)   (mod 2^n)
//!
//! where `x_i` is bits `16 i + 15 .. 16 i` of `x` read unsigned, and each
//! digit product is exact in 32 bits. Written this way on both sides, the
//! same digit products appear on both (each digit simplified, the two
//! digits of a product in one order, so Z3 hash-conses them), and they are
//! then replaced by fresh 32-bit values bounded by `(2^16 - 1)^2`. What is
//! left is adds, shifts, extensions and saturation of those values, which
//! the bit-blaster handles. Both steps are sound: the expansion is exact,
//! and a claim proved for every value of the cut products holds for the
//! products themselves. It is incomplete (a claim that needs a fact about
//! a digit product beyond its bound is not proved), and then the caller
//! goes on to the query as it was.
//!
//! Two readings of the digits are tried. Modular: every operand is split
//! into unsigned digits and the sum is taken modulo 2^n (a low product in
//! pieces). Exact: an operand that is a sign or zero extension is split
//! as the integer it extends, its top digit signed if the extension is,
//! so a product of extensions is the exact sum of signed and unsigned
//! digit products, each bounded as its kind allows (a high half or a
//! rounding of a product in pieces, where which sign extension fills the
//! upper digits matters).

use misaal_isa::dag::{BvOp, Dag, Node};
use z3::ast::{Ast, BV, Bool};

/// Products narrower than this are left to the bit-blaster.
const MIN_WIDTH: u32 = 32;
const DIGIT: u32 = 16;

/// A digit product and whether each factor is read signed.
pub(crate) struct DigitProduct {
    term: BV,
    signed: (bool, bool),
}

/// `dag` encoded with every product of at least [`MIN_WIDTH`] bits written
/// as a sum of digit products (`exact`: extensions split as the integers
/// they extend); the digit products made are pushed to `prods`.
pub(crate) fn encode(dag: &Dag, operands: &[BV], exact: bool, prods: &mut Vec<DigitProduct>) -> Vec<BV> {
    let mut mine: Vec<BV> = Vec::with_capacity(dag.len());
    crate::smt::encode_with(dag, operands, |id, e| {
        let e = match dag.node(id) {
            Node::Bin(BvOp::Mul, x, y) if e.get_size() >= MIN_WIDTH => {
                let side = |k: u32| match dag.node(k) {
                    Node::Ext { signed, src, .. } if exact => (mine[*src as usize].clone(), *signed),
                    _ => (mine[k as usize].clone(), false),
                };
                expand(side(*x), side(*y), e.get_size(), prods)
            }
            _ => e,
        };
        mine.push(e.clone());
        e
    })
}

/// Whether `dag` has a product [`encode`] would expand.
pub(crate) fn has_wide_product(dag: &Dag) -> bool {
    (0..dag.len()).any(|id| matches!(dag.node(id as _), Node::Bin(BvOp::Mul, ..)) && dag.width(id as _) >= MIN_WIDTH)
}

/// The 16-bit digits of `x` read as an integer (signed: its top digit is
/// signed), low first.
fn digits(x: &BV, signed: bool) -> Vec<(BV, bool)> {
    let n = x.get_size();
    let m = n.div_ceil(DIGIT) * DIGIT;
    let x = if m == n { x.clone() } else if signed { x.sign_ext(m - n) } else { x.zero_ext(m - n) };
    let k = m / DIGIT;
    (0..k).map(|i| (x.extract(DIGIT * i + DIGIT - 1, DIGIT * i).simplify(), signed && i + 1 == k)).collect()
}

/// `x * y` in `n` bits (each operand the integer it is read as, extended
/// to `n` bits as its sign says) as the sum of its digit products.
fn expand(x: (BV, bool), y: (BV, bool), n: u32, prods: &mut Vec<DigitProduct>) -> BV {
    let m = n.div_ceil(DIGIT) * DIGIT;
    let (dx, dy) = (digits(&x.0, x.1), digits(&y.0, y.1));
    let zero = |d: &BV| d.as_u64() == Some(0);
    let ext = |d: &BV, s: bool, w: u32| if s { d.sign_ext(w) } else { d.zero_ext(w) };
    let mut sum: Option<BV> = None;
    for (i, (a, sa)) in dx.iter().enumerate() {
        for (j, (b, sb)) in dy.iter().enumerate() {
            let shift = DIGIT * (i + j) as u32;
            if shift >= n || zero(a) || zero(b) {
                continue;
            }
            // One order for the two digits, so that x_i * y_j and y_j * x_i
            // are one term.
            let ((p, sp), (q, sq)) = if (a.to_string(), sa) <= (b.to_string(), sb) { ((a, *sa), (b, *sb)) } else { ((b, *sb), (a, *sa)) };
            // Exact in 32 bits: u16 x u16 < 2^32, and with a signed factor
            // the product is within i32.
            let prod = ext(p, sp, DIGIT).bvmul(ext(q, sq, DIGIT));
            prods.push(DigitProduct { term: prod.clone(), signed: (sp, sq) });
            let wide = if m > 2 * DIGIT { ext(&prod, sp || sq, m - 2 * DIGIT) } else { prod };
            let placed = if shift == 0 { wide } else { wide.bvshl(BV::from_u64(shift as u64, m)) };
            sum = Some(match sum {
                Some(s) => s.bvadd(&placed),
                None => placed,
            });
        }
    }
    let sum = sum.unwrap_or_else(|| BV::from_u64(0, m));
    if m > n { sum.extract(n - 1, 0) } else { sum }
}

/// `claim` with the digit products replaced by fresh values, and their
/// bounds; `None` when there is no product.
pub(crate) fn cut(claim: &Bool, prods: &[DigitProduct]) -> Option<(Bool, Vec<Bool>)> {
    let mut seen = std::collections::HashSet::new();
    let distinct: Vec<&DigitProduct> = prods.iter().filter(|p| seen.insert(p.term.clone())).collect();
    if distinct.is_empty() {
        return None;
    }
    let fresh: Vec<BV> = (0..distinct.len()).map(|k| BV::new_const(format!("digit_product!{k}"), 2 * DIGIT)).collect();
    let pairs: Vec<(&BV, &BV)> = distinct.iter().map(|p| &p.term).zip(&fresh).collect();
    let num = |v: i64| BV::from_u64(v as u64 & 0xffff_ffff, 2 * DIGIT);
    let (u, s) = ((1i64 << DIGIT) - 1, 1i64 << (DIGIT - 1));
    let facts = distinct
        .iter()
        .zip(&fresh)
        .flat_map(|(p, v)| match p.signed {
            (false, false) => vec![v.bvule(num(u * u))],
            (true, true) => vec![v.bvsge(num(-(s - 1) * s)), v.bvsle(num(s * s))],
            _ => vec![v.bvsge(num(-s * u)), v.bvsle(num((s - 1) * u))],
        })
        .collect();
    Some((claim.substitute(&pairs), facts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::SatResult;

    fn proved(claim: &Bool, prods: &[DigitProduct]) -> bool {
        let (c, facts) = cut(claim, prods).expect("products");
        let s = z3::Solver::new();
        facts.iter().for_each(|f| s.assert(f));
        s.assert(c.not());
        s.check() == SatResult::Unsat
    }

    #[test]
    fn a_32_bit_product_in_two_pieces_is_proved() {
        let (a, b) = (BV::new_const("a", 32), BV::new_const("b", 32));
        let mut prods = Vec::new();
        let whole = expand((a.clone(), false), (b.clone(), false), 32, &mut prods);
        // (sext(a_lo) * sext(b_hi)) << 16 + a * zext(b_lo), read modulo 2^32.
        let lo = |x: &BV| x.extract(15, 0);
        let hi = |x: &BV| x.extract(31, 16);
        let p1 = expand((lo(&a).sign_ext(16), false), (hi(&b).sign_ext(16), false), 32, &mut prods).bvshl(BV::from_u64(16, 32));
        let p2 = expand((a.clone(), false), (lo(&b).zero_ext(16), false), 32, &mut prods);
        assert!(proved(&whole.eq(p1.bvadd(&p2)), &prods));
        // A wrong piece (b's high half where the low one is meant) is not.
        let p3 = expand((a.clone(), false), (hi(&b).zero_ext(16), false), 32, &mut prods);
        assert!(!proved(&whole.eq(p1.bvadd(&p3)), &prods));
    }

    #[test]
    fn a_high_half_in_two_pieces_is_proved_exactly() {
        let (a, b) = (BV::new_const("a", 32), BV::new_const("b", 32));
        let mut prods = Vec::new();
        // (sext64(a) * sext64(b)) >> 16 against ((a * zext(b_lo)) >> 16) + a * sext(b_hi), all in 64 bits.
        let whole = expand((a.clone(), true), (b.clone(), true), 64, &mut prods).bvashr(BV::from_u64(16, 64));
        let lo = expand((a.clone(), true), (b.extract(15, 0), false), 64, &mut prods).bvashr(BV::from_u64(16, 64));
        let hi = expand((a.clone(), true), (b.extract(31, 16), true), 64, &mut prods);
        assert!(proved(&whole.eq(lo.bvadd(&hi)), &prods));
    }
}
