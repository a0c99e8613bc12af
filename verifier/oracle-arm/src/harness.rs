//! Harness generation, compilation (cached by content) and batch runs.

use crate::proto::{Proto, parse_header, type_bits};
use misaal_isa::ast::Ty;
use misaal_isa::Instr;
use misaal_oracle_qemu::{Chosen, HarnessFn, ToolSpec, WireSig, cached_harness, compile_and_link};
use std::path::{Path, PathBuf};
use std::process::Command;

pub use misaal_oracle_qemu::{Harness, Problem, Toolchain};

pub const CC: &str = "aarch64-linux-gnu-gcc";
pub const QEMU: &str = "qemu-aarch64";
/// Armv8.6-A has every feature the specs name: rdm (8.1), dotprod (8.4), i8mm (8.6).
const MARCH: &str = "-march=armv8.6-a";

/// The cross compiler (which links too), `arm_neon.h` of its own, and qemu.
pub const TOOLS: ToolSpec = ToolSpec { cc: CC, ld: None, qemu: QEMU, install: "scripts/setup.sh installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user", header_root: ("-print-file-name=include", "arm_neon.h") };

/// Checks `i` against its prototype; on success the C function for it.
fn harness_fn(k: usize, i: &Instr, p: &Proto) -> Result<(String, WireSig), Problem> {
    let bad = |m: String| Err(Problem::Mismatch(format!("`{}` disagrees with arm_neon.h: {m}", i.name)));
    if p.params.len() != i.params.len() {
        return bad(format!("{} operands in the spec, {} in the header", i.params.len(), p.params.len()));
    }
    let mut f = HarnessFn::default();
    for (n, (param, (cty, is_const))) in i.params.iter().zip(&p.params).enumerate() {
        let w = param.ty.width();
        if *is_const {
            let (Ty::Imm(_), Some(range)) = (param.ty, param.range) else {
                return bad(format!("operand `{}` is a constant (`const int`): declare it `immN in LO to HI`", param.name));
            };
            let bytes = w.div_ceil(8) as usize;
            f.immediate(n, range, bytes, |off| format!("uint64_t m{n} = 0; memcpy(&m{n}, in + {off}, {bytes});"));
            continue;
        }
        match type_bits(cty) {
            Some(b) if b == w && matches!(param.ty, Ty::Bv(_)) => {}
            Some(b) => return bad(format!("operand `{}` is {} but `{cty}` has {b} bits", param.name, param.ty)),
            None => return Err(Problem::Unavailable(format!("operand type `{cty}` of `{}` is not harnessed", i.name))),
        }
        let bytes = (w / 8) as usize;
        f.operand(n, bytes, |off| format!("{cty} a{n}; memcpy(&a{n}, in + {off}, {bytes});"));
    }
    match type_bits(&p.ret) {
        Some(b) if b == i.ret.width() => {}
        Some(b) => return bad(format!("result is {} but `{}` has {b} bits", i.ret, p.ret)),
        None => return Err(Problem::Unavailable(format!("result type `{}` of `{}` is not harnessed", p.ret, i.name))),
    }
    let out_bytes = (i.ret.width() / 8) as usize;
    f.finish(k, i, &format!("{} r; memset(&r, 0, sizeof r);", p.ret), "exit(4);", &format!("memcpy(out, &r, {out_bytes});"), out_bytes)
}

const PRELUDE: &str = "#include <arm_neon.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n";

const MAIN: &str = r#"
/* Wire format, little-endian: records of (u32 id, u32 n, n cases of the
   spec's operands back to back); the results go to stdout in order. */
int main(void) {
  size_t cap = 1 << 20, len = 0, got;
  unsigned char *buf = malloc(cap);
  while ((got = fread(buf + len, 1, cap - len, stdin)) > 0) {
    len += got;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  static char obuf[1 << 20];
  setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
  unsigned char out[512];
  size_t p = 0;
  while (p + 8 <= len) {
    uint32_t id, n;
    memcpy(&id, buf + p, 4); memcpy(&n, buf + p + 4, 4); p += 8;
    if (id >= NSPECS) return 3;
    for (uint32_t c = 0; c < n; c++) {
      if (p + INSZ[id] > len) return 5;
      FNS[id](buf + p, out);
      fwrite(out, 1, OUTSZ[id], stdout);
      p += INSZ[id];
    }
  }
  return fflush(stdout) == 0 ? 0 : 6;
}
"#;

/// Generates, compiles (or reuses from the cache) and returns a harness
/// for `instrs`. Specs it cannot hold are listed in `problems`.
pub fn build(tc: &Toolchain, instrs: &[&Instr]) -> Result<Harness, String> {
    let protos = parse_header(&tc.read_header()?);
    let chosen = Chosen::from_header(instrs, &protos, &tc.header, harness_fn);
    let units = chosen.units(PRELUDE, &(PRELUDE.to_string() + "#include <stdio.h>\n"), "size_t", MAIN);
    let exe = cached_harness("arm", &tc.cc, MARCH, units, |dir, named, exe| {
        let compile = |c: &Path, o: &Path| {
            let mut cmd = Command::new(&tc.cc);
            cmd.args(["-O1", MARCH, "-flax-vector-conversions", "-w", "-c"]).arg(c).arg("-o").arg(o);
            cmd
        };
        let link = |objs: &[PathBuf], out: &Path| {
            let mut cmd = Command::new(&tc.ld);
            cmd.arg("-static").args(objs).arg("-o").arg(out);
            cmd
        };
        compile_and_link(dir, named, &compile, &link, exe)
    })?;
    Ok(chosen.harness(exe, tc.qemu.clone(), &["-cpu", "max"]))
}
