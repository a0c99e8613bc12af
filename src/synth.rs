//! `misaal synth`: offline rule synthesis. The relevance phase is built;
//! the others are refused by name rather than pretended.

use crate::{SynthArgs, load_verified};
use misaal_datalog::{classify, relevance};
use misaal_reports::{RelevanceRow, write_relevance_csv};
use std::process::ExitCode;
use std::time::Instant;

pub fn run(args: SynthArgs) -> Result<ExitCode, String> {
    match args.phase.as_deref() {
        Some("relevance") => {}
        Some("swizzles") => return swizzles(&args),
        Some(p @ ("enumerate" | "abstract")) => {
            return Err(format!("error: --phase {p}: this phase of synthesis is not built yet; only `relevance` and `swizzles` are"));
        }
        Some(p) => return Err(format!("error: --phase {p}: unknown phase (relevance, swizzles, enumerate, abstract)")),
        None => {
            return Err("error: whole-pipeline synthesis is not built yet; run one phase: --phase relevance or --phase swizzles".into());
        }
    }
    let t0 = Instant::now();
    let lib = load_verified(&args.spec, args.include_unverified)?;
    let set = classify(&lib);
    let t_classes = t0.elapsed();
    let t1 = Instant::now();
    let rel = relevance(&lib, &set);
    let t_rel = t1.elapsed();
    let rows: Vec<RelevanceRow> = rel
        .iter()
        .map(|r| RelevanceRow { class: r.class.clone(), relevant_class: r.relevant_class.clone(), kind: r.kind.as_str().into(), witness: r.witness.clone() })
        .collect();
    std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("error: {}: {e}", args.out_dir.display()))?;
    let path = args.out_dir.join(format!("{}_relevance.csv", args.spec.target));
    write_relevance_csv(&rows, &path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
    let with = rel.iter().map(|r| &r.class).collect::<std::collections::BTreeSet<_>>().len();
    let direct = rel.iter().filter(|r| r.kind == misaal_datalog::RelevanceKind::Direct).count();
    println!(
        "relevance: {} specs in {} classes; {with} classes have a relevant class; {} pairs ({direct} direct, {} generalized)",
        lib.len(),
        set.classes.len(),
        rel.len(),
        rel.len() - direct
    );
    println!("time: classes {:.1} s, relevance {:.1} s (MISAAL: 16 hours for x86)", t_classes.as_secs_f64(), t_rel.as_secs_f64());
    println!("wrote {}", path.display());
    record(
        &args,
        "relevance",
        t0.elapsed().as_secs_f64(),
        rel.len(),
        format!("specs={};classes={};with_relevant={with};direct={direct};generalized={}", lib.len(), set.classes.len(), rel.len() - direct),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Updates the phase's row of reports/synth_<target>.csv.
fn record(args: &SynthArgs, phase: &str, wall_s: f64, outputs: usize, detail: String) -> Result<(), String> {
    let path = args.out_dir.join(format!("synth_{}.csv", args.spec.target));
    let row = misaal_reports::SynthPhaseRow { phase: phase.into(), wall_s, outputs: outputs as u64, detail };
    misaal_reports::update_synth_csv(&row, &path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
    println!("wrote {} ({phase}: {wall_s:.1} s)", path.display());
    Ok(())
}

/// `--phase swizzles`: the permutations the verified instructions perform or
/// need, by class, into reports/<target>_swizzles.csv.
fn swizzles(args: &SynthArgs) -> Result<ExitCode, String> {
    let t0 = Instant::now();
    let lib = load_verified(&args.spec, args.include_unverified)?;
    let pairs: Vec<_> = lib.iter().map(|(i, s)| (i.as_ref(), s.as_ref())).collect();
    let found = misaal_datalog::discover_swizzles(&pairs);
    let rows: Vec<misaal_reports::SwizzleRow> = found
        .iter()
        .map(|s| misaal_reports::SwizzleRow {
            class: s.class.clone(),
            elem_bits: s.elem_bits as u64,
            inputs: s.inputs as u64,
            lanes: s.pattern.len() as u64,
            role: s.role.into(),
            instructions: s.instructions.join(" "),
            pattern: s.pattern_text(),
        })
        .collect();
    std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("error: {}: {e}", args.out_dir.display()))?;
    let path = args.out_dir.join(format!("{}_swizzles.csv", args.spec.target));
    misaal_reports::write_swizzles_csv(&rows, &path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
    let mut by_class: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for s in &found {
        *by_class.entry(s.class.as_str()).or_default() += 1;
    }
    println!("swizzles: {} from {} specs in {} classes (MISAAL, x86: 243 in 10) in {:.1} s", found.len(), lib.len(), by_class.len(), t0.elapsed().as_secs_f64());
    for (c, n) in &by_class {
        println!("  {c:<28} {n:>4}");
    }
    println!("not yet: swizzles controlled by an immediate (vpshufd, vpermq imm), enumerated per value");
    println!("wrote {}", path.display());

    // Lowering rules: one candidate per instruction swizzle, kept only when
    // the verifier proves it at every width it is instantiated at.
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let libs = misaal_verifier::audit::Libraries { x86: &lib, halide: &halide };
    let cfg = misaal_verifier::audit::AuditConfig::default();
    let cache = std::sync::Mutex::new(misaal_verifier::audit::VerdictCache::load(std::path::Path::new(crate::VERDICT_CACHE)));
    let operand_bits = |name: &str| lib.get(name).and_then(|(i, _)| i.params.iter().map(|p| p.ty.width()).filter(|w| *w >= 64).max());
    let cands = misaal_synth::swizzle_rules::candidates(&found, operand_bits);
    let mut kept = String::from(
        "; Swizzle lowering rules synthesized by `misaal synth --phase swizzles`:\n\
         ; one per data-movement instruction whose permutation is an interleave,\n\
         ; a per-128-bit-lane interleave, a broadcast or a block selection,\n\
         ; each proved by the verifier at every instantiation before it is written.\n\
         ; Generated; not loaded by the compiler yet (rulesets/x86.egg is).\n(ruleset x86)\n",
    );
    let (mut proved, mut failed) = (0, Vec::new());
    for c in &cands {
        let rules = match misaal_verifier::audit::load_rules("synth", &c.text, &libs, &cfg) {
            Ok(r) => r,
            Err(d) => {
                failed.push(format!("{}: does not load: {d}", c.name));
                continue;
            }
        };
        let jobs = misaal_verifier::audit::plan(&rules, &cfg).map_err(|(_, e)| e)?;
        let verdicts: Vec<_> = jobs.iter().map(|j| misaal_verifier::audit::run_job(&libs, j, &cfg, &cache)).collect();
        match verdicts.iter().find(|r| r.verdict != misaal_verifier::audit::Verdict::Proved) {
            None if !verdicts.is_empty() => {
                proved += 1;
                kept.push_str(&format!("; from {} ({})\n{}\n", c.instruction, c.class, c.text));
            }
            Some(r) => failed.push(format!("{}: {} {}", c.name, r.verdict.label(), r.counterexample)),
            None => failed.push(format!("{}: no instantiation", c.name)),
        }
    }
    let _ = cache.lock().expect("cache").save();
    let rules_path = args.out_dir.join(format!("{}_swizzles.egg", args.spec.target));
    let tmp = rules_path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &kept).and_then(|()| std::fs::rename(&tmp, &rules_path)).map_err(|e| format!("error: writing {}: {e}", rules_path.display()))?;
    println!("lowering rules: {} candidates, {proved} proved and written to {}, {} not", cands.len(), rules_path.display(), failed.len());
    for f in failed.iter().take(10) {
        println!("  not kept: {f}");
    }
    record(
        args,
        "swizzles",
        t0.elapsed().as_secs_f64(),
        found.len(),
        format!("specs={};classes={};rule_candidates={};rules_proved={proved}", lib.len(), by_class.len(), cands.len()),
    )?;
    Ok(ExitCode::SUCCESS)
}
