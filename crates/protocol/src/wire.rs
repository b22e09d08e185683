//! The shapes pipelines write, as serde + schemars types.
//!
//! These types are the single source of the request's structure: the JSON Schemas in
//! `schemas/` are generated from them, and [`crate::parse`] validates every file against those
//! same schemas before deserialising into these types. Meaning (defaults, dialect rules,
//! cross-field checks) is applied afterwards, when they are normalised into [`crate::model`].
//!
//! Unknown fields are accepted and ignored so that askers can carry their own metadata and
//! newer askers keep working with older inboxes.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::id::ID_PATTERN;

/// A request file: one batch of questions, in any of the accepted shapes. Which shape a file
/// is in is decided by its top-level keys (see `shape::detect_shape` and docs/PROTOCOL.md), not
/// by trying each in turn.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "Answer Inbox request")]
pub enum RequestFile {
    /// The envelope: questions plus metadata.
    Envelope(Box<Envelope>),
    /// The tool-response shape `{"interactiveQuestions": [...]}`.
    Interactive(InteractiveQuestions),
    /// A bare array of questions.
    Questions(QuestionList),
    /// MCP `elicitation/create` params (form mode), optionally with envelope fields.
    Elicitation(Box<Elicitation>),
    /// Claude Code's AskUserQuestion tool input, optionally with envelope fields.
    AskUserQuestion(Box<AskUserQuestion>),
    /// LangGraph Agent Inbox's HumanInterrupt, optionally with envelope fields.
    HumanInterrupt(Box<HumanInterrupt>),
    /// A one-element list of HumanInterrupt, as LangGraph's `interrupt()` is given.
    HumanInterruptList(HumanInterruptList),
    /// LangChain's HumanInTheLoopMiddleware interrupt (a HITLRequest), optionally with
    /// envelope fields.
    LangChainHitl(Box<HitlRequest>),
}

/// The request envelope.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Envelope {
    #[serde(flatten)]
    pub fields: RequestFields,
    /// The questions, asked together as one batch.
    pub questions: QuestionList,
    /// `interactive` (default): wait for the operator. `autonomous`: answer at once with
    /// defaults when every required question has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<WireMode>,
}

/// The envelope's fields besides `questions` and `mode`: every object shape may carry them,
/// so that an asker writing another dialect can still say who it is, when the request
/// expires and how urgent it is. (`mode` is not here because the MCP elicitation shape has a
/// `mode` of its own.)
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RequestFields {
    /// Protocol version. Only 1 exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1))]
    pub inbox: Option<u32>,
    /// Request id. When present it must equal the file's name without `.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = ID_PATTERN))]
    pub id: Option<String>,
    /// A short title shown in the inbox list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub title: Option<String>,
    /// Who is asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Title of the confirmation screen that ends a batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub confirm_title: Option<String>,
    /// Markdown shown on the confirmation screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub confirm_description: Option<String>,
    /// When the request expires (RFC 3339). Not together with `timeout_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<FixedOffset>>,
    /// Seconds after the file was placed at which the request expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 31536000))]
    pub timeout_seconds: Option<u64>,
    /// Ordering in the operator's inbox; `critical` also raises critical notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<WirePriority>,
}

/// `{"interactiveQuestions": [...]}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct InteractiveQuestions {
    #[serde(rename = "interactiveQuestions")]
    pub interactive_questions: QuestionList,
}

/// One to fifty questions.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct QuestionList(#[schemars(length(min = 1, max = 50))] pub Vec<WireQuestion>);

/// Who is asking: free-form, with well-known keys. Extra keys are kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Source {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub app: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub run: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2000))]
    pub url: Option<String>,
    /// The asker's working directory, so the operator sees where an agent works.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096))]
    pub cwd: Option<String>,
    /// The project the asker works in (a name, not a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub project: Option<String>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// The question types of both dialects: InteractiveQuestion's choice, multiChoice, text and
/// confirm; the structured dialect's yes_no, single_choice, multi_choice and free_text.
/// (No doc comment per variant: that would turn the schema's `enum` into a `oneOf`, whose
/// errors say far less.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum QuestionType {
    #[serde(rename = "choice")]
    Choice,
    #[serde(rename = "multiChoice")]
    MultiChoice,
    #[serde(rename = "text")]
    Text,
    #[serde(rename = "confirm")]
    Confirm,
    #[serde(rename = "yes_no")]
    YesNo,
    #[serde(rename = "single_choice")]
    SingleChoice,
    #[serde(rename = "multi_choice")]
    MultiChoiceStructured,
    #[serde(rename = "free_text")]
    FreeText,
}

