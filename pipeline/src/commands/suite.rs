//! The three experiments side by side, as `phase0 demo` and `phase0 weekly` run them: each writes its normal
//! reports into its own subdirectory of one output directory (`p1/`, `p2/`, `p3/`), and one whose input is missing
//! or that fails is reported with its reason while the others still run.

use std::path::{Path, PathBuf};

use super::p1::P1Args;
use super::p2::P2Args;
use super::p3::P3Args;
pub use crate::report::run::{Experiment, ExperimentRun, Ran, RunStatus};

/// One experiment's arguments (their `out` is replaced by the suite's subdirectory), or why it will not run.
#[derive(Debug, Clone)]
pub enum Planned<A> {
    Run(A),
    Skip { status: RunStatus, reason: String },
}

impl<A> Planned<A> {
    pub fn missing(reason: impl Into<String>) -> Self {
        Planned::Skip {
            status: RunStatus::Missing,
            reason: reason.into(),
        }
    }

    pub fn failed(reason: impl Into<String>) -> Self {
        Planned::Skip {
            status: RunStatus::Failed,
            reason: reason.into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub p1: Planned<P1Args>,
    pub p2: Planned<P2Args>,
    pub p3: Planned<P3Args>,
}

/// The first of `paths` that does not exist, as the reason an experiment is `Missing`.
fn first_missing<'a>(what: &str, paths: impl IntoIterator<Item = &'a PathBuf>) -> Option<String> {
    paths
        .into_iter()
        .find(|path| !path.exists())
        .map(|path| format!("{}: no such {what}", path.display()))
}

/// Runs every planned experiment into `out/<id>/`, in order P1, P2, P3. Never stops early: each experiment's
/// result (or the reason it did not run) is returned.
pub fn run(plan: &Plan, out: &Path) -> Vec<ExperimentRun> {
    let p1 = step(Experiment::P1, &plan.p1, out, |args, dir| {
        // A labeled corpus, or the sidecar directory and the repository it is built from.
        let missing = match (&args.reflections, &args.repo) {
            (Some(reflections), Some(repo)) => {
                first_missing("directory", [reflections]).or_else(|| first_missing("repository", [repo]))
            }
            _ => first_missing("file", &args.corpus),
        };
        if let Some(reason) = missing {
            return Err((RunStatus::Missing, reason));
        }
        let args = P1Args {
            out: dir.to_path_buf(),
            ..args.clone()
        };
        super::p1::run(&args)
            .map(|o| (o.summary, o.json, o.written, String::new()))
            .map_err(|e| (RunStatus::Failed, e.to_string()))
    });
    let p2 = step(Experiment::P2, &plan.p2, out, |args, dir| {
        if let Some(reason) = first_missing("repository", [&args.repo]) {
            return Err((RunStatus::Missing, reason));
        }
        let args = P2Args {
            out: dir.to_path_buf(),
            ..args.clone()
        };
        super::p2::run(&args)
            .map(|o| (o.summary, o.json, o.written, o.cache_line))
            .map_err(|e| (RunStatus::Failed, e.to_string()))
    });
    let p3 = step(Experiment::P3, &plan.p3, out, |args, dir| {
        if let Some(reason) = first_missing("file", &args.inputs).or_else(|| first_missing("repository", &args.repo)) {
            return Err((RunStatus::Missing, reason));
        }
        let args = P3Args {
            out: dir.to_path_buf(),
            ..args.clone()
        };
        super::p3::run(&args)
            .map(|o| (o.summary, o.json, o.written, String::new()))
            .map_err(|e| (RunStatus::Failed, e.to_string()))
    });
    vec![p1, p2, p3]
}

/// A step's stdout block, report JSON, files written and stdout-only note, or why it did not run.
type StepResult = Result<(String, Vec<u8>, Vec<PathBuf>, String), (RunStatus, String)>;

fn step<A>(
    experiment: Experiment,
    planned: &Planned<A>,
    out: &Path,
    run: impl FnOnce(&A, &Path) -> StepResult,
) -> ExperimentRun {
    let not_run = |status, reason| ExperimentRun {
        experiment,
        status,
        reason: Some(reason),
        ran: None,
    };
    let args = match planned {
        Planned::Run(args) => args,
        Planned::Skip { status, reason } => return not_run(*status, reason.clone()),
    };
    let dir = out.join(experiment.id());
    match run(args, &dir) {
        Ok((summary, json, written, note)) => ExperimentRun {
            experiment,
            status: RunStatus::Ok,
            reason: None,
            ran: Some(Ran {
                summary,
                json,
                dir,
                written,
                note,
            }),
        },
        Err((status, reason)) => not_run(status, reason),
    }
}

/// `rel` under `repo`, written without a leading `./` when `repo` is `.`, so that the paths reports record stay
/// the same from any clone location (`data/p1-corpus.jsonl`, not `./data/p1-corpus.jsonl`).
pub fn under(repo: &Path, rel: &str) -> PathBuf {
    if repo == Path::new(".") || repo.as_os_str().is_empty() {
        PathBuf::from(rel)
    } else {
        repo.join(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_input_is_reported_and_the_others_still_run() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(&corpus, "{\"confidence\": 0.9, \"correct\": true}\n").unwrap();
        let plan = Plan {
            p1: Planned::Run(P1Args {
                corpus: Some(corpus.clone()),
                ..Default::default()
            }),
            p2: Planned::Run(P2Args {
                repo: dir.path().join("no-such-repo"),
                ..Default::default()
            }),
            p3: Planned::failed("not configured"),
        };
        let out = dir.path().join("out");
        let runs = run(&plan, &out);
        assert_eq!(runs[0].status, RunStatus::Ok);
        assert_eq!(runs[0].ran.as_ref().unwrap().dir, out.join("p1"));
        assert!(out.join("p1/p1.json").is_file());
        assert_eq!(runs[1].status, RunStatus::Missing);
        assert_eq!(
            runs[1].reason.as_deref(),
            Some(format!("{}: no such repository", dir.path().join("no-such-repo").display()).as_str())
        );
        assert!(!out.join("p2").exists());
        assert_eq!(runs[2].status, RunStatus::Failed);
        assert_eq!(runs[2].block(), "P3 detectability — not run, failed: not configured\n");
    }

    #[test]
    fn a_failing_experiment_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(&corpus, "{\"confidence\": 1.5, \"correct\": true}\n").unwrap();
        let plan = Plan {
            p1: Planned::Run(P1Args {
                corpus: Some(corpus.clone()),
                ..Default::default()
            }),
            p2: Planned::missing("x"),
            p3: Planned::missing("y"),
        };
        let runs = run(&plan, dir.path());
        assert_eq!(runs[0].status, RunStatus::Failed);
        assert_eq!(
            runs[0].reason.as_deref(),
            Some(
                format!(
                    "{}:1: confidence 1.5 is outside [0, 1] (--skip-invalid skips invalid rows, counts them by reason \
                     and names the first)",
                    corpus.display()
                )
                .as_str()
            )
        );
        assert!(!dir.path().join("p1").exists());
    }

    #[test]
    fn paths_under_the_current_directory_stay_relative() {
        assert_eq!(under(Path::new("."), "data/x"), PathBuf::from("data/x"));
        assert_eq!(under(Path::new("/r"), "data/x"), PathBuf::from("/r/data/x"));
        assert_eq!(under(Path::new("r"), "data/x"), PathBuf::from("r/data/x"));
    }
}
