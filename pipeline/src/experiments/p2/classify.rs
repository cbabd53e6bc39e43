//! Gate classification of one failure (the rules and their order are documented on the parent module).

use std::collections::{BTreeMap, BTreeSet};

use super::{
    ClassRule, Diffs, Evidence, Failure, FailureKind, History, P2Spec, Pending, SUBJECT_MAX_CHARS, evaluate_risk_floor,
    short, text,
};
use crate::scan::commits::{CommitDiff, FileChange, FileDiff, TRIVIAL_LINE};

/// The failure row of `pending`, classified with the diffs in `got` (by position in `history`).
pub(super) fn failure(pending: &Pending, history: &History<'_>, got: &Diffs, spec: &P2Spec) -> Failure {
    let failing_diff = pending.failing.and_then(|pos| got.get(pos));
    let rule = classify(pending, history, got.get(pending.remedy), failing_diff, spec);
    failure_with_rule(pending, history, got, rule, spec)
}

/// The failure row of `pending` classified by `rule` (a fix's link taken from the memo: its rule with it). Only the
/// failing change's paths are read of `got`.
pub(super) fn failure_with_rule(
    pending: &Pending,
    history: &History<'_>,
    got: &Diffs,
    rule: ClassRule,
    spec: &P2Spec,
) -> Failure {
    let row = history.rows[pending.remedy];
    let failing_diff = pending.failing.and_then(|pos| got.get(pos));
    let floor = failing_diff.map(|diff| {
        let paths: Vec<&str> = diff.files.iter().map(|file| file.path.as_str()).collect();
        evaluate_risk_floor(&paths, None, None, spec.classify.risk_threshold)
    });
    let remedy = history.rows[pending.remedy].id.to_string();
    let failing = pending.failing.map(|pos| history.rows[pos].id.to_string());
    Failure {
        remedy_short: short(&remedy),
        remedy,
        failing_short: failing.as_deref().map(short),
        failing,
        failing_ref: pending.failing_ref.clone(),
        kind: pending.kind,
        link_rule: pending.link,
        evidence: pending.evidence,
        evidence_lines: pending.evidence_lines,
        bucket: rule.bucket(),
        rule,
        time_to_remedy_seconds: pending
            .failing
            .map(|pos| row.commit_time.saturating_sub(history.rows[pos].commit_time)),
        failing_surface: floor.as_ref().map(|verdict| verdict.surface),
        floor_flagged: floor.map(|verdict| verdict.needs_review),
        subject: report_subject(&row.subject),
    }
}

fn classify(
    pending: &Pending,
    history: &History<'_>,
    remedy: Option<&CommitDiff>,
    failing: Option<&CommitDiff>,
    spec: &P2Spec,
) -> ClassRule {
    let matchers = &history.matchers;
    // A fix without a failing change, or linked on file evidence only, is never bucketed: it can never be
    // self-reflection, so bucketing it by message or paths would pull the share down.
    if pending.kind == FailureKind::FixAfterChange {
        match pending.evidence {
            Evidence::None => return ClassRule::AmbiguousUnattributedFix,
            Evidence::Files => return ClassRule::AmbiguousWeakLink,
            _ => {}
        }
    }
    let files: &[FileDiff] = remedy.map_or(&[], |diff| diff.files.as_slice());
    let revert = pending.kind == FailureKind::Revert;
    let message = remedy_message(pending, history, spec);
    if let Some(ci) = ci_rule(files, &message, history, spec) {
        return ci;
    }
    // A revert undoes the whole diff: its lines say nothing about where the defect was.
    let lines = if revert {
        None
    } else {
        failing.map(|failing| compare_lines(files, failing))
    };
    if lines == Some(Placement::Within) {
        return ClassRule::ReviewLines;
    }
    if matchers.review_keywords.any_in(&message) {
        return ClassRule::ReviewMessage;
    }
    if revert {
        return if message.is_empty() {
            ClassRule::AmbiguousRevertNoReason
        } else {
            ClassRule::AmbiguousRevertUnlocated
        };
    }
    if files.is_empty() {
        return ClassRule::AmbiguousEmptyRemedy;
    }
    match lines {
        None if pending.kind == FailureKind::FixAfterChange && pending.failing.is_none() => {
            ClassRule::AmbiguousUnattributedFix
        }
        None => ClassRule::AmbiguousFailingUnknown,
        Some(Placement::OtherFiles) => ClassRule::SelfOtherFiles,
        Some(Placement::OtherLines) => ClassRule::SelfOtherLines,
        Some(Placement::AdditionsOnly) => ClassRule::AmbiguousAdditionsOnly,
        Some(Placement::WithinNewFile) => ClassRule::AmbiguousNewFile,
        Some(Placement::Within) => ClassRule::ReviewLines,
    }
}

