//! `misaal verify`: audit every instantiation of every rule.

use crate::VerifyArgs;
use indicatif::{ProgressBar, ProgressStyle};
use misaal_isa::SpecLibrary;
use misaal_reports::VerifyRow;
use misaal_verifier::audit::{AuditConfig, InstanceResult, Libraries, VerdictCache, Verdict, plan, run_job, summarize};
use misaal_verifier::rules::parse_rules;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

pub fn run(args: VerifyArgs) -> Result<ExitCode, String> {
    let started = Instant::now();
    let (path, target) = if args.rules.ends_with(".egg") || args.rules.contains('/') {
        let p = PathBuf::from(&args.rules);
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "rules".into());
        (p, stem)
    } else {
        (misaal_rulesets::bundled_ruleset(&args.rules), args.rules.clone())
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
    let mut rules = parse_rules(&path.display().to_string(), &text).map_err(|d| d.to_string())?;
    if let Some(only) = &args.rule {
        rules.retain(|r| &r.name == only);
        if rules.is_empty() {
            return Err(format!("error: no rule named {only:?} in {}", path.display()));
        }
    }
    let x86 = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).map_err(|d| d.to_string())?;
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let libs = Libraries { x86: &x86, halide: &halide };
    let cfg = AuditConfig { timeout_ms: args.timeout, quickcheck_cases: args.cases, ..Default::default() };
    let jobs = plan(&rules, &cfg).map_err(|(_, e)| e)?;

    let cache_path = PathBuf::from(".misaal-cache/verify.tsv");
    let cache = Mutex::new(if args.no_cache { VerdictCache::default() } else { VerdictCache::load(&cache_path) });
    let pb = ProgressBar::new(jobs.len() as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}").expect("template"));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, InstanceResult)>> = Mutex::new(Vec::new());
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(k) else { break };
                    let r = run_job(&libs, job, &cfg, &cache);
                    if matches!(r.verdict, Verdict::Refuted | Verdict::EncoderMismatch | Verdict::Unknown) {
                        pb.println(format!("{} {} [{}]: {}", r.verdict.label().to_uppercase(), r.rule, r.instantiation, r.counterexample));
                    }
                    pb.set_message(r.rule.clone());
                    pb.inc(1);
                    results.lock().expect("results").push((k, r));
                }
            });
        }
    });
    pb.finish_and_clear();
    if let Err(e) = cache.lock().expect("cache").save() {
        eprintln!("warning: could not save the verdict cache {}: {e}", cache_path.display());
    }
    let mut results = results.into_inner().expect("results");
    results.sort_by_key(|(k, _)| *k);
    let results: Vec<InstanceResult> = results.into_iter().map(|(_, r)| r).collect();

    let counts = summarize(&results);
    let n = |v: Verdict| counts.get(&v).copied().unwrap_or(0);
    let cached = results.iter().filter(|r| r.cached).count();
    println!("{} rules, {} instantiations ({} from cache) in {:.1}s", rules.len(), results.len(), cached, started.elapsed().as_secs_f64());
    println!("  proved            {:>6}", n(Verdict::Proved));
    println!("  refuted           {:>6}", n(Verdict::Refuted));
    println!("  unknown           {:>6}", n(Verdict::Unknown));
    println!("  inapplicable      {:>6}", n(Verdict::Inapplicable));
    println!("  encoder-mismatch  {:>6}", n(Verdict::EncoderMismatch));
    let bad: Vec<&InstanceResult> = results.iter().filter(|r| matches!(r.verdict, Verdict::Refuted | Verdict::EncoderMismatch)).collect();
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
        .collect();
    let out = args.out.unwrap_or_else(|| PathBuf::from(format!("reports/verify_{target}.csv")));
    misaal_reports::write_verify_csv(&rows, &out).map_err(|e| format!("error: writing {}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(if bad.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
