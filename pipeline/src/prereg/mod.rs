//! Pre-registrations: the hypothesis, thresholds and kill rule of each experiment, fixed before the data is seen.
//!
//! The defaults are the files in `experiments/`, embedded at build time; `--prereg FILE` replaces them. Either
//! way the report carries the sha256 of the exact bytes used, so nobody can move the goalposts silently.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// `experiments/p1.toml` as shipped.
pub const P1_DEFAULT: &str = include_str!("../../../experiments/p1.toml");

/// `experiments/p2.toml` as shipped.
pub const P2_DEFAULT: &str = include_str!("../../../experiments/p2.toml");

/// `experiments/corpus.toml` as shipped.
pub const CORPUS_DEFAULT: &str = include_str!("../../../experiments/corpus.toml");

/// `experiments/p3.toml` as shipped.
pub const P3_DEFAULT: &str = include_str!("../../../experiments/p3.toml");

pub mod corpus;
pub mod p2;
pub mod p2_audit;
pub mod p3;

pub use corpus::CorpusSpec;
pub use p3::{P3Kill, P3Signals, P3Spec};

pub use p2::{P2Citation, P2Classify, P2FixAfterChange, P2FixesTrailer, P2Kill, P2Link, P2Revert, P2Sample, P2Spec};

/// The verdict every experiment decides under its pre-registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum VerdictKind {
    Kill,
    Pass,
    Inconclusive,
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VerdictKind::Kill => "KILL",
            VerdictKind::Pass => "PASS",
            VerdictKind::Inconclusive => "INCONCLUSIVE",
        })
    }
}

/// How a report names the pre-registration it was decided under.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PreregRef {
    /// The file given with `--prereg`, or `experiments/<name>.toml (embedded)`.
    pub path: String,
    pub sha256: String,
}

/// A pre-registration document and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Prereg<T> {
    pub spec: T,
    /// `None` for the embedded default.
    pub path: Option<PathBuf>,
    /// How reports name it: the path given, or `experiments/<name>.toml (embedded)`.
    pub source: String,
    /// Lower-case hex sha256 of the bytes the spec was parsed from.
    pub sha256: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PreregError {
    #[error("{path}: cannot read the pre-registration: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}: {message}")]
    Invalid { path: String, line: usize, message: String },
}

