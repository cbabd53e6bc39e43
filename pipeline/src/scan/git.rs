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
//!   [`FileChange::TypeChanged`]; an executable-bit change together with new content is `Modified`, as in git.
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

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::diff::blob::Token;
use gix::objs::tree::{EntryKind, EntryMode};
use rayon::prelude::*;

use super::changed_paths::{ChangedPaths, PathKey};
use super::commits::{CommitDiff, CommitRow, DiffDetail, DiffRequest, FileChange, FileDiff, ObjectId, Trailer};

/// Delta cache budget, shared by the worker threads (each gets a share between 4 and 128 MiB; git's
/// `core.deltaBaseCacheLimit` is 96 MiB per process). Since the cache holds every base of a delta chain
/// (`vendor/README.md`), a small one does nearly as well as a large one. On git.git (thin-LTO build, 2 threads):
/// 128 MiB: 3.6 s, 6.1 s of CPU, 593 MiB peak RSS; 32 MiB: 3.55 s, 6.2 s, 488 MiB; 16 MiB: 3.6 s, 6.4 s,
/// 470 MiB (BENCHMARKS.md).
const DELTA_CACHE_TOTAL_BYTES: usize = 16 * 1024 * 1024;
/// git's `FIRST_FEW_BYTES`: a NUL byte in this prefix makes a blob binary.
const BINARY_PROBE_BYTES: usize = 8000;
/// git's default `core.bigFileThreshold`: larger blobs are binary (and never line-diffed).
const BIG_FILE_THRESHOLD: usize = 512 * 1024 * 1024;
/// Tags pointing at tags are followed this deep at most (a cycle cannot hang the scan).
const MAX_TAG_CHAIN: usize = 64;

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

/// Walks the history reachable from `options.rev` and decodes every commit (in parallel).
pub fn walk(repo: &gix::ThreadSafeRepository, options: &WalkOptions) -> Result<History, GitScanError> {
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
    };
    if history.rev == "HEAD" && matches!(history.head, HeadState::Unborn { .. }) {
        return Ok(history);
    }
    let objects = Objects::new(&local);
    let tip = resolve_commit(&local, &objects, &history.rev)?;
    history.tip = Some(tip);
    let walk = Walk {
        handles: PerThread::new(|| thread_handle(repo)),
        options,
        shallow: &shallow_commits,
    };
    let decoded = walk.run(&local, tip)?;

    let mut commits = Vec::with_capacity(decoded.len());
    for decoded in decoded.into_iter().flatten() {
        history.non_utf8_messages += u64::from(decoded.non_utf8);
        commits.push(decoded.row);
    }
    // Stable: equal committer times keep the walk order.
    commits.sort_by_key(|row| std::cmp::Reverse(row.commit_time));
    history.commits = commits;
    Ok(history)
}

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
                        added_line_hashes: Vec::new(),
                        removed_line_hashes: Vec::new(),
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
            entry.added_line_hashes = lines.added_hashes;
            entry.removed_line_hashes = lines.removed_hashes;
        }
    }
    unreadable.sort_by_key(|(id, _)| *id);
    Ok((out.into_iter().flatten().collect(), unreadable))
}

// ---------------------------------------------------------------------------------------------------------------
// Repository access

/// A per-thread handle with a [`DeltaCache`]: gix handles are cheap to create and must not be shared across
/// threads, so every rayon worker gets its own. No object cache: the delta cache holds every object a delta chain
/// produced (with the patched gix-pack, `vendor/README.md`), so a second cache of the same trees only cost copies
/// (on git.git, 4.7 s without it against 5.0 s with 8 MiB per thread).
fn thread_handle(repo: &gix::ThreadSafeRepository) -> gix::Repository {
    let share = (DELTA_CACHE_TOTAL_BYTES / rayon::current_num_threads().max(1)).clamp(4 << 20, 128 << 20);
    thread_handle_with(repo, 0, share)
}

/// A per-thread handle with an object cache of `object_cache` bytes and a [`DeltaCache`] of `delta_cache` bytes.
pub(crate) fn thread_handle_with(
    repo: &gix::ThreadSafeRepository,
    object_cache: usize,
    delta_cache: usize,
) -> gix::Repository {
    let mut handle = repo.to_thread_local();
    handle.object_cache_size_if_unset(object_cache);
    handle
        .objects
        .set_pack_cache(move || Box::new(DeltaCache::new(delta_cache)));
    handle
}

/// A memory-capped cache of decoded pack entries, keyed by pack and offset, in the role of git's delta base
/// cache: gix sets none without its `max-performance` feature, which this crate does not enable. gix looks up
/// every entry of a delta chain in it and, with the patched gix-pack (`vendor/README.md`), stores every object
/// the chain produced, its undeltified base included, so reading an older version of a file or tree whose chain
/// passes through a version read before applies one delta instead of inflating the whole chain. Before the patch
/// (only the chain's final object stored) it made tree diffs on git.git 1.7 times and line diffs 1.3 times
/// faster; the patch then took the whole run from 7.9 s to 5.1 s (thin-LTO builds). Eviction is first in, first out:
/// least-recently-used eviction measured the same. gix's own `MemoryCappedHashmap` (feature
/// `pack-cache-lru-dynamic`) in its place made the whole `phase0 p2` run on git.git take 12.8 s instead of 6.1 s.
pub(crate) struct DeltaCache {
    entries: HashMap<(u32, u64), (Vec<u8>, gix::objs::Kind, usize)>,
    order: VecDeque<(u32, u64)>,
    bytes: usize,
    limit: usize,
}

impl DeltaCache {
    pub(crate) fn new(limit: usize) -> Self {
        DeltaCache {
            entries: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }
}

impl gix::odb::pack::cache::DecodeEntry for DeltaCache {
    fn put(&mut self, pack_id: u32, offset: u64, data: &[u8], kind: gix::objs::Kind, compressed_size: usize) {
        let key = (pack_id, offset);
        if data.len() > self.limit / 8 || self.entries.contains_key(&key) {
            return;
        }
        while self.bytes + data.len() > self.limit {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some((evicted, ..)) = self.entries.remove(&oldest) {
                self.bytes -= evicted.len();
            }
        }
        self.bytes += data.len();
        self.entries.insert(key, (data.to_vec(), kind, compressed_size));
        self.order.push_back(key);
    }

    fn get(&mut self, pack_id: u32, offset: u64, out: &mut Vec<u8>) -> Option<(gix::objs::Kind, usize)> {
        let (data, kind, compressed_size) = self.entries.get(&(pack_id, offset))?;
        out.clear();
        out.extend_from_slice(data);
        Some((*kind, *compressed_size))
    }
}

fn rev_of(options: &WalkOptions) -> &str {
    options.rev.as_deref().unwrap_or("HEAD")
}

fn git_error(repo: &gix::Repository, what: &str, err: impl std::fmt::Display) -> GitScanError {
    GitScanError::Git {
        path: repo.git_dir().to_path_buf(),
        message: format!("{what}: {err}"),
    }
}

fn head_state(repo: &gix::Repository) -> Result<HeadState, GitScanError> {
    let head = repo.head().map_err(|err| git_error(repo, "cannot read HEAD", err))?;
    Ok(match head.kind {
        gix::head::Kind::Unborn(name) => HeadState::Unborn {
            branch: name.shorten().to_str_lossy().into_owned(),
        },
        gix::head::Kind::Detached { .. } => HeadState::Detached,
        gix::head::Kind::Symbolic(reference) => HeadState::Branch(reference.name.shorten().to_str_lossy().into_owned()),
    })
}

/// The boundary commits of a shallow clone, sorted for binary search; empty for a complete repository.
fn shallow_commits(repo: &gix::Repository) -> Result<Vec<ObjectId>, GitScanError> {
    let commits = repo
        .shallow_commits()
        .map_err(|err| git_error(repo, "cannot read the shallow file", err))?;
    let mut ids: Vec<ObjectId> = commits
        .map(|commits| commits.iter().copied().collect())
        .unwrap_or_default();
    ids.sort_unstable();
    Ok(ids)
}

/// Object access that remembers the last object found missing, so that a failure deep inside gix (a tree diff)
/// can still be reported as [`GitScanError::MissingObject`] naming the id. The empty tree and the empty blob are
/// always available, as in git, even when the object database does not hold them.
struct Objects<'r> {
    repo: &'r gix::Repository,
    missing: Cell<Option<ObjectId>>,
}

impl<'r> Objects<'r> {
    fn new(repo: &'r gix::Repository) -> Self {
        Objects {
            repo,
            missing: Cell::new(None),
        }
    }

    /// Reads `id`, which must be of `kind`; `context` says where it was needed (for the error message).
    fn read_kind<'b>(
        &self,
        id: &gix::oid,
        buf: &'b mut Vec<u8>,
        kind: gix::objs::Kind,
        context: impl FnOnce() -> String,
    ) -> Result<&'b [u8], GitScanError> {
        let data = self.read(id, buf, context)?;
        if data.kind != kind {
            return Err(GitScanError::Corrupt {
                id: id.to_owned(),
                message: format!("expected a {kind}, found a {}", data.kind),
            });
        }
        Ok(data.data)
    }

    fn read<'b>(
        &self,
        id: &gix::oid,
        buf: &'b mut Vec<u8>,
        context: impl FnOnce() -> String,
    ) -> Result<gix::objs::Data<'b>, GitScanError> {
        match gix::objs::Find::try_find(self, id, buf) {
            Ok(Some(data)) => Ok(data),
            Ok(None) => Err(GitScanError::MissingObject {
                id: id.to_owned(),
                context: context(),
            }),
            Err(err) => Err(GitScanError::Corrupt {
                id: id.to_owned(),
                message: err.to_string(),
            }),
        }
    }

    /// Turns an error from gix into ours, preferring the missing object it was caused by.
    fn error(&self, err: impl std::fmt::Display, context: impl FnOnce() -> String) -> GitScanError {
        match self.missing.get() {
            Some(id) => GitScanError::MissingObject { id, context: context() },
            None => git_error(self.repo, &context(), err),
        }
    }
}

