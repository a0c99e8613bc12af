//! Legalization rules from lane facts: a Halide op on 2n lanes is the
//! concatenation of the op on each half, when every output lane of the op
//! reads only its own lane of each vector operand (BvSlices, from
//! `misaal_datalog::lanes`, at a probe instantiation). Without them no
//! lowering rule (at most 256 bits here) meets a kernel's wider vectors.
//!
//! The template is fixed (split in halves, slices of each operand, one
//! concat); which ops get it is decided by their lane facts, and each
//! operand's element width by its slice width per lane. Like every rule,
//! each instance is proved by the caller before it is written; the caller
//! keeps exactly the proved instances. Two data-movement identities
//! (a half of a concatenation is that half) let split chains meet.

use misaal_isa::SpecLibrary;
use rayon::prelude::*;

/// The expansions of mixed-width ops (searched; see the file).
pub mod expand;
/// Register halves (slices and the join), searched per immediate.
pub mod movement;
/// 256-bit narrowings and 32 -> 8 bit narrowings (searched).
pub mod narrowing;
/// Selects, comparisons and negated bitwise operands (searched).
pub mod select;
/// Shifts by a per-lane amount and the rounding shifts' expansions (searched).
pub mod shift;
/// Reductions to one lane: halves, then one register (searched).
pub mod reduce;
/// Expansions of the halving ops into same-width ops (searched).
pub mod halving;
/// Full reductions of widening ops regrouped through a pairwise
/// instruction (searched).
pub mod regroup;
/// Commutation identities of the same-type ops (searched).
pub mod commute;
/// The 32-bit multiply-shifts through even/odd 64-bit products (searched).
pub mod mulshr;
/// Widening products by a broadcast, and sums of two, through vpmaddwd (searched).
pub mod madd;
/// Lane counts that are not powers of two padded to the next one (from lane facts).
pub mod pad;
/// One-instruction lowerings repaired at edge values by a select (searched).
pub mod fixup;
/// Reductions of widened lane-wise ops as one instruction (searched).
pub mod widen_reduce;
/// Ops no instruction computes at their width, computed at twice it (searched).
pub mod widen;
/// Signed division, negative divisors and `mod`, through unsigned division (searched).
pub mod divide;
/// Selects on a comparison at another width (searched).
pub mod select_width;

/// The split templates, the expansions and the register-half moves
/// searched over the x86 instructions: what the abstraction phase proves.
///
/// The searches keep the first or cheapest candidate, and with every
/// AVX-512 spec verified that is often an AVX-512VL form of a 256-bit
/// rule (`vbroadcasti32x4` for `vbroadcasti128`, `vpmovuswb` for a pack),
/// which an AVX2 target cannot use. So the searches run over the
/// instructions an AVX2 CPU has first, then over all of them; a rule the
/// second run finds differently is kept beside the first, named with
/// `.avx512`, and the compiler's feature gate and costs choose per target.
pub fn splits_for(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let avx2 = x86.subset(|i| i.features.iter().all(|f| !beyond_avx2(f)));
    let mut out = splits(halide, Registers::of(&misaal_rulesets::X86));
    out.extend(searched(halide, &avx2));
    if avx2.len() == x86.len() {
        // Nothing beyond AVX2 (`misaal synth --cpu-features avx2,...`).
        return out;
    }
    for s in searched(halide, x86) {
        // The same template over other free values (`shl` by a vector at
        // `?sign` 0 and at 1, both `vpsllvd`) is another rule, not a repeat:
        // comparing sides alone dropped the signed 512-bit shifts.
        if out.iter().any(|o| o.lhs == s.lhs && o.rhs == s.rhs && o.conds == s.conds && o.free == s.free) {
            continue;
        }
        let name = if out.iter().any(|o| o.name == s.name) { format!("{}.avx512", s.name) } else { s.name };
        out.push(Split { name, ..s });
    }
    out
}

