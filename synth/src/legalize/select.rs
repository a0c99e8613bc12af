//! Selects, comparisons and negated bitwise operands, searched.
//!
//! The enumeration has no `select` and no `not` (its Halide terms are
//! same-type arithmetic), so comparisons reach no x86 instruction: x86
//! compares give a vector of all-ones or zero lanes, which in Halide is a
//! select of -1 and 0 on a comparison, and a select of two values on a
//! comparison is a blend. Four searches, each proved per instance by the
//! caller, which keeps exactly the proved instances:
//!
//! - Halide-level identities: `select(c(a, b), p, q)` with `c` a
//!   comparison and `{p, q} = {a, b}` is searched over every same-type
//!   binary Halide op `V(a, b)` or `V(b, a)` (it finds max and min).
//! - Masks: `select(c(a, b), -1, 0)` over verified instructions `M(u, v)`
//!   ({u, v} = {a, b}). (An unsigned order needs a negation after two
//!   instructions, depth 3; not searched.)
//! - Blends: `select(c(a, b), x, y)` over `B(p, q, m)` with `B` a verified
//!   three-register instruction, {p, q} = {x, y} and `m` a mask `M(u, v)`
//!   or, where none is equal, `M1(M2(u, v), t)` with `t` one of the
//!   operands, in either order (the unsigned orders).
//! - Negated operands: `op(not(a), b)` for the bitwise ops over verified
//!   two-register instructions `I(u, v)`.
//!
//! Candidates are checked on random and edge inputs; the first equal
//! becomes a template.

use super::Split;
use super::narrowing::{Ins, inputs, instructions, splat};
use misaal_isa::{BitVec, SpecLibrary};

/// The same-type binary Halide ops (`<S, E, N>`, two operands and the
/// result of `N*E` bits), by name.
fn same_type_ops(halide: &SpecLibrary) -> Vec<String> {
    let mut out: Vec<String> = super::expand::uniform_ops(halide).into_iter().filter(|(_, s2)| !*s2).map(|(op, _)| op).collect();
    out.sort();
    out
}

/// Halide-level: `select(c(a, b), p, q)` as one same-type op.
pub fn identities(halide: &SpecLibrary) -> Vec<Split> {
    let ops = same_type_ops(halide);
    let mut out = Vec::new();
    for cmp in ["lt", "le", "gt", "ge"] {
        for (pq, pq_text) in [((0usize, 1usize), "?a ?b"), ((1, 0), "?b ?a")] {
            // The first op (and operand order) equal at each sign.
            let found: Vec<Option<(String, bool)>> = [0i128, 1]
                .iter()
                .map(|&s| {
                    ops.iter().find_map(|v| {
                        [false, true]
                            .into_iter()
                            .find(|&swap| {
                                [(8i128, 4i128), (16, 8), (32, 4)].iter().all(|&(e, n)| {
                                    let (Ok((_, c)), Ok((_, sel)), Ok((_, vs))) = (
                                        halide.instantiate(cmp, &[s, e, n]),
                                        halide.instantiate("select", &[s, e, n]),
                                        halide.instantiate(v, &[s, e, n]),
                                    ) else {
                                        return false;
                                    };
                                    let xs = inputs(
                                        (e * n) as u32,
                                        e as u32,
                                        40,
                                        0x6964_656e ^ (e * n) as u64,
                                    );
                                    let ys = inputs(
                                        (e * n) as u32,
                                        e as u32,
                                        40,
                                        0x7469_7479 ^ (e * n) as u64,
                                    );
                                    xs.iter().zip(&ys).all(|(a, b)| {
                                        let ab = [a, b];
                                        let want = c
                                            .eval(&[a, b])
                                            .ok()
                                            .and_then(|m| sel.eval(&[&m, ab[pq.0], ab[pq.1]]).ok());
                                        let got = if swap {
                                            vs.eval(&[b, a]).ok()
                                        } else {
                                            vs.eval(&[a, b]).ok()
                                        };
                                        want.is_some() && want == got
                                    })
                                })
                            })
                            .map(|swap| (v.clone(), swap))
                    })
                })
                .collect();
            let signs: Vec<i128> = if found[0].is_some() && found[0] == found[1] {
                vec![0, 1]
            } else {
                (0..2).filter(|&s| found[s as usize].is_some()).collect()
            };
            let mut done = Vec::new();
            for s in signs {
                let Some((v, swap)) = found[s as usize].clone() else {
                    continue;
                };
                if done.contains(&(v.clone(), swap)) {
                    continue;
                }
                done.push((v.clone(), swap));
                let domain = if found[0] == found[1] {
                    vec![0, 1]
                } else {
                    vec![s]
                };
                let args = if swap { "?b ?a" } else { "?a ?b" };
                out.push(Split {
                    op: "select".into(),
                    name: format!("synth.select-{cmp}-{}.{v}", if pq == (0, 1) { "ab" } else { "ba" }),
                    lhs: format!("(select (t ?sign ?bw ?n) ({cmp} (t ?sign ?bw ?n) ?a ?b) {pq_text})"),
                    rhs: format!("({v} (t ?sign ?bw ?n) {args})"),
                    conds: vec!["(>= (* ?n ?bw) 128)".into(), "(<= (* ?n ?bw) 512)".into()],
                    free: vec![("sign".into(), domain), ("bw".into(), vec![8, 16, 32, 64]), ("n".into(), vec![2, 4, 8, 16, 32, 64])],
                    provenance: format!(
                        "phase legalize; select on a comparison of its own two values searched over the same-type Halide ops V(a, b) and V(b, a): the first equal on random and edge inputs (8, 16, 32-bit lanes) is `{v}`"
                    ),
                });
            }
        }
    }
    out
}