impl gix::objs::Find for Objects<'_> {
    fn try_find<'a>(&self, id: &gix::oid, buffer: &'a mut Vec<u8>) -> gix::error::Result<Option<gix::objs::Data<'a>>> {
        let kind = id.kind();
        for (empty, object_kind) in [
            (ObjectId::empty_tree(kind), gix::objs::Kind::Tree),
            (ObjectId::empty_blob(kind), gix::objs::Kind::Blob),
        ] {
            if id == empty {
                buffer.clear();
                return Ok(Some(gix::objs::Data {
                    kind: object_kind,
                    object_hash: kind,
                    data: &[],
                }));
            }
        }
        let found = self.repo.objects.try_find(id, buffer)?;
        if found.is_none() {
            self.missing.set(Some(id.to_owned()));
        }
        Ok(found)
    }
}

/// Resolves `rev` and peels tags down to a commit.
fn resolve_commit(repo: &gix::Repository, objects: &Objects<'_>, rev: &str) -> Result<ObjectId, GitScanError> {
    let rev_error = |message: String| GitScanError::Rev {
        rev: rev.to_owned(),
        message,
    };
    // gix's messages name its parser's internals (`delegate.traverse(NthAncestor(1000))`): say it in our words.
    let mut id = repo
        .rev_parse_single(rev.as_bytes().as_bstr())
        .map_err(|err| {
            let text = err.to_string();
            rev_error(if text.contains("Ancestor") || text.contains("traverse") {
                "asks for an ancestor the history does not have (it is shorter than that)".to_owned()
            } else {
                format!(
                    "does not resolve in the repository {}: no branch, tag or commit has that name, or what it \
                     names is missing from it",
                    repo.workdir().unwrap_or_else(|| repo.git_dir()).display()
                )
            })
        })?
        .detach();
    let mut buf = Vec::new();
    for _ in 0..MAX_TAG_CHAIN {
        let data = objects.read(&id, &mut buf, || format!("revision {rev:?}"))?;
        match data.kind {
            gix::objs::Kind::Commit => return Ok(id),
            gix::objs::Kind::Tag => {
                id = data
                    .data
                    .strip_prefix(b"object ")
                    .and_then(|rest| rest.get(..id.kind().len_in_hex()))
                    .and_then(|hex| ObjectId::from_hex(hex).ok())
                    .ok_or_else(|| GitScanError::Corrupt {
                        id,
                        message: "a tag without a valid target".to_owned(),
                    })?;
            }
            kind => return Err(rev_error(format!("names a {kind} ({id}), not a commit"))),
        }
    }
    Err(rev_error(format!("tags nested deeper than {MAX_TAG_CHAIN}")))
}

// ---------------------------------------------------------------------------------------------------------------
// Walk

/// Per-thread state for the rayon workers of one call (a repository handle, with its caches, and scratch buffers),
/// created on a worker's first use and kept for every later item and parallel step of the call: rayon's
/// `map_init` would create it per split job instead, which loses the caches between jobs and costs more than the
/// work in the walk's narrow layers. Slot 0 serves threads outside the pool.
pub(crate) struct PerThread<T, F> {
    slots: Vec<Mutex<Option<T>>>,
    make: F,
}

impl<T, F: Fn() -> T> PerThread<T, F> {
    pub(crate) fn new(make: F) -> Self {
        PerThread {
            slots: (0..=rayon::current_num_threads()).map(|_| Mutex::new(None)).collect(),
            make,
        }
    }

    /// Runs `f` with this thread's state. `f` must not call into rayon (a stolen job could wait for the slot).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let slot = rayon::current_thread_index()
            .map_or(0, |i| i + 1)
            .min(self.slots.len() - 1);
        let mut slot = self.slots[slot].lock().unwrap_or_else(PoisonError::into_inner);
        f(slot.get_or_insert_with(&self.make))
    }
}

/// A commit read during the walk: its row (`None` outside the time window) and the parents to follow.
type Visited = (Option<Decoded>, Vec<ObjectId>);

/// The breadth-first walk. Breadth-first layers of real histories are wide (git.git: 82k commits in 1,247
/// layers), so each layer's commit objects are read and decoded in parallel, and the walk order stays exactly
/// that of a sequential breadth-first traversal. Commits that the commit-graph knows are not read during the
/// walk (their parents come from the graph); they are read and decoded in chunks by the other threads while
/// the walk goes on through the graph.
struct Walk<'a, F> {
    handles: PerThread<gix::Repository, F>,
    options: &'a WalkOptions,
    shallow: &'a [ObjectId],
}

/// Below this many commits a layer is read on the calling thread: dispatching costs more than it saves.
const PARALLEL_LAYER: usize = 4;

/// Commits found in the commit-graph are read in chunks of this many (about 10 ms of work): small enough that
/// the last chunks spread over the threads, large enough that dispatching them costs nothing.
const GRAPH_CHUNK: usize = 1024;

/// The decoded commits of the chunks of graph commits, by chunk index.
type DecodedChunks = Mutex<Vec<(usize, Result<Vec<Visited>, GitScanError>)>>;

/// Every commit in walk order with its row (`None` until read, for the commits the commit-graph gave), and the
/// positions of the commits the commit-graph gave.
type Traversed = (Vec<(ObjectId, Option<Decoded>)>, Vec<usize>);

impl<F: Fn() -> gix::Repository + Sync> Walk<'_, F> {
    /// The decoded commits in walk order (`None` for commits outside the time window).
    fn run(&self, repo: &gix::Repository, tip: ObjectId) -> Result<Vec<Option<Decoded>>, GitScanError> {
        // A commit-graph is an optional cache, as in gix's own walk: failing to load it is not an error.
        let graph = repo.commit_graph_if_enabled().ok().flatten();
        let chunks: DecodedChunks = Mutex::new(Vec::new());
        let (mut walked, from_graph) = rayon::scope(|scope| self.traverse(graph, tip, scope, &chunks))?;
        let mut chunks = chunks.into_inner().unwrap_or_else(PoisonError::into_inner);
        chunks.sort_unstable_by_key(|(index, _)| *index);
        let mut slots = from_graph.into_iter();
        for (_, decoded) in chunks {
            for ((decoded, _), i) in decoded?.into_iter().zip(slots.by_ref()) {
                walked[i].1 = decoded;
            }
        }
        Ok(walked.into_iter().map(|(_, decoded)| decoded).collect())
    }

    /// The breadth-first traversal: every commit in walk order, decoded unless the commit-graph gave its parents,
    /// and the positions of those, whose reading it hands to `scope` in chunks that fill `chunks`.
    fn traverse<'s>(
        &'s self,
        mut graph: Option<gix::commitgraph::Graph>,
        tip: ObjectId,
        scope: &rayon::Scope<'s>,
        chunks: &'s DecodedChunks,
    ) -> Result<Traversed, GitScanError> {
        let mut seen = gix::hashtable::HashSet::default();
        seen.insert(tip);
        let mut layer = vec![tip];
        let mut walked: Vec<(ObjectId, Option<Decoded>)> = Vec::new();
        let mut from_graph: Vec<usize> = Vec::new();
        let mut dispatched = 0;
        while !layer.is_empty() {
            let mut graph_parents: Vec<Option<Vec<ObjectId>>> = Vec::with_capacity(layer.len());
            for id in &layer {
                let mut corrupt = false;
                let parents = graph.as_ref().and_then(|g| {
                    let pos = g.lookup(id)?;
                    let parents = g
                        .commit_at(pos)
                        .iter_parents()
                        .map(|parent| parent.map(|parent| g.id_at(parent).to_owned()))
                        .collect::<Result<Vec<_>, _>>();
                    corrupt = parents.is_err();
                    parents.ok()
                });
                if corrupt {
                    // A corrupt commit-graph: drop it and read objects from here on, as gix does.
                    graph = None;
                }
                graph_parents.push(parents);
            }
            let to_read: Vec<ObjectId> = layer
                .iter()
                .zip(&graph_parents)
                .filter(|(_, parents)| parents.is_none())
                .map(|(id, _)| *id)
                .collect();
            let mut read = self.visit_all(&to_read)?.into_iter();

            let mut next = Vec::new();
            for (id, parents) in layer.iter().zip(graph_parents) {
                let parents = match parents {
                    Some(parents) => {
                        from_graph.push(walked.len());
                        walked.push((*id, None));
                        parents
                    }
                    None => {
                        let (decoded, parents) = read.next().unwrap_or_default();
                        walked.push((*id, decoded));
                        parents
                    }
                };
                if self.shallow.binary_search(id).is_ok() {
                    continue;
                }
                let follow = if self.options.first_parent { 1 } else { usize::MAX };
                for parent in parents.into_iter().take(follow) {
                    if seen.insert(parent) {
                        next.push(parent);
                    }
                }
            }
            layer = next;
            let last = layer.is_empty();
            while from_graph.len() - dispatched >= GRAPH_CHUNK || (last && dispatched < from_graph.len()) {
                let end = from_graph.len().min(dispatched + GRAPH_CHUNK);
                let ids: Vec<ObjectId> = from_graph[dispatched..end].iter().map(|&i| walked[i].0).collect();
                let index = dispatched;
                dispatched = end;
                scope.spawn(move |_| {
                    let decoded = ids.iter().map(|id| self.visit(*id)).collect();
                    chunks
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((index, decoded));
                });
            }
        }
        Ok((walked, from_graph))
    }

    /// Reads and decodes `ids`, in parallel when there are enough; the first error in `ids` order wins.
    fn visit_all(&self, ids: &[ObjectId]) -> Result<Vec<Visited>, GitScanError> {
        if ids.len() < PARALLEL_LAYER {
            ids.iter().map(|id| self.visit(*id)).collect()
        } else {
            ids.par_iter().map(|id| self.visit(*id)).collect()
        }
    }

    fn visit(&self, id: ObjectId) -> Result<Visited, GitScanError> {
        self.handles.with(|repo| {
            let mut buf = Vec::new();
            let data = Objects::new(repo).read_kind(&id, &mut buf, gix::objs::Kind::Commit, || {
                format!("reachable from {}", rev_of(self.options))
            })?;
            let header = parse_header(data).map_err(|message| GitScanError::Corrupt {
                id,
                message: message.to_owned(),
            })?;
            let parents = header.parents.clone();
            let shallow = self.shallow.binary_search(&id).is_ok();
            Ok((decode_commit(id, header, shallow, self.options), parents))
        })
    }
}

