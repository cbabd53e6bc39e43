//! What P2 learned about each commit's diff, kept between runs (issue 21, item 4): a rerun on a history that grew
//! diffs only the commits it has not diffed before.
//!
//! A diff is a function of the commit (its id names its tree and parents), of what was asked (the paths it was
//! restricted to, the paths that needed line detail, paths only or lines) and of nothing else, so a remembered one
//! is exactly what a new computation would give. Entries are keyed by the commit id and a sha256 of the request;
//! the file is keyed by the repository and carries the pre-registration's sha256 and phase0's version: a cache
//! written under another pre-registration or version is not read, and neither is one whose checksum does not
//! match its contents (damaged, truncated, or not a cache at all). Those are ignored with a warning, never
//! trusted, and replaced at the end of the run. A shallow history is not cached (its boundary commits are diffed
//! against the empty tree; deepening the clone changes them).
//!
//! The file holds the entries the last run used, no more: it does not grow with every revision ever scanned.
//! Format (little-endian): the magic `phase0-p2-diffs`, a format version (u32), phase0's version and the prereg's
//! sha256 (each u32 length + bytes), the number of entries (u64), the entries, and the sha256 of everything
//! before it. An entry: the commit id (u8 length + bytes), the request digest (32 bytes), the number of files
//! (u32), and per file: the path (u32 length + UTF-8), the change (u8), lines added and removed (u32 each), binary
//! (u8), and the added and removed line hashes (u32 count + u64 each).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::cache_file::{self, put_id, put_text};
use super::commits::{CommitDiff, DiffDetail, DiffRequest, FileChange, FileDiff, LineHashes, ObjectId};

const MAGIC: &[u8] = b"phase0-p2-diffs";
const FORMAT: u32 = 2;

/// A changed file's line detail, as a line diff gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Lines {
    added: u32,
    removed: u32,
    binary: bool,
    added_hashes: LineHashes,
    removed_hashes: LineHashes,
}

/// What is known of one commit's diff against its first parent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Known {
    /// Every changed path is known (a whole diff was computed).
    whole: bool,
    /// Path sets (ids into [`DiffCache::sets`]) whose changes are known: a diff restricted to them was computed, so a
    /// path of one of them that is not in `files` did not change.
    scopes: Vec<u32>,
    /// The changed files known, by path (byte order, as a diff lists them), with their line detail once computed.
    files: BTreeMap<String, (FileChange, Option<Lines>)>,
}

/// The remembered diffs of one repository, and how many of this run's requests they answered.
#[derive(Debug, Default)]
pub struct DiffCache {
    path: Option<PathBuf>,
    stamp: String,
    /// Distinct path sets, interned.
    sets: Vec<BTreeSet<String>>,
    set_ids: HashMap<BTreeSet<String>, u32>,
    commits: gix::hashtable::HashMap<ObjectId, Known>,
    /// Commits whose knowledge this run used or added: the ones written back.
    used: BTreeSet<ObjectId>,
    changed: bool,
    pub hits: u64,
    pub computed: u64,
}

/// The cache file of the repository at `git_dir` under `dir`: named by a sha256 of the repository's canonical path.
pub fn file_for(dir: &Path, git_dir: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(git_dir).unwrap_or_else(|_| git_dir.to_path_buf());
    let name = format!("{:x}", Sha256::digest(canonical.to_string_lossy().as_bytes()));
    dir.join(format!("{}.p2diffs", &name[..32]))
}

/// Whether `path` of a diff answering `request` gets line detail (with [`DiffDetail::Lines`]).
fn wants_lines(request: &DiffRequest, path: &str) -> bool {
    request.line_paths.as_ref().is_none_or(|paths| paths.contains(path))
}

impl DiffCache {
    /// No cache: every request is computed, nothing is written.
    pub fn none() -> Self {
        Self::default()
    }

