//! The P2 stdout block on a history built here: what the self-check line says when a fix names its culprit by
//! pull request (version 4) and the blind linker finds nothing.

mod common;

use pipeline::commands::p2::{P2Args, run};

#[test]
fn the_self_check_line_of_one_unlinked_fix_has_no_undefined_interval() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let home = dir.path();
    common::git_at(&repo, home, "2026-01-01T10:00:00Z", &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.rs"), "fn a() {\n    let x = 1;\n}\n").unwrap();
    common::git_at(&repo, home, "2026-01-01T10:00:00Z", &["add", "a.rs"]);
    common::git_at(
        &repo,
        home,
        "2026-01-01T10:00:00Z",
        &["commit", "-q", "-m", "feat: add a (#1)"],
    );
    // The fix only adds a line: no removed line for the blind linker to blame.
    std::fs::write(repo.join("a.rs"), "fn a() {\n    let x = 1;\n    let y = 2;\n}\n").unwrap();
    common::git_at(
        &repo,
        home,
        "2026-01-02T10:00:00Z",
        &["commit", "-q", "-am", "fix: set y, a regression from #1 (#2)"],
    );
    let outcome = run(&P2Args {
        repo: repo.clone(),
        out: dir.path().join("out"),
        as_of: Some("2026-11-21".into()),
        ..P2Args::default()
    })
    .unwrap();
    let line = outcome
        .summary
        .lines()
        .find(|line| line.contains("self-check"))
        .unwrap();
    assert_eq!(
        line,
        "  self-check      blind links of 1 fix naming their culprit: 0 right, 0 wrong, 1 unlinked; precision \
         undefined, recall 0.0% [0.0%, 79.3%]"
    );
}
