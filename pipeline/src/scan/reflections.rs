//! A directory of `reflection.v1` sidecars: every `*.reflection.json` directly in it (not in subdirectories, as
//! the hook writes them), read and deserialised in parallel into [`capture::Reflection`], whose types mirror the
//! schema exactly (a document that fails the schema fails to deserialise). Invalid and unreadable files are
//! skipped and listed with their reason, never silently: the reason is the schema validator's message when the
//! file is JSON, else the JSON parser's line and column.
//!
//! Only regular files are read ([`super::input`]: a FIFO or device named like a sidecar is listed as invalid, never
//! waited on), each at most [`SIDECAR_CAP`] bytes, and a symlink is followed only to a file in the same directory:
//! a sidecar directory is often a checked-out `.mosaic/reflections/`, whose links must not reach elsewhere.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

/// The file-name suffix of a sidecar (the hook's `SIDECAR_SUFFIX`).
pub const SUFFIX: &str = capture::hook::store::SIDECAR_SUFFIX;

/// The most a sidecar may hold (the hook writes a few kilobytes).
pub const SIDECAR_CAP: u64 = 4 * 1024 * 1024;

/// The sidecars of a directory, sorted by file name.
#[derive(Debug, Clone, Default)]
pub struct Sidecars {
    /// `(file name, sidecar)` of every valid file.
    pub valid: Vec<(String, capture::Reflection)>,
    /// `(file name, reason)` of every file that could not be read or is not a valid `reflection.v1` document.
    pub invalid: Vec<(String, String)>,
}

#[derive(Debug, thiserror::Error)]
#[error("{}: cannot read the sidecar directory: {source}", path.display())]
pub struct ReflectionsError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// Reads every sidecar in `dir`.
pub fn read_dir(dir: &Path) -> Result<Sidecars, ReflectionsError> {
    let error = |source| ReflectionsError {
        path: dir.to_path_buf(),
        source,
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(error)? {
        let entry = entry.map_err(error)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(SUFFIX) && !name.starts_with('.') {
            names.push((name, entry.path()));
        }
    }
    names.sort();
    // Canonical, so a symlink's target can be compared with it; unreadable, no link is followed.
    let canonical_dir = std::fs::canonicalize(dir).ok();
    let parsed: Vec<(String, Result<capture::Reflection, String>)> = names
        .into_par_iter()
        .map(|(name, path)| {
            let result = contained(&path, canonical_dir.as_deref())
                .and_then(|()| super::input::read_capped(&path, SIDECAR_CAP).map_err(|e| format!("cannot read: {e}")))
                .and_then(|bytes| parse(&bytes));
            (name, result)
        })
        .collect();
    let mut sidecars = Sidecars::default();
    for (name, result) in parsed {
        match result {
            Ok(reflection) => sidecars.valid.push((name, reflection)),
            Err(reason) => sidecars.invalid.push((name, reason)),
        }
    }
    Ok(sidecars)
}

/// `Ok` unless `path` is a symlink whose target is not a file directly in `dir` (or cannot be resolved).
fn contained(path: &Path, dir: Option<&Path>) -> Result<(), String> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    if !is_link {
        return Ok(());
    }
    let target =
        std::fs::canonicalize(path).map_err(|e| format!("cannot read: a symlink that cannot be resolved: {e}"))?;
    if dir.is_some_and(|dir| target.parent() == Some(dir)) {
        Ok(())
    } else {
        Err("a symlink to a file outside the sidecar directory; not followed".to_string())
    }
}

/// One sidecar's bytes, or why they are not a `reflection.v1` document.
pub fn parse(bytes: &[u8]) -> Result<capture::Reflection, String> {
    serde_json::from_slice::<capture::Reflection>(bytes).map_err(|typed| {
        match serde_json::from_slice::<serde_json::Value>(bytes) {
            Err(json) => format!("not valid JSON: {json}"),
            Ok(document) => {
                let errors = capture::schema::schema_errors(&document);
                if errors.is_empty() {
                    // The schema accepts what the typed reading refused: say what serde said.
                    format!("not a reflection.v1 document: {typed}")
                } else {
                    format!("fails the reflection.v1 schema: {}", errors.join("; "))
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"{"schema":"reflection.v1","task_ref":"app#main","agent":"unknown","session_id":"s1",
"timestamp":"2026-11-21T11:49:06.566088Z","repo":"app","confidence":0.75,"most_likely_wrong":null,
"known_not_in_diff":null,"risk":{"needs_review":true,"score":0.9,"surface":"data","reason":"r"},
"files_changed":["src/db.sql"],"provenance":{"source":"stop-hook","reflection_attempt":1,"degraded":false,
"reflection_mode":"solo"}}"#;

    #[test]
    fn valid_invalid_and_other_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s1-20261121T114906.566088Z.reflection.json"), VALID).unwrap();
        std::fs::write(
            dir.path().join("bad-range.reflection.json"),
            VALID.replace("0.75", "1.5"),
        )
        .unwrap();
        std::fs::write(dir.path().join("cut.reflection.json"), &VALID[..40]).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        std::fs::write(dir.path().join(".tmp.reflection.json"), "partial").unwrap();
        let read = read_dir(dir.path()).unwrap();
        assert_eq!(read.valid.len(), 1);
        assert_eq!(read.valid[0].0, "s1-20261121T114906.566088Z.reflection.json");
        assert_eq!(read.valid[0].1.confidence.unwrap().get(), 0.75);
        assert_eq!(
            read.invalid,
            vec![
                (
                    "bad-range.reflection.json".to_string(),
                    "fails the reflection.v1 schema: /confidence: 1.5 is greater than the maximum of 1".to_string()
                ),
                (
                    "cut.reflection.json".to_string(),
                    "not valid JSON: EOF while parsing a string at line 1 column 40".to_string()
                ),
            ]
        );
        let missing = read_dir(&dir.path().join("nope")).unwrap_err().to_string();
        assert!(missing.starts_with(&format!(
            "{}: cannot read the sidecar directory: ",
            dir.path().join("nope").display()
        )));
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_and_links_out_of_the_directory_are_not_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), VALID).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), VALID).unwrap();
        let link = |target: &Path, name: &str| std::os::unix::fs::symlink(target, dir.path().join(name)).unwrap();
        link(&dir.path().join("a.json"), "inside.reflection.json");
        link(&outside.path().join("secret"), "outside.reflection.json");
        link(Path::new("/dev/zero"), "zero.reflection.json");
        link(&dir.path().join("gone"), "dangling.reflection.json");
        let fifo = dir.path().join("x.reflection.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Returns at once: the FIFO has no writer and is not waited on.
        let read = read_dir(dir.path()).unwrap();
        let valid: Vec<&str> = read.valid.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(valid, ["inside.reflection.json"]);
        let invalid: Vec<(&str, &str)> = read.invalid.iter().map(|(n, r)| (n.as_str(), r.as_str())).collect();
        assert_eq!(invalid.len(), 4);
        assert!(invalid[0].0 == "dangling.reflection.json" && invalid[0].1.starts_with("cannot read: a symlink that"));
        assert_eq!(
            invalid[1..],
            [
                (
                    "outside.reflection.json",
                    "a symlink to a file outside the sidecar directory; not followed"
                ),
                (
                    "x.reflection.json",
                    "cannot read: not a regular file (a FIFO); only regular files are read"
                ),
                (
                    "zero.reflection.json",
                    "a symlink to a file outside the sidecar directory; not followed"
                ),
            ]
        );
    }
}
