//! The P3 audit loop end to end (`phase0 p3 … audit`, then `--audit SHEET`): a sheet drawn from a run, filled by a
//! reader, read back into a corrected base rate that decides the verdict.

use std::path::{Path, PathBuf};

use pipeline::commands::p3::{P3Args, run, write_audit};

/// A sheet's header as written before the `title` column came in: columns are read by name, so it reads the same.
const OLD_HEADER: &str = "input,task,stratum,stratum_size,completed,signals,set_aside_by,genuine,note\n";

/// 100 completed tasks, 30 of them with an explicit `wrong` outcome: a base rate of 30% [21.9%, 39.6%], a PASS.
fn export(dir: &Path) -> PathBuf {
    let rows: String = (0..100)
        .map(|i| {
            let outcome = if i % 10 < 3 { "\"wrong\"" } else { "null" };
            format!("{{\"id\":\"T-{i}\",\"title\":\"Task number {i}\",\"status\":\"done\",\"completed_at\":\"2025-03-01T10:00:00Z\",\"outcome\":{outcome}}}\n")
        })
        .collect();
    let path = dir.join("tasks.jsonl");
    std::fs::write(&path, rows).unwrap();
    path
}

fn args(dir: &Path, input: PathBuf, audit: Option<PathBuf>) -> P3Args {
    P3Args {
        inputs: vec![input],
        format: "auto".into(),
        out: dir.join("reports"),
        as_of: Some("2026-01-01".into()),
        audit,
        ..P3Args::default()
    }
}

#[test]
fn a_reader_who_finds_most_signals_wrong_turns_a_pass_into_a_kill() {
    let tmp = tempfile::tempdir().unwrap();
    let input = export(tmp.path());
    let before = run(&args(tmp.path(), input.clone(), None)).unwrap();
    assert!(
        before.summary.contains("  verdict         PASS: "),
        "{}",
        before.summary
    );

    let sheet = tmp.path().join("audit.csv");
    let written = write_audit(&args(tmp.path(), input.clone(), None), Some(20), &sheet).unwrap();
    assert!(
        written.summary.starts_with(
            "P3 audit sheet — 20 of 30 tasks with a counted signal and 0 of 0 with only set-aside signals (100 eligible)"
        ),
        "{}",
        written.summary
    );
    let text = std::fs::read_to_string(&sheet).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(
        lines[0],
        "input,task,title,stratum,stratum_size,completed,signals,set_aside_by,genuine,note"
    );
    assert_eq!(lines.len(), 21);
    // Each task with its own title, so the reader knows which work to look for.
    assert!(
        lines[1..].iter().all(|l| {
            let fields: Vec<&str> = l.split(',').collect();
            fields[2].strip_prefix("Task number ") == fields[1].strip_prefix("T-")
        }),
        "{text}"
    );
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.contains(",counted,30,2025-03-01T10:00:00Z,wrong.explicit ")),
        "{text}"
    );
    // The same run draws the same sheet.
    write_audit(
        &args(tmp.path(), input.clone(), None),
        Some(20),
        &tmp.path().join("again.csv"),
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(tmp.path().join("again.csv")).unwrap(), text);

    // The reader finds 4 of the 20 genuine.
    for (i, line) in lines.iter_mut().enumerate().skip(1) {
        line.truncate(line.len() - 2);
        line.push_str(if i <= 4 { ",yes," } else { ",no," });
    }
    std::fs::write(&sheet, lines.join("\n") + "\n").unwrap();
    let after = run(&args(tmp.path(), input.clone(), Some(sheet.clone()))).unwrap();
    // (30 · 4/20) / 100 = 6%.
    assert!(
        after.summary.contains(&format!(
            "  audit           {}: counted 4 of 20 read genuine (20.0% [8.1%, 41.6%]); audit-corrected base rate 6.0% ",
            sheet.display()
        )),
        "{}",
        after.summary
    );
    assert!(
        after.summary.contains("(verdict before the audit: PASS)"),
        "{}",
        after.summary
    );
    // The rules' own sensitivity speaks of the verdict before the audit (PASS down to 28 of 100).
    assert!(
        after.summary.contains(
            "  counted         the unaudited verdict stays PASS unless more than 2 of the 30 tasks with a signal are \
             artifacts (KILL if none counts)"
        ),
        "{}",
        after.summary
    );
    assert!(
        after
            .summary
            .contains("  verdict         KILL: decided on the audit-corrected interval: audit-corrected detectable-outcome base rate 6.0% ["),
        "{}",
        after.summary
    );
    let json: serde_json::Value = serde_json::from_slice(&after.json).unwrap();
    assert_eq!(json["report"]["audit"]["strata"][0]["genuine"], 4);
    assert_eq!(json["report"]["audit"]["raw_verdict"]["kind"], "PASS");
    assert_eq!(json["report"]["analysis"]["verdict"]["kind"], "KILL");
    let markdown = std::fs::read_to_string(tmp.path().join("reports/p3.md")).unwrap();
    assert!(
        markdown.contains("| counted | 30 | 20 | 4 | 0 | 20.0% [8.1%, 41.6%] |"),
        "{markdown}"
    );
    // Byte-identical reports from the same inputs and sheet.
    assert_eq!(run(&args(tmp.path(), input, Some(sheet))).unwrap().json, after.json);
}

