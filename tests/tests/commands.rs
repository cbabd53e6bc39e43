//! `reflect-hook install | uninstall | validate | risk` end to end.

use std::process::Command;

use e2e::{Sandbox, binary, run_with_stdin, write};
use serde_json::json;

fn reflect_hook(sandbox: &Sandbox) -> Command {
    let mut command = Command::new(binary("reflect-hook"));
    command
        .env_clear()
        .env("HOME", sandbox.home())
        .current_dir(sandbox.path());
    command
}

const ORIGINAL_SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    }
}
"#;

#[test]
fn install_is_idempotent_keeps_other_keys_and_uninstall_restores_the_original() {
    let sandbox = Sandbox::new();
    let settings = sandbox.path().join("claude/settings.json");
    write(&settings, ORIGINAL_SETTINGS);
    let settings_arg = settings.to_str().unwrap();

    let first = reflect_hook(&sandbox)
        .args(["install", "--subagents", "--settings", settings_arg])
        .output()
        .unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let installed = std::fs::read_to_string(&settings).unwrap();
    let value: serde_json::Value = serde_json::from_str(&installed).unwrap();
    let exe = binary("reflect-hook").canonicalize().unwrap();
    let ours = json!({"type": "command", "command": exe.to_str().unwrap(), "timeout": 15});
    assert_eq!(value["model"], "opus");
    assert_eq!(value["permissions"], json!({"allow": ["Bash(git status)"]}));
    assert_eq!(
        value["hooks"]["PreToolUse"],
        json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}])
    );
    assert_eq!(
        value["hooks"]["Stop"],
        json!([{"hooks": [{"type": "command", "command": "notify-send done"}]}, {"hooks": [ours]}])
    );
    assert_eq!(
        value["hooks"]["SubagentStop"],
        json!([{"matcher": "", "hooks": [ours]}])
    );
    let backup = settings.with_file_name("settings.json.reflect-hook.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), ORIGINAL_SETTINGS);

    let second = reflect_hook(&sandbox)
        .args(["install", "--subagents", "--settings", settings_arg])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&second.stdout),
        format!("{settings_arg}: unchanged\n")
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        installed,
        "a second install changes nothing"
    );

    let removed = reflect_hook(&sandbox)
        .args(["uninstall", "--settings", settings_arg])
        .output()
        .unwrap();
    assert_eq!(removed.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        ORIGINAL_SETTINGS,
        "uninstall restores the original bytes"
    );
}

#[test]
fn install_refuses_invalid_json_and_changes_nothing() {
    let sandbox = Sandbox::new();
    let settings = sandbox.path().join("settings.json");
    write(&settings, "{\n  \"hooks\": {,\n}\n");
    let output = reflect_hook(&sandbox)
        .args(["install", "--settings", settings.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("{}:2:", settings.display())),
        "names file and line: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{\n  \"hooks\": {,\n}\n");
    assert!(!settings.with_file_name("settings.json.reflect-hook.bak").exists());
}

#[test]
fn install_scope_user_writes_under_home() {
    let sandbox = Sandbox::new();
    let output = reflect_hook(&sandbox)
        .args(["install", "--scope", "user"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.home().join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(settings["hooks"]["Stop"][0]["hooks"][0]["timeout"], 15);
    assert!(settings["hooks"].get("SubagentStop").is_none());
}

#[test]
fn validate_reports_each_file_and_fails_on_any_invalid_one() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r", &[("a.txt", "a\n")]);
    let output = sandbox.hook(&repo, &e2e::stop_payload("s1", &repo), &[("REFLECTION_MODE", "solo")]);
    assert_eq!(output.status.code(), Some(0));
    let dir = repo.join(".mosaic/reflections");
    let good = dir.join(&e2e::files_in(&dir)[0]);

    let mut broken: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    broken["confidence"] = json!(1.5);
    broken["extra"] = json!(true);
    let bad = sandbox.path().join("bad.reflection.json");
    write(&bad, &broken.to_string());
    let truncated = sandbox.path().join("truncated.reflection.json");
    write(&truncated, "{\"schema\": \"reflection.v1\",");

    let ok = reflect_hook(&sandbox).arg("validate").arg(&good).output().unwrap();
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&ok.stdout), format!("ok {}\n", good.display()));

    let mixed = reflect_hook(&sandbox)
        .arg("validate")
        .args([&good, &bad, &truncated])
        .output()
        .unwrap();
    assert_eq!(mixed.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&mixed.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0], format!("ok {}", good.display()));
    assert!(
        lines[1].starts_with(&format!("invalid {}: ", bad.display())),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("/confidence: 1.5 is greater than the maximum of 1"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("extra"), "{}", lines[1]);
    assert!(
        lines[2].starts_with(&format!("invalid {}: 1:", truncated.display())),
        "{}",
        lines[2]
    );
}

#[test]
fn risk_prints_the_verdict_for_arguments_or_stdin() {
    let sandbox = Sandbox::new();
    let output = reflect_hook(&sandbox)
        .args(["risk", "docs/a.md", "packages/db/migrations/0007_add_users.sql"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let verdict: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        verdict,
        json!({"needs_review": true, "score": 0.9, "surface": "data",
               "reason": "data surface (weight 0.9) in: packages/db/migrations/0007_add_users.sql"})
    );

    let mut command = reflect_hook(&sandbox);
    command.args(["risk", "--threshold", "0.3"]);
    let output = run_with_stdin(command, b"apps/web/src/components/Button.tsx\n\n");
    let verdict: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(verdict["surface"], "ui");
    assert_eq!(verdict["needs_review"], true);

    let bad = reflect_hook(&sandbox)
        .args(["risk", "--threshold", "2", "a"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
