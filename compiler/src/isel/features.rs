//! Which instructions a compile may emit: the CPU features of the target,
//! read from the Stmt header (`module name=..., target=...`) or given with
//! `--target-features`, with Halide's meaning of its feature names
//! (`Target::Feature`). On x86 they are completed as `CodeGen_X86`
//! completes them: each AVX-512 level implies the ones below it, AVX-512
//! implies AVX2, AVX2 implies AVX, AVX implies SSE4.1. Code compiled for
//! Skylake then never contains a VNNI instruction, whatever this machine
//! has. On ARM every AArch64 target has `neon` (unless `no_neon`),
//! `arm_dot_prod` adds `dotprod` (sdot/udot), `arm_fp16` `fp16`, and
//! `armv81a` and later add `rdm` (sqrdmlah). On Hexagon `hvx` is HVX v60
//! and `hvx_v62`... add the later versions. The names on the right are the
//! ones the specs' header lines use (isa's TARGET_FEATURES table).

use std::collections::BTreeSet;
use std::fmt;

/// A set of CPUID feature names as the specs spell them (`sse4_1`,
/// `avx512bw`, `avxvnni`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuFeatures {
    /// The Halide target or feature list it came from, for messages.
    pub source: String,
    pub features: BTreeSet<String>,
    /// Feature names of a target string this table does not know (a later
    /// Halide's, or a typo): ignored, for the caller to warn about.
    pub unknown: Vec<String>,
}

/// Halide feature -> (the Halide features it implies, the CPUID features it adds).
const HALIDE_FEATURES: &[(&str, &[&str], &[&str])] = &[
    ("sse41", &[], &["sse3", "ssse3", "sse4_1"]),
    ("avx", &["sse41"], &["sse4_2", "avx"]),
    ("avx2", &["avx"], &["avx2", "fma", "f16c"]),
    ("f16c", &[], &["f16c"]),
    ("fma", &[], &["fma"]),
    ("avx512", &["avx2"], &["avx512f", "avx512cd"]),
    ("avx512_knl", &["avx512"], &["avx512pf", "avx512er"]),
    ("avx512_skylake", &["avx512"], &["avx512vl", "avx512bw", "avx512dq"]),
    ("avx512_cannonlake", &["avx512_skylake"], &["avx512ifma", "avx512vbmi"]),
    // Zen 4 has AVX512-VNNI but not the VEX AVX-VNNI forms.
    ("avx512_zen4", &["avx512_cannonlake"], &["avx512vnni", "avx512bf16", "avx512vbmi2", "avx512bitalg", "avx512vpopcntdq", "gfni"]),
    ("avx512_zen5", &["avx512_zen4", "avxvnni"], &[]),
    ("avx512_sapphirerapids", &["avx512_zen4", "avxvnni"], &["amx-int8", "amx-bf16"]),
    ("avxvnni", &[], &["avxvnni"]),
];

/// ARM: Halide feature -> (implied Halide features, spec features added).
const ARM_FEATURES: &[(&str, &[&str], &[&str])] = &[
    ("arm_dot_prod", &[], &["dotprod"]),
    ("arm_fp16", &[], &["fp16"]),
    ("armv81a", &[], &["rdm"]),
    ("armv82a", &["armv81a"], &[]),
    ("armv83a", &["armv82a"], &[]),
    ("armv84a", &["armv83a"], &[]),
    ("armv85a", &["armv84a"], &[]),
    ("armv86a", &["armv85a"], &[]),
    ("armv87a", &["armv86a"], &[]),
    ("armv88a", &["armv87a"], &[]),
    ("armv89a", &["armv88a"], &[]),
    ("no_neon", &[], &[]),
];

/// Hexagon: Halide feature -> (implied Halide features, spec features added).
const HVX_FEATURES: &[(&str, &[&str], &[&str])] = &[
    ("hvx", &[], &["hvxv60"]),
    ("hvx_128", &["hvx"], &[]),
    ("hvx_v62", &["hvx"], &["hvxv62"]),
    ("hvx_v65", &["hvx_v62"], &["hvxv65"]),
    ("hvx_v66", &["hvx_v65"], &["hvxv66"]),
    ("hvx_v68", &["hvx_v66"], &["hvxv67", "hvxv68"]),
];

/// The feature table of an ISA (`x86`, `arm`, `hvx`): Halide's feature
/// names of its architecture ([`misaal_targets::TargetDesc::halide_arch`]),
/// and the spec features every target of it has
/// ([`misaal_targets::TargetDesc::baseline_features`]).
fn table(isa: &str) -> Result<(&'static [(&'static str, &'static [&'static str], &'static [&'static str])], &'static [&'static str]), String> {
    let no_table = || format!("no feature table for ISA `{isa}`");
    let desc = misaal_targets::by_name(isa).ok_or_else(no_table)?;
    let halide = match desc.halide_arch {
        "x86" => HALIDE_FEATURES,
        "arm" => ARM_FEATURES,
        "hexagon" => HVX_FEATURES,
        _ => return Err(no_table()),
    };
    Ok((halide, desc.baseline_features))
}

