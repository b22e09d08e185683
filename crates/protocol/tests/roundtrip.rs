//! Property tests: requests and outcomes survive being written and read.
//!
//! Requests are generated as the normalised model the inbox should end up with, plus the
//! freedom an asker has in writing it (dialect, request shape, omitted fields that take
//! their defaults, defaults given by label, ids by position, unknown extra fields). Each is
//! written as a request file and parsed; the result must be exactly the model. Then the
//! parsed request is written again with every field explicit and parsed once more, which must
//! change nothing: the normalised model is a fixed point. Outcomes are generated directly and
//! must survive `to_file_bytes` and `from_file_bytes`.

use std::collections::BTreeSet;

use chrono::{DateTime, FixedOffset, TimeZone, Utc};
use inbox_protocol::model::QuestionType;
use inbox_protocol::{
    parse_request, sha256_hex, Choice, DecidedBy, Dialect, Expiry, Mode, Outcome, OutcomeStatus,
    Priority, Problem, Question, QuestionKind, Request, Source, Surface, Trigger,
};
use proptest::prelude::*;
use proptest::sample::subsequence;
use serde_json::{json, Map, Value};

/// A question as the inbox should see it, and how the asker chose to write it.
#[derive(Debug, Clone)]
struct QuestionSpec {
    /// The normalised question.
    model: Question,
    /// Leave `id` out (the model's id is then `q<position>`).
    positional: bool,
    /// Leave out `required` and `allow_custom` when they equal their defaults.
    omit_defaults: bool,
    /// Give a choice default by its label instead of its id.
    default_by_label: bool,
    /// For questions without choices: an `allow_custom` that must be ignored.
    stray_allow_custom: Option<bool>,
    /// An unknown field, which must be ignored.
    extra: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Envelope,
    Bare,
    Interactive,
}

/// A request file to write, and the file id it is parsed under.
#[derive(Debug, Clone)]
struct RequestSpec {
    shape: Shape,
    file_id: Option<String>,
    /// Write the id in the body too (envelope only).
    body_id: Option<String>,
    write_inbox: bool,
    title: Option<String>,
    source: Option<Source>,
    confirm_title: Option<String>,
    confirm_description: Option<String>,
    mode: Option<Mode>,
    expires_at: Option<DateTime<FixedOffset>>,
    timeout_seconds: Option<u64>,
    priority: Option<Priority>,
    questions: Vec<QuestionSpec>,
    extra: Option<Value>,
    pretty: bool,
}

fn text(max: usize) -> impl Strategy<Value = String> {
    // Any characters, newlines and quotes included: JSON escaping is part of what is tested.
    proptest::string::string_regex(&format!("(?s).{{0,{max}}}")).unwrap()
}

fn nonempty_text(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("(?s).{{1,{max}}}")).unwrap()
}

/// Ids that never look positional (`q1`, `q2`, ...), so explicit and positional ids cannot
/// clash by accident.
fn explicit_id() -> impl Strategy<Value = String> {
    "[a-pr-zA-Z0-9][A-Za-z0-9._-]{0,12}"
}

fn request_id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9._-]{0,40}"
}

fn simple_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text(12).prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Fill-in text: never an id (lowercase first) or a label (uppercase first) of a choice.
fn custom_text() -> impl Strategy<Value = String> {
    "~[a-z ]{0,8}"
}

/// Choices with unique ids and unique labels, ids and labels never equal (a default given
/// by label must resolve to exactly one choice). Interactive options are their own ids.
fn choices(dialect: Dialect) -> impl Strategy<Value = Vec<Choice>> {
    let one = (
        "[a-z][a-z0-9_-]{0,6}",
        "[A-Z][A-Za-z ]{0,10}",
        proptest::option::of(text(30)),
    );
    prop::collection::vec(one, 1..6).prop_map(move |raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (id, label, description))| match dialect {
                Dialect::Interactive => Choice {
                    id: format!("{label}{i}"),
                    label: format!("{label}{i}"),
                    description: None,
                },
                Dialect::Structured => Choice {
                    id: format!("{id}{i}"),
                    label: format!("{label} {i}"),
                    description,
                },
            })
            .collect()
    })
}

