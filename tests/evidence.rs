//! Evidence per machine (issue 27): `misaal isa check` writes only this
//! machine's file, `--export` writes it with its provenance, `--import`
//! merges another machine's and refuses stale rows by name, and a check on
//! a CPU without AVX-512 (`--cpu-features avx2` on any machine) keeps the
//! Zen 4's 1,800 `silicon` specs and leaves its file byte for byte.
//! Everything runs against scratch evidence folders (`--evidence`).

use std::path::{Path, PathBuf};
use std::process::Command;

const X86_EVIDENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/isa/specs/x86/evidence");
const ZEN4: &str = "amd-epyc-f25-m17-s1.tsv";

fn misaal(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_misaal")).args(args).output().expect("run misaal");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("misaal-evidence-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn this_machine() -> String {
    format!("{}.tsv", misaal_isa::evidence::Machine::this_cpu().slug())
}

fn rows(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect()
}

/// The number before `what` on the derived-summary line.
fn derived(out: &str, what: &str) -> usize {
    let line = out.lines().find(|l| l.starts_with("derived from all machines' evidence:")).unwrap_or_else(|| panic!("no derived summary:\n{out}"));
    let at = line.find(&format!(" {what}")).unwrap_or_else(|| panic!("no `{what}` in {line}"));
    line[..at].rsplit([' ', ',', ':']).next().unwrap().parse().unwrap()
}

/// Imports a folder holding the committed Zen 4 file into `ev`.
fn import_zen4(dir: &Path, ev: &Path) -> String {
    let zen4 = dir.join("zen4");
    std::fs::create_dir_all(&zen4).unwrap();
    std::fs::copy(Path::new(X86_EVIDENCE).join(ZEN4), zen4.join(ZEN4)).unwrap();
    let (code, out, err) = misaal(&["isa", "check", "--target", "x86", "--import", zen4.to_str().unwrap(), "--evidence", ev.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("imported 1808 row(s); refused 0"), "{out}");
    assert_eq!(std::fs::read(ev.join(ZEN4)).unwrap(), std::fs::read(zen4.join(ZEN4)).unwrap(), "an import into an empty folder copies the file");
    out
}

/// After importing the Zen 4 evidence, a check that may use only AVX2
/// (what an AVX2-only CPU can run) still derives 1,800 `silicon` and 8
/// `proven-twin`, changes no spec's derived status, writes only this
/// machine's file and leaves the Zen 4 file byte for byte.
#[test]
fn an_avx2_check_keeps_the_zen4_evidence() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        misaal_testkit::skip("this CPU lacks avx2, which the restricted check runs");
        return;
    }
    let dir = scratch("avx2");
    let ev = dir.join("evidence");
    let out = import_zen4(&dir, &ev);
    assert_eq!((derived(&out, "silicon"), derived(&out, "proven-twin"), derived(&out, "unverified")), (1800, 8, 0), "{out}");
    let zen4_before = std::fs::read(ev.join(ZEN4)).unwrap();
    let (code, out, err) = misaal(&[
        "isa", "check", "--target", "x86", "--cpu-features", "avx2", "--cases", "20", "--evidence", ev.to_str().unwrap(), "--out", dir.join("r.csv").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(std::fs::read(ev.join(ZEN4)).unwrap(), zen4_before, "the Zen 4 file was rewritten:\n{out}");
    assert_eq!((derived(&out, "silicon"), derived(&out, "proven-twin"), derived(&out, "failed"), derived(&out, "unverified")), (1800, 8, 0, 0), "{out}");
    assert!(out.contains("derived status changed for 0 spec(s)"), "{out}");
    // This run's own evidence: the 280 SSE2-AVX2 specs on silicon, and the
    // 8 AVX-VNNI forms proved twins of the Zen 4's AVX512-VNNI ones.
    let mine = std::fs::read_to_string(ev.join(this_machine())).unwrap();
    let silicon = rows(&mine).iter().filter(|r| r.split('\t').nth(1) == Some("silicon")).count();
    assert_eq!(silicon, 280, "{mine}");
    let f = |r: &&str| r.split('\t').map(str::to_string).collect::<Vec<String>>();
    assert!(rows(&mine).iter().map(f).filter(|r| r[1] == "silicon").all(|r| !r[9].contains("avx512") && !r[9].contains("vnni")), "no AVX-512 spec ran under --cpu-features avx2:\n{mine}");
    // The rest of this run's rows are twins: Z3 proved each equal to a spec
    // (same instruction, another intrinsic) that the Zen 4 ran, with the
    // digest it ran.
    let zen4 = std::fs::read_to_string(ev.join(ZEN4)).unwrap();
    let twins: Vec<Vec<String>> = rows(&mine).iter().map(f).filter(|r| r[1] != "silicon").collect();
    assert!(twins.len() >= 8, "{mine}");
    for t in &twins {
        let (name, digest) = t[12].split_once('@').unwrap_or_else(|| panic!("{t:?}"));
        assert_eq!(t[1], "proven-twin", "{t:?}");
        assert!(zen4.lines().any(|l| l.starts_with(&format!("{name}\tsilicon\t")) && l.contains(&format!("\t{digest}\t"))), "{t:?}: the twin is not silicon on the Zen 4");
    }
    // 1,808 verified: 280 silicon here, 8 AVX-VNNI forms whose derived
    // status is this run's twin proof; the other 1,520 rest on the Zen 4
    // (a twin proved here of a spec the Zen 4 ran too rests on the Zen 4).
    assert!(out.contains("\n1520 verified specs rest on evidence from elsewhere only"), "{out}");
    assert_eq!(std::fs::read_dir(&ev).unwrap().count(), 2, "only this machine's file was added");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--export` writes this machine's rows with a README giving their
/// provenance; `--import` merges them into another folder; stale rows
/// (digest not the spec's current one) and rows for unknown specs are
/// refused and named, exit 1, while the good rows are merged; a malformed
/// file is an error at its line and column, exit 2, and merges nothing.
#[test]
fn export_import_and_stale_refusal() {
    let dir = scratch("export");
    let (a, x) = (dir.join("a"), dir.join("export"));
    let (code, out, err) = misaal(&[
        "isa", "check", "--target", "x86", "--filter", "_mm_add_epi", "--cases", "30", "--seed", "7", "--evidence", a.to_str().unwrap(), "--out", dir.join("r.csv").to_str().unwrap(), "--export", x.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let exported = std::fs::read_to_string(x.join(this_machine())).unwrap();
    let names: Vec<&str> = rows(&exported).iter().map(|r| r.split('\t').next().unwrap()).collect();
    assert_eq!(names, ["_mm_add_epi16", "_mm_add_epi32", "_mm_add_epi64", "_mm_add_epi8"], "{exported}");
    for r in rows(&exported) {
        let f: Vec<&str> = r.split('\t').collect();
        assert_eq!((f[1], f[2], f[3], f[9]), ("silicon", "30", "7", "sse2"), "{r}");
        assert!(f[11].starts_with(env!("CARGO_PKG_VERSION")), "{r}");
    }
    let readme = std::fs::read_to_string(x.join("README.md")).unwrap();
    let cpu = misaal_isa::evidence::Machine::this_cpu();
    for want in [cpu.cpu.as_str(), "| seed | 7 |", "| cases | 30 |", "--export", "cpu-flags.txt", "| misaal | ", "| date | "] {
        assert!(readme.contains(want), "README lacks {want:?}:\n{readme}");
    }
    assert!(std::fs::read_to_string(x.join("cpu-flags.txt")).unwrap().contains("sse2"));

    // A clean import into an empty folder.
    let b = dir.join("b");
    let (code, out, err) = misaal(&["isa", "check", "--import", x.to_str().unwrap(), "--evidence", b.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("imported 4 row(s); refused 0"), "{out}");
    assert_eq!(std::fs::read_to_string(b.join(this_machine())).unwrap(), exported);

    // Stale and unknown rows are refused by name; the others are merged.
    let add8 = rows(&exported).into_iter().find(|r| r.starts_with("_mm_add_epi8\t")).unwrap().to_string();
    let digest = add8.split('\t').nth(4).unwrap();
    let stale = add8.replace(digest, &"0".repeat(32));
    let unknown = add8.replace("_mm_add_epi8", "_mm_no_such_spec");
    std::fs::write(x.join(this_machine()), exported.replace(&add8, &format!("{stale}\n{unknown}"))).unwrap();
    let c = dir.join("c");
    let (code, out, err) = misaal(&["isa", "check", "--import", x.to_str().unwrap(), "--evidence", c.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.lines().any(|l| l.starts_with("REFUSED ") && l.contains(": _mm_add_epi8 (silicon on ") && l.contains(&format!("stale: checked as digest {}, the spec is now {digest}", "0".repeat(32)))), "{out}");
    assert!(out.lines().any(|l| l.starts_with("REFUSED ") && l.contains("_mm_no_such_spec") && l.contains("no such spec here")), "{out}");
    assert!(out.contains("imported 3 row(s); refused 2"), "{out}");
    let merged = std::fs::read_to_string(c.join(this_machine())).unwrap();
    assert_eq!(rows(&merged).len(), 3, "{merged}");
    assert!(!merged.contains("_mm_add_epi8\t"), "{merged}");

    // A malformed row: file:line:col and what was expected; nothing merged.
    std::fs::write(x.join(this_machine()), exported.replace(&add8, &add8.replace("\tsilicon\t", "\tsilicone\t"))).unwrap();
    let d = dir.join("d");
    let (code, out, err) = misaal(&["isa", "check", "--import", x.to_str().unwrap(), "--evidence", d.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}{err}");
    let line = exported.lines().position(|l| l == add8).unwrap() + 1;
    let col = "_mm_add_epi8".len() + 2;
    assert!(err.contains(&format!("{}:{line}:{col}: error: unknown status `silicone`; expected silicon, emulator, proven-twin or failed", x.join(this_machine()).display())), "{err}");
    assert!(!d.exists(), "nothing is merged from a malformed folder");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every committed evidence file parses, and its rows are all current
/// (a spec edited without a new check would otherwise lose its evidence
/// unnoticed); every x86 spec is verified: 1,800 or more on silicon, the
/// rest (the AVX-VNNI forms, on a Zen 4 only) proven twins.
#[test]
fn committed_evidence_is_current() {
    use misaal_isa::{SpecLibrary, SpecStatus, StatusTable};
    for (target, least) in [("x86", 1808), ("arm", 2000), ("hvx", 370)] {
        let dir = misaal_isa::bundled_spec_dir(target);
        let lib = SpecLibrary::load_dir_lazy(&dir).unwrap_or_else(|d| panic!("{d}"));
        let files = misaal_isa::evidence::load_dir(&misaal_isa::evidence::evidence_dir(&dir)).unwrap_or_else(|d| panic!("{d}"));
        assert!(!files.is_empty(), "{target}: no evidence");
        let mut stale = Vec::new();
        for (p, f) in &files {
            for r in f.rows.values() {
                if lib.unrolled(&r.intrinsic).is_none() || lib.digest(&r.intrinsic) != Some(r.digest.as_str()) {
                    stale.push(format!("{}: {}", p.display(), r.intrinsic));
                }
            }
        }
        assert!(stale.is_empty(), "{target}: stale rows (re-run `misaal isa check` where they were taken):\n{}", stale.join("\n"));
        let table = StatusTable::for_spec_dir(&dir).unwrap();
        let verified: Vec<SpecStatus> = lib.instrs().iter().filter(|i| table.verified_in(&lib, &i.name).is_ok()).map(|i| table.rows[&i.name].status).collect();
        assert!(verified.len() >= least, "{target}: only {} verified specs", verified.len());
        if target == "x86" {
            let n = |s: SpecStatus| verified.iter().filter(|v| **v == s).count();
            assert_eq!((n(SpecStatus::Silicon) + n(SpecStatus::ProvenTwin), lib.len()), (1808, 1808));
            assert!(n(SpecStatus::Silicon) >= 1800, "{} silicon", n(SpecStatus::Silicon));
        }
    }
}
