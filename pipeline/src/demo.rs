//! `phase0 demo`: what the project can show today on the embedded defaults.

use std::fmt::Write as _;
use std::path::Path;

use capture::surface::{ChangeSurface, SurfaceOptions, change_surface, discover_work_tree};
use capture::{DEFAULT_RISK_THRESHOLD, RiskVerdict, evaluate_risk_floor};

/// The experiments and where each stands.
pub const EXPERIMENTS: [(&str, &str); 3] = [
    (
        "P1 calibration",
        "does self-reported confidence separate right from wrong work? (`phase0 p1 data/p1-corpus.jsonl`)",
    ),
    (
        "P2 gate buckets",
        "which failures in git history would only self-reflection have caught? (below, on this repository)",
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
    #[error(transparent)]
    Command(#[from] crate::commands::CommandError),
}

impl DemoError {
    pub fn exit_code(&self) -> u8 {
        match self {
            DemoError::Surface(_) => crate::commands::exit::INPUT,
            DemoError::Command(error) => error.exit_code(),
        }
    }
}

/// The whole demo: the capture view of `repo`, then P2 over its history with reports in `out/p2`.
pub fn run(repo: &Path, out: &Path, source_date_epoch: Option<String>) -> Result<String, DemoError> {
    let mut text = render(&capture_overview(repo)?);
    let p2 = crate::commands::p2::run(&crate::commands::p2::P2Args {
        repo: repo.to_path_buf(),
        out: out.join("p2"),
        source_date_epoch,
        ..Default::default()
    })?;
    text.push('\n');
    text.push_str(&p2.summary);
    let _ = writeln!(text, "  reports         {}", out.join("p2").display());
    Ok(text)
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
