//! Enumeration (`misaal synth --phase enumerate`): the classic x86 lowerings
//! are rediscovered from the semantics alone, every rule it writes is
//! proved again by the verifier on its own, and sharded or interrupted runs
//! merge to the whole run byte for byte.

use misaal_isa::{SpecLibrary, StatusTable};
use misaal_synth::enumerate::driver::{RunOptions, merge, run_shard};
use misaal_synth::enumerate::halide::HTy;
use misaal_synth::enumerate::{Config, Inputs, Shard, UnitResult, X86Pools, render_rules, run_unit};
use misaal_verifier::audit::{AuditConfig, Libraries, VerdictCache, Verdict, load_rules, plan, run_job};
use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

struct World {
    x86: SpecLibrary,
    halide: SpecLibrary,
    classes: misaal_datalog::ClassSet,
    relevant: BTreeSet<(String, String)>,
}

/// The verified x86 specs (what `misaal synth` reads), their classes and
/// relevance sets, and the Halide ops.
fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let dir = misaal_isa::bundled_spec_dir("x86");
        let mut x86 = SpecLibrary::load_dir(&dir).unwrap_or_else(|d| panic!("{d}"));
        let status = StatusTable::load(&StatusTable::path_for(&dir)).unwrap_or_else(|d| panic!("{d}"));
        x86.retain_verified(&status);
        let classes = misaal_datalog::classify(&x86);
        let relevant = misaal_datalog::relevance(&x86, &classes).into_iter().map(|r| (r.class, r.relevant_class)).collect();
        let halide = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
        World { x86, halide, classes, relevant }
    })
}

fn ty(s: &str) -> HTy {
    HTy::parse(s).unwrap_or_else(|| panic!("bad type {s}"))
}

fn config(sigs: &[&[&str]], halide_depth: u8, x86_depth: u8) -> Config {
    Config {
        halide_depth,
        halide_max_size: if halide_depth == 1 { 1 } else { 3 },
        x86_depth,
        signatures: sigs.iter().map(|s| s.iter().map(|t| ty(t)).collect()).collect(),
        ..Config::default()
    }
}

/// Runs `f` with the enumeration's inputs; the verdict cache is in memory
/// only, so every proof here is made afresh.
fn with_inputs<R>(f: impl FnOnce(&Inputs) -> R) -> R {
    let w = world();
    let class_of = |n: &str| w.classes.class_of(n).map(|(c, _)| c.name.clone());
    let audit = AuditConfig::default();
    let cache = Mutex::new(VerdictCache::default());
    let inp = Inputs { target: &w.x86, halide: &w.halide, class_of: &class_of, relevant: &w.relevant, audit: &audit, cache: &cache };
    f(&inp)
}

fn unit(cfg: &Config, index: usize) -> UnitResult {
    with_inputs(|inp| run_unit(inp, cfg, &mut X86Pools::new(), index).expect("unit runs"))
}

/// The right side of the rule whose left side is `lhs`, if one was found.
fn rhs_of<'a>(r: &'a UnitResult, lhs: &str) -> Option<&'a str> {
    let head = format!("(rewrite {lhs} ");
    r.rules.iter().find_map(|x| x.text.strip_prefix(&head)).map(|rest| rest.split(" :name").next().expect("a name"))
}

/// Proves a rule file's rules again, from scratch, the way `misaal verify`
/// does; returns the first rule that is not proved.
fn reverify(text: &str) -> Result<usize, String> {
    let w = world();
    let libs = Libraries { target: &w.x86, halide: &w.halide };
    let cfg = AuditConfig::default();
    let cache = Mutex::new(VerdictCache::default());
    let rules = load_rules("enumerated.egg", text, &libs, &cfg).map_err(|d| d.to_string())?;
    let jobs = plan(&rules, &cfg).map_err(|(_, e)| e)?;
    for j in &jobs {
        let r = run_job(&libs, j, &cfg, &cache);
        if r.verdict != Verdict::Proved {
            return Err(format!("{} [{}]: {} {}", r.rule, r.instantiation, r.verdict.label(), r.counterexample));
        }
    }
    Ok(rules.len())
}

