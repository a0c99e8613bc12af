//! The opt-ins of slow tests: one convention for every crate.
//!
//! - `MISAAL_SLOW=1` runs every slow sweep in full (every rule instance,
//!   kernel, input set, seed); each test's doc comment says what its
//!   default samples. [`slow`] reads it.
//! - `MISAAL_KERNELS` chooses the kernels of a test that runs benchmark
//!   kernels: `all`, or a comma-separated list (`add,mul`). Unset, the test
//!   runs all its kernels under `MISAAL_SLOW=1` and its CI default
//!   otherwise (a few tests whose kernels take minutes each run a
//!   larger sample under `MISAAL_SLOW=1`; their doc says which). A name the test does not know is an error that lists the
//!   ones it does. [`kernels`] reads it.
//!
//! ```sh
//! MISAAL_KERNELS=conv_nn,add cargo test -p misaal-compiler --test integration bench_kernels::
//! ```

/// The variable that chooses a kernel test's kernels.
pub const KERNELS_VAR: &str = "MISAAL_KERNELS";

/// The variable that runs slow sweeps in full.
pub const SLOW_VAR: &str = "MISAAL_SLOW";

/// Whether `MISAAL_SLOW=1`: run every slow sweep in full.
pub fn slow() -> bool {
    std::env::var(SLOW_VAR).is_ok_and(|v| v == "1")
}

/// Whether a test of the slow tier runs: yes under `MISAAL_SLOW=1`;
/// otherwise it is recorded as skipped (never passed), with `why` it is
/// slow and the variable that runs it, and the caller returns. For whole
/// tests that CI's fast tier leaves out; a sweep that samples by default
/// reads [`slow`] instead.
pub fn slow_tier(why: &str) -> bool {
    if slow() {
        return true;
    }
    crate::skip(&format!("slow tier ({why}); {SLOW_VAR}=1 runs it"));
    false
}

/// Whether `MISAAL_KERNELS` chooses the kernels (is set and not empty),
/// for a test that runs more when the kernels were chosen by hand.
pub fn kernels_listed() -> bool {
    std::env::var(KERNELS_VAR).is_ok_and(|v| !v.trim().is_empty())
}

/// The kernels a test runs, out of `all` it knows: `MISAAL_KERNELS` (`all`
/// or a comma list), else all of them under `MISAAL_SLOW=1`, else
/// `ci_default`. Panics, naming the known kernels, on a name not in `all`.
#[track_caller]
pub fn kernels(ci_default: &[&str], all: &[String]) -> Vec<String> {
    let value = std::env::var(KERNELS_VAR).ok();
    match choose_kernels(value.as_deref(), slow(), ci_default, None, all) {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    }
}

/// [`kernels`] for a test whose slow run is `slow_default` rather than all
/// of `all` (each of its kernels takes minutes).
#[track_caller]
pub fn kernels_or(ci_default: &[&str], slow_default: &[&str], all: &[String]) -> Vec<String> {
    let value = std::env::var(KERNELS_VAR).ok();
    match choose_kernels(value.as_deref(), slow(), ci_default, Some(slow_default), all) {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    }
}

/// [`kernels`] without the environment: `value` is `MISAAL_KERNELS`'s
/// value (None if unset; empty counts as unset), `slow` whether
/// `MISAAL_SLOW=1`, `slow_default` what a slow run chooses (None: all).
/// Err names the unknown kernels and the known ones.
pub fn choose_kernels(value: Option<&str>, slow: bool, ci_default: &[&str], slow_default: Option<&[&str]>, all: &[String]) -> Result<Vec<String>, String> {
    let value = value.map(str::trim).filter(|v| !v.is_empty());
    let listed = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let chosen: Vec<String> = match value {
        Some("all") => all.to_vec(),
        Some(list) => {
            let mut chosen: Vec<String> = Vec::new();
            for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if !chosen.iter().any(|c| c == name) {
                    chosen.push(name.to_string());
                }
            }
            chosen
        }
        None if slow => slow_default.map_or_else(|| all.to_vec(), listed),
        None => listed(ci_default),
    };
    let unknown: Vec<&str> = chosen.iter().filter(|k| !all.contains(k)).map(String::as_str).collect();
    if !unknown.is_empty() {
        let source = if value.is_some() { KERNELS_VAR } else { "the test's default kernels" };
        return Err(format!("{source}: unknown kernel(s) {}; this test knows: {}", unknown.join(", "), all.join(", ")));
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::choose_kernels;

    fn all() -> Vec<String> {
        ["add", "mul", "sobel3x3"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn unset_runs_the_ci_default_or_all_when_slow() {
        assert_eq!(choose_kernels(None, false, &["mul"], None, &all()).unwrap(), ["mul"]);
        assert_eq!(choose_kernels(None, true, &["mul"], None, &all()).unwrap(), all());
        // An empty value counts as unset.
        assert_eq!(choose_kernels(Some(" "), false, &["add"], None, &all()).unwrap(), ["add"]);
        assert_eq!(choose_kernels(Some(""), true, &["add"], None, &all()).unwrap(), all());
        // A test's own slow set, where all would take hours.
        assert_eq!(choose_kernels(None, true, &["add"], Some(&["add", "mul"]), &all()).unwrap(), ["add", "mul"]);
        assert_eq!(choose_kernels(Some("all"), true, &["add"], Some(&["add", "mul"]), &all()).unwrap(), all());
    }

    #[test]
    fn all_and_a_list_override_the_default_and_slow() {
        assert_eq!(choose_kernels(Some("all"), false, &["mul"], None, &all()).unwrap(), all());
        assert_eq!(choose_kernels(Some(" sobel3x3, add ,,add"), true, &["mul"], None, &all()).unwrap(), ["sobel3x3", "add"]);
    }

    #[test]
    fn an_unknown_kernel_is_an_error_naming_the_known_ones() {
        let e = choose_kernels(Some("add,blur9x9"), false, &[], None, &all()).unwrap_err();
        assert!(e.contains("MISAAL_KERNELS") && e.contains("blur9x9") && e.contains("add, mul, sobel3x3"), "{e}");
        assert!(!e.contains("unknown kernel(s) add"), "{e}");
        // A stale CI default is caught too.
        let e = choose_kernels(None, false, &["gone"], None, &all()).unwrap_err();
        assert!(e.contains("gone") && e.contains("default"), "{e}");
    }
}
