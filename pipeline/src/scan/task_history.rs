//! Task files kept in git (P3): rebuilds the status history of the tasks in a file that agents edit and commit,
//! a beads `.beads/issues.jsonl` or the upstream JSONL under `data/`, from the file's git history. A snapshot
//! cannot show a task that went from done back to open; the history of the file can, with a date.
//!
//! [`board_from_history`] walks the first-parent history of a revision, finds the commits that changed the file,
//! reads every version with [`board::read`] and returns the newest version as a [`Board`] whose tasks carry a
//! [`Task::history`] and their [`Task::reopened_at`].
//!
//! # Rules
//!
//! - **Commits**: the first-parent chain from `rev` (default `HEAD`; tags are peeled), oldest to newest, as
//!   `git log --first-parent --reverse` lists it, each dated by its committer time. In a shallow clone the chain
//!   stops at the boundary commit and a note says the older history is missing.
//! - **Versions**: a commit is a version of the file when the object at the path in its tree differs from the one
//!   in its first parent's tree (a path lookup, not a tree diff; the oldest walked commit is compared with an
//!   empty tree). A commit that deletes the file is not a version: tasks keep their last seen state; a file
//!   deleted at `rev` is named in a note and [`TaskFileHistory::deleted`], and its tasks have a `Deleted` removal
//!   dated by that commit (they left the file with it; beads moving its tasks to Dolt deletes it so). A symbolic
//!   link or a submodule at the path counts as no file, and a path that never held a file read, as never there.
//! - **Directory mode**: when the path names a directory (at a given commit), the version is every `*.jsonl`
//!   file directly in it (not in subdirectories), in path order, all read as `format`; their tasks are taken
//!   together as one board and task ids are expected to be unique across the files. A commit is a version when
//!   the list of those files or one of their contents changed. [`TaskFileHistory::files`] lists every file read.
//! - **Broken versions**: a version that [`board::read`] rejects (in directory mode: any of its files) is skipped,
//!   counted in [`TaskFileHistory::versions_skipped`] and named in a note with its commit, its time and the
//!   error (the first ten; one more note counts the others); the next version is compared with the last one
//!   that could be read. Only when no version at all can be
//!   read does the history fail ([`TaskHistoryError::NoReadableVersion`]).
//! - **History**: a task's history starts with the status of the first version that holds it (`from: None`),
//!   dated by the file's own time when it has one (the completion time for a task first seen closed, else the
//!   creation time) and no later than that commit, else by the commit. Then every version whose status (the name,
//!   or its category) differs from the task's status in the previous readable version that held it adds a
//!   [`StatusChange`] at the commit's time, `from` the previous status. A task that appears twice in one
//!   version is followed by its first occurrence (a note counts the versions with duplicates).
//! - **Reopens**: every change from a closed category (Done or Cancelled) to one that is not closed, as
//!   [`board`] counts reopens in other histories, plus the explicit `reopened_at` of the upstream JSONL; sorted,
//!   each instant once.
//! - **Created**: the file's creation time in the task's last seen version, else the time of the first commit
//!   holding the task.
//! - **Completed**: the file's completion time in the task's last seen version (beads `closed_at`, JSONL
//!   `completed_at`: when the tool says it reached its current state), else, for a task closed now, the time of
//!   the first change into its current category (the first completion, for a task completed, reopened and
//!   completed again); otherwise none.
//! - **Missing objects**: a version whose blob the repository lacks (a partial clone) is skipped like a broken
//!   one, counted in [`TaskFileHistory::versions_missing`] too; never an error.
//! - **Provenance**: every history entry carries the commit that shows it, its author, how many tasks changed
//!   status in that commit, whether the version's `updated` is older than the newest seen for the task (stale),
//!   the later commit that says it reverts it, for a close, whether it restores the completion time the task
//!   had when it last left a closed category, and for a reopen, how long after the completion it replaces the
//!   version was updated. Facts only: the experiment's rules decide what they mean.
//! - **Identity** ([`HistoryOptions::split_reused_ids`]): an id whose title and creation time both differ from
//!   those of the task's first version is a new task; the earlier one ends, renamed `<id>~N`, with a
//!   [`board::Removal`] of reason `IdReused`. With [`IdentityRule::title_overlap_below`], a retitling that keeps
//!   less than that share of the first title's words is a new task whatever the creation time; with
//!   [`IdentityRule::created_apart_seconds`], creation times closer than that are the same (a copy that cuts the
//!   fraction of a second).
//! - **Identity timelines** ([`HistoryOptions::identity_timelines`]): every task carries the
//!   [`IdentityTimeline`] of its id (shared by the tasks split off it): a mark at each readable version where what
//!   the id names changes — a title (trimmed) and creation time, or no task (the id is in none of the files read) —
//!   so that the task set at any version or time can be asked what the id named. Each status change's provenance
//!   names its readable version ([`Provenance::version`]) and how many stale reopens its commit wrote
//!   ([`Provenance::stale_reopens_in_commit`]).
//! - **Directory mode options**: [`HistoryOptions::only_files`] names the files read; with
//!   [`HistoryOptions::newest_copy`] an id held by several files in one version is followed in its copy with the
//!   newest update time. A directory holding none of the files read counts as no file (as if deleted).
//! - **Other files**: every first-parent commit is marked when its root tree differs from its parent's outside
//!   the path's top-level entry ([`Provenance::touches_other_files`], and a running count of such commits). A task no longer in the newest version has a `Deleted` removal dated
//!   by the first readable version without it.
//! - **Tasks**: those of the newest readable version, in its order, then the tasks that are no longer in it,
//!   kept as last seen (a done task removed by a clean-up still counts as completed), ordered by the version they
//!   were last seen in and then their place in it; a note names them. Every task has `history: Some(…)`;
//!   [`Capabilities::status_history`], [`Capabilities::reopen`] and [`Capabilities::created`] are true.
//!
//! # Performance
//!
//! The chain is read sequentially (one commit object each); the path lookups run in parallel over commits with a
//! repository handle (object and delta caches) per worker thread; every distinct blob is read once and parsed
//! once, in parallel, in batches folded in commit order, so memory holds a batch of versions, not the whole
//! history. Each worker reads a contiguous run of versions; for the line-based formats a version shares the
//! tasks of the lines it has in common with the previous version of the same file and reads only the others
//! with [`board::read`] (the whole file when more than a quarter of its lines are new), which gives the same
//! tasks as reading every version whole. 10,000 commits of a 200-task beads file take 0.6 s on two cores
//! (release), 2.9 s when every line changes in every commit (`ten_thousand_commits_timing` in
//! `tests/task_history.rs`).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use rayon::prelude::*;

use super::board::{
    self, Board, Capabilities, Format, IdentityMark, IdentityTimeline, Provenance, Record, Removal, RemovalReason,
    StatusChange, Task,
};
use super::git::PerThread;

/// Object cache per worker thread: the trees along the path are shared by neighbouring commits.
const OBJECT_CACHE_BYTES: usize = 4 * 1024 * 1024;
/// Decoded pack entries kept per worker thread, so that a version whose delta chain passes through a version read
/// before applies one delta instead of inflating the whole chain.
const DELTA_CACHE_BYTES: usize = 64 * 1024 * 1024;
/// Distinct blobs parsed per parallel batch, per worker thread.
const BATCH_PER_THREAD: usize = 256;
/// Tags pointing at tags are followed this deep at most.
const MAX_TAG_CHAIN: usize = 64;
/// The digest of a root tree with no entries besides the task files'.
const EMPTY_DIGEST: u64 = 0;
/// Task ids listed by name in a note before "and N more"; skipped versions with a note each.
const NAMED_IN_NOTE: usize = 10;

/// A board rebuilt from the git history of a task file.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFileHistory {
    /// The tasks of the newest readable version (then those no longer in it), with their history and reopens
    /// rebuilt. [`Board::path`] is the repository-relative path as given.
    pub board: Board,
    /// The commit `rev` resolved to.
    pub tip: ObjectId,
    /// Commits on the first-parent chain from `rev`.
    pub commits_walked: u64,
    /// Versions of the file: commits whose content at the path differs from their first parent's (deletions
    /// and, in directory mode, changes to files other than `*.jsonl` excluded), the skipped ones included.
    pub versions_read: u64,
    /// Versions that could not be read and were skipped (each named in a note), those whose objects are missing
    /// included.
    pub versions_skipped: u64,
    /// Of the skipped versions, those whose blob is missing from the repository (a partial clone).
    pub versions_missing: u64,
    /// Every skipped version, oldest first.
    pub skipped: Vec<SkippedVersion>,
    /// The time of the newest commit walked (the tip), which may lie after the newest version of the file.
    pub tip_time: Timestamp,
    /// Tasks split off an id that a later, different task reused (see [`HistoryOptions::split_reused_ids`]).
    pub ids_reused: u64,
    /// The repository-relative paths read: the file, or in directory mode every `*.jsonl` file that was in the
    /// directory in some version; sorted.
    pub files: Vec<String>,
    /// The commit (and its time) from which no commit up to the tip holds the task file: it was deleted and not
    /// written again (beads moved to a database outside git, say). Its tasks are as last seen, removed then.
    pub deleted: Option<(ObjectId, Timestamp)>,
}