/// A mask term: `M(u, v)` or `M1(M2(u, v), t)` (or `M1(t, M2(u, v))`), with
/// u, v, t indices among the compared operands.
#[derive(Clone, Copy, Debug)]
enum Mask {
    One(usize, usize, usize),
    Two {
        outer: usize,
        inner: usize,
        u: usize,
        v: usize,
        t: usize,
        t_first: bool,
    },
}

impl Mask {
    fn eval(self, ins: &[Ins], x: &[BitVec; 2]) -> Option<BitVec> {
        match self {
            Mask::One(m, u, v) => ins[m].eval(&[&x[u], &x[v]], 0),
            Mask::Two { inner, u, v, .. } => {
                let i = ins[inner].eval(&[&x[u], &x[v]], 0)?;
                self.outer_eval(ins, x, &i)
            }
        }
    }

    /// A depth-2 term's outer instruction on the inner term's value `i`
    /// (`None` for a depth-1 term).
    fn outer_eval(self, ins: &[Ins], x: &[BitVec; 2], i: &BitVec) -> Option<BitVec> {
        let Mask::Two { outer, t, t_first, .. } = self else { return None };
        if t_first { ins[outer].eval(&[&x[t], i], 0) } else { ins[outer].eval(&[i, &x[t]], 0) }
    }
    fn render(self, ins: &[Ins]) -> String {
        let names = ["?a".to_string(), "?b".to_string()];
        match self {
            Mask::One(m, u, v) => ins[m].render(&[names[u].clone(), names[v].clone()], 0),
            Mask::Two {
                outer,
                inner,
                u,
                v,
                t,
                t_first,
            } => {
                let i = ins[inner].render(&[names[u].clone(), names[v].clone()], 0);
                if t_first {
                    ins[outer].render(&[names[t].clone(), i], 0)
                } else {
                    ins[outer].render(&[i, names[t].clone()], 0)
                }
            }
        }
    }
}

/// The mask terms at one register width, depth 1 then (if `deep`) depth
/// 2; `ok` says whether a term's values on the cases are the wanted ones
/// (it sees depth 2 only when no depth-1 term is accepted).
fn find_mask(ins: &[Ins], vsize: u32, cases: &[[BitVec; 2]], deep: bool, ok: &mut dyn FnMut(&[BitVec]) -> bool) -> Option<Mask> {
    MaskPool::new(ins, vsize, cases).find(deep, ok)
}

