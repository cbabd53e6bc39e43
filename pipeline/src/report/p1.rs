//! P1's renderers: the markdown report (`templates/p1.md.j2`), its SVG plots, and the stdout block.

use serde::Serialize;

pub use super::TemplateError;
use super::envelope::Envelope;
use super::svg;
use crate::experiments::p1::{AucSummary, Metrics, P1Report, RiskFloor};
use crate::prereg::P1Spec;
use crate::stats::Interval;

/// `templates/p1.md.j2` as shipped; `--templates DIR` may replace it.
pub const P1_TEMPLATE: &str = include_str!("../../../templates/p1.md.j2");
pub const ROC_SVG: &str = "p1-roc.svg";
pub const RELIABILITY_SVG: &str = "p1-reliability.svg";

fn number(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "undefined".to_string(), |v| format!("{v:.decimals$}"))
}

fn interval(value: Option<(f64, f64)>, decimals: usize) -> String {
    value.map_or_else(String::new, |(lo, hi)| format!("[{lo:.decimals$}, {hi:.decimals$}]"))
}

fn bounds(value: &Option<Interval>) -> Option<(f64, f64)> {
    value.as_ref().map(|i| (i.lo, i.hi))
}

fn auc_text(auc: &AucSummary) -> String {
    match (&auc.value, &auc.undefined) {
        (Some(value), _) => format!("{value:.4}"),
        (None, Some(why)) => format!("undefined ({why})"),
        (None, None) => "undefined".to_string(),
    }
}

/// The numbers as the report prints them (formatting is layout, done once here so templates stay dumb).
pub fn formatted(metrics: &Metrics) -> serde_json::Value {
    let bins: Vec<serde_json::Value> = metrics
        .reliability_equal_width
        .iter()
        .enumerate()
        .map(|(i, bin)| {
            let close = if i + 1 == metrics.reliability_equal_width.len() && bin.hi >= 1.0 {
                "]"
            } else {
                ")"
            };
            serde_json::json!({
                "range": format!("[{:.1}, {:.1}{close}", bin.lo, bin.hi),
                "n": bin.n,
                "mean_confidence": format!("{:.3}", bin.mean_confidence),
                "accuracy": format!("{:.3}", bin.accuracy),
            })
        })
        .collect();
    serde_json::json!({
        "base_rate": number(metrics.base_rate.map(|i| i.estimate), 4),
        "base_rate_ci": interval(bounds(&metrics.base_rate), 4),
        "auc": auc_text(&metrics.auc),
        "auc_ci": interval(metrics.auc.ci, 4),
        "high_rate": number(metrics.high_rate.map(|i| i.estimate), 4),
        "high_rate_ci": interval(bounds(&metrics.high_rate), 4),
        "auc_high": auc_text(&metrics.auc_high),
        "auc_high_ci": interval(metrics.auc_high.ci, 4),
        "lift_pp": metrics.lift_pp.map_or_else(|| "undefined".to_string(), |i| format!("{:+.2}", i.estimate)),
        "lift_pp_ci": interval(bounds(&metrics.lift_pp), 2),
        "lift_ratio": number(metrics.lift_ratio.map(|i| i.estimate), 3),
        "lift_ratio_ci": interval(bounds(&metrics.lift_ratio), 3),
        "brier": number(metrics.brier, 4),
        "ece_equal_width": number(metrics.ece_equal_width, 4),
        "ece_equal_mass": number(metrics.ece_equal_mass, 4),
        "average_precision": number(metrics.average_precision, 4),
        "bins": bins,
        "bootstrap": metrics.bootstrap.as_ref().map(|b| serde_json::json!({
            "replicates": b.replicates,
            "seed": b.seed,
            "auc_ci": b.auc.map_or_else(|| "undefined".to_string(), |ci| interval(Some(ci), 4)),
            "lift_pp_ci": b.lift_pp.map_or_else(|| "undefined".to_string(), |ci| interval(Some(ci), 2)),
        })),
    })
}

