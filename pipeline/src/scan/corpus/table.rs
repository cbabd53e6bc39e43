//! The corpus as a table: CSV (a header, then one row per observation) or Parquet, with the fields of the JSONL
//! corpus as columns (`confidence`, `correct`, `task_ref`, `agent`, `surface`, `session_id`, `risk_score`,
//! `needs_review`; any other column is ignored). Both give the same [`Corpus`] as the JSONL of the same rows:
//! the same values, dictionaries in order of first appearance, [`ReadStats`] counting rows where JSONL counts
//! lines (see [`super::read_corpus`]).
//!
//! A value is checked as a JSONL value is, in the same order and with the same [`InvalidReason`]s; a table has
//! no `invalid-json`, `not-an-object`, `missing-confidence` or `missing-correct` row: a column that is missing
//! is an error about the file ([`CorpusError::MissingColumn`]), whatever the policy.
//!
//! # Cells
//!
//! - **CSV**: every cell is text. An empty cell is null (`confidence`: a row without a stated confidence; a
//!   breakdown field: absent). Numbers are decimal (`0.82`, `1`, `8.2e-1`; `NaN` and `inf` are not numbers);
//!   `correct` and `needs_review` are `true`/`false` (any case), `correct` also `0`/`1`.
//! - **Parquet**: `confidence` and `risk_score` may be any float or integer column, `correct` a boolean or an
//!   integer/float column of 0 and 1, `needs_review` a boolean column, the breakdown fields string columns; a
//!   string column holding numbers or booleans as text is read as CSV's cells are. A null is as an empty CSV
//!   cell. A column of another type (a list, a date) is an error naming the column and its type.
//!
//! # Where
//!
//! Rows are counted from 1, data rows only (the CSV header is not a row): `corpus.csv: row 3 (line 4), column
//! "confidence": confidence 1.7 is outside [0, 1]` (for CSV also the line where the row starts, since a quoted
//! cell may span lines), `corpus.parquet: row 3, column "correct": …`.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use polars::prelude::*;

use crate::scan::input::LineCounter;

use super::{
    ABSENT, Column, Corpus, CorpusError, InvalidPolicy, InvalidReason, ReadStats, duplicate_key_hash, format_number,
};

/// The columns a corpus table is read from, in the order of [`Fields`].
const COLUMNS: [&str; 8] = [
    "confidence",
    "correct",
    "agent",
    "surface",
    "task_ref",
    "session_id",
    "risk_score",
    "needs_review",
];
/// The columns a corpus must have.
const REQUIRED: [&str; 2] = ["confidence", "correct"];

/// One cell, typed as far as the rules need it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell<'a> {
    Null,
    Bool(bool),
    Number(f64),
    Text(&'a str),
}

impl Cell<'_> {
    /// How a message shows the value: `1.7`, `boolean true`, `"yes"`, `null` (Parquet) or `an empty cell` (CSV
    /// has no other null).
    fn describe(self) -> String {
        match self {
            Cell::Null => "null".to_owned(),
            Cell::Bool(b) => format!("boolean {b}"),
            Cell::Number(v) if v.is_nan() => "NaN".to_owned(),
            Cell::Number(v) => format_number(v),
            Cell::Text(s) => {
                const MAX: usize = 40;
                match s.char_indices().nth(MAX) {
                    Some((cut, _)) => format!("{:?}...", &s[..cut]),
                    None => format!("{s:?}"),
                }
            }
        }
    }

    /// A number: a number cell, or text that is a finite decimal number.
    fn number(self) -> Option<f64> {
        match self {
            Cell::Number(v) if v.is_finite() => Some(v),
            Cell::Text(s) => s.trim().parse::<f64>().ok().filter(|v| v.is_finite()),
            _ => None,
        }
    }

    /// A boolean: a boolean cell, or the text `true`/`false` in any case.
    fn boolean(self) -> Option<bool> {
        match self {
            Cell::Bool(b) => Some(b),
            Cell::Text(s) if s.trim().eq_ignore_ascii_case("true") => Some(true),
            Cell::Text(s) if s.trim().eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        }
    }
}

/// A row's cells, in the order of [`COLUMNS`] (a missing optional column gives null cells).
type Fields<'a> = [Cell<'a>; 8];

/// A valid row.
struct Row<'a> {
    confidence: f64,
    correct: bool,
    breakdown: [Option<&'a str>; 4],
    risk_score: Option<f64>,
    needs_review: Option<bool>,
}

