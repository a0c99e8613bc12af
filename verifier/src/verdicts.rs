//! The verdict cache (`.misaal-cache/verify.tsv`) over the verdicts shipped
//! with the rulesets (`rulesets/<target>.verdicts.tsv`, written by
//! `misaal verify --export-verdicts`). Both are tab-separated, one row a
//! line, of two kinds:
//!
//! - `KEY  VERDICT  SOLVER_MS  QUICKCHECK_CASES  COUNTEREXAMPLE`: a verdict,
//!   KEY a [`cache_key`](crate::audit::cache_key) (32 hex digits) or a
//!   [`proof_key`](crate::audit::proof_key) (`p` and 32 hex digits);
//! - `PRE_KEY  proof-key  PROOF_KEY`: a rule instance's
//!   [`pre_key`](crate::prekey::pre_key) (`i` and 32 hex digits) and the
//!   proof key of its sides, so the instance's verdict is found without
//!   unrolling them. Readers that predate it skip it (its second column is
//!   no verdict).
//!
//! A file is read whole and its rows indexed by key; a row is parsed when
//! asked for (a compile asks for a few hundred of ~70,000).

use crate::audit::{InstanceResult, Verdict};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A verdict: the verdict, solver milliseconds, quickcheck cases, counterexample.
pub type Row = (Verdict, f64, usize, String);

/// Z3's reason for an `unknown` when its resource limit (`rlimit`) ran out.
pub const RLIMIT_REASON: &str = "max. resource limit exceeded";

/// The second column of a pre-key row.
pub const PRE_KEY_ROW: &str = "proof-key";

/// The folder of the bundled rulesets and their shipped verdicts.
pub fn bundled_rulesets_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../rulesets"))
}

/// A key as the files write it: a kind (`0` for a cache key, `b'p'`,
/// `b'i'`) and 32 lowercase hex digits. Hashing it is cheaper than the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    kind: u8,
    hash: u128,
}

impl Key {
    fn parse(s: &str) -> Option<Key> {
        let (kind, hex) = match s.as_bytes().first()? {
            b'p' => (b'p', &s[1..]),
            b'i' => (b'i', &s[1..]),
            _ => (0, s),
        };
        if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return None;
        }
        Some(Key { kind, hash: u128::from_str_radix(hex, 16).ok()? })
    }
}

/// A verdict row's key and fields, the counterexample borrowed.
fn parse_verdict_row(line: &str) -> Option<(&str, (Verdict, f64, usize, &str))> {
    let mut f = line.splitn(5, '\t');
    let (k, v, ms, n, cx) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
    Some((k, (Verdict::parse(v)?, ms.parse().ok()?, n.parse().ok()?, cx)))
}

/// One verdict file as read.
#[derive(Default)]
struct VerdictFile {
    /// An unsorted file's text (a sorted one is read where it lies).
    text: String,
    /// Keys strictly increasing in byte order, one row a line (as
    /// `misaal verify` writes its files and the shipped ones are sorted):
    /// rows are found by binary search, with no index. Indexing the two
    /// x86 files took 17 MB of a compile's 87 MB peak heap.
    sorted: Option<Blocks>,
    /// Verdict rows by key: where each line starts (the last of duplicates).
    rows: HashMap<Key, usize>,
    /// Rows whose key is not of the usual shape, parsed.
    odd: HashMap<String, Row>,
    /// Pre-key rows: pre-key to proof key.
    pre: HashMap<Key, Key>,
}

/// A sorted file searched where it lies: the first key of every block of
/// about [`BLOCK`] bytes (whole lines) and the block's offset, and the
/// file kept open. A key's row is read from its one block. Holding the
/// text instead was 6.3 MB (x86's 94,000 rows) of a compile's peak for a
/// few thousand lookups. The open file is the one indexed even if a save
/// renames a new one onto its path.
struct Blocks {
    file: std::fs::File,
    starts: Vec<(String, u64)>,
    len: u64,
}

