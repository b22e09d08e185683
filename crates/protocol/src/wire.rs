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

/// A request file: one batch of questions, in any of the three accepted shapes.
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
}

/// The request envelope.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Envelope {
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
    /// The questions, asked together as one batch.
    pub questions: QuestionList,
    /// Title of the confirmation screen that ends a batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub confirm_title: Option<String>,
    /// Markdown shown on the confirmation screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20000))]
    pub confirm_description: Option<String>,
    /// `interactive` (default): wait for the operator. `autonomous`: answer at once with
    /// defaults when every required question has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<WireMode>,
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
pub enum WirePriority {
    Low,
    #[default]
    Normal,
    High,
    Critical,
}
