//! `rulesets/x86.verdicts.tsv` ships the proofs of the bundled rules (and
//! `arm.verdicts.tsv`, `hvx.verdicts.tsv` those of the ARM and HVX rules), so a
//! fresh checkout compiles every benchmark without proving a rule first. If a
//! rule or a spec changes, its key changes, the shipped entry no longer
//! answers, and this test fails until the file is regenerated (the
//! commands are at `the_shipped_verdicts_prove_every_instance`).

use misaal_compiler::isel::{Options, Target, rule_book, select_module_with};
use misaal_frontends::stmt::parse_module;

#[test]
fn the_shipped_verdicts_cover_every_benchmark() {
    let t = Target::x86().expect("the bundled x86 target loads");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("shipped-verdicts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // An empty local cache: only the shipped layer can answer.
    let local = dir.join("verify.tsv");
    let o = Options { verdict_cache: Some(local.clone()), ..Options::default() };
    let book = rule_book(&t, &o).expect("the bundled ruleset loads");
    let stmts = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/stmt");
    let mut files: Vec<_> = std::fs::read_dir(stmts).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "stmt")).collect();
    files.sort();
    assert!(files.len() >= 33);
    for f in &files {
        let m = parse_module(&f.display().to_string(), &std::fs::read_to_string(f).unwrap()).unwrap();
        let s = select_module_with(&t, &book, &m, &o).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let _ = s;
        // A verdict proved now would have been saved to the local cache.
        assert!(
            !local.exists(),
            "{}: compiling proved rule instances that rulesets/x86.verdicts.tsv lacks; regenerate it (tests/shipped_verdicts.rs gives the commands)\nnew: {}",
            f.display(),
            std::fs::read_to_string(&local).unwrap_or_default().lines().take(3).collect::<Vec<_>>().join("\n")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rulesets/<target>.verdicts.tsv` holds a proof of every instance of the
/// target's default rule files (x86: the synthesized `rulesets/x86.egg`;
/// ARM and HVX: the hand-written `<target>_hand.egg` and the synthesized
/// `<target>.egg`)
/// (keyed by `proof_key`, the meaning of both sides alone), so that the
/// compiler finds every instance proved without proving it. Checked
/// without the compiler: every instance's key must be a `proved` line of
/// the shipped file. Regenerate with
///     misaal verify --rules arm --timeout 120000 --no-cache --export-verdicts rulesets/arm.verdicts.tsv
/// (and the same for hvx); ARM's 32-bit multiply-highs need the longer timeout.
/// x86's file also ships the hand-written rules' proofs (for `--rules
/// rulesets/x86_hand.egg`, which tests select with): export both and keep
/// each key once, in byte order:
///     misaal verify --rules x86 --timeout 120000 --no-cache --export-verdicts A
///     misaal verify --rules rulesets/x86_hand.egg --timeout 120000 --no-cache --export-verdicts B
///     cat A B | LC_ALL=C sort -t "$(printf '\t')" -k1,1 -s | awk -F '\t' '!seen[$1]++' > rulesets/x86.verdicts.tsv
#[test]
fn the_shipped_verdicts_prove_every_instance() {
    use misaal_verifier::audit::{AuditConfig, Libraries, build_sides, load_rules, plan, proof_key, unverified_specs};
    let halide = misaal_frontends::halide_ops().unwrap();
    for isa in [&misaal_rulesets::X86, &misaal_rulesets::ARM, &misaal_rulesets::HVX] {
        let dir = isa.spec_dir();
        let specs = misaal_isa::SpecLibrary::load_dir(&dir).unwrap();
        let status = misaal_isa::StatusTable::for_spec_dir(&dir).unwrap();
        let libs = Libraries { target: &specs, halide: &halide };
        let cfg = AuditConfig { vector_widths: isa.vector_widths.to_vec(), ..AuditConfig::default() };
        // The hand-written and the synthesized file: both are loaded by default.
        let path = isa.default_rulesets().iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ");
        let rules = load_rules(&path, &isa.default_rules_text().unwrap(), &libs, &cfg).unwrap_or_else(|d| panic!("{d}"));
        let shipped = std::fs::read_to_string(isa.shipped_verdicts()).unwrap_or_else(|e| panic!("{}: {e}", isa.shipped_verdicts().display()));
        let proved: std::collections::HashSet<&str> = shipped.lines().filter_map(|l| l.split_once('\t')).filter(|(_, rest)| rest.starts_with("proved\t")).map(|(k, _)| k).collect();
        let pre_keyed: std::collections::HashSet<&str> = shipped.lines().filter_map(|l| l.split_once('\t')).filter(|(_, rest)| rest.starts_with("proof-key\t")).map(|(k, _)| k).collect();
        let mut no_pre_key = Vec::new();
        let jobs = plan(&rules, &cfg).unwrap_or_else(|(_, e)| panic!("{e}"));
        assert!(jobs.len() > 100, "{}: only {} instances", isa.name, jobs.len());
        let mut missing = Vec::new();
        for j in &jobs {
            let env = j.env.as_ref().unwrap_or_else(|| panic!("{} has no instantiation", j.rule.name));
            // Instances over specs not verified here (x86's AVX-512 rules on
            // an AVX2 machine) are never loaded, so never proved.
            if !unverified_specs(&libs, j.rule, env, &status).is_empty() {
                continue;
            }
            let sides = build_sides(&libs, j.rule, env).unwrap_or_else(|e| panic!("{} [{}]: {e}", j.rule.name, misaal_rulesets::describe_env(env)));
            if !proved.contains(proof_key(&sides).as_str()) {
                missing.push(format!("{} [{}]", j.rule.name, misaal_rulesets::describe_env(env)));
            }
            // Without a current pre-key row a compile unrolls both sides to
            // find the proof (and writes the pair to the local cache): right,
            // but the slow path on every fresh checkout. Pre-keys digest the
            // side-building code too, so an edit to isa/src or rulesets/src
            // makes all of them stale.
            if misaal_verifier::prekey::pre_key(&libs, j.rule, env).is_some_and(|k| !pre_keyed.contains(k.as_str())) {
                no_pre_key.push(format!("{} [{}]", j.rule.name, misaal_rulesets::describe_env(env)));
            }
        }
        assert!(
            missing.is_empty(),
            "{} of {} {} instances have no proof in {}; regenerate it:\n    misaal verify --rules {} --timeout 120000 --no-cache --export-verdicts {}\nfirst: {}",
            missing.len(),
            jobs.len(),
            isa.name,
            isa.shipped_verdicts().display(),
            isa.name,
            isa.shipped_verdicts().display(),
            missing.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
        assert!(
            no_pre_key.is_empty(),
            "{} of {} {} instances have no current pre-key row in {} (the side-building code or a spec changed); export the pre-keys with `misaal verify --rules {} --export-verdicts A` (as above, without --no-cache: the proofs are there) and merge A with the file's proof rows:\n    awk -F '\\t' '$2 != \"proof-key\"' FILE | cat A - | LC_ALL=C sort -t \"$(printf '\\t')\" -k1,1 -s | awk -F '\\t' '!seen[$1]++'\nfirst: {}",
            no_pre_key.len(),
            jobs.len(),
            isa.name,
            isa.shipped_verdicts().display(),
            isa.name,
            no_pre_key.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
    }
}