impl QuestionType {
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionType::Choice => "choice",
            QuestionType::MultiChoice => "multiChoice",
            QuestionType::Text => "text",
            QuestionType::Confirm => "confirm",
            QuestionType::YesNo => "yes_no",
            QuestionType::SingleChoice => "single_choice",
            QuestionType::MultiChoiceStructured => "multi_choice",
            QuestionType::FreeText => "free_text",
        }
    }
}

/// One question, in either dialect.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WireQuestion {
    /// The question's id, the key of its answer. Defaults to `q1`, `q2`, ... by position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = ID_PATTERN))]
    pub id: Option<String>,
    /// The question itself.
    #[schemars(length(min = 1, max = 2000))]
    pub question: String,
    #[serde(rename = "type")]
    pub kind: QuestionType,
    /// Markdown with the details needed to decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
    /// Tab header in a batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub label: Option<String>,
    /// InteractiveQuestion options (choice, multiChoice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 500)))]
    pub options: Option<Vec<String>>,
    /// Structured choices (single_choice, multi_choice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub choices: Option<Vec<WireChoice>>,
    /// The answer used when the question is skipped or a policy answers: a boolean for
    /// confirm/yes_no, an option for choice, an array of options for multi, a string for text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Whether the operator must answer. Defaults to true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// A regular expression a text answer must match (Rust `regex` syntax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub pattern: Option<String>,
    /// Whether the operator may type an answer that is not among the options. Defaults to
    /// false for choice/multiChoice and true for single_choice/multi_choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_custom: Option<bool>,
}

/// A structured choice.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WireChoice {
    #[schemars(length(min = 1, max = 500))]
    pub id: String,
    #[schemars(length(min = 1, max = 500))]
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WireMode {
    #[default]
    Interactive,
    Autonomous,
}

/// Ordered from least to most urgent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "Priority"))]
pub enum WirePriority {
    Low,
    #[default]
    Normal,
    High,
    Critical,
}

/// MCP's `elicitation/create` params in form mode: a message and a flat object schema whose
/// properties are the questions. Envelope fields may sit beside them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Elicitation {
    #[serde(flatten)]
    pub fields: RequestFields,
    /// What the asker wants and why (markdown): shown above the first question.
    #[schemars(length(max = 20000))]
    pub message: String,
    #[serde(rename = "requestedSchema")]
    pub requested_schema: ElicitationSchema,
    /// The inbox's `interactive`/`autonomous`, or MCP's own `form` (the same as
    /// `interactive`). MCP's `url` mode is refused: it sends the user to a web page, which
    /// the inbox cannot answer for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitationMode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationMode {
    Interactive,
    Autonomous,
    Form,
    Url,
}

/// MCP's restricted JSON Schema: an object of primitive properties, no nesting.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ElicitationSchema {
    #[serde(rename = "type")]
    pub kind: ObjectType,
    /// Property name to property schema; asked in the order written.
    #[schemars(extend("maxProperties" = 50))]
    pub properties: BTreeMap<String, ElicitProperty>,
    /// Names of the properties the operator must answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 50))]
    pub required: Option<Vec<String>>,
}

/// The only schema type a requested schema may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ObjectType {
    Object,
}

/// One property of a requested schema. Every keyword MCP allows is typed here; which of them
/// fit together (e.g. `minimum` only on numbers) is checked when it is turned into a
/// question, so the problem can name the property and say what does not fit.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ElicitProperty {
    #[serde(rename = "type")]
    pub kind: ElicitPropertyType,
    /// The question text (defaults to the property name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2000))]
    pub title: Option<String>,
    /// Help for the question (markdown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(rename = "minLength", default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    #[serde(rename = "maxLength", default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Not in MCP's subset, but plain JSON Schema and a text question's own rule, so kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Single select: the allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100), inner(length(min = 1, max = 500)))]
    pub values: Option<Vec<String>>,
    /// Single select (legacy): a label per `enum` value.
    #[serde(rename = "enumNames", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 500)))]
    pub value_names: Option<Vec<String>>,
    /// Single select with labels.
    #[serde(rename = "oneOf", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub one_of: Option<Vec<TitledValue>>,
    /// Multi-select (`type: array`): what may be picked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<ElicitItems>,
    #[serde(rename = "minItems", default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    #[serde(rename = "maxItems", default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
}

/// (No doc comment per variant: that would turn the schema's `enum` into a `oneOf`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElicitPropertyType {
    String,
    Number,
    Integer,
    Boolean,
    Array,
}

impl ElicitPropertyType {
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitPropertyType::String => "string",
            ElicitPropertyType::Number => "number",
            ElicitPropertyType::Integer => "integer",
            ElicitPropertyType::Boolean => "boolean",
            ElicitPropertyType::Array => "array",
        }
    }
}

