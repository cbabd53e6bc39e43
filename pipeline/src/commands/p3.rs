//! `phase0 p3`: read board exports, find each completed task's signals within the window, decide under the
//! prereg, write `p3.json` and `p3.md`, and return the stdout block.

use std::path::PathBuf;

use super::{CommandError, write_report_set};
use crate::experiments::{p3, p3_audit};
use crate::prereg::Prereg;
use crate::report::envelope::{self, Envelope, InputFile, PreregRef};
use crate::report::p3 as render;
use crate::scan::board::{self, Format};

/// `--out` when not given.
pub const DEFAULT_OUT: &str = "reports/p3";

/// The options of `phase0 p3` (clap derives its command line from them, [`crate::cli`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct P3Args {
    /// Board exports: task JSONL (id, status, completed_at, …) or the same as a Parquet table, Jira CSV/JSON,
    /// Linear CSV, GitHub issue JSON (then its timeline events), Trello JSON, beads JSONL. None with --repo: the
    /// task files kept in the repository.
    pub inputs: Vec<PathBuf>,
    /// auto (sniff each input and say what was chosen), jsonl, jira-csv, jira-json, linear-csv, github-json,
    /// trello-json, beads or parquet.
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// The time zone of dates written without one (Jira CSV), e.g. Europe/Berlin; default UTC.
    #[arg(long)]
    pub tz: Option<String>,
    /// Replace the pre-registered window (the report says so).
    #[arg(long)]
    pub window_days: Option<u32>,
    /// A pre-registration replacing the embedded experiments/p3.toml.
    #[arg(long)]
    pub prereg: Option<PathBuf>,
    /// Where p3.json and p3.md go.
    #[arg(long, default_value = DEFAULT_OUT, help_heading = "Output")]
    pub out: PathBuf,
    /// The as-of date (YYYY-MM-DD or RFC 3339) for windows and the report; default SOURCE_DATE_EPOCH, else
    /// the newest date in the inputs.
    #[arg(long)]
    pub as_of: Option<String>,
    /// `SOURCE_DATE_EPOCH` (Unix seconds), read by clap from the environment.
    #[arg(long = "source-date-epoch", env = "SOURCE_DATE_EPOCH", hide = true)]
    pub source_date_epoch: Option<String>,
    /// A directory with a p3.md.j2 that replaces the embedded template.
    #[arg(long, help_heading = "Output")]
    pub templates: Option<PathBuf>,
    /// A repository whose revert and fix commits (P2's rules) name tasks: the wrong.commit signal. Without
    /// inputs, also the repository whose task files' git history is read.
    #[arg(long, help_heading = "Task files in a repository")]
    pub repo: Option<PathBuf>,
    /// The task files kept in --repo, a repository-relative file or directory of *.jsonl (default
    /// .beads/issues.jsonl, else data/); their git history gives reopens with dates.
    #[arg(long, help_heading = "Task files in a repository")]
    pub data_dir: Option<String>,
    /// The revision whose first-parent history holds the task files (default: the sync branch beads commits them
    /// to when `.beads/config.yaml` names one, `sync-branch`, and this clone has it; else HEAD).
    #[arg(long, value_name = "REV", help_heading = "Task files in a repository")]
    pub history_rev: Option<String>,
    /// A filled audit sheet (`phase0 p3 audit`): report what the reader found and decide the verdict on the base
    /// rate corrected by it.
    #[arg(long, value_name = "SHEET")]
    pub audit: Option<PathBuf>,
}

#[derive(Debug)]
pub struct P3Outcome {
    pub summary: String,
    pub json: Vec<u8>,
    pub written: Vec<PathBuf>,
}

