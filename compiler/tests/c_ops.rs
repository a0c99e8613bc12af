//! Every Halide op the C backend defines, on every integer element type,
//! vector and scalar, against the reference interpreter (the semantics in
//! `frontends/halide/*.sema`), bit for bit, on random data rich in edge
//! values (0, ±1, MIN, MAX, shift amounts around the width).

use crate::common::*;
use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::ast::Stmt;
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;

/// Elements per buffer; vectors have `LANES` lanes.
const N: usize = 256;
const LANES: usize = 16;

fn tname(signed: bool, bits: u8) -> String {
    format!("{}int{bits}", if signed { "" } else { "u" })
}

fn type_code(t: Type) -> u32 {
    let code = if t.is_int() { 0 } else { 1 };
    code | (t.bits as u32) << 8 | 1 << 16
}

/// Op templates over A, B (type T), C (T with the other signedness), Q
/// (unsigned T) and W (T at twice the width, T's signedness).
fn templates(signed: bool, bits: u8) -> (Vec<String>, Vec<String>) {
    let t = tname(signed, bits);
    let mut both: Vec<String> = [
        "A + B", "A - B", "A * B", "A / B", "A % B", "min(A, B)", "max(A, B)",
        "uint8{L}(A < B)", "uint8{L}(A <= B)", "uint8{L}(A == B)", "uint8{L}(A != B)", "uint8{L}(A > B)", "uint8{L}(A >= B)",
        "select(A < B, A - B, B * A)", "uint8{L}(!(A < B) && (B != A))", "uint8{L}((A < B) || (A == B))",
        "shift_left(A, B)", "shift_right(A, B)", "shift_left(A, C)", "shift_right(A, C)",
        "rounding_shift_left(A, B)", "rounding_shift_right(A, B)", "rounding_shift_left(A, C)", "rounding_shift_right(A, C)",
        "saturating_add(A, B)", "saturating_sub(A, B)", "halving_add(A, B)", "halving_sub(A, B)", "rounding_halving_add(A, B)",
        "absd(A, B)", "abs(A)", "bitwise_and(A, B)", "bitwise_or(A, B)", "bitwise_xor(A, B)", "bitwise_not(A)",
        "uint8{L}(bitwise_not(A < B))",
        "mul_shift_right(A, B, Q)", "rounding_mul_shift_right(A, B, Q)",
        "uint8{L}(uint1{L}(A))",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if bits <= 32 {
        for s in [
            "widening_add(A, B)", "widening_sub(A, B)", "widening_mul(A, B)", "widening_mul(A, C)", "widening_mul(C, A)",
            "widening_shift_left(A, B)", "widening_shift_right(A, B)", "widening_shift_left(A, C)", "widening_shift_right(A, C)",
            "widen_right_add(W, A)", "widen_right_sub(W, A)", "widen_right_mul(W, A)",
        ] {
            both.push(s.to_string());
        }
    }
    for s2 in [true, false] {
        for b2 in [8u8, 16, 32, 64] {
            let t2 = tname(s2, b2);
            both.push(format!("{t2}{{L}}(A)"));
            both.push(format!("({t2}{{L}})saturating_cast(A)"));
        }
    }
    both.push(format!("reinterpret<{}{{L}}>(A)", tname(!signed, bits)));
    // Constant divisors: a positive power of two takes the helpers' shift
    // and mask path (`__builtin_constant_p` after inlining), the others
    // the general one.
    let divisors: &[i64] = if signed { &[1, 2, 16, 64, 7, -16] } else { &[1, 2, 16, 64, 7] };
    for d in divisors {
        both.push(format!("A / {{X}}(({t}){d})"));
        both.push(format!("A % {{X}}(({t}){d})"));
    }
    // Vector only: reductions, shuffles, ramps, broadcasts.
    let mut vector = Vec::new();
    for op in ["add", "saturating_add", "mul", "min", "max"] {
        vector.push(format!("({t}x4)vector_reduce_{op}(A)"));
        vector.push(format!("({t})vector_reduce_{op}(A)"));
    }
    vector.push("uint8x4((uint1x4)vector_reduce_and(A < B))".into());
    vector.push("uint8x8((uint1x8)vector_reduce_or(A < B))".into());
    vector.push("slice_vectors(A, 1, 2, 8)".into());
    vector.push("slice_vectors(concat_vectors(A, B), 3, 3, 10)".into());
    vector.push("interleave_vectors(A, B)".into());
    vector.push("concat_vectors(A, B, A - B)".into());
    vector.push("A * ramp(SA, SB, 16)".into());
    vector.push("A + x16(SB)".into());
    vector.push("extract_element(A, 5) + SB".into());
    vector.push("let k = A + B in k * k - A".into());
    (both, vector)
}

fn expand(tpl: &str, vector: bool, lanes: &str) -> String {
    let ld = |b: &str| if vector { format!("{b}[ramp(x*16, 1, 16)]") } else { format!("{b}[x]") };
    tpl.replace("{L}", lanes)
        .replace("{X}", if vector { "x16" } else { "" })
        .replace("SA", "a[x*16]")
        .replace("SB", "b[x*16 + 1]")
        .replace('A', &ld("a"))
        .replace('B', &ld("b"))
        .replace('C', &ld("c"))
        .replace('Q', &ld("q"))
        .replace('W', &ld("w"))
}

/// Deterministic values rich in edge cases for an E-bit lane.
fn values(seed: u64, signed: bool, bits: u8, small_unsigned: bool) -> Vec<u8> {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s >> 11
    };
    let e = bits as i128;
    let (min, max) = if signed { (-(1i128 << (e - 1)), (1i128 << (e - 1)) - 1) } else { (0, (1i128 << e) - 1) };
    let edges = [0, 1, -1, min, max, min + 1, max - 1, 2, e, e - 1, e + 1, 2 * e, 2 * e - 1, -e];
    let mut out = Vec::new();
    for _ in 0..N {
        let r = next();
        let v: i128 = match r % 8 {
            0 | 1 => edges[(next() % edges.len() as u64) as usize],
            2 | 3 => {
                let k = (next() % (4 * e as u64 + 5)) as i128 - 2 * e - 2;
                if small_unsigned { k.abs() } else { k }
            }
            _ => next() as i128 | ((next() as i128) << 53),
        };
        let bytes = (v as u128).to_le_bytes();
        out.extend_from_slice(&bytes[..bits as usize / 8]);
    }
    out
}

