//! `phase0 corpus` end to end: simulated sessions run the real `reflect-hook` in a fixture repository
//! (`tests/fixtures/corpus-history.sh`), commit, and some of their commits are later reverted or fixed; the corpus
//! built from their sidecars and the history is then fed to `phase0 p1`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use e2e::{Sandbox, binary, files_in, stdout_of_success as ok};
use serde_json::Value;

struct Fixture {
    sandbox: Sandbox,
    repo: PathBuf,
    reflections: PathBuf,
}

fn fixture() -> Fixture {
    let sandbox = Sandbox::new();
    let repo = sandbox.path().join("app");
    let reflections = sandbox.path().join("capture/reflections");
    sandbox.script(
        "fixtures/corpus-history.sh",
        &[&repo, &reflections, &binary("reflect-hook")],
    );
    Fixture {
        sandbox,
        repo,
        reflections,
    }
}

fn phase0(args: &[&std::ffi::OsStr]) -> Output {
    e2e::phase0()
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .expect("phase0 runs")
}

fn os(text: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(text)
}

fn corpus(f: &Fixture, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        os("corpus"),
        os("--reflections"),
        f.reflections.as_os_str(),
        os("--repo"),
        f.repo.as_os_str(),
        os("--out"),
        out.as_os_str(),
    ];
    args.extend(extra.iter().map(|a| os(a)));
    phase0(&args)
}

/// The fixture's commits by subject.
fn shas(f: &Fixture) -> BTreeMap<String, String> {
    f.sandbox
        .git(&f.repo, &["log", "--format=%H %s"])
        .lines()
        .map(|line| {
            let (id, subject) = line.split_once(' ').unwrap();
            (subject.to_string(), id.to_string())
        })
        .collect()
}

/// (session, confidence, correct, reason, failing subject, remedy subject, commit subjects).
type Labeled = (String, Value, bool, String, Value, Value, Vec<String>);

