//! LangChain's HumanInTheLoopMiddleware: the interrupt value `{"action_requests": [{"name",
//! "args", "description"}], "review_configs": [{"action_name", "allowed_decisions",
//! "args_schema"}]}` (LangChain's HITLRequest), resumed with `{"decisions": [...]}` (its
//! HITLResponse), one decision per action request, in order.
//!
//! Action request `n` (counted from 1) becomes up to three questions: `decision-n`, a single
//! choice of the decisions its tool allows (approve, edit, reject, respond: the choice ids
//! are LangChain's decision types); `args-n`, the arguments as JSON text to edit (when editing
//! is allowed; the current arguments are its default, and the answer must be a JSON object);
//! `message-n`, the text for the agent (when rejecting or responding is allowed: optional for
//! a rejection, required for a response). A tool's allowed decisions come from the review
//! config that names it, as the middleware itself looks them up.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::answers::JSON_OBJECT_PATTERN;
use crate::dialects::{cut, json_text, text_question};
use crate::limits::{
    MAX_ANSWER_CHARS, MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS, MAX_QUESTIONS, MAX_TITLE_CHARS,
};
use crate::model::{
    Choice, Dialect, Origin, Question, QuestionKind, QuestionType, Request, RequiredIf, Rules,
    TextFormat,
};
use crate::ordered::Ordered;
use crate::outcome::{Outcome, OutcomeStatus};
use crate::problem::Problem;
use crate::wire::{HitlActionRequest, HitlDecisionType, HitlRequest};
use crate::wording::short;

/// The question that asks action `n`'s decision (`n` counts from 1).
pub(crate) fn decision_id(n: usize) -> String {
    format!("decision-{n}")
}

/// The question that asks action `n`'s edited arguments.
pub(crate) fn args_id(n: usize) -> String {
    format!("args-{n}")
}

/// The question that asks action `n`'s message: a rejection's reason or a response.
pub(crate) fn message_id(n: usize) -> String {
    format!("message-{n}")
}

/// What the agent is told of every action when nobody decided in time. Fixed text, not the
/// outcome's reason: that names question ids, which mean nothing to the model.
const EXPIRED_MESSAGE: &str = "Nobody decided on this tool call before the request expired.";

pub(crate) fn normalise(
    value: &Value,
    bytes: &[u8],
    request: &mut Request,
    problems: &mut Vec<Problem>,
) {
    // Structure problems were reported by the schema pass.
    let Ok(hitl) = HitlRequest::deserialize(value) else {
        return;
    };
    let allowed_by_tool = allowed_decisions(&hitl, problems);
    let ordered = Ordered::read(bytes);
    let count = hitl.action_requests.len();
    let mut actions = Vec::with_capacity(count);
    for (index, action) in hitl.action_requests.iter().enumerate() {
        let at = format!("/action_requests/{index}");
        actions.push(action.name.clone());
        let Some((_, allowed)) = allowed_by_tool.get(action.name.as_str()) else {
            problems.push(Problem::new(
                format!("{at}/name"),
                format!(
                    "no review config names \"{}\"; add one to review_configs with the \
                     decisions its tool allows",
                    short(&action.name)
                ),
            ));
            continue;
        };
        let args = ordered
            .as_ref()
            .and_then(|o| o.pointer(&format!("{at}/args")))
            .map(|args| (json_text(args, false), json_text(args, true)))
            .unwrap_or_else(|| {
                (
                    json_text(&action.args, false),
                    json_text(&action.args, true),
                )
            });
        let asked = Asked {
            n: index + 1,
            count,
            action,
            allowed,
            compact: args.0,
            pretty: args.1,
            at: &at,
        };
        asked.push_questions(request, problems);
    }
    if request.questions.len() > MAX_QUESTIONS {
        problems.push(Problem::new(
            "/action_requests",
            format!(
                "the {count} action requests make {} questions, over the limit of \
                 {MAX_QUESTIONS}; ask about fewer tool calls at once",
                request.questions.len()
            ),
        ));
    }
    if count > 1 {
        let names: Vec<&str> = actions.iter().map(String::as_str).collect();
        request.title = Some(cut(
            &format!("The agent wants to run {count} tools: {}", names.join(", ")),
            MAX_TITLE_CHARS,
        ));
    }
    request.origin = Some(Origin::LangChainHitl { actions });
}

