//! Generated egglog rulesets (`rulesets/<target>.egg`) with provenance, and
//! their loader.
//!
//! Owns: the on-disk ruleset format. Knows nothing of how rules were found.
