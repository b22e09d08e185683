//! The Answer Inbox spool protocol, as pure data.
//!
//! This crate owns what a request file and an outcome file *mean*: the wire shapes pipelines
//! write (both question dialects, three request shapes), the one normalised model the rest of
//! the system works with, validation that reports every problem at once, answer checking, and
//! the JSON Schemas generated from the wire types.
//!
//! It must not do I/O, spawn threads or know about files: callers hand it bytes and get
//! values back. That keeps it trivially testable and fuzzable, and lets the engine, the CLI
//! and the desktop app agree on one definition.

pub mod answers;
pub mod id;
pub mod limits;
pub mod model;
pub mod outcome;
pub mod parse;
pub mod problem;
pub mod schema;
pub mod wire;

pub use answers::{check_answers, coerce_cli_values, fill_defaults, AnswerSet, Filled};
pub use id::{is_valid_id, request_id_from_file_name, NameProblem};
pub use model::{Choice, Dialect, Expiry, Mode, Priority, Question, QuestionKind, Request, Source};
pub use outcome::{Outcome, OutcomeStatus, PROTOCOL_VERSION};
pub use parse::{parse_request, sha256_hex};
pub use problem::Problem;
