//! The envelope P2's cache files share ([`super::diff_cache`], [`super::commit_cache`]): a magic, a format version,
//! phase0's version and the pre-registration's sha256, the entries, and the sha256 of everything before it. A file
//! written under another format, version or pre-registration is foreign, one whose checksum does not match is
//! damaged: both are refused with a reason, never trusted. Files are replaced atomically.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::commits::ObjectId;

/// The stamp a cache is valid under: phase0's version and the pre-registration's sha256.
pub fn stamp(prereg_sha256: &str) -> String {
    format!("{} {prereg_sha256}", env!("CARGO_PKG_VERSION"))
}

pub fn put_text(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

pub fn put_id(out: &mut Vec<u8>, id: &ObjectId) {
    out.push(id.as_bytes().len() as u8);
    out.extend_from_slice(id.as_bytes());
}

/// The start of a file: magic, format and stamp.
pub fn header(magic: &[u8], format: u32, stamp: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(magic);
    out.extend_from_slice(&format.to_le_bytes());
    let (version, prereg) = stamp.split_once(' ').unwrap_or((stamp, ""));
    put_text(&mut out, version);
    put_text(&mut out, prereg);
    out
}

/// Appends the checksum of everything written (tests build damaged files with it; runs write through [`Sink`]).
#[cfg(test)]
pub fn seal(mut out: Vec<u8>) -> Vec<u8> {
    let checksum = Sha256::digest(&out);
    out.extend_from_slice(&checksum);
    out
}

/// Where an encoder writes a file's bytes: into [`Sink::buf`], handed on by [`Sink::flush_if_full`] in pieces of
/// about [`SINK_PIECE`] bytes, so that a cache of tens of megabytes (git.git: 14 and 10 MB) is not encoded into a
/// second copy in memory before it is written.
pub struct Sink<'w> {
    pub buf: Vec<u8>,
    hasher: Sha256,
    out: &'w mut dyn std::io::Write,
}

pub const SINK_PIECE: usize = 64 << 10;

impl Sink<'_> {
    pub fn flush_if_full(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= SINK_PIECE {
            self.hasher.update(&self.buf);
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes the rest and the checksum of everything.
    fn finish(mut self) -> std::io::Result<()> {
        self.hasher.update(&self.buf);
        self.out.write_all(&self.buf)?;
        let checksum = self.hasher.finalize();
        self.out.write_all(&checksum)
    }
}

/// The bytes [`header`] then `body` write, sealed (what [`write_sealed`] writes to a file).
#[cfg(test)]
pub fn sealed_bytes(
    header: Vec<u8>,
    body: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    write_to(&mut out, header, body)?;
    Ok(out)
}

fn write_to(
    out: &mut dyn std::io::Write,
    header: Vec<u8>,
    body: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut sink = Sink {
        buf: header,
        hasher: Sha256::new(),
        out,
    };
    body(&mut sink)?;
    sink.finish()
}

/// Writes [`header`] then `body`, sealed, to `path` atomically (a temporary file renamed into place).
pub fn write_sealed(
    path: &Path,
    header: Vec<u8>,
    body: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    write_to(file.as_file_mut(), header, body)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The entries of a file written by [`header`] and [`seal`], checked: `what` names the kind of file in reasons.
pub fn open<'a>(bytes: &'a [u8], magic: &[u8], format: u32, stamp: &str, what: &str) -> Result<Reader<'a>, String> {
    if !bytes.starts_with(magic) {
        return Err(format!("not a phase0 {what}"));
    }
    if bytes.len() < magic.len() + 32 {
        return Err(TRUNCATED.to_string());
    }
    let (body, checksum) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body).as_slice() != checksum {
        return Err("the cache file's checksum does not match (damaged)".to_string());
    }
    let mut r = Reader {
        bytes: &body[magic.len()..],
    };
    let found = r.u32()?;
    let version = r.text()?;
    let prereg = r.text()?;
    if found != format || format!("{version} {prereg}") != stamp {
        return Err(format!(
            "written by phase0 {version} (format {found}) under the pre-registration {prereg}, not this run's"
        ));
    }
    Ok(r)
}

/// A reader of the format that fails, never panics, on any input.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

pub const TRUNCATED: &str = "the cache file is truncated";

impl<'a> Reader<'a> {
    /// A reader of `bytes` without an envelope (one encoded entry, in tests).
    #[cfg(test)]
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err(TRUNCATED.to_string());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    pub fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// A count of items of at least `size` bytes each: never more than the bytes left could hold, so that a wrong
    /// count cannot ask for a huge allocation.
    pub fn count(&mut self, size: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n > self.bytes.len() / size {
            return Err(TRUNCATED.to_string());
        }
        Ok(n)
    }

    pub fn text(&mut self) -> Result<&'a str, String> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| "the cache file holds text that is not UTF-8".to_string())
    }

    pub fn id(&mut self) -> Result<ObjectId, String> {
        let len = self.u8()? as usize;
        ObjectId::try_from(self.take(len)?).map_err(|_| "the cache file holds an invalid object id".to_string())
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}
