//! `misaal classes`: similarity classes, membership checks and lane facts.

use crate::{SpecArgs, load_verified};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use misaal_datalog::{Baseline, FamilyComparison, analyze, classify_pairs, compare};
use misaal_isa::{Instr, Semantics};
use std::sync::Arc;
use misaal_reports::{ClassRow, FamilyRow, LaneRow};
use misaal_verifier::membership::{MembershipCheck, check_membership};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct ClassesArgs {
    #[command(subcommand)]
    pub show: Option<ClassesCmd>,
    #[command(flatten)]
    pub spec: SpecArgs,
    /// Print the time of every phase and of every Datalog rule.
    #[arg(long)]
    pub timings: bool,
    /// Z3 timeout per membership proof, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub timeout: u32,
    /// Folder for the CSV reports.
    #[arg(long, default_value = "reports")]
    pub out_dir: PathBuf,
    /// A `class,instruction` table to compare with, family by family
    /// (default: the bundled Hydride table for the target, if any).
    #[arg(long, conflicts_with = "no_baseline")]
    pub baseline: Option<PathBuf>,
    /// Compare with no baseline.
    #[arg(long)]
    pub no_baseline: bool,
    /// Also classify specs that have not met their oracle (see `<specs>/evidence/`).
    #[arg(long)]
    pub include_unverified: bool,
}

#[derive(Subcommand)]
pub enum ClassesCmd {
    /// Print a class's parameterized semantics and its members' parameters.
    Show { class: String },
}

/// Hydride's published ratios (ASPLOS 2024), printed beside ours; its
/// bundled tables are other snapshots and are compared per family instead.
fn paper_ratio(targets: &[&str]) -> Option<(&'static str, usize, usize)> {
    let mut sorted = targets.to_vec();
    sorted.sort_unstable();
    match sorted.as_slice() {
        ["arm"] => Some(("ARM", 1221, 177)),
        ["hvx"] => Some(("HVX", 307, 115)),
        ["arm", "x86"] => Some(("x86+ARM", 3250, 302)),
        ["arm", "hvx", "x86"] => Some(("x86+ARM+HVX", 3557, 397)),
        _ => None,
    }
}

/// `--target x86,arm` classifies several targets' verified specs together.
fn targets_of(spec: &SpecArgs) -> Result<Vec<&str>, String> {
    let targets: Vec<&str> = spec.target.split(',').map(str::trim).collect();
    if targets.iter().any(|t| t.is_empty()) {
        return Err(format!("error: --target `{}`: empty target name in the list", spec.target));
    }
    if targets.len() > 1 && spec.specs.is_some() {
        return Err("error: --specs names one folder, so it takes one --target, not a list".to_string());
    }
    Ok(targets)
}

/// The bundled baseline of every target that has one, merged.
fn bundled_baseline(targets: &[&str]) -> Result<Option<Baseline>, String> {
    let mut parts = Vec::new();
    for t in targets {
        if let Some(p) = Baseline::bundled(t) {
            parts.push(Baseline::load(&p).map_err(|e| format!("error: {e}"))?);
        }
    }
    match parts.len() {
        0 => Ok(None),
        1 => Ok(parts.pop()),
        _ => Baseline::merge(parts).map(Some).map_err(|e| format!("error: {e}")),
    }
}

