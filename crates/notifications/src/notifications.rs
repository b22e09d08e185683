//! [`Notifications`]: the engine's [`Notifier`] for both front ends, the `watch` daemon and
//! the desktop app.
//!
//! It runs on the crate's one coalescing queue ([`crate::queue`]): `announce` never waits
//! (a full queue drops that bubble with a warning, never a request: the inbox still lists
//! it), so a slow or missing daemon can never stall the engine, and a burst is its first
//! bubble plus one summary. Its thread words each delivery with [`compose`] and shows it
//! over the process's one [`NotificationBus`]. It reports every bubble actually shown as
//! [`Event::Notified`], so the log says "notified" only when the operator could see it.
//!
//! A bubble for one request may carry answer buttons when the caller takes presses (the app
//! turns them on with [`NotificationsBuilder::answer_buttons`]; `watch` offers none). Which
//! answers, and the words that show them, are the engine's [`compose`]: the buttons are
//! made from the very [`Offer`] whose question and options the body lists, so a button can
//! only give an answer the bubble shows. Every press carries the version (the request file's
//! SHA-256) the bubble was worded from, for the engine to refuse a file changed since. A
//! press or a click comes back to the caller's `on_choice` as a [`Chosen`].

use std::collections::HashMap;
use std::sync::Arc;

use crossbeam_channel::Sender;
use inbox_engine::notifier::{compose, Announcement, Delivery, Gone, Notifier, Offer};
use inbox_engine::Event;
use serde_json::{Map, Value};

use crate::bus::{ActionHandler, Bubble, NotificationBus, NotifyError, Urgency};
use crate::identity::AppIdentity;
use crate::queue::{CoalescingQueue, Deliver};
use crate::switches::{Availability, NotifySwitches};

/// The action the daemon reports when the bubble itself is clicked.
pub const OPEN_ACTION: &str = "default";

/// What the operator did with a notification.
#[derive(Debug, Clone, PartialEq)]
pub enum Chosen {
    /// Clicked the bubble: show this request, or the list for a summary.
    Open(Option<String>),
    /// Pressed an answer button.
    Answer {
        id: String,
        answers: Map<String, Value>,
        /// The SHA-256 of the request file the bubble showed: the engine answers only that
        /// version, and refuses if the file has changed since.
        version: String,
    },
}

/// One answer button on a bubble, and the answer it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionButton {
    /// The action key sent over D-Bus: `answer:` and the offered answer's key (`answer:yes`,
    /// `answer:no`, `answer:0`, ...); never [`OPEN_ACTION`].
    pub key: String,
    /// The button's text, as the body lists it.
    pub label: String,
    /// The complete answers object, as the window would submit it.
    pub answers: Map<String, Value>,
}

impl ActionButton {
    /// The buttons for an offer, in its order.
    pub fn for_offer(offer: &Offer) -> Vec<ActionButton> {
        offer
            .options
            .iter()
            .map(|option| ActionButton {
                key: format!("answer:{}", option.key),
                label: option.label.clone(),
                answers: option.answers.clone(),
            })
            .collect()
    }
}

type OnChoice = Arc<dyn Fn(Chosen) + Send + Sync>;

/// Desktop notifications for new requests: hand it to the engine
/// (`Engine::with_notifier(Box::new(notifications))`). Dropping it ends its thread.
pub struct Notifications {
    queue: CoalescingQueue,
}

/// How a [`Notifications`] is set up; from [`Notifications::builder`].
pub struct NotificationsBuilder {
    app_name: String,
    bus: Option<Arc<NotificationBus>>,
    switches: Option<Arc<NotifySwitches>>,
    answer_buttons: bool,
    on_choice: Option<OnChoice>,
    events: Option<Sender<Event>>,
    identity: Option<AppIdentity>,
}

