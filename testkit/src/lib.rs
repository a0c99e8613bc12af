//! The skip ledger. A test that cannot run here (a CPU feature, an
//! emulator or a tool is missing) must be counted as skipped, never as
//! passed. The standard test harness has no runtime skip, so such a test
//! calls [`skip`] and returns: the harness counts it passed, and
//! `scripts/test.sh` moves every test named in the ledger from passed to
//! skipped, printing each reason. A check skipped inside a test that
//! otherwise ran ([`skip_part`]) is listed as a skipped check.
//!
//! The ledger is the file named by `MISAAL_SKIP_LOG`, one line per skip:
//! `whole|part <TAB> binary::test <TAB> reason`. Without the variable (a
//! plain `cargo test`) the reason goes to stderr only.
//!
//! The opt-ins of slow tests are read here too, one way for every crate:
//! [`slow`] (`MISAAL_SLOW=1`) and [`kernels`] (`MISAAL_KERNELS=all` or
//! `=add,mul`); see [`optin`].

use std::io::Write;

pub mod optin;
pub mod wrong_compiler;
pub use optin::{KERNELS_VAR, SLOW_VAR, choose_kernels, kernels, kernels_listed, kernels_or, slow, slow_tier};

/// Records that the calling test skips entirely, and why (naming what is
/// missing). The caller returns right after.
pub fn skip(reason: &str) {
    record("whole", reason);
}

/// A `libtest-mimic` trial that runs when nothing it needs is missing
/// (`missing` is None) and is otherwise reported as ignored, its name
/// and stderr saying what is missing: counted skipped, never passed.
pub fn trial_unless_missing(name: &str, missing: Option<&str>, f: impl FnOnce() -> Result<(), libtest_mimic::Failed> + Send + 'static) -> libtest_mimic::Trial {
    match missing {
        None => libtest_mimic::Trial::test(name, f),
        Some(why) => {
            eprintln!("SKIPPED {name}: {why}");
            libtest_mimic::Trial::test(format!("{name} (skipped: {why})"), f).with_ignored_flag(true)
        }
    }
}

/// [`trial_unless_missing`] for each named check, all needing what
/// `missing` names.
pub fn trials_unless_missing<E: Into<libtest_mimic::Failed> + 'static>(
    checks: impl IntoIterator<Item = (String, Box<dyn FnOnce() -> Result<(), E> + Send>)>,
    missing: Option<&str>,
) -> Vec<libtest_mimic::Trial> {
    checks.into_iter().map(|(name, check)| trial_unless_missing(&name, missing, move || check().map_err(Into::into))).collect()
}

/// Records that one check of the calling test was skipped, and why; the
/// test's other checks ran.
pub fn skip_part(reason: &str) {
    record("part", reason);
}

fn record(kind: &str, reason: &str) {
    let binary = std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned())).unwrap_or_default();
    // Cargo names test binaries `<name>-<hash>`.
    let binary = binary.rsplit_once('-').map(|(n, _)| n.to_string()).unwrap_or(binary);
    let test = std::thread::current().name().unwrap_or("main").to_string();
    let reason = reason.replace(['\n', '\t'], " ");
    eprintln!("SKIPPED ({kind}) {binary}::{test}: {reason}");
    if let Some(path) = std::env::var_os("MISAAL_SKIP_LOG") {
        // One short line per append: concurrent tests do not interleave.
        let line = format!("{kind}\t{binary}::{test}\t{reason}\n");
        if let Ok(mut f) = std::fs::OpenOptions::new().append(true).create(true).open(path) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_skip_is_written_to_the_ledger_with_its_test_and_reason() {
        let path = std::env::temp_dir().join(format!("misaal-skip-ledger-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        // SAFETY: no other test of this crate reads the environment.
        unsafe { std::env::set_var("MISAAL_SKIP_LOG", &path) };
        super::skip("no\tqemu-aarch64\nhere");
        super::skip_part("llvm-mca-19 missing");
        let text = std::fs::read_to_string(&path).expect("the ledger");
        let _ = std::fs::remove_file(&path);
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0][0], "whole");
        assert!(lines[0][1].ends_with("::tests::a_skip_is_written_to_the_ledger_with_its_test_and_reason"), "{text}");
        assert_eq!(lines[0][2], "no qemu-aarch64 here");
        assert_eq!((lines[1][0], lines[1][2]), ("part", "llvm-mca-19 missing"));
    }
}

/// The AVX-512 subsets that misaal's C for the suite's target
/// (`avx512_zen4`) uses, as /proc/cpuinfo names them.
const AVX512: &[&str] = &["avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512vbmi"];

/// Extra `cc` flags that let a test build misaal's C for an AVX-512 target
/// (beside its `-march=native`) on this CPU. None where the CPU has the
/// AVX-512 subsets the C uses; elsewhere the C is built against SIMDe's
/// portable intrinsics with the bench's gaps header, as `misaal bench`
/// does on such a CPU: it checks compiled code, never a spec. Err names
/// what is missing (SIMDe), for a skip.
pub fn avx512_cc_flags() -> Result<Vec<String>, String> {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let has = |f: &str| flags.lines().filter(|l| l.starts_with("flags")).any(|l| l.split_whitespace().any(|w| w == f));
    let lacking: Vec<&str> = AVX512.iter().copied().filter(|f| !has(f)).collect();
    if lacking.is_empty() {
        return Ok(Vec::new());
    }
    let gaps = concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/c/simde_gaps.h");
    let probe = std::env::temp_dir().join(format!("misaal-simde-probe-{}.c", std::process::id()));
    let _ = std::fs::write(&probe, "#include <simde/x86/avx512.h>\nint main(void) { return 0; }\n");
    let ok = std::process::Command::new("cc").args(["-fsyntax-only", "-mavx2"]).arg(&probe).output().is_ok_and(|o| o.status.success());
    let _ = std::fs::remove_file(&probe);
    if !ok {
        return Err(format!("this CPU lacks {} and <simde/x86/avx512.h> does not compile (apt install libsimde-dev)", lacking.join(", ")));
    }
    Ok(["-DMISAAL_SIMDE", "-DSIMDE_ENABLE_NATIVE_ALIASES", "-Wno-psabi", "-include", "simde/x86/avx512.h", "-include", gaps].iter().map(|s| s.to_string()).collect())
}

/// `cc` flags that enable every AVX-512 subset of the suite's target
/// (`avx512_zen4`): for a test that only compiles misaal's C (`-c`, never
/// run) on a CPU without them, the check that the C builds for its target.
pub const AVX512_COMPILE_FLAGS: &[&str] = &["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512cd", "-mavx512vnni", "-mavx512vbmi", "-mavx512vbmi2", "-mavx512bitalg", "-mavx512vpopcntdq", "-mavx512ifma", "-mavx512bf16", "-mgfni"];

/// `f` of every item on rayon's pool (a worker a core), for checks that
/// take seconds an item; the results in the items' order.
pub fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter().map(f).collect()
}
