//! `misaal synth`: offline rule synthesis, one phase at a time:
//! relevance, swizzles, enumerate and abstract (which writes the generated
//! ruleset rulesets/<target>_synth.egg).

use crate::{SynthArgs, load_verified};
use misaal_datalog::{classify, relevance};
use misaal_reports::{RelevanceRow, write_relevance_csv};
use std::process::ExitCode;
use std::time::Instant;

pub fn run(args: SynthArgs) -> Result<ExitCode, String> {
    let enumerate_flags = [
        ("--depth", args.depth.is_some()),
        ("--x86-depth", args.x86_depth.is_some()),
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
    match args.phase.as_deref() {
        Some("relevance") => {}
        Some("swizzles") => return swizzles(&args),
        Some("enumerate") => return enumerate(&args),
        Some("abstract") => return abstract_phase(&args),
        Some(p) => return Err(format!("error: --phase {p}: unknown phase (relevance, swizzles, enumerate, abstract)")),
        None => {
            return Err("error: whole-pipeline synthesis is not built yet; run one phase: --phase relevance, swizzles, enumerate or abstract".into());
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

/// `--phase enumerate`: Halide and x86 terms matched by fingerprint, each
/// match proved before it is written to reports/<target>_enumerated.egg.
/// With `--shard K/N` only every N-th unit runs and the rules go to
/// `<target>_enumerated.K-of-N.egg`; `--merge N` combines the N shards'
/// checkpoints into the same file a whole run writes.
fn enumerate(args: &SynthArgs) -> Result<ExitCode, String> {
    use misaal_synth::enumerate::{self as en, Shard, checkpoint};
    let t0 = Instant::now();
    for (flag, set) in [("--shard", args.shard.is_some()), ("--resume", args.resume), ("--jobs", args.jobs.is_some())] {
        if set && args.merge.is_some() {
            return Err(format!("error: --merge combines finished shards; {flag} does not go with it"));
        }
    }
    let mut cfg = en::Config::default();
    if let Some(d) = args.depth {
        if !(1..=4).contains(&d) {
            return Err(format!("error: --depth {d}: enumerate goes from depth 1 to 4"));
        }
        cfg.halide_depth = d;
        // Depth 2 allows op(op, op); deeper terms are chains (one op more per level).
        cfg.halide_max_size = if d == 1 { 1 } else { d.max(3) };
    }
    if args.include_unverified {
        return Err("error: --include-unverified: enumeration writes rules, and rules are never synthesized from specs that have not met their oracle".into());
    }
    if let Some(d) = args.x86_depth {
        if !(1..=2).contains(&d) {
            return Err(format!("error: --x86-depth {d}: x86 terms go to depth 1 or 2"));
        }
        cfg.x86_depth = d;
    }
    let lib = load_verified(&args.spec, args.include_unverified)?;
    let digest = cfg.digest(&lib);
    let rules_path = |shard: Shard| {
        if shard == Shard::WHOLE {
            args.out_dir.join(format!("{}_enumerated.egg", args.spec.target))
        } else {
            args.out_dir.join(format!("{}_enumerated.{}-of-{}.egg", args.spec.target, shard.k, shard.n))
        }
    };
    let write = |path: &std::path::Path, text: &str| {
        std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("error: {}: {e}", args.out_dir.display()))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| format!("error: writing {}: {e}", path.display()))
    };

    if let Some(n) = args.merge {
        if n == 0 {
            return Err("error: --merge 0: there is no shard to merge".into());
        }
        let mut shards = Vec::new();
        for k in 0..n {
            let p = checkpoint::path(&args.out_dir, &args.spec.target, Shard { k, n });
            let cp = checkpoint::Checkpoint::load(&p).map_err(|e| format!("error: {e}"))?;
            shards.push((p.display().to_string(), cp));
        }
        let all = en::driver::merge(&cfg, &digest, shards).map_err(|e| format!("error: {e}"))?;
        let path = rules_path(Shard::WHOLE);
        write(&path, &en::render_rules(&cfg, &all))?;
        let count: usize = all.iter().map(|u| u.rules.len()).sum();
        println!("merged {n} shards: {count} rules in {} units; wrote {}", all.len(), path.display());
        return Ok(ExitCode::SUCCESS);
    }

    let shard = match &args.shard {
        Some(s) => Shard::parse(s).map_err(|e| format!("error: {e}"))?,
        None => Shard::WHOLE,
    };
    let set = classify(&lib);
    let rel: std::collections::BTreeSet<(String, String)> = relevance(&lib, &set).into_iter().map(|r| (r.class, r.relevant_class)).collect();
    let class_of = |n: &str| set.class_of(n).map(|(c, _)| c.name.clone());
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let audit = misaal_verifier::audit::AuditConfig::default();
    let cache = std::sync::Mutex::new(misaal_verifier::audit::VerdictCache::load(std::path::Path::new(crate::VERDICT_CACHE)));
    let inp = en::Inputs { x86: &lib, halide: &halide, class_of: &class_of, relevant: &rel, audit: &audit, cache: &cache };
    let t_setup = t0.elapsed().as_secs_f64();

    let ck_path = checkpoint::path(&args.out_dir, &args.spec.target, shard);
    if args.resume && ck_path.exists() {
        println!("resuming from {}", ck_path.display());
    }
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("error: cannot start {threads} threads: {e}"))?;
    println!(
        "enumerate: {} units in shard {}/{}, Halide depth {} (at most {} ops), x86 depth {}, {} cases; setup {t_setup:.1} s",
        (0..cfg.signatures.len()).filter(|&u| shard.owns(u)).count(),
        shard.k,
        shard.n,
        cfg.halide_depth,
        cfg.halide_max_size,
        cfg.x86_depth,
        cfg.cases
    );
    let on_unit = |r: &en::UnitResult, secs: f64| {
        println!(
            "  [{}] {} Halide terms{}, {} x86 terms, {} matched, {} proofs: {} proved, {} refuted, {} unknown ({secs:.1} s)",
            r.sig,
            r.halide_terms,
            if r.halide_cut > 0 { format!(" ({} over the cap)", r.halide_cut) } else { String::new() },
            r.x86_terms,
            r.matched,
            r.proofs,
            r.rules.len(),
            r.refuted,
            r.unknown
        );
        for n in &r.not_proved {
            println!("    not kept: {n}");
        }
        let _ = cache.lock().expect("cache").save();
    };
    let opts = en::driver::RunOptions { shard, checkpoint: &ck_path, resume: args.resume, digest: digest.clone(), max_units: None, on_unit: &on_unit };
    let (cp, pools) = pool.install(|| en::driver::run_shard(&inp, &cfg, &opts)).map_err(|e| format!("error: {e}"))?;
    for (arity, terms, evaluated, cut) in pools.stats() {
        println!("  x86 pool, {arity} input(s): {terms} distinct terms of {evaluated} evaluated{}", if cut > 0 { format!(", {cut} depth-2 applications over the cap") } else { String::new() });
    }
    let units: Vec<_> = cp.units.values().cloned().collect();
    let count: usize = units.iter().map(|u| u.rules.len()).sum();
    let path = rules_path(shard);
    write(&path, &en::render_rules(&cfg, &units))?;
    let sum = |f: fn(&en::UnitResult) -> usize| units.iter().map(f).sum::<usize>();
    let (halide_terms, matched, proofs, refuted, unknown) = (sum(|u| u.halide_terms), sum(|u| u.matched), sum(|u| u.proofs), sum(|u| u.refuted), sum(|u| u.unknown));
    println!("enumerate: {count} rules proved ({matched} Halide terms matched, {proofs} proofs: {refuted} refuted, {unknown} unknown) in {:.1} s", t0.elapsed().as_secs_f64());
    println!("wrote {} and {}", path.display(), ck_path.display());
    let phase = if shard == Shard::WHOLE { "enumerate".to_string() } else { format!("enumerate {}/{}", shard.k, shard.n) };
    record(
        args,
        &phase,
        t0.elapsed().as_secs_f64(),
        count,
        format!("units={};halide_terms={halide_terms};matched={matched};proofs={proofs};refuted={refuted};unknown={unknown};depth={}", units.len(), cfg.halide_depth),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `--phase abstract`: the enumerated and swizzle rules (from `--out-dir`)
/// folded into abstract rules, every instance proved, written to
/// rulesets/<target>_synth.egg (or `--rules-out`).
fn abstract_phase(args: &SynthArgs) -> Result<ExitCode, String> {
    use misaal_synth::abstraction::{self, run::run as abstract_run};
    let t0 = Instant::now();
    if args.include_unverified {
        return Err("error: --include-unverified: abstraction writes rules, and rules are never synthesized from specs that have not met their oracle".into());
    }
    let mut concrete = Vec::new();
    let mut inputs = Vec::new();
    for (file, phase) in [("enumerated", "enumerate"), ("swizzles", "swizzles")] {
        let path = args.out_dir.join(format!("{}_{file}.egg", args.spec.target));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("error: cannot read {}: {e}; run `misaal synth --phase {phase}` first", path.display()))?;
        let c = abstraction::read_concrete(&path.display().to_string(), &text, phase)?;
        inputs.push(format!("{} ({} rules)", path.display(), c.len()));
        concrete.extend(c);
    }
    let lib = load_verified(&args.spec, false)?;
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let cfg = misaal_verifier::audit::AuditConfig::default();
    let cache = std::sync::Mutex::new(misaal_verifier::audit::VerdictCache::load(std::path::Path::new(crate::VERDICT_CACHE)));
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("error: cannot start {threads} threads: {e}"))?;
    let out_path = args.rules_out.clone().unwrap_or_else(|| misaal_rulesets::bundled_ruleset(&format!("{}_synth", args.spec.target)));
    let header = format!(
        "; {}: generated by misaal {} with `misaal synth --target {} --phase abstract`; do not edit.\n\
         ; Abstract lowering rules over element width (?bw), lane count (?n), vector size (?vsize)\n\
         ; and signedness (?sign), folded from the proved concrete rules of {}.\n\
         ; Every instance was proved by the verifier (Z3) on this machine's verified specs\n\
         ; before it was written; each rule's domain is exactly its proved instances.\n",
        out_path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
        env!("CARGO_PKG_VERSION"),
        args.spec.target,
        inputs.join(" and ")
    );
    let out = pool.install(|| abstract_run(&concrete, &lib, &halide, &cfg, &cache, &header, true));
    let _ = cache.lock().expect("cache").save();
    let out = out?;
    let tmp = out_path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &out.text).and_then(|()| std::fs::rename(&tmp, &out_path)).map_err(|e| format!("error: writing {}: {e}", out_path.display()))?;
    println!(
        "abstract: {} concrete rules in, {} templates, {} abstract rules out ({:.1}x; MISAAL: 5,806 into 329, 17.6x)",
        out.concrete,
        out.templates,
        out.rules,
        out.concrete as f64 / out.rules.max(1) as f64
    );
    println!("instances: {} tried, {} proved and written, {} refuted, {} unknown (never written)", out.candidates, out.instances, out.refuted, out.unknown);
    println!("legalize: {} split rules of lane-local Halide ops, {} proved instances of {} tried", out.split_rules, out.split_instances, out.split_tried);
    if !out.uncovered.is_empty() {
        println!("concrete rules not an instance of a written rule: {}", out.uncovered.join(", "));
    }
    println!("wrote {} in {:.1} s", out_path.display(), t0.elapsed().as_secs_f64());
    record(
        args,
        "abstract",
        t0.elapsed().as_secs_f64(),
        out.rules,
        format!(
            "concrete={};templates={};instances={};tried={};refuted={};unknown={};uncovered={};split_rules={};split_instances={}",
            out.concrete,
            out.templates,
            out.instances,
            out.candidates,
            out.refuted,
            out.unknown,
            out.uncovered.len(),
            out.split_rules,
            out.split_instances
        ),
    )?;
    Ok(ExitCode::SUCCESS)
}
