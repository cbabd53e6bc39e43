//! The P1 corpus from captured sidecars and what git later shows: every `reflection.v1` sidecar whose work reached
//! a commit becomes a labeled row `{confidence, correct}` once its outcome window has passed.
//!
//! [`join`] is a pure function of the sidecars, the walked commits (with the paths each changed), P2's failures
//! (detected by [`crate::experiments::p2::analyze`], not re-implemented here), the as-of time and the
//! pre-registration (`experiments/corpus.toml`, see [`CorpusSpec`]): no I/O, no clock.
//!
//! # Which commits carry a sidecar's work (the mapping rule)
//!
//! A *session* is all sidecars with the same `repo` and `session_id`. A sidecar *claims* every non-merge commit of
//! the walked history (reachable from `--rev`, committed at or before the as-of time) that
//!
//! 1. was committed within `[first sidecar of its session − slack_before_hours, this sidecar + slack_after_hours]`,
//!    and
//! 2. changed at least one path the sidecar lists in `files_changed`.
//!
//! A commit claimed by several sidecars belongs to exactly one, so that one commit labels one row: the first
//! claiming sidecar written at or after the commit (the turn in which the commit was made ends with that Stop),
//! else, when the commit came after every claiming sidecar (committed after the turn, by the agent's next turn or
//! a human), the last claiming sidecar before it. Ties order by sidecar time, session id, file name.
//!
//! Limits, said plainly:
//! - `reflection.v1` records no base SHA and no commit SHAs (its schema is fixed), so the link is by time and path
//!   only. Two concurrent sessions (or a human) changing the same file within each other's span can have a commit
//!   attributed to the wrong one; a commit made outside the slack (work committed days later) is not found, and
//!   its sidecar counts as uncommitted.
//! - A squash or rebase rewrites the commits: the rule sees the commits that are reachable, with their committer
//!   times (a rebase moves them, possibly out of the span).
//! - A sidecar listing no changed file claims nothing (counted as `no_files`, e.g. a turn that only answered).
//! - One commit labels one row: the other sidecars that claimed it (earlier turns of the same session listing the
//!   same uncommitted files, or another session) are counted as `superseded`, not emitted.
//!
//! # Labels
//!
//! - `correct = false` when one of the row's commits is the failing change of a P2 failure whose remedy was
//!   committed at most `window_days` after it (and at or before the as-of time). `label_reason` is P2's kind id
//!   (`revert`, `fixes-trailer`, `fix-after-change`), `failure_sha` the failing commit, `remedy_sha` the remedy;
//!   with several, the earliest remedy wins (then kind order, then SHA). A remedy that is itself one of the row's
//!   commits (the session fixed or reverted its own work before its turn ended) does not count.
//! - `correct = true`, `label_reason = "window-elapsed"`, when no such failure exists and at least `window_days`
//!   have passed between the row's newest commit and the as-of time.
//! - Otherwise the row is *censored*: counted, not emitted. A sidecar written after the as-of time is censored too.
//!
//! Rows with a null confidence (a degraded sidecar without self-report) are emitted with `"confidence": null`:
//! P1 leaves them out of every confidence metric and keeps them for the risk-floor evaluation.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;
use serde::Serialize;

use super::p2::FailureKind;
pub use crate::prereg::corpus::CorpusSpec;

/// One valid sidecar, as the join needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sidecar {
    /// The file name (a tie-breaker of the order, and where a row came from).
    pub file: String,
    pub session_id: String,
    pub repo: String,
    pub task_ref: String,
    pub agent: String,
    pub timestamp: jiff::Timestamp,
    pub confidence: Option<f64>,
    pub risk_score: f64,
    pub needs_review: bool,
    pub surface: capture::Surface,
    pub files_changed: Vec<String>,
}

/// One walked commit with the paths it changed against its first parent.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// Full hex id.
    pub id: String,
    /// Committer time, Unix seconds.
    pub time: i64,
    pub merge: bool,
    pub paths: Vec<String>,
}

/// A P2 failure whose failing change is a walked commit.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureLink {
    pub failing: String,
    pub remedy: String,
    /// The remedy's committer time, Unix seconds.
    pub remedy_time: i64,
    pub kind: FailureKind,
}

/// Why a row has its label.
pub const WINDOW_ELAPSED: &str = "window-elapsed";