/// The risk-floor numbers as the report prints them.
pub fn formatted_risk_floor(floor: &RiskFloor) -> serde_json::Value {
    let rate = |i: &Option<Interval>| number(i.map(|i| i.estimate), 4);
    let split = floor.needs_review.as_ref().map(|s| {
        serde_json::json!({
            "n_flagged": s.n_flagged,
            "wrong_flagged": s.wrong_flagged,
            "rate_flagged": rate(&s.failure_rate_flagged),
            "rate_flagged_ci": interval(bounds(&s.failure_rate_flagged), 4),
            "n_unflagged": s.n_unflagged,
            "wrong_unflagged": s.wrong_unflagged,
            "rate_unflagged": rate(&s.failure_rate_unflagged),
            "rate_unflagged_ci": interval(bounds(&s.failure_rate_unflagged), 4),
            "difference_pp": s.difference_pp.map_or_else(|| "undefined".to_string(), |i| format!("{:+.2}", i.estimate)),
            "difference_pp_ci": interval(bounds(&s.difference_pp), 2),
        })
    });
    serde_json::json!({
        "n": floor.n,
        "n_wrong": floor.n_wrong,
        "auc": match (&floor.auc.value, &floor.auc.undefined) {
            (Some(value), _) => format!("{value:.4}"),
            (None, Some(why)) => format!("undefined ({why})"),
            (None, None) => "undefined".to_string(),
        },
        "auc_ci": interval(floor.auc.ci, 4),
        "needs_review": split,
    })
}

/// Renders `template` (the source of `p1.md.j2`) for the report in `envelope`.
pub fn markdown(template: &str, envelope: &Envelope<P1Report>, spec: &P1Spec) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct View<'a> {
        prereg_title: &'a str,
        kill_text: &'a str,
        hypothesis: &'a str,
        verdict: &'a crate::experiments::p1::Verdict,
        generated_at: &'a str,
        corpus: &'a crate::experiments::p1::CorpusSummary,
        prereg_path: &'a str,
        prereg_sha256: &'a str,
        inputs: &'a [super::envelope::InputFile],
        interval_label: String,
        metrics: &'a Metrics,
        fmt: serde_json::Value,
        breakdowns: Vec<serde_json::Value>,
        roc_svg: &'static str,
        reliability_svg: &'static str,
        risk_floor: Option<serde_json::Value>,
        corpus_join: Option<&'a crate::experiments::p1::CorpusJoin>,
    }
    let metrics = &envelope.report.metrics;
    let view = View {
        prereg_title: &spec.title,
        kill_text: &spec.kill.text,
        hypothesis: &spec.hypothesis,
        verdict: &metrics.verdict,
        generated_at: envelope.generated_at_text(),
        corpus: &envelope.report.corpus,
        prereg_path: &envelope.prereg.path,
        prereg_sha256: &envelope.prereg.sha256,
        inputs: &envelope.inputs,
        interval_label: format!("{}% interval", 100.0 * (1.0 - spec.alpha)),
        metrics,
        fmt: formatted(metrics),
        breakdowns: envelope
            .report
            .breakdowns
            .iter()
            .map(|(field, groups)| {
                let rows: Vec<serde_json::Value> = groups
                    .iter()
                    .map(|group| {
                        serde_json::json!({
                            "value": group.value.as_deref().unwrap_or("(absent)"),
                            "n": group.n,
                            "base_rate": number(group.base_rate.map(|i| i.estimate), 3),
                            "auc": auc_text(&group.auc),
                            "auc_ci": interval(group.auc.ci, 3),
                            "n_high": group.n_high,
                            "lift_pp": group.lift_pp.map_or_else(|| "undefined".to_string(), |i| format!("{:+.1}", i.estimate)),
                        })
                    })
                    .collect();
                serde_json::json!({"field": field, "groups": rows})
            })
            .collect(),
        roc_svg: ROC_SVG,
        reliability_svg: RELIABILITY_SVG,
        risk_floor: envelope.report.risk_floor.as_ref().map(formatted_risk_floor),
        corpus_join: envelope.report.corpus_join.as_ref(),
    };
    super::render_markdown("p1.md.j2", template, &view)
}

/// The level of `alpha`'s two-sided intervals as the plots' legends print it: `95%`.
pub(crate) fn level(alpha: f64) -> String {
    format!("{}%", 100.0 * (1.0 - alpha))
}

/// The Wilson interval of `successes` of `n` at `z`; the point itself when `n` is 0 or `z` is unusable.
pub(crate) fn wilson_or_point(successes: u64, n: u64, z: f64) -> Interval {
    crate::stats::wilson(successes.min(n), n, z)
        .ok()
        .flatten()
        .unwrap_or(Interval {
            estimate: 0.0,
            lo: 0.0,
            hi: 0.0,
        })
}

