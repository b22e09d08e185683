//! A tool-call decision: the shape an agent's permission prompt takes in the spool.
//!
//! `answer-inbox hook` places one request per tool call it asks about: a `choice` question
//! `decision` whose options begin with "Allow once" and "Deny" (then the agent's own
//! "don't ask again" rules, or the inbox's session allowance), followed by an optional `text`
//! question `reason` that is told to the agent when the call is denied. Any asker may write
//! the same shape. The agent's own prompt takes one key, so every surface that decides with
//! one key or one press (the window's reading pane, the full request view, the phone page,
//! desktop bubbles) recognises the shape here, in one place, and offers the same options in
//! the same order.
//!
//! Recognising it changes how few keys an answer takes, never what is shown or what is
//! sent: every option is listed whole with the question's description, and a one-key answer
//! is the same answers object the form would submit. So a crafted request in this shape gains
//! nothing a request in any other shape would not.

use crate::model::{QuestionKind, Request};

/// The decision question's id; the hook reads its answer back by this id.
pub const DECISION_ID: &str = "decision";
/// The first option: allow this one call.
pub const ALLOW_ONCE: &str = "Allow once";
/// The second option: refuse it (with the optional reason).
pub const DENY: &str = "Deny";
/// The optional text question whose answer is told to the agent when it is denied.
pub const REASON_ID: &str = "reason";

/// A request recognised as a tool-call decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolDecision {
    /// Whether the request asks for a reason on Deny (its second question).
    pub asks_reason: bool,
}

impl ToolDecision {
    /// The position of Deny among the decision's options.
    pub const DENY_INDEX: usize = 1;

    /// `request` as a tool-call decision, if it has exactly that shape: the decision question
    /// first (a choice of whole labels, Allow once and Deny first, nothing typed in, no
    /// default), then at most the optional reason (free text, no pattern, no default), and
    /// no confirmation screen (an asker that wants its answers reviewed gets the review).
    pub fn of(request: &Request) -> Option<ToolDecision> {
        if request.confirm_title.is_some() || request.confirm_description.is_some() {
            return None;
        }
        let (decision, rest) = request.questions.split_first()?;
        let starts_right = decision.choices.len() >= 2
            && decision.choices[0].id == ALLOW_ONCE
            && decision.choices[Self::DENY_INDEX].id == DENY;
        if decision.id != DECISION_ID
            || decision.kind != QuestionKind::Choice
            || decision.allow_custom
            || decision.default.is_some()
            || !decision.rules.is_empty()
            || !starts_right
            || decision.choices.iter().any(|c| c.description.is_some())
        {
            return None;
        }
        match rest {
            [] => Some(ToolDecision { asks_reason: false }),
            [reason]
                if reason.id == REASON_ID
                    && reason.kind == QuestionKind::Text
                    && !reason.required
                    && reason.default.is_none()
                    && reason.pattern.is_none()
                    && reason.rules.is_empty() =>
            {
                Some(ToolDecision { asks_reason: true })
            }
            _ => None,
        }
    }
}

#[cfg(all(test, feature = "validate"))]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn request(body: Value) -> Request {
        crate::parse_request(body.to_string().as_bytes(), Some("r")).expect("a valid request")
    }

    fn hook_shaped() -> Value {
        json!({
            "questions": [
                {"id": "decision", "question": "Allow Claude to use Bash?", "type": "choice",
                 "options": ["Allow once", "Deny", "Yes, and don't ask again for npm test"],
                 "description": "```sh\nnpm test\n```"},
                {"id": "reason", "question": "If you deny it: why?", "type": "text", "required": false}
            ]
        })
    }

    #[test]
    fn the_hooks_request_is_a_decision_with_a_reason() {
        assert_eq!(
            ToolDecision::of(&request(hook_shaped())),
            Some(ToolDecision { asks_reason: true })
        );
        let mut alone = hook_shaped();
        alone["questions"].as_array_mut().unwrap().pop();
        assert_eq!(
            ToolDecision::of(&request(alone)),
            Some(ToolDecision { asks_reason: false })
        );
    }

    /// One change to the hook's request, and what it is.
    type Edit<'a> = (&'a str, &'a dyn Fn(&mut Value));

    #[test]
    fn anything_else_is_not() {
        let changed = |edit: &dyn Fn(&mut Value)| {
            let mut body = hook_shaped();
            edit(&mut body);
            ToolDecision::of(&request(body))
        };
        let cases: [Edit; 9] = [
            ("options swapped", &|b| {
                b["questions"][0]["options"] = json!(["Deny", "Allow once"])
            }),
            ("another id", &|b| b["questions"][0]["id"] = json!("pick")),
            ("a default", &|b| {
                b["questions"][0]["default"] = json!("Allow once")
            }),
            ("a confirmation screen", &|b| {
                b["confirm_title"] = json!("Sure?")
            }),
            ("a required reason", &|b| {
                b["questions"][1]["required"] = json!(true)
            }),
            ("a reason with a pattern", &|b| {
                b["questions"][1]["pattern"] = json!("^x$")
            }),
            ("a third question", &|b| {
                b["questions"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"id": "more", "question": "More?", "type": "confirm"}))
            }),
            (
                "a confirm second",
                &|b| {
                    b["questions"][1] =
                        json!({"id": "reason", "question": "Why?", "type": "confirm"})
                },
            ),
            ("a multiple choice", &|b| {
                b["questions"][0]["type"] = json!("multiChoice")
            }),
        ];
        for (what, edit) in cases {
            assert_eq!(changed(edit), None, "{what}");
        }
    }
}
