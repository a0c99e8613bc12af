//! Replays every input the fuzzers once crashed on (`fuzz/regressions/
//! TARGET/*`) through the same entry point as the fuzz target
//! (`misaal_fuzz`, `fuzz/src/lib.rs`, a dev-dependency without libFuzzer).
//! Each input is its own test.
//! It must return, as an error or as a successful load, within a time
//! bound and without panicking; a panic, a stack overflow or a timeout
//! fails the test.
//!
//! The layout is checked too, so that a target cannot drop out silently:
//! every fuzz target in `fuzz/fuzz_targets/` has an entry here and a folder
//! `fuzz/regressions/TARGET/`. Every file in that folder is an input,
//! except `README.md`, which a folder with no inputs must have, saying why
//! (no crash found, or a fix pinned elsewhere, e.g. an input too big to
//! commit).

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use misaal_fuzz as entries;

type Entry = fn(&[u8]) -> Result<(), String>;

/// Debug builds run far slower than the fuzzer's optimised ones, whose
/// limit is 10 s an input.
const LIMIT: Duration = Duration::from_secs(60);

/// The fuzzer runs its input on the main thread; give each replay as much
/// stack (8 MiB), no more.
const STACK: usize = 8 << 20;

fn replay(entry: Entry, path: &Path) -> Result<(), Failed> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let handle = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let r = entry(&data);
            let _ = tx.send(r);
        })
        .map_err(|e| format!("cannot spawn: {e}"))?;
    match rx.recv_timeout(LIMIT) {
        Ok(_) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => return Err(format!("did not finish within {LIMIT:?}").into()),
        // The sender was dropped without a result: the entry panicked.
        Err(mpsc::RecvTimeoutError::Disconnected) => {}
    }
    handle.join().map_err(|p| {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        format!("panicked: {msg}")
    })?;
    let took = start.elapsed();
    if took > LIMIT {
        return Err(format!("took {took:?}, more than {LIMIT:?}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("regressions");
    let targets: &[(&str, Entry)] = &[
        ("sema", entries::sema),
        ("stmt", entries::stmt),
        ("baseline", entries::baseline),
        ("manifest", entries::manifest),
        ("egg", entries::egg),
    ];
    let mut trials = Vec::new();
    // Every fuzz target has an entry above.
    let fuzz_targets = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&fuzz_targets)
        .unwrap_or_else(|e| panic!("{}: {e}", fuzz_targets.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no fuzz targets in {}", fuzz_targets.display());
    for name in names {
        let known = targets.iter().any(|t| t.0 == name);
        trials.push(Trial::test(format!("{name}/has-an-entry"), move || {
            if known { Ok(()) } else { Err(format!("fuzz/fuzz_targets/{name}.rs has no entry in tests/fuzz_regressions.rs").into()) }
        }));
    }
    for &(target, entry) in targets {
        let dir = root.join(target);
        let (files, layout) = regression_inputs(&dir);
        trials.push(Trial::test(format!("{target}/layout"), move || layout.map_err(Failed::from)));
        for p in files {
            let name = format!("{target}/{}", p.file_name().unwrap().to_string_lossy());
            trials.push(Trial::test(name, move || replay(entry, &p)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The inputs in a target's regression folder (every file but `README.md`),
/// and whether the folder follows the layout: it exists, and if it holds no
/// input, a non-empty `README.md` says why.
fn regression_inputs(dir: &Path) -> (Vec<std::path::PathBuf>, Result<(), String>) {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            return (Vec::new(), Err(format!("{}: {e}; every fuzz target needs a regression folder (with a README.md if no input ever crashed)", dir.display())));
        }
    };
    let mut files: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
    files.sort();
    let readme = dir.join("README.md");
    files.retain(|p| *p != readme);
    if files.is_empty() && std::fs::read_to_string(&readme).map_or(true, |t| t.trim().is_empty()) {
        return (files, Err(format!("{} holds no input and no README.md saying why", dir.display())));
    }
    (files, Ok(()))
}
