//! The P2 audit loop: a seeded, stratified sample of P2's failures written as a sheet for a reader
//! ([`sample`], [`write_sheet`]), and the filled sheet read back ([`read_sheet`], [`evaluate`]) into what the
//! reader measured: per tool bucket the precision of the bucket and of "is a failure", the confusion matrix tool
//! bucket × reader bucket, agreement and Cohen's kappa, the precision of the named failing change, and the
//! only-self-reflection share corrected for the measured misclassification.
//!
//! # The sheet (CSV, one row per sampled failure; `/work/AUDIT_FORMAT.md` in the project's notes)
//!
//! [`COLUMNS`] in order. `stratum` is `<tool_bucket>/<detection family>` (`ci/fix-after-change`), and
//! `stratum_size` the number of failures of that stratum in the whole run, so that a sheet read on its own can
//! weight its strata. The reader fills `is_failure` (`yes`/`no`), `failing_ok` (`yes`/`no`, empty when not a
//! failure or when the introducing change cannot be told), `bucket` (`ci`, `human-review`, `self-reflection`,
//! `ambiguous`) and `note`. A row whose `is_failure` is empty is *unaudited*: counted, never guessed.
//!
//! # The corrected share
//!
//! For every stratum `s` (repository × tool bucket × detection family) with `N_s` failures in the run and `a_s`
//! audited rows, of which `t_s` are failures the reader put in self-reflection and `c_s` failures the reader put
//! in any of ci / human-review / self-reflection, the corrected only-self-reflection share is
//! `Σ N_s·t_s/a_s ÷ Σ N_s·c_s/a_s` over the strata with at least one audited row (the failures of the other
//! strata are counted as `population_unaudited`). Its interval is a percentile interval of a two-level
//! bootstrap that carries both samples' uncertainty: each replicate draws the run's stratum sizes anew
//! (multinomial over the strata, total kept) and, independently, each stratum's audited rows with replacement
//! (multinomial over self-reflection / other classified / the rest). Replicate `r` draws from ChaCha8 seeded with
//! `[audit] seed` on stream `r`. The test `corrected_share_interval_coverage` checks its coverage against a
//! simulation with known truth.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use super::ShareVerdict;
use super::p2::{Bucket, Failure, FailureKind};
pub use crate::prereg::p2_audit::AuditSpec;
use crate::scan::commits::short_id;
use crate::stats::bootstrap::{multinomial, percentile_interval};
use crate::stats::{Agreement, ConfusionMatrix, Interval};

/// The sheet's columns, in order.
pub const COLUMNS: [&str; 17] = [
    "repo",
    "remedy",
    "failing",
    "detection",
    "evidence",
    "class_rule",
    "tool_bucket",
    "remedy_subject",
    "failing_subject",
    "remedy_diffstat",
    "failing_diffstat",
    "stratum",
    "stratum_size",
    "is_failure",
    "failing_ok",
    "bucket",
    "note",
];

/// A stratum: repository, tool bucket, detection family.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stratum {
    pub repo: String,
    pub tool: Bucket,
    pub family: FailureKind,
}

impl Stratum {
    pub fn of(repo: &str, failure: &Failure) -> Self {
        Self {
            repo: repo.to_string(),
            tool: failure.bucket,
            family: failure.kind,
        }
    }

    /// `ci/fix-after-change`, as the sheet's `stratum` column has it.
    pub fn id(&self) -> String {
        format!("{}/{}", self.tool.id(), self.family.id())
    }
}

impl fmt::Display for Stratum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.repo, self.id())
    }
}

/// One row of the sheet, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SheetRow {
    pub repo: String,
    pub remedy: String,
    pub failing: String,
    pub detection: String,
    pub evidence: String,
    pub class_rule: String,
    pub tool_bucket: String,
    pub remedy_subject: String,
    pub failing_subject: String,
    pub remedy_diffstat: String,
    pub failing_diffstat: String,
    pub stratum: String,
    pub stratum_size: u64,
    pub is_failure: String,
    pub failing_ok: String,
    pub bucket: String,
    pub note: String,
}

