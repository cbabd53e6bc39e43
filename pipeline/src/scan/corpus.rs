//! The labeled P1 corpus: a JSONL file of `(confidence, correct)` observations.
//!
//! The same fields may come as the columns of a CSV or Parquet table instead: [`parse_corpus_as`] with a
//! [`CorpusFormat`] ([`table`] has the rules of cells and rows). What follows is the JSONL, the fast path.
//!
//! [`read_corpus`] reads a file, [`parse_corpus`] parses bytes already in memory. Both return a columnar
//! [`Corpus`]: one entry per accepted row in each column, in file order, plus the [`ReadStats`] that account
//! for every line of the input.
//!
//! # Format
//!
//! One JSON object per line, for example
//!
//! ```json
//! {"confidence": 0.82, "correct": true, "task_ref": "T-17", "agent": "claude", "surface": "cli", "session_id": "s1"}
//! ```
//!
//! * `confidence` (required) is a JSON number in `[0, 1]` (both ends included), or `null`: a row without a
//!   stated confidence (a degraded sidecar in a corpus built by `phase0 corpus`). Such rows are kept with `NaN` in
//!   [`Corpus::confidence`] and counted in [`ReadStats::null_confidence`]; P1 leaves them out of every confidence
//!   metric and keeps them for the risk-floor evaluation.
//! * `correct` (required) is `true` or `false`, or one of the numbers `0` and `1` (`0.0` and `1.0` count too).
//! * `task_ref`, `agent`, `surface` and `session_id` (optional) are strings kept for breakdowns. A missing field is
//!   *absent*; so is a field whose value is not a string (`null`, a number, an array, ...): such a value is
//!   ignored, not an error. The strings are interned: each [`Column`] stores one `u32` per row, an index into a
//!   small table of distinct values ordered by first appearance in the file.
//! * `risk_score` (optional) is a number in `[0, 1]` and `needs_review` (optional) a boolean: the mechanical risk
//!   floor of the row's change, for P1's risk-floor evaluation. `null` counts as absent. The columns
//!   [`Corpus::risk_score`] and [`Corpus::needs_review`] are only built when some row has the field (they are
//!   recorded sparsely while parsing, so a corpus without them pays nothing). They are parsed only from lines
//!   that contain the key as written (`"risk_score"`, `"needs_review"`): a key spelled with `\u` escapes is not
//!   recognised.
//! * Any other top-level key is ignored, whatever its value.
//!
//! # Lines
//!
//! * Lines end with `\n`; a `\r` before the `\n` (CRLF) is stripped. A trailing newline is fine, and a final line
//!   without one is read. Line numbers are 1-based and count every line, blank ones included.
//! * A UTF-8 byte-order mark at the very start of the input is skipped (anywhere else it makes the line invalid).
//! * A blank line (empty, or only spaces, tabs, `\r` and form feeds) is skipped and counted in
//!   [`ReadStats::blank_lines`]; it is not an error.
//! * A duplicate line, byte-identical (terminator excluded) to an earlier accepted row, is kept as a row (each
//!   line is an observation) and counted in [`ReadStats::duplicate_lines`]. Duplicates are found with a set of
//!   64-bit hashes of the lines, not by storing them; a false positive needs a 64-bit hash collision.
//! * Empty input, or input without any row, is not an error: the result is a [`Corpus`] with zero rows. What that
//!   means is for the experiment to decide.
//!
//! Every line is accounted for: `lines == blank_lines + rows + sum(skipped)`, and `duplicate_lines <= rows`.
//!
//! # Invalid rows
//!
//! A non-blank line is invalid for exactly one [`InvalidReason`], the first that applies in this order:
//!
//! | id | when | message |
//! |----|------|---------|
//! | `invalid-utf8` | the line is not UTF-8 | `invalid UTF-8 at column 13` |
//! | `invalid-json` | the line is not one JSON value (serde_json's message is included) | `invalid JSON: expected value at column 1` |
//! | `not-an-object` | valid JSON, but not an object | `expected a JSON object, got an array` |
//! | `missing-confidence` | no `confidence` key | `missing field "confidence"` |
//! | `confidence-not-a-number` | `confidence` is a string, a boolean, an array or an object | `confidence must be a number, got string "NaN"` |
//! | `confidence-out-of-range` | `confidence` is a number outside `[0, 1]` | `confidence 1.7 is outside [0, 1]` |
//! | `missing-correct` | no `correct` key | `missing field "correct"` |
//! | `correct-not-boolean` | `correct` is anything but `true`, `false`, `0`, `1` (e.g. `2`, `0.5`, `"yes"`, `null`) | `correct must be true, false, 0 or 1, got 2` |
//! | `risk-score-invalid` | `risk_score` is present, not `null`, and not a number in `[0, 1]` | `risk_score must be a number in [0, 1], got 1.5` |
//! | `needs-review-not-boolean` | `needs_review` is present, not `null`, and not a boolean | `needs_review must be true or false, got 1` |
//!
//! JSON has no NaN or infinities: a bare `NaN` or `Infinity` token is `invalid-json`, and the *string* `"NaN"`
//! is `confidence-not-a-number`. Numbers too large for an `f64` (such as `1e400`) are `invalid-json`, as
//! serde_json rejects them. A recognised key (`confidence`, `correct`, or a breakdown field) given twice in one
//! object is `invalid-json` (`duplicate field`), since the row would be ambiguous; repeated unknown keys are
//! ignored.
//!
//! Columns in messages are 1-based byte offsets within the line (after the byte-order mark on line 1). Numbers
//! in messages are shown as the shortest decimal that reads back as the same `f64` (`1.7`, `2`), in scientific
//! notation when very large or very small (`1e300`); strings are quoted and cut after 40 characters.
//!
//! What happens to an invalid row depends on the [`InvalidPolicy`]:
//!
//! * [`InvalidPolicy::Fail`]: reading stops with [`CorpusError::Invalid`] for the *first* invalid line of the
//!   file (lowest line number), although the lines are parsed in parallel.
//! * [`InvalidPolicy::Skip`]: the row is skipped and counted by reason in [`ReadStats::skipped`]; nothing is
//!   dropped silently.
//!
//! Errors display as `path:line: message`, the path as given, e.g. `corpus.jsonl:1234: confidence 1.7 is
//! outside [0, 1]`.
//!
//! # Performance
//!
//! The whole input is read as bytes (large files by several threads at once), split into line-aligned chunks
//! of about 4 MiB, and the chunks are parsed in parallel (rayon): each line is checked as UTF-8 and parsed
//! into a small borrowed struct (unknown keys are skipped without being materialised), and each chunk writes
//! its rows straight into its own range of the output columns. The chunks' dictionaries are then merged in
//! file order. The result is deterministic: the same input gives an identical [`Corpus`], dictionaries
//! included, whatever the number of threads. Memory is the input plus about 33 bytes per row (the columns)
//! and 8 bytes per row while counting duplicates.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::IdentityHasher;

