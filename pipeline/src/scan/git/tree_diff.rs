//! Tree diffs: which paths a commit changed against its first parent, whole or restricted to chosen paths.

use super::*;

use std::collections::{BTreeMap, VecDeque};

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::objs::tree::{EntryKind, EntryMode};

use crate::scan::changed_paths::{ChangedPaths, PathKey};
use crate::scan::commits::{FileChange, ObjectId};

/// One changed path of a commit, with both sides (canonical kind and id) for the line diff.
#[derive(Clone)]
pub(super) struct PathChange {
    pub(super) path: String,
    pub(super) change: FileChange,
    pub(super) old: Option<(EntryKind, ObjectId)>,
    pub(super) new: Option<(EntryKind, ObjectId)>,
}

/// One side of a changed tree entry, as the tree records it; `None` when the path is absent on that side.
pub(super) type Side = Option<(EntryMode, ObjectId)>;

/// Records the non-tree entries of a gix tree diff with their full paths (the path bookkeeping of gix's
/// `Recorder`, without keeping trees).
#[derive(Default)]
pub(super) struct Collector {
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

pub(super) fn is_file(kind: EntryKind) -> bool {
    matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable)
}

/// git's change status on canonical modes; `None` when nothing changed (only a non-canonical mode differs).
pub(super) fn classify(old: Option<(EntryKind, ObjectId)>, new: Option<(EntryKind, ObjectId)>) -> Option<FileChange> {
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

pub(super) struct TreeDiffer<'k> {
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
    pub(super) fn new(repo: gix::Repository, known: &'k KnownCommits, changed_paths: &'k ChangedPaths) -> Self {
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

    pub(super) fn changes(&mut self, id: ObjectId, shallow: bool) -> Result<Vec<PathChange>, GitScanError> {
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
    pub(super) fn changes_among(
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
pub(super) struct RootLookups(VecDeque<(ObjectId, usize, Vec<Side>)>);

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
pub(super) struct Level<'p> {
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
pub(super) fn compare_among(
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
pub(super) fn compare_level(
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
pub(super) fn lookup(
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
pub(super) fn find_entries(data: &[u8], hash_len: usize, names: &[&[u8]]) -> Result<Vec<Side>, &'static str> {
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
pub(super) fn past(name: &[u8], last: &[u8]) -> bool {
    match name.strip_prefix(last) {
        // `last` itself or a longer name: after `last/` only if the next byte sorts after `/`.
        Some(rest) => rest.first().is_some_and(|&byte| byte > b'/'),
        None => name > last,
    }
}

/// The position of the first NUL byte in `data` from `from` on, eight bytes at a time: tree entry names are
/// short, too short for a vectorised search to pay its setup.
pub(super) fn find_nul(data: &[u8], from: usize) -> Option<usize> {
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
pub(super) fn diff_trees(
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
pub(super) fn known_tree(
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
pub(super) fn commit_tree(
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

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
