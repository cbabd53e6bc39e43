//! Commit messages: ports of git's pretty.c (subject, body) and trailer.c (trailers), default configuration.

use std::sync::LazyLock;

use crate::scan::commits::Trailer;

pub(super) struct ParsedMessage {
    pub(super) subject: String,
    pub(super) body: String,
    pub(super) trailers: Vec<Trailer>,
}

/// git's `isspace`: space, tab, newline and carriage return only.
pub(super) fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The length of the line at the start of `msg`, its `\n` included (pretty.c `get_one_line`).
pub(super) fn one_line_len(msg: &[u8]) -> usize {
    memchr::memchr(b'\n', msg).map_or(msg.len(), |i| i + 1)
}

/// `line` without trailing whitespace, or `None` if nothing remains (pretty.c `is_blank_line`).
pub(super) fn trim_end_nonblank(line: &[u8]) -> Option<&[u8]> {
    let len = line.iter().rposition(|&b| !is_space(b)).map_or(0, |i| i + 1);
    (len > 0).then(|| &line[..len])
}

pub(super) fn skip_blank_lines(msg: &[u8], mut pos: usize) -> usize {
    loop {
        let len = one_line_len(&msg[pos..]);
        if len == 0 || trim_end_nonblank(&msg[pos..pos + len]).is_some() {
            return pos;
        }
        pos += len;
    }
}

pub(super) fn parse_message(msg: &[u8]) -> ParsedMessage {
    let subject_off = skip_blank_lines(msg, 0);
    let mut subject = Vec::new();
    let mut pos = subject_off;
    loop {
        let len = one_line_len(&msg[pos..]);
        let line = &msg[pos..pos + len];
        pos += len;
        match trim_end_nonblank(line) {
            Some(line) if len > 0 => {
                if !subject.is_empty() {
                    subject.push(b' ');
                }
                subject.extend_from_slice(line);
            }
            _ => break,
        }
    }
    let body_off = skip_blank_lines(msg, pos);
    ParsedMessage {
        subject: String::from_utf8_lossy(&subject).into_owned(),
        body: String::from_utf8_lossy(&msg[body_off..]).into_owned(),
        trailers: parse_trailers(&msg[subject_off..]),
    }
}

pub(super) const COMMENT: &[u8] = b"#";
pub(super) const CUT_LINE: &[u8] = b"\n# ------------------------ >8 ------------------------\n";
pub(super) const GIT_GENERATED_PREFIXES: [&[u8]; 2] = [b"Signed-off-by: ", b"(cherry picked from commit "];

/// trailer.c `is_blank_line`: only whitespace up to the end of the line at `pos`.
pub(super) fn is_blank_line_at(buf: &[u8], pos: usize) -> bool {
    buf[pos.min(buf.len())..]
        .iter()
        .find(|&&b| b == b'\n' || !is_space(b))
        .is_none_or(|&b| b == b'\n')
}

pub(super) fn next_line(buf: &[u8], pos: usize) -> usize {
    memchr::memchr(b'\n', &buf[pos.min(buf.len())..]).map_or(buf.len(), |i| pos + i + 1)
}

/// trailer.c `last_line`: the start of the last line of `buf[..len]`.
pub(super) fn last_line(buf: &[u8], len: usize) -> Option<usize> {
    match len {
        0 => None,
        1 => Some(0),
        _ => Some(memchr::memrchr(b'\n', &buf[..len - 1]).map_or(0, |i| i + 1)),
    }
}

/// trailer.c `find_separator` with the default separators (`:`): the separator's offset in `line`, if `line`
/// starts with a token (ASCII letters, digits, `-`, then optional whitespace).
pub(super) fn find_separator(line: &[u8]) -> Option<usize> {
    let mut whitespace_found = false;
    for (i, &c) in line.iter().enumerate() {
        if c == b':' {
            return Some(i);
        }
        if c == 0 {
            break;
        }
        if !whitespace_found && (c.is_ascii_alphanumeric() || c == b'-') {
            continue;
        }
        if i != 0 && (c == b' ' || c == b'\t') {
            whitespace_found = true;
            continue;
        }
        break;
    }
    None
}

