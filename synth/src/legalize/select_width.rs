//! Selects whose condition compares values of another width, searched from
//! the semantics.
//!
//! Halide writes `select(a < b, x, y)` with `a, b` of one width and `x, y`
//! of another (`u16` compared, `u32` chosen); a blend picks lanes of its
//! own width, so the mask must change width first. For every compare `C`
//! (at sign S' and width W), every select sign S and width E != W, the
//! right side is searched, smallest first, over
//!
//! - `select(C'(W'(a), W'(b)), x, y)` (W < E): the comparison at E on
//!   operands extended by one cast each;
//! - `select(lt(N(select(C(a, b), -1, 0)), 0), x, y)`: the mask made at W,
//!   cast to a signed E-bit mask (through its signed reading), and tested
//!   for its sign at E;
//!
//! and the first that equals the select on random and edge inputs at 4 and
//! 8 lanes becomes a template over the lane count. No instruction is named:
//! what lowers the same-width compares, masks and casts is the other rules'
//! business, and the caller keeps an instance only where nothing lowers the
//! select as it stands and everything its right side builds is lowered.

use super::sign_letter as letter;
use super::Split;
use super::expand::inputs;
use super::widen::Tm;
use misaal_isa::SpecLibrary;

/// The name prefix of this module's templates: the caller's filter keys on it.
pub const PREFIX: &str = "synth.select-width-";

const COMPARES: [&str; 6] = ["lt", "le", "gt", "ge", "eq", "ne"];

/// The widths of the comparison and of the select: 64 bits too (a random
/// pipeline chose i64 lanes on an i8 comparison).
const WIDTHS: [i128; 4] = [8, 16, 32, 64];

/// The candidates for `select<s, e>(c<sc, w>(a, b), x, y)`, cheapest shape first.
fn candidates(c: &str, sc: i128, w: i128, s: i128, e: i128) -> Vec<Tm> {
    let sel = |cond: Tm| Tm::op("select", s, e, vec![], vec![cond, Tm::X(2), Tm::X(3)]);
    let mut out = Vec::new();
    if w < e {
        // Signed first: extended values fit, and x86 compares signed.
        for so in [1, 0] {
            let ext = |k: usize| Tm::op("cast", sc, w, vec![so, e], vec![Tm::X(k)]);
            out.push(sel(Tm::op(c, so, e, vec![], vec![ext(0), ext(1)])));
        }
    }
    let mask = Tm::op("select", sc, w, vec![], vec![Tm::op(c, sc, w, vec![], vec![Tm::X(0), Tm::X(1)]), Tm::Const(sc, w, -1), Tm::Const(sc, w, 0)]);
    let mut wide = vec![Tm::op("cast", sc, w, vec![1, e], vec![mask.clone()])];
    if sc == 0 {
        wide.push(Tm::op("cast", 1, w, vec![1, e], vec![Tm::op("cast", 0, w, vec![1, w], vec![mask])]));
    }
    out.extend(wide.into_iter().map(|m| sel(Tm::op("lt", 1, e, vec![], vec![m, Tm::Const(1, e, 0)]))));
    out
}

/// Whether `rhs` equals `lhs` on random and edge inputs at 4 and 8 lanes.
fn agrees(halide: &SpecLibrary, w: i128, e: i128, lhs: &Tm, rhs: &Tm) -> bool {
    [4i128, 8].iter().all(|&n| {
        let widths = [(w * n) as u32, (w * n) as u32, (e * n) as u32, (e * n) as u32];
        inputs(4, &widths, 64, 0x7365_6c77 ^ (w * 131 + e * n) as u64).iter().all(|xs| match (lhs.eval(halide, n, xs), rhs.eval(halide, n, xs)) {
            (Some(want), Some(got)) => want == got,
            _ => false,
        })
    })
}

