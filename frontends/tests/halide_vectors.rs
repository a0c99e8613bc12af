//! Halide's op semantics against Halide itself.
//!
//! `halide/vectors/*.json` hold input/output vectors computed by Halide 21's
//! JIT (`halide/vectors.py` regenerates them). Every vector must evaluate to
//! Halide's output under our semantics. Separately, every op must instantiate
//! for every element type and a range of lane counts.

use misaal_frontends::{halide_ops, halide_spec_dir};
use misaal_isa::{BitVec, SpecLibrary};
use serde_json::Value;

fn lib() -> SpecLibrary {
    match halide_ops() {
        Ok(l) => l,
        Err(e) => panic!("Halide op specs do not load:\n{e}"),
    }
}

#[test]
fn every_vector_matches_halide() {
    let lib = lib();
    let dir = halide_spec_dir().join("vectors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vector files in {}", dir.display());

    let mut checked = 0usize;
    let mut mismatches: Vec<String> = Vec::new();
    let mut ops_seen = std::collections::BTreeSet::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let vectors = json.as_array().unwrap_or_else(|| panic!("{}: expected a list", path.display()));
        for (k, v) in vectors.iter().enumerate() {
            let here = || format!("{}[{k}]", path.file_name().unwrap().to_string_lossy());
            let op = v["op"].as_str().unwrap_or_else(|| panic!("{}: no op", here()));
            let generics: Vec<i128> = v["generics"]
                .as_array()
                .unwrap_or_else(|| panic!("{}: no generics", here()))
                .iter()
                .map(|g| g.as_i64().unwrap_or_else(|| panic!("{}: generic {g} is not an integer", here())) as i128)
                .collect();
            let (instr, sem) = match lib.instantiate(op, &generics) {
                Ok(x) => x,
                Err(e) => {
                    mismatches.push(format!("{}: cannot instantiate {op}{generics:?}: {e}", here()));
                    continue;
                }
            };
            ops_seen.insert(op.to_string());
            let hex = |s: &Value| s.as_str().unwrap_or_else(|| panic!("{}: {s} is not a hex string", here())).to_string();
            let inputs: Vec<String> = v["inputs"].as_array().unwrap_or_else(|| panic!("{}: no inputs", here())).iter().map(hex).collect();
            if inputs.len() != instr.params.len() {
                mismatches.push(format!("{}: {} takes {} operand(s), the vector has {}", here(), instr.name, instr.params.len(), inputs.len()));
                continue;
            }
            let operands: Vec<BitVec> = inputs
                .iter()
                .zip(&instr.params)
                .map(|(s, p)| BitVec::parse_hex(p.ty.width(), s).unwrap_or_else(|e| panic!("{}: operand {}: {e}", here(), p.name)))
                .collect();
            let want = BitVec::parse_hex(instr.ret.width(), &hex(&v["output"])).unwrap_or_else(|e| panic!("{}: output: {e}", here()));
            let got = sem.eval(&operands).unwrap_or_else(|e| panic!("{}: eval: {e}", here()));
            checked += 1;
            if got != want {
                mismatches.push(format!("{}: {} inputs [{}]: ours {got}, Halide's {want}", here(), instr.name, inputs.join(", ")));
            }
        }
    }
    let ops = lib.generic_names();
    let untested: Vec<&str> = ops.iter().copied().filter(|o| !ops_seen.contains(*o)).collect();
    eprintln!("checked {checked} vectors of {} ops against Halide", ops_seen.len());
    assert!(untested.is_empty(), "ops without Halide vectors: {untested:?}");
    if !mismatches.is_empty() {
        let shown: Vec<&str> = mismatches.iter().take(200).map(|s| s.as_str()).collect();
        panic!("{} of {checked} vectors disagree with Halide:\n{}", mismatches.len(), shown.join("\n"));
    }
    // The README states how many vectors this test checks and of how many ops.
    assert_eq!(readme_number("checked against ", " vectors from Halide"), checked, "README's vector count (status table)");
    assert_eq!(readme_number("| Halide IR and FPIR semantics (`frontends/halide/`) | ", " generic ops"), ops.len(), "README's op count (status table)");
}

