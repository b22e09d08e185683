use super::*;

fn args(value: Value) -> JsonObject {
    value.as_object().unwrap().clone()
}

/// The request as the server places it by default (autonomous mode withheld).
fn prepared(arguments: &JsonObject, source: Value) -> Result<Prepared, Vec<Problem>> {
    prepare_request(arguments, source, Autonomy::Withheld).map(|t| t.prepared)
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

fn set(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn the_schema_and_the_translation_know_the_same_fields() {
    for autonomy in [Autonomy::Allowed, Autonomy::Withheld] {
        let schema = Value::Object((*schema(autonomy)).clone());
        assert_eq!(
            keys(&schema["properties"]),
            set(&request_keys(autonomy)),
            "{autonomy:?}"
        );
    }
    let schema = Value::Object((*schema(Autonomy::Allowed)).clone());
    assert_eq!(keys(&schema["properties"]), set(REQUEST_KEYS));
    let defs = &schema["$defs"];
    assert_eq!(
        keys(&defs["QuestionInput"]["properties"]),
        set(QUESTION_KEYS)
    );
    assert_eq!(keys(&defs["ChoiceInput"]["properties"]), set(CHOICE_KEYS));
    let types: Vec<&str> = defs["QuestionType"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(types, TYPES);
}

/// What a model reads decides what it tries: without the operator's leave, nothing in
/// the schema offers autonomous mode.
#[test]
fn the_schema_offers_mode_only_where_autonomous_mode_is_allowed() {
    let allowed = Value::Object((*schema(Autonomy::Allowed)).clone());
    let mode = &allowed["properties"]["mode"];
    let offered = serde_json::to_string(mode).unwrap()
        + &serde_json::to_string(&allowed["$defs"]["ModeInput"]).unwrap();
    assert!(offered.contains("\"autonomous\""), "{allowed:#}");

    let withheld = Value::Object((*schema(Autonomy::Withheld)).clone());
    assert!(withheld["properties"].get("mode").is_none(), "{withheld:#}");
    assert!(withheld["$defs"].get("ModeInput").is_none(), "{withheld:#}");
    let text = serde_json::to_string(&withheld).unwrap();
    assert!(!text.contains("\"autonomous\""), "{withheld:#}");
    assert!(
        !text.contains("ModeInput"),
        "no dangling reference: {withheld:#}"
    );
    // Everything else is as offered with it.
    let mut without_mode = allowed.clone();
    without_mode["properties"]
        .as_object_mut()
        .unwrap()
        .remove("mode");
    without_mode["$defs"]
        .as_object_mut()
        .unwrap()
        .remove("ModeInput");
    assert_eq!(withheld, without_mode);
}

fn all_defaulted(mode: Value) -> JsonObject {
    args(json!({
        "mode": mode,
        "questions": [
            {"type": "yes_no", "question": "Drop the old database?", "default": true}
        ]
    }))
}

#[test]
fn a_withheld_mode_is_asked_of_a_person_and_said_so() {
    for sent in [json!("autonomous"), json!("Autonomous"), json!(7)] {
        let translated =
            prepare_request(&all_defaulted(sent.clone()), json!({}), Autonomy::Withheld)
                .unwrap_or_else(|problems| panic!("{sent}: {problems:#?}"));
        assert_eq!(
            translated.prepared.request().mode,
            inbox_protocol::Mode::Interactive,
            "{sent}"
        );
        assert_eq!(translated.notices.len(), 1, "{sent}");
        let notice = &translated.notices[0];
        assert!(
            notice.contains(&sent.to_string()) && notice.contains("--allow-autonomous"),
            "{notice}"
        );
        assert!(
            notice.contains("asked of the operator"),
            "says what happened instead: {notice}"
        );
    }

    // Asking for what happens anyway is nothing to remark on.
    for sent in [json!("interactive"), Value::Null] {
        let translated =
            prepare_request(&all_defaulted(sent.clone()), json!({}), Autonomy::Withheld).unwrap();
        assert_eq!(
            translated.prepared.request().mode,
            inbox_protocol::Mode::Interactive
        );
        assert!(
            translated.notices.is_empty(),
            "{sent}: {:?}",
            translated.notices
        );
    }
}

#[test]
fn an_allowed_mode_is_honoured() {
    let translated = prepare_request(
        &all_defaulted(json!("autonomous")),
        json!({}),
        Autonomy::Allowed,
    )
    .unwrap();
    assert_eq!(
        translated.prepared.request().mode,
        inbox_protocol::Mode::Autonomous
    );
    assert!(translated.notices.is_empty());
    // Where it is offered, a wrong value is a mistake to fix, as for any field.
    let problems = prepare_request(
        &all_defaulted(json!("sometimes")),
        json!({}),
        Autonomy::Allowed,
    )
    .unwrap_err();
    assert!(
        problems.iter().any(|p| p.pointer == "/mode"),
        "{problems:#?}"
    );
}

/// The list of fields in an unknown field's message is the list the schema offers.
#[test]
fn an_unknown_field_names_only_the_offered_fields() {
    let message = |autonomy| {
        prepare_request(
            &args(json!({"colour": "red", "questions": [
                {"type": "yes_no", "question": "Go?"}
            ]})),
            json!({}),
            autonomy,
        )
        .unwrap_err()[0]
            .message
            .clone()
    };
    assert!(!message(Autonomy::Withheld).contains("mode"));
    assert!(message(Autonomy::Allowed).contains("mode"));
}

#[test]
fn a_batch_becomes_a_structured_request() {
    let prepared = prepared(
        &args(json!({
            "title": "Release 2.14",
            "priority": "high",
            "timeout_seconds": 600,
            "questions": [
                {"type": "yes_no", "question": "Deploy?", "id": "go"},
                {"type": "single_choice", "question": "Database?", "label": "Database",
                 "choices": [{"label": "PostgreSQL", "description": "the usual"},
                             {"label": "SQLite"}], "default": "SQLite"},
            ]
        })),
        json!({"app": "agent", "tool": "ask_operator"}),
    )
    .unwrap();
    let request = prepared.request();
    assert_eq!(request.title.as_deref(), Some("Release 2.14"));
    assert_eq!(request.source.app.as_deref(), Some("agent"));
    assert_eq!(request.questions[0].id, "go");
    let db = &request.questions[1];
    assert_eq!(db.id, "q2");
    assert_eq!(db.choices[0].id, "PostgreSQL");
    assert_eq!(db.choices[0].description.as_deref(), Some("the usual"));
    assert!(
        db.allow_custom,
        "the structured dialect allows fill-ins by default"
    );
    assert_eq!(db.default, Some(json!("SQLite")));
}

#[test]
fn every_problem_is_reported_with_a_pointer_into_the_arguments() {
    let problems = prepared(
        &args(json!({
            "titel": "x",
            "questions": [
                {"type": "single_choice", "question": "Which?"},
                {"type": "confirm", "question": "Go?"},
                {"type": "multi_choice", "question": "Tags?", "options": ["a"],
                 "choices": [{"label": "a", "value": "x"}, {"label": "a"}]},
                {"type": "yes_no", "question": ""}
            ],
            "priority": "urgent"
        })),
        json!({}),
    )
    .unwrap_err();
    let pointers: BTreeSet<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
    for expected in [
        "/titel",
        "/questions/0/choices",
        "/questions/1/type",
        "/questions/2/options",
        "/questions/2/choices/0/value",
        "/questions/2/choices/1/label",
        "/questions/3/question",
        "/priority",
    ] {
        assert!(
            pointers.contains(expected),
            "{expected} missing: {problems:#?}"
        );
    }
    let duplicate = problems
        .iter()
        .find(|p| p.pointer == "/questions/2/choices/1/label")
        .unwrap();
    assert!(
        duplicate.message.starts_with("the label \"a\""),
        "{duplicate:?}"
    );
    let type_problems: Vec<&Problem> = problems
        .iter()
        .filter(|p| p.pointer == "/questions/1/type")
        .collect();
    assert_eq!(type_problems.len(), 1, "{type_problems:?}");
    assert!(type_problems[0].message.contains("yes_no, single_choice"));

    let problems = prepared(&args(json!({})), json!({})).unwrap_err();
    assert!(
        problems.iter().any(|p| p.message.contains("questions")),
        "{problems:?}"
    );
}

/// Choices as crush's `question` tool writes them, `{id, label, description}`: the ids
/// are kept (a default names one), and a choice without an id has its label as id.
#[test]
fn choices_keep_their_ids_and_labels_stand_in_for_missing_ones() {
    let prepared = prepared(
        &args(json!({"questions": [
            {"type": "single_choice", "id": "db", "question": "Database?", "default": "pg",
             "choices": [
                 {"id": "pg", "label": "PostgreSQL", "description": "what prod runs"},
                 {"id": "lite", "label": "SQLite"},
                 {"id": null, "label": "MariaDB"}
             ]},
            {"type": "multi_choice", "question": "Tags?", "default": ["a"],
             "choices": [{"label": "a"}, {"label": "b"}]}
        ]})),
        json!({}),
    )
    .unwrap_or_else(|problems| panic!("{problems:#?}"));
    let request = prepared.request();
    let ids = |question: usize| -> Vec<(&str, &str)> {
        request.questions[question]
            .choices
            .iter()
            .map(|c| (c.id.as_str(), c.label.as_str()))
            .collect()
    };
    assert_eq!(
        ids(0),
        [
            ("pg", "PostgreSQL"),
            ("lite", "SQLite"),
            ("MariaDB", "MariaDB")
        ]
    );
    assert_eq!(
        request.questions[0].choices[0].description.as_deref(),
        Some("what prod runs")
    );
    assert_eq!(request.questions[0].default, Some(json!("pg")));
    assert_eq!(ids(1), [("a", "a"), ("b", "b")]);

    // A default may name the label too; it stands for the choice's id.
    for default in [json!("pg"), json!("PostgreSQL")] {
        let prepared = prepared_default(default).unwrap_or_else(|problems| panic!("{problems:#?}"));
        assert_eq!(prepared.request().questions[0].default, Some(json!("pg")));
    }
    // Without fill-ins, a default that names no choice is refused.
    let problems = prepared_default(json!("MySQL")).unwrap_err();
    assert!(
        problems.iter().any(|p| p.pointer == "/questions/0/default"),
        "{problems:#?}"
    );
}

fn prepared_default(default: Value) -> Result<Prepared, Vec<Problem>> {
    prepared(
        &args(json!({"questions": [
            {"type": "single_choice", "question": "Database?", "default": default,
             "allow_custom": false, "choices": [{"id": "pg", "label": "PostgreSQL"}, {"id": "lite", "label": "SQLite"}]}
        ]})),
        json!({}),
    )
}

/// A duplicate id the call gave is the id's problem; one made from a label is the
/// label's.
#[test]
fn duplicate_choice_ids_are_refused_where_they_were_written() {
    let problems = prepared(
        &args(json!({"questions": [
            {"type": "single_choice", "question": "Database?",
             "choices": [{"id": "db", "label": "PostgreSQL"}, {"id": "db", "label": "SQLite"}]},
            {"type": "single_choice", "question": "Region?",
             "choices": [{"id": "eu", "label": "Europe"}, {"label": "eu"}]},
            {"type": "single_choice", "question": "Size?",
             "choices": [{"label": "small"}, {"id": "", "label": "large"}]}
        ]})),
        json!({}),
    )
    .unwrap_err();
    let said: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.pointer.as_str(), p.message.as_str()))
        .collect();
    let at = |pointer: &str| -> Vec<&str> {
        said.iter()
            .filter(|(at, _)| *at == pointer)
            .map(|(_, message)| *message)
            .collect()
    };
    let given = at("/questions/0/choices/1/id");
    assert_eq!(given.len(), 1, "{said:#?}");
    assert!(
        given[0].contains("\"db\" appears more than once"),
        "{said:#?}"
    );
    assert!(at("/questions/0/choices/1/label").is_empty(), "{said:#?}");
    let made = at("/questions/1/choices/1/label");
    assert_eq!(made.len(), 1, "{said:#?}");
    assert!(made[0].starts_with("the label \"eu\""), "{said:#?}");
    assert!(
        said.iter()
            .any(|(at, _)| at.starts_with("/questions/2/choices/1/id")),
        "an empty id is refused: {said:#?}"
    );
}

/// The schema makes optional fields nullable, so null means "not given" at every level.
#[test]
fn null_is_not_given() {
    let prepared = prepared(
        &args(json!({
            "title": null, "timeout_seconds": null, "priority": null,
            "questions": [
                {"type": "yes_no", "question": "Go?", "description": null, "default": null},
                {"type": "single_choice", "question": "Which?", "label": null,
                 "choices": [{"label": "a", "description": null}, {"label": "b"}]}
            ]
        })),
        json!({}),
    )
    .unwrap_or_else(|problems| panic!("{problems:#?}"));
    assert_eq!(prepared.request().questions.len(), 2);
    assert_eq!(prepared.request().expiry, None);
}

/// Each mistake is said once, in the tool's own terms.
#[test]
fn mistakes_are_named_once_in_the_tools_terms() {
    let problems = prepared(
        &args(json!({"questions": [
            {"type": "single-choice", "question": "Which?", "choices": [{"label": "a"}],
             "default": "zz"},
            {"type": 5, "question": "Five?"},
            {"type": "single_choice", "question": "Which?",
             "choices": [{"description": "no label"}, {"label": ""}]}
        ]})),
        json!({}),
    )
    .unwrap_err();
    let said: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.pointer.as_str(), p.message.as_str()))
        .collect();
    // An unknown type is the one thing said about its question.
    let first: Vec<_> = said
        .iter()
        .filter(|(at, _)| at.starts_with("/questions/0"))
        .collect();
    assert_eq!(first.len(), 1, "{said:#?}");
    assert!(
        first[0].1.contains("use yes_no, single_choice"),
        "{said:#?}"
    );
    let second: Vec<_> = said
        .iter()
        .filter(|(at, _)| at.starts_with("/questions/1"))
        .collect();
    assert_eq!(second.len(), 1, "{said:#?}");
    assert!(
        second[0].1.starts_with("5 is not a question type here"),
        "{said:#?}"
    );
    // A missing label is not also a missing id; an empty label is said once.
    assert!(!said.iter().any(|(_, m)| m.contains("\"id\"")), "{said:#?}");
    let at = |pointer: &str| said.iter().filter(|(at, _)| *at == pointer).count();
    assert_eq!(at("/questions/2/choices/0"), 1, "{said:#?}");
    assert_eq!(at("/questions/2/choices/1/label"), 1, "{said:#?}");
}