/// A version of the file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedVersion {
    pub commit: ObjectId,
    pub time: Timestamp,
    /// The blob is missing from the repository (a partial clone), rather than unreadable as the format.
    pub missing: bool,
    pub message: String,
}

/// How the history is read.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryOptions {
    /// An id whose title and creation time both change from one version to the next (both known before and
    /// after, the title compared trimmed) names a new task: the earlier one ends there (it is kept as removed,
    /// its id suffixed `~1`, `~2`, …) and the new one starts its own history.
    pub split_reused_ids: bool,
    /// With `split_reused_ids`: how titles and creation times are compared (a title sharing too few words with the
    /// first one names a new task whatever the creation time; creation times within a tolerance are the same).
    pub identity: IdentityRule,
    /// Directory mode: read only the files with these names (`issues.jsonl`, `beads.jsonl`, …); empty, every
    /// `*.jsonl` file.
    pub only_files: Vec<String>,
    /// Directory mode: a task id held by several files in one version is followed in the copy with the newest
    /// update time (ties: path order), not the first in path order.
    pub newest_copy: bool,
    /// Give every task the [`IdentityTimeline`] of its id ([`Task::identities`]): what the id named (title and
    /// creation time, or nothing) in every readable version.
    pub identity_timelines: bool,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            split_reused_ids: true,
            identity: IdentityRule::default(),
            only_files: Vec::new(),
            newest_copy: false,
            identity_timelines: false,
        }
    }
}

/// Why the history of a task file could not be read. Every message names the repository, and the path, the
/// revision or the commit concerned.
#[derive(Debug, thiserror::Error)]
pub enum TaskHistoryError {
    /// No repository contains `path` (or it cannot be opened).
    #[error("{}: not a git repository ({message})", .path.display())]
    NotARepository { path: PathBuf, message: String },
    /// The revision does not resolve, or does not name a commit.
    #[error("{}: revision {rev:?}: {message}", .repo.display())]
    Rev {
        repo: PathBuf,
        rev: String,
        message: String,
    },
    /// The path is in no commit of the first-parent history of the revision.
    #[error("{}: {path:?} is in no commit of the first-parent history of {rev} ({tip})", .repo.display())]
    NeverExisted {
        repo: PathBuf,
        path: String,
        rev: String,
        tip: ObjectId,
    },
    /// Every version of the file failed to parse.
    #[error(
        "{}: no version of {path:?} could be read as {format} ({versions} versions); the newest, in commit {commit}, failed: {message}",
        .repo.display()
    )]
    NoReadableVersion {
        repo: PathBuf,
        path: String,
        format: Format,
        versions: u64,
        commit: ObjectId,
        message: String,
    },
    /// An object could not be read (a broken or partial repository).
    #[error("{}: commit {commit}: {message}", .repo.display())]
    Git {
        repo: PathBuf,
        commit: ObjectId,
        message: String,
    },
}

/// Opens the repository containing `path`, isolated from the user's git configuration, as
/// [`super::git::open`] does.
pub fn open(path: &Path) -> Result<gix::ThreadSafeRepository, TaskHistoryError> {
    super::git::open(path).map_err(|err| match err {
        super::git::GitScanError::NotARepository { path, message } => {
            TaskHistoryError::NotARepository { path, message }
        }
        other => TaskHistoryError::NotARepository {
            path: path.to_path_buf(),
            message: other.to_string(),
        },
    })
}

/// The branch beads commits its task files to when it is set up with one (`bd init --branch`, beads'
/// protected-branch workflow): named by `sync-branch` (or `sync.branch`) in `.beads/config.yaml` of `HEAD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncBranch {
    /// The branch name as configured.
    pub name: String,
    /// The reference of this clone that holds it (`refs/heads/<name>`, else `refs/remotes/origin/<name>`); `None`
    /// when the clone has neither (it was never fetched).
    pub reference: Option<String>,
}

/// The sync branch `.beads/config.yaml` of `HEAD` names, if any. An unborn `HEAD`, a missing or unreadable file and
/// a file without the key all mean no sync branch: the task files are then read from `HEAD`, as without beads.
pub fn beads_sync_branch(repo: &gix::ThreadSafeRepository) -> Option<SyncBranch> {
    let repo = repo.to_thread_local();
    let name = sync_branch_in_config(&String::from_utf8_lossy(&blob_at(&repo, "HEAD:.beads/config.yaml")?))?;
    let reference = [format!("refs/heads/{name}"), format!("refs/remotes/origin/{name}")]
        .into_iter()
        .find(|r| repo.rev_parse_single(r.as_str()).is_ok());
    Some(SyncBranch { name, reference })
}

/// The branches of this clone, local then remote-tracking, whose tip holds any of `paths`, by short name (at most
/// `limit`): where to look when the history read holds no task file (a repository whose tasks live on another
/// branch than the one checked out). Tips only, so the cost is one tree lookup per branch.
pub fn branches_holding(repo: &gix::ThreadSafeRepository, paths: &[String], limit: usize) -> Vec<String> {
    let repo = repo.to_thread_local();
    let Ok(platform) = repo.references() else {
        return Vec::new();
    };
    let mut found: Vec<String> = Vec::new();
    for branches in [platform.local_branches(), platform.remote_branches()]
        .into_iter()
        .flatten()
    {
        for reference in branches.flatten() {
            let full = reference.name().as_bstr().to_string();
            if full.ends_with("/HEAD") {
                continue;
            }
            let short = reference.name().shorten().to_string();
            if found.contains(&short)
                || !paths
                    .iter()
                    .any(|p| repo.rev_parse_single(format!("{full}:{p}").as_str()).is_ok())
            {
                continue;
            }
            found.push(short);
            if found.len() == limit {
                return found;
            }
        }
    }
    found
}

/// The storage `.beads/metadata.json` of `rev` names (its `"backend"`: `"dolt"`, …), if any. Beads 1.x keeps its
/// tasks in a Dolt database, not in a file of the commits; a task file in git is then an export beads writes only
/// when configured to (`export.auto`).
pub fn beads_backend(repo: &gix::ThreadSafeRepository, rev: &str) -> Option<String> {
    let repo = repo.to_thread_local();
    let metadata = blob_at(&repo, &format!("{rev}:.beads/metadata.json"))?;
    let metadata: serde_json::Value = serde_json::from_slice(&metadata).ok()?;
    metadata.get("backend")?.as_str().map(str::to_owned)
}

/// The content of the object `spec` (`<rev>:<path>`) names, if it resolves and can be read.
fn blob_at(repo: &gix::Repository, spec: &str) -> Option<Vec<u8>> {
    let id = repo.rev_parse_single(spec).ok()?.detach();
    Some(repo.find_object(id).ok()?.detach().data)
}

/// The value of the top-level `sync-branch` (or `sync.branch`) key of a beads `config.yaml`, unquoted; comments and
/// nested keys are not it.
fn sync_branch_in_config(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        if !matches!(key, "sync-branch" | "sync.branch") {
            return None;
        }
        let value = match value.trim() {
            v if v.starts_with('"') || v.starts_with('\'') => {
                let quote = &v[..1];
                v[1..].split(quote).next().unwrap_or_default()
            }
            v => v.split(" #").next().unwrap_or_default().trim(),
        };
        (!value.is_empty()).then(|| value.to_owned())
    })
}

/// Rebuilds the board of the task file at `file` (repository-relative, `/`-separated; a directory reads every
/// `*.jsonl` in it) from the first-parent history of `rev` (default `HEAD`). See the module documentation for
/// the rules.
pub fn board_from_history(
    repo: &gix::ThreadSafeRepository,
    rev: Option<&str>,
    file: &str,
    format: Format,
    tz: &TimeZone,
) -> Result<TaskFileHistory, TaskHistoryError> {
    board_from_history_with(repo, rev, file, format, tz, HistoryOptions::default())
}

/// [`board_from_history`] with explicit [`HistoryOptions`]: the chain of first parents from `rev`, the versions of
/// the task file along it (`locate_versions`), those versions folded into tasks (`fold_versions`), and the
/// board with its notes (`finish_board`).
pub fn board_from_history_with(
    repo: &gix::ThreadSafeRepository,
    rev: Option<&str>,
    file: &str,
    format: Format,
    tz: &TimeZone,
    options: HistoryOptions,
) -> Result<TaskFileHistory, TaskHistoryError> {
    let repo_name = repo.work_dir().unwrap_or_else(|| repo.git_dir()).to_path_buf();
    let path = normalize(file);
    let rev = rev.unwrap_or("HEAD");
    let ctx = Ctx {
        repo_name: &repo_name,
        components: path.split('/').filter(|c| !c.is_empty()).map(str::to_owned).collect(),
        only_files: options.only_files.clone(),
        handles: PerThread::new(|| thread_handle(repo)),
    };
    let local = thread_handle(repo);
    let tip = resolve_commit(&local, &repo_name, rev)?;
    let shallow: HashSet<ObjectId> = local
        .shallow_commits()
        .map_err(|err| ctx.git_error(tip, format!("cannot read the shallow file: {err}")))?
        .map(|commits| commits.iter().copied().collect())
        .unwrap_or_default();
    let (chain, truncated) = first_parent_chain(&ctx, &local, tip, &shallow)?;
    let Some(located) = locate_versions(&ctx, chain, &path)? else {
        return Err(TaskHistoryError::NeverExisted {
            repo: repo_name,
            path,
            rev: rev.to_owned(),
            tip,
        });
    };
    let mut fold = fold_versions(&ctx, &located, format, tz, &options)?;
    let Some(newest) = fold.newest else {
        let (commit, message) = fold
            .skipped
            .pop()
            .map_or((tip, "no version".to_owned()), |s| (s.commit, s.message));
        return Err(TaskHistoryError::NoReadableVersion {
            repo: repo_name,
            path,
            format,
            versions: fold.versions,
            commit,
            message,
        });
    };
    Ok(finish_board(fold, newest, located, truncated, tip, path, format))
}

