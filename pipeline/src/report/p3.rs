//! P3's renderers: the markdown report (`templates/p3.md.j2`) and the stdout block.

use serde::Serialize;

use super::envelope::Envelope;
use super::{TemplateError, percent, percent_ci};
use crate::experiments::p3::{P3Analysis, Sensitivity, VerdictKind};
use crate::experiments::p3_audit::P3Audit;
use crate::prereg::P3Spec;

/// `templates/p3.md.j2` as shipped; `--templates DIR` may replace it.
pub const P3_TEMPLATE: &str = include_str!("../../../templates/p3.md.j2");

/// The body of `p3.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P3Report {
    /// The pre-registered window, when `--window-days` replaced it.
    pub window_overridden: Option<u32>,
    /// With `--repo`: the repository whose remedy commits were read for `wrong.commit`.
    pub repository: Option<RepositoryMentions>,
    /// Task files kept in git whose history was read (`--repo` without inputs, or `--data-dir`).
    pub task_files: Option<TaskFiles>,
    pub analysis: P3Analysis,
    /// With `--audit SHEET`: what the reader found; the verdict in `analysis` is then decided on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<P3Audit>,
}

/// The task files read from a repository's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskFiles {
    pub repository: String,
    /// Repository-relative, as read (a file, or a directory of `*.jsonl` files).
    pub path: String,
    /// The revision whose history was read: `HEAD`, `--history-rev`, or the reference of beads' sync branch.
    pub revision: String,
    /// The sync branch `.beads/config.yaml` names, when the default task files were read.
    pub sync_branch: Option<SyncBranch>,
    pub tip: String,
    pub commits_walked: u64,
    /// Commits that changed the files, and those whose version could not be read (skipped, named in notes).
    pub versions_read: u64,
    pub versions_skipped: u64,
    /// Of the skipped versions, those whose blob is missing from the repository (a partial clone).
    pub versions_missing: u64,
    pub skipped: Vec<SkippedVersion>,
    /// The time of the newest commit walked.
    pub tip_time: String,
    /// Tasks split off an id a later task reused.
    pub ids_reused: u64,
    pub files: Vec<String>,
    /// The task files were deleted and not written again up to the tip; their tasks are as last seen, removed then.
    pub deleted: Option<DeletedTaskFiles>,
}

/// Where the task files left the history read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeletedTaskFiles {
    /// The first commit without them, and its time.
    pub commit: String,
    pub time: String,
    /// `.beads/metadata.json` of the revision read names beads' Dolt backend: the tasks are kept outside git since.
    pub dolt: bool,
}

/// Beads' sync branch, as `.beads/config.yaml` names it, and whether this clone has it (else `HEAD` was read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncBranch {
    pub name: String,
    /// The task files were read from it; otherwise from `HEAD`, for the reason given.
    pub read: bool,
    /// "is not in this clone", or "holds no task file" (a branch created and never synced).
    pub not_read_because: Option<String>,
}

/// Read from beads' sync branch, whose commits change only the task files, the administrative-reclose rule sees no
/// code commit between a reopen and its close, so it sets aside every reopen closed again there.
fn reads_sync_branch_with_administrative_rule(envelope: &Envelope<P3Report>) -> bool {
    let on_sync_branch = envelope
        .report
        .task_files
        .as_ref()
        .and_then(|f| f.sync_branch.as_ref())
        .is_some_and(|b| b.read);
    on_sync_branch
        && envelope
            .report
            .analysis
            .exclusions
            .contains_key("administrative-reclose")
}

const SYNC_BRANCH_RECLOSE_LINE: &str = "  sync branch     administrative-reclose reads the branch's own commits, which change only the task \
                                       files: every reopen closed again there is set aside (docs/p3.md)\n";

/// A version of a task file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedVersion {
    pub commit: String,
    pub time: String,
    /// Its blob is missing from the repository (rather than unreadable).
    pub missing: bool,
    pub message: String,
}

/// What `--repo` contributed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepositoryMentions {
    pub path: String,
    pub tip: Option<String>,
    /// The tip's committer time.
    pub tip_time: Option<String>,
    pub commits_walked: u64,
    /// Reverts, `Fixes:` commits and fixes by P2's rules.
    pub remedy_commits: u64,
    /// Distinct tasks of the inputs that those commits name.
    pub tasks_named: u64,
    /// The P2 pre-registration whose detection rules were used.
    pub rules: super::envelope::PreregRef,
}

