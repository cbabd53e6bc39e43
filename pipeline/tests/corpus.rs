//! The P1 corpus reader: every documented rule, with exact messages and line numbers.

use std::io::Write as _;
use std::path::Path;

use pipeline::scan::corpus::{
    Corpus, CorpusError, InvalidPolicy, InvalidReason, parse_corpus, parse_corpus_with_chunk, read_corpus,
};

const OK: &str = r#"{"confidence": 0.5, "correct": true}"#;

fn parse(input: &str) -> Corpus {
    parse_corpus("corpus.jsonl", input.as_bytes(), InvalidPolicy::Fail).expect("valid corpus")
}

/// The error for `input` under `Fail`, as `(line, reason, displayed message)`.
fn fail(input: &[u8]) -> (u64, InvalidReason, String) {
    match parse_corpus("corpus.jsonl", input, InvalidPolicy::Fail) {
        Err(e @ CorpusError::Invalid { line, reason, .. }) => (line, reason, e.to_string()),
        other => panic!("expected an invalid row, got {other:?}"),
    }
}

/// Puts `bad` on line 3, after a valid line and a blank line, and checks the error.
fn check(bad: &str, reason: InvalidReason, message: &str) {
    let input = format!("{OK}\n\n{bad}\n{OK}\n");
    let (line, got_reason, text) = fail(input.as_bytes());
    assert_eq!((line, got_reason), (3, reason), "{bad}: {text}");
    assert_eq!(text, format!("corpus.jsonl:3: {message}"), "{bad}");
}

#[test]
fn reads_rows_and_breakdowns() {
    let corpus = parse(concat!(
        r#"{"confidence": 0.9, "correct": true, "task_ref": "T-1", "agent": "claude", "surface": "cli", "session_id": "s1", "extra": {"x": [1, 2]}}"#,
        "\n",
        r#"{"correct": false, "confidence": 0, "agent": "codex"}"#,
        "\n",
        r#"{"confidence": 1, "correct": 1, "agent": "claude", "surface": 3, "task_ref": null, "session_id": ["s"]}"#,
        "\n",
    ));
    assert_eq!(corpus.len(), 3);
    assert_eq!(corpus.confidence, [0.9, 0.0, 1.0]);
    assert_eq!(corpus.correct, [true, false, true]);
    assert_eq!(corpus.line, [1, 2, 3]);
    assert_eq!(corpus.agent.dict(), ["claude", "codex"]);
    assert_eq!(
        corpus.agent.iter().collect::<Vec<_>>(),
        [Some("claude"), Some("codex"), Some("claude")]
    );
    assert_eq!(corpus.agent.index(2), Some(0));
    // Non-string breakdown values are absent, not errors.
    assert_eq!(corpus.surface.iter().collect::<Vec<_>>(), [Some("cli"), None, None]);
    assert_eq!(corpus.task_ref.get(0), Some("T-1"));
    assert_eq!(corpus.task_ref.get(1), None);
    assert_eq!(corpus.task_ref.get(2), None);
    assert_eq!(corpus.session_id.get(0), Some("s1"));
    assert_eq!(corpus.session_id.get(2), None);
    assert_eq!(corpus.session_id.get(99), None);
    assert_eq!(corpus.session_id.len(), 3);
    assert_eq!(corpus.stats.lines, 3);
    assert_eq!(corpus.stats.rows, 3);
    assert_eq!(corpus.stats.blank_lines, 0);
    assert_eq!(corpus.stats.duplicate_lines, 0);
    assert!(corpus.stats.skipped.is_empty());
}

#[test]
fn escaped_breakdown_strings_are_unescaped_and_interned() {
    let corpus = parse(concat!(
        r#"{"confidence": 0.1, "correct": true, "agent": "cl\u0061ude"}"#,
        "\n",
        r#"{"confidence": 0.2, "correct": true, "agent": "claude"}"#,
        "\n",
        r#"{"confidence": 0.3, "correct": true, "agent": "a\"b"}"#,
        "\n",
    ));
    assert_eq!(corpus.agent.dict(), ["claude", "a\"b"]);
    assert_eq!(corpus.agent.index(0), corpus.agent.index(1));
}

