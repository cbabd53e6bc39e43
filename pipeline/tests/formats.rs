//! P1 and P3 read CSV and Parquet besides JSONL (issue 21): the same corpus or task table written in each format
//! gives the same report, byte for byte, but for what names the input itself (its path, sha256 and size, and for
//! P3 the format and why it was chosen). The CSV and Parquet files are written here from the JSONL fixtures (the
//! Parquet with polars), so the test covers what another tool would write, not a copy of our own reader.

use std::path::{Path, PathBuf};

use pipeline::commands::p1::{P1Args, run as run_p1};
use polars::prelude::*;
use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn jsonl(path: &Path) -> Vec<serde_json::Map<String, Value>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| match serde_json::from_str(line).unwrap() {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

fn write_parquet(path: &Path, columns: Vec<Column>) {
    let mut frame = DataFrame::new(columns.first().map_or(0, Column::len), columns).unwrap();
    ParquetWriter::new(std::fs::File::create(path).unwrap())
        .finish(&mut frame)
        .unwrap();
}

/// The corpus fields as columns: numbers, booleans and strings, `None` where the row has no value.
const NUMBERS: [&str; 2] = ["confidence", "risk_score"];
const BOOLEANS: [&str; 2] = ["correct", "needs_review"];
const STRINGS: [&str; 4] = ["task_ref", "agent", "surface", "session_id"];

/// Writes the corpus rows as CSV (empty cells for nulls) and Parquet (f64, bool and string columns; a field no row
/// has is left out, as a JSONL without it).
fn write_corpus_tables(rows: &[serde_json::Map<String, Value>], csv_path: &Path, parquet_path: &Path) {
    let present = |name: &str| rows.iter().any(|row| row.contains_key(name));
    let names: Vec<&str> = NUMBERS
        .iter()
        .chain(&BOOLEANS)
        .chain(&STRINGS)
        .copied()
        .filter(|name| present(name))
        .collect();
    let mut writer = csv::Writer::from_path(csv_path).unwrap();
    writer.write_record(&names).unwrap();
    for row in rows {
        let cells: Vec<String> = names
            .iter()
            .map(|name| match row.get(*name) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(value) => value.to_string(),
            })
            .collect();
        writer.write_record(&cells).unwrap();
    }
    writer.flush().unwrap();

    let columns = names
        .iter()
        .map(|&name| {
            let values = rows.iter().map(|row| row.get(name).filter(|v| !v.is_null()));
            if NUMBERS.contains(&name) {
                Column::new(
                    name.into(),
                    values.map(|v| v.and_then(Value::as_f64)).collect::<Vec<_>>(),
                )
            } else if BOOLEANS.contains(&name) {
                Column::new(
                    name.into(),
                    values.map(|v| v.and_then(Value::as_bool)).collect::<Vec<_>>(),
                )
            } else {
                Column::new(
                    name.into(),
                    values.map(|v| v.and_then(Value::as_str)).collect::<Vec<_>>(),
                )
            }
        })
        .collect();
    write_parquet(parquet_path, columns);
}

/// Every file of a report set, with what names the input replaced by placeholders; the manifest (the sizes and
/// digests of the other files) by its file names alone.
fn report_set(dir: &Path, input: &Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(input).unwrap();
    let sha256 = pipeline::prereg::sha256_hex(&bytes);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|_| "<binary>".to_owned());
            let text = if name == "manifest.json" {
                let manifest: Value = serde_json::from_str(&text).unwrap();
                let files: Vec<&Value> = manifest["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| &f["name"])
                    .collect();
                format!("{files:?}")
            } else {
                text.replace(&input.display().to_string(), "<input>")
                    .replace(&sha256, "<sha256>")
                    .replace(&format!("\"bytes\": {},", bytes.len()), "\"bytes\": <n>,")
            };
            (name, text)
        })
        .collect()
}

fn p1(corpus: &Path, out: &Path, format: &str) -> pipeline::commands::p1::P1Outcome {
    run_p1(&P1Args {
        corpus: Some(corpus.to_path_buf()),
        format: format.into(),
        out: out.to_path_buf(),
        as_of: Some("2026-01-01".into()),
        by: ["agent", "surface", "task_ref", "session_id"]
            .map(String::from)
            .to_vec(),
        ..P1Args::default()
    })
    .unwrap()
}

