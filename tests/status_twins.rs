//! `misaal isa check`, twins and evidence across machines. A test that
//! needs a CPU feature this machine lacks is ignored (counted as skipped,
//! with the feature in its name), never passed. `--cpu-features` stands in
//! for a CPU without AVX-VNNI (or without AVX-512) on any machine.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn misaal(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).args(args).output().expect("run misaal");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("misaal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The evidence file of this machine in `ev` (the one not named `other`).
fn this_machine(ev: &Path) -> String {
    let files: Vec<PathBuf> = std::fs::read_dir(ev).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "tsv") && !p.ends_with("other.tsv")).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).unwrap()
}

fn get_row(table: &str, name: &str) -> String {
    table.lines().find(|l| l.starts_with(&format!("{name}\t"))).unwrap_or_default().to_string()
}

/// The committed Zen 4 row of `name` (its digest is the spec's current one).
fn zen4_row(name: &str) -> String {
    let zen4 = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/isa/specs/x86/evidence/amd-epyc-f25-m17-s1.tsv")).unwrap();
    let row = get_row(&zen4, name);
    assert!(!row.is_empty(), "no Zen 4 row for {name}");
    row
}

/// The AVX-VNNI (VEX) dot products are `silicon` on a CPU with AVX-VNNI,
/// and otherwise `proven-twin`: Z3 proves each equal to its AVX512-VNNI
/// form, which this run checked on silicon. With `--cpu-features` leaving
/// AVX-VNNI out, they are twins on any CPU with AVX512-VNNI.
fn avx_vnni_forms_are_silicon_or_proven_twins() -> Result<(), Failed> {
    let runs: Vec<(Option<&str>, bool)> = vec![(None, std::arch::is_x86_feature_detected!("avxvnni")), (Some("avx2,avx512f,avx512vl,avx512vnni"), false)];
    for (features, silicon) in runs {
        let dir = scratch("twin");
        let ev = dir.join("evidence");
        let csv = dir.join("r.csv");
        let mut args = vec!["isa", "check", "--family", "dot", "--filter", "_dp", "--cases", "200", "--evidence", ev.to_str().unwrap(), "--out", csv.to_str().unwrap()];
        if let Some(f) = features {
            args.extend(["--cpu-features", f]);
        }
        let (ok, out, err) = misaal(&args);
        assert!(ok, "{out}{err}");
        let table = this_machine(&ev);
        let avx: Vec<&str> = table.lines().filter(|l| l.contains("_avx_")).collect();
        assert_eq!(avx.len(), 8, "{table}");
        for l in &avx {
            let f: Vec<&str> = l.split('\t').collect();
            if silicon {
                assert_eq!((f[1], f[12]), ("silicon", "-"), "{l}");
            } else {
                // The twin is named with the digest it had when proved.
                let twin = f[0].replace("_avx_", "_");
                let twin_digest = get_row(&table, &twin).split('\t').nth(4).unwrap().to_string();
                assert_eq!((f[1], f[12].to_string()), ("proven-twin", format!("{twin}@{twin_digest}")), "{l}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    Ok(())
}

/// On any CPU: given another machine's evidence that the AVX512-VNNI form
/// is `silicon`, a run that can execute neither form (`--cpu-features avx2`)
/// proves the AVX-VNNI form a twin and leaves the other machine's file
/// byte for byte. Once the other machine's row is stale, the twin counts
/// for nothing, and no new twin is proved from it.
fn twin_from_another_machines_evidence() -> Result<(), Failed> {
    let dir = scratch("twin-other");
    let ev = dir.join("evidence");
    std::fs::create_dir_all(&ev).unwrap();
    let other = ev.join("other.tsv");
    let theirs = zen4_row("_mm256_dpbusd_epi32");
    std::fs::write(&other, format!("{}\n{theirs}\n", misaal_isa::evidence::HEADER)).unwrap();
    let other_bytes = std::fs::read(&other).unwrap();
    let r = dir.join("r.csv");
    let check = || misaal(&["isa", "check", "--family", "dot", "--filter", "_mm256_dpbusd_", "--cases", "50", "--cpu-features", "avx2", "--evidence", ev.to_str().unwrap(), "--out", r.to_str().unwrap()]);
    let (ok, out, err) = check();
    assert!(ok, "{out}{err}");
    let mine = this_machine(&ev);
    let avx = get_row(&mine, "_mm256_dpbusd_avx_epi32");
    let digest = theirs.split('\t').nth(4).unwrap();
    assert!(avx.contains("\tproven-twin\t") && avx.ends_with(&format!("\t_mm256_dpbusd_epi32@{digest}")), "{avx}\n{out}");
    assert!(get_row(&mine, "_mm256_dpbusd_epi32").is_empty(), "a spec that did not run here gets no row here:\n{mine}");
    assert_eq!(std::fs::read(&other).unwrap(), other_bytes, "another machine's evidence is never rewritten");
    assert!(out.contains(" 1 silicon, 0 emulator, 1 proven-twin, 0 failed, "), "{out}");
    assert!(out.contains("1 verified specs rest on evidence from elsewhere only"), "{out}");
    // The other machine's row goes stale (its spec "changed"): this
    // machine's twin row no longer counts, and a new run proves no twin.
    std::fs::write(&other, String::from_utf8(other_bytes).unwrap().replace(digest, &"0".repeat(32))).unwrap();
    let (ok, out, err) = check();
    assert!(ok, "{out}{err}");
    assert!(out.contains(" 0 silicon, 0 emulator, 0 proven-twin, 0 failed, "), "{out}");
    std::fs::remove_file(ev.join(format!("{}.tsv", misaal_isa::evidence::Machine::this_cpu().slug()))).unwrap();
    let (ok, out, err) = check();
    assert!(ok, "{out}{err}");
    assert!(!ev.join(format!("{}.tsv", misaal_isa::evidence::Machine::this_cpu().slug())).exists(), "nothing ran and no twin: no evidence file\n{out}");
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let has_twin_cpu = std::arch::is_x86_feature_detected!("avx512vnni") && std::arch::is_x86_feature_detected!("avx512vl");
    let name = if has_twin_cpu { "avx_vnni_forms_are_silicon_or_proven_twins".to_string() } else { "avx_vnni_forms_are_silicon_or_proven_twins (skipped: this CPU lacks avx512vnni/avx512vl, so the twins cannot be checked on silicon)".to_string() };
    let trials = vec![
        Trial::test(name, avx_vnni_forms_are_silicon_or_proven_twins).with_ignored_flag(!has_twin_cpu),
        Trial::test("twin_from_another_machines_evidence", twin_from_another_machines_evidence),
    ];
    libtest_mimic::run(&args, trials).exit();
}
