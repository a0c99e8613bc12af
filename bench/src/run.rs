//! What every backend's run does around its own rows: the loop over the
//! selected kernels, the cell of a row that ended in an error, a failed
//! row's evidence, the headline counts and the report file. A backend
//! brings how one kernel runs and what its row and report say.

use crate::check::{Outcome, outcome, tally};
use crate::compile::Compiled;
use crate::keep::{Evidence, error_cell, stmt_file};
use crate::{Config, Kernel, Suite};
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A static speed estimate summed over a program's innermost loops
/// (llvm-mca's [`crate::mca::Estimate`] on ARM, HVX's
/// [`crate::packets::Packets`]): its size there and how many loops.
pub trait InnerLoopEstimate: Copy {
    /// (instructions (ARM) or packets (HVX) summed over the loops, loops).
    fn size_and_loops(&self) -> (usize, usize);
}

impl InnerLoopEstimate for crate::mca::Estimate {
    fn size_and_loops(&self) -> (usize, usize) {
        (self.instrs, self.loops)
    }
}

impl InnerLoopEstimate for crate::packets::Packets {
    fn size_and_loops(&self) -> (usize, usize) {
        (self.packets, self.loops)
    }
}

/// A row of an emulated bench (ARM, HVX) before it is written: the shared
/// cells, each side's static estimate, and the target's own cell (ARM's
/// `-march`, the Halide release that built HVX's object).
#[derive(Default)]
pub struct EstimateRow<E> {
    pub base: KernelRow,
    pub ours: Option<E>,
    pub halide: Option<E>,
    pub note: String,
}

impl<E: InnerLoopEstimate> EstimateRow<E> {
    /// The loop cells of the row's report, from each side's estimate.
    pub fn loop_cells(&self) -> misaal_reports::InnerLoopCells {
        let size = |e: Option<E>| e.map(|e| e.size_and_loops().0 as u64);
        let loops = |e: Option<E>| e.map(|e| e.size_and_loops().1 as u64);
        misaal_reports::InnerLoopCells { ours_size: size(self.ours), halide_size: size(self.halide), ours_loops: loops(self.ours), halide_loops: loops(self.halide) }
    }
}

/// The columns the ARM and HVX rows share: which kernel, its verdict
/// cell, how our side compiled, and for which target.
#[derive(Default)]
pub struct KernelRow {
    pub kernel: String,
    pub bit_exact: String,
    pub compiled: Option<Compiled>,
    pub method: &'static str,
    pub target: String,
}

impl KernelRow {
    pub fn fallback_exprs(&self) -> Option<u64> {
        self.compiled.and_then(|c| c.fallback_exprs)
    }

    /// The cells of the row both emulated reports (ARM, HVX) write.
    pub fn report_cells(&self) -> misaal_reports::BenchKernelCells {
        misaal_reports::BenchKernelCells {
            kernel: self.kernel.clone(),
            bit_exact: self.bit_exact.clone(),
            fallback_exprs: self.fallback_exprs(),
            // NaN where nothing was compiled, as the reports write it.
            compile_ms: self.compiled.map(|c| c.ms).unwrap_or(f64::NAN),
            method: self.method.to_string(),
            target: self.target.clone(),
            peak_rss_kb: self.compiled.map(|c| c.peak_rss_kb),
        }
    }

    /// The row's line on the terminal, with the backend's own speed
    /// columns (`measure` says what they are).
    pub fn print(&self, measure: &str, ours: String, reference: String, secs: f64) {
        crate::compile::print_row(&self.kernel, self.method, self.compiled, measure, ours, reference, secs, &self.bit_exact);
    }
}

/// One backend's run over a suite.
pub struct Run<'a> {
    pub cfg: &'a Config,
    pub suite: &'a Suite,
    /// The backend's work folder, one folder a kernel.
    pub work: &'a Path,
    /// `x86`, `arm` or `hvx`.
    pub target: &'static str,
    /// How to run a kept program again from inside its folder.
    pub rerun: &'static str,
}

