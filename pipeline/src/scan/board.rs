//! Board exports (P3): reads the task exports of seven tools into one task model, [`Board`] of [`Task`]s. It only
//! reads and normalises; the signals, windows and base rate are computed from the model elsewhere.
//!
//! [`sniff`] decides the [`Format`] of an input from its content (`--format auto`) and says why; [`read`] parses
//! bytes already in memory, [`open`] reads a file (memory-mapped) and sniffs when no format is given. GitHub
//! timeline events come as a second input and are joined with [`join_github_timeline`] (see below).
//!
//! # Formats
//!
//! | [`Format`] | `--format` | input | what a record is |
//! |---|---|---|---|
//! | [`Format::Jsonl`] | `jsonl` | the upstream P3 JSONL: `id, status, completed_at, outcome, reopened_at, followups[]` | `line 12` |
//! | [`Format::JiraCsv`] | `jira-csv` | a Jira CSV export ("Export Excel CSV (all fields)") | `line 17` (where the row starts) |
//! | [`Format::JiraJson`] | `jira-json` | a Jira REST search response with `expand=changelog` (`{"issues": [...]}`) | `issues[3]` |
//! | [`Format::LinearCsv`] | `linear-csv` | a Linear CSV export, 30 or 34 columns | `line 5` |
//! | [`Format::GithubJson`] | `github-json` | `gh issue list --json number,title,state,stateReason,createdAt,closedAt,labels,…` | `[3]` |
//! | [`Format::TrelloJson`] | `trello-json` | a Trello board export (`cards`, `lists`, `actions`) | `cards[4]` |
//! | [`Format::Beads`] | `beads` | a beads `.beads/issues.jsonl` (one issue per line) | `line 8` |
//! | [`Format::Parquet`] | `parquet` | the upstream P3 task table in Parquet: the JSONL's fields as columns | `row 3` |
//!
//! Columns and keys are looked up by name, never by position. Unknown columns and keys are ignored. A UTF-8
//! byte-order mark is skipped. Details per format:
//!
//! - **Upstream JSONL**: every field may be missing. `id` (string or integer; a missing id becomes `line N`),
//!   `status` (string), `completed_at` (timestamp or `null`), `outcome` (`right`, `verified`, `wrong` and the
//!   synonyms listed at [`Outcome`], `true`/`false`, or `null`), `reopened_at` (a timestamp, an array of
//!   timestamps, or `null`), `followups` (ids, or objects with an `id`: each becomes a
//!   [`LinkKind::FollowUp`] link, [`LinkDirection::Outward`]). Also read when present: `title`, `type`,
//!   `created_at`, `labels` (array of strings). Blank lines are skipped.
//! - **Jira CSV**: `Issue key` (or `Work item key`) and `Status` are required. `Summary`, `Issue Type` (or
//!   `Work item Type`/`Work Type`), `Status Category`, `Resolution`, `Created`, `Resolved`, `Status Category
//!   Changed`, every `Labels` column, every `Inward issue link (…)` / `Outward issue link (…)` column, and
//!   `Parent` (a key, or an `Issue id` that is resolved to its key). No status history.
//! - **Jira REST JSON**: `issues[].key`, `fields.{summary, issuetype.name, status.name,
//!   status.statusCategory.key, resolution.name, created, resolutiondate, statuscategorychangedate, labels,
//!   issuelinks, parent.key, subtasks}` and `changelog.histories[].{created, items[]}` with `field == "status"`.
//! - **Linear CSV**: `ID` and `Status` are required; `Title`, `Labels` (joined with `", "`), `Created`,
//!   `Started`, `Completed`, `Canceled`, `Parent issue`, and in the 34-column shape `Related to`, `Blocked by`,
//!   `Duplicate of` (comma-separated ids). No status history, no issue types (Linear has labels only).
//! - **GitHub JSON**: `number` and `state` are required; `title, stateReason, createdAt, closedAt, labels[].name,
//!   body, closedByPullRequestsReferences[].number, parent.number, subIssues[].number` are read when present.
//!   Links come from `parent`/`subIssues` and from phrases in the body such as `Regression of #12` (see
//!   [`LinkKind`]).
//! - **Trello JSON**: `cards[].{id, name, idList, closed, labels}`, `lists[].{id, name}`, and `actions[]` of type
//!   `createCard`/`copyCard` (creation, `data.list`) and `updateCard` with `data.listBefore`/`data.listAfter`
//!   (a move: one [`StatusChange`]). A card's status is its list's name.
//! - **Parquet**: the upstream JSONL's fields as columns, each row read as the JSONL line it would be (lists as
//!   list columns or JSON text; the column mapping is in `parquet.rs` and docs/p3.md).
//! - **beads**: `id` is required; `title, status, issue_type, created_at, closed_at, close_reason, labels,
//!   dependencies[].{issue_id, depends_on_id, type}`. A line whose `_type` is not `issue` (beads 1.x exports its
//!   `memory` records beside the issues) is no task and is passed over.
//!
//! # Status categories
//!
//! Every status maps to a [`StatusCategory`]. Where a tool states a category it is used; otherwise the status
//! name is matched by keywords (whole words, case-insensitive, apostrophes dropped, checked in the order
//! Cancelled, Done, In progress, To do, see [`category_of_status`]):
//!
//! | source | To do | In progress | Done | Cancelled |
//! |---|---|---|---|---|
//! | keywords (any name) | to do, todo, backlog, open, new, reopened, triage, planned, ready, next, icebox, inbox, ideas, pending, deferred, unstarted, selected | in progress, progress, doing, started, wip, review, testing, test, qa, dev, development, blocked, active, ongoing, working | done, closed, complete(d), resolved, fixed, shipped, released, deployed, finished, merged, live, delivered, verified | cancel(l)ed, won't do, won't fix, wontfix, rejected, declined, abandoned, obsolete, invalid, duplicate, not planned, discarded, dropped |
//! | Jira (`Status Category` column, REST `statusCategory.key`) | To Do / `new` | In Progress / `indeterminate` | Done / `done`, unless the resolution cancels | Done with a resolution such as Won't Do, Won't Fix, Duplicate, Cannot Reproduce, Incomplete, Declined (or a status name that cancels) |
//! | Linear | otherwise | `Started` set (and not done or cancelled by name) | `Completed` set | `Canceled` set |
//! | GitHub | `OPEN` | — | `CLOSED` with `stateReason` COMPLETED (or none) | `CLOSED` with NOT_PLANNED or DUPLICATE |
//! | Trello | list name by keywords | list name by keywords | list name by keywords (Done, Complete, Shipped, …) | list name by keywords (Won't do, Cancelled, …) |
//! | beads | `open`, `deferred`, `pinned`, `hooked` | `in_progress`, `blocked` | `closed` | `closed` with a cancelling `close_reason` (won't do, duplicate, …), `tombstone` |
//! | upstream JSONL | keywords | keywords | keywords; an unknown or missing status with `completed_at` | keywords |
//!
//! Jira CSV without a `Status Category` column, and names matching no keyword, fall back to the keywords and
//! then to [`StatusCategory::Unknown`]. In Jira REST histories, a status name takes the category that the same
//! name has as a current status somewhere in the export, else the keywords'. Linear, when neither a date column
//! nor the name decides, is To do.
//!
//! # Times
//!
//! Instants are [`jiff::Timestamp`]s. Times with an offset or `Z` are taken as written. Times without one (Jira
//! CSV always; naive values elsewhere) are read in the zone given to [`read`] (`--tz`, see [`parse_time_zone`]),
//! a DST gap or fold resolved as jiff's "compatible" rule does (later for gaps, earlier for folds). Jira CSV dates
//! may be `21/Nov/25 10:32 AM`, `2/Jan/06 15:04`, `2/Jan/2006 3:04 PM`, `Jan/2/06 3:04 PM`, `2006-01-02 15:04`,
//! `2006-01-02 15:04:05` or a date alone (midnight); two-digit years 69–99 are 19xx, 00–68 are 20xx.
//!
//! `created` is when the task was created. `completed` is when it reached its current Done or Cancelled state,
//! as the tool reports it (Jira `Resolved`/`resolutiondate`, else `Status Category Changed` or the last change
//! into the state; Linear `Completed`/`Canceled`; GitHub `closedAt`; beads `closed_at`; JSONL `completed_at`;
//! Trello: the last move into a Done or Cancelled list, else the creation when the card was created there). Every
//! adapter but the upstream JSONL leaves `completed` empty for a task that is not Done or Cancelled now.
//!
//! # Links
//!
//! A [`Link`] has a [`LinkKind`], the name the input used, a [`LinkDirection`] and a target id. For the kinds
//! that mark follow-up work ([`LinkKind::is_follow_up`]: causes, regression, follow-up) `Outward` means "this
//! task is the origin, the target is the follow-up" and `Inward` "this task is the follow-up of the target":
//!
//! | input | kind, direction |
//! |---|---|
//! | Jira `Outward issue link (X)` / REST `outwardIssue` | kind of X by keywords (relat→relates, block→blocks, duplicat→duplicates, clon→clones, regress→regression, caus or incident→causes, follow or discover→follow-up, else other), `Outward` |
//! | Jira `Inward issue link (X)` / REST `inwardIssue` | the same kind, `Inward` |
//! | Jira `Parent`, Linear `Parent issue`, GitHub `parent`, beads `parent-child` | parent, `Inward` (the target is the parent) |
//! | Jira REST `subtasks`, GitHub `subIssues` | parent, `Outward` |
//! | Linear `Related to` / `Blocked by` / `Duplicate of` | relates `Outward` / blocks `Inward` / duplicates `Outward` |
//! | beads `related` / `blocks` / `discovered-from` | relates `Outward` / blocks `Inward` / follow-up `Inward` |
//! | upstream JSONL `followups[]` | follow-up, `Outward` |
//! | GitHub body `Regression of #N` (`regression from/in`, `regressed by`, `introduced in/by`) | regression, `Inward` |
//! | GitHub body `Caused by #N` | causes, `Inward` |
//! | GitHub body `Follow-up to #N` (`follow-up of/from`, `followup to`, `follows up`, `discovered in/from`) | follow-up, `Inward` |
//! | GitHub body `Duplicate of #N` / `Blocked by #N`, `Depends on #N` / `Blocks #N` / `Related to #N`, `Relates to #N`, `See also #N` | duplicates `Outward` / blocks `Inward` / blocks `Outward` / relates `Outward` |
//!
//! Jira shows only the link type's name (the part in parentheses), not its wording, so for a custom type the
//! direction follows Jira's convention that the outward wording is the active one ("causes", "blocks").
//! GitHub body phrases must directly precede `#N` (an optional `:` between), within one line; `owner/repo#N`
//! (another repository) is not a link.
//!
//! # GitHub timeline
//!
//! `gh issue list` shows a snapshot: a reopened-then-closed issue looks like any closed one. Timeline events
//! (the REST `GET /repos/{owner}/{repo}/issues/{number}/timeline` objects, verbatim) add what the snapshot
//! loses. Either way works:
//!
//! - **embedded**: an issue object of the list carries `"timeline": [event, …]`;
//! - **a second file**, joined with [`join_github_timeline`] (detected with [`is_github_timeline`]): a JSON
//!   array or a JSONL of events that each name their issue as `"issue": 12` or `"issue": {"number": 12}` (the
//!   shape of `GET /repos/{owner}/{repo}/issues/events`), or an object mapping issue numbers to event arrays,
//!   `{"12": [event, …]}`.
//!
//! Events read: `closed` (a [`StatusChange`] to `closed`; with `commit_id` also a
//! [`ReferenceKind::ClosedByCommit`]), `reopened` (a change to `open` and an entry of [`Task::reopened_at`]),
//! `referenced` (a [`ReferenceKind::Commit`]), `cross-referenced` (a [`ReferenceKind::PullRequest`] when
//! `source.issue.pull_request` exists, else [`ReferenceKind::Issue`]). Others are ignored. An issue with a
//! timeline gets a [`Task::history`]; one without keeps `None`.
//!
//! # Capabilities
//!
//! [`Capabilities`] says what an input can show at all, so a report can list the signals it could not observe:
//!
//! | format | created | completed | kind | history | reopen | links | labels | outcome | commit refs |
//! |---|---|---|---|---|---|---|---|---|---|
//! | upstream JSONL, Parquet task table | – | ✓ | – | – | ✓ | ✓ | – | ✓ | – |
//! | Jira CSV | ✓ | ✓ | ✓ | – | – | ✓ | ✓ | – | – |
//! | Jira REST JSON | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | – | – |
//! | Linear CSV (30 / 34 columns) | ✓ | ✓ | – | – | – | – / ✓ | ✓ | – | – |
//! | GitHub JSON (without / with timeline) | ✓ | ✓ | – | – / ✓ | – / ✓ | ✓ | ✓ | – | ✓ |
//! | Trello JSON | ✓ | ✓ | – | ✓ | ✓ | – | ✓ | – | – |
//! | beads | ✓ | ✓ | ✓ | – | – | ✓ | ✓ | – | – |
//!
//! "Links" means links between tasks other than parent/child. Without history, a reopen is visible only as a
//! current status such as "Reopened" (or GitHub's `stateReason` REOPENED): [`Task::was_reopened`] checks that
//! too. [`Task::reopened_at`] holds the dates: explicit ones (JSONL `reopened_at`, GitHub `reopened` events),
//! and in histories every change from a Done or Cancelled category to another category.
//!
//! # Errors
//!
//! Malformed input fails with a [`BoardError`] naming the file and the line (`jira.csv:17: column "Created":
//! "31/Feb/25 10:32 AM" is not a date (expected e.g. 21/Nov/25 10:32 AM)`) or the record (`jira.json: issues[3]:
//! field "fields.created": …`). Input never makes the reader panic.
//!
//! # Performance
//!
//! The two line-based formats (upstream JSONL and beads) are split into line-aligned chunks parsed in parallel
//! (rayon), as the P1 corpus is; the first error by line number is reported. The other formats are parsed as
//! one document.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;

