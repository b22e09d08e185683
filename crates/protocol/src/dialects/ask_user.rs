//! Claude Code's AskUserQuestion: `{"questions": [{"question", "header", "options":
//! [{"label", "description"}], "multiSelect"}]}`.
//!
//! Each question becomes a structured single or multiple choice whose choices are the
//! option labels (a label is its own id, as the reply quotes labels). Fill-in is on, because
//! AskUserQuestion always offers "Other". Questions have no ids, so they are `q1`, `q2`, ...;
//! their texts key the reply, so they must differ.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::model::{
    AskedText, Choice, Dialect, Origin, Question, QuestionKind, QuestionType, Request,
};
use crate::outcome::{Outcome, OutcomeStatus};
use crate::problem::Problem;
use crate::wire::AskedQuestion;
use crate::wording::{positional_id, short};

pub(crate) fn normalise(value: &Value, request: &mut Request, problems: &mut Vec<Problem>) {
    let items = value
        .get("questions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut texts: HashMap<&str, usize> = HashMap::new();
    let mut asked = Vec::new();
    for (index, raw) in items.iter().enumerate() {
        let at = format!("/questions/{index}");
        if let Some(text) = raw.get("question").and_then(Value::as_str) {
            if let Some(first) = texts.insert(text, index) {
                problems.push(Problem::new(
                    format!("{at}/question"),
                    format!(
                        "question {} asks \"{}\" too; the question texts key the answers, so \
                         they must differ",
                        first + 1,
                        short(text)
                    ),
                ));
            }
        }
        // Structure problems were reported by the schema pass.
        let Ok(wire) = AskedQuestion::deserialize(raw) else {
            continue;
        };
        let multi_select = wire.multi_select.unwrap_or(false);
        let mut choices: Vec<Choice> = Vec::with_capacity(wire.options.len());
        for (option_index, option) in wire.options.iter().enumerate() {
            if choices.iter().any(|c| c.id == option.label) {
                problems.push(Problem::new(
                    format!("{at}/options/{option_index}/label"),
                    format!("option \"{}\" appears more than once", short(&option.label)),
                ));
                continue;
            }
            choices.push(Choice {
                id: option.label.clone(),
                label: option.label.clone(),
                description: option.description.clone(),
            });
        }
        crate::labels::check_choice_labels(
            wire.options
                .iter()
                .enumerate()
                .map(|(option_index, option)| crate::labels::LabelAt {
                    pointer: format!("{at}/options/{option_index}/label"),
                    id: &option.label,
                    label: &option.label,
                }),
            problems,
        );
        let (kind, wire_type) = if multi_select {
            (
                QuestionKind::MultiChoice,
                QuestionType::MultiChoiceStructured,
            )
        } else {
            (QuestionKind::Choice, QuestionType::SingleChoice)
        };
        let id = positional_id(index);
        asked.push(AskedText {
            question_id: id.clone(),
            question: wire.question.clone(),
            multi_select,
        });
        request.questions.push(Question {
            id,
            kind,
            wire_type,
            dialect: Dialect::Structured,
            question: wire.question,
            description: None,
            label: wire.header.filter(|h| !h.trim().is_empty()),
            choices,
            default: None,
            // AskUserQuestion has no optional questions.
            required: true,
            pattern: None,
            allow_custom: true,
            rules: Default::default(),
        });
    }
    request.origin = Some(Origin::AskUserQuestion { questions: asked });
}

/// What Claude Code gives the model: question text → the chosen label, several labels
/// joined with ", ", or the operator's own text. A refusal or expiry answers nothing and
/// says why under `declined` or `expired`.
pub(crate) fn reply(questions: &[AskedText], outcome: &Outcome) -> Value {
    let mut answers = Map::new();
    match outcome.status {
        OutcomeStatus::Answered | OutcomeStatus::Defaulted => {
            for asked in questions {
                let text = match outcome.answers.get(&asked.question_id) {
                    Some(Value::String(text)) => text.clone(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    // Every question is required, so an answered outcome has them all.
                    _ => continue,
                };
                answers.insert(asked.question.clone(), Value::String(text));
            }
            json!({ "answers": answers })
        }
        OutcomeStatus::Declined => json!({ "answers": answers, "declined": outcome.reason }),
        OutcomeStatus::Expired => json!({ "answers": answers, "expired": outcome.reason }),
        // Not reached: dialect_reply gives no reply for rejected requests.
        OutcomeStatus::Rejected => json!({ "answers": answers }),
    }
}