#[test]
fn every_row_is_labeled_with_its_reason_and_the_counts_add_up() {
    let f = fixture();
    let out = f.sandbox.path().join("out/corpus.jsonl");
    let output = corpus(&f, &out, &["--as-of", "2026-03-15"]);
    let stdout = ok(&output);
    let sha = shas(&f);
    let lines: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let found: Vec<Labeled> = lines
        .iter()
        .map(|row| {
            let name = |v: &Value| -> Value {
                v.as_str()
                    .map(|id| Value::from(sha.iter().find(|(_, s)| *s == id).unwrap().0.as_str()))
                    .unwrap_or(Value::Null)
            };
            (
                row["session_id"].as_str().unwrap().to_string(),
                row["confidence"].clone(),
                row["correct"].as_bool().unwrap(),
                row["label_reason"].as_str().unwrap().to_string(),
                name(&row["failure_sha"]),
                name(&row["remedy_sha"]),
                row["commits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| name(c).as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    let row = |session: &str, confidence: Value, correct, reason: &str, failing: Value, remedy: Value, commit: &str| {
        (
            session.to_string(),
            confidence,
            correct,
            reason.to_string(),
            failing,
            remedy,
            vec![commit.to_string()],
        )
    };
    let s = |subject: &str| Value::from(subject);
    assert_eq!(
        found,
        vec![
            row(
                "s-auth",
                0.9.into(),
                false,
                "revert",
                s("Add login throttling"),
                s("Revert \"Add login throttling\""),
                "Add login throttling"
            ),
            row(
                "s-migrate",
                0.8.into(),
                false,
                "fixes-trailer",
                s("Index orders by customer"),
                s("migrations: index the right column"),
                "Index orders by customer"
            ),
            row(
                "s-parser",
                0.3.into(),
                false,
                "fix-after-change",
                s("Add the parser"),
                s("fix: the parser counts surrounding blanks"),
                "Add the parser"
            ),
            row(
                "s-docs",
                0.95.into(),
                true,
                "window-elapsed",
                Value::Null,
                Value::Null,
                "Extend the guide"
            ),
            row(
                "s-ui",
                Value::Null,
                true,
                "window-elapsed",
                Value::Null,
                Value::Null,
                "Add a button"
            ),
            // Reverted 35 days later: after the window, so correct.
            row(
                "s-late",
                0.6.into(),
                true,
                "window-elapsed",
                Value::Null,
                Value::Null,
                "Add a Dockerfile"
            ),
            // The commit after both turns of s-multi belongs to the second.
            row(
                "s-multi",
                0.85.into(),
                true,
                "window-elapsed",
                Value::Null,
                Value::Null,
                "Add the exporter"
            ),
        ]
    );
    // The columns P1's breakdowns and risk-floor evaluation read.
    let columns: Vec<(&str, &str, f64, bool, &str)> = lines
        .iter()
        .map(|r| {
            (
                r["task_ref"].as_str().unwrap(),
                r["surface"].as_str().unwrap(),
                r["risk_score"].as_f64().unwrap(),
                r["needs_review"].as_bool().unwrap(),
                r["sidecar"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        columns,
        vec![
            (
                "APP-1",
                "auth",
                1.0,
                true,
                "s-auth-20260102T120000.000000Z.reflection.json"
            ),
            (
                "APP-2",
                "data",
                0.9,
                true,
                "s-migrate-20260103T120000.000000Z.reflection.json"
            ),
            (
                "APP-3",
                "none",
                0.0,
                false,
                "s-parser-20260104T120000.000000Z.reflection.json"
            ),
            (
                "APP-4",
                "docs",
                0.1,
                false,
                "s-docs-20260108T120000.000000Z.reflection.json"
            ),
            (
                "APP-5",
                "ui",
                0.4,
                false,
                "s-ui-20260109T120000.000000Z.reflection.json"
            ),
            (
                "APP-6",
                "infra",
                0.85,
                true,
                "s-late-20260110T120000.000000Z.reflection.json"
            ),
            (
                "APP-8",
                "none",
                0.0,
                false,
                "s-multi-20260112T110000.000000Z.reflection.json"
            ),
        ]
    );
    assert_eq!(lines[0]["agent"], "claude-code");
    assert_eq!(lines[0]["timestamp"], "2026-01-02T12:00:00Z");

    for expected in [
        "as of 2026-03-15T00:00:00Z\n",
        "window 30 days; slack 6 h before a session, 24 h after a sidecar\n",
        "sidecars read:    12 (10 sessions); 1 invalid, skipped (listed on stderr)\n",
        "rows written:     7 (4 correct, 3 wrong) -> ",
        "censored:         1 (window not elapsed)\n",
        "uncommitted:      1 (files changed, no commit found)\n",
        "superseded:       1 (their commits belong to another sidecar: one commit labels one row)\n",
        "no files changed: 1\n",
        "null confidence:  1 of the rows (kept for the risk floor, left out of confidence metrics)\n",
        "prereg experiments/corpus.toml (embedded) sha256 ",
    ] {
        assert!(stdout.contains(expected), "{expected:?} not in\n{stdout}");
    }
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        format!(
            "phase0: skipped {}: fails the reflection.v1 schema: /confidence: 1.5 is greater than the maximum of 1\n",
            f.reflections
                .join("s-broken-20260114T120000.000000Z.reflection.json")
                .display()
        )
    );

    // Same inputs, byte-identical output; also with the as-of date from SOURCE_DATE_EPOCH.
    let again = f.sandbox.path().join("again.jsonl");
    ok(&corpus(&f, &again, &["--as-of", "2026-03-15"]));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
    let epoch = f.sandbox.path().join("epoch.jsonl");
    let output = e2e::phase0()
        .args([os("corpus"), os("--reflections"), f.reflections.as_os_str()])
        .args([os("--repo"), f.repo.as_os_str(), os("--out"), epoch.as_os_str()])
        .env("SOURCE_DATE_EPOCH", "1773532800") // 2026-03-15T00:00:00Z
        .output()
        .unwrap();
    ok(&output);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&epoch).unwrap());
    assert_eq!(
        files_in(out.parent().unwrap()),
        ["corpus.jsonl"],
        "no temporary file left"
    );
}

#[test]
fn as_of_and_window_move_rows_between_labels_and_censoring() {
    let f = fixture();
    let out = f.sandbox.path().join("corpus.jsonl");
    // Default as-of: the newest commit (2026-03-01T12:30:00Z); s-recent is then 0 days old.
    let stdout = ok(&corpus(&f, &out, &[]));
    assert!(stdout.contains("as of 2026-03-01T12:30:00Z\n"), "{stdout}");
    assert!(stdout.contains("rows written:     7 (4 correct, 3 wrong)"), "{stdout}");
    // Ten days after the sessions: the failures are known, the clean rows are censored.
    let stdout = ok(&corpus(&f, &out, &["--as-of", "2026-01-20"]));
    assert!(stdout.contains("rows written:     3 (0 correct, 3 wrong)"), "{stdout}");
    assert!(stdout.contains("censored:         5 (window not elapsed)"), "{stdout}");
    // A 40-day window takes in s-late's revert (35 days after its commit); the clean rows are all older than that.
    let stdout = ok(&corpus(&f, &out, &["--as-of", "2026-03-15", "--window-days", "40"]));
    assert!(
        stdout.contains("window 40 days (--window-days, not the pre-registered value)"),
        "{stdout}"
    );
    assert!(stdout.contains("rows written:     7 (3 correct, 4 wrong)"), "{stdout}");
    let late: Value = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["session_id"] == "s-late")
        .unwrap();
    assert_eq!(
        (late["correct"].clone(), late["label_reason"].clone()),
        (false.into(), "revert".into())
    );
}

#[test]
fn bad_inputs_exit_2_and_all_invalid_sidecars_give_an_empty_corpus() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("plain", &[("a.txt", "a\n")]);
    let dir = sandbox.path().join("refl");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x-20260101T000000.000000Z.reflection.json"), "{\"schema\": 1}").unwrap();
    let out = sandbox.path().join("c.jsonl");
    let run = |reflections: &Path, repo: &Path| {
        phase0(&[
            os("corpus"),
            os("--reflections"),
            reflections.as_os_str(),
            os("--repo"),
            repo.as_os_str(),
            os("--out"),
            out.as_os_str(),
        ])
    };
    let output = run(&dir, &repo);
    let stdout = ok(&output);
    assert!(
        stdout.contains("every sidecar was invalid: the corpus is empty\n"),
        "{stdout}"
    );
    assert!(stdout.contains("rows written:     0 (0 correct, 0 wrong)"), "{stdout}");
    assert_eq!(std::fs::read(&out).unwrap(), b"");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "phase0: skipped {}: fails the reflection.v1 schema: ",
            dir.join("x-20260101T000000.000000Z.reflection.json").display()
        )),
        "{stderr}"
    );

    let missing = sandbox.path().join("missing");
    let output = run(&missing, &repo);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with(&format!(
            "phase0: {}: cannot read the sidecar directory: ",
            missing.display()
        )),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let not_repo = sandbox.path().join("refl");
    let output = run(&dir, &not_repo);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not a git repository"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn p1_json(args: &[&std::ffi::OsStr]) -> Value {
    let output = phase0(args);
    serde_json::from_str(&ok(&output)).expect("--json prints the report")
}

