//! The shared report layer: the JSON envelope every experiment's report sits in, and the SVG plots.
//! Renderers turn a finished report into bytes; they never compute.

pub mod envelope;
pub mod p1;
pub mod p2;
pub mod p2_pool;
pub mod p3;
pub mod parquet;
pub mod plots;
pub mod run;
pub mod svg;
pub mod weekly;

/// A markdown template that could not be parsed or rendered.
#[derive(Debug, thiserror::Error)]
#[error("template {name}: {message}")]
pub struct TemplateError {
    pub name: String,
    pub message: String,
}

fn template_error(name: &str) -> impl Fn(minijinja::Error) -> TemplateError + '_ {
    move |e| TemplateError {
        name: name.to_string(),
        message: e.to_string(),
    }
}

/// Parses `source` (the template `name`) without rendering it, so that a broken template is found before a run.
pub fn check_template(name: &str, source: &str) -> Result<(), TemplateError> {
    minijinja::Environment::new()
        .add_template(name, source)
        .map_err(template_error(name))
}

/// Renders the template `source` (called `name` in errors) with `view`; the result ends with one newline.
pub fn render_markdown(name: &str, source: &str, view: &impl serde::Serialize) -> Result<String, TemplateError> {
    let error = template_error(name);
    let mut env = minijinja::Environment::new();
    env.add_template(name, source).map_err(&error)?;
    let rendered = env
        .get_template(name)
        .map_err(&error)?
        .render(minijinja::value::Serde(view))
        .map_err(&error)?;
    Ok(if rendered.ends_with('\n') {
        rendered
    } else {
        rendered + "\n"
    })
}

/// `n` and the noun, singular for 1: `1 commit`, `2 commits`, `0 commits`.
pub fn count(n: u64, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// Pretty JSON with a trailing newline: how every report and index file is written.
pub fn pretty_json(value: &impl serde::Serialize) -> serde_json::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// A share as reports print it: `42.9%`, or `undefined`.
pub(crate) fn percent(interval: &Option<crate::stats::Interval>) -> String {
    interval.map_or_else(|| "undefined".to_string(), |i| format!("{:.1}%", i.estimate * 100.0))
}

/// A share's interval as reports print it: `[41.4%, 44.4%]`, or nothing.
pub(crate) fn percent_ci(interval: &Option<crate::stats::Interval>) -> String {
    interval.map_or_else(String::new, |i| format!("[{:.1}%, {:.1}%]", i.lo * 100.0, i.hi * 100.0))
}

/// [`verdict_lines`] for a share verdict (P2, pooled P2, P3): when the data fell short, the line
/// `<label> N more <unit> (M in all)`.
pub(crate) fn share_verdict_lines(
    out: &mut String,
    verdict: &crate::experiments::ShareVerdict,
    label: &str,
    unit: &str,
    prereg: &envelope::PreregRef,
) {
    let needed = (verdict.n_still_needed > 0).then(|| {
        format!(
            "  {label:<15} {} more {unit} ({} in all)",
            verdict.n_still_needed, verdict.n_required
        )
    });
    verdict_lines(out, verdict.kind, &verdict.reasons, needed, prereg);
}

/// The stdout block's verdict line, then (when the data fell short) `needed`, then the prereg line.
pub(crate) fn verdict_lines(
    out: &mut String,
    kind: impl std::fmt::Display,
    reasons: &[String],
    needed: Option<String>,
    prereg: &envelope::PreregRef,
) {
    out.push_str(&format!("  verdict         {kind}: {}\n", reasons.join("; ")));
    if let Some(needed) = needed {
        out.push_str(&needed);
        out.push('\n');
    }
    out.push_str(&format!("  prereg          {} sha256 {}\n", prereg.path, prereg.sha256));
}
