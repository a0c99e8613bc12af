//! The reports of the emulated benches: `reports/bench_arm.csv` and
//! `reports/bench_hvx.csv` (`misaal bench --target arm|hvx`). Their speed
//! columns are static estimates, never times. Numbers keep the precision
//! each column documents (docs/reports.md); a value that was not measured
//! is an empty cell, except `compile_ms`, which is `NaN` when the kernel
//! did not compile.

use super::{ReportError, text_cells as cells, write_csv_atomic};
use polars::prelude::*;
use std::path::Path;

/// The cells both emulated reports have, whatever their speed estimate:
/// the kernel, its verdict and how our side compiled it, for which target.
/// Each writer still places them among its own columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchKernelCells {
    pub kernel: String,
    pub bit_exact: String,
    pub fallback_exprs: Option<u64>,
    /// One decimal; `NaN` when the kernel did not compile.
    pub compile_ms: f64,
    pub method: String,
    pub target: String,
    pub peak_rss_kb: Option<u64>,
}

/// The cells both emulated reports have about the innermost loops each
/// side's static estimate sums over: their size (ARM: instructions, HVX:
/// packets) and how many loops were found. Empty where that side has no
/// estimate. Each writer names and places them among its own columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InnerLoopCells {
    pub ours_size: Option<u64>,
    pub halide_size: Option<u64>,
    pub ours_loops: Option<u64>,
    pub halide_loops: Option<u64>,
}

/// One row of `reports/bench_arm.csv`: a kernel of the ARM suite, checked
/// under qemu-aarch64, its speed estimated by llvm-mca.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchArmRow {
    pub base: BenchKernelCells,
    /// llvm-mca cycles per iteration summed over our innermost loops (two
    /// decimals; empty when not finite).
    pub ours_mca_cycles: Option<f64>,
    /// The same for Halide's object.
    pub halide_mca_cycles: Option<f64>,
    /// `halide_mca_cycles / ours_mca_cycles` (three decimals).
    pub ratio: Option<f64>,
    /// `ours_loop_instrs`, `halide_loop_instrs`, `ours_loops` and
    /// `halide_loops`: instructions and loop counts.
    pub loops: InnerLoopCells,
    pub march: String,
    /// Each of our innermost loops' llvm-mca cycles per iteration over the
    /// bytes one iteration stores (a reduction: loads), summed over the
    /// loops (three decimals; empty when not finite). Unlike the cycles,
    /// it does not read a loop unrolled twice as twice as slow.
    pub ours_mca_cycles_per_byte: Option<f64>,
    pub halide_mca_cycles_per_byte: Option<f64>,
    /// `halide_mca_cycles_per_byte / ours_mca_cycles_per_byte` (three decimals).
    pub per_byte_ratio: Option<f64>,
}

/// `reports/bench_arm.csv`'s columns, in order; `peak_rss_kb` and then the
/// three per-byte columns were added last.
pub const BENCH_ARM_COLUMNS: [&str; 18] = [
    "kernel",
    "bit_exact",
    "ours_mca_cycles",
    "halide_mca_cycles",
    "ratio",
    "ours_loop_instrs",
    "halide_loop_instrs",
    "ours_loops",
    "halide_loops",
    "fallback_exprs",
    "compile_ms",
    "method",
    "target",
    "march",
    "peak_rss_kb",
    "ours_mca_cycles_per_byte",
    "halide_mca_cycles_per_byte",
    "per_byte_ratio",
];

/// One row of `reports/bench_hvx.csv`: a kernel of the HVX suite, checked
/// under qemu-hexagon, its speed estimated by packet counts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchHvxRow {
    pub base: BenchKernelCells,
    /// `ours_packets`, `halide_packets` (packets summed over each side's
    /// innermost loops), `ours_loops` and `halide_loops`.
    pub loops: InnerLoopCells,
    /// Halide's release that built its object.
    pub halide: String,
}