/// The P1 calibration pre-registration (`experiments/p1.toml`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P1Spec {
    pub experiment: String,
    pub title: String,
    pub hypothesis: String,
    /// Rows with `confidence >= high` form the self-rated-high subset.
    pub high: f64,
    pub alpha: f64,
    pub kill: P1Kill,
    pub power: P1Power,
    pub bootstrap: Bootstrap,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P1Kill {
    /// The rule as the reports print it, verbatim.
    pub text: String,
    pub auc_at_most: f64,
    pub lift_pp_at_most: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P1Power {
    pub target_auc: f64,
    pub power: f64,
    pub min_n: u64,
    pub assumed_correct_rate: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bootstrap {
    pub replicates: u32,
    pub seed: u64,
}

impl Prereg<P1Spec> {
    /// The embedded default, or the file at `path`.
    pub fn p1(path: Option<&Path>) -> Result<Self, PreregError> {
        load(path, P1_DEFAULT, "experiments/p1.toml (embedded)", validate_p1)
    }
}

fn load<T: for<'de> Deserialize<'de>>(
    path: Option<&Path>,
    default: &str,
    default_name: &str,
    validate: fn(&T) -> Result<(), String>,
) -> Result<Prereg<T>, PreregError> {
    let (text, name) = match path {
        None => (default.to_string(), default_name.to_string()),
        Some(path) => {
            let text = crate::scan::input::read_text(path).map_err(|source| PreregError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            (text, path.display().to_string())
        }
    };
    let spec: T = toml::from_str(&text).map_err(|error| PreregError::Invalid {
        path: name.clone(),
        line: error.span().map_or(1, |span| line_of(&text, span.start)),
        message: error.message().to_string(),
    })?;
    validate(&spec).map_err(|message| PreregError::Invalid {
        path: name.clone(),
        line: 1,
        message,
    })?;
    Ok(Prereg {
        spec,
        path: path.map(Path::to_path_buf),
        sha256: sha256_hex(text.as_bytes()),
        source: name,
    })
}

pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    // The digest's own hex formatting: one buffer, not a string per byte (P2 keys every failure's sample order by one).
    format!("{:x}", Sha256::digest(bytes))
}

fn validate_p1(spec: &P1Spec) -> Result<(), String> {
    let unit = |name: &str, value: f64, open: bool| {
        let ok = if open {
            value > 0.0 && value < 1.0
        } else {
            (0.0..=1.0).contains(&value)
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{name} = {value} is outside {}",
                if open { "(0, 1)" } else { "[0, 1]" }
            ))
        }
    };
    if spec.experiment != "p1" {
        return Err(format!("experiment = {:?}, expected \"p1\"", spec.experiment));
    }
    unit("high", spec.high, false)?;
    unit("alpha", spec.alpha, true)?;
    unit("kill.auc_at_most", spec.kill.auc_at_most, true)?;
    unit("power.target_auc", spec.power.target_auc, true)?;
    unit("power.power", spec.power.power, true)?;
    unit("power.assumed_correct_rate", spec.power.assumed_correct_rate, true)?;
    if spec.power.target_auc <= spec.kill.auc_at_most {
        return Err(format!(
            "power.target_auc = {} must exceed kill.auc_at_most = {}",
            spec.power.target_auc, spec.kill.auc_at_most
        ));
    }
    if !(-100.0..=100.0).contains(&spec.kill.lift_pp_at_most) {
        return Err(format!(
            "kill.lift_pp_at_most = {} is outside [-100, 100]",
            spec.kill.lift_pp_at_most
        ));
    }
    Ok(())
}

impl Prereg<P3Spec> {
    /// The embedded default, or the file at `path`.
    pub fn p3(path: Option<&Path>) -> Result<Self, PreregError> {
        load(path, P3_DEFAULT, "experiments/p3.toml (embedded)", validate_p3)
    }
}

/// The sample sizes per stratum an audit sheet may have, from `[audit] per_stratum` or `--per-stratum`.
pub const PER_STRATUM: std::ops::RangeInclusive<usize> = 1..=1000;

/// `--per-stratum N` of `phase0 p2 audit` and `phase0 p3 audit`: `None` when it is in [`PER_STRATUM`] (or not
/// given), otherwise the message to refuse it with.
pub fn per_stratum_refused(n: Option<usize>) -> Option<String> {
    n.filter(|n| !PER_STRATUM.contains(n)).map(|n| {
        format!(
            "--per-stratum {n} is outside [{}, {}]",
            PER_STRATUM.start(),
            PER_STRATUM.end()
        )
    })
}

/// An `[audit]` table's bounds (P2's and P3's): a sample of 1 to 1000 per stratum, 100 to 100,000 draws.
fn validate_audit(per_stratum: usize, replicates: u32) -> Result<(), String> {
    if !PER_STRATUM.contains(&per_stratum) {
        return Err(format!(
            "audit.per_stratum = {per_stratum} is outside [{}, {}]",
            PER_STRATUM.start(),
            PER_STRATUM.end()
        ));
    }
    if !(100..=100_000).contains(&replicates) {
        return Err(format!("audit.replicates = {replicates} is outside [100, 100000]"));
    }
    Ok(())
}

