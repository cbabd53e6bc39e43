//! The documents run as printed (issue 20): every command in a ```sh block of README.md and docs/*.md is run, in
//! order, in a temporary copy of the repository, and must exit as documented — 0, unless its line ends with a
//! comment saying `# exit N`.
//!
//! The copy holds the files `git ls-files` lists (tracked, and new ones not ignored, so uncommitted edits are tested
//! too), committed into a fresh repository with the sandbox's isolated git. `phase0` and `reflect-hook` are the
//! binaries under test, first on `PATH`; `cargo run [--release] --bin phase0 -- ARGS` and the `just` recipes that
//! only call `phase0` run as `phase0 …`. A command that cannot run here is listed in [`SKIPPED`] with the reason; a
//! command that is neither runnable (its programs are all in [`PROGRAMS`]) nor listed fails the test, and so does a
//! listed one that no longer appears in any document. So the test cannot pass by not running something new.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use e2e::{Sandbox, binary};

/// Every document whose `sh` blocks are run, relative to the repository root. `docs/*.md` must all be here.
const DOCUMENTS: &[&str] = &[
    "README.md",
    "docs/commands.md",
    "docs/development.md",
    "docs/p1.md",
    "docs/p2.md",
    "docs/p3.md",
    "docs/reflect-hook.md",
    "docs/weekly.md",
];

/// Commands that are not run, exactly as printed (continuation lines joined, the trailing comment removed), and why.
const SKIPPED: &[(&str, &str)] = &[
    (
        "cargo test --workspace",
        "the whole test suite, of which this test is a part",
    ),
    (
        "cargo build --release --bins",
        "a release build of several minutes; the test runs the binaries Cargo built for it",
    ),
    (
        "export PATH=\"$PWD/target/release:$PATH\"",
        "the test puts the binaries under test first on PATH itself",
    ),
    ("REFLECTION_MODE=solo claude", "needs a real Claude Code"),
    (
        "gh issue list --state all --limit 10000 --json \
         number,title,state,stateReason,createdAt,closedAt,labels,body,closedByPullRequestsReferences > issues.json",
        "needs the network and a GitHub login",
    ),
    (
        "phase0 p3 issues.json --repo .",
        "reads the export of the gh command before it",
    ),
    (
        "just hook-install",
        "a release build, then writes ~/.local/bin and ~/.claude/settings.json",
    ),
    (
        "just hook-install --scope project",
        "a release build, then writes ~/.local/bin",
    ),
    (
        "just hook-install --scope local --subagents",
        "a release build, then writes ~/.local/bin",
    ),
    ("$EDITOR audit.csv", "a person reads and fills the sheet"),
];

/// The programs a runnable command may call (every stage of a pipeline, every part of an `&&` list).
const PROGRAMS: &[&str] = &["phase0", "reflect-hook", "git", "echo", "cp", "cat"];

/// Prefixes rewritten to the binaries under test: what the `cargo run` forms and the `just` recipes run.
const REWRITES: &[(&str, &str)] = &[
    ("cargo run --release --bin phase0 --", "phase0"),
    ("cargo run --bin phase0 --", "phase0"),
    ("cargo run --release --bin reflect-hook --", "reflect-hook"),
    ("just demo", "phase0 demo"),
    ("just p1", "phase0 p1"),
    ("just p2", "phase0 p2"),
    ("just p3", "phase0 p3"),
    ("just corpus", "phase0 corpus"),
    ("just weekly", "phase0 weekly"),
    ("just validate", "reflect-hook validate"),
];

/// A command of a document: where it is, its text and the exit code it documents.
#[derive(Debug)]
struct Documented {
    line: usize,
    text: String,
    exit: i32,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// The commands of every ```sh block of `markdown`, in order.
fn commands(markdown: &str) -> Vec<Documented> {
    let mut found = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (index, raw) in markdown.lines().enumerate() {
        let line = raw.trim();
        if !in_block {
            in_block = line == "```sh";
            continue;
        }
        if line.starts_with("```") {
            assert!(
                pending.is_none(),
                "line {}: a continuation runs out of its block",
                index + 1
            );
            in_block = false;
            continue;
        }
        let (start, mut text) = pending.take().unwrap_or((index + 1, String::new()));
        if let Some(head) = line.strip_suffix('\\') {
            text.push_str(head.trim());
            text.push(' ');
            pending = Some((start, text));
            continue;
        }
        text.push_str(line);
        let (command, comment) = split_comment(&text);
        if command.is_empty() {
            continue;
        }
        found.push(Documented {
            line: start,
            text: command.to_string(),
            exit: comment.and_then(documented_exit).unwrap_or(0),
        });
    }
    assert!(!in_block, "a ```sh block is not closed");
    found
}

/// The command and its trailing comment (a `#` outside quotes that starts a word).
fn split_comment(text: &str) -> (&str, Option<&str>) {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => return (text[..at].trim(), Some(&text[at + 1..])),
            None => {}
        }
        previous = c;
    }
    (text.trim(), None)
}

