//! The upstream P3 JSONL: `id, status, completed_at, outcome, reopened_at, followups[]`, every field optional.
//!
//! Lines are parsed in parallel into a small borrowed value type (no `serde_json::Value`, no copies of strings
//! that are not kept): a one-million-line export (130 MB) reads in about a second on two cores.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};

use super::json::{invalid_json, not_a_timestamp, quoted};
use super::lines::{CHUNK_SIZE, parse_lines};
use super::status::category_of_status;
use super::time::parse_instant;
use super::{BoardError, Link, LinkDirection, LinkKind, Outcome, Record, StatusCategory, Task};

const EXAMPLE: &str = "2025-11-10T15:40:00Z";

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone) -> Result<Vec<Task>, BoardError> {
    read_with_chunk(path, bytes, tz, CHUNK_SIZE)
}

pub(super) fn read_with_chunk(
    path: &Path,
    bytes: &[u8],
    tz: &TimeZone,
    chunk_size: usize,
) -> Result<Vec<Task>, BoardError> {
    parse_lines(bytes, chunk_size, |number, text| parse_line(number, text, tz).map(Some))
        .map_err(|(line, message)| BoardError::invalid(path, Record::Line(line), message))
}

/// The fields read; any other key is skipped without being materialised.
#[derive(Deserialize)]
struct RawTask<'a> {
    #[serde(default, borrow)]
    id: J<'a>,
    #[serde(default, borrow)]
    status: J<'a>,
    #[serde(default, borrow)]
    completed_at: J<'a>,
    #[serde(default, borrow)]
    outcome: J<'a>,
    #[serde(default, borrow)]
    reopened_at: J<'a>,
    #[serde(default, borrow)]
    followups: J<'a>,
    #[serde(default, borrow)]
    title: J<'a>,
    #[serde(default, borrow, rename = "type")]
    kind: J<'a>,
    #[serde(default, borrow)]
    created_at: J<'a>,
    #[serde(default, borrow)]
    labels: J<'a>,
}

/// One line (1-based `number`) of the upstream JSONL as a task; the message says what is wrong.
pub(super) fn parse_line(number: u64, text: &str, tz: &TimeZone) -> Result<Task, String> {
    let first = text.bytes().find(|b| !b.is_ascii_whitespace());
    if first != Some(b'{') {
        let value: J<'_> = serde_json::from_str(text).map_err(|e| invalid_json(&e))?;
        return Err(format!("expected a JSON object, got {value}"));
    }
    let raw: RawTask<'_> = serde_json::from_str(text).map_err(|e| invalid_json(&e))?;

    let id = match raw.id {
        J::Missing | J::Null => format!("line {number}"),
        value => value.into_id().map_err(|v| wrong("id", "a string or an integer", &v))?,
    };
    let mut task = Task::new(id, Record::Line(number));
    task.status = raw.status.into_string("status")?.unwrap_or_default();
    task.title = raw.title.into_string("title")?.unwrap_or_default();
    task.kind = raw.kind.into_string("type")?;
    task.created = time(raw.created_at, "created_at", tz)?;
    task.completed = time(raw.completed_at, "completed_at", tz)?;
    task.status_category = match category_of_status(&task.status) {
        StatusCategory::Unknown if task.completed.is_some() => StatusCategory::Done,
        category => category,
    };
    task.outcome = match raw.outcome {
        J::Missing | J::Null => None,
        J::Bool(b) => Some(if b { Outcome::Right } else { Outcome::Wrong }),
        J::Str(word) => Outcome::from_word(&word)
            .map_err(|_| wrong("outcome", "right, verified or wrong", &J::Str(word.clone())))?,
        other => return Err(wrong("outcome", "right, verified or wrong", &other)),
    };
    task.reopened_at = match raw.reopened_at {
        J::Missing | J::Null => Vec::new(),
        value @ J::Str(_) => time(value, "reopened_at", tz)?.into_iter().collect(),
        J::Arr(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                match item {
                    J::Str(_) => out.extend(time(item, &format!("reopened_at[{i}]"), tz)?),
                    other => return Err(wrong(&format!("reopened_at[{i}]"), "a timestamp string", &other)),
                }
            }
            out.sort();
            out
        }
        other => return Err(wrong("reopened_at", "a timestamp or an array of timestamps", &other)),
    };
    task.links = match raw.followups {
        J::Missing | J::Null => Vec::new(),
        J::Arr(items) => {
            let mut links = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let target = match item {
                    J::Obj(fields) => {
                        let id = fields.into_iter().find(|(k, _)| k.0 == "id").map(|(_, v)| v);
                        match id {
                            None | Some(J::Null) => return Err(format!("field \"followups[{i}]\": missing \"id\"")),
                            Some(value) => value
                                .into_id()
                                .map_err(|v| wrong(&format!("followups[{i}].id"), "a string or an integer", &v))?,
                        }
                    }
                    value => value
                        .into_id()
                        .map_err(|v| wrong(&format!("followups[{i}]"), "an id or an object with an \"id\"", &v))?,
                };
                links.push(Link {
                    kind: LinkKind::FollowUp,
                    name: "followups".to_owned(),
                    direction: LinkDirection::Outward,
                    target,
                });
            }
            links
        }
        other => return Err(wrong("followups", "an array", &other)),
    };
    task.labels = match raw.labels {
        J::Missing | J::Null => Vec::new(),
        J::Arr(items) => {
            let mut labels = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                match item {
                    J::Str(s) => labels.push(s.into_owned()),
                    other => return Err(wrong(&format!("labels[{i}]"), "a string", &other)),
                }
            }
            labels
        }
        other => return Err(wrong("labels", "an array of strings", &other)),
    };
    Ok(task)
}

