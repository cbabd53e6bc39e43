//! The breadth-first history walk and the decoding of commit headers into rows.

use super::*;

use std::borrow::Cow;
use std::sync::{Mutex, PoisonError};

use gix::bstr::ByteSlice;

use crate::scan::commits::{CommitRow, ObjectId};

/// A commit read during the walk: its row (`None` outside the time window) and the parents to follow.
/// Boxed: the walk moves its entries several times, and on a rerun most are remembered, not read (git.git: 82k
/// entries of a pointer rather than of a row).
pub(super) type Visited = (Option<Box<Decoded>>, Vec<ObjectId>);

/// The breadth-first walk. Breadth-first layers of real histories are wide (git.git: 82k commits in 1,247
/// layers), so each layer's commit objects are read and decoded in parallel, and the walk order stays exactly
/// that of a sequential breadth-first traversal. Commits that the commit-graph knows are not read during the
/// walk (their parents come from the graph); they are read and decoded in chunks by the other threads while
/// the walk goes on through the graph.
pub(super) struct Walk<'a, F> {
    pub(super) handles: PerThread<gix::Repository, F>,
    pub(super) options: &'a WalkOptions,
    pub(super) shallow: &'a [ObjectId],
    pub(super) remembered: &'a dyn RememberedCommits,
}

/// A walked commit: read (its row, `None` outside the time window), or remembered from an earlier run (its slot and
/// committer time, which orders it).
pub(super) enum Walked {
    Read(Option<Box<Decoded>>),
    Remembered(u32, i64),
}

/// Where the traversal takes a commit's parents from: an earlier run, the commit-graph, or the commit itself.
enum Parents<'r> {
    Remembered(u32, i64, &'r [ObjectId]),
    Graph(Vec<ObjectId>),
    Unread,
}

/// Below this many commits a layer is read on the calling thread: dispatching costs more than it saves.
pub(super) const PARALLEL_LAYER: usize = 4;

/// Commits found in the commit-graph are read in chunks of this many (about 10 ms of work): small enough that
/// the last chunks spread over the threads, large enough that dispatching them costs nothing.
pub(super) const GRAPH_CHUNK: usize = 1024;

/// The decoded commits of the chunks of graph commits, by chunk index.
pub(super) type DecodedChunks = Mutex<Vec<(usize, Result<Vec<Visited>, GitScanError>)>>;

/// Every commit in walk order with its row (`None` until read, for the commits the commit-graph gave), the
/// positions of the commits the commit-graph gave, and those of the remembered commits with their slots.
pub(super) type Traversed = (
    Vec<(ObjectId, Option<Box<Decoded>>)>,
    Vec<usize>,
    Vec<(usize, u32, i64)>,
);

