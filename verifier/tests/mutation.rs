//! The silicon oracle must notice every semantic slip in a spec.
//!
//! For every x86 spec the CPU can run, and for each mutation kind, one
//! mutation site is picked (deterministically, per spec) and the mutant is
//! checked against the CPU exactly as `misaal isa check` checks specs. A
//! mutant the oracle does not reject must be proven equivalent to the
//! original by Z3; anything else fails the test. `MISAAL_MUTATION_SITES=all`
//! tries every site instead of one per kind (slow);
//! `MISAAL_MUTATION_FILTER=srl` keeps only intrinsics whose name contains it.

use misaal_isa::SpecLibrary;
use misaal_verifier::mutation::{MutationKind, MutationSampling, MutationTally, mutant_at, sampled_sites};
use misaal_verifier::smt::{Equivalence, prove_equivalent};
use misaal_verifier::{DiffConfig, Oracle, Verdict, X86Silicon, check_against};

#[test]
fn silicon_oracle_catches_every_mutation() {
    let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"));
    let sampling = MutationSampling::from_env();
    let cfg = DiffConfig::default();
    let oracle = X86Silicon;
    let mut tally = MutationTally::default();
    let mut unavailable = 0;
    for (k, (instr, sem)) in lib.iter().enumerate() {
        if !sampling.keeps(&instr.name) {
            continue;
        }
        if oracle.available(instr).is_err() {
            unavailable += 1;
            continue;
        }
        for kind in MutationKind::ALL {
            for m in sampled_sites(sem, kind, k, sampling.all_sites).into_iter().filter_map(|id| mutant_at(sem, id, kind)) {
                match check_against(&oracle, instr, &m.semantics, &cfg) {
                    Verdict::Failed(_) => tally.caught(kind),
                    Verdict::Agreed { .. } => match prove_equivalent(sem, &m.semantics, 20_000) {
                        Equivalence::Proved => tally.proved(kind),
                        other => tally.escaped.push(format!("{} ({:?}): {} -> {other:?}", instr.name, kind, m.description)),
                    },
                    other => tally.escaped.push(format!("{} ({:?}): {} -> oracle said {other:?}", instr.name, kind, m.description)),
                }
            }
        }
    }
    eprintln!("{unavailable} specs skipped (CPU lacks their feature)");
    if let Err(e) = tally.verdict("the CPU", &sampling) {
        panic!("{e}");
    }
}
