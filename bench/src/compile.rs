//! Our C, compiled the same way for every target: `misaal compile` in a
//! child process, as a user runs it, timed whole, its peak memory its own.

use crate::Config;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Set by the bench on the compile it measures: the compile then prints
/// its own peak RSS (`peak_rss_kb N` on stderr). `wait4`'s `ru_maxrss`
/// cannot be used alone: Linux carries the spawning process's high-water
/// mark into the child at exec, so a bench that has run the interpreter
/// (200 MB) would report every compile at 200 MB.
pub const PEAK_RSS_ENV: &str = "MISAAL_REPORT_PEAK_RSS";

/// This process's peak resident set (`VmHWM`), in KiB.
pub fn own_peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// What one compile cost and left behind.
#[derive(Clone, Copy, Debug)]
pub struct Compiled {
    /// Wall time of the child `misaal compile`, in milliseconds.
    pub ms: f64,
    pub peak_rss_kb: u64,
    /// Subterms instruction selection left to the naive lowering (None
    /// for a naive compile).
    pub fallback_exprs: Option<u64>,
}

/// One compile: the Stmt, the ISA it is checked against, the C symbol,
/// the `.c` to write (its `.h` beside it), whether naive, and where to
/// write rule usage (x86's reports).
pub struct Job<'a> {
    pub stmt: &'a Path,
    pub isa: &'a str,
    pub symbol: &'a str,
    pub out: &'a Path,
    pub naive: bool,
    pub usage_dir: Option<&'a Path>,
}

/// Runs `misaal compile` for `job` with `cfg.rules`.
pub fn compile(cfg: &Config, job: &Job) -> Result<Compiled, String> {
    let mut cmd = Command::new(&cfg.compiler);
    cmd.env(PEAK_RSS_ENV, "1").arg("compile").arg(job.stmt).args(["--target", job.isa, "--name", job.symbol]).arg("-o").arg(job.out).stdout(Stdio::null());
    if job.naive {
        cmd.arg("--naive");
    } else {
        for r in &cfg.rules {
            cmd.arg("--rules").arg(r);
        }
        if let (Some(f), "x86") = (&cfg.target_features, job.isa) {
            cmd.arg("--target-features").arg(f);
        }
        if cfg.ymm && job.isa == "x86" {
            cmd.arg("--ymm");
        }
        if let Some(d) = job.usage_dir {
            cmd.arg("--usage-dir").arg(d);
        }
    }
    let t = Instant::now();
    let (status, rss, err) = peak_rss_of_child(&mut cmd)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if !status.success() {
        return Err(format!("compile failed: {}", err.trim()));
    }
    // The compile's own high-water mark; `wait4`'s includes ours.
    let peak_rss_kb = err.lines().find_map(|l| l.strip_prefix("peak_rss_kb ")).and_then(|n| n.trim().parse().ok()).unwrap_or(rss);
    let fallback_exprs = err.lines().find_map(|l| l.strip_prefix("isel: ").and_then(|l| l.split("fallback_exprs ").nth(1)).and_then(|n| n.split_whitespace().next()?.parse().ok()));
    Ok(Compiled { ms, peak_rss_kb, fallback_exprs })
}

fn peak_rss_of_child(cmd: &mut Command) -> Result<(std::process::ExitStatus, u64, String), String> {
    let mut child = cmd.stderr(Stdio::piped()).spawn().map_err(|e| format!("{}: {e}", cmd.get_program().to_string_lossy()))?;
    // Read stderr on a thread: a compile that writes more than a pipe
    // holds would otherwise block before wait4 returns.
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by wait4 for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting on a child this process spawned and has not waited for.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    if r < 0 {
        return Err("wait4 failed".into());
    }
    let err = reader.join().unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    Ok((std::process::ExitStatus::from_raw(status), ru.ru_maxrss as u64, err))
}

/// One row of an emulated target's console table: the compile, ours and
/// Halide's `metric` (an mca estimate, a packet count), the fallbacks, the
/// row's wall time and its `bit_exact` cell.
pub fn print_row(kernel: &str, method: &str, compiled: Option<Compiled>, metric: &str, ours: String, halide: String, secs: f64, bit_exact: &str) {
    println!(
        "{kernel:<24} {method:<5} compile {:>7.1} ms  {metric} ours {ours}  halide {halide}  fallbacks {:>3}  {secs:.0} s  {bit_exact}",
        compiled.map(|c| c.ms).unwrap_or(f64::NAN),
        compiled.and_then(|c| c.fallback_exprs).map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
    );
}
