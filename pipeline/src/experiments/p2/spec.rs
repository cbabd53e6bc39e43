//! The P2 pre-registration's types (`experiments/p2.toml`), re-exported by [`crate::prereg`], which loads and
//! validates them. Every pattern, keyword and window the experiment uses lives here, none in code.

use capture::Surface;
use serde::Deserialize;

/// The P2 gate-bucket pre-registration (`experiments/p2.toml`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Spec {
    pub experiment: String,
    pub title: String,
    pub hypothesis: String,
    /// Level of every interval (two-sided `1 - alpha`).
    pub alpha: f64,
    /// Hex runs shorter than this are never read as (abbreviated) SHAs.
    pub min_sha_len: usize,
    pub kill: P2Kill,
    pub revert: P2Revert,
    pub fixes_trailer: P2FixesTrailer,
    pub fix_after_change: P2FixAfterChange,
    pub classify: P2Classify,
    pub sample: P2Sample,
    /// `[audit]`: the audit sheet's sample and the corrected share's bootstrap (defaults when absent).
    #[serde(default)]
    pub audit: crate::experiments::p2_audit::AuditSpec,
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

/// Detection rule 3: a fix that names no SHA, linked to the change it follows.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2FixAfterChange {
    /// Conventional-commit types of a fix (`fix: …`, `fix(scope)!: …`).
    pub types: Vec<String>,
    /// Whole words (or word sequences) in the subject that make a commit a fix (case-insensitive).
    pub keywords: Vec<String>,
    /// The failing change is at most this many days (committer time) older than the fix.
    pub window_days: u32,
    /// At most this many of the most recent earlier changes in the window are considered per fix.
    pub max_candidates: usize,
    /// Paths that never link a fix to a change (they are touched by nearly every commit).
    pub ignore_paths: Vec<String>,
}

/// Gate classification.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Classify {
    /// Risk-floor surfaces (`capture::risk::classify_path`) whose paths only CI exercises.
    pub ci_surfaces: Vec<Surface>,
    /// CI configuration paths, matched at a path-component boundary, case-insensitively.
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
