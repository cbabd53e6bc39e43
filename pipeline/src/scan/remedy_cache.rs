//! What P2 concluded about each fix's link, kept between runs beside the commit and diff caches (issue 21, item 4):
//! a rerun links again only the fixes whose window changed. The experiment decides what an entry holds (`F`) and
//! when it is still valid (a stamp of the window it was computed from, inside `F`); this file only keeps them by
//! the fix's id.
//!
//! The file carries the envelope of [`super::cache_file`] (phase0's version and the pre-registration's sha256): any
//! other file is ignored with a warning and replaced. A segment: the number of entries (u64), then per entry the
//! fix's id and `F` as it encodes itself. A later entry of a fix replaces an earlier one. A run appends the entries it
//! computed anew; the file is rewritten with the run's entries alone when more than a quarter of it would be stale.

use std::path::PathBuf;

use super::cache_file::{self, Loaded, Tail, put_id};
use super::commit_cache::Facts;
use super::commits::ObjectId;

const MAGIC: &[u8] = b"phase0-p2-links";
/// Bumped whenever what `F` holds changes meaning.
const FORMAT: u32 = 1;

/// The remembered links of one repository, by fix.
pub struct RemedyCache<F> {
    path: Option<PathBuf>,
    stamp: String,
    entries: gix::hashtable::HashMap<ObjectId, F>,
    /// The file as read, when it was valid: what an append continues.
    tail: Option<Tail>,
    /// Entries in the file, those a later one replaced included.
    on_file: u64,
}

impl<F: Facts> RemedyCache<F> {
    /// No cache: nothing is remembered, nothing written.
    pub fn none() -> Self {
        Self {
            path: None,
            stamp: String::new(),
            entries: Default::default(),
            tail: None,
            on_file: 0,
        }
    }

    /// The cache at `path` for links computed under the pre-registration `prereg_sha256`. A missing file is an
    /// empty cache; an unreadable, foreign or damaged one is an empty cache and a warning.
    pub fn open(path: PathBuf, prereg_sha256: &str) -> (Self, Option<String>) {
        let mut cache = Self {
            stamp: cache_file::stamp(prereg_sha256),
            ..Self::none()
        };
        let warning = match cache_file::load(&path, "link cache", |read| decode(read, &cache.stamp)) {
            Loaded::Missing => None,
            Loaded::Valid((entries, on_file, tail)) => {
                cache.entries = entries;
                cache.on_file = on_file;
                cache.tail = Some(tail);
                None
            }
            Loaded::Unreadable(warning) | Loaded::Refused(warning) => Some(warning),
        };
        cache.path = Some(path);
        (cache, warning)
    }

    /// The remembered entry of the fix `id`.
    pub fn get(&self, id: &ObjectId) -> Option<&F> {
        self.entries.get(id)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps `current` (this run's entries, each fix once; `fresh`: computed by this run rather than taken from
    /// here): appends the fresh ones, or rewrites the file with `current` alone, atomically, when more than a
    /// quarter of it would be stale ([`cache_file::keep`]). Returns a warning when it cannot be written (the
    /// reports do not depend on it).
    pub fn save(&self, current: &[(ObjectId, &F, bool)]) -> Option<String> {
        let path = self.path.as_ref()?;
        let fresh: Vec<(ObjectId, &F)> = current
            .iter()
            .filter(|(_, _, fresh)| *fresh)
            .map(|&(id, facts, _)| (id, facts))
            .collect();
        let live = (current.len() - fresh.len()) as u64;
        let written = cache_file::keep(
            path,
            self.tail.as_ref(),
            (self.on_file, live, fresh.len() as u64),
            |sink| encode(sink, &fresh),
            || {
                let all: Vec<(ObjectId, &F)> = current.iter().map(|&(id, facts, _)| (id, facts)).collect();
                cache_file::write_new(path, cache_file::header(MAGIC, FORMAT, &self.stamp), |sink| {
                    encode(sink, &all)
                })
            },
        );
        written
            .err()
            .map(|error| format!("{}: cannot write the link cache ({error})", path.display()))
    }
}

fn encode<F: Facts>(sink: &mut cache_file::Sink<'_>, entries: &[(ObjectId, &F)]) -> std::io::Result<()> {
    sink.buf.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (id, facts) in entries {
        sink.flush_if_full()?;
        put_id(&mut sink.buf, id);
        facts.encode(&mut sink.buf);
    }
    Ok(())
}

type Decoded<F> = (gix::hashtable::HashMap<ObjectId, F>, u64, Tail);

fn decode<F: Facts>(read: &cache_file::FileBytes, stamp: &str) -> Result<Decoded<F>, String> {
    let segments = cache_file::open(read, MAGIC, FORMAT, stamp, "link cache")?;
    let mut entries = gix::hashtable::HashMap::default();
    let mut on_file = 0;
    for mut r in segments.bodies {
        let count = r.u64()?;
        on_file += count;
        // Each entry takes at least 21 bytes: a wrong count cannot ask for a huge allocation.
        entries.reserve((count as usize).min(r.len() / 21));
        for _ in 0..count {
            let id = r.id()?;
            let facts = F::decode(&mut r)?;
            entries.insert(id, facts);
        }
        if !r.is_empty() {
            return Err("the cache file has bytes after its entries".to_string());
        }
    }
    Ok((entries, on_file, segments.tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::commit_cache::test_facts::{Tag, id};

    #[test]
    fn remembered_links_come_back_appended_replaced_and_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2links");
        let (cache, warning) = RemedyCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((warning, cache.len()), (None, 0));
        let (one, two, three) = (Tag(1), Tag(2), Tag(3));
        assert_eq!(cache.save(&[(id(1), &one, true), (id(2), &two, true)]), None);
        let (cache, warning) = RemedyCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((warning, cache.len(), cache.get(&id(2))), (None, 2, Some(&Tag(2))));

        // One fix recomputed, one new: appended, the file's bytes before it untouched; the later entry wins.
        let saved = std::fs::read(&path).unwrap();
        let changed = Tag(20);
        assert_eq!(
            cache.save(&[(id(1), &one, false), (id(2), &changed, true), (id(3), &three, true)]),
            None
        );
        let appended = std::fs::read(&path).unwrap();
        assert!(appended.len() > saved.len() && appended.starts_with(&saved));
        let (cache, _) = RemedyCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((cache.len(), cache.on_file), (3, 4));
        assert_eq!(cache.get(&id(2)), Some(&Tag(20)));

        // A run with one fix of the four entries on file: more than a quarter stale, rewritten with it alone.
        assert_eq!(cache.save(&[(id(3), &three, false)]), None);
        let (cache, _) = RemedyCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((cache.len(), cache.on_file, cache.get(&id(1))), (1, 1, None));

        // Another pre-registration: ignored with a warning.
        let (cache, warning) = RemedyCache::<Tag>::open(path.clone(), "def");
        assert_eq!(cache.len(), 0);
        assert!(warning.unwrap().contains("under the pre-registration abc"));
        // Damaged: ignored with a warning.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 20;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (cache, warning) = RemedyCache::<Tag>::open(path, "abc");
        assert_eq!(cache.len(), 0);
        assert!(warning.unwrap().contains("checksum does not match (damaged)"));
    }
}