mod beads;
mod detect;
mod github;
mod jira_csv;
mod jira_json;
mod json;
mod jsonl;
mod linear_csv;
mod lines;
mod parquet;
mod status;
mod table;
mod time;
mod trello;

#[cfg(test)]
mod tests;

pub use detect::sniff;
pub use github::{TimelineJoin, is_github_timeline, join_github_timeline};
pub use status::category_of_status;
pub use time::{parse_jira_date, parse_time_zone};

// ---------------------------------------------------------------------------------------------------------------
// The model

/// One board export, read into the task model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Board {
    /// The path (or name) the input was read from, as given.
    pub path: PathBuf,
    /// The format the input was read as.
    pub format: Format,
    /// Why [`sniff`] chose the format, when it was sniffed (`None` when the format was given).
    pub format_reason: Option<String>,
    /// The tasks, in input order.
    pub tasks: Vec<Task>,
    /// What this input can show at all.
    pub capabilities: Capabilities,
    /// Caveats about this particular input (e.g. a Trello export cut at 1,000 actions), in a stable order.
    pub notes: Vec<String>,
}

impl Board {
    /// The newest instant anywhere in the tasks (created, completed, history, reopens, references): the
    /// default "as of" of a report, never the wall clock. `None` when the input holds no instant.
    pub fn newest_timestamp(&self) -> Option<Timestamp> {
        self.tasks.iter().filter_map(Task::newest_timestamp).max()
    }

