//! What is wrong with a policy file, placed by line and column so the operator can find it.

use std::fmt;

use serde::Serialize;

/// One thing wrong with a policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyProblem {
    /// 1-based; 0 when the place is unknown.
    pub line: usize,
    /// 1-based, in characters; 0 when the place is unknown.
    pub column: usize,
    pub message: String,
}

impl PolicyProblem {
    /// A problem at byte `offset` of `text`.
    pub(crate) fn at(text: &str, offset: usize, message: impl Into<String>) -> PolicyProblem {
        let (line, column) = line_and_column(text, offset);
        PolicyProblem {
            line,
            column,
            message: message.into(),
        }
    }

    /// A problem whose place in the file is unknown.
    pub(crate) fn unplaced(message: impl Into<String>) -> PolicyProblem {
        PolicyProblem {
            line: 0,
            column: 0,
            message: message.into(),
        }
    }
}

impl fmt::Display for PolicyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(
                f,
                "line {}, column {}: {}",
                self.line, self.column, self.message
            )
        }
    }
}

/// The 1-based line of byte `offset`, and its 1-based column counted in characters (so a
/// name with accents does not push the column off).
pub(crate) fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let bytes = &text.as_bytes()[..offset.min(text.len())];
    let line_start = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |newline| newline + 1);
    let line = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    // Count characters by their first byte: UTF-8 continuation bytes are 0b10xxxxxx.
    let column = bytes[line_start..]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count()
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based_and_count_characters() {
        let text = "ab\ncdé f\n";
        assert_eq!(line_and_column(text, 0), (1, 1));
        assert_eq!(line_and_column(text, 1), (1, 2));
        assert_eq!(line_and_column(text, 3), (2, 1));
        // "é" is two bytes; the space after it is the fourth character.
        assert_eq!(line_and_column(text, 7), (2, 4));
        assert_eq!(line_and_column(text, 1000), (3, 1));
    }

    #[test]
    fn display_names_the_place_when_known() {
        let placed = PolicyProblem::at("a\nb", 2, "bad");
        assert_eq!(placed.to_string(), "line 2, column 1: bad");
        assert_eq!(PolicyProblem::unplaced("bad").to_string(), "bad");
    }
}
