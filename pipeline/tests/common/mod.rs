//! Shared by the integration tests that build git fixtures.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `program` in `dir`, isolated from the machine's git configuration and environment ([`testenv::isolated`]).
pub fn isolated(program: &str, dir: &Path, home: &Path) -> Command {
    testenv::isolated(program, dir, home)
}

/// The P2 fixture history (`tests/fixtures/p2-history.sh` at the workspace root) built in `dir/history`.
#[allow(dead_code)] // not every test binary that includes this module builds it
pub fn p2_fixture(dir: &Path) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let repo = dir.join("history");
    let status = isolated("bash", dir, dir)
        .arg(workspace.join("tests/fixtures/p2-history.sh"))
        .arg(&repo)
        .status()
        .expect("bash runs");
    assert!(status.success());
    repo
}

/// `git ARGS` in `repo`, isolated, as a fixed author and committer at `date` (RFC 3339).
#[allow(dead_code)]
pub fn git_at(repo: &Path, home: &Path, date: &str, args: &[&str]) {
    let status = isolated("git", repo, home)
        .args(args)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// Every file of a report set with its bytes, by name; the manifest (the sizes and digests of the others) by the
/// names it lists, so that two sets compare equal when their other files do.
#[allow(dead_code)]
pub fn report_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            if name == "manifest.json" {
                let manifest: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                let files: Vec<&serde_json::Value> = manifest["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| &f["name"])
                    .collect();
                return (name, format!("{files:?}").into_bytes());
            }
            (name, bytes)
        })
        .collect()
}
