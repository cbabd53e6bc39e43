//! Changed-path Bloom filters from a repository's commit-graph: whether a commit may have changed a path,
//! answered without reading a tree.
//!
//! `git commit-graph write --changed-paths` (or `commitGraph.changedPaths`, or Scalar) stores, for each commit, a
//! Bloom filter of the paths its first-parent diff changed, every leading directory included (the `BIDX` and
//! `BDAT` chunks, gitformat-commit-graph(5)). gix reads the commit-graph but not these chunks, so they are read
//! here, with git's hashing (`bloom.c`: seeded 32-bit murmur3, double hashing). A filter has no false negatives:
//! "not changed" is exact, "maybe" sends the caller to the trees. Anything unexpected in the file (an unknown
//! layout, an offset out of range, a hash of another kind) means no filter for the commits concerned, never an
//! error: the commit-graph is a cache, and the trees give the same answer.

use std::path::Path;

use memmap2::Mmap;

/// The filters of every commit-graph layer (one file, or a split chain) that carries them.
#[derive(Debug, Default)]
pub struct ChangedPaths {
    layers: Vec<Layer>,
}

/// One commit-graph file with changed-path filters.
#[derive(Debug)]
struct Layer {
    data: Mmap,
    hash_len: usize,
    /// Offsets of the chunks: object id fan-out, sorted object ids, filter ends, filter data (after its header).
    fanout: usize,
    ids: usize,
    ends: usize,
    filters: Range,
    commits: usize,
    hash_version: u32,
    num_hashes: u32,
}

type Range = std::ops::Range<usize>;

/// The filter of one commit.
#[derive(Debug, Clone, Copy)]
pub struct Filter<'a> {
    bits: &'a [u8],
    hash_version: u32,
    num_hashes: u32,
}

impl ChangedPaths {
    /// The filters of the commit-graph in `objects/info` (the single file, else the split chain, as git reads
    /// them); empty when there is none, it has no filters, or it cannot be read.
    pub fn open(objects: &Path, object_hash: gix::hash::Kind) -> Self {
        let info = objects.join("info");
        let single = info.join("commit-graph");
        let files = if single.is_file() {
            vec![single]
        } else {
            let dir = info.join("commit-graphs");
            std::fs::read_to_string(dir.join("commit-graph-chain"))
                .map(|chain| {
                    chain
                        .lines()
                        .map(str::trim)
                        .filter(|line| !line.is_empty())
                        .map(|hash| dir.join(format!("graph-{hash}.graph")))
                        .collect()
                })
                .unwrap_or_default()
        };
        let layers = files
            .iter()
            .filter_map(|file| Layer::open(file, object_hash.len_in_bytes()))
            .collect();
        ChangedPaths { layers }
    }

    /// [`Self::open`] for `repo`, unless its configuration turns the commit-graph (`core.commitGraph`) or its
    /// changed-path filters (`commitGraph.readChangedPaths`, `commitGraph.changedPathsVersion = 0`) off, or it
    /// replaces objects (then git ignores the commit-graph too).
    pub fn of_repository(repo: &gix::Repository) -> Self {
        if turned_off(repo) || !matches!(repo.commit_graph_if_enabled(), Ok(Some(_))) {
            return ChangedPaths::default();
        }
        ChangedPaths::open(repo.objects.store_ref().path(), repo.object_hash())
    }

    /// Whether `repo` has no changed-path filters that its configuration would let be read: writing them
    /// (`git commit-graph write --reachable --changed-paths`) would speed up the next scan.
    pub fn missing(repo: &gix::Repository) -> bool {
        let commit_graph_off = repo.config_snapshot().boolean("core.commitGraph") == Some(false);
        !commit_graph_off
            && !turned_off(repo)
            && Self::open(repo.objects.store_ref().path(), repo.object_hash()).is_empty()
    }

