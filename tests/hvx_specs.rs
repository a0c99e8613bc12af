//! The HVX specs (`isa/specs/hvx/`): they parse, carry an HVX version and a
//! cost with its source, agree with qemu-hexagon on every case, match the
//! committed STATUS.tsv, and qemu catches wrong specs (mutants and a
//! hand-written slip), through pairs, predicates, scalars and immediates.
//!
//! Without clang-19, ld.lld-19 or qemu-hexagon the qemu trials are
//! reported as ignored (skipped), with a message naming the missing tool:
//! never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_isa::ast::Form;
use misaal_isa::{SpecLibrary, SpecStatus, StatusTable};
use misaal_verifier::mutation::{MutationKind, mutants};
use misaal_verifier::smt::{Equivalence, prove_equivalent};
use misaal_verifier::{DiffConfig, HvxQemu, Oracle, Verdict, check_against};

fn lib() -> SpecLibrary {
    SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("hvx")).unwrap_or_else(|d| panic!("{d}"))
}

fn specs_parse_with_costs_and_versions() -> Result<(), Failed> {
    let lib = lib();
    if lib.len() < 300 {
        return Err(format!("only {} HVX specs", lib.len()).into());
    }
    let (mut pairs, mut preds) = (0, 0);
    for (i, _) in lib.iter() {
        if i.target != "hvx" {
            return Err(format!("{} has target {}", i.name, i.target).into());
        }
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

fn all_agree_with_qemu() -> Result<(), Failed> {
    let lib = lib();
    let instrs: Vec<&misaal_isa::Instr> = lib.iter().map(|(i, _)| i.as_ref()).collect();
    let q = HvxQemu::new(&instrs)?;
    let cfg = DiffConfig::default();
    q.prefetch(&instrs, &cfg, 2);
    let table = StatusTable::load(&StatusTable::path_for(&misaal_isa::bundled_spec_dir("hvx"))).map_err(|d| d.to_string())?;
    let (mut ok, mut bad) = (0, Vec::new());
    for (i, sem) in lib.iter() {
        match check_against(&q, i, sem, &cfg) {
            Verdict::Agreed { cases } if cases >= 1000 => ok += 1,
            v => bad.push(format!("{}: {v:?}", i.name)),
        }
        // The committed table must be current: checked with this very semantics.
        match table.rows.get(&i.name) {
            Some(r) if r.status == SpecStatus::Emulator && r.digest == misaal_isa::status::digest(sem) => {}
            r => bad.push(format!("{}: STATUS.tsv row {r:?} is not a current `emulator` row; run `misaal isa check --target hvx`", i.name)),
        }
    }
    eprintln!("{ok} HVX specs agree with qemu-hexagon");
    if bad.is_empty() { Ok(()) } else { Err(format!("{} problem(s):\n{}", bad.len(), bad.join("\n")).into()) }
}

/// Specs whose mutants must each be caught by qemu, or proved harmless by
/// Z3: a saturating add, a widening multiply into a pair, a compare into a
/// predicate, a narrowing shift by a scalar, a sliding reduction with an
/// immediate, and a predicated select.
const MUTATED: &[&str] = &["Q6_Vh_vadd_VhVh_sat", "Q6_Wh_vmpy_VubRb", "Q6_Q_vcmp_gt_VuhVuh", "Q6_Vub_vasr_VhVhR_rnd_sat", "Q6_Ww_vrmpy_WubRbI", "Q6_V_vmux_QVV"];
/// Mutation sites tried per spec and kind, spread over the lanes: a
/// 128-lane spec has hundreds, and each costs a qemu process.
const SITES: usize = 6;

fn mutants_are_caught_by_qemu() -> Result<(), Failed> {
    let lib = lib();
    let instrs: Vec<&misaal_isa::Instr> = MUTATED.iter().map(|n| lib.instr(n).map(|i| i.as_ref()).ok_or(format!("no spec {n}"))).collect::<Result<_, _>>()?;
    let q = HvxQemu::new(&instrs)?;
    let cfg = DiffConfig { cases: 200, shrink_budget: 1, ..Default::default() };
    let (mut caught, mut total) = (0, 0);
    for name in MUTATED {
        let (i, sem) = lib.get(name).expect("listed");
        q.available(i).map_err(|e| e.to_string())?;
        for kind in MutationKind::ALL {
            let ms = mutants(sem, kind);
            let step = ms.len().div_ceil(SITES).max(1);
            for m in ms.iter().step_by(step) {
                total += 1;
                match check_against(&q, i, &m.semantics, &cfg) {
                    Verdict::Failed(_) => caught += 1,
                    Verdict::Agreed { .. } => match prove_equivalent(sem, &m.semantics, 20_000) {
                        Equivalence::Proved => {}
                        e => return Err(format!("{name}: mutant `{}` passed qemu and is not proved equivalent ({e:?})", m.description).into()),
                    },
                    v => return Err(format!("{name}: {v:?}").into()),
                }
            }
        }
    }
    eprintln!("{caught} of {total} mutants caught by qemu-hexagon; the rest proved equivalent");
    if caught == 0 { Err("no mutant was caught".into()) } else { Ok(()) }
}

/// A hand-written wrong spec (a rounding average without its rounding, into
/// the hi half of a pair) fails with a shrunk counterexample naming lanes.
fn a_wrong_spec_is_caught() -> Result<(), Failed> {
    let src = "instr Q6_Vub_vavg_VubVub_rnd(vu: bv1024, vv: bv1024) -> bv1024 [hvx hvxv60 vavg]\nFOR i := 0 to 127\n    dst[i*8+7:i*8] := Truncate8((ZeroExtend9(vu[i*8+7:i*8]) + ZeroExtend9(vv[i*8+7:i*8])) >>u 1)\nENDFOR\n";
    let lib = SpecLibrary::from_sources(&[("wrong.sema".into(), src.into())]).map_err(|d| d.to_string())?;
    let (i, sem) = lib.get("Q6_Vub_vavg_VubVub_rnd").expect("parsed");
    let q = HvxQemu::new(&[i.as_ref()])?;
    match check_against(&q, i, sem, &DiffConfig::default()) {
        Verdict::Failed(cx) if !cx.lanes.is_empty() => Ok(()),
        v => Err(format!("the wrong spec was not caught: {v:?}").into()),
    }
}

/// A spec whose register forms contradict the header (a pair declared where
/// the intrinsic takes one vector) is refused by the harness, not run.
fn a_form_mismatch_is_refused() -> Result<(), Failed> {
    let src = "instr Q6_Vb_vadd_VbVb(vu: pair1024, vv: bv1024) -> bv1024 [hvx hvxv60 vadd]\ndst := vu.lo + vv\n";
    let lib = SpecLibrary::from_sources(&[("forms.sema".into(), src.into())]).map_err(|d| d.to_string())?;
    let (i, sem) = lib.get("Q6_Vb_vadd_VbVb").expect("parsed");
    let q = HvxQemu::new(&[i.as_ref()])?;
    match check_against(&q, i, sem, &DiffConfig::default()) {
        Verdict::OracleFailed(why) if why.contains("pair1024") => Ok(()),
        v => Err(format!("the mismatched spec was not refused: {v:?}").into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let missing = HvxQemu::new(&[]).err();
    let qemu = |name: &str, f: fn() -> Result<(), Failed>| match &missing {
        None => Trial::test(name, f),
        Some(why) => {
            eprintln!("SKIPPED {name}: {why}");
            Trial::test(format!("{name} (skipped: {why})"), f).with_ignored_flag(true)
        }
    };
    let trials = vec![
        Trial::test("hvx_specs_parse_with_costs_and_versions", specs_parse_with_costs_and_versions),
        qemu("hvx_specs_agree_with_qemu", all_agree_with_qemu),
        qemu("hvx_mutants_are_caught_by_qemu", mutants_are_caught_by_qemu),
        qemu("hvx_wrong_spec_is_caught_by_qemu", a_wrong_spec_is_caught),
        qemu("hvx_form_mismatch_is_refused", a_form_mismatch_is_refused),
    ];
    libtest_mimic::run(&args, trials).exit();
}