pub mod table;

/// Target size in bytes of the chunks parsed in parallel (each chunk is extended to the end of its last line).
const CHUNK_SIZE: usize = 4 << 20;

/// Index stored in a [`Column`] for a row where the field is absent.
const ABSENT: u32 = u32::MAX;

/// The labeled corpus, column by column: entry `i` of every column belongs to row `i`.
#[derive(Debug, Clone, PartialEq)]
pub struct Corpus {
    /// The stated confidence of each row, in `[0, 1]`.
    pub confidence: Vec<f64>,
    /// Whether each row's outcome was correct.
    pub correct: Vec<bool>,
    /// The 1-based source line of each row.
    pub line: Vec<u64>,
    /// The `agent` of each row.
    pub agent: Column,
    /// The `surface` of each row.
    pub surface: Column,
    /// The `task_ref` of each row.
    pub task_ref: Column,
    /// The `session_id` of each row.
    pub session_id: Column,
    /// The `risk_score` of each row (`NaN` where absent); empty when no row has one.
    pub risk_score: Vec<f64>,
    /// The `needs_review` of each row; empty when no row has one.
    pub needs_review: Vec<Option<bool>>,
    /// How the lines of the input were accounted for.
    pub stats: ReadStats,
}

impl Corpus {
    /// The number of rows.
    pub fn len(&self) -> usize {
        self.confidence.len()
    }

    /// Whether the corpus has no rows.
    pub fn is_empty(&self) -> bool {
        self.confidence.is_empty()
    }
}

/// An optional string field, interned: one index per row into a table of the distinct values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Column {
    values: Vec<u32>,
    dict: Vec<String>,
}

impl Column {
    /// The value of row `row`, or `None` if the field is absent there (or `row` is out of bounds).
    pub fn get(&self, row: usize) -> Option<&str> {
        self.index(row).map(|i| self.dict[i as usize].as_str())
    }

    /// The dictionary index of row `row`'s value, or `None` if absent (or `row` is out of bounds).
    pub fn index(&self, row: usize) -> Option<u32> {
        self.values.get(row).copied().filter(|&i| i != ABSENT)
    }

    /// The distinct values, in order of first appearance in the file.
    pub fn dict(&self) -> &[String] {
        &self.dict
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The value of every row, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&str>> + '_ {
        self.values
            .iter()
            .map(|&i| (i != ABSENT).then(|| self.dict[i as usize].as_str()))
    }
}

/// How the lines of the input were accounted for: `lines == blank_lines + rows + sum(skipped)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Lines in the input, blank ones included (a final line without newline counts; an empty input has none).
    pub lines: u64,
    /// Empty or whitespace-only lines, skipped.
    pub blank_lines: u64,
    /// Rows accepted into the corpus.
    pub rows: u64,
    /// Rows whose line is byte-identical to an earlier row's line (kept as rows, counted here).
    pub duplicate_lines: u64,
    /// Rows with `"confidence": null` (kept as rows with `NaN` confidence, counted here).
    pub null_confidence: u64,
    /// Invalid lines skipped under [`InvalidPolicy::Skip`], by reason (reasons that did not occur are absent).
    pub skipped: BTreeMap<InvalidReason, u64>,
    /// The first skipped line under [`InvalidPolicy::Skip`]: its 1-based number and why it is invalid.
    pub first_skipped: Option<(u64, String)>,
}

impl ReadStats {
    /// The number of invalid lines skipped, all reasons together.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }
}

/// What to do with an invalid row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InvalidPolicy {
    /// Stop at the first invalid line (by line number) with [`CorpusError::Invalid`].
    Fail,
    /// Skip invalid lines, counting them by reason in [`ReadStats::skipped`].
    Skip,
}

/// Why a line is not a valid row. See the module documentation for the exact rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InvalidReason {
    /// The line is not valid UTF-8.
    InvalidUtf8,
    /// The line is not a single JSON value.
    InvalidJson,
    /// The line is JSON, but not an object.
    NotAnObject,
    /// The object has no `confidence`.
    MissingConfidence,
    /// `confidence` is not a JSON number.
    ConfidenceNotANumber,
    /// `confidence` is a number outside `[0, 1]`.
    ConfidenceOutOfRange,
    /// The object has no `correct`.
    MissingCorrect,
    /// `correct` is not `true`, `false`, `0` or `1`.
    CorrectNotBoolean,
    /// `risk_score` is not a number in `[0, 1]` (nor `null`).
    RiskScoreInvalid,
    /// `needs_review` is not a boolean (nor `null`).
    NeedsReviewNotBoolean,
    /// The line is longer than [`MAX_LINE_BYTES`] (checked before anything else; last here so that the order of
    /// reports' reason lists stays as it was).
    LineTooLong,
}

/// The longest line a corpus row may take: rows are a few hundred bytes; a longer line is a damaged or foreign
/// file, refused before it is parsed.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

impl InvalidReason {
    /// Every reason, in the order they are checked (but [`Self::LineTooLong`], checked first).
    pub const ALL: [InvalidReason; 11] = [
        Self::InvalidUtf8,
        Self::InvalidJson,
        Self::NotAnObject,
        Self::MissingConfidence,
        Self::ConfidenceNotANumber,
        Self::ConfidenceOutOfRange,
        Self::MissingCorrect,
        Self::CorrectNotBoolean,
        Self::RiskScoreInvalid,
        Self::NeedsReviewNotBoolean,
        Self::LineTooLong,
    ];