impl<F: Fn() -> gix::Repository + Sync> Walk<'_, F> {
    /// The commits in walk order.
    pub(super) fn run(&self, repo: &gix::Repository, tip: ObjectId) -> Result<Vec<Walked>, GitScanError> {
        // A commit-graph is an optional cache, as in gix's own walk: failing to load it is not an error.
        let graph = repo.commit_graph_if_enabled().ok().flatten();
        let chunks: DecodedChunks = Mutex::new(Vec::new());
        let (mut walked, from_graph, remembered) = rayon::scope(|scope| self.traverse(graph, tip, scope, &chunks))?;
        let mut chunks = chunks.into_inner().unwrap_or_else(PoisonError::into_inner);
        chunks.sort_unstable_by_key(|(index, _)| *index);
        let mut slots = from_graph.into_iter();
        for (_, decoded) in chunks {
            for ((decoded, _), i) in decoded?.into_iter().zip(slots.by_ref()) {
                walked[i].1 = decoded;
            }
        }
        let mut remembered = remembered.into_iter().peekable();
        Ok(walked
            .into_iter()
            .enumerate()
            .map(|(i, (_, decoded))| match remembered.next_if(|&(at, ..)| at == i) {
                Some((_, slot, time)) => Walked::Remembered(slot, time),
                None => Walked::Read(decoded),
            })
            .collect())
    }

    /// The breadth-first traversal: every commit in walk order, decoded unless the commit-graph gave its parents,
    /// and the positions of those, whose reading it hands to `scope` in chunks that fill `chunks`.
    fn traverse<'s>(
        &'s self,
        mut graph: Option<gix::commitgraph::Graph>,
        tip: ObjectId,
        scope: &rayon::Scope<'s>,
        chunks: &'s DecodedChunks,
    ) -> Result<Traversed, GitScanError> {
        let mut seen = gix::hashtable::HashSet::default();
        seen.insert(tip);
        let mut layer = vec![tip];
        let mut walked: Vec<(ObjectId, Option<Box<Decoded>>)> = Vec::new();
        let mut from_graph: Vec<usize> = Vec::new();
        let mut remembered: Vec<(usize, u32, i64)> = Vec::new();
        let mut dispatched = 0;
        while !layer.is_empty() {
            let mut sources: Vec<Parents<'_>> = Vec::with_capacity(layer.len());
            for id in &layer {
                if let Some((slot, time, parents)) = self.remembered.find(id) {
                    sources.push(Parents::Remembered(slot, time, parents));
                    continue;
                }
                let mut corrupt = false;
                let parents = graph.as_ref().and_then(|g| {
                    let pos = g.lookup(id)?;
                    let parents = g
                        .commit_at(pos)
                        .iter_parents()
                        .map(|parent| parent.map(|parent| g.id_at(parent).to_owned()))
                        .collect::<Result<Vec<_>, _>>();
                    corrupt = parents.is_err();
                    parents.ok()
                });
                if corrupt {
                    // A corrupt commit-graph: drop it and read objects from here on, as gix does.
                    graph = None;
                }
                sources.push(parents.map_or(Parents::Unread, Parents::Graph));
            }
            let to_read: Vec<ObjectId> = layer
                .iter()
                .zip(&sources)
                .filter(|(_, source)| matches!(source, Parents::Unread))
                .map(|(id, _)| *id)
                .collect();
            let mut read = self.visit_all(&to_read)?.into_iter();

            let mut next = Vec::new();
            for (id, source) in layer.iter().zip(sources) {
                let parents: Cow<'_, [ObjectId]> = match source {
                    Parents::Remembered(slot, time, parents) => {
                        remembered.push((walked.len(), slot, time));
                        walked.push((*id, None));
                        Cow::Borrowed(parents)
                    }
                    Parents::Graph(parents) => {
                        from_graph.push(walked.len());
                        walked.push((*id, None));
                        Cow::Owned(parents)
                    }
                    Parents::Unread => {
                        let (decoded, parents) = read.next().unwrap_or_default();
                        walked.push((*id, decoded));
                        Cow::Owned(parents)
                    }
                };
                if self.shallow.binary_search(id).is_ok() {
                    continue;
                }
                let follow = if self.options.first_parent { 1 } else { usize::MAX };
                for &parent in parents.iter().take(follow) {
                    if seen.insert(parent) {
                        next.push(parent);
                    }
                }
            }
            layer = next;
            let last = layer.is_empty();
            while from_graph.len() - dispatched >= GRAPH_CHUNK || (last && dispatched < from_graph.len()) {
                let end = from_graph.len().min(dispatched + GRAPH_CHUNK);
                let ids: Vec<ObjectId> = from_graph[dispatched..end].iter().map(|&i| walked[i].0).collect();
                let index = dispatched;
                dispatched = end;
                scope.spawn(move |_| {
                    let decoded = ids.iter().map(|id| self.visit(*id)).collect();
                    chunks
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((index, decoded));
                });
            }
        }
        Ok((walked, from_graph, remembered))
    }

    /// Reads and decodes `ids`, in parallel when there are enough; the first error in `ids` order wins.
    fn visit_all(&self, ids: &[ObjectId]) -> Result<Vec<Visited>, GitScanError> {
        if ids.len() < PARALLEL_LAYER {
            ids.iter().map(|id| self.visit(*id)).collect()
        } else {
            ids.par_iter().map(|id| self.visit(*id)).collect()
        }
    }

    fn visit(&self, id: ObjectId) -> Result<Visited, GitScanError> {
        self.handles.with(|repo| {
            let mut buf = Vec::new();
            let data = Objects::new(repo).read_kind(&id, &mut buf, gix::objs::Kind::Commit, || {
                format!("reachable from {}", rev_of(self.options))
            })?;
            let header = parse_header(data).map_err(|message| GitScanError::Corrupt {
                id,
                message: message.to_owned(),
            })?;
            let parents = header.parents.clone();
            let shallow = self.shallow.binary_search(&id).is_ok();
            Ok((decode_commit(id, header, shallow, self.options).map(Box::new), parents))
        })
    }
}

