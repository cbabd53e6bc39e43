//! Line evidence: which change in a fix's window last added the lines the fix removes or rewrites (the SZZ family,
//! on content).
//!
//! SZZ (Śliwerski, Zimmermann and Zeller 2005) blames the lines a fix deletes or modifies in the fix's parent and
//! takes the commits that last touched them as the fix-inducing changes. Its known failure modes, measured on
//! developer-informed oracles (Rosa et al., ICSE 2021; on the Linux kernel's `Fixes:` tags, Lyu et al.), are
//! cosmetic changes (white space, comments), meta-changes (formatting, renames, releases) that "touch" every line,
//! fixes that only add lines (nothing to blame), and distant culprits. This implementation:
//!
//! - compares lines by content with white space ignored, and drops blank, punctuation-only and comment-only lines
//!   ([`crate::scan::commits::evidence_hash`]), as `git blame -w` and pyszz's comment filter do;
//! - drops a removed line the fix adds back in the same file (a move or a reindentation, not a rewrite);
//! - looks only inside the pre-registered window (older culprits are left unattributed, not guessed), newest
//!   change first, so a line goes to the change that last added it (blame's answer within the window);
//! - passes through mass changes (they are not candidates), as RA-SZZ and MA-SZZ do for refactorings and
//!   meta-changes;
//! - lets any commit be the culprit, fixes included (a fix chain's culprit is often the previous fix);
//! - takes the change given the most lines as *the* failing change (ties: the most recent), so a failure is one
//!   pair, as P2 counts them.
//!
//! It works on line content per file, not on line positions: a removed line matches a line with the same content
//! added to the same file by a change in the window. Within a week's window that is what blame finds in practice;
//! where content repeats (the same statement added twice), the most recent adder wins, as blame's would for the
//! newest copy. Renames are not followed (the diffs carry no rename detection).

use std::collections::{BTreeMap, BTreeSet};

use super::Diffs;
use super::text::PathPatterns;
use crate::scan::commits::{CommitDiff, TRIVIAL_LINE};

/// The lines a fix removes or rewrites, per (not ignored) file: evidence hashes, trivial lines left out. Lines it
/// removes and adds back in the same file (re-indented under a new condition, moved) are kept apart as `moved`:
/// no evidence by themselves, they are the code the fix wraps, blamed when nothing else is ("adjacent" evidence).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Removed {
    rewritten: BTreeMap<String, BTreeSet<u64>>,
    moved: BTreeMap<String, BTreeSet<u64>>,
}

impl Removed {
    pub(super) fn of(diff: &CommitDiff, ignore: &PathPatterns) -> Self {
        let mut removed = Removed::default();
        for file in diff.files.iter().filter(|file| !ignore.matches(&file.path)) {
            let added: BTreeSet<u64> = file.added_line_hashes.iter().copied().collect();
            let (moved, rewritten): (BTreeSet<u64>, BTreeSet<u64>) = file
                .removed_line_hashes
                .iter()
                .copied()
                .filter(|&hash| hash != TRIVIAL_LINE)
                .partition(|hash| added.contains(hash));
            if !rewritten.is_empty() {
                removed.rewritten.insert(file.path.clone(), rewritten);
            }
            if !moved.is_empty() {
                removed.moved.insert(file.path.clone(), moved);
            }
        }
        removed
    }

    /// No line of evidence at all (the fix only adds lines).
    pub(super) fn is_empty(&self) -> bool {
        self.rewritten.is_empty() && self.moved.is_empty()
    }
}

/// The candidates that added a fix's removed lines, and how many lines each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Blame {
    /// `(candidate position, lines)`, most lines first, then the most recent (smallest position).
    pub(super) tally: Vec<(usize, u32)>,
    /// The tally is of the lines the fix moved, not of lines it rewrote: weaker evidence.
    pub(super) adjacent: bool,
}

impl Blame {
    /// The failing change: the candidate given the most lines.
    pub(super) fn top(&self) -> Option<(usize, u32)> {
        self.tally.first().copied()
    }
}

/// Gives each of the lines a fix rewrites to the most recent candidate of `window` (newest first) that added it to
/// the same file, skipping the candidates in `passed` (mass changes); when none is given any, does the same with
/// the lines it moved (`adjacent`). `added` holds the candidates' line detail for the files in question.
pub(super) fn blame(removed: &Removed, window: &[usize], added: &Diffs, passed: &BTreeSet<usize>) -> Blame {
    let rewritten = blame_lines(&removed.rewritten, window, added, passed);
    if !rewritten.tally.is_empty() || removed.moved.is_empty() {
        return rewritten;
    }
    Blame {
        adjacent: true,
        ..blame_lines(&removed.moved, window, added, passed)
    }
}

fn blame_lines(
    lines: &BTreeMap<String, BTreeSet<u64>>,
    window: &[usize],
    added: &Diffs,
    passed: &BTreeSet<usize>,
) -> Blame {
    let mut open: BTreeMap<&str, BTreeSet<u64>> = lines
        .iter()
        .map(|(path, lines)| (path.as_str(), lines.clone()))
        .collect();
    let mut counts: BTreeMap<usize, u32> = BTreeMap::new();
    for &candidate in window {
        if open.is_empty() {
            break;
        }
        if passed.contains(&candidate) {
            continue;
        }
        let Some(diff) = added.get(candidate) else { continue };
        for file in &diff.files {
            let Some(lines) = open.get_mut(file.path.as_str()) else {
                continue;
            };
            let before = lines.len();
            for hash in file.added_line_hashes.iter() {
                lines.remove(hash);
            }
            let won = (before - lines.len()) as u32;
            if won > 0 {
                *counts.entry(candidate).or_default() += won;
            }
            if lines.is_empty() {
                open.remove(file.path.as_str());
            }
        }
    }
    let mut tally: Vec<(usize, u32)> = counts.into_iter().collect();
    tally.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Blame { tally, adjacent: false }
}