/// Each tool's allowed decisions (without repeats, in the order given) and the index of the
/// review config that gave them. A review config must name a tool that is asked about, and
/// two configs for one tool must allow the same decisions: the middleware looks a decision
/// up by the tool's name, so a second, different config could not mean anything.
fn allowed_decisions<'a>(
    hitl: &'a HitlRequest,
    problems: &mut Vec<Problem>,
) -> BTreeMap<&'a str, (usize, Vec<HitlDecisionType>)> {
    let mut by_tool: BTreeMap<&str, (usize, Vec<HitlDecisionType>)> = BTreeMap::new();
    for (index, config) in hitl.review_configs.iter().enumerate() {
        let at = format!("/review_configs/{index}");
        let name = config.action_name.as_str();
        if !hitl
            .action_requests
            .iter()
            .any(|action| action.name == name)
        {
            problems.push(Problem::new(
                format!("{at}/action_name"),
                format!(
                    "no action request is named \"{}\"; a review config is for a tool in \
                     action_requests",
                    short(name)
                ),
            ));
            continue;
        }
        let mut allowed = Vec::new();
        for decision in &config.allowed_decisions {
            if !allowed.contains(decision) {
                allowed.push(*decision);
            }
        }
        match by_tool.get(name) {
            Some((first, earlier)) if *earlier != allowed => problems.push(Problem::new(
                format!("{at}/allowed_decisions"),
                format!(
                    "review config {first} allows other decisions for \"{}\"; the configs \
                     of one tool must agree",
                    short(name)
                ),
            )),
            Some(_) => {}
            None => {
                by_tool.insert(name, (index, allowed));
            }
        }
    }
    by_tool
}

/// One action request, being turned into its questions.
struct Asked<'a> {
    /// Its position, from 1: the suffix of its question ids.
    n: usize,
    /// How many actions the request holds.
    count: usize,
    action: &'a HitlActionRequest,
    allowed: &'a [HitlDecisionType],
    /// Its arguments as JSON, on one line and pretty-printed, keys in the asker's order.
    compact: String,
    pretty: String,
    /// Its pointer, `/action_requests/<index>`.
    at: &'a str,
}

impl Asked<'_> {
    fn push_questions(&self, request: &mut Request, problems: &mut Vec<Problem>) {
        let name = &self.action.name;
        let allows = |decision| self.allowed.contains(&decision);
        let several = self.count > 1;
        let numbered = |word: &str| {
            if several {
                format!("{word} {}", self.n)
            } else {
                word.to_owned()
            }
        };

        let choices = self
            .allowed
            .iter()
            .map(|decision| self.choice(*decision))
            .collect();
        let label = if several {
            cut(&format!("{}. {name}", self.n), MAX_LABEL_CHARS)
        } else {
            "Decision".to_owned()
        };
        let question = if several {
            format!(
                "Tool call {} of {}: the agent wants to run {name}. What do you decide?",
                self.n, self.count
            )
        } else {
            format!("The agent wants to run {name}. What do you decide?")
        };
        request.questions.push(Question {
            id: decision_id(self.n),
            kind: QuestionKind::Choice,
            wire_type: QuestionType::SingleChoice,
            dialect: Dialect::Structured,
            question,
            description: self.description(problems),
            label: Some(label),
            choices,
            // No default, so no policy decides for the operator.
            default: None,
            required: true,
            pattern: None,
            allow_custom: false,
            rules: Rules::default(),
        });

        if allows(HitlDecisionType::Edit) {
            // The operator edits the current arguments; too long to edit is refused here
            // rather than offered as an edit nobody could submit.
            let default = [&self.pretty, &self.compact]
                .into_iter()
                .find(|text| text.chars().count() <= MAX_ANSWER_CHARS)
                .cloned();
            if default.is_none() {
                problems.push(Problem::new(
                    format!("{}/args", self.at),
                    format!(
                        "the arguments are over {MAX_ANSWER_CHARS} characters as JSON, too long \
                         to edit as an answer; shorten them or leave edit out of the tool's \
                         allowed_decisions"
                    ),
                ));
            }
            request.questions.push(Question {
                id: args_id(self.n),
                label: Some(numbered("Arguments")),
                question: format!(
                    "Arguments for {name}, as a JSON object (used if you choose Edit)"
                ),
                default: default.map(Value::String),
                // A hint for forms that check as the operator types; the rule is the real
                // check.
                pattern: Some(JSON_OBJECT_PATTERN.into()),
                rules: Rules {
                    format: Some(TextFormat::JsonObject),
                    required_if: Some(self.chosen(HitlDecisionType::Edit)),
                    ..Rules::default()
                },
                ..text_question()
            });
        }

        let rejects = allows(HitlDecisionType::Reject);
        let responds = allows(HitlDecisionType::Respond);
        if rejects || responds {
            let question = match (rejects, responds) {
                (true, true) => format!(
                    "Your message to the agent: why you reject {name} (optional), or the \
                     result to give it in place of running {name} (if you choose Respond)"
                ),
                (true, false) => format!(
                    "Why you reject {name}, for the agent (optional; used if you choose Reject)"
                ),
                _ => format!(
                    "The result to give the agent in place of running {name} (used if you \
                     choose Respond)"
                ),
            };
            request.questions.push(Question {
                id: message_id(self.n),
                label: Some(numbered("Message")),
                question,
                rules: Rules {
                    // A rejection's reason is optional; a response is the whole answer.
                    required_if: responds.then(|| self.chosen(HitlDecisionType::Respond)),
                    ..Rules::default()
                },
                ..text_question()
            });
        }
    }

    /// The decision's description: the action's own, then every argument. The operator must
    /// see all of them before approving: pretty if it fits, else compact; arguments too long
    /// for either are refused, never shown cut.
    fn description(&self, problems: &mut Vec<Problem>) -> Option<String> {
        let own = self
            .action
            .description
            .as_deref()
            .filter(|text| !text.trim().is_empty());
        let full = [&self.pretty, &self.compact]
            .into_iter()
            .map(|args| {
                let shown = format!("Arguments:\n\n{}", code_block(args));
                match own {
                    Some(own) => format!("{own}\n\n{shown}"),
                    None => shown,
                }
            })
            .find(|text| text.chars().count() <= MAX_DESCRIPTION_CHARS);
        if full.is_none() {
            problems.push(Problem::new(
                format!("{}/args", self.at),
                format!(
                    "the description and the arguments as JSON are over \
                     {MAX_DESCRIPTION_CHARS} characters together, too long to show the \
                     operator in full before they decide; shorten them"
                ),
            ));
        }
        full
    }

    fn choice(&self, decision: HitlDecisionType) -> Choice {
        let name = &self.action.name;
        let (id, label, description) = match decision {
            HitlDecisionType::Approve => (
                "approve",
                "Approve",
                format!("Run {name} with the arguments shown."),
            ),
            HitlDecisionType::Edit => (
                "edit",
                "Edit",
                format!("Run {name} with the arguments you give."),
            ),
            HitlDecisionType::Reject => (
                "reject",
                "Reject",
                format!("Do not run {name}; your message, if any, tells the agent why."),
            ),
            HitlDecisionType::Respond => (
                "respond",
                "Respond",
                format!("Do not run {name}; your message is given to the agent as its result."),
            ),
        };
        Choice {
            id: id.into(),
            label: label.into(),
            description: Some(description),
        }
    }

    /// "Required when this action's decision is `decision`".
    fn chosen(&self, decision: HitlDecisionType) -> RequiredIf {
        RequiredIf {
            question: decision_id(self.n),
            equals: json!(decision),
        }
    }
}

