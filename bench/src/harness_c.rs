//! The hosted C harness (x86 natively or with SIMDe, ARM under
//! qemu-aarch64): reads each input from `DIR/NAME.bin`, calls ours and
//! each linked baseline on its own output buffers, writes each one's
//! outputs (concatenated in manifest order) to `DIR/out_LABEL.bin`, and
//! with a second argument prints the fastest of 21 interleaved rounds of
//! each as `LABEL_us=T`. The freestanding Hexagon harness is
//! [`crate::hvx`]'s: it has no files and no clock.

use crate::{bytes_of, c_type, halide_type_code};
use misaal_frontends::manifest::ArgSpec;
use std::fmt::Write as _;

/// A function the harness may call: its label (`out_LABEL.bin`,
/// `LABEL_us`), C symbol, and the preprocessor condition that links it.
pub struct Variant {
    pub label: &'static str,
    pub function: String,
    pub guard: &'static str,
}

/// Ours always; Halide's object unless `NO_HALIDE`; our naive build with
/// `HAVE_NAIVE`; the scalar C with `HAVE_SCALAR`.
pub fn variants(function: &str) -> Vec<Variant> {
    vec![
        Variant { label: "ours", function: format!("misaal_{function}"), guard: "1" },
        Variant { label: "halide", function: function.to_string(), guard: "!defined(NO_HALIDE)" },
        Variant { label: "naive", function: format!("misaal_naive_{function}"), guard: "defined(HAVE_NAIVE)" },
        Variant { label: "scalar", function: format!("scalar_{function}"), guard: "defined(HAVE_SCALAR)" },
    ]
}

