//! `misaal isa`: list, show, evaluate, check and measure specs, and write
//! their digest memo.

use crate::{SpecArgs, check, load, measure};
use clap::Subcommand;
use misaal_isa::{BitVec, Instr, Semantics, SpecLibrary};
use misaal_verifier::DiffConfig;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Subcommand)]
pub enum IsaCmd {
    /// List specs as a table.
    List {
        #[command(flatten)]
        spec: SpecArgs,
        /// Only specs that need this CPUID feature.
        #[arg(long)]
        feature: Option<String>,
        /// Only specs of this family (spec file name).
        #[arg(long)]
        family: Option<String>,
    },
    /// Print a spec and the unrolled expression of its lane 0.
    Show {
        name: String,
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Evaluate a spec on hexadecimal operands (immediates too), in order.
    Eval {
        name: String,
        operands: Vec<String>,
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Differential-test every spec against its oracle, write this machine's
    /// evidence (`<specs>/evidence/<machine>.tsv`) and
    /// reports/<target>_semantics.csv; or merge evidence (`--import`).
    Check {
        #[command(flatten)]
        spec: SpecArgs,
        /// Only this family (spec file name), e.g. `add`.
        #[arg(long)]
        family: Option<String>,
        /// Only intrinsics whose name contains this.
        #[arg(long)]
        filter: Option<String>,
        /// Cases per intrinsic.
        #[arg(long, default_value_t = 1000)]
        cases: usize,
        #[arg(long, default_value_t = DiffConfig::default().seed)]
        seed: u64,
        /// Where to write the CSV report.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// The evidence folder: one `<machine>.tsv` per machine (default:
        /// `evidence/` in the specs folder). Only this machine's file is written.
        #[arg(long)]
        evidence: Option<PathBuf>,
        /// x86: the only CPU features the oracle may use, e.g. `avx2` (each
        /// SSE/AVX level implies the ones below it). It can only make specs
        /// unavailable, never add evidence. Also `MISAAL_CPU_FEATURES`.
        #[arg(long)]
        cpu_features: Option<String>,
        /// After the check, write this machine's current evidence to DIR
        /// (`<machine>.tsv`, a README with its provenance, the CPU flags).
        #[arg(long, value_name = "DIR")]
        export: Option<PathBuf>,
        /// Merge evidence folders written by `--export` elsewhere (no check
        /// runs). Rows for changed specs are refused, named, and make the
        /// exit status 1; the other rows are merged.
        #[arg(long, value_name = "DIR")]
        import: Vec<PathBuf>,
    },
    /// Time every spec this CPU can run (latency chain and independent
    /// chains, in core cycles against vpaddd) and write this machine's
    /// table, isa/costs/x86-<machine>.csv.
    /// Use a release build.
    Measure {
        #[command(flatten)]
        spec: SpecArgs,
        /// Only intrinsics whose name contains this.
        #[arg(long)]
        filter: Option<String>,
        /// The cost table to update (default: isa/costs/<target>-<machine>.csv).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Timed runs per measurement; the fastest is kept.
        #[arg(long, default_value_t = 151)]
        repeats: usize,
        /// Run even in a debug build (whose numbers time calls, not
        /// instructions): for smoke tests.
        #[arg(long)]
        allow_unoptimized: bool,
    },
    /// Write the specs folder's digest memo (`DIGESTS.tsv`): each spec's
    /// semantics digest and a digest of what it is computed from, so that
    /// a compile checks a spec's status without unrolling it. Run it after
    /// editing a spec or `isa/src` (`tests/shipped_digests.rs` says when).
    Digests {
        #[command(flatten)]
        spec: SpecArgs,
    },
}

pub fn run(cmd: IsaCmd) -> Result<ExitCode, String> {
    match cmd {
        IsaCmd::List { spec, feature, family } => list(&spec, feature, family),
        IsaCmd::Show { name, spec } => show(&spec, &name),
        IsaCmd::Digests { spec } => digests(&spec),
        IsaCmd::Eval { name, operands, spec } => eval(&spec, &name, &operands),
        IsaCmd::Measure { spec, filter, out, repeats, allow_unoptimized } => measure::run(&spec, measure::MeasureArgs { filter, out, repeats, allow_unoptimized }),
        IsaCmd::Check { spec, family, filter, cases, seed, out, jobs, evidence, cpu_features, export, import } => {
            let cpu_features = cpu_features.or_else(|| std::env::var("MISAAL_CPU_FEATURES").ok().filter(|f| !f.is_empty()));
            check::check(&spec, check::CheckArgs { family, filter, cfg: DiffConfig { cases, seed, ..Default::default() }, out, jobs, evidence, cpu_features, export, import })
        }
    }
}

fn signature(i: &Instr) -> String {
    let ps: Vec<String> = i.params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
    format!("{}({}) -> {}", i.name, ps.join(", "), i.ret)
}

fn list(spec: &SpecArgs, feature: Option<String>, family: Option<String>) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let rows: Vec<&Instr> = lib
        .instrs()
        .iter()
        .map(|i| i.as_ref())
        .filter(|i| feature.as_ref().is_none_or(|f| i.features.iter().any(|x| x == f)))
        .filter(|i| family.as_ref().is_none_or(|f| &i.family == f))
        .collect();
    let w = rows.iter().map(|i| i.name.len()).max().unwrap_or(9).max(9);
    // Measured costs (`misaal isa measure`) where the table has a row, else the spec's cost line.
    // The table a compile without an AVX-512 CPU in its target reads.
    let measured = measure::read_table(&misaal_compiler::isel::extract::bundled_cost_table_for(&spec.target)).unwrap_or_else(|e| {
        eprintln!("warning: {e}; showing the specs' cost lines");
        Default::default()
    });
    println!("{:<w$}  {:<12}  {:<22}  {:<12}  {:>7}  {:>6}  source", "intrinsic", "instruction", "feature", "family", "latency", "tput");
    for i in &rows {
        let (lat, tp, src) = match (measured.get(&i.name), &i.cost) {
            (Some(m), _) => (format!("{}", m.latency), format!("{}", m.rthroughput), format!("measured ({})", m.cpu)),
            (None, Some(c)) => (format!("{}", c.latency), format!("{}", c.throughput), "spec line".to_string()),
            (None, None) => ("-".into(), "-".into(), "-".to_string()),
        };
        println!("{:<w$}  {:<12}  {:<22}  {:<12}  {:>7}  {:>6}  {src}", i.name, i.mnemonic, i.features.join("+"), i.family, lat, tp);
    }
    println!("{} of {} specs", rows.len(), lib.len());
    Ok(ExitCode::SUCCESS)
}

/// The spec's source text: from its `instr` line to the next item.
fn source_text(i: &Instr) -> String {
    let Ok(text) = std::fs::read_to_string(&*i.file) else { return String::new() };
    let lines: Vec<&str> = text.lines().collect();
    let start = i.span.line as usize - 1;
    let mut end = start + 1;
    while end < lines.len() {
        let t = lines[end].trim_start();
        if t.starts_with("instr ") || t.starts_with("def ") {
            break;
        }
        end += 1;
    }
    while end > start + 1 && (lines[end - 1].trim().is_empty() || lines[end - 1].trim_start().starts_with("//")) {
        end -= 1;
    }
    lines[start..end].join("\n")
}

fn lookup<'a>(lib: &'a SpecLibrary, name: &str) -> Result<(&'a Arc<Instr>, &'a Arc<Semantics>), String> {
    lib.get(name).ok_or_else(|| {
        let close: Vec<&str> = lib.instrs().iter().map(|i| i.name.as_str()).filter(|n| n.contains(name.trim_start_matches('_'))).take(5).collect();
        let hint = if close.is_empty() { String::new() } else { format!(" (similar: {})", close.join(", ")) };
        format!("error: no spec named `{name}`{hint}")
    })
}

