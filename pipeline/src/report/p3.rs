//! P3's renderers: the markdown report (`templates/p3.md.j2`) and the stdout block.

use serde::Serialize;

use super::envelope::Envelope;
use super::{TemplateError, percent, percent_ci};
use crate::experiments::p3::P3Analysis;
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
}

/// The task files read from a repository's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskFiles {
    pub repository: String,
    /// Repository-relative, as read (a file, or a directory of `*.jsonl` files).
    pub path: String,
    pub tip: String,
    pub commits_walked: u64,
    /// Commits that changed the files, and those whose version could not be read (skipped, named in notes).
    pub versions_read: u64,
    pub versions_skipped: u64,
    pub files: Vec<String>,
}

/// What `--repo` contributed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepositoryMentions {
    pub path: String,
    pub tip: Option<String>,
    pub commits_walked: u64,
    /// Reverts, `Fixes:` commits and fixes by P2's rules.
    pub remedy_commits: u64,
    /// Distinct tasks of the inputs that those commits name.
    pub tasks_named: u64,
    /// The P2 pre-registration whose detection rules were used.
    pub rules: super::envelope::PreregRef,
}

pub const TASKS_CSV: &str = "p3-tasks.csv";

/// Every completed task with its signals as CSV (`input` is the 0-based index of the input file).
pub fn tasks_csv(analysis: &P3Analysis) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["input", "id", "completed", "censored", "signals"])?;
    for task in &analysis.tasks {
        writer.write_record([
            task.input.to_string().as_str(),
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
        inputs: &'a [super::envelope::InputFile],
        window_overridden: Option<u32>,
        repository: &'a Option<RepositoryMentions>,
        task_files: &'a Option<TaskFiles>,
        analysis: &'a P3Analysis,
        interval_label: String,
        base_rate: String,
        base_rate_ci: String,
        input_rates: Vec<(String, String)>,
    }
    let analysis = &envelope.report.analysis;
    let view = View {
        prereg_title: &spec.title,
        kill_text: &spec.kill.text,
        hypothesis: &spec.hypothesis,
        generated_at: envelope
            .generated_at
            .as_deref()
            .unwrap_or("not given (use --as-of or SOURCE_DATE_EPOCH)"),
        prereg_path: &envelope.prereg.path,
        prereg_sha256: &envelope.prereg.sha256,
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
    out.push_str(&format!(
        "  base rate       {} of {} = {} {} ({} wrong, {} right)\n",
        c.with_signal,
        c.eligible,
        percent(&a.base_rate),
        percent_ci(&a.base_rate),
        c.wrong,
        c.right
    ));
    if !a.unobservable.is_empty() {
        out.push_str(&format!("  not observable  {}\n", a.unobservable.join(", ")));
    }
    let needed = (a.verdict.n_still_needed > 0).then(|| {
        format!(
            "  tasks needed    {} more eligible ({} in all)",
            a.verdict.n_still_needed, a.verdict.n_required
        )
    });
    super::verdict_lines(&mut out, a.verdict.kind, &a.verdict.reasons, needed, &envelope.prereg);
    out
}