/// The mask terms of one width on one set of cases, by their values: each
/// distinct list of values once, with the first term (in search order)
/// that gives it. `ok` judges values only, so a term whose values an
/// earlier term gave is refused as that one was, and searching the pool
/// finds the term the terms themselves would. The blends search six
/// comparisons over one set of cases: a depth-2 term (a pair of
/// instructions) is evaluated once for all six, and only as far as some
/// search has gone.
struct MaskPool<'a> {
    ins: &'a [Ins],
    cases: &'a [[BitVec; 2]],
    two: Vec<usize>,
    seen: std::collections::HashSet<Vec<BitVec>>,
    one: Vec<(Mask, Vec<BitVec>)>,
    deep: Vec<(Mask, Vec<BitVec>)>,
    /// The next depth-2 term to evaluate, in [`Self::term`]'s order.
    next: usize,
    /// The inner terms' values, by `inner * 2 + (u, v) order`.
    inner: Vec<Option<Option<Vec<BitVec>>>>,
}

impl<'a> MaskPool<'a> {
    fn new(ins: &'a [Ins], vsize: u32, cases: &'a [[BitVec; 2]]) -> Self {
        let two: Vec<usize> = (0..ins.len()).filter(|&k| !ins[k].has_imm() && ins[k].ret == vsize && ins[k].vectors() == [vsize, vsize]).collect();
        let inner = vec![None; two.len() * 2];
        let mut pool = MaskPool { ins, cases, two, seen: Default::default(), one: Vec::new(), deep: Vec::new(), next: 0, inner };
        for k in 0..pool.two.len() {
            for (u, v) in [(0, 1), (1, 0)] {
                let m = Mask::One(pool.two[k], u, v);
                if let Some(vals) = cases.iter().map(|x| m.eval(ins, x)).collect::<Option<Vec<_>>>()
                    && pool.seen.insert(vals.clone())
                {
                    pool.one.push((m, vals));
                }
            }
        }
        pool
    }

    /// Depth-2 term `k`, `M1(M2(u, v), t)` or `M1(t, M2(u, v))`, with the
    /// inner instruction and operand order outermost, then the outer
    /// instruction, `t` and its side; and the inner term's slot in
    /// `self.inner`.
    fn term(&self, k: usize) -> (usize, Mask) {
        let n = self.two.len();
        let (t_first, k) = (k % 2 == 1, k / 2);
        let (t, k) = (k % 2, k / 2);
        let (outer, k) = (self.two[k % n], k / n);
        let (swap, inner) = (k % 2, k / 2);
        let (u, v) = if swap == 0 { (0, 1) } else { (1, 0) };
        (inner * 2 + swap, Mask::Two { outer, inner: self.two[inner], u, v, t, t_first })
    }

    /// Evaluates the next depth-2 term; true when its values are new (then
    /// they are `self.deep`'s last entry).
    fn step(&mut self) -> bool {
        let (slot, m) = self.term(self.next);
        self.next += 1;
        let (ins, cases) = (self.ins, self.cases);
        let Mask::Two { inner, u, v, .. } = m else { return false };
        let Some(first) = self.inner[slot].get_or_insert_with(|| cases.iter().map(|x| ins[inner].eval(&[&x[u], &x[v]], 0)).collect()) else { return false };
        let Some(vals) = cases.iter().zip(first).map(|(x, i)| m.outer_eval(ins, x, i)).collect::<Option<Vec<_>>>() else { return false };
        if !self.seen.insert(vals.clone()) {
            return false;
        }
        self.deep.push((m, vals));
        true
    }

