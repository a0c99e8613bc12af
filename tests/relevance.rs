//! Relevance sets: the facts the MISAAL paper states, found on the bundled
//! x86 specs, each with a witness that names the subterm.

use misaal_datalog::{Relevance, RelevanceKind, classify, relevance};
use misaal_isa::SpecLibrary;
use std::sync::OnceLock;

/// Every spec, verified or not: relevance is a property of the semantics.
/// (`misaal synth` itself reads only verified specs.)
fn all() -> &'static (SpecLibrary, Vec<Relevance>, misaal_datalog::ClassSet) {
    static ALL: OnceLock<(SpecLibrary, Vec<Relevance>, misaal_datalog::ClassSet)> = OnceLock::new();
    ALL.get_or_init(|| {
        let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"));
        let set = classify(&lib);
        let t = std::time::Instant::now();
        let rel = relevance(&lib, &set);
        eprintln!("relevance over {} classes: {} pairs in {:.1} s", set.classes.len(), rel.len(), t.elapsed().as_secs_f64());
        (lib, rel, set)
    })
}

fn class(instr: &str) -> String {
    all().2.class_of(instr).unwrap_or_else(|| panic!("{instr} has no class")).0.name.clone()
}

/// The row saying `of` is relevant to `to`, if any.
fn row(to: &str, of: &str) -> Option<&'static Relevance> {
    let (r, i) = (class(to), class(of));
    all().1.iter().find(|x| x.class == r && x.relevant_class == i)
}

#[test]
fn zero_extend_u8_to_u16_is_relevant_to_vpdpbusd() {
    let r = row("_mm256_dpbusd_epi32", "_mm256_cvtepu8_epi16").expect("zext u8->u16 relevant to vpdpbusd");
    assert_eq!(r.kind, RelevanceKind::Direct, "{r:?}");
    assert!(r.witness.contains("zext16 a[7:0]") || r.witness.contains("zext16 a["), "{r:?}");
}

#[test]
fn vpmaddwd_is_relevant_to_vpdpwssd() {
    // vpdpwssd adds src to the two products; vpmaddwd's sum matches the part.
    let r = row("_mm256_dpwssd_epi32", "_mm256_madd_epi16").expect("vpmaddwd relevant to vpdpwssd");
    assert_eq!(r.kind, RelevanceKind::Direct, "{r:?}");
    assert!(r.witness.contains("(add (mul"), "{r:?}");
    // And not the other way round: vpdpwssd's three-term sum is not inside vpmaddwd.
    assert!(row("_mm256_madd_epi16", "_mm256_dpwssd_epi32").is_none());
}

#[test]
fn a_saturating_narrow_is_relevant_to_vpackuswb() {
    // vpackuswb saturates signed words into unsigned bytes: an unsigned
    // saturating narrow (vpmovuswb) applied to max(x, 0).
    let r = row("_mm256_packus_epi16", "_mm256_cvtusepi16_epi8").expect("vpmovuswb relevant to vpackuswb");
    assert_eq!(r.kind, RelevanceKind::Generalized, "{r:?}");
    assert!(r.witness.contains("satu8 (ite (slt"), "{r:?}");
}

#[test]
fn unrelated_operations_are_not_relevant() {
    // A byte average has no product in it.
    assert!(row("_mm256_avg_epu8", "_mm256_madd_epi16").is_none());
    // No class is listed as relevant to itself.
    assert!(all().1.iter().all(|r| r.class != r.relevant_class));
}

