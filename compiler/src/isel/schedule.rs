//! Stage 3, schedule: equality saturation under explicit limits.
//!
//! A phase runs one ruleset an iteration at a time (`EGraph::step_rules`)
//! and stops at the first of: saturation (an iteration changed nothing),
//! the iteration limit, the e-node limit (rows in every table, checked after
//! each iteration, as egg checks it), or the time limit (checked before
//! each iteration). Why it stopped is recorded, as egg's `StopReason` does,
//! with egglog's per-rule match counts and search-and-apply times summed
//! over the phase's iterations. A phase that stops at a limit is not an
//! error: extraction takes what the e-graph holds then.

use egglog::EGraph;
use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Limits {
    pub iterations: usize,
    /// E-nodes: rows of every egglog table, inputs included.
    pub nodes: usize,
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { iterations: 30, nodes: 200_000, time: Duration::from_secs(2) }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum StopReason {
    /// An iteration found nothing new.
    Saturated,
    IterationLimit(usize),
    NodeLimit(usize),
    /// The limit, in seconds.
    TimeLimit(f64),
    /// egglog reported an error; the e-graph is kept as it was.
    Error(String),
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Saturated => write!(f, "saturated"),
            StopReason::IterationLimit(n) => write!(f, "iteration limit ({n})"),
            StopReason::NodeLimit(n) => write!(f, "node limit ({n})"),
            StopReason::TimeLimit(s) => write!(f, "time limit ({s:.3} s)"),
            StopReason::Error(e) => write!(f, "error: {e}"),
        }
    }
}

/// One rule's work in a phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuleStats {
    pub matches: usize,
    pub search_apply: Duration,
}

#[derive(Clone, Debug)]
pub struct PhaseReport {
    pub phase: String,
    pub stop: StopReason,
    pub iterations: usize,
    /// E-nodes when the phase began and when it stopped.
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub secs: f64,
    /// By the rule's `:name`.
    pub rules: BTreeMap<String, RuleStats>,
}

/// Runs `ruleset` on `egraph` until saturation or a limit.
pub fn run(egraph: &mut EGraph, phase: &str, ruleset: &str, limits: &Limits) -> PhaseReport {
    let start = Instant::now();
    let nodes_before = egraph.num_tuples();
    let mut rep = PhaseReport { phase: phase.into(), stop: StopReason::Saturated, iterations: 0, nodes_before, nodes_after: nodes_before, secs: 0.0, rules: BTreeMap::new() };
    rep.stop = loop {
        if rep.iterations >= limits.iterations {
            break StopReason::IterationLimit(limits.iterations);
        }
        if start.elapsed() >= limits.time {
            break StopReason::TimeLimit(limits.time.as_secs_f64());
        }
        let r = match egraph.step_rules(ruleset) {
            Ok(r) => r,
            Err(e) => break StopReason::Error(e.to_string()),
        };
        rep.iterations += 1;
        for (rule, n) in &r.num_matches_per_rule {
            rep.rules.entry(rule.to_string()).or_default().matches += n;
        }
        for (rule, t) in &r.search_and_apply_time_per_rule {
            rep.rules.entry(rule.to_string()).or_default().search_apply += *t;
        }
        rep.nodes_after = egraph.num_tuples();
        if !r.updated {
            break StopReason::Saturated;
        }
        if rep.nodes_after > limits.nodes {
            break StopReason::NodeLimit(limits.nodes);
        }
    };
    rep.nodes_after = egraph.num_tuples();
    rep.secs = start.elapsed().as_secs_f64();
    rep
}
