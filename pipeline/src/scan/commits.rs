//! The typed rows of a git history, as the P2 scanner ([`super::git`]) produces them and the P2 experiment
//! consumes them. Plain data: no repository handle, no I/O.

pub use gix::ObjectId;

/// One commit of the walked history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitRow {
    pub id: ObjectId,
    /// In the commit's order: the first parent first. Empty for a root commit.
    pub parents: Vec<ObjectId>,
    /// The commit's root tree (`None` only for a corrupt commit without one).
    pub tree: Option<ObjectId>,
    /// Author time, seconds since the Unix epoch (the author's own offset is not needed for windows).
    pub author_time: i64,
    /// Committer time, seconds since the Unix epoch.
    pub commit_time: i64,
    /// git's `%s`: the first paragraph of the message, its lines joined with a space (lossy UTF-8).
    pub subject: String,
    /// git's `%b`: the rest of the message after the first paragraph (lossy UTF-8), trailers included.
    pub body: String,
    /// `Token: value` trailers of the message's last paragraph, in order (git's trailer rules).
    pub trailers: Vec<Trailer>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    pub token: String,
    pub value: String,
}

/// What a commit changed against its first parent (a root commit: against the empty tree), without rename
/// detection, as `git show --name-only --no-renames --format= <sha>` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitDiff {
    pub id: ObjectId,
    /// Sorted by path (byte order), one entry per changed path.
    pub files: Vec<FileDiff>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The repository-relative path, `/`-separated, lossy UTF-8.
    pub path: String,
    pub change: FileChange,
    /// Line counts as `git diff --numstat` gives them; 0 for binary files.
    pub lines_added: u32,
    pub lines_removed: u32,
    pub binary: bool,
    /// [`evidence_hash`]es of every added / removed line (without its line terminator), in diff order, when line
    /// detail was requested; empty otherwise and for binary files. Used to compare two diffs line by line (did a
    /// remedy remove or rewrite lines that the failing change added?). [`TRIVIAL_LINE`] stands for a line that
    /// is no evidence (blank, punctuation only, a comment). Shared, not copied, between the analysis and P2's diff
    /// cache (on git.git the same diffs would otherwise be held twice).
    pub added_line_hashes: LineHashes,
    pub removed_line_hashes: LineHashes,
}

/// A diff's line hashes, shared.
pub type LineHashes = std::sync::Arc<[u64]>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileChange {
    Added,
    Modified,
    Deleted,
    /// The type changed (file ↔ symlink ↔ submodule) or only the mode did.
    TypeChanged,
}

/// One commit whose diff is wanted: all of it or only some paths, and, with [`DiffDetail::Lines`], which of its
/// files need line detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffRequest {
    pub id: ObjectId,
    /// `None`: every changed file; otherwise only these paths get line counts and hashes (the others are listed
    /// with their paths and change kinds only, as with [`DiffDetail::Paths`]).
    pub line_paths: Option<std::sync::Arc<std::collections::BTreeSet<String>>>,
    /// `None`: every changed file; otherwise only the changes to these paths are listed (the diff is then
    /// restricted, not the commit's whole diff). Answering "did this commit touch one of these files?" this way
    /// reads only the trees on the way to them, far less than a whole diff. Shared, as neighbouring commits
    /// usually ask about the same paths.
    pub only_paths: Option<std::sync::Arc<std::collections::BTreeSet<String>>>,
}

impl DiffRequest {
    /// Every file of `id`.
    pub fn whole(id: ObjectId) -> Self {
        DiffRequest {
            id,
            line_paths: None,
            only_paths: None,
        }
    }

    /// The changes of `id` to `paths` only.
    pub fn among(id: ObjectId, paths: impl Into<std::sync::Arc<std::collections::BTreeSet<String>>>) -> Self {
        DiffRequest {
            id,
            line_paths: None,
            only_paths: Some(paths.into()),
        }
    }
}

/// How much of each requested commit's diff to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffDetail {
    /// Paths and change kinds only (cheapest: tree diff, no blob reads).
    Paths,
    /// Paths plus line counts and line hashes.
    Lines,
}

/// A commit id as reports abbreviate it: its first 12 hex digits (all of it when shorter).
pub fn short_id(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

/// The [`evidence_hash`] of a line that says nothing about who wrote the code: blank, without a letter or digit
/// (`}`, `);`, `*/`), or a comment only.
pub const TRIVIAL_LINE: u64 = 0;

/// The hash a diff's line is compared by: [`line_hash`] of the line without any ASCII whitespace, so that a change
/// of indentation or spacing alone leaves it equal (as `git blame -w` does), or [`TRIVIAL_LINE`] for a line that is
/// no evidence: one without an ASCII letter or digit, or one whose first non-blank characters open a comment
/// (`//`, `/*`, `*/`, `* `, `#` followed by a space or nothing, `-- `, `<!--`).
pub fn evidence_hash(line: &[u8]) -> u64 {
    let trimmed = line.trim_ascii();
    if !trimmed.iter().any(u8::is_ascii_alphanumeric) || is_comment(trimmed) {
        return TRIVIAL_LINE;
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in trimmed.iter().filter(|b| !b.is_ascii_whitespace()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // FNV-1a of a non-empty line is never 0 in practice; keep TRIVIAL_LINE unambiguous all the same.
    if hash == TRIVIAL_LINE { 1 } else { hash }
}

/// Whether a trimmed line is a comment only, in the common syntaxes (C-family, shell/Python/TOML/YAML, SQL/Lua,
/// HTML/XML). `#include`, `#[derive]` and `#!/bin/sh` are code: `#` counts only before a space or alone.
fn is_comment(trimmed: &[u8]) -> bool {
    const OPENERS: [&[u8]; 7] = [b"//", b"/*", b"*/", b"* ", b"# ", b"-- ", b"<!--"];
    OPENERS.iter().any(|opener| trimmed.starts_with(opener)) || trimmed == b"#" || trimmed == b"*"
}

/// The stable hash of one line's bytes (FNV-1a 64, so the value does not depend on the Rust version or a random
/// seed).
pub fn line_hash(line: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in line {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
