//! A newcomer's first hour (issue 20): what `phase0` prints on tiny inputs and on the first mistakes people make.

use std::path::{Path, PathBuf};
use std::process::Output;

use e2e::{Sandbox, write};

fn phase0(args: &[&str], cwd: &Path) -> Output {
    e2e::phase0()
        .args(args)
        .current_dir(cwd)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .expect("phase0 runs")
}

fn stdout(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output, code: i32) -> String {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn p1_on_one_row_prints_no_broken_numbers_and_says_where_the_reports_went() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("one.jsonl");
    write(&corpus, "{\"confidence\": 0.9, \"correct\": true}\n");
    let out = dir.path().join("out");
    let text = stdout(&phase0(&["p1", path(&corpus), "--out", path(&out)], dir.path()));
    assert!(!text.contains("undefined )"), "{text}");
    assert!(!text.contains("undefinedpp"), "{text}");
    assert!(
        text.contains("  rows            1 (1 correct, base rate 1.0000 ["),
        "{text}"
    );
    assert!(
        text.contains("  high subset     1 row with confidence >= 0.8, lift "),
        "{text}"
    );
    assert!(
        text.ends_with(&format!("  reports         {}\n", out.display())),
        "{text}"
    );
    // An empty corpus: every rate undefined, said once, without a dangling interval.
    let empty = dir.path().join("empty.jsonl");
    write(&empty, "\n");
    let text = stdout(&phase0(&["p1", path(&empty), "--out", path(&out)], dir.path()));
    assert!(
        text.contains("  rows            0 (0 correct, base rate undefined)\n"),
        "{text}"
    );
    assert!(text.contains("rows with confidence >= 0.8, lift undefined\n"), "{text}");
}

#[test]
fn p1_names_the_skipped_rows_and_suggests_skip_invalid_on_the_first_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("c.jsonl");
    write(
        &corpus,
        "{\"confidence\": 0.9, \"correct\": true}\n{\"confidence\": 1.7, \"correct\": true}\n{\"correct\": 3}\n",
    );
    let out = dir.path().join("out");
    let error = stderr(&phase0(&["p1", path(&corpus), "--out", path(&out)], dir.path()), 2);
    assert!(
        error.starts_with(&format!("phase0: {}:2: ", corpus.display())),
        "{error}"
    );
    assert!(error.contains("--skip-invalid"), "{error}");
    let text = stdout(&phase0(
        &["p1", path(&corpus), "--out", path(&out), "--skip-invalid"],
        dir.path(),
    ));
    assert!(
        text.contains(&format!(
            "  skipped         2 invalid rows (--skip-invalid); the first at {}:2: ",
            corpus.display()
        )),
        "{text}"
    );
}

#[test]
fn p1_reports_are_dated_like_p2_and_p3() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("c.jsonl");
    write(&corpus, "{\"confidence\": 0.9, \"correct\": true}\n");
    let out = dir.path().join("out");
    let output = e2e::phase0()
        .args(["p1", path(&corpus), "--out", path(&out)])
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .output()
        .unwrap();
    stdout(&output);
    let markdown = std::fs::read_to_string(out.join("p1.md")).unwrap();
    assert!(
        markdown.contains("| generated at | 2026-01-01T00:00:00Z |"),
        "{markdown}"
    );
}

/// A repository with one commit.
fn one_commit(sandbox: &Sandbox) -> PathBuf {
    sandbox.repo("app", &[("src/lib.rs", "pub fn a() {}\n")])
}

#[test]
fn p2_says_one_commit_and_where_the_reports_went() {
    let sandbox = Sandbox::new();
    let repo = one_commit(&sandbox);
    let out = sandbox.path().join("out");
    let text = stdout(&phase0(
        &["p2", "--repo", path(&repo), "--out", path(&out)],
        sandbox.path(),
    ));
    assert!(text.contains(", 1 commit\n"), "{text}");
    assert!(
        text.ends_with(&format!("  reports         {}\n", out.display())),
        "{text}"
    );
}

#[test]
fn a_repository_that_does_not_exist_or_a_revision_that_does_not_resolve_says_so() {
    let sandbox = Sandbox::new();
    let missing = sandbox.path().join("nonexistent");
    let error = stderr(&phase0(&["p2", "--repo", path(&missing)], sandbox.path()), 2);
    assert_eq!(
        error,
        format!("phase0: {}: the repository path does not exist\n", missing.display())
    );
    let repo = one_commit(&sandbox);
    let out = sandbox.path().join("out");
    let error = stderr(
        &phase0(
            &["p2", "--repo", path(&repo), "--rev", "nosuchrev", "--out", path(&out)],
            sandbox.path(),
        ),
        2,
    );
    assert!(
        error.starts_with("phase0: revision \"nosuchrev\": does not resolve in the repository "),
        "{error}"
    );
    assert!(error.contains("app"), "names the repository: {error}");
    assert!(
        !error.contains("delegate") && !error.contains("Ref"),
        "gix's own text: {error}"
    );
}

#[test]
fn p3_says_where_the_reports_went_and_its_task_list_names_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/p3/jira.json");
    let out = dir.path().join("out");
    let text = stdout(&phase0(
        &["p3", path(&sample), "--as-of", "2026-01-01", "--out", path(&out)],
        dir.path(),
    ));
    assert!(
        text.ends_with(&format!("  reports         {}\n", out.display())),
        "{text}"
    );
    let tasks = std::fs::read_to_string(out.join("p3-tasks.csv")).unwrap();
    let first = tasks.lines().nth(1).unwrap();
    assert!(first.starts_with(&format!("{},", sample.display())), "{tasks}");
}

#[test]
fn a_demo_outside_a_checkout_does_not_claim_reports_were_written() {
    let dir = tempfile::tempdir().unwrap();
    let output = phase0(&["demo", "--out", "out"], dir.path());
    assert_eq!(output.status.code(), Some(3));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("partial: p1, p2, p3 did not run; no report was written"),
        "{text}"
    );
    assert!(!text.contains("the other reports were written"), "{text}");
}

#[test]
fn the_p1_report_ends_with_what_the_verdict_means() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("one.jsonl");
    write(&corpus, "{\"confidence\": 0.9, \"correct\": true}\n");
    let out = dir.path().join("out");
    stdout(&phase0(&["p1", path(&corpus), "--out", path(&out)], dir.path()));
    let markdown = std::fs::read_to_string(out.join("p1.md")).unwrap();
    let next = &markdown[markdown.find("## What this means / next step").expect("the section")..];
    assert!(next.contains("There is not enough evidence either way yet."), "{next}");
    assert!(next.contains(" more labeled rows ("), "{next}");
    assert!(next.contains("`phase0 corpus --reflections"), "{next}");
    assert!(next.contains("REFLECTION_MODE=solo"), "{next}");
}
