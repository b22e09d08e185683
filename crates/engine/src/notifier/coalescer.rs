//! When bubbles go out: the [`Coalescer`], a state machine over the times it is told (no
//! clock of its own), and what each bubble stands for ([`Delivery`]). A lone request goes
//! out at once; a burst as its first bubble and one summary when the [`QUIET_WINDOW`] ends.
//! The thread that drives it is `inbox-notifications`' one coalescing queue, for desktop
//! bubbles and ntfy pushes alike.

use std::time::{Duration, Instant};

/// How long after a bubble further requests are held back, to be shown together when it
/// ends.
///
/// 300 ms is short enough to read as "at once": a request that lands just after another
/// waits at most this long, well under the second a person notices. It is long enough to
/// catch a burst: an asker that writes many files in one go renames them within a few
/// milliseconds and the engine ingests them in batches of a few milliseconds each, so forty
/// files give the first request's bubble and one summary, not forty bubbles. Under a steady
/// stream it also caps the rate at about three bubbles a second.
pub const QUIET_WINDOW: Duration = Duration::from_millis(300);

/// The least time between two bubbles: [`QUIET_WINDOW`]. (The name the desktop benchmark
/// spaces its requests by.)
pub const MIN_GAP: Duration = QUIET_WINDOW;

/// What one bubble stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery<T> {
    /// A single request, on a bubble of its own (which may carry answer buttons).
    One(T),
    /// Several requests, on one summary bubble.
    Summary(Vec<T>),
}

impl<T> Delivery<T> {
    fn of(mut items: Vec<T>) -> Delivery<T> {
        match items.len() {
            1 => Delivery::One(items.remove(0)),
            _ => Delivery::Summary(items),
        }
    }

    /// The requests this bubble stands for, in the order they arrived.
    pub fn items(&self) -> &[T] {
        match self {
            Delivery::One(one) => std::slice::from_ref(one),
            Delivery::Summary(many) => many,
        }
    }

    pub fn into_items(self) -> Vec<T> {
        match self {
            Delivery::One(one) => vec![one],
            Delivery::Summary(many) => many,
        }
    }

    pub fn is_summary(&self) -> bool {
        matches!(self, Delivery::Summary(_))
    }
}

/// When bubbles go out, as a state machine over the times it is told (no clock of its own,
/// so tests drive it with made-up instants).
///
/// The rule: a request that arrives when no bubble went out within the last window is
/// delivered at once, on its own. Requests that arrive inside the window are held; when the
/// window ends they are delivered together: one bubble if one arrived, one summary if
/// several. That delivery starts a new window. So requests a second apart each get their
/// own bubble without delay, and a burst gets its first request's bubble at once and one
/// summary for the rest.
///
/// The sender waits with `recv_deadline(`[`Coalescer::deadline`]`)`, feeds what it receives
/// to [`Coalescer::arrive`] and calls [`Coalescer::due`] when the wait times out.
#[derive(Debug)]
pub struct Coalescer<T> {
    window: Duration,
    /// When the last bubble went out; `None` before the first.
    last_bubble: Option<Instant>,
    /// What arrived inside the window. Never empty unless `last_bubble` is set.
    held: Vec<T>,
}

impl<T> Coalescer<T> {
    pub fn new(window: Duration) -> Coalescer<T> {
        Coalescer {
            window,
            last_bubble: None,
            held: Vec::new(),
        }
    }

    /// Takes requests that arrived at `now`; returns the bubble to send now, if any.
    pub fn arrive(
        &mut self,
        now: Instant,
        items: impl IntoIterator<Item = T>,
    ) -> Option<Delivery<T>> {
        let mut items = items.into_iter();
        let quiet = self
            .last_bubble
            .is_none_or(|last| now.saturating_duration_since(last) >= self.window);
        if quiet && self.held.is_empty() {
            // The first one goes out at once; the rest of its batch arrived inside the
            // window that bubble opens.
            let first = items.next()?;
            self.last_bubble = Some(now);
            self.held.extend(items);
            return Some(Delivery::One(first));
        }
        self.held.extend(items);
        // The window may have ended before the sender noticed: then these join the held.
        self.due(now)
    }

    /// Lets go of held items that `gone` says are no longer news (a request settled or
    /// withdrawn before its summary went out), so no bubble ever offers them.
    pub fn forget(&mut self, gone: impl Fn(&T) -> bool) {
        self.held.retain(|item| !gone(item));
    }

    /// When the held requests are due; `None` when nothing is held.
    pub fn deadline(&self) -> Option<Instant> {
        if self.held.is_empty() {
            return None;
        }
        self.last_bubble.map(|last| last + self.window)
    }

    /// The held requests, if their window has ended by `now`.
    pub fn due(&mut self, now: Instant) -> Option<Delivery<T>> {
        if now < self.deadline()? {
            return None;
        }
        self.last_bubble = Some(now);
        Some(Delivery::of(std::mem::take(&mut self.held)))
    }

    /// How many requests wait for the window to end.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;

    #[test]
    fn the_log_says_whether_a_bubble_was_a_summary() {
        let one = Event::Notified {
            ids: vec!["a".into()],
            merged: false,
        };
        assert_eq!(one.log_line(), "notified: a");
        let many = Event::Notified {
            ids: vec!["a".into(), "b".into(), "c".into()],
            merged: true,
        };
        assert_eq!(many.log_line(), "notified (one summary): a, b, c");
    }

