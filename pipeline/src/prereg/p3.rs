//! The P3 pre-registration's types (`experiments/p3.toml`), loaded and checked by [`crate::prereg`].

use serde::Deserialize;

/// `experiments/p3.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P3Spec {
    pub experiment: String,
    /// 1 when absent.
    #[serde(default = "version_one")]
    pub version: u32,
    pub title: String,
    pub hypothesis: String,
    pub alpha: f64,
    pub window_days: u32,
    pub kill: P3Kill,
    pub signals: P3Signals,
    /// Version 2: the rules for histories rebuilt from task files kept in git, and for `wrong.commit` and
    /// follow-ups; absent (version 1), none of them applies.
    #[serde(default)]
    pub history: Option<P3History>,
    /// `phase0 p3 audit` and `--audit`: the sample per stratum, the seed, the draws of the corrected rate. Not a rule
    /// of the analysis (defaults when absent).
    #[serde(default)]
    pub audit: P3AuditSpec,
}

/// The `[audit]` table of `experiments/p3.toml` (optional: these defaults, for the table or any key of it, when
/// absent).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct P3AuditSpec {
    /// Eligible tasks sampled per stratum (counted, set aside) by `phase0 p3 audit`.
    pub per_stratum: usize,
    /// Seeds the sample order (sha256 of seed, input and task) and the draws of the corrected rate.
    pub seed: u64,
    pub replicates: u32,
}

impl Default for P3AuditSpec {
    fn default() -> Self {
        Self {
            per_stratum: 20,
            seed: 20_261_128,
            replicates: 2000,
        }
    }
}

fn version_one() -> u32 {
    1
}

