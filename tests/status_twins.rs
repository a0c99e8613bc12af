//! `misaal isa check` and the status table across CPUs. A test that needs a
//! CPU feature this machine lacks is ignored (counted as skipped, with the
//! feature in its name), never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use std::process::Command;

fn misaal(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).args(args).output().expect("run misaal");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The AVX-VNNI (VEX) dot products are `silicon` on a CPU with AVX-VNNI,
/// and otherwise `proven-twin`: Z3 proves each equal to its AVX512-VNNI
/// form, which this run checked on silicon.
fn avx_vnni_forms_are_silicon_or_proven_twins() -> Result<(), Failed> {
    let dir = std::env::temp_dir().join(format!("misaal-cli-twin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = dir.join("STATUS.tsv");
    let (ok, out, err) = misaal(&["isa", "check", "--family", "dot", "--filter", "_dp", "--cases", "200", "--status", status.to_str().unwrap(), "--out", dir.join("r.csv").to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    let table = std::fs::read_to_string(&status).unwrap();
    let avx: Vec<&str> = table.lines().filter(|l| l.contains("_avx_")).collect();
    assert_eq!(avx.len(), 8, "{table}");
    let want = if std::arch::is_x86_feature_detected!("avxvnni") { "\tsilicon\t" } else { "\tproven-twin\t" };
    for l in &avx {
        assert!(l.contains(want), "expected {want:?}: {l}");
        if want.contains("twin") {
            let name = l.split('\t').next().unwrap();
            assert!(l.ends_with(&format!("= {} (Z3)", name.replace("_avx_", "_"))), "{l}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

/// On any CPU: given another machine's evidence that the AVX512-VNNI form
/// is `silicon` (a status table row with its current digest), a run that
/// cannot execute the AVX-VNNI form proves it a twin, and a run that cannot
/// execute either keeps the other machine's evidence.
fn twin_from_another_machines_evidence() -> Result<(), Failed> {
    let dir = std::env::temp_dir().join(format!("misaal-twin-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = dir.join("STATUS.tsv");
    let s = status.to_str().unwrap();
    let r = dir.join("r.csv");
    let check = |filter: &str| misaal(&["isa", "check", "--family", "dot", "--filter", filter, "--cases", "50", "--status", s, "--out", r.to_str().unwrap()]);
    let (ok, out, err) = check("_mm256_dpbusd_epi32");
    assert!(ok, "{out}{err}");
    let table = std::fs::read_to_string(&status).unwrap();
    let row = table.lines().find(|l| l.starts_with("_mm256_dpbusd_epi32\t")).unwrap().to_string();
    let f: Vec<&str> = row.split('\t').collect();
    // Another machine's row: the same digest, checked on silicon there.
    let theirs = format!("{}\tsilicon\t1000\t{}\tanother CPU with AVX512-VNNI", f[0], f[3]);
    std::fs::write(&status, table.replace(&row, &theirs)).unwrap();
    let (ok, out, err) = check("_mm256_dpbusd_");
    assert!(ok, "{out}{err}");
    let table = std::fs::read_to_string(&status).unwrap();
    let get = |name: &str| table.lines().find(|l| l.starts_with(&format!("{name}\t"))).unwrap_or_else(|| panic!("no row {name}:\n{table}")).to_string();
    let avx = get("_mm256_dpbusd_avx_epi32");
    if std::arch::is_x86_feature_detected!("avxvnni") {
        assert!(avx.contains("\tsilicon\t"), "{avx}");
    } else {
        assert!(avx.contains("\tproven-twin\t") && avx.ends_with("= _mm256_dpbusd_epi32 (Z3)"), "{avx}\n{out}");
    }
    if !std::arch::is_x86_feature_detected!("avx512vnni") {
        assert_eq!(get("_mm256_dpbusd_epi32"), theirs, "a CPU that cannot run a spec keeps another's evidence");
    }
    // A twin is not proved from a row whose digest is stale.
    let stale = table.replace(&theirs, &theirs.replace(f[3], &"0".repeat(32))).replace(&avx, "");
    std::fs::write(&status, stale).unwrap();
    if !std::arch::is_x86_feature_detected!("avx512vnni") && !std::arch::is_x86_feature_detected!("avxvnni") {
        let (ok, out, err) = check("_mm256_dpbusd_");
        assert!(ok, "{out}{err}");
        let table = std::fs::read_to_string(&status).unwrap();
        assert!(get_row(&table, "_mm256_dpbusd_avx_epi32").contains("\tskipped\t"), "{table}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

fn get_row(table: &str, name: &str) -> String {
    table.lines().find(|l| l.starts_with(&format!("{name}\t"))).unwrap_or_default().to_string()
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