/// The parts of a commit's header the scanner needs, parsed leniently: unknown headers (`gpgsig`, `mergetag`, …)
/// and their continuation lines are skipped.
struct Header<'a> {
    tree: Option<ObjectId>,
    parents: Vec<ObjectId>,
    author: Option<&'a [u8]>,
    committer: Option<&'a [u8]>,
    encoding: Option<&'a [u8]>,
    message: &'a [u8],
}

fn parse_header(data: &[u8]) -> Result<Header<'_>, &'static str> {
    let mut header = Header {
        tree: None,
        parents: Vec::new(),
        author: None,
        committer: None,
        encoding: None,
        message: &[],
    };
    let mut pos = 0;
    let mut index = 0;
    // git takes parents only from the `parent` lines directly after `tree`.
    let mut in_parents = false;
    while pos < data.len() {
        let end = memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |i| pos + i);
        let line = &data[pos..end];
        pos = (end + 1).min(data.len());
        if line.is_empty() {
            header.message = &data[pos..];
            break;
        }
        let (key, value) = match memchr::memchr(b' ', line) {
            Some(space) => (&line[..space], &line[space + 1..]),
            None => (line, &line[line.len()..]),
        };
        match key {
            b"tree" if index == 0 => {
                header.tree = Some(ObjectId::from_hex(value).map_err(|_| "an invalid tree id")?);
                in_parents = true;
            }
            b"parent" if in_parents => {
                header
                    .parents
                    .push(ObjectId::from_hex(value).map_err(|_| "an invalid parent id")?);
            }
            _ => {
                in_parents = false;
                match key {
                    b"author" if header.author.is_none() => header.author = Some(value),
                    b"committer" if header.committer.is_none() => header.committer = Some(value),
                    b"encoding" if header.encoding.is_none() => header.encoding = Some(value),
                    _ => {}
                }
            }
        }
        index += 1;
    }
    Ok(header)
}

/// The Unix time of an identity line (`Name <email> 1700000000 +0100`): the number after the last `>`, as git
/// reads it; 0 when there is none.
fn ident_time(ident: Option<&[u8]>) -> i64 {
    let Some(ident) = ident else { return 0 };
    let rest = match memchr::memrchr(b'>', ident) {
        Some(pos) => &ident[pos + 1..],
        None => return 0,
    };
    let rest = &rest[rest.iter().take_while(|&&b| b == b' ').count()..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

struct Decoded {
    row: CommitRow,
    non_utf8: bool,
}

/// Decodes one commit into a row, or `None` when its committer time is outside the requested window.
fn decode_commit(id: ObjectId, header: Header<'_>, shallow: bool, options: &WalkOptions) -> Option<Decoded> {
    let commit_time = ident_time(header.committer);
    if options.since.is_some_and(|since| commit_time < since) || options.until.is_some_and(|until| commit_time > until)
    {
        return None;
    }
    let (message, non_utf8) = decode_message(header.message, header.encoding);
    let parsed = parse_message(message.as_bytes());
    Some(Decoded {
        row: CommitRow {
            id,
            parents: if shallow { Vec::new() } else { header.parents },
            tree: header.tree,
            author_time: ident_time(header.author),
            commit_time,
            subject: parsed.subject,
            body: parsed.body,
            trailers: parsed.trailers,
        },
        non_utf8,
    })
}

/// Decodes a message to UTF-8: from Latin-1 when the commit's `encoding` header says so (as `git log` re-encodes
/// it), as lossy UTF-8 otherwise. Also says whether the raw bytes were not valid UTF-8.
fn decode_message<'a>(message: &'a [u8], encoding: Option<&[u8]>) -> (Cow<'a, str>, bool) {
    let latin1 = encoding.is_some_and(|name| {
        let name = name.trim().to_ascii_lowercase();
        matches!(
            name.as_slice(),
            b"latin1" | b"latin-1" | b"l1" | b"iso-8859-1" | b"iso8859-1" | b"iso_8859-1" | b"iso88591"
        )
    });
    let utf8 = std::str::from_utf8(message);
    let non_utf8 = utf8.is_err();
    if latin1 && !message.is_ascii() {
        (Cow::Owned(message.iter().map(|&b| char::from(b)).collect()), non_utf8)
    } else {
        // Validated once: most messages are UTF-8, and the lossy decoder validates more slowly.
        (
            utf8.map_or_else(|_| String::from_utf8_lossy(message), Cow::Borrowed),
            non_utf8,
        )
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Messages: ports of git's pretty.c (subject, body) and trailer.c (trailers), default configuration.

struct ParsedMessage {
    subject: String,
    body: String,
    trailers: Vec<Trailer>,
}

/// git's `isspace`: space, tab, newline and carriage return only.
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The length of the line at the start of `msg`, its `\n` included (pretty.c `get_one_line`).
fn one_line_len(msg: &[u8]) -> usize {
    memchr::memchr(b'\n', msg).map_or(msg.len(), |i| i + 1)
}

/// `line` without trailing whitespace, or `None` if nothing remains (pretty.c `is_blank_line`).
fn trim_end_nonblank(line: &[u8]) -> Option<&[u8]> {
    let len = line.iter().rposition(|&b| !is_space(b)).map_or(0, |i| i + 1);
    (len > 0).then(|| &line[..len])
}

fn skip_blank_lines(msg: &[u8], mut pos: usize) -> usize {
    loop {
        let len = one_line_len(&msg[pos..]);
        if len == 0 || trim_end_nonblank(&msg[pos..pos + len]).is_some() {
            return pos;
        }
        pos += len;
    }
}

fn parse_message(msg: &[u8]) -> ParsedMessage {
    let subject_off = skip_blank_lines(msg, 0);
    let mut subject = Vec::new();
    let mut pos = subject_off;
    loop {
        let len = one_line_len(&msg[pos..]);
        let line = &msg[pos..pos + len];
        pos += len;
        match trim_end_nonblank(line) {
            Some(line) if len > 0 => {
                if !subject.is_empty() {
                    subject.push(b' ');
                }
                subject.extend_from_slice(line);
            }
            _ => break,
        }
    }
    let body_off = skip_blank_lines(msg, pos);
    ParsedMessage {
        subject: String::from_utf8_lossy(&subject).into_owned(),
        body: String::from_utf8_lossy(&msg[body_off..]).into_owned(),
        trailers: parse_trailers(&msg[subject_off..]),
    }
}

const COMMENT: &[u8] = b"#";
const CUT_LINE: &[u8] = b"\n# ------------------------ >8 ------------------------\n";
const GIT_GENERATED_PREFIXES: [&[u8]; 2] = [b"Signed-off-by: ", b"(cherry picked from commit "];

/// trailer.c `is_blank_line`: only whitespace up to the end of the line at `pos`.
fn is_blank_line_at(buf: &[u8], pos: usize) -> bool {
    buf[pos.min(buf.len())..]
        .iter()
        .find(|&&b| b == b'\n' || !is_space(b))
        .is_none_or(|&b| b == b'\n')
}

fn next_line(buf: &[u8], pos: usize) -> usize {
    memchr::memchr(b'\n', &buf[pos.min(buf.len())..]).map_or(buf.len(), |i| pos + i + 1)
}

/// trailer.c `last_line`: the start of the last line of `buf[..len]`.
fn last_line(buf: &[u8], len: usize) -> Option<usize> {
    match len {
        0 => None,
        1 => Some(0),
        _ => Some(memchr::memrchr(b'\n', &buf[..len - 1]).map_or(0, |i| i + 1)),
    }
}

/// trailer.c `find_separator` with the default separators (`:`): the separator's offset in `line`, if `line`
/// starts with a token (ASCII letters, digits, `-`, then optional whitespace).
fn find_separator(line: &[u8]) -> Option<usize> {
    let mut whitespace_found = false;
    for (i, &c) in line.iter().enumerate() {
        if c == b':' {
            return Some(i);
        }
        if c == 0 {
            break;
        }
        if !whitespace_found && (c.is_ascii_alphanumeric() || c == b'-') {
            continue;
        }
        if i != 0 && (c == b' ' || c == b'\t') {
            whitespace_found = true;
            continue;
        }
        break;
    }
    None
}

/// commit.c `ignored_log_message_bytes`: trailing comments, blank lines, old `Conflicts:` blocks and anything
/// below a scissors line.
fn ignored_log_message_bytes(buf: &[u8]) -> usize {
    let len = buf.len();
    static CUT_LINE_FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(CUT_LINE));
    let cutoff = if buf.starts_with(&CUT_LINE[1..]) {
        0
    } else {
        CUT_LINE_FINDER.find(buf).map_or(len, |p| (p + 1).min(len))
    };
    let (mut boc, mut bol) = (0, 0);
    let mut in_old_conflicts_block = false;
    while bol < cutoff {
        let next = next_line(buf, bol);
        if buf[bol..cutoff].starts_with(COMMENT) || buf[bol] == b'\n' {
            if boc == 0 {
                boc = bol;
            }
        } else if buf[bol..].starts_with(b"Conflicts:\n") {
            in_old_conflicts_block = true;
            if boc == 0 {
                boc = bol;
            }
        } else if in_old_conflicts_block && buf[bol] == b'\t' {
            // A path in the conflicts block.
        } else if boc != 0 {
            boc = 0;
            in_old_conflicts_block = false;
        }
        bol = next;
    }
    if boc != 0 { len - boc } else { len - cutoff }
}

/// trailer.c `find_trailer_block_start`: the offset of the first trailer line, or `len` if there is none.
fn find_trailer_block_start(buf: &[u8], len: usize) -> usize {
    // The first paragraph is the title and cannot be trailers.
    let mut s = 0;
    while s < len {
        if !buf[s..len].starts_with(COMMENT) && is_blank_line_at(buf, s) {
            break;
        }
        s = next_line(buf, s);
    }
    let end_of_title = s;

    let mut only_spaces = true;
    let mut recognized_prefix = false;
    let (mut trailer_lines, mut non_trailer_lines, mut possible_continuation_lines) = (0usize, 0usize, 0usize);
    let mut line = last_line(buf, len);
    while let Some(bol) = line.filter(|&l| l >= end_of_title) {
        line = last_line(buf, bol);
        if buf[bol..len].starts_with(COMMENT) {
            non_trailer_lines += possible_continuation_lines;
            possible_continuation_lines = 0;
            continue;
        }
        if is_blank_line_at(buf, bol) {
            if only_spaces {
                continue;
            }
            non_trailer_lines += possible_continuation_lines;
            if (recognized_prefix && trailer_lines * 3 >= non_trailer_lines)
                || (trailer_lines > 0 && non_trailer_lines == 0)
            {
                return next_line(buf, bol);
            }
            return len;
        }
        only_spaces = false;
        if GIT_GENERATED_PREFIXES
            .iter()
            .any(|prefix| buf[bol..].starts_with(prefix))
        {
            trailer_lines += 1;
            possible_continuation_lines = 0;
            recognized_prefix = true;
            continue;
        }
        if find_separator(&buf[bol..]).is_some_and(|sep| sep >= 1) && !is_space(buf[bol]) {
            trailer_lines += 1;
            possible_continuation_lines = 0;
        } else if is_space(buf[bol]) {
            possible_continuation_lines += 1;
        } else {
            non_trailer_lines += 1 + possible_continuation_lines;
            possible_continuation_lines = 0;
        }
    }
    len
}

fn trim_space(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| !is_space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|&b| !is_space(b)).map_or(start, |i| i + 1);
    &bytes[start..end.max(start)]
}

/// trailer.c `unfold_value`: a line break and the whitespace after it become one space.
fn unfold(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        let c = value[i];
        i += 1;
        if c == b'\n' {
            while i < value.len() && is_space(value[i]) {
                i += 1;
            }
            out.push(b' ');
        } else {
            out.push(c);
        }
    }
    trim_space(&out).to_vec()
}

