//! P2's renderers: the markdown report (`templates/p2.md.j2`), the per-failure CSV, and the stdout block.

use serde::Serialize;

use super::envelope::Envelope;
use super::{TemplateError, percent, percent_ci};
use crate::experiments::p2::{Bucket, Buckets, Failure, Group, P2Analysis, Scenario, Shares, TimeToRemedy};
use crate::experiments::p2_audit::{AuditSummary, P2Audit};
use crate::prereg::P2Spec;

/// `templates/p2.md.j2` as shipped; `--templates DIR` may replace it.
pub const P2_TEMPLATE: &str = include_str!("../../../templates/p2.md.j2");
pub const FAILURES_CSV: &str = "p2-failures.csv";
/// The rows of [`FAILURES_CSV`] as Parquet (schema: docs/p2.md).
pub const FAILURES_PARQUET: &str = "p2-failures.parquet";
pub const BUCKETS_SVG: &str = "p2-buckets.svg";

/// The bucket shares of `analysis` as a chart ([`buckets_svg_of`]).
pub fn buckets_svg(analysis: &P2Analysis, spec: &P2Spec) -> String {
    buckets_svg_of(&analysis.counts, &analysis.shares, analysis.threshold, spec.alpha)
}

/// The bucket shares as a chart: one bar per bucket with its Wilson interval (the report's own intervals at
/// `alpha`), the kill threshold of the only-self-reflection share, and the ambiguous failures' share of all
/// failures greyed.
pub fn buckets_svg_of(c: &Buckets, s: &Shares, threshold: f64, alpha: f64) -> String {
    let row = |label: &str, share: &Option<crate::stats::Interval>, k: u64, n: u64, muted: bool| super::svg::ShareRow {
        label: label.to_string(),
        share: *share,
        count: format!("{k}/{n}"),
        muted,
    };
    let rows = [
        row("CI", &s.ci, c.ci, c.classified, false),
        row("human review", &s.human_review, c.human_review, c.classified, false),
        row(
            "only self-reflection",
            &s.self_reflection,
            c.self_reflection,
            c.classified,
            false,
        ),
        row("ambiguous (of all)", &s.ambiguous, c.ambiguous, c.total, true),
    ];
    super::svg::shares(&super::svg::SharesPlot {
        title: "P2 failures by the gate that could have caught them",
        rows: &rows,
        threshold: Some((
            2,
            threshold,
            format!(
                "kill threshold of the only-self-reflection share: {:.1}%",
                threshold * 100.0
            ),
        )),
        level: super::p1::level(alpha),
        notes: vec![
            format!(
                "CI, human review and only self-reflection are shares of the {};",
                super::count(c.classified, "classified failure", "classified failures")
            ),
            format!(
                "ambiguous (grey) is a share of all failures ({}) and is left out of the other three.",
                c.total
            ),
        ],
    })
}

/// The body of `p2.json`: what was scanned and what the experiment found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P2Report {
    pub repository: RepositorySummary,
    pub analysis: P2Analysis,
    /// With `--audit SHEET`: what the reader measured; `analysis.verdict` is then decided on the corrected share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<P2Audit>,
}

/// The repository and the part of its history that was walked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepositorySummary {
    /// `--name`, else from the path (`owner/name` for `…/owner+name/repo`, else the directory's name): the key of
    /// the repository in pooled runs and audit sheets.
    pub name: String,
    /// As given on the command line.
    pub path: String,
    pub rev: String,
    /// The commit `rev` resolved to; `None` for an unborn `HEAD`.
    pub tip: Option<String>,
    /// `branch <name>`, `detached` or `unborn <name>`.
    pub head: String,
    pub first_parent: bool,
    /// The committer-time bounds given (`--since` / `--until`), as RFC 3339.
    pub since: Option<String>,
    pub until: Option<String>,
    pub commits_walked: u64,
    /// A shallow clone: the history stops at its boundary, so older failures are invisible.
    pub shallow: bool,
    pub non_utf8_messages: u64,
    /// Commits whose diff needs an object the repository lacks (a partial or damaged clone): skipped, so failures
    /// they remedy or caused are not seen. The first ones are named, with the missing object.
    pub unreadable_commits: u64,
    pub unreadable: Vec<String>,
}