/// The versions of a task file along the first-parent chain.
struct Located {
    chain: Vec<ChainCommit>,
    /// The distinct (path, blob) pairs of all versions, and the commit each was first seen in.
    units: Vec<(String, ObjectId)>,
    unit_commit: Vec<ObjectId>,
    versions: Vec<Version>,
}

/// Finds the commits of `chain` that changed the task file (or, in directory mode, the files of the directory) and
/// the blobs of every version; `None` when the path never existed along the chain.
fn locate_versions<F: Fn() -> gix::Repository + Sync>(
    ctx: &Ctx<'_, F>,
    mut chain: Vec<ChainCommit>,
    path: &str,
) -> Result<Option<Located>, TaskHistoryError> {
    // The object at the path in every commit, in parallel.
    let looked_up = chain
        .par_iter()
        .map(|commit| ctx.handles.with(|handle| ctx.lookup(handle, commit)))
        .collect::<Result<Vec<(Found, u64)>, _>>()?;
    let mut other_file_commits = 0;
    for (i, commit) in chain.iter_mut().enumerate() {
        let before = if i == 0 { EMPTY_DIGEST } else { looked_up[i - 1].1 };
        commit.touches_other = looked_up[i].1 != before;
        other_file_commits += u64::from(commit.touches_other);
        commit.other_file_commits = other_file_commits;
    }
    let found: Vec<Found> = looked_up.into_iter().map(|(f, _)| f).collect();
    if found.iter().all(|f| *f == Found::Absent) {
        return Ok(None);
    }
    let changed: Vec<usize> = (0..chain.len())
        .filter(|&i| found[i] != if i == 0 { Found::Absent } else { found[i - 1] })
        .collect();
    // The files of each changed commit: directory listings in parallel.
    let listings = changed
        .par_iter()
        .map(|&i| ctx.handles.with(|handle| ctx.files(handle, &chain[i], found[i], path)))
        .collect::<Result<Vec<Option<Vec<(String, ObjectId)>>>, _>>()?;

    // Versions and their distinct (path, blob) units.
    let mut units: Vec<(String, ObjectId)> = Vec::new();
    let mut unit_commit: Vec<ObjectId> = Vec::new();
    let mut unit_index: HashMap<(String, ObjectId), usize> = HashMap::new();
    let mut versions: Vec<Version> = Vec::new();
    let mut previous: Option<Vec<(String, ObjectId)>> = None;
    for (&commit, listing) in changed.iter().zip(listings) {
        if listing == previous {
            continue; // the directory changed, none of its *.jsonl files did
        }
        let version_units = listing.as_ref().map(|files| {
            files
                .iter()
                .map(|key| {
                    *unit_index.entry(key.clone()).or_insert_with(|| {
                        units.push(key.clone());
                        unit_commit.push(chain[commit].id);
                        units.len() - 1
                    })
                })
                .collect()
        });
        versions.push(Version {
            commit,
            units: version_units,
        });
        previous = listing;
    }
    // A directory that never held a task file (beads' `.beads/` with only its configuration) is no task file.
    if units.is_empty() {
        return Ok(None);
    }
    Ok(Some(Located {
        chain,
        units,
        unit_commit,
        versions,
    }))
}

