//! One run of the Stop / SubagentStop hook: read the payload, scan the change surface within the time budget,
//! merge the self-report and write one `reflection.v1` sidecar atomically.
//!
//! Nothing here returns an error to the caller: every problem becomes a degraded sidecar or no sidecar, plus a
//! diagnostic line that only `REFLECTION_DEBUG` makes visible. The binary always exits 0 and never prints to
//! stdout (Claude Code parses it).

pub mod env;
pub mod instructions;
pub mod lock;
pub mod payload;
pub mod self_report;
pub mod store;

use std::io::{Read, Write};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crate::redact::redact;
use crate::reflection::{Provenance, Reflection, SchemaVersion, Source};
use crate::risk::evaluate_risk_floor;
use crate::surface::{SharedPaths, SurfaceOptions, collect_change_surface, discover_work_tree};

pub use env::{DebugSink, HookEnv};
use lock::SessionLock;
use payload::Payload;
use store::{SidecarStore, sanitize_key};

/// The hook's scratch directory and its defaults, relative to the repository root.
pub const DEFAULT_DIR: &str = ".mosaic/reflections";
pub const DEFAULT_INPUT: &str = ".mosaic/reflection-input.json";
/// The debug log (`REFLECTION_DEBUG=file`) and the size at which it is rotated once.
pub const DEBUG_LOG: &str = "reflect-hook.log";
const DEBUG_LOG_MAX_BYTES: u64 = 1024 * 1024;

/// What a run did, for tests and the debug log.
#[derive(Debug)]
pub struct Outcome {
    pub sidecar: Option<PathBuf>,
    pub degraded: bool,
    pub diagnostics: Vec<String>,
}

/// Runs the hook once. `stdin` is the payload source.
pub fn run(env: &HookEnv, stdin: impl Read + Send + 'static) -> Outcome {
    let started = Instant::now();
    let mut run = Run {
        env,
        started,
        diagnostics: Vec::new(),
        log_dir: None,
    };
    let (sidecar, degraded) = run
        .capture(started, stdin)
        .map_or((None, false), |(path, degraded)| (Some(path), degraded));
    run.diag(format!("done in {:.1} ms", started.elapsed().as_secs_f64() * 1e3));
    run.flush_diagnostics();
    Outcome {
        sidecar,
        degraded,
        diagnostics: run.diagnostics,
    }
}

struct Run<'a> {
    env: &'a HookEnv,
    started: Instant,
    diagnostics: Vec<String>,
    log_dir: Option<PathBuf>,
}