    /// The cache at `path` for diffs under the pre-registration `prereg_sha256`. A missing file is an empty cache;
    /// an unreadable, foreign or damaged one is an empty cache and a warning.
    pub fn open(path: PathBuf, prereg_sha256: &str) -> (Self, Option<String>) {
        let mut cache = DiffCache {
            path: Some(path.clone()),
            stamp: cache_file::stamp(prereg_sha256),
            ..Self::default()
        };
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return (cache, None),
            Err(error) => {
                return (
                    cache,
                    Some(format!(
                        "{}: cannot read the diff cache ({error}); ignored",
                        path.display()
                    )),
                );
            }
        };
        match decode(&bytes, &cache.stamp) {
            Ok((sets, commits)) => {
                cache.set_ids = sets.iter().cloned().zip(0..).collect();
                cache.sets = sets;
                cache.commits = commits;
                (cache, None)
            }
            Err(reason) => {
                cache.changed = true;
                (
                    cache,
                    Some(format!(
                        "{}: {reason}; the cache is ignored and rewritten",
                        path.display()
                    )),
                )
            }
        }
    }

    /// The diff of `request` from what is known, counted as a hit; `None` unless every path it asks about is known
    /// (and, with line detail, every file that needs it has it).
    pub fn get(&mut self, request: &DiffRequest, detail: DiffDetail) -> Option<CommitDiff> {
        let diff = self.lookup(request, detail, None)?;
        self.hits += 1;
        self.used.insert(request.id);
        Some(diff)
    }

    /// [`Self::get`] for a batch, the lookups in parallel (a batch on git.git asks tens of thousands).
    pub fn get_all(&mut self, requests: &[DiffRequest], detail: DiffDetail) -> Vec<Option<CommitDiff>> {
        use rayon::prelude::*;
        let this = &*self;
        // Neighbouring requests share one path set, mostly one the last run asked about too: each distinct set is
        // looked up once, and a commit known under exactly that set needs no path-by-path check.
        let mut exact: HashMap<usize, Option<u32>> = HashMap::new();
        for paths in requests.iter().filter_map(|r| r.only_paths.as_ref()) {
            exact
                .entry(std::sync::Arc::as_ptr(paths) as usize)
                .or_insert_with(|| this.set_ids.get(&**paths).copied());
        }
        let exact_set = |request: &DiffRequest| {
            request
                .only_paths
                .as_ref()
                .and_then(|paths| exact.get(&(std::sync::Arc::as_ptr(paths) as usize)).copied().flatten())
        };
        let answered: Vec<Option<CommitDiff>> = requests
            .par_iter()
            .map(|r| this.lookup(r, detail, exact_set(r)))
            .collect();
        for (request, _) in requests.iter().zip(&answered).filter(|(_, hit)| hit.is_some()) {
            self.hits += 1;
            self.used.insert(request.id);
        }
        answered
    }

    /// `exact`: the id of the request's path set, when the cache holds that very set.
    fn lookup(&self, request: &DiffRequest, detail: DiffDetail, exact: Option<u32>) -> Option<CommitDiff> {
        let known = self.commits.get(&request.id)?;
        let covered = known.whole
            || exact.is_some_and(|id| known.scopes.contains(&id))
            || request.only_paths.as_deref().is_some_and(|wanted| {
                wanted
                    .iter()
                    .all(|path| known.scopes.iter().any(|&id| self.sets[id as usize].contains(path)))
            });
        if !covered {
            return None;
        }
        let mut files = Vec::new();
        for (path, (change, lines)) in &known.files {
            if request
                .only_paths
                .as_deref()
                .is_some_and(|wanted| !wanted.contains(path))
            {
                continue;
            }
            let mut file = FileDiff {
                path: path.clone(),
                change: *change,
                lines_added: 0,
                lines_removed: 0,
                binary: false,
                added_line_hashes: LineHashes::default(),
                removed_line_hashes: LineHashes::default(),
            };
            if detail == DiffDetail::Lines && wants_lines(request, path) {
                let lines = lines.as_ref()?;
                file.lines_added = lines.added;
                file.lines_removed = lines.removed;
                file.binary = lines.binary;
                file.added_line_hashes = lines.added_hashes.clone();
                file.removed_line_hashes = lines.removed_hashes.clone();
            }
            files.push(file);
        }
        Some(CommitDiff { id: request.id, files })
    }

    /// Learns from a computed diff of `request`.
    pub fn put(&mut self, request: &DiffRequest, detail: DiffDetail, diff: &CommitDiff) {
        self.computed += 1;
        if self.path.is_none() {
            return;
        }
        self.changed = true;
        self.used.insert(request.id);
        let scope = request
            .only_paths
            .as_deref()
            .map(|paths| match self.set_ids.get(paths) {
                Some(&id) => id,
                None => {
                    let id = self.sets.len() as u32;
                    self.sets.push(paths.clone());
                    self.set_ids.insert(paths.clone(), id);
                    id
                }
            });
        let known = self.commits.entry(request.id).or_default();
        match scope {
            None => known.whole = true,
            Some(id) if !known.scopes.contains(&id) => known.scopes.push(id),
            Some(_) => {}
        }
        for file in &diff.files {
            let entry = known.files.entry(file.path.clone()).or_insert((file.change, None));
            if detail == DiffDetail::Lines && wants_lines(request, &file.path) {
                entry.1 = Some(Lines {
                    added: file.lines_added,
                    removed: file.lines_removed,
                    binary: file.binary,
                    added_hashes: file.added_line_hashes.clone(),
                    removed_hashes: file.removed_line_hashes.clone(),
                });
            }
        }
    }

    /// Writes what is known of the commits this run used, atomically (a temporary file renamed into place), when
    /// it learned something or the file holds commits it did not use. Returns a warning when it cannot be written
    /// (the run's reports do not depend on it).
    pub fn save(self) -> Option<String> {
        let path = self.path.as_ref()?;
        if !self.changed && self.used.len() == self.commits.len() {
            return None;
        }
        cache_file::write_sealed(path, cache_file::header(MAGIC, FORMAT, &self.stamp), |sink| {
            encode(&self, sink)
        })
        .err()
        .map(|error| format!("{}: cannot write the diff cache ({error})", path.display()))
    }
}

