//! `phase0 p1`: read the corpus, compute every metric, decide under the prereg, write `p1.json`, `p1.md` and the
//! plots, and return the stdout block.

use std::path::{Path, PathBuf};

use super::{CommandError, write_all_atomically};
use crate::experiments::p1::{CorpusSummary, Metrics, P1Report};
use crate::prereg::Prereg;
use crate::report::envelope::{self, Envelope, InputFile, PreregRef, Status};
use crate::report::p1 as render;
use crate::scan::corpus::{InvalidPolicy, parse_corpus};

#[derive(Debug, Clone, Default)]
pub struct P1Args {
    pub corpus: PathBuf,
    pub prereg: Option<PathBuf>,
    pub out: PathBuf,
    pub skip_invalid: bool,
    pub as_of: Option<String>,
    /// `SOURCE_DATE_EPOCH`, read by the caller.
    pub source_date_epoch: Option<String>,
    /// A directory whose `p1.md.j2` replaces the embedded template.
    pub templates: Option<PathBuf>,
    /// Breakdown fields: `agent`, `surface`, `task_ref`, `session_id`.
    pub by: Vec<String>,
}

/// The fields `--by` accepts.
pub const BREAKDOWN_FIELDS: [&str; 4] = ["agent", "surface", "task_ref", "session_id"];

/// What a run produced.
#[derive(Debug)]
pub struct P1Outcome {
    /// The block for stdout.
    pub summary: String,
    /// `p1.json`'s bytes (printed instead of the block with `--json`).
    pub json: Vec<u8>,
    pub written: Vec<PathBuf>,
}

pub fn run(args: &P1Args) -> Result<P1Outcome, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    let prereg = Prereg::p1(args.prereg.as_deref()).map_err(|e| input(&e))?;
    let generated_at = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|e| input(&e))?;
    let template = super::template(args.templates.as_deref(), "p1.md.j2", render::P1_TEMPLATE)?;

    let bytes = crate::scan::corpus::read_file(&args.corpus)
        .map_err(|error| CommandError::Input(format!("{}: cannot read the corpus: {error}", args.corpus.display())))?;
    let policy = if args.skip_invalid {
        InvalidPolicy::Skip
    } else {
        InvalidPolicy::Fail
    };
    // Hashing the input for the report runs beside parsing it.
    let (corpus, sha256) = rayon::join(
        || parse_corpus(&args.corpus.display().to_string(), &bytes, policy),
        || crate::prereg::sha256_hex(&bytes),
    );
    let corpus = corpus.map_err(|e| input(&e))?;
    let (metrics, roc_points) = Metrics::compute_with_roc(&corpus.confidence, &corpus.correct, &prereg.spec)
        .map_err(|error| input(&format!("{}: {error}", args.corpus.display())))?;
    let summary = CorpusSummary::from(&corpus.stats);

    let prereg_ref = PreregRef {
        path: prereg.source.clone(),
        sha256: prereg.sha256.clone(),
    };
    let skipped = corpus.stats.skipped_total();
    let mut breakdowns = std::collections::BTreeMap::new();
    for field in &args.by {
        let column = match field.as_str() {
            "agent" => &corpus.agent,
            "surface" => &corpus.surface,
            "task_ref" => &corpus.task_ref,
            "session_id" => &corpus.session_id,
            other => {
                return Err(CommandError::Input(format!(
                    "--by {other}: not a breakdown field (one of {})",
                    BREAKDOWN_FIELDS.join(", ")
                )));
            }
        };
        let groups = crate::experiments::p1::breakdown(
            &corpus.confidence,
            &corpus.correct,
            |row| column.get(row).map(|value| capture::redact(value).into_owned()),
            &prereg.spec,
        )
        .map_err(|error| input(&format!("{}: {error}", args.corpus.display())))?;
        breakdowns.insert(field.clone(), groups);
    }
    let mut report = Envelope::new(
        "phase0 p1",
        prereg_ref,
        generated_at,
        P1Report {
            corpus: summary,
            metrics,
            breakdowns,
        },
    );
    if skipped > 0 {
        report.status = Status::Partial;
        report.error_code = Some("invalid-rows-skipped".to_string());
    }
    report.inputs.push(InputFile::hashed(
        &args.corpus,
        sha256,
        bytes.len() as u64,
        Some(corpus.stats.rows),
    ));

    let plots = render::plots(&roc_points.unwrap_or_default(), &report.report.metrics);
    report.artifacts = ["p1.json", "p1.md"]
        .into_iter()
        .chain(plots.iter().map(|(name, _)| *name))
        .map(String::from)
        .collect();
    let markdown = render::markdown(&template, &report, &prereg.spec).map_err(|e| input(&e))?;
    let json = report
        .to_json()
        .map_err(|error| CommandError::Input(error.to_string()))?;

    let mut files = vec![
        ("p1.json".to_string(), json.clone()),
        ("p1.md".to_string(), markdown.into_bytes()),
    ];
    files.extend(
        plots
            .into_iter()
            .map(|(name, svg)| (name.to_string(), svg.into_bytes())),
    );
    let written = write_all_atomically(&args.out, &files)?;
    Ok(P1Outcome {
        summary: render::stdout_block(&report, &prereg.spec),
        json,
        written,
    })
}

/// The default output directory of `phase0 p1`.
pub fn default_out() -> &'static Path {
    Path::new("reports/p1")
}
