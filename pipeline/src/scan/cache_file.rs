//! The envelope P2's cache files share ([`super::diff_cache`], [`super::commit_cache`]): a header (a magic, a format
//! version, phase0's version and the pre-registration's sha256), then segments of entries. A run that learned
//! little appends one segment with what it learned instead of rewriting the file (git.git's two caches hold 25 MB;
//! a weekly rerun adds a few hundred entries), and the owner rewrites the file whole, in one segment, when too much
//! of it is stale.
//!
//! A segment is its length (u64), its body and a checksum (xxh3-128) of the previous segment's checksum (the
//! header's, for the first) and its body: the chain ties every segment to the header and to the segments before it.
//! A file written under another format, version or pre-registration is foreign, one whose checksum does not match is
//! damaged (a run killed while appending leaves one): both are refused with a reason, never trusted. A new file
//! replaces the old atomically (a temporary file renamed into place); an append holds a lock on the file and
//! happens only when the file is still the one the run read (the same inode, the same length).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use xxhash_rust::xxh3::Xxh3;

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

const CHECKSUM: usize = 16;

/// The chain's checksum after `body`, from the one before it (what [`write_segment`] computes as it writes).
fn chained(previous: u128, body: &[u8]) -> u128 {
    let mut hasher = Xxh3::new();
    hasher.update(&previous.to_le_bytes());
    hasher.update(body);
    hasher.digest128()
}

/// The chain's start: the header's checksum.
fn chain_start(header: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(header)
}

/// A file as a run read it: what an append needs to know that the file is unchanged, and where its chain ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    len: u64,
    chain: u128,
    identity: Identity,
}

/// Which file a path named when it was read (device and inode on Unix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity(u64, u64);

fn identity(metadata: &std::fs::Metadata) -> Identity {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Identity(metadata.dev(), metadata.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        Identity(0, 0)
    }
}

/// A cache file's bytes and which file they came from.
pub struct FileBytes {
    pub bytes: Vec<u8>,
    identity: Identity,
}

impl FileBytes {
    /// Bytes that came from no file (tests).
    #[cfg(test)]
    pub fn of(bytes: Vec<u8>) -> Self {
        Self {
            bytes,
            identity: Identity(0, 0),
        }
    }
}

/// Reads the file at `path`; `None` when there is none.
pub fn read(path: &Path) -> std::io::Result<Option<FileBytes>> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    let metadata = file.metadata()?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.read_to_end(&mut bytes)?;
    Ok(Some(FileBytes {
        bytes,
        identity: identity(&metadata),
    }))
}

/// A cache file as [`load`] found it.
pub enum Loaded<T> {
    /// No file: an empty cache.
    Missing,
    Valid(T),
    /// It could not be read (permissions, I/O): an empty cache, and the warning.
    Unreadable(String),
    /// Foreign or damaged (what `decode` refused): an empty cache that is rewritten, and the warning.
    Refused(String),
}

/// Reads the `what` ("commit cache") at `path` and decodes it; the warnings name the file and say what happens to
/// it.
pub fn load<T>(path: &Path, what: &str, decode: impl FnOnce(&FileBytes) -> Result<T, String>) -> Loaded<T> {
    match read(path) {
        Ok(None) => Loaded::Missing,
        Ok(Some(read)) => match decode(&read) {
            Ok(decoded) => Loaded::Valid(decoded),
            Err(reason) => Loaded::Refused(format!(
                "{}: {reason}; the cache is ignored and rewritten",
                path.display()
            )),
        },
        Err(error) => Loaded::Unreadable(format!("{}: cannot read the {what} ({error}); ignored", path.display())),
    }
}

/// A checked file: a reader of each segment's body, in order, and its [`Tail`].
pub struct Segments<'a> {
    pub bodies: Vec<Reader<'a>>,
    pub tail: Tail,
}

/// The segments of a file written by [`write_new`] and [`append`], checked: `what` names the kind of file in
/// reasons.
pub fn open<'a>(
    read: &'a FileBytes,
    magic: &[u8],
    format: u32,
    stamp: &str,
    what: &str,
) -> Result<Segments<'a>, String> {
    let bytes = &read.bytes[..];
    if !bytes.starts_with(magic) {
        return Err(format!("not a phase0 {what}"));
    }
    let mut r = Reader {
        bytes: &bytes[magic.len()..],
    };
    let found = r.u32()?;
    let version = r.text()?;
    let prereg = r.text()?;
    if found != format || format!("{version} {prereg}") != stamp {
        return Err(format!(
            "written by phase0 {version} (format {found}) under the pre-registration {prereg}, not this run's"
        ));
    }
    let mut chain = chain_start(&bytes[..bytes.len() - r.bytes.len()]);
    let mut bodies = Vec::new();
    while !r.is_empty() {
        let len = usize::try_from(r.u64()?).map_err(|_| TRUNCATED.to_string())?;
        if r.bytes.len() < CHECKSUM || len > r.bytes.len() - CHECKSUM {
            return Err(TRUNCATED.to_string());
        }
        let body = r.take(len)?;
        let checksum = u128::from_le_bytes(r.take(CHECKSUM)?.try_into().expect("16 bytes"));
        chain = chained(chain, body);
        if checksum != chain {
            return Err("the cache file's checksum does not match (damaged)".to_string());
        }
        bodies.push(Reader { bytes: body });
    }
    Ok(Segments {
        bodies,
        tail: Tail {
            len: bytes.len() as u64,
            chain,
            identity: read.identity,
        },
    })
}

