//! The per-row tables as Parquet (issue 21): `p2-failures.parquet` and `p3-tasks.parquet` hold the rows and values
//! of their CSV, typed as docs/p2.md and docs/p3.md say, are part of the report set (listed in the manifest and
//! the report's artifacts), and the same inputs give the same bytes. Read back with polars.

use std::path::{Path, PathBuf};

mod common;

use pipeline::commands::p2::{P2Args, run as run_p2};
use pipeline::commands::p3::{P3Args, run as run_p3};
use polars::prelude::*;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read_parquet(path: &Path) -> DataFrame {
    let file = std::fs::File::open(path).unwrap();
    ParquetReader::new(file).finish().unwrap()
}

/// A cell as the CSV writes it: empty for null, `true`/`false`, numbers in decimal, a list joined with `;`.
fn as_csv(value: AnyValue) -> String {
    match value {
        AnyValue::Null => String::new(),
        AnyValue::String(s) => s.to_string(),
        AnyValue::StringOwned(s) => s.to_string(),
        AnyValue::Boolean(b) => b.to_string(),
        AnyValue::UInt32(n) => n.to_string(),
        AnyValue::Int64(n) => n.to_string(),
        AnyValue::List(list) => list.iter().map(|v| as_csv(v)).collect::<Vec<_>>().join(";"),
        other => panic!("a type no table has: {other:?}"),
    }
}

/// The frame's rows as the CSV's records (header first).
fn records(frame: &DataFrame) -> Vec<Vec<String>> {
    let mut out = vec![
        frame
            .get_column_names()
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>(),
    ];
    for row in 0..frame.height() {
        out.push(
            frame
                .columns()
                .iter()
                .map(|column| as_csv(column.get(row).unwrap()))
                .collect(),
        );
    }
    out
}

fn csv_records(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_path(path).unwrap();
    reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

fn schema_of(frame: &DataFrame) -> Vec<(String, DataType)> {
    frame
        .schema()
        .iter()
        .map(|(name, dtype)| (name.to_string(), dtype.clone()))
        .collect()
}

/// The manifest's entry for `name`: its size and sha256 as the manifest says.
fn manifest_entry(dir: &Path, name: &str) -> serde_json::Value {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} is not in {}/manifest.json", dir.display()))
}

fn artifacts(dir: &Path, report: &str) -> Vec<String> {
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join(report)).unwrap()).unwrap();
    json["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn p3_tasks_parquet_holds_the_csv_rows_typed_and_the_same_bytes_on_a_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<PathBuf> = [
        "jira.json",
        "tasks.jsonl",
        "linear.csv",
        "trello.json",
        "beads-issues.jsonl",
    ]
    .iter()
    .map(|name| workspace().join("data/p3").join(name))
    .collect();
    let mut bytes = Vec::new();
    for run in ["a", "b"] {
        let out = dir.path().join(run);
        run_p3(&P3Args {
            inputs: inputs.clone(),
            format: "auto".into(),
            out: out.clone(),
            as_of: Some("2025-12-12".into()),
            ..P3Args::default()
        })
        .unwrap();
        bytes.push(std::fs::read(out.join("p3-tasks.parquet")).unwrap());
    }
    assert_eq!(
        bytes[0], bytes[1],
        "p3-tasks.parquet differs between two runs on the same inputs"
    );
    let out = dir.path().join("a");
    let entry = manifest_entry(&out, "p3-tasks.parquet");
    assert_eq!(entry["bytes"], bytes[0].len());
    assert!(artifacts(&out, "p3.json").contains(&"p3-tasks.parquet".to_string()));
    // A Parquet file: `PAR1` at both ends.
    assert_eq!(&bytes[0][..4], b"PAR1");
    assert_eq!(&bytes[0][bytes[0].len() - 4..], b"PAR1");

    let frame = read_parquet(&out.join("p3-tasks.parquet"));
    assert_eq!(
        schema_of(&frame),
        [
            ("input".to_string(), DataType::String),
            ("id".to_string(), DataType::String),
            ("completed".to_string(), DataType::String),
            ("censored".to_string(), DataType::Boolean),
            ("signals".to_string(), DataType::List(Box::new(DataType::String))),
        ]
    );
    // 35 completed tasks of the five samples; 13 censored at 2025-12-12; two tasks with two signals.
    assert_eq!(frame.height(), 35);
    let censored = frame.column("censored").unwrap().bool().unwrap();
    assert_eq!(censored.sum(), Some(13));
    let signals = frame.column("signals").unwrap();
    let two = (0..frame.height())
        .filter(|&row| matches!(signals.get(row).unwrap(), AnyValue::List(list) if list.len() == 2))
        .count();
    assert_eq!(two, 2);
    assert_eq!(records(&frame), csv_records(&out.join("p3-tasks.csv")));
}

#[test]
fn p2_failures_parquet_holds_the_csv_rows_typed_and_the_same_bytes_on_a_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let mut bytes = Vec::new();
    for run in ["a", "b"] {
        let out = dir.path().join(run);
        run_p2(&P2Args {
            repo: repo.clone(),
            rev: Some("HEAD".into()),
            out: out.clone(),
            as_of: Some("2026-11-21".into()),
            ..P2Args::default()
        })
        .unwrap();
        bytes.push(std::fs::read(out.join("p2-failures.parquet")).unwrap());
    }
    assert_eq!(
        bytes[0], bytes[1],
        "p2-failures.parquet differs between two runs on the same history"
    );
    let out = dir.path().join("a");
    let entry = manifest_entry(&out, "p2-failures.parquet");
    assert_eq!(entry["bytes"], bytes[0].len());
    assert!(artifacts(&out, "p2.json").contains(&"p2-failures.parquet".to_string()));

    let frame = read_parquet(&out.join("p2-failures.parquet"));
    let string = |name: &str| (name.to_string(), DataType::String);
    assert_eq!(
        schema_of(&frame),
        [
            string("remedy"),
            string("failing"),
            string("failing_ref"),
            string("kind"),
            string("link_rule"),
            string("evidence"),
            ("evidence_lines".to_string(), DataType::UInt32),
            string("bucket"),
            string("rule"),
            ("time_to_remedy_seconds".to_string(), DataType::Int64),
            string("failing_surface"),
            ("floor_flagged".to_string(), DataType::Boolean),
            string("subject"),
        ]
    );
    // The fixture's 16 failures: ci 3, human review 2, self-reflection 3, ambiguous 8 (tests/tests/p2.rs).
    assert_eq!(frame.height(), 16);
    let buckets = frame.column("bucket").unwrap();
    let count = |bucket: &str| {
        (0..frame.height())
            .filter(|&row| buckets.get(row).unwrap() == AnyValue::String(bucket))
            .count()
    };
    assert_eq!(
        [
            count("ci"),
            count("human-review"),
            count("self-reflection"),
            count("ambiguous")
        ],
        [3, 2, 3, 8]
    );
    assert_eq!(records(&frame), csv_records(&out.join("p2-failures.csv")));
}

#[test]
fn a_table_without_rows_has_its_columns() {
    let bytes = pipeline::report::p2::failures_parquet(&[]).unwrap();
    let frame = ParquetReader::new(std::io::Cursor::new(bytes)).finish().unwrap();
    assert_eq!(frame.height(), 0);
    assert_eq!(frame.width(), 13);
    assert_eq!(frame.get_column_names()[0].as_str(), "remedy");
    assert_eq!(frame.column("floor_flagged").unwrap().dtype(), &DataType::Boolean);
}
