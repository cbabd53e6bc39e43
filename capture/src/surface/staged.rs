//! Staged changes (`HEAD` tree vs index) without reading every tree of `HEAD`.
//!
//! gix's tree-index status builds a whole index from the `HEAD` tree first, which on a checkout of a few thousand
//! files costs more than `git status` altogether. `git status` avoids that with the index's cache-tree extension
//! (`TREE`): a directory whose cached tree id is valid and equal to `HEAD`'s tree at that path holds no staged
//! change. This diff does the same: it descends only into directories the cache-tree cannot vouch for, and
//! compares their entries (path, object id, kind) with the index.
//!
//! `tests/staged.rs` checks it against gix's full tree-index status on generated repositories.

use std::sync::atomic::{AtomicBool, Ordering};

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::objs::tree::EntryKind;
use gix_index_types::{Entry, Stage, State, Tree as CacheTree};

/// gix re-exports the index crate; these are the parts the diff uses.
mod gix_index_types {
    pub use gix::index::entry::Stage;
    pub use gix::index::extension::Tree;
    pub use gix::index::{Entry, State};
}

/// Calls `add` with every path whose staged content differs from `head_tree` (additions, deletions, changes of
/// content or kind, and unmerged paths). Stops early, without error, when `interrupt` is set.
pub fn staged_changes(
    repo: &gix::Repository,
    head_tree: gix::ObjectId,
    index: &State,
    interrupt: &AtomicBool,
    add: &mut dyn FnMut(&BStr),
) -> Result<(), gix::Error> {
    let mut diff = Diff {
        repo,
        index,
        interrupt,
        add,
    };
    let mut prefix = BString::default();
    diff.dir(Some(head_tree), index.tree(), &mut prefix, index.entries())
}

struct Diff<'a> {
    repo: &'a gix::Repository,
    index: &'a State,
    interrupt: &'a AtomicBool,
    add: &'a mut dyn FnMut(&BStr),
}

/// What `HEAD` holds at one name of a directory.
struct HeadEntry {
    name: BString,
    kind: EntryKind,
    id: gix::ObjectId,
}

