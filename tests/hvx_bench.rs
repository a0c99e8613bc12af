//! `misaal bench --target hvx` on a CI subset of the HVX suite: each kernel
//! compiled naively and with instruction selection (HVX intrinsics from
//! rulesets/hvx.egg), built freestanding, run under qemu-hexagon and
//! compared byte for byte with the reference interpreter; the row says
//! `yes` only then. Halide's own HVX object is compared too when
//! benchmarks/hvx/build/halide has it (it is not committed).
//!
//! Without clang-19, ld.lld-19 or qemu-hexagon (or the pip `halide`
//! package, for HalideRuntime.h) the trials are reported as ignored
//! (skipped), with a message naming what is missing: never passed.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_testkit::wrong_compiler::{Corruption, write_wrong_compiler};
use std::path::{Path, PathBuf};
use std::process::Command;

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/hvx");
/// The CSV's columns, as docs/reports.md documents them (`peak_rss_kb`,
/// the compile's, added last).
const HEADER: &str = "kernel,bit_exact,ours_packets,halide_packets,fallback_exprs,compile_ms,method,ours_loops,halide_loops,halide,target,peak_rss_kb";

/// A scratch suite with one kernel's Stmt, the manifest, and Halide's
/// objects for it when the real suite has them built.
fn scratch(case: &str, kernel: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hvx_bench").join(std::process::id().to_string()).join(case);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("suite/stmt")).unwrap();
    std::fs::copy(format!("{SUITE}/manifest.json"), root.join("suite/manifest.json")).unwrap();
    std::fs::copy(format!("{SUITE}/stmt/{kernel}.stmt"), root.join(format!("suite/stmt/{kernel}.stmt"))).unwrap();
    let hl = Path::new(SUITE).join("build/halide");
    if hl.join(format!("{kernel}.o")).is_file() && hl.join("runtime.o").is_file() {
        std::fs::create_dir_all(root.join("suite/build/halide")).unwrap();
        for f in [format!("{kernel}.o"), "runtime.o".to_string()] {
            std::fs::copy(hl.join(&f), root.join("suite/build/halide").join(&f)).unwrap();
        }
    }
    root
}

/// Runs the bench on `kernel` and checks its row: bit-exact against the
/// interpreter, packets counted, the method asked for. Returns our C.
/// Our C and its fallback count (`fallback_exprs`).
fn bench(case: &str, kernel: &str, naive: bool) -> Result<(String, usize), Failed> {
    let root = scratch(case, kernel);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_misaal"));
    cmd.current_dir(&root).args(["bench", "--target", "hvx", "--suite", "suite", "--kernel", kernel, "--inputs", "2", "--work-dir", "work", "--report-dir", "reports"]);
    if naive {
        cmd.arg("--naive");
    }
    let out = cmd.output().map_err(|e| format!("run misaal: {e}"))?;
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(root.join("reports/bench_hvx.csv")).map_err(|e| format!("no CSV ({e}); stdout:\n{stdout}\nstderr:\n{stderr}"))?;
    let mut lines = csv.lines();
    if lines.next() != Some(HEADER) {
        return Err(format!("the CSV's header changed:\n{csv}").into());
    }
    let row = lines.next().ok_or_else(|| format!("no row in\n{csv}"))?;
    // The cells before bit_exact hold no commas; bit_exact is quoted.
    let rest = row.strip_prefix(&format!("{kernel},")).ok_or_else(|| format!("row for another kernel: {row}"))?;
    if !rest.starts_with("\"yes (2 inputs") || !rest.contains("interpreter)\"") {
        return Err(format!("not bit-exact against the interpreter: {row}\n{stdout}\n{stderr}").into());
    }
    let after = &rest[rest.find(")\",").ok_or("unterminated bit_exact")? + 3..];
    let cells: Vec<&str> = after.split(',').collect();
    let packets: usize = cells[0].parse().map_err(|_| format!("no packet count for ours: {row}"))?;
    if packets == 0 {
        return Err(format!("no packets in ours' innermost loops: {row}").into());
    }
    // A naive build selects nothing, so it has no fallback count.
    let fallbacks: usize = if naive { 0 } else { cells[2].parse().map_err(|_| format!("no fallback count: {row}"))? };
    let method = if naive { "naive" } else { "isel" };
    if cells[4] != method {
        return Err(format!("method `{}`, expected `{method}`: {row}", cells[4]).into());
    }
    if !out.status.success() {
        return Err(format!("exit {:?}\n{stdout}\n{stderr}", out.status.code()).into());
    }
    let c = std::fs::read_to_string(root.join(format!("work/hvx/{kernel}/ours.c"))).map_err(|e| format!("ours.c: {e}"))?;
    let _ = std::fs::remove_dir_all(&root);
    Ok((c, fallbacks))
}

