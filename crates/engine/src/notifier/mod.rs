//! Telling the operator, the engine's half: the [`Notifier`] trait the front ends implement,
//! what the engine hands over ([`Announcement`]), and the ways of putting notifiers together
//! ([`Silent`], [`NotifierSlot`], [`Fanout`]). A notifier hears of new requests
//! (`announce`) and of requests that left the pending list (`withdraw`), never waiting.
//!
//! Everything here is pure: no D-Bus, no HTTP, no thread, no clock of its own. Sending lives
//! in the `inbox-notifications` crate (desktop bubbles for the `watch` daemon and the
//! desktop app, and pushes to ntfy), whose one coalescing queue drives the [`Coalescer`]
//! from its own thread. The split keeps the engine free of GUI, bus and network code, and
//! keeps the rules (what a bubble says, what its buttons answer, when it goes out) testable
//! with a fake clock.
//!
//! - [`coalescer`]: when bubbles go out ([`Coalescer`], [`Delivery`], [`QUIET_WINDOW`]).
//! - [`wording`]: what a bubble says and whether it may carry answer buttons ([`compose`],
//!   [`offer`], [`Notice`], [`Offer`], [`NeedsWindow`]).
//! - [`gone`]: a request that left the pending list, and why ([`Gone`], [`Departure`]).
//! - [`decision`]: the bubble for an agent's tool-call decision: the call shown whole, the
//!   decision's options as numbered buttons ([`MAX_DECISION_ROWS`]).

pub mod coalescer;
pub mod decision;
pub mod gone;
pub mod notice;
pub mod wording;

use inbox_policy::Loudness;
use inbox_protocol::{Priority, Request};

use crate::store::{RequestDetail, RequestSummary};

pub use coalescer::{Coalescer, Delivery, MIN_GAP, QUIET_WINDOW};
pub use decision::{MAX_DECISION_ROWS, ROW_CHARS};
pub use gone::{Departure, Gone};
pub use notice::{
    NeedsWindow, Notice, Offer, OfferedAnswer, MAX_BODY_CHARS, MAX_BUTTONS, MAX_LABEL_CHARS,
    MAX_SHOWN_QUESTION_CHARS,
};
pub use wording::{compose, offer};

/// Something that can tell the operator about new requests.
///
/// `announce` runs on the engine's thread, between two batches: it must return at once,
/// whatever the notification daemon does (queue the work for a thread of your own). The
/// implementation, not the engine, reports [`crate::Event::Notified`], once a bubble is
/// actually shown.
pub trait Notifier: Send {
    fn announce(&self, fresh: Vec<Announcement>);

    /// Requests that left the pending list (settled, withdrawn, expired, rejected, snoozed),
    /// by whoever: take back what was shown for them (close the bubble, replace the push with
    /// who settled it), so no surface keeps offering a decision that no longer decides
    /// anything. Never waits.
    fn withdraw(&self, _gone: Vec<Gone>) {}
}

/// One new pending request, as the engine hands it to a [`Notifier`]: the summary the bubble
/// is worded from, and the normalised request, so that a front end can offer answer buttons
/// without opening the database again.
#[derive(Debug, Clone)]
pub struct Announcement {
    pub summary: RequestSummary,
    pub request: Option<Request>,
    /// How loudly, as the operator's policy says (a `critical` request is always loud).
    pub loudness: Loudness,
    /// Whether the policy lets a bubble for it carry answer buttons.
    pub buttons: bool,
    /// Set when this is an escalation step's reminder, not the first announcement: which
    /// step.
    pub escalation: Option<u32>,
}

impl Announcement {
    /// A request just placed and ingested, pending, as the engine would announce it (for
    /// front ends' and tests' own announcements).
    pub fn pending(
        id: &str,
        request: Request,
        placed_at: chrono::DateTime<chrono::Utc>,
    ) -> Announcement {
        Announcement {
            summary: RequestSummary {
                id: id.to_owned(),
                state: crate::store::State::Pending,
                title: request.display_title().to_owned(),
                source: request.source.clone(),
                priority: request.priority,
                mode: request.mode,
                question_count: request.questions.len(),
                placed_at,
                deadline: None,
                settled_at: None,
                answered_by: None,
                unwritten: None,
                blocked: None,
                placed_by: None,
                judgement: None,
                snoozed_until: None,
            },
            request: Some(request),
            loudness: Loudness::Normal,
            buttons: true,
            escalation: None,
        }
    }

    /// Whether its bubble is critical: by the request's priority or the policy's word.
    pub fn is_critical(&self) -> bool {
        self.summary.priority == Priority::Critical || self.loudness == Loudness::Critical
    }
}

impl From<RequestDetail> for Announcement {
    /// As the judgement kept with the request says (normal, with buttons, without one).
    fn from(detail: RequestDetail) -> Announcement {
        let (loudness, buttons) = detail
            .summary
            .judgement
            .as_ref()
            .map_or((Loudness::Normal, true), |j| (j.notify, j.buttons));
        Announcement {
            summary: detail.summary,
            request: detail.request,
            loudness,
            buttons,
            escalation: None,
        }
    }
}

