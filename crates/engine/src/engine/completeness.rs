//! Whether the loop's watcher reports every change in the spool, or else its loss: what
//! the engine relies on to skip work that only a missed event would need (see `look_for` in
//! ingest.rs). The watcher ([`crate::watcher`]) keeps it up to date; it lives here, apart,
//! so that the engine does not import the watcher that drives it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether a watcher delivers an event for every change it watches for, or else reports the
/// loss as a rescan hint ([`crate::watcher::Hint::Rescan`]). True while every inotify watch on the spool holds; false for
/// the poll watcher, and from the moment a watch ends without being asked to (its
/// directory deleted, moved or unmounted) or a read fails. The engine relies on it to skip
/// work that only a missed event would need (`Engine::rely_on_events`). Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Completeness(Arc<AtomicBool>);

impl Completeness {
    pub(crate) fn new(complete: bool) -> Completeness {
        Completeness(Arc::new(AtomicBool::new(complete)))
    }

    /// Whether every change is still delivered, or its loss reported.
    pub fn holds(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// From now on, not relied on.
    pub(crate) fn lost(&self) {
        self.0.store(false, Ordering::Release);
    }
}
