//! The checks an emulated target's specs must pass, one implementation for
//! every target: the ARM and HVX spec tests (`tests/arm_specs.rs`,
//! `verifier/tests/hvx_specs.rs`) run them against their emulator. Each
//! returns `Err(what went wrong)` for the test to fail with, and an error
//! from [`Emulated::new`] names a missing tool. [`standard_checks`] lists
//! the trials both tests run, so their lists cannot drift apart.

use crate::differential::{DiffConfig, Verdict, cases_for, check_against, uniform_edge_cases};
use crate::emulated::{Emulated, EmulatedTarget};
use crate::mutation::{MutationKind, MutationSampling, MutationTally, mutants, prove_equivalent_in_range, sampled_sites, mutant_at};
use crate::oracle::Oracle;
use crate::smt::{Equivalence, prove_equivalent};
use misaal_isa::{BitVec, Instr, Semantics, SpecLibrary, SpecStatus, StatusTable};
use rayon::prelude::*;

/// The bundled specs of `T`'s target.
pub fn library<T: EmulatedTarget>() -> SpecLibrary {
    SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir(T::ORACLE.name)).unwrap_or_else(|d| panic!("{d}"))
}

/// What `T`'s emulated checks need and this machine lacks (the emulator,
/// the cross compiler), as the harness's set-up reports it; None when all
/// is there. The checks are skipped, naming it.
pub fn missing_tools<T: EmulatedTarget>() -> Option<String> {
    Emulated::<T>::new(&[]).err()
}

/// [`library`], checked to hold at least `min` specs, every one with
/// `T`'s target in its header; Err(the count, or the first spec with
/// another target) otherwise. Each test goes on to its target's own checks.
pub fn library_of_target<T: EmulatedTarget>(min: usize) -> Result<SpecLibrary, String> {
    let (lib, target) = (library::<T>(), T::ORACLE.name);
    if lib.len() < min {
        return Err(format!("only {} {} specs", lib.len(), target.to_uppercase()));
    }
    if let Some((i, _)) = lib.iter().find(|(i, _)| i.target != target) {
        return Err(format!("{} has target {}", i.name, i.target));
    }
    Ok(lib)
}

/// Every spec agrees with the emulator on at least 1000 cases, and the
/// committed status table has a current `emulator` row for it (derived
/// from this very semantics). Ok(how many agreed).
pub fn all_agree_and_rows_are_current<T: EmulatedTarget>(lib: &SpecLibrary) -> Result<usize, String> {
    let target = T::ORACLE.name;
    let instrs: Vec<&Instr> = lib.iter().map(|(i, _)| i.as_ref()).collect();
    let q = Emulated::<T>::new(&instrs)?;
    let cfg = DiffConfig::default();
    q.prefetch(&instrs, &cfg, 2);
    let table = StatusTable::for_spec_dir(&misaal_isa::bundled_spec_dir(target)).map_err(|d| d.to_string())?;
    let (mut ok, mut bad) = (0, Vec::new());
    for (i, sem) in lib.iter() {
        match check_against(&q, i, sem, &cfg) {
            Verdict::Agreed { cases } if cases >= 1000 => ok += 1,
            v => bad.push(format!("{}: {v:?}", i.name)),
        }
        match table.rows.get(&i.name) {
            Some(r) if r.status == SpecStatus::Emulator && r.digest == misaal_isa::status::digest(sem) => {}
            r => bad.push(format!("{}: derived row {r:?} is not a current `emulator` row (isa/specs/{target}/evidence/); run `misaal isa check --target {target}`", i.name)),
        }
    }
    if bad.is_empty() { Ok(ok) } else { Err(format!("{} problem(s):\n{}", bad.len(), bad.join("\n"))) }
}

