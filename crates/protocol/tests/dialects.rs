//! The request dialects of other systems: MCP elicitation, Claude Code's AskUserQuestion and
//! LangGraph's HumanInterrupt. How each is told apart, what answers it takes, and the reply
//! each outcome gives back in the dialect's own shape. (What each file normalises to is in
//! the fixtures under data/requests/.)

use chrono::{TimeZone, Utc};
use inbox_protocol::{
    check_answers, dialect_reply, fill_defaults, parse_request, Origin, Outcome, OutcomeStatus,
    Problem, Request, Trigger,
};
use serde_json::{json, Map, Value};

fn request(body: Value) -> Request {
    parse_request(body.to_string().as_bytes(), Some("r1"))
        .unwrap_or_else(|problems| panic!("refused: {problems:?}\n{body}"))
}

fn problems(body: Value) -> Vec<Problem> {
    parse_request(body.to_string().as_bytes(), Some("r1")).expect_err("should be refused")
}

fn fixture(name: &str) -> Request {
    let path = format!(
        "{}/tests/data/requests/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_request(&std::fs::read(path).unwrap(), Some(name)).expect("a valid fixture")
}

fn given(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn outcome(status: OutcomeStatus) -> Outcome {
    let at = Utc.with_ymd_and_hms(2026, 12, 3, 10, 0, 0).unwrap();
    Outcome::new("r1", status, "operator:test", "host/instance", at)
}

/// The operator answers `answers`; the reply the outcome carries.
fn answered(request: &Request, answers: Value) -> Value {
    let set = check_answers(request, &given(answers))
        .unwrap_or_else(|problems| panic!("answers refused: {problems:?}"));
    outcome(OutcomeStatus::Answered)
        .with_answers(set)
        .with_reply(request)
        .reply
        .expect("a reply")
}

/// The operator's answers are refused; the messages, by pointer.
fn refused(request: &Request, answers: Value) -> Vec<(String, String)> {
    check_answers(request, &given(answers))
        .expect_err("answers should be refused")
        .into_iter()
        .map(|p| (p.pointer, p.message))
        .collect()
}

fn declined(request: &Request) -> Option<Value> {
    outcome(OutcomeStatus::Declined)
        .with_reason("not this week")
        .with_reply(request)
        .reply
}

fn expired(request: &Request) -> Option<Value> {
    let filled = fill_defaults(request);
    assert!(!filled.missing_required.is_empty(), "would be defaulted");
    outcome(OutcomeStatus::Expired)
        .with_answers(filled.set)
        .with_reason("the request expired")
        .with_reply(request)
        .reply
}

fn elicitation() -> Value {
    json!({
        "message": "Set up the service.",
        "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            "ratio": {"type": "number", "minimum": -1.5, "maximum": 2},
            "public": {"type": "boolean"},
            "tier": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "alerts": {"type": "array", "items": {"type": "string", "enum": ["email", "slack"]}, "maxItems": 1},
            "owner": {"type": "string", "format": "email"},
            "start": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "docs": {"type": "string", "format": "uri"}
        }, "required": ["name", "replicas"]}
    })
}