/// `N` from a comment saying `exit N`.
fn documented_exit(comment: &str) -> Option<i32> {
    let words: Vec<&str> = comment.split_whitespace().collect();
    words.windows(2).find_map(|pair| {
        let code = pair[1].trim_end_matches([':', ',', ';', '.', ')']);
        (pair[0].trim_start_matches('(') == "exit")
            .then(|| code.parse().ok())
            .flatten()
    })
}

fn rewrite(command: &str) -> String {
    for (from, to) in REWRITES {
        if let Some(rest) = command.strip_prefix(from)
            && (rest.is_empty() || rest.starts_with(' '))
        {
            return format!("{to}{rest}");
        }
    }
    command.to_string()
}

/// The program of every stage of `command` (split at `|`, `&&`, `||`, `;` outside quotes), environment
/// assignments (`NAME=value`) skipped.
fn programs(command: &str) -> Vec<String> {
    let mut stages = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '|' || c == '&' || c == ';' => {
                stages.push(String::new());
                continue;
            }
            None => {}
        }
        stages.last_mut().unwrap().push(c);
    }
    stages
        .iter()
        .filter(|stage| !stage.trim().is_empty())
        .map(|stage| {
            stage
                .split_whitespace()
                .find(|word| {
                    !word.split_once('=').is_some_and(|(name, _)| {
                        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    })
                })
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

fn skip_reason(command: &str) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(skipped, _)| *skipped == command)
        .map(|(_, why)| *why)
}

/// The repository's files as `git ls-files` lists them (tracked, and untracked ones not ignored), copied into a
/// fresh repository with one commit.
fn copy_of_repository(sandbox: &Sandbox) -> PathBuf {
    let root = root();
    let listed = sandbox
        .git_command(&root)
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .output()
        .expect("git runs");
    assert!(
        listed.status.success(),
        "git ls-files in {}: {}",
        root.display(),
        String::from_utf8_lossy(&listed.stderr)
    );
    let copy = sandbox.path().join("phase0");
    let mut copied = 0;
    for name in listed.stdout.split(|&b| b == 0).filter(|name| !name.is_empty()) {
        let name = std::str::from_utf8(name).expect("UTF-8 file names");
        let from = root.join(name);
        if !from.is_file() {
            continue; // deleted in the work tree, not yet in the index
        }
        let to = copy.join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copying {name}: {e}"));
        copied += 1;
    }
    assert!(copied > 100, "only {copied} files copied from {}", root.display());
    sandbox.git(&copy, &["init", "--quiet", "--initial-branch=main"]);
    sandbox.git(&copy, &["add", "--all"]);
    sandbox.git(&copy, &["commit", "--quiet", "-m", "a copy of phase0"]);
    copy
}

/// A directory holding the binaries under test by their names.
fn binaries(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.path().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["phase0", "reflect-hook"] {
        std::os::unix::fs::symlink(binary(name), dir.join(name)).unwrap();
    }
    dir
}

/// Runs `command` with bash in `dir`, in a clean environment; its exit code (`None`: killed after `limit`), stdout
/// and stderr.
fn run(sandbox: &Sandbox, bin: &Path, dir: &Path, command: &str, limit: Duration) -> (Option<i32>, String, String) {
    let path = std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let out = sandbox.path().join("out");
    let err = sandbox.path().join("err");
    let mut command_line = testenv::isolated("bash", dir, &sandbox.home());
    let mut child = testenv::with_fixture_identity(&mut command_line)
        .args(["-c", command])
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("bash starts");
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    (status.and_then(|s| s.code()), read(&out), read(&err))
}