/// The number the README writes between `before` and `after` (commas allowed).
fn readme_number(before: &str, after: &str) -> usize {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    // Line breaks count as spaces: the sentence may wrap anywhere.
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}")).split_whitespace().collect::<Vec<_>>().join(" ");
    let found: Vec<usize> = text
        .match_indices(before)
        .filter_map(|(i, _)| {
            let rest = &text[i + before.len()..];
            let digits = rest.find(after)?;
            rest[..digits].replace(',', "").parse().ok()
        })
        .collect();
    match found[..] {
        [n] => n,
        _ => panic!("README.md should state one number between {before:?} and {after:?}, found {found:?}"),
    }
}

/// Every shift op has Halide vectors for all four pairs of value and amount
/// signedness, with negative amounts among the signed ones: Halide's IR
/// shifts an int16 value by a uint16 amount and a uint8 value by an int8
/// one, and the verifier proves rules against these same specs.
#[test]
fn every_shift_has_vectors_for_each_value_and_amount_signedness() {
    let text = std::fs::read_to_string(halide_spec_dir().join("vectors/arith.json")).unwrap()
        + &std::fs::read_to_string(halide_spec_dir().join("vectors/fpir.json")).unwrap();
    let mut missing = Vec::new();
    for op in ["shl", "shr", "widening_shift_left", "widening_shift_right", "rounding_shift_left", "rounding_shift_right"] {
        for s in 0..=1 {
            for s2 in 0..=1 {
                for e in [8, 16, 32] {
                    let key = format!("{{\"op\":\"{op}\",\"generics\":[{s},{e},8,{s2}]");
                    if !text.contains(&key) {
                        missing.push(key);
                    }
                }
            }
        }
    }
    assert!(missing.is_empty(), "no Halide vectors for {missing:?}");
}

