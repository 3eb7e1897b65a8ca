//! `bench-harness`: see `bench-harness --help`. With no subcommand it runs the quick
//! measurement and writes `results/` (JSON, CSV, summary.md, plots).

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = bench_harness::cli::Cli::parse();
    match bench_harness::cli::dispatch_status(cli) {
        Ok((out, failed)) => {
            println!("{out}");
            if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
