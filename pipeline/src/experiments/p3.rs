//! P3 detectability: for completed tasks, how often does a machine-detectable right/wrong signal appear within
//! the window?
//!
//! # Rules (windows and lists from `experiments/p3.toml`)
//!
//! * **Completion** is the first time the task entered a Done status: from its status history when the input has
//!   one (so a task completed, reopened and completed again counts from the first completion), otherwise the
//!   completion time the tool reports for a task that is Done now. Tasks never completed are not eligible;
//!   Done tasks without a completion time are counted as `completion_unknown` and left out.
//! * **Censoring**: a completed task is eligible only when `completion + window_days <= as_of`; the others are
//!   still inside their window and are counted as `censored`, never as "no signal".
//! * **Signals**, each with an id, counted when they appear within `[completion, completion + window]`:
//!   * `wrong.reopened`: a reopen date (explicit, or a history change out of Done) in the window; for an input
//!     without history, whose completion time may be a re-completion, also a reopen at most `window_days` before
//!     the reported completion (a reopen always follows an earlier completion);
//!   * `wrong.follow-up`: a follow-up task (a link of a kind in `signals.follow_up_links`, from either side, or a
//!     bug linked to it in any way) created in the window; a follow-up
//!     that is not in the input has no creation time and cannot count; a type or label in `bug_types` makes a
//!     task a bug (Linear and GitHub have labels, not types);
//!   * `wrong.explicit` / `right.explicit`: the input states the outcome (upstream JSONL), timing aside;
//!   * `right.verified-status`: a history change into a status named in `signals.verified_statuses` in the window
//!     (without history: the current status is one of them).
//!   * `wrong.commit` (with `--repo`): a commit that P2's rules call a remedy (a revert, a `Fixes:` trailer, a
//!     fix) names the task's id (`SHOP-12`, `#12`, `bd-a1b2`; a whole token, case-insensitive) in its message,
//!     with a committer time in the window.
//! * **Version 2** (`[history]` in the prereg; absent, none of this applies). For a history rebuilt from a task
//!   file in git (every change carries a [`Provenance`]) the history is walked change by change: a change marked
//!   stale is no change at all (the state stays); a change out of a closed category is a reopen unless its commit
//!   changed more than `bulk_status_changes_above` statuses (`bulk-commit`), or it is undone — its commit is
//!   reverted, or the next close kept restores the completion time it had before (`reverted`); completion is the
//!   first change kept into Done; a verified status counts only outside bulk commits. A task that left the file
//!   ([`Task::removed`], or a status in `deleted_statuses`) is eligible only when its window ended before it
//!   left (else `removed_before_window`). In every input, `wrong.commit` counts from `commit_quiet_hours` after
//!   the completion (`implementing-commit` before), and a follow-up created at most `split_work_minutes` after
//!   the completion in a commit by the author of the completing commit is `split-work`. Every would-be signal
//!   of an eligible task within its window, kept or set aside, is an evidence row (`p3-signals.csv`).
//! * **Version 3** (optional fields of `[history]`, each off when absent, so version 2's file reads as before):
//!   `task_files` makes `--repo` read those files of `.beads/` as one task set (the scanner's directory mode,
//!   newest copy of an id); `reuse_title_overlap_below` splits retitled ids (scanner); in the walk, a reopen whose
//!   previous status came from a stale version is `stale-carried`, a reopen in a commit that changed only the task
//!   files and reopened more than `bulk_reopens_above` tasks is `bulk-reopens`, a reopen whose next kept close
//!   comes with no commit changing other files in between (both included) is `administrative-reclose`; with
//!   `commit_subject_only`, `wrong.commit` needs the id in the subject, not right after one of `passing_words`,
//!   at a time the task held the id (`passing-mention`). The version-3 exclusion rules appear in the report only
//!   when on.
//! * **Version 4** (optional fields of `[history]`, off when absent): with `stale_resets_at_least`, a reopen kept
//!   so far whose commit also writes at least that many stale reopens of other tasks is `stale-reset` (the task is
//!   then open without a reopen, as after `stale-carried`); with
//!   `identity_at_signal`, every wrong signal still counted (`wrong.reopened`, `wrong.follow-up`, `wrong.commit`)
//!   of a task that carries an identity timeline (task files in git only) counts only when its id names, in the
//!   task set at the signal, the task it named at the completion — title and creation time compared as the
//!   scanner's reuse rule compares them (`reuse_title_overlap_below` included, and from version 11
//!   `reuse_created_apart_seconds`) — else `identity-changed`. The
//!   task set at the signal is that of the version showing the reopen, of the version that first holds the
//!   follow-up, and for a commit that of the newest mark committed at or before it (an id absent there, or before
//!   its first version, names no task); the identity at the completion is that of the version showing the
//!   completion.
//! * **Version 5** (optional fields of `[history]`, off when absent): with `commit_quiet_from_author`, the quiet
//!   period of `wrong.commit` runs to the earlier of the commit's author and committer times (a commit authored
//!   seconds after the close and rebased onto the main line weeks later is `implementing-commit`; the signal's
//!   time stays the committer time); with `landed_late_hours`, a reopen kept so far whose commit was committed
//!   more than that many hours after it was authored is `landed-late` (the task is then open without a reopen,
//!   as after `stale-reset`).
//! * **Version 6** (optional fields of `[history]`, off when absent): with `follow_ups_first_seen`, a follow-up of
//!   a task rebuilt from task files in git whose first version was committed before the completion (its creation
//!   time rewritten later, as an import does) is `first-seen-earlier`; with `follow_ups_while_reopened`, a
//!   follow-up created while the completed task was open again (its last status change at or before the
//!   follow-up's creation, after the completion and stale versions skipped, is to a status that is not closed) is
//!   `while-reopened`: part of that rework, judged through the reopen.
//! * **Version 7** (optional field of `[history]`, off when absent): with `while_reopened_needs_kept_reopen`,
//!   `while-reopened` applies only when the latest reopen before the follow-up (after the completion; stale
//!   overwrites, which change nothing, skipped) is one the reopen rules kept. A follow-up filed while the task is
//!   open after a reopen set aside (a bulk commit, a stale copy, a late landing) would otherwise be judged by
//!   nothing: the reopen is not counted, and neither would the follow-up be.
//! * **Version 8** (optional field of `[history]`, off when absent): with `follow_ups_set_aside`, a follow-up of a
//!   task rebuilt from task files in git that every rule above keeps (identity included) is `follow-up-set-aside`:
//!   an evidence row, never a signal. Readings of versions 5 to 7 found such follow-ups planned work about as often
//!   as defects of the completed task; exports (Jira, Linear, GitHub, Trello) keep their follow-ups.
//! * **Version 9** (optional field of `[history]`, off when absent): with `claimed_within_seconds_of_close`, a
//!   reopen kept so far whose version was updated at most that many seconds after the completion time of the
//!   closed version it replaces (both times from the task file: beads `updated_at` and `closed_at`) is
//!   `claimed-at-close`. The task is then open without a reopen, as after `stale-reset`.
//! * **Flapping** (a diagnostic, in every version; no count changes): an eligible task with a signal whose status,
//!   rebuilt from task files in git, left a closed category [`FLAP_REOPENS`] times or more within 24 hours (stale
//!   versions skipped) is counted in [`Counts::flapping`]; when such tasks are at least half of those with a signal
//!   and the verdict is not KILL, the verdict's reason says so (a tool syncing the file with another tracker writes
//!   statuses like that; version 9's held-out reading found one PASS made of nothing else).
//! * **Base rate** = eligible tasks with at least one signal / eligible tasks, with a Wilson interval.
//! * **Verdict** on that interval against `kill.base_rate_below`: KILL when the interval lies below it, PASS when
//!   at or above, INCONCLUSIVE when it straddles or when fewer than `kill.min_eligible` tasks are eligible. A KILL
//!   reached while a `signals.major` signal could not be observed in some input says so in its reason: the low
//!   rate may be the format's blindness, not the work's.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use rayon::prelude::*;
use serde::Serialize;

pub use super::p1::VerdictKind;
pub use crate::prereg::p3::{P3History, P3Kill, P3Signals, P3Spec, SIGNALS};
use crate::scan::board::{Board, LinkDirection, Provenance, StatusCategory, StatusChange, Task};
use crate::scan::commits::short_id;
use crate::stats::{self, Interval};

