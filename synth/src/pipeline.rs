//! The whole synthesis pipeline's checkpoint: which phases (relevance,
//! swizzles, enumerate, abstract) have finished under one configuration,
//! with a hash of each output file they wrote. A resumed run skips a phase
//! only when its files are still on disk with the recorded bytes; the
//! enumeration's own checkpoint (per unit) covers the phase in progress.
//! Written whole through a temporary file and a rename after every phase.

use std::path::{Path, PathBuf};

const MAGIC: &str = "misaal synth pipeline checkpoint 1";

/// The phases in order.
pub const PHASES: [&str; 4] = ["relevance", "swizzles", "enumerate", "abstract"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseDone {
    pub phase: String,
    /// Output files and the FNV-1a hash of their bytes.
    pub files: Vec<(PathBuf, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineCheckpoint {
    /// Everything that decides the outputs (enumeration digest, shard).
    pub digest: String,
    pub done: Vec<PhaseDone>,
}

/// `<dir>/<target>_synth.ckpt`.
pub fn path(dir: &Path, target: &str) -> PathBuf {
    dir.join(format!("{target}_synth.ckpt"))
}

/// FNV-1a of a file's bytes, or `None` if it cannot be read.
pub fn file_hash(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3));
    Some(format!("{h:016x}"))
}

impl PipelineCheckpoint {
    pub fn new(digest: String) -> Self {
        PipelineCheckpoint { digest, done: Vec::new() }
    }

    /// Whether `phase` finished and its files still hold what it wrote.
    pub fn is_done(&self, phase: &str) -> bool {
        self.done.iter().any(|d| d.phase == phase && d.files.iter().all(|(p, h)| file_hash(p).as_deref() == Some(h.as_str())))
    }

    /// Records `phase` as finished with these output files (hashed now).
    pub fn mark(&mut self, phase: &str, files: &[PathBuf]) -> Result<(), String> {
        let mut hashed = Vec::new();
        for f in files {
            let h = file_hash(f).ok_or_else(|| format!("{}: the {phase} phase's output is not readable", f.display()))?;
            hashed.push((f.clone(), h));
        }
        self.done.retain(|d| d.phase != phase);
        self.done.push(PhaseDone { phase: phase.into(), files: hashed });
        Ok(())
    }

    /// Forgets `phase` and every phase after it (their inputs change when
    /// it runs again).
    pub fn forget_from(&mut self, phase: &str) {
        let Some(k) = PHASES.iter().position(|p| *p == phase) else { return };
        self.done.retain(|d| PHASES.iter().position(|p| *p == d.phase).is_some_and(|j| j < k));
    }

    pub fn to_text(&self) -> String {
        let mut s = format!("{MAGIC}\nconfig\t{}\n", self.digest);
        for d in &self.done {
            s.push_str(&format!("done\t{}", d.phase));
            for (p, h) in &d.files {
                s.push_str(&format!("\t{}\t{h}", p.display()));
            }
            s.push('\n');
        }
        s.push_str("end\n");
        s
    }

    /// A truncated or foreign file is an error, never a shorter run.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) {
            return Err("not a synthesis pipeline checkpoint".into());
        }
        let digest = match lines.next().map(|l| l.split('\t').collect::<Vec<_>>()).as_deref() {
            Some(["config", d]) => d.to_string(),
            _ => return Err("malformed config line".into()),
        };
        let mut cp = PipelineCheckpoint::new(digest);
        for line in lines {
            let f: Vec<&str> = line.split('\t').collect();
            match f[..] {
                ["end"] => return Ok(cp),
                ["done", phase, ref rest @ ..] if rest.len() % 2 == 0 && PHASES.contains(&phase) => {
                    let files = rest.chunks(2).map(|c| (PathBuf::from(c[0]), c[1].to_string())).collect();
                    cp.done.push(PhaseDone { phase: phase.into(), files });
                }
                _ => return Err(format!("malformed line: {line:?}")),
            }
        }
        Err("truncated (no end line)".into())
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        crate::enumerate::checkpoint::write_atomic(path, &self.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_skips_only_unchanged_outputs_and_refuses_truncation() {
        let dir = std::env::temp_dir().join(format!("misaal-pipeline-ckpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.csv");
        std::fs::write(&a, "x\n").unwrap();
        let mut cp = PipelineCheckpoint::new("d1".into());
        cp.mark("relevance", std::slice::from_ref(&a)).unwrap();
        cp.mark("swizzles", &[]).unwrap();
        let t = cp.to_text();
        assert_eq!(PipelineCheckpoint::parse(&t).unwrap(), cp);
        assert!(PipelineCheckpoint::parse(&t[..t.len() - 4]).is_err());
        assert!(cp.is_done("relevance") && !cp.is_done("enumerate"));
        // An output changed since: the phase runs again.
        std::fs::write(&a, "y\n").unwrap();
        assert!(!cp.is_done("relevance"));
        cp.forget_from("relevance");
        assert!(cp.done.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
