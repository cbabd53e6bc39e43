//! The P2 git scanner against the real `git` binary. Fixtures are built by the scripts in `tests/fixtures/git/`
//! in a tempdir with an isolated git environment, and every value the scanner reports is compared, commit by
//! commit, with what git prints for the same commit; each test also pins specific values.

mod common;

use common::isolated;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pipeline::scan::commits::{
    CommitDiff, CommitRow, DiffDetail, DiffRequest, FileChange, FileDiff, ObjectId, Trailer, evidence_hash,
};
use pipeline::scan::git::{self, GitScanError, HeadState, History, WalkOptions};

// ---------------------------------------------------------------------------------------------------------------
// Fixtures and the git binary

fn run(mut cmd: Command) -> Vec<u8> {
    let out = cmd.output().expect("run a command");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A repository built by a fixture script in a tempdir (removed on drop).
struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Fixture {
    fn build(script: &str) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/git")
            .join(script);
        let mut cmd = isolated("bash", &root, &home);
        cmd.arg(script).arg(&root);
        run(cmd);
        Fixture { _tmp: tmp, root, home }
    }

    fn path(&self, sub: &str) -> PathBuf {
        if sub.is_empty() {
            self.root.clone()
        } else {
            self.root.join(sub)
        }
    }

    fn git<I, S>(&self, sub: &str, args: I) -> Vec<u8>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = isolated("git", &self.path(sub), &self.home);
        cmd.args(args);
        run(cmd)
    }

    fn rev(&self, sub: &str, rev: &str) -> ObjectId {
        let out = self.git(sub, ["rev-parse", "--verify", rev]);
        ObjectId::from_hex(out.trim_ascii()).unwrap()
    }

    fn open(&self, sub: &str) -> gix::ThreadSafeRepository {
        git::open(&self.path(sub)).unwrap()
    }
}

fn oid(hex: &[u8]) -> ObjectId {
    ObjectId::from_hex(hex).unwrap_or_else(|_| panic!("not an object id: {:?}", String::from_utf8_lossy(hex)))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One commit as `git log` shows it.
#[derive(Debug)]
struct GitCommit {
    id: ObjectId,
    parents: Vec<ObjectId>,
    author_time: i64,
    commit_time: i64,
    subject: String,
    body: String,
    trailers: Vec<Trailer>,
}

/// `git log <args>` in its default order, parsed.
fn git_log(fx: &Fixture, sub: &str, args: &[&str]) -> Vec<GitCommit> {
    let format = "--format=tformat:%H%x00%P%x00%at%x00%ct%x00%s%x00%b%x00\
                  %(trailers:only,unfold,separator=%x1f,key_value_separator=%x1e)%x01";
    let mut all = vec!["log", format];
    all.extend_from_slice(args);
    let out = fx.git(sub, &all);
    out.split_str_all(b"\x01\n")
        .map(|record| {
            let fields: Vec<&[u8]> = record.split(|&b| b == 0).collect();
            assert_eq!(fields.len(), 7, "{:?}", lossy(record));
            GitCommit {
                id: oid(fields[0]),
                parents: fields[1]
                    .split(|&b| b == b' ')
                    .filter(|p| !p.is_empty())
                    .map(oid)
                    .collect(),
                author_time: lossy(fields[2]).parse().unwrap(),
                commit_time: lossy(fields[3]).parse().unwrap(),
                subject: lossy(fields[4]),
                body: lossy(fields[5]),
                trailers: fields[6]
                    .split(|&b| b == 0x1f)
                    .filter(|t| !t.is_empty())
                    .map(|t| {
                        let (token, value) = t.split_at(t.iter().position(|&b| b == 0x1e).unwrap());
                        Trailer {
                            token: lossy(token),
                            value: lossy(&value[1..]),
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

trait SplitAll {
    fn split_str_all<'a>(&'a self, sep: &'a [u8]) -> Box<dyn Iterator<Item = &'a [u8]> + 'a>;
}

impl SplitAll for Vec<u8> {
    /// Splits on `sep`, dropping a trailing empty piece.
    fn split_str_all<'a>(&'a self, sep: &'a [u8]) -> Box<dyn Iterator<Item = &'a [u8]> + 'a> {
        let mut rest: &[u8] = self;
        Box::new(std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            match rest.windows(sep.len()).position(|w| w == sep) {
                Some(pos) => {
                    let piece = &rest[..pos];
                    rest = &rest[pos + sep.len()..];
                    Some(piece)
                }
                None => Some(std::mem::take(&mut rest)),
            }
        }))
    }
}

/// The arguments selecting a commit's diff the way the brief defines it: against the first parent, a root (or
/// shallow boundary) commit with `git show`.
fn diff_command(row_parents: &[ObjectId], id: ObjectId, options: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    if row_parents.is_empty() {
        args.extend(["show".into(), "--format=".into(), "--no-renames".into()]);
        args.extend(options.iter().map(|s| s.to_string()));
        args.push(id.to_string());
    } else {
        args.extend(["diff".into(), "--no-renames".into()]);
        args.extend(options.iter().map(|s| s.to_string()));
        args.push(format!("{id}^1"));
        args.push(id.to_string());
    }
    args
}

fn nul_fields(out: &[u8]) -> Vec<&[u8]> {
    out.split(|&b| b == 0).filter(|f| !f.is_empty()).collect()
}

/// `--name-only -z`: the paths, as git lists them.
fn git_paths(fx: &Fixture, sub: &str, parents: &[ObjectId], id: ObjectId) -> Vec<String> {
    let out = fx.git(sub, diff_command(parents, id, &["--name-only", "-z"]));
    nul_fields(&out).into_iter().map(lossy).collect()
}

/// One entry of `--raw -z --no-abbrev`.
#[derive(Debug)]
struct RawEntry {
    raw_path: Vec<u8>,
    old_mode: String,
    new_mode: String,
    old_id: String,
    new_id: String,
    status: u8,
}

fn git_raw(fx: &Fixture, sub: &str, parents: &[ObjectId], id: ObjectId) -> BTreeMap<String, RawEntry> {
    let out = fx.git(sub, diff_command(parents, id, &["--raw", "-z", "--no-abbrev"]));
    let fields = nul_fields(&out);
    fields
        .chunks(2)
        .map(|pair| {
            let meta: Vec<&str> = std::str::from_utf8(pair[0])
                .unwrap()
                .trim_start_matches(':')
                .split(' ')
                .collect();
            (
                lossy(pair[1]),
                RawEntry {
                    raw_path: pair[1].to_vec(),
                    old_mode: meta[0].into(),
                    new_mode: meta[1].into(),
                    old_id: meta[2].into(),
                    new_id: meta[3].into(),
                    status: meta[4].as_bytes()[0],
                },
            )
        })
        .collect()
}

/// `--numstat -z`: `None` for binary files (`-\t-`).
fn git_numstat(fx: &Fixture, sub: &str, parents: &[ObjectId], id: ObjectId) -> BTreeMap<String, Option<(u32, u32)>> {
    let out = fx.git(sub, diff_command(parents, id, &["--numstat", "-z"]));
    nul_fields(&out).into_iter().map(parse_numstat).collect()
}

/// A `--numstat` entry: the path and `(added, removed)`, `None` for a binary file.
type Numstat = (String, Option<(u32, u32)>);

fn parse_numstat(field: &[u8]) -> Numstat {
    let mut parts = field.splitn(3, |&b| b == b'\t');
    let (added, removed, path) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let counts = (added != b"-").then(|| (lossy(added).parse().unwrap(), lossy(removed).parse().unwrap()));
    (lossy(path.trim_ascii_start()), counts)
}

/// The added and removed lines of one file's `-U0` patch, hashed. The pathspec also matches a directory of the
/// same name, so only the section whose `a/` or `b/` name is the path itself is read.
fn git_line_hashes(fx: &Fixture, parents: &[ObjectId], id: ObjectId, raw_path: &[u8]) -> (Vec<u64>, Vec<u64>) {
    let mut args: Vec<&OsStr> = ["-c", "core.quotePath=false", "--literal-pathspecs"]
        .map(OsStr::new)
        .to_vec();
    let command = diff_command(parents, id, &["-U0", "--no-color"]);
    args.extend(command.iter().map(OsStr::new));
    args.push(OsStr::new("--"));
    args.push(OsStr::from_bytes(raw_path));
    let out = fx.git("", args);
    let old_name = [b"--- a/".as_slice(), raw_path].concat();
    let new_name = [b"+++ b/".as_slice(), raw_path].concat();
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    let (mut in_hunks, mut selected) = (false, false);
    for line in out.split(|&b| b == b'\n') {
        if line.starts_with(b"diff --git ") {
            (in_hunks, selected) = (false, false);
        } else if !in_hunks && (line == old_name.as_slice() || line == new_name.as_slice()) {
            selected = true;
        } else if line.starts_with(b"@@") {
            in_hunks = true;
        } else if in_hunks && selected && line.first() == Some(&b'+') {
            added.push(evidence_hash(&line[1..]));
        } else if in_hunks && selected && line.first() == Some(&b'-') {
            removed.push(evidence_hash(&line[1..]));
        }
    }
    (added, removed)
}

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v
}

fn by_subject<'a>(history: &'a History, subject: &str) -> &'a CommitRow {
    history
        .commits
        .iter()
        .find(|c| c.subject == subject)
        .unwrap_or_else(|| panic!("no commit {subject:?}"))
}

fn files(diff: &CommitDiff) -> Vec<(&str, FileChange)> {
    diff.files.iter().map(|f| (f.path.as_str(), f.change)).collect()
}

fn one_diff(repo: &gix::ThreadSafeRepository, id: ObjectId, detail: DiffDetail) -> CommitDiff {
    git::diffs(repo, &[id], detail).unwrap().pop().unwrap()
}

fn file<'a>(diff: &'a CommitDiff, path: &str) -> &'a FileDiff {
    diff.files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path} in {diff:?}"))
}

