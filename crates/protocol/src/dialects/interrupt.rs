//! LangGraph Agent Inbox's HumanInterrupt: `{"action_request": {"action", "args"}, "config":
//! {"allow_accept", "allow_edit", "allow_respond", "allow_ignore"}, "description"}`, alone or
//! as the one-element list LangGraph's `interrupt()` is given.
//!
//! It becomes up to three questions: `decision`, a single choice of the allowed responses
//! (choice ids are HumanResponse types: accept, edit, response, ignore); `args`, the
//! arguments as JSON text to edit (when editing is allowed; the current arguments are its
//! default, and the answer must be a JSON object); `response`, the text to send back (when
//! responding is allowed; required if that is the decision).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::answers::JSON_OBJECT_PATTERN;
use crate::dialects::{cut, json_text, text_question};
use crate::limits::{MAX_ANSWER_CHARS, MAX_DESCRIPTION_CHARS, MAX_OPTION_CHARS};
use crate::model::{
    Choice, Dialect, Origin, Question, QuestionKind, QuestionType, Request, RequiredIf, Rules,
    TextFormat, INTERRUPT_ARGS_ID, INTERRUPT_DECISION_ID, INTERRUPT_RESPONSE_ID,
};
use crate::ordered::Ordered;
use crate::outcome::{Outcome, OutcomeStatus};
use crate::problem::Problem;
use crate::wire::HumanInterrupt;

/// `at` is the interrupt's pointer: `""`, or `"/0"` in a list.
pub(crate) fn normalise(
    value: &Value,
    bytes: &[u8],
    at: &str,
    request: &mut Request,
    problems: &mut Vec<Problem>,
) {
    let list = !at.is_empty();
    if let Some(count) = value.as_array().map(Vec::len).filter(|&n| n > 1) {
        problems.push(Problem::new(
            "",
            format!(
                "the list holds {count} interrupts; a request asks one, so place one request \
                 per interrupt"
            ),
        ));
    }
    let Some(raw) = value.pointer(at) else {
        return;
    };
    // Structure problems were reported by the schema pass.
    let Ok(interrupt) = HumanInterrupt::deserialize(raw) else {
        return;
    };
    let config = interrupt.config;
    if !(config.allow_accept || config.allow_edit || config.allow_respond || config.allow_ignore) {
        problems.push(Problem::new(
            format!("{at}/config"),
            "at least one of allow_accept, allow_edit, allow_respond and allow_ignore must be \
             true, or the operator could not answer",
        ));
        return;
    }
    let action = interrupt.action_request.action;
    let args = interrupt.action_request.args;
    // The arguments as written, not re-sorted: they read best in the asker's order.
    let ordered = Ordered::read(bytes);
    let ordered_args = ordered
        .as_ref()
        .and_then(|o| o.pointer(&format!("{at}/action_request/args")));
    let (compact, pretty) = match ordered_args {
        Some(ordered) => (json_text(ordered, false), json_text(ordered, true)),
        None => (json_text(&args, false), json_text(&args, true)),
    };

    let mut choices = Vec::new();
    if config.allow_accept {
        // Room for the words around the arguments in a 500-character label.
        let shown = cut(
            &compact,
            MAX_OPTION_CHARS - 20 - action.chars().count().min(200),
        );
        // The operator must see every argument before accepting: pretty if it fits, else
        // compact; arguments too long for either are refused, never shown cut.
        let full = [&pretty, &compact]
            .into_iter()
            .map(|text| format!("Arguments:\n\n```json\n{text}\n```"))
            .find(|text| text.chars().count() <= MAX_DESCRIPTION_CHARS);
        if full.is_none() {
            problems.push(Problem::new(
                format!("{at}/action_request/args"),
                format!(
                    "the arguments are over {MAX_DESCRIPTION_CHARS} characters as JSON, too \
                     long to show the operator in full before they accept; shorten them"
                ),
            ));
        }
        choices.push(Choice {
            id: "accept".into(),
            label: format!("Accept: run {action} {shown}"),
            description: full,
        });
    }
    if config.allow_edit {
        choices.push(choice(
            "edit",
            format!("Edit the arguments, then run {action}"),
        ));
    }
    if config.allow_respond {
        choices.push(choice(
            "response",
            format!("Respond: send the agent a message instead of running {action}"),
        ));
    }
    if config.allow_ignore {
        choices.push(choice("ignore", format!("Ignore: do not run {action}")));
    }
    request.questions.push(Question {
        id: INTERRUPT_DECISION_ID.into(),
        kind: QuestionKind::Choice,
        wire_type: QuestionType::SingleChoice,
        dialect: Dialect::Structured,
        question: format!("The agent wants to run {action}. How do you respond?"),
        description: interrupt.description,
        label: Some("Decision".into()),
        choices,
        default: None,
        required: true,
        pattern: None,
        allow_custom: false,
        rules: Rules::default(),
    });

    if config.allow_edit {
        // The operator edits the current arguments; too long to edit is refused here rather
        // than offered as an edit nobody could submit.
        let default = [pretty, compact]
            .into_iter()
            .find(|text| text.chars().count() <= MAX_ANSWER_CHARS);
        if default.is_none() {
            problems.push(Problem::new(
                format!("{at}/action_request/args"),
                format!(
                    "the arguments are over {MAX_ANSWER_CHARS} characters as JSON, too long to \
                     edit as an answer; shorten them or set allow_edit to false"
                ),
            ));
        }
        request.questions.push(Question {
            id: INTERRUPT_ARGS_ID.into(),
            label: Some("Arguments".into()),
            question: format!("Arguments for {action}, as a JSON object (used if you choose Edit)"),
            default: default.map(Value::String),
            // A hint for forms that check as the operator types; the rule is the real check.
            pattern: Some(JSON_OBJECT_PATTERN.into()),
            rules: Rules {
                format: Some(TextFormat::JsonObject),
                ..Rules::default()
            },
            ..text_question()
        });
    }
    if config.allow_respond {
        request.questions.push(Question {
            id: INTERRUPT_RESPONSE_ID.into(),
            label: Some("Response".into()),
            question: "Your message to the agent (used if you choose Respond)".into(),
            rules: Rules {
                required_if: Some(RequiredIf {
                    question: INTERRUPT_DECISION_ID.into(),
                    equals: json!("response"),
                }),
                ..Rules::default()
            },
            ..text_question()
        });
    }
    request.origin = Some(Origin::HumanInterrupt { action, args, list });
}