/// The trailers of a message (from its subject on), as `git log --format=%(trailers:only,unfold)` lists them.
fn parse_trailers(msg: &[u8]) -> Vec<Trailer> {
    // C strings end at NUL; git never sees what follows one.
    let msg = &msg[..memchr::memchr(0, msg).unwrap_or(msg.len())];
    let end = msg.len() - ignored_log_message_bytes(msg);
    let start = find_trailer_block_start(msg, end);
    if start >= end {
        return Vec::new();
    }
    let mut items: Vec<Vec<u8>> = Vec::new();
    let mut last: Option<usize> = None;
    for line in msg[start..end].split_inclusive(|&b| b == b'\n') {
        if let Some(last) = last.filter(|_| is_space(line[0])) {
            items[last].extend_from_slice(line);
            continue;
        }
        last = find_separator(line).is_some_and(|sep| sep >= 1).then_some(items.len());
        items.push(line.to_vec());
    }
    items
        .iter()
        .filter(|item| !item.starts_with(COMMENT))
        .filter_map(|item| {
            let sep = find_separator(item).filter(|&sep| sep >= 1)?;
            Some(Trailer {
                token: String::from_utf8_lossy(trim_space(&item[..sep])).into_owned(),
                value: String::from_utf8_lossy(&unfold(trim_space(&item[sep + 1..]))).into_owned(),
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------------------------
// Diffs

/// One changed path of a commit, with both sides (canonical kind and id) for the line diff.
#[derive(Clone)]
struct PathChange {
    path: String,
    change: FileChange,
    old: Option<(EntryKind, ObjectId)>,
    new: Option<(EntryKind, ObjectId)>,
}

/// One side of a changed tree entry, as the tree records it; `None` when the path is absent on that side.
type Side = Option<(EntryMode, ObjectId)>;

/// Records the non-tree entries of a gix tree diff with their full paths (the path bookkeeping of gix's
/// `Recorder`, without keeping trees).
#[derive(Default)]
struct Collector {
    path: BString,
    path_deque: VecDeque<BString>,
    records: Vec<(BString, Side, Side)>,
}

impl Collector {
    fn push_element(&mut self, name: &BStr) {
        if name.is_empty() {
            return;
        }
        if !self.path.is_empty() {
            self.path.push(b'/');
        }
        self.path.push_str(name);
    }
}

impl gix::diff::tree::Visit for Collector {
    fn pop_front_tracked_path_and_set_current(&mut self) {
        self.path = self.path_deque.pop_front().unwrap_or_default();
    }

    fn push_back_tracked_path_component(&mut self, component: &BStr) {
        self.push_element(component);
        self.path_deque.push_back(self.path.clone());
    }

    fn push_path_component(&mut self, component: &BStr) {
        self.push_element(component);
    }

    fn pop_path_component(&mut self) {
        match self.path.rfind_byte(b'/') {
            Some(pos) => self.path.truncate(pos),
            None => self.path.clear(),
        }
    }

    fn visit(&mut self, change: gix::diff::tree::visit::Change) -> gix::diff::tree::visit::Action {
        use gix::diff::tree::visit::Change;
        let record = match change {
            Change::Addition { entry_mode, oid, .. } if !entry_mode.is_tree() => (None, Some((entry_mode, oid))),
            Change::Deletion { entry_mode, oid, .. } if !entry_mode.is_tree() => (Some((entry_mode, oid)), None),
            Change::Modification {
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
            } if !previous_entry_mode.is_tree() && !entry_mode.is_tree() => {
                (Some((previous_entry_mode, previous_oid)), Some((entry_mode, oid)))
            }
            _ => return std::ops::ControlFlow::Continue(()),
        };
        self.records.push((self.path.clone(), record.0, record.1));
        std::ops::ControlFlow::Continue(())
    }
}

fn is_file(kind: EntryKind) -> bool {
    matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable)
}

/// git's change status on canonical modes; `None` when nothing changed (only a non-canonical mode differs).
fn classify(old: Option<(EntryKind, ObjectId)>, new: Option<(EntryKind, ObjectId)>) -> Option<FileChange> {
    Some(match (old, new) {
        (None, None) => return None,
        (None, Some(_)) => FileChange::Added,
        (Some(_), None) => FileChange::Deleted,
        (Some((old_kind, old_id)), Some((new_kind, new_id))) => {
            if old_kind == new_kind {
                if old_id == new_id {
                    return None;
                }
                FileChange::Modified
            } else if is_file(old_kind) && is_file(new_kind) && old_id != new_id {
                FileChange::Modified
            } else {
                FileChange::TypeChanged
            }
        }
    })
}

struct TreeDiffer<'k> {
    repo: gix::Repository,
    known: &'k KnownCommits,
    changed_paths: &'k ChangedPaths,
    /// The filter keys of the last path set a restricted diff asked about, by the set's address.
    keys: Option<(usize, Vec<PathKey>)>,
    roots: RootLookups,
    state: gix::diff::tree::State,
    commit_buf: Vec<u8>,
    old_tree: Vec<u8>,
    new_tree: Vec<u8>,
}

impl<'k> TreeDiffer<'k> {
    fn new(repo: gix::Repository, known: &'k KnownCommits, changed_paths: &'k ChangedPaths) -> Self {
        TreeDiffer {
            repo,
            known,
            changed_paths,
            keys: None,
            roots: RootLookups::default(),
            state: Default::default(),
            commit_buf: Vec::new(),
            old_tree: Vec::new(),
            new_tree: Vec::new(),
        }
    }

    fn changes(&mut self, id: ObjectId, shallow: bool) -> Result<Vec<PathChange>, GitScanError> {
        let objects = Objects::new(&self.repo);
        let (old_tree, new_tree) = diff_trees(self.known, &objects, &mut self.commit_buf, id, shallow)?;
        let context = || format!("diff of commit {id}");
        let hash = id.kind();
        let old_data: &[u8] = match old_tree {
            Some(tree) => objects.read_kind(&tree, &mut self.old_tree, gix::objs::Kind::Tree, context)?,
            None => &[],
        };
        let new_data = objects.read_kind(&new_tree, &mut self.new_tree, gix::objs::Kind::Tree, context)?;
        let mut collector = Collector::default();
        gix::diff::tree(
            gix::objs::TreeRefIter::from_bytes(old_data, hash),
            gix::objs::TreeRefIter::from_bytes(new_data, hash),
            &mut self.state,
            &objects,
            &mut collector,
        )
        .map_err(|err| objects.error(err, context))?;

        let mut changes: Vec<PathChange> = collector
            .records
            .into_iter()
            .filter_map(|(path, old, new)| {
                let old = old.map(|(mode, id)| (mode.kind(), id));
                let new = new.map(|(mode, id)| (mode.kind(), id));
                Some(PathChange {
                    change: classify(old, new)?,
                    path: String::from_utf8(path.into())
                        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned()),
                    old,
                    new,
                })
            })
            .collect();
        // Stable, so that two raw paths with the same lossy spelling keep the tree order.
        changes.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Ok(changes)
    }
}

impl TreeDiffer<'_> {
    /// What [`Self::changes`] lists for the paths in `only`, reading only the trees on the way to them: at every
    /// level, a subtree whose id is the same on both sides is not read, and neither is any subtree no wanted path
    /// passes through. Much cheaper than a whole diff when the question is whether a commit touched some files.
    fn changes_among(
        &mut self,
        id: ObjectId,
        shallow: bool,
        only: &std::collections::BTreeSet<String>,
    ) -> Result<Vec<PathChange>, GitScanError> {
        if only.iter().any(|path| path.contains(char::REPLACEMENT_CHARACTER)) {
            // A lossy path stands for raw bytes it cannot be looked up by: restrict the whole diff instead.
            let mut changes = self.changes(id, shallow)?;
            changes.retain(|change| only.contains(&change.path));
            return Ok(changes);
        }
        let set = std::ptr::from_ref(only).addr();
        // The commit-graph's filter answers most of these without a tree (a shallow commit is diffed against
        // nothing, its filter against its parent).
        if !shallow && let Some(bloom) = self.changed_paths.filter(&id) {
            let keys = match &self.keys {
                Some((keys_set, keys)) if *keys_set == set => keys,
                _ => {
                    let keys = only.iter().map(|path| PathKey::new(path.as_bytes())).collect();
                    &self.keys.insert((set, keys)).1
                }
            };
            if !keys.iter().any(|key| bloom.may_have_changed(key)) {
                return Ok(Vec::new());
            }
        }
        let objects = Objects::new(&self.repo);
        let (old_tree, new_tree) = diff_trees(self.known, &objects, &mut self.commit_buf, id, shallow)?;
        let mut changes = Vec::new();
        if old_tree == Some(new_tree) {
            return Ok(changes);
        }
        let wanted: Vec<&str> = only.iter().map(String::as_str).collect();
        let level = Level::of(&wanted, 0);
        let (roots, buf) = (&mut self.roots, &mut self.old_tree);
        let found = level.found([old_tree, Some(new_tree)], |tree| {
            roots.lookup(&objects, buf, id, tree, set, &level.names)
        })?;
        compare_level(&objects, &mut self.old_tree, id, &level, found, 0, &mut changes)?;
        changes.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Ok(changes)
    }
}

/// The root-tree entries the last few restricted diffs looked up, by tree and path set: in a run of history a
/// commit's root tree is its child's parent tree, and neighbouring candidates ask about the same paths.
#[derive(Default)]
struct RootLookups(VecDeque<(ObjectId, usize, Vec<Side>)>);

impl RootLookups {
    const KEEP: usize = 16;

    /// [`lookup`], remembered for the path set at address `set` (each call's sets live until it ends).
    fn lookup(
        &mut self,
        objects: &Objects<'_>,
        buf: &mut Vec<u8>,
        id: ObjectId,
        tree: ObjectId,
        set: usize,
        names: &[&[u8]],
    ) -> Result<Vec<Side>, GitScanError> {
        if let Some((.., found)) = self.0.iter().find(|(t, s, _)| *t == tree && *s == set) {
            return Ok(found.clone());
        }
        let found = lookup(objects, buf, id, tree, names)?;
        if self.0.len() == Self::KEEP {
            self.0.pop_front();
        }
        self.0.push_back((tree, set, found.clone()));
        Ok(found)
    }
}

/// The entries a restricted diff looks for in one tree: the next path component of every wanted path, sorted,
/// with the wanted path ending there (if any) and those going deeper.
struct Level<'p> {
    names: Vec<&'p [u8]>,
    ends: Vec<Option<&'p str>>,
    deeper: Vec<Vec<&'p str>>,
}

