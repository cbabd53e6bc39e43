//! `phase0 corpus`: join the captured sidecars with what git later shows into a labeled P1 corpus (JSONL). The
//! rule is in [`crate::experiments::corpus`]; failures are P2's ([`crate::experiments::p2::analyze`] under the
//! embedded `experiments/p2.toml`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{CommandError, write_all_atomically};
use crate::experiments::corpus::{self as join, Commit, CorpusSpec, Counts, FailureLink, Sidecar};
use crate::experiments::p2;
use crate::prereg::Prereg;
use crate::report::envelope;
use crate::scan::commits::{CommitDiff, DiffDetail, DiffRequest, ObjectId};
use crate::scan::git::{self, WalkOptions};
use crate::scan::reflections;

/// The options of `phase0 corpus` (clap derives its command line from them, [`crate::cli`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CorpusArgs {
    /// The directory of *.reflection.json sidecars.
    #[arg(long)]
    pub reflections: PathBuf,
    /// The repository the sessions committed to.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Walk the history reachable from this revision (`None`: `HEAD`).
    #[arg(long, default_value = "HEAD")]
    pub rev: Option<String>,
    /// Replace the pre-registered outcome window (the summary says so).
    #[arg(long)]
    pub window_days: Option<u32>,
    /// The as-of time (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else the newest commit's time.
    #[arg(long)]
    pub as_of: Option<String>,
    /// `SOURCE_DATE_EPOCH` (Unix seconds), read by clap from the environment.
    #[arg(long = "source-date-epoch", env = "SOURCE_DATE_EPOCH", hide = true)]
    pub source_date_epoch: Option<String>,
    /// A pre-registration replacing the embedded experiments/corpus.toml.
    #[arg(long)]
    pub prereg: Option<PathBuf>,
    /// Where the JSONL goes (`phase0 corpus`; ignored by [`build`]).
    #[arg(long, default_value = "corpus.jsonl")]
    pub out: PathBuf,
}

/// The corpus in memory, before anything is written.
#[derive(Debug, Clone)]
pub struct Built {
    pub jsonl: Vec<u8>,
    pub counts: Counts,
    /// `file: reason` for every sidecar skipped as invalid or unreadable (for stderr).
    pub invalid: Vec<String>,
    /// RFC 3339, UTC, seconds.
    pub as_of: String,
    pub spec: CorpusSpec,
    /// How the summary names the pre-registrations: `(source, sha256)` of the corpus and the P2 rules.
    pub prereg: (String, String),
    pub p2_prereg: (String, String),
    /// Commits walked.
    pub commits: u64,
}

/// What `phase0 corpus` produced.
#[derive(Debug)]
pub struct CorpusOutcome {
    pub summary: String,
    /// Lines for stderr: the invalid sidecars with their reasons.
    pub warnings: Vec<String>,
    pub built: Built,
    pub written: PathBuf,
}

fn input(error: &dyn std::fmt::Display) -> CommandError {
    CommandError::Input(error.to_string())
}

