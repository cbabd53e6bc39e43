//! The git history scanner (P2): reads a repository's history into [`CommitRow`]s and the changes of chosen
//! commits into [`CommitDiff`]s, with `gix` and `rayon`. It only reads and normalises; it knows nothing about
//! experiments.
//!
//! # Rules (what each value means, checked against the `git` binary in `tests/git_scan.rs`)
//!
//! - **Opening** ([`open`]): discovered from a path like `git` does (work tree, subdirectory or bare repository),
//!   with the system, global and user configuration and all `GIT_*` environment variables ignored: only the
//!   repository's own configuration applies, so the result does not depend on whose machine runs the scan.
//! - **Walk** ([`walk`]): every commit reachable from `rev` (default `HEAD`; tags are peeled), or only first
//!   parents. Breadth first, one layer at a time: the commits of a layer are read and decoded in parallel (real
//!   histories have wide layers), or, when the commit-graph file knows them, their parents come from the graph
//!   and the commits are decoded in one parallel pass at the end. Every commit object is read exactly once.
//!   Rows are ordered newest first by committer time, ties in breadth-first walk order (deterministic).
//!   `since`/`until` keep the reachable commits whose committer time lies in the inclusive window; the whole
//!   reachable history is still read. Unlike `git log --since`, the walk does not stop at the first older
//!   commit, so under clock skew it can list commits `git log` misses; with monotonic committer times both
//!   agree. Replace refs apply as in git (gix's object lookups honour them, and then the commit-graph is not
//!   used); the deprecated `info/grafts` file does not.
//! - **Messages**: subject is git's `%s` (the first paragraph, its lines joined with a space; usually the first
//!   line), body is git's `%b`. A message whose `encoding` header names Latin-1 is transcoded as `git log`
//!   does; any other message is decoded as lossy UTF-8, and messages that are not valid UTF-8 are counted.
//!   Trailers follow git's `trailer.c` with its default configuration, as `git log --format=%(trailers:only,
//!   unfold)` shows them: the last paragraph, if it consists only of `Token: value` lines (tokens of ASCII
//!   letters, digits and `-`), or has at least one git-generated line (`Signed-off-by: `, `(cherry picked from
//!   commit `) and at least 25% trailer lines; continuation lines are unfolded; lines without a separator such as
//!   `(cherry picked from commit …)` are not trailers. Limits: a NUL byte ends the trailer search, as in git,
//!   but subject and body keep what follows it (git's `%s`/`%b` stop there); repository-configured `trailer.*`
//!   keys and separators are ignored.
//! - **Shallow clones**: the commits of the `shallow` file are shown as `git log` shows them, without parents;
//!   commits beyond the boundary are absent and [`History::shallow`] says the history is truncated. Their diffs
//!   are against the empty tree, as `git show` does.
//! - **Diffs** ([`diffs`]): against the first parent (root and shallow commits: against the empty tree), no
//!   rename detection, so the paths are exactly those of `git diff --name-only --no-renames <sha>^1 <sha>`
//!   (for non-merges also `git show --name-only --no-renames --format= <sha>`). Modes are canonicalised like
//!   git (`100664` is `100644`). A mode-only change, and any change between file, symlink and submodule, is
//!   [`FileChange::TypeChanged`](super::commits::FileChange::TypeChanged); an executable-bit change together with new content is `Modified`, as in git.
//!   With [`DiffDetail::Lines`] the line counts equal `git diff --numstat` with git's default Myers diff:
//!   lines end at `\n`, a missing final newline makes a line differ, a NUL byte in the first 8000 bytes of
//!   either side makes the file binary (counts 0, git prints `-`). Blobs over git's default 512 MiB
//!   `core.bigFileThreshold` are binary too, as in git. Limits: `.gitattributes` (`binary`, `-diff`, text
//!   conversion) are not applied; submodule entries count no lines (git counts one `Subproject commit` line),
//!   and a submodule side of a type change contributes nothing. With [`DiffDetail::Paths`] no blob is read:
//!   counts are 0 and `binary` is false. Line hashes follow our Myers edit script, before
//!   git's cosmetic slider heuristics, so for ambiguous hunks their order can be a rotation of git's.
//!   A restricted diff ([`DiffRequest::among`]) lists exactly what the whole diff lists at its paths, reading
//!   only the trees on the way to them, and none when the commit-graph's changed-path Bloom filters
//!   ([`super::changed_paths`]) rule every path out (never for a shallow commit, whose diff is against nothing).
//!   [`diffs_of_known`] takes the tree and first parent of walked commits from [`KnownCommits`] instead of
//!   reading the commit objects again.
//! - **Paths** are repository-relative, `/`-separated, lossy UTF-8, sorted by the bytes of that string.
//! - **Errors** name the path, the revision or the missing object; no input makes the scanner panic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gix::objs::tree::EntryKind;
use rayon::prelude::*;

