//! The `misaal isa` commands as a user runs them.

use std::process::Command;

fn misaal(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).args(args).output().expect("run misaal");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn list_filters_by_feature() {
    let (ok, out, _) = misaal(&["isa", "list", "--target", "x86", "--feature", "avx2"]);
    assert!(ok);
    assert!(out.lines().next().unwrap().starts_with("intrinsic"));
    assert!(out.contains("_mm256_add_epi16") && out.contains("vpaddw"));
    assert!(!out.contains("_mm512_add_epi16"), "avx512 specs must not match --feature avx2");
}

#[test]
fn show_prints_the_spec_and_lane_zero() {
    let (ok, out, _) = misaal(&["isa", "show", "_mm256_madd_epi16"]);
    assert!(ok);
    assert!(out.contains("instr _mm256_madd_epi16(a: bv256, b: bv256) -> bv256"));
    assert!(out.contains("lane 0 = dst[31:0]"));
    assert!(out.contains("bvmul") && out.contains("sext"));
}

#[test]
fn eval_computes_in_hex() {
    // Lane 0: 0x7fff + 1 saturates high; lane 1: 0x8000 + -1 saturates low.
    let a = "0x0000000000000000000000000000000000000000000000000000000080007fff";
    let b = "0x00000000000000000000000000000000000000000000000000000000ffff0001";
    let (ok, out, err) = misaal(&["isa", "eval", "_mm256_adds_epi16", a, b]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "0x0000000000000000000000000000000000000000000000000000000080007fff");
    let (ok, _, err) = misaal(&["isa", "eval", "_mm256_adds_epi16", a]);
    assert!(!ok && err.contains("takes 2 operand(s), found 1"), "{err}");
    let (ok, _, err) = misaal(&["isa", "eval", "_mm_add_epi8", "0x1", "0xzz"]);
    assert!(!ok && err.contains("operand `b`"), "{err}");
}

