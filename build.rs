//! The git revision misaal is built from, for the provenance of evidence
//! (`misaal isa check` rows and `--export` READMEs): `MISAAL_GIT_REV`,
//! empty outside a git checkout.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rev = git(&["rev-parse", "--short=7", "HEAD"]).unwrap_or_default();
    // The commit checked out (uncommitted edits are not tracked: cargo would
    // not rerun this script for them, so a `+dirty` mark could be stale).
    println!("cargo:rustc-env=MISAAL_GIT_REV={rev}");
    // Rebuild when HEAD moves (a worktree's HEAD lives in its own git dir).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let (Some(r), Some(common)) = (git(&["symbolic-ref", "-q", "HEAD"]), git(&["rev-parse", "--git-common-dir"])) {
            println!("cargo:rerun-if-changed={common}/{r}");
        }
    }
    // A position-dependent executable: the linker fills in the addresses in
    // its tables (trait objects, string tables), so the loader does not
    // relocate 2 MB of them into private memory at every start; that was
    // about 4 MB of a compile's peak RSS.
    #[cfg(target_os = "linux")]
    println!("cargo:rustc-link-arg-bins=-no-pie");
    println!("cargo:rerun-if-changed=build.rs");
}
