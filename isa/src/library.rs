//! A target's spec library: every `.sema` file of one folder, checked and
//! unrolled. Functions (`def`) are shared by all files of the folder.
//!
//! Unrolling is the expensive part (1,806 x86 specs: ~0.7 s and ~150 MB),
//! and a compile touches a few dozen specs, so a library can also be loaded
//! [lazily](SpecLibrary::load_dir_lazy): parsed and name-checked now, each
//! spec unrolled (and digested) the first time it is asked for.

use crate::ast::{Def, Instr, SpecFile};
use crate::diag::{Diagnostic, Diagnostics};
use crate::sema::{Semantics, unroll};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// One spec's unrolled semantics, computed at most once.
type Unrolled = OnceLock<Result<Arc<Semantics>, Diagnostic>>;

pub struct SpecLibrary {
    instrs: Vec<Arc<Instr>>,
    semantics: Vec<Unrolled>,
    /// [`crate::status::digest`] of each spec's semantics, computed at most once.
    digests: Vec<OnceLock<String>>,
    /// Specs whose body was [released](SpecLibrary::release_bodies): parsed
    /// again from their source text when first unrolled.
    released: Vec<bool>,
    by_name: HashMap<String, usize>,
    defs: HashMap<String, Def>,
    /// Generic instructions, instantiated on demand.
    generics: HashMap<String, Arc<Instr>>,
    /// By generic name, then arguments: both levels look up borrowed keys,
    /// and the interpreter looks up one instance per op it runs.
    instances: Mutex<HashMap<String, HashMap<Vec<i128>, Instance>>>,
    /// Instantiated signatures (no unrolling), the same way.
    signatures: Mutex<HashMap<String, HashMap<Vec<i128>, Result<Arc<Instr>, Diagnostic>>>>,
    /// The source text each spec and function was parsed from.
    sources: SourceTexts,
    /// Digests recorded beforehand ([`use_digest_memo`](Self::use_digest_memo)).
    memo: Option<Arc<DigestMemo>>,
}

/// The name of a spec folder's digest memo: `NAME<TAB>TEXT_KEY<TAB>DIGEST`
/// rows, written by `misaal isa digests`.
pub const DIGEST_MEMO_FILE: &str = "DIGESTS.tsv";

/// Semantics digests recorded beforehand, each with the
/// [`text_key`](SpecLibrary::text_key) of what it was computed from. A spec
/// is unrolled only to be digested when a compile checks its status
/// against the evidence (a few hundred specs, a fifth of a compile's
/// time); a row whose key matches the spec's current key is that digest.
struct DigestMemo {
    engine: String,
    rows: HashMap<String, (String, String)>,
}

type Instance = Result<(Arc<Instr>, Arc<Semantics>), Diagnostic>;

/// The `*.sema` files of a spec folder, sorted by name: what
/// [`SpecLibrary::load_dir`] reads, and what the build scripts that generate
/// code per spec (the silicon oracle, the timing kernels) walk.
pub fn spec_files(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "sema")).collect();
    files.sort();
    Ok(files)
}

impl SpecLibrary {
    /// Loads every `*.sema` file of `dir` (sorted by name), unrolling every
    /// spec, so that any spec that does not unroll is reported now.
    pub fn load_dir(dir: &Path) -> Result<SpecLibrary, Diagnostics> {
        Self::from_sources(&Self::read_dir(dir)?)
    }

    /// [`load_dir`](Self::load_dir) without unrolling: syntax, duplicate
    /// and name errors are reported now; a spec is unrolled when first
    /// asked for, and one that does not unroll is then absent from
    /// [`get`](Self::get) and [`iter`](Self::iter), with its error from
    /// [`unrolled`](Self::unrolled).
    pub fn load_dir_lazy(dir: &Path) -> Result<SpecLibrary, Diagnostics> {
        Self::parse_sources(&Self::read_dir(dir)?)
    }

    fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, Diagnostics> {
        let dir_name = dir.display().to_string();
        let io = |e: std::io::Error| Diagnostics::from(Diagnostic::new(&dir_name, Default::default(), format!("cannot read spec folder: {e}")));
        let mut sources = Vec::new();
        for p in spec_files(dir).map_err(io)? {
            let text = std::fs::read_to_string(&p).map_err(io)?;
            sources.push((p.display().to_string(), text));
        }
        Ok(sources)
    }

    /// Parses, checks and unrolls `(file name, text)` pairs. Reports every
    /// error it finds, not only the first.
    pub fn from_sources(sources: &[(String, String)]) -> Result<SpecLibrary, Diagnostics> {
        let (lib, mut errors) = Self::parse(sources);
        errors.extend((0..lib.instrs.len()).filter_map(|k| lib.unroll_at(k).err().cloned()));
        if !errors.is_empty() {
            return Err(Diagnostics(errors));
        }
        Ok(lib)
    }

    /// Parses and name-checks, unrolling nothing.
    fn parse_sources(sources: &[(String, String)]) -> Result<SpecLibrary, Diagnostics> {
        let (lib, errors) = Self::parse(sources);
        if !errors.is_empty() {
            return Err(Diagnostics(errors));
        }
        Ok(lib)
    }

    /// The library of what parsed, and every error found on the way.
    fn parse(sources: &[(String, String)]) -> (SpecLibrary, Vec<Diagnostic>) {
        let mut errors = Vec::new();
        // Files parse independently (x86's 31 files are ~40 ms on one
        // thread), so in parallel; `collect` keeps their order, and so
        // the errors' and the specs'.
        use rayon::prelude::*;
        let results: Vec<Result<SpecFile, Diagnostic>> = sources.par_iter().map(|(file, text)| crate::parser::parse_file(file, text)).collect();
        // By index into `sources`, for [`SourceTexts::of`].
        let mut parsed: Vec<(usize, SpecFile)> = Vec::new();
        for (k, r) in results.into_iter().enumerate() {
            match r {
                Ok(f) => parsed.push((k, f)),
                Err(e) => errors.push(e),
            }
        }
        let sources_text = SourceTexts::of(sources, &parsed);
        let mut defs: HashMap<String, Def> = HashMap::new();
        let mut instrs: Vec<Arc<Instr>> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut generics: HashMap<String, Arc<Instr>> = HashMap::new();
        for (_, f) in parsed {
            for d in f.defs {
                if let Some(prev) = defs.get(&d.name) {
                    errors.push(Diagnostic::new(
                        &d.file,
                        d.span,
                        format!("duplicate function `{}` (first defined at {}:{}:{})", d.name, prev.file, prev.span.line, prev.span.col),
                    ));
                } else {
                    defs.insert(d.name.clone(), d);
                }
            }
            for i in f.instrs {
                if let Some(prev) = generics.get(&i.name).map(|g: &Arc<Instr>| (g.file.clone(), g.span)).or_else(|| by_name.get(&i.name).map(|&p| (instrs[p].file.clone(), instrs[p].span))) {
                    errors.push(Diagnostic::new(
                        &i.file,
                        i.span,
                        format!("duplicate intrinsic `{}` (first defined at {}:{}:{})", i.name, prev.0, prev.1.line, prev.1.col),
                    ));
                    continue;
                }
                if i.is_generic() {
                    generics.insert(i.name.clone(), Arc::new(i));
                    continue;
                }
                if let Some(&prev) = by_name.get(&i.name) {
                    let p = &instrs[prev];
                    errors.push(Diagnostic::new(
                        &i.file,
                        i.span,
                        format!("duplicate intrinsic `{}` (first defined at {}:{}:{})", i.name, p.file, p.span.line, p.span.col),
                    ));
                } else {
                    by_name.insert(i.name.clone(), instrs.len());
                    instrs.push(Arc::new(i));
                }
            }
        }
        let semantics = instrs.iter().map(|_| OnceLock::new()).collect();
        let digests = instrs.iter().map(|_| OnceLock::new()).collect();
        let released = vec![false; instrs.len()];
        let lib = SpecLibrary { instrs, semantics, digests, released, by_name, defs, generics, instances: Mutex::new(HashMap::new()), signatures: Mutex::new(HashMap::new()), sources: sources_text, memo: None };
        (lib, errors)
    }

