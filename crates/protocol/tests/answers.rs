//! Answer checking: types, options, fill-in, patterns, required questions and defaults.

use inbox_protocol::{
    check_answers, coerce_cli_values, fill_defaults, parse_request, AnswerSet, Request,
};
use serde_json::{json, Map, Value};

fn request(body: Value) -> Request {
    parse_request(body.to_string().as_bytes(), Some("r1")).expect("valid request")
}

fn answers(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn deploy() -> Request {
    request(json!({"inbox": 1, "questions": [
        {"id": "go", "question": "Ship?", "type": "confirm"},
        {"id": "env", "question": "Where?", "type": "choice", "options": ["staging", "production"]},
        {"id": "tags", "question": "Tags?", "type": "multiChoice", "options": ["a", "b"], "required": false, "default": ["a"]},
        {"id": "ticket", "question": "Ticket?", "type": "text", "pattern": "^T-[0-9]+$", "required": false},
        {"label": "DB", "question": "Which database?", "type": "single_choice",
         "choices": [{"id": "pg", "label": "PostgreSQL"}, {"id": "mongo", "label": "MongoDB"}]}
    ]}))
}

#[test]
fn valid_answers_are_accepted_and_skipped_questions_take_defaults() {
    let set = check_answers(
        &deploy(),
        &answers(json!({"go": true, "env": "production", "q5": "pg"})),
    )
    .unwrap();
    assert_eq!(
        set,
        AnswerSet {
            answers: [
                ("go".into(), json!(true)),
                ("env".into(), json!("production")),
                ("tags".into(), json!(["a"])),
                ("q5".into(), json!("pg")),
            ]
            .into_iter()
            .collect(),
            custom: vec![],
            defaulted: vec!["tags".into()],
        }
    );
}

#[test]
fn every_problem_is_reported_with_a_pointer() {
    let problems = check_answers(
        &deploy(),
        &answers(json!({"go": "yes", "env": "qa", "ticket": "nope", "extra": 1})),
    )
    .unwrap_err();
    let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/extra", "/go", "/env", "/ticket", "/q5"],
        "{problems:?}"
    );
    assert!(problems[2].message.contains("not one of the options"));
    assert!(problems[3].message.contains("does not match the pattern"));
    assert!(problems[4].message.contains("required"));
}

#[test]
fn structured_choices_take_fill_in_text_and_labels() {
    let set = check_answers(
        &deploy(),
        &answers(json!({"go": false, "env": "staging", "q5": "SQLite, really"})),
    )
    .unwrap();
    assert_eq!(set.answers["q5"], json!("SQLite, really"));
    assert_eq!(set.custom, vec!["q5".to_owned()]);

    let by_label = check_answers(
        &deploy(),
        &answers(json!({"go": false, "env": "staging", "q5": "MongoDB"})),
    )
    .unwrap();
    assert_eq!(by_label.answers["q5"], json!("mongo"));
    assert!(by_label.custom.is_empty());
}

#[test]
fn interactive_choices_refuse_fill_in_unless_allowed() {
    let strict = deploy();
    assert!(check_answers(
        &strict,
        &answers(json!({"go": true, "env": "qa", "q5": "pg"}))
    )
    .is_err());
    let lenient = request(json!([{"id": "env", "question": "Where?", "type": "choice",
        "options": ["staging"], "allow_custom": true}]));
    let set = check_answers(&lenient, &answers(json!({"env": "qa"}))).unwrap();
    assert_eq!(set.custom, vec!["env".to_owned()]);
}

#[test]
fn multi_choice_rejects_duplicates_and_non_arrays() {
    let req = deploy();
    for bad in [json!(["a", "a"]), json!("a"), json!([1])] {
        let given = answers(json!({"go": true, "env": "staging", "q5": "pg", "tags": bad}));
        assert!(
            check_answers(&req, &given).is_err(),
            "{given:?} should be refused"
        );
    }
}

#[test]
fn defaults_fill_what_they_can() {
    let req = request(json!([
        {"id": "a", "question": "A?", "type": "confirm", "default": true},
        {"id": "b", "question": "B?", "type": "text"},
        {"id": "c", "question": "C?", "type": "text", "required": false}
    ]));
    let filled = fill_defaults(&req);
    assert_eq!(filled.set.answers.get("a"), Some(&json!(true)));
    assert_eq!(filled.set.defaulted, vec!["a".to_owned()]);
    assert_eq!(filled.missing_required, vec!["b".to_owned()]);
}

#[test]
fn command_line_values_are_coerced_by_type() {
    let req = deploy();
    let go = req.question("go").unwrap();
    assert_eq!(coerce_cli_values(go, &["yes".into()]), Ok(json!(true)));
    assert_eq!(coerce_cli_values(go, &["N".into()]), Ok(json!(false)));
    assert!(coerce_cli_values(go, &["maybe".into()]).is_err());
    let tags = req.question("tags").unwrap();
    assert_eq!(
        coerce_cli_values(tags, &["a".into(), "b".into()]),
        Ok(json!(["a", "b"]))
    );
    let env = req.question("env").unwrap();
    assert!(coerce_cli_values(env, &["a".into(), "b".into()]).is_err());
}

#[test]
fn a_long_answer_is_quoted_short_in_the_error() {
    let long = "x".repeat(10_000);
    let problems = check_answers(
        &deploy(),
        &answers(json!({"go": true, "env": "staging", "q5": "pg", "ticket": long})),
    )
    .unwrap_err();
    let message = &problems[0].message;
    assert!(message.contains("does not match the pattern"), "{message}");
    assert!(message.len() < 200, "{} characters", message.len());
    assert!(message.contains('…'));
}
