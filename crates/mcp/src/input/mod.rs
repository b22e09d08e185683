//! The tool's input: its JSON Schema (what a model sees), and its translation into a request
//! in the protocol's structured dialect.
//!
//! The arguments are translated from raw JSON rather than deserialised into
//! [`AskOperatorInput`]: a wrong type or a missing field would then be a JSON-RPC error the
//! model may never see, where every problem should come back as one tool error with a
//! pointer, as `answer-inbox check` reports them. The input mirrors the request envelope, so
//! the protocol's own problem pointers (`/questions/0/choices`) point into the arguments too.
//!
//! `mode` is in both only where the operator allows autonomous mode ([`Autonomy`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use inbox_client::{prepare, AskError, Prepared};
use inbox_protocol::Problem;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::autonomy::{self, Autonomy};

/// The arguments of `ask_operator`. Only its schema is used (see the module's docs).
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // read as raw JSON; the fields document the schema
pub struct AskOperatorInput {
    /// A short title for the operator's inbox list, e.g. "Deploy billing 2.14 to
    /// production?". Defaults to the first question.
    #[schemars(length(max = 200))]
    pub title: Option<String>,
    /// The questions, asked together as one batch (1 to 50). Put related questions in one
    /// call rather than calling several times.
    #[schemars(length(min = 1, max = 50))]
    pub questions: Vec<QuestionInput>,
    /// Title of the review screen the operator sees after the last question.
    #[schemars(length(max = 200))]
    pub confirm_title: Option<String>,
    /// Markdown shown on that review screen, e.g. what happens once they confirm.
    #[schemars(length(max = 20000))]
    pub confirm_description: Option<String>,
    /// `interactive` (default): wait for the operator. `autonomous`: if every question has
    /// a `default`, the inbox answers at once with the defaults and nobody is interrupted.
    // Left out of the advertised schema unless the operator allows it (see `Autonomy`); not in
    // the doc comment, which is the description the model reads.
    pub mode: Option<ModeInput>,
    /// Seconds after which the request expires: questions with a `default` get it, and if
    /// a required question has none the result is `expired`. Without it the call waits
    /// until the operator answers. (Should no inbox be running to expire it, the call
    /// withdraws the request soon after and returns `cancelled`.)
    #[schemars(range(min = 1, max = 31536000))]
    pub timeout_seconds: Option<u64>,
    /// Ordering in the operator's inbox; `critical` also raises critical notifications.
    /// Default `normal`.
    pub priority: Option<PriorityInput>,
}

/// One question.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct QuestionInput {
    /// `yes_no` (answer: true/false), `single_choice` (one of `choices`), `multi_choice`
    /// (any of `choices`), `free_text` (a string).
    #[serde(rename = "type")]
    pub kind: QuestionType,
    /// The question itself, one sentence, e.g. "Deploy to production now?".
    #[schemars(length(min = 1, max = 2000))]
    pub question: String,
    /// Markdown with what the operator needs to decide: what will happen, the risks, the
    /// candidates found, what you recommend and why.
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
    /// For single_choice and multi_choice: the options, few (2 to 5) and concrete. The
    /// answer names the chosen option by its `id`, or by its label when it has none.
    #[schemars(length(max = 100))]
    pub choices: Option<Vec<ChoiceInput>>,
    /// A short tab label for this question in a batch, e.g. "Database".
    #[schemars(length(max = 64))]
    pub label: Option<String>,
    /// For choices: whether the operator may type their own answer instead. Default true.
    pub allow_custom: Option<bool>,
    /// The key of this question's answer. Default `q1`, `q2`, ... by position.
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"))]
    pub id: Option<String>,
    /// The answer to use if the operator skips the question or the request expires (and in
    /// autonomous mode, where offered): true/false for yes_no, a choice's id or label for
    /// single_choice, a list of those for multi_choice, a string for free_text.
    pub default: Option<Value>,
    /// Whether the operator must answer. Default true.
    pub required: Option<bool>,
}

/// One option of a choice question.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct ChoiceInput {
    /// What the answer contains when this option is chosen, e.g. "pg"; distinct within the
    /// question. Default: the label.
    #[schemars(length(min = 1, max = 128))]
    pub id: Option<String>,
    /// What the operator sees and picks, e.g. "PostgreSQL"; also the answer when the option
    /// has no `id`.
    #[schemars(length(min = 1, max = 500))]
    pub label: String,
    /// Markdown explaining this option: its consequences, costs, trade-offs.
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    YesNo,
    SingleChoice,
    MultiChoice,
    FreeText,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeInput {
    Interactive,
    Autonomous,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PriorityInput {
    Low,
    Normal,
    High,
    Critical,
}

/// The arguments of `ask_operator_wait`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitInput {
    /// The request_id ask_operator_start returned.
    pub request_id: String,
    /// How long this call waits for the outcome before it returns status `pending`: 0 to
    /// 50 seconds (more is taken as 50). Default 50. Keep it below your host's tool-call
    /// time limit.
    #[schemars(range(min = 0, max = 50))]
    pub wait_seconds: Option<u64>,
}