// ---------------------------------------------------------------------------------------------------------------
// Walk

#[test]
fn walk_matches_git_log_commit_by_commit() {
    let fx = Fixture::build("history.sh");
    let repo = fx.open("");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    let expected = git_log(&fx, "", &[]);

    assert_eq!(history.rev, "HEAD");
    assert_eq!(history.head, HeadState::Branch("main".into()));
    assert_eq!(history.tip, Some(fx.rev("", "HEAD")));
    assert!(!history.shallow);
    assert_eq!(history.commits.len(), 23);
    assert_eq!(history.non_utf8_messages, 2, "the raw-byte message and the Latin-1 one");
    // Same commits, same order (newest first; the tie between main and topic in walk order: first parent first).
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    let git_ids: Vec<ObjectId> = expected.iter().map(|c| c.id).collect();
    assert_eq!(ids, git_ids);
    for (row, git) in history.commits.iter().zip(&expected) {
        assert_eq!(row.parents, git.parents, "{}", row.id);
        assert_eq!(row.author_time, git.author_time, "{}", row.id);
        assert_eq!(row.commit_time, git.commit_time, "{}", row.id);
        assert_eq!(row.subject, git.subject, "{}", row.id);
        assert_eq!(row.body, git.body, "{}", row.id);
    }
    assert!(history.commits.windows(2).all(|w| w[0].commit_time >= w[1].commit_time));

    // Specific values.
    let root = history.commits.last().unwrap();
    assert_eq!((root.subject.as_str(), root.body.as_str()), ("Initial commit", ""));
    assert_eq!((root.author_time, root.commit_time), (1_700_003_000, 1_700_003_600));
    assert!(root.parents.is_empty());
    let tie = history
        .commits
        .iter()
        .position(|c| c.subject == "Main: tied time")
        .unwrap();
    assert_eq!(tie, 7);
    assert_eq!(history.commits[tie + 1].subject, "Topic: second (tied time)");
    assert_eq!(history.commits[tie].commit_time, history.commits[tie + 1].commit_time);
    let two_lines = by_subject(&history, "Make the tools executable and tidy the generator");
    assert_eq!(two_lines.body, "Body after a two-line subject.\n");
    let indented = by_subject(&history, "  Leading blank lines and an indented subject");
    assert_eq!(indented.body, "Trailing spaces follow.   \n   \n");
    assert_eq!(by_subject(&history, "Octopus merge").parents.len(), 4);
    assert_eq!(by_subject(&history, "Merge branch topic").parents.len(), 2);
}

#[test]
fn commit_graph_is_used_when_present() {
    let fx = Fixture::build("history.sh");
    fx.git("", ["commit-graph", "write", "--reachable"]);
    assert!(fx.path(".git/objects/info/commit-graph").is_file());
    // One commit more, which the graph does not know: the walk mixes graph and object parents.
    let tree = fx.git("", ["rev-parse", "HEAD^{tree}"]);
    let head = fx.rev("", "HEAD").to_string();
    let mut cmd = isolated("git", &fx.root, &fx.home);
    cmd.args([
        "commit-tree",
        "-p",
        &head,
        "-m",
        "After the graph",
        lossy(tree.trim_ascii()).as_str(),
    ])
    .env("GIT_AUTHOR_NAME", "Ada Author")
    .env("GIT_AUTHOR_EMAIL", "ada@example.com")
    .env("GIT_COMMITTER_NAME", "Cy Committer")
    .env("GIT_COMMITTER_EMAIL", "cy@example.com")
    .env("GIT_AUTHOR_DATE", "1800000000 +0000")
    .env("GIT_COMMITTER_DATE", "1800000000 +0000");
    let new = lossy(run(cmd).trim_ascii());
    fx.git("", ["update-ref", "refs/heads/main", &new]);

    let history = git::walk(&fx.open(""), &WalkOptions::default()).unwrap();
    let expected = git_log(&fx, "", &[]);
    assert_eq!(history.commits.len(), 24);
    assert_eq!(history.commits[0].subject, "After the graph");
    for (row, git) in history.commits.iter().zip(&expected) {
        assert_eq!(
            (row.id, &row.parents, row.commit_time),
            (git.id, &git.parents, git.commit_time)
        );
        assert_eq!(
            (&row.subject, &row.body, &row.trailers),
            (&git.subject, &git.body, &git.trailers)
        );
    }
    let first_parent = WalkOptions {
        first_parent: true,
        ..Default::default()
    };
    let history = git::walk(&fx.open(""), &first_parent).unwrap();
    let expected = git_log(&fx, "", &["--first-parent"]);
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    assert_eq!(ids, expected.iter().map(|c| c.id).collect::<Vec<_>>());
    assert_eq!(ids.len(), 19);
}

/// With a commit-graph, the walk reads the commits it knows in chunks beside the traversal; the rows and their
/// order must be exactly those of the walk that reads every commit object, on a history of several chunks.
#[test]
fn walk_with_a_commit_graph_equals_the_walk_without() {
    let fx = Fixture::build("wide.sh");
    let options = [
        WalkOptions::default(),
        WalkOptions {
            first_parent: true,
            ..Default::default()
        },
    ];
    let without: Vec<History> = options
        .iter()
        .map(|options| git::walk(&fx.open(""), options).unwrap())
        .collect();
    assert_eq!(without[0].commits.len(), 3200);
    assert_eq!(without[1].commits.len(), 2200);
    let ids: Vec<ObjectId> = without[0].commits.iter().map(|c| c.id).collect();
    let expected: Vec<ObjectId> = git_log(&fx, "", &[]).iter().map(|c| c.id).collect();
    assert_eq!(ids, expected);

    fx.git("", ["commit-graph", "write", "--reachable"]);
    assert!(fx.path(".git/objects/info/commit-graph").is_file());
    for (options, without) in options.iter().zip(&without) {
        let with = git::walk(&fx.open(""), options).unwrap();
        assert!(with == *without, "first_parent: {}", options.first_parent);
    }
}

/// Commits remembered from a run on an older revision (P2's commit cache) are not read again, and the history is
/// exactly the full walk's: the same rows in the same order, ties included, with each walk option.
#[test]
fn a_walk_remembering_an_older_history_equals_the_full_walk() {
    struct Remembered(Vec<CommitRow>, std::collections::HashMap<ObjectId, u32>);
    impl git::RememberedCommits for Remembered {
        fn find(&self, id: &ObjectId) -> Option<(u32, i64, &[ObjectId])> {
            let row = &self.0[*self.1.get(id)? as usize];
            Some((*self.1.get(id)?, row.commit_time, row.parents.as_slice()))
        }
        // Copied, not moved: the same commits serve every walk below.
        fn take_row(&mut self, slot: u32) -> (CommitRow, bool) {
            (self.0[slot as usize].clone(), false)
        }
    }
    let fx = Fixture::build("wide.sh");
    let older = WalkOptions {
        rev: Some("main~37".into()),
        ..Default::default()
    };
    let rows = git::walk(&fx.open(""), &older).unwrap().commits;
    let index = rows
        .iter()
        .enumerate()
        .map(|(slot, row)| (row.id, slot as u32))
        .collect();
    let mut remembered = Remembered(rows, index);
    assert_eq!(remembered.0.len(), 3143);
    let options = [
        WalkOptions::default(),
        WalkOptions {
            first_parent: true,
            ..Default::default()
        },
        WalkOptions {
            since: Some(1_700_000_000 + 60 * 150),
            until: Some(1_700_000_000 + 60 * 199),
            ..Default::default()
        },
    ];
    // Without a commit-graph, then with one (the commits it knows are read in chunks beside the traversal).
    for graph in [false, true] {
        if graph {
            fx.git("", ["commit-graph", "write", "--reachable"]);
        }
        for (options, new) in options.iter().zip([57, 37, 41]) {
            let full = git::walk(&fx.open(""), options).unwrap();
            let (mut walked, slots) = git::walk_remembering(&fx.open(""), options, &mut remembered).unwrap();
            let read = walked.commits.len() as u64 - walked.remembered;
            assert_eq!(read, new, "{options:?}, graph {graph}");
            // Each listed commit's slot: where it came from among the remembered ones, or none for a commit read.
            assert_eq!(slots.len(), walked.commits.len());
            assert_eq!(
                slots.iter().filter(|&&slot| slot == git::NOT_REMEMBERED).count() as u64,
                new
            );
            for (row, &slot) in walked
                .commits
                .iter()
                .zip(&slots)
                .filter(|(_, slot)| **slot != git::NOT_REMEMBERED)
            {
                assert_eq!(remembered.0[slot as usize].id, row.id);
            }
            walked.remembered = 0;
            assert!(walked == full, "{options:?}, graph {graph}");
        }
    }
    // The older revision itself: nothing is read.
    let (first, _) = git::walk_remembering(&fx.open(""), &older, &mut remembered).unwrap();
    assert_eq!((first.remembered, first.commits.len()), (3143, 3143));
}