    /// The stable kebab-case identifier, e.g. `confidence-out-of-range`.
    pub fn id(self) -> &'static str {
        match self {
            Self::InvalidUtf8 => "invalid-utf8",
            Self::InvalidJson => "invalid-json",
            Self::NotAnObject => "not-an-object",
            Self::MissingConfidence => "missing-confidence",
            Self::ConfidenceNotANumber => "confidence-not-a-number",
            Self::ConfidenceOutOfRange => "confidence-out-of-range",
            Self::MissingCorrect => "missing-correct",
            Self::CorrectNotBoolean => "correct-not-boolean",
            Self::RiskScoreInvalid => "risk-score-invalid",
            Self::NeedsReviewNotBoolean => "needs-review-not-boolean",
            Self::LineTooLong => "line-too-long",
        }
    }

    /// A short description of the reason, for reports (the per-line message is in [`CorpusError::Invalid`]).
    pub fn description(self) -> &'static str {
        match self {
            Self::InvalidUtf8 => "not valid UTF-8",
            Self::InvalidJson => "not valid JSON",
            Self::NotAnObject => "not a JSON object",
            Self::MissingConfidence => "no confidence",
            Self::ConfidenceNotANumber => "confidence is not a number",
            Self::ConfidenceOutOfRange => "confidence is outside [0, 1]",
            Self::MissingCorrect => "no correct",
            Self::CorrectNotBoolean => "correct is not true, false, 0 or 1",
            Self::RiskScoreInvalid => "risk_score is not a number in [0, 1]",
            Self::NeedsReviewNotBoolean => "needs_review is not a boolean",
            Self::LineTooLong => "the line is longer than 1 MiB",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// Reading the corpus failed.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// The file could not be read.
    #[error("{}: cannot read the corpus: {source}", path.display())]
    Read {
        /// The path as given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a valid row (under [`InvalidPolicy::Fail`]: the first such line of the file).
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The path (or name) as given.
        path: PathBuf,
        /// The 1-based line number.
        line: u64,
        /// Why the line is invalid.
        reason: InvalidReason,
        /// The specific message, e.g. `confidence 1.7 is outside [0, 1]`.
        message: String,
    },
    /// A row of a CSV or Parquet corpus is not valid (under [`InvalidPolicy::Fail`]: the first such row).
    #[error("{}: row {row}{}, column {column:?}: {message}", path.display(), line.map_or_else(String::new, |line| format!(" (line {line})")))]
    InvalidRow {
        /// The path (or name) as given.
        path: PathBuf,
        /// The 1-based data row (the CSV header is not a row).
        row: u64,
        /// For CSV, the line where the row starts.
        line: Option<u64>,
        /// The column whose value is invalid.
        column: &'static str,
        /// Why the row is invalid.
        reason: InvalidReason,
        /// The specific message, e.g. `confidence 1.7 is outside [0, 1]`.
        message: String,
    },
    /// A CSV or Parquet corpus lacks a required column.
    #[error("{}: no column {column:?} (the columns are: {present})", path.display())]
    MissingColumn {
        /// The path (or name) as given.
        path: PathBuf,
        /// The missing column: `confidence` or `correct`.
        column: &'static str,
        /// The columns the file has, comma-separated.
        present: String,
    },
    /// A CSV or Parquet corpus cannot be read as a table (damaged CSV, an unreadable Parquet file, a column of
    /// the wrong type).
    #[error("{}: {message}", path.display())]
    Table {
        /// The path (or name) as given.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl CorpusError {
    /// Whether the error is about one row (which `--skip-invalid` would skip).
    pub fn is_invalid_row(&self) -> bool {
        matches!(self, CorpusError::Invalid { .. } | CorpusError::InvalidRow { .. })
    }
}

/// The formats a corpus may be written in (`phase0 p1 --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CorpusFormat {
    /// One JSON object per line (the module documentation): the fast path.
    Jsonl,
    /// A CSV table with the same fields as columns ([`table`]).
    Csv,
    /// A Parquet table with the same fields as columns ([`table`]).
    Parquet,
}

impl CorpusFormat {
    /// Every format, in the order of `--format`'s documentation.
    pub const ALL: [CorpusFormat; 3] = [Self::Jsonl, Self::Csv, Self::Parquet];

    /// The name `--format` takes: `jsonl`, `csv`, `parquet`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Jsonl => "jsonl",
            Self::Csv => "csv",
            Self::Parquet => "parquet",
        }
    }

    /// `--format auto`: Parquet when the file starts with Parquet's magic `PAR1` or its name ends in `.parquet`
    /// (or `.pq`), CSV when the name ends in `.csv`, JSONL otherwise (any case of the extension).
    pub fn of(path: &Path, bytes: &[u8]) -> CorpusFormat {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if bytes.starts_with(b"PAR1") || extension == "parquet" || extension == "pq" {
            Self::Parquet
        } else if extension == "csv" {
            Self::Csv
        } else {
            Self::Jsonl
        }
    }
}

impl fmt::Display for CorpusFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CorpusFormat {
    type Err = String;

    /// Parses a `--format` name (not `auto`, which means [`CorpusFormat::of`]).
    fn from_str(s: &str) -> Result<CorpusFormat, String> {
        Self::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|f| f.name()).collect();
            format!("unknown corpus format {s:?} (expected auto, {})", names.join(", "))
        })
    }
}

/// Parses a corpus held in memory as `format`; `name` (usually the path) is used in error messages. JSONL is
/// [`parse_corpus`]; CSV and Parquet are read by [`table`].
pub fn parse_corpus_as(
    name: &str,
    bytes: &[u8],
    format: CorpusFormat,
    policy: InvalidPolicy,
) -> Result<Corpus, CorpusError> {
    match format {
        CorpusFormat::Jsonl => parse_corpus(name, bytes, policy),
        CorpusFormat::Csv => table::read_csv(Path::new(name), bytes, policy),
        CorpusFormat::Parquet => table::read_parquet(Path::new(name), bytes, policy),
    }
}

/// Reads the corpus at `path`. See the module documentation for the format and rules.
pub fn read_corpus(path: &Path, policy: InvalidPolicy) -> Result<Corpus, CorpusError> {
    let bytes = read_file(path).map_err(|source| CorpusError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &bytes, policy, CHUNK_SIZE)
}

