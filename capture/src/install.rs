//! Registering `reflect-hook` in Claude Code settings files (`reflect-hook install` / `uninstall`).
//!
//! The hook is registered as a `command` handler with a 15 s timeout under `hooks.Stop` (a group without a matcher)
//! and, on request, under `hooks.SubagentStop` (a group with `"matcher": ""`); `reflect-hook session-start`, which
//! asks the agent for its self-report, is registered under `hooks.SessionStart` with the matcher
//! `startup|resume|clear|compact`, so the request is back in context after a compaction:
//!
//! ```json
//! {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/abs/path/reflect-hook", "timeout": 15}]}],
//!            "SessionStart": [{"matcher": "startup|resume|clear|compact",
//!                              "hooks": [{"type": "command", "command": "/abs/path/reflect-hook session-start",
//!                                         "timeout": 15}]}]}}
//! ```
//!
//! Editing is conservative:
//! - a handler is *ours* when it is of type `command` and the program of its command (the first shell word, unquoted)
//!   has the file name `reflect-hook`; nothing else in the file is ever touched, and key order is kept;
//! - a file that is not valid JSON, or whose `hooks` / `hooks.<event>` has the wrong type, is refused untouched;
//! - an unchanged result writes nothing; otherwise the previous bytes go to `<file name>.reflect-hook.bak` beside the
//!   settings path first, and the new content is written atomically (temporary file, fsync, rename) to the file the
//!   settings path resolves to, so a symlinked settings file stays a symlink;
//! - `uninstall` restores the backup's bytes verbatim when they hold exactly the resulting settings, so install then
//!   uninstall gives back the original file byte for byte.

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::{Map, Value, json};

/// The timeout, in seconds, of the registered handler.
pub const HOOK_TIMEOUT_SECS: u64 = 15;

/// The file name of the hook program; a command whose program has this file name is ours.
pub const PROGRAM_NAME: &str = "reflect-hook";

/// Appended to the settings file name to name its backup.
pub const BACKUP_SUFFIX: &str = ".reflect-hook.bak";

const STOP: &str = "Stop";
const SUBAGENT_STOP: &str = "SubagentStop";
const SESSION_START: &str = "SessionStart";
/// Every event we may register under (uninstall removes ours from all of them).
const EVENTS: [&str; 3] = [STOP, SUBAGENT_STOP, SESSION_START];
/// The SessionStart sources the request is printed on: all of them, so it survives `/clear` and compaction.
pub const SESSION_START_MATCHER: &str = "startup|resume|clear|compact";
/// The argument that makes `reflect-hook` the SessionStart handler.
pub const SESSION_START_ARG: &str = "session-start";
const MAX_SYMLINK_HOPS: usize = 40;

/// Which Claude Code settings file to edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `~/.claude/settings.json`: every project of this user.
    User,
    /// `<project>/.claude/settings.json`: shared with the project (usually committed).
    Project,
    /// `<project>/.claude/settings.local.json`: this checkout only (usually git-ignored).
    Local,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::User, Scope::Project, Scope::Local];

    /// The command-line spelling: `user`, `project` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--scope` value that is not `user`, `project` or `local`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scope {0:?}, expected user, project or local")]
pub struct ParseScopeError(pub String);

impl FromStr for Scope {
    type Err = ParseScopeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| ParseScopeError(s.to_owned()))
    }
}

/// The settings file of `scope`: `home/.claude/settings.json`, `project_dir/.claude/settings.json` or
/// `project_dir/.claude/settings.local.json`.
pub fn settings_path(scope: Scope, project_dir: &Path, home: &Path) -> PathBuf {
    match scope {
        Scope::User => home.join(".claude").join("settings.json"),
        Scope::Project => project_dir.join(".claude").join("settings.json"),
        Scope::Local => project_dir.join(".claude").join("settings.local.json"),
    }
}

/// The command line that runs `exe` through `sh -c`: the path itself when it holds only characters that are plain in
/// the shell (ASCII letters and digits and `/._-+,:@%`), otherwise the path in single quotes with each `'` written
/// as `'\''`. A path that is not valid UTF-8 is converted lossily.
pub fn hook_command(exe: &Path) -> String {
    shell_quote(&exe.to_string_lossy())
}

/// The backup that [`install`] and [`uninstall`] write beside `settings` before changing it:
/// `<file name>.reflect-hook.bak` in the same directory (beside the link when `settings` is a symlink).
pub fn backup_path(settings: &Path) -> PathBuf {
    let mut name = settings
        .file_name()
        .map_or_else(|| OsString::from("settings.json"), OsString::from);
    name.push(BACKUP_SUFFIX);
    settings.parent().unwrap_or(Path::new("")).join(name)
}

/// What to register, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallRequest {
    /// The settings file (see [`settings_path`]); it and its directory are created when missing.
    pub settings: PathBuf,
    /// The handler's command (see [`hook_command`]).
    pub command: String,
    /// Also register under `SubagentStop` (install only; uninstall always removes from both events).
    pub subagents: bool,
}

/// The outcome of [`install`] or [`uninstall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Nothing to do; nothing was written.
    Unchanged,
    /// The settings file was written; `backup` holds its previous bytes (`None` when the file was created).
    Written { backup: Option<PathBuf> },
}

