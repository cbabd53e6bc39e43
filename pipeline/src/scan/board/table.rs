//! CSV exports read as raw records: columns are found by name (a name may repeat, as Jira's `Labels` does).

use crate::scan::input::LineCounter;
use std::path::Path;

use csv::StringRecord;

use super::{BoardError, Record};

/// A CSV file: its header and its rows, each with the line where it starts.
pub(super) struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<(u64, StringRecord)>,
}

impl Table {
    /// Reads all records; the first is the header (names trimmed). A row with more or fewer fields than the header
    /// is an error at its line: exports write every field, so a ragged row is a damaged file (a stray comma or
    /// quote), and reading it by position would put values under the wrong column.
    pub fn read(path: &Path, bytes: &[u8]) -> Result<Table, BoardError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        let mut headers: Option<Vec<String>> = None;
        let mut rows = Vec::new();
        let mut record = StringRecord::new();
        let mut lines = LineCounter::new(bytes);
        loop {
            match reader.read_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {
                    let line = record.position().map_or(1, |p| lines.line_at(p.byte()));
                    match &headers {
                        None => headers = Some(record.iter().map(|h| h.trim().to_owned()).collect()),
                        Some(header) if record.len() != header.len() => {
                            let message = format!(
                                "{} fields where the header has {}: a damaged row (a stray comma or quote?)",
                                record.len(),
                                header.len()
                            );
                            return Err(BoardError::invalid(path, Record::Line(line), message));
                        }
                        Some(_) => rows.push((line, record.clone())),
                    }
                }
                Err(e) => {
                    let line = e.position().map_or(1, |p| lines.line_at(p.byte()));
                    let message = match e.kind() {
                        csv::ErrorKind::Utf8 { err, .. } => {
                            let column = headers
                                .as_ref()
                                .and_then(|h| h.get(err.field()))
                                .map_or_else(|| format!("{}", err.field() + 1), |name| format!("{name:?}"));
                            format!("invalid UTF-8 in column {column}")
                        }
                        _ => format!("invalid CSV: {e}"),
                    };
                    return Err(BoardError::invalid(path, Record::Line(line), message));
                }
            }
        }
        let Some(headers) = headers else {
            return Err(BoardError::format(path, "the file is empty (no CSV header)"));
        };
        Ok(Table { headers, rows })
    }

    /// The first column named one of `names` (case-insensitive).
    pub fn column(&self, names: &[&str]) -> Option<usize> {
        names
            .iter()
            .find_map(|name| self.headers.iter().position(|h| h.eq_ignore_ascii_case(name)))
    }

    /// The first column named one of `names`, or the error `missing column "<names[0]>"` on line 1.
    pub fn required(&self, path: &Path, names: &[&str]) -> Result<usize, BoardError> {
        self.column(names).ok_or_else(|| {
            let alternatives: Vec<String> = names[1..].iter().map(|n| format!("{n:?}")).collect();
            let message = if alternatives.is_empty() {
                format!("missing column {:?}", names[0])
            } else {
                format!("missing column {:?} (or {})", names[0], alternatives.join(", "))
            };
            BoardError::invalid(path, Record::Line(1), message)
        })
    }

    /// Every column named `name` (case-insensitive).
    pub fn columns(&self, name: &str) -> Vec<usize> {
        (0..self.headers.len())
            .filter(|&i| self.headers[i].eq_ignore_ascii_case(name))
            .collect()
    }
}

/// The trimmed value of column `index`; empty when the row is shorter or the column absent.
pub(super) fn cell(record: &StringRecord, index: Option<usize>) -> &str {
    index.and_then(|i| record.get(i)).map_or("", str::trim)
}

/// A value split at commas, trimmed, empty parts dropped.
pub(super) fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty())
}
