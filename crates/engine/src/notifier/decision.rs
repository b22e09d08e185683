//! The bubble for an agent's tool-call decision ([`inbox_protocol::decision::ToolDecision`]):
//! what the agent wants to run, shown whole, and the decision's options as buttons, in the
//! window's order and with the window's number keys.
//!
//! An agent's permission prompt is high priority, asks two questions (the decision and an
//! optional reason) and keeps what it asks about in a markdown description: by the general
//! rule ([`super::offer`]) its bubble could never carry buttons. Its shape is fixed, though:
//! one press answers the decision, and the reason may stay empty (Deny from a bubble tells
//! the agent no reason, as Esc does in the window). So such a bubble gets its buttons when
//! everything the operator judges fits whole: the question, the description rendered as
//! plain text (code blocks verbatim: the command, the diff), and every option. If any of it
//! would not fit, or the description uses markdown a bubble cannot show as text (links,
//! images, HTML, lists, tables...), the bubble only opens the window, as before. A bubble
//! never carries buttons under a cut or reshaped command.
//!
//! Options are numbered as the window's keys (`1. Allow once`, `2. Deny`, ...), in the body
//! and on the buttons: a daemon cuts a long button label (GNOME Shell after about twenty
//! characters), and the number still ties the button to its option, listed whole in the
//! body. No line of the description may start with the bubble's option mark `•`, so the
//! description cannot pass for options; every line went through the one text policy.

use inbox_protocol::decision::ToolDecision;
use inbox_protocol::text::{multi_line, one_line};
use inbox_protocol::Priority;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value};

use super::notice::{source_line, NeedsWindow, Notice, Offer, OfferedAnswer};
use super::Announcement;

/// Most rows a decision's bubble body may take, counting each line as the rows it wraps
/// into at [`ROW_CHARS`] characters a row. dunst's default bubble is 300 px wide and at
/// most 300 px high (`width`, `height` in its dunstrc), and it ellipsizes what does not
/// fit, in the middle by default: at its default fonts (Monospace 8, or DejaVu Sans 9) a
/// row is 13 to 15 px and 45 to 50 characters, so 16 rows of 40 fit below the summary
/// with room to spare.
pub const MAX_DECISION_ROWS: usize = 16;

/// Characters a bubble row is counted as holding, fewer than the daemons fit.
pub const ROW_CHARS: usize = 40;

/// Most options a decision's bubble carries as buttons: the window's number keys, 1 to 9.
/// More than the general rule's three ([`super::notice::MAX_BUTTONS`]) because Claude Code's
/// usual prompt has four (Allow once, Deny, its suggested rule for this session and saved),
/// and a decision's buttons are numbered: a daemon that shows fewer buttons (GNOME Shell
/// shows three) shows the first ones, each tied by its number to its option, and every
/// option is listed whole in the body, so none can be mistaken for another or missed.
pub const MAX_DECISION_BUTTONS: usize = 9;

