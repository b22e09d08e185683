//! The one normalised model every other part of the system works with.
//!
//! Both question dialects and all the request shapes end up here: every question has an id, a kind
//! out of four, its choices as `{id, label, description}` (InteractiveQuestion options become
//! choices whose id and label are the option text), an explicit `required` and
//! `allow_custom`. Nothing downstream needs to know which dialect a question came in, except
//! to show it the way its asker expects.
//!
//! Requests written in another system's dialect (MCP elicitation, AskUserQuestion, LangGraph's
//! HumanInterrupt, LangChain's HumanInTheLoopMiddleware) are normalised into the same questions; `Request::origin` remembers which
//! dialect it was and what is needed to write the reply in that dialect's own answer shape.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::wire::{QuestionType, Source, WireMode as Mode, WirePriority as Priority};

/// A validated request, normalised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The id from the body or the file name; `None` only when checking a loose file that
    /// has neither.
    pub id: Option<String>,
    pub title: Option<String>,
    pub source: Source,
    pub questions: Vec<Question>,
    pub confirm_title: Option<String>,
    pub confirm_description: Option<String>,
    pub mode: Mode,
    pub expiry: Option<Expiry>,
    pub priority: Priority,
    /// SHA-256 of the file's bytes, hex: ties an outcome to exactly what was asked.
    pub sha256: String,
    /// The other system's dialect the request was written in, if any. Absent for the inbox's
    /// own shapes (envelope, bare array, `interactiveQuestions`), so requests stored before
    /// this field existed read back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

impl Request {
    /// The title to show: the request's own, else its first question.
    pub fn display_title(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.questions.first().map(|q| q.question.as_str()))
            .unwrap_or("")
    }

    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }

    /// When the request expires, given when its file was placed.
    pub fn deadline(&self, placed_at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self.expiry? {
            Expiry::At(at) => Some(at),
            Expiry::After { seconds } => {
                let seconds = i64::try_from(seconds).unwrap_or(i64::MAX);
                placed_at.checked_add_signed(chrono::TimeDelta::try_seconds(seconds)?)
            }
        }
    }
}

/// When a request expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expiry {
    /// At a fixed time (`expires_at`).
    At(DateTime<Utc>),
    /// This long after the file was placed (`timeout_seconds`).
    After { seconds: u64 },
}

/// Which dialect a question was written in; kept so the UI can label it as its asker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Planu-style InteractiveQuestion: choice, multiChoice, text, confirm.
    Interactive,
    /// Crush-style structured question: yes_no, single_choice, multi_choice, free_text.
    Structured,
}

/// A request dialect of another system, with what its reply needs (see
/// [`crate::dialect_reply`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dialect", rename_all = "snake_case")]
pub enum Origin {
    /// MCP `elicitation/create` (form mode). The reply is an ElicitResult.
    Elicitation {
        /// One per property, in the order asked. Empty when the schema has no properties:
        /// the request is then one yes/no question, [`ELICIT_ACCEPT_ID`].
        fields: Vec<ElicitField>,
    },
    /// Claude Code's AskUserQuestion. The reply is `{"answers": {question text: answer}}`.
    AskUserQuestion { questions: Vec<AskedText> },
    /// LangGraph Agent Inbox's HumanInterrupt. The reply is a HumanResponse.
    HumanInterrupt {
        action: String,
        args: Map<String, Value>,
        /// The interrupt came as a one-element list; the reply is one too.
        list: bool,
    },
    /// LangChain's HumanInTheLoopMiddleware (a HITLRequest). The reply is a HITLResponse,
    /// `{"decisions": [...]}`, one decision per action, in order.
    #[serde(rename = "langchain_hitl")]
    LangChainHitl {
        /// The tool name of each action request, in order; action `n` (from 1) is asked by
        /// the questions `decision-n`, `args-n` and `message-n`.
        actions: Vec<String>,
    },
}

/// The question id of an elicitation without properties: accept (true) or decline (false).
pub const ELICIT_ACCEPT_ID: &str = "accept";
/// HumanInterrupt's question ids: which response, the edited arguments, the text response.
pub const INTERRUPT_DECISION_ID: &str = "decision";
pub const INTERRUPT_ARGS_ID: &str = "args";
pub const INTERRUPT_RESPONSE_ID: &str = "response";