/// Whether `board`'s format (and the commits given, if any) can show the signal `id`.
fn observable(board: &Board, id: &str, with_commits: bool) -> bool {
    let caps = &board.capabilities;
    match id {
        "wrong.commit" => with_commits,
        "wrong.reopened" => caps.reopen,
        // The upstream JSONL has no creation times in its schema, but an export may carry them.
        "wrong.follow-up" => caps.links && (caps.created || board.tasks.iter().any(|t| t.created.is_some())),
        "wrong.explicit" | "right.explicit" => caps.explicit_outcome,
        "right.verified-status" => caps.status_history,
        _ => false,
    }
}

/// How each task was counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub tasks: u64,
    /// Never completed (not Done now, no Done in the history).
    pub not_completed: u64,
    /// Done, but the input gives no completion time.
    pub completion_unknown: u64,
    /// Completed, window not yet elapsed at the as-of date.
    pub censored: u64,
    /// Completed with the window elapsed: the denominator.
    pub eligible: u64,
    /// Eligible tasks with at least one signal, with a wrong signal, with a right signal.
    pub with_signal: u64,
    pub wrong: u64,
    pub right: u64,
    /// Follow-up links naming a task that is not in the input (its creation time is unknown).
    pub follow_ups_outside_input: u64,
    /// Tasks that left a task file kept in git (deleted, a deleted status, or their id taken by another task),
    /// whatever their status; of them, those whose id was reused.
    pub removed: u64,
    pub ids_reused: u64,
    /// Completed tasks removed before their window elapsed: neither eligible nor censored (version 2).
    pub removed_before_window: u64,
    /// Eligible tasks with a signal whose status, in task files kept in git, flaps: it left a closed category
    /// [`FLAP_REOPENS`] times or more within a day (stale versions skipped), as statuses written back and forth by a
    /// tool that syncs the file with another tracker do. A diagnostic, not a rule: it changes no count.
    pub flapping: u64,
    /// Eligible tasks without a signal whose would-be signals within the window were all set aside by a rule: what
    /// the rules decide, for [`Sensitivity`].
    pub set_aside_only: u64,
}

impl Counts {
    /// Adds `other`'s counts to these (an input's to the total, a part of an input's tasks to the input's).
    fn add(&mut self, other: &Counts) {
        for (sum, part) in [
            (&mut self.tasks, other.tasks),
            (&mut self.not_completed, other.not_completed),
            (&mut self.completion_unknown, other.completion_unknown),
            (&mut self.censored, other.censored),
            (&mut self.eligible, other.eligible),
            (&mut self.with_signal, other.with_signal),
            (&mut self.wrong, other.wrong),
            (&mut self.right, other.right),
            (&mut self.follow_ups_outside_input, other.follow_ups_outside_input),
            (&mut self.removed, other.removed),
            (&mut self.ids_reused, other.ids_reused),
            (&mut self.removed_before_window, other.removed_before_window),
            (&mut self.flapping, other.flapping),
            (&mut self.set_aside_only, other.set_aside_only),
        ] {
            *sum += part;
        }
    }
}

/// What a run of an input's tasks adds up to: their counts, the would-be signals each exclusion rule set aside
/// (events, and tasks left without a signal), their rows and their evidence, in task order.
#[derive(Default)]
struct TaskTally {
    counts: Counts,
    excluded: BTreeMap<&'static str, (u64, u64)>,
    rows: Vec<TaskRow>,
    evidence: Vec<SignalRow>,
}

impl TaskTally {
    /// `self` then `later`: the sums, and the rows and evidence of both in order.
    fn merge(mut self, mut later: TaskTally) -> TaskTally {
        self.counts.add(&later.counts);
        for (rule, (count, tasks)) in later.excluded {
            let slot = self.excluded.entry(rule).or_default();
            slot.0 += count;
            slot.1 += tasks;
        }
        self.rows.append(&mut later.rows);
        self.evidence.append(&mut later.evidence);
        self
    }
}

/// An artifact left out by a version-2 rule, for the report's examples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    pub task: String,
    /// The commit concerned, abbreviated to 9 hex digits; empty when the input has no commits.
    pub commit: String,
}

/// What one exclusion rule left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Exclusion {
    /// Events that would have been a signal of an eligible task within its window.
    pub count: u64,
    /// Eligible tasks that lost their only signals to this rule and the others.
    pub tasks: u64,
    /// The first few, by input and task id.
    pub examples: Vec<Example>,
}

/// Exclusion rules, with their meaning, in report order.
pub const EXCLUSIONS: [(&str, &str); 5] = [
    (
        "stale-overwrite",
        "a reopen written from an older copy of the task (its update time is older than one seen before)",
    ),
    (
        "bulk-commit",
        "a reopen in a commit that changed the status of more tasks than the pre-registered limit",
    ),
    (
        "reverted",
        "a reopen undone: its commit reverted, or the close restored with its earlier completion time",
    ),
    (
        "implementing-commit",
        "a fix or revert naming the task within the quiet period after its completion (the task's own work)",
    ),
    (
        "split-work",
        "a follow-up created within minutes of the completion by the author of the completing commit",
    ),
];

/// Exclusion rules added by version 3, each present only when its rule is on.
pub const EXCLUSIONS_V3: [(&str, &str); 4] = [
    (
        "stale-carried",
        "a reopen whose previous, not closed status came from a stale version: part of that stale overwrite",
    ),
    (
        "bulk-reopens",
        "a reopen in a commit that changed only the task files and reopened more tasks than the pre-registered limit",
    ),
    (
        "administrative-reclose",
        "a reopen closed again with no commit in between changing anything besides the task files",
    ),
    (
        "passing-mention",
        "a fix or revert that names the task only in its body or right after a passing word (see, refs, …), or \
         outside the time the task held its id",
    ),
];

/// Exclusion rules added by version 4, each present only when its rule is on.
pub const EXCLUSIONS_V4: [(&str, &str); 2] = [
    (
        "stale-reset",
        "a reopen in a commit that also reopens other tasks from an older copy (stale versions): part of that reset",
    ),
    (
        "identity-changed",
        "a signal at a time the task's id named another task, or none, in the task files (an id renumbered or \
         reused and given back)",
    ),
];

/// Exclusion rules added by version 5, each present only when its rule is on.
pub const EXCLUSIONS_V5: [(&str, &str); 1] = [(
    "landed-late",
    "a reopen in a commit committed long after it was authored (rebased or cherry-picked onto the main line later: \
     its task files merge two copies)",
)];

/// Exclusion rules added by version 6, each present only when its rule is on.
pub const EXCLUSIONS_V6: [(&str, &str); 2] = [
    (
        "first-seen-earlier",
        "a follow-up already in the task files before the completion, its creation time rewritten later (an import)",
    ),
    (
        "while-reopened",
        "a follow-up created while the task was open again after a reopen: part of that rework, not a new signal",
    ),
];

/// Exclusion rules added by version 8, each present only when its rule is on.
pub const EXCLUSIONS_V8: [(&str, &str); 1] = [(
    "follow-up-set-aside",
    "a follow-up in task files kept in git that the other rules keep: planned work about as often as a defect found \
     later, so reported and never a signal",
)];

/// Exclusion rules added by version 9, each present only when its rule is on.
pub const EXCLUSIONS_V9: [(&str, &str); 1] = [(
    "claimed-at-close",
    "a reopen written within seconds of the completion it undoes (the version's update time): too soon for the work \
     to have been judged, an agent taking up a task another has just closed",
)];

/// Exclusion rules added by version 10, each present only when its rule is on.
pub const EXCLUSIONS_V10: [(&str, &str); 1] = [(
    "flapping",
    "a reopen that is one of several within a day (the status flapping, as a tool syncing the task file with \
     another tracker writes it)",
)];

/// A task's creation time, the provenance of its first version (task files in git) and when that version was
/// first seen (the earlier of the creation time and the version's commit).
type FirstSeen<'a> = (Option<Timestamp>, Option<&'a Provenance>, Option<Timestamp>);

/// Whether `task`, first completed at `done`, was open again at `at` (after `done`): its last status change at or
/// before `at`, stale versions skipped, is to a category that is not closed.
fn open_again_at(task: &Task, done: Timestamp, at: Timestamp) -> bool {
    let Some(history) = &task.history else {
        return false;
    };
    history
        .iter()
        .filter(|c| c.at > done && c.at <= at)
        .rfind(|c| !c.provenance.as_deref().is_some_and(|p| p.stale))
        .is_some_and(|c| !c.to_category.is_closed())
}

