//! Evidence that a spec met its oracle, kept per machine:
//! `isa/specs/<target>/evidence/<machine>.tsv`, one file per CPU (x86) or
//! emulator build (qemu-aarch64, qemu-hexagon), committed. A row is a fact
//! about one spec text (its digest) on one machine, so it stays true
//! whatever machine runs `misaal isa check` next; only that machine's own
//! file is ever rewritten by a check. [`crate::status::StatusTable`] derives
//! each spec's status from all files together.
//!
//! ```text
//! # intrinsic	status	cases	seed	digest	cpu	family	model	stepping	features	date	version	twin
//! _mm_add_epi8	silicon	10000	120299674755436	3f2a...	AMD EPYC	25	17	1	sse2	2026-11-27	0.1.0 (702fd8e)	-
//! ```
//!
//! `unknown` marks a field nobody recorded (rows migrated from the old
//! single status table); `-` marks one that does not apply (an emulator has
//! no CPUID family; a spec with no twin). `skipped` is not evidence and has
//! no row.

use crate::diag::{Diagnostic, Span};
use crate::status::SpecStatus;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folder of a spec folder's evidence files.
pub fn evidence_dir(spec_dir: &Path) -> PathBuf {
    spec_dir.join("evidence")
}

pub const HEADER: &str = "# intrinsic\tstatus\tcases\tseed\tdigest\tcpu\tfamily\tmodel\tstepping\tfeatures\tdate\tversion\ttwin";
const FIELDS: usize = 13;

/// What ran the cases: a CPU by its `/proc/cpuinfo` identity, or an
/// emulator by its version line (family, model and stepping `-`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Machine {
    pub cpu: String,
    pub family: String,
    pub model: String,
    pub stepping: String,
}

impl Machine {
    /// A file name for the machine: the CPU name and its family, model and
    /// stepping for a CPU (`amd-epyc-f25-m17-s1`); for an emulator its
    /// program, version and `-cpu` (`qemu-aarch64-7.2.22-max`).
    pub fn slug(&self) -> String {
        if self.family == "-" {
            let words: Vec<&str> = self.cpu.split_whitespace().collect();
            let version = words.iter().skip_while(|w| **w != "version").nth(1).copied().unwrap_or("unknown");
            let cpu = words.iter().skip_while(|w| **w != "-cpu").nth(1).copied().unwrap_or("default");
            return slug(&format!("{} {version} {cpu}", words.first().copied().unwrap_or("emulator")));
        }
        let known = [&self.family, &self.model, &self.stepping].iter().all(|f| *f != "unknown");
        if known {
            slug(&format!("{} f{} m{} s{}", self.cpu, self.family, self.model, self.stepping))
        } else {
            slug(&format!("{} unknown", self.cpu))
        }
    }

    /// `AMD EPYC (family 25, model 17, stepping 1)`, or the emulator line.
    pub fn describe(&self) -> String {
        if self.family == "-" {
            self.cpu.clone()
        } else {
            format!("{} (family {}, model {}, stepping {})", self.cpu, self.family, self.model, self.stepping)
        }
    }

    /// This CPU, from `/proc/cpuinfo` (fields it lacks are `unknown`).
    pub fn this_cpu() -> Machine {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            info.lines()
                .take_while(|l| !l.trim().is_empty())
                .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim() == key).map(|(_, v)| v.trim().to_string()))
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "unknown".into())
        };
        Machine { cpu: field("model name"), family: field("cpu family"), model: field("model"), stepping: field("stepping") }
    }

    /// An emulator, named by its version line.
    pub fn emulator(version_line: &str) -> Machine {
        Machine { cpu: version_line.to_string(), family: "-".into(), model: "-".into(), stepping: "-".into() }
    }
}

/// Lower case, runs of anything but `[a-z0-9.]` as one `-`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvidenceRow {
    pub intrinsic: String,
    /// `silicon`, `emulator`, `proven-twin` or `failed`.
    pub status: SpecStatus,
    /// Agreeing cases (0 for a twin).
    pub cases: u64,
    /// The case generator's seed; `None` when not recorded.
    pub seed: Option<u64>,
    /// [`crate::status::digest`] of the semantics that were checked.
    pub digest: String,
    pub machine: Machine,
    /// The CPUID features the spec needs (its `[x86 ...]` line).
    pub features: Vec<String>,
    /// `YYYY-MM-DD` or `unknown`.
    pub date: String,
    /// misaal's version and git revision, or `unknown`.
    pub version: String,
    /// For `proven-twin`: the spec Z3 proved it equal to, and that spec's
    /// digest then (the twin counts only while its own evidence is current).
    pub twin: Option<(String, String)>,
}

impl EvidenceRow {
    fn line(&self) -> String {
        let clean = |s: &str| s.replace(['\t', '\n'], " ");
        let features = if self.features.is_empty() { "-".to_string() } else { self.features.join(",") };
        let twin = self.twin.as_ref().map(|(n, d)| format!("{n}@{d}")).unwrap_or_else(|| "-".into());
        let seed = self.seed.map(|s| s.to_string()).unwrap_or_else(|| "unknown".into());
        let m = &self.machine;
        [
            self.intrinsic.clone(),
            self.status.label().into(),
            self.cases.to_string(),
            seed,
            self.digest.clone(),
            clean(&m.cpu),
            clean(&m.family),
            clean(&m.model),
            clean(&m.stepping),
            features,
            clean(&self.date),
            clean(&self.version),
            twin,
        ]
        .join("\t")
    }
}

