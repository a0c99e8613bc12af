//! Buffer element types where the Stmt has no `.type` checks (printed with
//! `no_asserts`): from bounds queries, stores, typed loads, and
//! `ParseOptions::buffer_types` (`misaal compile --buffer-type`).
//!
//! Fixtures: `tests/no_asserts/*.stmt`, blur3x3 and conv3x3a16 printed by
//! Halide 21 and 19 with `no_asserts` (and `no_bounds_query`); each says how
//! on its `#` lines.

use misaal_frontends::stmt::*;
use std::path::Path;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/no_asserts").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn opts(types: &[&str]) -> ParseOptions {
    ParseOptions { buffer_types: types.iter().map(|s| buffer_type_arg(s).unwrap()).collect() }
}

fn parse(text: &str, types: &[&str]) -> Result<Module, Diagnostic> {
    parse_module_with("t.stmt", text, &opts(types))
}

/// `(element type, dims)` of buffer argument `name`.
fn buffer_arg(m: &Module, name: &str) -> (Type, u32) {
    let a = m.funcs[0].args.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no argument {name}"));
    match a.kind {
        ArgKind::Buffer { ty, dims } => (ty, dims),
        ArgKind::Scalar { ty } => panic!("{name} is a scalar of {ty}"),
    }
}

/// The text without its `#` lines, as Halide printed it.
fn halide_text(text: &str) -> String {
    text.split_inclusive('\n').filter(|l| !l.starts_with('#')).collect()
}

#[test]
fn bounds_queries_type_a_no_asserts_stmt() {
    let text = fixture("blur3x3_no_asserts.stmt");
    assert!(!halide_text(&text).contains(".type"), "the fixture should have no `.type` check");
    let m = parse(&text, &[]).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(buffer_arg(&m, "input"), (Type::uint(8), 2));
    assert_eq!(buffer_arg(&m, "output"), (Type::uint(8), 2));
    assert_eq!(m.to_string(), halide_text(&text), "prints back byte for byte");
}

#[test]
fn the_context_of_a_load_types_its_buffer() {
    // `(uint16x64)widening_add(input[...], input[...])` makes `input` uint8;
    // the stores make `output` uint8; `.stride.1` gives both 2 dimensions.
    for (file, dialect) in [("blur3x3_no_bounds_query.stmt", Dialect::Halide21), ("blur3x3_halide19_no_bounds_query.stmt", Dialect::Halide19)] {
        let text = fixture(file);
        let m = parse(&text, &[]).unwrap_or_else(|d| panic!("{file}: {d}"));
        assert_eq!(buffer_arg(&m, "input"), (Type::uint(8), 2), "{file}");
        assert_eq!(buffer_arg(&m, "output"), (Type::uint(8), 2), "{file}");
        assert_eq!(m.print_as(dialect), halide_text(&text), "{file} prints back byte for byte");
    }
}

#[test]
fn an_untyped_buffer_is_named_with_its_line() {
    // `input` and `mask` are only read by an int16 widening_mul: uint8 x
    // int8, int8 x uint8 and int8 x int8 all fit.
    let text = fixture("conv3x3a16_no_bounds_query.stmt");
    let d = parse(&text, &[]).expect_err("nothing in the Stmt types `input`");
    // The first load of `input`.
    let line = text.lines().position(|l| l.contains("input[")).unwrap() as u32 + 1;
    assert_eq!(d.span.line, line, "{d}");
    assert!(d.message.starts_with(&format!("unknown buffer `input` at line {line}:")), "{d}");
    assert!(d.message.contains("--buffer-type input=TYPE"), "{d}");
    assert!(d.message.contains(&format!("also without a type: `mask` (line {line})")), "{d}");
    let d = parse(&text, &["input=uint8"]).expect_err("nothing in the Stmt types `mask`");
    assert!(d.message.starts_with(&format!("unknown buffer `mask` at line {line}:")), "{d}");
}

#[test]
fn buffer_type_option_types_the_rest() {
    let text = fixture("conv3x3a16_no_bounds_query.stmt");
    let m = parse(&text, &["input=uint8", "mask=int8"]).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(buffer_arg(&m, "input"), (Type::uint(8), 2));
    assert_eq!(buffer_arg(&m, "mask").0, Type::int(8));
    // The stores give `output` its type.
    assert_eq!(buffer_arg(&m, "output"), (Type::uint(8), 2));
    assert_eq!(m.to_string(), halide_text(&text), "prints back byte for byte");
}

#[test]
fn buffer_type_option_must_agree_with_the_stmt() {
    let d = parse(&fixture("blur3x3_no_asserts.stmt"), &["input=uint16"]).expect_err("the bounds query says uint8");
    assert!(d.message.contains("--buffer-type input=uint16") && d.message.contains("bounds query") && d.message.contains("uint8"), "{d}");
    let d = parse(&fixture("blur3x3_no_bounds_query.stmt"), &["output=int16"]).expect_err("the stores say uint8");
    assert!(d.message.contains("storing uint8x64 to `output` of int16"), "{d}");
    let d = parse(&fixture("blur3x3_no_bounds_query.stmt"), &["input=int8"]).expect_err("widening_add says uint8");
    assert!(d.message.contains("`widening_add` gives int16x64, not uint16x64"), "{d}");
    let d = parse(&fixture("conv3x3a16_no_bounds_query.stmt"), &["input=uint8", "mask=int8", "inptu=uint8"]).expect_err("a misspelt name");
    assert!(d.message.contains("`inptu`"), "{d}");
}

#[test]
fn buffer_type_arguments_are_checked() {
    assert_eq!(buffer_type_arg("input=uint8"), Ok(("input".to_string(), Type::uint(8))));
    assert_eq!(buffer_type_arg(" b = int16 "), Ok(("b".to_string(), Type::int(16))));
    for bad in ["input", "=uint8", "input=uint7", "input=uint8x4", "input=byte"] {
        assert!(buffer_type_arg(bad).is_err(), "{bad}");
    }
}

const HEADER: &str = "module name=t, target=x86-64-linux-no_asserts-no_runtime
external_plus_metadata func t (a, o) {
let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)
let o = (void *)_halide_buffer_get_host((struct halide_buffer_t *)o.buffer)
";

#[test]
fn stores_and_typed_loads_type_buffers_wherever_they_are() {
    // `o` is read before the store that types it: the parse runs again
    // knowing it. `a` is typed by the one load printed with its type.
    let text = format!(
        "{HEADER}let t = o[0]\nlet u = (int16x4)a[ramp(0, 1, 4)]\no[0] = (uint32)7\no[1] = uint32(a[2]) + t\n}}\n\n"
    );
    let m = parse(&text, &[]).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(buffer_arg(&m, "o").0, Type::uint(32));
    assert_eq!(buffer_arg(&m, "a").0, Type::int(16));
    // Operands of one type: `a` is uint16 by the other side of `+`, through
    // a `let`, though the store before its load knows only a placeholder.
    let text = format!("{HEADER}let t = a[0]\no[0] = uint32(t + (uint16)1)\n}}\n");
    let m = parse(&text, &[]).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(buffer_arg(&m, "a").0, Type::uint(16));
    assert_eq!(buffer_arg(&m, "o").0, Type::uint(32));
    // A typed load and a store that disagree.
    let text = format!("{HEADER}o[0] = (uint8)1\no[1] = (int8x2)o[ramp(0, 1, 2)]\n}}\n");
    let d = parse(&text, &[]).expect_err("o is uint8");
    assert!(d.message.contains("`o` holds uint8, not int8"), "{d}");
}

