//! Synthetic histories (no git): one test per detection and classification rule, the verdict branches, the
//! batching contract and determinism.

use std::collections::BTreeMap;
use std::convert::Infallible;

use super::*;
use crate::prereg::{Prereg, sha256_hex};
use crate::scan::commits::{DiffRequest, FileChange, FileDiff, Trailer, evidence_hash};

const DAY: i64 = 86_400;
const T0: i64 = 1_700_000_000;

fn spec() -> P2Spec {
    Prereg::p2(None).unwrap().spec
}

/// A stable, realistic-looking id for `n`.
fn oid(n: u32) -> ObjectId {
    ObjectId::from_hex(&sha256_hex(n.to_string().as_bytes()).as_bytes()[..40]).unwrap()
}

fn hex(n: u32) -> String {
    oid(n).to_string()
}

fn file(path: &str, added: &[&str], removed: &[&str]) -> FileDiff {
    FileDiff {
        path: path.to_string(),
        change: FileChange::Modified,
        lines_added: added.len() as u32,
        lines_removed: removed.len() as u32,
        binary: false,
        added_line_hashes: added.iter().map(|line| evidence_hash(line.as_bytes())).collect(),
        removed_line_hashes: removed.iter().map(|line| evidence_hash(line.as_bytes())).collect(),
    }
}

/// A commit: `message` is split git's way into subject and body; `trailers` as the scanner would give them.
struct Spec<'a> {
    n: u32,
    day: f64,
    message: &'a str,
    trailers: &'a [(&'a str, &'a str)],
    parents: usize,
    files: Vec<FileDiff>,
}

fn c(n: u32, day: f64, message: &str, files: Vec<FileDiff>) -> Spec<'_> {
    Spec {
        n,
        day,
        message,
        trailers: &[],
        parents: 1,
        files,
    }
}

#[derive(Default)]
struct Fixture {
    commits: Vec<CommitRow>,
    diffs: BTreeMap<ObjectId, CommitDiff>,
    /// The diffs of each batch handed back in the reverse of the order asked (the contract allows any order).
    reversed: bool,
}

impl Fixture {
    fn new(specs: Vec<Spec<'_>>) -> Self {
        let mut fixture = Self::default();
        for spec in specs {
            fixture.add(spec);
        }
        fixture
    }

    fn add(&mut self, spec: Spec<'_>) {
        let (subject, body) = spec.message.split_once("\n\n").unwrap_or((spec.message, ""));
        let id = oid(spec.n);
        self.commits.push(CommitRow {
            id,
            parents: (0..spec.parents)
                .map(|p| oid(1_000_000 + spec.n * 10 + p as u32))
                .collect(),
            tree: None,
            author_time: T0 + (spec.day * DAY as f64) as i64,
            commit_time: T0 + (spec.day * DAY as f64) as i64,
            subject: subject.to_string(),
            body: body.to_string(),
            trailers: spec
                .trailers
                .iter()
                .map(|(token, value)| Trailer {
                    token: token.to_string(),
                    value: value.to_string(),
                })
                .collect(),
        });
        let mut files = spec.files;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        self.diffs.insert(id, CommitDiff { id, files });
    }

    /// Newest first, as the scanner gives them.
    fn sorted(&self) -> Vec<CommitRow> {
        let mut commits = self.commits.clone();
        commits.sort_by_key(|commit| std::cmp::Reverse(commit.commit_time));
        commits
    }

    fn run_with(&self, commits: &[CommitRow], spec: &P2Spec) -> (P2Analysis, Vec<(Vec<ObjectId>, DiffDetail)>) {
        let (analysis, calls) = self.run_scoped(commits, spec);
        let calls = calls
            .into_iter()
            .map(|(requests, detail)| (requests.into_iter().map(|request| request.id).collect(), detail))
            .collect();
        (analysis, calls)
    }

    /// As the scanner does: line hashes only with [`DiffDetail::Lines`], and only for a request's `line_paths`.
    fn run_scoped(&self, commits: &[CommitRow], spec: &P2Spec) -> (P2Analysis, Vec<(Vec<DiffRequest>, DiffDetail)>) {
        let mut calls = Vec::new();
        let mut callback = |requests: &[DiffRequest], detail: DiffDetail| -> Result<Vec<CommitDiff>, Infallible> {
            calls.push((requests.to_vec(), detail));
            Ok(requests
                .iter()
                .filter_map(|request| Some((request, self.diffs.get(&request.id)?)))
                .map(|(request, diff)| {
                    let mut diff = diff.clone();
                    if let Some(only) = &request.only_paths {
                        diff.files.retain(|file| only.contains(&file.path));
                    }
                    for file in &mut diff.files {
                        let in_scope = detail == DiffDetail::Lines
                            && request
                                .line_paths
                                .as_ref()
                                .is_none_or(|paths| paths.contains(&file.path));
                        if !in_scope {
                            file.added_line_hashes = Default::default();
                            file.removed_line_hashes = Default::default();
                        }
                    }
                    diff
                })
                .collect::<Vec<_>>())
            .map(|mut diffs| {
                if self.reversed {
                    diffs.reverse();
                }
                diffs
            })
        };
        let analysis = analyze(&mut commits.to_vec(), spec, &mut MessageMemo::none(), &mut callback).unwrap();
        (analysis, calls)
    }

    fn run(&self) -> P2Analysis {
        self.run_with(&self.sorted(), &spec()).0
    }
}

/// (remedy, failing, kind, link rule, bucket, rule) of every failure.
type Row = (String, Option<String>, FailureKind, &'static str, Bucket, &'static str);

fn rows(analysis: &P2Analysis) -> Vec<Row> {
    analysis
        .failures
        .iter()
        .map(|f| {
            (
                f.remedy.clone(),
                f.failing.clone(),
                f.kind,
                f.link_rule.id(),
                f.bucket,
                f.rule.id(),
            )
        })
        .collect()
}

fn row(remedy: u32, failing: Option<u32>, kind: FailureKind, link: &'static str, rule: ClassRule) -> Row {
    (hex(remedy), failing.map(hex), kind, link, rule.bucket(), rule.id())
}

fn add_a() -> Vec<FileDiff> {
    vec![file("src/a.rs", &["fn a() {", "    let x = 1;", "}"], &[])]
}

/// A message without a blank line after its first line: git's subject is the whole first paragraph, and the
/// SHA marker is in it (git/git's `git-gui: Revert "…"` commits of 2007 are written this way).
#[test]
fn revert_marker_in_a_run_on_subject() {
    let message = format!(
        "git-gui: Revert \"add a\" This reverts commit {}.\n\nToo many complaints.",
        hex(1)
    );
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(2, 1.0, &message, vec![file("src/a.rs", &[], &["fn a() {"])]),
    ]);
    let analysis = fixture.run();
    assert_eq!(rows(&analysis)[0].1, Some(hex(1)));
    assert_eq!(analysis.failures[0].link_rule, LinkRule::RevertSha);
    assert_eq!(analysis.history.revert_commits, 1);
}

