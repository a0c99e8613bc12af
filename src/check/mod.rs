//! `misaal isa check`: every spec against its oracle, then this machine's
//! evidence file.
//!
//! A spec that agreed on every case is `silicon`. One the CPU cannot run is
//! `proven-twin` when Z3 proves it equal to a spec verified by current
//! evidence (same mnemonic and operands, another encoding: the VEX AVX-VNNI
//! dot products against their EVEX AVX512-VNNI forms), and `skipped`
//! otherwise, which is no evidence and writes no row. The rows go to
//! `<specs>/evidence/<machine>.tsv` ([`misaal_isa::evidence`]), this
//! machine's file only: other machines' rows are never rewritten, so a run
//! on a CPU that lacks a feature cannot downgrade evidence taken elsewhere.
//! ARM specs run under qemu-aarch64 (`misaal_verifier::arm`) and HVX specs
//! under qemu-hexagon (`misaal_verifier::hexagon`, freestanding harnesses
//! built by clang 19), all cases of all specs batched up front; a spec that
//! agreed is `emulator`, and the "machine" is the emulator build.
//!
//! `--export DIR` writes this machine's current rows as a folder with a
//! README; `--import DIR` merges such folders, refusing stale rows
//! ([`exchange`]).

use crate::{SpecArgs, load};
use indicatif::{ProgressBar, ProgressStyle};
use misaal_isa::evidence::{self, EvidenceFile, EvidenceRow, Machine};
use misaal_isa::status::{SpecStatus, StatusTable};
use misaal_isa::{Instr, Semantics, SpecLibrary};
use misaal_reports::SemanticsRow;
use misaal_targets::{Harness, Oracle as OracleKind};
use misaal_verifier::oracle::{NoTools, Restricted};
use misaal_verifier::twin::find_twin;
use misaal_verifier::{ArmQemu, DiffConfig, HvxQemu, Oracle, Verdict, X86Silicon, check_against};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

mod exchange;
use exchange::{export_dir, import_dirs};

pub struct CheckArgs {
    pub family: Option<String>,
    pub filter: Option<String>,
    pub cfg: DiffConfig,
    pub out: Option<PathBuf>,
    pub jobs: Option<usize>,
    /// The evidence folder (default `<specs>/evidence`).
    pub evidence: Option<PathBuf>,
    /// x86: the only CPU features the oracle may use (comma-separated).
    pub cpu_features: Option<String>,
    pub export: Option<PathBuf>,
    pub import: Vec<PathBuf>,
}

/// One spec's result of a check: its report row and evidence.
struct Outcome {
    family: String,
    row: SemanticsRow,
    detail: Option<String>,
    status: misaal_isa::SpecStatus,
    /// The CPU, or the twin and its proof, or why it was skipped.
    evidence: String,
}

