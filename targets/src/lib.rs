//! The target registry: one [`TargetDesc`] per instruction set misaal
//! selects for (x86, ARM NEON, Hexagon HVX), holding everything the other
//! crates used to keep in their own tables and `isa == "x86"` if-chains:
//! the rule head and spec folder name, the Halide architecture, register
//! widths, the CPU features specs may name, how instruction names are
//! spelled, which oracle checks specs, which C dialect emits code, the
//! default rule files and the bench backend.
//!
//! Owns: what a target *is*. Knows nothing of specs, rules, proofs or C:
//! a leaf crate, so the spec parser, the rule parser, synthesis, the
//! compiler, the bench and the CLI can all read it. Adding a target is one
//! more description here plus the per-target code its fields name (see
//! `docs/adding-a-target.md`).
//!
//! The three bundled descriptions are `const`s in [`TARGETS`]. A test may
//! [`register`] one more at run time (a toy target over a fixture spec
//! folder); [`by_name`] finds both.

use std::sync::{OnceLock, RwLock};

/// How a target spells element types and register widths in its
/// instruction names; synthesis turns a spelling into name templates
/// (`{mm}`, `{q}`, `{su}`, `{ty}`, `{e}`, see `misaal_rulesets::TEMPLATE_KEYS`)
/// and enumerates by the conventions each spelling implies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameStyle {
    /// `_mm256_add_epi16`: `{mm}` from `?vsize`, digits from `?bw`.
    X86,
    /// `vaddq_u16`: `{q}` from `?vsize`, `{su}` from `?sign`, digits from `?bw`.
    Arm,
    /// `Q6_Vuh_vadd_VuhVuh_sat`: `{ty}` (`ub`/`b`...) or `{e}` (`b`...) from `?bw` and `?sign`.
    Hvx,
}

/// What checks a spec against hardware (`misaal check`), making it
/// `silicon` in the spec folder's `STATUS.tsv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Oracle {
    /// Each spec runs on this machine's CPU, as far as its features allow
    /// (the rest are skipped with the reason); `--cpu-features` may
    /// pretend a narrower CPU.
    NativeCpu,
    /// One harness for every spec, built with a cross toolchain and run
    /// in batches under a user-mode emulator (`qemu-aarch64`,
    /// `qemu-hexagon`), all cases of a job in one process.
    Emulator {
        /// The emulator's command.
        command: &'static str,
        /// The harness run under it ([`Harness`]).
        harness: Harness,
    },
    /// No oracle: specs of the target are never `silicon` (a toy target).
    None,
}

/// The harness an emulated oracle builds for every spec of a run: one
/// crate under `verifier/` per harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Harness {
    /// A Linux program cross-built with `aarch64-linux-gnu-gcc`
    /// (`verifier/oracle-arm`).
    AArch64Linux,
    /// A freestanding program built by clang 19 and `ld.lld-19` for
    /// Hexagon v68 with HVX (`verifier/oracle-hvx`).
    HexagonFreestanding,
}

/// The C the compiler's instruction selection emits for a target
/// (`compiler/src/isel/dialect/`): types, intrinsic headers, loads and
/// stores, lane extraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// `immintrin.h`: `__m128i`/`__m256i`, and `__m512i` with k-register
    /// masks when the CPU has AVX-512F (`dialect/mod.rs`).
    X86Intrinsics,
    /// `arm_neon.h`: typed `D`/`Q` vectors (`dialect/arm.rs`).
    NeonIntrinsics,
    /// `hexagon_types.h`/`hvx_hexagon_protos.h`: `HVX_Vector` and pairs
    /// (`dialect/hvx.rs`).
    HvxIntrinsics,
    /// No C dialect: instruction selection for the target is refused (a
    /// toy target whose rules are only proved).
    None,
}

/// How `misaal bench` runs and times a target's kernels (`bench/src/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BenchBackend {
    /// Built and timed on this CPU against Halide's own code, with
    /// llvm-mca's estimate beside the timing (`bench/src/x86.rs`).
    NativeTimingAndMca,
    /// Cross-built, compared with Halide's output under the emulator, and
    /// costed by llvm-mca for a named core (`bench/src/arm.rs`).
    EmulatedAndMca,
    /// Cross-built, compared under the emulator, and costed by the packets
    /// of the compiled loop (`bench/src/hvx.rs`).
    EmulatedAndPacketCount,
    /// No bench backend.
    None,
}

/// A register width some CPUs of a target add with a feature: code may
/// hold values that wide only when the CPU has it (AVX-512F's 512-bit
/// zmm registers over AVX2's 256-bit ymm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WiderRegisters {
    pub bits: i64,
    /// The spec feature (`[x86 avx512f ...]`) that gives them.
    pub feature: &'static str,
}