/// Notifies nobody: `watch --no-notify`, tests.
pub struct Silent;

impl Notifier for Silent {
    fn announce(&self, _fresh: Vec<Announcement>) {}
}

/// A notifier that can be put in, swapped or taken out while the loop runs: the desktop
/// app's pushes to a phone follow its settings without restarting the inbox.
#[derive(Clone, Default)]
pub struct NotifierSlot(std::sync::Arc<std::sync::Mutex<Option<Box<dyn Notifier>>>>);

impl NotifierSlot {
    pub fn set(&self, notifier: Option<Box<dyn Notifier>>) {
        // The old one is dropped outside the lock: its thread may take a moment to end.
        let old = std::mem::replace(
            &mut *self.0.lock().unwrap_or_else(|p| p.into_inner()),
            notifier,
        );
        drop(old);
    }
}

impl Notifier for NotifierSlot {
    fn announce(&self, fresh: Vec<Announcement>) {
        if let Some(notifier) = self.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            notifier.announce(fresh);
        }
    }

    fn withdraw(&self, gone: Vec<Gone>) {
        if let Some(notifier) = self.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            notifier.withdraw(gone);
        }
    }
}

/// Tells several notifiers the same news: desktop bubbles and pushes to a phone, each with
/// its own thread and coalescing.
pub struct Fanout(pub Vec<Box<dyn Notifier>>);

impl Notifier for Fanout {
    fn announce(&self, fresh: Vec<Announcement>) {
        if let Some((last, others)) = self.0.split_last() {
            for notifier in others {
                notifier.announce(fresh.clone());
            }
            last.announce(fresh);
        }
    }

    fn withdraw(&self, gone: Vec<Gone>) {
        if let Some((last, others)) = self.0.split_last() {
            for notifier in others {
                notifier.withdraw(gone.clone());
            }
            last.withdraw(gone);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Records the ids of every batch it is told.
    #[derive(Clone, Default)]
    struct Told(Arc<Mutex<Vec<Vec<String>>>>);

    impl Notifier for Told {
        fn announce(&self, fresh: Vec<Announcement>) {
            let ids = fresh.into_iter().map(|a| a.summary.id).collect();
            self.0.lock().unwrap().push(ids);
        }

        /// Recorded as the ids with a leading `-`.
        fn withdraw(&self, gone: Vec<Gone>) {
            let ids = gone.into_iter().map(|g| format!("-{}", g.id)).collect();
            self.0.lock().unwrap().push(ids);
        }
    }

    impl Told {
        fn batches(&self) -> Vec<Vec<String>> {
            self.0.lock().unwrap().clone()
        }
    }

    fn announced(id: &str) -> Announcement {
        let json = r#"{"questions": [{"type": "yes_no", "question": "Go?"}]}"#;
        let request = inbox_protocol::parse_request(json.as_bytes(), Some(id)).unwrap();
        Announcement::pending(id, request, chrono::Utc::now())
    }

    #[test]
    fn withdrawals_reach_every_notifier_of_a_fanout_and_a_slot() {
        let (first, second) = (Told::default(), Told::default());
        let fanout = Fanout(vec![Box::new(first.clone()), Box::new(second.clone())]);
        fanout.withdraw(vec![Gone::withdrawn("a")]);
        assert_eq!(first.batches(), [["-a"]]);
        assert_eq!(second.batches(), first.batches());
        let slot = NotifierSlot::default();
        slot.withdraw(vec![Gone::withdrawn("b")]);
        slot.set(Some(Box::new(first.clone())));
        slot.withdraw(vec![Gone::withdrawn("c")]);
        assert_eq!(first.batches(), [["-a"], ["-c"]]);
        // A notifier that keeps nothing on screen ignores them.
        Silent.withdraw(vec![Gone::withdrawn("d")]);
    }

    #[test]
    fn fanout_tells_everyone_and_a_slot_tells_whoever_is_in_it() {
        let (first, second) = (Told::default(), Told::default());
        let fanout = Fanout(vec![Box::new(first.clone()), Box::new(second.clone())]);
        fanout.announce(vec![announced("a"), announced("b")]);
        assert_eq!(first.batches(), [["a", "b"]]);
        assert_eq!(second.batches(), first.batches());
        Fanout(Vec::new()).announce(vec![announced("c")]);

        let slot = NotifierSlot::default();
        slot.announce(vec![announced("d")]);
        let inside = Told::default();
        slot.set(Some(Box::new(inside.clone())));
        slot.clone().announce(vec![announced("e")]);
        slot.set(None);
        slot.announce(vec![announced("f")]);
        assert_eq!(inside.batches(), [["e"]]);
    }
}