    fn unroll_at(&self, k: usize) -> Result<&Arc<Semantics>, &Diagnostic> {
        self.semantics[k]
            .get_or_init(|| {
                if self.released[k] {
                    unroll(&self.reparse(k)?, &self.defs).map(Arc::new)
                } else {
                    unroll(&self.instrs[k], &self.defs).map(Arc::new)
                }
            })
            .as_ref()
    }

    /// Spec `k` with its body, parsed again from its own source text (see
    /// [`SourceTexts`]), placed at its line and column so that the spans,
    /// and any error, read as in the file.
    fn reparse(&self, k: usize) -> Result<Instr, Diagnostic> {
        let i = &self.instrs[k];
        let gone = || Diagnostic::new(&i.file, i.span, format!("`{}`: no source text to parse its body from", i.name));
        let (file, range) = self.sources.items.get(&i.name).ok_or_else(gone)?;
        let text = &self.sources.files[*file].1;
        let before = &text[..range.start];
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let mut src = "\n".repeat(before.matches('\n').count());
        src.extend(std::iter::repeat_n(' ', before[line_start..].chars().count()));
        src.push_str(&text[range.clone()]);
        let parsed = crate::parser::parse_file(&i.file, &src)?;
        parsed.instrs.into_iter().find(|p| p.name == i.name).ok_or_else(gone)
    }

    /// Drops the bodies of the concrete specs not unrolled yet, keeping
    /// their signatures; each is parsed again from its source text the first
    /// time it is unrolled. A compile unrolls the few hundred specs its rules
    /// name, and x86's 1,808 bodies are ~11 MB of syntax tree.
    pub fn release_bodies(&mut self) {
        for k in 0..self.instrs.len() {
            if self.semantics[k].get().is_none() && !self.instrs[k].body.is_empty() {
                self.instrs[k] = Arc::new(self.instrs[k].signature());
                self.released[k] = true;
            }
        }
    }

    /// Keeps the concrete specs for which `keep` holds (generic ones stay);
    /// a spec that does not unroll is dropped.
    pub fn retain(&mut self, mut keep: impl FnMut(&Instr, &Semantics) -> bool) {
        let kept: Vec<bool> = (0..self.instrs.len()).map(|k| self.unroll_at(k).is_ok_and(|s| keep(&self.instrs[k], s))).collect();
        let mut flags = kept.iter();
        self.instrs.retain(|_| *flags.next().expect("one flag per spec"));
        let mut flags = kept.iter();
        self.semantics.retain(|_| *flags.next().expect("one flag per spec"));
        let mut flags = kept.iter();
        self.digests.retain(|_| *flags.next().expect("one flag per spec"));
        let mut flags = kept.iter();
        self.released.retain(|_| *flags.next().expect("one flag per spec"));
        self.by_name = self.instrs.iter().enumerate().map(|(k, i)| (i.name.clone(), k)).collect();
    }

    /// A library of the concrete specs for which `keep` holds, sharing this
    /// one's parsed and already-unrolled specs (generic ones stay).
    pub fn subset(&self, keep: impl Fn(&Instr) -> bool) -> SpecLibrary {
        let kept: Vec<usize> = (0..self.instrs.len()).filter(|&k| keep(&self.instrs[k])).collect();
        let instrs: Vec<Arc<Instr>> = kept.iter().map(|&k| self.instrs[k].clone()).collect();
        SpecLibrary {
            by_name: instrs.iter().enumerate().map(|(k, i)| (i.name.clone(), k)).collect(),
            instrs,
            semantics: kept.iter().map(|&k| self.semantics[k].clone()).collect(),
            digests: kept.iter().map(|&k| self.digests[k].clone()).collect(),
            released: kept.iter().map(|&k| self.released[k]).collect(),
            defs: self.defs.clone(),
            generics: self.generics.clone(),
            instances: Mutex::default(),
            signatures: Mutex::default(),
            sources: self.sources.clone(),
            memo: self.memo.clone(),
        }
    }

