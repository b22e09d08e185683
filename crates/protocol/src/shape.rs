//! Which request shape a file is in, decided by its top-level keys alone, and the id a body
//! gives itself. Plain data, no validation machinery: askers need the id before placing a
//! file, with or without the `validate` feature.

use serde_json::Value;

use crate::problem::Problem;

/// The `id` a request body gives itself: at the top of an object, or in the one element of a
/// HumanInterrupt list, where that shape keeps the envelope's fields. An asker placing the body
/// names its file after it.
pub fn body_id(value: &Value) -> Option<&str> {
    let holder = match detect_shape(value) {
        Ok(Shape::HumanInterruptList) => value.get(0)?,
        _ => value,
    };
    holder.get("id")?.as_str()
}

/// The shapes a request file may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Envelope,
    Interactive,
    Questions,
    Elicitation,
    AskUserQuestion,
    HumanInterrupt,
    HumanInterruptList,
    LangChainHitl,
}

/// Top-level keys that decide an object's shape, one group per family of shapes; keys of two
/// groups in one object are refused. `questions` and `interactiveQuestions` are one family:
/// when both are given the `interactiveQuestions` win, as they always have.
const SHAPE_KEYS: [&[&str]; 4] = [
    &["questions", "interactiveQuestions"],
    &["requestedSchema", "elicitationId"],
    &["action_request"],
    &["action_requests", "review_configs"],
];

/// Which shape a file is in, decided by its top-level keys alone (see docs/PROTOCOL.md,
/// "Other question dialects"), so that a mistake inside one shape is reported as that
/// shape's mistake and never makes the file "match" another shape by accident.
pub fn detect_shape(value: &Value) -> Result<Shape, Problem> {
    let map = match value {
        Value::Array(items) => {
            let interrupt = items
                .first()
                .is_some_and(|first| first.get("action_request").is_some());
            return Ok(if interrupt {
                Shape::HumanInterruptList
            } else {
                Shape::Questions
            });
        }
        Value::Object(map) => map,
        _ => {
            return Err(Problem::new(
                "",
                "a request must be a JSON object (the envelope, {\"interactiveQuestions\": \
                 [...]}, MCP elicitation params, AskUserQuestion input, a HumanInterrupt or a \
                 LangChain HITLRequest) \
                 or an array (of questions, or one HumanInterrupt)",
            ))
        }
    };
    let found: Vec<&str> = SHAPE_KEYS
        .iter()
        .filter_map(|keys| keys.iter().copied().find(|k| map.contains_key(*k)))
        .collect();
    if let [first, second, ..] = found.as_slice() {
        return Err(Problem::new(
            "",
            format!(
                "\"{first}\" and \"{second}\" belong to different request shapes; a request \
                 has one shape"
            ),
        ));
    }
    Ok(if map.contains_key("action_request") {
        Shape::HumanInterrupt
    } else if map.contains_key("action_requests") || map.contains_key("review_configs") {
        Shape::LangChainHitl
    } else if map.contains_key("requestedSchema") || map.contains_key("elicitationId") {
        Shape::Elicitation
    } else if map.contains_key("interactiveQuestions") {
        Shape::Interactive
    } else if map.get("questions").is_some_and(is_ask_user_question_list) {
        Shape::AskUserQuestion
    } else {
        Shape::Envelope
    })
}

/// AskUserQuestion's questions have no `type` (every envelope question must have one), and
/// carry a `header`, `multiSelect`, or `options` made of objects (envelope options are
/// strings).
fn is_ask_user_question_list(questions: &Value) -> bool {
    let Some(items) = questions.as_array() else {
        return false;
    };
    let untyped = items
        .iter()
        .all(|item| item.is_object() && item.get("type").is_none());
    let marked = items.iter().any(|item| {
        item.get("header").is_some()
            || item.get("multiSelect").is_some()
            || item
                .get("options")
                .and_then(Value::as_array)
                .is_some_and(|options| options.iter().any(Value::is_object))
    });
    untyped && marked
}