/// The size of a [`Blocks`] block: ~80 rows.
const BLOCK: usize = 4096;

impl Blocks {
    fn new(file: std::fs::File, text: &str) -> Blocks {
        let mut starts = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let key = text[at..].split(['\t', '\n']).next().unwrap_or("");
            starts.push((key.to_string(), at as u64));
            let end = (at + BLOCK).min(text.len());
            at = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
        }
        Blocks { file, starts, len: text.len() as u64 }
    }

    /// The block that would hold `key`, as read now (`None` if before
    /// the first key, or unreadable: a verdict then is proved again).
    fn block(&self, key: &str) -> Option<String> {
        let i = self.starts.partition_point(|(k, _)| k.as_str() <= key).checked_sub(1)?;
        let (from, to) = (self.starts[i].1, self.starts.get(i + 1).map_or(self.len, |s| s.1));
        let mut buf = vec![0; (to - from) as usize];
        read_at(&self.file, &mut buf, from).ok()?;
        String::from_utf8(buf).ok()
    }

    /// The line whose key is `key`.
    fn find_line(&self, key: &str) -> Option<String> {
        let block = self.block(key)?;
        let line = block.lines().find(|l| l.split('\t').next() == Some(key))?;
        Some(line.strip_suffix('\r').unwrap_or(line).to_string())
    }
}

#[cfg(unix)]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(not(unix))]
fn read_at(mut f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    f.seek(std::io::SeekFrom::Start(at))?;
    f.read_exact(buf)
}

impl VerdictFile {
    /// The file at `path`; empty if it cannot be read (a cache not yet written).
    fn read(path: &Path) -> VerdictFile {
        let Ok(text) = std::fs::read_to_string(path) else { return VerdictFile::default() };
        if sorted_rows(&text)
            && let Ok(file) = std::fs::File::open(path)
            && file.metadata().is_ok_and(|m| m.len() == text.len() as u64)
        {
            return VerdictFile { sorted: Some(Blocks::new(file, &text)), ..Default::default() };
        }
        let (mut rows, mut odd, mut pre) = (HashMap::new(), HashMap::new(), HashMap::new());
        let mut start = 0;
        for raw in text.split('\n') {
            let at = start;
            start += raw.len() + 1;
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let Some((k, rest)) = line.split_once('\t') else { continue };
            if let Some(proof) = rest.strip_prefix(PRE_KEY_ROW).and_then(|r| r.strip_prefix('\t')) {
                if let (Some(pk), Some(proof)) = (Key::parse(k), Key::parse(proof))
                    && pk.kind == b'i'
                    && proof.kind == b'p'
                {
                    pre.insert(pk, proof);
                }
                continue;
            }
            // Only well-formed rows count, as they always have.
            let Some((_, (v, ms, n, cx))) = parse_verdict_row(line) else { continue };
            match Key::parse(k) {
                Some(key) => {
                    rows.insert(key, at);
                }
                None => {
                    odd.insert(k.to_string(), (v, ms, n, cx.to_string()));
                }
            }
        }
        VerdictFile { text, sorted: None, rows, odd, pre }
    }

    fn line_at(&self, at: usize) -> &str {
        let line = self.text[at..].split('\n').next().unwrap_or("");
        line.strip_suffix('\r').unwrap_or(line)
    }

    fn get(&self, key: &str) -> Option<Row> {
        if let Some(b) = &self.sorted {
            return b.find_line(key).as_deref().and_then(parse_verdict_row).map(|(_, (v, ms, n, cx))| (v, ms, n, cx.to_string()));
        }
        match Key::parse(key) {
            Some(k) => self.rows.get(&k).and_then(|&at| parse_verdict_row(self.line_at(at))).map(|(_, (v, ms, n, cx))| (v, ms, n, cx.to_string())),
            None => self.odd.get(key).cloned(),
        }
    }

    fn proof_key_of(&self, pre: &str) -> Option<String> {
        if let Some(b) = &self.sorted {
            return b.find_line(pre).as_deref().and_then(pre_key_row).map(|(_, proof)| format!("p{:032x}", proof.hash));
        }
        self.pre.get(&Key::parse(pre)?).map(|k| format!("p{:032x}", k.hash))
    }

