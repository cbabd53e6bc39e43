//! The `reflection.v1` JSON Schema, embedded byte for byte, and a validator built from it.

use std::sync::LazyLock;

/// The schema document exactly as published (`reflection.v1.schema.json` beside this crate's `Cargo.toml`).
pub const REFLECTION_V1_SCHEMA: &str = include_str!("../reflection.v1.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: serde_json::Value =
        serde_json::from_str(REFLECTION_V1_SCHEMA).expect("the embedded schema is valid JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the embedded schema is a valid draft 2020-12 schema")
});

/// Every way `document` fails the schema, as `"<json pointer>: <message>"`, sorted; empty when it is valid.
pub fn schema_errors(document: &serde_json::Value) -> Vec<String> {
    let mut errors: Vec<String> = VALIDATOR
        .iter_errors(document)
        .map(|error| {
            let pointer = error.instance_path().to_string();
            let at = if pointer.is_empty() { "/".to_string() } else { pointer };
            // The validator's message quotes the offending value, which can be the whole (megabytes of) document.
            format!("{at}: {}", shorten(&error.to_string()))
        })
        .collect();
    errors.sort();
    errors.dedup();
    errors
}

/// The most characters of one schema message kept (the value it quotes is cut).
pub const MESSAGE_MAX_CHARS: usize = 300;

/// `message` cut to [`MESSAGE_MAX_CHARS`] characters, saying how long it was.
fn shorten(message: &str) -> String {
    let total = message.chars().count();
    if total <= MESSAGE_MAX_CHARS {
        return message.to_string();
    }
    let kept: String = message.chars().take(MESSAGE_MAX_CHARS).collect();
    format!("{kept}… ({total} characters in all)")
}

/// Whether `document` satisfies the schema.
pub fn is_valid(document: &serde_json::Value) -> bool {
    VALIDATOR.is_valid(document)
}
