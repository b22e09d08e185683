//! The tool's result: the outcome as structured content (with its schema) and as text a
//! model reads right, whatever the status.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use inbox_client::{Outcome, OutcomeStatus, Problem, Reply};
use inbox_protocol::{Question, QuestionKind, Request};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// What `ask_operator` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AskOperatorOutput {
    /// The request's id in the operator's inbox.
    pub id: String,
    /// `answered`: the operator answered; use `answers`. `defaulted`: nobody answered, the
    /// defaults you gave were used (autonomous mode or expiry); use `answers`. `declined`:
    /// the operator refused, see `reason`; do not go ahead. `expired`: nobody answered in
    /// time and defaults could not cover every required question; not a yes. `rejected`:
    /// the inbox found the request invalid, see `errors`. `cancelled`: the request was
    /// withdrawn before it was answered; there is no answer.
    pub status: Status,
    /// Question id to answer: true/false for yes_no, the chosen label (or the operator's own
    /// words) for single_choice, a list of those for multi_choice, a string for free_text. A
    /// skipped optional question without a default is absent. Empty unless answered or
    /// defaulted.
    pub answers: BTreeMap<String, Value>,
    /// Ids of questions whose answer holds the operator's own words instead of (or, for
    /// multi_choice, besides) your choices.
    pub custom: Vec<String>,
    /// Ids of questions whose answer is the default you gave, not the operator's choice.
    pub defaulted: Vec<String>,
    /// Remarks the operator added, by question id.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
    /// Why the operator declined, why the request expired, or why it was withdrawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Who settled it: `operator:<name>`, or `policy:autonomous` / `policy:expiry` when the
    /// inbox did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// When it was settled (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_at: Option<String>,
    /// For `rejected`: what was wrong, each with a JSON pointer into the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<Problem>>,
    /// Where the server did otherwise than the call asked, and why (e.g. a `mode` it does
    /// not allow).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

// No doc comment per variant: that would turn the schema's `enum` into a `oneOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Answered,
    Defaulted,
    Declined,
    Expired,
    Rejected,
    Cancelled,
}

/// The output schema advertised for the tool.
pub fn schema() -> Arc<JsonObject> {
    rmcp::handler::server::tool::schema_for_output::<AskOperatorOutput>()
}

/// The status `ask_operator_wait` returns while nobody has settled the request.
pub const PENDING: &str = "pending";

/// The output schema of `ask_operator_wait`: `ask_operator`'s, with one more status,
/// `pending`.
pub fn wait_schema() -> Arc<JsonObject> {
    let mut schema = schema();
    let object = Arc::make_mut(&mut schema);
    if let Some(Value::Array(statuses)) = object
        .get_mut("$defs")
        .and_then(|defs| defs.get_mut("Status"))
        .and_then(|status| status.get_mut("enum"))
    {
        statuses.push(Value::from(PENDING));
    }
    if let Some(Value::String(description)) = object
        .get_mut("properties")
        .and_then(|properties| properties.get_mut("status"))
        .and_then(|status| status.get_mut("description"))
    {
        description.push_str(
            " `pending`: nobody has settled it yet; call ask_operator_wait again with the same \
             request_id.",
        );
    }
    schema
}

/// What `ask_operator_start` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StartOutput {
    /// The request's id: pass it to ask_operator_wait.
    pub request_id: String,
    /// Where the server did otherwise than the call asked, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// The output schema of `ask_operator_start`.
pub fn start_schema() -> Arc<JsonObject> {
    rmcp::handler::server::tool::schema_for_output::<StartOutput>()
}

