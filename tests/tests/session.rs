//! A whole agent session played against the real `reflect-hook`: SessionStart asks for the self-report, four turns
//! answer (or not) in their final message, and the Stop hook turns each into a sidecar. Codex CLI's `notify` gets
//! the same treatment.

use std::path::Path;
use std::process::Output;

use e2e::{Sandbox, run_with_stdin, sidecars};
use serde_json::{Value, json};

const SOLO: (&str, &str) = ("REFLECTION_MODE", "solo");
const SESSION: &str = "sess-e2e";

fn session_start(sandbox: &Sandbox, repo: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = sandbox.hook_command(repo, env);
    command.arg("session-start");
    let payload = json!({"session_id": SESSION, "cwd": repo, "hook_event_name": "SessionStart", "source": "compact"});
    run_with_stdin(command, &serde_json::to_vec(&payload).unwrap())
}

fn stop(sandbox: &Sandbox, repo: &Path, last_message: &str) -> Output {
    let payload = json!({
        "session_id": SESSION, "transcript_path": "/nonexistent/transcript.jsonl", "cwd": repo,
        "hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": last_message,
    });
    sandbox.hook(
        repo,
        &serde_json::to_vec(&payload).unwrap(),
        &[SOLO, ("REFLECTION_DEBUG", "file")],
    )
}