use super::changed_paths::ChangedPaths;
use super::commits::{CommitDiff, CommitRow, DiffDetail, DiffRequest, FileDiff, LineHashes, ObjectId};

mod line_diff;
mod message;
mod repository;
mod tree_diff;
mod walk;

use line_diff::*;
use message::*;
pub use repository::release_pack_pages;
use repository::*;
pub(crate) use repository::{PerThread, thread_handle_with};
use tree_diff::*;
use walk::*;

/// Which commits [`walk`] visits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkOptions {
    /// The revision to start from, in `git rev-parse` syntax; `None` means `HEAD`.
    pub rev: Option<String>,
    /// Follow only the first parent of each commit, like `git log --first-parent`.
    pub first_parent: bool,
    /// Keep commits whose committer time is at or after this (Unix seconds), like `git log --since`.
    pub since: Option<i64>,
    /// Keep commits whose committer time is at or before this (Unix seconds), like `git log --until`.
    pub until: Option<i64>,
}

/// What `HEAD` is, so that a report can say what was scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadState {
    /// `HEAD` names a branch that has no commit yet (a new or empty repository).
    Unborn { branch: String },
    /// `HEAD` points at a commit directly.
    Detached,
    /// `HEAD` is the named branch (short name, `main`).
    Branch(String),
}

/// The walked history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// Newest first by committer time; ties in walk order.
    pub commits: Vec<CommitRow>,
    /// The commit `rev` resolved to; `None` when `HEAD` is unborn.
    pub tip: Option<ObjectId>,
    pub head: HeadState,
    /// The repository is a shallow clone: the history is truncated at its boundary commits.
    pub shallow: bool,
    /// How many of the listed commits have a message that is not valid UTF-8 (decoded lossily or from Latin-1).
    pub non_utf8_messages: u64,
    /// The revision that was walked, as given (`HEAD` by default).
    pub rev: String,
    /// The listed commits whose message is not valid UTF-8.
    pub non_utf8_ids: Vec<ObjectId>,
    /// How many of the listed commits came from [`RememberedCommits`] rather than from the repository.
    pub remembered: u64,
}

/// Commits an earlier run read (P2's commit cache): the walk takes their parents and rows from here and reads
/// only the others. A commit's id names its parents and message, so a remembered row is what reading it gives.
pub trait RememberedCommits: Sync {
    /// A remembered commit: its slot (for [`Self::take_row`]), its committer time and its parents, in order.
    fn find(&self, id: &ObjectId) -> Option<(u32, i64, &[ObjectId])>;
    /// The row of the commit at `slot` and whether its message is not valid UTF-8, moved out (the walk asks once
    /// per slot; what is left behind is not a row).
    fn take_row(&mut self, slot: u32) -> (CommitRow, bool);
}

/// Nothing remembered.
pub struct NothingRemembered;

impl RememberedCommits for NothingRemembered {
    fn find(&self, _: &ObjectId) -> Option<(u32, i64, &[ObjectId])> {
        None
    }

