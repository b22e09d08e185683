//! The committed schemas under `schemas/` must equal the ones generated from the types.
//! After a deliberate change to the wire types, run with `UPDATE_SCHEMAS=1` to rewrite them.

use std::path::Path;

use inbox_protocol::schema::{outcome_schema, request_schema, to_pretty_text};

fn check(name: &str, schema: serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas")
        .join(name);
    let generated = to_pretty_text(&schema);
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} unreadable: {e}", path.display()));
    assert!(
        committed == generated,
        "{} has drifted from the Rust types; run `UPDATE_SCHEMAS=1 cargo test -p inbox-protocol \
         --test integration schemas::` and commit the result",
        path.display()
    );
}

#[test]
fn request_schema_is_committed() {
    check("request.schema.json", request_schema());
}

#[test]
fn outcome_schema_is_committed() {
    check("outcome.schema.json", outcome_schema());
}

#[test]
fn committed_request_schema_accepts_the_examples_the_parser_accepts() {
    // The whole-file schema (anyOf of all the shapes) must agree with the parser on
    // structurally valid files.
    let validator = jsonschema::validator_for(&request_schema()).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/requests");
    for name in [
        "bare-array",
        "interactive-wrapper",
        "structured-batch",
        "envelope-full",
        "elicitation-form",
        "elicitation-confirm-only",
        "ask-user-question",
        "human-interrupt",
        "human-interrupt-list",
        "langchain-hitl",
        "langchain-hitl-two",
    ] {
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{name}.json"))).unwrap())
                .unwrap();
        assert!(
            validator.is_valid(&value),
            "{name} should satisfy the request schema"
        );
    }
    let wrong: serde_json::Value =
        serde_json::json!({"inbox": 1, "questions": [{"question": "x", "type": "dropdown"}]});
    assert!(!validator.is_valid(&wrong));
    // Structural mistakes in the other shapes are caught too.
    for wrong in [
        serde_json::json!({"message": "m", "requestedSchema": {"type": "object",
            "properties": {"a": {"type": "object"}}}}),
        serde_json::json!({"questions": [{"question": "x", "header": "h",
            "options": [{"label": "a"}], "multiSelect": "no"}]}),
        serde_json::json!({"action_request": {"action": "a", "args": []},
            "config": {"allow_accept": true}}),
        serde_json::json!({"action_requests": [{"name": "a", "args": {}}],
            "review_configs": [{"action_name": "a", "allowed_decisions": ["ignore"]}]}),
    ] {
        assert!(
            !validator.is_valid(&wrong),
            "{wrong} should not satisfy the schema"
        );
    }
}