/// Per kind: choices, `allow_custom` as written, the normalised default, and a pattern.
type Specific = (Vec<Choice>, Option<bool>, Option<Value>, Option<String>);

fn specific(kind: QuestionKind, dialect: Dialect) -> BoxedStrategy<Specific> {
    match kind {
        QuestionKind::Confirm => proptest::option::of(any::<bool>())
            .prop_map(|d| (Vec::new(), None, d.map(Value::Bool), None))
            .boxed(),
        QuestionKind::Text => {
            // Patterns with answers known to match them.
            let plain = proptest::option::of(text(20).prop_map(Value::String))
                .prop_map(|d| (None, d))
                .boxed();
            let lower = proptest::option::of("[a-z]{1,5}".prop_map(Value::String))
                .prop_map(|d| (Some("^[a-z]+$".to_owned()), d))
                .boxed();
            let code = proptest::option::of("[0-9]{3}-[0-9]{2}".prop_map(Value::String))
                .prop_map(|d| (Some(r"^\d{3}-\d{2}$".to_owned()), d))
                .boxed();
            prop_oneof![plain, lower, code]
                .prop_map(|(pattern, default)| (Vec::new(), None, default, pattern))
                .boxed()
        }
        QuestionKind::Choice | QuestionKind::MultiChoice => {
            (choices(dialect), proptest::option::of(any::<bool>()))
                .prop_flat_map(move |(choices, allow)| {
                    let custom_ok = allow.unwrap_or(dialect == Dialect::Structured);
                    let ids: Vec<String> = choices.iter().map(|c| c.id.clone()).collect();
                    let default = choice_default(kind, ids, custom_ok);
                    (Just(choices), Just(allow), default, Just(None))
                })
                .boxed()
        }
    }
}

fn choice_default(
    kind: QuestionKind,
    ids: Vec<String>,
    custom_ok: bool,
) -> BoxedStrategy<Option<Value>> {
    let customs = if custom_ok {
        prop::collection::btree_set(custom_text(), 0..3).boxed()
    } else {
        Just(BTreeSet::new()).boxed()
    };
    if kind == QuestionKind::Choice {
        let picked = proptest::sample::select(ids).prop_map(Value::String);
        if custom_ok {
            proptest::option::of(prop_oneof![picked, custom_text().prop_map(Value::String)]).boxed()
        } else {
            proptest::option::of(picked).boxed()
        }
    } else {
        let len = ids.len();
        proptest::option::of(
            (subsequence(ids, 0..=len), customs).prop_map(|(ids, customs)| {
                Value::Array(
                    ids.into_iter()
                        .chain(customs.into_iter().filter(|c| !c.trim().is_empty()))
                        .map(Value::String)
                        .collect(),
                )
            }),
        )
        .boxed()
    }
}

fn question_type() -> impl Strategy<Value = QuestionType> {
    proptest::sample::select(vec![
        QuestionType::Confirm,
        QuestionType::Choice,
        QuestionType::MultiChoice,
        QuestionType::Text,
        QuestionType::YesNo,
        QuestionType::SingleChoice,
        QuestionType::MultiChoiceStructured,
        QuestionType::FreeText,
    ])
}

fn question_spec() -> impl Strategy<Value = QuestionSpec> {
    question_type().prop_flat_map(|wire_type| {
        let (kind, dialect) = QuestionKind::of(wire_type);
        (
            (
                explicit_id(),
                any::<bool>(),
                nonempty_text(40),
                proptest::option::of(text(60)),
                proptest::option::of(text(20)),
            ),
            specific(kind, dialect),
            (
                proptest::option::of(any::<bool>()),
                any::<bool>(),
                any::<bool>(),
                proptest::option::of(any::<bool>()),
                proptest::option::of(simple_json()),
            ),
        )
            .prop_map(
                move |(
                    (id, positional, question, description, label),
                    (choices, allow, default, pattern),
                    (required, omit_defaults, default_by_label, stray, extra),
                )| {
                    let has_choices = kind.has_choices();
                    QuestionSpec {
                        model: Question {
                            id,
                            kind,
                            wire_type,
                            dialect,
                            question,
                            description,
                            label,
                            choices,
                            default,
                            required: required.unwrap_or(true),
                            pattern,
                            allow_custom: has_choices
                                && allow.unwrap_or(dialect == Dialect::Structured),
                            rules: Default::default(),
                        },
                        positional,
                        omit_defaults,
                        default_by_label,
                        stray_allow_custom: if has_choices { None } else { stray },
                        extra,
                    }
                },
            )
    })
}

