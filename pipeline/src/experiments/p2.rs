//! P2 gate buckets: of the failures visible in git history, how many would only self-reflection have caught?
//!
//! [`analyze`] is a pure function of the walked commits, the pre-registration (`experiments/p2.toml`, see
//! [`P2Spec`]) and a diff callback: no I/O, no clock, no randomness. It asks for diffs in at most six batches
//! ([`MAX_DIFF_BATCHES`]), so the caller can compute each batch in parallel:
//!
//! 1. paths of the fixes to link (and of the remedies the self-check links blind), the reverts and their reverted
//!    changes;
//! 2. paths of the fix-after-change candidates, restricted to the paths of the fixes whose window holds them
//!    ([`DiffRequest::among`]): only a shared path links, and on real histories these are most of the diffs;
//! 3. lines ([`DiffDetail::Lines`]) of the fixes' files that can be evidence, for the fixes with a candidate touching
//!    one of them (without one, nothing can be linked whatever the lines say);
//! 4. lines of the touching candidates in those shared files;
//! 5. whole paths of the candidates that were linked and of the changes a remedy names (by SHA or pull request);
//! 6. lines of the other remedies and their failing changes, except the pairs whose paths already decide the rule
//!    (a CI rule, or a remedy outside the failing change's files).
//!
//! # Failures (detection, first match wins)
//!
//! A *failure* is a pair (remedy, failing change); a remedy naming several changes gives several failures. Merge
//! commits are never remedies (their first-parent diff is a whole branch, whose own commits carry the signal) nor
//! fix-after-change candidates, but a revert or `Fixes:` trailer may name one.
//!
//! 1. **Revert** (`revert.*` link rules): the subject has a revert form (`Revert "<subject>"`, Gerrit's
//!    `Revert^N "<subject>"`, `Reapply "<subject>"`, the conventional type `revert:`) or the body names a SHA after
//!    a marker (`This reverts commit <sha>`). The failing change is each commit named by SHA (abbreviations
//!    resolve when exactly one walked commit matches); with no SHA, the most recent earlier commit whose subject
//!    is the quoted subject. **Reverts of reverts are not failures**: a subject whose revert layers are even in
//!    number (`Revert "Revert "X""`, `Revert^2 "X"`, `Reapply "X"`: the net effect re-lands X) and a revert whose
//!    named commit is itself a revert are skipped and counted. An odd number (`Revert "Reapply "X""`,
//!    `Revert^3 "X"`) removes X again: a failure of the reapplication. The original revert of X stays a failure.
//! 2. **`Fixes:` trailer** (`fixes-trailer.*`): every trailer with a pre-registered token whose value starts with a
//!    SHA (`Fixes: 1234abcd5678 ("subject")`) names a failing change; values such as `#123` are counted, not links.
//!    **Citation** (`citation.*`): a message that cites the culprit names it: a SHA in git's citation style
//!    (`1234abcd5678 (subject, date)`, in a fix) or after a culprit phrase (`introduced in 1234abc`), and from
//!    version 4 a pull request number after one (`regression from #123`: the one walked commit that landed it).
//! 3. **Fix after change** (`fix-after-change.*`): a commit that is a fix (conventional type `fix`/`hotfix`/…, or
//!    a fix keyword leading the subject) and names no culprit is linked on line evidence (module `link`): the change at
//!    most `window_days` older (committer time) that last added the most of the lines it removes or rewrites
//!    (`ignore_paths` such as lock files and task files never link). With none, the fix is *unattributed*:
//!    reported, never guessed.
//!
//! "Earlier" is the order of the walked history: committer time, newest first, ties in input order.
//!
//! # Gate buckets (classification, first match wins; precedence CI > human review > self-reflection)
//!
//! Every failure records the [`ClassRule`] that put it in its [`Bucket`]:
//!
//! | rule | bucket | when |
//! |---|---|---|
//! | `ci.paths` | ci | every file the remedy touches is a test/build path of the risk floor or CI configuration |
//! | `ci.message` | ci | the message names the build, tests, CI, lint, types, formatting or compilation |
//! | `human-review.lines` | human-review | the remedy stays inside the failing change's files and every line it removes was added by the failing change (at least one) |
//! | `human-review.message` | human-review | the message names a review-visible defect (typo, naming, comment, docs, style) |
//! | `self-reflection.other-files` | self-reflection | the remedy touches a file the failing change did not |
//! | `self-reflection.other-lines` | self-reflection | inside the failing change's files, it removes lines the failing change did not add |
//! | `ambiguous.revert-no-reason` | ambiguous | a revert with no stated reason |
//! | `ambiguous.revert-unlocated` | ambiguous | a revert whose reason names neither CI nor a review-visible defect |
//! | `ambiguous.unattributed-fix` | ambiguous | a fix with no attributable change |
//! | `ambiguous.failing-unknown` | ambiguous | the named change is outside the walked history, ambiguous, or has no diff |
//! | `ambiguous.additions-only` | ambiguous | inside the failing change's files, it removes no non-blank line |
//! | `ambiguous.empty-remedy` | ambiguous | the remedy changes no file |
//!
//! *The message* is the subject for fixes; for a revert, whose subject only repeats the reverted one, it is the
//! stated reason: the body without the SHA-marker lines, boilerplate lines and trailers.
//!
//! A revert undoes the whole diff, so its lines say nothing about where the defect was: reverts are classified
//! by their paths and reason only, and are ambiguous when those point nowhere.
//!
//! **The line rule is a content-based, SZZ-like approximation.** Lines are compared by the hash of their content
//! ([`crate::scan::commits::line_hash`]), per file, as sets: a remedy's removed line counts as "added by the
//! failing change" when the failing change added a line with the same content to the same path. Its limits:
//! identical lines (`}`, `return nil`) added elsewhere in the file match too (blank removed lines are ignored for
//! this reason); lines the failing change added but an intermediate commit rewrote no longer match (the remedy
//! then looks like self-reflection); renames are not followed (diffs carry no rename detection); a remedy that only
//! adds lines (a missing check) cannot be placed, hence `ambiguous.additions-only`. Whether the reviewer actually
//! *saw* the defect is not knowable from history: "visible in the diff" is the proxy.
//!
//! # Decision
//!
//! The kill rule (`only-self-reflection share < 5% of classified failures ⇒ do NOT build §7–§8`, from the
//! prereg) is decided on the share `k / n` of self-reflection among classified (non-ambiguous) failures and its
//! Wilson interval, like P1:
//!
//! 1. **INCONCLUSIVE** when `n < kill.min_classified` (with the failures still needed);
//! 2. **KILL** when the share is below the threshold and so is the whole interval (`hi < threshold`);
//! 3. **PASS** when the share is at or above it and so is the whole interval (`lo >= threshold`);
//! 4. **INCONCLUSIVE** otherwise: the interval straddles the threshold.
//!
//! The [`Sensitivity`] analysis repeats the decision with the ambiguous failures counted at each extreme (all
//! self-reflection, none) and calls the verdict *robust* when all three agree.

mod classify;
mod link;
mod memo;
pub use crate::prereg::p2 as spec;
pub use classify::report_subject;
mod text;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use capture::Surface;
use capture::risk::evaluate_risk_floor;
use rayon::prelude::*;
use serde::{Serialize, Serializer};

pub use super::p1::VerdictKind;
use crate::scan::cache_file;
use crate::scan::commit_cache::{CommitCache, Facts};
use crate::scan::commits::{CommitDiff, CommitRow, DiffDetail, DiffRequest, FileDiff, ObjectId};
use crate::scan::remedy_cache::RemedyCache;
use crate::stats::{self, Interval};
pub use spec::{P2Citation, P2Classify, P2FixAfterChange, P2FixesTrailer, P2Kill, P2Link, P2Revert, P2Sample, P2Spec};

/// The diff callback of [`analyze`]: the diffs of the requested commits, at the given detail, in any order. With
/// [`DiffDetail::Lines`] a request may limit the line detail to some of its paths.
pub type DiffSource<'a, E> = dyn FnMut(&[DiffRequest], DiffDetail) -> Result<Vec<CommitDiff>, E> + 'a;

/// [`analyze`] calls the diff callback at most this many times.
pub const MAX_DIFF_BATCHES: u64 = 6;

/// Characters of a remedy's subject kept in a report (after redaction); longer ones end in `…`.
pub const SUBJECT_MAX_CHARS: usize = 200;

/// How a failure was detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    Revert,
    FixesTrailer,
    /// A fix whose body cites the commit that introduced the defect (`[citation]`).
    Citation,
    FixAfterChange,
}

impl FailureKind {
    pub const ALL: [FailureKind; 4] = [
        FailureKind::Revert,
        FailureKind::FixesTrailer,
        FailureKind::Citation,
        FailureKind::FixAfterChange,
    ];

    pub fn id(self) -> &'static str {
        match self {
            FailureKind::Revert => "revert",
            FailureKind::FixesTrailer => "fixes-trailer",
            FailureKind::Citation => "citation",
            FailureKind::FixAfterChange => "fix-after-change",
        }
    }
}

/// What a link between a remedy and its failing change rests on, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// The remedy names the failing change by SHA (revert, trailer, citation).
    Sha,
    /// A revert names the failing change by its subject.
    Subject,
    /// The failing change last added lines the fix removes or rewrites (line evidence).
    Lines,
    /// The fix rewrites no line but moves or re-indents some (wraps them in a check): the change that last added
    /// those (weaker line evidence).
    Adjacent,
    /// The fix only adds lines: the most recent change in the window touching one of its files (weak).
    Files,
    /// No failing change.
    None,
}

impl Evidence {
    pub fn id(self) -> &'static str {
        match self {
            Evidence::Sha => "sha",
            Evidence::Subject => "subject",
            Evidence::Lines => "lines",
            Evidence::Adjacent => "adjacent",
            Evidence::Files => "files",
            Evidence::None => "none",
        }
    }
}

/// The gate that would have caught a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bucket {
    Ci,
    HumanReview,
    SelfReflection,
    /// Not classifiable: counted and reported, left out of the shares (see [`Sensitivity`]).
    Ambiguous,
}

impl Bucket {
    pub const ALL: [Bucket; 4] = [
        Bucket::Ci,
        Bucket::HumanReview,
        Bucket::SelfReflection,
        Bucket::Ambiguous,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Bucket::Ci => "ci",
            Bucket::HumanReview => "human-review",
            Bucket::SelfReflection => "self-reflection",
            Bucket::Ambiguous => "ambiguous",
        }
    }
}

impl fmt::Display for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// How a remedy was linked to its failing change (serialised as its id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkRule {
    RevertSha,
    RevertSubject,
    RevertShaOutsideHistory,
    RevertShaAmbiguous,
    RevertSubjectNotFound,
    FixesSha,
    FixesShaOutsideHistory,
    FixesShaAmbiguous,
    CitationSha,
    CitationShaOutsideHistory,
    CitationShaAmbiguous,
    CitationPullRequest,
    FixLines,
    FixAdjacent,
    FixFiles,
    FixUnattributed,
    FixDependencyBump,
    FixSameBranch,
}

impl LinkRule {
    pub const ALL: [LinkRule; 18] = [
        LinkRule::RevertSha,
        LinkRule::RevertSubject,
        LinkRule::RevertShaOutsideHistory,
        LinkRule::RevertShaAmbiguous,
        LinkRule::RevertSubjectNotFound,
        LinkRule::FixesSha,
        LinkRule::FixesShaOutsideHistory,
        LinkRule::FixesShaAmbiguous,
        LinkRule::CitationSha,
        LinkRule::CitationShaOutsideHistory,
        LinkRule::CitationShaAmbiguous,
        LinkRule::CitationPullRequest,
        LinkRule::FixLines,
        LinkRule::FixAdjacent,
        LinkRule::FixFiles,
        LinkRule::FixUnattributed,
        LinkRule::FixDependencyBump,
        LinkRule::FixSameBranch,
    ];

