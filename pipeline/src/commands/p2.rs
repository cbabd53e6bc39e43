//! `phase0 p2`: walk a repository's history, find its failures, sort them by the gate that could have caught
//! them, decide under the prereg, write `p2.json`, `p2.md` and `p2-failures.csv`, and return the stdout block.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{CommandError, write_report_set};
use crate::experiments::p2;
use crate::prereg::Prereg;
use crate::report::envelope::{self, Envelope, PreregRef, Status};
use crate::report::p2::{self as render, P2Report, RepositorySummary};
use crate::scan::changed_paths::ChangedPaths;
use crate::scan::commit_cache::CommitCache;
use crate::scan::commits::{CommitDiff, DiffRequest, ObjectId};
use crate::scan::diff_cache::{self, DiffCache};
use crate::scan::git::{self, HeadState, WalkOptions};
use crate::scan::remedy_cache::RemedyCache;

/// The options of `phase0 p2` (clap derives its command line from them, [`crate::cli`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct P2Args {
    /// The repository to scan (a work tree, a directory inside one, or a bare repository); default `.`. Repeat it
    /// to scan several and pool them (each one's reports go to `OUT/repo=<name>/`); `NAME=PATH` names one.
    #[arg(long = "repo", value_name = "PATH", global = true, help_heading = "History")]
    pub repos: Vec<String>,
    /// A file listing the repositories to scan and pool, one per line (`PATH` or `NAME=PATH`; `#` comments).
    #[arg(long = "repos", value_name = "FILE", global = true, help_heading = "History")]
    pub repos_file: Option<PathBuf>,
    /// The one repository a run scans ([`resolve_repositories`] sets it from `--repo`).
    #[arg(skip = PathBuf::from("."))]
    pub repo: PathBuf,
    /// Walk the history reachable from this revision.
    #[arg(long, default_value = "HEAD", global = true, help_heading = "History")]
    pub rev: Option<String>,
    /// Follow only first parents (like `git log --first-parent`).
    #[arg(long, global = true, help_heading = "History")]
    pub first_parent: bool,
    /// Only commits whose committer time is at or after this (YYYY-MM-DD, UTC, or RFC 3339).
    #[arg(long, global = true, help_heading = "History")]
    pub since: Option<String>,
    /// Only commits whose committer time is at or before this (a date includes the whole day).
    #[arg(long, global = true, help_heading = "History")]
    pub until: Option<String>,
    /// A pre-registration replacing the embedded experiments/p2.toml.
    #[arg(long, global = true)]
    pub prereg: Option<PathBuf>,
    /// Where p2.json, p2.md and p2-failures.csv go.
    #[arg(long, default_value = "reports/p2", help_heading = "Output")]
    pub out: PathBuf,
    /// The report date (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else the newest commit's time.
    #[arg(long)]
    pub as_of: Option<String>,
    /// `SOURCE_DATE_EPOCH` (Unix seconds), read by clap from the environment.
    #[arg(long = "source-date-epoch", env = "SOURCE_DATE_EPOCH", hide = true)]
    pub source_date_epoch: Option<String>,
    /// A directory with a p2.md.j2 that replaces the embedded template.
    #[arg(long, help_heading = "Output")]
    pub templates: Option<PathBuf>,
    /// Show a spinner on stderr (the caller decides: only when stderr is a terminal).
    #[arg(skip)]
    pub progress: bool,
    /// A filled audit sheet (`phase0 p2 audit`): report what the reader measured and decide the verdict on
    /// the share corrected for it.
    #[arg(long, value_name = "SHEET")]
    pub audit: Option<PathBuf>,
    /// The repository's name in audit sheets (owner/name); default from the path.
    #[arg(long, global = true)]
    pub name: Option<String>,
    /// Where P2 keeps what it learned about each commit's diff between runs, so that a rerun diffs only what it
    /// has not seen [default: $XDG_CACHE_HOME/phase0/p2, else ~/.cache/phase0/p2]. The reports are the same with a
    /// cold cache, a warm one or none.
    #[arg(long, value_name = "DIR", global = true, help_heading = "Cache")]
    pub cache: Option<PathBuf>,
    /// Neither read nor write the cache.
    #[arg(long, global = true, help_heading = "Cache", conflicts_with = "cache")]
    pub no_cache: bool,
}