#[test]
fn check_writes_the_csv_with_documented_columns() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-{}", std::process::id()));
    let csv = dir.join("x86_semantics.csv");
    let ev = dir.join("evidence");
    let (ok, out, err) = misaal(&["isa", "check", "--target", "x86", "--family", "madd", "--out", csv.to_str().unwrap(), "--evidence", ev.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("family") && out.contains("madd"));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("intrinsic,instruction,feature,status,cases,seconds"));
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() >= 6);
    // A spec this CPU cannot run is skipped (0 cases), never silicon.
    assert!(rows.iter().all(|r| r.contains(",silicon,1000,") || r.contains(",skipped,0,")), "{rows:#?}");
    assert!(rows.iter().any(|r| r.starts_with("_mm_madd_epi16,") && r.contains(",silicon,1000,")), "{rows:#?}");
    let avx512 = std::arch::is_x86_feature_detected!("avx512bw") && std::arch::is_x86_feature_detected!("avx512vl");
    assert_eq!(rows.iter().all(|r| r.contains(",silicon,")), avx512, "{rows:#?}");
    let silicon = rows.iter().filter(|r| r.contains(",silicon,")).count();
    // This machine's evidence file: a row per spec that ran; skipped is no evidence.
    let table = machine_file(&ev);
    assert_eq!(table.lines().filter(|l| l.contains("\tsilicon\t1000\t")).count(), silicon, "{table}");
    assert_eq!(table.lines().filter(|l| !l.starts_with('#')).count(), silicon, "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_rejects_zero_cases() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-zero-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = dir.join("evidence");
    let out = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .args(["isa", "check", "--family", "add", "--cases", "0", "--evidence", status.to_str().unwrap(), "--out", dir.join("r.csv").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cases must be at least 1"));
    assert!(!status.exists() && !dir.join("r.csv").exists(), "nothing may be labelled after zero cases");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--cases N` with 1 <= N < 1000: a spec that agrees on N cases is
/// `silicon` with N recorded, in the CSV and in this machine's evidence
/// file. The evidence goes to a scratch folder (`--evidence`); the committed
/// one is left alone.
#[test]
fn check_records_fewer_cases_when_asked() {
    let committed_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/isa/specs/x86/evidence");
    let committed = |dir: &str| -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect();
        v.sort();
        v
    };
    let before = committed(committed_dir);
    let dir = std::env::temp_dir().join(format!("misaal-cli-cases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for n in ["1", "7", "999"] {
        let status = dir.join(format!("evidence-{n}"));
        let csv = dir.join(format!("r-{n}.csv"));
        let (ok, out, err) = misaal(&[
            "isa", "check", "--target", "x86", "--family", "add", "--filter", "_mm_add_epi8", "--cases", n,
            "--evidence", status.to_str().unwrap(), "--out", csv.to_str().unwrap(),
        ]);
        assert!(ok, "{out}{err}");
        assert!(out.contains(&format!("1 specs checked with {n} cases each")), "{out}");
        let rows: Vec<String> = std::fs::read_to_string(&csv).unwrap().lines().skip(1).map(String::from).collect();
        // SSE2 runs on every x86-64 CPU.
        assert_eq!(rows.len(), 1, "{rows:#?}");
        assert!(rows[0].starts_with(&format!("_mm_add_epi8,paddb,sse2,silicon,{n},")), "{rows:#?}");
        let table = machine_file(&status);
        let row: Vec<&str> = table.lines().find(|l| l.starts_with("_mm_add_epi8\t")).unwrap_or_else(|| panic!("{table}")).split('\t').collect();
        assert_eq!(row[1..3], ["silicon", n], "{table}");
    }
    assert!(committed(committed_dir) == before, "isa check with --evidence must not rewrite {committed_dir}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Classes (and everything after them) read only specs that met their
/// oracle: a spec folder never checked is refused, and a checked one is used.
#[test]
fn classes_read_only_verified_specs() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-unverified-{}", std::process::id()));
    let specs = dir.join("specs");
    std::fs::create_dir_all(&specs).unwrap();
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/isa/specs/x86/madd.sema"), specs.join("madd.sema")).unwrap();
    let s = specs.to_str().unwrap();
    let out_dir = dir.join("reports");
    let o = out_dir.to_str().unwrap();
    let (ok, _, err) = misaal(&["classes", "--specs", s, "--out-dir", o, "--no-baseline"]);
    assert!(!ok && err.contains("no spec in") && err.contains("has met its oracle"), "{err}");
    let (ok, out, err) = misaal(&["classes", "--specs", s, "--out-dir", o, "--no-baseline", "--include-unverified"]);
    assert!(ok && err.contains("--include-unverified"), "{out}{err}");
    let (ok, out, err) = misaal(&["isa", "check", "--specs", s, "--filter", "_mm_", "--out", dir.join("r.csv").to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    let (ok, out, err) = misaal(&["classes", "--specs", s, "--out-dir", o, "--no-baseline"]);
    assert!(ok, "{out}{err}");
    assert!(err.contains("are unverified and left out") && err.contains("_mm256_"), "{err}");
    let classes = std::fs::read_to_string(out_dir.join("x86_classes.csv")).unwrap();
    assert!(classes.contains("_mm_madd_epi16") && !classes.contains("_mm256_madd_epi16"), "{classes}");
    // A spec edited after its check is unverified again.
    let text = std::fs::read_to_string(specs.join("madd.sema")).unwrap();
    std::fs::write(specs.join("madd.sema"), text.replacen("SignExtend32", "ZeroExtend32", 1)).unwrap();
    let (_, _, err) = misaal(&["classes", "--specs", s, "--out-dir", o, "--no-baseline"]);
    assert!(err.contains("left out") || err.contains("has met its oracle"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_spec_folder_is_an_error_with_location() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.sema"), "instr f(a: bv8) -> bv8 [x86 sse2 nop]\nFOR j := 0 to 1\n").unwrap();
    let (ok, _, err) = misaal(&["isa", "check", "--specs", dir.to_str().unwrap(), "--out", dir.join("r.csv").to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("bad.sema:3:1: error: expected `ENDFOR`"), "{err}");
    assert!(!dir.join("r.csv").exists(), "no report for specs that do not load");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn classes_writes_three_csvs_and_shows_a_class() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-classes-{}", std::process::id()));
    // Every spec, verified on this CPU or not: this test is about the reports.
    let (ok, out, err) = misaal(&["classes", "--target", "x86", "--out-dir", dir.to_str().unwrap(), "--timings", "--include-unverified"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("x compression") && out.contains("membership: ") && out.contains("lane program rule times"), "{out}");
    let classes = std::fs::read_to_string(dir.join("x86_classes.csv")).unwrap();
    assert!(classes.starts_with("class,instruction,params,check\n"));
    assert!(classes.lines().skip(1).all(|l| l.ends_with(",z3") || l.contains(",quickcheck:")), "every membership is checked");
    let lanes = std::fs::read_to_string(dir.join("x86_lanes.csv")).unwrap();
    assert!(lanes.starts_with("instruction,unique_lanes,reduction_factor,lane0_slices\n"));
    assert!(lanes.contains("_mm256_dpbusd_epi32,0,4,a[7:0] a[15:8] a[23:16] a[31:24] b[7:0] b[15:8] b[23:16] b[31:24] src[31:0]"));
    let families = std::fs::read_to_string(dir.join("x86_class_families.csv")).unwrap();
    assert!(families.starts_with("family,instructions,classes,ratio,shared,shared_classes,shared_ratio,baseline,baseline_classes,baseline_ratio\n"), "{families}");
    assert!(families.lines().last().unwrap().starts_with("all,"), "{families}");
    assert!(out.contains("against hydride_x86_classes"), "{out}");
    // A malformed baseline is an input error with its position.
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "class,instruction\nfoo,bar baz\n").unwrap();
    let (ok, _, err) = misaal(&["classes", "--baseline", bad.to_str().unwrap(), "--out-dir", dir.to_str().unwrap()]);
    assert!(!ok && err.contains("bad.csv:2:5: expected an instruction name"), "{err}");
    let (ok, out, _) = misaal(&["classes", "--include-unverified", "show", "_mm256_unpackhi_epi16"]);
    assert!(ok);
    assert!(out.contains("class interleave") && out.contains("_mm512_unpacklo_epi8") && out.contains("@p"), "{out}");
    let (ok, _, err) = misaal(&["classes", "show", "no_such_thing"]);
    assert!(!ok && err.contains("no class or instruction"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The count on a `misaal verify` summary line such as `  refuted      1`.
fn summary_count(stdout: &str, verdict: &str) -> Option<usize> {
    stdout.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some(verdict)).then(|| w.next()?.parse().ok()).flatten().filter(|_| w.next().is_none())
    })
}

#[test]
fn verify_reports_refutations_with_counterexamples_and_exit_code_1() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("v.csv");
    let rules = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/broken-rules/packus-lane-order.egg");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&dir)
        .args(["verify", "--rules", rules, "--out", csv.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(summary_count(&stdout, "refuted"), Some(1), "{stdout}");
    assert_eq!(summary_count(&stdout, "proved"), Some(0), "{stdout}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("rule,instantiation,verdict,solver_ms,quickcheck_cases,counterexample\n"), "{text}");
    assert!(text.contains("packus-256-no-permute,-,refuted,") && text.contains("?a=0x") && text.contains("lhs=0x"), "{text}");

    // One rule of the bundled hand-written ruleset, proved at all 12 widths.
    let hand = concat!(env!("CARGO_MANIFEST_DIR"), "/rulesets/x86_hand.egg");
    let good = ["verify", "--rules", hand, "--rule", "x86.concat-add", "--out", csv.to_str().unwrap()];
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(&dir).args(good).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("1 rules, 12 instantiations"), "{stdout}");
    assert_eq!(summary_count(&stdout, "proved"), Some(12), "{stdout}");
    assert_eq!(summary_count(&stdout, "refuted"), Some(0), "{stdout}");
    // A second run is answered from the verdict cache.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(&dir).args(good).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("(12 from cache)"));

    // Only `proved` passes: a solver that runs out exits 3 and says so. The
    // budget is Z3's resource count, not a timeout: a 1 ms timeout still
    // proves this rule on a fast machine.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&dir)
        .args(["verify", "--rules", hand, "--rule", "x86.mulhrs", "--rlimit", "1", "--cases", "10", "--no-cache", "--out", csv.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(summary_count(&stdout, "unknown").is_some_and(|n| n > 0) && stdout.contains("NOT PROVED"), "{stdout}");
    // A rule no instantiation can use is an error in the ruleset.
    std::fs::write(dir.join("never.egg"), "(rewrite (add (u ?bw 16) ?a ?b) (x86 _mm_add_epi8 ?a ?b)\n  :when ((in ?bw 8) (> ?bw 8)) :name \"never\")\n").unwrap();
    let never = ["verify", "--rules", "never.egg", "--out", csv.to_str().unwrap()];
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(&dir).args(never).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(summary_count(&String::from_utf8_lossy(&out.stdout), "inapplicable"), Some(1));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(&dir).args(never).arg("--allow-inapplicable").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // An unknown intrinsic is a load error at its position, not a verdict.
    let typo = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rule-load-errors/unknown-intrinsic.egg");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(&dir).args(["verify", "--rules", typo]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown-intrinsic.egg:3:31: error: rule \"add-typo\": no x86 spec `_mm_add_epi7`"), "{}", String::from_utf8_lossy(&out.stderr));

    // Two rule files read as one: an error in the second is at its own
    // file's line and column, and a name both define says where the first is.
    std::fs::write(dir.join("first.egg"), "; first\n(rewrite (add (u 8 16) ?a ?b) (x86 _mm_add_epi8 ?a ?b) :name \"dup\")\n").unwrap();
    std::fs::write(dir.join("second.egg"), "\n\n(rewrite (sub (u 8 16) ?a ?b) (x86 _mm_sub_epi8 ?a ?b) :name \"dup\")\n").unwrap();
    let stmt = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/stmt/add.stmt");
    let two = |second: &str| std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(&dir).args(["compile", stmt, "-o", "two.c", "--rules", "first.egg", "--rules", second]).output().unwrap();
    let out = two("second.egg");
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("second.egg:3:1: error: duplicate rule name \"dup\" (first at first.egg:2:1)"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = two(typo);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown-intrinsic.egg:3:31: error: rule \"add-typo\": no x86 spec `_mm_add_epi7`"), "{}", String::from_utf8_lossy(&out.stderr));

    std::fs::write(dir.join("bad.egg"), "(rewrite (add (u 8 16) ?a ?b)\n  (x86 _mm_add_epi8 ?a ?b) :name \"x\"").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).current_dir(&dir).args(["verify", "--rules", "bad.egg"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.egg:2:37: error: unbalanced `(`"), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compile_writes_c_and_header_and_bench_runs_a_kernel() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-compile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stmt = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/stmt/blur3x3.stmt");
    let out = dir.join("blur.c");
    let (ok, stdout, err) = misaal(&["compile", stmt, "--target", "x86", "--name", "blur3x3", "-o", out.to_str().unwrap()]);
    assert!(ok, "{stdout}{err}");
    let c = std::fs::read_to_string(&out).unwrap();
    let h = std::fs::read_to_string(dir.join("blur.h")).unwrap();
    assert!(c.contains("HalideRuntime.h") && h.contains("int blur3x3(struct halide_buffer_t *"), "{h}");
    std::fs::write(dir.join("bad.stmt"), "module name=x, target=x86-64-linux\nexternal func f (a) {\n let t = (1 + \n}\n").unwrap();
    let (ok, _, err) = misaal(&["compile", dir.join("bad.stmt").to_str().unwrap(), "-o", dir.join("bad.c").to_str().unwrap()]);
    assert!(!ok && err.contains("bad.stmt:"), "{err}");
    assert!(!dir.join("bad.c").exists(), "no half-written output");

    // One kernel through the whole bench: built with cc, bit-exact against
    // the interpreter (and against Halide's object when it has been built).
    // Run from a scratch folder so the user's reports/ is left alone.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal"))
        .current_dir(&dir)
        .args(["bench", "--suite", concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks"), "--kernel", "add", "--inputs", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("add ") && stdout.contains("yes (1 inputs") && stdout.contains("interpreter"), "{stdout}");
    let csv = std::fs::read_to_string(dir.join("reports/bench_x86.csv")).unwrap();
    // The first twelve columns keep their places; the bench appends after them.
    assert!(csv.starts_with("kernel,compile_ms,ours_us,halide_us,speedup,bit_exact,peak_rss_kb,naive_us,clang_us,speedup_vs_clang,fallback_exprs,target,run,ours_mca_cycles,"), "{csv}");
    // The rule-usage and coverage reports, with their documented columns.
    let usage = std::fs::read_to_string(dir.join("reports/rule_usage_x86.csv")).unwrap();
    assert!(usage.starts_with("rule,kernel,matches,search_apply_ms,used_in_extraction\n") && usage.contains(",add,") && usage.contains(",true\n"), "{usage}");
    let cov = std::fs::read_to_string(dir.join("reports/coverage_x86.csv")).unwrap();
    assert!(cov.starts_with("instruction,class,reachable_by_rules,emitted_in_suite\n") && cov.contains(",true,true\n"), "{cov}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validate_budget_is_a_flag_and_a_starved_solver_is_not_success() {
    let dir = std::env::temp_dir().join(format!("misaal-cli-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stmt = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/stmt/add.stmt");
    let out = dir.join("add.c");
    let (ok, stdout, err) = misaal(&["compile", "--validate", "--validate-timeout", "60000", stmt, "-o", out.to_str().unwrap()]);
    assert!(ok && err.contains("0 mismatches, 0 unknown"), "{stdout}{err}");
    std::fs::remove_file(&out).unwrap();
    // An rlimit of 1 leaves Z3 no work: the root is undecided, which is
    // "not validated" (exit 3) with no C written, never a pass.
    let o = Command::new(env!("CARGO_BIN_EXE_misaal")).args(["compile", "--validate", "--validate-rlimit", "1", stmt, "-o", out.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("NOT VALIDATED") && err.contains("1 unknown"), "{err}");
    assert!(!out.exists(), "no C for an unvalidated selection");
    // The budget means nothing without --validate.
    let (ok, _, err) = misaal(&["compile", "--validate-timeout", "5", stmt, "-o", out.to_str().unwrap()]);
    assert!(!ok && err.contains("--validate"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The one evidence file a check wrote into `dir` (this machine's).
fn machine_file(dir: &std::path::Path) -> String {
    let files: Vec<_> = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "tsv")).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).unwrap()
}

/// The binary's allocator starts with the options `src/main.rs` gives it
/// (one arena, dirty pages purged after 20 ms: the compile's speed at
/// glibc's peak RSS; small pages whatever the kernel's huge-page setting,
/// so the peak is the same on every machine). A misspelled option, or the options' symbol under
/// a name jemalloc does not read, would leave its defaults: 64 MB and more.
#[test]
fn the_allocator_starts_with_its_options() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal"))
        .arg("--help")
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("misaal runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Invalid conf"), "{stderr}");
    for opt in ["opt.narenas: 1\n", "opt.dirty_decay_ms: 20 ", "opt.muzzy_decay_ms: 0 ", "opt.thp: \"never\""] {
        assert!(stderr.contains(opt), "jemalloc's statistics lack `{}`:\n{}", opt.trim(), stderr.lines().filter(|l| l.contains("opt.")).collect::<Vec<_>>().join("\n"));
    }
}