#[test]
fn revert_with_sha() {
    let message = format!("Revert \"add a\"\n\nThis reverts commit {}.", hex(1));
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(
            2,
            1.0,
            &message,
            vec![file("src/a.rs", &[], &["fn a() {", "    let x = 1;", "}"])],
        ),
    ]);
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [row(
            2,
            Some(1),
            FailureKind::Revert,
            "revert.sha",
            ClassRule::AmbiguousRevertNoReason
        )]
    );
    let failure = &analysis.failures[0];
    assert_eq!(failure.time_to_remedy_seconds, Some(DAY));
    assert_eq!(
        (failure.failing_surface, failure.floor_flagged),
        (Some(Surface::None), Some(false))
    );
    assert_eq!(failure.remedy_short, hex(2)[..12]);
    assert_eq!(failure.subject, "Revert \"add a\"");
    assert_eq!(analysis.history.revert_commits, 1);
}

#[test]
fn revert_without_sha_links_the_most_recent_earlier_commit_with_the_subject() {
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(2, 1.0, "add a", add_a()),
        c(3, 2.0, "Revert \"add a\"\n\nBreaks the build on arm64.", vec![]),
        c(4, 3.0, "add a", add_a()),
        c(5, 4.0, "Revert \"never committed\"", vec![]),
    ]);
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [
            row(
                5,
                None,
                FailureKind::Revert,
                "revert.subject-not-found",
                ClassRule::AmbiguousRevertNoReason
            ),
            row(3, Some(2), FailureKind::Revert, "revert.subject", ClassRule::CiMessage),
        ]
    );
    assert_eq!(analysis.history.revert_subjects_not_found, 1);
}

#[test]
fn reverts_of_reverts_are_not_failures() {
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(
            2,
            1.0,
            &format!("Revert \"add a\"\n\nThis reverts commit {}.", hex(1)),
            vec![],
        ),
        // Named by subject form: two layers.
        c(
            3,
            2.0,
            &format!("Revert \"Revert \"add a\"\"\n\nThis reverts commit {}.", hex(2)),
            vec![],
        ),
        // git >= 2.43 names the revert of a revert so.
        c(4, 3.0, "Reapply \"add a\"", vec![]),
        // A plain subject, but the commit it names is a revert.
        c(
            5,
            4.0,
            &format!("undo the undo\n\nThis reverts commit {}.", hex(2)),
            vec![],
        ),
        // Reverting the reapplication is a failure again: of the reapply commit.
        c(
            6,
            5.0,
            &format!("Revert \"Reapply \"add a\"\"\n\nThis reverts commit {}.", &hex(4)[..9]),
            vec![],
        ),
    ]);
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [
            row(
                6,
                Some(4),
                FailureKind::Revert,
                "revert.sha",
                ClassRule::AmbiguousRevertNoReason
            ),
            row(
                2,
                Some(1),
                FailureKind::Revert,
                "revert.sha",
                ClassRule::AmbiguousRevertNoReason
            ),
        ]
    );
    assert_eq!(analysis.history.reverts_of_reverts_skipped, 3);
    assert_eq!(analysis.history.revert_commits, 2);
}

#[test]
fn gerrit_revert_powers() {
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(
            2,
            1.0,
            "Revert \"add a\"\n\nReason for revert: crashes on start\n\nChange-Id: I1",
            vec![],
        ),
        c(
            3,
            2.0,
            "Revert^2 \"add a\"\n\nReason for revert: fixed upstream",
            add_a(),
        ),
        c(
            4,
            3.0,
            "Revert^3 \"add a\"\n\nReason for revert: typo in the error message",
            vec![],
        ),
    ]);
    let mut commits = fixture.sorted();
    commits[2].trailers = vec![Trailer {
        token: "Change-Id".into(),
        value: "I1".into(),
    }];
    let (analysis, _) = fixture.run_with(&commits, &spec());
    assert_eq!(
        rows(&analysis),
        [
            // Revert^3 reverts Revert^2 (the reapplication), found by Gerrit's subject.
            row(
                4,
                Some(3),
                FailureKind::Revert,
                "revert.subject",
                ClassRule::ReviewMessage
            ),
            row(
                2,
                Some(1),
                FailureKind::Revert,
                "revert.subject",
                ClassRule::AmbiguousRevertUnlocated
            ),
        ]
    );
    assert_eq!(analysis.history.reverts_of_reverts_skipped, 1);
}

#[test]
fn fixes_trailer_with_an_abbreviated_sha_and_a_rewritten_line_is_human_review() {
    let value = format!("{} (\"add a\")", &hex(1)[..12]);
    let trailers = [
        ("Fixes", value.as_str()),
        ("Fixes", "#123"),
        ("Signed-off-by", "A <a@b>"),
    ];
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(2, 0.5, "unrelated", vec![file("src/b.rs", &["x"], &[])]),
        Spec {
            trailers: &trailers,
            ..c(
                3,
                2.0,
                "parser: handle the empty case",
                vec![file("src/a.rs", &["    let x = 2;", ""], &["    let x = 1;", ""])],
            )
        },
    ]);
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [row(
            3,
            Some(1),
            FailureKind::FixesTrailer,
            "fixes-trailer.sha",
            ClassRule::ReviewLines
        )]
    );
    assert_eq!(analysis.history.fixes_trailers_not_sha, 1);
    assert_eq!(analysis.history.fixes_trailer_commits, 1);
    assert_eq!(analysis.failures[0].time_to_remedy_seconds, Some(2 * DAY));
}

/// vite's `fix: hmr for env files, regression from #15365 (#15559)` and deno's `Fixes a regression from #33465`:
/// with version 4, a pull request number after a culprit phrase names the commit that landed it.
fn pull_request_citations() -> Fixture {
    Fixture::new(vec![
        c(1, 0.0, "feat: add a (#10)", add_a()),
        c(2, 0.5, "chore: unrelated (#11)", vec![file("src/b.rs", &["x"], &[])]),
        c(
            3,
            2.0,
            "fix: handle the empty case, regression from #10 (#12)",
            vec![file("src/a.rs", &["    let x = 2;"], &["    let x = 1;"])],
        ),
        c(
            4,
            3.0,
            "docs: say why (#13)\n\nCaused by #99, an issue; broken by PR #11.",
            vec![file("src/b.rs", &["y"], &["x"])],
        ),
    ])
}