/// misaal's version and the git revision it was built from.
pub fn version() -> String {
    match option_env!("MISAAL_GIT_REV") {
        Some(rev) if !rev.is_empty() => format!("{} ({rev})", env!("CARGO_PKG_VERSION")),
        _ => env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// Today (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (y, m, d, ..) = misaal_bench::keep::civil(secs);
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn check(spec: &SpecArgs, args: CheckArgs) -> Result<ExitCode, String> {
    let CheckArgs { family, filter, cfg, out, jobs, evidence, cpu_features, export, import } = args;
    // The registry says which oracle checks the target's specs.
    let Some(oracle_kind) = misaal_targets::by_name(&spec.target).map(|d| d.oracle).filter(|o| *o != OracleKind::None) else {
        return Err(format!("error: no oracle for target `{}`; x86 is checked on silicon, arm and hvx under qemu", spec.target));
    };
    let harness = match oracle_kind {
        OracleKind::Emulator { harness, .. } => Some(harness),
        OracleKind::NativeCpu | OracleKind::None => None,
    };
    if cfg.cases == 0 {
        return Err("error: --cases must be at least 1: a spec is `silicon` only after agreeing with the CPU on cases that ran".into());
    }
    if cpu_features.is_some() && oracle_kind != OracleKind::NativeCpu {
        return Err("error: --cpu-features restricts the x86 oracle; arm and hvx run under qemu".into());
    }
    let lib = load(spec)?;
    let spec_dir = spec.specs.clone().unwrap_or_else(|| misaal_isa::bundled_spec_dir(&spec.target));
    let ev_dir = evidence.unwrap_or_else(|| evidence::evidence_dir(&spec_dir));
    if !import.is_empty() {
        if export.is_some() {
            return Err("error: --import merges evidence without running a check, and --export needs one: give them in two runs".into());
        }
        return import_dirs(&lib, &spec_dir, &ev_dir, &import);
    }
    let files = evidence::load_dir(&ev_dir).map_err(|d| d.to_string())?;
    let before = StatusTable::derive(&files, Some(&spec_dir));
    let todo: Vec<(&Arc<Instr>, &Arc<Semantics>)> = lib
        .iter()
        .filter(|(i, _)| family.as_ref().is_none_or(|f| &i.family == f))
        .filter(|(i, _)| filter.as_ref().is_none_or(|f| i.name.contains(f.as_str())))
        .collect();
    if todo.is_empty() {
        return Err("error: no spec matches the filters".into());
    }
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let started = Instant::now();
    // ARM: one harness for every spec, and all their cases run up front in
    // one qemu process per job; x86 runs each spec on this CPU.
    let arm = if harness == Some(Harness::AArch64Linux) {
        let instrs: Vec<&Instr> = todo.iter().map(|(i, _)| i.as_ref()).collect();
        let q = ArmQemu::new(&instrs).map_err(|e| format!("error: cannot check ARM specs: {e}"))?;
        q.prefetch(&instrs, &cfg, jobs);
        Some(q)
    } else {
        None
    };
    // HVX likewise: one freestanding harness, batched under qemu-hexagon.
    // Without its tools every spec is skipped with the reason, as specs a
    // CPU lacks the features for are; a harness that fails to build is an error.
    let hvx_missing = if harness == Some(Harness::HexagonFreestanding) { HvxQemu::tools().err().map(NoTools) } else { None };
    let hvx = if harness == Some(Harness::HexagonFreestanding) && hvx_missing.is_none() {
        let instrs: Vec<&Instr> = todo.iter().map(|(i, _)| i.as_ref()).collect();
        let q = HvxQemu::new(&instrs).map_err(|e| format!("error: cannot check HVX specs: {e}"))?;
        q.prefetch(&instrs, &cfg, jobs);
        Some(q)
    } else {
        None
    };
    // The machine whose evidence file this run writes; none when no oracle runs.
    let (oracle, agreed, machine): (&dyn Oracle, SpecStatus, Option<Machine>) = match (&arm, &hvx, &hvx_missing) {
        (Some(q), _, _) => (q, SpecStatus::Emulator, Some(Machine::emulator(&q.evidence))),
        (_, Some(q), _) => (q, SpecStatus::Emulator, Some(Machine::emulator(&q.evidence))),
        (_, _, Some(m)) => (m, SpecStatus::Emulator, None),
        _ => (&X86Silicon, SpecStatus::Silicon, Some(Machine::this_cpu())),
    };
    let restricted = cpu_features.as_deref().map(|f| Restricted::new(oracle, f));
    let oracle: &dyn Oracle = match &restricted {
        Some(r) => {
            println!("--cpu-features: the oracle may use only {}", r.allowed.iter().cloned().collect::<Vec<_>>().join(", "));
            r as &dyn Oracle
        }
        None => oracle,
    };
    let cpu = machine.as_ref().map(Machine::describe).unwrap_or_else(|| "no HVX toolchain".into());
    let pb = ProgressBar::new(todo.len() as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}").expect("template"));
    // Its own pool, so `--jobs N` means N threads whatever rayon's global pool holds.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(|e| format!("error: cannot start {jobs} threads: {e}"))?;
    // One spec per task (they differ a lot in cost); `collect` keeps spec order.
    let mut outcomes: Vec<Outcome> = pool.install(|| {
        todo.par_iter()
            .with_max_len(1)
            .map(|(i, sem)| {
                let t = Instant::now();
                let verdict = check_against(oracle, i, sem, &cfg);
                let seconds = t.elapsed().as_secs_f64();
                let (status, cases, detail) = match verdict {
                    // Fewer cases than asked for is not a pass.
                    Verdict::Agreed { cases } if cases >= cfg.cases && cases > 0 => (agreed, cases as u64, None),
                    Verdict::Agreed { cases } => (SpecStatus::Failed, cases as u64, Some(format!("FAILED {}: only {cases} of {} cases ran", i.name, cfg.cases))),
                    Verdict::Unavailable(why) => (SpecStatus::Skipped, 0, Some(format!("SKIPPED {}: {why}", i.name))),
                    Verdict::Failed(cx) => (SpecStatus::Failed, cfg.cases as u64, Some(format!("FAILED {} ({}:{}):\n{cx}", i.name, i.file, i.span.line))),
                    Verdict::OracleFailed(why) => (SpecStatus::Failed, 0, Some(format!("FAILED {}: {why}", i.name))),
                };
                if let Some(d) = &detail
                    && status != SpecStatus::Skipped
                {
                    pb.println(d);
                }
                pb.set_message(i.name.clone());
                pb.inc(1);
                let row = SemanticsRow {
                    intrinsic: i.name.clone(),
                    instruction: i.mnemonic.clone(),
                    feature: i.features.join("+"),
                    status: status.label().into(),
                    cases,
                    seconds,
                };
                // Silicon names the CPU; otherwise the evidence is why not.
                let evidence = match (&status, &detail) {
                    (SpecStatus::Silicon | SpecStatus::Emulator, _) => cpu.clone(),
                    (_, Some(d)) => format!("{}: {}", cpu, d.split_once(": ").map(|(_, why)| why).unwrap_or(d).lines().next().unwrap_or_default()),
                    _ => cpu.clone(),
                };
                Outcome { family: i.family.clone(), row, detail, status, evidence }
            })
            .collect()
    });
    pb.finish_and_clear();

    // Twins: a skipped spec proven equal to a spec verified in this run (or
    // by any machine's current evidence) counts as verified.
    let verified_now: BTreeMap<String, SpecStatus> = outcomes.iter().filter(|o| o.status.is_verified()).map(|o| (o.row.intrinsic.clone(), o.status)).collect();
    let mut twins: BTreeMap<String, String> = BTreeMap::new();
    // (Specs a CPU skips, on x86: no ARM or HVX spec has a second encoding.)
    for o in outcomes.iter_mut().filter(|o| o.status == SpecStatus::Skipped && oracle_kind == OracleKind::NativeCpu) {
        let (i, sem) = lib.get(&o.row.intrinsic).expect("checked spec");
        if let Some(twin) = find_twin(&lib, &before, &verified_now, i, sem) {
            o.status = SpecStatus::ProvenTwin;
            o.row.status = o.status.label().into();
            o.evidence = format!("= {twin} (Z3)");
            o.detail = Some(format!("PROVEN-TWIN {}: not runnable here ({}), proven equal to {twin}", i.name, o.detail.take().unwrap_or_default()));
            twins.insert(i.name.clone(), twin);
        }
    }

    let mut fams: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let column = |s: SpecStatus| match s {
        SpecStatus::Silicon | SpecStatus::Emulator => 0,
        SpecStatus::ProvenTwin => 1,
        SpecStatus::Skipped => 2,
        SpecStatus::Failed => 3,
    };
    for o in &outcomes {
        fams.entry(&o.family).or_default()[column(o.status)] += 1;
    }
    println!("this run on {cpu}:");
    println!("{:<16} {:>6} {:>8} {:>7} {:>8} {:>7}", "family", "specs", oracle.name(), "twin", "skipped", "failed");
    let mut tot = [0usize; 4];
    for (f, c) in &fams {
        println!("{:<16} {:>6} {:>8} {:>7} {:>8} {:>7}", f, c.iter().sum::<usize>(), c[0], c[1], c[2], c[3]);
        for k in 0..4 {
            tot[k] += c[k];
        }
    }
    println!("{:<16} {:>6} {:>8} {:>7} {:>8} {:>7}", "total", tot.iter().sum::<usize>(), tot[0], tot[1], tot[2], tot[3]);
    for o in outcomes.iter().filter(|o| o.status == SpecStatus::ProvenTwin) {
        println!("{}", o.detail.as_deref().unwrap_or_default());
    }
    let failed = outcomes.iter().filter(|o| o.status == SpecStatus::Failed).count();
    for o in outcomes.iter().filter(|o| o.status == SpecStatus::Failed) {
        if let Some(d) = &o.detail {
            eprintln!("{d}");
        }
    }

    // This machine's file: a row per spec that met (or failed) its oracle
    // here; skipped specs keep whatever row the file had.
    let mut files = files;
    let mut written = None;
    if let Some(m) = &machine {
        let path = ev_dir.join(format!("{}.tsv", m.slug()));
        let at = match files.iter().position(|(p, _)| *p == path) {
            Some(k) => k,
            None => {
                files.push((path.clone(), EvidenceFile::default()));
                files.len() - 1
            }
        };
        let old_text = std::fs::read_to_string(&path).ok();
        let (date, version) = (today(), version());
        let mine = &mut files[at].1;
        for o in outcomes.iter().filter(|o| o.status != SpecStatus::Skipped) {
            let (i, sem) = lib.get(&o.row.intrinsic).expect("checked spec");
            let twin = twins.get(&i.name).map(|t| (t.clone(), lib.digest(t).expect("a spec").to_string()));
            let row = EvidenceRow {
                intrinsic: i.name.clone(),
                status: o.status,
                cases: o.row.cases,
                seed: Some(cfg.seed),
                digest: lib.digest(&i.name).map(str::to_string).unwrap_or_else(|| misaal_isa::status::digest(sem)),
                machine: m.clone(),
                features: i.features.clone(),
                date: date.clone(),
                version: version.clone(),
                twin,
            };
            // A quick re-check (fewer cases) does not weaken an equal verdict.
            let keep_old = mine.rows.get(&i.name).is_some_and(|old| old.digest == row.digest && old.status == row.status && old.cases > row.cases);
            if !keep_old {
                mine.rows.insert(i.name.clone(), row);
            }
        }
        mine.rows.retain(|name, _| lib.get(name).is_some());
        let text = mine.render();
        // Unchanged evidence is not rewritten, and a run in which nothing
        // ran here makes no file.
        if old_text.as_deref() == Some(text.as_str()) {
            written = Some((path, "unchanged"));
        } else if !mine.rows.is_empty() {
            evidence::write_atomic(&path, &text).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
            written = Some((path, "written"));
        }
    }
    let after = StatusTable::derive(&files, Some(&spec_dir));
    let slug = machine.as_ref().map(Machine::slug).unwrap_or_default();
    let summary = derived_summary(&lib, &before, &after, &slug);
    print!("{summary}");

    let path = out.unwrap_or_else(|| PathBuf::from(format!("reports/{}_semantics.csv", spec.target)));
    let rows: Vec<SemanticsRow> = outcomes.into_iter().map(|o| o.row).collect();
    misaal_reports::write_semantics_csv(&rows, &path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
    println!(
        "{} specs checked with {} cases each (seed {}) in {:.1}s; wrote {}{}",
        rows.len(),
        cfg.cases,
        cfg.seed,
        started.elapsed().as_secs_f64(),
        path.display(),
        written.as_ref().map(|(p, how)| format!("; this machine's evidence {} ({how})", p.display())).unwrap_or_else(|| "; no evidence here (nothing ran)".into())
    );
    if let Some(dir) = export {
        let (Some(m), Some((p, _))) = (&machine, &written) else { return Err("error: --export: this run has no machine evidence to export (no oracle ran)".into()) };
        let mine = EvidenceFile::load(p).map_err(|d| d.to_string())?;
        let command: Vec<String> = std::env::args().collect();
        export_dir(&dir, &lib, m, &mine, &command.join(" "), &cfg, &spec.target)?;
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The derived status of one spec: from the table's row for its current text.
fn derived(table: &StatusTable, lib: &SpecLibrary, name: &str) -> SpecStatus {
    match table.verified_in(lib, name) {
        Ok(()) => table.row_for(name, lib.digest(name).expect("verified specs unroll")).map(|r| r.status).unwrap_or(SpecStatus::Skipped),
        Err(_) => match lib.digest(name).and_then(|d| table.row_for(name, d)) {
            Some(r) if r.status == SpecStatus::Failed => SpecStatus::Failed,
            _ => SpecStatus::Skipped,
        },
    }
}

/// The status of every spec, derived from all machines' evidence, and how
/// many rest only on machines other than this one.
fn derived_summary(lib: &SpecLibrary, before: &StatusTable, after: &StatusTable, machine: &str) -> String {
    let mut counts: BTreeMap<SpecStatus, usize> = BTreeMap::new();
    let (mut elsewhere, mut changed) = (0, Vec::new());
    for i in lib.instrs() {
        let now = derived(after, lib, &i.name);
        *counts.entry(now).or_default() += 1;
        let d = lib.digest(&i.name).expect("a loaded spec unrolls");
        if now.is_verified() && after.only_elsewhere(&i.name, d, machine) {
            elsewhere += 1;
        }
        let then = derived(before, lib, &i.name);
        if then != now {
            changed.push(format!("{} {} -> {}", i.name, then.label(), now.label()));
        }
    }
    let n = |s: SpecStatus| counts.get(&s).copied().unwrap_or(0);
    let mut out = format!(
        "derived from all machines' evidence: {} specs: {} silicon, {} emulator, {} proven-twin, {} failed, {} unverified\n",
        lib.len(),
        n(SpecStatus::Silicon),
        n(SpecStatus::Emulator),
        n(SpecStatus::ProvenTwin),
        n(SpecStatus::Failed),
        n(SpecStatus::Skipped)
    );
    out.push_str(&format!("{elsewhere} verified specs rest on evidence from elsewhere only (not from this machine)\n"));
    out.push_str(&format!("derived status changed for {} spec(s){}\n", changed.len(), if changed.is_empty() { String::new() } else { format!(": {}", changed.iter().take(12).cloned().collect::<Vec<_>>().join(", ")) }));
    out
}

