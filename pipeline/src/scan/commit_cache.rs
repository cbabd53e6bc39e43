//! What P2 read of each commit, kept between runs beside the diff cache (issue 21, item 4): a rerun on a history
//! that grew reads and parses only the new commits. The walk takes a remembered commit's parents and row from here
//! ([`RememberedCommits`]) and the experiment its message facts (what its patterns found in the message, `F`).
//!
//! A commit's id names its parents, times and message, and the facts are a function of the message and the
//! pre-registration, so a remembered commit is exactly what reading and parsing it again would give. The file
//! carries the envelope of [`super::cache_file`] (phase0's version and the pre-registration's sha256): any other
//! file is ignored with a warning and replaced. A run appends the commits it read to it; it is rewritten with the
//! run's commits alone when more than a quarter of what it holds was not part of the run (a rebased branch, another
//! `--rev`).
//!
//! A segment: the number of entries (u64), then per entry the id, the parents (u32 count + ids), the tree (u8 0/1 +
//! id), author and committer time (i64 each), whether the message is not UTF-8 (u8), the subject (u32 length +
//! UTF-8), the body and trailers (u32 length + UTF-8; u32 count + token and value), then the facts as `F` encodes
//! them. The experiment decides which commits keep their body and trailers (P2: reverts only, whose reason it reads
//! later); the others are stored empty. A later entry of a commit replaces an earlier one.

use std::path::PathBuf;

use super::cache_file::{self, Loaded, Reader, Tail, put_id, put_text};
use super::commits::{CommitRow, ObjectId, Trailer};
use super::git::RememberedCommits;

const MAGIC: &[u8] = b"phase0-p2-commits";
/// Bumped whenever what a row or `F` holds changes meaning (message decoding, the facts' parsing).
const FORMAT: u32 = 3;

/// An experiment's facts about one commit, as the cache stores them.
pub trait Facts: Sized + Send + Sync {
    fn encode(&self, out: &mut Vec<u8>);
    fn decode(r: &mut Reader<'_>) -> Result<Self, String>;
}

struct Entry<F> {
    row: CommitRow,
    non_utf8: bool,
    facts: F,
}

/// The remembered commits of one repository.
pub struct CommitCache<F> {
    path: Option<PathBuf>,
    stamp: String,
    /// The remembered commits in file order; a later entry of a commit took its earlier one's place.
    entries: Vec<Entry<F>>,
    /// Id → place in `entries`.
    index: gix::hashtable::HashMap<ObjectId, u32>,
    /// The file as read, when it was valid: what an append continues.
    tail: Option<Tail>,
    /// Entries in the file, those a later one replaced included.
    on_file: u64,
}

impl<F: Facts> CommitCache<F> {
    /// No cache: nothing is remembered, nothing written.
    pub fn none() -> Self {
        Self {
            path: None,
            stamp: String::new(),
            entries: Vec::new(),
            index: Default::default(),
            tail: None,
            on_file: 0,
        }
    }

    /// The cache at `path` for commits read under the pre-registration `prereg_sha256`. A missing file is an empty
    /// cache; an unreadable, foreign or damaged one is an empty cache and a warning.
    pub fn open(path: PathBuf, prereg_sha256: &str) -> (Self, Option<String>) {
        let mut cache = Self {
            stamp: cache_file::stamp(prereg_sha256),
            ..Self::none()
        };
        let warning = match cache_file::load(&path, "commit cache", |read| decode(read, &cache.stamp)) {
            Loaded::Missing => None,
            Loaded::Valid((entries, index, on_file, tail)) => {
                cache.entries = entries;
                cache.index = index;
                cache.on_file = on_file;
                cache.tail = Some(tail);
                None
            }
            Loaded::Unreadable(warning) | Loaded::Refused(warning) => Some(warning),
        };
        cache.path = Some(path);
        (cache, warning)
    }

