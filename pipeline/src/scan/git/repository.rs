//! Repository access: opening isolated from the user's git configuration, per-thread handles with their delta
//! caches, object lookups that name what is missing, and revision resolution.

use super::*;

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use gix::bstr::ByteSlice;

use crate::scan::commits::ObjectId;

/// Delta cache budget, shared by the worker threads (each gets a share between 4 and 128 MiB; git's
/// `core.deltaBaseCacheLimit` is 96 MiB per process). Since the cache holds every base of a delta chain
/// (`vendor/README.md`), a small one does nearly as well as a large one. On git.git (thin-LTO build, 2 threads):
/// 128 MiB: 3.6 s, 6.1 s of CPU, 593 MiB peak RSS; 32 MiB: 3.55 s, 6.2 s, 488 MiB; 16 MiB: 3.6 s, 6.4 s,
/// 470 MiB (BENCHMARKS.md).
pub(super) const DELTA_CACHE_TOTAL_BYTES: usize = 16 * 1024 * 1024;
/// Tags pointing at tags are followed this deep at most (a cycle cannot hang the scan).
pub(super) const MAX_TAG_CHAIN: usize = 64;

/// A per-thread handle with a [`DeltaCache`]: gix handles are cheap to create and must not be shared across
/// threads, so every rayon worker gets its own. No object cache: the delta cache holds every object a delta chain
/// produced (with the patched gix-pack, `vendor/README.md`), so a second cache of the same trees only cost copies
/// (on git.git, 4.7 s without it against 5.0 s with 8 MiB per thread).
pub(super) fn thread_handle(repo: &gix::ThreadSafeRepository) -> gix::Repository {
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
///
/// The entries live in one ring buffer of `limit` bytes, written in order and evicted in order (an entry that does
/// not fit before the ring's end starts again at its beginning): no allocation per entry. With a `Vec` per entry,
/// freed and allocated tens of thousands of times per batch, those allocations were most of a run's page faults
/// (git.git: about 60 of 85 thousand). Rings are kept for the next cache (each batch makes new handles, [`RINGS`]).
///
/// Entries over an eighth of the ring (whole versions of a file of a megabyte or more: agent-written histories hold
/// 1–3 MB source files that most of their fixes touch) are kept apart, each in a buffer of its own, newest last, up to
/// [`LARGE_ENTRIES_PER_RING`] times the ring's size: in the ring one would evict hundreds of small entries, and
/// without them every read of such a file inflated its whole delta chain again (on Jasonzhangf/routecodex, half of
/// the run's time was inflating; BENCHMARKS.md). A history without such files never fills it.
pub(crate) struct DeltaCache {
    ring: Vec<u8>,
    /// Where the next entry is written.
    head: usize,
    /// Key → (start, length, kind, compressed size).
    entries: HashMap<(u32, u64), (usize, usize, gix::objs::Kind, usize)>,
    /// The entries in the order written: (key, start, length).
    order: VecDeque<((u32, u64), usize, usize)>,
    limit: usize,
    /// The large entries, oldest first, and their total size.
    large: VecDeque<LargeEntry>,
    large_bytes: usize,
}

/// A [`DeltaCache`] entry kept apart from the ring.
struct LargeEntry {
    key: (u32, u64),
    bytes: Vec<u8>,
    kind: gix::objs::Kind,
    compressed_size: usize,
}

/// The large entries of a [`DeltaCache`] may take this many times its ring's size.
const LARGE_ENTRIES_PER_RING: usize = 2;

/// Rings of caches dropped, for the next ones: as many as there are threads at most (a batch's per-thread handles),
/// all of the size last dropped (P2's and P3's caches have different limits; a ring of another size is freed).
static RINGS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

impl DeltaCache {
    pub(crate) fn new(limit: usize) -> Self {
        DeltaCache {
            ring: Vec::new(),
            head: 0,
            entries: HashMap::new(),
            order: VecDeque::new(),
            limit,
            large: VecDeque::new(),
            large_bytes: 0,
        }
    }

    /// Keeps a large entry, evicting the oldest until the large entries fit their budget; an evicted buffer big
    /// enough is written again rather than freed (a fresh one would be faulted in and zeroed page by page).
    fn put_large(&mut self, key: (u32, u64), data: &[u8], kind: gix::objs::Kind, compressed_size: usize) {
        let budget = self.limit * LARGE_ENTRIES_PER_RING;
        if data.len() > budget || self.large.iter().any(|e| e.key == key) {
            return;
        }
        let mut spare: Option<Vec<u8>> = None;
        while self.large_bytes + data.len() > budget {
            let Some(LargeEntry { bytes, .. }) = self.large.pop_front() else {
                break;
            };
            self.large_bytes -= bytes.len();
            if spare.as_ref().is_none_or(|s| s.capacity() < bytes.capacity()) {
                spare = Some(bytes);
            }
        }
        let mut buffer = spare.filter(|s| s.capacity() >= data.len()).unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(data);
        self.large_bytes += buffer.len();
        self.large.push_back(LargeEntry {
            key,
            bytes: buffer,
            kind,
            compressed_size,
        });
    }

    fn evict_oldest(&mut self) {
        if let Some((key, ..)) = self.order.pop_front() {
            self.entries.remove(&key);
        }
    }
}

impl Drop for DeltaCache {
    fn drop(&mut self) {
        if self.ring.is_empty() {
            return;
        }
        let mut rings = RINGS.lock().unwrap_or_else(PoisonError::into_inner);
        rings.retain(|ring| ring.len() == self.ring.len());
        if rings.len() < rayon::current_num_threads().max(2) {
            rings.push(std::mem::take(&mut self.ring));
        }
    }
}

impl gix::odb::pack::cache::DecodeEntry for DeltaCache {
    fn put(&mut self, pack_id: u32, offset: u64, data: &[u8], kind: gix::objs::Kind, compressed_size: usize) {
        let key = (pack_id, offset);
        let len = data.len();
        // An empty entry is not kept: nothing to save, and an empty range at the front of the previous lap would
        // stop the overlap check below before the entry written after it, which would then be overwritten while
        // still answering for its key.
        if len > self.limit / 8 {
            return self.put_large(key, data, kind, compressed_size);
        }
        if len == 0 || self.entries.contains_key(&key) {
            return;
        }
        if self.ring.len() < self.limit {
            let kept = {
                let mut rings = RINGS.lock().unwrap_or_else(PoisonError::into_inner);
                let at = rings.iter().position(|ring| ring.len() == self.limit);
                at.map(|at| rings.swap_remove(at))
            };
            // Zeroed memory the system maps lazily: a page is faulted in when an entry is first written to it.
            self.ring = kept.unwrap_or_else(|| vec![0; self.limit]);
        }
        // The entries after `head` (from the ring's previous lap) are the oldest, in order of position; an entry that
        // does not fit before the end evicts them all and starts at 0.
        if self.head + len > self.limit {
            while self.order.front().is_some_and(|&(_, start, _)| start >= self.head) {
                self.evict_oldest();
            }
            self.head = 0;
        }
        let (start, end) = (self.head, self.head + len);
        while self.order.front().is_some_and(|&(_, at, n)| at < end && start < at + n) {
            self.evict_oldest();
        }
        self.ring[start..end].copy_from_slice(data);
        self.head = end;
        self.entries.insert(key, (start, len, kind, compressed_size));
        self.order.push_back((key, start, len));
    }

    fn get(&mut self, pack_id: u32, offset: u64, out: &mut Vec<u8>) -> Option<(gix::objs::Kind, usize)> {
        let key = (pack_id, offset);
        let (bytes, kind, compressed_size) = match self.entries.get(&key) {
            Some(&(start, len, kind, compressed_size)) => (&self.ring[start..start + len], kind, compressed_size),
            None => {
                let entry = self.large.iter().rev().find(|e| e.key == key)?;
                (entry.bytes.as_slice(), entry.kind, entry.compressed_size)
            }
        };
        out.clear();
        out.extend_from_slice(bytes);
        Some((kind, compressed_size))
    }
}

/// Hands the pages of the pack files this process has read back to the page cache, on Linux (elsewhere it does
/// nothing). gix maps packs read-only, and every page read stays in the process's resident set: after
/// the walk, the commits' pages of git.git's pack (tens of megabytes) counted in the peak memory of the diffs,
/// which never read them again. A page read again afterwards is mapped again from the page cache (a minor fault,
/// no disk read). Nothing of any repository or its objects changes. Every pack mapped is released, not only the
/// scanned repository's own: a clone that borrows its objects (`git clone --shared`, alternates) reads them from
/// another repository's packs.
pub fn release_pack_pages() {
    #[cfg(target_os = "linux")]
    {
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return;
        };
        for line in maps.lines() {
            // start-end perms offset dev inode path
            let mut fields = line.splitn(6, ' ');
            let (Some(range), Some(perms), Some(path)) = (fields.next(), fields.next(), fields.nth(3)) else {
                continue;
            };
            let path = Path::new(path.trim_start());
            if !perms.starts_with("r") || perms.as_bytes().get(1) == Some(&b'w') {
                continue;
            }
            // Pack data only (`objects/pack/*.pack`): the index is small and read by every lookup.
            let in_pack_dir = path.parent().and_then(Path::file_name).is_some_and(|d| d == "pack");
            if !in_pack_dir || path.extension().is_none_or(|e| e != "pack") {
                continue;
            }
            let Some((start, end)) = range.split_once('-') else {
                continue;
            };
            let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) else {
                continue;
            };
            // SAFETY: a read-only mapping of a pack file (no `w` in its permissions) that gix keeps open:
            // MADV_DONTNEED drops the process's pages of it, and the next read maps the same file contents again.
            // No memory is unmapped and no content changes, so references into the mapping stay valid.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
}

pub(super) fn rev_of(options: &WalkOptions) -> &str {
    options.rev.as_deref().unwrap_or("HEAD")
}

pub(super) fn git_error(repo: &gix::Repository, what: &str, err: impl std::fmt::Display) -> GitScanError {
    GitScanError::Git {
        path: repo.git_dir().to_path_buf(),
        message: format!("{what}: {err}"),
    }
}

pub(super) fn head_state(repo: &gix::Repository) -> Result<HeadState, GitScanError> {
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
pub(super) fn shallow_commits(repo: &gix::Repository) -> Result<Vec<ObjectId>, GitScanError> {
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
pub(super) struct Objects<'r> {
    repo: &'r gix::Repository,
    missing: Cell<Option<ObjectId>>,
}

impl<'r> Objects<'r> {
    pub(super) fn new(repo: &'r gix::Repository) -> Self {
        Objects {
            repo,
            missing: Cell::new(None),
        }
    }

    /// Reads `id`, which must be of `kind`; `context` says where it was needed (for the error message).
    pub(super) fn read_kind<'b>(
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
    pub(super) fn error(&self, err: impl std::fmt::Display, context: impl FnOnce() -> String) -> GitScanError {
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
pub(super) fn resolve_commit(
    repo: &gix::Repository,
    objects: &Objects<'_>,
    rev: &str,
) -> Result<ObjectId, GitScanError> {
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

#[cfg(test)]
mod tests {
    use super::{DeltaCache, LARGE_ENTRIES_PER_RING};
    use gix::objs::Kind;
    use gix::odb::pack::cache::DecodeEntry;

    /// An empty entry is never kept: an empty range at the front of the previous lap would hide the entry after
    /// it from the overlap check, and that entry would be overwritten while still answering for its key.
    #[test]
    fn an_empty_entry_does_not_shield_the_entry_after_it() {
        let mut cache = DeltaCache::new(4096);
        let mut out = Vec::new();
        cache.put(1, 1, &[1; 100], Kind::Blob, 0);
        cache.put(1, 2, &[], Kind::Blob, 0);
        cache.put(1, 3, &[3; 100], Kind::Blob, 0);
        // Fill the ring to 12 bytes before its end; the next entry wraps to 0 (over entry 1), the one after it is
        // written at 100, where the empty entry and entry 3 start.
        for offset in 10..17 {
            cache.put(1, offset, &[9; 512], Kind::Blob, 0);
        }
        cache.put(1, 17, &[9; 300], Kind::Blob, 0);
        cache.put(1, 20, &[4; 100], Kind::Blob, 0);
        cache.put(1, 21, &[5; 50], Kind::Blob, 0);
        if cache.get(1, 3, &mut out).is_some() {
            assert_eq!(out, vec![3; 100], "entry 3 answers with its own bytes or not at all");
        }
        assert_eq!(cache.get(1, 2, &mut out), None);
        assert_eq!(cache.get(1, 21, &mut out), Some((Kind::Blob, 0)));
        assert_eq!(out, vec![5; 50]);
    }

    /// Entries over an eighth of the ring are kept apart, newest last, within two rings' worth of bytes, and leave
    /// the ring's entries where they are.
    #[test]
    fn large_entries_are_kept_apart_within_their_budget() {
        let limit = 4096;
        let mut cache = DeltaCache::new(limit);
        let mut out = Vec::new();
        for offset in 0..8 {
            cache.put(1, offset, &[offset as u8; 100], Kind::Tree, 1);
        }
        // Five entries of 3,000 bytes: the budget (8,192) holds the newest two.
        for offset in 100..105 {
            cache.put(1, offset, &vec![offset as u8; 3000], Kind::Blob, 2);
        }
        for offset in 100..103 {
            assert_eq!(cache.get(1, offset, &mut out), None, "entry {offset} was evicted");
        }
        for offset in 103..105 {
            assert_eq!(cache.get(1, offset, &mut out), Some((Kind::Blob, 2)), "entry {offset}");
            assert_eq!(out, vec![offset as u8; 3000]);
        }
        assert_eq!((cache.large.len(), cache.large_bytes), (2, 6_000));
        for offset in 0..8 {
            assert_eq!(cache.get(1, offset, &mut out), Some((Kind::Tree, 1)), "entry {offset}");
            assert_eq!(out, vec![offset as u8; 100]);
        }
        // Two smaller ones fit beside them; a third evicts the oldest and is written into its buffer. The same key
        // again is not kept twice.
        cache.put(1, 200, &[7; 600], Kind::Blob, 3);
        cache.put(1, 200, &[8; 600], Kind::Blob, 3);
        cache.put(1, 201, &[6; 600], Kind::Blob, 3);
        assert_eq!(cache.get(1, 103, &mut out), Some((Kind::Blob, 2)));
        cache.put(1, 202, &[5; 1000], Kind::Blob, 3);
        assert_eq!(cache.get(1, 103, &mut out), None);
        assert_eq!(cache.get(1, 200, &mut out), Some((Kind::Blob, 3)));
        assert_eq!(out, vec![7; 600]);
        assert_eq!((cache.large.len(), cache.large_bytes), (4, 5_200));
        assert!(cache.large.back().is_some_and(|e| e.bytes.capacity() >= 3000));
    }

    /// Random-sized entries through a small ring, wrapping many times: every entry the cache answers for holds
    /// exactly the bytes put under its key, and the newest entries are always there, those over an eighth of the
    /// ring (kept apart) included.
    #[test]
    fn the_ring_answers_with_the_bytes_put_and_keeps_the_newest() {
        let limit = 4096;
        let mut cache = DeltaCache::new(limit);
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let content =
            |offset: u64, len: usize| -> Vec<u8> { (0..len).map(|i| (offset as usize * 31 + i) as u8).collect() };
        let mut out = Vec::new();
        let mut lens: Vec<usize> = Vec::new();
        for offset in 0..5_000u64 {
            let len = (next() % 600) as usize;
            cache.put(7, offset, &content(offset, len), Kind::Blob, len / 2);
            lens.push(len);
            // The last entries written, up to a quarter of the ring, are all there (none can have been overwritten),
            // but for empty ones and those over an eighth of it.
            let mut bytes = 0;
            for (offset, &len) in lens.iter().enumerate().rev() {
                bytes += len;
                if bytes > limit / 4 {
                    break;
                }
                let kept = cache.get(7, offset as u64, &mut out);
                if len == 0 {
                    assert_eq!(kept, None, "entry {offset}");
                    continue;
                }
                assert_eq!(kept, Some((Kind::Blob, len / 2)), "entry {offset}");
                assert_eq!(out, content(offset as u64, len), "entry {offset}");
            }
            // Whatever an older key answers is its own bytes.
            let old = next() % (offset + 1);
            if cache.get(7, old, &mut out).is_some() {
                assert_eq!(out, content(old, lens[old as usize]), "entry {old}");
            }
        }
        assert!(cache.ring.len() <= limit && cache.order.iter().map(|&(_, _, n)| n).sum::<usize>() <= limit);
        assert!(cache.large_bytes <= limit * LARGE_ENTRIES_PER_RING);
        cache.put(7, 99_999, &vec![1; limit * LARGE_ENTRIES_PER_RING + 1], Kind::Blob, 0);
        assert_eq!(cache.get(7, 99_999, &mut out), None, "too large to keep");
        assert_eq!(
            cache.get(8, 4_999, &mut out),
            None,
            "another pack's entry at the same offset is another entry"
        );
    }
}