/// The rows' cells counted: bit-exact, failed, and unchecked or skipped
/// ([`tally`]).
pub struct Counts {
    pub exact: usize,
    pub failed: usize,
    pub unchecked: usize,
}

impl<'a> Run<'a> {
    /// A failed row's evidence before the backend adds what only it knows:
    /// the kernel's work folder and its Stmt.
    pub fn evidence<'e>(&self, k: &'e Kernel, verdict: &'e str, details: &'e [String], run: String) -> Evidence<'e> {
        let dir = crate::keep::kernel_dir(self.work, &k.name).ok();
        Evidence { target: self.target, kernel: &k.name, dir, files: vec![stmt_file(self.suite.stmt(&k.name))], blobs: Vec::new(), verdict, details, run, rerun: self.rerun }
    }

    /// The `bit_exact` cell of `k`'s row that ended in error `e`; what the
    /// run left (a harness or qemu that failed or ran over its time; HVX's
    /// stdin.bin included) is kept as a mismatch's is.
    pub fn error_cell(&self, k: &Kernel, e: &str) -> String {
        error_cell(self.cfg, e, self.suite.halide_objects(&k.name), self.evidence(k, "", &[], "the row ended in an error".into()))
    }

    /// `one`'s row of each kernel `cfg` selects (`failed`'s, from the
    /// error, where `one` ended in one), each printed by `print` with its
    /// seconds as it comes; an error when no kernel matches.
    /// The shared columns of a row that ended in error `e`: nothing but
    /// its kernel, target, method and the error's cell.
    pub fn failed_row(&self, k: &Kernel, e: &str) -> KernelRow {
        let method = if self.cfg.naive { "naive" } else { "isel" };
        KernelRow { kernel: k.name.clone(), bit_exact: self.error_cell(k, e), method, target: self.suite.target.clone(), ..KernelRow::default() }
    }

    pub fn rows<R>(&self, mut one: impl FnMut(&Kernel) -> Result<R, String>, mut failed: impl FnMut(&Kernel, String) -> R, mut print: impl FnMut(&R, f64)) -> Result<Vec<R>, String> {
        let mut rows = Vec::new();
        for k in self.suite.selected(self.cfg) {
            let t = Instant::now();
            let row = one(k).unwrap_or_else(|e| failed(k, e));
            print(&row, t.elapsed().as_secs_f64());
            rows.push(row);
        }
        if rows.is_empty() {
            return Err("error: no kernel matches".into());
        }
        Ok(rows)
    }

    /// The rows' `bit_exact` cells counted.
    pub fn counts<'c>(&self, cells: impl Iterator<Item = &'c str> + Clone) -> Counts {
        let (failed, unchecked) = tally(cells.clone());
        Counts { exact: cells.filter(|c| outcome(c) == Outcome::Exact).count(), failed, unchecked }
    }

    /// Prints where the failed rows were kept, when any were.
    pub fn note_kept<'c>(&self, cells: impl Iterator<Item = &'c str>) {
        if let Some(kept) = crate::keep::summary(self.cfg, cells) {
            println!("{kept}");
        }
    }

    /// `file` in the report folder, written by `write`; its path.
    pub fn write_report<E: Display>(&self, file: &str, write: impl FnOnce(&Path) -> Result<(), E>) -> Result<PathBuf, String> {
        let dir = &self.cfg.report_dir;
        std::fs::create_dir_all(dir).map_err(|e| format!("error: {}: {e}", dir.display()))?;
        let path = dir.join(file);
        write(&path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
        Ok(path)
    }
}

/// The text a report writer writes, read back from a temporary file
/// (`name`, made unique per process): the report tests compare it byte for
/// byte.
#[cfg(test)]
pub fn written_text<E: std::fmt::Debug>(name: &str, write: impl FnOnce(&Path) -> Result<(), E>) -> String {
    let path = std::env::temp_dir().join(format!("{name}-{}.csv", std::process::id()));
    write(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    text
}
