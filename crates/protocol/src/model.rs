//! The one normalised model every other part of the system works with.
//!
//! Both dialects and all three request shapes end up here: every question has an id, a kind
//! out of four, its choices as `{id, label, description}` (InteractiveQuestion options become
//! choices whose id and label are the option text), an explicit `required` and
//! `allow_custom`. Nothing downstream needs to know which dialect a question came in, except
//! to show it the way its asker expects.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// The four kinds every question type maps onto.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// One selectable answer of a choice question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The value written into the outcome.
    pub id: String,
    pub label: String,
    pub description: Option<String>,
}
