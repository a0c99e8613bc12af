//! The enumeration's checkpoint: the finished units of one shard, with the
//! configuration digest they were found under. Rewritten whole after every
//! unit through a temporary file and a rename, so a killed run leaves the
//! previous checkpoint or the new one, never half of one.

use super::{ProvedRule, Shard, UnitResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAGIC: &str = "misaal enumerate checkpoint 2";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub digest: String,
    pub shard: Shard,
    pub units: BTreeMap<usize, UnitResult>,
}

/// `<dir>/<target>_enumerate.K-of-N.ckpt`.
pub fn path(dir: &Path, target: &str, shard: Shard) -> PathBuf {
    dir.join(format!("{target}_enumerate.{}-of-{}.ckpt", shard.k, shard.n))
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n'], " ")
}

impl Checkpoint {
    pub fn new(digest: String, shard: Shard) -> Self {
        Checkpoint { digest, shard, units: BTreeMap::new() }
    }

    pub fn to_text(&self) -> String {
        let mut s = format!("{MAGIC}\nconfig\t{}\t{}/{}\n", self.digest, self.shard.k, self.shard.n);
        for u in self.units.values() {
            s.push_str(&format!(
                "unit\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                u.index,
                u.sig,
                u.halide_terms,
                u.halide_cut,
                u.x86_terms,
                u.matched,
                u.proofs,
                u.refuted,
                u.unknown,
                u.rules.len()
            ));
            for r in &u.rules {
                s.push_str(&format!("rule\t{}\t{}\t{}\n", clean(&r.name), clean(&r.provenance), clean(&r.text)));
            }
            for n in &u.not_proved {
                s.push_str(&format!("note\t{}\n", clean(n)));
            }
        }
        s.push_str("end\n");
        s
    }

    /// Parses a checkpoint; a truncated or foreign file is an error, never
    /// a silently shorter run.
    pub fn parse(text: &str) -> Result<Checkpoint, String> {
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) {
            return Err("not an enumeration checkpoint".into());
        }
        let cfg: Vec<&str> = lines.next().ok_or("no config line")?.split('\t').collect();
        let [_, digest, shard] = cfg[..] else { return Err("malformed config line".into()) };
        let mut cp = Checkpoint::new(digest.to_string(), Shard::parse(shard)?);
        let mut current: Option<(UnitResult, usize)> = None;
        let num = |s: &str| s.parse::<usize>().map_err(|_| format!("not a number: {s:?}"));
        let mut ended = false;
        for line in lines {
            let f: Vec<&str> = line.split('\t').collect();
            match f[0] {
                "unit" if f.len() == 11 => {
                    if let Some((u, want)) = current.take() {
                        if u.rules.len() != want {
                            return Err(format!("unit {} lists {} of {want} rules", u.index, u.rules.len()));
                        }
                        cp.units.insert(u.index, u);
                    }
                    let u = UnitResult {
                        index: num(f[1])?,
                        sig: f[2].to_string(),
                        halide_terms: num(f[3])?,
                        halide_cut: num(f[4])?,
                        x86_terms: num(f[5])?,
                        matched: num(f[6])?,
                        proofs: num(f[7])?,
                        refuted: num(f[8])?,
                        unknown: num(f[9])?,
                        rules: Vec::new(),
                        not_proved: Vec::new(),
                    };
                    current = Some((u, num(f[10])?));
                }
                "rule" if f.len() == 4 => {
                    let (u, _) = current.as_mut().ok_or("a rule before any unit")?;
                    u.rules.push(ProvedRule { name: f[1].into(), provenance: f[2].into(), text: f[3].into() });
                }
                "note" if f.len() == 2 => {
                    let (u, _) = current.as_mut().ok_or("a note before any unit")?;
                    u.not_proved.push(f[1].into());
                }
                "end" if f.len() == 1 => {
                    ended = true;
                    break;
                }
                _ => return Err(format!("malformed line: {line:?}")),
            }
        }
        if !ended {
            return Err("truncated (no end line)".into());
        }
        if let Some((u, want)) = current.take() {
            if u.rules.len() != want {
                return Err(format!("unit {} lists {} of {want} rules", u.index, u.rules.len()));
            }
            cp.units.insert(u.index, u);
        }
        Ok(cp)
    }

    pub fn load(path: &Path) -> Result<Checkpoint, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Checkpoint::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes the whole checkpoint to a temporary file, then renames it.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        write_atomic(path, &self.to_text())
    }
}

/// Writes `text` to a temporary file beside `path`, then renames it: a
/// killed run leaves the old checkpoint or the new one, never half of one.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_a_truncated_file() {
        let mut cp = Checkpoint::new("abc".into(), Shard { k: 1, n: 3 });
        cp.units.insert(
            4,
            UnitResult {
                index: 4,
                sig: "u16x8,u16x8".into(),
                halide_terms: 10,
                halide_cut: 2,
                x86_terms: 20,
                matched: 3,
                proofs: 3,
                refuted: 1,
                unknown: 0,
                rules: vec![ProvedRule { name: "n".into(), provenance: "p".into(), text: "(rewrite a b)".into() }],
                not_proved: vec!["refuted (x) => (y)".into()],
            },
        );
        cp.units.insert(7, UnitResult { index: 7, sig: "u8x16".into(), ..Default::default() });
        let t = cp.to_text();
        assert_eq!(Checkpoint::parse(&t).unwrap(), cp);
        let cut = &t[..t.len() - 4];
        assert!(Checkpoint::parse(cut).is_err());
    }
}
