//! The digest of the code that turns a rule instance into the semantics
//! its proof key digests: the target registry (`targets/src`: register
//! widths are the default domain of `?vsize*`), the semantics language and
//! unroller (`isa/src`), the rule format and its instantiation
//! (`rulesets/src`) and the side
//! builder (`src/audit.rs`). A rule instance's pre-key includes it, so a
//! change to any of them invalidates every pre-key (see
//! `audit::pre_key`). Whole folders are hashed, not the few functions
//! that matter: a pre-key that goes stale too often costs a fallback to
//! the proof key, one that goes stale too rarely would be unsound.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, subfolders included (a module moved into
/// a subfolder must still count), in a fixed order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).filter_map(|e| e.ok()) {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dirs = [here.join("../targets/src"), here.join("../isa/src"), here.join("../rulesets/src")];
    let mut files: Vec<PathBuf> = dirs.iter().flat_map(|d| rust_files(d)).collect();
    files.push(here.join("src/audit.rs"));
    let (mut a, mut b) = (0xcbf2_9ce4_8422_2325u64, 0x8422_2325_cbf2_9ce4u64);
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let text = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // The file's name relative to its crate, then its text.
        let name = f.strip_prefix(&here).unwrap_or(f).to_string_lossy().into_owned();
        for byte in name.bytes().chain([0]).chain(text).chain([0]) {
            a = (a ^ byte as u64).wrapping_mul(0x100_0000_01b3);
            b = (b ^ byte as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    for d in &dirs {
        // A file added or removed.
        println!("cargo:rerun-if-changed={}", d.display());
    }
    println!("cargo:rustc-env=MISAAL_SIDES_ENGINE_DIGEST={a:016x}{b:016x}");
}