/// `misaal synth --phase relevance` writes the documented columns from the
/// verified specs only; a phase that does not exist is refused by name.
#[test]
fn the_cli_writes_the_csv_and_refuses_unbuilt_phases() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("relevance-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal"))
        .args(["synth", "--target", "x86", "--phase", "relevance", "--out-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.join("x86_relevance.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some("class,relevant_class,kind,witness"));
    let phases = std::fs::read_to_string(dir.join("synth_x86.csv")).unwrap();
    assert_eq!(phases.lines().next(), Some("phase,wall_s,outputs,detail"));
    let row = phases.lines().find(|l| l.starts_with("relevance,")).unwrap_or_else(|| panic!("{phases}"));
    assert_eq!(row.split(',').nth(2).map(|n| n.parse::<usize>().unwrap()), Some(csv.lines().count() - 1), "{row}");
    assert!(csv.lines().count() > 10, "{csv}");
    // vpdpbusd is not verified on every machine: only verified specs are read.
    let spec_dir = misaal_isa::bundled_spec_dir("x86");
    let lib = misaal_isa::SpecLibrary::load_dir_lazy(&spec_dir).unwrap();
    let dpbusd_verified = misaal_isa::StatusTable::for_spec_dir(&spec_dir).unwrap().verified_in(&lib, "_mm256_dpbusd_epi32").is_ok();
    if !dpbusd_verified {
        assert!(!csv.contains("_dpbusd_"), "an unverified spec reached synthesis");
    }
    // Every phase is built now (tests/synth_*.rs run them; running
    // `abstract` here would rewrite rulesets/x86.egg): a phase that
    // does not exist is refused by name.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).args(["synth", "--target", "x86", "--phase", "fusion"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--phase fusion: unknown phase"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

mod swizzles {
    use misaal_datalog::discover_swizzles;
    use misaal_isa::SpecLibrary;

    fn found() -> Vec<misaal_datalog::Swizzle> {
        let lib = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"));
        let pairs: Vec<_> = lib.iter().map(|(i, s)| (i.as_ref(), s.as_ref())).collect();
        discover_swizzles(&pairs)
    }

    fn of(s: &[misaal_datalog::Swizzle], instr: &str) -> Vec<misaal_datalog::Swizzle> {
        s.iter().filter(|x| x.instructions.iter().any(|i| i == instr)).cloned().collect()
    }

    #[test]
    fn the_papers_swizzles_are_found_and_classed() {
        let s = found();
        // vpunpcklbw at 128 bits is the interleave of the low halves.
        let unpack = of(&s, "_mm_unpacklo_epi8");
        assert_eq!(unpack.len(), 1, "{unpack:?}");
        assert_eq!(unpack[0].class, "interleave/2");
        assert!(unpack[0].pattern_text().starts_with("a0 b0 a1 b1"), "{}", unpack[0].pattern_text());
        // At 256 bits it interleaves per 128-bit lane.
        assert_eq!(of(&s, "_mm256_unpacklo_epi8")[0].class, "in-lane interleave/2");
        // vpackuswb at 256 bits reads a and b per 128-bit lane: its result
        // needs the 64-bit block fix-up. (vphaddw reads its operands in the
        // same order, so the two share the swizzle.)
        let pack = of(&s, "_mm256_packus_epi16");
        assert_eq!(pack.len(), 1, "{pack:?}");
        assert_eq!(pack[0].class, "block-select/2", "{}", pack[0].pattern_text());
        assert!(pack[0].pattern_text().starts_with("a0 a1 a2 a3 a4 a5 a6 a7 b0"), "{}", pack[0].pattern_text());
        assert!(pack[0].instructions.iter().any(|i| i == "_mm256_hadd_epi16"), "{:?}", pack[0].instructions);
        // vpmaddwd folds adjacent pairs: fed from two vectors by an interleave.
        let madd = of(&s, "_mm256_madd_epi16");
        assert!(madd.iter().any(|m| m.role == "feed" && m.class == "interleave/2" && m.elem_bits == 16), "{madd:?}");
        // The 128-bit packus concatenates its inputs in order: nothing to fix.
        assert!(of(&s, "_mm_packus_epi16").is_empty());
        let classes: std::collections::BTreeSet<&str> = s.iter().map(|x| x.class.as_str()).collect();
        eprintln!("{} swizzles in {} classes: {classes:?}", s.len(), classes.len());
    }
}

/// `--phase swizzles` synthesizes lowering rules that re-derive the
/// hand-written shuffle rules of rulesets/x86_hand.egg, and `misaal verify`
/// proves the whole generated file on its own.
#[test]
fn synthesized_swizzle_rules_rediscover_the_hand_rules_and_prove() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("swizzles-{}", std::process::id()));
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_misaal")).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let d = dir.display().to_string();
    run(&["synth", "--target", "x86", "--phase", "swizzles", "--out-dir", &d]);
    let egg = std::fs::read_to_string(dir.join("x86_swizzles.egg")).unwrap();
    let hand = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/rulesets/x86_hand.egg")).unwrap();
    let body = |text: &str, name: &str| -> Option<String> {
        let line = text.lines().find(|l| l.contains(&format!(":name \"{name}\"")))?;
        Some(line.split(" :name").next()?.to_string())
    };
    for (h, s) in [("x86.unpacklo-8", "synth.swizzle.mm_unpacklo_epi8"), ("x86.unpackhi-16", "synth.swizzle.mm_unpackhi_epi16"), ("x86.broadcast-32", "synth.swizzle.mm256_broadcastd_epi32")] {
        let hb = body(&hand, h).unwrap_or_else(|| panic!("{h} not in x86_hand.egg"));
        assert_eq!(body(&egg, s).as_deref(), Some(hb.as_str()), "{s} should re-derive {h}");
    }
    let verify = run(&["verify", "--rules", &dir.join("x86_swizzles.egg").display().to_string(), "--out", &dir.join("v.csv").display().to_string()]);
    // Exit 0 (checked by `run`) means every instantiation proved; and every
    // generated rule was audited.
    let rules = egg.lines().filter(|l| l.starts_with("(rewrite")).count();
    assert!(rules >= 20, "{egg}");
    assert!(verify.starts_with(&format!("{rules} rules,")), "{verify}");
    let _ = std::fs::remove_dir_all(&dir);
}