#[test]
fn trailers_match_git() {
    let fx = Fixture::build("history.sh");
    let history = git::walk(&fx.open(""), &WalkOptions::default()).unwrap();
    let expected = git_log(&fx, "", &[]);
    for (row, git) in history.commits.iter().zip(&expected) {
        assert_eq!(row.trailers, git.trailers, "{} {:?}", row.id, row.subject);
    }
    let trailers = |subject: &str| -> Vec<(String, String)> {
        by_subject(&history, subject)
            .trailers
            .iter()
            .map(|t| (t.token.clone(), t.value.clone()))
            .collect()
    };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter().map(|(t, v)| (t.to_string(), v.to_string())).collect()
    };
    assert_eq!(
        trailers("Fix the parser on long input"),
        pairs(&[
            ("Signed-off-by", "Ada Author <ada@example.com>"),
            ("Fixes", "0123456789ab (\"Add the parser\")"),
            ("Reviewed-by", "Rae Reviewer <rae@example.com>"),
            ("Change-Id", "I0123456789abcdef0123456789abcdef01234567"),
        ])
    );
    // A folded value is unfolded; the comment line is skipped.
    assert_eq!(
        trailers("Add the guide, drop the old tool"),
        pairs(&[
            ("Co-authored-by", "Bo Builder <bo@example.com>"),
            ("Acked-by", "Cy Committer <cy@example.com>"),
        ])
    );
    // The 25% rule with a git-generated line; the cherry-pick line is not a `Token: value` trailer.
    assert_eq!(
        trailers("Rename the readme"),
        pairs(&[("Signed-off-by", "Ada Author <ada@example.com>")])
    );
    assert_eq!(trailers("Link the docs"), pairs(&[]));
    assert_eq!(trailers("Make the tools executable and tidy the generator"), pairs(&[]));
    // Comments and everything below the scissors line are ignored; so is a trailing `Conflicts:` block.
    assert_eq!(
        trailers("Update the binaries"),
        pairs(&[("Reported-by", "Di Reporter <di@example.com>")])
    );
    assert_eq!(
        trailers("Vendor the submodule"),
        pairs(&[("Tested-by", "Ed Tester <ed@example.com>")])
    );
    assert_eq!(
        trailers("Last edit"),
        pairs(&[
            ("Signed-off-by", "Ada Author <ada@example.com>"),
            ("Signed-off-by", "Cy Committer <cy@example.com>"),
        ])
    );
}

#[test]
fn non_utf8_messages_decode_like_git() {
    let fx = Fixture::build("history.sh");
    let history = git::walk(&fx.open(""), &WalkOptions::default()).unwrap();
    assert_eq!(history.non_utf8_messages, 2);
    // Declared Latin-1: transcoded, as `git log` re-encodes it.
    let latin1 = by_subject(&history, "Café au lait");
    assert_eq!(
        latin1.body,
        "Le corps à la fin.\n\nSigned-off-by: François <f@example.com>\n"
    );
    assert_eq!(latin1.trailers[0].value, "François <f@example.com>");
    // Undeclared invalid bytes: lossy, as git prints them raw.
    let raw = by_subject(&history, "Bad byte \u{FFFD} in the subject");
    assert_eq!(raw.body, "And \u{FFFD} in the body.\n");
}

#[test]
fn first_parent_walk_matches_git() {
    let fx = Fixture::build("history.sh");
    let options = WalkOptions {
        first_parent: true,
        ..Default::default()
    };
    let history = git::walk(&fx.open(""), &options).unwrap();
    let expected = git_log(&fx, "", &["--first-parent"]);
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    assert_eq!(ids, expected.iter().map(|c| c.id).collect::<Vec<_>>());
    assert_eq!(
        history.commits.len(),
        18,
        "23 commits minus the two topic and three octopus-branch commits"
    );
    let subjects: BTreeSet<&str> = history.commits.iter().map(|c| c.subject.as_str()).collect();
    assert!(!subjects.contains("Topic: first") && !subjects.contains("Octopus part o2"));
    // Rows keep all their parents even when only the first is followed.
    assert_eq!(by_subject(&history, "Octopus merge").parents.len(), 4);
}

