//! The secret redactor: every writer of text copied from elsewhere (self-reports, commit subjects, task titles)
//! passes it through [`redact`] first, so a credential an agent pasted into its self-report, or a token in a
//! commit subject, never reaches a sidecar.
//!
//! What is replaced by [`REDACTED`]:
//!
//! - PEM private-key blocks, `-----BEGIN … PRIVATE KEY-----` to the matching `-----END … PRIVATE KEY-----`, whole
//!   and across lines; a BEGIN without an END redacts to the end of the text;
//! - credentials in URLs: `https://user:pass@host` → `https://user:[REDACTED]@host`;
//! - `Authorization:` (and `Proxy-Authorization:`, `X-Api-Key:`, `X-Auth-Token:`, `Private-Token:`) header values,
//!   keeping a `Bearer`/`Basic`/`Token`/`Digest` scheme word;
//! - well-known token formats, whole: OpenAI/Anthropic `sk-…` (at least 16 token characters after `sk-` *and* a
//!   digit or a 16-character run, so `sk-learn` and hyphenated prose survive), GitHub `ghp_/gho_/ghu_/ghs_/ghr_` and
//!   `github_pat_…`, AWS access key ids `AKIA…`/`ASIA…`, Slack `xox[abposr]-…`, JWTs (`eyJ…`.`eyJ…`.signature),
//!   GitLab `glpat-…`, Stripe `sk_live_…`/`rk_live_…` (and `_test_`), Google `AIza…`, npm `npm_…`, Hugging Face
//!   `hf_…`;
//! - the value of a parameter or assignment whose name is secret-like, keeping the name and separator:
//!   `?token=abc&x=1` → `?token=[REDACTED]&x=1`. Names: `token`, `access_token`, `api_key`/`apikey`/`api-key`,
//!   `key`, `secret`, `client_secret`, `password`, `passwd`, `auth`, `sig`, `signature` (case-insensitive, as whole
//!   names), any `snake_case` name ending in `_token`, `_secret`, `_password`, `_passwd`, `_api_key`/`_apikey`,
//!   `_access_key`, `_secret_key`, `_private_key` (case-insensitive), any camelCase name ending in `Token`, `Secret`,
//!   `Password`, `ApiKey`, `AccessKey`, `SecretKey`, `PrivateKey`, and any upper-case env-style name ending in
//!   `_KEY` (`ANTHROPIC_API_KEY=…`). Separators: `=` (URLs, shell, code), `"name": value` (JSON, quoted name) and,
//!   for upper-case env-style names only, `NAME: value` (YAML); quoted values keep their quotes;
//! - a bare `Bearer <token>` when the token looks like one (a digit, or 24+ characters), so "Bearer tokens are …"
//!   survives.
//!
//! Each pattern is compiled once, lazily, by the `regex` crate, and only when a cheap literal test says the text
//! could match it, so matching is linear in the text and the hook's start-up rarely compiles anything. Text with
//! nothing to redact comes back as [`Cow::Borrowed`] without allocating. Redaction is idempotent:
//! `redact(&redact(x)) == redact(x)` ([`REDACTED`] itself matches no rule, and a value that is already
//! `[REDACTED]` is replaced by itself).
//!
//! Deliberately *not* redacted: hex strings (a 40-hex git SHA looks like a secret to an entropy check but is not one
//! here), ordinary query parameters, and prose that merely mentions tokens or passwords.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Captures, Regex};

/// What a secret is replaced by.
pub const REDACTED: &str = "[REDACTED]";