/// The string formats MCP allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

/// The items of a multi-select: `enum` (values are their own labels) or `anyOf` (with
/// titles).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ElicitItems {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<StringType>,
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100), inner(length(min = 1, max = 500)))]
    pub values: Option<Vec<String>>,
    #[serde(rename = "anyOf", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub any_of: Option<Vec<TitledValue>>,
}

/// Multi-select items are strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StringType {
    String,
}

/// `{"const": value, "title": label}`: one choice of a titled enum.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TitledValue {
    #[serde(rename = "const")]
    #[schemars(length(min = 1, max = 500))]
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 500))]
    pub title: Option<String>,
}

/// Claude Code's AskUserQuestion tool input: `{"questions": [...]}` whose questions have a
/// `header`, `options` as objects and `multiSelect`, and no `type`. Envelope fields may sit
/// beside them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AskUserQuestion {
    #[serde(flatten)]
    pub fields: RequestFields,
    #[schemars(length(min = 1, max = 50))]
    pub questions: Vec<AskedQuestion>,
    /// As in the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<WireMode>,
}

/// One AskUserQuestion question.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AskedQuestion {
    /// The question text; also the key of its answer in the reply.
    #[schemars(length(min = 1, max = 2000))]
    pub question: String,
    /// Short tab label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub header: Option<String>,
    #[schemars(length(min = 1, max = 100))]
    pub options: Vec<AskedOption>,
    /// Whether several options may be picked. Defaults to false.
    #[serde(
        rename = "multiSelect",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub multi_select: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AskedOption {
    /// The option; also its value in the reply.
    #[schemars(length(min = 1, max = 500))]
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
}

/// LangGraph Agent Inbox's HumanInterrupt: an action the agent wants to take, and how the
/// operator may respond to it. Envelope fields may sit beside it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HumanInterrupt {
    #[serde(flatten)]
    pub fields: RequestFields,
    pub action_request: ActionRequest,
    pub config: InterruptConfig,
    /// Markdown shown with the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
    /// As in the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<WireMode>,
}

/// `[HumanInterrupt]`: LangGraph's `interrupt()` takes a list. The inbox asks one interrupt
/// per request; a longer list is refused when it is read, with a message that says so (the
/// schema's "has more than 1 item" would not).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct HumanInterruptList(#[schemars(length(min = 1))] pub Vec<HumanInterrupt>);

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ActionRequest {
    /// The tool or action name.
    #[schemars(length(min = 1, max = 200))]
    pub action: String,
    /// Its arguments.
    pub args: serde_json::Map<String, Value>,
}

/// Which responses the operator may give; at least one must be allowed. A missing key is
/// `false`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct InterruptConfig {
    #[serde(default)]
    pub allow_accept: bool,
    #[serde(default)]
    pub allow_edit: bool,
    #[serde(default)]
    pub allow_respond: bool,
    #[serde(default)]
    pub allow_ignore: bool,
}

/// LangChain's HumanInTheLoopMiddleware interrupt value (its `HITLRequest`): the tool calls the
/// agent wants to make, and which decisions each tool allows. Envelope fields may sit beside
/// it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HitlRequest {
    #[serde(flatten)]
    pub fields: RequestFields,
    /// The tool calls to review, in the order the decisions are given back.
    #[schemars(length(min = 1, max = 50))]
    pub action_requests: Vec<HitlActionRequest>,
    /// Which decisions each tool allows, by its name.
    #[schemars(length(min = 1, max = 50))]
    pub review_configs: Vec<HitlReviewConfig>,
    /// As in the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<WireMode>,
}

/// One tool call to review.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HitlActionRequest {
    /// The tool's name.
    #[schemars(length(min = 1, max = 200))]
    pub name: String,
    /// Its arguments.
    pub args: serde_json::Map<String, Value>,
    /// Markdown shown with the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub description: Option<String>,
}

/// The decisions a tool allows. `args_schema` (the arguments' JSON Schema) is accepted and
/// not used: edited arguments are checked to be a JSON object, and the tool checks the rest.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HitlReviewConfig {
    /// The tool these decisions are for.
    #[schemars(length(min = 1, max = 200))]
    pub action_name: String,
    #[schemars(length(min = 1, max = 4))]
    pub allowed_decisions: Vec<HitlDecisionType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_schema: Option<Value>,
}

/// A decision of HumanInTheLoopMiddleware: run the call as it is, run it with edited
/// arguments, refuse it (with an optional reason), or answer in the tool's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HitlDecisionType {
    Approve,
    Edit,
    Reject,
    Respond,
}
