//! Evidence folders between machines: `misaal isa check --export DIR`
//! writes this machine's rows for the current spec texts with a README of
//! their provenance; `--import DIR` merges such folders, refusing rows
//! whose spec changed since.

use super::{derived_summary, today, version};
use misaal_isa::SpecLibrary;
use misaal_isa::evidence::{self, EvidenceFile, Machine};
use misaal_isa::status::{SpecStatus, StatusTable};
use misaal_verifier::DiffConfig;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Writes `mine`'s rows for the current spec texts as an evidence folder:
/// `<machine>.tsv`, a README with its provenance, and the CPU's flags.
pub(super) fn export_dir(dir: &Path, lib: &SpecLibrary, m: &Machine, mine: &EvidenceFile, command: &str, cfg: &DiffConfig, target: &str) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("error: writing {}: {e}", p.display());
    let mut current = EvidenceFile { notes: mine.notes.clone(), rows: BTreeMap::new() };
    current.rows = mine.rows.iter().filter(|(n, r)| lib.digest(n) == Some(r.digest.as_str())).map(|(n, r)| (n.clone(), r.clone())).collect();
    let file = dir.join(format!("{}.tsv", m.slug()));
    current.save(&file).map_err(|e| io(&file, e))?;
    let flags = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| t.lines().find_map(|l| l.strip_prefix("flags").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string())));
    let by_status = |s: SpecStatus| current.rows.values().filter(|r| r.status == s).count();
    let readme = format!(
        "# {target} evidence from {}\n\n\
         Written by `misaal isa check --export`; merge it into a checkout with\n\
         `misaal isa check --target {target} --import <this folder>`, which refuses rows whose spec changed since.\n\n\
         | | |\n|---|---|\n\
         | machine | {} |\n| family / model / stepping | {} / {} / {} |\n| CPU flags | {} |\n\
         | command | `{command}` |\n| seed | {} |\n| cases | {} |\n| date | {} |\n| misaal | {} |\n\n\
         `{}.tsv`: {} rows for current spec texts: {} silicon, {} emulator, {} proven-twin, {} failed.\n",
        m.describe(),
        m.cpu,
        m.family,
        m.model,
        m.stepping,
        if flags.is_some() && m.family != "-" { "`cpu-flags.txt`" } else { "n/a (an emulator)" },
        cfg.seed,
        cfg.cases,
        today(),
        version(),
        m.slug(),
        current.rows.len(),
        by_status(SpecStatus::Silicon),
        by_status(SpecStatus::Emulator),
        by_status(SpecStatus::ProvenTwin),
        by_status(SpecStatus::Failed),
    );
    let p = dir.join("README.md");
    evidence::write_atomic(&p, &readme).map_err(|e| io(&p, e))?;
    if let (Some(f), true) = (flags, m.family != "-") {
        let p = dir.join("cpu-flags.txt");
        evidence::write_atomic(&p, &(f + "\n")).map_err(|e| io(&p, e))?;
    }
    println!("exported {} rows of {} to {}", current.rows.len(), m.describe(), dir.display());
    Ok(())
}

/// Merges evidence folders (`--export`'s) into the evidence folder. A row
/// whose digest is not its spec's current one, or that names no spec, is
/// refused and named; the others are merged into the file of the same name.
/// Exits 1 if any row was refused (the rest is merged all the same).
pub(super) fn import_dirs(lib: &SpecLibrary, spec_dir: &Path, ev_dir: &Path, dirs: &[PathBuf]) -> Result<ExitCode, String> {
    let before = StatusTable::derive(&evidence::load_dir(ev_dir).map_err(|d| d.to_string())?, Some(spec_dir));
    let mut refused = Vec::new();
    let mut merged = 0;
    for dir in dirs {
        let files = evidence::load_dir(dir).map_err(|d| d.to_string())?;
        if files.is_empty() {
            return Err(format!("error: {} holds no evidence file (`<machine>.tsv`, as `misaal isa check --export` writes)", dir.display()));
        }
        for (p, theirs) in files {
            let target = ev_dir.join(p.file_name().expect("a file"));
            let mut ours = EvidenceFile::load(&target).map_err(|d| d.to_string())?;
            let old_text = std::fs::read_to_string(&target).ok();
            for n in &theirs.notes {
                if !ours.notes.contains(n) {
                    ours.notes.push(n.clone());
                }
            }
            for (name, row) in theirs.rows {
                let why = match lib.digest(&name) {
                    None => Some("no such spec here".to_string()),
                    Some(d) if d != row.digest => Some(format!("stale: checked as digest {}, the spec is now {d}", row.digest)),
                    Some(_) => None,
                };
                if let Some(why) = why {
                    refused.push(format!("{}: {name} ({} on {}): {why}", p.display(), row.status.label(), row.machine.describe()));
                    continue;
                }
                let keep_old = ours.rows.get(&name).is_some_and(|old| old.digest == row.digest && old.status == row.status && old.cases > row.cases);
                if !keep_old {
                    ours.rows.insert(name, row);
                    merged += 1;
                }
            }
            let text = ours.render();
            if old_text.as_deref() != Some(text.as_str()) {
                evidence::write_atomic(&target, &text).map_err(|e| format!("error: writing {}: {e}", target.display()))?;
                println!("merged into {}", target.display());
            }
        }
    }
    for r in &refused {
        println!("REFUSED {r}");
    }
    let after = StatusTable::derive(&evidence::load_dir(ev_dir).map_err(|d| d.to_string())?, Some(spec_dir));
    print!("{}", derived_summary(lib, &before, &after, ""));
    println!("imported {merged} row(s); refused {} stale or unknown row(s)", refused.len());
    Ok(if refused.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
