//! Reading commit messages and paths with the pre-registered patterns: literal, case-insensitive matching only
//! (no regular expressions), so that what a pattern in `experiments/p2.toml` matches is evident from the pattern.
//!
//! - **Words**: a text's words are its maximal runs of alphanumeric characters (Unicode), lower-cased; a keyword
//!   (`fix`, `type error`) matches when its words occur consecutively among them. `fix` matches "Fix crash",
//!   "fix(parser): …" and "hot-fix" but not "prefix"; `type error` matches "Type-Error" but not "type errors"
//!   (whole words only: the prereg lists plurals and inflections separately).
//! - **Paths**: a path fragment (`.github/workflows/`, `Cargo.lock`) matches a path that starts with it or
//!   contains it right after a `/`, ASCII case-insensitively, after `\` → `/`.
//! - **SHAs**: a run of 7 (the prereg's `min_sha_len`) to 64 hex digits not followed by a letter or digit.
//!
//! Version 2 of the instrument reads a message's *prose* only ([`message_words`]): the conventional-commit prefix
//! (`fix(build): …` names a product feature, not the build), bracketed tags (`[batch-test-pending]`), text in
//! backquotes, flags (`--test`), identifiers and file names (`doc_id`, `build.rs`, `a::b`) and tool subcommands
//! (`cargo doc`, `npm test`) are not words. A fix is recognised by its conventional type or by a fix keyword
//! leading the subject ([`is_fix_subject`]), never by a keyword anywhere in it (`M=32 fixes it`) or inside another
//! type (`chore(beads): … fixed`, `refactor(fix): …`). Paths are matched by [`PathPatterns`]: directory fragments
//! and file-name globs, never substrings of a name.

use std::borrow::Cow;

use super::spec::P2Revert;

/// The lower-cased words of `text` (maximal runs of alphanumeric characters). Borrowed where lower-casing
/// changes nothing (ASCII without capitals, 91% of the words of git.git's subjects): every walked subject is read
/// for fix keywords.
pub(crate) fn words(text: &str) -> Vec<Cow<'_, str>> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            if word.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
                Cow::Borrowed(word)
            } else {
                Cow::Owned(word.to_lowercase())
            }
        })
        .collect()
}

/// Tools whose next word is a subcommand (`cargo test`, `npm run lint`), not a word of the message.
const TOOLS: [&str; 14] = [
    "cargo", "npm", "npx", "pnpm", "yarn", "bun", "deno", "go", "git", "make", "just", "pip", "pytest", "rustup",
];

/// The lower-cased prose words of a message (version 2; see the module documentation): `text` without a leading
/// conventional-commit prefix, bracketed tags and backquoted spans; tokens split at white space, their surrounding
/// punctuation trimmed; a token that is a flag (leading `-`) or holds code punctuation (`_ . / : = ( ) < > @ # $ %
/// & * + \ | ~ ^ [ ] { }`) is no word; a hyphenated token gives its parts; the word after a tool name
/// ([`TOOLS`]) is a subcommand, not a word.
pub(crate) fn message_words(text: &str) -> Vec<String> {
    let mut rest = text.trim();
    if let Some((_, after)) = conventional(rest) {
        rest = after;
    }
    let mut prose = String::with_capacity(rest.len());
    let (mut in_tag, mut in_code) = (0usize, false);
    for c in rest.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                prose.push(' ');
            }
            '[' if !in_code => in_tag += 1,
            ']' if !in_code && in_tag > 0 => {
                in_tag -= 1;
                prose.push(' ');
            }
            _ if in_code || in_tag > 0 => {}
            _ => prose.push(c),
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut after_tool = false;
    for token in prose.split_whitespace() {
        let token =
            token.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';' | '!' | '?' | '(' | ')' | '.' | ':'));
        if token.is_empty() {
            continue;
        }
        let code = token.starts_with('-') || token.chars().any(|c| "_./:=()<>@#$%&*+\\|~^[]{}".contains(c));
        if code {
            after_tool = false;
            continue;
        }
        if after_tool {
            after_tool = false;
            continue;
        }
        for part in token.split('-').filter(|part| !part.is_empty()) {
            let word = part.to_lowercase();
            if !word.chars().all(char::is_alphanumeric) {
                continue;
            }
            after_tool = TOOLS.contains(&word.as_str());
            out.push(word);
        }
    }
    out
}

