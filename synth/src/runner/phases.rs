//! The four phases of [`super::Runner`]: each reads the options, writes
//! its files into the out folder (the abstract phase the ruleset) and its
//! row of reports/synth_<target>.csv, and returns its [`PhaseReport`].

use super::{Limits, Options, PhaseReport, audit_config, enum_config, record, spinner, style_bar, synth_library, target};
use indicatif::ProgressBar;
use misaal_datalog::{classify, relevance};
use misaal_reports::{RelevanceRow, write_relevance_csv};
use std::time::Instant;

pub(super) fn relevance_phase(args: &Options) -> Result<PhaseReport, String> {
    let pb = spinner("relevance");
    pb.set_message("classes and relevance sets");
    let t0 = Instant::now();
    let lib = synth_library(args, args.include_unverified)?;
    let set = classify(&lib);
    let t_classes = t0.elapsed();
    let t1 = Instant::now();
    let rel = relevance(&lib, &set);
    let t_rel = t1.elapsed();
    pb.finish_and_clear();
    let rows: Vec<RelevanceRow> = rel
        .iter()
        .map(|r| RelevanceRow { class: r.class.clone(), relevant_class: r.relevant_class.clone(), kind: r.kind.as_str().into(), witness: r.witness.clone() })
        .collect();
    std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("error: {}: {e}", args.out_dir.display()))?;
    let path = args.out_dir.join(format!("{}_relevance.csv", args.target));
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
    let cuts = misaal_datalog::budget_cuts();
    if cuts > 0 {
        println!("relevance: {cuts} lane matches stopped at the step budget ({} steps; long commutative sums, deep select chains) and not counted", misaal_datalog::relevance::MATCH_STEPS);
    }
    println!("wrote {}", path.display());
    let wall = t0.elapsed().as_secs_f64();
    record(
        args,
        "relevance",
        wall,
        rel.len(),
        format!(
            "specs={};classes={};with_relevant={with};direct={direct};generalized={}{}",
            lib.len(),
            set.classes.len(),
            rel.len() - direct,
            if cuts > 0 { format!(";match_budget_cuts={cuts}") } else { String::new() }
        ),
    )?;
    Ok(PhaseReport {
        phase: "relevance",
        complete: true,
        files: vec![path],
        summary: format!("relevance  {wall:>7.1} s  {} pairs over {} classes, {with} with a relevant class (MISAAL: 16 h for x86)", rel.len(), set.classes.len()),
    })
}

/// `--phase swizzles`: the permutations the verified instructions perform or
/// need, by class, into reports/<target>_swizzles.csv.
pub(super) fn swizzles(args: &Options) -> Result<PhaseReport, String> {
    let t0 = Instant::now();
    let lib = synth_library(args, args.include_unverified)?;
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
    let path = args.out_dir.join(format!("{}_swizzles.csv", args.target));
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
    let t = target(args)?;
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let libs = misaal_verifier::audit::Libraries { target: &lib, halide: &halide };
    let cfg = audit_config(t);
    let cache = std::sync::Mutex::new(misaal_verifier::audit::VerdictCache::load(&args.verdict_cache));
    let operand_bits = |name: &str| lib.get(name).and_then(|(i, _)| i.params.iter().map(|p| p.ty.width()).filter(|w| *w >= 64).max());
    let cands = crate::swizzle_rules::candidates(&found, t.name(), operand_bits);
    let mut kept = if t.name() == "x86" {
        String::from(
            "; Swizzle lowering rules synthesized by `misaal synth --phase swizzles`:\n\
             ; one per data-movement instruction whose permutation is an interleave,\n\
             ; a per-128-bit-lane interleave, a broadcast or a block selection,\n\
             ; each proved by the verifier at every instantiation before it is written.\n\
             ; Generated; the abstract phase folds them into rulesets/x86.egg.\n(ruleset x86)\n",
        )
    } else {
        format!(
            "; Swizzle lowering rules synthesized by `misaal synth --target {0} --phase swizzles`:\n\
             ; one per data-movement instruction whose permutation is an interleave,\n\
             ; a broadcast or a block selection, each proved by the verifier at every\n\
             ; instantiation before it is written. Generated; the abstract phase folds\n\
             ; them into rulesets/{1}.egg.\n(ruleset {0})\n",
            t.name(),
            t.output
        )
    };
    let (mut proved, mut failed) = (0, Vec::new());
    let pb = ProgressBar::new(cands.len() as u64);
    style_bar(&pb);
    pb.set_prefix("swizzles");
    pb.set_message("lowering rules proved");
    for c in &cands {
        pb.inc(1);
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
    pb.finish_and_clear();
    let _ = cache.lock().expect("cache").save();
    let rules_path = args.out_dir.join(format!("{}_swizzles.egg", args.target));
    let tmp = rules_path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &kept).and_then(|()| std::fs::rename(&tmp, &rules_path)).map_err(|e| format!("error: writing {}: {e}", rules_path.display()))?;
    println!("lowering rules: {} candidates, {proved} proved and written to {}, {} not", cands.len(), rules_path.display(), failed.len());
    for f in failed.iter().take(10) {
        println!("  not kept: {f}");
    }
    let wall = t0.elapsed().as_secs_f64();
    record(args, "swizzles", wall, found.len(), format!("specs={};classes={};rule_candidates={};rules_proved={proved}", lib.len(), by_class.len(), cands.len()))?;
    Ok(PhaseReport {
        phase: "swizzles",
        complete: true,
        files: vec![path, rules_path],
        summary: format!("swizzles   {wall:>7.1} s  {} swizzles in {} classes (MISAAL: 243 in 10), {proved} lowering rules proved", found.len(), by_class.len()),
    })
}

