//! `phase0 p1` end to end: the real binary on the sample corpus and on bad inputs.

use std::path::{Path, PathBuf};
use std::process::Output;

use e2e::{files_in, write};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/p1-corpus.jsonl")
}

fn p1(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> Output {
    let mut command = e2e::phase0();
    command.arg("p1").args(args).env_remove("SOURCE_DATE_EPOCH");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("phase0 runs")
}

fn os(text: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(text)
}

#[test]
fn the_same_corpus_gives_byte_identical_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let output = p1(
            &[sample().as_os_str(), os("--out"), out.as_os_str()],
            &[("SOURCE_DATE_EPOCH", "1763683200")],
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(stdout.starts_with(
            "P1 calibration — kill condition (pre-registered): AUC <= 0.60 OR high-subset lift <= +5pp ⇒ do NOT build §7–§8\n"
        ));
        assert!(stdout.contains("  verdict         INCONCLUSIVE: "), "{stdout}");
    }
    assert_eq!(
        files_in(&a),
        vec!["manifest.json", "p1-reliability.svg", "p1-roc.svg", "p1.json", "p1.md"]
    );
    for name in files_in(&a) {
        assert_eq!(
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)).unwrap(),
            "{name} differs"
        );
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(a.join("p1.json")).unwrap()).unwrap();
    assert_eq!(report["generated_at"], "2025-11-21T00:00:00Z");
    assert_eq!(report["status"], "ok");
    assert_eq!(report["inputs"][0]["rows"], 400);
    assert_eq!(report["report"]["metrics"]["n"], 400);
    assert_eq!(report["report"]["metrics"]["verdict"]["kind"], "INCONCLUSIVE");
}

#[test]
fn json_mode_prints_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let output = p1(
        &[
            sample().as_os_str(),
            os("--json"),
            os("--out"),
            dir.path().as_os_str(),
            os("--as-of"),
            os("2026-11-21"),
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(output.stdout, std::fs::read(dir.path().join("p1.json")).unwrap());
}

/// Writes `lines` as a corpus and runs p1 on it; returns the output and the (untouched) output directory.
fn run_corpus(lines: &str, extra: &[&str]) -> (Output, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    write(&corpus, lines);
    let out = dir.path().join("out");
    let mut args: Vec<&std::ffi::OsStr> = vec![corpus.as_os_str(), os("--out"), out.as_os_str()];
    args.extend(extra.iter().map(|a| os(a)));
    let output = p1(&args, &[]);
    (output, dir, out)
}

#[test]
fn bad_rows_fail_with_file_line_and_reason_and_write_nothing() {
    let good = "{\"confidence\": 0.9, \"correct\": true}\n";
    let cases = [
        (
            "{\"confidence\": 1.7, \"correct\": true}\n",
            2,
            "confidence 1.7 is outside [0, 1]",
        ),
        ("{\"confidence\": NaN, \"correct\": true}\n", 2, "invalid JSON"),
        (
            "{\"confidence\": \"0.5\", \"correct\": true}\n",
            2,
            "confidence must be a number",
        ),
        ("{\"correct\": true}\n", 2, "missing field \"confidence\""),
        (
            "{\"confidence\": 0.5, \"correct\": \"yes\"}\n",
            2,
            "correct must be true, false, 0 or 1",
        ),
        ("[0.5, true]\n", 2, "expected a JSON object"),
    ];
    for (bad, line, reason) in cases {
        let (output, dir, out) = run_corpus(&format!("{good}{bad}{good}"), &[]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        let expected = format!("phase0: {}:{line}: {reason}", dir.path().join("corpus.jsonl").display());
        assert!(stderr.starts_with(&expected), "{bad}: {stderr}");
        assert!(output.stdout.is_empty());
        assert!(!out.exists(), "nothing is written for a failed run");
    }
}

#[test]
fn skip_invalid_counts_what_it_skipped_and_marks_the_report_partial() {
    let lines = "{\"confidence\": 0.9, \"correct\": true}\n{\"confidence\": 1.7, \"correct\": true}\n\n{\"confidence\": 0.2, \"correct\": 0}\nnot json\n";
    let (output, _dir, out) = run_corpus(lines, &["--skip-invalid"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("p1.json")).unwrap()).unwrap();
    assert_eq!(report["status"], "partial");
    assert_eq!(report["error_code"], "invalid-rows-skipped");
    assert_eq!(
        report["report"]["corpus"],
        serde_json::json!({"lines": 5, "blank_lines": 1, "rows": 2, "duplicate_lines": 0, "null_confidence": 0,
                           "skipped": {"confidence-out-of-range": 1, "invalid-json": 1}})
    );
    assert_eq!(report["report"]["metrics"]["verdict"]["kind"], "INCONCLUSIVE");
}

#[test]
fn an_empty_corpus_is_inconclusive_not_an_error() {
    let (output, _dir, out) = run_corpus("", &[]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("verdict         INCONCLUSIVE: AUC undefined: 0 correct and 0 wrong rows"),
        "{stdout}"
    );
    assert!(out.join("p1.md").exists());
}

#[test]
fn bad_arguments_and_files_exit_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let output = p1(&[missing.as_os_str()], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .starts_with(&format!("phase0: {}: cannot read the corpus", missing.display()))
    );

    let prereg = dir.path().join("p1.toml");
    write(&prereg, "experiment = \"p1\"\n");
    let output = p1(&[sample().as_os_str(), os("--prereg"), prereg.as_os_str()], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with(&format!("phase0: {}:", prereg.display())));

    let output = p1(&[sample().as_os_str(), os("--as-of"), os("next tuesday")], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--as-of \"next tuesday\" is not a date"));
}

#[test]
fn breakdowns_by_field_and_unknown_fields_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = p1(
        &[
            sample().as_os_str(),
            os("--by"),
            os("agent"),
            os("--out"),
            dir.path().as_os_str(),
            os("--json"),
        ],
        &[],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let groups = report["report"]["breakdowns"]["agent"].as_array().unwrap();
    let names: Vec<&str> = groups.iter().map(|g| g["value"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["aider", "claude-code", "codex"]);
    let total: u64 = groups.iter().map(|g| g["n"].as_u64().unwrap()).sum();
    assert_eq!(total, 400, "every row lands in exactly one group");
    assert!(
        std::fs::read_to_string(dir.path().join("p1.md"))
            .unwrap()
            .contains("## By agent")
    );

    let output = p1(&[sample().as_os_str(), os("--by"), os("color")], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "phase0: --by color: not a breakdown field (one of agent, surface, task_ref, session_id)\n"
    );
}
