//! The request that asks the agent for its self-report, printed by the SessionStart handler and by
//! `reflect-hook instructions`.
//!
//! The text is a template with an embedded default; `REFLECTION_INSTRUCTIONS` names a file that replaces it (read
//! only when capture is on, as a regular file of at most [`MAX_TEMPLATE_BYTES`]; otherwise the default is used).

use std::io::Read;
use std::path::Path;

/// The info string of the fenced block the agent ends its final message with.
pub const BLOCK_TAG: &str = "reflection";

/// The most bytes of a replacement template that are read.
pub const MAX_TEMPLATE_BYTES: u64 = 16 * 1024;

/// The embedded default (under 150 words; `tests::default_is_short` holds it there).
pub const DEFAULT_TEMPLATE: &str = "\
At the end of every turn, end your final message with a fenced code block tagged `reflection` holding one JSON \
object, your honest self-report on the work of this turn:

```reflection
{\"confidence\": 0.8, \"most_likely_wrong\": {\"surface\": \"data\", \"description\": \"the migration order\"}, \
\"known_not_in_diff\": \"ran the migration by hand\"}
```

- `confidence`: a number from 0 to 1, how likely the change is correct and will not be reverted or fixed later.
- `most_likely_wrong.surface`: one of none, docs, test, ui, build, infra, data, auth: where a mistake is most likely.
- `most_likely_wrong.description`: one sentence on what could be wrong.
- `known_not_in_diff`: what you did or know that the diff does not show (or an empty string).

Write no secrets in it. Only the last such block of a message counts.
";

/// How `reflect-hook instructions` frames the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// As is (what the SessionStart handler prints).
    Plain,
    /// A section to paste into CLAUDE.md.
    ClaudeMd,
    /// A section to paste into AGENTS.md (Codex, OpenCode and others read it).
    AgentsMd,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "plain" => Ok(Self::Plain),
            "claude-md" => Ok(Self::ClaudeMd),
            "agents-md" => Ok(Self::AgentsMd),
            other => Err(format!("unknown format {other:?} (claude-md, agents-md or plain)")),
        }
    }
}

/// The template: the file at `override_path` when it is a readable regular file of at most
/// [`MAX_TEMPLATE_BYTES`] holding UTF-8 text, else the default.
pub fn template(override_path: Option<&Path>) -> String {
    override_path
        .and_then(read_template)
        .unwrap_or_else(|| DEFAULT_TEMPLATE.to_string())
}

fn read_template(path: &Path) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_TEMPLATE_BYTES {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_TEMPLATE_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    (!text.trim().is_empty()).then_some(text)
}

/// The request in `format`.
pub fn render(template: &str, format: Format) -> String {
    let body = template.trim_end();
    match format {
        Format::Plain => format!("{body}\n"),
        Format::ClaudeMd | Format::AgentsMd => {
            format!("## Self-report at the end of every turn (reflect-hook)\n\n{body}\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_short_and_names_every_field_and_surface() {
        let words = DEFAULT_TEMPLATE.split_whitespace().count();
        assert!(words < 150, "{words} words");
        for needle in ["```reflection", "confidence", "most_likely_wrong", "known_not_in_diff"] {
            assert!(DEFAULT_TEMPLATE.contains(needle), "{needle}");
        }
        for surface in crate::reflection::Surface::ALL {
            let name = serde_json::to_value(surface).unwrap();
            assert!(DEFAULT_TEMPLATE.contains(name.as_str().unwrap()), "{name}");
        }
    }

    #[test]
    fn the_example_block_is_a_valid_self_report() {
        let report = super::super::self_report::from_message(DEFAULT_TEMPLATE).unwrap();
        assert_eq!(report.confidence.map(crate::reflection::UnitInterval::get), Some(0.8));
    }

    #[test]
    fn a_file_replaces_the_default_unless_unusable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ask.md");
        assert_eq!(template(Some(&path)), DEFAULT_TEMPLATE, "missing file");
        std::fs::write(&path, "Report your confidence.\n").unwrap();
        assert_eq!(template(Some(&path)), "Report your confidence.\n");
        std::fs::write(&path, "  \n").unwrap();
        assert_eq!(template(Some(&path)), DEFAULT_TEMPLATE, "blank file");
        std::fs::write(&path, vec![b'x'; MAX_TEMPLATE_BYTES as usize + 1]).unwrap();
        assert_eq!(template(Some(&path)), DEFAULT_TEMPLATE, "oversized file");
        assert_eq!(template(Some(dir.path())), DEFAULT_TEMPLATE, "a directory");
    }

    #[test]
    fn formats() {
        assert_eq!(render("Ask.\n\n", Format::Plain), "Ask.\n");
        assert!(render("Ask.", Format::AgentsMd).starts_with("## Self-report"));
        assert_eq!("claude-md".parse(), Ok(Format::ClaudeMd));
        assert!("md".parse::<Format>().is_err());
    }
}