/// The widest half a split rule makes (so the widest value it halves is
/// twice this); the pads stop at the value the splits halve.
pub(crate) const SPLIT_HALF_BITS: i128 = 2048;

impl Registers {
    /// x86's, for the templates searched over x86 instructions.
    pub(crate) fn x86() -> Self {
        Registers::of(&misaal_rulesets::X86)
    }

    /// The `(>= (* ?n W) narrowest)` and `(<= (* ?n W) widest)` conditions
    /// of a Halide-level identity over lanes of width `w` (`?bw` or a
    /// number): in every register (NEON's D too).
    pub(crate) fn conds(&self, w: &str) -> Vec<String> {
        vec![format!("(>= (* ?n {w}) {})", self.narrowest), format!("(<= (* ?n {w}) {})", self.widest)]
    }

    /// The lane counts n, powers of two, that put some lane width of `bws`
    /// in a register: narrowest <= n * bw <= widest.
    pub(crate) fn lanes(&self, bws: &[i128]) -> Vec<i128> {
        (1..=9).map(|k| 1i128 << k).filter(|n| bws.iter().any(|bw| (self.narrowest..=self.widest).contains(&(n * bw)))).collect()
    }
}

/// The letter a type name gives a sign (`S` = 1 signed): `i8`, `u16`.
pub(crate) fn sign_letter(s: i128) -> char {
    if s == 1 { 'i' } else { 'u' }
}

/// An x86 feature an AVX2 CPU (Zen 3, Haswell) lacks.
pub(crate) fn beyond_avx2(feature: &str) -> bool {
    feature.starts_with("avx512") || feature.starts_with("avxvnni") || feature.starts_with("amx") || feature.starts_with("avx10")
}

/// How far up the x86 extensions an instruction's features reach: 0 for
/// what an AVX2 CPU has, 1 for AVX-512F alone, 2 for the other AVX-512
/// subsets (VL, BW, DQ, VNNI, ...) and the VEX forms newer than AVX2. Of
/// two equal instructions the lower serves more CPUs (and more of the
/// portable implementations: SIMDe 0.7.4 has `vextracti64x4`, not DQ's
/// `vextracti32x8`).
pub(crate) fn feature_rank(features: &[String]) -> u8 {
    features.iter().map(|f| if !beyond_avx2(f) { 0 } else if f == "avx512f" { 1 } else { 2 }).max().unwrap_or(0)
}

/// Orders instructions for a search that keeps the first equal one: those
/// an AVX2 CPU has first, then the widest family (the form that exists at
/// every register width, `_mm{,256,512}_dpwssd_epi32`, before a twin that
/// stops at 256 bits, `_mm256_dpwssd_avx_epi32`), then by name.
pub(crate) fn portable_order<T>(x86: &SpecLibrary, ins: &mut [(String, T)]) {
    let width = family_width(x86);
    let rank = |n: &str| x86.instr(n).map_or(0, |i| feature_rank(&i.features));
    ins.sort_by_cached_key(|(n, _)| (rank(n), std::cmp::Reverse(width(n)), n.clone()));
}

/// How many of `x86`'s instructions share a name's family (the name past
/// its `_mm{,256,512}` prefix): how many register widths the form exists at.
pub(crate) fn family_width(x86: &SpecLibrary) -> impl Fn(&str) -> usize {
    fn family(n: &str) -> &str {
        n.trim_start_matches('_').split_once('_').map_or("", |(_, r)| r)
    }
    let mut widths: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for i in x86.instrs() {
        *widths.entry(family(&i.name).to_string()).or_default() += 1;
    }
    move |n| widths.get(family(n)).copied().unwrap_or(0)
}

