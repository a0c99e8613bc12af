//! Exclusive use of a bench work folder for one run: two runs building the
//! same kernel in one folder overwrite each other's inputs and outputs and
//! report mismatches that are not there. The lock file holds the owner's
//! pid and start time; one whose owner has exited is taken over.

use std::path::{Path, PathBuf};

pub struct WorkLock(PathBuf);

impl WorkLock {
    pub fn take(work: &Path) -> Result<WorkLock, String> {
        std::fs::create_dir_all(work).map_err(|e| format!("error: {}: {e}", work.display()))?;
        let path = work.join(".lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    use std::io::Write;
                    // A bare pid where the start time cannot be read: an
                    // unreadable start must not make a live lock look stale.
                    let me = std::process::id();
                    let _ = match process_start(me) {
                        Some(start) => write!(f, "{me} {start}"),
                        None => write!(f, "{me}"),
                    };
                    return Ok(WorkLock(path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(&path).unwrap_or_default();
                    if lock_owner_alive(&owner) {
                        return Err(format!(
                            "error: another misaal bench (pid {}) is using {}; wait for it, or give this run its own --work-dir (and --report-dir)",
                            owner.split_whitespace().next().unwrap_or(""),
                            work.display()
                        ));
                    }
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(format!("error: {}: {e}", path.display())),
            }
        }
        Err(format!("error: cannot take {}", path.display()))
    }
}

/// A process's start time (`/proc/PID/stat` field 22, clock ticks since
/// boot): with the pid it names one process, where a pid alone can be
/// reused by another once its run has died.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the lock's owner (`PID START`, or a bare `PID` from older
/// runs) is still the process that wrote it.
fn lock_owner_alive(owner: &str) -> bool {
    let mut f = owner.split_whitespace();
    let Some(pid) = f.next().and_then(|p| p.parse::<u32>().ok()) else { return false };
    match f.next().and_then(|s| s.parse::<u64>().ok()) {
        Some(start) => process_start(pid) == Some(start),
        None => Path::new(&format!("/proc/{pid}")).exists(),
    }
}

impl Drop for WorkLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
