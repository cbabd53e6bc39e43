//! `reflect-hook` end to end: the real binary, run as Claude Code runs it, in temporary git repositories.

use std::collections::BTreeSet;
use std::path::Path;

use e2e::{Sandbox, files_in, sidecars, stop_payload, write};
use serde_json::{Value, json};

const SOLO: (&str, &str) = ("REFLECTION_MODE", "solo");

fn assert_silent_success(output: &std::process::Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stdout.is_empty(),
        "stdout must stay empty: {:?}",
        String::from_utf8_lossy(&output.stdout)
    );
}

fn only_sidecar(dir: &Path) -> Value {
    let mut all = sidecars(dir);
    assert_eq!(
        all.len(),
        1,
        "expected one sidecar in {}: {:?}",
        dir.display(),
        files_in(dir)
    );
    all.remove(0).1
}

fn reflections(repo: &Path) -> std::path::PathBuf {
    repo.join(".mosaic/reflections")
}

// PRD §9.1: mode unset, off or unknown ⇒ strict no-op.
#[test]
fn mode_unset_off_or_unknown_writes_nothing_and_creates_no_directory() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", "fn login() {}\n")]);
    write(&repo.join("src/auth.rs"), "fn login() { todo!() }\n");
    for env in [
        &[][..],
        &[("REFLECTION_MODE", "off")],
        &[("REFLECTION_MODE", "verbose")],
    ] {
        let output = sandbox.hook(&repo, &stop_payload("s1", &repo), env);
        assert_silent_success(&output);
        assert!(output.stderr.is_empty());
        assert!(!repo.join(".mosaic").exists(), "{env:?} created .mosaic/");
    }
}

// PRD §9.2: solo mode writes a schema-valid sidecar with the right mechanical fields; degraded without input.
#[test]
fn solo_mode_writes_mechanical_fields_and_marks_a_missing_self_report_degraded() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo(
        "billing-api",
        &[("README.md", "# api\n"), ("src/db/schema.sql", "create table t();\n")],
    );
    write(&repo.join("src/db/schema.sql"), "create table t(id int);\n");
    write(&repo.join("docs/usage.md"), "usage\n");

    let output = sandbox.hook(&repo, &stop_payload("sess-42", &repo), &[SOLO]);
    assert_silent_success(&output);
    let sidecar = only_sidecar(&reflections(&repo));
    assert_eq!(sidecar["schema"], "reflection.v1");
    assert_eq!(sidecar["session_id"], "sess-42");
    assert_eq!(sidecar["repo"], "billing-api");
    assert_eq!(sidecar["task_ref"], "billing-api#main");
    assert_eq!(sidecar["agent"], "unknown");
    assert_eq!(sidecar["files_changed"], json!(["docs/usage.md", "src/db/schema.sql"]));
    assert_eq!(
        sidecar["risk"],
        json!({"needs_review": true, "score": 0.9, "surface": "data", "reason": "data surface (weight 0.9) in: src/db/schema.sql"})
    );
    assert_eq!(sidecar["confidence"], Value::Null);
    assert_eq!(sidecar["most_likely_wrong"], Value::Null);
    assert_eq!(sidecar["known_not_in_diff"], Value::Null);
    assert_eq!(
        sidecar["provenance"],
        json!({"source": "stop-hook", "reflection_attempt": 1, "degraded": true, "reflection_mode": "solo"})
    );
}

