//! Request dialects of other systems: MCP elicitation, Claude Code's AskUserQuestion,
//! LangGraph Agent Inbox's HumanInterrupt and LangChain's HumanInTheLoopMiddleware.
//!
//! Each module turns its dialect into the one model (called from [`crate::parse`], after the
//! schema pass) and turns an outcome back into that dialect's own answer shape, so an agent
//! gets back what its framework would have given it had a person answered in place.

pub(crate) mod ask_user;
pub(crate) mod elicitation;
pub(crate) mod interrupt;
pub(crate) mod langchain;

use serde_json::Value;

use crate::model::{Origin, Request};
use crate::outcome::{Outcome, OutcomeStatus};

impl Outcome {
    /// Sets `reply` from the request the outcome settles (see [`dialect_reply`]). Call it
    /// last, once status, answers and reason are final: the reply is computed from them.
    /// Here, not in `outcome.rs`: the outcome is plain data, and the dialects read it.
    pub fn with_reply(mut self, request: &Request) -> Outcome {
        self.reply = dialect_reply(request, &self);
        self
    }
}

/// The outcome in the request's own dialect, for the outcome's `reply` field: an MCP
/// ElicitResult, AskUserQuestion's `{"answers": ...}`, a LangGraph HumanResponse or a
/// LangChain HITLResponse.
///
/// `None` for the inbox's own dialects (their answer is the outcome itself) and for
/// `rejected` outcomes (a request that did not parse has no dialect). Pure: the same
/// request and outcome always give the same reply.
///
/// ```
/// use inbox_protocol::{dialect_reply, parse_request, Outcome, OutcomeStatus};
///
/// let body = br#"{"message": "Who reviews it?", "requestedSchema": {"type": "object",
///     "properties": {"reviewer": {"type": "string"}}, "required": ["reviewer"]}}"#;
/// let request = parse_request(body, Some("r1")).unwrap();
/// let declined = Outcome::new("r1", OutcomeStatus::Declined, "operator:ann", "h/i",
///     chrono::Utc::now()).with_reason("not now");
/// assert_eq!(dialect_reply(&request, &declined), Some(serde_json::json!({"action": "decline"})));
/// ```
pub fn dialect_reply(request: &Request, outcome: &Outcome) -> Option<Value> {
    let origin = request.origin.as_ref()?;
    if outcome.status == OutcomeStatus::Rejected {
        return None;
    }
    Some(match origin {
        Origin::Elicitation { fields } => elicitation::reply(fields, outcome),
        Origin::AskUserQuestion { questions } => ask_user::reply(questions, outcome),
        Origin::HumanInterrupt { action, list, .. } => interrupt::reply(action, *list, outcome),
        Origin::LangChainHitl { actions } => langchain::reply(actions, outcome),
    })
}

/// The first line of a text, cut to `max` characters: a title for a dialect that has only a
/// message. The message is markdown but a title is plain text (lists, notifications, the
/// window's heading), so the first line's text is read through a markdown parser: marks,
/// link targets and HTML go, a link's or code span's text stays, and `create_service` keeps
/// its underscore.
pub(crate) fn title_from(text: &str, max: usize) -> Option<String> {
    use pulldown_cmark::{Event, Parser, TagEnd};
    let mut plain = String::new();
    for event in Parser::new(text) {
        match event {
            Event::Text(part) | Event::Code(part) => plain.push_str(&part),
            // The first line ends the title, and so does the first block's end.
            Event::SoftBreak | Event::HardBreak => break,
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_)) => break,
            _ => {}
        }
        if plain.chars().count() > max {
            break;
        }
    }
    let plain = plain.trim();
    (!plain.is_empty()).then(|| cut(plain, max))
}

/// A free-text question with nothing filled in, for a dialect to set up (the agents'
/// dialects ask for edited arguments or a message this way).
pub(crate) fn text_question() -> crate::model::Question {
    use crate::model::{Dialect, Question, QuestionKind, QuestionType, Rules};
    Question {
        id: String::new(),
        kind: QuestionKind::Text,
        wire_type: QuestionType::FreeText,
        dialect: Dialect::Structured,
        question: String::new(),
        description: None,
        label: None,
        choices: Vec::new(),
        default: None,
        required: false,
        pattern: None,
        allow_custom: false,
        rules: Rules::default(),
    }
}

/// A value as JSON text, pretty or compact.
pub(crate) fn json_text<T: serde::Serialize>(value: &T, pretty: bool) -> String {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    text.expect("JSON values serialise")
}

/// `text` cut to at most `max` characters, marked with an ellipsis when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some(_) => {
            let keep: String = text.chars().take(max.saturating_sub(1)).collect();
            format!("{keep}…")
        }
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_lines_plain_text() {
        let title = |text: &str| title_from(text, 40);
        assert_eq!(
            title("Create the **billing** service.\n\nMore.").as_deref(),
            Some("Create the billing service.")
        );
        assert_eq!(
            title("## Run `create_service` on [prod](https://x.example)?").as_deref(),
            Some("Run create_service on prod?")
        );
        assert_eq!(
            title("> Quoted *first* line\n> second").as_deref(),
            Some("Quoted first line")
        );
        assert_eq!(
            title("\\*not emphasis\\*").as_deref(),
            Some("*not emphasis*")
        );
        assert_eq!(title("<b></b>"), None);
        assert_eq!(title(&"word ".repeat(20)).unwrap().chars().count(), 40);
    }
}
