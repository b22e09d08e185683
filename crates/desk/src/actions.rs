//! Which answers a notification can offer as buttons.
//!
//! Only a request with one question gets buttons, and only when a single press is a complete
//! answer: a confirm (Yes/No) or a choice of at most three options. Anything else needs the
//! window, and so does a choice whose options carry descriptions: a notification cannot show
//! them, and what they say may decide the answer (a HumanInterrupt's Accept holds the full
//! arguments of the action there).

use inbox_protocol::{QuestionKind, Request};
use serde_json::{Map, Value};

/// The button type and the click-on-the-bubble key belong to the notifications crate, which
/// sends them and maps a press back to its answer.
pub use inbox_notifications::{ActionButton, OPEN_ACTION};

/// More options than this and the buttons would not fit: open the window instead.
pub const MAX_CHOICE_BUTTONS: usize = 3;

/// The buttons a notification for `request` gets; empty when it needs the window.
pub fn answer_buttons(request: &Request) -> Vec<ActionButton> {
    let [question] = request.questions.as_slice() else {
        return Vec::new();
    };
    let answer = |value: Value| {
        let mut answers = Map::new();
        answers.insert(question.id.clone(), value);
        answers
    };
    match question.kind {
        QuestionKind::Confirm => vec![
            ActionButton {
                key: "answer:yes".into(),
                label: "Yes".into(),
                answers: answer(Value::Bool(true)),
            },
            ActionButton {
                key: "answer:no".into(),
                label: "No".into(),
                answers: answer(Value::Bool(false)),
            },
        ],
        QuestionKind::Choice
            if question.choices.len() <= MAX_CHOICE_BUTTONS
                && question.choices.iter().all(|c| c.description.is_none()) =>
        {
            question
                .choices
                .iter()
                .enumerate()
                .map(|(index, choice)| ActionButton {
                    key: format!("answer:{index}"),
                    label: choice.label.clone(),
                    answers: answer(Value::String(choice.id.clone())),
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> Request {
        inbox_protocol::parse_request(json.as_bytes(), Some("r1")).expect("valid request")
    }

    #[test]
    fn a_single_confirm_gets_yes_and_no() {
        let buttons = answer_buttons(&request(
            r#"{"questions":[{"type":"yes_no","question":"Deploy?"}]}"#,
        ));
        let labels: Vec<_> = buttons.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(labels, ["Yes", "No"]);
        assert_eq!(buttons[0].answers["q1"], Value::Bool(true));
        assert_eq!(buttons[1].answers["q1"], Value::Bool(false));
    }

    #[test]
    fn a_small_choice_gets_one_button_per_option() {
        let buttons = answer_buttons(&request(
            r#"{"questions":[{"type":"single_choice","question":"Where?","choices":[
                {"id":"stg","label":"Staging"},{"id":"prod","label":"Production"}]}]}"#,
        ));
        assert_eq!(buttons.len(), 2);
        assert_eq!(buttons[1].label, "Production");
        assert_eq!(buttons[1].answers["q1"], Value::String("prod".into()));
    }

    #[test]
    fn big_choices_batches_text_and_multi_need_the_window() {
        for json in [
            r#"{"questions":[{"type":"single_choice","question":"Which?","choices":[
                {"id":"a","label":"A"},{"id":"b","label":"B"},{"id":"c","label":"C"},{"id":"d","label":"D"}]}]}"#,
            r#"{"questions":[{"type":"yes_no","question":"One?"},{"type":"yes_no","question":"Two?"}]}"#,
            r#"{"questions":[{"type":"free_text","question":"Why?"}]}"#,
            r#"{"questions":[{"type":"multi_choice","question":"Which?","choices":[{"id":"a","label":"A"}]}]}"#,
            // Descriptions a bubble cannot show; a HumanInterrupt's Accept keeps its arguments there.
            r#"{"questions":[{"type":"single_choice","question":"Which?","choices":[
                {"id":"a","label":"A","description":"drops the table"},{"id":"b","label":"B"}]}]}"#,
            r#"{"action_request":{"action":"send_email","args":{"to":"ops@example.com"}},
                "config":{"allow_accept":true,"allow_ignore":true}}"#,
        ] {
            assert!(answer_buttons(&request(json)).is_empty(), "{json}");
        }
    }
}
