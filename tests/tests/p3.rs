//! `phase0 p3` end to end: the real binary on the sample exports in `data/p3/` (one invented project written in
//! every supported format, see `data/p3/README.md`).

use std::path::{Path, PathBuf};
use std::process::Output;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/p3").join(name)
}

fn p3(args: &[&str], out: &Path) -> Output {
    e2e::phase0()
        .arg("p3")
        .args(args)
        .arg("--out")
        .arg(out)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .expect("phase0 runs")
}

fn report(file: &str, out: &Path) -> serde_json::Value {
    let path = sample(file);
    let output = p3(
        &[
            path.to_str().unwrap(),
            "--json",
            "--as-of",
            "2026-11-21",
            "--tz",
            "Europe/Berlin",
        ],
        out,
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// (eligible, with a signal, wrong, right) and the signals per task.
/// Task ids with their signals.
type SignalRows = Vec<(String, Vec<String>)>;

fn numbers(report: &serde_json::Value, out: &Path) -> (u64, u64, u64, u64, SignalRows) {
    let counts = &report["report"]["analysis"]["counts"];
    let get = |key: &str| counts[key].as_u64().unwrap();
    // p3-tasks.csv: input,id,completed,censored,signals (";"-separated).
    let csv = std::fs::read_to_string(out.join("p3-tasks.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("input,id,completed,censored,signals"));
    let tasks = lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .filter(|fields| !fields[4].is_empty())
        .map(|fields| {
            (
                fields[1].to_string(),
                fields[4].split(';').map(str::to_string).collect(),
            )
        })
        .collect();
    (get("eligible"), get("with_signal"), get("wrong"), get("right"), tasks)
}

fn owned(rows: &[(&str, &[&str])]) -> SignalRows {
    rows.iter()
        .map(|(id, signals)| (id.to_string(), signals.iter().map(|s| s.to_string()).collect()))
        .collect()
}

#[test]
fn each_format_finds_the_signals_it_can_observe() {
    let out = tempfile::tempdir().unwrap();
    let follow_ups = owned(&[("SHOP-1", &["wrong.follow-up"]), ("SHOP-8", &["wrong.follow-up"])]);
    // Formats that show links but no reopen dates see the same two follow-ups: the same base rate.
    for file in ["jira.csv", "linear.csv", "beads-issues.jsonl"] {
        let (eligible, with_signal, wrong, right, tasks) = numbers(&report(file, out.path()), out.path());
        assert_eq!((eligible, with_signal, wrong, right), (7, 2, 2, 0), "{file}");
        let ids: Vec<String> = tasks.iter().map(|(id, _)| id.to_lowercase()).collect();
        assert_eq!(ids, ["shop-1", "shop-8"], "{file}");
        if file != "beads-issues.jsonl" {
            assert_eq!(tasks, follow_ups, "{file}");
        }
    }
    // With status history, SHOP-3's reopen (Done 11-06, reopened 11-12) shows too.
    let (eligible, with_signal, _, _, tasks) = numbers(&report("jira.json", out.path()), out.path());
    assert_eq!((eligible, with_signal), (7, 3));
    assert_eq!(
        tasks,
        owned(&[
            ("SHOP-1", &["wrong.follow-up"]),
            ("SHOP-3", &["wrong.follow-up", "wrong.reopened"]),
            ("SHOP-8", &["wrong.follow-up"]),
        ])
    );
    // GitHub's issue list joined with its timeline (given after it) sees the same: history, reopen and links.
    let (issues, timeline) = (sample("github-issues.json"), sample("github-timeline.jsonl"));
    let output = p3(
        &[
            issues.to_str().unwrap(),
            timeline.to_str().unwrap(),
            "--json",
            "--as-of",
            "2026-11-21",
        ],
        out.path(),
    );
    let github: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let (eligible, with_signal, wrong, _, _) = numbers(&github, out.path());
    assert_eq!((eligible, with_signal, wrong), (7, 3, 3));
    assert_eq!(github["inputs"].as_array().unwrap().len(), 2);
    // (SHOP-12, a bug filed as a duplicate of SHOP-3 six days after its first completion, is a linked bug in the
    // window; the CSV export only knows SHOP-3's second completion, after SHOP-12 was filed.)
    // The upstream JSONL states outcomes, the reopen (dated before SHOP-3's second completion) and follow-ups.
    let jsonl = report("tasks.jsonl", out.path());
    let (eligible, with_signal, wrong, right, tasks) = numbers(&jsonl, out.path());
    assert_eq!((eligible, with_signal, wrong, right), (7, 5, 3, 2));
    assert_eq!(
        tasks,
        owned(&[
            ("SHOP-1", &["wrong.follow-up"]),
            ("SHOP-2", &["right.explicit"]),
            ("SHOP-3", &["wrong.reopened"]),
            ("SHOP-4", &["right.explicit"]),
            ("SHOP-8", &["wrong.explicit", "wrong.follow-up"]),
        ])
    );
    let analysis = &jsonl["report"]["analysis"];
    assert_eq!(
        analysis["unobservable"],
        serde_json::json!(["right.verified-status", "wrong.commit"])
    );
    assert_eq!(analysis["major_unobservable"], serde_json::json!([]));
    assert_eq!(analysis["verdict"]["kind"], "INCONCLUSIVE");
    assert_eq!(analysis["verdict"]["n_still_needed"], 43);
    assert_eq!(jsonl["report"]["analysis"]["inputs"][0]["format"], "jsonl");
}

#[test]
fn the_window_censors_tasks_completed_too_recently() {
    let out = tempfile::tempdir().unwrap();
    let path = sample("jira.json");
    // On 2025-12-12 only the tasks completed by 2025-11-12 have a full 30-day window.
    let output = p3(&[path.to_str().unwrap(), "--json", "--as-of", "2025-12-12"], out.path());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let counts = &report["report"]["analysis"]["counts"];
    assert_eq!(
        (counts["eligible"].as_u64(), counts["censored"].as_u64()),
        (Some(5), Some(2))
    );
    // A 10-day window: every completed task is eligible, the override is reported.
    let output = p3(
        &[
            path.to_str().unwrap(),
            "--json",
            "--as-of",
            "2025-12-12",
            "--window-days",
            "10",
        ],
        out.path(),
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["report"]["analysis"]["counts"]["eligible"], 7);
    assert_eq!(report["report"]["window_overridden"], 30);
}

#[test]
fn same_inputs_give_byte_identical_reports_and_bad_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let inputs = [sample("jira.csv"), sample("trello.json")];
    let mut args: Vec<&str> = inputs.iter().map(|p| p.to_str().unwrap()).collect();
    args.extend(["--as-of", "2026-11-21"]);
    for out in [&a, &b] {
        let output = p3(&args, out);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(stdout.starts_with(
            "P3 detectability — kill condition (pre-registered): detectable-outcome base rate < 20% ⇒ do NOT build §7 calibration loop (capture caveat-notes only)\n"
        ));
        assert!(
            stdout.contains("  base rate       3 of 14 = 21.4% [7.6%, 47.6%] (3 wrong, 0 right)\n"),
            "{stdout}"
        );
    }
    for name in [
        "p3.json",
        "p3.md",
        "p3-tasks.csv",
        "p3-tasks.parquet",
        "p3-detection.svg",
        "manifest.json",
    ] {
        assert_eq!(
            std::fs::read(a.join(name)).unwrap(),
            std::fs::read(b.join(name)).unwrap(),
            "{name}"
        );
    }

    let bad = dir.path().join("broken.json");
    std::fs::write(&bad, "{\"issues\": [").unwrap();
    let output = p3(&[bad.to_str().unwrap(), "--format", "jira-json"], &dir.path().join("c"));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with(&format!("phase0: {}", bad.display())), "{stderr}");
    assert!(!dir.path().join("c").exists());

    let output = p3(
        &[inputs[0].to_str().unwrap(), "--format", "asana"],
        &dir.path().join("c"),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("phase0: --format asana: "));
    let output = p3(
        &[inputs[0].to_str().unwrap(), "--tz", "Mars/Olympus"],
        &dir.path().join("c"),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("phase0: --tz Mars/Olympus: not a known time zone"));
}

/// With `--repo`, a revert or fix commit naming a task within its window is a `wrong.commit` signal; other
/// commits naming it, and fixes after the window, are not.
#[test]
fn remedy_commits_naming_a_task_are_signals() {
    let sandbox = e2e::Sandbox::new();
    let repo = sandbox.repo("code", &[("src/cart.rs", "fn total() {}\n")]);
    let commit = |date: &str, file: &str, message: &str| {
        e2e::write(&repo.join(file), message);
        sandbox.git(&repo, &["add", "--all"]);
        let output = sandbox
            .git_command(&repo)
            .args(["commit", "--quiet", "-m", message])
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .output()
            .unwrap();
        assert!(output.status.success());
    };
    // SHOP-3 completes on 2025-11-14 in the CSV, SHOP-10 on 2025-11-11, SHOP-2 on 2025-11-07.
    commit(
        "2025-11-20T10:00:00Z",
        "src/cart.rs",
        "fix: discount rounding in the cart total (SHOP-3)",
    );
    commit("2025-11-21T10:00:00Z", "src/sdk.rs", "Upgrade payment SDK, SHOP-10");
    commit(
        "2026-01-20T10:00:00Z",
        "src/estimate.rs",
        "fix: delivery estimate off by one (shop-2)",
    );
    let out = tempfile::tempdir().unwrap();
    let csv = sample("jira.csv");
    let output = p3(
        &[
            csv.to_str().unwrap(),
            "--repo",
            repo.to_str().unwrap(),
            "--json",
            "--as-of",
            "2026-11-21",
            "--tz",
            "Europe/Berlin",
        ],
        out.path(),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let (eligible, with_signal, wrong, _, tasks) = numbers(&report, out.path());
    assert_eq!((eligible, with_signal, wrong), (7, 3, 3));
    assert_eq!(
        tasks,
        owned(&[
            ("SHOP-1", &["wrong.follow-up"]),
            ("SHOP-3", &["wrong.commit"]),
            ("SHOP-8", &["wrong.follow-up"]),
        ])
    );
    let repository = &report["report"]["repository"];
    assert_eq!(
        (
            repository["commits_walked"].as_u64(),
            repository["remedy_commits"].as_u64()
        ),
        (Some(4), Some(2))
    );
    assert_eq!(repository["tasks_named"], 2);
    assert!(
        !report["report"]["analysis"]["unobservable"]
            .as_array()
            .unwrap()
            .contains(&"wrong.commit".into())
    );
}

/// Task files kept in git: `--repo` alone reads `.beads/issues.jsonl` through its history, so bd-1's reopen
/// (done on 11-05, reopened 11-10, done again 11-14) has a date; `--data-dir data/` reads the JSONL files there.
#[test]
fn task_files_kept_in_git_show_reopens_with_dates() {
    let sandbox = e2e::Sandbox::new();
    let repo = sandbox.path().join("tasks");
    std::fs::create_dir_all(&repo).unwrap();
    sandbox.script("../pipeline/tests/fixtures/task_history/history.sh", &[&repo]);
    for (extra, path, ids) in [
        // Version 3 reads the task files of `.beads/` as one set: the report names the directory and the files.
        (None, ".beads", ["bd-1", "bd-4"]),
        (Some("data/"), "data", ["T-1", "T-4"]),
    ] {
        let out = tempfile::tempdir().unwrap();
        let mut args = vec!["--repo", repo.to_str().unwrap(), "--json", "--as-of", "2026-11-21"];
        if let Some(dir) = extra {
            args.extend(["--data-dir", dir]);
        }
        let output = p3(&args, out.path());
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let task_files = &report["report"]["task_files"];
        assert_eq!(task_files["path"], path);
        if extra.is_none() {
            assert_eq!(task_files["files"], serde_json::json!([".beads/issues.jsonl"]));
        }
        assert_eq!(
            (
                task_files["versions_skipped"].as_u64(),
                task_files["commits_walked"].as_u64()
            ),
            (Some(1), Some(12))
        );
        let (eligible, with_signal, wrong, _, tasks) = numbers(&report, out.path());
        assert_eq!((eligible, with_signal, wrong), (2, 1, 1), "{path}");
        assert_eq!(tasks, owned(&[(ids[0], &["wrong.reopened"])]), "{path}");
        let csv = std::fs::read_to_string(out.path().join("p3-tasks.csv")).unwrap();
        assert!(
            csv.contains(&format!(
                "{path},{},2025-11-05T09:00:00Z,false,wrong.reopened\n",
                ids[0]
            )),
            "{csv}"
        );
        assert!(csv.contains(&format!("{path},{},", ids[1])), "{csv}");
    }
    // --data-dir without --repo is a usage error.
    let output = p3(&["--data-dir", "data/"], &sandbox.path().join("never"));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--data-dir needs --repo"));
    // So is --history-rev without task files read from a repository.
    let output = p3(&["--history-rev", "main"], &sandbox.path().join("never"));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("--history-rev needs --repo and task files read from it (no board exports, or --data-dir)")
    );
}

/// `phase0 p3 FILE audit`: the action after the inputs is the action; `--out` before it names the reports directory,
/// which a sheet does not use, so it is refused (exit 2) instead of ignored, and nothing is written.
#[test]
fn the_audit_action_follows_the_inputs_and_refuses_a_misplaced_out() {
    let dir = tempfile::tempdir().unwrap();
    let jira = sample("jira.json");
    let sheet = dir.path().join("sheet.csv");
    let output = e2e::phase0()
        .current_dir(dir.path())
        .args(["p3", jira.to_str().unwrap(), "--as-of", "2026-01-01", "audit", "--out"])
        .arg(&sheet)
        .output()
        .unwrap();
    e2e::stdout_of_success(&output);
    let text = std::fs::read_to_string(&sheet).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.contains(",SHOP-3,Cart total ignores discount codes,counted,3,"),
        "{text}"
    );
    let misplaced = e2e::phase0()
        .current_dir(dir.path())
        .args(["p3", jira.to_str().unwrap(), "--out", "elsewhere.csv", "audit"])
        .output()
        .unwrap();
    assert_eq!(misplaced.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&misplaced.stderr),
        "phase0: --out elsewhere.csv before `audit` names the reports directory; give the sheet's path after it: \
         `audit --out FILE`\n"
    );
    assert!(!dir.path().join("elsewhere.csv").exists() && !dir.path().join("reports").exists());
}
