//! What only the desktop app needs, without a window: the running app ([`Desk`]: the
//! inbox with desktop notifications and answer buttons, settings changed live), the close
//! button's rule (a tray host or not), the daily log file, and start-up from the AppImage.
//! The inbox itself, its views and errors are the service crate `inbox-app`, which the web
//! server and the command line use too.
//!
//! `src-tauri` wires these into Tauri. Keeping the logic here means it is tested with plain
//! `cargo test`, no display needed.
//!
//! - [`desk`]: the running app: inbox, loop, notifications, settings changes.
//! - [`notify`]: notifications with buttons, do-not-disturb.
//! - [`logs`]: the app's daily log file in the state directory.
//! - [`closing`]: whether closing the window hides it (a tray host is there) or quits.
//! - [`handover`]: a second launch hands over to the running app before it starts.
//! - [`bundle`]: running from the AppImage's bundle.
//! - [`rendering`]: whether WebKit composites with GL (off where there is no GPU).

pub mod bundle;
pub mod closing;
pub mod desk;
pub mod handover;
pub mod logs;
pub mod notify;
#[cfg(test)]
mod private_bus;
pub mod rendering;

pub use desk::{Desk, DeskConfig, ShellHooks};
pub use notify::{ActionNotifier, Chosen, NotifySwitches};
