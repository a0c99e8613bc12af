//! Register-half data movement, searched per immediate: the Halide slices
//! that take the low or high half of a 256- or 512-bit value and the concat
//! that joins two halves. The swizzle discovery classifies the
//! lane patterns an instruction performs for every input, not per
//! immediate, so `vextracti128 $1` (an immediate picks the half) is not
//! among its swizzles; without these, a 256-bit value computed by an
//! instruction cannot be split, and a split op's halves cannot be joined.
//!
//! The search: for each of the three Halide terms (at the probe element
//! width 8), every verified x86 instruction whose vector operands and
//! result have the term's widths, at every value of its immediates, then
//! (if none) every such instruction fed by a one-operand instruction on
//! one operand; evaluated on random inputs against the Halide term. The
//! first that agrees becomes a template over `?bw` (`?n` lanes of 128
//! bits); the caller proves each instance and keeps the proved ones.

use super::Split;
use misaal_isa::{BitVec, Semantics, SpecLibrary, ast::Ty};
use std::sync::Arc;

/// A verified instruction's vector operand widths (in order), immediate
/// widths (in order, after their position) and result width.
struct Shape {
    name: String,
    /// [`super::feature_rank`] of its features: the searches try lower first.
    rank: u8,
    /// Per parameter: `Some(width)` for a vector, `None` for an immediate (with its width).
    params: Vec<(Option<u32>, u32)>,
    ret: u32,
    sem: Arc<Semantics>,
}

fn shapes(x86: &SpecLibrary) -> Vec<Shape> {
    let mut out = Vec::new();
    for (i, sem) in x86.iter() {
        let mut params = Vec::new();
        let mut ok = true;
        for p in &i.params {
            match p.ty {
                Ty::Bv(w) => params.push((Some(w), w)),
                Ty::Imm(w) if w <= 8 => params.push((None, w)),
                _ => ok = false,
            }
        }
        if ok && matches!(i.ret, Ty::Bv(_)) {
            out.push(Shape { name: i.name.clone(), rank: super::feature_rank(&i.features), params, ret: i.ret.width(), sem: sem.clone() });
        }
    }
    // The instruction fewest CPUs lack first, then by name.
    out.sort_by(|a, b| (a.rank, &a.name).cmp(&(b.rank, &b.name)));
    out
}

/// A candidate right side: an instruction over vector arguments (a
/// variable or a one-operand instruction of one) and immediates.
#[derive(Clone, Debug)]
enum Arg {
    Var(usize),
    Inner(usize, Vec<i128>, usize),
    Imm(i128),
}

fn imm_choices(params: &[(Option<u32>, u32)]) -> Vec<Vec<i128>> {
    let mut out = vec![Vec::new()];
    for (v, w) in params {
        if v.is_none() {
            let vals: Vec<i128> = (0..(1i128 << w)).collect();
            out = out.into_iter().flat_map(|p| vals.iter().map(move |&x| [p.clone(), vec![x]].concat())).collect();
        }
    }
    out
}

fn fill(params: &[(Option<u32>, u32)], vecs: &[Arg], imms: &[i128]) -> Vec<Arg> {
    let (mut vi, mut ii) = (0, 0);
    params
        .iter()
        .map(|(v, _)| match v {
            Some(_) => {
                vi += 1;
                vecs[vi - 1].clone()
            }
            None => {
                ii += 1;
                Arg::Imm(imms[ii - 1])
            }
        })
        .collect()
}

fn eval(shapes: &[Shape], k: usize, args: &[Arg], xs: &[BitVec]) -> Option<BitVec> {
    let s = &shapes[k];
    let vals: Vec<BitVec> = args
        .iter()
        .zip(&s.params)
        .map(|(a, (_, w))| match a {
            Arg::Var(v) => Some(xs[*v].clone()),
            Arg::Imm(x) => Some(BitVec::from_i128(*w, *x)),
            Arg::Inner(g, imms, v) => {
                let inner = fill(&shapes[*g].params, &[Arg::Var(*v)], imms);
                eval(shapes, *g, &inner, xs)
            }
        })
        .collect::<Option<_>>()?;
    s.sem.eval(&vals.iter().collect::<Vec<_>>()).ok()
}