#[test]
fn since_until_and_revisions() {
    let fx = Fixture::build("history.sh");
    let repo = fx.open("");
    // Both ends inclusive, exactly on commit times: "Make the tools executable…" (commit 5) to "Add a repetitive
    // file" (commit 12).
    let (since, until) = (1_700_018_000, 1_700_043_200);
    let options = WalkOptions {
        since: Some(since),
        until: Some(until),
        ..Default::default()
    };
    let history = git::walk(&repo, &options).unwrap();
    let expected = git_log(&fx, "", &[&format!("--max-age={since}"), &format!("--min-age={until}")]);
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    assert_eq!(ids, expected.iter().map(|c| c.id).collect::<Vec<_>>());
    assert_eq!(history.commits.len(), 8);
    assert_eq!(history.commits[0].subject, "Add a repetitive file");
    assert_eq!(
        history.commits[7].subject,
        "Make the tools executable and tidy the generator"
    );

    // An annotated tag is peeled to its commit; other revision syntax works too.
    for rev in ["v1.0", "main~3", "topic"] {
        let options = WalkOptions {
            rev: Some(rev.into()),
            ..Default::default()
        };
        let history = git::walk(&repo, &options).unwrap();
        assert_eq!(history.rev, rev);
        assert_eq!(history.tip, Some(fx.rev("", &format!("{rev}^{{commit}}"))));
        let expected = git_log(&fx, "", &[rev]);
        let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
        assert_eq!(ids, expected.iter().map(|c| c.id).collect::<Vec<_>>(), "{rev}");
    }
    let tagged = git::walk(
        &repo,
        &WalkOptions {
            rev: Some("v1.0".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(tagged.commits[0].subject, "Link the docs");
    assert_eq!(tagged.commits.len(), 6);
}

#[test]
fn bad_revisions_are_errors_naming_the_revision() {
    let fx = Fixture::build("history.sh");
    let repo = fx.open("");
    let walk = |rev: &str| {
        git::walk(
            &repo,
            &WalkOptions {
                rev: Some(rev.into()),
                ..Default::default()
            },
        )
    };
    match walk("no-such-branch") {
        Err(err @ GitScanError::Rev { .. }) => {
            let GitScanError::Rev { rev, .. } = &err else {
                unreachable!()
            };
            assert_eq!(rev, "no-such-branch");
            let message = err.to_string();
            assert!(
                message.starts_with("revision \"no-such-branch\": does not resolve in the repository "),
                "{message}"
            );
            assert!(
                message.ends_with(": no branch, tag or commit has that name, or what it names is missing from it"),
                "{message}"
            );
        }
        other => panic!("expected a Rev error, got {other:?}"),
    }
    // An ancestor beyond the root: our words, not the parser's (`delegate.traverse(NthAncestor(1000))`).
    match walk("HEAD~1000") {
        Err(err @ GitScanError::Rev { .. }) => assert_eq!(
            err.to_string(),
            "revision \"HEAD~1000\": asks for an ancestor the history does not have (it is shorter than that)"
        ),
        other => panic!("expected a Rev error, got {other:?}"),
    }
    match walk("HEAD^{tree}") {
        Err(GitScanError::Rev { rev, message }) => {
            assert_eq!(rev, "HEAD^{tree}");
            assert!(message.starts_with("names a tree ("), "{message}");
        }
        other => panic!("expected a Rev error, got {other:?}"),
    }
}

#[test]
fn empty_repository_has_an_unborn_head() {
    let fx = Fixture::build("small.sh");
    let repo = fx.open("empty");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    assert_eq!(
        history,
        History {
            commits: Vec::new(),
            tip: None,
            head: HeadState::Unborn { branch: "main".into() },
            shallow: false,
            non_utf8_messages: 0,
            rev: "HEAD".into(),
            non_utf8_ids: Vec::new(),
            remembered: 0,
        }
    );
    // A branch name that does not exist yet is an error, not an empty history.
    let err = git::walk(
        &repo,
        &WalkOptions {
            rev: Some("main".into()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(&err, GitScanError::Rev { rev, .. } if rev == "main"),
        "{err:?}"
    );
    assert_eq!(git::diffs(&repo, &[], DiffDetail::Lines).unwrap(), Vec::new());
}

#[test]
fn detached_head_walks_from_the_detached_commit() {
    let fx = Fixture::build("small.sh");
    let history = git::walk(&fx.open("detached"), &WalkOptions::default()).unwrap();
    assert_eq!(history.head, HeadState::Detached);
    assert_eq!(history.tip, Some(fx.rev("detached", "main~1")));
    let subjects: Vec<&str> = history.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, ["Commit 2", "Commit 1"]);
    let expected = git_log(&fx, "detached", &[]);
    assert_eq!(
        history.commits.iter().map(|c| c.id).collect::<Vec<_>>(),
        expected.iter().map(|c| c.id).collect::<Vec<_>>()
    );
}

#[test]
fn shallow_clone_is_truncated_like_git_log() {
    let fx = Fixture::build("small.sh");
    let repo = fx.open("shallow");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    assert!(history.shallow);
    assert_eq!(history.head, HeadState::Branch("main".into()));
    let subjects: Vec<&str> = history.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, ["Commit 6", "Commit 5", "Commit 4"]);
    let expected = git_log(&fx, "shallow", &[]);
    for (row, git) in history.commits.iter().zip(&expected) {
        assert_eq!((row.id, &row.parents), (git.id, &git.parents));
    }
    // The boundary commit has no parents, as git log shows it, and its diff is against the empty tree.
    let boundary = &history.commits[2];
    assert!(boundary.parents.is_empty());
    let diff = one_diff(&repo, boundary.id, DiffDetail::Lines);
    let paths: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["all.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"]);
    assert_eq!(paths, git_paths(&fx, "shallow", &[], boundary.id));
    assert!(diff.files.iter().all(|f| f.change == FileChange::Added));
    assert_eq!(
        (file(&diff, "all.txt").lines_added, file(&diff, "all.txt").lines_removed),
        (4, 0)
    );
    // With the walked trees and parents known, the same diffs (the boundary's parent is not known either way).
    let requests: Vec<DiffRequest> = history.commits.iter().map(|c| DiffRequest::whole(c.id)).collect();
    let known = git::KnownCommits::of(&history.commits);
    assert_eq!(
        git::diffs_of_known(&repo, &known, &requests, DiffDetail::Lines).unwrap(),
        git::diffs_for(&repo, &requests, DiffDetail::Lines).unwrap()
    );
    // A complete repository is not shallow.
    assert!(!git::walk(&fx.open("src"), &WalkOptions::default()).unwrap().shallow);
}

#[test]
fn a_directory_that_is_not_a_repository_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.txt"), "not a repo").unwrap();
    match git::open(dir.path()) {
        Err(err @ GitScanError::NotARepository { .. }) => {
            let GitScanError::NotARepository { path, .. } = &err else {
                unreachable!()
            };
            assert_eq!(path, dir.path());
            assert!(
                err.to_string()
                    .starts_with(&format!("{}: not a git repository", dir.path().display()))
            );
        }
        other => panic!("expected NotARepository, got {other:?}"),
    }
    let missing = dir.path().join("does-not-exist");
    // A path that does not exist says so, not "not a git repository".
    match git::open(&missing) {
        Err(err @ GitScanError::NoSuchPath { .. }) => assert_eq!(
            err.to_string(),
            format!("{}: the repository path does not exist", missing.display())
        ),
        other => panic!("expected NoSuchPath, got {other:?}"),
    }
}

#[test]
fn repositories_open_from_subdirectories_and_bare() {
    let fx = Fixture::build("history.sh");
    let head = fx.rev("", "HEAD");
    let from_sub = git::walk(&git::open(&fx.path("src")).unwrap(), &WalkOptions::default()).unwrap();
    assert_eq!(from_sub.tip, Some(head));
    let bare = fx.root.parent().unwrap().join("bare.git");
    fx.git(
        "",
        [
            OsStr::new("clone"),
            OsStr::new("-q"),
            OsStr::new("--bare"),
            OsStr::new("."),
            bare.as_os_str(),
        ],
    );
    let history = git::walk(&git::open(&bare).unwrap(), &WalkOptions::default()).unwrap();
    assert_eq!((history.tip, history.commits.len()), (Some(head), 23));
}

#[test]
fn missing_objects_are_named() {
    let fx = Fixture::build("small.sh");
    // The middle commit object is gone: the walk names it, and so does the diff of its child.
    let repo = fx.open("missing-commit");
    let parent = {
        let raw = fx.git("missing-commit", ["cat-file", "commit", "HEAD"]);
        let line = raw
            .split(|&b| b == b'\n')
            .find(|l| l.starts_with(b"parent "))
            .unwrap()
            .to_vec();
        oid(&line[7..])
    };
    match git::walk(&repo, &WalkOptions::default()) {
        Err(err @ GitScanError::MissingObject { .. }) => {
            let GitScanError::MissingObject { id, .. } = &err else {
                unreachable!()
            };
            assert_eq!(*id, parent);
            assert_eq!(
                err.to_string(),
                format!("object {parent} is missing from the repository (reachable from HEAD)")
            );
        }
        other => panic!("expected MissingObject, got {other:?}"),
    }
    let head = fx.rev("missing-commit", "HEAD");
    let err = git::diffs(&repo, &[head], DiffDetail::Paths).unwrap_err();
    assert!(
        matches!(err, GitScanError::MissingObject { id, .. } if id == parent),
        "{err:?}"
    );

    // An old blob is gone: paths still work (tree diff only), line counts name the blob.
    let repo = fx.open("missing-blob");
    let head = fx.rev("missing-blob", "HEAD");
    let blob = fx.rev("missing-blob", "HEAD~1:a.txt");
    let diff = one_diff(&repo, head, DiffDetail::Paths);
    assert_eq!(files(&diff), [("a.txt", FileChange::Modified)]);
    match git::diffs(&repo, &[head], DiffDetail::Lines) {
        Err(GitScanError::MissingObject { id, context }) => {
            assert_eq!(id, blob);
            assert_eq!(context, format!("diff of commit {head}, path a.txt"));
        }
        other => panic!("expected MissingObject, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Diffs

/// Compares every commit's diff with git: paths (`--name-only`), change kinds (`--raw`), line counts
/// (`--numstat`) and the multiset of added/removed lines (`-U0` patch). Returns the number of files compared.
fn compare_diffs_with_git(fx: &Fixture, history: &History, diffs: &[CommitDiff]) -> usize {
    let mut compared = 0;
    for (row, diff) in history.commits.iter().zip(diffs) {
        assert_eq!(row.id, diff.id);
        let ours: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            ours,
            git_paths(fx, "", &row.parents, row.id),
            "paths of {} {:?}",
            row.id,
            row.subject
        );
        let raw = git_raw(fx, "", &row.parents, row.id);
        let numstat = git_numstat(fx, "", &row.parents, row.id);
        for f in &diff.files {
            let entry = &raw[&f.path];
            let kind = match entry.status {
                b'A' => FileChange::Added,
                b'D' => FileChange::Deleted,
                b'T' => FileChange::TypeChanged,
                b'M' if entry.old_id == entry.new_id => FileChange::TypeChanged,
                b'M' => FileChange::Modified,
                other => panic!("unexpected status {}", other as char),
            };
            assert_eq!(f.change, kind, "{} {}", row.id, f.path);
            compared += 1;
            let submodule = entry.old_mode == "160000" || entry.new_mode == "160000";
            if submodule {
                assert_eq!((f.lines_added, f.lines_removed, f.binary), (0, 0, false), "{}", f.path);
                continue;
            }
            match numstat[&f.path] {
                None => {
                    assert!(f.binary, "{} {} should be binary", row.id, f.path);
                    assert_eq!((f.lines_added, f.lines_removed), (0, 0));
                    assert!(f.added_line_hashes.is_empty() && f.removed_line_hashes.is_empty());
                }
                Some((added, removed)) => {
                    assert!(!f.binary, "{}", f.path);
                    assert_eq!(
                        (f.lines_added, f.lines_removed),
                        (added, removed),
                        "numstat {} {}",
                        row.id,
                        f.path
                    );
                    assert_eq!(f.added_line_hashes.len(), added as usize);
                    assert_eq!(f.removed_line_hashes.len(), removed as usize);
                    // git prints a type change as a deletion and an addition; compare lines of content diffs only.
                    if f.change != FileChange::TypeChanged {
                        let (git_added, git_removed) = git_line_hashes(fx, &row.parents, row.id, &entry.raw_path);
                        assert_eq!(sorted(f.added_line_hashes.to_vec()), sorted(git_added), "+ {}", f.path);
                        assert_eq!(
                            sorted(f.removed_line_hashes.to_vec()),
                            sorted(git_removed),
                            "- {}",
                            f.path
                        );
                    }
                }
            }
        }
        assert_eq!(diff.files.len(), raw.len(), "{}", row.id);
    }
    compared
}

#[test]
fn diffs_match_git_commit_by_commit() {
    let fx = Fixture::build("history.sh");
    let repo = fx.open("");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    let lines = git::diffs(&repo, &ids, DiffDetail::Lines).unwrap();
    let compared = compare_diffs_with_git(&fx, &history, &lines);
    assert_eq!(compared, 40);

    // Paths detail: the same files and kinds, no line data.
    let paths = git::diffs(&repo, &ids, DiffDetail::Paths).unwrap();
    for (p, l) in paths.iter().zip(&lines) {
        assert_eq!(files(p), files(l));
        assert!(
            p.files
                .iter()
                .all(|f| f.lines_added == 0 && f.lines_removed == 0 && !f.binary)
        );
        assert!(
            p.files
                .iter()
                .all(|f| f.added_line_hashes.is_empty() && f.removed_line_hashes.is_empty())
        );
    }
    // The trees and parents the walk read give the same diffs (merges and the root commit included).
    let known = git::KnownCommits::of(&history.commits);
    let whole: Vec<DiffRequest> = ids.iter().map(|id| DiffRequest::whole(*id)).collect();
    assert_eq!(
        git::diffs_of_known(&repo, &known, &whole, DiffDetail::Lines).unwrap(),
        lines
    );

    // Same order as the ids given, duplicates included.
    let picked = [ids[3], ids[0], ids[3]];
    let again = git::diffs(&repo, &picked, DiffDetail::Lines).unwrap();
    assert_eq!(again, [lines[3].clone(), lines[0].clone(), lines[3].clone()]);

    // Line detail limited to some paths: those files as with every line, the others as with paths only.
    let wide = lines
        .iter()
        .position(|diff| diff.files.iter().filter(|f| !f.added_line_hashes.is_empty()).count() >= 2)
        .expect("a commit adding lines to several files");
    let kept = lines[wide]
        .files
        .iter()
        .find(|f| !f.added_line_hashes.is_empty())
        .unwrap();
    let request = DiffRequest {
        id: ids[wide],
        line_paths: Some(std::sync::Arc::new([kept.path.clone()].into())),
        only_paths: None,
    };
    let scoped = git::diffs_for(&repo, &[request], DiffDetail::Lines).unwrap();
    assert_eq!(files(&scoped[0]), files(&lines[wide]));
    for (s, (l, p)) in scoped[0]
        .files
        .iter()
        .zip(lines[wide].files.iter().zip(&paths[wide].files))
    {
        assert_eq!(s, if s.path == kept.path { l } else { p }, "{}", s.path);
    }
}

/// A packed repository whose trees and files are long delta chains (29 deep with git 2.x's defaults): the diffs, whole and
/// restricted, match git commit by commit, so objects rebuilt from the pack cache's intermediate bases
/// (vendor/README.md) are the objects git reads.
#[test]
fn delta_chains_in_a_pack_read_like_git() {
    let fx = Fixture::build("chains.sh");
    let pack = std::fs::read_dir(fx.root.join(".git/objects/pack"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension() == Some(OsStr::new("idx")))
        .unwrap();
    let stats = String::from_utf8(fx.git("", [OsStr::new("verify-pack"), OsStr::new("-v"), pack.as_os_str()])).unwrap();
    let deepest = stats
        .lines()
        .filter_map(|line| {
            line.strip_prefix("chain length = ")?
                .split(':')
                .next()?
                .parse::<u32>()
                .ok()
        })
        .max();
    assert!(deepest >= Some(20), "{stats}");

    let repo = fx.open("");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    assert_eq!(history.commits.len(), 121);
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    let lines = git::diffs(&repo, &ids, DiffDetail::Lines).unwrap();
    assert_eq!(compare_diffs_with_git(&fx, &history, &lines), 240 + 2 * 120);

    let every: BTreeSet<String> = (0..240).map(|f| format!("d{}/f{f:03}.txt", f % 8)).collect();
    let requests: Vec<DiffRequest> = ids.iter().map(|id| DiffRequest::among(*id, every.clone())).collect();
    let restricted = git::diffs_for(&repo, &requests, DiffDetail::Paths).unwrap();
    for (got, all) in restricted.iter().zip(&lines) {
        assert_eq!(files(got), files(all), "{}", got.id);
    }
}

/// Every object of a pack of 40,206 is found; the id just above each of them and the two ends of each fan-out
/// bucket are found exactly when they exist: the pack index lookup is patched (interpolation search,
/// vendor/README.md).
#[test]
fn pack_index_lookups_find_every_object_and_only_those() {
    let fx = Fixture::build("bulk.sh");
    let listed = fx.git("", ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]);
    let ids: Vec<ObjectId> = listed
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(oid)
        .collect();
    assert_eq!(ids.len(), 40_206);
    assert!(ids.is_sorted());
    let known: BTreeSet<ObjectId> = ids.iter().copied().collect();
    let repo = fx.open("").to_thread_local();
    assert!(ids.iter().all(|id| repo.has_object(id)));

    let mut absent_checked = 0;
    let mut check = |bytes: [u8; 20]| {
        let id = ObjectId::from_bytes_or_panic(&bytes);
        assert_eq!(repo.has_object(id), known.contains(&id), "{id}");
        absent_checked += usize::from(!known.contains(&id));
    };
    for id in &ids {
        // The next id up (with carry), which sorts between this object and the next.
        let mut next: [u8; 20] = id.as_bytes().try_into().unwrap();
        for byte in next.iter_mut().rev() {
            *byte = byte.wrapping_add(1);
            if *byte != 0 {
                break;
            }
        }
        check(next);
    }
    for first in 0..=255u8 {
        let mut low = [0u8; 20];
        low[0] = first;
        check(low);
        check([[first].as_slice(), &[0xff; 19]].concat().try_into().unwrap());
    }
    assert!(absent_checked > 40_000, "{absent_checked}");
}

/// A damaged pack entry is an error naming the object, whether its compressed data is corrupt or its header
/// gives the wrong size; nothing panics and no wrong content is diffed.
#[test]
fn damaged_pack_entries_are_errors_naming_the_object() {
    let fx = Fixture::build("packed.sh");
    let blob = fx.rev("", "HEAD:a.txt");
    let added = fx.rev("", "HEAD~1");
    let pack_dir = fx.root.join(".git/objects/pack");
    let path_with = |ext: &str| {
        std::fs::read_dir(&pack_dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.extension() == Some(OsStr::new(ext)))
            .unwrap()
    };
    let (idx, pack) = (path_with("idx"), path_with("pack"));
    let stats = String::from_utf8(fx.git("", [OsStr::new("verify-pack"), OsStr::new("-v"), idx.as_os_str()])).unwrap();
    // `<id> blob <size> <size in pack> <offset>`: five fields, so stored whole.
    let fields: Vec<usize> = stats
        .lines()
        .find(|line| line.starts_with(&blob.to_string()))
        .map(|line| line.split_whitespace().skip(2).map(|f| f.parse().unwrap()).collect())
        .unwrap();
    let [size, packed_size, offset] = fields[..] else {
        panic!("{blob} is not stored whole: {stats}")
    };
    let pristine = std::fs::read(&pack).unwrap();
    let mut permissions = std::fs::metadata(&pack).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)] // the test's own file, in its tempdir
    permissions.set_readonly(false);
    std::fs::set_permissions(&pack, permissions).unwrap();

    let diff_error = |damage: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = pristine.clone();
        damage(&mut bytes);
        std::fs::write(&pack, bytes).unwrap();
        let repo = fx.open("");
        match git::diffs(&repo, &[added], DiffDetail::Lines) {
            Err(GitScanError::Corrupt { id, message }) => {
                assert_eq!(id, blob, "{message}");
                message
            }
            Err(other) => panic!("expected Corrupt, got {other:?}"),
            Ok(diffs) => panic!("expected Corrupt, got a diff of {:?}", files(&diffs[0])),
        }
    };
    // A byte in the middle of the compressed data.
    let message = diff_error(&|bytes| bytes[offset + packed_size / 2] ^= 0x55);
    assert!(message.contains("Failed to decompress pack entry"), "{message}");
    // The entry header's size, one byte less and one byte more (its low four bits are the size's lowest bits).
    assert!((1..15).contains(&(size & 0xf)), "{size}");
    for wrong in [size - 1, size + 1] {
        let message = diff_error(&|bytes| bytes[offset] = bytes[offset] & 0xf0 | (wrong & 0xf) as u8);
        assert!(message.contains("does not match entry header"), "{message}");
    }

    std::fs::write(&pack, &pristine).unwrap();
    assert_eq!(
        files(&one_diff(&fx.open(""), added, DiffDetail::Lines)),
        [("a.txt", FileChange::Added)]
    );
}