    /// The remembered facts of `id`.
    pub fn facts(&self, id: &ObjectId) -> Option<&F> {
        self.index.get(id).map(|&slot| &self.entries[slot as usize].facts)
    }

    /// The remembered facts of the commit at `slot` (as [`RememberedCommits::find`] gave it).
    pub fn facts_at(&self, slot: u32) -> Option<&F> {
        self.entries.get(slot as usize).map(|entry| &entry.facts)
    }

    /// A remembered commit's row and whether its message is not valid UTF-8, copied (tests).
    #[cfg(test)]
    fn row(&self, id: &ObjectId) -> Option<(CommitRow, bool)> {
        let entry = &self.entries[*self.index.get(id)? as usize];
        Some((entry.row.clone(), entry.non_utf8))
    }

    /// How many commits are remembered.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Keeps `rows` (this run's commits, their bodies and trailers as the experiment left them) with their facts:
    /// appends those the file does not hold, or rewrites it with `rows` alone, atomically, when more than a quarter
    /// of it would be stale, commits not in `rows` ([`cache_file::keep`]). Returns a warning when it cannot be
    /// written (the reports do not depend on it). A row without facts is not written.
    pub fn save<'f>(
        &self,
        rows: &[CommitRow],
        non_utf8: &[ObjectId],
        facts: impl Fn(&ObjectId) -> Option<&'f F>,
    ) -> Option<String>
    where
        F: 'f,
    {
        let path = self.path.as_ref()?;
        let non_utf8: gix::hashtable::HashSet<ObjectId> = non_utf8.iter().copied().collect();
        // One lookup per row: the rows the file holds, and the others with their facts.
        let mut known = 0u64;
        let mut new: Vec<(&CommitRow, &F)> = Vec::new();
        for row in rows {
            if self.index.contains_key(&row.id) {
                known += 1;
            } else if let Some(facts) = facts(&row.id) {
                new.push((row, facts));
            }
        }
        let written = cache_file::keep(
            path,
            self.tail.as_ref(),
            (self.on_file, known, new.len() as u64),
            |sink| encode(sink, &new, &non_utf8),
            || self.rewrite(path, rows, &non_utf8, &facts),
        );
        written
            .err()
            .map(|error| format!("{}: cannot write the commit cache ({error})", path.display()))
    }

    fn rewrite<'f>(
        &self,
        path: &std::path::Path,
        rows: &[CommitRow],
        non_utf8: &gix::hashtable::HashSet<ObjectId>,
        facts: &impl Fn(&ObjectId) -> Option<&'f F>,
    ) -> std::io::Result<()>
    where
        F: 'f,
    {
        let kept: Vec<(&CommitRow, &F)> = rows.iter().filter_map(|row| Some((row, facts(&row.id)?))).collect();
        cache_file::write_new(path, cache_file::header(MAGIC, FORMAT, &self.stamp), |sink| {
            encode(sink, &kept, non_utf8)
        })
    }
}

/// One segment: `rows` with their facts.
fn encode<F: Facts>(
    sink: &mut cache_file::Sink<'_>,
    rows: &[(&CommitRow, &F)],
    non_utf8: &gix::hashtable::HashSet<ObjectId>,
) -> std::io::Result<()> {
    sink.buf.extend_from_slice(&(rows.len() as u64).to_le_bytes());
    for &(row, facts) in rows {
        sink.flush_if_full()?;
        let out = &mut sink.buf;
        put_id(out, &row.id);
        out.extend_from_slice(&(row.parents.len() as u32).to_le_bytes());
        for parent in &row.parents {
            put_id(out, parent);
        }
        match &row.tree {
            None => out.push(0),
            Some(tree) => {
                out.push(1);
                put_id(out, tree);
            }
        }
        out.extend_from_slice(&row.author_time.to_le_bytes());
        out.extend_from_slice(&row.commit_time.to_le_bytes());
        out.push(u8::from(non_utf8.contains(&row.id)));
        put_text(out, &row.subject);
        put_text(out, &row.body);
        out.extend_from_slice(&(row.trailers.len() as u32).to_le_bytes());
        for trailer in &row.trailers {
            put_text(out, &trailer.token);
            put_text(out, &trailer.value);
        }
        facts.encode(out);
    }
    Ok(())
}

