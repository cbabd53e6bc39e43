//! Task files kept in git: boards rebuilt from the history of a beads `.beads/issues.jsonl` and of upstream JSONL
//! files under `data/`. The fixture repository is built by `tests/fixtures/task_history/history.sh` (its header
//! lists what each commit does) in a tempdir with an isolated git environment; every date is fixed, so each
//! rebuilt history is pinned exactly.

mod common;

use common::isolated;

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use pipeline::scan::board::{Format, RemovalReason, StatusCategory, StatusChange, Task};
use pipeline::scan::task_history::{self, TaskFileHistory, TaskHistoryError, board_from_history};

use StatusCategory::{Cancelled, Done, InProgress, Todo};

// ---------------------------------------------------------------------------------------------------------------
// Fixtures

fn run(mut cmd: Command) -> String {
    let out = cmd.output().expect("run a command");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A repository in a tempdir (removed on drop).
struct Fixture {
    tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Fixture {
    fn empty() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        Fixture { tmp, root, home }
    }

    fn build(script: &str) -> Fixture {
        let fx = Fixture::empty();
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/task_history")
            .join(script);
        let mut cmd = isolated("bash", &fx.root, &fx.home);
        cmd.arg(script).arg(&fx.root);
        run(cmd);
        fx
    }

    fn git(&self, args: &[&str]) -> String {
        let mut cmd = isolated("git", &self.root, &self.home);
        cmd.args(args);
        run(cmd)
    }

    fn rev(&self, rev: &str) -> String {
        self.git(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
            .trim()
            .to_owned()
    }

    fn history(&self, rev: Option<&str>, file: &str, format: Format) -> Result<TaskFileHistory, TaskHistoryError> {
        let repo = task_history::open(&self.root).unwrap();
        board_from_history(&repo, rev, file, format, &TimeZone::UTC)
    }
}

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// November 2025, 09:00 UTC: the time of every commit of the fixture.
fn day(d: u32) -> Timestamp {
    ts(&format!("2025-11-{d:02}T09:00:00Z"))
}

fn change(at: Timestamp, from: Option<&str>, to: &str, to_category: StatusCategory) -> StatusChange {
    StatusChange {
        at,
        from: from.map(str::to_owned),
        to: to.to_owned(),
        to_category,
        provenance: None,
    }
}

/// The task's history without the provenance of each change (checked on its own where it matters).
fn plain(task: &Task) -> Vec<StatusChange> {
    task.history
        .iter()
        .flatten()
        .map(|c| StatusChange {
            provenance: None,
            ..c.clone()
        })
        .collect()
}

fn ids(history: &TaskFileHistory) -> Vec<&str> {
    history.board.tasks.iter().map(|t| t.id.as_str()).collect()
}

fn task<'a>(history: &'a TaskFileHistory, id: &str) -> &'a Task {
    history.board.task(id).unwrap_or_else(|| panic!("no task {id}"))
}

// ---------------------------------------------------------------------------------------------------------------
// beads

#[test]
fn beads_history_is_rebuilt_from_the_commits() {
    let fx = Fixture::build("history.sh");
    let h = fx.history(None, ".beads/issues.jsonl", Format::Beads).unwrap();

    // 12 first-parent commits (the side commit of the reopen branch is not walked); the file changed in 9 of
    // them (c2, c4, c5, c6, c7, c9, c10, c11, c12); c6 is broken.
    assert_eq!(h.tip.to_string(), fx.rev("HEAD"));
    assert_eq!(h.commits_walked, 12);
    assert_eq!(h.versions_read, 9);
    assert_eq!(h.versions_skipped, 1);
    assert_eq!(h.files, [".beads/issues.jsonl"]);
    assert_eq!(h.board.path, Path::new(".beads/issues.jsonl"));
    assert_eq!(h.board.format, Format::Beads);
    assert!(h.board.capabilities.status_history && h.board.capabilities.reopen && h.board.capabilities.created);
    assert!(h.board.capabilities.kind && h.board.capabilities.links && !h.board.capabilities.explicit_outcome);
    assert_eq!(
        h.board.notes,
        [
            format!(
                "commit {} (2025-11-06T09:00:00Z): .beads/issues.jsonl:2: invalid JSON: EOF while parsing a \
                 value at column 29; this version was skipped",
                fx.rev("HEAD~6")
            ),
            "1 task is no longer in the newest version, kept as last seen: \"bd-3\"".to_owned(),
        ]
    );
    // The newest version's tasks in file order, then the one that was removed.
    assert_eq!(ids(&h), ["bd-1", "bd-2", "bd-4", "bd-3"]);

    // Completed, reopened (on the merge of the side branch, 11-10), completed again.
    let bd1 = task(&h, "bd-1");
    assert_eq!(
        plain(bd1),
        [
            change(ts("2025-11-01T09:00:00Z"), None, "open", Todo),
            change(day(4), Some("open"), "in_progress", InProgress),
            change(day(5), Some("in_progress"), "closed", Done),
            change(day(10), Some("closed"), "open", Todo),
            change(day(14), Some("open"), "closed", Done),
        ]
    );
    assert_eq!(bd1.reopened_at, [day(10)]);
    assert!(bd1.was_reopened());
    // Each change names the first-parent commit that shows it (the reopen: the merge, HEAD~3), its author, how
    // many tasks changed status in it; nothing here is stale, reverted or restored.
    let provenance: Vec<(String, &str, u64, bool, bool)> = bd1
        .history
        .iter()
        .flatten()
        .map(|c| {
            let p = c.provenance.as_deref().unwrap();
            (
                p.commit.clone(),
                p.author.as_str(),
                p.status_changes_in_commit,
                p.stale,
                p.restores_completion,
            )
        })
        .collect();
    assert_eq!(
        provenance,
        [
            (fx.rev("HEAD~10"), "Ada Author", 0, false, false),
            (fx.rev("HEAD~8"), "Ada Author", 1, false, false),
            (fx.rev("HEAD~7"), "Ada Author", 1, false, false),
            (fx.rev("HEAD~3"), "Ada Author", 1, false, false),
            (fx.rev("HEAD~1"), "Ada Author", 1, false, false),
        ]
    );
    assert!(
        bd1.history
            .iter()
            .flatten()
            .all(|c| c.provenance.as_ref().unwrap().reverted_by.is_none())
    );
    assert_eq!(bd1.removed, None);
    assert_eq!(bd1.created, Some(ts("2025-11-01T09:00:00Z")));
    // beads states `closed_at`: the file's completion time of the current closed state is kept; the first
    // completion is the history's first change into Done.
    assert_eq!(bd1.completed, Some(ts("2025-11-14T07:00:00Z")));
    assert_eq!(bd1.status_category, Done);
    assert_eq!(bd1.kind.as_deref(), Some("task"));

    // Cancelled ("won't fix"), never reopened.
    let bd2 = task(&h, "bd-2");
    assert_eq!(
        plain(bd2),
        [
            change(ts("2025-11-02T07:00:00Z"), None, "open", Todo),
            change(day(12), Some("open"), "closed", Cancelled),
        ]
    );
    assert_eq!(bd2.status_category, Cancelled);
    assert_eq!(bd2.resolution.as_deref(), Some("won't fix"));
    assert_eq!(bd2.completed, Some(ts("2025-11-12T09:00:00Z")));
    assert_eq!(bd2.created, Some(ts("2025-11-02T07:00:00Z")));
    assert!(bd2.reopened_at.is_empty());

    // Created closed without `closed_at`: completed and first seen at its first commit.
    let bd4 = task(&h, "bd-4");
    assert_eq!(plain(bd4), [change(day(14), None, "closed", Done)]);
    assert_eq!(bd4.created, Some(ts("2025-11-13T12:00:00Z")));
    assert_eq!(bd4.completed, Some(day(14)));

    // No `created_at`; started in the broken commit, which is skipped, so the change is dated by the repair
    // (11-07); removed in c12 and kept as last seen.
    let bd3 = task(&h, "bd-3");
    assert_eq!(
        plain(bd3),
        [
            change(day(4), None, "open", Todo),
            change(day(7), Some("open"), "in_progress", InProgress)
        ]
    );
    assert_eq!(bd3.created, Some(day(4)));
    assert_eq!(bd3.completed, None);
    assert_eq!(bd3.status, "in_progress");
    // Removed in c12: the first version without it.
    assert_eq!(
        bd3.removed.as_ref().map(|r| (r.at, r.commit.clone(), r.reason)),
        Some((day(15), fx.rev("HEAD"), RemovalReason::Deleted))
    );
    assert!(bd3.reopened_at.is_empty());

    assert_eq!(h.board.newest_timestamp(), Some(day(14)));
}

#[test]
fn a_revision_limits_the_history() {
    let fx = Fixture::build("history.sh");
    // An annotated tag on c5, the first completion of bd-1.
    let h = fx
        .history(Some("v-first-close"), ".beads/issues.jsonl", Format::Beads)
        .unwrap();
    assert_eq!(h.tip.to_string(), fx.rev("v-first-close"));
    assert_eq!((h.commits_walked, h.versions_read, h.versions_skipped), (5, 3, 0));
    assert_eq!(ids(&h), ["bd-1", "bd-2", "bd-3"]);
    assert!(h.board.notes.is_empty());
    let bd1 = task(&h, "bd-1");
    assert_eq!(bd1.completed, Some(ts("2025-11-05T07:30:00Z")));
    assert_eq!(bd1.history.as_ref().map(Vec::len), Some(3));
    assert!(bd1.reopened_at.is_empty());

    // At the broken commit itself: the newest readable version is c5, and the note says why.
    let h = fx
        .history(Some("HEAD~6"), ".beads/issues.jsonl", Format::Beads)
        .unwrap();
    assert_eq!((h.commits_walked, h.versions_read, h.versions_skipped), (6, 4, 1));
    assert_eq!(ids(&h), ["bd-1", "bd-2", "bd-3"]);
    assert_eq!(task(&h, "bd-3").status, "open");
    assert_eq!(h.board.notes.len(), 1);
    assert!(
        h.board.notes[0].ends_with("this version was skipped"),
        "{:?}",
        h.board.notes
    );
}

