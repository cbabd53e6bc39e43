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

/// Path fragments matched at a path-component boundary (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct PathFragments(Vec<(String, String)>);

impl PathFragments {
    pub(crate) fn new(fragments: &[String]) -> Self {
        Self(
            fragments
                .iter()
                .map(|fragment| normalise_path(fragment))
                .filter(|fragment| !fragment.is_empty())
                .map(|fragment| {
                    let inner = format!("/{fragment}");
                    (fragment, inner)
                })
                .collect(),
        )
    }

    pub(crate) fn matches(&self, path: &str) -> bool {
        let path = normalise_path(path);
        self.0
            .iter()
            .any(|(start, inner)| path.starts_with(start.as_str()) || path.contains(inner.as_str()))
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

/// Whether `subject` has one of `types` as its conventional-commit type.
pub(crate) fn has_type(subject: &str, types: &[String]) -> bool {
    conventional(subject).is_some_and(|(kind, _)| types.iter().any(|t| t.eq_ignore_ascii_case(&kind)))
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
            reason.extend(words(line).into_iter().map(Cow::into_owned));
        }
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn path_fragments_match_at_component_boundaries() {
        let fragments = PathFragments::new(&[".github/workflows/".into(), "Cargo.lock".into(), "Jenkinsfile".into()]);
        assert!(fragments.matches(".github/workflows/ci.yml"));
        assert!(fragments.matches("crates/x/cargo.lock"));
        assert!(fragments.matches(r"ci\Jenkinsfile"));
        assert!(!fragments.matches("src/my.github/workflows.rs"));
        assert!(!fragments.matches("src/xcargo.lock"));
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
