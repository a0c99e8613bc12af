//! The HVX specs (`isa/specs/hvx/`): they parse, carry an HVX version and a
//! cost with its source, agree with qemu-hexagon on every case, match the
//! committed STATUS.tsv, and qemu catches wrong specs (mutants and a
//! hand-written slip), through pairs, predicates, scalars and immediates.
//! The mutation test covers every spec: one site per spec and mutation kind
//! by default, every site with MISAAL_MUTATION_SITES=all (hours for all
//! 372; MISAAL_MUTATION_FILTER=name narrows it).
//!
//! Without clang-19, ld.lld-19 or qemu-hexagon the qemu trials are
//! reported as ignored (skipped), with a message naming the missing tool:
//! never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_isa::ast::Form;
use misaal_testkit::{trial_unless_missing, trials_unless_missing};
use misaal_verifier::emulated::Hvx;
use misaal_verifier::emulated_checks::{self, StandardChecks};
use misaal_verifier::Verdict;

fn specs_parse_with_costs_and_versions() -> Result<(), Failed> {
    let lib = emulated_checks::library_of_target::<Hvx>(300)?;
    let (mut pairs, mut preds) = (0, 0);
    for (i, _) in lib.iter() {
        if !(i.features.len() == 1 && ["hvxv60", "hvxv62", "hvxv65", "hvxv66"].contains(&i.features[0].as_str())) {
            return Err(format!("{} has features {:?}", i.name, i.features).into());
        }
        if !i.cost.as_ref().is_some_and(|c| c.source.contains("HVX PRM")) {
            return Err(format!("{} has no cost from the HVX manual", i.name).into());
        }
        pairs += i.params.iter().filter(|p| p.form == Form::Pair).count() + usize::from(i.ret_form == Form::Pair);
        preds += i.params.iter().filter(|p| p.form == Form::Pred).count() + usize::from(i.ret_form == Form::Pred);
    }
    // The register forms are exercised, not only declared.
    if pairs < 50 || preds < 30 {
        return Err(format!("only {pairs} pair and {preds} predicate operands or results").into());
    }
    Ok(())
}

/// HVX's part of the standard trials ([`emulated_checks::standard_checks`]).
const CHECKS: StandardChecks = StandardChecks {
    emulator: "qemu-hexagon",
    // A saturating add, a widening multiply into a pair, a compare into a
    // predicate, a narrowing shift by a scalar, a sliding reduction with an
    // immediate, and a predicated select.
    mutated: &["Q6_Vh_vadd_VhVh_sat", "Q6_Wh_vmpy_VubRb", "Q6_Q_vcmp_gt_VuhVuh", "Q6_Vub_vasr_VhVhR_rnd_sat", "Q6_Ww_vrmpy_WubRbI", "Q6_V_vmux_QVV"],
    mutated_cases: 200,
    // Spread over the lanes: a 128-lane spec has hundreds of sites, and
    // each costs a qemu process.
    mutated_sites: 6,
    // Every spec.
    every_spec_keeps: |_, _| true,
    // A rounding average without its rounding, into the hi half of a pair.
    wrong_spec: "instr Q6_Vub_vavg_VubVub_rnd(vu: bv1024, vv: bv1024) -> bv1024 [hvx hvxv60 vavg]\nFOR i := 0 to 127\n    dst[i*8+7:i*8] := Truncate8((ZeroExtend9(vu[i*8+7:i*8]) + ZeroExtend9(vv[i*8+7:i*8])) >>u 1)\nENDFOR\n",
    wrong_spec_name: "Q6_Vub_vavg_VubVub_rnd",
};

/// A spec whose register forms contradict the header (a pair declared where
/// the intrinsic takes one vector) is refused by the harness, not run.
fn a_form_mismatch_is_refused() -> Result<(), Failed> {
    let src = "instr Q6_Vb_vadd_VbVb(vu: pair1024, vv: bv1024) -> bv1024 [hvx hvxv60 vadd]\ndst := vu.lo + vv\n";
    match emulated_checks::verdict_on::<Hvx>(src, "Q6_Vb_vadd_VbVb")? {
        Verdict::OracleFailed(why) if why.contains("pair1024") => Ok(()),
        v => Err(format!("the mismatched spec was not refused: {v:?}").into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let missing = emulated_checks::missing_tools::<Hvx>();
    let mut trials = vec![Trial::test("hvx_specs_parse_with_costs_and_versions", specs_parse_with_costs_and_versions)];
    trials.extend(trials_unless_missing(emulated_checks::standard_checks::<Hvx>(CHECKS), missing.as_deref()));
    trials.push(trial_unless_missing("hvx_form_mismatch_is_refused", missing.as_deref(), a_form_mismatch_is_refused));
    libtest_mimic::run(&args, trials).exit();
}
