//! Rule usage: what one kernel's compile hands to the bench
//! (`WORK/KERNEL/usage/rule_usage.csv`), the bench's report gathered from
//! them (`reports/rule_usage_x86.csv`), and the class table the coverage
//! report reads (`reports/x86_classes.csv`). Rule names hold commas
//! (`NAME[var=value,...]`), so these files are read back as CSV, never
//! split on commas.

use crate::{CLASS_COLUMNS, ReportError, read_csv, write_csv_atomic};
use polars::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// One proved rule instance's use in one kernel's compile, summed over
/// its functions: a row of `rule_usage_x86.csv` (docs/reports.md).
#[derive(Clone, Debug, PartialEq)]
pub struct RuleUsageRow {
    /// `NAME[var=value,...]`; a `birewrite`'s reverse ends in `:rev`.
    pub rule: String,
    pub kernel: String,
    /// egglog's match count.
    pub matches: u64,
    /// egglog's search-and-apply time for the rule.
    pub search_apply_ms: f64,
    /// An instruction it produced is in the extracted code.
    pub used_in_extraction: bool,
}

/// `reports/rule_usage_x86.csv`.
pub const RULE_USAGE_COLUMNS: [&str; 5] = ["rule", "kernel", "matches", "search_apply_ms", "used_in_extraction"];
/// One kernel's `rule_usage.csv`: [`RULE_USAGE_COLUMNS`] without `kernel`
/// (the folder names it).
pub const KERNEL_RULE_USAGE_COLUMNS: [&str; 4] = ["rule", "matches", "search_apply_ms", "used_in_extraction"];

fn usage_frame(rows: &[RuleUsageRow], with_kernel: bool) -> PolarsResult<DataFrame> {
    let c = RULE_USAGE_COLUMNS;
    let mut cols = vec![Column::new(c[0].into(), rows.iter().map(|r| r.rule.clone()).collect::<Vec<_>>())];
    if with_kernel {
        cols.push(Column::new(c[1].into(), rows.iter().map(|r| r.kernel.clone()).collect::<Vec<_>>()));
    }
    cols.push(Column::new(c[2].into(), rows.iter().map(|r| r.matches).collect::<Vec<u64>>()));
    cols.push(Column::new(c[3].into(), rows.iter().map(|r| (r.search_apply_ms * 1e3).round() / 1e3).collect::<Vec<f64>>()));
    cols.push(Column::new(c[4].into(), rows.iter().map(|r| r.used_in_extraction).collect::<Vec<bool>>()));
    DataFrame::new(rows.len(), cols)
}

/// `reports/rule_usage_x86.csv`, written atomically.
pub fn write_rule_usage_csv(rows: &[RuleUsageRow], path: &Path) -> Result<(), ReportError> {
    write_csv_atomic(&mut usage_frame(rows, true).map_err(ReportError::Polars)?, path)
}

/// One kernel's `rule_usage.csv` (the rows' `kernel` is not written).
pub fn write_kernel_rule_usage_csv(rows: &[RuleUsageRow], path: &Path) -> Result<(), ReportError> {
    write_csv_atomic(&mut usage_frame(rows, false).map_err(ReportError::Polars)?, path)
}

fn missing(path: &Path, column: &str, e: PolarsError) -> ReportError {
    ReportError::Polars(polars_err!(ColumnNotFound: "{}: column `{column}`: {e}", path.display()))
}

/// Reads one kernel's `rule_usage.csv` back, each row's `kernel` set to
/// `kernel`.
pub fn read_kernel_rule_usage_csv(path: &Path, kernel: &str) -> Result<Vec<RuleUsageRow>, ReportError> {
    let df = read_csv(path)?;
    let c = KERNEL_RULE_USAGE_COLUMNS;
    let col = |n: &str| df.column(n).map_err(|e| missing(path, n, e));
    let rule = col(c[0])?.cast(&DataType::String).map_err(ReportError::Polars)?;
    let matches = col(c[1])?.cast(&DataType::UInt64).map_err(ReportError::Polars)?;
    let ms = col(c[2])?.cast(&DataType::Float64).map_err(ReportError::Polars)?;
    let used = col(c[3])?.cast(&DataType::Boolean).map_err(ReportError::Polars)?;
    let (rule, matches, ms, used) = (
        rule.str().map_err(ReportError::Polars)?,
        matches.u64().map_err(ReportError::Polars)?,
        ms.f64().map_err(ReportError::Polars)?,
        used.bool().map_err(ReportError::Polars)?,
    );
    Ok((0..df.height())
        .map(|i| RuleUsageRow {
            rule: rule.get(i).unwrap_or_default().to_string(),
            kernel: kernel.to_string(),
            matches: matches.get(i).unwrap_or(0),
            search_apply_ms: ms.get(i).unwrap_or(0.0),
            used_in_extraction: used.get(i).unwrap_or(false),
        })
        .collect())
}

/// `reports/<target>_classes.csv` as instruction -> class.
pub fn read_class_of(path: &Path) -> Result<HashMap<String, String>, ReportError> {
    let df = read_csv(path)?;
    let col = |n: &str| df.column(n).map_err(|e| missing(path, n, e)).and_then(|c| c.cast(&DataType::String).map_err(ReportError::Polars));
    let (class, instr) = (col(CLASS_COLUMNS[0])?, col(CLASS_COLUMNS[1])?);
    let (class, instr) = (class.str().map_err(ReportError::Polars)?, instr.str().map_err(ReportError::Polars)?);
    Ok((0..df.height()).filter_map(|k| Some((instr.get(k)?.to_string(), class.get(k)?.to_string()))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_usage_round_trips_names_with_commas_and_quotes() {
        let dir = std::env::temp_dir().join(format!("misaal-usage-{}", std::process::id()));
        let path = dir.join("rule_usage.csv");
        let rows = vec![
            RuleUsageRow { rule: "synth.add[?vsize=256,?bw=16]".into(), kernel: "k".into(), matches: 12, search_apply_ms: 0.125, used_in_extraction: true },
            RuleUsageRow { rule: "a \"quoted\", name:rev".into(), kernel: "k".into(), matches: 0, search_apply_ms: 3.0, used_in_extraction: false },
        ];
        write_kernel_rule_usage_csv(&rows, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("rule,matches,search_apply_ms,used_in_extraction\n"), "{text}");
        assert_eq!(read_kernel_rule_usage_csv(&path, "k").unwrap(), rows);
        let all = dir.join("all.csv");
        write_rule_usage_csv(&rows, &all).unwrap();
        let text = std::fs::read_to_string(&all).unwrap();
        assert!(text.starts_with("rule,kernel,matches,search_apply_ms,used_in_extraction\n\"synth.add[?vsize=256,?bw=16]\",k,12,0.125,true\n"), "{text}");
        assert!(read_kernel_rule_usage_csv(&dir.join("none.csv"), "k").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_class_table_is_read_by_column_name() {
        let dir = std::env::temp_dir().join(format!("misaal-classes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x86_classes.csv");
        std::fs::write(&path, "class,instruction,params,check\n\"add,1\",_mm_add_epi8,\"a,b\",ok\nc2,_mm_sub_epi8,,ok\n").unwrap();
        let m = read_class_of(&path).unwrap();
        assert_eq!(m.get("_mm_add_epi8").map(String::as_str), Some("add,1"));
        assert_eq!(m.get("_mm_sub_epi8").map(String::as_str), Some("c2"));
        std::fs::write(&path, "klass,instruction\nx,y\n").unwrap();
        assert!(read_class_of(&path).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
