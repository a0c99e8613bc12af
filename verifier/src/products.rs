//! Products as cut points inside one solver query.
//!
//! A requantizing multiply (`rounding_mul_shift_right` of i32, Halide's
//! double-width form, `vpmuldq` plus a 64-bit shift) puts the same 32x32->64
//! product on both sides of a query and then rounds, shifts and saturates it
//! differently. Z3 hash-conses the two products into one term but still
//! bit-blasts the multiplier, and a SAT solver does not see that the
//! multiplier is irrelevant: such queries time out although the rounding
//! logic around them is small.
//!
//! So before the real query, each product is replaced by a fresh constant,
//! bounded by the interval the product of its operands' ranges allows
//! (operands that are sign or zero extensions, or numerals). A proof of the
//! abstracted claim holds for every value in those intervals, so in
//! particular for the products themselves: it is sound. It is incomplete (a
//! fact about a product beyond its interval is forgotten), so a claim that
//! is not proved this way goes to the real query unchanged.

use misaal_isa::dag::{BvOp, Dag, Node, NodeId};
use z3::ast::{Ast, BV, Bool};
use std::collections::HashSet;

/// Products narrower than this are left to the bit-blaster (small
/// multipliers cost it little, and a cut forgets more than it saves).
const MIN_WIDTH: u32 = 16;

/// One product of a query: its term, and the values each operand can take
/// as integers where the semantics says (an extension or a numeral).
pub(crate) struct Product {
    term: BV,
    ranges: [Option<(i128, i128)>; 2],
}

/// The products of at least [`MIN_WIDTH`] bits in `dag`, whose nodes were
/// encoded as `terms`.
pub(crate) fn products(dag: &Dag, terms: &[BV]) -> Vec<Product> {
    let range = |n: NodeId| -> Option<(i128, i128)> {
        match dag.node(n) {
            Node::Ext { signed, src, .. } => {
                let w = dag.width(*src);
                (w <= 64).then(|| if *signed { (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1) } else { (0, (1i128 << w) - 1) })
            }
            // Read unsigned: `bvmul` wraps modulo 2^width either way.
            Node::Const(c) if c.width() <= 64 => Some((c.limbs()[0] as i128, c.limbs()[0] as i128)),
            _ => None,
        }
    };
    dag.nodes()
        .iter()
        .enumerate()
        .filter_map(|(id, node)| match node {
            Node::Bin(BvOp::Mul, x, y) if terms[id].get_size() >= MIN_WIDTH => Some(Product { term: terms[id].clone(), ranges: [range(*x), range(*y)] }),
            _ => None,
        })
        .collect()
}

/// `claim` with every product in `products` replaced by a fresh constant,
/// and the facts bounding those constants; `None` when there is none.
pub(crate) fn abstract_products(claim: &Bool, products: &[Product]) -> Option<(Bool, Vec<Bool>)> {
    let mut seen: HashSet<&BV> = HashSet::new();
    let distinct: Vec<&Product> = products.iter().filter(|p| seen.insert(&p.term)).collect();
    if distinct.is_empty() {
        return None;
    }
    let fresh: Vec<BV> = distinct.iter().enumerate().map(|(k, p)| BV::new_const(format!("product!{k}"), p.term.get_size())).collect();
    let pairs: Vec<(&BV, &BV)> = distinct.iter().map(|p| &p.term).zip(&fresh).collect();
    let abstracted = claim.substitute(&pairs);
    let facts = distinct.iter().zip(&fresh).filter_map(|(p, v)| bounds(p, v)).flatten().collect();
    Some((abstracted, facts))
}

