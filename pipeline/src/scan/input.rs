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

/// Decodes running now under [`decode_guarded`], in any thread.
static DECODING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs a third-party decoder (polars' Parquet reader) on user input: `None` when it panicked. polars guards most
/// damaged files with errors, not all (a mutated footer can reach an index out of bounds): such a panic is caught
/// here, in the calling thread or propagated from polars' own threads, and the caller reports the file as
/// unreadable. While a decode runs, a panic raised in polars' code is not printed (a panic hook installed once,
/// which hands every other panic to the hook it replaced); the caller's message says what happened.
pub fn decode_guarded<T>(decode: impl FnOnce() -> T) -> Option<T> {
    use std::sync::atomic::Ordering;
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_polars = info.location().is_some_and(|at| at.file().contains("polars-"));
            if !(in_polars && DECODING.load(Ordering::SeqCst) > 0) {
                previous(info);
            }
        }));
    });
    DECODING.fetch_add(1, Ordering::SeqCst);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode));
    DECODING.fetch_sub(1, Ordering::SeqCst);
    result.ok()
}

/// Line numbers of byte offsets in a CSV file, for messages (the csv crate's own line count lags by one after a CRLF
/// terminator).
pub struct LineCounter<'b> {
    bytes: &'b [u8],
    offset: usize,
    line: u64,
}

impl<'b> LineCounter<'b> {
    pub fn new(bytes: &'b [u8]) -> Self {
        LineCounter {
            bytes,
            offset: 0,
            line: 1,
        }
    }

    /// The 1-based line of the first byte at or after `offset` that is not a line terminator (offsets must not
    /// decrease between calls).
    pub fn line_at(&mut self, offset: u64) -> u64 {
        let mut start = usize::try_from(offset).unwrap_or(usize::MAX).min(self.bytes.len());
        while start < self.bytes.len() && matches!(self.bytes[start], b'\r' | b'\n') {
            start += 1;
        }
        if start >= self.offset {
            self.line += memchr::memchr_iter(b'\n', &self.bytes[self.offset..start]).count() as u64;
            self.offset = start;
        }
        self.line
    }
}

/// Reads the columns of `wanted` that a Parquet file has (the others are not read), with every column name the
/// file has, under [`decode_guarded`]: `None` when the decoder panicked.
pub fn read_parquet_columns(
    bytes: &[u8],
    wanted: &[&str],
) -> Option<polars::prelude::PolarsResult<(Vec<String>, polars::prelude::DataFrame)>> {
    use polars::prelude::*;
    decode_guarded(|| -> PolarsResult<(Vec<String>, DataFrame)> {
        let mut reader = ParquetReader::new(std::io::Cursor::new(bytes));
        let names: Vec<String> = reader.schema()?.iter_names().map(|n| n.to_string()).collect();
        let read: Vec<String> = wanted
            .iter()
            .filter(|c| names.iter().any(|n| n == *c))
            .map(|c| c.to_string())
            .collect();
        let frame = reader.with_columns(Some(read)).finish()?;
        Ok((names, frame))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decoder_panic_is_caught() {
        assert_eq!(decode_guarded(|| 7), Some(7));
        let caught = decode_guarded(|| -> u8 { std::panic::resume_unwind(Box::new("decoder")) });
        assert_eq!(caught, None);
    }

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