pub fn run(args: ClassesArgs) -> Result<ExitCode, String> {
    let t0 = Instant::now();
    let targets = targets_of(&args.spec)?;
    let baseline = match (&args.baseline, args.no_baseline) {
        (_, true) => None,
        (Some(p), _) => Some(Baseline::load(p).map_err(|e| format!("error: {e}"))?),
        (None, _) => bundled_baseline(&targets)?,
    };
    let mut pairs: Vec<(Arc<Instr>, Arc<Semantics>)> = Vec::new();
    for t in &targets {
        let spec = SpecArgs { target: t.to_string(), specs: args.spec.specs.clone() };
        let lib = load_verified(&spec, args.include_unverified)?;
        pairs.extend(lib.iter().map(|(i, s)| (i.clone(), s.clone())));
    }
    let sem_of: std::collections::HashMap<&str, &Semantics> = pairs.iter().map(|(i, s)| (i.name.as_str(), s.as_ref())).collect();
    let t_load = t0.elapsed();
    let t1 = Instant::now();
    let set = classify_pairs(&pairs);
    let t_classes = t1.elapsed();
    if let Some(ClassesCmd::Show { class }) = &args.show {
        let c = set.get(class).or_else(|| set.class_of(class).map(|(c, _)| c)).ok_or_else(|| {
            let close: Vec<&str> = set.classes.iter().map(|c| c.name.as_str()).filter(|n| n.contains(class.as_str())).take(8).collect();
            format!("error: no class or instruction `{class}`{}", if close.is_empty() { String::new() } else { format!(" (similar: {})", close.join(", ")) })
        })?;
        print!("{}", c.describe());
        return Ok(ExitCode::SUCCESS);
    }

    // Membership: every member of every class, checked.
    let t2 = Instant::now();
    let todo: Vec<(usize, usize)> = set.classes.iter().enumerate().flat_map(|(c, cl)| (0..cl.members.len()).map(move |m| (c, m))).collect();
    let pb = ProgressBar::new(todo.len() as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} membership checks").expect("template"));
    // One membership proof per task; `collect` keeps class and member order.
    let checks: BTreeMap<(usize, usize), MembershipCheck> = todo
        .par_iter()
        .with_max_len(1)
        .map(|&(c, m)| {
            let class = &set.classes[c];
            let member = &class.members[m];
            let own = sem_of[member.instr.name.as_str()];
            let r = check_membership(class, member, own, args.timeout);
            if let MembershipCheck::Failed(why) = &r {
                pb.println(format!("MEMBERSHIP FAILED {} in {}: {why}", member.instr.name, class.name));
            }
            pb.inc(1);
            ((c, m), r)
        })
        .collect();
    pb.finish_and_clear();
    let t_checks = t2.elapsed();

    let t3 = Instant::now();
    let pairs: Vec<_> = pairs.iter().map(|(i, s)| (i.as_ref(), s.as_ref())).collect();
    let lanes = analyze(&pairs);
    let t_lanes = t3.elapsed();

    // Summary.
    let n_instr = set.member_count();
    let n_classes = set.classes.len();
    println!("{:<28} {:>7}  example members", "class", "members");
    for c in &set.classes {
        let ex: Vec<&str> = c.members.iter().take(3).map(|m| m.instr.name.as_str()).collect();
        println!("{:<28} {:>7}  {}{}", c.name, c.members.len(), ex.join(", "), if c.members.len() > 3 { ", ..." } else { "" });
    }
    let singletons: Vec<&str> = set.classes.iter().filter(|c| c.members.len() == 1).map(|c| c.members[0].instr.name.as_str()).collect();
    let failed = checks.values().filter(|c| matches!(c, MembershipCheck::Failed(_))).count();
    let z3 = checks.values().filter(|c| **c == MembershipCheck::Z3).count();
    println!();
    println!("{n_instr} instructions in {n_classes} classes: {:.2}x compression", n_instr as f64 / n_classes.max(1) as f64);
    if let Some((what, instrs, classes)) = paper_ratio(&targets) {
        println!("Hydride (ASPLOS 2024) on {what}: {instrs} instructions in {classes} classes: {:.2}x", instrs as f64 / classes as f64);
    }
    if targets.len() > 1 {
        let spanning = set.classes.iter().filter(|c| c.members.iter().map(|m| m.instr.target.as_str()).collect::<std::collections::BTreeSet<_>>().len() > 1);
        let (n, members) = spanning.fold((0, 0), |(n, k), c| (n + 1, k + c.members.len()));
        println!("{n} classes hold instructions of more than one target ({members} instructions)");
    }
    println!("membership: {z3} proved by Z3, {} by quickcheck fallback, {failed} failed", checks.len() - z3 - failed);
    println!("{} single-member classes: {}", singletons.len(), singletons.join(", "));
    for (name, why) in &set.rejected {
        println!("NO SHAPE {name}: {why}");
    }
    let families = compare(&set, baseline.as_ref());
    print_families(&families, baseline.as_ref());

    let mut class_rows = Vec::new();
    for (ci, c) in set.classes.iter().enumerate() {
        for (mi, m) in c.members.iter().enumerate() {
            class_rows.push(ClassRow { class: c.name.clone(), instruction: m.instr.name.clone(), params: c.params_text(m), check: checks[&(ci, mi)].label() });
        }
    }
    let lane_rows: Vec<LaneRow> = pairs
        .iter()
        .zip(&lanes.facts)
        .map(|((i, _), f)| LaneRow {
            instruction: i.name.clone(),
            unique_lanes: f.unique_lanes.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(" "),
            reduction_factor: f.reduction_factor as u64,
            lane0_slices: f.bv_slices.get(&0).map(|v| v.iter().map(|(o, lo, hi)| format!("{o}[{hi}:{lo}]")).collect::<Vec<_>>().join(" ")).unwrap_or_default(),
        })
        .collect();
    // `x86,arm` writes `x86_arm_classes.csv`.
    let target = targets.join("_");
    let cpath = args.out_dir.join(format!("{target}_classes.csv"));
    let lpath = args.out_dir.join(format!("{target}_lanes.csv"));
    let fpath = args.out_dir.join(format!("{target}_class_families.csv"));
    let family_rows: Vec<FamilyRow> = families
        .iter()
        .map(|f| FamilyRow {
            family: f.family.clone(),
            instructions: f.instructions as u64,
            classes: f.classes as u64,
            ratio: f.ratio(),
            shared: f.shared as u64,
            shared_classes: f.shared_classes as u64,
            shared_ratio: f.shared_ratio(),
            baseline: baseline.as_ref().map(|b| b.name.clone()).unwrap_or_default(),
            baseline_classes: (f.shared > 0).then_some(f.baseline_classes as u64),
            baseline_ratio: f.baseline_ratio(),
        })
        .collect();
    misaal_reports::write_classes_csv(&class_rows, &cpath).map_err(|e| format!("error: writing {}: {e}", cpath.display()))?;
    misaal_reports::write_lanes_csv(&lane_rows, &lpath).map_err(|e| format!("error: writing {}: {e}", lpath.display()))?;
    misaal_reports::write_families_csv(&family_rows, &fpath).map_err(|e| format!("error: writing {}: {e}", fpath.display()))?;
    println!("wrote {}, {} and {}", cpath.display(), lpath.display(), fpath.display());
    if args.timings {
        println!();
        println!("load+unroll {:>9.1} ms", t_load.as_secs_f64() * 1e3);
        println!("classes     {:>9.1} ms  (constant extraction, width unification, grouping)", t_classes.as_secs_f64() * 1e3);
        println!("membership  {:>9.1} ms  ({} Z3 proofs on {} threads)", t_checks.as_secs_f64() * 1e3, checks.len(), rayon::current_num_threads());
        println!("lane facts  {:>9.1} ms", t_lanes.as_secs_f64() * 1e3);
        println!("total       {:>9.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        println!("\nlane program rule times:\n{}", lanes.timings);
    }
    Ok(if failed == 0 && set.rejected.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn print_families(families: &[FamilyComparison], baseline: Option<&Baseline>) {
    println!();
    match baseline {
        Some(b) => {
            println!("by family, against {} ({} instructions in {} classes) on the instructions both hold:", b.name, b.len(), b.class_count());
            println!("{:<12} {:>6} {:>7} {:>7}   {:>6} {:>12} {:>12}", "family", "instrs", "classes", "ratio", "shared", "ours", "baseline");
        }
        None => println!("{:<12} {:>6} {:>7} {:>7}", "family", "instrs", "classes", "ratio"),
    }
    for f in families {
        print!("{:<12} {:>6} {:>7} {:>6.2}x", f.family, f.instructions, f.classes, f.ratio());
        if baseline.is_some() {
            match (f.shared_ratio(), f.baseline_ratio()) {
                (Some(o), Some(b)) => {
                    let note = if f.shared_classes > f.baseline_classes { "  folds less than the baseline" } else { "" };
                    print!("   {:>6} {:>4} {:>6.2}x {:>4} {:>6.2}x{note}", f.shared, f.shared_classes, o, f.baseline_classes, b);
                }
                _ => print!("   {:>6}  not in the baseline", 0),
            }
        }
        println!();
    }
}
