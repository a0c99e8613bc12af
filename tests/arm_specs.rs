//! The ARM NEON specs (`isa/specs/arm/`): they parse, carry a cost with its
//! source and a known feature, agree with qemu-aarch64 on every case, match
//! the committed evidence (`evidence/`), and qemu catches wrong specs (every spec's
//! mutants). Also the ARM bench's ground truth: Halide's own ARM objects for
//! a few kernels run under qemu bit-exact against the reference interpreter
//! (`arm_support/halide.rs`).
//!
//! Without the cross compiler, qemu or (for the Halide trial) Halide's
//! Python bindings a trial is reported as ignored (skipped), with a message
//! naming what is missing: never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_isa::{SpecLibrary, SpecStatus, StatusTable};
use misaal_verifier::mutation::{MutationKind, mutants, prove_equivalent_in_range};
use misaal_verifier::smt::{Equivalence, prove_equivalent};
use misaal_verifier::differential::uniform_edge_cases;
use misaal_verifier::{ArmQemu, DiffConfig, Oracle, Verdict, cases_for, check_against};
use std::collections::BTreeMap;

fn lib() -> SpecLibrary {
    SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("arm")).unwrap_or_else(|d| panic!("{d}"))
}

fn specs_parse_with_costs_and_features() -> Result<(), Failed> {
    let lib = lib();
    if lib.len() < 2000 {
        return Err(format!("only {} ARM specs", lib.len()).into());
    }
    for (i, _) in lib.iter() {
        if i.target != "arm" {
            return Err(format!("{} has target {}", i.name, i.target).into());
        }
        if !i.features.iter().all(|f| ["neon", "dotprod", "i8mm", "rdm"].contains(&f.as_str())) {
            return Err(format!("{} has features {:?}", i.name, i.features).into());
        }
        if !i.cost.as_ref().is_some_and(|c| c.source.contains("Cortex-A76") || c.source.contains("llvm-mca")) {
            return Err(format!("{} has no cost from a named guide or model", i.name).into());
        }
    }
    Ok(())
}

fn all_agree_with_qemu() -> Result<(), Failed> {
    let lib = lib();
    let instrs: Vec<&misaal_isa::Instr> = lib.iter().map(|(i, _)| i.as_ref()).collect();
    let q = ArmQemu::new(&instrs)?;
    let cfg = DiffConfig::default();
    q.prefetch(&instrs, &cfg, 2);
    let table = StatusTable::for_spec_dir(&misaal_isa::bundled_spec_dir("arm")).map_err(|d| d.to_string())?;
    let (mut ok, mut bad) = (0, Vec::new());
    for (i, sem) in lib.iter() {
        match check_against(&q, i, sem, &cfg) {
            Verdict::Agreed { cases } if cases >= 1000 => ok += 1,
            v => bad.push(format!("{}: {v:?}", i.name)),
        }
        // The committed table must be current: checked with this very semantics.
        match table.rows.get(&i.name) {
            Some(r) if r.status == SpecStatus::Emulator && r.digest == misaal_isa::status::digest(sem) => {}
            r => bad.push(format!("{}: derived row {r:?} is not a current `emulator` row (isa/specs/arm/evidence/); run `misaal isa check --target arm`", i.name)),
        }
    }
    eprintln!("{ok} ARM specs agree with qemu");
    if bad.is_empty() { Ok(()) } else { Err(format!("{} problem(s):\n{}", bad.len(), bad.join("\n")).into()) }
}

/// Specs whose mutants must each be caught by qemu, or proved harmless by Z3.
const MUTATED: &[&str] = &["vqadd_s8", "vaddl_high_s8", "vraddhn_s32", "vhsub_u8"];