/// The parts of a commit's header the scanner needs, parsed leniently: unknown headers (`gpgsig`, `mergetag`, …)
/// and their continuation lines are skipped.
pub(super) struct Header<'a> {
    pub(super) tree: Option<ObjectId>,
    pub(super) parents: Vec<ObjectId>,
    pub(super) author: Option<&'a [u8]>,
    pub(super) committer: Option<&'a [u8]>,
    pub(super) encoding: Option<&'a [u8]>,
    pub(super) message: &'a [u8],
}

pub(super) fn parse_header(data: &[u8]) -> Result<Header<'_>, &'static str> {
    let mut header = Header {
        tree: None,
        parents: Vec::new(),
        author: None,
        committer: None,
        encoding: None,
        message: &[],
    };
    let mut pos = 0;
    let mut index = 0;
    // git takes parents only from the `parent` lines directly after `tree`.
    let mut in_parents = false;
    while pos < data.len() {
        let end = memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |i| pos + i);
        let line = &data[pos..end];
        pos = (end + 1).min(data.len());
        if line.is_empty() {
            header.message = &data[pos..];
            break;
        }
        let (key, value) = match memchr::memchr(b' ', line) {
            Some(space) => (&line[..space], &line[space + 1..]),
            None => (line, &line[line.len()..]),
        };
        match key {
            b"tree" if index == 0 => {
                header.tree = Some(ObjectId::from_hex(value).map_err(|_| "an invalid tree id")?);
                in_parents = true;
            }
            b"parent" if in_parents => {
                header
                    .parents
                    .push(ObjectId::from_hex(value).map_err(|_| "an invalid parent id")?);
            }
            _ => {
                in_parents = false;
                match key {
                    b"author" if header.author.is_none() => header.author = Some(value),
                    b"committer" if header.committer.is_none() => header.committer = Some(value),
                    b"encoding" if header.encoding.is_none() => header.encoding = Some(value),
                    _ => {}
                }
            }
        }
        index += 1;
    }
    Ok(header)
}

/// The Unix time of an identity line (`Name <email> 1700000000 +0100`): the number after the last `>`, as git
/// reads it; 0 when there is none.
pub(super) fn ident_time(ident: Option<&[u8]>) -> i64 {
    let Some(ident) = ident else { return 0 };
    let rest = match memchr::memrchr(b'>', ident) {
        Some(pos) => &ident[pos + 1..],
        None => return 0,
    };
    let rest = &rest[rest.iter().take_while(|&&b| b == b' ').count()..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

pub(super) struct Decoded {
    pub(super) row: CommitRow,
    pub(super) non_utf8: bool,
}

/// Decodes one commit into a row, or `None` when its committer time is outside the requested window.
pub(super) fn decode_commit(id: ObjectId, header: Header<'_>, shallow: bool, options: &WalkOptions) -> Option<Decoded> {
    let commit_time = ident_time(header.committer);
    if options.since.is_some_and(|since| commit_time < since) || options.until.is_some_and(|until| commit_time > until)
    {
        return None;
    }
    let (message, non_utf8) = decode_message(header.message, header.encoding);
    let parsed = parse_message(message.as_bytes());
    Some(Decoded {
        row: CommitRow {
            id,
            parents: if shallow { Vec::new() } else { header.parents },
            tree: header.tree,
            author_time: ident_time(header.author),
            commit_time,
            subject: parsed.subject,
            body: parsed.body,
            trailers: parsed.trailers,
        },
        non_utf8,
    })
}

/// Decodes a message to UTF-8: from Latin-1 when the commit's `encoding` header says so (as `git log` re-encodes
/// it), as lossy UTF-8 otherwise. Also says whether the raw bytes were not valid UTF-8.
pub(super) fn decode_message<'a>(message: &'a [u8], encoding: Option<&[u8]>) -> (Cow<'a, str>, bool) {
    let latin1 = encoding.is_some_and(|name| {
        let name = name.trim().to_ascii_lowercase();
        matches!(
            name.as_slice(),
            b"latin1" | b"latin-1" | b"l1" | b"iso-8859-1" | b"iso8859-1" | b"iso_8859-1" | b"iso88591"
        )
    });
    let utf8 = std::str::from_utf8(message);
    let non_utf8 = utf8.is_err();
    if latin1 && !message.is_ascii() {
        (Cow::Owned(message.iter().map(|&b| char::from(b)).collect()), non_utf8)
    } else {
        // Validated once: most messages are UTF-8, and the lossy decoder validates more slowly.
        (
            utf8.map_or_else(|_| String::from_utf8_lossy(message), Cow::Borrowed),
            non_utf8,
        )
    }
}