    pub fn id(self) -> &'static str {
        match self {
            LinkRule::RevertSha => "revert.sha",
            LinkRule::RevertSubject => "revert.subject",
            LinkRule::RevertShaOutsideHistory => "revert.sha-outside-history",
            LinkRule::RevertShaAmbiguous => "revert.sha-ambiguous",
            LinkRule::RevertSubjectNotFound => "revert.subject-not-found",
            LinkRule::FixesSha => "fixes-trailer.sha",
            LinkRule::FixesShaOutsideHistory => "fixes-trailer.sha-outside-history",
            LinkRule::FixesShaAmbiguous => "fixes-trailer.sha-ambiguous",
            LinkRule::CitationSha => "citation.sha",
            LinkRule::CitationShaOutsideHistory => "citation.sha-outside-history",
            LinkRule::CitationShaAmbiguous => "citation.sha-ambiguous",
            LinkRule::CitationPullRequest => "citation.pull-request",
            LinkRule::FixLines => "fix-after-change.lines",
            LinkRule::FixAdjacent => "fix-after-change.adjacent",
            LinkRule::FixFiles => "fix-after-change.files",
            LinkRule::FixUnattributed => "fix-after-change.unattributed",
            LinkRule::FixDependencyBump => "fix-after-change.dependency-bump",
            LinkRule::FixSameBranch => "fix-after-change.same-branch",
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            LinkRule::RevertSha => "a revert naming the failing change by SHA (full, or an unambiguous abbreviation)",
            LinkRule::RevertSubject => "a revert without SHA: the most recent earlier commit with the reverted subject",
            LinkRule::RevertShaOutsideHistory => "a revert naming a SHA that is not in the walked history",
            LinkRule::RevertShaAmbiguous => "a revert naming an abbreviated SHA that matches several walked commits",
            LinkRule::RevertSubjectNotFound => {
                "a revert without SHA whose reverted subject matches no earlier walked commit"
            }
            LinkRule::FixesSha => "a Fixes: trailer naming the failing change by SHA",
            LinkRule::FixesShaOutsideHistory => "a Fixes: trailer naming a SHA that is not in the walked history",
            LinkRule::FixesShaAmbiguous => {
                "a Fixes: trailer naming an abbreviated SHA that matches several walked commits"
            }
            LinkRule::CitationSha => "a fix whose body cites the commit that introduced the defect, by SHA",
            LinkRule::CitationShaOutsideHistory => "a fix citing a SHA that is not in the walked history",
            LinkRule::CitationShaAmbiguous => "a fix citing an abbreviated SHA that matches several walked commits",
            LinkRule::CitationPullRequest => {
                "a commit citing the pull request that introduced the defect (`regression from #123`): the walked \
                 commit that landed it (a squash merge `… (#123)`, or the merge of `Merge pull request #123`)"
            }
            LinkRule::FixLines => {
                "a fix naming no SHA: the change in the window that last added the most of the lines it removes or \
                 rewrites (line evidence; mass changes passed through)"
            }
            LinkRule::FixAdjacent => {
                "a fix that rewrites no line but moves or re-indents some (wraps them in a check): the change in \
                 the window that last added the most of those"
            }
            LinkRule::FixFiles => {
                "a fix that only adds lines: the most recent change in the window touching one of its files (weak \
                 evidence; the failure is ambiguous)"
            }
            LinkRule::FixDependencyBump => {
                "a fix touching only dependency manifests: a version bump, whose defect lies in the dependency"
            }
            LinkRule::FixSameBranch => {
                "a fix whose lines were last added by a commit of its own merged branch (both reached the main line \
                 in one merge): the defect never landed on its own, so no failing change is named"
            }
            LinkRule::FixUnattributed => {
                "a fix naming no SHA whose removed lines no change in the window added (the defect is older), or with \
                 no change in the window touching its files"
            }
        }
    }
}

impl Serialize for LinkRule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// Which classification rule put a failure in its bucket (serialised as its id; see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClassRule {
    CiPaths,
    CiMessage,
    ReviewLines,
    ReviewMessage,
    SelfOtherFiles,
    SelfOtherLines,
    AmbiguousRevertNoReason,
    AmbiguousRevertUnlocated,
    AmbiguousUnattributedFix,
    AmbiguousFailingUnknown,
    AmbiguousAdditionsOnly,
    AmbiguousEmptyRemedy,
    AmbiguousWeakLink,
    AmbiguousNewFile,
}

impl ClassRule {
    pub const ALL: [ClassRule; 14] = [
        ClassRule::CiPaths,
        ClassRule::CiMessage,
        ClassRule::ReviewLines,
        ClassRule::ReviewMessage,
        ClassRule::SelfOtherFiles,
        ClassRule::SelfOtherLines,
        ClassRule::AmbiguousRevertNoReason,
        ClassRule::AmbiguousRevertUnlocated,
        ClassRule::AmbiguousUnattributedFix,
        ClassRule::AmbiguousFailingUnknown,
        ClassRule::AmbiguousAdditionsOnly,
        ClassRule::AmbiguousEmptyRemedy,
        ClassRule::AmbiguousWeakLink,
        ClassRule::AmbiguousNewFile,
    ];

    pub fn id(self) -> &'static str {
        match self {
            ClassRule::CiPaths => "ci.paths",
            ClassRule::CiMessage => "ci.message",
            ClassRule::ReviewLines => "human-review.lines",
            ClassRule::ReviewMessage => "human-review.message",
            ClassRule::SelfOtherFiles => "self-reflection.other-files",
            ClassRule::SelfOtherLines => "self-reflection.other-lines",
            ClassRule::AmbiguousRevertNoReason => "ambiguous.revert-no-reason",
            ClassRule::AmbiguousRevertUnlocated => "ambiguous.revert-unlocated",
            ClassRule::AmbiguousUnattributedFix => "ambiguous.unattributed-fix",
            ClassRule::AmbiguousFailingUnknown => "ambiguous.failing-unknown",
            ClassRule::AmbiguousAdditionsOnly => "ambiguous.additions-only",
            ClassRule::AmbiguousEmptyRemedy => "ambiguous.empty-remedy",
            ClassRule::AmbiguousWeakLink => "ambiguous.weak-link",
            ClassRule::AmbiguousNewFile => "ambiguous.new-file",
        }
    }

    pub fn bucket(self) -> Bucket {
        match self {
            ClassRule::CiPaths | ClassRule::CiMessage => Bucket::Ci,
            ClassRule::ReviewLines | ClassRule::ReviewMessage => Bucket::HumanReview,
            ClassRule::SelfOtherFiles | ClassRule::SelfOtherLines => Bucket::SelfReflection,
            _ => Bucket::Ambiguous,
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            ClassRule::CiPaths => "every file the remedy touches is a test, CI-configuration or build-script path",
            ClassRule::CiMessage => "the message names the build, tests, CI, lint, types, formatting or compilation",
            ClassRule::ReviewLines => {
                "the remedy stays inside the failing change's files and only removes lines it added, in files it \
                 modified (not created)"
            }
            ClassRule::ReviewMessage => {
                "the message names a review-visible defect (typo, naming, comment, docs, style)"
            }
            ClassRule::SelfOtherFiles => "the remedy touches a file the failing change did not",
            ClassRule::SelfOtherLines => "the remedy removes lines the failing change did not add",
            ClassRule::AmbiguousRevertNoReason => "a revert that gives no reason",
            ClassRule::AmbiguousRevertUnlocated => "a revert whose reason names neither CI nor a review-visible defect",
            ClassRule::AmbiguousUnattributedFix => "a fix with no attributable change",
            ClassRule::AmbiguousFailingUnknown => {
                "the named change is outside the walked history, ambiguous, or has no diff"
            }
            ClassRule::AmbiguousAdditionsOnly => {
                "inside the failing change's files, the remedy removes no non-blank line (it only adds)"
            }
            ClassRule::AmbiguousEmptyRemedy => "the remedy changes no file",
            ClassRule::AmbiguousWeakLink => "a fix linked on file evidence only (it only adds lines)",
            ClassRule::AmbiguousNewFile => {
                "inside the failing change's files, the remedy removes only lines of a file the failing change \
                 created: every line of it is the change's own, so the line rule says nothing"
            }
        }
    }
}

impl Serialize for ClassRule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// One failure: a remedy, the change it remedies, and the gate that would have caught it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// The remedy's full hex id and its first 12 digits.
    pub remedy: String,
    pub remedy_short: String,
    /// The failing change, when it is a walked commit.
    pub failing: Option<String>,
    pub failing_short: Option<String>,
    /// The SHA as the remedy wrote it, when it did not resolve to exactly one walked commit.
    pub failing_ref: Option<String>,
    pub kind: FailureKind,
    pub link_rule: LinkRule,
    /// What the link rests on, and for line evidence how many of the fix's removed lines the failing change added.
    pub evidence: Evidence,
    pub evidence_lines: Option<u32>,
    pub bucket: Bucket,
    pub rule: ClassRule,
    /// Remedy committer time minus failing committer time (negative with clock skew).
    pub time_to_remedy_seconds: Option<i64>,
    /// The risk-floor surface of the failing change's files, and whether the floor would have asked for review.
    pub failing_surface: Option<Surface>,
    pub floor_flagged: Option<bool>,
    /// The remedy's subject, redacted and cut to [`SUBJECT_MAX_CHARS`].
    pub subject: String,
}

/// Failures per bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Buckets {
    pub total: u64,
    pub ci: u64,
    pub human_review: u64,
    pub self_reflection: u64,
    pub ambiguous: u64,
    /// `total - ambiguous`: the denominator of the shares.
    pub classified: u64,
    /// Failures whose failing change the risk floor would have flagged for review.
    pub floor_flagged: u64,
}

impl Buckets {
    fn add(&mut self, failure: &Failure) {
        self.total += 1;
        match failure.bucket {
            Bucket::Ci => self.ci += 1,
            Bucket::HumanReview => self.human_review += 1,
            Bucket::SelfReflection => self.self_reflection += 1,
            Bucket::Ambiguous => self.ambiguous += 1,
        }
        self.classified = self.total - self.ambiguous;
        self.floor_flagged += u64::from(failure.floor_flagged == Some(true));
    }

    fn of<'a>(failures: impl IntoIterator<Item = &'a Failure>) -> Self {
        let mut buckets = Self::default();
        for failure in failures {
            buckets.add(failure);
        }
        buckets
    }
}

/// Shares with their Wilson intervals; `None` when the denominator is 0 (undefined).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shares {
    /// Of classified failures.
    pub ci: Option<Interval>,
    pub human_review: Option<Interval>,
    pub self_reflection: Option<Interval>,
    /// Of all failures.
    pub ambiguous: Option<Interval>,
}

impl Shares {
    fn of(buckets: &Buckets, z: f64) -> Self {
        Self {
            ci: wilson(buckets.ci, buckets.classified, z),
            human_review: wilson(buckets.human_review, buckets.classified, z),
            self_reflection: wilson(buckets.self_reflection, buckets.classified, z),
            ambiguous: wilson(buckets.ambiguous, buckets.total, z),
        }
    }
}

/// `None` for an empty denominator or an invalid `z` (the spec is validated by the loader, so only a hand-built
/// spec can get there): an undefined interval, never a panic.
fn wilson(successes: u64, n: u64, z: f64) -> Option<Interval> {
    stats::wilson(successes, n, z).ok().flatten()
}

/// Time from the failing change to its remedy (committer times), over failures with a walked failing change.
/// Quantiles are nearest-rank (`sorted[ceil(p·n) − 1]`): the median of an even count is the lower middle value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TimeToRemedy {
    pub n: u64,
    pub median_seconds: Option<i64>,
    pub p90_seconds: Option<i64>,
}

impl TimeToRemedy {
    fn of<'a>(failures: impl IntoIterator<Item = &'a Failure>) -> Self {
        let mut seconds: Vec<i64> = failures.into_iter().filter_map(|f| f.time_to_remedy_seconds).collect();
        seconds.sort_unstable();
        let rank = |p: f64| {
            let n = seconds.len();
            (n > 0).then(|| seconds[((p * n as f64).ceil() as usize).clamp(1, n) - 1])
        };
        Self {
            n: seconds.len() as u64,
            median_seconds: rank(0.5),
            p90_seconds: rank(0.9),
        }
    }
}

/// The failures of one value of a breakdown (descriptive: the verdict is for the whole history).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub key: String,
    pub counts: Buckets,
    pub shares: Shares,
    pub time_to_remedy: TimeToRemedy,
}