#[test]
fn a_deleted_file_keeps_its_tasks_as_last_seen() {
    let fx = Fixture::build("history.sh");
    let mut cmd = isolated("git", &fx.root, &fx.home);
    cmd.args([
        "-c",
        "user.name=Cy",
        "-c",
        "user.email=cy@example.com",
        "rm",
        "-q",
        ".beads/issues.jsonl",
    ]);
    run(cmd);
    let mut cmd = isolated("git", &fx.root, &fx.home);
    cmd.args([
        "-c",
        "user.name=Cy",
        "-c",
        "user.email=cy@example.com",
        "commit",
        "-q",
        "-m",
        "Drop beads",
    ])
    .env("GIT_AUTHOR_DATE", "2025-11-16 09:00:00 +0000")
    .env("GIT_COMMITTER_DATE", "2025-11-16 09:00:00 +0000");
    run(cmd);
    let h = fx.history(None, ".beads/issues.jsonl", Format::Beads).unwrap();
    // The deletion is not a version.
    assert_eq!((h.commits_walked, h.versions_read, h.versions_skipped), (13, 9, 1));
    assert_eq!(ids(&h), ["bd-1", "bd-2", "bd-4", "bd-3"]);
    assert_eq!(
        h.board.notes[1..],
        [
            format!(
                "\".beads/issues.jsonl\" was deleted in commit {} (2025-11-16T09:00:00Z); the tasks are as last seen, and left the task file then",
                fx.rev("HEAD")
            ),
            "1 task is no longer in the newest version, kept as last seen: \"bd-3\"".to_owned(),
        ]
    );
    assert_eq!(task(&h, "bd-1").reopened_at, [day(10)]);
    // Every task still in the file left it with the file.
    assert_eq!(
        task(&h, "bd-1").removed.as_ref().map(|r| (r.commit.clone(), r.at)),
        Some((fx.rev("HEAD"), "2025-11-16T09:00:00Z".parse().unwrap()))
    );
    assert_eq!(h.deleted.map(|(commit, _)| commit.to_string()), Some(fx.rev("HEAD")));
}

#[test]
fn a_shallow_clone_starts_at_its_boundary() {
    let fx = Fixture::build("history.sh");
    let clone = fx.tmp.path().join("clone");
    let mut cmd = isolated("git", fx.tmp.path(), &fx.home);
    cmd.args(["clone", "-q", "--depth", "4"])
        .arg(format!("file://{}", fx.root.display()))
        .arg(&clone);
    run(cmd);
    let repo = task_history::open(&clone).unwrap();
    let h = board_from_history(&repo, None, ".beads/issues.jsonl", Format::Beads, &TimeZone::UTC).unwrap();
    // c12, c11, c10 and the merge c9, the boundary: the reopen on c9 is where the history starts.
    assert_eq!((h.commits_walked, h.versions_read, h.versions_skipped), (4, 4, 0));
    assert_eq!(
        h.board.notes,
        [
            format!(
                "the repository is a shallow clone: the history before commit {} is missing",
                fx.rev("HEAD~3")
            ),
            "1 task is no longer in the newest version, kept as last seen: \"bd-3\"".to_owned(),
        ]
    );
    let bd1 = task(&h, "bd-1");
    assert_eq!(
        plain(bd1),
        [
            change(ts("2025-11-01T09:00:00Z"), None, "open", Todo),
            change(day(14), Some("open"), "closed", Done),
        ]
    );
    assert!(bd1.reopened_at.is_empty());
    // bd-3 has no creation time of its own: first seen at the boundary.
    assert_eq!(task(&h, "bd-3").created, Some(day(10)));
}

// ---------------------------------------------------------------------------------------------------------------
// Upstream JSONL

#[test]
fn upstream_jsonl_history_is_rebuilt_from_the_commits() {
    let fx = Fixture::build("history.sh");
    let h = fx.history(None, "./data/tasks.jsonl", Format::Jsonl).unwrap();
    assert_eq!((h.commits_walked, h.versions_read, h.versions_skipped), (12, 9, 1));
    assert_eq!(h.files, ["data/tasks.jsonl"]);
    assert!(h.board.capabilities.created && h.board.capabilities.explicit_outcome && !h.board.capabilities.kind);
    assert_eq!(
        h.board.notes,
        [
            format!(
                "commit {} (2025-11-06T09:00:00Z): data/tasks.jsonl:2: invalid JSON: EOF while parsing a value \
                 at column 12; this version was skipped",
                fx.rev("HEAD~6")
            ),
            "1 task is no longer in the newest version, kept as last seen: \"T-3\"".to_owned(),
        ]
    );
    assert_eq!(ids(&h), ["T-1", "T-2", "T-3"]);

    // No `completed_at` in the file: completed is the first completion (11-05), not the second (11-14).
    let t1 = task(&h, "T-1");
    assert_eq!(
        plain(t1),
        [
            change(day(2), None, "todo", Todo),
            change(day(4), Some("todo"), "in progress", InProgress),
            change(day(5), Some("in progress"), "done", Done),
            change(day(10), Some("done"), "todo", Todo),
            change(day(14), Some("todo"), "done", Done),
        ]
    );
    assert_eq!(t1.reopened_at, [day(10)]);
    assert_eq!(t1.completed, Some(day(5)));
    assert_eq!(t1.created, Some(day(2)));

    let t2 = task(&h, "T-2");
    assert_eq!(
        plain(t2),
        [
            change(ts("2025-11-02T07:00:00Z"), None, "todo", Todo),
            change(day(12), Some("todo"), "cancelled", Cancelled),
        ]
    );
    assert_eq!(t2.completed, Some(ts("2025-11-12T09:00:00Z")));
    assert_eq!(t2.created, Some(ts("2025-11-02T07:00:00Z")));
    assert!(t2.reopened_at.is_empty());

    let t3 = task(&h, "T-3");
    assert_eq!(
        plain(t3),
        [
            change(day(4), None, "todo", Todo),
            change(day(7), Some("todo"), "in progress", InProgress)
        ]
    );
    assert_eq!((t3.created, t3.completed), (Some(day(4)), None));
}

#[test]
fn a_directory_reads_every_jsonl_file_in_it() {
    let fx = Fixture::build("history.sh");
    let h = fx.history(None, "data/", Format::Jsonl).unwrap();
    // c8 edits only data/notes.txt: the directory changed, none of its *.jsonl files did.
    assert_eq!((h.commits_walked, h.versions_read, h.versions_skipped), (12, 9, 1));
    assert_eq!(h.files, ["data/more.jsonl", "data/tasks.jsonl"]);
    assert_eq!(h.board.path, Path::new("data"));
    // Files in path order: more.jsonl (T-4) before tasks.jsonl; then the removed T-3.
    assert_eq!(ids(&h), ["T-4", "T-1", "T-2", "T-3"]);
    assert_eq!(h.board.notes.len(), 2);
    assert!(
        h.board.notes[0].contains("data/tasks.jsonl:2: invalid JSON"),
        "{:?}",
        h.board.notes
    );
    let t4 = task(&h, "T-4");
    assert_eq!(plain(t4), [change(day(14), None, "done", Done)]);
    assert_eq!((t4.created, t4.completed), (Some(day(14)), Some(day(14))));
    assert_eq!(task(&h, "T-1").reopened_at, [day(10)]);
    assert_eq!(task(&h, "T-1").completed, Some(day(5)));
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

#[test]
fn errors_name_the_repository_the_path_and_the_commit() {
    let fx = Fixture::build("history.sh");
    let root = fx.root.display();
    let head = fx.rev("HEAD");

    let err = fx.history(None, "nope.jsonl", Format::Beads).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{root}: \"nope.jsonl\" is in no commit of the first-parent history of HEAD ({head})")
    );

    // The file did not exist yet at c1.
    let err = fx
        .history(Some("HEAD~11"), ".beads/issues.jsonl", Format::Beads)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{root}: \".beads/issues.jsonl\" is in no commit of the first-parent history of HEAD~11 ({})",
            fx.rev("HEAD~11")
        )
    );

    let err = fx
        .history(Some("no-such-branch"), ".beads/issues.jsonl", Format::Beads)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{root}: revision \"no-such-branch\": Reference \"no-such-branch\" could not be found")
    );

    let err = fx
        .history(Some("HEAD~40"), ".beads/issues.jsonl", Format::Beads)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{root}: revision \"HEAD~40\": Commit {} has 11 ancestors along the first parent and \
             ancestor number 40 is out of range",
            &head[..7]
        )
    );

    // A revision naming a blob.
    let blob = fx.git(&["rev-parse", "HEAD:README.md"]).trim().to_owned();
    let err = fx
        .history(Some("HEAD:README.md"), "README.md", Format::Beads)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{root}: revision \"HEAD:README.md\": names a blob ({blob}), not a commit")
    );

    // Every version of README.md fails to parse as beads.
    let err = fx.history(None, "README.md", Format::Beads).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{root}: no version of \"README.md\" could be read as beads (2 versions); the newest, in commit {}, \
             failed: README.md:1: invalid JSON: expected value at column 1",
            fx.rev("HEAD~9")
        )
    );

    let not_a_repo = fx.tmp.path().join("home");
    let err = task_history::open(&not_a_repo).unwrap_err();
    assert!(matches!(err, TaskHistoryError::NotARepository { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: not a git repository (Could not find a git repository in {:?} or in any of its parents)",
            not_a_repo.display(),
            not_a_repo.display()
        )
    );
}