impl<F: Facts> RememberedCommits for CommitCache<F> {
    fn find(&self, id: &ObjectId) -> Option<(u32, i64, &[ObjectId])> {
        let slot = *self.index.get(id)?;
        let row = &self.entries[slot as usize].row;
        Some((slot, row.commit_time, &row.parents))
    }

    fn take_row(&mut self, slot: u32) -> (CommitRow, bool) {
        let entry = &mut self.entries[slot as usize];
        let row = CommitRow {
            id: entry.row.id,
            parents: std::mem::take(&mut entry.row.parents),
            tree: entry.row.tree,
            author_time: entry.row.author_time,
            commit_time: entry.row.commit_time,
            subject: std::mem::take(&mut entry.row.subject),
            body: std::mem::take(&mut entry.row.body),
            trailers: std::mem::take(&mut entry.row.trailers),
        };
        (row, entry.non_utf8)
    }
}

type Decoded<F> = (Vec<Entry<F>>, gix::hashtable::HashMap<ObjectId, u32>, u64, Tail);

fn decode<F: Facts>(read: &cache_file::FileBytes, stamp: &str) -> Result<Decoded<F>, String> {
    let segments = cache_file::open(read, MAGIC, FORMAT, stamp, "commit cache")?;
    let mut entries: Vec<Entry<F>> = Vec::new();
    let mut index = gix::hashtable::HashMap::default();
    let mut on_file = 0;
    for mut r in segments.bodies {
        let count = r.u64()?;
        on_file += count;
        // Each entry takes at least 40 bytes: a wrong count cannot ask for a huge allocation.
        let expected = (count as usize).min(r.len() / 40);
        entries.reserve(expected);
        index.reserve(expected);
        for _ in 0..count {
            let (id, entry) = decode_entry(&mut r)?;
            let slot = *index.entry(id).or_insert(entries.len() as u32) as usize;
            if slot == entries.len() {
                entries.push(entry);
            } else {
                entries[slot] = entry;
            }
        }
        if !r.is_empty() {
            return Err("the cache file has bytes after its entries".to_string());
        }
    }
    Ok((entries, index, on_file, segments.tail))
}

