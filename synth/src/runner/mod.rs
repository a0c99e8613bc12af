//! The synthesis runner behind `misaal synth`: offline rule synthesis for
//! x86, ARM NEON or HVX (one pipeline, parametrized by
//! `crate::target::SynthTarget`). Without `--phase` the whole pipeline runs (relevance, swizzles, enumerate,
//! abstract, which writes rulesets/x86.egg, rulesets/arm.egg or
//! rulesets/hvx.egg, beside the hand-written <target>_hand.egg) with a progress bar per phase and a
//! checkpoint after each (reports/<target>_synth.ckpt) and after every
//! enumeration unit, so `--resume` continues a killed run. `--shard K/N`
//! runs only a share of the enumeration; `misaal synth merge --shards N`
//! then merges the shards and runs the phases after it.

use crate::pipeline::{self, PHASES, PipelineCheckpoint};
use crate::target::SynthTarget;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::time::Instant;

mod phases;
use phases::{abstract_phase, enumerate, relevance_phase, swizzles};

/// What `misaal synth` was asked to do (its options, as the CLI parsed them).
pub struct Options {
    /// `Some("merge")`: combine the finished shards (`shards`) and run the phases after it.
    pub action: Option<String>,
    /// The target's name (`x86`, `arm`, `hvx`).
    pub target: String,
    pub phase: Option<String>,
    pub depth: Option<u8>,
    pub x86_depth: Option<u8>,
    pub units: Option<String>,
    pub instructions: Option<String>,
    pub shard: Option<String>,
    pub resume: bool,
    pub jobs: Option<usize>,
    pub merge: Option<usize>,
    pub shards: Option<usize>,
    pub rules_out: Option<PathBuf>,
    pub include_unverified: bool,
    pub cpu_features: Option<String>,
    /// abstract: without the legalization templates (small runs).
    pub no_legalize: bool,
    /// Folder for the CSV reports, checkpoints and intermediate rule files.
    pub out_dir: PathBuf,
    /// The verdict cache shared with `misaal verify`.
    pub verdict_cache: PathBuf,
    /// The target's specs: the verified ones, or all with `true` (the CLI
    /// owns the spec folder and its notes on stderr).
    pub load_specs: Box<dyn Fn(bool) -> Result<misaal_isa::SpecLibrary, String>>,
}

/// What a phase wrote, and one line of counts for the closing summary.
#[derive(Debug, Clone)]
pub struct PhaseReport {
    pub phase: &'static str,
    pub files: Vec<PathBuf>,
    pub summary: String,
    /// False when the enumeration stopped at [`Limits::max_units`] with units left.
    pub complete: bool,
}

/// Why a run stopped (as egg's `StopReason`: the caller learns whether the
/// pipeline ran to its end or stopped at a limit or after one part).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// Every phase ran, or was done before (`resume`).
    Finished,
    /// The one phase asked for (`--phase`) ran.
    PhaseDone(&'static str),
    /// One shard's share of the enumeration ran; `misaal synth merge` finishes the run.
    ShardDone { k: usize, n: usize },
    /// The enumeration stopped at [`Limits::max_units`]; its checkpoint lets
    /// `resume` finish it, and the later phases did not run.
    UnitLimit,
}

/// What a run did: why it stopped, and a report per phase that ran.
#[derive(Debug, Clone)]
pub struct Report {
    pub stop: StopReason,
    pub phases: Vec<PhaseReport>,
}

/// Limits on a run, beyond the options (for tests of the checkpoints).
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// Stop the enumeration after this many new units (what a kill leaves behind).
    pub max_units: Option<usize>,
}

/// Runs the synthesis pipeline (or one phase, shard or merge of it) for
/// the options: checks that the options go together, runs the phases in
/// order with a checkpoint after each, and says why it stopped.
pub struct Runner {
    options: Options,
    limits: Limits,
}

impl Runner {
    pub fn new(options: Options) -> Self {
        Runner { options, limits: Limits::default() }
    }

    pub fn with_limits(self, limits: Limits) -> Self {
        Runner { limits, ..self }
    }

    pub fn run(&self) -> Result<Report, String> {
        run(&self.options, self.limits)
    }
}