#[test]
fn an_unborn_head_is_a_bad_revision() {
    let fx = Fixture::empty();
    fx.git(&["-c", "init.defaultBranch=main", "init", "-q", "."]);
    let err = fx.history(None, ".beads/issues.jsonl", Format::Beads).unwrap_err();
    assert!(
        matches!(err, TaskHistoryError::Rev { ref rev, .. } if rev == "HEAD"),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with(&format!("{}: revision \"HEAD\": ", fx.root.display())),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------------------------
// Timing

/// A beads file of `tasks` tasks (lines of about 330 bytes) whose statuses change over `commits` commits (one or
/// two tasks each), streamed into `git fast-import`; returns the number of reopens the history holds (changes
/// from `closed` to `open`). With `rewrite_all`, every line's `updated_at` changes in every commit (a tool that
/// rewrites the whole file), else only the changed tasks' lines change, as beads does.
fn build_large(fx: &Fixture, commits: u64, tasks: usize, rewrite_all: bool) -> usize {
    fx.git(&["-c", "init.defaultBranch=main", "init", "-q", "."]);
    let mut child = isolated("git", &fx.root, &fx.home)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufWriter::new(child.stdin.take().unwrap());
    let statuses = ["open", "in_progress", "closed"];
    let mut state = vec![0usize; tasks];
    let base = 1_735_689_600i64; // 2025-01-01
    // When each task last changed: beads rewrites `updated_at` (and `closed_at`) of the issues it changes only.
    let mut changed_at = vec![base; tasks];
    let mut reopens = 0;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut file = String::new();
    for i in 0..commits {
        let at = base + i as i64 * 600;
        // One or two distinct tasks move on: open → in_progress → closed → open (a reopen) …
        let first = (next() % tasks as u64) as usize;
        let second = (first + 1 + (next() % (tasks as u64 - 1)) as usize) % tasks;
        let moved = if next() % 2 == 0 {
            vec![first]
        } else {
            vec![first, second]
        };
        for t in moved {
            if state[t] == 2 {
                reopens += 1;
            }
            state[t] = (state[t] + 1) % 3;
            changed_at[t] = at;
        }
        file.clear();
        for (t, &s) in state.iter().enumerate() {
            let changed = Timestamp::from_second(changed_at[t]).unwrap();
            let closed = if s == 2 {
                format!(",\"closed_at\":\"{changed}\"")
            } else {
                String::new()
            };
            let changed = if rewrite_all {
                Timestamp::from_second(at).unwrap()
            } else {
                changed
            };
            file.push_str(&format!(
                "{{\"id\":\"bd-{t:04}\",\"title\":\"Task {t}: make the parser handle case {t}\",\
                 \"description\":\"A longer description of task {t}, as agents write them, with a few words of \
                 context.\",\"status\":\"{}\",\"priority\":{},\"issue_type\":\"task\",\
                 \"created_at\":\"2024-12-31T12:00:00Z\",\"updated_at\":\"{changed}\"{closed}}}\n",
                statuses[s],
                t % 4,
            ));
        }
        writeln!(out, "commit refs/heads/main").unwrap();
        writeln!(out, "committer Bot <bot@example.com> {at} +0000").unwrap();
        writeln!(out, "data 7\nchange\n").unwrap();
        writeln!(out, "M 100644 inline .beads/issues.jsonl\ndata {}", file.len()).unwrap();
        out.write_all(file.as_bytes()).unwrap();
        writeln!(out).unwrap();
    }
    drop(out);
    assert!(child.wait().unwrap().success());
    reopens
}

/// `cargo test --release -p pipeline --test task_history -- --ignored --nocapture`: prints the time of
/// [`board_from_history`] on 10,000 commits of a 200-task beads file, once as beads edits it (a commit changes the
/// lines of the tasks it touches) and once with every line rewritten in every commit.
#[test]
#[ignore = "timing run: cargo test --release -p pipeline --test task_history -- --ignored --nocapture"]
fn ten_thousand_commits_timing() {
    for rewrite_all in [false, true] {
        let fx = Fixture::empty();
        let started = Instant::now();
        let reopens = build_large(&fx, 10_000, 200, rewrite_all);
        eprintln!(
            "rewrite_all={rewrite_all}: built the repository in {:.2?}",
            started.elapsed()
        );

        let started = Instant::now();
        let h = fx.history(None, ".beads/issues.jsonl", Format::Beads).unwrap();
        let elapsed = started.elapsed();
        eprintln!(
            "rewrite_all={rewrite_all}: board_from_history: {} commits, {} versions, {} tasks, {} reopens in \
             {elapsed:.2?}",
            h.commits_walked,
            h.versions_read,
            h.board.tasks.len(),
            reopens
        );
        assert_eq!(
            (h.commits_walked, h.versions_read, h.versions_skipped),
            (10_000, 10_000, 0)
        );
        assert_eq!(h.board.tasks.len(), 200);
        let found: usize = h.board.tasks.iter().map(|t| t.reopened_at.len()).sum();
        assert_eq!(found, reopens);
        assert!(
            h.board
                .tasks
                .iter()
                .all(|t| t.history.as_ref().is_some_and(|h| !h.is_empty()))
        );
    }
}

// ---------------------------------------------------------------------------------------------------------------
// P3 version 2 on a history with every artifact (`tests/fixtures/task_history/artifacts.sh`)

/// Runs `phase0 p3 --repo` (the library) on the fixture under pre-registration `version` (1 to 5: the kept
/// files, 6: the embedded one); returns the stdout block, `p3-tasks.csv` and `p3-signals.csv`.
fn p3_on(fx: &Fixture, version: u32) -> (String, String, String) {
    p3_at(fx, version, "2026-04-01")
}

/// A row of `p3-signals.csv` for the March 2026 fixtures: the signal on `day` of the month at 09:00 UTC, of a task
/// completed at `done`.
fn signal_row(task: &str, signal: &str, day: &str, commit: &str, rule: &str, done: &str, detail: &str) -> String {
    format!(".beads,{task},{signal},2026-03-{day}T09:00:00Z,{commit},{rule},{done},{detail}\n")
}

/// `p3-tasks.csv` of tasks `ids`, each completed at `done` and eligible, with its `signals` (in the same order).
fn tasks_table(done: &str, ids: &[&str], signals: &[&str]) -> String {
    let rows: String = ids
        .iter()
        .zip(signals)
        .map(|(id, s)| format!(".beads,{id},{done},false,{s}\n"))
        .collect();
    format!("input,id,completed,censored,signals\n{rows}")
}

fn p3_at(fx: &Fixture, version: u32, as_of: &str) -> (String, String, String) {
    p3_at_rev(fx, version, as_of, None)
}

/// [`p3_at`], reading the task files' history at `history_rev` (`--history-rev`) when given.
fn p3_at_rev(fx: &Fixture, version: u32, as_of: &str, history_rev: Option<&str>) -> (String, String, String) {
    use pipeline::commands::p3::{P3Args, run};
    let out = fx
        .tmp
        .path()
        .join(format!("v{version}-{}", history_rev.unwrap_or("default")));
    let v2 = include_str!("data/p3-v2.toml");
    let prereg = match version {
        1 => Some(v2[..v2.find("\n[history]").unwrap()].replace("version = 2\n", "")),
        2 => Some(v2.to_owned()),
        3 => Some(include_str!("data/p3-v3.toml").to_owned()),
        4 => Some(include_str!("data/p3-v4.toml").to_owned()),
        5 => Some(include_str!("data/p3-v5.toml").to_owned()),
        6 => Some(include_str!("data/p3-v6.toml").to_owned()),
        7 => Some(include_str!("data/p3-v7.toml").to_owned()),
        8 => Some(include_str!("data/p3-v8.toml").to_owned()),
        9 => Some(include_str!("data/p3-v9.toml").to_owned()),
        10 => Some(include_str!("data/p3-v10.toml").to_owned()),
        _ => None,
    }
    .map(|text| {
        let path = fx.tmp.path().join(format!("p3-v{version}.toml"));
        std::fs::write(&path, text).unwrap();
        path
    });
    let outcome = run(&P3Args {
        format: "auto".into(),
        out: out.clone(),
        as_of: Some(as_of.into()),
        repo: Some(fx.root.clone()),
        prereg,
        history_rev: history_rev.map(str::to_owned),
        ..P3Args::default()
    })
    .unwrap();
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    (outcome.summary, read("p3-tasks.csv"), read("p3-signals.csv"))
}

#[test]
fn version_two_sets_each_artifact_aside_task_by_task() {
    let fx = Fixture::build("artifacts.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{n}"));
    let (summary, tasks, signals) = p3_on(&fx, 2);
    // Completed tasks, eligible (the as-of date is far past every window): their signals after the rules. The
    // first bd-reuse (closed 01-02, its id taken on 01-05) and bd-temp (closed 01-02, deleted 01-09) left the
    // file before their window elapsed: not eligible, not listed.
    let bulk: String = (1..=11)
        .map(|n| format!(".beads/issues.jsonl,bd-b{n:02},2026-01-02T09:00:00Z,false,\n"))
        .collect();
    assert_eq!(
        tasks,
        format!(
            "input,id,completed,censored,signals\n{bulk}\
             .beads/issues.jsonl,bd-corrupt,2026-01-03T09:00:00Z,false,\n\
             .beads/issues.jsonl,bd-impl,2026-01-04T09:00:00Z,false,\n\
             .beads/issues.jsonl,bd-later,2026-01-03T09:00:00Z,false,wrong.commit\n\
             .beads/issues.jsonl,bd-luso,2026-01-05T09:00:00Z,false,wrong.reopened\n\
             .beads/issues.jsonl,bd-origin,2026-01-08T09:00:00Z,false,\n\
             .beads/issues.jsonl,bd-origin2,2026-01-08T09:00:00Z,false,wrong.follow-up\n\
             .beads/issues.jsonl,bd-restored,2026-01-03T09:00:00Z,false,\n\
             .beads/issues.jsonl,bd-stale,2026-01-03T09:00:00Z,false,\n"
        )
    );
    // Every would-be signal with its evidence: the bulk reopens (c12, 11 status changes), the reverted
    // corruption (c14, reverted by c15), the close restored with its earlier closed_at (c16), the stale copy
    // (c7), the implementing commit five minutes after the close (c5), the split work twenty minutes after it
    // (c10, same author); and the genuine ones: bd-luso's reopen (c7), the later fix (c12), the follow-up filed
    // a week later by someone else (c18).
    let bulk: String = (1..=11)
        .map(|n| {
            format!(
                ".beads/issues.jsonl,bd-b{n:02},wrong.reopened,2026-01-10T09:00:00Z,{},bulk-commit,2026-01-02T09:00:00Z,\n",
                c(6)
            )
        })
        .collect();
    assert_eq!(
        signals,
        format!(
            "input,task,signal,at,commit,excluded_by,completed,detail\n{bulk}\
             .beads/issues.jsonl,bd-corrupt,wrong.reopened,2026-01-12T09:00:00Z,{},reverted,2026-01-03T09:00:00Z,\n\
             .beads/issues.jsonl,bd-impl,wrong.commit,2026-01-04T09:05:00Z,{},implementing-commit,2026-01-04T09:00:00Z,fix(bd-impl): finish the parser\n\
             .beads/issues.jsonl,bd-later,wrong.commit,2026-01-10T09:00:00Z,{},,2026-01-03T09:00:00Z,fix: bd-later breaks on empty input; reopen bd-b01..bd-b11\n\
             .beads/issues.jsonl,bd-luso,wrong.reopened,2026-01-06T09:00:00Z,{},,2026-01-05T09:00:00Z,\n\
             .beads/issues.jsonl,bd-origin,wrong.follow-up,2026-01-08T09:20:00Z,{},split-work,2026-01-08T09:00:00Z,follow-up bd-split\n\
             .beads/issues.jsonl,bd-origin2,wrong.follow-up,2026-01-15T12:00:00Z,{},,2026-01-08T09:00:00Z,follow-up bd-follow\n\
             .beads/issues.jsonl,bd-restored,wrong.reopened,2026-01-14T09:00:00Z,{},reverted,2026-01-03T09:00:00Z,\n\
             .beads/issues.jsonl,bd-stale,wrong.reopened,2026-01-06T09:00:00Z,{},stale-overwrite,2026-01-03T09:00:00Z,\n",
            c(4),
            c(13),
            c(6),
            c(11),
            c(8),
            c(0),
            c(2),
            c(11),
        )
    );
    let line = |prefix: &str| {
        summary
            .lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in\n{summary}"))
            .trim()
            .to_owned()
    };
    assert_eq!(
        line("tasks "),
        "tasks           19 completed with the 30-day window elapsed, 0 censored, 3 never completed, 0 without a completion time"
    );
    assert_eq!(
        line("task file"),
        "task file       .beads/issues.jsonl: 17 versions in 18 commits, none skipped"
    );
    assert_eq!(
        line("as of"),
        "as of           2026-04-01T00:00:00Z; newest commit 2026-01-15T12:00:00Z, 75 days before the as-of date"
    );
    assert_eq!(
        line("removed"),
        "removed         2 tasks left the task file (1 of them ids reused by another task); 2 completed were removed before their window elapsed (left out)"
    );
    assert_eq!(
        line("excluded"),
        "excluded        bulk-commit 11, implementing-commit 1, reverted 2, split-work 1, stale-overwrite 1 (would-be signals set aside by rule; examples in p3.md, all in p3-signals.csv)"
    );
    assert_eq!(
        line("base rate"),
        "base rate       3 of 19 = 15.8% [5.5%, 37.6%] (3 wrong, 0 right)"
    );

    // The scanner's side: the reused id is two tasks; the deleted one is dated by the first version without it.
    let h = fx.history(None, ".beads/issues.jsonl", Format::Beads).unwrap();
    assert_eq!(h.ids_reused, 1);
    let earlier = task(&h, "bd-reuse~1");
    assert_eq!(earlier.title, "Task bd-reuse");
    assert_eq!(
        earlier.removed.as_ref().map(|r| (r.at, r.commit.clone(), r.reason)),
        Some((ts("2026-01-05T09:00:00Z"), c(12), RemovalReason::IdReused))
    );
    let later = task(&h, "bd-reuse");
    assert_eq!(
        (later.title.as_str(), later.status.as_str()),
        ("Temporary test", "open")
    );
    assert_eq!(later.history.as_ref().map(Vec::len), Some(1));
    let temp = task(&h, "bd-temp");
    assert_eq!(
        temp.removed.as_ref().map(|r| (r.at, r.reason)),
        Some((ts("2026-01-09T09:00:00Z"), RemovalReason::Deleted))
    );
    let corrupt = task(&h, "bd-corrupt");
    let reopen = corrupt.history.as_ref().unwrap()[2].provenance.as_deref().unwrap();
    assert_eq!(reopen.reverted_by.as_deref(), Some(c(3).as_str()));
    let bulk = task(&h, "bd-b05").history.as_ref().unwrap()[2]
        .provenance
        .as_deref()
        .unwrap();
    assert_eq!((bulk.commit.clone(), bulk.status_changes_in_commit), (c(6), 11));
}

#[test]
fn version_one_counts_every_artifact_as_a_signal() {
    let fx = Fixture::build("artifacts.sh");
    let (summary, tasks, _) = p3_on(&fx, 1);
    // No [history]: ids are not split, deleted tasks stay eligible, every reopen and mention counts.
    let bulk: String = (1..=11)
        .map(|n| format!(".beads/issues.jsonl,bd-b{n:02},2026-01-02T09:00:00Z,false,wrong.reopened\n"))
        .collect();
    assert_eq!(
        tasks,
        format!(
            "input,id,completed,censored,signals\n{bulk}\
             .beads/issues.jsonl,bd-corrupt,2026-01-03T09:00:00Z,false,wrong.reopened\n\
             .beads/issues.jsonl,bd-impl,2026-01-04T09:00:00Z,false,wrong.commit\n\
             .beads/issues.jsonl,bd-later,2026-01-03T09:00:00Z,false,wrong.commit\n\
             .beads/issues.jsonl,bd-luso,2026-01-05T09:00:00Z,false,wrong.reopened\n\
             .beads/issues.jsonl,bd-origin,2026-01-08T09:00:00Z,false,wrong.follow-up\n\
             .beads/issues.jsonl,bd-origin2,2026-01-08T09:00:00Z,false,wrong.follow-up\n\
             .beads/issues.jsonl,bd-restored,2026-01-03T09:00:00Z,false,wrong.reopened\n\
             .beads/issues.jsonl,bd-reuse,2026-01-02T09:00:00Z,false,wrong.reopened\n\
             .beads/issues.jsonl,bd-stale,2026-01-03T09:00:00Z,false,wrong.reopened\n\
             .beads/issues.jsonl,bd-temp,2026-01-02T09:00:00Z,false,\n"
        )
    );
    assert!(summary.contains("  base rate       20 of 21 = 95.2%"), "{summary}");
    assert!(!summary.contains("  excluded"), "{summary}");
}

#[test]
fn a_missing_blob_skips_its_version_and_names_it() {
    let fx = Fixture::build("history.sh");
    // c10 ("Cancel bd-2", HEAD~2): its version of the beads file is a loose object of its own; remove it, as a
    // partial clone lacks it.
    let blob = fx.git(&["rev-parse", "HEAD~2:.beads/issues.jsonl"]).trim().to_owned();
    let object = fx.root.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    std::fs::remove_file(&object).unwrap();
    let h = fx.history(None, ".beads/issues.jsonl", Format::Beads).unwrap();
    assert_eq!((h.versions_read, h.versions_skipped, h.versions_missing), (9, 2, 1));
    let missing = &h.skipped[1];
    assert_eq!(missing.commit.to_string(), fx.rev("HEAD~2"));
    assert_eq!((missing.time, missing.missing), (day(12), true));
    assert_eq!(
        missing.message,
        format!(".beads/issues.jsonl: blob {blob} is missing from the repository")
    );
    assert!(!h.skipped[0].missing);
    // bd-2's cancellation is seen in the next readable version.
    assert_eq!(
        plain(task(&h, "bd-2")),
        [
            change(ts("2025-11-02T07:00:00Z"), None, "open", Todo),
            change(day(14), Some("open"), "closed", Cancelled),
        ]
    );

    // phase0 p3: status partial, the skipped versions on stdout.
    use pipeline::commands::p3::{P3Args, run};
    let out = fx.tmp.path().join("out");
    let outcome = run(&P3Args {
        format: "auto".into(),
        out: out.clone(),
        repo: Some(fx.root.clone()),
        ..P3Args::default()
    })
    .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&outcome.json).unwrap();
    assert_eq!(
        (json["status"].as_str(), json["error_code"].as_str()),
        (Some("partial"), Some("missing-objects"))
    );
    assert_eq!(json["report"]["task_files"]["versions_missing"], 1);
    let line = outcome.summary.lines().find(|l| l.starts_with("  task file")).unwrap();
    assert_eq!(
        line,
        format!(
            // Version 3 reads the task files of `.beads/` together: the input is the directory.
            "  task file       .beads: 9 versions in 12 commits; 2 skipped: 1 with objects missing from the \
             repository (a partial clone?), e.g. commit {}; 1 unreadable, e.g. commit {}",
            &fx.rev("HEAD~2")[..9],
            &fx.rev("HEAD~6")[..9]
        )
    );
}

