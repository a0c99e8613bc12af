//! Reductions of widened lane-wise ops as one instruction, searched from
//! the semantics.
//!
//! vpsadbw sums the absolute differences of 8 bytes into each 64-bit
//! lane: in Halide, `absd`, widened to 16 bits, reduced by 8, widened to
//! 64. That is depth 4, past the enumeration's depth 3, so it had no
//! lowering.
//!
//! The shapes searched, for every same-type binary Halide op `U`, every
//! `vector_reduce_*` op `R`, sign, lane width E in {8, 16, 32} and factor
//! F in {2, 4, 8}, at 128 and 256 bits:
//! `cast(R(cast(U(a, b)) to 2E, by F)) to E*F` (the outer cast left out
//! when E*F is 2E), whose result lanes are E*F bits. Each is compared on
//! random and edge inputs with every verified two-register instruction
//! `I(a, b)` and `I(b, a)` of that register (lanes up to 64 bits, as
//! x86's); the first equal becomes a template. Each instance is proved
//! by the caller, which keeps exactly the proved ones.

use super::Split;
use super::narrowing::{Ins, inputs, instructions};
use misaal_isa::{BitVec, SpecLibrary};

/// The composite at one type, as text and as an evaluator over operand pairs.
struct Shape<'a> {
    halide: &'a SpecLibrary,
    op: &'a str,
    red: &'a str,
    s: i128,
    e: u32,
    f: u32,
    n: u32,
}

impl Shape<'_> {
    fn eval(&self, a: &BitVec, b: &BitVec) -> Option<BitVec> {
        let (s, e, f, n) = (self.s, self.e as i128, self.f as i128, self.n as i128);
        let h = self.halide;
        let (_, u) = h.instantiate(self.op, &[s, e, f * n]).ok()?;
        let (_, wide) = h.instantiate("cast", &[s, e, f * n, s, 2 * e]).ok()?;
        let (_, red) = h.instantiate(self.red, &[s, 2 * e, n, f]).ok()?;
        let r = red.eval(&[&wide.eval(&[&u.eval(&[a, b]).ok()?]).ok()?]).ok()?;
        if f == 2 {
            return Some(r);
        }
        let (_, out) = h.instantiate("cast", &[s, 2 * e, n, s, e * f]).ok()?;
        out.eval(&[&r]).ok()
    }

    fn text(&self) -> String {
        let (e, f, n, op, red) = (self.e, self.f, self.n, self.op, self.red);
        let inner = format!("(cast (t ?sign {e} {}) ?sign {} ({op} (t ?sign {e} {}) ?a ?b))", f * n, 2 * e, f * n);
        let r = format!("({red} (t ?sign {} {n}) {f} {inner})", 2 * e);
        if f == 2 { r } else { format!("(cast (t ?sign {} {n}) ?sign {} {r})", 2 * e, e * f) }
    }
}

/// Every widened-reduction template the search finds.
pub fn widened_reductions(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let ins = instructions(x86);
    let (bins, _) = super::shift::same_type_ops(halide);
    let reds: Vec<&str> = halide.generic_names().into_iter().filter(|r| r.starts_with("vector_reduce_")).collect();
    let mut out = Vec::new();
    for vsize in [128u32, 256] {
        let two: Vec<&Ins> = ins.iter().filter(|i| !i.has_imm() && i.ret == vsize && i.vectors() == [vsize, vsize]).collect();
        for e in [8u32, 16, 32] {
            let xs = inputs(vsize, e, 32, 0x7361_6461 ^ (e as u64) << 9 ^ vsize as u64);
            let ys = inputs(vsize, e, 32, 0x7361_6462 ^ (e as u64) << 9 ^ vsize as u64);
            // Candidate values on every case, computed once per lane width.
            let cands: Vec<(&Ins, bool, Vec<BitVec>)> = two
                .iter()
                .flat_map(|i| [false, true].map(|swap| (*i, swap)))
                .filter_map(|(i, swap)| {
                    let v = xs.iter().zip(&ys).map(|(a, b)| if swap { i.eval(&[b, a], 0) } else { i.eval(&[a, b], 0) }).collect::<Option<Vec<_>>>()?;
                    Some((i, swap, v))
                })
                .collect();
            for f in [2u32, 4, 8] {
                // x86 lanes are at most 64 bits (a whole-register "lane"
                // only meets constant results: and-reductions of random values).
                if e * f > 64 || vsize % (e * f) != 0 {
                    continue;
                }
                let n = vsize / (e * f);
                for red in &reds {
                    for op in &bins {
                        for s in [0i128, 1] {
                            let shape = Shape { halide, op, red, s, e, f, n };
                            // Case 3 is random (0 and 1 are all-ones and zero): it screens.
                            let Some(probe) = shape.eval(&xs[3], &ys[3]) else { continue };
                            let mut hits = cands.iter().filter(|(_, _, v)| v[3] == probe).peekable();
                            if hits.peek().is_none() {
                                continue;
                            }
                            let Some(want) = xs.iter().zip(&ys).map(|(a, b)| shape.eval(a, b)).collect::<Option<Vec<_>>>() else { continue };
                            let Some((i, swap, _)) = hits.find(|(_, _, v)| *v == want) else { continue };
                            let rhs = if *swap { format!("(x86 {} ?b ?a)", i.name) } else { format!("(x86 {} ?a ?b)", i.name) };
                            let letter = if s == 1 { 'i' } else { 'u' };
                            out.push(Split {
                                op: if f == 2 { red.to_string() } else { "cast".into() },
                                name: format!("synth.widen-reduce-{red}-{op}-{letter}{e}x{f}-{vsize}"),
                                lhs: shape.text(),
                                rhs: rhs.clone(),
                                conds: vec![],
                                free: vec![("sign".into(), vec![s])],
                                provenance: format!(
                                    "phase legalize; reductions of widened lane-wise ops searched (cast(R(cast(U(a, b)) to 2E, by F)) to E*F, over the same-type ops U and the reductions R) against verified two-register instructions: `{red}` of `{op}` at {letter}{e} by {f} is {rhs} (the first equal on 32 random and edge inputs)"
                                ),
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use misaal_isa::{SpecLibrary, StatusTable};

    #[test]
    fn finds_the_sad() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = SpecLibrary::load_dir(&root.join("frontends/halide")).expect("halide library");
        let dir = root.join("isa/specs/x86");
        let mut x86 = SpecLibrary::load_dir(&dir).expect("x86 library");
        x86.retain_verified(&StatusTable::load(&StatusTable::path_for(&dir)).expect("status"));
        let t = std::time::Instant::now();
        let v = super::widened_reductions(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        eprintln!("{:?}", t.elapsed());
        let sad = |n: u32| format!("(cast (t ?sign 16 {n}) ?sign 64 (vector_reduce_add (t ?sign 16 {n}) 8 (cast (t ?sign 8 {}) ?sign 16 (absd (t ?sign 8 {}) ?a ?b))))", 8 * n, 8 * n);
        for (n, mm) in [(2, "_mm_sad_epu8"), (4, "_mm256_sad_epu8")] {
            let s = v.iter().find(|s| s.lhs == sad(n) && s.free[0].1 == [0]).expect("the unsigned sad");
            assert!(s.rhs == format!("(x86 {mm} ?a ?b)") || s.rhs == format!("(x86 {mm} ?b ?a)"), "{}", s.rhs);
        }
        // Signed bytes widen by sign extension: vpsadbw is not their sum.
        assert!(!v.iter().any(|s| s.lhs == sad(2) && s.free[0].1 == [1]));
    }
}