    /// Whether any layer carries filters.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The filter of commit `id`, if a layer has one for it.
    pub fn filter(&self, id: &gix::oid) -> Option<Filter<'_>> {
        self.layers.iter().find_map(|layer| layer.filter(id.as_bytes()))
    }
}

/// Whether the configuration turns changed-path filters off (`commitGraph.changedPathsVersion = 0`, or the
/// deprecated `commitGraph.readChangedPaths = false` when the version is unset, as in git).
fn turned_off(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    match config.integer("commitGraph.changedPathsVersion") {
        Some(version) => version == 0,
        None => config.boolean("commitGraph.readChangedPaths") == Some(false),
    }
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

impl Layer {
    fn open(path: &Path, hash_len: usize) -> Option<Layer> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: git replaces commit-graph files by renaming new ones into place, never writes them in place.
        let data = unsafe { Mmap::map(&file) }.ok()?;
        let object_hash_version = match hash_len {
            20 => 1,
            32 => 2,
            _ => return None,
        };
        if data.get(..4)? != b"CGPH" || *data.get(4)? != 1 || *data.get(5)? != object_hash_version {
            return None;
        }
        let chunk_count = usize::from(*data.get(6)?);
        let chunk = |id: &[u8; 4]| -> Option<Range> {
            (0..chunk_count).find_map(|i| {
                let entry = 8 + i * 12;
                if data.get(entry..entry + 4)? != id {
                    return None;
                }
                let start =
                    usize::try_from(u64::from_be_bytes(data.get(entry + 4..entry + 12)?.try_into().ok()?)).ok()?;
                let end =
                    usize::try_from(u64::from_be_bytes(data.get(entry + 16..entry + 24)?.try_into().ok()?)).ok()?;
                (start <= end && end <= data.len()).then_some(start..end)
            })
        };
        let (fanout, ids, ends, filters) = (chunk(b"OIDF")?, chunk(b"OIDL")?, chunk(b"BIDX")?, chunk(b"BDAT")?);
        let commits = usize::try_from(be32(&data, fanout.start + 255 * 4)?).ok()?;
        if fanout.len() != 256 * 4 || ids.len() != commits * hash_len || ends.len() != commits * 4 || filters.len() < 12
        {
            return None;
        }
        let (filter_version, num_hashes) = (be32(&data, filters.start)?, be32(&data, filters.start + 4)?);
        if !(1..=2).contains(&filter_version) || num_hashes == 0 {
            return None;
        }
        Some(Layer {
            hash_len,
            fanout: fanout.start,
            ids: ids.start,
            ends: ends.start,
            filters: filters.start + 12..filters.end,
            commits,
            hash_version: filter_version,
            num_hashes,
            data,
        })
    }

    fn filter(&self, id: &[u8]) -> Option<Filter<'_>> {
        let data = &self.data[..];
        let first = usize::from(*id.first()?);
        let mut lo = if first == 0 {
            0
        } else {
            be32(data, self.fanout + (first - 1) * 4)? as usize
        };
        let mut hi = (be32(data, self.fanout + first * 4)? as usize).min(self.commits);
        let id_at = |pos: usize| &data[self.ids + pos * self.hash_len..self.ids + (pos + 1) * self.hash_len];
        let pos = loop {
            if lo >= hi {
                return None;
            }
            let mid = lo + (hi - lo) / 2;
            match id_at(mid).cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => break mid,
            }
        };
        let end = be32(data, self.ends + pos * 4)? as usize;
        let start = if pos == 0 {
            0
        } else {
            be32(data, self.ends + (pos - 1) * 4)? as usize
        };
        // An empty filter is no filter (git computes one instead); offsets past the chunk make it unusable.
        if start >= end || end > self.filters.len() {
            return None;
        }
        Some(Filter {
            bits: &data[self.filters.start + start..self.filters.start + end],
            hash_version: self.hash_version,
            num_hashes: self.num_hashes,
        })
    }
}