fn wrong(name: &str, expected: &str, got: &J<'_>) -> String {
    format!("field \"{name}\": expected {expected}, got {got}")
}

fn time(value: J<'_>, name: &str, tz: &TimeZone) -> Result<Option<Timestamp>, String> {
    match value {
        J::Missing | J::Null => Ok(None),
        J::Str(text) if text.trim().is_empty() => Ok(None),
        J::Str(text) => parse_instant(&text, tz)
            .map(Some)
            .ok_or_else(|| not_a_timestamp(name, &text, EXAMPLE)),
        other => Err(wrong(name, "a timestamp string", &other)),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// A borrowed JSON value

/// A JSON value whose unescaped strings borrow from the line.
#[derive(Debug, Default, Clone, PartialEq)]
enum J<'a> {
    #[default]
    Missing,
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(Cow<'a, str>),
    Arr(Vec<J<'a>>),
    Obj(Vec<(Key<'a>, J<'a>)>),
}

impl<'a> J<'a> {
    fn into_string(self, name: &str) -> Result<Option<String>, String> {
        match self {
            J::Missing | J::Null => Ok(None),
            J::Str(s) => Ok(Some(s.into_owned())),
            other => Err(wrong(name, "a string", &other)),
        }
    }

    /// A string or an integer as an id; the value itself when it is neither.
    fn into_id(self) -> Result<String, J<'a>> {
        match self {
            J::Str(s) => Ok(s.into_owned()),
            J::U64(n) => Ok(n.to_string()),
            J::I64(n) => Ok(n.to_string()),
            other => Err(other),
        }
    }
}

impl fmt::Display for J<'_> {
    /// How messages show a value: `number 3`, `string "x"`, `an array`, `null`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            J::Missing => f.write_str("nothing"),
            J::Null => f.write_str("null"),
            J::Bool(b) => write!(f, "boolean {b}"),
            J::U64(n) => write!(f, "number {n}"),
            J::I64(n) => write!(f, "number {n}"),
            J::F64(n) => write!(f, "number {n}"),
            J::Str(s) => write!(f, "string {}", quoted(s)),
            J::Arr(_) => f.write_str("an array"),
            J::Obj(_) => f.write_str("an object"),
        }
    }
}

/// An object key, borrowed when unescaped.
#[derive(Debug, Clone, PartialEq)]
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for KeyVisitor<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for J<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JVisitor(std::marker::PhantomData))
    }
}

struct JVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for JVisitor<'a> {
    type Value = J<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(J::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(J::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(J::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(J::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(J::I64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(J::F64(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(J::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(J::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(J::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<J<'a>>()? {
            items.push(item);
        }
        Ok(J::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::new();
        while let Some((key, value)) = map.next_entry::<Key<'a>, J<'a>>()? {
            fields.push((key, value));
        }
        Ok(J::Obj(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_values_and_messages() {
        let raw: RawTask<'_> =
            serde_json::from_str(r#"{"id": 7, "status": "do\"ne", "followups": ["A", {"id": 3}], "x": [1]}"#).unwrap();
        assert_eq!(raw.id, J::U64(7));
        assert!(matches!(raw.status, J::Str(Cow::Owned(ref s)) if s == "do\"ne"));
        assert_eq!(raw.outcome, J::Missing);
        assert_eq!(J::F64(1.5).to_string(), "number 1.5");
        assert_eq!(J::Obj(Vec::new()).to_string(), "an object");
    }

    #[test]
    fn chunked_reading_keeps_order_and_line_numbers() {
        let input = "{\"id\":\"a\"}\n\n{\"id\":\"b\",\"status\":\"done\"}\r\n{\"id\":\"c\"}";
        for size in [1, 5, 20, 1000] {
            let tasks = read_with_chunk(Path::new("t.jsonl"), input.as_bytes(), &TimeZone::UTC, size).unwrap();
            let ids: Vec<(&str, Record)> = tasks.iter().map(|t| (t.id.as_str(), t.record)).collect();
            assert_eq!(
                ids,
                [("a", Record::Line(1)), ("b", Record::Line(3)), ("c", Record::Line(4))],
                "chunk size {size}"
            );
        }
        let bad = "{\"id\":\"a\"}\n[1]\n{\"id\":3.5}\n";
        for size in [1, 8, 1000] {
            let err = read_with_chunk(Path::new("t.jsonl"), bad.as_bytes(), &TimeZone::UTC, size).unwrap_err();
            assert_eq!(
                err.to_string(),
                "t.jsonl:2: expected a JSON object, got an array",
                "chunk size {size}"
            );
        }
    }
}