impl Group {
    fn of<'a>(key: &str, failures: impl Iterator<Item = &'a Failure> + Clone, z: f64) -> Self {
        let counts = Buckets::of(failures.clone());
        Self {
            key: key.to_string(),
            shares: Shares::of(&counts, z),
            counts,
            time_to_remedy: TimeToRemedy::of(failures),
        }
    }
}

/// The non-empty groups of a breakdown of `failures` by `key`, in `order`: a polars group-by
/// ([`super::frames::rows_by_key`]), then each group's counts, shares and time to remedy over its rows.
fn groups_of(failures: &[Failure], order: &[&str], z: f64, key: impl Fn(&Failure) -> &'static str) -> Vec<Group> {
    let keys: Vec<Option<&str>> = failures.iter().map(|f| Some(key(f))).collect();
    // A group-by over an in-memory column of strings fails only on a polars bug.
    let mut groups = super::frames::rows_by_key(&keys).expect("polars groups a column of strings");
    let rank = |value: &Option<String>| order.iter().position(|o| Some(*o) == value.as_deref());
    groups.sort_by_key(|(value, _)| rank(value));
    groups
        .into_iter()
        .map(|(value, rows)| {
            let members = rows.iter().map(|&row| &failures[row]);
            Group::of(value.as_deref().unwrap_or_default(), members, z)
        })
        .collect()
}

/// What the walk and the detection saw, every skipped or unresolved case counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HistorySummary {
    /// Distinct commits analysed, and repeated ids dropped.
    pub commits: u64,
    pub duplicate_commits: u64,
    pub merges: u64,
    /// Merge commits that matched a detection rule, not taken as remedies.
    pub merge_remedies_skipped: u64,
    /// Commits remedying at least one failure, per detection rule.
    pub revert_commits: u64,
    pub fixes_trailer_commits: u64,
    pub citation_commits: u64,
    pub fix_commits: u64,
    /// Reverts of reverts (even revert layers, `Reapply`, or naming a revert by SHA): not failures.
    pub reverts_of_reverts_skipped: u64,
    /// Fixes linked to a change (on line evidence, or on file evidence only), and fixes with none (unattributed).
    pub fixes_linked: u64,
    pub fixes_linked_on_files: u64,
    pub unattributed_fixes: u64,
    /// Changes in fixes' windows passed through as mass changes (formatting, releases, vendoring, > N files).
    pub mass_changes: u64,
    /// Fixes touching only dependency manifests (version bumps): never linked.
    pub dependency_bumps: u64,
    /// Fixes whose lines a commit of their own merged branch last added (`fix-after-change.same-branch`).
    pub same_branch_fixes: u64,
    /// Fixes whose window held more candidate changes than `max_candidates` (the oldest were not considered).
    pub fix_windows_truncated: u64,
    /// `Fixes:` trailer values that do not start with a SHA (`#123`).
    pub fixes_trailers_not_sha: u64,
    /// Named SHAs that resolve to no walked commit, or to several (an abbreviation).
    pub shas_outside_history: u64,
    pub shas_ambiguous: u64,
    /// Pull request numbers cited as the culprit that no walked commit's subject says it landed, or several do
    /// (version 4; an issue's number, or a pull request outside the walked history): not links.
    pub pull_requests_not_found: u64,
    /// Reverts without SHA whose reverted subject matches no earlier commit.
    pub revert_subjects_not_found: u64,
    /// Calls of the diff callback, ids requested, and requested ids it returned no diff for.
    pub diff_batches: u64,
    pub diffs_requested: u64,
    pub diffs_missing: u64,
}

/// One scenario of the sensitivity analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub self_reflection: u64,
    pub n: u64,
    pub share: Option<Interval>,
    pub verdict: VerdictKind,
}

/// The only-self-reflection share with the ambiguous failures left out (the pre-registered statistic) and
/// counted at each extreme.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sensitivity {
    pub ambiguous: u64,
    pub excluded: Scenario,
    pub all_self_reflection: Scenario,
    pub none_self_reflection: Scenario,
    /// The three verdicts agree: the ambiguous failures cannot change the decision.
    pub robust: bool,
}

/// The self-check: the blind linker run on the fixes that name their culprit (a `Fixes:` trailer or a citation of a
/// commit inside the window), as if they named none, and compared with what they name (right when it is one of the
/// commits named inside the window).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SelfCheck {
    /// Named fixes whose culprit lies inside the window.
    pub named: u64,
    /// Of them, those the blind linker linked, and of those, to the named commit or to another one.
    pub linked: u64,
    pub correct: u64,
    pub wrong: u64,
    /// Named fixes the blind linker left unattributed.
    pub unlinked: u64,
    /// `correct / linked` and `correct / named`, with Wilson intervals.
    pub precision: Option<Interval>,
    pub recall: Option<Interval>,
}

impl SelfCheck {
    fn add(&mut self, blind: Option<usize>, named: &BTreeSet<usize>) {
        self.named += 1;
        match blind {
            Some(pos) if named.contains(&pos) => {
                self.linked += 1;
                self.correct += 1;
            }
            Some(_) => {
                self.linked += 1;
                self.wrong += 1;
            }
            None => self.unlinked += 1,
        }
    }

    fn finish(&mut self, z: f64) {
        self.precision = wilson(self.correct, self.linked, z);
        self.recall = wilson(self.correct, self.named, z);
    }
}

/// The P2 verdict (classified failures are its `n`).
pub type Verdict = super::ShareVerdict;

/// The body of `p2.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P2Analysis {
    /// The pre-registered kill rule, verbatim, and its numbers.
    pub kill_rule: String,
    pub threshold: f64,
    pub min_classified: u64,
    pub history: HistorySummary,
    pub counts: Buckets,
    pub shares: Shares,
    pub sensitivity: Sensitivity,
    pub verdict: Verdict,
    /// Keyed by risk-floor surface (most risky first, then `unknown` for failing changes without a diff) and
    /// by detection kind; only non-empty groups.
    pub by_surface: Vec<Group>,
    pub by_kind: Vec<Group>,
    pub time_to_remedy: TimeToRemedy,
    /// The linker's accuracy on this history's fixes that name their culprit.
    pub self_check: SelfCheck,
    /// Per bucket (every bucket present), up to `sample.per_bucket` failures, the first by sha256 of the seed and
    /// ids: a reading sample nobody picked.
    pub samples: BTreeMap<Bucket, Vec<Failure>>,
    /// Every link and classification rule id with its meaning.
    pub rules: BTreeMap<&'static str, &'static str>,
    /// Every failure: remedies newest first, each remedy's failing changes in the order it names them.
    pub failures: Vec<Failure>,
}

/// What one walked commit says, computed once.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parsed {
    merge: bool,
    fixes_not_sha: u64,
    fix: bool,
    /// A mass change by its subject (type, keywords, version number); by its file count it is decided later.
    mass_subject: bool,
    /// What few messages say (a revert, SHAs, pull request numbers): `None` when it is all empty, as for most
    /// commits. Boxed: on a rerun of git.git 82 thousand of these are decoded from the commit cache and copied into
    /// the analysis, and new memory is most of what that costs (BENCHMARKS.md).
    cited: Option<Box<Cited>>,
}

/// The part of [`Parsed`] most commits do not have.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cited {
    revert: Option<text::RevertForm>,
    marker_shas: Vec<String>,
    fixes_shas: Vec<String>,
    /// SHAs the body cites as the culprit (see [`text::cited_shas`]) when the commit is a fix or names a culprit.
    cited_shas: Vec<String>,
    /// Pull request numbers the subject or body cites as the culprit (see [`text::cited_pull_requests`]; version 4).
    cited_pull_requests: Vec<u64>,
}

/// What a commit that says none of it has.
static NOTHING_CITED: Cited = Cited {
    revert: None,
    marker_shas: Vec::new(),
    fixes_shas: Vec::new(),
    cited_shas: Vec::new(),
    cited_pull_requests: Vec::new(),
};

impl Cited {
    /// Boxed, or `None` when empty (one form for "nothing", so that equal facts compare equal).
    fn boxed(self) -> Option<Box<Cited>> {
        (self != NOTHING_CITED).then(|| Box::new(self))
    }
}

/// What the pre-registration's patterns found in one commit's message, as the commit cache keeps it between runs
/// ([`crate::scan::commit_cache`]): a rerun parses only the messages it has not seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageFacts(Parsed);

/// The facts of the commits an earlier run parsed, and those this run parsed anew; the links of the fixes an earlier
/// run linked, and this run's.
#[derive(Default)]
pub struct MessageMemo<'c> {
    remembered: Option<&'c CommitCache<MessageFacts>>,
    /// Per commit of the history, in its order, its slot in `remembered` ([`crate::scan::git::NOT_REMEMBERED`]:
    /// none), as the walk gave them.
    slots: Vec<u32>,
    learned: LearnedFacts,
    /// The links an earlier run concluded, by fix ([`memo`]).
    links: Option<&'c RemedyCache<LinkMemo>>,
    /// This run's, once analysed.
    linked: LinkedNow,
}

/// Each fix's link that can be remembered: (fix, link, computed by this run rather than taken from the cache).
pub type LinksToKeep = Vec<(ObjectId, LinkMemo, bool)>;

/// What a run concluded of its fixes' links, for the link cache's next save and the diff cache's.
#[derive(Default)]
pub struct LinkedNow {
    pub links: LinksToKeep,
    /// How many fixes took their link from the cache, of how many fixes linked.
    pub reused: u64,
    pub fixes: u64,
    /// Commits whose diffs a run without the link cache would have asked for, and this one did not need: the diff
    /// cache keeps what it knows of them (a later run whose windows change may need it).
    pub unasked: Vec<ObjectId>,
}

impl<'c> MessageMemo<'c> {
    /// Parse every message; remember nothing.
    pub fn none() -> Self {
        Self::default()
    }

    /// Take the facts `cache` holds and learn the others (for the cache's next save, [`Self::into_learned`]).
    /// `slots`: per commit of the history to analyse, in its order, where the walk took it from in `cache`.
    pub fn remembering(cache: &'c CommitCache<MessageFacts>, slots: Vec<u32>) -> Self {
        Self {
            remembered: Some(cache),
            slots,
            ..Self::default()
        }
    }

    /// Also take the links `links` holds for the fixes whose window is unchanged.
    pub fn with_links(self, links: &'c RemedyCache<LinkMemo>) -> Self {
        Self {
            links: Some(links),
            ..self
        }
    }

    /// The facts this run parsed (with a cache), for the cache's next save, and what it concluded of its links.
    pub fn into_learned(self) -> (LearnedFacts, LinkedNow) {
        (self.learned, self.linked)
    }
}

pub use memo::LinkMemo;

/// Message facts a run parsed, by commit.
pub type LearnedFacts = foldhash::HashMap<ObjectId, MessageFacts>;

fn put_shas(out: &mut Vec<u8>, shas: &[String]) {
    out.extend_from_slice(&(shas.len() as u32).to_le_bytes());
    for sha in shas {
        cache_file::put_text(out, sha);
    }
}

fn shas(r: &mut cache_file::Reader<'_>) -> Result<Vec<String>, String> {
    (0..r.count(4)?).map(|_| Ok(r.text()?.to_string())).collect()
}

impl Facts for MessageFacts {
    fn encode(&self, out: &mut Vec<u8>) {
        let parsed = &self.0;
        let cited = parsed.cited();
        let flags = u8::from(parsed.merge) | u8::from(parsed.fix) << 1 | u8::from(parsed.mass_subject) << 2;
        out.push(flags);
        match &cited.revert {
            None => out.push(0),
            Some(form) => {
                out.push(1);
                out.extend_from_slice(&form.depth.to_le_bytes());
                cache_file::put_text(out, &form.reverted_subject);
            }
        }
        put_shas(out, &cited.marker_shas);
        put_shas(out, &cited.fixes_shas);
        out.extend_from_slice(&parsed.fixes_not_sha.to_le_bytes());
        put_shas(out, &cited.cited_shas);
        out.extend_from_slice(&(cited.cited_pull_requests.len() as u32).to_le_bytes());
        for number in &cited.cited_pull_requests {
            out.extend_from_slice(&number.to_le_bytes());
        }
    }

