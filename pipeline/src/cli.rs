//! The command line of `phase0`: clap derives it from the commands' own option types ([`P1Args`],
//! [`P2Args`], …), so `main.rs` only parses, dispatches and maps errors to exit codes. Every subcommand's
//! `--help` ends with examples, its exit codes and the environment variables it reads.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands::corpus::CorpusArgs;
use crate::commands::p1::P1Args;
use crate::commands::p2::P2Args;
use crate::commands::p3::P3Args;
use crate::commands::pool::PoolArgs;
use crate::commands::weekly::WeeklyArgs;
use crate::demo::DemoArgs;

/// The exit codes every experiment command shares (docs/commands.md, "Exit codes").
macro_rules! experiment_exit_codes {
    ($bad:literal) => {
        concat!(
            "Exit codes:
  0  the reports were written, whatever the verdict (PASS, KILL or INCONCLUSIVE)
  1  runtime error: an output could not be written
  2  usage error or bad input: ",
            $bad,
            " (the message names the file and the line or record)"
        )
    };
}

/// How `SOURCE_DATE_EPOCH` is read (every command that dates a report).
macro_rules! source_date_epoch {
    ($otherwise:literal) => {
        concat!(
            "  SOURCE_DATE_EPOCH  Unix seconds: the report date when --as-of is not given (else ",
            $otherwise,
            ")"
        )
    };
}

pub const DEMO_HELP: &str = concat!(
    "Examples:
  phase0 demo                            the embedded samples and this checkout's history, into reports/demo/
  phase0 demo --repo ../app --out /tmp/demo

Exit codes:
  0  all three experiments ran and wrote their reports, whatever the verdicts
  2  usage error
  3  partial: at least one experiment could not run (its block says why); the others' reports were written

Environment:
",
    "  SOURCE_DATE_EPOCH  Unix seconds: the date of P1's and P2's reports (else 2026-01-01 for P1's sample, the newest
                     commit's time for P2); P3's sample is always read as of 2026-01-01"
);

pub const WEEKLY_HELP: &str = concat!(
    "Examples:
  phase0 weekly                          experiments/weekly.toml's inputs into reports/<ISO week>/
  phase0 weekly --config weekly.toml --week 2026-W47 --as-of 2026-11-23

Exit codes:
  0  all three ran; the week and the index were written, whatever the verdicts
  1  runtime error: a report, the week or the index could not be written
  2  usage error or bad input (config: file, line and key; week; date; template)
  3  partial: at least one experiment's input was missing or it failed; the rest was written

Environment:
",
    source_date_epoch!("each experiment's own default"),
    "; it also names the week when --week and --as-of are not given"
);

pub const P1_HELP: &str = concat!(
    "Examples:
  phase0 p1 data/p1-corpus.jsonl                    a labeled corpus (JSONL) into reports/p1/
  phase0 p1 corpus.jsonl --skip-invalid --by agent  skip bad rows (counted), break down by agent
  phase0 p1 corpus.parquet                          the same fields as a Parquet (or CSV) table
  phase0 p1 --reflections .mosaic/reflections --repo .   label the captured sidecars from git, then P1

",
    experiment_exit_codes!("an invalid row, prereg, template or date"),
    "

Environment:
",
    source_date_epoch!("with --reflections the join's as-of time, else none")
);

pub const P2_HELP: &str = concat!(
    "Examples:
  phase0 p2                                  this checkout's history into reports/p2/
  phase0 p2 --repo ../app --since 2025-01-01 --first-parent
  phase0 p2 --repo api=../api --repo ../web  both scanned, pooled over repositories (OUT/repo=<name>/ each)
  phase0 p2 --repos repos.txt                the repositories a file lists (PATH or NAME=PATH per line), pooled
  phase0 p2 audit --per-stratum 10           a sample sheet for a reader (reports/p2/p2-audit.csv)
  phase0 p2 --audit reports/p2/p2-audit.csv  the verdict on the share corrected by the filled sheet

",
    experiment_exit_codes!(
        "a path that does not exist or is not a repository, a revision that does not resolve, --since after --until, \
         prereg, template, date, audit sheet"
    ),
    "

Environment:
",
    source_date_epoch!("the newest commit's time")
);

