//! Running a shard of units with a checkpoint, and merging shards. A unit's
//! result depends only on the configuration and the unit, so any split of
//! the units, run in any number of goes, merges to the whole run.

use super::checkpoint::Checkpoint;
use super::{Config, Inputs, Shard, UnitResult, TargetPools, run_unit};
use std::path::Path;
use std::time::Instant;

pub struct RunOptions<'a> {
    pub shard: Shard,
    /// Where the checkpoint lives; rewritten after every unit.
    pub checkpoint: &'a Path,
    /// Continue from the checkpoint if there is one.
    pub resume: bool,
    /// `Config::digest` of this run.
    pub digest: String,
    /// Stop after this many new units (what a kill leaves behind, for tests).
    pub max_units: Option<usize>,
    /// Called after each unit with its wall time in seconds.
    pub on_unit: &'a (dyn Fn(&UnitResult, f64) + Sync),
}

/// Runs this shard's unfinished units, checkpointing after each; returns the
/// checkpoint (every finished unit of the shard) and the x86 pools built.
pub fn run_shard(inp: &Inputs, cfg: &Config, opts: &RunOptions) -> Result<(Checkpoint, TargetPools), String> {
    let mut cp = if opts.resume && opts.checkpoint.exists() {
        let cp = Checkpoint::load(opts.checkpoint).map_err(|e| format!("{e}; delete it (or run without --resume) to start over"))?;
        if cp.digest != opts.digest || cp.shard != opts.shard {
            return Err(format!("{} is from another configuration, spec set or shard; run without --resume to start over", opts.checkpoint.display()));
        }
        cp
    } else {
        Checkpoint::new(opts.digest.clone(), opts.shard)
    };
    let mut pools = TargetPools::new();
    let todo: Vec<usize> = (0..cfg.signatures.len()).filter(|&u| opts.shard.owns(u) && !cp.units.contains_key(&u)).collect();
    for (done, u) in todo.into_iter().enumerate() {
        if opts.max_units.is_some_and(|m| done >= m) {
            break;
        }
        let t = Instant::now();
        let r = run_unit(inp, cfg, &mut pools, u)?;
        (opts.on_unit)(&r, t.elapsed().as_secs_f64());
        cp.units.insert(u, r);
        cp.save(opts.checkpoint)?;
    }
    Ok((cp, pools))
}

/// The units of all shards in unit order; every unit must be present and
/// every checkpoint made under `digest`.
pub fn merge(cfg: &Config, digest: &str, shards: Vec<(String, Checkpoint)>) -> Result<Vec<UnitResult>, String> {
    let mut units = std::collections::BTreeMap::new();
    for (name, cp) in shards {
        if cp.digest != digest {
            return Err(format!("{name} was made with another configuration or spec set; run that shard again"));
        }
        units.extend(cp.units);
    }
    let missing: Vec<usize> = (0..cfg.signatures.len()).filter(|u| !units.contains_key(u)).collect();
    if !missing.is_empty() {
        return Err(format!("units {missing:?} are in no shard's checkpoint; finish those shards (--resume) first"));
    }
    Ok(units.into_values().collect())
}