/// Claude Code's rule for the Stop handler: exit 0 and nothing on stdout (stderr shown for a failure).
fn assert_exit_0_stdout_empty(output: &Output) {
    let seen = (output.status.code(), String::from_utf8_lossy(&output.stdout));
    assert_eq!(
        seen,
        (Some(0), "".into()),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn debug_log(repo: &Path) -> String {
    std::fs::read_to_string(repo.join(".mosaic/reflections/reflect-hook.log")).unwrap_or_default()
}

#[test]
fn a_session_asks_and_each_turn_s_answer_reaches_its_sidecar() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("shop", &[("src/cart.rs", "fn total() {}\n")]);

    // SessionStart: the request when on, nothing at all when off.
    let asked = session_start(&sandbox, &repo, &[SOLO]);
    assert_eq!(asked.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(asked.stdout).unwrap(),
        capture::hook::instructions::DEFAULT_TEMPLATE
    );
    assert!(asked.stderr.is_empty());
    for off in [&[][..], &[("REFLECTION_MODE", "off")]] {
        let silent = session_start(&sandbox, &repo, off);
        assert_eq!(silent.status.code(), Some(0));
        assert!(silent.stdout.is_empty() && silent.stderr.is_empty(), "{off:?}");
    }
    // A replacement template (documented: REFLECTION_INSTRUCTIONS) is printed instead.
    let custom = sandbox.path().join("ask.md");
    std::fs::write(&custom, "Say how sure you are.\n").unwrap();
    let asked = session_start(
        &sandbox,
        &repo,
        &[SOLO, ("REFLECTION_INSTRUCTIONS", custom.to_str().unwrap())],
    );
    assert_eq!(String::from_utf8(asked.stdout).unwrap(), "Say how sure you are.\n");
    assert!(!repo.join(".mosaic").exists(), "SessionStart writes nothing");

    // Turn 1: a block. Turn 2: none. Turn 3: a malformed block. Turn 4: a block holding a secret.
    let turns = [
        "Added the discount.\n\n```reflection\n{\"confidence\": 0.9, \"most_likely_wrong\": {\"surface\": \"ui\", \
         \"description\": \"rounding shown to the user\"}, \"known_not_in_diff\": \"checked by hand\"}\n```\n",
        "Renamed a variable; nothing else.",
        "Done.\n```reflection\n{\"confidence\": 0.6, \"most_likely_wrong\": {\"surface\": \"payments\"}}\n```",
        "Rotated the key.\n```reflection\n{\"confidence\": 0.35, \"most_likely_wrong\": {\"surface\": \"auth\", \
         \"description\": \"old key AKIAIOSFODNN7EXAMPLE may still be cached\"}, \
         \"known_not_in_diff\": \"token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 revoked\"}\n```",
    ];
    // The team commits each turn's work as it happens (the sandbox's git otherwise dates every commit 2026-01-02).
    let git_at = |days_later: i64, args: &[&str]| {
        let now = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24 * days_later)).to_string();
        let output = sandbox
            .git_command(&repo)
            .args(args)
            .env("GIT_AUTHOR_DATE", &now)
            .env("GIT_COMMITTER_DATE", &now)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    let mut commits = Vec::new();
    for (turn, message) in turns.iter().enumerate() {
        std::fs::write(repo.join(format!("src/turn{turn}.rs")), "fn f() {}\n").unwrap();
        assert_exit_0_stdout_empty(&stop(&sandbox, &repo, message));
        let all = sidecars(&repo.join(".mosaic/reflections"));
        assert_eq!(all.len(), turn + 1, "turn {turn}");
        git_at(0, &["add", &format!("src/turn{turn}.rs")]);
        git_at(0, &["commit", "--quiet", "-m", &format!("feat: turn {turn}")]);
        commits.push(sandbox.git(&repo, &["rev-parse", "HEAD"]));
    }
    // Two days later (after the session's slack: not the session undoing its own work), turn 0's work is
    // reverted: its failure labels that turn wrong.
    git_at(2, &["revert", "--no-edit", &commits[0]]);
    let all: Vec<Value> = sidecars(&repo.join(".mosaic/reflections"))
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    let field = |key: &str| all.iter().map(|s| s[key].clone()).collect::<Vec<_>>();
    assert_eq!(field("confidence"), [json!(0.9), Value::Null, Value::Null, json!(0.35)]);
    let degraded: Vec<Value> = all.iter().map(|s| s["provenance"]["degraded"].clone()).collect();
    assert_eq!(degraded, [json!(false), json!(true), json!(true), json!(false)]);
    let attempts: Vec<Value> = all
        .iter()
        .map(|s| s["provenance"]["reflection_attempt"].clone())
        .collect();
    assert_eq!(attempts, [json!(1), json!(2), json!(3), json!(4)]);
    assert_eq!(
        all[0]["most_likely_wrong"],
        json!({"surface": "ui", "description": "rounding shown to the user"})
    );
    assert_eq!(all[0]["known_not_in_diff"], "checked by hand");
    let secret = all[3].to_string();
    for leaked in ["AKIAIOSFODNN7EXAMPLE", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"] {
        assert!(!secret.contains(leaked), "{leaked} leaked: {secret}");
    }
    assert_eq!(all[3]["most_likely_wrong"]["surface"], "auth");
    assert!(all[3]["known_not_in_diff"].as_str().unwrap().contains("revoked"));

    let log = debug_log(&repo);
    assert!(log.contains("last assistant message: no ```reflection block"), "{log}");
    assert!(log.contains("last assistant message: self-report malformed"), "{log}");
    assert!(log.contains("payments"), "the reason names the bad surface: {log}");

    // `.mosaic/` does not clutter `git status`: scratch and (by default) sidecars are ignored; only the
    // `.gitignore` itself shows, once, for the team to commit.
    let status = sandbox.git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
    let mosaic: Vec<&str> = status.lines().filter(|l| l.contains(".mosaic")).collect();
    assert_eq!(mosaic, ["?? .mosaic/.gitignore"], "{status}");
    assert_eq!(
        std::fs::read_to_string(repo.join(".mosaic/.gitignore")).unwrap(),
        capture::hook::MOSAIC_GITIGNORE
    );

    // The loop closes: `phase0 corpus` on the session's repository, once the outcome window has passed, gives one
    // labeled row per turn with the confidence the agent reported (the reverted turn is wrong; the others right).
    let corpus = sandbox.path().join("corpus.jsonl");
    let as_of = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24 * 40))
        .strftime("%Y-%m-%d")
        .to_string();
    let output = std::process::Command::new(e2e::binary("phase0"))
        .args(["corpus", "--reflections"])
        .arg(repo.join(".mosaic/reflections"))
        .arg("--repo")
        .arg(&repo)
        .args(["--as-of", &as_of, "--out"])
        .arg(&corpus)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: Vec<Value> = std::fs::read_to_string(&corpus)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let labeled: Vec<(Value, Value, Value)> = rows
        .iter()
        .map(|row| {
            (
                row["confidence"].clone(),
                row["correct"].clone(),
                row["label_reason"].clone(),
            )
        })
        .collect();
    let summary = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        labeled,
        [
            (json!(0.9), json!(false), json!("revert")),
            (Value::Null, json!(true), json!("window-elapsed")),
            (Value::Null, json!(true), json!("window-elapsed")),
            (json!(0.35), json!(true), json!("window-elapsed")),
        ],
        "{summary}"
    );
    assert_eq!(rows[0]["failure_sha"], json!(commits[0]));
}