    pub fn instrs(&self) -> &[Arc<Instr>] {
        &self.instrs
    }
    pub fn len(&self) -> usize {
        self.instrs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }
    /// A spec and its semantics (unrolled now if the library is lazy);
    /// `None` if there is no such spec or it does not unroll.
    pub fn get(&self, name: &str) -> Option<(&Arc<Instr>, &Arc<Semantics>)> {
        self.unrolled(name)?.ok()
    }
    /// A spec without unrolling it.
    pub fn instr(&self, name: &str) -> Option<&Arc<Instr>> {
        self.by_name.get(name).map(|&k| &self.instrs[k])
    }
    /// A spec and its semantics, or why it does not unroll.
    pub fn unrolled(&self, name: &str) -> Option<Result<(&Arc<Instr>, &Arc<Semantics>), &Diagnostic>> {
        let &k = self.by_name.get(name)?;
        Some(self.unroll_at(k).map(|s| (&self.instrs[k], s)))
    }
    /// The digest of a spec's semantics ([`crate::status::digest`]),
    /// computed once; `None` as for [`get`](Self::get).
    pub fn digest(&self, name: &str) -> Option<&str> {
        let &k = self.by_name.get(name)?;
        if let Some(d) = self.digests[k].get() {
            return Some(d);
        }
        if let Some(d) = self.memo_digest(name) {
            return Some(self.digests[k].get_or_init(|| d));
        }
        let sem = self.unroll_at(k).ok()?;
        Some(self.digests[k].get_or_init(|| crate::status::digest(sem)))
    }

    /// A digest of everything spec `name`'s semantics are computed from:
    /// its source text, every function's ([`defs_digest`](Self::defs_digest))
    /// and `engine`, a digest of the code that parses, unrolls and digests
    /// them (the caller's: `misaal_verifier::prekey::ENGINE_DIGEST` covers
    /// `isa/src`). `None` where [`spec_source`](Self::spec_source) is.
    pub fn text_key(&self, name: &str, engine: &str) -> Option<String> {
        let src = self.spec_source(name)?;
        Some(crate::status::text_digest(&format!("spec-text 1\nengine {engine}\ndefs {}\n{src}", self.defs_digest())))
    }

    /// The memo's digest for `name`, if its row was computed from the spec's
    /// current text.
    fn memo_digest(&self, name: &str) -> Option<String> {
        let memo = self.memo.as_ref()?;
        let (key, digest) = memo.rows.get(name)?;
        (self.text_key(name, &memo.engine).as_deref() == Some(key.as_str())).then(|| digest.clone())
    }