impl Notifications {
    /// Starts setting up notifications shown under `app_name`. Unless told otherwise they
    /// use [`NotificationBus::shared`], are on, have no buttons, report nothing, and carry
    /// the app's desktop entry and icon ([`AppIdentity::detect`]).
    pub fn builder(app_name: impl Into<String>) -> NotificationsBuilder {
        NotificationsBuilder {
            app_name: app_name.into(),
            bus: None,
            switches: None,
            answer_buttons: false,
            on_choice: None,
            events: None,
            identity: None,
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

    /// Offers answer buttons on bubbles for one request, where the engine's rule allows
    /// (`inbox_engine::notifier::offer`: a short confirm or choice of normal or low
    /// priority); the others say why they must be answered in the window. Only used with
    /// [`NotificationsBuilder::on_choice`], which receives the presses.
    pub fn answer_buttons(mut self) -> NotificationsBuilder {
        self.answer_buttons = true;
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

    /// The desktop entry and icon to show bubbles under, instead of the detected ones.
    pub fn identity(mut self, identity: AppIdentity) -> NotificationsBuilder {
        self.identity = Some(identity);
        self
    }

    /// Starts the sender thread.
    pub fn start(self) -> Result<Notifications, NotifyError> {
        let sender = BubbleSender {
            app_name: self.app_name,
            bus: self.bus.unwrap_or_else(NotificationBus::shared),
            switches: self
                .switches
                .unwrap_or_else(|| NotifySwitches::new(true, false)),
            answer_buttons: self.answer_buttons,
            on_choice: self.on_choice,
            events: self.events,
            identity: self.identity,
            shown: HashMap::new(),
        };
        let queue =
            CoalescingQueue::start("notifications", "bubble", sender).map_err(|source| {
                NotifyError::Spawn {
                    what: "notification sender",
                    source,
                }
            })?;
        Ok(Notifications { queue })
    }
}

impl Notifier for Notifications {
    fn announce(&self, fresh: Vec<Announcement>) {
        self.queue.announce(fresh);
    }

    fn withdraw(&self, gone: Vec<Gone>) {
        self.queue.withdraw(gone);
    }
}

/// What the sender thread works with.
struct BubbleSender {
    app_name: String,
    bus: Arc<NotificationBus>,
    switches: Arc<NotifySwitches>,
    answer_buttons: bool,
    on_choice: Option<OnChoice>,
    events: Option<Sender<Event>>,
    /// `None` until the thread starts and detects it (it looks at the disk, and may write
    /// the icon to the cache, which is no work for the caller's thread).
    identity: Option<AppIdentity>,
    /// Each bubble on screen (the daemon's id) and the requests it stands for that are still
    /// pending: when the last of them is settled or withdrawn, the bubble is closed.
    shown: HashMap<u32, Vec<String>>,
}

impl Deliver for BubbleSender {
    fn start(&mut self) {
        if self.identity.is_none() {
            self.identity = Some(AppIdentity::detect());
        }
        // Said once at start, so that a missing daemon is reported before the first request.
        let probe = self.bus.server_information().map(|_| ());
        self.record(probe.as_ref().err());
    }

    fn deliver(&mut self, delivery: Delivery<Announcement>) {
        if self.switches.silenced() {
            return;
        }
        // Buttons only where presses are taken, and shown: a daemon without the `actions`
        // capability would show a body listing answers no button gives.
        let buttons = self.answer_buttons
            && self.on_choice.is_some()
            && self.bus.shows_actions().unwrap_or(false);
        let Some(notice) = compose(delivery.items(), buttons) else {
            return;
        };
        let mut bubble = Bubble::new(&self.app_name, notice.summary, notice.body);
        if let Some(identity) = &self.identity {
            bubble.icon = identity.icon.clone();
            bubble.desktop_entry = Some(identity.desktop_entry.clone());
        }
        if notice.critical {
            bubble.urgency = Urgency::Critical;
        }
        let handler = self.on_choice.as_ref().map(|on_choice| {
            let open = match &delivery {
                Delivery::One(one) => Some(one.summary.id.clone()),
                Delivery::Summary(_) => None,
            };
            bubble.actions.push((OPEN_ACTION.into(), "Open".into()));
            let offer = notice.offer;
            if let Some(offer) = &offer {
                bubble.actions.extend(
                    ActionButton::for_offer(offer)
                        .into_iter()
                        .map(|button| (button.key, button.label)),
                );
            }
            let on_choice = Arc::clone(on_choice);
            let handler: ActionHandler = Box::new(move |action: &str| {
                if let Some(chosen) = chosen(action, open, offer.as_ref()) {
                    on_choice(chosen);
                }
            });
            handler
        });
        let shown = self.bus.notify(&bubble, handler);
        self.record(shown.as_ref().err());
        if let Ok(bubble_id) = &shown {
            let ids = delivery.items().iter().map(|a| a.summary.id.clone());
            self.shown.insert(*bubble_id, ids.collect());
        }
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

    fn withdraw(&mut self, gone: &[Gone]) {
        self.close_gone(gone);
    }
}

impl BubbleSender {
    /// Closes each bubble all of whose requests are gone; a summary that still stands for
    /// a pending request stays.
    fn close_gone(&mut self, gone: &[Gone]) {
        let mut closing = Vec::new();
        self.shown.retain(|bubble, ids| {
            ids.retain(|id| !gone.iter().any(|g| &g.id == id));
            if ids.is_empty() {
                closing.push(*bubble);
            }
            !ids.is_empty()
        });
        for bubble in closing {
            // A bubble the operator already dismissed is closed all the same: harmless.
            if let Err(error) = self.bus.close(bubble) {
                tracing::debug!("cannot close bubble {bubble}: {error}");
            }
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

/// Maps a D-Bus action key back to what it means: a click opens `open` (the request, or
/// the list for a summary); a button gives its answer to the offer's request, at the
/// version the bubble showed.
fn chosen(action: &str, open: Option<String>, offer: Option<&Offer>) -> Option<Chosen> {
    if action == OPEN_ACTION {
        return Some(Chosen::Open(open));
    }
    let offer = offer?;
    ActionButton::for_offer(offer)
        .into_iter()
        .find(|button| button.key == action)
        .map(|button| Chosen::Answer {
            id: offer.id.clone(),
            answers: button.answers,
            version: offer.version.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{announced, confirm};
    use inbox_engine::notifier::OfferedAnswer;

    /// A request as announced without the request itself (as the engine hands over one it
    /// could not read).
    fn announcement(id: &str) -> Announcement {
        let mut announcement = announced(id, confirm("Deploy?", "Go?"));
        announcement.request = None;
        announcement
    }

    #[test]
    fn a_silenced_sender_neither_shows_nor_reports() {
        let dir = tempfile::tempdir().unwrap();
        let (events_tx, events) = crossbeam_channel::unbounded();
        let switches = NotifySwitches::new(true, true);
        let mut sender = BubbleSender {
            app_name: "Answer Inbox".into(),
            // No bus there: had the sender tried it, the switches would say so.
            bus: NotificationBus::at(format!("unix:path={}", dir.path().join("no-bus").display())),
            switches: Arc::clone(&switches),
            answer_buttons: false,
            on_choice: None,
            events: Some(events_tx),
            identity: None,
            shown: HashMap::new(),
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
    fn actions_map_back_to_answers_or_opening_with_the_version_shown() {
        let answer = |value: bool| Map::from_iter([("q1".to_owned(), Value::Bool(value))]);
        let offer = Offer {
            id: "r1".into(),
            version: "ab".repeat(32),
            options: vec![
                OfferedAnswer {
                    key: "yes".into(),
                    label: "Yes".into(),
                    answers: answer(true),
                },
                OfferedAnswer {
                    key: "no".into(),
                    label: "No".into(),
                    answers: answer(false),
                },
            ],
        };
        let keys: Vec<String> = ActionButton::for_offer(&offer)
            .into_iter()
            .map(|button| button.key)
            .collect();
        assert_eq!(keys, ["answer:yes", "answer:no"]);
        assert_eq!(
            chosen("default", Some("r1".into()), Some(&offer)),
            Some(Chosen::Open(Some("r1".into())))
        );
        assert_eq!(chosen("default", None, None), Some(Chosen::Open(None)));
        assert_eq!(
            chosen("answer:no", Some("r1".into()), Some(&offer)),
            Some(Chosen::Answer {
                id: "r1".into(),
                answers: answer(false),
                version: "ab".repeat(32),
            })
        );
        assert_eq!(chosen("__closed", Some("r1".into()), Some(&offer)), None);
        // A bubble without an offer answers nothing, whatever key comes back.
        assert_eq!(chosen("answer:yes", Some("r1".into()), None), None);
    }
}
