//! `misaal compile`: one Stmt to C with intrinsics (or the naive C), as a
//! user runs it and as every target's bench runs it in a child process.

use clap::Args;
use misaal_bench::compile::{PEAK_RSS_ENV, own_peak_rss_kb};
use misaal_bench::write_atomic;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct CompileArgs {
    /// A `.stmt` file as Halide prints it.
    pub input: PathBuf,
    /// `x86`, `arm` or `hvx`; by default the Stmt header's `target=`
    /// (`x86-64-...`, `arm-64-...`, `hexagon-32-...`) decides. A Stmt
    /// lowered for another target is compiled for this one from its
    /// target-neutral vector IR, with a warning (features from
    /// `--target-features`, else the ISA's baseline).
    #[arg(long)]
    pub target: Option<String>,
    /// The C file to write; the header goes next to it with `.h`.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The C function's name (default: the module's).
    #[arg(long)]
    pub name: Option<String>,
    /// The element type of a buffer the Stmt does not type, as NAME=TYPE
    /// (e.g. input=uint8); repeatable. A Stmt printed with `no_asserts` has
    /// no `.type` checks; the compile says which buffer needs one.
    #[arg(long = "buffer-type", value_name = "NAME=TYPE", value_parser = misaal_frontends::stmt::buffer_type_arg)]
    pub buffer_type: Vec<(String, misaal_frontends::stmt::Type)>,
    /// Also print to stderr what instruction selection (egglog, proved rules,
    /// DAG-cost extraction) chooses for the Stmt; the C written is unchanged.
    #[arg(long)]
    pub explain_isel: bool,
    /// The old path: every vector op lowered lane by lane, no instruction
    /// selection. By default the C comes from instruction selection
    /// (intrinsics chosen by proved rules; what no rule covers lowered
    /// naively and counted in a comment atop the C and on stderr).
    #[arg(long, conflicts_with = "isel")]
    pub naive: bool,
    /// Instruction selection (the default; kept so older scripts run).
    #[arg(long, hide = true)]
    pub isel: bool,
    /// Print, for each emitted instruction, the chain of proved rules that
    /// produced it (to stderr).
    #[arg(long, conflicts_with = "naive")]
    pub explain: bool,
    /// Prove (Z3, at the kernel's widths) that every selected
    /// instruction DAG computes what its Stmt expression does. A mismatch
    /// prints both and a counterexample and exits 1, writing no C; a root
    /// the solver cannot decide is "not validated" and exits 3.
    #[arg(long, conflicts_with = "naive")]
    pub validate: bool,
    /// `--validate`'s wall-clock budget per solver query, in milliseconds
    /// (a root too big for one query is proved in slices, each a query). A
    /// query that runs out is `unknown`, never success; on a loaded machine
    /// raise it, or use `--validate-rlimit` for a budget that does not
    /// depend on the load.
    #[arg(long, value_name = "MS", default_value_t = 20_000, requires = "validate")]
    pub validate_timeout: u32,
    /// `--validate`'s Z3 resource limit per query (0: none): Z3's own work
    /// units, the same verdict on every machine whatever its load.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "validate")]
    pub validate_rlimit: u32,
    /// Write this kernel's rule usage (`rule,matches,search_apply_ms,
    /// used_in_extraction`, summed over its functions) and the intrinsics
    /// it emitted into this folder (`rule_usage.csv`, `emitted.txt`); what
    /// `misaal bench` gathers into reports/rule_usage_x86.csv.
    #[arg(long, hide = true, conflicts_with = "naive")]
    pub usage_dir: Option<PathBuf>,
    /// The x86 features the code may use, as Halide names them (`sse41`,
    /// `avx2`, `avx512_skylake`, `avx512_zen4`, `avxvnni`, ... separated by
    /// `,` or `-`), or a whole target string (`x86-64-linux-avx2`). By
    /// default the Stmt header's `target=` decides. Only instructions whose
    /// CPUID features it has are emitted.
    #[arg(long, value_name = "FEATURES", conflicts_with = "naive")]
    pub target_features: Option<String>,
    /// x86: hold values in 256-bit registers at most, even when the target
    /// has AVX-512F (the AVX2 code). By default an AVX-512 target's values
    /// are held in 512-bit zmm registers.
    #[arg(long, conflicts_with = "naive")]
    pub ymm: bool,
    /// A rule file to select with instead of the target's default files
    /// (x86: the synthesized rulesets/x86.egg; e.g. the hand-written
    /// rulesets/x86_hand.egg); repeat it to load several
    /// together. Loaded like the default: every instantiation a kernel uses
    /// must be proved, or the ruleset is refused.
    #[arg(long = "rules", value_name = "FILE", conflicts_with = "naive")]
    pub rules: Vec<PathBuf>,
}

