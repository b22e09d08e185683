//! What a bubble is, as the wording rules make it: its text ([`Notice`]), the answers its
//! buttons may give ([`Offer`], [`OfferedAnswer`]) or why it has none ([`NeedsWindow`]), the
//! limits every bubble keeps, and the line that says who asks. A leaf module: the general
//! rule (`wording`) and an agent's tool-call decision's rule (`decision`) both build these,
//! and neither imports the other's rule.

use std::borrow::Cow;

use inbox_protocol::text::one_line;
use inbox_protocol::Priority;
use serde_json::{Map, Value};

use crate::store::RequestSummary;

/// Most options a bubble offers as buttons. A fourth rarely fits a daemon's row of buttons
/// (GNOME Shell shows three), and each is a line of the body.
pub const MAX_BUTTONS: usize = 3;

/// Longest button label, in characters as shown. Daemons cut long labels (GNOME Shell after
/// about twenty characters): what a button says must be whole, so a longer label sends the
/// request to the window. The window and the body still show it in full.
pub const MAX_LABEL_CHARS: usize = 40;

/// Longest body, in characters as shown, of a bubble that carries answer buttons. About what
/// the common daemons show without cutting (dunst and GNOME Shell wrap a body of this size
/// into a few lines; both cut much longer ones): a press must never answer a question whose
/// end was hidden.
pub const MAX_BODY_CHARS: usize = 300;

/// How much of a question a bubble without buttons shows; the rest is cut with "…" (nothing
/// can be answered from that bubble, and the window shows it whole).
pub const MAX_SHOWN_QUESTION_CHARS: usize = 200;

/// What one notification says: the request itself, or a summary of a burst. Plain text,
/// every part of it from a request already through the one text policy
/// ([`inbox_protocol::text`]): hidden characters are shown escaped, and the summary, the
/// source, the question and each label are one line. The sender escapes the body for
/// daemons that read it as markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub summary: String,
    pub body: String,
    pub critical: bool,
    /// The answers this bubble's buttons give, each shown in its body. `None`: no answer
    /// buttons; clicking the bubble opens the window on the request.
    pub offer: Option<Offer>,
}

/// The one-press answers a bubble for one request offers, bound to the version it showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The request.
    pub id: String,
    /// The SHA-256 of the request file the bubble was worded from (`Request::sha256`). A
    /// press carries it, and the engine refuses it if the file has changed since.
    pub version: String,
    pub options: Vec<OfferedAnswer>,
}

/// One button, and the answer it gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedAnswer {
    /// A short name, unique in its offer: `yes` and `no` for a confirm, the option's position
    /// (`0`, `1`, `2`) for a choice.
    pub key: String,
    /// The button's text, exactly as the body lists it.
    pub label: String,
    /// The complete answers object, as the window would submit it.
    pub answers: Map<String, Value>,
}

/// Why a bubble for one request has no answer buttons, and so only opens the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeedsWindow {
    /// High and critical requests are answered where the whole request can be read.
    Priority(Priority),
    /// The request was not handed over with the announcement.
    Unread,
    SeveralQuestions,
    /// A text answer, or several picks: one press cannot give it.
    NotOnePress,
    TooManyOptions,
    /// A description (of the question, of an option) or a confirmation text a bubble
    /// cannot show, and which may decide the answer.
    DetailsToRead,
    /// A question of several lines: written to be read laid out, and its lines could pass
    /// for the bubble's own.
    SeveralLines,
    /// The body or a label would not fit: daemons would cut what the buttons answer.
    TooLong,
    /// The operator's policy keeps answer buttons off this request's bubbles.
    PolicySaysNo,
}

impl std::fmt::Display for NeedsWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self {
            NeedsWindow::Priority(Priority::Critical) => "critical priority",
            NeedsWindow::Priority(_) => "high priority",
            NeedsWindow::Unread => "not read yet",
            NeedsWindow::SeveralQuestions => "several questions",
            NeedsWindow::NotOnePress => "the answer needs more than one press",
            NeedsWindow::TooManyOptions => "too many options for buttons",
            NeedsWindow::DetailsToRead => "it has details to read",
            NeedsWindow::SeveralLines => "the question has several lines",
            NeedsWindow::TooLong => "too long for a bubble",
            NeedsWindow::PolicySaysNo => "your policy keeps buttons off it",
        };
        f.write_str(why)
    }
}

/// Who asks, most telling first: with several agents at work, the project tells them apart;
/// an app its run already names ("claude-code" in "claude-code 2.1, session 7") is not said
/// twice. One line; `None` when the request names no source.
pub(crate) fn source_line(summary: &RequestSummary) -> Option<String> {
    let source = &summary.source;
    let app = source.app.as_deref().filter(|app| {
        !source
            .run
            .as_deref()
            .is_some_and(|run| run.starts_with(app))
    });
    let from: Vec<Cow<str>> = [
        source.project.as_deref(),
        app,
        source.run.as_deref(),
        source.tool.as_deref(),
        source.host.as_deref(),
    ]
    .into_iter()
    .flatten()
    .map(one_line)
    .collect();
    (!from.is_empty()).then(|| from.join(" / "))
}
