//! The weekly reports' own documents: `week.json` / `week.md` for one week, and `index.json` / `index.md` over
//! every week present, with the trend of the newest week against the one before it.
//!
//! The index is a pure function of the `week.json` files, so re-running any week regenerates it identically.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Number;

use super::TemplateError;
use super::run::{Experiment, ExperimentRun, RunStatus};

/// `templates/weekly-index.md.j2` as shipped; `--templates DIR` may replace it.
pub const INDEX_TEMPLATE: &str = include_str!("../../../templates/weekly-index.md.j2");
/// `templates/weekly-week.md.j2` as shipped; `--templates DIR` may replace it.
pub const WEEK_TEMPLATE: &str = include_str!("../../../templates/weekly-week.md.j2");

pub const WEEK_SCHEMA: &str = "phase0.week.v1";
pub const INDEX_SCHEMA: &str = "phase0.weekly-index.v1";

/// How a headline number is printed and how its change is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// A whole number (`400`); its change is a difference (`+12`).
    Count,
    /// A score in [0, 1] printed with four decimals (`0.6366`).
    Score,
    /// A share in [0, 1] printed as a percentage (`42.9%`); its change is in percentage points.
    Share,
    /// Percentage points (`+4.00pp`).
    Points,
}

/// One headline number of a week's experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub key: String,
    pub label: String,
    pub kind: MetricKind,
    /// `null` when the report has no value (an undefined AUC, no classified failures, …).
    pub value: Option<Number>,
    /// The value's interval as the report gives it, when it has one (absent in weeks written before it was
    /// recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<[Number; 2]>,
    /// The pre-registered kill threshold on the value, when the report records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Number>,
}

/// One experiment of one week.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentWeek {
    pub experiment: Experiment,
    pub title: String,
    pub status: RunStatus,
    /// Why it did not run.
    pub reason: Option<String>,
    /// `PASS`, `KILL` or `INCONCLUSIVE` when it ran.
    pub verdict: Option<String>,
    /// The report's own status (`ok`, or `partial` for skipped rows or a shallow clone).
    pub report_status: Option<String>,
    /// The report, relative to the week's directory.
    pub report: Option<String>,
    pub headline: Vec<Metric>,
    /// What the power analysis still asks for (rows for P1, classified failures for P2, eligible tasks for P3)
    /// when it is more than the report has; absent otherwise (and in weeks written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_needed: Option<u64>,
}

impl ExperimentWeek {
    /// The verdict, or the status when it did not run: what the index's cells and trend compare.
    pub fn outcome(&self) -> String {
        match (&self.verdict, self.status) {
            (Some(verdict), RunStatus::Ok) => verdict.clone(),
            (_, RunStatus::Ok) => "no verdict".to_string(),
            (_, RunStatus::Missing) => "missing".to_string(),
            (_, RunStatus::Failed) => "failed".to_string(),
        }
    }

    fn value(&self, key: &str) -> Option<&Number> {
        self.headline
            .iter()
            .find(|m| m.key == key)
            .and_then(|m| m.value.as_ref())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeekStatus {
    /// All three experiments ran.
    Ok,
    /// At least one did not (missing input or failure); the others' reports were written.
    Partial,
}

/// The weekly config a week ran with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigRef {
    /// The file given with `--config`, or `experiments/weekly.toml (embedded)`.
    pub path: String,
    pub sha256: String,
}

/// `week.json`: what one week's run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeekSummary {
    pub schema: String,
    /// ISO week, `2026-W47`.
    pub week: String,
    /// From `--as-of` / `SOURCE_DATE_EPOCH`; `null` when neither was given (never the clock).
    pub as_of: Option<String>,
    /// The config file, or `experiments/weekly.toml (embedded)`, and the sha256 of its bytes.
    pub config: ConfigRef,
    pub status: WeekStatus,
    /// P1, P2, P3 in that order.
    pub experiments: Vec<ExperimentWeek>,
}

impl WeekSummary {
    pub fn experiment(&self, experiment: Experiment) -> Option<&ExperimentWeek> {
        self.experiments.iter().find(|e| e.experiment == experiment)
    }
}