#[test]
fn a_pull_request_cited_as_the_culprit_names_the_commit_that_landed_it() {
    let fixture = pull_request_citations();
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [
            row(
                4,
                Some(2),
                FailureKind::Citation,
                "citation.pull-request",
                ClassRule::ReviewLines
            ),
            row(
                3,
                Some(1),
                FailureKind::Citation,
                "citation.pull-request",
                ClassRule::ReviewLines
            ),
        ]
    );
    // #99 lands nowhere: counted, never a link.
    assert_eq!(analysis.history.pull_requests_not_found, 1);
    assert_eq!(analysis.history.citation_commits, 2);
    // Both name a change inside the window (two days and 2.5 days older), and the blind linker finds each on the line
    // the remedy rewrites.
    assert_eq!(
        (
            analysis.self_check.named,
            analysis.self_check.correct,
            analysis.self_check.unlinked
        ),
        (2, 2, 0)
    );

    // Version 3 read no pull request numbers: fix 3 is linked blind (to the same change), commit 4 is no remedy.
    let mut v3 = spec();
    v3.citation.pull_requests = false;
    let (analysis, _) = fixture.run_with(&fixture.sorted(), &v3);
    assert_eq!(
        rows(&analysis),
        [row(
            3,
            Some(1),
            FailureKind::FixAfterChange,
            "fix-after-change.lines",
            ClassRule::ReviewLines
        )]
    );
    assert_eq!(analysis.history.pull_requests_not_found, 0);
    assert_eq!(analysis.self_check.named, 0);
}

#[test]
fn fixes_trailers_outside_the_history_or_ambiguous_are_reported() {
    let trailers = [("Fixes", "0000000000aa"), ("fixes", "abcdef1")];
    let fixture = Fixture::new(vec![
        c(1, 0.0, "one", add_a()),
        c(2, 0.1, "two", add_a()),
        Spec {
            trailers: &trailers,
            ..c(900_000, 1.0, "handle it", vec![file("src/a.rs", &["y"], &[])])
        },
    ]);
    // Two ids sharing a 7-digit prefix make that prefix ambiguous.
    let mut commits = fixture.sorted();
    commits[1].id = ObjectId::from_hex(format!("abcdef1{}2", "0".repeat(32)).as_bytes()).unwrap();
    commits[2].id = ObjectId::from_hex(format!("abcdef1{}1", "0".repeat(32)).as_bytes()).unwrap();
    let (analysis, _) = fixture.run_with(&commits, &spec());
    let prefix = "abcdef1";
    assert_eq!(
        rows(&analysis),
        [
            row(
                900_000,
                None,
                FailureKind::FixesTrailer,
                "fixes-trailer.sha-outside-history",
                ClassRule::AmbiguousFailingUnknown
            ),
            row(
                900_000,
                None,
                FailureKind::FixesTrailer,
                "fixes-trailer.sha-ambiguous",
                ClassRule::AmbiguousFailingUnknown
            ),
        ]
    );
    let refs: Vec<Option<&str>> = analysis.failures.iter().map(|f| f.failing_ref.as_deref()).collect();
    assert_eq!(refs, [Some("0000000000aa"), Some(prefix)]);
    assert_eq!(
        (analysis.history.shas_outside_history, analysis.history.shas_ambiguous),
        (1, 1)
    );
    assert_eq!(analysis.failures[0].failing_surface, None);
}

#[test]
fn a_fix_links_to_the_change_that_last_added_the_lines_it_removes() {
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(2, 1.0, "add b", vec![file("src/b.rs", &["b"], &[])]),
        // Rewrites a line change 1 added: linked on line evidence, and only that change's lines: human review.
        c(
            3,
            2.0,
            "Fix typo in a",
            vec![file("src/a.rs", &["    let y = 1;"], &["    let x = 1;"])],
        ),
        // Only adds lines: no line evidence, so the weak fallback (the most recent change touching its file, here
        // the fix before it: fixes are candidates too) and never a bucket.
        c(
            4,
            3.0,
            "fix: handle empty input",
            vec![
                file("src/a.rs", &["if x.is_empty() { return; }"], &[]),
                file("src/c.rs", &["c"], &[]),
            ],
        ),
    ]);
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [
            row(
                4,
                Some(3),
                FailureKind::FixAfterChange,
                "fix-after-change.files",
                ClassRule::AmbiguousWeakLink
            ),
            row(
                3,
                Some(1),
                FailureKind::FixAfterChange,
                "fix-after-change.lines",
                ClassRule::ReviewLines
            ),
        ]
    );
    assert_eq!(analysis.failures[1].evidence, Evidence::Lines);
    assert_eq!(analysis.failures[1].evidence_lines, Some(1));
    assert_eq!(analysis.failures[0].evidence, Evidence::Files);
    assert_eq!(
        (
            analysis.history.fix_commits,
            analysis.history.fixes_linked,
            analysis.history.fixes_linked_on_files
        ),
        (2, 1, 1)
    );
}

#[test]
fn fix_after_change_outside_the_window_is_unattributed() {
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(
            2,
            7.5,
            "fix: handle empty input",
            vec![file("src/a.rs", &["    let x = 2;"], &["    let x = 1;"])],
        ),
    ]);
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [row(
            2,
            None,
            FailureKind::FixAfterChange,
            "fix-after-change.unattributed",
            ClassRule::AmbiguousUnattributedFix
        )]
    );
    assert_eq!(analysis.failures[0].time_to_remedy_seconds, None);
    assert_eq!(analysis.history.unattributed_fixes, 1);

    // Just inside the 7-day window it links; a removed line older than the window (`old`) makes it other lines.
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(
            2,
            7.0,
            "fix: handle empty input",
            vec![file("src/a.rs", &["    let x = 2;"], &["    let x = 1;", "old"])],
        ),
    ]);
    assert_eq!(
        rows(&fixture.run()),
        [row(
            2,
            Some(1),
            FailureKind::FixAfterChange,
            "fix-after-change.lines",
            ClassRule::SelfOtherLines
        )]
    );
}

#[test]
fn fix_with_no_attributable_change_is_ambiguous_not_guessed() {
    let fixture = Fixture::new(vec![
        c(
            1,
            0.0,
            "add a",
            vec![file("src/a.rs", &["a"], &[]), file("Cargo.lock", &["x"], &[])],
        ),
        c(2, 0.5, "Merge branch 'x'", vec![file("src/z.rs", &["z"], &[])]),
        c(
            3,
            1.0,
            "Fixed crash in z",
            vec![file("src/z.rs", &["if"], &[]), file("Cargo.lock", &["y"], &[])],
        ),
    ]);
    let mut commits = fixture.sorted();
    commits[1].parents.push(oid(77)); // the merge: never a candidate change
    let (analysis, _) = fixture.run_with(&commits, &spec());
    assert_eq!(
        rows(&analysis),
        [row(
            3,
            None,
            FailureKind::FixAfterChange,
            "fix-after-change.unattributed",
            ClassRule::AmbiguousUnattributedFix
        )]
    );
}