/// The ROC curve (through `roc_points`, from [`crate::stats::roc_curve`]) and the reliability diagram as
/// `(file name, svg)` pairs.
///
/// The ROC's band is pointwise: at each threshold, the Wilson interval of the true-positive rate (its correct
/// rows at or above the threshold, of all correct rows), the false-positive rate taken as fixed. It is not a
/// simultaneous band and not the AUC's DeLong interval (which the legend quotes beside the AUC). The dot is the
/// pre-registered `high` cut: rows with confidence `>= high` called correct.
pub fn plots(roc_points: &[(f64, f64)], metrics: &Metrics, spec: &P1Spec) -> Vec<(&'static str, String)> {
    let z = crate::stats::z_two_sided(spec.alpha).unwrap_or(1.959_963_984_540_054);
    let level = level(spec.alpha);
    let positives = metrics.n_correct;
    let negatives = metrics.n - metrics.n_correct;
    let band: Vec<(f64, f64)> = roc_points
        .iter()
        .map(|&(_, tpr)| {
            let tp = (tpr * positives as f64).round() as u64;
            let w = wilson_or_point(tp, positives, z);
            (w.lo, w.hi)
        })
        .collect();
    let curve_label = match (metrics.auc.value, metrics.auc.ci) {
        (Some(auc), Some((lo, hi))) => format!("ROC curve: AUC {auc:.3} [{lo:.3}, {hi:.3}] (DeLong {level} interval)"),
        _ => format!("ROC curve: AUC {}", auc_text(&metrics.auc)),
    };
    let high = metrics
        .high_rate
        .filter(|_| positives > 0 && negatives > 0)
        .map(|rate| {
            let correct_high = (rate.estimate * metrics.n_high as f64).round() as u64;
            let wrong_high = metrics.n_high - correct_high;
            let (tpr, fpr) = (
                correct_high as f64 / positives as f64,
                wrong_high as f64 / negatives as f64,
            );
            (
                (fpr, tpr),
                format!(
                    "the pre-registered cut, confidence >= {}: {} rows, TPR {tpr:.3}, FPR {fpr:.3}",
                    metrics.high, metrics.n_high
                ),
            )
        });
    let roc_title = format!("P1 ROC — AUC {}", auc_text(&metrics.auc));
    let roc = svg::roc(&svg::RocPlot {
        title: &roc_title,
        points: roc_points,
        band: &band,
        curve_label,
        band_label: format!("pointwise Wilson {level} interval of the TPR at each cut (not a simultaneous band)"),
        high,
    });
    let bars: Vec<svg::ReliabilityBar> = metrics
        .reliability_equal_width
        .iter()
        .map(|bin| {
            let correct = (bin.accuracy * bin.n as f64).round() as u64;
            svg::ReliabilityBar {
                bin: *bin,
                interval: wilson_or_point(correct, bin.n as u64, z),
            }
        })
        .collect();
    let reliability = svg::reliability(&svg::ReliabilityPlot {
        title: "P1 reliability (equal-width bins)",
        bars: &bars,
        level,
    });
    vec![(ROC_SVG, roc), (RELIABILITY_SVG, reliability)]
}