/// The ISA a compile is for: the Stmt header's, or `--target`'s. A Stmt
/// lowered for another target (`arm-64-osx-arm_dot_prod-sve2` compiled with
/// `--target x86`) is compiled from its target-neutral vector IR: its header
/// becomes a target of the requested ISA with the same bits, OS and non-ISA
/// parts (`no_asserts`, ...) and none of the other ISA's features
/// (`--target-features` gives the new ones). Returns the ISA and what to warn.
pub fn retarget(flag: Option<&str>, module: &mut misaal_frontends::stmt::Module) -> Result<(&'static str, Vec<String>), String> {
    let header = misaal_compiler::isel::isa_of_halide_target(&module.target);
    let Some(want) = flag else { return header.map(|isa| (isa, vec![])).map_err(|e| format!("error: {e}")) };
    let isa = *misaal_compiler::isel::ISAS.iter().find(|i| **i == want).ok_or_else(|| format!("error: --target {want}: none of {}", misaal_compiler::isel::ISAS.join(", ")))?;
    if header == Ok(isa) {
        return Ok((isa, vec![]));
    }
    let parts: Vec<&str> = module.target.split('-').collect();
    // The registry's Halide architecture and default bits (`hexagon-32`).
    let desc = misaal_targets::by_name(isa).ok_or_else(|| format!("error: --target {isa}: not in the target registry"))?;
    let (arch, bits) = (desc.halide_arch, parts.get(1).copied().filter(|b| matches!(*b, "32" | "64")).unwrap_or(desc.halide_bits));
    // `sve`, `sve2` name no instruction misaal selects, but they are ARM's.
    let keep = |p: &str| misaal_compiler::isel::features::is_non_isa(p) && !matches!(p, "sve" | "sve2");
    let (kept, dropped): (Vec<&str>, Vec<&str>) = parts.iter().skip(2).copied().partition(|p| keep(p));
    let target = [arch, bits].into_iter().chain(kept).collect::<Vec<_>>().join("-");
    let mut warning = format!("the Stmt was lowered for `{}`; compiling its target-neutral vector IR for {isa} as `{target}`", module.target);
    if !dropped.is_empty() {
        warning.push_str(&format!(" (its target features not used: {}; give {isa} ones with --target-features)", dropped.join(", ")));
    }
    module.target = target;
    Ok((isa, vec![warning]))
}