/// Version 7: whether the latest reopen in `(done, at]` that changed the task's status (kept, or set aside by a
/// rule other than `stale-overwrite`, which leaves the status as it was) is one the reopen rules kept. Without any
/// such reopen, as version 6: true.
fn latest_reopen_kept(walk: &Walk, done: Timestamp, at: Timestamp) -> bool {
    let between = |t: Timestamp| t > done && t <= at;
    let kept = walk.reopens.iter().map(|(t, ..)| *t).filter(|t| between(*t)).max();
    let set_aside = walk
        .excluded
        .iter()
        .filter(|(rule, t, _)| *rule != "stale-overwrite" && between(*t))
        .map(|(_, t, _)| *t)
        .max();
    match (kept, set_aside) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(k), Some(s)) => k > s,
    }
}

/// Changes out of a closed category within a day that make a task's status flap (see [`Counts::flapping`]).
pub const FLAP_REOPENS: usize = 3;

/// Whether `task`, rebuilt from task files in git, left a closed category [`FLAP_REOPENS`] times or more within 24
/// hours (stale versions are no change).
fn flaps(task: &Task) -> bool {
    let Some(history) = task
        .history
        .as_deref()
        .filter(|h| h.first().is_some_and(|c| c.provenance.is_some()))
    else {
        return false;
    };
    !flapping_spans(&raw_reopens(history), FLAP_REOPENS).is_empty()
}

/// The times `history` left a closed category, stale versions skipped (they are no change), sorted.
fn raw_reopens(history: &[StatusChange]) -> Vec<Timestamp> {
    let mut closed = false;
    let mut reopens: Vec<Timestamp> = Vec::new();
    for (i, change) in history.iter().enumerate() {
        if change.provenance.as_deref().is_some_and(|p| p.stale) {
            continue;
        }
        if i > 0 && closed && !change.to_category.is_closed() {
            reopens.push(change.at);
        }
        closed = change.to_category.is_closed();
    }
    reopens.sort_unstable();
    reopens
}

/// Version 10: the spans of 24 hours, each starting at a reopen, that hold at least `least` of `reopens` (sorted),
/// merged where they overlap. A reopen inside one is one of at least `least` within a day. Built in one pass, so a
/// task a sync tool flipped thousands of times costs no more than its list of reopens.
fn flapping_spans(reopens: &[Timestamp], least: usize) -> Vec<(Timestamp, Timestamp)> {
    let day = SignedDuration::from_hours(24);
    let mut spans: Vec<(Timestamp, Timestamp)> = Vec::new();
    let mut end = 0;
    for (i, &start) in reopens.iter().enumerate() {
        let limit = start.checked_add(day).unwrap_or(Timestamp::MAX);
        end = end.max(i);
        while end < reopens.len() && reopens[end] <= limit {
            end += 1;
        }
        if end - i < least {
            continue;
        }
        match spans.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(limit),
            _ => spans.push((start, limit)),
        }
    }
    spans
}

/// Whether `at` lies in one of `spans` (disjoint, in order).
fn in_spans(spans: &[(Timestamp, Timestamp)], at: Timestamp) -> bool {
    let after = spans.partition_point(|(start, _)| *start <= at);
    after > 0 && at <= spans[after - 1].1
}

/// Examples kept per exclusion rule.
const EXAMPLES_PER_RULE: usize = 5;

/// One input's part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputSummary {
    pub path: String,
    pub format: String,
    pub format_reason: Option<String>,
    pub counts: Counts,
    pub base_rate: Option<Interval>,
    /// Signal ids this input's format cannot show.
    pub unobservable: Vec<&'static str>,
    /// What the format cannot show at all (the adapter's capabilities).
    pub missing_capabilities: Vec<&'static str>,
    pub notes: Vec<String>,
}

/// One completed task and its signals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    pub input: usize,
    pub id: String,
    pub completed: String,
    pub censored: bool,
    pub signals: Vec<&'static str>,
}

/// The evidence of one signal, counted or left out by a rule: a line of `p3-signals.csv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignalRow {
    pub input: usize,
    pub task: String,
    pub signal: &'static str,
    /// When the evidence happened (the reopen, the follow-up's creation, the commit).
    pub at: String,
    /// The commit that shows it (full hex), when there is one.
    pub commit: String,
    /// `None`: counted; otherwise the exclusion rule that left it out.
    pub excluded_by: Option<&'static str>,
    /// The task's first completion, and what else identifies the evidence (a follow-up's id, a status, a commit's
    /// subject).
    pub completed: String,
    pub detail: String,
}

/// The P3 verdict (eligible tasks are its `n`).
pub type Verdict = super::ShareVerdict;

/// The body of `p3.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P3Analysis {
    pub kill_rule: String,
    pub threshold: f64,
    pub window_days: u32,
    pub as_of: Option<String>,
    pub counts: Counts,
    pub base_rate: Option<Interval>,
    /// Eligible tasks carrying each signal (a task may carry several).
    pub by_signal: BTreeMap<&'static str, u64>,
    /// Version 2: what each exclusion rule left out (empty under version 1).
    pub exclusions: BTreeMap<&'static str, Exclusion>,
    pub inputs: Vec<InputSummary>,
    /// Signals some input could not show, and the major ones among them.
    pub unobservable: Vec<&'static str>,
    pub major_unobservable: Vec<&'static str>,
    pub signals: BTreeMap<&'static str, &'static str>,
    pub verdict: Verdict,
    /// How far the verdict rests on the exclusion rules and on the signals counted (only when a rule set something
    /// aside).
    pub sensitivity: Option<Sensitivity>,
    /// Every completed task (eligible or censored), by input then id: written to `p3-tasks.csv`, not to the JSON
    /// (a million-task export would make a report nobody opens).
    #[serde(skip)]
    pub tasks: Vec<TaskRow>,
    /// The evidence of every signal of an eligible task within its window, counted or excluded, by input, task,
    /// time: written to `p3-signals.csv`.
    #[serde(skip)]
    pub evidence: Vec<SignalRow>,
}

/// The first time `task` entered Done, if known.
fn first_completion(task: &Task) -> Option<Timestamp> {
    let from_history = task
        .history
        .iter()
        .flatten()
        .filter(|change| change.to_category == StatusCategory::Done)
        .map(|change| change.at)
        .min();
    from_history.or(if task.is_done() { task.completed } else { None })
}

fn lower_set(values: &[String]) -> BTreeSet<String> {
    values.iter().map(|v| v.trim().to_ascii_lowercase()).collect()
}

/// Task ids (lower-case) named by remedy commits, with each commit's time and id, and whether its subject line
/// names the id other than right after a passing word: the input of `wrong.commit`.
pub type CommitMentions = BTreeMap<String, Vec<Mention>>;

/// A remedy commit naming a task id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mention {
    /// Its committer time (when it reached the history walked), the signal's time.
    pub at: Timestamp,
    /// Its id (full hex).
    pub commit: String,
    /// The subject names the id, not in passing.
    pub in_subject: bool,
    /// Its author time (version 5 measures the quiet period to the earlier of the two).
    pub authored: Timestamp,
    /// Its subject, as written: the signal's detail, so a reader of `p3-signals.csv` or an audit sheet sees what the
    /// commit says without looking it up.
    pub subject: String,
}

/// Whether `subject` names `id` (lower case) as a token not right after one of `passing` (lower case).
fn subject_names(subject: &str, id: &str, passing: &BTreeSet<String>) -> bool {
    let tokens: Vec<&str> = subject
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '#' | '-' | '_' | '.')))
        .map(|token| token.trim_end_matches(['.', '-']))
        .filter(|token| !token.is_empty())
        .collect();
    tokens
        .iter()
        .enumerate()
        .any(|(i, token)| *token == id && (i == 0 || !passing.contains(tokens[i - 1])))
}

/// The task ids of `boards` that each remedy commit's message names (see `wrong.commit`); `passing` are the
/// words after which a subject's mention is in passing.
pub fn commit_mentions(
    remedies: &[&crate::scan::commits::CommitRow],
    boards: &[Board],
    passing: &[String],
) -> CommitMentions {
    let passing = lower_set(passing);
    let ids: BTreeSet<String> = boards
        .iter()
        .flat_map(|b| b.tasks.iter().map(|t| t.id.to_ascii_lowercase()))
        .collect();
    let mut mentions = CommitMentions::new();
    for row in remedies {
        let Ok(at) = Timestamp::from_second(row.commit_time) else {
            continue;
        };
        let authored = Timestamp::from_second(row.author_time).unwrap_or(at);
        let message = format!("{}\n{}", row.subject, row.body).to_ascii_lowercase();
        let named: BTreeSet<&str> = message
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '#' | '-' | '_' | '.')))
            .map(|token| token.trim_end_matches(['.', '-']))
            .filter(|token| ids.contains(*token))
            .collect();
        let subject = row.subject.to_ascii_lowercase();
        for id in named {
            let in_subject = subject_names(&subject, id, &passing);
            mentions.entry(id.to_string()).or_default().push(Mention {
                at,
                commit: row.id.to_string(),
                in_subject,
                authored,
                subject: row.subject.to_string(),
            });
        }
    }
    for commits in mentions.values_mut() {
        commits.sort();
    }
    mentions
}