fn render(shapes: &[Shape], k: usize, args: &[Arg]) -> String {
    let parts: Vec<String> = args
        .iter()
        .map(|a| match a {
            Arg::Var(v) => ["?a", "?b"][*v].to_string(),
            Arg::Imm(x) => x.to_string(),
            Arg::Inner(g, imms, v) => render(shapes, *g, &fill(&shapes[*g].params, &[Arg::Var(*v)], imms)),
        })
        .collect();
    format!("(x86 {} {})", shapes[k].name, parts.join(" "))
}

/// The first right side equal to `want` on the inputs, if any.
fn search(shapes: &[Shape], vars: &[u32], ret: u32, cases: &[Vec<BitVec>], want: &[BitVec]) -> Option<String> {
    let agrees = |k: usize, args: &[Arg]| cases.iter().zip(want).all(|(xs, w)| eval(shapes, k, args, xs).as_ref() == Some(w));
    let vector_widths = |s: &Shape| s.params.iter().filter_map(|(v, _)| *v).collect::<Vec<_>>();
    // Depth 1: the variables in order.
    for (k, s) in shapes.iter().enumerate() {
        if s.ret != ret || vector_widths(s) != vars {
            continue;
        }
        let vecs: Vec<Arg> = (0..vars.len()).map(Arg::Var).collect();
        for imms in imm_choices(&s.params) {
            let args = fill(&s.params, &vecs, &imms);
            if agrees(k, &args) {
                return Some(render(shapes, k, &args));
            }
        }
    }
    // Depth 2: one operand through a one-vector instruction first.
    for (k, s) in shapes.iter().enumerate() {
        let vw = vector_widths(s);
        if s.ret != ret || vw.len() != vars.len() {
            continue;
        }
        for slot in 0..vars.len() {
            if vw.iter().enumerate().any(|(j, &w)| j != slot && w != vars[j]) {
                continue;
            }
            for (g, gs) in shapes.iter().enumerate() {
                if gs.ret != vw[slot] || vector_widths(gs) != [vars[slot]] || imm_choices(&gs.params).len() > 4 {
                    continue;
                }
                for gi in imm_choices(&gs.params) {
                    let vecs: Vec<Arg> = (0..vars.len()).map(|j| if j == slot { Arg::Inner(g, gi.clone(), j) } else { Arg::Var(j) }).collect();
                    for imms in imm_choices(&s.params) {
                        let args = fill(&s.params, &vecs, &imms);
                        if agrees(k, &args) {
                            return Some(render(shapes, k, &args));
                        }
                    }
                }
            }
        }
    }
    None
}

fn random(width: u32, seed: u64) -> BitVec {
    let mut x = seed | 1;
    let limbs: Vec<u64> = (0..width.div_ceil(64))
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    BitVec::from_limbs(width, &limbs)
}