pub const TASKS_CSV: &str = "p3-tasks.csv";
/// The rows of [`TASKS_CSV`] as Parquet (schema: docs/p3.md).
pub const TASKS_PARQUET: &str = "p3-tasks.parquet";
pub const SIGNALS_CSV: &str = "p3-signals.csv";
/// The share of eligible tasks with a signal by day since completion ([`super::plots::p3_detection_svg`]).
pub const DETECTION_SVG: &str = "p3-detection.svg";

/// The evidence of every signal of an eligible task within its window, counted or left out by a rule, as CSV:
/// one line per event, for a reader to check (`excluded_by` empty: counted; `input` is the input file's path as
/// the report names it, as in [`tasks_csv`]).
pub fn signals_csv(analysis: &P3Analysis) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "input",
        "task",
        "signal",
        "at",
        "commit",
        "excluded_by",
        "completed",
        "detail",
    ])?;
    for row in &analysis.evidence {
        let detail = capture::redact::redact(&row.detail);
        let input = analysis.inputs.get(row.input).map(|input| input.path.clone());
        writer.write_record([
            input.unwrap_or_else(|| row.input.to_string()).as_str(),
            &row.task,
            row.signal,
            &row.at,
            &row.commit,
            row.excluded_by.unwrap_or(""),
            &row.completed,
            &detail,
        ])?;
    }
    writer.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// Every completed task with its signals as Parquet: the rows and columns of [`tasks_csv`], the signals a list
/// (schema: docs/p3.md).
pub fn tasks_parquet(analysis: &P3Analysis) -> Result<Vec<u8>, super::parquet::TableError> {
    super::parquet::table(TASKS_PARQUET, crate::experiments::frames::p3_tasks(analysis))
}

/// Every completed task with its signals as CSV (`input` is the input file's path as the report names it).
pub fn tasks_csv(analysis: &P3Analysis) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["input", "id", "completed", "censored", "signals"])?;
    for task in &analysis.tasks {
        let input = analysis.inputs.get(task.input).map(|input| input.path.clone());
        writer.write_record([
            input.unwrap_or_else(|| task.input.to_string()).as_str(),
            &task.id,
            &task.completed,
            if task.censored { "true" } else { "false" },
            &task.signals.join(";"),
        ])?;
    }
    writer.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// Renders `template` (the source of `p3.md.j2`) for the report in `envelope`.
pub fn markdown(template: &str, envelope: &Envelope<P3Report>, spec: &P3Spec) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct View<'a> {
        prereg_title: &'a str,
        kill_text: &'a str,
        hypothesis: &'a str,
        generated_at: &'a str,
        prereg_path: &'a str,
        prereg_sha256: &'a str,
        prereg_version: u32,
        inputs: &'a [super::envelope::InputFile],
        window_overridden: Option<u32>,
        repository: &'a Option<RepositoryMentions>,
        task_files: &'a Option<TaskFiles>,
        analysis: &'a P3Analysis,
        interval_label: String,
        base_rate: String,
        base_rate_ci: String,
        input_rates: Vec<(String, String)>,
        exclusion_rules: Vec<(&'static str, &'static str)>,
        detection_svg: &'static str,
        audit: &'a Option<P3Audit>,
        /// Per stratum of the audit, genuine of read with its interval; the corrected rate and its interval.
        audit_precision: Vec<String>,
        audit_rate: String,
        audit_rate_ci: String,
    }
    let analysis = &envelope.report.analysis;
    let (audit_rate, audit_rate_ci) = envelope.report.audit.as_ref().map_or_else(Default::default, |a| {
        (percent(&a.corrected.rate), percent_ci(&a.corrected.rate))
    });
    let view = View {
        prereg_title: &spec.title,
        kill_text: &spec.kill.text,
        hypothesis: &spec.hypothesis,
        generated_at: envelope.generated_at_text(),
        prereg_path: &envelope.prereg.path,
        prereg_sha256: &envelope.prereg.sha256,
        prereg_version: spec.version,
        inputs: &envelope.inputs,
        window_overridden: envelope.report.window_overridden,
        repository: &envelope.report.repository,
        task_files: &envelope.report.task_files,
        analysis,
        interval_label: format!("{}% interval", 100.0 * (1.0 - spec.alpha)),
        base_rate: percent(&analysis.base_rate),
        base_rate_ci: percent_ci(&analysis.base_rate),
        input_rates: analysis
            .inputs
            .iter()
            .map(|i| (percent(&i.base_rate), percent_ci(&i.base_rate)))
            .collect(),
        exclusion_rules: crate::experiments::p3::EXCLUSIONS
            .iter()
            .chain(&crate::experiments::p3::EXCLUSIONS_V3)
            .chain(&crate::experiments::p3::EXCLUSIONS_V4)
            .chain(&crate::experiments::p3::EXCLUSIONS_V5)
            .filter(|(id, _)| analysis.exclusions.contains_key(id))
            .copied()
            .collect(),
        detection_svg: DETECTION_SVG,
        audit: &envelope.report.audit,
        audit_precision: envelope
            .report
            .audit
            .iter()
            .flat_map(|a| &a.strata)
            .map(|s| match s.precision {
                None => "–".to_owned(),
                some => format!("{} {}", percent(&some), percent_ci(&some)),
            })
            .collect(),
        audit_rate,
        audit_rate_ci,
    };
    super::render_markdown("p3.md.j2", template, &view)
}

