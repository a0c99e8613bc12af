//! Similarity classes and lane facts: the facts the papers state, and every
//! membership checked against Z3 and against this CPU.

use misaal_datalog::template::ZERO_OPERAND;
use misaal_datalog::{Baseline, analyze, classify, compare, instantiate};
use misaal_isa::SpecLibrary;
use misaal_verifier::membership::{MembershipCheck, check_membership};
use misaal_verifier::{DiffConfig, Verdict, X86Silicon, check_against};

fn x86() -> SpecLibrary {
    SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap_or_else(|d| panic!("{d}"))
}

fn lib(src: &str) -> SpecLibrary {
    SpecLibrary::from_sources(&[("t.sema".into(), src.into())]).unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn dpbusd_lane0_reads_four_bytes_of_each_vector_operand() {
    let l = x86();
    let (i, s) = l.get("_mm256_dpbusd_epi32").unwrap();
    let f = &analyze(&[(i.as_ref(), s.as_ref())]).facts[0];
    let lane0 = &f.bv_slices[&0];
    for op in ["a", "b"] {
        let bytes: Vec<(u32, u32)> = lane0.iter().filter(|(o, _, _)| o == op).map(|(_, lo, hi)| (*lo, *hi)).collect();
        assert_eq!(bytes, vec![(0, 7), (8, 15), (16, 23), (24, 31)], "{op}: {lane0:?}");
    }
    assert!(lane0.contains(&("src".to_string(), 0, 31)));
    assert_eq!(f.reduction_factor, 4);
}

#[test]
fn addsub_style_lanes_are_unique_at_zero_and_one() {
    let l = lib("instr addsub_epi16(a: bv128, b: bv128) -> bv128 [x86 sse2 nop]
FOR j := 0 to 7
    i := j*16
    IF j & 1 == 0
        dst[i+15:i] := a[i+15:i] - b[i+15:i]
    ELSE
        dst[i+15:i] := a[i+15:i] + b[i+15:i]
    FI
ENDFOR
");
    let (i, s) = l.get("addsub_epi16").unwrap();
    let f = &analyze(&[(i.as_ref(), s.as_ref())]).facts[0];
    assert_eq!(f.unique_lanes, vec![0, 1]);
    assert_eq!(f.reduction_factor, 1);
    // Real instructions: lanes of hadd read `a` then `b`; unpack alternates.
    let l = x86();
    let names = ["_mm_hadd_epi16", "_mm_unpacklo_epi16", "_mm512_add_epi16"];
    let pairs: Vec<_> = names.iter().map(|n| l.get(n).map(|(i, s)| (i.as_ref(), s.as_ref())).unwrap()).collect();
    let facts = analyze(&pairs).facts;
    assert_eq!(facts[0].unique_lanes, vec![0, 4]);
    assert_eq!(facts[1].unique_lanes, vec![0, 1]);
    assert_eq!(facts[2].unique_lanes, vec![0]);
    assert!(facts[1].swizzle.is_some() && facts[2].swizzle.is_none(), "unpack is data movement, add is not");
}

#[test]
fn add_epi16_at_512_and_add_epi8_at_256_share_a_class() {
    let set = classify(&x86());
    let (a, _) = set.class_of("_mm512_add_epi16").unwrap();
    let (b, _) = set.class_of("_mm256_add_epi8").unwrap();
    assert_eq!(a.name, b.name);
}

#[test]
fn unpackhi_and_unpacklo_share_a_class_through_an_offset() {
    let set = classify(&x86());
    let (c1, hi) = set.class_of("_mm256_unpackhi_epi16").unwrap();
    let (c2, lo) = set.class_of("_mm512_unpacklo_epi8").unwrap();
    assert_eq!(c1.name, c2.name);
    let offsets = |m: &misaal_datalog::Member| -> Vec<u128> {
        c1.param_names.iter().zip(&m.values).filter(|(n, _)| n.contains(".off")).map(|(_, v)| *v).collect()
    };
    assert!(offsets(hi).contains(&64), "unpackhi reads the upper half of each 128-bit lane: {:?}", c1.params_text(hi));
    assert!(offsets(lo).iter().all(|&o| o == 0), "{:?}", c1.params_text(lo));
}

#[test]
fn argument_permutation_folds_mask_blend_and_mask_mov() {
    let l = lib("instr blend(k: mask8, a: bv64, b: bv64) -> bv64 [x86 avx512f nop]
FOR j := 0 to 7
    IF k[j] THEN dst[j*8+7:j*8] := b[j*8+7:j*8] ELSE dst[j*8+7:j*8] := a[j*8+7:j*8] FI
ENDFOR
instr mov(src: bv64, k: mask8, a: bv64) -> bv64 [x86 avx512f nop]
FOR j := 0 to 7
    IF k[j] THEN dst[j*8+7:j*8] := a[j*8+7:j*8] ELSE dst[j*8+7:j*8] := src[j*8+7:j*8] FI
ENDFOR
");
    let set = classify(&l);
    assert_eq!(set.classes.len(), 1, "{:?}", set.classes.iter().map(|c| &c.name).collect::<Vec<_>>());
    let c = &set.classes[0];
    assert_ne!(c.members[0].declared, c.members[1].declared, "the operand orders differ");
    for m in &c.members {
        assert_eq!(check_membership(c, m, l.get(&m.instr.name).unwrap().1, 10_000), MembershipCheck::Z3);
    }
}

#[test]
fn zero_masking_folds_into_merge_masking_with_a_zero_source() {
    let l = x86();
    let set = classify(&l);
    let (c, mask) = set.class_of("_mm512_mask_add_epi16").unwrap();
    let (cz, maskz) = set.class_of("_mm512_maskz_add_epi16").unwrap();
    assert_eq!(c.name, cz.name);
    assert!(c.params_text(maskz).ends_with(",zero]"), "{}", c.params_text(maskz));
    assert!(!c.params_text(mask).contains("zero"));
    for m in [mask, maskz] {
        assert_eq!(check_membership(c, m, l.get(&m.instr.name).unwrap().1, 10_000), MembershipCheck::Z3);
    }
    // Binding merge-masking's source to zero instead is caught.
    let mut wrong = mask.clone();
    let src = wrong.declared.iter().position(|&d| d == 0).unwrap();
    wrong.declared[src] = ZERO_OPERAND;
    wrong.declared.iter_mut().filter(|d| **d != ZERO_OPERAND).for_each(|d| *d -= 1);
    assert_eq!(check_membership(c, &wrong, l.get("_mm512_maskz_add_epi16").unwrap().1, 10_000), MembershipCheck::Z3);
    assert!(matches!(check_membership(c, &wrong, l.get("_mm512_mask_add_epi16").unwrap().1, 10_000), MembershipCheck::Failed(_)));
    // A select on zero with no merge-masking twin keeps its own class.
    let (shift, _) = set.class_of("_mm_sll_epi16").unwrap();
    assert!(shift.members.iter().all(|m| !shift.params_text(m).contains("zero")));
}

#[test]
fn lane_varying_constants_fold_element_and_lane_inserts() {
    // Lane j of an insert is `imm == j ? i : a[j]`: the constant j is fitted
    // across lanes like a slice position.
    let set = classify(&x86());
    let (c, _) = set.class_of("_mm_insert_epi8").unwrap();
    for other in ["_mm256_insert_epi64", "_mm256_inserti128_si256", "_mm512_inserti64x4"] {
        assert_eq!(set.class_of(other).unwrap().0.name, c.name, "{other}");
    }
    assert!(c.describe().contains("@c"), "{}", c.describe());
}

#[test]
fn how_the_pseudocode_phrases_a_select_does_not_split_a_class() {
    // test reads `!= 0 ? 1 : 0` as Intel writes it, testn `== 0 ? 1 : 0`.
    let set = classify(&x86());
    let (t, _) = set.class_of("_mm512_test_epi32_mask").unwrap();
    assert_eq!(set.class_of("_mm_testn_epi8_mask").unwrap().0.name, t.name);
}

#[test]
fn low_products_fold_with_the_high_half_of_a_widening_product() {
    // mullo is `a * b` (epi64) or `(sext a * sext b)[w-1:0]` (epi16); both
    // are the low half of the zero-extended product mulhi_epu16 takes the
    // high half of.
    let l = x86();
    let set = classify(&l);
    let (c, _) = set.class_of("_mm_mulhi_epu16").unwrap();
    for other in ["_mm512_mullo_epi64", "_mm256_mullo_epi16", "_mm_mullo_epi32"] {
        let (oc, m) = set.class_of(other).unwrap();
        assert_eq!(oc.name, c.name, "{other}");
        assert_eq!(check_membership(c, m, l.get(other).unwrap().1, 20_000), MembershipCheck::Z3, "{other}");
    }
    assert_ne!(set.class_of("_mm_mulhi_epi16").unwrap().0.name, c.name, "the signed high half differs");
}

#[test]
fn no_family_folds_less_than_hydride_on_the_instructions_both_hold() {
    let set = classify(&x86());
    let hydride = Baseline::load(&Baseline::bundled("x86").unwrap()).unwrap();
    let rows = compare(&set, Some(&hydride));
    let worse: Vec<String> = rows
        .iter()
        .filter(|f| f.shared_classes > f.baseline_classes)
        .map(|f| format!("{}: {} shared instructions in {} classes, Hydride {}", f.family, f.shared, f.shared_classes, f.baseline_classes))
        .collect();
    assert!(worse.is_empty(), "{worse:#?}");
    let all = rows.last().unwrap();
    assert_eq!(all.family, "all");
    assert!(all.shared >= 700, "the comparison covers most specs: {all:?}");
}

#[test]
fn every_member_is_checked_and_a_wrong_row_is_caught() {
    let l = x86();
    let set = classify(&l);
    assert!(set.rejected.is_empty(), "{:?}", set.rejected);
    assert_eq!(set.member_count(), l.len(), "every spec is in exactly one class");
    let mut names: Vec<&str> = set.classes.iter().flat_map(|c| c.members.iter().map(|m| m.instr.name.as_str())).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), l.len());
    for c in &set.classes {
        for m in &c.members {
            let own = l.get(&m.instr.name).unwrap().1;
            let r = check_membership(c, m, own, 20_000);
            assert!(matches!(r, MembershipCheck::Z3 | MembershipCheck::Quickcheck(_)), "{} in {}: {r:?}", m.instr.name, c.name);
        }
    }
    // The check can fail: move one slice position of a member's row.
    let (c, m) = set.class_of("_mm256_unpackhi_epi16").unwrap();
    let mut wrong = m.clone();
    let k = c.param_names.iter().position(|n| n.contains(".off")).unwrap();
    wrong.values[k] += 16;
    let own = l.get("_mm256_unpackhi_epi16").unwrap().1;
    assert!(matches!(check_membership(c, &wrong, own, 20_000), MembershipCheck::Failed(_)));
}

#[test]
fn every_class_instantiated_for_every_member_agrees_with_silicon() {
    let l = x86();
    let set = classify(&l);
    let cfg = DiffConfig { cases: 300, ..Default::default() };
    let (mut agreed, mut skipped) = (0, 0);
    for c in &set.classes {
        for m in &c.members {
            let inst = instantiate(c, m).unwrap();
            match check_against(&X86Silicon, &m.instr, &inst, &cfg) {
                Verdict::Agreed { .. } => agreed += 1,
                Verdict::Unavailable(why) => {
                    eprintln!("SKIPPED {}: {why}", m.instr.name);
                    skipped += 1;
                }
                other => panic!("{} as class {}: {other:?}", m.instr.name, c.name),
            }
        }
    }
    eprintln!("{agreed} instantiations agreed with the CPU, {skipped} skipped");
    // Most members need AVX-512; without it, SSE to AVX2 still give ~280.
    let floor = if std::arch::is_x86_feature_detected!("avx512bw") { 600 } else { 250 };
    assert!(agreed >= floor, "only {agreed} members ran here (floor {floor})");
}