/// Reads the sidecars and the repository and labels every row, in memory.
pub fn build(args: &CorpusArgs) -> Result<Built, CommandError> {
    let prereg = Prereg::corpus(args.prereg.as_deref()).map_err(|e| input(&e))?;
    let p2_prereg = Prereg::p2(None).map_err(|e| input(&e))?;
    let mut spec = prereg.spec.clone();
    if let Some(days) = args.window_days {
        if days == 0 {
            return Err(CommandError::Input("--window-days must be at least 1".into()));
        }
        spec.window_days = days;
    }
    // Checked before the scans, which can take a while.
    let as_of_given = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|e| input(&e))?;

    // Reading the sidecars (many small files) overlaps the history walk.
    let (read, walked) = rayon::join(
        || reflections::read_dir(&args.reflections),
        || {
            let repo = git::open(&args.repo)?;
            let options = WalkOptions {
                rev: args.rev.clone(),
                ..WalkOptions::default()
            };
            git::walk(&repo, &options).map(|history| (repo, history))
        },
    );
    let read = read.map_err(|e| input(&e))?;
    let (repo, mut history) = walked.map_err(|e| input(&e))?;
    let newest = history.commits.iter().map(|c| c.commit_time).max();
    let as_of = match as_of_given {
        Some(at) => at,
        // An empty history and no date: nothing can have elapsed; the epoch keeps every row censored.
        None => envelope::generated_at(None, None, newest)
            .map_err(|e| input(&e))?
            .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_string()),
    };
    let as_of_seconds = envelope::parse_as_of(&as_of)
        .map(|(t, _)| t.as_second())
        .ok_or_else(|| CommandError::Input(format!("as-of {as_of:?} is not a time")))?;

    let sidecars: Vec<Sidecar> = read
        .valid
        .into_iter()
        .map(|(file, r)| Sidecar {
            file,
            session_id: r.session_id,
            repo: r.repo,
            task_ref: r.task_ref,
            agent: r.agent,
            timestamp: r.timestamp,
            confidence: r.confidence.map(|c| c.get()),
            risk_score: r.risk.score.get(),
            needs_review: r.risk.needs_review,
            surface: r.risk.surface,
            files_changed: r.files_changed,
        })
        .collect();

    // Paths only for the non-merge commits some sidecar's span can reach.
    let spans = spans(&sidecars, &spec);
    let wanted: Vec<ObjectId> = history
        .commits
        .iter()
        .filter(|c| c.parents.len() <= 1 && in_spans(&spans, c.commit_time))
        .map(|c| c.id)
        .collect();
    let known = git::KnownCommits::of(&history.commits);
    let wanted: Vec<DiffRequest> = wanted.into_iter().map(DiffRequest::whole).collect();
    let path_diffs = git::diffs_of_known(&repo, &known, &wanted, DiffDetail::Paths).map_err(|e| input(&e))?;
    let mut cache: HashMap<ObjectId, CommitDiff> = path_diffs.into_iter().map(|d| (d.id, d)).collect();

    // P2 asks for paths of some of the same commits: served from the cache (a restricted request from a cached
    // whole diff, restricted here; restricted diffs are not cached).
    let analysis = p2::analyze(
        &mut history.commits,
        &p2_prereg.spec,
        &mut p2::MessageMemo::none(),
        &mut |requests, detail| {
            if detail == DiffDetail::Lines {
                return git::diffs_of_known(&repo, &known, requests, detail);
            }
            let (cached, missing): (Vec<&DiffRequest>, Vec<&DiffRequest>) =
                requests.iter().partition(|request| cache.contains_key(&request.id));
            let missing: Vec<DiffRequest> = missing.into_iter().cloned().collect();
            let mut out = git::diffs_of_known(&repo, &known, &missing, detail)?;
            for (diff, _) in out
                .iter()
                .zip(&missing)
                .filter(|(_, request)| request.only_paths.is_none())
            {
                cache.insert(diff.id, diff.clone());
            }
            out.extend(cached.into_iter().filter_map(|request| {
                let mut diff = cache.get(&request.id)?.clone();
                if let Some(only) = &request.only_paths {
                    diff.files.retain(|file| only.contains(&file.path));
                }
                Some(diff)
            }));
            Ok(out)
        },
    )
    .map_err(|e| input(&e))?;

    let time_of: HashMap<String, i64> = history
        .commits
        .iter()
        .map(|c| (c.id.to_string(), c.commit_time))
        .collect();
    let failures: Vec<FailureLink> = analysis
        .failures
        .iter()
        .filter_map(|f| {
            Some(FailureLink {
                failing: f.failing.clone()?,
                remedy: f.remedy.clone(),
                remedy_time: *time_of.get(&f.remedy)?,
                kind: f.kind,
            })
        })
        .collect();
    let commits: Vec<Commit> = history
        .commits
        .iter()
        .filter_map(|c| {
            let diff = cache.get(&c.id)?;
            Some(Commit {
                id: c.id.to_string(),
                time: c.commit_time,
                merge: c.parents.len() > 1,
                paths: diff.files.iter().map(|f| f.path.clone()).collect(),
            })
        })
        .collect();
    let joined = join::join(&sidecars, &commits, &failures, as_of_seconds, &spec);
    Ok(Built {
        jsonl: join::to_jsonl(&joined.rows),
        counts: joined.counts,
        invalid: read
            .invalid
            .iter()
            .map(|(file, reason)| format!("{}: {reason}", args.reflections.join(file).display()))
            .collect(),
        as_of,
        spec,
        prereg: (prereg.source, prereg.sha256),
        p2_prereg: (p2_prereg.source, p2_prereg.sha256),
        commits: history.commits.len() as u64,
    })
}

/// The merged spans `[session start − slack_before, sidecar + slack_after]` of every sidecar listing a file.
fn spans(sidecars: &[Sidecar], spec: &CorpusSpec) -> Vec<(i64, i64)> {
    let starts = join::session_starts(sidecars);
    let spans: Vec<(i64, i64)> = sidecars
        .iter()
        .filter(|s| !s.files_changed.is_empty())
        .map(|s| join::claim_window(s, &starts, spec))
        .collect();
    merge_spans(spans)
}