#[test]
fn remedy_in_other_files_only_is_self_reflection() {
    let value = hex(1);
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        Spec {
            trailers: &[("Fixes", value.as_str())],
            ..c(
                2,
                1.0,
                "handle the caller",
                vec![file("src/caller.rs", &["a()?;"], &["a();"])],
            )
        },
    ]);
    assert_eq!(
        rows(&fixture.run()),
        [row(
            2,
            Some(1),
            FailureKind::FixesTrailer,
            "fixes-trailer.sha",
            ClassRule::SelfOtherFiles
        )]
    );
}

#[test]
fn remedy_that_only_adds_lines_in_the_same_files_is_ambiguous() {
    let value = hex(1);
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        Spec {
            trailers: &[("Fixes", value.as_str())],
            ..c(
                2,
                1.0,
                "guard a",
                vec![file("src/a.rs", &["    if x < 0 { return; }", ""], &[""])],
            )
        },
    ]);
    assert_eq!(
        rows(&fixture.run()),
        [row(
            2,
            Some(1),
            FailureKind::FixesTrailer,
            "fixes-trailer.sha",
            ClassRule::AmbiguousAdditionsOnly
        )]
    );
}

#[test]
fn ci_remedy_by_paths() {
    let value = hex(1);
    let remedy = |build: &str| {
        Fixture::new(vec![
            c(1, 0.0, "add a", add_a()),
            Spec {
                trailers: &[("Fixes", value.as_str())],
                ..c(
                    2,
                    1.0,
                    "make it pass",
                    vec![
                        file("tests/a.rs", &["assert!(a())"], &["assert!(!a())"]),
                        file(".github/workflows/ci.yml", &["x"], &[]),
                        file(build, &["x"], &[]),
                    ],
                )
            },
        ])
    };
    let bucketed = |build: &str| rows(&remedy(build).run())[0].5;
    assert_eq!(
        rows(&remedy("Makefile").run()),
        [row(
            2,
            Some(1),
            FailureKind::FixesTrailer,
            "fixes-trailer.sha",
            ClassRule::CiPaths
        )]
    );
    // A dependency manifest is not a build script: a version bump there changes what ships (version 2).
    assert_eq!(bucketed("Cargo.toml"), "self-reflection.other-files");
    // Version 1 took every path the risk floor called "build" or "test": vite's whole package was one.
    assert_eq!(
        bucketed("packages/vite/src/node/server/hmr.ts"),
        "self-reflection.other-files"
    );
}

#[test]
fn ci_remedy_by_message() {
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        // The scope `ci` is not prose; `flaky` is.
        c(
            2,
            1.0,
            "fix(ci): flaky timeout in a",
            vec![file("src/a.rs", &["    let x = 2;"], &["    let x = 1;"])],
        ),
        // A fix chain: this fix rewrites the line the previous fix added, and links to it.
        c(
            3,
            2.0,
            "fix: compilation on windows",
            vec![file("src/a.rs", &["    let x = 3;"], &["    let x = 2;"])],
        ),
    ]);
    let linked = |n, to| {
        row(
            n,
            Some(to),
            FailureKind::FixAfterChange,
            "fix-after-change.lines",
            ClassRule::CiMessage,
        )
    };
    assert_eq!(rows(&fixture.run()), [linked(3, 2), linked(2, 1)]);
}

#[test]
fn review_visible_message_beats_self_reflection() {
    let value = hex(1);
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        Spec {
            trailers: &[("Fixes", value.as_str())],
            ..c(
                2,
                1.0,
                "Correct the naming of a's docs",
                vec![file("src/other.rs", &["x"], &["y"])],
            )
        },
    ]);
    assert_eq!(
        rows(&fixture.run()),
        [row(
            2,
            Some(1),
            FailureKind::FixesTrailer,
            "fixes-trailer.sha",
            ClassRule::ReviewMessage
        )]
    );
}

#[test]
fn the_floor_of_the_failing_change_is_recorded() {
    let message = format!(
        "Revert \"add login\"\n\nThis reverts commit {}.\n\nLocks everyone out.",
        hex(1)
    );
    let fixture = Fixture::new(vec![
        c(
            1,
            0.0,
            "add login",
            vec![file("src/auth/login.rs", &["x"], &[]), file("README.md", &["y"], &[])],
        ),
        c(2, 0.25, &message, vec![]),
    ]);
    let analysis = fixture.run();
    let failure = &analysis.failures[0];
    assert_eq!(failure.rule, ClassRule::AmbiguousRevertUnlocated);
    assert_eq!(
        (failure.failing_surface, failure.floor_flagged),
        (Some(Surface::Auth), Some(true))
    );
    assert_eq!(failure.rule, ClassRule::AmbiguousRevertUnlocated);
    assert_eq!(analysis.by_surface.len(), 1);
    assert_eq!(
        (
            analysis.by_surface[0].key.as_str(),
            analysis.by_surface[0].counts.floor_flagged
        ),
        ("auth", 1)
    );
    assert_eq!(analysis.by_kind[0].key, "revert");
}

fn spec_with(min_classified: u64) -> P2Spec {
    let mut spec = spec();
    spec.kill.min_classified = min_classified;
    spec
}

#[test]
fn verdict_kill() {
    // Wilson upper bound of 0/100: z²/(100 + z²) = 3.7%.
    let verdict = decide(0, 100, &spec());
    assert_eq!(verdict.kind, VerdictKind::Kill);
    assert_eq!(
        verdict.reasons,
        ["only-self-reflection share 0.0% (0 of 100) < 5.0% and its interval [0.0%, 3.7%] lies below it"]
    );
    assert_eq!((verdict.n_required, verdict.n_still_needed), (50, 0));
}

#[test]
fn verdict_pass() {
    let verdict = decide(30, 100, &spec());
    assert_eq!(verdict.kind, VerdictKind::Pass);
    assert_eq!(
        verdict.reasons,
        ["only-self-reflection share 30.0% (30 of 100) >= 5.0% and its interval [21.9%, 39.6%] lies at or above it"]
    );
}

#[test]
fn verdict_inconclusive_by_n() {
    let verdict = decide(0, 49, &spec());
    assert_eq!(verdict.kind, VerdictKind::Inconclusive);
    assert_eq!(
        verdict.reasons,
        ["n = 49 classified failures is below the pre-registered minimum of 50"]
    );
    assert_eq!(verdict.n_still_needed, 1);
}

#[test]
fn verdict_inconclusive_by_interval() {
    let verdict = decide(2, 60, &spec());
    assert_eq!(verdict.kind, VerdictKind::Inconclusive);
    assert_eq!(
        verdict.reasons,
        ["only-self-reflection share 3.3% (2 of 60) < 5.0%, but its interval [0.9%, 11.4%] straddles it"]
    );
    let verdict = decide(6, 60, &spec());
    assert_eq!(verdict.kind, VerdictKind::Inconclusive);
    assert_eq!(
        verdict.reasons,
        ["only-self-reflection share 10.0% (6 of 60) >= 5.0%, but its interval [4.7%, 20.1%] straddles it"]
    );
    // Zero failures with a minimum of 0 classified: no interval, still inconclusive.
    assert_eq!(decide(0, 0, &spec_with(0)).kind, VerdictKind::Inconclusive);
}