impl Diff<'_> {
    /// Compares the directory `prefix` (empty for the root, else ending in `/`) of `HEAD` (`head`, `None` when it
    /// does not exist there) with `entries`, the index entries below `prefix`.
    fn dir(
        &mut self,
        head: Option<gix::ObjectId>,
        cache: Option<&CacheTree>,
        prefix: &mut BString,
        entries: &[Entry],
    ) -> Result<(), gix::Error> {
        if self.interrupt.load(Ordering::Relaxed) {
            return Ok(());
        }
        if let (Some(head), Some(cache)) = (head, cache)
            && cache.num_entries.is_some()
            && cache.id == head
        {
            return Ok(()); // the cache-tree vouches for the whole directory
        }
        let Some(head) = head else {
            // Not in HEAD at all: everything staged below it is an addition.
            for entry in entries {
                (self.add)(entry.path(self.index));
            }
            return Ok(());
        };

        let head_entries = self.read_tree(head)?;
        let mut files = head_entries.iter().filter(|e| e.kind != EntryKind::Tree).peekable();
        let mut dirs = head_entries.iter().filter(|e| e.kind == EntryKind::Tree).peekable();

        // Index entries directly in this directory, and the groups of entries of each subdirectory.
        let mut direct: Vec<&Entry> = Vec::new();
        let mut groups: Vec<(BString, &[Entry])> = Vec::new();
        let mut at = 0;
        while at < entries.len() {
            let rest = &entries[at].path(self.index)[prefix.len()..];
            match rest.find_byte(b'/') {
                None => {
                    direct.push(&entries[at]);
                    at += 1;
                }
                Some(slash) => {
                    let name = BString::from(&rest[..slash]);
                    let end = at
                        + entries[at..]
                            .partition_point(|e| e.path(self.index)[prefix.len()..].starts_with(&rest[..=slash]));
                    groups.push((name, &entries[at..end]));
                    at = end;
                }
            }
        }

        // Files: a merge of HEAD's file entries and the direct index entries, both sorted by name.
        direct.sort_by(|a, b| a.path(self.index).cmp(b.path(self.index)));
        let mut direct = direct.into_iter().peekable();
        loop {
            let index_name = direct.peek().map(|e| &e.path(self.index)[prefix.len()..]);
            let head_name = files.peek().map(|e| e.name.as_bstr());
            match (head_name, index_name) {
                (None, None) => break,
                (Some(_), None) => self.emit_head(prefix.as_bstr(), files.next().expect("peeked")),
                (None, Some(_)) => self.emit_index(direct.next().expect("peeked")),
                (Some(h), Some(i)) if h < i => self.emit_head(prefix.as_bstr(), files.next().expect("peeked")),
                (Some(h), Some(i)) if h > i => self.emit_index(direct.next().expect("peeked")),
                (Some(_), Some(_)) => {
                    let head_file = files.next().expect("peeked");
                    let entry = direct.next().expect("peeked");
                    let same = entry.stage() == Stage::Unconflicted
                        && entry.id == head_file.id
                        && entry.mode.to_tree_entry_mode().map(|mode| mode.kind()) == Some(head_file.kind);
                    // Further stages of an unmerged path follow it; report the path once.
                    while direct
                        .peek()
                        .is_some_and(|next| next.path(self.index) == entry.path(self.index))
                    {
                        direct.next();
                    }
                    if !same {
                        self.emit_index(entry);
                    }
                }
            }
        }

        // Subdirectories: a merge of HEAD's tree entries and the index groups, both sorted by name.
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        let mut groups = groups.into_iter().peekable();
        loop {
            let next = match (dirs.peek(), groups.peek()) {
                (None, None) => break,
                (Some(h), Some((i, _))) if h.name == *i => {
                    let (_, slice) = groups.next().expect("peeked");
                    let head_dir = dirs.next().expect("peeked");
                    (head_dir.name.clone(), Some(head_dir.id), slice)
                }
                (Some(h), Some((i, _))) if h.name < *i => {
                    let head_dir = dirs.next().expect("peeked");
                    (head_dir.name.clone(), Some(head_dir.id), &[][..])
                }
                (Some(_), None) => {
                    let head_dir = dirs.next().expect("peeked");
                    (head_dir.name.clone(), Some(head_dir.id), &[][..])
                }
                (_, Some(_)) => {
                    let (name, slice) = groups.next().expect("peeked");
                    (name, None, slice)
                }
            };
            let (name, head_id, slice) = next;
            let child_cache =
                cache.and_then(|cache| cache.children.iter().find(|c| c.name.as_slice() == name.as_slice()));
            let len = prefix.len();
            prefix.push_str(&name);
            prefix.push_byte(b'/');
            let result = self.dir(head_id, child_cache, prefix, slice);
            prefix.truncate(len);
            result?;
        }
        Ok(())
    }

    fn read_tree(&self, id: gix::ObjectId) -> Result<Vec<HeadEntry>, gix::Error> {
        let tree = self.repo.find_tree(id)?;
        let decoded = tree.decode()?;
        let mut entries: Vec<HeadEntry> = decoded
            .entries
            .iter()
            .map(|e| HeadEntry {
                name: e.filename.to_owned(),
                kind: e.mode.kind(),
                id: e.oid.to_owned(),
            })
            .collect();
        // Trees sort directories as if they ended in `/`; the merges above want plain byte order by name.
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// A HEAD entry the index does not have: a deleted file, or every file of a deleted directory.
    fn emit_head(&mut self, prefix: &BStr, entry: &HeadEntry) {
        let mut path = BString::from(prefix);
        path.push_str(&entry.name);
        (self.add)(path.as_bstr());
    }

    fn emit_index(&mut self, entry: &Entry) {
        (self.add)(entry.path(self.index));
    }
}
