//! The one coalescing queue every notifier of this crate runs on: the desktop's bubbles
//! ([`crate::Notifications`]) and the pushes to a phone ([`crate::ntfy::NtfyPublisher`]).
//!
//! The engine hands over new requests between two batches; `announce` only puts them on a
//! bounded queue (a full queue drops that bubble or push with a warning, never a request:
//! the inbox still lists it), so a slow or missing daemon or server can never stall the
//! engine. One thread of the notifier's own takes them off, times them with the engine's
//! [`Coalescer`] (a lone request at once, a burst as its first bubble plus one summary) and
//! hands each [`Delivery`] to the notifier's [`Deliver`]: showing a bubble or publishing a
//! push is all that differs between them.

use std::time::Instant;

use crossbeam_channel::TrySendError;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use inbox_engine::notifier::{Announcement, Coalescer, Delivery, Gone, Notifier, QUIET_WINDOW};

/// Batches of new requests that may wait for a notifier's thread. A thousand batches behind
/// means the daemon or the server is stuck; what comes next is dropped rather than held.
pub const QUEUE_CAPACITY: usize = 1024;

/// What a notifier does with each delivery, on its own thread.
pub trait Deliver: Send + 'static {
    /// Runs once on the notifier's thread, before it waits for the first request: work that
    /// is no business of the caller's thread (looking at the disk, asking whether a daemon
    /// answers).
    fn start(&mut self) {}

    /// Shows or sends one bubble. It may take its time (a hung daemon, a slow server):
    /// meanwhile new requests wait in the queue, the engine never does.
    fn deliver(&mut self, delivery: Delivery<Announcement>);

    /// These requests left the pending list: take back what was delivered for them (close
    /// the bubble, clear the push). Nothing held for them is delivered any more.
    fn withdraw(&mut self, _gone: &[Gone]) {}
}

/// What the engine tells a notifier's thread.
enum News {
    Fresh(Vec<Announcement>),
    Gone(Vec<Gone>),
}

/// The engine's side of a notifier: its bounded queue, into which `announce` hands each
/// batch without waiting. Dropping it ends the notifier's thread (after the delivery under
/// way, if any).
pub struct CoalescingQueue {
    queue: Sender<News>,
    /// What a full queue costs ("bubble", "push"), for the log.
    what: &'static str,
}

impl CoalescingQueue {
    /// Starts a thread named `thread` that hands every delivery to `deliver`. `what` names
    /// one delivery in the log ("bubble", "push").
    pub fn start(
        thread: &str,
        what: &'static str,
        deliver: impl Deliver,
    ) -> std::io::Result<CoalescingQueue> {
        let (queue, inbox) = crossbeam_channel::bounded(QUEUE_CAPACITY);
        std::thread::Builder::new()
            .name(thread.into())
            .spawn(move || run(&inbox, deliver))?;
        Ok(CoalescingQueue { queue, what })
    }
}

impl Notifier for CoalescingQueue {
    fn announce(&self, fresh: Vec<Announcement>) {
        if !fresh.is_empty() {
            self.hand_over(News::Fresh(fresh));
        }
    }

    fn withdraw(&self, gone: Vec<Gone>) {
        if !gone.is_empty() {
            self.hand_over(News::Gone(gone));
        }
    }
}

impl CoalescingQueue {
    /// Puts `news` on the queue, never waiting: a stuck daemon or server costs a bubble
    /// (said in the log), never a request, which the inbox itself still has.
    fn hand_over(&self, news: News) {
        match self.queue.try_send(news) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(News::Fresh(dropped))) => tracing::warn!(
                "{what} queue full; no {what} for {} new request(s)",
                dropped.len(),
                what = self.what
            ),
            Err(TrySendError::Full(News::Gone(dropped))) => tracing::warn!(
                "{what} queue full; the {what} for {} settled request(s) may stay on screen",
                dropped.len(),
                what = self.what
            ),
        }
    }
}

