//! P1 and P3 read CSV and Parquet besides JSONL (issue 21): the same corpus or task table written in each format
//! gives the same report, byte for byte, but for what names the input itself (its path, sha256 and size, and for
//! P3 the format and why it was chosen). The CSV and Parquet files are written here from the JSONL fixtures (the
//! Parquet with polars), so the test covers what another tool would write, not a copy of our own reader.

use std::path::{Path, PathBuf};

mod common;

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

/// Every file of a report set ([`common::report_files`]), as text with what names the input replaced by
/// placeholders (a file that is not UTF-8 as `<binary>`).
fn report_set(dir: &Path, input: &Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(input).unwrap();
    let sha256 = pipeline::prereg::sha256_hex(&bytes);
    common::report_files(dir)
        .into_iter()
        .map(|(name, file)| {
            let text = String::from_utf8(file).unwrap_or_else(|_| "<binary>".to_owned());
            let text = text
                .replace(&input.display().to_string(), "<input>")
                .replace(&sha256, "<sha256>")
                .replace(&format!("\"bytes\": {},", bytes.len()), "\"bytes\": <n>,");
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

// ---------------------------------------------------------------------------------------------------------------
// P3

use pipeline::commands::p3::{P3Args, run as run_p3};
use pipeline::scan::board::{self, Format, Record};

/// A task list with what the sample lacks: integer ids and follow-ups, labels, a boolean outcome, a single
/// `reopened_at`, empty labels, naive times (read in --tz). (A task without an id is `line N` in JSONL, `row N`
/// in Parquet: see the errors test.)
const VARIED_TASKS: &str = r#"{"id": 101, "title": "Login", "status": "done", "completed_at": "2025-11-03T10:00:00Z", "followups": [102, "A-7"], "labels": ["auth", "web"], "outcome": true}
{"id": "102", "title": "Login fix", "status": "Closed", "created_at": "2025-11-04T09:00:00", "completed_at": "2025-11-05 10:00:00", "reopened_at": "2025-11-04T12:00:00Z", "type": "bug"}
{"id": "C-3", "title": "Empty labels", "status": "done", "completed_at": "2025-11-06T10:00:00Z", "outcome": "reverted", "labels": []}
{"id": "A-7", "status": "wontfix", "completed_at": "2025-11-07T10:00:00+02:00", "outcome": null, "reopened_at": ["2025-11-08T10:00:00Z", "2025-11-07T12:00:00Z"]}
"#;

/// How a task-table field becomes a Parquet column: list columns, or JSON text.
#[derive(Clone, Copy, PartialEq)]
enum Lists {
    Columns,
    JsonText,
}

/// Writes the upstream task JSONL as a Parquet task table: `id` a string column (integer when every id is one),
/// `outcome` a boolean column when every outcome is one, else strings; `reopened_at` a list of strings (a single
/// value as a list of one), `followups` a list of the ids (an object's `id`), `labels` a list of strings; or, with
/// [`Lists::JsonText`], those three as the JSON text of the field.
fn write_task_table(rows: &[serde_json::Map<String, Value>], path: &Path, lists: Lists) {
    let names = [
        "id",
        "title",
        "type",
        "status",
        "created_at",
        "completed_at",
        "outcome",
        "reopened_at",
        "followups",
        "labels",
    ];
    let field = |row: &serde_json::Map<String, Value>, name: &str| row.get(name).filter(|v| !v.is_null()).cloned();
    let id_text = |value: &Value| match value {
        Value::String(s) => s.clone(),
        Value::Object(o) => id_text_of(&o["id"]),
        other => other.to_string(),
    };
    fn id_text_of(value: &Value) -> String {
        value.as_str().map_or_else(|| value.to_string(), str::to_owned)
    }
    let mut columns = Vec::new();
    for name in names {
        let values: Vec<Option<Value>> = rows.iter().map(|row| field(row, name)).collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let column = match name {
            "reopened_at" | "followups" | "labels" if lists == Lists::JsonText => Column::new(
                name.into(),
                values
                    .iter()
                    .map(|v| {
                        v.as_ref()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    })
                    .collect::<Vec<_>>(),
            ),
            "reopened_at" | "followups" | "labels" => {
                let mut builder = ListStringChunkedBuilder::new(name.into(), values.len(), values.len());
                for value in &values {
                    match value {
                        None => builder.append_null(),
                        Some(Value::Array(items)) => builder.append_values_iter(
                            items.iter().map(id_text).collect::<Vec<_>>().iter().map(String::as_str),
                        ),
                        Some(one) => builder.append_values_iter([id_text(one)].iter().map(String::as_str)),
                    }
                }
                builder.finish().into_series().into_column()
            }
            "id" if values.iter().flatten().all(Value::is_u64) => Column::new(
                name.into(),
                values
                    .iter()
                    .map(|v| v.as_ref().and_then(Value::as_u64))
                    .collect::<Vec<_>>(),
            ),
            "outcome" if values.iter().flatten().all(Value::is_boolean) => Column::new(
                name.into(),
                values
                    .iter()
                    .map(|v| v.as_ref().and_then(Value::as_bool))
                    .collect::<Vec<_>>(),
            ),
            _ => Column::new(
                name.into(),
                values.iter().map(|v| v.as_ref().map(id_text)).collect::<Vec<_>>(),
            ),
        };
        columns.push(column);
    }
    write_parquet(path, columns);
}

/// The tasks of a board without where each was in its input (a line of the JSONL, a row of the table).
fn tasks_of(path: &Path, format: Format) -> Vec<board::Task> {
    let board = board::open(path, Some(format), &jiff::tz::TimeZone::get("Europe/Berlin").unwrap()).unwrap();
    board
        .tasks
        .into_iter()
        .map(|mut task| {
            task.record = Record::Line(0);
            task
        })
        .collect()
}

#[test]
fn p3_reads_the_same_tasks_from_jsonl_and_parquet_into_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let varied = dir.path().join("varied.jsonl");
    std::fs::write(&varied, VARIED_TASKS).unwrap();
    for source in [workspace().join("data/p3/tasks.jsonl"), varied] {
        let rows = jsonl(&source);
        let stem = source.file_stem().unwrap().to_string_lossy().into_owned();
        let jsonl_bytes = std::fs::read(&source).unwrap();
        let expected_tasks = tasks_of(&source, Format::Jsonl);
        // The input at one path for every format (--format says which), so that nothing but its digest, size and
        // format tells the report sets apart.
        let input = dir.path().join("in").join(&stem);
        std::fs::create_dir_all(input.parent().unwrap()).unwrap();
        let run = |format: &str, out: &Path| {
            run_p3(&P3Args {
                inputs: vec![input.clone()],
                format: format.into(),
                tz: Some("Europe/Berlin".into()),
                out: out.to_path_buf(),
                as_of: Some("2025-12-12".into()),
                ..P3Args::default()
            })
            .unwrap()
        };
        std::fs::write(&input, &jsonl_bytes).unwrap();
        let reference_out = dir.path().join(format!("{stem}-jsonl"));
        let reference = run("jsonl", &reference_out);
        let normalise = |text: &str, bytes: &[u8], format: &str| {
            text.replace(&pipeline::prereg::sha256_hex(bytes), "<sha256>")
                .replace(&format!("\"bytes\": {},", bytes.len()), "\"bytes\": <n>,")
                .replace(&format!("\"format\": \"{format}\""), "\"format\": <format>")
                .replace(&format!("({format})"), "(<format>)")
                .replace(&format!("` | {format} | "), "` | <format> | ")
        };
        let expected: Vec<(String, String)> = common::report_files(&reference_out)
            .into_iter()
            .map(|(name, bytes)| (name, normalise(&String::from_utf8_lossy(&bytes), &jsonl_bytes, "jsonl")))
            .collect();
        assert!(expected.iter().any(|(name, _)| name == "p3-tasks.parquet"));

        for lists in [Lists::Columns, Lists::JsonText] {
            let table = dir.path().join(format!("{stem}.parquet"));
            write_task_table(&rows, &table, lists);
            assert_eq!(
                tasks_of(&table, Format::Parquet),
                expected_tasks,
                "{stem}: the tasks differ"
            );

            let table_bytes = std::fs::read(&table).unwrap();
            std::fs::write(&input, &table_bytes).unwrap();
            let out = dir.path().join(format!("{stem}-parquet-{}", lists == Lists::Columns));
            let outcome = run("parquet", &out);
            let got: Vec<(String, String)> = common::report_files(&out)
                .into_iter()
                .map(|(name, bytes)| {
                    (
                        name,
                        normalise(&String::from_utf8_lossy(&bytes), &table_bytes, "parquet"),
                    )
                })
                .collect();
            assert_eq!(got.len(), expected.len());
            for ((name, want), (got_name, got)) in expected.iter().zip(&got) {
                assert_eq!(name, got_name);
                assert!(
                    want == got,
                    "{stem}: {name} from Parquet differs from the JSONL's:\n{want}\n---\n{got}"
                );
            }
            assert_eq!(
                normalise(&outcome.summary, &table_bytes, "parquet"),
                normalise(&reference.summary, &jsonl_bytes, "jsonl")
            );
        }
    }

    // Sniffed: by the magic bytes, whatever the name, and by the name.
    let table = dir.path().join("tasks.parquet");
    let sniffed = board::sniff(&table, &std::fs::read(&table).unwrap()).unwrap();
    assert_eq!(sniffed.format, Format::Parquet);
    assert_eq!(
        board::sniff(Path::new("t.PARQUET"), b"").unwrap().format,
        Format::Parquet
    );
    let out = dir.path().join("sniffed");
    run_p3(&P3Args {
        inputs: vec![table.clone()],
        format: "auto".into(),
        out: out.clone(),
        as_of: Some("2025-12-12".into()),
        ..P3Args::default()
    })
    .unwrap();
    let json: Value = serde_json::from_slice(&std::fs::read(out.join("p3.json")).unwrap()).unwrap();
    let text = json.to_string();
    assert!(text.contains("\"format\":\"parquet\""), "{text}");
    assert!(text.contains("it starts with PAR1"), "{text}");
}

#[test]
fn p3_parquet_errors_name_the_file_the_row_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.parquet");
    let read = |table: &Path| board::open(table, None, &jiff::tz::TimeZone::UTC).map(|b| b.tasks.len());
    write_parquet(
        &table,
        vec![
            Column::new("id".into(), ["A", "B"]),
            Column::new("completed_at".into(), ["2025-11-03T10:00:00Z", "yesterday"]),
        ],
    );
    let error = read(&table).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("{}: row 2: column \"completed_at\": ", table.display())),
        "{error}"
    );
    write_parquet(
        &table,
        vec![
            Column::new("id".into(), ["A"]),
            Column::new("followups".into(), ["[\"B\", 3.5]"]),
        ],
    );
    let error = read(&table).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "{}: row 1: column \"followups[1]\": expected an id or an object with an \"id\", got number 3.5",
            table.display()
        )
    );
    write_parquet(&table, vec![Column::new("labels".into(), ["[not json"])]);
    let error = read(&table).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!(
            "{}: row 1: column \"labels\": not a JSON array",
            table.display()
        )),
        "{error}"
    );
    // Not Parquet at all, though named so: an error, exit 2, no panic.
    let fake = dir.path().join("fake.parquet");
    std::fs::write(&fake, b"{\"id\": \"A\"}\n").unwrap();
    let error = run_p3(&P3Args {
        inputs: vec![fake.clone()],
        format: "auto".into(),
        out: dir.path().join("out"),
        ..P3Args::default()
    })
    .unwrap_err();
    assert_eq!(error.exit_code(), 2u8);
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}: not a readable Parquet file", fake.display())),
        "{error}"
    );
    // Integer ids and follow-ups, a boolean outcome.
    let mut followups = ListPrimitiveChunkedBuilder::<Int64Type>::new("followups".into(), 1, 1, DataType::Int64);
    followups.append_slice(&[8, 9]);
    write_parquet(
        &table,
        vec![
            Column::new("id".into(), [7i64]),
            Column::new("outcome".into(), [false]),
            followups.finish().into_series().into_column(),
        ],
    );
    let board = board::open(&table, None, &jiff::tz::TimeZone::UTC).unwrap();
    let task = &board.tasks[0];
    assert_eq!((task.id.as_str(), task.outcome), ("7", Some(board::Outcome::Wrong)));
    let targets: Vec<&str> = task.links.iter().map(|l| l.target.as_str()).collect();
    assert_eq!(targets, ["8", "9"]);
    // A table without any column P3 reads: tasks named by their rows, none completed.
    write_parquet(&table, vec![Column::new("other".into(), [1i64, 2])]);
    let board = board::open(&table, None, &jiff::tz::TimeZone::UTC).unwrap();
    let ids: Vec<&str> = board.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["row 1", "row 2"]);
    assert_eq!(board.tasks[1].record, Record::Row(2));
}

