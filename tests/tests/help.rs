//! Every `--help` of `phase0` and `reflect-hook` teaches: examples, exit codes and the environment variables the
//! command reads (issue 20, "A newcomer's first hour").

use std::process::Command;

use e2e::binary;

fn help(program: &str, args: &[&str]) -> String {
    let output = Command::new(binary(program))
        .args(args)
        .arg("--help")
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{program} {args:?} --help");
    String::from_utf8(output.stdout).unwrap()
}

fn assert_contains(text: &str, parts: &[&str], what: &str) {
    for part in parts {
        assert!(text.contains(part), "{what} --help lacks {part:?}:\n{text}");
    }
}

#[test]
fn every_phase0_subcommand_has_examples_exit_codes_and_its_environment() {
    let commands: [(&[&str], &[&str]); 8] = [
        (&["demo"], &["phase0 demo --repo", "3  partial", "SOURCE_DATE_EPOCH"]),
        (
            &["weekly"],
            &["phase0 weekly --config", "3  partial", "SOURCE_DATE_EPOCH"],
        ),
        (
            &["p1"],
            &[
                "phase0 p1 data/p1-corpus.jsonl",
                "--skip-invalid",
                "1  runtime error",
                "SOURCE_DATE_EPOCH",
            ],
        ),
        (
            &["p2"],
            &[
                "phase0 p2 --repo ../app",
                "phase0 p2 audit",
                "2  usage error",
                "SOURCE_DATE_EPOCH",
            ],
        ),
        (
            &["p2", "audit"],
            &["phase0 p2 audit", "0  the sheet was written", "--per-stratum"],
        ),
        (
            &["p3"],
            &[
                "phase0 p3 data/p3/jira.json",
                "--format jira-csv",
                "2  usage error",
                "SOURCE_DATE_EPOCH",
            ],
        ),
        (
            &["corpus"],
            &[
                "phase0 corpus --reflections",
                "0  the corpus was written",
                "SOURCE_DATE_EPOCH",
            ],
        ),
        (
            &["synth", "p1"],
            &["phase0 synth p1 --rows 400", "1  stdout could not be written"],
        ),
    ];
    for (args, parts) in commands {
        let text = help("phase0", args);
        assert_contains(
            &text,
            &["Examples:", "Exit codes:"],
            &format!("phase0 {}", args.join(" ")),
        );
        assert_contains(&text, parts, &format!("phase0 {}", args.join(" ")));
    }
    let top = help("phase0", &[]);
    assert_contains(&top, &["phase0 demo", "Exit codes: 0"], "phase0");
}

#[test]
fn p1_groups_its_two_ways_of_getting_a_corpus() {
    let text = help("phase0", &["p1"]);
    let heading = text
        .find("Corpus from captured sidecars (instead of CORPUS):")
        .expect("the --reflections heading");
    let reflections = text.find("--reflections <REFLECTIONS>").unwrap();
    let corpus_prereg = text.find("--corpus-prereg").unwrap();
    assert!(heading < reflections && heading < corpus_prereg, "{text}");
    // The options of both modes are after the heading; the shared ones before it.
    assert!(text.find("--skip-invalid").unwrap() < heading, "{text}");
}

#[test]
fn bare_reflect_hook_is_the_stop_hook_and_its_help_says_so() {
    let text = help("reflect-hook", &[]);
    assert_contains(
        &text,
        &[
            "Usage: reflect-hook             the Stop hook itself",
            "reflect-hook <COMMAND>",
            "Examples:",
            "Exit codes:",
            "REFLECTION_MODE",
            "REFLECTION_DIR",
            "REFLECTION_INPUT",
            "REFLECTION_TASK_REF",
            "REFLECTION_AGENT",
            "REFLECTION_RISK_THRESHOLD",
            "REFLECTION_BASE",
            "REFLECTION_BUDGET_MS",
            "REFLECTION_DEBUG",
            "REFLECTION_INSTRUCTIONS",
        ],
        "reflect-hook",
    );
    assert!(!text.contains("Usage: reflect-hook <COMMAND>"), "{text}");
}

#[test]
fn every_reflect_hook_command_explains_itself() {
    let commands: [(&str, &[&str]); 7] = [
        ("install", &["Examples:", "Exit codes:", "--subagents", "HOME"]),
        ("uninstall", &["Examples:", "Exit codes:", "--scope"]),
        (
            "validate",
            &[
                "Examples:",
                "Exit codes:",
                "The sidecars",
                "1  at least one file is invalid",
            ],
        ),
        (
            "risk",
            &[
                "Examples:",
                "Exit codes:",
                "--threshold <THRESHOLD>",
                "The score at or above which",
            ],
        ),
        ("instructions", &["Examples:", "REFLECTION_INSTRUCTIONS"]),
        ("session-start", &["REFLECTION_MODE"]),
        ("codex-notify", &["Exit codes:", "REFLECTION_MODE"]),
    ];
    for (command, parts) in commands {
        assert_contains(
            &help("reflect-hook", &[command]),
            parts,
            &format!("reflect-hook {command}"),
        );
    }
    let uninstall = help("reflect-hook", &["uninstall"]);
    assert!(
        !uninstall.contains("--subagents"),
        "uninstall always removes SubagentStop:\n{uninstall}"
    );
    let top = help("reflect-hook", &[]);
    for described in ["Validate sidecars against", "Print the risk-floor verdict"] {
        assert!(top.contains(described), "{top}");
    }
    let rejected = Command::new(binary("reflect-hook"))
        .args(["uninstall", "--subagents"])
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(
        rejected.status.code(),
        Some(2),
        "uninstall --subagents is a usage error"
    );
}

#[test]
fn risk_reads_the_hooks_threshold_variable() {
    let risk = |env: &[(&str, &str)]| {
        let mut command = Command::new(binary("reflect-hook"));
        command
            .args(["risk", "apps/web/src/components/Button.tsx"])
            .env_clear()
            .envs(env.iter().copied());
        let output = command.output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()["needs_review"].clone()
    };
    assert_eq!(risk(&[]), false);
    assert_eq!(
        risk(&[("REFLECTION_RISK_THRESHOLD", "0.3")]),
        true,
        "as the hook would decide"
    );
    assert!(help("reflect-hook", &["risk"]).contains("[env: REFLECTION_RISK_THRESHOLD="));
}
