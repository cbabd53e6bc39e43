//! The P2 pre-registration's types (`experiments/p2.toml`), re-exported by [`crate::prereg`], which loads and
//! validates them. Every pattern, keyword and window the experiment uses lives here, none in code.

use serde::Deserialize;

/// The P2 gate-bucket pre-registration (`experiments/p2.toml`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Spec {
    pub experiment: String,
    /// The instrument's version (2: line-evidence linkage; see the note at the end of `experiments/p2.toml`).
    pub version: u32,
    pub title: String,
    pub hypothesis: String,
    /// Level of every interval (two-sided `1 - alpha`).
    pub alpha: f64,
    /// Hex runs shorter than this are never read as (abbreviated) SHAs.
    pub min_sha_len: usize,
    pub kill: P2Kill,
    pub revert: P2Revert,
    pub fixes_trailer: P2FixesTrailer,
    pub citation: P2Citation,
    pub fix_after_change: P2FixAfterChange,
    pub link: P2Link,
    pub classify: P2Classify,
    pub sample: P2Sample,
    /// `[audit]`: the audit sheet's sample and the corrected share's bootstrap (defaults when absent).
    #[serde(default)]
    pub audit: super::p2_audit::AuditSpec,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Kill {
    /// The rule as the reports print it, verbatim.
    pub text: String,
    /// The rule fires when the only-self-reflection share of classified failures is below this.
    pub self_reflection_share_below: f64,
    /// INCONCLUSIVE below this many classified (non-ambiguous) failures.
    pub min_classified: u64,
}

/// Detection rule 1: reverts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Revert {
    /// `<word> "<subject>"` and Gerrit's `<word>^N "<subject>"` subjects (case-insensitive).
    pub words: Vec<String>,
    /// `<word> "<subject>"` subjects that revert a revert (git names them so since 2.43): never a failure.
    pub reapply_words: Vec<String>,
    /// Conventional-commit types of a revert: `<type>: <subject>`, `<type>(<scope>)!: <subject>`.
    pub types: Vec<String>,
    /// Body phrases followed by the reverted commit's (possibly abbreviated) SHA (case-insensitive).
    pub sha_markers: Vec<String>,
    /// Body lines starting with one of these (case-insensitive) are boilerplate, not a reason for the revert.
    pub boilerplate_prefixes: Vec<String>,
}

/// Detection rule 2: `Fixes: <sha>` trailers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2FixesTrailer {
    /// Trailer tokens (case-insensitive) whose value starts with the failing change's SHA.
    pub tokens: Vec<String>,
}

/// Detection rule 2b: a fix whose body cites the commit that introduced the defect.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Citation {
    /// Phrases after which a SHA names the culprit (`introduced in 1234abc`), besides git's `<sha> (<subject>, …)`.
    pub culprit_phrases: Vec<String>,
    /// Whether a pull request number after one of those phrases (`regression from #15365`) names the culprit too:
    /// the walked commit that landed it (version 4; absent = off, as in versions 1 to 3).
    #[serde(default)]
    pub pull_requests: bool,
}

/// How a fix that names no SHA is linked to the change that introduced its defect (line evidence).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Link {
    /// A commit touching more than this many (not ignored) files is a mass change, never a failing change.
    pub mass_change_files: usize,
    /// Conventional-commit types of mass changes (`release`, `style`).
    pub mass_change_types: Vec<String>,
    /// Prose keywords of mass-change subjects (formatting, renames, vendoring, releases).
    pub mass_change_keywords: Vec<String>,
    /// A candidate merged into the main line by the same merge as the fix (its own branch) and committed at most
    /// this many hours before it is never the failing change: a fix whose lines blame to one is
    /// `fix-after-change.same-branch` (version 3; absent or 0 = off, as in version 2).
    #[serde(default)]
    pub same_branch_hours: u32,
}

/// Detection rule 3: a fix that names no SHA, linked to the change it follows.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2FixAfterChange {
    /// Conventional-commit types of a fix (`fix: …`, `fix(scope)!: …`).
    pub types: Vec<String>,
    /// Words that make a commit a fix when they lead its subject (case-insensitive).
    pub keywords: Vec<String>,
    /// The failing change is at most this many days (committer time) older than the fix.
    pub window_days: u32,
    /// At most this many of the most recent earlier changes in the window are considered per fix.
    pub max_candidates: usize,
    /// Path patterns that are never evidence of who introduced a defect (data, task, lock, generated files).
    pub ignore_paths: Vec<String>,
    /// Dependency manifests: a fix touching only these (and ignored files) is a version bump, never linked.
    pub dependency_manifests: Vec<String>,
}

/// Gate classification.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Classify {
    /// Test, CI-configuration and build-script path patterns (directory fragments and file-name globs).
    pub ci_paths: Vec<String>,
    /// Words (or word sequences) of a message saying it fixes the build, tests, CI, lint, types, formatting, …
    pub ci_keywords: Vec<String>,
    /// Words (or word sequences) of a message naming a review-visible defect (typo, naming, comment, docs, …).
    pub review_keywords: Vec<String>,
    /// The risk floor's `needs_review` threshold applied to each failing change.
    pub risk_threshold: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Sample {
    /// Failures listed per bucket: the first by a seeded hash of their ids.
    pub per_bucket: usize,
    pub seed: u64,
}