#[test]
fn self_report_is_merged_redacted_and_env_overrides_apply() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("web", &[("apps/web/src/components/Button.tsx", "export {}\n")]);
    write(
        &repo.join("apps/web/src/components/Button.tsx"),
        "export const B = 1;\n",
    );
    write(
        &repo.join(".mosaic/reflection-input.json"),
        &json!({
            "confidence": 0.75,
            "most_likely_wrong": {"surface": "ui", "description": "focus ring; tested with token=abc123secret only"},
            "known_not_in_diff": "staging key is sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA, not rotated",
            "session_id": "s-ui"
        })
        .to_string(),
    );
    let env = [
        ("REFLECTION_MODE", "orchestrated"),
        ("REFLECTION_AGENT", "frontend-dev"),
        ("REFLECTION_TASK_REF", "WEB-12"),
        ("REFLECTION_RISK_THRESHOLD", "0.3"),
    ];
    let output = sandbox.hook(&repo, &stop_payload("s-ui", &repo), &env);
    assert_silent_success(&output);
    let sidecar = only_sidecar(&reflections(&repo));
    assert_eq!(sidecar["confidence"], 0.75);
    assert_eq!(
        sidecar["most_likely_wrong"],
        json!({"surface": "ui", "description": "focus ring; tested with token=[REDACTED] only"})
    );
    assert_eq!(sidecar["known_not_in_diff"], "staging key is [REDACTED], not rotated");
    assert_eq!(sidecar["agent"], "frontend-dev");
    assert_eq!(sidecar["task_ref"], "WEB-12");
    assert_eq!(sidecar["risk"]["surface"], "ui");
    assert_eq!(
        sidecar["risk"]["needs_review"], true,
        "threshold 0.3 puts ui (0.4) under review"
    );
    assert_eq!(
        sidecar["files_changed"],
        json!(["apps/web/src/components/Button.tsx"]),
        ".mosaic/ is never listed"
    );
    assert_eq!(sidecar["provenance"]["degraded"], false);
    assert_eq!(sidecar["provenance"]["reflection_mode"], "orchestrated");
}

#[test]
fn attempts_count_up_and_a_report_from_an_earlier_turn_or_other_session_is_not_merged() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("svc", &[("main.go", "package main\n")]);
    let input = repo.join(".mosaic/reflection-input.json");
    write(&input, r#"{"confidence": 0.9}"#);
    let first = sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]);
    assert_silent_success(&first);
    // Second turn: the agent did not write a new report, so the old one must not be reused.
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]));
    // Third turn: a fresh report, but for another session.
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&input, r#"{"confidence": 0.4, "session_id": "someone-else"}"#);
    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]));
    // Fourth turn: a fresh report for this session.
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&input, r#"{"confidence": 0.6, "session_id": "s1"}"#);
    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]));

    let all = sidecars(&reflections(&repo));
    let summary: Vec<(u64, Value, bool)> = all
        .iter()
        .map(|(_, doc)| {
            (
                doc["provenance"]["reflection_attempt"].as_u64().unwrap(),
                doc["confidence"].clone(),
                doc["provenance"]["degraded"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, json!(0.9), false),
            (2, Value::Null, true),
            (3, Value::Null, true),
            (4, json!(0.6), false)
        ]
    );
}