fn naive_dilate3x3() -> Result<(), Failed> {
    let (c, _) = bench("naive_dilate3x3", "dilate3x3", true)?;
    if c.contains("Q6_") {
        return Err("the naive build called HVX intrinsics".into());
    }
    Ok(())
}

/// With instruction selection the C must really use HVX intrinsics, and
/// these kernels need no naive fallback at all.
fn isel(kernel: &'static str, needs: &'static [&'static str], avoids: &'static [&'static str]) -> impl Fn() -> Result<(), Failed> {
    move || {
        let (c, fallbacks) = bench(&format!("isel_{kernel}"), kernel, false)?;
        if fallbacks != 0 {
            return Err(format!("{kernel}: {fallbacks} fallback expression(s)").into());
        }
        for n in needs {
            if !c.contains(n) {
                return Err(format!("{kernel}: no `{n}` in our C").into());
            }
        }
        for n in avoids {
            if c.contains(n) {
                return Err(format!("{kernel}: `{n}` in our C").into());
            }
        }
        Ok(())
    }
}

/// A row that is not bit-exact keeps that run's artifacts (issue 31), as
/// on x86 (`tests/bench_cli.rs`): `--compiler` is a wrapper that runs
/// misaal's compile, then makes our C for `add` (not the naive build) flip
/// bit 2 of the output's byte 7 after the real function returns. The kept
/// folder must hold the corrupted C, the program qemu ran, the bytes it was
/// fed and each side's outputs, split per input set.
fn a_mismatch_keeps_its_artifacts() -> Result<(), Failed> {
    let root = scratch("mismatch", "add");
    let misaal = env!("CARGO_BIN_EXE_misaal");
    let params = "struct halide_buffer_t *a, uint8_t b, int16_t c, struct halide_buffer_t *d, uint8_t e, int16_t f, uint8_t g, uint8_t h, uint8_t i, struct halide_buffer_t *out";
    let corruption = Corruption { kernel: "add", params, args: "a, b, c, d, e, f, g, h, i, out", corrupt: "out->host[7] ^= 4;" };
    let wrapper = write_wrong_compiler(&root, misaal, &corruption).map_err(|e| e.to_string())?;
    let out = Command::new(misaal)
        .current_dir(&root)
        .args(["bench", "--target", "hvx", "--suite", "suite", "--kernel", "add", "--inputs", "1", "--no-interp", "--work-dir", "work", "--report-dir", "reports", "--compiler"])
        .arg(&wrapper)
        .output()
        .map_err(|e| format!("run misaal: {e}"))?;
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.code() != Some(1) || !stdout.contains("no: input 0: naive differs from ours") {
        return Err(format!("the corrupted C must fail the row, exit {:?}\n{stdout}\n{stderr}", out.status.code()).into());
    }
    let kept = stdout.split("; artifacts kept in ").nth(1).and_then(|r| r.split_whitespace().next()).ok_or_else(|| format!("the row names no kept folder\n{stdout}\n{stderr}"))?;
    if !stderr.contains(kept) {
        return Err(format!("stderr does not name {kept}\n{stderr}").into());
    }
    let kept = root.join(kept);
    if !kept.starts_with(root.join("work/mismatches")) {
        return Err(format!("kept in {}, not under work/mismatches", kept.display()).into());
    }
    for f in ["ours.c", "ours.h", "naive.c", "harness.c", "kernel.elf", "stdin.bin", "stdout.bin", "add.stmt", "README.txt", "input0/input1.bin", "input0/input2.bin", "input0/out_ours.bin", "input0/out_naive.bin"] {
        if !kept.join(f).is_file() {
            return Err(format!("{f} is not kept in {}", kept.display()).into());
        }
    }
    let c = std::fs::read_to_string(kept.join("ours.c")).map_err(|e| e.to_string())?;
    if !c.contains("ours made wrong on purpose") {
        return Err("the kept C is not the one that ran".into());
    }
    let (ours, naive) = (std::fs::read(kept.join("input0/out_ours.bin")).map_err(|e| e.to_string())?, std::fs::read(kept.join("input0/out_naive.bin")).map_err(|e| e.to_string())?);
    let differ: Vec<usize> = (0..ours.len().min(naive.len())).filter(|&i| ours[i] != naive[i]).collect();
    if ours.len() != 2048 * 1536 || naive.len() != ours.len() || differ != [7] || ours[7] ^ naive[7] != 4 {
        return Err(format!("the kept outputs are not this run's: lengths {} and {}, differing at {differ:?}", ours.len(), naive.len()).into());
    }
    let readme = std::fs::read_to_string(kept.join("README.txt")).map_err(|e| e.to_string())?;
    if !readme.contains("ours vs naive: 1 of 3145728 bytes differ; first at byte 7") || !readme.contains("qemu-hexagon") {
        return Err(format!("README.txt:\n{readme}").into());
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

/// What is missing to run the trials, if anything.
fn missing() -> Option<String> {
    let on_path = |t: &str| std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(t).is_file()));
    let tools: Vec<&str> = ["clang-19", "ld.lld-19", "qemu-hexagon"].into_iter().filter(|t| !on_path(t)).collect();
    if !tools.is_empty() {
        return Some(format!("{} not found on PATH (scripts/setup.sh installs clang-19, lld-19 and qemu-user)", tools.join(", ")));
    }
    let halide = Command::new("python3").args(["-c", "import halide"]).output();
    if !halide.is_ok_and(|o| o.status.success()) {
        return Some("python3's halide package (HalideRuntime.h) is missing: pip install halide==21.0.0".into());
    }
    None
}

fn main() {
    let args = Arguments::from_args();
    let missing = missing();
    let trial = |name: &str, f: Box<dyn Fn() -> Result<(), Failed> + Send + Sync>| match &missing {
        None => Trial::test(name, f),
        Some(why) => {
            eprintln!("SKIPPED {name}: {why}");
            Trial::test(format!("{name} (skipped: {why})"), f).with_ignored_flag(true)
        }
    };
    let trials = vec![
        trial("hvx_bench_naive_dilate3x3", Box::new(naive_dilate3x3)),
        // Byte max on single vectors.
        trial("hvx_bench_isel_dilate3x3", Box::new(isel("dilate3x3", &["Q6_Vub_vmax_VubVub"], &[]))),
        // Widening adds into vector pairs, their halves, and a pair formed
        // from two vectors a concat made (vcombine).
        trial("hvx_bench_isel_blur3x3", Box::new(isel("blur3x3", &["HVX_VectorPair", "Q6_V_lo_W", "Q6_W_vcombine_VV"], &[]))),
        // Widening, lane-wise and narrowing ops on even and odd lanes (the
        // parity splits): the narrowing vasr and vsat take the widening
        // pairs' halves as they come, with no shuffle to restore lane order.
        // Loops count in 32 bits on this 32-bit target (hardware loops).
        trial("hvx_bench_isel_add", Box::new(isel("add", &["Q6_Wh_vsub_VubVub", "Q6_Vh_vasr_VwVwR_rnd_sat", "Q6_Vub_vsat_VhVh", "for (int32_t"], &["vshuff", "vdeal", "for (int64_t"]))),
        // u8x64 max and min (half a register) run padded: each operand
        // copied twice into an aligned 128-byte temporary and loaded, the
        // op on the whole register (synth.pad-*.x2, synth.dup-*.x2), the low half
        // stored back. Without the pad rules all 24 ops fell back.
        trial("hvx_bench_isel_max_pool", Box::new(isel("max_pool", &["Q6_Vub_vmax_VubVub", "Q6_Vub_vmin_VubVub", "__attribute__((aligned(128)))"], &[]))),
        trial("hvx_bench_a_mismatch_keeps_its_artifacts", Box::new(a_mismatch_keeps_its_artifacts)),
    ];
    libtest_mimic::run(&args, trials).exit();
}
