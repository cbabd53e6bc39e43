//! Opening `phase0`'s input files: regular files only, opened without blocking, small text files read with a size
//! cap ([`capture::regular_file`], shared with the hook).

use std::io;
use std::path::Path;

pub use capture::regular_file::{open_regular, read_capped};

/// The most a small text input (a pre-registration, a template, a weekly config, a `week.json`) may hold.
pub const TEXT_CAP: u64 = 16 * 1024 * 1024;

/// Reads `path`, a regular UTF-8 text file of at most [`TEXT_CAP`] bytes.
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_capped(path, TEXT_CAP)?)
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, format!("not valid UTF-8: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_utf8_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "x = 1\n").unwrap();
        assert_eq!(read_text(&path).unwrap(), "x = 1\n");
        std::fs::write(&path, b"\xff").unwrap();
        assert!(read_text(&path).unwrap_err().to_string().starts_with("not valid UTF-8"));
    }
}