/// One line of `corpus.jsonl` (field order is the output order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub confidence: Option<f64>,
    pub correct: bool,
    pub session_id: String,
    pub task_ref: String,
    pub agent: String,
    pub risk_score: f64,
    pub needs_review: bool,
    pub surface: capture::Surface,
    pub label_reason: &'static str,
    /// The failing change (one of `commits`) when `correct` is false.
    pub failure_sha: Option<String>,
    pub remedy_sha: Option<String>,
    /// The commits attributed to this sidecar, oldest first.
    pub commits: Vec<String>,
    pub sidecar: String,
    pub timestamp: String,
}

/// How every sidecar was accounted for: `sidecars == rows + censored + uncommitted + superseded + no_files`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub sidecars: u64,
    pub rows: u64,
    pub correct: u64,
    pub wrong: u64,
    /// Rows whose window has not elapsed (or written after the as-of time): counted, not emitted.
    pub censored: u64,
    /// Sidecars listing changed files of which no commit was found.
    pub uncommitted: u64,
    /// Sidecars whose commits all belong to another sidecar (one commit labels one row), typically an earlier
    /// turn of the same session that listed the same files.
    pub superseded: u64,
    /// Sidecars listing no changed file.
    pub no_files: u64,
    /// Emitted rows with a null confidence.
    pub null_confidence: u64,
    /// Distinct sessions among the sidecars.
    pub sessions: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    /// Sorted by sidecar time, then session id, then file name.
    pub rows: Vec<Row>,
    pub counts: Counts,
}

/// The earliest sidecar time (Unix seconds) of each session, keyed by (`repo`, `session_id`).
pub fn session_starts<'a>(sidecars: impl IntoIterator<Item = &'a Sidecar>) -> HashMap<(&'a str, &'a str), i64> {
    let mut starts: HashMap<(&str, &str), i64> = HashMap::new();
    for sidecar in sidecars {
        let time = sidecar.timestamp.as_second();
        starts
            .entry((&sidecar.repo, &sidecar.session_id))
            .and_modify(|start| *start = (*start).min(time))
            .or_insert(time);
    }
    starts
}

/// The commit times `sidecar` may claim: from its session's start less `slack_before_hours` to its own time plus
/// `slack_after_hours`, both ends included. `starts` is [`session_starts`] of every sidecar.
pub fn claim_window(sidecar: &Sidecar, starts: &HashMap<(&str, &str), i64>, spec: &CorpusSpec) -> (i64, i64) {
    let start = starts[&(sidecar.repo.as_str(), sidecar.session_id.as_str())];
    (
        start - i64::from(spec.slack_before_hours) * 3600,
        sidecar.timestamp.as_second() + i64::from(spec.slack_after_hours) * 3600,
    )
}