    /// Every verdict row's key and line, and every pre-key row's (a
    /// sorted file is read again for it).
    fn lines(&self) -> Vec<(String, String)> {
        if let Some(b) = &self.sorted {
            let mut text = vec![0; b.len as usize];
            if read_at(&b.file, &mut text, 0).is_err() {
                return Vec::new();
            }
            return String::from_utf8_lossy(&text)
                .lines()
                .filter_map(|line| {
                    if let Some((pre, proof)) = pre_key_row(line) {
                        let p = format!("i{:032x}", pre.hash);
                        return Some((p.clone(), format!("{p}\t{PRE_KEY_ROW}\tp{:032x}", proof.hash)));
                    }
                    parse_verdict_row(line).map(|(k, _)| (k.to_string(), line.to_string()))
                })
                .collect();
        }
        let rows = self.rows.values().map(|&at| {
            let line = self.line_at(at);
            (line.split('\t').next().unwrap_or("").to_string(), line.to_string())
        });
        let odd = self.odd.iter().map(|(k, r)| (k.clone(), row_line(k, r)));
        let pre = self.pre.iter().map(|(p, k)| {
            let p = format!("i{:032x}", p.hash);
            let line = format!("{p}\t{PRE_KEY_ROW}\tp{:032x}", k.hash);
            (p, line)
        });
        rows.chain(odd).chain(pre).collect()
    }
}

/// A pre-key row's pre-key and proof key, if `line` is a well-formed one.
fn pre_key_row(line: &str) -> Option<(Key, Key)> {
    let (k, rest) = line.split_once('\t')?;
    let proof = rest.strip_prefix(PRE_KEY_ROW)?.strip_prefix('\t')?;
    let (pk, proof) = (Key::parse(k)?, Key::parse(proof)?);
    (pk.kind == b'i' && proof.kind == b'p').then_some((pk, proof))
}

/// Whether every line of `text` is a row (a tab after its key) and the
/// keys strictly increase in byte order: then a key's row is found by
/// binary search, and there is no duplicate for the index to settle.
fn sorted_rows(text: &str) -> bool {
    let mut prev: Option<&str> = None;
    // An empty line would compare below every key wherever it stood: only
    // the end of the last line may be followed by nothing.
    for raw in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let Some((k, _)) = line.split_once('\t') else { return text.is_empty() };
        if prev.is_some_and(|p| p >= k) {
            return false;
        }
        prev = Some(k);
    }
    true
}

fn row_line(k: &str, (v, ms, n, cx): &Row) -> String {
    format!("{k}\t{}\t{ms:.3}\t{n}\t{cx}", v.label())
}

/// Verdicts keyed by `cache_key` (and proofs by `proof_key`), kept in one
/// tab-separated file so that a re-run of an unchanged ruleset is instant.
/// Written whole via a temporary file and a rename.
///
/// Under it lies a read-only layer: the verdicts shipped with the rulesets,
/// so a fresh checkout compiles without first proving every rule. Keys are
/// digests of both sides' full semantics (and, for `cache_key`, of the audit
/// settings), so an entry can only ever answer for the exact query that was
/// proved; a pre-key answers only through the proof key it names.
#[derive(Default)]
pub struct VerdictCache {
    path: Option<PathBuf>,
    /// The cache file, read the first time the shipped verdicts do not
    /// answer (a compile with the bundled rules never reads it). A key
    /// digests the whole query, so a key both layers hold has one meaning;
    /// the shipped row is taken.
    local: std::sync::OnceLock<VerdictFile>,
    /// Verdicts and pre-keys settled in this run, over `local`.
    fresh: HashMap<String, Row>,
    fresh_pre: HashMap<String, String>,
    /// The shipped files, in name order (a later one wins a duplicate key).
    shipped: Vec<VerdictFile>,
    /// Keys asked for or settled in this run, for `export`.
    touched: BTreeSet<String>,
    dirty: bool,
}