/// Gives each question its final id: `q<position>` when written without one, otherwise its
/// own, made unique.
fn settle_ids(mut questions: Vec<QuestionSpec>) -> Vec<QuestionSpec> {
    let mut seen = BTreeSet::new();
    for (index, spec) in questions.iter_mut().enumerate() {
        if spec.positional {
            spec.model.id = format!("q{}", index + 1);
        } else {
            let mut id = spec.model.id.clone();
            while !seen.insert(id.clone()) {
                id = format!("{id}-{index}");
            }
            spec.model.id = id;
        }
    }
    questions
}

fn source() -> impl Strategy<Value = Source> {
    (
        proptest::option::of(text(15)),
        proptest::option::of(text(15)),
        proptest::option::of(text(15)),
        proptest::option::of(text(15)),
        proptest::option::of(text(30)),
        (
            proptest::option::of(text(60)),
            proptest::option::of(text(15)),
        ),
        prop::collection::btree_map("x-[a-z]{1,5}", simple_json(), 0..3),
    )
        .prop_map(
            |(app, run, tool, host, url, (cwd, project), extra)| Source {
                app,
                run,
                tool,
                host,
                url,
                cwd,
                project,
                extra,
            },
        )
}

fn timestamp() -> impl Strategy<Value = DateTime<FixedOffset>> {
    // 1970 to 2100, any nanosecond, offsets of whole minutes within a day.
    (0i64..4_102_444_800, 0u32..1_000_000_000, -1439i32..1440).prop_map(
        |(seconds, nanos, offset_minutes)| {
            let offset = FixedOffset::east_opt(offset_minutes * 60).unwrap();
            offset.from_utc_datetime(
                &DateTime::from_timestamp(seconds, nanos)
                    .unwrap()
                    .naive_utc(),
            )
        },
    )
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::Interactive), Just(Mode::Autonomous)]
}

fn priority() -> impl Strategy<Value = Priority> {
    proptest::sample::select(vec![
        Priority::Low,
        Priority::Normal,
        Priority::High,
        Priority::Critical,
    ])
}

fn request_spec() -> impl Strategy<Value = RequestSpec> {
    let shape = prop_oneof![
        3 => Just(Shape::Envelope),
        1 => Just(Shape::Bare),
        1 => Just(Shape::Interactive),
    ];
    let ids = (0u8..4, request_id());
    let expiry = prop_oneof![
        Just((None, None)),
        timestamp().prop_map(|at| (Some(at), None)),
        (1u64..=31_536_000).prop_map(|s| (None, Some(s))),
    ];
    (
        (shape, ids, any::<bool>(), any::<bool>()),
        (
            proptest::option::of(text(40)),
            proptest::option::of(source()),
            proptest::option::of(text(40)),
            proptest::option::of(text(80)),
        ),
        (
            proptest::option::of(mode()),
            expiry,
            proptest::option::of(priority()),
        ),
        prop::collection::vec(question_spec(), 1..6).prop_map(settle_ids),
        proptest::option::of(simple_json()),
    )
        .prop_map(
            |(
                (shape, (id_case, id), write_inbox, pretty),
                (title, source, confirm_title, confirm_description),
                (mode, (expires_at, timeout_seconds), priority),
                questions,
                extra,
            )| {
                let envelope = shape == Shape::Envelope;
                // Neither, the file only, the body only (a loose file), or both, equal.
                let file_id = (id_case & 1 == 1).then(|| id.clone());
                let body_id = (envelope && id_case & 2 == 2).then_some(id);
                let keep = |x| if envelope { x } else { None };
                RequestSpec {
                    shape,
                    file_id,
                    body_id,
                    write_inbox: envelope && write_inbox,
                    title: keep(title),
                    source: if envelope { source } else { None },
                    confirm_title: keep(confirm_title),
                    confirm_description: keep(confirm_description),
                    mode: if envelope { mode } else { None },
                    expires_at: if envelope { expires_at } else { None },
                    timeout_seconds: if envelope { timeout_seconds } else { None },
                    priority: if envelope { priority } else { None },
                    questions,
                    extra: if envelope { extra } else { None },
                    pretty,
                }
            },
        )
}

