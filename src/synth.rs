//! `misaal synth`: the options handed to [`misaal_synth::runner::Runner`],
//! which runs the pipeline and prints its progress.

use crate::{SpecArgs, load_verified};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct SynthArgs {
    /// `merge`: combine the finished shards' enumeration (`--shards N`)
    /// and run the phases after it, as the whole run would.
    #[arg(value_parser = ["merge"])]
    pub action: Option<String>,
    #[command(flatten)]
    pub spec: SpecArgs,
    /// Run one phase only: `relevance`, `swizzles` (discovery, classes and
    /// proved lowering rules) or `enumerate` (Halide and x86 terms matched
    /// by fingerprint, proved lowering rules) or `abstract` (those rules
    /// and the swizzle rules folded into abstract rules, every instance
    /// proved, written to rulesets/x86.egg, arm.egg or hvx.egg). Without it, all
    /// four in order, with a checkpoint after each.
    #[arg(long)]
    pub phase: Option<String>,
    /// enumerate: the deepest Halide term (default 3).
    #[arg(long)]
    pub depth: Option<u8>,
    /// enumerate: the deepest target term (x86 default 2, 1 is a quick
    /// run; ARM and HVX default 1, HVX's pair results also shuffled back
    /// into lane order). `--target-depth` is the same option.
    #[arg(long, alias = "target-depth")]
    pub x86_depth: Option<u8>,
    /// enumerate: only these units (Halide input signatures), e.g.
    /// `u8x16;u16x8,u16x8` (default: one and two inputs of each 128-bit
    /// integer type, and u8x16,i8x16); for small runs.
    #[arg(long, value_name = "SIGS")]
    pub units: Option<String>,
    /// enumerate: x86 terms over only these verified instructions
    /// (comma-separated; default all); for small runs.
    #[arg(long, value_name = "NAMES")]
    pub instructions: Option<String>,
    /// enumerate: run only shard K of N (units with index % N == K).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Continue where a killed run stopped (its checkpoints).
    #[arg(long)]
    pub resume: bool,
    /// enumerate and abstract: worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// `--phase enumerate`: combine the N shards' checkpoints into one rule
    /// file (`misaal synth merge --shards N` also runs the later phases).
    #[arg(long, value_name = "N")]
    pub merge: Option<usize>,
    /// `merge`: how many shards the run was split into.
    #[arg(long, value_name = "N")]
    pub shards: Option<usize>,
    /// abstract: where to write the abstract ruleset (default
    /// rulesets/x86.egg, arm.egg or hvx.egg).
    #[arg(long, value_name = "FILE")]
    pub rules_out: Option<PathBuf>,
    /// Also read specs that have not met their oracle (for study only:
    /// rules are never synthesized from them).
    #[arg(long)]
    pub include_unverified: bool,
    /// Only instructions whose CPUID features are all in this list, as the
    /// specs name them (`sse2,ssse3,sse4_1,sse4_2,avx,avx2`): rules for
    /// CPUs that stop there, and a much shorter search than over every
    /// AVX-512 spec (the pipeline tests use it).
    #[arg(long, value_name = "FEATURES")]
    pub cpu_features: Option<String>,
    /// abstract: leave out the legalization templates (splits, pads,
    /// expansions; tens of thousands of proved instances), for small runs
    /// that test the other phases. The bundled rule files have them.
    #[arg(long)]
    pub no_legalize: bool,
    /// Folder for the CSV reports.
    #[arg(long, default_value = "reports")]
    pub out_dir: PathBuf,
}

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
        no_legalize: args.no_legalize,
        out_dir: args.out_dir,
        verdict_cache: crate::VERDICT_CACHE.into(),
        load_specs: Box::new(move |include_unverified| load_verified(&spec, include_unverified)),
    };
    misaal_synth::runner::Runner::new(options).run().map(|_| ExitCode::SUCCESS)
}