    /// The task with the id `id` (the first one, should the input repeat an id).
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id)
    }

    /// The follow-ups of every task, from the links whose kind [`LinkKind::is_follow_up`], seen from either side
    /// (an `Outward` link on the origin naming the follow-up, or an `Inward` link on the follow-up naming the
    /// origin; Jira shows both, GitHub and beads only the latter): origin id → follow-up ids, sorted, each once.
    /// Ids are as written; a link may name a task that is not in the input.
    pub fn follow_ups(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut map: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for task in &self.tasks {
            for link in task.links.iter().filter(|l| l.kind.is_follow_up()) {
                let (origin, follow_up) = match link.direction {
                    LinkDirection::Outward => (task.id.as_str(), link.target.as_str()),
                    LinkDirection::Inward => (link.target.as_str(), task.id.as_str()),
                };
                map.entry(origin).or_default().push(follow_up);
            }
        }
        for follow_ups in map.values_mut() {
            follow_ups.sort_unstable();
            follow_ups.dedup();
        }
        map
    }
}

/// A task (issue, card, ticket) in the common model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    /// The tool's id: `SHOP-12` (Jira, Linear, JSONL), `#12` (GitHub), the card id (Trello), `bd-a1b2` (beads).
    pub id: String,
    /// The task's type as the tool names it (`Bug`, `Story`, `bug`, …), when the format has types.
    pub kind: Option<String>,
    /// The title (summary, card name); empty when the input has none.
    pub title: String,
    /// The current status as the tool names it (`In Review`, `CLOSED`, a Trello list name, `in_progress`).
    pub status: String,
    /// The category of the current status (see the module documentation for the mapping).
    pub status_category: StatusCategory,
    /// Why the task was closed, as the tool says it: Jira `Resolution`, GitHub `stateReason`, beads
    /// `close_reason`.
    pub resolution: Option<String>,
    /// When the task was created.
    pub created: Option<Timestamp>,
    /// When the task reached its current Done or Cancelled state, as the tool reports it.
    pub completed: Option<Timestamp>,
    /// When the tool last wrote the task (beads `updated_at`); read leniently (an unreadable value is `None`).
    /// Only histories use it: a version older than the one it replaces is a stale overwrite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<Timestamp>,
    /// For a task rebuilt from the git history of a task file: the task left the file (deleted, or its id was
    /// reused by another task), and when. `None` for a task in the newest version and for every other input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<Removal>,
    /// For a task rebuilt from the git history of a task file, when asked for
    /// ([`super::task_history::HistoryOptions::identity_timelines`]): what its id named in every readable version,
    /// shared by every task that held the id. `None` otherwise.
    #[serde(skip)]
    pub identities: Option<std::sync::Arc<IdentityTimeline>>,
    /// The status changes in time order; `None` when the input cannot show history.
    pub history: Option<Vec<StatusChange>>,
    /// Links to other tasks.
    pub links: Vec<Link>,
    /// Labels, in input order.
    pub labels: Vec<String>,
    /// An explicit verdict on the work, when the input states one (upstream JSONL only).
    pub outcome: Option<Outcome>,
    /// When the task was reopened, in time order (explicit reopen events, and changes out of a Done or Cancelled
    /// category in a history).
    pub reopened_at: Vec<Timestamp>,
    /// Commits, pull requests and issues that refer to the task (GitHub).
    pub references: Vec<Reference>,
    /// The task's web page, when the input has it (GitHub `url`, Trello `url`).
    pub url: Option<String>,
    /// Where the task is in the input, for messages: `line 12`, `issues[3]`, `cards[4]`.
    pub record: Record,
}