#[test]
fn depth_two_rediscovers_vpavgw_for_the_rounding_average_of_u16_and_proves_it() {
    let cfg = config(&[&["u16x8", "u16x8"]], 2, 1);
    let r = unit(&cfg, 0);
    assert_eq!(rhs_of(&r, "(rounding_halving_add (u 16 8) ?a ?b)"), Some("(x86 _mm_avg_epu16 ?a ?b)"), "{:#?}", r.rules.iter().map(|x| &x.text).collect::<Vec<_>>());
    // The rule as written, alone, proves again.
    let rule = r.rules.iter().find(|x| x.text.contains("rounding_halving_add (u 16 8) ?a ?b)")).expect("the rule");
    assert!(rule.provenance.contains("avg"), "{}", rule.provenance);
    assert_eq!(reverify(&format!("(ruleset x86)\n{}\n", rule.text)), Ok(1));
    // Unsigned saturating add and sub and the high half of a product, too.
    assert_eq!(rhs_of(&r, "(saturating_add (u 16 8) ?a ?b)"), Some("(x86 _mm_adds_epu16 ?a ?b)"));
    assert_eq!(rhs_of(&r, "(saturating_sub (u 16 8) ?a ?b)"), Some("(x86 _mm_subs_epu16 ?a ?b)"));
    assert_eq!(rhs_of(&r, "(mul_shift_right (u 16 8) ?a ?b (broadcast (u 16 8) 16))"), Some("(x86 _mm_mulhi_epu16 ?a ?b)"));
}

#[test]
fn rediscovers_vpmaddwd_vpmulhw_and_signed_saturation_on_i16() {
    let cfg = config(&[&["i16x8", "i16x8"]], 2, 1);
    let r = unit(&cfg, 0);
    let texts: Vec<&String> = r.rules.iter().map(|x| &x.text).collect();
    // vpmaddwd: a pairwise reduce-add of a widening multiply (two Halide ops, one instruction).
    assert_eq!(rhs_of(&r, "(vector_reduce_add (i 32 4) 2 (widening_mul (i 16 8) 1 ?a ?b))"), Some("(x86 _mm_madd_epi16 ?a ?b)"), "{texts:#?}");
    assert_eq!(rhs_of(&r, "(mul_shift_right (i 16 8) ?a ?b (broadcast (i 16 8) 16))"), Some("(x86 _mm_mulhi_epi16 ?a ?b)"), "{texts:#?}");
    assert_eq!(rhs_of(&r, "(saturating_add (i 16 8) ?a ?b)"), Some("(x86 _mm_adds_epi16 ?a ?b)"));
    assert_eq!(rhs_of(&r, "(saturating_sub (i 16 8) ?a ?b)"), Some("(x86 _mm_subs_epi16 ?a ?b)"));
    // Rounding mul-shift by 15 is not vpmulhrsw (Halide saturates
    // -32768 * -32768, the instruction does not): no such one-instruction rule.
    assert_eq!(rhs_of(&r, "(rounding_mul_shift_right (i 16 8) ?a ?b (broadcast (i 16 8) 15))"), None, "{texts:#?}");
    // Everything the unit proved proves again from its text.
    let file = render_rules(&cfg, std::slice::from_ref(&r));
    assert_eq!(reverify(&file), Ok(r.rules.len()));
}

#[test]
fn x86_depth_two_finds_absd_and_widening_adds_on_u8() {
    // Depth 2 over all verified instructions takes minutes; these are the
    // instructions of the known lowerings, plus decoys of the same lanes.
    let mut cfg = config(&[&["u8x16", "u8x16"]], 1, 2);
    let only = "_mm_add_epi8 _mm_sub_epi8 _mm_max_epu8 _mm_min_epu8 _mm_subs_epu8 _mm_adds_epu8 _mm_or_si128 _mm_xor_si128 _mm_avg_epu8 \
                _mm_cmpeq_epi8 _mm256_cvtepu8_epi16 _mm256_cvtepi8_epi16 _mm256_add_epi16 _mm256_sub_epi16 _mm256_mullo_epi16";
    cfg.x86_only = Some(only.split_whitespace().map(String::from).collect());
    let r = unit(&cfg, 0);
    let texts: Vec<&String> = r.rules.iter().map(|x| &x.text).collect();
    assert_eq!(rhs_of(&r, "(rounding_halving_add (u 8 16) ?a ?b)"), Some("(x86 _mm_avg_epu8 ?a ?b)"), "{texts:#?}");
    assert_eq!(rhs_of(&r, "(widening_add (u 8 16) ?a ?b)"), Some("(x86 _mm256_add_epi16 (x86 _mm256_cvtepu8_epi16 ?a) (x86 _mm256_cvtepu8_epi16 ?b))"), "{texts:#?}");
    // absd of u8 in three instructions (which three is the enumeration's choice).
    let absd = rhs_of(&r, "(absd (u 8 16) ?a ?b)").unwrap_or_else(|| panic!("no absd rule: {texts:#?}"));
    assert_eq!(absd.matches("(x86 ").count(), 3, "{absd}");
    let file = render_rules(&cfg, std::slice::from_ref(&r));
    assert_eq!(reverify(&file), Ok(r.rules.len()));
}

