//! The envelope of every report (`p1.json`, `p2.json`, …): what ran, on which inputs, under which
//! pre-registration, and what it wrote — so a report can be audited and reproduced.
//!
//! Determinism: nothing here reads a clock. `generated_at` comes from `--as-of`, else `SOURCE_DATE_EPOCH`, else the
//! newest input timestamp the caller found ([`generated_at`]); inputs and artifacts are listed sorted by path.

use std::path::Path;

use serde::Serialize;

pub use crate::prereg::PreregRef;
use crate::prereg::sha256_hex;

/// How a run ended, as the report (and the exit code) says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// Some inputs were missing or skipped, the rest was reported.
    Partial,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputFile {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
    /// Rows (or records) read from it, when the format has rows.
    pub rows: Option<u64>,
}

impl InputFile {
    /// Describes `bytes` read from `path` whose sha256 was already computed (hashing a large input can then run
    /// beside parsing it).
    pub fn hashed(path: &Path, sha256: String, bytes: u64, rows: Option<u64>) -> Self {
        Self {
            path: path.display().to_string(),
            sha256,
            bytes,
            rows,
        }
    }

    /// Describes `bytes` read from `path`.
    pub fn new(path: &Path, bytes: &[u8], rows: Option<u64>) -> Self {
        Self::with_sha256(path, sha256_hex(bytes), bytes.len() as u64, rows)
    }

