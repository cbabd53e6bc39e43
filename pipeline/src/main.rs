//! `phase0`: the Phase-0 experiments. Exit codes: 0 the run completed (whatever the verdict), 1 runtime error
//! (an output could not be written), 2 usage error or bad input (the message names the file and line), 3 `demo` /
//! `weekly` completed but at least one experiment did not run (missing input or failure).
//!
//! The command line is [`pipeline::cli`]; this file only parses, dispatches and maps errors to exit codes.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use pipeline::cli::{Cli, Command, P2Action, P3Action, Synth};
use pipeline::commands::{self, exit};

// mimalloc keeps freed memory for reuse instead of handing it back to the system and faulting it in again: on a
// million-task P3 run that churn was 1.3 s of system time under glibc's malloc (BENCHMARKS.md). The binary only;
// the library and the hook keep the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` (mimalloc.h, the same index in versions 2 and 3): how long freed pages stay committed.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// Milliseconds. mimalloc 3's default (1,000) took P2 on git/git to 480-530 MB at its peak, over issue 16's 500 MB;
/// at 100 the peak is about 463 MB and the time the same (BENCHMARKS.md).
const PURGE_DELAY_MS: std::ffi::c_long = 100;

fn main() -> ExitCode {
    // SAFETY: mi_option_set is not thread safe; no other thread exists yet.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    let progress = std::io::stderr().is_terminal();
    match Cli::parse().command {
        Command::Demo(mut args) => {
            args.progress = progress;
            let outcome = pipeline::demo::run(&args);
            print_partial(&outcome.text, outcome.partial())
        }
        Command::Weekly(mut args) => {
            if !args.no_cache && args.cache.is_none() {
                args.cache = commands::p2::user_cache_dir();
            }
            // The clock only names the week when nothing else does; it never lands in a report.
            args.today = Some(jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date());
            args.progress = progress;
            match commands::weekly::run(&args) {
                Ok(outcome) => print_partial(&outcome.summary, outcome.partial()),
                Err(error) => {
                    eprintln!("phase0: {error}");
                    ExitCode::from(error.exit_code())
                }
            }
        }
        Command::P1 { args, json } => print_outcome(
            commands::p1::run(&args).map(|o| (o.summary + &commands::reports_line(&args.out), o.json)),
            json,
        ),
        Command::P2 { action, mut args, json } => {
            args.progress = progress;
            if !args.no_cache && args.cache.is_none() {
                args.cache = commands::p2::user_cache_dir();
            }
            if let Some(P2Action::Audit { per_stratum, out }) = action {
                if let Err(error) = commands::p2::resolve_repositories(&mut args).and_then(|many| match many {
                    Some(_) => Err(commands::CommandError::Input(
                        "phase0 p2 audit samples one repository: give one --repo".to_string(),
                    )),
                    None => Ok(()),
                }) {
                    return print_outcome(Err(error), false);
                }
                let args = commands::p2_audit::P2AuditArgs {
                    p2: args,
                    per_stratum,
                    sheet: out,
                };
                return print_outcome(commands::p2_audit::write(&args).map(|o| (o.summary, Vec::new())), false);
            }
            let many = match commands::p2::resolve_repositories(&mut args) {
                Ok(many) => many,
                Err(error) => return print_outcome(Err(error), json),
            };
            if let Some(repos) = many {
                let outcome = commands::pool::run_many(&args, &repos).map(|o| {
                    for warning in &o.warnings {
                        eprintln!("phase0: warning: {warning}");
                    }
                    (o.summary + &o.cache_line + &commands::reports_line(&args.out), o.json)
                });
                return print_outcome(outcome, json);
            }
            let outcome = commands::p2::run(&args).map(|o| {
                for warning in &o.warnings {
                    eprintln!("phase0: warning: {warning}");
                }
                if let Some(hint) = o.hint.filter(|_| args.progress) {
                    eprintln!("{hint}");
                }
                (o.summary + &o.cache_line + &commands::reports_line(&args.out), o.json)
            });
            print_outcome(outcome, json)
        }
        Command::Pool { args, json } => print_outcome(
            commands::pool::run(&args).map(|o| (o.summary + &commands::reports_line(&args.out), o.json)),
            json,
        ),
        Command::P3 {
            action: Some(P3Action::Audit { per_stratum, out }),
            args,
            ..
        } => {
            // Before `audit`, --out names the reports directory, which a sheet does not use: say so, not ignore it.
            let outcome = if args.out != std::path::Path::new(commands::p3::DEFAULT_OUT) {
                Err(commands::CommandError::Input(format!(
                    "--out {} before `audit` names the reports directory; give the sheet's path after it: \
                     `audit --out FILE`",
                    args.out.display()
                )))
            } else {
                commands::p3::write_audit(&args, per_stratum, &out)
            };
            print_outcome(outcome.map(|o| (o.summary, o.json)), false)
        }
        Command::P3 {
            action: None,
            args,
            json,
        } => print_outcome(
            commands::p3::run(&args).map(|o| (o.summary + &commands::reports_line(&args.out), o.json)),
            json,
        ),
        Command::Corpus(args) => {
            let outcome = commands::corpus::run(&args).map(|o| {
                for warning in &o.warnings {
                    eprintln!("phase0: skipped {warning}");
                }
                (o.summary, Vec::new())
            });
            print_outcome(outcome, false)
        }
        Command::Synth {
            what: Synth::P1 { rows, seed, minimal },
        } => {
            let fields = if minimal {
                commands::synth::Fields::Minimal
            } else {
                commands::synth::Fields::Full
            };
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            match commands::synth::p1_corpus_with(rows, seed, fields, &mut stdout).and_then(|()| stdout.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("phase0: cannot write the corpus: {error}");
                    ExitCode::from(exit::RUNTIME)
                }
            }
        }
    }
}

/// Prints the text of a run of several experiments: exit 0, or 3 when one of them did not run.
fn print_partial(text: &str, partial: bool) -> ExitCode {
    if std::io::stdout().lock().write_all(text.as_bytes()).is_err() {
        return ExitCode::from(exit::RUNTIME);
    }
    ExitCode::from(if partial { exit::PARTIAL } else { exit::OK })
}

/// Prints a command's summary block (or its report JSON with `--json`) and maps errors to exit codes.
fn print_outcome(outcome: Result<(String, Vec<u8>), commands::CommandError>, json: bool) -> ExitCode {
    match outcome {
        Ok((summary, report)) => {
            let mut stdout = std::io::stdout().lock();
            let printed = if json {
                stdout.write_all(&report)
            } else {
                stdout.write_all(summary.as_bytes())
            };
            if printed.is_err() {
                return ExitCode::from(exit::RUNTIME);
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("phase0: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}
