//! Small helpers that validation and the dialects share: how a long value is quoted in a
//! problem (`short`, from `problem`), the id a question gets by position, and the pattern check. A leaf module, so
//! `parse` and `dialects` both use it without importing each other.

use crate::limits::MAX_PATTERN_CHARS;
pub(crate) use crate::problem::short;
use crate::problem::Problem;

/// The id of a question that gives none: `q1`, `q2`, ... by position.
pub(crate) fn positional_id(index: usize) -> String {
    format!("q{}", index + 1)
}

/// A text question's pattern must compile, within a size bound a hostile pattern cannot
/// blow up.
pub(crate) fn check_pattern(pattern: &str, at: &str, problems: &mut Vec<Problem>) {
    if let Err(error) = regex::RegexBuilder::new(pattern)
        .size_limit(MAX_PATTERN_CHARS * 1024)
        .build()
    {
        problems.push(Problem::new(
            at,
            format!(
                "the pattern does not compile: {}",
                collapse_whitespace(&error.to_string())
            ),
        ));
    }
}

/// The problem of a default that its own question would refuse.
pub(crate) fn default_message(message: String) -> String {
    format!("the default is not a valid answer: {message}")
}

/// An error message on one line (regex errors span several).
pub(crate) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