/// The result of `ask_operator_start`: the request id, and what to do with it.
pub fn started(output: &StartOutput, longest_wait: std::time::Duration) -> CallToolResult {
    let id = &output.request_id;
    let mut text = format!(
        "Asked the operator (request {id}); nobody has answered yet. Call ask_operator_wait \
         with {{\"request_id\": \"{id}\"}} to get the answer: each call waits up to {} s and \
         returns status \"pending\" while nobody has answered, so call it again until it \
         returns the outcome. The request stays in the operator's inbox meanwhile.",
        longest_wait.as_secs()
    );
    for notice in &output.notices {
        let _ = write!(text, "\nNote: {notice}");
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content =
        Some(serde_json::to_value(output).expect("the output is plain JSON"));
    result
}

/// The result of `ask_operator_wait` for a request nobody has settled yet.
pub fn pending(id: &str) -> CallToolResult {
    let text = format!(
        "Request {id} is still pending: nobody has answered yet. Call ask_operator_wait again \
         with {{\"request_id\": \"{id}\"}}; do not go ahead as if answered."
    );
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(serde_json::json!({
        "id": id,
        "status": PENDING,
        "answers": {},
        "custom": [],
        "defaulted": [],
    }));
    result
}

impl AskOperatorOutput {
    /// The output for a request that was settled or withdrawn.
    pub fn new(reply: &Reply) -> Option<AskOperatorOutput> {
        match reply {
            Reply::Settled(outcome) => Some(AskOperatorOutput::settled(outcome)),
            Reply::CancelledByAsker { id, reason } => Some(AskOperatorOutput {
                id: id.clone(),
                status: Status::Cancelled,
                answers: BTreeMap::new(),
                custom: Vec::new(),
                defaulted: Vec::new(),
                notes: BTreeMap::new(),
                reason: reason.clone(),
                answered_by: None,
                answered_at: None,
                errors: None,
                notices: Vec::new(),
            }),
            // The tool waits without a timeout of its own.
            Reply::TimedOut { .. } => None,
        }
    }

    fn settled(outcome: &Outcome) -> AskOperatorOutput {
        // An expired outcome may carry the defaults it could fill; they are not a decision,
        // and the schema promises no answers unless answered or defaulted.
        let decided = matches!(
            outcome.status,
            OutcomeStatus::Answered | OutcomeStatus::Defaulted
        );
        let if_decided = |ids: &Vec<String>| if decided { ids.clone() } else { Vec::new() };
        AskOperatorOutput {
            id: outcome.id.clone(),
            status: match outcome.status {
                OutcomeStatus::Answered => Status::Answered,
                OutcomeStatus::Defaulted => Status::Defaulted,
                OutcomeStatus::Declined => Status::Declined,
                OutcomeStatus::Expired => Status::Expired,
                OutcomeStatus::Rejected => Status::Rejected,
            },
            answers: if decided {
                outcome.answers.clone()
            } else {
                BTreeMap::new()
            },
            custom: if_decided(&outcome.custom),
            defaulted: if_decided(&outcome.defaulted),
            notes: outcome.notes.clone().unwrap_or_default(),
            reason: outcome.reason.clone(),
            answered_by: Some(outcome.answered_by.clone()),
            answered_at: Some(outcome.answered_at.to_rfc3339()),
            errors: outcome.errors.clone(),
            notices: Vec::new(),
        }
    }

    /// The output with what the server did otherwise than the call asked.
    pub fn with_notices(mut self, notices: Vec<String>) -> AskOperatorOutput {
        self.notices = notices;
        self
    }
}

/// The tool result: structured content and its reading as text.
pub fn result(request: &Request, output: &AskOperatorOutput) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text(request, output))]);
    result.structured_content =
        Some(serde_json::to_value(output).expect("the output is plain JSON"));
    result
}

/// A tool error: the question was not asked, or its outcome could not be learnt.
pub fn error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The tool error for invalid arguments to `tool`, naming every problem.
pub fn invalid(tool: &str, problems: &[Problem]) -> CallToolResult {
    let mut text = format!(
        "The question was not asked: the arguments have problems (each with a JSON pointer \
         into the arguments). Fix them and call {tool} again."
    );
    for problem in problems {
        let _ = write!(text, "\n- {problem}");
    }
    error(text)
}