/// The user's cache directory for P2's diff cache: `$XDG_CACHE_HOME/phase0/p2`, else `$HOME/.cache/phase0/p2`
/// (`None` without either variable).
pub fn user_cache_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    non_empty("XDG_CACHE_HOME")
        .or_else(|| non_empty("HOME").map(|home| home.join(".cache")))
        .map(|dir| dir.join("phase0").join("p2"))
}

/// Several repositories (`--repo` given more than once, or `--repos FILE`): their list, every path checked. One:
/// `args.repo` (and, for `NAME=PATH`, `args.name`) set from it, and `None`.
pub fn resolve_repositories(args: &mut P2Args) -> Result<Option<Vec<super::pool::NamedRepo>>, CommandError> {
    if args.repos_file.is_some() || args.repos.len() > 1 {
        return super::pool::repositories(&args.repos, args.repos_file.as_deref()).map(Some);
    }
    if let Some(value) = args.repos.first() {
        let named = super::pool::parse_repo(value);
        if value.split_once('=').is_some_and(|(name, _)| name == named.name) && args.name.is_none() {
            args.name = Some(named.name);
        }
        args.repo = named.path;
    }
    Ok(None)
}

/// What a run produced.
#[derive(Debug)]
pub struct P2Outcome {
    pub summary: String,
    pub json: Vec<u8>,
    pub written: Vec<PathBuf>,
    /// Advice for the person at the terminal (not part of the reports), such as how to make the next run faster.
    pub hint: Option<String>,
    /// Problems with the diff cache, for stderr (the reports do not depend on it).
    pub warnings: Vec<String>,
    /// Diffs the cache answered and diffs computed (`None`: no cache).
    pub cache: Option<(u64, u64)>,
    /// Commits the commit cache remembered and commits read from the repository (`None`: no cache).
    pub commits_cached: Option<(u64, u64)>,
    /// The same as a line for stdout, after the block (empty without a cache): never in a report, which is the
    /// same with a cold cache, a warm one or none.
    pub cache_line: String,
}

/// The stdout block's cache lines (not in the reports, which are the same with or without a cache).
fn cache_line(
    commits: Option<&(u64, u64, PathBuf)>,
    links: Option<&(u64, u64, PathBuf)>,
    diffs: Option<&(u64, u64, PathBuf)>,
) -> String {
    let mut lines = String::new();
    if let Some((remembered, read, file)) = commits {
        lines.push_str(&format!(
            "  commit cache    {remembered} of {} commits from {}, {read} read\n",
            remembered + read,
            file.display()
        ));
    }
    if let Some((reused, fixes, file)) = links {
        lines.push_str(&format!(
            "  link cache      {reused} of {fixes} fixes' links from {}, {} linked\n",
            file.display(),
            fixes - reused
        ));
    }
    if let Some((hits, computed, file)) = diffs {
        lines.push_str(&format!(
            "  diff cache      {hits} of {} diffs from {}, {computed} computed\n",
            hits + computed,
            file.display()
        ));
    }
    lines
}

/// From this many commits on, a history without changed-path filters gets a hint to write them: on git.git
/// (82k commits) they cut the run by a fifth; below this the whole run takes well under a second.
const FILTERS_HINT_COMMITS: usize = 20_000;

/// The hint to write changed-path filters, for a history of `commits` commits whose repository at `path` has
/// none (`missing`, asked only for a history long enough to matter).
fn filters_hint(commits: usize, missing: impl FnOnce() -> bool, path: &std::path::Path) -> Option<String> {
    (commits >= FILTERS_HINT_COMMITS && missing()).then(|| {
        format!(
            "hint: {} has no changed-path Bloom filters; after `git -C {} commit-graph write --reachable \
             --changed-paths` the next run reads far fewer trees (the reports do not change)",
            path.display(),
            path.display()
        )
    })
}

