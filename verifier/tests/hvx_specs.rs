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
use misaal_isa::{SpecLibrary, SpecStatus, StatusTable};
use misaal_verifier::mutation::{MutationKind, mutant_at, mutant_sites, mutants, prove_equivalent_in_range};
use misaal_verifier::differential::uniform_edge_cases;
use misaal_verifier::smt::{Equivalence, prove_equivalent};
use misaal_verifier::{DiffConfig, HvxQemu, Oracle, Verdict, cases_for, check_against};
use rayon::prelude::*;
use std::collections::BTreeMap;

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
    let table = StatusTable::for_spec_dir(&misaal_isa::bundled_spec_dir("hvx")).map_err(|d| d.to_string())?;
    let (mut ok, mut bad) = (0, Vec::new());
    for (i, sem) in lib.iter() {
        match check_against(&q, i, sem, &cfg) {
            Verdict::Agreed { cases } if cases >= 1000 => ok += 1,
            v => bad.push(format!("{}: {v:?}", i.name)),
        }
        // The committed table must be current: checked with this very semantics.
        match table.rows.get(&i.name) {
            Some(r) if r.status == SpecStatus::Emulator && r.digest == misaal_isa::status::digest(sem) => {}
            r => bad.push(format!("{}: derived row {r:?} is not a current `emulator` row (isa/specs/hvx/evidence/); run `misaal isa check --target hvx`", i.name)),
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

/// A tried mutant: its kind, whether qemu caught it, and if not and Z3 did
/// not prove it equal either, why it escaped.
type Outcome = (MutationKind, bool, Option<String>);

/// Every HVX spec, each mutation kind, one site per kind (picked per spec,
/// as the ARM and x86 mutation tests do): the mutant must disagree with
/// qemu-hexagon on one of the cases `misaal isa check` runs or on the
/// uniform edge cases, or Z3 must prove it equal to the spec. Each spec's
/// cases are generated once and run in a few qemu processes up front (for
/// 1024-bit operands generating cases costs more than running them), and a
/// mutant is judged on those results. `MISAAL_MUTATION_SITES=all` tries
/// every site; `MISAAL_MUTATION_FILTER=vadd` keeps matching names.
fn every_spec_mutant_is_caught_or_proved() -> Result<(), Failed> {
    let t0 = std::time::Instant::now();
    let lib = lib();
    let all_sites = std::env::var("MISAAL_MUTATION_SITES").is_ok_and(|v| v == "all");
    let only = std::env::var("MISAAL_MUTATION_FILTER").unwrap_or_default();
    let specs: Vec<(usize, &misaal_isa::Instr, &misaal_isa::Semantics)> =
        lib.iter().enumerate().filter(|(_, (i, _))| i.name.contains(only.as_str())).map(|(k, (i, s))| (k, i.as_ref(), s.as_ref())).collect();
    let instrs: Vec<&misaal_isa::Instr> = specs.iter().map(|s| s.1).collect();
    let q = HvxQemu::new(&instrs)?;
    let cfg = DiffConfig::default();
    let cases: Vec<Vec<Vec<misaal_isa::BitVec>>> = specs
        .par_iter()
        .map(|(_, i, _)| {
            let mut c = cases_for(i, &cfg);
            c.extend(uniform_edge_cases(i));
            c
        })
        .collect();
    let t_gen = t0.elapsed();
    // A few qemu processes, one per core, each running its share of specs.
    let procs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = specs.len().div_ceil(procs).max(1);
    let idx: Vec<usize> = (0..specs.len()).collect();
    let results: Vec<Vec<misaal_isa::BitVec>> = idx
        .par_chunks(chunk)
        .map(|part| {
            let jobs: Vec<(&str, &[Vec<misaal_isa::BitVec>])> = part.iter().map(|&k| (specs[k].1.name.as_str(), cases[k].as_slice())).collect();
            q.harness.run(&jobs)
        })
        .collect::<Result<Vec<_>, String>>()?
        .into_iter()
        .flatten()
        .collect();
    let t_qemu = t0.elapsed() - t_gen;
    let outcomes: Vec<Result<Vec<Outcome>, String>> = specs
        .par_iter()
        .with_max_len(1)
        .enumerate()
        .map(|(n, &(k, i, sem))| {
            let (cases, results) = (&cases[n], &results[n]);
            // The spec itself must agree, or every mutant would be "caught".
            if cases.iter().zip(results).any(|(c, r)| sem.eval(c).map(|v| v != *r).unwrap_or(true)) {
                return Err(format!("{} disagrees with qemu before any mutation", i.name));
            }
            let mut out = Vec::new();
            for kind in MutationKind::ALL {
                let sites = mutant_sites(sem, kind);
                if sites.is_empty() {
                    continue;
                }
                let picked: Vec<_> = if all_sites { sites } else { vec![sites[(k * 7919 + kind as usize * 104_729) % sites.len()]] };
                for m in picked.into_iter().filter_map(|id| mutant_at(sem, id, kind)) {
                    if cases.iter().zip(results).any(|(c, r)| m.semantics.eval(c).map(|v| v != *r).unwrap_or(true)) {
                        out.push((kind, true, None));
                        continue;
                    }
                    let escaped = match prove_equivalent_in_range(i, sem, &m.semantics, 20_000) {
                        Equivalence::Proved => None,
                        e => Some(format!("{} ({kind:?}): {} agreed with qemu on {} cases and is not proved equivalent ({e:?})", i.name, m.description, cases.len())),
                    };
                    out.push((kind, false, escaped));
                }
            }
            Ok(out)
        })
        .collect();
    let (mut caught, mut proved): (BTreeMap<MutationKind, usize>, BTreeMap<MutationKind, usize>) = Default::default();
    let mut escaped = Vec::new();
    for o in outcomes {
        for (kind, by_qemu, esc) in o? {
            match (by_qemu, esc) {
                (true, _) => *caught.entry(kind).or_default() += 1,
                (false, None) => *proved.entry(kind).or_default() += 1,
                (false, Some(e)) => escaped.push(e),
            }
        }
    }
    for kind in MutationKind::ALL {
        eprintln!("{kind:?}: {} caught by qemu-hexagon, {} proven equivalent by Z3", caught.get(&kind).unwrap_or(&0), proved.get(&kind).unwrap_or(&0));
    }
    eprintln!(
        "{} HVX specs mutated in {:.1} s (cases {:.1} s, qemu {:.1} s, mutants and Z3 {:.1} s)",
        specs.len(),
        t0.elapsed().as_secs_f64(),
        t_gen.as_secs_f64(),
        t_qemu.as_secs_f64(),
        (t0.elapsed() - t_gen - t_qemu).as_secs_f64()
    );
    if !escaped.is_empty() {
        return Err(format!("{} mutant(s) escaped qemu-hexagon:\n{}", escaped.len(), escaped.join("\n")).into());
    }
    // A filtered run may hold no site of some kind.
    for kind in MutationKind::ALL.iter().filter(|_| only.is_empty()) {
        if caught.get(kind).copied().unwrap_or(0) == 0 {
            return Err(format!("no {kind:?} mutant was exercised").into());
        }
    }
    Ok(())
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
        qemu("hvx_every_spec_mutant_is_caught_or_proved", every_spec_mutant_is_caught_or_proved),
        qemu("hvx_wrong_spec_is_caught_by_qemu", a_wrong_spec_is_caught),
        qemu("hvx_form_mismatch_is_refused", a_form_mismatch_is_refused),
    ];
    libtest_mimic::run(&args, trials).exit();
}
