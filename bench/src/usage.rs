//! x86's rule-usage and coverage reports, gathered from what each
//! kernel's compile wrote to `WORK/KERNEL/usage/`.

use std::path::Path;

/// `reports/rule_usage_x86.csv` (`rule,kernel,matches,search_apply_ms,
/// used_in_extraction`: every proved rule instance a kernel loaded, with
/// egglog's match counts and search-and-apply time summed over its
/// functions) and `reports/coverage_x86.csv` (`instruction,class,
/// reachable_by_rules,emitted_in_suite`: every verified x86 spec; `class`
/// is its similarity class from `reports/x86_classes.csv` when `misaal
/// classes` has written it, else `family:NAME`, the spec file).
pub fn write_usage_reports(work: &Path, reports: &Path, kernels: &[&str]) -> Result<String, String> {
    let mut usage: Vec<misaal_reports::RuleUsageRow> = Vec::new();
    let mut emitted: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for k in kernels {
        let dir = work.join(k).join("usage");
        // A kernel whose compile failed wrote none: its row says so.
        let Ok(rows) = misaal_reports::read_kernel_rule_usage_csv(&dir.join("rule_usage.csv"), k) else { continue };
        usage.extend(rows);
        if let Ok(text) = std::fs::read_to_string(dir.join("emitted.txt")) {
            emitted.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_string));
        }
    }
    let usage_csv = reports.join("rule_usage_x86.csv");
    misaal_reports::write_rule_usage_csv(&usage, &usage_csv).map_err(|e| format!("error: writing {}: {e}", usage_csv.display()))?;
    let target = misaal_compiler::isel::Target::x86()?;
    let book = misaal_compiler::isel::rule_book(&target, &Default::default())?;
    let reachable = book.reachable_instructions(&target.rule_env());
    // Without `misaal classes`' table, the spec file stands in for the class.
    let classes = misaal_reports::read_class_of(&reports.join("x86_classes.csv")).unwrap_or_default();
    let mut cov = Vec::new();
    let (mut n, mut r, mut e) = (0, 0, 0);
    for (i, sem) in target.instrs.iter() {
        if target.status.verified(&i.name, sem).is_err() {
            continue;
        }
        let class = classes.get(&i.name).cloned().unwrap_or_else(|| format!("family:{}", i.family));
        let (reach, emit) = (reachable.contains(&i.name), emitted.contains(&i.name));
        n += 1;
        r += reach as usize;
        e += emit as usize;
        cov.push(misaal_reports::CoverageRow { instruction: i.name.clone(), class, reachable_by_rules: reach, emitted_in_suite: emit });
    }
    let coverage_csv = reports.join("coverage_x86.csv");
    misaal_reports::write_coverage_csv(&cov, &coverage_csv).map_err(|e| format!("error: writing {}: {e}", coverage_csv.display()))?;
    Ok(format!("wrote {} and {}: {n} verified x86 specs, {r} reachable by rules, {e} emitted in these kernels", usage_csv.display(), coverage_csv.display()))
}