/// The harness's C text for `function` over `args`.
pub fn harness(function: &str, args: &[ArgSpec]) -> Result<String, String> {
    let variants = variants(function);
    let mut c = String::from("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <stdint.h>\n#include <time.h>\n#include \"HalideRuntime.h\"\n#include \"ours.h\"\n");
    let mut proto = Vec::new();
    for a in args {
        proto.push(if a.buffer { "struct halide_buffer_t *".to_string() } else { c_type(a.ty)? });
    }
    for v in &variants[1..] {
        let _ = writeln!(c, "#if {}\nint {}({});\n#endif", v.guard, v.function, proto.join(", "));
    }
    c.push_str(
        "static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }\n\
         static void *zalloc(size_t n) { n = (n + 127) & ~(size_t)127; void *b = aligned_alloc(128, n ? n : 128); if (!b) { fprintf(stderr, \"out of memory\\n\"); exit(3); } memset(b, 0, n ? n : 128); return b; }\n\
         static void *slurp(const char *p, size_t n) { void *b = zalloc(n); FILE *f = fopen(p, \"rb\"); if (!f || fread(b, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", p); exit(3); } fclose(f); return b; }\n\
         static FILE *create(const char *p) { FILE *f = fopen(p, \"wb\"); if (!f) { fprintf(stderr, \"cannot write %s\\n\", p); exit(3); } return f; }\n\
         static void spit(FILE *f, const void *b, size_t n) { if (fwrite(b, 1, n, f) != n) { fprintf(stderr, \"cannot write an output\\n\"); exit(3); } }\n\
         static void make(struct halide_buffer_t *b, struct halide_dimension_t *d, void *host, int code, int bits, const int *min, const int *ext, int nd) {\n\
           memset(b, 0, sizeof *b); int s = 1; for (int i = 0; i < nd; i++) { d[i].min = min[i]; d[i].extent = ext[i]; d[i].stride = s; d[i].flags = 0; s *= ext[i]; }\n\
           b->host = (uint8_t *)host; b->type.code = (halide_type_code_t)code; b->type.bits = bits; b->type.lanes = 1; b->dimensions = nd; b->dim = d; }\n\
         int main(int argc, char **argv) {\n  const char *dir = argc > 1 ? argv[1] : \".\"; int timing = argc > 2; char path[4096]; enum { ROUNDS = 21 }; double t0, best[4] = {1e300, 1e300, 1e300, 1e300}; (void)t0; (void)best; (void)timing;\n",
    );
    let mut calls: Vec<Vec<String>> = vec![Vec::new(); variants.len()];
    for (i, a) in args.iter().enumerate() {
        if !a.buffer {
            let t = c_type(a.ty)?;
            let _ = writeln!(c, "  {t} s{i} = ({t}){}LL;", a.value);
            calls.iter_mut().for_each(|v| v.push(format!("s{i}")));
            continue;
        }
        let bytes = bytes_of(a);
        let nd = a.dims.len();
        let ext: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
        let min: Vec<String> = (0..nd).map(|d| a.min.get(d).copied().unwrap_or(0).to_string()).collect();
        let _ = writeln!(c, "  static const int e{i}[] = {{{}}}, m{i}[] = {{{}}};", ext.join(", "), min.join(", "));
        if !a.output {
            let _ = writeln!(c, "  snprintf(path, sizeof path, \"%s/{}.bin\", dir); void *h{i} = slurp(path, {bytes});", a.name);
        }
        for (k, v) in calls.iter_mut().enumerate() {
            let guard = variants[k].guard;
            let host = if a.output {
                // 128-byte aligned, as Halide's runtime allocates: Halide's
                // objects may load a buffer with aligned zmm moves.
                let _ = writeln!(c, "#if {guard}\n  void *h{i}_{k} = zalloc({bytes});\n#endif");
                format!("h{i}_{k}")
            } else {
                format!("h{i}")
            };
            let _ = writeln!(
                c,
                "#if {guard}\n  struct halide_dimension_t d{i}_{k}[{nd}]; struct halide_buffer_t b{i}_{k}; make(&b{i}_{k}, d{i}_{k}, {host}, {}, {}, m{i}, e{i}, {nd});\n#endif",
                halide_type_code(a.ty),
                a.ty.bits
            );
            v.push(format!("&b{i}_{k}"));
        }
    }
    for (k, v) in variants.iter().enumerate() {
        let call = format!("{}({})", v.function, calls[k].join(", "));
        let _ = writeln!(c, "#if {}\n  {{ int r = {call}; if (r) {{ fprintf(stderr, \"{} returned %d\\n\", r); return 4 + {k}; }} }}", v.guard, v.label);
        let _ = writeln!(c, "  {{ snprintf(path, sizeof path, \"%s/out_{}.bin\", dir); FILE *f = create(path);", v.label);
        for (i, a) in args.iter().enumerate().filter(|(_, a)| a.output) {
            let _ = writeln!(c, "    spit(f, h{i}_{k}, {});", bytes_of(a));
        }
        let _ = writeln!(c, "    fclose(f); }}\n  if (timing) for (int w = 0; w < 3; w++) {call};\n#endif");
    }
    // Rounds interleave the variants, so a burst of load from another
    // process hits all of them alike, and each keeps its fastest call:
    // interference only ever adds time (Halide's own `benchmark` reports
    // the minimum too).
    c.push_str("  if (timing) {\n    for (int k = 0; k < ROUNDS; k++) {\n");
    for (k, v) in variants.iter().enumerate() {
        let call = format!("{}({})", v.function, calls[k].join(", "));
        let _ = writeln!(c, "#if {}\n      t0 = now_us(); {call}; t0 = now_us() - t0; if (t0 < best[{k}]) best[{k}] = t0;\n#endif", v.guard);
    }
    c.push_str("    }\n");
    for (k, v) in variants.iter().enumerate() {
        let _ = writeln!(c, "#if {}\n    printf(\"{}_us=%.3f \", best[{k}]);\n#endif", v.guard, v.label);
    }
    c.push_str("    printf(\"\\n\");\n  }\n  return 0;\n}\n");
    Ok(c)
}

/// The `LABEL_us=T` times a timed run printed.
pub fn parse_times(stdout: &str) -> Vec<(String, f64)> {
    stdout.split_whitespace().filter_map(|p| p.split_once("_us=")).map(|(k, v)| (k.to_string(), v.parse().unwrap_or(f64::NAN))).collect()
}
