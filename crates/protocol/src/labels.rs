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
/// `ѕtaging`, fullwidth `ｓｔａｇｉｎｇ`, `staging ` with a trailing space, `sta ging` with a
/// hair space inside). Otherwise the
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
/// `O`), and every white space dropped.
///
/// White space is dropped wherever it is, not only at the ends: how wide a space looks
/// depends on the character and the font, from nothing much (the hair space U+200A, the
/// thin space U+2009, the narrow no-break space U+202F) to a whole letter (U+3000), so
/// `pr` + U+200A + `od` reads as `prod`. Spaces alone therefore never tell two choices
/// apart. What counts as white space is Unicode's White_Space property (every Zs space,
/// tabs and line ends) applied to the skeleton, which also maps the characters TS #39 calls
/// confusable with a space; the invisible separators (U+200B–U+200F, U+2060–U+2064, U+FEFF)
/// are format characters and were dropped as hidden before.
fn look_alike_key(label: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let visible: String = label
        .chars()
        .filter(|&c| {
            !text::is_hidden(c) && !matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
        })
        .nfkc()
        .collect();
    unicode_security::skeleton(&visible)
        .filter(|c| !c.is_whitespace())
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn problems_of(labels: &[&str]) -> Vec<Problem> {
        let mut problems = Vec::new();
        let ids: Vec<String> = (0..labels.len()).map(|n| format!("c{n}")).collect();
        check_choice_labels(
            labels
                .iter()
                .zip(&ids)
                .enumerate()
                .map(|(n, (label, id))| LabelAt {
                    pointer: format!("/questions/0/choices/{n}/label"),
                    id,
                    label,
                }),
            &mut problems,
        );
        problems
    }

    /// A space inside a label, however narrow or wide, does not make it another choice:
    /// `pr` + a hair space + `od` reads as `prod`.
    #[test]
    fn a_label_with_any_unicode_space_inside_looks_the_same() {
        for space in [
            '\u{200a}', // hair space
            '\u{2009}', // thin space
            '\u{2006}', // six-per-em space
            '\u{2008}', // punctuation space
            '\u{202f}', // narrow no-break space
            '\u{205f}', // medium mathematical space
            '\u{00a0}', // no-break space
            '\u{3000}', // ideographic space
            ' ',
        ] {
            let spaced = format!("pr{space}od");
            let problems = problems_of(&["prod", &spaced]);
            assert_eq!(
                problems.len(),
                1,
                "{:?}: {problems:?}",
                space.escape_unicode()
            );
            assert_eq!(problems[0].pointer, "/questions/0/choices/1/label");
            assert!(
                problems[0]
                    .message
                    .contains("looks the same as \"prod\" (choice 1)"),
                "{problems:?}"
            );
            // And the other way round, with the spaced label first.
            assert_eq!(problems_of(&[&spaced, "prod"]).len(), 1, "{spaced:?} first");
        }
    }

    /// The invisible separators are refused as hidden and also compared without them.
    #[test]
    fn a_label_with_an_invisible_separator_is_hidden_and_looks_the_same() {
        for invisible in ['\u{200b}', '\u{200e}', '\u{2060}', '\u{feff}'] {
            let problems = problems_of(&["prod", &format!("pr{invisible}od")]);
            assert_eq!(
                problems.len(),
                2,
                "{:?}: {problems:?}",
                invisible.escape_unicode()
            );
            assert!(problems[0].message.contains("which a person cannot see"));
            assert!(problems[1].message.contains("looks the same as"));
        }
    }

    #[test]
    fn labels_that_differ_in_more_than_spacing_are_told_apart() {
        assert!(problems_of(&["prod", "pr od2", "staging", "pro d-eu"]).is_empty());
    }
}
