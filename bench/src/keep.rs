//! What a row that is not bit-exact leaves behind, for every target: a copy
//! of that run's kernel folder (our C and header, the naive build, the
//! harness, the objects and programs actually run, and every input set's
//! inputs and outputs), the objects it linked from elsewhere (Halide's),
//! the Stmt, the outputs held only in memory (the interpreter's; HVX's
//! whole run), and a README.txt saying which comparison failed, where the
//! bytes first differ, the command line and misaal's revision. A mismatch
//! that a rebuild does not reproduce can still be looked at.
//!
//! The folder is `WORK/mismatches/KERNEL-TARGET-YYYYMMDDTHHMMSSZ-PID`,
//! built under a `.tmp` name and renamed whole, so a folder that is there
//! is complete. Nothing here runs for a bit-exact row.

use crate::Config;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One failed row's evidence, as a backend gathers it.
pub struct Evidence<'a> {
    /// `x86`, `arm` or `hvx`.
    pub target: &'a str,
    pub kernel: &'a str,
    /// The kernel's work folder: copied whole (it holds only this run's
    /// files); none when the kernel's name cannot name one.
    pub dir: Option<PathBuf>,
    /// Files from outside `dir` the run used, as (path inside the folder,
    /// source): the Stmt, Halide's object and runtime ([`halide_files`]).
    pub files: Vec<(String, PathBuf)>,
    /// Bytes only this process holds, as (path inside the folder, bytes):
    /// the interpreter's outputs, HVX's per-set inputs and outputs.
    pub blobs: Vec<(String, Vec<u8>)>,
    /// The row's `bit_exact` cell, or the error that ended the row.
    pub verdict: &'a str,
    /// Each failed comparison: the input set, the sides, the first
    /// differing byte ([`crate::check::difference`]).
    pub details: &'a [String],
    /// How the run went (`native`, `simde`, `qemu-aarch64 -cpu max`, ...).
    pub run: String,
    /// How to run the kept program again from inside the folder.
    pub rerun: &'a str,
}

/// Halide's object and runtime as [`Evidence::files`]: under `halide/`,
/// apart from ours.
pub fn halide_files(objects: impl IntoIterator<Item = PathBuf>) -> Vec<(String, PathBuf)> {
    objects.into_iter().filter_map(|o| Some((format!("halide/{}", o.file_name()?.to_string_lossy()), o))).collect()
}

/// The Stmt a kernel was compiled from, as an [`Evidence::files`] entry.
pub fn stmt_file(stmt: PathBuf) -> (String, PathBuf) {
    (stmt.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "kernel.stmt".into()), stmt)
}

/// The work folders' parent of every kept run: `WORK/mismatches`.
pub fn root(cfg: &Config) -> PathBuf {
    cfg.work_dir.join("mismatches")
}

/// Keeps `ev` in a new folder under [`root`]; its path.
pub fn keep(cfg: &Config, ev: &Evidence) -> Result<PathBuf, String> {
    let root = root(cfg);
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let base = format!("{}-{}-{}-{}", ev.kernel, ev.target, compact_utc(now), std::process::id());
    let tmp = root.join(format!(".{base}.tmp"));
    let _ = std::fs::remove_dir_all(&tmp);
    let built = fill(cfg, ev, &tmp, now);
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    // A name already taken (the same kernel twice in a second) gets a suffix.
    let mut n = 1;
    let dest = loop {
        let dest = root.join(if n == 1 { base.clone() } else { format!("{base}-{n}") });
        if !dest.exists() {
            break dest;
        }
        n += 1;
    };
    match std::fs::rename(&tmp, &dest) {
        Ok(()) => Ok(dest),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(format!("renaming {} to {}: {e}", tmp.display(), dest.display()))
        }
    }
}

fn fill(cfg: &Config, ev: &Evidence, to: &Path, now: u64) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    if let Some(dir) = ev.dir.as_deref().filter(|d| d.is_dir()) {
        copy_tree(dir, to)?;
    }
    for (rel, f) in &ev.files {
        let p = to.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::copy(f, &p).map_err(|e| format!("copying {}: {e}", f.display()))?;
    }
    for (rel, bytes) in &ev.blobs {
        let p = to.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let mut listing = Vec::new();
    list(to, to, &mut listing);
    listing.sort();
    let readme = readme(cfg, ev, now, &listing);
    std::fs::write(to.join("README.txt"), readme).map_err(|e| format!("{}: {e}", to.join("README.txt").display()))
}

