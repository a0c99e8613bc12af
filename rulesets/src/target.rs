//! The targets a rule file can be written for, and what each one fixes for
//! its rules: the head that names its instructions (`(x86 ...)`, `(arm ...)`,
//! `(hvx ...)`), where its specs live, and the default domain of `?vsize*`.
//! The compiler reads the same table, so rules and code agree on widths.

use std::path::PathBuf;

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TargetIsa {
    /// The rule head, the spec folder `isa/specs/<name>/`, the bundled
    /// ruleset `rulesets/<name>.egg` and the `target` of its spec headers.
    pub name: &'static str,
    /// Register widths in bits: the default domain of `?vsize*`.
    pub vector_widths: &'static [i128],
    /// A register pair's width, where the target has pairs as operands and
    /// results (HVX's `pair1024` is 2048 bits); 0 if it has none.
    pub pair_bits: u32,
    /// The bundled rule files (`rulesets/<file>.egg`) the compiler, bench
    /// and `misaal verify --rules <name>` load by default, in order: ARM's
    /// ARM's and HVX's hand-written rules (`<name>_hand.egg`), then the
    /// rules `misaal synth` writes (`<name>.egg`); x86's synthesized rules
    /// alone, which re-derive or cover every hand-written x86 rule that can
    /// be verified here (`x86_hand.egg` is the rediscovery corpus, loaded
    /// with `--rules`).
    pub rule_files: &'static [&'static str],
}

pub const X86: TargetIsa = TargetIsa { name: "x86", vector_widths: &[128, 256, 512], pair_bits: 0, rule_files: &["x86"] };
/// AArch64 NEON: 64-bit `D` and 128-bit `Q` registers.
pub const ARM: TargetIsa = TargetIsa { name: "arm", vector_widths: &[64, 128], pair_bits: 0, rule_files: &["arm_hand", "arm"] };
/// Hexagon HVX in 128-byte mode: 1024-bit vectors; pairs are 2048-bit values.
pub const HVX: TargetIsa = TargetIsa { name: "hvx", vector_widths: &[1024], pair_bits: 2048, rule_files: &["hvx_hand", "hvx"] };

pub const TARGETS: [&TargetIsa; 3] = [&X86, &ARM, &HVX];

impl TargetIsa {
    /// The target whose rule head (and spec folder) is `name`.
    pub fn by_name(name: &str) -> Option<&'static TargetIsa> {
        TARGETS.into_iter().find(|t| t.name == name)
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
    /// Every rule file loaded by default for the target ([`Self::rule_files`]).
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
