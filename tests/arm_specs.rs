//! The ARM NEON specs (`isa/specs/arm/`): they parse, carry a cost with its
//! source and a known feature, agree with qemu-aarch64 on every case, match
//! the committed evidence (`evidence/`), and qemu catches wrong specs (every spec's
//! mutants). Also the ARM bench's ground truth: Halide's own ARM objects for
//! a few kernels run under qemu bit-exact against the reference interpreter
//! (`arm_support/halide.rs`).
//!
//! Without the cross compiler, qemu or (for the Halide trial) Halide's
//! Python bindings a trial is reported as ignored (skipped), with a message
//! naming what is missing: never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_testkit::{slow, trial_unless_missing, trials_unless_missing};
use misaal_verifier::emulated::Arm;
use misaal_verifier::emulated_checks::{self, StandardChecks};

fn specs_parse_with_costs_and_features() -> Result<(), Failed> {
    let lib = emulated_checks::library_of_target::<Arm>(2000)?;
    for (i, _) in lib.iter() {
        if !i.features.iter().all(|f| ["neon", "dotprod", "i8mm", "rdm"].contains(&f.as_str())) {
            return Err(format!("{} has features {:?}", i.name, i.features).into());
        }
        if !i.cost.as_ref().is_some_and(|c| c.source.contains("Cortex-A76") || c.source.contains("llvm-mca")) {
            return Err(format!("{} has no cost from a named guide or model", i.name).into());
        }
    }
    Ok(())
}

/// ARM's part of the standard trials ([`emulated_checks::standard_checks`]).
const CHECKS: StandardChecks = StandardChecks {
    emulator: "qemu",
    mutated: &["vqadd_s8", "vaddl_high_s8", "vraddhn_s32", "vhsub_u8"],
    mutated_cases: 300,
    // Every site.
    mutated_sites: usize::MAX,
    // Every other spec (in library order); `MISAAL_SLOW=1` mutates every one.
    every_spec_keeps: |k, _| slow() || k % 2 == 0,
    // A rounding halving add without its rounding.
    wrong_spec: "instr vrhadd_u8(a: bv64, b: bv64) -> bv64 [arm neon urhadd]\nFOR j := 0 to 7\n    dst[j*8+7:j*8] := Truncate8((ZeroExtend9(a[j*8+7:j*8]) + ZeroExtend9(b[j*8+7:j*8])) >>u 1)\nENDFOR\n",
    wrong_spec_name: "vrhadd_u8",
};

/// The Halide trial's support code (`tests/arm_support/`).
mod arm_support {
    pub mod halide;
}
use arm_support::halide;

/// Kernels whose Halide ARM object is checked against the interpreter by
/// default: two, since the interpreter takes seconds to half a minute a
/// kernel (average_pool, the slowest of the former three, and the rest
/// run with `MISAAL_SLOW=1`).
const HALIDE_KERNELS: &[&str] = &["add", "sobel3x3"];

/// `MISAAL_SLOW=1` (or `MISAAL_KERNELS=all`) checks every kernel,
/// `MISAAL_KERNELS=add,mul` those listed.
fn halide_arm_objects_match_interpreter() -> Result<(), Failed> {
    let all: Vec<String> = halide::ALL_KERNELS.iter().map(|s| s.to_string()).collect();
    let chosen = misaal_testkit::kernels(HALIDE_KERNELS, &all);
    let chosen: Vec<&str> = chosen.iter().map(String::as_str).collect();
    let report = halide::check(&chosen)?;
    eprintln!("{report}");
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let missing = emulated_checks::missing_tools::<Arm>();
    let mut trials = vec![Trial::test("arm_specs_parse_with_costs_and_features", specs_parse_with_costs_and_features)];
    trials.extend(trials_unless_missing(emulated_checks::standard_checks::<Arm>(CHECKS), missing.as_deref()));
    // Halide's objects need Halide's Python bindings besides the cross tools.
    trials.push(trial_unless_missing("arm_halide_objects_match_interpreter_under_qemu", halide::missing().as_deref(), halide_arm_objects_match_interpreter));
    libtest_mimic::run(&args, trials).exit();
}