/// A task's history read under the version-2 rules: what is left of it once the artifacts are set aside.
#[derive(Debug, Default)]
struct Walk<'a> {
    /// The first completion among the changes kept, and the change (for its commit's author).
    completion: Option<(Timestamp, Option<&'a Provenance>)>,
    /// Reopens kept: time, commit, the readable version that shows it, and the detail `p3-signals.csv` gives it.
    reopens: Vec<(Timestamp, String, u64, String)>,
    /// Reopens set aside: rule, time, commit.
    excluded: Vec<(&'static str, Timestamp, String)>,
    /// Changes kept into a verified status: time, status, commit.
    verified: Vec<(Timestamp, String, String)>,
    /// The first change into a deleted status, when the task is in one now.
    deleted_at: Option<Timestamp>,
}

/// Reads `history` (every change with a provenance) under `rules`; see the module documentation.
fn walk<'a>(
    history: &'a [StatusChange],
    rules: &P3History,
    deleted: &BTreeSet<String>,
    verified: &BTreeSet<String>,
) -> Walk<'a> {
    let mut out = Walk::default();
    let Some(first) = history.first() else {
        return out;
    };
    let commit = |c: &StatusChange| c.provenance.as_ref().map(|p| p.commit.clone()).unwrap_or_default();
    let stale = |c: &StatusChange| rules.stale_overwrites && c.provenance.as_ref().is_some_and(|p| p.stale);
    let mut state = first.to_category;
    if state == StatusCategory::Done {
        out.completion = Some((first.at, first.provenance.as_deref()));
    }
    let is_deleted = |c: &StatusChange| deleted.contains(&c.to.trim().to_ascii_lowercase());
    if is_deleted(first) {
        out.deleted_at = Some(first.at);
    }
    // A reopen set aside by a rule that leaves the status closed (`bulk-commit`, `bulk-reopens`,
    // `administrative-reclose`, `reverted`): the next move out of a closed status is counted as the reopen (often
    // an agent taking the task up), and its row names the set-aside one so a reader finds where it began.
    let mut set_aside_open: Option<(&'static str, String)> = None;
    let flapping = rules
        .flapping_reopens_at_least
        .map(|least| flapping_spans(&raw_reopens(history), least as usize))
        .unwrap_or_default();
    for (i, change) in history.iter().enumerate().skip(1) {
        if stale(change) {
            if state.is_closed() && !change.to_category.is_closed() {
                out.excluded.push(("stale-overwrite", change.at, commit(change)));
            }
            continue;
        }
        if change.to_category.is_closed() {
            set_aside_open = None;
        }
        let provenance = change.provenance.as_deref();
        let bulk = provenance.is_some_and(|p| p.status_changes_in_commit > rules.bulk_status_changes_above);
        if state.is_closed() && !change.to_category.is_closed() {
            if bulk {
                out.excluded.push(("bulk-commit", change.at, commit(change)));
                set_aside_open = Some(("bulk-commit", commit(change)));
                continue;
            }
            // Version 3: the not-closed status this change starts from came from a stale version just skipped.
            let previous = &history[i - 1];
            if rules.stale_carried_forward && stale(previous) && !previous.to_category.is_closed() {
                out.excluded.push(("stale-carried", change.at, commit(change)));
                state = change.to_category;
                continue;
            }
            if let (Some(limit), Some(p)) = (rules.bulk_reopens_above, provenance)
                && p.reopens_in_commit > limit
                && !p.touches_other_files
            {
                out.excluded.push(("bulk-reopens", change.at, commit(change)));
                set_aside_open = Some(("bulk-reopens", commit(change)));
                continue;
            }
            if rules.administrative_recloses
                && let Some(p) = provenance
                && let Some(close) = history[i + 1..]
                    .iter()
                    .filter(|c| !stale(c))
                    .find(|c| c.to_category.is_closed())
                    .and_then(|c| c.provenance.as_deref())
                && close.other_file_commits == p.other_file_commits - u64::from(p.touches_other_files)
            {
                out.excluded.push(("administrative-reclose", change.at, commit(change)));
                set_aside_open = Some(("administrative-reclose", commit(change)));
                continue;
            }
            // Undone: the commit is reverted, or the next close (changes kept) restores the earlier completion.
            let restored = || {
                history[i + 1..]
                    .iter()
                    .filter(|c| !stale(c))
                    .find(|c| c.to_category.is_closed())
                    .and_then(|c| c.provenance.as_ref())
                    .is_some_and(|p| p.restores_completion)
            };
            if rules.undone_reopens && (provenance.is_some_and(|p| p.reverted_by.is_some()) || restored()) {
                out.excluded.push(("reverted", change.at, commit(change)));
                set_aside_open = Some(("reverted", commit(change)));
                continue;
            }
            // Version 4: the same commit reopens other tasks from an older copy.
            if let (Some(least), Some(p)) = (rules.stale_resets_at_least, provenance)
                && p.stale_reopens_in_commit >= least
            {
                out.excluded.push(("stale-reset", change.at, commit(change)));
                // As for a carried stale overwrite: the task is open now, without a reopen.
                state = change.to_category;
                continue;
            }
            // Version 5: the commit reached the main line long after it was written (a rebase, a cherry-pick).
            if let (Some(hours), Some(p)) = (rules.landed_late_hours, provenance)
                && change.at.duration_since(p.authored) > SignedDuration::from_hours(i64::from(hours))
            {
                out.excluded.push(("landed-late", change.at, commit(change)));
                // Its task files merged two copies: the task is open now, without a reopen.
                state = change.to_category;
                continue;
            }
            // Version 9: taken up again seconds after the close, before anyone could have judged the work.
            if let (Some(seconds), Some(after)) = (
                rules.claimed_within_seconds_of_close,
                provenance.and_then(|p| p.updated_after_completion),
            ) && after <= i64::from(seconds)
            {
                out.excluded.push(("claimed-at-close", change.at, commit(change)));
                // The task is taken up (open) now, without a reopen: moving on from the claim is no reopen either.
                state = change.to_category;
                continue;
            }
            // Version 10: one of several reopens within a day, as a tool syncing the file writes them.
            if in_spans(&flapping, change.at) {
                out.excluded.push(("flapping", change.at, commit(change)));
                state = change.to_category;
                continue;
            }
            let detail = set_aside_open
                .take()
                .map(|(rule, commit)| format!("after a reopen set aside ({rule}) in {}", short_id(&commit)))
                .unwrap_or_default();
            out.reopens
                .push((change.at, commit(change), provenance.map_or(0, |p| p.version), detail));
        } else if change.to_category == StatusCategory::Done && out.completion.is_none() {
            out.completion = Some((change.at, provenance));
        }
        if !bulk && verified.contains(&change.to.trim().to_ascii_lowercase()) {
            out.verified.push((change.at, change.to.clone(), commit(change)));
        }
        if is_deleted(change) && out.deleted_at.is_none() {
            out.deleted_at = Some(change.at);
        }
        state = change.to_category;
    }
    if !history.last().is_some_and(is_deleted) {
        out.deleted_at = None;
    }
    out
}

/// Where a signal's task set is read: a readable version of the history, or the newest one by a time.
#[derive(Debug, Clone, Copy)]
enum Lookup {
    Version(u64),
    Time(Timestamp),
}