/// The block `phase0 p1` prints: the kill condition verbatim, the numbers behind it, the verdict, the prereg hash.
pub fn stdout_block(envelope: &Envelope<P1Report>, spec: &P1Spec) -> String {
    let metrics = &envelope.report.metrics;
    let fmt = formatted(metrics);
    let text = |key: &str| fmt[key].as_str().unwrap_or_default().to_string();
    let mut out = String::new();
    out.push_str(&format!(
        "P1 calibration — kill condition (pre-registered): {}\n",
        spec.kill.text
    ));
    // A value and its interval, or the value alone when it has none (an undefined rate has no interval).
    let with_interval = |value: String, ci: String| if ci.is_empty() { value } else { format!("{value} {ci}") };
    out.push_str(&format!(
        "  rows            {} ({} correct, base rate {})\n",
        metrics.n,
        metrics.n_correct,
        with_interval(text("base_rate"), text("base_rate_ci"))
    ));
    out.push_str(&format!(
        "  AUC             {}\n",
        with_interval(text("auc"), text("auc_ci"))
    ));
    let lift = match metrics.lift_pp {
        Some(_) => with_interval(format!("{}pp", text("lift_pp")), text("lift_pp_ci")),
        None => "undefined".to_string(),
    };
    out.push_str(&format!(
        "  high subset     {} {} with confidence >= {}, lift {lift}\n",
        metrics.n_high,
        if metrics.n_high == 1 { "row" } else { "rows" },
        metrics.high,
    ));
    if envelope.report.corpus.null_confidence > 0 {
        out.push_str(&format!(
            "  null confidence {} rows left out of the confidence metrics (kept for the risk floor)\n",
            envelope.report.corpus.null_confidence
        ));
    }
    if let Some(floor) = &envelope.report.risk_floor {
        let f = formatted_risk_floor(floor);
        let t = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        out.push_str(&format!(
            "  risk floor      AUC {} {} for predicting failure, {} rows ({} wrong); descriptive\n",
            t(&f["auc"]),
            t(&f["auc_ci"]),
            floor.n,
            floor.n_wrong
        ));
        if let Some(split) = f.get("needs_review").filter(|v| !v.is_null()) {
            out.push_str(&format!(
                "  needs_review    failure rate {} {} of {} flagged vs {} {} of {} not\n",
                t(&split["rate_flagged"]),
                t(&split["rate_flagged_ci"]),
                split["n_flagged"],
                t(&split["rate_unflagged"]),
                t(&split["rate_unflagged_ci"]),
                split["n_unflagged"]
            ));
        }
    }
    let v = &metrics.verdict;
    let needed = (v.n_still_needed > 0).then(|| {
        format!(
            "  rows needed     {} more ({} in all: {} correct, {} wrong; short by {} correct, {} wrong)",
            v.n_still_needed,
            v.n_required,
            v.n_required_correct,
            v.n_required_wrong,
            v.correct_still_needed,
            v.wrong_still_needed
        )
    });
    super::verdict_lines(&mut out, v.kind, &v.reasons, needed, &envelope.prereg);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::p1::CorpusSummary;
    use crate::prereg::Prereg;
    use crate::report::envelope::{InputFile, PreregRef};

    fn envelope() -> (Envelope<P1Report>, P1Spec, Vec<f64>, Vec<bool>) {
        let prereg = Prereg::p1(None).unwrap();
        let confidence: Vec<f64> = (0..400).map(|i| f64::from(i % 10) / 10.0 + 0.05).collect();
        let correct: Vec<bool> = (0..400).map(|i| (i % 10) >= 3 || i % 7 == 0).collect();
        let metrics = Metrics::compute(&confidence, &correct, &prereg.spec).unwrap();
        let mut envelope = Envelope::new(
            "phase0 p1",
            PreregRef {
                path: "experiments/p1.toml (embedded)".into(),
                sha256: prereg.sha256.clone(),
            },
            Some("2026-11-21T00:00:00Z".into()),
            P1Report {
                corpus: CorpusSummary {
                    lines: 400,
                    rows: 400,
                    ..CorpusSummary::default()
                },
                metrics,
                breakdowns: Default::default(),
                risk_floor: None,
                corpus_join: None,
            },
        );
        envelope
            .inputs
            .push(InputFile::new(std::path::Path::new("corpus.jsonl"), b"x", Some(400)));
        (envelope, prereg.spec, confidence, correct)
    }

    #[test]
    fn markdown_shows_the_rule_the_verdict_and_the_numbers() {
        let (envelope, spec, _, _) = envelope();
        let md = markdown(P1_TEMPLATE, &envelope, &spec).unwrap();
        assert!(
            md.starts_with(&format!(
                "# P1 calibration — {}\n",
                envelope.report.metrics.verdict.kind
            )),
            "{md}"
        );
        assert!(md.contains(
            "> **Kill condition (pre-registered):** AUC <= 0.60 OR high-subset lift <= +5pp ⇒ do NOT build §7–§8"
        ));
        assert!(md.contains(&format!("(sha256 `{}`)", envelope.prereg.sha256)));
        assert!(md.contains("| rows | 400 ("), "{md}");
        assert!(md.contains("| [0.9, 1.0] | 40 | 0.950 |"), "{md}");
        assert!(md.contains("![ROC curve](p1-roc.svg)"));
        assert_eq!(md, markdown(P1_TEMPLATE, &envelope, &spec).unwrap());
    }

    #[test]
    fn a_broken_template_is_an_error_naming_it() {
        let (envelope, spec, _, _) = envelope();
        let error = markdown("{% for x in %}", &envelope, &spec).unwrap_err();
        assert!(error.to_string().starts_with("template p1.md.j2: "), "{error}");
    }

    #[test]
    fn stdout_block_leads_with_the_kill_condition() {
        let (envelope, spec, confidence, correct) = envelope();
        let block = stdout_block(&envelope, &spec);
        assert!(
            block.starts_with(
                "P1 calibration — kill condition (pre-registered): AUC <= 0.60 OR high-subset lift <= +5pp"
            )
        );
        assert!(block.contains(&format!("  verdict         {}: ", envelope.report.metrics.verdict.kind)));
        assert!(block.ends_with(&format!("sha256 {}\n", envelope.prereg.sha256)));
        let points = crate::stats::roc_curve(&confidence, &correct).unwrap().unwrap();
        let plots = plots(&points, &envelope.report.metrics, &spec);
        assert_eq!(
            plots.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
            vec![ROC_SVG, RELIABILITY_SVG]
        );
    }
}