    fn decode(r: &mut cache_file::Reader<'_>) -> Result<Self, String> {
        let flags = r.u8()?;
        let revert = match r.u8()? {
            0 => None,
            _ => Some(text::RevertForm {
                depth: r.u64()?,
                reverted_subject: r.text()?.to_string(),
            }),
        };
        let marker_shas = shas(r)?;
        let fixes_shas = shas(r)?;
        let fixes_not_sha = r.u64()?;
        let cited_shas = shas(r)?;
        let cited_pull_requests = (0..r.count(8)?).map(|_| r.u64()).collect::<Result<_, _>>()?;
        Ok(Self(Parsed {
            merge: flags & 1 != 0,
            fix: flags & 2 != 0,
            mass_subject: flags & 4 != 0,
            fixes_not_sha,
            cited: Cited {
                revert,
                marker_shas,
                fixes_shas,
                cited_shas,
                cited_pull_requests,
            }
            .boxed(),
        }))
    }
}

/// The prereg's keyword and path lists, compiled once.
struct Matchers {
    ci_keywords: text::Keywords,
    review_keywords: text::Keywords,
    mass_keywords: text::Keywords,
    ci_paths: text::PathPatterns,
    ignore_paths: text::PathPatterns,
    dependency_manifests: text::PathPatterns,
    sha_markers: text::ShaMarkers,
}

impl Matchers {
    fn new(spec: &P2Spec) -> Self {
        Self {
            ci_keywords: text::Keywords::new(&spec.classify.ci_keywords),
            review_keywords: text::Keywords::new(&spec.classify.review_keywords),
            mass_keywords: text::Keywords::new(&spec.link.mass_change_keywords),
            ci_paths: text::PathPatterns::new(&spec.classify.ci_paths),
            ignore_paths: text::PathPatterns::new(&spec.fix_after_change.ignore_paths),
            dependency_manifests: text::PathPatterns::new(&spec.fix_after_change.dependency_manifests),
            sha_markers: text::ShaMarkers::new(&spec.revert.sha_markers),
        }
    }
}

impl Parsed {
    fn new(row: &CommitRow, spec: &P2Spec, matchers: &Matchers) -> Self {
        let mut fixes_shas = Vec::new();
        let mut fixes_not_sha = 0;
        for trailer in &row.trailers {
            if spec
                .fixes_trailer
                .tokens
                .iter()
                .any(|token| token.eq_ignore_ascii_case(trailer.token.trim()))
            {
                match text::leading_sha(&trailer.value, spec.min_sha_len) {
                    Some(sha) if !fixes_shas.contains(&sha) => fixes_shas.push(sha),
                    Some(_) => {}
                    None => fixes_not_sha += 1,
                }
            }
        }
        let fix = text::is_fix_subject(
            &row.subject,
            &spec.fix_after_change.types,
            &spec.fix_after_change.keywords,
        );
        // git's citation style alone is any reference ("since 1234abc (…) we …"): it names the culprit only in a
        // fix; after a culprit phrase it does so in any commit.
        let cited_shas = text::cited_shas(&row.body, &spec.citation.culprit_phrases, spec.min_sha_len)
            .into_iter()
            .filter(|citation| fix || citation.culprit)
            .map(|citation| citation.sha)
            .filter(|sha| !fixes_shas.contains(sha))
            .collect();
        // A pull request number after a culprit phrase, in the subject (vite: `…, regression from #15365 (#15559)`)
        // or the body.
        let cited_pull_requests = if spec.citation.pull_requests {
            let mut numbers = text::cited_pull_requests(&row.subject, &spec.citation.culprit_phrases);
            for number in text::cited_pull_requests(&row.body, &spec.citation.culprit_phrases) {
                if !numbers.contains(&number) {
                    numbers.push(number);
                }
            }
            numbers
        } else {
            Vec::new()
        };
        let mass_subject = text::conventional(&row.subject).is_some_and(|(kind, _)| {
            spec.link
                .mass_change_types
                .iter()
                .any(|t| t.eq_ignore_ascii_case(&kind))
        }) || matchers.mass_keywords.any_in(&text::message_words(&row.subject))
            || text::starts_with_version(&row.subject);
        Self {
            merge: row.parents.len() > 1,
            fixes_not_sha,
            fix,
            mass_subject,
            cited: Cited {
                revert: text::revert_form(&row.subject, &spec.revert),
                // The subject too: git's subject is the whole first paragraph, and a message without a blank line
                // after its first line (`git-gui: Revert "…"` / `This reverts commit …`) has the marker there.
                marker_shas: text::marker_shas(&[&row.subject, &row.body], &matchers.sha_markers, spec.min_sha_len),
                fixes_shas,
                cited_shas,
                cited_pull_requests,
            }
            .boxed(),
        }
    }

    fn cited(&self) -> &Cited {
        self.cited.as_deref().unwrap_or(&NOTHING_CITED)
    }

    fn is_revert(&self) -> bool {
        self.cited().revert.is_some() || !self.cited().marker_shas.is_empty()
    }

    /// The net effect removes a change: an odd number of revert layers (a SHA marker alone is one layer).
    fn is_net_revert(&self) -> bool {
        self.is_revert() && self.cited().revert.as_ref().is_none_or(|form| form.depth % 2 == 1)
    }

    /// Could be the failing change of a fix that names no SHA: any commit but a merge and a mass change (by its
    /// subject; by its file count it is passed through later). Fixes too: a fix can introduce the next defect.
    fn is_candidate_change(&self) -> bool {
        !self.merge && !self.mass_subject
    }
}

enum Resolved {
    Found(usize),
    Outside,
    Ambiguous,
}

/// A failure before classification: positions in the walked order.
struct Pending {
    remedy: usize,
    failing: Option<usize>,
    failing_ref: Option<String>,
    kind: FailureKind,
    link: LinkRule,
    evidence: Evidence,
    /// For line evidence: how many of the fix's removed lines the failing change added.
    evidence_lines: Option<u32>,
}

impl Pending {
    /// A failure whose remedy names its failing change by SHA (resolved or not).
    fn named(remedy: usize, kind: FailureKind, (failing, failing_ref, link): Link) -> Self {
        Pending {
            remedy,
            evidence: if failing.is_some() {
                Evidence::Sha
            } else {
                Evidence::None
            },
            failing,
            failing_ref,
            kind,
            link,
            evidence_lines: None,
        }
    }
}

/// The walked history in its analysis order, with lookups.
struct History<'a> {
    matchers: Matchers,
    rows: Vec<&'a CommitRow>,
    parsed: Vec<Parsed>,
    /// Keyed with gix's id hasher (an id's leading bytes): the diff batches look up every returned id.
    position: gix::hashtable::HashMap<ObjectId, usize>,
    /// (id, position), sorted by id (the order of their hex spellings): abbreviated SHAs resolve by a range search.
    by_id: Vec<(ObjectId, usize)>,
    /// Subject → the newest position with it. Hashed with foldhash: all 82k subjects of git.git go in.
    by_subject: foldhash::HashMap<&'a str, usize>,
    /// Per position, the next older position with the same subject ([`NO_POSITION`]: none): a chain from
    /// `by_subject`'s entry, rather than a list per subject (82k allocations to make and to free, most of one item).
    older_same_subject: Vec<usize>,
    /// Per position, the main-line commit through which it reached the main line ([`landings`]).
    landing: Vec<usize>,
    /// Per position, the commit's index in the slice analysed; `None` when they are the same (the scanner's order).
    input_index: Option<Vec<usize>>,
}

impl<'a> History<'a> {
    /// `parsed` holds each commit's parsed message, in the order of `commits`.
    fn new(commits: &'a [CommitRow], parsed: Vec<Parsed>, matchers: Matchers, summary: &mut HistorySummary) -> Self {
        // The scanner's walk gives the commits newest first, each once: then the analysis order is theirs, and the
        // lookup of positions is all the deduplication needs. Anything else is deduplicated and sorted.
        let mut position: gix::hashtable::HashMap<ObjectId, usize> =
            gix::hashtable::HashMap::with_capacity_and_hasher(commits.len(), Default::default());
        let in_order = commits.windows(2).all(|w| w[0].commit_time >= w[1].commit_time)
            && commits
                .iter()
                .enumerate()
                .all(|(pos, row)| position.insert(row.id, pos).is_none());
        let (rows, parsed, input_index): (Vec<&CommitRow>, Vec<Parsed>, _) = if in_order {
            (commits.iter().collect(), parsed, None)
        } else {
            let mut seen = gix::hashtable::HashSet::with_capacity_and_hasher(commits.len(), Default::default());
            let mut order: Vec<usize> = (0..commits.len()).filter(|&i| seen.insert(commits[i].id)).collect();
            order.sort_by(|&a, &b| commits[b].commit_time.cmp(&commits[a].commit_time).then(a.cmp(&b)));
            let mut slots: Vec<Option<Parsed>> = parsed.into_iter().map(Some).collect();
            let parsed = order
                .iter()
                .map(|&i| slots[i].take().expect("each commit once"))
                .collect();
            let rows: Vec<&CommitRow> = order.iter().map(|&i| &commits[i]).collect();
            position.clear();
            position.extend(rows.iter().enumerate().map(|(pos, row)| (row.id, pos)));
            (rows, parsed, Some(order))
        };
        summary.duplicate_commits = (commits.len() - rows.len()) as u64;
        // The three lookups are independent: built at once (git.git: 82k commits each).
        let ((by_id, (by_subject, older_same_subject)), landing) = rayon::join(
            || {
                rayon::join(
                    || {
                        let mut by_id: Vec<(ObjectId, usize)> =
                            rows.iter().enumerate().map(|(pos, row)| (row.id, pos)).collect();
                        by_id.sort_unstable();
                        by_id
                    },
                    || {
                        let mut by_subject: foldhash::HashMap<&str, usize> =
                            foldhash::HashMap::with_capacity_and_hasher(rows.len(), Default::default());
                        let mut older = vec![NO_POSITION; rows.len()];
                        // Oldest first: each insert replaces the next older position with the subject.
                        for (pos, row) in rows.iter().enumerate().rev() {
                            if let Some(next) = by_subject.insert(row.subject.trim(), pos) {
                                older[pos] = next;
                            }
                        }
                        (by_subject, older)
                    },
                )
            },
            || landings(&rows, &position),
        );
        summary.commits = rows.len() as u64;
        summary.merges = parsed.iter().filter(|p| p.merge).count() as u64;
        Self {
            matchers,
            rows,
            parsed,
            position,
            by_id,
            by_subject,
            older_same_subject,
            landing,
            input_index,
        }
    }

    /// Whether `candidate` reached the main line in the same merge as `remedy`, both from the merged side
    /// branch, and was committed at most `hours` before it: an earlier commit of the fix's own pull request,
    /// polished before anyone used it. (A topic fixed days later, as git.git's are while they cook in `next`,
    /// was in use: its defect counts.) `hours` 0 turns the rule off.
    fn same_branch(&self, remedy: usize, candidate: usize, hours: u32) -> bool {
        let landing = self.landing[remedy];
        hours > 0
            && landing != remedy
            && landing != NO_LANDING
            && self.landing[candidate] == landing
            && self.rows[remedy]
                .commit_time
                .saturating_sub(self.rows[candidate].commit_time)
                <= i64::from(hours) * 3600
    }

    fn resolve(&self, sha: &str) -> Resolved {
        // The ids whose hex starts with `sha` lie between `sha` padded with 0s and `sha` padded with fs.
        let Some(&(first, _)) = self.by_id.first() else {
            return Resolved::Outside;
        };
        let width = first.kind().len_in_hex();
        let lowercase_hex = sha.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !lowercase_hex || sha.len() > width {
            return Resolved::Outside;
        }
        let bound = |fill: char| {
            let padded: String = sha
                .chars()
                .chain(std::iter::repeat_n(fill, width - sha.len()))
                .collect();
            ObjectId::from_hex(padded.as_bytes()).ok()
        };
        let (Some(low), Some(high)) = (bound('0'), bound('f')) else {
            return Resolved::Outside;
        };
        let start = self.by_id.partition_point(|(id, _)| *id < low);
        let mut matches = self.by_id[start..].iter().take_while(|(id, _)| *id <= high);
        match (matches.next(), matches.next()) {
            (Some(&(_, pos)), None) => Resolved::Found(pos),
            (None, _) => Resolved::Outside,
            (Some(_), Some(_)) => Resolved::Ambiguous,
        }
    }