/// One redaction rule: a cheap test that the text could match at all, a pattern compiled only the first time that
/// test passes, and how to rewrite each match (`None` keeps the match as it is). Most text the hook copies (a
/// branch name, an agent id, a sentence of self-report) passes no test, so the hook rarely compiles any pattern.
struct Rule {
    could_match: fn(&str) -> bool,
    pattern: fn() -> String,
    rewrite: fn(&Captures<'_>) -> Option<String>,
    compiled: OnceLock<Regex>,
}

impl Rule {
    const fn new(
        could_match: fn(&str) -> bool,
        pattern: fn() -> String,
        rewrite: fn(&Captures<'_>) -> Option<String>,
    ) -> Self {
        Self {
            could_match,
            pattern,
            rewrite,
            compiled: OnceLock::new(),
        }
    }

    fn regex(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&(self.pattern)()).expect("the redaction patterns are valid regexes"))
    }
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

fn contains_any(haystack: &str, needles: &[&str]) -> bool {
    needles.iter().any(|needle| haystack.contains(needle))
}

/// An assignment value: an earlier redaction (kept as is), a quoted string, or a bare run up to a delimiter.
const VALUE: &str = r#"(?P<val>\[REDACTED\]|"[^"\n]+"|'[^'\n]+'|[^\s&"'<>#,;)}\[\]`=][^\s&"'<>#,;)}\[\]`]*)"#;

/// Whole names of secret-like parameters (used case-insensitively).
const SECRET_NAMES: &str =
    r"access[_-]?token|client[_-]?secret|api[_-]?key|token|key|secret|password|passwd|auth|sig|signature";

/// Names that are secret-like by their suffix: snake_case (case-insensitive), camelCase and upper-case env style.
const SECRET_SUFFIXED_NAMES: &str = r"(?i-u:[a-z][a-z0-9_]*_(?:token|secret|password|passwd|api_?key|access_key|secret_key|private_key))|(?-i:[a-z][a-zA-Z0-9]*(?:Token|Secret|Password|Passwd|ApiKey|AccessKey|SecretKey|PrivateKey))|(?-i:[A-Z][A-Z0-9_]*_KEY)";

/// Upper-case env-style names, the only ones redacted after an unquoted `:` (YAML `env:` blocks).
const ENV_NAMES: &str = r"(?-i:[A-Z][A-Z0-9_]*_(?:TOKEN|SECRET|PASSWORD|PASSWD|KEY))";

static RULES: [Rule; 9] = [
    // PEM private keys, whole block; unterminated runs to the end of the text.
    Rule::new(
        |text| text.contains("-----BEGIN "),
        || {
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)"
                .into()
        },
        |_| Some(REDACTED.to_owned()),
    ),
    // Credentials in URLs: keep scheme, user and host.
    Rule::new(
        |text| text.contains("://") && text.contains('@'),
        || r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@?#]*:)(?P<val>[^\s/@?#]+)(?P<post>@)".into(),
        |caps| Some(format!("{}{REDACTED}{}", &caps["pre"], &caps["post"])),
    ),
    // Authorization-like headers: keep the header name and scheme word.
    Rule::new(
        |text| {
            ["authorization", "x-api-key", "x-auth-token", "private-token"]
                .iter()
                .any(|header| contains_ignore_case(text, header))
        },
        || {
            r#"(?P<pre>\b(?i-u:(?:proxy-)?(?:authorization|x-api-key|x-auth-token|private-token))["']?[ \t]*[:=][ \t]*["']?(?:(?i-u:bearer|basic|token|digest)[ \t]+)?)(?P<val>[^\s"',;]+)"#
                .into()
        },
        |caps| Some(format!("{}{REDACTED}", &caps["pre"])),
    ),
    // OpenAI / Anthropic keys; `sk-learn` and hyphenated prose are not keys.
    Rule::new(
        |text| text.contains("sk-"),
        || r"\bsk-[A-Za-z0-9_-]{16,}".into(),
        |caps| {
            let body = &caps[0][3..];
            let has_digit = body.bytes().any(|b| b.is_ascii_digit());
            let long_run = body.split('-').any(|run| run.len() >= 16);
            (has_digit || long_run).then(|| REDACTED.to_owned())
        },
    ),
    // Other well-known token formats, whole.
    Rule::new(
        |text| {
            contains_any(
                text,
                &[
                    "ghp_",
                    "gho_",
                    "ghu_",
                    "ghs_",
                    "ghr_",
                    "github_pat_",
                    "AKIA",
                    "ASIA",
                    "xox",
                    "eyJ",
                    "glpat-",
                    "k_live_",
                    "k_test_",
                    "AIza",
                    "npm_",
                    "hf_",
                ],
            )
        },
        || {
            concat!(
                r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
                r"|\bgithub_pat_[A-Za-z0-9_]{22,}",
                r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
                r"|\bxox[abposr]-[A-Za-z0-9-]{10,}",
                r"|\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
                r"|\bglpat-[A-Za-z0-9_-]{20,}",
                r"|\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
                r"|\bAIza[0-9A-Za-z_-]{35}",
                r"|\bnpm_[A-Za-z0-9]{36}\b",
                r"|\bhf_[A-Za-z0-9]{30,}\b",
            )
            .into()
        },
        |_| Some(REDACTED.to_owned()),
    ),
    // `name=value` (URL query, shell, code).
    Rule::new(
        |text| text.contains('='),
        || format!(r"(?P<pre>\b(?:(?i-u:{SECRET_NAMES})|{SECRET_SUFFIXED_NAMES})[ \t]*=[ \t]*){VALUE}"),
        rewrite_value,
    ),
    // `"name": value` (JSON, Python dicts).
    Rule::new(
        |text| text.contains(':') && (text.contains('"') || text.contains('\'')),
        || format!(r#"(?P<pre>["'](?:(?i-u:{SECRET_NAMES})|{SECRET_SUFFIXED_NAMES})["'][ \t]*:[ \t]*){VALUE}"#),
        rewrite_value,
    ),
    // `NAME: value` (YAML), upper-case env-style names only.
    Rule::new(
        |text| text.contains(':') && contains_any(text, &["_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD", "_KEY"]),
        || format!(r"(?P<pre>\b{ENV_NAMES}[ \t]*:[ \t]*){VALUE}"),
        rewrite_value,
    ),
    // A bare `Bearer <token>`, when the token looks like one.
    Rule::new(
        |text| contains_ignore_case(text, "bearer"),
        || r"(?P<pre>\b(?i-u:bearer)[ \t]+)(?P<val>[A-Za-z0-9._~+/=-]{8,})".into(),
        |caps| {
            let token = &caps["val"];
            (token.bytes().any(|b| b.is_ascii_digit()) || token.len() >= 24)
                .then(|| format!("{}{REDACTED}", &caps["pre"]))
        },
    ),
];

/// Keeps the name and separator, redacts the value; a quoted value keeps its quotes.
fn rewrite_value(caps: &Captures<'_>) -> Option<String> {
    let value = &caps["val"];
    let quote = match value.as_bytes()[0] {
        q @ (b'"' | b'\'') => char::from(q).to_string(),
        _ => String::new(),
    };
    Some(format!("{}{quote}{REDACTED}{quote}", &caps["pre"]))
}

/// At most this many passes of the rules; in practice the second pass already finds nothing new.
const MAX_PASSES: usize = 8;

/// `text` with every secret the module documentation lists replaced by [`REDACTED`].
///
/// Borrowed (no allocation) when nothing matched. Idempotent: the rules are applied until a pass changes nothing
/// (one redaction can expose another, e.g. `https://u:token="a b"@host` only reads as URL credentials once the
/// quoted value is `"[REDACTED]"`), so the result is a fixed point.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut current = match redact_once(text) {
        Cow::Borrowed(_) => return Cow::Borrowed(text),
        Cow::Owned(redacted) => redacted,
    };
    for _ in 1..MAX_PASSES {
        let next = match redact_once(&current) {
            Cow::Borrowed(_) => break,
            Cow::Owned(next) => next,
        };
        current = next;
    }
    Cow::Owned(current)
}

