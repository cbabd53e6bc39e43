//! The `[audit]` table of the P2 pre-registration.

use serde::Deserialize;

/// The `[audit]` table of `experiments/p2.toml` (optional: these defaults when absent).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditSpec {
    /// Failures sampled per stratum (tool bucket × detection family) by `phase0 p2 audit`.
    pub per_stratum: usize,
    /// Seeds the sample order (sha256 of seed and ids) and the bootstrap of the corrected share.
    pub seed: u64,
    pub replicates: u32,
}

impl Default for AuditSpec {
    fn default() -> Self {
        Self {
            per_stratum: 10,
            seed: 20_261_124,
            replicates: 2000,
        }
    }
}
