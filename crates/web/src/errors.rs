//! Errors as a browser receives them: an HTTP status and the `{code, message, problems}`
//! body the window's IPC errors already have, so the page branches on `code` alone whichever
//! transport brought it.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use inbox_desk::{ErrorCode, IpcError};

/// An error on its way to the browser.
#[derive(Debug)]
pub struct HttpError {
    pub status: StatusCode,
    pub body: IpcError,
}

impl HttpError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            body: IpcError::new(code, message),
        }
    }

    pub fn unauthorized() -> HttpError {
        HttpError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "this browser is not a paired device (or its device was revoked); \
             open a pairing link from `answer-inbox serve` or `answer-inbox devices pair`",
        )
    }

    pub fn forbidden(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::FORBIDDEN, ErrorCode::Forbidden, message)
    }

    pub fn rate_limited() -> HttpError {
        HttpError::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::RateLimited,
            "too many failed attempts from this address; wait a minute and try again",
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
    fn from(body: IpcError) -> HttpError {
        let status = match body.code {
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::Invalid | ErrorCode::BadInput => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::Cancelled | ErrorCode::Changed | ErrorCode::Blocked => StatusCode::CONFLICT,
            ErrorCode::Unreadable | ErrorCode::Storage => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::Forbidden | ErrorCode::PairingRefused => StatusCode::FORBIDDEN,
            ErrorCode::LinkRefused => StatusCode::GONE,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        };
        HttpError { status, body }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}