/// A duration in seconds as the report prints it: `3.5 d`, `4.0 h`, `12 min`, `40 s`.
fn duration(seconds: Option<i64>) -> String {
    let Some(s) = seconds else {
        return "–".to_string();
    };
    let abs = s.unsigned_abs() as f64;
    let sign = if s < 0 { "-" } else { "" };
    if abs >= 86_400.0 {
        format!("{sign}{:.1} d", abs / 86_400.0)
    } else if abs >= 3_600.0 {
        format!("{sign}{:.1} h", abs / 3_600.0)
    } else if abs >= 60.0 {
        format!("{sign}{:.0} min", abs / 60.0)
    } else {
        format!("{sign}{abs:.0} s")
    }
}

fn time_to_remedy(t: &TimeToRemedy) -> serde_json::Value {
    serde_json::json!({"n": t.n, "median": duration(t.median_seconds), "p90": duration(t.p90_seconds)})
}

fn group_rows(groups: &[Group]) -> Vec<serde_json::Value> {
    groups
        .iter()
        .map(|g| {
            serde_json::json!({
                "key": g.key,
                "total": g.counts.total,
                "ci": g.counts.ci,
                "human_review": g.counts.human_review,
                "self_reflection": g.counts.self_reflection,
                "ambiguous": g.counts.ambiguous,
                "self_reflection_share": percent(&g.shares.self_reflection),
                "self_reflection_ci": percent_ci(&g.shares.self_reflection),
                "median_time_to_remedy": duration(g.time_to_remedy.median_seconds),
            })
        })
        .collect()
}

fn scenario(s: &Scenario) -> serde_json::Value {
    serde_json::json!({
        "share": percent(&s.share),
        "ci": percent_ci(&s.share),
        "self_reflection": s.self_reflection,
        "n": s.n,
        "verdict": s.verdict.to_string(),
    })
}

fn failure_row(f: &Failure) -> serde_json::Value {
    serde_json::json!({
        "remedy": f.remedy_short,
        "failing": f.failing_short.as_deref().or(f.failing_ref.as_deref()).unwrap_or("–"),
        "kind": f.kind.id(),
        "rule": serde_json::to_value(f.rule).unwrap_or_default(),
        "subject": f.subject.replace('|', "\\|"),
    })
}

/// The numbers as the report prints them (formatting is layout, done once here so templates stay dumb).
pub fn formatted(analysis: &P2Analysis) -> serde_json::Value {
    let shares = &analysis.shares;
    serde_json::json!({
        "ci": percent(&shares.ci),
        "ci_ci": percent_ci(&shares.ci),
        "human_review": percent(&shares.human_review),
        "human_review_ci": percent_ci(&shares.human_review),
        "self_reflection": percent(&shares.self_reflection),
        "self_reflection_ci": percent_ci(&shares.self_reflection),
        "ambiguous": percent(&shares.ambiguous),
        "ambiguous_ci": percent_ci(&shares.ambiguous),
        "threshold": format!("{:.1}%", analysis.threshold * 100.0),
        "sensitivity": {
            "excluded": scenario(&analysis.sensitivity.excluded),
            "all": scenario(&analysis.sensitivity.all_self_reflection),
            "none": scenario(&analysis.sensitivity.none_self_reflection),
            "robust": analysis.sensitivity.robust,
        },
        "self_check": {
            "precision": percent(&analysis.self_check.precision),
            "precision_ci": percent_ci(&analysis.self_check.precision),
            "recall": percent(&analysis.self_check.recall),
            "recall_ci": percent_ci(&analysis.self_check.recall),
        },
        "decided": analysis.verdict.kind != crate::experiments::p1::VerdictKind::Inconclusive,
        "time_to_remedy": time_to_remedy(&analysis.time_to_remedy),
        "by_surface": group_rows(&analysis.by_surface),
        "by_kind": group_rows(&analysis.by_kind),
        "samples": Bucket::ALL
            .iter()
            .map(|bucket| serde_json::json!({
                "bucket": bucket.id(),
                "failures": analysis
                    .samples
                    .get(bucket)
                    .map(|failures| failures.iter().map(failure_row).collect::<Vec<_>>())
                    .unwrap_or_default(),
            }))
            .collect::<Vec<_>>(),
    })
}

