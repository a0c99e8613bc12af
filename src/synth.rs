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
        Some(p @ ("swizzles" | "enumerate" | "abstract")) => {
            return Err(format!("error: --phase {p}: this phase of synthesis is not built yet; only `relevance` is"));
        }
        Some(p) => return Err(format!("error: --phase {p}: unknown phase (relevance, swizzles, enumerate, abstract)")),
        None => {
            return Err("error: whole-pipeline synthesis is not built yet; run one phase: --phase relevance".into());
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
    Ok(ExitCode::SUCCESS)
}