/// The failures to put on a sheet: per stratum, the first `per_stratum` by sha256(seed, remedy, failing), with
/// their stratum's size. Strata in order, then sample order.
pub fn sample<'a>(failures: &'a [Failure], repo: &str, spec: &AuditSpec) -> Vec<(&'a Failure, Stratum, u64)> {
    let mut strata: BTreeMap<Stratum, Vec<(String, &Failure)>> = BTreeMap::new();
    for failure in failures {
        let key = format!("{}\0{}\0{}", spec.seed, failure.remedy, failing_key(failure));
        strata
            .entry(Stratum::of(repo, failure))
            .or_default()
            .push((crate::prereg::sha256_hex(key.as_bytes()), failure));
    }
    let mut sampled = Vec::new();
    for (stratum, mut members) in strata {
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let size = members.len() as u64;
        sampled.extend(
            members
                .into_iter()
                .take(spec.per_stratum)
                .map(|(_, failure)| (failure, stratum.clone(), size)),
        );
    }
    sampled
}

/// How a failure names its failing change: the walked commit, else the SHA as written, else empty.
pub fn failing_key(failure: &Failure) -> &str {
    failure
        .failing
        .as_deref()
        .or(failure.failing_ref.as_deref())
        .unwrap_or("")
}

/// The sheet as CSV bytes (a header row even without rows).
pub fn write_sheet(rows: &[SheetRow]) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    writer.write_record(COLUMNS)?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// A sheet that cannot be read: the file, the line (1 = the header), what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", if *line == 0 { String::new() } else { format!(":{line}") })]
pub struct SheetError {
    pub file: String,
    /// 0 when the file as a whole is at fault (it cannot be read).
    pub line: u64,
    pub message: String,
}

/// What the reader said about one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// `is_failure` empty: not read.
    Unaudited,
    NotAFailure,
    Failure {
        /// `None`: the reader could not tell which change introduced the defect.
        failing_ok: Option<bool>,
        bucket: Bucket,
    },
}

/// One row read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRow {
    pub file: String,
    pub line: u64,
    pub stratum: Stratum,
    pub stratum_size: u64,
    pub remedy: String,
    pub failing: String,
    pub judgement: Judgement,
}

fn bucket_of(value: &str) -> Option<Bucket> {
    Bucket::ALL.into_iter().find(|b| b.id() == value)
}

fn family_of(detection: &str) -> Option<FailureKind> {
    let family = detection.split('.').next().unwrap_or_default();
    FailureKind::ALL.into_iter().find(|k| k.id() == family)
}

fn yes_no(value: &str) -> Option<Option<bool>> {
    match value {
        "" => Some(None),
        "yes" => Some(Some(true)),
        "no" => Some(Some(false)),
        _ => None,
    }
}

/// Where each column of a sheet is.
pub(crate) type ColumnIndex = BTreeMap<&'static str, usize>;

/// A record of a sheet with its line, or what is wrong with it.
pub(crate) type SheetRecord = Result<(u64, csv::StringRecord), SheetError>;

/// The records of a CSV sheet with their lines, read as they are asked for, and where each of `columns` is (a
/// missing one is an error on line 1, a malformed row one on its line): what the P2 and P3 sheets share.
pub(crate) fn sheet_records<'a>(
    file: &'a str,
    bytes: &'a [u8],
    columns: &[&'static str],
) -> Result<(ColumnIndex, impl Iterator<Item = SheetRecord> + 'a), SheetError> {
    let error = move |line: u64, message: String| SheetError {
        file: file.to_string(),
        line,
        message,
    };
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| error(1, format!("not a CSV sheet: {e}")))?
        .clone();
    let mut index = BTreeMap::new();
    for &column in columns {
        let at = headers
            .iter()
            .position(|h| h.trim() == column)
            .ok_or_else(|| error(1, format!("the column {column:?} is missing")))?;
        index.insert(column, at);
    }
    let records = reader.into_records().map(move |record| {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            error(line, format!("not a CSV row: {e}"))
        })?;
        Ok((record.position().map_or(0, |p| p.line()), record))
    });
    Ok((index, records))
}