impl VerdictCache {
    /// The cache at `path` over the shipped verdicts.
    pub fn load(path: &Path) -> VerdictCache {
        Self::load_shipped(path, |_| true)
    }

    /// The cache at `path` over the verdicts shipped for one target's
    /// rulesets only (`x86.verdicts.tsv`, `x86_*.verdicts.tsv`): what a
    /// compile for that target can ask. An x86 compile read ARM's and
    /// HVX's 49,000 rows too, a sixth of its time and 10 MB of its memory.
    /// Keys are digests of the proved query, so a file left out only costs
    /// a proof on the spot, never a wrong verdict.
    pub fn load_for_target(path: &Path, target: &str) -> VerdictCache {
        Self::load_shipped(path, |name| name.starts_with(&format!("{target}.")) || name.starts_with(&format!("{target}_")))
    }

    fn load_shipped(path: &Path, wanted: impl Fn(&str) -> bool) -> VerdictCache {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(bundled_rulesets_dir()) {
            Ok(dir) => dir
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()).is_some_and(|n| n.ends_with(".verdicts.tsv") && wanted(&n)))
                .collect(),
            Err(_) => Vec::new(),
        };
        files.sort();
        VerdictCache { path: Some(path.to_path_buf()), local: std::sync::OnceLock::new(), shipped: files.iter().map(|f| VerdictFile::read(f)).collect(), ..Default::default() }
    }

    /// The cache file's layer, read on first use.
    fn local(&self) -> &VerdictFile {
        self.local.get_or_init(|| self.path.as_deref().map(VerdictFile::read).unwrap_or_default())
    }

    fn lookup(&self, key: &str) -> Option<Row> {
        if let Some(r) = self.fresh.get(key) {
            return Some(r.clone());
        }
        self.shipped.iter().rev().find_map(|f| f.get(key)).or_else(|| self.local().get(key))
    }

    pub fn get(&mut self, key: &str) -> Option<Row> {
        let hit = self.lookup(key);
        if hit.is_some() {
            self.touched.insert(key.to_string());
        }
        hit
    }

    /// The proof key a pre-key row names, if any layer has one.
    pub fn proof_key_of(&mut self, pre: &str) -> Option<String> {
        let hit = self.fresh_pre.get(pre).cloned().or_else(|| self.shipped.iter().rev().find_map(|f| f.proof_key_of(pre))).or_else(|| self.local().proof_key_of(pre));
        if hit.is_some() {
            self.touched.insert(pre.to_string());
        }
        hit
    }

    /// Only settled verdicts are cached; unknowns are retried next time.
    pub fn put(&mut self, key: String, r: &InstanceResult) {
        // An `unknown` from an exhausted resource limit is kept too: Z3's
        // rlimit counts its own work, so the same query (the key holds the
        // rlimit) stops there again, where a synthesis run spent its whole
        // budget on each one every time. A wall-clock timeout depends on
        // the load and is never kept.
        let exhausted = r.verdict == Verdict::Unknown && r.counterexample.contains(RLIMIT_REASON);
        if matches!(r.verdict, Verdict::Proved | Verdict::Refuted) || exhausted {
            self.touched.insert(key.clone());
            self.fresh.insert(key, (r.verdict, r.solver_ms, r.quickcheck_cases, r.counterexample.replace(['\t', '\n'], " ")));
            self.dirty = true;
        }
    }

    /// Records that the instance with pre-key `pre` has sides with proof key `proof`.
    pub fn put_pre_key(&mut self, pre: String, proof: String) {
        self.touched.insert(pre.clone());
        if self.local().proof_key_of(&pre).as_ref() == Some(&proof) || self.fresh_pre.get(&pre) == Some(&proof) {
            return;
        }
        self.fresh_pre.insert(pre, proof);
        self.dirty = true;
    }

    /// Whether this run settled a verdict (or pre-key) that was in neither
    /// layer, since the cache was read or last saved.
    pub fn proved_anything_new(&self) -> bool {
        self.dirty
    }

    /// Writes the settled verdicts this run used (read or proved), and the
    /// pre-keys it used or recorded, sorted, to `path`: the file a ruleset
    /// ships with. Returns the number of verdicts written.
    pub fn export(&self, path: &Path) -> std::io::Result<usize> {
        let mut out = String::new();
        let mut n = 0;
        for k in &self.touched {
            if let Some(r) = self.lookup(k) {
                out.push_str(&row_line(k, &r));
                out.push('\n');
                n += 1;
            } else if let Some(p) = self.fresh_pre.get(k).cloned().or_else(|| self.shipped.iter().rev().find_map(|f| f.proof_key_of(k))).or_else(|| self.local().proof_key_of(k)) {
                out.push_str(&format!("{k}\t{PRE_KEY_ROW}\t{p}\n"));
            }
        }
        write_atomic(path, &out)?;
        Ok(n)
    }

    /// Writes the cache file if this run settled anything new since it was
    /// read or last saved.
    pub fn save(&mut self) -> std::io::Result<()> {
        let Some(path) = &self.path else { return Ok(()) };
        if !self.dirty {
            return Ok(());
        }
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let mut lines: HashMap<String, String> = self.local().lines().into_iter().collect();
        lines.extend(self.fresh.iter().map(|(k, r)| (k.clone(), row_line(k, r))));
        lines.extend(self.fresh_pre.iter().map(|(k, p)| (k.clone(), format!("{k}\t{PRE_KEY_ROW}\t{p}"))));
        let mut keys: Vec<&String> = lines.keys().collect();
        keys.sort();
        let mut out = String::new();
        for k in keys {
            out.push_str(&lines[k]);
            out.push('\n');
        }
        write_atomic(path, &out)?;
        self.dirty = false;
        Ok(())
    }
}

fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sorted file is searched without an index, an unsorted one
    /// indexed: both answer every key alike, and a missing key with nothing.
    #[test]
    fn sorted_and_indexed_files_answer_alike() {
        let dir = std::env::temp_dir().join(format!("misaal-verdict-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = |k: u128| format!("{k:032x}");
        let mut rows: Vec<String> = (0..200u128).map(|k| format!("{}\tproved\t1.000\t{}\t", key(k * 7919), k)).collect();
        rows.extend((0..50u128).map(|k| format!("i{}\t{PRE_KEY_ROW}\tp{}", key(k * 31), key(k * 7919))));
        rows.push("p00000000000000000000000000000abc\trefuted\t2.500\t0\tx = 1".into());
        rows.sort();
        let sorted = dir.join("sorted.tsv");
        std::fs::write(&sorted, rows.join("\n") + "\n").unwrap();
        let mut shuffled = rows.clone();
        shuffled.reverse();
        shuffled.push(rows[3].clone());
        let unsorted = dir.join("unsorted.tsv");
        std::fs::write(&unsorted, shuffled.join("\n") + "\n").unwrap();
        let (a, b) = (VerdictFile::read(&sorted), VerdictFile::read(&unsorted));
        assert!(a.sorted.is_some() && b.sorted.is_none());
        let mut asked = 0;
        for k in (0..210u128).map(|k| key(k * 7919)).chain((1..300u128).map(|k| key(k * 7919 + 1))).chain((0..60u128).map(|k| format!("i{}", key(k * 31)))).chain(["p00000000000000000000000000000abc".to_string(), "zz".into(), "".into()]) {
            assert_eq!(a.get(&k), b.get(&k), "{k}");
            assert_eq!(a.proof_key_of(&k), b.proof_key_of(&k), "{k}");
            asked += a.get(&k).is_some() as usize + a.proof_key_of(&k).is_some() as usize;
        }
        assert_eq!(asked, 200 + 50 + 1);
        let (mut la, mut lb) = (a.lines(), b.lines());
        la.sort();
        lb.sort();
        assert_eq!(la, lb);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
