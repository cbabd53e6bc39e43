//! The diff risk floor (PRD §6): a pure, deterministic function from the paths a turn changed to a [`RiskVerdict`].
//!
//! # What it is, and what it is not
//!
//! The verdict is a **floor**, a minimum review requirement derived mechanically from *where* the diff lands. It
//! never lowers a requirement that comes from elsewhere and is subordinate to every stronger signal; consumers
//! apply the precedence **CI/tests > human merge > reviewer verdict > self-reflection**, and this floor only says
//! "at least this much scrutiny, whatever the agent reported about itself".
//!
//! # The table
//!
//! Each path (with `\` normalised to `/`) is matched case-insensitively (ASCII) against every pattern; its surface is the
//! highest-weight surface with any matching pattern, and the verdict's surface is the highest over all files:
//!
//! | surface | weight | upstream patterns (PRD §6, kept verbatim)                                                     |
//! |---------|--------|-----------------------------------------------------------------------------------------------|
//! | auth    | 1.0    | `auth` `login` `session` `token` `permission` `rbac` `credential` `secret`                    |
//! | data    | 0.9    | `migration` `prisma` `schema` `\.sql` `entity` `repository` `seed`                            |
//! | infra   | 0.85   | `docker` `\.woodpecker` `compose` `traefik` `deploy` `helm` `k8s` `terraform`                 |
//! | build   | 0.6    | `package\.json` `tsconfig` `turbo\.json` `pnpm-` `\.config\.` `eslint` `vite`                 |
//! | ui      | 0.4    | `\.tsx` `\.css` `components/` `apps/web/`                                                     |
//! | test    | 0.2    | `\.spec\.` `\.test\.` `__tests__/`                                                            |
//! | docs    | 0.1    | `\.md` `docs/`                                                                                |
//! | none    | 0      | (nothing matched)                                                                             |
//!
//! `score` is the winning surface's weight and `needs_review = score >= threshold` (default
//! [`DEFAULT_RISK_THRESHOLD`], so auth, data, infra and build need review; ui, test, docs and none do not).
//!
//! # Why the extensions
//!
//! The upstream table was written for a TypeScript monorepo: a Rust crate's `Cargo.toml`, a Go `go.mod`, a
//! Python `tests/test_api.py` or a `.github/workflows/ci.yml` all classified as `none`. The extension patterns
//! ([`EXTENSION_PATTERNS`]) teach the table the common layouts of Rust, Go, Python, JVM, Ruby, .NET, Swift, Elixir,
//! Nix and CI systems. They are **additions only**: no upstream pattern is removed or changed, and because a path
//! takes the *highest* matching surface, adding a pattern can only raise a path's surface, never lower it. Every
//! upstream example keeps its result (the unit tests pin them). Where a bare substring would over-match, the
//! extensions anchor on path separators (`(^|/)tests?/`), extensions (`\.tf$`) or word-ish boundaries
//! (`(^|[/._-])sso([/._-]|$)`, because a bare `sso` is inside "processor"); deliberately absent are bare substrings
//! such as `acl` (inside "oracle"; it only counts as a whole path component) or `rollup` (a metrics aggregation
//! as often as the bundler), and directories such as `ops/` (kernel code in ML repositories).
//!
//! The upstream patterns are substrings and over-match in places (`auth` also matches `AUTHORS`, `token` matches
//! `tokenizer.rs`, `seed` matches `seedling`); that is upstream behaviour, kept for parity, and errs towards review.

use std::sync::LazyLock;

use regex_automata::Input;
use regex_automata::dfa::Automaton;
use regex_automata::dfa::dense::DFA;

use crate::reflection::{RiskVerdict, Surface, UnitInterval};

/// The default `needs_review` threshold: build (0.6) and above need review, ui (0.4) and below do not.
pub const DEFAULT_RISK_THRESHOLD: f64 = 0.5;

/// How many files of the winning surface the `reason` names before it summarises the rest as `(+N more)`.
const REASON_MAX_FILES: usize = 10;

include!("risk_patterns.rs");