#[test]
fn each_shape_is_told_by_its_top_level_keys() {
    let dialect = |body: Value| {
        request(body).origin.map(|origin| match origin {
            Origin::Elicitation { .. } => "elicitation",
            Origin::AskUserQuestion { .. } => "ask_user_question",
            Origin::HumanInterrupt { .. } => "human_interrupt",
            Origin::LangChainHitl { .. } => "langchain_hitl",
        })
    };
    let typed = json!([{"id": "go", "question": "Go?", "type": "confirm"}]);
    assert_eq!(dialect(json!({"questions": typed})), None);
    assert_eq!(dialect(typed.clone()), None);
    assert_eq!(dialect(json!({"interactiveQuestions": typed})), None);
    assert_eq!(dialect(elicitation()), Some("elicitation"));
    let asked = json!([{"question": "Which?", "header": "Pick", "options": [{"label": "a"}]}]);
    assert_eq!(
        dialect(json!({"questions": asked})),
        Some("ask_user_question")
    );
    // Any one of the marks will do: options as objects, multiSelect, header.
    for question in [
        json!({"question": "Which?", "options": [{"label": "a"}]}),
        json!({"question": "Which?", "options": [{"label": "a"}], "multiSelect": true}),
    ] {
        let body = json!({"inbox": 1, "questions": [question]});
        assert_eq!(dialect(body), Some("ask_user_question"));
    }
    let interrupt =
        json!({"action_request": {"action": "a", "args": {}}, "config": {"allow_accept": true}});
    assert_eq!(dialect(interrupt.clone()), Some("human_interrupt"));
    assert_eq!(dialect(json!([interrupt])), Some("human_interrupt"));
    let hitl = json!({"action_requests": [{"name": "a", "args": {}}],
                      "review_configs": [{"action_name": "a", "allowed_decisions": ["approve"]}]});
    assert_eq!(dialect(hitl), Some("langchain_hitl"));
    // Either key tells the shape, so a missing one is reported as that shape's mistake.
    let half = problems(json!({"action_requests": [{"name": "a", "args": {}}]}));
    assert_eq!(half.len(), 1, "{half:?}");
    assert!(
        half[0]
            .message
            .contains("\"review_configs\" is a required property"),
        "{half:?}"
    );

    // A typed question stays an envelope question, whatever else it carries: a header is
    // an unknown field there, ignored as always.
    let with_header =
        json!({"questions": [{"id": "go", "question": "Go?", "type": "confirm", "header": "H"}]});
    assert_eq!(dialect(with_header), None);
    // An envelope question that forgot its type is still an envelope mistake.
    let untyped =
        problems(json!({"questions": [{"id": "go", "question": "Go?", "options": ["a"]}]}));
    assert_eq!(untyped[0].pointer, "/questions/0", "{untyped:?}");
    assert!(
        untyped[0]
            .message
            .contains("\"type\" is a required property"),
        "{untyped:?}"
    );
    // Keys of two shapes in one object are refused, not guessed at.
    let mixed = problems(json!({"action_request": {"action": "a", "args": {}},
                                "config": {"allow_accept": true}, "interactiveQuestions": typed}));
    assert_eq!(mixed.len(), 1, "{mixed:?}");
    assert!(
        mixed[0].message.contains("different request shapes"),
        "{mixed:?}"
    );
}

#[test]
fn envelope_fields_apply_to_the_other_shapes() {
    let mut body = elicitation();
    let fields = json!({"inbox": 1, "id": "r1", "title": "Service setup", "mode": "autonomous",
        "priority": "critical", "expires_at": "2026-12-03T12:00:00Z",
        "source": {"app": "mcp-bridge", "cwd": "/srv/app", "project": "app"}});
    body.as_object_mut().unwrap().extend(given(fields));
    let parsed = request(body);
    assert_eq!(parsed.title.as_deref(), Some("Service setup"));
    assert_eq!(parsed.mode, inbox_protocol::Mode::Autonomous);
    assert_eq!(parsed.priority, inbox_protocol::Priority::Critical);
    assert_eq!(parsed.source.cwd.as_deref(), Some("/srv/app"));
    assert_eq!(parsed.source.project.as_deref(), Some("app"));
    assert!(parsed.expiry.is_some());

    // And are checked as in the envelope, at the interrupt's own pointer in a list.
    let interrupt = json!([{"action_request": {"action": "a", "args": {}}, "config": {"allow_accept": true},
                           "id": "other", "timeout_seconds": 5, "expires_at": "2026-12-03T12:00:00Z"}]);
    let pointers: Vec<String> = problems(interrupt).into_iter().map(|p| p.pointer).collect();
    assert_eq!(pointers, ["/0/id", "/0/timeout_seconds"]);
    // MCP's own `mode: form` is the inbox's interactive mode.
    let mut form = elicitation();
    form["mode"] = json!("form");
    assert_eq!(request(form).mode, inbox_protocol::Mode::Interactive);
}

