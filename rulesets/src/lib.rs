//! Rulesets (`rulesets/<target>.egg`) with provenance, and their location.
//!
//! Owns: the on-disk ruleset format and where bundled rulesets live. Knows
//! nothing of how rules were found or proved.

use std::path::PathBuf;

/// `rulesets/<target>.egg` in this repository.
pub fn bundled_ruleset(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("{target}.egg"))
}
