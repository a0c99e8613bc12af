//! What each spec has been checked against: the status table
//! `isa/specs/<target>/STATUS.tsv`, written by `misaal isa check` and
//! committed. Everything downstream of the semantics (classes, rule audits,
//! synthesis, compilation) reads only specs whose row says they met their
//! oracle, and only while the spec is unchanged since: each row carries a
//! digest of the unrolled semantics it was checked with.
//!
//! ```text
//! # intrinsic<TAB>status<TAB>cases<TAB>digest<TAB>evidence
//! _mm_add_epi8	silicon	1000	3f2a...	AMD Ryzen 9 7950X
//! _mm_dpbusd_avx_epi32	proven-twin	0	81c0...	= _mm_dpbusd_epi32 (Z3)
//! ```

use crate::diag::{Diagnostic, Span};
use crate::library::SpecLibrary;
use crate::sema::Semantics;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The fewest agreeing oracle cases that make a spec `silicon` or
/// `emulator`, unless the user asked for fewer (at least 1) with `--cases`.
pub const DEFAULT_CASES: u64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SpecStatus {
    /// Agreed with this machine's CPU on every case.
    Silicon,
    /// Agreed with an emulator (qemu) on every case.
    Emulator,
    /// Not runnable here, but proven equal by Z3 to a spec that is
    /// `silicon` or `emulator` (the same instruction in another encoding).
    ProvenTwin,
    /// Not runnable here and no verified twin: unverified.
    Skipped,
    /// Disagreed with its oracle.
    Failed,
}

impl SpecStatus {
    pub const ALL: [SpecStatus; 5] = [SpecStatus::Silicon, SpecStatus::Emulator, SpecStatus::ProvenTwin, SpecStatus::Skipped, SpecStatus::Failed];

    pub fn label(self) -> &'static str {
        match self {
            SpecStatus::Silicon => "silicon",
            SpecStatus::Emulator => "emulator",
            SpecStatus::ProvenTwin => "proven-twin",
            SpecStatus::Skipped => "skipped",
            SpecStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<SpecStatus> {
        Self::ALL.into_iter().find(|v| v.label() == s)
    }

    /// Whether a spec with this status may flow into classes, rules and code.
    pub fn is_verified(self) -> bool {
        matches!(self, SpecStatus::Silicon | SpecStatus::Emulator | SpecStatus::ProvenTwin)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct StatusRow {
    pub status: SpecStatus,
    pub cases: u64,
    /// [`digest`] of the semantics that were checked.
    pub digest: String,
    /// The CPU or emulator, or the twin and how it was proved.
    pub evidence: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusTable {
    pub rows: BTreeMap<String, StatusRow>,
}

const HEADER: &str = "# intrinsic\tstatus\tcases\tdigest\tevidence";

impl StatusTable {
    /// `<spec dir>/STATUS.tsv`.
    pub fn path_for(spec_dir: &Path) -> PathBuf {
        spec_dir.join("STATUS.tsv")
    }

    /// Reads a table; a missing file is an empty table (nothing verified).
    pub fn load(path: &Path) -> Result<StatusTable, Diagnostic> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&path.display().to_string(), &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StatusTable::default()),
            Err(e) => Err(Diagnostic::new(&path.display().to_string(), Span::default(), format!("cannot read the status table: {e}"))),
        }
    }

    pub fn parse(file: &str, text: &str) -> Result<StatusTable, Diagnostic> {
        let mut rows = BTreeMap::new();
        for (k, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |col: usize, msg: String| Diagnostic::new(file, Span { line: k as u32 + 1, col: col as u32 + 1 }, msg);
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() != 5 {
                return Err(at(0, format!("expected 5 tab-separated fields (intrinsic, status, cases, digest, evidence), found {}", f.len())));
            }
            let col = |i: usize| f[..i].iter().map(|s| s.len() + 1).sum::<usize>();
            let status = SpecStatus::parse(f[1]).ok_or_else(|| at(col(1), format!("unknown status `{}`; expected silicon, emulator, proven-twin, skipped or failed", f[1])))?;
            let cases = f[2].parse().map_err(|_| at(col(2), format!("expected a case count, found `{}`", f[2])))?;
            if rows.insert(f[0].to_string(), StatusRow { status, cases, digest: f[3].to_string(), evidence: f[4].to_string() }).is_some() {
                return Err(at(0, format!("a second row for `{}`", f[0])));
            }
        }
        Ok(StatusTable { rows })
    }

    /// Writes the table whole, through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut out = String::from(HEADER);
        out.push('\n');
        for (name, r) in &self.rows {
            out.push_str(&format!("{name}\t{}\t{}\t{}\t{}\n", r.status.label(), r.cases, r.digest, r.evidence.replace(['\t', '\n'], " ")));
        }
        if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(d)?;
        }
        let tmp = path.with_extension(format!("tsv.tmp{}", std::process::id()));
        std::fs::write(&tmp, out)?;
        std::fs::rename(&tmp, path)
    }

    /// `Ok` when the spec may be used: its row is verified and was made from
    /// these very semantics. Otherwise why not, in words.
    pub fn verified(&self, name: &str, sem: &Semantics) -> Result<(), String> {
        self.verified_digest(name, || Ok(digest(sem)))
    }

    /// [`verified`](Self::verified) for `lib`'s spec `name`, with the
    /// library's memoized digest (so a spec many rules use is digested once).
    /// A spec whose status rules it out is not unrolled.
    pub fn verified_in(&self, lib: &SpecLibrary, name: &str) -> Result<(), String> {
        self.verified_digest(name, || match lib.unrolled(name) {
            None => Err(format!("no spec `{name}`")),
            Some(Err(e)) => Err(format!("`{name}` does not unroll: {e}")),
            Some(Ok(_)) => Ok(lib.digest(name).expect("unrolled above").to_string()),
        })
    }

    fn verified_digest(&self, name: &str, digest: impl FnOnce() -> Result<String, String>) -> Result<(), String> {
        let Some(r) = self.rows.get(name) else { return Err(format!("`{name}` was never checked against its oracle")) };
        if !r.status.is_verified() {
            return Err(format!("`{name}` is {} ({}), so it is unverified", r.status.label(), r.evidence));
        }
        if r.digest != digest()? {
            return Err(format!("`{name}` changed since it was checked (status {})", r.status.label()));
        }
        Ok(())
    }
}