/// `text` in a fenced code block whose fence is longer than any run of backticks in it, so
/// arguments holding "```" cannot close the block and be read as markdown.
fn code_block(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}json\n{text}\n{fence}")
}

/// LangChain's HITLResponse: `{"decisions": [...]}`, one per action, in order. A declined
/// request rejects every action with the operator's reason as its message; an expired one
/// rejects every action too: the agent must not act, and a rejection is the only decision
/// that says so.
pub(crate) fn reply(actions: &[String], outcome: &Outcome) -> Value {
    let decisions: Vec<Value> = match outcome.status {
        OutcomeStatus::Answered | OutcomeStatus::Defaulted => actions
            .iter()
            .enumerate()
            .map(|(index, name)| decided(index + 1, name, &outcome.answers))
            .collect(),
        OutcomeStatus::Declined => actions
            .iter()
            .map(|_| reject(outcome.reason.as_deref()))
            .collect(),
        OutcomeStatus::Expired => actions
            .iter()
            .map(|_| reject(Some(EXPIRED_MESSAGE)))
            .collect(),
        // Not reached: dialect_reply gives no reply for rejected requests.
        OutcomeStatus::Rejected => actions.iter().map(|_| reject(None)).collect(),
    };
    json!({ "decisions": decisions })
}

/// Action `n`'s decision, from the operator's answers.
fn decided(n: usize, name: &str, answers: &BTreeMap<String, Value>) -> Value {
    let text = |id: String| answers.get(&id).and_then(Value::as_str);
    let message = text(message_id(n)).filter(|message| !message.is_empty());
    match text(decision_id(n)) {
        Some("approve") => json!({"type": "approve"}),
        Some("edit") => {
            // Checked to be a JSON object when answered; the default is the original.
            let args = text(args_id(n))
                .and_then(|text| serde_json::from_str::<Map<String, Value>>(text).ok());
            match args {
                Some(args) => {
                    json!({"type": "edit", "edited_action": {"name": name, "args": args}})
                }
                // Only an outcome some other writer made can get here: the edit cannot be
                // carried out as asked, so nothing is run.
                None => reject(None),
            }
        }
        Some("respond") => json!({"type": "respond", "message": message.unwrap_or_default()}),
        // A rejection, and (only from some other writer) no decision at all: nothing is run.
        _ => reject(message),
    }
}

fn reject(message: Option<&str>) -> Value {
    match message {
        Some(message) => json!({"type": "reject", "message": message}),
        None => json!({"type": "reject"}),
    }
}
