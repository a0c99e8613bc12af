//! The method that turns a kernel's timings into cycles per operation:
//! a visit converts ticks to cycles with the reference chain timed in that
//! same visit ([`Clock`]); every loop ([`Job`]) is visited in passes over
//! all, alternately forwards and backwards, then the unsettled ones again
//! ([`visit_all`]); its cost is its fastest visit that another confirms.
//! `misaal isa measure` picks the specs and writes the table.

use crate::{Kernel, Loops, REFERENCE, Timer, Visit, confirmed_min};
use std::path::Path;

/// Chains of one-cycle operations on every AVX2 core; the fastest in a
/// run is its clock.
pub const CLOCK_CHAINS: [&str; 4] = [REFERENCE, "_mm256_sub_epi32", "_mm256_add_epi64", "_mm256_xor_si256"];

/// Two visits agreeing within this (relative) confirm a fastest time.
pub const CONFIRM: f64 = 0.02;
/// A job is settled when this many visits lie within [`CONFIRM`] of its
/// estimate.
pub const SETTLED: usize = 4;
/// How far above the fastest reference a visit's own reference may be
/// and still convert its timings (the core clock here moves by about 5%).
pub const CLOCK_SLACK: f64 = 0.05;
/// Rounds over the unsettled jobs, at most, per pass over all.
pub const EXTRA: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Latency,
    Throughput,
}

/// The fastest the reference has run so far in this run, as timestamp
/// ticks per core cycle: the highest clock seen, since the reference's
/// chain cannot run faster than one operation per cycle.
#[derive(Clone, Copy)]
pub struct Clock {
    /// Ticks per cycle: the lowest seen (the highest clock).
    pub floor: f64,
}

impl Clock {
    pub fn new(floor: f64) -> Self {
        Clock { floor }
    }

    /// The ticks per cycle to convert visit `v`'s timings with: those of
    /// its own reference runs, which track the clock as it moves, but at
    /// most [`CLOCK_SLACK`] above the floor. Programs on the other CPUs
    /// sometimes slow the reference chain itself, for a second or more,
    /// which would make every kernel timed meanwhile look faster (here
    /// 1-cycle operations came out at 0.80 cycles); past the slack the
    /// clock is taken to be the highest seen, which can only overstate a
    /// time.
    pub fn ticks_per_cycle(&self, v: &Visit) -> f64 {
        v.ticks_per_cycle.min(self.floor * (1.0 + CLOCK_SLACK))
    }

    pub fn see(&mut self, v: &Visit) {
        self.floor = self.floor.min(v.ticks_per_cycle);
    }
}

/// One loop kind of one spec (or, with no spec, the reference's
/// throughput), its loop count and its visits so far.
pub struct Job {
    pub spec: Option<usize>,
    pub kind: Kind,
    pub loops: Loops,
    pub n: u64,
    pub visits: Vec<Visit>,
}

impl Job {
    pub fn new(spec: Option<usize>, kind: Kind, loops: Loops) -> Self {
        Job { spec, kind, loops, n: 0, visits: Vec::new() }
    }

    /// Cycles per operation: the fastest visit that another confirms.
    pub fn estimate(&self, clock: Clock) -> Option<f64> {
        confirmed_min(&self.per_op(clock), CONFIRM)
    }

    /// Whether [`SETTLED`] visits lie within [`CONFIRM`] of the estimate.
    pub fn settled(&self, clock: Clock) -> bool {
        let v = self.per_op(clock);
        confirmed_min(&v, CONFIRM).is_some_and(|e| v.iter().filter(|&&x| x <= e * (1.0 + CONFIRM)).count() >= SETTLED)
    }

    /// [`Job::estimate`], or with none the median visit.
    pub fn value(&self, clock: Clock) -> f64 {
        self.estimate(clock).unwrap_or_else(|| {
            let mut v = self.per_op(clock);
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
    }

    pub fn per_op(&self, clock: Clock) -> Vec<f64> {
        self.visits.iter().map(|v| v.per_op(&self.loops, clock.ticks_per_cycle(v))).collect()
    }

    pub fn label(&self, specs: &[(&str, &Kernel)]) -> String {
        let name = self.spec.map_or(REFERENCE, |s| specs[s].0);
        format!("{name} ({})", if self.kind == Kind::Latency { "latency" } else { "throughput" })
    }
}

/// Every visit of every job, for studying the method
/// (`MISAAL_MEASURE_DUMP=file`): label, per-operation cycles of the long
/// loop, nanoBench's long-minus-short difference (both converted as the
/// estimates are) and the visit's own reference ticks per cycle, one
/// visit per line, each job's in the order of its visits.
pub fn dump(path: &Path, jobs: &[Job], specs: &[(&str, &Kernel)], clock: Clock) -> Result<(), String> {
    let mut text = String::from("job,visit,per_op,difference,ticks_per_cycle\n");
    for j in jobs {
        for (k, v) in j.visits.iter().enumerate() {
            let tpc = clock.ticks_per_cycle(v);
            let (p, d) = (v.per_op(&j.loops, tpc), v.difference(&j.loops, tpc));
            text.push_str(&format!("{},{k},{p:.4},{d:.4},{:.4}\n", j.label(specs), v.ticks_per_cycle));
        }
    }
    std::fs::write(path, text).map_err(|e| format!("error: cannot write {}: {e}", path.display()))
}

/// How many passes over all the jobs ran, how many extra rounds over the
/// unsettled ones, and how many were unsettled after the passes.
pub struct Rounds {
    pub passes: usize,
    pub extra: usize,
    pub revisited: usize,
}

/// Visits every job in `passes` passes over all (enough for `repeats`
/// timed runs of each, at least two), alternately forwards and backwards,
/// then the unsettled jobs in up to [`EXTRA`] rounds a pass. `reference`
/// is the clock chain's latency loops and its loop count.
pub fn visit_all(timer: &Timer, jobs: &mut [Job], clock: &mut Clock, reference: (&Loops, u64), repeats: usize) -> Rounds {
    let visit = |j: &mut Job, clock: &mut Clock| {
        let v = timer.visit(&j.loops, j.n, reference.0, reference.1);
        clock.see(&v);
        j.visits.push(v);
    };
    let passes = repeats.div_ceil(timer.repeats).max(2);
    for p in 0..passes {
        for k in 0..jobs.len() {
            let i = if p % 2 == 0 { k } else { jobs.len() - 1 - k };
            visit(&mut jobs[i], clock);
        }
    }
    let mut extra = 0;
    let mut revisited = 0;
    while extra < EXTRA * passes {
        let unsettled: Vec<usize> = (0..jobs.len()).filter(|&i| !jobs[i].settled(*clock)).collect();
        if unsettled.is_empty() {
            break;
        }
        if extra == 0 {
            revisited = unsettled.len();
        }
        for &i in &unsettled {
            visit(&mut jobs[i], clock);
        }
        extra += 1;
    }
    Rounds { passes, extra, revisited }
}