/// The words of the remedy's message the keyword rules read: a revert's stated reason, else the subject.
fn remedy_message(pending: &Pending, history: &History<'_>, spec: &P2Spec) -> Vec<String> {
    let row = history.rows[pending.remedy];
    if pending.kind == FailureKind::Revert {
        let tokens: Vec<&str> = row.trailers.iter().map(|trailer| trailer.token.as_str()).collect();
        text::revert_reason_words(&row.body, &tokens, &spec.revert)
    } else {
        text::message_words(&row.subject)
    }
}

/// The CI rules, which come first and read only the remedy's paths and message.
fn ci_rule(files: &[FileDiff], message: &[String], history: &History<'_>, spec: &P2Spec) -> Option<ClassRule> {
    let _ = spec;
    let matchers = &history.matchers;
    if !files.is_empty() && files.iter().all(|file| matchers.ci_paths.matches(&file.path)) {
        return Some(ClassRule::CiPaths);
    }
    matchers.ci_keywords.any_in(message).then_some(ClassRule::CiMessage)
}

/// Whether classifying `pending` needs the line hashes of its remedy and failing change, given their path-only
/// diffs (`None`: not known yet, so yes). It does not when a CI rule decides first, or when the remedy changes a
/// file the failing change did not (the placement is then "other files" whatever the lines): on git.git that
/// spares the line diffs of about 40% of the linked fixes.
pub(super) fn needs_line_hashes(
    pending: &Pending,
    history: &History<'_>,
    remedy: Option<&CommitDiff>,
    failing: Option<&CommitDiff>,
    spec: &P2Spec,
) -> bool {
    let (Some(remedy), Some(failing)) = (remedy, failing) else {
        return true;
    };
    if ci_rule(&remedy.files, &remedy_message(pending, history, spec), history, spec).is_some() {
        return false;
    }
    let failing_paths: BTreeSet<&str> = failing.files.iter().map(|file| file.path.as_str()).collect();
    remedy
        .files
        .iter()
        .all(|file| failing_paths.contains(file.path.as_str()))
}

/// Where a remedy's changes lie relative to its failing change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Only in the failing change's files, removing at least one non-blank line, every one added by it, in files it
    /// modified.
    Within,
    /// As `Within`, but in a file the failing change created.
    WithinNewFile,
    /// In a file the failing change did not touch.
    OtherFiles,
    /// Only in its files, but removing a non-blank line it did not add.
    OtherLines,
    /// Only in its files, removing no non-blank line.
    AdditionsOnly,
}

/// Compares the diffs line by line with their content hashes, per path, as sets (the SZZ-like approximation
/// documented on the parent module). Removed blank lines are ignored: they match any blank line added.
fn compare_lines(remedy: &[FileDiff], failing: &CommitDiff) -> Placement {
    let failing_files: BTreeMap<&str, &FileDiff> =
        failing.files.iter().map(|file| (file.path.as_str(), file)).collect();
    if remedy
        .iter()
        .any(|file| !failing_files.contains_key(file.path.as_str()))
    {
        return Placement::OtherFiles;
    }
    let mut removed_any = false;
    let mut in_new_file = false;
    for file in remedy {
        let Some(original) = failing_files.get(file.path.as_str()) else {
            return Placement::OtherFiles;
        };
        let added: BTreeSet<u64> = original.added_line_hashes.iter().copied().collect();
        for hash in file.removed_line_hashes.iter().filter(|&&hash| hash != TRIVIAL_LINE) {
            if !added.contains(hash) {
                return Placement::OtherLines;
            }
            removed_any = true;
            in_new_file |= original.change == FileChange::Added;
        }
    }
    match (removed_any, in_new_file) {
        (true, false) => Placement::Within,
        (true, true) => Placement::WithinNewFile,
        (false, _) => Placement::AdditionsOnly,
    }
}

/// A subject as reports show it: redacted, control characters replaced, cut to [`SUBJECT_MAX_CHARS`].
pub fn report_subject(subject: &str) -> String {
    let redacted = capture::redact(subject.trim());
    let clean = redacted.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c });
    if redacted.chars().count() <= SUBJECT_MAX_CHARS {
        clean.collect()
    } else {
        clean.take(SUBJECT_MAX_CHARS - 1).chain(['…']).collect()
    }
}
