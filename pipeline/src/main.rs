//! `phase0`: the Phase-0 experiments. Exit codes: 0 success, 1 runtime error, 2 usage error or bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "phase0",
    version,
    about = "Phase-0 evidence for an agent self-reflection loop, offline"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show what phase0 computes on the embedded defaults: today, the capture view of a repository.
    Demo {
        /// The repository to look at.
        #[arg(long, default_value = ".")]
        repo: PathBuf,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Demo { repo } => match pipeline::demo::capture_overview(&repo) {
            Ok(overview) => {
                print!("{}", pipeline::demo::render(&overview));
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("phase0: {error}");
                ExitCode::from(2)
            }
        },
    }
}