impl Task {
    /// A task with only an id and a record; every other field empty.
    pub fn new(id: impl Into<String>, record: Record) -> Task {
        Task {
            id: id.into(),
            kind: None,
            title: String::new(),
            status: String::new(),
            status_category: StatusCategory::Unknown,
            resolution: None,
            created: None,
            completed: None,
            updated: None,
            removed: None,
            identities: None,
            history: None,
            links: Vec::new(),
            labels: Vec::new(),
            outcome: None,
            reopened_at: Vec::new(),
            references: Vec::new(),
            url: None,
            record,
        }
    }

    /// Whether the task is Done (not Cancelled).
    pub fn is_done(&self) -> bool {
        self.status_category == StatusCategory::Done
    }

    /// Whether the task is closed, Done or Cancelled.
    pub fn is_closed(&self) -> bool {
        self.status_category.is_closed()
    }

    /// Whether the input shows that the task was reopened: a reopen date, or (for inputs without history) a
    /// current status or resolution naming a reopen, such as Jira's "Reopened" or GitHub's `REOPENED`.
    pub fn was_reopened(&self) -> bool {
        !self.reopened_at.is_empty()
            || status::mentions_reopen(&self.status)
            || self.resolution.as_deref().is_some_and(status::mentions_reopen)
    }

    /// The newest instant of the task: created, completed, history, reopens, references.
    pub fn newest_timestamp(&self) -> Option<Timestamp> {
        let history = self.history.iter().flatten().map(|c| c.at);
        let references = self.references.iter().filter_map(|r| r.at);
        self.created
            .into_iter()
            .chain(self.completed)
            .chain(history)
            .chain(self.reopened_at.iter().copied())
            .chain(references)
            .max()
    }
}

/// A change of status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusChange {
    /// When the status changed.
    pub at: Timestamp,
    /// The status before, when the input names it.
    pub from: Option<String>,
    /// The status after.
    pub to: String,
    /// The category of `to`.
    pub to_category: StatusCategory,
    /// Where the change was seen, for histories rebuilt from the git history of a task file; `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Box<Provenance>>,
}