/// Labels `sidecars` (see the module documentation). `as_of` is Unix seconds.
pub fn join(
    sidecars: &[Sidecar],
    commits: &[Commit],
    failures: &[FailureLink],
    as_of: i64,
    spec: &CorpusSpec,
) -> Joined {
    let mut order: Vec<usize> = (0..sidecars.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&sidecars[a], &sidecars[b]);
        (x.timestamp, &x.session_id, &x.file).cmp(&(y.timestamp, &y.session_id, &y.file))
    });
    let sidecars: Vec<&Sidecar> = order.iter().map(|&i| &sidecars[i]).collect();

    let session_start = session_starts(sidecars.iter().copied());

    // Path → (commit time, commit index), sorted: each sidecar's candidates are range lookups.
    let mut by_path: HashMap<&str, Vec<(i64, usize)>> = HashMap::new();
    for (index, commit) in commits.iter().enumerate() {
        if commit.merge || commit.time > as_of {
            continue;
        }
        for path in &commit.paths {
            by_path.entry(path).or_default().push((commit.time, index));
        }
    }
    by_path.par_iter_mut().for_each(|(_, list)| list.sort_unstable());

    let claims: Vec<Vec<usize>> = sidecars
        .par_iter()
        .map(|sidecar| {
            let (lo, hi) = claim_window(sidecar, &session_start, spec);
            let mut found = Vec::new();
            for path in &sidecar.files_changed {
                if let Some(list) = by_path.get(path.as_str()) {
                    let from = list.partition_point(|&(time, _)| time < lo);
                    found.extend(
                        list[from..]
                            .iter()
                            .take_while(|&&(time, _)| time <= hi)
                            .map(|&(_, c)| c),
                    );
                }
            }
            found.sort_unstable();
            found.dedup();
            found
        })
        .collect();

    // Each commit goes to one claimant: the first at or after it, else the last before it.
    let mut claimants: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (position, found) in claims.iter().enumerate() {
        for &commit in found {
            claimants.entry(commit).or_default().push(position);
        }
    }
    let mut owned: Vec<Vec<usize>> = vec![Vec::new(); sidecars.len()];
    for (commit, positions) in claimants {
        let time = commits[commit].time;
        let owner = positions
            .iter()
            .copied()
            .find(|&p| sidecars[p].timestamp.as_second() >= time)
            .unwrap_or(positions[positions.len() - 1]);
        owned[owner].push(commit);
    }

    let mut failures_of: HashMap<&str, Vec<&FailureLink>> = HashMap::new();
    for failure in failures {
        failures_of.entry(&failure.failing).or_default().push(failure);
    }
    let window = i64::from(spec.window_days) * 86_400;
    let mut counts = Counts {
        sidecars: sidecars.len() as u64,
        sessions: session_start.len() as u64,
        ..Counts::default()
    };
    let mut rows = Vec::new();
    for (position, sidecar) in sidecars.iter().enumerate() {
        let mut mine: Vec<&Commit> = owned[position].iter().map(|&c| &commits[c]).collect();
        if sidecar.files_changed.is_empty() {
            counts.no_files += 1;
            continue;
        }
        if sidecar.timestamp.as_second() > as_of {
            counts.censored += 1;
            continue;
        }
        if mine.is_empty() {
            if claims[position].is_empty() {
                counts.uncommitted += 1;
            } else {
                counts.superseded += 1;
            }
            continue;
        }
        mine.sort_by(|a, b| (a.time, &a.id).cmp(&(b.time, &b.id)));
        let own = |id: &str| mine.iter().any(|c| c.id == id);
        let failure = mine
            .iter()
            .flat_map(|commit| {
                failures_of
                    .get(commit.id.as_str())
                    .into_iter()
                    .flatten()
                    .filter(move |f| f.remedy_time <= as_of && f.remedy_time - commit.time <= window)
            })
            // A remedy among the row's own commits is the turn fixing its work before it ended: not a failure.
            .filter(|f| !own(&f.remedy))
            .min_by(|a, b| (a.remedy_time, a.kind, &a.remedy).cmp(&(b.remedy_time, b.kind, &b.remedy)));
        let newest = mine.iter().map(|c| c.time).max().unwrap_or(i64::MIN);
        let (correct, label_reason, failure_sha, remedy_sha) = match failure {
            Some(f) => (false, f.kind.id(), Some(f.failing.clone()), Some(f.remedy.clone())),
            None if as_of - newest >= window => (true, WINDOW_ELAPSED, None, None),
            None => {
                counts.censored += 1;
                continue;
            }
        };
        counts.rows += 1;
        if correct {
            counts.correct += 1;
        } else {
            counts.wrong += 1;
        }
        counts.null_confidence += u64::from(sidecar.confidence.is_none());
        rows.push(Row {
            confidence: sidecar.confidence,
            correct,
            session_id: capture::redact(&sidecar.session_id).into_owned(),
            task_ref: capture::redact(&sidecar.task_ref).into_owned(),
            agent: capture::redact(&sidecar.agent).into_owned(),
            risk_score: sidecar.risk_score,
            needs_review: sidecar.needs_review,
            surface: sidecar.surface,
            label_reason,
            failure_sha,
            remedy_sha,
            commits: mine.iter().map(|c| c.id.clone()).collect(),
            sidecar: sidecar.file.clone(),
            timestamp: sidecar.timestamp.to_string(),
        });
    }
    Joined { rows, counts }
}