/// The error names the paths tried and, when other branches' tips hold the task files, those branches (the orphan
/// branch checked out here has none; `main` and `reopen` do). The Dolt test below has no such branch.
#[test]
fn without_a_task_file_the_error_names_every_path_tried() {
    let fx = Fixture::build("history.sh");
    let mut cmd = isolated("git", &fx.root, &fx.home);
    cmd.args(["checkout", "-q", "--orphan", "bare"]);
    run(cmd);
    std::fs::remove_dir_all(fx.root.join(".beads")).unwrap();
    std::fs::remove_dir_all(fx.root.join("data")).unwrap();
    let mut cmd = isolated("git", &fx.root, &fx.home);
    cmd.args(["-c", "user.name=Cy", "-c", "user.email=cy@example.com", "add", "-A"]);
    run(cmd);
    let mut cmd = isolated("git", &fx.root, &fx.home);
    cmd.args([
        "-c",
        "user.name=Cy",
        "-c",
        "user.email=cy@example.com",
        "commit",
        "-qm",
        "only code",
    ]);
    run(cmd);
    assert_eq!(
        p3_error(&fx, None),
        format!(
            "{}: no task file: neither \".beads/\" (issues.jsonl, beads.jsonl, bd.jsonl) nor \"data/\" (its *.jsonl \
             files) is in any commit of the first-parent history of HEAD ({}); name the file with --data-dir, or \
             read the history of a branch that has them: the tips of branches main, reopen hold them (--history-rev \
             main)",
            fx.root.display(),
            fx.rev("HEAD")
        )
    );
    // The branch named reads.
    let (summary, ..) = p3_at_rev(&fx, 8, "2026-06-01", Some("main"));
    assert!(summary.contains("  input           .beads (beads)"), "{summary}");
}