/// Said when `.beads/metadata.json` names beads' Dolt backend and git holds no task file to read.
const DOLT_HINT: &str = "; .beads/metadata.json names the \"dolt\" backend: this beads keeps its tasks in a Dolt \
                         database, not in a file in git. Read an export instead (`bd export -o tasks.jsonl`, then \
                         `phase0 p3 tasks.jsonl`: one snapshot, so reopens before it are not seen), or let beads \
                         write .beads/issues.jsonl into every commit from now on (its `export.auto` setting)";

/// Branches named at most, in the no-task-file error.
const BRANCHES_NAMED: usize = 3;

/// For the no-task-file error: the branches whose tip holds beads' task files (`task_files` under `.beads/`, by
/// default `issues.jsonl`), and how to read one, or nothing when no branch does.
fn elsewhere_hint(handle: &gix::ThreadSafeRepository, task_files: &[String]) -> String {
    let paths: Vec<String> = match task_files {
        [] => vec![".beads/issues.jsonl".to_owned()],
        names => names.iter().map(|n| format!(".beads/{n}")).collect(),
    };
    let found = crate::scan::task_history::branches_holding(handle, &paths, BRANCHES_NAMED + 1);
    let Some(first) = found.first() else {
        return String::new();
    };
    let named = found
        .iter()
        .take(BRANCHES_NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    let more = if found.len() > BRANCHES_NAMED { " and more" } else { "" };
    let whose = if found.len() == 1 {
        "the tip of branch"
    } else {
        "the tips of branches"
    };
    let verb = if found.len() == 1 { "holds" } else { "hold" };
    format!(
        ", or read the history of a branch that has them: {whose} {named}{more} {verb} them (--history-rev {first})"
    )
}

/// The board of the task files kept in `repo` at `path` (default `.beads/issues.jsonl`, else `data/`), rebuilt
/// from their git history: that of `rev`, else of beads' sync branch for the default files, else of `HEAD`.
fn task_files_board(
    repo: &std::path::Path,
    path: Option<&str>,
    rev: Option<&str>,
    format: Option<Format>,
    tz: &jiff::tz::TimeZone,
    options: crate::scan::task_history::HistoryOptions,
    task_files: &[String],
) -> Result<(board::Board, render::TaskFiles), CommandError> {
    use crate::scan::task_history::{self, TaskHistoryError};
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    let handle = task_history::open(repo).map_err(|e| input(&e))?;
    // Beads set up with a sync branch commits its task files there, not to the branch checked out.
    let sync_branch = match (rev, path) {
        (None, None) => task_history::beads_sync_branch(&handle),
        _ => None,
    };
    let beads_rev = rev.or(sync_branch.as_ref().and_then(|b| b.reference.as_deref()));
    let format_of = |path: &str| {
        format.unwrap_or(if path.trim_end_matches('/').ends_with(".beads/issues.jsonl") {
            Format::Beads
        } else {
            Format::Jsonl
        })
    };
    let read =
        |path: &str| task_history::board_from_history_with(&handle, rev, path, format_of(path), tz, options.clone());
    // Version 3: the task files under `.beads/` a history used, read as one task set per commit.
    let read_beads = |beads_rev: Option<&str>| {
        if task_files.is_empty() {
            let path = ".beads/issues.jsonl";
            return task_history::board_from_history_with(
                &handle,
                beads_rev,
                path,
                format_of(path),
                tz,
                options.clone(),
            );
        }
        let options = task_history::HistoryOptions {
            only_files: task_files.to_vec(),
            newest_copy: true,
            ..options.clone()
        };
        task_history::board_from_history_with(
            &handle,
            beads_rev,
            ".beads",
            format.unwrap_or(Format::Beads),
            tz,
            options,
        )
    };
    // The sync branch is read when this clone has it and it holds the task files; a branch created and never synced
    // holds none, and then the checked-out branch's are read, as without one. `read_rev`: the revision read.
    let (history, read_rev) = match path {
        Some(path) => (read(path), rev),
        None => match read_beads(beads_rev) {
            Err(TaskHistoryError::NeverExisted { .. }) if beads_rev != rev => (read_beads(rev), rev),
            other => (other, beads_rev),
        },
    };
    let history = match (path, history) {
        (None, Err(TaskHistoryError::NeverExisted { .. })) => match read("data/") {
            // Name every path tried, not only the last.
            Err(TaskHistoryError::NeverExisted { repo, rev, tip, .. }) => {
                let beads = match task_files {
                    [] => "\".beads/issues.jsonl\"".to_owned(),
                    names => format!("\".beads/\" ({})", names.join(", ")),
                };
                let dolt = match task_history::beads_backend(&handle, &rev).as_deref() {
                    Some("dolt") => DOLT_HINT,
                    _ => "",
                };
                let elsewhere = elsewhere_hint(&handle, task_files);
                return Err(CommandError::Input(format!(
                    "{}: no task file: neither {beads} nor \"data/\" (its *.jsonl files) is in any commit of the \
                     first-parent history of {rev} ({tip}); name the file with --data-dir{elsewhere}{dolt}",
                    repo.display()
                )));
            }
            other => other,
        },
        (_, other) => other,
    }
    .map_err(|e| input(&e))?;
    let revision = read_rev.unwrap_or("HEAD").to_owned();
    let sync_branch_read = read_rev != rev;
    // Beads' metadata sits on the branch checked out (or given), not on a sync branch.
    let dolt_backend = path.is_none()
        && history.deleted.is_some()
        && task_history::beads_backend(&handle, rev.unwrap_or("HEAD")).as_deref() == Some("dolt");
    let summary = render::TaskFiles {
        repository: repo.display().to_string(),
        path: history.board.path.display().to_string(),
        revision,
        sync_branch: sync_branch.map(|b| {
            let not_read_because = match b.reference {
                None => Some("is not in this clone".to_owned()),
                Some(_) if !sync_branch_read => Some("holds no task file".to_owned()),
                Some(_) => None,
            };
            render::SyncBranch {
                name: b.name,
                read: not_read_because.is_none(),
                not_read_because,
            }
        }),
        tip: history.tip.to_string(),
        commits_walked: history.commits_walked,
        versions_read: history.versions_read,
        versions_skipped: history.versions_skipped,
        versions_missing: history.versions_missing,
        skipped: history
            .skipped
            .iter()
            .map(|s| render::SkippedVersion {
                commit: s.commit.to_string(),
                time: s.time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                missing: s.missing,
                message: s.message.clone(),
            })
            .collect(),
        tip_time: history.tip_time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        ids_reused: history.ids_reused,
        files: history.files.clone(),
        deleted: history.deleted.map(|(commit, time)| render::DeletedTaskFiles {
            commit: commit.to_string(),
            time: time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            dolt: dolt_backend,
        }),
    };
    Ok((history.board, summary))
}

/// The remedy commits of `repo` (P2's embedded rules) and the task ids they name.
fn commit_mentions(
    repo: &std::path::Path,
    boards: &[board::Board],
    passing: &[String],
) -> Result<(p3::CommitMentions, render::RepositoryMentions), CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    let p2 = Prereg::p2(None).map_err(|e| input(&e))?;
    let handle = crate::scan::git::open(repo).map_err(|e| input(&e))?;
    let history = crate::scan::git::walk(&handle, &Default::default()).map_err(|e| input(&e))?;
    let remedies = crate::experiments::p2::remedies(&history.commits, &p2.spec);
    let mentions = p3::commit_mentions(&remedies, boards, passing);
    let tip_time = history
        .tip
        .and_then(|tip| history.commits.iter().find(|c| c.id == tip))
        .and_then(|c| jiff::Timestamp::from_second(c.commit_time).ok())
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    let summary = render::RepositoryMentions {
        path: repo.display().to_string(),
        tip: history.tip.map(|id| id.to_string()),
        tip_time,
        commits_walked: history.commits.len() as u64,
        remedy_commits: remedies.len() as u64,
        tasks_named: mentions.len() as u64,
        rules: PreregRef {
            path: p2.source,
            sha256: p2.sha256,
        },
    };
    Ok((mentions, summary))
}

