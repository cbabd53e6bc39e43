//! The corpus join's pre-registration (`experiments/corpus.toml`), loaded and checked by [`crate::prereg`].

use serde::Deserialize;

/// `experiments/corpus.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusSpec {
    pub experiment: String,
    pub title: String,
    /// A remedy counts when committed at most this many days after the failing change; a row without failure is
    /// correct once this many days have passed since its newest commit.
    pub window_days: u32,
    /// How long before a session's first sidecar a commit may be and still belong to it.
    pub slack_before_hours: u32,
    /// How long after a sidecar a commit may be and still belong to it.
    pub slack_after_hours: u32,
}
