//! The desktop app's notifications: `inbox-notifications` (one D-Bus connection, a bubble as
//! soon as a request arrives, a summary for a burst) with answer buttons where the engine's
//! rule allows (`inbox_engine::notifier::offer`) and the app's handler for clicks and presses. A bubble
//! with buttons shows the question and each answer its buttons give; a press answers the
//! request without opening the window, bound to the version of the request the bubble
//! showed ([`Chosen::Answer`]'s `version`); a click opens the window on it. High and
//! critical requests, and whatever a bubble cannot show whole, have no answer buttons:
//! a click opens the window. Nothing on the engine's path ever waits for the notification
//! daemon.
//!
//! The switches and [`Chosen`] live in `inbox-notifications` and are re-exported here, where
//! the rest of the app has always found them.

use std::sync::Arc;

use inbox_engine::notifier::{Announcement, Gone, Notifier};
use inbox_notifications::Notifications;

pub use inbox_notifications::{Availability, Chosen, NotifySwitches};

/// The app's [`Notifier`]: hand it to the engine's loop.
pub struct ActionNotifier {
    /// `None` when the sender thread could not start: the app then runs without bubbles.
    notifications: Option<Notifications>,
}

impl ActionNotifier {
    /// Starts the notification thread. `on_choice` runs on the bus listener's thread when
    /// the operator clicks a bubble or presses a button, and must not block for long.
    pub fn start(
        app_name: &'static str,
        switches: Arc<NotifySwitches>,
        on_choice: Arc<dyn Fn(Chosen) + Send + Sync>,
    ) -> ActionNotifier {
        let notifications = Notifications::builder(app_name)
            .switches(switches)
            .answer_buttons()
            .on_choice(move |chosen| on_choice(chosen))
            .start()
            .map_err(|error| tracing::warn!("desktop notifications are off: {error}"))
            .ok();
        ActionNotifier { notifications }
    }
}

impl Notifier for ActionNotifier {
    fn announce(&self, fresh: Vec<Announcement>) {
        if let Some(notifications) = &self.notifications {
            notifications.announce(fresh);
        }
    }

    fn withdraw(&self, gone: Vec<Gone>) {
        if let Some(notifications) = &self.notifications {
            notifications.withdraw(gone);
        }
    }
}