/// Facts bounding `v`, standing for the product `p` of two operands whose
/// ranges are known, when the exact product always fits `p`'s width (as a
/// signed or an unsigned number); `None` otherwise.
fn bounds(p: &Product, v: &BV) -> Option<Vec<Bool>> {
    let w = p.term.get_size();
    let [Some((xl, xh)), Some((yl, yh))] = p.ranges else { return None };
    if w > 64 {
        return None;
    }
    let corners = [xl.checked_mul(yl)?, xl.checked_mul(yh)?, xh.checked_mul(yl)?, xh.checked_mul(yh)?];
    let (lo, hi) = (*corners.iter().min()?, *corners.iter().max()?);
    let num = |x: i128| BV::from_u64((x as u64) & (u64::MAX >> (64 - w)), w);
    if lo >= 0 && hi < (1i128 << w) {
        Some(vec![v.bvuge(num(lo)), v.bvule(num(hi))])
    } else if lo >= -(1i128 << (w - 1)) && hi < (1i128 << (w - 1)) {
        Some(vec![v.bvsge(num(lo)), v.bvsle(num(hi))])
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::SatResult;

    const I32: (i128, i128) = (-(1 << 31), (1 << 31) - 1);

    /// Whether `claim` is proved with its products cut; `None` if it has none.
    fn proved(claim: &Bool, products: &[Product]) -> Option<bool> {
        let (abstracted, facts) = abstract_products(claim, products)?;
        let s = z3::Solver::new();
        facts.iter().for_each(|f| s.assert(f));
        s.assert(abstracted.not());
        Some(s.check() == SatResult::Unsat)
    }

    /// The rounding of a product, written two ways: by the bit below the
    /// shift, and by adding half before it.
    fn rounding(p: &BV) -> Bool {
        let k = |v: u64| BV::from_u64(v, 64);
        let by_bit = p.bvashr(k(31)).bvadd(p.bvashr(k(30)).bvand(k(1)));
        let by_add = p.bvadd(k(1 << 30)).bvashr(k(31));
        by_bit.eq(by_add)
    }

    #[test]
    fn a_bounded_product_proves_what_the_free_value_cannot() {
        let (x, y) = (BV::new_const("x", 32), BV::new_const("y", 32));
        let p = x.sign_ext(32).bvmul(y.sign_ext(32));
        // A 32x32->64 product never comes near 2^63, where the sum wraps:
        // with that bound the two roundings are equal.
        assert_eq!(proved(&rounding(&p), &[Product { term: p.clone(), ranges: [Some(I32), Some(I32)] }]), Some(true));
        // Without it (operands not known) the cut value may wrap: not proved,
        // so the bounds are what made the proof, and the caller goes on to
        // the real query.
        assert_eq!(proved(&rounding(&p), &[Product { term: p.clone(), ranges: [Some(I32), None] }]), Some(false));
        // A 64x64 product can wrap: no bounds however its operands read.
        let q = BV::new_const("a", 64).bvmul(BV::new_const("b", 64));
        let wide = (-(1i128 << 63), (1i128 << 63) - 1);
        assert_eq!(proved(&rounding(&q), &[Product { term: q.clone(), ranges: [Some(wide), Some(wide)] }]), Some(false));
        assert_eq!(proved(&rounding(&q), &[]), None);
    }

    #[test]
    fn unsigned_and_mixed_operands_are_bounded_exactly() {
        let x = BV::new_const("x", 8);
        // u8 * 200 <= 51000 < 2^16; one less and the claim is false.
        let p = x.zero_ext(8).bvmul(BV::from_u64(200, 16));
        let u = [Product { term: p.clone(), ranges: [Some((0, 255)), Some((200, 200))] }];
        assert_eq!(proved(&p.bvule(BV::from_u64(51_000, 16)), &u), Some(true));
        assert_eq!(proved(&p.bvule(BV::from_u64(50_999, 16)), &u), Some(false));
        // i8 * u8 lies in [-128*255, 127*255]: signed bounds, exact.
        let c = BV::new_const("c", 8);
        let q = x.sign_ext(8).bvmul(c.zero_ext(8));
        let m = [Product { term: q.clone(), ranges: [Some((-128, 127)), Some((0, 255))] }];
        assert_eq!(proved(&q.bvsge(BV::from_i64(-32_640, 16)), &m), Some(true));
        assert_eq!(proved(&q.bvsge(BV::from_i64(-32_639, 16)), &m), Some(false));
        assert_eq!(proved(&q.bvsle(BV::from_i64(32_385, 16)), &m), Some(true));
    }

    #[test]
    fn products_are_read_off_the_semantics_with_their_ranges() {
        let mut dag = Dag::new(vec![32]);
        let a = dag.operand(0);
        let sa = dag.ext(true, a, 64);
        let c = dag.constant(misaal_isa::BitVec::from_u64(64, 7));
        let m = dag.bin(BvOp::Mul, sa, c);
        let terms = crate::smt::encode(&dag, &[BV::new_const("op0", 32)]);
        let ps = products(&dag, &terms);
        assert_eq!(ps.len(), 1);
        assert_eq!(ps[0].term, terms[m as usize]);
        assert_eq!(ps[0].ranges, [Some(I32), Some((7, 7))]);
    }
}
