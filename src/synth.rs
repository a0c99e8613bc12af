//! `misaal synth`: the options handed to [`misaal_synth::runner::Runner`],
//! which runs the pipeline and prints its progress.

use crate::{SynthArgs, load_verified};
use std::process::ExitCode;

pub fn run(args: SynthArgs) -> Result<ExitCode, String> {
    let spec = args.spec;
    let options = misaal_synth::runner::Options {
        action: args.action,
        target: spec.target.clone(),
        phase: args.phase,
        depth: args.depth,
        x86_depth: args.x86_depth,
        units: args.units,
        instructions: args.instructions,
        shard: args.shard,
        resume: args.resume,
        jobs: args.jobs,
        merge: args.merge,
        shards: args.shards,
        rules_out: args.rules_out,
        include_unverified: args.include_unverified,
        cpu_features: args.cpu_features,
        out_dir: args.out_dir,
        verdict_cache: crate::VERDICT_CACHE.into(),
        load_specs: Box::new(move |include_unverified| load_verified(&spec, include_unverified)),
    };
    misaal_synth::runner::Runner::new(options).run().map(|_| ExitCode::SUCCESS)
}
