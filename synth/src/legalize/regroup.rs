//! Full reductions of widening ops regrouped through the pairwise
//! reduction an instruction performs, searched from the semantics. A
//! kernel's sum of squares (l2norm: a `vector_reduce_add` of 64
//! `widening_mul` lanes to one) met only the reduce-halves template, which
//! widens every product (vpmovsxwd + vpmulld per 8 lanes); vpmaddwd forms
//! the products and adds them in pairs, half the work.
//!
//! The search: for each `vector_reduce_*` op `r`, each widening two-operand
//! Halide op `w` (2E-bit result lanes from E-bit operands) and each sign,
//! the pairwise reduction `r(2, w(a, b))` on 128-bit operands is compared
//! with every verified two-operand x86 instruction on random and edge
//! inputs. Where one is equal (the pairwise step has a one-instruction
//! lowering), and where regrouping holds for `r` on random inputs
//! (`r` over 2f lanes is `r` over f lanes of `r` over pairs: true for the
//! wrapping sum, max and min; not for the saturating sum), the template
//! `r(1, 2f, w(a, b)) -> r(1, f, r(f, 2, w(a, b)))` is written. Like every
//! legalization template, each instance is proved by the caller, which
//! keeps exactly the proved ones.

use super::Split;
use misaal_isa::{BitVec, SpecLibrary, ast::Ty};

fn random(width: u32, seed: u64) -> BitVec {
    // Every fourth word all ones or all zeros in places: the edges
    // (MIN * MIN, -1 * -1, 0) where pair sums wrap or saturate.
    super::xorshift_bits(width, seed, |k, x| match k % 4 {
        3 => x | 0x8000_8000_8000_8000,
        1 => x & 0x8000_ffff_0000_8000,
        _ => x,
    })
}

/// A widening op's instantiation arguments for operands of sign `s`,
/// `e` bits, `n` lanes (a second operand sign, where the op has one, the
/// same), and the sign of its result.
fn widening_args(halide: &SpecLibrary, w: &str, s: i128, e: i128, n: i128) -> Option<(Vec<i128>, i128)> {
    let g = halide.generic(w)?;
    let args = match g.generics.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["S", "E", "N"] => vec![s, e, n],
        ["S", "E", "N", "S2"] => vec![s, e, n, s],
        _ => return None,
    };
    let (i, _) = halide.instantiate(w, &args).ok()?;
    let two_vectors = i.params.len() == 2 && i.params.iter().all(|p| p.ty == Ty::Bv((n * e) as u32));
    // The result's sign: widening_sub is signed for unsigned operands too.
    let rs = if w == "widening_sub" { 1 } else { s };
    (two_vectors && i.ret == Ty::Bv((2 * n * e) as u32)).then_some((args, rs))
}

/// Whether `r` regroups: `r` over 2f lanes equals `r` over f lanes of `r`
/// over pairs, on random inputs at a few widths.
fn regroups(halide: &SpecLibrary, r: &str, s: i128, e: i128) -> bool {
    [4i128, 8, 16].iter().all(|&f| {
        let (Ok((_, whole)), Ok((_, pairs)), Ok((_, rest))) =
            (halide.instantiate(r, &[s, e, 1, 2 * f]), halide.instantiate(r, &[s, e, f, 2]), halide.instantiate(r, &[s, e, 1, f]))
        else {
            return false;
        };
        (0..24u64).all(|c| {
            let x = random((2 * f * e) as u32, 0x7265_6772 + 97 * c + f as u64);
            let got = pairs.eval(&[&x]).ok().and_then(|p| rest.eval(&[&p]).ok());
            got.is_some() && got == whole.eval(&[&x]).ok()
        })
    })
}