/// An elicitation property and the question that asks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElicitField {
    /// The property name: the key in the reply's `content`.
    pub property: String,
    /// The question's id: the property name when it is a valid id, else `q<position>`.
    pub question_id: String,
    /// What the reply's value must be.
    #[serde(rename = "type")]
    pub value_type: ElicitValueType,
}

/// The JSON type a property's value takes in an ElicitResult.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitValueType {
    String,
    Number,
    Integer,
    Boolean,
    /// One of the enum's values (a string).
    Enum,
    /// An array of the enum's values.
    EnumArray,
}

/// An AskUserQuestion question: its text is the key of its answer in the reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedText {
    pub question_id: String,
    pub question: String,
    pub multi_select: bool,
}

/// The four kinds every question type maps onto.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum QuestionKind {
    /// Answer: a boolean.
    Confirm,
    /// Answer: one choice id (or fill-in text).
    Choice,
    /// Answer: an array of choice ids (and fill-in texts).
    MultiChoice,
    /// Answer: a string.
    Text,
}

impl QuestionKind {
    pub fn of(wire: QuestionType) -> (QuestionKind, Dialect) {
        use QuestionType as T;
        match wire {
            T::Confirm => (QuestionKind::Confirm, Dialect::Interactive),
            T::Choice => (QuestionKind::Choice, Dialect::Interactive),
            T::MultiChoice => (QuestionKind::MultiChoice, Dialect::Interactive),
            T::Text => (QuestionKind::Text, Dialect::Interactive),
            T::YesNo => (QuestionKind::Confirm, Dialect::Structured),
            T::SingleChoice => (QuestionKind::Choice, Dialect::Structured),
            T::MultiChoiceStructured => (QuestionKind::MultiChoice, Dialect::Structured),
            T::FreeText => (QuestionKind::Text, Dialect::Structured),
        }
    }

    pub fn has_choices(self) -> bool {
        matches!(self, QuestionKind::Choice | QuestionKind::MultiChoice)
    }
}

/// One normalised question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub kind: QuestionKind,
    /// The `type` as written, e.g. `multiChoice` or `yes_no`.
    #[serde(rename = "type")]
    pub wire_type: QuestionType,
    pub dialect: Dialect,
    pub question: String,
    /// Markdown, untrusted: render only through a sanitiser.
    pub description: Option<String>,
    /// Tab header in a batch.
    pub label: Option<String>,
    /// Empty unless `kind.has_choices()`.
    pub choices: Vec<Choice>,
    /// Already checked to be a valid answer to this question.
    pub default: Option<Value>,
    pub required: bool,
    pub pattern: Option<String>,
    /// Whether fill-in text that is not a choice is accepted.
    pub allow_custom: bool,
    /// Checks beyond the above that other dialects state (lengths, numbers, formats, a JSON
    /// object, a condition). Empty, and not written, for the inbox's own dialects.
    #[serde(default, skip_serializing_if = "Rules::is_empty")]
    pub rules: Rules,
}

impl Question {
    pub fn choice(&self, id: &str) -> Option<&Choice> {
        self.choices.iter().find(|c| c.id == id)
    }

    /// The tab header: the label, else the question's first three words.
    pub fn tab_label(&self) -> String {
        match &self.label {
            Some(label) => label.clone(),
            None => self
                .question
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Further checks on an answer, from dialects that state them. Every one is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rules {
    /// Text: fewest characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Text: most characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Text: what the text must be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<TextFormat>,
    /// Text in the `integer` or `number` format: the smallest value allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Text in the `integer` or `number` format: the largest value allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Multiple choice: fewest picks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Multiple choice: most picks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The question is required when another question has a given answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_if: Option<RequiredIf>,
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        *self == Rules::default()
    }
}

/// What a text answer must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextFormat {
    /// An optional sign and digits.
    Integer,
    /// A decimal number, optionally with an exponent (`-1.5`, `2e3`).
    Number,
    /// `local@domain`.
    Email,
    /// An absolute URI: a scheme, `:`, and no spaces.
    Uri,
    /// `YYYY-MM-DD`, a real calendar date.
    Date,
    /// RFC 3339.
    DateTime,
    /// A JSON object.
    JsonObject,
}

/// "Required when question `question` is answered `equals`".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequiredIf {
    pub question: String,
    pub equals: Value,
}

/// One selectable answer of a choice question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The value written into the outcome.
    pub id: String,
    pub label: String,
    pub description: Option<String>,
}
