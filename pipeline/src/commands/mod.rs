//! What each `phase0` subcommand does, as library functions the thin `main.rs` calls, with the error kinds
//! that map to the documented exit codes.

pub mod corpus;
pub mod out_dir;
pub mod p1;
pub mod p2;
pub mod p2_audit;
pub mod p3;
pub mod pool;
pub mod suite;
pub mod synth;
pub mod weekly;

use std::path::{Path, PathBuf};

/// Exit codes of `phase0` (docs/commands.md, "Exit codes").
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
    /// Not the input's fault: a report could not be serialised.
    #[error("{0}")]
    Runtime(String),
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Input(_) => exit::INPUT,
            CommandError::Write { .. } | CommandError::Runtime(_) => exit::RUNTIME,
        }
    }

    /// A report (`what`: `p1.json`, …) that could not be serialised: a runtime error (exit 1), not bad input.
    pub fn serialise(what: &str) -> impl Fn(serde_json::Error) -> CommandError + '_ {
        move |error| CommandError::Runtime(format!("{what}: cannot serialise the report: {error}"))
    }
}

/// The line of a stdout block that says where an experiment's reports went (`phase0 p1`/`p2`/`p3`, `demo`).
pub fn reports_line(dir: &Path) -> String {
    format!("  reports         {}\n", dir.display())
}

/// The markdown template `name`: `dir/name` when `--templates DIR` was given, else the embedded one.
pub(crate) fn template(dir: Option<&Path>, name: &str, embedded: &str) -> Result<String, CommandError> {
    match dir {
        None => Ok(embedded.to_string()),
        Some(dir) => {
            let path = dir.join(name);
            crate::scan::input::read_text(&path)
                .map_err(|error| CommandError::Input(format!("{}: cannot read the template: {error}", path.display())))
        }
    }
}

/// The file that lists a report set, written last (see [`write_report_set`]).
pub const MANIFEST: &str = "manifest.json";

/// Writes a report set (an experiment's JSON, markdown, plots and tables, or a week's summary) into `dir` as
/// [`write_all_atomically`] does, and [`MANIFEST`], renamed into place after every file of the set: each file with
/// its size and sha256. The old manifest is
/// removed before the first file is replaced, so a directory whose manifest is missing, or whose files do not
/// match it, is one a run is writing or was killed writing: its files may come from two runs.
pub fn write_report_set(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<PathBuf>, CommandError> {
    use sha2::Digest;
    let manifest_path = dir.join(MANIFEST);
    match std::fs::remove_file(&manifest_path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            return Err(CommandError::Write {
                path: manifest_path,
                source: error,
            });
        }
        _ => {}
    }
    // The manifest is staged with the files, in the same round of writes and syncs (one wait on the disk, not two),
    // and renamed into place after them. Its digests are computed while the files are written and synced, so
    // hashing a large task table overlaps its write instead of following it.
    let manifest = || {
        use rayon::prelude::*;
        let mut entries: Vec<serde_json::Value> = files
            .par_iter()
            .map(|(name, bytes)| {
                serde_json::json!({
                    "name": name,
                    "bytes": bytes.len(),
                    "sha256": format!("{:x}", sha2::Sha256::digest(bytes)),
                })
            })
            .collect();
        entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let manifest = serde_json::json!({ "schema": "phase0.manifest.v1", "files": entries });
        let mut bytes = serde_json::to_vec_pretty(&manifest).expect("a JSON value serialises");
        bytes.push(b'\n');
        bytes
    };
    stage_and_rename(dir, files, Some((MANIFEST, &manifest)))
}

/// One file written atomically at `path` (its directory made if missing), such as an audit sheet (`--out`).
pub(crate) fn write_file_atomically(path: &Path, bytes: Vec<u8>) -> Result<Vec<PathBuf>, CommandError> {
    let (dir, file) = match (path.parent(), path.file_name()) {
        (Some(dir), Some(file)) => (
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            },
            file.to_string_lossy().into_owned(),
        ),
        _ => {
            return Err(CommandError::Input(format!(
                "--out {}: not a file path",
                path.display()
            )));
        }
    };
    write_all_atomically(dir, &[(file, bytes)])
}

