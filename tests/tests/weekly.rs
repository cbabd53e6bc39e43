//! `phase0 weekly` end to end: two consecutive weeks over fixture inputs that change between them, the index's
//! trend checked value by value, a re-run week byte-identical, a week with a missing input (exit 3), bad configs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use e2e::{Sandbox, files_in, write};
use serde_json::{Value, json};

const CONFIG: &str = r#"# The fixture's inputs, relative to the sandbox (the working directory).
[p1]
corpus = "inputs/corpus.jsonl"

[p2]
repo = "repo"

[p3]
inputs = ["inputs/board.json"]
"#;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data").join(name)
}

/// `phase0 weekly ARGS` in `dir`, without the caller's SOURCE_DATE_EPOCH unless `env` sets it.
fn weekly(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = e2e::phase0();
    command
        .current_dir(dir)
        .arg("weekly")
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("phase0 runs")
}

fn exit_code(output: &Output, expected: i32) -> String {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(
        output.status.code(),
        Some(expected),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// A corpus in which confidence says nothing about correctness: AUC exactly 0.5 on 600 rows, a KILL.
fn no_signal_corpus() -> String {
    (0..600)
        .map(|i| {
            let confidence = [0.3, 0.5, 0.7, 0.9][i % 4];
            format!("{{\"confidence\": {confidence}, \"correct\": {}}}\n", (i / 4) % 5 != 0)
        })
        .collect()
}

/// Commits everything in `repo` at `date` (the fixture's history ends on 2026-05-11).
fn commit(sandbox: &Sandbox, repo: &Path, date: &str, message: &str) {
    sandbox.git(repo, &["add", "-A"]);
    let output = sandbox
        .git_command(repo)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .args(["commit", "--quiet", "-m", message])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// Every file under `dir` (relative path → bytes).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                let name = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                files.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(dir, dir, &mut files);
    files
}

fn f64_at(value: &Value, pointer: &str) -> f64 {
    value
        .pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} in {value}"))
}

#[test]
fn two_weeks_give_a_trend_reruns_are_identical_and_a_missing_input_is_partial() {
    let sandbox = Sandbox::new();
    let root = sandbox.path();
    write(&root.join("weekly.toml"), CONFIG);
    let inputs = root.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    let repo = root.join("repo");
    sandbox.script("fixtures/p2-history.sh", &[&repo]);

    // Week 46: the sample corpus, the P2 fixture history, GitHub's issue list without its timeline.
    std::fs::copy(data("p1-corpus.jsonl"), inputs.join("corpus.jsonl")).unwrap();
    std::fs::copy(data("p3/github-issues.json"), inputs.join("board.json")).unwrap();
    let w46 = weekly(root, &["--config", "weekly.toml", "--as-of", "2026-11-12"], &[]);
    let stdout = exit_code(&w46, 0);
    assert!(
        stdout.starts_with("phase0 weekly 2026-W46: config weekly.toml\n"),
        "{stdout}"
    );
    assert!(stdout.contains("  index           reports/index.md (1 week; only one week, nothing to compare yet)\n"));

    // Week 47: a corpus without signal (KILL), one more failure in the history, the Jira export with changelogs.
    write(&inputs.join("corpus.jsonl"), &no_signal_corpus());
    std::fs::copy(data("p3/jira.json"), inputs.join("board.json")).unwrap();
    write(&repo.join("src/quota.c"), "quota line 1\nquota line 2\n");
    commit(&sandbox, &repo, "2026-04-01T12:00:00Z", "Add quota checks");
    // The fix rewrites a line the change added and touches a file it did not: self-reflection.other-files.
    write(
        &repo.join("src/quota.c"),
        "quota line 1\nquota line 2 (checked for zero)\n",
    );
    write(&repo.join("src/quota_caller.c"), "caller\n");
    commit(
        &sandbox,
        &repo,
        "2026-04-02T12:00:00Z",
        "fix: quota checks crash on zero",
    );
    let epoch = [("SOURCE_DATE_EPOCH", "1795219200")]; // 2026-11-21, a Saturday of week 47
    let w47 = weekly(root, &["--config", "weekly.toml"], &epoch);
    let stdout = exit_code(&w47, 0);
    assert!(
        stdout.starts_with("phase0 weekly 2026-W47: config weekly.toml\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  index           reports/index.md (2 weeks; since 2026-W46: P1 INCONCLUSIVE → KILL)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("  verdict         KILL: AUC 0.500 <= 0.6"), "{stdout}");

    let reports = root.join("reports");
    let (r46, r47) = (reports.join("2026-W46"), reports.join("2026-W47"));
    for week in [&r46, &r47] {
        for file in [
            "week.json",
            "week.md",
            "p1/p1.json",
            "p1/p1.md",
            "p1/p1-roc.svg",
            "p2/p2.json",
            "p3/p3.json",
        ] {
            assert!(week.join(file).is_file(), "{}/{file}", week.display());
        }
    }
    let names: Vec<String> = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        names,
        [
            ".phase0.lock",
            "2026-W46",
            "2026-W47",
            "index-trend.svg",
            "index.json",
            "index.md",
            "manifest.json"
        ],
        "no staging left (the lock file stays: removing it would race with a waiting run)"
    );

    // The trend, value by value: each number equals the one in that week's report, and is what the inputs give.
    let (p1_46, p1_47) = (json(&r46.join("p1/p1.json")), json(&r47.join("p1/p1.json")));
    let (p2_46, p2_47) = (json(&r46.join("p2/p2.json")), json(&r47.join("p2/p2.json")));
    let (p3_46, p3_47) = (json(&r46.join("p3/p3.json")), json(&r47.join("p3/p3.json")));
    let index = json(&reports.join("index.json"));
    assert_eq!(index["schema"], "phase0.weekly-index.v1");
    let weeks: Vec<&str> = index["weeks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["week"].as_str().unwrap())
        .collect();
    assert_eq!(weeks, ["2026-W46", "2026-W47"]);
    assert_eq!(index["weeks"][0]["as_of"], "2026-11-12T00:00:00Z");
    assert_eq!(index["weeks"][1]["as_of"], "2026-11-21T00:00:00Z");
    assert_eq!(index["weeks"][1], json(&r47.join("week.json")));
    let trend = &index["trend"];
    assert_eq!(
        (trend["previous"].as_str(), trend["latest"].as_str()),
        (Some("2026-W46"), Some("2026-W47"))
    );

    let p1 = &trend["experiments"][0];
    assert_eq!(p1["experiment"], "p1");
    assert_eq!(
        (&p1["verdict_then"], &p1["verdict_now"], &p1["verdict_changed"]),
        (&json!("INCONCLUSIVE"), &json!("KILL"), &json!(true))
    );
    let metric = |experiment: &Value, key: &str| -> Value {
        experiment["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["key"] == key)
            .unwrap_or_else(|| panic!("{key} in {experiment}"))
            .clone()
    };
    let n = metric(p1, "n");
    assert_eq!(
        (&n["then"], &n["now"], &n["delta"]),
        (&json!(400), &json!(600), &json!(200))
    );
    let auc = metric(p1, "auc");
    let (auc_then, auc_now) = (
        f64_at(&p1_46, "/report/metrics/auc/value"),
        f64_at(&p1_47, "/report/metrics/auc/value"),
    );
    assert_eq!(
        (auc["then"].as_f64(), auc["now"].as_f64()),
        (Some(auc_then), Some(auc_now))
    );
    assert!(
        (auc_then - 0.636_578_729_445_167_4).abs() < 1e-12 && auc_now == 0.5,
        "{auc}"
    );
    assert_eq!(auc["delta"].as_f64(), Some(auc_now - auc_then));
    let lift = metric(p1, "lift_pp");
    let (lift_then, lift_now) = (
        f64_at(&p1_46, "/report/metrics/lift_pp/estimate"),
        f64_at(&p1_47, "/report/metrics/lift_pp/estimate"),
    );
    assert_eq!(
        (lift["then"].as_f64(), lift["now"].as_f64()),
        (Some(lift_then), Some(lift_now))
    );
    assert!(
        (lift_then - 3.999_084_249_084_25).abs() < 1e-9 && lift_now.abs() < 1e-12,
        "{lift}"
    );

    let p2 = &trend["experiments"][1];
    assert_eq!(
        (&p2["verdict_then"], &p2["verdict_changed"]),
        (&json!("INCONCLUSIVE"), &json!(false))
    );
    let classified = metric(p2, "classified");
    assert_eq!(
        (&classified["then"], &classified["now"], &classified["delta"]),
        (&json!(8), &json!(9), &json!(1))
    );
    assert_eq!(p2_46["report"]["analysis"]["counts"]["classified"], 8);
    assert_eq!(p2_47["report"]["analysis"]["counts"]["self_reflection"], 4);
    let share = metric(p2, "self_reflection_share");
    assert_eq!(
        (share["then"].as_f64(), share["now"].as_f64()),
        (Some(3.0 / 8.0), Some(4.0 / 9.0))
    );
    assert_eq!(
        share["now"].as_f64(),
        Some(f64_at(&p2_47, "/report/analysis/shares/self_reflection/estimate"))
    );
    assert_eq!(share["delta"].as_f64(), Some(4.0 / 9.0 - 3.0 / 8.0));

    let p3 = &trend["experiments"][2];
    assert_eq!(
        (&p3["verdict_now"], &p3["verdict_changed"]),
        (&json!("INCONCLUSIVE"), &json!(false))
    );
    let eligible = metric(p3, "eligible");
    assert_eq!(
        (&eligible["then"], &eligible["now"], &eligible["delta"]),
        (&json!(7), &json!(7), &json!(0))
    );
    let base_rate = metric(p3, "base_rate");
    assert_eq!(
        (base_rate["then"].as_f64(), base_rate["now"].as_f64()),
        (Some(2.0 / 7.0), Some(3.0 / 7.0))
    );
    assert_eq!(
        base_rate["now"].as_f64(),
        Some(f64_at(&p3_47, "/report/analysis/base_rate/estimate"))
    );
    assert_eq!(p3_46["report"]["analysis"]["counts"]["with_signal"], 2);

    // The markdown index says the same, rounded, with the verdict change highlighted.
    let index_md = std::fs::read_to_string(reports.join("index.md")).unwrap();
    for line in [
        "## What changed: 2026-W46 → 2026-W47",
        "| P1 calibration | verdict | INCONCLUSIVE | KILL | **INCONCLUSIVE → KILL** |",
        "| P1 calibration | rows | 400 | 600 | +200 |",
        "| P1 calibration | AUC | 0.6366 | 0.5000 | -0.1366 |",
        "| P1 calibration | high-subset lift | +4.00pp | +0.00pp | -4.00pp |",
        "| P2 gate buckets | verdict | INCONCLUSIVE | INCONCLUSIVE | unchanged |",
        "| P2 gate buckets | classified failures | 8 | 9 | +1 |",
        "| P2 gate buckets | only-self-reflection share | 37.5% | 44.4% | +6.9pp |",
        "| P3 detectability | detectable share | 28.6% | 42.9% | +14.3pp |",
        "| [2026-W47](2026-W47/week.md) | [KILL](2026-W47/p1/p1.md) | [INCONCLUSIVE](2026-W47/p2/p2.md) | \
         [INCONCLUSIVE](2026-W47/p3/p3.md) | ok |",
        "| 2026-W46 | [INCONCLUSIVE](2026-W46/p1/p1.md) | 400 | 0.6366 | +4.00pp |",
    ] {
        assert!(
            index_md.lines().any(|l| l == line),
            "missing line {line:?} in\n{index_md}"
        );
    }

    // The trend plot beside the index: each week's share with the interval and threshold its report gives.
    let week47 = json(&r47.join("week.json"));
    let p3_metric = &week47["experiments"][2]["headline"][1];
    assert_eq!(p3_metric["key"], "base_rate");
    assert_eq!(
        p3_metric["interval"][0].as_f64(),
        Some(f64_at(&p3_47, "/report/analysis/base_rate/lo"))
    );
    assert_eq!(
        p3_metric["threshold"].as_f64(),
        Some(f64_at(&p3_47, "/report/analysis/threshold"))
    );
    assert!(index_md.contains("![The verdict numbers by week, with their intervals](index-trend.svg)"));
    let svg = std::fs::read_to_string(reports.join("index-trend.svg")).unwrap();
    assert!(svg.contains(">P3 detectability — detectable share</text>"), "{svg}");
    assert_eq!(
        svg.matches("<circle ").count(),
        2 * 4 + 3,
        "two weeks of four numbers, and the legend's three"
    );

    // Running week 47 again changes no byte anywhere under reports/.
    let before = tree(&reports);
    exit_code(&weekly(root, &["--config", "weekly.toml"], &epoch), 0);
    let after = tree(&reports);
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>());
    for (name, bytes) in &before {
        assert!(after[name] == *bytes, "{name} changed on a re-run");
    }

    // Week 48 without the board export: P1 and P2 still run, P3 says why not, exit 3 (partial).
    std::fs::remove_file(inputs.join("board.json")).unwrap();
    let w48 = weekly(
        root,
        &["--config", "weekly.toml", "--week", "2026-W48", "--as-of", "2026-11-23"],
        &[],
    );
    let stdout = exit_code(&w48, 3);
    assert!(
        stdout.contains("P3 detectability — not run, input missing: inputs/board.json: no such file\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("  run             partial: P3 input missing\n"),
        "{stdout}"
    );
    let r48 = reports.join("2026-W48");
    assert!(r48.join("p1/p1.json").is_file() && r48.join("p2/p2.json").is_file());
    assert!(!r48.join("p3").exists());
    let week = json(&r48.join("week.json"));
    assert_eq!(week["status"], "partial");
    assert_eq!(
        week["experiments"][2],
        json!({
            "experiment": "p3", "title": "P3 detectability", "status": "missing",
            "reason": "inputs/board.json: no such file", "verdict": null, "report_status": null, "report": null,
            "headline": []
        })
    );
    let week_md = std::fs::read_to_string(r48.join("week.md")).unwrap();
    assert!(week_md.contains("## P3 detectability — missing\n\nNot run (missing): inputs/board.json: no such file\n"));
    let index = json(&reports.join("index.json"));
    assert_eq!(index["trend"]["previous"], "2026-W47");
    assert_eq!(index["trend"]["experiments"][2]["verdict_now"], "missing");
    assert_eq!(index["trend"]["experiments"][2]["verdict_changed"], true);
    let index_md = std::fs::read_to_string(reports.join("index.md")).unwrap();
    assert!(index_md.contains("| P3 detectability | verdict | INCONCLUSIVE | missing | **INCONCLUSIVE → missing** |"));
    assert!(
        index_md.contains("| 2026-W48 | missing: inputs/board.json: no such file | — | — |"),
        "{index_md}"
    );
    // Weeks 46 and 47 are untouched.
    for (name, bytes) in &before {
        if name.starts_with("2026-W4") {
            assert!(std::fs::read(reports.join(name)).unwrap() == *bytes, "{name} changed");
        }
    }
}

#[test]
fn bad_configs_and_weeks_exit_2_and_write_nothing() {
    let sandbox = Sandbox::new();
    let root = sandbox.path();
    write(
        &root.join("bad.toml"),
        "[p1]\ncorpus = \"c.jsonl\"\n\n[p2]\nrepo = \".\"\nbranch = \"main\"\n",
    );
    let output = weekly(root, &["--config", "bad.toml", "--week", "2026-W47"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "phase0: bad.toml:6: unknown field `branch`, expected one of `repo`, `rev`, `since`, `until`, \
         `first_parent`\n"
    );
    let output = weekly(root, &["--config", "nope.toml", "--week", "2026-W47"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("phase0: nope.toml: cannot read the weekly config: "));
    let output = weekly(root, &["--week", "2026-W54"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "phase0: --week \"2026-W54\": 2026 has no week 54\n"
    );
    // A broken template and an unreadable earlier week are named before anything runs.
    write(&root.join("templates/weekly-index.md.j2"), "{% for week in %}\n");
    let output = weekly(root, &["--week", "2026-W47", "--templates", "templates"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("phase0: template weekly-index.md.j2: "), "{stderr}");
    assert!(!root.join("reports").exists(), "nothing written for a bad invocation");
    write(&root.join("reports/2026-W40/week.json"), "{\"week\": 40}\n");
    let output = weekly(root, &["--week", "2026-W47"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("phase0: reports/2026-W40/week.json:1: not a phase0 week summary: "),
        "{stderr}"
    );
    assert_eq!(files_in(&root.join("reports")), ["2026-W40"]);
}

/// A sandbox with the three inputs of [`CONFIG`] (the sample corpus, the P2 fixture history, GitHub issues).
fn weekly_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let root = sandbox.path();
    write(&root.join("weekly.toml"), CONFIG);
    let inputs = root.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    sandbox.script("fixtures/p2-history.sh", &[&root.join("repo")]);
    std::fs::copy(data("p1-corpus.jsonl"), inputs.join("corpus.jsonl")).unwrap();
    std::fs::copy(data("p3/github-issues.json"), inputs.join("board.json")).unwrap();
    sandbox
}

/// The weeks `index.json` lists, and whether `index.md` names each of them.
fn indexed_weeks(reports: &Path) -> Vec<(String, bool)> {
    let index_md = std::fs::read_to_string(reports.join("index.md")).unwrap();
    json(&reports.join("index.json"))["weeks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let week = w["week"].as_str().unwrap().to_string();
            let in_md = index_md.contains(&week);
            (week, in_md)
        })
        .collect()
}

fn leftovers(reports: &Path) -> Vec<String> {
    std::fs::read_dir(reports)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".old-") || name.starts_with(".tmp-"))
        .collect()
}

#[test]
fn a_run_killed_at_any_rename_loses_no_week() {
    let sandbox = weekly_sandbox();
    let root = sandbox.path();
    let reports = root.join("reports");
    let w46 = ["--config", "weekly.toml", "--as-of", "2026-11-12"];
    exit_code(&weekly(root, &w46, &[]), 0);
    let complete = tree(&reports.join("2026-W46"));
    // Killed (SIGABRT, as a kill would) after the old week is renamed aside, after the new one is in place, and
    // after the first report file of the run is renamed into place.
    for point in ["weekly-old-week-aside", "weekly-new-week-placed", "reports-renamed-one"] {
        let killed = weekly(root, &w46, &[("PHASE0_FAILPOINT", point)]);
        assert_eq!(killed.status.code(), None, "{point}: the run was killed");
        // The next run, of another week, finds week 46 whole (the old copy or the new one, byte-identical here).
        let w47 = weekly(root, &["--config", "weekly.toml", "--as-of", "2026-11-19"], &[]);
        exit_code(&w47, 0);
        assert_eq!(tree(&reports.join("2026-W46")), complete, "{point}: week 46 whole");
        assert_eq!(
            indexed_weeks(&reports),
            [("2026-W46".to_string(), true), ("2026-W47".to_string(), true)],
            "{point}: both weeks indexed, in index.json and index.md"
        );
        assert!(leftovers(&reports).is_empty(), "{point}: {:?}", leftovers(&reports));
    }
}

#[test]
fn concurrent_runs_into_one_directory_lose_no_index_entry() {
    let sandbox = weekly_sandbox();
    let root = sandbox.path().to_path_buf();
    let runs: Vec<_> = ["2026-11-05", "2026-11-12", "2026-11-19"]
        .into_iter()
        .map(|as_of| {
            let root = root.clone();
            std::thread::spawn(move || weekly(&root, &["--config", "weekly.toml", "--as-of", as_of], &[]))
        })
        .collect();
    for run in runs {
        exit_code(&run.join().unwrap(), 0);
    }
    let reports = root.join("reports");
    assert_eq!(
        indexed_weeks(&reports),
        [
            ("2026-W45".to_string(), true),
            ("2026-W46".to_string(), true),
            ("2026-W47".to_string(), true)
        ]
    );
    assert!(leftovers(&reports).is_empty());
}