/// Inputs read and analysed, before any report is rendered (shared by `phase0 p3` and `phase0 p3 audit`).
struct Analysed {
    prereg: Prereg<p3::P3Spec>,
    template: String,
    report: Envelope<render::P3Report>,
    boards: Vec<board::Board>,
}

fn analyse(args: &P3Args) -> Result<Analysed, CommandError> {
    crate::timing::mark("p3: start");
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    let mut prereg = Prereg::p3(args.prereg.as_deref()).map_err(|e| input(&e))?;
    let preregistered_window = prereg.spec.window_days;
    if let Some(days) = args.window_days {
        if days == 0 {
            return Err(CommandError::Input("--window-days must be at least 1".into()));
        }
        prereg.spec.window_days = days;
    }
    if let Some(repo) = &args.repo
        && std::fs::symlink_metadata(repo).is_err_and(|error| error.kind() == std::io::ErrorKind::NotFound)
    {
        return Err(CommandError::Input(format!(
            "{}: the repository path does not exist",
            repo.display()
        )));
    }
    if args.data_dir.is_some() && args.repo.is_none() {
        return Err(CommandError::Input(
            "--data-dir needs --repo (the repository that keeps the task files)".into(),
        ));
    }
    if args.history_rev.is_some() && (args.repo.is_none() || !(args.inputs.is_empty() || args.data_dir.is_some())) {
        return Err(CommandError::Input(
            "--history-rev needs --repo and task files read from it (no board exports, or --data-dir)".into(),
        ));
    }
    if args.inputs.is_empty() && args.repo.is_none() {
        return Err(CommandError::Input(
            "p3 needs board exports, or --repo to read task files kept in git".into(),
        ));
    }
    let format = match args.format.as_str() {
        "auto" | "" => None,
        name => Some(
            name.parse::<Format>()
                .map_err(|e| input(&format!("--format {name}: {e}")))?,
        ),
    };
    let tz = match args.tz.as_deref() {
        None => jiff::tz::TimeZone::UTC,
        Some(name) => jiff::tz::TimeZone::get(name)
            .map_err(|e| CommandError::Input(format!("--tz {name}: not a known time zone ({e})")))?,
    };
    let template = super::template(args.templates.as_deref(), "p3.md.j2", render::P3_TEMPLATE)?;
    let as_of = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|e| input(&e))?;

    let mut boards = Vec::with_capacity(args.inputs.len());
    let mut files = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        let bytes = crate::scan::corpus::read_file(path)
            .map_err(|error| CommandError::Input(format!("{}: cannot read: {error}", path.display())))?;
        // A GitHub timeline file joins the issue list given before it (it is not a board of its own).
        if board::is_github_timeline(&bytes)
            && let Some(previous) = boards
                .last_mut()
                .filter(|b: &&mut board::Board| b.format == Format::GithubJson)
        {
            board::join_github_timeline(previous, path, &bytes, &tz).map_err(|e| input(&e))?;
            files.push(InputFile::new(path, &bytes, None));
            continue;
        }
        // The input's digest (for the report) is computed while it is parsed: on a 125 MB export it costs about
        // as much as the parse.
        let (board, sha256) = rayon::join(
            || match format {
                Some(format) => board::read(path, &bytes, format, &tz),
                None => board::sniff(path, &bytes).and_then(|sniffed| {
                    let mut board = board::read(path, &bytes, sniffed.format, &tz)?;
                    board.format_reason = Some(sniffed.reason);
                    Ok(board)
                }),
            },
            || crate::prereg::sha256_hex(&bytes),
        );
        let board = board.map_err(|e| input(&e))?;
        files.push(InputFile::with_sha256(
            path,
            sha256,
            bytes.len() as u64,
            Some(board.tasks.len() as u64),
        ));
        boards.push(board);
    }
    let mut task_files = None;
    if let Some(repo) = &args.repo
        && (args.inputs.is_empty() || args.data_dir.is_some())
    {
        let rules = prereg.spec.history.as_ref();
        let options = crate::scan::task_history::HistoryOptions {
            split_reused_ids: rules.is_some_and(|h| h.id_reuse),
            identity: crate::scan::task_history::IdentityRule {
                title_overlap_below: rules.and_then(|h| h.reuse_title_overlap_below),
                created_apart_seconds: rules.and_then(|h| h.reuse_created_apart_seconds),
            },
            only_files: Vec::new(),
            newest_copy: false,
            identity_timelines: rules.is_some_and(|h| h.identity_at_signal),
        };
        let beads_files: &[String] = rules.map_or(&[], |h| h.task_files.as_slice());
        let (board, summary) = task_files_board(
            repo,
            args.data_dir.as_deref(),
            args.history_rev.as_deref(),
            format,
            &tz,
            options,
            beads_files,
        )?;
        boards.push(board);
        task_files = Some(summary);
    }
    let as_of_instant = as_of.as_deref().and_then(|at| at.parse::<jiff::Timestamp>().ok());
    let commits = match &args.repo {
        None => None,
        Some(repo) => Some(commit_mentions(
            repo,
            &boards,
            prereg.spec.history.as_ref().map_or(&[], |h| h.passing_words.as_slice()),
        )?),
    };
    crate::timing::mark("inputs read");
    let analysis = p3::analyze_with_commits(
        &boards,
        &prereg.spec,
        as_of_instant,
        commits.as_ref().map(|(mentions, _)| mentions),
    );
    let generated_at = as_of.or_else(|| analysis.as_of.clone());
    crate::timing::mark("analysed");

    let mut report = Envelope::new(
        "phase0 p3",
        PreregRef {
            path: prereg.source.clone(),
            sha256: prereg.sha256.clone(),
        },
        generated_at,
        render::P3Report {
            window_overridden: (prereg.spec.window_days != preregistered_window).then_some(preregistered_window),
            repository: commits.map(|(_, summary)| summary),
            task_files,
            analysis,
            audit: None,
        },
    );
    if let Some(task_files) = &report.report.task_files
        && task_files.versions_missing > 0
    {
        report.status = envelope::Status::Partial;
        report.error_code = Some("missing-objects".to_string());
    }
    report.inputs = files;
    Ok(Analysed {
        prereg,
        template,
        report,
        boards,
    })
}

