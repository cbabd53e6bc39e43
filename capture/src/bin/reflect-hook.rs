//! `reflect-hook`: the Claude Code Stop hook that writes `reflection.v1` sidecars, plus a few commands for people.
//!
//! Without arguments it is the hook: it always exits 0 and never writes to stdout. With `REFLECTION_MODE` unset,
//! `off` or unknown it returns before reading anything but the environment.
//!
//! Exit codes of the commands: 0 success; 1 a check failed (`validate` found an invalid sidecar) or a settings
//! file was refused; 2 usage error or unreadable input.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use capture::hook::instructions::{self, Format};
use capture::hook::{self, HookEnv};
use capture::install::{self, Change, InstallRequest, Scope};

fn main() -> ExitCode {
    if std::env::args_os().len() <= 1 {
        run_hook(std::io::stdin());
        return ExitCode::SUCCESS;
    }
    // The SessionStart handler skips argument parsing: it runs on every session start.
    if std::env::args_os().nth(1).is_some_and(|arg| arg == SESSION_START) && std::env::args_os().len() == 2 {
        session_start();
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    match cli.command {
        Command::SessionStart => {
            session_start();
            ExitCode::SUCCESS
        }
        Command::Instructions { format } => {
            let format = format.parse().expect("clap restricts the values");
            let path = std::env::var_os(hook::env::INSTRUCTIONS_VAR).map(PathBuf::from);
            print!(
                "{}",
                instructions::render(&instructions::template(path.as_deref()), format)
            );
            ExitCode::SUCCESS
        }
        Command::CodexNotify { payload } => {
            // Codex passes its JSON as the last argument; the hook reads it as it reads Claude Code's stdin.
            run_hook(std::io::Cursor::new(payload.into_bytes()));
            ExitCode::SUCCESS
        }
        Command::Install(args) => edit_settings(&args, install::install),
        Command::Uninstall(args) => edit_settings(&args, install::uninstall),
        Command::Validate { files } => validate(&files),
        Command::Risk { threshold, paths } => risk(threshold, paths),
    }
}

const SESSION_START: &str = "session-start";

/// The SessionStart handler: with capture on, the request on stdout (Claude Code adds it to the agent's context);
/// with capture off nothing is printed or read. Always exits 0.
fn session_start() {
    let Some(env) = HookEnv::from_process() else { return };
    let text = instructions::render(&instructions::template(env.instructions.as_deref()), Format::Plain);
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// The hook itself: nothing may escape, not even a panic.
fn run_hook(stdin: impl std::io::Read + Send + 'static) {
    let Some(env) = HookEnv::from_process() else { return };
    let debug = env.debug != hook::DebugSink::Off;
    std::panic::set_hook(Box::new(move |info| {
        if debug {
            eprintln!("reflect-hook: internal error: {info}");
        }
    }));
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook::run(&env, stdin)));
}

#[derive(Parser)]
#[command(
    name = "reflect-hook",
    version,
    about = "Claude Code Stop hook that writes reflection.v1 sidecars"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The SessionStart handler: prints the self-report request when REFLECTION_MODE is on, nothing otherwise.
    SessionStart,
    /// Print the self-report request, for CLAUDE.md or AGENTS.md (REFLECTION_INSTRUCTIONS replaces the text).
    Instructions {
        #[arg(long, default_value = "plain", value_parser = ["claude-md", "agents-md", "plain"])]
        format: String,
    },
    /// The hook for OpenAI Codex CLI: `notify = ["/abs/path/reflect-hook", "codex-notify"]` in ~/.codex/config.toml;
    /// Codex appends its JSON payload as the last argument. Always exits 0 and prints nothing.
    CodexNotify {
        /// The JSON Codex passes.
        #[arg(default_value = "")]
        payload: String,
    },
    /// Register the hook in a Claude Code settings file (idempotent; keeps every other key; writes a backup).
    Install(SettingsArgs),
    /// Remove only reflect-hook's entries from a Claude Code settings file.
    Uninstall(SettingsArgs),
    /// Validate sidecars against the embedded reflection.v1 schema, one line per file.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the risk-floor verdict of changed paths as JSON (paths from stdin, one per line, if none are given).
    Risk {
        #[arg(long, default_value_t = capture::DEFAULT_RISK_THRESHOLD)]
        threshold: f64,
        paths: Vec<String>,
    },
}

#[derive(clap::Args)]
struct SettingsArgs {
    /// Which settings file: user (~/.claude/settings.json), project (.claude/settings.json) or local
    /// (.claude/settings.local.json).
    #[arg(long, default_value = "user", value_parser = ["user", "project", "local"])]
    scope: String,
    /// Edit this settings file instead of the scope's.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// Also register for SubagentStop (install only; uninstall always removes it).
    #[arg(long)]
    subagents: bool,
}

fn edit_settings(args: &SettingsArgs, edit: fn(&InstallRequest) -> Result<Change, install::InstallError>) -> ExitCode {
    let settings = match &args.settings {
        Some(path) => path.clone(),
        None => {
            let scope: Scope = args.scope.parse().expect("clap restricts the values");
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            let project = capture::surface::discover_work_tree(&cwd)
                .ok()
                .and_then(|repo| repo.workdir().map(Path::to_path_buf))
                .unwrap_or(cwd);
            let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
            install::settings_path(scope, &project, &home)
        }
    };
    let exe = match std::env::current_exe().and_then(|exe| exe.canonicalize()) {
        Ok(exe) => exe,
        Err(error) => {
            eprintln!("reflect-hook: cannot locate this program: {error}");
            return ExitCode::from(2);
        }
    };
    let request = InstallRequest {
        settings: settings.clone(),
        command: install::hook_command(&exe),
        subagents: args.subagents,
    };
    match edit(&request) {
        Ok(Change::Unchanged) => {
            println!("{}: unchanged", settings.display());
            ExitCode::SUCCESS
        }
        Ok(Change::Written { backup }) => {
            match backup {
                Some(backup) => println!("{}: updated (backup: {})", settings.display(), backup.display()),
                None => println!("{}: created", settings.display()),
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("reflect-hook: {error}");
            ExitCode::from(1)
        }
    }
}

fn validate(files: &[PathBuf]) -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for file in files {
        let problems = match std::fs::read(file) {
            Err(error) => vec![format!("cannot read: {error}")],
            Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Err(error) => vec![format!("{}:{}: invalid JSON: {error}", error.line(), error.column())],
                Ok(document) => capture::schema::schema_errors(&document),
            },
        };
        if problems.is_empty() {
            println!("ok {}", file.display());
        } else {
            status = ExitCode::from(1);
            println!("invalid {}: {}", file.display(), problems.join("; "));
        }
    }
    status
}

fn risk(threshold: f64, mut paths: Vec<String>) -> ExitCode {
    if !(0.0..=1.0).contains(&threshold) {
        eprintln!("reflect-hook: --threshold {threshold} is outside [0, 1]");
        return ExitCode::from(2);
    }
    if paths.is_empty() {
        if std::io::stdin().is_terminal() {
            eprintln!("reflect-hook: reading paths from stdin, one per line (Ctrl-D to end)");
        }
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(line) if !line.trim().is_empty() => paths.push(line.trim().to_string()),
                Ok(_) => {}
                Err(error) => {
                    eprintln!("reflect-hook: stdin: {error}");
                    return ExitCode::from(2);
                }
            }
        }
    }
    let verdict = capture::evaluate_risk_floor(&paths, None, None, threshold);
    println!(
        "{}",
        serde_json::to_string_pretty(&verdict).expect("a verdict serialises")
    );
    ExitCode::SUCCESS
}