/// A 128-bit FNV-1a digest of `text` (two 64-bit streams), in hex: the
/// hash the spec and verdict digests use.
pub fn text_digest(text: &str) -> String {
    let fnv = |seed: u64| text.bytes().fold(seed, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("{:016x}{:016x}", fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4))
}

/// A stable 128-bit digest of unrolled semantics: operand widths and each
/// lane's expression, hashed structurally (a node by its operation and its
/// children's digests), so it does not depend on the order in which the
/// unroller happened to number nodes. Two specs with the same digest mean
/// the same thing.
pub fn digest(sem: &Semantics) -> String {
    let fnv = |seed: u64, text: &[u8]| text.iter().fold(seed, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3));
    let hash = |text: &str| (fnv(0xcbf2_9ce4_8422_2325, text.as_bytes()), fnv(0x8422_2325_cbf2_9ce4, text.as_bytes()));
    // Children come before their parents in a hash-consed DAG.
    let mut node_hash: Vec<(u64, u64)> = Vec::with_capacity(sem.dag.len());
    for n in sem.dag.nodes() {
        let mut text = format!("{:?}", n.map_children(|_| 0));
        for c in n.children() {
            let (a, b) = node_hash[c as usize];
            text.push_str(&format!("|{a:016x}{b:016x}"));
        }
        node_hash.push(hash(&text));
    }
    let mut text = format!("{:?}|{}|", sem.dag.operand_widths(), sem.result_width);
    for l in &sem.lanes {
        let (a, b) = node_hash[l.root as usize];
        text.push_str(&format!("{}:{}:{a:016x}{b:016x};", l.lo, l.width));
    }
    let (a, b) = hash(&text);
    format!("{a:016x}{b:016x}")
}

/// Specs left out of a verified library, with the reason.
pub type Excluded = Vec<(String, String)>;

impl SpecLibrary {
    /// Keeps only the specs `table` vouches for; returns the others.
    pub fn retain_verified(&mut self, table: &StatusTable) -> Excluded {
        let mut out = Vec::new();
        self.retain(|i, s| match table.verified(&i.name, s) {
            Ok(()) => true,
            Err(why) => {
                out.push((i.name.clone(), why));
                false
            }
        });
        out
    }
}