/// Where a status change was seen in the git history of a task file: facts about the commit and the version, for
/// the experiments' rules to judge (the scanner excludes nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// The commit whose version shows the change (full hex).
    pub commit: String,
    /// Its author's name.
    pub author: String,
    /// How many tasks of the file changed status in that commit (this one included).
    pub status_changes_in_commit: u64,
    /// The version's own update time (`updated`) is older than the newest one seen for the task before: the
    /// version was written from an older copy.
    pub stale: bool,
    /// A later first-parent commit whose message says it reverts this commit (`This reverts commit <sha>`).
    pub reverted_by: Option<String>,
    /// A change into a closed category whose completion time equals the one the task had before it last left
    /// a closed category: the earlier close is restored, not redone.
    pub restores_completion: bool,
    /// How many tasks of the file went from a closed category to one that is not closed in that commit (this one
    /// included, when it is such a change).
    pub reopens_in_commit: u64,
    /// The commit changed something outside the task files' top-level entry (`.beads` for
    /// `.beads/issues.jsonl`) compared with its first parent.
    pub touches_other_files: bool,
    /// How many first-parent commits, up to and including this one, changed something outside that entry: the
    /// difference between two changes' counts is the number of such commits between them.
    pub other_file_commits: u64,
    /// The readable version (counted from 0, oldest first) that shows the change: an index into
    /// [`IdentityTimeline`].
    pub version: u64,
    /// How many tasks of the file went from a closed category to one that is not closed in that commit with a
    /// stale version (see `stale`), this one included when it is such a change.
    pub stale_reopens_in_commit: u64,
    /// The commit's author time; its committer time is the change's [`StatusChange::at`]. Far apart, the commit
    /// was rebased or cherry-picked onto the line walked long after it was written.
    pub authored: Timestamp,
    /// For a change out of a closed category: the version's own update time minus the completion time of the
    /// closed version it replaces, in seconds, when both are known. A few seconds mean the task was taken up
    /// again before anyone could have judged the work (an agent claiming a task another has just closed).
    pub updated_after_completion: Option<i64>,
}

/// A task's identity in one version: its title (trimmed) and creation time.
pub type Identity = (String, Option<Timestamp>);

/// What a task id named through the readable versions of a history rebuilt from git (directory mode: across the
/// files read, the copy followed): a mark wherever the identity held by the id, or its absence, changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdentityTimeline {
    /// In version order; each holds from its version until the next mark's.
    pub marks: Vec<IdentityMark>,
}

/// From `version` on: the identity the id named there, `None` when no task of the version had the id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityMark {
    /// The readable version (counted from 0) and its commit's time.
    pub version: u64,
    pub at: Timestamp,
    pub identity: Option<Identity>,
}

impl IdentityTimeline {
    /// The mark in force at readable version `version`; `None` before the id's first version.
    pub fn at_version(&self, version: u64) -> Option<&IdentityMark> {
        let after = self.marks.partition_point(|m| m.version <= version);
        after.checked_sub(1).map(|i| &self.marks[i])
    }

    /// The mark in force at time `at`: the last mark (in version order) whose version was committed at or before
    /// it (with committer times in order, the mark in force at the newest version committed by then); `None`
    /// before the id's first version.
    pub fn at_time(&self, at: Timestamp) -> Option<&IdentityMark> {
        self.marks.iter().rev().find(|m| m.at <= at)
    }
}

/// A task that left a task file kept in git.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removal {
    /// The time of the first version without the task (or of the version that reused its id).
    pub at: Timestamp,
    /// That version's commit (full hex).
    pub commit: String,
    pub reason: RemovalReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemovalReason {
    /// No longer in the newest version.
    Deleted,
    /// Its id was taken by another task (the title and the creation time both changed): this is the earlier
    /// task, its id suffixed with `~1`, `~2`, … in the order the reuses happened.
    IdReused,
}

/// The category of a status, common to all tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StatusCategory {
    /// Not started: to do, backlog, open, reopened.
    Todo,
    /// Started, not finished: in progress, in review, blocked.
    InProgress,
    /// Finished as intended.
    Done,
    /// Closed without being done: won't do, duplicate, not planned.
    Cancelled,
    /// The status name says nothing the rules recognise.
    Unknown,
}

impl StatusCategory {
    /// The stable kebab-case name: `todo`, `in-progress`, `done`, `cancelled`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Todo => "todo",
            Self::InProgress => "in-progress",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
            Self::Unknown => "unknown",
        }
    }

    /// Whether the category is a closed one, Done or Cancelled.
    pub fn is_closed(self) -> bool {
        matches!(self, Self::Done | Self::Cancelled)
    }
}

impl fmt::Display for StatusCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A link from a task to another task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    /// What the link means (see the module documentation for the mapping).
    pub kind: LinkKind,
    /// The link's name as the input wrote it: `Problem/Incident`, `Blocked by`, `discovered-from`, `followups`,
    /// `regression of`.
    pub name: String,
    /// Which side of the link this task is on.
    pub direction: LinkDirection,
    /// The id of the other task, as the input wrote it (`SHOP-9`, `#9`, `bd-a1b2`).
    pub target: String,
}