    fn take_row(&mut self, _: u32) -> (CommitRow, bool) {
        unreachable!("nothing was found")
    }
}

/// Why a scan failed. Every message names the path, the revision or the object concerned.
#[derive(Debug, thiserror::Error)]
pub enum GitScanError {
    /// No repository contains `path` (or it cannot be opened).
    #[error("{}: not a git repository ({message})", .path.display())]
    NotARepository { path: PathBuf, message: String },
    /// The repository path does not exist at all.
    #[error("{}: the repository path does not exist", .path.display())]
    NoSuchPath { path: PathBuf },
    /// The revision does not resolve, or does not name a commit.
    #[error("revision {rev:?}: {message}")]
    Rev { rev: String, message: String },
    /// An object the scan needs is absent (a broken or partial clone); `context` says what needed it.
    #[error("object {id} is missing from the repository ({context})")]
    MissingObject { id: ObjectId, context: String },
    /// An object is present but malformed or of the wrong kind.
    #[error("object {id} cannot be read: {message}")]
    Corrupt { id: ObjectId, message: String },
    /// Anything else the repository refused (unreadable `HEAD` or `shallow` file, …).
    #[error("{}: {message}", .path.display())]
    Git { path: PathBuf, message: String },
}

/// Opens the repository containing `path` (a work tree, a directory inside one, or a bare repository), isolated
/// from the system, global and user git configuration and from `GIT_*` environment variables.
pub fn open(path: &Path) -> Result<gix::ThreadSafeRepository, GitScanError> {
    let trust = gix::sec::trust::Mapping {
        full: gix::open::Options::isolated(),
        reduced: gix::open::Options::isolated(),
    };
    if std::fs::symlink_metadata(path).is_err_and(|error| error.kind() == std::io::ErrorKind::NotFound) {
        return Err(GitScanError::NoSuchPath {
            path: path.to_path_buf(),
        });
    }
    gix::ThreadSafeRepository::discover_opts(path, Default::default(), trust).map_err(|err| {
        GitScanError::NotARepository {
            path: path.to_path_buf(),
            message: err.to_string(),
        }
    })
}

/// The subject of each commit `ids` names (full hex), decoded as the walk decodes it. An id that names no readable
/// commit (a mirror may lack it) is left out.
pub fn commit_subjects(repo: &gix::ThreadSafeRepository, ids: &[&str]) -> std::collections::BTreeMap<String, String> {
    let repo = repo.to_thread_local();
    ids.iter()
        .filter_map(|hex| {
            let id = ObjectId::from_hex(hex.as_bytes()).ok()?;
            let object = repo.find_object(id).ok()?;
            if object.kind != gix::object::Kind::Commit {
                return None;
            }
            let header = parse_header(&object.data).ok()?;
            let (message, _) = decode_message(header.message, header.encoding);
            Some(((*hex).to_owned(), parse_message(message.as_bytes()).subject))
        })
        .collect()
}

/// Walks the history reachable from `options.rev` and decodes every commit (in parallel).
pub fn walk(repo: &gix::ThreadSafeRepository, options: &WalkOptions) -> Result<History, GitScanError> {
    walk_remembering(repo, options, &mut NothingRemembered).map(|(history, _)| history)
}