fn stamp(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Analyses every input under `spec`; `as_of` defaults to the newest instant in any input.
pub fn analyze(boards: &[Board], spec: &P3Spec, as_of: Option<Timestamp>) -> P3Analysis {
    analyze_with_commits(boards, spec, as_of, None)
}

/// [`analyze`], with the remedy commits of a repository for `wrong.commit`.
pub fn analyze_with_commits(
    boards: &[Board],
    spec: &P3Spec,
    as_of: Option<Timestamp>,
    commits: Option<&CommitMentions>,
) -> P3Analysis {
    let as_of = as_of.or_else(|| boards.iter().filter_map(Board::newest_timestamp).max());
    let window = SignedDuration::from_hours(24 * i64::from(spec.window_days));
    let follow_up_kinds = lower_set(&spec.signals.follow_up_links);
    let bug_types = lower_set(&spec.signals.bug_types);
    let verified = lower_set(&spec.signals.verified_statuses);
    let rules = spec.history.as_ref();
    let deleted_statuses = rules.map(|r| lower_set(&r.deleted_statuses)).unwrap_or_default();
    let quiet = SignedDuration::from_hours(rules.map_or(0, |r| i64::from(r.commit_quiet_hours)));
    let split = SignedDuration::from_mins(rules.map_or(0, |r| i64::from(r.split_work_minutes)));
    let quiet_from_author = rules.is_some_and(|r| r.commit_quiet_from_author);
    let z = stats::z_two_sided(spec.alpha).unwrap_or(1.959_963_984_540_054);

    let mut total = Counts::default();
    // Every pre-registered signal, 0 until the group-by below counts it.
    let mut by_signal: BTreeMap<&'static str, u64> = SIGNALS.iter().map(|(id, _)| (*id, 0)).collect();
    let mut exclusions: BTreeMap<&'static str, Exclusion> = match rules {
        Some(r) => EXCLUSIONS
            .iter()
            .chain(EXCLUSIONS_V3.iter().filter(|(id, _)| match *id {
                "stale-carried" => r.stale_carried_forward,
                "bulk-reopens" => r.bulk_reopens_above.is_some(),
                "administrative-reclose" => r.administrative_recloses,
                _ => r.commit_subject_only,
            }))
            .chain(EXCLUSIONS_V4.iter().filter(|(id, _)| match *id {
                "stale-reset" => r.stale_resets_at_least.is_some(),
                _ => r.identity_at_signal,
            }))
            .chain(EXCLUSIONS_V5.iter().filter(|_| r.landed_late_hours.is_some()))
            .chain(EXCLUSIONS_V6.iter().filter(|(id, _)| match *id {
                "first-seen-earlier" => r.follow_ups_first_seen,
                _ => r.follow_ups_while_reopened,
            }))
            .chain(EXCLUSIONS_V8.iter().filter(|_| r.follow_ups_set_aside))
            .chain(
                EXCLUSIONS_V9
                    .iter()
                    .filter(|_| r.claimed_within_seconds_of_close.is_some()),
            )
            .chain(EXCLUSIONS_V10.iter().filter(|_| r.flapping_reopens_at_least.is_some()))
            .map(|(id, _)| (*id, Exclusion::default()))
            .collect(),
        None => BTreeMap::new(),
    };
    let subject_only = rules.is_some_and(|r| r.commit_subject_only);
    let identity_rule = rules.is_some_and(|r| r.identity_at_signal);
    let first_seen_rule = rules.is_some_and(|r| r.follow_ups_first_seen);
    let while_reopened_rule = rules.is_some_and(|r| r.follow_ups_while_reopened);
    let needs_kept_reopen = rules.is_some_and(|r| r.while_reopened_needs_kept_reopen);
    let set_aside_follow_ups = rules.is_some_and(|r| r.follow_ups_set_aside);
    let identity = crate::scan::task_history::IdentityRule {
        title_overlap_below: rules.and_then(|r| r.reuse_title_overlap_below),
        created_apart_seconds: rules.and_then(|r| r.reuse_created_apart_seconds),
    };
    let mut inputs = Vec::with_capacity(boards.len());
    let mut rows = Vec::new();
    let mut evidence = Vec::new();
    let mut unobservable: BTreeSet<&'static str> = BTreeSet::new();
    for (index, board) in boards.iter().enumerate() {
        // Follow-ups of each task, from either side of the link, and bugs linked in any way.
        let mut follow_ups: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for task in &board.tasks {
            // A type, or a label where the tool has no types (Linear, GitHub).
            let is_bug = task
                .kind
                .iter()
                .chain(&task.labels)
                .any(|name| bug_types.contains(&name.trim().to_ascii_lowercase()));
            for link in &task.links {
                // Outward: "this task causes / regresses into / spawned the target"; inward: the other way.
                let (origin, follow_up) = if follow_up_kinds.contains(link.kind.as_str()) {
                    match link.direction {
                        LinkDirection::Outward => (task.id.as_str(), link.target.as_str()),
                        LinkDirection::Inward => (link.target.as_str(), task.id.as_str()),
                    }
                } else if is_bug {
                    (link.target.as_str(), task.id.as_str())
                } else {
                    continue;
                };
                follow_ups.entry(origin).or_default().insert(follow_up);
            }
        }
        // Creation time of each task, and the commit and author that first held it (task files in git).
        // Version 6: and the time of its first version (the earlier of its creation time and that version's commit).
        let created: BTreeMap<&str, FirstSeen<'_>> = board
            .tasks
            .iter()
            .map(|t| {
                let first_change = t.history.as_ref().and_then(|h| h.first());
                let first = first_change.and_then(|c| c.provenance.as_deref());
                let first_seen = first_change.filter(|c| c.provenance.is_some()).map(|c| c.at);
                (t.id.as_str(), (t.created, first, first_seen))
            })
            .collect();

        // One task's part of the input's tallies. The tasks are independent, so a million of them are tallied on
        // every core and the parts merged in task order (the same report on any number of threads).
        let tally_task = |part: &mut TaskTally, task: &Task| {
            let counts = &mut part.counts;
            counts.tasks += 1;
            if let Some(removal) = &task.removed {
                counts.removed += 1;
                counts.ids_reused += u64::from(removal.reason == crate::scan::board::RemovalReason::IdReused);
            }
            // Version 2 on a history rebuilt from git: the walk under the rules.
            let walked = match (rules, &task.history) {
                (Some(rules), Some(history)) if history.first().is_some_and(|c| c.provenance.is_some()) => {
                    Some(walk(history, rules, &deleted_statuses, &verified))
                }
                _ => None,
            };
            if walked.as_ref().is_some_and(|w| w.deleted_at.is_some()) && task.removed.is_none() {
                counts.removed += 1;
            }
            let completion = match &walked {
                Some(w) => w.completion.map(|(at, _)| at).or_else(|| first_completion(task)),
                None => first_completion(task),
            };
            let Some(done) = completion else {
                if task.is_done() {
                    counts.completion_unknown += 1;
                } else {
                    counts.not_completed += 1;
                }
                return;
            };
            let end = done.saturating_add(window).unwrap_or(Timestamp::MAX);
            let in_window = |at: Timestamp| at >= done && at <= end;
            // Version 2: a task that left the file counts only if its window elapsed while it existed.
            let ended = walked.as_ref().and_then(|w| {
                let removed = task.removed.as_ref().map(|r| r.at);
                match (removed, w.deleted_at) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            });
            let censored = as_of.is_none_or(|as_of| end > as_of);
            if !censored && ended.is_some_and(|ended| end > ended) {
                counts.removed_before_window += 1;
                return;
            }
            let completed_text = stamp(done);
            let mut signals: Vec<&'static str> = Vec::new();
            let mut found: Vec<SignalRow> = Vec::new();
            // Where to look up the task set of each wrong signal (version 4): the row, its version or time.
            let mut lookups: Vec<(usize, Lookup)> = Vec::new();
            let row = |signal: &'static str, at: Timestamp, commit: &str, excluded_by, detail: String| SignalRow {
                input: index,
                task: task.id.clone(),
                signal,
                at: stamp(at),
                commit: commit.to_owned(),
                excluded_by,
                completed: completed_text.clone(),
                detail,
            };
            match &walked {
                Some(w) => {
                    for (at, commit, version, detail) in w.reopens.iter().filter(|(at, ..)| in_window(*at)) {
                        lookups.push((found.len(), Lookup::Version(*version)));
                        found.push(row("wrong.reopened", *at, commit, None, detail.clone()));
                    }
                    for (rule, at, commit) in w.excluded.iter().filter(|(_, at, _)| in_window(*at)) {
                        found.push(row("wrong.reopened", *at, commit, Some(*rule), String::new()));
                    }
                }
                None => {
                    // Without a history the reported completion may be a re-completion: a reopen recorded before
                    // it followed an earlier completion whose date is unknown, so it counts within a window
                    // either side.
                    let reopen_counts = |at: Timestamp| {
                        in_window(at) || (task.history.is_none() && at < done && done.duration_since(at) <= window)
                    };
                    for &at in task.reopened_at.iter().filter(|&&at| reopen_counts(at)) {
                        found.push(row("wrong.reopened", at, "", None, String::new()));
                    }
                }
            }
            let completer = walked
                .as_ref()
                .and_then(|w| w.completion)
                .and_then(|(_, p)| p)
                .map(|p| p.author.as_str());
            for id in follow_ups.get(task.id.as_str()).into_iter().flatten() {
                match created.get(id) {
                    Some((Some(at), first, first_seen)) if in_window(*at) => {
                        let commit = first.map(|p| p.commit.as_str()).unwrap_or_default();
                        let split_work = rules.is_some()
                            && at.duration_since(done) <= split
                            && completer.is_some_and(|author| first.is_some_and(|p| p.author == author));
                        // Version 6: in the task files before the completion (its creation time rewritten later).
                        let earlier = first_seen_rule && first_seen.is_some_and(|seen| seen < done);
                        // Version 6: created while the task was open again after a reopen.
                        let reopened = while_reopened_rule
                            && open_again_at(task, done, *at)
                            && (!needs_kept_reopen || walked.as_ref().is_none_or(|w| latest_reopen_kept(w, done, *at)));
                        let excluded_by = if split_work {
                            Some("split-work")
                        } else if earlier {
                            Some("first-seen-earlier")
                        } else if reopened {
                            Some("while-reopened")
                        } else {
                            None
                        };
                        if let Some(p) = first {
                            lookups.push((found.len(), Lookup::Version(p.version)));
                        }
                        found.push(row(
                            "wrong.follow-up",
                            *at,
                            commit,
                            excluded_by,
                            format!("follow-up {id}"),
                        ));
                    }
                    Some(_) => {}
                    None => counts.follow_ups_outside_input += 1,
                }
            }
            match task.outcome {
                Some(outcome) if outcome.is_right() => {
                    found.push(row(
                        "right.explicit",
                        done,
                        "",
                        None,
                        format!("{outcome:?}").to_lowercase(),
                    ));
                }
                Some(outcome) => {
                    found.push(row(
                        "wrong.explicit",
                        done,
                        "",
                        None,
                        format!("{outcome:?}").to_lowercase(),
                    ));
                }
                None => {}
            }
            match (&walked, &task.history) {
                (Some(w), _) => {
                    for (at, status, commit) in w.verified.iter().filter(|(at, ..)| in_window(*at)) {
                        found.push(row("right.verified-status", *at, commit, None, status.clone()));
                    }
                }
                (None, Some(history)) => {
                    if let Some(c) = history
                        .iter()
                        .find(|c| in_window(c.at) && verified.contains(&c.to.trim().to_ascii_lowercase()))
                    {
                        let commit = c.provenance.as_ref().map(|p| p.commit.clone()).unwrap_or_default();
                        found.push(row("right.verified-status", c.at, &commit, None, c.to.clone()));
                    }
                }
                (None, None) => {
                    if verified.contains(&task.status.trim().to_ascii_lowercase()) {
                        found.push(row("right.verified-status", done, "", None, task.status.clone()));
                    }
                }
            }
            if let Some(times) = commits.and_then(|c| c.get(&task.id.to_ascii_lowercase())) {
                for Mention {
                    at,
                    commit,
                    in_subject,
                    authored,
                    subject,
                } in times.iter().filter(|m| in_window(m.at))
                {
                    // Version 5: a commit authored inside the quiet period and landed later is still own work.
                    let from = if quiet_from_author { (*at).min(*authored) } else { *at };
                    let own_work = rules.is_some() && from.duration_since(done) < quiet;
                    // Version 3: named in the subject, not in passing, while the task held the id.
                    let held = task.created.is_none_or(|c| *at >= c) && ended.is_none_or(|e| *at < e);
                    let passing = subject_only && !(*in_subject && held);
                    let excluded_by = if own_work {
                        Some("implementing-commit")
                    } else if passing {
                        Some("passing-mention")
                    } else {
                        None
                    };
                    lookups.push((found.len(), Lookup::Time(*at)));
                    found.push(row("wrong.commit", *at, commit, excluded_by, subject.clone()));
                }
            }
            // Version 4: the id must name, at the signal, the task it named at the completion.
            if let Some(timeline) = task.identities.as_deref().filter(|_| identity_rule) {
                let at_completion = match walked.as_ref().and_then(|w| w.completion) {
                    Some((_, Some(p))) => timeline.at_version(p.version),
                    _ => timeline.at_time(done),
                }
                .or(timeline.marks.first())
                .and_then(|m| m.identity.as_ref());
                if let Some(completed_as) = at_completion {
                    for (i, lookup) in &lookups {
                        let mark = match lookup {
                            Lookup::Version(v) => timeline.at_version(*v),
                            Lookup::Time(t) => timeline.at_time(*t),
                        };
                        let same = mark.and_then(|m| m.identity.as_ref()).is_some_and(|(title, created)| {
                            !crate::scan::task_history::another_task(completed_as, title, *created, identity)
                        });
                        if !same && found[*i].excluded_by.is_none() {
                            found[*i].excluded_by = Some("identity-changed");
                        }
                    }
                }
            }
            // Version 8: after every other rule (so their tallies stay as in version 7), a follow-up still kept in a
            // history rebuilt from git is reported, never counted.
            if set_aside_follow_ups && walked.is_some() {
                for row in found
                    .iter_mut()
                    .filter(|e| e.signal == "wrong.follow-up" && e.excluded_by.is_none())
                {
                    row.excluded_by = Some("follow-up-set-aside");
                }
            }
            for evidence in found.iter().filter(|e| e.excluded_by.is_none()) {
                if !signals.contains(&evidence.signal) {
                    signals.push(evidence.signal);
                }
            }
            signals.sort_unstable();
            if censored {
                counts.censored += 1;
            } else {
                counts.eligible += 1;
                if !signals.is_empty() {
                    counts.with_signal += 1;
                    counts.flapping += u64::from(flaps(task));
                }
                counts.wrong += u64::from(signals.iter().any(|s| s.starts_with("wrong.")));
                counts.right += u64::from(signals.iter().any(|s| s.starts_with("right.")));
                let mut lost: BTreeSet<&'static str> = BTreeSet::new();
                for rule in found.iter().filter_map(|e| e.excluded_by) {
                    part.excluded.entry(rule).or_default().0 += 1;
                    lost.insert(rule);
                }
                if signals.is_empty() {
                    counts.set_aside_only += u64::from(!lost.is_empty());
                    for rule in lost {
                        part.excluded.entry(rule).or_default().1 += 1;
                    }
                }
                part.evidence.extend(found);
            }
            part.rows.push(TaskRow {
                input: index,
                id: task.id.clone(),
                completed: completed_text.clone(),
                censored,
                signals,
            });
        };
        let TaskTally {
            counts,
            excluded,
            rows: mut task_rows,
            evidence: mut task_evidence,
        } = board
            .tasks
            .par_iter()
            .fold(TaskTally::default, |mut part, task| {
                tally_task(&mut part, task);
                part
            })
            .reduce(TaskTally::default, TaskTally::merge);
        // Rules that are off in this version are not in the report.
        for (rule, (count, tasks)) in excluded {
            if let Some(exclusion) = exclusions.get_mut(rule) {
                exclusion.count += count;
                exclusion.tasks += tasks;
            }
        }
        task_rows.par_sort_by(|a, b| a.id.cmp(&b.id));
        rows.extend(task_rows);
        task_evidence
            .par_sort_by(|a, b| (&a.task, &a.at, a.signal, &a.commit).cmp(&(&b.task, &b.at, b.signal, &b.commit)));
        for e in &task_evidence {
            if let Some(rule) = e.excluded_by
                && let Some(exclusion) = exclusions.get_mut(rule)
                && exclusion.examples.len() < EXAMPLES_PER_RULE
            {
                exclusion.examples.push(Example {
                    task: e.task.clone(),
                    commit: e.commit.chars().take(9).collect(),
                });
            }
        }
        evidence.extend(task_evidence);
        let cannot: Vec<&'static str> = SIGNALS
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| !observable(board, id, commits.is_some()))
            .collect();
        unobservable.extend(cannot.iter().copied());
        inputs.push(InputSummary {
            path: board.path.display().to_string(),
            format: serde_json::to_value(board.format)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            format_reason: board.format_reason.clone(),
            base_rate: stats::wilson(counts.with_signal, counts.eligible, z).ok().flatten(),
            counts: counts.clone(),
            unobservable: cannot,
            missing_capabilities: board.capabilities.missing(),
            notes: board.notes.clone(),
        });
        total.add(&counts);
    }
    let major_unobservable: Vec<&'static str> = unobservable
        .iter()
        .copied()
        .filter(|id| spec.signals.major.iter().any(|m| m == id))
        .collect();
    // The eligible tasks per signal: a polars group-by over the task rows (`frames`). The frame is built here from
    // typed rows, so an error is a bug of this crate, never a property of the input.
    let grouped = super::frames::eligible_tasks_by_signal(&rows)
        .unwrap_or_else(|error| panic!("grouping the P3 task rows by signal: {error}"));
    for (signal, count) in grouped {
        if let Some(slot) = by_signal.get_mut(signal.as_str()) {
            *slot = count;
        }
    }
    let base_rate = stats::wilson(total.with_signal, total.eligible, z).ok().flatten();
    let verdict = decide(
        total.with_signal,
        total.eligible,
        total.flapping,
        &major_unobservable,
        spec,
    );
    let sensitivity =
        (!exclusions.is_empty()).then(|| sensitivity(total.with_signal, total.set_aside_only, total.eligible, spec));
    P3Analysis {
        kill_rule: spec.kill.text.clone(),
        threshold: spec.kill.base_rate_below,
        window_days: spec.window_days,
        as_of: as_of.map(stamp),
        counts: total,
        base_rate,
        by_signal,
        exclusions,
        inputs,
        unobservable: unobservable.into_iter().collect(),
        major_unobservable,
        signals: SIGNALS.iter().copied().collect(),
        verdict,
        sensitivity,
        tasks: rows,
        evidence,
    }
}