/// Conventional-commit types that are not a fix: a fix keyword after one of them is not read (`chore: … fixed`).
/// Any other word before a colon is an area prefix (`builtin/log: fix …`, `gitk: fix …`, `doc: fix …`).
const OTHER_TYPES: [&str; 17] = [
    "feat", "feature", "chore", "docs", "style", "refactor", "perf", "test", "tests", "build", "ci", "revert",
    "release", "deps", "wip", "merge", "reapply",
];

/// Whether `subject` is a fix (version 2): its conventional type is one of `types`, or, with no conventional type
/// of another kind, its first word, after leading bracketed tags and at most two area prefixes (`t/t1234: `,
/// `builtin/log: `), is one of `keywords`.
pub(crate) fn is_fix_subject(subject: &str, types: &[String], keywords: &[String]) -> bool {
    let mut rest = subject.trim();
    while let Some(tagged) = rest.strip_prefix('[') {
        match tagged.find(']') {
            Some(end) => rest = tagged[end + 1..].trim_start(),
            None => break,
        }
    }
    if let Some((kind, _)) = conventional(rest) {
        if types.iter().any(|t| t.eq_ignore_ascii_case(&kind)) {
            return true;
        }
        if OTHER_TYPES.contains(&kind.as_str()) {
            return false;
        }
    }
    for _ in 0..2 {
        // An area prefix: a first token ending in `:` (`ref-filter:`, `t/t1234:`, `gitk:`).
        match rest.split_once(char::is_whitespace) {
            Some((first, after)) if first.ends_with(':') && first.len() > 1 => rest = after.trim_start(),
            _ => break,
        }
    }
    let first: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    !first.is_empty() && keywords.iter().any(|k| k.eq_ignore_ascii_case(&first))
}

/// Path patterns (version 2), ASCII case-insensitive, after `\` → `/`: a pattern with a `/` is a directory fragment
/// that matches a path starting with it or containing it right after a `/` (`tests/`, `.github/workflows/`); one
/// without is a file-name glob matched against the path's last component, `*` standing for any run of characters
/// (`Makefile`, `*_test.go`, `test_*.py`, `*.lock`).
#[derive(Debug, Clone)]
pub(crate) struct PathPatterns {
    fragments: Vec<(String, String)>,
    globs: Vec<Vec<String>>,
}

impl PathPatterns {
    pub(crate) fn new(patterns: &[String]) -> Self {
        let mut fragments = Vec::new();
        let mut globs = Vec::new();
        for pattern in patterns.iter().map(|p| normalise_path(p)).filter(|p| !p.is_empty()) {
            if pattern.contains('/') {
                let inner = format!("/{pattern}");
                fragments.push((pattern, inner));
            } else {
                globs.push(pattern.split('*').map(str::to_owned).collect());
            }
        }
        Self { fragments, globs }
    }

    pub(crate) fn matches(&self, path: &str) -> bool {
        // Most paths are already in normal form: matched as they are, not copied (called for every file of every
        // diff the linker reads).
        let normal = path.len() == path.trim().len() && !path.bytes().any(|b| b == b'\\' || b.is_ascii_uppercase());
        let path: std::borrow::Cow<'_, str> = if normal {
            std::borrow::Cow::Borrowed(path)
        } else {
            std::borrow::Cow::Owned(normalise_path(path))
        };
        if self
            .fragments
            .iter()
            .any(|(start, inner)| path.starts_with(start.as_str()) || path.contains(inner.as_str()))
        {
            return true;
        }
        let name = path.rsplit('/').next().unwrap_or(&path);
        self.globs.iter().any(|parts| glob_matches(parts, name))
    }
}

