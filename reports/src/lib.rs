//! Report schemas and their CSV writers (polars).
//!
//! Owns: column names and file formats of everything under `reports/`.
//! Column names are a public interface (README documents them): add columns
//! at the end, never rename. Knows nothing of how the rows were computed.

use polars::prelude::*;
use std::path::Path;

/// One row of `reports/<target>_semantics.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct SemanticsRow {
    pub intrinsic: String,
    pub instruction: String,
    /// CPUID features, `+`-joined.
    pub feature: String,
    /// `silicon`, `skipped` or `failed`.
    pub status: String,
    pub cases: u64,
    pub seconds: f64,
}

pub const SEMANTICS_COLUMNS: [&str; 6] = ["intrinsic", "instruction", "feature", "status", "cases", "seconds"];

pub fn semantics_frame(rows: &[SemanticsRow]) -> PolarsResult<DataFrame> {
    let col = |name: &str, f: fn(&SemanticsRow) -> String| Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>());
    DataFrame::new(rows.len(), vec![
        col(SEMANTICS_COLUMNS[0], |r| r.intrinsic.clone()),
        col(SEMANTICS_COLUMNS[1], |r| r.instruction.clone()),
        col(SEMANTICS_COLUMNS[2], |r| r.feature.clone()),
        col(SEMANTICS_COLUMNS[3], |r| r.status.clone()),
        Column::new(SEMANTICS_COLUMNS[4].into(), rows.iter().map(|r| r.cases).collect::<Vec<u64>>()),
        Column::new(SEMANTICS_COLUMNS[5].into(), rows.iter().map(|r| (r.seconds * 1e4).round() / 1e4).collect::<Vec<f64>>()),
    ])
}

#[derive(Debug)]
pub enum ReportError {
    Io(std::io::Error),
    Polars(PolarsError),
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Io(e) => write!(f, "{e}"),
            ReportError::Polars(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReportError {}

/// Writes `df` as CSV to `path` via a temporary file and a rename, so a
/// reader never sees a half-written report.
pub fn write_csv_atomic(df: &mut DataFrame, path: &Path) -> Result<(), ReportError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(ReportError::Io)?;
    }
    let tmp = path.with_extension(format!("csv.tmp{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp).map_err(ReportError::Io)?;
        CsvWriter::new(&mut file).include_header(true).finish(df).map_err(ReportError::Polars)?;
        file.sync_all().map_err(ReportError::Io)?;
        std::fs::rename(&tmp, path).map_err(ReportError::Io)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

pub fn write_semantics_csv(rows: &[SemanticsRow], path: &Path) -> Result<(), ReportError> {
    let mut df = semantics_frame(rows).map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semantics_csv_has_the_documented_header_and_rows() {
        let dir = std::env::temp_dir().join(format!("misaal-reports-{}", std::process::id()));
        let path = dir.join("x86_semantics.csv");
        let rows = vec![SemanticsRow {
            intrinsic: "_mm_add_epi8".into(),
            instruction: "paddb".into(),
            feature: "sse2".into(),
            status: "silicon".into(),
            cases: 1000,
            seconds: 0.01234,
        }];
        write_semantics_csv(&rows, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("intrinsic,instruction,feature,status,cases,seconds"));
        assert_eq!(lines.next(), Some("_mm_add_epi8,paddb,sse2,silicon,1000,0.0123"));
        assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains(".tmp")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// One row of `reports/<target>_classes.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassRow {
    pub class: String,
    pub instruction: String,
    /// `name=value;...;operands=[declared index of each canonical operand]`.
    pub params: String,
    /// `z3`, `quickcheck:N` or `failed`.
    pub check: String,
}

pub const CLASS_COLUMNS: [&str; 4] = ["class", "instruction", "params", "check"];

/// One row of `reports/<target>_lanes.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneRow {
    pub instruction: String,
    /// Space-separated lane indices.
    pub unique_lanes: String,
    pub reduction_factor: u64,
    /// `operand[hi:lo]` slices read by output lane 0, space-separated.
    pub lane0_slices: String,
}

pub const LANE_COLUMNS: [&str; 4] = ["instruction", "unique_lanes", "reduction_factor", "lane0_slices"];

fn string_column(name: &str, v: Vec<String>) -> Column {
    Column::new(name.into(), v)
}

pub fn write_classes_csv(rows: &[ClassRow], path: &Path) -> Result<(), ReportError> {
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(CLASS_COLUMNS[0], rows.iter().map(|r| r.class.clone()).collect()),
            string_column(CLASS_COLUMNS[1], rows.iter().map(|r| r.instruction.clone()).collect()),
            string_column(CLASS_COLUMNS[2], rows.iter().map(|r| r.params.clone()).collect()),
            string_column(CLASS_COLUMNS[3], rows.iter().map(|r| r.check.clone()).collect()),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}

pub fn write_lanes_csv(rows: &[LaneRow], path: &Path) -> Result<(), ReportError> {
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(LANE_COLUMNS[0], rows.iter().map(|r| r.instruction.clone()).collect()),
            string_column(LANE_COLUMNS[1], rows.iter().map(|r| r.unique_lanes.clone()).collect()),
            Column::new(LANE_COLUMNS[2].into(), rows.iter().map(|r| r.reduction_factor).collect::<Vec<u64>>()),
            string_column(LANE_COLUMNS[3], rows.iter().map(|r| r.lane0_slices.clone()).collect()),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}

/// One row of `reports/verify_<target>.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyRow {
    pub rule: String,
    /// `bw=16,vsize=256`, or `-` for a concrete rule.
    pub instantiation: String,
    /// `proved`, `refuted`, `unknown`, `inapplicable` or `encoder-mismatch`.
    pub verdict: String,
    pub solver_ms: f64,
    pub quickcheck_cases: u64,
    /// Inputs in hex and both sides' outputs, for `refuted`; the reason otherwise.
    pub counterexample: String,
}

pub const VERIFY_COLUMNS: [&str; 6] = ["rule", "instantiation", "verdict", "solver_ms", "quickcheck_cases", "counterexample"];

pub fn write_verify_csv(rows: &[VerifyRow], path: &Path) -> Result<(), ReportError> {
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(VERIFY_COLUMNS[0], rows.iter().map(|r| r.rule.clone()).collect()),
            string_column(VERIFY_COLUMNS[1], rows.iter().map(|r| r.instantiation.clone()).collect()),
            string_column(VERIFY_COLUMNS[2], rows.iter().map(|r| r.verdict.clone()).collect()),
            Column::new(VERIFY_COLUMNS[3].into(), rows.iter().map(|r| (r.solver_ms * 1e3).round() / 1e3).collect::<Vec<f64>>()),
            Column::new(VERIFY_COLUMNS[4].into(), rows.iter().map(|r| r.quickcheck_cases).collect::<Vec<u64>>()),
            string_column(VERIFY_COLUMNS[5], rows.iter().map(|r| r.counterexample.clone()).collect()),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}