#[test]
fn a_sheet_that_does_not_fit_is_named_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let input = export(tmp.path());
    let sheet = tmp.path().join("bad.csv");
    std::fs::write(&sheet, format!("{OLD_HEADER}x,T-0,counted,1,,,,perhaps,\n")).unwrap();
    let error = run(&args(tmp.path(), input.clone(), Some(sheet.clone()))).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}:2: genuine \"perhaps\" is not yes, no, unclear or empty",
            sheet.display()
        )
    );
    assert_eq!(error.exit_code(), 2);
    assert!(!tmp.path().join("reports").exists(), "nothing written");
    // Rows of tasks the run does not have in that stratum are left out and named.
    std::fs::write(&sheet, format!("{OLD_HEADER}elsewhere.jsonl,T-0,counted,1,,,,no,\n")).unwrap();
    let outcome = run(&args(tmp.path(), input, Some(sheet))).unwrap();
    assert!(
        outcome.summary.contains(
            "  audit rows      1 of the sheet's 1 rows name no task of their stratum in this run (left out): line 2 T-0"
        ),
        "{}",
        outcome.summary
    );
    assert!(
        outcome
            .summary
            .contains("counted none read (kept as the rules decided)"),
        "{}",
        outcome.summary
    );
}

#[test]
fn a_sheet_with_nothing_read_decides_nothing_and_repeated_tasks_keep_their_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let input = export(tmp.path());
    let sheet = tmp.path().join("empty.csv");
    std::fs::write(&sheet, OLD_HEADER).unwrap();
    let outcome = run(&args(tmp.path(), input.clone(), Some(sheet))).unwrap();
    assert!(
        outcome.summary.contains("  verdict         PASS: ")
            && outcome
                .summary
                .contains("the audit sheet has no row read (genuine yes or no), so it decides nothing"),
        "{}",
        outcome.summary
    );
    let markdown = std::fs::read_to_string(tmp.path().join("reports/p3.md")).unwrap();
    assert!(
        markdown
            .contains("No row of the sheet was read, so the audit decides nothing:\nthe verdict above is the rules'."),
        "{markdown}"
    );
    // The same export given twice: the run counts 60 tasks with a signal of 200; the sheet names each task once and
    // gives the run's count as the stratum's size.
    let mut twice = args(tmp.path(), input.clone(), None);
    twice.inputs.push(input);
    let path = tmp.path().join("twice.csv");
    let written = write_audit(&twice, Some(100), &path).unwrap();
    assert!(
        written.summary.starts_with(
            "P3 audit sheet — 30 of 60 tasks with a counted signal and 0 of 0 with only set-aside signals (200 eligible)"
        ),
        "{}",
        written.summary
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.contains(",counted,60,")).count(),
        30,
        "{text}"
    );
}

#[test]
fn a_sample_of_nothing_is_refused_before_the_inputs_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    // The input does not exist: the refusal comes first.
    let missing = tmp.path().join("missing.jsonl");
    let sheet = tmp.path().join("audit.csv");
    for (n, expected) in [
        (0, "--per-stratum 0 is outside [1, 1000]"),
        (1001, "--per-stratum 1001 is outside [1, 1000]"),
    ] {
        let error = write_audit(&args(tmp.path(), missing.clone(), None), Some(n), &sheet).unwrap_err();
        assert_eq!(error.to_string(), expected);
        assert!(!sheet.exists());
    }
    let input = export(tmp.path());
    write_audit(&args(tmp.path(), input, None), Some(1000), &sheet).unwrap();
    assert_eq!(std::fs::read_to_string(&sheet).unwrap().lines().count(), 31);
}