/// Target-string parts that say nothing about instructions.
pub fn is_non_isa(part: &str) -> bool {
    matches!(part, "linux" | "osx" | "windows" | "android" | "ios" | "noos" | "64" | "32")
        || part.starts_with("no_")
        || matches!(part, "debug" | "profile" | "large_buffers" | "strict_float" | "jit" | "user_context" | "c_plus_plus_name_mangling" | "embed_bitcode" | "enable_llvm_loop_opt" | "disable_llvm_loop_opt" | "trace_loads" | "trace_stores" | "trace_realizations" | "trace_pipeline" | "check_unsafe_promises" | "msan" | "asan" | "tsan" | "sanitizer_coverage" | "semihosting" | "profile_by_timer" | "spirv" | "sve" | "sve2")
}

impl CpuFeatures {
    /// A Halide target string, e.g. `x86-64-linux-avx512_skylake-no_runtime`
    /// or `arm-64-linux-arm_dot_prod`; `host` is refused (say which
    /// features with `--target-features`).
    pub fn from_halide_target(target: &str) -> Result<CpuFeatures, String> {
        if target.split('-').next() == Some("host") {
            return Err(format!("target `{target}` names no features; give them with --target-features (e.g. avx2)"));
        }
        let isa = super::isa_of_halide_target(target)?;
        let parts: Vec<&str> = target.split('-').collect();
        Self::from_parts(isa, target, &parts[1..])
    }

    /// `self`, or an error naming the first feature of [`Self::unknown`].
    fn refuse_unknown(self, isa: &str) -> Result<CpuFeatures, String> {
        let Some(part) = self.unknown.first() else { return Ok(self) };
        let known: Vec<&str> = table(isa)?.0.iter().map(|(n, _, _)| *n).collect();
        Err(format!("`{}`: unknown {isa} target feature `{part}` (known: {})", self.source, known.join(", ")))
    }

    /// What a compile may use: the `--target-features` list when given
    /// (feature names of the module's ISA), else the module's own
    /// `target=`. Every front end decides it here.
    pub fn for_module(flag: Option<&str>, module_target: &str) -> Result<CpuFeatures, String> {
        match flag {
            Some(list) => {
                let isa = super::isa_of_halide_target(module_target).unwrap_or("x86");
                Self::from_feature_list_for(isa, list).map_err(|e| format!("--target-features: {e}"))
            }
            None => Self::from_halide_target(module_target),
        }
    }

    /// x86 Halide feature names separated by `-` or `,` (e.g. `avx2` or
    /// `avx512_zen4`), or a whole target string.
    pub fn from_feature_list(list: &str) -> Result<CpuFeatures, String> {
        Self::from_feature_list_for("x86", list)
    }

    /// [`Self::from_feature_list`] for an ISA's feature names
    /// (`arm_dot_prod` on `arm`).
    pub fn from_feature_list_for(isa: &str, list: &str) -> Result<CpuFeatures, String> {
        if ["x86-", "arm-", "hexagon-", "host"].iter().any(|p| list.starts_with(p)) {
            return Self::from_halide_target(list);
        }
        let parts: Vec<&str> = list.split(['-', ',']).filter(|p| !p.is_empty()).collect();
        // A list typed on the command line has no later release to come from.
        Self::from_parts(isa, list, &parts)?.refuse_unknown(isa)
    }

    fn from_parts(isa: &str, source: &str, parts: &[&str]) -> Result<CpuFeatures, String> {
        let (table, base) = table(isa)?;
        let mut features: BTreeSet<String> = base.iter().map(|s| s.to_string()).collect();
        let mut unknown = Vec::new();
        for part in parts {
            if is_non_isa(part) {
                continue;
            }
            if !table.iter().any(|(n, _, _)| n == part) {
                unknown.push(part.to_string());
                continue;
            }
            add(table, part, &mut features);
        }
        if parts.contains(&"no_neon") {
            features.remove("neon");
        }
        Ok(CpuFeatures { source: source.to_string(), features, unknown })
    }

    /// Whether every feature a spec lists (its `[x86 a+b mnemonic]` line) is here.
    pub fn allows(&self, needs: &[String]) -> bool {
        needs.iter().all(|f| self.features.contains(f))
    }

    /// The widest vector register code for these features may hold a value
    /// in, on `isa` whose widest register is otherwise `default_bits`: on
    /// x86, 512 bits (zmm) with AVX-512F, else `default_bits` (AVX2's 256).
    /// What each instruction needs beyond F (BW for bytes and words, VL
    /// for its 128- and 256-bit forms) is checked per rule instance.
    pub fn register_bits(&self, isa: &str, default_bits: i64) -> i64 {
        // The registry's `wider_registers`: x86's zmm with `avx512f`.
        misaal_targets::by_name(isa).map_or(default_bits, |desc| desc.register_bits_with(default_bits, |f| self.features.contains(f)))
    }

