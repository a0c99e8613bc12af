//! Report schemas and their CSV writers (polars).
//!
//! Owns: column names and file formats of everything under `reports/`.
//! Column names are a public interface (docs/reports.md documents them): add columns
//! at the end, never rename. Knows nothing of how the rows were computed.

use polars::prelude::*;
use std::path::Path;

mod bench_emulated;
pub use bench_emulated::*;
mod usage;
pub use usage::*;

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
    write_csv_atomic_quoting(df, path, QuoteStyle::default())
}

/// The CSV at `path`, with its header; a missing file is an I/O error
/// naming it.
fn read_csv(path: &Path) -> Result<DataFrame, ReportError> {
    if !path.exists() {
        return Err(ReportError::Io(std::io::Error::new(std::io::ErrorKind::NotFound, format!("{}: no such file", path.display()))));
    }
    CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|r| r.finish())
        .map_err(ReportError::Polars)
}

/// [`write_csv_atomic`], quoting fields as `quote` says.
fn write_csv_atomic_quoting(df: &mut DataFrame, path: &Path, quote: QuoteStyle) -> Result<(), ReportError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(ReportError::Io)?;
    }
    let tmp = path.with_extension(format!("csv.tmp{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp).map_err(ReportError::Io)?;
        CsvWriter::new(&mut file).include_header(true).with_quote_style(quote).finish(df).map_err(ReportError::Polars)?;
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

/// A column of cells, each empty (a null) or text, quoted only where it
/// holds a comma, a quote or a line break. An empty text is written as a
/// null: polars writes an empty string as `""`.
fn text_cells(name: &str, v: impl Iterator<Item = String>) -> Column {
    Column::new(name.into(), v.map(|s| (!s.is_empty()).then_some(s)).collect::<Vec<Option<String>>>())
}

/// One row of `reports/coverage_x86.csv`: a verified x86 spec.
#[derive(Clone, Debug, PartialEq)]
pub struct CoverageRow {
    pub instruction: String,
    /// Its similarity class from `reports/x86_classes.csv`, else
    /// `family:NAME` (its spec file).
    pub class: String,
    /// Some rule instantiation's right side names it.
    pub reachable_by_rules: bool,
    /// The benchmarked kernels emitted it.
    pub emitted_in_suite: bool,
}

pub const COVERAGE_COLUMNS: [&str; 4] = ["instruction", "class", "reachable_by_rules", "emitted_in_suite"];

pub fn write_coverage_csv(rows: &[CoverageRow], path: &Path) -> Result<(), ReportError> {
    let c = COVERAGE_COLUMNS;
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            text_cells(c[0], rows.iter().map(|r| r.instruction.clone())),
            text_cells(c[1], rows.iter().map(|r| r.class.clone())),
            text_cells(c[2], rows.iter().map(|r| r.reachable_by_rules.to_string())),
            text_cells(c[3], rows.iter().map(|r| r.emitted_in_suite.to_string())),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
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

/// One row of `reports/<target>_class_families.csv`: a spec family's
/// compression, and a published baseline's on the instructions both hold.
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyRow {
    /// Spec file stem, or `all`.
    pub family: String,
    pub instructions: u64,
    pub classes: u64,
    pub ratio: f64,
    /// Instructions the baseline also classifies.
    pub shared: u64,
    /// Our classes over the shared instructions.
    pub shared_classes: u64,
    pub shared_ratio: Option<f64>,
    /// The baseline table's name; empty without one.
    pub baseline: String,
    pub baseline_classes: Option<u64>,
    pub baseline_ratio: Option<f64>,
}

pub const FAMILY_COLUMNS: [&str; 10] =
    ["family", "instructions", "classes", "ratio", "shared", "shared_classes", "shared_ratio", "baseline", "baseline_classes", "baseline_ratio"];

pub fn write_families_csv(rows: &[FamilyRow], path: &Path) -> Result<(), ReportError> {
    let r2 = |x: f64| (x * 100.0).round() / 100.0;
    let u = |name: &str, f: fn(&FamilyRow) -> u64| Column::new(name.into(), rows.iter().map(f).collect::<Vec<u64>>());
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(FAMILY_COLUMNS[0], rows.iter().map(|r| r.family.clone()).collect()),
            u(FAMILY_COLUMNS[1], |r| r.instructions),
            u(FAMILY_COLUMNS[2], |r| r.classes),
            Column::new(FAMILY_COLUMNS[3].into(), rows.iter().map(|r| r2(r.ratio)).collect::<Vec<f64>>()),
            u(FAMILY_COLUMNS[4], |r| r.shared),
            u(FAMILY_COLUMNS[5], |r| r.shared_classes),
            Column::new(FAMILY_COLUMNS[6].into(), rows.iter().map(|r| r.shared_ratio.map(r2)).collect::<Vec<Option<f64>>>()),
            string_column(FAMILY_COLUMNS[7], rows.iter().map(|r| r.baseline.clone()).collect()),
            Column::new(FAMILY_COLUMNS[8].into(), rows.iter().map(|r| r.baseline_classes).collect::<Vec<Option<u64>>>()),
            Column::new(FAMILY_COLUMNS[9].into(), rows.iter().map(|r| r.baseline_ratio.map(r2)).collect::<Vec<Option<f64>>>()),
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

/// One row of `reports/<target>_relevance.csv`: `relevant_class` helps
/// build `class` (see `misaal_datalog::relevance`).
#[derive(Clone, Debug, PartialEq)]
pub struct RelevanceRow {
    pub class: String,
    pub relevant_class: String,
    /// `direct` (bound to R's BvSlices) or `generalized` (to its intermediate values).
    pub kind: String,
    /// `I-member[lane l] in R-member[lane m]: I's lane with its operands bound`.
    pub witness: String,
}

pub const RELEVANCE_COLUMNS: [&str; 4] = ["class", "relevant_class", "kind", "witness"];

pub fn write_relevance_csv(rows: &[RelevanceRow], path: &Path) -> Result<(), ReportError> {
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(RELEVANCE_COLUMNS[0], rows.iter().map(|r| r.class.clone()).collect()),
            string_column(RELEVANCE_COLUMNS[1], rows.iter().map(|r| r.relevant_class.clone()).collect()),
            string_column(RELEVANCE_COLUMNS[2], rows.iter().map(|r| r.kind.clone()).collect()),
            string_column(RELEVANCE_COLUMNS[3], rows.iter().map(|r| r.witness.clone()).collect()),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}

/// One row of `reports/<target>_swizzles.csv` (see `misaal_datalog::swizzles`).
#[derive(Clone, Debug, PartialEq)]
pub struct SwizzleRow {
    pub class: String,
    pub elem_bits: u64,
    pub inputs: u64,
    pub lanes: u64,
    /// `instruction`, `read` or `feed`.
    pub role: String,
    /// Space-separated: every instruction that performs or needs it.
    pub instructions: String,
    /// `a0 b0 a1 b1 ...`: what each output element reads (`0`: zero).
    pub pattern: String,
}

pub const SWIZZLE_COLUMNS: [&str; 7] = ["class", "elem_bits", "inputs", "lanes", "role", "instructions", "pattern"];

pub fn write_swizzles_csv(rows: &[SwizzleRow], path: &Path) -> Result<(), ReportError> {
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(SWIZZLE_COLUMNS[0], rows.iter().map(|r| r.class.clone()).collect()),
            Column::new(SWIZZLE_COLUMNS[1].into(), rows.iter().map(|r| r.elem_bits).collect::<Vec<u64>>()),
            Column::new(SWIZZLE_COLUMNS[2].into(), rows.iter().map(|r| r.inputs).collect::<Vec<u64>>()),
            Column::new(SWIZZLE_COLUMNS[3].into(), rows.iter().map(|r| r.lanes).collect::<Vec<u64>>()),
            string_column(SWIZZLE_COLUMNS[4], rows.iter().map(|r| r.role.clone()).collect()),
            string_column(SWIZZLE_COLUMNS[5], rows.iter().map(|r| r.instructions.clone()).collect()),
            string_column(SWIZZLE_COLUMNS[6], rows.iter().map(|r| r.pattern.clone()).collect()),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}

/// One row of `reports/synth_<target>.csv`: a synthesis phase's last run.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthPhaseRow {
    /// `relevance`, `swizzles`, ...
    pub phase: String,
    pub wall_s: f64,
    /// What the phase produced: relevant pairs, swizzles, rules.
    pub outputs: u64,
    /// `name=value` pairs separated by `;`.
    pub detail: String,
}

pub const SYNTH_COLUMNS: [&str; 4] = ["phase", "wall_s", "outputs", "detail"];

/// Replaces `row.phase`'s row of the table at `path` (other phases' rows
/// are kept, in phase order), written atomically.
pub fn update_synth_csv(row: &SynthPhaseRow, path: &Path) -> Result<(), ReportError> {
    let mut rows: Vec<SynthPhaseRow> = Vec::new();
    if let Ok(df) = read_csv(path) {
        let col = |n: &str| df.column(n).ok().cloned();
        if let (Some(p), Some(w), Some(o), Some(d)) = (col("phase"), col("wall_s"), col("outputs"), col("detail")) {
            for i in 0..df.height() {
                let get = |c: &Column| c.get(i).ok().map(|v| v.to_string().trim_matches('"').to_string()).unwrap_or_default();
                rows.push(SynthPhaseRow { phase: get(&p), wall_s: get(&w).parse().unwrap_or(f64::NAN), outputs: get(&o).parse().unwrap_or(0), detail: get(&d) });
            }
        }
    }
    rows.retain(|r| r.phase != row.phase);
    rows.push(row.clone());
    let order = |p: &str| ["relevance", "swizzles", "enumerate", "abstract"].iter().position(|x| *x == p).unwrap_or(99);
    rows.sort_by_key(|r| order(&r.phase));
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(SYNTH_COLUMNS[0], rows.iter().map(|r| r.phase.clone()).collect()),
            Column::new(SYNTH_COLUMNS[1].into(), rows.iter().map(|r| (r.wall_s * 1000.0).round() / 1000.0).collect::<Vec<f64>>()),
            Column::new(SYNTH_COLUMNS[2].into(), rows.iter().map(|r| r.outputs).collect::<Vec<u64>>()),
            string_column(SYNTH_COLUMNS[3], rows.iter().map(|r| r.detail.clone()).collect()),
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

/// One row of `reports/bench_<target>.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    pub kernel: String,
    /// Parse and C emission, in milliseconds.
    pub compile_ms: f64,
    /// Median time of one call of our code; NaN when it could not run.
    pub ours_us: f64,
    /// Median time of one call of Halide's own object; NaN without a baseline.
    pub halide_us: f64,
    /// `halide_us / ours_us`: above 1 means ours is faster.
    pub speedup: f64,
    /// `yes` when our output equals the reference interpreter's and Halide's.
    pub bit_exact: String,
    /// Peak resident memory of the compile, in KiB.
    pub peak_rss_kb: u64,
    /// Median time of our naive (lane-by-lane) build, same run.
    pub naive_us: f64,
    /// Median time of the scalar C baseline by `clang -O3 -march=native`;
    /// NaN without clang or a scalar file.
    pub clang_us: f64,
    /// `clang_us / ours_us`.
    pub speedup_vs_clang: f64,
    /// Subterms instruction selection left to the naive lowering (None for
    /// a `--naive` compile).
    pub fallback_exprs: Option<u64>,
    /// The Halide target the suite was built for.
    pub target: String,
    /// How ours ran: `native`, or `simde` (built against SIMDe's portable
    /// intrinsics because this CPU lacks a feature the target implies, or
    /// `--emulate simde`; the timing columns are then empty).
    pub run: String,
    /// llvm-mca's cycles per iteration (`-mcpu=znver4`) summed over the
    /// innermost SIMD loops of our C built for Zen 4 (never run); NaN
    /// (empty) without llvm-mca-19 or clang-19.
    pub ours_mca_cycles: f64,
    /// The same for Halide's object; NaN without it.
    pub halide_mca_cycles: f64,
    /// `halide_mca_cycles / ours_mca_cycles`: above 1 means ours is
    /// estimated faster on Zen 4. A static estimate, not a time.
    pub mca_speedup: f64,
    /// How many innermost loops each estimate summed.
    pub ours_mca_loops: Option<u64>,
    pub halide_mca_loops: Option<u64>,
    /// Each innermost loop's llvm-mca cycles per byte it writes (a
    /// reduction: reads), summed over the loops: unlike cycles per
    /// iteration, not inflated by unrolling. NaN without an estimate.
    pub ours_mca_cycles_per_byte: f64,
    pub halide_mca_cycles_per_byte: f64,
    /// `halide_mca_cycles_per_byte / ours_mca_cycles_per_byte`.
    pub mca_per_byte_speedup: f64,
}

impl BenchRow {
    /// A row of `kernel` with nothing measured yet: every time and
    /// estimate NaN (an empty cell), every count absent.
    pub fn unmeasured(kernel: &str, target: &str) -> BenchRow {
        BenchRow {
            kernel: kernel.into(),
            compile_ms: f64::NAN,
            ours_us: f64::NAN,
            halide_us: f64::NAN,
            speedup: f64::NAN,
            bit_exact: String::new(),
            peak_rss_kb: 0,
            naive_us: f64::NAN,
            clang_us: f64::NAN,
            speedup_vs_clang: f64::NAN,
            fallback_exprs: None,
            target: target.into(),
            run: String::new(),
            ours_mca_cycles: f64::NAN,
            halide_mca_cycles: f64::NAN,
            mca_speedup: f64::NAN,
            ours_mca_loops: None,
            halide_mca_loops: None,
            ours_mca_cycles_per_byte: f64::NAN,
            halide_mca_cycles_per_byte: f64::NAN,
            mca_per_byte_speedup: f64::NAN,
        }
    }
}

/// `reports/bench_x86.csv`'s columns, in order. Columns 13 to 18 were
/// added after the first twelve, which keep their places and meanings:
/// `run` (`native` or `simde`), `ours_mca_cycles`, `halide_mca_cycles`,
/// `mca_speedup` (Halide/ours), `ours_mca_loops`, `halide_mca_loops`; then
/// `ours_mca_cycles_per_byte`, `halide_mca_cycles_per_byte` and
/// `mca_per_byte_speedup` (Halide/ours), see [`BenchRow`].
/// A value that could not be measured (a timing in a `simde` row, an
/// estimate without llvm-mca) is an empty cell.
pub const BENCH_COLUMNS: [&str; 21] = [
    "kernel",
    "compile_ms",
    "ours_us",
    "halide_us",
    "speedup",
    "bit_exact",
    "peak_rss_kb",
    "naive_us",
    "clang_us",
    "speedup_vs_clang",
    "fallback_exprs",
    "target",
    "run",
    "ours_mca_cycles",
    "halide_mca_cycles",
    "mca_speedup",
    "ours_mca_loops",
    "halide_mca_loops",
    "ours_mca_cycles_per_byte",
    "halide_mca_cycles_per_byte",
    "mca_per_byte_speedup",
];

pub fn write_bench_csv(rows: &[BenchRow], path: &Path) -> Result<(), ReportError> {
    // NaN (not measured) is written as an empty cell, not `NaN`.
    let r3 = |x: f64| x.is_finite().then(|| (x * 1e3).round() / 1e3);
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(BENCH_COLUMNS[0], rows.iter().map(|r| r.kernel.clone()).collect()),
            Column::new(BENCH_COLUMNS[1].into(), rows.iter().map(|r| r3(r.compile_ms)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[2].into(), rows.iter().map(|r| r3(r.ours_us)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[3].into(), rows.iter().map(|r| r3(r.halide_us)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[4].into(), rows.iter().map(|r| r3(r.speedup)).collect::<Vec<Option<f64>>>()),
            string_column(BENCH_COLUMNS[5], rows.iter().map(|r| r.bit_exact.clone()).collect()),
            Column::new(BENCH_COLUMNS[6].into(), rows.iter().map(|r| r.peak_rss_kb).collect::<Vec<u64>>()),
            Column::new(BENCH_COLUMNS[7].into(), rows.iter().map(|r| r3(r.naive_us)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[8].into(), rows.iter().map(|r| r3(r.clang_us)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[9].into(), rows.iter().map(|r| r3(r.speedup_vs_clang)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[10].into(), rows.iter().map(|r| r.fallback_exprs).collect::<Vec<Option<u64>>>()),
            string_column(BENCH_COLUMNS[11], rows.iter().map(|r| r.target.clone()).collect()),
            string_column(BENCH_COLUMNS[12], rows.iter().map(|r| r.run.clone()).collect()),
            Column::new(BENCH_COLUMNS[13].into(), rows.iter().map(|r| r3(r.ours_mca_cycles)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[14].into(), rows.iter().map(|r| r3(r.halide_mca_cycles)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[15].into(), rows.iter().map(|r| r3(r.mca_speedup)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[16].into(), rows.iter().map(|r| r.ours_mca_loops).collect::<Vec<Option<u64>>>()),
            Column::new(BENCH_COLUMNS[17].into(), rows.iter().map(|r| r.halide_mca_loops).collect::<Vec<Option<u64>>>()),
            Column::new(BENCH_COLUMNS[18].into(), rows.iter().map(|r| r3(r.ours_mca_cycles_per_byte)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[19].into(), rows.iter().map(|r| r3(r.halide_mca_cycles_per_byte)).collect::<Vec<Option<f64>>>()),
            Column::new(BENCH_COLUMNS[20].into(), rows.iter().map(|r| r3(r.mca_per_byte_speedup)).collect::<Vec<Option<f64>>>()),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}

/// A bar chart of speedup per kernel (log scale around 1x), as PNG. Kernels
/// without a speedup are left out. Written through a temporary file.
pub fn write_speedup_chart(rows: &[BenchRow], path: &Path, font: &[u8]) -> Result<(), String> {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let font: &'static [u8] = Box::leak(font.to_vec().into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, font).map_err(|_| "cannot load the chart font".to_string())?;
    let data: Vec<(&str, f64)> = rows.iter().filter(|r| r.speedup.is_finite() && r.speedup > 0.0).map(|r| (r.kernel.as_str(), r.speedup)).collect();
    if data.is_empty() {
        return Err("no kernel has a speedup to plot".into());
    }
    // The encoder picks the format from the extension, so keep `.png` last.
    let tmp = path.with_extension(format!("tmp{}.png", std::process::id()));
    {
        // One horizontal bar per kernel, its name once, left of its bar,
        // and its value at the bar's end: nothing overlaps however many
        // kernels there are.
        let n = data.len();
        let root = BitMapBackend::new(&tmp, (1100, 110 + 26 * n as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let lo = data.iter().map(|d| d.1).fold(f64::INFINITY, f64::min).min(1.0) * 0.8;
        let hi = data.iter().map(|d| d.1).fold(0.0, f64::max).max(1.0) * 1.4;
        let mut chart = ChartBuilder::on(&root)
            .caption("speedup over Halide 21 (higher is better; 1x = parity)", ("sans-serif", 24))
            .margin(15)
            .set_label_area_size(LabelAreaPosition::Left, 200)
            .set_label_area_size(LabelAreaPosition::Bottom, 40)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..n as f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_label_formatter(&|x| format!("{x:.2}x"))
            .x_desc("speedup (log scale)")
            .draw()
            .map_err(|e| e.to_string())?;
        // Top to bottom in the order given.
        let row = |i: usize| (n - 1 - i) as f64;
        chart
            .draw_series(data.iter().enumerate().map(|(i, (_, s))| {
                let color = if *s >= 1.0 { GREEN.mix(0.7) } else { RED.mix(0.7) };
                Rectangle::new([(lo, row(i) + 0.15), (*s, row(i) + 0.85)], color.filled())
            }))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(data.iter().enumerate().map(|(i, (_, s))| Text::new(format!("{s:.2}x"), (*s, row(i) + 0.5), TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center)))))
            .map_err(|e| e.to_string())?;
        chart.draw_series(LineSeries::new([(1.0, 0.0), (1.0, n as f64)], BLACK.stroke_width(2))).map_err(|e| e.to_string())?;
        let name_style = TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, (name, _)) in data.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(lo, row(i) + 0.5));
            root.draw(&Text::new(name.to_string(), (x - 8, y), name_style.clone())).map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    std::fs::rename(&tmp, path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod chart_tests {
    use super::*;

    /// The chart renders the whole suite with one label per bar (looked at
    /// by hand: `MISAAL_KEEP_CHART=path` keeps the PNG).
    #[test]
    fn speedup_chart_renders_every_kernel() {
        // scripts/setup.sh installs the font; without it `misaal bench`
        // cannot draw its chart either, so this fails rather than skips.
        let font = std::fs::read("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").expect("DejaVuSans (scripts/setup.sh installs fonts-dejavu-core)");
        let rows: Vec<BenchRow> = (0..33)
            .map(|i| BenchRow {
                compile_ms: 1.0,
                ours_us: 1.0,
                halide_us: 0.5 + i as f64 / 20.0,
                speedup: 0.5 + i as f64 / 20.0,
                bit_exact: "yes".into(),
                peak_rss_kb: 1,
                naive_us: 2.0,
                clang_us: 3.0,
                speedup_vs_clang: 3.0,
                fallback_exprs: Some(0),
                run: "native".into(),
                ..BenchRow::unmeasured(&format!("kernel_with_a_long_name_{i}"), "t")
            })
            .collect();
        let path = std::env::var("MISAAL_KEEP_CHART").map(std::path::PathBuf::from).unwrap_or_else(|_| std::env::temp_dir().join(format!("chart-{}.png", std::process::id())));
        write_speedup_chart(&rows, &path, &font).expect("chart");
        let png = std::fs::read(&path).expect("written");
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    }
}

/// One row of a cost table, `isa/costs/<target>-<machine>.csv`, written by
/// `misaal isa measure` (one row per intrinsic).
#[derive(Clone, Debug, PartialEq)]
pub struct CostRow {
    pub intrinsic: String,
    /// The instruction's mnemonic.
    pub instruction: String,
    /// Cycles; written with three decimals.
    pub latency: f64,
    /// Cycles per instruction at full throughput; three decimals.
    pub rthroughput: f64,
    /// Micro-ops, estimated from the throughput; written as Rust prints an
    /// `f64` (`2`, `1.5`).
    pub uops_estimate: f64,
    /// The CPU model, as `/proc/cpuinfo` names it.
    pub cpu: String,
    /// How the row was measured.
    pub method: String,
}

pub const COST_COLUMNS: [&str; 7] = ["intrinsic", "instruction", "latency", "rthroughput", "uops_estimate", "cpu", "method"];

/// Writes a cost table. Its readers (`misaal isa measure`, the compiler's
/// cost tables, `isa/tests/costs.rs`) split lines on commas, so no field is
/// quoted: a comma or line break in a text field other than the intrinsic
/// is written as a space.
pub fn write_costs_csv(rows: &[CostRow], path: &Path) -> Result<(), ReportError> {
    let clean = |s: &str| s.replace([',', '\n', '\r'], " ");
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            string_column(COST_COLUMNS[0], rows.iter().map(|r| r.intrinsic.clone()).collect()),
            string_column(COST_COLUMNS[1], rows.iter().map(|r| clean(&r.instruction)).collect()),
            string_column(COST_COLUMNS[2], rows.iter().map(|r| format!("{:.3}", r.latency)).collect()),
            string_column(COST_COLUMNS[3], rows.iter().map(|r| format!("{:.3}", r.rthroughput)).collect()),
            string_column(COST_COLUMNS[4], rows.iter().map(|r| r.uops_estimate.to_string()).collect()),
            string_column(COST_COLUMNS[5], rows.iter().map(|r| clean(&r.cpu)).collect()),
            string_column(COST_COLUMNS[6], rows.iter().map(|r| clean(&r.method)).collect()),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic_quoting(&mut df, path, QuoteStyle::Never)
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    #[test]
    fn cost_table_is_unquoted_with_three_decimals() {
        let dir = std::env::temp_dir().join(format!("misaal-reports-costs-{}", std::process::id()));
        let path = dir.join("x86-cpu.csv");
        let row = |intrinsic: &str, instruction: &str, uops: f64| CostRow {
            intrinsic: intrinsic.into(),
            instruction: instruction.into(),
            latency: 1.0,
            rthroughput: 0.25,
            uops_estimate: uops,
            cpu: "AMD EPYC, 2 sockets".into(),
            method: "time / \"vpaddd\"; long loop".into(),
        };
        write_costs_csv(&[row("_mm_add_epi8", "vpaddb", 1.0), row("_mm_x", "", 1.5)], &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "intrinsic,instruction,latency,rthroughput,uops_estimate,cpu,method\n\
             _mm_add_epi8,vpaddb,1.000,0.250,1,AMD EPYC  2 sockets,time / \"vpaddd\"; long loop\n\
             _mm_x,,1.000,0.250,1.5,AMD EPYC  2 sockets,time / \"vpaddd\"; long loop\n"
        );
        write_costs_csv(&[], &path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{}\n", COST_COLUMNS.join(",")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn coverage_csv_is_as_documented() {
        let path = std::env::temp_dir().join(format!("misaal-reports-coverage-{}.csv", std::process::id()));
        let row = |i: &str, class: &str, r, e| CoverageRow { instruction: i.into(), class: class.into(), reachable_by_rules: r, emitted_in_suite: e };
        write_coverage_csv(&[row("_mm_add_epi8", "family:add", true, false), row("_mm_sub_epi8", "c12", false, true)], &path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "instruction,class,reachable_by_rules,emitted_in_suite\n_mm_add_epi8,family:add,true,false\n_mm_sub_epi8,c12,false,true\n"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
