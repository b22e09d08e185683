//! The one text policy for every surface that shows request text to a person: the command
//! line (standard output and standard error), notification bubbles and the window.
//!
//! Anyone who can write to the spool controls a request's title, questions, labels and
//! source, so none of it may reach a person raw. Characters a person cannot see (controls,
//! bidirectional overrides, zero-width and other format characters, line and paragraph
//! separators) are shown escaped, visibly, as `\u{200b}` (lower-case hex, the form of Rust's
//! `char::escape_unicode`), so two strings that are stored differently never look the same
//! and nothing rewrites a terminal or reorders a line. One-line fields (titles, labels,
//! sources, ids, answers in a table) escape `\n`, `\r` and `\t` as well, so a newline cannot
//! forge a second row or field; multi-line text (descriptions, long answers) keeps its
//! newlines and tabs.
//!
//! A backslash is left as it is: escaping it would make every Windows path and regex in a
//! title unreadable, and a literal `\u{200b}` typed into a title hides nothing.

use std::borrow::Cow;

// The general category comes from `unicode-general-category`: a table generated from the
// Unicode Character Database with no dependencies of its own, kept current with Unicode
// releases, and already in the dependency tree (jsonschema and rmcp use it). Hand-listing
// the format characters would silently miss those added by each Unicode version.
use unicode_general_category::{get_general_category, GeneralCategory};

/// Text for a one-line field (a title, a label, a source field, an id, an answer in a
/// table): hidden characters escaped as `\u{..}`, and `\n`, `\r` and `\t` as `\n`, `\r` and
/// `\t`, so the result is exactly one line. Borrowed when nothing needed escaping.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, Lines::One)
}

/// Text that may span lines (a description, markdown source, a long answer): hidden
/// characters escaped as `\u{..}`, newlines and tabs kept. A carriage return is kept only as
/// part of a Windows line ending (`\r\n`); alone it would move the cursor back over the
/// line, so it is shown as `\r`. Borrowed when nothing needed escaping.
pub fn multi_line(text: &str) -> Cow<'_, str> {
    escape(text, Lines::Many)
}