/// Each of the `listed` specs' mutants (at most `sites` a kind, spread
/// over the lanes: each costs an emulator process) is caught by the
/// emulator, or proved equal to the spec by Z3. Ok((caught, tried)).
pub fn listed_mutants_are_caught<T: EmulatedTarget>(lib: &SpecLibrary, listed: &[&str], cfg: &DiffConfig, sites: usize) -> Result<(usize, usize), String> {
    let instrs: Vec<&Instr> = listed.iter().map(|n| lib.instr(n).map(|i| i.as_ref()).ok_or(format!("no spec {n}"))).collect::<Result<_, _>>()?;
    let q = Emulated::<T>::new(&instrs)?;
    let (mut caught, mut total) = (0, 0);
    for name in listed {
        let (i, sem) = lib.get(name).expect("listed");
        q.available(i).map_err(|e| e.to_string())?;
        for kind in MutationKind::ALL {
            let ms = mutants(sem, kind);
            let step = ms.len().div_ceil(sites).max(1);
            for m in ms.iter().step_by(step) {
                total += 1;
                match check_against(&q, i, &m.semantics, cfg) {
                    Verdict::Failed(_) => caught += 1,
                    Verdict::Agreed { .. } => match prove_equivalent(sem, &m.semantics, 20_000) {
                        Equivalence::Proved => {}
                        e => return Err(format!("{name}: mutant `{}` passed the emulator and is not proved equivalent ({e:?})", m.description)),
                    },
                    v => return Err(format!("{name}: {v:?}")),
                }
            }
        }
    }
    if caught == 0 { Err("no mutant was caught".into()) } else { Ok((caught, total)) }
}

/// Every spec `keep` (index in the library, name) selects, each mutation
/// kind, the sites `sampling` picks: the mutant must disagree with the
/// emulator on the cases `misaal isa check` runs or on the uniform edge
/// cases (which the random ones rarely reach in the one lane a mutation
/// touches), or Z3 must prove it equal to the spec. Each spec's cases are
/// generated once and run in one emulator process per core up front (for
/// wide vectors generating costs more than running), and a mutant is
/// judged on those results: re-running a caught mutant's counterexample,
/// as `check_against` would, costs a process each.
pub fn every_mutant_is_caught_or_proved<T: EmulatedTarget>(lib: &SpecLibrary, sampling: &MutationSampling, keep: impl Fn(usize, &str) -> bool) -> Result<MutationTally, String> {
    let t0 = std::time::Instant::now();
    let specs: Vec<(usize, &Instr, &Semantics)> = lib.iter().enumerate().filter(|(k, (i, _))| keep(*k, &i.name) && sampling.keeps(&i.name)).map(|(k, (i, s))| (k, i.as_ref(), s.as_ref())).collect();
    let instrs: Vec<&Instr> = specs.iter().map(|s| s.1).collect();
    let q = Emulated::<T>::new(&instrs)?;
    let cfg = DiffConfig::default();
    let cases: Vec<Vec<Vec<BitVec>>> = specs
        .par_iter()
        .map(|(_, i, _)| {
            let mut c = cases_for(i, &cfg);
            c.extend(uniform_edge_cases(i));
            c
        })
        .collect();
    let t_gen = t0.elapsed();
    let procs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = specs.len().div_ceil(procs).max(1);
    let idx: Vec<usize> = (0..specs.len()).collect();
    let results: Vec<Vec<BitVec>> = idx
        .par_chunks(chunk)
        .map(|part| {
            let jobs: Vec<(&str, &[Vec<BitVec>])> = part.iter().map(|&k| (specs[k].1.name.as_str(), cases[k].as_slice())).collect();
            q.harness.run(&jobs)
        })
        .collect::<Result<Vec<_>, String>>()?
        .into_iter()
        .flatten()
        .collect();
    let t_run = t0.elapsed() - t_gen;
    let outcomes: Vec<Result<MutationTally, String>> = specs
        .par_iter()
        .with_max_len(1)
        .enumerate()
        .map(|(n, &(k, i, sem))| {
            let (cases, results) = (&cases[n], &results[n]);
            let disagrees = |s: &Semantics| cases.iter().zip(results).any(|(c, r)| s.eval(c).map(|v| v != *r).unwrap_or(true));
            // The spec itself must agree, or every mutant would be "caught".
            if disagrees(sem) {
                return Err(format!("{} disagrees with the emulator before any mutation", i.name));
            }
            let mut tally = MutationTally::default();
            for kind in MutationKind::ALL {
                for m in sampled_sites(sem, kind, k, sampling.all_sites).into_iter().filter_map(|id| mutant_at(sem, id, kind)) {
                    if disagrees(&m.semantics) {
                        tally.caught(kind);
                        continue;
                    }
                    // Only immediates a program can pass count: a mutant may
                    // differ past `vshrn_n_u64`'s 32-bit shift limit.
                    match prove_equivalent_in_range(i, sem, &m.semantics, 20_000) {
                        Equivalence::Proved => tally.proved(kind),
                        e => tally.escaped.push(format!("{} ({kind:?}): {} agreed with the emulator on {} cases and is not proved equivalent ({e:?})", i.name, m.description, cases.len())),
                    }
                }
            }
            Ok(tally)
        })
        .collect();
    let mut tally = MutationTally::default();
    for o in outcomes {
        tally.add(o?);
    }
    eprintln!(
        "{} {} specs mutated in {:.1} s (cases {:.1} s, emulator {:.1} s, mutants and Z3 {:.1} s)",
        specs.len(),
        T::ORACLE.name,
        t0.elapsed().as_secs_f64(),
        t_gen.as_secs_f64(),
        t_run.as_secs_f64(),
        (t0.elapsed() - t_gen - t_run).as_secs_f64()
    );
    Ok(tally)
}