/// A corpus with what the sample lacks: null confidences, the risk-floor fields, absent breakdown fields, a
/// duplicate row.
fn varied_corpus(path: &Path) {
    let mut lines = Vec::new();
    for i in 0..120u32 {
        let confidence = if i % 17 == 5 {
            "null".to_owned()
        } else {
            format!("{}", f64::from((i * 37) % 101) / 100.0)
        };
        let correct = (i * 7 + i / 3) % 5 < 3;
        let agent = if i % 11 == 0 {
            String::new()
        } else {
            format!(", \"agent\": \"{}\"", ["claude", "codex", "aider"][(i % 3) as usize])
        };
        let risk = if i % 4 == 0 {
            String::new()
        } else {
            format!(
                ", \"risk_score\": {}, \"needs_review\": {}",
                f64::from((i * 13) % 21) / 20.0,
                i % 3 == 0
            )
        };
        lines.push(format!(
            "{{\"confidence\": {confidence}, \"correct\": {correct}{agent}, \"surface\": \"s{}\", \"task_ref\": \
             \"T-{}\"{risk}}}",
            i % 4,
            i / 2
        ));
    }
    lines.push(lines[7].clone());
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn p1_reads_the_same_corpus_from_jsonl_csv_and_parquet_into_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let varied = dir.path().join("varied.jsonl");
    varied_corpus(&varied);
    for source in [workspace().join("data/p1-corpus.jsonl"), varied] {
        let rows = jsonl(&source);
        let stem = source.file_stem().unwrap().to_string_lossy().into_owned();
        let csv = dir.path().join(format!("{stem}.csv"));
        let parquet = dir.path().join(format!("{stem}.parquet"));
        write_corpus_tables(&rows, &csv, &parquet);

        let reference_out = dir.path().join(format!("{stem}-jsonl"));
        let reference = p1(&source, &reference_out, "auto");
        let expected = report_set(&reference_out, &source);
        if stem == "varied" {
            // The fixture exercises what it is there for.
            let json: Value = serde_json::from_slice(&reference.json).unwrap();
            let corpus = &json["report"]["corpus"];
            assert_eq!(
                (corpus["rows"].as_u64(), corpus["duplicate_lines"].as_u64()),
                (Some(121), Some(1))
            );
            assert_eq!(corpus["null_confidence"].as_u64(), Some(7));
            assert_eq!(json["report"]["risk_floor"]["n"].as_u64(), Some(91));
            assert_eq!(json["report"]["breakdowns"]["agent"].as_array().map(Vec::len), Some(4)); // three agents and the rows without one
        }
        assert!(expected.len() >= 4, "{expected:?}");
        // By extension, and by --format on a file whose name says nothing.
        let csv_plain = dir.path().join(format!("{stem}-table"));
        std::fs::copy(&csv, &csv_plain).unwrap();
        let parquet_plain = dir.path().join(format!("{stem}-columns"));
        std::fs::copy(&parquet, &parquet_plain).unwrap();
        for (input, format) in [
            (&csv, "auto"),
            (&parquet, "auto"),
            (&csv_plain, "csv"),
            (&parquet_plain, "parquet"),
            (&parquet_plain, "auto"), // Parquet's magic bytes
        ] {
            let out = dir
                .path()
                .join(format!("{stem}-{format}-{}", input.display().to_string().len()));
            let outcome = p1(input, &out, format);
            let got = report_set(&out, input);
            for ((name, want), (got_name, got)) in expected.iter().zip(&got) {
                assert_eq!(name, got_name);
                assert!(
                    want == got,
                    "{stem}: {name} from {} differs from the JSONL's",
                    input.display()
                );
            }
            assert_eq!(got.len(), expected.len());
            assert_eq!(
                outcome.summary.replace(&input.display().to_string(), "<input>"),
                reference.summary.replace(&source.display().to_string(), "<input>")
            );
        }
    }
}

#[test]
fn p1_table_errors_name_the_file_the_row_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = |path: &Path, format: &str, skip: bool| {
        run_p1(&P1Args {
            corpus: Some(path.to_path_buf()),
            format: format.into(),
            out: out.clone(),
            as_of: Some("2026-01-01".into()),
            skip_invalid: skip,
            ..P1Args::default()
        })
    };
    let csv = dir.path().join("c.csv");
    std::fs::write(&csv, "confidence,correct\n0.5,true\n0.7,false\n0.9,maybe\n").unwrap();
    let error = run(&csv, "auto", false).unwrap_err();
    assert_eq!(error.exit_code(), 2u8);
    assert_eq!(
        error.to_string(),
        format!(
            "{}: row 3 (line 4), column \"correct\": correct must be true, false, 0 or 1, got \"maybe\" \
             (--skip-invalid skips invalid rows, counts them by reason and names the first)",
            csv.display()
        )
    );
    let skipped = run(&csv, "auto", true).unwrap();
    assert!(
        skipped.summary.contains(&format!(
            "skipped         1 invalid row (--skip-invalid); the first at {}: row 3, column \"correct\": correct \
             must be true, false, 0 or 1, got \"maybe\"",
            csv.display()
        )),
        "{}",
        skipped.summary
    );

    let parquet = dir.path().join("c.parquet");
    write_parquet(
        &parquet,
        vec![
            Column::new("confidence".into(), [0.5, 1.5]),
            Column::new("correct".into(), [true, false]),
        ],
    );
    let error = run(&parquet, "auto", false).unwrap_err();
    assert_eq!(error.exit_code(), 2u8);
    assert!(
        error.to_string().starts_with(&format!(
            "{}: row 2, column \"confidence\": confidence 1.5 is outside [0, 1]",
            parquet.display()
        )),
        "{error}"
    );
    write_parquet(&parquet, vec![Column::new("confidence".into(), [0.5])]);
    let error = run(&parquet, "auto", false).unwrap_err();
    assert_eq!(error.exit_code(), 2u8);
    assert_eq!(
        error.to_string(),
        format!(
            "{}: no column \"correct\" (the columns are: confidence)",
            parquet.display()
        )
    );
    // A JSONL read as Parquet: an error, no panic.
    let error = run(&workspace().join("data/p1-corpus.jsonl"), "parquet", false).unwrap_err();
    assert_eq!(error.exit_code(), 2u8);
    assert!(error.to_string().contains("not a readable Parquet file"), "{error}");
    let error = run(&csv, "xlsx", false).unwrap_err();
    assert_eq!(
        error.to_string(),
        "--format xlsx: unknown corpus format \"xlsx\" (expected auto, jsonl, csv, parquet)"
    );
}
