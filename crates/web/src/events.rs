//! Live changes for open pages: the inbox's events (the same `UiEvent`s the window hears)
//! fanned out to every connected page as server-sent events.
//!
//! A page that falls behind (its connection too slow for a burst) is not given a partial
//! story: it gets one `changed` in its refetch form (no delta), which makes it fetch the
//! lists again. A device revoked while its page is open loses its stream at the next
//! keep-alive.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use inbox_app::UiEvent;
use tokio::sync::broadcast;

/// How many events wait for a slow page before it is told to fetch everything again.
const BACKLOG: usize = 256;

/// How often an idle stream carries a comment (keeps proxies from closing it) and the
/// device is checked again.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The inbox's events for the web. Cheap to clone; sending with nobody listening is fine.
#[derive(Clone)]
pub struct EventFeed {
    sender: broadcast::Sender<UiEvent>,
}

impl Default for EventFeed {
    fn default() -> Self {
        EventFeed::new()
    }
}

impl EventFeed {
    pub fn new() -> EventFeed {
        EventFeed {
            sender: broadcast::channel(BACKLOG).0,
        }
    }

    /// Passes an event to every open page. `focus` is the desktop window's own business
    /// (a notification clicked on this machine), so it stays here.
    pub fn send(&self, event: UiEvent) {
        if !matches!(event, UiEvent::Focus { .. }) {
            let _ = self.sender.send(event);
        }
    }

    /// The feed as the inbox's event sink.
    pub fn sink(&self) -> Arc<dyn Fn(UiEvent) + Send + Sync> {
        let feed = self.clone();
        Arc::new(move |event| feed.send(event))
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<UiEvent> {
        self.sender.subscribe()
    }
}

/// One page's stream: its events as `event: inbox` with the JSON as data, until `still_valid`
/// says the device is gone or the feed ends. `pending` counts the pending requests, for the
/// one `changed` a page that fell behind gets.
pub(crate) fn stream(
    events: broadcast::Receiver<UiEvent>,
    still_valid: impl Fn() -> bool + Send + 'static,
    pending: impl Fn() -> u32 + Send + 'static,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // The device is checked again when the stream has been idle for KEEP_ALIVE, and before
    // an event once KEEP_ALIVE has passed since the last check, so a revoked device loses
    // its stream within that time however busy the inbox is.
    let checked = std::time::Instant::now();
    let stream = futures_util::stream::unfold(
        (events, still_valid, pending, checked),
        move |(mut events, still_valid, pending, mut checked)| async move {
            let event = loop {
                let event = tokio::select! {
                    received = events.recv() => match received {
                        Ok(event) => Some(event),
                        // Fell behind: one refresh stands for everything missed. The
                        // refetch form: the deltas missed cannot be patched in.
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            Some(UiEvent::refetch(pending()))
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    },
                    () = tokio::time::sleep(KEEP_ALIVE) => None,
                };
                if checked.elapsed() >= KEEP_ALIVE {
                    if !still_valid() {
                        return None;
                    }
                    checked = std::time::Instant::now();
                }
                if let Some(event) = event {
                    break event;
                }
            };
            // An event that cannot be written (it never happens) must not be a change the
            // page misses: the refetch form stands for it.
            let data = Event::default()
                .event("inbox")
                .json_data(&event)
                .or_else(|_| {
                    Event::default()
                        .event("inbox")
                        .json_data(UiEvent::refetch(pending()))
                })
                .unwrap_or_else(|_| Event::default().event("inbox").data("{}"));
            Some((Ok(data), (events, still_valid, pending, checked)))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}