fn synthetic(bucket: Bucket, n: usize) -> impl Iterator<Item = Failure> {
    let rule = *ClassRule::ALL.iter().find(|rule| rule.bucket() == bucket).unwrap();
    (0..n).map(move |i| Failure {
        remedy: format!("{bucket}-{i}"),
        remedy_short: String::new(),
        failing: None,
        failing_short: None,
        failing_ref: None,
        kind: FailureKind::FixesTrailer,
        link_rule: LinkRule::FixesSha,
        evidence: Evidence::Sha,
        evidence_lines: None,
        bucket,
        rule,
        time_to_remedy_seconds: Some(i as i64),
        failing_surface: None,
        floor_flagged: None,
        subject: String::new(),
    })
}

fn failures(ci: usize, review: usize, own: usize, ambiguous: usize) -> Vec<Failure> {
    synthetic(Bucket::Ci, ci)
        .chain(synthetic(Bucket::HumanReview, review))
        .chain(synthetic(Bucket::SelfReflection, own))
        .chain(synthetic(Bucket::Ambiguous, ambiguous))
        .collect()
}

#[test]
fn sensitivity_is_robust_when_the_extremes_agree() {
    let analysis = aggregate(
        failures(100, 60, 40, 10),
        HistorySummary::default(),
        SelfCheck::default(),
        &spec(),
    );
    let s = &analysis.sensitivity;
    assert_eq!(
        [&s.excluded, &s.all_self_reflection, &s.none_self_reflection].map(|x| (x.self_reflection, x.n, x.verdict)),
        [
            (40, 200, VerdictKind::Pass),
            (50, 210, VerdictKind::Pass),
            (40, 210, VerdictKind::Pass)
        ]
    );
    assert!(s.robust);
    assert_eq!(analysis.verdict.kind, VerdictKind::Pass);
    assert_eq!(analysis.shares.self_reflection.unwrap().estimate, 0.2);
    assert_eq!(analysis.shares.ambiguous.unwrap().estimate, 10.0 / 210.0);
}

#[test]
fn sensitivity_is_not_robust_when_the_ambiguous_could_flip_it() {
    let analysis = aggregate(
        failures(100, 0, 0, 30),
        HistorySummary::default(),
        SelfCheck::default(),
        &spec(),
    );
    let s = &analysis.sensitivity;
    assert_eq!(
        [&s.excluded, &s.all_self_reflection, &s.none_self_reflection].map(|x| (x.self_reflection, x.n, x.verdict)),
        [
            (0, 100, VerdictKind::Kill),
            (30, 130, VerdictKind::Pass),
            (0, 130, VerdictKind::Kill)
        ]
    );
    assert!(!s.robust);
    assert_eq!(analysis.verdict.kind, VerdictKind::Kill);
}

#[test]
fn time_to_remedy_quantiles_are_nearest_rank() {
    let analysis = aggregate(
        failures(10, 0, 0, 0),
        HistorySummary::default(),
        SelfCheck::default(),
        &spec(),
    );
    // 0..=9 seconds: median = sorted[ceil(5) - 1] = 4, p90 = sorted[ceil(9) - 1] = 8.
    assert_eq!(
        analysis.time_to_remedy,
        TimeToRemedy {
            n: 10,
            median_seconds: Some(4),
            p90_seconds: Some(8)
        }
    );
    assert_eq!(TimeToRemedy::of(&Vec::<Failure>::new()), TimeToRemedy::default());
}

/// Every kind of remedy at once.
fn mixed() -> Fixture {
    let fixes = hex(1);
    Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(2, 0.5, "add b", vec![file("src/b.rs", &["b"], &[])]),
        c(
            3,
            1.0,
            &format!("Revert \"add b\"\n\nThis reverts commit {}.", hex(2)),
            vec![],
        ),
        Spec {
            trailers: &[("Fixes", fixes.as_str())],
            ..c(
                4,
                1.5,
                "a: off by one",
                vec![file("src/a.rs", &["    let x = 0;"], &["    let x = 9;"])],
            )
        },
        c(5, 2.0, "fix: a again", vec![file("src/a.rs", &["z"], &["fn a() {"])]),
        c(6, 2.5, "fix: nothing before", vec![file("src/new.rs", &["z"], &[])]),
    ])
}

/// Line hashes are fetched only for the pairs whose paths do not decide the rule: a remedy that changes another
/// file is "other files", one that only touches CI paths or says so is CI, whatever the lines. The rules come out
/// the same as with every line known.
/// Candidates' line detail is asked for only at the files of the fixes whose window holds them, and only for the
/// candidates that touched one: a fix's own lines come whole.
#[test]
fn candidates_lines_only_at_their_fixes_files() {
    let fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(2, 0.1, "add c", vec![file("src/c.rs", &["c"], &[])]),
        c(
            3,
            0.2,
            "add d",
            vec![file("src/d.rs", &["d"], &[]), file("src/d_more.rs", &["m"], &[])],
        ),
        c(4, 0.3, "test e", vec![file("tests/e_test.rs", &["e"], &[])]),
        // Other files: src/b.rs was not in the failing change.
        c(
            5,
            1.0,
            "fix: a and b",
            vec![
                file("src/a.rs", &["    let x = 2;"], &["    let x = 1;"]),
                file("src/b.rs", &["b"], &[]),
            ],
        ),
        // CI message.
        c(6, 1.1, "fix: the build of c", vec![file("src/c.rs", &["c2"], &["c"])]),
        // Inside the failing change's files: the lines decide (here: it rewrites a line that change added).
        c(7, 1.2, "fix: d", vec![file("src/d.rs", &["d2"], &["d"])]),
        // Only test paths: CI, whatever the lines.
        c(8, 1.3, "fix: e", vec![file("tests/e_test.rs", &["e2"], &["e"])]),
    ]);
    let (analysis, calls) = fixture.run_scoped(&fixture.sorted(), &spec());
    let lines: Vec<&Vec<DiffRequest>> = calls
        .iter()
        .filter(|(_, detail)| *detail == DiffDetail::Lines)
        .map(|(requests, _)| requests)
        .collect();
    assert_eq!(lines.len(), 2, "the fixes' lines, then the candidates'");
    let fixes: Vec<ObjectId> = lines[0].iter().map(|request| request.id).collect();
    assert_eq!(fixes, [8, 7, 6, 5].map(oid));
    assert!(
        lines[0]
            .iter()
            .all(|request| request.only_paths.is_none() && request.line_paths.is_some())
    );
    for request in lines[1] {
        assert!(
            request.only_paths.is_some() && request.line_paths == request.only_paths,
            "{request:?}"
        );
    }
    let restricted: BTreeSet<ObjectId> = lines[1].iter().map(|request| request.id).collect();
    assert_eq!(restricted, [1, 2, 3, 4].map(oid).into());
    let lines_of_3 = lines[1].iter().find(|r| r.id == oid(3)).unwrap();
    assert!(!lines_of_3.line_paths.as_ref().unwrap().contains("src/d_more.rs"));
    assert_eq!(
        rows(&analysis),
        [
            row(
                8,
                Some(4),
                FailureKind::FixAfterChange,
                "fix-after-change.lines",
                ClassRule::CiPaths
            ),
            row(
                7,
                Some(3),
                FailureKind::FixAfterChange,
                "fix-after-change.lines",
                ClassRule::ReviewLines
            ),
            row(
                6,
                Some(2),
                FailureKind::FixAfterChange,
                "fix-after-change.lines",
                ClassRule::CiMessage
            ),
            row(
                5,
                Some(1),
                FailureKind::FixAfterChange,
                "fix-after-change.lines",
                ClassRule::SelfOtherFiles
            ),
        ]
    );
}

