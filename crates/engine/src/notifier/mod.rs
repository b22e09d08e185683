//! Telling the operator, the engine's half: the [`Notifier`] trait the front ends implement,
//! what the engine hands over ([`Announcement`]), the wording of a bubble ([`compose`]), the
//! answers it may offer as buttons ([`offer`]) and its timing ([`Coalescer`]).
//!
//! Everything here is pure: no D-Bus, no thread, no clock of its own. Sending lives in the
//! `inbox-notifications` crate, which both front ends (the `watch` daemon and the desktop
//! app) use, and which drives the [`Coalescer`] from its own thread. The split keeps the
//! engine free of GUI and bus code, and keeps the rules (what a bubble says, what its buttons
//! answer, when it goes out) testable with a fake clock.
//!
//! A bubble says what its buttons do. Its summary is the request's title; its body names who
//! asks and shows the question, and a bubble with answer buttons lists, one per line, each
//! answer a button gives ("• Yes", "• No", or each choice's label), with nothing cut: when a
//! request cannot be shown that way (see [`offer`] for the rule and its limits), or is of
//! high or critical priority, its bubble has no answer buttons and clicking it opens the
//! window on the request. Every button is bound to the version of the request the bubble
//! was worded from ([`Offer::version`], the file's SHA-256), so a press can never answer a
//! file that changed after it was shown. All request text goes through the one text policy
//! ([`inbox_protocol::text`]): hidden characters are shown escaped and one-line fields stay
//! one line. The body is plain text; the sender escapes it for daemons that read markup.

use std::borrow::{Borrow, Cow};
use std::time::{Duration, Instant};

use inbox_policy::Loudness;
use inbox_protocol::text::one_line;
use inbox_protocol::{Priority, QuestionKind, Request};
use serde_json::{Map, Value};

use crate::store::{RequestDetail, RequestSummary};

/// Something that can tell the operator about new requests.
///
/// `announce` runs on the engine's thread, between two batches: it must return at once,
/// whatever the notification daemon does (queue the work for a thread of your own). The
/// implementation, not the engine, reports [`crate::Event::Notified`], once a bubble is
/// actually shown.
pub trait Notifier: Send {
    fn announce(&self, fresh: Vec<Announcement>);
}

/// One new pending request, as the engine hands it to a [`Notifier`]: the summary the bubble
/// is worded from, and the normalised request, so that a front end can offer answer buttons
/// without opening the database again.
#[derive(Debug, Clone)]
pub struct Announcement {
    pub summary: RequestSummary,
    pub request: Option<Request>,
    /// How loudly, as the operator's policy says (a `critical` request is always loud).
    pub loudness: Loudness,
    /// Whether the policy lets a bubble for it carry answer buttons.
    pub buttons: bool,
    /// Set when this is an escalation step's reminder, not the first announcement: which
    /// step.
    pub escalation: Option<u32>,
}

impl Announcement {
    /// A request just placed and ingested, pending, as the engine would announce it (for
    /// front ends' and tests' own announcements).
    pub fn pending(
        id: &str,
        request: Request,
        placed_at: chrono::DateTime<chrono::Utc>,
    ) -> Announcement {
        Announcement {
            summary: RequestSummary {
                id: id.to_owned(),
                state: crate::store::State::Pending,
                title: request.display_title().to_owned(),
                source: request.source.clone(),
                priority: request.priority,
                mode: request.mode,
                question_count: request.questions.len(),
                placed_at,
                deadline: None,
                settled_at: None,
                answered_by: None,
                unwritten: None,
                blocked: None,
                placed_by: None,
                judgement: None,
                snoozed_until: None,
            },
            request: Some(request),
            loudness: Loudness::Normal,
            buttons: true,
            escalation: None,
        }
    }
}

impl From<RequestDetail> for Announcement {
    /// As the judgement kept with the request says (normal, with buttons, without one).
    fn from(detail: RequestDetail) -> Announcement {
        let (loudness, buttons) = detail
            .summary
            .judgement
            .as_ref()
            .map_or((Loudness::Normal, true), |j| (j.notify, j.buttons));
        Announcement {
            summary: detail.summary,
            request: detail.request,
            loudness,
            buttons,
            escalation: None,
        }
    }
}

impl Announcement {
    /// Whether its bubble is critical: by the request's priority or the policy's word.
    pub fn is_critical(&self) -> bool {
        self.summary.priority == Priority::Critical || self.loudness == Loudness::Critical
    }