/// The block `phase0 p3` prints: the kill condition verbatim, the numbers behind it, the verdict, the prereg hash.
pub fn stdout_block(envelope: &Envelope<P3Report>, spec: &P3Spec) -> String {
    let a = &envelope.report.analysis;
    let c = &a.counts;
    let mut out = String::new();
    out.push_str(&format!(
        "P3 detectability — kill condition (pre-registered): {}\n",
        spec.kill.text
    ));
    for input in &a.inputs {
        out.push_str(&format!(
            "  input           {} ({}{}): {} tasks\n",
            input.path,
            input.format,
            if input.format_reason.is_some() { ", sniffed" } else { "" },
            input.counts.tasks
        ));
    }
    out.push_str(&format!(
        "  tasks           {} completed with the {}-day window elapsed, {} censored, {} never completed, {} without a completion time\n",
        c.eligible, a.window_days, c.censored, c.not_completed, c.completion_unknown
    ));
    if let Some(files) = &envelope.report.task_files {
        let on = match &files.sync_branch {
            Some(branch) if branch.read => format!(" on {} (sync branch of .beads/config.yaml)", files.revision),
            _ if files.revision != "HEAD" => format!(" on {}", files.revision),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  task file       {}{on}: {} in {}",
            files.path,
            super::count(files.versions_read, "version", "versions"),
            super::count(files.commits_walked, "commit", "commits")
        ));
        if files.versions_skipped == 0 {
            out.push_str(", none skipped\n");
        } else {
            let example = |missing: bool| {
                files
                    .skipped
                    .iter()
                    .find(|s| s.missing == missing)
                    .map(|s| format!(", e.g. commit {}", &s.commit[..s.commit.len().min(9)]))
                    .unwrap_or_default()
            };
            let unreadable = files.versions_skipped - files.versions_missing;
            let mut parts = Vec::new();
            if files.versions_missing > 0 {
                parts.push(format!(
                    "{} with objects missing from the repository (a partial clone?){}",
                    files.versions_missing,
                    example(true)
                ));
            }
            if unreadable > 0 {
                parts.push(format!("{unreadable} unreadable{}", example(false)));
            }
            out.push_str(&format!("; {} skipped: {}\n", files.versions_skipped, parts.join("; ")));
        }
        if let Some(deleted) = &files.deleted {
            out.push_str(&format!(
                "  left git        the task files are in no commit since {} ({}); {}\n",
                &deleted.commit[..deleted.commit.len().min(9)],
                deleted.time,
                if deleted.dolt {
                    "beads keeps its tasks in Dolt (.beads/metadata.json), so later changes are not seen"
                } else {
                    "later changes are not seen"
                }
            ));
        }
        if let Some(branch) = files.sync_branch.as_ref().filter(|b| !b.read) {
            let why = branch.not_read_because.as_deref().unwrap_or("was not read");
            out.push_str(&format!(
                "  sync branch     {} (named in .beads/config.yaml) {why}: {} was read; fetch the branch or give \
                 --history-rev\n",
                branch.name, files.revision
            ));
        }
    }
    let newest_commit = envelope
        .report
        .task_files
        .as_ref()
        .map(|f| f.tip_time.clone())
        .or_else(|| envelope.report.repository.as_ref().and_then(|r| r.tip_time.clone()));
    if let (Some(as_of), Some(newest)) = (&a.as_of, newest_commit) {
        let days = match (as_of.parse::<jiff::Timestamp>(), newest.parse::<jiff::Timestamp>()) {
            (Ok(as_of), Ok(newest)) => newest.duration_since(as_of).as_secs() / 86_400,
            _ => 0,
        };
        let distance = match days {
            0 => "the same day".to_owned(),
            d if d > 0 => format!("{d} days after the as-of date"),
            d => format!("{} days before the as-of date", -d),
        };
        out.push_str(&format!(
            "  as of           {as_of}; newest commit {newest}, {distance}\n"
        ));
    }
    if c.removed > 0 {
        out.push_str(&format!(
            "  removed         {} tasks left the task file ({} of them ids reused by another task); {} completed were removed before their window elapsed (left out)\n",
            c.removed, c.ids_reused, c.removed_before_window
        ));
    }
    if !a.exclusions.is_empty() {
        let list: Vec<String> = a
            .exclusions
            .iter()
            .map(|(rule, e)| format!("{rule} {}", e.count))
            .collect();
        out.push_str(&format!(
            "  excluded        {} (would-be signals set aside by rule; examples in p3.md, all in {SIGNALS_CSV})\n",
            list.join(", ")
        ));
        if reads_sync_branch_with_administrative_rule(envelope) {
            out.push_str(SYNC_BRANCH_RECLOSE_LINE);
        }
    }
    out.push_str(&format!(
        "  base rate       {} of {} = {} {} ({} wrong, {} right)\n",
        c.with_signal,
        c.eligible,
        percent(&a.base_rate),
        percent_ci(&a.base_rate),
        c.wrong,
        c.right
    ));
    if c.flapping > 0 {
        out.push_str(&format!(
            "  flapping        {} of the {} tasks with a signal left a closed category {} times or more within a day \
             (a tool syncing the task file with another tracker writes statuses like that; counted all the same)\n",
            c.flapping,
            c.with_signal,
            crate::experiments::p3::FLAP_REOPENS
        ));
    }
    if let Some(s) = &a.sensitivity {
        // Computed on the rules' counts: with an audit, the verdict they speak of is the one before it.
        let (label, verdict) = match &envelope.report.audit {
            Some(audit) => ("the unaudited verdict", audit.raw_verdict.kind),
            None => ("the verdict", a.verdict.kind),
        };
        sensitivity_lines(&mut out, s, label, verdict, c.with_signal);
    }
    if let Some(audit) = &envelope.report.audit {
        audit_lines(&mut out, audit);
    }
    if !a.unobservable.is_empty() {
        out.push_str(&format!("  not observable  {}\n", a.unobservable.join(", ")));
    }
    super::share_verdict_lines(&mut out, &a.verdict, "tasks needed", "eligible", &envelope.prereg);
    out
}