/// The question as an asker writes it.
fn question_json(spec: &QuestionSpec) -> Value {
    let q = &spec.model;
    let mut out = Map::new();
    if !spec.positional {
        out.insert("id".into(), json!(q.id));
    }
    out.insert("question".into(), json!(q.question));
    out.insert("type".into(), json!(q.wire_type.as_str()));
    if let Some(description) = &q.description {
        out.insert("description".into(), json!(description));
    }
    if let Some(label) = &q.label {
        out.insert("label".into(), json!(label));
    }
    if q.kind.has_choices() {
        match q.dialect {
            Dialect::Interactive => {
                let options: Vec<&str> = q.choices.iter().map(|c| c.id.as_str()).collect();
                out.insert("options".into(), json!(options));
            }
            Dialect::Structured => {
                let choices: Vec<Value> = q
                    .choices
                    .iter()
                    .map(|c| {
                        let mut choice = json!({"id": c.id, "label": c.label});
                        if let Some(description) = &c.description {
                            choice["description"] = json!(description);
                        }
                        choice
                    })
                    .collect();
                out.insert("choices".into(), Value::Array(choices));
            }
        }
    }
    if let Some(default) = &q.default {
        let written = if spec.default_by_label {
            by_label(q, default)
        } else {
            default.clone()
        };
        out.insert("default".into(), written);
    }
    if !(spec.omit_defaults && q.required) {
        out.insert("required".into(), json!(q.required));
    }
    if q.kind.has_choices() {
        let dialect_default = q.dialect == Dialect::Structured;
        if !(spec.omit_defaults && q.allow_custom == dialect_default) {
            out.insert("allow_custom".into(), json!(q.allow_custom));
        }
    } else if let Some(stray) = spec.stray_allow_custom {
        out.insert("allow_custom".into(), json!(stray));
    }
    if let Some(pattern) = &q.pattern {
        out.insert("pattern".into(), json!(pattern));
    }
    if let Some(extra) = &spec.extra {
        out.insert("x-asker-meta".into(), extra.clone());
    }
    Value::Object(out)
}

/// A default written with labels where it names choices; fill-in text stays as it is.
fn by_label(q: &Question, default: &Value) -> Value {
    let label = |v: &Value| match v.as_str().and_then(|id| q.choice(id)) {
        Some(choice) => json!(choice.label),
        None => v.clone(),
    };
    match default {
        Value::Array(items) => Value::Array(items.iter().map(label).collect()),
        other => label(other),
    }
}

fn request_bytes(spec: &RequestSpec) -> Vec<u8> {
    let questions = Value::Array(spec.questions.iter().map(question_json).collect());
    let value = match spec.shape {
        Shape::Bare => questions,
        Shape::Interactive => json!({ "interactiveQuestions": questions }),
        Shape::Envelope => {
            let mut out = Map::new();
            if spec.write_inbox {
                out.insert("inbox".into(), json!(1));
            }
            let mut put = |key: &str, value: Option<Value>| {
                if let Some(value) = value {
                    out.insert(key.into(), value);
                }
            };
            put("id", spec.body_id.as_ref().map(|v| json!(v)));
            put("title", spec.title.as_ref().map(|v| json!(v)));
            put(
                "source",
                spec.source
                    .as_ref()
                    .map(|s| serde_json::to_value(s).unwrap()),
            );
            put(
                "confirm_title",
                spec.confirm_title.as_ref().map(|v| json!(v)),
            );
            put(
                "confirm_description",
                spec.confirm_description.as_ref().map(|v| json!(v)),
            );
            put("mode", spec.mode.map(|v| serde_json::to_value(v).unwrap()));
            put(
                "expires_at",
                spec.expires_at.map(|at| json!(at.to_rfc3339())),
            );
            put("timeout_seconds", spec.timeout_seconds.map(|s| json!(s)));
            put(
                "priority",
                spec.priority.map(|v| serde_json::to_value(v).unwrap()),
            );
            put("x-pipeline", spec.extra.clone());
            out.insert("questions".into(), questions);
            Value::Object(out)
        }
    };
    if spec.pretty {
        serde_json::to_vec_pretty(&value).unwrap()
    } else {
        serde_json::to_vec(&value).unwrap()
    }
}