/// Writes every `(name, bytes)` into `dir` so that a reader never sees a partial file: each goes to a temporary
/// file in `dir` first (`.tmp-<pid>-…`), and only when all are complete are they renamed into place. Temporary
/// files that a killed run left (their process is gone) are removed first.
pub fn write_all_atomically(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<PathBuf>, CommandError> {
    stage_and_rename(dir, files, None)
}

/// The bytes of a file computed while the others are written (a report set's manifest).
type Computed<'a> = (&'a str, &'a (dyn Fn() -> Vec<u8> + Sync));

/// [`write_all_atomically`], and `last` (named, its bytes computed on a thread of its own) staged with the files and
/// renamed after all of them. The paths returned are the files', `last`'s not included.
fn stage_and_rename(
    dir: &Path,
    files: &[(String, Vec<u8>)],
    last: Option<Computed<'_>>,
) -> Result<Vec<PathBuf>, CommandError> {
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CommandError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(write_error(dir))?;
    remove_orphaned_temporaries(dir);
    let prefix = format!(".tmp-{}-", std::process::id());
    let stage = |name: &str, bytes: &[u8]| -> Result<(tempfile::NamedTempFile, PathBuf), CommandError> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
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
    // error in `files` order wins (then `last`'s); the other temporary files are removed when dropped.
    let (staged, last) = std::thread::scope(|scope| {
        let staging: Vec<_> = files
            .iter()
            .map(|(name, bytes)| scope.spawn(|| stage(name, bytes)))
            .collect();
        let last = last.map(|(name, bytes)| scope.spawn(move || stage(name, &bytes())));
        let join = |handle: std::thread::ScopedJoinHandle<'_, _>| {
            handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        let staged = staging.into_iter().map(join).collect::<Vec<_>>();
        (staged, last.map(join))
    });
    let staged: Vec<(tempfile::NamedTempFile, PathBuf)> = staged.into_iter().collect::<Result<_, _>>()?;
    let last = last.transpose()?;
    let persist = |temp: tempfile::NamedTempFile, path: &Path| {
        temp.persist(path).map(drop).map_err(|error| CommandError::Write {
            path: path.to_path_buf(),
            source: error.error,
        })
    };
    // Renamed on a thread each too: a rename over an older report frees that file's blocks, which on a file system
    // that discards them takes milliseconds per file (on this project's benchmark machine 1-5 ms each).
    let rename = |(temp, path): (tempfile::NamedTempFile, PathBuf)| {
        persist(temp, &path)?;
        out_dir::failpoint("reports-renamed-one");
        Ok(path)
    };
    let renamed: Vec<Result<PathBuf, CommandError>> = if staged.len() < 2 {
        staged.into_iter().map(rename).collect()
    } else {
        std::thread::scope(|scope| {
            let renaming: Vec<_> = staged.into_iter().map(|file| scope.spawn(|| rename(file))).collect();
            renaming
                .into_iter()
                .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        })
    };
    let written = renamed.into_iter().collect::<Result<Vec<_>, _>>()?;
    if let Some((temp, path)) = last {
        persist(temp, &path)?;
    }
    Ok(written)
}

/// Removes the `.tmp-<pid>-…` files in `dir` whose process no longer runs (a run killed while writing). Best
/// effort: what cannot be listed or removed is left for the next run.
fn remove_orphaned_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(".tmp-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !process_runs(pid) && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (on other systems than Unix, always assumed to).
fn process_runs(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 only checks that the process exists; nothing is sent.
        let result = unsafe { libc::kill(pid, 0) };
        result == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
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

    #[test]
    fn a_report_that_cannot_be_serialised_is_a_runtime_error() {
        // JSON object keys must be strings: a map keyed by pairs cannot be serialised.
        let map: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let error = CommandError::serialise("p1.json")(serde_json::to_vec(&map).unwrap_err());
        assert_eq!(error.exit_code(), exit::RUNTIME);
        assert!(
            error.to_string().starts_with("p1.json: cannot serialise the report: "),
            "{error}"
        );
    }

    #[test]
    fn a_report_set_ends_with_its_manifest_and_orphans_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A temporary file of a process that is gone (pid 2^22 + 1 is above Linux's pid_max of 2^22), and one of
        // this process, which runs.
        let orphan = dir.path().join(".tmp-4194305-abc");
        let live = dir.path().join(format!(".tmp-{}-def", std::process::id()));
        std::fs::write(&orphan, "partial").unwrap();
        std::fs::write(&live, "in progress").unwrap();
        std::fs::write(dir.path().join(MANIFEST), "stale").unwrap();
        let files = [
            ("b.md".to_string(), b"# b\n".to_vec()),
            ("a.json".to_string(), b"{}".to_vec()),
        ];
        write_report_set(dir.path(), &files).unwrap();
        assert!(!orphan.exists(), "the dead run's temporary file is removed");
        assert!(live.exists(), "a running process's temporary file is kept");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap(),
            r#"{
  "schema": "phase0.manifest.v1",
  "files": [
    {
      "name": "a.json",
      "bytes": 2,
      "sha256": "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    },
    {
      "name": "b.md",
      "bytes": 4,
      "sha256": "d872451e4b3cda63d8cd50d1ea4bd9af3fbe0e8255bd3f9a6a16c84fcae54f7f"
    }
  ]
}
"#
        );
    }
}
