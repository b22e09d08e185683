//! [`Notifications`]: the engine's [`Notifier`] for both front ends, the `watch` daemon and
//! the desktop app.
//!
//! The engine hands over new requests between two batches; `announce` only puts them on a
//! bounded queue (a full queue drops that bubble with a warning, never a request: the inbox
//! still lists it), so a slow or missing daemon can never stall the engine. One sender
//! thread takes them off, times them with the engine's [`Coalescer`] (a lone request at
//! once, a burst as its first bubble plus one summary), words them with [`compose`], and
//! shows them over the process's one [`NotificationBus`]. It reports every bubble actually
//! shown as [`Event::Notified`], so the log says "notified" only when the operator could
//! see it. A bubble for one request may carry answer buttons, chosen by the caller (the app
//! from the request's questions; `watch` offers none); a press or a click comes back to
//! the caller's `on_choice`.

use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use inbox_engine::notifier::{compose, Announcement, Coalescer, Delivery, Notifier, QUIET_WINDOW};
use inbox_engine::{Event, RequestSummary};
use inbox_protocol::Request;
use serde_json::{Map, Value};

use crate::bus::{ActionHandler, Bubble, NotificationBus, NotifyError, Urgency};
use crate::switches::{Availability, NotifySwitches};

/// The action the daemon reports when the bubble itself is clicked.
pub const OPEN_ACTION: &str = "default";

/// Batches of new requests that may wait for the sender. A thousand batches behind means
/// the daemon is stuck; what comes next is dropped rather than held.
pub const QUEUE_CAPACITY: usize = 1024;

/// What the operator did with a notification.
#[derive(Debug, Clone, PartialEq)]
pub enum Chosen {
    /// Clicked the bubble: show this request, or the list for a summary.
    Open(Option<String>),
    /// Pressed an answer button.
    Answer {
        id: String,
        answers: Map<String, Value>,
    },
}

/// One answer button on a bubble, and the answer it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionButton {
    /// The action key sent over D-Bus; never [`OPEN_ACTION`].
    pub key: String,
    pub label: String,
    /// The complete answers object, as the window would submit it.
    pub answers: Map<String, Value>,
}

type ButtonsFn = Box<dyn Fn(&Request) -> Vec<ActionButton> + Send>;
type OnChoice = Arc<dyn Fn(Chosen) + Send + Sync>;

/// Desktop notifications for new requests: hand it to the engine
/// (`Engine::with_notifier(Box::new(notifications))`). Dropping it ends its thread.
pub struct Notifications {
    queue: Sender<Vec<Announcement>>,
}

/// How a [`Notifications`] is set up; from [`Notifications::builder`].
pub struct NotificationsBuilder {
    app_name: String,
    bus: Option<Arc<NotificationBus>>,
    switches: Option<Arc<NotifySwitches>>,
    buttons: Option<ButtonsFn>,
    on_choice: Option<OnChoice>,
    events: Option<Sender<Event>>,
}

impl Notifications {
    /// Starts setting up notifications shown under `app_name`. Unless told otherwise they
    /// use [`NotificationBus::shared`], are on, have no buttons, and report nothing.
    pub fn builder(app_name: impl Into<String>) -> NotificationsBuilder {
        NotificationsBuilder {
            app_name: app_name.into(),
            bus: None,
            switches: None,
            buttons: None,
            on_choice: None,
            events: None,
        }
    }
}

impl NotificationsBuilder {
    /// The bus connection to use instead of the process's shared one (tests).
    pub fn bus(mut self, bus: Arc<NotificationBus>) -> NotificationsBuilder {
        self.bus = Some(bus);
        self
    }

    /// On/off and do-not-disturb, read before every bubble; the sender records there
    /// whether a daemon answers.
    pub fn switches(mut self, switches: Arc<NotifySwitches>) -> NotificationsBuilder {
        self.switches = Some(switches);
        self
    }

    /// The answer buttons a bubble for one request offers (empty: none). Only used with
    /// [`NotificationsBuilder::on_choice`], which receives the presses.
    pub fn buttons(
        mut self,
        buttons: impl Fn(&Request) -> Vec<ActionButton> + Send + 'static,
    ) -> NotificationsBuilder {
        self.buttons = Some(Box::new(buttons));
        self
    }

