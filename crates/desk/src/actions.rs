//! Which answers a notification offers as buttons, for the app.
//!
//! The rule lives with the words of the bubble, in the engine
//! ([`inbox_engine::notifier::offer`]), because a bubble must say what its buttons do: the
//! buttons are made from the same offer whose question and options the body lists. In
//! short, only a request of normal or low priority with one question gets buttons, and only
//! when a single press is a complete answer to a question shown whole: a confirm (Yes/No)
//! or a choice of at most [`MAX_BUTTONS`] options, with nothing else to read (a description
//! of the question or of an option, a confirmation text: a HumanInterrupt's Accept holds
//! the full arguments of the action there) and within the bubble's limits
//! ([`MAX_BODY_CHARS`], [`MAX_LABEL_CHARS`]). Everything else, and every high or critical
//! request, is answered in the window, which a click on the bubble opens.
//!
//! Every button press carries the version (the request file's SHA-256) the bubble showed;
//! [`crate::desk::Desk::handle_choice`] hands it to the engine, which refuses to answer a file
//! that has changed since.

/// The button type and the click-on-the-bubble key belong to the notifications crate, which
/// sends them and maps a press back to its answer.
pub use inbox_notifications::{ActionButton, OPEN_ACTION};

pub use inbox_engine::notifier::{
    offer, NeedsWindow, Offer, MAX_BODY_CHARS, MAX_BUTTONS, MAX_LABEL_CHARS,
};

/// The buttons a notification for `announcement` gets; empty when it needs the window.
pub fn answer_buttons(announcement: &inbox_engine::notifier::Announcement) -> Vec<ActionButton> {
    offer(announcement)
        .map(|offer| ActionButton::for_offer(&offer))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_engine::notifier::Announcement;
    use serde_json::{json, Value};

    fn announced(json: Value) -> Announcement {
        let request = inbox_protocol::parse_request(json.to_string().as_bytes(), Some("r1"))
            .expect("valid request");
        Announcement::pending("r1", request, chrono::Utc::now())
    }

    #[test]
    fn a_single_confirm_gets_yes_and_no_with_the_keys_the_app_knows() {
        let buttons = answer_buttons(&announced(
            json!({"questions":[{"type":"yes_no","question":"Deploy?"}]}),
        ));
        let keys: Vec<_> = buttons
            .iter()
            .map(|b| (b.key.as_str(), b.label.as_str()))
            .collect();
        assert_eq!(keys, [("answer:yes", "Yes"), ("answer:no", "No")]);
        assert_eq!(buttons[0].answers["q1"], Value::Bool(true));
        assert_eq!(buttons[1].answers["q1"], Value::Bool(false));
    }

    #[test]
    fn a_small_choice_gets_one_button_per_option() {
        let buttons = answer_buttons(&announced(
            json!({"questions":[{"type":"single_choice","question":"Where?","choices":[
                {"id":"stg","label":"Staging"},{"id":"prod","label":"Production"}]}]}),
        ));
        assert_eq!(buttons.len(), 2);
        assert_eq!(buttons[1].key, "answer:1");
        assert_eq!(buttons[1].label, "Production");
        assert_eq!(buttons[1].answers["q1"], Value::String("prod".into()));
    }

    #[test]
    fn the_other_dialects_and_urgent_requests_need_the_window() {
        for json in [
            // Claude Code's AskUserQuestion: options carry descriptions.
            json!({"questions":[{"question":"Which database?","header":"DB","multiSelect":false,
                "options":[{"label":"Postgres","description":"relational"},
                           {"label":"Mongo","description":"documents"}]}]}),
            // An MCP elicitation's message is the first question's description.
            json!({"message":"The agent wants to delete ./build","requestedSchema":{"type":"object",
                "properties":{"ok":{"type":"boolean","title":"Delete it?"}}}}),
            // A LangGraph interrupt: the action's arguments are in the Accept's description.
            json!({"action_request":{"action":"send_email","args":{"to":"ops@example.com"}},
                   "config":{"allow_accept":true,"allow_ignore":true}}),
            json!({"priority":"high","questions":[{"type":"yes_no","question":"Deploy?"}]}),
            json!({"priority":"critical","questions":[{"type":"yes_no","question":"Deploy?"}]}),
        ] {
            assert!(
                answer_buttons(&announced(json.clone())).is_empty(),
                "{json}"
            );
        }
    }
}