/// `--phase enumerate`: Halide and x86 terms matched by fingerprint, each
/// match proved before it is written to reports/<target>_enumerated.egg.
/// With `--shard K/N` only every N-th unit runs and the rules go to
/// `<target>_enumerated.K-of-N.egg`; `--merge N` combines the N shards'
/// checkpoints into the same file a whole run writes.
pub(super) fn enumerate(args: &Options, merge: Option<usize>, limits: Limits) -> Result<PhaseReport, String> {
    use crate::enumerate::{self as en, Shard, checkpoint};
    let t0 = Instant::now();
    for (flag, set) in [("--shard", args.shard.is_some()), ("--resume", args.resume), ("--jobs", args.jobs.is_some())] {
        if set && args.merge.is_some() {
            return Err(format!("error: --merge combines finished shards; {flag} does not go with it"));
        }
    }
    if args.include_unverified {
        return Err("error: --include-unverified: enumeration writes rules, and rules are never synthesized from specs that have not met their oracle".into());
    }
    let cfg = enum_config(args)?;
    let lib = synth_library(args, args.include_unverified)?;
    let digest = cfg.digest(&lib);
    let rules_path = |shard: Shard| {
        if shard == Shard::WHOLE {
            args.out_dir.join(format!("{}_enumerated.egg", args.target))
        } else {
            args.out_dir.join(format!("{}_enumerated.{}-of-{}.egg", args.target, shard.k, shard.n))
        }
    };
    let write = |path: &std::path::Path, text: &str| {
        std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("error: {}: {e}", args.out_dir.display()))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| format!("error: writing {}: {e}", path.display()))
    };

    if let Some(n) = merge {
        if n == 0 {
            return Err("error: --merge 0: there is no shard to merge".into());
        }
        let mut shards = Vec::new();
        for k in 0..n {
            let p = checkpoint::path(&args.out_dir, &args.target, Shard { k, n });
            let cp = checkpoint::Checkpoint::load(&p).map_err(|e| format!("error: {e}"))?;
            shards.push((p.display().to_string(), cp));
        }
        let all = en::driver::merge(&cfg, &digest, shards).map_err(|e| format!("error: {e}"))?;
        let path = rules_path(Shard::WHOLE);
        write(&path, &en::render_rules(&cfg, &all))?;
        let count: usize = all.iter().map(|u| u.rules.len()).sum();
        println!("merged {n} shards: {count} rules in {} units; wrote {}", all.len(), path.display());
        let wall = t0.elapsed().as_secs_f64();
        let sum = |f: fn(&en::UnitResult) -> usize| all.iter().map(f).sum::<usize>();
        let (halide_terms, matched, proofs, refuted, unknown) = (sum(|u| u.halide_terms), sum(|u| u.matched), sum(|u| u.proofs), sum(|u| u.refuted), sum(|u| u.unknown));
        record(
            args,
            "enumerate",
            wall,
            count,
            format!("units={};halide_terms={halide_terms};matched={matched};proofs={proofs};refuted={refuted};unknown={unknown};depth={};merged_shards={n}", all.len(), cfg.halide_depth),
        )?;
        return Ok(PhaseReport { phase: "enumerate", complete: true, files: vec![path], summary: format!("enumerate  {wall:>7.1} s  {count} concrete rules proved from {} units, merged from {n} shards (each shard's time is in its synth_<target>.K-of-N.csv)", all.len()) });
    }

    let shard = match &args.shard {
        Some(s) => Shard::parse(s).map_err(|e| format!("error: {e}"))?,
        None => Shard::WHOLE,
    };
    let set = classify(&lib);
    let rel: std::collections::BTreeSet<(String, String)> = relevance(&lib, &set).into_iter().map(|r| (r.class, r.relevant_class)).collect();
    let class_of = |n: &str| set.class_of(n).map(|(c, _)| c.name.clone());
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let audit = audit_config(cfg.target);
    let cache = std::sync::Mutex::new(misaal_verifier::audit::VerdictCache::load(&args.verdict_cache));
    let inp = en::Inputs { target: &lib, halide: &halide, class_of: &class_of, relevant: &rel, audit: &audit, cache: &cache };
    let t_setup = t0.elapsed().as_secs_f64();

    let ck_path = checkpoint::path(&args.out_dir, &args.target, shard);
    if args.resume && ck_path.exists() {
        println!("resuming from {}", ck_path.display());
    }
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("error: cannot start {threads} threads: {e}"))?;
    let owned = (0..cfg.signatures.len()).filter(|&u| shard.owns(u)).count();
    let pb = ProgressBar::new(owned as u64);
    style_bar(&pb);
    pb.set_prefix("enumerate");
    pb.set_message("units");
    // A resumed run starts the bar at the units already checkpointed.
    if args.resume
        && let Ok(cp) = checkpoint::Checkpoint::load(&ck_path)
    {
        pb.set_position(cp.units.len() as u64);
    }
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
        pb.inc(1);
        pb.suspend(|| print_unit(r, secs, cfg.target.name()));
        let _ = cache.lock().expect("cache").save();
    };
    #[allow(clippy::items_after_statements)]
    fn print_unit(r: &en::UnitResult, secs: f64, target: &str) {
        println!(
            "  [{}] {} Halide terms{}, {} {target} terms, {} matched, {} proofs: {} proved, {} refuted, {} unknown ({secs:.1} s)",
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
    }
    let opts = en::driver::RunOptions { shard, checkpoint: &ck_path, resume: args.resume, digest: digest.clone(), max_units: limits.max_units, on_unit: &on_unit };
    let (cp, pools) = pool.install(|| en::driver::run_shard(&inp, &cfg, &opts)).map_err(|e| format!("error: {e}"))?;
    pb.finish_and_clear();
    for (arity, terms, evaluated, cut) in pools.stats() {
        println!("  {} pool, {arity} input(s): {terms} distinct terms of {evaluated} evaluated{}", cfg.target.name(), if cut > 0 { format!(", {cut} depth-2 applications over the cap") } else { String::new() });
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
    let wall = t0.elapsed().as_secs_f64();
    record(
        args,
        &phase,
        wall,
        count,
        format!("units={};halide_terms={halide_terms};matched={matched};proofs={proofs};refuted={refuted};unknown={unknown};depth={}", units.len(), cfg.halide_depth),
    )?;
    Ok(PhaseReport {
        phase: "enumerate",
        complete: cp.units.len() == owned,
        files: vec![path],
        summary: format!("enumerate  {wall:>7.1} s  {count} concrete rules proved from {} units, {halide_terms} Halide terms, {proofs} proofs ({refuted} refuted, {unknown} unknown)", units.len()),
    })
}

/// `--phase abstract`: the enumerated and swizzle rules (from `--out-dir`)
/// folded into abstract rules, every instance proved, written to
/// rulesets/<target>_synth.egg (or `--rules-out`).
pub(super) fn abstract_phase(args: &Options) -> Result<PhaseReport, String> {
    use crate::abstraction::{self, run::run_for as abstract_run};
    let t0 = Instant::now();
    if args.include_unverified {
        return Err("error: --include-unverified: abstraction writes rules, and rules are never synthesized from specs that have not met their oracle".into());
    }
    let mut concrete = Vec::new();
    let mut inputs = Vec::new();
    for (file, phase) in [("enumerated", "enumerate"), ("swizzles", "swizzles")] {
        let path = args.out_dir.join(format!("{}_{file}.egg", args.target));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("error: cannot read {}: {e}; run `misaal synth --phase {phase}` first", path.display()))?;
        let c = abstraction::read_concrete(&path.display().to_string(), &text, phase)?;
        // File names only: a merged run and a whole run in other folders write the same bytes.
        inputs.push(format!("{}_{file}.egg ({} rules)", args.target, c.len()));
        concrete.extend(c);
    }
    let lib = synth_library(args, false)?;
    let t = target(args)?;
    let halide = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    let cfg = audit_config(t);
    let cache = std::sync::Mutex::new(misaal_verifier::audit::VerdictCache::load(&args.verdict_cache));
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("error: cannot start {threads} threads: {e}"))?;
    let out_path = args.rules_out.clone().unwrap_or_else(|| misaal_rulesets::bundled_ruleset(t.output));
    let header = format!(
        "; {}: generated by misaal {} with `misaal synth --target {}` (its abstract phase); do not edit.\n\
         ; Abstract lowering rules over element width (?bw), lane count (?n), vector size (?vsize)\n\
         ; and signedness (?sign), folded from the proved concrete rules of {}.\n\
         ; Every instance was proved by the verifier (Z3) on this machine's verified specs\n\
         ; before it was written; each rule's domain is exactly its proved instances.\n",
        out_path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
        env!("CARGO_PKG_VERSION"),
        args.target,
        inputs.join(" and ")
    );
    let both = t.isa.rule_files.iter().any(|f| *f == format!("{}_hand", t.name()));
    let header = if both {
        format!("{header}; The hand-written rules are rulesets/{0}_hand.egg; the compiler, bench and\n; `misaal verify --rules {0}` load both files.\n", t.name())
    } else {
        format!(
            "{header}; The compiler, bench and `misaal verify --rules {0}` load this file alone; the\n; hand-written rulesets/{0}_hand.egg is the rediscovery corpus (tests/rediscovery.rs).\n",
            t.name()
        )
    };
    let pb = spinner("abstract");
    pb.set_message(format!("{} concrete rules: templates, every instance proved", concrete.len()));
    let with_legalize = !args.no_legalize;
    let out = pool.install(|| abstract_run(t, &concrete, &lib, &halide, &cfg, &cache, &header, with_legalize));
    pb.finish_and_clear();
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
    println!(
        "legalize: {} split rules of lane-local Halide ops, {} proved instances of {} tried ({} refuted, {} unknown)",
        out.split_rules, out.split_instances, out.split_tried, out.split_refuted, out.split_unknown
    );
    if !out.loop_dropped.is_empty() {
        println!("left out as rewrite loops ({} proved Halide-level instances): {}", out.loop_dropped.len(), out.loop_dropped.join(", "));
    }
    if !out.uncovered.is_empty() {
        println!("concrete rules not an instance of a written rule: {}", out.uncovered.join(", "));
    }
    let p = out.times;
    println!(
        "wrote {} in {:.1} s (template instances {:.1} s, split search {:.1} s, split proofs {:.1} s, audit {:.1} s)",
        out_path.display(),
        t0.elapsed().as_secs_f64(),
        p.instances,
        p.split_search,
        p.split_proofs,
        p.audit
    );
    let wall = t0.elapsed().as_secs_f64();
    record(
        args,
        "abstract",
        wall,
        out.rules,
        format!(
            "concrete={};templates={};instances={};tried={};refuted={};unknown={};uncovered={};split_rules={};split_instances={};loop_dropped={}",
            out.concrete,
            out.templates,
            out.instances,
            out.candidates,
            out.refuted,
            out.unknown,
            out.uncovered.len(),
            out.split_rules,
            out.split_instances,
            out.loop_dropped.len()
        ),
    )?;
    Ok(PhaseReport {
        phase: "abstract",
        complete: true,
        files: vec![out_path],
        summary: format!(
            "abstract   {wall:>7.1} s  {} concrete into {} abstract rules, {:.1}x (MISAAL: 5,806 into 329, 17.6x); {} instances proved; {} split rules",
            out.concrete,
            out.rules,
            out.concrete as f64 / out.rules.max(1) as f64,
            out.instances,
            out.split_rules
        ),
    })
}
