//! What the emulated oracles (`misaal-oracle-arm`, `misaal-oracle-hvx`)
//! share: one batch harness binary per set of specs, cached by the hash of
//! its C, and one qemu process per batch of cases.
//!
//! A target's crate knows its compiler, its header's prototypes and how a
//! C type crosses the wire; this crate knows the rest: finding tools,
//! splitting the harness into translation units with its dispatch tables,
//! compiling them in parallel, and the batch wire format (little-endian
//! records of `u32 id, u32 n`, then `n` cases of the spec's operands back to
//! back; the results come back on stdout in order).

use misaal_isa::{BitVec, Instr};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An intrinsic whose immediates take more combinations is not harnessed.
pub const MAX_IMM_COMBOS: u64 = 4096;
/// Translation units compiled in parallel.
const UNITS: usize = 4;

/// `tool` on PATH.
pub fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(tool)).find(|f| f.is_file()))
}

/// Every tool of `tools` on PATH, in order; the error names the missing
/// ones and `install` (what installs them).
pub fn find_tools(tools: &[&str], install: &str) -> Result<Vec<PathBuf>, String> {
    let found: Vec<Option<PathBuf>> = tools.iter().map(|t| which(t)).collect();
    let missing: Vec<&str> = tools.iter().zip(&found).filter(|(_, f)| f.is_none()).map(|(t, _)| *t).collect();
    if !missing.is_empty() {
        let names = match missing.as_slice() {
            [a, b] => format!("{a} and {b}"),
            _ => missing.join(", "),
        };
        return Err(format!("{names} not found on PATH ({install})"));
    }
    Ok(found.into_iter().flatten().collect())
}

/// `qemu --version`'s first line, for the evidence column.
pub fn qemu_version(qemu: &Path) -> Result<String, String> {
    let name = qemu.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let v = Command::new(qemu).arg("--version").output().map_err(|e| format!("{name}: {e}"))?;
    Ok(String::from_utf8_lossy(&v.stdout).lines().next().unwrap_or(&name).trim().to_string())
}

/// Where an emulated target's oracle finds its tools and the header of
/// its intrinsics' prototypes.
pub struct ToolSpec {
    pub cc: &'static str,
    /// A linker of its own, where the compiler does not link (HVX's ld.lld).
    pub ld: Option<&'static str>,
    pub qemu: &'static str,
    /// What installs the tools, for the error that names a missing one.
    pub install: &'static str,
    /// The compiler's flag that prints a folder, and the header's path below it.
    pub header_root: (&'static str, &'static str),
}

/// An emulated target's tools, found on PATH.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub cc: PathBuf,
    /// What links: the target's own linker, or else the compiler.
    pub ld: PathBuf,
    pub qemu: PathBuf,
    /// The header of the intrinsics' prototypes.
    pub header: PathBuf,
    /// `qemu --version`'s first line, for the evidence column.
    pub qemu_version: String,
}

impl Toolchain {
    /// `spec`'s tools from PATH; the error names what is missing.
    pub fn find(spec: &ToolSpec) -> Result<Toolchain, String> {
        let names: Vec<&str> = [Some(spec.cc), spec.ld, Some(spec.qemu)].into_iter().flatten().collect();
        let mut found = find_tools(&names, spec.install)?.into_iter();
        let cc = found.next().expect("the compiler");
        let ld = if spec.ld.is_some() { found.next().expect("the linker") } else { cc.clone() };
        let qemu = found.next().expect("qemu");
        let (flag, below) = spec.header_root;
        let root = Command::new(&cc).arg(flag).output().map_err(|e| format!("{}: {e}", spec.cc))?;
        let header = PathBuf::from(String::from_utf8_lossy(&root.stdout).trim()).join(below);
        if !header.is_file() {
            let name = Path::new(below).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            return Err(format!("{} has no {name} at {}", spec.cc, header.display()));
        }
        let qemu_version = qemu_version(&qemu)?;
        Ok(Toolchain { cc, ld, qemu, header, qemu_version })
    }

    /// The header's text.
    pub fn read_header(&self) -> Result<String, String> {
        std::fs::read_to_string(&self.header).map_err(|e| format!("{}: {e}", self.header.display()))
    }
}

/// One emulated target's oracle, as its crate describes it.
pub struct QemuOracle {
    /// The target its specs carry (`arm`, `hvx`).
    pub name: &'static str,
    pub tools: ToolSpec,
    /// How qemu runs the harness, as the evidence names it after qemu's version.
    pub cpu: &'static str,
    /// Generates, compiles (or reuses from the cache) and returns a harness
    /// for the specs.
    pub build: fn(&Toolchain, &[&Instr]) -> Result<Harness, String>,
}