/// Parses a corpus held in memory; `name` (usually the path) is used in error messages.
pub fn parse_corpus(name: &str, bytes: &[u8], policy: InvalidPolicy) -> Result<Corpus, CorpusError> {
    parse_corpus_with_chunk(name, bytes, policy, CHUNK_SIZE)
}

/// [`parse_corpus`] with a chosen chunk size (in bytes, at least 1), so tests can exercise many chunks.
#[doc(hidden)]
pub fn parse_corpus_with_chunk(
    name: &str,
    bytes: &[u8],
    policy: InvalidPolicy,
    chunk_size: usize,
) -> Result<Corpus, CorpusError> {
    parse(Path::new(name), bytes, policy, chunk_size)
}

/// A file's bytes: memory-mapped when it is a non-empty regular file, read into memory otherwise.
///
/// Mapping avoids what dominated reading a large corpus: zeroing fresh pages and copying the file into them.
pub enum FileBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(map) => map,
            FileBytes::Read(bytes) => bytes,
        }
    }
}

/// Opens `path`, a regular file ([`super::input::open_regular`]: never a FIFO or a device), as [`FileBytes`].
pub fn read_file(path: &Path) -> std::io::Result<FileBytes> {
    let file = super::input::open_regular(path)?;
    let metadata = file.metadata()?;
    if metadata.is_file() && metadata.len() > 0 {
        // SAFETY: the map is read-only and private. Another process truncating the file while it is mapped
        // would fault the reads (SIGBUS); the input files of a run are not expected to change under it, the
        // same assumption ripgrep makes.
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            return Ok(FileBytes::Mapped(map));
        }
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut bytes)?;
    Ok(FileBytes::Read(bytes))
}

// ---------------------------------------------------------------------------------------------------------------
// Chunking and parallel parsing
//
// The input is split into line-aligned chunks and the lines of each chunk are counted first, so every chunk knows
// its first line number and where its rows go: the output columns are allocated once, with one slot per line
// (an upper bound on rows), and each chunk writes its rows densely from the start of its own slots, in parallel.
// Then the chunks' local dictionaries are merged in file order, the indices remapped, and the gaps left by blank
// or invalid lines closed. No row is stored twice.

/// What a chunk reports besides the rows it wrote.
#[derive(Default)]
struct ChunkMeta {
    rows: usize,
    blank_lines: u64,
    skipped: [u64; InvalidReason::ALL.len()],
    /// The local dictionaries of the breakdown columns (agent, surface, task_ref, session_id).
    dicts: [Vec<String>; 4],
    /// Hashes of the rows' lines, partitioned by [`shard_of`].
    hashes: Vec<Vec<u64>>,
    /// The first invalid line (1-based, global) of the chunk: the error under [`InvalidPolicy::Fail`], the first
    /// skipped line under [`InvalidPolicy::Skip`].
    error: Option<(u64, InvalidReason, String)>,
    /// Rows (index within the chunk's rows) with a risk field, recorded sparsely.
    extras: Vec<(usize, Extra)>,
    null_confidence: u64,
}

/// [`ParsedRow::needs_review`] when the field is absent.
const NO_FLAG: u8 = 2;

/// The optional risk-floor fields of a row.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Extra {
    risk_score: Option<f64>,
    needs_review: Option<bool>,
}

/// The slots of one chunk in the output columns.
struct Slots<'s> {
    confidence: &'s mut [f64],
    correct: &'s mut [bool],
    line: &'s mut [u64],
    columns: [&'s mut [u32]; 4],
}

/// Number of shards of the line-hash set (counted in parallel).
const SHARDS: usize = 64;

fn shard_of(hash: u64) -> usize {
    (hash >> 58) as usize
}

