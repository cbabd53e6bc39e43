//! `phase0 p1`: read the corpus, compute every metric, decide under the prereg, write `p1.json`, `p1.md` and the
//! plots, and return the stdout block.

use std::path::{Path, PathBuf};

use super::{CommandError, write_all_atomically, write_report_set};
use crate::experiments::p1::{CorpusJoin, CorpusSummary, Metrics, P1Report};
use crate::prereg::Prereg;
use crate::report::envelope::{self, Envelope, InputFile, PreregRef, Status};
use crate::report::p1 as render;
use crate::scan::corpus::{CorpusFormat, InvalidPolicy, parse_corpus_as};

/// The options of `phase0 p1` (clap derives its command line from them, [`crate::cli`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct P1Args {
    /// The labeled corpus: JSONL with `confidence` in [0, 1] (or null) and `correct` (true/false or 1/0) per
    /// line, or a CSV or Parquet table with those columns. Or, instead, --reflections DIR --repo PATH.
    #[arg(required_unless_present = "reflections", conflicts_with = "reflections")]
    pub corpus: Option<PathBuf>,
    /// The corpus's format: auto (by the file's name: .csv, .parquet, else JSONL; Parquet also by its magic
    /// bytes), jsonl, csv or parquet.
    #[arg(long, default_value = "auto", conflicts_with = "reflections")]
    pub format: String,
    /// Build the corpus from this directory of sidecars (as `phase0 corpus` does, in memory).
    #[arg(
        long,
        requires = "repo",
        help_heading = "Corpus from captured sidecars (instead of CORPUS)"
    )]
    pub reflections: Option<PathBuf>,
    /// The repository the sessions of --reflections committed to.
    #[arg(
        long,
        requires = "reflections",
        help_heading = "Corpus from captured sidecars (instead of CORPUS)"
    )]
    pub repo: Option<PathBuf>,
    /// With --reflections: walk the history reachable from this revision (default HEAD).
    #[arg(
        long,
        requires = "reflections",
        help_heading = "Corpus from captured sidecars (instead of CORPUS)"
    )]
    pub rev: Option<String>,
    /// With --reflections: replace the pre-registered outcome window of the join.
    #[arg(
        long,
        requires = "reflections",
        help_heading = "Corpus from captured sidecars (instead of CORPUS)"
    )]
    pub window_days: Option<u32>,
    /// With --reflections: a pre-registration replacing the embedded experiments/corpus.toml.
    #[arg(
        long,
        requires = "reflections",
        help_heading = "Corpus from captured sidecars (instead of CORPUS)"
    )]
    pub corpus_prereg: Option<PathBuf>,
    /// With --reflections: also write the joined corpus (JSONL) here.
    #[arg(
        long,
        requires = "reflections",
        help_heading = "Corpus from captured sidecars (instead of CORPUS)"
    )]
    pub corpus_out: Option<PathBuf>,
    /// A pre-registration replacing the embedded experiments/p1.toml.
    #[arg(long)]
    pub prereg: Option<PathBuf>,
    /// Where p1.json, p1.md and the plots go.
    #[arg(long, default_value = "reports/p1", help_heading = "Output")]
    pub out: PathBuf,
    /// Skip invalid rows (counted by reason in the report) instead of failing on the first.
    #[arg(long)]
    pub skip_invalid: bool,
    /// The report date (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else with --reflections the join's
    /// as-of time (the newest commit's), else none.
    #[arg(long)]
    pub as_of: Option<String>,
    /// `SOURCE_DATE_EPOCH` (Unix seconds), read by clap from the environment.
    #[arg(long = "source-date-epoch", env = "SOURCE_DATE_EPOCH", hide = true)]
    pub source_date_epoch: Option<String>,
    /// A directory with a p1.md.j2 that replaces the embedded template.
    #[arg(long, help_heading = "Output")]
    pub templates: Option<PathBuf>,
    /// Break the numbers down by a field: agent, surface, task_ref or session_id (repeatable).
    #[arg(long, value_name = "FIELD")]
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
    let mut generated_at = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|e| input(&e))?;
    let template = super::template(args.templates.as_deref(), "p1.md.j2", render::P1_TEMPLATE)?;

    let (bytes, name, join) = corpus_bytes(args)?;
    if generated_at.is_none() {
        // A corpus built from sidecars is dated by its join's as-of time (the newest commit's), as P2's report is.
        generated_at = join.as_ref().map(|join| join.as_of.clone());
    }
    let name_text = name.display().to_string();
    let policy = if args.skip_invalid {
        InvalidPolicy::Skip
    } else {
        InvalidPolicy::Fail
    };
    let format = match args.format.as_str() {
        "auto" | "" => CorpusFormat::of(&name, &bytes),
        other => other
            .parse::<CorpusFormat>()
            .map_err(|e| input(&format!("--format {other}: {e}")))?,
    };
    // Hashing the input for the report runs beside parsing it.
    let (corpus, sha256) = rayon::join(
        || parse_corpus_as(&name_text, &bytes, format, policy),
        || crate::prereg::sha256_hex(&bytes),
    );
    let corpus = corpus.map_err(|error| {
        if error.is_invalid_row() {
            CommandError::Input(format!(
                "{error} (--skip-invalid skips invalid rows, counts them by reason and names the first)"
            ))
        } else {
            input(&error)
        }
    })?;
    // Rows with a null confidence take no part in the confidence metrics (only in the risk floor's).
    let kept: Option<Vec<usize>> = (corpus.stats.null_confidence > 0).then(|| {
        (0..corpus.len())
            .filter(|&row| !corpus.confidence[row].is_nan())
            .collect()
    });
    let (confidence, correct): (std::borrow::Cow<'_, [f64]>, std::borrow::Cow<'_, [bool]>) = match &kept {
        None => (corpus.confidence.as_slice().into(), corpus.correct.as_slice().into()),
        Some(kept) => (
            kept.iter()
                .map(|&row| corpus.confidence[row])
                .collect::<Vec<_>>()
                .into(),
            kept.iter().map(|&row| corpus.correct[row]).collect::<Vec<_>>().into(),
        ),
    };
    let row_of = |i: usize| kept.as_ref().map_or(i, |kept| kept[i]);
    let (metrics, roc_points) = Metrics::compute_with_roc(&confidence, &correct, &prereg.spec)
        .map_err(|error| input(&format!("{}: {error}", name.display())))?;
    let risk_floor = crate::experiments::p1::RiskFloor::compute(
        &corpus.risk_score,
        &corpus.needs_review,
        &corpus.correct,
        &prereg.spec,
    )
    .map_err(|error| input(&format!("{}: {error}", name.display())))?;
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
            &confidence,
            &correct,
            |i| column.get(row_of(i)).map(|value| capture::redact(value).into_owned()),
            &prereg.spec,
        )
        .map_err(|error| input(&format!("{}: {error}", name.display())))?;
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
            risk_floor,
            corpus_join: join,
        },
    );
    if skipped > 0 {
        report.status = Status::Partial;
        report.error_code = Some("invalid-rows-skipped".to_string());
    }
    report.inputs.push(InputFile::hashed(
        &name,
        sha256,
        bytes.len() as u64,
        Some(corpus.stats.rows),
    ));

    let plots = render::plots(&roc_points.unwrap_or_default(), &report.report.metrics, &prereg.spec);
    report.artifacts = ["p1.json", "p1.md"]
        .into_iter()
        .chain(plots.iter().map(|(name, _)| *name))
        .map(String::from)
        .collect();
    let markdown = render::markdown(&template, &report, &prereg.spec).map_err(|e| input(&e))?;
    let json = report.to_json().map_err(CommandError::serialise("p1.json"))?;

    let mut files = vec![
        ("p1.json".to_string(), json.clone()),
        ("p1.md".to_string(), markdown.into_bytes()),
    ];
    files.extend(
        plots
            .into_iter()
            .map(|(name, svg)| (name.to_string(), svg.into_bytes())),
    );
    let written = write_report_set(&args.out, &files)?;
    let mut summary = render::stdout_block(&report, &prereg.spec);
    if skipped > 0 {
        let first = corpus
            .stats
            .first_skipped
            .as_ref()
            .map_or_else(String::new, |(line, message)| match format {
                CorpusFormat::Jsonl => format!("; the first at {}:{line}: {message}", name.display()),
                CorpusFormat::Csv | CorpusFormat::Parquet => {
                    format!("; the first at {}: row {line}, {message}", name.display())
                }
            });
        let line = format!(
            "  skipped         {skipped} invalid {} (--skip-invalid){first}\n",
            if skipped == 1 { "row" } else { "rows" }
        );
        let at = summary.find("  verdict ").unwrap_or(summary.len());
        summary.insert_str(at, &line);
    }
    Ok(P1Outcome { summary, json, written })
}