/// The hashes a filter is probed with for one path: those of the path and of each leading directory (git's
/// pathspec-limited log asks for all of them too, which makes a false "maybe" rarer). The same for every filter,
/// so computed once per path.
#[derive(Debug, Clone)]
pub struct PathKey {
    hashes: Vec<(u32, u32)>,
    /// Bytes above 0x7f: version 1 filters hashed them sign-extended (git's bug, fixed in version 2), so such
    /// paths are not looked up in those.
    high_bytes: bool,
}

impl PathKey {
    pub fn new(path: &[u8]) -> Self {
        let ends = path
            .iter()
            .enumerate()
            .filter(|&(_, &byte)| byte == b'/')
            .map(|(at, _)| at)
            .chain([path.len()]);
        PathKey {
            hashes: ends
                .map(|end| (murmur3(0x293a_e76f, &path[..end]), murmur3(0x7e64_6e2c, &path[..end])))
                .collect(),
            high_bytes: path.iter().any(|&byte| byte >= 0x80),
        }
    }
}

impl Filter<'_> {
    /// False when the commit's first-parent diff certainly changed nothing at the path of `key` or below it.
    pub fn may_have_changed(&self, key: &PathKey) -> bool {
        if self.hash_version == 1 && key.high_bytes {
            return true;
        }
        let bits = self.bits.len() as u64 * 8;
        key.hashes.iter().all(|&(hash0, hash1)| {
            (0..self.num_hashes).all(|i| {
                let bit = u64::from(hash0.wrapping_add(i.wrapping_mul(hash1))) % bits;
                self.bits[(bit / 8) as usize] & (1 << (bit % 8)) != 0
            })
        })
    }
}

