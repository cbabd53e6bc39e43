//! Opening input files so that no input can hang or exhaust a run (the hook's or `phase0`'s): regular files only,
//! opened without blocking, and read with a size cap.
//!
//! A FIFO would block `open` (and then `read`) until a writer appears, possibly forever; a device such as
//! `/dev/zero` or `/dev/urandom` never ends, so reading it whole grows until the kernel kills the process. Both are
//! refused before a byte is read: the file is opened with `O_NONBLOCK` (which makes opening a FIFO return at once
//! and is ignored by regular files) and then checked with `fstat` on the open descriptor, so a file swapped between
//! a check and the open is caught too.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading when it is a regular file (symlinks followed); anything else is an
/// [`io::ErrorKind::InvalidInput`] error saying what it is.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        Ok(file)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({}); only regular files are read", describe(&kind)),
        ))
    }
}

/// Reads `path`, a regular file of at most `cap` bytes, whole.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len > cap {
        return Err(too_large(len, cap));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // `take` guards against a file that grows while it is read.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64, cap));
    }
    Ok(bytes)
}

fn too_large(len: u64, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{len} bytes, over the limit of {} MiB for this input",
            cap / (1024 * 1024)
        ),
    )
}

fn describe(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() { "a directory" } else { "not a file" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_caps_hold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "x = 1\n").unwrap();
        assert_eq!(read_capped(&path, 6).unwrap(), b"x = 1\n");
        assert_eq!(
            read_capped(&path, 3).unwrap_err().to_string(),
            "6 bytes, over the limit of 0 MiB for this input"
        );
        let dir_error = open_regular(dir.path()).unwrap_err();
        assert_eq!(dir_error.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            dir_error.to_string(),
            "not a regular file (a directory); only regular files are read"
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_without_blocking() {
        let zero = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            zero.to_string(),
            "not a regular file (a character device); only regular files are read"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.reflection.json");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        // Opening a FIFO with no writer would block forever without O_NONBLOCK: this returns at once.
        assert_eq!(
            read_capped(&fifo, 10).unwrap_err().to_string(),
            "not a regular file (a FIFO); only regular files are read"
        );
    }
}
