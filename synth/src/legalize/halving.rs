//! Expansions of the halving ops (`halving_add` and friends: a sum or
//! difference formed at twice the width, then halved) into same-width
//! ops, searched from the semantics. x86 averages only u8 and u16
//! (vpavgb/vpavgw, which round up), so the other widths and signs had no
//! lowering.
//!
//! The right side is searched over `U(p, q)`, `U` a same-type op and `p`,
//! `q` among the operands, a same-type op of the two operands, and either
//! of those shifted right by 1 (a plain shift by a broadcast 1). The
//! smallest candidate equal to the op on random and edge inputs at three
//! widths becomes a template per sign; like every legalization template,
//! each instance is proved by the caller, which keeps the proved ones.

use super::Split;
use misaal_isa::{BitVec, SpecLibrary};

#[derive(Clone, Debug)]
enum Tm {
    X(usize),
    Bin(String, Box<Tm>, Box<Tm>),
    Half(Box<Tm>),
}

impl Tm {
    fn size(&self) -> usize {
        match self {
            Tm::X(_) => 0,
            Tm::Bin(_, a, b) => 1 + a.size() + b.size(),
            Tm::Half(a) => 1 + a.size(),
        }
    }
    fn text(&self) -> String {
        let ty = "(t ?sign ?bw ?n)";
        match self {
            Tm::X(k) => format!("?x{k}"),
            Tm::Bin(op, a, b) => format!("({op} {ty} {} {})", a.text(), b.text()),
            Tm::Half(a) => format!("(shr {ty} ?sign {} (broadcast {ty} 1))", a.text()),
        }
    }
    fn ops(&self, out: &mut Vec<String>) {
        match self {
            Tm::X(_) => {}
            Tm::Bin(op, a, b) => {
                out.push(op.clone());
                a.ops(out);
                b.ops(out);
            }
            Tm::Half(a) => {
                out.push("shr".into());
                a.ops(out);
            }
        }
    }
    fn eval(&self, halide: &SpecLibrary, s: i128, e: u32, n: u32, cs: &[[BitVec; 2]]) -> Option<Vec<BitVec>> {
        match self {
            Tm::X(k) => Some(cs.iter().map(|c| c[*k].clone()).collect()),
            Tm::Bin(op, a, b) => {
                let (_, sem) = halide.instantiate(op, &[s, e as i128, n as i128]).ok()?;
                let (va, vb) = (a.eval(halide, s, e, n, cs)?, b.eval(halide, s, e, n, cs)?);
                va.iter().zip(&vb).map(|(x, y)| sem.eval(&[x, y]).ok()).collect()
            }
            Tm::Half(a) => {
                let (_, sem) = halide.instantiate("shr", &[s, e as i128, n as i128, s]).ok()?;
                let mut one = BitVec::zero(e * n);
                for l in 0..n {
                    one.set_bit(l * e, true);
                }
                a.eval(halide, s, e, n, cs)?.iter().map(|x| sem.eval(&[x, &one]).ok()).collect()
            }
        }
    }
}

fn cases(e: u32, n: u32, count: usize, seed: u64) -> Vec<[BitVec; 2]> {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..count)
        .map(|c| {
            let mut word = || -> BitVec {
                let limbs: Vec<u64> = (0..(e * n).div_ceil(64)).map(|_| if c < 2 { [0, u64::MAX][c] } else { next() }).collect();
                BitVec::from_limbs(e * n, &limbs)
            };
            [word(), word()]
        })
        .collect()
}