fn buffer_decls(names: &[(String, Type)]) -> String {
    let mut s = String::new();
    for (n, t) in names {
        s.push_str(&format!("let {n} = (void *)_halide_buffer_get_host((struct halide_buffer_t *){n}.buffer)\n"));
        s.push_str(&format!("let {n}.type = (uint32)_halide_buffer_get_type((struct halide_buffer_t *){n}.buffer)\n"));
        s.push_str(&format!("assert({n}.type == (uint32){}, halide_error_bad_type(\"{n}\", {n}.type, (uint32){}))\n", type_code(*t), type_code(*t)));
    }
    s
}

/// The type of each `let eK = ...` of a parsed probe, in order.
fn let_types(s: &Stmt, out: &mut Vec<Type>) {
    s.visit(&mut |st| {
        if let Stmt::Let { name, value, .. } = st
            && name.starts_with('e')
            && name[1..].chars().all(|c| c.is_ascii_digit())
        {
            out.push(value.ty);
        }
    });
}

fn check_type(signed: bool, bits: u8) -> Vec<String> {
    let t = tname(signed, bits);
    let (both, vector_only) = templates(signed, bits);
    let elem = |s: bool, b: u8| if s { Type::int(b) } else { Type::uint(b) };
    let mut inputs = vec![
        ("a".to_string(), elem(signed, bits)),
        ("b".to_string(), elem(signed, bits)),
        ("c".to_string(), elem(!signed, bits)),
        ("q".to_string(), elem(false, bits)),
    ];
    if bits <= 32 {
        inputs.push(("w".to_string(), elem(signed, bits * 2)));
    }
    // The cases: (template, vector?).
    let cases: Vec<(String, bool)> = both.iter().map(|s| (s.clone(), true)).chain(vector_only.iter().map(|s| (s.clone(), true))).chain(both.iter().map(|s| (s.clone(), false))).collect();
    let expr_of = |tpl: &str, vector: bool| expand(tpl, vector, if vector { "x16" } else { "" });

    // Probe: type every case.
    let header = |outs: &[(String, Type)]| {
        let names: Vec<&str> = inputs.iter().map(|(n, _)| n.as_str()).chain(outs.iter().map(|(n, _)| n.as_str())).collect();
        format!("module name=ops_{t}, target=x86-64-linux-avx512-no_runtime\nexternal func ops_{t} ({}) {{\n{}", names.join(", "), buffer_decls(&inputs))
    };
    let mut probe = header(&[]);
    for (k, (tpl, vector)) in cases.iter().enumerate() {
        let loop_n = if *vector { N / LANES } else { N };
        probe.push_str(&format!("for (x, 0, {loop_n}) {{\n let e{k} = {}\n}}\n", expr_of(tpl, *vector)));
    }
    probe.push_str("}\n");
    let pm = match parse_module("probe", &probe) {
        Ok(m) => m,
        Err(d) => return vec![format!("{t}: probe does not parse: {d}\n{probe}")],
    };
    let mut types = Vec::new();
    let_types(&pm.funcs[0].body, &mut types);
    assert_eq!(types.len(), cases.len());

    // The real module: each case stores into its own output buffer.
    let outs: Vec<(String, Type)> = types.iter().enumerate().map(|(k, ty)| (format!("o{k}"), ty.element())).collect();
    let mut text = header(&outs);
    text.push_str(&buffer_decls(&outs));
    for (k, ((tpl, vector), ty)) in cases.iter().zip(&types).enumerate() {
        let loop_n = if *vector { N / LANES } else { N };
        let l = ty.lanes;
        let idx = if l == 1 { "x".to_string() } else { format!("ramp(x*{l}, 1, {l})") };
        text.push_str(&format!("for (x, 0, {loop_n}) {{\n o{k}[{idx}] = {}\n}}\n", expr_of(tpl, *vector)));
    }
    text.push_str("}\n");
    let m = match parse_module("ops", &text) {
        Ok(m) => m,
        Err(d) => return vec![format!("{t}: does not parse: {d}")],
    };

    // Inputs and the interpreter's answer.
    let mut args = Vec::new();
    let mut iargs = Vec::new();
    for (i, (n, ty)) in inputs.iter().enumerate() {
        let data = values(0x5eed + i as u64 * 977 + bits as u64, ty.is_int(), ty.bits, n == "q");
        iargs.push(ArgValue::Buffer(Buffer { elem: *ty, dims: vec![(0, N as i64, 1)], data: data.clone() }));
        args.push(Arg::Buffer { elem: *ty, dims: vec![(0, N as i64)], data });
    }
    for (((_, ty), (_, vector)), full) in outs.iter().zip(&cases).zip(&types) {
        let per = full.lanes as usize;
        let count = if *vector { N / LANES * per } else { N };
        let bytes = count * elem_bytes(*ty);
        iargs.push(ArgValue::Buffer(Buffer { elem: *ty, dims: vec![(0, count as i64, 1)], data: vec![0; bytes] }));
        args.push(Arg::Buffer { elem: *ty, dims: vec![(0, count as i64)], data: vec![0; bytes] });
    }
    let ops = misaal_frontends::halide_ops().unwrap();
    let want = Interp::new(&ops).run(&m.funcs[0], iargs).unwrap_or_else(|e| panic!("{t}: interpreter: {e}"));
    let got = match run(&format!("ops_{t}"), &m, &args) {
        Ok(g) => g,
        Err(e) => return vec![format!("{t}: {e}")],
    };
    let mut failures = Vec::new();
    for (k, (w, g)) in want.iter().zip(&got).enumerate() {
        if w.data != *g {
            let name = if k < inputs.len() { format!("input {}", inputs[k].0) } else {
                let (tpl, vector) = &cases[k - inputs.len()];
                format!("{}`{}`", if *vector { "vector " } else { "scalar " }, expr_of(tpl, *vector))
            };
            let eb = elem_bytes(if k < inputs.len() { inputs[k].1 } else { outs[k - inputs.len()].1 });
            let first = w.data.iter().zip(g).position(|(a, b)| a != b).unwrap_or(0) / eb;
            let show = |d: &[u8]| -> String { d[first * eb..(first + 1) * eb].iter().rev().map(|b| format!("{b:02x}")).collect() };
            let inp = |n: usize| -> String {
                let (_, ity) = &inputs[n];
                let ib = elem_bytes(*ity);
                let Arg::Buffer { data, .. } = &args[n] else { unreachable!() };
                data.get(first * ib..(first + 1) * ib).map(|d| d.iter().rev().map(|b| format!("{b:02x}")).collect()).unwrap_or_default()
            };
            failures.push(format!("{t} {name}: element {first}: C 0x{}, interpreter 0x{} (a=0x{} b=0x{} c=0x{} q=0x{})", show(g), show(&w.data), inp(0), inp(1), inp(2), inp(3)));
        }
    }
    failures
}