/// Writes the used commits' knowledge into `sink`, after the header [`save`](DiffCache::save) starts it with, with
/// only the path sets they refer to (renumbered in order of first use).
fn encode(cache: &DiffCache, sink: &mut cache_file::Sink<'_>) -> std::io::Result<()> {
    let mut renumbered: HashMap<u32, u32> = HashMap::new();
    let mut sets: Vec<u32> = Vec::new();
    for id in &cache.used {
        for &scope in cache.commits.get(id).map_or(&[][..], |k| &k.scopes[..]) {
            renumbered.entry(scope).or_insert_with(|| {
                sets.push(scope);
                sets.len() as u32 - 1
            });
        }
    }
    let out = &mut sink.buf;
    out.extend_from_slice(&(sets.len() as u32).to_le_bytes());
    for &set in &sets {
        let paths = &cache.sets[set as usize];
        out.extend_from_slice(&(paths.len() as u32).to_le_bytes());
        for path in paths {
            put_text(out, path);
        }
    }
    let used: Vec<(&ObjectId, &Known)> = cache
        .used
        .iter()
        .filter_map(|id| Some((id, cache.commits.get(id)?)))
        .collect();
    out.extend_from_slice(&(used.len() as u64).to_le_bytes());
    for (id, known) in used {
        sink.flush_if_full()?;
        let out = &mut sink.buf;
        put_id(out, id);
        out.push(u8::from(known.whole));
        out.extend_from_slice(&(known.scopes.len() as u32).to_le_bytes());
        for scope in &known.scopes {
            out.extend_from_slice(&renumbered[scope].to_le_bytes());
        }
        out.extend_from_slice(&(known.files.len() as u32).to_le_bytes());
        for (path, (change, lines)) in &known.files {
            put_text(out, path);
            out.push(match change {
                FileChange::Added => 0,
                FileChange::Modified => 1,
                FileChange::Deleted => 2,
                FileChange::TypeChanged => 3,
            });
            match lines {
                None => out.push(0),
                Some(lines) => {
                    out.push(1);
                    out.extend_from_slice(&lines.added.to_le_bytes());
                    out.extend_from_slice(&lines.removed.to_le_bytes());
                    out.push(u8::from(lines.binary));
                    for hashes in [&lines.added_hashes, &lines.removed_hashes] {
                        out.extend_from_slice(&(hashes.len() as u32).to_le_bytes());
                        for hash in hashes.iter() {
                            out.extend_from_slice(&hash.to_le_bytes());
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

type Decoded = (Vec<BTreeSet<String>>, gix::hashtable::HashMap<ObjectId, Known>);

fn decode(bytes: &[u8], stamp: &str) -> Result<Decoded, String> {
    let mut r = cache_file::open(bytes, MAGIC, FORMAT, stamp, "diff cache")?;
    let mut sets = Vec::new();
    for _ in 0..r.count(4)? {
        let mut set = BTreeSet::new();
        for _ in 0..r.count(4)? {
            set.insert(r.text()?.to_string());
        }
        sets.push(set);
    }
    let commits_count = r.u64()?;
    let mut commits = gix::hashtable::HashMap::default();
    for _ in 0..commits_count {
        let id = r.id()?;
        let mut known = Known {
            whole: r.u8()? != 0,
            ..Known::default()
        };
        for _ in 0..r.count(4)? {
            let scope = r.u32()?;
            if scope as usize >= sets.len() {
                return Err("the cache file refers to a path set it does not hold".to_string());
            }
            known.scopes.push(scope);
        }
        for _ in 0..r.count(6)? {
            let path = r.text()?.to_string();
            let change = match r.u8()? {
                0 => FileChange::Added,
                1 => FileChange::Modified,
                2 => FileChange::Deleted,
                3 => FileChange::TypeChanged,
                other => return Err(format!("the cache file holds an unknown change kind {other}")),
            };
            let lines = match r.u8()? {
                0 => None,
                _ => {
                    let added = r.u32()?;
                    let removed = r.u32()?;
                    let binary = r.u8()? != 0;
                    let mut hashes = [Vec::new(), Vec::new()];
                    for list in &mut hashes {
                        let n = r.count(8)?;
                        list.reserve_exact(n);
                        for _ in 0..n {
                            list.push(r.u64()?);
                        }
                    }
                    let [added_hashes, removed_hashes] = hashes;
                    Some(Lines {
                        added,
                        removed,
                        binary,
                        added_hashes: added_hashes.into(),
                        removed_hashes: removed_hashes.into(),
                    })
                }
            };
            known.files.insert(path, (change, lines));
        }
        commits.insert(id, known);
    }
    if !r.is_empty() {
        return Err("the cache file has bytes after its entries".to_string());
    }
    Ok((sets, commits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, hashes: Vec<u64>) -> FileDiff {
        FileDiff {
            path: path.into(),
            change: FileChange::Modified,
            lines_added: hashes.len() as u32,
            lines_removed: 1,
            binary: false,
            added_line_hashes: hashes.into(),
            removed_line_hashes: vec![3].into(),
        }
    }

    fn paths_only(mut f: FileDiff) -> FileDiff {
        f.lines_added = 0;
        f.lines_removed = 0;
        f.added_line_hashes = Default::default();
        f.removed_line_hashes = Default::default();
        f
    }

    fn id() -> ObjectId {
        ObjectId::from_bytes_or_panic(&[1; 20])
    }

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn what_is_known_of_a_commit_answers_requests_it_covers_and_only_those() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2diffs");
        let (mut cache, warning) = DiffCache::open(path.clone(), "abc");
        assert_eq!(warning, None);
        // A diff restricted to a/ä.rs and b.rs, with lines: only a/ä.rs changed.
        let among = DiffRequest::among(id(), set(&["a/ä.rs", "b.rs"]));
        assert_eq!(cache.get(&among, DiffDetail::Lines), None);
        let changed = file("a/ä.rs", vec![7, u64::MAX]);
        cache.put(
            &among,
            DiffDetail::Lines,
            &CommitDiff {
                id: id(),
                files: vec![changed.clone()],
            },
        );
        assert_eq!(cache.save(), None);

        let (mut cache, warning) = DiffCache::open(path.clone(), "abc");
        assert_eq!(warning, None);
        let answer = |files: Vec<FileDiff>| Some(CommitDiff { id: id(), files });
        assert_eq!(cache.get(&among, DiffDetail::Lines), answer(vec![changed.clone()]));
        // A narrower path set is known too: b.rs did not change.
        let narrower = DiffRequest::among(id(), set(&["b.rs"]));
        assert_eq!(cache.get(&narrower, DiffDetail::Lines), answer(vec![]));
        assert_eq!(
            cache.get(&among, DiffDetail::Paths),
            answer(vec![paths_only(changed.clone())])
        );
        // Not known: a path outside the set, or the whole diff.
        assert_eq!(
            cache.get(&DiffRequest::among(id(), set(&["c.rs"])), DiffDetail::Paths),
            None
        );
        assert_eq!(cache.get(&DiffRequest::whole(id()), DiffDetail::Paths), None);
        assert_eq!((cache.hits, cache.computed), (3, 0));
        // A batch gives the same answers and counts the same hits, whether its path sets are the very set the
        // cache holds (shared by two requests) or a covered one.
        let batch = [
            among.clone(),
            DiffRequest {
                only_paths: among.only_paths.clone(),
                ..DiffRequest::whole(id())
            },
            narrower.clone(),
            DiffRequest::among(id(), set(&["c.rs"])),
            DiffRequest::whole(id()),
        ];
        assert_eq!(
            cache.get_all(&batch, DiffDetail::Lines),
            [
                answer(vec![changed.clone()]),
                answer(vec![changed.clone()]),
                answer(vec![]),
                None,
                None
            ]
        );
        assert_eq!((cache.hits, cache.computed), (6, 0));
        // Nothing new, every commit used: the file is left as it is.
        let before = std::fs::read(&path).unwrap();
        assert_eq!(cache.save(), None);
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn line_detail_is_known_only_for_the_files_that_asked_for_it() {
        let (mut cache, _) = DiffCache::open(PathBuf::from("/nonexistent/c"), "abc");
        let mut whole = DiffRequest::whole(id());
        whole.line_paths = Some(std::sync::Arc::new(set(&["a.rs"])));
        let a = file("a.rs", vec![5]);
        let b = paths_only(file("b.rs", vec![6]));
        cache.put(
            &whole,
            DiffDetail::Lines,
            &CommitDiff {
                id: id(),
                files: vec![a.clone(), b.clone()],
            },
        );
        assert_eq!(
            cache.get(&whole, DiffDetail::Lines),
            Some(CommitDiff {
                id: id(),
                files: vec![a.clone(), b.clone()]
            })
        );
        // b.rs's lines were never computed.
        assert_eq!(cache.get(&DiffRequest::whole(id()), DiffDetail::Lines), None);
    }

    #[test]
    fn a_foreign_or_damaged_cache_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2diffs");
        let whole = DiffRequest::whole(id());
        let diff = CommitDiff {
            id: id(),
            files: vec![file("a.rs", vec![1])],
        };
        let (mut cache, _) = DiffCache::open(path.clone(), "abc");
        cache.put(&whole, DiffDetail::Lines, &diff);
        cache.save();
        let good = std::fs::read(&path).unwrap();

        let (mut other, warning) = DiffCache::open(path.clone(), "def");
        assert!(
            warning
                .unwrap()
                .contains("under the pre-registration abc, not this run's")
        );
        assert_eq!(other.get(&whole, DiffDetail::Lines), None);

        let mut flipped = good.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        let (_, warning) = DiffCache::open(path.clone(), "abc");
        assert!(
            warning
                .unwrap()
                .ends_with("the cache file's checksum does not match (damaged); the cache is ignored and rewritten")
        );

        std::fs::write(&path, &good[..good.len() - 40]).unwrap();
        let (mut cache, warning) = DiffCache::open(path.clone(), "abc");
        assert!(warning.is_some());
        assert_eq!(cache.get(&whole, DiffDetail::Lines), None);
        // A damaged cache is rewritten at the end of the run, even when nothing new was learned.
        assert_eq!(cache.save(), None);
        assert!(DiffCache::open(path.clone(), "abc").1.is_none());

        std::fs::write(&path, b"not a cache").unwrap();
        let (_, warning) = DiffCache::open(path.clone(), "abc");
        assert!(
            warning
                .unwrap()
                .ends_with("not a phase0 diff cache; the cache is ignored and rewritten")
        );
    }

    /// Every prefix and every one-byte change of a valid file, its checksum recomputed so the parser sees it:
    /// an error or a value, never a panic.
    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        let (mut cache, _) = DiffCache::open(PathBuf::from("/nonexistent/c"), "abc");
        let among = DiffRequest::among(id(), set(&["a.rs", "b.rs"]));
        cache.put(
            &among,
            DiffDetail::Lines,
            &CommitDiff {
                id: id(),
                files: vec![file("a.rs", vec![1, 2])],
            },
        );
        let good = cache_file::sealed_bytes(cache_file::header(MAGIC, FORMAT, &cache.stamp), |sink| {
            encode(&cache, sink)
        })
        .unwrap();
        let body = &good[..good.len() - 32];
        let sealed = |body: &[u8]| cache_file::seal(body.to_vec());
        assert!(decode(&sealed(body), &cache.stamp).is_ok());
        for cut in 0..body.len() {
            let _ = decode(&sealed(&body[..cut]), &cache.stamp);
        }
        for i in 0..body.len() {
            for delta in [1u8, 0x80] {
                let mut bad = body.to_vec();
                bad[i] = bad[i].wrapping_add(delta);
                let _ = decode(&sealed(&bad), &cache.stamp);
            }
        }
    }
}
