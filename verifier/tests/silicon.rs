//! Every bundled x86 spec agrees with this CPU. A spec whose CPU feature is
//! missing is reported as skipped (and named), never counted as passing.

use misaal_isa::SpecLibrary;
use misaal_verifier::{DiffConfig, Verdict, X86Silicon, check_against};

#[test]
fn every_x86_spec_agrees_with_silicon() {
    let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"));
    assert!(lib.len() >= 600, "only {} x86 specs", lib.len());
    let cfg = DiffConfig::default();
    let (mut silicon, mut skipped, mut failed) = (0, Vec::new(), Vec::new());
    for (instr, sem) in lib.iter() {
        match check_against(&X86Silicon, instr, sem, &cfg) {
            Verdict::Agreed { cases } => {
                assert!(cases >= 1000);
                silicon += 1;
            }
            Verdict::Unavailable(why) => skipped.push(format!("{}: {why}", instr.name)),
            Verdict::Failed(cx) => failed.push(format!("{}:\n{cx}", instr.name)),
            Verdict::OracleFailed(why) => failed.push(format!("{}: {why}", instr.name)),
        }
    }
    for s in &skipped {
        eprintln!("SKIPPED (unverified) {s}");
    }
    eprintln!("{silicon} silicon, {} skipped, {} failed", skipped.len(), failed.len());
    assert!(failed.is_empty(), "{} spec(s) disagree with the CPU:\n{}", failed.len(), failed.join("\n"));
    // Skips must come from missing CPU features, not from missing glue.
    assert!(skipped.iter().all(|s| s.contains("this CPU lacks")), "{skipped:#?}");
}

/// The committed evidence is current for every spec this CPU runs: a
/// spec (or unroller) edited without re-running `misaal isa check` would
/// otherwise drop out of classes and rules silently. A `skipped` row written
/// on a CPU without the feature is current (its digest matches), only not
/// verified yet: on a CPU that has the feature it is named, not failed, so a
/// CI machine with AVX-512 does not need the table rewritten to pass.
#[test]
fn the_status_table_is_current_for_every_spec_this_cpu_runs() {
    let dir = misaal_isa::bundled_spec_dir("x86");
    let lib = SpecLibrary::load_dir(&dir).unwrap_or_else(|d| panic!("{d}"));
    let table = misaal_isa::StatusTable::for_spec_dir(&dir).unwrap_or_else(|d| panic!("{d}"));
    let cfg = DiffConfig { cases: 1, ..Default::default() };
    let (mut stale, mut unchecked_here) = (Vec::new(), Vec::new());
    for (i, s) in lib.iter() {
        if matches!(check_against(&X86Silicon, i, s, &cfg), Verdict::Unavailable(_)) {
            continue;
        }
        match table.row_for(&i.name, &misaal_isa::status::digest(s)) {
            None if table.rows.contains_key(&i.name) => stale.push(format!("`{}` changed since it was checked", i.name)),
            None => stale.push(format!("`{}` has no row", i.name)),
            Some(r) if r.status == misaal_isa::SpecStatus::Failed => stale.push(format!("`{}` is recorded as failed ({})", i.name, r.evidence)),
            Some(r) if !r.status.is_verified() => unchecked_here.push(i.name.clone()),
            Some(_) => {}
        }
    }
    if !unchecked_here.is_empty() {
        eprintln!(
            "NOTE: {} spec(s) this CPU runs are recorded as unverified by another CPU, e.g. {}; `misaal isa check --target x86` here would verify them",
            unchecked_here.len(),
            unchecked_here[0]
        );
    }
    assert!(stale.is_empty(), "{} spec(s) this CPU runs have no current evidence in isa/specs/x86/evidence/; run `misaal isa check --target x86`:\n{}", stale.len(), stale.join("\n"));
}