/// Whether `name` matches the glob split at its `*`s into `parts`.
fn glob_matches(parts: &[String], name: &str) -> bool {
    let [first, middle @ .., last] = parts else {
        return parts.first().is_some_and(|only| only == name);
    };
    if name.len() < first.len() + last.len() || !name.starts_with(first.as_str()) || !name.ends_with(last.as_str()) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in middle {
        match rest.find(part.as_str()) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// A SHA a message body cites: git's citation style (a SHA followed by ` (`), or right after a culprit phrase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Citation {
    pub(crate) sha: String,
    /// After a culprit phrase (`introduced in 1234abc`): it names the culprit whatever the subject says.
    pub(crate) culprit: bool,
}

/// The SHAs a message body cites: git's citation style (a SHA followed by ` (`) and SHAs right after one of
/// `phrases` (`introduced in 1234abc`, `caused by commit 1234abc`), in order, without repeats. Lines that name a
/// reverted commit (`This reverts commit …`) are not citations; a SHA must mix digits and letters.
pub(crate) fn cited_shas(body: &str, phrases: &[String], min_len: usize) -> Vec<Citation> {
    let phrases: Vec<String> = phrases.iter().map(|p| p.trim().to_ascii_lowercase()).collect();
    let mut shas: Vec<Citation> = Vec::new();
    for line in body.lines() {
        let lower = line.to_ascii_lowercase();
        if lower.contains("this reverts commit") {
            continue;
        }
        let bytes = lower.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let starts_word = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            if starts_word
                && bytes[at].is_ascii_hexdigit()
                && let Some(sha) = leading_sha(&lower[at..], min_len)
            {
                let after = lower[at + sha.len()..].trim_start_matches(' ');
                let before = lower[..at].trim_end();
                let before = before.strip_suffix("commit").unwrap_or(before).trim_end();
                let culprit = phrases.iter().any(|phrase| before.ends_with(phrase.as_str()));
                let cited = culprit || (lower[at + sha.len()..].starts_with(" (") && after.starts_with('('));
                // A SHA is hex with at least one digit and one letter (a word like `deadbeef` or a number is not).
                let mixed = sha.bytes().any(|b| b.is_ascii_digit()) && sha.bytes().any(|b| b.is_ascii_alphabetic());
                if cited && mixed {
                    match shas.iter_mut().find(|c| c.sha == sha) {
                        Some(known) => known.culprit |= culprit,
                        None => shas.push(Citation {
                            sha: sha.clone(),
                            culprit,
                        }),
                    }
                }
                at += sha.len();
                continue;
            }
            at += 1;
        }
    }
    shas
}

