//! `misaal bench`: the CLI's arguments handed to the one harness in
//! `misaal-bench`, which does the work for every target.

use crate::BenchArgs;
use misaal_bench::{Config, Emulate};
use std::process::ExitCode;

pub fn bench(args: BenchArgs) -> Result<ExitCode, String> {
    let cfg = Config {
        target: args.target,
        suite: args.suite,
        kernel: args.kernel,
        inputs: args.inputs,
        interp: !args.no_interp,
        allow_unchecked: args.allow_unchecked,
        naive: args.naive,
        work_dir: args.work_dir,
        report_dir: args.report_dir,
        rules: args.rules,
        ymm: args.ymm,
        target_features: args.target_features,
        emulate: if args.emulate.as_deref() == Some("simde") { Emulate::Simde } else { Emulate::Auto },
        cpu_flags: args.cpu_flags,
        compiler: match args.compiler {
            Some(bin) => bin,
            None => std::env::current_exe().map_err(|e| format!("error: cannot find the misaal binary: {e}"))?,
        },
    };
    misaal_bench::run(&cfg)
}