// Committed-but-unpushed, staged, unstaged and untracked work all count; ignored files and .mosaic/ never do.
#[test]
fn change_surface_covers_unpushed_staged_unstaged_and_untracked_work() {
    let sandbox = Sandbox::new();
    let origin = sandbox.path().join("origin.git");
    sandbox.git(
        sandbox.path(),
        &[
            "init",
            "--quiet",
            "--bare",
            "--initial-branch=main",
            origin.to_str().unwrap(),
        ],
    );
    let seed = sandbox.repo(
        "seed",
        &[
            ("src/lib.rs", "pub fn a() {}\n"),
            (".gitignore", "target/\n"),
            ("pushed.txt", "x\n"),
        ],
    );
    sandbox.git(&seed, &["push", "--quiet", origin.to_str().unwrap(), "main"]);
    let work = sandbox.path().join("work");
    sandbox.git(
        sandbox.path(),
        &["clone", "--quiet", origin.to_str().unwrap(), work.to_str().unwrap()],
    );

    write(&work.join("src/committed.rs"), "pub fn c() {}\n");
    sandbox.git(&work, &["add", "src/committed.rs"]);
    sandbox.git(&work, &["commit", "--quiet", "-m", "feat: committed, not pushed"]);
    write(&work.join("src/staged.rs"), "pub fn s() {}\n");
    sandbox.git(&work, &["add", "src/staged.rs"]);
    write(&work.join("src/lib.rs"), "pub fn a() { /* unstaged */ }\n");
    write(&work.join("notes/untracked/deep.txt"), "u\n");
    write(&work.join("target/debug/ignored.o"), "ignored\n");
    write(&work.join(".mosaic/reflection-input.json"), r#"{"confidence": 0.5}"#);

    let output = sandbox.hook(&work, &stop_payload("s1", &work), &[SOLO]);
    assert_silent_success(&output);
    let sidecar = only_sidecar(&reflections(&work));
    assert_eq!(
        sidecar["files_changed"],
        json!([
            "notes/untracked/deep.txt",
            "src/committed.rs",
            "src/lib.rs",
            "src/staged.rs"
        ])
    );
    assert_eq!(sidecar["task_ref"], "work#main");

    // Once pushed, the committed file is no longer part of the surface.
    sandbox.git(&work, &["push", "--quiet", "origin", "main"]);
    std::fs::remove_dir_all(reflections(&work)).unwrap();
    assert_silent_success(&sandbox.hook(&work, &stop_payload("s2", &work), &[SOLO]));
    assert_eq!(
        only_sidecar(&reflections(&work))["files_changed"],
        json!(["notes/untracked/deep.txt", "src/lib.rs", "src/staged.rs"])
    );
}

#[test]
fn a_branch_without_upstream_counts_commits_since_the_default_branch_and_reflection_base_overrides() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("lib", &[("src/lib.rs", "\n")]);
    sandbox.git(&repo, &["checkout", "--quiet", "-b", "agent/task-7"]);
    write(&repo.join("src/first.rs"), "1\n");
    sandbox.git(&repo, &["add", "--all"]);
    sandbox.git(&repo, &["commit", "--quiet", "-m", "one"]);
    let after_first = sandbox.git(&repo, &["rev-parse", "HEAD"]);
    write(&repo.join("Cargo.toml"), "[package]\n");
    sandbox.git(&repo, &["add", "--all"]);
    sandbox.git(&repo, &["commit", "--quiet", "-m", "two"]);

    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]));
    let sidecar = only_sidecar(&reflections(&repo));
    assert_eq!(sidecar["files_changed"], json!(["Cargo.toml", "src/first.rs"]));
    assert_eq!(sidecar["task_ref"], "lib#agent/task-7");
    assert_eq!(sidecar["risk"]["surface"], "build");

    std::fs::remove_dir_all(reflections(&repo)).unwrap();
    let output = sandbox.hook(
        &repo,
        &stop_payload("s1", &repo),
        &[SOLO, ("REFLECTION_BASE", &after_first)],
    );
    assert_silent_success(&output);
    assert_eq!(
        only_sidecar(&reflections(&repo))["files_changed"],
        json!(["Cargo.toml"])
    );
}

/// A relative `cwd` (`"."`, as a hand-written payload gives) is the process directory: the sidecar names the
/// repository and its branch (it wrote `"repo": ""` and `task_ref: "#main"` before).
#[test]
fn a_relative_cwd_is_taken_from_the_process_directory() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("relative", &[("a.txt", "a\n")]);
    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", Path::new(".")), &[SOLO]));
    let sidecar = only_sidecar(&reflections(&repo));
    assert_eq!(sidecar["repo"], "relative");
    assert_eq!(sidecar["task_ref"], "relative#main");
}

#[test]
fn an_empty_change_still_writes_a_sidecar() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("clean", &[("a.txt", "a\n")]);
    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]));
    let sidecar = only_sidecar(&reflections(&repo));
    assert_eq!(sidecar["files_changed"], json!([]));
    assert_eq!(
        sidecar["risk"],
        json!({"needs_review": false, "score": 0.0, "surface": "none", "reason": "no files changed"})
    );
}

