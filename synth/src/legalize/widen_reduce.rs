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
                            let letter = super::sign_letter(s);
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

/// The widening ops of two E-bit operands whose result is 2E bits, each
/// with the second operand's sign as a generic where the op has one
/// (`widening_mul<S, E, N, S2>`: Halide multiplies u8 by i8).
fn widening_ops(halide: &SpecLibrary) -> Vec<(&str, bool)> {
    halide
        .generic_names()
        .into_iter()
        .filter(|n| n.starts_with("widening_"))
        .filter_map(|n| {
            let g = halide.generic(n)?;
            match g.generics.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                ["S", "E", "N"] => Some((n, false)),
                ["S", "E", "N", "S2"] => Some((n, true)),
                _ => None,
            }
        })
        .collect()
}

/// An accumulated reduction of a widening op, at one type:
/// `add(acc, vector_reduce_add(cast(W(a, b)) to E*F, by F))`, W of sign S
/// (and S2 for b), the product signed if either operand is.
struct Accumulated<'a> {
    halide: &'a SpecLibrary,
    op: &'a str,
    has_s2: bool,
    s: i128,
    s2: i128,
    e: u32,
    f: u32,
    n: u32,
}

impl Accumulated<'_> {
    /// The sign of W's result.
    fn ps(&self) -> i128 {
        if self.has_s2 { self.s.max(self.s2) } else { self.s }
    }

    fn eval(&self, acc: &BitVec, a: &BitVec, b: &BitVec) -> Option<BitVec> {
        let (s, e, f, n, ps) = (self.s, self.e as i128, self.f as i128, self.n as i128, self.ps());
        let h = self.halide;
        let wg: Vec<i128> = if self.has_s2 { vec![s, e, f * n, self.s2] } else { vec![s, e, f * n] };
        let (_, w) = h.instantiate(self.op, &wg).ok()?;
        let (_, wide) = h.instantiate("cast", &[ps, 2 * e, f * n, ps, e * f]).ok()?;
        let (_, red) = h.instantiate("vector_reduce_add", &[ps, e * f, n, f]).ok()?;
        let (_, add) = h.instantiate("add", &[ps, e * f, n]).ok()?;
        let r = red.eval(&[&wide.eval(&[&w.eval(&[a, b]).ok()?]).ok()?]).ok()?;
        add.eval(&[acc, &r]).ok()
    }

    fn text(&self) -> String {
        let (e, f, n, op, ps) = (self.e, self.f, self.n, self.op, self.ps());
        let w = if self.has_s2 { format!("({op} (t ?sign {e} {}) {} ?a ?b)", f * n, self.s2) } else { format!("({op} (t ?sign {e} {}) ?a ?b)", f * n) };
        let wide = format!("(cast (t {ps} {} {}) {ps} {} {w})", 2 * e, f * n, e * f);
        format!("(add (t {ps} {} {n}) ?acc (vector_reduce_add (t {ps} {} {n}) {f} {wide}))", e * f, e * f)
    }
}