#[test]
fn diffs_are_requested_in_at_most_six_batches_candidates_only_at_their_fixes_paths() {
    let fixture = mixed();
    let (analysis, calls) = fixture.run_scoped(&fixture.sorted(), &spec());
    let paths = |list: &[&str]| list.iter().map(|path| path.to_string()).collect::<BTreeSet<String>>();
    let ids = |n: &[u32]| n.iter().map(|&n| DiffRequest::whole(oid(n))).collect::<Vec<_>>();
    let restricted = |n: u32, list: &[&str], lines: bool| DiffRequest {
        id: oid(n),
        line_paths: lines.then(|| std::sync::Arc::new(paths(list))),
        only_paths: Some(std::sync::Arc::new(paths(list))),
    };
    assert_eq!(
        calls,
        [
            // The fixes, the Fixes remedy inside its window (for the self-check), the revert and its reverted
            // change: paths.
            (ids(&[6, 5, 4, 3, 2]), DiffDetail::Paths),
            // Every candidate of a window, at the paths of the remedies whose window holds it.
            (
                vec![
                    // Only fix 6's window holds fix 5.
                    restricted(5, &["src/new.rs"], false),
                    restricted(4, &["src/a.rs", "src/new.rs"], false),
                    restricted(3, &["src/a.rs", "src/new.rs"], false),
                    restricted(2, &["src/a.rs", "src/new.rs"], false),
                    restricted(1, &["src/a.rs", "src/new.rs"], false),
                ],
                DiffDetail::Paths
            ),
            // The lines of the linkable remedies with a candidate touching one of their files, in their files that
            // can be evidence. Fix 6 has none (no candidate of its window touched `src/new.rs`): it is unattributed
            // whatever its lines say, and they are not read.
            (
                vec![
                    DiffRequest {
                        id: oid(5),
                        line_paths: Some(std::sync::Arc::new(paths(&["src/a.rs"]))),
                        only_paths: None
                    },
                    DiffRequest {
                        id: oid(4),
                        line_paths: Some(std::sync::Arc::new(paths(&["src/a.rs"]))),
                        only_paths: None
                    },
                ],
                DiffDetail::Lines
            ),
            // The candidates that touched one of those paths: their lines there.
            (
                vec![
                    restricted(4, &["src/a.rs", "src/new.rs"], true),
                    restricted(1, &["src/a.rs", "src/new.rs"], true),
                ],
                DiffDetail::Lines
            ),
            // The change that won lines, whole (for its file count and classification).
            (ids(&[1]), DiffDetail::Paths),
            // The Fixes failure's failing change, at the remedy's files, for the line rule.
            (
                vec![DiffRequest {
                    id: oid(1),
                    line_paths: Some(std::sync::Arc::new(paths(&["src/a.rs"]))),
                    only_paths: None
                }],
                DiffDetail::Lines
            ),
        ]
    );
    assert!(calls.len() as u64 <= MAX_DIFF_BATCHES);
    assert_eq!(
        (
            analysis.history.diff_batches,
            analysis.history.diffs_requested,
            analysis.history.diffs_missing
        ),
        (6, 16, 0)
    );
    // The Fixes remedy names change 1, inside its window: the blind linker finds no evidence for it (its removed
    // line is older than the window), so the self-check counts it unlinked.
    assert_eq!(
        (
            analysis.self_check.named,
            analysis.self_check.correct,
            analysis.self_check.unlinked
        ),
        (1, 0, 1)
    );
    assert_eq!(
        rows(&analysis),
        [
            row(
                6,
                None,
                FailureKind::FixAfterChange,
                "fix-after-change.unattributed",
                ClassRule::AmbiguousUnattributedFix
            ),
            row(
                5,
                Some(1),
                FailureKind::FixAfterChange,
                "fix-after-change.lines",
                ClassRule::ReviewLines
            ),
            row(
                4,
                Some(1),
                FailureKind::FixesTrailer,
                "fixes-trailer.sha",
                ClassRule::SelfOtherLines
            ),
            row(
                3,
                Some(2),
                FailureKind::Revert,
                "revert.sha",
                ClassRule::AmbiguousRevertNoReason
            ),
        ]
    );

    // Reverts only: one batch; nothing to remedy: none.
    let reverts = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(
            2,
            1.0,
            &format!("Revert \"add a\"\n\nThis reverts commit {}.", hex(1)),
            vec![],
        ),
    ]);
    assert_eq!(reverts.run_with(&reverts.sorted(), &spec()).1.len(), 1);
    let quiet = Fixture::new(vec![c(1, 0.0, "add a", add_a())]);
    assert!(quiet.run_with(&quiet.sorted(), &spec()).1.is_empty());
}

#[test]
fn analysis_is_deterministic_and_independent_of_input_order() {
    let fixture = mixed();
    let mut spec = spec();
    spec.sample.per_bucket = 1;
    let json = |commits: &[CommitRow]| serde_json::to_string(&fixture.run_with(commits, &spec).0).unwrap();
    let sorted = fixture.sorted();
    let mut shuffled = sorted.clone();
    shuffled.reverse();
    shuffled.swap(0, 2);
    let mut duplicated = sorted.clone();
    duplicated.extend(sorted.iter().take(2).cloned());
    assert_eq!(json(&sorted), json(&sorted));
    assert_eq!(json(&sorted), json(&shuffled));
    let (with_duplicates, _) = fixture.run_with(&duplicated, &spec);
    assert_eq!(with_duplicates.history.duplicate_commits, 2);
    assert_eq!(with_duplicates.failures, fixture.run_with(&sorted, &spec).0.failures);
}

#[test]
fn diffs_handed_back_in_any_order_give_the_same_analysis() {
    let mut fixture = mixed();
    let in_order = serde_json::to_string(&fixture.run()).unwrap();
    fixture.reversed = true;
    assert_eq!(serde_json::to_string(&fixture.run()).unwrap(), in_order);
}