    /// The bubble's title: the request's, and for an escalation's reminder, saying so.
    fn title(&self) -> String {
        let title = one_line(&self.summary.title);
        match self.escalation {
            Some(_) => format!("Still waiting: {title}"),
            None => title.into_owned(),
        }
    }
}

/// Notifies nobody: `watch --no-notify`, tests.
pub struct Silent;

impl Notifier for Silent {
    fn announce(&self, _fresh: Vec<Announcement>) {}
}

/// Hands new requests to a notifier's own thread through its bounded queue, never waiting: a
/// stuck daemon or server costs that one bubble or push (said in the log), never a request,
/// which the inbox itself still has. `what` names what is lost ("bubble", "push").
pub fn hand_over(
    queue: &crossbeam_channel::Sender<Vec<Announcement>>,
    fresh: Vec<Announcement>,
    what: &str,
) {
    if fresh.is_empty() {
        return;
    }
    match queue.try_send(fresh) {
        Ok(()) | Err(crossbeam_channel::TrySendError::Disconnected(_)) => {}
        Err(crossbeam_channel::TrySendError::Full(dropped)) => tracing::warn!(
            "{what} queue full; no {what} for {} new request(s)",
            dropped.len()
        ),
    }
}

/// A notifier that can be put in, swapped or taken out while the loop runs: the desktop
/// app's pushes to a phone follow its settings without restarting the inbox.
#[derive(Clone, Default)]
pub struct NotifierSlot(std::sync::Arc<std::sync::Mutex<Option<Box<dyn Notifier>>>>);

impl NotifierSlot {
    pub fn set(&self, notifier: Option<Box<dyn Notifier>>) {
        // The old one is dropped outside the lock: its thread may take a moment to end.
        let old = std::mem::replace(
            &mut *self.0.lock().unwrap_or_else(|p| p.into_inner()),
            notifier,
        );
        drop(old);
    }
}

impl Notifier for NotifierSlot {
    fn announce(&self, fresh: Vec<Announcement>) {
        if let Some(notifier) = self.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            notifier.announce(fresh);
        }
    }
}

/// Tells several notifiers the same news: desktop bubbles and pushes to a phone, each with
/// its own thread and coalescing.
pub struct Fanout(pub Vec<Box<dyn Notifier>>);

impl Notifier for Fanout {
    fn announce(&self, fresh: Vec<Announcement>) {
        if let Some((last, others)) = self.0.split_last() {
            for notifier in others {
                notifier.announce(fresh.clone());
            }
            last.announce(fresh);
        }
    }
}

/// How long after a bubble further requests are held back, to be shown together when it
/// ends.
///
/// 300 ms is short enough to read as "at once": a request that lands just after another
/// waits at most this long, well under the second a person notices. It is long enough to
/// catch a burst: an asker that writes many files in one go renames them within a few
/// milliseconds and the engine ingests them in batches of a few milliseconds each, so forty
/// files give the first request's bubble and one summary, not forty bubbles. Under a steady
/// stream it also caps the rate at about three bubbles a second.
pub const QUIET_WINDOW: Duration = Duration::from_millis(300);

/// The least time between two bubbles: [`QUIET_WINDOW`]. (The name the desktop benchmark
/// spaces its requests by.)
pub const MIN_GAP: Duration = QUIET_WINDOW;

/// What one bubble stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery<T> {
    /// A single request, on a bubble of its own (which may carry answer buttons).
    One(T),
    /// Several requests, on one summary bubble.
    Summary(Vec<T>),
}

impl<T> Delivery<T> {
    fn of(mut items: Vec<T>) -> Delivery<T> {
        match items.len() {
            1 => Delivery::One(items.remove(0)),
            _ => Delivery::Summary(items),
        }
    }

    /// The requests this bubble stands for, in the order they arrived.
    pub fn items(&self) -> &[T] {
        match self {
            Delivery::One(one) => std::slice::from_ref(one),
            Delivery::Summary(many) => many,
        }
    }

    pub fn into_items(self) -> Vec<T> {
        match self {
            Delivery::One(one) => vec![one],
            Delivery::Summary(many) => many,
        }
    }

    pub fn is_summary(&self) -> bool {
        matches!(self, Delivery::Summary(_))
    }
}

