//! Typed access to `serde_json::Value` records with messages that name the field: `field "fields.created":
//! expected a string, got number 3`.

use std::path::Path;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Map, Value};

use super::time::parse_instant;
use super::{BoardError, Record};

/// Parses a whole JSON document; a syntax error names its line: `trello.json:14: invalid JSON: EOF while parsing
/// an object at column 3`.
pub(super) fn parse_document(path: &Path, bytes: &[u8]) -> Result<Value, BoardError> {
    serde_json::from_slice(bytes)
        .map_err(|e| BoardError::invalid(path, Record::Line(e.line() as u64), invalid_json(&e)))
}

/// `invalid JSON: <serde_json's message> at column N` (the line goes into the location).
pub(super) fn invalid_json(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    format!("invalid JSON: {message} at column {}", e.column())
}

/// A value as messages show it: `number 3`, `string "x"`, `an array`, `null`.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", quoted(s)),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// A string quoted for a message, cut after 60 characters.
pub(super) fn quoted(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// A JSON object of a record, with the dotted path of its fields for messages (`""`, `"fields."`).
#[derive(Clone)]
pub(super) struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    pub prefix: String,
}

impl<'a> Obj<'a> {
    /// The record's top-level object, or an error `expected a JSON object, got …`.
    pub fn root(value: &'a Value) -> Result<Obj<'a>, String> {
        match value {
            Value::Object(map) => Ok(Obj {
                map,
                prefix: String::new(),
            }),
            other => Err(format!("expected a JSON object, got {}", describe(other))),
        }
    }

    /// An element of an array as an object; `name` is the element's full path (`timeline[2]`).
    pub fn element(value: &'a Value, name: &str) -> Result<Obj<'a>, String> {
        match value {
            Value::Object(map) => Ok(Obj {
                map,
                prefix: format!("{name}."),
            }),
            other => Err(format!("field \"{name}\": expected an object, got {}", describe(other))),
        }
    }

    /// The full name of a field, for messages.
    pub fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The value of `key`; `None` when missing or `null`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn wrong(&self, key: &str, expected: &str, got: &Value) -> String {
        format!(
            "field \"{}\": expected {expected}, got {}",
            self.name(key),
            describe(got)
        )
    }

    /// A string field; `None` when missing or `null`.
    pub fn str(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    /// A string field that must be present.
    pub fn req_str(&self, key: &str) -> Result<&'a str, String> {
        self.str(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn missing(&self, key: &str) -> String {
        format!("missing field \"{}\"", self.name(key))
    }

    /// A non-empty string field (an empty string counts as absent).
    pub fn text(&self, key: &str) -> Result<Option<&'a str>, String> {
        Ok(self.str(key)?.filter(|s| !s.trim().is_empty()))
    }

    /// An id: a string, or an integer written as such.
    pub fn id(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => id_of(value)
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a string or an integer", value)),
        }
    }

    /// An integer field.
    pub fn int(&self, key: &str) -> Result<Option<u64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
            Some(other) => Err(self.wrong(key, "a non-negative integer", other)),
        }
    }

    /// A boolean field.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "a boolean", other)),
        }
    }

    /// An object field.
    pub fn obj(&self, key: &str) -> Result<Option<Obj<'a>>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(Obj {
                map,
                prefix: format!("{}.", self.name(key)),
            })),
            Some(other) => Err(self.wrong(key, "an object", other)),
        }
    }

    /// An array field.
    pub fn arr(&self, key: &str) -> Result<Option<&'a [Value]>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(other) => Err(self.wrong(key, "an array", other)),
        }
    }

    /// The objects of an array field, each with its path (`labels[1]`).
    pub fn objects(&self, key: &str) -> Result<Vec<Obj<'a>>, String> {
        let Some(items) = self.arr(key)? else {
            return Ok(Vec::new());
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| Obj::element(item, &format!("{}[{i}]", self.name(key))))
            .collect()
    }

    /// An array of strings (empty strings skipped).
    pub fn strings(&self, key: &str) -> Result<Vec<String>, String> {
        let Some(items) = self.arr(key)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) if s.trim().is_empty() => {}
                Value::String(s) => out.push(s.clone()),
                other => {
                    return Err(format!(
                        "field \"{}[{i}]\": expected a string, got {}",
                        self.name(key),
                        describe(other)
                    ));
                }
            }
        }
        Ok(out)
    }

    /// A timestamp field (see [`parse_instant`]); an empty string counts as absent. `example` shows the expected
    /// shape in the message.
    pub fn time(&self, key: &str, tz: &TimeZone, example: &str) -> Result<Option<Timestamp>, String> {
        match self.text(key)? {
            None => Ok(None),
            Some(text) => parse_instant(text, tz)
                .map(Some)
                .ok_or_else(|| not_a_timestamp(&self.name(key), text, example)),
        }
    }
}

/// `field "closedAt": "yesterday" is not a timestamp (expected e.g. 2025-11-03T08:15:00Z)`.
pub(super) fn not_a_timestamp(name: &str, text: &str, example: &str) -> String {
    format!(
        "field \"{name}\": {} is not a timestamp (expected e.g. {example})",
        quoted(text)
    )
}

/// A string, or an integer written in decimal.
pub(super) fn id_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        _ => None,
    }
}
