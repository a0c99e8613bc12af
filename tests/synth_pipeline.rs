//! The whole synthesis pipeline through `misaal synth --target x86` (no
//! `--phase`): relevance, swizzles, enumerate and abstract in one command.
//! A run killed during the enumeration and resumed with `--resume` writes
//! the same bytes as an uninterrupted run, and so do shards merged with
//! `misaal synth merge` (a third run: in the slow tier, `MISAAL_SLOW=1`). A small configuration (four enumeration units,
//! x86 depth 1, the SSE2 baseline's instructions) keeps each run short; the
//! phases after the enumeration run in full over those instructions.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const UNITS: &str = "u16x8,u16x8;i16x8,i16x8;u8x16,u8x16;i32x4";
/// The x86-64 baseline's instructions only (SSE2): the abstract phase's
/// legalization searches and proofs grow with the specs (the test runs the
/// pipeline twice, three times in the slow tier), and what is checked here
/// (phases, checkpoints, shards, the same bytes) does not depend on the
/// specs.
const CPU_FEATURES: &str = "sse2";

/// The outputs that must be byte-identical (the phase CSV holds wall times).
const OUTPUTS: [&str; 5] = ["x86_relevance.csv", "x86_swizzles.csv", "x86_swizzles.egg", "x86_enumerated.egg", "x86_synth.egg"];

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("misaal-synth-pipeline-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `misaal synth --target x86 [ACTION] <small configuration> --out-dir D --rules-out D/x86_synth.egg`.
fn synth(dir: &Path, action: Option<&str>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_misaal"));
    c.args(["synth", "--target", "x86"]);
    c.args(action);
    c.args(["--units", UNITS, "--depth", "2", "--x86-depth", "1", "--jobs", "2", "--cpu-features", CPU_FEATURES, "--out-dir"]).arg(dir);
    c
}

fn with_rules_out(mut c: Command, dir: &Path) -> Command {
    c.arg("--rules-out").arg(dir.join("x86_synth.egg"));
    c
}

fn run_ok(c: &mut Command) -> String {
    let o = c.output().expect("misaal runs");
    assert!(o.status.success(), "{:?}\n{}{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn outputs(dir: &Path) -> Vec<(String, String)> {
    OUTPUTS.iter().map(|f| (f.to_string(), std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display())))).collect()
}

/// The uninterrupted run's outputs, made once.
fn whole() -> &'static Vec<(String, String)> {
    static W: OnceLock<Vec<(String, String)>> = OnceLock::new();
    W.get_or_init(|| {
        let d = scratch("whole");
        let out = run_ok(&mut with_rules_out(synth(&d, None), &d));
        // Every phase ran and printed its counts beside MISAAL's.
        for want in ["MISAAL: 16 h", "MISAAL: 243 in 10", "MISAAL: 5,806 into 329", "synth done in"] {
            assert!(out.contains(want), "{want:?} missing from:\n{out}");
        }
        let csv = std::fs::read_to_string(d.join("synth_x86.csv")).expect("phase csv");
        for phase in ["relevance,", "swizzles,", "enumerate,", "abstract,", "total,"] {
            assert!(csv.lines().any(|l| l.starts_with(phase)), "no {phase} row:\n{csv}");
        }
        let o = outputs(&d);
        let rules = &o[4].1;
        assert!(rules.contains("misaal synth --target x86"), "{}", &rules[..rules.len().min(600)]);
        // The enumeration found the classics of its units, and they made it
        // into the abstract ruleset.
        assert!(o[3].1.contains("_mm_avg_epu16"), "{}", o[3].1);
        assert!(rules.contains("(rewrite"), "{rules}");
        let _ = std::fs::remove_dir_all(&d);
        o
    })
}