/// Reads a sheet (`file` names it in errors). Every value of the reader's columns is checked; an unknown one is
/// an error naming its line, as is a missing column or a row whose stratum does not match its bucket and rule.
pub fn read_sheet(file: &str, bytes: &[u8]) -> Result<Vec<ReadRow>, SheetError> {
    let error = |line: u64, message: String| SheetError {
        file: file.to_string(),
        line,
        message,
    };
    let (index, records) = sheet_records(file, bytes, &COLUMNS)?;
    let mut rows = Vec::new();
    let mut seen: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for record in records {
        let (line, record) = record?;
        let get = |column: &str| record.get(index[column]).unwrap_or_default().trim();
        let tool = bucket_of(get("tool_bucket"))
            .ok_or_else(|| error(line, format!("tool_bucket {:?} is not a bucket", get("tool_bucket"))))?;
        let family = family_of(get("detection")).ok_or_else(|| {
            error(
                line,
                format!(
                    "detection {:?} is not revert.*, fixes-trailer.* or fix-after-change.*",
                    get("detection")
                ),
            )
        })?;
        let stratum = Stratum {
            repo: get("repo").to_string(),
            tool,
            family,
        };
        if get("stratum") != stratum.id() {
            return Err(error(
                line,
                format!(
                    "stratum {:?} does not match tool_bucket and detection ({})",
                    get("stratum"),
                    stratum.id()
                ),
            ));
        }
        let stratum_size: u64 = get("stratum_size")
            .parse()
            .map_err(|_| error(line, format!("stratum_size {:?} is not a count", get("stratum_size"))))?;
        let is_failure = yes_no(get("is_failure")).ok_or_else(|| {
            error(
                line,
                format!("is_failure {:?} is not yes, no or empty", get("is_failure")),
            )
        })?;
        let failing_ok = yes_no(get("failing_ok")).ok_or_else(|| {
            error(
                line,
                format!("failing_ok {:?} is not yes, no or empty", get("failing_ok")),
            )
        })?;
        let reader_bucket = get("bucket");
        let judgement = match is_failure {
            None => {
                if failing_ok.is_some() || !reader_bucket.is_empty() {
                    return Err(error(
                        line,
                        "failing_ok or bucket is filled but is_failure is empty".into(),
                    ));
                }
                Judgement::Unaudited
            }
            Some(false) => {
                if failing_ok.is_some() {
                    return Err(error(line, "failing_ok is filled but is_failure is no".into()));
                }
                Judgement::NotAFailure
            }
            Some(true) => Judgement::Failure {
                failing_ok,
                bucket: bucket_of(reader_bucket).ok_or_else(|| {
                    error(
                        line,
                        format!(
                            "bucket {reader_bucket:?} is not ci, human-review, self-reflection or ambiguous \
                             (required when is_failure is yes)"
                        ),
                    )
                })?,
            },
        };
        let key = (
            stratum.repo.clone(),
            get("remedy").to_string(),
            get("failing").to_string(),
        );
        if let Some(first) = seen.insert(key, line) {
            return Err(error(
                line,
                format!("the same remedy and failing change as line {first}"),
            ));
        }
        rows.push(ReadRow {
            file: file.to_string(),
            line,
            stratum,
            stratum_size,
            remedy: get("remedy").to_string(),
            failing: get("failing").to_string(),
            judgement,
        });
    }
    Ok(rows)
}

/// The bytes of the sheet at `path` and the name errors give it.
pub fn sheet_bytes(path: &Path) -> Result<(String, Vec<u8>), SheetError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| SheetError {
        file: file.clone(),
        line: 0,
        message: format!("cannot read: {e}"),
    })?;
    Ok((file, bytes))
}

/// Reads the sheet at `path`.
pub fn read_sheet_file(path: &Path) -> Result<Vec<ReadRow>, SheetError> {
    let (file, bytes) = sheet_bytes(path)?;
    read_sheet(&file, &bytes)
}

/// The population of each stratum as the sheets record it (`stratum_size`); two rows disagreeing is an error.
pub fn population_of_sheets(rows: &[ReadRow]) -> Result<BTreeMap<Stratum, u64>, SheetError> {
    let mut population: BTreeMap<Stratum, (u64, &ReadRow)> = BTreeMap::new();
    for row in rows {
        let (size, first) = population.entry(row.stratum.clone()).or_insert((row.stratum_size, row));
        if *size != row.stratum_size {
            return Err(SheetError {
                file: row.file.clone(),
                line: row.line,
                message: format!(
                    "stratum_size {} of {} differs from {} at {}:{}",
                    row.stratum_size, row.stratum, size, first.file, first.line
                ),
            });
        }
    }
    Ok(population.into_iter().map(|(s, (n, _))| (s, n)).collect())
}