/// A diff restricted to some paths lists exactly what the whole diff lists at those paths: for every commit of the
/// fixture, with every path it ever had (a directory that becomes a file, a symlink, a submodule, a mode change, a
/// name that is not UTF-8), their directories and two paths it never had, all together and one at a time.
#[test]
fn restricted_diffs_equal_the_whole_diff_at_their_paths() {
    let fx = Fixture::build("history.sh");
    assert_restricted_diffs_equal_the_whole_diff(&fx.open(""));
}

/// Every commit of `repo`, restricted to every path it ever had (and its directories, and absent ones), all paths
/// together and one at a time: what the whole diff lists at those paths.
fn assert_restricted_diffs_equal_the_whole_diff(repo: &gix::ThreadSafeRepository) {
    let history = git::walk(repo, &WalkOptions::default()).unwrap();
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    let whole = git::diffs(repo, &ids, DiffDetail::Paths).unwrap();
    let mut paths: BTreeSet<String> = whole
        .iter()
        .flat_map(|diff| diff.files.iter().map(|file| file.path.clone()))
        .collect();
    let directories: Vec<String> = paths
        .iter()
        .filter_map(|path| path.rsplit_once('/').map(|(dir, _)| dir.to_owned()))
        .collect();
    paths.extend(directories);
    paths.extend(["absent".to_owned(), "src/absent/deeper.rs".to_owned()]);
    assert!(paths.iter().any(|path| path.contains(char::REPLACEMENT_CHARACTER)));

    let mut listed = 0;
    let filters = std::iter::once(paths.clone()).chain(paths.iter().map(|path| BTreeSet::from([path.clone()])));
    for filter in filters {
        let requests: Vec<DiffRequest> = ids.iter().map(|id| DiffRequest::among(*id, filter.clone())).collect();
        let restricted = git::diffs_for(repo, &requests, DiffDetail::Paths).unwrap();
        for (got, all) in restricted.iter().zip(&whole) {
            let expected: Vec<(&str, FileChange)> = files(all)
                .into_iter()
                .filter(|(path, _)| filter.contains(*path))
                .collect();
            assert_eq!(files(got), expected, "commit {} among {filter:?}", got.id);
            listed += expected.len();
        }
    }
    // Every change twice: once with all paths, once with its own.
    assert_eq!(listed, 2 * whole.iter().map(|diff| diff.files.len()).sum::<usize>());
}