// ---------------------------------------------------------------------------------------------------------------
// P3 version 3 on a history with the artifacts version 2 counted (`tests/fixtures/task_history/artifacts_v3.sh`)

#[test]
fn version_three_sets_each_new_artifact_aside_task_by_task() {
    let fx = Fixture::build("artifacts_v3.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{}", 15 - n));
    // Version 2 counts every one of them: each task carries a signal.
    let (_, tasks, signals) = p3_at(&fx, 2, "2026-06-01");
    let done = "2026-02-02T09:00:00Z";
    let ids = [
        "bd-admin",
        "bd-body",
        "bd-carry",
        "bd-fix",
        "bd-gen",
        "bd-move",
        "bd-renum",
        "bd-see",
        "bd-small1",
        "bd-small2",
        "bd-small3",
    ];
    let v2_signals = [
        "wrong.reopened",
        "wrong.commit",
        "wrong.reopened",
        "wrong.commit",
        "wrong.reopened",
        "wrong.commit",
        "wrong.commit;wrong.reopened",
        "wrong.commit",
        "wrong.reopened",
        "wrong.reopened",
        "wrong.reopened",
    ];
    let expected: String = ids
        .iter()
        .zip(v2_signals)
        .map(|(id, s)| format!(".beads/issues.jsonl,{id},{done},false,{s}\n"))
        .collect();
    assert_eq!(tasks, format!("input,id,completed,censored,signals\n{expected}"));
    // Version 2 reads `.beads/issues.jsonl` alone; version 3 the task files of `.beads` as one input.
    let input = std::cell::Cell::new(".beads/issues.jsonl");
    // A `wrong.commit` row's detail is its commit's subject.
    let subject = |task: &str| match task {
        "bd-body" => "fix: tidy the lexer",
        "bd-fix" => "fix(bd-fix): crash on empty input",
        "bd-move" => "Fix bd-move: implement export",
        "bd-renum" => "Fix bd-renum: cycle warnings",
        "bd-see" => "fix: lexer edge case (see bd-see)",
        _ => "",
    };
    let row = |task: &str, signal: &str, at: &str, commit: String, rule: &str, completed: &str| {
        let input = input.get();
        let detail = if signal == "wrong.commit" { subject(task) } else { "" };
        format!("{input},{task},{signal},2026-02-{at}T09:00:00Z,{commit},{rule},{completed},{detail}\n")
    };
    let small = |rule: &str| -> String {
        (1..=3)
            .map(|n| row(&format!("bd-small{n}"), "wrong.reopened", "08", c(8), rule, done))
            .collect()
    };
    assert_eq!(
        signals,
        [
            "input,task,signal,at,commit,excluded_by,completed,detail\n".to_owned(),
            row("bd-admin", "wrong.reopened", "09", c(9), "", done),
            row("bd-body", "wrong.commit", "13", c(13), "", done),
            row("bd-carry", "wrong.reopened", "06", c(6), "stale-overwrite", done),
            row("bd-carry", "wrong.reopened", "07", c(7), "", done),
            row("bd-fix", "wrong.commit", "15", c(15), "", done),
            row("bd-gen", "wrong.reopened", "11", c(11), "", done),
            row("bd-move", "wrong.commit", "04", c(4), "", done),
            row("bd-renum", "wrong.reopened", "03", c(3), "", done),
            row("bd-renum", "wrong.commit", "05", c(5), "", done),
            row("bd-see", "wrong.commit", "14", c(14), "", done),
            small(""),
        ]
        .concat()
    );

    // Version 3: the moved and the renumbered task are new tasks (the earlier ones left before their window
    // elapsed: not eligible); the new bd-move was closed by its own commit; what is left are bd-gen's reopen,
    // closed again with code, and the fix naming bd-fix in its subject.
    let (summary, tasks, signals) = p3_at(&fx, 3, "2026-06-01");
    input.set(".beads");
    let v3: String = [
        ("bd-admin", done, ""),
        ("bd-body", done, ""),
        ("bd-carry", done, ""),
        ("bd-fix", done, "wrong.commit"),
        ("bd-gen", done, "wrong.reopened"),
        ("bd-move", "2026-02-04T09:00:00Z", ""),
        ("bd-see", done, ""),
        ("bd-small1", done, ""),
        ("bd-small2", done, ""),
        ("bd-small3", done, ""),
    ]
    .iter()
    .map(|(id, completed, s)| format!(".beads,{id},{completed},false,{s}\n"))
    .collect();
    assert_eq!(tasks, format!("input,id,completed,censored,signals\n{v3}"));
    assert_eq!(
        signals,
        [
            "input,task,signal,at,commit,excluded_by,completed,detail\n".to_owned(),
            row("bd-admin", "wrong.reopened", "09", c(9), "administrative-reclose", done),
            row("bd-body", "wrong.commit", "13", c(13), "passing-mention", done),
            row("bd-carry", "wrong.reopened", "06", c(6), "stale-overwrite", done),
            row("bd-carry", "wrong.reopened", "07", c(7), "stale-carried", done),
            row("bd-fix", "wrong.commit", "15", c(15), "", done),
            row("bd-gen", "wrong.reopened", "11", c(11), "", done),
            row(
                "bd-move",
                "wrong.commit",
                "04",
                c(4),
                "implementing-commit",
                "2026-02-04T09:00:00Z"
            ),
            row("bd-see", "wrong.commit", "14", c(14), "passing-mention", done),
            small("bulk-reopens"),
        ]
        .concat()
    );
    let line = |prefix: &str| {
        summary
            .lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in\n{summary}"))
            .trim()
            .to_owned()
    };
    assert_eq!(
        line("removed"),
        "removed         2 tasks left the task file (2 of them ids reused by another task); 2 completed were removed before their window elapsed (left out)"
    );
    assert_eq!(
        line("base rate"),
        "base rate       2 of 10 = 20.0% [5.7%, 51.0%] (2 wrong, 0 right)"
    );
}

// ---------------------------------------------------------------------------------------------------------------
// P3 version 4 on a history with the artifacts version 3 counted (`tests/fixtures/task_history/artifacts_v4.sh`)

#[test]
fn version_four_sets_each_new_artifact_aside_task_by_task() {
    let fx = Fixture::build("artifacts_v4.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{}", 10 - n));
    let done = "2026-03-02T09:00:00Z";
    let row = |task: &str, signal: &str, at: &str, commit: String, rule: &str, detail: &str| {
        signal_row(task, signal, at, &commit, rule, done, detail)
    };
    let tasks_csv = |signals: [&str; 8]| {
        let ids = [
            "bd-back",
            "bd-gone",
            "bd-link",
            "bd-ok1",
            "bd-ok2",
            "bd-retitle",
            "bd-s1",
            "bd-s2",
        ];
        tasks_table(done, &ids, &signals)
    };
    let line = |summary: &str, prefix: &str| {
        summary
            .lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in\n{summary}"))
            .trim()
            .to_owned()
    };

    // Version 3 counts every one of them. bd-back and bd-link named other tasks from c3 to c6 (each split off and
    // left before its window elapsed), then their first tasks again, followed from c6 on as new tasks first seen
    // closed on 03-02: the fix of the other bd-back (c4) and the bug discovered from the other bd-link (c3) count
    // for them. bd-gone was in no task file when its fix landed (c5). bd-s2 was reset in a commit that wrote
    // bd-s1 from an older copy (bd-s1's reopen is stale), but that commit changed code too.
    let (summary, tasks, signals) = p3_at(&fx, 3, "2026-06-01");
    let v3_signals = [
        "wrong.commit",
        "wrong.commit",
        "wrong.follow-up",
        "wrong.reopened",
        "wrong.reopened",
        "wrong.commit",
        "",
        "wrong.reopened",
    ];
    assert_eq!(tasks, tasks_csv(v3_signals));
    // bd-retitle's fix, counted by both versions.
    let retitle_fix = row(
        "bd-retitle",
        "wrong.commit",
        "07",
        c(7),
        "",
        "fix(bd-retitle): escape the docs",
    );
    let v3_rows = [
        "input,task,signal,at,commit,excluded_by,completed,detail\n".to_owned(),
        row(
            "bd-back",
            "wrong.commit",
            "04",
            c(4),
            "",
            "Fix bd-back: implement export",
        ),
        row("bd-gone", "wrong.commit", "05", c(5), "", "fix(bd-gone): empty input"),
        row("bd-link", "wrong.follow-up", "03", c(3), "", "follow-up bd-fu"),
        row("bd-ok1", "wrong.reopened", "09", c(9), "", ""),
        row("bd-ok2", "wrong.reopened", "09", c(9), "", ""),
        retitle_fix.clone(),
        row("bd-s1", "wrong.reopened", "08", c(8), "stale-overwrite", ""),
        row("bd-s2", "wrong.reopened", "08", c(8), "", ""),
    ];
    assert_eq!(signals, v3_rows.concat());
    assert_eq!(
        line(&summary, "removed"),
        "removed         4 tasks left the task file (4 of them ids reused by another task); 3 completed were removed before their window elapsed (left out)"
    );
    assert_eq!(
        line(&summary, "base rate"),
        "base rate       7 of 8 = 87.5% [52.9%, 97.8%] (7 wrong, 0 right)"
    );
    assert!(
        !summary.contains("identity-changed") && !summary.contains("stale-reset"),
        "{summary}"
    );

    // Version 4: at each of those three signals the id named another task, or none (`identity-changed`); bd-s2's
    // reopen is part of the reset from an older copy (`stale-reset`; its move back to open on 03-10 is no reopen
    // either, the reset having left it open). Kept: the fix of bd-retitle, retitled after
    // its completion keeping its words, and the reopens of bd-ok1 and bd-ok2, two at once in a commit with code
    // but none of them stale.
    let (summary, tasks, signals) = p3_at(&fx, 4, "2026-06-01");
    assert_eq!(
        tasks,
        tasks_csv(["", "", "", "wrong.reopened", "wrong.reopened", "wrong.commit", "", ""])
    );
    assert_eq!(
        signals,
        [
            "input,task,signal,at,commit,excluded_by,completed,detail\n".to_owned(),
            row(
                "bd-back",
                "wrong.commit",
                "04",
                c(4),
                "identity-changed",
                "Fix bd-back: implement export"
            ),
            row(
                "bd-gone",
                "wrong.commit",
                "05",
                c(5),
                "identity-changed",
                "fix(bd-gone): empty input"
            ),
            row(
                "bd-link",
                "wrong.follow-up",
                "03",
                c(3),
                "identity-changed",
                "follow-up bd-fu"
            ),
            row("bd-ok1", "wrong.reopened", "09", c(9), "", ""),
            row("bd-ok2", "wrong.reopened", "09", c(9), "", ""),
            retitle_fix,
            row("bd-s1", "wrong.reopened", "08", c(8), "stale-overwrite", ""),
            row("bd-s2", "wrong.reopened", "08", c(8), "stale-reset", ""),
        ]
        .concat()
    );
    assert_eq!(
        line(&summary, "base rate"),
        "base rate       3 of 8 = 37.5% [13.7%, 69.4%] (3 wrong, 0 right)"
    );
    assert!(
        line(&summary, "excluded").contains("identity-changed 3")
            && line(&summary, "excluded").contains("stale-reset 1"),
        "{summary}"
    );
}

