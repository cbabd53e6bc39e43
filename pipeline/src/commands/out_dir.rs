//! An output directory that survives crashes and concurrent runs.
//!
//! - **One writer at a time.** A run takes an exclusive lock on `DIR/.phase0.lock` (an advisory `flock`, released
//!   by the kernel when the process ends, however it ends) before it writes into `DIR`. A second run into the same
//!   directory says on stderr that it waits, then waits: runs of a CI matrix that share an output directory finish
//!   one after the other instead of losing each other's index entries.
//! - **Recovery.** Under the lock, what a killed run left behind is repaired before anything else: a week renamed
//!   aside (`.old-<week>-…/<week>`) whose replacement never arrived is put back; a week that did arrive has its old
//!   copy removed; staging directories and temporary files (`.tmp-…`) are removed (no other run can be using them,
//!   since it would hold the lock).
//! - **Failpoints.** `PHASE0_FAILPOINT=<name>` aborts the process at the named point, as a kill would; the tests
//!   use it to kill a run at every rename. Unset, it costs one environment lookup per point.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::CommandError;

/// The lock file's name in an output directory.
pub const LOCK_FILE: &str = ".phase0.lock";

/// Holds the lock on an output directory until dropped.
#[derive(Debug)]
pub struct OutDirLock {
    _file: File,
    path: PathBuf,
}

impl OutDirLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Creates `dir` if needed and locks it for this run, waiting (and saying so on stderr) while another run holds it.
pub fn lock(dir: &Path) -> Result<OutDirLock, CommandError> {
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CommandError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(write_error(dir))?;
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(write_error(&path))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!(
                "phase0: another run is writing into {}; waiting for it to finish",
                dir.display()
            );
            file.lock().map_err(write_error(&path))?;
        }
        Err(std::fs::TryLockError::Error(error)) => return Err(write_error(&path)(error)),
    }
    Ok(OutDirLock { _file: file, path })
}

/// What [`recover`] repaired.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Weeks put back from `.old-<week>-…` because their replacement never arrived.
    pub restored: Vec<String>,
    /// Old copies and staging left by a killed run, removed.
    pub removed: Vec<String>,
}

/// Repairs what a killed run left in `dir` (see the module documentation). Call it holding [`lock`].
pub fn recover(dir: &Path, _lock: &OutDirLock) -> Result<Recovered, CommandError> {
    let mut recovered = Recovered::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(recovered);
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let write_error = |path: PathBuf| move |source| CommandError::Write { path, source };
    for name in names {
        let path = dir.join(&name);
        if let Some(rest) = name.strip_prefix(".old-") {
            // `.old-<week>-<random>/<week>`: the week that was being replaced.
            let Some((week, _)) = rest.rsplit_once('-') else {
                continue;
            };
            let old = path.join(week);
            let target = dir.join(week);
            if old.is_dir() && !target.exists() {
                std::fs::rename(&old, &target).map_err(write_error(target.clone()))?;
                recovered.restored.push(week.to_string());
            }
            std::fs::remove_dir_all(&path).map_err(write_error(path.clone()))?;
            recovered.removed.push(name);
        } else if name.starts_with(".tmp-") {
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(write_error(path.clone()))?;
            recovered.removed.push(name);
        }
    }
    Ok(recovered)
}

/// Aborts the process here when `PHASE0_FAILPOINT` names this point (tests kill a run at each rename this way).
pub fn failpoint(name: &str) {
    if std::env::var_os("PHASE0_FAILPOINT").is_some_and(|point| point == name) {
        eprintln!("phase0: failpoint {name}: aborting");
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_swap_is_undone_and_staging_removed() {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path();
        // Killed between the two renames: the old week is aside, the new one still staged.
        std::fs::create_dir_all(dir.join(".old-2026-W47-abc123/2026-W47")).unwrap();
        std::fs::write(dir.join(".old-2026-W47-abc123/2026-W47/week.json"), "old").unwrap();
        std::fs::create_dir_all(dir.join(".tmp-2026-W47-def456/p1")).unwrap();
        // Killed after the second rename: the new week is in place, the old copy not yet removed.
        std::fs::create_dir_all(dir.join("2026-W46")).unwrap();
        std::fs::write(dir.join("2026-W46/week.json"), "new").unwrap();
        std::fs::create_dir_all(dir.join(".old-2026-W46-xyz/2026-W46")).unwrap();
        std::fs::write(dir.join(".old-2026-W46-xyz/2026-W46/week.json"), "older").unwrap();
        // A temporary report file and a user's file.
        std::fs::write(dir.join(".tmp-Qx12"), "partial").unwrap();
        std::fs::write(dir.join("notes.md"), "mine").unwrap();

        let lock = lock(dir).unwrap();
        let recovered = recover(dir, &lock).unwrap();
        assert_eq!(recovered.restored, ["2026-W47"]);
        assert_eq!(
            recovered.removed,
            [
                ".old-2026-W46-xyz",
                ".old-2026-W47-abc123",
                ".tmp-2026-W47-def456",
                ".tmp-Qx12"
            ]
        );
        assert_eq!(std::fs::read_to_string(dir.join("2026-W47/week.json")).unwrap(), "old");
        assert_eq!(std::fs::read_to_string(dir.join("2026-W46/week.json")).unwrap(), "new");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [".phase0.lock", "2026-W46", "2026-W47", "notes.md"]);
    }

    #[test]
    fn a_second_lock_on_the_same_directory_waits() {
        let out = tempfile::tempdir().unwrap();
        let first = lock(out.path()).unwrap();
        let file = File::open(first.path()).unwrap();
        assert!(matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        drop(first);
        file.try_lock().expect("free once the first run is done");
    }
}