/// The headline numbers of each experiment: (key, label, kind, JSON pointer into its report).
pub fn metric_specs(experiment: Experiment) -> &'static [(&'static str, &'static str, MetricKind, &'static str)] {
    match experiment {
        Experiment::P1 => &[
            ("n", "rows", MetricKind::Count, "/report/metrics/n"),
            ("auc", "AUC", MetricKind::Score, "/report/metrics/auc/value"),
            (
                "lift_pp",
                "high-subset lift",
                MetricKind::Points,
                "/report/metrics/lift_pp/estimate",
            ),
        ],
        Experiment::P2 => &[
            (
                "classified",
                "classified failures",
                MetricKind::Count,
                "/report/analysis/counts/classified",
            ),
            (
                "self_reflection_share",
                "only-self-reflection share",
                MetricKind::Share,
                "/report/analysis/shares/self_reflection/estimate",
            ),
        ],
        Experiment::P3 => &[
            (
                "eligible",
                "eligible tasks",
                MetricKind::Count,
                "/report/analysis/counts/eligible",
            ),
            (
                "base_rate",
                "detectable share",
                MetricKind::Share,
                "/report/analysis/base_rate/estimate",
            ),
        ],
    }
}

/// Where a headline number's interval (`lo`, `hi`) and kill threshold are in its report, if anywhere.
fn interval_pointers(experiment: Experiment, key: &str) -> (Option<[&'static str; 2]>, Option<&'static str>) {
    match (experiment, key) {
        (Experiment::P1, "auc") => (Some(["/report/metrics/auc/ci/0", "/report/metrics/auc/ci/1"]), None),
        (Experiment::P1, "lift_pp") => (Some(["/report/metrics/lift_pp/lo", "/report/metrics/lift_pp/hi"]), None),
        (Experiment::P2, "self_reflection_share") => (
            Some([
                "/report/analysis/shares/self_reflection/lo",
                "/report/analysis/shares/self_reflection/hi",
            ]),
            Some("/report/analysis/threshold"),
        ),
        (Experiment::P3, "base_rate") => (
            Some(["/report/analysis/base_rate/lo", "/report/analysis/base_rate/hi"]),
            Some("/report/analysis/threshold"),
        ),
        _ => (None, None),
    }
}

fn verdict_pointer(experiment: Experiment) -> &'static str {
    match experiment {
        Experiment::P1 => "/report/metrics/verdict/kind",
        Experiment::P2 | Experiment::P3 => "/report/analysis/verdict/kind",
    }
}

/// A report JSON that lacks what the week summary reads from it: a bug, not bad input.
#[derive(Debug, thiserror::Error)]
#[error("{experiment} report: {message}")]
pub struct HeadlineError {
    pub experiment: &'static str,
    pub message: String,
}

/// The week's entry for one experiment run, its numbers read from the report JSON the run wrote.
pub fn experiment_week(run: &ExperimentRun) -> Result<ExperimentWeek, HeadlineError> {
    let experiment = run.experiment;
    let mut week = ExperimentWeek {
        experiment,
        title: experiment.title().to_string(),
        status: run.status,
        reason: run.reason.clone(),
        verdict: None,
        report_status: None,
        report: None,
        headline: Vec::new(),
        still_needed: None,
    };
    let Some(ran) = &run.ran else {
        return Ok(week);
    };
    let error = |message: String| HeadlineError {
        experiment: experiment.id(),
        message,
    };
    let report: serde_json::Value = serde_json::from_slice(&ran.json).map_err(|e| error(format!("not JSON: {e}")))?;
    let text = |pointer: &str| {
        report
            .pointer(pointer)
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| error(format!("no {pointer}")))
    };
    week.verdict = Some(text(verdict_pointer(experiment))?);
    week.report_status = Some(text("/status")?);
    let still_needed = verdict_pointer(experiment).replace("/kind", "/n_still_needed");
    week.still_needed = report
        .pointer(&still_needed)
        .and_then(serde_json::Value::as_u64)
        .filter(|&n| n > 0);
    week.report = Some(format!("{0}/{0}.json", experiment.id()));
    for (key, label, kind, pointer) in metric_specs(experiment) {
        let value = match report.pointer(pointer) {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Number(number)) => Some(number.clone()),
            Some(other) => return Err(error(format!("{pointer} is {other}, not a number"))),
        };
        let number = |pointer: &str| report.pointer(pointer).and_then(|v| v.as_number()).cloned();
        let (bounds, threshold) = interval_pointers(experiment, key);
        let interval = bounds
            .and_then(|[lo, hi]| Some([number(lo)?, number(hi)?]))
            .filter(|_| value.is_some());
        week.headline.push(Metric {
            key: key.to_string(),
            label: label.to_string(),
            kind: *kind,
            value,
            interval,
            threshold: threshold.and_then(number),
        });
    }
    Ok(week)
}