/// The request the inbox must make of `spec`'s file.
fn expected(spec: &RequestSpec, bytes: &[u8]) -> Request {
    Request {
        id: spec.file_id.clone().or_else(|| spec.body_id.clone()),
        title: spec.title.clone(),
        source: spec.source.clone().unwrap_or_default(),
        questions: spec.questions.iter().map(|q| q.model.clone()).collect(),
        confirm_title: spec.confirm_title.clone(),
        confirm_description: spec.confirm_description.clone(),
        mode: spec.mode.unwrap_or_default(),
        expiry: match (spec.expires_at, spec.timeout_seconds) {
            (Some(at), _) => Some(Expiry::At(at.to_utc())),
            (None, Some(seconds)) => Some(Expiry::After { seconds }),
            (None, None) => None,
        },
        priority: spec.priority.unwrap_or_default(),
        sha256: sha256_hex(bytes),
        origin: None,
    }
}

/// A parsed request written back with every field explicit, as an envelope.
fn explicit_spec(request: &Request) -> RequestSpec {
    let (expires_at, timeout_seconds) = match request.expiry {
        Some(Expiry::At(at)) => (Some(at.fixed_offset()), None),
        Some(Expiry::After { seconds }) => (None, Some(seconds)),
        None => (None, None),
    };
    RequestSpec {
        shape: Shape::Envelope,
        file_id: request.id.clone(),
        body_id: request.id.clone(),
        write_inbox: true,
        title: request.title.clone(),
        source: Some(request.source.clone()),
        confirm_title: request.confirm_title.clone(),
        confirm_description: request.confirm_description.clone(),
        mode: Some(request.mode),
        expires_at,
        timeout_seconds,
        priority: Some(request.priority),
        questions: request
            .questions
            .iter()
            .map(|q| QuestionSpec {
                model: q.clone(),
                positional: false,
                omit_defaults: false,
                default_by_label: false,
                stray_allow_custom: None,
                extra: None,
            })
            .collect(),
        extra: None,
        pretty: true,
    }
}