/// One target: every fact about it that more than one crate needs.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TargetDesc {
    /// The rule head (`(x86 ...)`, `(arm ...)`), the spec folder
    /// `isa/specs/<name>/`, the `target` of its spec headers
    /// (`[x86 avx2 vpaddw]`), the bundled ruleset `rulesets/<name>.egg`
    /// and the CLI's `--target <name>`.
    pub name: &'static str,
    /// The architecture a Halide target string starts with (`x86` of
    /// `x86-64-linux-avx2`, `arm`, `hexagon`): a Stmt whose header names it
    /// is compiled for this target.
    pub halide_arch: &'static str,
    /// The bits a Halide target string of this architecture gets when a
    /// Stmt is retargeted and its own header gives none (`x86-64`,
    /// `arm-64`, `hexagon-32`).
    pub halide_bits: &'static str,
    /// Register widths in bits: the default domain of a rule's `?vsize*`,
    /// so a change here changes instantiation (hashed into the verifier's
    /// engine digest).
    pub vector_widths: &'static [i128],
    /// The widest register the compiler holds a value in by default; a
    /// wider value is held as several registers, low lanes first (AVX2
    /// 256, NEON's Q 128, one HVX vector 1024).
    pub register_bits: i64,
    /// A wider register a CPU feature adds ([`WiderRegisters`]); rule
    /// instances with instructions wider than the compile's registers are
    /// then left out. `None`: every CPU of the target has the same ones.
    pub wider_registers: Option<WiderRegisters>,
    /// A register pair's width, where the target has pairs as operands and
    /// results (HVX's `pair1024` is 2048 bits); 0 if it has none.
    pub pair_bits: u32,
    /// The target has one register width, wider than Halide's units, so
    /// slices and concats of values narrower than a register go through
    /// memory and count as legalization glue (HVX).
    pub sub_register_values: bool,
    /// The CPU features a spec header may name (CPUID names for x86, ACLE
    /// extensions for ARM, HVX versions). A misspelled feature would
    /// otherwise load and silently never match the CPU's.
    pub cpu_features: &'static [&'static str],
    /// A feature named in the parser's error when one is missing.
    pub example_feature: &'static str,
    /// The spec features every CPU of the target has (x86-64's SSE2, ARMv8's
    /// NEON), whatever the Halide target string says.
    pub baseline_features: &'static [&'static str],
    /// How instruction names spell types and widths ([`NameStyle`]).
    pub name_style: NameStyle,
    /// What checks its specs ([`Oracle`]).
    pub oracle: Oracle,
    /// The C its instruction selection emits ([`Dialect`]).
    pub dialect: Dialect,
    /// The bundled rule files (`rulesets/<file>.egg`) the compiler, bench
    /// and `misaal verify --rules <name>` load by default, in order: ARM's
    /// and HVX's hand-written rules (`<name>_hand.egg`), then the rules
    /// `misaal synth` writes (`<name>.egg`); x86's synthesized rules
    /// alone, which re-derive or cover every hand-written x86 rule that can
    /// be verified here (`x86_hand.egg` is the rediscovery corpus, loaded
    /// with `--rules`).
    pub rule_files: &'static [&'static str],
    /// How `misaal bench` runs its kernels ([`BenchBackend`]).
    pub bench: BenchBackend,
}

/// x86-64 with SSE to AVX-512: 128-, 256- and 512-bit registers; checked on
/// this CPU.
pub const X86: TargetDesc = TargetDesc {
    name: "x86",
    halide_arch: "x86",
    halide_bits: "64",
    vector_widths: &[128, 256, 512],
    register_bits: 256,
    wider_registers: Some(WiderRegisters { bits: 512, feature: "avx512f" }),
    pair_bits: 0,
    sub_register_values: false,
    cpu_features: &[
        "sse", "sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "bmi", "bmi2", "popcnt", "lzcnt", "pclmulqdq", "aes", "sha", "gfni", "vaes",
        "vpclmulqdq", "avxvnni", "avxifma", "avxvnniint8", "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "avx512ifma", "avx512vbmi", "avx512vbmi2",
        "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16", "avx512fp16",
    ],
    example_feature: "avx2",
    baseline_features: &["sse", "sse2"],
    name_style: NameStyle::X86,
    oracle: Oracle::NativeCpu,
    dialect: Dialect::X86Intrinsics,
    rule_files: &["x86"],
    bench: BenchBackend::NativeTimingAndMca,
};

/// AArch64 NEON: 64-bit `D` and 128-bit `Q` registers; checked under
/// qemu-aarch64.
pub const ARM: TargetDesc = TargetDesc {
    name: "arm",
    halide_arch: "arm",
    halide_bits: "64",
    vector_widths: &[64, 128],
    register_bits: 128,
    wider_registers: None,
    pair_bits: 0,
    sub_register_values: false,
    cpu_features: &["neon", "dotprod", "i8mm", "rdm", "fp16", "bf16", "aes", "sha2", "sha3", "crc"],
    example_feature: "neon",
    baseline_features: &["neon"],
    name_style: NameStyle::Arm,
    oracle: Oracle::Emulator { command: "qemu-aarch64", harness: Harness::AArch64Linux },
    dialect: Dialect::NeonIntrinsics,
    rule_files: &["arm_hand", "arm"],
    bench: BenchBackend::EmulatedAndMca,
};