/// The searched templates: low half, high half, join, for the halves of a
/// 256-bit register (128 bits each) and of a 512-bit one (256 bits each:
/// without these, a value held in a zmm register could not be split to
/// meet a 256-bit instruction, nor two ymm results joined).
pub fn halves(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let shapes = shapes(x86);
    let mut out = Vec::new();
    for half in [128u32, 256] {
        let whole = 2 * half;
        // Probed at 8-bit lanes: `?n` lanes of the half, `2 ?n` of the whole.
        let n = (half / 8) as i128;
        let targets: [(String, &str, &str, Vec<i128>, Vec<u32>, u32); 3] = [
            (format!("slice-lo{half}"), "slice", "(slice (t ?sign ?bw ?n) (* 2 ?n) 0 1 ?a)", vec![0, 8, n, 2 * n, 0, 1], vec![whole], half),
            (format!("slice-hi{half}"), "slice", "(slice (t ?sign ?bw ?n) (* 2 ?n) ?n 1 ?a)", vec![0, 8, n, 2 * n, n, 1], vec![whole], half),
            (format!("concat-{half}"), "concat", "(concat (t ?sign ?bw ?n) ?n ?a ?b)", vec![0, 8, n, n], vec![half, half], whole),
        ];
        for (name, op, lhs, generics, vars, ret) in targets {
            let Ok((_, sem)) = halide.instantiate(op, &generics) else { continue };
            let cases: Vec<Vec<BitVec>> = (0..8u64).map(|c| vars.iter().enumerate().map(|(j, &w)| random(w, 0x6861_6c76 + 97 * c + j as u64)).collect()).collect();
            let Some(want) = cases.iter().map(|xs| sem.eval(&xs.iter().collect::<Vec<_>>()).ok()).collect::<Option<Vec<_>>>() else { continue };
            let Some(rhs) = search(&shapes, &vars, ret, &cases, &want) else { continue };
            let lanes: Vec<i128> = [8i128, 16, 32, 64].iter().map(|bw| half as i128 / bw).collect();
            out.push(Split {
                op: op.into(),
                name: format!("synth.{name}"),
                lhs: lhs.into(),
                rhs: rhs.clone(),
                conds: vec![format!("(= (* ?n ?bw) {half})")],
                free: vec![("sign".into(), vec![0, 1]), ("bw".into(), vec![8, 16, 32, 64]), ("n".into(), lanes)],
                provenance: format!(
                    "phase legalize; register halves searched per immediate: the first verified instruction term (depth 1, then one operand through a one-operand instruction) equal to `{op}` on 8 random inputs at 8-bit lanes is {rhs}"
                ),
            });
        }
    }
    out
}