/// Why the settings file was not changed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{}:{line}:{column}: invalid JSON: {message}; not changed", path.display())]
    InvalidJson {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// `what` names the key path and the types, e.g. `hooks.Stop is a string, expected an array`.
    #[error("{}: {what}; not changed", path.display())]
    NotAnObject { path: PathBuf, what: String },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// Registers `req.command` under `hooks.Stop` (and `hooks.SubagentStop` when `req.subagents`), and
/// `<req.command> session-start` under `hooks.SessionStart`.
///
/// Per event: a handler that already is exactly ours (same command, timeout 15) is kept; otherwise the first
/// `reflect-hook` handler is updated in place (command and timeout); otherwise a new group is appended. Any further
/// `reflect-hook` handlers of that event are removed so the hook runs once (groups they leave empty go too).
pub fn install(req: &InstallRequest) -> Result<Change, InstallError> {
    let target = resolve_symlinks(&req.settings).map_err(|source| read_error(req, source))?;
    let Some(original) = read_existing(&target).map_err(|source| read_error(req, source))? else {
        let mut root = Value::Object(Map::new());
        install_into(&mut root, &req.command, req.subagents);
        let bytes = render(&root, &target)?;
        if let Some(dir) = target.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|source| InstallError::Write {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        write_atomic(&target, &bytes, None).map_err(|source| InstallError::Write {
            path: target.clone(),
            source,
        })?;
        return Ok(Change::Written { backup: None });
    };
    let mut root = parse(&original, &req.settings)?;
    let events: &[&str] = if req.subagents { &EVENTS } else { &[STOP, SESSION_START] };
    check_shape(&root, events).map_err(|what| InstallError::NotAnObject {
        path: req.settings.clone(),
        what,
    })?;
    if !install_into(&mut root, &req.command, req.subagents) {
        return Ok(Change::Unchanged);
    }
    let bytes = render(&root, &target)?;
    let backup = replace_existing(&req.settings, &target, &original, &bytes)?;
    Ok(Change::Written { backup: Some(backup) })
}

/// Removes every `reflect-hook` handler from `hooks.Stop` and `hooks.SubagentStop` (`req.command` and
/// `req.subagents` are not used), then the groups, event arrays and `hooks` object that this leaves empty.
///
/// When the backup holds exactly the resulting settings (ignoring empty `hooks`, `hooks.Stop` and `hooks.SubagentStop`,
/// which install may have filled and uninstall then dropped), its bytes are written verbatim: the original formatting.
pub fn uninstall(req: &InstallRequest) -> Result<Change, InstallError> {
    let target = resolve_symlinks(&req.settings).map_err(|source| read_error(req, source))?;
    let Some(original) = read_existing(&target).map_err(|source| read_error(req, source))? else {
        return Ok(Change::Unchanged);
    };
    let mut root = parse(&original, &req.settings)?;
    check_shape(&root, &EVENTS).map_err(|what| InstallError::NotAnObject {
        path: req.settings.clone(),
        what,
    })?;
    if !uninstall_from(&mut root) {
        return Ok(Change::Unchanged);
    }
    let pruned = prune_emptied(root.clone());
    let restored = fs::read(backup_path(&req.settings))
        .ok()
        .filter(|bytes| parse_json(bytes).is_ok_and(|saved| same_json(&prune_emptied(saved), &pruned)));
    let bytes = match restored {
        Some(bytes) => bytes,
        None => render(&root, &target)?,
    };
    let backup = replace_existing(&req.settings, &target, &original, &bytes)?;
    Ok(Change::Written { backup: Some(backup) })
}

// ---- the JSON edit ----

fn read_error(req: &InstallRequest, source: io::Error) -> InstallError {
    InstallError::Read {
        path: req.settings.clone(),
        source,
    }
}

/// Parses settings bytes: a leading UTF-8 byte order mark is skipped, and an empty (or all-whitespace) file is `{}`.
fn parse_json(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_slice(bytes)
}

fn parse(bytes: &[u8], path: &Path) -> Result<Value, InstallError> {
    parse_json(bytes).map_err(|err| {
        let (line, column) = (err.line(), err.column());
        let full = err.to_string();
        let message = full
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(&full)
            .to_owned();
        InstallError::InvalidJson {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    })
}

/// Pretty JSON with a two-space indent and a trailing newline, the shape Claude Code writes.
fn render(root: &Value, target: &Path) -> Result<Vec<u8>, InstallError> {
    let mut bytes = serde_json::to_vec_pretty(root).map_err(|err| InstallError::Write {
        path: target.to_path_buf(),
        source: io::Error::other(err),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Refuses a top level that is not an object, a `hooks` that is not an object and a `hooks.<event>` (of `events`)
/// that is not an array. Missing keys are fine.
fn check_shape(root: &Value, events: &[&str]) -> Result<(), String> {
    let Some(root) = root.as_object() else {
        return Err(format!("the top level is {}, expected an object", kind(root)));
    };
    let Some(hooks) = root.get("hooks") else { return Ok(()) };
    let Some(hooks) = hooks.as_object() else {
        return Err(format!("hooks is {}, expected an object", kind(hooks)));
    };
    for event in events {
        if let Some(groups) = hooks.get(*event)
            && !groups.is_array()
        {
            return Err(format!("hooks.{event} is {}, expected an array", kind(groups)));
        }
    }
    Ok(())
}

/// Makes `root` hold exactly one current handler of ours per event; `true` when it changed. `root` is checked.
fn install_into(root: &mut Value, command: &str, subagents: bool) -> bool {
    let Some(root) = root.as_object_mut() else { return false };
    let Some(hooks) = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
    else {
        return false;
    };
    let mut changed = ensure_ours(hooks, STOP, command, None);
    if subagents {
        changed |= ensure_ours(hooks, SUBAGENT_STOP, command, Some(""));
    }
    let session_start = format!("{command} {SESSION_START_ARG}");
    changed | ensure_ours(hooks, SESSION_START, &session_start, Some(SESSION_START_MATCHER))
}

fn ensure_ours(hooks: &mut Map<String, Value>, event: &str, command: &str, matcher: Option<&str>) -> bool {
    let Some(groups) = hooks
        .entry(event)
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
    else {
        return false;
    };
    let ours = our_positions(groups);
    let current = ours
        .iter()
        .copied()
        .find(|&at| handler(groups, at).is_some_and(|h| is_current(h, command)));
    let Some(keep) = current.or_else(|| ours.first().copied()) else {
        groups.push(new_group(command, matcher));
        return true;
    };
    let mut changed = false;
    if let Some(handler) = handler_mut(groups, keep)
        && !is_current(handler, command)
        && let Some(handler) = handler.as_object_mut()
    {
        handler.insert("command".to_owned(), Value::String(command.to_owned()));
        handler.insert("timeout".to_owned(), Value::from(HOOK_TIMEOUT_SECS));
        changed = true;
    }
    changed | remove_ours(groups, Some(keep))
}

fn new_group(command: &str, matcher: Option<&str>) -> Value {
    let handler = json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS});
    let mut group = Map::new();
    if let Some(matcher) = matcher {
        group.insert("matcher".to_owned(), Value::String(matcher.to_owned()));
    }
    group.insert("hooks".to_owned(), Value::Array(vec![handler]));
    Value::Object(group)
}

/// Removes our handlers from both events and what that empties; `true` when it changed. `root` is checked.
fn uninstall_from(root: &mut Value) -> bool {
    let Some(root) = root.as_object_mut() else { return false };
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    for event in EVENTS {
        let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) else {
            continue;
        };
        if remove_ours(groups, None) {
            changed = true;
            if groups.is_empty() {
                hooks.shift_remove(event);
            }
        }
    }
    if changed && hooks.is_empty() {
        root.shift_remove("hooks");
    }
    changed
}

/// Removes our handlers except the one at `keep`, and the groups this empties; `true` when it removed any.
fn remove_ours(groups: &mut Vec<Value>, keep: Option<(usize, usize)>) -> bool {
    let mut removed = false;
    let mut emptied = vec![false; groups.len()];
    for (g, group) in groups.iter_mut().enumerate() {
        let Some(handlers) = handlers_mut(group) else { continue };
        let before = handlers.len();
        let mut h = 0;
        handlers.retain(|handler| {
            let retain = keep == Some((g, h)) || !is_ours(handler);
            h += 1;
            retain
        });
        if handlers.len() != before {
            removed = true;
            emptied[g] = handlers.is_empty();
        }
    }
    if emptied.contains(&true) {
        let mut g = 0;
        groups.retain(|_| {
            let retain = !emptied[g];
            g += 1;
            retain
        });
    }
    removed
}

/// `(group, handler)` indices of our handlers, in file order.
fn our_positions(groups: &[Value]) -> Vec<(usize, usize)> {
    let mut positions = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for (h, handler) in handlers(group).into_iter().flatten().enumerate() {
            if is_ours(handler) {
                positions.push((g, h));
            }
        }
    }
    positions
}

fn handlers(group: &Value) -> Option<&Vec<Value>> {
    group.as_object()?.get("hooks")?.as_array()
}

fn handlers_mut(group: &mut Value) -> Option<&mut Vec<Value>> {
    group.as_object_mut()?.get_mut("hooks")?.as_array_mut()
}

fn handler(groups: &[Value], (g, h): (usize, usize)) -> Option<&Value> {
    handlers(groups.get(g)?)?.get(h)
}

fn handler_mut(groups: &mut [Value], (g, h): (usize, usize)) -> Option<&mut Value> {
    handlers_mut(groups.get_mut(g)?)?.get_mut(h)
}

/// A `command` handler whose program (first shell word, unquoted) has the file name `reflect-hook`
/// (or `reflect-hook.exe`).
fn is_ours(handler: &Value) -> bool {
    let Some(handler) = handler.as_object() else {
        return false;
    };
    if handler.get("type").and_then(Value::as_str) != Some("command") {
        return false;
    }
    let Some(program) = handler
        .get("command")
        .and_then(Value::as_str)
        .and_then(first_shell_word)
    else {
        return false;
    };
    let name = program.rsplit('/').next().unwrap_or(&program);
    name == PROGRAM_NAME || name.strip_suffix(".exe") == Some(PROGRAM_NAME)
}

/// Ours, with exactly `command` and the current timeout (other keys of the handler are the user's).
fn is_current(handler: &Value, command: &str) -> bool {
    is_ours(handler)
        && handler.get("command").and_then(Value::as_str) == Some(command)
        && handler.get("timeout").and_then(Value::as_f64) == Some(HOOK_TIMEOUT_SECS as f64)
}

/// JSON equality that also requires the same key order.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_json(a, b)),
        _ => a == b,
    }
}