#[test]
fn source_cwd_and_project_are_bounded() {
    let body = |cwd: String, project: String| {
        json!({"source": {"cwd": cwd, "project": project},
               "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]})
    };
    let ok = request(body("/".repeat(4096), "p".repeat(200)));
    assert_eq!(ok.source.cwd.map(|c| c.len()), Some(4096));
    let pointers: Vec<String> = problems(body("/".repeat(4097), "p".repeat(201)))
        .into_iter()
        .map(|p| p.pointer)
        .collect();
    assert_eq!(pointers, ["/source/cwd", "/source/project"]);
}

#[test]
fn elicitation_answers_are_checked_as_the_schema_says() {
    let form = request(elicitation());
    let base = json!({"name": "abc", "replicas": "3"});
    let with = |key: &str, value: Value| {
        let mut answers = base.clone();
        answers[key] = value;
        answers
    };
    let cases = [
        ("name", json!("a"), "at least 2"),
        ("name", json!("abcdef"), "at most 5"),
        ("replicas", json!("3.5"), "expected a whole number"),
        ("replicas", json!("three"), "expected a whole number"),
        ("replicas", json!("0"), "less than the minimum, 1"),
        ("replicas", json!("11"), "more than the maximum, 10"),
        ("replicas", json!("99999999999999999999999"), "too large"),
        ("ratio", json!("-2"), "less than the minimum, -1.5"),
        ("ratio", json!("2.5e0"), "more than the maximum, 2"),
        ("ratio", json!("NaN"), "expected a number"),
        ("tier", json!("Medium"), "not one of the options"),
        ("alerts", json!(["email", "slack"]), "pick at most 1"),
        (
            "owner",
            json!("ann at example.com"),
            "expected an email address",
        ),
        ("start", json!("2026-02-30"), "expected a date"),
        ("at", json!("2026-12-03 10:00"), "expected a date and time"),
        (
            "docs",
            json!("example.com/docs"),
            "expected an absolute URI",
        ),
    ];
    for (key, value, wanted) in cases {
        let problems = refused(&form, with(key, value.clone()));
        assert_eq!(problems.len(), 1, "{key}={value}: {problems:?}");
        assert_eq!(problems[0].0, format!("/{key}"));
        assert!(
            problems[0].1.contains(wanted),
            "{key}={value}: {problems:?}"
        );
    }
    // Required properties are required; the others may be left out.
    let missing = refused(&form, json!({"name": "abc"}));
    assert_eq!(missing[0].0, "/replicas");
}

#[test]
fn elicitation_replies_are_elicit_results_with_typed_content() {
    let form = request(elicitation());
    let reply = answered(
        &form,
        json!({"name": "abc", "replicas": "+007", "ratio": "-1.25", "public": false,
               "tier": "Large", "alerts": ["slack"], "owner": "ann@example.com",
               "start": "2026-12-07", "at": "2026-12-03T10:00:00+01:00",
               "docs": "https://example.com/docs"}),
    );
    assert_eq!(
        reply,
        json!({"action": "accept", "content": {
            "name": "abc", "replicas": 7, "ratio": -1.25, "public": false, "tier": "l",
            "alerts": ["slack"], "owner": "ann@example.com", "start": "2026-12-07",
            "at": "2026-12-03T10:00:00+01:00", "docs": "https://example.com/docs"}})
    );
    // Skipped optional properties are absent, not null. A number that happens to be whole
    // is written as an integer.
    let reply = answered(&form, json!({"name": "abc", "replicas": "3", "ratio": "2"}));
    assert_eq!(
        reply,
        json!({"action": "accept", "content": {"name": "abc", "replicas": 3, "ratio": 2}})
    );
    assert_eq!(declined(&form), Some(json!({"action": "decline"})));
    assert_eq!(expired(&form), Some(json!({"action": "cancel"})));
}

#[test]
fn an_elicitation_with_defaults_settles_autonomously_as_accept() {
    let parsed = fixture("elicitation-form");
    let mut body: Value = serde_json::from_slice(
        &std::fs::read(format!(
            "{}/tests/data/requests/elicitation-form.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    // Only the defaults' part of the fixture: every required property dropped.
    body["requestedSchema"]["required"] = json!([]);
    let defaults_only = request(body);
    let filled = fill_defaults(&defaults_only);
    assert!(filled.missing_required.is_empty());
    let reply = outcome(OutcomeStatus::Defaulted)
        .with_answers(filled.set)
        .with_reply(&defaults_only)
        .reply;
    assert_eq!(
        reply,
        Some(json!({"action": "accept", "content": {
            "start date": "2026-12-07", "replicas": 2, "public": false, "tier": "m",
            "alerts": ["email"]}}))
    );
    // The property with a space in its name is asked as q3 and answered under its name.
    assert!(parsed.question("q3").is_some());
}

/// Expiry may fill every question from its default, but nobody submitted the form, and MCP's
/// `accept` means a person did: the reply is `cancel`.
#[test]
fn an_elicitation_defaulted_by_expiry_or_delay_replies_cancel() {
    let defaults_only = request(json!({
        "message": "Proceed?",
        "requestedSchema": {"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 2.0},
            "note": {"type": "string"}}}
    }));
    let filled = fill_defaults(&defaults_only);
    assert!(filled.missing_required.is_empty());
    // 2.0 is an integer to JSON Schema, asked and answered as "2".
    assert_eq!(filled.set.answers["replicas"], json!("2"));
    let by = |writer: &str| {
        Outcome::new(
            "r1",
            OutcomeStatus::Defaulted,
            writer,
            "host/instance",
            Utc::now(),
        )
        .with_answers(filled.set.clone())
        .with_reply(&defaults_only)
        .reply
    };
    assert_eq!(
        by(inbox_protocol::BY_EXPIRY),
        Some(json!({"action": "cancel"}))
    );
    assert_eq!(
        by(inbox_protocol::BY_AUTONOMOUS),
        Some(json!({"action": "accept", "content": {"replicas": 2}}))
    );
    // An operator's rule says what set it off: its expiry or its own delay is nobody's
    // submission either; the request's own autonomous mode is the asker's.
    let by_rule = |trigger: Trigger| {
        Outcome::new(
            "r1",
            OutcomeStatus::Defaulted,
            "policy:rule:agents-low-stakes",
            "host/instance",
            Utc::now(),
        )
        .with_trigger(trigger)
        .with_answers(filled.set.clone())
        .with_reply(&defaults_only)
        .reply
    };
    assert_eq!(by_rule(Trigger::Expiry), Some(json!({"action": "cancel"})));
    assert_eq!(by_rule(Trigger::Delay), Some(json!({"action": "cancel"})));
    assert_eq!(
        by_rule(Trigger::Autonomous),
        Some(json!({"action": "accept", "content": {"replicas": 2}}))
    );
    let fractional = problems(json!({
        "message": "Proceed?",
        "requestedSchema": {"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 2.5}}}
    }));
    assert!(
        fractional[0].message.contains("not a whole number"),
        "{fractional:?}"
    );
}

#[test]
fn an_elicitation_without_properties_is_accept_or_decline() {
    let confirm = fixture("elicitation-confirm-only");
    assert_eq!(confirm.questions.len(), 1);
    assert_eq!(
        confirm.display_title(),
        "Delete the 3 stale branches of shop?"
    );
    assert_eq!(
        answered(&confirm, json!({"accept": true})),
        json!({"action": "accept", "content": {}})
    );
    assert_eq!(
        answered(&confirm, json!({"accept": false})),
        json!({"action": "decline"})
    );
}

#[test]
fn elicitation_properties_keep_their_order_and_get_valid_ids() {
    let parsed = fixture("elicitation-form");
    let ids: Vec<&str> = parsed.questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "name", "owner", "q3", "replicas", "budget", "public", "tier", "region", "alerts",
            "features"
        ]
    );
    // A positional id a property already has is not reused.
    // (Raw text: json! would sort the keys.)
    let text = r#"{"message": "m", "requestedSchema": {"type": "object", "properties": {
        "q2": {"type": "string"}, "a b": {"type": "string"}}}}"#;
    let clash = parse_request(text.as_bytes(), None).unwrap();
    let ids: Vec<&str> = clash.questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["q2", "q2-2"]);
}