/// The synthesis target of `--target`.
fn target(args: &Options) -> Result<&'static SynthTarget, String> {
    SynthTarget::by_name(&args.target).ok_or_else(|| format!("error: --target {}: synthesis knows x86, arm and hvx", args.target))
}

use crate::SYNTH_RLIMIT;

/// The verifier's configuration for the target's rules (its `?vsize` widths).
fn audit_config(t: &SynthTarget) -> misaal_verifier::audit::AuditConfig {
    // The timeout only stops a runaway query; the rlimit decides.
    misaal_verifier::audit::AuditConfig { timeout_ms: 300_000, rlimit: SYNTH_RLIMIT, vector_widths: t.vector_widths().to_vec(), ..Default::default() }
}

/// The verified specs synthesis reads: with `--cpu-features`, only those
/// whose features are all in the list.
fn synth_library(args: &Options, include_unverified: bool) -> Result<misaal_isa::SpecLibrary, String> {
    let mut lib = (args.load_specs)(include_unverified)?;
    if let Some(list) = &args.cpu_features {
        let have: std::collections::BTreeSet<&str> = list.split(',').map(str::trim).filter(|f| !f.is_empty()).collect();
        lib.retain(|i, _| i.features.iter().all(|f| have.contains(f.as_str())));
        if lib.is_empty() {
            return Err(format!("error: --cpu-features {list}: no verified spec needs only these features"));
        }
    }
    Ok(lib)
}

fn run(args: &Options, limits: Limits) -> Result<Report, String> {
    target(args)?;
    let merging = args.action.as_deref() == Some("merge");
    if merging && args.phase.is_some() {
        return Err("error: `misaal synth merge` runs the phases after the enumeration; --phase does not go with it".into());
    }
    if args.shards.is_some() != merging {
        return Err(if merging { "error: `misaal synth merge` needs --shards N (the N of the shards' --shard K/N)".into() } else { "error: --shards is an option of `misaal synth merge`".into() });
    }
    if args.phase.is_none() {
        return whole(args, limits);
    }
    let enumerate_flags = [
        ("--depth", args.depth.is_some()),
        ("--x86-depth", args.x86_depth.is_some()),
        ("--units", args.units.is_some()),
        ("--instructions", args.instructions.is_some()),
        ("--shard", args.shard.is_some()),
        ("--resume", args.resume),
        ("--jobs", args.jobs.is_some()),
        ("--merge", args.merge.is_some()),
    ];
    if args.phase.as_deref() != Some("enumerate")
        && let Some((flag, _)) = enumerate_flags.iter().find(|(_, set)| *set)
        && !(*flag == "--jobs" && args.phase.as_deref() == Some("abstract"))
    {
        return Err(format!("error: {flag} is an option of --phase enumerate"));
    }
    if args.rules_out.is_some() && args.phase.as_deref() != Some("abstract") {
        return Err("error: --rules-out is an option of --phase abstract".into());
    }
    let report = match args.phase.as_deref() {
        Some("relevance") => relevance_phase(args)?,
        Some("swizzles") => swizzles(args)?,
        Some("enumerate") => enumerate(args, args.merge, limits)?,
        Some("abstract") => abstract_phase(args)?,
        Some(p) => return Err(format!("error: --phase {p}: unknown phase (relevance, swizzles, enumerate, abstract)")),
        None => unreachable!("the whole pipeline is handled above"),
    };
    let stop = if report.complete { StopReason::PhaseDone(report.phase) } else { StopReason::UnitLimit };
    Ok(Report { stop, phases: vec![report] })
}

fn style_bar(pb: &ProgressBar) {
    if let Ok(st) = ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {msg} ({elapsed})") {
        pb.set_style(st.progress_chars("=> "));
    }
}