/// What a link means. For directed kinds, [`LinkDirection::Outward`] reads "this task `<kind>` the target".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkKind {
    /// Related work (no direction of its own).
    Relates,
    /// Outward: this task blocks the target. Inward: the target blocks this task.
    Blocks,
    /// Outward: this task duplicates the target. Inward: the target duplicates this task.
    Duplicates,
    /// Outward: this task was cloned into the target. Inward: this task is a clone of the target.
    Clones,
    /// Outward: this task caused the target (e.g. a bug). Inward: this task was caused by the target.
    Causes,
    /// Outward: the target is a regression this task introduced. Inward: this task is a regression of the
    /// target.
    Regression,
    /// Outward: the target is follow-up work found from this task. Inward: this task was discovered from the
    /// target.
    FollowUp,
    /// Outward: this task is the target's parent. Inward: the target is this task's parent.
    Parent,
    /// Any other link type; [`Link::name`] says which.
    Other,
}

impl LinkKind {
    /// The stable kebab-case name: `relates`, `blocks`, …, `follow-up`, `parent`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Relates => "relates",
            Self::Blocks => "blocks",
            Self::Duplicates => "duplicates",
            Self::Clones => "clones",
            Self::Causes => "causes",
            Self::Regression => "regression",
            Self::FollowUp => "follow-up",
            Self::Parent => "parent",
            Self::Other => "other",
        }
    }

    /// Whether the kind marks follow-up work on an origin task: causes, regression, follow-up.
    pub fn is_follow_up(self) -> bool {
        matches!(self, Self::Causes | Self::Regression | Self::FollowUp)
    }

    /// The kind of a link type name, by keywords (case-insensitive): relat → relates, block → blocks,
    /// duplicat → duplicates, clon → clones, regress → regression, caus or incident → causes, follow or
    /// discover → follow-up, parent → parent, anything else → other.
    pub fn from_name(name: &str) -> LinkKind {
        let name = name.to_ascii_lowercase();
        let rules: [(&[&str], LinkKind); 8] = [
            (&["regress"], Self::Regression),
            (&["caus", "incident"], Self::Causes),
            (&["follow", "discover"], Self::FollowUp),
            (&["duplicat"], Self::Duplicates),
            (&["clon"], Self::Clones),
            (&["block"], Self::Blocks),
            (&["relat"], Self::Relates),
            (&["parent"], Self::Parent),
        ];
        rules
            .iter()
            .find(|(words, _)| words.iter().any(|w| name.contains(w)))
            .map_or(Self::Other, |&(_, kind)| kind)
    }
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which side of a link a task is on (see [`LinkKind`] for what each side means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkDirection {
    /// This task is the subject: "this task blocks / causes / duplicates the target".
    Outward,
    /// This task is the object: "this task is blocked by / caused by / a duplicate of … the target".
    Inward,
}

/// An explicit verdict on a task's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Declared right: `right`, `correct`, `success`, `pass`, `passed`, `ok`, `good`, `true`.
    Right,
    /// Verified right by a check: `verified`.
    Verified,
    /// Declared wrong: `wrong`, `incorrect`, `fail`, `failed`, `failure`, `bad`, `reverted`, `false`.
    Wrong,
}

impl Outcome {
    /// Whether the outcome says the work was right (declared or verified).
    pub fn is_right(self) -> bool {
        matches!(self, Self::Right | Self::Verified)
    }

    /// The outcome a word names (case-insensitive, trimmed); `Ok(None)` for an empty value, `unknown`, `none`,
    /// `n/a`; for anything else an error saying what was expected.
    pub fn from_word(word: &str) -> Result<Option<Outcome>, String> {
        let word = word.trim().to_ascii_lowercase();
        Ok(Some(match word.as_str() {
            "right" | "correct" | "success" | "pass" | "passed" | "ok" | "good" | "true" => Self::Right,
            "verified" => Self::Verified,
            "wrong" | "incorrect" | "fail" | "failed" | "failure" | "bad" | "reverted" | "false" => Self::Wrong,
            "" | "unknown" | "none" | "n/a" => return Ok(None),
            _ => return Err(format!("expected right, verified or wrong, got {word:?}")),
        }))
    }
}

/// Something that refers to a task: a commit, a pull request, another issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reference {
    /// What refers to the task.
    pub kind: ReferenceKind,
    /// A commit id, `#40` for a pull request or issue of the same repository, or a URL for another repository.
    pub target: String,
    /// When the reference was made, when the input says.
    pub at: Option<Timestamp>,
}

/// What kind of thing refers to a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceKind {
    /// A commit closed the task (GitHub `closed` event with `commit_id`).
    ClosedByCommit,
    /// A pull request closed (or will close) the task (GitHub `closedByPullRequestsReferences`).
    ClosedByPullRequest,
    /// A commit message mentions the task (GitHub `referenced`).
    Commit,
    /// A pull request mentions the task (GitHub `cross-referenced` from a pull request).
    PullRequest,
    /// Another issue mentions the task (GitHub `cross-referenced` from an issue).
    Issue,
}

/// Where a task is in its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Record {
    /// A 1-based line (JSONL, beads; for CSV the line where the row starts).
    Line(u64),
    /// A 1-based row of a Parquet table.
    Row(u64),
    /// An element of a JSON array: `issues[3]`, `cards[4]`, or `[3]` for a top-level array (`array` empty).
    Item {
        /// The array's key.
        array: &'static str,
        /// The 0-based index.
        index: usize,
    },
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Record::Line(line) => write!(f, "line {line}"),
            Record::Row(row) => write!(f, "row {row}"),
            Record::Item { array, index } => write!(f, "{array}[{index}]"),
        }
    }
}

