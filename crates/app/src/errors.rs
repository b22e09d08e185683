//! Errors as the window receives them: a stable `code` to branch on and a sentence to show,
//! so the UI never matches on message strings.

use inbox_engine::{EngineError, SettleError, StoreError};
use serde::Serialize;
use ts_rs::TS;

use crate::views::ProblemView;

/// What kind of failure; the UI decides what to do from this alone. The web server adds
/// codes of its own for what only a browser meets (inbox-web's `WebErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No such request.
    NotFound,
    /// The answers (or the decline reason) are not valid; `problems` says why.
    Invalid,
    /// The asker withdrew the request.
    Cancelled,
    /// The request file cannot be read any more.
    Unreadable,
    /// The request file is no longer the version the window showed (it was replaced or
    /// changed after it was placed): nothing was written. Show the message on the request
    /// and fetch it again.
    Changed,
    /// The request is blocked (its file changed after it was placed, or an invalid outcome
    /// file stands in its place): nobody can answer it here. The message says why.
    Blocked,
    /// A setting or argument from the window is not acceptable.
    BadInput,
    /// The spool or the database failed.
    Storage,
}

/// An error crossing the IPC boundary.
#[derive(Debug, Clone, PartialEq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct IpcError {
    pub code: ErrorCode,
    pub message: String,
    pub problems: Vec<ProblemView>,
}

impl IpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> IpcError {
        IpcError {
            code,
            message: message.into(),
            problems: Vec::new(),
        }
    }

    pub fn bad_input(message: impl Into<String>) -> IpcError {
        IpcError::new(ErrorCode::BadInput, message)
    }
}

impl From<StoreError> for IpcError {
    fn from(error: StoreError) -> Self {
        IpcError::new(ErrorCode::Storage, error.to_string())
    }
}

impl From<EngineError> for IpcError {
    fn from(error: EngineError) -> Self {
        IpcError::new(ErrorCode::Storage, error.to_string())
    }
}

/// `AlreadySettled` is not an error to the window (it becomes a `SubmitResult`); callers
/// handle it before converting.
impl From<SettleError> for IpcError {
    fn from(error: SettleError) -> Self {
        let message = error.to_string();
        match error {
            SettleError::NotFound(_) => IpcError::new(ErrorCode::NotFound, message),
            SettleError::Invalid(problems) => IpcError {
                code: ErrorCode::Invalid,
                message,
                problems: problems.iter().map(ProblemView::of).collect(),
            },
            SettleError::Cancelled(_) => IpcError::new(ErrorCode::Cancelled, message),
            SettleError::Unreadable { .. } => IpcError::new(ErrorCode::Unreadable, message),
            // The reason alone: the window says on the request itself what was refused.
            SettleError::Changed { reason, .. } => IpcError::new(ErrorCode::Changed, reason),
            SettleError::Blocked { reason, .. } => IpcError::new(ErrorCode::Blocked, reason),
            // Nothing was written here: another member's to answer (docs/TEAMS.md).
            SettleError::NotAssigned { reason, .. } => IpcError::new(ErrorCode::Blocked, reason),
            // Callers turn it into `SubmitResult::Approved` first, as AlreadySettled.
            SettleError::AwaitingApprovals { .. }
            | SettleError::AlreadySettled(_)
            | SettleError::Unwritten { .. }
            | SettleError::Engine(_) => IpcError::new(ErrorCode::Storage, message),
        }
    }
}