// P3 version 5 on a history with the artifacts version 4 counted (`tests/fixtures/task_history/artifacts_v5.sh`)

#[test]
fn version_five_sets_each_new_artifact_aside_task_by_task() {
    let fx = Fixture::build("artifacts_v5.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{}", 6 - n));
    let done = "2026-03-02T09:00:00Z";
    // A `wrong.commit` row's detail is its commit's subject.
    let row = |task: &str, signal: &str, at: &str, commit: String, rule: &str| {
        let detail = match (signal, task) {
            ("wrong.commit", "bd-late") => "fix(bd-late): handle empty input",
            ("wrong.commit", "bd-own") => "fix(bd-own): implement the parser",
            _ => "",
        };
        signal_row(task, signal, at, &commit, rule, done, detail)
    };
    let tasks_csv = |signals: [&str; 6]| {
        tasks_table(
            done,
            &["bd-copy", "bd-late", "bd-own", "bd-re", "bd-x1", "bd-x2"],
            &signals,
        )
    };
    let header = "input,task,signal,at,commit,excluded_by,completed,detail\n".to_owned();

    // Version 4 counts all four: bd-own's fix lands 18 days after the close by its committer time; bd-copy's reopen
    // is in a commit that changed code and wrote no stale version.
    let (summary, tasks, signals) = p3_at(&fx, 4, "2026-06-01");
    assert_eq!(
        tasks,
        tasks_csv([
            "wrong.reopened",
            "wrong.commit",
            "wrong.commit",
            "wrong.reopened",
            "",
            ""
        ])
    );
    assert_eq!(
        signals,
        [
            header.clone(),
            row("bd-copy", "wrong.reopened", "08", c(5), ""),
            row("bd-late", "wrong.commit", "05", c(3), ""),
            row("bd-own", "wrong.commit", "20", c(6), ""),
            row("bd-re", "wrong.reopened", "06", c(4), ""),
        ]
        .concat()
    );
    assert!(summary.contains("4 of 6 = 66.7%"), "{summary}");
    assert!(!summary.contains("landed-late"), "{summary}");

    // Version 5: bd-own's fix was authored ten seconds after the close (`implementing-commit`); bd-copy's reopen
    // came in a commit authored five days before it was committed (`landed-late`). Kept: the fix three days later
    // and the reopen in a commit committed when it was authored.
    let (summary, tasks, signals) = p3_at(&fx, 5, "2026-06-01");
    assert_eq!(tasks, tasks_csv(["", "wrong.commit", "", "wrong.reopened", "", ""]));
    assert_eq!(
        signals,
        [
            header,
            row("bd-copy", "wrong.reopened", "08", c(5), "landed-late"),
            row("bd-late", "wrong.commit", "05", c(3), ""),
            row("bd-own", "wrong.commit", "20", c(6), "implementing-commit"),
            row("bd-re", "wrong.reopened", "06", c(4), ""),
        ]
        .concat()
    );
    assert!(summary.contains("2 of 6 = 33.3%"), "{summary}");
    assert!(summary.contains("landed-late 1"), "{summary}");
}

// P3 version 6 on a history with follow-ups filed before the completion or during a reopen
// (`tests/fixtures/task_history/artifacts_v6.sh`)

#[test]
fn version_six_sets_follow_ups_of_work_not_closed_aside() {
    let fx = Fixture::build("artifacts_v6.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{}", 7 - n));
    let done = "2026-03-02T09:00:00Z";
    let row = |task: &str, signal: &str, at: &str, commit: String, rule: &str, detail: &str| {
        signal_row(task, signal, at, &commit, rule, done, detail)
    };
    let tasks_csv = |signals: [&str; 4]| tasks_table(done, &["bd-claim", "bd-comment", "bd-note", "bd-prio"], &signals);
    let header = "input,task,signal,at,commit,excluded_by,completed,detail\n".to_owned();
    let (reopened, follow_up) = ("wrong.reopened", "wrong.follow-up");
    let both = "wrong.follow-up;wrong.reopened";
    // Both versions count every reopen: each came in a commit that changed code, was closed again by another one,
    // and was committed when it was authored.
    let signals_of = |during: &str, imp: &str| {
        [
            header.clone(),
            row("bd-claim", reopened, "05", c(4), "", ""),
            row("bd-claim", follow_up, "10", c(7), "", "follow-up bd-later"),
            row("bd-comment", reopened, "06", c(5), "", ""),
            row("bd-note", reopened, "04", c(3), "", ""),
            row("bd-note", follow_up, "05", c(4), during, "follow-up bd-during"),
            row("bd-prio", reopened, "06", c(5), "", ""),
            row("bd-prio", follow_up, "10", c(1), imp, "follow-up bd-imp"),
        ]
        .concat()
    };

    // Version 5 counts every follow-up too: bd-imp by the creation time an import wrote (03-10).
    let (summary, tasks, signals) = p3_at(&fx, 5, "2026-06-01");
    assert_eq!(tasks, tasks_csv([both, reopened, both, both]));
    assert_eq!(signals, signals_of("", ""));
    assert!(summary.contains("4 of 4 = 100.0%"), "{summary}");
    assert!(!summary.contains("while-reopened"), "{summary}");

    // Version 6: bd-imp was in the task files before bd-prio's completion; bd-during was filed while bd-note was
    // open again (its reopen is the signal). bd-later, filed after bd-claim was closed again, counts.
    let (summary, tasks, signals) = p3_at(&fx, 6, "2026-06-01");
    assert_eq!(tasks, tasks_csv([both, reopened, reopened, reopened]));
    assert_eq!(signals, signals_of("while-reopened", "first-seen-earlier"));
    assert!(summary.contains("4 of 4 = 100.0%"), "{summary}");
    for rule in ["first-seen-earlier 1", "while-reopened 1"] {
        assert!(summary.contains(rule), "{rule}: {summary}");
    }
}

#[test]
fn version_seven_judges_a_follow_up_after_a_set_aside_reopen_on_its_own() {
    let fx = Fixture::build("artifacts_v7.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{}", 6 - n));
    let done = "2026-03-02T09:00:00Z";
    let row = |task: &str, signal: &str, at: &str, commit: &str, rule: &str, detail: &str| {
        signal_row(task, signal, at, commit, rule, done, detail)
    };
    let sync = c(3);
    let signals_of = |bulk_bug: &str| {
        let mut rows = vec![
            "input,task,signal,at,commit,excluded_by,completed,detail\n".to_owned(),
            row("bd-bulk", "wrong.reopened", "04", &sync, "bulk-commit", ""),
            row(
                "bd-bulk",
                "wrong.follow-up",
                "06",
                &c(5),
                bulk_bug,
                "follow-up bd-bulk-bug",
            ),
        ];
        rows.extend((1..=11).map(|n| row(&format!("bd-f{n:02}"), "wrong.reopened", "04", &sync, "bulk-commit", "")));
        rows.push(row(
            "bd-keep",
            "wrong.follow-up",
            "05",
            &c(4),
            "while-reopened",
            "follow-up bd-kept-bug",
        ));
        rows.push(row("bd-keep", "wrong.reopened", "05", &c(4), "", ""));
        rows.concat()
    };
    // Version 6: bd-bulk-bug was filed while bd-bulk was open again, so it is set aside with the reopen, which the
    // bulk-commit rule sets aside too: nothing of bd-bulk counts.
    let (summary, _, signals) = p3_at(&fx, 6, "2026-06-01");
    assert_eq!(signals, signals_of("while-reopened"));
    assert!(summary.contains("1 of 13 = 7.7%"), "{summary}");
    assert!(summary.contains("while-reopened 2"), "{summary}");
    // Version 7: the latest reopen before bd-bulk-bug is one the rules set aside, so the follow-up counts on its
    // own; bd-kept-bug still goes with bd-keep's kept reopen.
    let (summary, tasks, signals) = p3_at(&fx, 7, "2026-06-01");
    assert_eq!(signals, signals_of(""));
    assert!(summary.contains("2 of 13 = 15.4%"), "{summary}");
    assert!(summary.contains("while-reopened 1"), "{summary}");
    assert!(
        tasks.contains(&format!(".beads,bd-bulk,{done},false,wrong.follow-up\n")),
        "{tasks}"
    );
}