pub fn run(args: &P3Args) -> Result<P3Outcome, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    // A sheet that cannot be read fails before the inputs are.
    let sheet = match &args.audit {
        Some(path) => Some((
            path.display().to_string(),
            p3_audit::read_sheet_file(path).map_err(|e| input(&e))?,
        )),
        None => None,
    };
    let Analysed {
        prereg,
        template,
        mut report,
        boards,
    } = analyse(args)?;
    if let Some((path, rows)) = sheet {
        let analysis = &mut report.report.analysis;
        let audit = p3_audit::evaluate(path, &rows, analysis, &prereg.spec.audit, prereg.spec.alpha);
        analysis.verdict = p3_audit::decide_on_corrected(&audit, analysis.threshold);
        report.report.audit = Some(audit);
    }
    report.artifacts = vec![
        "p3.json".into(),
        "p3.md".into(),
        render::TASKS_CSV.into(),
        render::TASKS_PARQUET.into(),
        render::SIGNALS_CSV.into(),
        render::DETECTION_SVG.into(),
    ];
    // The per-row tables of a large export (a million tasks) take seconds each; they are independent.
    let analysis = &report.report.analysis;
    let ((tasks, tasks_parquet), (signals, detection)) = rayon::join(
        || rayon::join(|| render::tasks_csv(analysis), || render::tasks_parquet(analysis)),
        || {
            rayon::join(
                || render::signals_csv(analysis),
                || crate::report::plots::p3_detection_svg(analysis, prereg.spec.alpha),
            )
        },
    );
    let tasks = tasks.map_err(|e| input(&e))?;
    let tasks_parquet = tasks_parquet.map_err(|e| CommandError::Runtime(e.to_string()))?;
    let signals = signals.map_err(|e| input(&e))?;
    let markdown = render::markdown(&template, &report, &prereg.spec).map_err(|e| input(&e))?;
    let json = report.to_json().map_err(CommandError::serialise("p3.json"))?;
    crate::timing::mark("rendered");
    let written = write_report_set(
        &args.out,
        &[
            ("p3.json".to_string(), json.clone()),
            ("p3.md".to_string(), markdown.into_bytes()),
            (render::TASKS_CSV.to_string(), tasks),
            (render::TASKS_PARQUET.to_string(), tasks_parquet),
            (render::SIGNALS_CSV.to_string(), signals),
            (render::DETECTION_SVG.to_string(), detection.into_bytes()),
        ],
    )?;
    crate::timing::mark("reports written");
    let summary = render::stdout_block(&report, &prereg.spec);
    // Freeing a million tasks and their rows takes a quarter of a second that nobody waits for: a thread of its own
    // does it, and the command line's process may exit first (the system takes the memory back whole). Should no
    // thread start, `spawn` drops them here instead (never a panic, unlike `std::thread::spawn`).
    let _ = std::thread::Builder::new()
        .name("p3-free".into())
        .spawn(move || drop((report, boards)));
    Ok(P3Outcome { summary, json, written })
}