    /// The first term `ok` accepts: depth 1, then (if `deep`) depth 2.
    fn find(&mut self, deep: bool, ok: &mut dyn FnMut(&[BitVec]) -> bool) -> Option<Mask> {
        if let Some((m, _)) = self.one.iter().chain(if deep { &self.deep[..] } else { &[] }).find(|(_, v)| ok(v)) {
            return Some(*m);
        }
        if !deep {
            return None;
        }
        let total = self.two.len() * self.two.len() * 8;
        while self.next < total {
            if self.step()
                && let Some((m, vals)) = self.deep.last()
                && ok(vals)
            {
                return Some(*m);
            }
        }
        None
    }
}

/// Compared operands: random and edge inputs, and pairs of equal values
/// (where `eq`, `le` and `ge` differ from the strict comparisons).
fn compare_cases(vsize: u32, e: u32, seed: u64) -> Vec<[BitVec; 2]> {
    let xs = inputs(vsize, e, 24, seed);
    let ys = inputs(vsize, e, 24, seed ^ 0x5a5a);
    let mut out: Vec<[BitVec; 2]> = xs.iter().cloned().zip(ys).map(|(a, b)| [a, b]).collect();
    // Half the lanes of b copied from a.
    for (k, a) in xs.iter().enumerate().skip(2).take(6) {
        let mut b = out[(k + 5) % out.len()][1].clone();
        for l in (0..vsize / e).filter(|l| (l + k as u32) % 2 == 0) {
            for bit in 0..e {
                b.set_bit(l * e + bit, a.bit(l * e + bit));
            }
        }
        out.push([a.clone(), b]);
    }
    out
}

const COMPARES: [&str; 3] = ["eq", "gt", "lt"];

/// `select(c(a, b), -1, 0)`: a compare instruction (or two).
pub fn masks(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let ins = instructions(x86);
    let mut out: Vec<Split> = Vec::new();
    for vsize in [128u32, 256] {
        for e in [8u32, 16, 32, 64] {
            let n = vsize / e;
            for cmp in COMPARES {
                for s in [1i128, 0] {
                    let (Ok((_, c)), Ok((_, sel))) = (
                        halide.instantiate(cmp, &[s, e as i128, n as i128]),
                        halide.instantiate("select", &[s, e as i128, n as i128]),
                    ) else {
                        continue;
                    };
                    let cases =
                        compare_cases(vsize, e, 0x6d61_736b ^ ((e as u64) << 12) ^ vsize as u64);
                    let (ones, zero) = (splat(e, n, (1u128 << e) - 1), BitVec::zero(vsize));
                    let Some(want) = cases
                        .iter()
                        .map(|x| {
                            c.eval(&[&x[0], &x[1]])
                                .ok()
                                .and_then(|m| sel.eval(&[&m, &ones, &zero]).ok())
                        })
                        .collect::<Option<Vec<_>>>()
                    else {
                        continue;
                    };
                    let Some(m) = find_mask(&ins, vsize, &cases, false, &mut |v: &[BitVec]| {
                        v == want.as_slice()
                    }) else {
                        continue;
                    };
                    let rhs = m.render(&ins);
                    // Both signs with one right side: one rule over both.
                    if s == 0
                        && let Some(prev) = out.last_mut()
                        && prev.name == format!("synth.mask-{cmp}-i{e}-{vsize}")
                        && prev.rhs == rhs
                    {
                        prev.free[0].1.push(0);
                        prev.name = format!("synth.mask-{cmp}-{e}-{vsize}");
                        continue;
                    }
                    out.push(Split {
                        op: "select".into(),
                        name: format!("synth.mask-{cmp}-{}{e}-{vsize}", super::sign_letter(s)),
                        lhs: format!("(select (t ?sign {e} {n}) ({cmp} (t ?sign {e} {n}) ?a ?b) (broadcast (t ?sign {e} {n}) -1) (broadcast (t ?sign {e} {n}) 0))"),
                        rhs: rhs.clone(),
                        conds: vec![],
                        free: vec![("sign".into(), vec![s])],
                        provenance: format!(
                            "phase legalize; a select of -1 and 0 on a comparison searched over M(u, v) of verified instructions: the first equal on random and edge inputs is {rhs}"
                        ),
                    });
                }
            }
        }
    }
    out
}