    /// The features of `needs` that are missing.
    pub fn missing<'a>(&self, needs: &'a [String]) -> Vec<&'a str> {
        needs.iter().filter(|f| !self.features.contains(*f)).map(String::as_str).collect()
    }
}

type Table = [(&'static str, &'static [&'static str], &'static [&'static str])];

fn add(table: &Table, halide: &str, out: &mut BTreeSet<String>) {
    let Some((_, implies, cpuid)) = table.iter().find(|(n, _, _)| *n == halide) else { return };
    for i in *implies {
        add(table, i, out);
    }
    out.extend(cpuid.iter().map(|s| s.to_string()));
}

impl fmt::Display for CpuFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.source, self.features.iter().cloned().collect::<Vec<_>>().join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(t: &str, f: &str) -> bool {
        CpuFeatures::from_halide_target(t).unwrap().features.contains(f)
    }

    #[test]
    fn halide_levels_imply_the_ones_below() {
        let sky = "x86-64-linux-avx512_skylake-no_runtime";
        assert!(has(sky, "avx512bw") && has(sky, "avx512vl") && has(sky, "avx2") && has(sky, "sse4_1") && has(sky, "sse2"));
        assert!(!has(sky, "avx512vnni") && !has(sky, "avxvnni") && !has(sky, "avx512vbmi"));
        let zen4 = "x86-64-linux-avx512_zen4-no_runtime";
        assert!(has(zen4, "avx512vnni") && has(zen4, "avx512vbmi") && has(zen4, "avx512ifma") && has(zen4, "avx512bw"));
        assert!(!has(zen4, "avxvnni"), "Zen 4 has no VEX AVX-VNNI");
        assert!(has("x86-64-linux-avx512_sapphirerapids", "avxvnni"));
        let base = "x86-64-linux-no_runtime";
        assert!(has(base, "sse2") && !has(base, "ssse3") && !has(base, "avx2"));
        assert!(has("x86-64-linux-avx2", "avx") && !has("x86-64-linux-avx2", "avx512f"));
    }

    #[test]
    fn arm_and_hvx_targets() {
        let dot = "arm-64-linux-arm_dot_prod-no_runtime";
        assert!(has(dot, "neon") && has(dot, "dotprod") && !has(dot, "rdm") && !has(dot, "i8mm"));
        assert!(has("arm-64-linux", "neon") && !has("arm-64-linux", "dotprod"));
        assert!(has("arm-64-linux-armv82a", "rdm"));
        assert!(!has("arm-64-linux-no_neon", "neon"));
        let hvx = "hexagon-32-noos-hvx-hvx_128";
        assert!(has(hvx, "hvxv60") && !has(hvx, "hvxv62"));
        assert!(has("hexagon-32-noos-hvx_128-hvx_v66", "hvxv65"));
        assert!(CpuFeatures::from_feature_list_for("arm", "arm_dot_prod").unwrap().features.contains("dotprod"));
    }

    #[test]
    fn unknown_features_of_a_target_string_are_left_for_a_warning() {
        let f = CpuFeatures::from_halide_target("x86-64-linux-avx2-avx10_2-no_runtime").unwrap();
        assert_eq!(f.unknown, vec!["avx10_2".to_string()]);
        assert!(f.features.contains("avx2") && !f.features.iter().any(|x| x.contains("avx10")));
        assert!(CpuFeatures::from_halide_target("x86-64-linux-avx2").unwrap().unknown.is_empty());
    }

    #[test]
    fn bad_targets_are_named() {
        assert!(CpuFeatures::from_halide_target("riscv-64-linux").unwrap_err().contains("none of x86-64"));
        assert_eq!(CpuFeatures::from_halide_target("arm-64-linux-avx2").unwrap().unknown, ["avx2"]);
        assert_eq!(CpuFeatures::from_halide_target("x86-64-linux-avx3").unwrap().unknown, ["avx3"]);
        assert!(CpuFeatures::from_feature_list_for("arm", "avx2").unwrap_err().contains("unknown arm target feature `avx2`"));
        assert!(CpuFeatures::from_feature_list("avx2,avx3").unwrap_err().contains("unknown x86 target feature `avx3`"));
        assert!(CpuFeatures::from_feature_list("avx2,sse41").unwrap().features.contains("avx2"));
        assert!(CpuFeatures::from_feature_list("avx2").unwrap().allows(&["avx2".into()]));
        assert!(!CpuFeatures::from_feature_list("sse41").unwrap().allows(&["avx512f".into(), "avx512vl".into()]));
    }
}
