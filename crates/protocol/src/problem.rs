//! One validation problem: where (a JSON pointer) and what (a plain sentence).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A single problem found in a request or in a set of answers.
///
/// `pointer` is an RFC 6901 JSON pointer into the checked document (`""` is the whole
/// document), so a pipeline author can find the spot without guessing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
}

impl Problem {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Escapes one reference token for a JSON pointer (RFC 6901 section 3).
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A value quoted in a problem, cut at 60 characters.
pub(crate) fn short(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}