impl<'p> Level<'p> {
    /// For `wanted` paths that all start with the directory prefix of `prefix_len` bytes.
    fn of(wanted: &[&'p str], prefix_len: usize) -> Self {
        let mut components: BTreeMap<&'p [u8], (Option<&'p str>, Vec<&'p str>)> = BTreeMap::new();
        for &path in wanted {
            let rest = &path.as_bytes()[prefix_len..];
            match rest.find_byte(b'/') {
                None => components.entry(rest).or_default().0 = Some(path),
                Some(slash) => components.entry(&rest[..slash]).or_default().1.push(path),
            }
        }
        let mut level = Level {
            names: Vec::with_capacity(components.len()),
            ends: Vec::with_capacity(components.len()),
            deeper: Vec::with_capacity(components.len()),
        };
        for (name, (end, deeper)) in components {
            level.names.push(name);
            level.ends.push(end);
            level.deeper.push(deeper);
        }
        level
    }

    /// The entries of `names` on each side (old, new): `look` reads a tree, an absent side has none.
    fn found(
        &self,
        sides: [Option<ObjectId>; 2],
        mut look: impl FnMut(ObjectId) -> Result<Vec<Side>, GitScanError>,
    ) -> Result<[Vec<Side>; 2], GitScanError> {
        let mut side = |tree: Option<ObjectId>| match tree {
            Some(tree) => look(tree),
            None => Ok(vec![None; self.names.len()]),
        };
        Ok([side(sides[0])?, side(sides[1])?])
    }
}

/// Compares the trees `sides` (old, new; `None`: absent) at the paths `wanted`, which all start with the
/// directory prefix of `prefix_len` bytes these trees stand for.
fn compare_among(
    objects: &Objects<'_>,
    buf: &mut Vec<u8>,
    id: ObjectId,
    sides: [Option<ObjectId>; 2],
    prefix_len: usize,
    wanted: &[&str],
    changes: &mut Vec<PathChange>,
) -> Result<(), GitScanError> {
    if sides[0] == sides[1] {
        return Ok(());
    }
    let level = Level::of(wanted, prefix_len);
    let found = level.found(sides, |tree| lookup(objects, buf, id, tree, &level.names))?;
    compare_level(objects, buf, id, &level, found, prefix_len, changes)
}

/// The changes at one level, given the entries `found` on each side for `level.names`; descends into the
/// subtrees that differ.
fn compare_level(
    objects: &Objects<'_>,
    buf: &mut Vec<u8>,
    id: ObjectId,
    level: &Level<'_>,
    found: [Vec<Side>; 2],
    prefix_len: usize,
    changes: &mut Vec<PathChange>,
) -> Result<(), GitScanError> {
    let [old_found, new_found] = found;
    for (index, (old, new)) in old_found.into_iter().zip(new_found).enumerate() {
        if let Some(path) = level.ends[index] {
            let file = |side: Side| {
                side.filter(|(mode, _)| !mode.is_tree())
                    .map(|(mode, id)| (mode.kind(), id))
            };
            let (old, new) = (file(old), file(new));
            if let Some(change) = classify(old, new) {
                changes.push(PathChange {
                    path: path.to_owned(),
                    change,
                    old,
                    new,
                });
            }
        }
        if !level.deeper[index].is_empty() {
            let tree = |side: Side| side.filter(|(mode, _)| mode.is_tree()).map(|(_, id)| id);
            let prefix_len = prefix_len + level.names[index].len() + 1;
            compare_among(
                objects,
                buf,
                id,
                [tree(old), tree(new)],
                prefix_len,
                &level.deeper[index],
                changes,
            )?;
        }
    }
    Ok(())
}

/// The entries named `names` in tree `tree` (read for commit `id`'s diff), `None` where it has none.
fn lookup(
    objects: &Objects<'_>,
    buf: &mut Vec<u8>,
    id: ObjectId,
    tree: ObjectId,
    names: &[&[u8]],
) -> Result<Vec<Side>, GitScanError> {
    let data = objects.read_kind(&tree, buf, gix::objs::Kind::Tree, || format!("diff of commit {id}"))?;
    find_entries(data, id.kind().len_in_bytes(), names).map_err(|message| GitScanError::Corrupt {
        id: tree,
        message: format!("{message} (a tree of commit {id})"),
    })
}

/// The entries named `names` in the raw tree `data`. Reads the entries' raw bytes and stops once all are found or
/// the tree's sort order has passed them all: this runs for the root trees of every candidate commit (on git.git,
/// 118k trees of 17 kB), where decoding every entry would cost more than reading the tree.
fn find_entries(data: &[u8], hash_len: usize, names: &[&[u8]]) -> Result<Vec<Side>, &'static str> {
    let mut found = vec![None; names.len()];
    // Bit `n` set: some name is `n` bytes long (longer names share bit 63); most entries fail this test alone.
    let lengths = names.iter().fold(0u64, |bits, name| bits | 1 << name.len().min(63));
    // Entries are sorted by name, a tree's name followed by `/`: past the last of the names + `/`, none follows.
    let last = names
        .iter()
        .copied()
        .max_by(|a, b| a.iter().chain(b"/").cmp(b.iter().chain(b"/")))
        .unwrap_or_default();
    let mut missing = names.len();
    let mut pos = 0;
    while missing > 0 && pos < data.len() {
        // A mode is 6 bytes ("100644"), or 5 for a tree ("40000"); other spellings take the slow way.
        let space = match data.get(pos + 5..pos + 7) {
            Some([b' ', _]) => pos + 5,
            Some([_, b' ']) => pos + 6,
            _ => pos + data[pos..].find_byte(b' ').ok_or("a tree entry without a mode")?,
        };
        let nul = find_nul(data, space + 1).ok_or("a tree entry without a name end")?;
        let end = nul + 1 + hash_len;
        let oid = data.get(nul + 1..end).ok_or("a tree entry with a truncated id")?;
        let name = &data[space + 1..nul];
        if name.first() > last.first() || (name.first() == last.first() && past(name, last)) {
            break;
        }
        if lengths & (1 << name.len().min(63)) != 0
            && let Some(index) = names
                .iter()
                .position(|wanted| wanted.first() == name.first() && *wanted == name)
        {
            let mode = EntryMode::from_bytes(&data[pos..space]).ok_or("a tree entry with an invalid mode")?;
            if found[index]
                .replace((mode, ObjectId::from_bytes_or_panic(oid)))
                .is_none()
            {
                missing -= 1;
            }
        }
        pos = end;
    }
    Ok(found)
}