/// Hexagon HVX in 128-byte mode: 1024-bit vectors; pairs are 2048-bit
/// values; checked under qemu-hexagon.
pub const HVX: TargetDesc = TargetDesc {
    name: "hvx",
    halide_arch: "hexagon",
    halide_bits: "32",
    vector_widths: &[1024],
    register_bits: 1024,
    wider_registers: None,
    pair_bits: 2048,
    sub_register_values: true,
    cpu_features: &["hvxv60", "hvxv62", "hvxv65", "hvxv66", "hvxv67", "hvxv68", "hvxv69", "hvxv73"],
    example_feature: "hvxv60",
    baseline_features: &[],
    name_style: NameStyle::Hvx,
    oracle: Oracle::Emulator { command: "qemu-hexagon", harness: Harness::HexagonFreestanding },
    dialect: Dialect::HvxIntrinsics,
    rule_files: &["hvx_hand", "hvx"],
    bench: BenchBackend::EmulatedAndPacketCount,
};

/// The bundled targets, in the order tables and help list them.
pub const TARGETS: [&TargetDesc; 3] = [&X86, &ARM, &HVX];

/// The bundled targets' names, in [`TARGETS`] order.
pub const NAMES: [&str; TARGETS.len()] = {
    let mut names = [""; TARGETS.len()];
    let mut i = 0;
    while i < TARGETS.len() {
        names[i] = TARGETS[i].name;
        i += 1;
    }
    names
};

fn registered() -> &'static RwLock<Vec<&'static TargetDesc>> {
    static EXTRA: OnceLock<RwLock<Vec<&'static TargetDesc>>> = OnceLock::new();
    EXTRA.get_or_init(|| RwLock::new(Vec::new()))
}

/// Adds a target to what [`by_name`] and [`all`] find, for this process:
/// a toy target's description in a test, over a fixture spec folder. An
/// error if a target of that name exists (registering the same
/// description twice is allowed).
pub fn register(desc: &'static TargetDesc) -> Result<(), String> {
    if let Some(old) = by_name(desc.name) {
        return if old == desc { Ok(()) } else { Err(format!("a target named `{}` exists", desc.name)) };
    }
    registered().write().unwrap_or_else(|e| e.into_inner()).push(desc);
    Ok(())
}

/// The target whose name (rule head, spec folder) is `name`.
pub fn by_name(name: &str) -> Option<&'static TargetDesc> {
    TARGETS.into_iter().find(|t| t.name == name).or_else(|| registered().read().unwrap_or_else(|e| e.into_inner()).iter().copied().find(|t| t.name == name))
}

/// Every target: the bundled ones, then any [`register`]ed.
pub fn all() -> Vec<&'static TargetDesc> {
    TARGETS.into_iter().chain(registered().read().unwrap_or_else(|e| e.into_inner()).iter().copied()).collect()
}

/// The target a Halide target string (`x86-64-linux-avx2`,
/// `arm-64-android`, `hexagon-32-noos-hvx_128`) names by its architecture.
pub fn of_halide_target(target: &str) -> Option<&'static TargetDesc> {
    let arch = target.split('-').next()?;
    all().into_iter().find(|t| t.halide_arch == arch)
}

impl TargetDesc {
    /// The target of `name`, as [`by_name`].
    pub fn by_name(name: &str) -> Option<&'static TargetDesc> {
        by_name(name)
    }

    /// Whether a spec header of this target may name `feature`.
    pub fn knows_feature(&self, feature: &str) -> bool {
        self.cpu_features.contains(&feature)
    }

    /// The widest register code may hold a value in on a CPU with
    /// `has(feature)`: [`Self::wider_registers`] when it has their feature,
    /// else `default_bits` (usually [`Self::register_bits`]).
    pub fn register_bits_with(&self, default_bits: i64, has: impl Fn(&str) -> bool) -> i64 {
        match self.wider_registers {
            Some(w) if has(w.feature) => w.bits,
            _ => default_bits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for t in TARGETS {
            assert_eq!(by_name(t.name), Some(t));
            assert_eq!(TARGETS.iter().filter(|u| u.name == t.name || u.halide_arch == t.halide_arch).count(), 1);
            assert!(t.vector_widths.contains(&i128::from(t.register_bits)), "{}", t.name);
            assert!(t.knows_feature(t.example_feature));
            assert!(t.baseline_features.iter().all(|f| t.knows_feature(f)));
        }
        assert_eq!(NAMES, ["x86", "arm", "hvx"]);
        assert_eq!(of_halide_target("hexagon-32-noos-hvx_128"), Some(&HVX));
        assert_eq!(of_halide_target("x86-64-linux-avx2"), Some(&X86));
        assert_eq!(of_halide_target("riscv-64"), None);
        assert!(register(&X86).is_ok());
        assert_eq!(all().len(), 3);
    }
}
