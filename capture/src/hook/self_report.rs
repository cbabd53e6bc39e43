//! The agent's optional self-report (`REFLECTION_INPUT`), merged into the sidecar only when it is trustworthy.

use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::instructions::BLOCK_TAG;
use crate::redact::redact;
use crate::reflection::{MostLikelyWrong, UnitInterval};

/// The most bytes of self-report the hook reads.
pub const MAX_SELF_REPORT_BYTES: u64 = 1024 * 1024;

/// What an agent may write to `REFLECTION_INPUT`. Unknown keys are refused so that a misspelt field shows up as a
/// degraded sidecar instead of being dropped without a trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct SelfReport {
    #[serde(default)]
    pub confidence: Option<UnitInterval>,
    #[serde(default)]
    pub most_likely_wrong: Option<MostLikelyWrong>,
    #[serde(default)]
    pub known_not_in_diff: Option<String>,
    /// The session the report was written for; when present it must match the hook's session.
    #[serde(default)]
    pub session_id: Option<String>,
}

crate::reflection::objects_only!(SelfReport);

/// Why a self-report was not merged (the sidecar is then `degraded`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotMerged {
    Missing,
    Unreadable(String),
    TooLarge,
    Malformed(String),
    OtherSession(String),
    /// Not written since this session's previous sidecar: it describes an earlier turn.
    Stale,
}

impl std::fmt::Display for NotMerged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotMerged::Missing => write!(f, "no self-report"),
            NotMerged::Unreadable(why) => write!(f, "self-report unreadable: {why}"),
            NotMerged::TooLarge => write!(f, "self-report larger than {MAX_SELF_REPORT_BYTES} bytes"),
            NotMerged::Malformed(why) => write!(f, "self-report malformed: {why}"),
            NotMerged::OtherSession(other) => write!(f, "self-report belongs to session {other:?}"),
            NotMerged::Stale => write!(f, "self-report predates this session's previous sidecar"),
        }
    }
}

/// Loads the self-report at `path` for `session_id`. `previous_sidecar` is when this session last wrote a sidecar:
/// a report not modified since then belongs to an earlier turn. Free text comes back redacted.
///
/// Only a regular file is read, opened without blocking and at most [`MAX_SELF_REPORT_BYTES`] of it, so a FIFO or
/// a device (`/dev/zero`) cannot hang the hook; a path inside the repository `root` must not lead out of it through
/// a symlink.
pub fn load(
    path: &Path,
    root: &Path,
    session_id: &str,
    previous_sidecar: Option<SystemTime>,
) -> Result<SelfReport, NotMerged> {
    let file = match crate::regular_file::open_regular(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(NotMerged::Missing),
        Err(error) => return Err(NotMerged::Unreadable(error.to_string())),
    };
    if leaves_root(path, root) {
        return Err(NotMerged::Unreadable(
            "a symlink out of the repository; not followed".to_string(),
        ));
    }
    let metadata = file
        .metadata()
        .map_err(|error| NotMerged::Unreadable(error.to_string()))?;
    if metadata.len() > MAX_SELF_REPORT_BYTES {
        return Err(NotMerged::TooLarge);
    }
    if let (Some(previous), Ok(modified)) = (previous_sidecar, metadata.modified())
        && modified <= previous
    {
        return Err(NotMerged::Stale);
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_SELF_REPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| NotMerged::Unreadable(error.to_string()))?;
    if bytes.len() as u64 > MAX_SELF_REPORT_BYTES {
        return Err(NotMerged::TooLarge);
    }
    let report = parse(&bytes)?;
    if let Some(other) = report.session_id.as_deref()
        && other != session_id
    {
        return Err(NotMerged::OtherSession(other.to_string()));
    }
    Ok(report)
}

/// Whether `path`, named inside `root`, resolves (through symlinks) to a file outside it.
fn leaves_root(path: &Path, root: &Path) -> bool {
    if !path.starts_with(root) {
        return false; // configured outside the repository on purpose (REFLECTION_INPUT)
    }
    match (std::fs::canonicalize(path), std::fs::canonicalize(root)) {
        (Ok(target), Ok(root)) => !target.starts_with(root),
        _ => true,
    }
}