fn readme(cfg: &Config, ev: &Evidence, now: u64, listing: &[(String, u64)]) -> String {
    let mut s = format!("misaal bench kept this run's artifacts: the row of {} on {} was not bit-exact.\n\n", ev.kernel, ev.target);
    let _ = writeln!(s, "kernel:    {}", ev.kernel);
    let _ = writeln!(s, "target:    {} ({})", ev.target, ev.run);
    let _ = writeln!(s, "bit_exact: {}", ev.verdict);
    if !ev.details.is_empty() {
        s.push_str("failed comparisons (first differing byte, as index: ours vs theirs):\n");
        for d in ev.details {
            let _ = writeln!(s, "  {d}");
        }
    }
    let args: Vec<String> = std::env::args_os().map(|a| shell_word(&a.to_string_lossy())).collect();
    let _ = writeln!(s, "command:   {}", args.join(" "));
    let _ = writeln!(s, "cwd:       {}", std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default());
    let _ = writeln!(s, "misaal:    {}", cfg.version);
    let _ = writeln!(s, "compiler:  {} (built our C)", cfg.compiler.display());
    let _ = writeln!(s, "suite:     {}", cfg.suite.display());
    let _ = writeln!(s, "inputs:    {} set(s), interpreter {}", cfg.inputs, if cfg.interp { "run" } else { "skipped" });
    let _ = writeln!(s, "naive:     {}", cfg.naive);
    let _ = writeln!(s, "kept at:   {}", iso_utc(now));
    s.push_str(
        "\nLayout: ours.c/ours.h are the C the compiler wrote; inputN/ holds input set N's\n\
         input buffers (NAME.bin) and each side's outputs (out_LABEL.bin: ours, halide,\n\
         naive, scalar, interpreter), concatenated in manifest order; halide/ holds the\n\
         Halide object and runtime that were linked.\n",
    );
    if !ev.rerun.is_empty() {
        let _ = writeln!(s, "Run it again (from this folder): {}", ev.rerun);
    }
    s.push_str("\nfiles:\n");
    for (name, size) in listing {
        let _ = writeln!(s, "  {name}  ({size} bytes)");
    }
    s
}

/// Copies `from`'s files and folders into `to` (which exists).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("{}: {e}", from.display()))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ty = e.file_type().map_err(|e| format!("{}: {e}", src.display()))?;
        if ty.is_dir() {
            std::fs::create_dir_all(&dst).map_err(|e| format!("{}: {e}", dst.display()))?;
            copy_tree(&src, &dst)?;
        } else if ty.is_file() {
            std::fs::copy(&src, &dst).map_err(|e| format!("copying {}: {e}", src.display()))?;
        }
    }
    Ok(())
}

fn list(root: &Path, dir: &Path, out: &mut Vec<(String, u64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            list(root, &p, out);
        } else if let Ok(m) = e.metadata() {
            out.push((p.strip_prefix(root).unwrap_or(&p).display().to_string(), m.len()));
        }
    }
}

/// A command-line word as a shell reads it back.
fn shell_word(a: &str) -> String {
    if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@".contains(c)) { a.to_string() } else { format!("'{}'", a.replace('\'', "'\\''")) }
}

/// (year, month, day, hour, minute, second) in UTC of `secs` since 1970.
pub fn civil(secs: u64) -> (i64, u32, u32, u64, u64, u64) {
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // H. Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rest / 3600, rest / 60 % 60, rest % 60)
}