    /// Reads the digest memo at `path` ([`DIGEST_MEMO_FILE`]; none there is
    /// an empty memo), whose keys were computed with `engine` (see
    /// [`text_key`](Self::text_key)): [`digest`](Self::digest) then takes a
    /// spec's digest from its row when the row's key is the spec's current
    /// one, without unrolling it. A stale row is ignored. Returns the
    /// number of rows.
    pub fn use_digest_memo(&mut self, path: &Path, engine: &str) -> Result<usize, Diagnostic> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(Diagnostic::new(&path.display().to_string(), Default::default(), format!("cannot read the digest memo: {e}"))),
        };
        let mut rows = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            let hex = |s: &str| s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit());
            if f.len() != 3 || !hex(f[1]) || !hex(f[2]) {
                let span = crate::diag::Span { line: n as u32 + 1, col: 1 };
                return Err(Diagnostic::new(&path.display().to_string(), span, "expected NAME<TAB>TEXT_KEY<TAB>DIGEST (two 32-digit hex digests)".to_string()));
            }
            rows.insert(f[0].to_string(), (f[1].to_string(), f[2].to_string()));
        }
        let n = rows.len();
        self.memo = Some(Arc::new(DigestMemo { engine: engine.to_string(), rows }));
        Ok(n)
    }

    /// The digest memo of every concrete spec that unrolls (unrolling
    /// them all), keyed with `engine`: what `misaal isa digests` writes.
    pub fn digest_memo_text(&self, engine: &str) -> String {
        let mut rows: Vec<String> = (0..self.instrs.len())
            .filter_map(|k| {
                let name = &self.instrs[k].name;
                let sem = self.unroll_at(k).ok()?;
                let d = self.digests[k].get_or_init(|| crate::status::digest(sem));
                Some(format!("{name}\t{}\t{d}\n", self.text_key(name, engine)?))
            })
            .collect();
        rows.sort();
        let mut out = String::from("# Semantics digests of this folder's specs, each with a digest of what it is computed from\n# (spec text, functions, the unroller's code): a compile takes a spec's digest from here instead\n# of unrolling it. Written by `misaal isa digests`; a stale row is ignored.\n");
        out.extend(rows);
        out
    }
    /// Every spec that unrolls (all of them, once the library is loaded
    /// eagerly), with its semantics.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<Instr>, &Arc<Semantics>)> {
        (0..self.instrs.len()).filter_map(|k| self.unroll_at(k).ok().map(|s| (&self.instrs[k], s)))
    }
    pub fn defs(&self) -> &HashMap<String, Def> {
        &self.defs
    }
    pub fn generic(&self, name: &str) -> Option<&Arc<Instr>> {
        self.generics.get(name)
    }
    pub fn generic_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.generics.keys().map(|s| s.as_str()).collect();
        v.sort();
        v
    }

    /// Instantiates and unrolls a generic instruction (cached).
    pub fn instantiate(&self, name: &str, args: &[i128]) -> Result<(Arc<Instr>, Arc<Semantics>), Diagnostic> {
        let Some(g) = self.generics.get(name) else {
            return Err(Diagnostic::new(name, Default::default(), format!("no generic instruction `{name}`")));
        };
        if let Some(r) = self.instances.lock().expect("instance cache").get(name).and_then(|m| m.get(args)) {
            return r.clone();
        }
        let r = g.instantiate(args).and_then(|i| {
            let s = unroll(&i, &self.defs)?;
            Ok((Arc::new(i), Arc::new(s)))
        });
        self.instances.lock().expect("instance cache").entry(name.to_string()).or_default().insert(args.to_vec(), r.clone());
        r
    }

    /// Drops the bodies of the concrete specs `keep` rejects (a compile
    /// keeps only the specs its status table vouches for: ~10 MB of syntax
    /// less for x86). Such a spec keeps its signature, and asking for its
    /// semantics gives the error `why` (never an empty body's semantics).
    pub fn withhold_bodies(&mut self, keep: impl Fn(&Instr) -> bool, why: &str) {
        for k in 0..self.instrs.len() {
            if keep(&self.instrs[k]) || self.semantics[k].get().is_some() {
                continue;
            }
            let i = &self.instrs[k];
            let err = Diagnostic::new(&i.file, i.span, format!("`{}`: semantics not loaded ({why})", i.name));
            self.semantics[k] = OnceLock::from(Err(err));
            self.instrs[k] = Arc::new(self.instrs[k].signature());
        }
    }

    /// Instantiates a generic instruction's signature (no body, no
    /// unrolling; cached).
    pub fn instantiate_signature(&self, name: &str, args: &[i128]) -> Result<Arc<Instr>, Diagnostic> {
        let Some(g) = self.generics.get(name) else {
            return Err(Diagnostic::new(name, Default::default(), format!("no generic instruction `{name}`")));
        };
        if let Some(r) = self.signatures.lock().expect("signature cache").get(name).and_then(|m| m.get(args)) {
            return r.clone();
        }
        let r = g.signature().instantiate(args).map(Arc::new);
        self.signatures.lock().expect("signature cache").entry(name.to_string()).or_default().insert(args.to_vec(), r.clone());
        r
    }

    /// The source text of the spec (concrete or generic) named `name`, as
    /// [`SourceTexts`] cuts it, after its file's stem (the spec's family).
    /// With [`defs_digest`](Self::defs_digest) it decides the spec's
    /// semantics: what a rule instance's pre-key digests. `None` for a spec
    /// whose semantics are withheld or known not to unroll (the text would
    /// vouch for semantics this library does not give).
    pub fn spec_source(&self, name: &str) -> Option<String> {
        match self.by_name.get(name) {
            Some(&k) if matches!(self.semantics[k].get(), Some(Err(_))) => return None,
            Some(_) => {}
            // Not in the library (or no longer, see `retain`).
            None if !self.generics.contains_key(name) => return None,
            None => {}
        }
        let (file, range) = self.sources.items.get(name)?;
        let (stem, text) = &self.sources.files[*file];
        Some(format!("{stem}\n{}", &text[range.clone()]))
    }

    /// A digest of the source text of every function (`def`) of the
    /// library, by name (any spec may call any of them), computed once.
    pub fn defs_digest(&self) -> &str {
        self.sources.defs_digest.get_or_init(|| {
            let mut defs: Vec<(&String, &(usize, std::ops::Range<usize>))> = self.sources.defs.iter().collect();
            defs.sort_by(|a, b| a.0.cmp(b.0));
            let text: String = defs.iter().map(|(name, (file, range))| format!("def {name} in {}\n{}\n", self.sources.files[*file].0, &self.sources.files[*file].1[range.clone()])).collect();
            crate::status::text_digest(&text)
        })
    }

    /// Unrolls an instruction that is not (or no longer) in the library, e.g.
    /// a mutated copy, against this library's functions.
    pub fn unroll(&self, instr: &Instr) -> Result<Semantics, Diagnostic> {
        unroll(instr, &self.defs)
    }
}