/// Where an encoder writes a segment's body: into [`Sink::buf`], handed on by [`Sink::flush_if_full`] in pieces of
/// about [`SINK_PIECE`] bytes, so that a cache of tens of megabytes (git.git: 14 and 10 MB) is not encoded into a
/// second copy in memory before it is written.
pub struct Sink<'w> {
    pub buf: Vec<u8>,
    hasher: Xxh3,
    written: u64,
    out: &'w mut dyn Write,
}

pub const SINK_PIECE: usize = 64 << 10;

impl Sink<'_> {
    pub fn flush_if_full(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= SINK_PIECE {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.hasher.update(&self.buf);
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

/// Writes one segment at the current end of `out` (which must be seekable): its length, filled in once the body
/// is written, the body, and its checksum chained to `previous`. Returns the new end of the chain.
fn write_segment<W: Write + Seek>(
    out: &mut W,
    previous: u128,
    body: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
) -> std::io::Result<u128> {
    let at = out.stream_position()?;
    out.write_all(&0u64.to_le_bytes())?;
    let mut hasher = Xxh3::new();
    hasher.update(&previous.to_le_bytes());
    let mut sink = Sink {
        buf: Vec::new(),
        hasher,
        written: 0,
        out,
    };
    body(&mut sink)?;
    sink.flush()?;
    let (checksum, written) = (sink.hasher.digest128(), sink.written);
    out.write_all(&checksum.to_le_bytes())?;
    out.seek(SeekFrom::Start(at))?;
    out.write_all(&written.to_le_bytes())?;
    out.seek(SeekFrom::End(0))?;
    Ok(checksum)
}

/// The bytes of a file of `header` and one segment of `body` (what [`write_new`] writes).
#[cfg(test)]
pub fn file_bytes(
    header: Vec<u8>,
    body: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
) -> std::io::Result<Vec<u8>> {
    let mut out = std::io::Cursor::new(Vec::new());
    out.write_all(&header)?;
    write_segment(&mut out, chain_start(&header), body)?;
    Ok(out.into_inner())
}

/// A file of `header` and one segment holding `body` as it is (tests seal arbitrary bodies with it).
#[cfg(test)]
pub fn sealed(header: &[u8], body: &[u8]) -> Vec<u8> {
    file_bytes(header.to_vec(), |sink| {
        sink.buf.extend_from_slice(body);
        Ok(())
    })
    .expect("writing to memory")
}

/// Writes a new file of `header` and one segment of `body` to `path` atomically (a temporary file renamed into
/// place).
pub fn write_new(
    path: &Path,
    header: Vec<u8>,
    body: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    {
        let mut out = std::io::BufWriter::new(file.as_file_mut());
        out.write_all(&header)?;
        write_segment(&mut out, chain_start(&header), body)?;
        out.flush()?;
    }
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Keeps what a run learned in the file at `path`, which held `on_file` entries when the run read it (`tail`: `None`
/// when there was no valid file), `live` of them still current after the run: appends the `new` entries `append`
/// writes, or, when the file would be more than a quarter stale (or is not the file the run read), has `rewrite`
/// write it whole. Nothing is written when there is nothing new and little stale.
pub fn keep(
    path: &Path,
    tail: Option<&Tail>,
    (on_file, live, new): (u64, u64, u64),
    append: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
    rewrite: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    let stale = on_file.saturating_sub(live);
    match tail {
        Some(tail) if stale * 4 <= on_file + new => {
            if new == 0 || self::append(path, tail, append)? {
                Ok(())
            } else {
                // Another run replaced or extended the file since this one read it.
                rewrite()
            }
        }
        _ => rewrite(),
    }
}

/// Appends a segment of `body` to the file at `path`, under a lock, when it is still the file `tail` describes;
/// `Ok(false)` when it is not (another run replaced or extended it) or cannot be locked, and nothing was written.
pub fn append(
    path: &Path,
    tail: &Tail,
    body: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>,
) -> std::io::Result<bool> {
    let mut file = match std::fs::OpenOptions::new().read(true).write(true).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    // Where files cannot be locked (some network file systems), the file is rewritten instead: never appended to
    // without the lock that keeps two runs' segments apart.
    if file.lock().is_err() {
        return Ok(false);
    }
    let metadata = file.metadata()?;
    if identity(&metadata) != tail.identity || metadata.len() != tail.len {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(tail.len))?;
    let written = {
        let mut out = std::io::BufWriter::new(&mut file);
        write_segment(&mut out, tail.chain, body).and_then(|_| out.flush())
    };
    if let Err(error) = written {
        // A half-written segment would make the whole file damaged: cut it off.
        let _ = file.set_len(tail.len);
        return Err(error);
    }
    Ok(true)
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

    /// How many bytes are left.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}
