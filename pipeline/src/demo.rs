//! `phase0 demo`: the three experiments on the embedded defaults, with nothing of the user's: P1 on the sample
//! corpus in `data/`, P2 on the history of the repository it runs in, P3 on a sample board export in `data/p3/`.
//! Each writes its normal reports into `<out>/p1`, `<out>/p2`, `<out>/p3`; one that cannot run is named with its
//! reason and the others still run (exit 3, partial).

use std::path::{Path, PathBuf};

use crate::commands::p1::P1Args;
use crate::commands::p2::P2Args;
use crate::commands::p3::P3Args;
use crate::commands::suite::{self, ExperimentRun, Plan, Planned, RunStatus};

/// The P1 sample corpus, relative to the repository (`phase0 synth p1 --rows 400 --seed 1`).
pub const P1_CORPUS: &str = "data/p1-corpus.jsonl";
/// The P3 sample the demo reads: the Jira REST export with changelogs, the sample format that shows the most
/// signals — status history gives SHOP-3's reopen, issue links the follow-ups (see `data/p3/README.md`).
pub const P3_EXPORT: &str = "data/p3/jira.json";
/// The sample board is of November 2025. Read as of the start of 2026 every task's 30-day window has closed,
/// so none is censored; a fixed date keeps the P3 report the same on every machine and day.
pub const P3_AS_OF: &str = "2026-01-01";

/// The options of `phase0 demo` (clap derives its command line from them, [`crate::cli`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DemoArgs {
    /// The repository: P2 scans its history, P1 and P3 read its data/.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Where the demo's reports go (p1/, p2/, p3/).
    #[arg(long, default_value = "reports/demo")]
    pub out: PathBuf,
    /// `SOURCE_DATE_EPOCH` (Unix seconds), read by clap from the environment: P1's and P2's report date.
    #[arg(long = "source-date-epoch", env = "SOURCE_DATE_EPOCH", hide = true)]
    pub source_date_epoch: Option<String>,
    /// Show P2's spinner on stderr (the caller decides: only when stderr is a terminal).
    #[arg(skip)]
    pub progress: bool,
}

#[derive(Debug)]
pub struct DemoOutcome {
    /// What `phase0 demo` prints.
    pub text: String,
    pub runs: Vec<ExperimentRun>,
}

impl DemoOutcome {
    /// One of the three could not run: exit 3 (`exit::PARTIAL`).
    pub fn partial(&self) -> bool {
        self.runs.iter().any(|run| run.status != RunStatus::Ok)
    }
}

/// The demo's inputs under `repo`.
pub fn plan(args: &DemoArgs) -> Plan {
    Plan {
        p1: Planned::Run(P1Args {
            corpus: Some(suite::under(&args.repo, P1_CORPUS)),
            out: PathBuf::new(),
            // The sample corpus has no timestamps: its report is dated as P3's sample is (SOURCE_DATE_EPOCH wins).
            as_of: args.source_date_epoch.is_none().then(|| P3_AS_OF.to_string()),
            source_date_epoch: args.source_date_epoch.clone(),
            ..Default::default()
        }),
        p2: Planned::Run(P2Args {
            repo: args.repo.clone(),
            source_date_epoch: args.source_date_epoch.clone(),
            progress: args.progress,
            ..Default::default()
        }),
        p3: Planned::Run(P3Args {
            inputs: vec![suite::under(&args.repo, P3_EXPORT)],
            format: "auto".to_string(),
            as_of: Some(P3_AS_OF.to_string()),
            ..Default::default()
        }),
    }
}

/// Runs the three experiments into `args.out` and returns the text to print.
pub fn run(args: &DemoArgs) -> DemoOutcome {
    let plan = plan(args);
    let runs = suite::run(&plan, &args.out);
    DemoOutcome {
        text: render(args, &runs),
        runs,
    }
}

fn render(args: &DemoArgs, runs: &[ExperimentRun]) -> String {
    let show = |path: &Path| path.display().to_string();
    let mut text = format!(
        "phase0 demo: the three Phase-0 experiments on the embedded defaults\n  P1 on {}, P2 on the history of {}, \
         P3 on {} (Jira with changelogs: reopens and follow-ups) as of {P3_AS_OF}\n",
        show(&suite::under(&args.repo, P1_CORPUS)),
        show(&args.repo),
        show(&suite::under(&args.repo, P3_EXPORT)),
    );
    for run in runs {
        text.push('\n');
        text.push_str(&run.block());
        if let Some(ran) = &run.ran {
            text.push_str(&crate::commands::reports_line(&ran.dir));
        }
    }
    let not_run: Vec<&str> = runs
        .iter()
        .filter(|run| run.status != RunStatus::Ok)
        .map(|run| run.experiment.id())
        .collect();
    if !not_run.is_empty() {
        let written = if not_run.len() == runs.len() {
            format!(
                "no report was written (is {} a checkout of this repository, with its data/?)",
                show(&args.repo)
            )
        } else {
            "the other reports were written".to_string()
        };
        text.push_str(&format!(
            "\npartial: {} did not run; {written} (exit 3)\n",
            not_run.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_reads_repository_relative_samples() {
        let plan = plan(&DemoArgs {
            repo: PathBuf::from("."),
            ..Default::default()
        });
        let Planned::Run(p1) = plan.p1 else { panic!("p1 runs") };
        assert_eq!(p1.corpus, Some(PathBuf::from("data/p1-corpus.jsonl")));
        assert_eq!(p1.as_of.as_deref(), Some("2026-01-01"), "dated as P3's sample is");
        let Planned::Run(p3) = plan.p3 else { panic!("p3 runs") };
        assert_eq!(p3.inputs, [PathBuf::from("data/p3/jira.json")]);
        assert_eq!(p3.as_of.as_deref(), Some("2026-01-01"));
        let Planned::Run(p2) = plan.p2 else { panic!("p2 runs") };
        assert_eq!(p2.repo, PathBuf::from("."));
        // SOURCE_DATE_EPOCH dates P1's report when it is set.
        let dated = super::plan(&DemoArgs {
            source_date_epoch: Some("1767225600".into()),
            ..Default::default()
        });
        let Planned::Run(p1) = dated.p1 else { panic!("p1 runs") };
        assert_eq!((p1.as_of, p1.source_date_epoch.as_deref()), (None, Some("1767225600")));
    }

    #[test]
    fn a_demo_where_nothing_ran_does_not_claim_reports_were_written() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = run(&DemoArgs {
            repo: dir.path().join("nowhere"),
            out: dir.path().join("out"),
            ..Default::default()
        });
        assert!(outcome.partial());
        assert!(
            outcome
                .text
                .contains("\npartial: p1, p2, p3 did not run; no report was written (is "),
            "{}",
            outcome.text
        );
        assert!(
            !outcome.text.contains("the other reports were written"),
            "{}",
            outcome.text
        );
    }
}
