//! The Answer Inbox spool protocol, as pure data.
//!
//! This crate owns what a request file and an outcome file *mean*: the wire shapes pipelines
//! write (both question dialects, three request shapes, and the request dialects of other
//! systems: MCP elicitation, AskUserQuestion, LangGraph's HumanInterrupt), the one normalised
//! model the rest of the system works with, validation that reports every problem at once,
//! answer checking, replies in the other dialects' own answer shapes, and the JSON Schemas
//! generated from the wire types.
//!
//! It must not do I/O, spawn threads or know about files: callers hand it bytes and get
//! values back. That keeps it trivially testable and fuzzable, and lets the engine, the CLI
//! and the desktop app agree on one definition.

pub mod answers;
mod dialects;
pub mod id;
pub mod limits;
pub mod model;
mod ordered;
pub mod outcome;
pub mod parse;
pub mod problem;
pub mod schema;
pub mod wire;

pub use answers::{
    check_answers, coerce_cli_values, fill_defaults, parse_number, AnswerSet, Filled,
};
pub use dialects::dialect_reply;
pub use id::{is_valid_id, request_id_from_file_name, NameProblem};
pub use model::{
    Choice, Dialect, Expiry, Mode, Origin, Priority, Question, QuestionKind, Request, Rules,
    Source, TextFormat,
};
pub use outcome::{
    Outcome, OutcomeStatus, BY_AUTONOMOUS, BY_EXPIRY, BY_VALIDATION, PROTOCOL_VERSION,
};
pub use parse::{body_id, parse_request, sha256_hex};
pub use problem::Problem;