/// The stdout lines of [`Sensitivity`]: how many set-aside tasks would have to be genuine, or counted ones artifacts,
/// before the verdict changes (the second only when it can).
fn sensitivity_lines(out: &mut String, s: &Sensitivity, label: &str, verdict: VerdictKind, with_signal: u64) {
    if s.set_aside_only > 0 {
        let holds = if s.set_aside_tolerated == s.set_aside_only {
            format!("{label} stays {verdict} even if all of them are genuine")
        } else {
            format!(
                "{label} stays {verdict} unless more than {} of them are genuine ({} if all are; read some: \
                 excluded_by in {SIGNALS_CSV})",
                s.set_aside_tolerated, s.if_all_set_aside_counted
            )
        };
        out.push_str(&format!(
            "  set aside       {} eligible tasks have only set-aside signals; {holds}\n",
            s.set_aside_only
        ));
    }
    if s.counted_tolerated < with_signal {
        out.push_str(&format!(
            "  counted         {label} stays {verdict} unless more than {} of the {with_signal} tasks with a signal \
             are artifacts ({} if none counts)\n",
            s.counted_tolerated, s.if_none_counted
        ));
    }
}

/// The stdout lines of an audit read back: each stratum's reading, the corrected rate, the verdict before it.
fn audit_lines(out: &mut String, audit: &P3Audit) {
    let strata: Vec<String> = audit
        .strata
        .iter()
        .filter(|s| s.population > 0)
        .map(|s| match s.audited {
            0 => format!("{} none read (kept as the rules decided)", s.stratum.id()),
            n => format!(
                "{} {} of {n} read genuine ({} {})",
                s.stratum.id(),
                s.genuine,
                percent(&s.precision),
                percent_ci(&s.precision)
            ),
        })
        .collect();
    out.push_str(&format!(
        "  audit           {}: {}; audit-corrected base rate {} {} (verdict before the audit: {})\n",
        audit.sheet,
        if strata.is_empty() {
            "no stratum to read".to_owned()
        } else {
            strata.join(", ")
        },
        percent(&audit.corrected.rate),
        percent_ci(&audit.corrected.rate),
        audit.raw_verdict.kind
    ));
    if audit.unmatched > 0 {
        out.push_str(&format!(
            "  audit rows      {} of the sheet's {} rows name no task of their stratum in this run (left out): {}\n",
            audit.unmatched,
            audit.rows,
            audit.unmatched_examples.join(", ")
        ));
    }
}
