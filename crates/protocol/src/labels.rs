//! Whether a person can tell a question's choices apart by looking: labels (and ids) with
//! characters nobody can see, and labels that look the same as another. Shared by validation
//! (`parse`) and the dialects, a leaf module so neither imports the other.

use crate::problem::Problem;
use crate::text;
use crate::wording::short;

/// One choice's label, where the file gives it, and its id (choices with the same id are
/// reported as duplicates already, so they are not compared again).
pub(crate) struct LabelAt<'a> {
    pub pointer: String,
    pub id: &'a str,
    pub label: &'a str,
}

/// The operator must be able to tell a question's choices apart by looking: a label that
/// holds a character nobody can see (a zero-width space, a bidi override, a control) is
/// refused, and so is a label that looks the same as an earlier one (`staging`, Cyrillic
/// `ѕtaging`, fullwidth `ｓｔａｇｉｎｇ`, `staging ` with a trailing space). Otherwise the
/// answer a pipeline gets could be one the operator did not mean to pick.
pub(crate) fn check_choice_labels<'a>(
    labels: impl IntoIterator<Item = LabelAt<'a>>,
    problems: &mut Vec<Problem>,
) {
    let mut seen: Vec<(String, LabelAt<'a>, usize)> = Vec::new();
    for (index, choice) in labels.into_iter().enumerate() {
        if let Some(hidden) = choice.label.chars().find(|&c| text::is_hidden(c)) {
            problems.push(Problem::new(
                &choice.pointer,
                format!(
                    "the label \"{}\" holds {}, which a person cannot see; labels must be \
                     plain visible text",
                    text::one_line(&short(choice.label)),
                    hidden_name(hidden)
                ),
            ));
        }
        // An id that differs from its label is shown beside it (`show`, the window) and
        // typed (`--set`), so it must be visible too. Reported once when id and label agree.
        if choice.id != choice.label {
            if let Some(hidden) = choice.id.chars().find(|&c| text::is_hidden(c)) {
                problems.push(Problem::new(
                    &choice.pointer,
                    format!(
                        "the choice id \"{}\" holds {}, which a person cannot see; ids must \
                         be plain visible text",
                        text::one_line(&short(choice.id)),
                        hidden_name(hidden)
                    ),
                ));
            }
        }
        let look = look_alike_key(choice.label);
        let earlier = seen
            .iter()
            .find(|(key, first, _)| *key == look && first.id != choice.id);
        if let Some((_, first, first_index)) = earlier {
            let first_label = text::one_line(&short(first.label)).into_owned();
            let label = text::one_line(&short(choice.label)).into_owned();
            let message = if first.label == choice.label {
                format!(
                    "the label \"{label}\" is already the label of choice {}; labels must be \
                     told apart at a glance",
                    first_index + 1
                )
            } else {
                format!(
                    "the label \"{label}\" looks the same as \"{first_label}\" (choice {}); \
                     labels must be told apart at a glance",
                    first_index + 1
                )
            };
            problems.push(Problem::new(&choice.pointer, message));
        } else {
            seen.push((look, choice, index));
        }
    }
}

/// What a label looks like, for comparing: invisible characters (and variation selectors)
/// dropped, compatibility forms folded (NFKC: fullwidth letters, ligatures, superscripts),
/// mapped to the confusable skeleton of Unicode TS #39 (Cyrillic `ѕ` is Latin `s`, `0` is
/// `O`), and runs of white space made one space with none at either end.
fn look_alike_key(label: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let visible: String = label
        .chars()
        .filter(|&c| {
            !text::is_hidden(c) && !matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
        })
        .nfkc()
        .collect();
    let skeleton: String = unicode_security::skeleton(&visible).collect();
    skeleton.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A hidden character named for a problem: its escape and, for the common ones, what it is.
fn hidden_name(c: char) -> String {
    let name = match c {
        '\u{200b}' => "a zero-width space ",
        '\u{200c}' => "a zero-width non-joiner ",
        '\u{200d}' => "a zero-width joiner ",
        '\u{2060}' => "a word joiner ",
        '\u{feff}' => "a byte order mark ",
        '\u{ad}' => "a soft hyphen ",
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => "a bidirectional control ",
        '\u{200e}' | '\u{200f}' | '\u{61c}' => "a direction mark ",
        '\u{2028}' | '\u{2029}' => "a line separator ",
        c if c.is_control() => "a control character ",
        _ => "an invisible character ",
    };
    format!("{name}({})", c.escape_unicode())
}