/// Whether an entry named `name` sorts after both `last` and `last/`, whatever the entry's kind.
fn past(name: &[u8], last: &[u8]) -> bool {
    match name.strip_prefix(last) {
        // `last` itself or a longer name: after `last/` only if the next byte sorts after `/`.
        Some(rest) => rest.first().is_some_and(|&byte| byte > b'/'),
        None => name > last,
    }
}

/// The position of the first NUL byte in `data` from `from` on, eight bytes at a time: tree entry names are
/// short, too short for a vectorised search to pay its setup.
fn find_nul(data: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut at = from;
    while let Some(chunk) = data.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // The classic zero-byte test: exact for the lowest zero byte, which is the one wanted.
        let zeros = word.wrapping_sub(ONES) & !word & HIGHS;
        if zeros != 0 {
            return Some(at + (zeros.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    data.get(at..)?.iter().position(|&byte| byte == 0).map(|i| at + i)
}

/// The trees the diff of commit `id` compares: its first parent's (`None` for a root or shallow commit) and its
/// own.
fn diff_trees(
    known: &KnownCommits,
    objects: &Objects<'_>,
    buf: &mut Vec<u8>,
    id: ObjectId,
    shallow: bool,
) -> Result<(Option<ObjectId>, ObjectId), GitScanError> {
    let (tree, parent) = known_tree(known, objects, buf, &id)?;
    let parent_tree = match parent.filter(|_| !shallow) {
        Some(parent) => Some(known_tree(known, objects, buf, &parent)?.0),
        None => None,
    };
    Ok((parent_tree, tree))
}

/// The tree and first parent of commit `id`, from `known` or else from the commit object.
fn known_tree(
    known: &KnownCommits,
    objects: &Objects<'_>,
    buf: &mut Vec<u8>,
    id: &gix::oid,
) -> Result<(ObjectId, Option<ObjectId>), GitScanError> {
    match known.get(id) {
        Some(known) => Ok(known),
        None => commit_tree(objects, buf, id),
    }
}

/// The tree and first parent of commit `id`.
fn commit_tree(
    objects: &Objects<'_>,
    buf: &mut Vec<u8>,
    id: &gix::oid,
) -> Result<(ObjectId, Option<ObjectId>), GitScanError> {
    let data = objects.read_kind(id, buf, gix::objs::Kind::Commit, || "a commit to diff".to_owned())?;
    let header = parse_header(data).map_err(|message| GitScanError::Corrupt {
        id: id.to_owned(),
        message: message.to_owned(),
    })?;
    let tree = header.tree.ok_or_else(|| GitScanError::Corrupt {
        id: id.to_owned(),
        message: "a commit without a tree".to_owned(),
    })?;
    Ok((tree, header.parents.first().copied()))
}

#[derive(Clone)]
struct LineDetail {
    added: u32,
    removed: u32,
    binary: bool,
    added_hashes: Vec<u64>,
    removed_hashes: Vec<u64>,
}

/// A line's evidence hash ([`crate::scan::commits::evidence_hash`]), without its `\n`.
fn hash_line(line: &[u8]) -> u64 {
    crate::scan::commits::evidence_hash(line.strip_suffix(b"\n").unwrap_or(line))
}

fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split_inclusive(|&b| b == b'\n')
}

fn is_binary(data: &[u8]) -> bool {
    data.len() > BIG_FILE_THRESHOLD || memchr::memchr(0, &data[..data.len().min(BINARY_PROBE_BYTES)]).is_some()
}

fn tokens(side: &[Token], range: Range<u32>) -> &[Token] {
    side.get(range.start as usize..range.end as usize).unwrap_or_default()
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A blob differ's memory of the blobs it read last: a change's new side is the old side of the next change to the
/// same file, which [`diffs_remembering`] hands to the same worker next.
const RECENT_BLOBS: usize = 4;
/// A blob larger than this is not kept for the next diff (its buffer is freed).
const RECENT_BLOB_BYTES: usize = 4 << 20;

/// A blob read by a [`BlobDiffer`], with the tokens of its lines when [`BlobDiffer::lines`] interned them in its
/// current generation.
struct Recent {
    id: ObjectId,
    data: Vec<u8>,
    tokens: Vec<Token>,
    /// The [`Lines::generation`] that `tokens` belong to; 0: none.
    generation: u64,
}

struct BlobDiffer {
    repo: gix::Repository,
    /// The last blobs read, least recently used first.
    recent: VecDeque<Recent>,
    /// The distinct lines of the blobs diffed since the last reset, so that a blob's tokens serve every pair it is
    /// part of, and the next version of its file only interns the lines that changed.
    lines: Lines,
    diff: gix::diff::blob::Diff,
}

impl BlobDiffer {
    fn new(repo: gix::Repository) -> Self {
        BlobDiffer {
            repo,
            recent: VecDeque::with_capacity(RECENT_BLOBS),
            lines: Lines::default(),
            diff: gix::diff::blob::Diff::default(),
        }
    }

    /// Reads a side's content into [`Self::recent`] (unless it is there), or `None` for an absent side or a
    /// submodule (empty content).
    fn load(
        &mut self,
        side: Option<(EntryKind, ObjectId)>,
        context: impl FnOnce() -> String,
    ) -> Result<Option<ObjectId>, GitScanError> {
        let Some((_, id)) = side.filter(|(kind, _)| *kind != EntryKind::Commit) else {
            return Ok(None);
        };
        if let Some(at) = self.recent.iter().position(|blob| blob.id == id) {
            let entry = self.recent.remove(at).expect("found");
            self.recent.push_back(entry);
            return Ok(Some(id));
        }
        let (mut data, mut tokens) = match self.recent.len() {
            RECENT_BLOBS.. => self
                .recent
                .pop_front()
                .map(|blob| (blob.data, blob.tokens))
                .unwrap_or_default(),
            _ => Default::default(),
        };
        tokens.clear();
        Objects::new(&self.repo).read_kind(&id, &mut data, gix::objs::Kind::Blob, context)?;
        self.recent.push_back(Recent {
            id,
            data,
            tokens,
            generation: 0,
        });
        Ok(Some(id))
    }

    fn position(&self, id: Option<ObjectId>) -> Option<usize> {
        id.and_then(|id| self.recent.iter().position(|blob| blob.id == id))
    }

    fn lines(&mut self, commit: ObjectId, change: &PathChange) -> Result<LineDetail, GitScanError> {
        let context = || format!("diff of commit {commit}, path {}", change.path);
        // Files and symlinks have content; an absent side or a submodule counts as empty.
        let old = self.load(change.old, context)?;
        let new = self.load(change.new, context)?;
        let detail = self.diff(old, new);
        self.recent.retain(|blob| blob.data.capacity() <= RECENT_BLOB_BYTES);
        Ok(detail)
    }

    fn diff(&mut self, old: Option<ObjectId>, new: Option<ObjectId>) -> LineDetail {
        let (old_at, new_at) = (self.position(old), self.position(new));
        let content = |at: Option<usize>| at.map_or(&[][..], |at| self.recent[at].data.as_slice());
        let (old_data, new_data) = (content(old_at), content(new_at));

        let mut detail = LineDetail {
            added: 0,
            removed: 0,
            binary: is_binary(old_data) || is_binary(new_data),
            added_hashes: Vec::new(),
            removed_hashes: Vec::new(),
        };
        if detail.binary || old_data == new_data {
            return detail;
        }
        let (Some(old_at), Some(new_at)) = (
            old_at.filter(|_| !old_data.is_empty()),
            new_at.filter(|_| !new_data.is_empty()),
        ) else {
            detail.added_hashes = lines(new_data).map(hash_line).collect();
            detail.removed_hashes = lines(old_data).map(hash_line).collect();
            detail.added = count(detail.added_hashes.len());
            detail.removed = count(detail.removed_hashes.len());
            return detail;
        };
        let mut old_tokens = std::mem::take(&mut self.recent[old_at].tokens);
        let mut new_tokens = std::mem::take(&mut self.recent[new_at].tokens);
        let generation = self.lines.generation;
        let (old_known, new_known) = (
            self.recent[old_at].generation == generation,
            self.recent[new_at].generation == generation,
        );
        let (old_data, new_data) = (&self.recent[old_at].data, &self.recent[new_at].data);
        // Start afresh for a pair that shares no blob with the last ones (another file), and when the lines kept
        // outgrow the pair (Myers' counts are as long as the largest token).
        let known_len = if old_known { old_tokens.len() } else { new_tokens.len() };
        let (old_known, new_known) =
            if (!old_known && !new_known) || self.lines.outgrew(known_len, old_data.len() + new_data.len()) {
                self.lines.reset();
                (false, false)
            } else {
                (old_known, new_known)
            };
        tokenize_pair(
            &mut self.lines,
            (old_data, &mut old_tokens, old_known),
            (new_data, &mut new_tokens, new_known),
        );
        self.diff.compute_with(
            gix::diff::blob::Algorithm::Myers,
            &old_tokens,
            &new_tokens,
            self.lines.count(),
        );
        for hunk in self.diff.hunks() {
            for &token in tokens(&old_tokens, hunk.before) {
                detail.removed_hashes.push(hash_line(self.lines.line(token)));
            }
            for &token in tokens(&new_tokens, hunk.after) {
                detail.added_hashes.push(hash_line(self.lines.line(token)));
            }
        }
        let generation = self.lines.generation;
        for (at, tokens) in [(old_at, old_tokens), (new_at, new_tokens)] {
            self.recent[at].tokens = tokens;
            self.recent[at].generation = generation;
        }
        detail.added = count(detail.added_hashes.len());
        detail.removed = count(detail.removed_hashes.len());
        detail
    }
}

/// The distinct lines of the blobs a [`BlobDiffer`] diffed since its last reset, each a [`Token`]: equal lines get
/// equal tokens, which is all Myers looks at (its counts and comparisons are of tokens, never of their values), so
/// the edit script is the one of every pair interned on its own (`InternedInput::new`; a property test checks it).
/// Interning every line of both sides of every pair was a fifth of P2's instructions on small histories (hashing
/// the lines); now a blob's lines are interned once, and a version of a file next to one interned before takes
/// the tokens of the lines both share at their start and end from it (usually all but a few).
struct Lines {
    /// A line's hash → the newest token with that hash (older ones in `same_hash`).
    by_hash: HashMap<u64, u32, std::hash::BuildHasherDefault<HashIsKey>>,
    /// For each token, the previous token with the same hash, or `u32::MAX`.
    same_hash: Vec<u32>,
    /// Where each token's line ends in `bytes` (it starts where the previous one ends).
    ends: Vec<usize>,
    bytes: Vec<u8>,
    /// Incremented at each reset, so that tokens of an earlier generation are not taken for this one's. Starts at 1.
    generation: u64,
}

impl Default for Lines {
    fn default() -> Self {
        Lines {
            by_hash: HashMap::default(),
            same_hash: Vec::new(),
            ends: Vec::new(),
            bytes: Vec::new(),
            generation: 1,
        }
    }
}

/// A hasher for keys that are already hashes.
#[derive(Default)]
struct HashIsKey(u64);

impl std::hash::Hasher for HashIsKey {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl Lines {
    fn reset(&mut self) {
        if self.bytes.capacity() > 8 << 20 {
            // A huge file's lines: not kept for the small files that follow.
            *self = Lines {
                generation: self.generation,
                ..Lines::default()
            };
        }
        self.by_hash.clear();
        self.same_hash.clear();
        self.ends.clear();
        self.bytes.clear();
        self.generation += 1;
    }

    /// Whether the lines kept are many more than a pair with `tokens` lines on one side and `bytes` in both
    /// needs, so that starting afresh is cheaper.
    fn outgrew(&self, tokens: usize, bytes: usize) -> bool {
        self.ends.len() > 4096 + 4 * tokens || self.bytes.len() > (1 << 20) + 4 * bytes
    }

    fn count(&self) -> u32 {
        count(self.ends.len())
    }

    fn line(&self, token: Token) -> &[u8] {
        let at = token.0 as usize;
        let start = if at == 0 { 0 } else { self.ends[at - 1] };
        &self.bytes[start..self.ends[at]]
    }

    fn intern(&mut self, line: &[u8]) -> Token {
        use std::hash::BuildHasher;
        let hash = foldhash::fast::FixedState::with_seed(0).hash_one(line);
        let head = self.by_hash.get(&hash).copied().unwrap_or(u32::MAX);
        let mut candidate = head;
        while candidate != u32::MAX {
            if self.line(Token(candidate)) == line {
                return Token(candidate);
            }
            candidate = self.same_hash[candidate as usize];
        }
        let token = count(self.ends.len());
        self.bytes.extend_from_slice(line);
        self.ends.push(self.bytes.len());
        self.same_hash.push(head);
        self.by_hash.insert(hash, token);
        Token(token)
    }

    /// Interns the lines of `data` (each with its `\n`, the last one perhaps without), appending their tokens.
    fn intern_all(&mut self, data: &[u8], into: &mut Vec<Token>) {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', data) {
            into.push(self.intern(&data[start..=end]));
            start = end + 1;
        }
        if start < data.len() {
            into.push(self.intern(&data[start..]));
        }
    }
}

/// The number of lines of `data`, as [`Lines::intern_all`] splits it.
fn count_lines(data: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', data).count() + usize::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// Fills in the tokens of the sides of a pair that are not `known` (in `lines`' current generation), each side a
/// blob's content, its tokens and whether they are known. An unknown side next to a known one takes the tokens of
/// the common head and tail ([`common_line_ends`]) from it and interns only the lines between; when neither is
/// known, the old side is interned whole first.
fn tokenize_pair(lines: &mut Lines, old: (&[u8], &mut Vec<Token>, bool), new: (&[u8], &mut Vec<Token>, bool)) {
    let ((old, old_tokens, mut old_known), (new, new_tokens, new_known)) = (old, new);
    if !old_known && !new_known {
        old_tokens.clear();
        lines.intern_all(old, old_tokens);
        old_known = true;
    }
    let (known, known_tokens, other, other_tokens) = match (old_known, new_known) {
        (true, true) => return,
        (true, false) => (old, &*old_tokens, new, new_tokens),
        _ => (new, &*new_tokens, old, old_tokens),
    };
    let (head, tail) = common_line_ends(known, other);
    let (head_lines, tail_lines) = (count_lines(&known[..head]), count_lines(&known[known.len() - tail..]));
    other_tokens.clear();
    other_tokens.extend_from_slice(&known_tokens[..head_lines]);
    lines.intern_all(&other[head..other.len() - tail], other_tokens);
    other_tokens.extend_from_slice(&known_tokens[known_tokens.len() - tail_lines..]);
}

/// The lengths in bytes of the whole lines `old` and `new` share at their start and at their end, not overlapping:
/// the head ends just after a `\n`, the tail starts just after one (or at the head's end), in both.
fn common_line_ends(old: &[u8], new: &[u8]) -> (usize, usize) {
    let same_start = common_prefix(old, new);
    // A whole-line head: up to the last `\n` inside the shared bytes.
    let head = old[..same_start].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let room = old.len().min(new.len()) - head;
    let same_end = common_suffix(&old[old.len() - room..], &new[new.len() - room..]);
    // A whole-line tail: the shared bytes when they start a line in both (at the head, or after a `\n`), else from
    // just after the first `\n` inside them, which starts a line in both since the shared bytes are equal.
    let (old_start, new_start) = (old.len() - same_end, new.len() - same_end);
    let starts_line = |side: &[u8], at: usize| at == head || side[at - 1] == b'\n';
    let tail = if starts_line(old, old_start) && starts_line(new, new_start) {
        same_end
    } else {
        old[old_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(0, |i| same_end - i - 1)
    };
    (head, tail)
}

/// The length of the common prefix of `a` and `b`, compared 64 bytes at a time (a `memcmp`) before byte by byte:
/// the common head of two versions of a long file is most of it.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// The length of the common suffix of `a` and `b`, as [`common_prefix`] does it from the end.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + CHUNK <= n && a[n - i - CHUNK..n - i] == b[n - i - CHUNK..n - i] {
        i += CHUNK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gix::objs::WriteTo;
    use proptest::prelude::*;

    /// A tree entry name: any bytes but NUL and `/`, weighted to the bytes that sort next to `/` (`-`, `.`, `0`)
    /// and to spaces, which a raw scan could mistake for the end of a mode.
    fn name() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            8 => prop::sample::select(b"-.0 a".to_vec()),
            1 => any::<u8>().prop_filter("not NUL or /", |b| *b != 0 && *b != b'/'),
        ];
        prop_oneof![
            prop::collection::vec(byte.clone(), 1..4),
            prop::collection::vec(byte, 1..12)
        ]
    }

    fn mode() -> impl Strategy<Value = EntryMode> {
        prop::sample::select(vec![
            EntryKind::Blob,
            EntryKind::BlobExecutable,
            EntryKind::Link,
            EntryKind::Tree,
            EntryKind::Commit,
        ])
        .prop_map(EntryMode::from)
    }

    /// The hunks of the line diff of `old` and `new`, every line of both sides interned on its own (as
    /// `InternedInput::new` does).
    fn line_diff(old: &[u8], new: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        use gix::diff::blob::{Algorithm, Diff, InternedInput};
        let input = InternedInput::new(old, new);
        let diff = Diff::compute(Algorithm::Myers, &input);
        let text = |side: &[Token], range| -> Vec<u8> {
            tokens(side, range)
                .iter()
                .flat_map(|&t| input.interner[t].to_vec())
                .collect()
        };
        diff.hunks()
            .map(|h| (text(&input.before, h.before), text(&input.after, h.after)))
            .collect()
    }

    /// The hunks of the line diffs of a file's versions, newest first (`versions[i + 1]` to `versions[i]`), as a
    /// [`BlobDiffer`] computes them: one [`Lines`], each version's tokens reused by the next pair, the lines reset
    /// where `reset` says (as when the pair shares no blob with the last).
    fn chained_line_diffs(versions: &[Vec<u8>], reset: &[bool]) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        use gix::diff::blob::{Algorithm, Diff};
        let mut lines = Lines::default();
        let mut known: Vec<(Vec<Token>, u64)> = vec![(Vec::new(), 0); versions.len()];
        let mut diffs = Vec::new();
        for i in 0..versions.len().saturating_sub(1) {
            if reset.get(i).copied().unwrap_or(false) {
                lines.reset();
            }
            let (old, new) = (&versions[i + 1], &versions[i]);
            let generation = lines.generation;
            let mut old_tokens = std::mem::take(&mut known[i + 1].0);
            let mut new_tokens = std::mem::take(&mut known[i].0);
            let (old_known, new_known) = (known[i + 1].1 == generation, known[i].1 == generation);
            tokenize_pair(
                &mut lines,
                (old, &mut old_tokens, old_known),
                (new, &mut new_tokens, new_known),
            );
            assert_eq!(
                (old_tokens.len(), new_tokens.len()),
                (count_lines(old), count_lines(new))
            );
            let mut diff = Diff::default();
            diff.compute_with(Algorithm::Myers, &old_tokens, &new_tokens, lines.count());
            let text = |side: &[Token], range| -> Vec<u8> {
                tokens(side, range)
                    .iter()
                    .flat_map(|&t| lines.line(t).to_vec())
                    .collect()
            };
            diffs.push(
                diff.hunks()
                    .map(|h| (text(&old_tokens, h.before), text(&new_tokens, h.after)))
                    .collect(),
            );
            known[i + 1] = (old_tokens, generation);
            known[i] = (new_tokens, generation);
        }
        diffs
    }

    #[test]
    fn common_prefix_and_suffix_across_chunks() {
        let long: Vec<u8> = (0..200u8).collect();
        let mut other = long.clone();
        other[130] = 0xff;
        assert_eq!((common_prefix(&long, &other), common_suffix(&long, &other)), (130, 69));
        assert_eq!(
            (common_prefix(&long, &long[..70]), common_suffix(&long, &long[130..])),
            (70, 70)
        );
        assert_eq!((common_prefix(b"", b"a"), common_suffix(b"ab", b"b")), (0, 1));
    }

    #[test]
    fn common_line_ends_are_whole_lines() {
        assert_eq!(common_line_ends(b"a\nb\nc\n", b"a\nx\nc\n"), (2, 2));
        assert_eq!(common_line_ends(b"a\nbc\n", b"a\nxc\n"), (2, 0));
        assert_eq!(common_line_ends(b"ab\n", b"ab\n"), (3, 0));
        assert_eq!(common_line_ends(b"a\n", b"a\na\n"), (2, 0));
        assert_eq!(common_line_ends(b"x\na\n", b"a\n"), (0, 2));
        assert_eq!(common_line_ends(b"abc", b"abd"), (0, 0));
        assert_eq!(common_line_ends(b"xa\n", b"a\n"), (0, 0));
        assert_eq!(common_line_ends(b"a\nxb\nc\n", b"a\nb\nc\n"), (2, 2));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A file's versions diffed with each blob's tokens reused by the next pair, the common head and tail of a
        /// pair taken from the side interned before, give the diffs of every pair interned on its own.
        #[test]
        fn reusing_tokens_gives_the_same_diffs(
            first in prop::collection::vec(prop::sample::select(vec!["a\n", "b\n", "c\n", "a", "\n", "bb\n", "xa\n"]), 0..12),
            steps in prop::collection::vec(
                prop::collection::vec((0usize..12, prop::sample::select(vec!["a\n", "b\n", "x\n", "", "c"])), 0..4),
                1..5,
            ),
            reset in prop::collection::vec(prop::bool::weighted(0.2), 0..5),
        ) {
            let mut versions: Vec<Vec<u8>> = vec![first.concat().into_bytes()];
            for edits in steps {
                let last = String::from_utf8(versions.last().expect("one version").clone()).expect("text");
                let mut lines: Vec<&str> = last.split_inclusive('\n').collect();
                for (at, line) in edits {
                    let at = at.min(lines.len());
                    if line.is_empty() && at < lines.len() { lines.remove(at); } else { lines.insert(at, line); }
                }
                versions.push(lines.concat().into_bytes());
            }
            let expected: Vec<_> = versions.windows(2).map(|pair| line_diff(&pair[1], &pair[0])).collect();
            prop_assert_eq!(chained_line_diffs(&versions, &reset), expected);
            for pair in versions.windows(2) {
                let (head, tail) = common_line_ends(&pair[1], &pair[0]);
                prop_assert!(head + tail <= pair[0].len().min(pair[1].len()));
            }
        }

        /// `find_entries` (early exits, eight-byte NUL search) finds what decoding every entry finds, in trees
        /// whose names share prefixes with the wanted names and whose ids hold NULs and spaces.
        #[test]
        fn find_entries_agrees_with_decoding_the_tree(
            entries in prop::collection::btree_map(name(), (mode(), any::<[u8; 20]>()), 0..40),
            absent in prop::collection::vec(name(), 0..4),
            pick in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let mut tree = gix::objs::Tree::empty();
            tree.entries = entries
                .iter()
                .map(|(name, (mode, id))| gix::objs::tree::Entry {
                    mode: *mode,
                    filename: name.clone().into(),
                    oid: ObjectId::from_bytes_or_panic(id),
                })
                .collect();
            tree.entries.sort();
            let mut data = Vec::new();
            tree.write_to(&mut data).expect("a valid tree");

            let present: Vec<&Vec<u8>> = entries.keys().collect();
            let mut wanted: Vec<&[u8]> = absent.iter().map(Vec::as_slice).collect();
            if !present.is_empty() {
                wanted.extend(pick.iter().map(|index| present[index.index(present.len())].as_slice()));
            }
            wanted.sort_unstable();
            wanted.dedup();
            let expected: Vec<Side> = wanted
                .iter()
                .map(|name| {
                    gix::objs::TreeRefIter::from_bytes(&data, gix::hash::Kind::Sha1)
                        .map(|entry| entry.expect("a valid entry"))
                        .find(|entry| entry.filename == *name)
                        .map(|entry| (entry.mode, entry.oid.to_owned()))
                })
                .collect();
            prop_assert_eq!(find_entries(&data, 20, &wanted).unwrap(), expected);
        }
    }

    #[test]
    fn find_entries_reports_a_truncated_tree() {
        let data = b"100644 a\0short";
        assert_eq!(find_entries(data, 20, &[b"a"]), Err("a tree entry with a truncated id"));
        assert_eq!(
            find_entries(b"100644 a", 20, &[b"a"]),
            Err("a tree entry without a name end")
        );
    }

    #[test]
    fn find_nul_finds_the_first_nul_at_any_offset() {
        for len in 0..20 {
            for at in 0..len {
                let mut data = vec![0xff_u8; len];
                data[at] = 0;
                if at + 1 < len {
                    data[len - 1] = 0;
                }
                for from in 0..=at {
                    assert_eq!(find_nul(&data, from), Some(at), "len {len}, NUL at {at}, from {from}");
                }
            }
            assert_eq!(find_nul(&vec![1_u8; len], 0), None);
        }
    }
}