/// Matches sheet rows to the failures of the current run, by remedy and failing change. Matched rows take the
/// run's current stratum (its rules may have changed since the sheet was written). A row whose pair is not in the
/// run but whose remedy has exactly one failure in it (the linker now names another change) is *relinked*: its
/// `is_failure` and `bucket` are about the remedy's defect and still hold; its `failing_ok` judged another change
/// and is dropped. The other rows are listed apart, to be reported, never used.
pub fn match_run(rows: Vec<ReadRow>, repo: &str, failures: &[Failure]) -> RunMatch {
    let current: BTreeMap<(&str, &str), &Failure> = failures
        .iter()
        .map(|f| ((f.remedy.as_str(), failing_key(f)), f))
        .collect();
    let mut by_remedy: BTreeMap<&str, Vec<&Failure>> = BTreeMap::new();
    for failure in failures {
        by_remedy.entry(failure.remedy.as_str()).or_default().push(failure);
    }
    let mut matched = Vec::new();
    let mut notes = MatchNotes::default();
    for mut row in rows {
        let exact = current.get(&(row.remedy.as_str(), row.failing.as_str())).copied();
        let relinked = match by_remedy.get(row.remedy.as_str()).map(Vec::as_slice) {
            Some([only]) if exact.is_none() => Some(*only),
            _ => None,
        };
        let Some(failure) = exact.or(relinked) else {
            notes.unmatched.push(format!(
                "{}:{}: {} -> {}",
                row.file,
                row.line,
                short_id(&row.remedy),
                if row.failing.is_empty() {
                    "–"
                } else {
                    short_id(&row.failing)
                }
            ));
            continue;
        };
        if relinked.is_some() {
            notes.relinked += 1;
            if let Judgement::Failure { failing_ok, .. } = &mut row.judgement {
                *failing_ok = None;
            }
            row.failing = failing_key(failure).to_string();
        }
        let stratum = Stratum::of(repo, failure);
        notes.restratified += u64::from(stratum.tool != row.stratum.tool || stratum.family != row.stratum.family);
        row.stratum = stratum;
        matched.push(row);
    }
    let mut population = BTreeMap::new();
    for failure in failures {
        *population.entry(Stratum::of(repo, failure)).or_insert(0) += 1;
    }
    RunMatch {
        rows: matched,
        notes,
        population,
    }
}

/// How a sheet's rows met the current run (all empty when a sheet is read on its own).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MatchNotes {
    /// `file:line: remedy -> failing` of the rows that name no failure of this run, left out of every figure.
    pub unmatched: Vec<String>,
    /// Rows whose remedy's only failure now names another failing change (their `failing_ok` is not used).
    pub relinked: u64,
    /// Matched rows whose tool bucket or detection family differs from the sheet's (the current one is used).
    pub restratified: u64,
}

/// [`match_run`]'s result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMatch {
    pub rows: Vec<ReadRow>,
    pub notes: MatchNotes,
    pub population: BTreeMap<Stratum, u64>,
}

/// One stratum of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StratumAudit {
    pub repo: String,
    pub stratum: String,
    pub population: u64,
    pub rows: u64,
    pub audited: u64,
}

/// The audit of one tool bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolBucketAudit {
    pub tool_bucket: Bucket,
    pub audited: u64,
    /// Rows the reader calls a failure, and of those, rows the reader put in this same bucket.
    pub failures: u64,
    pub agreeing: u64,
    /// `failures / audited` and `agreeing / failures`, Wilson intervals (unweighted over its strata).
    pub failure_precision: Option<Interval>,
    pub bucket_precision: Option<Interval>,
}

/// The agreement and link figures of one repository: a row of the validation table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepoAudit {
    pub repo: String,
    pub audited: u64,
    pub failures: u64,
    pub failure_precision: Option<Interval>,
    /// `failing_ok = yes` among failures with a `failing_ok`.
    pub link_judged: u64,
    pub link_ok: u64,
    pub link_precision: Option<Interval>,
    pub agreement: Agreement,
    pub bucketed: Bucketed,
}

/// The figures of the failures the tool put in a bucket (ci, human review, self-reflection): the ones the share is
/// computed from. The tool abstains on the rest (`ambiguous`), which [`Agreement`] over all failures counts as
/// disagreement whatever the reader says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucketed {
    /// Reader failures the tool bucketed, of all reader failures (the tool's coverage).
    pub failures: u64,
    pub coverage: Option<Interval>,
    /// `failing_ok = yes` among them.
    pub link_judged: u64,
    pub link_ok: u64,
    pub link_precision: Option<Interval>,
    /// Tool bucket vs reader bucket over them (a reader's `ambiguous` counts as a disagreement).
    pub agreement: Agreement,
}