#[test]
fn correct_accepts_booleans_and_zero_one() {
    let corpus = parse(concat!(
        "{\"confidence\": 0.5, \"correct\": true}\n",
        "{\"confidence\": 0.5, \"correct\": false}\n",
        "{\"confidence\": 0.5, \"correct\": 1}\n",
        "{\"confidence\": 0.5, \"correct\": 0}\n",
        "{\"confidence\": 0.5, \"correct\": 1.0}\n",
        "{\"confidence\": 0.5, \"correct\": 0.0}\n",
        "{\"confidence\": 0.5, \"correct\": 1e0}\n",
    ));
    assert_eq!(corpus.correct, [true, false, true, false, true, false, true]);
}

#[test]
fn confidence_bounds_are_inclusive() {
    let corpus = parse(concat!(
        "{\"confidence\": 0, \"correct\": true}\n",
        "{\"confidence\": 1, \"correct\": true}\n",
        "{\"confidence\": 0.0, \"correct\": true}\n",
        "{\"confidence\": 1.0, \"correct\": true}\n",
        "{\"confidence\": 1e-3, \"correct\": true}\n",
    ));
    assert_eq!(corpus.confidence, [0.0, 1.0, 0.0, 1.0, 0.001]);
}

#[test]
fn every_reason_has_its_message_and_line() {
    use InvalidReason::*;
    check(
        "{\"confidence\": 0.5",
        InvalidJson,
        "invalid JSON: EOF while parsing an object at column 18",
    );
    check("NaN", InvalidJson, "invalid JSON: expected value at column 1");
    check(
        "{\"confidence\": NaN, \"correct\": true}",
        InvalidJson,
        "invalid JSON: expected value at column 16",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": true} x",
        InvalidJson,
        "invalid JSON: trailing characters at column 38",
    );
    check(
        "{\"confidence\": 0.5, \"confidence\": 0.6, \"correct\": true}",
        InvalidJson,
        "invalid JSON: duplicate field `confidence` at column 32",
    );
    check("[0.5, true]", NotAnObject, "expected a JSON object, got an array");
    check("0.5", NotAnObject, "expected a JSON object, got a number");
    check("\"row\"", NotAnObject, "expected a JSON object, got a string");
    check("null", NotAnObject, "expected a JSON object, got null");
    check("true", NotAnObject, "expected a JSON object, got a boolean");
    check("{\"correct\": true}", MissingConfidence, "missing field \"confidence\"");
    check(
        "{\"confidence\": \"NaN\", \"correct\": true}",
        ConfidenceNotANumber,
        "confidence must be a number, got string \"NaN\"",
    );
    check(
        "{\"confidence\": true, \"correct\": true}",
        ConfidenceNotANumber,
        "confidence must be a number, got boolean true",
    );
    check(
        "{\"confidence\": [0.5], \"correct\": true}",
        ConfidenceNotANumber,
        "confidence must be a number, got an array",
    );
    check(
        "{\"confidence\": 1.7, \"correct\": true}",
        ConfidenceOutOfRange,
        "confidence 1.7 is outside [0, 1]",
    );
    check(
        "{\"confidence\": -0.1, \"correct\": true}",
        ConfidenceOutOfRange,
        "confidence -0.1 is outside [0, 1]",
    );
    check(
        "{\"confidence\": 2, \"correct\": true}",
        ConfidenceOutOfRange,
        "confidence 2 is outside [0, 1]",
    );
    check(
        "{\"confidence\": 1e300, \"correct\": true}",
        ConfidenceOutOfRange,
        "confidence 1e300 is outside [0, 1]",
    );
    check("{\"confidence\": 0.5}", MissingCorrect, "missing field \"correct\"");
    check(
        "{\"confidence\": 0.5, \"correct\": 2}",
        CorrectNotBoolean,
        "correct must be true, false, 0 or 1, got 2",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": 0.5}",
        CorrectNotBoolean,
        "correct must be true, false, 0 or 1, got 0.5",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": \"yes\"}",
        CorrectNotBoolean,
        "correct must be true, false, 0 or 1, got string \"yes\"",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": null}",
        CorrectNotBoolean,
        "correct must be true, false, 0 or 1, got null",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": -1}",
        CorrectNotBoolean,
        "correct must be true, false, 0 or 1, got -1",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": true, \"risk_score\": 1.5}",
        RiskScoreInvalid,
        "risk_score must be a number in [0, 1], got 1.5",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": true, \"risk_score\": \"high\"}",
        RiskScoreInvalid,
        "risk_score must be a number in [0, 1], got a string",
    );
    check(
        "{\"confidence\": 0.5, \"correct\": true, \"needs_review\": 1}",
        NeedsReviewNotBoolean,
        "needs_review must be true or false, got 1",
    );

    // Invalid UTF-8 (inside a string of an ignored field, where a JSON parser might not look).
    let mut input = format!("{OK}\n\n").into_bytes();
    input.extend_from_slice(b"{\"note\": \"\xff\", \"confidence\": 0.5, \"correct\": true}\n");
    let (line, reason, text) = fail(&input);
    assert_eq!((line, reason), (3, InvalidUtf8));
    assert_eq!(text, "corpus.jsonl:3: invalid UTF-8 at column 11");
}

