//! Commutation identities, searched from the semantics: `U(a, b)` is
//! `U(b, a)` for the same-type ops `U` for which that holds on random and
//! edge inputs at every width and sign (the wrapping and saturating sums
//! and products, the bitwise ops, min, max, absd, the averages). A lowering
//! rule is written for one operand order; with the identity the e-graph
//! holds both, so a pattern over the other order (a multiply by a
//! broadcast on the left) still meets it. Each instance is proved by the
//! caller like every legalization template. A commutation only permutes
//! variables, so it cannot feed a rewrite loop (`abstraction::loops`
//! leaves such rules out of the feed graph).

use super::Split;
use misaal_isa::{BitVec, SpecLibrary};

fn random(width: u32, seed: u64) -> BitVec {
    // Edge words: all ones, sign bits only, small values.
    super::xorshift_bits(width, seed, |k, x| match k % 4 {
        1 => x | 0x8080_8080_8080_8080,
        3 => x >> (x % 61),
        _ => x,
    })
}

/// Whether `op` commutes at every sign and a few element widths.
fn commutes(halide: &SpecLibrary, op: &str) -> bool {
    [0i128, 1].iter().all(|&s| {
        [(8i128, 16i128), (16, 8), (32, 4)].iter().all(|&(e, n)| {
            let Ok((_, sem)) = halide.instantiate(op, &[s, e, n]) else { return false };
            (0..32u64).all(|c| {
                let (a, b) = (random((e * n) as u32, 0x636f_6d6d + 2 * c), random((e * n) as u32, 0x636f_6d6d + 2 * c + 1));
                let (x, y) = (sem.eval(&[&a, &b]).ok(), sem.eval(&[&b, &a]).ok());
                x.is_some() && x == y
            })
        })
    })
}

/// The commutation templates of the same-type ops that commute.
pub fn commutations(halide: &SpecLibrary) -> Vec<Split> {
    let (bins, _) = super::shift::same_type_ops(halide);
    bins.iter()
        .filter(|op| commutes(halide, op))
        .map(|op| Split {
            op: op.clone(),
            name: format!("synth.commute-{op}"),
            lhs: format!("({op} (t ?sign ?bw ?n) ?a ?b)"),
            rhs: format!("({op} (t ?sign ?bw ?n) ?b ?a)"),
            conds: super::Registers::x86().conds("?bw"),
            free: vec![("sign".into(), vec![0, 1]), ("bw".into(), vec![8, 16, 32, 64]), ("n".into(), super::Registers::x86().lanes(&[8, 16, 32, 64]))],
            provenance: format!("phase legalize; commutation searched over the same-type ops: `{op}` gives the same result with its operands swapped on 32 random and edge inputs at three widths, both signs"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums_commute_and_differences_do_not() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let halide = misaal_isa::SpecLibrary::load_dir(&root.join("frontends/halide")).expect("halide library");
        let v = super::commutations(&halide);
        let ops: Vec<&str> = v.iter().map(|s| s.op.as_str()).collect();
        eprintln!("{ops:?}");
        for op in ["add", "and", "or", "xor", "max", "min"] {
            assert!(ops.contains(&op), "{op}");
        }
        for op in ["sub", "saturating_sub"] {
            assert!(!ops.contains(&op), "{op}");
        }
    }
}
