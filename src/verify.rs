//! `misaal verify`: audit every instantiation of every rule.

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use misaal_isa::SpecLibrary;
use misaal_reports::VerifyRow;
use misaal_isa::StatusTable;
use misaal_rulesets::describe_env;
use misaal_verifier::audit::{AuditConfig, InstanceResult, Libraries, VerdictCache, Verdict, load_rules, load_rules_verified, plan, run_job, summarize, unverified_specs};
use rayon::prelude::*;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Args)]
pub struct VerifyArgs {
    /// A target (`x86`: the synthesized rulesets/x86.egg; `arm`, `hvx`: the hand-written `<t>_hand.egg` and synthesized `<t>.egg` together) or a rule file.
    #[arg(long, default_value = "x86")]
    pub rules: String,
    /// Only the rule with this name.
    #[arg(long)]
    pub rule: Option<String>,
    /// Z3 timeout per instantiation, in milliseconds; a timeout is `unknown`.
    #[arg(long, default_value_t = 10_000)]
    pub timeout: u32,
    /// Z3 resource limit per query (0: none). Unlike --timeout it does not
    /// depend on the machine's speed: the same rule gets the same verdict
    /// everywhere. Exhausting it is `unknown`.
    #[arg(long, default_value_t = 0)]
    pub rlimit: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Quickcheck cases per instantiation on the concrete evaluator.
    #[arg(long, default_value_t = 1000)]
    pub cases: usize,
    /// Where to write the CSV (default reports/verify_<target>.csv).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Ignore and do not update the verdict cache (.misaal-cache/verify.tsv)
    /// or the verdicts shipped with the rulesets (rulesets/*.verdicts.tsv).
    #[arg(long)]
    pub no_cache: bool,
    /// Also write the settled verdicts of this run's instantiations to FILE
    /// (sorted, tab-separated): `rulesets/x86.verdicts.tsv` ships them, so a
    /// fresh checkout compiles without proving every rule first.
    #[arg(long)]
    pub export_verdicts: Option<PathBuf>,
    /// Let rules use x86 specs that have not met their oracle (see
    /// isa/specs/x86/evidence/); the output then says so.
    #[arg(long)]
    pub include_unverified: bool,
    /// Exit 0 even when instantiations over unverified specs were left
    /// unaudited (otherwise an audit that audited nothing has not passed).
    #[arg(long)]
    pub allow_unaudited: bool,
    /// Derive spec statuses from this evidence folder instead of the
    /// target's (`isa/specs/<target>/evidence`): what another set of
    /// machines' evidence vouches for.
    #[arg(long, value_name = "DIR")]
    pub evidence: Option<PathBuf>,
    /// Exit 0 even when a rule is `inapplicable` (no instantiation meets its
    /// side conditions), which is otherwise an error in the ruleset.
    #[arg(long)]
    pub allow_inapplicable: bool,
}

/// A rule instantiation left unaudited: rule, instantiation, and each
/// unverified spec it names with the reason.
type Unaudited = (String, String, Vec<(String, String)>);