/// A `--since`/`--until` bound in Unix seconds. A bare date is midnight UTC for `--since` and the last second of
/// that day for `--until`, so `--since D --until D` keeps the whole day.
fn time_bound(flag: &str, value: &str, end_of_day: bool) -> Result<i64, CommandError> {
    let (timestamp, bare_date) = envelope::parse_as_of(value).ok_or_else(|| {
        CommandError::Input(format!(
            "{flag} {:?} is not a date (YYYY-MM-DD) or an RFC 3339 timestamp",
            value.trim()
        ))
    })?;
    Ok(timestamp.as_second() + if bare_date && end_of_day { 86_399 } else { 0 })
}

fn rfc3339(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| seconds.to_string())
}

struct Spinner(Option<indicatif::ProgressBar>);

impl Spinner {
    fn new(enabled: bool) -> Self {
        Self(enabled.then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        }))
    }

    fn say(&self, message: String) {
        if let Some(bar) = &self.0 {
            bar.set_message(message);
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// Unreadable commits named in a report (the count is always given).
const UNREADABLE_NAMED: usize = 20;

/// The pages of the pack are handed back after a walk that read, or a diff batch that computed, at least this many
/// commits: a first run's (git.git: 82k commits walked, tens of thousands diffed), not a weekly rerun's hundreds.
const RELEASE_PAGES_AFTER: u64 = 1_000;

/// A walked and analysed history, before any report is rendered (shared by `phase0 p2` and `phase0 p2 audit`).
pub(crate) struct Scanned {
    pub prereg: Prereg<p2::P2Spec>,
    pub repo: gix::ThreadSafeRepository,
    pub history: git::History,
    pub known: git::KnownCommits,
    pub analysis: p2::P2Analysis,
    /// Commits whose diff needs a missing object: id → the error naming it.
    pub unreadable: BTreeMap<String, String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub as_of_checked: Option<String>,
    /// How many diffs the cache answered and how many were computed, and where it is (`None`: no cache).
    pub cache: Option<(u64, u64, PathBuf)>,
    /// How many commits the commit cache remembered and how many were read, and where it is (`None`: no cache).
    pub commits_cached: Option<(u64, u64, PathBuf)>,
    /// How many fixes took their link from the link cache, of how many linked, and where it is (`None`: no cache).
    pub links_cached: Option<(u64, u64, PathBuf)>,
    /// Problems with the cache (never with the reports): unreadable, foreign or damaged, not writable.
    pub warnings: Vec<String>,
    /// What the run learned, to be written to the caches (beside the rendering of the reports).
    pub saves: PendingSaves,
}

/// The diff cache, decoded on another thread while the history is walked: waited for when first needed.
struct LazyDiffCache {
    opening: Option<std::thread::JoinHandle<(DiffCache, Option<String>)>>,
    cache: DiffCache,
    warning: Option<String>,
}

impl LazyDiffCache {
    fn get(&mut self) -> &mut DiffCache {
        if let Some(opening) = self.opening.take() {
            (self.cache, self.warning) = opening.join().unwrap_or_else(|_| {
                (
                    DiffCache::none(),
                    Some("the diff cache could not be read; ignored".into()),
                )
            });
        }
        &mut self.cache
    }

    fn get_owned(mut self, warnings: &mut Vec<String>) -> DiffCache {
        self.get();
        warnings.extend(self.warning);
        self.cache
    }
}

/// The warnings of the caches' writing, once it is done; dropping it waits for it too.
struct WhenSaved(Option<std::sync::mpsc::Receiver<Vec<String>>>);

impl WhenSaved {
    fn wait(mut self) -> Vec<String> {
        self.0.take().and_then(|saved| saved.recv().ok()).unwrap_or_default()
    }
}

impl Drop for WhenSaved {
    fn drop(&mut self) {
        if let Some(saved) = self.0.take() {
            let _ = saved.recv();
        }
    }
}

/// What a run writes to its caches beside the rendering of its reports. Commits with missing objects are not
/// remembered as unreadable: a later fetch may bring the objects.
pub(crate) struct PendingSaves {
    diffs: DiffCache,
    /// The commit cache and the message facts this run parsed (`None`: no cache).
    commits: Option<(CommitCache<p2::MessageFacts>, p2::LearnedFacts)>,
    /// The link cache and this run's links (`None`: no cache).
    links: Option<(RemedyCache<p2::LinkMemo>, p2::LinksToKeep)>,
}

impl PendingSaves {
    /// Writes both caches at once; the warnings of those that cannot be written.
    pub(crate) fn save(self, history: &git::History) -> Vec<String> {
        let Self { diffs, commits, links } = self;
        let (diff_warning, (commit_warning, link_warning)) = rayon::join(
            || diffs.save(),
            || {
                rayon::join(
                    || {
                        commits.and_then(|(cache, learned)| {
                            cache.save(&history.commits, &history.non_utf8_ids, |id| {
                                learned.get(id).or_else(|| cache.facts(id))
                            })
                        })
                    },
                    || {
                        links.and_then(|(cache, linked)| {
                            let current: Vec<(ObjectId, &p2::LinkMemo, bool)> =
                                linked.iter().map(|(id, memo, fresh)| (*id, memo, *fresh)).collect();
                            cache.save(&current)
                        })
                    },
                )
            },
        );
        diff_warning
            .into_iter()
            .chain(commit_warning)
            .chain(link_warning)
            .collect()
    }
}

/// Loads the prereg, checks the dates, walks the history and runs the analysis.
pub(crate) fn scan(args: &P2Args) -> Result<Scanned, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    let prereg = Prereg::p2(args.prereg.as_deref()).map_err(|e| input(&e))?;
    let since = args
        .since
        .as_deref()
        .map(|v| time_bound("--since", v, false))
        .transpose()?;
    let until = args
        .until
        .as_deref()
        .map(|v| time_bound("--until", v, true))
        .transpose()?;
    if let (Some(since), Some(until)) = (since, until)
        && since > until
    {
        return Err(CommandError::Input(format!(
            "--since {:?} is after --until {:?}: no commit can lie between them",
            args.since.as_deref().unwrap_or_default(),
            args.until.as_deref().unwrap_or_default()
        )));
    }
    // Checked before the scan, which can take a while on a large repository.
    let as_of_checked = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|e| input(&e))?;

    crate::timing::mark("p2: scan");
    let spinner = Spinner::new(args.progress);
    spinner.say(format!("opening {}", args.repo.display()));
    let repo = git::open(&args.repo).map_err(|e| input(&e))?;
    spinner.say("walking the history".to_string());
    let options = WalkOptions {
        rev: args.rev.clone(),
        first_parent: args.first_parent,
        since,
        until,
    };
    crate::timing::mark("repository opened");
    let mut warnings = Vec::new();
    // The commits an earlier run read are not read or parsed again, and the diffs it computed are not computed
    // again. A shallow clone uses neither cache (its boundary commits' parents and diffs change when it is
    // deepened).
    let cache_files = args
        .cache
        .as_deref()
        .map(|dir| diff_cache::file_for(dir, repo.to_thread_local().git_dir()));
    // The diff cache is decoded beside the walk and the message parsing, and waited for at the first diff.
    let opening = cache_files.clone().map(|file| {
        let sha256 = prereg.sha256.clone();
        std::thread::spawn(move || DiffCache::open(file, &sha256))
    });
    let (mut commit_cache, commit_warning) = match &cache_files {
        Some(file) => CommitCache::open(file.with_extension("p2commits"), &prereg.sha256),
        None => (CommitCache::none(), None),
    };
    let (link_cache, link_warning) = match &cache_files {
        Some(file) => RemedyCache::open(file.with_extension("p2links"), &prereg.sha256),
        None => (RemedyCache::none(), None),
    };
    crate::timing::mark("commit cache opened");
    let (mut history, slots) = git::walk_remembering(&repo, &options, &mut commit_cache).map_err(|e| input(&e))?;
    crate::timing::mark("walked");
    // The walk's pages of the pack (the commits) are not read again; nor, mostly, each diff batch's (below). A
    // rerun that read a few new commits holds few pages: handing them back would cost more than keeping them.
    if history.commits.len() as u64 - history.remembered >= RELEASE_PAGES_AFTER {
        git::release_pack_pages();
    }
    spinner.say(format!("{} commits: finding failures", history.commits.len()));
    let known = git::KnownCommits::of(&history.commits);
    let cache_file = cache_files.filter(|_| !history.shallow);
    let mut cache = LazyDiffCache {
        opening: opening.filter(|_| cache_file.is_some()),
        cache: DiffCache::none(),
        warning: None,
    };
    warnings.extend(commit_warning.filter(|_| cache_file.is_some()));
    warnings.extend(link_warning.filter(|_| cache_file.is_some()));
    // A partial or damaged clone: commits whose diff needs a missing object are skipped and named, never fatal.
    let mut unreadable: BTreeMap<String, String> = BTreeMap::new();
    let mut memo = git::DiffMemo::default();
    let mut messages = if cache_file.is_some() {
        p2::MessageMemo::remembering(&commit_cache, slots).with_links(&link_cache)
    } else {
        p2::MessageMemo::none()
    };
    let analysis = p2::analyze(
        &mut history.commits,
        &prereg.spec,
        &mut messages,
        &mut |requests, detail| {
            let cache = cache.get();
            let mut answered: Vec<Option<CommitDiff>> = cache.get_all(requests, detail);
            // Without a hit (no cache, a cold one) the batch goes to the differ as it is, its path sets not copied.
            let misses: std::borrow::Cow<[DiffRequest]> = if answered.iter().all(Option::is_none) {
                std::borrow::Cow::Borrowed(requests)
            } else {
                requests
                    .iter()
                    .zip(&answered)
                    .filter(|(_, hit)| hit.is_none())
                    .map(|(request, _)| request.clone())
                    .collect()
            };
            if misses.is_empty() {
                return Ok(answered.into_iter().flatten().collect());
            }
            spinner.say(format!("diffing {} commits", misses.len()));
            let (diffs, missing) = git::diffs_remembering(&repo, &known, &misses, detail, &mut memo)?;
            // Each batch reads other trees and blobs than the one before, mostly: its pages go back too.
            if misses.len() as u64 >= RELEASE_PAGES_AFTER {
                git::release_pack_pages();
            }
            let missing_ids: std::collections::HashSet<ObjectId> = missing.iter().map(|(id, _)| *id).collect();
            for (commit, error) in missing {
                unreadable
                    .entry(commit.to_string())
                    .or_insert_with(|| error.to_string());
            }
            // The computed diffs are the misses' in order, less the unreadable commits'. A batch never asks for one
            // commit twice; should it, its diffs are passed on uncached rather than matched to the wrong request.
            let mut ids: Vec<ObjectId> = misses.iter().map(|r| r.id).collect();
            ids.sort_unstable();
            if ids.windows(2).any(|w| w[0] == w[1]) {
                let mut all: Vec<CommitDiff> = answered.into_iter().flatten().collect();
                all.extend(diffs);
                return Ok(all);
            }
            let mut computed = diffs.into_iter();
            let mut misses = misses.iter();
            for slot in answered.iter_mut().filter(|slot| slot.is_none()) {
                let request = misses.next().expect("one miss per empty slot");
                if missing_ids.contains(&request.id) {
                    continue;
                }
                let diff = computed.next().expect("one diff per readable miss");
                cache.put(request, detail, &diff);
                *slot = Some(diff);
            }
            Ok::<_, git::GitScanError>(answered.into_iter().flatten().collect())
        },
    )
    .map_err(|e| input(&e))?;
    crate::timing::mark("analysed");
    let (learned, linked) = messages.into_learned();
    let mut cache = cache.get_owned(&mut warnings);
    // The diffs a run without the link cache would have read stay in the diff cache.
    cache.keep(&linked.unasked);
    let counts = (cache.hits, cache.computed);
    let commits_cached = cache_file.as_ref().map(|file| {
        let remembered = history.remembered;
        (
            remembered,
            history.commits.len() as u64 - remembered,
            file.with_extension("p2commits"),
        )
    });
    let links_cached = cache_file
        .as_ref()
        .map(|file| (linked.reused, linked.fixes, file.with_extension("p2links")));
    let saves = PendingSaves {
        diffs: cache,
        commits: cache_file.as_ref().map(|_| (commit_cache, learned)),
        links: cache_file.as_ref().map(|_| (link_cache, linked.links)),
    };
    let cache = cache_file.map(|file| (counts.0, counts.1, file));
    Ok(Scanned {
        saves,
        prereg,
        repo,
        history,
        known,
        analysis,
        unreadable,
        since,
        until,
        as_of_checked,
        cache,
        commits_cached,
        links_cached,
        warnings,
    })
}