/// `YYYYMMDDTHHMMSSZ`, for folder names.
pub fn compact_utc(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

fn iso_utc(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// Keeps a failed row's evidence and says where on stderr; the cell with
/// the folder appended (`...; artifacts kept in PATH`), or the cell as it
/// was and a warning when the folder could not be written.
pub fn keep_and_note(cfg: &Config, ev: &Evidence) -> String {
    match keep(cfg, ev) {
        Ok(path) => {
            eprintln!("note: {} ({}) is not bit-exact; this run's C, objects, inputs and outputs are kept in {}", ev.kernel, ev.target, path.display());
            format!("{}; artifacts kept in {}", ev.verdict, path.display())
        }
        Err(e) => {
            eprintln!("warning: {} ({}) is not bit-exact, and its artifacts could not be kept: {e}", ev.kernel, ev.target);
            ev.verdict.to_string()
        }
    }
}

/// A row that ended in an error: kept as a mismatch is when the run got
/// as far as an input set (a harness that crashed, qemu that failed; HVX
/// writes `stdin.bin` first), since that failure may not come back. A
/// compile or build that failed keeps nothing: its message says why, and a
/// rebuild shows it again. The cell, with the folder when kept.
pub fn keep_error(cfg: &Config, ev: &Evidence) -> String {
    let ran = ev.dir.as_deref().is_some_and(|d| set_dir(d, 0).is_dir() || d.join("stdin.bin").is_file());
    if ran { keep_and_note(cfg, ev) } else { ev.verdict.to_string() }
}

/// The `bit_exact` cell of a row that ended in error `e`: `no: ` and its
/// first line, with what the run left and Halide's `objects` kept as
/// [`keep_error`] says. `ev` is the backend's [`Evidence`]; its verdict
/// and details are replaced by the error's.
pub fn error_cell(cfg: &Config, e: &str, objects: impl IntoIterator<Item = (PathBuf, PathBuf)>, ev: Evidence) -> String {
    let cell = format!("no: {}", e.lines().next().unwrap_or(""));
    let details = [e.to_string()];
    let mut ev = Evidence { verdict: &cell, details: &details, ..ev };
    ev.files.extend(halide_files(objects.into_iter().flat_map(|(o, rt)| [o, rt])));
    keep_error(cfg, &ev)
}

/// The summary line for a run's kept folders, when any were kept.
pub fn summary<'a>(cfg: &Config, cells: impl Iterator<Item = &'a str>) -> Option<String> {
    let n = cells.filter(|c| c.contains(KEPT_MARK)).count();
    (n > 0).then(|| format!("kept the artifacts of {n} row(s) that are not bit-exact under {} (README.txt in each says what differed)", root(cfg).display()))
}

/// What [`keep_and_note`] appends to a cell, before the folder's path.
pub const KEPT_MARK: &str = "; artifacts kept in ";

/// Folders of the work folder that are not kernels': the kept runs and
/// the ARM and HVX work folders (x86's kernels sit at the top).
const RESERVED: &[&str] = &["mismatches", "arm", "hvx"];

/// A kernel's work folder under `work`: its name must be one plain path
/// component (the bench clears the folder at the start of each kernel).
pub fn kernel_dir(work: &Path, name: &str) -> Result<PathBuf, String> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(std::path::Component::Normal(_)), None) if !name.starts_with('.') && !RESERVED.contains(&name) => Ok(work.join(name)),
        _ => Err(format!("kernel name `{name}` cannot name a work folder: the bench builds each kernel in a folder of that name, which must be a plain file name, not hidden, and not one of {}", RESERVED.join(", "))),
    }
}

/// Empties a kernel's work folder (it then holds this run's files only, as
/// the folder a mismatch keeps must) and creates it.
pub fn fresh_dir(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("clearing {}: {e}", dir.display())),
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The folder of input set `run` inside a kernel's work folder.
pub fn set_dir(dir: &Path, run: usize) -> PathBuf {
    dir.join(format!("input{run}"))
}

/// Input set `run` of `k`, each buffer written to `NAME.bin` in the set's
/// own folder (what a failed row keeps); the folder and the set.
pub fn write_input_set(dir: &Path, k: &crate::Kernel, run: usize) -> Result<(PathBuf, crate::inputs::InputSet), String> {
    let set = crate::inputs::input_set(k, run);
    let sd = set_dir(dir, run);
    std::fs::create_dir_all(&sd).map_err(|e| format!("{}: {e}", sd.display()))?;
    for (name, data) in &set {
        let path = sd.join(format!("{name}.bin"));
        std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok((sd, set))
}

/// After a row that was not kept: input set 0's folder stays (one set's
/// inputs and outputs, as a look at the last run), the others go, so the
/// work folder does not grow with `--inputs`.
pub fn drop_later_sets(dir: &Path, inputs: usize) {
    for r in 1..inputs {
        let _ = std::fs::remove_dir_all(set_dir(dir, r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_names_sort_and_read() {
        assert_eq!(compact_utc(0), "19700101T000000Z");
        // 2026-11-27 04:07:12 UTC (date -u -d @1795752432)
        assert_eq!(compact_utc(1_795_752_432), "20261127T040712Z");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn kernel_names_stay_in_the_work_folder() {
        let w = Path::new("/w");
        assert_eq!(kernel_dir(w, "blur3x3").unwrap(), Path::new("/w/blur3x3"));
        for bad in ["", "..", "a/b", "/etc", "mismatches", "hvx", ".", ".lock"] {
            assert!(kernel_dir(w, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn words_quote_only_when_needed() {
        assert_eq!(shell_word("--kernel"), "--kernel");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
