//! `misaal compile --buffer-type` on a Stmt printed with `no_asserts` and
//! `no_bounds_query` (no `.type` checks, no bounds queries), conv3x3a16 from
//! `frontends/tests/no_asserts/`, whose `input` and `mask` only an int16
//! `widening_mul` reads, so the Stmt leaves their signedness open: without
//! the option the compile names the buffer and its line; with it the C
//! compiles, and on random inputs gives the reference interpreter's output
//! byte for byte.
//!
//! Needs `cc` and HalideRuntime.h from the pip `halide` package
//! (`scripts/setup.sh`).

use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::{ParseOptions, Type, parse_module_with};
use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/frontends/tests/no_asserts/conv3x3a16_no_bounds_query.stmt");
const IN: (i64, i64) = (2050, 1538);
const OUT: (i64, i64) = (2048, 1536);

fn work_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compile_buffer_type").join(std::process::id().to_string());
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn compile(out: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_misaal"))
        .arg("compile")
        .arg(FIXTURE)
        .args(["--name", "misaal_conv", "-o"])
        .arg(out)
        .args(extra)
        .output()
        .expect("run misaal");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn halide_include() -> PathBuf {
    misaal_bench::halide_include().unwrap_or_else(|e| panic!("{e}"))
}

/// Calls `misaal_conv` on `input.bin` (uint8) and `mask.bin` (int8, 3x3),
/// writes `output.bin`.
const HARNESS: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "HalideRuntime.h"
#include "conv.h"
static void make(struct halide_buffer_t *b, struct halide_dimension_t *d, void *host, int code, int w, int h) {
  memset(b, 0, sizeof *b); d[0].min = 0; d[0].extent = w; d[0].stride = 1; d[0].flags = 0;
  d[1].min = 0; d[1].extent = h; d[1].stride = w; d[1].flags = 0;
  b->host = (uint8_t *)host; b->type.code = (halide_type_code_t)code; b->type.bits = 8; b->type.lanes = 1; b->dimensions = 2; b->dim = d; }
static void *slurp(const char *p, size_t n) { void *b = malloc(n); FILE *f = fopen(p, "rb"); if (!f || fread(b, 1, n, f) != n) exit(3); fclose(f); return b; }
int main(int argc, char **argv) {
  size_t n_in = (size_t)IN_W * IN_H, n_out = (size_t)OUT_W * OUT_H;
  void *in = slurp(argv[1], n_in), *mask = slurp(argv[2], 9), *out = calloc(1, n_out);
  struct halide_dimension_t di[2], dm[2], dout[2]; struct halide_buffer_t bi, bm, bo;
  make(&bi, di, in, halide_type_uint, IN_W, IN_H); make(&bm, dm, mask, halide_type_int, 3, 3); make(&bo, dout, out, halide_type_uint, OUT_W, OUT_H);
  int r = misaal_conv(&bi, &bm, &bo); if (r) { fprintf(stderr, "returned %d\n", r); return 4; }
  FILE *f = fopen(argv[3], "wb"); if (!f || fwrite(out, 1, n_out, f) != n_out) return 3; fclose(f);
  return 0;
}
"#;

#[test]
fn no_asserts_stmt_needs_and_takes_buffer_type() {
    let dir = work_dir();
    let c = dir.join("conv.c");

    // Without the option: exit 2, naming the buffer and the line of its first load.
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let line = text.lines().position(|l| l.contains("input[")).unwrap() + 1;
    let (code, err) = compile(&c, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("conv3x3a16_no_bounds_query.stmt:{line}:")), "{err}");
    assert!(err.contains(&format!("unknown buffer `input` at line {line}")) && err.contains("--buffer-type input=TYPE"), "{err}");
    assert!(err.contains("also without a type: `mask`"), "{err}");
    assert!(!c.exists());

    // A type the stores contradict, and a malformed one.
    let (code, err) = compile(&c, &["--buffer-type", "input=uint8", "--buffer-type", "mask=int8", "--buffer-type", "output=uint16"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("to `output` of uint16"), "{err}");
    let (code, err) = compile(&c, &["--buffer-type", "input"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("NAME=TYPE"), "{err}");

    // With it: C, which runs as the interpreter does.
    let (code, err) = compile(&c, &["--buffer-type", "input=uint8", "--buffer-type", "mask=int8"]);
    assert_eq!(code, Some(0), "{err}");
    let exe = dir.join("conv");
    std::fs::write(dir.join("harness.c"), HARNESS).unwrap();
    // The C is for the Stmt's avx512_zen4: on a CPU without AVX-512 it is
    // built against SIMDe, as `misaal bench` does there.
    let simde = match misaal_testkit::avx512_cc_flags() {
        Ok(f) => f,
        Err(why) => {
            misaal_testkit::skip_part(&format!("running the C: {why}"));
            return;
        }
    };
    let cc = Command::new("cc")
        .args(["-O2", "-march=native"])
        .args(&simde)
        .arg("-o")
        .arg(&exe)
        .arg(dir.join("harness.c"))
        .arg(&c)
        .arg("-I")
        .arg(halide_include())
        .arg("-I")
        .arg(&dir)
        .arg(format!("-DIN_W={}", IN.0))
        .arg(format!("-DIN_H={}", IN.1))
        .arg(format!("-DOUT_W={}", OUT.0))
        .arg(format!("-DOUT_H={}", OUT.1))
        .arg("-lm")
        .output()
        .expect("cc");
    assert!(cc.status.success(), "cc: {}", String::from_utf8_lossy(&cc.stderr));

    let mut s = 0x2545_f491_4f6c_dd1du64;
    let input: Vec<u8> = (0..IN.0 * IN.1)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect();
    // A sharpening mask, negative taps included.
    let mask: Vec<u8> = [-1i8, -2, -1, -2, 28, -2, -1, -2, -1].iter().map(|&v| v as u8).collect();
    std::fs::write(dir.join("input.bin"), &input).unwrap();
    std::fs::write(dir.join("mask.bin"), &mask).unwrap();
    let run = Command::new(&exe).arg(dir.join("input.bin")).arg(dir.join("mask.bin")).arg(dir.join("output.bin")).output().expect("run");
    assert!(run.status.success(), "harness: {}", String::from_utf8_lossy(&run.stderr));
    let ours = std::fs::read(dir.join("output.bin")).unwrap();

    let opts = ParseOptions { buffer_types: vec![("input".into(), Type::uint(8)), ("mask".into(), Type::int(8))] };
    let m = parse_module_with("conv3x3a16_no_bounds_query.stmt", &text, &opts).unwrap_or_else(|d| panic!("{d}"));
    let ops = misaal_frontends::halide_ops().unwrap_or_else(|d| panic!("{d}"));
    let mut b = Buffer::dense(Type::uint(8), &[0, 0], &[IN.0, IN.1]);
    b.data = input;
    let mut k = Buffer::dense(Type::int(8), &[0, 0], &[3, 3]);
    k.data = mask;
    let out = Buffer::dense(Type::uint(8), &[0, 0], &[OUT.0, OUT.1]);
    let res = Interp::new(&ops)
        .run(&m.funcs[0], vec![ArgValue::Buffer(b), ArgValue::Buffer(k), ArgValue::Buffer(out)])
        .unwrap_or_else(|e| panic!("interpreter: {e}"));
    let want = &res[2].data;
    assert_eq!(ours.len(), want.len());
    let diff = ours.iter().zip(want).filter(|(a, b)| a != b).count();
    assert_eq!(diff, 0, "{diff} output bytes differ from the reference interpreter");
    // Not a vacuous comparison: the filtered random bytes are not constant.
    assert!(want.iter().any(|&v| v != want[0]));
    let _ = std::fs::remove_dir_all(&dir);
}