/// One headline number then and now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricTrend {
    pub key: String,
    pub label: String,
    pub kind: MetricKind,
    pub then: Option<Number>,
    pub now: Option<Number>,
    /// `now - then` in the value's own unit (a share's change is a difference of shares, which the markdown prints
    /// in percentage points); `null` when either is.
    pub delta: Option<Number>,
}

/// One experiment, the newest week against the one before it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentTrend {
    pub experiment: Experiment,
    pub title: String,
    /// The verdict, or `missing` / `failed` when it did not run.
    pub verdict_then: String,
    pub verdict_now: String,
    pub verdict_changed: bool,
    pub metrics: Vec<MetricTrend>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trend {
    pub previous: String,
    pub latest: String,
    pub experiments: Vec<ExperimentTrend>,
}

/// `index.json`: every week present, oldest first, and the trend (absent with fewer than two weeks).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Index {
    pub schema: &'static str,
    pub weeks: Vec<WeekSummary>,
    pub trend: Option<Trend>,
}

fn delta(kind: MetricKind, then: Option<&Number>, now: Option<&Number>) -> Option<Number> {
    let (then, now) = (then?, now?);
    if kind == MetricKind::Count
        && let (Some(a), Some(b)) = (then.as_i64(), now.as_i64())
    {
        return Some(Number::from(b - a));
    }
    Number::from_f64(now.as_f64()? - then.as_f64()?)
}

/// The newest week against the previous one present (not necessarily the calendar week before it).
pub fn trend(previous: &WeekSummary, latest: &WeekSummary) -> Trend {
    let experiments = Experiment::ALL
        .into_iter()
        .map(|experiment| {
            let then = previous.experiment(experiment);
            let now = latest.experiment(experiment);
            let outcome = |week: Option<&ExperimentWeek>| week.map_or_else(|| "missing".to_string(), |w| w.outcome());
            let (verdict_then, verdict_now) = (outcome(then), outcome(now));
            let metrics = metric_specs(experiment)
                .iter()
                .map(|(key, label, kind, _)| {
                    let then = then.and_then(|w| w.value(key));
                    let now = now.and_then(|w| w.value(key));
                    MetricTrend {
                        key: key.to_string(),
                        label: label.to_string(),
                        kind: *kind,
                        then: then.cloned(),
                        now: now.cloned(),
                        delta: delta(*kind, then, now),
                    }
                })
                .collect();
            ExperimentTrend {
                experiment,
                title: experiment.title().to_string(),
                verdict_changed: verdict_then != verdict_now,
                verdict_then,
                verdict_now,
                metrics,
            }
        })
        .collect();
    Trend {
        previous: previous.week.clone(),
        latest: latest.week.clone(),
        experiments,
    }
}

/// The index of `weeks` (any order; sorted here by week).
pub fn index(mut weeks: Vec<WeekSummary>) -> Index {
    weeks.sort_by(|a, b| a.week.cmp(&b.week));
    let trend = match weeks.as_slice() {
        [.., previous, latest] => Some(trend(previous, latest)),
        _ => None,
    };
    Index {
        schema: INDEX_SCHEMA,
        weeks,
        trend,
    }
}

