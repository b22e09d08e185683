//! What the server's handlers share: the inbox they answer for, the paired devices, the
//! event feed, and the checks in front of every route. A leaf module, so the routes
//! (`server`) and the handlers (`api`) both use it without importing each other.

use std::sync::Arc;

use inbox_app::Inbox;

use crate::devices::DeviceStore;
use crate::events::EventFeed;
use crate::guard::{Failures, Hosts};

/// The inbox the server answers for, looked up per request: the desktop app may swap it
/// for another spool's while the server runs.
pub type InboxSource = Arc<dyn Fn() -> Arc<Inbox> + Send + Sync>;

/// What every handler shares.
pub(crate) struct Shared {
    pub inbox: InboxSource,
    pub devices: Arc<DeviceStore>,
    pub feed: EventFeed,
    pub hosts: Hosts,
    pub tls: bool,
    pub public_origin: Option<String>,
    pub failures: Failures,
}

impl Shared {
    pub fn scheme(&self) -> &'static str {
        if self.tls {
            "https"
        } else {
            "http"
        }
    }
}
