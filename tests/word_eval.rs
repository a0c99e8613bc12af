//! The word evaluator (`Semantics::eval`, nodes of at most 64 bits in
//! machine words) against the plain `BitVec` evaluator, on every x86 spec and
//! every Halide op instance, with quickcheck's edge-heavy cases.

use misaal_isa::ast::Ty;
use misaal_isa::{Semantics, SpecLibrary};
use misaal_verifier::CaseGen;
use quickcheck::Gen;

fn agree(name: &str, sem: &Semantics, cases: &CaseGen, g: &mut Gen, n: usize) -> Result<(), String> {
    for _ in 0..n {
        let ops = cases.case(g);
        let (fast, slow) = (sem.eval(&ops), sem.eval_reference(&ops));
        if fast != slow {
            return Err(format!("{name}: operands {ops:?}: words {fast:?}, reference {slow:?}"));
        }
    }
    Ok(())
}

#[test]
fn words_agree_with_bitvec_on_every_x86_spec() {
    let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"));
    let mut g = Gen::from_size_and_seed(64, 7);
    let failures: Vec<String> = lib.iter().filter_map(|(i, s)| agree(&i.name, s, &CaseGen::new(i), &mut g, 200).err()).collect();
    assert!(failures.is_empty(), "{} of {} specs disagree:\n{}", failures.len(), lib.len(), failures.join("\n"));
}

#[test]
fn words_agree_with_bitvec_on_every_halide_op_instance() {
    let lib = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let mut g = Gen::from_size_and_seed(64, 11);
    let (mut failures, mut count) = (Vec::new(), 0);
    for op in lib.generic_names() {
        for s in 0..=1 {
            for e in [8, 16, 32, 64] {
                for n in [1, 3, 16] {
                    // Extra generic parameters (shift amounts, slice bounds) take small values.
                    for extra in [vec![], vec![1], vec![e / 2], vec![0, 1]] {
                        let mut args = vec![s, e, n];
                        args.extend(extra);
                        let Ok((instr, sem)) = lib.instantiate(op, &args) else { continue };
                        count += 1;
                        let cases = CaseGen::from_types(instr.params.iter().map(|p| p.ty).collect::<Vec<Ty>>());
                        if let Err(e) = agree(&format!("{op}{args:?}"), &sem, &cases, &mut g, 20) {
                            failures.push(e);
                        }
                    }
                }
            }
        }
    }
    assert!(count > 500, "only {count} instances");
    assert!(failures.is_empty(), "{} of {count} instances disagree:\n{}", failures.len(), failures.join("\n"));
}