/// The bubble for a recognised decision, with its buttons, or why it has none.
pub(super) fn decision_bubble(
    announcement: &Announcement,
    request: &inbox_protocol::Request,
    _decision: ToolDecision,
) -> Result<Notice, NeedsWindow> {
    // Critical: answered where the whole request can be read, whatever its shape.
    if announcement.is_critical() || request.priority == Priority::Critical {
        return Err(NeedsWindow::Priority(Priority::Critical));
    }
    let question = &request.questions[0];
    if question.question.contains(['\n', '\r']) {
        return Err(NeedsWindow::SeveralLines);
    }
    if question.choices.len() > MAX_DECISION_BUTTONS {
        return Err(NeedsWindow::TooManyOptions);
    }
    let description = match question.description.as_deref() {
        Some(markdown) => plain_text(markdown).ok_or(NeedsWindow::DetailsToRead)?,
        None => String::new(),
    };
    let description = multi_line(&description);
    // The bubble's own lines start with "•": a description line that did could pose as an
    // option.
    if description
        .lines()
        .any(|line| line.trim_start().starts_with('•'))
    {
        return Err(NeedsWindow::SeveralLines);
    }
    let options: Vec<OfferedAnswer> = question
        .choices
        .iter()
        .enumerate()
        .map(|(index, choice)| OfferedAnswer {
            key: index.to_string(),
            // The window's number key for it, then the option as the window lists it.
            label: format!("{}. {}", index + 1, one_line(&choice.label)),
            // The decision alone: the reason is optional, and a press gives none.
            answers: Map::from_iter([(question.id.clone(), Value::String(choice.id.clone()))]),
        })
        .collect();
    let mut lines: Vec<String> = source_line(&announcement.summary).into_iter().collect();
    lines.push(one_line(&question.question).into_owned());
    lines.extend(description.lines().map(str::to_owned));
    lines.extend(options.iter().map(|o| format!("• {}", o.label)));
    if rows(&lines) > MAX_DECISION_ROWS {
        return Err(NeedsWindow::TooLong);
    }
    Ok(Notice {
        summary: announcement.title(),
        body: lines.join("\n"),
        critical: false,
        offer: Some(Offer {
            id: announcement.summary.id.clone(),
            version: request.sha256.clone(),
            options,
        }),
    })
}

/// The rows `lines` take in a bubble, each wrapping at [`ROW_CHARS`].
fn rows(lines: &[String]) -> usize {
    lines
        .iter()
        .map(|line| line.chars().count().div_ceil(ROW_CHARS).max(1))
        .sum()
}

/// `markdown` as the plain text a person reads in the window, or `None` if it uses more
/// than paragraphs, emphasis, code spans, code blocks and line breaks (what the hook
/// writes): a link's target, an image, HTML, a list or a table has no faithful plain-text
/// form in a bubble. Parsed with the window's options, so it is read as the window reads it.
/// Code blocks come out verbatim, line by line; paragraphs one after the other, without the
/// blank line between them.
pub fn plain_text(markdown: &str) -> Option<String> {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::Paragraph | Tag::Strong | Tag::Emphasis)
            | Event::End(TagEnd::Strong | TagEnd::Emphasis) => {}
            Event::End(TagEnd::Paragraph) => lines.push(std::mem::take(&mut line)),
            Event::Start(Tag::CodeBlock(_)) => {}
            Event::End(TagEnd::CodeBlock) => {
                // The block's text ends with its last line's newline.
                let text = std::mem::take(&mut line);
                lines.extend(
                    text.strip_suffix('\n')
                        .unwrap_or(&text)
                        .split('\n')
                        .map(str::to_owned),
                );
            }
            Event::Text(text) | Event::Code(text) => line.push_str(&text),
            Event::SoftBreak | Event::HardBreak => lines.push(std::mem::take(&mut line)),
            _ => return None,
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hooks_description_reads_as_its_text_with_the_command_verbatim() {
        let markdown = "**Run a shell command** in `/home/dana/src/shop`:\n\n\
                        ```sh\ngit push --force  origin *  \\\n  && rm -rf ./build\n```\n\
                        \nClaude's note: Push the rebased branch\\.\n\
                        \nPermission mode: `default`\n";
        assert_eq!(
            plain_text(markdown).as_deref(),
            Some(
                "Run a shell command in /home/dana/src/shop:\n\
                 git push --force  origin *  \\\n  && rm -rf ./build\n\
                 Claude's note: Push the rebased branch.\n\
                 Permission mode: default"
            )
        );
        // A diff keeps its blank lines and its leading marks.
        assert_eq!(
            plain_text("````diff\n-a\n\n+b\n````\n").as_deref(),
            Some("-a\n\n+b")
        );
    }

    #[test]
    fn markdown_without_a_faithful_plain_form_is_refused() {
        for markdown in [
            "[docs](https://evil.example)",
            "![x](https://tracker.example/p.gif)",
            "<b>hi</b>",
            "- one\n- two",
            "# Heading",
            "> quoted",
            "| a |\n|---|\n| b |",
            "~~rm -rf /~~",
            "---",
        ] {
            assert_eq!(plain_text(markdown), None, "{markdown}");
        }
    }
}