/// A hand-written spec `src` (one instruction, `name`): what checking it
/// against the emulator says.
pub fn verdict_on<T: EmulatedTarget>(src: &str, name: &str) -> Result<Verdict, String> {
    let lib = SpecLibrary::from_sources(&[("hand-written.sema".into(), src.into())]).map_err(|d| d.to_string())?;
    let (i, sem) = lib.get(name).ok_or(format!("no spec {name} in the source"))?;
    let q = Emulated::<T>::new(&[i.as_ref()])?;
    Ok(check_against(&q, i, sem, &DiffConfig::default()))
}

/// Where targets' standard checks ([`standard_checks`]) differ.
#[derive(Clone, Copy)]
pub struct StandardChecks {
    /// The emulator as messages name it (`qemu`, `qemu-hexagon`).
    pub emulator: &'static str,
    /// Specs whose mutants must each be caught by the emulator, or proved
    /// harmless by Z3 ([`listed_mutants_are_caught`]).
    pub mutated: &'static [&'static str],
    /// The cases each listed mutant is checked on (shrinking little: each
    /// shrink step is another emulator process).
    pub mutated_cases: usize,
    /// Mutation sites tried per listed spec and kind.
    pub mutated_sites: usize,
    /// Which specs (index in the library, name) the every-spec mutation
    /// check mutates ([`every_mutant_is_caught_or_proved`]).
    pub every_spec_keeps: fn(usize, &str) -> bool,
    /// A hand-written wrong spec, one instruction, and that instruction's
    /// name: the emulator must refute it with a counterexample naming lanes.
    pub wrong_spec: &'static str,
    pub wrong_spec_name: &'static str,
}

/// A check of [`standard_checks`]: Err(what went wrong).
pub type Check = Box<dyn FnOnce() -> Result<(), String> + Send>;

/// The checks every emulated target's spec test runs, each with its trial's
/// name (`<target>_...`, e.g. `arm_specs_agree_with_qemu`), in order: every
/// spec agrees with the emulator; the listed specs' mutants are caught;
/// every spec's mutants are caught or proved (`MISAAL_MUTATION_SITES=all`
/// tries every site, `MISAAL_MUTATION_FILTER=name` keeps matching specs);
/// the wrong spec is caught.
pub fn standard_checks<T: EmulatedTarget + 'static>(c: StandardChecks) -> Vec<(String, Check)> {
    let target = T::ORACLE.name;
    let checks: [(&str, Check); 4] = [
        (
            "specs_agree_with_qemu",
            Box::new(move || {
                let ok = all_agree_and_rows_are_current::<T>(&library::<T>())?;
                eprintln!("{ok} {} specs agree with {}", target.to_uppercase(), c.emulator);
                Ok(())
            }),
        ),
        (
            "mutants_are_caught_by_qemu",
            Box::new(move || {
                let cfg = DiffConfig { cases: c.mutated_cases, shrink_budget: 1, ..Default::default() };
                let (caught, total) = listed_mutants_are_caught::<T>(&library::<T>(), c.mutated, &cfg, c.mutated_sites)?;
                eprintln!("{caught} of {total} mutants caught by {}; the rest proved equivalent", c.emulator);
                Ok(())
            }),
        ),
        (
            "every_spec_mutant_is_caught_or_proved",
            Box::new(move || {
                let sampling = MutationSampling::from_env();
                let tally = every_mutant_is_caught_or_proved::<T>(&library::<T>(), &sampling, c.every_spec_keeps)?;
                tally.verdict(c.emulator, &sampling)
            }),
        ),
        (
            "wrong_spec_is_caught_by_qemu",
            Box::new(move || match verdict_on::<T>(c.wrong_spec, c.wrong_spec_name)? {
                Verdict::Failed(cx) if !cx.lanes.is_empty() => Ok(()),
                v => Err(format!("the wrong spec was not caught: {v:?}")),
            }),
        ),
    ];
    checks.into_iter().map(|(name, check)| (format!("{target}_{name}"), check)).collect()
}