#[test]
fn reasons_have_stable_ids_and_descriptions() {
    let ids: Vec<&str> = InvalidReason::ALL.iter().map(|r| r.id()).collect();
    assert_eq!(
        ids,
        [
            "invalid-utf8",
            "invalid-json",
            "not-an-object",
            "missing-confidence",
            "confidence-not-a-number",
            "confidence-out-of-range",
            "missing-correct",
            "correct-not-boolean",
            "risk-score-invalid",
            "needs-review-not-boolean",
            "line-too-long",
        ]
    );
    assert_eq!(
        InvalidReason::ConfidenceOutOfRange.to_string(),
        "confidence is outside [0, 1]"
    );
    for reason in InvalidReason::ALL {
        assert!(!reason.to_string().is_empty());
    }
}

#[test]
fn the_first_reason_that_applies_wins() {
    // Missing confidence is checked before a bad `correct`.
    check(
        "{\"correct\": 7}",
        InvalidReason::MissingConfidence,
        "missing field \"confidence\"",
    );
    // A bad confidence is reported before a missing `correct`.
    check(
        "{\"confidence\": 3}",
        InvalidReason::ConfidenceOutOfRange,
        "confidence 3 is outside [0, 1]",
    );
}

/// A corpus of `n` valid lines with bad lines at the given (1-based) line numbers.
fn with_bad_lines(n: u64, bad: &[(u64, &str)]) -> String {
    let mut out = String::new();
    for line in 1..=n {
        match bad.iter().find(|(l, _)| *l == line) {
            Some((_, text)) => out.push_str(text),
            None => out.push_str(&format!(
                "{{\"confidence\": 0.{}, \"correct\": {}}}",
                line % 10,
                line % 2 == 0
            )),
        }
        out.push('\n');
    }
    out
}