/// Reads every version's blobs (in parallel batches, each thread reading a run of blobs in commit order so that a
/// version reuses the parsed lines of the previous one) and folds the versions, oldest first, into tasks.
fn fold_versions<F: Fn() -> gix::Repository + Sync>(
    ctx: &Ctx<'_, F>,
    located: &Located,
    format: Format,
    tz: &TimeZone,
    options: &HistoryOptions,
) -> Result<Fold, TaskHistoryError> {
    let Located {
        chain,
        units,
        unit_commit,
        versions,
    } = located;
    let mut fold = Fold {
        split_reused_ids: options.split_reused_ids,
        identity_rule: options.identity,
        timelines_on: options.identity_timelines,
        ..Fold::default()
    };
    let mut missing_units: HashSet<usize> = HashSet::new();
    let mut last_use = vec![0usize; units.len()];
    for (v, version) in versions.iter().enumerate() {
        for &u in version.units.iter().flatten() {
            last_use[u] = v;
        }
    }
    let threads = rayon::current_num_threads().max(1);
    let batch = BATCH_PER_THREAD * threads;
    let mut parsed: Vec<bool> = vec![false; units.len()];
    let mut cache: HashMap<usize, Parsed> = HashMap::new();
    let mut next = 0;
    while next < versions.len() {
        let start = next;
        let mut fresh = Vec::new();
        while next < versions.len() && fresh.len() < batch {
            for &u in versions[next].units.iter().flatten() {
                if !parsed[u] {
                    parsed[u] = true;
                    fresh.push(u);
                }
            }
            next += 1;
        }
        // One contiguous run of blobs per thread, each read in commit order so that a version reuses the lines
        // of the previous version of the same file.
        let per_thread = fresh.len().div_ceil(threads).max(1);
        let results = fresh
            .par_chunks(per_thread)
            .map(|run| {
                let mut reuse: HashMap<&str, LineCache> = HashMap::new();
                run.iter()
                    .map(|&u| {
                        let (unit_path, blob) = &units[u];
                        let Some(bytes) = ctx
                            .handles
                            .with(|handle| ctx.read_blob(handle, unit_commit[u], *blob))?
                        else {
                            return Ok((
                                true,
                                Err(format!("{unit_path}: blob {blob} is missing from the repository")),
                            ));
                        };
                        // Parsed outside `with`: the reader may use rayon itself.
                        let previous = reuse.entry(unit_path).or_default();
                        Ok((false, parse_version(Path::new(unit_path), bytes, format, tz, previous)))
                    })
                    .collect::<Result<Vec<(bool, Parsed)>, TaskHistoryError>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (u, (missing, parsed)) in fresh.into_iter().zip(results.into_iter().flatten()) {
            if missing {
                missing_units.insert(u);
            }
            cache.insert(u, parsed);
        }
        for (v, version) in versions.iter().enumerate().take(next).skip(start) {
            let commit = &chain[version.commit];
            let Some(version_units) = &version.units else {
                fold.deleted_at = Some(version.commit);
                continue;
            };
            fold.deleted_at = None;
            fold.versions += 1;
            let mut entries: Vec<Entry> = Vec::new();
            let mut error = None;
            let several = options.newest_copy && version_units.len() > 1;
            let mut held: HashMap<String, (usize, usize)> = HashMap::new();
            let missing = version_units.iter().any(|u| missing_units.contains(u));
            for &u in version_units {
                let result = if last_use[u] == v {
                    cache.remove(&u).unwrap_or_else(|| Ok(Vec::new()))
                } else {
                    cache.get(&u).cloned().unwrap_or_else(|| Ok(Vec::new()))
                };
                match result {
                    Ok(more) if several => {
                        // One task per id across the files: the copy with the newest update time.
                        for entry in more {
                            match held.get(&entry.task.id) {
                                Some(&(at, unit)) if unit != u => {
                                    if entry.task.updated > entries[at].task.updated {
                                        entries[at] = entry;
                                    }
                                }
                                Some(_) => entries.push(entry),
                                None => {
                                    held.insert(entry.task.id.clone(), (entries.len(), u));
                                    entries.push(entry);
                                }
                            }
                        }
                    }
                    Ok(more) => entries.extend(more),
                    Err(message) => {
                        error.get_or_insert(message);
                    }
                }
            }
            match error {
                Some(message) => fold.skip(commit, missing, message),
                None => fold.add(commit, entries),
            }
        }
    }
    Ok(fold)
}

/// The board of a folded history, with notes on what was truncated, skipped, gone or reused.
fn finish_board(
    mut fold: Fold,
    newest: usize,
    located: Located,
    truncated: Option<ObjectId>,
    tip: ObjectId,
    path: String,
    format: Format,
) -> TaskFileHistory {
    let Located { chain, units, .. } = located;
    let mut notes = Vec::new();
    if let Some(boundary) = truncated {
        notes.push(format!(
            "the repository is a shallow clone: the history before commit {boundary} is missing"
        ));
    }
    for skipped in fold.skipped.iter().take(NAMED_IN_NOTE) {
        notes.push(format!(
            "commit {} ({}): {}; this version was skipped",
            skipped.commit, skipped.time, skipped.message
        ));
    }
    if let Some(last) = fold.skipped.get(NAMED_IN_NOTE..).and_then(<[_]>::last) {
        notes.push(format!(
            "{} more versions could not be read and were skipped, the last in commit {} ({})",
            fold.skipped.len() - NAMED_IN_NOTE,
            last.commit,
            last.time
        ));
    }
    if let Some((id, commit)) = &fold.first_duplicate {
        notes.push(format!(
            "{} versions list a task id more than once (first: {id:?} in commit {commit}); the first task with an \
             id is the one followed",
            fold.duplicate_versions
        ));
    }
    if let Some(deleted) = fold.deleted_at {
        let what = if units.iter().any(|(p, _)| *p == path) {
            format!("{path:?} was deleted")
        } else {
            format!("the task files of {path:?} were deleted")
        };
        notes.push(format!(
            "{what} in commit {} ({}); the tasks are as last seen, and left the task file then",
            chain[deleted].id, chain[deleted].time
        ));
    }
    let deleted = fold.deleted_at.map(|d| (chain[d].id, chain[d].time));

    // Reverts named in commit messages (`This reverts commit <sha>`): the reverted commit's id → the revert's.
    let reverted: Vec<(&str, ObjectId)> = chain
        .iter()
        .flat_map(|c| c.reverts.iter().map(move |prefix| (prefix.as_str(), c.id)))
        .collect();
    let reverted_by = |commit: &ObjectId| -> Option<String> {
        if reverted.is_empty() {
            return None;
        }
        let hex = commit.to_string();
        reverted
            .iter()
            .find(|(prefix, by)| hex.starts_with(prefix) && by != commit)
            .map(|(_, by)| by.to_string())
    };
    let ids_reused = fold.retired.len() as u64;
    let mut reused_named: Vec<String> = fold.retired.iter().map(|t| t.task.id.clone()).collect();
    reused_named.sort_unstable();
    let timelines = fold.finish_timelines(newest);
    let Fold {
        tasks,
        retired,
        versions: versions_seen,
        skipped,
        version_meta,
        ..
    } = fold;
    let mut tracked: Vec<Tracked> = tasks.into_values().chain(retired).collect();
    tracked.sort_by_key(|t| (t.last_version != newest || t.retired.is_some(), t.last_version, t.order));
    let gone: Vec<&str> = tracked
        .iter()
        .filter(|t| t.last_version != newest && t.retired.is_none())
        .map(|t| t.task.id.as_str())
        .collect();
    if !gone.is_empty() {
        let named = named_ids(&gone);
        notes.push(format!(
            "{} {} no longer in the newest version, kept as last seen: {named}",
            gone.len(),
            if gone.len() == 1 { "task is" } else { "tasks are" }
        ));
    }
    if !reused_named.is_empty() {
        let named = named_ids(&reused_named);
        notes.push(format!(
            "{} {} reused by a later task with another title and creation time; the earlier {} kept apart: {named}",
            reused_named.len(),
            if reused_named.len() == 1 { "id was" } else { "ids were" },
            if reused_named.len() == 1 {
                "task is"
            } else {
                "tasks are"
            }
        ));
    }
    let tasks = tracked
        .into_iter()
        .map(|t| {
            let identities = timelines.get(&t.base_id).cloned();
            let mut task = t.finish(newest, &version_meta, &reverted_by, deleted);
            task.identities = identities;
            task
        })
        .collect();

    let mut files: Vec<String> = units.into_iter().map(|(p, _)| p).collect();
    files.sort_unstable();
    files.dedup();
    TaskFileHistory {
        board: Board {
            path: PathBuf::from(&path),
            format,
            format_reason: None,
            tasks,
            capabilities: Capabilities {
                created: true,
                status_history: true,
                reopen: true,
                ..Capabilities::of(format)
            },
            notes,
        },
        tip,
        commits_walked: chain.len() as u64,
        versions_read: versions_seen,
        versions_skipped: skipped.len() as u64,
        versions_missing: skipped.iter().filter(|s| s.missing).count() as u64,
        skipped,
        tip_time: chain.last().map_or(Timestamp::UNIX_EPOCH, |c| c.time),
        ids_reused,
        files,
        deleted,
    }
}

/// The first [`NAMED_IN_NOTE`] ids, quoted, and how many more there are.
fn named_ids<S: AsRef<str>>(ids: &[S]) -> String {
    let mut named = ids
        .iter()
        .take(NAMED_IN_NOTE)
        .map(|id| format!("{:?}", id.as_ref()))
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > NAMED_IN_NOTE {
        named.push_str(&format!(" and {} more", ids.len() - NAMED_IN_NOTE));
    }
    named
}

/// `./a//b/` → `a/b`.
fn normalize(file: &str) -> String {
    file.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

// ---------------------------------------------------------------------------------------------------------------
// Repository access

struct Ctx<'a, F> {
    repo_name: &'a Path,
    components: Vec<String>,
    /// Directory mode: the file names read (empty: every `*.jsonl`).
    only_files: Vec<String>,
    handles: PerThread<gix::Repository, F>,
}

/// A commit of the first-parent chain.
struct ChainCommit {
    id: ObjectId,
    tree: ObjectId,
    time: Timestamp,
    /// The author's name, and the author time.
    author: String,
    authored: Timestamp,
    /// The commits its message says it reverts (`This reverts commit <hex>`, at least 7 hex digits), lower case.
    reverts: Vec<String>,
    /// It changed something outside the task files' top-level entry, compared with its first parent.
    touches_other: bool,
    /// Commits of the chain up to and including this one that did.
    other_file_commits: u64,
}

/// What is at the path in a commit's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    Absent,
    Blob(ObjectId),
    Tree(ObjectId),
}

/// A commit that changed the file: its index in the chain and its units (`None`: the file was deleted).
struct Version {
    commit: usize,
    units: Option<Vec<usize>>,
}

impl<F: Fn() -> gix::Repository + Sync> Ctx<'_, F> {
    fn git_error(&self, commit: ObjectId, message: String) -> TaskHistoryError {
        TaskHistoryError::Git {
            repo: self.repo_name.to_path_buf(),
            commit,
            message,
        }
    }

    /// Reads object `id` of `kind` into `buf`; `commit` is named in errors.
    fn read<'b>(
        &self,
        handle: &gix::Repository,
        commit: ObjectId,
        id: ObjectId,
        kind: gix::objs::Kind,
        buf: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], TaskHistoryError> {
        if kind == gix::objs::Kind::Tree && id == ObjectId::empty_tree(id.kind()) {
            buf.clear();
            return Ok(buf);
        }
        match gix::objs::Find::try_find(&handle.objects, &id, buf) {
            Ok(Some(data)) if data.kind == kind => Ok(data.data),
            Ok(Some(data)) => Err(self.git_error(commit, format!("object {id} is a {}, not a {kind}", data.kind))),
            Ok(None) => Err(self.git_error(commit, format!("{kind} {id} is missing from the repository"))),
            Err(err) => Err(self.git_error(commit, format!("cannot read {kind} {id}: {err}"))),
        }
    }

    /// The object at the path, and a digest of the root tree's other entries (names, modes, ids).
    fn lookup(&self, handle: &gix::Repository, commit: &ChainCommit) -> Result<(Found, u64), TaskHistoryError> {
        if self.components.is_empty() {
            return Ok((Found::Tree(commit.tree), EMPTY_DIGEST));
        }
        let mut root = Vec::new();
        let data = self.read(handle, commit.id, commit.tree, gix::objs::Kind::Tree, &mut root)?;
        let mut digest = std::hash::DefaultHasher::new();
        let mut others = false;
        for entry in gix::objs::TreeRefIter::from_bytes(data, commit.tree.kind()) {
            let entry = entry.map_err(|err| self.git_error(commit.id, format!("tree {}: {err}", commit.tree)))?;
            if entry.filename != self.components[0].as_bytes() {
                others = true;
                std::hash::Hash::hash(entry.filename.as_bytes(), &mut digest);
                std::hash::Hash::hash(&entry.mode.value(), &mut digest);
                std::hash::Hash::hash(entry.oid.as_bytes(), &mut digest);
            }
        }
        let digest = if others {
            std::hash::Hasher::finish(&digest)
        } else {
            EMPTY_DIGEST
        };
        let mut buf = Vec::new();
        let entry = gix::objs::TreeRefIter::from_bytes(data, commit.tree.kind())
            .lookup_entry(&handle.objects, &mut buf, self.components.iter().map(|c| c.as_bytes()))
            .map_err(|err| self.git_error(commit.id, format!("cannot look up the path: {err}")))?;
        let found = match entry {
            Some(entry) if entry.mode.is_blob() => Found::Blob(entry.oid),
            Some(entry) if entry.mode.is_tree() => Found::Tree(entry.oid),
            _ => Found::Absent,
        };
        Ok((found, digest))
    }

    /// The files a version consists of, sorted by path: the file itself, or the `*.jsonl` blobs of the directory;
    /// `None` when the path is absent.
    fn files(
        &self,
        handle: &gix::Repository,
        commit: &ChainCommit,
        found: Found,
        path: &str,
    ) -> Result<Option<Vec<(String, ObjectId)>>, TaskHistoryError> {
        Ok(match found {
            Found::Absent => None,
            Found::Blob(id) => Some(vec![(path.to_owned(), id)]),
            Found::Tree(id) => {
                let mut buf = Vec::new();
                let data = self.read(handle, commit.id, id, gix::objs::Kind::Tree, &mut buf)?;
                let mut files = Vec::new();
                for entry in gix::objs::TreeRefIter::from_bytes(data, id.kind()) {
                    let entry = entry.map_err(|err| self.git_error(commit.id, format!("tree {id}: {err}")))?;
                    let wanted = if self.only_files.is_empty() {
                        entry.filename.ends_with(b".jsonl")
                    } else {
                        self.only_files.iter().any(|name| entry.filename == name.as_bytes())
                    };
                    if entry.mode.is_blob() && wanted {
                        let name = entry.filename.to_str_lossy();
                        let file = if path.is_empty() {
                            name.into_owned()
                        } else {
                            format!("{path}/{name}")
                        };
                        files.push((file, entry.oid.to_owned()));
                    }
                }
                files.sort_unstable();
                // A directory without a file read is no task file (as if deleted: tasks stay as last seen).
                (!files.is_empty()).then_some(files)
            }
        })
    }

    /// The blob `id`, or `None` when the repository lacks it (a partial clone).
    fn read_blob(
        &self,
        handle: &gix::Repository,
        commit: ObjectId,
        id: ObjectId,
    ) -> Result<Option<Vec<u8>>, TaskHistoryError> {
        let mut buf = Vec::new();
        let kind = match gix::objs::Find::try_find(&handle.objects, &id, &mut buf) {
            Ok(None) => return Ok(None),
            Ok(Some(data)) => data.kind,
            Err(err) => return Err(self.git_error(commit, format!("cannot read blob {id}: {err}"))),
        };
        if kind != gix::objs::Kind::Blob {
            return Err(self.git_error(commit, format!("object {id} is a {kind}, not a blob")));
        }
        Ok(Some(buf))
    }
}