// ---------------------------------------------------------------------------------------------------------------
// The samples in data/

/// `bytes` compared with the committed file `relative` (under the workspace), or written there when
/// `PHASE0_BLESS` is set.
fn golden(relative: &str, bytes: &[u8]) {
    let path = workspace().join(relative);
    if std::env::var_os("PHASE0_BLESS").is_some() {
        std::fs::write(&path, bytes).unwrap();
        return;
    }
    let committed =
        std::fs::read(&path).unwrap_or_else(|e| panic!("{relative}: {e} (PHASE0_BLESS=1 writes it from the JSONL)"));
    assert!(
        committed == bytes,
        "{relative} is not the table of its JSONL any more: `PHASE0_BLESS=1 cargo test -p pipeline --test formats` \
         rewrites it"
    );
}

/// A Parquet file's bytes as the report writer makes them (every option pinned: the same rows, the same bytes).
fn parquet_bytes(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap();
    let mut frame = ParquetReader::new(file).finish().unwrap();
    pipeline::report::parquet::bytes(&mut frame).unwrap()
}

#[test]
fn the_sample_tables_in_data_hold_the_sample_jsonl() {
    use pipeline::scan::corpus::{CorpusFormat, InvalidPolicy, parse_corpus, parse_corpus_as};
    let dir = tempfile::tempdir().unwrap();

    // P1: data/p1-corpus.{csv,parquet} from data/p1-corpus.jsonl.
    let source = workspace().join("data/p1-corpus.jsonl");
    let (csv, parquet) = (dir.path().join("c.csv"), dir.path().join("c.parquet"));
    write_corpus_tables(&jsonl(&source), &csv, &parquet);
    golden("data/p1-corpus.csv", &std::fs::read(&csv).unwrap());
    golden("data/p1-corpus.parquet", &parquet_bytes(&parquet));
    // Read back, they are the JSONL's corpus: every column, dictionary and count (the JSONL has no blank line, so
    // its line numbers are the tables' row numbers).
    let expected = parse_corpus("c", &std::fs::read(&source).unwrap(), InvalidPolicy::Fail).unwrap();
    for (name, format) in [
        ("data/p1-corpus.csv", CorpusFormat::Csv),
        ("data/p1-corpus.parquet", CorpusFormat::Parquet),
    ] {
        let bytes = std::fs::read(workspace().join(name)).unwrap();
        assert_eq!(CorpusFormat::of(Path::new(name), &bytes), format);
        let corpus = parse_corpus_as("c", &bytes, format, InvalidPolicy::Fail).unwrap();
        assert!(
            corpus == expected,
            "{name} does not hold the corpus of data/p1-corpus.jsonl"
        );
    }

    // P3: data/p3/tasks.parquet from data/p3/tasks.jsonl, list columns.
    let source = workspace().join("data/p3/tasks.jsonl");
    let table = dir.path().join("tasks.parquet");
    write_task_table(&jsonl(&source), &table, Lists::Columns);
    golden("data/p3/tasks.parquet", &parquet_bytes(&table));
    let committed = workspace().join("data/p3/tasks.parquet");
    assert_eq!(tasks_of(&committed, Format::Parquet), tasks_of(&source, Format::Jsonl));
}
