//! `scripts/synth-slurm.sh` against a real Slurm: a one-node cluster
//! (munged, slurmctld and slurmd from Debian's packages, every file of it
//! in a temporary folder, started and stopped by `scripts/slurm-local.sh`)
//! runs a small synthesis as a job array of 3 shards and a merge job that
//! depends on the array. One shard is cancelled with `scancel` in the
//! middle of its enumeration and another fails (its checkpoint is damaged):
//! the merge job fails, naming those two shards and no other, and writes
//! nothing. Both are then resubmitted (`--rerun`), the cancelled one
//! continuing from its checkpoint, and the merge writes the bytes of an
//! unsharded run on this machine. In the slow tier (`MISAAL_SLOW=1`); skipped,
//! with the reason, where Slurm is not installed or does not start
//! (scripts/setup.sh installs it).
//!
//! The configuration is tests/synth_pipeline.rs's (its units, depths and
//! SSE2 specs), with one unit more, the accumulator unit i32x4,i16x8,i16x8:
//! it finds no rule, so the rules are those of synth_pipeline's run, but
//! its enumeration takes a second or two, and shard 0 (units 0 and 3)
//! runs it after its first unit is checkpointed: the window `scancel` hits.
//! The test is named to run after synth_pipeline, whose proofs are then in
//! the verdict cache (.misaal-cache/, shared by every job here too).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const UNITS: &str = "u16x8,u16x8;i16x8,i16x8;u8x16,u8x16;i32x4,i16x8,i16x8;i32x4";
const SHARDS: usize = 3;
/// The outputs that must be byte-identical (the phase CSVs hold wall times).
const OUTPUTS: [&str; 5] = ["x86_relevance.csv", "x86_swizzles.csv", "x86_swizzles.egg", "x86_enumerated.egg", "x86_synth.egg"];

/// The enumeration's options, the same for the local run, the shards and the merge.
fn options() -> Vec<&'static str> {
    vec!["--units", UNITS, "--depth", "2", "--x86-depth", "1", "--cpu-features", "sse2"]
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The test's folder (the cluster's and the outputs'), removed at the end
/// after the cluster is down, whether the test passed or not.
struct Scratch {
    dir: PathBuf,
    /// Set once `slurm-local.sh up` was called: `down` then runs on drop.
    cluster: Option<PathBuf>,
}