fn mutants_are_caught_by_qemu() -> Result<(), Failed> {
    let lib = lib();
    let instrs: Vec<&misaal_isa::Instr> = MUTATED.iter().map(|n| lib.instr(n).map(|i| i.as_ref()).ok_or(format!("no spec {n}"))).collect::<Result<_, _>>()?;
    let q = ArmQemu::new(&instrs)?;
    // Little shrinking: each shrink step is another qemu process.
    let cfg = DiffConfig { cases: 300, shrink_budget: 1, ..Default::default() };
    let (mut caught, mut total) = (0, 0);
    for name in MUTATED {
        let (i, sem) = lib.get(name).expect("listed");
        q.available(i).map_err(|e| e.to_string())?;
        for kind in MutationKind::ALL {
            for m in mutants(sem, kind) {
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
    eprintln!("{caught} of {total} mutants caught by qemu; the rest proved equivalent");
    if caught == 0 { Err("no mutant was caught".into()) } else { Ok(()) }
}

/// Every ARM spec, each mutation kind, one site per kind (picked per spec,
/// as the x86 mutation test does): the mutant must disagree with qemu on
/// one of the cases `misaal isa check` runs, or Z3 must prove it equal to
/// the spec. The qemu results come from one prefetch; a mutant is judged on
/// them directly, since `check_against` would start a qemu process per
/// caught mutant to re-run its counterexample. `MISAAL_MUTATION_SITES=all`
/// tries every site; `MISAAL_MUTATION_FILTER=vqadd` keeps matching names.
/// By default every other spec (in library order) is mutated;
/// `MISAAL_SLOW=1` mutates every one.
fn every_spec_mutant_is_caught_or_proved() -> Result<(), Failed> {
    let t0 = std::time::Instant::now();
    let lib = lib();
    let all_sites = std::env::var("MISAAL_MUTATION_SITES").is_ok_and(|v| v == "all");
    let only = std::env::var("MISAAL_MUTATION_FILTER").unwrap_or_default();
    let sampled = |k: usize, name: &str| (slow() || k % 2 == 0) && name.contains(only.as_str());
    let instrs: Vec<&misaal_isa::Instr> = lib.iter().enumerate().filter(|(k, (i, _))| sampled(*k, &i.name)).map(|(_, (i, _))| i.as_ref()).collect();
    let q = ArmQemu::new(&instrs)?;
    let cfg = DiffConfig::default();
    let procs = std::thread::available_parallelism().map_or(2, |n| n.get());
    q.prefetch(&instrs, &cfg, procs);
    // And the uniform edge cases, which the random ones rarely reach in the
    // one lane a mutation touches.
    let edge_jobs: Vec<(&misaal_isa::Instr, Vec<Vec<misaal_isa::BitVec>>)> = instrs.iter().map(|i| (*i, uniform_edge_cases(i))).collect();
    let edge_results = q.run_many(&edge_jobs, procs);
    let t_qemu = t0.elapsed();
    let mut z3_time = std::time::Duration::ZERO;
    let mut caught: BTreeMap<MutationKind, usize> = BTreeMap::new();
    let mut equivalent: BTreeMap<MutationKind, usize> = BTreeMap::new();
    let mut escaped = Vec::new();
    for (k, (i, sem)) in lib.iter().enumerate().filter(|(k, (i, _))| sampled(*k, &i.name)) {
        let mut cases = cases_for(i, &cfg);
        let mut results = q.run_batch(i, &cases).map_err(|e| format!("{}: {e}", i.name))?;
        cases.extend(uniform_edge_cases(i));
        results.extend(edge_results.get(&i.name).cloned().unwrap_or_else(|| Err("not run".into())).map_err(|e| format!("{} (edge cases): {e}", i.name))?);
        // The spec itself must agree, or every mutant would be "caught".
        if cases.iter().zip(&results).any(|(c, r)| sem.eval(c).map(|v| v != *r).unwrap_or(true)) {
            return Err(format!("{} disagrees with qemu before any mutation", i.name).into());
        }
        for kind in MutationKind::ALL {
            let ms = mutants(sem, kind);
            if ms.is_empty() {
                continue;
            }
            let picked: Vec<_> = if all_sites { ms } else { vec![ms[(k * 7919 + kind as usize * 104_729) % ms.len()].clone()] };
            for m in picked {
                if cases.iter().zip(&results).any(|(c, r)| m.semantics.eval(c).map(|v| v != *r).unwrap_or(true)) {
                    *caught.entry(kind).or_default() += 1;
                    continue;
                }
                let t = std::time::Instant::now();
                // Only immediates a program can pass count: a mutant may
                // differ past `vshrn_n_u64`'s 32-bit shift limit.
                let verdict = prove_equivalent_in_range(i, sem, &m.semantics, 20_000);
                z3_time += t.elapsed();
                if t.elapsed().as_secs() >= 2 {
                    eprintln!("slow proof ({:.1} s): {} {}", t.elapsed().as_secs_f64(), i.name, m.description);
                }
                match verdict {
                    Equivalence::Proved => *equivalent.entry(kind).or_default() += 1,
                    e => escaped.push(format!("{} ({kind:?}): {} agreed with qemu on {} cases and is not proved equivalent ({e:?})", i.name, m.description, cases.len())),
                }
            }
        }
    }
    for kind in MutationKind::ALL {
        eprintln!("{kind:?}: {} caught by qemu, {} proven equivalent by Z3", caught.get(&kind).unwrap_or(&0), equivalent.get(&kind).unwrap_or(&0));
    }
    eprintln!(
        "{} ARM specs mutated in {:.1} s (qemu and harness {:.1} s, Z3 {:.1} s)",
        instrs.len(),
        t0.elapsed().as_secs_f64(),
        t_qemu.as_secs_f64(),
        z3_time.as_secs_f64()
    );
    if !escaped.is_empty() {
        return Err(format!("{} mutant(s) escaped qemu:\n{}", escaped.len(), escaped.join("\n")).into());
    }
    // A filtered run may hold no site of some kind.
    for kind in MutationKind::ALL.iter().filter(|_| only.is_empty()) {
        if caught.get(kind).copied().unwrap_or(0) == 0 {
            return Err(format!("no {kind:?} mutant was exercised").into());
        }
    }
    Ok(())
}

/// A hand-written wrong spec (rounding halving add without its rounding)
/// fails with a shrunk counterexample naming its file and line.
fn a_wrong_spec_is_caught() -> Result<(), Failed> {
    let src = "instr vrhadd_u8(a: bv64, b: bv64) -> bv64 [arm neon urhadd]\nFOR j := 0 to 7\n    dst[j*8+7:j*8] := Truncate8((ZeroExtend9(a[j*8+7:j*8]) + ZeroExtend9(b[j*8+7:j*8])) >>u 1)\nENDFOR\n";
    let lib = SpecLibrary::from_sources(&[("wrong.sema".into(), src.into())]).map_err(|d| d.to_string())?;
    let (i, sem) = lib.get("vrhadd_u8").expect("parsed");
    let q = ArmQemu::new(&[i.as_ref()])?;
    match check_against(&q, i, sem, &DiffConfig::default()) {
        Verdict::Failed(cx) if !cx.lanes.is_empty() => Ok(()),
        v => Err(format!("the wrong spec was not caught: {v:?}").into()),
    }
}

/// The Halide trial's support code (`tests/arm_support/`).
mod arm_support {
    pub mod halide;
}
use arm_support::halide;

/// Kernels whose Halide ARM object is checked against the interpreter by
/// default: two, since the interpreter takes seconds to half a minute a
/// kernel (average_pool, the slowest of the former three, and the rest
/// run with `MISAAL_SLOW=1`).
const HALIDE_KERNELS: &[&str] = &["add", "sobel3x3"];

/// `MISAAL_SLOW=1` (or `MISAAL_KERNELS=all`) checks every kernel,
/// `MISAAL_KERNELS=add,mul` those listed.
fn halide_arm_objects_match_interpreter() -> Result<(), Failed> {
    let all: Vec<String> = halide::ALL_KERNELS.iter().map(|s| s.to_string()).collect();
    let chosen = misaal_testkit::kernels(HALIDE_KERNELS, &all);
    let chosen: Vec<&str> = chosen.iter().map(String::as_str).collect();
    let report = halide::check(&chosen)?;
    eprintln!("{report}");
    Ok(())
}

use misaal_testkit::slow;

fn main() {
    let args = Arguments::from_args();
    let missing = misaal_oracle_tools_missing();
    let qemu = |name: &str, f: fn() -> Result<(), Failed>| match &missing {
        None => Trial::test(name, f),
        Some(why) => {
            eprintln!("SKIPPED {name}: {why}");
            Trial::test(format!("{name} (skipped: {why})"), f).with_ignored_flag(true)
        }
    };
    let trials = vec![
        Trial::test("arm_specs_parse_with_costs_and_features", specs_parse_with_costs_and_features),
        qemu("arm_specs_agree_with_qemu", all_agree_with_qemu),
        qemu("arm_mutants_are_caught_by_qemu", mutants_are_caught_by_qemu),
        qemu("arm_every_spec_mutant_is_caught_or_proved", every_spec_mutant_is_caught_or_proved),
        qemu("arm_wrong_spec_is_caught_by_qemu", a_wrong_spec_is_caught),
    ];
    let mut trials = trials;
    // Halide's objects need Halide's Python bindings besides the cross tools.
    let name = "arm_halide_objects_match_interpreter_under_qemu";
    trials.push(match halide::missing() {
        None => Trial::test(name, halide_arm_objects_match_interpreter),
        Some(why) => {
            eprintln!("SKIPPED {name}: {why}");
            Trial::test(format!("{name} (skipped: {why})"), halide_arm_objects_match_interpreter).with_ignored_flag(true)
        }
    });
    libtest_mimic::run(&args, trials).exit();
}

/// `Some(message naming the missing tool)` when the qemu trials cannot run.
fn misaal_oracle_tools_missing() -> Option<String> {
    ArmQemu::new(&[]).err()
}