/// `select(c(a, b), x, y)` at one width: a blend of x and y on a mask,
/// per register (128 bits too: the edge repairs select at either).
pub fn blends(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let ins = instructions(x86);
    let mut out = Vec::new();
    for vsize in [256u32, 128] {
        out.extend(blends_at(halide, &ins, vsize));
    }
    out
}

fn blends_at(halide: &SpecLibrary, ins: &[Ins], vsize: u32) -> Vec<Split> {
    let three: Vec<usize> = (0..ins.len())
        .filter(|&k| {
            !ins[k].has_imm() && ins[k].ret == vsize && ins[k].vectors() == [vsize, vsize, vsize]
        })
        .collect();
    let mut out = Vec::new();
    for e in [8u32, 16, 32] {
        let n = vsize / e;
        let cases = compare_cases(vsize, e, 0x626c_656e ^ ((e as u64) << 12));
        let vals = inputs(vsize, e, cases.len(), 0x7876_616c ^ e as u64);
        let others = inputs(vsize, e, cases.len(), 0x7976_616c ^ e as u64);
        let mut pool = MaskPool::new(ins, vsize, &cases);
        for cmp in COMPARES {
            for cs in [1i128, 0] {
                let (Ok((_, c)), Ok((_, sel))) = (
                    halide.instantiate(cmp, &[cs, e as i128, n as i128]),
                    halide.instantiate("select", &[1, e as i128, n as i128]),
                ) else {
                    continue;
                };
                let Some(want) = cases
                    .iter()
                    .zip(vals.iter().zip(&others))
                    .map(|(x, (p, q))| {
                        c.eval(&[&x[0], &x[1]])
                            .ok()
                            .and_then(|m| sel.eval(&[&m, p, q]).ok())
                    })
                    .collect::<Option<Vec<_>>>()
                else {
                    continue;
                };
                let mut pick: Option<(usize, bool)> = None;
                let mask = pool.find(true, &mut |m: &[BitVec]| {
                    for &b in &three {
                        for swap in [false, true] {
                            let ok = m.iter().zip(vals.iter().zip(&others)).zip(&want).all(
                                |((m, (x, y)), w)| {
                                    let r = if swap {
                                        ins[b].eval(&[x, y, m], 0)
                                    } else {
                                        ins[b].eval(&[y, x, m], 0)
                                    };
                                    r.as_ref() == Some(w)
                                },
                            );
                            if ok {
                                pick = Some((b, swap));
                                return true;
                            }
                        }
                    }
                    false
                });
                let (Some(m), Some((b, swap))) = (mask, pick) else {
                    continue;
                };
                let (p, q) = if swap { ("?x", "?y") } else { ("?y", "?x") };
                let rhs = ins[b].render(&[p.into(), q.into(), m.render(ins)], 0);
                // The 256-bit names as before; 128-bit ones say so.
                let suffix = if vsize == 256 { String::new() } else { format!("-{vsize}") };
                out.push(Split {
                    op: "select".into(),
                    name: format!("synth.blend-{cmp}-{}{e}{suffix}", super::sign_letter(cs)),
                    lhs: format!("(select (t ?sign {e} {n}) ({cmp} (t {cs} {e} {n}) ?a ?b) ?x ?y)"),
                    rhs: rhs.clone(),
                    conds: vec![],
                    free: vec![("sign".into(), vec![0, 1])],
                    provenance: format!(
                        "phase legalize; select on a comparison at its own width searched over B(p, q, mask) (B a three-register instruction, the mask M(u, v) or M1(M2(u, v), t) of verified instructions): the first equal on random and edge inputs is {rhs}"
                    ),
                });
            }
        }
    }
    out
}

