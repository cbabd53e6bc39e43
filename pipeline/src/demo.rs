//! `phase0 demo`: what the project can show today on the embedded defaults.

use std::fmt::Write as _;
use std::path::Path;

use capture::surface::{ChangeSurface, SurfaceOptions, change_surface, discover_work_tree};
use capture::{DEFAULT_RISK_THRESHOLD, RiskVerdict, evaluate_risk_floor};

/// The experiments and where each stands.
pub const EXPERIMENTS: [(&str, &str); 3] = [
    (
        "P1 calibration",
        "does self-reported confidence separate right from wrong work? (not implemented yet)",
    ),
    (
        "P2 gate buckets",
        "which failures in git history would only self-reflection have caught? (not implemented yet)",
    ),
    (
        "P3 detectability",
        "how often is a task's outcome machine-detectable within 30 days? (not implemented yet)",
    ),
];

#[derive(Debug)]
pub struct CaptureOverview {
    pub surface: ChangeSurface,
    pub verdict: RiskVerdict,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    Surface(#[from] capture::surface::SurfaceError),
}

/// The change surface of the work tree containing `repo` and its risk-floor verdict at the default threshold.
pub fn capture_overview(repo: &Path) -> Result<CaptureOverview, DemoError> {
    let repository = discover_work_tree(repo)?;
    let surface = change_surface(&repository, &SurfaceOptions::default())?;
    let verdict = evaluate_risk_floor(&surface.files, None, None, DEFAULT_RISK_THRESHOLD);
    Ok(CaptureOverview { surface, verdict })
}

/// The text `phase0 demo` prints.
pub fn render(overview: &CaptureOverview) -> String {
    let mut out = String::new();
    let surface = &overview.surface;
    let base = match &surface.base {
        Some(base) => format!("since {} ({})", &base.merge_base.to_string()[..12], base.source),
        None => "uncommitted work only (no upstream or default branch to compare with)".to_string(),
    };
    let _ = writeln!(out, "capture: change surface {base}: {} file(s)", surface.files.len());
    for file in surface.files.iter().take(20) {
        let _ = writeln!(out, "  {file}");
    }
    if surface.files.len() > 20 {
        let _ = writeln!(out, "  … and {} more", surface.files.len() - 20);
    }
    let verdict = &overview.verdict;
    let _ = writeln!(
        out,
        "risk floor: surface {}, score {}, needs review: {} ({})",
        verdict.surface,
        verdict.score.get(),
        if verdict.needs_review { "yes" } else { "no" },
        verdict.reason
    );
    for (name, question) in EXPERIMENTS {
        let _ = writeln!(out, "{name}: {question}");
    }
    out
}