/// How far a verdict rests on what the rules decided, for the reader who will check them: a rule that sets a genuine
/// signal aside can only lower the base rate, and a counted signal that is an artifact can only raise it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sensitivity {
    /// Eligible tasks without a signal whose would-be signals were all set aside ([`Counts::set_aside_only`]).
    pub set_aside_only: u64,
    /// The most of them that could be genuine with the verdict unchanged (all of them when it holds regardless).
    pub set_aside_tolerated: u64,
    /// The verdict if every one of them counted.
    pub if_all_set_aside_counted: VerdictKind,
    /// The most of the tasks with a signal that could be artifacts with the verdict unchanged.
    pub counted_tolerated: u64,
    /// The verdict if none of them counted.
    pub if_none_counted: VerdictKind,
}

/// The verdict's kind for `with_signal` of `eligible` tasks.
fn verdict_kind(with_signal: u64, eligible: u64, spec: &P3Spec) -> VerdictKind {
    decide(with_signal, eligible, 0, &[], spec).kind
}

/// [`Sensitivity`] of the verdict on `with_signal` of `eligible` tasks, `set_aside_only` more having only set-aside
/// signals. The verdict is monotone in the count (KILL, then INCONCLUSIVE, then PASS as it grows), so the tolerances
/// are found by bisection.
fn sensitivity(with_signal: u64, set_aside_only: u64, eligible: u64, spec: &P3Spec) -> Sensitivity {
    let now = verdict_kind(with_signal, eligible, spec);
    // The largest step in 0..=limit for which `holds(step)`, given holds(0).
    let largest = |limit: u64, holds: &dyn Fn(u64) -> bool| {
        let (mut lo, mut hi) = (0, limit);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if holds(mid) { lo = mid } else { hi = mid - 1 }
        }
        lo
    };
    Sensitivity {
        set_aside_only,
        set_aside_tolerated: largest(set_aside_only, &|g| {
            verdict_kind(with_signal + g, eligible, spec) == now
        }),
        if_all_set_aside_counted: verdict_kind(with_signal + set_aside_only, eligible, spec),
        counted_tolerated: largest(with_signal, &|d| verdict_kind(with_signal - d, eligible, spec) == now),
        if_none_counted: verdict_kind(0, eligible, spec),
    }
}

