//! The Answer Inbox spool protocol, as pure data.
//!
//! This crate owns what a request file and an outcome file *mean*: the wire shapes pipelines
//! write (both question dialects, three request shapes, and the request dialects of other
//! systems: MCP elicitation, AskUserQuestion, LangGraph's HumanInterrupt, LangChain's
//! HumanInTheLoopMiddleware), the one normalised
//! model the rest of the system works with, validation that reports every problem at once,
//! answer checking, replies in the other dialects' own answer shapes, and the JSON Schemas
//! generated from the wire types.
//!
//! Without its default `validate` feature it is the plain data only (the model, outcomes,
//! ids, limits, problems): what an asker needs to place a request and read its outcome,
//! without the JSON Schema, regex and markdown machinery of validation.
//!
//! It must not do I/O, spawn threads or know about files: callers hand it bytes and get
//! values back. That keeps it trivially testable and fuzzable, and lets the engine, the CLI
//! and the desktop app agree on one definition.

#[cfg(feature = "validate")]
pub mod answers;
pub mod approval;
pub mod decision;
#[cfg(feature = "validate")]
mod dialects;
pub mod digest;
mod duplicate_keys;
pub mod fingerprint;
pub mod id;
#[cfg(feature = "validate")]
mod labels;
pub mod limits;
pub mod model;
#[cfg(feature = "validate")]
mod ordered;
pub mod outcome;
#[cfg(feature = "validate")]
pub mod parse;
pub mod problem;
#[cfg(feature = "validate")]
pub mod schema;
pub mod shape;
pub mod text;
pub mod verify;
pub mod wire;
#[cfg(feature = "validate")]
mod wording;

#[cfg(feature = "validate")]
pub use answers::{check_answers, coerce_cli_values, fill_defaults, parse_number, Filled};
pub use approval::{Approval, ApprovalRef};
#[cfg(feature = "validate")]
pub use dialects::dialect_reply;
pub use digest::sha256_hex;
pub use fingerprint::fingerprint;
pub use id::{is_valid_id, request_id_from_file_name, NameProblem};
pub use model::{
    Choice, Dialect, Expiry, Mode, Origin, Priority, Question, QuestionKind, Request, Rules,
    Source, TextFormat,
};
pub use outcome::{
    AnswerSet, DecidedBy, Outcome, OutcomeStatus, Surface, Trigger, Via, BY_AUTONOMOUS, BY_EXPIRY,
    BY_VALIDATION, PROTOCOL_VERSION,
};
#[cfg(feature = "validate")]
pub use parse::parse_request;
pub use problem::Problem;
pub use shape::body_id;
#[cfg(feature = "validate")]
pub use verify::verify_outcome_for;
pub use verify::{operator_account, verify_outcome};