/// Every halving-op expansion the search finds.
pub fn halving_expansions(halide: &SpecLibrary) -> Vec<Split> {
    let (bin, _) = super::shift::same_type_ops(halide);
    let targets: Vec<&String> = bin.iter().filter(|op| op.starts_with("halving_") || op.starts_with("rounding_halving_")).collect();
    let plain: Vec<&String> = bin.iter().filter(|op| !targets.contains(op)).collect();
    let mut out = Vec::new();
    for op in targets {
        for s in [0i128, 1] {
            let probes = [(8u32, 16u32), (16, 8), (32, 4), (64, 2)];
            let data: Vec<(u32, u32, Vec<[BitVec; 2]>, Vec<BitVec>)> = probes
                .iter()
                .filter_map(|&(e, n)| {
                    let cs = cases(e, n, 40, 0x6861_6c66 ^ (e as u64 * 3 + s as u64));
                    let (_, sem) = halide.instantiate(op, &[s, e as i128, n as i128]).ok()?;
                    let want = cs.iter().map(|c| sem.eval(&[&c[0], &c[1]]).ok()).collect::<Option<Vec<_>>>()?;
                    Some((e, n, cs, want))
                })
                .collect();
            if data.len() != probes.len() {
                continue;
            }
            let mut atoms = vec![Tm::X(0), Tm::X(1)];
            for v in &plain {
                atoms.push(Tm::Bin((*v).clone(), Box::new(Tm::X(0)), Box::new(Tm::X(1))));
            }
            let base = atoms.clone();
            atoms.extend(base.into_iter().map(|a| Tm::Half(Box::new(a))));
            // Atom values per probe (computed once), then candidates in size order.
            let vals: Vec<Vec<Option<Vec<BitVec>>>> = data.iter().map(|(e, n, cs, _)| atoms.iter().map(|a| a.eval(halide, s, *e, *n, cs)).collect()).collect();
            let sems: Vec<Vec<Option<std::sync::Arc<misaal_isa::Semantics>>>> =
                data.iter().map(|(e, n, _, _)| plain.iter().map(|u| halide.instantiate(u, &[s, *e as i128, *n as i128]).ok().map(|x| x.1)).collect()).collect();
            let mut cands: Vec<(usize, Option<usize>, usize, usize)> = (0..atoms.len()).map(|k| (atoms[k].size(), None, k, k)).collect();
            for u in 0..plain.len() {
                for i in 0..atoms.len() {
                    for j in 0..atoms.len() {
                        cands.push((1 + atoms[i].size() + atoms[j].size(), Some(u), i, j));
                    }
                }
            }
            cands.sort_by_key(|c| c.0);
            let found = cands.into_iter().find(|&(_, u, i, j)| {
                data.iter().enumerate().all(|(p, (_, _, _, want))| match u {
                    None => vals[p][i].as_ref() == Some(want),
                    Some(u) => {
                        let (Some(a), Some(b), Some(sem)) = (&vals[p][i], &vals[p][j], &sems[p][u]) else { return false };
                        a.iter().zip(b).zip(want).all(|((x, y), w)| sem.eval(&[x, y]).ok().as_ref() == Some(w))
                    }
                })
            });
            let found = found.map(|(_, u, i, j)| match u {
                None => atoms[i].clone(),
                Some(u) => Tm::Bin(plain[u].clone(), Box::new(atoms[i].clone()), Box::new(atoms[j].clone())),
            });
            let Some(t) = found else { continue };
            let mut ops = Vec::new();
            t.ops(&mut ops);
            let letter = super::sign_letter(s);
            out.push(Split {
                op: op.clone(),
                name: format!("synth.expand-{op}.{letter}.{}", ops.join("-")),
                lhs: format!("({op} (t ?sign ?bw ?n) ?x0 ?x1)"),
                rhs: t.text(),
                // Up to 512 bits: the ops of the right side split in halves.
                conds: vec!["(>= (* ?n ?bw) 128)".into(), "(<= (* ?n ?bw) 512)".into()],
                free: vec![("sign".into(), vec![s]), ("bw".into(), vec![8, 16, 32, 64]), ("n".into(), vec![2, 4, 8, 16, 32, 64])],
                provenance: format!(
                    "phase legalize; expansion searched over U(p, q) (U a same-type op; p, q the operands, a same-type op of them, or either halved by a shift of 1): `{op}` ({letter}) is `{}` (the smallest equal on 40 random and edge inputs at 8, 16, 32 and 64 bits)",
                    ops.join(" ")
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_halving_add() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontends/halide");
        let halide = misaal_isa::SpecLibrary::load_dir(&dir).expect("halide library");
        let t = std::time::Instant::now();
        let v = super::halving_expansions(&halide);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
        }
        eprintln!("{:?}", t.elapsed());
        assert!(v.iter().any(|s| s.lhs.starts_with("(halving_add") && s.free[0].1 == [0]));
    }
}
