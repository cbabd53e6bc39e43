//! P2 over many repositories: `p2-pooled.json`, `p2-pooled.md` (`templates/p2-pooled.md.j2`), the per-repository
//! table (`p2-repositories.csv` and `.parquet`), the forest plot (`p2-forest.svg`) and the stdout block.

use polars::prelude::*;
use serde::Serialize;

use super::envelope::Envelope;
use super::{TemplateError, percent, percent_ci};
use crate::experiments::p2_pool::{PoolMethod, PooledAnalysis};

/// `templates/p2-pooled.md.j2` as shipped; `--templates DIR` may replace it.
pub const POOLED_TEMPLATE: &str = include_str!("../../../templates/p2-pooled.md.j2");
pub const POOLED_JSON: &str = "p2-pooled.json";
pub const POOLED_MD: &str = "p2-pooled.md";
pub const REPOSITORIES_CSV: &str = "p2-repositories.csv";
pub const REPOSITORIES_PARQUET: &str = "p2-repositories.parquet";
pub const FOREST_SVG: &str = "p2-forest.svg";

/// The body of `p2-pooled.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PooledReport {
    /// The partition directories read, in the order pooled (by repository name).
    pub partitions: Vec<String>,
    pub analysis: PooledAnalysis,
}

/// The numbers as the report prints them.
pub fn formatted(a: &PooledAnalysis) -> serde_json::Value {
    let decided = a.verdict.kind != crate::prereg::VerdictKind::Inconclusive;
    serde_json::json!({
        "self_reflection": percent(&a.self_reflection),
        "self_reflection_ci": percent_ci(&a.self_reflection),
        "naive": percent(&a.naive),
        "naive_ci": percent_ci(&a.naive),
        "design_effect": a.design.map(|d| format!("{:.2}", d.design_effect)),
        "effective_n": a.design.map(|d| format!("{:.1}", d.effective_n)),
        "critical": a.design.map(|d| format!("{:.3}", d.critical)),
        "clusters": a.design.map(|d| d.clusters),
        "threshold": format!("{:.1}%", a.threshold * 100.0),
        "decided": decided,
        "repositories": a.repositories.iter().map(|r| serde_json::json!({
            "name": r.repository.name,
            "status": r.repository.status,
            "commits": r.repository.commits_walked,
            "total": r.repository.counts.total,
            "classified": r.repository.counts.classified,
            "ci": r.repository.counts.ci,
            "human_review": r.repository.counts.human_review,
            "self_reflection": r.repository.counts.self_reflection,
            "ambiguous": r.repository.counts.ambiguous,
            "share": percent(&r.self_reflection),
            "share_ci": percent_ci(&r.self_reflection),
            "verdict": r.verdict.kind.to_string(),
        })).collect::<Vec<_>>(),
    })
}

pub fn markdown(
    template: &str,
    envelope: &Envelope<PooledReport>,
    spec: &crate::prereg::P2Spec,
) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct View<'a> {
        prereg_title: &'a str,
        kill_text: &'a str,
        generated_at: &'a str,
        prereg_path: &'a str,
        prereg_sha256: &'a str,
        status: crate::report::envelope::Status,
        analysis: &'a PooledAnalysis,
        interval_label: String,
        fmt: serde_json::Value,
        repositories_csv: &'static str,
        forest_svg: &'static str,
    }
    let a = &envelope.report.analysis;
    let view = View {
        prereg_title: &spec.title,
        kill_text: &spec.kill.text,
        generated_at: envelope.generated_at_text(),
        prereg_path: &envelope.prereg.path,
        prereg_sha256: &envelope.prereg.sha256,
        status: envelope.status,
        analysis: a,
        interval_label: format!("{}% interval", 100.0 * (1.0 - spec.alpha)),
        fmt: formatted(a),
        repositories_csv: REPOSITORIES_CSV,
        forest_svg: FOREST_SVG,
    };
    super::render_markdown("p2-pooled.md.j2", template, &view)
}

/// The per-repository table's columns: `repository`, `path`, `status` (String), `commits` (UInt64), `failures`,
/// `classified`, `ci`, `human_review`, `self_reflection`, `ambiguous` (UInt64), `share`, `share_lo`, `share_hi`
/// (Float64, null when undefined), `verdict` (String).
fn repositories_frame(a: &PooledAnalysis) -> PolarsResult<DataFrame> {
    let rows = &a.repositories;
    let u = |name: &str, f: &dyn Fn(&crate::experiments::p2_pool::RepositoryRow) -> u64| -> Column {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<u64>>())
    };
    let s = |name: &str, f: &dyn Fn(&crate::experiments::p2_pool::RepositoryRow) -> String| -> Column {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<String>>())
    };
    let x = |name: &str, f: &dyn Fn(&crate::stats::Interval) -> f64| -> Column {
        Column::new(
            name.into(),
            rows.iter()
                .map(|r| r.self_reflection.as_ref().map(f))
                .collect::<Vec<Option<f64>>>(),
        )
    };
    DataFrame::new(
        rows.len(),
        vec![
            s("repository", &|r| r.repository.name.clone()),
            s("path", &|r| r.repository.path.clone()),
            s("status", &|r| r.repository.status.clone()),
            u("commits", &|r| r.repository.commits_walked),
            u("failures", &|r| r.repository.counts.total),
            u("classified", &|r| r.repository.counts.classified),
            u("ci", &|r| r.repository.counts.ci),
            u("human_review", &|r| r.repository.counts.human_review),
            u("self_reflection", &|r| r.repository.counts.self_reflection),
            u("ambiguous", &|r| r.repository.counts.ambiguous),
            x("share", &|i| i.estimate),
            x("share_lo", &|i| i.lo),
            x("share_hi", &|i| i.hi),
            s("verdict", &|r| r.verdict.kind.to_string()),
        ],
    )
}