type Invalid = (InvalidReason, &'static str, String);

/// The rules of the module documentation of [`super`], for one row of cells.
fn check(fields: Fields<'_>) -> Result<Row<'_>, Invalid> {
    fn text(cell: Cell<'_>) -> Option<&str> {
        match cell {
            Cell::Text(s) => Some(s),
            _ => None,
        }
    }
    let [
        confidence,
        correct,
        agent,
        surface,
        task_ref,
        session_id,
        risk_score,
        needs_review,
    ] = fields;
    let confidence = match confidence {
        Cell::Null => f64::NAN,
        cell => match cell.number() {
            None => {
                let message = format!("confidence must be a number, got {}", cell.describe());
                return Err((InvalidReason::ConfidenceNotANumber, "confidence", message));
            }
            Some(v) if !(0.0..=1.0).contains(&v) => {
                let message = format!("confidence {} is outside [0, 1]", format_number(v));
                return Err((InvalidReason::ConfidenceOutOfRange, "confidence", message));
            }
            Some(v) => v,
        },
    };
    let correct = match (correct.boolean(), correct.number()) {
        (Some(b), _) => b,
        (None, Some(0.0)) => false,
        (None, Some(1.0)) => true,
        _ => {
            let got = match correct {
                Cell::Text(s) if s.trim().is_empty() => "an empty cell".to_owned(),
                cell => cell.describe(),
            };
            let message = format!("correct must be true, false, 0 or 1, got {got}");
            return Err((InvalidReason::CorrectNotBoolean, "correct", message));
        }
    };
    let risk_score = match risk_score {
        Cell::Null => None,
        cell => match cell.number() {
            Some(v) if (0.0..=1.0).contains(&v) => Some(v),
            _ => {
                let message = format!("risk_score must be a number in [0, 1], got {}", cell.describe());
                return Err((InvalidReason::RiskScoreInvalid, "risk_score", message));
            }
        },
    };
    let needs_review = match needs_review {
        Cell::Null => None,
        cell => match cell.boolean() {
            Some(b) => Some(b),
            None => {
                let message = format!("needs_review must be true or false, got {}", cell.describe());
                return Err((InvalidReason::NeedsReviewNotBoolean, "needs_review", message));
            }
        },
    };
    Ok(Row {
        confidence,
        correct,
        breakdown: [text(agent), text(surface), text(task_ref), text(session_id)],
        risk_score,
        needs_review,
    })
}

/// A 64-bit hash of a valid row's values: rows with the same values in every column read are duplicates.
fn row_hash(row: &Row<'_>) -> u64 {
    let mut bytes = Vec::with_capacity(64);
    bytes.extend(row.confidence.to_bits().to_le_bytes());
    bytes.push(u8::from(row.correct));
    for value in row.breakdown {
        match value {
            None => bytes.push(0),
            Some(s) => {
                bytes.push(1);
                bytes.extend((s.len() as u64).to_le_bytes());
                bytes.extend(s.as_bytes());
            }
        }
    }
    bytes.extend(row.risk_score.unwrap_or(f64::NAN).to_bits().to_le_bytes());
    bytes.push(row.needs_review.map_or(2, u8::from));
    duplicate_key_hash(&bytes)
}

/// Accumulates the corpus row by row.
struct Builder {
    corpus: Corpus,
    interners: [HashMap<String, u32>; 4],
    hashes: HashSet<u64>,
    any_risk: bool,
    any_review: bool,
    policy: InvalidPolicy,
}

impl Builder {
    fn new(policy: InvalidPolicy, rows: usize) -> Builder {
        Builder {
            corpus: Corpus {
                confidence: Vec::with_capacity(rows),
                correct: Vec::with_capacity(rows),
                line: Vec::with_capacity(rows),
                agent: Column::default(),
                surface: Column::default(),
                task_ref: Column::default(),
                session_id: Column::default(),
                risk_score: Vec::with_capacity(rows),
                needs_review: Vec::with_capacity(rows),
                stats: ReadStats::default(),
            },
            interners: Default::default(),
            hashes: HashSet::new(),
            any_risk: false,
            any_review: false,
            policy,
        }
    }

    /// Adds row `number` (1-based); `Err` under [`InvalidPolicy::Fail`] for an invalid one (with its column).
    fn push(&mut self, number: u64, fields: Fields<'_>) -> Result<(), Invalid> {
        self.corpus.stats.lines += 1;
        let row = match check(fields) {
            Ok(row) => row,
            Err(invalid) if self.policy == InvalidPolicy::Fail => return Err(invalid),
            Err((reason, column, message)) => {
                *self.corpus.stats.skipped.entry(reason).or_default() += 1;
                if self.corpus.stats.first_skipped.is_none() {
                    self.corpus.stats.first_skipped = Some((number, format!("column {column:?}: {message}")));
                }
                return Ok(());
            }
        };
        let stats = &mut self.corpus.stats;
        stats.rows += 1;
        if !self.hashes.insert(row_hash(&row)) {
            stats.duplicate_lines += 1;
        }
        if row.confidence.is_nan() {
            stats.null_confidence += 1;
        }
        self.corpus.confidence.push(row.confidence);
        self.corpus.correct.push(row.correct);
        self.corpus.line.push(number);
        self.any_risk |= row.risk_score.is_some();
        self.any_review |= row.needs_review.is_some();
        self.corpus.risk_score.push(row.risk_score.unwrap_or(f64::NAN));
        self.corpus.needs_review.push(row.needs_review);
        let columns = [
            &mut self.corpus.agent,
            &mut self.corpus.surface,
            &mut self.corpus.task_ref,
            &mut self.corpus.session_id,
        ];
        for ((column, interner), value) in columns.into_iter().zip(&mut self.interners).zip(row.breakdown) {
            let index = match value {
                None => ABSENT,
                Some(text) => match interner.get(text) {
                    Some(&index) => index,
                    None => {
                        let index = u32::try_from(column.dict.len())
                            .ok()
                            .filter(|&i| i != ABSENT)
                            .expect("fewer than 2^32 - 1 values");
                        column.dict.push(text.to_owned());
                        interner.insert(text.to_owned(), index);
                        index
                    }
                },
            };
            column.values.push(index);
        }
        Ok(())
    }

    fn finish(mut self) -> Corpus {
        // As from JSONL: the risk columns exist only when some row has a value.
        if !self.any_risk {
            self.corpus.risk_score = Vec::new();
        }
        if !self.any_review {
            self.corpus.needs_review = Vec::new();
        }
        self.corpus.risk_score.shrink_to_fit();
        self.corpus.needs_review.shrink_to_fit();
        self.corpus
    }
}

fn missing_column(path: &Path, column: &'static str, present: &[String]) -> CorpusError {
    CorpusError::MissingColumn {
        path: path.to_path_buf(),
        column,
        present: present.join(", "),
    }
}

fn invalid_row(path: &Path, row: u64, line: Option<u64>, (reason, column, message): Invalid) -> CorpusError {
    CorpusError::InvalidRow {
        path: path.to_path_buf(),
        row,
        line,
        column,
        reason,
        message,
    }
}

fn table_error(path: &Path, message: String) -> CorpusError {
    CorpusError::Table {
        path: path.to_path_buf(),
        message,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// CSV

/// Reads a CSV corpus: a header row naming the columns (trimmed, exact names), then one row per observation.
/// Empty lines between rows are skipped (as the CSV reader does; they are not rows). A row with more or fewer
/// cells than the header is an error at its row (a stray comma or quote), whatever the policy.
pub(super) fn read_csv(path: &Path, bytes: &[u8], policy: InvalidPolicy) -> Result<Corpus, CorpusError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut record = csv::StringRecord::new();
    let mut lines = LineCounter::new(bytes);
    let csv_error = |lines: &mut LineCounter<'_>, e: csv::Error| {
        let line = e.position().map_or(1, |p| lines.line_at(p.byte()));
        let message = match e.kind() {
            csv::ErrorKind::Utf8 { .. } => format!("line {line}: invalid UTF-8"),
            _ => format!("line {line}: invalid CSV: {e}"),
        };
        table_error(path, message)
    };
    match reader.read_record(&mut record) {
        Ok(true) => {}
        Ok(false) => return Ok(Builder::new(policy, 0).finish()),
        Err(e) => return Err(csv_error(&mut lines, e)),
    }
    let header: Vec<String> = record.iter().map(|h| h.trim().to_owned()).collect();
    let index = |name: &str| header.iter().position(|h| h == name);
    for column in REQUIRED {
        if index(column).is_none() {
            return Err(missing_column(path, column, &header));
        }
    }
    let indices: [Option<usize>; 8] = COLUMNS.map(index);
    let mut builder = Builder::new(policy, bytes.len() / 64);
    let mut number = 0u64;
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                number += 1;
                let line = record.position().map_or(1, |p| lines.line_at(p.byte()));
                if record.len() != header.len() {
                    let message = format!(
                        "row {number} (line {line}): {} cells where the header has {}: a damaged row (a stray comma \
                         or quote?)",
                        record.len(),
                        header.len()
                    );
                    return Err(table_error(path, message));
                }
                let fields: Fields<'_> = indices.map(|i| match i.and_then(|i| record.get(i)) {
                    None | Some("") => Cell::Null,
                    Some(text) => Cell::Text(text),
                });
                builder
                    .push(number, fields)
                    .map_err(|invalid| invalid_row(path, number, Some(line), invalid))?;
            }
            Err(e) => return Err(csv_error(&mut lines, e)),
        }
    }
    Ok(builder.finish())
}