#[test]
fn version_eight_reports_follow_ups_in_task_files_and_never_counts_them() {
    let fx = Fixture::build("artifacts_v7.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{}", 6 - n));
    let done = "2026-03-02T09:00:00Z";
    let (summary, tasks, signals) = p3_at(&fx, 8, "2026-06-01");
    // bd-bulk-bug, which version 7 counts on its own, is kept by every earlier rule and then set aside; bd-kept-bug
    // stays `while-reopened` (the earlier rule names it first), and bd-keep's kept reopen still counts.
    assert!(
        signals.contains(&signal_row(
            "bd-bulk",
            "wrong.follow-up",
            "06",
            &c(5),
            "follow-up-set-aside",
            done,
            "follow-up bd-bulk-bug"
        )),
        "{signals}"
    );
    assert!(
        signals.contains(&signal_row(
            "bd-keep",
            "wrong.follow-up",
            "05",
            &c(4),
            "while-reopened",
            done,
            "follow-up bd-kept-bug"
        )),
        "{signals}"
    );
    assert!(
        signals.contains(&signal_row("bd-keep", "wrong.reopened", "05", &c(4), "", done, "")),
        "{signals}"
    );
    assert!(summary.contains("1 of 13 = 7.7%"), "{summary}");
    assert!(summary.contains("follow-up-set-aside 1"), "{summary}");
    assert!(summary.contains("while-reopened 1"), "{summary}");
    assert!(tasks.contains(&format!(".beads,bd-bulk,{done},false,\n")), "{tasks}");
    assert!(
        tasks.contains(&format!(".beads,bd-keep,{done},false,wrong.reopened\n")),
        "{tasks}"
    );
    // Version 7's file on the same history counts the follow-up (the test above).
    let (summary, ..) = p3_at(&fx, 7, "2026-06-01");
    assert!(summary.contains("2 of 13 = 15.4%"), "{summary}");
    assert!(!summary.contains("follow-up-set-aside"), "{summary}");
}

#[test]
fn version_nine_sets_aside_a_task_taken_up_seconds_after_its_close() {
    let fx = Fixture::build("artifacts_v9.sh");
    let claim = fx.rev("HEAD~1");
    let done = "2026-03-02T09:00:00Z";
    let row =
        |task: &str, rule: &str| format!(".beads,{task},wrong.reopened,2026-03-02T09:02:00Z,{claim},{rule},{done},\n");
    let (summary, tasks, signals) = p3_at(&fx, 9, "2026-06-01");
    // Updated 30 and 60 seconds after the closed_at they replace: set aside; 61 seconds: counted. Without a
    // closed_at the rule cannot measure, and the reopen counts. bd-released, claimed 20 seconds after its close and
    // then released to open, is open without a reopen: the release is no reopen either.
    for (task, rule) in [
        ("bd-claim", "claimed-at-close"),
        ("bd-edge", "claimed-at-close"),
        ("bd-keep", ""),
        ("bd-noclosed", ""),
        ("bd-released", "claimed-at-close"),
    ] {
        assert!(signals.contains(&row(task, rule)), "{task}: {signals}");
    }
    assert_eq!(signals.matches("wrong.reopened").count(), 5, "{signals}");
    assert_eq!(
        tasks,
        tasks_table(
            done,
            &["bd-claim", "bd-edge", "bd-keep", "bd-noclosed", "bd-released"],
            &["", "", "wrong.reopened", "wrong.reopened", ""]
        )
    );
    assert!(summary.contains("2 of 5 = 40.0%"), "{summary}");
    assert!(summary.contains("claimed-at-close 3"), "{summary}");
    // Version 8's file on the same history counts every reopen and has no such rule.
    let (summary, _, signals) = p3_at(&fx, 8, "2026-06-01");
    assert!(summary.contains("5 of 5 = 100.0%"), "{summary}");
    assert!(!summary.contains("claimed-at-close"), "{summary}");
    assert_eq!(signals.matches(&format!("{claim},,")).count(), 5, "{signals}");
}

#[test]
fn a_status_that_flaps_is_counted_and_named_in_the_verdict() {
    let fx = Fixture::build("flapping.sh");
    let (summary, tasks, signals) = p3_at(&fx, 9, "2026-06-01");
    // Every rule keeps the three reopens of bd-flap and the one of bd-once: the diagnostic changes no count.
    assert_eq!(signals.matches(",bd-flap,wrong.reopened,").count(), 3, "{signals}");
    assert_eq!(
        tasks,
        tasks_table(
            "2026-03-02T09:00:00Z",
            &["bd-calm", "bd-flap", "bd-once"],
            &["", "wrong.reopened", "wrong.reopened"]
        )
    );
    assert!(summary.contains("2 of 3 = 66.7%"), "{summary}");
    assert!(
        summary.contains(
            "  flapping        1 of the 2 tasks with a signal left a closed category 3 times or more within a day"
        ),
        "{summary}"
    );
    assert!(
        summary.contains(
            "is below the pre-registered minimum of 50 — but 1 of the 2 tasks with a signal flap (their status left a \
             closed category 3 times or more within a day), as statuses a tool syncs with another tracker do: read \
             p3-signals.csv before trusting it"
        ),
        "{summary}"
    );
    let report = std::fs::read_to_string(fx.tmp.path().join("v9-default/p3.md")).unwrap();
    assert!(
        report.contains(
            "| with a signal, their status flapping (left a closed category 3 times or more within a day, as a sync \
             tool writes it; counted all the same) | 1 |"
        ),
        "{report}"
    );
    // Version 10 sets bd-flap's three reopens aside; bd-once's stays.
    let (summary, _, signals) = p3_at(&fx, 10, "2026-06-01");
    assert_eq!(signals.matches(",bd-flap,wrong.reopened,").count(), 3, "{signals}");
    assert_eq!(signals.matches(",flapping,").count(), 3, "{signals}");
    assert!(summary.contains("1 of 3 = 33.3%"), "{summary}");
    // Two reopens within the day are no flapping.
    let fx = Fixture::build("artifacts_v9.sh");
    let (summary, ..) = p3_at(&fx, 9, "2026-06-01");
    assert!(!summary.contains("flap"), "{summary}");
}

#[test]
fn a_reopen_counted_after_a_set_aside_one_names_it() {
    let fx = Fixture::build("artifacts_claim.sh");
    let (sync, claim) = (fx.rev("HEAD~2"), fx.rev("HEAD~1"));
    let (summary, _, signals) = p3_at(&fx, 7, "2026-06-01");
    let done = "2026-03-02T09:00:00Z";
    // The sync's reopen is set aside with the other eleven; the task stays closed for the walk, so taking it up is
    // the reopen counted, and its detail points at where the reopen began.
    let detail = format!("after a reopen set aside (bulk-commit) in {}", &sync[..12]);
    for row in [
        signal_row("bd-claim", "wrong.reopened", "05", &claim, "", done, &detail),
        signal_row("bd-claim", "wrong.reopened", "04", &sync, "bulk-commit", done, ""),
        signal_row("bd-f01", "wrong.reopened", "04", &sync, "bulk-commit", done, ""),
    ] {
        assert!(signals.contains(&row), "{row}: {signals}");
    }
    assert!(summary.contains("1 of 12 = 8.3%"), "{summary}");
}

/// The error of `phase0 p3 --repo` on the fixture (reading the history of `history_rev`, default `HEAD`).
fn p3_error(fx: &Fixture, history_rev: Option<&str>) -> String {
    use pipeline::commands::p3::{P3Args, run};
    run(&P3Args {
        format: "auto".into(),
        out: fx.tmp.path().join("error"),
        repo: Some(fx.root.clone()),
        history_rev: history_rev.map(str::to_owned),
        ..P3Args::default()
    })
    .unwrap_err()
    .to_string()
}

/// `phase0 p3 --repo` on the sync-branch fixture, as of 2026-06-01 (after every window).
fn p3_on_branch(fx: &Fixture, version: u32, history_rev: Option<&str>) -> (String, String, String) {
    p3_at_rev(fx, version, "2026-06-01", history_rev)
}

#[test]
fn the_task_files_are_read_from_the_sync_branch_beads_commits_them_to() {
    let fx = Fixture::build("sync_branch.sh");
    let sync = |n: usize| fx.rev(&format!("beads-sync~{n}"));
    let done = "2026-03-02T09:00:00Z";
    // The checked-out branch holds the task file as first written; its history is on `beads-sync`.
    let (summary, tasks, signals) = p3_on_branch(&fx, 8, None);
    assert!(
        summary.contains(
            "task file       .beads on refs/heads/beads-sync (sync branch of .beads/config.yaml): 4 versions in 4 \
             commits, none skipped"
        ),
        "{summary}"
    );
    assert_eq!(tasks, tasks_table(done, &["bd-1", "bd-2"], &["", ""]));
    // The reopen is read; re-closed with only task-file commits in between on that branch (code lands on main),
    // the administrative-reclose rule sets it aside, as it reads the branch's own commits.
    assert_eq!(
        signals,
        format!(
            "input,task,signal,at,commit,excluded_by,completed,detail\n{}",
            signal_row(
                "bd-1",
                "wrong.reopened",
                "05",
                &sync(1),
                "administrative-reclose",
                done,
                ""
            )
        )
    );
    // The report says so.
    assert!(
        summary.contains(
            "  sync branch     administrative-reclose reads the branch's own commits, which change only the task \
             files: every reopen closed again there is set aside (docs/p3.md)\n"
        ),
        "{summary}"
    );
    let markdown = std::fs::read_to_string(fx.tmp.path().join("v8-default/p3.md")).unwrap();
    assert!(
        markdown.contains("`administrative-reclose`\nsees no code commit between a reopen and its close there"),
        "{markdown}"
    );
    // Under version 2 (no such rule) the same reopen counts, and the line is not written.
    let (summary, _, signals) = p3_on_branch(&fx, 2, None);
    assert!(
        !summary.contains("administrative-reclose reads the branch"),
        "{summary}"
    );
    assert!(summary.contains("1 of 2 = 50.0%"), "{summary}");
    assert!(
        signals.ends_with(&format!(
            ".beads/issues.jsonl,bd-1,wrong.reopened,2026-03-05T09:00:00Z,{},,{done},\n",
            sync(1)
        )),
        "{signals}"
    );
    // --history-rev reads the branch it names: on main nothing was ever closed.
    let (summary, tasks, _) = p3_on_branch(&fx, 8, Some("HEAD"));
    assert!(
        summary.contains("task file       .beads: 1 version in 2 commits, none skipped"),
        "{summary}"
    );
    assert!(summary.contains("0 of 0"), "{summary}");
    assert_eq!(tasks, "input,id,completed,censored,signals\n");
    // A sync branch created and never synced holds no task file: HEAD's are read, and the line says why.
    let empty_tree = fx.git(&["hash-object", "-w", "-t", "tree", "/dev/null"]);
    let orphan = fx.git(&[
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@example.com",
        "commit-tree",
        empty_tree.trim(),
        "-m",
        "Create the sync branch",
    ]);
    fx.git(&["branch", "-f", "beads-sync", orphan.trim()]);
    let (summary, ..) = p3_on_branch(&fx, 8, None);
    assert!(
        summary.contains("task file       .beads: 1 version in 2 commits, none skipped"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "sync branch     beads-sync (named in .beads/config.yaml) holds no task file: HEAD was read; fetch the \
             branch or give --history-rev"
        ),
        "{summary}"
    );
    // A clone without the branch reads HEAD and says why.
    fx.git(&["branch", "-D", "beads-sync"]);
    let (summary, ..) = p3_on_branch(&fx, 8, None);
    assert!(
        summary.contains(
            "sync branch     beads-sync (named in .beads/config.yaml) is not in this clone: HEAD was read; fetch the \
             branch or give --history-rev"
        ),
        "{summary}"
    );
}