pub fn run(args: &P2Args) -> Result<P2Outcome, CommandError> {
    render_reports(args)?.write()
}

/// A scanned repository's report set, rendered, and what is left to do: write it and wait for the caches (a run
/// over several repositories does that while it scans the next one).
pub(crate) struct Unwritten {
    out: PathBuf,
    files: Vec<(String, Vec<u8>)>,
    cache_warnings: WhenSaved,
    /// The outcome, but for the paths written and the caches' warnings.
    outcome: P2Outcome,
}

impl Unwritten {
    /// Writes the report set, then waits for the caches.
    pub(crate) fn write(self) -> Result<P2Outcome, CommandError> {
        let Unwritten {
            out,
            files,
            cache_warnings,
            mut outcome,
        } = self;
        outcome.written = write_report_set(&out, &files)?;
        crate::timing::mark("reports written");
        outcome.warnings.extend(cache_warnings.wait());
        crate::timing::mark("caches written");
        Ok(outcome)
    }
}

/// Scans the repository and renders its reports; [`Unwritten::write`] writes them.
pub(crate) fn render_reports(args: &P2Args) -> Result<Unwritten, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    let template = super::template(args.templates.as_deref(), "p2.md.j2", render::P2_TEMPLATE)?;
    // A bad sheet is an input error found before the scan.
    let sheet = args.audit.as_deref().map(super::p2_audit::read_sheet).transpose()?;
    let Scanned {
        saves,
        prereg,
        repo,
        history,
        known,
        mut analysis,
        unreadable,
        since,
        until,
        as_of_checked,
        cache,
        commits_cached,
        links_cached,
        mut warnings,
    } = scan(args)?;
    let hint = filters_hint(
        history.commits.len(),
        || ChangedPaths::missing(&repo.to_thread_local()),
        &args.repo,
    );
    let audit = sheet.map(|(path, rows)| {
        super::p2_audit::read_back(
            path,
            rows,
            &args.repo,
            args.name.as_deref(),
            &mut analysis,
            &prereg.spec,
        )
    });
    let newest = history.commits.iter().map(|c| c.commit_time).max();
    let generated_at = match as_of_checked {
        Some(at) => Some(at),
        None => envelope::generated_at(None, None, newest).map_err(|e| input(&e))?,
    };
    let repository = RepositorySummary {
        name: super::p2_audit::repo_name(&args.repo, args.name.as_deref()),
        path: args.repo.display().to_string(),
        rev: history.rev.clone(),
        tip: history.tip.map(|id| id.to_string()),
        head: match &history.head {
            HeadState::Branch(name) => format!("branch {name}"),
            HeadState::Detached => "detached HEAD".to_string(),
            HeadState::Unborn { branch } => format!("unborn branch {branch}"),
        },
        first_parent: args.first_parent,
        since: since.map(rfc3339),
        until: until.map(rfc3339),
        commits_walked: history.commits.len() as u64,
        shallow: history.shallow,
        non_utf8_messages: history.non_utf8_messages,
        unreadable_commits: unreadable.len() as u64,
        unreadable: unreadable
            .iter()
            .take(UNREADABLE_NAMED)
            .map(|(commit, error)| format!("{commit}: {error}"))
            .collect(),
    };
    let prereg_ref = PreregRef {
        path: prereg.source.clone(),
        sha256: prereg.sha256.clone(),
    };
    let mut report = Envelope::new(
        "phase0 p2",
        prereg_ref,
        generated_at,
        P2Report {
            repository,
            analysis,
            audit,
        },
    );
    if history.shallow {
        report.status = Status::Partial;
        report.error_code = Some("shallow-history".to_string());
    } else if !unreadable.is_empty() {
        report.status = Status::Partial;
        report.error_code = Some("missing-objects".to_string());
    }
    // The caches are written beside the rendering and writing, and then a long history's rows are freed on the
    // same thread (git.git: 82k commits, a noticeable part of the run; here, should no thread start).
    drop(known);
    let (saved, cache_warnings) = std::sync::mpsc::channel();
    let saving = std::thread::Builder::new().spawn(move || {
        let _ = saved.send(saves.save(&history));
        drop(history);
    });
    if let Err(error) = saving {
        warnings.push(format!("the caches were not written ({error})"));
    }
    // Waited for on every way out, an error's too: an exit never leaves a cache's temporary file behind.
    let cache_warnings = WhenSaved(Some(cache_warnings));
    report.artifacts = vec![
        "p2.json".into(),
        "p2.md".into(),
        render::FAILURES_CSV.into(),
        render::FAILURES_PARQUET.into(),
        render::BUCKETS_SVG.into(),
    ];
    // The three renderings are independent: each takes a few milliseconds on a long history's thousands of rows.
    crate::timing::mark("report assembled");
    report.sort_lists();
    let report = &report;
    let ((markdown, parquet), (csv, json)) = rayon::join(
        || {
            rayon::join(
                || render::markdown(&template, report, &prereg.spec),
                || render::failures_parquet(&report.report.analysis.failures),
            )
        },
        || {
            rayon::join(
                || render::failures_csv(&report.report.analysis.failures),
                || report.json(),
            )
        },
    );
    crate::timing::mark("rendered");
    let markdown = markdown.map_err(|e| input(&e))?;
    let csv = csv.map_err(|e| input(&e))?;
    let parquet = parquet.map_err(|e| CommandError::Runtime(e.to_string()))?;
    let json = json.map_err(CommandError::serialise("p2.json"))?;
    let files = vec![
        ("p2.json".to_string(), json.clone()),
        ("p2.md".to_string(), markdown.into_bytes()),
        (render::FAILURES_CSV.to_string(), csv),
        (render::FAILURES_PARQUET.to_string(), parquet),
        (
            render::BUCKETS_SVG.to_string(),
            render::buckets_svg(&report.report.analysis, &prereg.spec).into_bytes(),
        ),
    ];
    let outcome = P2Outcome {
        summary: render::stdout_block(report, &prereg.spec),
        cache_line: cache_line(commits_cached.as_ref(), links_cached.as_ref(), cache.as_ref()),
        commits_cached: commits_cached
            .as_ref()
            .map(|(remembered, read, _)| (*remembered, *read)),
        json,
        written: Vec::new(),
        hint,
        warnings,
        cache: cache.as_ref().map(|(hits, computed, _)| (*hits, *computed)),
    };
    Ok(Unwritten {
        out: args.out.clone(),
        files,
        cache_warnings,
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_hint_needs_a_long_history_without_filters() {
        let path = std::path::Path::new("/src/git");
        assert_eq!(filters_hint(19_999, || unreachable!("not asked"), path), None);
        assert_eq!(filters_hint(81_966, || false, path), None);
        assert_eq!(
            filters_hint(20_000, || true, path).as_deref(),
            Some(
                "hint: /src/git has no changed-path Bloom filters; after `git -C /src/git commit-graph write \
                 --reachable --changed-paths` the next run reads far fewer trees (the reports do not change)"
            )
        );
    }

    #[test]
    fn time_bounds() {
        assert_eq!(time_bound("--since", "2026-11-21", false).unwrap(), 1_795_219_200);
        assert_eq!(
            time_bound("--until", "2026-11-21", true).unwrap(),
            1_795_219_200 + 86_399
        );
        assert_eq!(
            time_bound("--since", "2026-11-21T01:00:00+01:00", false).unwrap(),
            1_795_219_200
        );
        let error = time_bound("--since", "last week", false).unwrap_err().to_string();
        assert_eq!(
            error,
            "--since \"last week\" is not a date (YYYY-MM-DD) or an RFC 3339 timestamp"
        );
    }

    #[test]
    fn since_after_until_is_refused_before_the_scan() {
        let args = P2Args {
            repo: "/nonexistent".into(),
            since: Some("2026-05-01".into()),
            until: Some("2026-04-01".into()),
            ..Default::default()
        };
        let error = run(&args).map(|_| ()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--since \"2026-05-01\" is after --until \"2026-04-01\": no commit can lie between them"
        );
    }
}