/// A commit touching more files than `mass_change_files` (ignored files not counted) is a mass change: blame passes
/// through it. At the limit it is an ordinary change.
#[test]
fn a_commit_touching_more_files_than_the_limit_is_passed_through() {
    let limit = spec().link.mass_change_files;
    let touching = |files: usize, ignored: usize| {
        let mut diff = vec![file("src/a.rs", &["    let x = 2;"], &["    let x = 1;"])];
        diff.extend((1..files).map(|i| file(&format!("src/f{i}.rs"), &["let y = 1;"], &[])));
        diff.extend((0..ignored).map(|i| file(&format!("notes/CHANGELOG-{i}.md"), &["- y"], &[])));
        diff
    };
    for (diff, mass) in [(touching(limit + 1, 0), true), (touching(limit, 5), false)] {
        let fixture = Fixture::new(vec![
            c(1, 0.0, "add a", add_a()),
            c(2, 1.0, "update the sources", diff),
            c(
                3,
                2.0,
                "fix the value of x",
                vec![file("src/a.rs", &["    let x = 3;"], &["    let x = 2;"])],
            ),
        ]);
        let analysis = fixture.run();
        assert_eq!(analysis.history.mass_changes, u64::from(mass), "mass: {mass}");
        let failure = &analysis.failures[0];
        let link = (failure.failing.clone(), failure.link_rule.id());
        if mass {
            assert_eq!(link, (None, "fix-after-change.unattributed"));
        } else {
            assert_eq!(link, (Some(hex(2)), "fix-after-change.lines"));
        }
    }
}

#[test]
fn samples_take_the_first_by_the_seeded_hash() {
    let mut spec = spec();
    spec.sample.per_bucket = 3;
    let all = failures(10, 0, 2, 0);
    let analysis = aggregate(all.clone(), HistorySummary::default(), SelfCheck::default(), &spec);
    let mut expected: Vec<(String, String)> = all[..10]
        .iter()
        .map(|f| {
            (
                sha256_hex(format!("{}\0{}\0", spec.sample.seed, f.remedy).as_bytes()),
                f.remedy.clone(),
            )
        })
        .collect();
    expected.sort();
    let sampled: Vec<&str> = analysis.samples[&Bucket::Ci]
        .iter()
        .map(|f| f.remedy.as_str())
        .collect();
    assert_eq!(
        sampled,
        expected[..3].iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>()
    );
    assert_eq!(analysis.samples[&Bucket::SelfReflection].len(), 2);
    assert!(analysis.samples[&Bucket::Ambiguous].is_empty());
    assert_eq!(analysis.samples.len(), 4);
    // Another seed, another (still deterministic) sample.
    spec.sample.seed += 1;
    let other = aggregate(all, HistorySummary::default(), SelfCheck::default(), &spec);
    assert_ne!(other.samples[&Bucket::Ci], analysis.samples[&Bucket::Ci]);
}

#[test]
fn merges_octopus_merges_huge_commits_and_odd_subjects_do_not_panic() {
    let hex_1 = hex(1);
    let huge: Vec<FileDiff> = (0..5_000)
        .map(|i| file(&format!("src/gen/{i}.rs"), &["x"; 20], &[]))
        .collect();
    let mut fixture = Fixture::new(vec![
        c(1, 0.0, "vendor everything", huge),
        Spec {
            parents: 3,
            ..c(
                2,
                0.5,
                "Merge branches 'a', 'b'",
                vec![file("src/gen/1.rs", &["y"], &["x"])],
            )
        },
        Spec {
            parents: 2,
            ..c(3, 0.6, "Revert \"vendor everything\"", vec![])
        },
        c(
            4,
            1.0,
            &format!(
                "Revert \"Merge branches\"\n\nThis reverts commit {}, reversing\nchanges made to {}.",
                hex(2),
                hex(1)
            ),
            vec![],
        ),
        c(
            5,
            1.5,
            "fix: \u{202e}gnp.exe \u{1b}[31m 😀 \0 \"",
            vec![file("src/gen/2.rs", &["y"], &["x"])],
        ),
        c(6, 1.6, "", vec![]),
        c(7, 1.7, "Revert \"", vec![]),
        c(8, 1.8, "Revert^ \"x\"", vec![]),
        c(9, 1.9, &"Revert \"".repeat(10_000), vec![]),
        c(10, 2.0, &format!("fix: {}", "é".repeat(500)), vec![]),
        Spec {
            trailers: &[("Fixes", hex_1.as_str())],
            ..c(11, 2.1, "gen: drop a line", vec![file("src/gen/1.rs", &[], &["x"])])
        },
    ]);
    fixture.commits[0].author_time = i64::MIN;
    fixture.commits[0].commit_time = i64::MIN;
    fixture.commits[1].commit_time = i64::MAX;
    let analysis = fixture.run();
    assert_eq!(analysis.history.merges, 2);
    assert_eq!(analysis.history.merge_remedies_skipped, 1);
    let octopus_revert = analysis.failures.iter().find(|f| f.remedy == hex(4)).unwrap();
    assert_eq!(octopus_revert.failing.as_deref(), Some(hex(2).as_str()));
    assert_eq!(octopus_revert.time_to_remedy_seconds, Some(T0 + DAY - i64::MAX));
    let odd = analysis.failures.iter().find(|f| f.remedy == hex(5)).unwrap();
    assert_eq!(odd.subject, "fix: \u{202e}gnp.exe \u{fffd}[31m 😀 \u{fffd} \"");
    let long = analysis.failures.iter().find(|f| f.remedy == hex(10)).unwrap();
    assert_eq!(long.subject.chars().count(), SUBJECT_MAX_CHARS);
    assert!(long.subject.ends_with('…'));
    let into_huge = analysis.failures.iter().find(|f| f.remedy == hex(11)).unwrap();
    assert_eq!(
        (into_huge.rule, into_huge.time_to_remedy_seconds),
        (ClassRule::ReviewLines, Some(i64::MAX))
    );
    assert!(serde_json::to_string(&analysis).is_ok());
}

#[test]
fn missing_diffs_are_counted_and_errors_returned() {
    let fixture = mixed();
    let mut none = |_: &[DiffRequest], _: DiffDetail| -> Result<Vec<CommitDiff>, Infallible> { Ok(Vec::new()) };
    let analysis = analyze(&mut fixture.sorted(), &spec(), &mut MessageMemo::none(), &mut none).unwrap();
    assert_eq!(analysis.history.diffs_missing, analysis.history.diffs_requested);
    assert!(analysis.failures.iter().all(|f| f.bucket == Bucket::Ambiguous));

    let mut failing = |_: &[DiffRequest], _: DiffDetail| -> Result<Vec<CommitDiff>, String> { Err("gone".into()) };
    assert_eq!(
        analyze(&mut fixture.sorted(), &spec(), &mut MessageMemo::none(), &mut failing).unwrap_err(),
        "gone"
    );
}