/// [`walk`], reading only the commits `remembered` does not hold (none, in a shallow repository: its boundary
/// commits' parents depend on the clone's depth). The history is the same as [`walk`]'s, in the same order; beside
/// it, per listed commit, the slot it came from in `remembered` ([`NOT_REMEMBERED`] for a commit read).
pub fn walk_remembering(
    repo: &gix::ThreadSafeRepository,
    options: &WalkOptions,
    remembered: &mut dyn RememberedCommits,
) -> Result<(History, Vec<u32>), GitScanError> {
    let local = repo.to_thread_local();
    let rev = options.rev.clone().unwrap_or_else(|| "HEAD".to_owned());
    let head = head_state(&local)?;
    let shallow_commits = shallow_commits(&local)?;
    let mut history = History {
        commits: Vec::new(),
        tip: None,
        head,
        shallow: !shallow_commits.is_empty(),
        non_utf8_messages: 0,
        rev,
        non_utf8_ids: Vec::new(),
        remembered: 0,
    };
    if history.rev == "HEAD" && matches!(history.head, HeadState::Unborn { .. }) {
        return Ok((history, Vec::new()));
    }
    let objects = Objects::new(&local);
    let tip = resolve_commit(&local, &objects, &history.rev)?;
    history.tip = Some(tip);
    let mut nothing = NothingRemembered;
    let remembered: &mut dyn RememberedCommits = if history.shallow { &mut nothing } else { remembered };
    let walked = Walk {
        handles: PerThread::new(|| thread_handle(repo)),
        options,
        shallow: &shallow_commits,
        remembered: &*remembered,
    }
    .run(&local, tip)?;

    let in_window =
        |time: i64| options.since.is_none_or(|since| time >= since) && options.until.is_none_or(|until| time <= until);
    // Newest first; equal committer times keep the walk order. The rows are large: their order is found first (a
    // remembered commit's time came with its parents), then each row is moved once, from the walk or the remembered
    // commits, to its place.
    let mut walked = walked;
    let mut order: Vec<(std::cmp::Reverse<i64>, u32)> = Vec::with_capacity(walked.len());
    for (index, commit) in walked.iter().enumerate() {
        let time = match commit {
            Walked::Read(None) => continue,
            Walked::Read(Some(decoded)) => decoded.row.commit_time,
            Walked::Remembered(_, time) if !in_window(*time) => continue,
            Walked::Remembered(_, time) => *time,
        };
        order.push((std::cmp::Reverse(time), index as u32));
    }
    order.sort_unstable();
    let mut slots = Vec::with_capacity(order.len());
    history.commits = Vec::with_capacity(order.len());
    // Messages that are not UTF-8, by walk index: listed in walk order.
    let mut non_utf8: Vec<(u32, ObjectId)> = Vec::new();
    for &(_, index) in &order {
        let (row, is_non_utf8, slot) = match std::mem::replace(&mut walked[index as usize], Walked::Read(None)) {
            Walked::Read(Some(decoded)) => (decoded.row, decoded.non_utf8, NOT_REMEMBERED),
            Walked::Remembered(slot, _) => {
                history.remembered += 1;
                let (row, is_non_utf8) = remembered.take_row(slot);
                (row, is_non_utf8, slot)
            }
            Walked::Read(None) => unreachable!("each walked commit is ordered once"),
        };
        if is_non_utf8 {
            non_utf8.push((index, row.id));
        }
        history.commits.push(row);
        slots.push(slot);
    }
    non_utf8.sort_unstable_by_key(|&(index, _)| index);
    history.non_utf8_messages = non_utf8.len() as u64;
    history.non_utf8_ids = non_utf8.into_iter().map(|(_, id)| id).collect();
    Ok((history, slots))
}

/// The slot [`walk_remembering`] gives a commit it read rather than took from the remembered ones.
pub const NOT_REMEMBERED: u32 = u32::MAX;

/// Computes what each commit in `ids` changed against its first parent (root and shallow commits: against the
/// empty tree). The result is in the order of `ids`. Tree diffs run in parallel over commits; with
/// [`DiffDetail::Lines`] the blob diffs then run in parallel over all changed files, so one commit touching tens
/// of thousands of files is spread over all cores too.
pub fn diffs(
    repo: &gix::ThreadSafeRepository,
    ids: &[ObjectId],
    detail: DiffDetail,
) -> Result<Vec<CommitDiff>, GitScanError> {
    let requests: Vec<DiffRequest> = ids.iter().copied().map(DiffRequest::whole).collect();
    diffs_for(repo, &requests, detail)
}