    /// What to do when the operator clicks a bubble or presses a button. It runs on the bus
    /// listener's thread and must not block for long. Without it bubbles carry no actions.
    pub fn on_choice(
        mut self,
        on_choice: impl Fn(Chosen) + Send + Sync + 'static,
    ) -> NotificationsBuilder {
        self.on_choice = Some(Arc::new(on_choice));
        self
    }

    /// Where to report [`Event::Notified`] for every bubble shown.
    pub fn events(mut self, events: Sender<Event>) -> NotificationsBuilder {
        self.events = Some(events);
        self
    }

    /// Starts the sender thread.
    pub fn start(self) -> Result<Notifications, NotifyError> {
        let (queue, inbox) = crossbeam_channel::bounded(QUEUE_CAPACITY);
        let sender = SenderThread {
            app_name: self.app_name,
            bus: self.bus.unwrap_or_else(NotificationBus::shared),
            switches: self
                .switches
                .unwrap_or_else(|| NotifySwitches::new(true, false)),
            buttons: self.buttons,
            on_choice: self.on_choice,
            events: self.events,
        };
        std::thread::Builder::new()
            .name("notifications".into())
            .spawn(move || sender.run(&inbox))
            .map_err(|source| NotifyError::Spawn {
                what: "notification sender",
                source,
            })?;
        Ok(Notifications { queue })
    }
}

impl Notifier for Notifications {
    fn announce(&self, fresh: Vec<Announcement>) {
        if fresh.is_empty() {
            return;
        }
        match self.queue.try_send(fresh) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            // The daemon is stuck; the inbox itself still has every request.
            Err(TrySendError::Full(dropped)) => tracing::warn!(
                "notification queue full; no bubble for {} new request(s)",
                dropped.len()
            ),
        }
    }
}

/// What the sender thread works with.
struct SenderThread {
    app_name: String,
    bus: Arc<NotificationBus>,
    switches: Arc<NotifySwitches>,
    buttons: Option<ButtonsFn>,
    on_choice: Option<OnChoice>,
    events: Option<Sender<Event>>,
}

