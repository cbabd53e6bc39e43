//! Per-row tables as Parquet (issue 21): `p2-failures.parquet`, `p3-tasks.parquet`, beside their CSV.
//!
//! The same rows give the same bytes: every writer option that shapes the file is pinned here rather than left to
//! polars' defaults, and the writer puts no time, host or random value in a file (its `created_by` is the constant
//! `Polars`; the key-value metadata is the Arrow schema alone). Columns are serialised one after the other
//! (`set_parallel(false)`), so that a report does not start polars' thread pool for a table of a few thousand rows.

use polars::prelude::*;

/// Zstandard at the library's default level (polars passes level 0, which libzstd reads as its default, 3): small
/// files, read by every current Parquet reader (pyarrow, DuckDB, polars). polars does not re-export the type that
/// names a level, so the default is pinned by this choice and by Cargo.lock.
pub const COMPRESSION: ParquetCompression = ParquetCompression::Zstd(None);
/// The row group size (polars' own default, pinned). polars splits a table of one chunk (as `experiments::frames`
/// builds them) into `rows / ROW_GROUP_ROWS` row groups of nearly equal size, at least one: 800,000 completed tasks are
/// 3 row groups (266,666, 266,666 and 266,668 rows).
pub const ROW_GROUP_ROWS: usize = 262_144;
/// The largest data page, in bytes (polars' own default, pinned).
pub const DATA_PAGE_BYTES: usize = 1024 * 1024;

/// Column statistics written: min, max and null count per column chunk, untruncated; no distinct count.
pub fn statistics() -> StatisticsOptions {
    StatisticsOptions {
        min_value: true,
        max_value: true,
        distinct_count: false,
        null_count: true,
        binary_statistics_truncate_length: None,
    }
}

/// `frame` as the bytes of a Parquet file.
pub fn bytes(frame: &mut DataFrame) -> PolarsResult<Vec<u8>> {
    let mut out = Vec::new();
    ParquetWriter::new(&mut out)
        .with_compression(COMPRESSION)
        .with_statistics(statistics())
        .with_row_group_size(Some(ROW_GROUP_ROWS))
        .with_data_page_size(Some(DATA_PAGE_BYTES))
        .with_key_value_metadata(None)
        .set_parallel(false)
        .finish(frame)?;
    Ok(out)
}

/// A table that could not be written as Parquet (not the input's fault: a runtime error).
#[derive(Debug, thiserror::Error)]
#[error("{name}: cannot write the table: {message}")]
pub struct TableError {
    pub name: &'static str,
    pub message: String,
}

/// The Parquet file `name` of a frame the experiments built.
pub fn table(
    name: &'static str,
    frame: Result<DataFrame, crate::experiments::frames::FrameError>,
) -> Result<Vec<u8>, TableError> {
    let error = |message: String| TableError { name, message };
    let mut frame = frame.map_err(|e| error(e.to_string()))?;
    bytes(&mut frame).map_err(|e| error(e.to_string()))
}
