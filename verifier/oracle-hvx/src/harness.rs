//! Harness generation, compilation (cached by content) and batch runs.

use crate::proto::{Proto, parse_header};
use crate::runtime::{CFLAGS, RUNTIME_C, RUNTIME_H};
use misaal_isa::ast::{Form, Ty};
use misaal_isa::Instr;
use misaal_oracle_qemu::{Chosen, HarnessFn, ToolSpec, WireSig, cached_harness};

pub use misaal_oracle_qemu::{Harness, Problem, Toolchain};

pub const CC: &str = "clang-19";
pub const LD: &str = "ld.lld-19";
pub const QEMU: &str = "qemu-hexagon";
/// qemu 7.2 knows Hexagon CPUs up to v67; its HVX is then v67 too.
const CPU: &str = "v67";

/// clang 19 (with `hvx_hexagon_protos.h`), ld.lld 19 and qemu-hexagon.
pub const TOOLS: ToolSpec = ToolSpec { cc: CC, ld: Some(LD), qemu: QEMU, install: "scripts/setup.sh installs clang-19, lld-19 and qemu-user", header_root: ("-print-resource-dir", "include/hvx_hexagon_protos.h") };

/// How one value crosses the wire. Predicates travel as their 128 bits and
/// are spread to (or gathered from) the 0x00/0xFF bytes clang's
/// `HVX_VectorPred` holds in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    Bytes(usize),
    Pred,
    Imm,
}

impl Wire {
    fn bytes(self) -> usize {
        match self {
            Wire::Bytes(n) => n,
            Wire::Pred => 16,
            Wire::Imm => 4,
        }
    }
}

/// The wire form a C type needs, and whether the spec's operand matches it.
fn wire_for(cty: &str, ty: Ty, form: Form) -> Option<Result<Wire, String>> {
    let want = match cty {
        "HVX_Vector" => (Ty::Bv(1024), Form::Plain, Wire::Bytes(128)),
        "HVX_VectorPair" => (Ty::Bv(2048), Form::Pair, Wire::Bytes(256)),
        "HVX_VectorPred" => (Ty::Mask(128), Form::Pred, Wire::Pred),
        "Word32" => (Ty::Bv(32), Form::Plain, Wire::Bytes(4)),
        "Word64" => (Ty::Bv(64), Form::Plain, Wire::Bytes(8)),
        _ => return None,
    };
    let spell = |t: Ty, f: Form| match f {
        Form::Pair => format!("pair{}", t.width() / 2),
        Form::Pred => format!("pred{}", t.width()),
        Form::Plain => t.to_string(),
    };
    Some(if (ty, form) == (want.0, want.1) { Ok(want.2) } else { Err(format!("`{cty}` is {} but the spec has {}", spell(want.0, want.1), spell(ty, form))) })
}

/// The C spelling of a header type: the prototypes' `Word32` and `Word64`
/// are the manual's names, not C types.
fn c_type(cty: &str) -> &str {
    match cty {
        "Word32" => "int",
        "Word64" => "long long",
        other => other,
    }
}

/// Checks `i` against its prototype; on success the C function for it.
fn harness_fn(k: usize, i: &Instr, p: &Proto) -> Result<(String, WireSig), Problem> {
    let bad = |m: String| Err(Problem::Mismatch(format!("`{}` disagrees with hvx_hexagon_protos.h: {m}", i.name)));
    if p.params.len() != i.params.len() {
        return bad(format!("{} operands in the spec, {} in the header", i.params.len(), p.params.len()));
    }
    let version = format!("hvxv{}", p.arch);
    if i.features != [version.clone()] {
        return bad(format!("the spec needs {:?}, the header says {version}", i.features));
    }
    let mut f = HarnessFn::default();
    for (n, (param, (cty, cname))) in i.params.iter().zip(&p.params).enumerate() {
        if cname.starts_with('I') {
            let (Ty::Imm(_), Some(range)) = (param.ty, param.range) else {
                return bad(format!("operand `{}` is an immediate (`{cname}`): declare it `immN in LO to HI`", param.name));
            };
            f.immediate(n, range, Wire::Imm.bytes(), |off| format!("unsigned m{n}; __builtin_memcpy(&m{n}, in + {off}, 4);"));
            continue;
        }
        let wire = match wire_for(cty, param.ty, param.form) {
            None => return Err(Problem::Unavailable(format!("operand type `{cty}` of `{}` is not harnessed", i.name))),
            Some(Err(m)) => return bad(format!("operand `{}`: {m}", param.name)),
            Some(Ok(w)) => w,
        };
        f.operand(n, wire.bytes(), |off| match wire {
            Wire::Pred => format!("HVX_VectorPred a{n}; spread(&a{n}, in + {off});"),
            _ => format!("{} a{n}; __builtin_memcpy(&a{n}, in + {off}, {});", c_type(cty), wire.bytes()),
        });
    }
    let out = match wire_for(&p.ret, i.ret, i.ret_form) {
        None => return Err(Problem::Unavailable(format!("result type `{}` of `{}` is not harnessed", p.ret, i.name))),
        Some(Err(m)) => return bad(format!("result: {m}")),
        Some(Ok(w)) => w,
    };
    let write_out = match out {
        Wire::Pred => "gather(out, &r);".to_string(),
        _ => format!("__builtin_memcpy(out, &r, {});", out.bytes()),
    };
    f.finish(k, i, &format!("{} r;", c_type(&p.ret)), "sys(SYS_EXIT, 4, 0, 0);", &write_out, out.bytes())
}