/// `reports/bench_hvx.csv`'s columns, in order. `peak_rss_kb` was added
/// last, so older readers of the first eleven still work.
pub const BENCH_HVX_COLUMNS: [&str; 12] = [
    "kernel",
    "bit_exact",
    "ours_packets",
    "halide_packets",
    "fallback_exprs",
    "compile_ms",
    "method",
    "ours_loops",
    "halide_loops",
    "halide",
    "target",
    "peak_rss_kb",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

pub fn write_bench_arm_csv(rows: &[BenchArmRow], path: &Path) -> Result<(), ReportError> {
    let c = BENCH_ARM_COLUMNS;
    let num = |x: Option<f64>| x.filter(|v| v.is_finite()).map(|v| format!("{v:.2}")).unwrap_or_default();
    let num3 = |x: Option<f64>| x.filter(|v| v.is_finite()).map(|v| format!("{v:.3}")).unwrap_or_default();
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            cells(c[0], rows.iter().map(|r| r.base.kernel.clone())),
            cells(c[1], rows.iter().map(|r| r.base.bit_exact.clone())),
            cells(c[2], rows.iter().map(|r| num(r.ours_mca_cycles))),
            cells(c[3], rows.iter().map(|r| num(r.halide_mca_cycles))),
            cells(c[4], rows.iter().map(|r| r.ratio.map(|x| format!("{x:.3}")).unwrap_or_default())),
            cells(c[5], rows.iter().map(|r| opt(r.loops.ours_size))),
            cells(c[6], rows.iter().map(|r| opt(r.loops.halide_size))),
            cells(c[7], rows.iter().map(|r| opt(r.loops.ours_loops))),
            cells(c[8], rows.iter().map(|r| opt(r.loops.halide_loops))),
            cells(c[9], rows.iter().map(|r| opt(r.base.fallback_exprs))),
            cells(c[10], rows.iter().map(|r| format!("{:.1}", r.base.compile_ms))),
            cells(c[11], rows.iter().map(|r| r.base.method.clone())),
            cells(c[12], rows.iter().map(|r| r.base.target.clone())),
            cells(c[13], rows.iter().map(|r| r.march.clone())),
            cells(c[14], rows.iter().map(|r| opt(r.base.peak_rss_kb))),
            cells(c[15], rows.iter().map(|r| num3(r.ours_mca_cycles_per_byte))),
            cells(c[16], rows.iter().map(|r| num3(r.halide_mca_cycles_per_byte))),
            cells(c[17], rows.iter().map(|r| num3(r.per_byte_ratio))),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}

pub fn write_bench_hvx_csv(rows: &[BenchHvxRow], path: &Path) -> Result<(), ReportError> {
    let c = BENCH_HVX_COLUMNS;
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            cells(c[0], rows.iter().map(|r| r.base.kernel.clone())),
            cells(c[1], rows.iter().map(|r| r.base.bit_exact.clone())),
            cells(c[2], rows.iter().map(|r| opt(r.loops.ours_size))),
            cells(c[3], rows.iter().map(|r| opt(r.loops.halide_size))),
            cells(c[4], rows.iter().map(|r| opt(r.base.fallback_exprs))),
            cells(c[5], rows.iter().map(|r| format!("{:.1}", r.base.compile_ms))),
            cells(c[6], rows.iter().map(|r| r.base.method.clone())),
            cells(c[7], rows.iter().map(|r| opt(r.loops.ours_loops))),
            cells(c[8], rows.iter().map(|r| opt(r.loops.halide_loops))),
            cells(c[9], rows.iter().map(|r| r.halide.clone())),
            cells(c[10], rows.iter().map(|r| r.base.target.clone())),
            cells(c[11], rows.iter().map(|r| opt(r.base.peak_rss_kb))),
        ],
    )
    .map_err(ReportError::Polars)?;
    write_csv_atomic(&mut df, path)
}