/// `phase0 p3 audit`: the sample sheet of the eligible tasks the rules decided about, instead of the reports.
pub fn write_audit(
    args: &P3Args,
    per_stratum: Option<usize>,
    sheet: &std::path::Path,
) -> Result<P3Outcome, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    if args.audit.is_some() {
        return Err(input(
            &"--audit reads a filled sheet; `phase0 p3 audit` writes one: give one of them",
        ));
    }
    if let Some(refused) = crate::prereg::per_stratum_refused(per_stratum) {
        return Err(input(&refused));
    }
    let Analysed {
        prereg, report, boards, ..
    } = analyse(args)?;
    let mut spec = prereg.spec.audit.clone();
    if let Some(n) = per_stratum {
        spec.per_stratum = n;
    }
    let analysis = &report.report.analysis;
    // The subjects of the commits the sampled signals name, when the task files come from a repository.
    let repo = args.repo.as_deref().and_then(|path| crate::scan::git::open(path).ok());
    let rows = p3_audit::sample(analysis, &boards, &spec, |commits| match &repo {
        Some(repo) => crate::scan::git::commit_subjects(repo, commits),
        None => Default::default(),
    });
    let bytes = p3_audit::write_sheet(&rows).map_err(|e| input(&e))?;
    let written = super::write_file_atomically(sheet, bytes)?;
    let of = |stratum: p3_audit::Stratum| rows.iter().filter(|r| r.stratum == stratum).count();
    let c = &analysis.counts;
    let summary = format!(
        "P3 audit sheet — {} of {} tasks with a counted signal and {} of {} with only set-aside signals ({} eligible), \
         at most {} per stratum, seed {}\n  written         {}\n  next            fill genuine (yes, no, unclear) and note; then \
         `phase0 p3 … --audit {}` with the same inputs\n",
        of(p3_audit::Stratum::Counted),
        c.with_signal,
        of(p3_audit::Stratum::SetAside),
        c.set_aside_only,
        c.eligible,
        spec.per_stratum,
        spec.seed,
        sheet.display(),
        sheet.display(),
    );
    Ok(P3Outcome {
        summary,
        json: Vec::new(),
        written,
    })
}