#[test]
fn p1_reads_the_corpus_and_joins_the_sidecars_itself_with_the_same_numbers() {
    let f = fixture();
    let corpus_file = f.sandbox.path().join("corpus.jsonl");
    ok(&corpus(&f, &corpus_file, &["--as-of", "2026-03-15"]));
    let out = f.sandbox.path().join("p1");
    let from_file = p1_json(&[
        os("p1"),
        corpus_file.as_os_str(),
        os("--as-of"),
        os("2026-03-15"),
        os("--json"),
        os("--out"),
        out.as_os_str(),
    ]);
    let joined_copy = f.sandbox.path().join("joined.jsonl");
    let direct = p1_json(&[
        os("p1"),
        os("--reflections"),
        f.reflections.as_os_str(),
        os("--repo"),
        f.repo.as_os_str(),
        os("--corpus-out"),
        joined_copy.as_os_str(),
        os("--as-of"),
        os("2026-03-15"),
        os("--json"),
        os("--out"),
        out.as_os_str(),
    ]);
    // The in-memory join is the same corpus, so the same numbers.
    assert_eq!(
        std::fs::read(&corpus_file).unwrap(),
        std::fs::read(&joined_copy).unwrap()
    );
    assert_eq!(from_file["report"]["metrics"], direct["report"]["metrics"]);
    assert_eq!(from_file["report"]["risk_floor"], direct["report"]["risk_floor"]);
    assert_eq!(from_file["report"]["corpus_join"], Value::Null);

    let report = &direct["report"];
    assert_eq!(report["corpus"]["rows"], 7);
    assert_eq!(report["corpus"]["null_confidence"], 1);
    // Six rows with a confidence: wrong at 0.9, 0.8, 0.3; correct at 0.95, 0.6, 0.85.
    assert_eq!(
        (report["metrics"]["n"].clone(), report["metrics"]["n_correct"].clone()),
        (6.into(), 3.into())
    );
    assert!((report["metrics"]["auc"]["value"].as_f64().unwrap() - 6.0 / 9.0).abs() < 1e-12);
    assert_eq!(report["metrics"]["verdict"]["kind"], "INCONCLUSIVE");
    // Risk floor over all seven rows: wrong at risk 1.0, 0.9, 0.0; correct at 0.1, 0.4, 0.85, 0.0.
    let floor = &report["risk_floor"];
    assert_eq!((floor["n"].clone(), floor["n_wrong"].clone()), (7.into(), 3.into()));
    assert!((floor["auc"]["value"].as_f64().unwrap() - 8.5 / 12.0).abs() < 1e-12);
    let split = &floor["needs_review"];
    assert_eq!(
        [
            &split["n_flagged"],
            &split["wrong_flagged"],
            &split["n_unflagged"],
            &split["wrong_unflagged"]
        ],
        [&Value::from(3), &Value::from(2), &Value::from(4), &Value::from(1)]
    );
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-12;
    assert!(close(&split["failure_rate_flagged"]["lo"], 0.2076596008020477));
    assert!(close(&split["failure_rate_flagged"]["hi"], 0.9385080552796037));
    assert!(close(&split["failure_rate_unflagged"]["lo"], 0.0455872608097006));
    assert!(close(&split["failure_rate_unflagged"]["hi"], 0.6993581574175982));
    let join = &report["corpus_join"];
    assert_eq!(join["reflections"], f.reflections.display().to_string());
    assert_eq!(join["repo"], f.repo.display().to_string());
    assert_eq!(join["counts"]["censored"], 1);
    assert_eq!(join["counts"]["superseded"], 1);
    assert_eq!(join["invalid_sidecars"], 1);

    let markdown = std::fs::read_to_string(out.join("p1.md")).unwrap();
    assert!(
        markdown.contains("| AUC of the risk score for failure | 0.7083 | [0.1309, 1.0000] |\n"),
        "{markdown}"
    );
    assert!(markdown.contains("| failure rate, `needs_review` | 0.6667 (2 of 3) | [0.2077, 0.9385] |\n"));
    assert!(markdown.contains("| failure rate, not flagged | 0.2500 (1 of 4) | [0.0456, 0.6994] |\n"));

    // The summary block says it too.
    let output = phase0(&[
        os("p1"),
        corpus_file.as_os_str(),
        os("--as-of"),
        os("2026-03-15"),
        os("--out"),
        out.as_os_str(),
    ]);
    let stdout = ok(&output);
    assert!(stdout.contains(
        "  risk floor      AUC 0.7083 [0.1309, 1.0000] for predicting failure, 7 rows (3 wrong); descriptive\n"
    ));
    assert!(stdout.contains(
        "  needs_review    failure rate 0.6667 [0.2077, 0.9385] of 3 flagged vs 0.2500 [0.0456, 0.6994] of 4 not\n"
    ));

    // Exactly one of a corpus file or --reflections/--repo.
    for args in [
        vec![os("p1")],
        vec![
            os("p1"),
            corpus_file.as_os_str(),
            os("--reflections"),
            f.reflections.as_os_str(),
            os("--repo"),
            f.repo.as_os_str(),
        ],
        vec![os("p1"), os("--reflections"), f.reflections.as_os_str()],
    ] {
        let output = phase0(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("Usage:"), "{args:?}");
    }
}