/// When bubbles go out, as a state machine over the times it is told (no clock of its own,
/// so tests drive it with made-up instants).
///
/// The rule: a request that arrives when no bubble went out within the last window is
/// delivered at once, on its own. Requests that arrive inside the window are held; when the
/// window ends they are delivered together: one bubble if one arrived, one summary if
/// several. That delivery starts a new window. So requests a second apart each get their
/// own bubble without delay, and a burst gets its first request's bubble at once and one
/// summary for the rest.
///
/// The sender waits with `recv_deadline(`[`Coalescer::deadline`]`)`, feeds what it receives
/// to [`Coalescer::arrive`] and calls [`Coalescer::due`] when the wait times out.
#[derive(Debug)]
pub struct Coalescer<T> {
    window: Duration,
    /// When the last bubble went out; `None` before the first.
    last_bubble: Option<Instant>,
    /// What arrived inside the window. Never empty unless `last_bubble` is set.
    held: Vec<T>,
}

impl<T> Coalescer<T> {
    pub fn new(window: Duration) -> Coalescer<T> {
        Coalescer {
            window,
            last_bubble: None,
            held: Vec::new(),
        }
    }

    /// Takes requests that arrived at `now`; returns the bubble to send now, if any.
    pub fn arrive(
        &mut self,
        now: Instant,
        items: impl IntoIterator<Item = T>,
    ) -> Option<Delivery<T>> {
        let mut items = items.into_iter();
        let quiet = self
            .last_bubble
            .is_none_or(|last| now.saturating_duration_since(last) >= self.window);
        if quiet && self.held.is_empty() {
            // The first one goes out at once; the rest of its batch arrived inside the
            // window that bubble opens.
            let first = items.next()?;
            self.last_bubble = Some(now);
            self.held.extend(items);
            return Some(Delivery::One(first));
        }
        self.held.extend(items);
        // The window may have ended before the sender noticed: then these join the held.
        self.due(now)
    }

    /// When the held requests are due; `None` when nothing is held.
    pub fn deadline(&self) -> Option<Instant> {
        if self.held.is_empty() {
            return None;
        }
        self.last_bubble.map(|last| last + self.window)
    }

    /// The held requests, if their window has ended by `now`.
    pub fn due(&mut self, now: Instant) -> Option<Delivery<T>> {
        if now < self.deadline()? {
            return None;
        }
        self.last_bubble = Some(now);
        Some(Delivery::of(std::mem::take(&mut self.held)))
    }