fn choice(id: &str, label: String) -> Choice {
    Choice {
        id: id.into(),
        label,
        description: None,
    }
}

/// LangGraph's HumanResponse: `{"type", "args"}`. Declined and expired are `ignore`: the
/// agent must not act, and HumanResponse has no other way to say so. A list in, a list out.
pub(crate) fn reply(action: &str, list: bool, outcome: &Outcome) -> Value {
    let answered = matches!(
        outcome.status,
        OutcomeStatus::Answered | OutcomeStatus::Defaulted
    );
    let decision = outcome
        .answers
        .get(INTERRUPT_DECISION_ID)
        .and_then(Value::as_str)
        .filter(|_| answered);
    let response = match decision {
        Some("accept") => json!({"type": "accept", "args": null}),
        Some("edit") => {
            // Checked to be a JSON object when answered; the default is the original.
            let args = outcome
                .answers
                .get(INTERRUPT_ARGS_ID)
                .and_then(Value::as_str)
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .filter(Value::is_object);
            match args {
                Some(args) => json!({"type": "edit", "args": {"action": action, "args": args}}),
                // Only an outcome some other writer made can get here: the edit cannot be
                // carried out as asked, so nothing is.
                None => json!({"type": "ignore", "args": null}),
            }
        }
        Some("response") => {
            let text = outcome
                .answers
                .get(INTERRUPT_RESPONSE_ID)
                .and_then(Value::as_str)
                .unwrap_or_default();
            json!({"type": "response", "args": text})
        }
        _ => json!({"type": "ignore", "args": null}),
    };
    if list {
        json!([response])
    } else {
        response
    }
}
