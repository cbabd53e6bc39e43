//! The shared report layer: the JSON envelope every experiment's report sits in, and the SVG plots.
//! Renderers turn a finished report into bytes; they never compute.

pub mod envelope;
pub mod p1;
pub mod p2;
pub mod p3;
pub mod svg;

/// A markdown template that could not be parsed or rendered.
#[derive(Debug, thiserror::Error)]
#[error("template {name}: {message}")]
pub struct TemplateError {
    pub name: String,
    pub message: String,
}

/// Renders the template `source` (called `name` in errors) with `view`; the result ends with one newline.
pub fn render_markdown(name: &str, source: &str, view: &impl serde::Serialize) -> Result<String, TemplateError> {
    let error = |e: minijinja::Error| TemplateError {
        name: name.to_string(),
        message: e.to_string(),
    };
    let mut env = minijinja::Environment::new();
    env.add_template(name, source).map_err(error)?;
    let rendered = env
        .get_template(name)
        .map_err(error)?
        .render(minijinja::value::Serde(view))
        .map_err(error)?;
    Ok(if rendered.ends_with('\n') {
        rendered
    } else {
        rendered + "\n"
    })
}
