//! One key, one answer: which requests the window's reading pane and the phone page decide
//! with a single key or tap, and with what.
//!
//! An agent's own permission prompt takes one key; a request that is just as simple must
//! not take four here. Three shapes qualify, and only whole: a single yes/no question (`y`,
//! `n`), a single choice of at most nine options (`1`-`9`), and an agent's tool-call
//! decision (`inbox_protocol::decision`: `1`-`9` in the options' order; Deny then takes the
//! optional reason in place). Anything with a confirmation screen, several questions (but
//! the decision's reason), typed answers or extra checks keeps its form.
//!
//! The key never decides more than the form would: each option's value is exactly what the
//! form submits for that pick, every option is shown with the question it answers, and the
//! submit carries the version shown, as every answer does.

use inbox_protocol::decision::ToolDecision;
use inbox_protocol::text::one_line;
use inbox_protocol::{Question, QuestionKind, Request};
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// Keys go up to 9: one key each, as the form's own number keys.
const MAX_KEYED_OPTIONS: usize = 9;

/// How a request is decided with one key or one tap.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct QuickView {
    /// `confirm`, `choice` or `decision` (an agent's tool call).
    #[ts(type = "\"confirm\" | \"choice\" | \"decision\"")]
    pub kind: String,
    /// The question a key answers.
    pub question_id: String,
    /// In the order the form lists them.
    pub options: Vec<QuickOption>,
    /// A decision's optional reason question: Deny asks for it in place. Null otherwise.
    pub reason_id: Option<String>,
}

/// One option and the key that picks it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct QuickOption {
    /// `y`, `n`, or `1` to `9`.
    pub key: String,
    /// As the form shows it (one line, hidden characters spelt out).
    pub label: String,
    /// The answer to `question_id`, as the form submits it.
    pub value: Value,
    /// Deny of a decision that asks why: the key opens the reason field (Enter sends it,
    /// Esc sends none) instead of sending at once.
    pub asks_reason: bool,
}

impl QuickView {
    /// How `request` is decided with one key, or `None` where it keeps its form.
    pub fn of(request: &Request) -> Option<QuickView> {
        if let Some(decision) = ToolDecision::of(request) {
            let question = &request.questions[0];
            let reason_id = decision
                .asks_reason
                .then(|| request.questions[1].id.clone());
            let mut view = QuickView::choice(question, "decision")?;
            view.options[ToolDecision::DENY_INDEX].asks_reason = reason_id.is_some();
            view.reason_id = reason_id;
            return Some(view);
        }
        if request.confirm_title.is_some() || request.confirm_description.is_some() {
            return None;
        }
        let [question] = request.questions.as_slice() else {
            return None;
        };
        if !question.rules.is_empty() {
            return None;
        }
        match question.kind {
            QuestionKind::Confirm => Some(QuickView {
                kind: "confirm".into(),
                question_id: question.id.clone(),
                options: [("y", "Yes", true), ("n", "No", false)]
                    .into_iter()
                    .map(|(key, label, value)| QuickOption {
                        key: key.into(),
                        label: label.into(),
                        value: Value::Bool(value),
                        asks_reason: false,
                    })
                    .collect(),
                reason_id: None,
            }),
            QuestionKind::Choice => QuickView::choice(question, "choice"),
            QuestionKind::MultiChoice | QuestionKind::Text => None,
        }
    }

    /// A choice's options on the number keys, if they fit.
    fn choice(question: &Question, kind: &str) -> Option<QuickView> {
        if question.choices.is_empty() || question.choices.len() > MAX_KEYED_OPTIONS {
            return None;
        }
        Some(QuickView {
            kind: kind.into(),
            question_id: question.id.clone(),
            options: question
                .choices
                .iter()
                .enumerate()
                .map(|(index, choice)| QuickOption {
                    key: (index + 1).to_string(),
                    label: one_line(&choice.label).into_owned(),
                    value: Value::String(choice.id.clone()),
                    asks_reason: false,
                })
                .collect(),
            reason_id: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(body: Value) -> Request {
        inbox_protocol::parse_request(body.to_string().as_bytes(), Some("r")).unwrap()
    }

    fn keys(view: &QuickView) -> Vec<(&str, &str, &Value)> {
        view.options
            .iter()
            .map(|o| (o.key.as_str(), o.label.as_str(), &o.value))
            .collect()
    }

    #[test]
    fn a_single_confirm_is_y_and_n() {
        let view = QuickView::of(&request(json!({"questions": [
            {"id": "go", "question": "Deploy?", "type": "confirm"}]})))
        .unwrap();
        assert_eq!(view.kind, "confirm");
        assert_eq!(view.question_id, "go");
        assert_eq!(
            keys(&view),
            [("y", "Yes", &json!(true)), ("n", "No", &json!(false))]
        );
    }

    #[test]
    fn a_single_choice_is_its_numbers_with_the_ids_the_form_sends() {
        let view = QuickView::of(&request(json!({"questions": [
            {"id": "env", "question": "Where?", "type": "single_choice", "choices": [
                {"id": "s", "label": "staging"}, {"id": "p", "label": "production"}]}]})))
        .unwrap();
        assert_eq!(
            keys(&view),
            [
                ("1", "staging", &json!("s")),
                ("2", "production", &json!("p"))
            ]
        );
    }

    #[test]
    fn a_tool_call_decision_asks_the_reason_on_deny_only() {
        let view = QuickView::of(&request(json!({"questions": [
            {"id": "decision", "question": "Allow Claude to use Bash?", "type": "choice",
             "options": ["Allow once", "Deny", "Yes, and don't ask again for npm test"]},
            {"id": "reason", "question": "Why?", "type": "text", "required": false}]})))
        .unwrap();
        assert_eq!(view.kind, "decision");
        assert_eq!(view.reason_id.as_deref(), Some("reason"));
        let asks: Vec<bool> = view.options.iter().map(|o| o.asks_reason).collect();
        assert_eq!(asks, [false, true, false]);
        assert_eq!(view.options[2].key, "3");
    }

    #[test]
    fn everything_else_keeps_its_form() {
        for body in [
            json!({"questions": [{"id": "a", "question": "A?", "type": "confirm"},
                                 {"id": "b", "question": "B?", "type": "confirm"}]}),
            json!({"confirm_title": "Sure?", "questions": [
                {"id": "a", "question": "A?", "type": "confirm"}]}),
            json!({"questions": [{"id": "t", "question": "Name?", "type": "text"}]}),
            json!({"questions": [{"id": "m", "question": "Which?", "type": "multiChoice",
                                  "options": ["a", "b"]}]}),
            json!({"questions": [{"id": "c", "question": "Which?", "type": "choice",
                                  "options": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]}]}),
        ] {
            assert_eq!(QuickView::of(&request(body.clone())), None, "{body}");
        }
    }
}