/// The corpus bytes, the name errors and the report use for them, and the join that built them (if it did).
fn corpus_bytes(args: &P1Args) -> Result<(CorpusBytes, PathBuf, Option<CorpusJoin>), CommandError> {
    match (&args.corpus, &args.reflections, &args.repo) {
        (Some(corpus), None, None) => {
            let bytes = crate::scan::corpus::read_file(corpus).map_err(|error| {
                CommandError::Input(format!("{}: cannot read the corpus: {error}", corpus.display()))
            })?;
            Ok((CorpusBytes::File(bytes), corpus.clone(), None))
        }
        (None, Some(reflections), Some(repo)) => {
            let join_args = super::corpus::CorpusArgs {
                reflections: reflections.clone(),
                repo: repo.clone(),
                rev: args.rev.clone(),
                window_days: args.window_days,
                as_of: args.as_of.clone(),
                source_date_epoch: args.source_date_epoch.clone(),
                prereg: args.corpus_prereg.clone(),
                out: args.corpus_out.clone().unwrap_or_default(),
            };
            let built = super::corpus::build(&join_args)?;
            if let Some(out) = &args.corpus_out {
                let (dir, file) = super::corpus::split_out(out)?;
                write_all_atomically(&dir, &[(file, built.jsonl.clone())])?;
            }
            let join = CorpusJoin {
                reflections: reflections.display().to_string(),
                repo: repo.display().to_string(),
                rev: args.rev.clone().unwrap_or_else(|| "HEAD".into()),
                as_of: built.as_of.clone(),
                window_days: built.spec.window_days,
                prereg: PreregRef {
                    path: built.prereg.0.clone(),
                    sha256: built.prereg.1.clone(),
                },
                counts: built.counts,
                invalid_sidecars: built.invalid.len() as u64,
            };
            Ok((CorpusBytes::Built(built.jsonl), reflections.clone(), Some(join)))
        }
        _ => Err(CommandError::Input(
            "give either a CORPUS file or both --reflections DIR and --repo PATH".into(),
        )),
    }
}

enum CorpusBytes {
    File(crate::scan::corpus::FileBytes),
    Built(Vec<u8>),
}

impl std::ops::Deref for CorpusBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            CorpusBytes::File(bytes) => bytes,
            CorpusBytes::Built(bytes) => bytes,
        }
    }
}

/// The default output directory of `phase0 p1`.
pub fn default_out() -> &'static Path {
    Path::new("reports/p1")
}
