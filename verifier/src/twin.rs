//! Twins: a spec the CPU cannot run counts as verified when Z3 proves it
//! equal to a verified spec of the same instruction in another encoding
//! (the VEX AVX-VNNI dot products against their EVEX AVX512-VNNI forms).

use crate::smt::{Equivalence, prove_equivalent};
use misaal_isa::status::{SpecStatus, StatusTable};
use misaal_isa::{Instr, Semantics, SpecLibrary};
use std::collections::BTreeMap;

/// Z3's budget for one twin proof; a timeout leaves the spec `skipped`.
const TWIN_TIMEOUT_MS: u32 = 60_000;

/// A verified spec of the same instruction (mnemonic, operand types and
/// result width) that Z3 proves equal to `i`.
pub fn find_twin(lib: &SpecLibrary, table: &StatusTable, now: &BTreeMap<String, SpecStatus>, i: &Instr, sem: &Semantics) -> Option<String> {
    let sig = |x: &Instr| (x.mnemonic.clone(), x.params.iter().map(|p| p.ty).collect::<Vec<_>>(), x.ret);
    lib.iter()
        .filter(|(t, _)| t.name != i.name && sig(t) == sig(i))
        // Only a spec verified by its own oracle: twins of twins prove nothing new.
        .filter(|(t, s)| match now.get(&t.name) {
            Some(st) => *st != SpecStatus::ProvenTwin,
            None => table.verified(&t.name, s).is_ok() && table.row_for(&t.name, &misaal_isa::status::digest(s)).is_some_and(|r| r.status != SpecStatus::ProvenTwin),
        })
        .find(|(_, s)| prove_equivalent(sem, s, TWIN_TIMEOUT_MS) == Equivalence::Proved)
        .map(|(t, _)| t.name.clone())
}