/// Why a spec is not in the harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Not runnable here (not in this header, or an operand the harness
    /// cannot pass): the spec stays unverified.
    Unavailable(String),
    /// The spec contradicts the header (operands, widths, version): it is wrong.
    Mismatch(String),
}

/// How one spec's cases cross the wire.
#[derive(Clone, Debug)]
pub struct WireSig {
    /// Per operand: bytes on the wire, and the range if it is an immediate.
    pub ops: Vec<(usize, Option<(u64, u64)>)>,
    pub out_bytes: usize,
    pub ret_bits: u32,
}

/// The content hash naming a harness in the cache.
pub fn content_key(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// `call` (a statement naming immediate `n` as `M{n}`) under nested
/// switches, one per immediate `(n, lo, hi)` read into `m{n}`, each case a
/// literal the compiler can encode; an unknown value runs `default`.
pub fn switch_on_immediates(call: String, imms: &[(usize, u64, u64)], default: &str) -> String {
    let mut code = call;
    for (n, lo, hi) in imms.iter().rev() {
        let mut sw = format!("switch (m{n}) {{ ");
        for v in *lo..=*hi {
            let _ = write!(sw, "case {v}: {{ {} }} break; ", code.replace(&format!("M{n}"), &v.to_string()));
        }
        let _ = write!(sw, "default: {default} }}");
        code = sw;
    }
    code
}

/// A harness function `f{k}` as it is written: each operand read from
/// `in` at its offset on the wire, then the call, its result written to
/// `out`.
#[derive(Default)]
pub struct HarnessFn {
    body: String,
    ops: Vec<(usize, Option<(u64, u64)>)>,
    imms: Vec<(usize, u64, u64)>,
    args: Vec<String>,
}

impl HarnessFn {
    fn offset(&self) -> usize {
        self.ops.iter().map(|o| o.0).sum()
    }

    /// Operand `n`, `bytes` on the wire: `read(offset)` is the C that reads
    /// it into `a{n}`.
    pub fn operand(&mut self, n: usize, bytes: usize, read: impl FnOnce(usize) -> String) {
        let _ = writeln!(self.body, "  {}", read(self.offset()));
        self.args.push(format!("a{n}"));
        self.ops.push((bytes, None));
    }

    /// Operand `n`, an immediate in `lo..=hi`, `bytes` on the wire:
    /// `read(offset)` reads it into `m{n}`, and the call names it `M{n}`,
    /// a literal under [`switch_on_immediates`].
    pub fn immediate(&mut self, n: usize, (lo, hi): (u64, u64), bytes: usize, read: impl FnOnce(usize) -> String) {
        let _ = writeln!(self.body, "  {}", read(self.offset()));
        self.imms.push((n, lo, hi));
        self.args.push(format!("M{n}"));
        self.ops.push((bytes, Some((lo, hi))));
    }

    /// The function `f{k}` calling `i` into `r`, declared by `declare_r`
    /// and written out by `write_out`; `exit` ends the program on an
    /// immediate out of range. Unavailable when the immediates take more
    /// than [`MAX_IMM_COMBOS`] combinations.
    pub fn finish(mut self, k: usize, i: &Instr, declare_r: &str, exit: &str, write_out: &str, out_bytes: usize) -> Result<(String, WireSig), Problem> {
        let combos: u64 = self.imms.iter().map(|(_, lo, hi)| hi - lo + 1).product();
        if combos > MAX_IMM_COMBOS {
            return Err(Problem::Unavailable(format!("`{}` takes {combos} immediate combinations (at most {MAX_IMM_COMBOS} are harnessed)", i.name)));
        }
        let code = switch_on_immediates(format!("r = {}({});", i.name, self.args.join(", ")), &self.imms, exit);
        let _ = write!(self.body, "  {declare_r}\n  {code}\n  {write_out}\n");
        let f = format!("void f{k}(const unsigned char *in, unsigned char *out) {{\n{}}}\n", self.body);
        Ok((f, WireSig { ops: self.ops, out_bytes, ret_bits: i.ret.width() }))
    }
}

/// The harness functions chosen for a set of specs.
pub struct Chosen {
    /// C function `f{k}` of spec `k`.
    fns: Vec<String>,
    sigs: Vec<WireSig>,
    ids: HashMap<String, usize>,
    pub problems: HashMap<String, Problem>,
}

impl Chosen {
    /// Asks `harness_fn(k, instr)` for each distinct spec's function `f{k}`.
    pub fn collect(instrs: &[&Instr], mut harness_fn: impl FnMut(usize, &Instr) -> Result<(String, WireSig), Problem>) -> Chosen {
        let mut c = Chosen { fns: Vec::new(), sigs: Vec::new(), ids: HashMap::new(), problems: HashMap::new() };
        for i in instrs {
            if c.ids.contains_key(&i.name) || c.problems.contains_key(&i.name) {
                continue;
            }
            match harness_fn(c.sigs.len(), i) {
                Ok((f, s)) => {
                    c.ids.insert(i.name.clone(), c.sigs.len());
                    c.fns.push(f);
                    c.sigs.push(s);
                }
                Err(e) => {
                    c.problems.insert(i.name.clone(), e);
                }
            }
        }
        c
    }

    /// [`Self::collect`] over the prototypes `protos` of the header at
    /// `header`: a spec the header lacks is unavailable.
    pub fn from_header<P>(instrs: &[&Instr], protos: &HashMap<String, P>, header: &Path, mut harness_fn: impl FnMut(usize, &Instr, &P) -> Result<(String, WireSig), Problem>) -> Chosen {
        Chosen::collect(instrs, |k, i| match protos.get(&i.name) {
            None => Err(Problem::Unavailable(format!("`{}` is not in {}", i.name, header.display()))),
            Some(p) => harness_fn(k, i, p),
        })
    }

    /// The translation units: the functions spread over a few units that
    /// start with `prelude`, then the main unit: `main_prelude`, the
    /// functions' declarations, `NSPECS` and the tables `FNS`, `INSZ` and
    /// `OUTSZ` (of C type `size_ty`), then `main_tail`.
    pub fn units(&self, prelude: &str, main_prelude: &str, size_ty: &str, main_tail: &str) -> Vec<String> {
        let mut units: Vec<String> = vec![prelude.to_string(); UNITS];
        for (k, f) in self.fns.iter().enumerate() {
            units[k * UNITS / self.fns.len().max(1)].push_str(f);
        }
        let mut main = main_prelude.to_string();
        for k in 0..self.fns.len() {
            let _ = writeln!(main, "void f{k}(const unsigned char *, unsigned char *);");
        }
        let list = |f: &dyn Fn(usize) -> String| if self.fns.is_empty() { "0".to_string() } else { (0..self.fns.len()).map(f).collect::<Vec<_>>().join(", ") };
        let _ = writeln!(main, "#define NSPECS {}u", self.fns.len());
        let _ = writeln!(main, "static void (*const FNS[])(const unsigned char *, unsigned char *) = {{ {} }};", list(&|k| format!("f{k}")));
        let _ = writeln!(main, "static const {size_ty} INSZ[] = {{ {} }};", list(&|k| self.sigs[k].ops.iter().map(|o| o.0).sum::<usize>().to_string()));
        let _ = writeln!(main, "static const {size_ty} OUTSZ[] = {{ {} }};", list(&|k| self.sigs[k].out_bytes.to_string()));
        main.push_str(main_tail);
        units.push(main);
        units
    }

    /// The harness for the executable built from [`Self::units`], run by
    /// `qemu qemu_args`.
    pub fn harness(self, exe: PathBuf, qemu: PathBuf, qemu_args: &[&str]) -> Harness {
        Harness { exe, qemu, qemu_args: qemu_args.iter().map(|s| s.to_string()).collect(), ids: self.ids, sigs: self.sigs, problems: self.problems }
    }
}

/// A built harness and the qemu that runs it.
pub struct Harness {
    exe: PathBuf,
    qemu: PathBuf,
    qemu_args: Vec<String>,
    ids: HashMap<String, usize>,
    sigs: Vec<WireSig>,
    /// Why each spec left out is not in it.
    pub problems: HashMap<String, Problem>,
}

impl Harness {
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
            .args(&self.qemu_args)
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
            let name = self.qemu.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            return Err(format!(
                "{name} harness exited with {} after {} of {expect} result bytes: {}",
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
}

/// The harness executable for `units`, from the cache (a folder of
/// `misaal-oracle-{target}` in the temp folder, named by the hash of the
/// compiler, its `flags` and the C), or built there by `build(folder,
/// named units, executable)`.
pub fn cached_harness(target: &str, cc: &Path, flags: &str, units: Vec<String>, build: impl FnOnce(&Path, &[(String, String)], &Path) -> Result<(), String>) -> Result<PathBuf, String> {
    let key = content_key(&format!("{}\n{}\n{}", cc.display(), flags, units.join("\n")));
    let dir = std::env::temp_dir().join(format!("misaal-oracle-{target}")).join(format!("{key:016x}"));
    let exe = dir.join("harness");
    if !exe.is_file() {
        let named: Vec<(String, String)> = units.into_iter().enumerate().map(|(k, u)| (format!("u{k}"), u)).collect();
        build(&dir, &named, &exe)?;
    }
    Ok(exe)
}

/// Compiles `units` (name, source) in parallel into `dir` with
/// `compile(source, object)`, links the objects with `link(objects,
/// output)`, and renames the result to `exe` only when complete, so a
/// reader of the cache never sees half an executable.
pub fn compile_and_link(dir: &Path, units: &[(String, String)], compile: &(dyn Fn(&Path, &Path) -> Command + Sync), link: &dyn Fn(&[PathBuf], &Path) -> Command, exe: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tag = format!("{}.{:?}", std::process::id(), std::thread::current().id()).replace(['(', ')'], "");
    let tag = tag.as_str();
    let program = |c: &Command| c.get_program().to_string_lossy().into_owned();
    let results: Vec<Result<PathBuf, String>> = std::thread::scope(|s| {
        let hs: Vec<_> = units
            .iter()
            .map(|(name, src)| {
                s.spawn(move || {
                    let c = dir.join(format!("{name}.{tag}.c"));
                    let o = dir.join(format!("{name}.{tag}.o"));
                    std::fs::write(&c, src).map_err(|e| format!("{}: {e}", c.display()))?;
                    let mut cmd = compile(&c, &o);
                    let out = cmd.output().map_err(|e| format!("{}: {e}", program(&cmd)))?;
                    if !out.status.success() {
                        let err = String::from_utf8_lossy(&out.stderr);
                        return Err(format!("{} failed on {}:\n{}", program(&cmd), c.display(), err.lines().take(20).collect::<Vec<_>>().join("\n")));
                    }
                    Ok(o)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("compiler thread panicked".into()))).collect()
    });
    let objs: Vec<PathBuf> = results.into_iter().collect::<Result<_, _>>()?;
    let tmp = dir.join(format!("{}.{tag}.tmp", exe.file_name().and_then(|n| n.to_str()).unwrap_or("exe")));
    let mut cmd = link(&objs, &tmp);
    let out = cmd.output().map_err(|e| format!("{}: {e}", program(&cmd)))?;
    if !out.status.success() {
        return Err(format!("{} could not link {}: {}", program(&cmd), exe.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    for o in &objs {
        let _ = std::fs::remove_file(o);
        let _ = std::fs::remove_file(o.with_extension("c"));
    }
    std::fs::rename(&tmp, exe).map_err(|e| format!("{}: {e}", exe.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates_become_nested_switches_of_literals() {
        let code = switch_on_immediates("r = f(a0, M1, M2);".into(), &[(1, 0, 1), (2, 3, 3)], "exit(4);");
        assert_eq!(code, "switch (m1) { case 0: { switch (m2) { case 3: { r = f(a0, 0, 3); } break; default: exit(4); } } break; case 1: { switch (m2) { case 3: { r = f(a0, 1, 3); } break; default: exit(4); } } break; default: exit(4); }");
    }

    #[test]
    fn the_tables_list_every_chosen_function() {
        let c = Chosen {
            fns: vec!["void f0(){}\n".into(), "void f1(){}\n".into()],
            sigs: vec![WireSig { ops: vec![(16, None), (1, Some((0, 7)))], out_bytes: 16, ret_bits: 128 }, WireSig { ops: vec![(8, None)], out_bytes: 8, ret_bits: 64 }],
            ids: HashMap::new(),
            problems: HashMap::new(),
        };
        let units = c.units("P\n", "M\n", "size_t", "T\n");
        assert_eq!(units.len(), UNITS + 1);
        assert_eq!(units.iter().filter(|u| u.contains("void f0(){}") || u.contains("void f1(){}")).count(), 2);
        let main = units.last().unwrap();
        assert!(main.starts_with("M\n") && main.ends_with("T\n"), "{main}");
        assert!(main.contains("#define NSPECS 2u") && main.contains("INSZ[] = { 17, 8 }") && main.contains("OUTSZ[] = { 16, 8 }"), "{main}");
    }

    #[test]
    fn a_missing_tool_is_named() {
        let e = find_tools(&["misaal-no-such-tool-a", "sh"], "apt-get install it").unwrap_err();
        assert_eq!(e, "misaal-no-such-tool-a not found on PATH (apt-get install it)");
    }
}
