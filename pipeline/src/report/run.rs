//! What a run of several experiments (`phase0 demo`, `phase0 weekly`) did, as the reports of such runs show it:
//! which experiment, how it ended, its stdout block and report. `commands::suite` runs them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Experiment {
    P1,
    P2,
    P3,
}

impl Experiment {
    pub const ALL: [Experiment; 3] = [Experiment::P1, Experiment::P2, Experiment::P3];

    /// `p1`, `p2`, `p3`: the subdirectory and the config section.
    pub fn id(self) -> &'static str {
        match self {
            Experiment::P1 => "p1",
            Experiment::P2 => "p2",
            Experiment::P3 => "p3",
        }
    }

    /// The title the stdout blocks start with.
    pub fn title(self) -> &'static str {
        match self {
            Experiment::P1 => "P1 calibration",
            Experiment::P2 => "P2 gate buckets",
            Experiment::P3 => "P3 detectability",
        }
    }
}

/// How one experiment of a suite ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// It ran and wrote its reports (whatever the verdict).
    Ok,
    /// An input it needs does not exist (or is not configured); nothing was run.
    Missing,
    /// It could not run (bad input, unsupported configuration, unwritable output); nothing of it was written.
    Failed,
}

impl RunStatus {
    /// `ok`, `input missing`, `failed`: how summaries name it.
    pub fn word(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Missing => "input missing",
            RunStatus::Failed => "failed",
        }
    }
}

/// What a completed experiment produced.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Its stdout block.
    pub summary: String,
    /// Its report JSON (`pN.json`).
    pub json: Vec<u8>,
    /// Where its reports went.
    pub dir: PathBuf,
    pub written: Vec<PathBuf>,
    /// Lines for stdout only, after the block, never in a report (P2's diff cache: a warm run and a cold one must
    /// write the same reports).
    pub note: String,
}

#[derive(Debug, Clone)]
pub struct ExperimentRun {
    pub experiment: Experiment,
    pub status: RunStatus,
    /// Why it did not run (`Missing`, `Failed`).
    pub reason: Option<String>,
    pub ran: Option<Ran>,
}

impl ExperimentRun {
    /// The stdout block: the experiment's own, or its title with the reason it did not run.
    pub fn block(&self) -> String {
        match (&self.ran, &self.reason) {
            (Some(ran), _) => format!("{}{}", ran.summary, ran.note),
            (None, reason) => format!(
                "{} — not run, {}: {}\n",
                self.experiment.title(),
                self.status.word(),
                reason.as_deref().unwrap_or("no reason given")
            ),
        }
    }
}