#[test]
fn task_files_that_left_git_for_dolt_end_the_observation_there() {
    let fx = Fixture::build("dolt.sh");
    let moved = fx.rev("HEAD~1");
    // The task file is deleted when beads moves to Dolt: the report says so, and a task is eligible only when its
    // window ended while the file was kept (bd-3, closed ten days before the move, is not; the reopen of bd-1 counts).
    let (summary, tasks, _) = p3_on_branch(&fx, 8, None);
    assert!(
        summary.contains(&format!(
            "  left git        the task files are in no commit since {} (2026-04-20T09:00:00Z); beads keeps its tasks \
             in Dolt (.beads/metadata.json), so later changes are not seen\n",
            &moved[..9]
        )),
        "{summary}"
    );
    assert!(
        summary.contains(
            "  removed         3 tasks left the task file (0 of them ids reused by another task); 1 completed were \
             removed before their window elapsed (left out)\n"
        ),
        "{summary}"
    );
    assert!(summary.contains("1 of 2 = 50.0%"), "{summary}");
    let done = "2026-03-02T09:00:00Z";
    assert_eq!(tasks, tasks_table(done, &["bd-1", "bd-2"], &["wrong.reopened", ""]));
    let markdown = std::fs::read_to_string(fx.tmp.path().join("v8-default/p3.md")).unwrap();
    assert!(
        markdown.contains(&format!(
            "| left git | the task files are in no commit since `{moved}` (2026-04-20T09:00:00Z); \
             `.beads/metadata.json` names beads' Dolt backend, which keeps the tasks outside git: later changes are \
             not seen; its tasks are as last seen, and left the task file then (eligible only if their window elapsed \
             before) |"
        )),
        "{markdown}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx.tmp.path().join("v8-default/p3.json")).unwrap()).unwrap();
    assert_eq!(
        json.pointer("/report/task_files/deleted"),
        Some(&serde_json::json!({"commit": moved, "time": "2026-04-20T09:00:00Z", "dolt": true}))
    );
    // Read up to the commit before the move, nothing left git and bd-3's window counts.
    let (summary, ..) = p3_on_branch(&fx, 8, Some("HEAD~2"));
    assert!(!summary.contains("left git"), "{summary}");
    assert!(summary.contains("1 of 3 = 33.3%"), "{summary}");
    // A beads that never wrote a task file to git: the error says where it looked and why there is none.
    assert_eq!(
        p3_error(&fx, Some("dolt-only")),
        format!(
            "{}: no task file: neither \".beads/\" (issues.jsonl, beads.jsonl, bd.jsonl) nor \"data/\" (its *.jsonl \
             files) is in any commit of the first-parent history of dolt-only ({}); name the file with --data-dir; \
             .beads/metadata.json names the \"dolt\" backend: this beads keeps its tasks in a Dolt database, not in \
             a file in git. Read an export instead (`bd export -o tasks.jsonl`, then `phase0 p3 tasks.jsonl`: one \
             snapshot, so reopens before it are not seen), or let beads write .beads/issues.jsonl into every commit \
             from now on (its `export.auto` setting)",
            fx.root.display(),
            fx.rev("dolt-only")
        )
    );
}

#[test]
fn creation_times_a_fraction_of_a_second_apart_name_the_same_task() {
    let fx = Fixture::build("created_seconds.sh");
    // Version 10 takes the dropped fraction (09:00:00.812 -> 09:00:00) with the retitling for an id reuse: the same
    // work counts twice, as bd-keep~1 and as the bd-keep that inherited its close.
    let (summary, tasks, _) = p3_at(&fx, 10, "2026-06-01");
    assert_eq!(
        tasks,
        tasks_table(
            "2026-03-02T09:00:00Z",
            &["bd-keep", "bd-keep~1", "bd-new~1"],
            &["", "", ""]
        )
    );
    assert!(
        summary.contains("removed         2 tasks left the task file (2 of them ids reused by another task)"),
        "{summary}"
    );
    // Version 11: less than a second apart is the same creation; bd-new's id, taken by a task created a month
    // later, is still reused.
    let (summary, tasks, _) = p3_at(&fx, 11, "2026-06-01");
    assert_eq!(
        tasks,
        tasks_table("2026-03-02T09:00:00Z", &["bd-keep", "bd-new~1"], &["", ""])
    );
    assert!(
        summary.contains("removed         1 tasks left the task file (1 of them ids reused by another task)"),
        "{summary}"
    );
    assert!(summary.contains("0 of 2 = 0.0%"), "{summary}");
}

#[test]
fn the_creation_time_tolerance_is_below_the_given_seconds() {
    use pipeline::scan::task_history::{IdentityRule, another_task};
    let at = |s: &str| -> jiff::Timestamp { s.parse().unwrap() };
    let first = ("Write the installer".to_owned(), Some(at("2026-03-01T09:00:00.999Z")));
    let rule = IdentityRule {
        title_overlap_below: None,
        created_apart_seconds: Some(1),
    };
    let retitled = "Write the Acme installer";
    assert!(!another_task(&first, retitled, Some(at("2026-03-01T09:00:00Z")), rule));
    assert!(!another_task(
        &first,
        retitled,
        Some(at("2026-03-01T09:00:01.998Z")),
        rule
    ));
    assert!(another_task(
        &first,
        retitled,
        Some(at("2026-03-01T09:00:01.999Z")),
        rule
    ));
    assert!(another_task(
        &first,
        retitled,
        Some(at("2026-03-01T08:59:59.999Z")),
        rule
    ));
    // Without the tolerance (versions before 11), any difference is a change; an unchanged title never is.
    assert!(another_task(
        &first,
        retitled,
        Some(at("2026-03-01T09:00:00Z")),
        IdentityRule::default()
    ));
    assert!(!another_task(
        &first,
        "Write the installer",
        Some(at("2026-03-05T09:00:00Z")),
        rule
    ));
}

/// The sensitivity lines (issue 17): on the artifacts fixture every would-be signal of the bulk-flipped, stale,
/// reverted and implementing tasks is set aside, and the summary says how many of those tasks would have to be
/// genuine before the verdict changes; `counted` says how many counted ones would have to be artifacts.
#[test]
fn the_summary_says_how_far_the_verdict_rests_on_the_rules() {
    let fx = Fixture::build("artifacts.sh");
    let (summary, _, _) = p3_on(&fx, 11);
    let lines: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with("  set aside") || l.starts_with("  counted") || l.starts_with("  base rate"))
        .collect();
    // Below the pre-registered 50 eligible tasks the verdict is INCONCLUSIVE whatever the count, so nothing set aside
    // can move it and no counted signal can either (no `counted` line).
    assert_eq!(
        lines,
        [
            "  base rate       1 of 19 = 5.3% [0.9%, 24.6%] (1 wrong, 0 right)",
            "  set aside       18 eligible tasks have only set-aside signals; the verdict stays INCONCLUSIVE even if \
             all of them are genuine"
        ]
    );
}

/// `phase0 p3 --repo … audit`: each signal on the sheet shows the subject of the commit that shows it, unless its
/// detail already is that subject (a `wrong.commit`), and each task its title.
#[test]
fn an_audit_sheet_from_a_repository_shows_each_signals_commit_subject() {
    use pipeline::commands::p3::{P3Args, write_audit};
    let fx = Fixture::build("artifacts.sh");
    let c = |n: usize| fx.rev(&format!("HEAD~{n}"));
    let prereg = fx.tmp.path().join("p3-v2.toml");
    std::fs::write(&prereg, include_str!("data/p3-v2.toml")).unwrap();
    let sheet = fx.tmp.path().join("audit.csv");
    let args = P3Args {
        format: "auto".into(),
        out: fx.tmp.path().join("reports"),
        as_of: Some("2026-06-01".into()),
        repo: Some(fx.root.clone()),
        prereg: Some(prereg),
        ..P3Args::default()
    };
    write_audit(&args, Some(100), &sheet).unwrap();
    let text = std::fs::read_to_string(&sheet).unwrap();
    let row = |task: &str| {
        text.lines()
            .find(|l| l.contains(&format!(",{task},")))
            .unwrap_or_else(|| panic!("{task} not on the sheet:\n{text}"))
            .to_owned()
    };
    assert!(
        row("bd-luso").contains(&format!(
            ",wrong.reopened 2026-01-06T09:00:00Z {} (subject: bd sync: from an older clone; reopen bd-luso),",
            c(11)
        )),
        "{text}"
    );
    let later = row("bd-later");
    assert!(
        later.contains(&format!(
            "wrong.commit 2026-01-10T09:00:00Z {} fix: bd-later breaks on empty input; reopen bd-b01..bd-b11",
            c(6)
        )) && !later.contains("(subject:"),
        "{later}"
    );
    assert!(
        row("bd-luso").starts_with(".beads/issues.jsonl,bd-luso,Task bd-luso,counted,"),
        "{text}"
    );
}