const PRELUDE: &str = r#"#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>
/* A predicate's 128 bits to the 0x00/0xFF bytes an HVX_VectorPred holds. */
static inline void spread(HVX_VectorPred *q, const unsigned char *bits) {
  unsigned char t[128] __attribute__((aligned(128)));
  for (int i = 0; i < 128; i++) t[i] = (bits[i >> 3] >> (i & 7)) & 1 ? 0xff : 0;
  __builtin_memcpy(q, t, 128);
}
static inline void gather(unsigned char *bits, const HVX_VectorPred *q) {
  unsigned char t[128] __attribute__((aligned(128)));
  __builtin_memcpy(t, q, 128);
  for (int i = 0; i < 16; i++) bits[i] = 0;
  for (int i = 0; i < 128; i++) bits[i >> 3] |= (t[i] != 0) << (i & 7);
}
"#;

const MAIN: &str = r#"
static unsigned char ib[1 << 16], ob[1 << 16];
static unsigned ilen, ipos, olen;
/* Reads exactly n bytes; 0 at a clean end of input. */
static int get(unsigned char *d, unsigned n) {
  while (n) {
    if (ipos == ilen) {
      long got = sys(SYS_READ, 0, (long)ib, sizeof ib);
      if (got <= 0) return 0;
      ilen = (unsigned)got; ipos = 0;
    }
    unsigned k = ilen - ipos < n ? ilen - ipos : n;
    memcpy(d, ib + ipos, k); d += k; ipos += k; n -= k;
  }
  return 1;
}
static void flush(void) {
  unsigned p = 0;
  while (p < olen) {
    long w = sys(SYS_WRITE, 1, (long)(ob + p), olen - p);
    if (w <= 0) sys(SYS_EXIT, 6, 0, 0);
    p += (unsigned)w;
  }
  olen = 0;
}
static void put(const unsigned char *s, unsigned n) {
  if (olen + n > sizeof ob) flush();
  memcpy(ob + olen, s, n); olen += n;
}
static unsigned char in[1024] __attribute__((aligned(128)));
static unsigned char out[256] __attribute__((aligned(128)));
/* Wire format, little-endian: records of (u32 id, u32 n, n cases of the
   spec's operands back to back); the results go to stdout in order. */
void _start(void) {
  unsigned char hdr[8];
  while (get(hdr, 8)) {
    unsigned id, n;
    memcpy(&id, hdr, 4); memcpy(&n, hdr + 4, 4);
    if (id >= NSPECS) sys(SYS_EXIT, 3, 0, 0);
    for (unsigned c = 0; c < n; c++) {
      if (!get(in, INSZ[id])) sys(SYS_EXIT, 5, 0, 0);
      FNS[id](in, out);
      put(out, OUTSZ[id]);
    }
  }
  flush();
  sys(SYS_EXIT, 0, 0, 0);
  for (;;) {}
}
"#;

/// Generates, compiles (or reuses from the cache) and returns a harness
/// for `instrs`. Specs it cannot hold are listed in `problems`.
pub fn build(tc: &Toolchain, instrs: &[&Instr]) -> Result<Harness, String> {
    let protos = parse_header(&tc.read_header()?);
    let chosen = Chosen::from_header(instrs, &protos, &tc.header, |k, i, p| {
        if p.arch > 67 {
            return Err(Problem::Unavailable(format!("`{}` needs HVX v{}; qemu 7.2 runs v67", i.name, p.arch)));
        }
        harness_fn(k, i, p)
    });
    let prelude = format!("{PRELUDE}{RUNTIME_H}");
    let units = chosen.units(&prelude, &prelude, "unsigned", &format!("{RUNTIME_C}{MAIN}"));
    let exe = cached_harness("hvx", &tc.cc, &CFLAGS.join(" "), units, |dir, named, exe| crate::runtime::build(&tc.cc, &tc.ld, dir, named, &[], &[], exe))?;
    Ok(chosen.harness(exe, tc.qemu.clone(), &["-cpu", CPU]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use misaal_isa::BitVec;

    /// One spec through the harness on the shared runtime: byte-wise
    /// wrapping add of two vectors (skipped without the tools).
    #[test]
    fn vadd_bytes_under_qemu() {
        let tc = match Toolchain::find(&TOOLS) {
            Ok(tc) => tc,
            Err(why) => {
                eprintln!("SKIPPED vadd_bytes_under_qemu: {why}");
                return;
            }
        };
        let src = "instr Q6_Vb_vadd_VbVb(vu: bv1024, vv: bv1024) -> bv1024 [hvx hvxv60 vadd]\ndst := vu + vv\n";
        let lib = misaal_isa::SpecLibrary::from_sources(&[("t.sema".into(), src.into())]).expect("parses");
        let (i, _) = lib.get("Q6_Vb_vadd_VbVb").expect("parsed");
        let h = build(&tc, &[i.as_ref()]).expect("builds");
        let a: Vec<u8> = (0..128).map(|k| k as u8).collect();
        let b: Vec<u8> = (0..128).map(|k| 200u8.wrapping_add(k as u8)).collect();
        let case = vec![BitVec::from_bytes_le(1024, &a), BitVec::from_bytes_le(1024, &b)];
        let r = h.run(&[("Q6_Vb_vadd_VbVb", &[case][..])]).expect("runs");
        let want: Vec<u8> = (0..128).map(|k| a[k].wrapping_add(b[k])).collect();
        assert_eq!(r[0][0].to_bytes_le(), want);
    }
}
