//! Errors as a browser receives them: an HTTP status and the `{code, message, problems}`
//! body the window's IPC errors already have, so the page branches on `code` alone whichever
//! transport brought it. The codes are the inbox's own ([`ErrorCode`]) and, for what only a
//! browser meets (pairing, the device cookie, CSRF, one-time links, the failure limiter),
//! [`WebErrorCode`].

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use inbox_app::{ErrorCode, IpcError, ProblemView};
use serde::Serialize;
use ts_rs::TS;

/// The refusals only the web server makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WebErrorCode {
    /// This browser is not a paired device, or its device was revoked. Show the pairing
    /// screen.
    Unauthorized,
    /// The request came from another page (Origin), without the CSRF token, or for another
    /// host name. Nothing was done.
    Forbidden,
    /// A pairing code that is unknown, used or expired. The message says which.
    PairingRefused,
    /// A one-time answer link (from a push notification) that is unknown, used or expired.
    /// Nothing was answered.
    LinkRefused,
    /// Too many failed attempts from this address; wait a minute.
    RateLimited,
}

/// A body's `code`: the inbox's or the web server's own, serialised as the bare word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum HttpCode {
    Inbox(ErrorCode),
    Web(WebErrorCode),
}

/// The JSON body of every error response, shaped as the window's `IpcError`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorBody {
    pub code: HttpCode,
    pub message: String,
    pub problems: Vec<ProblemView>,
}

/// An error on its way to the browser.
#[derive(Debug)]
pub struct HttpError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl HttpError {
    fn with(status: StatusCode, code: HttpCode, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            body: ErrorBody {
                code,
                message: message.into(),
                problems: Vec::new(),
            },
        }
    }

    /// A refusal of the inbox's own kind.
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> HttpError {
        HttpError::with(status, HttpCode::Inbox(code), message)
    }

    /// A refusal only the web server makes; its status follows from the code.
    pub fn web(code: WebErrorCode, message: impl Into<String>) -> HttpError {
        let status = match code {
            WebErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            WebErrorCode::Forbidden | WebErrorCode::PairingRefused => StatusCode::FORBIDDEN,
            WebErrorCode::LinkRefused => StatusCode::GONE,
            WebErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        };
        HttpError::with(status, HttpCode::Web(code), message)
    }

    pub fn unauthorized() -> HttpError {
        HttpError::web(
            WebErrorCode::Unauthorized,
            "this browser is not a paired device (or its device was revoked); \
             open a pairing link from `answer-inbox serve` or `answer-inbox devices pair`",
        )
    }

    pub fn forbidden(message: impl Into<String>) -> HttpError {
        HttpError::web(WebErrorCode::Forbidden, message)
    }

    pub fn rate_limited() -> HttpError {
        HttpError::web(
            WebErrorCode::RateLimited,
            "too many failed attempts from this network (or this device); wait a minute and try again",
        )
    }

    pub fn not_found(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, message)
    }

    pub fn bad_input(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::BAD_REQUEST, ErrorCode::BadInput, message)
    }

    pub fn storage(message: impl Into<String>) -> HttpError {
        HttpError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Storage,
            message,
        )
    }
}

/// The inbox's own refusals keep their code; the status says what kind of refusal it is.
impl From<IpcError> for HttpError {
    fn from(error: IpcError) -> HttpError {
        let status = match error.code {
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::Invalid | ErrorCode::BadInput => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::Cancelled | ErrorCode::Changed | ErrorCode::Blocked => StatusCode::CONFLICT,
            ErrorCode::Unreadable | ErrorCode::Storage => StatusCode::INTERNAL_SERVER_ERROR,
        };
        HttpError {
            status,
            body: ErrorBody {
                code: HttpCode::Inbox(error.code),
                message: error.message,
                problems: error.problems,
            },
        }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}
