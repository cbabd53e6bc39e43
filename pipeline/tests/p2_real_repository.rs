//! P2 on a real repository against git itself: the reverts found, and the changed paths of every failing change.
//!
//! By default it runs on the P2 fixture history (so CI always runs it); point it at a large clone with
//! `PHASE0_REAL_REPO=/path/to/git.git cargo test --release -p pipeline --test p2_real_repository -- --nocapture`
//! (BENCHMARKS.md lists the repositories it was run on).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod common;

use pipeline::experiments::p2::{self, FailureKind, LinkRule};
use pipeline::prereg::Prereg;
use pipeline::scan::commits::{DiffDetail, ObjectId};
use pipeline::scan::git::{self, WalkOptions};

/// `PHASE0_REAL_REPO`, or else the P2 fixture history built by `tests/fixtures/p2-history.sh` (kept alive by the
/// returned directory).
fn repository() -> (PathBuf, Option<tempfile::TempDir>) {
    if let Some(path) = std::env::var_os("PHASE0_REAL_REPO") {
        return (PathBuf::from(path), None);
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("history");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/p2-history.sh");
    let status = common::isolated("bash", dir.path(), dir.path())
        .arg(script)
        .arg(&repo)
        .status()
        .expect("bash runs");
    assert!(status.success());
    (repo, Some(dir))
}

fn git(repo: &Path, args: &[&str]) -> String {
    let home = tempfile::tempdir().unwrap();
    let output = common::isolated("git", repo, home.path())
        .args(["-c", "core.quotePath=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A line of the message that names a reverted commit: the marker followed by a hex SHA (git's own wording).
/// `git log --grep` also finds prose that merely quotes the marker (`appending "This reverts commit <ref>."`).
fn names_a_reverted_sha(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.match_indices("this reverts commit ").any(|(at, marker)| {
        lower[at + marker.len()..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count()
            >= 7
    })
}

#[test]
fn reverts_and_failing_paths_match_git() {
    let (repo, _fixture) = repository();
    let handle = git::open(&repo).unwrap();
    let history = git::walk(&handle, &WalkOptions::default()).unwrap();
    let spec = Prereg::p2(None).unwrap().spec;
    let analysis = p2::analyze(
        &mut history.commits.clone(),
        &spec,
        &mut p2::MessageMemo::none(),
        &mut |requests, detail| git::diffs_for(&handle, requests, detail),
    )
    .unwrap();

    // Reverts that name their SHA, against `git log -i --grep='This reverts commit'` (case-insensitive: git/git
    // has "this reverts commit ac9666f84 that merged …"), less the hits that only quote the marker in prose.
    let grep: BTreeSet<String> = git(&repo, &["log", "-i", "--grep=This reverts commit", "--format=%H"])
        .lines()
        .map(str::to_string)
        .filter(|id| names_a_reverted_sha(&git(&repo, &["log", "-1", "--format=%B", id])))
        .collect();
    let ours: BTreeSet<String> = analysis
        .failures
        .iter()
        .filter(|f| {
            f.kind == FailureKind::Revert
                && matches!(
                    f.link_rule,
                    LinkRule::RevertSha | LinkRule::RevertShaOutsideHistory | LinkRule::RevertShaAmbiguous
                )
        })
        .map(|f| f.remedy.clone())
        .collect();
    assert!(
        ours.is_subset(&grep),
        "not found by git: {:?}",
        ours.difference(&grep).collect::<Vec<_>>()
    );
    let missed: Vec<&String> = grep.difference(&ours).collect();
    eprintln!(
        "{}: {} commits; git finds {} reverts naming a SHA, phase0 {} plus {} reverts of reverts",
        repo.display(),
        history.commits.len(),
        grep.len(),
        ours.len(),
        analysis.history.reverts_of_reverts_skipped
    );
    assert!(
        missed.len() as u64 <= analysis.history.reverts_of_reverts_skipped + analysis.history.merge_remedies_skipped,
        "reverts git finds that phase0 neither counts nor skips as reverts of reverts or merges: {missed:?}"
    );

    // The changed paths of every failing change, against git's (merges: against the first parent).
    let failing: BTreeSet<String> = analysis.failures.iter().filter_map(|f| f.failing.clone()).collect();
    let ids: Vec<ObjectId> = failing
        .iter()
        .map(|hex| ObjectId::from_hex(hex.as_bytes()).unwrap())
        .collect();
    let diffs = git::diffs(&handle, &ids, DiffDetail::Paths).unwrap();
    for diff in &diffs {
        let id = diff.id.to_string();
        let parents = git(&repo, &["rev-list", "--parents", "-n1", &id]);
        let expected = if parents.split_whitespace().count() > 1 {
            git(&repo, &["diff", "--name-only", "--no-renames", &format!("{id}^1"), &id])
        } else {
            git(&repo, &["show", "--name-only", "--no-renames", "--format=", &id])
        };
        let expected: Vec<&str> = expected.lines().filter(|line| !line.is_empty()).collect();
        let ours: Vec<&str> = diff.files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(ours, expected, "changed paths of {id}");
    }
    eprintln!("{} failing changes: paths equal git's", diffs.len());
    if std::env::var_os("PHASE0_REAL_REPO").is_none() {
        // The fixture: one revert naming its SHA, one reapplication of it, thirteen failing changes.
        assert_eq!(
            (grep.len(), ours.len(), analysis.history.reverts_of_reverts_skipped),
            (2, 1, 1)
        );
        assert_eq!(diffs.len(), 13);
    }
}