/// The input schema of `ask_operator_wait`.
pub fn wait_schema() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_input::<WaitInput>()
        .expect("the wait input has an object schema")
}

/// `ask_operator_wait`'s arguments, or what is wrong with them.
pub fn wait_input(arguments: &JsonObject) -> Result<WaitInput, String> {
    serde_json::from_value(Value::Object(arguments.clone())).map_err(|error| {
        format!(
            "The arguments of ask_operator_wait have a problem: {error}. Call it as \
             {{\"request_id\": \"<the id ask_operator_start returned>\", \"wait_seconds\": 50}}."
        )
    })
}

const REQUEST_KEYS: &[&str] = &[
    "title",
    "questions",
    "confirm_title",
    "confirm_description",
    "mode",
    "timeout_seconds",
    "priority",
];
const QUESTION_KEYS: &[&str] = &[
    "type",
    "question",
    "description",
    "choices",
    "label",
    "allow_custom",
    "id",
    "default",
    "required",
];
const CHOICE_KEYS: &[&str] = &["id", "label", "description"];
const TYPES: &[&str] = &["yes_no", "single_choice", "multi_choice", "free_text"];

/// The input schema advertised for the tool: without `mode` unless autonomous mode is
/// allowed.
pub fn schema(autonomy: Autonomy) -> Arc<JsonObject> {
    let mut schema = rmcp::handler::server::common::schema_for_input::<AskOperatorInput>()
        .expect("the input type has an object schema");
    if autonomy == Autonomy::Withheld {
        let schema = Arc::make_mut(&mut schema);
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.remove("mode");
        }
        if let Some(Value::Object(definitions)) = schema.get_mut("$defs") {
            definitions.remove("ModeInput");
        }
    }
    schema
}

/// The top-level fields a call may send.
fn request_keys(autonomy: Autonomy) -> Vec<&'static str> {
    REQUEST_KEYS
        .iter()
        .copied()
        .filter(|key| autonomy == Autonomy::Allowed || *key != "mode")
        .collect()
}

/// A call's request, ready to place.
#[derive(Debug)]
pub struct Translated {
    pub prepared: Prepared,
    /// What the server did otherwise than the call asked, for the model to read in the
    /// result (a `mode` it does not honour).
    pub notices: Vec<String>,
}