pub fn compile(args: CompileArgs) -> Result<ExitCode, String> {
    let started = std::time::Instant::now();
    let text = std::fs::read_to_string(&args.input).map_err(|e| format!("error: cannot read {}: {e}", args.input.display()))?;
    let opts = misaal_frontends::stmt::ParseOptions { buffer_types: args.buffer_type.clone() };
    let mut module = misaal_frontends::stmt::parse_module_with(&args.input.display().to_string(), &text, &opts).map_err(|d| d.to_string())?;
    let parse_secs = started.elapsed().as_secs_f64();
    let mut isel_times = String::new();
    let mut emit_secs = 0.0;
    for w in retarget(args.target.as_deref(), &mut module)?.1 {
        eprintln!("warning: {}: {w}", args.input.display());
    }
    // Halide's AOT object names the function after the func, not the module.
    let default = module.funcs.iter().find(|f| f.linkage != misaal_frontends::stmt::ast::Linkage::Internal).map(|f| f.name.clone()).unwrap_or_else(|| module.name.clone());
    let symbol = args.name.clone().unwrap_or(default);
    let prog = if !args.naive {
        let features = misaal_compiler::isel::features::CpuFeatures::for_module(args.target_features.as_deref(), &module.target).map_err(|e| format!("error: {e}"))?;
        for f in &features.unknown {
            eprintln!("warning: {}: target feature `{f}` of `{}` is not one misaal knows; ignored", args.input.display(), features.source);
        }
        let mut isel = misaal_compiler::isel::Options { verdict_cache: Some(crate::VERDICT_CACHE.into()), features: Some(features), zmm: !args.ymm, release_rule_caches: true, ..Default::default() };
        if let Some((path, text)) = rule_files(&args.rules)? {
            isel.rules = Some(path);
            isel.rules_text = text;
        }
        let t = std::time::Instant::now();
        let (prog, report) = misaal_compiler::c::emit_with(&module, &symbol, &misaal_compiler::c::EmitOptions { isel: Some(isel) }).map_err(|e| format!("error: {e}"))?;
        emit_secs = t.elapsed().as_secs_f64();
        isel_times = report.as_ref().map(|r| r.times()).unwrap_or_default();
        eprint!("{}", report.as_ref().map(|r| r.summary()).unwrap_or_default());
        if args.explain_isel
            && let Some(r) = &report
        {
            // The compile's own selection: its registers, features and rules.
            eprint!("cost table: {}\n{}", r.cost_table, r.explain);
        }
        if let (Some(dir), Some(r)) = (&args.usage_dir, &report) {
            write_usage(dir, r)?;
        }
        if args.explain {
            eprint!("{}", report.as_ref().map(|r| r.explain_chains()).unwrap_or_default());
        }
        if args.validate {
            let selections = report.map(|r| r.selections).unwrap_or_default();
            let opts = misaal_compiler::isel::validate::ValidateOptions { budget: misaal_verifier::smt::Budget { timeout_ms: args.validate_timeout, rlimit: args.validate_rlimit }, ..Default::default() };
            let v = misaal_compiler::isel::validate::validate_all(&selections, &opts);
            eprint!("{}", v.summary());
            if v.exit_code() != 0 {
                eprintln!("error: {}: the selection is {}; no C written", args.input.display(), if v.exit_code() == 3 { "not validated" } else { "wrong" });
                return Ok(ExitCode::from(v.exit_code()));
            }
        }
        prog
    } else {
        misaal_compiler::c::emit(&module, &symbol).map_err(|e| format!("error: {e}"))?
    };
    let header = args.output.with_extension("h");
    let t = std::time::Instant::now();
    write_atomic(&header, &prog.h)?;
    write_atomic(&args.output, &prog.c)?;
    let write_secs = t.elapsed().as_secs_f64();
    println!("wrote {} and {}", args.output.display(), header.display());
    if args.explain_isel {
        // The whole compile (not --explain-isel's own selection before it):
        // emission holds the target, rule book and selection times.
        eprintln!(
            "compile times: parse {:.1} ms, emit {:.1} ms ({isel_times}), write {:.1} ms; total {:.1} ms",
            parse_secs * 1e3,
            emit_secs * 1e3,
            write_secs * 1e3,
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    if std::env::var_os(PEAK_RSS_ENV).is_some()
        && let Some(kb) = own_peak_rss_kb()
    {
        eprintln!("peak_rss_kb {kb}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--rules`: one file is read by the compiler as the default ruleset is;
/// several are joined into one text by `read_sources` (each error still
/// at its own file's line), their rule names distinct.
pub fn rule_files(paths: &[PathBuf]) -> Result<Option<(PathBuf, Option<String>)>, String> {
    match paths {
        [] => Ok(None),
        [one] => Ok(Some((one.clone(), None))),
        [first, ..] => Ok(Some((first.clone(), Some(misaal_rulesets::read_sources(paths)?)))),
    }
}

/// One kernel's rule usage and emitted intrinsics, for the bench reports.
fn write_usage(dir: &Path, r: &misaal_compiler::c::IselReport) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("error: {}: {e}", dir.display()))?;
    let mut by_rule: std::collections::BTreeMap<String, (usize, f64, bool)> = std::collections::BTreeMap::new();
    for (_, sel) in &r.selections {
        for u in sel.rule_usage() {
            let e = by_rule.entry(u.rule).or_default();
            e.0 += u.matches;
            e.1 += u.search_apply_ms;
            e.2 |= u.used_in_extraction;
        }
    }
    let rows: Vec<misaal_reports::RuleUsageRow> = by_rule
        .into_iter()
        .map(|(rule, (matches, search_apply_ms, used_in_extraction))| misaal_reports::RuleUsageRow { rule, kernel: String::new(), matches: matches as u64, search_apply_ms, used_in_extraction })
        .collect();
    let path = dir.join("rule_usage.csv");
    misaal_reports::write_kernel_rule_usage_csv(&rows, &path).map_err(|e| format!("error: writing {}: {e}", path.display()))?;
    let emitted: Vec<&str> = r.intrinsics.keys().map(String::as_str).collect();
    write_atomic(&dir.join("emitted.txt"), &(emitted.join("\n") + "\n"))
}