impl Run<'_> {
    fn diag(&mut self, message: impl Into<String>) {
        if self.env.debug != DebugSink::Off {
            self.diagnostics.push(message.into());
        }
    }

    /// Marks the end of a phase (debug output only), so slow runs can be explained.
    fn phase(&mut self, name: &str) {
        if self.env.debug != DebugSink::Off {
            let at = self.started.elapsed().as_secs_f64() * 1e3;
            self.diagnostics.push(format!("{at:7.2} ms  {name}"));
        }
    }

    fn capture(&mut self, started: Instant, stdin: impl Read + Send + 'static) -> Option<(PathBuf, bool)> {
        let env = self.env;
        let deadline = started + env.budget;
        // Leave a slice of the budget for writing the sidecar.
        let scan_deadline = deadline - (env.budget / 10).min(Duration::from_millis(100));

        let payload = match payload::read_bounded(stdin, (env.budget / 2).min(Duration::from_secs(1))) {
            Ok(bytes) => Payload::parse(&bytes),
            Err(problem) => {
                self.diag(format!("no payload read from stdin: {problem:?}"));
                Payload::default()
            }
        };
        let session_id = payload
            .session_id
            .clone()
            .or_else(|| env.session_id.clone())
            .unwrap_or_else(|| "unknown".into());
        let key = match (&payload.agent_id, payload.is_subagent()) {
            (Some(agent_id), true) => format!("{}-{}", sanitize_key(&session_id), sanitize_key(agent_id)),
            _ => sanitize_key(&session_id),
        };

        self.phase("payload read");
        let (repo, root) = self.locate(&payload)?;
        self.phase("repository opened");
        let dir = resolve(&root, env.dir.as_deref(), DEFAULT_DIR);
        if let Err(error) = std::fs::create_dir_all(&dir) {
            self.diag(format!(
                "{}: cannot create the reflections directory: {error}",
                dir.display()
            ));
            return None;
        }
        self.log_dir = Some(dir.clone());
        write_mosaic_gitignore(&root);
        let stale_after = (env.budget * 4).max(Duration::from_secs(60));
        let _lock = match SessionLock::acquire(&dir, &key, stale_after) {
            Ok(Some(lock)) => lock,
            Ok(None) => {
                self.diag(format!("session {key}: another run holds the lock; not writing"));
                return None;
            }
            Err(error) => {
                self.diag(format!("{}: cannot take the session lock: {error}", dir.display()));
                return None;
            }
        };

        self.phase("lock taken");
        let input = resolve(&root, env.input.as_deref(), DEFAULT_INPUT);
        let scan = repo.as_ref().map(|repo| {
            let exclude = [&dir, &input]
                .iter()
                .filter_map(|path| relative_to(&root, path))
                .collect();
            Scan::start(
                repo,
                SurfaceOptions {
                    base: env.base.clone(),
                    exclude,
                    interrupt: Arc::default(),
                },
            )
        });

        // While the scan runs: what this session wrote before, and the self-report.
        let store = SidecarStore::new(&dir);
        let previous = store.previous(&key).unwrap_or_else(|error| {
            self.diag(format!("{}: cannot list previous sidecars: {error}", dir.display()));
            Default::default()
        });
        let self_report = self.self_report(&input, &root, &session_id, previous.newest, &payload);

        self.phase("previous sidecars and self-report read");
        let (files, complete) = match scan {
            Some(scan) => scan.finish(scan_deadline),
            None => (Vec::new(), Err("no git work tree".to_string())),
        };
        if let Err(why) = &complete {
            self.diag(format!("change surface incomplete: {why}"));
        }
        self.phase("change surface scanned");
        let degraded = self_report.is_err() || complete.is_err();
        let self_report = self_report.unwrap_or_default();

        let repo_name = root
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let task_ref = env
            .task_ref
            .clone()
            .unwrap_or_else(|| default_task_ref(&repo_name, repo.as_ref()));
        let agent = env
            .agent
            .clone()
            .or_else(|| payload.agent_type.clone())
            .unwrap_or_else(|| "unknown".into());
        let timestamp = jiff::Timestamp::now()
            .round(
                jiff::TimestampRound::new()
                    .smallest(jiff::Unit::Microsecond)
                    .mode(jiff::RoundMode::Trunc),
            )
            .unwrap_or_else(|_| jiff::Timestamp::now());
        let reflection = Reflection {
            schema: SchemaVersion::V1,
            task_ref: redact(&task_ref).into_owned(),
            agent: redact(&agent).into_owned(),
            session_id,
            timestamp,
            repo: repo_name,
            confidence: self_report.confidence,
            most_likely_wrong: self_report.most_likely_wrong,
            known_not_in_diff: self_report.known_not_in_diff,
            risk: evaluate_risk_floor(&files, None, None, env.risk_threshold),
            files_changed: files,
            provenance: Provenance {
                source: Source::StopHook,
                reflection_attempt: NonZeroU32::MIN.saturating_add(previous.count),
                degraded,
                reflection_mode: env.mode,
            },
        };
        self.phase("sidecar assembled (risk floor, redaction)");
        let mut json = match serde_json::to_vec_pretty(&reflection) {
            Ok(json) => json,
            Err(error) => {
                self.diag(format!("cannot serialise the sidecar: {error}"));
                return None;
            }
        };
        json.push(b'\n');
        match store.write(&key, timestamp, &json) {
            Ok(path) => {
                self.diag(format!("wrote {}", path.display()));
                Some((path, degraded))
            }
            Err(error) => {
                self.diag(format!("{}: cannot write the sidecar: {error}", dir.display()));
                None
            }
        }
    }

    /// The file wins when it is fresh for this session; otherwise the last block of the final message counts.
    fn self_report(
        &mut self,
        input: &Path,
        root: &Path,
        session_id: &str,
        previous: Option<std::time::SystemTime>,
        payload: &Payload,
    ) -> Result<self_report::SelfReport, self_report::NotMerged> {
        let from_file = self_report::load(input, root, session_id, previous);
        if let Err(why) = &from_file {
            self.diag(format!("{}: {why}", input.display()));
        } else {
            return from_file;
        }
        let Some(message) = payload.last_assistant_message.as_deref() else {
            self.diag("the payload has no last assistant message");
            return from_file;
        };
        match self_report::from_message(message) {
            Err(self_report::NotMerged::Missing) => {
                self.diag(format!(
                    "last assistant message: no ```{} block",
                    instructions::BLOCK_TAG
                ));
                from_file
            }
            result => {
                if let Err(why) = &result {
                    self.diag(format!("last assistant message: {why}"));
                }
                result
            }
        }
    }

    /// The repository: the work tree containing the payload's `cwd`, else `CLAUDE_PROJECT_DIR`'s, else the process
    /// directory's. Without one, the first of those directories that exists stands in as the root.
    fn locate(&mut self, payload: &Payload) -> Option<(Option<gix::Repository>, PathBuf)> {
        let candidates: Vec<PathBuf> = [
            payload.cwd.clone(),
            self.env.project_dir.clone(),
            std::env::current_dir().ok(),
        ]
        .into_iter()
        .flatten()
        // A relative `cwd` (Claude Code sends absolute ones; other callers may not) is taken from the process
        // directory: discovered as given, its work tree would be "" and the sidecar's `repo` empty.
        .filter_map(|dir| std::path::absolute(dir).ok())
        .filter(|dir| dir.is_dir())
        .collect();
        for dir in &candidates {
            match discover_work_tree(dir) {
                Ok(repo) => {
                    let root = repo.workdir().map(Path::to_path_buf)?;
                    return Some((Some(repo), root));
                }
                Err(error) => self.diag(error.to_string()),
            }
        }
        match candidates.into_iter().next() {
            Some(dir) => Some((None, dir)),
            None => {
                self.diag("no directory to write to: cwd, CLAUDE_PROJECT_DIR and the process directory are all gone");
                None
            }
        }
    }

    fn flush_diagnostics(&self) {
        if self.diagnostics.is_empty() {
            return;
        }
        let text: String = self
            .diagnostics
            .iter()
            .map(|line| format!("reflect-hook: {line}\n"))
            .collect();
        match (self.env.debug, &self.log_dir) {
            (DebugSink::File, Some(dir)) => append_bounded(&dir.join(DEBUG_LOG), text.as_bytes()),
            _ => {
                let _ = std::io::stderr().write_all(text.as_bytes());
            }
        }
    }
}