fn outcome_strategy() -> impl Strategy<Value = Outcome> {
    let status = proptest::sample::select(vec![
        OutcomeStatus::Answered,
        OutcomeStatus::Defaulted,
        OutcomeStatus::Declined,
        OutcomeStatus::Expired,
        OutcomeStatus::Rejected,
    ]);
    let answer = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        text(30).prop_map(Value::String),
        prop::collection::vec(text(10).prop_map(Value::String), 0..4).prop_map(Value::Array),
        // Not what an inbox writes, but another inbox's file may hold anything.
        simple_json(),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(Value::from),
    ];
    let problem = (text(20), text(40)).prop_map(|(pointer, message)| Problem { pointer, message });
    (
        (request_id(), status, text(20), text(20)),
        (
            prop::collection::btree_map(explicit_id(), answer, 0..5),
            prop::collection::vec(explicit_id(), 0..3),
            prop::collection::vec(explicit_id(), 0..3),
        ),
        (
            proptest::option::of(prop::collection::btree_map(explicit_id(), text(30), 0..3)),
            proptest::option::of(text(40)),
            proptest::option::of(prop::collection::vec(problem, 0..3)),
            proptest::option::of("[0-9a-f]{64}"),
        ),
        (
            timestamp(),
            // `null` reads back as no reply, and no inbox writes one.
            proptest::option::of(simple_json().prop_filter("not null", |v| !v.is_null())),
        ),
        (
            proptest::option::of(prop_oneof![
                Just(DecidedBy::Person),
                Just(DecidedBy::Policy)
            ]),
            proptest::option::of(text(20)),
            proptest::option::of(prop_oneof![
                Just(Surface::Window),
                Just(Surface::Bubble),
                Just(Surface::Cli),
                Just(Surface::Policy),
                Just(Surface::Web),
                Just(Surface::Push),
            ]),
            proptest::option::of(any::<u64>()),
            proptest::option::of(prop_oneof![
                Just(Trigger::Autonomous),
                Just(Trigger::Expiry),
                Just(Trigger::Delay),
            ]),
        ),
        proptest::option::of(text(20)),
    )
        .prop_map(
            |(
                (id, status, answered_by, instance),
                (answers, custom, defaulted),
                (notes, reason, errors, request_sha256),
                (at, reply),
                (decided_by, rule, surface, decision_ms, trigger),
                device,
            )| Outcome {
                inbox: 1,
                id,
                status,
                answers,
                custom,
                defaulted,
                notes,
                reason,
                errors,
                answered_by,
                answered_at: at.to_utc(),
                decided_by,
                rule,
                surface,
                device,
                decision_ms,
                trigger,
                request_sha256,
                instance,
                approvals: None,
                taken_over: false,
                reply,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn requests_parse_to_the_model_they_were_written_from(spec in request_spec()) {
        let bytes = request_bytes(&spec);
        let parsed = parse_request(&bytes, spec.file_id.as_deref());
        let want = expected(&spec, &bytes);
        match parsed {
            Ok(request) => prop_assert_eq!(request, want),
            Err(problems) => prop_assert!(
                false,
                "refused: {:?}\n{}",
                problems,
                String::from_utf8_lossy(&bytes)
            ),
        }
    }

    #[test]
    fn the_normalised_model_is_a_fixed_point(spec in request_spec()) {
        let first = parse_request(&request_bytes(&spec), spec.file_id.as_deref())
            .expect("generated requests are valid");
        let bytes = request_bytes(&explicit_spec(&first));
        let second = parse_request(&bytes, first.id.as_deref()).map_err(|problems| {
            TestCaseError::fail(format!(
                "the explicit form is refused: {problems:?}\n{}",
                String::from_utf8_lossy(&bytes)
            ))
        })?;
        prop_assert_eq!(&second.sha256, &sha256_hex(&bytes));
        prop_assert_eq!(Request { sha256: first.sha256.clone(), ..second }, first);
    }

    #[test]
    fn requests_survive_the_store(spec in request_spec()) {
        // The store keeps the normalised request as JSON and reads it back for the policies
        // and the answer form.
        let request = parse_request(&request_bytes(&spec), spec.file_id.as_deref())
            .expect("generated requests are valid");
        let stored = serde_json::to_string(&request).unwrap();
        let back: Request = serde_json::from_str(&stored).unwrap();
        prop_assert_eq!(back, request);
    }

    #[test]
    fn outcomes_survive_their_file(outcome in outcome_strategy()) {
        let bytes = outcome.to_file_bytes();
        prop_assert_eq!(bytes.last(), Some(&b'\n'));
        let back = Outcome::from_file_bytes(&bytes)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", String::from_utf8_lossy(&bytes))))?;
        prop_assert_eq!(&back, &outcome);
        prop_assert_eq!(back.to_file_bytes(), bytes, "rewriting gives other bytes");
    }

    #[test]
    fn outcomes_from_other_writers_read_the_same_compact_or_pretty(
        outcome in outcome_strategy(),
    ) {
        // Another inbox (or a script) may write compact JSON; only the meaning counts.
        let compact = serde_json::to_vec(&outcome).unwrap();
        prop_assert_eq!(Outcome::from_file_bytes(&compact).unwrap(), outcome);
    }
}

#[test]
fn outcomes_of_another_protocol_version_are_refused() {
    let mut value = serde_json::to_value(Outcome::new(
        "r1",
        OutcomeStatus::Answered,
        "operator:ann",
        "h/i",
        Utc::now(),
    ))
    .unwrap();
    value["inbox"] = json!(2);
    let error = Outcome::from_file_bytes(&serde_json::to_vec(&value).unwrap()).unwrap_err();
    assert!(error.contains("version 2"), "{error}");
}

#[test]
fn omitted_outcome_lists_read_as_empty() {
    let bytes = br#"{"inbox": 1, "id": "r1", "status": "declined", "reason": "no",
        "answered_by": "operator:ann", "answered_at": "2026-12-03T10:42:17Z", "instance": "h/i"}"#;
    let outcome = Outcome::from_file_bytes(bytes).unwrap();
    assert!(outcome.answers.is_empty() && outcome.custom.is_empty());
    assert_eq!(
        Outcome::from_file_bytes(&outcome.to_file_bytes()).unwrap(),
        outcome
    );
}