fn validate_p3(spec: &P3Spec) -> Result<(), String> {
    if spec.experiment != "p3" {
        return Err(format!("experiment = {:?}, expected \"p3\"", spec.experiment));
    }
    validate_audit(spec.audit.per_stratum, spec.audit.replicates)?;
    for (name, value) in [
        ("alpha", spec.alpha),
        ("kill.base_rate_below", spec.kill.base_rate_below),
    ] {
        if !(value > 0.0 && value < 1.0) {
            return Err(format!("{name} = {value} is outside (0, 1)"));
        }
    }
    if spec.kill.text.trim().is_empty() {
        return Err("kill.text is empty".into());
    }
    if spec.window_days == 0 || spec.kill.min_eligible == 0 {
        return Err("window_days and kill.min_eligible must be at least 1".into());
    }
    if spec.history.as_ref().and_then(|h| h.stale_resets_at_least) == Some(0) {
        return Err("history.stale_resets_at_least = 0 would set every reopen aside; at least 1".into());
    }
    if let Some(least @ (0 | 1)) = spec.history.as_ref().and_then(|h| h.flapping_reopens_at_least) {
        return Err(format!(
            "history.flapping_reopens_at_least = {least} would set every reopen aside; at least 2"
        ));
    }
    if spec.history.as_ref().and_then(|h| h.reuse_created_apart_seconds) == Some(0) {
        return Err(
            "history.reuse_created_apart_seconds = 0 would call equal creation times different; at least 1".into(),
        );
    }
    let known: Vec<&str> = p3::SIGNALS.iter().map(|(id, _)| *id).collect();
    if let Some(unknown) = spec.signals.major.iter().find(|id| !known.contains(&id.as_str())) {
        return Err(format!(
            "signals.major: unknown signal {unknown:?} (one of {})",
            known.join(", ")
        ));
    }
    let links = [
        "relates",
        "blocks",
        "duplicates",
        "clones",
        "causes",
        "regression",
        "follow-up",
        "parent",
        "other",
    ];
    if let Some(unknown) = spec
        .signals
        .follow_up_links
        .iter()
        .find(|k| !links.contains(&k.as_str()))
    {
        return Err(format!(
            "signals.follow_up_links: unknown link kind {unknown:?} (one of {})",
            links.join(", ")
        ));
    }
    Ok(())
}

impl Prereg<CorpusSpec> {
    /// The embedded default, or the file at `path`.
    pub fn corpus(path: Option<&Path>) -> Result<Self, PreregError> {
        load(
            path,
            CORPUS_DEFAULT,
            "experiments/corpus.toml (embedded)",
            validate_corpus,
        )
    }
}

fn validate_corpus(spec: &CorpusSpec) -> Result<(), String> {
    if spec.experiment != "corpus" {
        return Err(format!("experiment = {:?}, expected \"corpus\"", spec.experiment));
    }
    if spec.window_days == 0 {
        return Err("window_days must be at least 1".into());
    }
    // Longer slacks than a year would attribute unrelated work; far beyond any session.
    for (name, hours) in [
        ("slack_before_hours", spec.slack_before_hours),
        ("slack_after_hours", spec.slack_after_hours),
    ] {
        if hours > 8_760 {
            return Err(format!("{name} = {hours} exceeds 8760 (a year)"));
        }
    }
    Ok(())
}

impl Prereg<P2Spec> {
    /// The embedded default, or the file at `path`.
    pub fn p2(path: Option<&Path>) -> Result<Self, PreregError> {
        load(path, P2_DEFAULT, "experiments/p2.toml (embedded)", validate_p2)
    }
}

