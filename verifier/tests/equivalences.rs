//! Specs that this CPU cannot run are proven equal, by Z3, to a twin that
//! it can. They stay `skipped` (unverified) in reports: a proof against a
//! spec is weaker evidence than the instruction itself.

use misaal_isa::SpecLibrary;
use misaal_verifier::smt::{Equivalence, prove_equivalent};

#[test]
fn avx_vnni_forms_equal_their_avx512_vnni_twins() {
    let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"));
    let mut pairs = 0;
    for (instr, sem) in lib.iter().filter(|(i, _)| i.features.iter().any(|f| f == "avxvnni")) {
        let twin_name = instr.name.replace("_avx_", "_");
        let (twin, twin_sem) = lib.get(&twin_name).unwrap_or_else(|| panic!("{} has no twin {twin_name}", instr.name));
        assert!(twin.features.iter().any(|f| f == "avx512vnni"), "{twin_name} should be the AVX512-VNNI form");
        let p: Vec<_> = instr.params.iter().map(|p| (&p.name, p.ty)).collect();
        let q: Vec<_> = twin.params.iter().map(|p| (&p.name, p.ty)).collect();
        assert_eq!(p, q, "{} and {twin_name} take different operands", instr.name);
        assert_eq!(prove_equivalent(sem, twin_sem, 60_000), Equivalence::Proved, "{} vs {twin_name}", instr.name);
        pairs += 1;
    }
    assert_eq!(pairs, 8, "expected the 8 AVX-VNNI dot products");
}