/// Drops what uninstall drops once empty (`hooks.Stop`, `hooks.SubagentStop`, then `hooks`), so that a backup taken
/// from `{"hooks": {}}` or `{"hooks": {"Stop": []}}` still matches the uninstalled result.
fn prune_emptied(mut value: Value) -> Value {
    if let Some(root) = value.as_object_mut()
        && let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut)
    {
        for event in EVENTS {
            if hooks.get(event).and_then(Value::as_array).is_some_and(Vec::is_empty) {
                hooks.shift_remove(event);
            }
        }
        if hooks.is_empty() {
            root.shift_remove("hooks");
        }
    }
    value
}

// ---- shell words ----

/// Characters that need no quoting in `sh`, anywhere in a word.
fn is_shell_plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&byte)
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(is_shell_plain) {
        return word.to_owned();
    }
    let mut quoted = String::with_capacity(word.len() + 2);
    quoted.push('\'');
    for c in word.chars() {
        if c == '\'' {
            quoted.push_str("'\\''");
        } else {
            quoted.push(c);
        }
    }
    quoted.push('\'');
    quoted
}

/// The first word of a `sh` command line with quotes and backslashes removed (expansions are left as written);
/// `None` for a blank line or an unterminated quote.
fn first_shell_word(command: &str) -> Option<String> {
    let mut chars = command.trim_start_matches([' ', '\t', '\n']).chars().peekable();
    let mut word = String::new();
    let mut started = false;
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
            '\'' => {
                started = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                started = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some('\n') => {
                                chars.next();
                            }
                            Some(&c @ ('$' | '`' | '"' | '\\')) => {
                                chars.next();
                                word.push(c);
                            }
                            _ => word.push('\\'),
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    started = true;
                    word.push(c);
                }
                None => {
                    started = true;
                    word.push('\\');
                }
            },
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    started.then_some(word)
}