/// MurmurHash3, 32-bit, x86 variant, as git's `murmur3_seeded_v2`.
pub fn murmur3(seed: u32, data: &[u8]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut hash = seed;
    let (blocks, tail) = data.split_at(data.len() / 4 * 4);
    for block in blocks.chunks_exact(4) {
        hash ^= mix(u32::from_le_bytes(block.try_into().expect("four bytes")));
        hash = hash.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    if !tail.is_empty() {
        let k = tail.iter().rev().fold(0u32, |k, &byte| k << 8 | u32::from(byte));
        hash ^= mix(k);
    }
    hash ^= data.len() as u32;
    hash ^= hash >> 16;
    hash = hash.wrapping_mul(0x85eb_ca6b);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(0xc2b2_ae35);
    hash ^ (hash >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from the C reference implementation, by `scripts/reference/murmur3.py`.
    const REFERENCE: &[(u32, &[u8], u32)] = &[
        (0x00000000, b"", 0x00000000),
        (0x00000000, b"a", 0x3c2569b2),
        (0x00000000, b"ab", 0x9bbfd75f),
        (0x00000000, b"abc", 0xb3dd93fa),
        (0x00000000, b"abcd", 0x43ed676a),
        (0x00000000, b"abcde", 0xe89b9af6),
        (0x00000000, b"src/lib.rs", 0x3b5629df),
        (0x00000000, b"Documentation/RelNotes/2.47.0.txt", 0xdc056327),
        (0x00000000, b"caf\xc3\xa9/\xe9t\xe9", 0x17380a62),
        (0x00000000, b"\xff\xfe\xfd", 0xd2bef2dc),
        (0x00000001, b"", 0x514e28b7),
        (0x00000001, b"a", 0x588adce8),
        (0x00000001, b"ab", 0xb8079b46),
        (0x00000001, b"abc", 0xaa75e9ff),
        (0x00000001, b"abcd", 0x9bf54592),
        (0x00000001, b"abcde", 0xffacb11b),
        (0x00000001, b"src/lib.rs", 0x4b9f8a59),
        (0x00000001, b"Documentation/RelNotes/2.47.0.txt", 0x9d18fcab),
        (0x00000001, b"caf\xc3\xa9/\xe9t\xe9", 0x5e2e36a4),
        (0x00000001, b"\xff\xfe\xfd", 0x5447aba8),
        (0x293ae76f, b"", 0x5615800c),
        (0x293ae76f, b"a", 0x8fc5291a),
        (0x293ae76f, b"ab", 0x095d6a83),
        (0x293ae76f, b"abc", 0xc8a09e4c),
        (0x293ae76f, b"abcd", 0x09a8fc44),
        (0x293ae76f, b"abcde", 0xf46f9fb0),
        (0x293ae76f, b"src/lib.rs", 0x7ad06a15),
        (0x293ae76f, b"Documentation/RelNotes/2.47.0.txt", 0x53601024),
        (0x293ae76f, b"caf\xc3\xa9/\xe9t\xe9", 0xb583db24),
        (0x293ae76f, b"\xff\xfe\xfd", 0xa7344f47),
        (0x7e646e2c, b"", 0x0580e554),
        (0x7e646e2c, b"a", 0xf720b3be),
        (0x7e646e2c, b"ab", 0x5aee921e),
        (0x7e646e2c, b"abc", 0x292c0665),
        (0x7e646e2c, b"abcd", 0x3979c5c8),
        (0x7e646e2c, b"abcde", 0x33a62dec),
        (0x7e646e2c, b"src/lib.rs", 0xf61020b5),
        (0x7e646e2c, b"Documentation/RelNotes/2.47.0.txt", 0x09d22508),
        (0x7e646e2c, b"caf\xc3\xa9/\xe9t\xe9", 0x44fd58ec),
        (0x7e646e2c, b"\xff\xfe\xfd", 0xc7e62200),
    ];

    #[test]
    fn murmur3_matches_the_reference_implementation() {
        for &(seed, key, expected) in REFERENCE {
            assert_eq!(murmur3(seed, key), expected, "seed {seed:#x}, key {key:?}");
        }
    }

    #[test]
    fn a_key_probes_the_path_and_each_leading_directory() {
        let key = PathKey::new(b"a/b/c.txt");
        let expected: Vec<(u32, u32)> = [&b"a"[..], b"a/b", b"a/b/c.txt"]
            .iter()
            .map(|part| (murmur3(0x293a_e76f, part), murmur3(0x7e64_6e2c, part)))
            .collect();
        assert_eq!(key.hashes, expected);
        assert!(!key.high_bytes);
        assert!(PathKey::new(b"caf\xc3\xa9").high_bytes);
    }

    /// A filter built as git builds one (`add_key_to_filter`) holds its paths and their directories, and,
    /// at this size, none of the other paths asked about.
    #[test]
    fn a_filter_holds_what_was_added_and_little_else() {
        let mut bits = vec![0u8; 4];
        for path in [&b"src"[..], b"src/lib.rs"] {
            let (hash0, hash1) = (murmur3(0x293a_e76f, path), murmur3(0x7e64_6e2c, path));
            for i in 0..7u32 {
                let bit = u64::from(hash0.wrapping_add(i.wrapping_mul(hash1))) % 32;
                bits[(bit / 8) as usize] |= 1 << (bit % 8);
            }
        }
        let filter = Filter {
            bits: &bits,
            hash_version: 2,
            num_hashes: 7,
        };
        assert!(filter.may_have_changed(&PathKey::new(b"src/lib.rs")));
        assert!(!filter.may_have_changed(&PathKey::new(b"README.md")));
        assert!(!filter.may_have_changed(&PathKey::new(b"docs/lib.rs")));
        let empty = Filter {
            bits: &[0],
            hash_version: 2,
            num_hashes: 7,
        };
        assert!(!empty.may_have_changed(&PathKey::new(b"src/lib.rs")));
        // Version 1 hashed bytes above 0x7f wrongly: such paths are never ruled out by it.
        let v1 = Filter {
            hash_version: 1,
            ..empty
        };
        assert!(v1.may_have_changed(&PathKey::new(b"caf\xc3\xa9")));
        assert!(!v1.may_have_changed(&PathKey::new(b"cafe")));
    }
}