/// Every template the search finds.
pub fn selects(halide: &SpecLibrary, regs: super::Registers) -> Vec<Split> {
    let widest = regs.widest;
    let mut out = Vec::new();
    for c in COMPARES.iter().filter(|c| halide.generic(c).is_some()) {
        for sc in [0i128, 1] {
            for w in WIDTHS {
                for e in WIDTHS.into_iter().filter(|&e| e != w) {
                    for s in [0i128, 1] {
                        let lhs = Tm::op("select", s, e, vec![], vec![Tm::op(c, sc, w, vec![], vec![Tm::X(0), Tm::X(1)]), Tm::X(2), Tm::X(3)]);
                        let Some(rhs) = candidates(c, sc, w, s, e).into_iter().find(|r| agrees(halide, w, e, &lhs, r)) else { continue };
                        let lanes: Vec<i128> = (1..=6).map(|k| 1i128 << k).filter(|n| n * w.max(e) <= widest).collect();
                        out.push(Split {
                            op: "select".into(),
                            name: format!("{PREFIX}{c}-{}{w}-{}{e}", letter(sc), letter(s)),
                            lhs: lhs.text(),
                            rhs: rhs.text(),
                            conds: vec![],
                            free: vec![("n".into(), lanes)],
                            provenance: format!(
                                "phase legalize; a select on a comparison at another width, searched over select(C(W(a), W(b)), x, y) and select(lt(N(select(C(a, b), -1, 0)), 0), x, y) (W an extension, N a cast to a signed mask of the select's width): `select` at {}{e} on `{c}` at {}{w} is `{}` (equal on random and edge inputs at 4 and 8 lanes); kept only where nothing lowers the select as it stands",
                                letter(s),
                                letter(sc),
                                rhs.text()
                            ),
                        });
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compare_and_width_pair_has_a_template() {
        let (halide, _) = crate::legalize::test_libraries();
        let all = selects(&halide, crate::legalize::Registers::x86());
        // 6 compares, 2 compare signs, 12 width pairs, 2 select signs.
        assert_eq!(all.len(), 6 * 2 * 12 * 2, "{:?}", all.iter().map(|s| &s.name).collect::<Vec<_>>());
        let rhs = |name: &str| all.iter().find(|s| s.name == name).map(|s| s.rhs.clone()).unwrap_or_default();
        // Widening: the comparison moves to the select's width.
        assert_eq!(rhs("synth.select-width-lt-u16-u32"), "(select (t 0 32 ?n) (lt (t 1 32 ?n) (cast (t 0 16 ?n) 1 32 ?x0) (cast (t 0 16 ?n) 1 32 ?x1)) ?x2 ?x3)");
        // 64 bits: an i8 comparison choosing i64 lanes, compared at 64 bits.
        assert_eq!(rhs("synth.select-width-eq-i8-i64"), "(select (t 1 64 ?n) (eq (t 1 64 ?n) (cast (t 1 8 ?n) 1 64 ?x0) (cast (t 1 8 ?n) 1 64 ?x1)) ?x2 ?x3)");
        // Narrowing: the mask is made at the comparison's width and narrowed.
        assert_eq!(
            rhs("synth.select-width-eq-i32-i8"),
            "(select (t 1 8 ?n) (lt (t 1 8 ?n) (cast (t 1 32 ?n) 1 8 (select (t 1 32 ?n) (eq (t 1 32 ?n) ?x0 ?x1) (broadcast (t 1 32 ?n) -1) (broadcast (t 1 32 ?n) 0))) (broadcast (t 1 8 ?n) 0)) ?x2 ?x3)"
        );
    }

    #[test]
    fn a_wrong_candidate_is_refused() {
        let (halide, _) = crate::legalize::test_libraries();
        let lhs = Tm::op("select", 0, 32, vec![], vec![Tm::op("lt", 0, 16, vec![], vec![Tm::X(0), Tm::X(1)]), Tm::X(2), Tm::X(3)]);
        // A signed comparison of zero-extended u16 values is right; of
        // sign-extended ones it is not.
        let sext = |k: usize| Tm::op("cast", 1, 16, vec![1, 32], vec![Tm::X(k)]);
        let wrong = Tm::op("select", 0, 32, vec![], vec![Tm::op("lt", 1, 32, vec![], vec![sext(0), sext(1)]), Tm::X(2), Tm::X(3)]);
        assert!(!agrees(&halide, 16, 32, &lhs, &wrong));
    }
}