/// Everything searched over `x86`'s instructions (and the Halide-only
/// identities beside them).
fn searched(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let searches: [&(dyn Fn() -> Vec<Split> + Sync); 23] = [
        &|| movement::halves(halide, x86),
        &|| movement::selects(halide, x86),
        &|| narrowing::packs(halide, x86),
        &|| narrowing::shifted_packs(halide, x86),
        &|| narrowing::two_steps(halide),
        &|| select::identities(halide),
        &|| select::masks(halide, x86),
        &|| select::blends(halide, x86),
        &|| select::negated(halide, x86),
        &|| shift::variable_shifts(halide, x86),
        &|| shift::amount_expansions(halide),
        &|| shift::sign_selects(halide),
        &|| reduce::reductions(halide, x86),
        &|| halving::halving_expansions(halide),
        &|| regroup::regroupings(halide, x86),
        &|| commute::commutations(halide),
        &|| mulshr::mul_shifts(halide, x86),
        &|| mulshr::double_width(halide),
        &|| madd::broadcast_products(halide, x86),
        &|| madd::pair_products(halide, x86),
        &|| fixup::repairs(halide, x86),
        &|| widen_reduce::widened_reductions(halide, x86),
        &|| widen_reduce::accumulated_dot_products(halide, x86),
    ];
    // Independent searches, on the caller's pool, concatenated in this
    // order (the output does not depend on the threads).
    searches
        .par_iter()
        .with_max_len(1)
        .map(|f| f())
        .collect::<Vec<_>>()
        .concat()
}

/// A legalization template over `?sign ?bw ?n` and the op's other generics.
#[derive(Clone, Debug)]
pub struct Split {
    pub op: String,
    pub name: String,
    pub lhs: String,
    pub rhs: String,
    /// Conditions other than the free variables' domains.
    pub conds: Vec<String>,
    /// Free variables and their domains.
    pub free: Vec<(String, Vec<i128>)>,
    pub provenance: String,
}

/// Probe values of the op's generics, chosen so that widths tell the
/// generics apart (E2 = 32 is neither E = 8 nor 2E).
fn probe(generics: &[String]) -> Option<Vec<i128>> {
    generics
        .iter()
        .map(|g| match g.as_str() {
            "S" => Some(0),
            "E" => Some(8),
            "N" => Some(4),
            "S2" => Some(0),
            "E2" => Some(32),
            "F" => Some(2),
            _ => None,
        })
        .collect()
}

/// One operand's (or the result's) per-lane width at the probe, written
/// over the template's variables: (element width, lanes per output lane).
fn width_expr(chunk: u32, f: bool) -> Option<(&'static str, &'static str)> {
    Some(match chunk {
        1 => ("1", "?n"),
        8 => ("?bw", "?n"),
        16 if f => ("?bw", "(* ?n ?f)"),
        16 => ("(* 2 ?bw)", "?n"),
        32 => ("?bw2", "?n"),
        _ => return None,
    })
}

/// Whether every output lane reads only its own lane of each vector
/// operand; scalars (`broadcast`'s) are read whole by every lane.
fn lane_local(halide: &SpecLibrary, op: &str, args: &[i128], n: u32) -> Option<Vec<Option<u32>>> {
    let (instr, sem) = halide.instantiate(op, args).ok()?;
    if sem.lanes.len() != n as usize {
        return None;
    }
    let facts = misaal_datalog::lanes::analyze(&[(&instr, &sem)]).facts.pop()?;
    // At the probe (E = 8, N = 4) a scalar is 8 bits; a vector is N lanes
    // of 1 (a bool), 8, 16 or 32 bits.
    let chunks: Vec<Option<u32>> = instr.params.iter().map(|p| (p.ty.width() % n == 0 && p.ty.width() != 8).then(|| p.ty.width() / n)).collect();
    for (lane, slices) in &facts.bv_slices {
        for (name, lo, hi) in slices {
            let k = instr.params.iter().position(|p| &p.name == name)?;
            if let Some(c) = chunks[k]
                && !(lane * c <= *lo && *hi < (lane + 1) * c)
            {
                return None;
            }
        }
    }
    Some(chunks)
}