/// [`diffs`] with, per commit, the files that need line detail (with [`DiffDetail::Lines`]): the blob diffs of
/// the other files are skipped, which is most of the cost of a line diff.
pub fn diffs_for(
    repo: &gix::ThreadSafeRepository,
    requests: &[DiffRequest],
    detail: DiffDetail,
) -> Result<Vec<CommitDiff>, GitScanError> {
    diffs_of_known(repo, &KnownCommits::default(), requests, detail)
}

/// The root tree and first parent of commits [`walk`] has read, so that their diffs need not read the commit
/// objects again: a restricted diff ([`DiffRequest::among`]) costs little more than that (on git.git, reading
/// the commit and its parent was a third of each).
#[derive(Debug, Default)]
pub struct KnownCommits(Vec<(ObjectId, ObjectId, Option<ObjectId>)>);

impl KnownCommits {
    pub fn of(commits: &[CommitRow]) -> Self {
        // Sorted by id and bisected: on git.git 81,966 entries of 61 bytes, 5 MB, where a hash map's 131,072
        // buckets would take 8 MB; and this lives through the diffs, when the run's memory peaks.
        let mut known: Vec<_> = commits
            .iter()
            .filter_map(|commit| Some((commit.id, commit.tree?, commit.parents.first().copied())))
            .collect();
        known.par_sort_unstable_by_key(|(id, ..)| *id);
        known.dedup_by_key(|(id, ..)| *id);
        KnownCommits(known)
    }

    fn get(&self, id: &gix::oid) -> Option<(ObjectId, Option<ObjectId>)> {
        let index = self.0.binary_search_by(|(known, ..)| known.as_ref().cmp(id)).ok()?;
        let (_, tree, parent) = self.0[index];
        Some((tree, parent))
    }
}

/// [`diffs_for`], taking the trees and first parents of the commits in `known` from there.
pub fn diffs_of_known(
    repo: &gix::ThreadSafeRepository,
    known: &KnownCommits,
    requests: &[DiffRequest],
    detail: DiffDetail,
) -> Result<Vec<CommitDiff>, GitScanError> {
    let (out, mut unreadable) = diffs_skipping_missing(repo, known, requests, detail)?;
    match unreadable.pop() {
        None => Ok(out),
        Some((_, error)) => Err(error),
    }
}

/// Commits whose diff needs a missing object, with the error naming it.
pub type Unreadable = Vec<(ObjectId, GitScanError)>;

/// The paths a diff was restricted to ([`DiffRequest::only_paths`]).
type Scope = Option<Arc<std::collections::BTreeSet<String>>>;

/// [`diffs_of_known`] on a repository that may lack some objects (a partial or damaged clone): a commit whose diff
/// needs a missing object is left out of the result and returned beside it with the error naming the object,
/// sorted by commit id. Any other error ends the scan.
pub fn diffs_skipping_missing(
    repo: &gix::ThreadSafeRepository,
    known: &KnownCommits,
    requests: &[DiffRequest],
    detail: DiffDetail,
) -> Result<(Vec<CommitDiff>, Unreadable), GitScanError> {
    diffs_remembering(repo, known, requests, detail, &mut DiffMemo::default())
}

/// What the diff batches of one run have computed, so that a later batch does not compute it again: the tree diff
/// of each commit with the path set it was restricted to, and the line detail of the blob pairs of the last line
/// batch. A run asks for the same work more than once: the fixes' whole diffs first for their paths, then for
/// their lines; the candidates' restricted diffs first to learn which touch a fix's file, then for the lines of
/// those; and a fix is often a candidate in a later fix's window (on beads 42% of the candidates' blob pairs were
/// diffed before, on frankensearch 33%). Both are functions of their inputs (the commit and path set; the blobs' contents), so a
/// remembered answer is the answer. Failures are not remembered (they are computed again, naming the same object).
#[derive(Default)]
pub struct DiffMemo {
    trees: HashMap<ObjectId, Vec<(Scope, Vec<PathChange>)>>,
    lines: HashMap<(Option<ObjectId>, Option<ObjectId>), LineDetail>,
}