#[test]
fn a_killed_run_resumes_to_the_same_bytes() {
    // The whole run first (both tests wait for it): its proofs, and the
    // queries that exhaust their rlimit, are then in the verdict cache,
    // and the runs below do not spend Z3's budget on them again.
    whole();
    let d = scratch("kill");
    let ck = d.join("x86_enumerate.0-of-1.ckpt");
    let mut child = with_rules_out(synth(&d, None), &d).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
    // Killed as soon as the enumeration has checkpointed one unit: the
    // relevance and swizzle phases are done, the rest is not.
    let t = std::time::Instant::now();
    loop {
        assert!(child.try_wait().expect("wait").is_none(), "the run ended before it could be killed mid-enumeration");
        if let Ok(cp) = misaal_synth::enumerate::checkpoint::Checkpoint::load(&ck)
            && !cp.units.is_empty()
        {
            child.kill().expect("kill");
            let _ = child.wait();
            break;
        }
        assert!(t.elapsed().as_secs() < 300, "no enumeration checkpoint after 5 minutes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let units = misaal_synth::enumerate::checkpoint::Checkpoint::load(&ck).expect("a whole checkpoint after the kill").units.len();
    assert!((1..4).contains(&units), "{units} units checkpointed");
    let pipe = misaal_synth::pipeline::PipelineCheckpoint::load(&d.join("x86_synth.ckpt")).expect("pipeline checkpoint");
    assert!(pipe.is_done("relevance") && pipe.is_done("swizzles") && !pipe.is_done("enumerate"), "{pipe:?}");
    assert!(!d.join("x86_synth.egg").exists());

    let out = run_ok(with_rules_out(synth(&d, None), &d).arg("--resume"));
    // The finished phases are not run again; the enumeration continues.
    assert!(out.contains("relevance: done before") && out.contains("swizzles: done before"), "{out}");
    assert!(out.contains("resuming from") && out.contains(&ck.display().to_string()), "{out}");
    let ran = out.lines().filter(|l| l.starts_with("  [") && l.contains(" Halide terms")).count();
    assert_eq!(ran, 4 - units, "only the units left run again:\n{out}");
    assert_eq!(&outputs(&d), whole());

    // A finished run resumed does nothing and changes nothing.
    let again = run_ok(with_rules_out(synth(&d, None), &d).arg("--resume"));
    assert_eq!(again.matches("), skipped").count(), 4, "{again}");
    assert_eq!(&outputs(&d), whole());
    // Another configuration does not resume this one's checkpoint.
    let mut other = synth(&d, None);
    other.args(["--resume", "--instructions", "_mm_add_epi16"]);
    let o = with_rules_out(other, &d).output().expect("runs");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("another configuration"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn shards_merged_equal_the_whole_run() {
    if !misaal_testkit::slow_tier("a third whole pipeline run; tests/synth_enumerate.rs merges enumeration shards in the fast tier") {
        return;
    }
    whole();
    let d = scratch("shards");
    // Merging before the shards ran is an error, not a shorter ruleset,
    // and it names every shard that is missing.
    let o = with_rules_out(synth(&d, Some("merge")), &d).args(["--shards", "3"]).output().expect("runs");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    let err = String::from_utf8_lossy(&o.stderr);
    for want in ["nothing merged: 3 of the 3 shards", "--shard 0/3", "--shard 1/3", "--shard 2/3"] {
        assert!(err.contains(want), "{want:?} missing from: {err}");
    }
    for k in 0..3 {
        let out = run_ok(synth(&d, None).args(["--shard", &format!("{k}/3")]));
        assert!(out.contains("misaal synth --target x86 merge --shards 3"), "{out}");
        if k == 0 {
            // With one of three shards done, the merge names the two left only.
            let o = with_rules_out(synth(&d, Some("merge")), &d).args(["--shards", "3"]).output().expect("runs");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.code() == Some(2) && err.contains("2 of the 3 shards") && !err.contains("shard 0/3") && err.contains("shard 2/3"), "{err}");
        }
    }
    // Each shard's time is in a CSV of its own (shards run at once on a cluster).
    for k in 0..3 {
        let csv = std::fs::read_to_string(d.join(format!("synth_x86.{k}-of-3.csv"))).expect("the shard's phase csv");
        assert!(csv.lines().any(|l| l.starts_with(&format!("enumerate {k}/3,"))), "{csv}");
    }
    // A shard writes no ruleset and no swizzles; the merge does.
    assert!(!d.join("x86_synth.egg").exists() && !d.join("x86_swizzles.egg").exists());
    let out = run_ok(with_rules_out(synth(&d, Some("merge")), &d).args(["--shards", "3"]));
    assert!(out.contains("merged 3 shards"), "{out}");
    assert_eq!(&outputs(&d), whole());
    // Options that do not go together.
    for bad in [vec!["merge"], vec!["merge", "--shards", "3", "--shard", "0/3"], vec!["--shards", "3"], vec!["merge", "--shards", "3", "--phase", "abstract"]] {
        let mut c = synth(&d, None);
        c.args(&bad);
        let o = c.output().expect("runs");
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", String::from_utf8_lossy(&o.stdout));
    }
    let _ = std::fs::remove_dir_all(&d);
}
