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
            format!("{at}: {error}")
        })
        .collect();
    errors.sort();
    errors.dedup();
    errors
}

/// Whether `document` satisfies the schema.
pub fn is_valid(document: &serde_json::Value) -> bool {
    VALIDATOR.is_valid(document)
}
