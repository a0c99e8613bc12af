//! Harness generation, compilation (cached by content) and batch runs.

use crate::proto::{Proto, parse_header, type_bits};
use misaal_isa::ast::Ty;
use misaal_isa::{BitVec, Instr};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const CC: &str = "aarch64-linux-gnu-gcc";
pub const QEMU: &str = "qemu-aarch64";
/// Armv8.6-A has every feature the specs name: rdm (8.1), dotprod (8.4), i8mm (8.6).
const MARCH: &str = "-march=armv8.6-a";
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
    pub qemu: PathBuf,
    pub header: PathBuf,
    /// `qemu-aarch64 --version`'s first line, for the evidence column.
    pub qemu_version: String,
}

impl Toolchain {
    /// The cross compiler and qemu from PATH; the error names what is missing.
    pub fn find() -> Result<Toolchain, String> {
        let missing: Vec<&str> = [CC, QEMU].into_iter().filter(|t| which(t).is_none()).collect();
        if !missing.is_empty() {
            return Err(format!("{} not found on PATH (scripts/setup.sh installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user)", missing.join(" and ")));
        }
        let (cc, qemu) = (which(CC).expect("found"), which(QEMU).expect("found"));
        let inc = Command::new(&cc).arg("-print-file-name=include").output().map_err(|e| format!("{CC}: {e}"))?;
        let header = PathBuf::from(String::from_utf8_lossy(&inc.stdout).trim()).join("arm_neon.h");
        if !header.is_file() {
            return Err(format!("{CC} has no arm_neon.h at {}", header.display()));
        }
        let v = Command::new(&qemu).arg("--version").output().map_err(|e| format!("{QEMU}: {e}"))?;
        let qemu_version = String::from_utf8_lossy(&v.stdout).lines().next().unwrap_or(QEMU).trim().to_string();
        Ok(Toolchain { cc, qemu, header, qemu_version })
    }
}

/// Why a spec is not in the harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Not runnable here (no such intrinsic in this header): the spec stays unverified.
    Unavailable(String),
    /// The spec contradicts the header (operand count or width): it is wrong.
    Mismatch(String),
}

