//! The per-session lock: one hook run per session at a time, and no way for a dead or hung run to wedge capture.
//!
//! The lock is an advisory `flock` on `<dir>/.<key>.lock`, so a crashed run releases it the moment it dies. A run
//! that hangs while holding it loses it after `stale_after`: the next run unlinks the name and locks a new file.
//! A releasing run unlinks the file only while it still holds it and the name still refers to it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

#[derive(Debug)]
pub struct SessionLock {
    path: PathBuf,
    file: File,
}

impl SessionLock {
    /// Takes the lock for `key` in `dir`. `Ok(None)` when another live run holds it.
    pub fn acquire(dir: &Path, key: &str, stale_after: Duration) -> io::Result<Option<Self>> {
        let path = dir.join(format!(".{key}.lock"));
        for _ in 0..3 {
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)?;
            match file.try_lock() {
                Ok(()) => {
                    if !names_file(&path, &file) {
                        continue; // a releasing run unlinked this name between our open and lock
                    }
                    file.set_modified(SystemTime::now())?;
                    return Ok(Some(Self { path, file }));
                }
                Err(TryLockError::WouldBlock) => {
                    let age = file.metadata()?.modified()?.elapsed().unwrap_or_default();
                    if age <= stale_after {
                        return Ok(None);
                    }
                    // The holder is alive but hung: take the name away from it and try again.
                    if names_file(&path, &file) {
                        let _ = std::fs::remove_file(&path);
                    }
                }
                Err(TryLockError::Error(error)) => return Err(error),
            }
        }
        Ok(None)
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        if names_file(&self.path, &self.file) {
            let _ = std::fs::remove_file(&self.path);
        }
        // Closing the file releases the flock.
    }
}

#[cfg(unix)]
fn names_file(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(on_disk), Ok(open)) => on_disk.dev() == open.dev() && on_disk.ino() == open.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn names_file(path: &Path, _file: &File) -> bool {
    path.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_until_release() {
        let dir = tempfile::tempdir().unwrap();
        let first = SessionLock::acquire(dir.path(), "s1", Duration::from_secs(60)).unwrap();
        assert!(first.is_some());
        assert!(
            SessionLock::acquire(dir.path(), "s1", Duration::from_secs(60))
                .unwrap()
                .is_none()
        );
        assert!(
            SessionLock::acquire(dir.path(), "s2", Duration::from_secs(60))
                .unwrap()
                .is_some()
        );
        drop(first);
        assert!(
            !dir.path().join(".s1.lock").exists(),
            "released locks leave no file behind"
        );
        assert!(
            SessionLock::acquire(dir.path(), "s1", Duration::from_secs(60))
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_leftover_lock_file_without_a_holder_is_taken_at_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".s1.lock"), "crashed run").unwrap();
        assert!(
            SessionLock::acquire(dir.path(), "s1", Duration::from_secs(60))
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_hung_holder_loses_the_lock_after_the_stale_age() {
        let dir = tempfile::tempdir().unwrap();
        let hung = SessionLock::acquire(dir.path(), "s1", Duration::from_secs(60))
            .unwrap()
            .unwrap();
        hung.file
            .set_modified(SystemTime::now() - Duration::from_secs(120))
            .unwrap();
        let next = SessionLock::acquire(dir.path(), "s1", Duration::from_secs(60)).unwrap();
        assert!(next.is_some());
        drop(hung); // must not unlink the new holder's file
        assert!(dir.path().join(".s1.lock").exists());
    }
}