/// The commit-graph's changed-path filters, as git writes them (hash versions 1 and 2; one file and a split
/// chain of two layers): every path git's first-parent diff lists, and each of its directories, may have
/// changed; most paths a commit did not change are ruled out; and restricted diffs, which consult the filters,
/// still equal the whole diff.
#[test]
fn changed_path_filters_written_by_git_rule_out_only_unchanged_paths() {
    use pipeline::scan::changed_paths::{ChangedPaths, PathKey};
    let fx = Fixture::build("history.sh");
    // Each commit with its first parent, and the raw paths (one is not UTF-8) of its diff against that parent, as
    // git lists them.
    let lines = fx.git("", ["rev-list", "--all", "--parents"]);
    let commits: Vec<(ObjectId, Option<ObjectId>)> = lines
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let mut ids = line.split(|&b| b == b' ').map(oid);
            (ids.next().unwrap(), ids.next())
        })
        .collect();
    let changed: Vec<Vec<Vec<u8>>> = commits
        .iter()
        .map(|(id, parent)| {
            let mut args = vec!["diff-tree".to_owned(), "-r".into(), "-z".into(), "--name-only".into()];
            args.extend(["--no-renames".into(), "--no-commit-id".into()]);
            match parent {
                Some(parent) => args.extend([parent.to_string(), id.to_string()]),
                None => args.extend(["--root".into(), id.to_string()]),
            }
            let out = fx.git("", &args);
            out.split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(<[u8]>::to_vec)
                .collect()
        })
        .collect();
    let all: BTreeSet<Vec<u8>> = changed.iter().flatten().cloned().collect();
    assert!(all.iter().any(|path| std::str::from_utf8(path).is_err()));

    let info = fx.path(".git/objects/info");
    for version in ["1", "2"] {
        for split in [false, true] {
            let _ = std::fs::remove_file(info.join("commit-graph"));
            let _ = std::fs::remove_dir_all(info.join("commit-graphs"));
            let config = format!("commitGraph.changedPathsVersion={version}");
            if split {
                // A base layer with the oldest half of the history, then a layer with the rest.
                let base = commits[commits.len() / 2].0.to_string();
                let mut cmd = isolated("git", &fx.path(""), &fx.home);
                cmd.args([
                    "-c",
                    &config,
                    "commit-graph",
                    "write",
                    "--split=no-merge",
                    "--changed-paths",
                    "--stdin-commits",
                ]);
                cmd.stdin(Stdio::piped());
                let mut child = cmd.spawn().unwrap();
                std::io::Write::write_all(&mut child.stdin.take().unwrap(), base.as_bytes()).unwrap();
                assert!(child.wait().unwrap().success());
                fx.git(
                    "",
                    [
                        "-c",
                        &config,
                        "commit-graph",
                        "write",
                        "--reachable",
                        "--split=no-merge",
                        "--changed-paths",
                    ],
                );
                let chain = std::fs::read_to_string(info.join("commit-graphs/commit-graph-chain")).unwrap();
                assert_eq!(chain.lines().count(), 2, "two layers");
            } else {
                fx.git(
                    "",
                    ["-c", &config, "commit-graph", "write", "--reachable", "--changed-paths"],
                );
            }
            let filters = ChangedPaths::open(&fx.path(".git/objects"), gix::hash::Kind::Sha1);
            let (mut asked, mut ruled_out) = (0, 0);
            for ((id, _), paths) in commits.iter().zip(&changed) {
                let filter = filters
                    .filter(id)
                    .unwrap_or_else(|| panic!("a filter for {id} (v{version}, split {split})"));
                for path in &all {
                    let maybe = filter.may_have_changed(&PathKey::new(path));
                    if paths.contains(path) {
                        assert!(maybe, "{id} changed {:?} (v{version}, split {split})", lossy(path));
                    } else {
                        asked += 1;
                        ruled_out += usize::from(!maybe);
                    }
                }
            }
            assert!(
                ruled_out * 10 >= asked * 7,
                "only {ruled_out} of {asked} unchanged paths ruled out"
            );
            assert_restricted_diffs_equal_the_whole_diff(&fx.open(""));
        }
    }
}

/// The repository's configuration turns the filters off as it does for git; the commit-graph is otherwise read.
#[test]
fn changed_path_filters_follow_the_repository_configuration() {
    use pipeline::scan::changed_paths::ChangedPaths;
    let fx = Fixture::build("history.sh");
    fx.git("", ["commit-graph", "write", "--reachable", "--changed-paths"]);
    let read = |settings: &[(&str, &str)]| {
        for key in [
            "core.commitGraph",
            "commitGraph.readChangedPaths",
            "commitGraph.changedPathsVersion",
        ] {
            let _ = isolated("git", &fx.path(""), &fx.home)
                .args(["config", "--unset", key])
                .output();
        }
        for (key, value) in settings {
            fx.git("", ["config", key, value]);
        }
        !ChangedPaths::of_repository(&fx.open("").to_thread_local()).is_empty()
    };
    assert!(read(&[]));
    assert!(!read(&[("core.commitGraph", "false")]));
    assert!(!read(&[("commitGraph.readChangedPaths", "false")]));
    assert!(!read(&[("commitGraph.changedPathsVersion", "0")]));
    // The version setting takes precedence over the deprecated one.
    assert!(read(&[
        ("commitGraph.readChangedPaths", "false"),
        ("commitGraph.changedPathsVersion", "2")
    ]));
    assert!(read(&[("commitGraph.changedPathsVersion", "-1")]));
}

/// `ChangedPaths::missing` (behind `phase0 p2`'s hint to write filters): true without a commit-graph and with one
/// that has no filters, false once it has them or when the configuration would not read them anyway.
#[test]
fn missing_changed_path_filters_are_noticed() {
    use pipeline::scan::changed_paths::ChangedPaths;
    let fx = Fixture::build("history.sh");
    let missing = || ChangedPaths::missing(&fx.open("").to_thread_local());
    assert!(missing());
    fx.git("", ["commit-graph", "write", "--reachable"]);
    assert!(missing());
    fx.git("", ["config", "commitGraph.changedPathsVersion", "0"]);
    assert!(!missing());
    fx.git("", ["config", "--unset", "commitGraph.changedPathsVersion"]);
    fx.git("", ["config", "core.commitGraph", "false"]);
    assert!(!missing());
    fx.git("", ["config", "--unset", "core.commitGraph"]);
    fx.git("", ["commit-graph", "write", "--reachable", "--changed-paths"]);
    assert!(!missing());
}