/// Whether `c` must never reach a person raw, because they cannot see it or it changes how
/// the text around it is shown:
///
/// - controls (general category Cc): C0 (escape sequences, bells, backspace, carriage
///   return, newline, tab), DEL and C1 (including NEL, U+0085, and the 8-bit CSI);
/// - format characters (Cf): bidirectional embeddings, overrides and isolates
///   (U+202A–U+202E, U+2066–U+2069), LRM/RLM (U+200E/F) and the Arabic letter mark U+061C,
///   zero-width space/non-joiner/joiner (U+200B–U+200D), the word joiner and invisible
///   operators (U+2060–U+2064), the soft hyphen U+00AD, the BOM U+FEFF, tag characters
///   (U+E0001, U+E0020–U+E007F), interlinear annotation marks, and whatever later Unicode
///   versions add to Cf;
/// - the line and paragraph separators U+2028 and U+2029 (Zl, Zp), which break a line
///   where the reader expects one line;
/// - letters and marks that are nothing but blank space, used to pad a look-alike: the
///   Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme joiner
///   U+034F, the Khmer inherent vowels U+17B4/U+17B5 and the Mongolian free variation
///   selectors U+180B–U+180D and U+180F. These are the Default_Ignorable_Code_Point
///   characters outside Cf.
///
/// Deliberately not hidden: the variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF
/// (they only pick a glyph for the visible character before them; U+FE0F makes ❤ an emoji),
/// and visible spaces such as U+00A0 or U+3000 (look-alike labels are refused by the
/// confusable check, not here).
pub fn is_hidden(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || matches!(
        c,
        '\u{115f}'
            | '\u{1160}'
            | '\u{3164}'
            | '\u{ffa0}'
            | '\u{034f}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180d}' | '\u{180f}'
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Lines {
    One,
    Many,
}

/// Whether `c`, followed by `rest`, is escaped in the given kind of field.
fn needs_escape(c: char, rest: &str, lines: Lines) -> bool {
    match (c, lines) {
        ('\n' | '\t', Lines::Many) => false,
        ('\r', Lines::Many) => !rest.starts_with('\n'),
        _ => is_hidden(c),
    }
}

fn escape(text: &str, lines: Lines) -> Cow<'_, str> {
    let first = text
        .char_indices()
        .find(|&(at, c)| needs_escape(c, &text[at + c.len_utf8()..], lines));
    let Some((start, _)) = first else {
        return Cow::Borrowed(text);
    };
    let mut shown = String::with_capacity(text.len() + 16);
    shown.push_str(&text[..start]);
    for (at, c) in text[start..].char_indices() {
        let rest = &text[start + at + c.len_utf8()..];
        if !needs_escape(c, rest, lines) {
            shown.push(c);
            continue;
        }
        match c {
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            _ => shown.extend(c.escape_unicode()),
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::{is_hidden, multi_line, one_line};
    use std::borrow::Cow;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for text in [
            "Deploy build 7 to staging?",
            "",
            "ѕtaging",
            "日本語 ❤\u{fe0f}",
            "C:\\x",
        ] {
            assert!(matches!(one_line(text), Cow::Borrowed(t) if t == text));
            assert!(matches!(multi_line(text), Cow::Borrowed(t) if t == text));
        }
        assert!(matches!(multi_line("a\n\tb\r\nc"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_line_escapes_line_breaks_and_tabs_by_name() {
        assert_eq!(one_line("a\nb\r\nc\td"), "a\\nb\\r\\nc\\td");
        assert!(!one_line("title\nforged row").contains('\n'));
    }

    #[test]
    fn multi_line_keeps_newlines_tabs_and_windows_line_endings_only() {
        assert_eq!(multi_line("a\n\tb\r\nc"), "a\n\tb\r\nc");
        assert_eq!(multi_line("done\roverwritten"), "done\\roverwritten");
        assert_eq!(multi_line("end\r"), "end\\r");
    }

    #[test]
    fn escape_sequences_and_controls_are_shown_not_obeyed() {
        assert_eq!(one_line("\u{1b}[31mred\u{7}"), "\\u{1b}[31mred\\u{7}");
        assert_eq!(multi_line("\u{1b}]0;title\u{7}"), "\\u{1b}]0;title\\u{7}");
        assert_eq!(one_line("del\u{7f}"), "del\\u{7f}");
        assert_eq!(one_line("csi\u{9b}2J nel\u{85}"), "csi\\u{9b}2J nel\\u{85}");
        assert_eq!(multi_line("nul\u{0}"), "nul\\u{0}");
    }

    #[test]
    fn invisible_and_bidi_characters_are_shown_escaped_in_both_forms() {
        let cases = [
            ("staging\u{200b}", "staging\\u{200b}"),
            ("x\u{202e}y", "x\\u{202e}y"),
            ("a\u{2066}b\u{2069}", "a\\u{2066}b\\u{2069}"),
            ("rlm\u{200f}", "rlm\\u{200f}"),
            ("alm\u{61c}", "alm\\u{61c}"),
            ("line\u{2028}sep\u{2029}", "line\\u{2028}sep\\u{2029}"),
            ("soft\u{ad}hyphen", "soft\\u{ad}hyphen"),
            ("\u{feff}bom", "\\u{feff}bom"),
            ("tag\u{e0041}", "tag\\u{e0041}"),
            ("pad\u{3164}", "pad\\u{3164}"),
        ];
        for (raw, shown) in cases {
            assert_eq!(one_line(raw), shown, "one_line({raw:?})");
            assert_eq!(multi_line(raw), shown, "multi_line({raw:?})");
        }
    }

    #[test]
    fn hidden_covers_controls_format_separators_and_blank_fillers_only() {
        for c in [
            '\0',
            '\n',
            '\t',
            '\u{1b}',
            '\u{7f}',
            '\u{85}',
            '\u{9f}',
            '\u{ad}',
            '\u{61c}',
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{202a}',
            '\u{202e}',
            '\u{2060}',
            '\u{2066}',
            '\u{2069}',
            '\u{2028}',
            '\u{2029}',
            '\u{feff}',
            '\u{e0001}',
            '\u{115f}',
            '\u{ffa0}',
            '\u{34f}',
            '\u{180e}',
        ] {
            assert!(is_hidden(c), "{c:?} should be hidden");
        }
        for c in [
            'a', ' ', 'ѕ', 'é', '\u{301}', '\u{a0}', '\u{3000}', '\u{fe0f}', '\\', '❤', '日',
        ] {
            assert!(!is_hidden(c), "{c:?} should be shown as it is");
        }
    }

    #[test]
    fn the_result_never_holds_a_hidden_character_or_a_line_break() {
        let all: String = (0u32..0x3_0000).filter_map(char::from_u32).collect();
        let single = one_line(&all);
        assert!(!single.chars().any(is_hidden));
        let multi = multi_line(&all);
        assert!(!multi
            .chars()
            .any(|c| is_hidden(c) && !matches!(c, '\n' | '\t' | '\r')));
    }
}
