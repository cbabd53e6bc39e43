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
//! A run appends what it learned (the entries of the commits whose knowledge grew, and the path sets they added);
//! the file is rewritten with the entries the run used alone when more than a quarter of it is stale (entries a
//! later one replaced, or commits the run did not use), so it does not grow with every revision ever scanned.
//! Format (little-endian), after the envelope of [`super::cache_file`] (magic `phase0-p2-diffs`), per segment: the
//! number of path sets it adds (u32) and each set (u32 count + paths, each u32 length + UTF-8), numbered after
//! those of the segments before it; the number of entries (u64) and the entries. An entry: the commit id (u8
//! length + bytes), whole (u8), the path sets known (u32 count + u32 set numbers), the number of files (u32), and
//! per file: the path (u32 length + UTF-8), the change (u8), whether line detail follows (u8), and then lines added
//! and removed (u32 each), binary (u8), and the added and removed line hashes (u32 count + u64 each). A later entry
//! of a commit replaces an earlier one.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::cache_file::{self, Loaded, Tail, put_id, put_text};
use super::commits::{CommitDiff, DiffDetail, DiffRequest, FileChange, FileDiff, LineHashes, ObjectId};

const MAGIC: &[u8] = b"phase0-p2-diffs";
const FORMAT: u32 = 3;

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
    /// Read from the file, and not learned about since: the file's entry says all of it.
    on_file: bool,
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
    /// Commits whose knowledge this run used or added: the ones written back (hashed: a batch on git.git adds tens
    /// of thousands; sorted when written).
    used: gix::hashtable::HashSet<ObjectId>,
    changed: bool,
    /// The file as read, when it was valid: what an append continues.
    tail: Option<Tail>,
    /// Entries in the file, those a later one replaced included, and the path sets it numbers.
    entries_on_file: u64,
    sets_on_file: usize,
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
        match cache_file::load(&path, "diff cache", |read| decode(read, &cache.stamp)) {
            Loaded::Missing => (cache, None),
            Loaded::Valid(Decoded {
                sets,
                commits,
                entries,
                tail,
            }) => {
                cache.set_ids = sets.iter().cloned().zip(0..).collect();
                cache.sets_on_file = sets.len();
                cache.sets = sets;
                cache.commits = commits;
                cache.entries_on_file = entries;
                cache.tail = Some(tail);
                (cache, None)
            }
            Loaded::Unreadable(warning) => (cache, Some(warning)),
            Loaded::Refused(warning) => {
                // Rewritten even when the run learns nothing.
                cache.changed = true;
                (cache, Some(warning))
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
        known.on_file = false;
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

    /// Counts the commits of `ids` this cache knows as used by this run (a run that took links from the link cache
    /// skips diffs a later run may need), so that they are written back.
    pub fn keep(&mut self, ids: &[ObjectId]) {
        for id in ids {
            if self.commits.contains_key(id) {
                self.used.insert(*id);
            }
        }
    }

    /// Keeps what is known of the commits this run used, when it learned something or the file holds commits it did
    /// not use: appends the entries of the commits it learned about, or rewrites the file with the used commits
    /// alone, atomically, when more than a quarter of it would be stale ([`cache_file::keep`]). Returns a
    /// warning when it cannot be written (the run's reports do not depend on it).
    pub fn save(self) -> Option<String> {
        let path = self.path.as_ref()?;
        if !self.changed && self.used.len() == self.commits.len() {
            return None;
        }
        // In id order, the order a file lists entries in; the whole used set is sorted only for a rewrite.
        let mut learned: Vec<(&ObjectId, &Known)> = self
            .used
            .iter()
            .filter_map(|id| Some((id, self.commits.get(id)?)))
            .filter(|(_, known)| !known.on_file)
            .collect();
        learned.sort_unstable_by_key(|&(id, _)| id);
        // The latest entry of each used commit the run did not learn about is still current; the rest of the file
        // (entries a later one replaces, commits this run did not use) is stale.
        let live = (self.used.len() - learned.len()) as u64;
        let written = cache_file::keep(
            path,
            self.tail.as_ref(),
            (self.entries_on_file, live, learned.len() as u64),
            |sink| self.encode_appended(sink, &learned),
            || self.rewrite(path),
        );
        written
            .err()
            .map(|error| format!("{}: cannot write the diff cache ({error})", path.display()))
    }

    /// The file with the used commits alone.
    fn rewrite(&self, path: &Path) -> std::io::Result<()> {
        let used = self.used_in_order();
        cache_file::write_new(path, cache_file::header(MAGIC, FORMAT, &self.stamp), |sink| {
            encode(self, &used, sink)
        })
    }

    /// The used commits in id order: the order a file lists them in.
    fn used_in_order(&self) -> Vec<&ObjectId> {
        let mut used: Vec<&ObjectId> = self.used.iter().collect();
        used.sort_unstable();
        used
    }

    /// A segment after the file's: the path sets this run added (numbered after the file's) and the `learned`
    /// entries.
    fn encode_appended(&self, sink: &mut cache_file::Sink<'_>, learned: &[(&ObjectId, &Known)]) -> std::io::Result<()> {
        let added = &self.sets[self.sets_on_file..];
        put_sets(&mut sink.buf, added.iter());
        let same = |scope: &u32| *scope;
        sink.buf.extend_from_slice(&(learned.len() as u64).to_le_bytes());
        for &(id, known) in learned {
            sink.flush_if_full()?;
            put_entry(&mut sink.buf, id, known, same);
        }
        Ok(())
    }
}

fn put_sets<'s>(out: &mut Vec<u8>, sets: impl ExactSizeIterator<Item = &'s BTreeSet<String>>) {
    out.extend_from_slice(&(sets.len() as u32).to_le_bytes());
    for paths in sets {
        out.extend_from_slice(&(paths.len() as u32).to_le_bytes());
        for path in paths {
            put_text(out, path);
        }
    }
}