// ---- files ----

/// Follows `path` while it is a symlink (relative targets are relative to the link's directory); the final path
/// need not exist.
fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// The file's bytes, or `None` when it does not exist.
fn read_existing(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Saves `original` to the backup beside `settings`, then atomically writes `bytes` to `target`; both keep the
/// settings file's permissions. Returns the backup's path.
fn replace_existing(settings: &Path, target: &Path, original: &[u8], bytes: &[u8]) -> Result<PathBuf, InstallError> {
    let permissions = fs::metadata(target).ok().map(|meta| meta.permissions());
    let backup = backup_path(settings);
    write_atomic(&backup, original, permissions.clone()).map_err(|source| InstallError::Write {
        path: backup.clone(),
        source,
    })?;
    write_atomic(target, bytes, permissions).map_err(|source| InstallError::Write {
        path: target.to_path_buf(),
        source,
    })?;
    Ok(backup)
}

/// Writes `bytes` to a new temporary file beside `target`, fsyncs it and renames it over `target`.
fn write_atomic(target: &Path, bytes: &[u8], permissions: Option<fs::Permissions>) -> io::Result<()> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"))?
        .to_string_lossy();
    let mut attempt = 0u32;
    let (temp, mut file) = loop {
        let temp = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => break (temp, file),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(err) => return Err(err),
        }
    };
    let written = (|| {
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written?;
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const EXE: &str = "/usr/local/bin/reflect-hook";

    const STOP_ONLY: &str = r#"{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/reflect-hook",
            "timeout": 15
          }
        ]
      }
    ]
  }
}
"#;

    /// `expected` (pretty settings holding our Stop handler) with the SessionStart group install adds for `command`.
    fn installed(expected: &str, command: &str) -> String {
        let group = format!(
            r#"    "SessionStart": [
      {{
        "matcher": "startup|resume|clear|compact",
        "hooks": [
          {{
            "type": "command",
            "command": "{} session-start",
            "timeout": 15
          }}
        ]
      }}
    ]"#,
            command.replace('\\', "\\\\").replace('"', "\\\"")
        );
        let mut lines: Vec<String> = expected.lines().map(String::from).collect();
        let start = lines
            .iter()
            .position(|l| l == "  \"hooks\": {")
            .expect("a hooks object");
        let end = start
            + lines[start..]
                .iter()
                .position(|l| l == "  }" || l == "  },")
                .expect("its end");
        lines[end - 1].push(',');
        lines.insert(end, group);
        lines.join("\n") + "\n"
    }

    fn request(settings: &Path, subagents: bool) -> InstallRequest {
        InstallRequest {
            settings: settings.to_path_buf(),
            command: hook_command(Path::new(EXE)),
            subagents,
        }
    }

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn settings_path_for_each_scope() {
        let (project, home) = (Path::new("/work/repo"), Path::new("/home/ada"));
        assert_eq!(
            settings_path(Scope::User, project, home),
            Path::new("/home/ada/.claude/settings.json")
        );
        assert_eq!(
            settings_path(Scope::Project, project, home),
            Path::new("/work/repo/.claude/settings.json")
        );
        assert_eq!(
            settings_path(Scope::Local, project, home),
            Path::new("/work/repo/.claude/settings.local.json")
        );
        for scope in Scope::ALL {
            assert_eq!(scope.to_string().parse::<Scope>(), Ok(scope));
        }
        assert_eq!("global".parse::<Scope>(), Err(ParseScopeError("global".into())));
    }

    #[test]
    fn hook_command_quotes_only_when_needed() {
        assert_eq!(hook_command(Path::new(EXE)), EXE);
        assert_eq!(
            hook_command(Path::new("/a/b-c_d.e+f,g:h@i%j/reflect-hook")),
            "/a/b-c_d.e+f,g:h@i%j/reflect-hook"
        );
        assert_eq!(
            hook_command(Path::new("/opt/my tools/reflect-hook")),
            "'/opt/my tools/reflect-hook'"
        );
        assert_eq!(
            hook_command(Path::new("/opt/it's/reflect-hook")),
            r"'/opt/it'\''s/reflect-hook'"
        );
        assert_eq!(
            hook_command(Path::new("/opt/$x;y/reflect-hook")),
            "'/opt/$x;y/reflect-hook'"
        );
        assert_eq!(hook_command(Path::new("")), "''");
    }

    #[test]
    fn first_shell_word_unquotes() {
        assert_eq!(
            first_shell_word("  /a/reflect-hook --x").as_deref(),
            Some("/a/reflect-hook")
        );
        assert_eq!(
            first_shell_word("'/opt/my tools/reflect-hook' arg").as_deref(),
            Some("/opt/my tools/reflect-hook")
        );
        assert_eq!(
            first_shell_word(r#""/opt/my \"x\"/reflect-hook""#).as_deref(),
            Some(r#"/opt/my "x"/reflect-hook"#)
        );
        assert_eq!(
            first_shell_word(r"/opt/my\ tools/reflect-hook").as_deref(),
            Some("/opt/my tools/reflect-hook")
        );
        assert_eq!(first_shell_word("reflect-hook;echo").as_deref(), Some("reflect-hook"));
        assert_eq!(first_shell_word("''").as_deref(), Some(""));
        assert_eq!(first_shell_word("   "), None);
        assert_eq!(first_shell_word("'unterminated"), None);
    }

    #[test]
    fn recognises_ours() {
        let ours = |command: &str| is_ours(&json!({"type": "command", "command": command}));
        assert!(ours("/x/reflect-hook"));
        assert!(ours("reflect-hook"));
        assert!(ours("$HOME/bin/reflect-hook --verbose"));
        assert!(ours("'/opt/my tools/reflect-hook'"));
        assert!(ours(r"C:/tools/reflect-hook.exe"));
        assert!(!ours("/x/reflect-hook2"));
        assert!(!ours("/x/reflect-hook/other"));
        assert!(!ours("echo /x/reflect-hook"));
        assert!(!ours("'/x/reflect-hook"));
        assert!(!is_ours(&json!({"type": "prompt", "command": "/x/reflect-hook"})));
        assert!(!is_ours(&json!({"type": "command", "command": 3})));
        assert!(!is_ours(&json!("/x/reflect-hook")));
    }

    #[test]
    fn install_into_missing_file_and_directory() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("project/.claude/settings.json");
        assert_eq!(
            install(&request(&settings, false)).unwrap(),
            Change::Written { backup: None }
        );
        assert_eq!(read(&settings), installed(STOP_ONLY, EXE));
        assert_eq!(dir_entries(&dir.path().join("project/.claude")), ["settings.json"]);
    }

    #[test]
    fn install_keeps_other_keys_and_hooks_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let original = r#"{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "guard.sh"}]
      }
    ],
    "Stop": [
      {
        "hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]
      }
    ],
    "Notification": []
  },
  "env": {"Z": "1", "A": "2"}
}
"#;
        fs::write(&settings, original).unwrap();
        let backup = dir.path().join("settings.json.reflect-hook.bak");
        assert_eq!(
            install(&request(&settings, false)).unwrap(),
            Change::Written {
                backup: Some(backup.clone())
            }
        );
        assert_eq!(
            read(&settings),
            installed(
                r#"{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "guard.sh"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done",
            "timeout": 5
          }
        ]
      },
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/reflect-hook",
            "timeout": 15
          }
        ]
      }
    ],
    "Notification": []
  },
  "env": {
    "Z": "1",
    "A": "2"
  }
}
"#,
                EXE
            )
        );
        assert_eq!(read(&backup), original);
    }

    #[test]
    fn other_session_start_hooks_are_kept_through_install_and_uninstall() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let original = r#"{"hooks":{"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"cat NOTES.md"}]},{"hooks":[{"type":"command","command":"/usr/local/bin/reflect-hook session-start","timeout":15},{"type":"command","command":"direnv export json"}]}]}}"#;
        fs::write(&settings, original).unwrap();
        let req = request(&settings, false);
        assert!(matches!(install(&req).unwrap(), Change::Written { .. }));
        let root: Value = serde_json::from_str(&read(&settings)).unwrap();
        let groups = root["hooks"]["SessionStart"].as_array().unwrap();
        // Ours was current already (kept where it was, no second group); the user's two handlers are untouched.
        assert_eq!(groups.len(), 2, "{root:#}");
        assert_eq!(groups[0]["hooks"][0]["command"], "cat NOTES.md");
        assert_eq!(
            groups[1]["hooks"][0]["command"],
            "/usr/local/bin/reflect-hook session-start"
        );
        assert_eq!(groups[1]["hooks"][1]["command"], "direnv export json");
        assert_eq!(root["hooks"]["Stop"][0]["hooks"][0]["command"], EXE);
        assert_eq!(install(&req).unwrap(), Change::Unchanged);
        assert!(matches!(uninstall(&req).unwrap(), Change::Written { .. }));
        let left: Value = serde_json::from_str(&read(&settings)).unwrap();
        let expected = original.replace(
            r#"{"type":"command","command":"/usr/local/bin/reflect-hook session-start","timeout":15},"#,
            "",
        );
        assert_eq!(left, serde_json::from_str::<Value>(&expected).unwrap());
        assert_eq!(uninstall(&req).unwrap(), Change::Unchanged);
    }

    #[test]
    fn an_old_install_gains_the_session_start_handler_and_uninstall_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        fs::write(&settings, STOP_ONLY).unwrap();
        let req = request(&settings, false);
        assert!(matches!(install(&req).unwrap(), Change::Written { .. }));
        assert_eq!(read(&settings), installed(STOP_ONLY, EXE));
        assert_eq!(install(&req).unwrap(), Change::Unchanged);
        assert!(matches!(uninstall(&req).unwrap(), Change::Written { .. }));
        assert_eq!(uninstall(&req).unwrap(), Change::Unchanged);
        assert!(!read(&settings).contains("reflect-hook"), "{}", read(&settings));
    }

    #[test]
    fn install_twice_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        fs::write(&settings, r#"{"permissions":{"allow":["Bash(ls)"]}}"#).unwrap();
        let req = request(&settings, true);
        assert!(matches!(install(&req).unwrap(), Change::Written { backup: Some(_) }));
        let first = fs::read(&settings).unwrap();
        let backup = fs::read(backup_path(&settings)).unwrap();
        assert_eq!(install(&req).unwrap(), Change::Unchanged);
        assert_eq!(fs::read(&settings).unwrap(), first);
        assert_eq!(fs::read(backup_path(&settings)).unwrap(), backup, "no new backup");
        assert_eq!(
            dir_entries(dir.path()),
            ["settings.json", "settings.json.reflect-hook.bak"]
        );
    }

    #[test]
    fn already_current_compact_file_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let original = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/reflect-hook","timeout":15}]}],"SessionStart":[{"matcher":"startup|resume|clear|compact","hooks":[{"type":"command","command":"/usr/local/bin/reflect-hook session-start","timeout":15}]}]}}"#;
        fs::write(&settings, original).unwrap();
        assert_eq!(install(&request(&settings, false)).unwrap(), Change::Unchanged);
        assert_eq!(read(&settings), original);
        assert_eq!(dir_entries(dir.path()), ["settings.json"]);
    }

    #[test]
    fn install_with_subagents() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        install(&request(&settings, true)).unwrap();
        assert_eq!(
            read(&settings),
            installed(
                r#"{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/reflect-hook",
            "timeout": 15
          }
        ]
      }
    ],
    "SubagentStop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/reflect-hook",
            "timeout": 15
          }
        ]
      }
    ]
  }
}
"#,
                EXE
            )
        );
        // Adding SubagentStop later leaves Stop alone and only appends.
        fs::write(&settings, STOP_ONLY).unwrap();
        assert!(matches!(
            install(&request(&settings, true)).unwrap(),
            Change::Written { .. }
        ));
        assert_eq!(install(&request(&settings, true)).unwrap(), Change::Unchanged);
        assert_eq!(install(&request(&settings, false)).unwrap(), Change::Unchanged);
    }

    #[test]
    fn install_then_uninstall_restores_original_bytes() {
        let originals = [
            "{\"model\":\"opus\",\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"guard.sh\"}]}]}}",
            "{\n    \"env\": { \"A\": \"1\" },\n    \"hooks\": {}\n}",
            "{ \"hooks\": { \"Stop\": [ ] } }\n",
            "",
            "{}\n",
        ];
        for original in originals {
            for subagents in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let settings = dir.path().join("settings.local.json");
                fs::write(&settings, original).unwrap();
                let req = request(&settings, subagents);
                assert!(matches!(install(&req).unwrap(), Change::Written { .. }));
                assert_ne!(read(&settings), original);
                assert!(matches!(uninstall(&req).unwrap(), Change::Written { backup: Some(_) }));
                assert_eq!(read(&settings), original, "{original:?}, subagents: {subagents}");
                assert_eq!(uninstall(&req).unwrap(), Change::Unchanged);
            }
        }
    }

    #[test]
    fn uninstall_without_a_matching_backup_writes_the_pruned_result() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        fs::write(
            &settings,
            r#"{"a":1,"hooks":{"SubagentStop":[{"matcher":"","hooks":[{"type":"command","command":"/old/reflect-hook"}]}]},"b":2}"#,
        )
        .unwrap();
        fs::write(backup_path(&settings), r#"{"something": "else"}"#).unwrap();
        let req = request(&settings, false);
        assert!(matches!(uninstall(&req).unwrap(), Change::Written { .. }));
        assert_eq!(read(&settings), "{\n  \"a\": 1,\n  \"b\": 2\n}\n");
        assert_eq!(uninstall(&req).unwrap(), Change::Unchanged);
    }

    #[test]
    fn uninstall_keeps_foreign_handler_in_the_same_group() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        fs::write(
            &settings,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"},{"type":"command","command":"/usr/local/bin/reflect-hook","timeout":15}]}],"SubagentStop":[{"matcher":"","hooks":[{"type":"command","command":"'/opt/x y/reflect-hook'","timeout":15}]}]}}"#,
        )
        .unwrap();
        assert!(matches!(
            uninstall(&request(&settings, false)).unwrap(),
            Change::Written { .. }
        ));
        assert_eq!(
            read(&settings),
            r#"{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "say done"
          }
        ]
      }
    ]
  }
}
"#
        );
    }

    #[test]
    fn uninstall_of_missing_file_or_foreign_hooks_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        assert_eq!(uninstall(&request(&settings, true)).unwrap(), Change::Unchanged);
        assert!(!settings.exists());
        let original = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"reflect-hooks"}]}]}}"#;
        fs::write(&settings, original).unwrap();
        assert_eq!(uninstall(&request(&settings, true)).unwrap(), Change::Unchanged);
        assert_eq!(read(&settings), original);
        assert_eq!(dir_entries(dir.path()), ["settings.json"]);
    }

    #[test]
    fn invalid_json_is_refused_with_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let original = "{\n  \"a\": 1,\n  \"b\" 2\n}\n";
        fs::write(&settings, original).unwrap();
        for result in [
            install(&request(&settings, false)),
            uninstall(&request(&settings, false)),
        ] {
            let err = result.unwrap_err();
            assert!(
                matches!(err, InstallError::InvalidJson { line: 3, column: 7, .. }),
                "{err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!("{}:3:7: invalid JSON: expected `:`; not changed", settings.display())
            );
        }
        assert_eq!(read(&settings), original);
        assert_eq!(dir_entries(dir.path()), ["settings.json"]);
    }

    #[test]
    fn wrong_types_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let cases = [
            (
                r#"{"hooks": {"Stop": "reflect-hook"}}"#,
                "hooks.Stop is a string, expected an array",
            ),
            (r#"{"hooks": [1]}"#, "hooks is an array, expected an object"),
            (r#"{"hooks": null}"#, "hooks is null, expected an object"),
            ("[]", "the top level is an array, expected an object"),
            ("42", "the top level is a number, expected an object"),
        ];
        for (original, what) in cases {
            fs::write(&settings, original).unwrap();
            let err = install(&request(&settings, false)).unwrap_err();
            assert_eq!(err.to_string(), format!("{}: {what}; not changed", settings.display()));
            assert!(matches!(
                uninstall(&request(&settings, false)),
                Err(InstallError::NotAnObject { .. })
            ));
            assert_eq!(read(&settings), original);
        }
        // SubagentStop is only checked when it is going to be edited.
        fs::write(&settings, r#"{"hooks": {"SubagentStop": {}}}"#).unwrap();
        let err = install(&request(&settings, true)).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("hooks.SubagentStop is an object, expected an array; not changed")
        );
        assert!(matches!(
            install(&request(&settings, false)).unwrap(),
            Change::Written { .. }
        ));
        assert_eq!(
            dir_entries(dir.path()),
            ["settings.json", "settings.json.reflect-hook.bak"]
        );
    }

    #[test]
    fn old_reflect_hook_is_replaced_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        fs::write(
            &settings,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/old/bin/reflect-hook --v","timeout":30,"statusMessage":"reflecting"},{"type":"command","command":"say hi"}]},{"hooks":[{"type":"command","command":"/older/reflect-hook"}]}]}}"#,
        )
        .unwrap();
        let req = request(&settings, false);
        assert!(matches!(install(&req).unwrap(), Change::Written { .. }));
        assert_eq!(
            read(&settings),
            installed(
                r#"{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/reflect-hook",
            "timeout": 15,
            "statusMessage": "reflecting"
          },
          {
            "type": "command",
            "command": "say hi"
          }
        ]
      }
    ]
  }
}
"#,
                EXE
            )
        );
        assert_eq!(install(&req).unwrap(), Change::Unchanged);
    }

    #[test]
    fn current_handler_wins_over_an_older_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        fs::write(
            &settings,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/old/reflect-hook","timeout":15}]},{"hooks":[{"type":"command","command":"/usr/local/bin/reflect-hook","timeout":15}]}]}}"#,
        )
        .unwrap();
        assert!(matches!(
            install(&request(&settings, false)).unwrap(),
            Change::Written { .. }
        ));
        assert_eq!(read(&settings), installed(STOP_ONLY, EXE));
    }

    #[test]
    fn path_with_space_is_quoted_and_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let req = InstallRequest {
            settings: settings.clone(),
            command: hook_command(Path::new("/opt/my tools/reflect-hook")),
            subagents: false,
        };
        assert_eq!(req.command, "'/opt/my tools/reflect-hook'");
        install(&req).unwrap();
        assert_eq!(
            read(&settings),
            installed(
                &STOP_ONLY.replace(EXE, "'/opt/my tools/reflect-hook'"),
                "'/opt/my tools/reflect-hook'"
            )
        );
        assert_eq!(install(&req).unwrap(), Change::Unchanged);
        // Moving the binary to a plain path replaces the quoted handler.
        install(&request(&settings, false)).unwrap();
        assert_eq!(read(&settings), installed(STOP_ONLY, EXE));
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_settings_file_stays_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        let claude = dir.path().join(".claude");
        fs::create_dir_all(&dotfiles).unwrap();
        fs::create_dir_all(&claude).unwrap();
        let real = dotfiles.join("claude-settings.json");
        let original = "{\"theme\": \"dark\"}\n";
        fs::write(&real, original).unwrap();
        let link = claude.join("settings.json");
        std::os::unix::fs::symlink("../dotfiles/claude-settings.json", &link).unwrap();

        let req = request(&link, false);
        let backup = claude.join("settings.json.reflect-hook.bak");
        assert_eq!(
            install(&req).unwrap(),
            Change::Written {
                backup: Some(backup.clone())
            }
        );
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(
            fs::read_link(&link).unwrap(),
            Path::new("../dotfiles/claude-settings.json")
        );
        assert!(read(&real).contains("\"command\": \"/usr/local/bin/reflect-hook\""));
        assert_eq!(read(&backup), original);
        assert_eq!(dir_entries(&dotfiles), ["claude-settings.json"]);

        uninstall(&req).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(read(&real), original);
    }

    #[cfg(unix)]
    #[test]
    fn dangling_symlink_target_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(dir.path().join("store/settings.json"), &link).unwrap();
        assert_eq!(uninstall(&request(&link, false)).unwrap(), Change::Unchanged);
        assert_eq!(
            install(&request(&link, false)).unwrap(),
            Change::Written { backup: None }
        );
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(read(&dir.path().join("store/settings.json")), installed(STOP_ONLY, EXE));
    }

    #[cfg(unix)]
    #[test]
    fn permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        fs::write(&settings, "{}").unwrap();
        fs::set_permissions(&settings, fs::Permissions::from_mode(0o600)).unwrap();
        install(&request(&settings, false)).unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&settings), 0o600);
        assert_eq!(mode(&backup_path(&settings)), 0o600);
    }

    #[test]
    fn read_errors_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let err = install(&request(dir.path(), false)).unwrap_err();
        assert!(matches!(err, InstallError::Read { .. }), "{err:?}");
    }

    #[test]
    fn malformed_groups_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let original = r#"{"hooks":{"Stop":[1,"x",{"hooks":"reflect-hook"},{"hooks":[null,{"type":"command"}]}]}}"#;
        fs::write(&settings, original).unwrap();
        let req = request(&settings, false);
        install(&req).unwrap();
        let value: Value = serde_json::from_str(&read(&settings)).unwrap();
        assert_eq!(value["hooks"]["Stop"].as_array().unwrap().len(), 5);
        uninstall(&req).unwrap();
        assert_eq!(read(&settings), original);
    }

    fn json_leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z \"\\\\é]{0,8}".prop_map(Value::from),
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        json_leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-zA-Z]{1,6}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    fn handler_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            json_value(),
            prop::sample::select(vec![
                "say done",
                "/usr/bin/reflect-hooks",
                "'reflect-hook x'/y",
                "notify"
            ])
            .prop_map(|command| json!({"type": "command", "command": command})),
        ]
    }

    fn group_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            json_value(),
            (
                proptest::option::of("[a-z]{0,4}"),
                prop::collection::vec(handler_value(), 0..3)
            )
                .prop_map(|(matcher, handlers)| {
                    let mut group = Map::new();
                    if let Some(matcher) = matcher {
                        group.insert("matcher".into(), matcher.into());
                    }
                    group.insert("hooks".into(), handlers.into());
                    Value::Object(group)
                }),
        ]
    }

    /// Settings without any reflect-hook handler, with plausible `hooks` shapes.
    fn settings_value() -> impl Strategy<Value = Value> {
        let event = prop::sample::select(vec!["Stop", "SubagentStop", "PreToolUse", "Notification"]);
        let hooks = prop::collection::vec((event, prop::collection::vec(group_value(), 0..3)), 0..3)
            .prop_map(|events| Value::Object(events.into_iter().map(|(k, v)| (k.to_owned(), v.into())).collect()));
        (
            prop::collection::vec(("[a-z]{1,5}", json_value()), 0..3),
            proptest::option::of(hooks),
            0..3usize,
        )
            .prop_map(|(mut entries, hooks, at)| {
                if let Some(hooks) = hooks {
                    entries.insert(at.min(entries.len()), ("hooks".to_owned(), hooks));
                }
                Value::Object(entries.into_iter().collect())
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn quoting_round_trips(path in "[ -~é\\t]{0,24}") {
            let quoted = shell_quote(&path);
            prop_assert_eq!(first_shell_word(&quoted), Some(path));
        }

        #[test]
        fn first_shell_word_never_panics(command in "\\PC{0,32}") {
            let _ = first_shell_word(&command);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64), subagents: bool) {
            let dir = tempfile::tempdir().unwrap();
            let settings = dir.path().join("settings.json");
            fs::write(&settings, &bytes).unwrap();
            let req = request(&settings, subagents);
            if install(&req).is_err() {
                prop_assert_eq!(fs::read(&settings).unwrap(), bytes);
            }
            let _ = uninstall(&req);
        }

        #[test]
        fn install_is_idempotent_and_uninstall_restores(value in settings_value(), pretty: bool, subagents: bool) {
            let original = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
            let dir = tempfile::tempdir().unwrap();
            let settings = dir.path().join("settings.json");
            fs::write(&settings, &original).unwrap();
            let req = request(&settings, subagents);
            match install(&req) {
                Ok(change) => prop_assert!(matches!(change, Change::Written { backup: Some(_) }), "{:?}", change),
                Err(InstallError::NotAnObject { .. }) => {
                    prop_assert_eq!(read(&settings), original);
                    return Ok(());
                }
                Err(err) => return Err(TestCaseError::fail(err.to_string())),
            }
            let installed = read(&settings);
            let parsed: Value = serde_json::from_str(&installed).unwrap();
            let ours = |event: &str| our_positions(parsed["hooks"][event].as_array().map_or(&[][..], Vec::as_slice)).len();
            prop_assert_eq!(ours("Stop"), 1);
            prop_assert_eq!(ours("SubagentStop"), usize::from(subagents));
            prop_assert_eq!(install(&req).unwrap(), Change::Unchanged);
            prop_assert_eq!(read(&settings), installed);
            let change = uninstall(&req).unwrap();
            prop_assert!(matches!(change, Change::Written { .. }), "{:?}", change);
            prop_assert_eq!(read(&settings), original);
        }
    }
}