/// Accumulated dot products searched from the semantics: for every
/// widening op W of Halide (both signs of each operand where it has S2),
/// lane width E in {8, 16} and factor F = 4, at 128, 256 and 512 bits,
/// `acc + vector_reduce_add(cast(W(a, b)) to E*F, by F)` is compared on
/// random and edge inputs with every verified three-register instruction
/// of that register, its operands in each of the six orders; the first
/// equal (instructions an AVX2 CPU has first, then the family that exists
/// at the most widths) becomes a template, each instance proved by the
/// caller. The cast makes the term depth 4, past the enumeration's depth
/// 3, which reaches F = 2 (`acc + vpmaddwd`, found there as `vpdpwssd`).
pub fn accumulated_dot_products(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let mut ins = instructions(x86);
    let mut named: Vec<(String, usize)> = ins.iter().enumerate().map(|(k, i)| (i.name.clone(), k)).collect();
    super::portable_order(x86, &mut named);
    let order: Vec<usize> = named.into_iter().map(|(_, k)| k).collect();
    let ins: Vec<Ins> = {
        let mut slots: Vec<Option<Ins>> = ins.drain(..).map(Some).collect();
        order.into_iter().filter_map(|k| slots[k].take()).collect()
    };
    const ORDERS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    let mut out = Vec::new();
    for vsize in [128u32, 256, 512] {
        let three: Vec<&Ins> = ins.iter().filter(|i| !i.has_imm() && i.ret == vsize && i.vectors() == [vsize, vsize, vsize]).collect();
        for e in [8u32, 16] {
            let f = 4u32;
            if vsize % (e * f) != 0 || e * f > 64 {
                continue;
            }
            let n = vsize / (e * f);
            // Distinct odd seeds (`inputs` sets the low bit): equal operands
            // would hide the operands' signs and order.
            let accs = inputs(vsize, e * f, 32, 0x6163_6331 ^ (e as u64) << 9 ^ vsize as u64);
            let xs = inputs(vsize, e, 32, 0x6163_6335 ^ (e as u64) << 9 ^ vsize as u64);
            let ys = inputs(vsize, e, 32, 0x6163_6339 ^ (e as u64) << 9 ^ vsize as u64);
            for &(op, has_s2) in &widening_ops(halide) {
                for s in [0i128, 1] {
                    for s2 in if has_s2 { vec![0i128, 1] } else { vec![s] } {
                        let shape = Accumulated { halide, op, has_s2, s, s2, e, f, n };
                        let Some(want) = (0..accs.len()).map(|c| shape.eval(&accs[c], &xs[c], &ys[c])).collect::<Option<Vec<_>>>() else { continue };
                        let hit = three.iter().find_map(|i| {
                            ORDERS.iter().find(|o| {
                                (0..accs.len()).all(|c| {
                                    let args = [&accs[c], &xs[c], &ys[c]];
                                    i.eval(&[args[o[0]], args[o[1]], args[o[2]]], 0).as_ref() == Some(&want[c])
                                })
                            }).map(|o| (i, o))
                        });
                        let Some((i, o)) = hit else { continue };
                        let names = ["?acc", "?a", "?b"];
                        let rhs = format!("(x86 {} {} {} {})", i.name, names[o[0]], names[o[1]], names[o[2]]);
                        let sign = super::sign_letter;
                        let kind = if has_s2 { format!("{}{}", sign(s), sign(s2)) } else { sign(s).to_string() };
                        out.push(Split {
                            op: "add".into(),
                            name: format!("synth.acc-reduce-{op}-{kind}{e}x{f}-{vsize}"),
                            lhs: shape.text(),
                            rhs: rhs.clone(),
                            conds: vec![],
                            free: vec![("sign".into(), vec![s])],
                            provenance: format!(
                                "phase legalize; accumulated reductions of widening ops searched (acc + vector_reduce_add(cast(W(a, b)) to E*F, by F), over Halide's widening ops W and both operand signs) against verified three-register instructions in every operand order: `{op}` ({kind}{e}) by {f} is {rhs} (the first equal on 32 random and edge inputs)"
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
    use misaal_isa::{SpecLibrary, StatusTable};

    /// Halide's ops and the x86 specs verified here.
    fn libraries() -> (SpecLibrary, SpecLibrary) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = SpecLibrary::load_dir(&root.join("frontends/halide")).expect("halide library");
        let dir = root.join("isa/specs/x86");
        let mut x86 = SpecLibrary::load_dir(&dir).expect("x86 library");
        x86.retain_verified(&StatusTable::load(&StatusTable::path_for(&dir)).expect("status"));
        (halide, x86)
    }

    #[test]
    fn finds_the_sad() {
        let (halide, x86) = libraries();
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

    #[test]
    fn finds_the_byte_dot_product() {
        let (halide, x86) = libraries();
        let v = super::accumulated_dot_products(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        // u8 x i8, four products to an i32 lane, accumulated: vpdpbusd,
        // wherever its spec is verified (the committed evidence is Zen 4's).
        let dot = |n: u32| format!("(add (t 1 32 {n}) ?acc (vector_reduce_add (t 1 32 {n}) 4 (cast (t 1 16 {}) 1 32 (widening_mul (t ?sign 8 {}) 1 ?a ?b))))", 4 * n, 4 * n);
        for (n, mm) in [(4, "_mm_dpbusd_epi32"), (8, "_mm256_dpbusd_epi32"), (16, "_mm512_dpbusd_epi32")] {
            if x86.instr(mm).is_none() {
                continue;
            }
            let s = v.iter().find(|s| s.lhs == dot(n) && s.free[0].1 == [0]).unwrap_or_else(|| panic!("no u8 x i8 dot product at {n} lanes"));
            assert_eq!(s.rhs, format!("(x86 {mm} ?acc ?a ?b)"));
        }
        // Unsigned by unsigned is no vpdpbusd: it reads b as signed.
        assert!(!v.iter().any(|s| s.lhs.contains("(widening_mul (t ?sign 8 16) 0 ?a ?b)") && s.free[0].1 == [0] && s.rhs.contains("dpbusd")));
    }
}
