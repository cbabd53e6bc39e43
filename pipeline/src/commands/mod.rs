//! What each `phase0` subcommand does, as library functions the thin `main.rs` calls, with the error kinds
//! that map to the documented exit codes.

pub mod corpus;
pub mod p1;
pub mod p2;
pub mod p2_audit;
pub mod p3;
pub mod suite;
pub mod synth;
pub mod weekly;

use std::path::{Path, PathBuf};

/// Exit codes of `phase0` (README, "Exit codes").
pub mod exit {
    /// The run completed and its reports were written (whatever the verdict).
    pub const OK: u8 = 0;
    /// Something failed that is not the input's fault (an output could not be written).
    pub const RUNTIME: u8 = 1;
    /// Bad usage or bad input: an invalid row, pre-registration, template or date.
    pub const INPUT: u8 = 2;
    /// `demo` and `weekly`: the run completed but at least one experiment's input was missing or it failed; the
    /// others' reports were written.
    pub const PARTIAL: u8 = 3;
}

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The input is at fault; the message names the file and line or record.
    #[error("{0}")]
    Input(String),
    #[error("{path}: cannot write: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Input(_) => exit::INPUT,
            CommandError::Write { .. } => exit::RUNTIME,
        }
    }
}

/// The markdown template `name`: `dir/name` when `--templates DIR` was given, else the embedded one.
pub(crate) fn template(dir: Option<&Path>, name: &str, embedded: &str) -> Result<String, CommandError> {
    match dir {
        None => Ok(embedded.to_string()),
        Some(dir) => {
            let path = dir.join(name);
            std::fs::read_to_string(&path)
                .map_err(|error| CommandError::Input(format!("{}: cannot read the template: {error}", path.display())))
        }
    }
}

/// Writes every `(name, bytes)` into `dir` so that a reader never sees a partial file: each goes to a temporary
/// file in `dir` first, and only when all are complete are they renamed into place.
pub fn write_all_atomically(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<PathBuf>, CommandError> {
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CommandError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(write_error(dir))?;
    let stage = |name: &str, bytes: &[u8]| -> Result<(tempfile::NamedTempFile, PathBuf), CommandError> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(".tmp-");
        // Temporary files are private (0600) by default; a report is for reading, as if `>` had written it (the
        // umask still applies).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let mut temp = builder.tempfile_in(dir).map_err(write_error(dir))?;
        std::io::Write::write_all(&mut temp, bytes).map_err(write_error(temp.path()))?;
        temp.as_file().sync_all().map_err(write_error(temp.path()))?;
        Ok((temp, dir.join(name)))
    };
    // Each file is written and synced on its own thread: the syncs wait on the disk, not on each other. The first
    // error in `files` order wins; the other temporary files are removed when dropped.
    let staged: Vec<(tempfile::NamedTempFile, PathBuf)> = std::thread::scope(|scope| {
        let staging: Vec<_> = files
            .iter()
            .map(|(name, bytes)| scope.spawn(|| stage(name, bytes)))
            .collect();
        staging
            .into_iter()
            .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect::<Vec<_>>()
    })
    .into_iter()
    .collect::<Result<_, _>>()?;
    let mut written = Vec::with_capacity(staged.len());
    for (temp, path) in staged {
        temp.persist(&path).map_err(|error| CommandError::Write {
            path: path.clone(),
            source: error.error,
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn reports_are_readable_by_others_and_replace_old_ones() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "old").unwrap();
        let written = write_all_atomically(dir.path(), &[("a.md".into(), b"new".to_vec())]).unwrap();
        assert_eq!(written, [dir.path().join("a.md")]);
        assert_eq!(std::fs::read(&written[0]).unwrap(), b"new");
        // 0644 less the umask, as a plain `File::create` (0666 less the umask) would be, less write for others.
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&written[0]), mode(&plain) & 0o644);
        std::fs::remove_file(&plain).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left behind"
        );
    }
}