#[test]
fn two_input_narrowing_packs_are_found_through_concat() {
    // vpackuswb/vpacksswb and vpackusdw/vpackssdw: a saturating narrow of
    // the concatenation of two vectors (evaluated at full lanes, since a
    // concat does not commute with taking the low half).
    let cfg = config(&[&["i16x8", "i16x8"], &["i32x4", "i32x4"]], 1, 1);
    let (r16, r32) = (unit(&cfg, 0), unit(&cfg, 1));
    let texts: Vec<&String> = r16.rules.iter().chain(&r32.rules).map(|x| &x.text).collect();
    assert_eq!(rhs_of(&r16, "(saturating_cast (i 16 16) 0 8 (concat (i 16 8) 8 ?a ?b))"), Some("(x86 _mm_packus_epi16 ?a ?b)"), "{texts:#?}");
    assert_eq!(rhs_of(&r16, "(saturating_cast (i 16 16) 1 8 (concat (i 16 8) 8 ?a ?b))"), Some("(x86 _mm_packs_epi16 ?a ?b)"), "{texts:#?}");
    assert_eq!(rhs_of(&r32, "(saturating_cast (i 32 8) 0 16 (concat (i 32 4) 4 ?a ?b))"), Some("(x86 _mm_packus_epi32 ?a ?b)"), "{texts:#?}");
    assert_eq!(rhs_of(&r32, "(saturating_cast (i 32 8) 1 16 (concat (i 32 4) 4 ?a ?b))"), Some("(x86 _mm_packs_epi32 ?a ?b)"), "{texts:#?}");
    // At 256 bits the packs work per 128-bit lane; the fix-up is searched
    // over the immediates and is Halide's own: vpermq 0xD8 after, or
    // vperm2i128 0x20/0x31 before.
    assert_eq!(
        rhs_of(&r16, "(saturating_cast (i 16 32) 0 8 (concat (i 16 16) 16 ?a ?b))"),
        Some("(x86 _mm256_permute4x64_epi64 (x86 _mm256_packus_epi16 ?a ?b) 216)"),
        "{texts:#?}"
    );
    assert!(
        r32.rules.iter().any(|x| x.text.contains("(saturating_cast (i 32 16) 1 16 (concat (i 32 8) 8 ?a ?b)) (x86 _mm256_packs_epi32 (x86 _mm256_permute2x128_si256 ?a ?b 32) (x86 _mm256_permute2x128_si256 ?a ?b 49))")),
        "{texts:#?}"
    );
    // Proved again from the text alone.
    let file = render_rules(&cfg, &[r16, r32]);
    assert_eq!(reverify(&file), Ok(file.matches("(rewrite").count()));
}

/// A rule the verifier refutes is never written. With two fingerprint
/// cases, many wrong pairs look equal and reach the verifier; they are
/// refuted and left out, and what is written is still all proved.
#[test]
fn nothing_unproved_is_written() {
    let mut cfg = config(&[&["i16x8", "i16x8"]], 1, 1);
    cfg.cases = 2;
    let r = unit(&cfg, 0);
    assert!(r.refuted > 0, "two cases should let wrong pairs through: {r:#?}");
    assert_eq!(r.not_proved.len(), r.refuted + r.unknown);
    for n in &r.not_proved {
        let (lhs, rhs) = n.split_once(' ').expect("verdict first").1.split_once(" => ").expect("a pair");
        assert!(!r.rules.iter().any(|x| x.text.starts_with(&format!("(rewrite {lhs} {rhs} "))), "{n} was written");
    }
    for rule in &r.rules {
        assert_eq!(reverify(&format!("(ruleset x86)\n{}\n", rule.text)), Ok(1), "{}", rule.text);
    }
}