pub const POOL_HELP: &str = concat!(
    "Examples:
  phase0 p2 --repo ../api --repo ../web --out reports/p2     scan both, pool them (the same as below, in one run)
  phase0 pool ci-artifacts/p2-*/                             pool report sets written by a CI matrix job each
  phase0 pool reports/p2 --out reports/p2                    re-pool the repo=<name>/ partitions of a run

The pooled verdict is the kill rule of the partitions' pre-registration, decided on the share of all their
classified failures with an interval over repositories (design-effect Wilson; docs/p2.md).

",
    experiment_exit_codes!(
        "a directory without p2.json or repo=<name>/ partitions, a damaged partition (its p2-failures.parquet does \
         not match its p2.json), two partitions of one repository, partitions decided under another pre-registration \
         than --prereg (default the embedded one), template, date"
    ),
    "

Environment:
",
    source_date_epoch!("the newest partition's date")
);

pub const P2_AUDIT_HELP: &str = "Examples:
  phase0 p2 audit                            reports/p2/p2-audit.csv from this checkout's history
  phase0 p2 --repo ../app audit --per-stratum 10 --out audit.csv

Exit codes:
  0  the sheet was written
  1  runtime error: it could not be written
  2  usage error or bad input (as phase0 p2)";

pub const P3_AUDIT_HELP: &str = "Examples:
  phase0 p3 --repo . audit                   reports/p3/p3-audit.csv from this checkout's task files
  phase0 p3 export.json audit --per-stratum 30 --out audit.csv

Fill genuine (yes, no, unclear) and note, then give the sheet to `phase0 p3 … --audit SHEET` with the same inputs.

Exit codes:
  0  the sheet was written
  1  runtime error: it could not be written
  2  usage error or bad input (as phase0 p3)";

pub const P3_HELP: &str = concat!(
    "Examples:
  phase0 p3 issues.json                       a board export (format sniffed) into reports/p3/
  phase0 p3 data/p3/jira.json --as-of 2026-01-01  the sample, read once every 30-day window has closed
  phase0 p3 export.csv --format jira-csv --tz Europe/Berlin
  phase0 p3 tasks.parquet                     the plain task table as Parquet (list columns or JSON text)
  phase0 p3 --repo .                          the task files kept in the repository (.beads/issues.jsonl, data/)
  phase0 p3 --repo . audit                    a sample sheet for a reader (reports/p3/p3-audit.csv)
  phase0 p3 --repo . --audit reports/p3/p3-audit.csv  the verdict on the base rate corrected by the filled sheet

",
    experiment_exit_codes!(
        "an unreadable or malformed export, unknown format or zone, no task file in --repo, prereg, template, date, \
         audit sheet"
    ),
    "

Environment:
",
    source_date_epoch!("the newest date in the inputs"),
    "; also the as-of date of the windows"
);

pub const CORPUS_HELP: &str = concat!(
    "Examples:
  phase0 corpus --reflections .mosaic/reflections              corpus.jsonl from this checkout's history
  phase0 corpus --reflections sidecars/ --repo ../app --out app.jsonl
  phase0 p1 corpus.jsonl                                       then P1 on it

Exit codes:
  0  the corpus was written (invalid sidecars are listed on stderr and skipped)
  1  runtime error: the corpus could not be written
  2  usage error or bad input (unreadable directory, a path that does not exist or is not a repository, a revision
     that does not resolve, prereg, date)

Environment:
",
    "  SOURCE_DATE_EPOCH  Unix seconds: the as-of time of the join when --as-of is not given (else the newest commit's
                     time)"
);

pub const SYNTH_HELP: &str = "Examples:
  phase0 synth p1 --rows 400 --seed 1 > data/p1-corpus.jsonl

Exit codes:
  0  written
  1  stdout could not be written
  2  usage error";