    /// What a bubble stood for, and when it went out (ms after the start).
    #[derive(Debug, PartialEq, Eq)]
    enum Sent {
        One(u64, u32),
        Summary(u64, Vec<u32>),
    }

    /// Runs the coalescer the way the sender thread does, on a made-up clock: requests
    /// `arrivals` (ms after the start, request number) come in; between two arrivals, a
    /// window that ends is delivered at its deadline, as `recv_deadline` would time out.
    fn drive(window_ms: u64, arrivals: &[(u64, Vec<u32>)]) -> Vec<Sent> {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let ms = |instant: Instant| instant.duration_since(start).as_millis() as u64;
        let mut coalescer = Coalescer::new(Duration::from_millis(window_ms));
        let mut sent = Vec::new();
        let mut record = |now: Instant, delivery: Delivery<u32>| {
            sent.push(match delivery {
                Delivery::One(n) => Sent::One(ms(now), n),
                Delivery::Summary(many) => Sent::Summary(ms(now), many),
            })
        };
        for (when, batch) in arrivals {
            while let Some(deadline) = coalescer.deadline().filter(|d| *d <= at(*when)) {
                let delivery = coalescer.due(deadline).expect("due at its deadline");
                record(deadline, delivery);
            }
            if let Some(delivery) = coalescer.arrive(at(*when), batch.iter().copied()) {
                record(at(*when), delivery);
            }
        }
        while let Some(deadline) = coalescer.deadline() {
            let delivery = coalescer.due(deadline).expect("due at its deadline");
            record(deadline, delivery);
        }
        sent
    }

    #[test]
    fn requests_a_second_apart_each_get_their_own_bubble_at_once() {
        let arrivals: Vec<(u64, Vec<u32>)> =
            (0..8).map(|i| (u64::from(i) * 1000, vec![i])).collect();
        let expected: Vec<Sent> = (0..8).map(|i| Sent::One(u64::from(i) * 1000, i)).collect();
        assert_eq!(drive(300, &arrivals), expected);
    }

    #[test]
    fn a_burst_gives_its_first_bubble_at_once_and_one_summary() {
        // Forty files landing one per millisecond, each its own engine batch.
        let arrivals: Vec<(u64, Vec<u32>)> = (0..40).map(|i| (u64::from(i), vec![i])).collect();
        assert_eq!(
            drive(300, &arrivals),
            [Sent::One(0, 0), Sent::Summary(300, (1..40).collect())]
        );
        // The same forty in one engine batch.
        assert_eq!(
            drive(300, &[(5, (0..40).collect())]),
            [Sent::One(5, 0), Sent::Summary(305, (1..40).collect())]
        );
    }

    #[test]
    fn a_lone_request_inside_the_window_gets_its_own_bubble_when_it_ends() {
        assert_eq!(
            drive(300, &[(0, vec![1]), (100, vec![2]), (2000, vec![3])]),
            [Sent::One(0, 1), Sent::One(300, 2), Sent::One(2000, 3)]
        );
    }

    #[test]
    fn a_request_just_after_a_window_waits_for_the_one_its_delivery_opened() {
        // 1 at once; 2 held until 300, whose bubble opens a window to 600; 3 lands at 350.
        assert_eq!(
            drive(300, &[(0, vec![1]), (100, vec![2]), (350, vec![3])]),
            [Sent::One(0, 1), Sent::One(300, 2), Sent::One(600, 3)]
        );
    }

    #[test]
    fn a_steady_stream_is_shown_no_faster_than_one_bubble_per_window() {
        let arrivals: Vec<(u64, Vec<u32>)> =
            (0..10).map(|i| (u64::from(i) * 100, vec![i])).collect();
        let sent = drive(300, &arrivals);
        assert_eq!(
            sent,
            [
                Sent::One(0, 0),
                Sent::Summary(300, vec![1, 2]),
                // A request landing as a window ends waits for the next one.
                Sent::Summary(600, vec![3, 4, 5]),
                Sent::Summary(900, vec![6, 7, 8]),
                Sent::One(1200, 9),
            ]
        );
    }

    #[test]
    fn requests_that_arrive_after_an_unnoticed_deadline_join_the_held_ones() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut coalescer = Coalescer::new(Duration::from_millis(300));
        assert_eq!(coalescer.arrive(at(0), [1]), Some(Delivery::One(1)));
        assert_eq!(coalescer.arrive(at(10), [2]), None);
        assert_eq!(coalescer.deadline(), Some(at(300)));
        assert_eq!(coalescer.due(at(299)), None);
        assert_eq!(coalescer.held(), 1);
        // The sender was busy past the deadline; 3 arrives before it looked.
        assert_eq!(
            coalescer.arrive(at(320), [3]),
            Some(Delivery::Summary(vec![2, 3]))
        );
        assert_eq!(coalescer.deadline(), None);
        // That summary opened a window of its own.
        assert_eq!(coalescer.arrive(at(400), [4]), None);
        assert_eq!(coalescer.deadline(), Some(at(620)));
        assert_eq!(
            coalescer.arrive(at(700), Vec::new()),
            Some(Delivery::One(4))
        );
        assert_eq!(coalescer.arrive(at(5000), Vec::new()), None);
    }

    #[test]
    fn deliveries_list_their_requests() {
        let one = Delivery::One(7);
        assert_eq!(one.items(), &[7]);
        assert!(!one.is_summary());
        let many = Delivery::Summary(vec![1, 2]);
        assert_eq!(many.items(), &[1, 2]);
        assert!(many.is_summary());
        assert_eq!(many.into_items(), vec![1, 2]);
    }
}