fn small() -> Config {
    config(&[&["u8x16"], &["u16x8", "u16x8"], &["i16x8"], &["i32x4", "i32x4"], &["u8x16", "i8x16"]], 1, 1)
}

#[test]
fn shards_merged_equal_the_whole_run() {
    let cfg = small();
    let dir = std::env::temp_dir().join(format!("misaal-enum-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let quiet = |_: &UnitResult, _: f64| {};
    let digest = cfg.digest(&world().x86);
    let whole = with_inputs(|inp| {
        let ck = dir.join("whole.ckpt");
        let opts = RunOptions { shard: Shard::WHOLE, checkpoint: &ck, resume: false, digest: digest.clone(), max_units: None, on_unit: &quiet };
        run_shard(inp, &cfg, &opts).expect("whole").0
    });
    let whole_text = render_rules(&cfg, &whole.units.values().cloned().collect::<Vec<_>>());
    assert!(whole_text.matches("(rewrite").count() > 10, "{whole_text}");
    let shards: Vec<_> = (0..3)
        .map(|k| {
            with_inputs(|inp| {
                let ck = dir.join(format!("s{k}.ckpt"));
                let opts = RunOptions { shard: Shard { k, n: 3 }, checkpoint: &ck, resume: false, digest: digest.clone(), max_units: None, on_unit: &quiet };
                (format!("shard {k}"), run_shard(inp, &cfg, &opts).expect("shard").0)
            })
        })
        .collect();
    // Shards hold disjoint units.
    assert_eq!(shards.iter().map(|(_, c)| c.units.len()).sum::<usize>(), cfg.signatures.len());
    let merged = merge(&cfg, &digest, shards.clone()).expect("merge");
    assert_eq!(render_rules(&cfg, &merged), whole_text);
    // A missing shard or a foreign checkpoint is an error, not a shorter file.
    assert!(merge(&cfg, &digest, shards[..2].to_vec()).is_err());
    assert!(merge(&cfg, "0000", shards).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_run_resumes_to_the_same_rules() {
    let cfg = small();
    let dir = std::env::temp_dir().join(format!("misaal-enum-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let quiet = |_: &UnitResult, _: f64| {};
    let digest = cfg.digest(&world().x86);
    let ck = dir.join("run.ckpt");
    let run = |resume: bool, max_units: Option<usize>| {
        with_inputs(|inp| {
            let opts = RunOptions { shard: Shard::WHOLE, checkpoint: &ck, resume, digest: digest.clone(), max_units, on_unit: &quiet };
            run_shard(inp, &cfg, &opts).expect("run").0
        })
    };
    // Stopped after two units: the checkpoint on disk holds exactly those.
    let first = run(false, Some(2));
    assert_eq!(first.units.len(), 2);
    let on_disk = misaal_synth::enumerate::checkpoint::Checkpoint::load(&ck).expect("checkpoint");
    assert_eq!(on_disk, first);
    let resumed = run(true, None);
    let whole = run(false, None);
    let text = |c: &misaal_synth::enumerate::checkpoint::Checkpoint| render_rules(&cfg, &c.units.values().cloned().collect::<Vec<_>>());
    assert_eq!(text(&resumed), text(&whole));
    // A checkpoint of another configuration is refused.
    let other = with_inputs(|inp| {
        let opts = RunOptions { shard: Shard::WHOLE, checkpoint: &ck, resume: true, digest: "other".into(), max_units: None, on_unit: &quiet };
        run_shard(inp, &cfg, &opts).map(|_| ())
    });
    assert!(other.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

// The command line: the same guarantees through `misaal synth`, with a quick
// configuration so that each run takes seconds: x86 depth 1, four units and
// the SSE2 baseline's instructions (tests/synth_pipeline.rs's; over every
// unit and every verified spec, the three runs took minutes of CI).

/// The quick configuration's units.
const QUICK_UNITS: &str = "u16x8,u16x8;i16x8,i16x8;u8x16,u8x16;i32x4";

fn misaal() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_misaal"))
}

fn quick(out: &std::path::Path) -> std::process::Command {
    let mut c = misaal();
    c.args(["synth", "--target", "x86", "--phase", "enumerate", "--depth", "2", "--x86-depth", "1", "--units", QUICK_UNITS, "--cpu-features", "sse2", "--out-dir"]).arg(out);
    c
}

fn run_ok(c: &mut std::process::Command) -> String {
    let o = c.output().expect("misaal runs");
    assert!(o.status.success(), "{:?}\n{}{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("misaal-enum-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The whole quick run's rule file, made once.
fn whole_cli() -> &'static str {
    static W: OnceLock<String> = OnceLock::new();
    W.get_or_init(|| {
        let d = scratch("whole");
        let out = run_ok(&mut quick(&d));
        assert!(out.contains("rules proved"), "{out}");
        let text = std::fs::read_to_string(d.join("x86_enumerated.egg")).expect("rule file");
        let csv = std::fs::read_to_string(d.join("synth_x86.csv")).expect("phase csv");
        assert!(csv.lines().any(|l| l.starts_with("enumerate,")), "{csv}");
        text
    })
}

#[test]
fn cli_shards_merged_equal_the_whole_file() {
    let d = scratch("shards");
    for k in 0..2 {
        run_ok(quick(&d).args(["--shard", &format!("{k}/2")]));
    }
    run_ok(quick(&d).args(["--merge", "2"]));
    let merged = std::fs::read_to_string(d.join("x86_enumerated.egg")).expect("merged file");
    assert_eq!(merged, whole_cli());
    assert!(merged.contains("(rewrite (rounding_halving_add (u 16 8) ?a ?b) (x86 _mm_avg_epu16 ?a ?b)"), "{merged}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_killed_run_resumes_to_the_whole_file() {
    let d = scratch("kill");
    let ck = d.join("x86_enumerate.0-of-1.ckpt");
    let mut child = quick(&d).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().expect("spawn");
    // Kill it as soon as one unit is checkpointed (or let it finish if it is quicker than the poll).
    let t = std::time::Instant::now();
    let mut killed = false;
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if let Ok(cp) = misaal_synth::enumerate::checkpoint::Checkpoint::load(&ck)
            && !cp.units.is_empty()
        {
            child.kill().expect("kill");
            let _ = child.wait();
            killed = true;
            break;
        }
        assert!(t.elapsed().as_secs() < 300, "no checkpoint after 5 minutes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = misaal_synth::enumerate::checkpoint::Checkpoint::load(&ck).expect("a whole checkpoint after the kill");
    assert!(!before.units.is_empty());
    if killed {
        // Killed between units: what is left is for the resumed run to do.
        let total = QUICK_UNITS.split(';').count();
        assert!(before.units.len() < total, "the run finished before the kill");
    }
    let out = run_ok(quick(&d).arg("--resume"));
    assert!(out.contains("resuming"), "{out}");
    assert_eq!(std::fs::read_to_string(d.join("x86_enumerated.egg")).expect("rule file"), whole_cli());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_refuses_bad_shards_foreign_checkpoints_and_missing_shards() {
    let d = scratch("bad");
    for bad in ["3/2", "1/0", "x/2", "12"] {
        let o = quick(&d).args(["--shard", bad]).output().expect("runs");
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--shard"), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // A checkpoint of another configuration is not resumed.
    std::fs::write(d.join("x86_enumerate.0-of-1.ckpt"), "misaal enumerate checkpoint 2\nconfig\tdeadbeef\t0/1\nend\n").unwrap();
    let o = quick(&d).arg("--resume").output().expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("another configuration"), "{}", String::from_utf8_lossy(&o.stderr));
    // Merging shards that never ran.
    let o = quick(&d).args(["--merge", "3"]).output().expect("runs");
    assert_eq!(o.status.code(), Some(2));
    // Rules are never synthesized from unverified specs.
    let o = quick(&d).arg("--include-unverified").output().expect("runs");
    assert_eq!(o.status.code(), Some(2));
    // An enumeration option on another phase.
    let o = misaal().args(["synth", "--target", "x86", "--phase", "relevance", "--shard", "0/2"]).output().expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}