/// The self-report in the last fenced block tagged [`BLOCK_TAG`] of an agent's final message (Claude Code's
/// `last_assistant_message`, Codex's `last-assistant-message`). `Missing` when there is no such block; an opened
/// block that never closes is malformed. Free text comes back redacted.
pub fn from_message(message: &str) -> Result<SelfReport, NotMerged> {
    let mut last: Option<Result<String, ()>> = None;
    let mut open: Option<(usize, String)> = None;
    for line in message.lines() {
        let trimmed = line.trim();
        let ticks = trimmed.bytes().take_while(|&b| b == b'`').count();
        match &mut open {
            Some((fence, body)) => {
                if ticks >= *fence && trimmed[ticks..].trim().is_empty() {
                    last = Some(Ok(std::mem::take(body)));
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
            None if ticks >= 3 && trimmed[ticks..].trim() == BLOCK_TAG => open = Some((ticks, String::new())),
            None => {}
        }
    }
    if open.is_some() {
        last = Some(Err(()));
    }
    match last {
        None => Err(NotMerged::Missing),
        Some(Err(())) => Err(NotMerged::Malformed(format!(
            "the last ```{BLOCK_TAG} block is not closed"
        ))),
        Some(Ok(body)) => parse(body.as_bytes()),
    }
}

/// Parses and redacts a self-report.
pub fn parse(bytes: &[u8]) -> Result<SelfReport, NotMerged> {
    let mut report: SelfReport =
        serde_json::from_slice(bytes).map_err(|error| NotMerged::Malformed(error.to_string()))?;
    if let Some(wrong) = &mut report.most_likely_wrong {
        wrong.description = redact(&wrong.description).into_owned();
    }
    if let Some(known) = &mut report.known_not_in_diff {
        *known = redact(known).into_owned();
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reflection::Surface;

    #[test]
    fn a_complete_report_parses() {
        let report = parse(
            br#"{"confidence":0.7,"most_likely_wrong":{"surface":"data","description":"migration order"},
                "known_not_in_diff":"ran it by hand","session_id":"s1"}"#,
        )
        .unwrap();
        assert_eq!(report.confidence.map(UnitInterval::get), Some(0.7));
        assert_eq!(
            report.most_likely_wrong.as_ref().map(|w| w.surface),
            Some(Surface::Data)
        );
        assert_eq!(report.known_not_in_diff.as_deref(), Some("ran it by hand"));
    }

    #[test]
    fn wrong_shapes_are_malformed() {
        for bad in [
            &br#"{"confidence":1.5}"#[..],
            br#"{"confidence":"high"}"#,
            br#"{"most_likely_wrong":{"surface":"kernel","description":"x"}}"#,
            br#"{"most_likely_wrong":{"surface":"ui"}}"#,
            br#"{"confidance":0.5}"#,
            br#"[0.5]"#,
            b"not json",
        ] {
            assert!(
                matches!(parse(bad), Err(NotMerged::Malformed(_))),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn the_last_tagged_block_of_a_message_counts() {
        let message = "Done.\n```reflection\n{\"confidence\":0.2}\n```\nand then\n```json\n{\"confidence\":0.1}\n```\n\
                       ````reflection\n{\"confidence\":0.9,\n \"known_not_in_diff\":\"a ``` inside\"}\n````\n";
        let report = from_message(message).unwrap();
        assert_eq!(report.confidence.map(UnitInterval::get), Some(0.9));
        assert_eq!(report.known_not_in_diff.as_deref(), Some("a ``` inside"));
    }

    #[test]
    fn messages_without_a_usable_block() {
        assert_eq!(from_message("All done, tests pass."), Err(NotMerged::Missing));
        assert_eq!(
            from_message("```json\n{\"confidence\":0.5}\n```"),
            Err(NotMerged::Missing)
        );
        for bad in [
            "```reflection\n{\"confidence\":0.5}\n",
            "```reflection\n{\"confidence\":0.5,}\n```",
            "```reflection\n{\"confidence\":7}\n```",
            "```reflection\n```",
        ] {
            assert!(matches!(from_message(bad), Err(NotMerged::Malformed(_))), "{bad}");
        }
    }

    #[test]
    fn session_and_staleness_checks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input.json");
        assert_eq!(load(&path, dir.path(), "s1", None), Err(NotMerged::Missing));
        std::fs::write(&path, br#"{"confidence":0.9,"session_id":"s2"}"#).unwrap();
        assert_eq!(
            load(&path, dir.path(), "s1", None),
            Err(NotMerged::OtherSession("s2".into()))
        );
        std::fs::write(&path, br#"{"confidence":0.9}"#).unwrap();
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(load(&path, dir.path(), "s1", Some(written)), Err(NotMerged::Stale));
        let earlier = written - std::time::Duration::from_secs(5);
        assert_eq!(
            load(&path, dir.path(), "s1", Some(earlier))
                .unwrap()
                .confidence
                .map(UnitInterval::get),
            Some(0.9)
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_fifos_and_symlinks_out_of_the_repository_are_not_read() {
        let repo = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let unreadable = |result: Result<SelfReport, NotMerged>| match result {
            Err(NotMerged::Unreadable(why)) => why,
            other => panic!("expected Unreadable, got {other:?}"),
        };
        // /dev/zero named directly (REFLECTION_INPUT=/dev/zero): refused before a byte is read.
        assert_eq!(
            unreadable(load(Path::new("/dev/zero"), repo.path(), "s1", None)),
            "not a regular file (a character device); only regular files are read"
        );
        // A FIFO at the default place, with no writer: refused at once instead of blocking.
        let fifo = repo.path().join("input.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(
            unreadable(load(&fifo, repo.path(), "s1", None)),
            "not a regular file (a FIFO); only regular files are read"
        );
        // A symlink inside the repository to a file outside it is not followed; one to a file inside is.
        let secret = outside.path().join("secret.json");
        std::fs::write(&secret, br#"{"confidence":0.9}"#).unwrap();
        let link = repo.path().join("link.json");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert_eq!(
            unreadable(load(&link, repo.path(), "s1", None)),
            "a symlink out of the repository; not followed"
        );
        let inside = repo.path().join("real.json");
        std::fs::write(&inside, br#"{"confidence":0.25}"#).unwrap();
        let link = repo.path().join("link2.json");
        std::os::unix::fs::symlink(&inside, &link).unwrap();
        assert_eq!(
            load(&link, repo.path(), "s1", None)
                .unwrap()
                .confidence
                .map(UnitInterval::get),
            Some(0.25)
        );
        // Configured outside the repository on purpose: read.
        assert_eq!(
            load(&secret, repo.path(), "s1", None)
                .unwrap()
                .confidence
                .map(UnitInterval::get),
            Some(0.9)
        );
    }
}