/// Splits `bytes` into line-aligned chunks of about `chunk_size` bytes, each but the last ending after a `\n`.
pub(crate) fn split_chunks(bytes: &[u8], chunk_size: usize) -> Vec<&[u8]> {
    let chunk_size = chunk_size.max(1);
    let mut chunks = Vec::with_capacity(bytes.len() / chunk_size + 1);
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.len() <= chunk_size {
            chunks.push(rest);
            break;
        }
        let end = match memchr::memchr(b'\n', &rest[chunk_size - 1..]) {
            Some(i) => chunk_size + i,
            None => rest.len(),
        };
        let (chunk, tail) = rest.split_at(end);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// The number of lines of a chunk: its newlines, plus a final line without one.
pub(crate) fn count_lines(piece: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', piece).count() + usize::from(!piece.is_empty() && !piece.ends_with(b"\n"))
}

fn parse(path: &Path, bytes: &[u8], policy: InvalidPolicy, chunk_size: usize) -> Result<Corpus, CorpusError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let pieces = split_chunks(bytes, chunk_size);
    let line_counts: Vec<usize> = pieces.par_iter().map(|p| count_lines(p)).collect();
    let lines: usize = line_counts.iter().sum();
    let first_lines: Vec<u64> = line_counts
        .iter()
        .scan(1u64, |next, &n| {
            let first = *next;
            *next += n as u64;
            Some(first)
        })
        .collect();

    let mut confidence = vec![0.0; lines];
    let mut correct = vec![false; lines];
    let mut line = vec![0u64; lines];
    let mut columns: [Vec<u32>; 4] = std::array::from_fn(|_| vec![0u32; lines]);

    // Under `Fail`, the lowest index of a chunk that failed: later chunks cannot matter any more and stop early.
    let first_failed = AtomicUsize::new(usize::MAX);
    let metas: Vec<ChunkMeta> = {
        let [agent, surface, task_ref, session_id] = &mut columns;
        let slots: Vec<Slots<'_>> = split_by(&mut confidence, &line_counts)
            .into_iter()
            .zip(split_by(&mut correct, &line_counts))
            .zip(split_by(&mut line, &line_counts))
            .zip(split_by(agent, &line_counts))
            .zip(split_by(surface, &line_counts))
            .zip(split_by(task_ref, &line_counts))
            .zip(split_by(session_id, &line_counts))
            .map(|((((((confidence, correct), line), a), s), t), i)| Slots {
                confidence,
                correct,
                line,
                columns: [a, s, t, i],
            })
            .collect();
        pieces
            .par_iter()
            .zip(slots)
            .enumerate()
            .map(|(index, (piece, slots))| parse_chunk(piece, first_lines[index], slots, policy, index, &first_failed))
            .collect()
    };

    if policy == InvalidPolicy::Fail
        && let Some((line, reason, message)) = metas.iter().find_map(|m| m.error.clone())
    {
        return Err(CorpusError::Invalid {
            path: path.to_path_buf(),
            line,
            reason,
            message,
        });
    }

    let mut stats = ReadStats {
        lines: lines as u64,
        ..ReadStats::default()
    };
    let mut skipped = [0u64; InvalidReason::ALL.len()];
    for meta in &metas {
        stats.rows += meta.rows as u64;
        stats.blank_lines += meta.blank_lines;
        stats.null_confidence += meta.null_confidence;
        for (sum, n) in skipped.iter_mut().zip(meta.skipped) {
            *sum += n;
        }
    }
    for (reason, n) in InvalidReason::ALL.into_iter().zip(skipped) {
        if n > 0 {
            stats.skipped.insert(reason, n);
        }
    }
    stats.duplicate_lines = stats.rows - distinct_hashes(&metas);
    stats.first_skipped = metas
        .iter()
        .find_map(|m| m.error.as_ref().map(|(line, _, message)| (*line, message.clone())));

    // Global dictionaries, in order of first appearance: chunk by chunk, each local dictionary in its own order.
    let mut metas = metas;
    let mut remaps: Vec<[Vec<u32>; 4]> = metas.iter().map(|_| Default::default()).collect();
    let dicts: [Vec<String>; 4] = std::array::from_fn(|k| {
        let mut map: HashMap<String, u32, FastBuild> = HashMap::default();
        for (meta, remap) in metas.iter_mut().zip(&mut remaps) {
            remap[k] = std::mem::take(&mut meta.dicts[k])
                .into_iter()
                .map(|s| {
                    let next = u32::try_from(map.len())
                        .ok()
                        .filter(|&i| i != ABSENT)
                        .expect("< 2^32 - 1 values");
                    *map.entry(s).or_insert(next)
                })
                .collect();
        }
        let mut dict = vec![String::new(); map.len()];
        for (s, i) in map {
            dict[i as usize] = s;
        }
        dict
    });
    let row_counts: Vec<usize> = metas.iter().map(|m| m.rows).collect();
    for (k, column) in columns.iter_mut().enumerate() {
        split_by(column, &line_counts)
            .into_par_iter()
            .zip(&row_counts)
            .zip(&remaps)
            .for_each(|((slots, &rows), remap)| {
                let remap = &remap[k];
                if remap.iter().enumerate().all(|(i, &g)| g as usize == i) {
                    return; // identity (always so for the first chunk)
                }
                for v in &mut slots[..rows] {
                    if *v != ABSENT {
                        *v = remap[*v as usize];
                    }
                }
            });
    }

    // Close the gaps left by blank and invalid lines (none in a clean corpus: then nothing moves).
    let rows = stats.rows as usize;
    compact(&mut confidence, &line_counts, &row_counts);
    compact(&mut correct, &line_counts, &row_counts);
    compact(&mut line, &line_counts, &row_counts);
    for column in &mut columns {
        compact(column, &line_counts, &row_counts);
    }
    debug_assert_eq!(confidence.len(), rows);

    let (mut risk_score, mut needs_review) = (Vec::new(), Vec::new());
    if metas.iter().any(|m| !m.extras.is_empty()) {
        risk_score = vec![f64::NAN; rows];
        needs_review = vec![None; rows];
        let mut offset = 0;
        for meta in &metas {
            for &(row, extra) in &meta.extras {
                risk_score[offset + row] = extra.risk_score.unwrap_or(f64::NAN);
                needs_review[offset + row] = extra.needs_review;
            }
            offset += meta.rows;
        }
        if !needs_review.iter().any(Option::is_some) {
            needs_review = Vec::new();
        }
        if risk_score.iter().all(|v| v.is_nan()) {
            risk_score = Vec::new();
        }
    }

    let [agent, surface, task_ref, session_id] = columns;
    let [agent_dict, surface_dict, task_ref_dict, session_id_dict] = dicts;
    Ok(Corpus {
        confidence,
        correct,
        line,
        agent: Column {
            values: agent,
            dict: agent_dict,
        },
        surface: Column {
            values: surface,
            dict: surface_dict,
        },
        task_ref: Column {
            values: task_ref,
            dict: task_ref_dict,
        },
        session_id: Column {
            values: session_id,
            dict: session_id_dict,
        },
        risk_score,
        needs_review,
        stats,
    })
}

/// Moves each chunk's rows (the first `rows[k]` of its `slots[k]` slots) next to the previous chunk's rows, and
/// drops the rest.
fn compact<T: Copy>(values: &mut Vec<T>, slots: &[usize], rows: &[usize]) {
    let (mut from, mut to) = (0, 0);
    for (&slots, &rows) in slots.iter().zip(rows) {
        if from != to {
            values.copy_within(from..from + rows, to);
        }
        from += slots;
        to += rows;
    }
    values.truncate(to);
    if values.capacity() > to {
        values.shrink_to_fit();
    }
}

