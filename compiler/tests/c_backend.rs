//! The C backend against Halide: every interpreter fixture (Halide's JIT
//! output for a Stmt sample) is emitted as C, compiled with
//! `cc -O2 -march=native`, run, and compared bit for bit; every benchmark
//! Stmt must compile with `cc -O3 -march=native -c`.
//!
//! Needs a C compiler (`cc`) and HalideRuntime.h from the pip `halide`
//! package (`python3 -m pip install halide==21.0.0`).

use crate::common::*;
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;

const FRONTENDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../frontends");
const BENCHMARKS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks/stmt");

/// A Stmt sample: `src/stmt/samples/<name>.stmt`, or one that
/// `interp_fixtures.py` lowers itself into `tests/interp_fixtures/`.
fn sample(name: &str) -> String {
    let own = format!("{FRONTENDS}/tests/interp_fixtures/{name}.stmt");
    let path = if std::path::Path::new(&own).exists() { own } else { format!("{FRONTENDS}/src/stmt/samples/{name}.stmt") };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn ty(s: &str) -> Type {
    if s == "bool" {
        return Type::bool();
    }
    let bits: u8 = s.trim_start_matches(|c: char| c.is_alphabetic()).parse().unwrap();
    if s.starts_with("uint") {
        Type::uint(bits)
    } else if s.starts_with("int") {
        Type::int(bits)
    } else {
        Type::float(bits)
    }
}

fn buffer(v: &serde_json::Value) -> Arg {
    let ints = |k: &str| -> Vec<i64> { v[k].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect() };
    let hex = v["data"].as_str().unwrap();
    let data = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
    Arg::Buffer { elem: ty(v["type"].as_str().unwrap()), dims: ints("min").into_iter().zip(ints("extent")).collect(), data }
}

/// Fixtures the backend does not run, and the message it gives.
const KNOWN_UNSUPPORTED: &[(&str, &str)] = &[];

/// Every fixture: emit, compile, run, compare with Halide bit for bit.
#[test]
fn c_matches_halide_on_every_sample_fixture() {
    let dir = format!("{FRONTENDS}/tests/interp_fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    files.sort();
    assert!(files.len() >= 30, "only {} fixtures", files.len());
    halide_include();
    check_cc();
    let results = par_map(&files, |path| -> Result<&'static str, String> {
        let fx: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let name = fx["sample"].as_str().unwrap().to_string();
        let m = parse_module(&name, &sample(&name)).map_err(|d| format!("{name}: {d}"))?;
        let func = external(&m);
        // The output is the one buffer argument the fixture does not give
        // (the samples may call it `f$29` where the fixture says `f`).
        let given: Vec<&str> = fx["args"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
        let outs: Vec<&str> = func.args.iter().filter(|a| !given.contains(&a.name.as_str())).map(|a| a.name.as_str()).collect();
        let [out_name] = outs[..] else { return Err(format!("{name}: cannot tell the output among {outs:?}")) };
        let want = buffer(&fx["output"]);
        let mut args = Vec::new();
        let mut out_pos = 0;
        for a in &func.args {
            if a.name == out_name {
                let Arg::Buffer { elem, dims, data } = &want else { unreachable!() };
                out_pos = args.iter().filter(|x| matches!(x, Arg::Buffer { .. })).count();
                args.push(Arg::Buffer { elem: *elem, dims: dims.clone(), data: vec![0; data.len()] });
                continue;
            }
            let fa = fx["args"].as_array().unwrap().iter().find(|x| x["name"] == a.name.as_str()).ok_or_else(|| format!("{name}: no fixture value for `{}`", a.name))?;
            args.push(if fa["kind"] == "buffer" { buffer(fa) } else { Arg::Scalar { ty: ty(fa["type"].as_str().unwrap()), value: fa["value"].as_i64().unwrap() } });
        }
        match run(&format!("fixture_{name}"), &m, &args) {
            Ok(bufs) => {
                let Arg::Buffer { data: want, .. } = &want else { unreachable!() };
                let got = &bufs[out_pos];
                if got != want {
                    let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                    let bad = got.iter().zip(want).filter(|(a, b)| a != b).count();
                    return Err(format!("{name}: {bad} bytes differ from Halide's, first at byte {first} (ours {:#x}, Halide {:#x})", got[first], want[first]));
                }
                Ok("pass")
            }
            Err(RunError::Emit(e)) if KNOWN_UNSUPPORTED.iter().any(|(n, why)| *n == name && e.contains(why)) => {
                eprintln!("SKIPPED {name}: {e} (known unsupported)");
                Ok("skip")
            }
            Err(e) => Err(format!("{name}: {e}")),
        }
    });
    let mut failures = Vec::new();
    let (mut pass, mut skip) = (0, 0);
    for r in results {
        match r {
            Ok("pass") => pass += 1,
            Ok(_) => skip += 1,
            Err(e) => failures.push(e),
        }
    }
    eprintln!("{pass} samples match Halide bit for bit, {skip} skipped as unsupported");
    assert!(failures.is_empty(), "{} of {} samples:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// All benchmark Stmts compile with `cc -O3 -march=native -c`.
#[test]
fn every_benchmark_stmt_compiles() {
    let mut files: Vec<_> = std::fs::read_dir(BENCHMARKS).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "stmt")).collect();
    files.sort();
    assert_eq!(files.len(), 33, "benchmarks/stmt should hold 33 Stmt files");
    halide_include();
    check_cc();
    let results = par_map(&files, |path| -> Result<(), String> {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let m = parse_module(&name, &std::fs::read_to_string(path).unwrap()).map_err(|d| format!("{name}: {d}"))?;
        let dir = work_dir(&format!("bench_{name}"));
        write_program(&dir, &m, &name).map_err(|e| format!("{name}: {e}"))?;
        cc(&dir, &["-O3", "-march=native", "-c", "prog.c", "-o", "prog.o"]).map_err(|e| format!("{name}: cc failed:\n{e}"))?;
        cleanup(&dir);
        Ok(())
    });
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{} of {} benchmarks:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// Samples (beyond the fixtures) the backend rejects, and why.
const SAMPLES_UNSUPPORTED: &[(&str, &str)] = &[
    // Halide does not print a constant buffer's contents.
    ("const_buffer", "unsupported: constant buffers"),
    ("float16", "unsupported: float16"),
];

/// Every Stmt sample either compiles or is a known unsupported one.
#[test]
fn every_sample_stmt_compiles_or_is_known_unsupported() {
    let dir = format!("{FRONTENDS}/src/stmt/samples");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "stmt")).collect();
    files.sort();
    halide_include();
    check_cc();
    let results = par_map(&files, |path| -> Result<(), String> {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let m = parse_module(&name, &std::fs::read_to_string(path).unwrap()).map_err(|d| format!("{name}: {d}"))?;
        let dir = work_dir(&format!("sample_{name}"));
        match write_program(&dir, &m, "sample") {
            Ok(_) => {}
            Err(e) if SAMPLES_UNSUPPORTED.iter().any(|(n, why)| *n == name && e.contains(why)) => {
                cleanup(&dir);
                return Ok(());
            }
            Err(e) => return Err(format!("{name}: {e}")),
        }
        if let Some((_, why)) = SAMPLES_UNSUPPORTED.iter().find(|(n, _)| *n == name) {
            return Err(format!("{name}: listed as unsupported ({why}) but emits"));
        }
        cc(&dir, &["-O1", "-c", "prog.c", "-o", "prog.o"]).map_err(|e| format!("{name}: cc failed:\n{e}"))?;
        cleanup(&dir);
        Ok(())
    });
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{} of {} samples:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// A failed shape assert returns Halide's error code instead of running.
#[test]
fn failed_assert_returns_the_halide_error_code() {
    let m = parse_module("blur", &sample("blur")).unwrap();
    // blur needs an output of at least one 128x32 tile.
    let args = vec![
        Arg::Buffer { elem: Type::uint(8), dims: vec![(0, 66), (0, 34)], data: vec![0; 66 * 34] },
        Arg::Buffer { elem: Type::uint(8), dims: vec![(0, 64), (0, 32)], data: vec![0; 64 * 32] },
    ];
    match run("assert_blur", &m, &args) {
        Err(RunError::Returned(c)) => assert_eq!(c, -4, "halide_error_code_access_out_of_bounds"),
        other => panic!("expected an error return, got {other:?}"),
    }
    // A wrong element type: halide_error_code_bad_type.
    let args = vec![
        Arg::Buffer { elem: Type::uint(16), dims: vec![(0, 258), (0, 66)], data: vec![0; 258 * 66 * 2] },
        Arg::Buffer { elem: Type::uint(8), dims: vec![(0, 256), (0, 64)], data: vec![0; 256 * 64] },
    ];
    match run("assert_blur_type", &m, &args) {
        Err(RunError::Returned(c)) => assert_eq!(c, -3),
        other => panic!("expected an error return, got {other:?}"),
    }
}

/// The emitted header declares the function with Halide's AOT ABI.
#[test]
fn header_declares_the_halide_abi() {
    let m = parse_module("select_minmax", &sample("select_minmax")).unwrap();
    let p = misaal_compiler::c::emit(&m, "sel").unwrap();
    let f = external(&m);
    let names: Vec<&str> = f.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(p.h.contains("#include \"HalideRuntime.h\""), "{}", p.h);
    let decl = p.h.lines().find(|l| l.starts_with("int sel(")).unwrap_or_else(|| panic!("{}", p.h));
    assert_eq!(decl.matches("struct halide_buffer_t *").count(), 3, "{decl}");
    assert!(decl.contains("int32_t _thresh"), "{decl}");
    let e = misaal_compiler::c::emit(&m, "not an identifier").unwrap_err();
    assert!(e.to_string().contains("identifier"), "{e}");
}

/// A bounds query (null host pointers) fills in the shapes the pipeline
/// needs and runs nothing, as Halide's generated code does.
#[test]
fn bounds_query_fills_in_the_input_shape() {
    let m = parse_module("blur", &sample("blur")).unwrap();
    let dir = work_dir("bounds_query");
    write_program(&dir, &m, "blur").unwrap();
    let main = r#"#include <stdio.h>
#include <string.h>
#include "prog.h"
int main(void) {
  halide_dimension_t din[2], dout[2] = {{0, 256, 1, 0}, {0, 64, 256, 0}};
  memset(din, 0, sizeof din);
  struct halide_buffer_t in, out;
  memset(&in, 0, sizeof in); memset(&out, 0, sizeof out);
  in.dimensions = 2; in.dim = din; out.dimensions = 2; out.dim = dout;
  out.type.code = halide_type_uint; out.type.bits = 8; out.type.lanes = 1;
  int r = blur(&in, &out);
  printf("%d %d %d %d %d %d %d %d %d\n", r, in.type.code, in.type.bits, din[0].min, din[0].extent, din[0].stride, din[1].min, din[1].extent, din[1].stride);
  return 0;
}
"#;
    std::fs::write(dir.join("main.c"), main).unwrap();
    cc(&dir, &["-O1", "prog.c", "main.c", "-o", "bq"]).unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new(dir.join("bq")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0 1 8 0 258 1 0 66 258");
    cleanup(&dir);
}
