//! Desktop notifications with answer buttons.
//!
//! Same coalescing as the CLI's notifier (`inbox_engine::notifier::coalesce`): one bubble
//! per new request, one summary per burst. A bubble for a single request carries the
//! buttons from [`crate::actions`]; pressing one answers the request without opening the
//! window, clicking the bubble opens the window on it. Each shown bubble waits for its
//! action on a thread of its own, because that wait blocks until the bubble is acted on or
//! closed; nothing on the engine's path ever waits for the notification daemon.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Sender, TrySendError};
use inbox_engine::notifier::{coalesce, compose, Notice, Notifier};
use inbox_engine::{RequestSummary, Store};
use serde_json::{Map, Value};

use crate::actions::{answer_buttons, ActionButton, OPEN_ACTION};

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

/// Switches the window can flip while notifications are running.
#[derive(Debug)]
pub struct NotifySwitches {
    pub enabled: AtomicBool,
    pub do_not_disturb: AtomicBool,
    availability: AtomicU8,
}

/// Whether a notification daemon answers on the session bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    Unknown,
    Available,
    Unavailable,
}

impl NotifySwitches {
    pub fn new(enabled: bool, do_not_disturb: bool) -> Arc<NotifySwitches> {
        Arc::new(NotifySwitches {
            enabled: AtomicBool::new(enabled),
            do_not_disturb: AtomicBool::new(do_not_disturb),
            availability: AtomicU8::new(0),
        })
    }

    pub fn availability(&self) -> Availability {
        match self.availability.load(Ordering::Relaxed) {
            1 => Availability::Available,
            2 => Availability::Unavailable,
            _ => Availability::Unknown,
        }
    }

    fn set_availability(&self, available: bool) {
        self.availability
            .store(if available { 1 } else { 2 }, Ordering::Relaxed);
    }

    /// `off`, `do_not_disturb`, `unavailable` or `available`, for the status line.
    pub fn describe(&self) -> &'static str {
        if !self.enabled.load(Ordering::Relaxed) {
            "off"
        } else if self.do_not_disturb.load(Ordering::Relaxed) {
            "do_not_disturb"
        } else if self.availability() == Availability::Unavailable {
            "unavailable"
        } else {
            "available"
        }
    }

    fn silenced(&self) -> bool {
        !self.enabled.load(Ordering::Relaxed) || self.do_not_disturb.load(Ordering::Relaxed)
    }
}

/// Asks the session bus whether a notification daemon is there. Run off the UI thread: with
/// no bus at all this fails fast, but a hung daemon can take the D-Bus timeout.
pub fn probe_daemon(switches: &NotifySwitches) -> bool {
    let available = inbox_engine::notifier::daemon_available().is_ok();
    switches.set_availability(available);
    available
}

/// The app's [`Notifier`]: hand it to the engine's loop.
pub struct ActionNotifier {
    queue: Sender<Vec<RequestSummary>>,
}

impl ActionNotifier {
    /// Starts the notification thread. `db_path` is opened read-only-in-spirit on that thread
    /// to look up the questions of a single request; `on_choice` runs on the waiting
    /// threads and must not block for long.
    pub fn start(
        app_name: &'static str,
        db_path: PathBuf,
        switches: Arc<NotifySwitches>,
        on_choice: Arc<dyn Fn(Chosen) + Send + Sync>,
    ) -> ActionNotifier {
        let (queue, inbox) = crossbeam_channel::bounded::<Vec<RequestSummary>>(1024);
        std::thread::Builder::new()
            .name("notifications".into())
            .spawn(move || {
                let store = Store::open(&db_path)
                    .map_err(|e| tracing::warn!("notifications cannot read the inbox: {e}"))
                    .ok();
                if !probe_daemon(&switches) {
                    tracing::warn!("no notification daemon on the session bus");
                }
                coalesce(&inbox, |batch| {
                    if switches.silenced() {
                        return;
                    }
                    let Some(notice) = compose(&batch) else {
                        return;
                    };
                    let (open, buttons) = match batch.as_slice() {
                        [one] => (Some(one.id.clone()), buttons_for(store.as_ref(), &one.id)),
                        _ => (None, Vec::new()),
                    };
                    show(app_name, &notice, open, buttons, &switches, &on_choice);
                });
            })
            .expect("spawn the notification thread");
        ActionNotifier { queue }
    }
}

impl Notifier for ActionNotifier {
    fn announce(&self, requests: &[RequestSummary]) {
        if requests.is_empty() {
            return;
        }
        match self.queue.try_send(requests.to_vec()) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                tracing::warn!("notification queue full; dropping a notification")
            }
        }
    }
}

fn buttons_for(store: Option<&Store>, id: &str) -> Vec<ActionButton> {
    let request = store
        .and_then(|store| store.detail(id).ok().flatten())
        .and_then(|detail| detail.request);
    request.as_ref().map(answer_buttons).unwrap_or_default()
}

fn show(
    app_name: &str,
    notice: &Notice,
    open: Option<String>,
    buttons: Vec<ActionButton>,
    switches: &Arc<NotifySwitches>,
    on_choice: &Arc<dyn Fn(Chosen) + Send + Sync>,
) {
    let mut notification = notify_rust::Notification::new();
    notification
        .appname(app_name)
        .summary(&notice.summary)
        .body(&notice.body)
        .icon("dialog-question")
        .urgency(if notice.critical {
            notify_rust::Urgency::Critical
        } else {
            notify_rust::Urgency::Normal
        })
        .action(OPEN_ACTION, "Open");
    for button in &buttons {
        notification.action(&button.key, &button.label);
    }
    let handle = match notification.show() {
        Ok(handle) => {
            switches.set_availability(true);
            handle
        }
        Err(error) => {
            switches.set_availability(false);
            tracing::warn!("could not show a desktop notification: {error}");
            return;
        }
    };
    let on_choice = Arc::clone(on_choice);
    let spawned = std::thread::Builder::new()
        .name("notification-action".into())
        .spawn(move || {
            handle.wait_for_action(|action| {
                if let Some(chosen) = chosen(action, open, buttons) {
                    on_choice(chosen);
                }
            })
        });
    if let Err(error) = spawned {
        tracing::warn!("cannot wait for a notification's action: {error}");
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
            chosen("answer:yes", Some("r1".into()), buttons.clone()),
            Some(Chosen::Answer {
                id: "r1".into(),
                answers
            })
        );
        assert_eq!(chosen("__closed", Some("r1".into()), buttons.clone()), None);
        assert_eq!(chosen("answer:yes", None, buttons), None);
    }

    #[test]
    fn switches_describe_the_state() {
        let switches = NotifySwitches::new(true, false);
        assert_eq!(switches.describe(), "available");
        switches.set_availability(false);
        assert_eq!(switches.describe(), "unavailable");
        switches.do_not_disturb.store(true, Ordering::Relaxed);
        assert_eq!(switches.describe(), "do_not_disturb");
        switches.enabled.store(false, Ordering::Relaxed);
        assert_eq!(switches.describe(), "off");
    }
}