/// Every regrouping template the search finds.
pub fn regroupings(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let mut two: Vec<(&str, &misaal_isa::Semantics)> = x86
        .iter()
        .filter(|(i, _)| i.params.len() == 2 && i.params.iter().all(|p| p.ty == Ty::Bv(128)) && i.ret == Ty::Bv(128))
        .map(|(i, s)| (i.name.as_str(), s.as_ref()))
        .collect();
    two.sort_by_key(|(n, _)| *n);
    let mut names = halide.generic_names();
    names.sort();
    let mut out = Vec::new();
    for r in names.iter().filter(|r| r.starts_with("vector_reduce_")) {
        for w in names.iter().filter(|w| w.starts_with("widening_")) {
            for s in [0i128, 1] {
                for e in [8i128, 16, 32] {
                    let n = 128 / e;
                    let Some((args, rs)) = widening_args(halide, w, s, e, n) else { continue };
                    let (Ok((_, wsem)), Ok((_, pair))) = (halide.instantiate(w, &args), halide.instantiate(r, &[rs, 2 * e, n / 2, 2])) else { continue };
                    let cases: Vec<[BitVec; 2]> = (0..48u64).map(|c| [random(128, 0x7061_6972 + 2 * c + e as u64), random(128, 0x7061_6972 + 2 * c + 1 + 7 * e as u64)]).collect();
                    let Some(want) = cases.iter().map(|[a, b]| wsem.eval(&[a, b]).ok().and_then(|p| pair.eval(&[&p]).ok())).collect::<Option<Vec<_>>>() else { continue };
                    // Inputs on which the pairwise step is (nearly) constant, as
                    // shifts by random amounts are, tell no instruction apart.
                    if want.iter().collect::<std::collections::HashSet<_>>().len() < want.len() / 2 {
                        continue;
                    }
                    let Some((instr, _)) = two.iter().find(|(_, sem)| cases.iter().zip(&want).all(|([a, b], w)| sem.eval(&[a, b]).ok().as_ref() == Some(w))) else { continue };
                    if !regroups(halide, r, rs, 2 * e) {
                        continue;
                    }
                    let letter = super::sign_letter;
                    let extra = if args.len() == 4 { format!(" {s}") } else { String::new() };
                    let inner = format!("({w} ({} {e} (* 2 ?f)){extra} ?a ?b)", letter(s));
                    let ty = |lanes: &str| format!("({} {} {lanes})", letter(rs), 2 * e);
                    out.push(Split {
                        op: r.to_string(),
                        name: format!("synth.regroup-{r}-{w}.{}{e}", letter(s)),
                        lhs: format!("({r} {} (* 2 ?f) {inner})", ty("1")),
                        rhs: format!("({r} {} ?f ({r} {} 2 {inner}))", ty("1"), ty("?f")),
                        conds: vec![],
                        free: vec![("f".into(), vec![8, 16, 32, 64])],
                        provenance: format!(
                            "phase legalize; regrouped through a pairwise step, searched: `{r}` over pairs of `{w}` at {}{e} equals {instr} on 48 random and edge inputs, and `{r}` regroups on random inputs",
                            letter(s)
                        ),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    fn libs() -> (misaal_isa::SpecLibrary, misaal_isa::SpecLibrary) {
        super::super::test_libraries()
    }

    #[test]
    fn finds_the_sum_of_products_through_vpmaddwd() {
        let (halide, x86) = libs();
        let v = super::regroupings(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}  [{}]", s.name, s.lhs, s.rhs, s.provenance);
        }
        let madd = v.iter().find(|s| s.name == "synth.regroup-vector_reduce_add-widening_mul.i16").expect("the i16 sum of products");
        assert!(madd.provenance.contains("_mm_madd_epi16"), "{}", madd.provenance);
        assert_eq!(madd.lhs, "(vector_reduce_add (i 32 1) (* 2 ?f) (widening_mul (i 16 (* 2 ?f)) 1 ?a ?b))");
        // The saturating sum does not regroup, whatever instruction matches.
        assert!(!v.iter().any(|s| s.op == "vector_reduce_saturating_add"));
    }

    #[test]
    fn the_saturating_sum_does_not_regroup_and_the_sum_does() {
        let (halide, _) = libs();
        assert!(super::regroups(&halide, "vector_reduce_add", 1, 32));
        assert!(super::regroups(&halide, "vector_reduce_max", 0, 16));
        assert!(!super::regroups(&halide, "vector_reduce_saturating_add", 1, 16));
    }
}