/// `op(not(a), b)` for the bitwise ops: one two-register instruction.
pub fn negated(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let ins = instructions(x86);
    let mut out = Vec::new();
    for op in ["and", "or", "xor"] {
        for vsize in [128u32, 256] {
            let two: Vec<usize> = (0..ins.len())
                .filter(|&k| {
                    !ins[k].has_imm() && ins[k].ret == vsize && ins[k].vectors() == [vsize, vsize]
                })
                .collect();
            let found = two.iter().find_map(|&k| {
                [(0usize, 1usize), (1, 0)]
                    .into_iter()
                    .find(|&(u, v)| {
                        [8u32, 32].iter().all(|&e| {
                            let n = (vsize / e) as i128;
                            let (Ok((_, not)), Ok((_, f))) = (
                                halide.instantiate("not", &[0, e as i128, n]),
                                halide.instantiate(op, &[0, e as i128, n]),
                            ) else {
                                return false;
                            };
                            compare_cases(vsize, e, 0x6e6f_74 ^ e as u64)
                                .iter()
                                .all(|x| {
                                    let want = not
                                        .eval(&[&x[0]])
                                        .ok()
                                        .and_then(|na| f.eval(&[&na, &x[1]]).ok());
                                    want.is_some() && ins[k].eval(&[&x[u], &x[v]], 0) == want
                                })
                        })
                    })
                    .map(|o| (k, o))
            });
            let Some((k, (u, v))) = found else { continue };
            let names = ["?a".to_string(), "?b".to_string()];
            let rhs = ins[k].render(&[names[u].clone(), names[v].clone()], 0);
            out.push(Split {
                op: op.into(),
                name: format!("synth.{op}-not-{vsize}"),
                lhs: format!("({op} (t ?sign ?bw ?n) (not (t ?sign ?bw ?n) ?a) ?b)"),
                rhs: rhs.clone(),
                conds: vec![format!("(= (* ?n ?bw) {vsize})")],
                free: vec![("sign".into(), vec![0, 1]), ("bw".into(), vec![8, 16, 32, 64]), ("n".into(), vec![2, 4, 8, 16, 32])],
                provenance: format!("phase legalize; `{op}` of a negated operand searched over verified two-register instructions I(u, v): the first equal on random and edge inputs (8- and 32-bit lanes) is {rhs}"),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_selects_masks_and_andnot() {
        if !misaal_testkit::slow_tier("the select search over every x86 spec takes over a minute; synth_pipeline runs it over SSE2") {
            return;
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = misaal_isa::SpecLibrary::load_dir(&root.join("frontends/halide"))
            .expect("halide library");
        let x86 =
            misaal_isa::SpecLibrary::load_dir(&root.join("isa/specs/x86")).expect("x86 library");
        let all: Vec<super::Split> = [
            super::identities(&halide),
            super::masks(&halide, &x86),
            super::blends(&halide, &x86),
            super::negated(&halide, &x86),
        ]
        .concat();
        for s in &all {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        let rhs = |name: &str| {
            all.iter()
                .find(|s| s.name == name)
                .map(|s| s.rhs.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            rhs("synth.select-gt-ab.max"),
            "(max (t ?sign ?bw ?n) ?a ?b)"
        );
        assert_eq!(rhs("synth.mask-gt-i8-128"), "(x86 _mm_cmpgt_epi8 ?a ?b)");
        assert_eq!(rhs("synth.and-not-256"), "(x86 _mm256_andnot_si256 ?a ?b)");
        // No unsigned compare instruction on AVX2: never the signed one alone.
        assert_eq!(
            rhs("synth.mask-eq-32-256"),
            "(x86 _mm256_cmpeq_epi32 ?a ?b)"
        );
        assert!(!rhs("synth.mask-gt-u8-128").starts_with("(x86 _mm_cmpgt_epi8 ?a ?b)"));
        // The 128-bit blends (the mulhrs repair selects at either width).
        assert_eq!(rhs("synth.blend-eq-i16-128"), "(x86 _mm_blendv_epi8 ?y ?x (x86 _mm_cmpeq_epi16 ?a ?b))");
    }
}