#[test]
fn ask_user_question_replies_with_labels_keyed_by_question_text() {
    let asked = fixture("ask-user-question");
    assert!(asked.questions.iter().all(|q| q.allow_custom && q.required));
    assert_eq!(asked.questions[0].tab_label(), "Auth");
    let reply = answered(
        &asked,
        json!({"q1": "OAuth 2.0", "q2": ["Orders", "Health"]}),
    );
    assert_eq!(
        reply,
        json!({"answers": {
            "Which authentication method should the API use?": "OAuth 2.0",
            "Which endpoints need authentication?": "Orders, Health"}})
    );
    // "Other": the operator's own text stands in for a label.
    let reply = answered(
        &asked,
        json!({"q1": "mTLS between services", "q2": ["Orders", "Admin"]}),
    );
    assert_eq!(
        reply["answers"],
        json!({"Which authentication method should the API use?": "mTLS between services",
               "Which endpoints need authentication?": "Orders, Admin"})
    );
    assert_eq!(
        declined(&asked),
        Some(json!({"answers": {}, "declined": "not this week"}))
    );
    assert_eq!(
        expired(&asked),
        Some(json!({"answers": {}, "expired": "the request expired"}))
    );
}

#[test]
fn human_interrupt_replies_are_human_responses() {
    let interrupt = fixture("human-interrupt");
    assert_eq!(
        answered(&interrupt, json!({"decision": "accept"})),
        json!({"type": "accept", "args": null})
    );
    // Edit without touching the arguments: they are the current ones, from the default.
    assert_eq!(
        answered(&interrupt, json!({"decision": "edit"})),
        json!({"type": "edit", "args": {"action": "send_email", "args": {
            "to": "ann@example.com", "subject": "Your refund",
            "body": "Hi Ann,\nyour refund of 40 EUR is on its way."}}})
    );
    assert_eq!(
        answered(
            &interrupt,
            json!({"decision": "edit", "args": "{\"to\": \"bob@example.com\"}"})
        ),
        json!({"type": "edit", "args": {"action": "send_email", "args": {"to": "bob@example.com"}}})
    );
    assert_eq!(
        answered(
            &interrupt,
            json!({"decision": "response", "response": "Ask for the order number first."})
        ),
        json!({"type": "response", "args": "Ask for the order number first."})
    );
    assert_eq!(
        answered(&interrupt, json!({"decision": "ignore"})),
        json!({"type": "ignore", "args": null})
    );
    assert_eq!(
        declined(&interrupt),
        Some(json!({"type": "ignore", "args": null}))
    );
    assert_eq!(
        expired(&interrupt),
        Some(json!({"type": "ignore", "args": null}))
    );

    // A list in, a list out: LangGraph resumes interrupt([...]) with a list.
    let listed = fixture("human-interrupt-list");
    assert_eq!(
        answered(&listed, json!({"decision": "accept"})),
        json!([{"type": "accept", "args": null}])
    );
    assert_eq!(
        declined(&listed),
        Some(json!([{"type": "ignore", "args": null}]))
    );
}