fn parse_chunk(
    piece: &[u8],
    first_line: u64,
    slots: Slots<'_>,
    policy: InvalidPolicy,
    index: usize,
    first_failed: &AtomicUsize,
) -> ChunkMeta {
    let mut meta = ChunkMeta {
        hashes: vec![Vec::new(); SHARDS],
        ..ChunkMeta::default()
    };
    let mut interners: [Interner<'_>; 4] = Default::default();
    let Slots {
        confidence,
        correct,
        line: line_numbers,
        mut columns,
    } = slots;

    let (mut row, mut start, mut next_line) = (0, 0, first_line);
    while start < piece.len() {
        let end = memchr::memchr(b'\n', &piece[start..]).map_or(piece.len(), |i| start + i);
        let raw = &piece[start..end];
        start = end + 1;
        let line_number = next_line;
        next_line += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            meta.blank_lines += 1;
            continue;
        }
        let parsed = if line.len() > MAX_LINE_BYTES {
            Err((
                InvalidReason::LineTooLong,
                format!(
                    "the line is {} bytes, over the limit of 1 MiB for a corpus row",
                    line.len()
                ),
            ))
        } else {
            parse_line(line)
        };
        match parsed {
            Ok(parsed) => {
                confidence[row] = parsed.confidence;
                if parsed.confidence.is_nan() {
                    meta.null_confidence += 1;
                }
                if !parsed.risk_score.is_nan() || parsed.needs_review != NO_FLAG {
                    let extra = Extra {
                        risk_score: (!parsed.risk_score.is_nan()).then_some(parsed.risk_score),
                        needs_review: (parsed.needs_review != NO_FLAG).then_some(parsed.needs_review == 1),
                    };
                    meta.extras.push((row, extra));
                }
                correct[row] = parsed.correct;
                line_numbers[row] = line_number;
                for ((column, interner), text) in columns.iter_mut().zip(&mut interners).zip(parsed.breakdown) {
                    column[row] = match text {
                        Some(text) => interner.intern(text),
                        None => ABSENT,
                    };
                }
                row += 1;
                let hash = duplicate_key_hash(line);
                meta.hashes[shard_of(hash)].push(hash);
            }
            Err((reason, message)) => match policy {
                InvalidPolicy::Skip => {
                    meta.skipped[reason.index()] += 1;
                    if meta.error.is_none() {
                        meta.error = Some((line_number, reason, message));
                    }
                }
                InvalidPolicy::Fail => {
                    meta.error = Some((line_number, reason, message));
                    first_failed.fetch_min(index, Ordering::Relaxed);
                    break;
                }
            },
        }
        if policy == InvalidPolicy::Fail && first_failed.load(Ordering::Relaxed) < index {
            break; // an earlier chunk failed: its error is the one reported
        }
    }
    meta.rows = row;
    for (dict, interner) in meta.dicts.iter_mut().zip(interners) {
        *dict = interner.dict.into_iter().map(Cow::into_owned).collect();
    }
    meta
}

/// Interns strings within one chunk, in order of first appearance.
#[derive(Default)]
struct Interner<'a> {
    map: HashMap<Cow<'a, str>, u32, FastBuild>,
    dict: Vec<Cow<'a, str>>,
}

impl<'a> Interner<'a> {
    fn intern(&mut self, text: Cow<'a, str>) -> u32 {
        if let Some(&i) = self.map.get(text.as_ref()) {
            return i;
        }
        let i = u32::try_from(self.dict.len())
            .ok()
            .filter(|&i| i != ABSENT)
            .expect("fewer than 2^32 - 1 values");
        self.dict.push(text.clone());
        self.map.insert(text, i);
        i
    }
}

/// Splits `slice` into consecutive pieces of the given lengths (which sum to its length).
fn split_by<'s, T>(mut slice: &'s mut [T], lens: &[usize]) -> Vec<&'s mut [T]> {
    let mut pieces = Vec::with_capacity(lens.len());
    for &len in lens {
        let (piece, rest) = std::mem::take(&mut slice).split_at_mut(len);
        pieces.push(piece);
        slice = rest;
    }
    pieces
}

/// The number of distinct line hashes over all chunks, shard by shard in parallel.
fn distinct_hashes(metas: &[ChunkMeta]) -> u64 {
    (0..SHARDS)
        .into_par_iter()
        .map(|shard| {
            let n: usize = metas.iter().map(|m| m.hashes[shard].len()).sum();
            let mut set: HashSet<u64, BuildHasherDefault<IdentityHasher>> =
                HashSet::with_capacity_and_hasher(n, Default::default());
            for meta in metas {
                set.extend(&meta.hashes[shard]);
            }
            set.len() as u64
        })
        .sum()
}

// ---------------------------------------------------------------------------------------------------------------
// One line

/// A valid row, borrowing from the line where it can.
///
/// The optional risk fields are plain values with sentinels rather than `Option`s, so the row stays small.
struct ParsedRow<'a> {
    /// `NaN` for `"confidence": null`.
    confidence: f64,
    /// `NaN` when absent.
    risk_score: f64,
    /// [`NO_FLAG`] when absent.
    needs_review: u8,
    correct: bool,
    /// In the order of [`Chunk::columns`]: agent, surface, task_ref, session_id.
    breakdown: [Option<Cow<'a, str>>; 4],
}

/// The fields we look at; every other key is skipped without being materialised.
#[derive(Deserialize)]
struct RawRow<'a> {
    #[serde(default, borrow)]
    confidence: Field<'a>,
    #[serde(default, borrow)]
    correct: Field<'a>,
    #[serde(default, borrow)]
    agent: Field<'a>,
    #[serde(default, borrow)]
    surface: Field<'a>,
    #[serde(default, borrow)]
    task_ref: Field<'a>,
    #[serde(default, borrow)]
    session_id: Field<'a>,
}

/// The risk-floor fields, parsed in a second pass only from lines that contain their keys: adding them to
/// [`RawRow`] made every row of a plain corpus 6% slower (`memmove` doubled in `perf`: a larger struct moved per
/// row).
#[derive(Deserialize)]
struct RiskRow {
    #[serde(default)]
    risk_score: Scalar,
    #[serde(default)]
    needs_review: Scalar,
}

static RISK_SCORE_KEY: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"\"risk_score\""));
static NEEDS_REVIEW_KEY: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"\"needs_review\""));

/// A JSON value as the optional risk fields need it: a number, a boolean, null, or something else (skipped).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Scalar {
    #[default]
    Missing,
    Null,
    Bool(bool),
    Number(f64),
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v as f64))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v))
    }
    fn visit_str<E>(self, _: &str) -> Result<Scalar, E> {
        Ok(Scalar::Other("a string"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an object"))
    }
}

impl Scalar {
    fn describe(self) -> String {
        match self {
            Scalar::Missing => "nothing".to_owned(),
            Scalar::Null => "null".to_owned(),
            Scalar::Bool(v) => format!("boolean {v}"),
            Scalar::Number(v) => format_number(v),
            Scalar::Other(kind) => kind.to_owned(),
        }
    }
}

/// A JSON value as far as the rules need it: containers are skipped, strings borrowed when unescaped.
#[derive(Debug, Default, PartialEq)]
enum Field<'a> {
    #[default]
    Missing,
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(Cow<'a, str>),
    Array,
    Object,
}

impl<'de: 'a, 'a> Deserialize<'de> for Field<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FieldVisitor(std::marker::PhantomData))
    }
}

