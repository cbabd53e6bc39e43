//! `--format auto`: the format of an input from its content (and, for beads, its path).

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{BoardError, Format, Sniffed};

/// Keys that only the upstream P3 JSONL has.
const UPSTREAM_KEYS: [&str; 4] = ["followups", "outcome", "reopened_at", "completed_at"];
/// Keys that only beads has.
const BEADS_KEYS: [&str; 9] = [
    "issue_type",
    "priority",
    "dependencies",
    "closed_at",
    "close_reason",
    "acceptance_criteria",
    "design",
    "notes",
    // Beads 1.x types each record of its export (`issue`, `memory`); a `memory` record has none of the keys above.
    "_type",
];

/// Decides the format of `bytes` (the content of `path`) and says why:
///
/// - a Parquet file (it starts with `PAR1`, or its name ends in `.parquet` or `.pq`): the upstream task table;
/// - a JSON array whose first element has `number` and `state` (or `title`, `url`): GitHub; an empty array too;
/// - a JSON object with `issues`: Jira REST; with `cards`: Trello;
/// - one JSON object per line (the first line is a complete object): the upstream JSONL when it has one of
///   `followups, outcome, reopened_at, completed_at`; beads when it has one of `issue_type, priority,
///   dependencies, closed_at, close_reason, acceptance_criteria, design, notes, _type`, or when the file is
///   `.beads/issues.jsonl`; otherwise the upstream JSONL if it has an `id`;
/// - otherwise a CSV: Jira when the header has `Issue key` (or `Work item key`), Linear when it has `ID`, `Title`,
///   `Status` and one of `Team`, `Cycle Number`, `Triaged`.
///
/// Anything else, GitHub timeline events included (they are joined to an issue list, see
/// [`super::join_github_timeline`]), fails with a message saying what was seen.
pub fn sniff(path: &Path, bytes: &[u8]) -> Result<Sniffed, BoardError> {
    if bytes.starts_with(b"PAR1") {
        return Ok(Sniffed {
            format: Format::Parquet,
            reason: "a Parquet file (it starts with PAR1): the upstream P3 task table".to_owned(),
        });
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("pq"))
    {
        return Ok(Sniffed {
            format: Format::Parquet,
            reason: "a file named .parquet: the upstream P3 task table".to_owned(),
        });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let unknown = |message: String| BoardError::format(path, format!("cannot tell the format: {message}"));
    let Some(start) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Err(unknown("the file is empty".to_owned()));
    };
    let sniffed = |format: Format, reason: String| Ok(Sniffed { format, reason });
    match bytes[start] {
        b'[' => match first_element_keys(bytes) {
            Ok(None) => sniffed(
                Format::GithubJson,
                "an empty JSON array: an empty GitHub issue list".to_owned(),
            ),
            Ok(Some(keys)) => {
                let has = |k: &str| keys.iter().any(|key| key == k);
                if has("number") && (has("state") || has("title") || has("url")) {
                    sniffed(
                        Format::GithubJson,
                        "a JSON array of objects with \"number\" and \"state\": a GitHub issue list (gh issue list \
                         --json)"
                            .to_owned(),
                    )
                } else if has("event") {
                    Err(unknown(timeline_message()))
                } else {
                    Err(unknown(format!(
                        "a JSON array of objects with keys {}, not a GitHub issue list (no \"number\" and \"state\")",
                        key_list(&keys)
                    )))
                }
            }
            Err(message) => Err(unknown(format!("a JSON array, but {message}"))),
        },
        b'{' => {
            if let Some(keys) = first_line_keys(bytes) {
                let has = |k: &str| keys.iter().any(|key| key == k);
                if has("issues") {
                    return sniffed(Format::JiraJson, jira_reason());
                }
                if has("cards") {
                    return sniffed(Format::TrelloJson, trello_reason());
                }
                if has("event") {
                    return Err(unknown(timeline_message()));
                }
                let upstream: Vec<&str> = UPSTREAM_KEYS.into_iter().filter(|k| has(k)).collect();
                let beads: Vec<&str> = BEADS_KEYS.into_iter().filter(|k| has(k)).collect();
                if !upstream.is_empty() {
                    return sniffed(
                        Format::Jsonl,
                        format!(
                            "one JSON object per line with {}: the upstream P3 JSONL",
                            quoted_list(&upstream)
                        ),
                    );
                }
                if !beads.is_empty() {
                    return sniffed(
                        Format::Beads,
                        format!(
                            "one JSON object per line with {}: a beads issues.jsonl",
                            quoted_list(&beads)
                        ),
                    );
                }
                if is_beads_path(path) {
                    return sniffed(
                        Format::Beads,
                        "one JSON object per line in .beads/issues.jsonl: a beads issues.jsonl".to_owned(),
                    );
                }
                if has("id") {
                    return sniffed(
                        Format::Jsonl,
                        "one JSON object per line with an \"id\" and no beads field: the upstream P3 JSONL".to_owned(),
                    );
                }
                return Err(unknown(if keys.is_empty() {
                    "an empty JSON object, which no supported format is (expected one object per task, with an \
                     \"id\")"
                        .to_owned()
                } else {
                    format!(
                        "one JSON object per line with keys {}, which no supported format has (expected \"id\")",
                        key_list(&keys)
                    )
                }));
            }
            let (keys, error) = top_level_keys(bytes);
            let has = |k: &str| keys.iter().any(|key| key == k);
            if has("issues") {
                sniffed(Format::JiraJson, jira_reason())
            } else if has("cards") {
                sniffed(Format::TrelloJson, trello_reason())
            } else if keys.is_empty() {
                Err(unknown(format!(
                    "not valid JSON ({})",
                    error.unwrap_or_else(|| "an empty object".to_owned())
                )))
            } else if keys
                .iter()
                .all(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
            {
                Err(unknown(timeline_message()))
            } else {
                Err(unknown(format!(
                    "a JSON object with keys {}: neither a Jira REST response (no \"issues\") nor a Trello board (no \
                     \"cards\")",
                    key_list(&keys)
                )))
            }
        }
        _ => match json_scalar(&bytes[start..]) {
            // Valid JSON of another type is no CSV file: say what it is.
            Some(kind) => Err(unknown(format!(
                "{kind}, not a board export (a JSON array, a JSON object or one object per line)"
            ))),
            None => sniff_csv(bytes).map_err(unknown),
        },
    }
}

/// What a whole document that is a JSON scalar is (`a JSON number`, `a JSON string`, …), if it is one.
fn json_scalar(bytes: &[u8]) -> Option<&'static str> {
    match serde_json::from_slice::<serde_json::Value>(bytes).ok()? {
        serde_json::Value::Number(_) => Some("a JSON number"),
        serde_json::Value::String(_) => Some("a JSON string"),
        serde_json::Value::Bool(_) => Some("a JSON boolean"),
        serde_json::Value::Null => Some("JSON null"),
        _ => None,
    }
}