#[test]
fn human_interrupt_answers_must_make_sense() {
    let interrupt = fixture("human-interrupt");
    let not_json = refused(&interrupt, json!({"decision": "edit", "args": "{to: bob}"}));
    assert_eq!(not_json[0].0, "/args");
    assert!(not_json[0].1.contains("not valid JSON"), "{not_json:?}");
    let not_object = refused(&interrupt, json!({"decision": "edit", "args": "[1, 2]"}));
    assert!(
        not_object[0].1.contains("expected a JSON object"),
        "{not_object:?}"
    );
    assert!(not_object[0].1.contains("got an array"), "{not_object:?}");
    let no_text = refused(&interrupt, json!({"decision": "response", "response": ""}));
    assert_eq!(
        no_text,
        [(
            "/response".to_owned(),
            "question \"response\" is required when \"decision\" is \"response\"".to_owned()
        )]
    );
    // A refused value is reported once, not again as missing.
    let bad = refused(&interrupt, json!({"decision": "response", "response": 7}));
    assert_eq!(bad.len(), 1, "{bad:?}");
    // Only the allowed responses are offered.
    let listed = fixture("human-interrupt-list");
    let problems = refused(&listed, json!({"decision": "edit"}));
    assert!(
        problems[0].1.contains("not one of the options"),
        "{problems:?}"
    );
    // Policies cannot decide for the operator: there is no default decision.
    let filled = fill_defaults(&interrupt);
    assert_eq!(filled.missing_required, ["decision"]);
}