#[test]
fn every_op_matches_the_interpreter_on_every_integer_type() {
    halide_include();
    check_cc();
    let types: Vec<(bool, u8)> = [true, false].into_iter().flat_map(|s| [8u8, 16, 32, 64].map(|b| (s, b))).collect();
    let failures: Vec<String> = par_map(&types, |(s, b)| check_type(*s, *b)).into_iter().flatten().collect();
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

/// `count_leading_zeros`, `count_trailing_zeros`, `popcount` (which the
/// interpreter does not define) against Rust's.
#[test]
fn bit_counts_match_rust() {
    halide_include();
    check_cc();
    for (signed, bits) in [true, false].into_iter().flat_map(|s| [8u8, 16, 32, 64].map(|b| (s, b))) {
        let t = tname(signed, bits);
        let ty = if signed { Type::int(bits) } else { Type::uint(bits) };
        let outs: Vec<(String, Type)> = ["o0", "o1", "o2", "o3"].iter().map(|n| (n.to_string(), ty)).collect();
        let ins = vec![("a".to_string(), ty)];
        let text = format!(
            "module name=bits, target=x86-64-linux-avx512-no_runtime\nexternal func bits (a, o0, o1, o2, o3) {{\n{}{}for (x, 0, {}) {{\n o0[ramp(x*16, 1, 16)] = count_leading_zeros(a[ramp(x*16, 1, 16)])\n o1[ramp(x*16, 1, 16)] = count_trailing_zeros(a[ramp(x*16, 1, 16)])\n o2[ramp(x*16, 1, 16)] = popcount(a[ramp(x*16, 1, 16)])\n}}\nfor (x, 0, {N}) {{\n o3[x] = count_leading_zeros(a[x])\n}}\n}}\n",
            buffer_decls(&ins),
            buffer_decls(&outs),
            N / LANES
        );
        let m = parse_module("bits", &text).unwrap_or_else(|d| panic!("{d}"));
        let data = values(7 + bits as u64, signed, bits, false);
        let eb = bits as usize / 8;
        let mut args = vec![Arg::Buffer { elem: ty, dims: vec![(0, N as i64)], data: data.clone() }];
        for _ in 0..4 {
            args.push(Arg::Buffer { elem: ty, dims: vec![(0, N as i64)], data: vec![0; N * eb] });
        }
        let got = run(&format!("bits_{t}"), &m, &args).unwrap_or_else(|e| panic!("{t}: {e}"));
        for i in 0..N {
            let mut b = [0u8; 8];
            b[..eb].copy_from_slice(&data[i * eb..(i + 1) * eb]);
            let x = u64::from_le_bytes(b);
            let want = [(x.leading_zeros() - (64 - bits as u32)) as u64, if x == 0 { bits as u64 } else { x.trailing_zeros() as u64 }, x.count_ones() as u64];
            for (k, w) in want.iter().chain(std::iter::once(&want[0])).enumerate() {
                let mut g = [0u8; 8];
                g[..eb].copy_from_slice(&got[k + 1][i * eb..(i + 1) * eb]);
                assert_eq!(u64::from_le_bytes(g), *w, "{t} op {k} of {x:#x}");
            }
        }
    }
}