/// One machine's evidence file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvidenceFile {
    /// Lines starting with `#` after the header (provenance notes), kept as written.
    pub notes: Vec<String>,
    pub rows: BTreeMap<String, EvidenceRow>,
}

impl EvidenceFile {
    /// Reads a file; a missing file is empty.
    pub fn load(path: &Path) -> Result<EvidenceFile, Diagnostic> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&path.display().to_string(), &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(EvidenceFile::default()),
            Err(e) => Err(Diagnostic::new(&path.display().to_string(), Span::default(), format!("cannot read the evidence file: {e}"))),
        }
    }

    pub fn parse(file: &str, text: &str) -> Result<EvidenceFile, Diagnostic> {
        let mut out = EvidenceFile::default();
        for (k, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line == HEADER {
                continue;
            }
            if line.starts_with('#') {
                out.notes.push(line.to_string());
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            let col = |i: usize| f[..i.min(f.len())].iter().map(|s| s.len() + 1).sum::<usize>();
            let at = |i: usize, msg: String| Diagnostic::new(file, Span { line: k as u32 + 1, col: col(i) as u32 + 1 }, msg);
            if f.len() != FIELDS {
                return Err(at(0, format!("expected {FIELDS} tab-separated fields ({}), found {}", &HEADER[2..].replace('\t', ", "), f.len())));
            }
            let status = match SpecStatus::parse(f[1]) {
                Some(SpecStatus::Skipped) => return Err(at(1, "`skipped` is not evidence; expected silicon, emulator, proven-twin or failed".into())),
                Some(s) => s,
                None => return Err(at(1, format!("unknown status `{}`; expected silicon, emulator, proven-twin or failed", f[1]))),
            };
            let cases = f[2].parse().map_err(|_| at(2, format!("expected a case count, found `{}`", f[2])))?;
            let seed = match f[3] {
                "unknown" => None,
                s => Some(s.parse().map_err(|_| at(3, format!("expected a seed (an integer) or `unknown`, found `{s}`")))?),
            };
            let is_digest = |d: &str| d.len() == 32 && d.bytes().all(|b| b.is_ascii_hexdigit());
            if !is_digest(f[4]) {
                return Err(at(4, format!("expected a spec digest (32 hex digits), found `{}`", f[4])));
            }
            for i in 6..9 {
                if !(f[i] == "unknown" || f[i] == "-" || (!f[i].is_empty() && f[i].bytes().all(|b| b.is_ascii_digit()))) {
                    return Err(at(i, format!("expected a number, `unknown` or `-` (an emulator), found `{}`", f[i])));
                }
            }
            let date_ok = f[10] == "unknown" || (f[10].len() == 10 && f[10].bytes().enumerate().all(|(j, b)| if j == 4 || j == 7 { b == b'-' } else { b.is_ascii_digit() }));
            if !date_ok {
                return Err(at(10, format!("expected a date YYYY-MM-DD or `unknown`, found `{}`", f[10])));
            }
            let twin = match (status, f[12]) {
                (SpecStatus::ProvenTwin, t) => match t.split_once('@') {
                    Some((n, d)) if !n.is_empty() && is_digest(d) => Some((n.to_string(), d.to_string())),
                    _ => return Err(at(12, format!("a proven-twin row names its twin as NAME@DIGEST, found `{t}`"))),
                },
                (_, "-") => None,
                (_, t) => return Err(at(12, format!("only a proven-twin row names a twin; expected `-`, found `{t}`"))),
            };
            let row = EvidenceRow {
                intrinsic: f[0].to_string(),
                status,
                cases,
                seed,
                digest: f[4].to_string(),
                machine: Machine { cpu: f[5].to_string(), family: f[6].to_string(), model: f[7].to_string(), stepping: f[8].to_string() },
                features: if f[9] == "-" { Vec::new() } else { f[9].split(',').map(str::to_string).collect() },
                date: f[10].to_string(),
                version: f[11].to_string(),
                twin,
            };
            if out.rows.insert(row.intrinsic.clone(), row).is_some() {
                return Err(at(0, format!("a second row for `{}`", f[0])));
            }
        }
        Ok(out)
    }

    pub fn render(&self) -> String {
        let mut out = String::from(HEADER);
        out.push('\n');
        for n in &self.notes {
            out.push_str(n);
            out.push('\n');
        }
        for r in self.rows.values() {
            out.push_str(&r.line());
            out.push('\n');
        }
        out
    }

    /// Writes the file whole, through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        write_atomic(path, &self.render())
    }
}

/// Writes `text` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d)?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Every `*.tsv` of an evidence folder, sorted by name; a missing folder has none.
pub fn load_dir(dir: &Path) -> Result<Vec<(PathBuf, EvidenceFile)>, Diagnostic> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Diagnostic::new(&dir.display().to_string(), Span::default(), format!("cannot read the evidence folder: {e}"))),
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "tsv") && p.is_file()).collect();
    paths.sort();
    paths.into_iter().map(|p| EvidenceFile::load(&p).map(|f| (p, f))).collect()
}