fn jira_reason() -> String {
    "a JSON object with an \"issues\" array: a Jira REST search response".to_owned()
}

fn trello_reason() -> String {
    "a JSON object with a \"cards\" array: a Trello board export".to_owned()
}

fn timeline_message() -> String {
    "these are GitHub timeline events, not a board: give them together with the GitHub issue list they belong to"
        .to_owned()
}

fn is_beads_path(path: &Path) -> bool {
    let mut components = path.components().rev();
    let file = components.next().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let dir = components.next().map(|c| c.as_os_str().to_string_lossy().into_owned());
    file.as_deref() == Some("issues.jsonl") && dir.as_deref() == Some(".beads")
}

fn sniff_csv(bytes: &[u8]) -> Result<Sniffed, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut record = csv::StringRecord::new();
    let headers: Vec<String> = match reader.read_record(&mut record) {
        Ok(true) => record.iter().map(|h| h.trim().to_owned()).collect(),
        _ => return Err("neither JSON nor a CSV file with a header".to_owned()),
    };
    let has = |name: &str| headers.iter().any(|h| h.eq_ignore_ascii_case(name));
    if has("Issue key") || has("Work item key") {
        return Ok(Sniffed {
            format: Format::JiraCsv,
            reason: format!(
                "a CSV header with an \"{}\" column: a Jira CSV export",
                if has("Issue key") { "Issue key" } else { "Work item key" }
            ),
        });
    }
    if has("ID") && has("Title") && has("Status") && (has("Team") || has("Cycle Number") || has("Triaged")) {
        let shape = if has("Related to") || has("Blocked by") || has("Duplicate of") {
            "the 34-column shape, with links"
        } else {
            "the 30-column shape, without links"
        };
        return Ok(Sniffed {
            format: Format::LinearCsv,
            reason: format!("a CSV header with ID, Title, Status and Team: a Linear CSV export ({shape})"),
        });
    }
    let first: Vec<&str> = headers.iter().take(6).map(String::as_str).collect();
    Err(format!(
        "not JSON, and the first line ({}{}) is neither a Jira CSV header (no \"Issue key\" column) nor a Linear one \
         (ID, Title, Status, Team); pass --format",
        first.join(", "),
        if headers.len() > 6 { ", …" } else { "" }
    ))
}

