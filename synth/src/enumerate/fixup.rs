//! The 256-bit forms of the two-input packs. AVX2's packs work on each
//! 128-bit lane apart, so the 256-bit instruction narrows the blocks
//! `a.lo b.lo a.hi b.hi` (the swizzle discovery's block-select feed), not
//! `concat(a, b)`. The fix-up is searched, not written: every immediate of
//! a verified 256-bit permute of the result (vpermq) and every pair of
//! whole-block immediates of a verified two-input block select feeding the
//! pack (vperm2i128) is tried by quickcheck, and the survivors are proved by
//! the verifier. The first proved of each form becomes a rule.

use super::{Inputs, ProvedRule};
use misaal_verifier::audit::{AuditConfig, Libraries, Verdict, VerdictCache, load_rules, plan, run_job};
use std::sync::Mutex;

/// A 128-bit pack rule found by the enumeration, as numbers.
pub struct Pack<'a> {
    /// `saturating_cast` or `cast`.
    pub op: &'a str,
    /// The inputs' element: signedness and bits; the result's.
    pub from: (bool, u32),
    pub to: (bool, u32),
    /// The 128-bit right side, e.g. `(x86 _mm_packus_epi16 ?a ?b)`.
    pub rhs128: &'a str,
}

fn ty(signed: bool, bits: u32, lanes: u32) -> String {
    format!("({} {bits} {lanes})", if signed { 'i' } else { 'u' })
}

/// Whether every instruction the text names is verified here.
fn all_known(inp: &Inputs, text: &str) -> bool {
    text.split("(x86 ").skip(1).all(|rest| inp.target.instr(rest.split([' ', ')']).next().unwrap_or("")).is_some())
}

/// The 256-bit rules of one pack, each proved at its one instance.
pub fn widen(inp: &Inputs, libs: &Libraries, p: &Pack, sig: &str) -> Vec<ProvedRule> {
    let lanes = 256 / p.from.1;
    let lhs = format!(
        "({} {} {} {} (concat {} {} ?a ?b))",
        p.op,
        ty(p.from.0, p.from.1, 2 * lanes),
        p.to.0 as u8,
        p.to.1,
        ty(p.from.0, p.from.1, lanes),
        lanes
    );
    let pack256 = p.rhs128.replace("(x86 _mm_", "(x86 _mm256_");
    if !all_known(inp, &pack256) {
        return Vec::new();
    }
    let fed = |i: u32, j: u32| {
        let a = format!("(x86 _mm256_permute2x128_si256 ?a ?b {i})");
        let b = format!("(x86 _mm256_permute2x128_si256 ?a ?b {j})");
        pack256.replacen("?a", "\u{1}", 1).replacen("?b", &b, 1).replacen('\u{1}', &a, 1)
    };
    // Whole-block selections only (bits 3 and 7, which zero a block, clear).
    let blocks: Vec<u32> = (0..256).filter(|i| i & 0x88 == 0 && i & 0x44 == 0).collect();
    let forms: Vec<(&str, Vec<(String, String)>)> = vec![
        ("vpermq", (0..256).map(|imm| (format!("(x86 _mm256_permute4x64_epi64 {pack256} {imm})"), format!("imm {imm}"))).collect()),
        ("vperm2i128", blocks.iter().flat_map(|&i| blocks.iter().map(move |&j| (i, j))).map(|(i, j)| (fed(i, j), format!("imms {i}, {j}"))).collect()),
    ];
    // Quickcheck alone throws out the wrong immediates; its verdicts are
    // not worth keeping, so they go to a scratch cache.
    let scratch = Mutex::new(VerdictCache::default());
    let quick = AuditConfig { quickcheck_cases: 64, ..inp.audit.clone() };
    let mut out = Vec::new();
    for (form, cands) in forms {
        for (rhs, what) in cands {
            if !all_known(inp, &rhs) {
                break;
            }
            let short = format!("{}{}x{}", if p.to.0 { 'i' } else { 'u' }, p.to.1, 256 / p.to.1);
            let name = format!("enum.{}-concat.{short}.{}-{form}", p.op, pack256.trim_start_matches("(x86 _").split(' ').next().unwrap_or(""));
            let text = format!("(rewrite {lhs} {rhs} :name \"{name}\" :ruleset x86)");
            if verdict(libs, &text, &quick, &scratch) != Some(Verdict::Proved) {
                continue;
            }
            // The survivor is proved with the full configuration and cache.
            if verdict(libs, &text, inp.audit, inp.cache) == Some(Verdict::Proved) {
                let provenance = format!("enumerate: Halide [{sig}] at 256 bits ({} concat) = the 128-bit pack's 256-bit instruction with a {form} fix-up ({what}) searched over its immediates; classes sat_narrow block-select", p.op);
                out.push(ProvedRule { name, provenance, text });
                break;
            }
        }
    }
    out
}

fn verdict(libs: &Libraries, text: &str, cfg: &AuditConfig, cache: &Mutex<VerdictCache>) -> Option<Verdict> {
    let rules = load_rules("fixup", text, libs, cfg).ok()?;
    let jobs = plan(&rules, cfg).ok()?;
    let mut v = None;
    for j in &jobs {
        let r = run_job(libs, j, cfg, cache).verdict;
        if r != Verdict::Proved {
            return Some(r);
        }
        v = Some(r);
    }
    v
}