/// A lane-local Halide op, read off its lane facts at the probe: what the
/// split and pad templates are written over.
pub(crate) struct LaneOp {
    pub op: String,
    /// The generic arguments after the type, as variables (`?s2`, `?bw2`, `?f`).
    pub extra: Vec<&'static str>,
    /// Each operand's variable, and for a vector its (element width, lanes)
    /// over the template's variables; `None` for a scalar.
    pub operands: Vec<(String, Option<(&'static str, &'static str)>)>,
    /// The result's element width.
    pub out_e: &'static str,
    pub s2: bool,
    pub e2: bool,
    pub f: bool,
}

impl LaneOp {
    /// `(t ?sign ?bw LANES)` and the extra generics.
    pub fn generics(&self, lanes: &str) -> String {
        let mut s = format!("(t ?sign ?bw {lanes})");
        for e in &self.extra {
            s.push(' ');
            s.push_str(e);
        }
        s
    }

    /// The widths of the vector sides, operands then result, over `?n`
    /// (`(* ?n ?bw)`), each once; a bool side has none.
    pub fn sides(&self) -> Vec<String> {
        let mut sides: Vec<String> = vec![];
        for w in self.operands.iter().filter_map(|(_, w)| w.map(|(e, l)| format!("(* {l} {e})"))).chain([format!("(* ?n {})", self.out_e)]) {
            if !w.ends_with(" 1)") && !sides.contains(&w) {
                sides.push(w);
            }
        }
        sides
    }

    /// The free variables and their domains, with `n` for `?n`.
    pub fn free(&self, n: Vec<i128>) -> Vec<(String, Vec<i128>)> {
        let mut free = vec![("sign".to_string(), vec![0, 1]), ("bw".to_string(), vec![8, 16, 32, 64]), ("n".to_string(), n)];
        if self.s2 {
            free.push(("s2".into(), vec![0, 1]));
        }
        if self.e2 {
            free.push(("bw2".into(), vec![8, 16, 32, 64]));
        }
        if self.f {
            free.push(("f".into(), vec![2, 4]));
        }
        free
    }
}

/// Every Halide op whose output lanes each read only their own lane of each
/// vector operand (see [`lane_local`]).
pub(crate) fn lane_ops(halide: &SpecLibrary) -> Vec<LaneOp> {
    let mut out = Vec::new();
    for op in halide.generic_names() {
        let Some(g) = halide.generic(op) else { continue };
        let Some(args) = probe(&g.generics) else { continue };
        if g.generics.first().map(|s| s.as_str()) != Some("S") {
            continue;
        }
        let Some(chunks) = lane_local(halide, op, &args, 4) else { continue };
        let Ok(instr) = halide.instantiate_signature(op, &args) else { continue };
        let has = |v: &str| g.generics.iter().any(|x| x == v);
        let f = has("F");
        let Some((out_e, _)) = width_expr(instr.ret.width() / 4, false) else { continue };
        // Generic arguments after the type: S2 as ?s2, E2 as ?bw2, F as ?f.
        let extra: Vec<&'static str> = g.generics[3..].iter().map(|x| match x.as_str() { "S2" => "?s2", "E2" => "?bw2", _ => "?f" }).collect();
        let mut operands = Vec::new();
        let mut ok = true;
        for (k, c) in chunks.iter().enumerate() {
            let v = format!("?x{k}");
            match c {
                None => operands.push((v, None)),
                Some(c) => match width_expr(*c, f) {
                    Some((e, l)) => operands.push((v, Some((e, l)))),
                    None => ok = false,
                },
            }
        }
        if ok {
            out.push(LaneOp { op: op.to_string(), extra, operands, out_e, s2: has("S2"), e2: has("E2"), f });
        }
    }
    out
}