impl SenderThread {
    fn run(self, inbox: &Receiver<Vec<Announcement>>) {
        // Said once at start, so that a missing daemon is reported before the first request.
        let probe = self.bus.server_information().map(|_| ());
        self.record(probe.as_ref().err());
        let mut coalescer = Coalescer::new(QUIET_WINDOW);
        loop {
            let received = match coalescer.deadline() {
                Some(deadline) => inbox.recv_deadline(deadline),
                None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            let now = Instant::now();
            let delivery = match received {
                Ok(batch) => coalescer.arrive(now, batch),
                Err(RecvTimeoutError::Timeout) => coalescer.due(now),
                // The engine is gone (the app or `watch` stops): what is held stays listed.
                Err(RecvTimeoutError::Disconnected) => return,
            };
            if let Some(delivery) = delivery {
                self.deliver(delivery);
            }
        }
    }

    fn deliver(&self, delivery: Delivery<Announcement>) {
        if self.switches.silenced() {
            return;
        }
        let summaries: Vec<&RequestSummary> = delivery.items().iter().map(|a| &a.summary).collect();
        let Some(notice) = compose(&summaries) else {
            return;
        };
        let mut bubble = Bubble::new(&self.app_name, notice.summary, notice.body);
        if notice.critical {
            bubble.urgency = Urgency::Critical;
        }
        let handler = self.on_choice.as_ref().map(|on_choice| {
            let (open, buttons) = match &delivery {
                Delivery::One(one) => (Some(one.summary.id.clone()), self.buttons_for(one)),
                Delivery::Summary(_) => (None, Vec::new()),
            };
            bubble.actions.push((OPEN_ACTION.into(), "Open".into()));
            bubble.actions.extend(
                buttons
                    .iter()
                    .map(|button| (button.key.clone(), button.label.clone())),
            );
            let on_choice = Arc::clone(on_choice);
            let handler: ActionHandler = Box::new(move |action: &str| {
                if let Some(chosen) = chosen(action, open, buttons) {
                    on_choice(chosen);
                }
            });
            handler
        });
        let shown = self.bus.notify(&bubble, handler);
        self.record(shown.as_ref().err());
        if shown.is_ok() {
            if let Some(events) = &self.events {
                let merged = delivery.is_summary();
                let ids = delivery.into_items().into_iter().map(|a| a.summary.id);
                // A closed channel means the front end is going away; nothing to tell.
                let _ = events.send(Event::Notified {
                    ids: ids.collect(),
                    merged,
                });
            }
        }
    }

    fn buttons_for(&self, announcement: &Announcement) -> Vec<ActionButton> {
        match (&self.buttons, &announcement.request) {
            (Some(buttons), Some(request)) => buttons(request),
            _ => Vec::new(),
        }
    }

    /// Notes whether the daemon answered; each change is said once, since a daemon may
    /// come (a desktop session that starts after the inbox) and go.
    fn record(&self, failure: Option<&NotifyError>) {
        let before = self.switches.set_availability(failure.is_none());
        match (failure, before) {
            (None, Availability::Unavailable) => {
                tracing::info!("desktop notifications are available again")
            }
            (Some(error), Availability::Available | Availability::Unknown) => {
                tracing::warn!("{}", crate::unavailable_message(error))
            }
            _ => {}
        }
    }
}

/// Maps a D-Bus action key back to what it means.
fn chosen(action: &str, open: Option<String>, buttons: Vec<ActionButton>) -> Option<Chosen> {
    if action == OPEN_ACTION {
        return Some(Chosen::Open(open));
    }
    let id = open?;
    buttons
        .into_iter()
        .find(|button| button.key == action)
        .map(|button| Chosen::Answer {
            id,
            answers: button.answers,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_engine::State;

    fn announcement(id: &str) -> Announcement {
        Announcement {
            summary: RequestSummary {
                id: id.into(),
                state: State::Pending,
                title: "Deploy?".into(),
                source: Default::default(),
                priority: inbox_protocol::Priority::Normal,
                mode: inbox_protocol::Mode::Interactive,
                question_count: 1,
                placed_at: chrono::Utc::now(),
                deadline: None,
                settled_at: None,
                answered_by: None,
                unwritten: None,
            },
            request: None,
        }
    }

    #[test]
    fn a_silenced_sender_neither_shows_nor_reports() {
        let dir = tempfile::tempdir().unwrap();
        let (events_tx, events) = crossbeam_channel::unbounded();
        let switches = NotifySwitches::new(true, true);
        let sender = SenderThread {
            app_name: "Answer Inbox".into(),
            // No bus there: had the sender tried it, the switches would say so.
            bus: NotificationBus::at(format!("unix:path={}", dir.path().join("no-bus").display())),
            switches: Arc::clone(&switches),
            buttons: None,
            on_choice: None,
            events: Some(events_tx),
        };
        sender.deliver(Delivery::One(announcement("a")));
        switches
            .do_not_disturb
            .store(false, std::sync::atomic::Ordering::Relaxed);
        switches
            .enabled
            .store(false, std::sync::atomic::Ordering::Relaxed);
        sender.deliver(Delivery::Summary(vec![
            announcement("b"),
            announcement("c"),
        ]));
        assert_eq!(switches.availability(), Availability::Unknown);

        // Switched on, it tries; a failed bubble is not reported as shown.
        switches
            .enabled
            .store(true, std::sync::atomic::Ordering::Relaxed);
        sender.deliver(Delivery::One(announcement("d")));
        assert_eq!(switches.availability(), Availability::Unavailable);
        assert!(events.try_recv().is_err());
    }

    #[test]
    fn actions_map_back_to_answers_or_opening() {
        let mut answers = Map::new();
        answers.insert("q1".into(), Value::Bool(true));
        let buttons = vec![ActionButton {
            key: "answer:yes".into(),
            label: "Yes".into(),
            answers: answers.clone(),
        }];
        assert_eq!(
            chosen("default", Some("r1".into()), buttons.clone()),
            Some(Chosen::Open(Some("r1".into())))
        );
        assert_eq!(
            chosen("default", None, Vec::new()),
            Some(Chosen::Open(None))
        );
        assert_eq!(
            chosen("answer:yes", Some("r1".into()), buttons.clone()),
            Some(Chosen::Answer {
                id: "r1".into(),
                answers
            })
        );
        assert_eq!(chosen("__closed", Some("r1".into()), buttons.clone()), None);
        assert_eq!(chosen("answer:yes", None, buttons), None);
    }
}