/// The commits a message says it reverts: the hex after each `This reverts commit ` (git's own wording), at least
/// 7 digits, lower case.
fn reverted_commits(message: &BStr) -> Vec<String> {
    const WORDS: &[u8] = b"this reverts commit ";
    let lower = message.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find(WORDS) {
        let start = from + at + WORDS.len();
        let hex: String = lower[start..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .map(|&b| b as char)
            .collect();
        if hex.len() >= 7 {
            out.push(hex);
        }
        from = start;
    }
    out
}

/// Resolves `rev` and peels tags down to a commit.
fn resolve_commit(repo: &gix::Repository, repo_name: &Path, rev: &str) -> Result<ObjectId, TaskHistoryError> {
    let rev_error = |message: String| TaskHistoryError::Rev {
        repo: repo_name.to_path_buf(),
        rev: rev.to_owned(),
        message,
    };
    let mut id = repo
        .rev_parse_single(<&BStr>::from(rev.as_bytes()))
        .map_err(|err| {
            // gix wraps the cause ("Reference \"x\" could not be found") in "couldn't parse revision, input=…".
            let cause = std::error::Error::source(&err).map(ToString::to_string);
            rev_error(cause.unwrap_or_else(|| err.to_string()))
        })?
        .detach();
    let mut buf = Vec::new();
    for _ in 0..MAX_TAG_CHAIN {
        let data = match gix::objs::Find::try_find(&repo.objects, &id, &mut buf) {
            Ok(Some(data)) => data,
            Ok(None) => return Err(rev_error(format!("object {id} is missing from the repository"))),
            Err(err) => return Err(rev_error(format!("cannot read object {id}: {err}"))),
        };
        match data.kind {
            gix::objs::Kind::Commit => return Ok(id),
            gix::objs::Kind::Tag => {
                id = gix::objs::TagRefIter::from_bytes(data.data, id.kind())
                    .target_id()
                    .map_err(|err| rev_error(format!("tag {id}: {err}")))?;
            }
            kind => return Err(rev_error(format!("names a {kind} ({id}), not a commit"))),
        }
    }
    Err(rev_error(format!("tags nested deeper than {MAX_TAG_CHAIN}")))
}

/// The first-parent chain from `tip`, oldest first, and the shallow boundary commit it stopped at, if any.
fn first_parent_chain<F: Fn() -> gix::Repository + Sync>(
    ctx: &Ctx<'_, F>,
    repo: &gix::Repository,
    tip: ObjectId,
    shallow: &HashSet<ObjectId>,
) -> Result<(Vec<ChainCommit>, Option<ObjectId>), TaskHistoryError> {
    let mut chain = Vec::new();
    let mut buf = Vec::new();
    let mut next = Some(tip);
    let mut seen = HashSet::new();
    let mut truncated = None;
    while let Some(id) = next {
        if !seen.insert(id) {
            return Err(ctx.git_error(id, "the first-parent chain loops".to_owned()));
        }
        let data = ctx.read(repo, id, id, gix::objs::Kind::Commit, &mut buf)?;
        let commit = gix::objs::CommitRef::from_bytes(data, id.kind())
            .map_err(|err| ctx.git_error(id, format!("cannot decode the commit: {err}")))?;
        let seconds = commit
            .committer()
            .map_err(|err| ctx.git_error(id, format!("cannot decode the committer: {err}")))?
            .seconds();
        let time = Timestamp::from_second(seconds)
            .map_err(|err| ctx.git_error(id, format!("committer time {seconds}: {err}")))?;
        next = commit.parents().next();
        if shallow.contains(&id) {
            truncated = next.map(|_| id);
            next = None;
        }
        let author = commit.author().ok();
        let authored = author
            .as_ref()
            .and_then(|a| Timestamp::from_second(a.seconds()).ok())
            .unwrap_or(time);
        let author = author.map(|a| a.name.to_str_lossy().into_owned()).unwrap_or_default();
        chain.push(ChainCommit {
            id,
            tree: commit.tree(),
            time,
            author,
            authored,
            reverts: reverted_commits(commit.message),
            touches_other: false,
            other_file_commits: 0,
        });
    }
    chain.reverse();
    Ok((chain, truncated))
}

/// A per-thread handle with an object cache and a delta cache (the scanner's, sized for one file's history).
fn thread_handle(repo: &gix::ThreadSafeRepository) -> gix::Repository {
    super::git::thread_handle_with(repo, OBJECT_CACHE_BYTES, DELTA_CACHE_BYTES)
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing versions

/// A task of a version, and where it is in the version (its line, for the line-based formats).
#[derive(Debug, Clone)]
struct Entry {
    task: Arc<Task>,
    record: Record,
}

/// A parsed version, or the reader's error.
type Parsed = Result<Vec<Entry>, String>;

/// The previous version of a file and the task of each of its task lines (the byte range of the line, without
/// its `\r`).
#[derive(Default)]
struct LineCache {
    bytes: Vec<u8>,
    lines: Vec<(Range<usize>, Arc<Task>)>,
}

impl LineCache {
    fn line(&self, index: usize) -> Option<&[u8]> {
        self.lines.get(index).map(|(range, _)| &self.bytes[range.clone()])
    }
}

/// A task line of a version: its number, its byte range (without `\r`), its index in the previous version.
type TaskLine = (u64, Range<usize>, Option<usize>);

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Above this share of lines not in the previous version, the whole file is read at once.
const NEW_LINES_FOR_WHOLE_READ: f64 = 0.25;

/// Parses one version of a file with [`board::read`]. For the line-based formats (beads, upstream JSONL), where
/// a task is one line read on its own, the lines that are in `previous` (the previous version of the same file)
/// keep their task and, when they are few, only the other lines are read, one at a time; the result is the one
/// the whole file gives. A line is looked up at its place in the previous version first (a byte comparison), by
/// its bytes only when that fails. Anything unusual (a line that does not read as one task, an upstream JSONL
/// task without an id, which takes its line number as id, a byte-order mark inside the file) reads the whole
/// file, which also gives the exact error.
fn parse_version(path: &Path, bytes: Vec<u8>, format: Format, tz: &TimeZone, previous: &mut LineCache) -> Parsed {
    if !matches!(format, Format::Beads | Format::Jsonl) {
        return read_whole(path, bytes, format, tz, None).0;
    }
    // The task lines: number, byte range, index in the previous version.
    let mut lines: Vec<TaskLine> = Vec::with_capacity(previous.lines.len() + 1);
    // foldhash, not SipHash: the map hashes every line of the previous version (lines of a kilobyte and more), and
    // SipHash made it a tenth of a run.
    let mut by_bytes: Option<foldhash::HashMap<&[u8], usize>> = None;
    let mut cursor = 0;
    let mut from = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let mut number = 0u64;
    let mut unusual = false;
    while from < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i);
        let range = from..bytes[from..end].strip_suffix(b"\r").map_or(end, |l| from + l.len());
        from = end + 1;
        number += 1;
        let line = &bytes[range.clone()];
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        unusual |= line.starts_with(BOM);
        let found = if previous.line(cursor) == Some(line) {
            Some(cursor)
        } else {
            let map = by_bytes.get_or_insert_with(|| {
                let mut map = foldhash::HashMap::with_capacity_and_hasher(previous.lines.len(), Default::default());
                for (i, (range, _)) in previous.lines.iter().enumerate() {
                    map.entry(&previous.bytes[range.clone()]).or_insert(i);
                }
                map
            });
            map.get(line).copied()
        };
        // A new line most often replaces the one at its place.
        cursor = found.unwrap_or(cursor) + 1;
        lines.push((number, range, found));
    }
    drop(by_bytes);
    let fresh = lines.iter().filter(|(.., found)| found.is_none()).count();
    if unusual || fresh as f64 > NEW_LINES_FOR_WHOLE_READ * lines.len() as f64 {
        let (parsed, cache) = read_whole(path, bytes, format, tz, Some(&lines));
        if let Some(cache) = cache {
            *previous = cache;
        }
        return parsed;
    }

    let mut entries = Vec::with_capacity(lines.len());
    for (number, range, found) in &lines {
        let task = match found {
            Some(index) => Arc::clone(&previous.lines[*index].1),
            None => {
                let mut tasks = match board::read(path, &bytes[range.clone()], format, tz) {
                    Ok(board) if board.tasks.len() == 1 => board.tasks,
                    _ => Vec::new(),
                };
                let task = tasks
                    .pop()
                    .filter(|task| !(format == Format::Jsonl && task.id == "line 1"));
                match task {
                    Some(task) => Arc::new(task),
                    None => {
                        let (parsed, cache) = read_whole(path, bytes, format, tz, Some(&lines));
                        if let Some(cache) = cache {
                            *previous = cache;
                        }
                        return parsed;
                    }
                }
            }
        };
        entries.push(Entry {
            task,
            record: Record::Line(*number),
        });
    }
    let cached = lines
        .into_iter()
        .zip(&entries)
        .map(|((_, range, _), entry)| (range, Arc::clone(&entry.task)))
        .collect();
    *previous = LineCache { bytes, lines: cached };
    Ok(entries)
}