/// What the lane-fact templates read of a target's registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registers {
    /// The narrowest register a split's halves and a doubled vector fill:
    /// x86's xmm and NEON's Q, 128 bits; HVX's one vector, 1,024.
    pub fill: i128,
    /// The narrowest vector register (NEON's D, 64 bits): a widening or
    /// narrowing op splits while its wide halves fill a register and its
    /// narrow ones are at least this (a u8x16 to u16x16 cast into two
    /// `vmovl` of D halves). Equal to `fill` on x86 and HVX.
    pub narrowest: i128,
    /// Also split into even and odd lanes, joined by `interleave`: HVX's
    /// widening instructions give a pair's lanes in that order.
    pub parity: bool,
    /// The widest register (x86's zmm, 512 bits): how wide the Halide-level
    /// identities (commutations, expansions) are instantiated. They hold at
    /// every width, and capped at 256 bits a 512-bit value had none of them,
    /// so selection split it into ymm halves to reach a rule
    /// (`rounding_shift_right` by a constant is `avg` of a shift only
    /// through its expansion).
    pub widest: i128,
}

impl Registers {
    pub fn of(isa: &misaal_rulesets::TargetIsa) -> Self {
        let narrowest = isa.vector_widths.iter().copied().min().unwrap_or(128);
        let (fill, top) = (narrowest.max(128), isa.vector_widths.iter().copied().max().unwrap_or(128));
        // NEON's widest register is the one it fills: its identities reach
        // two (256 bits: an 8-bit multiply-shift of 16 lanes computed at 16
        // bits), which the splits then halve. HVX's pairs are registers of
        // their own and splits handle them.
        let widest = if top == fill && isa.pair_bits == 0 { 2 * fill } else { top };
        Registers { fill, narrowest, parity: isa.pair_bits > 0, widest }
    }
}

/// The templates of a target with registers `regs`, none naming an
/// instruction: splits of every lane-local op down to registers and pads
/// of lane counts no register holds (from lane facts), the Halide-level
/// expansions and fallbacks (searched over Halide's semantics), and the
/// slice-of-concat identities.
pub fn splits(halide: &SpecLibrary, regs: Registers) -> Vec<Split> {
    let mut out = split_templates(halide, regs);
    // Doubled up to the narrowest register: a NEON D register holds a
    // 64-bit vector, and doubling one into a Q register would loop with
    // the split of a widening op into D halves.
    out.extend(pad::pads(halide, regs.narrowest));
    // Mixed-width ops rewritten to same-type ops over casts (searched).
    out.extend(expand::expansions(halide));
    out.extend(expand::amount_expansions(halide, regs));
    out.extend(expand::narrowing_expansions(halide));
    out.extend(expand::division_expansions(halide, regs));
    out.extend(expand::modulo_expansions(halide, regs));
    out.extend(widen::widenings(halide, regs));
    out.extend(divide::divisions(halide, regs));
    out.extend(select_width::selects(halide, regs));
    out.extend(slice_concat(regs.parity));
    // A template with no instance at these registers (a widening whose
    // wide type fills none of them) is not written.
    out.retain(|s| s.free.iter().all(|(_, d)| !d.is_empty()));
    out
}