#[test]
fn rule_ids_are_unique_and_documented() {
    let analysis = aggregate(Vec::new(), HistorySummary::default(), SelfCheck::default(), &spec());
    assert_eq!(analysis.rules.len(), LinkRule::ALL.len() + ClassRule::ALL.len());
    assert_eq!(serde_json::to_value(Bucket::HumanReview).unwrap(), "human-review");
    assert_eq!(
        serde_json::to_value(ClassRule::ReviewLines).unwrap(),
        "human-review.lines"
    );
    assert_eq!(
        serde_json::to_value(FailureKind::FixesTrailer).unwrap(),
        "fixes-trailer"
    );
    assert_eq!(analysis.verdict.kind, VerdictKind::Inconclusive);
}

/// Version 3 (`[link] same_branch_hours`): a fix whose rewritten lines came from an earlier commit of its own
/// merged branch committed less than a day before (a pull request's polish, as on rust-lang/cargo) names no failing
/// change; the same lines on the main line link as before, and so does a branch commit older than the limit. Main line: 1 (root) ← 5 (merge of the branch 2 ← 3, 3 fixing 2) ← 6 (a fix of 4's
/// lines, 4 on the main line before the merge).
#[test]
fn a_fix_of_its_own_branch_names_no_failing_change() {
    let mut fixture = Fixture::new(vec![
        c(1, 0.0, "add a", add_a()),
        c(
            2,
            1.0,
            "feat: parse b",
            vec![file("src/b.rs", &["    let b = parse(input);"], &[])],
        ),
        c(
            3,
            1.1,
            "fix: parse b from the trimmed input",
            vec![file(
                "src/b.rs",
                &["    let b = parse(input.trim());"],
                &["    let b = parse(input);"],
            )],
        ),
        c(
            4,
            1.5,
            "feat: count c",
            vec![file("src/c.rs", &["    let c = count(items);"], &[])],
        ),
        c(5, 2.0, "Merge pull request #7 from someone/parse-b", vec![]),
        c(
            6,
            3.0,
            "fix: count only visible items",
            vec![file(
                "src/c.rs",
                &["    let c = count(visible(items));"],
                &["    let c = count(items);"],
            )],
        ),
    ]);
    let set_parents = |fixture: &mut Fixture, n: u32, parents: &[u32]| {
        let commit = fixture.commits.iter_mut().find(|commit| commit.id == oid(n)).unwrap();
        commit.parents = parents.iter().map(|&p| oid(p)).collect();
    };
    set_parents(&mut fixture, 2, &[1]);
    set_parents(&mut fixture, 3, &[2]);
    set_parents(&mut fixture, 4, &[1]);
    set_parents(&mut fixture, 5, &[4, 3]);
    set_parents(&mut fixture, 6, &[5]);
    let analysis = fixture.run();
    assert_eq!(
        rows(&analysis),
        [
            row(
                6,
                Some(4),
                FailureKind::FixAfterChange,
                "fix-after-change.lines",
                ClassRule::ReviewLines
            ),
            row(
                3,
                None,
                FailureKind::FixAfterChange,
                "fix-after-change.same-branch",
                ClassRule::AmbiguousUnattributedFix
            ),
        ]
    );
    assert_eq!(analysis.history.same_branch_fixes, 1);
    assert_eq!(analysis.history.fixes_linked, 1);

    // Version 2 (the rule off) linked the branch's own fix to the branch's first commit; so does a limit shorter
    // than the 2.4 hours between them (a topic fixed after it was in use).
    for hours in [0, 2] {
        let mut other = spec();
        other.link.same_branch_hours = hours;
        let (analysis, _) = fixture.run_with(&fixture.sorted(), &other);
        assert_eq!(analysis.failures[1].failing, Some(hex(2)), "{hours}");
        assert_eq!(analysis.failures[1].link_rule, LinkRule::FixLines, "{hours}");
        assert_eq!(analysis.history.same_branch_fixes, 0, "{hours}");
    }
}

/// What the commit cache keeps of a message is what parsing it gives, field by field: every field a revert, a
/// `Fixes:` trailer, a citation, a merge and a mass change set comes back from its bytes.
#[test]
fn message_facts_come_back_from_the_commit_cache_as_parsed() {
    let spec = spec();
    let matchers = Matchers::new(&spec);
    let row = |subject: &str, body: &str, trailers: &[(&str, &str)], parents: usize| CommitRow {
        id: oid(1),
        parents: (0..parents).map(|p| oid(10 + p as u32)).collect(),
        tree: None,
        author_time: T0,
        commit_time: T0,
        subject: subject.to_string(),
        body: body.to_string(),
        trailers: trailers
            .iter()
            .map(|(token, value)| Trailer {
                token: token.to_string(),
                value: value.to_string(),
            })
            .collect(),
    };
    let rows = [
        row(
            "Revert \"Revert \"parser: speed up\"\"",
            "This reverts commit 0123456789abcdef0123456789abcdef01234567.",
            &[],
            1,
        ),
        row(
            "fix: off-by-one in the limiter",
            "Broken by abcdef0123 (limiter: count bytes, 2024-01-02).",
            &[("Fixes", "fedcba9876543 (limiter: x)"), ("Fixes", "#12")],
            1,
        ),
        row("Merge branch 'topic'", "", &[], 2),
        row("Release 1.2.3", "", &[], 1),
    ];
    for row in &rows {
        let parsed = Parsed::new(row, &spec, &matchers);
        let mut bytes = Vec::new();
        MessageFacts(parsed.clone()).encode(&mut bytes);
        let mut reader = crate::scan::cache_file::Reader::new(&bytes);
        assert_eq!(
            MessageFacts::decode(&mut reader),
            Ok(MessageFacts(parsed)),
            "{}",
            row.subject
        );
        assert!(reader.is_empty(), "{}", row.subject);
    }
    // The fields are not all empty: the rows above exercise each of them.
    let parsed: Vec<Parsed> = rows.iter().map(|row| Parsed::new(row, &spec, &matchers)).collect();
    assert_eq!(parsed[0].cited().revert.as_ref().map(|form| form.depth), Some(2));
    assert_eq!(parsed[0].cited().marker_shas.len(), 1);
    assert_eq!(
        (
            parsed[1].fix,
            parsed[1].cited().fixes_shas.len(),
            parsed[1].fixes_not_sha
        ),
        (true, 1, 1)
    );
    assert_eq!(parsed[1].cited().cited_shas, ["abcdef0123"]);
    assert!(parsed[2].merge);
    assert!(parsed[3].mass_subject);
    // Nothing cited is one form, `None`, parsed or decoded: equal facts compare equal.
    assert_eq!(
        parsed.iter().map(|p| p.cited.is_some()).collect::<Vec<_>>(),
        [true, true, false, false]
    );
}