    /// The most recent commit older than `pos` with exactly this (trimmed) subject.
    fn earlier_with_subject(&self, pos: usize, subject: &str) -> Option<usize> {
        let mut at = *self.by_subject.get(subject.trim())?;
        // The chain's positions ascend (newer to older) and end at NO_POSITION, above every position.
        while at <= pos {
            at = self.older_same_subject[at];
        }
        (at != NO_POSITION).then_some(at)
    }
}

/// No position: the end of [`History::older_same_subject`]'s chains.
const NO_POSITION: usize = usize::MAX;

/// [`History::landing`] of a commit whose way to the main line is unknown.
const NO_LANDING: usize = usize::MAX;

/// For every position, the main-line commit through which it reached the main line: itself for a commit on the
/// first-parent chain of a tip (a walked commit that is no walked commit's parent), else the oldest main-line
/// merge from whose side parents it is reachable. Computed oldest merge first, so a commit goes to the merge that
/// first brought it in. `rows` newest first; `position` maps ids to positions.
fn landings(rows: &[&CommitRow], position: &gix::hashtable::HashMap<ObjectId, usize>) -> Vec<usize> {
    let mut landing = vec![NO_LANDING; rows.len()];
    let mut is_parent = vec![false; rows.len()];
    for row in rows {
        for parent in &row.parents {
            if let Some(&pos) = position.get(parent) {
                is_parent[pos] = true;
            }
        }
    }
    let mut main_line: Vec<usize> = Vec::new();
    for tip in (0..rows.len()).filter(|&pos| !is_parent[pos]) {
        let mut next = Some(tip);
        while let Some(pos) = next.filter(|&pos| landing[pos] == NO_LANDING) {
            landing[pos] = pos;
            main_line.push(pos);
            next = rows[pos].parents.first().and_then(|id| position.get(id).copied());
        }
    }
    // Oldest first: the largest position is the oldest commit.
    main_line.sort_unstable_by(|a, b| b.cmp(a));
    let mut stack: Vec<usize> = Vec::new();
    for &merge in &main_line {
        stack.extend(
            rows[merge]
                .parents
                .iter()
                .skip(1)
                .filter_map(|id| position.get(id).copied()),
        );
        while let Some(pos) = stack.pop() {
            if landing[pos] != NO_LANDING {
                continue;
            }
            landing[pos] = merge;
            stack.extend(rows[pos].parents.iter().filter_map(|id| position.get(id).copied()));
        }
    }
    landing
}