#[derive(Parser)]
#[command(
    name = "phase0",
    version,
    about = "Phase-0 evidence for an agent self-reflection loop, offline",
    after_help = "Start with `phase0 demo`; `phase0 help <COMMAND>` explains each command with examples.

Exit codes: 0 the run completed (whatever the verdict), 1 runtime error (an output could not be written),
2 usage error or bad input, 3 demo/weekly partial (at least one experiment did not run)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// The three experiments on the embedded defaults: P1 on data/'s sample corpus, P2 on the repository's
    /// history, P3 on data/p3/'s Jira sample.
    #[command(after_help = DEMO_HELP)]
    Demo(DemoArgs),
    /// The three experiments on a config's inputs into `OUT/<ISO week>/`, and `OUT/index.md` + `index.json` with every
    /// week and what changed since the previous one.
    #[command(after_help = WEEKLY_HELP)]
    Weekly(WeeklyArgs),
    /// P1 calibration: does self-reported confidence separate right from wrong work?
    #[command(after_help = P1_HELP)]
    P1 {
        #[command(flatten)]
        args: P1Args,
        /// Print the report JSON instead of the summary block.
        #[arg(long, help_heading = "Output")]
        json: bool,
    },
    /// P2 gate buckets: of the failures in git history, how many would only self-reflection have caught?
    #[command(after_help = P2_HELP)]
    P2 {
        /// `audit`: write a sample sheet for a reader instead of the reports.
        #[command(subcommand)]
        action: Option<P2Action>,
        #[command(flatten)]
        args: P2Args,
        /// Print the report JSON instead of the summary block.
        #[arg(long, help_heading = "Output")]
        json: bool,
    },
    /// P2 pooled over repositories from report sets written elsewhere (`phase0 p2 --out`, one per repository)
    #[command(after_help = POOL_HELP)]
    Pool {
        #[command(flatten)]
        args: PoolArgs,
        #[arg(long, help_heading = "Output")]
        json: bool,
    },
    /// P3 detectability: how often is a task's outcome machine-detectable within 30 days?
    // `phase0 p3 export.json audit`: the action after the inputs is the action, not another input.
    #[command(after_help = P3_HELP, subcommand_precedence_over_arg = true)]
    P3 {
        /// `audit`: write a sample sheet for a reader instead of the reports.
        #[command(subcommand)]
        action: Option<P3Action>,
        #[command(flatten)]
        args: P3Args,
        /// Print the report JSON instead of the summary block.
        #[arg(long, help_heading = "Output")]
        json: bool,
    },
    /// Build the P1 corpus (JSONL) from captured sidecars and what git later shows about their commits.
    #[command(after_help = CORPUS_HELP)]
    Corpus(CorpusArgs),
    /// Generate synthetic inputs deterministically.
    #[command(after_help = SYNTH_HELP)]
    Synth {
        #[command(subcommand)]
        what: Synth,
    },
}

/// `phase0 p2 <action>`.
#[derive(Subcommand)]
pub enum P2Action {
    /// Write a stratified, seeded sample of the failures (tool bucket × detection) as a CSV sheet for a reader.
    #[command(after_help = P2_AUDIT_HELP)]
    Audit {
        /// Failures sampled per stratum, 1 to 1000 (default: the prereg's `[audit] per_stratum`).
        #[arg(long)]
        per_stratum: Option<usize>,
        /// The sheet to write.
        #[arg(long, default_value = "reports/p2/p2-audit.csv")]
        out: PathBuf,
    },
}

