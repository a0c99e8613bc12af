//! Harness generation, compilation (cached by content) and batch runs.

use crate::proto::{Proto, parse_header};
use crate::runtime::{CFLAGS, RUNTIME_C, RUNTIME_H};
use misaal_isa::ast::{Form, Ty};
use misaal_isa::{BitVec, Instr};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const CC: &str = "clang-19";
pub const LD: &str = "ld.lld-19";
pub const QEMU: &str = "qemu-hexagon";
/// qemu 7.2 knows Hexagon CPUs up to v67; its HVX is then v67 too.
const CPU: &str = "v67";
/// An intrinsic whose immediates take more combinations is not harnessed.
const MAX_IMM_COMBOS: u64 = 4096;
/// Translation units compiled in parallel.
const UNITS: usize = 4;

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(tool)).find(|f| f.is_file()))
}

#[derive(Clone, Debug)]
pub struct Toolchain {
    pub cc: PathBuf,
    pub ld: PathBuf,
    pub qemu: PathBuf,
    pub header: PathBuf,
    /// `qemu-hexagon --version`'s first line, for the evidence column.
    pub qemu_version: String,
}

impl Toolchain {
    /// clang 19, ld.lld 19 and qemu-hexagon from PATH; the error names what is missing.
    pub fn find() -> Result<Toolchain, String> {
        let missing: Vec<&str> = [CC, LD, QEMU].into_iter().filter(|t| which(t).is_none()).collect();
        if !missing.is_empty() {
            return Err(format!("{} not found on PATH (scripts/setup.sh installs clang-19, lld-19 and qemu-user)", missing.join(", ")));
        }
        let (cc, ld, qemu) = (which(CC).expect("found"), which(LD).expect("found"), which(QEMU).expect("found"));
        let res = Command::new(&cc).arg("-print-resource-dir").output().map_err(|e| format!("{CC}: {e}"))?;
        let header = PathBuf::from(String::from_utf8_lossy(&res.stdout).trim()).join("include").join("hvx_hexagon_protos.h");
        if !header.is_file() {
            return Err(format!("{CC} has no hvx_hexagon_protos.h at {}", header.display()));
        }
        let v = Command::new(&qemu).arg("--version").output().map_err(|e| format!("{QEMU}: {e}"))?;
        let qemu_version = String::from_utf8_lossy(&v.stdout).lines().next().unwrap_or(QEMU).trim().to_string();
        Ok(Toolchain { cc, ld, qemu, header, qemu_version })
    }
}

/// Why a spec is not in the harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Not runnable here (not in this header, or an operand the harness
    /// cannot pass): the spec stays unverified.
    Unavailable(String),
    /// The spec contradicts the header (operands, forms, widths, HVX
    /// version): it is wrong.
    Mismatch(String),
}

/// How one value crosses the wire. Predicates travel as their 128 bits and
/// are spread to (or gathered from) the 0x00/0xFF bytes clang's
/// `HVX_VectorPred` holds in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    Bytes(usize),
    Pred,
    Imm(u64, u64),
}

impl Wire {
    fn bytes(self) -> usize {
        match self {
            Wire::Bytes(n) => n,
            Wire::Pred => 16,
            Wire::Imm(..) => 4,
        }
    }
}

struct Sig {
    ops: Vec<Wire>,
    out: Wire,
    ret_bits: u32,
}

