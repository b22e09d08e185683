//! Desktop notifications and pushes to a phone through ntfy: the front ends' notifiers,
//! side by side behind the engine's `Notifier` trait, on one coalescing queue.
//!
//! The engine decides what is announced, when (its coalescing), in which words and with which
//! answer buttons (`inbox_engine::notifier::compose`: a bubble with buttons shows the whole
//! question and each answer its buttons give; high and critical requests, and anything too
//! long to show whole, only open the window); this crate shows it, for both front ends, the
//! `watch` daemon and the desktop app (and `serve`), so they cannot drift apart.
//!
//! Bubbles are freedesktop notifications (`org.freedesktop.Notifications`) over one D-Bus
//! connection for the life of the process. The crate speaks D-Bus itself (zbus, the major
//! version Tauri's plugins use, so the app carries one D-Bus stack): one connection, opened
//! when first needed and opened again if the bus goes away, and one listener thread for the
//! service's signals that hands each action to the bubble it belongs to, instead of a
//! connection and a waiting thread per bubble. Pushes are ntfy's "publish as JSON" over
//! HTTP (ureq, on the publisher's own thread: no async runtime).
//!
//! - [`queue`]: [`CoalescingQueue`], the one queue and thread both notifiers run on: a
//!   bounded queue the engine hands batches into without waiting (a full queue drops a
//!   bubble or push, never a request), timed by the engine's `Coalescer`, each delivery
//!   handed to the notifier's [`Deliver`].
//! - [`bus`]: [`NotificationBus`], the connection and the service's methods and signals.
//! - [`notifications`]: [`Notifications`], the desktop's notifier: bubbles over the bus,
//!   answer buttons from the engine's offer, presses as [`Chosen`] carrying the version
//!   (the request file's SHA-256) the bubble showed, `Event::Notified` when a bubble is
//!   really shown.
//! - [`ntfy`]: [`NtfyPublisher`], pushes to an ntfy topic: its settings ([`NtfyConfig`]),
//!   what a push says (titles only or not), and answer buttons as one-time URLs that the
//!   caller's [`Links`] make (inbox-web's server, over its device store).
//! - [`switches`]: on/off, do not disturb, and whether a daemon answers.
//! - [`identity`]: whose bubbles they are: the `desktop-entry` hint and the app's icon, so
//!   notification centres group and attribute them.
//! - [`markup`]: bodies sent as plain text to daemons that read markup: escaped for the
//!   very daemon that shows them.

pub mod bus;
pub mod identity;
pub mod markup;
pub mod notifications;
pub mod ntfy;
pub mod queue;
pub mod switches;
#[cfg(test)]
mod testing;

pub use bus::{
    ActionHandler, Bubble, NotificationBus, NotifyError, ServerInformation, Urgency, CALL_TIMEOUT,
};
pub use identity::{AppIdentity, DESKTOP_ENTRY, ICON_NAME};
pub use markup::escape_body;
pub use notifications::{ActionButton, Chosen, Notifications, NotificationsBuilder, OPEN_ACTION};
pub use ntfy::{Links, NtfyConfig, NtfyError, NtfyPublisher};
pub use queue::{CoalescingQueue, Deliver, QUEUE_CAPACITY};
pub use switches::{Availability, NotifySwitches};

/// Whether a notification service answers on the process's session bus. Blocks up to
/// [`CALL_TIMEOUT`] (a hung daemon): call it off the engine's and the window's threads.
pub fn daemon_available() -> Result<ServerInformation, NotifyError> {
    NotificationBus::shared().server_information()
}

/// The line the operator reads when notifications cannot be shown.
pub fn unavailable_message(error: &dyn std::fmt::Display) -> String {
    format!(
        "desktop notifications are unavailable (no notification service on the session bus: \
         {error}); new requests are still listed, and the inbox works as before"
    )
}