/// The outcome in words: the status first and what it means for going on, then each answer
/// next to its question.
pub fn text(request: &Request, output: &AskOperatorOutput) -> String {
    let by = output
        .answered_by
        .as_deref()
        .map(|by| format!(" ({by})"))
        .unwrap_or_default();
    let reason = output
        .reason
        .as_deref()
        .filter(|r| !r.trim().is_empty())
        .map(quoted);
    let mut text = match output.status {
        Status::Answered => format!("The operator answered{by}:"),
        Status::Defaulted => format!(
            "Nobody chose these answers: the defaults you gave were used{by}. Go on with them:"
        ),
        Status::Declined => format!(
            "The operator DECLINED this request{by}{}. Do not go ahead with what you asked \
             about; tell the user, or change your approach if the reason says how.",
            reason.map(|r| format!(", saying: {r}")).unwrap_or_default()
        ),
        Status::Expired => format!(
            "Nobody answered before the request expired{}. This is not a refusal, but not an \
             approval either: do not go ahead as if approved.",
            reason.map(|r| format!(" ({r})")).unwrap_or_default()
        ),
        Status::Rejected => {
            let mut text = String::from("The inbox rejected the request as invalid:");
            for problem in output.errors.iter().flatten() {
                let _ = write!(text, "\n- {problem}");
            }
            text
        }
        Status::Cancelled => format!(
            "The request was withdrawn before anyone answered{}; there is no answer.",
            reason.map(|r| format!(": {r}")).unwrap_or_default()
        ),
    };
    if matches!(output.status, Status::Answered | Status::Defaulted) {
        for question in &request.questions {
            let answer = match output.answers.get(&question.id) {
                Some(value) => answer_text(question, value, output.custom.contains(&question.id)),
                None => "(skipped, no answer)".to_owned(),
            };
            let defaulted =
                if output.defaulted.contains(&question.id) && output.status == Status::Answered {
                    " (your default)"
                } else {
                    ""
                };
            let _ = write!(
                text,
                "\n- {} → {answer}{defaulted}",
                one_line(&question.question)
            );
            if let Some(note) = output.notes.get(&question.id) {
                let _ = write!(text, "\n  Their note: {}", quoted(note));
            }
        }
        let _ = write!(
            text,
            "\nThe answers by question id are in the structured result (request {}).",
            output.id
        );
    } else {
        let _ = write!(text, "\n(request {})", output.id);
    }
    for notice in &output.notices {
        let _ = write!(text, "\nNote: {notice}");
    }
    text
}

/// One answer in words: Yes/No, choice labels, and the operator's own words marked as such.
fn answer_text(question: &Question, value: &Value, custom: bool) -> String {
    let item = |value: &Value| match value {
        Value::String(text) if question.kind.has_choices() => match question.choice(text) {
            Some(choice) => choice.label.clone(),
            None if custom => format!("their own words: {}", quoted(text)),
            None => text.clone(),
        },
        Value::String(text) => quoted(text),
        Value::Bool(true) => "Yes".to_owned(),
        Value::Bool(false) => "No".to_owned(),
        other => other.to_string(),
    };
    match value {
        Value::Array(items) if question.kind == QuestionKind::MultiChoice => {
            if items.is_empty() {
                "(none chosen)".to_owned()
            } else {
                items.iter().map(item).collect::<Vec<_>>().join(", ")
            }
        }
        value => item(value),
    }
}