/// One pass of every rule, in order; `Borrowed` when the pass changed nothing.
fn redact_once(text: &str) -> Cow<'_, str> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    for rule in &RULES {
        if !(rule.could_match)(&current) {
            continue;
        }
        let replaced = match rule.regex().replace_all(&current, |caps: &Captures<'_>| {
            (rule.rewrite)(caps).unwrap_or_else(|| caps[0].to_owned())
        }) {
            Cow::Owned(replaced) => Some(replaced),
            Cow::Borrowed(_) => None,
        };
        if let Some(replaced) = replaced {
            current = Cow::Owned(replaced);
        }
    }
    match current {
        // A rule matched but kept every match (`sk-learn-like-prose`): nothing changed after all.
        Cow::Owned(owned) if owned == text => Cow::Borrowed(text),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[track_caller]
    fn check(input: &str, expected: &str) {
        assert_eq!(redact(input), expected, "redact({input:?})");
        assert_eq!(redact(expected), expected, "redaction of {input:?} is not idempotent");
    }

    #[track_caller]
    fn unchanged(input: &str) {
        let out = redact(input);
        assert!(matches!(out, Cow::Borrowed(_)), "{input:?} was rewritten to {out:?}");
        assert_eq!(out, input);
    }

    #[test]
    fn openai_and_anthropic_keys() {
        check("key sk-abcdefghijklmnop1234 here", "key [REDACTED] here");
        check(
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-AA done",
            "[REDACTED] done",
        );
        check("use sk-proj-Abc123Def456Ghi789Jkl0 now", "use [REDACTED] now");
        check("sk-ABCDEFGHIJKLMNOPQRSTUVWX", "[REDACTED]");
    }

    #[test]
    fn sk_words_survive() {
        unchanged("we use sk-learn for the classifier");
        unchanged("an sk-learn-compatible-estimator wrapper");
        unchanged("sk-short1");
        unchanged("task-abcdefghijklmnop1234 is an id, not a key");
    }

    #[test]
    fn github_tokens() {
        check("ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij", "[REDACTED]");
        check(
            "tokens gho_0123456789abcdefghijABCDEFGHIJ012345, ghs_0123456789abcdefghijABCDEFGHIJ012345",
            "tokens [REDACTED], [REDACTED]",
        );
        check(
            "pat github_pat_11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345 end",
            "pat [REDACTED] end",
        );
        unchanged("ghp_tooshort");
    }

    #[test]
    fn aws_access_key_ids() {
        check("aws AKIAIOSFODNN7EXAMPLE key", "aws [REDACTED] key");
        check("ASIAY34FZKBOKMUTVV7A", "[REDACTED]");
        unchanged("AKIAshort");
    }

    #[test]
    fn slack_tokens() {
        check("xoxb-1234567890-0987654321-AbCdEfGhIjKl", "[REDACTED]");
        check("bot xoxp-12345678901-abc done", "bot [REDACTED] done");
    }

    #[test]
    fn jwts() {
        check(
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U.",
            "jwt [REDACTED].",
        );
    }

    #[test]
    fn pem_private_keys() {
        check(
            "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc/def+==\n-----END RSA PRIVATE KEY-----\nafter",
            "before\n[REDACTED]\nafter",
        );
        check(
            "a -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY----- b -----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY----- c",
            "a [REDACTED] b [REDACTED] c",
        );
        check(
            "key: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\nand it goes on",
            "key: [REDACTED]",
        );
        check(
            r#""-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n""#,
            r#""[REDACTED]\n""#,
        );
        unchanged("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----");
        unchanged("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----");
    }

    #[test]
    fn url_and_query_parameters() {
        check("GET /cb?token=abc&x=1", "GET /cb?token=[REDACTED]&x=1");
        check(
            "https://api.example.com/v1?api_key=K123&page=2&client_secret=s3cr3t#frag",
            "https://api.example.com/v1?api_key=[REDACTED]&page=2&client_secret=[REDACTED]#frag",
        );
        check(
            "?access_token=a.b.c&apikey=q&api-key=r&key=s",
            "?access_token=[REDACTED]&apikey=[REDACTED]&api-key=[REDACTED]&key=[REDACTED]",
        );
        check(
            "https://s3.example.com/o?X-Amz-Signature=ab12cd&sig=xyz==&Auth=u1",
            "https://s3.example.com/o?X-Amz-Signature=[REDACTED]&sig=[REDACTED]&Auth=[REDACTED]",
        );
        check(
            "PASSWORD=hunter2 secret=shh passwd=x",
            "PASSWORD=[REDACTED] secret=[REDACTED] passwd=[REDACTED]",
        );
    }

    #[test]
    fn assignments_keep_quotes() {
        check(r#"password = "hunter2 with spaces";"#, r#"password = "[REDACTED]";"#);
        check("token='abc'", "token='[REDACTED]'");
        unchanged(r#"password = "";"#);
    }

    #[test]
    fn env_style_assignments() {
        check(
            "ANTHROPIC_API_KEY=abc123 cargo run",
            "ANTHROPIC_API_KEY=[REDACTED] cargo run",
        );
        check("export GITHUB_TOKEN=xyz", "export GITHUB_TOKEN=[REDACTED]");
        check(
            "DB_PASSWORD=p@ss AWS_SECRET=s MY_KEY=k",
            "DB_PASSWORD=[REDACTED] AWS_SECRET=[REDACTED] MY_KEY=[REDACTED]",
        );
        check(
            r#"{"GITHUB_TOKEN": "abc", "other": "x"}"#,
            r#"{"GITHUB_TOKEN": "[REDACTED]", "other": "x"}"#,
        );
        check(
            r#"{"password":"pw","user":"me"}"#,
            r#"{"password":"[REDACTED]","user":"me"}"#,
        );
        check(
            "env:\n  SLACK_BOT_TOKEN: abc123\n  LOG_LEVEL: debug",
            "env:\n  SLACK_BOT_TOKEN: [REDACTED]\n  LOG_LEVEL: debug",
        );
        check(
            "aws_secret_access_key = wJalrXUtnFEMI",
            "aws_secret_access_key = [REDACTED]",
        );
        check(
            "refresh_token=r1 const apiKey = 'k'",
            "refresh_token=[REDACTED] const apiKey = '[REDACTED]'",
        );
    }

    #[test]
    fn authorization_headers() {
        check("Authorization: Bearer abc.def-ghi", "Authorization: Bearer [REDACTED]");
        check("authorization: basic dXNlcjpwYXNz", "authorization: basic [REDACTED]");
        check(
            r#"-H "Authorization: token abc123" -v"#,
            r#"-H "Authorization: token [REDACTED]" -v"#,
        );
        check(
            r#"{"Authorization": "Bearer abc"}"#,
            r#"{"Authorization": "Bearer [REDACTED]"}"#,
        );
        check("Authorization: opaque123", "Authorization: [REDACTED]");
        check("X-Api-Key: k-123", "X-Api-Key: [REDACTED]");
    }

    #[test]
    fn bare_bearer_tokens() {
        check(
            "sent Bearer abcDEF123456 to the API",
            "sent Bearer [REDACTED] to the API",
        );
        check("bearer AbCdEfGhIjKlMnOpQrStUvWxYz", "bearer [REDACTED]");
        unchanged("Bearer tokens are passed in a header");
        unchanged("Bearer authentication failed");
    }

    #[test]
    fn url_credentials() {
        check(
            "clone https://user:pass@github.com/o/r.git",
            "clone https://user:[REDACTED]@github.com/o/r.git",
        );
        check(
            "postgres://app:p%40ss:w0rd@db:5432/app",
            "postgres://app:[REDACTED]@db:5432/app",
        );
        check("https://:tok@host/x", "https://:[REDACTED]@host/x");
        unchanged("https://example.com:8443/path?email=a@b.com");
        unchanged("git@github.com:owner/repo.git");
    }

    #[test]
    fn other_token_formats() {
        check("glpat-abcdefghij0123456789", "[REDACTED]");
        check("sk_live_abcdefghijklmnop1234", "[REDACTED]");
        check("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED]");
        check("npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]");
        check("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "[REDACTED]");
    }

    #[test]
    fn several_secrets_in_prose() {
        let input = "Fixed the login flow. I tested with ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 \
                     and curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' \
                     https://bot:hunter2@ci.example.com/hook?token=t0k3n&page=2; the key AKIAIOSFODNN7EXAMPLE \
                     was a fixture. The token is missing from commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39.";
        let expected = "Fixed the login flow. I tested with ANTHROPIC_API_KEY=[REDACTED] \
                        and curl -H 'Authorization: Bearer [REDACTED]' \
                        https://bot:[REDACTED]@ci.example.com/hook?token=[REDACTED]&page=2; the key [REDACTED] \
                        was a fixture. The token is missing from commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39.";
        check(input, expected);
    }

    #[test]
    fn negatives_survive_unchanged() {
        unchanged("sk-learn");
        unchanged("the token is missing");
        unchanged("3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39");
        unchanged("https://example.com/path?page=2");
        unchanged("monkey=1");
        unchanged("if token == expected && key != other { return auth; }");
        unchanged("tokens=5 max_tokens=100 primary_key=True sort_key=name");
        unchanged("Key: the password policy needs review; secret: none");
        unchanged("");
        unchanged("plain prose with émojis 🎉 and — dashes");
    }

    #[test]
    fn no_match_is_borrowed() {
        let text = "nothing secret here";
        assert!(matches!(redact(text), Cow::Borrowed(s) if std::ptr::eq(s, text)));
        assert!(matches!(redact("token=abc"), Cow::Owned(_)));
    }

    #[test]
    fn one_redaction_can_expose_another() {
        check(r#"https://u:token="a b"@host/x"#, "https://u:[REDACTED]@host/x");
    }

    #[test]
    fn redacted_marker_is_stable() {
        unchanged(REDACTED);
        check("token=[REDACTED]&x=1", "token=[REDACTED]&x=1");
    }

    const FRAGMENTS: &[&str] = &[
        "sk-ant-api03-abcdefghijklmnop1234",
        "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234567890-abc",
        "eyJa.eyJb.c",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "https://u:p@h/",
        "http://",
        "?token=",
        "&key=",
        "password",
        "=",
        ":",
        "\"",
        "'",
        "Authorization: ",
        "Bearer ",
        "Basic ",
        "GITHUB_TOKEN",
        "[REDACTED]",
        "@",
        "/",
        "abc123",
        " ",
        "\n",
        "sk-learn",
        "the token is missing",
        "token=\"a b\"",
        "https://u:",
        "@host",
        "sig=",
        "\"password\": ",
        "API_KEY: ",
    ];

    proptest! {
        #[test]
        fn idempotent(parts in prop::collection::vec(
            prop_oneof![prop::sample::select(FRAGMENTS).prop_map(str::to_owned), "[ -~]{0,12}"],
            0..12,
        )) {
            let text = parts.concat();
            let once = redact(&text).into_owned();
            let twice = redact(&once).into_owned();
            prop_assert_eq!(&twice, &once, "input {:?}", text);
        }
    }
}
