//! `misaal synth --target arm` and `--target hvx`: the same pipeline as
//! x86's (relevance, swizzles, enumerate, abstract), parametrized by the
//! target description, on a small configuration (two units each), and the
//! written ruleset is proved at every instance by `misaal verify` (no
//! verdict cache, so the proofs are this run's). Also: the committed
//! rulesets/arm.egg and hvx.egg are synthesized (their headers say so) and
//! the default rule files of each target are the hand-written and the
//! synthesized ones.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("misaal-synth-targets-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_ok(c: &mut Command) -> String {
    let o = c.output().expect("misaal runs");
    assert!(o.status.success(), "{:?}\n{}{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs the whole pipeline for `target` on `units` and proves its output.
fn synth_and_verify(target: &str, units: &str, extra: &[&str], want: &[&str]) {
    let d = scratch(&format!("{target}-{}", units.replace([',', ';'], "-")));
    let out_file = d.join(format!("{target}.egg"));
    let mut c = Command::new(env!("CARGO_BIN_EXE_misaal"));
    // Without the legalization templates: tens of thousands of instances,
    // which the bundled files' own proofs cover (`misaal verify --rules`).
    c.args(["synth", "--target", target, "--units", units, "--depth", "2", "--jobs", "2", "--no-legalize"]).args(extra).arg("--out-dir").arg(&d).arg("--rules-out").arg(&out_file);
    let out = run_ok(&mut c);
    assert!(out.contains("synth done in"), "{out}");
    let csv = std::fs::read_to_string(d.join(format!("synth_{target}.csv"))).expect("phase csv");
    for phase in ["relevance,", "swizzles,", "enumerate,", "abstract,", "total,"] {
        assert!(csv.contains(phase), "{phase} missing from synth_{target}.csv:\n{csv}");
    }
    let text = std::fs::read_to_string(&out_file).expect("ruleset written");
    assert!(text.contains(&format!("`misaal synth --target {target}`")) && text.contains(&format!("(ruleset {target})")), "{text}");
    // Every rule has a name and the comment line above it says where it came from.
    let lines: Vec<&str> = text.lines().collect();
    let rules: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("(rewrite")).collect();
    assert!(!rules.is_empty(), "no rule synthesized:\n{text}");
    for &i in &rules {
        assert!(lines[i].contains(":name ") && lines[i].contains(&format!("({target} ")), "{}", lines[i]);
        assert!(i > 0 && lines[i - 1].starts_with("; ") && lines[i - 1].contains("phase "), "no provenance above {}", lines[i]);
    }
    for w in want {
        assert!(text.contains(w), "{w:?} was not synthesized:\n{text}");
    }
    // Proved again from scratch: nothing refuted, nothing unknown.
    let mut v = Command::new(env!("CARGO_BIN_EXE_misaal"));
    v.args(["verify", "--no-cache", "--jobs", "2", "--rules"]).arg(&out_file).arg("--out").arg(d.join("verify.csv"));
    let report = run_ok(&mut v);
    let csv = std::fs::read_to_string(d.join("verify.csv")).expect("verify csv");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(!rows.is_empty(), "{report}");
    assert!(rows.iter().all(|r| r.contains(",proved,")), "not every instance proved:\n{report}\n{csv}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn arm_synthesis_writes_proved_arm_rules() {
    // A Q-register unit and a D-register unit, whose long forms widen.
    synth_and_verify("arm", "u8x16,u8x16;u16x4", &[], &["vhadd{q}_{su}{bw}", "vmovl"]);
}

#[test]
fn hvx_synthesis_writes_proved_hvx_rules_with_pair_shuffles() {
    // Widening adds put even lanes in the lo register: the rule shuffles them back.
    synth_and_verify("hvx", "u8x16,u8x16", &[], &["Q6_V{ty}_vavg_V{ty}V{ty}", "Q6_W_vshuff_VVR"]);
}

#[test]
fn hvx_deepening_finds_the_two_instruction_i32_multiply() {
    // HVX has no one-instruction 32-bit multiply; the heads depth 1 leaves
    // without a rule get a directed second level, which finds Halide's
    // sequence (even x odd halves shifted, then the 32x16 product added),
    // and the verifier proves it through the digit products. The other
    // instructions are there to be passed over.
    let only = "Q6_Vw_vmpyieo_VhVh,Q6_Vw_vmpyieacc_VwVwVuh,Q6_Vw_vmpyie_VwVuh,Q6_Vw_vadd_VwVw,Q6_Vw_vsub_VwVw,Q6_Vw_vasr_VwR";
    synth_and_verify("hvx", "i32x4,i32x4", &["--instructions", only], &["(mul (t ?sign ?bw ?n) ?a ?b) (hvx \"Q6_V{", "vmpyieacc_V", "vmpyieo_VhVh\" ?a ?b) ?a ?b)"]);
}

#[test]
fn arm_and_hvx_load_hand_written_and_synthesized_rules() {
    for isa in [&misaal_rulesets::ARM, &misaal_rulesets::HVX] {
        let files = isa.default_rulesets();
        let names: Vec<String> = files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, vec![format!("{}_hand.egg", isa.name), format!("{}.egg", isa.name)]);
        let hand = std::fs::read_to_string(&files[0]).unwrap();
        assert!(hand.contains("Hand-written"), "{}", files[0].display());
        let synth = std::fs::read_to_string(&files[1]).unwrap();
        assert!(synth.contains(&format!("generated by misaal")) && synth.contains(&format!("`misaal synth --target {}`", isa.name)), "{}", files[1].display());
        let rules = misaal_rulesets::parse_rules("both", &isa.default_rules_text().unwrap()).unwrap_or_else(|d| panic!("{d}"));
        assert!(rules.len() > hand.matches("(rewrite").count(), "{}: the synthesized rules are not loaded", isa.name);
    }
    // x86 loads its synthesized rules alone.
    assert_eq!(misaal_rulesets::X86.default_rulesets(), vec![misaal_rulesets::bundled_ruleset("x86")]);
    let _ = Path::new(".");
}