pub fn run(args: VerifyArgs) -> Result<ExitCode, String> {
    let started = Instant::now();
    let (path, target) = if args.rules.ends_with(".egg") || args.rules.contains('/') {
        let p = PathBuf::from(&args.rules);
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "rules".into());
        (p, stem)
    } else {
        (misaal_rulesets::bundled_ruleset(&args.rules), args.rules.clone())
    };
    // A target's name means every rule file the compiler loads for it
    // (ARM and HVX: the hand-written and the synthesized rules).
    let defaults = misaal_rulesets::TargetIsa::by_name(&args.rules).filter(|_| !args.rules.ends_with(".egg") && !args.rules.contains('/'));
    let text = match defaults {
        Some(isa) => {
            let files: Vec<String> = isa.default_rulesets().iter().map(|p| p.display().to_string()).collect();
            println!("rules: {}", files.join(" + "));
            isa.default_rules_text()?
        }
        None => std::fs::read_to_string(&path).map_err(|e| format!("error: cannot read {}: {e}", path.display()))?,
    };
    // The file's heads say which target's specs its names resolve against.
    let isa = misaal_rulesets::file_target(&path.display().to_string(), &text).map_err(|d| format!("{d}\n{} error(s) loading {}", d.0.len(), path.display()))?;
    let spec_dir = isa.spec_dir();
    let specs = SpecLibrary::load_dir(&spec_dir).map_err(|d| d.to_string())?;
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let libs = Libraries { target: &specs, halide: &halide };
    let cfg = AuditConfig { timeout_ms: args.timeout, rlimit: args.rlimit, quickcheck_cases: args.cases, vector_widths: isa.vector_widths.to_vec(), ..Default::default() };
    let status = match &args.evidence {
        Some(dir) => StatusTable::derive_dir(dir, &spec_dir),
        None => StatusTable::for_spec_dir(&spec_dir),
    }
    .map_err(|d| d.to_string())?;
    if args.include_unverified {
        println!("note: --include-unverified: rules may use {} specs that have not met their oracle", isa.name);
    }
    let file = path.display().to_string();
    // ARM and HVX rules name only specs that met qemu: an unverified one is
    // a load error. x86 rules may name AVX-512 specs this CPU cannot check
    // (its oracle is the CPU: the registry's `Oracle::NativeCpu`); those
    // instantiations are counted as not audited instead.
    let loaded = if isa.oracle == misaal_targets::Oracle::NativeCpu || args.include_unverified { load_rules(&file, &text, &libs, &cfg) } else { load_rules_verified(&file, &text, &libs, &cfg, &status) };
    let mut rules = loaded.map_err(|d| format!("{d}\n{} error(s) loading {}", d.0.len(), path.display()))?;
    if let Some(only) = &args.rule {
        rules.retain(|r| &r.name == only);
        if rules.is_empty() {
            return Err(format!("error: no rule named {only:?} in {}", path.display()));
        }
    }
    let planned = plan(&rules, &cfg).map_err(|(_, e)| e)?;
    // Instantiations over specs that have not met their oracle are not
    // audited: they are counted and listed, never passed.
    let mut jobs = Vec::new();
    let mut unaudited: Vec<Unaudited> = Vec::new();
    for job in planned {
        let missing = match (&job.env, args.include_unverified) {
            (Some(env), false) => unverified_specs(&libs, job.rule, env, &status),
            _ => Vec::new(),
        };
        if missing.is_empty() {
            jobs.push(job);
        } else {
            unaudited.push((job.rule.name.clone(), describe_env(job.env.as_ref().expect("planned")), missing));
        }
    }

    let cache_path = PathBuf::from(crate::VERDICT_CACHE);
    let cache = Mutex::new(if args.no_cache { VerdictCache::default() } else { VerdictCache::load(&cache_path) });
    let pb = ProgressBar::new(jobs.len() as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}").expect("template"));
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    // Its own pool, so `--jobs N` means N threads whatever rayon's global pool holds.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("error: cannot start {threads} threads: {e}"))?;
    // One instantiation per task; `collect` keeps rule order.
    let results: Vec<InstanceResult> = pool.install(|| {
        jobs.par_iter()
            .with_max_len(1)
            .map(|job| {
                let r = run_job(&libs, job, &cfg, &cache);
                if matches!(r.verdict, Verdict::Refuted | Verdict::EncoderMismatch | Verdict::Unknown | Verdict::Inapplicable) {
                    pb.println(format!("{} {} [{}]: {}", r.verdict.label().to_uppercase(), r.rule, r.instantiation, r.counterexample));
                }
                pb.set_message(r.rule.clone());
                pb.inc(1);
                r
            })
            .collect()
    });
    pb.finish_and_clear();
    if let Err(e) = cache.lock().expect("cache").save() {
        eprintln!("warning: could not save the verdict cache {}: {e}", cache_path.display());
    }
    if let Some(path) = &args.export_verdicts {
        let n = cache.lock().expect("cache").export(path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
        println!("exported {n} settled verdicts to {}", path.display());
    }

    let counts = summarize(&results);
    let n = |v: Verdict| counts.get(&v).copied().unwrap_or(0);
    let cached = results.iter().filter(|r| r.cached).count();
    println!("{} rules, {} instantiations ({} from cache) in {:.1}s", rules.len(), results.len(), cached, started.elapsed().as_secs_f64());
    println!("  proved            {:>6}", n(Verdict::Proved));
    println!("  refuted           {:>6}", n(Verdict::Refuted));
    println!("  unknown           {:>6}", n(Verdict::Unknown));
    println!("  inapplicable      {:>6}", n(Verdict::Inapplicable));
    println!("  encoder-mismatch  {:>6}", n(Verdict::EncoderMismatch));
    println!("  unverified-spec   {:>6}  (not audited: an {} spec it uses has not met its oracle)", unaudited.len(), isa.name);
    let mut specs: Vec<&str> = unaudited.iter().flat_map(|u| u.2.iter().map(|(s, _)| s.as_str())).collect();
    specs.sort();
    specs.dedup();
    if !specs.is_empty() {
        println!(
            "    {} unverified spec(s), e.g. {}: {}",
            specs.len(),
            unaudited[0].2[0].0,
            unaudited[0].2[0].1
        );
    }
    let bad: Vec<&InstanceResult> = results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Refuted | Verdict::EncoderMismatch) || (r.verdict == Verdict::Inapplicable && !args.allow_inapplicable))
        .collect();
    for r in bad.iter().take(10) {
        println!("{} {} [{}]\n    {}", r.verdict.label(), r.rule, r.instantiation, r.counterexample);
    }
    if bad.len() > 10 {
        println!("... and {} more in the CSV", bad.len() - 10);
    }
    let rows: Vec<VerifyRow> = results
        .iter()
        .map(|r| VerifyRow {
            rule: r.rule.clone(),
            instantiation: r.instantiation.clone(),
            verdict: r.verdict.label().into(),
            solver_ms: r.solver_ms,
            quickcheck_cases: r.quickcheck_cases as u64,
            counterexample: r.counterexample.clone(),
        })
        .chain(unaudited.iter().map(|(rule, inst, missing)| VerifyRow {
            rule: rule.clone(),
            instantiation: inst.clone(),
            verdict: "unverified-spec".into(),
            solver_ms: 0.0,
            quickcheck_cases: 0,
            counterexample: missing.iter().map(|(s, why)| format!("{s}: {why}")).collect::<Vec<_>>().join("; "),
        }))
        .collect();
    let out = args.out.unwrap_or_else(|| PathBuf::from(format!("reports/verify_{target}.csv")));
    misaal_reports::write_verify_csv(&rows, &out).map_err(|e| format!("error: writing {}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    // Only `proved` passes. A refutation, an encoder mismatch or (unless
    // allowed) a rule no instantiation can use fails the audit (1); an
    // instantiation the solver could not decide leaves it unproved (3); an
    // instantiation over an unverified spec was not audited, and unless
    // allowed that is not a pass either (4).
    let unknown = n(Verdict::Unknown);
    if !bad.is_empty() {
        println!("FAILED: {} instantiation(s) refuted, mismatched or inapplicable", bad.len());
        return Ok(ExitCode::from(1));
    }
    if unknown > 0 {
        println!("NOT PROVED: {unknown} instantiation(s) unknown (the solver ran out of time or resources); raise --timeout (or --rlimit) or simplify the rule");
        return Ok(ExitCode::from(3));
    }
    if args.include_unverified {
        println!("all proved, over specs that may be unverified (--include-unverified)");
    } else if !unaudited.is_empty() && !args.allow_unaudited {
        println!(
            "NOT AUDITED: {} instantiation(s) use unverified specs, so nothing vouches for them; `misaal isa check` on a CPU that runs them (or `--import` evidence from one), or pass --allow-unaudited",
            unaudited.len()
        );
        return Ok(ExitCode::from(4));
    } else if !unaudited.is_empty() {
        println!("all audited instantiations proved; {} not audited (unverified specs), allowed by --allow-unaudited", unaudited.len());
    }
    Ok(ExitCode::SUCCESS)
}