/// The pull request numbers a message cites as the culprit: `#N` right after one of `phrases` (`regression from
/// #15365`, `introduced in PR #33208`, `caused by pull request #12`), in order, without repeats. A number that is not
/// followed by a word boundary (`#12a`) or has more than nine digits is not one.
pub(crate) fn cited_pull_requests(text: &str, phrases: &[String]) -> Vec<u64> {
    let mut numbers: Vec<u64> = Vec::new();
    // Most messages have no `#` at all: nothing to lower-case or search (on git.git's 82k messages, doing so for
    // every line made a run 14% slower).
    if memchr::memchr(b'#', text.as_bytes()).is_none() {
        return numbers;
    }
    let phrases: Vec<String> = phrases
        .iter()
        .map(|p| p.trim().to_ascii_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    for line in text.lines().filter(|line| line.contains('#')) {
        let lower = line.to_ascii_lowercase();
        for phrase in &phrases {
            let mut from = 0;
            while let Some(found) = lower[from..].find(phrase.as_str()) {
                let start = from + found;
                from = start + phrase.len();
                let starts_word = !lower[..start].ends_with(|c: char| c.is_ascii_alphanumeric());
                let mut rest = lower[from..].trim_start_matches(' ');
                for filler in ["pull request ", "pr "] {
                    if let Some(after) = rest.strip_prefix(filler) {
                        rest = after.trim_start_matches(' ');
                    }
                }
                let Some(digits) = rest.strip_prefix('#') else { continue };
                let len = digits.bytes().take_while(u8::is_ascii_digit).count();
                let ends_word = !digits[len..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                if !starts_word || len == 0 || len > 9 || !ends_word {
                    continue;
                }
                if let Ok(number) = digits[..len].parse::<u64>()
                    && !numbers.contains(&number)
                {
                    numbers.push(number);
                }
            }
        }
    }
    numbers
}

/// The pull request a commit's subject says it landed: GitHub's squash merge (`subject (#123)` at the end), its merge
/// commit (`Merge pull request #123 from …`) or bors's (`Auto merge of #123 - …`).
pub(crate) fn landed_pull_request(subject: &str) -> Option<u64> {
    let subject = subject.trim();
    let number = |digits: &str| -> Option<u64> {
        (!digits.is_empty() && digits.len() <= 9 && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    };
    if let Some(rest) = subject.strip_suffix(')')
        && let Some(at) = rest.rfind("(#")
    {
        return number(&rest[at + 2..]);
    }
    for prefix in ["Merge pull request #", "Auto merge of #"] {
        if let Some(rest) = subject.strip_prefix(prefix) {
            let digits = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap_or_default();
            let after = &rest[digits.len()..];
            if after.starts_with(' ') {
                return number(digits);
            }
        }
    }
    None
}

/// Whether `subject` starts with a version number (`2.8.3 (#35144)`, `v1.2.0`, `Git 2.47`, `Release 1.0`,
/// `Version 3.1-rc1`): a release commit.
pub(crate) fn starts_with_version(subject: &str) -> bool {
    let mut tokens = subject.split_whitespace();
    let Some(mut first) = tokens.next() else { return false };
    if ["git", "release", "version", "bump"]
        .iter()
        .any(|w| first.eq_ignore_ascii_case(w))
    {
        match tokens.next() {
            Some(next) => first = next,
            None => return false,
        }
    }
    let first = first.strip_prefix(['v', 'V']).unwrap_or(first);
    let digits_then_dot = first.split('.').take(2).collect::<Vec<_>>();
    matches!(digits_then_dot.as_slice(), [major, minor]
        if !major.is_empty() && major.bytes().all(|b| b.is_ascii_digit())
            && minor.bytes().next().is_some_and(|b| b.is_ascii_digit()))
}

/// A list of keywords, each a sequence of words, matched against a text's words.
#[derive(Debug, Clone)]
pub(crate) struct Keywords(Vec<Vec<String>>);

impl Keywords {
    pub(crate) fn new(keywords: &[String]) -> Self {
        Self(
            keywords
                .iter()
                .map(|keyword| words(keyword).into_iter().map(Cow::into_owned).collect::<Vec<_>>())
                .filter(|words| !words.is_empty())
                .collect(),
        )
    }

    /// Whether any keyword occurs (as consecutive whole words) in `words`.
    pub(crate) fn any_in<W: AsRef<str>>(&self, words: &[W]) -> bool {
        self.0.iter().any(|keyword| {
            words
                .windows(keyword.len())
                .any(|window| window.iter().map(AsRef::as_ref).eq(keyword.iter().map(String::as_str)))
        })
    }
}

fn normalise_path(path: &str) -> String {
    path.trim().replace('\\', "/").to_ascii_lowercase()
}

/// `text` without the ASCII-case-insensitive `prefix`, if it starts with it.
fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// A conventional-commit subject `type(scope)!: rest`: the lower-cased type and the trimmed rest.
pub(crate) fn conventional(subject: &str) -> Option<(String, &str)> {
    let subject = subject.trim_start();
    let type_end = subject
        .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(subject.len());
    if type_end == 0 {
        return None;
    }
    let mut rest = &subject[type_end..];
    if let Some(scoped) = rest.strip_prefix('(') {
        let close = scoped.find(')')?;
        if scoped[..close].contains(':') {
            return None;
        }
        rest = &scoped[close + 1..];
    }
    rest = rest.strip_prefix('!').unwrap_or(rest);
    let rest = rest.strip_prefix(':')?;
    Some((subject[..type_end].to_lowercase(), rest.trim()))
}

/// The text between the first `"` of `quoted` (which starts with one) and its last `"`, or to the end when there
/// is no closing quote. `"X" (#124)` (a squash-merged revert) gives `X`; `"fix "a" b"` gives `fix "a" b`.
fn unquote(quoted: &str) -> &str {
    let inner = &quoted[1..];
    match inner.rfind('"') {
        Some(end) => &inner[..end],
        None => inner,
    }
}

/// What a subject says about reverting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RevertForm {
    /// How many revert layers the subject stacks: `Revert "X"` 1, `Revert "Revert "X""` and `Reapply "X"` and
    /// `Revert^2 "X"` 2, `Revert "Reapply "X""` 3. Odd: the net effect removes X (a failure of X, or of its
    /// reapplication); even: it re-lands X (a revert of a revert, not a failure).
    pub(crate) depth: u64,
    /// The subject of the commit it reverts, for the lookup when no SHA is given: the quoted text
    /// (`Revert^N "X"` reverts `Revert^(N-1) "X"`, Gerrit's naming).
    pub(crate) reverted_subject: String,
}

/// At most this many nested layers are read (a guard against pathological subjects; deeper ones count as this).
const MAX_LAYERS: usize = 64;

/// One revert layer of `subject`: its depth, the inner subject, and the reverted commit's subject.
fn layer<'a>(subject: &'a str, spec: &P2Revert) -> Option<(u64, &'a str, String)> {
    let subject = subject.trim();
    for word in &spec.words {
        let Some(rest) = strip_prefix_ci(subject, word) else {
            continue;
        };
        let (n, rest) = match rest.strip_prefix('^') {
            Some(power) => {
                let digits = power.find(|c: char| !c.is_ascii_digit()).unwrap_or(power.len());
                let n: u64 = power[..digits].parse().unwrap_or(0);
                (n, &power[digits..])
            }
            None => (1, rest),
        };
        let rest = rest.trim_start();
        if n == 0 || !rest.starts_with('"') {
            continue;
        }
        let inner = unquote(rest);
        let spelled = &subject[..word.len()];
        let reverted = match n {
            1 => inner.to_string(),
            2 => format!("{spelled} \"{inner}\""),
            _ => format!("{spelled}^{} \"{inner}\"", n - 1),
        };
        return Some((n, inner, reverted));
    }
    for word in &spec.reapply_words {
        if let Some(rest) = strip_prefix_ci(subject, word).map(str::trim_start)
            && rest.starts_with('"')
        {
            let inner = unquote(rest);
            return Some((2, inner, inner.to_string()));
        }
    }
    if let Some((kind, rest)) = conventional(subject)
        && spec.types.iter().any(|t| t.eq_ignore_ascii_case(&kind))
    {
        let inner = if rest.starts_with('"') { unquote(rest) } else { rest };
        return Some((1, inner, inner.to_string()));
    }
    None
}

/// The revert form of `subject`, if it has one (see [`RevertForm`]).
pub(crate) fn revert_form(subject: &str, spec: &P2Revert) -> Option<RevertForm> {
    let (mut depth, mut inner, reverted_subject) = layer(subject, spec)?;
    for _ in 1..MAX_LAYERS {
        match layer(inner, spec) {
            Some((n, next, _)) => {
                depth = depth.saturating_add(n);
                inner = next;
            }
            None => break,
        }
    }
    Some(RevertForm {
        depth,
        reverted_subject,
    })
}

/// The longest SHA length read: SHA-256 object ids.
const MAX_SHA_LEN: usize = 64;

/// The hex SHA `text` starts with (lower-cased), if it is `min_len..=64` digits not followed by a letter or digit.
pub(crate) fn leading_sha(text: &str, min_len: usize) -> Option<String> {
    let text = text.trim_start();
    let end = text.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(text.len());
    let next_is_word = text[end..].chars().next().is_some_and(char::is_alphanumeric);
    ((min_len..=MAX_SHA_LEN).contains(&end) && !next_is_word).then(|| text[..end].to_ascii_lowercase())
}

/// Markers that introduce a SHA (`This reverts commit`), matched ASCII case-insensitively.
#[derive(Debug, Clone)]
pub(crate) struct ShaMarkers(Vec<memchr::memmem::Finder<'static>>);

impl ShaMarkers {
    pub(crate) fn new(markers: &[String]) -> Self {
        Self(
            markers
                .iter()
                .filter(|marker| !marker.is_empty())
                .map(|marker| memchr::memmem::Finder::new(marker.to_ascii_lowercase().as_bytes()).into_owned())
                .collect(),
        )
    }
}

/// Every SHA that follows one of `markers` in `lines` (joined by newlines), in order of appearance, without
/// repeats.
pub(crate) fn marker_shas(lines: &[&str], markers: &ShaMarkers, min_len: usize) -> Vec<String> {
    let mut lower = String::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            lower.push('\n');
        }
        lower.push_str(line);
    }
    lower.make_ascii_lowercase();
    let mut found: Vec<(usize, String)> = Vec::new();
    for marker in &markers.0 {
        for at in marker.find_iter(lower.as_bytes()) {
            // A marker is ASCII, so `at + len` is a character boundary.
            if let Some(sha) = leading_sha(&lower[at + marker.needle().len()..], min_len) {
                found.push((at, sha));
            }
        }
    }
    found.sort();
    let mut shas: Vec<String> = Vec::with_capacity(found.len());
    for (_, sha) in found {
        if !shas.contains(&sha) {
            shas.push(sha);
        }
    }
    shas
}

