//! The runner's stop reasons and phase reports: a whole run stopped by
//! the enumeration's unit limit reports the phases that ran, does not run
//! the abstraction, and does not mark the enumeration done in the pipeline
//! checkpoint; one phase reports `PhaseDone`. (The bytes the phases write
//! are pinned by the CLI's tests/synth_pipeline.rs.)

use misaal_isa::{SpecLibrary, StatusTable};
use misaal_synth::pipeline::{self, PipelineCheckpoint};
use misaal_synth::runner::{Limits, Options, Runner, StopReason};
use std::path::PathBuf;

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("misaal-runner-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// HVX (the quicker target), one small unit, the shallowest terms.
fn options(out_dir: PathBuf, phase: Option<&str>) -> Options {
    Options {
        action: None,
        target: "hvx".into(),
        phase: phase.map(str::to_string),
        depth: Some(1),
        x86_depth: Some(1),
        units: Some("u16x8,u16x8".into()),
        instructions: None,
        shard: None,
        resume: false,
        jobs: Some(1),
        merge: None,
        shards: None,
        rules_out: Some(out_dir.join("hvx.egg")),
        include_unverified: false,
        cpu_features: None,
        // The legalization templates are tens of thousands of HVX
        // instances; the bundled file's own proofs cover them.
        no_legalize: true,
        verdict_cache: out_dir.join("verify.tsv"),
        out_dir,
        load_specs: Box::new(|_| {
            let dir = misaal_isa::bundled_spec_dir("hvx");
            let mut lib = SpecLibrary::load_dir(&dir).map_err(|d| d.to_string())?;
            lib.retain_verified(&StatusTable::for_spec_dir(&dir).map_err(|d| d.to_string())?);
            Ok(lib)
        }),
    }
}

#[test]
fn a_run_stopped_at_the_unit_limit_says_so_and_leaves_enumerate_undone() {
    let dir = scratch("limit");
    let report = Runner::new(options(dir.clone(), None)).with_limits(Limits { max_units: Some(0) }).run().expect("runs");
    assert_eq!(report.stop, StopReason::UnitLimit);
    let phases: Vec<&str> = report.phases.iter().map(|p| p.phase).collect();
    assert_eq!(phases, ["relevance", "swizzles", "enumerate"], "the abstraction must not run after a cut enumeration");
    assert!(!report.phases[2].complete);
    assert!(report.phases[..2].iter().all(|p| p.complete));
    assert!(!dir.join("hvx.egg").exists(), "no ruleset from a cut run");
    let ck = PipelineCheckpoint::load(&pipeline::path(&dir, "hvx")).expect("checkpoint after each finished phase");
    assert!(ck.is_done("swizzles") && !ck.is_done("enumerate"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_phase_reports_phase_done_and_its_files() {
    let dir = scratch("phase");
    let mut opts = options(dir.clone(), Some("relevance"));
    opts.depth = None;
    opts.x86_depth = None;
    opts.units = None;
    opts.jobs = None;
    opts.rules_out = None;
    let report = Runner::new(opts).run().expect("runs");
    assert_eq!(report.stop, StopReason::PhaseDone("relevance"));
    assert_eq!(report.phases.len(), 1);
    assert_eq!(report.phases[0].files, [dir.join("hvx_relevance.csv")]);
    assert!(report.phases[0].files[0].exists());
    let _ = std::fs::remove_dir_all(&dir);
}