fn decode_entry<F: Facts>(r: &mut Reader<'_>) -> Result<(ObjectId, Entry<F>), String> {
    let id = r.id()?;
    let parents = (0..r.count(1)?).map(|_| r.id()).collect::<Result<Vec<_>, _>>()?;
    let tree = match r.u8()? {
        0 => None,
        _ => Some(r.id()?),
    };
    let author_time = r.i64()?;
    let commit_time = r.i64()?;
    let non_utf8 = r.u8()? != 0;
    let subject = r.text()?.to_string();
    let body = r.text()?.to_string();
    let trailers = (0..r.count(8)?)
        .map(|_| {
            Ok(Trailer {
                token: r.text()?.to_string(),
                value: r.text()?.to_string(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let facts = F::decode(r)?;
    let row = CommitRow {
        id,
        parents,
        tree,
        author_time,
        commit_time,
        subject,
        body,
        trailers,
    };
    Ok((id, Entry { row, non_utf8, facts }))
}

/// What the caches' tests keep: a `Facts` of one number, and ids made of one byte.
#[cfg(test)]
pub(crate) mod test_facts {
    use super::{Facts, ObjectId, Reader};

    #[derive(Debug, Clone, PartialEq)]
    pub struct Tag(pub u32);

    impl Facts for Tag {
        fn encode(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.0.to_le_bytes());
        }

        fn decode(r: &mut Reader<'_>) -> Result<Self, String> {
            Ok(Tag(r.u32()?))
        }
    }

    pub fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }
}

#[cfg(test)]
mod tests {
    use super::test_facts::{Tag, id};
    use super::*;
    use std::collections::HashMap;

    fn row(n: u8, parents: &[u8]) -> CommitRow {
        CommitRow {
            id: id(n),
            parents: parents.iter().map(|&p| id(p)).collect(),
            tree: n.is_multiple_of(2).then(|| id(100 + n)),
            author_time: 1_700_000_000 + i64::from(n),
            commit_time: -5 + i64::from(n),
            subject: format!("subject {n} é"),
            body: if n == 2 { "reason\n".into() } else { String::new() },
            trailers: if n == 2 {
                vec![Trailer {
                    token: "Fixes".into(),
                    value: "abc".into(),
                }]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn remembered_commits_come_back_as_they_were_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2commits");
        let (cache, warning) = CommitCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((warning, cache.len()), (None, 0));
        let rows = vec![row(3, &[2]), row(2, &[1, 7]), row(1, &[])];
        let facts: HashMap<ObjectId, Tag> = [(id(3), Tag(30)), (id(2), Tag(20)), (id(1), Tag(10))].into();
        assert_eq!(cache.save(&rows, &[id(2)], |id| facts.get(id)), None);

        let (cache, warning) = CommitCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((warning, cache.len()), (None, 3));
        for row in &rows {
            assert_eq!(cache.row(&row.id), Some((row.clone(), row.id == id(2))));
            assert_eq!(
                cache.find(&row.id).map(|(_, _, parents)| parents),
                Some(row.parents.as_slice())
            );
        }
        assert_eq!(cache.facts(&id(2)), Some(&Tag(20)));
        assert_eq!(cache.find(&id(9)), None);
        // The same commits again: the file is not rewritten.
        let before = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(cache.save(&rows, &[id(2)], |id| facts.get(id)), None);
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), before);
        // One more: appended, the file's bytes before it untouched.
        let saved = std::fs::read(&path).unwrap();
        let grown: Vec<CommitRow> = std::iter::once(row(4, &[3])).chain(rows.iter().cloned()).collect();
        let more: HashMap<ObjectId, Tag> = [(id(4), Tag(40))].into();
        assert_eq!(
            cache.save(&grown, &[], |id| more.get(id).or_else(|| facts.get(id))),
            None
        );
        let appended = std::fs::read(&path).unwrap();
        assert!(appended.len() > saved.len() && appended.starts_with(&saved));
        let (reopened, warning) = CommitCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((warning, reopened.len(), reopened.on_file), (None, 4, 4));
        assert_eq!(reopened.row(&id(4)), Some((grown[0].clone(), false)));
        assert_eq!(reopened.facts(&id(4)), Some(&Tag(40)));
        // The file changed since `cache` read it: not appended to (its chain would not continue), rewritten whole.
        let again: Vec<CommitRow> = std::iter::once(row(5, &[3])).chain(rows.iter().cloned()).collect();
        let five: HashMap<ObjectId, Tag> = [(id(5), Tag(50))].into();
        assert_eq!(
            cache.save(&again, &[], |id| five.get(id).or_else(|| facts.get(id))),
            None
        );
        let (reopened, warning) = CommitCache::<Tag>::open(path.clone(), "abc");
        assert_eq!((warning, reopened.len(), reopened.on_file), (None, 4, 4));
        assert_eq!(reopened.facts(&id(4)), None);
        assert_eq!(reopened.facts(&id(5)), Some(&Tag(50)));
        // Fewer: only the commits of the run are kept; a row without facts is not written.
        assert_eq!(
            cache.save(&rows[..2], &[], |id| facts.get(id).filter(|t| t.0 != 30)),
            None
        );
        let (cache, _) = CommitCache::<Tag>::open(path, "abc");
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.row(&id(2)).map(|(_, non_utf8)| non_utf8), Some(false));
    }

    /// Runs that read the same file and save at once (a CI matrix sharing a cache directory): each appends only to
    /// the file it read, under a lock, or rewrites it whole; the file is a valid cache afterwards, never a mix.
    #[test]
    fn runs_saving_at_once_leave_a_valid_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2commits");
        let base: Vec<CommitRow> = (1..=20).map(|n| row(n, &[])).collect();
        let facts: HashMap<ObjectId, Tag> = (1..=40).map(|n| (id(n), Tag(u32::from(n)))).collect();
        CommitCache::<Tag>::open(path.clone(), "abc")
            .0
            .save(&base, &[], |id| facts.get(id));
        let caches: Vec<CommitCache<Tag>> = (0..8).map(|_| CommitCache::open(path.clone(), "abc").0).collect();
        std::thread::scope(|scope| {
            for (n, cache) in (21..).zip(&caches) {
                let rows: Vec<CommitRow> = std::iter::once(row(n, &[20])).chain(base.iter().cloned()).collect();
                let facts = &facts;
                scope.spawn(move || assert_eq!(cache.save(&rows, &[], |id| facts.get(id)), None));
            }
        });
        let (cache, warning) = CommitCache::<Tag>::open(path, "abc");
        assert_eq!(warning, None);
        // The twenty it started from, and the new commit of each run that appended or rewrote last.
        assert!((1..=20).all(|n| cache.facts(&id(n)) == Some(&Tag(u32::from(n)))));
        let new = (21..=28).filter(|&n| cache.facts(&id(n)).is_some()).count();
        assert!((1..=8).contains(&new), "{new}");
        assert_eq!(cache.len(), 20 + new);
    }

    #[test]
    fn a_foreign_or_damaged_commit_cache_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2commits");
        let facts: HashMap<ObjectId, Tag> = [(id(1), Tag(1))].into();
        CommitCache::<Tag>::open(path.clone(), "abc")
            .0
            .save(&[row(1, &[])], &[], |id| facts.get(id));
        let (cache, warning) = CommitCache::<Tag>::open(path.clone(), "def");
        assert_eq!(cache.len(), 0);
        assert!(
            warning.as_deref().unwrap().ends_with(&format!(
                "written by phase0 {} (format {FORMAT}) under the pre-registration abc, not this run's; the cache \
                 is ignored and rewritten",
                env!("CARGO_PKG_VERSION")
            )),
            "{warning:?}"
        );
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (cache, warning) = CommitCache::<Tag>::open(path.clone(), "abc");
        assert_eq!(cache.len(), 0);
        assert!(warning.unwrap().contains("checksum does not match (damaged)"));
        std::fs::write(&path, b"phase0-p2-diffs....").unwrap();
        let (_, warning) = CommitCache::<Tag>::open(path, "abc");
        assert!(warning.unwrap().contains("not a phase0 commit cache"));
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.p2commits");
        let facts: HashMap<ObjectId, Tag> = [(id(2), Tag(2)), (id(1), Tag(1))].into();
        CommitCache::<Tag>::open(path.clone(), "abc")
            .0
            .save(&[row(2, &[1]), row(1, &[])], &[id(1)], |id| facts.get(id));
        let bytes = std::fs::read(&path).unwrap();
        // Every truncation, and every single-byte change with the checksum recomputed, fails cleanly or decodes.
        let stamp = cache_file::stamp("abc");
        let header = cache_file::header(MAGIC, FORMAT, &stamp);
        let body = &bytes[header.len() + 8..bytes.len() - 16];
        let decoded =
            |body: &[u8]| decode::<Tag>(&cache_file::FileBytes::of(cache_file::sealed(&header, body)), &stamp);
        assert_eq!(
            decoded(body).map(|(entries, _, on_file, _)| (entries.len(), on_file)),
            Ok((2, 2))
        );
        for cut in 0..body.len() {
            let _ = decoded(&body[..cut]);
        }
        for at in 0..body.len() {
            for value in [0u8, 1, 0x7f, 0xff] {
                let mut changed = body.to_vec();
                changed[at] = value;
                let _ = decoded(&changed);
            }
        }
    }
}