#[test]
fn fail_reports_the_first_bad_line_across_chunks() {
    let input = with_bad_lines(
        2000,
        &[
            (1500, "{\"confidence\": 9, \"correct\": true}"),
            (1800, "oops"),
            (1999, "[]"),
            (40, "{\"confidence\": 0.5}"),
        ],
    );
    assert!(input.len() > 64 * 1024);
    for chunk in [1, 7, 100, 4096, 1 << 20] {
        match parse_corpus_with_chunk("big.jsonl", input.as_bytes(), InvalidPolicy::Fail, chunk) {
            Err(
                e @ CorpusError::Invalid {
                    line: 40,
                    reason: InvalidReason::MissingCorrect,
                    ..
                },
            ) => {
                assert_eq!(e.to_string(), "big.jsonl:40: missing field \"correct\"");
            }
            other => panic!("chunk {chunk}: {other:?}"),
        }
    }
    // Without the early error, the next one is found (in a later chunk).
    let input = with_bad_lines(
        2000,
        &[(1500, "{\"confidence\": 9, \"correct\": true}"), (1800, "oops")],
    );
    for chunk in [1, 100, 4096] {
        match parse_corpus_with_chunk("big.jsonl", input.as_bytes(), InvalidPolicy::Fail, chunk) {
            Err(e @ CorpusError::Invalid { line: 1500, .. }) => {
                assert_eq!(e.to_string(), "big.jsonl:1500: confidence 9 is outside [0, 1]");
            }
            other => panic!("chunk {chunk}: {other:?}"),
        }
    }
}

#[test]
fn skip_counts_every_bad_line_by_reason() {
    let input = with_bad_lines(
        1000,
        &[
            (3, "oops"),
            (10, "{\"confidence\": 9, \"correct\": true}"),
            (11, "{\"confidence\": 1.5, \"correct\": true}"),
            (500, "{\"confidence\": 0.5}"),
            (999, "[1]"),
            (1000, ""),
        ],
    );
    let whole = parse_corpus("c.jsonl", input.as_bytes(), InvalidPolicy::Skip).unwrap();
    let stats = &whole.stats;
    assert_eq!(stats.lines, 1000);
    assert_eq!(stats.blank_lines, 1);
    assert_eq!(stats.rows, 994);
    assert_eq!(whole.len(), 994);
    assert_eq!(stats.skipped_total(), 5);
    let skipped: Vec<(InvalidReason, u64)> = stats.skipped.iter().map(|(r, n)| (*r, *n)).collect();
    assert_eq!(
        skipped,
        [
            (InvalidReason::InvalidJson, 1),
            (InvalidReason::NotAnObject, 1),
            (InvalidReason::ConfidenceOutOfRange, 2),
            (InvalidReason::MissingCorrect, 1),
        ]
    );
    assert_eq!(stats.lines, stats.blank_lines + stats.rows + stats.skipped_total());
    assert!(!whole.line.contains(&3) && !whole.line.contains(&500));
    assert_eq!(whole.line[..3], [1, 2, 4]);
    // The result does not depend on the chunking.
    for chunk in [1, 13, 1000] {
        let chunked = parse_corpus_with_chunk("c.jsonl", input.as_bytes(), InvalidPolicy::Skip, chunk).unwrap();
        assert_eq!(chunked, whole, "chunk {chunk}");
    }
}

#[test]
fn blank_lines_crlf_bom_and_no_final_newline() {
    let input =
        "\u{feff}{\"confidence\": 0.25, \"correct\": true}\r\n  \r\n\t\n\r\n{\"confidence\": 0.75, \"correct\": 0}";
    let corpus = parse(input);
    assert_eq!(corpus.confidence, [0.25, 0.75]);
    assert_eq!(corpus.correct, [true, false]);
    assert_eq!(corpus.line, [1, 5]);
    assert_eq!(corpus.stats.lines, 5);
    assert_eq!(corpus.stats.blank_lines, 3);
    assert_eq!(corpus.stats.rows, 2);

    // A trailing newline does not add a line; a blank last line does.
    assert_eq!(parse(&format!("{OK}\n")).stats.lines, 1);
    assert_eq!(parse(&format!("{OK}\n\n")).stats.lines, 2);
    assert_eq!(parse(&format!("{OK}\n\n")).stats.blank_lines, 1);

    // A BOM elsewhere than at the start is invalid JSON.
    let (line, reason, _) = fail(format!("{OK}\n\u{feff}{OK}\n").as_bytes());
    assert_eq!((line, reason), (2, InvalidReason::InvalidJson));
}