/// Detects, links and classifies every failure in `commits` (the walked history, any order; the scanner gives
/// newest first) under `spec`, asking `diffs` for the diffs it needs in at most [`MAX_DIFF_BATCHES`] calls. The
/// callback may return the diffs in any order and leave some out (they are counted as missing); ids it was not
/// asked for are ignored. Its error is returned as is.
///
/// Once every message is parsed, the bodies and trailers of the commits that are not reverts are emptied: only a
/// revert's stated reason is read again, and on a long history (git.git: 82 thousand commits) the messages are a
/// quarter of the heap at the peak, which comes later, during the diffs. Subjects and everything else stay.
pub fn analyze<E>(
    commits: &mut [CommitRow],
    spec: &P2Spec,
    memo: &mut MessageMemo<'_>,
    diffs: &mut DiffSource<'_, E>,
) -> Result<P2Analysis, E> {
    let mut summary = HistorySummary::default();
    let matchers = Matchers::new(spec);
    // Message parsing (the pattern matching) is most of the analysis's own time on a long history: a commit the
    // memo remembers is not parsed again.
    let remembered = memo.remembered;
    let slots = std::mem::take(&mut memo.slots);
    let slot = |i: usize| {
        slots
            .get(i)
            .copied()
            .filter(|&slot| slot != crate::scan::git::NOT_REMEMBERED)
    };
    let parsed: Vec<Parsed> = commits
        .par_iter()
        .enumerate()
        .map(|(i, row)| match remembered.and_then(|cache| cache.facts_at(slot(i)?)) {
            Some(facts) => facts.0.clone(),
            None => Parsed::new(row, spec, &matchers),
        })
        .collect();
    for (row, parsed) in commits.iter_mut().zip(&parsed) {
        if !parsed.is_revert() {
            row.body = String::new();
            row.trailers = Vec::new();
        }
    }
    crate::timing::mark("  messages parsed");
    let mut history = History::new(commits, parsed, matchers, &mut summary);
    crate::timing::mark("  history indexed");
    let (mut pending, fixes) = detect(&history, &mut summary);
    let window = i64::from(spec.fix_after_change.window_days).saturating_mul(86_400);
    crate::timing::mark("  remedies detected");

    // What the linker reads: the fixes, and for the self-check the trailer and citation remedies whose named change
    // lies inside the window (linked blind, as if they named none).
    let in_window = |remedy: usize, failing: usize| {
        failing > remedy
            && history.rows[remedy]
                .commit_time
                .saturating_sub(history.rows[failing].commit_time)
                <= window
    };
    // A remedy may name several commits (agents' messages cite many): the blind link is right when it is one of them.
    let mut checked: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for p in pending
        .iter()
        .filter(|p| matches!(p.kind, FailureKind::FixesTrailer | FailureKind::Citation))
    {
        if let Some(failing) = p.failing.filter(|&failing| in_window(p.remedy, failing)) {
            checked.entry(p.remedy).or_default().insert(failing);
        }
    }
    // A named merge (a pull request landed by a merge commit) is never a candidate: the blind link is right when it
    // names one of the commits that merge brought to the main line.
    let merges: BTreeSet<usize> = checked
        .values()
        .flatten()
        .copied()
        .filter(|&pos| history.parsed[pos].merge)
        .collect();
    if !merges.is_empty() {
        let mut brought: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (pos, landing) in history.landing.iter().enumerate() {
            if *landing != pos && merges.contains(landing) {
                brought.entry(*landing).or_default().push(pos);
            }
        }
        for named in checked.values_mut() {
            let extra: Vec<usize> = named
                .iter()
                .filter_map(|merge| brought.get(merge))
                .flatten()
                .copied()
                .collect();
            named.extend(extra);
        }
    }
    let linkable: Vec<usize> = fixes.iter().copied().chain(checked.keys().copied()).collect();
    // The link memo ([`memo`]): a fix or failing change that a SHA-named failure also names is linked afresh.
    let links = memo.links;
    let named_by_sha: BTreeSet<usize> = if links.is_some() {
        pending
            .iter()
            .flat_map(|p| std::iter::once(p.remedy).chain(p.failing))
            .collect()
    } else {
        BTreeSet::new()
    };

    // Batch 1 (paths): the linkable remedies, reverts and their reverted changes.
    let mut got = Diffs::new(&history);
    // Positions whose diff was asked for and not returned (a missing object).
    let mut unread: Vec<usize> = Vec::new();
    let reverts = pending
        .iter()
        .filter(|p| p.kind == FailureKind::Revert)
        .flat_map(|p| std::iter::once(p.remedy).chain(p.failing));
    let paths_wanted: BTreeSet<usize> = linkable.iter().copied().chain(reverts).collect();
    let whole = requests(&history, paths_wanted.into_iter().map(|pos| (pos, None)));
    fetch(
        &history,
        whole,
        DiffDetail::Paths,
        diffs,
        &mut got,
        &mut summary,
        &mut unread,
    )?;
    crate::timing::mark("  batch 1 (paths of remedies)");
    // Each remedy's window: its candidates, whether it was cut at `max_candidates`, and the commits in it passed
    // through as mass changes by subject (by file count below).
    let scanned: Vec<(Vec<usize>, bool, Vec<usize>)> = linkable
        .par_iter()
        .map(|&remedy| {
            let time = history.rows[remedy].commit_time;
            let mut mass = Vec::new();
            let mut in_window = (remedy + 1..history.rows.len())
                .take_while(|&pos| time.saturating_sub(history.rows[pos].commit_time) <= window)
                .filter(|&pos| {
                    let candidate = history.parsed[pos].is_candidate_change();
                    if !candidate && !history.parsed[pos].merge {
                        mass.push(pos);
                    }
                    candidate
                });
            let chosen: Vec<usize> = in_window.by_ref().take(spec.fix_after_change.max_candidates).collect();
            let truncated = in_window.next().is_some();
            (chosen, truncated, mass)
        })
        .collect();
    let mut windows: Vec<Vec<usize>> = Vec::with_capacity(linkable.len());
    // Distinct commits passed through as mass changes (by subject here, by file count below).
    let mut mass_by_subject: BTreeSet<usize> = BTreeSet::new();
    for (chosen, truncated, mass) in scanned {
        summary.fix_windows_truncated += u64::from(truncated);
        mass_by_subject.extend(mass);
        windows.push(chosen);
    }
    // Each fix's window stamp (with a link cache), and the link an earlier run concluded from the same window.
    let stamps: Vec<Option<u128>> = linkable
        .par_iter()
        .zip(&windows)
        .map(|(&remedy, window)| {
            (links.is_some() && !checked.contains_key(&remedy)).then(|| memo::window_stamp(&history, remedy, window))
        })
        .collect();
    let reused: Vec<Option<Reused<'_>>> = linkable
        .iter()
        .zip(&stamps)
        .map(|(&remedy, &stamp)| {
            Reused::of(
                links?.get(&history.rows[remedy].id)?,
                stamp?,
                remedy,
                &history,
                &named_by_sha,
            )
        })
        .collect();
    let reusing = reused.iter().any(Option::is_some);

    // Batch 2 (paths, restricted): which candidates touched a (not ignored) file of a remedy whose window holds
    // them. Only a shared file can carry evidence. A task or data file (`.beads/issues.jsonl`, megabytes, touched by
    // most commits of an agent's repository) never does.
    let ignore = &history.matchers.ignore_paths;
    let remedy_paths: Vec<BTreeSet<&str>> = linkable
        .iter()
        .map(|&pos| {
            got.get(pos).map_or_else(BTreeSet::new, |diff| {
                diff.files
                    .iter()
                    .map(|file| file.path.as_str())
                    .filter(|path| !ignore.matches(path))
                    .collect()
            })
        })
        .collect();
    crate::timing::mark("  windows");
    // With links taken from the memo, only the windows of the fixes linked afresh are read. The requests are those
    // a full run makes (a candidate's paths are those of every fix whose window holds it), and so are the counts.
    let mut in_fresh_window = vec![!reusing; history.rows.len()];
    if reusing {
        for (window, reused) in windows.iter().zip(&reused) {
            if reused.is_none() {
                for &pos in window {
                    in_fresh_window[pos] = true;
                }
            }
        }
    }
    let (restricted, candidates) =
        restricted_requests(&history, &windows, &remedy_paths, reusing.then_some(&in_fresh_window));
    let mut touched = Diffs::new(&history);
    crate::timing::mark("  restricted requests");
    fetch_counting(
        &history,
        restricted.clone(),
        candidates.len(),
        DiffDetail::Paths,
        diffs,
        &mut touched,
        &mut summary,
        &mut unread,
    )?;
    crate::timing::mark("  batch 2 (paths of candidates)");
    let touches = |pos: usize, paths: &BTreeSet<&str>| {
        touched
            .get(pos)
            .is_some_and(|diff| diff.files.iter().any(|file| paths.contains(file.path.as_str())))
    };

    // Batch 3 (lines): the lines of the remedies' files that can be evidence, for the remedies with a candidate
    // touching one of them. Without one, neither the lines nor the weak fallback can name a failing change: the fix
    // is unattributed whatever it removes, and its lines are not read (most fixes of a long history: on vite 2 of 3).
    let lined: Vec<usize> = linkable
        .iter()
        .zip(&windows)
        .zip(&remedy_paths)
        .zip(&reused)
        .filter(|(((_, window), paths), reused)| {
            reused.is_none() && !paths.is_empty() && window.iter().any(|&pos| touches(pos, paths))
        })
        .map(|(((&pos, _), _), _)| pos)
        .collect();
    let lined_reused = reused.iter().flatten().filter(|reused| reused.entry.lined).count();
    // What the memo keeps of a fix linked afresh: the window's candidates touching its files.
    let touching_of: Vec<Vec<usize>> = if links.is_some() {
        linkable
            .iter()
            .zip(&windows)
            .zip(&remedy_paths)
            .zip(&stamps)
            .zip(&reused)
            .map(|((((_, window), paths), stamp), reused)| {
                if stamp.is_none() || reused.is_some() {
                    return Vec::new();
                }
                window.iter().copied().filter(|&pos| touches(pos, paths)).collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    let scoped = lined.iter().filter_map(|&pos| {
        let files = got.get(pos)?;
        let evidence: BTreeSet<String> = files
            .files
            .iter()
            .map(|file| file.path.clone())
            .filter(|path| !ignore.matches(path))
            .collect();
        (!evidence.is_empty()).then_some((pos, Some(evidence)))
    });
    let lines = requests(&history, scoped.collect::<Vec<_>>());
    let mut remedy_lines = Diffs::new(&history);
    let counted = lines.requests.len() + lined_reused;
    fetch_counting(
        &history,
        lines,
        counted,
        DiffDetail::Lines,
        diffs,
        &mut remedy_lines,
        &mut summary,
        &mut unread,
    )?;
    crate::timing::mark("  batch 3 (lines of remedies)");
    // Each linkable remedy's evidence: the lines it removes or rewrites, per file (none read: none). The lines join
    // the remedies' whole paths in `got` once the paths borrowed from there are no longer needed (below).
    let evidence: Vec<link::Removed> = linkable
        .par_iter()
        .map(|&pos| {
            remedy_lines
                .get(pos)
                .map_or_else(link::Removed::default, |diff| link::Removed::of(diff, ignore))
        })
        .collect();

    // Batch 4 (lines, restricted): the lines the touching candidates added to those shared files (the requests of
    // batch 2, shared).
    let touching = |pos: usize| touched.get(pos).is_some_and(|diff| !diff.files.is_empty());
    // A candidate only in windows whose links come from the memo touches a fix's file when the memo says so.
    let mut touching_reused = vec![false; if reusing { history.rows.len() } else { 0 }];
    for reused in reused.iter().flatten() {
        for &pos in &reused.touching {
            touching_reused[pos] = true;
        }
    }
    let counted = candidates
        .iter()
        .filter(|&&pos| {
            if in_fresh_window[pos] {
                touching(pos)
            } else {
                touching_reused[pos]
            }
        })
        .count();
    let unasked: Vec<ObjectId> = if reusing {
        candidates
            .iter()
            .filter(|&&pos| !in_fresh_window[pos])
            .map(|&pos| history.rows[pos].id)
            .collect()
    } else {
        Vec::new()
    };
    let asked: Asked = restricted
        .positions
        .into_iter()
        .zip(restricted.requests)
        .filter(|&(pos, _)| touching(pos))
        .map(|(pos, mut request)| {
            request.line_paths = request.only_paths.clone();
            (pos, request)
        })
        .collect();
    let mut added = Diffs::new(&history);
    fetch_counting(
        &history,
        asked,
        counted,
        DiffDetail::Lines,
        diffs,
        &mut added,
        &mut summary,
        &mut unread,
    )?;
    crate::timing::mark("  batch 4 (lines of candidates)");

    // Blame each remedy's removed lines through its window, then pass through the mass changes by file count: the
    // whole paths of every candidate that won a line (batch 5) tell which touched more than the limit.
    let first: Vec<link::Blame> = linkable
        .iter()
        .zip(&evidence)
        .zip(&windows)
        .map(|((_, removed), window)| link::blame(removed, window, &added, &BTreeSet::new()))
        .collect();
    let mut whole_wanted: BTreeSet<usize> = first
        .iter()
        .flat_map(|blame| blame.tally.iter().map(|&(c, _)| c))
        .collect();
    // The weak fallback of a remedy without evidence: the most recent candidate touching a shared file.
    let fallback: Vec<Option<usize>> = windows
        .iter()
        .zip(&evidence)
        .zip(&remedy_paths)
        .zip(&reused)
        .map(|(((window, removed), paths), reused)| {
            if reused.is_some() {
                return None;
            }
            removed
                .is_empty()
                .then(|| window.iter().copied().find(|&pos| touches(pos, paths)))
                .flatten()
        })
        .collect();
    whole_wanted.extend(fallback.iter().flatten());
    for reused in reused.iter().flatten() {
        whole_wanted.extend(reused.winners.iter().copied().chain(reused.fallback));
    }
    let winners_of: Vec<Vec<usize>> = if links.is_some() {
        first
            .iter()
            .map(|blame| blame.tally.iter().map(|&(c, _)| c).collect())
            .collect()
    } else {
        Vec::new()
    };
    drop(remedy_paths);
    for (pos, slot) in remedy_lines.0.into_iter().enumerate() {
        if let Some(diff) = slot {
            got.0[pos] = Some(merge_lines(got.0[pos].take(), diff));
        }
    }
    for p in &pending {
        whole_wanted.extend(p.failing);
    }
    let whole_wanted: Vec<usize> = whole_wanted.into_iter().filter(|&pos| !got.contains(pos)).collect();
    let whole = requests(&history, whole_wanted.into_iter().map(|pos| (pos, None)));
    fetch(
        &history,
        whole,
        DiffDetail::Paths,
        diffs,
        &mut got,
        &mut summary,
        &mut unread,
    )?;
    crate::timing::mark("  batch 5 (paths of winners)");
    let mass: BTreeSet<usize> = got
        .0
        .iter()
        .enumerate()
        .filter_map(|(pos, diff)| diff.as_ref().map(|diff| (pos, diff)))
        .filter(|(_, diff)| {
            // Counted only as far as the limit: a release touching thousands of files is not matched path by path.
            let limit = spec.link.mass_change_files;
            diff.files.len() > limit
                && diff
                    .files
                    .iter()
                    .filter(|file| !ignore.matches(&file.path))
                    .nth(limit)
                    .is_some()
        })
        .map(|(pos, _)| pos)
        .collect();
    summary.mass_changes = mass_by_subject.union(&mass).count() as u64;
    let blamed_again: Vec<bool> = first
        .iter()
        .map(|first| first.tally.iter().any(|(c, _)| mass.contains(c)))
        .collect();
    let blames: Vec<link::Blame> = linkable
        .iter()
        .zip(&evidence)
        .zip(&windows)
        .zip(first)
        .map(|(((_, removed), window), first)| {
            if first.tally.iter().any(|(c, _)| mass.contains(c)) {
                link::blame(removed, window, &added, &mass)
            } else {
                first
            }
        })
        .collect();

    crate::timing::mark("  blamed");
    // The links of the fixes, and the self-check of the named ones.
    let mut self_check = SelfCheck::default();
    for (index, &remedy) in linkable.iter().enumerate() {
        let blame = &blames[index];
        let top = blame.top();
        if let Some(named) = checked.get(&remedy) {
            let blind = top
                .map(|(c, _)| c)
                .filter(|&c| !history.same_branch(remedy, c, spec.link.same_branch_hours));
            self_check.add(blind, named);
            continue;
        }
        if let Some(reused) = &reused[index] {
            let entry = reused.entry;
            match entry.link {
                LinkRule::FixDependencyBump => summary.dependency_bumps += 1,
                LinkRule::FixSameBranch => summary.same_branch_fixes += 1,
                LinkRule::FixLines | LinkRule::FixAdjacent => summary.fixes_linked += 1,
                LinkRule::FixFiles => summary.fixes_linked_on_files += 1,
                _ => summary.unattributed_fixes += 1,
            }
            pending.push(Pending {
                remedy,
                failing: reused.failing,
                failing_ref: None,
                kind: FailureKind::FixAfterChange,
                link: entry.link,
                evidence: entry.evidence,
                evidence_lines: entry.evidence_lines,
            });
            continue;
        }
        let weak = fallback[index].filter(|pos| !mass.contains(pos));
        // A fix of its own branch's work (the lines it rewrites came from a commit merged with it): the defect never
        // landed on the main line on its own; no failing change is named, and no weaker link is tried.
        let hours = spec.link.same_branch_hours;
        let own_branch = top.is_some_and(|(candidate, _)| history.same_branch(remedy, candidate, hours));
        let weak = weak.filter(|&pos| !history.same_branch(remedy, pos, hours));
        let bump = got.get(remedy).is_some_and(|diff| {
            let mut files = diff.files.iter().filter(|file| !ignore.matches(&file.path)).peekable();
            files.peek().is_some() && files.all(|file| history.matchers.dependency_manifests.matches(&file.path))
        });
        if bump {
            summary.dependency_bumps += 1;
            pending.push(Pending {
                remedy,
                failing: None,
                failing_ref: None,
                kind: FailureKind::FixAfterChange,
                link: LinkRule::FixDependencyBump,
                evidence: Evidence::None,
                evidence_lines: None,
            });
            continue;
        }
        if own_branch {
            summary.same_branch_fixes += 1;
            pending.push(Pending {
                remedy,
                failing: None,
                failing_ref: None,
                kind: FailureKind::FixAfterChange,
                link: LinkRule::FixSameBranch,
                evidence: Evidence::None,
                evidence_lines: None,
            });
            continue;
        }
        let (failing, link, evidence_kind, lines) = match (top, weak) {
            (Some((candidate, count)), _) if blame.adjacent => {
                (Some(candidate), LinkRule::FixAdjacent, Evidence::Adjacent, Some(count))
            }
            (Some((candidate, count)), _) => (Some(candidate), LinkRule::FixLines, Evidence::Lines, Some(count)),
            (None, Some(candidate)) => (Some(candidate), LinkRule::FixFiles, Evidence::Files, None),
            (None, None) => (None, LinkRule::FixUnattributed, Evidence::None, None),
        };
        match evidence_kind {
            Evidence::Lines | Evidence::Adjacent => summary.fixes_linked += 1,
            Evidence::Files => summary.fixes_linked_on_files += 1,
            _ => summary.unattributed_fixes += 1,
        }
        pending.push(Pending {
            remedy,
            failing,
            failing_ref: None,
            kind: FailureKind::FixAfterChange,
            link,
            evidence: evidence_kind,
            evidence_lines: lines,
        });
    }
    self_check.finish(stats::z_two_sided(spec.alpha).unwrap_or(f64::NAN));

    // A linked candidate's whole paths (batch 5) with the lines it added to its fixes' files (batch 4): all that
    // classification reads of it.
    for p in pending.iter().filter(|p| p.kind == FailureKind::FixAfterChange) {
        if let Some(pos) = p.failing
            && let Some(lines) = added.0[pos].take()
        {
            got.0[pos] = Some(merge_lines(got.0[pos].take(), lines));
        }
    }

    // Batch 6 (lines): what classification still needs for the SHA-named failures. A remedy needs the lines of all
    // its files (unless batch 3 read them); a failing change only those of its remedies' files.
    let with_lines: BTreeSet<usize> = lined.iter().copied().collect();
    let mut lines_wanted: BTreeMap<usize, LineScope> = BTreeMap::new();
    for p in pending
        .iter()
        .filter(|p| !matches!(p.kind, FailureKind::Revert | FailureKind::FixAfterChange))
    {
        let remedy = got.get(p.remedy);
        if !classify::needs_line_hashes(p, &history, remedy, p.failing.and_then(|pos| got.get(pos)), spec) {
            continue;
        }
        if !with_lines.contains(&p.remedy) {
            lines_wanted.insert(p.remedy, None);
        }
        if let Some(failing) = p.failing {
            // `None` (every file) wins: the commit is also a remedy, or a remedy's paths are unknown.
            let scope = lines_wanted.entry(failing).or_insert_with(|| Some(BTreeSet::new()));
            match (scope, remedy) {
                (Some(paths), Some(remedy)) => paths.extend(remedy.files.iter().map(|file| file.path.clone())),
                (scope, _) => *scope = None,
            }
        }
    }
    let lines = requests(&history, lines_wanted);
    let mut classify_lines = Diffs::new(&history);
    fetch(
        &history,
        lines,
        DiffDetail::Lines,
        diffs,
        &mut classify_lines,
        &mut summary,
        &mut unread,
    )?;
    for (pos, slot) in classify_lines.0.into_iter().enumerate() {
        if let Some(diff) = slot {
            got.0[pos] = Some(merge_lines(got.0[pos].take(), diff));
        }
    }

    crate::timing::mark("  linked, batch 6 (lines to classify)");
    pending.sort_by_key(|p| p.remedy);
    let reused_rules: HashMap<usize, ClassRule> = linkable
        .iter()
        .zip(&reused)
        .filter_map(|(&remedy, reused)| Some((remedy, reused.as_ref()?.entry.rule)))
        .collect();
    let failures: Vec<Failure> = pending
        .par_iter()
        .map(|p| match reused_rules.get(&p.remedy) {
            Some(&rule) if p.kind == FailureKind::FixAfterChange => {
                classify::failure_with_rule(p, &history, &got, rule, spec)
            }
            _ => classify::failure(p, &history, &got, spec),
        })
        .collect();
    if links.is_some() {
        let lined: BTreeSet<usize> = lined.iter().copied().collect();
        let linked: HashMap<usize, (&Pending, ClassRule)> = pending
            .iter()
            .zip(&failures)
            .filter(|(p, _)| p.kind == FailureKind::FixAfterChange)
            .map(|(p, failure)| (p.remedy, (p, failure.rule)))
            .collect();
        let id = |pos: usize| history.rows[pos].id;
        let mut now = LinkedNow {
            unasked,
            ..LinkedNow::default()
        };
        let unread: BTreeSet<usize> = unread.into_iter().collect();
        for (index, &remedy) in linkable.iter().enumerate() {
            let Some(stamp) = stamps[index] else { continue };
            now.fixes += 1;
            if let Some(reused) = &reused[index] {
                now.reused += 1;
                now.links.push((id(remedy), reused.entry.clone(), false));
                continue;
            }
            let Some(&(p, rule)) = linked.get(&remedy) else {
                continue;
            };
            // Not remembered: what depends on other fixes or on the SHA-named failures, and a window with a commit
            // whose diff could not be read (a run that takes the link from the memo would not ask for it, and the
            // report would not count it).
            let involved = || {
                std::iter::once(remedy)
                    .chain(windows[index].iter().copied())
                    .chain(winners_of[index].iter().copied())
                    .chain(fallback[index])
            };
            if blamed_again[index]
                || named_by_sha.contains(&remedy)
                || p.failing.is_some_and(|failing| named_by_sha.contains(&failing))
                || (!unread.is_empty() && involved().any(|pos| unread.contains(&pos)))
            {
                continue;
            }
            let entry = LinkMemo {
                stamp,
                link: p.link,
                failing: p.failing.map(id),
                evidence: p.evidence,
                evidence_lines: p.evidence_lines,
                rule,
                winners: winners_of[index].iter().copied().map(id).collect(),
                fallback: fallback[index].map(id),
                touching: touching_of[index].iter().copied().map(id).collect(),
                lined: lined.contains(&remedy),
            };
            now.links.push((id(remedy), entry, true));
        }
        memo.linked = now;
    }
    // Freeing the diffs (on git.git thousands of commits with their paths and line hashes) takes a while: beside
    // the aggregation and the rendering.
    crate::timing::mark("  classified");
    let _ = std::thread::Builder::new().spawn(move || drop((got, touched, added)));
    // The facts of the messages parsed anew, for the cache's next save: moved out at the end rather than copied at
    // the start (on git.git's first cached run, 82k of them, kept twice through the whole analysis otherwise).
    // A commit the walk did not take from the cache is one the cache does not hold.
    if remembered.is_some() {
        let parsed = std::mem::take(&mut history.parsed);
        for (pos, (row, parsed)) in history.rows.iter().zip(parsed).enumerate() {
            let input = history.input_index.as_ref().map_or(pos, |index| index[pos]);
            if slot(input).is_none() {
                memo.learned.insert(row.id, MessageFacts(parsed));
            }
        }
    }
    Ok(aggregate(failures, summary, self_check, spec))
}

/// A fix's link taken from the memo, its commits found in this run's history.
struct Reused<'m> {
    entry: &'m LinkMemo,
    failing: Option<usize>,
    winners: Vec<usize>,
    fallback: Option<usize>,
    touching: Vec<usize>,
}

impl<'m> Reused<'m> {
    /// `entry` when it was concluded from the window `stamp` describes and nothing a SHA-named failure names is in
    /// it ([`memo`]).
    fn of(
        entry: &'m LinkMemo,
        stamp: u128,
        remedy: usize,
        history: &History<'_>,
        named_by_sha: &BTreeSet<usize>,
    ) -> Option<Self> {
        if entry.stamp != stamp || named_by_sha.contains(&remedy) {
            return None;
        }
        let position = |id: &ObjectId| history.position.get(id).copied();
        let failing = match &entry.failing {
            Some(id) => Some(position(id).filter(|pos| !named_by_sha.contains(pos))?),
            None => None,
        };
        let fallback = match &entry.fallback {
            Some(id) => Some(position(id)?),
            None => None,
        };
        Some(Self {
            entry,
            failing,
            winners: entry.winners.iter().map(position).collect::<Option<_>>()?,
            fallback,
            touching: entry.touching.iter().map(position).collect::<Option<_>>()?,
        })
    }
}

/// A whole path-only diff with the line detail of another diff of the same commit filled in where it has it.
fn merge_lines(paths: Option<CommitDiff>, lines: CommitDiff) -> CommitDiff {
    let Some(mut paths) = paths else { return lines };
    let by_path: BTreeMap<&str, &FileDiff> = lines.files.iter().map(|file| (file.path.as_str(), file)).collect();
    for file in &mut paths.files {
        if let Some(detail) = by_path.get(file.path.as_str()) {
            *file = (*detail).clone();
        }
    }
    paths
}

/// For every candidate that lies in a window of `windows` (and is `wanted`, when given): a request restricted to the
/// paths of the remedies whose window holds it (one shared set per run of neighbouring candidates with the same
/// remedies, on git.git thousands of sets for tens of thousands of candidates), in the order of the candidates'
/// positions; and the positions of every candidate, wanted or not.
fn restricted_requests(
    history: &History<'_>,
    windows: &[Vec<usize>],
    remedy_paths: &[BTreeSet<&str>],
    wanted: Option<&[bool]>,
) -> (Asked, Vec<usize>) {
    // The remedies covering each candidate, grouped by candidate position with a counting sort (on git.git hundreds
    // of thousands of (candidate, remedy) pairs over 82k positions): each group lists its remedies in index order,
    // as the windows are visited in that order.
    let covering = || {
        windows
            .iter()
            .zip(remedy_paths)
            .enumerate()
            .filter(|(_, (_, paths))| !paths.is_empty())
            .flat_map(|(index, (window, _))| window.iter().map(move |&candidate| (candidate, index)))
    };
    let mut start = vec![0usize; history.rows.len() + 1];
    for (candidate, _) in covering() {
        start[candidate + 1] += 1;
    }
    for pos in 0..history.rows.len() {
        start[pos + 1] += start[pos];
    }
    let mut remedies_of = vec![0usize; start[history.rows.len()]];
    let mut filled = start.clone();
    for (candidate, index) in covering() {
        remedies_of[filled[candidate]] = index;
        filled[candidate] += 1;
    }
    let groups: Vec<(usize, &[usize])> = (0..history.rows.len())
        .filter(|&pos| start[pos + 1] > start[pos])
        .map(|pos| (pos, &remedies_of[start[pos]..start[pos + 1]]))
        .collect();
    let is_wanted = |pos: usize| wanted.is_none_or(|wanted| wanted[pos]);
    // Runs of neighbouring candidates with the same remedies, and whether one of the run is wanted.
    let mut runs: Vec<(&[usize], bool)> = Vec::new();
    let mut run_of: Vec<usize> = Vec::with_capacity(groups.len());
    for &(pos, remedies) in &groups {
        match runs.last_mut() {
            Some((last, any)) if *last == remedies => *any |= is_wanted(pos),
            _ => runs.push((remedies, is_wanted(pos))),
        }
        run_of.push(runs.len() - 1);
    }
    let unions: Vec<Option<Arc<BTreeSet<String>>>> = runs
        .par_iter()
        .map(|&(remedies, wanted)| {
            // Sorted and deduplicated as borrowed paths first: each distinct path is copied once.
            wanted.then(|| {
                let mut paths: Vec<&str> = remedies
                    .iter()
                    .flat_map(|&index| remedy_paths[index].iter().copied())
                    .collect();
                paths.sort_unstable();
                paths.dedup();
                Arc::new(paths.into_iter().map(str::to_owned).collect())
            })
        })
        .collect();
    let asked = groups
        .iter()
        .zip(&run_of)
        .filter(|((candidate, _), _)| is_wanted(*candidate))
        .map(|((candidate, _), &run)| {
            let paths = unions[run].as_ref().expect("a wanted candidate's run has its paths");
            (
                *candidate,
                DiffRequest::among(history.rows[*candidate].id, Arc::clone(paths)),
            )
        })
        .collect();
    (asked, groups.iter().map(|&(pos, _)| pos).collect())
}

/// The files of a commit whose line detail is wanted: `None` for all.
type LineScope = Option<BTreeSet<String>>;

/// Diffs by walked position. The linking looks candidates up once per (fix, candidate) pair (git.git: 351,938),
/// and a batch files tens of thousands of diffs: a slot per commit makes both direct.
pub(super) struct Diffs(Vec<Option<CommitDiff>>);

impl Diffs {
    fn new(history: &History<'_>) -> Self {
        Diffs(std::iter::repeat_with(|| None).take(history.rows.len()).collect())
    }

    pub(super) fn get(&self, pos: usize) -> Option<&CommitDiff> {
        self.0.get(pos).and_then(Option::as_ref)
    }

    fn contains(&self, pos: usize) -> bool {
        self.get(pos).is_some()
    }
}

/// Asks for the diffs of `requests` (one call, none when empty) and files them by position, replacing a diff
/// filed before (a path-only diff by its line detail).
fn fetch<E>(
    history: &History<'_>,
    asked: Asked,
    detail: DiffDetail,
    diffs: &mut DiffSource<'_, E>,
    got: &mut Diffs,
    summary: &mut HistorySummary,
    unread: &mut Vec<usize>,
) -> Result<(), E> {
    let counted = asked.requests.len();
    fetch_counting(history, asked, counted, detail, diffs, got, summary, unread)
}

/// [`fetch`], counted in the report as a batch of `counted` requests: what a run without the link memo asks for,
/// of which `asked` is the part this run needs. The positions asked for and not returned go to `unread`.
#[allow(clippy::too_many_arguments)]
fn fetch_counting<E>(
    history: &History<'_>,
    asked: Asked,
    counted: usize,
    detail: DiffDetail,
    diffs: &mut DiffSource<'_, E>,
    got: &mut Diffs,
    summary: &mut HistorySummary,
    unread: &mut Vec<usize>,
) -> Result<(), E> {
    if counted > 0 {
        summary.diff_batches += 1;
        summary.diffs_requested += counted as u64;
    }
    let Asked { positions, requests } = asked;
    if requests.is_empty() {
        return Ok(());
    }
    // Per position: 0 not asked for, 1 asked for, 2 returned.
    let mut state = vec![0u8; history.rows.len()];
    let mut wanted = 0u64;
    for &pos in &positions {
        if state[pos] == 0 {
            state[pos] = 1;
            wanted += 1;
        }
    }
    let mut returned = 0u64;
    // The diffs mostly come back in the order asked: each is matched to its request there, and only one that does
    // not follow is looked up by id (on git.git tens of thousands of lookups a batch otherwise).
    let mut next = 0;
    for diff in diffs(&requests, detail)? {
        let pos = match requests.get(next) {
            Some(request) if request.id == diff.id => {
                next += 1;
                Some(positions[next - 1])
            }
            _ => history.position.get(&diff.id).copied(),
        };
        if let Some(pos) = pos
            && state[pos] != 0
        {
            returned += u64::from(state[pos] == 1);
            state[pos] = 2;
            got.0[pos] = Some(diff);
        }
    }
    summary.diffs_missing += wanted - returned;
    if wanted > returned {
        unread.extend(positions.iter().copied().filter(|&pos| state[pos] == 1));
    }
    Ok(())
}

/// Diff requests and, for each, the position of its commit.
#[derive(Clone)]
struct Asked {
    positions: Vec<usize>,
    requests: Vec<DiffRequest>,
}

impl FromIterator<(usize, DiffRequest)> for Asked {
    fn from_iter<I: IntoIterator<Item = (usize, DiffRequest)>>(iter: I) -> Self {
        let (positions, requests) = iter.into_iter().unzip();
        Asked { positions, requests }
    }
}

/// The requests for the diffs of the commits at `positions`, each with its line scope.
fn requests(history: &History<'_>, positions: impl IntoIterator<Item = (usize, LineScope)>) -> Asked {
    positions
        .into_iter()
        .map(|(pos, line_paths)| {
            let request = DiffRequest {
                id: history.rows[pos].id,
                line_paths: line_paths.map(Arc::new),
                only_paths: None,
            };
            (pos, request)
        })
        .collect()
}

/// Detection rules 1 and 2, and the fixes rule 3 must link: failures with their links, and the fixes' positions.
fn detect(history: &History<'_>, summary: &mut HistorySummary) -> (Vec<Pending>, Vec<usize>) {
    let mut pending = Vec::new();
    let mut fixes = Vec::new();
    let landed = PullRequests::of(history);
    for (pos, parsed) in history.parsed.iter().enumerate() {
        let cited = parsed.cited();
        let detected = parsed.is_revert()
            || !cited.fixes_shas.is_empty()
            || !cited.cited_shas.is_empty()
            || !cited.cited_pull_requests.is_empty()
            || parsed.fix;
        if parsed.merge {
            summary.merge_remedies_skipped += u64::from(detected);
            continue;
        }
        summary.fixes_trailers_not_sha += parsed.fixes_not_sha;
        if parsed.is_revert() {
            if !parsed.is_net_revert() {
                summary.reverts_of_reverts_skipped += 1;
                continue;
            }
            let before = pending.len();
            let mut skipped = false;
            if cited.marker_shas.is_empty() {
                let subject = cited.revert.as_ref().map_or("", |form| form.reverted_subject.as_str());
                let failing = history.earlier_with_subject(pos, subject);
                summary.revert_subjects_not_found += u64::from(failing.is_none());
                pending.push(Pending {
                    remedy: pos,
                    failing,
                    failing_ref: None,
                    kind: FailureKind::Revert,
                    link: if failing.is_some() {
                        LinkRule::RevertSubject
                    } else {
                        LinkRule::RevertSubjectNotFound
                    },
                    evidence: if failing.is_some() {
                        Evidence::Subject
                    } else {
                        Evidence::None
                    },
                    evidence_lines: None,
                });
            } else {
                let links = (
                    LinkRule::RevertSha,
                    LinkRule::RevertShaOutsideHistory,
                    LinkRule::RevertShaAmbiguous,
                );
                for (failing, failing_ref, link) in resolve_all(history, pos, &cited.marker_shas, links, summary) {
                    if failing.is_some_and(|target| history.parsed[target].is_net_revert()) {
                        skipped = true;
                        continue;
                    }
                    pending.push(Pending::named(pos, FailureKind::Revert, (failing, failing_ref, link)));
                }
            }
            if pending.len() > before {
                summary.revert_commits += 1;
            } else if skipped {
                summary.reverts_of_reverts_skipped += 1;
            }
        } else if !cited.fixes_shas.is_empty() {
            let links = (
                LinkRule::FixesSha,
                LinkRule::FixesShaOutsideHistory,
                LinkRule::FixesShaAmbiguous,
            );
            let before = pending.len();
            for (failing, failing_ref, link) in resolve_all(history, pos, &cited.fixes_shas, links, summary) {
                pending.push(Pending::named(
                    pos,
                    FailureKind::FixesTrailer,
                    (failing, failing_ref, link),
                ));
            }
            summary.fixes_trailer_commits += u64::from(pending.len() > before);
        } else if !cited.cited_shas.is_empty() || !cited.cited_pull_requests.is_empty() {
            let links = (
                LinkRule::CitationSha,
                LinkRule::CitationShaOutsideHistory,
                LinkRule::CitationShaAmbiguous,
            );
            let before = pending.len();
            let mut named = resolve_all(history, pos, &cited.cited_shas, links, summary);
            // A pull request number resolves only to a commit that landed it: an issue's number, or one that lands
            // nowhere in the walked history, is counted and never a link.
            for &number in &cited.cited_pull_requests {
                match landed.get(number) {
                    Some(target) if target != pos => {
                        if !named.iter().any(|(failing, _, _)| *failing == Some(target)) {
                            named.push((Some(target), None, LinkRule::CitationPullRequest));
                        }
                    }
                    Some(_) => {}
                    None => summary.pull_requests_not_found += 1,
                }
            }
            for (failing, failing_ref, link) in named {
                // A citation of a later commit (a "see also") is no culprit.
                if failing.is_some_and(|target| target < pos) {
                    continue;
                }
                pending.push(Pending::named(pos, FailureKind::Citation, (failing, failing_ref, link)));
            }
            if pending.len() > before {
                summary.citation_commits += 1;
            } else if parsed.fix {
                summary.fix_commits += 1;
                fixes.push(pos);
            }
        } else if parsed.fix {
            summary.fix_commits += 1;
            fixes.push(pos);
        }
    }
    (pending, fixes)
}

type Link = (Option<usize>, Option<String>, LinkRule);

/// The walked commits that landed each pull request, by number (see [`text::landed_pull_request`]); built only when
/// some commit cites one.
struct PullRequests(HashMap<u64, Vec<usize>>);

impl PullRequests {
    fn of(history: &History<'_>) -> Self {
        let mut landed: HashMap<u64, Vec<usize>> = HashMap::new();
        if history
            .parsed
            .iter()
            .any(|parsed| !parsed.cited().cited_pull_requests.is_empty())
        {
            for (pos, row) in history.rows.iter().enumerate() {
                if let Some(number) = text::landed_pull_request(&row.subject) {
                    landed.entry(number).or_default().push(pos);
                }
            }
        }
        Self(landed)
    }

    /// The one walked commit that landed pull request `number`.
    fn get(&self, number: u64) -> Option<usize> {
        match self.0.get(&number).map(Vec::as_slice) {
            Some(&[pos]) => Some(pos),
            _ => None,
        }
    }
}

/// Resolves the SHAs a remedy at `pos` names: one link per distinct walked commit (never itself), one per
/// unresolved SHA. `links` = (found, outside the history, ambiguous).
fn resolve_all(
    history: &History<'_>,
    pos: usize,
    shas: &[String],
    (found, outside, ambiguous): (LinkRule, LinkRule, LinkRule),
    summary: &mut HistorySummary,
) -> Vec<Link> {
    let mut seen = BTreeSet::new();
    let mut links = Vec::new();
    for sha in shas {
        match history.resolve(sha) {
            Resolved::Found(target) => {
                if target != pos && seen.insert(target) {
                    links.push((Some(target), None, found));
                }
            }
            Resolved::Outside => {
                summary.shas_outside_history += 1;
                links.push((None, Some(sha.clone()), outside));
            }
            Resolved::Ambiguous => {
                summary.shas_ambiguous += 1;
                links.push((None, Some(sha.clone()), ambiguous));
            }
        }
    }
    links
}

/// Counts, shares, sensitivity, verdict, breakdowns and samples of the classified failures.
fn aggregate(failures: Vec<Failure>, history: HistorySummary, self_check: SelfCheck, spec: &P2Spec) -> P2Analysis {
    let z = stats::z_two_sided(spec.alpha).unwrap_or(f64::NAN);
    let counts = Buckets::of(&failures);
    let shares = Shares::of(&counts, z);
    let verdict = decide(counts.self_reflection, counts.classified, spec);
    let scenario = |self_reflection: u64, n: u64| Scenario {
        self_reflection,
        n,
        share: wilson(self_reflection, n, z),
        verdict: decide(self_reflection, n, spec).kind,
    };
    let excluded = scenario(counts.self_reflection, counts.classified);
    let all_self_reflection = scenario(counts.self_reflection + counts.ambiguous, counts.total);
    let none_self_reflection = scenario(counts.self_reflection, counts.total);
    let sensitivity = Sensitivity {
        ambiguous: counts.ambiguous,
        robust: excluded.verdict == all_self_reflection.verdict && excluded.verdict == none_self_reflection.verdict,
        excluded,
        all_self_reflection,
        none_self_reflection,
    };

    // Most risky surface first, then `unknown` (no diff); kinds in their pre-registered order.
    let surface_order: Vec<&str> = Surface::ALL.iter().map(|s| s.as_str()).chain(["unknown"]).collect();
    let by_surface = groups_of(&failures, &surface_order, z, |f| {
        f.failing_surface.map_or("unknown", Surface::as_str)
    });
    let kind_order: Vec<&str> = FailureKind::ALL.iter().map(|k| k.id()).collect();
    let by_kind = groups_of(&failures, &kind_order, z, |f| f.kind.id());

    let samples = Bucket::ALL
        .into_iter()
        .map(|bucket| (bucket, sample(&failures, bucket, &spec.sample)))
        .collect();
    let rules = LinkRule::ALL
        .iter()
        .map(|rule| (rule.id(), rule.meaning()))
        .chain(ClassRule::ALL.iter().map(|rule| (rule.id(), rule.meaning())))
        .collect();

    P2Analysis {
        kill_rule: spec.kill.text.clone(),
        threshold: spec.kill.self_reflection_share_below,
        min_classified: spec.kill.min_classified,
        history,
        counts,
        shares,
        sensitivity,
        verdict,
        by_surface,
        by_kind,
        time_to_remedy: TimeToRemedy::of(&failures),
        self_check,
        samples,
        rules,
        failures,
    }
}

/// The first `per_bucket` failures of `bucket` by sha256(seed, remedy, failing).
fn sample(failures: &[Failure], bucket: Bucket, spec: &P2Sample) -> Vec<Failure> {
    let mut keyed: Vec<(String, usize)> = failures
        .iter()
        .enumerate()
        .filter(|(_, f)| f.bucket == bucket)
        .map(|(index, f)| {
            let failing = f.failing.as_deref().or(f.failing_ref.as_deref()).unwrap_or("");
            let key = format!("{}\0{}\0{failing}", spec.seed, f.remedy);
            (crate::prereg::sha256_hex(key.as_bytes()), index)
        })
        .collect();
    keyed.sort();
    keyed
        .into_iter()
        .take(spec.per_bucket)
        .map(|(_, index)| failures[index].clone())
        .collect()
}

/// The commits of `commits` that remedy something by P2's detection rules (a net revert, a `Fixes:` trailer naming
/// a SHA, or a fix), merges excluded: P3 reads the task ids they name.
pub fn remedies<'a>(commits: &'a [CommitRow], spec: &P2Spec) -> Vec<&'a CommitRow> {
    let matchers = Matchers::new(spec);
    commits
        .iter()
        .filter(|row| {
            let parsed = Parsed::new(row, spec, &matchers);
            let cited = parsed.cited();
            !parsed.merge
                && (parsed.is_net_revert()
                    || !cited.fixes_shas.is_empty()
                    || !cited.cited_shas.is_empty()
                    || parsed.fix)
        })
        .collect()
}

/// The pre-registered verdict for `self_reflection` of `n` classified failures (see the module documentation).
pub fn decide(self_reflection: u64, n: u64, spec: &P2Spec) -> Verdict {
    super::decide_share(
        self_reflection,
        n,
        &super::ShareRule {
            statistic: "only-self-reflection share",
            unit: "classified failures",
            below: spec.kill.self_reflection_share_below,
            min_n: spec.kill.min_classified,
            alpha: spec.alpha,
        },
    )
}

/// `hex` abbreviated as reports show commit ids ([`crate::scan::commits::short_id`]).
fn short(hex: &str) -> String {
    crate::scan::commits::short_id(hex).to_owned()
}
