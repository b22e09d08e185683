//! The desktop app's notifications: `inbox-notifications` (one D-Bus connection, a bubble as
//! soon as a request arrives, a summary for a burst) with the app's answer buttons from
//! [`crate::actions`] and its handler for clicks and presses. A press answers the request
//! without opening the window; a click opens the window on it. Nothing on the engine's path
//! ever waits for the notification daemon.
//!
//! The switches and [`Chosen`] live in `inbox-notifications` and are re-exported here, where
//! the rest of the app has always found them.

use std::sync::Arc;

use inbox_engine::notifier::{Announcement, Notifier};
use inbox_notifications::Notifications;

use crate::actions::answer_buttons;

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
            .buttons(answer_buttons)
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
}