/// The confusion matrix: rows are the tool's buckets, columns the reader's ([`READER_COLUMNS`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confusion {
    pub tool: Vec<&'static str>,
    pub reader: Vec<&'static str>,
    pub counts: Vec<Vec<u64>>,
}

/// The reader's columns of the confusion matrix: the four buckets, then "not a failure".
pub const READER_COLUMNS: [&str; 5] = ["ci", "human-review", "self-reflection", "ambiguous", "not-a-failure"];

/// The only-self-reflection share corrected for the measured misclassification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorrectedShare {
    pub method: &'static str,
    /// The point estimate and the percentile interval; `None` when no audited row is a classified failure.
    pub share: Option<Interval>,
    pub replicates: u32,
    pub seed: u64,
    /// Replicates with no classified failure (their share is undefined and left out).
    pub undefined_replicates: u32,
}

/// What a filled audit measured (the `audit` object of `p2.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditSummary {
    pub sheets: Vec<String>,
    pub rows: u64,
    pub audited: u64,
    pub unaudited: u64,
    pub matching: MatchNotes,
    pub strata: Vec<StratumAudit>,
    /// Failures of the run in strata without an audited row: outside the corrected share.
    pub population_unaudited: u64,
    pub by_tool_bucket: Vec<ToolBucketAudit>,
    pub confusion: Confusion,
    /// Tool bucket vs reader bucket over the rows the reader calls failures.
    pub agreement: Agreement,
    pub failure_precision: Option<Interval>,
    pub link_judged: u64,
    pub link_ok: u64,
    pub link_precision: Option<Interval>,
    pub bucketed: Bucketed,
    pub by_repo: Vec<RepoAudit>,
    pub corrected: CorrectedShare,
}

/// The method of [`CorrectedShare`], as reports print it.
pub const CORRECTED_METHOD: &str = "stratified two-level bootstrap (run's stratum sizes and audited rows resampled), \
                                    percentile interval";

fn wilson(successes: u64, n: u64, alpha: f64) -> Option<Interval> {
    let z = crate::stats::z_two_sided(alpha).ok()?;
    crate::stats::wilson(successes, n, z).ok().flatten()
}

fn bucket_index(bucket: Bucket) -> usize {
    Bucket::ALL.iter().position(|&b| b == bucket).unwrap_or_default()
}

/// Link and agreement figures of some rows (audited, failures, link judged, link ok, agreement, bucketed).
fn link_and_agreement(rows: &[&ReadRow], alpha: f64) -> (u64, u64, u64, u64, Agreement, Bucketed) {
    let audited = rows.iter().filter(|r| r.judgement != Judgement::Unaudited).count() as u64;
    let mut failures = 0;
    let (mut judged, mut ok) = (0, 0);
    let mut pairs = Vec::new();
    let (mut bucketed_judged, mut bucketed_ok) = (0, 0);
    let mut bucketed_pairs = Vec::new();
    for row in rows {
        if let Judgement::Failure { failing_ok, bucket } = row.judgement {
            failures += 1;
            let tool_bucketed = row.stratum.tool != Bucket::Ambiguous;
            if let Some(good) = failing_ok {
                judged += 1;
                ok += u64::from(good);
                if tool_bucketed {
                    bucketed_judged += 1;
                    bucketed_ok += u64::from(good);
                }
            }
            let pair = (bucket_index(row.stratum.tool), bucket_index(bucket));
            pairs.push(pair);
            if tool_bucketed {
                bucketed_pairs.push(pair);
            }
        }
    }
    let agreement = ConfusionMatrix::of(Bucket::ALL.len(), pairs).agreement();
    let bucketed = Bucketed {
        failures: bucketed_pairs.len() as u64,
        coverage: wilson(bucketed_pairs.len() as u64, failures, alpha),
        link_judged: bucketed_judged,
        link_ok: bucketed_ok,
        link_precision: wilson(bucketed_ok, bucketed_judged, alpha),
        agreement: ConfusionMatrix::of(Bucket::ALL.len(), bucketed_pairs).agreement(),
    };
    (audited, failures, judged, ok, agreement, bucketed)
}

/// Per-stratum tallies for the corrected share: (population, audited, self-reflection, classified).
type Tally = (u64, u64, u64, u64);