#[test]
fn duplicates_are_kept_and_counted() {
    let a = r#"{"confidence": 0.5, "correct": true, "agent": "x"}"#;
    let b = r#"{"confidence": 0.5, "correct": true,  "agent": "x"}"#; // differs by a space: not a duplicate
    let input = format!("{a}\n{b}\n{a}\r\n\n{a}\n{b}\n{OK}");
    let corpus = parse(&input);
    assert_eq!(corpus.len(), 6);
    assert_eq!(corpus.stats.duplicate_lines, 3);
    for chunk in [1, 20, 100] {
        let chunked = parse_corpus_with_chunk("c", input.as_bytes(), InvalidPolicy::Fail, chunk).unwrap();
        assert_eq!(chunked.stats.duplicate_lines, 3, "chunk {chunk}");
    }
    // Invalid lines are never counted as duplicates.
    let corpus = parse_corpus("c", b"oops\noops\n", InvalidPolicy::Skip).unwrap();
    assert_eq!(corpus.stats.duplicate_lines, 0);
    assert_eq!(corpus.stats.skipped.get(&InvalidReason::InvalidJson), Some(&2));
}

#[test]
fn empty_input_is_an_empty_corpus() {
    for input in ["", "\n\n", "\u{feff}", "  \r\n"] {
        let corpus = parse(input);
        assert!(corpus.is_empty(), "{input:?}");
        assert_eq!(corpus.stats.rows, 0);
        assert!(corpus.agent.is_empty() && corpus.agent.dict().is_empty());
    }
    assert_eq!(parse("").stats.lines, 0);
    assert_eq!(parse("\n\n").stats.blank_lines, 2);
}

#[test]
fn dictionaries_follow_first_appearance_and_are_deterministic() {
    let agents = ["c", "a", "b", "a", "d", "c"];
    let input: String = agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            format!(
                "{{\"confidence\": 0.5, \"correct\": true, \"agent\": \"{a}\", \"session_id\": \"s{}\"}}\n",
                i % 2
            )
        })
        .collect();
    let whole = parse(&input);
    assert_eq!(whole.agent.dict(), ["c", "a", "b", "d"]);
    assert_eq!(whole.session_id.dict(), ["s0", "s1"]);
    assert_eq!(whole.agent.iter().map(Option::unwrap).collect::<Vec<_>>(), agents);
    for chunk in [1, 50, 90, 200] {
        let chunked = parse_corpus_with_chunk("c", input.as_bytes(), InvalidPolicy::Fail, chunk).unwrap();
        assert_eq!(chunked, whole, "chunk {chunk}");
    }
}

