//! The diff risk floor (PRD §6). Being written.
use crate::reflection::{RiskVerdict, Surface, UnitInterval};

pub const DEFAULT_RISK_THRESHOLD: f64 = 0.5;

pub fn classify_path(_path: &str) -> Surface {
    Surface::None
}

pub fn evaluate_risk_floor<S: AsRef<str>>(
    _files: &[S],
    _insertions: Option<u64>,
    _deletions: Option<u64>,
    _threshold: f64,
) -> RiskVerdict {
    RiskVerdict {
        needs_review: false,
        score: UnitInterval::new(0.0).unwrap(),
        surface: Surface::None,
        reason: "no files changed".into(),
    }
}