#[test]
fn edited_arguments_too_long_to_answer_are_refused_up_front() {
    let big = "x".repeat(11_000);
    let body = json!({"action_request": {"action": "write", "args": {"text": big}},
                      "config": {"allow_edit": true}});
    let found = problems(body.clone());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pointer, "/action_request/args");
    // Without editing, the same arguments are fine: the labels only show their start.
    let mut accept_only = body;
    accept_only["config"] = json!({"allow_accept": true});
    let parsed = request(accept_only);
    assert!(parsed.questions[0].choices[0].label.chars().count() <= 500);
}

#[test]
fn own_dialects_and_rejected_requests_have_no_reply() {
    let own = request(json!({"questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}));
    assert_eq!(answered_reply(&own, json!({"go": true})), None);
    let interrupt = fixture("human-interrupt");
    assert_eq!(
        dialect_reply(&interrupt, &outcome(OutcomeStatus::Rejected)),
        None
    );
}

fn answered_reply(request: &Request, answers: Value) -> Option<Value> {
    let set = check_answers(request, &given(answers)).unwrap();
    outcome(OutcomeStatus::Answered)
        .with_answers(set)
        .with_reply(request)
        .reply
}

#[test]
fn the_stored_form_keeps_origin_and_rules_and_old_rows_still_read() {
    for name in [
        "elicitation-form",
        "elicitation-confirm-only",
        "ask-user-question",
        "human-interrupt",
        "human-interrupt-list",
        "langchain-hitl",
        "langchain-hitl-two",
    ] {
        let parsed = fixture(name);
        let stored = serde_json::to_string(&parsed).unwrap();
        let back: Request = serde_json::from_str(&stored).unwrap();
        assert_eq!(back, parsed, "{name}");
    }
    // A request stored before `origin` and `rules` existed.
    let old = json!({"id": "r1", "title": null, "source": {}, "confirm_title": null,
        "confirm_description": null, "mode": "interactive", "expiry": null,
        "priority": "normal", "sha256": "00", "questions": [{"id": "go", "kind": "confirm",
        "type": "confirm", "dialect": "interactive", "question": "Go?", "description": null,
        "label": null, "choices": [], "default": null, "required": true, "pattern": null,
        "allow_custom": false}]});
    let back: Request = serde_json::from_value(old).unwrap();
    assert_eq!(back.origin, None);
    assert!(back.questions[0].rules.is_empty());
}

#[test]
fn replies_are_written_into_the_outcome_file() {
    let interrupt = fixture("human-interrupt");
    let set = check_answers(&interrupt, &given(json!({"decision": "ignore"}))).unwrap();
    let written = outcome(OutcomeStatus::Answered)
        .with_answers(set)
        .with_reply(&interrupt)
        .to_file_bytes();
    let file: Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(file["reply"], json!({"type": "ignore", "args": null}));
    let back = Outcome::from_file_bytes(&written).unwrap();
    assert_eq!(back.reply, Some(json!({"type": "ignore", "args": null})));
    // No reply, no key: outcomes of the inbox's own dialects are unchanged.
    let plain = outcome(OutcomeStatus::Declined).to_file_bytes();
    let file: Value = serde_json::from_slice(&plain).unwrap();
    assert!(file.get("reply").is_none());
}

#[test]
fn the_elicitation_example_in_the_protocol_replies_as_documented() {
    // docs/PROTOCOL.md, "MCP elicitation".
    let text = r#"{"message": "Create the **billing** service.",
 "requestedSchema": {"type": "object", "properties": {
   "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10, "default": 2},
   "tier": {"type": "string", "title": "Tier", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}},
  "required": ["tier"]},
 "source": {"app": "claude-code", "cwd": "/home/dana/src/shop", "project": "shop"},
 "timeout_seconds": 900}"#;
    let example = parse_request(text.as_bytes(), None).unwrap();
    let set = check_answers(&example, &given(json!({"tier": "Large"}))).unwrap();
    assert_eq!(
        serde_json::to_value(&set.answers).unwrap(),
        json!({"replicas": "2", "tier": "l"})
    );
    let reply = outcome(OutcomeStatus::Answered)
        .with_answers(set)
        .with_reply(&example)
        .reply;
    assert_eq!(
        reply,
        Some(json!({"action": "accept", "content": {"replicas": 2, "tier": "l"}}))
    );
}

proptest::proptest! {
    /// Whatever way the operator writes a number, the form's pattern, the answer check and
    /// the reply agree on it: accepted text always becomes the JSON number it reads as.
    #[test]
    fn numbers_typed_as_text_reply_as_the_numbers_they_read_as(
        integer in proptest::num::i64::ANY,
        float in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
        plus in proptest::bool::ANY,
        zeros in 0usize..3,
        exponent in proptest::bool::ANY,
    ) {
        let form = request(json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "i": {"type": "integer"}, "n": {"type": "number"}}}}));
        let sign = if plus && integer >= 0 { "+" } else { "" };
        let digits = integer.unsigned_abs().to_string();
        let minus = if integer < 0 { "-" } else { "" };
        let int_text = format!("{minus}{sign}{}{digits}", "0".repeat(zeros));
        let float_text = if exponent { format!("{float:e}") } else { format!("{float}") };
        let reply = answered(&form, json!({"i": int_text, "n": float_text}));
        proptest::prop_assert_eq!(&reply["content"]["i"], &json!(integer));
        let n = reply["content"]["n"].as_f64().expect("a JSON number");
        proptest::prop_assert_eq!(n, float, "{} read as {}", float_text, n);
        // And the pattern a form checks with accepts both.
        for (id, text) in [("i", &int_text), ("n", &float_text)] {
            let pattern = form.question(id).unwrap().pattern.as_deref().unwrap();
            proptest::prop_assert!(regex::Regex::new(pattern).unwrap().is_match(text));
        }
    }
}