/// The change-surface scan, on its own thread so the run can stop waiting at its deadline.
struct Scan {
    paths: SharedPaths,
    interrupt: Arc<AtomicBool>,
    done: mpsc::Receiver<Result<(), String>>,
}

impl Scan {
    fn start(repo: &gix::Repository, options: SurfaceOptions) -> Self {
        let paths = SharedPaths::default();
        let interrupt = options.interrupt.clone();
        let (tx, done) = mpsc::channel();
        let repo = repo.clone().into_sync();
        let sink = paths.clone();
        let spawned = std::thread::Builder::new()
            .name("reflect-hook-scan".into())
            .spawn(move || {
                let repo = repo.to_thread_local();
                let result = collect_change_surface(&repo, &options, &sink)
                    .map(|_| ())
                    .map_err(|e| e.to_string());
                let _ = tx.send(result);
            });
        if let Err(error) = spawned {
            let (tx, failed) = mpsc::channel();
            let _ = tx.send(Err(format!("cannot start the scan: {error}")));
            return Self {
                paths,
                interrupt,
                done: failed,
            };
        }
        Self { paths, interrupt, done }
    }

    /// The paths found by `deadline`, and whether the scan completed.
    fn finish(self, deadline: Instant) -> (Vec<String>, Result<(), String>) {
        let waited = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let complete = match waited {
            Ok(result) => result,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.interrupt.store(true, Ordering::Relaxed);
                Err("time budget exhausted".to_string())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("the scan stopped unexpectedly".to_string()),
        };
        (self.paths.snapshot(), complete)
    }
}