/// The request for these arguments, validated, with `source` filled in by the server; or
/// every problem, each pointing into the arguments.
pub fn prepare_request(
    arguments: &JsonObject,
    source: Value,
    autonomy: Autonomy,
) -> Result<Translated, Vec<Problem>> {
    let known = request_keys(autonomy);
    let mut problems = Vec::new();
    let mut notices = Vec::new();
    // The choices whose id is their label: the protocol's word on such an id is about the
    // label.
    let mut labelled = BTreeSet::new();
    let mut request = Map::new();
    request.insert("inbox".into(), json!(1));
    request.insert("source".into(), source);
    // The advertised schema makes every optional field nullable (serde's Option): null is
    // taken as "not given" at every level, as the schema promises.
    for (key, value) in arguments.iter().filter(|(_, value)| !value.is_null()) {
        if key == "mode" && autonomy == Autonomy::Withheld {
            // A model that sends `mode` although the schema does not offer it is not refused:
            // a refusal could end with the question never asked. The request is placed
            // interactive, so it reaches a person (said in the request file too), and the
            // model is told why.
            request.insert(key.clone(), json!("interactive"));
            if value != "interactive" {
                notices.push(autonomy::withheld_notice(value));
            }
        } else if !known.contains(&key.as_str()) {
            problems.push(unknown(String::new(), key, &known));
        } else if key == "questions" {
            request.insert(key.clone(), questions(value, &mut problems, &mut labelled));
        } else {
            request.insert(key.clone(), value.clone());
        }
    }
    // Pointers this translation already explained; the protocol's word on them would only
    // repeat it in terms of the other dialect (its list of eight question types).
    let explained: BTreeSet<String> = problems.iter().map(|p| p.pointer.clone()).collect();
    match prepare(Value::Object(request), None) {
        Ok(prepared) if problems.is_empty() => Ok(Translated { prepared, notices }),
        Ok(_) => Err(problems),
        Err(AskError::Invalid(found)) => {
            for problem in found
                .into_iter()
                .filter(|p| !explained.contains(&p.pointer))
                .filter_map(|problem| in_input_terms(problem, &labelled))
            {
                // A label's problem is also its id's (the id is made from it): say it once.
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
            Err(problems)
        }
        // No id is given and the body has none, so the id is a fresh ULID: nothing else can
        // fail, but say so rather than panic if that ever changes.
        Err(other) => Err(vec![Problem::new("", other.to_string())]),
    }
}

fn questions(value: &Value, problems: &mut Vec<Problem>, labelled: &mut BTreeSet<String>) -> Value {
    let Some(list) = value.as_array() else {
        // The protocol's schema names the problem.
        return value.clone();
    };
    let translated = list
        .iter()
        .enumerate()
        .map(|(index, question)| {
            let at = format!("/questions/{index}");
            let Some(fields) = question.as_object() else {
                return question.clone();
            };
            let mut out = Map::new();
            let type_known = fields
                .get("type")
                .is_none_or(|t| t.as_str().is_some_and(|t| TYPES.contains(&t)));
            for (key, value) in fields.iter().filter(|(_, value)| !value.is_null()) {
                if !QUESTION_KEYS.contains(&key.as_str()) {
                    problems.push(unknown(at.clone(), key, QUESTION_KEYS));
                    continue;
                }
                let translated = match key.as_str() {
                    // Choices and a default are checked against the type: with the type
                    // unknown, the only thing to say is that it is.
                    "choices" | "default" if !type_known => continue,
                    "type" if !type_known => {
                        problems.push(Problem::new(
                            format!("{at}/type"),
                            format!(
                                "{value} is not a question type here; use yes_no, \
                                 single_choice, multi_choice or free_text"
                            ),
                        ));
                        // Stands in for the unknown type so that the protocol checks the
                        // rest of the question without naming the type a second time (or
                        // applying another dialect's rules to it).
                        json!("free_text")
                    }
                    "choices" => choices(value, &at, problems, labelled),
                    _ => value.clone(),
                };
                out.insert(key.clone(), translated);
            }
            Value::Object(out)
        })
        .collect();
    Value::Array(translated)
}

/// Choices as the protocol has them, `{id, label, description}`. A choice given without an
/// id (the usual case) gets its label as id: the answer then names what the operator saw,
/// and labels must differ anyway. One given with an id (crush's `question` tool writes
/// them so) keeps it, and the answer names it by that id; its pointer goes into `labelled`
/// otherwise.
fn choices(
    value: &Value,
    at: &str,
    problems: &mut Vec<Problem>,
    labelled: &mut BTreeSet<String>,
) -> Value {
    let Some(list) = value.as_array() else {
        return value.clone();
    };
    let translated = list
        .iter()
        .enumerate()
        .map(|(index, choice)| {
            let Some(fields) = choice.as_object() else {
                return choice.clone();
            };
            let at = format!("{at}/choices/{index}");
            let mut out = Map::new();
            for (key, value) in fields.iter().filter(|(_, value)| !value.is_null()) {
                if CHOICE_KEYS.contains(&key.as_str()) {
                    out.insert(key.clone(), value.clone());
                } else {
                    problems.push(unknown(at.clone(), key, CHOICE_KEYS));
                }
            }
            if !out.contains_key("id") {
                if let Some(label) = fields.get("label").filter(|l| l.is_string()) {
                    out.insert("id".into(), label.clone());
                    labelled.insert(at);
                }
            }
            Value::Object(out)
        })
        .collect();
    Value::Array(translated)
}

/// A problem with a choice's id made from its label (`labelled`) is one with its label. A
/// missing id is a missing label, which the protocol names already. A problem with an id
/// the call gave stays the id's.
fn in_input_terms(problem: Problem, labelled: &BTreeSet<String>) -> Option<Problem> {
    if problem.pointer.contains("/choices/")
        && problem.message.contains("\"id\" is a required property")
    {
        return None;
    }
    Some(match problem.pointer.strip_suffix("/id") {
        Some(choice) if labelled.contains(choice) => Problem::new(
            format!("{choice}/label"),
            problem.message.replace("choice id", "the label"),
        ),
        _ => problem,
    })
}

fn unknown(at: String, key: &str, known: &[&str]) -> Problem {
    let pointer = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
    Problem::new(
        pointer,
        format!(
            "unknown field \"{key}\"; the fields here are {}",
            known.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests;