/// A proportion with its interval as the audit prints it: `0.83 [0.44, 0.97] (5/6)`.
fn ratio(interval: &Option<crate::stats::Interval>, k: u64, n: u64) -> String {
    interval.map_or_else(
        || format!("undefined ({k}/{n})"),
        |i| format!("{:.2} [{:.2}, {:.2}] ({k}/{n})", i.estimate, i.lo, i.hi),
    )
}

fn optional(x: Option<f64>) -> String {
    x.map_or_else(|| "undefined".to_string(), |x| format!("{x:.3}"))
}

/// The audit's numbers as the reports print them.
pub fn audit_formatted(audit: &P2Audit) -> serde_json::Value {
    let s: &AuditSummary = &audit.summary;
    serde_json::json!({
        "sheets": s.sheets.join(", "),
        "rows": s.rows,
        "audited": s.audited,
        "unaudited": s.unaudited,
        "unmatched": s.matching.unmatched,
        "restratified": s.matching.restratified,
        "relinked": s.matching.relinked,
        "population_unaudited": s.population_unaudited,
        "strata": s.strata,
        "by_tool_bucket": s.by_tool_bucket.iter().map(|b| serde_json::json!({
            "bucket": b.tool_bucket.id(),
            "audited": b.audited,
            "failure_precision": ratio(&b.failure_precision, b.failures, b.audited),
            "bucket_precision": ratio(&b.bucket_precision, b.agreeing, b.failures),
        })).collect::<Vec<_>>(),
        "confusion_header": s.confusion.reader,
        "confusion": s.confusion.tool.iter().zip(&s.confusion.counts).map(|(tool, counts)| serde_json::json!({
            "tool": tool, "counts": counts,
        })).collect::<Vec<_>>(),
        "agreement": optional(s.agreement.observed),
        "kappa": optional(s.agreement.kappa),
        "agreement_n": s.agreement.n,
        "failure_precision": ratio(&s.failure_precision, s.by_tool_bucket.iter().map(|b| b.failures).sum(), s.audited),
        "link_precision": ratio(&s.link_precision, s.link_ok, s.link_judged),
        "bucketed_n": s.bucketed.failures,
        "bucketed_agreement": optional(s.bucketed.agreement.observed),
        "bucketed_kappa": optional(s.bucketed.agreement.kappa),
        "bucketed_link_precision": ratio(&s.bucketed.link_precision, s.bucketed.link_ok, s.bucketed.link_judged),
        "corrected": percent(&s.corrected.share),
        "corrected_ci": percent_ci(&s.corrected.share),
        "corrected_method": s.corrected.method,
        "replicates": s.corrected.replicates,
        "seed": s.corrected.seed,
        "raw_verdict": audit.raw_verdict.kind.to_string(),
        "too_few": audit.raw_verdict.n_still_needed > 0,
    })
}

/// Renders `template` (the source of `p2.md.j2`) for the report in `envelope`.
pub fn markdown(template: &str, envelope: &Envelope<P2Report>, spec: &P2Spec) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct View<'a> {
        prereg_title: &'a str,
        kill_text: &'a str,
        hypothesis: &'a str,
        generated_at: &'a str,
        prereg_path: &'a str,
        prereg_sha256: &'a str,
        repository: &'a RepositorySummary,
        analysis: &'a P2Analysis,
        interval_label: String,
        fmt: serde_json::Value,
        failures_csv: &'static str,
        buckets_svg: &'static str,
        audit: Option<serde_json::Value>,
    }
    let analysis = &envelope.report.analysis;
    let view = View {
        prereg_title: &spec.title,
        kill_text: &spec.kill.text,
        hypothesis: &spec.hypothesis,
        generated_at: envelope.generated_at_text(),
        prereg_path: &envelope.prereg.path,
        prereg_sha256: &envelope.prereg.sha256,
        repository: &envelope.report.repository,
        analysis,
        interval_label: format!("{}% interval", 100.0 * (1.0 - spec.alpha)),
        fmt: formatted(analysis),
        failures_csv: FAILURES_CSV,
        buckets_svg: BUCKETS_SVG,
        audit: envelope.report.audit.as_ref().map(audit_formatted),
    };
    super::render_markdown("p2.md.j2", template, &view)
}