pub struct Harness {
    exe: PathBuf,
    qemu: PathBuf,
    ids: HashMap<String, usize>,
    sigs: Vec<Sig>,
    pub problems: HashMap<String, Problem>,
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
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
fn harness_fn(k: usize, i: &Instr, p: &Proto) -> Result<(String, Sig), Problem> {
    let bad = |m: String| Err(Problem::Mismatch(format!("`{}` disagrees with hvx_hexagon_protos.h: {m}", i.name)));
    if p.params.len() != i.params.len() {
        return bad(format!("{} operands in the spec, {} in the header", i.params.len(), p.params.len()));
    }
    let version = format!("hvxv{}", p.arch);
    if i.features != [version.clone()] {
        return bad(format!("the spec needs {:?}, the header says {version}", i.features));
    }
    let mut body = String::new();
    let mut ops = Vec::new();
    let mut off = 0usize;
    let mut imms: Vec<(usize, u64, u64)> = Vec::new();
    let mut args: Vec<String> = Vec::new();
    for (n, (param, (cty, cname))) in i.params.iter().zip(&p.params).enumerate() {
        if cname.starts_with('I') {
            let (Ty::Imm(_), Some((lo, hi))) = (param.ty, param.range) else {
                return bad(format!("operand `{}` is an immediate (`{cname}`): declare it `immN in LO to HI`", param.name));
            };
            imms.push((n, lo, hi));
            let _ = writeln!(body, "  unsigned m{n}; __builtin_memcpy(&m{n}, in + {off}, 4);");
            args.push(format!("M{n}"));
            ops.push(Wire::Imm(lo, hi));
            off += 4;
            continue;
        }
        let wire = match wire_for(cty, param.ty, param.form) {
            None => return Err(Problem::Unavailable(format!("operand type `{cty}` of `{}` is not harnessed", i.name))),
            Some(Err(m)) => return bad(format!("operand `{}`: {m}", param.name)),
            Some(Ok(w)) => w,
        };
        match wire {
            Wire::Pred => {
                let _ = writeln!(body, "  HVX_VectorPred a{n}; spread(&a{n}, in + {off});");
            }
            _ => {
                let _ = writeln!(body, "  {} a{n}; __builtin_memcpy(&a{n}, in + {off}, {});", c_type(cty), wire.bytes());
            }
        }
        args.push(format!("a{n}"));
        ops.push(wire);
        off += wire.bytes();
    }
    let out = match wire_for(&p.ret, i.ret, i.ret_form) {
        None => return Err(Problem::Unavailable(format!("result type `{}` of `{}` is not harnessed", p.ret, i.name))),
        Some(Err(m)) => return bad(format!("result: {m}")),
        Some(Ok(w)) => w,
    };
    let combos: u64 = imms.iter().map(|(_, lo, hi)| hi - lo + 1).product();
    if combos > MAX_IMM_COMBOS {
        return Err(Problem::Unavailable(format!("`{}` takes {combos} immediate combinations (at most {MAX_IMM_COMBOS} are harnessed)", i.name)));
    }
    let _ = writeln!(body, "  {} r;", c_type(&p.ret));
    // Nested switches, one per immediate, each case a literal the compiler can encode.
    let mut code = format!("r = {}({});", i.name, args.join(", "));
    for (n, lo, hi) in imms.iter().rev() {
        let mut sw = format!("switch (m{n}) {{ ");
        for v in *lo..=*hi {
            let _ = write!(sw, "case {v}: {{ {} }} break; ", code.replace(&format!("M{n}"), &v.to_string()));
        }
        sw.push_str("default: sys(SYS_EXIT, 4, 0, 0); }");
        code = sw;
    }
    let _ = writeln!(body, "  {code}");
    match out {
        Wire::Pred => {
            let _ = writeln!(body, "  gather(out, &r);");
        }
        _ => {
            let _ = writeln!(body, "  __builtin_memcpy(out, &r, {});", out.bytes());
        }
    }
    let f = format!("void f{k}(const unsigned char *in, unsigned char *out) {{\n{body}}}\n");
    Ok((f, Sig { ops, out, ret_bits: i.ret.width() }))
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

impl Harness {
    /// Generates, compiles (or reuses from the cache) and returns a harness
    /// for `instrs`. Specs it cannot hold are listed in `problems`.
    pub fn build(tc: &Toolchain, instrs: &[&Instr]) -> Result<Harness, String> {
        let header = std::fs::read_to_string(&tc.header).map_err(|e| format!("{}: {e}", tc.header.display()))?;
        let protos = parse_header(&header);
        let mut problems = HashMap::new();
        let mut fns: Vec<String> = Vec::new();
        let mut sigs: Vec<Sig> = Vec::new();
        let mut ids = HashMap::new();
        for i in instrs {
            if ids.contains_key(&i.name) || problems.contains_key(&i.name) {
                continue;
            }
            let Some(p) = protos.get(&i.name) else {
                problems.insert(i.name.clone(), Problem::Unavailable(format!("`{}` is not in {}", i.name, tc.header.display())));
                continue;
            };
            if p.arch > 67 {
                problems.insert(i.name.clone(), Problem::Unavailable(format!("`{}` needs HVX v{}; qemu 7.2 runs v67", i.name, p.arch)));
                continue;
            }
            match harness_fn(sigs.len(), i, p) {
                Ok((f, s)) => {
                    ids.insert(i.name.clone(), sigs.len());
                    fns.push(f);
                    sigs.push(s);
                }
                Err(e) => {
                    problems.insert(i.name.clone(), e);
                }
            }
        }
        let prelude = format!("{PRELUDE}{RUNTIME_H}");
        let mut units: Vec<String> = vec![prelude.clone(); UNITS];
        for (k, f) in fns.iter().enumerate() {
            units[k * UNITS / fns.len().max(1)].push_str(f);
        }
        let mut main = prelude;
        for k in 0..fns.len() {
            let _ = writeln!(main, "void f{k}(const unsigned char *, unsigned char *);");
        }
        let list = |f: &dyn Fn(usize) -> String| if fns.is_empty() { "0".to_string() } else { (0..fns.len()).map(f).collect::<Vec<_>>().join(", ") };
        let _ = writeln!(main, "#define NSPECS {}u", fns.len());
        let _ = writeln!(main, "static void (*const FNS[])(const unsigned char *, unsigned char *) = {{ {} }};", list(&|k| format!("f{k}")));
        let _ = writeln!(main, "static const unsigned INSZ[] = {{ {} }};", list(&|k| sigs[k].ops.iter().map(|o| o.bytes()).sum::<usize>().to_string()));
        let _ = writeln!(main, "static const unsigned OUTSZ[] = {{ {} }};", list(&|k| sigs[k].out.bytes().to_string()));
        main.push_str(RUNTIME_C);
        main.push_str(MAIN);
        units.push(main);

        let key = fnv(&format!("{}\n{}\n{}", tc.cc.display(), CFLAGS.join(" "), units.join("\n")));
        let dir = std::env::temp_dir().join("misaal-oracle-hvx").join(format!("{key:016x}"));
        let exe = dir.join("harness");
        if !exe.is_file() {
            compile(tc, &dir, &units, &exe)?;
        }
        Ok(Harness { exe, qemu: tc.qemu.clone(), ids, sigs, problems })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.ids.contains_key(name)
    }

    /// Runs every (intrinsic, cases) job in one qemu process.
    pub fn run(&self, jobs: &[(&str, &[Vec<BitVec>])]) -> Result<Vec<Vec<BitVec>>, String> {
        let mut input: Vec<u8> = Vec::new();
        let mut expect = 0usize;
        for (name, cases) in jobs {
            let id = *self.ids.get(*name).ok_or_else(|| format!("`{name}` is not in the harness"))?;
            let sig = &self.sigs[id];
            input.extend((id as u32).to_le_bytes());
            input.extend((cases.len() as u32).to_le_bytes());
            for case in *cases {
                if case.len() != sig.ops.len() {
                    return Err(format!("`{name}`: a case has {} operands, the harness {}", case.len(), sig.ops.len()));
                }
                for (v, wire) in case.iter().zip(&sig.ops) {
                    if let Wire::Imm(lo, hi) = wire
                        && !(*lo..=*hi).contains(&v.to_u64())
                    {
                        return Err(format!("`{name}`: immediate {} outside {lo} to {hi}", v.to_u64()));
                    }
                    let mut b = v.to_bytes_le();
                    b.resize(wire.bytes(), 0);
                    input.extend(b);
                }
            }
            expect += cases.len() * sig.out.bytes();
        }
        let mut child = Command::new(&self.qemu)
            .args(["-cpu", CPU])
            .arg(&self.exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", self.qemu.display()))?;
        // Feed stdin from a thread: the harness writes while we still write.
        let mut stdin = child.stdin.take().expect("piped");
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().map_err(|e| format!("{}: {e}", self.qemu.display()))?;
        let _ = writer.join();
        if !out.status.success() || out.stdout.len() != expect {
            return Err(format!(
                "qemu-hexagon harness exited with {} after {} of {expect} result bytes: {}",
                out.status,
                out.stdout.len(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let mut pos = 0usize;
        Ok(jobs
            .iter()
            .map(|(name, cases)| {
                let sig = &self.sigs[self.ids[*name]];
                let n = sig.out.bytes();
                (0..cases.len())
                    .map(|_| {
                        let r = BitVec::from_bytes_le(sig.ret_bits, &out.stdout[pos..pos + n]);
                        pos += n;
                        r
                    })
                    .collect()
            })
            .collect())
    }
}

/// Compiles the units in parallel and links them (the shared runtime's build).
fn compile(tc: &Toolchain, dir: &Path, units: &[String], exe: &Path) -> Result<(), String> {
    let named: Vec<(String, String)> = units.iter().enumerate().map(|(k, u)| (format!("u{k}"), u.clone())).collect();
    crate::runtime::build(&tc.cc, &tc.ld, dir, &named, &[], &[], exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One spec through the harness on the shared runtime: byte-wise
    /// wrapping add of two vectors (skipped without the tools).
    #[test]
    fn vadd_bytes_under_qemu() {
        let tc = match Toolchain::find() {
            Ok(tc) => tc,
            Err(why) => {
                eprintln!("SKIPPED vadd_bytes_under_qemu: {why}");
                return;
            }
        };
        let src = "instr Q6_Vb_vadd_VbVb(vu: bv1024, vv: bv1024) -> bv1024 [hvx hvxv60 vadd]\ndst := vu + vv\n";
        let lib = misaal_isa::SpecLibrary::from_sources(&[("t.sema".into(), src.into())]).expect("parses");
        let (i, _) = lib.get("Q6_Vb_vadd_VbVb").expect("parsed");
        let h = Harness::build(&tc, &[i.as_ref()]).expect("builds");
        let a: Vec<u8> = (0..128).map(|k| k as u8).collect();
        let b: Vec<u8> = (0..128).map(|k| 200u8.wrapping_add(k as u8)).collect();
        let case = vec![BitVec::from_bytes_le(1024, &a), BitVec::from_bytes_le(1024, &b)];
        let r = h.run(&[("Q6_Vb_vadd_VbVb", &[case][..])]).expect("runs");
        let want: Vec<u8> = (0..128).map(|k| a[k].wrapping_add(b[k])).collect();
        assert_eq!(r[0][0].to_bytes_le(), want);
    }
}