struct FieldVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for FieldVisitor<'a> {
    type Value = Field<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Field::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Field::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Field::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Field::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Field::I64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Field::F64(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Field::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Field::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Field::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::Object)
    }
}

impl<'a> Field<'a> {
    fn as_f64(&self) -> Option<f64> {
        match *self {
            Field::U64(v) => Some(v as f64),
            Field::I64(v) => Some(v as f64),
            Field::F64(v) => Some(v),
            _ => None,
        }
    }

    /// How the value is described in messages: numbers and booleans by value, strings quoted (truncated).
    fn describe(&self) -> String {
        match self {
            Field::Missing => "nothing".to_owned(),
            Field::Null => "null".to_owned(),
            Field::Bool(v) => format!("boolean {v}"),
            Field::U64(_) | Field::I64(_) | Field::F64(_) => format_number(self.as_f64().unwrap_or(f64::NAN)),
            Field::Str(s) => {
                const MAX: usize = 40;
                match s.char_indices().nth(MAX) {
                    Some((cut, _)) => format!("string {:?}...", &s[..cut]),
                    None => format!("string {s:?}"),
                }
            }
            Field::Array => "an array".to_owned(),
            Field::Object => "an object".to_owned(),
        }
    }

    fn into_text(self) -> Option<Cow<'a, str>> {
        match self {
            Field::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Formats a number for a message: plainly when of moderate size, in scientific notation otherwise.
fn format_number(v: f64) -> String {
    if v == 0.0 || (1e-6..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn parse_line(line: &[u8]) -> Result<ParsedRow<'_>, (InvalidReason, String)> {
    let text = std::str::from_utf8(line).map_err(|e| {
        (
            InvalidReason::InvalidUtf8,
            format!("invalid UTF-8 at column {}", e.valid_up_to() + 1),
        )
    })?;
    let first = text.bytes().find(|b| !b.is_ascii_whitespace());
    if first != Some(b'{') {
        return Err(match serde_json::from_str::<IgnoredAny>(text) {
            Err(e) => invalid_json(&e),
            Ok(_) => {
                let kind = match first {
                    Some(b'[') => "an array",
                    Some(b'"') => "a string",
                    Some(b't' | b'f') => "a boolean",
                    Some(b'n') => "null",
                    _ => "a number",
                };
                (
                    InvalidReason::NotAnObject,
                    format!("expected a JSON object, got {kind}"),
                )
            }
        });
    }
    let raw: RawRow<'_> = serde_json::from_str(text).map_err(|e| invalid_json(&e))?;

    let confidence = match &raw.confidence {
        Field::Missing => {
            return Err((
                InvalidReason::MissingConfidence,
                "missing field \"confidence\"".to_owned(),
            ));
        }
        Field::Null => f64::NAN,
        field => match field.as_f64() {
            None => {
                let message = format!("confidence must be a number, got {}", field.describe());
                return Err((InvalidReason::ConfidenceNotANumber, message));
            }
            Some(v) if !(0.0..=1.0).contains(&v) => {
                let message = format!("confidence {} is outside [0, 1]", format_number(v));
                return Err((InvalidReason::ConfidenceOutOfRange, message));
            }
            Some(v) => v,
        },
    };
    let correct = match &raw.correct {
        Field::Missing => return Err((InvalidReason::MissingCorrect, "missing field \"correct\"".to_owned())),
        Field::Bool(v) => *v,
        Field::U64(0) | Field::I64(0) => false,
        Field::U64(1) | Field::I64(1) => true,
        Field::F64(v) if *v == 0.0 => false,
        Field::F64(v) if *v == 1.0 => true,
        field => {
            let message = format!("correct must be true, false, 0 or 1, got {}", field.describe());
            return Err((InvalidReason::CorrectNotBoolean, message));
        }
    };
    let risk = if RISK_SCORE_KEY.find(line).is_some() || NEEDS_REVIEW_KEY.find(line).is_some() {
        serde_json::from_str::<RiskRow>(text).map_err(|e| invalid_json(&e))?
    } else {
        RiskRow {
            risk_score: Scalar::Missing,
            needs_review: Scalar::Missing,
        }
    };
    let risk_score = match risk.risk_score {
        Scalar::Missing | Scalar::Null => None,
        Scalar::Number(v) if (0.0..=1.0).contains(&v) => Some(v),
        field => {
            let message = format!("risk_score must be a number in [0, 1], got {}", field.describe());
            return Err((InvalidReason::RiskScoreInvalid, message));
        }
    };
    let needs_review = match risk.needs_review {
        Scalar::Missing | Scalar::Null => None,
        Scalar::Bool(v) => Some(v),
        field => {
            let message = format!("needs_review must be true or false, got {}", field.describe());
            return Err((InvalidReason::NeedsReviewNotBoolean, message));
        }
    };
    Ok(ParsedRow {
        confidence,
        risk_score: risk_score.unwrap_or(f64::NAN),
        needs_review: needs_review.map_or(NO_FLAG, u8::from),
        correct,
        breakdown: [
            raw.agent.into_text(),
            raw.surface.into_text(),
            raw.task_ref.into_text(),
            raw.session_id.into_text(),
        ],
    })
}

/// `invalid JSON: <serde_json's message> at column N` (serde_json's line number is always 1 here).
fn invalid_json(e: &serde_json::Error) -> (InvalidReason, String) {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    (
        InvalidReason::InvalidJson,
        format!("invalid JSON: {message} at column {}", e.column()),
    )
}

// ---------------------------------------------------------------------------------------------------------------
// Hashing

/// The key under which a corpus line is checked for duplicates: a fast, well-mixed 64-bit hash of its bytes (folded
/// multiply over 16-byte blocks, as in wyhash/foldhash). Not [`super::commits::line_hash`], the stable hash of P2's
/// line evidence.
fn duplicate_key_hash(bytes: &[u8]) -> u64 {
    const P0: u64 = 0xa076_1d64_78bd_642f;
    const P1: u64 = 0xe703_7ed1_a0b4_28db;
    const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
    fn fold(a: u64, b: u64) -> u64 {
        let p = u128::from(a) * u128::from(b);
        (p as u64) ^ ((p >> 64) as u64)
    }
    fn word(b: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    }
    let mut h = P0 ^ fold(bytes.len() as u64 ^ P1, P2);
    let mut blocks = bytes.chunks_exact(16);
    for block in &mut blocks {
        let (a, b) = block.split_at(8);
        h = fold(word(a) ^ P1, word(b) ^ h ^ P2);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let (a, b) = tail.split_at(tail.len().min(8));
        h = fold(word(a) ^ P1, word(b) ^ h ^ P2);
    }
    fold(h ^ P0, bytes.len() as u64 ^ P1)
}

/// FxHash-style hasher for the interning maps (quality only affects speed there, never results).
#[derive(Default, Clone, Copy)]
struct FastHasher(u64);

type FastBuild = BuildHasherDefault<FastHasher>;

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0 ^ w).wrapping_mul(K).rotate_left(26);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(K).rotate_left(26);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &str) -> Corpus {
        parse_corpus("t.jsonl", input.as_bytes(), InvalidPolicy::Fail).expect("valid")
    }