fn validate_p2(spec: &P2Spec) -> Result<(), String> {
    if spec.experiment != "p2" {
        return Err(format!("experiment = {:?}, expected \"p2\"", spec.experiment));
    }
    // Version 3 adds one rule ([link] same_branch_hours) to version 2, version 4 one ([citation] pull_requests) to
    // version 3; earlier versions' files still run as written.
    if !(2..=4).contains(&spec.version) {
        return Err(format!(
            "version = {}: this phase0 runs versions 2 to 4 of the P2 instrument (line-evidence linkage)",
            spec.version
        ));
    }
    if spec.version == 2 && spec.link.same_branch_hours > 0 {
        return Err("version = 2 with [link] same_branch_hours: that rule is version 3's".to_string());
    }
    if spec.version < 4 && spec.citation.pull_requests {
        return Err(format!(
            "version = {} with [citation] pull_requests: that rule is version 4's",
            spec.version
        ));
    }
    let open_unit = |name: &str, value: f64| {
        if value > 0.0 && value < 1.0 {
            Ok(())
        } else {
            Err(format!("{name} = {value} is outside (0, 1)"))
        }
    };
    open_unit("alpha", spec.alpha)?;
    open_unit(
        "kill.self_reflection_share_below",
        spec.kill.self_reflection_share_below,
    )?;
    if !(0.0..=1.0).contains(&spec.classify.risk_threshold) {
        return Err(format!(
            "classify.risk_threshold = {} is outside [0, 1]",
            spec.classify.risk_threshold
        ));
    }
    if spec.kill.text.trim().is_empty() {
        return Err("kill.text is empty".into());
    }
    let at_least = |name: &str, value: u64, min: u64| {
        if value >= min {
            Ok(())
        } else {
            Err(format!("{name} = {value} must be at least {min}"))
        }
    };
    at_least("kill.min_classified", spec.kill.min_classified, 1)?;
    at_least(
        "fix_after_change.window_days",
        u64::from(spec.fix_after_change.window_days),
        1,
    )?;
    at_least("link.mass_change_files", spec.link.mass_change_files as u64, 1)?;
    at_least(
        "fix_after_change.max_candidates",
        spec.fix_after_change.max_candidates as u64,
        1,
    )?;
    if !(4..=40).contains(&spec.min_sha_len) {
        return Err(format!("min_sha_len = {} is outside [4, 40]", spec.min_sha_len));
    }
    if spec.sample.per_bucket > 1000 {
        return Err(format!("sample.per_bucket = {} exceeds 1000", spec.sample.per_bucket));
    }
    validate_audit(spec.audit.per_stratum, spec.audit.replicates)?;
    // Every pattern must be able to match something, and only what it says: no empty entries (an empty
    // prefix would match every subject), keywords with at least one word, types that are one word.
    let lists: [(&str, &[String], bool); 11] = [
        ("revert.words", &spec.revert.words, false),
        ("revert.reapply_words", &spec.revert.reapply_words, false),
        ("revert.types", &spec.revert.types, true),
        ("revert.sha_markers", &spec.revert.sha_markers, false),
        ("revert.boilerplate_prefixes", &spec.revert.boilerplate_prefixes, false),
        ("fixes_trailer.tokens", &spec.fixes_trailer.tokens, true),
        ("fix_after_change.types", &spec.fix_after_change.types, true),
        ("fix_after_change.keywords", &spec.fix_after_change.keywords, false),
        (
            "fix_after_change.ignore_paths",
            &spec.fix_after_change.ignore_paths,
            false,
        ),
        ("classify.ci_keywords", &spec.classify.ci_keywords, false),
        ("classify.review_keywords", &spec.classify.review_keywords, false),
    ];
    let paths: [(&str, &[String], bool); 5] = [
        ("classify.ci_paths", &spec.classify.ci_paths, false),
        (
            "fix_after_change.dependency_manifests",
            &spec.fix_after_change.dependency_manifests,
            false,
        ),
        ("citation.culprit_phrases", &spec.citation.culprit_phrases, false),
        ("link.mass_change_types", &spec.link.mass_change_types, true),
        ("link.mass_change_keywords", &spec.link.mass_change_keywords, false),
    ];
    for (name, list, one_word) in lists.into_iter().chain(paths) {
        for (index, entry) in list.iter().enumerate() {
            if !entry.chars().any(char::is_alphanumeric) {
                return Err(format!("{name}[{index}] = {entry:?} has no letter or digit"));
            }
            if one_word && !entry.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') {
                return Err(format!("{name}[{index}] = {entry:?} must be one word"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_corpus_prereg_and_bad_ones() {
        let prereg = Prereg::corpus(None).unwrap();
        assert_eq!(
            (
                prereg.spec.window_days,
                prereg.spec.slack_before_hours,
                prereg.spec.slack_after_hours
            ),
            (30, 6, 24)
        );
        assert_eq!(prereg.source, "experiments/corpus.toml (embedded)");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, CORPUS_DEFAULT.replace("window_days = 30", "window_days = 0")).unwrap();
        let error = Prereg::corpus(Some(&path)).unwrap_err().to_string();
        assert_eq!(error, format!("{}:1: window_days must be at least 1", path.display()));
        std::fs::write(&path, "experiment = \"corpus\"\nwindow_days = \"x\"\n").unwrap();
        let error = Prereg::corpus(Some(&path)).unwrap_err().to_string();
        assert!(error.starts_with(&format!("{}:2: ", path.display())), "{error}");
    }

    #[test]
    fn the_embedded_p2_prereg_parses_with_the_upstream_rule() {
        let prereg = Prereg::p2(None).unwrap();
        let spec = &prereg.spec;
        assert_eq!(
            spec.kill.text,
            "only-self-reflection share < 5% of classified failures ⇒ do NOT build §7–§8"
        );
        assert_eq!(
            (
                spec.kill.self_reflection_share_below,
                spec.kill.min_classified,
                spec.fix_after_change.window_days,
                spec.min_sha_len
            ),
            (0.05, 50, 7, 7)
        );
        assert_eq!((spec.version, spec.link.same_branch_hours), (4, 24));
        assert!(spec.citation.pull_requests);
        assert_eq!(spec.link.mass_change_files, 100);
        assert!(spec.classify.ci_paths.iter().any(|p| p == "*_test.go"));
        assert_eq!(prereg.sha256, sha256_hex(P2_DEFAULT.as_bytes()));
        assert_eq!(prereg.path, None);
        assert_eq!(prereg.source, "experiments/p2.toml (embedded)");
    }

    #[test]
    fn bad_p2_files_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p2.toml");
        let line_of_key = |key: &str| P2_DEFAULT.lines().position(|l| l.starts_with(key)).unwrap() + 1;

        std::fs::write(&path, P2_DEFAULT.replace("window_days = 7", "window_days = \"a week\"")).unwrap();
        let error = Prereg::p2(Some(&path)).unwrap_err().to_string();
        let line = line_of_key("window_days = ");
        assert!(error.starts_with(&format!("{}:{line}: ", path.display())), "{error}");

        std::fs::write(&path, P2_DEFAULT.replace("[sample]\n", "[sample]\nsurprise = 1\n")).unwrap();
        let error = Prereg::p2(Some(&path)).unwrap_err().to_string();
        let line = line_of_key("[sample]") + 1;
        assert!(error.starts_with(&format!("{}:{line}: ", path.display())), "{error}");
        assert!(error.contains("surprise"), "{error}");

        std::fs::write(&path, P2_DEFAULT.replace("min_sha_len = 7", "min_sha_len = 2")).unwrap();
        assert_eq!(
            Prereg::p2(Some(&path)).unwrap_err().to_string(),
            format!("{}:1: min_sha_len = 2 is outside [4, 40]", path.display())
        );

        std::fs::write(&path, P2_DEFAULT.replace("words = [\"Revert\"]", "words = [\"\"]")).unwrap();
        assert!(
            Prereg::p2(Some(&path))
                .unwrap_err()
                .to_string()
                .ends_with("revert.words[0] = \"\" has no letter or digit")
        );

        // Earlier versions' files run as written (version 2: no same-branch rule; version 3: no pull request
        // citations); a later version's rule in an earlier version's file is refused.
        let v3 = P2_DEFAULT
            .replace("version = 4", "version = 3")
            .replace("pull_requests = true", "");
        std::fs::write(
            &path,
            v3.replace("version = 3", "version = 2")
                .replace("same_branch_hours = 24", ""),
        )
        .unwrap();
        assert_eq!(Prereg::p2(Some(&path)).unwrap().spec.link.same_branch_hours, 0);
        std::fs::write(&path, v3.replace("version = 3", "version = 2")).unwrap();
        assert_eq!(
            Prereg::p2(Some(&path)).unwrap_err().to_string(),
            format!(
                "{}:1: version = 2 with [link] same_branch_hours: that rule is version 3's",
                path.display()
            )
        );
        std::fs::write(&path, &v3).unwrap();
        assert!(!Prereg::p2(Some(&path)).unwrap().spec.citation.pull_requests);
        std::fs::write(&path, P2_DEFAULT.replace("version = 4", "version = 3")).unwrap();
        assert_eq!(
            Prereg::p2(Some(&path)).unwrap_err().to_string(),
            format!(
                "{}:1: version = 3 with [citation] pull_requests: that rule is version 4's",
                path.display()
            )
        );
        std::fs::write(&path, P2_DEFAULT.replace("version = 4", "version = 5")).unwrap();
        assert!(
            Prereg::p2(Some(&path)).unwrap_err().to_string().ends_with(
                "version = 5: this phase0 runs versions 2 to 4 of the P2 instrument (line-evidence linkage)"
            )
        );

        std::fs::write(&path, P2_DEFAULT.replace("replicates = 2000", "replicates = 10")).unwrap();
        assert_eq!(
            Prereg::p2(Some(&path)).unwrap_err().to_string(),
            format!("{}:1: audit.replicates = 10 is outside [100, 100000]", path.display())
        );
        // Without an [audit] table (the first version of the file): its defaults.
        let without = &P2_DEFAULT[..P2_DEFAULT.find("\n[audit]").unwrap()];
        std::fs::write(&path, without).unwrap();
        assert_eq!(
            Prereg::p2(Some(&path)).unwrap().spec.audit,
            p2_audit::AuditSpec::default()
        );

        std::fs::write(&path, P2_DEFAULT.replace("experiment = \"p2\"", "experiment = \"p1\"")).unwrap();
        assert!(
            Prereg::p2(Some(&path))
                .unwrap_err()
                .to_string()
                .ends_with("expected \"p2\"")
        );
    }

    #[test]
    fn the_embedded_p1_prereg_parses_with_the_upstream_rule() {
        let prereg = Prereg::p1(None).unwrap();
        assert_eq!(
            prereg.spec.kill.text,
            "AUC <= 0.60 OR high-subset lift <= +5pp ⇒ do NOT build §7–§8"
        );
        assert_eq!(
            (
                prereg.spec.high,
                prereg.spec.kill.auc_at_most,
                prereg.spec.kill.lift_pp_at_most
            ),
            (0.8, 0.6, 5.0)
        );
        assert_eq!(prereg.sha256, sha256_hex(P1_DEFAULT.as_bytes()));
        assert_eq!(prereg.sha256.len(), 64);
        assert_eq!(prereg.path, None);
        assert_eq!(prereg.source, "experiments/p1.toml (embedded)");
    }

    #[test]
    fn sha256_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn bad_files_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p1.toml");
        std::fs::write(&path, P1_DEFAULT.replace("high = 0.8", "high = \"lots\"")).unwrap();
        let error = Prereg::p1(Some(&path)).unwrap_err().to_string();
        let line = P1_DEFAULT.lines().position(|l| l.starts_with("high = ")).unwrap() + 1;
        assert!(error.starts_with(&format!("{}:{line}: ", path.display())), "{error}");

        std::fs::write(&path, P1_DEFAULT.replace("target_auc = 0.70", "target_auc = 0.55")).unwrap();
        let error = Prereg::p1(Some(&path)).unwrap_err().to_string();
        assert!(
            error.ends_with("power.target_auc = 0.55 must exceed kill.auc_at_most = 0.6"),
            "{error}"
        );

        std::fs::write(&path, format!("{P1_DEFAULT}\nsurprise = 1\n")).unwrap();
        assert!(Prereg::p1(Some(&path)).unwrap_err().to_string().contains("surprise"));

        let missing = dir.path().join("missing.toml");
        assert!(
            Prereg::p1(Some(&missing))
                .unwrap_err()
                .to_string()
                .starts_with(&format!("{}: cannot read", missing.display()))
        );
    }

    #[test]
    fn the_embedded_p3_prereg_parses_and_bad_files_are_named() {
        let prereg = Prereg::p3(None).unwrap();
        assert_eq!(prereg.spec.window_days, 30);
        assert_eq!(
            prereg.spec.kill.text,
            "detectable-outcome base rate < 20% ⇒ do NOT build §7 calibration loop (capture caveat-notes only)"
        );
        assert_eq!(prereg.source, "experiments/p3.toml (embedded)");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p3.toml");
        // The error for the embedded file with `from` replaced by `to`.
        let error_with = |from: &str, to: &str| {
            assert!(P3_DEFAULT.contains(from), "{from}");
            std::fs::write(&path, P3_DEFAULT.replace(from, to)).unwrap();
            Prereg::p3(Some(&path)).unwrap_err().to_string()
        };
        let error = error_with("major = [\"wrong.reopened\"", "major = [\"wrong.vibes\"");
        assert!(
            error.contains("signals.major: unknown signal \"wrong.vibes\""),
            "{error}"
        );
        assert!(error.starts_with(&path.display().to_string()), "{error}");
        // The audit's draws and sample, bounded as P2's; a table without a key takes P3's default for it.
        assert_eq!(
            error_with("replicates = 2000", "replicates = 0"),
            format!("{}:1: audit.replicates = 0 is outside [100, 100000]", path.display())
        );
        assert_eq!(
            error_with("per_stratum = 20", "per_stratum = 0"),
            format!("{}:1: audit.per_stratum = 0 is outside [1, 1000]", path.display())
        );
        std::fs::write(&path, P3_DEFAULT.replace("per_stratum = 20\n", "")).unwrap();
        assert_eq!(Prereg::p3(Some(&path)).unwrap().spec.audit, p3::P3AuditSpec::default());
        assert_eq!(prereg.spec.audit, p3::P3AuditSpec::default());
        assert_eq!(prereg.spec.version, 11);
        let history = prereg.spec.history.as_ref().unwrap();
        assert_eq!(
            (
                history.identity_at_signal,
                history.stale_resets_at_least,
                history.commit_quiet_from_author,
                history.landed_late_hours,
                history.follow_ups_first_seen,
                history.follow_ups_while_reopened,
                history.while_reopened_needs_kept_reopen,
                history.follow_ups_set_aside,
                history.claimed_within_seconds_of_close,
                history.flapping_reopens_at_least,
                history.reuse_created_apart_seconds
            ),
            (
                true,
                Some(1),
                true,
                Some(24),
                true,
                true,
                true,
                true,
                Some(60),
                Some(3),
                Some(1)
            )
        );
        let error = error_with("stale_resets_at_least = 1", "stale_resets_at_least = 0");
        assert!(error.contains("history.stale_resets_at_least = 0"), "{error}");
        let error = error_with("flapping_reopens_at_least = 3", "flapping_reopens_at_least = 1");
        assert!(
            error.contains("history.flapping_reopens_at_least = 1 would set every reopen aside"),
            "{error}"
        );
        let error = error_with("reuse_created_apart_seconds = 1", "reuse_created_apart_seconds = 0");
        assert!(
            error.contains("history.reuse_created_apart_seconds = 0 would call equal creation times different"),
            "{error}"
        );
    }
}
