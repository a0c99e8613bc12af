//! Harness generation, compilation (cached by content) and batch runs.

use crate::proto::{Proto, parse_header, type_bits};
use misaal_isa::ast::Ty;
use misaal_isa::Instr;
use misaal_oracle_qemu::{Chosen, MAX_IMM_COMBOS, WireSig, compile_and_link, content_key, find_tools, qemu_version, switch_on_immediates};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use misaal_oracle_qemu::{Harness, Problem};

pub const CC: &str = "aarch64-linux-gnu-gcc";
pub const QEMU: &str = "qemu-aarch64";
/// Armv8.6-A has every feature the specs name: rdm (8.1), dotprod (8.4), i8mm (8.6).
const MARCH: &str = "-march=armv8.6-a";

#[derive(Clone, Debug)]
pub struct Toolchain {
    pub cc: PathBuf,
    pub qemu: PathBuf,
    pub header: PathBuf,
    /// `qemu-aarch64 --version`'s first line, for the evidence column.
    pub qemu_version: String,
}

impl Toolchain {
    /// The cross compiler and qemu from PATH; the error names what is missing.
    pub fn find() -> Result<Toolchain, String> {
        let [cc, qemu]: [PathBuf; 2] = find_tools(&[CC, QEMU], "scripts/setup.sh installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user")?.try_into().expect("two tools");
        let inc = Command::new(&cc).arg("-print-file-name=include").output().map_err(|e| format!("{CC}: {e}"))?;
        let header = PathBuf::from(String::from_utf8_lossy(&inc.stdout).trim()).join("arm_neon.h");
        if !header.is_file() {
            return Err(format!("{CC} has no arm_neon.h at {}", header.display()));
        }
        let qemu_version = qemu_version(&qemu)?;
        Ok(Toolchain { cc, qemu, header, qemu_version })
    }
}

/// Checks `i` against its prototype; on success the C function for it.
fn harness_fn(k: usize, i: &Instr, p: &Proto) -> Result<(String, WireSig), Problem> {
    let bad = |m: String| Err(Problem::Mismatch(format!("`{}` disagrees with arm_neon.h: {m}", i.name)));
    if p.params.len() != i.params.len() {
        return bad(format!("{} operands in the spec, {} in the header", i.params.len(), p.params.len()));
    }
    let mut body = String::new();
    let mut ops = Vec::new();
    let mut off = 0usize;
    let mut imms: Vec<(usize, u64, u64)> = Vec::new();
    let mut args: Vec<String> = Vec::new();
    for (n, (param, (cty, is_const))) in i.params.iter().zip(&p.params).enumerate() {
        let w = param.ty.width();
        if *is_const {
            let (Ty::Imm(_), Some((lo, hi))) = (param.ty, param.range) else {
                return bad(format!("operand `{}` is a constant (`const int`): declare it `immN in LO to HI`", param.name));
            };
            imms.push((n, lo, hi));
            let bytes = w.div_ceil(8) as usize;
            let _ = writeln!(body, "  uint64_t m{n} = 0; memcpy(&m{n}, in + {off}, {bytes});");
            args.push(format!("M{n}"));
            ops.push((bytes, Some((lo, hi))));
            off += bytes;
            continue;
        }
        match type_bits(cty) {
            Some(b) if b == w && matches!(param.ty, Ty::Bv(_)) => {}
            Some(b) => return bad(format!("operand `{}` is {} but `{cty}` has {b} bits", param.name, param.ty)),
            None => return Err(Problem::Unavailable(format!("operand type `{cty}` of `{}` is not harnessed", i.name))),
        }
        let bytes = (w / 8) as usize;
        let _ = writeln!(body, "  {cty} a{n}; memcpy(&a{n}, in + {off}, {bytes});");
        args.push(format!("a{n}"));
        ops.push((bytes, None));
        off += bytes;
    }
    match type_bits(&p.ret) {
        Some(b) if b == i.ret.width() => {}
        Some(b) => return bad(format!("result is {} but `{}` has {b} bits", i.ret, p.ret)),
        None => return Err(Problem::Unavailable(format!("result type `{}` of `{}` is not harnessed", p.ret, i.name))),
    }
    let combos: u64 = imms.iter().map(|(_, lo, hi)| hi - lo + 1).product();
    if combos > MAX_IMM_COMBOS {
        return Err(Problem::Unavailable(format!("`{}` takes {combos} immediate combinations (at most {MAX_IMM_COMBOS} are harnessed)", i.name)));
    }
    let _ = writeln!(body, "  {} r; memset(&r, 0, sizeof r);", p.ret);
    let code = switch_on_immediates(format!("r = {}({});", i.name, args.join(", ")), &imms, "exit(4);");
    let _ = writeln!(body, "  {code}");
    let _ = writeln!(body, "  memcpy(out, &r, {});", i.ret.width() / 8);
    let f = format!("void f{k}(const unsigned char *in, unsigned char *out) {{\n{body}}}\n");
    Ok((f, WireSig { ops, out_bytes: (i.ret.width() / 8) as usize, ret_bits: i.ret.width() }))
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
    let header = std::fs::read_to_string(&tc.header).map_err(|e| format!("{}: {e}", tc.header.display()))?;
    let protos = parse_header(&header);
    let chosen = Chosen::collect(instrs, |k, i| match protos.get(&i.name) {
        None => Err(Problem::Unavailable(format!("`{}` is not in {}", i.name, tc.header.display()))),
        Some(p) => harness_fn(k, i, p),
    });
    let units = chosen.units(PRELUDE, &(PRELUDE.to_string() + "#include <stdio.h>\n"), "size_t", MAIN);
    let key = content_key(&format!("{}\n{}\n{}", tc.cc.display(), MARCH, units.join("\n")));
    let dir = std::env::temp_dir().join("misaal-oracle-arm").join(format!("{key:016x}"));
    let exe = dir.join("harness");
    if !exe.is_file() {
        let named: Vec<(String, String)> = units.into_iter().enumerate().map(|(k, u)| (format!("u{k}"), u)).collect();
        let compile = |c: &Path, o: &Path| {
            let mut cmd = Command::new(&tc.cc);
            cmd.args(["-O1", MARCH, "-flax-vector-conversions", "-w", "-c"]).arg(c).arg("-o").arg(o);
            cmd
        };
        let link = |objs: &[PathBuf], out: &Path| {
            let mut cmd = Command::new(&tc.cc);
            cmd.arg("-static").args(objs).arg("-o").arg(out);
            cmd
        };
        compile_and_link(&dir, &named, &compile, &link, &exe)?;
    }
    Ok(chosen.harness(exe, tc.qemu.clone(), &["-cpu", "max"]))
}
