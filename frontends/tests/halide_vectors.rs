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
        "widening_mul" => vec![vec![0], vec![1]],
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