#[test]
fn change_kinds_and_counts_of_specific_commits() {
    let fx = Fixture::build("history.sh");
    let repo = fx.open("");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    let diff = |subject: &str| one_diff(&repo, by_subject(&history, subject).id, DiffDetail::Lines);
    use FileChange::*;

    let root = diff("Initial commit");
    assert_eq!(root.files.len(), 9);
    assert!(root.files.iter().all(|f| f.change == Added));
    assert_eq!(
        (
            file(&root, "src/lib.rs").lines_added,
            file(&root, "src/lib.rs").lines_removed
        ),
        (200, 0)
    );
    assert!(file(&root, "data/blob.bin").binary);
    let nonl = file(&root, "nonl.txt");
    assert_eq!(
        *nonl.added_line_hashes,
        [evidence_hash(b"alpha"), evidence_hash(b"beta")]
    );

    let parser = diff("Fix the parser on long input");
    let lib = file(&parser, "src/lib.rs");
    assert_eq!((lib.change, lib.lines_added, lib.lines_removed), (Modified, 6, 5));
    assert_eq!(
        *lib.removed_line_hashes,
        [b"line 10".as_slice(), b"line 11", b"line 12", b"line 50", b"line 150"].map(evidence_hash)
    );
    assert_eq!(
        *lib.added_line_hashes,
        [
            b"line fifty".as_slice(),
            b"inserted a",
            b"inserted b",
            b"line 150 changed",
            b"line 1",
            b"line 2"
        ]
        .map(evidence_hash)
    );

    assert_eq!(
        files(&diff("Add the guide, drop the old tool")),
        [("docs/guide.md", Added), ("tool.sh", Deleted)]
    );
    assert_eq!(
        files(&diff("Rename the readme")),
        [("README", Added), ("README.md", Deleted)]
    );
    assert_eq!(
        files(&diff("Make the tools executable and tidy the generator")),
        [("gen.txt", Modified), ("tool2.sh", TypeChanged)]
    );
    let links = diff("Link the docs");
    assert_eq!(files(&links), [("docs/guide.md", TypeChanged), ("link", Added)]);
    assert_eq!(*file(&links, "link").added_line_hashes, [evidence_hash(b"README")]);
    let binaries = diff("Update the binaries");
    assert_eq!(files(&binaries), [("data/blob.bin", Modified), ("gen.txt", Modified)]);
    assert!(
        binaries
            .files
            .iter()
            .all(|f| f.binary && f.lines_added == 0 && f.lines_removed == 0)
    );
    let sub = diff("Vendor the submodule");
    assert_eq!(files(&sub), [("vendor/sub", Added)]);
    assert_eq!((sub.files[0].lines_added, sub.files[0].binary), (0, false));
    assert_eq!(
        files(&diff("Bad byte \u{FFFD} in the subject")),
        [("odd/caf\u{FFFD}.txt", Added)]
    );
    let crlf = diff("  Leading blank lines and an indented subject");
    assert_eq!(
        files(&crlf),
        [
            ("conf", Added),
            ("conf/settings.toml", Deleted),
            ("crlf.txt", Modified),
            ("nonl.txt", Modified)
        ]
    );
    assert_eq!(*file(&crlf, "crlf.txt").removed_line_hashes, [evidence_hash(b"two\r")]);
    // "beta" without a final newline differs from "beta\n": one line removed, one added.
    assert_eq!(
        (
            file(&crlf, "nonl.txt").lines_added,
            file(&crlf, "nonl.txt").lines_removed
        ),
        (1, 1)
    );
    assert_eq!(diff("Nothing changed").files, []);
}

#[test]
fn merges_diff_against_their_first_parent() {
    let fx = Fixture::build("history.sh");
    let repo = fx.open("");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    let merge = by_subject(&history, "Merge branch topic");
    let octopus = by_subject(&history, "Octopus merge");
    let diffs = git::diffs(&repo, &[merge.id, octopus.id], DiffDetail::Lines).unwrap();
    assert_eq!(files(&diffs[0]), [("topic.txt", FileChange::Added)]);
    assert_eq!(file(&diffs[0], "topic.txt").lines_added, 2);
    assert_eq!(
        files(&diffs[1]),
        [
            ("octo-o1.txt", FileChange::Added),
            ("octo-o2.txt", FileChange::Added),
            ("octo-o3.txt", FileChange::Added)
        ]
    );
    for (row, diff) in [merge, octopus].iter().zip(&diffs) {
        let ours: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(ours, git_paths(&fx, "", &row.parents, row.id));
    }
}

#[test]
fn twenty_thousand_files_in_one_commit() {
    let fx = Fixture::build("bulk.sh");
    let repo = fx.open("");
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    let subjects: Vec<&str> = history.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, ["Delete half", "Modify all", "Add all"]);
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();

    let started = Instant::now();
    let diffs = git::diffs(&repo, &ids, DiffDetail::Lines).unwrap();
    eprintln!("diffs(Lines) of 50,000 file changes: {:?}", started.elapsed());
    let [delete, modify, add] = [&diffs[0], &diffs[1], &diffs[2]];
    assert_eq!(
        (add.files.len(), modify.files.len(), delete.files.len()),
        (20_000, 20_000, 10_000)
    );
    assert_eq!(add.files[0].path, "d00/f00000.txt");
    assert_eq!(add.files[19_999].path, "d99/f19999.txt");
    assert!(
        add.files
            .windows(2)
            .all(|w| w[0].path.as_bytes() < w[1].path.as_bytes())
    );
    assert!(
        add.files
            .iter()
            .all(|f| (f.change, f.lines_added, f.lines_removed) == (FileChange::Added, 3, 0))
    );
    assert!(
        modify
            .files
            .iter()
            .all(|f| (f.change, f.lines_added, f.lines_removed) == (FileChange::Modified, 2, 1))
    );
    assert!(
        delete
            .files
            .iter()
            .all(|f| (f.change, f.lines_added, f.lines_removed) == (FileChange::Deleted, 0, 4))
    );
    let f7 = file(modify, "d07/f00007.txt");
    assert_eq!(*f7.removed_line_hashes, [evidence_hash(b"second")]);
    assert_eq!(
        *f7.added_line_hashes,
        [evidence_hash(b"second changed"), evidence_hash(b"fourth 1")]
    );

    for (row, diff) in history.commits.iter().zip(&diffs) {
        let ours: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(ours, git_paths(&fx, "", &row.parents, row.id));
        let numstat = git_numstat(&fx, "", &row.parents, row.id);
        assert_eq!(numstat.len(), diff.files.len());
        for f in &diff.files {
            assert_eq!(numstat[&f.path], Some((f.lines_added, f.lines_removed)), "{}", f.path);
        }
    }
    let paths = git::diffs(&repo, &ids[2..], DiffDetail::Paths).unwrap();
    assert_eq!(files(&paths[0]), files(add));
}

// ---------------------------------------------------------------------------------------------------------------
// This project's own repository, and the benchmark

/// `git log --diff-merges=first-parent --no-renames -z --format=%x01%H <extra>`, split per commit.
fn git_log_per_commit(dir: &Path, home: &Path, extra: &[&str]) -> BTreeMap<ObjectId, Vec<Vec<u8>>> {
    let mut cmd = isolated("git", dir, home);
    cmd.args([
        "log",
        "--diff-merges=first-parent",
        "--no-renames",
        "-z",
        "--format=%x01%H",
    ]);
    cmd.args(extra);
    let out = run(cmd);
    out.split(|&b| b == 1)
        .filter(|chunk| !chunk.is_empty())
        .map(|chunk| {
            let mut fields = chunk.split(|&b| b == 0);
            let id = oid(fields.next().unwrap());
            let entries = fields
                .map(|f| f.strip_prefix(b"\n").unwrap_or(f).to_vec())
                .filter(|f| !f.is_empty())
                .collect();
            (id, entries)
        })
        .collect()
}

#[test]
fn own_repository_paths_match_git() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let home = tempfile::tempdir().unwrap();
    let Ok(repo) = git::open(&root) else {
        eprintln!(
            "note: {} is not a git repository; skipping the own-repository comparison",
            root.display()
        );
        return;
    };
    let history = match git::walk(&repo, &WalkOptions::default()) {
        Ok(history) if history.tip.is_some() => history,
        other => {
            eprintln!("note: no commits to compare in {} ({other:?})", root.display());
            return;
        }
    };
    let ids: Vec<ObjectId> = history.commits.iter().map(|c| c.id).collect();
    let count = run({
        let mut cmd = isolated("git", &root, home.path());
        cmd.args(["rev-list", "--count", "HEAD"]);
        cmd
    });
    assert_eq!(ids.len(), lossy(&count).trim().parse::<usize>().unwrap());
    let expected = git_log_per_commit(&root, home.path(), &["--name-only", "HEAD"]);
    let numstat = git_log_per_commit(&root, home.path(), &["--numstat", "HEAD"]);
    assert_eq!(expected.len(), ids.len());
    let diffs = git::diffs(&repo, &ids, DiffDetail::Lines).unwrap();
    let mut files = 0;
    for diff in &diffs {
        let ours: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
        let theirs: Vec<String> = expected[&diff.id].iter().map(|p| lossy(p)).collect();
        assert_eq!(ours, theirs, "{}", diff.id);
        let counts: BTreeMap<String, Option<(u32, u32)>> = numstat[&diff.id].iter().map(|f| parse_numstat(f)).collect();
        for f in &diff.files {
            let expected = if f.binary {
                None
            } else {
                Some((f.lines_added, f.lines_removed))
            };
            assert_eq!(counts[&f.path], expected, "{} {}", diff.id, f.path);
        }
        files += diff.files.len();
    }
    eprintln!(
        "own repository: {} commits, {files} file changes, all equal to git",
        ids.len()
    );
}

/// CPU time of this process's threads and of its waited-for children so far (Linux `/proc/self/stat`, in clock
/// ticks of 10 ms): on a shared machine wall times vary with the load, CPU times much less.
fn cpu_times() -> (Duration, Duration) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<u64> = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // After the command name: state is field 3, utime 14, stime 15, cutime 16, cstime 17 (1-based).
    let tick = |i: usize| fields.get(i - 3).copied().unwrap_or(0);
    let ms = |ticks: u64| Duration::from_millis(ticks * 10);
    (ms(tick(14) + tick(15)), ms(tick(16) + tick(17)))
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

