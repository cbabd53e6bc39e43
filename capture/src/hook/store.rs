//! The reflections directory: naming, counting and atomically writing sidecars.
//!
//! A sidecar is `<key>-<UTC timestamp>.reflection.json`, the timestamp in basic ISO 8601 with microseconds
//! (`20261121T113700.123456Z`) so names sort by time and hold no `:`. The key is the sanitised session id (plus
//! `-<agent id>` for a subagent's SubagentStop, so parallel subagents do not take each other's lock).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub const SIDECAR_SUFFIX: &str = ".reflection.json";
const TIMESTAMP_LEN: usize = "20261121T113700.123456Z".len();

/// Makes `raw` safe as a file-name component: `[A-Za-z0-9._-]` only, no leading dot (so no `..`), at most 128
/// bytes; anything empty becomes `unknown`. An id that had to be changed gets `-<hash of the raw id>` appended, so
/// two ids that clean to the same text (`a/b`, `a_b`) never share a lock, attempt counter or sidecar name.
pub fn sanitize_key(raw: &str) -> String {
    const MAX: usize = 128;
    let cleaned: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.');
    if raw.is_empty() {
        return "unknown".to_string();
    }
    if cleaned == raw && raw.len() <= MAX {
        return cleaned.to_string();
    }
    let suffix = format!("-{:08x}", fnv1a32(raw.as_bytes()));
    let keep = cleaned.len().min(MAX - suffix.len());
    let head = if cleaned.is_empty() {
        "unknown"
    } else {
        &cleaned[..keep]
    };
    format!("{head}{suffix}")
}

/// 32-bit FNV-1a: a stable, dependency-free hash for [`sanitize_key`]'s suffix (not for security: the key only has
/// to differ between ids, and a collision costs a shared lock, not data).
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// The file-name form of a capture time.
pub fn file_timestamp(timestamp: jiff::Timestamp) -> String {
    timestamp.strftime("%Y%m%dT%H%M%S%.6fZ").to_string()
}

/// What a session already wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Previous {
    pub count: u32,
    /// When the newest of them was written.
    pub newest: Option<SystemTime>,
}

#[derive(Debug, Clone)]
pub struct SidecarStore {
    dir: PathBuf,
}

impl SidecarStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Counts the sidecars of `key` (exactly that key: a subagent's `<key>-<agent>-…` files are not counted).
    pub fn previous(&self, key: &str) -> io::Result<Previous> {
        let mut count = 0u32;
        let mut newest: Option<String> = None;
        for entry in std::fs::read_dir(&self.dir)? {
            let name = entry?.file_name();
            let Some(name) = name.to_str() else { continue };
            if belongs_to(name, key) {
                count = count.saturating_add(1);
                if newest.as_deref().is_none_or(|current| name > current) {
                    newest = Some(name.to_string());
                }
            }
        }
        let newest = newest.and_then(|name| std::fs::metadata(self.dir.join(name)).ok()?.modified().ok());
        Ok(Previous { count, newest })
    }

    /// Writes `contents` as the sidecar of `key` at `timestamp`: a temporary file in the same directory, fsync,
    /// then a rename that never replaces an existing sidecar. A reader never sees a partial file, and a failed
    /// write leaves nothing behind.
    pub fn write(&self, key: &str, timestamp: jiff::Timestamp, contents: &[u8]) -> io::Result<PathBuf> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(".tmp-").suffix(".json");
        // Sidecars are ordinary files (tempfile's default is owner-only); the umask still applies.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let mut temp = builder.tempfile_in(&self.dir)?;
        temp.write_all(contents)?;
        temp.as_file().sync_all()?;
        let mut at = timestamp;
        loop {
            let path = self.dir.join(format!("{key}-{}{SIDECAR_SUFFIX}", file_timestamp(at)));
            match temp.persist_noclobber(&path) {
                Ok(_) => return Ok(path),
                Err(error) if error.error.kind() == io::ErrorKind::AlreadyExists => {
                    temp = error.file;
                    at = at
                        .checked_add(jiff::SignedDuration::from_micros(1))
                        .map_err(io::Error::other)?;
                }
                Err(error) => return Err(error.error),
            }
        }
    }
}

/// Whether `name` is `<key>-<timestamp>.reflection.json`.
fn belongs_to(name: &str, key: &str) -> bool {
    let Some(stem) = name.strip_suffix(SIDECAR_SUFFIX) else {
        return false;
    };
    let Some(rest) = stem.strip_prefix(key).and_then(|rest| rest.strip_prefix('-')) else {
        return false;
    };
    rest.len() == TIMESTAMP_LEN
        && rest.ends_with('Z')
        && rest.as_bytes()[8] == b'T'
        && rest.bytes().filter(|b| b.is_ascii_digit()).count() == TIMESTAMP_LEN - 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_safe_file_name_components() {
        assert_eq!(sanitize_key("../../etc/passwd"), "_.._etc_passwd-6fadc99a");
        assert_eq!(sanitize_key("abc-123_X.y"), "abc-123_X.y");
        assert_eq!(sanitize_key(".."), "unknown-a3d4a70d");
        assert_eq!(sanitize_key(""), "unknown");
        assert_eq!(sanitize_key("a/b\\c d\0e"), "a_b_c_d_e-5435e79f");
        // Ids that clean to the same text keep apart (one lock and attempt counter each).
        assert_eq!(sanitize_key("a/b"), "a_b-3a8e75c1");
        assert_eq!(sanitize_key("a_b"), "a_b");
        let long = sanitize_key(&"x".repeat(500));
        assert_eq!(long, format!("{}-22310915", "x".repeat(119)));
        assert_eq!(long.len(), 128);
    }

    #[test]
    fn timestamps_are_basic_iso_with_microseconds() {
        let ts: jiff::Timestamp = "2026-11-21T11:37:00.1234567Z".parse().unwrap();
        assert_eq!(file_timestamp(ts), "20261121T113700.123456Z");
    }

    #[test]
    fn counts_only_the_key_own_sidecars() {
        assert!(belongs_to("s1-20261121T113700.123456Z.reflection.json", "s1"));
        assert!(!belongs_to("s1-agent7-20261121T113700.123456Z.reflection.json", "s1"));
        assert!(belongs_to(
            "s1-agent7-20261121T113700.123456Z.reflection.json",
            "s1-agent7"
        ));
        assert!(!belongs_to("s10-20261121T113700.123456Z.reflection.json", "s1"));
        assert!(!belongs_to(".tmp-abc.json", "s1"));
    }

    #[test]
    fn writes_never_replace_and_count_up() {
        let dir = tempfile::tempdir().unwrap();
        let store = SidecarStore::new(dir.path());
        let ts: jiff::Timestamp = "2026-11-21T11:37:00Z".parse().unwrap();
        let first = store.write("s1", ts, b"{\"n\":1}").unwrap();
        let second = store.write("s1", ts, b"{\"n\":2}").unwrap();
        assert_eq!(first.file_name().unwrap(), "s1-20261121T113700.000000Z.reflection.json");
        assert_eq!(
            second.file_name().unwrap(),
            "s1-20261121T113700.000001Z.reflection.json"
        );
        assert_eq!(std::fs::read(&first).unwrap(), b"{\"n\":1}");
        let previous = store.previous("s1").unwrap();
        assert_eq!(previous.count, 2);
        assert_eq!(
            previous.newest,
            Some(std::fs::metadata(&second).unwrap().modified().unwrap())
        );
        assert_eq!(store.previous("s2").unwrap(), Previous::default());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 2, "no temporary files remain: {leftovers:?}");
    }
}