/// What an input can show at all (see the table in the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Capabilities {
    /// Creation times.
    pub created: bool,
    /// Completion times.
    pub completed: bool,
    /// Task types (bug, story, …).
    pub kind: bool,
    /// Status history with dates.
    pub status_history: bool,
    /// Reopens with dates.
    pub reopen: bool,
    /// Links between tasks other than parent/child.
    pub links: bool,
    /// Labels.
    pub labels: bool,
    /// An explicit right/wrong verdict.
    pub explicit_outcome: bool,
    /// Commits or pull requests referring to a task.
    pub commit_refs: bool,
}

impl Capabilities {
    /// The capabilities of a format as such (Linear: the 34-column shape; GitHub: without timeline).
    pub fn of(format: Format) -> Capabilities {
        let all = Capabilities {
            created: true,
            completed: true,
            kind: true,
            status_history: true,
            reopen: true,
            links: true,
            labels: true,
            explicit_outcome: false,
            commit_refs: false,
        };
        match format {
            Format::Jsonl | Format::Parquet => Capabilities {
                created: false,
                kind: false,
                status_history: false,
                labels: false,
                explicit_outcome: true,
                ..all
            },
            Format::JiraCsv => Capabilities {
                status_history: false,
                reopen: false,
                ..all
            },
            Format::JiraJson => all,
            Format::LinearCsv => Capabilities {
                kind: false,
                status_history: false,
                reopen: false,
                ..all
            },
            Format::GithubJson => Capabilities {
                kind: false,
                status_history: false,
                reopen: false,
                commit_refs: true,
                ..all
            },
            Format::TrelloJson => Capabilities {
                kind: false,
                links: false,
                ..all
            },
            Format::Beads => Capabilities {
                status_history: false,
                reopen: false,
                ..all
            },
        }
    }

    /// The names of what the input cannot show, in a fixed order (for "could not observe" lines of a report).
    pub fn missing(&self) -> Vec<&'static str> {
        [
            (self.created, "creation times"),
            (self.completed, "completion times"),
            (self.kind, "task types"),
            (self.status_history, "status history"),
            (self.reopen, "reopen dates"),
            (self.links, "links between tasks"),
            (self.labels, "labels"),
            (self.explicit_outcome, "explicit outcomes"),
            (self.commit_refs, "commit and pull request references"),
        ]
        .into_iter()
        .filter(|&(has, _)| !has)
        .map(|(_, name)| name)
        .collect()
    }
}

/// The supported input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// The upstream P3 JSONL (`id, status, completed_at, outcome, reopened_at, followups[]`).
    Jsonl,
    /// A Jira CSV export.
    JiraCsv,
    /// A Jira REST search response with changelogs.
    JiraJson,
    /// A Linear CSV export (30 or 34 columns).
    LinearCsv,
    /// The output of `gh issue list --json …`.
    GithubJson,
    /// A Trello board export.
    TrelloJson,
    /// A beads `.beads/issues.jsonl`.
    Beads,
    /// The upstream P3 task table in Parquet: the JSONL's fields as columns.
    Parquet,
}

impl Format {
    /// Every format, in the order of `--format`'s documentation.
    pub const ALL: [Format; 8] = [
        Self::Jsonl,
        Self::JiraCsv,
        Self::JiraJson,
        Self::LinearCsv,
        Self::GithubJson,
        Self::TrelloJson,
        Self::Beads,
        Self::Parquet,
    ];

    /// The name used by `--format`: `jsonl`, `jira-csv`, `jira-json`, `linear-csv`, `github-json`,
    /// `trello-json`, `beads`, `parquet`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Jsonl => "jsonl",
            Self::JiraCsv => "jira-csv",
            Self::JiraJson => "jira-json",
            Self::LinearCsv => "linear-csv",
            Self::GithubJson => "github-json",
            Self::TrelloJson => "trello-json",
            Self::Beads => "beads",
            Self::Parquet => "parquet",
        }
    }

    /// A human description: `upstream P3 JSONL`, `Jira CSV export`, ….
    pub fn description(self) -> &'static str {
        match self {
            Self::Jsonl => "upstream P3 JSONL",
            Self::JiraCsv => "Jira CSV export",
            Self::JiraJson => "Jira REST JSON",
            Self::LinearCsv => "Linear CSV export",
            Self::GithubJson => "GitHub issue list (gh --json)",
            Self::TrelloJson => "Trello board JSON",
            Self::Beads => "beads issues.jsonl",
            Self::Parquet => "upstream P3 task table (Parquet)",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    /// Parses a `--format` name (not `auto`, which means [`sniff`]).
    fn from_str(s: &str) -> Result<Format, String> {
        Format::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            format!("unknown format {s:?} (expected auto, {})", names.join(", "))
        })
    }
}

/// What [`sniff`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sniffed {
    /// The format.
    pub format: Format,
    /// Why, in a sentence for the user: `a JSON array of objects with "number" and "state": GitHub issue list`.
    pub reason: String,
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

/// Reading a board export failed.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The path as given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The format could not be decided ([`sniff`]), or the input as a whole is not of the format.
    #[error("{}: {message}", path.display())]
    Format {
        /// The path as given.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A line or record is malformed.
    #[error("{}{}: {message}", path.display(), location(record))]
    Invalid {
        /// The path as given.
        path: PathBuf,
        /// Where: a line (`jira.csv:17: …`) or an array element (`jira.json: issues[3]: …`).
        record: Record,
        /// What is wrong, e.g. `column "Created": "31/Feb/25 10:32 AM" is not a date (expected e.g. …)`.
        message: String,
    },
    /// `--tz` names no time zone.
    #[error("{message}")]
    TimeZone {
        /// What is wrong.
        message: String,
    },
}