/// The rows as JSONL, one object per line.
pub fn to_jsonl(rows: &[Row]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows.len() * 400);
    for row in rows {
        // Serialising plain data into a Vec cannot fail.
        serde_json::to_writer(&mut out, row).expect("a row serialises");
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400;
    const HOUR: i64 = 3_600;
    /// 2026-01-01T00:00:00Z
    const T0: i64 = 1_767_225_600;

    fn spec() -> CorpusSpec {
        CorpusSpec {
            experiment: "corpus".into(),
            title: "t".into(),
            window_days: 30,
            slack_before_hours: 6,
            slack_after_hours: 24,
        }
    }

    fn sidecar(file: &str, session: &str, at: i64, confidence: Option<f64>, files: &[&str]) -> Sidecar {
        Sidecar {
            file: file.into(),
            session_id: session.into(),
            repo: "app".into(),
            task_ref: format!("app#{session}"),
            agent: "claude".into(),
            timestamp: jiff::Timestamp::from_second(at).unwrap(),
            confidence,
            risk_score: 0.9,
            needs_review: true,
            surface: capture::Surface::Data,
            files_changed: files.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn commit(id: &str, time: i64, paths: &[&str]) -> Commit {
        Commit {
            id: id.into(),
            time,
            merge: false,
            paths: paths.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn failure(failing: &str, remedy: &str, remedy_time: i64, kind: FailureKind) -> FailureLink {
        FailureLink {
            failing: failing.into(),
            remedy: remedy.into(),
            remedy_time,
            kind,
        }
    }

    /// (sidecar, correct, reason, failing commit, commits).
    type Label<'a> = (&'a str, bool, &'a str, Option<&'a str>, Vec<&'a str>);

    fn labels(joined: &Joined) -> Vec<Label<'_>> {
        joined
            .rows
            .iter()
            .map(|r| {
                (
                    r.sidecar.as_str(),
                    r.correct,
                    r.label_reason,
                    r.failure_sha.as_deref(),
                    r.commits.iter().map(String::as_str).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn labels_reasons_censoring_and_counts() {
        let sidecars = [
            sidecar("a", "s-a", T0, Some(0.9), &["src/a.rs"]),
            sidecar("b", "s-b", T0 + DAY, Some(0.4), &["src/b.rs"]),
            sidecar("c", "s-c", T0 + 2 * DAY, None, &["src/c.rs"]),
            sidecar("d", "s-d", T0 + 3 * DAY, Some(0.7), &["src/d.rs"]),
            // Never committed, no files, still inside the window.
            sidecar("e", "s-e", T0 + 4 * DAY, Some(0.5), &["src/e.rs"]),
            sidecar("f", "s-f", T0 + 4 * DAY, Some(0.5), &[]),
            sidecar("g", "s-g", T0 + 50 * DAY, Some(0.6), &["src/g.rs"]),
        ];
        let commits = [
            commit("ca", T0 + HOUR, &["src/a.rs"]),
            commit("cb", T0 + DAY + HOUR, &["src/b.rs", "README.md"]),
            commit("cc", T0 + 2 * DAY + HOUR, &["src/c.rs"]),
            commit("cd", T0 + 3 * DAY + HOUR, &["src/d.rs"]),
            commit("cg", T0 + 50 * DAY + HOUR, &["src/g.rs"]),
            commit("rb", T0 + 5 * DAY, &["src/b.rs"]),
            commit("rd", T0 + 40 * DAY, &["src/d.rs"]),
        ];
        let failures = [
            failure("cb", "rb", T0 + 5 * DAY, FailureKind::Revert),
            // 37 days after cd: outside the window, so d is correct.
            failure("cd", "rd", T0 + 40 * DAY, FailureKind::FixAfterChange),
        ];
        let joined = join(&sidecars, &commits, &failures, T0 + 60 * DAY, &spec());
        assert_eq!(
            labels(&joined),
            vec![
                ("a", true, "window-elapsed", None, vec!["ca"]),
                ("b", false, "revert", Some("cb"), vec!["cb"]),
                ("c", true, "window-elapsed", None, vec!["cc"]),
                ("d", true, "window-elapsed", None, vec!["cd"]),
            ]
        );
        assert_eq!(joined.rows[1].remedy_sha.as_deref(), Some("rb"));
        assert_eq!(joined.rows[2].confidence, None);
        assert_eq!(
            joined.counts,
            Counts {
                sidecars: 7,
                rows: 4,
                correct: 3,
                wrong: 1,
                censored: 1,
                uncommitted: 1,
                superseded: 0,
                no_files: 1,
                null_confidence: 1,
                sessions: 7,
            }
        );
        // A failure is known before the window elapses; a clean row is not.
        let early = join(&sidecars, &commits, &failures, T0 + 10 * DAY, &spec());
        assert_eq!(labels(&early), vec![("b", false, "revert", Some("cb"), vec!["cb"])]);
        assert_eq!(early.counts.censored, 4);
        // A remedy after the as-of time is not seen yet.
        let before_revert = join(&sidecars, &commits, &failures, T0 + 4 * DAY, &spec());
        assert!(before_revert.rows.is_empty());
    }

    #[test]
    fn a_commit_goes_to_the_first_claimant_at_or_after_it_else_the_last_before() {
        // Session s1: two turns listing the same file; the commit lands between them. s2 listed it earlier.
        let sidecars = [
            sidecar("s2-1", "s2", T0 - HOUR, Some(0.2), &["x.rs"]),
            sidecar("s1-1", "s1", T0, Some(0.3), &["x.rs"]),
            sidecar("s1-2", "s1", T0 + 2 * HOUR, Some(0.8), &["x.rs"]),
            sidecar("s3-1", "s3", T0 + 3 * HOUR, Some(0.5), &["y.rs"]),
        ];
        let commits = [
            commit("c1", T0 + HOUR, &["x.rs"]),
            // After every claimant: goes to the last one before it.
            commit("c2", T0 + 10 * HOUR, &["y.rs", "x.rs"]),
            // Too late for anyone (more than 24 h after the last sidecar listing y.rs).
            commit("c3", T0 + 3 * HOUR + 25 * HOUR, &["y.rs"]),
            // Merges never count.
            Commit {
                merge: true,
                ..commit("m", T0 + 2 * HOUR, &["x.rs"])
            },
        ];
        let joined = join(&sidecars, &commits, &[], T0 + 100 * DAY, &spec());
        assert_eq!(
            labels(&joined),
            vec![
                ("s1-2", true, "window-elapsed", None, vec!["c1"]),
                ("s3-1", true, "window-elapsed", None, vec!["c2"]),
            ]
        );
        // s2-1 claimed c1 and c2, s1-1 too: both went to later sidecars.
        assert_eq!((joined.counts.uncommitted, joined.counts.superseded), (0, 2));
    }

    #[test]
    fn slack_before_the_session_start_and_the_earliest_remedy_wins() {
        let sidecars = [
            sidecar("b", "s", T0 + DAY, Some(0.6), &["z.rs"]),
            sidecar("a", "s", T0, Some(0.6), &["q.rs"]),
        ];
        let commits = [
            // 5 h before the session's first sidecar: inside slack_before (6 h) for both of its sidecars.
            commit("c0", T0 - 5 * HOUR, &["z.rs"]),
            commit("c1", T0 + DAY, &["z.rs"]),
            commit("early", T0 - 7 * HOUR, &["q.rs"]),
        ];
        let failures = [
            failure("c0", "r2", T0 + 3 * DAY, FailureKind::FixesTrailer),
            failure("c0", "r1", T0 + 2 * DAY, FailureKind::FixAfterChange),
            // Remedied by the row's own later commit: not a failure.
            failure("c0", "c1", T0 + DAY, FailureKind::FixAfterChange),
        ];
        let joined = join(&sidecars, &commits, &failures, T0 + 100 * DAY, &spec());
        assert_eq!(
            labels(&joined),
            vec![("b", false, "fix-after-change", Some("c0"), vec!["c0", "c1"])]
        );
        assert_eq!(joined.rows[0].remedy_sha.as_deref(), Some("r1"));
        assert_eq!(
            joined.counts.uncommitted, 1,
            "7 h before the start is outside the slack"
        );
        let jsonl = String::from_utf8(to_jsonl(&joined.rows)).unwrap();
        assert_eq!(
            jsonl,
            "{\"confidence\":0.6,\"correct\":false,\"session_id\":\"s\",\"task_ref\":\"app#s\",\"agent\":\"claude\",\
             \"risk_score\":0.9,\"needs_review\":true,\"surface\":\"data\",\"label_reason\":\"fix-after-change\",\
             \"failure_sha\":\"c0\",\"remedy_sha\":\"r1\",\"commits\":[\"c0\",\"c1\"],\"sidecar\":\"b\",\
             \"timestamp\":\"2026-01-02T00:00:00Z\"}\n"
        );
    }
}