/// Where each item (`instr` or `def`) of the library's files lies in their
/// text. An item's text runs from its keyword to the next item's (the
/// first item's from the start of the file), so every character of a file
/// is in exactly one item, and an item's tokens, hence its syntax tree,
/// are all in its own text: the same text parses to the same spec.
#[derive(Clone, Default)]
struct SourceTexts {
    /// Each file's stem and text.
    files: Vec<(String, Arc<str>)>,
    /// Specs by name: file index and byte range (the first of duplicates).
    items: HashMap<String, (usize, std::ops::Range<usize>)>,
    defs: HashMap<String, (usize, std::ops::Range<usize>)>,
    /// [`SpecLibrary::defs_digest`], computed once.
    defs_digest: OnceLock<String>,
}

impl SourceTexts {
    fn of(sources: &[(String, String)], parsed: &[(usize, SpecFile)]) -> SourceTexts {
        let mut out = SourceTexts::default();
        for (k, f) in parsed {
            let (file, text) = &sources[*k];
            let stem = Path::new(file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
            let at = |span: crate::diag::Span| byte_offset(text, &line_starts, span.line, span.col);
            let mut starts: Vec<(usize, bool, &str)> = f.instrs.iter().map(|i| (at(i.span), false, i.name.as_str())).chain(f.defs.iter().map(|d| (at(d.span), true, d.name.as_str()))).collect();
            starts.sort();
            let index = out.files.len();
            for (n, &(start, is_def, name)) in starts.iter().enumerate() {
                let from = if n == 0 { 0 } else { start };
                let to = starts.get(n + 1).map_or(text.len(), |s| s.0);
                let map = if is_def { &mut out.defs } else { &mut out.items };
                map.entry(name.to_string()).or_insert((index, from..to));
            }
            out.files.push((stem, Arc::from(text.as_str())));
        }
        out
    }
}

/// The byte offset of a 1-based line and column (in characters, as the
/// lexer counts them), given where each line starts; the end of the text
/// if past it.
fn byte_offset(text: &str, line_starts: &[usize], line: u32, col: u32) -> usize {
    let Some(&start) = line_starts.get(line.saturating_sub(1) as usize) else { return text.len() };
    text[start..].char_indices().nth(col.saturating_sub(1) as usize).map_or(text.len(), |(i, _)| start + i)
}