struct Sig {
    name: String,
    /// Per operand: bytes on the wire, and the range if it is an immediate.
    ops: Vec<(usize, Option<(u64, u64)>)>,
    out_bytes: usize,
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

/// Checks `i` against its prototype; on success the C function for it.
fn harness_fn(k: usize, i: &Instr, p: &Proto) -> Result<(String, Sig), Problem> {
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
    // Nested switches, one per immediate, each case a literal the compiler can encode.
    let call = format!("r = {}({});", i.name, args.join(", "));
    let mut code = call;
    for (n, lo, hi) in imms.iter().rev() {
        let mut sw = format!("switch (m{n}) {{ ");
        for v in *lo..=*hi {
            let _ = write!(sw, "case {v}: {{ {} }} break; ", code.replace(&format!("M{n}"), &v.to_string()));
        }
        sw.push_str("default: exit(4); }");
        code = sw;
    }
    let _ = writeln!(body, "  {code}");
    let _ = writeln!(body, "  memcpy(out, &r, {});", i.ret.width() / 8);
    let f = format!("void f{k}(const unsigned char *in, unsigned char *out) {{\n{body}}}\n");
    Ok((f, Sig { name: i.name.clone(), ops, out_bytes: (i.ret.width() / 8) as usize, ret_bits: i.ret.width() }))
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
        let mut units: Vec<String> = vec![PRELUDE.to_string(); UNITS];
        for (k, f) in fns.iter().enumerate() {
            units[k * UNITS / fns.len().max(1)].push_str(f);
        }
        let mut main = PRELUDE.to_string() + "#include <stdio.h>\n";
        for k in 0..fns.len() {
            let _ = writeln!(main, "void f{k}(const unsigned char *, unsigned char *);");
        }
        let list = |f: &dyn Fn(usize) -> String| (0..fns.len()).map(f).collect::<Vec<_>>().join(", ");
        let _ = writeln!(main, "#define NSPECS {}u", fns.len());
        let _ = writeln!(main, "static void (*const FNS[])(const unsigned char *, unsigned char *) = {{ {} }};", if fns.is_empty() { "0".into() } else { list(&|k| format!("f{k}")) });
        let _ = writeln!(main, "static const size_t INSZ[] = {{ {} }};", if fns.is_empty() { "0".into() } else { list(&|k| sigs[k].ops.iter().map(|o| o.0).sum::<usize>().to_string()) });
        let _ = writeln!(main, "static const size_t OUTSZ[] = {{ {} }};", if fns.is_empty() { "0".into() } else { list(&|k| sigs[k].out_bytes.to_string()) });
        main.push_str(MAIN);
        units.push(main);

        let key = fnv(&format!("{}\n{}\n{}", tc.cc.display(), MARCH, units.join("\n")));
        let dir = std::env::temp_dir().join("misaal-oracle-arm").join(format!("{key:016x}"));
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
                for (v, (bytes, range)) in case.iter().zip(&sig.ops) {
                    if let Some((lo, hi)) = range
                        && !(*lo..=*hi).contains(&v.to_u64())
                    {
                        return Err(format!("`{name}`: immediate {} outside {lo} to {hi}", v.to_u64()));
                    }
                    let mut b = v.to_bytes_le();
                    b.resize(*bytes, 0);
                    input.extend(b);
                }
            }
            expect += cases.len() * sig.out_bytes;
        }
        let mut child = Command::new(&self.qemu)
            .args(["-cpu", "max"])
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
                "qemu-aarch64 harness exited with {} after {} of {expect} result bytes: {}",
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
                (0..cases.len())
                    .map(|_| {
                        let r = BitVec::from_bytes_le(sig.ret_bits, &out.stdout[pos..pos + sig.out_bytes]);
                        pos += sig.out_bytes;
                        r
                    })
                    .collect()
            })
            .collect())
    }

    /// The name of spec `id` (for messages).
    pub fn name(&self, id: usize) -> &str {
        &self.sigs[id].name
    }
}

/// Compiles the units in parallel and links them; the executable appears
/// under its final name only when complete (written elsewhere, then renamed).
fn compile(tc: &Toolchain, dir: &Path, units: &[String], exe: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tag = format!("{}.{:?}", std::process::id(), std::thread::current().id()).replace(['(', ')'], "");
    let tag = tag.as_str();
    let results: Vec<Result<PathBuf, String>> = std::thread::scope(|s| {
        let hs: Vec<_> = units
            .iter()
            .enumerate()
            .map(|(k, src)| {
                s.spawn(move || {
                    let c = dir.join(format!("u{k}.{tag}.c"));
                    let o = dir.join(format!("u{k}.{tag}.o"));
                    std::fs::write(&c, src).map_err(|e| format!("{}: {e}", c.display()))?;
                    let out = Command::new(&tc.cc)
                        .args(["-O1", MARCH, "-flax-vector-conversions", "-w", "-c"])
                        .arg(&c)
                        .arg("-o")
                        .arg(&o)
                        .output()
                        .map_err(|e| format!("{CC}: {e}"))?;
                    if !out.status.success() {
                        let err = String::from_utf8_lossy(&out.stderr);
                        return Err(format!("{CC} failed on {}:\n{}", c.display(), err.lines().take(20).collect::<Vec<_>>().join("\n")));
                    }
                    Ok(o)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("compiler thread panicked".into()))).collect()
    });
    let objs: Vec<PathBuf> = results.into_iter().collect::<Result<_, _>>()?;
    let tmp = dir.join(format!("harness.{tag}.tmp"));
    let out = Command::new(&tc.cc).arg("-static").args(&objs).arg("-o").arg(&tmp).output().map_err(|e| format!("{CC}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{CC} could not link the harness: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    for o in &objs {
        let _ = std::fs::remove_file(o);
        let _ = std::fs::remove_file(o.with_extension("c"));
    }
    std::fs::rename(&tmp, exe).map_err(|e| format!("{}: {e}", exe.display()))
}
