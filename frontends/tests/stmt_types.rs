//! Type inference, statement structure, printing and robustness of the Stmt
//! parser on small hand-written inputs.

use misaal_frontends::stmt::*;

/// Buffers `a` (uint8, 2-D), `b` (int16), `o` (int32) and scalars `n`
/// (int32), `k` (uint16), as Halide's prologue declares them.
const PRELUDE: &str = "\
let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)
let a.type = (uint32)_halide_buffer_get_type((struct halide_buffer_t *)a.buffer)
assert(a.type == (uint32)67585, halide_error_bad_type(\"a\", a.type, (uint32)67585))
assert(_halide_buffer_get_dimensions((struct halide_buffer_t *)a.buffer) == 2, 0)
let b.type = (uint32)_halide_buffer_get_type((struct halide_buffer_t *)b.buffer)
assert(b.type == (uint32)69632, halide_error_bad_type(\"b\", b.type, (uint32)69632))
let o.type = (uint32)_halide_buffer_get_type((struct halide_buffer_t *)o.buffer)
assert(o.type == (uint32)73728, halide_error_bad_type(\"o\", o.type, (uint32)73728))
let a.dimensions = 2
assert(a.dimensions == 2, 0)
";

fn module(body: &str) -> Result<Module, Diagnostic> {
    let text = format!("module name=t, target=x86-64-linux-avx512\nexternal_plus_metadata func t (a, b, o, n, k) {{\n{PRELUDE}{body}\n}}\n");
    parse_module("t.stmt", &text)
}

fn parse_ok(body: &str) -> Module {
    module(body).unwrap_or_else(|d| panic!("{d}"))
}

fn error(body: &str) -> String {
    match module(body) {
        Ok(_) => panic!("parsed: {body}"),
        Err(d) => d.message,
    }
}

/// The value of the first `let probe = ...`.
fn probe(m: &Module) -> Expr {
    let mut found = None;
    m.funcs[0].body.visit(&mut |s| {
        if let Stmt::Let { name, value, .. } = s
            && name == "probe"
            && found.is_none()
        {
            found = Some(value.clone());
        }
    });
    found.expect("no `let probe`")
}

fn ty(expr: &str) -> String {
    let m = parse_ok(&format!("let probe = {expr}"));
    probe(&m).ty.to_string()
}

#[test]
fn literals() {
    assert_eq!(ty("3"), "int32");
    assert_eq!(ty("-3"), "int32");
    assert_eq!(ty("(uint16)3"), "uint16");
    assert_eq!(ty("(int16)-3"), "int16");
    assert_eq!(ty("(uint64)18446744073709551615"), "uint64");
    assert_eq!(ty("(int64)-9223372036854775808"), "int64");
    assert_eq!(ty("(uint1)1"), "uint1");
    assert_eq!(ty("0.500000f"), "float32");
    assert_eq!(ty("0.500000h"), "float16");
    assert_eq!(ty("1.250000"), "float64");
    assert_eq!(ty("\"text\""), "(const char *)");
    assert!(error("let probe = (uint8)256").starts_with("literal 256 does not fit uint8"));
}

#[test]
fn casts_broadcasts_ramps() {
    assert_eq!(ty("uint16x64(x64((uint8)3))"), "uint16x64");
    assert_eq!(ty("(uint16x8)(x8((uint8)3))"), "uint16x8");
    assert_eq!(ty("int64(n)"), "int64");
    assert_eq!(ty("x16((uint8)3)"), "uint8x16");
    assert_eq!(ty("x4(ramp(0, 1, 4))"), "int32x16");
    assert_eq!(ty("ramp(n, 2, 8)"), "int32x8");
    assert_eq!(ty("ramp(x4(n), x4(1), 3)"), "int32x12");
    assert_eq!(ty("reinterpret<uint64>((struct halide_buffer_t *)a.buffer)"), "uint64");
    assert_eq!(ty("reinterpret<(void *)>((uint64)0)"), "(void *)");
    assert_eq!(ty("reinterpret<int16x4>((uint64)0)"), "int16x4");
    assert_eq!(ty("(uint8_t *)(reinterpret<(void *)>((uint64)0))"), "(uint8_t *)");
    assert!(error("let probe = uint16x8(ramp(0, 1, 4))").starts_with("lane mismatch"));
    assert!(error("let probe = reinterpret<uint8>(n)").starts_with("type mismatch: reinterpret"));
}

#[test]
fn loads_take_the_buffer_element_type_and_index_lanes() {
    assert_eq!(ty("a[n]"), "uint8");
    assert_eq!(ty("a[ramp(n, 1, 32)]"), "uint8x32");
    assert_eq!(ty("b[ramp(n, 2, 8) aligned(8, 0)]"), "int16x8");
    assert_eq!(ty("(int16x8)b[ramp(n, 2, 8)]"), "int16x8");
    assert_eq!(ty("a[ramp(0, 1, 4)] if (ramp(0, 1, 4) < x4(n))"), "uint8x4");
    let m = parse_ok("allocate t[uint16 * 128 * 34]\nlet probe = t[ramp(0, 1, 64)]\nfree t");
    assert_eq!(probe(&m).ty.to_string(), "uint16x64");
    assert!(error("let probe = (int8x4)a[ramp(0, 1, 4)]").starts_with("type mismatch: `a` holds uint8"));
    assert!(error("let probe = a[(int64)0]").starts_with("type mismatch: index is int64"));
}

#[test]
fn scalar_args_and_lets() {
    assert_eq!(ty("n"), "int32");
    assert_eq!(ty("(uint16)k"), "uint16");
    assert_eq!(ty("(uint1)_halide_buffer_is_bounds_query((struct halide_buffer_t *)a.buffer)"), "uint1");
    let m = parse_ok("let t = (uint16)k*(uint16)3\nlet probe = t + t");
    assert_eq!(probe(&m).ty.to_string(), "uint16");
    assert_eq!(ty("let t = x8((uint8)1) in t + t"), "uint8x8");
    assert!(error("let probe = (uint16)k + k").starts_with("type mismatch: `k` is int32 here but uint16"));
    let args = &parse_ok("let probe = (uint16)k + (uint16)1").funcs[0].args;
    let kinds: Vec<String> = args.iter().map(|a| format!("{} {:?}", a.name, a.kind)).collect();
    assert_eq!(
        kinds,
        [
            "a Buffer { ty: Type { code: UInt, bits: 8, lanes: 1 }, dims: 2 }",
            "b Buffer { ty: Type { code: Int, bits: 16, lanes: 1 }, dims: 0 }",
            "o Buffer { ty: Type { code: Int, bits: 32, lanes: 1 }, dims: 0 }",
            "n Scalar { ty: Type { code: Int, bits: 32, lanes: 1 } }",
            "k Scalar { ty: Type { code: UInt, bits: 16, lanes: 1 } }",
        ]
    );
}

#[test]
fn operators() {
    assert_eq!(ty("n + 1"), "int32");
    assert_eq!(ty("a[n] < a[n + 1]"), "uint1");
    assert_eq!(ty("(a[ramp(0, 1, 8)] == x8((uint8)0)) && x8(0 < n)"), "uint1x8");
    assert_eq!(ty("!(0 < n)"), "uint1");
    assert_eq!(ty("min(b[n], (int16)3) % max(b[n], (int16)1)"), "int16");
    assert_eq!(ty("select(0 < n, a[ramp(0, 1, 4)], x4((uint8)1))"), "uint8x4");
    assert_eq!(ty("select(ramp(0, 1, 4) < x4(n), a[ramp(0, 1, 4)], x4((uint8)1))"), "uint8x4");
    assert!(error("let probe = (0 < n) + (0 < n)").starts_with("type mismatch: `+` of uint1"));
    assert!(error("let probe = n && n").starts_with("type mismatch: `&&` needs bools"));
    assert!(error("let probe = !n").starts_with("type mismatch: `!` of int32"));
    assert!(error("let probe = select(ramp(0, 1, 4) < x4(n), x8(n), x8(n))").starts_with("lane mismatch"));
}

#[test]
fn bare_int_literals_take_the_other_operand_type() {
    let m = parse_ok("let probe = a[n] + 3");
    let e = probe(&m);
    assert_eq!(e.ty.to_string(), "uint8");
    // Standalone, a load prints its type, as Halide's `operator<<` does.
    assert_eq!(e.to_string(), "(uint8)a[n] + (uint8)3");
    let m = parse_ok("let probe = 2*a[ramp(0, 1, 16)]");
    assert_eq!(probe(&m).to_string(), "x16((uint8)2)*(uint8x16)a[ramp(0, 1, 16)]");
    assert_eq!(ty("min(b[n], 7)"), "int16");
    assert_eq!(ty("0.500000f*2"), "float32");
    assert!(error("let probe = a[n] + 300").starts_with("literal 300 does not fit uint8"));
    // Only bare literals adapt; an int32 expression does not.
    assert!(error("let probe = a[n] + n").starts_with("type mismatch: `+` of uint8 and int32"));
    // A store of a bare literal takes the buffer's type.
    let m = parse_ok("a[ramp(0, 1, 4)] = 7");
    let mut value = None;
    m.funcs[0].body.visit(&mut |s| {
        if let Stmt::Store { value: v, .. } = s {
            value = Some(v.clone());
        }
    });
    assert_eq!(value.unwrap().to_string(), "x4((uint8)7)");
}

#[test]
fn fpir_result_types() {
    let u8x16 = "a[ramp(0, 1, 16)]";
    let i16x16 = "b[ramp(0, 1, 16)]";
    let i8x16 = "int8x16(a[ramp(0, 1, 16)])";
    let cases = [
        (format!("widening_add({u8x16}, {u8x16})"), "uint16x16"),
        (format!("widening_sub({u8x16}, {u8x16})"), "int16x16"),
        (format!("widening_mul({u8x16}, {u8x16})"), "uint16x16"),
        (format!("widening_mul({u8x16}, {i8x16})"), "int16x16"),
        (format!("widening_mul({i16x16}, {i16x16})"), "int32x16"),
        (format!("widening_shift_left({u8x16}, x16((uint8)2))"), "uint16x16"),
        (format!("widening_shift_right({i8x16}, x16((int8)1))"), "int16x16"),
        (format!("widen_right_add({i16x16}, {i8x16})"), "int16x16"),
        (format!("widen_right_sub({i16x16}, {i8x16})"), "int16x16"),
        (format!("widen_right_mul({i16x16}, {i8x16})"), "int16x16"),
        (format!("shift_left({i16x16}, x16((uint16)3))"), "int16x16"),
        (format!("shift_right({u8x16}, x16((uint8)1))"), "uint8x16"),
        (format!("rounding_shift_right({i16x16}, x16((uint16)3))"), "int16x16"),
        (format!("rounding_shift_left({i16x16}, x16((int16)3))"), "int16x16"),
        (format!("saturating_add({u8x16}, {u8x16})"), "uint8x16"),
        (format!("saturating_sub({i16x16}, {i16x16})"), "int16x16"),
        (format!("halving_add({u8x16}, {u8x16})"), "uint8x16"),
        (format!("halving_sub({i16x16}, {i16x16})"), "int16x16"),
        (format!("rounding_halving_add({u8x16}, {u8x16})"), "uint8x16"),
        (format!("mul_shift_right({i16x16}, {i16x16}, x16((uint16)15))"), "int16x16"),
        (format!("rounding_mul_shift_right({i16x16}, {i16x16}, x16((uint16)15))"), "int16x16"),
        (format!("absd({i16x16}, {i16x16})"), "uint16x16"),
        (format!("absd({u8x16}, {u8x16})"), "uint8x16"),
        (format!("abs({i16x16})"), "uint16x16"),
        ("abs(int64(n))".to_string(), "uint64"),
        (format!("(uint8x16)saturating_cast({i16x16})"), "uint8x16"),
        ("saturating_cast((int64)5)".to_string(), "int32"),
        (format!("bitwise_and({u8x16}, {u8x16})"), "uint8x16"),
        (format!("bitwise_xor({u8x16}, {u8x16})"), "uint8x16"),
        (format!("bitwise_not({i16x16})"), "int16x16"),
        ("bitwise_not(0 < n)".to_string(), "uint1"),
        (format!("count_leading_zeros({u8x16})"), "uint8x16"),
        (format!("popcount({i16x16})"), "int16x16"),
        ("likely(n)".to_string(), "int32"),
        (format!("if_then_else(0 < n, {u8x16}, {u8x16})"), "uint8x16"),
        (format!("(int16x8)dynamic_shuffle({i16x16}, ramp(0, 2, 8), 0, 15)"), "int16x8"),
        ("(void *)make_struct(n, n)".to_string(), "(void *)"),
        ("make_struct(n)".to_string(), "(void *)"),
        ("(uint1)load_typed_struct_member((void *)make_struct(n), (void *)make_struct(n), 0)".to_string(), "uint1"),
    ];
    for (e, want) in cases {
        assert_eq!(ty(&e), want, "{e}");
        // The printed form carries the type, and reads back the same.
        let m = parse_ok(&format!("let probe = {e}"));
        let printed = probe(&m).to_string();
        assert_eq!(ty(&printed), want, "{printed}");
    }
    let bad = [
        ("widening_add(a[n], b[n])", "type mismatch: `widening_add` of uint8 and int16"),
        ("widening_add(int64(n), int64(n))", "`widening_add` of int64: there is no type twice as wide"),
        ("widen_right_add(b[n], b[n])", "type mismatch: `widen_right_add` needs its first operand twice"),
        ("mul_shift_right(b[n], b[n], (int16)15)", "type mismatch: `mul_shift_right` shift is int16"),
        ("(int16)widening_add(a[n], a[n])", "type mismatch: `widening_add` gives uint16, not int16"),
        ("(uint8x8)saturating_cast(b[n])", "lane mismatch: `saturating_cast`"),
        ("absd(a[n])", "`absd` takes 2 arguments, not 1"),
        ("frobnicate(n)", "unknown intrinsic `frobnicate`"),
    ];
    for (e, want) in bad {
        let msg = error(&format!("let probe = {e}"));
        assert!(msg.starts_with(want), "{e}: {msg}");
    }
}

#[test]
fn runtime_calls() {
    let buf = "(struct halide_buffer_t *)a.buffer";
    assert_eq!(ty(&format!("(void *)_halide_buffer_get_host({buf})")), "(void *)");
    assert_eq!(ty(&format!("_halide_buffer_get_host({buf})")), "(void *)");
    assert_eq!(ty(&format!("_halide_buffer_get_type({buf})")), "uint32");
    assert_eq!(ty(&format!("_halide_buffer_get_device_dirty({buf})")), "uint1");
    assert_eq!(ty(&format!("_halide_buffer_get_min({buf}, 0)")), "int32");
    assert_eq!(ty(&format!("_halide_buffer_get_shape({buf})")), "(struct halide_dimension_t *)");
    assert_eq!(ty(&format!("_halide_buffer_get_device({buf})")), "uint64");
    assert_eq!(ty("halide_error_bad_type(\"a\", a.type, (uint32)1)"), "int32");
    assert_eq!(ty("(float32)sqrt_f32(0.500000f)"), "float32");
    assert!(error(&format!("let probe = (int32)_halide_buffer_get_type({buf})")).starts_with("type mismatch"));
}

#[test]
fn shuffles_and_reductions() {
    let v = "a[ramp(0, 1, 16)]";
    let m = parse_ok(&format!("let probe = slice_vectors({v}, 1, 2, 8)"));
    let e = probe(&m);
    assert_eq!(e.ty.to_string(), "uint8x8");
    let ExprKind::Shuffle { indices, .. } = &e.kind else { panic!() };
    assert_eq!(indices, &[1, 3, 5, 7, 9, 11, 13, 15]);
    let m = parse_ok(&format!("let probe = interleave_vectors({v}, {v})"));
    let e = probe(&m);
    assert_eq!(e.ty.to_string(), "uint8x32");
    let ExprKind::Shuffle { indices, .. } = &e.kind else { panic!() };
    assert_eq!(&indices[..4], &[0, 16, 1, 17]);
    assert_eq!(ty(&format!("concat_vectors({v}, a[ramp(16, 1, 8)])")), "uint8x24");
    assert_eq!(ty(&format!("extract_element({v}, 3)")), "uint8");
    assert_eq!(ty(&format!("shuffle({v}, 3, 2, 1, 0)")), "uint8x4");
    assert!(error(&format!("let probe = shuffle({v}, 16)")).starts_with("shuffle index 16 out of range"));
    assert!(error(&format!("let probe = concat_vectors({v}, b[n])")).starts_with("type mismatch: shuffle"));

    let w = "int32x64(a[ramp(0, 1, 64)])";
    assert_eq!(ty(&format!("(int32x16)vector_reduce_add({w})")), "int32x16");
    assert_eq!(ty(&format!("(int32)vector_reduce_add({w})")), "int32");
    assert_eq!(ty("vector_reduce_max(a[ramp(0, 1, 32)])"), "uint8");
    assert_eq!(ty("(uint1)vector_reduce_and(x16(0 < n))"), "uint1");
    assert!(error(&format!("let probe = (int32x48)vector_reduce_add({w})")).starts_with("lane mismatch"));
    assert!(error(&format!("let probe = (int16)vector_reduce_add({w})")).starts_with("type mismatch"));
    assert!(error("let probe = vector_reduce_or(a[ramp(0, 1, 4)])").starts_with("type mismatch"));
}

#[test]
fn statement_structure() {
    let m = parse_ok(
        "\
allocate t[int16 * 16] in Stack
for (x, 0, n) {
 let y = x*2
 predicate (ramp(0, 1, 4) < x4(n))
  t[ramp(y, 1, 4) aligned(4, 0)] = x4((int16)1)
 t[y] = (int16)2
}
if (n == 0) {
 o[0] = 0
} else if (n == 1) {
 o[0] = 1
} else {
 produce o {
  vectorized (v, 0, 4) {
   o[v] = int32(t[v])
  }
 }
}
free t",
    );
    let body = &m.funcs[0].body;
    // Find the allocation: its body holds the rest of the block.
    let mut alloc = None;
    body.visit(&mut |s| {
        if let Stmt::Allocate { .. } = s {
            alloc = Some(s.clone());
        }
    });
    let Some(Stmt::Allocate { name, ty, extents, memory, condition, body }) = alloc else { panic!() };
    assert_eq!((name.as_str(), ty.to_string(), extents.len(), memory, condition), ("t", "int16".to_string(), 1, MemoryType::Stack, None));
    let Stmt::Block(rest) = *body else { panic!("{body:?}") };
    assert_eq!(rest.len(), 3);
    let Stmt::For { kind, body: loop_body, .. } = &rest[0] else { panic!() };
    assert_eq!(*kind, ForKind::Serial);
    // `let y` scopes over both stores.
    let Stmt::Let { name, body: let_body, .. } = &**loop_body else { panic!() };
    assert_eq!(name, "y");
    let Stmt::Block(stores) = &**let_body else { panic!() };
    let Stmt::Store { predicate: Some(p), alignment: Some(al), .. } = &stores[0] else { panic!() };
    assert_eq!((p.ty.to_string(), al.modulus, al.remainder), ("uint1x4".to_string(), 4, 0));
    let Stmt::IfThenElse { else_case: Some(e), .. } = &rest[1] else { panic!() };
    let Stmt::IfThenElse { else_case: Some(e2), .. } = &**e else { panic!() };
    assert!(matches!(&**e2, Stmt::ProducerConsumer { is_producer: true, .. }));
    assert!(matches!(rest[2], Stmt::Free { .. }));
}

#[test]
fn lets_and_loops_scope_their_names() {
    assert!(error("for (x, 0, n) {\n}\nlet probe = x").starts_with("undefined variable `x`"));
    assert!(error("let probe = (let t = n in t) + t").starts_with("undefined variable `t`"));
    // A name bound again shadows, then the outer binding returns.
    let m = parse_ok("let t = (uint8)1\nfor (i, 0, 2) {\n let t = (int16)2\n}\nlet probe = t");
    assert_eq!(probe(&m).ty.to_string(), "uint8");
}

#[test]
fn printing_round_trips() {
    let body = "\
let t = select(0 < n, a[n], (uint8)1) + uint8((uint16)widening_mul(a[n], a[n + 1]))
o[ramp(0, 1, 8)] = int32x8(concat_vectors(a[ramp(0, 1, 4)], x4(t)))
o[0] = let u = n*n in ((u + 1)/u) % 3
o[1] = (n + 1)*((n - 2) - (n - 3))";
    let m = parse_ok(body);
    let printed = m.to_string();
    assert!(printed.contains("o[0] = \n  let u = n*n in\n  ((u + 1)/u) % 3\n\n"), "{printed}");
    assert!(printed.contains("o[1] = (n + 1)*((n - 2) - (n - 3))"), "{printed}");
    assert_eq!(parse_module("printed", &printed).unwrap(), m);
}

#[test]
fn float_literals_print_exactly() {
    for lit in ["0.100000f", "0.000000001f", "123456.789000", "0.000001", "3.141592653589793", "-2.500000h", "-inff", "infh", "70000.000000h"] {
        let m = parse_ok(&format!("let probe = {lit}"));
        let printed = probe(&m).to_string();
        let again = parse_ok(&format!("let probe = {printed}"));
        assert_eq!(probe(&again), probe(&m), "{lit} printed as {printed}");
    }
    // Halide prints six decimals; the literal is the nearest value of its width.
    let value = |lit: &str| match probe(&parse_ok(&format!("let probe = {lit}"))).kind {
        ExprKind::Float(v) => v,
        k => panic!("{k:?}"),
    };
    assert_eq!(value("0.099976h"), 0.0999755859375);
    assert_eq!(value("0.100000f"), 0.1f32 as f64);
    assert_eq!(value("70000.000000h"), f64::INFINITY);
    assert_eq!(value("0.000000059604645h"), 2f64.powi(-24));
    assert!(value("nanf").is_nan());
}

#[test]
fn comments_and_module_header() {
    let m = parse_module("c.stmt", "# a comment\nmodule name=m, target=arm-64-linux\nbuffer lut = {...}\n\ninternal func f () {\n}\n").unwrap();
    assert_eq!((m.name.as_str(), m.target.as_str(), m.buffers.as_slice()), ("m", "arm-64-linux", &["lut".to_string()][..]));
    assert_eq!(m.funcs[0].linkage, Linkage::Internal);
    assert_eq!(m.funcs[0].body, Stmt::Block(vec![]));
    let m = parse_module("c.stmt", "module name=m, target=t\nfunc f (x) {\nlet y = x\n}\n").unwrap();
    assert_eq!(m.funcs[0].linkage, Linkage::External);
}

/// Deep nesting stays within the default 2 MiB test-thread stack, and
/// deeper input is an error, not an overflow.
#[test]
fn deep_nesting_is_bounded() {
    let depth = 190;
    let shapes = [
        ("(".repeat(depth) + "n" + &")".repeat(depth), true),
        ("min(".repeat(depth) + "n" + &", 1)".repeat(depth), true),
        ("!".repeat(depth) + "(0 < n)", true),
        ("let v = 1 in ".repeat(depth) + "n", true),
        ("(".repeat(100_000), false),
        ("!".repeat(100_000) + "(0 < n)", false),
    ];
    for (e, ok) in shapes {
        let r = module(&format!("let probe = {e}"));
        assert_eq!(r.is_ok(), ok, "{}...: {:?}", &e[..20], r.err());
    }
    let loops = |n: usize| (0..n).map(|i| format!("for (x{i}, 0, 2) {{\n")).collect::<String>() + &"}\n".repeat(n);
    parse_ok(&loops(100));
    assert!(error(&loops(1000)).starts_with("nested more than"));
}

/// Damaged input gives an error or a module, never a panic.
#[test]
fn damaged_input_never_panics() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/stmt/samples/blur.stmt");
    let text = std::fs::read_to_string(path).unwrap();
    let bytes = text.as_bytes();
    // Every truncation point on a coarse grid.
    for cut in (0..bytes.len()).step_by(37) {
        let _ = parse_module("cut", &String::from_utf8_lossy(&bytes[..cut]));
    }
    // Single-byte deletions and replacements at pseudo-random places.
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let replacements = b"()[]{},=+-*/%<>!&|\"# \n0x.:$";
    for _ in 0..1500 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = (seed % bytes.len() as u64) as usize;
        let mut v = bytes.to_vec();
        if seed & 1 == 0 {
            v.remove(at);
        } else {
            v[at] = replacements[(seed >> 8) as usize % replacements.len()];
        }
        let _ = parse_module("mutated", &String::from_utf8_lossy(&v));
    }
}
