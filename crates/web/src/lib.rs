//! `answer-inbox serve`: the inbox's own UI for a browser on another device, and the links
//! of pushes to a phone. The CLI's `serve` and the desktop app's "Answer from other devices"
//! start the same [`WebServer`] over the same [`inbox_app::Inbox`] the window uses.
//!
//! The ntfy publisher itself is a notifier in inbox-notifications
//! ([`inbox_notifications::ntfy`]), beside the desktop's bubbles; what is web's is what a
//! push links to: [`server::ServerLinks`], its implementation of
//! [`inbox_notifications::Links`] (the page, and one-time answer URLs kept in the device
//! store), and the wiring in [`remote`] and the CLI's `serve`.
//!
//! - [`server`]: listening (TLS or loopback HTTP), the routes, the Host check in front, and
//!   the links pushes carry.
//! - [`api`]: the handlers: session, pairing, the window's commands, one-time links.
//! - [`guard`]: Host, Origin and CSRF checks, the failed-attempt limiter.
//! - [`connections`]: the caps on open connections and the deadline for a whole request.
//! - [`events`]: the inbox's events as server-sent events for open pages.
//! - [`assets`]: the built UI with the window's CSP.
//! - [`errors`]: `{code, message}` HTTP errors, and the codes only a browser meets.
//! - [`views`]: the remote-access views (the server, devices, a pairing).
//! - [`devices`]: paired devices, pairing codes and one-time action URLs, in a SQLite file.
//! - [`tls`]: the self-signed certificate made on first start, and its fingerprint.
//! - [`qr`]: the pairing link as a QR code for the desktop's Settings.
//! - [`remote`]: the desktop app's "Answer from other devices": the server and the ntfy
//!   pushes as Settings say.

pub mod api;
pub mod assets;
pub mod connections;
pub mod devices;
pub mod errors;
pub mod events;
pub mod guard;
pub mod qr;
pub mod remote;
pub mod server;
mod state;
pub mod tls;
pub mod views;

pub use devices::{Device, DeviceError, DeviceStore};
pub use errors::{HttpError, WebErrorCode};
pub use events::EventFeed;
pub use remote::Remote;
pub use server::{new_pairing_link, InboxSource, Listening, ServeError, ServeOptions, WebServer};
pub use views::{DeviceView, PairingView, RemoteView};
