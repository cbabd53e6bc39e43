//! The upstream P3 task table in Parquet (`--format parquet`): one row per task, the fields of the upstream JSONL
//! as columns, read by the JSONL's own rules (every row is turned into the JSON object the JSONL line would be, and
//! parsed as one), so a task reads the same from either file.
//!
//! | column | Parquet type | as the JSONL field |
//! |---|---|---|
//! | `id` | string or integer | `id`; a null id becomes `row N` |
//! | `status`, `title`, `type` | string | the same |
//! | `created_at`, `completed_at` | string: RFC 3339, or a date and time without offset read in `--tz` | the same |
//! | `outcome` | string (`right`, `verified`, `wrong`, …) or boolean | the same |
//! | `reopened_at` | list of strings, or one string | a timestamp or an array of timestamps |
//! | `followups` | list of strings or integers | an array of ids |
//! | `labels` | list of strings | an array of strings |
//!
//! A string cell of `reopened_at`, `followups` or `labels` that starts with `[` is JSON text and read as the JSON
//! array it holds (`["SHOP-9", {"id": "SHOP-11"}]`): what a tool that flattens nested JSON into text columns
//! writes. Other columns are not read; a null is as a missing JSONL field. Times are text: the polars this crate
//! is built with has no temporal types, so a native Parquet timestamp column is not read (write RFC 3339 text).
//! A column of any other type (a struct, a binary column) is an error naming the column and its type.
//!
//! Rows are counted from 1: `tasks.parquet: row 3: column "completed_at": …`.

use std::path::Path;

use jiff::tz::TimeZone;
use polars::prelude::*;
use serde_json::{Map, Value};

use super::{BoardError, Record, Task};

/// The columns read, the upstream JSONL's fields.
const COLUMNS: [&str; 10] = [
    "id",
    "status",
    "completed_at",
    "outcome",
    "reopened_at",
    "followups",
    "title",
    "type",
    "created_at",
    "labels",
];
/// The columns whose string cells may hold a JSON array as text.
const LISTS: [&str; 3] = ["reopened_at", "followups", "labels"];

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone) -> Result<Vec<Task>, BoardError> {
    let unreadable = |e: PolarsError| BoardError::format(path, format!("not a readable Parquet file: {e}"));
    let frame = crate::scan::input::read_parquet_columns(bytes, &COLUMNS);
    let frame = match frame {
        Some(read) => read.map_err(unreadable)?.1,
        None => {
            return Err(BoardError::format(
                path,
                "not a readable Parquet file: the decoder failed (a damaged file?)",
            ));
        }
    };
    let mut columns: Vec<(&'static str, Series)> = Vec::new();
    for name in COLUMNS {
        let Ok(column) = frame.column(name) else {
            continue;
        };
        let series = column.as_materialized_series().rechunk();
        if !readable(series.dtype()) {
            return Err(BoardError::format(
                path,
                format!(
                    "column {name:?} holds {}, which the task table does not use (strings, integers, booleans, lists \
                     of them)",
                    series.dtype()
                ),
            ));
        }
        columns.push((name, series));
    }
    let mut tasks = Vec::with_capacity(frame.height());
    for row in 0..frame.height() {
        let number = row as u64 + 1;
        let invalid = |message: String| BoardError::invalid(path, Record::Row(number), message);
        let mut object = Map::new();
        for (name, series) in &columns {
            let value = series.get(row).map_err(|e| invalid(format!("column {name:?}: {e}")))?;
            let value = json(&value);
            let value = match value {
                Value::String(text) if LISTS.contains(name) && text.trim_start().starts_with('[') => {
                    serde_json::from_str(&text)
                        .map_err(|e| invalid(format!("column {name:?}: not a JSON array ({e})")))?
                }
                value => value,
            };
            if !value.is_null() {
                object.insert((*name).to_owned(), value);
            }
        }
        let has_id = object.contains_key("id");
        let text = Value::Object(object).to_string();
        let mut task = super::jsonl::parse_line(number, &text, tz).map_err(|message| {
            // The JSONL's messages name a field; here it is a column.
            invalid(match message.strip_prefix("field \"") {
                Some(rest) => format!("column \"{rest}"),
                None => message,
            })
        })?;
        if !has_id {
            task.id = format!("row {number}");
        }
        task.record = Record::Row(number);
        tasks.push(task);
    }
    Ok(tasks)
}

/// Whether a column's type is one the task table uses: strings, integers, floats (for messages about them),
/// booleans, nulls, and lists of these.
fn readable(dtype: &DataType) -> bool {
    match dtype {
        DataType::String | DataType::Boolean | DataType::Null => true,
        DataType::List(inner) => readable(inner) && !matches!(**inner, DataType::List(_)),
        other => other.is_primitive_numeric(),
    }
}

/// A cell as the JSON value of the JSONL field.
fn json(value: &AnyValue<'_>) -> Value {
    match value {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => Value::Bool(*b),
        AnyValue::String(s) => Value::String((*s).to_owned()),
        AnyValue::StringOwned(s) => Value::String(s.to_string()),
        AnyValue::List(series) => Value::Array(series.iter().map(|v| json(&v)).collect()),
        other => {
            if let Some(n) = other.extract::<i64>().filter(|_| other.is_integer()) {
                Value::from(n)
            } else if let Some(n) = other.extract::<u64>().filter(|_| other.is_integer()) {
                Value::from(n)
            } else {
                other
                    .extract::<f64>()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            }
        }
    }
}
