//! The targets a rule file can be written for, and what each one fixes for
//! its rules: the head that names its instructions (`(x86 ...)`, `(arm ...)`,
//! `(hvx ...)`), where its specs live, and the default domain of `?vsize*`.
//! The facts are the registry's ([`misaal_targets::TargetDesc`]), which the
//! spec parser, synthesis and the compiler read too, so rules and code
//! agree on widths; this module adds where a target's files are.

use misaal_targets::TargetDesc;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// A target of the registry, seen by the rule format: its description
/// (every field readable through `Deref`: `name`, `vector_widths`,
/// `pair_bits`, `rule_files`...) and the paths of its specs and rulesets.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TargetIsa(pub &'static TargetDesc);

impl std::ops::Deref for TargetIsa {
    type Target = TargetDesc;
    fn deref(&self) -> &TargetDesc {
        self.0
    }
}

/// x86-64, SSE to AVX-512 ([`misaal_targets::X86`]).
pub const X86: TargetIsa = TargetIsa(&misaal_targets::X86);
/// AArch64 NEON: 64-bit `D` and 128-bit `Q` registers.
pub const ARM: TargetIsa = TargetIsa(&misaal_targets::ARM);
/// Hexagon HVX in 128-byte mode: 1024-bit vectors; pairs are 2048-bit values.
pub const HVX: TargetIsa = TargetIsa(&misaal_targets::HVX);

pub const TARGETS: [&TargetIsa; 3] = [&X86, &ARM, &HVX];

impl TargetIsa {
    /// The target whose rule head (and spec folder) is `name`: a bundled
    /// one, or one [`misaal_targets::register`]ed in this process.
    pub fn by_name(name: &str) -> Option<&'static TargetIsa> {
        if let Some(t) = TARGETS.into_iter().find(|t| t.name == name) {
            return Some(t);
        }
        let desc = misaal_targets::by_name(name)?;
        static EXTRA: OnceLock<Mutex<Vec<&'static TargetIsa>>> = OnceLock::new();
        let mut extra = EXTRA.get_or_init(|| Mutex::new(Vec::new())).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = extra.iter().find(|t| std::ptr::eq(t.0, desc)) {
            return Some(t);
        }
        let t: &'static TargetIsa = Box::leak(Box::new(TargetIsa(desc)));
        extra.push(t);
        Some(t)
    }
    /// The registry's description.
    pub fn desc(&self) -> &'static TargetDesc {
        self.0
    }
    /// `isa/specs/<name>/`.
    pub fn spec_dir(&self) -> PathBuf {
        misaal_isa::bundled_spec_dir(self.name)
    }
    /// `rulesets/<name>.egg`: the synthesized rules (the hand-written ones
    /// are `<name>_hand.egg`).
    pub fn bundled_ruleset(&self) -> PathBuf {
        crate::bundled_ruleset(self.name)
    }
    /// Every rule file loaded by default for the target ([`TargetDesc::rule_files`]).
    pub fn default_rulesets(&self) -> Vec<PathBuf> {
        self.rule_files.iter().map(|f| crate::bundled_ruleset(f)).collect()
    }
    /// The default rule files' texts, joined by [`crate::read_sources`] (so
    /// an error is reported at its own file's line; a `(ruleset <name>)`
    /// line may open each, declaring it again is allowed).
    pub fn default_rules_text(&self) -> Result<String, String> {
        crate::read_sources(&self.default_rulesets())
    }
    /// `rulesets/<name>.verdicts.tsv`: the shipped proofs of the bundled rules.
    pub fn shipped_verdicts(&self) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("{}.verdicts.tsv", self.name))
    }
}
