//! Telling the operator, the engine's half: the [`Notifier`] trait the front ends implement,
//! what the engine hands over ([`Announcement`]), the wording of a bubble ([`compose`]) and
//! its timing ([`Coalescer`]).
//!
//! Everything here is pure: no D-Bus, no thread, no clock of its own. Sending lives in the
//! `inbox-notifications` crate, which both front ends (the `watch` daemon and the desktop
//! app) use, and which drives the [`Coalescer`] from its own thread. The split keeps the
//! engine free of GUI and bus code, and keeps the rules (what a bubble says, when it goes
//! out) testable with a fake clock.

use std::borrow::Borrow;
use std::time::{Duration, Instant};

use inbox_protocol::{Priority, Request};

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
}

impl From<RequestDetail> for Announcement {
    fn from(detail: RequestDetail) -> Announcement {
        Announcement {
            summary: detail.summary,
            request: detail.request,
        }
    }
}

/// Notifies nobody: `watch --no-notify`, tests.
pub struct Silent;

impl Notifier for Silent {
    fn announce(&self, _fresh: Vec<Announcement>) {}
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

/// What one notification says: the request itself, or a summary of a burst. Plain text:
/// the sender escapes it for daemons that read the body as markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub summary: String,
    pub body: String,
    pub critical: bool,
}

/// Turns the requests of one bubble into what it says.
pub fn compose<S: Borrow<RequestSummary>>(requests: &[S]) -> Option<Notice> {
    let critical = requests
        .iter()
        .any(|r| r.borrow().priority == Priority::Critical);
    match requests {
        [] => None,
        [one] => {
            let one = one.borrow();
            // Who asks, most telling first: with several agents at work, the project tells
            // them apart; an app its run already names ("claude-code" in "claude-code 2.1,
            // session 7") is not said twice.
            let source = &one.source;
            let app = source.app.as_deref().filter(|app| {
                !source
                    .run
                    .as_deref()
                    .is_some_and(|run| run.starts_with(app))
            });
            let from: Vec<&str> = [
                source.project.as_deref(),
                app,
                source.run.as_deref(),
                source.tool.as_deref(),
                source.host.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect();
            let questions = if one.question_count == 1 {
                "1 question".to_owned()
            } else {
                format!("{} questions", one.question_count)
            };
            let body = if from.is_empty() {
                questions
            } else {
                format!("{} · {questions}", from.join(" / "))
            };
            Some(Notice {
                summary: one.title.clone(),
                body,
                critical,
            })
        }
        many => {
            let mut body: Vec<String> = many
                .iter()
                .take(3)
                .map(|r| format!("• {}", r.borrow().title))
                .collect();
            if many.len() > 3 {
                body.push(format!("and {} more", many.len() - 3));
            }
            Some(Notice {
                summary: format!("{} new requests need an answer", many.len()),
                body: body.join("\n"),
                critical,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::State;
    use crate::Event;
    use chrono::Utc;

    fn summary(title: &str, priority: Priority) -> RequestSummary {
        RequestSummary {
            id: title.to_lowercase(),
            state: State::Pending,
            title: title.into(),
            source: inbox_protocol::Source {
                app: Some("planu".into()),
                run: Some("r-1".into()),
                ..Default::default()
            },
            priority,
            mode: inbox_protocol::Mode::Interactive,
            question_count: 2,
            placed_at: Utc::now(),
            deadline: None,
            settled_at: None,
            answered_by: None,
            unwritten: None,
        }
    }

    #[test]
    fn one_request_gets_its_own_notice() {
        let notice = compose(&[summary("Deploy", Priority::Critical)]).unwrap();
        assert_eq!(notice.summary, "Deploy");
        assert_eq!(notice.body, "planu / r-1 · 2 questions");
        assert!(notice.critical);
    }

    #[test]
    fn an_agents_notice_names_its_project_first_and_its_app_once() {
        let mut asked = summary("Rotate keys?", Priority::Normal);
        asked.question_count = 1;
        asked.source = inbox_protocol::Source {
            app: Some("claude-code".into()),
            run: Some("claude-code 2.1.0, session 7".into()),
            tool: Some("ask_operator".into()),
            project: Some("shop".into()),
            ..Default::default()
        };
        let notice = compose(&[asked]).unwrap();
        assert_eq!(
            notice.body,
            "shop / claude-code 2.1.0, session 7 / ask_operator · 1 question"
        );
    }

    #[test]
    fn a_burst_gets_one_summary() {
        let burst: Vec<_> = (0..250)
            .map(|i| summary(&format!("R{i}"), Priority::Normal))
            .collect();
        let notice = compose(&burst).unwrap();
        assert_eq!(notice.summary, "250 new requests need an answer");
        assert!(notice.body.ends_with("and 247 more"));
        assert!(!notice.critical);
        // Borrowed summaries (what the sender holds) read the same.
        let borrowed: Vec<&RequestSummary> = burst.iter().collect();
        assert_eq!(compose(&borrowed), Some(notice));
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