#[test]
fn langchain_hitl_replies_are_hitl_responses() {
    let hitl = fixture("langchain-hitl");
    let one = |decision: Value| json!({ "decisions": [decision] });
    assert_eq!(
        answered(&hitl, json!({"decision-1": "approve"})),
        one(json!({"type": "approve"}))
    );
    // Edit without touching the arguments: they are the current ones, from the default.
    assert_eq!(
        answered(&hitl, json!({"decision-1": "edit"})),
        one(
            json!({"type": "edit", "edited_action": {"name": "send_email", "args": {
            "to": "ann@example.com", "subject": "Your refund",
            "body": "Hi Ann,\nrun ```refund --id 7``` to check it."}}})
        )
    );
    assert_eq!(
        answered(
            &hitl,
            json!({"decision-1": "edit", "args-1": "{\"to\": \"bob@example.com\"}"})
        ),
        one(
            json!({"type": "edit", "edited_action": {"name": "send_email",
            "args": {"to": "bob@example.com"}}})
        )
    );
    // A rejection's message is optional; a message typed for another decision is not sent.
    assert_eq!(
        answered(&hitl, json!({"decision-1": "reject"})),
        one(json!({"type": "reject"}))
    );
    assert_eq!(
        answered(
            &hitl,
            json!({"decision-1": "reject", "message-1": "Ask for the order number first."})
        ),
        one(json!({"type": "reject", "message": "Ask for the order number first."}))
    );
    assert_eq!(
        answered(&hitl, json!({"decision-1": "approve", "message-1": "fine"})),
        one(json!({"type": "approve"}))
    );
    assert_eq!(
        answered(
            &hitl,
            json!({"decision-1": "respond", "message-1": "Sent it myself."})
        ),
        one(json!({"type": "respond", "message": "Sent it myself."}))
    );
    // Declined and expired: nothing runs, and the agent is told why.
    assert_eq!(
        declined(&hitl),
        Some(one(json!({"type": "reject", "message": "not this week"})))
    );
    assert_eq!(
        expired(&hitl),
        Some(one(json!({"type": "reject", "message":
            "Nobody decided on this tool call before the request expired."})))
    );

    // One decision per action request, in their order.
    let two = fixture("langchain-hitl-two");
    assert_eq!(
        answered(
            &two,
            json!({"decision-1": "edit", "args-1": "{\"path\": \"draft.txt\"}",
                   "decision-2": "reject", "message-2": "Never delete records."})
        ),
        json!({"decisions": [
            {"type": "edit", "edited_action": {"name": "write_file", "args": {"path": "draft.txt"}}},
            {"type": "reject", "message": "Never delete records."}]})
    );
    assert_eq!(
        declined(&two),
        Some(
            json!({"decisions": [{"type": "reject", "message": "not this week"},
                                  {"type": "reject", "message": "not this week"}]})
        )
    );
    assert_eq!(dialect_reply(&two, &outcome(OutcomeStatus::Rejected)), None);
}