impl Index {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> serde_json::Result<Vec<u8>> {
        super::pretty_json(self)
    }
}

impl WeekSummary {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> serde_json::Result<Vec<u8>> {
        super::pretty_json(self)
    }
}

/// The index's trend plot.
pub const TREND_SVG: &str = "index-trend.svg";

/// The weekly trend as SVG: a panel per headline share or score (counts are left to the tables), a point per
/// week with its interval, coloured by the week's verdict, and the kill threshold where the report records it.
pub fn trend_svg(index: &Index) -> String {
    let panels: Vec<super::svg::TrendPanel> = Experiment::ALL
        .iter()
        .flat_map(|&experiment| {
            metric_specs(experiment)
                .iter()
                .filter(|(_, _, kind, _)| *kind != MetricKind::Count)
                .map(move |(key, label, kind, _)| (experiment, *key, *label, *kind))
        })
        .map(|(experiment, key, label, kind)| {
            let metric = |week: &WeekSummary| {
                week.experiment(experiment)
                    .and_then(|e| e.headline.iter().find(|m| m.key == key))
                    .cloned()
            };
            let threshold = index
                .weeks
                .iter()
                .rev()
                .filter_map(|w| metric(w)?.threshold?.as_f64())
                .next();
            let unit = if kind == MetricKind::Points {
                " (percentage points)"
            } else {
                ""
            };
            super::svg::TrendPanel {
                title: format!("{} — {label}{unit}", experiment.title()),
                percent: kind == MetricKind::Share,
                threshold: threshold.map(|t| {
                    (
                        t,
                        format!("kill threshold {}", format_value(kind, Number::from_f64(t).as_ref())),
                    )
                }),
                points: index
                    .weeks
                    .iter()
                    .map(|week| {
                        let m = metric(week);
                        let value = m.as_ref().and_then(|m| m.value.as_ref()?.as_f64());
                        let interval = m
                            .as_ref()
                            .and_then(|m| m.interval.as_ref())
                            .and_then(|[lo, hi]| Some((lo.as_f64()?, hi.as_f64()?)));
                        super::svg::TrendPoint {
                            week: week.week.clone(),
                            value: value.map(|v| (v, interval)),
                            verdict: week
                                .experiment(experiment)
                                .map_or_else(|| "missing".to_string(), ExperimentWeek::outcome),
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    super::svg::trend("phase0 weekly: the verdict numbers by week", &panels)
}

/// A headline number as the markdown prints it; `—` when there is none.
pub fn format_value(kind: MetricKind, value: Option<&Number>) -> String {
    let Some(v) = value.and_then(Number::as_f64) else {
        return "—".to_string();
    };
    match kind {
        MetricKind::Count => value.map_or_else(String::new, Number::to_string),
        MetricKind::Score => format!("{v:.4}"),
        MetricKind::Share => format!("{:.1}%", v * 100.0),
        MetricKind::Points => format!("{v:+.2}pp"),
    }
}

/// A change as the markdown prints it: `+12`, `-0.0123`, `+14.3pp`; `—` when there is none.
pub fn format_delta(kind: MetricKind, delta: Option<&Number>) -> String {
    let Some(d) = delta.and_then(Number::as_f64) else {
        return "—".to_string();
    };
    match kind {
        MetricKind::Count => format!("{:+}", delta.and_then(Number::as_i64).unwrap_or(d as i64)),
        MetricKind::Score => format!("{d:+.4}"),
        MetricKind::Share => format!("{:+.1}pp", d * 100.0),
        MetricKind::Points => format!("{d:+.2}pp"),
    }
}

/// A verdict change as the markdown highlights it: `**PASS → KILL**`, or `unchanged`.
fn verdict_change(then: &str, now: &str) -> String {
    if then == now {
        "unchanged".to_string()
    } else {
        format!("**{then} → {now}**")
    }
}

#[derive(Serialize)]
struct Cell {
    text: String,
    link: Option<String>,
}

fn cell(week: &WeekSummary, experiment: Experiment) -> Cell {
    match week.experiment(experiment) {
        None => Cell {
            text: "missing".to_string(),
            link: None,
        },
        Some(e) => Cell {
            text: e.outcome(),
            link: e
                .report
                .as_ref()
                .map(|_| format!("{}/{}/{}.md", week.week, experiment.id(), experiment.id())),
        },
    }
}

/// Renders `template` (the source of `weekly-index.md.j2`) for `index`.
pub fn index_markdown(template: &str, index: &Index) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct TrendRow {
        experiment: &'static str,
        label: String,
        then: String,
        now: String,
        change: String,
    }
    #[derive(Serialize)]
    struct WeekRow {
        week: String,
        status: WeekStatus,
        cells: Vec<Cell>,
    }
    #[derive(Serialize)]
    struct History {
        title: &'static str,
        labels: Vec<&'static str>,
        rows: Vec<HistoryRow>,
    }
    #[derive(Serialize)]
    struct HistoryRow {
        week: String,
        verdict: Cell,
        values: Vec<String>,
        reason: Option<String>,
    }
    #[derive(Serialize)]
    struct View {
        weeks: usize,
        latest: Option<String>,
        previous: Option<String>,
        trend: Vec<TrendRow>,
        rows: Vec<WeekRow>,
        history: Vec<History>,
        trend_svg: &'static str,
    }
    let mut trend = Vec::new();
    if let Some(t) = &index.trend {
        for e in &t.experiments {
            let title = e.experiment.title();
            trend.push(TrendRow {
                experiment: title,
                label: "verdict".to_string(),
                then: e.verdict_then.clone(),
                now: e.verdict_now.clone(),
                change: verdict_change(&e.verdict_then, &e.verdict_now),
            });
            for m in &e.metrics {
                trend.push(TrendRow {
                    experiment: title,
                    label: m.label.clone(),
                    then: format_value(m.kind, m.then.as_ref()),
                    now: format_value(m.kind, m.now.as_ref()),
                    change: format_delta(m.kind, m.delta.as_ref()),
                });
            }
        }
    }
    // Newest first: the table a reader looks at.
    let rows = index
        .weeks
        .iter()
        .rev()
        .map(|week| WeekRow {
            week: week.week.clone(),
            status: week.status,
            cells: Experiment::ALL.iter().map(|&e| cell(week, e)).collect(),
        })
        .collect();
    let history = Experiment::ALL
        .iter()
        .map(|&experiment| History {
            title: experiment.title(),
            labels: metric_specs(experiment).iter().map(|(_, label, _, _)| *label).collect(),
            rows: index
                .weeks
                .iter()
                .rev()
                .map(|week| {
                    let e = week.experiment(experiment);
                    HistoryRow {
                        week: week.week.clone(),
                        verdict: cell(week, experiment),
                        values: metric_specs(experiment)
                            .iter()
                            .map(|(key, _, kind, _)| format_value(*kind, e.and_then(|e| e.value(key))))
                            .collect(),
                        reason: e.and_then(|e| e.reason.clone()),
                    }
                })
                .collect(),
        })
        .collect();
    let view = View {
        weeks: index.weeks.len(),
        latest: index.weeks.last().map(|w| w.week.clone()),
        previous: index.trend.as_ref().map(|t| t.previous.clone()),
        trend,
        rows,
        history,
        trend_svg: TREND_SVG,
    };
    super::render_markdown("weekly-index.md.j2", template, &view)
}

/// Renders `template` (the source of `weekly-week.md.j2`) for one week; `blocks` are the experiments' stdout
/// blocks by id (absent for one that did not run).
pub fn week_markdown(
    template: &str,
    week: &WeekSummary,
    blocks: &BTreeMap<Experiment, String>,
) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct Section<'a> {
        id: &'static str,
        title: &'a str,
        status: RunStatus,
        reason: Option<&'a str>,
        verdict: String,
        link: Option<String>,
        numbers: Vec<(String, String)>,
        block: Option<&'a str>,
        still_needed: Option<u64>,
    }
    #[derive(Serialize)]
    struct View<'a> {
        week: &'a WeekSummary,
        sections: Vec<Section<'a>>,
    }
    let sections = week
        .experiments
        .iter()
        .map(|e| Section {
            id: e.experiment.id(),
            title: &e.title,
            status: e.status,
            reason: e.reason.as_deref(),
            verdict: e.outcome(),
            link: e.report.as_ref().map(|_| format!("{0}/{0}.md", e.experiment.id())),
            numbers: e
                .headline
                .iter()
                .map(|m| (m.label.clone(), format_value(m.kind, m.value.as_ref())))
                .collect(),
            block: blocks.get(&e.experiment).map(|b| b.trim_end()),
            still_needed: e.still_needed,
        })
        .collect();
    super::render_markdown("weekly-week.md.j2", template, &View { week, sections })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(key: &str, kind: MetricKind, value: Option<Number>) -> Metric {
        Metric {
            key: key.to_string(),
            label: key.to_string(),
            kind,
            value,
            interval: None,
            threshold: None,
        }
    }

    fn week(name: &str, p1: Option<(&str, i64, f64)>, p3_status: RunStatus) -> WeekSummary {
        let p1 = match p1 {
            Some((verdict, n, auc)) => ExperimentWeek {
                experiment: Experiment::P1,
                title: "P1 calibration".into(),
                status: RunStatus::Ok,
                reason: None,
                verdict: Some(verdict.into()),
                report_status: Some("ok".into()),
                report: Some("p1/p1.json".into()),
                headline: vec![
                    metric("n", MetricKind::Count, Some(n.into())),
                    metric("auc", MetricKind::Score, Number::from_f64(auc)),
                    metric("lift_pp", MetricKind::Points, None),
                ],
                still_needed: None,
            },
            None => ExperimentWeek {
                experiment: Experiment::P1,
                title: "P1 calibration".into(),
                status: RunStatus::Missing,
                reason: Some("corpus.jsonl: no such file".into()),
                verdict: None,
                report_status: None,
                report: None,
                headline: Vec::new(),
                still_needed: None,
            },
        };
        let p3 = ExperimentWeek {
            experiment: Experiment::P3,
            title: "P3 detectability".into(),
            status: p3_status,
            reason: None,
            verdict: (p3_status == RunStatus::Ok).then(|| "INCONCLUSIVE".into()),
            report_status: None,
            report: None,
            headline: if p3_status == RunStatus::Ok {
                vec![metric("base_rate", MetricKind::Share, Number::from_f64(0.25))]
            } else {
                Vec::new()
            },
            still_needed: None,
        };
        WeekSummary {
            schema: WEEK_SCHEMA.into(),
            week: name.into(),
            as_of: None,
            config: ConfigRef {
                path: "c".into(),
                sha256: "s".into(),
            },
            status: WeekStatus::Ok,
            experiments: vec![p1, p3],
        }
    }

    #[test]
    fn the_week_page_ends_with_what_each_verdict_means() {
        let mut summary = week("2026-W47", Some(("INCONCLUSIVE", 10, 0.6)), RunStatus::Failed);
        summary.experiments[0].still_needed = Some(196);
        summary.experiments[1].reason = Some("board.json: no such file".into());
        let page = week_markdown(WEEK_TEMPLATE, &summary, &BTreeMap::new()).unwrap();
        let next = &page[page.find("## What this means / next step").expect("the section")..];
        assert!(
            next.contains(
                "- **P1 calibration**: not enough evidence either way yet. The power analysis asks for 196 more \
                 labeled rows: they come from the hook's sidecars"
            ),
            "{next}"
        );
        assert!(next.contains("`phase0 corpus`"), "{next}");
        assert!(
            next.contains("- **P3 detectability**: it did not run (failed): fix its input (board.json: no such file)"),
            "{next}"
        );
        let mut killed = week("2026-W48", Some(("KILL", 500, 0.5)), RunStatus::Ok);
        killed.experiments[1].verdict = Some("PASS".into());
        let page = week_markdown(WEEK_TEMPLATE, &killed, &BTreeMap::new()).unwrap();
        assert!(
            page.contains("- **P1 calibration**: the kill condition is met"),
            "{page}"
        );
        assert!(
            page.contains("- **P3 detectability**: the pre-registered bar is cleared"),
            "{page}"
        );
    }

    #[test]
    fn the_trend_compares_the_two_newest_weeks_value_by_value() {
        let index = index(vec![
            week("2026-W47", Some(("KILL", 450, 0.55)), RunStatus::Failed),
            week("2026-W45", None, RunStatus::Ok),
            week("2026-W46", Some(("INCONCLUSIVE", 400, 0.6412)), RunStatus::Ok),
        ]);
        let weeks: Vec<&str> = index.weeks.iter().map(|w| w.week.as_str()).collect();
        assert_eq!(weeks, ["2026-W45", "2026-W46", "2026-W47"]);
        let trend = index.trend.unwrap();
        assert_eq!(
            (trend.previous.as_str(), trend.latest.as_str()),
            ("2026-W46", "2026-W47")
        );
        let p1 = &trend.experiments[0];
        assert_eq!(
            (p1.verdict_then.as_str(), p1.verdict_now.as_str()),
            ("INCONCLUSIVE", "KILL")
        );
        assert!(p1.verdict_changed);
        assert_eq!(p1.metrics[0].key, "n");
        assert_eq!(p1.metrics[0].delta, Some(Number::from(50)));
        assert_eq!(p1.metrics[1].then.as_ref().and_then(Number::as_f64), Some(0.6412));
        assert_eq!(p1.metrics[1].now.as_ref().and_then(Number::as_f64), Some(0.55));
        let auc_delta = p1.metrics[1].delta.as_ref().and_then(Number::as_f64).unwrap();
        assert!((auc_delta - (0.55 - 0.6412)).abs() < 1e-15);
        assert_eq!(format_delta(MetricKind::Score, p1.metrics[1].delta.as_ref()), "-0.0912");
        // An undefined value on either side has no change.
        assert_eq!(p1.metrics[2].delta, None);
        // P2 is in neither week: missing on both sides, unchanged.
        let p2 = &trend.experiments[1];
        assert_eq!((p2.verdict_then.as_str(), p2.verdict_changed), ("missing", false));
        assert!(p2.metrics.iter().all(|m| m.then.is_none() && m.delta.is_none()));
        // P3 ran, then failed: a verdict change, and no numbers now.
        let p3 = &trend.experiments[2];
        assert_eq!(
            (p3.verdict_then.as_str(), p3.verdict_now.as_str()),
            ("INCONCLUSIVE", "failed")
        );
        assert!(p3.verdict_changed);
        let base_rate = p3.metrics.iter().find(|m| m.key == "base_rate").unwrap();
        assert_eq!(format_value(base_rate.kind, base_rate.then.as_ref()), "25.0%");
        assert_eq!(base_rate.now, None);
    }

    #[test]
    fn one_week_has_no_trend() {
        assert_eq!(index(vec![week("2026-W46", None, RunStatus::Ok)]).trend, None);
        assert_eq!(index(Vec::new()).trend, None);
    }

    #[test]
    fn values_and_changes_print_in_their_units() {
        let n = |v: f64| Number::from_f64(v);
        assert_eq!(format_value(MetricKind::Count, Some(&Number::from(400))), "400");
        assert_eq!(format_value(MetricKind::Share, n(0.428571).as_ref()), "42.9%");
        assert_eq!(format_value(MetricKind::Points, n(3.999).as_ref()), "+4.00pp");
        assert_eq!(format_value(MetricKind::Score, None), "—");
        assert_eq!(format_delta(MetricKind::Count, Some(&Number::from(-3))), "-3");
        assert_eq!(format_delta(MetricKind::Count, Some(&Number::from(0))), "+0");
        assert_eq!(format_delta(MetricKind::Share, n(0.142857).as_ref()), "+14.3pp");
        assert_eq!(verdict_change("PASS", "KILL"), "**PASS → KILL**");
        assert_eq!(verdict_change("PASS", "PASS"), "unchanged");
    }
}