/// Sorts `spans` and merges the overlapping (or touching) ones.
fn merge_spans(mut spans: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    spans.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::with_capacity(spans.len());
    for (lo, hi) in spans {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

fn in_spans(spans: &[(i64, i64)], time: i64) -> bool {
    let i = spans.partition_point(|&(lo, _)| lo <= time);
    i > 0 && time <= spans[i - 1].1
}

/// `phase0 corpus`: [`build`], then write the JSONL atomically to `args.out`.
pub fn run(args: &CorpusArgs) -> Result<CorpusOutcome, CommandError> {
    let built = build(args)?;
    let (dir, name) = split_out(&args.out)?;
    write_all_atomically(&dir, &[(name, built.jsonl.clone())])?;
    Ok(CorpusOutcome {
        summary: summary(args, &built, Some(&args.out)),
        warnings: built.invalid.clone(),
        written: args.out.clone(),
        built,
    })
}

/// `out`'s directory (`.` for a bare name) and file name.
pub(crate) fn split_out(out: &Path) -> Result<(PathBuf, String), CommandError> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| CommandError::Input(format!("{}: not a file name", out.display())))?;
    let dir = match out.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

/// The stdout block.
pub fn summary(args: &CorpusArgs, built: &Built, out: Option<&Path>) -> String {
    let c = &built.counts;
    let mut text = String::new();
    let mut line = |s: String| {
        text.push_str(&s);
        text.push('\n');
    };
    line(format!(
        "phase0 corpus: sidecars in {} against {} ({}, {}), as of {}",
        args.reflections.display(),
        args.repo.display(),
        args.rev.as_deref().unwrap_or("HEAD"),
        crate::report::count(built.commits, "commit", "commits"),
        built.as_of
    ));
    line(format!(
        "window {} days{}; slack {} h before a session, {} h after a sidecar",
        built.spec.window_days,
        if args.window_days.is_some() {
            " (--window-days, not the pre-registered value)"
        } else {
            ""
        },
        built.spec.slack_before_hours,
        built.spec.slack_after_hours
    ));
    line(String::new());
    let invalid = built.invalid.len();
    line(format!(
        "sidecars read:    {} ({}){}",
        c.sidecars + invalid as u64,
        crate::report::count(c.sessions, "session", "sessions"),
        if invalid > 0 {
            format!("; {invalid} invalid, skipped (listed on stderr)")
        } else {
            String::new()
        }
    ));
    line(format!(
        "rows written:     {} ({} correct, {} wrong){}",
        c.rows,
        c.correct,
        c.wrong,
        out.map(|p| format!(" -> {}", p.display())).unwrap_or_default()
    ));
    line(format!("censored:         {} (window not elapsed)", c.censored));
    line(format!(
        "uncommitted:      {} (files changed, no commit found)",
        c.uncommitted
    ));
    line(format!(
        "superseded:       {} (their commits belong to another sidecar: one commit labels one row)",
        c.superseded
    ));
    line(format!("no files changed: {}", c.no_files));
    line(format!(
        "null confidence:  {} of the rows (kept for the risk floor, left out of confidence metrics)",
        c.null_confidence
    ));
    if c.sidecars == 0 && invalid > 0 {
        line("every sidecar was invalid: the corpus is empty".to_string());
    }
    line(String::new());
    line(format!("prereg {} sha256 {}", built.prereg.0, built.prereg.1));
    line(format!(
        "failures by {} sha256 {}",
        built.p2_prereg.0, built.p2_prereg.1
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_merge_and_lookup() {
        assert_eq!(
            merge_spans(vec![(20, 25), (0, 10), (5, 12), (24, 30), (12, 13)]),
            [(0, 13), (20, 30)]
        );
        let spans = vec![(0, 10), (20, 30)];
        assert!(in_spans(&spans, 0) && in_spans(&spans, 10) && in_spans(&spans, 25));
        assert!(!in_spans(&spans, -1) && !in_spans(&spans, 11) && !in_spans(&spans, 31));
        assert_eq!(
            split_out(Path::new("corpus.jsonl")).unwrap(),
            (PathBuf::from("."), "corpus.jsonl".into())
        );
        assert_eq!(
            split_out(Path::new("a/b.jsonl")).unwrap(),
            (PathBuf::from("a"), "b.jsonl".into())
        );
    }
}