/// `phase0 p3 <action>`.
#[derive(Subcommand)]
pub enum P3Action {
    /// Write a seeded sample of the eligible tasks the rules decided about (counted, set aside) as a CSV sheet for a
    /// reader.
    #[command(after_help = P3_AUDIT_HELP)]
    Audit {
        /// Tasks sampled per stratum, 1 to 1000 (default: the prereg's `[audit] per_stratum`).
        #[arg(long)]
        per_stratum: Option<usize>,
        /// The sheet to write.
        #[arg(long, default_value = "reports/p3/p3-audit.csv")]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum Synth {
    /// A labeled P1 corpus (JSONL) on stdout.
    #[command(after_help = SYNTH_HELP)]
    P1 {
        /// How many rows.
        #[arg(long, default_value_t = 400)]
        rows: u64,
        /// The seed of every random draw (the same seed gives the same bytes).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Only confidence, correct and agent (the shape of the benchmark corpora).
        #[arg(long)]
        minimal: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Each command's one-line description is its own (a doc comment once slipped from `p3` onto `pool`, and `p3`
    /// showed its options struct's).
    #[test]
    fn every_command_is_described_by_its_own_line() {
        let about: Vec<(String, String)> = Cli::command()
            .get_subcommands()
            .map(|c| {
                (
                    c.get_name().to_owned(),
                    c.get_about().map(|a| a.to_string()).unwrap_or_default(),
                )
            })
            .collect();
        let of = |name: &str| &about.iter().find(|(n, _)| n == name).unwrap().1;
        assert!(of("p3").starts_with("P3 detectability: "), "{}", of("p3"));
        assert!(of("pool").starts_with("P2 pooled over repositories"), "{}", of("pool"));
        for (name, text) in &about {
            assert!(!text.is_empty() && !text.contains("clap derives"), "{name}: {text:?}");
            assert!(
                about.iter().filter(|(_, t)| t == text).count() == 1,
                "{name} shares its description"
            );
        }
    }

    #[test]
    fn parsed_arguments_keep_the_defaults_of_before() {
        let Cli {
            command: Command::P2 { args, json, action },
        } = Cli::try_parse_from(["phase0", "p2"]).unwrap()
        else {
            panic!("p2")
        };
        assert!(!json && action.is_none());
        assert_eq!(args.repo, PathBuf::from("."));
        assert_eq!(args.rev.as_deref(), Some("HEAD"));
        assert_eq!(args.out, PathBuf::from("reports/p2"));
        let Cli {
            command: Command::P3 { args, .. },
        } = Cli::try_parse_from(["phase0", "p3", "a.json"]).unwrap()
        else {
            panic!("p3")
        };
        assert_eq!(args.format, "auto");
        assert_eq!(args.out, PathBuf::from("reports/p3"));
        assert_eq!(args.inputs, [PathBuf::from("a.json")]);
        let Cli {
            command: Command::P1 { args, .. },
        } = Cli::try_parse_from(["phase0", "p1", "c.jsonl"]).unwrap()
        else {
            panic!("p1")
        };
        assert_eq!(args.corpus, Some(PathBuf::from("c.jsonl")));
        assert_eq!(args.out, PathBuf::from("reports/p1"));
        assert!(
            Cli::try_parse_from(["phase0", "p1"]).is_err(),
            "a corpus or --reflections"
        );
        assert!(Cli::try_parse_from(["phase0", "p1", "c.jsonl", "--reflections", "d", "--repo", "."]).is_err());
        let Cli {
            command: Command::Corpus(args),
        } = Cli::try_parse_from(["phase0", "corpus", "--reflections", "d"]).unwrap()
        else {
            panic!("corpus")
        };
        assert_eq!(args.rev.as_deref(), Some("HEAD"));
        assert_eq!(args.out, PathBuf::from("corpus.jsonl"));
        assert_eq!(args.repo, PathBuf::from("."));
        let Cli {
            command: Command::Weekly(args),
        } = Cli::try_parse_from(["phase0", "weekly"]).unwrap()
        else {
            panic!("weekly")
        };
        assert_eq!(args.out, PathBuf::from("reports"));
        let Cli {
            command: Command::Demo(args),
        } = Cli::try_parse_from(["phase0", "demo"]).unwrap()
        else {
            panic!("demo")
        };
        assert_eq!(
            (args.repo, args.out),
            (PathBuf::from("."), PathBuf::from("reports/demo"))
        );
    }
}
