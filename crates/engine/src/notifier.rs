//! Telling the operator: a [`Notifier`] trait, and desktop notifications over the
//! freedesktop D-Bus interface (notify-rust).
//!
//! Notifications must never slow the inbox down: a missing or hung notification daemon can
//! make a D-Bus call wait for its 25 s timeout. So the desktop notifier only queues work for a
//! thread of its own, and that thread coalesces a burst into one summary instead of hundreds
//! of bubbles.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use inbox_protocol::Priority;

use crate::store::RequestSummary;

/// Something that can tell the operator about new requests. Must return at once.
pub trait Notifier: Send {
    fn announce(&self, requests: &[RequestSummary]);
}

/// Notifies nobody: `watch --no-notify`, tests.
pub struct Silent;

impl Notifier for Silent {
    fn announce(&self, _requests: &[RequestSummary]) {}
}

/// Desktop notifications, sent from a background thread.
pub struct DesktopNotifier {
    queue: Sender<Vec<RequestSummary>>,
}

/// How long after a new request its siblings of the same burst are gathered.
pub const GATHER: Duration = Duration::from_millis(250);
/// Least time between two notifications: what arrives meanwhile becomes one summary.
pub const MIN_GAP: Duration = Duration::from_millis(1500);

impl DesktopNotifier {
    /// Starts the notification thread. `app_name` is shown by the notification daemon.
    pub fn start(app_name: &'static str) -> DesktopNotifier {
        let (queue, inbox) = crossbeam_channel::bounded(1024);
        std::thread::Builder::new()
            .name("notifications".into())
            .spawn(move || notification_loop(app_name, inbox))
            .expect("spawn the notification thread");
        DesktopNotifier { queue }
    }
}

impl Notifier for DesktopNotifier {
    fn announce(&self, requests: &[RequestSummary]) {
        if requests.is_empty() {
            return;
        }
        match self.queue.try_send(requests.to_vec()) {
            Ok(()) => {}
            // A full queue means the daemon is stuck; the inbox itself still has everything.
            Err(TrySendError::Full(_)) => {
                tracing::warn!("notification queue full; dropping a notification")
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

/// What one notification says: the request itself, or a summary of a burst.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub summary: String,
    pub body: String,
    pub critical: bool,
}

/// Turns a batch of new requests into one notice.
pub fn compose(requests: &[RequestSummary]) -> Option<Notice> {
    let critical = requests.iter().any(|r| r.priority == Priority::Critical);
    match requests {
        [] => None,
        [one] => {
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
                .map(|r| format!("• {}", r.title))
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

/// Whether a notification service answers on the session bus. Call it off the engine's
/// thread: with no bus this fails at once, but a hung daemon can take the D-Bus timeout.
pub fn daemon_available() -> Result<(), String> {
    notify_rust::get_server_information()
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// The line the operator reads when notifications cannot be shown.
pub fn unavailable_message(error: &str) -> String {
    format!(
        "desktop notifications are unavailable (no notification service on the session bus: \
         {error}); new requests are still listed, and the inbox works as before"
    )
}

fn notification_loop(app_name: &'static str, inbox: Receiver<Vec<RequestSummary>>) {
    let mut available = match daemon_available() {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!("{}", unavailable_message(&error));
            false
        }
    };
    coalesce(&inbox, |batch| {
        if let Some(notice) = compose(&batch) {
            // A daemon may appear later (a desktop session that starts after the inbox):
            // sending is the check, and each change is said once.
            let sent = send(app_name, &notice);
            match (&sent, available) {
                (Ok(()), false) => tracing::info!("desktop notifications are available again"),
                (Err(error), true) => tracing::warn!("{}", unavailable_message(error)),
                _ => {}
            }
            available = sent.is_ok();
        }
    });
}

/// Receives batches of new requests until the sender is dropped, handing `deliver` one
/// gathered batch at a time: what arrives within [`GATHER`] of the first request, and
/// nothing sooner than [`MIN_GAP`] after the previous delivery, so a burst of hundreds of
/// files gives one summary. Shared by every front end that shows notifications.
pub fn coalesce(
    inbox: &Receiver<Vec<RequestSummary>>,
    mut deliver: impl FnMut(Vec<RequestSummary>),
) {
    let mut last_sent: Option<Instant> = None;
    while let Ok(mut batch) = inbox.recv() {
        let mut until = Instant::now() + GATHER;
        if let Some(last) = last_sent {
            until = until.max(last + MIN_GAP);
        }
        while let Ok(more) = inbox.recv_deadline(until) {
            batch.extend(more);
        }
        deliver(batch);
        last_sent = Some(Instant::now());
    }
}

fn send(app_name: &str, notice: &Notice) -> Result<(), String> {
    let urgency = if notice.critical {
        notify_rust::Urgency::Critical
    } else {
        notify_rust::Urgency::Normal
    };
    let result = notify_rust::Notification::new()
        .appname(app_name)
        .summary(&notice.summary)
        .body(&notice.body)
        .icon("dialog-question")
        .urgency(urgency)
        .show();
    result.map(|_| ()).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::State;
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
    }
}