    /// How many requests wait for the window to end.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

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

/// Turns the requests of one bubble into what it says. With `buttons` (the front end takes
/// presses: the desktop app), a bubble for one request offers its answers as buttons when
/// [`offer`] allows, and otherwise says why it must be answered in the window; without
/// (`watch`), it only tells.
pub fn compose<A: Borrow<Announcement>>(items: &[A], buttons: bool) -> Option<Notice> {
    match items {
        [] => None,
        [one] => {
            let one = one.borrow();
            Some(match buttons.then(|| with_buttons(one)) {
                Some(Ok(notice)) => notice,
                Some(Err(why)) => without_buttons(one, Some(why)),
                None => without_buttons(one, None),
            })
        }
        many => {
            let critical = many.iter().any(|a| a.borrow().is_critical());
            let mut body: Vec<String> = many
                .iter()
                .take(3)
                .map(|a| format!("• {}", one_line(&a.borrow().summary.title)))
                .collect();
            if many.len() > 3 {
                body.push(format!("and {} more", many.len() - 3));
            }
            Some(Notice {
                summary: format!("{} new requests need an answer", many.len()),
                body: body.join("\n"),
                critical,
                offer: None,
            })
        }
    }
}

/// The answers a bubble for `announcement` may offer as buttons, or why it may not.
///
/// The rule: one press must be a whole answer to a question the bubble shows whole. So the
/// request has normal or low priority, exactly one question, a confirm (Yes, No) or a choice
/// of at most [`MAX_BUTTONS`] options, nothing to read beyond the question and the labels
/// (no description on the question or an option, no confirmation text), a question of one
/// line, labels of at most [`MAX_LABEL_CHARS`] and a body of at most [`MAX_BODY_CHARS`]
/// characters as shown.
pub fn offer(announcement: &Announcement) -> Result<Offer, NeedsWindow> {
    with_buttons(announcement).map(|notice| notice.offer.expect("a bubble with buttons"))
}

fn with_buttons(announcement: &Announcement) -> Result<Notice, NeedsWindow> {
    let summary = &announcement.summary;
    let request: &Request = announcement.request.as_ref().ok_or(NeedsWindow::Unread)?;
    if !announcement.buttons {
        return Err(NeedsWindow::PolicySaysNo);
    }
    if matches!(request.priority, Priority::High | Priority::Critical) {
        return Err(NeedsWindow::Priority(request.priority));
    }
    let [question] = request.questions.as_slice() else {
        return Err(NeedsWindow::SeveralQuestions);
    };
    if question.description.is_some()
        || request.confirm_title.is_some()
        || request.confirm_description.is_some()
    {
        return Err(NeedsWindow::DetailsToRead);
    }
    if question.question.contains(['\n', '\r']) {
        return Err(NeedsWindow::SeveralLines);
    }
    let answer = |value: Value| Map::from_iter([(question.id.clone(), value)]);
    let options: Vec<OfferedAnswer> = match question.kind {
        QuestionKind::Confirm => [("yes", "Yes", true), ("no", "No", false)]
            .into_iter()
            .map(|(key, label, value)| OfferedAnswer {
                key: key.into(),
                label: label.into(),
                answers: answer(Value::Bool(value)),
            })
            .collect(),
        QuestionKind::Choice => {
            if question.choices.len() > MAX_BUTTONS {
                return Err(NeedsWindow::TooManyOptions);
            }
            if question.choices.iter().any(|c| c.description.is_some()) {
                return Err(NeedsWindow::DetailsToRead);
            }
            question
                .choices
                .iter()
                .enumerate()
                .map(|(index, choice)| OfferedAnswer {
                    key: index.to_string(),
                    label: one_line(&choice.label).into_owned(),
                    answers: answer(Value::String(choice.id.clone())),
                })
                .collect()
        }
        QuestionKind::MultiChoice | QuestionKind::Text => return Err(NeedsWindow::NotOnePress),
    };
    if options
        .iter()
        .any(|o| o.label.chars().count() > MAX_LABEL_CHARS)
    {
        return Err(NeedsWindow::TooLong);
    }
    // Every line is one line of text (the policy escapes line breaks in the source and the
    // labels; the question has none): the options below cannot be forged by what is above.
    let mut lines: Vec<Cow<str>> = source_line(summary).into_iter().map(Cow::Owned).collect();
    lines.push(one_line(&question.question));
    lines.extend(options.iter().map(|o| Cow::Owned(format!("• {}", o.label))));
    let body = lines.join("\n");
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(NeedsWindow::TooLong);
    }
    Ok(Notice {
        summary: announcement.title(),
        body,
        critical: announcement.is_critical(),
        offer: Some(Offer {
            id: summary.id.clone(),
            version: request.sha256.clone(),
            options,
        }),
    })
}

/// A bubble that only tells: who asks, the question (cut if long) or how many there are,
/// and, where presses are taken, why it must be answered in the window.
fn without_buttons(announcement: &Announcement, why: Option<NeedsWindow>) -> Notice {
    let summary = &announcement.summary;
    let mut lines: Vec<String> = source_line(summary).into_iter().collect();
    let question = match announcement
        .request
        .as_ref()
        .map(|r| r.questions.as_slice())
    {
        Some([only]) => Some(cut(&one_line(&only.question), MAX_SHOWN_QUESTION_CHARS)),
        _ => None,
    };
    lines.push(question.unwrap_or_else(|| match summary.question_count {
        1 => "1 question".to_owned(),
        n => format!("{n} questions"),
    }));
    if let Some(why) = why {
        lines.push(format!("Click to answer in the window ({why})."));
    }
    Notice {
        summary: announcement.title(),
        body: lines.join("\n"),
        critical: announcement.is_critical(),
        offer: None,
    }
}