    #[test]
    fn read_file_maps_or_reads_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let bytes: Vec<u8> = (0..10_007u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let read = read_file(&path).unwrap();
        assert!(matches!(read, FileBytes::Mapped(_)));
        assert_eq!(&*read, &bytes[..]);
        std::fs::write(&path, b"").unwrap();
        assert_eq!(&*read_file(&path).unwrap(), b"");
        assert!(read_file(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn an_over_long_line_is_an_error_at_its_line_or_skipped_and_counted() {
        let row = r#"{"confidence": 0.5, "correct": true}"#;
        let long = format!(
            r#"{{"confidence": 0.5, "correct": true, "pad": "{}"}}"#,
            "x".repeat(MAX_LINE_BYTES)
        );
        let input = format!("{row}\n{long}\n{row}\n");
        let error = parse_corpus("c.jsonl", input.as_bytes(), InvalidPolicy::Fail).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "c.jsonl:2: the line is {} bytes, over the limit of 1 MiB for a corpus row",
                long.len()
            )
        );
        let skipped = parse_corpus("c.jsonl", input.as_bytes(), InvalidPolicy::Skip).unwrap();
        assert_eq!(skipped.stats.rows, 2);
        assert_eq!(skipped.stats.skipped.get(&InvalidReason::LineTooLong), Some(&1));
        // A line of exactly the limit is parsed as usual.
        let padded = format!(
            r#"{{"confidence": 0.5, "correct": true, "pad": "{}"}}"#,
            "x".repeat(MAX_LINE_BYTES - 47)
        );
        assert_eq!(padded.len(), MAX_LINE_BYTES);
        assert_eq!(
            parse_corpus("c.jsonl", padded.as_bytes(), InvalidPolicy::Fail)
                .unwrap()
                .stats
                .rows,
            1
        );
    }

    #[test]
    fn split_chunks_are_line_aligned_and_cover_the_input() {
        let input = b"aaa\nbb\n\nccccc\nd";
        for size in 1..=input.len() + 1 {
            let chunks = split_chunks(input, size);
            assert_eq!(chunks.concat(), input.to_vec(), "size {size}");
            for c in &chunks[..chunks.len() - 1] {
                assert!(c.ends_with(b"\n"), "size {size}: {c:?}");
            }
        }
        assert!(split_chunks(b"", 4).is_empty());
    }

    #[test]
    fn field_visitor_classifies_values() {
        let raw: RawRow<'_> = serde_json::from_str(
            r#"{"confidence": "x\ny", "correct": [1, {"a": 2}], "agent": {"b": []}, "surface": null, "task_ref": -3, "x": 1}"#,
        )
        .unwrap();
        assert_eq!(raw.confidence, Field::Str(Cow::Owned("x\ny".into())));
        assert_eq!(raw.correct, Field::Array);
        assert_eq!(raw.agent, Field::Object);
        assert_eq!(raw.surface, Field::Null);
        assert_eq!(raw.task_ref, Field::I64(-3));
        assert_eq!(raw.session_id, Field::Missing);
    }

    #[test]
    fn unescaped_strings_are_borrowed() {
        let raw: RawRow<'_> = serde_json::from_str(r#"{"agent": "plain"}"#).unwrap();
        assert!(matches!(raw.agent, Field::Str(Cow::Borrowed("plain"))));
    }

    #[test]
    fn duplicate_key_hash_separates_close_inputs() {
        let inputs: [&[u8]; 6] = [b"", b"\0", b"a", b"a\0", b"0123456789abcdef", b"0123456789abcdeg"];
        let hashes: HashSet<u64> = inputs.iter().map(|i| duplicate_key_hash(i)).collect();
        assert_eq!(hashes.len(), inputs.len());
    }

    #[test]
    fn format_number_is_readable() {
        assert_eq!(format_number(1.7), "1.7");
        assert_eq!(format_number(2.0), "2");
        assert_eq!(format_number(-0.5), "-0.5");
        assert_eq!(format_number(1e300), "1e300");
    }

    #[test]
    fn merge_keeps_first_appearance_order_across_chunks() {
        let input = "{\"confidence\":0.1,\"correct\":true,\"agent\":\"b\"}\n\
                     {\"confidence\":0.2,\"correct\":true,\"agent\":\"a\"}\n\
                     {\"confidence\":0.3,\"correct\":true,\"agent\":\"b\"}\n\
                     {\"confidence\":0.4,\"correct\":true,\"agent\":\"c\"}\n";
        let whole = parse(input);
        for size in [1, 10, 60, 1000] {
            let chunked = parse_corpus_with_chunk("t.jsonl", input.as_bytes(), InvalidPolicy::Fail, size).unwrap();
            assert_eq!(chunked, whole, "chunk size {size}");
        }
        assert_eq!(whole.agent.dict(), ["b", "a", "c"]);
    }
}