/// The notifier's thread: waits with `recv_deadline(`[`Coalescer::deadline`]`)`, feeds what
/// it receives to the coalescer, and hands on each delivery it lets out.
fn run(inbox: &Receiver<News>, mut deliver: impl Deliver) {
    deliver.start();
    let mut coalescer = Coalescer::new(QUIET_WINDOW);
    loop {
        let received = match coalescer.deadline() {
            Some(deadline) => inbox.recv_deadline(deadline),
            None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        let now = Instant::now();
        let delivery = match received {
            Ok(News::Fresh(batch)) => coalescer.arrive(now, batch),
            Ok(News::Gone(gone)) => {
                coalescer.forget(|held| gone.iter().any(|g| g.id == held.summary.id));
                deliver.withdraw(&gone);
                // A summary that was due goes out now, without them.
                coalescer.due(now)
            }
            Err(RecvTimeoutError::Timeout) => coalescer.due(now),
            // The notifier was dropped (the app or `watch` stops, or the app's settings
            // take the pushes off): what is held stays listed in the inbox.
            Err(RecvTimeoutError::Disconnected) => return,
        };
        if let Some(delivery) = delivery {
            deliver.deliver(delivery);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{announced, confirm, flood};
    use std::time::Duration;

    /// What the thread handed on: when, which requests, whether as one summary; and the
    /// delivery it is told to hold on to until the test lets go.
    struct Recorder {
        sent: Sender<(Instant, Vec<String>, bool)>,
        hold: Option<Receiver<()>>,
    }

    impl Deliver for Recorder {
        fn deliver(&mut self, delivery: Delivery<Announcement>) {
            let summary = delivery.is_summary();
            let ids = delivery.into_items().into_iter().map(|a| a.summary.id);
            let _ = self.sent.send((Instant::now(), ids.collect(), summary));
            if let Some(hold) = &self.hold {
                let _ = hold.recv();
            }
        }
    }

    fn batch(id: &str) -> Vec<Announcement> {
        vec![announced(id, confirm(id, "Go?"))]
    }

    #[test]
    fn a_burst_is_its_first_bubble_at_once_and_one_summary_after_the_window() {
        let (sent, delivered) = crossbeam_channel::unbounded();
        let queue =
            CoalescingQueue::start("test", "bubble", Recorder { sent, hold: None }).unwrap();
        let started = Instant::now();
        for id in ["a", "b", "c"] {
            queue.announce(batch(id));
        }
        let wait = Duration::from_secs(10);
        let (first_at, first, merged) = delivered.recv_timeout(wait).unwrap();
        assert_eq!((first, merged), (vec!["a".to_owned()], false));
        assert!(
            first_at - started < QUIET_WINDOW,
            "{:?}",
            first_at - started
        );
        let (rest_at, rest, merged) = delivered.recv_timeout(wait).unwrap();
        assert_eq!((rest, merged), (vec!["b".to_owned(), "c".to_owned()], true));
        assert!(
            rest_at - first_at >= QUIET_WINDOW,
            "{:?}",
            rest_at - first_at
        );

        // Dropped, the queue ends its thread, and with it the recorder.
        drop(queue);
        assert_eq!(
            delivered.recv_timeout(wait),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn a_stuck_delivery_never_holds_up_the_engine() {
        let (sent, delivered) = crossbeam_channel::unbounded();
        let (release, hold) = crossbeam_channel::bounded(0);
        let recorder = Recorder {
            sent,
            hold: Some(hold),
        };
        let queue = CoalescingQueue::start("test", "bubble", recorder).unwrap();
        queue.announce(batch("first"));
        let (_, first, _) = delivered.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first, ["first"]);
        // The thread is stuck on its first delivery; the engine's side fills the queue and
        // drops the rest without waiting.
        let took = flood(&queue);
        assert!(took < Duration::from_secs(2), "{took:?}");
        // Let go: what the queue held comes out (as a bubble and a summary, or one summary,
        // as the window says), in order; what was dropped never does.
        drop(release);
        let expected: Vec<String> = (0..QUEUE_CAPACITY).map(|i| format!("r{i}")).collect();
        let mut shown = Vec::new();
        while shown.len() < expected.len() {
            let (_, ids, _) = delivered.recv_timeout(Duration::from_secs(10)).unwrap();
            shown.extend(ids);
        }
        assert_eq!(shown, expected);
        assert!(delivered.recv_timeout(QUIET_WINDOW * 2).is_err());
    }
}
