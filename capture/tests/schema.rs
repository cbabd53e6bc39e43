//! The serde types and the JSON Schema agree: generated values serialise to schema-valid JSON and read back
//! equal, and every schema-invalid document fails to deserialise.

use std::num::NonZeroU32;

use capture::reflection::{
    MostLikelyWrong, Provenance, Reflection, ReflectionMode, RiskVerdict, SchemaVersion, Source, Surface, UnitInterval,
};
use capture::schema::{REFLECTION_V1_SCHEMA, is_valid, schema_errors};
use proptest::prelude::*;
use serde_json::{Value, json};

fn surface() -> impl Strategy<Value = Surface> {
    proptest::sample::select(Surface::ALL.to_vec())
}

fn unit() -> impl Strategy<Value = UnitInterval> {
    prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0].prop_map(|v| UnitInterval::new(v).unwrap())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "\\PC{0,40}", "[a-z0-9/_.-]{1,30}"]
}

prop_compose! {
    fn reflection()(
        task_ref in text(), agent in text(), session_id in text(), repo in text(),
        micros in 0i64..4_102_444_800_000_000,
        confidence in proptest::option::of(unit()),
        most_likely_wrong in proptest::option::of((surface(), text()).prop_map(|(surface, description)| MostLikelyWrong { surface, description })),
        known_not_in_diff in proptest::option::of(text()),
        needs_review in any::<bool>(), score in unit(), risk_surface in surface(), reason in text(),
        files_changed in proptest::collection::vec(text(), 0..8),
        attempt in 1u32..=u32::MAX, degraded in any::<bool>(),
        mode in proptest::sample::select(vec![ReflectionMode::Off, ReflectionMode::Solo, ReflectionMode::Orchestrated]),
    ) -> Reflection {
        Reflection {
            schema: SchemaVersion::V1,
            task_ref, agent, session_id,
            timestamp: jiff::Timestamp::from_microsecond(micros).unwrap(),
            repo, confidence, most_likely_wrong, known_not_in_diff,
            risk: RiskVerdict { needs_review, score, surface: risk_surface, reason },
            files_changed,
            provenance: Provenance {
                source: Source::StopHook,
                reflection_attempt: NonZeroU32::new(attempt).unwrap(),
                degraded,
                reflection_mode: mode,
            },
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_reflections_are_schema_valid_and_round_trip(reflection in reflection()) {
        let document = serde_json::to_value(&reflection).unwrap();
        prop_assert!(schema_errors(&document).is_empty(), "{:?}\n{document:#}", schema_errors(&document));
        let back: Reflection = serde_json::from_value(document).unwrap();
        prop_assert_eq!(back, reflection);
    }
}

fn valid_document() -> Value {
    json!({
        "schema": "reflection.v1",
        "task_ref": "repo#main",
        "agent": "unknown",
        "session_id": "s1",
        "timestamp": "2026-11-21T11:37:00.123456Z",
        "repo": "repo",
        "confidence": 0.8,
        "most_likely_wrong": {"surface": "auth", "description": "expiry check"},
        "known_not_in_diff": null,
        "risk": {"needs_review": true, "score": 1.0, "surface": "auth", "reason": "auth surface (weight 1) in: a"},
        "files_changed": ["a"],
        "provenance": {"source": "stop-hook", "reflection_attempt": 1, "degraded": false, "reflection_mode": "solo"}
    })
}

#[test]
fn a_valid_document_passes_both() {
    let document = valid_document();
    assert!(is_valid(&document));
    assert!(serde_json::from_value::<Reflection>(document).is_ok());
}

#[test]
fn optional_self_report_fields_may_be_absent() {
    let mut document = valid_document();
    for key in ["confidence", "most_likely_wrong", "known_not_in_diff"] {
        document.as_object_mut().unwrap().remove(key);
    }
    assert!(is_valid(&document));
    let reflection: Reflection = serde_json::from_value(document).unwrap();
    assert_eq!(reflection.confidence, None);
    // Written back, the absent fields become explicit nulls, which the schema also accepts.
    let written = serde_json::to_value(&reflection).unwrap();
    assert_eq!(written["confidence"], Value::Null);
    assert!(is_valid(&written));
}

/// One mutation per constraint of the schema.
fn invalid_documents() -> Vec<(&'static str, Value)> {
    let mutate = |f: &dyn Fn(&mut Value)| {
        let mut document = valid_document();
        f(&mut document);
        document
    };
    let mut cases: Vec<(&'static str, Value)> = Vec::new();
    for key in [
        "schema",
        "task_ref",
        "agent",
        "session_id",
        "timestamp",
        "repo",
        "risk",
        "files_changed",
        "provenance",
    ] {
        cases.push((
            key,
            mutate(&|d| {
                d.as_object_mut().unwrap().remove(key);
            }),
        ));
    }
    for key in ["task_ref", "agent", "session_id", "repo", "timestamp", "files_changed"] {
        cases.push((key, mutate(&|d| d[key] = Value::Null)));
    }
    cases.extend([
        ("wrong schema const", mutate(&|d| d["schema"] = json!("reflection.v2"))),
        ("extra top-level key", mutate(&|d| d["extra"] = json!(1))),
        (
            "timestamp not date-time",
            mutate(&|d| d["timestamp"] = json!("yesterday")),
        ),
        (
            "timestamp without offset",
            mutate(&|d| d["timestamp"] = json!("2026-11-21T11:37:00")),
        ),
        ("confidence above 1", mutate(&|d| d["confidence"] = json!(1.5))),
        ("confidence below 0", mutate(&|d| d["confidence"] = json!(-0.1))),
        ("confidence a string", mutate(&|d| d["confidence"] = json!("0.5"))),
        (
            "most_likely_wrong missing description",
            mutate(&|d| d["most_likely_wrong"] = json!({"surface": "ui"})),
        ),
        (
            "most_likely_wrong bad surface",
            mutate(&|d| d["most_likely_wrong"]["surface"] = json!("kernel")),
        ),
        (
            "most_likely_wrong extra key",
            mutate(&|d| d["most_likely_wrong"]["why"] = json!("x")),
        ),
        (
            "known_not_in_diff a number",
            mutate(&|d| d["known_not_in_diff"] = json!(3)),
        ),
        ("risk score above 1", mutate(&|d| d["risk"]["score"] = json!(1.01))),
        ("risk score negative", mutate(&|d| d["risk"]["score"] = json!(-1))),
        ("risk bad surface", mutate(&|d| d["risk"]["surface"] = json!("network"))),
        (
            "risk missing reason",
            mutate(&|d| {
                d["risk"].as_object_mut().unwrap().remove("reason");
            }),
        ),
        ("risk extra key", mutate(&|d| d["risk"]["weight"] = json!(1))),
        (
            "needs_review a string",
            mutate(&|d| d["risk"]["needs_review"] = json!("yes")),
        ),
        (
            "files_changed item not a string",
            mutate(&|d| d["files_changed"] = json!(["a", 1])),
        ),
        (
            "provenance wrong source",
            mutate(&|d| d["provenance"]["source"] = json!("manual")),
        ),
        (
            "attempt zero",
            mutate(&|d| d["provenance"]["reflection_attempt"] = json!(0)),
        ),
        (
            "attempt fractional",
            mutate(&|d| d["provenance"]["reflection_attempt"] = json!(1.5)),
        ),
        (
            "bad mode",
            mutate(&|d| d["provenance"]["reflection_mode"] = json!("auto")),
        ),
        (
            "degraded missing",
            mutate(&|d| {
                d["provenance"].as_object_mut().unwrap().remove("degraded");
            }),
        ),
        (
            "provenance extra key",
            mutate(&|d| d["provenance"]["host"] = json!("x")),
        ),
        ("not an object", json!(["reflection.v1"])),
        (
            "an array of the fields in order",
            json!(["reflection.v1", "t", "a", "s", "2026-11-21T11:37:00Z", "r", null, null, null,
                   {"needs_review": false, "score": 0.0, "surface": "none", "reason": "x"}, [],
                   {"source": "stop-hook", "reflection_attempt": 1, "degraded": false, "reflection_mode": "solo"}]),
        ),
        (
            "risk as an array",
            mutate(&|d| d["risk"] = json!([true, 1.0, "auth", "x"])),
        ),
        (
            "provenance as an array",
            mutate(&|d| d["provenance"] = json!(["stop-hook", 1, false, "solo"])),
        ),
        (
            "most_likely_wrong as an array",
            mutate(&|d| d["most_likely_wrong"] = json!(["auth", "x"])),
        ),
    ]);
    cases
}

#[test]
fn schema_invalid_documents_fail_to_deserialise() {
    for (what, document) in invalid_documents() {
        assert!(!is_valid(&document), "{what}: the schema should refuse it");
        let parsed = serde_json::from_value::<Reflection>(document);
        assert!(
            parsed.is_err(),
            "{what}: deserialised although the schema refuses it: {parsed:?}"
        );
    }
}

#[test]
fn the_embedded_schema_is_the_published_one() {
    let embedded: Value = serde_json::from_str(REFLECTION_V1_SCHEMA).unwrap();
    assert_eq!(
        embedded["$id"],
        "https://mosaicstack.dev/schemas/reflection/reflection.v1.schema.json"
    );
    // In a checkout with ../shared beside it (as in CI), the copy must be byte-identical to the source of truth.
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reflection.v1.schema.json");
    if let Ok(published) = std::fs::read_to_string(&shared) {
        assert_eq!(
            published,
            REFLECTION_V1_SCHEMA,
            "capture/reflection.v1.schema.json drifted from {}",
            shared.display()
        );
    }
}

#[test]
fn a_huge_invalid_value_is_quoted_short() {
    // A 1 MB string where the schema wants a number: the message names the field and cuts the value.
    let mut document: serde_json::Value = serde_json::from_str(VALID_FOR_HUGE).unwrap();
    document["confidence"] = serde_json::Value::String("x".repeat(1_000_000));
    let errors = capture::schema::schema_errors(&document);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("/confidence: \"xxx"), "{}", &errors[0][..40]);
    assert!(
        errors[0].ends_with(" characters in all)"),
        "{}",
        &errors[0][errors[0].len() - 60..]
    );
    assert!(errors[0].chars().count() < 400);
}

const VALID_FOR_HUGE: &str = r#"{"schema":"reflection.v1","task_ref":"app#main","agent":"unknown","session_id":"s1",
"timestamp":"2026-11-21T11:49:06.566088Z","repo":"app","confidence":0.75,"most_likely_wrong":null,
"known_not_in_diff":null,"risk":{"needs_review":true,"score":0.9,"surface":"data","reason":"r"},
"files_changed":["src/db.sql"],"provenance":{"source":"stop-hook","reflection_attempt":1,"degraded":false,
"reflection_mode":"solo"}}"#;
