//! Line-based inputs parsed in parallel: line-aligned chunks, one rayon task each, the first error by line.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::scan::corpus::count_lines;
pub(super) use crate::scan::corpus::split_chunks;

/// Target size in bytes of the chunks parsed in parallel (each is extended to the end of its last line).
pub(super) const CHUNK_SIZE: usize = 1 << 20;

/// Parses every non-blank line with `parse(line_number, text)` (1-based numbers counting every line; a `\r`
/// before the `\n` stripped), in parallel, keeping the results in line order. `parse` may skip a line with
/// `Ok(None)`. Fails with the lowest-numbered failing line: a line that is not UTF-8 (`invalid UTF-8 at column
/// 13`) or whose `parse` fails.
pub(super) fn parse_lines<T, F>(bytes: &[u8], chunk_size: usize, parse: F) -> Result<Vec<T>, (u64, String)>
where
    T: Send,
    F: Fn(u64, &str) -> Result<Option<T>, String> + Sync,
{
    let pieces = split_chunks(bytes, chunk_size);
    let counts: Vec<usize> = pieces.par_iter().map(|p| count_lines(p)).collect();
    let mut first_lines = Vec::with_capacity(counts.len());
    let mut next = 1u64;
    for &n in &counts {
        first_lines.push(next);
        next += n as u64;
    }

    // The lowest index of a chunk that failed: later chunks cannot matter any more and stop early.
    let first_failed = AtomicUsize::new(usize::MAX);
    let results: Vec<Result<Vec<T>, (u64, String)>> = pieces
        .par_iter()
        .enumerate()
        .map(|(index, piece)| {
            let mut out = Vec::with_capacity(counts[index]);
            let mut line_number = first_lines[index];
            let mut start = 0;
            while start < piece.len() {
                if first_failed.load(Ordering::Relaxed) < index {
                    break; // an earlier chunk failed: its error is the one reported
                }
                let end = memchr::memchr(b'\n', &piece[start..]).map_or(piece.len(), |i| start + i);
                let raw = &piece[start..end];
                start = end + 1;
                let number = line_number;
                line_number += 1;
                let line = raw.strip_suffix(b"\r").unwrap_or(raw);
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let parsed = match std::str::from_utf8(line) {
                    Ok(text) => parse(number, text),
                    Err(e) => Err(format!("invalid UTF-8 at column {}", e.valid_up_to() + 1)),
                };
                match parsed {
                    Ok(Some(item)) => out.push(item),
                    Ok(None) => {}
                    Err(message) => {
                        first_failed.fetch_min(index, Ordering::Relaxed);
                        return Err((number, message));
                    }
                }
            }
            Ok(out)
        })
        .collect();

    let mut chunks = Vec::with_capacity(results.len());
    for result in results {
        chunks.push(result?);
    }
    let total = chunks.iter().map(Vec::len).sum();
    let mut all = Vec::with_capacity(total);
    for chunk in chunks {
        all.extend(chunk);
    }
    Ok(all)
}
