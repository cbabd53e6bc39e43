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
    let Some(command) = Cli::parse().command else {
        // Only options that exit (--help, --version) parse without a command; anything else is the hook's stdin.
        run_hook(std::io::stdin());
        return ExitCode::SUCCESS;
    };
    match command {
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
        Command::Install(args) => edit_settings(&args.settings, args.subagents, install::install),
        Command::Uninstall(args) => edit_settings(&args, false, install::uninstall),
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

/// The variables the hook reads (`capture::hook::env`), for `--help`.
macro_rules! hook_environment {
    () => {
        "Environment (the hook and session-start; capture is off unless REFLECTION_MODE is set):
  REFLECTION_MODE            solo or orchestrated: capture on; unset, off or anything else: do nothing
  REFLECTION_DIR             where sidecars go (default <repo>/.mosaic/reflections; relative to the repo root)
  REFLECTION_INPUT           the agent's self-report (default <repo>/.mosaic/reflection-input.json)
  REFLECTION_TASK_REF        the task the session works on (default <repo>#<branch>)
  REFLECTION_AGENT           the agent's name (default the payload's agent_type, else unknown)
  REFLECTION_RISK_THRESHOLD  the risk floor's threshold in [0, 1] (default 0.5)
  REFLECTION_BASE            the revision committed work is compared against (default the upstream)
  REFLECTION_BUDGET_MS       the time budget of one run in ms (default 2000), then it writes what it knows
  REFLECTION_DEBUG           1: diagnostics on stderr; file: a bounded log in the reflections directory
  REFLECTION_INSTRUCTIONS    a file whose text replaces the embedded self-report request
  CLAUDE_PROJECT_DIR         where to look for the repository when the payload's cwd is not in one
  CLAUDE_CODE_SESSION_ID     the session when the payload does not name one"
    };
}

/// The exit codes of the commands for people (docs/commands.md, "Exit codes").
macro_rules! settings_exit_codes {
    () => {
        "Exit codes:
  0  done, or nothing to do
  1  the settings file was refused (invalid JSON, wrong types) or is not writable
  2  usage error"
    };
}

#[derive(Parser)]
#[command(
    name = "reflect-hook",
    version,
    about = "Claude Code Stop hook that writes reflection.v1 sidecars",
    override_usage = "reflect-hook             the Stop hook itself: Claude Code's JSON payload on stdin, always exits 0\n       \
                      reflect-hook <COMMAND>",
    after_help = concat!(
        "Without a command, reflect-hook IS the Stop hook: Claude Code runs it at the end of every turn with its
JSON payload on stdin; it writes one reflection.v1 sidecar, prints nothing and always exits 0.

Examples:
  reflect-hook install --scope project        register the hook (and SessionStart) in .claude/settings.json
  REFLECTION_MODE=solo claude                  turn capture on for a session
  reflect-hook validate .mosaic/reflections/*.reflection.json
  git diff --name-only main | reflect-hook risk

Exit codes:
  0  success; the hook itself, session-start and codex-notify always exit 0
  1  a check failed (validate found an invalid sidecar) or a settings file was refused
  2  usage error or unreadable input

",
        hook_environment!()
    )
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// The SessionStart handler: prints the self-report request when REFLECTION_MODE is on, nothing otherwise.
    #[command(after_help = concat!(
        "Registered by `reflect-hook install`. Always exits 0.\n\n",
        hook_environment!()
    ))]
    SessionStart,
    /// Print the self-report request, for CLAUDE.md or AGENTS.md (REFLECTION_INSTRUCTIONS replaces the text).
    #[command(after_help = "Examples:
  reflect-hook instructions --format claude-md >> CLAUDE.md
  reflect-hook instructions --format agents-md >> AGENTS.md

Exit codes:
  0  printed
  2  usage error

Environment:
  REFLECTION_INSTRUCTIONS  a file whose text replaces the embedded self-report request")]
    Instructions {
        /// How to wrap the request: a CLAUDE.md section, an AGENTS.md section, or the bare text.
        #[arg(long, default_value = "plain", value_parser = ["claude-md", "agents-md", "plain"])]
        format: String,
    },
    /// The hook for OpenAI Codex CLI: `notify = ["/abs/path/reflect-hook", "codex-notify"]` in ~/.codex/config.toml;
    /// Codex appends its JSON payload as the last argument. Always exits 0 and prints nothing.
    #[command(after_help = concat!("Exit codes:\n  0  always\n\n", hook_environment!()))]
    CodexNotify {
        /// The JSON Codex passes.
        #[arg(default_value = "")]
        payload: String,
    },
    /// Register the hook in a Claude Code settings file (idempotent; keeps every other key; writes a backup).
    #[command(after_help = concat!(
        "Examples:
  reflect-hook install                         ~/.claude/settings.json
  reflect-hook install --scope project --subagents
  reflect-hook install --settings /path/to/settings.json

Then turn capture on with REFLECTION_MODE=solo (or orchestrated) in the agent's environment.

",
        settings_exit_codes!(),
        "

Environment:
  HOME  where the user scope's ~/.claude/settings.json is"
    ))]
    Install(InstallArgs),
    /// Remove only reflect-hook's entries (Stop, SubagentStop, SessionStart) from a Claude Code settings file.
    #[command(after_help = concat!(
        "Examples:
  reflect-hook uninstall
  reflect-hook uninstall --scope project

",
        settings_exit_codes!(),
        "

Environment:
  HOME  where the user scope's ~/.claude/settings.json is"
    ))]
    Uninstall(SettingsArgs),
    /// Validate sidecars against the embedded reflection.v1 schema, one line per file (`ok FILE` or
    /// `invalid FILE: reasons`).
    #[command(after_help = "Examples:
  reflect-hook validate .mosaic/reflections/*.reflection.json

Exit codes:
  0  every file is valid
  1  at least one file is invalid or unreadable
  2  usage error (no FILE)")]
    Validate {
        /// The sidecars (*.reflection.json) to check.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Print the risk-floor verdict of changed paths as JSON (paths from stdin, one per line, if none are given).
    #[command(after_help = "Examples:
  reflect-hook risk src/auth/login.rs migrations/0042.sql
  git diff --name-only main | reflect-hook risk --threshold 0.3

Exit codes:
  0  the verdict was printed (needs_review true or false)
  2  usage error (--threshold outside [0, 1]) or unreadable stdin")]
    Risk {
        /// The score at or above which the change needs review, in [0, 1] (the hook's REFLECTION_RISK_THRESHOLD).
        #[arg(long, env = "REFLECTION_RISK_THRESHOLD", default_value_t = capture::DEFAULT_RISK_THRESHOLD)]
        threshold: f64,
        /// Changed paths, relative to the repository root; none: read them from stdin.
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
    },
}

/// Which settings file `install` and `uninstall` edit.
#[derive(clap::Args)]
struct SettingsArgs {
    /// Which settings file: user (~/.claude/settings.json), project (.claude/settings.json) or local
    /// (.claude/settings.local.json).
    #[arg(long, default_value = "user", value_parser = ["user", "project", "local"])]
    scope: String,
    /// Edit this settings file instead of the scope's.
    #[arg(long)]
    settings: Option<PathBuf>,
}

#[derive(clap::Args)]
struct InstallArgs {
    #[command(flatten)]
    settings: SettingsArgs,
    /// Also register for SubagentStop: a sidecar per subagent run (uninstall always removes it).
    #[arg(long)]
    subagents: bool,
}

fn edit_settings(
    args: &SettingsArgs,
    subagents: bool,
    edit: fn(&InstallRequest) -> Result<Change, install::InstallError>,
) -> ExitCode {
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
        subagents,
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
