//! A target's spec library: every `.sema` file of one folder, checked and
//! unrolled. Functions (`def`) are shared by all files of the folder.

use crate::ast::{Def, Instr, SpecFile};
use crate::diag::{Diagnostic, Diagnostics};
use crate::sema::{Semantics, unroll};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub struct SpecLibrary {
    instrs: Vec<Arc<Instr>>,
    semantics: Vec<Arc<Semantics>>,
    by_name: HashMap<String, usize>,
    defs: HashMap<String, Def>,
    /// Generic instructions, instantiated on demand.
    generics: HashMap<String, Arc<Instr>>,
    /// By generic name, then arguments: both levels look up borrowed keys,
    /// and the interpreter looks up one instance per op it runs.
    instances: Mutex<HashMap<String, HashMap<Vec<i128>, Instance>>>,
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
    /// Loads every `*.sema` file of `dir` (sorted by name).
    pub fn load_dir(dir: &Path) -> Result<SpecLibrary, Diagnostics> {
        let dir_name = dir.display().to_string();
        let io = |e: std::io::Error| Diagnostics::from(Diagnostic::new(&dir_name, Default::default(), format!("cannot read spec folder: {e}")));
        let mut sources = Vec::new();
        for p in spec_files(dir).map_err(io)? {
            let text = std::fs::read_to_string(&p).map_err(io)?;
            sources.push((p.display().to_string(), text));
        }
        Self::from_sources(&sources)
    }

    /// Parses, checks and unrolls `(file name, text)` pairs. Reports every
    /// error it finds, not only the first.
    pub fn from_sources(sources: &[(String, String)]) -> Result<SpecLibrary, Diagnostics> {
        let mut errors = Vec::new();
        let mut parsed: Vec<SpecFile> = Vec::new();
        for (file, text) in sources {
            match crate::parser::parse_file(file, text) {
                Ok(f) => parsed.push(f),
                Err(e) => errors.push(e),
            }
        }
        let mut defs: HashMap<String, Def> = HashMap::new();
        let mut instrs: Vec<Arc<Instr>> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut generics: HashMap<String, Arc<Instr>> = HashMap::new();
        for f in parsed {
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
        let mut semantics = Vec::with_capacity(instrs.len());
        for i in &instrs {
            match unroll(i, &defs) {
                Ok(s) => semantics.push(Arc::new(s)),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Err(Diagnostics(errors));
        }
        Ok(SpecLibrary { instrs, semantics, by_name, defs, generics, instances: Mutex::new(HashMap::new()) })
    }

    /// Keeps the concrete specs for which `keep` holds (generic ones stay).
    pub fn retain(&mut self, mut keep: impl FnMut(&Instr, &Semantics) -> bool) {
        let (instrs, semantics): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.instrs).into_iter().zip(std::mem::take(&mut self.semantics)).filter(|(i, s)| keep(i, s)).unzip();
        self.by_name = instrs.iter().enumerate().map(|(k, i)| (i.name.clone(), k)).collect();
        self.instrs = instrs;
        self.semantics = semantics;
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
    pub fn get(&self, name: &str) -> Option<(&Arc<Instr>, &Arc<Semantics>)> {
        self.by_name.get(name).map(|&i| (&self.instrs[i], &self.semantics[i]))
    }
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<Instr>, &Arc<Semantics>)> {
        self.instrs.iter().zip(&self.semantics)
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

    /// Unrolls an instruction that is not (or no longer) in the library, e.g.
    /// a mutated copy, against this library's functions.
    pub fn unroll(&self, instr: &Instr) -> Result<Semantics, Diagnostic> {
        unroll(instr, &self.defs)
    }
}