fn key_list(keys: &[String]) -> String {
    let shown: Vec<&str> = keys.iter().take(8).map(String::as_str).collect();
    let more = if keys.len() > 8 { ", …" } else { "" };
    format!("{}{more}", quoted_list(&shown))
}

fn quoted_list(keys: &[&str]) -> String {
    keys.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
}

// ---------------------------------------------------------------------------------------------------------------
// Keys without values

/// The keys of the first non-blank line, if that line is one complete JSON object.
pub(super) fn first_line_keys(bytes: &[u8]) -> Option<Vec<String>> {
    let line = bytes
        .split(|&b| b == b'\n')
        .find(|line| !line.iter().all(u8::is_ascii_whitespace))?;
    serde_json::from_slice::<Keys>(line).ok().map(|k| k.0)
}

/// The keys of the first element of a top-level JSON array, read without parsing the rest (which may be
/// truncated): `Ok(None)` for an empty array.
pub(super) fn first_element_keys(bytes: &[u8]) -> Result<Option<Vec<String>>, String> {
    struct First<'s>(&'s mut Option<Result<Vec<String>, String>>);
    impl<'de> Visitor<'de> for First<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            *self.0 = Some(match seq.next_element::<Keys>() {
                Ok(Some(keys)) => Ok(keys.0),
                Ok(None) => return Ok(()),
                Err(e) => Err(format!("its first element is not a JSON object ({e})")),
            });
            Err(de::Error::custom("stop"))
        }
    }
    let mut first = None;
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let result = de::Deserializer::deserialize_seq(&mut deserializer, First(&mut first));
    match (first, result) {
        (Some(keys), _) => keys.map(Some),
        (None, Ok(())) => Ok(None),
        (None, Err(e)) => Err(format!("not valid JSON ({e})")),
    }
}

/// The keys of a top-level JSON object, as far as the document can be parsed, and the error that stopped it.
pub(super) fn top_level_keys(bytes: &[u8]) -> (Vec<String>, Option<String>) {
    struct Collect<'s>(&'s mut Vec<String>);
    impl<'de> Visitor<'de> for Collect<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                self.0.push(key);
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut keys = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let result = de::Deserializer::deserialize_map(&mut deserializer, Collect(&mut keys));
    (keys, result.err().map(|e| e.to_string()))
}

/// The keys of a JSON object, values skipped.
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Keys;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    keys.push(key);
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(KeysVisitor)
    }
}
