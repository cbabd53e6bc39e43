//! `phase0 demo` end to end: the three experiments on this repository's samples, the committed example reports
//! (`reports/example/`) regenerated and compared byte for byte, and a repository without samples (partial).

use std::path::{Path, PathBuf};
use std::process::Output;

use e2e::{Sandbox, files_in};

/// `reports/example/` is the demo's P1 and P3 reports with this SOURCE_DATE_EPOCH (2026-01-01T00:00:00Z); `just
/// example` writes it.
const EXAMPLE_EPOCH: &str = "1767225600";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `phase0 demo --repo . --out OUT` at the workspace root, as the README runs it.
fn demo_here(out: &Path, epoch: Option<&str>) -> Output {
    let mut command = e2e::phase0();
    command
        .current_dir(workspace())
        .args(["demo", "--repo", ".", "--out"])
        .arg(out)
        .env_remove("SOURCE_DATE_EPOCH");
    if let Some(epoch) = epoch {
        command.env("SOURCE_DATE_EPOCH", epoch);
    }
    command.output().expect("phase0 runs")
}

/// Exit 0 in a git checkout; without one (a source archive) P2 cannot run and the demo is partial (3).
fn expected_exit() -> i32 {
    if workspace().join(".git").exists() { 0 } else { 3 }
}

#[test]
fn the_demo_runs_the_three_experiments_on_the_samples() {
    let out = tempfile::tempdir().unwrap();
    let output = demo_here(out.path(), None);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        output.status.code(),
        Some(expected_exit()),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.starts_with(
            "phase0 demo: the three Phase-0 experiments on the embedded defaults\n  P1 on data/p1-corpus.jsonl, P2 on \
             the history of ., P3 on data/p3/jira.json (Jira with changelogs: reopens and follow-ups) as of \
             2026-01-01\n\nP1 calibration — kill condition (pre-registered): "
        ),
        "{stdout}"
    );
    for line in [
        "  rows            400 (321 correct, base rate 0.8025 [0.7607, 0.8386])",
        "  AUC             0.6366 [0.5723, 0.7009]",
        "  base rate       3 of 7 = 42.9% [15.8%, 75.0%] (3 wrong, 0 right)",
        &format!("  reports         {}", out.path().join("p1").display()),
        &format!("  reports         {}", out.path().join("p3").display()),
    ] {
        assert!(stdout.lines().any(|l| l == line), "missing {line:?} in\n{stdout}");
    }
    assert!(stdout.contains("\nP2 gate buckets — "), "{stdout}");
    assert_eq!(
        files_in(&out.path().join("p1")),
        ["manifest.json", "p1-reliability.svg", "p1-roc.svg", "p1.json", "p1.md"]
    );
    assert_eq!(
        files_in(&out.path().join("p3")),
        [
            "manifest.json",
            "p3-detection.svg",
            "p3-signals.csv",
            "p3-tasks.csv",
            "p3-tasks.parquet",
            "p3.json",
            "p3.md"
        ]
    );
    if expected_exit() == 0 {
        assert_eq!(
            files_in(&out.path().join("p2")),
            [
                "manifest.json",
                "p2-buckets.svg",
                "p2-failures.csv",
                "p2-failures.parquet",
                "p2.json",
                "p2.md"
            ]
        );
    }
}

#[test]
fn the_committed_example_is_what_the_demo_writes() {
    let out = tempfile::tempdir().unwrap();
    let output = demo_here(out.path(), Some(EXAMPLE_EPOCH));
    assert_eq!(
        output.status.code(),
        Some(expected_exit()),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let example = workspace().join("reports/example");
    for experiment in ["p1", "p3"] {
        let (committed, fresh) = (example.join(experiment), out.path().join(experiment));
        assert_eq!(
            files_in(&committed),
            files_in(&fresh),
            "reports/example/{experiment} lists other files than the demo writes; regenerate it with `just example`"
        );
        for name in files_in(&fresh) {
            assert!(
                std::fs::read(committed.join(&name)).unwrap() == std::fs::read(fresh.join(&name)).unwrap(),
                "reports/example/{experiment}/{name} differs from what the demo writes now; regenerate it with \
                 `just example` and commit it"
            );
        }
    }
    let p1: serde_json::Value = serde_json::from_slice(&std::fs::read(example.join("p1/p1.json")).unwrap()).unwrap();
    assert_eq!(p1["generated_at"], "2026-01-01T00:00:00Z");
    assert_eq!(p1["inputs"][0]["path"], "data/p1-corpus.jsonl", "repository-relative");
}

#[test]
fn a_repository_without_samples_runs_p2_and_says_what_is_missing() {
    let sandbox = Sandbox::new();
    let repo = sandbox.path().join("history");
    sandbox.script("fixtures/p2-history.sh", &[&repo]);
    let out = sandbox.path().join("demo");
    let output = e2e::phase0()
        .args(["demo", "--repo", repo.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains(&format!(
        "P1 calibration — not run, input missing: {}: no such file\n",
        repo.join("data/p1-corpus.jsonl").display()
    )));
    assert!(stdout.contains("  failures        16: ci 3, human review 2, self-reflection 3, ambiguous 8\n"));
    assert!(stdout.ends_with("\npartial: p1, p3 did not run; the other reports were written (exit 3)\n"));
    assert_eq!(files_in(&out), ["p2"]);
}
