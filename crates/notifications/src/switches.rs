//! The switches a front end flips while notifications run (on/off, do not disturb), and
//! what the sender learnt about the daemon (there or not), shared between the window's
//! threads and the sender without locks.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

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
    /// Not asked yet.
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

    /// Records what the last call to the daemon showed; returns what was known before.
    pub fn set_availability(&self, available: bool) -> Availability {
        let before = self
            .availability
            .swap(if available { 1 } else { 2 }, Ordering::Relaxed);
        match before {
            1 => Availability::Available,
            2 => Availability::Unavailable,
            _ => Availability::Unknown,
        }
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

    /// Whether bubbles are held back (off, or do not disturb).
    pub fn silenced(&self) -> bool {
        !self.enabled.load(Ordering::Relaxed) || self.do_not_disturb.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_describe_the_state() {
        let switches = NotifySwitches::new(true, false);
        assert_eq!(switches.describe(), "available");
        assert_eq!(switches.set_availability(false), Availability::Unknown);
        assert_eq!(switches.describe(), "unavailable");
        assert!(!switches.silenced());
        switches.do_not_disturb.store(true, Ordering::Relaxed);
        assert_eq!(switches.describe(), "do_not_disturb");
        assert!(switches.silenced());
        switches.enabled.store(false, Ordering::Relaxed);
        assert_eq!(switches.describe(), "off");
        assert_eq!(switches.set_availability(true), Availability::Unavailable);
    }
}