fn digests(spec: &SpecArgs) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let dir = spec.specs.clone().unwrap_or_else(|| misaal_isa::bundled_spec_dir(&spec.target));
    let path = dir.join(misaal_isa::DIGEST_MEMO_FILE);
    let text = lib.digest_memo_text(misaal_verifier::prekey::ENGINE_DIGEST);
    misaal_isa::evidence::write_atomic(&path, &text).map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
    println!("wrote {} spec digests to {}", text.lines().filter(|l| !l.starts_with('#')).count(), path.display());
    Ok(ExitCode::SUCCESS)
}

fn show(spec: &SpecArgs, name: &str) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let (i, s) = lookup(&lib, name)?;
    println!("// {}:{}:{}", i.file, i.span.line, i.span.col);
    println!("{}", source_text(i));
    let lane = s.lanes[0];
    let names: Vec<String> = i.params.iter().map(|p| p.name.clone()).collect();
    println!();
    println!("// {} lanes; {} DAG nodes in all", s.lanes.len(), s.dag.len());
    println!("// lane 0 = dst[{}:{}]:", lane.lo + lane.width - 1, lane.lo);
    println!("{}", s.dag.render(lane.root, &names));
    Ok(ExitCode::SUCCESS)
}

fn eval(spec: &SpecArgs, name: &str, operands: &[String]) -> Result<ExitCode, String> {
    let lib = load(spec)?;
    let (i, s) = lookup(&lib, name)?;
    if operands.len() != i.params.len() {
        return Err(format!("error: `{}` takes {} operand(s), found {}\n  signature: {}", name, i.params.len(), operands.len(), signature(i)));
    }
    let mut vals = Vec::new();
    for (p, text) in i.params.iter().zip(operands) {
        let v = BitVec::parse_hex(p.ty.width(), text).map_err(|e| format!("error: operand `{}` ({}): {e}", p.name, p.ty))?;
        vals.push(v);
    }
    let r = s.eval(&vals).map_err(|e| format!("error: {e}"))?;
    println!("{r}");
    Ok(ExitCode::SUCCESS)
}