#[test]
fn weekly_runs_p1_on_the_sidecars_through_the_join() {
    let f = fixture();
    let config = f.sandbox.path().join("weekly.toml");
    // Paths relative to the directory weekly runs in; no [p3], so the week is partial (exit 3).
    std::fs::write(
        &config,
        "[p1]\nreflections = \"capture/reflections\"\nrepo = \"app\"\n\n[p2]\nrepo = \"app\"\n",
    )
    .unwrap();
    let output = e2e::phase0()
        .current_dir(f.sandbox.path())
        .args([
            "weekly",
            "--config",
            "weekly.toml",
            "--week",
            "2026-W11",
            "--as-of",
            "2026-03-15",
        ])
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .expect("phase0 runs");
    assert_eq!(
        output.status.code(),
        Some(3),
        "stderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let week: Value =
        serde_json::from_slice(&std::fs::read(f.sandbox.path().join("reports/2026-W11/week.json")).unwrap()).unwrap();
    let p1: Value =
        serde_json::from_slice(&std::fs::read(f.sandbox.path().join("reports/2026-W11/p1/p1.json")).unwrap()).unwrap();
    // The same join as `phase0 p1 --reflections` above: 7 rows, 6 with a confidence, the risk floor over all 7.
    assert_eq!(p1["report"]["corpus"]["rows"], 7);
    assert_eq!(p1["report"]["metrics"]["n"], 6);
    assert_eq!(p1["report"]["risk_floor"]["n"], 7);
    assert_eq!(
        p1["report"]["corpus_join"]["counts"]["rows"], 7,
        "{}",
        p1["report"]["corpus_join"]
    );
    let statuses: Vec<&Value> = week["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["status"])
        .collect();
    assert_eq!(statuses, ["ok", "ok", "missing"], "{week}");
}