#[test]
fn langchain_hitl_answers_must_make_sense() {
    let hitl = fixture("langchain-hitl");
    let no_response = refused(&hitl, json!({"decision-1": "respond", "message-1": ""}));
    assert_eq!(
        no_response,
        [(
            "/message-1".to_owned(),
            "question \"message-1\" is required when \"decision-1\" is \"respond\"".to_owned()
        )]
    );
    let not_object = refused(&hitl, json!({"decision-1": "edit", "args-1": "[1, 2]"}));
    assert_eq!(not_object[0].0, "/args-1");
    assert!(
        not_object[0].1.contains("expected a JSON object"),
        "{not_object:?}"
    );
    // Only the decisions the tool allows are offered, and every action needs one.
    let two = fixture("langchain-hitl-two");
    let problems = refused(&two, json!({"decision-1": "approve", "decision-2": "edit"}));
    assert_eq!(problems[0].0, "/decision-2");
    assert!(
        problems[0].1.contains("not one of the options"),
        "{problems:?}"
    );
    let missing = refused(&two, json!({"decision-1": "approve"}));
    assert_eq!(missing[0].0, "/decision-2");
    // Policies cannot decide for the operator: there is no default decision.
    let filled = fill_defaults(&two);
    assert_eq!(filled.missing_required, ["decision-1", "decision-2"]);
}

#[test]
fn langchain_hitl_requests_too_big_to_ask_are_refused() {
    let action = json!({"name": "write_file", "args": {"path": "a.txt"}});
    let all = json!({"action_name": "write_file",
                     "allowed_decisions": ["approve", "edit", "reject", "respond"]});
    // Three questions an action: 16 fit in a request's 50 questions, 17 do not.
    let body = |count: usize| json!({"action_requests": vec![action.clone(); count], "review_configs": [all.clone()]});
    assert_eq!(request(body(16)).questions.len(), 48);
    let found = problems(body(17));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pointer, "/action_requests");
    assert!(found[0].message.contains("51 questions"), "{found:?}");

    // Arguments too long to edit are refused when editing is allowed, and only then.
    let big = json!({"action_requests": [{"name": "write", "args": {"text": "x".repeat(11_000)}}],
                     "review_configs": [{"action_name": "write",
                                         "allowed_decisions": ["approve", "edit"]}]});
    let found = problems(big.clone());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pointer, "/action_requests/0/args");
    let mut approve_only = big;
    approve_only["review_configs"][0]["allowed_decisions"] = json!(["approve", "reject"]);
    request(approve_only);
}

#[test]
fn the_langchain_example_in_the_protocol_replies_as_documented() {
    // docs/PROTOCOL.md, "LangChain HumanInTheLoopMiddleware".
    let text = r#"{"action_requests": [{"name": "execute_sql", "args": {"query": "DELETE FROM records WHERE age > 30"},
                      "description": "Tool execution requires approval\n\nTool: execute_sql"}],
 "review_configs": [{"action_name": "execute_sql", "allowed_decisions": ["approve", "reject"]}],
 "source": {"app": "langchain", "project": "records"}, "timeout_seconds": 3600}"#;
    let example = parse_request(text.as_bytes(), None).unwrap();
    let reply = answered(
        &example,
        json!({"decision-1": "reject", "message-1": "Archive them instead."}),
    );
    assert_eq!(
        reply,
        json!({"decisions": [{"type": "reject", "message": "Archive them instead."}]})
    );
}
