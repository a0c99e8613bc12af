//! The reference interpreter runs Halide's own lowered Stmt and must agree
//! with the algorithm computed directly.

use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::parse_module;
use misaal_frontends::stmt::types::Type;

fn sample(name: &str) -> String {
    std::fs::read_to_string(format!("{}/src/stmt/samples/{name}.stmt", env!("CARGO_MANIFEST_DIR"))).unwrap()
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