#[test]
fn a_fresh_reflection_input_file_wins_over_the_block() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("shop", &[("a.txt", "a\n")]);
    std::fs::create_dir_all(repo.join(".mosaic")).unwrap();
    std::fs::write(
        repo.join(".mosaic/reflection-input.json"),
        format!(r#"{{"confidence": 0.42, "session_id": "{SESSION}"}}"#),
    )
    .unwrap();
    let block = "```reflection\n{\"confidence\": 0.99}\n```";
    assert_exit_0_stdout_empty(&stop(&sandbox, &repo, block));
    // The second turn: the file is now stale for this session, so the block counts.
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_exit_0_stdout_empty(&stop(&sandbox, &repo, block));
    let all: Vec<Value> = sidecars(&repo.join(".mosaic/reflections"))
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    assert_eq!(
        all.iter().map(|s| s["confidence"].clone()).collect::<Vec<_>>(),
        [json!(0.42), json!(0.99)]
    );
}

#[test]
fn codex_notify_writes_a_sidecar_from_its_argument() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("shop", &[("a.txt", "a\n")]);
    std::fs::write(repo.join("a.txt"), "b\n").unwrap();
    // Codex's documented notify payload, passed as the last argument.
    let payload = json!({
        "type": "agent-turn-complete", "thread-id": "thread-7", "turn-id": "3", "cwd": repo,
        "input-messages": ["change a"],
        "last-assistant-message": "Changed a.\n```reflection\n{\"confidence\": 0.7}\n```",
    });
    let output = sandbox
        .hook_command(sandbox.path(), &[SOLO])
        .args(["codex-notify", &payload.to_string()])
        .output()
        .unwrap();
    assert_exit_0_stdout_empty(&output);
    let all = sidecars(&repo.join(".mosaic/reflections"));
    assert_eq!(all.len(), 1);
    let sidecar = &all[0].1;
    assert_eq!(sidecar["session_id"], "thread-7");
    assert_eq!(sidecar["agent"], "codex");
    assert_eq!(sidecar["confidence"], json!(0.7));
    assert_eq!(sidecar["files_changed"], json!(["a.txt"]));
    assert_eq!(sidecar["provenance"]["degraded"], json!(false));
}

#[test]
fn instructions_print_the_same_request_for_claude_md_and_agents_md() {
    let sandbox = Sandbox::new();
    let run = |format: &str| {
        let output = sandbox
            .hook_command(sandbox.path(), &[])
            .args(["instructions", "--format", format])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8(output.stdout).unwrap()
    };
    let plain = run("plain");
    assert_eq!(plain, capture::hook::instructions::DEFAULT_TEMPLATE);
    for format in ["claude-md", "agents-md"] {
        let section = run(format);
        assert!(section.starts_with("## Self-report at the end of every turn (reflect-hook)\n\n"));
        assert!(section.ends_with(&plain));
    }
    let bad = sandbox
        .hook_command(sandbox.path(), &[])
        .args(["instructions", "--format", "md"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