/// One DFA per surface, most risky first, compiled from the tables by `build.rs` and embedded in the binary.
///
/// Case-insensitivity is ASCII case folding done on the path (lower-cased before matching) rather than `(?i)` in
/// the patterns: the patterns are ASCII and lower case, so the result is the same.
struct Table {
    dfas: Vec<(Surface, DFA<&'static [u32]>)>,
}

/// The serialised DFAs need the alignment of `u32`.
#[repr(C)]
struct Aligned<B: ?Sized> {
    _align: [u32; 0],
    bytes: B,
}

macro_rules! embedded_dfa {
    ($file:literal) => {{
        static ALIGNED: &Aligned<[u8]> = &Aligned {
            _align: [],
            bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/", $file)),
        };
        &ALIGNED.bytes
    }};
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let embedded: [(Surface, &'static [u8]); 7] = [
        (Surface::Auth, embedded_dfa!("risk-auth.dfa")),
        (Surface::Data, embedded_dfa!("risk-data.dfa")),
        (Surface::Infra, embedded_dfa!("risk-infra.dfa")),
        (Surface::Build, embedded_dfa!("risk-build.dfa")),
        (Surface::Ui, embedded_dfa!("risk-ui.dfa")),
        (Surface::Test, embedded_dfa!("risk-test.dfa")),
        (Surface::Docs, embedded_dfa!("risk-docs.dfa")),
    ];
    let dfas = embedded
        .into_iter()
        .map(|(surface, bytes)| {
            let (dfa, _) = DFA::from_bytes(bytes).expect("build.rs serialises valid DFAs for this target");
            (surface, dfa)
        })
        .collect();
    Table { dfas }
});

/// `\` to `/` and any leading `./` dropped, so Windows-style and `./`-prefixed paths classify and dedup alike.
fn normalise(path: &str) -> String {
    let path = path.replace('\\', "/");
    let mut rest = path.as_str();
    while let Some(stripped) = rest.strip_prefix("./") {
        rest = stripped;
    }
    if rest.len() == path.len() {
        path
    } else {
        rest.to_owned()
    }
}

fn classify_normalised(path: &str) -> Surface {
    let lower = path.to_ascii_lowercase();
    let input = Input::new(lower.as_bytes()).earliest(true);
    TABLE
        .dfas
        .iter()
        .find(|(_, dfa)| matches!(dfa.try_search_fwd(&input), Ok(Some(_))))
        .map_or(Surface::None, |&(surface, _)| surface)
}

/// The surface of one path: the highest-weight surface with any pattern matching it (case-insensitively, after
/// normalising `\` to `/`), or [`Surface::None`].
pub fn classify_path(path: &str) -> Surface {
    classify_normalised(&normalise(path))
}

/// The risk floor over a turn's changed files.
///
/// The files are normalised (`\` → `/`, leading `./` dropped), empty entries ignored, then sorted and deduplicated,
/// so the verdict depends only on the *set* of paths, never on their order or repetition. The surface is the
/// highest of the files' surfaces, `score` its weight, and `needs_review = score >= threshold`; a NaN `threshold`
/// is treated as [`DEFAULT_RISK_THRESHOLD`], any other value is taken as given. `reason` reads
/// `"<surface> surface (weight <w>) in: <files>"`, naming the winning surface's files in sorted order (the first
/// ten, then `(+N more)`); with no files it is `"no files changed"` and the surface `none`.
///
/// `insertions` and `deletions` are accepted for parity with upstream's `RiskFloorInput` and recorded by callers,
/// but **do not change the verdict**: the floor is about where a change lands, not how big it is.
pub fn evaluate_risk_floor<S: AsRef<str>>(
    files: &[S],
    _insertions: Option<u64>,
    _deletions: Option<u64>,
    threshold: f64,
) -> RiskVerdict {
    let threshold = if threshold.is_nan() {
        DEFAULT_RISK_THRESHOLD
    } else {
        threshold
    };

    let mut paths: Vec<String> = files
        .iter()
        .map(|file| normalise(file.as_ref()))
        .filter(|path| !path.trim().is_empty())
        .collect();
    paths.sort_unstable();
    paths.dedup();

    let classified: Vec<(Surface, &str)> = paths
        .iter()
        .map(|path| (classify_normalised(path), path.as_str()))
        .collect();
    let Some(surface) = classified.iter().map(|&(surface, _)| surface).max() else {
        return RiskVerdict {
            needs_review: Surface::None.weight() >= threshold,
            score: UnitInterval::new(Surface::None.weight()).expect("weights are in [0, 1]"),
            surface: Surface::None,
            reason: "no files changed".to_owned(),
        };
    };

    let winners: Vec<&str> = classified
        .iter()
        .filter(|&&(s, _)| s == surface)
        .map(|&(_, path)| path)
        .collect();
    let weight = surface.weight();
    let mut reason = format!(
        "{surface} surface (weight {weight}) in: {}",
        winners[..winners.len().min(REASON_MAX_FILES)].join(", ")
    );
    if winners.len() > REASON_MAX_FILES {
        reason.push_str(&format!(" (+{} more)", winners.len() - REASON_MAX_FILES));
    }

    RiskVerdict {
        needs_review: weight >= threshold,
        score: UnitInterval::new(weight).expect("weights are in [0, 1]"),
        surface,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn verdict(files: &[&str]) -> RiskVerdict {
        evaluate_risk_floor(files, None, None, DEFAULT_RISK_THRESHOLD)
    }

    /// Asserts surface, score and needs_review of a one-file verdict, and that `classify_path` agrees.
    fn assert_single(path: &str, surface: Surface, score: f64, needs_review: bool) {
        let v = verdict(&[path]);
        assert_eq!(v.surface, surface, "surface of {path}");
        assert_eq!(v.score.get(), score, "score of {path}");
        assert_eq!(v.needs_review, needs_review, "needs_review of {path}");
        assert_eq!(classify_path(path), surface, "classify_path({path})");
    }

    #[test]
    fn upstream_cases_keep_their_results() {
        assert_single("apps/api/src/auth/session.guard.ts", Surface::Auth, 1.0, true);
        assert_single("packages/db/migrations/0007_add_users.sql", Surface::Data, 0.9, true);
        assert_single(".woodpecker/deploy.yml", Surface::Infra, 0.85, true);
        assert_single("packages/types/tsconfig.json", Surface::Build, 0.6, true);
        assert_single("apps/web/src/components/Button.tsx", Surface::Ui, 0.4, false);
        assert_single("docs/guide.md", Surface::Docs, 0.1, false);
        assert_single("src/foo.spec.ts", Surface::Test, 0.2, false);
    }

    #[test]
    fn upstream_reason_format() {
        assert_eq!(
            verdict(&["src/auth.ts"]).reason,
            "auth surface (weight 1) in: src/auth.ts"
        );
        assert_eq!(
            verdict(&[".woodpecker/deploy.yml"]).reason,
            "infra surface (weight 0.85) in: .woodpecker/deploy.yml"
        );
        assert_eq!(
            verdict(&["src/lib.rs"]).reason,
            "none surface (weight 0) in: src/lib.rs"
        );
    }

    #[test]
    fn empty_input_is_no_files_changed() {
        let expected = RiskVerdict {
            needs_review: false,
            score: UnitInterval::new(0.0).unwrap(),
            surface: Surface::None,
            reason: "no files changed".into(),
        };
        assert_eq!(
            evaluate_risk_floor::<&str>(&[], None, None, DEFAULT_RISK_THRESHOLD),
            expected
        );
        assert_eq!(verdict(&["", ""]), expected);
        assert_eq!(
            evaluate_risk_floor(&[String::new()], Some(3), Some(4), DEFAULT_RISK_THRESHOLD),
            expected
        );
    }

    #[test]
    fn all_none_files_are_listed() {
        let v = verdict(&["src/main.rs", "src/lib.rs"]);
        assert_eq!(v.surface, Surface::None);
        assert_eq!(v.score.get(), 0.0);
        assert!(!v.needs_review);
        assert_eq!(v.reason, "none surface (weight 0) in: src/lib.rs, src/main.rs");
    }

    #[test]
    fn extensions_test_surface() {
        for path in [
            "tests/cli.rs",
            "crates/core/tests/integration.rs",
            "pkg/server_test.go",
            "tests/test_api.py",
            "test_utils.py",
            "pkg/util_test.py",
            "conftest.py",
            "internal/testdata/input.json",
            "spec/models_helper.rb",
            "lib/widget_spec.rb",
            "src/snapshots/render__basic.snap",
            "src/parser/tests.rs",
            "src/test/java/com/acme/WidgetTest.java",
            "MyApp.Tests/WidgetTests.cs",
        ] {
            assert_single(path, Surface::Test, 0.2, false);
        }
    }

    #[test]
    fn extensions_build_surface() {
        for path in [
            "Cargo.toml",
            "crates/cli/Cargo.toml",
            "Cargo.lock",
            "build.rs",
            "rust-toolchain.toml",
            ".cargo/config.toml",
            "go.mod",
            "go.sum",
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements-dev.txt",
            "Pipfile.lock",
            "poetry.lock",
            "uv.lock",
            "tox.ini",
            "Makefile",
            "justfile",
            "CMakeLists.txt",
            "cmake/FindFoo.cmake",
            "meson.build",
            "package-lock.json",
            "yarn.lock",
            "bun.lockb",
            "webpack.common.js",
            "rollup.config.mjs",
            ".babelrc",
            "build.gradle.kts",
            "pom.xml",
            "Gemfile",
        ] {
            assert_single(path, Surface::Build, 0.6, true);
        }
    }

    #[test]
    fn extensions_infra_surface() {
        for path in [
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            "Jenkinsfile",
            ".circleci/config.yml",
            ".buildkite/pipeline.yml",
            "azure-pipelines.yml",
            "ansible/site.yml",
            "overlays/prod/kustomization.yaml",
            "infra/main.tf",
            "envs/prod.tfvars",
            "Vagrantfile",
            "Procfile",
            "fly.toml",
            "conf/nginx.conf",
        ] {
            assert_single(path, Surface::Infra, 0.85, true);
        }
    }

    #[test]
    fn extensions_data_surface() {
        for path in [
            "alembic/versions/1_init.py",
            "src/models/user.py",
            "app/model.py",
            "diesel.toml",
            ".sqlx/query-1234.json",
            "proto/events.proto",
            "internal/database/pool.go",
        ] {
            assert_single(path, Surface::Data, 0.9, true);
        }
    }

    #[test]
    fn extensions_auth_surface() {
        for path in [
            "src/jwt.rs",
            "app/password_reset.py",
            "etc/passwd",
            "internal/oauth/client.go",
            "middleware/csrf.py",
            "certs/server.pem",
            "src/sso/mod.rs",
        ] {
            assert_single(path, Surface::Auth, 1.0, true);
        }
    }

    #[test]
    fn extensions_ui_and_docs_surfaces() {
        for path in [
            "src/App.jsx",
            "src/App.vue",
            "src/routes/+page.svelte",
            "styles/main.scss",
            "a.less",
            "index.html",
        ] {
            assert_single(path, Surface::Ui, 0.4, false);
        }
        for path in [
            "README.rst",
            "guide.adoc",
            "README",
            "crates/cli/README.md",
            "CHANGELOG",
            "doc/intro.txt",
        ] {
            assert_single(path, Surface::Docs, 0.1, false);
        }
    }

    #[test]
    fn extensions_avoid_known_false_positives() {
        for path in [
            "src/oracle.rs",    // `acl` is only a whole path component
            "src/processor.rs", // `sso` likewise
            "src/designing.rs", // `sign in` likewise
            "src/ops/conv.rs",  // `ops/` is not infra
            "src/latest.java",
            "src/contest.rs", // `tests?/` and `test_` are anchored on separators
            "src/notice.rs",  // licence-like names only as whole file names
            "src/history.rs",
            "src/attestation.go",
            "src/modeling.rs", // `models?/` is a whole directory
            "src/keyboard.rs", // `.key$` is an extension
            "data/microbiome.csv",
            "src/metrics/rollup.rs",
        ] {
            assert_eq!(classify_path(path), Surface::None, "{path}");
        }
    }

    #[test]
    fn precedence_takes_the_highest_surface_and_lists_only_its_files() {
        let v = verdict(&["docs/auth.md", "README.md", "src/auth/login.rs", "docs/guide.md"]);
        assert_eq!(v.surface, Surface::Auth);
        assert_eq!(v.score.get(), 1.0);
        assert!(v.needs_review);
        assert_eq!(v.reason, "auth surface (weight 1) in: docs/auth.md, src/auth/login.rs");

        let v = verdict(&["docs/guide.md", "Cargo.toml", "tests/cli.rs"]);
        assert_eq!(v.surface, Surface::Build);
        assert_eq!(v.reason, "build surface (weight 0.6) in: Cargo.toml");
    }

    #[test]
    fn threshold_override() {
        let ui = evaluate_risk_floor(&["apps/web/src/components/Button.tsx"], None, None, 0.3);
        assert_eq!((ui.surface, ui.needs_review), (Surface::Ui, true));
        let data = evaluate_risk_floor(&["packages/db/migrations/0007_add_users.sql"], None, None, 0.95);
        assert_eq!((data.surface, data.needs_review), (Surface::Data, false));
        let auth = evaluate_risk_floor(&["src/auth.ts"], None, None, 1.0);
        assert_eq!((auth.surface, auth.needs_review), (Surface::Auth, true));
        // A NaN threshold is the default: build reviews, ui does not.
        assert!(evaluate_risk_floor(&["Cargo.toml"], None, None, f64::NAN).needs_review);
        assert!(!evaluate_risk_floor(&["src/App.vue"], None, None, f64::NAN).needs_review);
    }

    #[test]
    fn insertions_and_deletions_do_not_change_the_verdict() {
        let files = ["src/auth.ts", "README.md"];
        let base = verdict(&files);
        assert_eq!(
            evaluate_risk_floor(&files, Some(10_000), Some(10_000), DEFAULT_RISK_THRESHOLD),
            base
        );
        assert_eq!(evaluate_risk_floor(&files, Some(0), None, DEFAULT_RISK_THRESHOLD), base);
    }

    #[test]
    fn patterns_compile_and_are_lower_case() {
        // Paths are lower-cased before matching, so an upper-case pattern could never match.
        for &(_, patterns) in UPSTREAM_PATTERNS.iter().chain(EXTENSION_PATTERNS) {
            for pattern in patterns {
                assert_eq!(
                    *pattern,
                    pattern.to_ascii_lowercase(),
                    "pattern {pattern} must be lower case"
                );
            }
        }
        assert_eq!(TABLE.dfas.len(), 7, "one DFA per surface but none");
    }

    /// The embedded DFAs classify exactly as the `regex` crate does with the same patterns.
    fn regex_reference(path: &str) -> Surface {
        static REFERENCE: LazyLock<Vec<(Surface, regex::bytes::RegexSet)>> = LazyLock::new(|| {
            Surface::ALL
                .into_iter()
                .filter_map(|surface| {
                    let patterns = surface_patterns(surface);
                    let set = regex::bytes::RegexSetBuilder::new(&patterns)
                        .unicode(false)
                        .build()
                        .ok()?;
                    (!patterns.is_empty()).then_some((surface, set))
                })
                .collect()
        });
        let lower = normalise(path).to_ascii_lowercase();
        REFERENCE
            .iter()
            .find(|(_, set)| set.is_match(lower.as_bytes()))
            .map_or(Surface::None, |(surface, _)| *surface)
    }

    /// Path pieces taken from the patterns themselves, so generated paths hit pattern edges (anchors, suffixes).
    fn fragments() -> Vec<String> {
        let mut pieces: Vec<String> = UPSTREAM_PATTERNS
            .iter()
            .chain(EXTENSION_PATTERNS)
            .flat_map(|(_, patterns)| patterns.iter())
            .flat_map(|pattern| {
                pattern
                    .replace("\\.", ".")
                    .split(|c: char| "()[]?*+^$|\\".contains(c))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|piece| !piece.is_empty())
            .collect();
        pieces.extend(
            [
                "src", "lib", "x", "Main", "AUTH", "é", ".", "/", "_", "-", "2fa", "id_rsa",
            ]
            .map(String::from),
        );
        pieces.sort();
        pieces.dedup();
        pieces
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn dfa_agrees_with_the_regex_crate(parts in proptest::collection::vec(proptest::sample::select(fragments()), 1..6),
                                           seps in proptest::collection::vec(proptest::sample::select(vec!["/", ".", "_", "-", ""]), 6)) {
            let path: String = parts.iter().zip(&seps).flat_map(|(part, sep)| [part.as_str(), *sep]).collect();
            prop_assert_eq!(classify_path(&path), regex_reference(&path), "{}", path);
        }
    }

    #[test]
    fn case_insensitive() {
        assert_single("SRC/AUTH/Login.TS", Surface::Auth, 1.0, true);
        assert_single("CARGO.TOML", Surface::Build, 0.6, true);
        assert_single("Docs/Guide.MD", Surface::Docs, 0.1, false);
    }

    #[test]
    fn reason_truncates_after_ten_files() {
        let files: Vec<String> = (0..13).map(|i| format!("src/auth/f{i:02}.rs")).collect();
        let v = evaluate_risk_floor(&files, None, None, DEFAULT_RISK_THRESHOLD);
        assert_eq!(
            v.reason,
            "auth surface (weight 1) in: src/auth/f00.rs, src/auth/f01.rs, src/auth/f02.rs, src/auth/f03.rs, \
             src/auth/f04.rs, src/auth/f05.rs, src/auth/f06.rs, src/auth/f07.rs, src/auth/f08.rs, src/auth/f09.rs \
             (+3 more)"
        );
        let ten: Vec<String> = files[..10].to_vec();
        assert!(!evaluate_risk_floor(&ten, None, None, 0.5).reason.contains("more"));
    }

    #[test]
    fn backslash_paths_are_normalised() {
        assert_single(r"apps\api\src\auth\session.guard.ts", Surface::Auth, 1.0, true);
        assert_single(r"crates\cli\tests\cli.rs", Surface::Test, 0.2, false);
        let v = verdict(&[
            r"packages\db\migrations\0007_add_users.sql",
            "packages/db/migrations/0007_add_users.sql",
        ]);
        assert_eq!(
            v.reason,
            "data surface (weight 0.9) in: packages/db/migrations/0007_add_users.sql"
        );
        assert_eq!(
            verdict(&["./src/auth.ts", "src/auth.ts"]).reason,
            "auth surface (weight 1) in: src/auth.ts"
        );
    }

    #[test]
    fn reason_exact_for_two_files() {
        let v = verdict(&["src/session.rs", "README.md", "apps/api/src/auth/session.guard.ts"]);
        assert_eq!(
            v,
            RiskVerdict {
                needs_review: true,
                score: UnitInterval::new(1.0).unwrap(),
                surface: Surface::Auth,
                reason: "auth surface (weight 1) in: apps/api/src/auth/session.guard.ts, src/session.rs".into(),
            }
        );
    }

    const SAMPLE_PATHS: &[&str] = &[
        "apps/api/src/auth/session.guard.ts",
        "packages/db/migrations/0007_add_users.sql",
        ".woodpecker/deploy.yml",
        "packages/types/tsconfig.json",
        "apps/web/src/components/Button.tsx",
        "docs/guide.md",
        "src/foo.spec.ts",
        "tests/cli.rs",
        "Cargo.toml",
        "src/lib.rs",
        "src/main.rs",
        r"src\auth.rs",
        "./README.md",
        "",
    ];

    fn path_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(SAMPLE_PATHS).prop_map(str::to_owned),
            r"[a-zA-Z0-9_./\\-]{0,24}",
        ]
    }

    proptest! {
        #[test]
        fn order_and_duplication_never_change_the_verdict(
            (paths, shuffled, duplicates) in prop::collection::vec(path_strategy(), 0..16).prop_flat_map(|paths| {
                let len = paths.len();
                (Just(paths.clone()), Just(paths).prop_shuffle(), prop::collection::vec(0..len.max(1), 0..6))
            }),
            threshold in 0.0f64..=1.0,
        ) {
            let mut permuted = shuffled.clone();
            if !paths.is_empty() {
                permuted.extend(duplicates.iter().map(|&i| paths[i].clone()));
            }
            let original = evaluate_risk_floor(&paths, None, None, threshold);
            let reordered = evaluate_risk_floor(&permuted, Some(1), Some(2), threshold);
            prop_assert_eq!(&original, &reordered);
            // The verdict's surface is the highest per-file surface.
            let highest = paths.iter().filter(|p| !normalise(p).trim().is_empty()).map(|p| classify_path(p)).max();
            prop_assert_eq!(original.surface, highest.unwrap_or(Surface::None));
        }
    }
}
