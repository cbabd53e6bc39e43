//! `phase0`: the Phase-0 experiments. Exit codes: 0 the run completed (whatever the verdict), 1 runtime error
//! (an output could not be written), 2 usage error or bad input (the message names the file and line), 3 `demo` /
//! `weekly` completed but at least one experiment did not run (missing input or failure).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pipeline::commands::{self, exit};

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
    /// The three experiments on the embedded defaults: P1 on data/'s sample corpus, P2 on the repository's
    /// history, P3 on data/p3/'s Jira sample.
    Demo {
        /// The repository: P2 scans its history, P1 and P3 read its data/.
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Where the demo's reports go (p1/, p2/, p3/).
        #[arg(long, default_value = "reports/demo")]
        out: PathBuf,
    },
    /// The three experiments on a config's inputs into OUT/<ISO week>/, and OUT/index.md + index.json with every
    /// week and what changed since the previous one.
    Weekly {
        /// The inputs of each experiment; default the embedded experiments/weekly.toml. Relative paths in it are
        /// relative to the working directory.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The reports directory.
        #[arg(long, default_value = "reports")]
        out: PathBuf,
        /// The ISO week to write (e.g. 2026-W47); default the week of --as-of, else of SOURCE_DATE_EPOCH, else of
        /// today (UTC).
        #[arg(long)]
        week: Option<String>,
        /// The as-of date of every report (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else each
        /// experiment's own default.
        #[arg(long)]
        as_of: Option<String>,
        /// A directory whose weekly-index.md.j2, weekly-week.md.j2, p1.md.j2, p2.md.j2, p3.md.j2 (any that exist)
        /// replace the embedded templates.
        #[arg(long)]
        templates: Option<PathBuf>,
    },
    /// P1 calibration: does self-reported confidence separate right from wrong work?
    P1 {
        /// The labeled corpus: JSONL with `confidence` in [0, 1] (or null) and `correct` (true/false or 1/0) per
        /// line. Or, instead, --reflections DIR --repo PATH.
        #[arg(required_unless_present = "reflections", conflicts_with = "reflections")]
        corpus: Option<PathBuf>,
        /// Build the corpus from this directory of sidecars (as `phase0 corpus` does, in memory).
        #[arg(long, requires = "repo")]
        reflections: Option<PathBuf>,
        /// The repository the sessions of --reflections committed to.
        #[arg(long, requires = "reflections")]
        repo: Option<PathBuf>,
        /// With --reflections: walk the history reachable from this revision (default HEAD).
        #[arg(long, requires = "reflections")]
        rev: Option<String>,
        /// With --reflections: replace the pre-registered outcome window of the join.
        #[arg(long, requires = "reflections")]
        window_days: Option<u32>,
        /// With --reflections: a pre-registration replacing the embedded experiments/corpus.toml.
        #[arg(long, requires = "reflections")]
        corpus_prereg: Option<PathBuf>,
        /// With --reflections: also write the joined corpus (JSONL) here.
        #[arg(long, requires = "reflections")]
        corpus_out: Option<PathBuf>,
        /// A pre-registration replacing the embedded experiments/p1.toml.
        #[arg(long)]
        prereg: Option<PathBuf>,
        /// Where p1.json, p1.md and the plots go.
        #[arg(long, default_value = "reports/p1")]
        out: PathBuf,
        /// Print the report JSON instead of the summary block.
        #[arg(long)]
        json: bool,
        /// Skip invalid rows (counted by reason in the report) instead of failing on the first.
        #[arg(long)]
        skip_invalid: bool,
        /// The report date (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else none.
        #[arg(long)]
        as_of: Option<String>,
        /// A directory with a p1.md.j2 that replaces the embedded template.
        #[arg(long)]
        templates: Option<PathBuf>,
        /// Break the numbers down by a field: agent, surface, task_ref or session_id (repeatable).
        #[arg(long, value_name = "FIELD")]
        by: Vec<String>,
    },
    /// P2 gate buckets: of the failures in git history, how many would only self-reflection have caught?
    P2 {
        /// `audit`: write a sample sheet for a reader instead of the reports.
        #[command(subcommand)]
        action: Option<P2Action>,
        /// The repository to scan (a work tree, a directory inside one, or a bare repository).
        #[arg(long, default_value = ".", global = true)]
        repo: PathBuf,
        /// Walk the history reachable from this revision.
        #[arg(long, default_value = "HEAD", global = true)]
        rev: String,
        /// Follow only first parents (like `git log --first-parent`).
        #[arg(long, global = true)]
        first_parent: bool,
        /// Only commits whose committer time is at or after this (YYYY-MM-DD, UTC, or RFC 3339).
        #[arg(long, global = true)]
        since: Option<String>,
        /// Only commits whose committer time is at or before this (a date includes the whole day).
        #[arg(long, global = true)]
        until: Option<String>,
        /// A pre-registration replacing the embedded experiments/p2.toml.
        #[arg(long, global = true)]
        prereg: Option<PathBuf>,
        /// The repository's name in audit sheets (owner/name); default from the path.
        #[arg(long, global = true)]
        name: Option<String>,
        /// Where p2.json, p2.md and p2-failures.csv go.
        #[arg(long, default_value = "reports/p2")]
        out: PathBuf,
        /// Print the report JSON instead of the summary block.
        #[arg(long)]
        json: bool,
        /// The report date (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else the newest commit's time.
        #[arg(long)]
        as_of: Option<String>,
        /// A directory with a p2.md.j2 that replaces the embedded template.
        #[arg(long)]
        templates: Option<PathBuf>,
        /// A filled audit sheet (`phase0 p2 audit`): report what the reader measured and decide the verdict on
        /// the share corrected for it.
        #[arg(long, value_name = "SHEET")]
        audit: Option<PathBuf>,
    },
    /// P3 detectability: how often is a task's outcome machine-detectable within 30 days?
    P3 {
        /// Board exports: upstream JSONL, Jira CSV/JSON, Linear CSV, GitHub issue JSON (then its timeline
        /// events), Trello JSON, beads JSONL. None with --repo: the task files kept in the repository.
        inputs: Vec<PathBuf>,
        /// auto (sniff each input and say what was chosen), jsonl, jira-csv, jira-json, linear-csv, github-json,
        /// trello-json or beads.
        #[arg(long, default_value = "auto")]
        format: String,
        /// The time zone of dates written without one (Jira CSV), e.g. Europe/Berlin; default UTC.
        #[arg(long)]
        tz: Option<String>,
        /// Replace the pre-registered window (the report says so).
        #[arg(long)]
        window_days: Option<u32>,
        /// A pre-registration replacing the embedded experiments/p3.toml.
        #[arg(long)]
        prereg: Option<PathBuf>,
        /// Where p3.json and p3.md go.
        #[arg(long, default_value = "reports/p3")]
        out: PathBuf,
        /// Print the report JSON instead of the summary block.
        #[arg(long)]
        json: bool,
        /// The as-of date (YYYY-MM-DD or RFC 3339) for windows and the report; default SOURCE_DATE_EPOCH, else
        /// the newest date in the inputs.
        #[arg(long)]
        as_of: Option<String>,
        /// A directory with a p3.md.j2 that replaces the embedded template.
        #[arg(long)]
        templates: Option<PathBuf>,
        /// A repository whose revert and fix commits (P2's rules) name tasks: the wrong.commit signal. Without
        /// inputs, also the repository whose task files' git history is read.
        #[arg(long)]
        repo: Option<PathBuf>,
        /// The task files kept in --repo, a repository-relative file or directory of *.jsonl (default
        /// .beads/issues.jsonl, else data/); their git history gives reopens with dates.
        #[arg(long)]
        data_dir: Option<String>,
    },
    /// Build the P1 corpus (JSONL) from captured sidecars and what git later shows about their commits.
    Corpus {
        /// The directory of *.reflection.json sidecars.
        #[arg(long)]
        reflections: PathBuf,
        /// The repository the sessions committed to.
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Walk the history reachable from this revision.
        #[arg(long, default_value = "HEAD")]
        rev: String,
        /// Replace the pre-registered outcome window (the summary says so).
        #[arg(long)]
        window_days: Option<u32>,
        /// The as-of time (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else the newest commit's time.
        #[arg(long)]
        as_of: Option<String>,
        /// A pre-registration replacing the embedded experiments/corpus.toml.
        #[arg(long)]
        prereg: Option<PathBuf>,
        /// Where the JSONL goes.
        #[arg(long, default_value = "corpus.jsonl")]
        out: PathBuf,
    },
    /// Generate synthetic inputs deterministically.
    Synth {
        #[command(subcommand)]
        what: Synth,
    },
}

