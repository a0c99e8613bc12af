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
use misaal_verifier::mutation::{MutationKind, mutants};
use misaal_verifier::smt::{Equivalence, prove_equivalent};
use misaal_verifier::{DiffConfig, Oracle, Verdict, X86Silicon, check_against};
use std::collections::BTreeMap;

#[test]
fn silicon_oracle_catches_every_mutation() {
    let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"));
    let all_sites = std::env::var("MISAAL_MUTATION_SITES").is_ok_and(|v| v == "all");
    let only = std::env::var("MISAAL_MUTATION_FILTER").unwrap_or_default();
    let cfg = DiffConfig::default();
    let oracle = X86Silicon;
    let mut caught: BTreeMap<MutationKind, usize> = BTreeMap::new();
    let mut equivalent: BTreeMap<MutationKind, usize> = BTreeMap::new();
    let mut escaped = Vec::new();
    let mut unavailable = 0;
    for (k, (instr, sem)) in lib.iter().enumerate() {
        if !instr.name.contains(only.as_str()) {
            continue;
        }
        if oracle.available(instr).is_err() {
            unavailable += 1;
            continue;
        }
        for kind in MutationKind::ALL {
            let ms = mutants(sem, kind);
            if ms.is_empty() {
                continue;
            }
            let picked: Vec<_> = if all_sites { ms } else { vec![ms[(k * 7919 + kind as usize * 104_729) % ms.len()].clone()] };
            for m in picked {
                match check_against(&oracle, instr, &m.semantics, &cfg) {
                    Verdict::Failed(_) => *caught.entry(kind).or_default() += 1,
                    Verdict::Agreed { .. } => match prove_equivalent(sem, &m.semantics, 20_000) {
                        Equivalence::Proved => *equivalent.entry(kind).or_default() += 1,
                        other => escaped.push(format!("{} ({:?}): {} -> {other:?}", instr.name, kind, m.description)),
                    },
                    other => escaped.push(format!("{} ({:?}): {} -> oracle said {other:?}", instr.name, kind, m.description)),
                }
            }
        }
    }
    for kind in MutationKind::ALL {
        eprintln!(
            "{kind:?}: {} caught by the CPU, {} proven equivalent by Z3",
            caught.get(&kind).unwrap_or(&0),
            equivalent.get(&kind).unwrap_or(&0)
        );
    }
    eprintln!("{unavailable} specs skipped (CPU lacks their feature)");
    assert!(escaped.is_empty(), "{} mutant(s) escaped the oracle:\n{}", escaped.len(), escaped.join("\n"));
    // A filtered run may hold no site of some kind.
    for kind in MutationKind::ALL.iter().filter(|_| only.is_empty()) {
        assert!(caught.get(kind).copied().unwrap_or(0) > 0, "no {kind:?} mutant was exercised");
    }
}