impl Scratch {
    fn new() -> Scratch {
        // Short: the munge socket's path must fit a unix socket's 108 bytes.
        let dir = std::env::temp_dir().join(format!("misaal-slurm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch { dir, cluster: None }
    }

    fn down(&mut self) -> Option<Output> {
        let c = self.cluster.take()?;
        Some(Command::new(root().join("scripts/slurm-local.sh")).arg("down").arg(&c).output().expect("slurm-local.sh runs"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(o) = self.down()
            && !o.status.success()
        {
            eprintln!("slurm-local.sh down failed:\n{}", text(&o));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every file under /etc/slurm and /etc/munge with its length and mtime:
/// the system's own configuration, which the test must leave alone.
fn system_config() -> Vec<(PathBuf, u64, Option<std::time::SystemTime>)> {
    fn walk(d: &Path, out: &mut Vec<(PathBuf, u64, Option<std::time::SystemTime>)>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else { continue };
            if m.is_dir() {
                walk(&p, out);
            }
            out.push((p, m.len(), m.modified().ok()));
        }
    }
    let mut out = Vec::new();
    walk(Path::new("/etc/slurm"), &mut out);
    walk(Path::new("/etc/munge"), &mut out);
    out.sort();
    out
}

/// A Slurm client command (squeue, scontrol, scancel) of this cluster.
fn slurm(conf: &Path, cmd: &str, args: &[&str]) -> Output {
    Command::new(cmd).args(args).env("SLURM_CONF", conf).output().unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

/// `scontrol show job -o ID` as field=value pairs.
fn job(conf: &Path, id: &str) -> std::collections::BTreeMap<String, String> {
    let o = slurm(conf, "scontrol", &["show", "job", "-o", id]);
    assert!(o.status.success(), "scontrol show job {id}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).split_whitespace().filter_map(|f| f.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Waits (polling every 0.2 s) until none of `ids` is pending or running.
fn wait_ended(conf: &Path, ids: &[&str], logs: &Path) {
    let t = Instant::now();
    let list = ids.join(",");
    loop {
        let o = slurm(conf, "squeue", &["--noheader", "--format=%i %T", "--jobs", &list]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        if o.status.success() && out.trim().is_empty() {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(240), "jobs {list} still queued after 4 minutes:\n{out}{}\n{}", String::from_utf8_lossy(&o.stderr), logs_of(logs));
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The job logs of the run, for a failure's message.
fn logs_of(slurm_dir: &Path) -> String {
    let mut names: Vec<PathBuf> = std::fs::read_dir(slurm_dir).map(|rd| rd.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    names.sort();
    names.iter().map(|p| format!("== {}\n{}", p.display(), std::fs::read_to_string(p).unwrap_or_default())).collect()
}

/// `scripts/synth-slurm.sh [ARGS] 3 <options> --rules-out OUT/x86_synth.egg`
/// into `out`; returns the array's and the merge's job ids.
fn submit(conf: &Path, out: &Path, pre: &[&str]) -> (String, String) {
    let o = Command::new(root().join("scripts/synth-slurm.sh"))
        .current_dir(root())
        .args(pre)
        .arg(SHARDS.to_string())
        .args(options())
        .arg("--rules-out")
        .arg(out.join("x86_synth.egg"))
        .env("SLURM_CONF", conf)
        .env("MISAAL", env!("CARGO_BIN_EXE_misaal"))
        .env("OUT", out)
        .env("CPUS", "1")
        .env("MERGE_CPUS", std::thread::available_parallelism().map_or(1, |n| n.get().min(2)).to_string())
        .env("TIME", "00:10:00")
        .output()
        .expect("synth-slurm.sh runs");
    let said = text(&o);
    assert!(o.status.success(), "synth-slurm.sh: {said}");
    let after = |word: &str| said.split(word).nth(1).and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next()).filter(|s| !s.is_empty()).map(str::to_string);
    let array = after("as array job ").unwrap_or_else(|| panic!("no array job id in: {said}"));
    let merge = after("the merge as job ").unwrap_or_else(|| panic!("no merge job id in: {said}"));
    (array, merge)
}

fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    OUTPUTS.iter().map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display())))).collect()
}

/// Bad input to the scripts is an error that says what is wrong, before
/// anything is submitted or started.
fn bad_input_is_refused(conf: &Path, out: &Path) {
    let cases: [(&[&str], &str); 5] = [
        (&["--rerun", "3", "3"], "shard 3 is not one of 0..2"),
        (&["--rerun", "1;2", "3"], "shard numbers separated by commas"),
        (&["0"], "SHARDS must be a positive number"),
        (&["3", "--shard", "1/3"], "--shard is set by this script"),
        (&["3", "--rules-out"], "--rules-out needs a file"),
    ];
    for (args, want) in cases {
        let o = Command::new(root().join("scripts/synth-slurm.sh")).current_dir(root()).args(args).env("SLURM_CONF", conf).env("MISAAL", env!("CARGO_BIN_EXE_misaal")).env("OUT", out).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{args:?}: {want:?} missing from: {}", text(&o));
    }
    let o = Command::new(root().join("scripts/slurm-local.sh")).args(["up", "relative/dir"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("absolute path"), "{}", text(&o));
    assert!(!out.join("slurm").exists(), "nothing was submitted");
}

#[test]
fn shards_on_slurm_killed_and_failed_then_resubmitted_merge_to_the_unsharded_bytes() {
    if !misaal_testkit::slow_tier("a one-node Slurm cluster and four synthesis runs take minutes") {
        return;
    }
    let t0 = Instant::now();
    let etc_before = system_config();
    let mut s = Scratch::new();
    let cluster = s.dir.join("cluster");
    let o = Command::new(root().join("scripts/slurm-local.sh")).arg("up").arg(&cluster).output().expect("slurm-local.sh runs");
    match o.status.code() {
        Some(0) => {}
        // 3: a tool or root is missing; 1: a daemon did not start.
        Some(1 | 3) => {
            misaal_testkit::skip(&format!("no one-node Slurm cluster here: {}", text(&o).trim()));
            return;
        }
        _ => panic!("slurm-local.sh up: {}", text(&o)),
    }
    s.cluster = Some(cluster.clone());
    let conf = cluster.join("slurm.conf");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("SLURM_CONF={}", conf.display())), "{}", text(&o));
    let pids: Vec<String> = ["run/slurmctld.pid", "run/slurmd.pid", "munge/munged.pid"].iter().map(|f| std::fs::read_to_string(cluster.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")).trim().to_string()).collect();
    let up = t0.elapsed();
    let out = s.dir.join("out");
    bad_input_is_refused(&conf, &out);

    // The unsharded run, on this machine, in the folder the jobs run in
    // (the repository: they share its verdict cache).
    let whole = s.dir.join("whole");
    let o = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(root())
        .args(["synth", "--target", "x86"])
        .args(options())
        .args(["--jobs", "2", "--out-dir"])
        .arg(&whole)
        .arg("--rules-out")
        .arg(whole.join("x86_synth.egg"))
        .output()
        .expect("misaal runs");
    assert!(o.status.success(), "the unsharded run: {}", text(&o));
    let want = outputs(&whole);
    assert!(String::from_utf8_lossy(&want[4].1).contains("(rewrite"), "the unsharded run wrote rules");
    let local = t0.elapsed() - up;

    // Shard 2 finds a damaged checkpoint (a write the file system lost):
    // it fails at once, as every shard resumes.
    std::fs::create_dir_all(&out).unwrap();
    let damaged = out.join("x86_enumerate.2-of-3.ckpt");
    std::fs::write(&damaged, "config\t").unwrap();
    let (array, merge) = submit(&conf, &out, &[]);
    let slurm_dir = out.join("slurm");
    let dep = job(&conf, &merge).get("Dependency").cloned().unwrap_or_default();
    assert!(dep.starts_with(&format!("afterany:{array}_")), "the merge waits for every shard to end: {dep}");

    // Shard 0 is cancelled once its first unit is checkpointed, while it
    // enumerates its second (the slow accumulator unit).
    let ck0 = out.join("x86_enumerate.0-of-3.ckpt");
    let shard0 = format!("{array}_0");
    let t = Instant::now();
    for i in 0.. {
        if let Ok(cp) = misaal_synth::enumerate::checkpoint::Checkpoint::load(&ck0)
            && !cp.units.is_empty()
        {
            let o = slurm(&conf, "scancel", &[&shard0]);
            assert!(o.status.success(), "scancel {shard0}: {}", text(&o));
            break;
        }
        if i % 25 == 0 {
            let state = job(&conf, &shard0).get("JobState").cloned().unwrap_or_default();
            assert!(["PENDING", "RUNNING"].contains(&state.as_str()), "shard 0 is {state} before its first unit was checkpointed:\n{}", logs_of(&slurm_dir));
        }
        assert!(t.elapsed() < Duration::from_secs(180), "no checkpoint from shard 0 after 3 minutes:\n{}", logs_of(&slurm_dir));
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed_at = t0.elapsed();
    wait_ended(&conf, &[&array, &merge], &slurm_dir);
    let cp = misaal_synth::enumerate::checkpoint::Checkpoint::load(&ck0).expect("shard 0's checkpoint");
    assert_eq!(cp.units.keys().copied().collect::<Vec<_>>(), vec![0], "shard 0 was cancelled after its first unit and before its second:\n{}", logs_of(&slurm_dir));
    let states: Vec<_> = (0..SHARDS).map(|k| job(&conf, &format!("{array}_{k}"))).collect();
    let m = job(&conf, &merge);
    let log = || logs_of(&slurm_dir);
    assert_eq!(states[0]["JobState"], "CANCELLED", "{:?}\n{}", states[0], log());
    assert_eq!((states[1]["JobState"].as_str(), states[1]["ExitCode"].as_str()), ("COMPLETED", "0:0"), "{}", log());
    assert_eq!(states[2]["JobState"], "FAILED", "{}", log());
    assert_ne!(states[2]["ExitCode"], "0:0");
    // The merge ran after the array had ended, and failed.
    assert_eq!((m["JobState"].as_str(), m["ExitCode"].as_str()), ("FAILED", "2:0"), "{m:?}\n{}", log());
    assert!(states.iter().all(|s| s["EndTime"] <= m["StartTime"]), "{m:?} {states:?}");
    let merge_log = std::fs::read_to_string(slurm_dir.join(format!("merge.{merge}.log"))).unwrap_or_else(|e| panic!("merge log: {e}\n{}", log()));
    for want in ["nothing merged: 2 of the 3 shards are not finished", "shard 0/3: ", "has finished 1 of its 2 units", "shard 2/3: ", "not an enumeration checkpoint"] {
        assert!(merge_log.contains(want), "{want:?} missing from the merge's log:\n{merge_log}");
    }
    assert!(!merge_log.contains("shard 1/3"), "shard 1 finished: {merge_log}");
    let shard2_log = std::fs::read_to_string(slurm_dir.join(format!("shard-2.{array}.log"))).unwrap();
    assert!(shard2_log.contains("not an enumeration checkpoint; delete it"), "{shard2_log}");
    // Nothing partial was merged or written.
    for f in OUTPUTS {
        assert!(!out.join(f).exists(), "{f} written by a merge that failed");
    }
    assert!(!out.join("x86_synth.ckpt").exists());

    // As the logs say: the damaged checkpoint deleted, shards 0 and 2
    // resubmitted. Shard 0 continues with its second unit only.
    std::fs::remove_file(&damaged).unwrap();
    let (array2, merge2) = submit(&conf, &out, &["--rerun", "0,2"]);
    wait_ended(&conf, &[&array2, &merge2], &slurm_dir);
    for k in [0, 2] {
        let j = job(&conf, &format!("{array2}_{k}"));
        assert_eq!((j["JobState"].as_str(), j["ExitCode"].as_str()), ("COMPLETED", "0:0"), "shard {k}: {j:?}\n{}", log());
    }
    let tasks = slurm(&conf, "scontrol", &["show", "job", "-o", &array2]);
    let mut tasks: Vec<String> = String::from_utf8_lossy(&tasks.stdout).split_whitespace().filter_map(|f| f.strip_prefix("ArrayTaskId=")).map(str::to_string).collect();
    tasks.sort();
    assert_eq!(tasks, ["0", "2"], "only shards 0 and 2 were resubmitted");
    let m = job(&conf, &merge2);
    assert_eq!((m["JobState"].as_str(), m["ExitCode"].as_str()), ("COMPLETED", "0:0"), "{m:?}\n{}", log());
    let resumed = std::fs::read_to_string(slurm_dir.join(format!("shard-0.{array2}.log"))).unwrap();
    assert!(resumed.contains(&format!("resuming from {}", ck0.display())), "{resumed}");
    let ran: Vec<&str> = resumed.lines().filter(|l| l.starts_with("  [") && l.contains(" Halide terms")).collect();
    assert!(ran.len() == 1 && ran[0].starts_with("  [i32x4,i16x8,i16x8]"), "only the unit left ran again:\n{resumed}");
    let merged = std::fs::read_to_string(slurm_dir.join(format!("merge.{merge2}.log"))).unwrap();
    assert!(merged.contains("merged 3 shards"), "{merged}");
    let got = outputs(&out);
    for ((f, a), (_, b)) in got.iter().zip(&want) {
        assert!(a == b, "{f} of the Slurm run differs from the unsharded run's");
    }
    let slurm_time = t0.elapsed() - up - local;

    // Down: the daemons are gone, and the system's configuration is as it was.
    let o = s.down().expect("the cluster was up");
    assert!(o.status.success(), "slurm-local.sh down: {}", text(&o));
    for (pid, name) in pids.iter().zip(["slurmctld", "slurmd", "munged"]) {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name);
        assert!(!alive, "{name} (pid {pid}) still runs after down");
    }
    assert_eq!(system_config(), etc_before, "/etc/slurm or /etc/munge changed");
    eprintln!(
        "synth_slurm: cluster up in {:.1} s, unsharded run {:.1} s, Slurm runs {:.1} s (scancel at {:.1} s), {:.1} s in all",
        up.as_secs_f64(),
        local.as_secs_f64(),
        slurm_time.as_secs_f64(),
        killed_at.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
}