/// `phase0 p2 <action>`.
#[derive(Subcommand)]
enum P2Action {
    /// Write a stratified, seeded sample of the failures (tool bucket × detection) as a CSV sheet for a reader.
    Audit {
        /// Failures sampled per stratum (default: the prereg's `[audit] per_stratum`).
        #[arg(long)]
        per_stratum: Option<usize>,
        /// The sheet to write.
        #[arg(long, default_value = "reports/p2/p2-audit.csv")]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum Synth {
    /// A labeled P1 corpus (JSONL) on stdout.
    P1 {
        #[arg(long, default_value_t = 400)]
        rows: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Only confidence, correct and agent (the shape of the benchmark corpora).
        #[arg(long)]
        minimal: bool,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Demo { repo, out } => {
            let outcome = pipeline::demo::run(&pipeline::demo::DemoArgs {
                repo,
                out,
                source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
                progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            });
            print_partial(&outcome.text, outcome.partial())
        }
        Command::Weekly {
            config,
            out,
            week,
            as_of,
            templates,
        } => {
            let args = commands::weekly::WeeklyArgs {
                config,
                out,
                week,
                as_of,
                source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
                // The clock only names the week when nothing else does; it never lands in a report.
                today: Some(jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date()),
                templates,
                progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            };
            match commands::weekly::run(&args) {
                Ok(outcome) => print_partial(&outcome.summary, outcome.partial()),
                Err(error) => {
                    eprintln!("phase0: {error}");
                    ExitCode::from(error.exit_code())
                }
            }
        }
        Command::P1 {
            corpus,
            reflections,
            repo,
            rev,
            window_days,
            corpus_prereg,
            corpus_out,
            prereg,
            out,
            json,
            skip_invalid,
            as_of,
            templates,
            by,
        } => {
            let args = commands::p1::P1Args {
                corpus: corpus.unwrap_or_default(),
                reflections,
                repo,
                rev,
                window_days,
                corpus_prereg,
                corpus_out,
                prereg,
                out,
                skip_invalid,
                as_of,
                source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
                templates,
                by,
            };
            print_outcome(commands::p1::run(&args).map(|o| (o.summary, o.json)), json)
        }
        Command::P2 {
            action,
            repo,
            rev,
            first_parent,
            since,
            until,
            prereg,
            name,
            out,
            json,
            as_of,
            templates,
            audit,
        } => {
            let args = commands::p2::P2Args {
                repo,
                rev: Some(rev),
                first_parent,
                since,
                until,
                prereg,
                out,
                as_of,
                source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
                templates,
                progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
                audit,
                name,
            };
            if let Some(P2Action::Audit { per_stratum, out }) = action {
                let args = commands::p2_audit::P2AuditArgs {
                    p2: args,
                    per_stratum,
                    sheet: out,
                };
                return print_outcome(commands::p2_audit::write(&args).map(|o| (o.summary, Vec::new())), false);
            }
            let outcome = commands::p2::run(&args).map(|o| {
                if let Some(hint) = o.hint.filter(|_| args.progress) {
                    eprintln!("{hint}");
                }
                (o.summary, o.json)
            });
            print_outcome(outcome, json)
        }
        Command::P3 {
            inputs,
            format,
            tz,
            window_days,
            prereg,
            out,
            json,
            as_of,
            templates,
            repo,
            data_dir,
        } => {
            let args = commands::p3::P3Args {
                inputs,
                format,
                tz,
                window_days,
                prereg,
                out,
                as_of,
                source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
                templates,
                repo,
                data_dir,
            };
            print_outcome(commands::p3::run(&args).map(|o| (o.summary, o.json)), json)
        }
        Command::Corpus {
            reflections,
            repo,
            rev,
            window_days,
            as_of,
            prereg,
            out,
        } => {
            let args = commands::corpus::CorpusArgs {
                reflections,
                repo,
                rev: Some(rev),
                window_days,
                as_of,
                source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
                prereg,
                out,
            };
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
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            match commands::synth::p1_corpus_with(
                rows,
                seed,
                if minimal {
                    commands::synth::Fields::Minimal
                } else {
                    commands::synth::Fields::Full
                },
                &mut stdout,
            )
            .and_then(|()| stdout.flush())
            {
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
