//! Support for the end-to-end tests: the real binaries, git fixtures built by script, and sidecar checks.
//!
//! Fixtures run the `git` CLI with an isolated environment (no system or global configuration, a temporary HOME,
//! fixed identities and dates) so that the user's git setup can never change a result.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// Path of a workspace binary, built once per test process. Cargo hands a test `CARGO_BIN_EXE_<name>` only for its
/// own package's binaries, and these tests run two packages' (`phase0` of `pipeline`, `reflect-hook` of
/// `capture`), so they ask Cargo for both: under `cargo test --workspace` Cargo has already built them for those
/// packages' own tests and this `cargo build` finds everything fresh (0.4 s); under `cargo test -p e2e` it builds
/// them, and a stale binary is never run.
pub fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--bins", "--manifest-path"])
            .arg(&manifest)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the workspace binaries failed");
        // Test executables live in <target>/<profile>/deps; binaries one level up.
        let exe = std::env::current_exe().expect("test executable path");
        exe.parent()
            .and_then(Path::parent)
            .expect("target profile directory")
            .to_path_buf()
    });
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// `phase0` as a command, with P2's diff cache in the target directory (`<target>/<profile>/e2e-cache`) rather
/// than the user's cache directory: the tests exercise the default location without writing to `~/.cache`.
pub fn phase0() -> Command {
    let binary = binary("phase0");
    let mut command = Command::new(&binary);
    if let Some(dir) = binary.parent() {
        command.env("XDG_CACHE_HOME", dir.join("e2e-cache"));
    }
    command
}

/// A scratch area: a temporary HOME and as many repositories as a test needs.
pub struct Sandbox {
    pub root: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("temporary directory");
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        Self { root }
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }

    pub fn home(&self) -> PathBuf {
        self.path().join("home")
    }

    /// `git` with no system/global configuration and fixed identities.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let output = self.git_command(dir).args(args).output().expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout)
            .expect("git prints UTF-8")
            .trim_end()
            .to_string()
    }

    /// `program` in `dir` with a clean environment ([`testenv::isolated`]) and the sandbox's HOME.
    fn isolated(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        testenv::isolated(program, dir, &self.home())
    }

    /// Runs the fixture script `script` (a path relative to this crate, e.g. `fixtures/p2-history.sh`) with bash
    /// and `args`, in the same isolated environment as [`Sandbox::git`]; panics with its stderr if it fails.
    pub fn script(&self, script: &str, args: &[&Path]) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
        let output = self
            .isolated("bash", self.path())
            .arg(&path)
            .args(args)
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "{script} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    pub fn git_command(&self, dir: &Path) -> Command {
        let mut command = testenv::git(dir, &self.home());
        command
            .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
            .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z");
        command
    }

    /// A new repository `name` on branch `main` with one commit holding `files`.
    pub fn repo(&self, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = self.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.git(&dir, &["init", "--quiet", "--initial-branch=main"]);
        for (path, contents) in files {
            write(&dir.join(path), contents);
        }
        self.git(&dir, &["add", "--all"]);
        self.git(&dir, &["commit", "--quiet", "--allow-empty", "-m", "initial"]);
        dir
    }

    /// Runs `reflect-hook` as Claude Code would: `payload` on stdin, `env` on top of a clean environment.
    pub fn hook(&self, cwd: &Path, payload: &[u8], env: &[(&str, &str)]) -> Output {
        run_with_stdin(self.hook_command(cwd, env), payload)
    }

    pub fn hook_command(&self, cwd: &Path, env: &[(&str, &str)]) -> Command {
        let mut command = self.isolated(binary("reflect-hook"), cwd);
        for (key, value) in env {
            command.env(key, value);
        }
        command
    }
}

pub fn run_with_stdin(mut command: Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let bytes = stdin.to_vec();
    // The hook may stop reading early (oversized input); a broken pipe is then expected.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = pipe.write_all(&bytes);
    });
    let output = child.wait_with_output().expect("the binary finishes");
    writer.join().unwrap();
    output
}

/// The stdout of a run that must have exited 0 (else the test fails showing its stderr).
pub fn stdout_of_success(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

pub fn write(path: &Path, contents: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, contents).unwrap();
}

/// A Stop payload for `session_id` in `cwd`.
pub fn stop_payload(session_id: &str, cwd: &Path) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "session_id": session_id,
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "done",
        "background_tasks": [],
        "session_crons": []
    }))
    .unwrap()
}

/// Every file in `dir` (sorted names), or none when it does not exist.
pub fn files_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The sidecars in `dir`, parsed, each checked against the schema with the `jsonschema` crate.
pub fn sidecars(dir: &Path) -> Vec<(String, serde_json::Value)> {
    let schema: serde_json::Value = serde_json::from_str(capture::schema::REFLECTION_V1_SCHEMA).unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    files_in(dir)
        .into_iter()
        .filter(|name| name.ends_with(".reflection.json"))
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(&name)).unwrap();
            let document: serde_json::Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not whole JSON: {e}\n{text}"));
            let errors: Vec<String> = validator.iter_errors(&document).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{name} fails the schema: {errors:?}");
            let typed: Result<capture::Reflection, _> = serde_json::from_value(document.clone());
            assert!(typed.is_ok(), "{name} does not deserialise: {typed:?}");
            (name, document)
        })
        .collect()
}