#[test]
fn read_corpus_reads_files_and_names_them_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corpus.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(file, "{OK}").unwrap();
    writeln!(file, "{{\"confidence\": 1.7, \"correct\": true}}").unwrap();
    drop(file);

    let corpus = read_corpus(&path, InvalidPolicy::Skip).unwrap();
    assert_eq!(corpus.len(), 1);
    let err = read_corpus(&path, InvalidPolicy::Fail).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}:2: confidence 1.7 is outside [0, 1]", path.display())
    );

    let missing = dir.path().join("missing.jsonl");
    match read_corpus(&missing, InvalidPolicy::Fail) {
        Err(e @ CorpusError::Read { .. }) => {
            assert!(
                e.to_string()
                    .starts_with(&format!("{}: cannot read the corpus: ", missing.display())),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn fixture_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/small.jsonl");
    let corpus = read_corpus(&path, InvalidPolicy::Skip).unwrap();
    assert_eq!(corpus.stats.lines, 6);
    assert_eq!(corpus.stats.rows, 4);
    assert_eq!(corpus.stats.blank_lines, 1);
    assert_eq!(corpus.stats.duplicate_lines, 1);
    assert_eq!(corpus.stats.skipped.get(&InvalidReason::CorrectNotBoolean), Some(&1));
    assert_eq!(corpus.surface.dict(), ["cli", "ide"]);
    let err = read_corpus(&path, InvalidPolicy::Fail).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("small.jsonl:5: correct must be true, false, 0 or 1, got string \"yes\""),
        "{err}"
    );
}

#[test]
fn chunking_and_threads_do_not_change_the_result() {
    let mut input = String::from("\u{feff}");
    for i in 0..300 {
        let agent = ["a", "b\\u00e9", "c"][i % 3];
        let extra = if i % 7 == 0 { "\r\n\r\n" } else { "\n" };
        let row = match i % 11 {
            0 => "{\"confidence\": 3, \"correct\": true}".to_owned(),
            1 => "{\"confidence\": 0.5, \"correct\": true, \"agent\": \"a\"}".to_owned(),
            _ => format!(
                "{{\"confidence\": 0.{i}, \"correct\": {}, \"agent\": \"{agent}\", \"session_id\": \"s{}\"}}",
                i % 2,
                i / 10
            ),
        };
        input.push_str(&row);
        input.push_str(extra);
    }
    let whole = parse_corpus("c", input.as_bytes(), InvalidPolicy::Skip).unwrap();
    assert_eq!(whole.agent.dict(), ["a", "c", "bé"]);
    assert!(whole.stats.duplicate_lines > 0);
    assert_eq!(
        whole.stats.lines,
        whole.stats.blank_lines + whole.stats.rows + whole.stats.skipped_total()
    );
    for chunk in [1, 2, 3, 5, 64, 333, 4096] {
        let chunked = parse_corpus_with_chunk("c", input.as_bytes(), InvalidPolicy::Skip, chunk).unwrap();
        assert_eq!(chunked, whole, "chunk {chunk}");
    }
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let serial = one_thread.install(|| parse_corpus_with_chunk("c", input.as_bytes(), InvalidPolicy::Skip, 100));
    assert_eq!(serial.unwrap(), whole);
}

#[test]
fn null_confidence_and_risk_columns() {
    // Without the risk fields, no risk columns and no null confidence.
    let plain = parse(concat!(r#"{"confidence": 0.5, "correct": true}"#, "\n"));
    assert!(plain.risk_score.is_empty() && plain.needs_review.is_empty());
    assert_eq!(plain.stats.null_confidence, 0);

    let input = concat!(
        r#"{"confidence": null, "correct": false, "risk_score": 0.9, "needs_review": true}"#,
        "\n",
        r#"{"confidence": 0.7, "correct": true}"#,
        "\n\n",
        r#"{"confidence": 0.2, "correct": false, "risk_score": 0.1, "needs_review": null}"#,
        "\n",
        r#"{"confidence": 0.4, "correct": true, "risk_score": null, "needs_review": false}"#,
        "\n",
    );
    // One chunk per line too: the sparse risk fields land on the right rows across chunks.
    for chunk in [1, 4 << 20] {
        let corpus = parse_corpus_with_chunk("corpus.jsonl", input.as_bytes(), InvalidPolicy::Fail, chunk).unwrap();
        assert_eq!(corpus.len(), 4);
        assert!(corpus.confidence[0].is_nan());
        assert_eq!(&corpus.confidence[1..], [0.7, 0.2, 0.4]);
        assert_eq!(corpus.stats.null_confidence, 1);
        let risk: Vec<Option<f64>> = corpus.risk_score.iter().map(|v| (!v.is_nan()).then_some(*v)).collect();
        assert_eq!(risk, [Some(0.9), None, Some(0.1), None]);
        assert_eq!(corpus.needs_review, [Some(true), None, None, Some(false)]);
        assert_eq!(corpus.line, [1, 2, 4, 5]);
    }
}
