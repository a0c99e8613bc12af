//! The reference interpreter runs Halide's own lowered Stmt and must agree
//! with the algorithm computed directly.

use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;

/// A Stmt sample: `src/stmt/samples/<name>.stmt`, or one that
/// `interp_fixtures.py` lowers itself into `tests/interp_fixtures/`.
fn sample(name: &str) -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let own = format!("{dir}/tests/interp_fixtures/{name}.stmt");
    let path = if std::path::Path::new(&own).exists() { own } else { format!("{dir}/src/stmt/samples/{name}.stmt") };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn blur3x3_stmt_matches_the_blur_computed_directly() {
    let m = parse_module("blur.stmt", &sample("blur")).unwrap_or_else(|d| panic!("{d}"));
    let ops = misaal_frontends::halide_ops().unwrap();
    let (w, h) = (256i64, 64i64);
    let mut input = Buffer::dense(Type::uint(8), &[0, 0], &[w + 2, h + 2]);
    let mut s: u64 = 0x1234_5678;
    for b in input.data.iter_mut() {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *b = (s >> 33) as u8;
    }
    let out = Buffer::dense(Type::uint(8), &[0, 0], &[w, h]);
    let func = &m.funcs[0];
    let args: Vec<ArgValue> = func
        .args
        .iter()
        .map(|a| if a.name == "input" { ArgValue::Buffer(input.clone()) } else { ArgValue::Buffer(out.clone()) })
        .collect();
    let result = Interp::new(&ops).run(func, args).unwrap_or_else(|e| panic!("{e}"));
    let got = &result[func.args.iter().position(|a| a.name != "input").unwrap()];
    let px = |x: i64, y: i64| input.data[(y * (w + 2) + x) as usize] as u32;
    let mut bad = 0;
    for y in 0..h {
        for x in 0..w {
            let bx = |yy: i64| px(x, yy) + px(x + 1, yy) + px(x + 2, yy);
            let want = ((bx(y) + bx(y + 1) + bx(y + 2)) / 3) as u8;
            if got.data[(y * w + x) as usize] != want {
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0, "{bad} of {} pixels differ", w * h);
}

#[test]
fn out_of_bounds_and_failed_asserts_are_errors_not_panics() {
    let m = parse_module("blur.stmt", &sample("blur")).unwrap();
    let ops = misaal_frontends::halide_ops().unwrap();
    let func = &m.funcs[0];
    // An output smaller than one 128x32 tile violates the schedule's assert.
    let args: Vec<ArgValue> = func
        .args
        .iter()
        .map(|a| {
            if a.name == "input" {
                ArgValue::Buffer(Buffer::dense(Type::uint(8), &[0, 0], &[66, 34]))
            } else {
                ArgValue::Buffer(Buffer::dense(Type::uint(8), &[0, 0], &[64, 32]))
            }
        })
        .collect();
    let e = Interp::new(&ops).run(func, args).unwrap_err();
    assert!(e.0.contains("assertion failed"), "{e}");
}

/// Every fixture from `interp_fixtures.py`: Halide's JIT result for a
/// sample pipeline, which the interpreter must reproduce bit for bit.
#[test]
fn interpreter_matches_halide_on_every_sample_fixture() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interp_fixtures");
    let ops = misaal_frontends::halide_ops().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    files.sort();
    assert!(files.len() >= 30, "only {} fixtures", files.len());
    let mut skipped = 0;
    let mut failures = Vec::new();
    for path in &files {
        match run_fixture(&ops, path) {
            Ok(Outcome::Matches) => {}
            Ok(Outcome::Skipped(why)) => {
                eprintln!("SKIPPED {why} (known unsupported)");
                skipped += 1;
            }
            Err(e) => failures.push(e),
        }
    }
    eprintln!("{} samples match Halide bit for bit, {skipped} skipped as unsupported", files.len() - skipped - failures.len());
    assert!(failures.is_empty(), "{} of {} samples:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// Halide's Stmt shifts values by amounts of the other signedness: a 3x3
/// convolution's int16 taps by `x32((uint16)1)`, its sum by
/// `widening_shift_right(.., x32((uint16)4))`, uint16 and uint8 values by
/// int16 and int8 amounts that are sometimes negative. The interpreter must
/// give the amount its own signedness and match Halide's JIT bit for bit.
#[test]
fn shifts_by_amounts_of_the_other_signedness_match_halide() {
    let text = sample("shift_signedness");
    for pattern in [
        "(int32x32)widening_shift_right(sh[ramp(0, 1, 32)], x32((uint16)4))",
        "(int16x32)shift_left(in[",
        "x32((uint16)2))",
        "(uint16x32)shift_right(uint16x32(",
        "(uint16x32)widening_shift_left(b[",
        "rounding_shift_right(b[",
        "rounding_shift_left(b[",
    ] {
        assert!(text.contains(pattern), "the shift_signedness sample no longer contains `{pattern}`");
    }
    let ops = misaal_frontends::halide_ops().unwrap();
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interp_fixtures/shift_signedness.json"));
    match run_fixture(&ops, path) {
        Ok(Outcome::Matches) => {}
        other => panic!("{other:?}"),
    }
}

#[derive(Debug)]
enum Outcome {
    Matches,
    Skipped(String),
}

/// Runs one fixture's sample on the fixture's inputs and compares the
/// output with Halide's.
fn run_fixture(ops: &misaal_isa::SpecLibrary, path: &std::path::Path) -> Result<Outcome, String> {
    let ty = |s: &str| -> Type {
        let bits: u8 = s.trim_start_matches(|c: char| c.is_alphabetic()).parse().unwrap();
        if s.starts_with("uint") { Type::uint(bits) } else if s.starts_with("int") { Type::int(bits) } else { Type::bool() }
    };
    let buffer = |v: &serde_json::Value| -> Buffer {
        let mins: Vec<i64> = v["min"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
        let exts: Vec<i64> = v["extent"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
        let mut b = Buffer::dense(ty(v["type"].as_str().unwrap()), &mins, &exts);
        let hex = v["data"].as_str().unwrap();
        b.data = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
        b
    };
    // What the interpreter does not run yet; anything else unsupported fails.
    const KNOWN_UNSUPPORTED: &[(&str, &str)] = &[
        ("boundary", "halide_do_par_for"),
        ("tile_compute_at", "halide_do_par_for"),
        ("casts", "floating point"),
        ("bitwise_fpir", "popcount"),
    ];
    let fx: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let name = fx["sample"].as_str().unwrap();
    let m = parse_module(name, &sample(name)).map_err(|d| format!("{name}: {d}"))?;
    let func = &m.funcs.iter().find(|f| f.linkage != misaal_frontends::stmt::ast::Linkage::Internal).unwrap();
    // The samples were lowered in one process, so the output may be
    // named `f$29` where Halide's fixture says `f`: it is the one buffer
    // argument the fixture does not give.
    let given: Vec<&str> = fx["args"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
    let outs: Vec<&str> = func.args.iter().filter(|a| !given.contains(&a.name.as_str())).map(|a| a.name.as_str()).collect();
    let [out_name] = outs[..] else {
        return Err(format!("{name}: cannot tell the output among {outs:?}"));
    };
    let want = buffer(&fx["output"]);
    let mut args = Vec::new();
    for a in &func.args {
        if a.name == out_name {
            args.push(ArgValue::Buffer(Buffer { data: vec![0; want.data.len()], ..want.clone() }));
            continue;
        }
        let Some(fa) = fx["args"].as_array().unwrap().iter().find(|x| x["name"] == a.name.as_str()) else {
            return Err(format!("{name}: no fixture value for argument `{}`", a.name));
        };
        args.push(if fa["kind"] == "buffer" { ArgValue::Buffer(buffer(fa)) } else { ArgValue::Scalar(ty(fa["type"].as_str().unwrap()), fa["value"].as_i64().unwrap()) });
    }
    match Interp::new(ops).run(func, args) {
        Ok(bufs) => {
            // `run` returns the buffer arguments, in order.
            let k = func.args.iter().filter(|a| matches!(a.kind, misaal_frontends::stmt::ast::ArgKind::Buffer { .. })).position(|a| a.name == out_name).unwrap();
            let got = &bufs[k];
            if got.data != want.data {
                let first = got.data.iter().zip(&want.data).position(|(a, b)| a != b).unwrap_or(0);
                let differ = got.data.iter().zip(&want.data).filter(|(a, b)| a != b).count();
                return Err(format!(
                    "{name}: output differs from Halide's in {differ} of {} bytes, first at byte {first} (ours {:#x}, Halide {:#x})",
                    want.data.len(),
                    got.data[first],
                    want.data[first]
                ));
            }
            Ok(Outcome::Matches)
        }
        Err(e) if KNOWN_UNSUPPORTED.iter().any(|(n, why)| *n == name && e.0.contains(why)) => Ok(Outcome::Skipped(format!("{name}: {e}"))),
        Err(e) => Err(format!("{name}: {e}")),
    }
}