/// The words of a revert's stated reason: its body without the lines naming the reverted SHA, boilerplate lines
/// and trailer lines. Empty when the revert gives no reason.
pub(crate) fn revert_reason_words(body: &str, trailer_tokens: &[&str], spec: &P2Revert) -> Vec<String> {
    let markers: Vec<String> = spec
        .sha_markers
        .iter()
        .map(|m| m.to_ascii_lowercase())
        .filter(|m| !m.is_empty())
        .collect();
    let mut reason = Vec::new();
    for line in body.lines() {
        let line = line.trim();
        let lower = line.to_ascii_lowercase();
        let boilerplate = markers.iter().any(|marker| lower.contains(marker.as_str()))
            || spec
                .boilerplate_prefixes
                .iter()
                .any(|prefix| !prefix.is_empty() && strip_prefix_ci(line, prefix).is_some())
            || trailer_tokens
                .iter()
                .any(|token| strip_prefix_ci(line, token).is_some_and(|rest| rest.trim_start().starts_with(':')));
        if !boilerplate {
            reason.extend(message_words(line));
        }
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_requests_cited_as_the_culprit() {
        let phrases: Vec<String> = ["introduced in", "regression from", "caused by", "broken by"]
            .map(String::from)
            .to_vec();
        // vite d1b143fd, deno's bodies, and what is not a citation.
        assert_eq!(
            cited_pull_requests("fix: hmr for env files, regression from #15365 (#15559)", &phrases),
            [15365]
        );
        assert_eq!(
            cited_pull_requests(
                "The JS-based `ConnectionsList` introduced in #33208 (the `node:http`\nFixes a regression from \
                 #33465 where\ncaused by PR #12, Caused by pull request #13; introduced in #33208 again",
                &phrases
            ),
            [33208, 33465, 12, 13]
        );
        for text in [
            "fix: regression from #12a",
            "fix: regression from # 12",
            "fix: regression from 12",
            "fix: xcaused by #12",
            "fix: regression from #1234567890",
            "fix: closes #12",
            "refs rust-lang/rust#12 introduced in rust",
        ] {
            assert_eq!(cited_pull_requests(text, &phrases), Vec::<u64>::new(), "{text}");
        }
    }

    #[test]
    fn the_pull_request_a_subject_landed() {
        assert_eq!(landed_pull_request("fix(hmr): handle invalidate (#23171)"), Some(23171));
        assert_eq!(landed_pull_request("Merge pull request #1234 from a/b"), Some(1234));
        assert_eq!(landed_pull_request("Auto merge of #5678 - a:b, r=c"), Some(5678));
        assert_eq!(landed_pull_request("fix: see (#12) above"), None);
        assert_eq!(landed_pull_request("fix: (#12a)"), None);
        assert_eq!(landed_pull_request("Merge pull request #12"), None);
        assert_eq!(landed_pull_request("Merge branch 'x'"), None);
    }

    fn spec() -> P2Revert {
        crate::prereg::Prereg::p2(None).unwrap().spec.revert
    }

    #[test]
    fn words_split_on_non_alphanumerics() {
        assert_eq!(
            words("fix(CI): Ünïcode-Typo_2 😀x"),
            ["fix", "ci", "ünïcode", "typo", "2", "x"]
        );
        let keywords = Keywords::new(&["type error".into(), "fix".into()]);
        assert!(keywords.any_in(&words("Fix the parser")));
        assert!(keywords.any_in(&words("resolve a Type-Error")));
        assert!(!keywords.any_in(&words("prefix type of error")));
    }

    #[test]
    fn path_patterns_are_directory_fragments_or_file_name_globs() {
        let patterns = PathPatterns::new(&[
            ".github/workflows/".into(),
            "tests/".into(),
            "*.lock".into(),
            "Jenkinsfile".into(),
            "*_test.go".into(),
            "test_*.py".into(),
            "*.test.ts".into(),
        ]);
        assert!(patterns.matches(".github/workflows/ci.yml"));
        assert!(patterns.matches("crates/x/Cargo.lock"));
        assert!(patterns.matches(r"ci\Jenkinsfile"));
        assert!(patterns.matches("pkg/server/handler_test.go"));
        assert!(patterns.matches("src/test_parser.py"));
        assert!(patterns.matches("packages/vite/src/node/__tests__/a.test.ts"));
        assert!(patterns.matches("crates/foo/tests/it.rs"));
        assert!(
            patterns.matches(" crates/x/CARGO.LOCK "),
            "trimmed and lower-cased first"
        );
        assert!(!patterns.matches("src/my.github/workflows.rs"));
        assert!(!patterns.matches("src/cargo.lock.rs"));
        assert!(!patterns.matches("src/Jenkinsfile.md"));
        assert!(
            !patterns.matches("src/contests/a.rs"),
            "tests/ is a directory name, not a substring"
        );
        // Version 1's risk-floor substrings made every file of vite's `packages/vite/` a build path.
        assert!(!patterns.matches("packages/vite/src/node/server/hmr.ts"));
    }

    #[test]
    fn message_words_are_prose_only() {
        // Conventional scopes name product features; tags, flags, identifiers, file names and tool subcommands are
        // not prose (each of these made version 1's keyword rules fire).
        assert_eq!(
            message_words("fix(compile): use a memory mapped file"),
            ["use", "a", "memory", "mapped", "file"]
        );
        assert!(message_words("fix(fmt): keep comments").iter().all(|w| w != "fmt"));
        assert_eq!(
            message_words("[batch-test-pending] handle empty input"),
            ["handle", "empty", "input"]
        );
        assert_eq!(
            message_words("pass --test to the runner"),
            ["pass", "to", "the", "runner"]
        );
        assert_eq!(
            message_words("rename doc_id and build.rs output"),
            ["rename", "and", "output"]
        );
        assert_eq!(
            message_words("silence cargo doc warnings"),
            ["silence", "cargo", "warnings"]
        );
        assert_eq!(
            message_words("fix `cfg!(test)` in the type-check step"),
            ["fix", "in", "the", "type", "check", "step"]
        );
        assert_eq!(
            message_words("Fix flaky test, again."),
            ["fix", "flaky", "test", "again"]
        );
    }

    #[test]
    fn fixes_are_recognised_by_type_or_leading_keyword() {
        let types: Vec<String> = ["fix", "hotfix", "bugfix"].map(String::from).to_vec();
        let keywords: Vec<String> = ["fix", "fixes", "fixed", "fixing", "hotfix", "bugfix", "fixup"]
            .map(String::from)
            .to_vec();
        let fix = |subject: &str| is_fix_subject(subject, &types, &keywords);
        assert!(fix("fix(parser): handle EOF"));
        assert!(fix("hotfix: restore the cache"));
        assert!(fix("Fix crash on empty input"));
        assert!(fix("builtin/log: fix --follow with renames"));
        assert!(fix("t/t1234: Fixes a race"));
        assert!(fix("[bd-12] Fixed the importer"));
        assert!(
            fix("doc: fix typo in the manual"),
            "`doc:` is git's area prefix, not a conventional type"
        );
        // Other types that merely contain the word, and mentions that are not the subject's verb.
        assert!(!fix("chore(beads): sync issues, bd-53c fixed"));
        assert!(!fix("refactor(fix): split the module"));
        assert!(!fix("docs: fix typo"));
        assert!(!fix("tune the allocator; M=32 fixes it"));
        assert!(!fix("prefix the paths"));
        assert!(!fix("Revert \"fix: x\""));
    }

    #[test]
    fn citations_name_culprits_by_phrase_or_git_style() {
        let phrases: Vec<String> = ["introduced in", "caused by", "broken by"].map(String::from).to_vec();
        let body = "The bug was introduced in 1a2b3c4d5e6f.\n\
                    Since 9f8e7d6c5b4a (diff: teach --foo, 2024-01-02) we crash.\n\
                    Caused by commit abc1234def.\n\
                    This reverts commit 0123456789abcdef0123456789abcdef01234567.\n\
                    See deadbeefcafe and 12345678 for more.";
        let cited = cited_shas(body, &phrases, 7);
        let shas: Vec<(&str, bool)> = cited.iter().map(|c| (c.sha.as_str(), c.culprit)).collect();
        assert_eq!(
            shas,
            [("1a2b3c4d5e6f", true), ("9f8e7d6c5b4a", false), ("abc1234def", true)]
        );
    }

    #[test]
    fn version_subjects_are_releases() {
        for subject in ["2.8.3 (#35144)", "v1.2.0", "Git 2.47", "Release 1.0", "Version 3.1-rc1"] {
            assert!(starts_with_version(subject), "{subject}");
        }
        for subject in ["fix 2 bugs", "2nd attempt", "v8: upgrade", "Releases page"] {
            assert!(!starts_with_version(subject), "{subject}");
        }
    }

    #[test]
    fn conventional_subjects() {
        assert_eq!(
            conventional("fix(parser)!: handle EOF"),
            Some(("fix".into(), "handle EOF"))
        );
        assert_eq!(conventional("Revert: x"), Some(("revert".into(), "x")));
        assert_eq!(conventional("fix parser: x"), None);
        assert_eq!(conventional("(x): y"), None);
        assert_eq!(conventional("fix(a: b): c"), None);
        assert_eq!(conventional("fix(unclosed: c"), None);
    }

    #[test]
    fn revert_forms_and_their_depth() {
        let spec = spec();
        let form = |s: &str| revert_form(s, &spec).map(|f| (f.depth, f.reverted_subject));
        assert_eq!(form(r#"Revert "add x""#), Some((1, "add x".into())));
        assert_eq!(
            form(r#"Revert "feat: add x (#12)" (#14)"#),
            Some((1, "feat: add x (#12)".into()))
        );
        assert_eq!(
            form(r#"Revert "Revert "add x"""#),
            Some((2, r#"Revert "add x""#.into()))
        );
        assert_eq!(form(r#"Revert^2 "add x""#), Some((2, r#"Revert "add x""#.into())));
        assert_eq!(form(r#"Revert^3 "add x""#), Some((3, r#"Revert^2 "add x""#.into())));
        assert_eq!(form(r#"Reapply "add x""#), Some((2, "add x".into())));
        assert_eq!(
            form(r#"Revert "Reapply "add x"""#),
            Some((3, r#"Reapply "add x""#.into()))
        );
        assert_eq!(form("revert(api): add x"), Some((1, "add x".into())));
        assert_eq!(form("revert: revert: add x"), Some((2, "revert: add x".into())));
        assert_eq!(form(r#"Revert ""#), Some((1, String::new())));
        assert_eq!(form("Revert to the old API"), None);
        assert_eq!(form("Reverted x"), None);
        assert_eq!(form(r#"Revert^ "x""#), None);
        assert_eq!(form(r#"Revert^99999999999999999999999 "x""#), None);
        let deep = format!("{}x{}", r#"Revert ""#.repeat(500), "\"".repeat(500));
        assert_eq!(form(&deep).unwrap().0, MAX_LAYERS as u64);
    }

    #[test]
    fn shas_after_markers() {
        let markers = spec().sha_markers;
        let body = "This reverts commit 0123456789abcdef0123456789abcdef01234567.\n\
                    this REVERTS commit ABCDEF1, and this reverts commit abcdef1 again; \
                    This reverts commit decade (too short), This reverts commit abcdef12x.";
        assert_eq!(
            marker_shas(&[body], &ShaMarkers::new(&markers), 7),
            ["0123456789abcdef0123456789abcdef01234567", "abcdef1"]
        );
        assert_eq!(
            leading_sha("  1234abcd5678 (\"subject\")", 7),
            Some("1234abcd5678".into())
        );
        assert_eq!(leading_sha("#123", 7), None);
        assert_eq!(leading_sha("é", 7), None);
    }

    #[test]
    fn revert_reasons_leave_out_boilerplate_and_trailers() {
        let spec = spec();
        let body = "This reverts commit 0123456789abcdef0123456789abcdef01234567, reversing\n\
                    changes made to 89abcdef0123456789abcdef0123456789abcdef.\n\nSigned-off-by: A <a@b>";
        assert!(revert_reason_words(body, &["Signed-off-by"], &spec).is_empty());
        let body = "This reverts commit 0123456.\n\nBreaks the build on arm.\n\nChange-Id: I12";
        assert_eq!(
            revert_reason_words(body, &["Change-Id"], &spec),
            ["breaks", "the", "build", "on", "arm"]
        );
    }
}