/// Split templates for every lane-local Halide op, down to `regs`'
/// registers: into low and high halves joined by `concat`, and where the
/// target wants them, even and odd lanes joined by `interleave`.
fn split_templates(halide: &SpecLibrary, regs: Registers) -> Vec<Split> {
    let mut out = Vec::new();
    for lop in lane_ops(halide) {
        let LaneOp { op, operands, out_e, .. } = &lop;
        // The halves: by blocks (`lo` of `(slice .. 0 1)`, `(slice .. n 1)`)
        // or by parity (`(slice .. 0 2)`, `(slice .. 1 2)`).
        let half = |first: bool, parity: bool| {
            let args: Vec<String> = operands
                .iter()
                .map(|(v, w)| match w {
                    None => v.clone(),
                    Some((e, l)) if parity => format!("(slice (t ?sign {e} {l}) (* 2 {l}) {} 2 {v})", if first { 0 } else { 1 }),
                    Some((e, l)) => format!("(slice (t ?sign {e} {l}) (* 2 {l}) {} 1 {v})", if first { "0".to_string() } else { l.to_string() }),
                })
                .collect();
            format!("({op} {} {})", lop.generics("?n"), args.join(" "))
        };
        let vars: Vec<String> = operands.iter().map(|(v, _)| v.clone()).collect();
        let lhs = format!("({op} {} {})", lop.generics("(* 2 ?n)"), vars.join(" "));
        let out_sign = if *out_e == "1" { "0" } else { "?sign" };
        let rhs = format!("(concat (t {out_sign} {out_e} ?n) ?n {} {})", half(true, false), half(false, false));
        let free = lop.free(vec![2, 4, 8, 16, 32, 64, 128]);
        let low = regs.narrowest;
        let mut conds = vec![format!("(>= (* ?n ?bw) {low})"), format!("(<= (* ?n ?bw) {SPLIT_HALF_BITS})")];
        if lop.e2 {
            // A cast to its own width is its operand's bits; a saturating
            // one (i32 -> u32) is not, and wider than a register it splits.
            if op != "saturating_cast" {
                conds.push("(!= ?bw ?bw2)".into());
            }
            conds.push(format!("(>= (* ?n ?bw2) {low})"));
            conds.push(format!("(<= (* ?n ?bw2) {SPLIT_HALF_BITS})"));
        }
        // Where halves may be narrower than the filled register (NEON's D),
        // one template per side that is the first to fill one, so that no
        // instance is written twice; elsewhere every half fills one.
        let sides = lop.sides();
        let variants: Vec<(String, Vec<String>)> = if low == regs.fill {
            vec![(String::new(), vec![])]
        } else {
            (0..sides.len())
                .map(|k| {
                    let mut c: Vec<String> = sides.iter().filter(|w| !conds.contains(&format!("(>= {w} {low})"))).map(|w| format!("(>= {w} {low})")).collect();
                    c.extend(sides[..k].iter().map(|w| format!("(< {w} {})", regs.fill)));
                    c.push(format!("(>= {} {})", sides[k], regs.fill));
                    (if k == 0 { String::new() } else { format!(".side{k}") }, c)
                })
                .collect()
        };
        let why = format!("phase legalize; lane facts of Halide `{op}`: output lane i reads only lane i of each vector operand");
        let joins: Vec<(&str, String)> = if regs.parity {
            let even_odd = format!("(interleave (t {out_sign} {out_e} ?n) {} {})", half(true, true), half(false, true));
            vec![("split", rhs.clone()), ("parity", even_odd)]
        } else {
            vec![("split", rhs.clone())]
        };
        for (join, rhs) in &joins {
            let how = if *join == "parity" { "; the even and odd lanes, interleaved back" } else { "" };
            for (suffix, extra) in &variants {
                let mut conds = conds.clone();
                conds.extend(extra.iter().cloned());
                if lop.e2 && op != "saturating_cast" {
                    // Selection reads a cast to its own width through, but only up
                    // to the widest value the splits meet (2048 bits): a 4096-bit
                    // i32x128 reinterpreted as u32 fell back to a lane loop. Wider
                    // than that it splits like any op.
                    let mut wide = conds.clone();
                    wide.retain(|c| c != "(!= ?bw ?bw2)");
                    wide.extend(["(= ?bw ?bw2)".to_string(), "(> (* ?n ?bw) 1024)".to_string()]);
                    out.push(Split {
                        op: op.to_string(),
                        name: format!("synth.{join}-{op}.same-width{suffix}"),
                        lhs: lhs.clone(),
                        rhs: rhs.clone(),
                        conds: wide,
                        free: free.clone(),
                        provenance: format!("{why}{how}; to its own width, only past 2048 bits"),
                    });
                }
                out.push(Split {
                    op: op.to_string(),
                    name: format!("synth.{join}-{op}{suffix}"),
                    lhs: lhs.clone(),
                    rhs: rhs.clone(),
                    conds,
                    free: free.clone(),
                    provenance: format!("{why}{how}"),
                });
            }
        }
    }
    out
}