#[test]
fn subagent_stops_get_their_own_sidecars_and_agent_type() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("mono", &[("a.txt", "a\n")]);
    let payload = json!({"session_id": "s1", "cwd": repo, "hook_event_name": "SubagentStop", "agent_id": "ag-9",
                         "agent_type": "Explore", "stop_hook_active": false});
    assert_silent_success(&sandbox.hook(&repo, payload.to_string().as_bytes(), &[SOLO]));
    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]));
    let all = sidecars(&reflections(&repo));
    assert_eq!(all.len(), 2);
    let subagent = all
        .iter()
        .find(|(name, _)| name.starts_with("s1-ag-9-"))
        .expect("subagent sidecar");
    assert_eq!(subagent.1["agent"], "Explore");
    assert_eq!(subagent.1["session_id"], "s1");
    let main = all.iter().find(|(name, _)| !name.starts_with("s1-ag-9-")).unwrap();
    assert_eq!(
        main.1["provenance"]["reflection_attempt"], 1,
        "the subagent's sidecar is not the session's attempt"
    );
}

/// Runs the hook and checks the invariants every bad input must keep: exit 0, no stdout, no partial file, and
/// every sidecar present valid. Returns the sidecars written.
fn run_bad_input(sandbox: &Sandbox, cwd: &Path, payload: &[u8], env: &[(&str, &str)], dir: &Path) -> Vec<Value> {
    let output = sandbox.hook(cwd, payload, env);
    assert_silent_success(&output);
    let names = files_in(dir);
    assert!(
        names.iter().all(|name| !name.starts_with(".tmp-")),
        "partial file left: {names:?}"
    );
    sidecars(dir).into_iter().map(|(_, doc)| doc).collect()
}

#[test]
fn bad_payloads_never_fail_and_fall_back_to_unknown_session() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    let junk = vec![b'#'; 10 * 1024 * 1024];
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty stdin", Vec::new()),
        ("non-JSON", b"this is not json".to_vec()),
        ("10 MB of junk", junk),
        ("a JSON array", b"[1, 2, 3]".to_vec()),
        ("missing session_id", br#"{"hook_event_name": "Stop"}"#.to_vec()),
    ];
    for (what, payload) in cases {
        let dir = reflections(&repo);
        let written = run_bad_input(&sandbox, &repo, &payload, &[SOLO], &dir);
        assert_eq!(written.len(), 1, "{what}");
        assert_eq!(written[0]["session_id"], "unknown", "{what}");
        assert_eq!(
            written[0]["repo"], "r",
            "{what}: the process directory's repository is used"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_path_like_session_id_cannot_escape_the_reflections_directory() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    let payload = json!({"session_id": "../../etc/passwd", "cwd": repo}).to_string();
    let written = run_bad_input(&sandbox, &repo, payload.as_bytes(), &[SOLO], &reflections(&repo));
    assert_eq!(written.len(), 1);
    assert_eq!(
        written[0]["session_id"], "../../etc/passwd",
        "the field keeps the id; only the file name is sanitised"
    );
    let names = files_in(&reflections(&repo));
    assert!(names[0].starts_with("_.._etc_passwd-"), "{names:?}");
    // Nothing but our two entries (the .gitignore the hook creates, the sidecar directory) lands in .mosaic/.
    assert_eq!(files_in(&repo.join(".mosaic")), vec![".gitignore", "reflections"]);
}

#[test]
fn directories_that_are_not_work_trees_degrade_but_still_capture() {
    let sandbox = Sandbox::new();
    let plain = sandbox.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let bare = sandbox.path().join("bare.git");
    sandbox.git(sandbox.path(), &["init", "--quiet", "--bare", bare.to_str().unwrap()]);

    // cwd not a repository: the directory itself stands in, with no files and degraded = true.
    let written = run_bad_input(
        &sandbox,
        &plain,
        &stop_payload("s1", &plain),
        &[SOLO],
        &reflections(&plain),
    );
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["files_changed"], json!([]));
    assert_eq!(written[0]["provenance"]["degraded"], true);
    assert_eq!(written[0]["repo"], "plain");

    // A bare repository has no work tree: same treatment, inside the directory the hook was started in.
    let written = run_bad_input(
        &sandbox,
        &bare,
        &stop_payload("s1", &bare),
        &[SOLO],
        &reflections(&bare),
    );
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["provenance"]["degraded"], true);

    // A cwd that does not exist falls back to CLAUDE_PROJECT_DIR's repository.
    let repo = sandbox.repo("project", &[("a.txt", "a\n")]);
    write(&repo.join("src/new.rs"), "\n");
    let missing = sandbox.path().join("gone");
    let env = [SOLO, ("CLAUDE_PROJECT_DIR", repo.to_str().unwrap())];
    let written = run_bad_input(
        &sandbox,
        &plain,
        &stop_payload("s1", &missing),
        &env,
        &reflections(&repo),
    );
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["files_changed"], json!(["src/new.rs"]));
    assert_eq!(written[0]["repo"], "project");
}