fn put_entry(out: &mut Vec<u8>, id: &ObjectId, known: &Known, scope_number: impl Fn(&u32) -> u32) {
    put_id(out, id);
    out.push(u8::from(known.whole));
    out.extend_from_slice(&(known.scopes.len() as u32).to_le_bytes());
    for scope in &known.scopes {
        out.extend_from_slice(&scope_number(scope).to_le_bytes());
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

/// Writes the knowledge of the `used` commits (in id order) into `sink` as the file's one segment, with only the path
/// sets they refer to (renumbered in order of first use).
fn encode(cache: &DiffCache, used: &[&ObjectId], sink: &mut cache_file::Sink<'_>) -> std::io::Result<()> {
    let mut renumbered: HashMap<u32, u32> = HashMap::new();
    let mut sets: Vec<u32> = Vec::new();
    for &id in used {
        for &scope in cache.commits.get(id).map_or(&[][..], |k| &k.scopes[..]) {
            renumbered.entry(scope).or_insert_with(|| {
                sets.push(scope);
                sets.len() as u32 - 1
            });
        }
    }
    put_sets(&mut sink.buf, sets.iter().map(|&set| &cache.sets[set as usize]));
    let used: Vec<(&ObjectId, &Known)> = used
        .iter()
        .filter_map(|&id| Some((id, cache.commits.get(id)?)))
        .collect();
    sink.buf.extend_from_slice(&(used.len() as u64).to_le_bytes());
    for (id, known) in used {
        sink.flush_if_full()?;
        put_entry(&mut sink.buf, id, known, |scope| renumbered[scope]);
    }
    Ok(())
}

struct Decoded {
    sets: Vec<BTreeSet<String>>,
    commits: gix::hashtable::HashMap<ObjectId, Known>,
    entries: u64,
    tail: Tail,
}

fn decode(read: &cache_file::FileBytes, stamp: &str) -> Result<Decoded, String> {
    let segments = cache_file::open(read, MAGIC, FORMAT, stamp, "diff cache")?;
    let mut sets = Vec::new();
    let mut commits = gix::hashtable::HashMap::default();
    let mut entries = 0;
    for mut r in segments.bodies {
        for _ in 0..r.count(4)? {
            let mut set = BTreeSet::new();
            for _ in 0..r.count(4)? {
                set.insert(r.text()?.to_string());
            }
            sets.push(set);
        }
        let count = r.u64()?;
        entries += count;
        for _ in 0..count {
            let (id, known) = decode_entry(&mut r, sets.len())?;
            commits.insert(id, known);
        }
        if !r.is_empty() {
            return Err("the cache file has bytes after its entries".to_string());
        }
    }
    Ok(Decoded {
        sets,
        commits,
        entries,
        tail: segments.tail,
    })
}

fn decode_entry(r: &mut cache_file::Reader<'_>, sets: usize) -> Result<(ObjectId, Known), String> {
    let id = r.id()?;
    let mut known = Known {
        whole: r.u8()? != 0,
        on_file: true,
        ..Known::default()
    };
    for _ in 0..r.count(4)? {
        let scope = r.u32()?;
        if scope as usize >= sets {
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
    Ok((id, known))
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
    fn a_rerun_appends_what_it_learned_and_a_stale_file_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2diffs");
        let other = ObjectId::from_bytes_or_panic(&[2; 20]);
        let a = DiffRequest::among(id(), set(&["a.rs"]));
        let a_diff = CommitDiff {
            id: id(),
            files: vec![file("a.rs", vec![1])],
        };
        // Three more commits, so that one replaced entry is not a quarter of the file.
        let others: Vec<(DiffRequest, CommitDiff)> = (3..6u8)
            .map(|n| {
                let id = ObjectId::from_bytes_or_panic(&[n; 20]);
                (DiffRequest::whole(id), CommitDiff { id, files: vec![] })
            })
            .collect();
        let (mut cache, _) = DiffCache::open(path.clone(), "abc");
        cache.put(&a, DiffDetail::Lines, &a_diff);
        for (request, diff) in &others {
            cache.put(request, DiffDetail::Paths, diff);
        }
        assert_eq!(cache.save(), None);
        let first = std::fs::read(&path).unwrap();

        // A second run: the first commit again, under a new path set too, and a new commit.
        let (mut cache, warning) = DiffCache::open(path.clone(), "abc");
        assert_eq!(warning, None);
        assert_eq!(cache.get(&a, DiffDetail::Lines), Some(a_diff.clone()));
        for (request, diff) in &others {
            assert_eq!(cache.get(request, DiffDetail::Paths).as_ref(), Some(diff));
        }
        let b = DiffRequest::among(id(), set(&["b.rs"]));
        cache.put(
            &b,
            DiffDetail::Paths,
            &CommitDiff {
                id: id(),
                files: vec![],
            },
        );
        let whole = DiffRequest::whole(other);
        let other_diff = CommitDiff {
            id: other,
            files: vec![paths_only(file("c.rs", vec![]))],
        };
        cache.put(&whole, DiffDetail::Paths, &other_diff);
        assert_eq!(cache.save(), None);
        let second = std::fs::read(&path).unwrap();
        assert!(second.len() > first.len() && second.starts_with(&first), "appended");

        let (mut cache, warning) = DiffCache::open(path.clone(), "abc");
        assert_eq!(warning, None);
        assert_eq!((cache.entries_on_file, cache.sets.len()), (6, 2));
        assert_eq!(cache.get(&a, DiffDetail::Lines), Some(a_diff.clone()));
        assert_eq!(
            cache.get(&b, DiffDetail::Paths),
            Some(CommitDiff {
                id: id(),
                files: vec![]
            })
        );
        assert_eq!(cache.get(&whole, DiffDetail::Paths), Some(other_diff.clone()));
        for (request, diff) in &others {
            assert_eq!(cache.get(request, DiffDetail::Paths).as_ref(), Some(diff));
        }
        // Nothing learned, everything used: nothing written.
        assert_eq!(cache.save(), None);
        assert_eq!(std::fs::read(&path).unwrap(), second);

        // A run that uses the new commit only: five of the six entries are stale, so the file is rewritten.
        let (mut cache, _) = DiffCache::open(path.clone(), "abc");
        assert_eq!(cache.get(&whole, DiffDetail::Paths), Some(other_diff.clone()));
        assert_eq!(cache.save(), None);
        let (mut cache, warning) = DiffCache::open(path.clone(), "abc");
        assert_eq!((warning, cache.entries_on_file, cache.sets.len()), (None, 1, 0));
        assert_eq!(cache.get(&whole, DiffDetail::Paths), Some(other_diff));
        assert_eq!(cache.get(&a, DiffDetail::Paths), None);

        // A run killed while appending leaves a damaged file: refused, then rewritten.
        let mut cut = second.clone();
        cut.truncate(second.len() - 3);
        std::fs::write(&path, &cut).unwrap();
        let (cache, warning) = DiffCache::open(path.clone(), "abc");
        assert!(warning.unwrap().contains("truncated"));
        assert_eq!(cache.save(), None);
        assert_eq!(DiffCache::open(path, "abc").1, None);
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
        let header = cache_file::header(MAGIC, FORMAT, &cache.stamp);
        let good = cache_file::file_bytes(header.clone(), |sink| encode(&cache, &cache.used_in_order(), sink)).unwrap();
        let body = &good[header.len() + 8..good.len() - 16];
        let decoded = |body: &[u8]| {
            decode(
                &cache_file::FileBytes::of(cache_file::sealed(&header, body)),
                &cache.stamp,
            )
        };
        assert_eq!(
            decoded(body).map(|d| (d.entries, d.commits.len(), d.sets.len())),
            Ok((1, 1, 1))
        );
        for cut in 0..body.len() {
            let _ = decoded(&body[..cut]);
        }
        for i in 0..body.len() {
            for delta in [1u8, 0x80] {
                let mut bad = body.to_vec();
                bad[i] = bad[i].wrapping_add(delta);
                let _ = decoded(&bad);
            }
        }
    }
}