/// `[history]` of `experiments/p3.toml` (version 2). See the module documentation for how each rule applies.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P3History {
    /// An id whose title and creation time both change names a new task (read by the scanner).
    pub id_reuse: bool,
    /// Statuses (case-insensitive) that delete a task: it ends when it enters one.
    pub deleted_statuses: Vec<String>,
    /// A status change in a version whose update time is older than the task's newest one is not a change.
    pub stale_overwrites: bool,
    /// A commit changing the status of more than this many tasks is a bulk commit: its reopens are not signals.
    pub bulk_status_changes_above: u64,
    /// A reopen undone (its commit reverted, or the close restored with its earlier completion time) is not one.
    pub undone_reopens: bool,
    /// `wrong.commit` counts from this many hours after the completion (earlier commits are the task's own work).
    pub commit_quiet_hours: u32,
    /// A follow-up created at most this many minutes after the completion, in a commit by the author of the
    /// completing commit, is split work, not a signal.
    pub split_work_minutes: u32,
    /// Version 3: the file names under `.beads/` read as one task set per commit (`--repo` without
    /// `--data-dir`); a task id held by several of them is followed in the copy with the newest update time.
    /// Empty: `.beads/issues.jsonl` alone.
    #[serde(default)]
    pub task_files: Vec<String>,
    /// Version 3: a changed title sharing less than this share of words with the task's first title names a new
    /// task even when the creation time stays (read by the scanner).
    #[serde(default)]
    pub reuse_title_overlap_below: Option<f64>,
    /// Version 3: a change out of a closed category whose previous status came from a stale version (skipped) is
    /// part of that stale overwrite, not a reopen.
    #[serde(default)]
    pub stale_carried_forward: bool,
    /// Version 3: a commit that changes only the task files and reopens more than this many tasks is a bulk
    /// commit too.
    #[serde(default)]
    pub bulk_reopens_above: Option<u64>,
    /// Version 3: a reopen closed again with no commit, from the reopen to the close, changing anything besides
    /// the task files is administrative, not a signal.
    #[serde(default)]
    pub administrative_recloses: bool,
    /// Version 3: `wrong.commit` counts a commit only when it names the task in its subject line, not right after
    /// one of `passing_words`, while the task held the id.
    #[serde(default)]
    pub commit_subject_only: bool,
    #[serde(default)]
    pub passing_words: Vec<String>,
    /// Version 4: a wrong signal of a task rebuilt from git counts only when, in the task set at the signal, the
    /// task's id still names the task it named at the completion (title and creation time compared as `id_reuse`
    /// and `reuse_title_overlap_below` compare them); else `identity-changed`.
    #[serde(default)]
    pub identity_at_signal: bool,
    /// Version 4: a reopen, not stale itself, in a commit that writes at least this many stale reopens (other
    /// tasks') is part of that reset from an older copy (`stale-reset`), whatever else the commit changes.
    #[serde(default)]
    pub stale_resets_at_least: Option<u64>,
    /// Version 5: the quiet period of `wrong.commit` is measured to the earlier of the commit's author and
    /// committer times (a commit authored right after the close and rebased onto the main line days later is the
    /// task's own work).
    #[serde(default)]
    pub commit_quiet_from_author: bool,
    /// Version 5: a reopen in a commit committed more than this many hours after it was authored (rebased or
    /// cherry-picked onto the main line later: its task files are the outcome of merging two copies) is
    /// `landed-late`, whatever else the commit changes.
    #[serde(default)]
    pub landed_late_hours: Option<u32>,
    /// Version 6: a follow-up already in the task files before the completion (its creation time rewritten later,
    /// as an import does) is `first-seen-earlier`.
    #[serde(default)]
    pub follow_ups_first_seen: bool,
    /// Version 6: a follow-up created while the completed task was open again after a reopen is part of that
    /// rework (`while-reopened`), not a signal of its own.
    #[serde(default)]
    pub follow_ups_while_reopened: bool,
    /// Version 7: `while-reopened` applies only when the reopen that opened the episode was kept by the reopen
    /// rules; after a reopen set aside (bulk, stale, landed late…) the follow-up is judged on its own.
    #[serde(default)]
    pub while_reopened_needs_kept_reopen: bool,
    /// Version 8: a follow-up of a task rebuilt from task files in git that every other rule keeps is
    /// `follow-up-set-aside`: reported, never a signal (in the readings such follow-ups were planned work about as
    /// often as defects found later).
    #[serde(default)]
    pub follow_ups_set_aside: bool,
    /// Version 9: a reopen kept so far whose version was updated at most this many seconds after the completion
    /// time of the closed version it replaces is `claimed-at-close`: too soon for the work to have been judged (an
    /// agent claiming a task another has just closed, or a close and a claim crossing).
    #[serde(default)]
    pub claimed_within_seconds_of_close: Option<u32>,
    /// Version 10: a reopen kept so far that is one of at least this many times the task left a closed
    /// category within 24 hours (stale versions skipped) is `flapping`.
    #[serde(default)]
    pub flapping_reopens_at_least: Option<u32>,
    /// Version 11: creation times less than this many seconds apart are the same creation time wherever task
    /// identity is compared (`id_reuse`, `identity_at_signal`): a copy that drops the fraction of a second names the
    /// same creation.
    #[serde(default)]
    pub reuse_created_apart_seconds: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P3Kill {
    pub text: String,
    pub base_rate_below: f64,
    pub min_eligible: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P3Signals {
    pub follow_up_links: Vec<String>,
    pub bug_types: Vec<String>,
    pub verified_statuses: Vec<String>,
    pub major: Vec<String>,
}

/// Every signal id with its meaning, in report order.
pub const SIGNALS: [(&str, &str); 6] = [
    ("wrong.reopened", "reopened within the window after completion"),
    (
        "wrong.follow-up",
        "a follow-up, regression or linked bug created within the window",
    ),
    ("wrong.explicit", "the input states the outcome was wrong"),
    (
        "wrong.commit",
        "a revert or fix commit names the task within the window (needs --repo; not read yet)",
    ),
    ("right.explicit", "the input states the outcome was right or verified"),
    (
        "right.verified-status",
        "moved to a verified/accepted status within the window",
    ),
];
