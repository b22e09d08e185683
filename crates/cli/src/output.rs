//! Writing results. Standard output carries the result (ids, JSON, tables); standard error
//! carries confirmations, problems and progress, so `> outcome.json` captures only data.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use anyhow::{Context, Result};
use inbox_protocol::text;
use serde::Serialize;

/// Writes human-readable `text` to standard output, with [`terminal_safe`] applied: it
/// carries titles and questions from request files, which anyone who can write to the spool
/// controls. Renderers keep one-line fields to one line themselves (`render::line`); this is
/// the net under them. A reader that went away (`| head`) is not an error.
pub fn stdout(text: &str) -> Result<()> {
    write_stdout(&terminal_safe(text, true))
}

/// Writes a message and a newline to standard error, with [`terminal_safe`] applied: errors
/// and confirmations quote ids, titles, labels and who answered, all from files. Every
/// message about a request goes through here (or `main`'s error printing, which does the
/// same), never through a bare `eprintln!`.
pub fn stderr(message: &str) {
    let mut err = io::stderr().lock();
    // Nowhere left to report a failure to write to standard error.
    let _ = writeln!(err, "{}", terminal_safe(message, true)).and_then(|()| err.flush());
}

/// Text from files made harmless for a terminal, by the protocol's one text policy
/// (`inbox_protocol::text`): control characters (escape sequences that recolour, retitle or
/// rewrite the screen, bells, carriage returns that overwrite a line), bidirectional
/// controls and invisible format characters (zero-width spaces, direction marks, U+2028)
/// are shown escaped, as `\u{1b}`. Newlines and tabs stay only when `keep_newlines`; a
/// one-line log entry escapes them too (as `\n`), so a file name cannot forge a second
/// entry.
pub fn terminal_safe(text: &str, keep_newlines: bool) -> String {
    if keep_newlines {
        text::multi_line(text).into_owned()
    } else {
        text::one_line(text).into_owned()
    }
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
    write_stdout(&json_safe(&text))
}

/// JSON whose strings hold no raw hidden character: serde_json escapes C0 controls itself
/// but writes DEL, C1 controls, bidi controls, zero-width characters and U+2028 raw, which a
/// terminal showing the JSON would obey. They become JSON `\uXXXX` escapes (surrogate pairs
/// above U+FFFF): the same JSON value, shown visibly. Outside strings JSON is ASCII, and
/// the only raw newlines are the pretty-printer's, so those stay.
/// JSON text made already (JSON Lines, one value a line) on standard output, with hidden
/// characters escaped as [`json`] does.
pub fn json_text(json: &str) -> Result<()> {
    write_stdout(&json_safe(json))
}

/// `json` with its hidden characters escaped (see [`json_safe`]), for writing to a file.
pub fn json_escaped(json: &str) -> String {
    json_safe(json).into_owned()
}

fn json_safe(json: &str) -> Cow<'_, str> {
    let hidden = |c: char| text::is_hidden(c) && c != '\n';
    if !json.contains(hidden) {
        return Cow::Borrowed(json);
    }
    let mut safe = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if hidden(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(safe, "\\u{unit:04x}");
            }
        } else {
            safe.push(c);
        }
    }
    Cow::Owned(safe)
}

#[cfg(test)]
mod tests {
    use super::{json_safe, terminal_safe};

    #[test]
    fn json_keeps_its_value_and_shows_hidden_characters_as_escapes() {
        let value =
            serde_json::json!({"title": "a\u{200b}\u{202e}\u{2028}\u{7f}\u{e0041}\n\u{1b}"});
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let safe = json_safe(&pretty);
        assert!(!safe
            .chars()
            .any(|c| inbox_protocol::text::is_hidden(c) && c != '\n'));
        assert!(
            safe.contains(r"a\u200b\u202e\u2028\u007f\udb40\udc41\n\u001b"),
            "{safe}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&safe).unwrap(),
            value
        );
    }

    #[test]
    fn escape_sequences_bidi_and_invisible_characters_are_shown_not_obeyed() {
        assert_eq!(terminal_safe("plain text", true), "plain text");
        assert_eq!(
            terminal_safe("\u{1b}[31mred\u{7}", true),
            "\\u{1b}[31mred\\u{7}"
        );
        assert_eq!(terminal_safe("a\nb", true), "a\nb");
        assert_eq!(terminal_safe("a\nb", false), "a\\nb");
        assert_eq!(terminal_safe("x\u{202e}y", true), "x\\u{202e}y");
        assert_eq!(terminal_safe("tab\there", true), "tab\there");
        assert_eq!(terminal_safe("tab\there", false), "tab\\there");
        for hidden in ['\u{200b}', '\u{200f}', '\u{61c}', '\u{2028}'] {
            let shown = terminal_safe(&format!("a{hidden}b"), true);
            assert_eq!(shown, format!("a{}b", hidden.escape_unicode()));
        }
    }
}