/// Runs every command of `document` in a fresh copy of the repository; panics listing every one that failed.
fn document_runs_as_printed(document: &str) {
    let markdown = std::fs::read_to_string(root().join(document)).unwrap();
    let documented = commands(&markdown);
    assert!(!documented.is_empty(), "{document} shows no command in a ```sh block");
    let sandbox = Sandbox::new();
    let copy = copy_of_repository(&sandbox);
    let bin = binaries(&sandbox);
    let mut failures = Vec::new();
    let mut ran = 0;
    for command in &documented {
        let place = format!("{document}:{}: `{}`", command.line, command.text);
        if skip_reason(&command.text).is_some() {
            continue;
        }
        let runnable = rewrite(&command.text);
        let unknown: Vec<String> = programs(&runnable)
            .into_iter()
            .filter(|program| !PROGRAMS.contains(&program.as_str()))
            .collect();
        if !unknown.is_empty() {
            failures.push(format!(
                "{place}: calls {unknown:?}, which this test does not run: make it runnable or add it to SKIPPED with \
                 the reason"
            ));
            continue;
        }
        let (code, stdout, stderr) = run(&sandbox, &bin, &copy, &runnable, Duration::from_secs(60));
        ran += 1;
        if code != Some(command.exit) {
            failures.push(format!(
                "{place} (run as `{runnable}`): exit {code:?}, documented {}\n--- stdout\n{stdout}--- stderr\n{stderr}",
                command.exit
            ));
        } else if runnable.starts_with("phase0 p3") && stdout.contains(" 0 of 0 = undefined") {
            failures.push(format!(
                "{place}: every task censored (\"0 of 0 = undefined\"); give the sample its --as-of\n{stdout}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran > 0, "{document}: every command is skipped");
}

#[test]
fn readme() {
    document_runs_as_printed("README.md");
}

#[test]
fn docs_commands() {
    document_runs_as_printed("docs/commands.md");
}

#[test]
fn docs_development() {
    let markdown = std::fs::read_to_string(root().join("docs/development.md")).unwrap();
    if !commands(&markdown).is_empty() {
        document_runs_as_printed("docs/development.md");
    }
}

#[test]
fn docs_p1() {
    document_runs_as_printed("docs/p1.md");
}

#[test]
fn docs_p2() {
    document_runs_as_printed("docs/p2.md");
}

#[test]
fn docs_p3() {
    document_runs_as_printed("docs/p3.md");
}

#[test]
fn docs_reflect_hook() {
    document_runs_as_printed("docs/reflect-hook.md");
}

#[test]
fn docs_weekly() {
    document_runs_as_printed("docs/weekly.md");
}

/// Every document is run, and every skipped command is still shown somewhere (a stale entry would hide nothing,
/// but it would make the list lie).
#[test]
fn every_document_is_run_and_every_skip_is_current() {
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| format!("docs/{}", entry.unwrap().file_name().to_string_lossy()))
        .filter(|name| name.ends_with(".md"))
        .collect();
    on_disk.push("README.md".into());
    on_disk.sort();
    let mut listed: Vec<String> = DOCUMENTS.iter().map(|d| d.to_string()).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "DOCUMENTS (and a test per document) must name every docs/*.md"
    );
    let shown: Vec<String> = DOCUMENTS
        .iter()
        .flat_map(|document| commands(&std::fs::read_to_string(root().join(document)).unwrap()))
        .map(|command| command.text)
        .collect();
    for (skipped, _) in SKIPPED {
        assert!(
            shown.iter().any(|text| text == skipped),
            "SKIPPED lists `{skipped}`, which no document shows any more"
        );
    }
}

#[test]
fn commands_are_read_as_documented() {
    let markdown = "text\n```sh\nphase0 p1 x.jsonl   # the corpus\nphase0 demo --repo data \\\n  --out o   # exit 3: \
                    partial\n# a comment line\n\necho '# not a comment' | reflect-hook   # (exit 0)\n```\n```text\n\
                    $ not run\n```\n  ```sh\n  reflect-hook risk a\n  ```\n";
    let found = commands(markdown);
    let shown: Vec<(usize, &str, i32)> = found.iter().map(|c| (c.line, c.text.as_str(), c.exit)).collect();
    assert_eq!(
        shown,
        [
            (3, "phase0 p1 x.jsonl", 0),
            (4, "phase0 demo --repo data --out o", 3),
            (8, "echo '# not a comment' | reflect-hook", 0),
            (14, "reflect-hook risk a", 0),
        ]
    );
    assert_eq!(rewrite("cargo run --release --bin phase0 -- demo"), "phase0 demo");
    assert_eq!(rewrite("cargo run --bin phase0 -- demo --out o"), "phase0 demo --out o");
    assert_eq!(
        rewrite("just p1 --reflections d --repo ."),
        "phase0 p1 --reflections d --repo ."
    );
    assert_eq!(rewrite("just hook-install"), "just hook-install");
    assert_eq!(
        programs("echo '{\"a\": \"b|c\"}' | REFLECTION_MODE=solo reflect-hook && git log; cargo x"),
        ["echo", "reflect-hook", "git", "cargo"]
    );
}

/// The outputs the documents print name each embedded pre-registration by its sha256: they must be the files' own
/// (a rule or note changed in `experiments/*.toml` leaves a printed example stale otherwise).
#[test]
fn printed_preregistration_hashes_are_the_files() {
    use sha2::{Digest, Sha256};
    let mut checked = 0;
    for document in DOCUMENTS {
        let text = std::fs::read_to_string(root().join(document)).unwrap();
        for (number, line) in text.lines().enumerate() {
            let Some((before, hash)) = line.split_once(" (embedded) sha256 ") else {
                continue;
            };
            let file = before.split_whitespace().last().unwrap();
            let bytes = std::fs::read(root().join(file)).unwrap();
            let actual: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hash.trim(), actual, "{document}:{}: {file}", number + 1);
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked} printed hashes");
}