impl DiffMemo {
    /// The remembered diff of `request`. A remembered path set equal to the request's but not the same is replaced
    /// by the request's, so that the earlier batch's copy is freed (on git.git thousands of sets).
    fn tree(&mut self, request: &DiffRequest) -> Option<&Vec<PathChange>> {
        let entry =
            self.trees
                .get_mut(&request.id)?
                .iter_mut()
                .find(|(scope, _)| match (scope, &request.only_paths) {
                    (None, None) => true,
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                    _ => false,
                })?;
        entry.0.clone_from(&request.only_paths);
        Some(&entry.1)
    }

    /// Remembers the diff of `request`, except a restricted diff that found nothing: a later batch asks again only
    /// for the candidates that touched a path (and remembering the others kept their path sets alive).
    fn remember_tree(&mut self, request: &DiffRequest, changes: &[PathChange]) {
        if (request.only_paths.is_some() && changes.is_empty()) || self.tree(request).is_some() {
            return;
        }
        self.trees
            .entry(request.id)
            .or_default()
            .push((request.only_paths.clone(), changes.to_vec()));
    }
}

/// The contents a blob diff of `change` compares: a side's blob, or `None` for an absent side or a submodule
/// (both read as empty).
fn contents(change: &PathChange) -> (Option<ObjectId>, Option<ObjectId>) {
    let content =
        |side: Option<(EntryKind, ObjectId)>| side.filter(|(kind, _)| *kind != EntryKind::Commit).map(|(_, id)| id);
    (content(change.old), content(change.new))
}