/// A spinner for a phase with no countable steps.
fn spinner(phase: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if let Ok(st) = ProgressStyle::with_template("{prefix:>9} {spinner} {msg} ({elapsed})") {
        pb.set_style(st);
    }
    pb.set_prefix(phase.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// The whole pipeline (or, with `--shard`, one shard's enumeration; with
/// `merge`, the shards merged in place of the enumeration).
fn whole(args: &Options, limits: Limits) -> Result<Report, String> {
    let t0 = Instant::now();
    if args.merge.is_some() {
        return Err("error: --merge is an option of --phase enumerate; the whole run merges with `misaal synth merge --shards N`".into());
    }
    if args.include_unverified {
        return Err("error: --include-unverified: synthesis writes rules, and rules are never synthesized from specs that have not met their oracle".into());
    }
    let cfg = enum_config(args)?;
    let lib = synth_library(args, false)?;
    if let Some(s) = &args.shard {
        let shard = crate::enumerate::Shard::parse(s).map_err(|e| format!("error: {e}"))?;
        if args.action.is_some() {
            return Err("error: `misaal synth merge` combines finished shards; --shard does not go with it".into());
        }
        if args.rules_out.is_some() {
            return Err("error: --rules-out: a shard writes no ruleset; give it to `misaal synth merge`".into());
        }
        // A shard only enumerates: relevance is recomputed in memory, and
        // the swizzles and the abstraction run once, in the merge.
        let out = enumerate(args, None, limits)?;
        if !out.complete {
            return Ok(Report { stop: StopReason::UnitLimit, phases: vec![out] });
        }
        println!("shard {}/{} done in {:.1} s: {}", shard.k, shard.n, t0.elapsed().as_secs_f64(), out.summary);
        println!("when every shard is done: misaal synth --target {} merge --shards {} (with the same enumeration options)", args.target, shard.n);
        return Ok(Report { stop: StopReason::ShardDone { k: shard.k, n: shard.n }, phases: vec![out] });
    }
    let merge = args.shards;
    if merge == Some(0) {
        return Err("error: --shards 0: there is no shard to merge".into());
    }
    let digest = cfg.digest(&lib);
    // Every shard must be finished before anything is written; all the
    // unfinished ones are named at once (on a cluster each is resubmitted).
    if let Some(n) = merge {
        use crate::enumerate::{Shard, checkpoint};
        let mut unfinished = Vec::new();
        for k in 0..n {
            let p = checkpoint::path(&args.out_dir, &args.target, Shard { k, n });
            let owned = (0..cfg.signatures.len()).filter(|&u| (Shard { k, n }).owns(u)).count();
            match checkpoint::Checkpoint::load(&p) {
                Err(_) if !p.exists() => unfinished.push(format!("shard {k}/{n}: no checkpoint {} (the shard has not run: `misaal synth --shard {k}/{n}`)", p.display())),
                Err(e) => unfinished.push(format!("shard {k}/{n}: {e} (delete it and run the shard again)")),
                Ok(cp) if cp.digest != digest => unfinished.push(format!("shard {k}/{n}: {} was made with another configuration or spec set; give merge the shards' options or run that shard again", p.display())),
                Ok(cp) if cp.units.len() != owned => unfinished.push(format!("shard {k}/{n}: {} has finished {} of its {owned} units; finish it with --resume", p.display(), cp.units.len())),
                Ok(_) => {}
            }
        }
        if !unfinished.is_empty() {
            return Err(format!("error: nothing merged: {} of the {n} shards are not finished\n  {}", unfinished.len(), unfinished.join("\n  ")));
        }
    }
    let ck_path = pipeline::path(&args.out_dir, &args.target);
    // The abstract phase's output depends on --no-legalize as well.
    let pipeline_digest = if args.no_legalize { format!("{digest};no-legalize") } else { digest.clone() };
    let mut ck = PipelineCheckpoint::new(pipeline_digest.clone());
    if args.resume && ck_path.exists() {
        let old = PipelineCheckpoint::load(&ck_path).map_err(|e| format!("error: {e}"))?;
        if old.digest != pipeline_digest {
            return Err(format!("error: {} is from another configuration or spec set; run without --resume to start over", ck_path.display()));
        }
        println!("resuming from {}", ck_path.display());
        ck = old;
    }
    println!(
        "synth: {} verified {} specs; phases relevance, swizzles, {}, abstract{}",
        lib.len(),
        args.target,
        if merge.is_some() { "merge of the enumeration shards" } else { "enumerate" },
        if args.resume { " (resuming)" } else { "" }
    );
    let mut summaries = Vec::new();
    let mut reports = Vec::new();
    let mut rerun = !args.resume;
    for phase in PHASES {
        if !rerun && ck.is_done(phase) {
            println!("{phase}: done before (checkpoint {}), skipped", ck_path.display());
            summaries.push(format!("{phase:<10} skipped (done before; its row in synth_{}.csv)", args.target));
            continue;
        }
        // From here on everything runs: a later phase reads this one's output.
        rerun = true;
        ck.forget_from(phase);
        let out = match phase {
            "relevance" => relevance_phase(args)?,
            "swizzles" => swizzles(args)?,
            "enumerate" => enumerate(args, merge, limits)?,
            _ => abstract_phase(args)?,
        };
        if !out.complete {
            // Not marked done: `resume` continues the enumeration from its own checkpoint.
            reports.push(out);
            return Ok(Report { stop: StopReason::UnitLimit, phases: reports });
        }
        ck.mark(phase, &out.files)?;
        ck.save(&ck_path).map_err(|e| format!("error: {e}"))?;
        summaries.push(out.summary.clone());
        reports.push(out);
    }
    let total = t0.elapsed().as_secs_f64();
    println!("synth done in {:.1} min (this run; a resumed run counts only its own part):", total / 60.0);
    for s in &summaries {
        println!("  {s}");
    }
    record(args, "total", total, summaries.len(), format!("resumed={};merged_shards={}", args.resume, merge.unwrap_or(0)))?;
    Ok(Report { stop: StopReason::Finished, phases: reports })
}

/// The enumeration's configuration from the options.
fn enum_config(args: &Options) -> Result<crate::enumerate::Config, String> {
    use crate::enumerate::{self as en, halide::HTy};
    let t = target(args)?;
    let mut cfg = en::Config::for_target(t);
    if let Some(d) = args.depth {
        if !(1..=4).contains(&d) {
            return Err(format!("error: --depth {d}: enumerate goes from depth 1 to 4"));
        }
        cfg.halide_depth = d;
        // Depth 2 allows op(op, op); deeper terms are chains (one op more per level).
        cfg.halide_max_size = if d == 1 { 1 } else { d.max(3) };
    }
    if let Some(d) = args.x86_depth {
        if !(1..=2).contains(&d) {
            return Err(format!("error: --x86-depth {d}: target terms go to depth 1 or 2"));
        }
        cfg.x86_depth = d;
    }
    if let Some(u) = &args.units {
        let mut sigs = Vec::new();
        // `u16x8`; ARM's 64-bit units (`u16x4`) too.
        let parse = |s: &str| -> Option<HTy> {
            let signed = match s.chars().next()? {
                'i' => true,
                'u' => false,
                _ => return None,
            };
            let (b, l) = s[1..].split_once('x')?;
            let (bits, lanes): (u32, u32) = (b.parse().ok()?, l.parse().ok()?);
            (matches!(bits, 8 | 16 | 32 | 64) && lanes > 0).then_some(HTy::new(signed, bits, lanes))
        };
        for sig in u.split(';') {
            let tys: Option<Vec<HTy>> = sig.split(',').map(|t| parse(t.trim())).collect();
            match tys {
                Some(ts) if (1..=3).contains(&ts.len()) && t.unit_ok(&ts) => sigs.push(ts),
                _ => return Err(format!("error: --units {u}: {sig:?} is not 1 to 3 types of one width in {:?} bits like u16x8,u16x8 (or one type twice as wide, like i32x8)", t.unit_widths)),
            }
        }
        cfg.signatures = sigs;
    }
    if let Some(list) = &args.instructions {
        cfg.x86_only = Some(list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect());
    }
    Ok(cfg)
}

/// Updates the phase's row of reports/synth_<target>.csv.
fn record(args: &Options, phase: &str, wall_s: f64, outputs: usize, detail: String) -> Result<(), String> {
    // A shard's row goes to a file of its own: shards on a cluster share
    // the folder and run at once.
    let path = match phase.strip_prefix("enumerate ") {
        Some(kn) => args.out_dir.join(format!("synth_{}.{}.csv", args.target, kn.replace('/', "-of-"))),
        None => args.out_dir.join(format!("synth_{}.csv", args.target)),
    };
    let row = misaal_reports::SynthPhaseRow { phase: phase.into(), wall_s, outputs: outputs as u64, detail };
    misaal_reports::update_synth_csv(&row, &path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
    println!("wrote {} ({phase}: {wall_s:.1} s)", path.display());
    Ok(())
}