// ---------------------------------------------------------------------------------------------------------------
// Parquet

/// A column of the Parquet file as the rules read it.
enum Source {
    Absent,
    Null,
    Bool(BooleanChunked),
    Number(Float64Chunked),
    Text(StringChunked),
}

impl Source {
    fn cells(&self, rows: usize) -> Box<dyn Iterator<Item = Cell<'_>> + '_> {
        match self {
            Source::Absent | Source::Null => Box::new(std::iter::repeat_n(Cell::Null, rows)),
            Source::Bool(values) => Box::new(values.iter().map(|v| v.map_or(Cell::Null, Cell::Bool))),
            Source::Number(values) => Box::new(values.iter().map(|v| v.map_or(Cell::Null, Cell::Number))),
            Source::Text(values) => Box::new(values.iter().map(|v| match v {
                None | Some("") => Cell::Null,
                Some(text) => Cell::Text(text),
            })),
        }
    }
}

/// Reads a Parquet corpus: the columns named in [`COLUMNS`] (others are not read). Every polars error is mapped to
/// [`CorpusError::Table`]; a panic inside the Parquet decoder (a damaged file it does not guard against) too.
pub(super) fn read_parquet(path: &Path, bytes: &[u8], policy: InvalidPolicy) -> Result<Corpus, CorpusError> {
    let unreadable = |e: PolarsError| table_error(path, format!("not a readable Parquet file: {e}"));
    let frame = crate::scan::input::read_parquet_columns(bytes, &COLUMNS);
    let (names, frame) = match frame {
        Some(read) => read.map_err(unreadable)?,
        None => {
            return Err(table_error(
                path,
                "not a readable Parquet file: the decoder failed (a damaged file?)".to_owned(),
            ));
        }
    };
    for column in REQUIRED {
        if !names.iter().any(|n| n == column) {
            return Err(missing_column(path, column, &names));
        }
    }
    let rows = frame.height();
    let mut sources = Vec::with_capacity(COLUMNS.len());
    for name in COLUMNS {
        let Ok(column) = frame.column(name) else {
            sources.push(Source::Absent);
            continue;
        };
        let series = column.as_materialized_series().rechunk();
        let dtype = series.dtype().clone();
        let wrong = || {
            let expected = match name {
                "confidence" | "risk_score" => "numbers",
                "correct" => "booleans (or 0 and 1)",
                "needs_review" => "booleans",
                _ => "strings",
            };
            table_error(path, format!("column {name:?} holds {dtype}, expected {expected}"))
        };
        let source = match &dtype {
            DataType::Null => Source::Null,
            DataType::String => Source::Text(series.str().map_err(unreadable)?.clone()),
            DataType::Boolean if matches!(name, "correct" | "needs_review") => {
                Source::Bool(series.bool().map_err(unreadable)?.clone())
            }
            numeric if numeric.is_primitive_numeric() && matches!(name, "confidence" | "risk_score" | "correct") => {
                let cast = series.cast(&DataType::Float64).map_err(unreadable)?;
                Source::Number(cast.f64().map_err(unreadable)?.clone())
            }
            _ => return Err(wrong()),
        };
        sources.push(source);
    }
    let mut columns: Vec<_> = sources.iter().map(|s| s.cells(rows)).collect();
    let mut builder = Builder::new(policy, rows);
    for number in 1..=rows as u64 {
        let fields: Fields<'_> = std::array::from_fn(|k| columns[k].next().unwrap_or(Cell::Null));
        builder
            .push(number, fields)
            .map_err(|invalid| invalid_row(path, number, None, invalid))?;
    }
    Ok(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::Column;

    fn csv(text: &str) -> Result<Corpus, CorpusError> {
        read_csv(Path::new("c.csv"), text.as_bytes(), InvalidPolicy::Fail)
    }

    #[test]
    fn csv_rows_values_and_messages() {
        let corpus = csv("confidence,correct,agent,extra\n0.5,true,a,x\n,0,,y\n1,TRUE,b,z\n").unwrap();
        assert_eq!(corpus.correct, [true, false, true]);
        assert!(corpus.confidence[1].is_nan());
        assert_eq!(corpus.stats.null_confidence, 1);
        assert_eq!(corpus.agent.iter().collect::<Vec<_>>(), [Some("a"), None, Some("b")]);
        assert_eq!(corpus.line, [1, 2, 3]);
        assert!(corpus.risk_score.is_empty() && corpus.needs_review.is_empty());

        let error = csv("correct,confidence\ntrue,0.5\r\n\"false\",1.7\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.csv: row 2 (line 3), column \"confidence\": confidence 1.7 is outside [0, 1]"
        );
        let error = csv("confidence,correct\n0.5,yes\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.csv: row 1 (line 2), column \"correct\": correct must be true, false, 0 or 1, got \"yes\""
        );
        let error = csv("confidence,correct\nNaN,true\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.csv: row 1 (line 2), column \"confidence\": confidence must be a number, got \"NaN\""
        );
        let error = csv("confidence,agent\n0.5,a\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.csv: no column \"correct\" (the columns are: confidence, agent)"
        );
        let error = csv("confidence,correct\n0.5\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.csv: row 1 (line 2): 1 cells where the header has 2: a damaged row (a stray comma or quote?)"
        );
        assert_eq!(csv("").unwrap().len(), 0);
    }

    #[test]
    fn csv_skip_counts_by_reason_and_keeps_the_first() {
        let text = "confidence,correct,risk_score,needs_review\n0.5,1,0.2,\n2,1,,\n0.5,1,,maybe\n0.5,1,0.2,\n";
        let corpus = read_csv(Path::new("c.csv"), text.as_bytes(), InvalidPolicy::Skip).unwrap();
        assert_eq!(corpus.stats.rows, 2);
        assert_eq!(corpus.stats.lines, 4);
        assert_eq!(corpus.stats.duplicate_lines, 1);
        assert_eq!(corpus.stats.skipped_total(), 2);
        assert_eq!(
            corpus.stats.first_skipped,
            Some((2, "column \"confidence\": confidence 2 is outside [0, 1]".to_owned()))
        );
        assert_eq!(corpus.risk_score, [0.2, 0.2]);
        assert!(corpus.needs_review.is_empty());
    }

    #[test]
    fn parquet_types_and_errors() {
        let write = |columns: Vec<Column>| {
            let mut frame = DataFrame::new(columns[0].len(), columns).unwrap();
            let mut out = Vec::new();
            ParquetWriter::new(&mut out).finish(&mut frame).unwrap();
            out
        };
        let read = |bytes: &[u8]| read_parquet(Path::new("c.parquet"), bytes, InvalidPolicy::Fail);
        let bytes = write(vec![
            Column::new("confidence".into(), [Some(0.5f32), None, Some(1.0)]),
            Column::new("correct".into(), [1i64, 0, 1]),
            Column::new("agent".into(), [Some("a"), None, Some("a")]),
            Column::new("needs_review".into(), [Some(true), None, None]),
        ]);
        let corpus = read(&bytes).unwrap();
        assert_eq!(corpus.confidence[0], 0.5);
        assert!(corpus.confidence[1].is_nan());
        assert_eq!(corpus.correct, [true, false, true]);
        assert_eq!(corpus.agent.dict(), ["a"]);
        assert_eq!(corpus.needs_review, [Some(true), None, None]);
        assert_eq!(corpus.stats.rows, 3);

        let bytes = write(vec![
            Column::new("confidence".into(), [0.5, 0.6]),
            Column::new("correct".into(), [1i64, 2]),
        ]);
        assert_eq!(
            read(&bytes).unwrap_err().to_string(),
            "c.parquet: row 2, column \"correct\": correct must be true, false, 0 or 1, got 2"
        );
        let bytes = write(vec![
            Column::new("confidence".into(), [0.5]),
            Column::new("correct".into(), [true]),
            Column::new("agent".into(), [1i64]),
        ]);
        assert_eq!(
            read(&bytes).unwrap_err().to_string(),
            "c.parquet: column \"agent\" holds i64, expected strings"
        );
        let bytes = write(vec![Column::new("correct".into(), [true])]);
        assert_eq!(
            read(&bytes).unwrap_err().to_string(),
            "c.parquet: no column \"confidence\" (the columns are: correct)"
        );
        let error = read(b"PAR1 not really").unwrap_err().to_string();
        assert!(error.starts_with("c.parquet: not a readable Parquet file: "), "{error}");
        let mut cut = write(vec![
            Column::new("confidence".into(), [0.5]),
            Column::new("correct".into(), [true]),
        ]);
        cut.truncate(cut.len() / 2);
        assert!(read(&cut).is_err());
    }
}