/// The per-repository table as Parquet.
pub fn repositories_parquet(a: &PooledAnalysis) -> Result<Vec<u8>, super::parquet::TableError> {
    let error = |message: String| super::parquet::TableError {
        name: REPOSITORIES_PARQUET,
        message,
    };
    let mut frame = repositories_frame(a).map_err(|e| error(e.to_string()))?;
    super::parquet::bytes(&mut frame).map_err(|e| error(e.to_string()))
}

/// The per-repository table as CSV (the Parquet table's columns; an undefined share is empty).
pub fn repositories_csv(a: &PooledAnalysis) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "repository",
        "path",
        "status",
        "commits",
        "failures",
        "classified",
        "ci",
        "human_review",
        "self_reflection",
        "ambiguous",
        "share",
        "share_lo",
        "share_hi",
        "verdict",
    ])?;
    let float = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.6}"));
    for r in &a.repositories {
        let c = &r.repository.counts;
        writer.write_record([
            r.repository.name.clone(),
            r.repository.path.clone(),
            r.repository.status.clone(),
            r.repository.commits_walked.to_string(),
            c.total.to_string(),
            c.classified.to_string(),
            c.ci.to_string(),
            c.human_review.to_string(),
            c.self_reflection.to_string(),
            c.ambiguous.to_string(),
            float(r.self_reflection.map(|i| i.estimate)),
            float(r.self_reflection.map(|i| i.lo)),
            float(r.self_reflection.map(|i| i.hi)),
            r.verdict.kind.to_string(),
        ])?;
    }
    writer.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// Each repository's share with its Wilson interval and the pooled share with its interval over repositories.
pub fn forest_svg(a: &PooledAnalysis) -> String {
    let level = super::p1::level(a.alpha);
    let mut rows: Vec<super::svg::ForestRow> = a
        .repositories
        .iter()
        .map(|r| super::svg::ForestRow {
            label: r.repository.name.clone(),
            share: r.self_reflection,
            count: format!(
                "{}/{}",
                r.repository.counts.self_reflection, r.repository.counts.classified
            ),
            pooled: false,
        })
        .collect();
    rows.push(super::svg::ForestRow {
        label: "pooled".to_string(),
        share: a.self_reflection,
        count: format!("{}/{}", a.counts.self_reflection, a.counts.classified),
        pooled: true,
    });
    let pooled_legend = match a.method {
        PoolMethod::DesignEffectWilson => format!(
            "diamond: the pooled share and its {level} design-effect interval over {} repositories",
            a.design.map_or(0, |d| d.clusters)
        ),
        PoolMethod::OneRepository => {
            format!("diamond: the pooled share (one repository: its own {level} Wilson interval)")
        }
        PoolMethod::Undefined => "diamond: the pooled share (undefined: no classified failure)".to_string(),
    };
    super::svg::forest(&super::svg::ForestPlot {
        title: "P2 only-self-reflection share by repository",
        rows: &rows,
        threshold: (a.threshold, format!("kill threshold: {:.1}%", a.threshold * 100.0)),
        row_legend: format!(
            "dot and whisker: a repository's share of its classified failures, Wilson {level} interval"
        ),
        pooled_legend,
        notes: vec!["label: share [interval] (self-reflection/classified)".to_string()],
    })
}

/// The block `phase0 p2 --repo A --repo B` and `phase0 pool` print.
pub fn stdout_block(envelope: &Envelope<PooledReport>, spec: &crate::prereg::P2Spec) -> String {
    let a = &envelope.report.analysis;
    let mut out = format!(
        "P2 gate buckets over {} — kill condition (pre-registered): {}\n",
        super::count(a.repositories.len() as u64, "repository", "repositories"),
        spec.kill.text
    );
    let width = a
        .repositories
        .iter()
        .map(|r| r.repository.name.len())
        .max()
        .unwrap_or(0)
        .max(12);
    for r in &a.repositories {
        out.push_str(&format!(
            "  {:<width$}  {:<12} self-reflection {} of {} classified = {} {}{}\n",
            r.repository.name,
            r.verdict.kind.to_string(),
            r.repository.counts.self_reflection,
            r.repository.counts.classified,
            percent(&r.self_reflection),
            percent_ci(&r.self_reflection),
            if r.repository.status == "ok" {
                String::new()
            } else {
                format!(
                    " ({}{})",
                    r.repository.status,
                    r.repository
                        .error_code
                        .as_deref()
                        .map(|c| format!(": {c}"))
                        .unwrap_or_default()
                )
            }
        ));
    }
    out.push_str(&super::p2::failures_line(&a.counts));
    out.push_str(&format!(
        "  pooled          {} of {} classified = {} {}\n",
        a.counts.self_reflection,
        a.counts.classified,
        percent(&a.self_reflection),
        percent_ci(&a.self_reflection)
    ));
    out.push_str(&match (a.method, a.design) {
        (PoolMethod::DesignEffectWilson, Some(d)) => format!(
            "  interval        design effect {:.2} over {} repositories (effective n {:.1}, t {:.3}); as if independent: {}\n",
            d.design_effect,
            d.clusters,
            d.effective_n,
            d.critical,
            percent_ci(&a.naive)
        ),
        _ => format!("  interval        {}\n", a.method.meaning()),
    });
    super::share_verdict_lines(&mut out, &a.verdict, "failures needed", "classified", &envelope.prereg);
    out
}