fn corrected_share(tallies: &[Tally], spec: &AuditSpec, alpha: f64) -> CorrectedShare {
    let estimate = |tallies: &[Tally]| -> Option<f64> {
        let (mut sr, mut classified) = (0.0, 0.0);
        for &(population, audited, self_reflection, class) in tallies {
            if audited > 0 {
                sr += population as f64 * self_reflection as f64 / audited as f64;
                classified += population as f64 * class as f64 / audited as f64;
            }
        }
        (classified > 0.0).then(|| sr / classified)
    };
    let point = estimate(tallies);
    let total: u64 = tallies.iter().map(|t| t.0).sum();
    let draws: Vec<Option<f64>> = if point.is_some() {
        (0..spec.replicates)
            .into_par_iter()
            .map(|r| {
                let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
                rng.set_stream(u64::from(r));
                let sizes = multinomial(tallies.iter().map(|t| t.0), total, &mut rng);
                let replicate: Vec<Tally> = tallies
                    .iter()
                    .zip(sizes)
                    .map(|(&(_, audited, sr, class), size)| {
                        let cells = [sr, class - sr, audited - class];
                        let drawn = multinomial(cells.into_iter(), audited, &mut rng);
                        (size, audited, drawn[0], drawn[0] + drawn[1])
                    })
                    .collect();
                estimate(&replicate)
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut values: Vec<f64> = draws.iter().flatten().copied().collect();
    let undefined = (draws.len() - values.len()) as u32;
    CorrectedShare {
        method: CORRECTED_METHOD,
        share: point
            .and_then(|estimate| percentile_interval(&mut values, alpha).map(|(lo, hi)| Interval { estimate, lo, hi })),
        replicates: spec.replicates,
        seed: spec.seed,
        undefined_replicates: undefined,
    }
}

/// Everything the audit measured, from the read rows and each stratum's population (rows whose stratum has no
/// population count as population 0: they still enter the agreement figures, not the corrected share).
pub fn evaluate(
    sheets: Vec<String>,
    rows: &[ReadRow],
    population: &BTreeMap<Stratum, u64>,
    matching: MatchNotes,
    spec: &AuditSpec,
    alpha: f64,
) -> AuditSummary {
    let all: Vec<&ReadRow> = rows.iter().collect();
    let (audited, failures, link_judged, link_ok, agreement, bucketed) = link_and_agreement(&all, alpha);

    let mut by_stratum: BTreeMap<&Stratum, Vec<&ReadRow>> = population.keys().map(|s| (s, Vec::new())).collect();
    for row in rows {
        by_stratum.entry(&row.stratum).or_default().push(row);
    }
    let mut strata = Vec::new();
    let mut tallies = Vec::new();
    let mut population_unaudited = 0;
    for (stratum, members) in &by_stratum {
        let size = population.get(*stratum).copied().unwrap_or(0);
        let judged: Vec<&&ReadRow> = members.iter().filter(|r| r.judgement != Judgement::Unaudited).collect();
        strata.push(StratumAudit {
            repo: stratum.repo.clone(),
            stratum: stratum.id(),
            population: size,
            rows: members.len() as u64,
            audited: judged.len() as u64,
        });
        if judged.is_empty() {
            population_unaudited += size;
            continue;
        }
        let reader = |keep: fn(Bucket) -> bool| {
            judged
                .iter()
                .filter(|r| matches!(r.judgement, Judgement::Failure { bucket, .. } if keep(bucket)))
                .count() as u64
        };
        tallies.push((
            size,
            judged.len() as u64,
            reader(|b| b == Bucket::SelfReflection),
            reader(|b| b != Bucket::Ambiguous),
        ));
    }

    let mut confusion = vec![vec![0u64; READER_COLUMNS.len()]; Bucket::ALL.len()];
    for row in rows {
        let column = match row.judgement {
            Judgement::Unaudited => continue,
            Judgement::NotAFailure => READER_COLUMNS.len() - 1,
            Judgement::Failure { bucket, .. } => bucket_index(bucket),
        };
        confusion[bucket_index(row.stratum.tool)][column] += 1;
    }
    let by_tool_bucket = Bucket::ALL
        .iter()
        .enumerate()
        .map(|(i, &tool)| {
            let audited: u64 = confusion[i].iter().sum();
            let failures = audited - confusion[i][READER_COLUMNS.len() - 1];
            let agreeing = confusion[i][i];
            ToolBucketAudit {
                tool_bucket: tool,
                audited,
                failures,
                agreeing,
                failure_precision: wilson(failures, audited, alpha),
                bucket_precision: wilson(agreeing, failures, alpha),
            }
        })
        .collect();

    let mut repos: BTreeMap<&str, Vec<&ReadRow>> = BTreeMap::new();
    for row in rows {
        repos.entry(&row.stratum.repo).or_default().push(row);
    }
    let by_repo = repos
        .into_iter()
        .map(|(repo, members)| {
            let (audited, failures, judged, ok, agreement, bucketed) = link_and_agreement(&members, alpha);
            RepoAudit {
                repo: repo.to_string(),
                audited,
                failures,
                failure_precision: wilson(failures, audited, alpha),
                link_judged: judged,
                link_ok: ok,
                link_precision: wilson(ok, judged, alpha),
                agreement,
                bucketed,
            }
        })
        .collect();

    AuditSummary {
        sheets,
        rows: rows.len() as u64,
        audited,
        unaudited: rows.len() as u64 - audited,
        matching,
        strata,
        population_unaudited,
        by_tool_bucket,
        confusion: Confusion {
            tool: Bucket::ALL.iter().map(|b| b.id()).collect(),
            reader: READER_COLUMNS.to_vec(),
            counts: confusion,
        },
        agreement,
        failure_precision: wilson(failures, audited, alpha),
        link_judged,
        link_ok,
        link_precision: wilson(link_ok, link_judged, alpha),
        bucketed,
        by_repo,
        corrected: corrected_share(&tallies, spec, alpha),
    }
}

/// The verdict decided on the corrected share's interval instead of the raw share's ([`super::decide_on_corrected`]);
/// with no audited classified failure there is no corrected share.
pub fn decide_on_corrected(raw: &ShareVerdict, corrected: &CorrectedShare, threshold: f64) -> ShareVerdict {
    super::decide_on_corrected(
        raw,
        corrected.share,
        "only-self-reflection share",
        "the audit gives no corrected share (no audited row is a classified failure)",
        threshold,
    )
}

/// The validation table of some audits as markdown: one row per repository, then all of them. The first columns
/// count every audited row; the last three only the failures the tool put in a bucket ([`Bucketed`]).
pub fn validation_table(summary: &AuditSummary) -> String {
    let pct = |i: &Option<Interval>| {
        i.map_or("–".to_string(), |i| {
            format!("{:.2} [{:.2}, {:.2}]", i.estimate, i.lo, i.hi)
        })
    };
    let num = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{x:.3}"));
    let mut out = String::from(
        "| repository | audited | failures | failure precision | link precision (ok/judged) | bucket agreement | kappa \
         | bucketed (of failures) | link precision, bucketed | agreement, bucketed | kappa, bucketed |\n\
         |---|---:|---:|---|---|---:|---:|---:|---|---:|---:|\n",
    );
    let mut line = |repo: &str,
                    audited,
                    failures,
                    fp: &Option<Interval>,
                    ok,
                    judged,
                    lp: &Option<Interval>,
                    a: &Agreement,
                    b: &Bucketed| {
        out.push_str(&format!(
            "| {repo} | {audited} | {failures} | {} | {} ({ok}/{judged}) | {} | {} | {} of {failures} | {} ({}/{}) | {} | {} |\n",
            pct(fp),
            pct(lp),
            num(a.observed),
            num(a.kappa),
            b.failures,
            pct(&b.link_precision),
            b.link_ok,
            b.link_judged,
            num(b.agreement.observed),
            num(b.agreement.kappa),
        ));
    };
    for r in &summary.by_repo {
        line(
            &r.repo,
            r.audited,
            r.failures,
            &r.failure_precision,
            r.link_ok,
            r.link_judged,
            &r.link_precision,
            &r.agreement,
            &r.bucketed,
        );
    }
    let failures = summary.by_repo.iter().map(|r| r.failures).sum::<u64>();
    line(
        "all",
        summary.audited,
        failures,
        &summary.failure_precision,
        summary.link_ok,
        summary.link_judged,
        &summary.link_precision,
        &summary.agreement,
        &summary.bucketed,
    );
    out
}

#[cfg(test)]
mod tests;

/// What `--audit SHEET` adds to `p2.json` (`report.audit`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct P2Audit {
    pub summary: AuditSummary,
    /// The verdict on the raw share, before the audit decided it on the corrected one (`analysis.verdict`).
    pub raw_verdict: ShareVerdict,
}