/// The pre-registered verdict for `with_signal` of `eligible` tasks, its reason carrying the caveats of the module
/// documentation (a major signal unobservable, most signals on tasks that flap).
pub fn decide(with_signal: u64, eligible: u64, flapping: u64, major_unobservable: &[&str], spec: &P3Spec) -> Verdict {
    let mut verdict = super::decide_share(
        with_signal,
        eligible,
        &super::ShareRule {
            statistic: "detectable-outcome base rate",
            unit: "eligible tasks",
            below: spec.kill.base_rate_below,
            min_n: spec.kill.min_eligible,
            alpha: spec.alpha,
        },
    );
    if verdict.kind == VerdictKind::Kill && !major_unobservable.is_empty() {
        verdict.reasons[0].push_str(&format!(
            " — but the input could not show {}, so the rate may reflect the export format rather than the work",
            major_unobservable.join(", ")
        ));
    }
    // Not a rule (no count changes): a warning where most of what the rate rests on looks like a sync tool's writes.
    if verdict.kind != VerdictKind::Kill && flapping > 0 && 2 * flapping >= with_signal {
        verdict.reasons[0].push_str(&format!(
            " — but {flapping} of the {with_signal} tasks with a signal flap (their status left a closed category \
             {FLAP_REOPENS} times or more within a day), as statuses a tool syncs with another tracker do: read \
             p3-signals.csv before trusting it"
        ));
    }
    verdict
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// The spans give what the rule says, reopen by reopen: one of at least `least` reopens in a day starting at
    /// one of them (checked against that definition on pseudo-random lists, bursts and lone reopens mixed).
    #[test]
    fn flapping_spans_match_the_rule_as_written() {
        let day = SignedDuration::from_hours(24);
        let naive = |reopens: &[Timestamp], at: Timestamp, least: usize| {
            reopens.iter().any(|&start| {
                start <= at
                    && at.duration_since(start) <= day
                    && reopens
                        .iter()
                        .filter(|&&t| t >= start && t.duration_since(start) <= day)
                        .count()
                        >= least
            })
        };
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20261128);
        for _ in 0..300 {
            let n = rng.random_range(0..12);
            let mut t = Timestamp::from_second(1_700_000_000).unwrap();
            let mut reopens = Vec::new();
            for _ in 0..n {
                // Minutes to days apart, and now and then exactly a day.
                let gap: i64 = match rng.random_range(0..4) {
                    0 => 86_400,
                    1 => rng.random_range(0..600),
                    2 => rng.random_range(0..40_000),
                    _ => rng.random_range(0..300_000),
                };
                t = t.checked_add(SignedDuration::from_secs(gap)).unwrap();
                reopens.push(t);
            }
            for least in 2..5 {
                let spans = flapping_spans(&reopens, least);
                for &at in &reopens {
                    assert_eq!(
                        in_spans(&spans, at),
                        naive(&reopens, at, least),
                        "{reopens:?} {least} {at}"
                    );
                }
            }
        }
        // The last representable time does not overflow.
        let end = [Timestamp::MAX, Timestamp::MAX, Timestamp::MAX];
        assert!(in_spans(&flapping_spans(&end, 3), Timestamp::MAX));
    }

    use super::*;
    use crate::prereg::Prereg;
    use crate::scan::board::{Capabilities, Format, Link, LinkKind, Outcome, Record, StatusChange};

    fn spec() -> P3Spec {
        Prereg::p3(None).unwrap().spec
    }

    /// 2026-01-01T00:00:00Z plus `days`.
    fn day(days: f64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + (days * 86_400.0) as i64).unwrap()
    }

    fn done(id: &str, completed: f64) -> Task {
        let mut task = Task::new(id, Record::Line(1));
        task.status = "Done".into();
        task.status_category = StatusCategory::Done;
        task.created = Some(day(completed - 5.0));
        task.completed = Some(day(completed));
        task
    }

    fn board(format: Format, tasks: Vec<Task>) -> Board {
        Board {
            path: PathBuf::from("board"),
            format,
            format_reason: None,
            capabilities: Capabilities::of(format),
            tasks,
            notes: Vec::new(),
        }
    }

    fn signals(analysis: &P3Analysis) -> Vec<(&str, bool, Vec<&str>)> {
        analysis
            .tasks
            .iter()
            .map(|t| (t.id.as_str(), t.censored, t.signals.clone()))
            .collect()
    }

    #[test]
    fn reopen_counts_up_to_the_last_day_of_the_window() {
        let mut inside = done("A", 0.0);
        inside.reopened_at = vec![day(30.0)];
        let mut outside = done("B", 0.0);
        outside.reopened_at = vec![day(30.0) + SignedDuration::from_secs(1)];
        // Without a history, a reopen before the reported completion followed an earlier completion: it counts
        // up to a window before it.
        let mut before = done("C", 10.0);
        before.reopened_at = vec![day(9.0)];
        let mut long_before = done("D", 40.0);
        long_before.reopened_at = vec![day(9.0)];
        // With a history, the first completion is known and the window is strict.
        let mut with_history = done("E", 10.0);
        with_history.history = Some(Vec::new());
        with_history.reopened_at = vec![day(9.0)];
        let analysis = analyze(
            &[board(
                Format::JiraJson,
                vec![inside, outside, before, long_before, with_history],
            )],
            &spec(),
            Some(day(100.0)),
        );
        assert_eq!(
            signals(&analysis),
            [
                ("A", false, vec!["wrong.reopened"]),
                ("B", false, vec![]),
                ("C", false, vec!["wrong.reopened"]),
                ("D", false, vec![]),
                ("E", false, vec![]),
            ]
        );
        assert_eq!(
            (
                analysis.counts.eligible,
                analysis.counts.with_signal,
                analysis.counts.wrong
            ),
            (5, 2, 2)
        );
    }

    #[test]
    fn the_first_completion_in_the_history_starts_the_window() {
        // Done on day 0, reopened on day 3, done again on day 40: the window runs from day 0.
        let mut task = done("A", 40.0);
        let change = |at: f64, to: &str, category| StatusChange {
            at: day(at),
            from: None,
            to: to.into(),
            to_category: category,
            provenance: None,
        };
        task.history = Some(vec![
            change(0.0, "Done", StatusCategory::Done),
            change(3.0, "Reopened", StatusCategory::Todo),
            change(40.0, "Done", StatusCategory::Done),
        ]);
        task.reopened_at = vec![day(3.0)];
        let analysis = analyze(&[board(Format::JiraJson, vec![task])], &spec(), Some(day(31.0)));
        assert_eq!(analysis.tasks[0].completed, "2026-01-01T00:00:00Z");
        assert_eq!(signals(&analysis), [("A", false, vec!["wrong.reopened"])]);
    }

    #[test]
    fn follow_ups_from_either_side_and_linked_bugs_count_when_created_in_the_window() {
        let link = |kind, direction, target: &str| Link {
            kind,
            name: String::new(),
            direction,
            target: target.into(),
        };
        let origin_out = {
            let mut t = done("A", 0.0);
            t.links.push(link(LinkKind::Causes, LinkDirection::Outward, "A-BUG"));
            t
        };
        let mut a_bug = Task::new("A-BUG", Record::Line(2));
        a_bug.created = Some(day(12.0));
        let origin_in = done("B", 0.0);
        let mut b_regression = Task::new("B-REG", Record::Line(3));
        b_regression.created = Some(day(31.0));
        b_regression
            .links
            .push(link(LinkKind::Regression, LinkDirection::Inward, "B"));
        let origin_bug = done("C", 0.0);
        let mut c_bug = Task::new("C-BUG", Record::Line(4));
        c_bug.kind = Some("Bug".into());
        c_bug.created = Some(day(2.0));
        c_bug.links.push(link(LinkKind::Relates, LinkDirection::Outward, "C"));
        let mut d = done("D", 0.0);
        d.links
            .push(link(LinkKind::FollowUp, LinkDirection::Outward, "ELSEWHERE-1"));
        let analysis = analyze(
            &[board(
                Format::JiraJson,
                vec![origin_out, a_bug, origin_in, b_regression, origin_bug, c_bug, d],
            )],
            &spec(),
            Some(day(60.0)),
        );
        assert_eq!(
            signals(&analysis),
            [
                ("A", false, vec!["wrong.follow-up"]),
                ("B", false, vec![]),
                ("C", false, vec!["wrong.follow-up"]),
                ("D", false, vec![]),
            ]
        );
        assert_eq!(analysis.counts.follow_ups_outside_input, 1);
        assert_eq!(analysis.counts.not_completed, 3);
    }

    #[test]
    fn explicit_outcomes_verified_statuses_and_censoring() {
        let mut wrong = done("A", 0.0);
        wrong.outcome = Some(Outcome::Wrong);
        let mut right = done("B", 0.0);
        right.outcome = Some(Outcome::Verified);
        let mut verified = done("C", 0.0);
        verified.status = "Verified".into();
        let late = done("D", 20.0);
        // Completed exactly one window before the as-of date: its window has just elapsed, so it is eligible.
        let boundary = done("F", 15.0);
        let mut unknown = Task::new("E", Record::Line(5));
        unknown.status_category = StatusCategory::Done;
        let analysis = analyze(
            &[board(
                Format::Jsonl,
                vec![wrong, right, verified, late, unknown, boundary],
            )],
            &spec(),
            Some(day(45.0)),
        );
        assert_eq!(
            signals(&analysis),
            [
                ("A", false, vec!["wrong.explicit"]),
                ("B", false, vec!["right.explicit"]),
                ("C", false, vec!["right.verified-status"]),
                ("D", true, vec![]),
                ("F", false, vec![]),
            ]
        );
        let c = &analysis.counts;
        assert_eq!((c.tasks, c.eligible, c.censored, c.completion_unknown), (6, 4, 1, 1));
        assert_eq!((c.with_signal, c.wrong, c.right), (3, 1, 2));
        assert_eq!(analysis.as_of.as_deref(), Some("2026-02-15T00:00:00Z"));
    }

    #[test]
    fn sensitivity_finds_how_many_tasks_the_verdict_tolerates() {
        let spec = spec();
        let kinds = |s: &Sensitivity| (s.if_all_set_aside_counted, s.if_none_counted);
        // Dicklesworthstone/frankenredis: KILL until 6 + 276 of 1563 (Wilson's upper end reaches 20%), so 275 of the
        // 581 set-aside tasks may be genuine; removing counted signals keeps a KILL.
        let kill = sensitivity(6, 581, 1563, &spec);
        assert_eq!((kill.set_aside_tolerated, kill.counted_tolerated), (275, 6));
        assert_eq!(kinds(&kill), (VerdictKind::Pass, VerdictKind::Kill));
        assert_eq!(decide(6 + 275, 1563, 0, &[], &spec).kind, VerdictKind::Kill);
        assert_eq!(decide(6 + 276, 1563, 0, &[], &spec).kind, VerdictKind::Inconclusive);
        // oculairmedia/houdini-mcp: INCONCLUSIVE at 10 of 55, PASS from 17, KILL at 5 or fewer.
        let straddles = sensitivity(10, 38, 55, &spec);
        assert_eq!((straddles.set_aside_tolerated, straddles.counted_tolerated), (6, 4));
        assert_eq!(kinds(&straddles), (VerdictKind::Pass, VerdictKind::Kill));
        // Fewer eligible tasks than the minimum: nothing moves the verdict.
        let small = sensitivity(3, 5, 7, &spec);
        assert_eq!((small.set_aside_tolerated, small.counted_tolerated), (5, 3));
        assert_eq!(kinds(&small), (VerdictKind::Inconclusive, VerdictKind::Inconclusive));
        // A PASS rests on its counted signals: it holds down to 52 of 200. (The thresholds 282 of 1563, 6 and 17 of
        // 55, 52 of 200 agree with scripts/validation/p3_verdict_bounds.py's own Wilson interval.)
        let pass = sensitivity(80, 0, 200, &spec);
        assert_eq!((pass.set_aside_tolerated, pass.counted_tolerated), (0, 28));
        assert_eq!(decide(80 - 28, 200, 0, &[], &spec).kind, VerdictKind::Pass);
        assert_eq!(decide(80 - 29, 200, 0, &[], &spec).kind, VerdictKind::Inconclusive);
    }

    #[test]
    fn verdict_branches_and_the_format_ceiling() {
        let spec = spec();
        let kill = decide(5, 200, 0, &[], &spec);
        assert_eq!(kill.kind, VerdictKind::Kill);
        assert_eq!(
            kill.reasons,
            ["detectable-outcome base rate 2.5% (5 of 200) < 20.0% and its interval [1.1%, 5.7%] lies below it"]
        );
        let blind = decide(5, 200, 0, &["wrong.reopened"], &spec);
        assert!(blind.reasons[0].ends_with(
            " — but the input could not show wrong.reopened, so the rate may reflect the export format rather than the work"
        ));
        assert_eq!(decide(80, 200, 0, &[], &spec).kind, VerdictKind::Pass);
        let straddles = decide(11, 60, 0, &[], &spec);
        assert_eq!(straddles.kind, VerdictKind::Inconclusive);
        assert!(straddles.reasons[0].contains("straddles"));
        let small = decide(1, 10, 0, &[], &spec);
        assert_eq!((small.kind, small.n_still_needed), (VerdictKind::Inconclusive, 40));
    }

    #[test]
    fn unobservable_signals_follow_the_formats() {
        let analysis = analyze(
            &[board(Format::JiraCsv, vec![done("A", 0.0)])],
            &spec(),
            Some(day(40.0)),
        );
        assert_eq!(
            analysis.unobservable,
            [
                "right.explicit",
                "right.verified-status",
                "wrong.commit",
                "wrong.explicit",
                "wrong.reopened"
            ]
        );
        assert_eq!(analysis.major_unobservable, ["wrong.reopened"]);
    }
}
