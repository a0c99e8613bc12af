//! The Z3 encoding means what the evaluator means: for every x86 spec, the
//! encoding evaluated at random inputs equals the evaluator's result. (The
//! evaluator itself is checked against the CPU in tests/silicon.rs.)

use misaal_isa::SpecLibrary;
use misaal_verifier::CaseGen;
use misaal_verifier::smt::evaluate;
use quickcheck::Gen;

#[test]
fn encoding_matches_the_evaluator_on_every_x86_spec() {
    let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap();
    let mut g = Gen::from_size_and_seed(64, 0xe4c0);
    let mut bad = Vec::new();
    for (instr, sem) in lib.iter() {
        let cg = CaseGen::new(instr);
        for _ in 0..10 {
            let c = cg.case(&mut g);
            let (z, e) = (evaluate(sem, &c), sem.eval(&c).ok());
            if z != e {
                bad.push(format!("{}: {:?} z3={z:?} evaluator={e:?}", instr.name, c));
                break;
            }
        }
    }
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}