    /// Describes a file whose sha256 is already known (computed while the file was parsed).
    pub fn with_sha256(path: &Path, sha256: String, bytes: u64, rows: Option<u64>) -> Self {
        Self {
            path: path.display().to_string(),
            sha256,
            bytes,
            rows,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope<R> {
    /// `phase0 p1`, `phase0 p2`, …
    pub command: String,
    pub version: &'static str,
    pub status: Status,
    /// A stable machine-readable code when `status` is not `ok` (`input-missing`, `invalid-rows-skipped`, …).
    pub error_code: Option<String>,
    /// From `--as-of` / `SOURCE_DATE_EPOCH`; `null` when neither was given and the inputs carry no timestamps
    /// (never the wall clock).
    pub generated_at: Option<String>,
    pub prereg: PreregRef,
    pub inputs: Vec<InputFile>,
    /// Files written next to the report, relative to the output directory.
    pub artifacts: Vec<String>,
    pub report: R,
}

impl<R: Serialize> Envelope<R> {
    pub fn new(command: &str, prereg: PreregRef, generated_at: Option<String>, report: R) -> Self {
        Self {
            command: command.to_string(),
            version: env!("CARGO_PKG_VERSION"),
            status: Status::Ok,
            error_code: None,
            generated_at,
            prereg,
            inputs: Vec::new(),
            artifacts: Vec::new(),
            report,
        }
    }

    /// Pretty JSON with a trailing newline; inputs and artifacts sorted so the bytes depend on content only.
    pub fn to_json(&mut self) -> serde_json::Result<Vec<u8>> {
        self.sort_lists();
        self.json()
    }

    /// Sorts the inputs and artifacts, as [`Self::to_json`] does.
    pub fn sort_lists(&mut self) {
        self.inputs.sort_by(|a, b| a.path.cmp(&b.path));
        self.artifacts.sort();
        self.artifacts.dedup();
    }

    /// The date as the markdown reports print it.
    pub fn generated_at_text(&self) -> &str {
        self.generated_at
            .as_deref()
            .unwrap_or("not given (use --as-of or SOURCE_DATE_EPOCH)")
    }

    /// Pretty JSON with a trailing newline, of an envelope whose lists [`Self::sort_lists`] has sorted.
    pub fn json(&self) -> serde_json::Result<Vec<u8>> {
        super::pretty_json(self)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AsOfError {
    #[error("--as-of {0:?} is not a date (YYYY-MM-DD) or an RFC 3339 timestamp")]
    AsOf(String),
    #[error("--as-of {0:?} is outside the dates phase0 accepts, 1970-01-01 to 9998-12-31")]
    AsOfRange(String),
    #[error("SOURCE_DATE_EPOCH={0:?} is not a whole number of seconds")]
    SourceDateEpoch(String),
}

/// The report timestamp (RFC 3339, UTC, seconds): `as_of` (a date means its midnight UTC), else
/// `SOURCE_DATE_EPOCH` (seconds since the epoch), else `newest_input` (seconds since the epoch, a timestamp found
/// *in* the inputs), else `None`.
pub fn generated_at(
    as_of: Option<&str>,
    source_date_epoch: Option<&str>,
    newest_input: Option<i64>,
) -> Result<Option<String>, AsOfError> {
    let timestamp = if let Some(as_of) = as_of {
        let trimmed = as_of.trim().to_string();
        let Some((timestamp, _)) = parse_as_of(as_of) else {
            // A real calendar date that jiff cannot place (the last hours of 9999) is out of range, not malformed.
            return Err(match trimmed.parse::<jiff::civil::Date>() {
                Ok(_) => AsOfError::AsOfRange(trimmed),
                Err(_) => AsOfError::AsOf(trimmed),
            });
        };
        if !accepted(timestamp) {
            return Err(AsOfError::AsOfRange(as_of.trim().to_string()));
        }
        timestamp
    } else if let Some(epoch) = source_date_epoch {
        epoch
            .trim()
            .parse::<i64>()
            .ok()
            .and_then(|seconds| jiff::Timestamp::from_second(seconds).ok())
            .ok_or_else(|| AsOfError::SourceDateEpoch(epoch.to_string()))?
    } else {
        match newest_input.and_then(|seconds| jiff::Timestamp::from_second(seconds).ok()) {
            Some(timestamp) => timestamp,
            None => return Ok(None),
        }
    };
    Ok(Some(timestamp.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()))
}

/// Whether `timestamp` lies in the range of dates phase0 accepts as an as-of date: from the Unix epoch (git has no
/// earlier commit times) to the end of 9998 (so that every date of that range, in every time zone, has a day after
/// it; jiff's own range ends during 9999-12-31).
pub fn accepted(timestamp: jiff::Timestamp) -> bool {
    let last = jiff::civil::date(9998, 12, 31)
        .at(23, 59, 59, 0)
        .to_zoned(jiff::tz::TimeZone::UTC);
    timestamp >= jiff::Timestamp::UNIX_EPOCH && last.is_ok_and(|last| timestamp <= last.timestamp())
}

/// An RFC 3339 timestamp, or a bare `YYYY-MM-DD` date taken as midnight UTC (the flag is `true` for a date).
pub fn parse_as_of(value: &str) -> Option<(jiff::Timestamp, bool)> {
    let value = value.trim();
    if let Ok(timestamp) = value.parse::<jiff::Timestamp>() {
        return Some((timestamp, false));
    }
    let date = value.parse::<jiff::civil::Date>().ok()?;
    Some((date.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp(), true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_at_precedence_and_formats() {
        let at = |a, s, n| generated_at(a, s, n).unwrap();
        assert_eq!(
            at(Some("2026-11-21"), Some("0"), Some(5)).as_deref(),
            Some("2026-11-21T00:00:00Z")
        );
        assert_eq!(
            at(Some("2026-11-21T10:30:00+02:00"), None, None).as_deref(),
            Some("2026-11-21T08:30:00Z")
        );
        assert_eq!(
            at(None, Some("1700000000"), Some(5)).as_deref(),
            Some("2023-11-14T22:13:20Z")
        );
        assert_eq!(
            at(None, None, Some(1_800_000_000)).as_deref(),
            Some("2027-01-15T08:00:00Z")
        );
        assert_eq!(at(None, None, None), None);
        assert_eq!(
            generated_at(Some("soon"), None, None),
            Err(AsOfError::AsOf("soon".into()))
        );
        assert_eq!(
            generated_at(None, Some("x1"), None),
            Err(AsOfError::SourceDateEpoch("x1".into()))
        );
        // Both ends of the calendar get the same answer, in our words.
        for outside in ["0000-01-01", "1969-12-31", "9999-12-01", "9999-12-31"] {
            assert_eq!(
                generated_at(Some(outside), None, None),
                Err(AsOfError::AsOfRange(outside.into())),
                "{outside}"
            );
        }
        assert_eq!(
            AsOfError::AsOfRange("0000-01-01".into()).to_string(),
            "--as-of \"0000-01-01\" is outside the dates phase0 accepts, 1970-01-01 to 9998-12-31"
        );
        assert_eq!(
            at(Some("9998-12-31"), None, None).as_deref(),
            Some("9998-12-31T00:00:00Z")
        );
        assert_eq!(
            at(Some("1970-01-01"), None, None).as_deref(),
            Some("1970-01-01T00:00:00Z")
        );
    }

    #[test]
    fn json_is_sorted_and_stable() {
        let prereg = PreregRef {
            path: "experiments/p1.toml (embedded)".into(),
            sha256: "ab".into(),
        };
        let mut envelope = Envelope::new(
            "phase0 p1",
            prereg,
            Some("2026-11-21T00:00:00Z".into()),
            serde_json::json!({"x": 1}),
        );
        envelope
            .inputs
            .push(InputFile::new(Path::new("b.jsonl"), b"{}\n", Some(1)));
        envelope.inputs.push(InputFile::new(Path::new("a.jsonl"), b"", Some(0)));
        envelope.artifacts = vec!["p1.md".into(), "p1-roc.svg".into(), "p1.md".into()];
        let first = envelope.to_json().unwrap();
        let value: serde_json::Value = serde_json::from_slice(&first).unwrap();
        assert_eq!(value["inputs"][0]["path"], "a.jsonl");
        assert_eq!(
            value["inputs"][0]["sha256"],
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(value["artifacts"], serde_json::json!(["p1-roc.svg", "p1.md"]));
        assert_eq!(value["status"], "ok");
        assert_eq!(value["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(envelope.to_json().unwrap(), first);
    }
}