/// Timing on a large real repository (default: the git/git mirror). Run with
/// `cargo test --release -p pipeline --test git_scan -- --ignored --nocapture`; `P2_BENCH_REPO` picks another
/// repository. Also checks paths and numstat counts of the diffed commits against git.
#[test]
#[ignore = "benchmark: needs a large repository and a release build"]
fn bench_large_repository() {
    let path = std::env::var_os("P2_BENCH_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/.mirror/git+git/repo"));
    if !path.exists() {
        eprintln!("note: {} does not exist; skipping the benchmark", path.display());
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let n: usize = std::env::var("P2_BENCH_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);

    let children_before = cpu_times().1;
    let git_log_runs: Vec<Duration> = (0..3)
        .map(|_| {
            let mut cmd = isolated("git", &path, home.path());
            cmd.args([
                "log",
                "--no-renames",
                "--name-only",
                "--format=%H%x00%P%x00%at%x00%s",
                "HEAD",
            ]);
            cmd.stdout(Stdio::null());
            let started = Instant::now();
            assert!(cmd.status().unwrap().success());
            started.elapsed()
        })
        .collect();
    let git_log_cpu = (cpu_times().1 - children_before) / 3;

    let repo = git::open(&path).unwrap();
    let mut walk_runs = Vec::new();
    let mut history = None;
    let cpu_before = cpu_times().0;
    for _ in 0..5 {
        let started = Instant::now();
        let walked = git::walk(&repo, &WalkOptions::default()).unwrap();
        walk_runs.push(started.elapsed());
        history = Some(walked);
    }
    let walk_cpu = (cpu_times().0 - cpu_before) / 5;
    let history = history.unwrap();
    let ids: Vec<ObjectId> = history.commits.iter().take(n).map(|c| c.id).collect();
    let time = |detail| {
        let cpu_before = cpu_times().0;
        let runs: Vec<Duration> = (0..3)
            .map(|_| {
                let started = Instant::now();
                git::diffs(&repo, &ids, detail).unwrap();
                started.elapsed()
            })
            .collect();
        (median(runs), (cpu_times().0 - cpu_before) / 3)
    };
    let (paths_time, lines_time) = (time(DiffDetail::Paths), time(DiffDetail::Lines));
    let first_parent = {
        let started = Instant::now();
        let options = WalkOptions {
            first_parent: true,
            ..Default::default()
        };
        let fp = git::walk(&repo, &options).unwrap();
        (fp.commits.len(), started.elapsed())
    };

    let git_log = median(git_log_runs);
    let walk = median(walk_runs);
    let share = |d: Duration| 100.0 * d.as_secs_f64() / git_log.as_secs_f64();
    eprintln!(
        "repository: {} ({} commits from HEAD)",
        path.display(),
        history.commits.len()
    );
    eprintln!("git log --no-renames --name-only …: {git_log:?} wall (median of 3), {git_log_cpu:?} CPU");
    eprintln!(
        "walk: {walk:?} wall (median of 5) = {:.1}% of git log, {walk_cpu:?} CPU",
        share(walk)
    );
    eprintln!(
        "walk --first-parent: {} commits in {:?}",
        first_parent.0, first_parent.1
    );
    eprintln!(
        "diffs(Paths) of {} commits: {:?} wall, {:?} CPU",
        ids.len(),
        paths_time.0,
        paths_time.1
    );
    eprintln!(
        "diffs(Lines) of {} commits: {:?} wall, {:?} CPU",
        ids.len(),
        lines_time.0,
        lines_time.1
    );
    eprintln!("walk + diffs(Lines) = {:.1}% of git log", share(walk + lines_time.0));

    // Correctness on real history: paths and numstat counts against git, commit by commit.
    let diffs = git::diffs(&repo, &ids, DiffDetail::Lines).unwrap();
    let mut stdin_ids = String::new();
    for id in &ids {
        stdin_ids.push_str(&format!("{id}\n"));
    }
    let numstat = {
        let mut cmd = isolated("git", &path, home.path());
        cmd.args([
            "log",
            "--no-walk=unsorted",
            "--stdin",
            "--diff-merges=first-parent",
            "--no-renames",
            "--numstat",
            "-z",
            "--format=%x01%H",
        ]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write as _;
            stdin.write_all(stdin_ids.as_bytes()).unwrap();
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        assert!(out.status.success());
        eprintln!(
            "git log --numstat of the same {} commits: {:?} wall",
            ids.len(),
            started.elapsed()
        );
        out.stdout
    };
    let mut expected: BTreeMap<ObjectId, Vec<Numstat>> = BTreeMap::new();
    for chunk in numstat.split(|&b| b == 1).filter(|c| !c.is_empty()) {
        let mut fields = chunk.split(|&b| b == 0);
        let id = oid(fields.next().unwrap());
        let entries = fields
            .map(|f| f.strip_prefix(b"\n").unwrap_or(f))
            .filter(|f| !f.is_empty())
            .map(parse_numstat)
            .collect();
        expected.insert(id, entries);
    }
    let (mut files, mut count_mismatches) = (0, Vec::new());
    for diff in &diffs {
        let theirs = expected.get(&diff.id).cloned().unwrap_or_default();
        let ours: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
        let their_paths: Vec<&str> = theirs.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(ours, their_paths, "paths of {}", diff.id);
        for (f, (_, counts)) in diff.files.iter().zip(&theirs) {
            let ours = if f.binary {
                None
            } else {
                Some((f.lines_added, f.lines_removed))
            };
            if ours != *counts {
                count_mismatches.push(format!("{} {}: ours {ours:?}, git {counts:?}", diff.id, f.path));
            }
        }
        files += diff.files.len();
    }
    eprintln!(
        "checked {files} file changes of {} commits against git --numstat",
        ids.len()
    );
    for mismatch in &count_mismatches {
        eprintln!("  count mismatch: {mismatch}");
    }
    assert_eq!(count_mismatches.len(), 0);
}

/// The resident pages of a pack mapping, from `/proc/self/smaps` (kB), summed over the mappings of `pack`.
#[cfg(target_os = "linux")]
fn resident_kb(pack: &Path) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut total = 0;
    let mut in_pack = false;
    for line in smaps.lines() {
        if line
            .split_whitespace()
            .next()
            .is_some_and(|f| f.contains('-') && !f.ends_with(':'))
        {
            in_pack = line.ends_with(pack.to_str().unwrap());
        } else if in_pack && let Some(kb) = line.strip_prefix("Rss:") {
            total += kb.trim().trim_end_matches(" kB").parse::<u64>().unwrap();
        }
    }
    total
}

/// Releasing a pack's pages after a walk and a diff drops them from the resident set and changes nothing read
/// afterwards: the same history, the same diffs.
#[cfg(target_os = "linux")]
#[test]
fn released_pack_pages_read_the_same_again() {
    let fx = Fixture::build("packed.sh");
    let repo = git::open(&fx.root).unwrap();
    let pack = std::fs::read_dir(fx.root.join(".git/objects/pack"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension() == Some(OsStr::new("pack")))
        .unwrap();
    let read = || {
        let history = git::walk(&repo, &WalkOptions::default()).unwrap();
        let requests: Vec<DiffRequest> = history.commits.iter().map(|c| DiffRequest::whole(c.id)).collect();
        let diffs = git::diffs_for(&repo, &requests, DiffDetail::Lines).unwrap();
        (history, diffs)
    };
    let (history, diffs) = read();
    assert_eq!(history.commits.len(), 2);
    assert!(resident_kb(&pack) > 0, "the pack was read through its mapping");
    git::release_pack_pages();
    assert_eq!(
        resident_kb(&pack),
        0,
        "no page of the pack is resident after the release"
    );
    let (again, diffs_again) = read();
    assert_eq!((again, diffs_again), (history, diffs));
    assert!(resident_kb(&pack) > 0);
}

/// A clone that borrows its objects (`git clone --shared`: alternates) reads them from the other repository's pack,
/// and that pack's pages are released too.
#[cfg(target_os = "linux")]
#[test]
fn released_pack_pages_include_borrowed_packs() {
    let fx = Fixture::build("packed.sh");
    let shared = fx.root.parent().unwrap().join("shared.git");
    let status = testenv::isolated("git", &fx.home, &fx.home)
        .args(["clone", "--quiet", "--bare", "--shared"])
        .arg(&fx.root)
        .arg(&shared)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(shared.join("objects/info/alternates").is_file());
    let repo = git::open(&shared).unwrap();
    let pack = std::fs::read_dir(fx.root.join(".git/objects/pack"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension() == Some(OsStr::new("pack")))
        .unwrap();
    let history = git::walk(&repo, &WalkOptions::default()).unwrap();
    let requests: Vec<DiffRequest> = history.commits.iter().map(|c| DiffRequest::whole(c.id)).collect();
    git::diffs_for(&repo, &requests, DiffDetail::Lines).unwrap();
    assert!(resident_kb(&pack) > 0, "the borrowed pack was read through its mapping");
    git::release_pack_pages();
    assert_eq!(
        resident_kb(&pack),
        0,
        "no page of the borrowed pack is resident after the release"
    );
}
