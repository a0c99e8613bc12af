//! Replays every input the fuzzers once crashed on (`fuzz/regressions/
//! TARGET/*`) through the same entry point as the fuzz target
//! (`fuzz/src/lib.rs`, included here by path). Each input is its own test.
//! It must return, as an error or as a successful load, within a time
//! bound and without panicking; a panic, a stack overflow or a timeout
//! fails the test.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod entries;

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
    for &(target, entry) in targets {
        let dir = root.join(target);
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
        files.sort();
        for p in files {
            let name = format!("{target}/{}", p.file_name().unwrap().to_string_lossy());
            trials.push(Trial::test(name, move || replay(entry, &p)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