/// Text from the operator in quotes, on one line, so it cannot pass for the tool's own words.
fn quoted(text: &str) -> String {
    format!("\"{}\"", one_line(text).replace('"', "\\\""))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> Request {
        inbox_protocol::parse_request(
            br#"{"inbox": 1, "questions": [
              {"id": "go", "type": "yes_no", "question": "Deploy?"},
              {"id": "db", "type": "single_choice", "question": "Database?",
               "choices": [{"id": "PostgreSQL", "label": "PostgreSQL"}, {"id": "SQLite", "label": "SQLite"}]},
              {"id": "tags", "type": "multi_choice", "question": "Tags?", "required": false,
               "choices": [{"id": "a", "label": "a"}]},
              {"id": "why", "type": "free_text", "question": "Why?", "required": false}]}"#,
            None,
        )
        .unwrap()
    }

    fn outcome(status: OutcomeStatus) -> Outcome {
        Outcome::new("r1", status, "operator:alice", "host/1", chrono::Utc::now())
    }

    #[test]
    fn answers_read_next_to_their_questions() {
        let mut outcome = outcome(OutcomeStatus::Answered);
        outcome.answers = BTreeMap::from([
            ("go".into(), json!(true)),
            ("db".into(), json!("MariaDB, as agreed")),
            ("tags".into(), json!(["a", "b"])),
        ]);
        outcome.custom = vec!["db".into(), "tags".into()];
        outcome.notes = Some(BTreeMap::from([("go".into(), "after 6pm".into())]));
        let output = AskOperatorOutput::new(&Reply::Settled(outcome)).unwrap();
        let text = text(&request(), &output);
        assert!(
            text.starts_with("The operator answered (operator:alice):"),
            "{text}"
        );
        assert!(
            text.contains("- Deploy? → Yes\n  Their note: \"after 6pm\""),
            "{text}"
        );
        assert!(
            text.contains("- Database? → their own words: \"MariaDB, as agreed\""),
            "{text}"
        );
        assert!(
            text.contains("- Tags? → a, their own words: \"b\""),
            "{text}"
        );
        assert!(text.contains("- Why? → (skipped, no answer)"), "{text}");
        let value = serde_json::to_value(&output).unwrap();
        assert_eq!(value["status"], "answered");
        assert_eq!(value["answers"]["go"], true);
        assert_eq!(value["custom"], json!(["db", "tags"]));
    }

    /// Choices given with ids (crush's shape) are answered by id; the text shows the label
    /// the operator saw.
    #[test]
    fn choices_with_ids_are_answered_by_id_and_read_by_label() {
        let request = inbox_protocol::parse_request(
            br#"{"inbox": 1, "questions": [
              {"id": "db", "type": "single_choice", "question": "Database?",
               "choices": [{"id": "pg", "label": "PostgreSQL"}, {"id": "lite", "label": "SQLite"}]},
              {"id": "tags", "type": "multi_choice", "question": "Tags?",
               "choices": [{"id": "a", "label": "Alpha"}, {"id": "b", "label": "Beta"}]}]}"#,
            None,
        )
        .unwrap();
        let mut answered = outcome(OutcomeStatus::Answered);
        answered.answers = BTreeMap::from([
            ("db".into(), json!("pg")),
            ("tags".into(), json!(["a", "b"])),
        ]);
        let output = AskOperatorOutput::new(&Reply::Settled(answered)).unwrap();
        let value = serde_json::to_value(&output).unwrap();
        assert_eq!(value["answers"], json!({"db": "pg", "tags": ["a", "b"]}));
        let said = text(&request, &output);
        assert!(said.contains("- Database? → PostgreSQL"), "{said}");
        assert!(said.contains("- Tags? → Alpha, Beta"), "{said}");
    }

    #[test]
    fn other_statuses_say_what_they_mean_for_going_on() {
        let declined = outcome(OutcomeStatus::Declined).with_reason("change \"freeze\"");
        let output = AskOperatorOutput::new(&Reply::Settled(declined)).unwrap();
        let text_of = |output: &AskOperatorOutput| text(&request(), output);
        let declined = text_of(&output);
        assert!(declined.contains("DECLINED"), "{declined}");
        assert!(
            declined.contains("saying: \"change \\\"freeze\\\"\""),
            "{declined}"
        );
        assert!(declined.contains("Do not go ahead"), "{declined}");
        assert!(
            !declined.contains("Deploy?"),
            "no answers listed: {declined}"
        );

        // The defaults expiry could fill are not a decision: no answers are passed on.
        let mut expired = outcome(OutcomeStatus::Expired);
        expired.answers = BTreeMap::from([("why".into(), json!("because"))]);
        expired.defaulted = vec!["why".into()];
        let output = AskOperatorOutput::new(&Reply::Settled(expired)).unwrap();
        assert!(output.answers.is_empty() && output.defaulted.is_empty());
        let expired = text_of(&output);
        assert!(expired.contains("not an approval"), "{expired}");

        let cancelled = Reply::CancelledByAsker {
            id: "r1".into(),
            reason: Some("gone".into()),
        };
        let output = AskOperatorOutput::new(&cancelled).unwrap();
        assert_eq!(output.status, Status::Cancelled);
        assert!(text_of(&output).contains("withdrawn before anyone answered: \"gone\""));
        assert!(AskOperatorOutput::new(&Reply::TimedOut { id: "r1".into() }).is_none());
    }

    /// What the server did otherwise than asked comes after the outcome, in both readings.
    #[test]
    fn notices_are_said_after_the_outcome() {
        let output = AskOperatorOutput::new(&Reply::Settled(outcome(OutcomeStatus::Answered)))
            .unwrap()
            .with_notices(vec!["mode was not honoured".into()]);
        let said = text(&request(), &output);
        assert!(
            said.starts_with("The operator answered")
                && said.ends_with("\nNote: mode was not honoured"),
            "{said}"
        );
        let value = serde_json::to_value(&output).unwrap();
        assert_eq!(value["notices"], json!(["mode was not honoured"]));
        let plain =
            AskOperatorOutput::new(&Reply::Settled(outcome(OutcomeStatus::Answered))).unwrap();
        assert!(serde_json::to_value(&plain)
            .unwrap()
            .get("notices")
            .is_none());
        assert!(!text(&request(), &plain).contains("Note:"));
    }

    #[test]
    fn every_kind_of_output_matches_the_advertised_schema() {
        let schema = Value::Object((*schema()).clone());
        let validator = jsonschema::options().build(&schema).unwrap();
        let mut answered = outcome(OutcomeStatus::Answered);
        answered.answers = BTreeMap::from([("go".into(), json!(true))]);
        answered.notes = Some(BTreeMap::from([("go".into(), "ok".into())]));
        let mut rejected = outcome(OutcomeStatus::Rejected);
        rejected.errors = Some(vec![Problem::new("/questions", "missing")]);
        let replies = [
            Reply::Settled(answered),
            Reply::Settled(outcome(OutcomeStatus::Declined).with_reason("no")),
            Reply::Settled(rejected),
            Reply::CancelledByAsker {
                id: "r1".into(),
                reason: None,
            },
        ];
        for (index, reply) in replies.into_iter().enumerate() {
            let mut output = AskOperatorOutput::new(&reply).unwrap();
            if index == 0 {
                output =
                    output.with_notices(vec!["\"mode\": \"autonomous\" was not honoured".into()]);
            }
            let value = result(&request(), &output).structured_content.unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{value}: {errors:?}");
        }
    }

    /// `pending` is ask_operator_wait's alone, and its pending result fits its schema.
    #[test]
    fn only_the_wait_schema_has_pending_and_a_pending_result_fits_it() {
        let plain = Value::Object((*schema()).clone());
        assert!(!plain.to_string().contains("\"pending\""), "{plain}");
        let wait = Value::Object((*wait_schema()).clone());
        assert!(
            wait["$defs"]["Status"]["enum"]
                .as_array()
                .unwrap()
                .contains(&json!("pending")),
            "{wait:#}"
        );
        assert!(
            wait["properties"]["status"]["description"]
                .as_str()
                .unwrap()
                .contains("`pending`"),
            "{wait:#}"
        );
        let validator = jsonschema::options().build(&wait).unwrap();
        let result = pending("r1");
        let value = result.structured_content.clone().unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{value}: {errors:?}");
        assert_eq!(value["status"], "pending");
        let said = result
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .map(|t| t.text.clone())
            .collect::<String>();
        assert!(said.contains("Call ask_operator_wait again"), "{said}");

        let started = started(
            &StartOutput {
                request_id: "r1".into(),
                notices: Vec::new(),
            },
            std::time::Duration::from_secs(50),
        );
        let value = started.structured_content.unwrap();
        let validator = jsonschema::options()
            .build(&Value::Object((*start_schema()).clone()))
            .unwrap();
        assert!(validator.is_valid(&value), "{value}");
        assert_eq!(value, json!({"request_id": "r1"}));
    }

    #[test]
    fn the_output_schema_lists_every_status() {
        let schema = Value::Object((*schema()).clone());
        let text = schema.to_string();
        for status in [
            "answered",
            "defaulted",
            "declined",
            "expired",
            "rejected",
            "cancelled",
        ] {
            assert!(text.contains(&format!("\"{status}\"")), "{status}: {text}");
        }
        assert_eq!(schema["type"], "object");
    }
}
