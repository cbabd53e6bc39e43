//! Line diffs of changed blobs: counts as `git diff --numstat` gives them, and the hashes of added and removed
//! lines, with line tokens reused between versions of a file.

use super::*;

use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use gix::diff::blob::Token;
use gix::objs::tree::EntryKind;

use crate::scan::commits::ObjectId;

/// git's `FIRST_FEW_BYTES`: a NUL byte in this prefix makes a blob binary.
pub(super) const BINARY_PROBE_BYTES: usize = 8000;
/// git's default `core.bigFileThreshold`: larger blobs are binary (and never line-diffed).
pub(super) const BIG_FILE_THRESHOLD: usize = 512 * 1024 * 1024;
#[derive(Clone)]
pub(super) struct LineDetail {
    pub(super) added: u32,
    pub(super) removed: u32,
    pub(super) binary: bool,
    pub(super) added_hashes: Vec<u64>,
    pub(super) removed_hashes: Vec<u64>,
}

/// A line's evidence hash ([`crate::scan::commits::evidence_hash`]), without its `\n`.
pub(super) fn hash_line(line: &[u8]) -> u64 {
    crate::scan::commits::evidence_hash(line.strip_suffix(b"\n").unwrap_or(line))
}

pub(super) fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split_inclusive(|&b| b == b'\n')
}

pub(super) fn is_binary(data: &[u8]) -> bool {
    data.len() > BIG_FILE_THRESHOLD || memchr::memchr(0, &data[..data.len().min(BINARY_PROBE_BYTES)]).is_some()
}

pub(super) fn tokens(side: &[Token], range: Range<u32>) -> &[Token] {
    side.get(range.start as usize..range.end as usize).unwrap_or_default()
}

pub(super) fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A blob differ's memory of the blobs it read last: a change's new side is the old side of the next change to the
/// same file, which [`diffs_remembering`] hands to the same worker next.
pub(super) const RECENT_BLOBS: usize = 4;
/// A blob larger than this is not kept for the next diff (its buffer is freed).
pub(super) const RECENT_BLOB_BYTES: usize = 4 << 20;

/// A blob read by a [`BlobDiffer`], with the tokens of its lines when [`BlobDiffer::lines`] interned them in its
/// current generation.
pub(super) struct Recent {
    id: ObjectId,
    data: Vec<u8>,
    tokens: Vec<Token>,
    /// The [`Lines::generation`] that `tokens` belong to; 0: none.
    generation: u64,
}

pub(super) struct BlobDiffer {
    repo: gix::Repository,
    /// The last blobs read, least recently used first.
    recent: VecDeque<Recent>,
    /// The distinct lines of the blobs diffed since the last reset, so that a blob's tokens serve every pair it is
    /// part of, and the next version of its file only interns the lines that changed.
    lines: Lines,
    diff: gix::diff::blob::Diff,
}

impl BlobDiffer {
    pub(super) fn new(repo: gix::Repository) -> Self {
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

    pub(super) fn lines(&mut self, commit: ObjectId, change: &PathChange) -> Result<LineDetail, GitScanError> {
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
pub(super) struct Lines {
    /// A line's hash → the newest token with that hash (older ones in `same_hash`).
    by_hash: HashMap<u64, u32, std::hash::BuildHasherDefault<crate::scan::IdentityHasher>>,
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
pub(super) fn count_lines(data: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', data).count() + usize::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// Fills in the tokens of the sides of a pair that are not `known` (in `lines`' current generation), each side a
/// blob's content, its tokens and whether they are known. An unknown side next to a known one takes the tokens of
/// the common head and tail ([`common_line_ends`]) from it and interns only the lines between; when neither is
/// known, the old side is interned whole first.
pub(super) fn tokenize_pair(
    lines: &mut Lines,
    old: (&[u8], &mut Vec<Token>, bool),
    new: (&[u8], &mut Vec<Token>, bool),
) {
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
pub(super) fn common_line_ends(old: &[u8], new: &[u8]) -> (usize, usize) {
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
pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// The length of the common suffix of `a` and `b`, as [`common_prefix`] does it from the end.
pub(super) fn common_suffix(a: &[u8], b: &[u8]) -> usize {
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
    use proptest::prelude::*;

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

    }
}