fn location(record: &Record) -> String {
    match record {
        Record::Line(line) => format!(":{line}"),
        item => format!(": {item}"),
    }
}

impl BoardError {
    pub(crate) fn invalid(path: &Path, record: Record, message: impl Into<String>) -> BoardError {
        BoardError::Invalid {
            path: path.to_path_buf(),
            record,
            message: message.into(),
        }
    }

    pub(crate) fn format(path: &Path, message: impl Into<String>) -> BoardError {
        BoardError::Format {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Entry points

/// Reads `bytes` (the content of `path`, which is used in messages) as `format`; times without an offset are
/// read in `tz`.
pub fn read(path: &Path, bytes: &[u8], format: Format, tz: &TimeZone) -> Result<Board, BoardError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut board = Board {
        path: path.to_path_buf(),
        format,
        format_reason: None,
        tasks: Vec::new(),
        capabilities: Capabilities::of(format),
        notes: Vec::new(),
    };
    match format {
        Format::Jsonl => board.tasks = jsonl::read(path, bytes, tz)?,
        Format::JiraCsv => board.tasks = jira_csv::read(path, bytes, tz)?,
        Format::JiraJson => jira_json::read(path, bytes, tz, &mut board)?,
        Format::LinearCsv => linear_csv::read(path, bytes, tz, &mut board)?,
        Format::GithubJson => github::read(path, bytes, tz, &mut board)?,
        Format::TrelloJson => trello::read(path, bytes, tz, &mut board)?,
        Format::Beads => board.tasks = beads::read(path, bytes, tz)?,
        Format::Parquet => board.tasks = parquet::read(path, bytes, tz)?,
    }
    Ok(board)
}

/// A task id listed more than once in an export file (a sync that appends, an export joined by hand) counts once,
/// as its last record (the newest state in every format phase0 reads), in the place of its first; a note says how
/// many and which. [`open`] applies it; a history of task files (`task_history`) follows each version as written.
pub fn merge_duplicate_ids(board: &mut Board) {
    // Each id's last record; an id leaves the map when its first place is filled.
    let mut last: HashMap<String, usize> = HashMap::new();
    for (index, task) in board.tasks.iter().enumerate() {
        last.insert(task.id.clone(), index);
    }
    if last.len() == board.tasks.len() {
        return;
    }
    let mut duplicated: Vec<String> = Vec::new();
    let mut merged: Vec<Task> = Vec::with_capacity(last.len());
    let mut tasks: Vec<Option<Task>> = std::mem::take(&mut board.tasks).into_iter().map(Some).collect();
    for index in 0..tasks.len() {
        // `None`: a last record already moved to its first place.
        let Some(keep) = tasks[index].as_ref().and_then(|task| last.remove(&task.id)) else {
            continue;
        };
        if keep != index {
            duplicated.extend(tasks[index].as_ref().map(|task| task.id.clone()));
        }
        merged.extend(tasks[keep].take());
    }
    board.tasks = merged;
    duplicated.sort();
    let shown: Vec<&str> = duplicated.iter().take(5).map(String::as_str).collect();
    board.notes.push(format!(
        "{} task ids appear more than once ({}{}); each is counted once, as its last record",
        duplicated.len(),
        shown.join(", "),
        if duplicated.len() > shown.len() { ", …" } else { "" }
    ));
}

/// Reads the file at `path` (memory-mapped) as `format`, or as what [`sniff`] decides when `format` is `None`
/// (then [`Board::format_reason`] says why).
pub fn open(path: &Path, format: Option<Format>, tz: &TimeZone) -> Result<Board, BoardError> {
    let mut board = open_as_written(path, format, tz)?;
    merge_duplicate_ids(&mut board);
    Ok(board)
}

fn open_as_written(path: &Path, format: Option<Format>, tz: &TimeZone) -> Result<Board, BoardError> {
    let bytes = super::corpus::read_file(path).map_err(|source| BoardError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    match format {
        Some(format) => read(path, &bytes, format, tz),
        None => {
            let sniffed = sniff(path, &bytes)?;
            let mut board = read(path, &bytes, sniffed.format, tz)?;
            board.format_reason = Some(sniffed.reason);
            Ok(board)
        }
    }
}

/// The dates of the reopens in a history: each change from a Done or Cancelled category to another one. The
/// category before a change is that of its `from` (by `category`) when given, else that of the previous `to`.
fn reopens(history: &[StatusChange], category: impl Fn(&str) -> StatusCategory) -> Vec<Timestamp> {
    let mut before: Option<StatusCategory> = None;
    let mut out = Vec::new();
    for change in history {
        let from = change.from.as_deref().map(&category).or(before);
        if from.is_some_and(StatusCategory::is_closed) && !change.to_category.is_closed() {
            out.push(change.at);
        }
        before = Some(change.to_category);
    }
    out
}

/// When the task reached its current closed category: the last change into a closed category, if the task is
/// closed now and the history has such a change.
fn closed_at_from_history(history: &[StatusChange], now: StatusCategory) -> Option<Timestamp> {
    if !now.is_closed() {
        return None;
    }
    history.iter().rev().find(|c| c.to_category.is_closed()).map(|c| c.at)
}