/// Reads a whole version with [`board::read`], and the cache of its lines for the next version: `None` when the
/// version cannot be read (the next one is compared with the one before), empty unless `lines` (its task lines)
/// are given and match the tasks one to one.
fn read_whole(
    path: &Path,
    bytes: Vec<u8>,
    format: Format,
    tz: &TimeZone,
    lines: Option<&[TaskLine]>,
) -> (Parsed, Option<LineCache>) {
    let tasks = match board::read(path, &bytes, format, tz) {
        Ok(board) => board.tasks,
        Err(err) => return (Err(err.to_string()), None),
    };
    let entries: Vec<Entry> = tasks
        .into_iter()
        .map(|task| Entry {
            record: task.record,
            task: Arc::new(task),
        })
        .collect();
    let mut cache = LineCache::default();
    if let Some(lines) = lines {
        // A task whose id is its line number (upstream JSONL without an id) must not be reused elsewhere.
        let reusable = lines.len() == entries.len()
            && lines.iter().zip(&entries).all(|((number, ..), entry)| {
                entry.record == Record::Line(*number)
                    && !(format == Format::Jsonl && entry.task.id == format!("line {number}"))
            });
        if reusable {
            cache.lines = lines
                .iter()
                .zip(&entries)
                .map(|((_, range, _), entry)| (range.clone(), Arc::clone(&entry.task)))
                .collect();
            cache.bytes = bytes;
        }
    }
    (Ok(entries), Some(cache))
}

// ---------------------------------------------------------------------------------------------------------------
// Rebuilding the history

/// A task followed through the versions.
#[derive(Debug)]
struct Tracked {
    /// The task as last seen, and where it was.
    task: Arc<Task>,
    record: Record,
    /// The time of the first commit holding the task.
    first_seen: Timestamp,
    history: Vec<StatusChange>,
    /// The readable version each history entry was seen in.
    change_versions: Vec<usize>,
    /// The readable version (counted from 0) the task was last seen in, and its place there.
    last_version: usize,
    order: usize,
    /// The newest update time seen for the task.
    max_updated: Option<Timestamp>,
    /// The completion time the task had when it last left a closed category.
    left_closed_at: Option<Option<Timestamp>>,
    /// The readable version in which another task took its id.
    retired: Option<usize>,
    /// The title and creation time of the version that started the task: its identity.
    identity: (String, Option<Timestamp>),
    /// The id in the file (before a `~N` suffix given when another task took it).
    base_id: String,
}

/// What is known of each readable version: its commit, time, author, and how many tasks changed status in it.
#[derive(Debug, Clone)]
struct VersionMeta {
    commit: ObjectId,
    time: Timestamp,
    status_changes: u64,
    /// How many tasks went from a closed category to one that is not closed in it.
    reopens: u64,
    /// Of those, how many in a stale version.
    stale_reopens: u64,
}

impl Tracked {
    /// The task with its history, reopens, dates, provenance and removal; `newest` is the newest readable version,
    /// `deleted` the commit and time from which no commit holds the task file (every task still in it left then).
    fn finish(
        self,
        newest: usize,
        versions: &[VersionMeta],
        reverted_by: &dyn Fn(&ObjectId) -> Option<String>,
        deleted: Option<(ObjectId, Timestamp)>,
    ) -> Task {
        let Tracked {
            task,
            record,
            first_seen,
            mut history,
            change_versions,
            last_version,
            retired,
            ..
        } = self;
        let mut task = Arc::unwrap_or_clone(task);
        task.record = record;
        for (change, &v) in history.iter_mut().zip(&change_versions) {
            if let (Some(provenance), Some(meta)) = (change.provenance.as_mut(), versions.get(v)) {
                provenance.status_changes_in_commit = meta.status_changes;
                provenance.reopens_in_commit = meta.reopens;
                provenance.stale_reopens_in_commit = meta.stale_reopens;
                provenance.version = v as u64;
                provenance.reverted_by = reverted_by(&meta.commit);
            }
        }
        let mut reopened = reopens(&history);
        reopened.extend(task.reopened_at.iter().copied());
        reopened.sort_unstable();
        reopened.dedup();
        task.reopened_at = reopened;
        task.created = task.created.or(Some(first_seen));
        if task.completed.is_none() && task.status_category.is_closed() {
            let now = task.status_category;
            task.completed = history.iter().find(|c| c.to_category == now).map(|c| c.at);
        }
        let gone = if retired.is_some() || last_version != newest {
            // The first readable version without it (for a reused id, that may be the reuse itself).
            versions.get(last_version + 1).map(|meta| Removal {
                at: meta.time,
                commit: meta.commit.to_string(),
                reason: if retired.is_some() {
                    RemovalReason::IdReused
                } else {
                    RemovalReason::Deleted
                },
            })
        } else {
            deleted.map(|(commit, at)| Removal {
                at,
                commit: commit.to_string(),
                reason: RemovalReason::Deleted,
            })
        };
        task.removed = gone;
        task.history = Some(history);
        task
    }
}

/// Every change from a closed category to one that is not closed.
fn reopens(history: &[StatusChange]) -> Vec<Timestamp> {
    history
        .windows(2)
        .filter(|w| w[0].to_category.is_closed() && !w[1].to_category.is_closed())
        .map(|w| w[1].at)
        .collect()
}

/// How a version's title and creation time are compared with a task's first ones to tell another task under the
/// same id (the pre-registration's `reuse_title_overlap_below` and `reuse_created_apart_seconds`); the default is
/// version 2's rule: both differ, at any precision.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IdentityRule {
    /// A title sharing fewer than this share of its words with the first one (distinct lower-case alphanumeric
    /// words; shared / words of the shorter title) is another task whatever the creation time.
    pub title_overlap_below: Option<f64>,
    /// Creation times less than this many seconds apart are the same; `None`: any difference is a change.
    pub created_apart_seconds: Option<u32>,
}

impl IdentityRule {
    /// Whether two known creation times name different creations.
    fn created_differs(&self, a: Timestamp, b: Timestamp) -> bool {
        match self.created_apart_seconds {
            None => a != b,
            Some(seconds) => a.duration_since(b).abs() >= jiff::SignedDuration::from_secs(i64::from(seconds)),
        }
    }
}

/// Whether `new` is another task than the one whose identity (title, creation time) is `identity`, under the same
/// id: the title and the creation time both differ from those of the version that started the task (both known;
/// titles compared trimmed; times as `rule` says). Compared with the start, not the previous version, so that a
/// reuse written in two steps (the title in one commit, the creation time in the next) is seen. A title sharing
/// too few words with the first one (`rule.title_overlap_below`) is another task whatever the creation time.
fn is_reuse(identity: &(String, Option<Timestamp>), new: &Task, rule: IdentityRule) -> bool {
    another_task(identity, new.title.trim(), new.created, rule)
}

/// `is_reuse` on identities: whether `title` (trimmed) and `created` name another task than `identity`.
pub fn another_task(
    identity: &(String, Option<Timestamp>),
    title: &str,
    created: Option<Timestamp>,
    rule: IdentityRule,
) -> bool {
    let (first, first_created) = identity;
    let retitled = !first.is_empty() && !title.is_empty() && first != title;
    retitled
        && (matches!((first_created, created), (Some(a), Some(b)) if rule.created_differs(*a, b))
            || rule
                .title_overlap_below
                .is_some_and(|below| title_overlap(first, title) < below))
}

