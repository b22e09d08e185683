//! Writing results. Standard output carries the result (ids, JSON, tables); standard error
//! carries confirmations, problems and progress, so `> outcome.json` captures only data.

use std::io::{self, Write};

use anyhow::{Context, Result};
use serde::Serialize;

/// Writes human-readable `text` to standard output, with [`terminal_safe`] applied: it
/// carries titles and questions from request files, which anyone who can write to the spool
/// controls. A reader that went away (`| head`) is not an error.
pub fn stdout(text: &str) -> Result<()> {
    write_stdout(&terminal_safe(text, true))
}

/// Text from request files made harmless for a terminal: control characters (escape
/// sequences that recolour, retitle or rewrite the screen, bells, carriage returns that
/// overwrite a line) and the bidirectional overrides that make text read differently than
/// it is stored are shown escaped, as `\u{1b}`. Newlines stay only when `keep_newlines`; a
/// one-line log entry escapes them too, so a file name cannot forge a second entry.
pub fn terminal_safe(text: &str, keep_newlines: bool) -> String {
    let unsafe_char = |c: char| {
        (c.is_control() && !(c == '\t' || (keep_newlines && c == '\n')))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.contains(unsafe_char) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if unsafe_char(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn write_stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            Err(error).context("cannot write to standard output")
        }
        _ => Ok(()),
    }
}

/// Pretty JSON and a final newline, on standard output.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("cannot serialise the result")?;
    text.push('\n');
    // serde_json escapes control characters itself; escaping again would break the JSON.
    write_stdout(&text)
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn escape_sequences_and_bidi_overrides_are_shown_not_obeyed() {
        assert_eq!(terminal_safe("plain text", true), "plain text");
        assert_eq!(
            terminal_safe("\u{1b}[31mred\u{7}", true),
            "\\u{1b}[31mred\\u{7}"
        );
        assert_eq!(terminal_safe("a\nb", true), "a\nb");
        assert_eq!(terminal_safe("a\nb", false), "a\\u{a}b");
        assert_eq!(terminal_safe("x\u{202e}y", true), "x\\u{202e}y");
        assert_eq!(terminal_safe("tab\there", false), "tab\there");
    }
}