/// Selects on a comparison of narrower lanes (gelu's `select(t < 0, ..)`
/// picks i32 lanes by an i16 test): no single Halide op lowers, and the
/// x86 side needs a 128-bit compare widened to a 256-bit mask feeding a
/// blend, three instructions over operands of two widths that the
/// enumeration's 128-bit units cannot hold. Searched: for `lt` and `gt` at
/// each sign, element widths E2 (compare) and E (select) with E = 2 E2 and
/// a 256-bit select, every verified blend `B(p, q, mask)` (three 256-bit
/// vectors) with p, q the select's two values in either order and the
/// mask `W(C(u, v))`: `C` a verified two-operand 128-bit instruction over
/// the compared operands in either order and `W` a one-operand 128- to
/// 256-bit instruction; the first equal on random inputs becomes a
/// template over the select's sign, each instance proved.
pub fn selects(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let shapes = shapes(x86);
    let no_imm = |s: &Shape| s.params.iter().all(|(v, _)| v.is_some());
    let widths = |s: &Shape| s.params.iter().filter_map(|(v, _)| *v).collect::<Vec<_>>();
    let blends: Vec<usize> = (0..shapes.len()).filter(|&k| no_imm(&shapes[k]) && shapes[k].ret == 256 && widths(&shapes[k]) == [256, 256, 256]).collect();
    let cmps: Vec<usize> = (0..shapes.len()).filter(|&k| no_imm(&shapes[k]) && shapes[k].ret == 128 && widths(&shapes[k]) == [128, 128]).collect();
    let wides: Vec<usize> = (0..shapes.len()).filter(|&k| no_imm(&shapes[k]) && shapes[k].ret == 256 && widths(&shapes[k]) == [128]).collect();
    let mut out = Vec::new();
    for cmp in ["lt", "gt"] {
        for cs in [1i128, 0] {
            for e2 in [8i128, 16] {
                let (e, n) = (2 * e2, 256 / (2 * e2));
                let (Ok((_, c)), Ok((_, sel))) = (halide.instantiate(cmp, &[cs, e2, n]), halide.instantiate("select", &[1, e, n])) else { continue };
                let cases: Vec<Vec<BitVec>> = (0..12u64).map(|k| [128u32, 128, 256, 256].iter().enumerate().map(|(j, &w)| random(w, 0x73656c + 31 * k + j as u64)).collect()).collect();
                let Some(want) = cases.iter().map(|x| c.eval(&[&x[0], &x[1]]).ok().and_then(|m| sel.eval(&[&m, &x[2], &x[3]]).ok())).collect::<Option<Vec<_>>>() else { continue };
                let mut found = None;
                'search: for &b in &blends {
                    for &ck in &cmps {
                        for &wk in &wides {
                            for (u, v) in [(0usize, 1usize), (1, 0)] {
                                for (p, q) in [(2usize, 3usize), (3, 2)] {
                                    let ok = cases.iter().zip(&want).all(|(x, w)| {
                                        let Ok(m) = shapes[ck].sem.eval(&[&x[u], &x[v]]) else { return false };
                                        let Ok(m) = shapes[wk].sem.eval(&[&m]) else { return false };
                                        shapes[b].sem.eval(&[&x[p], &x[q], &m]).ok().as_ref() == Some(w)
                                    });
                                    if ok {
                                        found = Some((b, ck, wk, u, v, p, q));
                                        break 'search;
                                    }
                                }
                            }
                        }
                    }
                }
                let Some((b, ck, wk, u, v, p, q)) = found else { continue };
                let names = ["?a", "?b", "?x", "?y"];
                let rhs = format!(
                    "(x86 {} {} {} (x86 {} (x86 {} {} {})))",
                    shapes[b].name, names[p], names[q], shapes[wk].name, shapes[ck].name, names[u], names[v]
                );
                out.push(Split {
                    op: "select".into(),
                    name: format!("synth.select-{cmp}-{}{e2}-{e}", super::sign_letter(cs)),
                    lhs: format!("(select (t ?sign {e} {n}) ({cmp} (t {cs} {e2} {n}) ?a ?b) ?x ?y)"),
                    rhs: rhs.clone(),
                    conds: vec![],
                    free: vec![("sign".into(), vec![0, 1])],
                    provenance: format!(
                        "phase legalize; select on a narrower comparison searched over blend(p, q, widen(compare(u, v))) of verified instructions: the first equal on 12 random inputs is {rhs}"
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
    fn finds_the_register_halves() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = misaal_isa::SpecLibrary::load_dir(&root.join("frontends/halide")).expect("halide library");
        let x86 = misaal_isa::SpecLibrary::load_dir(&root.join("isa/specs/x86")).expect("x86 library");
        let found: Vec<String> = super::halves(&halide, &x86).iter().map(|s| format!("{} => {}", s.lhs, s.rhs)).collect();
        for f in &found {
            eprintln!("{f}");
        }
        for s in super::selects(&halide, &x86) {
            eprintln!("{} => {}", s.lhs, s.rhs);
        }
        assert!(found.iter().any(|f| f == "(slice (t ?sign ?bw ?n) (* 2 ?n) ?n 1 ?a) => (x86 _mm256_extracti128_si256 ?a 1)"), "{found:#?}");
        // A zmm's halves, in AVX-512F's forms (not DQ's `vextracti32x8`).
        assert!(found.iter().any(|f| f == "(slice (t ?sign ?bw ?n) (* 2 ?n) ?n 1 ?a) => (x86 _mm512_extracti64x4_epi64 ?a 1)"), "{found:#?}");
        assert!(found.iter().any(|f| f == "(concat (t ?sign ?bw ?n) ?n ?a ?b) => (x86 _mm512_inserti64x4 (x86 _mm512_broadcast_i64x4 ?a) ?b 1)"), "{found:#?}");
    }
}