#[test]
fn an_unborn_branch_lists_its_files() {
    let sandbox = Sandbox::new();
    let repo = sandbox.path().join("fresh");
    std::fs::create_dir_all(&repo).unwrap();
    sandbox.git(&repo, &["init", "--quiet", "--initial-branch=trunk"]);
    write(&repo.join("src/auth/token.rs"), "\n");
    write(&repo.join("README.md"), "\n");
    sandbox.git(&repo, &["add", "README.md"]);
    let written = run_bad_input(
        &sandbox,
        &repo,
        &stop_payload("s1", &repo),
        &[SOLO],
        &reflections(&repo),
    );
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["files_changed"], json!(["README.md", "src/auth/token.rs"]));
    assert_eq!(written[0]["task_ref"], "fresh#trunk");
    assert_eq!(written[0]["risk"]["surface"], "auth");
}

#[test]
fn bad_self_reports_degrade_without_merging_anything() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    let input = repo.join(".mosaic/reflection-input.json");
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("malformed JSON", Some("{confidence: high")),
        ("confidence 1.5", Some(r#"{"confidence": 1.5}"#)),
        (
            "unknown surface",
            Some(r#"{"most_likely_wrong": {"surface": "kernel", "description": "x"}}"#),
        ),
        ("wrong top-level type", Some(r#"["confidence", 0.5]"#)),
        ("unreadable (a directory)", None),
    ];
    for (what, contents) in cases {
        let _ = std::fs::remove_file(&input);
        let _ = std::fs::remove_dir_all(&input);
        match contents {
            Some(text) => write(&input, text),
            None => std::fs::create_dir_all(&input).unwrap(),
        }
        let dir = reflections(&repo);
        let written = run_bad_input(&sandbox, &repo, &stop_payload("s1", &repo), &[SOLO], &dir);
        assert_eq!(written.len(), 1, "{what}");
        assert_eq!(written[0]["confidence"], Value::Null, "{what}");
        assert_eq!(written[0]["most_likely_wrong"], Value::Null, "{what}");
        assert_eq!(written[0]["provenance"]["degraded"], true, "{what}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// `REFLECTION_INPUT=/dev/zero`, `/dev/urandom` or a FIFO with no writer once made the hook read forever (7.8 GB
/// after 5 s, lock held). Now each is refused before a byte is read: the run ends at once with a degraded sidecar.
#[cfg(unix)]
#[test]
fn devices_and_fifos_as_self_report_never_hang_the_hook() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    let fifo = repo.join(".mosaic/reflection-input.json");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for input in ["/dev/zero", "/dev/urandom", ""] {
        let mut env = vec![SOLO];
        if !input.is_empty() {
            env.push(("REFLECTION_INPUT", input));
        }
        let dir = reflections(&repo);
        let started = std::time::Instant::now();
        let written = run_bad_input(&sandbox, &repo, &stop_payload("s1", &repo), &env, &dir);
        let what = if input.is_empty() {
            "a FIFO at the default path"
        } else {
            input
        };
        // Far under the default budget: a read that had started would run until the budget or forever.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{what}: {:?}",
            started.elapsed()
        );
        assert_eq!(written.len(), 1, "{what}");
        assert_eq!(written[0]["confidence"], Value::Null, "{what}");
        assert_eq!(written[0]["provenance"]["degraded"], true, "{what}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn session_ids_that_sanitise_alike_keep_their_own_attempt_counters() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    for id in ["a/b", "a_b", "a/b"] {
        let output = sandbox.hook(&repo, &stop_payload(id, &repo), &[SOLO]);
        assert_silent_success(&output);
    }
    let mut attempts: Vec<(String, i64)> = sidecars(&reflections(&repo))
        .into_iter()
        .map(|(_, doc)| {
            (
                doc["session_id"].as_str().unwrap().to_string(),
                doc["provenance"]["reflection_attempt"].as_i64().unwrap(),
            )
        })
        .collect();
    attempts.sort();
    assert_eq!(
        attempts,
        vec![("a/b".to_string(), 1), ("a/b".to_string(), 2), ("a_b".to_string(), 1)]
    );
}

#[test]
fn an_unwritable_reflections_directory_is_silent_and_leaves_nothing() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    // A regular file where the directory should be: no process, root included, can create it.
    write(&repo.join("blocked"), "a file\n");
    let env = [
        SOLO,
        ("REFLECTION_DIR", "blocked/reflections"),
        ("REFLECTION_DEBUG", "1"),
    ];
    let output = sandbox.hook(&repo, &stop_payload("s1", &repo), &env);
    assert_silent_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot create the reflections directory"),
        "debug output explains: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(repo.join("blocked")).unwrap(), "a file\n");

    // A directory without write permission (meaningful when not running as root).
    let readonly = repo.join("ro");
    std::fs::create_dir_all(&readonly).unwrap();
    let mut permissions = std::fs::metadata(&readonly).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o555);
    std::fs::set_permissions(&readonly, permissions).unwrap();
    let written = run_bad_input(
        &sandbox,
        &repo,
        &stop_payload("s1", &repo),
        &[SOLO, ("REFLECTION_DIR", "ro")],
        &readonly,
    );
    assert!(written.len() <= 1, "at most one whole sidecar (root may write anyway)");
}

#[test]
fn the_time_budget_writes_what_is_known_marked_degraded() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("big", &[("a.txt", "a\n")]);
    for dir in 0..40 {
        for file in 0..50 {
            write(&repo.join(format!("gen/{dir:03}/{file:03}.txt")), "x");
        }
    }
    // A valid self-report, so that `degraded` can only come from the budget.
    write(&repo.join(".mosaic/reflection-input.json"), r#"{"confidence": 0.5}"#);
    // 1 ms cannot cover opening the repository and walking 2,000 files; the payload may be missed too, so the
    // session also comes from the environment.
    let env = [SOLO, ("REFLECTION_BUDGET_MS", "1"), ("CLAUDE_CODE_SESSION_ID", "s1")];
    let started = std::time::Instant::now();
    let output = sandbox.hook(&repo, &stop_payload("s1", &repo), &env);
    let elapsed = started.elapsed();
    assert_silent_success(&output);
    let sidecar = only_sidecar(&reflections(&repo));
    assert_eq!(sidecar["session_id"], "s1");
    assert_eq!(sidecar["confidence"], 0.5);
    assert_eq!(sidecar["provenance"]["degraded"], true);
    let listed = sidecar["files_changed"].as_array().unwrap();
    assert!(
        listed.len() < 2_000,
        "the scan was cut short, yet all {} files were listed",
        listed.len()
    );
    assert!(
        listed.iter().all(|path| path.as_str().unwrap().starts_with("gen/")),
        "only real paths: {listed:?}"
    );
    // Not a performance assertion: only that the budget, not the scan, bounded the run (generously).
    assert!(elapsed < std::time::Duration::from_secs(5), "took {elapsed:?}");

    std::fs::remove_dir_all(reflections(&repo)).unwrap();
    assert_silent_success(&sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]));
    let complete = only_sidecar(&reflections(&repo));
    assert_eq!(complete["files_changed"].as_array().unwrap().len(), 2_000);
    assert_eq!(
        complete["provenance"]["degraded"], false,
        "with the default budget the scan completes"
    );
}

#[test]
fn concurrent_runs_never_collide() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    write(&repo.join("src/session.rs"), "\n");

    // 20 at once for one session: runs that overlap are turned away by the lock; none may clash.
    let payload = stop_payload("same", &repo);
    let dir = reflections(&repo);
    let parallel: Vec<_> = (0..20)
        .map(|_| {
            let payload = payload.clone();
            let command = sandbox.hook_command(&repo, &[SOLO]);
            std::thread::spawn(move || e2e::run_with_stdin(command, &payload))
        })
        .collect();
    for handle in parallel {
        assert_silent_success(&handle.join().unwrap());
    }
    let same: Vec<Value> = sidecars(&dir)
        .into_iter()
        .filter(|(name, _)| name.starts_with("same-"))
        .map(|(_, d)| d)
        .collect();
    assert!(!same.is_empty());
    let attempts: Vec<u64> = same
        .iter()
        .map(|doc| doc["provenance"]["reflection_attempt"].as_u64().unwrap())
        .collect();
    let unique: BTreeSet<u64> = attempts.iter().copied().collect();
    assert_eq!(unique.len(), attempts.len(), "duplicate attempt numbers: {attempts:?}");
    assert_eq!(
        unique,
        (1..=attempts.len() as u64).collect(),
        "attempts are numbered 1..n without gaps"
    );

    // 20 at once for distinct sessions: every one writes its own first attempt.
    let distinct: Vec<_> = (0..20)
        .map(|i| {
            let payload = stop_payload(&format!("distinct-{i:02}"), &repo);
            let command = sandbox.hook_command(&repo, &[SOLO]);
            std::thread::spawn(move || e2e::run_with_stdin(command, &payload))
        })
        .collect();
    for handle in distinct {
        assert_silent_success(&handle.join().unwrap());
    }
    let distinct: Vec<Value> = sidecars(&dir)
        .into_iter()
        .filter(|(name, _)| name.starts_with("distinct-"))
        .map(|(_, d)| d)
        .collect();
    assert_eq!(distinct.len(), 20);
    assert!(distinct.iter().all(|doc| doc["provenance"]["reflection_attempt"] == 1));
    assert!(
        files_in(&dir).iter().all(|name| !name.starts_with('.')),
        "no temp or lock files remain: {:?}",
        files_in(&dir)
    );
}