/// [`diffs_skipping_missing`], taking what `memo` remembers from earlier batches of the same run instead of
/// computing it again, and adding this batch's work to it.
pub fn diffs_remembering(
    repo: &gix::ThreadSafeRepository,
    known: &KnownCommits,
    requests: &[DiffRequest],
    detail: DiffDetail,
    memo: &mut DiffMemo,
) -> Result<(Vec<CommitDiff>, Unreadable), GitScanError> {
    let ids: Vec<ObjectId> = requests.iter().map(|request| request.id).collect();
    let shallow_commits = shallow_commits(&repo.to_thread_local())?;
    let mut results: Vec<Option<Result<Vec<PathChange>, GitScanError>>> = requests
        .iter()
        .map(|request| memo.tree(request).map(|changes| Ok(changes.clone())))
        .collect();
    let todo: Vec<usize> = (0..requests.len()).filter(|&i| results[i].is_none()).collect();
    if !todo.is_empty() {
        let changed_paths = ChangedPaths::of_repository(&repo.to_thread_local());
        let differs = PerThread::new(|| TreeDiffer::new(thread_handle(repo), known, &changed_paths));
        let computed: Vec<Result<Vec<PathChange>, GitScanError>> = todo
            .par_iter()
            .map(|&i| {
                let request = &requests[i];
                let shallow = shallow_commits.binary_search(&request.id).is_ok();
                differs.with(|differ| match &request.only_paths {
                    None => differ.changes(request.id, shallow),
                    Some(paths) => differ.changes_among(request.id, shallow, paths),
                })
            })
            .collect();
        for (i, result) in todo.into_iter().zip(computed) {
            if let Ok(changes) = &result {
                memo.remember_tree(&requests[i], changes);
            }
            results[i] = Some(result);
        }
    }
    let mut unreadable: Vec<(ObjectId, GitScanError)> = Vec::new();
    let mut changes: Vec<Option<Vec<PathChange>>> = Vec::with_capacity(results.len());
    for (id, result) in ids.iter().zip(results) {
        match result.expect("every request was answered") {
            Ok(files) => changes.push(Some(files)),
            Err(error @ GitScanError::MissingObject { .. }) => {
                unreadable.push((*id, error));
                changes.push(None);
            }
            Err(error) => return Err(error),
        }
    }

    let mut out: Vec<Option<CommitDiff>> = ids
        .iter()
        .zip(&changes)
        .map(|(id, files)| {
            files.as_ref().map(|files| CommitDiff {
                id: *id,
                files: files
                    .iter()
                    .map(|change| FileDiff {
                        path: change.path.clone(),
                        change: change.change,
                        lines_added: 0,
                        lines_removed: 0,
                        binary: false,
                        added_line_hashes: LineHashes::default(),
                        removed_line_hashes: LineHashes::default(),
                    })
                    .collect(),
            })
        })
        .collect();
    if detail == DiffDetail::Lines {
        let work: Vec<(usize, usize)> = changes
            .iter()
            .enumerate()
            .filter_map(|(commit, files)| files.as_ref().map(|files| (commit, files)))
            .flat_map(|(commit, files)| {
                let scope = requests[commit].line_paths.as_ref();
                (0..files.len())
                    .filter(move |&file| scope.is_none_or(|paths| paths.contains(&files[file].path)))
                    .map(move |file| (commit, file))
            })
            .collect();
        let change_of =
            |(commit, file): (usize, usize)| &changes[commit].as_ref().expect("only read commits have work")[file];
        let mut details: Vec<Option<Result<LineDetail, GitScanError>>> = work
            .iter()
            .map(|&item| memo.lines.get(&contents(change_of(item))).cloned().map(Ok))
            .collect();
        // Only the previous line batch is remembered: holding every batch's line hashes twice (here and in the
        // caller's diffs) put git.git's peak memory 20 MiB higher.
        memo.lines = HashMap::new();
        // The rest is diffed grouped by path, newest commit first, so that a worker diffs a file's versions one
        // after the other and reads each blob once ([`BlobDiffer`] keeps the last few): a version is the new side
        // of one change and the old side of the next. The results go back to the order of `work`, so that the
        // error kept for a commit is the same whatever the order.
        let mut todo: Vec<usize> = (0..work.len()).filter(|&i| details[i].is_none()).collect();
        todo.sort_by(|&a, &b| {
            let (ca, cb) = (change_of(work[a]), change_of(work[b]));
            ca.path
                .as_bytes()
                .cmp(cb.path.as_bytes())
                .then(work[a].0.cmp(&work[b].0))
        });
        if !todo.is_empty() {
            let differs = PerThread::new(|| BlobDiffer::new(thread_handle(repo)));
            let computed: Vec<Result<LineDetail, GitScanError>> = todo
                .par_iter()
                .map(|&i| {
                    let (commit, file) = work[i];
                    differs.with(|differ| differ.lines(ids[commit], change_of((commit, file))))
                })
                .collect();
            for (i, result) in todo.into_iter().zip(computed) {
                if let Ok(lines) = &result {
                    memo.lines
                        .entry(contents(change_of(work[i])))
                        .or_insert_with(|| lines.clone());
                }
                details[i] = Some(result);
            }
        }
        for (&(commit, file), lines) in work.iter().zip(details) {
            let lines = match lines.expect("every blob pair was diffed") {
                Ok(lines) => lines,
                Err(error @ GitScanError::MissingObject { .. }) => {
                    if out[commit].take().is_some() {
                        unreadable.push((ids[commit], error));
                    }
                    continue;
                }
                Err(error) => return Err(error),
            };
            let Some(diff) = out[commit].as_mut() else { continue };
            let entry = &mut diff.files[file];
            entry.lines_added = lines.added;
            entry.lines_removed = lines.removed;
            entry.binary = lines.binary;
            entry.added_line_hashes = lines.added_hashes.into();
            entry.removed_line_hashes = lines.removed_hashes.into();
        }
    }
    unreadable.sort_by_key(|(id, _)| *id);
    Ok((out.into_iter().flatten().collect(), unreadable))
}