/// Who asks, most telling first: with several agents at work, the project tells them apart;
/// an app its run already names ("claude-code" in "claude-code 2.1, session 7") is not said
/// twice. One line; `None` when the request names no source.
fn source_line(summary: &RequestSummary) -> Option<String> {
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

/// `text` cut to at most `max` characters, "…" marking a cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if text[at..].chars().nth(1).is_some() => format!("{}…", &text[..at]),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;
    use chrono::Utc;
    use serde_json::json;

    /// A request as the engine announces it: `json` is the request file.
    fn announced(id: &str, json: serde_json::Value) -> Announcement {
        let request = inbox_protocol::parse_request(json.to_string().as_bytes(), Some(id))
            .unwrap_or_else(|problems| panic!("{json}: {problems:?}"));
        Announcement::pending(id, request, Utc::now())
    }

    /// A one-question confirm titled `title`, asking `question`, from planu's run r-1.
    fn confirm(title: &str, question: &str) -> serde_json::Value {
        json!({"title": title, "source": {"app": "planu", "run": "r-1"},
               "questions": [{"id": "go", "type": "confirm", "question": question}]})
    }

    fn with(
        mut request: serde_json::Value,
        key: &str,
        value: serde_json::Value,
    ) -> serde_json::Value {
        request[key] = value;
        request
    }

    fn labels(notice: &Notice) -> Vec<&str> {
        notice
            .offer
            .iter()
            .flat_map(|offer| offer.options.iter().map(|o| o.label.as_str()))
            .collect()
    }

    #[test]
    fn a_confirm_with_buttons_shows_its_question_and_what_each_button_answers() {
        // The reported case: a harmless title over a destructive question.
        let asked = announced(
            "r1",
            confirm(
                "Run unit tests?",
                "Force-push main and delete the production database?",
            ),
        );
        let notice = compose(&[&asked], true).unwrap();
        assert_eq!(notice.summary, "Run unit tests?");
        assert_eq!(
            notice.body,
            "planu / r-1\nForce-push main and delete the production database?\n• Yes\n• No"
        );
        assert!(!notice.critical);
        let offer = notice.offer.unwrap();
        assert_eq!(offer.id, "r1");
        // Bound to the very file the bubble was worded from.
        assert_eq!(offer.version, asked.request.as_ref().unwrap().sha256);
        assert_eq!(offer.version.len(), 64);
        let keys: Vec<&str> = offer.options.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["yes", "no"]);
        assert_eq!(
            offer.options[0].answers,
            Map::from_iter([("go".into(), json!(true))])
        );
        assert_eq!(
            offer.options[1].answers,
            Map::from_iter([("go".into(), json!(false))])
        );
        assert_eq!(super::offer(&asked), Ok(offer));
    }

    #[test]
    fn a_small_choice_lists_each_option_its_buttons_stand_for() {
        let asked = announced(
            "where",
            json!({"questions": [{"id": "env", "type": "single_choice", "question": "Where to?",
                "choices": [{"id": "stg", "label": "Staging"}, {"id": "prod", "label": "Production"}]}]}),
        );
        let notice = compose(&[asked], true).unwrap();
        // No title and no source: the question is the summary, and still the body.
        assert_eq!(notice.summary, "Where to?");
        assert_eq!(notice.body, "Where to?\n• Staging\n• Production");
        let offer = notice.offer.unwrap();
        assert_eq!(offer.options[1].key, "1");
        assert_eq!(offer.options[1].answers["env"], json!("prod"));
    }

    #[test]
    fn without_buttons_watch_shows_the_question_and_offers_nothing() {
        let asked = announced("r1", confirm("Deploy", "Deploy build 7?"));
        let notice = compose(&[asked], false).unwrap();
        assert_eq!(notice.body, "planu / r-1\nDeploy build 7?");
        assert_eq!(notice.offer, None);
    }

    #[test]
    fn high_and_critical_requests_only_open_the_window() {
        for (priority, said) in [("high", "high priority"), ("critical", "critical priority")] {
            let asked = announced(
                "r1",
                with(
                    confirm("Deploy", "Deploy build 7?"),
                    "priority",
                    json!(priority),
                ),
            );
            let notice = compose(&[&asked], true).unwrap();
            assert_eq!(notice.offer, None, "{priority}");
            assert_eq!(
                notice.body,
                format!("planu / r-1\nDeploy build 7?\nClick to answer in the window ({said}).")
            );
            assert_eq!(notice.critical, priority == "critical");
            assert!(matches!(
                super::offer(&asked),
                Err(NeedsWindow::Priority(_))
            ));
        }
        let low = announced(
            "r1",
            with(confirm("D", "Deploy?"), "priority", json!("low")),
        );
        assert!(super::offer(&low).is_ok());
    }

    #[test]
    fn what_a_bubble_cannot_show_whole_gets_no_buttons() {
        let long_question = "Really? ".repeat(40);
        let long_label = "L".repeat(MAX_LABEL_CHARS + 1);
        let choice = |choices: serde_json::Value| {
            json!({"questions": [{"id": "c", "type": "single_choice", "question": "Which?",
                                  "choices": choices}]})
        };
        let cases = [
            (
                json!({"questions": [{"type": "yes_no", "question": "One?"},
                                     {"type": "yes_no", "question": "Two?"}]}),
                NeedsWindow::SeveralQuestions,
            ),
            (
                json!({"questions": [{"type": "free_text", "question": "Why?"}]}),
                NeedsWindow::NotOnePress,
            ),
            (
                json!({"questions": [{"type": "multi_choice", "question": "Which?",
                                      "choices": [{"id": "a", "label": "A"}]}]}),
                NeedsWindow::NotOnePress,
            ),
            (
                choice(json!([{"id": "a", "label": "A"}, {"id": "b", "label": "B"},
                              {"id": "c", "label": "C"}, {"id": "d", "label": "D"}])),
                NeedsWindow::TooManyOptions,
            ),
            (
                choice(
                    json!([{"id": "a", "label": "A", "description": "drops the table"},
                              {"id": "b", "label": "B"}]),
                ),
                NeedsWindow::DetailsToRead,
            ),
            (
                json!({"questions": [{"type": "yes_no", "question": "Go?",
                                      "description": "This **deletes** production."}]}),
                NeedsWindow::DetailsToRead,
            ),
            (
                with(
                    confirm("T", "Go?"),
                    "confirm_description",
                    json!("Writes compose.yaml"),
                ),
                NeedsWindow::DetailsToRead,
            ),
            (
                confirm("T", "Run tests?\nYes means: wipe the disk"),
                NeedsWindow::SeveralLines,
            ),
            (confirm("T", &long_question), NeedsWindow::TooLong),
            (
                choice(json!([{"id": "a", "label": long_label}, {"id": "b", "label": "B"}])),
                NeedsWindow::TooLong,
            ),
            // A LangGraph interrupt: its Accept keeps the action's arguments in a description.
            (
                json!({"action_request": {"action": "send_email", "args": {"to": "ops@example.com"}},
                       "config": {"allow_accept": true, "allow_ignore": true}}),
                NeedsWindow::DetailsToRead,
            ),
        ];
        for (json, why) in cases {
            let asked = announced("r1", json.clone());
            assert_eq!(super::offer(&asked), Err(why), "{json}");
            let notice = compose(&[&asked], true).unwrap();
            assert_eq!(notice.offer, None, "{json}");
            assert!(
                notice
                    .body
                    .ends_with(&format!("Click to answer in the window ({why}).")),
                "{json}: {}",
                notice.body
            );
        }
        // Not read with the announcement: no buttons either.
        let mut unread = announced("r1", confirm("T", "Go?"));
        unread.request = None;
        assert_eq!(super::offer(&unread), Err(NeedsWindow::Unread));
    }

    #[test]
    fn a_long_question_is_cut_only_where_nothing_can_be_answered() {
        let long = format!("{}END", "word ".repeat(100));
        let asked = announced("r1", confirm("T", &long));
        let notice = compose(&[asked], true).unwrap();
        let question = notice.body.lines().nth(1).unwrap();
        assert_eq!(question.chars().count(), MAX_SHOWN_QUESTION_CHARS);
        assert!(question.ends_with('…') && !question.contains("END"));
        assert_eq!(notice.offer, None);
    }

    #[test]
    fn markup_in_a_request_stays_text_for_the_sender_to_escape() {
        let asked = announced(
            "r1",
            json!({"title": "Ship <b>it</b> & go",
                   "source": {"app": "planu <i>ops</i>", "run": "<a href=\"https://evil\">r</a>"},
                   "questions": [{"id": "c", "type": "single_choice", "question": "Pick <u>one</u>",
                                  "choices": [{"id": "a", "label": "<b>A</b> & co"}]}]}),
        );
        let notice = compose(&[asked], true).unwrap();
        // Plain text, every character as asked: escaping for markup is the sender's (it
        // knows whether the daemon reads markup).
        assert_eq!(notice.summary, "Ship <b>it</b> & go");
        assert_eq!(
            notice.body,
            "planu <i>ops</i> / <a href=\"https://evil\">r</a>\nPick <u>one</u>\n• <b>A</b> & co"
        );
        assert_eq!(labels(&notice), ["<b>A</b> & co"]);
    }

    #[test]
    fn hidden_characters_and_line_breaks_are_shown_escaped_everywhere() {
        let mut asked = announced(
            "r1",
            json!({"title": "Deploy\u{202e}gnitset",
                   "source": {"app": "planu\nforged: row", "run": "r\u{200b}1"},
                   "questions": [{"id": "c", "type": "single_choice", "question": "Where\u{2028}to?",
                                  "choices": [{"id": "a", "label": "staging"},
                                              {"id": "b", "label": "prod"}]}]}),
        );
        // Parsing refuses such labels now; a request stored before that rule, or read some
        // other way, must still not bring them to a bubble raw.
        let request = asked.request.as_mut().unwrap();
        request.questions[0].choices[0].label = "staging\u{200b}".into();
        request.questions[0].choices[1].label = "prod\u{1b}[2J".into();
        let notice = compose(&[asked], true).unwrap();
        assert_eq!(notice.summary, "Deploy\\u{202e}gnitset");
        assert_eq!(
            notice.body,
            "planu\\nforged: row / r\\u{200b}1\nWhere\\u{2028}to?\n• staging\\u{200b}\n• prod\\u{1b}[2J"
        );
        assert_eq!(labels(&notice), ["staging\\u{200b}", "prod\\u{1b}[2J"]);
        // The burst summary's titles too.
        let burst = [
            announced("a", confirm("one\ntwo", "Go?")),
            announced("b", confirm("x\u{200f}", "Go?")),
        ];
        let notice = compose(&burst, true).unwrap();
        assert_eq!(notice.body, "• one\\ntwo\n• x\\u{200f}");
    }

    #[test]
    fn an_agents_notice_names_its_project_first_and_its_app_once() {
        let asked = announced(
            "r1",
            json!({"title": "Rotate keys?", "source": {"app": "claude-code",
                    "run": "claude-code 2.1.0, session 7", "tool": "ask_operator", "project": "shop"},
                   "questions": [{"type": "free_text", "question": "Which keys?"}]}),
        );
        let notice = compose(&[asked], false).unwrap();
        assert_eq!(
            notice.body,
            "shop / claude-code 2.1.0, session 7 / ask_operator\nWhich keys?"
        );
    }

    #[test]
    fn a_request_of_several_questions_says_how_many() {
        let asked = announced(
            "r1",
            json!({"title": "Setup", "priority": "critical", "questions": [
                {"type": "yes_no", "question": "One?"}, {"type": "yes_no", "question": "Two?"}]}),
        );
        let notice = compose(&[asked], false).unwrap();
        assert_eq!(notice.body, "2 questions");
        assert!(notice.critical);
    }

    #[test]
    fn a_burst_gets_one_summary() {
        let burst: Vec<_> = (0..250)
            .map(|i| announced(&format!("r{i}"), confirm(&format!("R{i}"), "Go?")))
            .collect();
        let notice = compose(&burst, true).unwrap();
        assert_eq!(notice.summary, "250 new requests need an answer");
        assert!(notice.body.starts_with("• R0\n• R1\n• R2\n"));
        assert!(notice.body.ends_with("and 247 more"));
        assert!(!notice.critical);
        assert_eq!(notice.offer, None);
        // Borrowed announcements (what the sender holds) read the same.
        let borrowed: Vec<&Announcement> = burst.iter().collect();
        assert_eq!(compose(&borrowed, true), Some(notice));
        assert_eq!(compose::<Announcement>(&[], true), None);
    }

    #[test]
    fn the_log_says_whether_a_bubble_was_a_summary() {
        let one = Event::Notified {
            ids: vec!["a".into()],
            merged: false,
        };
        assert_eq!(one.log_line(), "notified: a");
        let many = Event::Notified {
            ids: vec!["a".into(), "b".into(), "c".into()],
            merged: true,
        };
        assert_eq!(many.log_line(), "notified (one summary): a, b, c");
    }

    /// What a bubble stood for, and when it went out (ms after the start).
    #[derive(Debug, PartialEq, Eq)]
    enum Sent {
        One(u64, u32),
        Summary(u64, Vec<u32>),
    }

    /// Runs the coalescer the way the sender thread does, on a made-up clock: requests
    /// `arrivals` (ms after the start, request number) come in; between two arrivals, a
    /// window that ends is delivered at its deadline, as `recv_deadline` would time out.
    fn drive(window_ms: u64, arrivals: &[(u64, Vec<u32>)]) -> Vec<Sent> {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let ms = |instant: Instant| instant.duration_since(start).as_millis() as u64;
        let mut coalescer = Coalescer::new(Duration::from_millis(window_ms));
        let mut sent = Vec::new();
        let mut record = |now: Instant, delivery: Delivery<u32>| {
            sent.push(match delivery {
                Delivery::One(n) => Sent::One(ms(now), n),
                Delivery::Summary(many) => Sent::Summary(ms(now), many),
            })
        };
        for (when, batch) in arrivals {
            while let Some(deadline) = coalescer.deadline().filter(|d| *d <= at(*when)) {
                let delivery = coalescer.due(deadline).expect("due at its deadline");
                record(deadline, delivery);
            }
            if let Some(delivery) = coalescer.arrive(at(*when), batch.iter().copied()) {
                record(at(*when), delivery);
            }
        }
        while let Some(deadline) = coalescer.deadline() {
            let delivery = coalescer.due(deadline).expect("due at its deadline");
            record(deadline, delivery);
        }
        sent
    }

    #[test]
    fn requests_a_second_apart_each_get_their_own_bubble_at_once() {
        let arrivals: Vec<(u64, Vec<u32>)> =
            (0..8).map(|i| (u64::from(i) * 1000, vec![i])).collect();
        let expected: Vec<Sent> = (0..8).map(|i| Sent::One(u64::from(i) * 1000, i)).collect();
        assert_eq!(drive(300, &arrivals), expected);
    }

    #[test]
    fn a_burst_gives_its_first_bubble_at_once_and_one_summary() {
        // Forty files landing one per millisecond, each its own engine batch.
        let arrivals: Vec<(u64, Vec<u32>)> = (0..40).map(|i| (u64::from(i), vec![i])).collect();
        assert_eq!(
            drive(300, &arrivals),
            [Sent::One(0, 0), Sent::Summary(300, (1..40).collect())]
        );
        // The same forty in one engine batch.
        assert_eq!(
            drive(300, &[(5, (0..40).collect())]),
            [Sent::One(5, 0), Sent::Summary(305, (1..40).collect())]
        );
    }

    #[test]
    fn a_lone_request_inside_the_window_gets_its_own_bubble_when_it_ends() {
        assert_eq!(
            drive(300, &[(0, vec![1]), (100, vec![2]), (2000, vec![3])]),
            [Sent::One(0, 1), Sent::One(300, 2), Sent::One(2000, 3)]
        );
    }

    #[test]
    fn a_request_just_after_a_window_waits_for_the_one_its_delivery_opened() {
        // 1 at once; 2 held until 300, whose bubble opens a window to 600; 3 lands at 350.
        assert_eq!(
            drive(300, &[(0, vec![1]), (100, vec![2]), (350, vec![3])]),
            [Sent::One(0, 1), Sent::One(300, 2), Sent::One(600, 3)]
        );
    }

    #[test]
    fn a_steady_stream_is_shown_no_faster_than_one_bubble_per_window() {
        let arrivals: Vec<(u64, Vec<u32>)> =
            (0..10).map(|i| (u64::from(i) * 100, vec![i])).collect();
        let sent = drive(300, &arrivals);
        assert_eq!(
            sent,
            [
                Sent::One(0, 0),
                Sent::Summary(300, vec![1, 2]),
                // A request landing as a window ends waits for the next one.
                Sent::Summary(600, vec![3, 4, 5]),
                Sent::Summary(900, vec![6, 7, 8]),
                Sent::One(1200, 9),
            ]
        );
    }

    #[test]
    fn requests_that_arrive_after_an_unnoticed_deadline_join_the_held_ones() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut coalescer = Coalescer::new(Duration::from_millis(300));
        assert_eq!(coalescer.arrive(at(0), [1]), Some(Delivery::One(1)));
        assert_eq!(coalescer.arrive(at(10), [2]), None);
        assert_eq!(coalescer.deadline(), Some(at(300)));
        assert_eq!(coalescer.due(at(299)), None);
        assert_eq!(coalescer.held(), 1);
        // The sender was busy past the deadline; 3 arrives before it looked.
        assert_eq!(
            coalescer.arrive(at(320), [3]),
            Some(Delivery::Summary(vec![2, 3]))
        );
        assert_eq!(coalescer.deadline(), None);
        // That summary opened a window of its own.
        assert_eq!(coalescer.arrive(at(400), [4]), None);
        assert_eq!(coalescer.deadline(), Some(at(620)));
        assert_eq!(
            coalescer.arrive(at(700), Vec::new()),
            Some(Delivery::One(4))
        );
        assert_eq!(coalescer.arrive(at(5000), Vec::new()), None);
    }

    #[test]
    fn deliveries_list_their_requests() {
        let one = Delivery::One(7);
        assert_eq!(one.items(), &[7]);
        assert!(!one.is_summary());
        let many = Delivery::Summary(vec![1, 2]);
        assert_eq!(many.items(), &[1, 2]);
        assert!(many.is_summary());
        assert_eq!(many.into_items(), vec![1, 2]);
    }
}