#[test]
fn diagnostics_appear_only_when_asked_for() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    let quiet = sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO]);
    assert_silent_success(&quiet);
    assert!(
        quiet.stderr.is_empty(),
        "no diagnostics without REFLECTION_DEBUG: {:?}",
        String::from_utf8_lossy(&quiet.stderr)
    );

    let to_stderr = sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO, ("REFLECTION_DEBUG", "1")]);
    assert_silent_success(&to_stderr);
    let stderr = String::from_utf8_lossy(&to_stderr.stderr);
    assert!(stderr.contains("ms  change surface scanned"), "{stderr}");
    assert!(
        stderr.lines().any(|line| line.starts_with("reflect-hook: wrote ")),
        "{stderr}"
    );

    let to_file = sandbox.hook(&repo, &stop_payload("s1", &repo), &[SOLO, ("REFLECTION_DEBUG", "file")]);
    assert_silent_success(&to_file);
    assert!(to_file.stderr.is_empty());
    let log = std::fs::read_to_string(reflections(&repo).join("reflect-hook.log")).unwrap();
    assert!(log.contains("reflect-hook: wrote "), "{log}");
    // The log is not a sidecar, and the sidecars stay valid and numbered.
    let attempts: Vec<u64> = sidecars(&reflections(&repo))
        .iter()
        .map(|(_, doc)| doc["provenance"]["reflection_attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, vec![1, 2, 3]);
}