/// `slice(concat(a, b))` is `a` or `b`: the identities that cancel a
/// split's halves against the concat of the op before it; with `parity`,
/// the even (odd) lanes of `interleave(a, b)` are `a` (`b`), for the
/// parity splits.
fn slice_concat(parity: bool) -> Vec<Split> {
    let mut out = Vec::new();
    let blocks = [("concat", "lo", "0", "1", "?x0"), ("concat", "hi", "?n", "1", "?x1")];
    let lanes = [("interleave", "even", "0", "2", "?x0"), ("interleave", "odd", "1", "2", "?x1")];
    for (join, part, start, stride, pick) in blocks.into_iter().chain(lanes.into_iter().filter(|_| parity)) {
        let (name, joined) = match join {
            "concat" => (format!("synth.slice-concat-{part}"), "(concat (t ?sign2 ?bw ?n) ?n ?x0 ?x1)"),
            _ => (format!("synth.slice-interleave-{part}"), "(interleave (t ?sign2 ?bw ?n) ?x0 ?x1)"),
        };
        out.push(Split {
            op: "slice".into(),
            name,
            // The slice's sign may differ from the concat's: a split op
            // slices every operand at its own type, and a shift's amount
            // (sign ?s2) is a concat of the amount's type.
            lhs: format!("(slice (t ?sign ?bw ?n) (* 2 ?n) {start} {stride} {joined})"),
            rhs: pick.into(),
            conds: vec!["(<= (* ?n ?bw) 2048)".into()],
            free: vec![("sign".into(), vec![0, 1]), ("sign2".into(), vec![0, 1]), ("bw".into(), vec![1, 8, 16, 32, 64]), ("n".into(), vec![2, 4, 8, 16, 32, 64, 128])],
            provenance: format!("phase legalize; swizzle identity: the slice's lanes are exactly one {join} operand's (bits only: the two types' signs may differ)"),
        });
    }
    out
}

impl Split {
    /// The rule as text, in `ruleset` (the target's name), over `domains`.
    pub fn text(&self, ruleset: &str, name: &str, domains: &[(String, Vec<i128>)]) -> String {
        let mut conds: Vec<String> = domains.iter().map(|(v, d)| format!("(in ?{v} {})", d.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" "))).collect();
        conds.extend(self.conds.iter().cloned());
        format!("(rewrite {} {} :when ({}) :name {name:?} :ruleset {ruleset})", self.lhs, self.rhs, conds.join(" "))
    }
}

/// `width` bits of a xorshift stream from `seed`, each 64-bit word `x`
/// (the k-th) passed through `word(k, x)`: the searches' random inputs,
/// each search with its own edge words.
pub(crate) fn xorshift_bits(width: u32, seed: u64, word: impl Fn(u64, u64) -> u64) -> misaal_isa::BitVec {
    let mut x = seed | 1;
    let limbs: Vec<u64> = (0..width.div_ceil(64) as u64)
        .map(|k| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            word(k, x)
        })
        .collect();
    misaal_isa::BitVec::from_limbs(width, &limbs)
}

/// The Halide ops and the x86 specs verified on this machine: what the
/// searches run on, for their tests.
#[cfg(test)]
pub(crate) fn test_libraries() -> (SpecLibrary, SpecLibrary) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let halide = SpecLibrary::load_dir(&root.join("frontends/halide")).expect("halide library");
    let dir = root.join("isa/specs/x86");
    let mut x86 = SpecLibrary::load_dir(&dir).expect("x86 library");
    x86.retain_verified(&misaal_isa::StatusTable::load(&misaal_isa::StatusTable::path_for(&dir)).expect("status"));
    (halide, x86)
}