/// One row of `p2-failures.csv`.
#[derive(Serialize)]
struct CsvRow<'a> {
    remedy: &'a str,
    failing: Option<&'a str>,
    failing_ref: Option<&'a str>,
    kind: &'static str,
    link_rule: String,
    evidence: &'static str,
    evidence_lines: Option<u32>,
    bucket: &'static str,
    rule: String,
    time_to_remedy_seconds: Option<i64>,
    failing_surface: Option<String>,
    floor_flagged: Option<bool>,
    subject: &'a str,
}

/// Every failure as Parquet: the rows and columns of [`failures_csv`], typed (schema: docs/p2.md).
pub fn failures_parquet(failures: &[Failure]) -> Result<Vec<u8>, super::parquet::TableError> {
    super::parquet::table(FAILURES_PARQUET, crate::experiments::frames::p2_failures(failures))
}

/// Every failure as CSV (RFC 4180, a header row, remedies newest first as in the report).
pub fn failures_csv(failures: &[Failure]) -> Result<Vec<u8>, csv::Error> {
    let id = |value: serde_json::Value| value.as_str().unwrap_or_default().to_string();
    let mut writer = csv::Writer::from_writer(Vec::new());
    for f in failures {
        writer.serialize(CsvRow {
            remedy: &f.remedy,
            failing: f.failing.as_deref(),
            failing_ref: f.failing_ref.as_deref(),
            kind: f.kind.id(),
            link_rule: id(serde_json::to_value(f.link_rule).unwrap_or_default()),
            evidence: f.evidence.id(),
            evidence_lines: f.evidence_lines,
            bucket: f.bucket.id(),
            rule: id(serde_json::to_value(f.rule).unwrap_or_default()),
            time_to_remedy_seconds: f.time_to_remedy_seconds,
            failing_surface: f
                .failing_surface
                .map(|s| id(serde_json::to_value(s).unwrap_or_default())),
            floor_flagged: f.floor_flagged,
            subject: &f.subject,
        })?;
    }
    if failures.is_empty() {
        // A header row even without failures, so the file always has the same columns.
        writer.write_record([
            "remedy",
            "failing",
            "failing_ref",
            "kind",
            "link_rule",
            "evidence",
            "evidence_lines",
            "bucket",
            "rule",
            "time_to_remedy_seconds",
            "failing_surface",
            "floor_flagged",
            "subject",
        ])?;
    }
    writer.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// The stdout block's line of failures by bucket.
pub(crate) fn failures_line(c: &Buckets) -> String {
    format!(
        "  failures        {}: ci {}, human review {}, self-reflection {}, ambiguous {}\n",
        c.total, c.ci, c.human_review, c.self_reflection, c.ambiguous
    )
}

/// The block `phase0 p2` prints: the kill condition verbatim, the numbers behind it, the verdict, the prereg hash.
pub fn stdout_block(envelope: &Envelope<P2Report>, spec: &P2Spec) -> String {
    let repo = &envelope.report.repository;
    let a = &envelope.report.analysis;
    let fmt = formatted(a);
    let text = |path: &[&str]| {
        let mut value = &fmt;
        for key in path {
            value = &value[*key];
        }
        value.as_str().unwrap_or_default().to_string()
    };
    // A value and its interval; an undefined value has no interval, and nothing is printed for it.
    let with_interval = |value: &[&str], interval: &[&str]| {
        [text(value), text(interval)]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = String::new();
    out.push_str(&format!(
        "P2 gate buckets — kill condition (pre-registered): {}\n",
        spec.kill.text
    ));
    out.push_str(&format!(
        "  history         {} at {} ({}), {}{}\n",
        repo.path,
        repo.rev,
        repo.tip.as_deref().map_or("unborn", crate::scan::commits::short_id),
        super::count(repo.commits_walked, "commit", "commits"),
        if repo.shallow {
            ", shallow clone: history truncated"
        } else {
            ""
        }
    ));
    if repo.unreadable_commits > 0 {
        out.push_str(&format!(
            "  unreadable      {} commits skipped: objects missing from the repository (a partial clone?), e.g. {}\n",
            repo.unreadable_commits,
            repo.unreadable.first().map_or("", String::as_str)
        ));
    }
    out.push_str(&failures_line(&a.counts));
    out.push_str(&format!(
        "  self-reflection {} of {} classified = {}\n",
        a.counts.self_reflection,
        a.counts.classified,
        with_interval(&["self_reflection"], &["self_reflection_ci"])
    ));
    // Robustness is a property of a decision: beside INCONCLUSIVE there is nothing for the ambiguous to change.
    let robustness = match (fmt["decided"].as_bool() == Some(true), a.sensitivity.robust) {
        (false, _) => String::new(),
        (true, true) => ": robust".to_string(),
        (true, false) => ": NOT robust (the ambiguous failures could change the verdict)".to_string(),
    };
    out.push_str(&format!(
        "  sensitivity     ambiguous left out {}, all self-reflection {}, none {}{robustness}\n",
        text(&["sensitivity", "excluded", "share"]),
        text(&["sensitivity", "all", "share"]),
        text(&["sensitivity", "none", "share"]),
    ));
    let check = &a.self_check;
    out.push_str(&if check.named == 0 {
        "  self-check      no fix names a culprit inside the window: the linker's accuracy is not measured here\n"
            .to_string()
    } else {
        format!(
            "  self-check      blind links of {} naming their culprit: {} right, {} wrong, {} unlinked; \
             precision {}, recall {}\n",
            super::count(check.named, "fix", "fixes"),
            check.correct,
            check.wrong,
            check.unlinked,
            with_interval(&["self_check", "precision"], &["self_check", "precision_ci"]),
            with_interval(&["self_check", "recall"], &["self_check", "recall_ci"]),
        )
    });
    if let Some(audit) = &envelope.report.audit {
        audit_lines(&mut out, audit);
    }
    super::share_verdict_lines(&mut out, &a.verdict, "failures needed", "classified", &envelope.prereg);
    out
}

/// The audit's lines of the stdout block.
fn audit_lines(out: &mut String, audit: &P2Audit) {
    let f = audit_formatted(audit);
    let text = |key: &str| f[key].as_str().unwrap_or_default().to_string();
    let s = &audit.summary;
    out.push_str(&format!(
        "  audit           {}: {} rows, {} audited, {} unaudited, {} not failures of this run\n",
        text("sheets"),
        s.rows + s.matching.unmatched.len() as u64,
        s.audited,
        s.unaudited,
        s.matching.unmatched.len()
    ));
    for b in f["by_tool_bucket"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "  audit {:<9} bucket precision {}, failure precision {}\n",
            b["bucket"]
                .as_str()
                .unwrap_or_default()
                .replace("human-review", "review")
                .replace("self-reflection", "self"),
            b["bucket_precision"].as_str().unwrap_or_default(),
            b["failure_precision"].as_str().unwrap_or_default()
        ));
    }
    out.push_str(&format!(
        "  agreement       {} over {} failures, kappa {}; links {}\n",
        text("agreement"),
        s.agreement.n,
        text("kappa"),
        text("link_precision")
    ));
    out.push_str(&format!(
        "  bucketed        {} of them put in a bucket by the tool: agreement {}, kappa {}; links {}\n",
        s.bucketed.failures,
        text("bucketed_agreement"),
        text("bucketed_kappa"),
        text("bucketed_link_precision")
    ));
    let basis = if audit.raw_verdict.n_still_needed > 0 {
        "too few classified failures for any verdict".to_string()
    } else {
        format!(
            "the verdict is decided on it (on the raw share: {})",
            text("raw_verdict")
        )
    };
    out.push_str(&format!(
        "  corrected       only-self-reflection {} {} ({} replicates); {basis}\n",
        text("corrected"),
        text("corrected_ci"),
        s.corrected.replicates,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(None), "–");
        assert_eq!(duration(Some(40)), "40 s");
        assert_eq!(duration(Some(720)), "12 min");
        assert_eq!(duration(Some(4 * 3600)), "4.0 h");
        assert_eq!(duration(Some(3 * 86_400 + 43_200)), "3.5 d");
        assert_eq!(duration(Some(-7200)), "-2.0 h");
    }

    #[test]
    fn an_empty_failure_table_still_has_its_header() {
        let csv = failures_csv(&[]).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "remedy,failing,failing_ref,kind,link_rule,evidence,evidence_lines,bucket,rule,time_to_remedy_seconds,failing_surface,\
             floor_flagged,subject\n"
        );
    }
}