/// commit.c `ignored_log_message_bytes`: trailing comments, blank lines, old `Conflicts:` blocks and anything
/// below a scissors line.
pub(super) fn ignored_log_message_bytes(buf: &[u8]) -> usize {
    let len = buf.len();
    static CUT_LINE_FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(CUT_LINE));
    let cutoff = if buf.starts_with(&CUT_LINE[1..]) {
        0
    } else {
        CUT_LINE_FINDER.find(buf).map_or(len, |p| (p + 1).min(len))
    };
    let (mut boc, mut bol) = (0, 0);
    let mut in_old_conflicts_block = false;
    while bol < cutoff {
        let next = next_line(buf, bol);
        if buf[bol..cutoff].starts_with(COMMENT) || buf[bol] == b'\n' {
            if boc == 0 {
                boc = bol;
            }
        } else if buf[bol..].starts_with(b"Conflicts:\n") {
            in_old_conflicts_block = true;
            if boc == 0 {
                boc = bol;
            }
        } else if in_old_conflicts_block && buf[bol] == b'\t' {
            // A path in the conflicts block.
        } else if boc != 0 {
            boc = 0;
            in_old_conflicts_block = false;
        }
        bol = next;
    }
    if boc != 0 { len - boc } else { len - cutoff }
}

/// trailer.c `find_trailer_block_start`: the offset of the first trailer line, or `len` if there is none.
pub(super) fn find_trailer_block_start(buf: &[u8], len: usize) -> usize {
    // The first paragraph is the title and cannot be trailers.
    let mut s = 0;
    while s < len {
        if !buf[s..len].starts_with(COMMENT) && is_blank_line_at(buf, s) {
            break;
        }
        s = next_line(buf, s);
    }
    let end_of_title = s;

    let mut only_spaces = true;
    let mut recognized_prefix = false;
    let (mut trailer_lines, mut non_trailer_lines, mut possible_continuation_lines) = (0usize, 0usize, 0usize);
    let mut line = last_line(buf, len);
    while let Some(bol) = line.filter(|&l| l >= end_of_title) {
        line = last_line(buf, bol);
        if buf[bol..len].starts_with(COMMENT) {
            non_trailer_lines += possible_continuation_lines;
            possible_continuation_lines = 0;
            continue;
        }
        if is_blank_line_at(buf, bol) {
            if only_spaces {
                continue;
            }
            non_trailer_lines += possible_continuation_lines;
            if (recognized_prefix && trailer_lines * 3 >= non_trailer_lines)
                || (trailer_lines > 0 && non_trailer_lines == 0)
            {
                return next_line(buf, bol);
            }
            return len;
        }
        only_spaces = false;
        if GIT_GENERATED_PREFIXES
            .iter()
            .any(|prefix| buf[bol..].starts_with(prefix))
        {
            trailer_lines += 1;
            possible_continuation_lines = 0;
            recognized_prefix = true;
            continue;
        }
        if find_separator(&buf[bol..]).is_some_and(|sep| sep >= 1) && !is_space(buf[bol]) {
            trailer_lines += 1;
            possible_continuation_lines = 0;
        } else if is_space(buf[bol]) {
            possible_continuation_lines += 1;
        } else {
            non_trailer_lines += 1 + possible_continuation_lines;
            possible_continuation_lines = 0;
        }
    }
    len
}

pub(super) fn trim_space(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| !is_space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|&b| !is_space(b)).map_or(start, |i| i + 1);
    &bytes[start..end.max(start)]
}

/// trailer.c `unfold_value`: a line break and the whitespace after it become one space.
pub(super) fn unfold(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        let c = value[i];
        i += 1;
        if c == b'\n' {
            while i < value.len() && is_space(value[i]) {
                i += 1;
            }
            out.push(b' ');
        } else {
            out.push(c);
        }
    }
    trim_space(&out).to_vec()
}

/// The trailers of a message (from its subject on), as `git log --format=%(trailers:only,unfold)` lists them.
pub(super) fn parse_trailers(msg: &[u8]) -> Vec<Trailer> {
    // C strings end at NUL; git never sees what follows one.
    let msg = &msg[..memchr::memchr(0, msg).unwrap_or(msg.len())];
    let end = msg.len() - ignored_log_message_bytes(msg);
    let start = find_trailer_block_start(msg, end);
    if start >= end {
        return Vec::new();
    }
    let mut items: Vec<Vec<u8>> = Vec::new();
    let mut last: Option<usize> = None;
    for line in msg[start..end].split_inclusive(|&b| b == b'\n') {
        if let Some(last) = last.filter(|_| is_space(line[0])) {
            items[last].extend_from_slice(line);
            continue;
        }
        last = find_separator(line).is_some_and(|sep| sep >= 1).then_some(items.len());
        items.push(line.to_vec());
    }
    items
        .iter()
        .filter(|item| !item.starts_with(COMMENT))
        .filter_map(|item| {
            let sep = find_separator(item).filter(|&sep| sep >= 1)?;
            Some(Trailer {
                token: String::from_utf8_lossy(trim_space(&item[..sep])).into_owned(),
                value: String::from_utf8_lossy(&unfold(trim_space(&item[sep + 1..]))).into_owned(),
            })
        })
        .collect()
}