/// Values Halide 21's JIT gives for shifts whose amount's signedness differs
/// from the value's (one lane each; see vectors.py for the full sets).
#[test]
fn mixed_signedness_shifts_follow_halide() {
    let lib = lib();
    let run = |op: &str, g: &[i128], a: i128, b: i128| -> i128 {
        let (instr, sem) = lib.instantiate(op, g).unwrap_or_else(|e| panic!("{op}{g:?}: {e}"));
        let w = instr.params[0].ty.width();
        let out = sem.eval(&[BitVec::from_i128(w, a), BitVec::from_i128(w, b)]).unwrap();
        let rw = instr.ret.width();
        let v = out.to_u128() as i128;
        if g[0] == 1 && (v >> (rw - 1)) & 1 == 1 { v - (1 << rw) } else { v }
    };
    // (op, <S, E, N, S2>, value, amount, Halide's result)
    let cases: &[(&str, [i128; 4], i128, i128, i128)] = &[
        // uint16 value, int16 amount: a negative amount reverses the shift.
        ("shl", [0, 16, 1, 1], 65436, -3, 8179),
        ("shr", [0, 16, 1, 1], 65436, -3, 64736),
        ("widening_shift_left", [0, 16, 1, 1], 65436, -3, 8179),
        ("widening_shift_right", [0, 16, 1, 1], 65436, -3, 523488),
        ("rounding_shift_left", [0, 16, 1, 1], 65535, -1, 32768),
        ("rounding_shift_right", [0, 16, 1, 1], 65535, -1, 65534),
        // int16 value, uint16 amount: arithmetic right shifts, sign extension.
        ("shl", [1, 16, 1, 0], -100, 3, -800),
        ("shr", [1, 16, 1, 0], -100, 3, -13),
        ("widening_shift_left", [1, 16, 1, 0], -32768, 1, -65536),
        ("widening_shift_right", [1, 16, 1, 0], -100, 3, -13),
        ("rounding_shift_left", [1, 16, 1, 0], -5, 3, -40),
        ("rounding_shift_right", [1, 16, 1, 0], -100, 3, -12),
    ];
    let mut wrong = Vec::new();
    for &(op, g, a, b, want) in cases {
        let got = run(op, &g, a, b);
        if got != want {
            wrong.push(format!("{op}{g:?}({a}, {b}) = {got}, Halide gives {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Representative values of the parameters after <S, E, N>, for lane count n.
fn extra_params(op: &str, e: i128, n: i128) -> Vec<Vec<i128>> {
    let all_types = || -> Vec<Vec<i128>> { [0, 1].iter().flat_map(|&s2| [8, 16, 32, 64].map(|e2| vec![s2, e2])).collect() };
    match op {
        "cast" | "saturating_cast" => all_types(),
        "reinterpret" => all_types()
            .into_iter()
            .filter(|t| (n * e) % t[1] == 0)
            .map(|t| vec![t[0], t[1], n * e / t[1]])
            .collect(),
        // widening_mul's second operand and every shift's amount have their
        // own signedness S2.
        "widening_mul" | "shl" | "shr" | "widening_shift_left" | "widening_shift_right" | "rounding_shift_left" | "rounding_shift_right" => {
            vec![vec![0], vec![1]]
        }
        "deinterleave" => vec![vec![0], vec![1]],
        "concat" => vec![vec![1], vec![n], vec![3]],
        // slice<.., M, BEGIN, STRIDE>: contiguous, strided, reversed.
        "slice" => vec![vec![n, 0, 1], vec![2 * n + 1, 1, 2], vec![n, n - 1, -1]],
        o if o.starts_with("vector_reduce_") => vec![vec![1], vec![2], vec![4]],
        _ => vec![vec![]],
    }
}

#[test]
fn every_op_is_defined_for_every_type_and_lane_count() {
    let lib = lib();
    let ops = lib.generic_names();
    assert!(ops.len() >= 55, "expected every Halide op, found {}: {ops:?}", ops.len());
    let mut failures = Vec::new();
    let mut count = 0;
    let mut too_wide_count = 0;
    for op in &ops {
        for s in 0..=1 {
            for e in [8, 16, 32, 64] {
                for n in [1, 2, 3, 16, 64] {
                    for extra in extra_params(op, e, n) {
                        let mut g = vec![s, e, n];
                        g.extend(extra);
                        count += 1;
                        if let Err(d) = lib.instantiate(op, &g) {
                            // Operands are at most MAX_WIDTH bits: 64 lanes of
                            // 64 bits fit, twice that (a widening op's result,
                            // a reduction's input) does not.
                            if too_wide(&d.to_string()) {
                                too_wide_count += 1;
                            } else {
                                failures.push(format!("{op}{g:?}: {d}"));
                            }
                        }
                    }
                }
            }
        }
    }
    eprintln!("{count} instances, {too_wide_count} of them wider than {} bits", misaal_isa::bitvec::MAX_WIDTH);
    assert!(failures.is_empty(), "{} of {count} instances fail:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(readme_number("`frontends/tests/halide_vectors.rs` instantiates ", " combinations"), count, "README's instance count (Halide semantics)");
}

/// Whether an instantiation error is a width above the language's limit
/// (and not, say, a zero or negative width from a wrong size expression).
fn too_wide(msg: &str) -> bool {
    let Some(rest) = msg.split("width ").nth(1) else { return false };
    let Some((w, tail)) = rest.split_once(' ') else { return false };
    tail.starts_with("is outside 1..") && w.parse::<i128>().is_ok_and(|w| w > misaal_isa::bitvec::MAX_WIDTH as i128)
}

#[test]
fn mismatched_parameters_are_rejected() {
    let lib = lib();
    // reinterpret must keep the total width; slices must stay in range.
    assert!(lib.instantiate("reinterpret", &[0, 8, 4, 0, 16, 1]).is_err());
    assert!(lib.instantiate("reinterpret", &[0, 8, 4, 0, 16, 2]).is_ok());
    assert!(lib.instantiate("slice", &[0, 8, 4, 8, 5, 1]).is_err());
    assert!(lib.instantiate("slice", &[0, 8, 4, 8, 4, 1]).is_ok());
    assert!(lib.instantiate("deinterleave", &[0, 8, 4, 2]).is_err());
}

/// The widest vector a Halide schedule gives, 128 lanes of 64 bits, is
/// evaluated: a random pipeline's i8x128 cast to i64 (8,192 bits) stopped
/// the reference interpreter at the old 4,096-bit limit, so its bench row
/// failed though nothing was miscompiled. Past the limit is still an error.
#[test]
fn a_vector_of_128_lanes_of_64_bits_is_evaluated() {
    let lib = lib();
    let (_, cast) = lib.instantiate("cast", &[1, 8, 128, 0, 64]).unwrap_or_else(|e| panic!("{e}"));
    let x = misaal_isa::BitVec::ones(8 * 128);
    let y = cast.eval(&[&x]).unwrap_or_else(|e| panic!("{e}"));
    // Each -1 sign-extends, then reads as u64: all ones.
    assert_eq!(y, misaal_isa::BitVec::ones(64 * 128));
    assert!(lib.instantiate("cast", &[1, 8, 256, 0, 64]).is_err(), "16,384 bits is past the limit");
}