/// `<repo>#<branch>`; a detached `HEAD` names its short commit id, a repository-less run just the directory.
fn default_task_ref(repo_name: &str, repo: Option<&gix::Repository>) -> String {
    let Some(repo) = repo else { return repo_name.to_string() };
    if let Ok(Some(name)) = repo.head_name() {
        return format!("{repo_name}#{}", name.shorten());
    }
    match repo.head_id() {
        Ok(id) => format!("{repo_name}#{}", id.shorten_or_id()),
        Err(_) => repo_name.to_string(),
    }
}

fn resolve(root: &Path, configured: Option<&Path>, default: &str) -> PathBuf {
    match configured {
        Some(path) if path.is_absolute() => path.to_path_buf(),
        Some(path) => root.join(path),
        None => root.join(default),
    }
}

/// `path` relative to `root` with `/` separators, when it lies inside it.
fn relative_to(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// What `.mosaic/.gitignore` holds when the hook creates it (it never overwrites one).
pub const MOSAIC_GITIGNORE: &str = "\
# Written once by reflect-hook; edit freely, it is never overwritten.
# Scratch, never committed:
/reflection-input.json
/reflections/.*.lock
/reflections/.tmp-*
/reflections/reflect-hook.log*
# Sidecars. The weekly job labels only sidecars committed to the repository: teams that want it to see theirs
# delete the next line and commit .mosaic/reflections/*.json with their work.
/reflections/*.json
";

/// Creates `<root>/.mosaic/.gitignore` when `.mosaic/` exists and has none, so the hook's files do not clutter
/// `git status`.
fn write_mosaic_gitignore(root: &Path) {
    let mosaic = root.join(".mosaic");
    if !mosaic.is_dir() {
        return;
    }
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(mosaic.join(".gitignore"))
    {
        let _ = file.write_all(MOSAIC_GITIGNORE.as_bytes());
    }
}

/// Appends to the debug log, rotating it once it passes its bound so it can never grow without limit.
fn append_bounded(path: &Path, bytes: &[u8]) {
    if std::fs::metadata(path).is_ok_and(|metadata| metadata.len() > DEBUG_LOG_MAX_BYTES) {
        let _ = std::fs::rename(path, path.with_extension("log.1"));
    }
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = file.write_all(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_paths_resolve_against_the_root() {
        let root = Path::new("/repo");
        assert_eq!(
            resolve(root, None, DEFAULT_DIR),
            PathBuf::from("/repo/.mosaic/reflections")
        );
        assert_eq!(
            resolve(root, Some(Path::new("out")), DEFAULT_DIR),
            PathBuf::from("/repo/out")
        );
        assert_eq!(
            resolve(root, Some(Path::new("/abs")), DEFAULT_DIR),
            PathBuf::from("/abs")
        );
        assert_eq!(
            relative_to(root, Path::new("/repo/notes/r")),
            Some("notes/r".to_string())
        );
        assert_eq!(relative_to(root, Path::new("/elsewhere")), None);
        assert_eq!(relative_to(root, root), None);
    }
}