/// Shared distinct lower-case alphanumeric words of two titles over the distinct words of the shorter one (1 when
/// either has none).
pub fn title_overlap(a: &str, b: &str) -> f64 {
    let words = |t: &str| -> HashSet<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (words(a), words(b));
    let shorter = a.len().min(b.len());
    if shorter == 0 {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / shorter as f64
}

#[derive(Default)]
struct Fold {
    tasks: HashMap<String, Tracked>,
    /// Earlier tasks whose id a later task took.
    retired: Vec<Tracked>,
    /// How many times each id was reused.
    reuses: HashMap<String, usize>,
    split_reused_ids: bool,
    identity_rule: IdentityRule,
    /// Readable versions folded so far; the index of the newest one.
    readable: usize,
    newest: Option<usize>,
    version_meta: Vec<VersionMeta>,
    /// Versions seen (readable or not).
    versions: u64,
    /// The versions that could not be read.
    skipped: Vec<SkippedVersion>,
    duplicate_versions: u64,
    first_duplicate: Option<(String, ObjectId)>,
    /// The chain index of the commit that deleted the file, while it stays deleted.
    deleted_at: Option<usize>,
    /// Whether to build every id's identity timeline, and the timelines so far with the readable version each id
    /// was last seen in.
    timelines_on: bool,
    timelines: HashMap<String, (IdentityTimeline, usize)>,
    /// The time of the version being folded.
    folding_at: Timestamp,
}

impl Fold {
    fn skip(&mut self, commit: &ChainCommit, missing: bool, message: String) {
        self.skipped.push(SkippedVersion {
            commit: commit.id,
            time: commit.time,
            missing,
            message,
        });
    }

    fn provenance(commit: &ChainCommit, stale: bool, restores_completion: bool) -> Option<Box<Provenance>> {
        Some(Box::new(Provenance {
            commit: commit.id.to_string(),
            author: commit.author.clone(),
            status_changes_in_commit: 0,
            stale,
            reverted_by: None,
            restores_completion,
            reopens_in_commit: 0,
            touches_other_files: commit.touches_other,
            other_file_commits: commit.other_file_commits,
            version: 0,
            stale_reopens_in_commit: 0,
            authored: commit.authored,
            updated_after_completion: None,
        }))
    }

    /// Records that `task`'s id names it in readable version `v` (its first occurrence there).
    fn mark_identity(&mut self, v: usize, task: &Task) {
        let title = task.title.trim();
        let at = self.version_meta_time(v);
        let (timeline, last_seen) = match self.timelines.get_mut(&task.id) {
            Some(entry) => entry,
            None => {
                self.timelines.insert(task.id.clone(), (IdentityTimeline::default(), v));
                self.timelines.get_mut(&task.id).expect("inserted")
            }
        };
        if *last_seen + 1 < v {
            let gap = *last_seen + 1;
            timeline.marks.push(IdentityMark {
                version: gap as u64,
                at: self.version_meta[gap].time,
                identity: None,
            });
        }
        *last_seen = v;
        let same = |m: &IdentityMark| {
            m.identity
                .as_ref()
                .is_some_and(|(t, created)| t == title && *created == task.created)
        };
        // Compared before anything is allocated: most versions leave most ids as they were.
        if !timeline.marks.last().is_some_and(same) {
            timeline.marks.push(IdentityMark {
                version: v as u64,
                at,
                identity: Some((title.to_owned(), task.created)),
            });
        }
    }

    /// The time of readable version `v`, which may be the one being folded.
    fn version_meta_time(&self, v: usize) -> Timestamp {
        self.version_meta.get(v).map_or(self.folding_at, |m| m.time)
    }

    /// Every id's timeline, ended by an absence where the id is not in the newest readable version `newest`.
    fn finish_timelines(&mut self, newest: usize) -> HashMap<String, Arc<IdentityTimeline>> {
        let meta = &self.version_meta;
        self.timelines
            .drain()
            .map(|(id, (mut timeline, last_seen))| {
                if last_seen < newest {
                    timeline.marks.push(IdentityMark {
                        version: (last_seen + 1) as u64,
                        at: meta[last_seen + 1].time,
                        identity: None,
                    });
                }
                (id, Arc::new(timeline))
            })
            .collect()
    }

    fn add(&mut self, commit: &ChainCommit, entries: Vec<Entry>) {
        let v = self.readable;
        self.readable += 1;
        self.newest = Some(v);
        let at = commit.time;
        let mut duplicate = false;
        let mut changes = 0u64;
        let mut reopened = 0u64;
        let mut stale_reopened = 0u64;
        self.folding_at = at;
        for (order, Entry { task, record }) in entries.into_iter().enumerate() {
            if self.timelines_on && self.timelines.get(&task.id).is_none_or(|(_, seen)| *seen != v) {
                self.mark_identity(v, &task);
            }
            if self.split_reused_ids
                && let Some(tracked) = self.tasks.get(&task.id)
                && tracked.last_version != v
                && !Arc::ptr_eq(&tracked.task, &task)
                && is_reuse(&tracked.identity, &task, self.identity_rule)
            {
                let mut earlier = self.tasks.remove(&task.id).expect("looked up above");
                let n = self.reuses.entry(task.id.clone()).or_default();
                *n += 1;
                let mut renamed = Arc::unwrap_or_clone(earlier.task);
                renamed.id = format!("{}~{n}", renamed.id);
                earlier.task = Arc::new(renamed);
                earlier.retired = Some(v);
                self.retired.push(earlier);
            }
            match self.tasks.get_mut(&task.id) {
                Some(tracked) if tracked.last_version == v => {
                    if !duplicate {
                        duplicate = true;
                        self.duplicate_versions += 1;
                        self.first_duplicate.get_or_insert((task.id.clone(), commit.id));
                    }
                }
                Some(tracked) => {
                    let same = Arc::ptr_eq(&tracked.task, &task)
                        || (tracked.task.status == task.status && tracked.task.status_category == task.status_category);
                    if !same {
                        let stale = matches!((tracked.max_updated, task.updated), (Some(max), Some(now)) if now < max);
                        let was_closed = tracked.task.status_category.is_closed();
                        let closes = task.status_category.is_closed();
                        if was_closed && !closes {
                            tracked.left_closed_at = Some(tracked.task.completed);
                        }
                        let restores = !was_closed
                            && closes
                            && task.completed.is_some()
                            && tracked.left_closed_at == Some(task.completed);
                        let mut provenance = Self::provenance(commit, stale, restores);
                        if was_closed
                            && !closes
                            && let (Some(p), Some(updated), Some(completed)) =
                                (provenance.as_deref_mut(), task.updated, tracked.task.completed)
                        {
                            p.updated_after_completion = Some(updated.duration_since(completed).as_secs());
                        }
                        tracked.history.push(StatusChange {
                            at,
                            from: Some(tracked.task.status.clone()),
                            to: task.status.clone(),
                            to_category: task.status_category,
                            provenance,
                        });
                        tracked.change_versions.push(v);
                        changes += 1;
                        reopened += u64::from(was_closed && !closes);
                        stale_reopened += u64::from(stale && was_closed && !closes);
                    }
                    tracked.max_updated = tracked.max_updated.max(task.updated);
                    tracked.task = task;
                    tracked.record = record;
                    tracked.last_version = v;
                    tracked.order = order;
                }
                None => {
                    let own = if task.status_category.is_closed() {
                        task.completed
                    } else {
                        task.created
                    };
                    let (task_title, task_created) = (task.title.trim().to_owned(), task.created);
                    let first = StatusChange {
                        at: own.map_or(at, |own| own.min(at)),
                        from: None,
                        to: task.status.clone(),
                        to_category: task.status_category,
                        provenance: Self::provenance(commit, false, false),
                    };
                    let base_id = task.id.clone();
                    self.tasks.insert(
                        task.id.clone(),
                        Tracked {
                            max_updated: task.updated,
                            task,
                            record,
                            first_seen: at,
                            history: vec![first],
                            change_versions: vec![v],
                            last_version: v,
                            order,
                            left_closed_at: None,
                            retired: None,
                            identity: (task_title, task_created),
                            base_id,
                        },
                    );
                }
            }
        }
        self.version_meta.push(VersionMeta {
            commit: commit.id,
            time: at,
            status_changes: changes,
            reopens: reopened,
            stale_reopens: stale_reopened,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::board::StatusCategory;

    #[test]
    fn the_sync_branch_is_the_top_level_key_of_the_beads_config() {
        let config = |text: &str| sync_branch_in_config(text);
        // As `bd init --branch` writes it, and as hand-edited files have it.
        assert_eq!(
            config("# comment\nsync-branch: \"beads-sync\"\n").as_deref(),
            Some("beads-sync")
        );
        assert_eq!(
            config("sync-branch: 'beads-metadata'").as_deref(),
            Some("beads-metadata")
        );
        assert_eq!(
            config("sync.branch: tasks # where bd commits").as_deref(),
            Some("tasks")
        );
        // Commented out, nested under another key, empty, or absent: none.
        assert_eq!(config("# sync-branch: \"beads-sync\"\n"), None);
        assert_eq!(config("sync:\n  sync-branch: beads-sync\n"), None);
        assert_eq!(config("sync-branch: \"\"\n"), None);
        assert_eq!(config("issue-prefix: bd\n"), None);
    }

    fn change(at: &str, from: Option<&str>, to: &str, to_category: StatusCategory) -> StatusChange {
        StatusChange {
            at: at.parse().unwrap(),
            from: from.map(str::to_owned),
            to: to.to_owned(),
            to_category,
            provenance: None,
        }
    }

    #[test]
    fn paths_are_normalised() {
        assert_eq!(normalize("./.beads//issues.jsonl"), ".beads/issues.jsonl");
        assert_eq!(normalize("data/"), "data");
        assert_eq!(normalize("."), "");
    }

    #[test]
    fn reopens_are_changes_out_of_a_closed_category() {
        use StatusCategory::*;
        let history = [
            change("2025-11-01T00:00:00Z", None, "open", Todo),
            change("2025-11-02T00:00:00Z", Some("open"), "closed", Done),
            change("2025-11-03T00:00:00Z", Some("closed"), "tombstone", Cancelled),
            change("2025-11-04T00:00:00Z", Some("tombstone"), "open", Todo),
            change("2025-11-05T00:00:00Z", Some("open"), "closed", Done),
            change("2025-11-06T00:00:00Z", Some("closed"), "weird", Unknown),
        ];
        let at: Vec<String> = reopens(&history).iter().map(ToString::to_string).collect();
        assert_eq!(at, ["2025-11-04T00:00:00Z", "2025-11-06T00:00:00Z"]);
    }

    #[test]
    fn the_fold_follows_statuses_and_fills_dates() {
        let commit = |n: u8, day: u32| ChainCommit {
            id: ObjectId::from_bytes_or_panic(&[n; 20]),
            tree: ObjectId::empty_tree(gix::hash::Kind::Sha1),
            time: format!("2025-11-{day:02}T12:00:00Z").parse().unwrap(),
            author: "Ada".to_owned(),
            authored: format!("2025-11-{day:02}T12:00:00Z").parse().unwrap(),
            reverts: Vec::new(),
            touches_other: false,
            other_file_commits: 0,
        };
        let task = |id: &str, status: &str, category: StatusCategory| {
            let mut task = Task::new(id, Record::Line(1));
            task.status = status.to_owned();
            task.status_category = category;
            Entry {
                task: Arc::new(task),
                record: Record::Line(1),
            }
        };
        let plain = |history: &[StatusChange]| -> Vec<StatusChange> {
            history
                .iter()
                .map(|c| StatusChange {
                    provenance: None,
                    ..c.clone()
                })
                .collect()
        };
        let mut fold = Fold::default();
        fold.add(&commit(1, 1), vec![task("a", "open", StatusCategory::Todo)]);
        fold.add(
            &commit(2, 2),
            vec![
                task("a", "closed", StatusCategory::Done),
                task("b", "closed", StatusCategory::Done),
                task("b", "open", StatusCategory::Todo),
            ],
        );
        fold.skip(&commit(3, 3), false, "broken".to_owned());
        fold.add(&commit(4, 4), vec![task("a", "open", StatusCategory::Todo)]);
        assert_eq!(fold.duplicate_versions, 1);
        assert_eq!(fold.first_duplicate, Some(("b".to_owned(), commit(2, 2).id)));
        let none = |_: &ObjectId| None;
        let a = fold
            .tasks
            .remove("a")
            .unwrap()
            .finish(2, &fold.version_meta, &none, None);
        let commits: Vec<&str> = a
            .history
            .iter()
            .flatten()
            .map(|c| c.provenance.as_ref().unwrap().commit.as_str())
            .collect();
        assert_eq!(
            commits,
            [
                commit(1, 1).id.to_string(),
                commit(2, 2).id.to_string(),
                commit(4, 4).id.to_string()
            ]
        );
        assert_eq!(
            plain(a.history.as_deref().unwrap()),
            [
                change("2025-11-01T12:00:00Z", None, "open", StatusCategory::Todo),
                change("2025-11-02T12:00:00Z", Some("open"), "closed", StatusCategory::Done),
                change("2025-11-04T12:00:00Z", Some("closed"), "open", StatusCategory::Todo),
            ]
        );
        assert_eq!(a.reopened_at, ["2025-11-04T12:00:00Z".parse::<Timestamp>().unwrap()]);
        assert_eq!(a.created, Some("2025-11-01T12:00:00Z".parse().unwrap()));
        assert_eq!(a.completed, None);
        let b = fold.tasks.remove("b").unwrap();
        assert_eq!((b.last_version, b.order, b.record), (1, 1, Record::Line(1)));
        let b = b.finish(2, &fold.version_meta, &none, None);
        assert_eq!(b.status, "closed");
        assert_eq!(b.completed, Some("2025-11-02T12:00:00Z".parse().unwrap()));
    }

    /// Reads `versions` in order as `parse_version` does and checks each against [`board::read`] on the whole
    /// file; returns, per version, how many of its tasks were reused from the previous version.
    fn check_versions(format: Format, versions: &[String]) -> Vec<Option<usize>> {
        let path = Path::new("t.jsonl");
        let tz = TimeZone::UTC;
        let mut previous = LineCache::default();
        let mut before: Vec<Arc<Task>> = Vec::new();
        let mut reused = Vec::new();
        for (i, text) in versions.iter().enumerate() {
            let expected = board::read(path, text.as_bytes(), format, &tz)
                .map(|board| board.tasks)
                .map_err(|err| err.to_string());
            let parsed = parse_version(path, text.as_bytes().to_vec(), format, &tz, &mut previous);
            reused.push(parsed.as_ref().ok().map(|entries| {
                let count = entries
                    .iter()
                    .filter(|e| before.iter().any(|b| Arc::ptr_eq(b, &e.task)))
                    .count();
                before = entries.iter().map(|e| Arc::clone(&e.task)).collect();
                count
            }));
            let got = parsed.map(|entries| {
                entries
                    .into_iter()
                    .map(|entry| Task {
                        record: entry.record,
                        ..Arc::unwrap_or_clone(entry.task)
                    })
                    .collect::<Vec<_>>()
            });
            assert_eq!(got, expected, "{format} version {i}");
        }
        reused
    }

    fn join(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Reading versions line by line against the previous one gives what reading each whole file gives.
    #[test]
    fn reused_lines_read_as_the_whole_file_does() {
        let beads: Vec<String> = (0..10)
            .map(|i| {
                format!(
                    "{{\"id\":\"bd-{i}\",\"status\":\"open\",\"created_at\":\"2025-11-0{}T00:00:00Z\"}}",
                    i % 9 + 1
                )
            })
            .collect();
        let mut v1 = beads.clone();
        v1[3] = r#"{"id":"bd-3","status":"closed","closed_at":"2025-11-09T00:00:00Z"}"#.to_owned();
        let mut v2 = v1.clone();
        v2.insert(5, r#"{"id":"bd-10","status":"in_progress"}"#.to_owned());
        v2[7].push('\r');
        v2.insert(8, "  ".to_owned());
        let mut v3 = v2.clone();
        v3.remove(1);
        let with = |line: &str| {
            let mut v = v3.clone();
            v.insert(4, line.to_owned());
            join(&v)
        };
        let versions = [
            join(&beads),
            join(&v1),
            format!("\u{FEFF}{}", join(&v2)),
            join(&v3),
            with(r#"{"id":"bd-11","#),
            with("\u{FEFF}{\"id\":\"bd-12\"}"),
            with(r#"{"id":"bd-13","created_at":"yesterday"}"#),
            with(&v3[2]),
            join(&v3).trim_end().to_owned(),
        ];
        let reused = check_versions(Format::Beads, &versions);
        assert_eq!(
            reused,
            [
                Some(0),
                Some(9),
                Some(10),
                Some(10),
                None,
                None,
                None,
                Some(11),
                Some(10)
            ]
        );

        let jsonl: Vec<String> = (0..10)
            .map(|i| format!("{{\"id\":\"T-{i}\",\"status\":\"todo\"}}"))
            .collect();
        let mut v1 = jsonl.clone();
        v1.push(r#"{"status":"done"}"#.to_owned());
        let mut v2 = v1.clone();
        v2[0] = r#"{"id":"T-0","status":"done"}"#.to_owned();
        let mut v3 = jsonl.clone();
        v3[4] = r#"{"id":"line 1","status":"done"}"#.to_owned();
        let mut v4 = v3.clone();
        v4[6] = "[1]".to_owned();
        let versions = [join(&jsonl), join(&v1), join(&v2), join(&v3), join(&v4), join(&jsonl)];
        let reused = check_versions(Format::Jsonl, &versions);
        // A file holding a task without an id (named after its line) is not kept for the next version; a real id
        // "line 1" is kept; a broken version leaves the last readable one to compare with.
        assert_eq!(reused, [Some(0), Some(0), Some(0), Some(0), None, Some(9)]);
    }
}
