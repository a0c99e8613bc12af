//! What each spec has been checked against, derived from the evidence of
//! every machine (`isa/specs/<target>/evidence/*.tsv`, see
//! [`crate::evidence`]). Everything downstream of the semantics (classes,
//! rule audits, synthesis, compilation) reads only specs whose status says
//! they met their oracle, and only while the spec is unchanged since: each
//! row carries a digest of the unrolled semantics it was checked with, and a
//! row whose digest is not the spec's current one counts for nothing.
//!
//! The one way to the status of a spec folder is
//! [`StatusTable::for_spec_dir`]. For one spec text (digest) the status is
//! `silicon` if any machine's row says so, else `emulator`, else
//! `proven-twin` when a row names a twin that itself has a current
//! `silicon`/`emulator` row, else `failed` if a row says so.

use crate::diag::{Diagnostic, Span};
use crate::evidence::{self, EvidenceFile};
use crate::library::SpecLibrary;
use crate::sema::Semantics;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The fewest agreeing oracle cases that make a spec `silicon` or
/// `emulator`, unless the user asked for fewer (at least 1) with `--cases`.
pub const DEFAULT_CASES: u64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SpecStatus {
    /// Agreed with a machine's CPU on every case.
    Silicon,
    /// Agreed with an emulator (qemu) on every case.
    Emulator,
    /// Proven equal by Z3 to a spec that is `silicon` or `emulator` (the
    /// same instruction in another encoding).
    ProvenTwin,
    /// No evidence (this machine cannot run it, and no twin): unverified.
    /// A check's outcome only; never an evidence row.
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

    /// Which of two statuses of one spec text wins (lower is stronger).
    fn rank(self) -> u8 {
        match self {
            SpecStatus::Silicon => 0,
            SpecStatus::Emulator => 1,
            SpecStatus::ProvenTwin => 2,
            SpecStatus::Failed => 3,
            SpecStatus::Skipped => 4,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct StatusRow {
    pub status: SpecStatus,
    /// The most agreeing cases of any machine's row with this status.
    pub cases: u64,
    /// [`digest`] of the semantics that were checked.
    pub digest: String,
    /// The machines, or the twin and how it was proved.
    pub evidence: String,
}

/// The derived status of every spec some machine has evidence for.
#[derive(Clone, Debug, Default)]
pub struct StatusTable {
    /// Per spec, the strongest status of any spec text with evidence (in
    /// practice the current one); [`verified`](Self::verified) also looks
    /// at `older` and checks the digest.
    pub rows: BTreeMap<String, StatusRow>,
    /// Per spec, the derived rows of its other spec texts (stale or newer).
    pub older: BTreeMap<String, Vec<StatusRow>>,
    /// `(spec, digest)` of a `proven-twin` row -> `(twin, twin's digest)`:
    /// the twin must still have that digest for the row to count.
    pub twins: BTreeMap<(String, String), (String, String)>,
    /// The spec folder, to read twins' current digests when asked.
    spec_dir: Option<PathBuf>,
    twin_digests: OnceLock<HashMap<String, String>>,
    /// Which machines vouch for each `(spec, digest)` (by file name).
    pub machines: BTreeMap<(String, String), BTreeSet<String>>,
}

impl StatusTable {
    /// A table of the given rows and nothing else (no twins, no spec
    /// folder): for tests and tools that state statuses directly.
    pub fn from_rows(rows: BTreeMap<String, StatusRow>) -> StatusTable {
        StatusTable { rows, ..Default::default() }
    }

    /// The status of every spec of `spec_dir`, derived from all evidence
    /// files in `<spec_dir>/evidence/`: the one way every consumer gets it.
    pub fn for_spec_dir(spec_dir: &Path) -> Result<StatusTable, Diagnostic> {
        Self::derive_dir(&evidence::evidence_dir(spec_dir), spec_dir)
    }

    /// [`for_spec_dir`](Self::for_spec_dir) with the evidence in another
    /// folder (`misaal isa check --evidence DIR`).
    pub fn derive_dir(evidence_dir: &Path, spec_dir: &Path) -> Result<StatusTable, Diagnostic> {
        let files = evidence::load_dir(evidence_dir)?;
        Ok(Self::derive(&files, Some(spec_dir)))
    }

    /// The evidence folder of a spec folder (kept so that
    /// `StatusTable::load(&StatusTable::path_for(dir))` still means
    /// [`for_spec_dir`](Self::for_spec_dir)).
    pub fn path_for(spec_dir: &Path) -> PathBuf {
        evidence::evidence_dir(spec_dir)
    }

    /// The derived table of an evidence folder (`<spec dir>/evidence`);
    /// twins are checked against the specs of its parent folder.
    pub fn load(evidence_dir: &Path) -> Result<StatusTable, Diagnostic> {
        if evidence_dir.is_file() {
            return Err(Diagnostic::new(
                &evidence_dir.display().to_string(),
                Span::default(),
                "expected an evidence folder (`<specs>/evidence`, one `<machine>.tsv` per machine); the single status table is gone: `misaal isa check --import` converts nothing, so move its rows into a machine's evidence file",
            ));
        }
        let spec_dir = evidence_dir.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::derive_dir(evidence_dir, &spec_dir)
    }

    /// Derives statuses from evidence files (the file name names the machine).
    pub fn derive(files: &[(PathBuf, EvidenceFile)], spec_dir: Option<&Path>) -> StatusTable {
        type Key = (String, String);
        let mut by_text: BTreeMap<Key, Vec<(&str, &evidence::EvidenceRow)>> = BTreeMap::new();
        for (path, f) in files {
            let machine = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
            for r in f.rows.values() {
                by_text.entry((r.intrinsic.clone(), r.digest.clone())).or_default().push((machine, r));
            }
        }
        // Specs texts verified by their own oracle somewhere: what a twin may lean on.
        let by_oracle: BTreeSet<&Key> = by_text.iter().filter(|(_, rs)| rs.iter().any(|(_, r)| matches!(r.status, SpecStatus::Silicon | SpecStatus::Emulator))).map(|(k, _)| k).collect();
        let mut table = StatusTable { spec_dir: spec_dir.map(Path::to_path_buf), ..Default::default() };
        let mut derived: BTreeMap<String, Vec<StatusRow>> = BTreeMap::new();
        for (key, rs) in &by_text {
            let twin_ok = |r: &evidence::EvidenceRow| r.twin.as_ref().is_some_and(|t| by_oracle.contains(&(t.0.clone(), t.1.clone())));
            let counts = |r: &&(&str, &evidence::EvidenceRow)| r.1.status != SpecStatus::ProvenTwin || twin_ok(r.1);
            let best = rs.iter().filter(counts).map(|(_, r)| r.status).min_by_key(|s| s.rank());
            let row = match best {
                Some(status) => {
                    let with: Vec<&(&str, &evidence::EvidenceRow)> = rs.iter().filter(|(_, r)| r.status == status).filter(counts).collect();
                    let cases = with.iter().map(|(_, r)| r.cases).max().unwrap_or(0);
                    let machines: BTreeSet<String> = with.iter().map(|(m, _)| m.to_string()).collect();
                    let evidence = match status {
                        SpecStatus::ProvenTwin => {
                            let t = with[0].1.twin.clone().expect("a twin row names its twin");
                            let e = format!("= {} (Z3)", t.0);
                            table.twins.insert(key.clone(), t);
                            e
                        }
                        _ => {
                            let names: BTreeSet<String> = with.iter().map(|(_, r)| r.machine.describe()).collect();
                            names.into_iter().collect::<Vec<_>>().join("; ")
                        }
                    };
                    table.machines.insert(key.clone(), machines);
                    StatusRow { status, cases, digest: key.1.clone(), evidence }
                }
                None => {
                    let t = rs[0].1.twin.as_ref().map(|t| t.0.as_str()).unwrap_or("?");
                    StatusRow { status: SpecStatus::Skipped, cases: 0, digest: key.1.clone(), evidence: format!("proven equal to {t}, which no current evidence verifies") }
                }
            };
            derived.entry(key.0.clone()).or_default().push(row);
        }
        for (name, mut rows) in derived {
            rows.sort_by_key(|r| (r.status.rank(), std::cmp::Reverse(r.cases)));
            let mut rows = rows.into_iter();
            table.rows.insert(name.clone(), rows.next().expect("one row at least"));
            let rest: Vec<StatusRow> = rows.collect();
            if !rest.is_empty() {
                table.older.insert(name, rest);
            }
        }
        table
    }

    /// The derived row of `name` for the spec text with digest `d`.
    pub fn row_for(&self, name: &str, d: &str) -> Option<&StatusRow> {
        self.rows.get(name).into_iter().chain(self.older.get(name).into_iter().flatten()).find(|r| r.digest == d)
    }

    /// `Ok` when the spec may be used: its row is verified and was made from
    /// these very semantics. Otherwise why not, in words.
    pub fn verified(&self, name: &str, sem: &Semantics) -> Result<(), String> {
        self.verified_digest(name, || Ok(digest(sem)))
    }

    /// [`verified`](Self::verified) for `lib`'s spec `name`, with the
    /// library's memoized digest (so a spec many rules use is digested once).
    /// A spec whose status rules it out is not unrolled.
    /// The digest comes from the library's digest memo where it is current
    /// (see [`SpecLibrary::use_digest_memo`]), so the spec is not unrolled.
    pub fn verified_in(&self, lib: &SpecLibrary, name: &str) -> Result<(), String> {
        self.verified_digest(name, || match lib.digest(name) {
            Some(d) => Ok(d.to_string()),
            None => match lib.unrolled(name) {
                Some(Err(e)) => Err(format!("`{name}` does not unroll: {e}")),
                _ => Err(format!("no spec `{name}`")),
            },
        })
    }

    fn verified_digest(&self, name: &str, digest: impl FnOnce() -> Result<String, String>) -> Result<(), String> {
        let Some(best) = self.rows.get(name) else { return Err(format!("`{name}` was never checked against its oracle")) };
        // A spec no evidence verifies is not unrolled just to say so.
        let any_verified = best.status.is_verified() || self.older.get(name).is_some_and(|o| o.iter().any(|r| r.status.is_verified()));
        if !any_verified {
            return Err(format!("`{name}` is {} ({}), so it is unverified", best.status.label(), best.evidence));
        }
        let d = digest()?;
        let Some(r) = self.row_for(name, &d) else { return Err(format!("`{name}` changed since it was checked (its evidence is for another text; status then {})", best.status.label())) };
        if !r.status.is_verified() {
            return Err(format!("`{name}` is {} ({}), so it is unverified", r.status.label(), r.evidence));
        }
        if let Some((twin, twin_digest)) = self.twins.get(&(name.to_string(), d)) {
            match self.twin_digest(twin) {
                Some(now) if now == *twin_digest => {}
                _ => return Err(format!("`{name}` is proven-twin of `{twin}`, whose spec changed since (its evidence is stale)")),
            }
        }
        Ok(())
    }

    /// The current digest of a spec that some twin row leans on.
    fn twin_digest(&self, name: &str) -> Option<String> {
        let map = self.twin_digests.get_or_init(|| {
            let Some(dir) = &self.spec_dir else { return HashMap::new() };
            let Ok(lib) = SpecLibrary::load_dir_lazy(dir) else { return HashMap::new() };
            let names: BTreeSet<&String> = self.twins.values().map(|(n, _)| n).collect();
            names.into_iter().filter(|n| lib.unrolled(n).is_some_and(|r| r.is_ok())).map(|n| (n.clone(), lib.digest(n).expect("unrolled").to_string())).collect()
        });
        map.get(name).cloned()
    }

    /// Whether the spec text `(name, digest)` rests only on machines other
    /// than `machine` (an evidence file's stem).
    pub fn only_elsewhere(&self, name: &str, d: &str, machine: &str) -> bool {
        self.machines.get(&(name.to_string(), d.to_string())).is_some_and(|m| !m.contains(machine))
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
