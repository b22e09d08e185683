//! What the engine's calls give back: its errors ([`EngineError`], [`SettleError`]) and
//! what a snooze came to ([`Snoozed`]).
//!
//! A leaf module of its own: the engine returns these, and a [`crate::Command`]'s reply
//! carries them, so neither the engine nor the commands import the other for them.

use chrono::{DateTime, Utc};
use inbox_protocol::{Outcome, Problem};
use inbox_spool::SpoolError;

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("file watcher: {0}")]
    Watch(#[from] notify::Error),
}

/// Why an answer, decline or cancel was not written.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    #[error("no request \"{0}\" in the spool")]
    NotFound(String),
    #[error("the answers are not valid")]
    Invalid(Vec<Problem>),
    #[error("request \"{}\" is already settled: {} by {}", .0.id, .0.status, .0.answered_by)]
    AlreadySettled(Box<Outcome>),
    /// The request file is not the version the operator was shown (it was replaced, or
    /// changed after it was placed): nothing was written.
    #[error("request \"{id}\" was not answered: {reason}")]
    Changed { id: String, reason: String },
    /// Nobody may answer this request here (see `RequestSummary::blocked`).
    #[error("request \"{id}\" is blocked: {reason}")]
    Blocked { id: String, reason: String },
    #[error("request \"{0}\" was cancelled by its asker")]
    Cancelled(String),
    #[error("request \"{id}\" cannot be read: {reason}")]
    Unreadable { id: String, reason: String },
    /// The outcome is decided and kept in the database, but the spool would not take it
    /// yet (read-only or full): it is retried until written.
    #[error(
        "the outcome of \"{}\" ({} by {}) could not be written to the spool: {error}. \
         It is kept in the inbox's database and will be written as soon as the spool takes it",
        .outcome.id, .outcome.status, .outcome.answered_by
    )]
    Unwritten {
        outcome: Box<Outcome>,
        error: String,
    },
    /// This operator is not among the request's assignees (and may not take it over):
    /// nothing was written.
    #[error("request \"{id}\" was not answered: {reason}")]
    NotAssigned { id: String, reason: String },
    /// The answer is recorded as this operator's approval; the request settles when the
    /// rule's number of people approved the same version with the same answers.
    #[error(
        "your approval of \"{id}\" is recorded ({progress}); it settles when {needed} have \
         approved the same answers"
    )]
    AwaitingApprovals {
        id: String,
        /// "1 of 2: approved by alice".
        progress: String,
        needed: u32,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<StoreError> for SettleError {
    fn from(error: StoreError) -> Self {
        SettleError::Engine(error.into())
    }
}

impl From<SpoolError> for SettleError {
    fn from(error: SpoolError) -> Self {
        SettleError::Engine(error.into())
    }
}

/// What a snooze came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snoozed {
    pub until: DateTime<Utc>,
    /// The snooze was cut to the request's own expiry.
    pub capped: bool,
}
