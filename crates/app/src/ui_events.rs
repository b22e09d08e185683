//! The app's one engine loop in the background ([`Background`], over the [`LoopHost`]), and
//! the translation of its events into what the window and the phone page need to hear.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use inbox_engine::notifier::Notifier;
use inbox_engine::{Command, Engine, Event, Reader, WatchOptions};

use crate::host::LoopHost;
use crate::views::UiEvent;

/// The least time between two "the lists changed" refreshes of the window. The first change
/// after a quiet spell is sent at once (a request placed alone is listed within
/// milliseconds); what follows within this window is gathered into one refresh, so a burst
/// of a thousand files becomes a handful of refreshes, not a thousand.
pub const REFRESH_GATHER: Duration = Duration::from_millis(40);

/// The app's loop: a [`LoopHost`] and the thread that turns its events into [`UiEvent`]s.
/// Dropping it stops the loop and waits for both.
pub struct Background {
    host: Option<LoopHost>,
    forwarder: Option<JoinHandle<()>>,
}

impl Background {
    /// Runs `engine`'s loop on a thread, with `notifier`, doing the `commands` it is sent;
    /// every change reaches `sink` as [`UiEvent`]s. `db_path` is the engine's database,
    /// read (for the pending count) by the forwarding thread.
    pub fn start(
        engine: Engine,
        commands: Receiver<Command>,
        notifier: Box<dyn Notifier>,
        db_path: &Path,
        sink: Arc<dyn Fn(UiEvent) + Send + Sync>,
    ) -> Result<Background, String> {
        let (events_tx, events) = crossbeam_channel::unbounded();
        let engine = engine.with_events(events_tx).with_notifier(notifier);
        let db = db_path.to_owned();
        let forward_sink = Arc::clone(&sink);
        let forwarder = std::thread::Builder::new()
            .name("ui-events".into())
            .spawn(move || forward(&events, &db, forward_sink.as_ref()))
            .map_err(|e| e.to_string())?;
        let host = LoopHost::start(engine, WatchOptions::default(), commands, move |error| {
            sink(UiEvent::Error {
                message: format!("the inbox stopped watching the spool: {error}"),
            })
        })
        .map_err(|e| e.to_string())?;
        Ok(Background {
            host: Some(host),
            forwarder: Some(forwarder),
        })
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // Stopping the loop drops the engine and with it the event sender, which ends the
        // forwarder.
        drop(self.host.take());
        if let Some(forwarder) = self.forwarder.take() {
            let _ = forwarder.join();
        }
    }
}

/// Passes settle and cancel events on at once, and refreshes the lists at most once per
/// [`REFRESH_GATHER`], the first change after a quiet spell at once.
fn forward(events: &Receiver<Event>, db_path: &Path, sink: &(dyn Fn(UiEvent) + Send + Sync)) {
    let reader = Reader::open(db_path).ok();
    let mut last_refresh: Option<Instant> = None;
    while let Ok(first) = events.recv() {
        let mut gathered = Gathered::default();
        gathered.take(first, sink);
        // Everything the same committed batch sent is already queued: one refresh for it.
        for event in events.try_iter() {
            gathered.take(event, sink);
        }
        // A change after a quiet spell is shown at once; changes that follow it within
        // REFRESH_GATHER wait for the window to close, and are shown together.
        if let Some(last) = last_refresh.filter(|last| last.elapsed() < REFRESH_GATHER) {
            let deadline = last + REFRESH_GATHER;
            while let Ok(event) = events.recv_deadline(deadline) {
                gathered.take(event, sink);
            }
        }
        if gathered.changed {
            let count = reader
                .as_ref()
                .and_then(|r| r.queries().pending_count().ok())
                .or(gathered.ready_count)
                .unwrap_or(0);
            sink(UiEvent::Changed {
                pending: u32::try_from(count).unwrap_or(u32::MAX),
            });
            last_refresh = Some(Instant::now());
        }
    }
}

/// What the forwarder has seen since its last refresh.
#[derive(Default)]
struct Gathered {
    changed: bool,
    ready_count: Option<usize>,
}

impl Gathered {
    fn take(&mut self, event: Event, sink: &(dyn Fn(UiEvent) + Send + Sync)) {
        if let Event::Ready { pending } = &event {
            self.ready_count = Some(*pending);
        }
        self.changed |= changes_lists(&event);
        if let Some(ui) = immediate(&event) {
            sink(ui);
        }
    }
}

/// Whether an event changes what the Pending, History or Problems lists show.
pub fn changes_lists(event: &Event) -> bool {
    !matches!(event, Event::Notified { .. })
}

/// The events the window hears one by one (the open request may be the one concerned).
pub fn immediate(event: &Event) -> Option<UiEvent> {
    match event {
        Event::Settled {
            id,
            status,
            answered_by,
        } => Some(UiEvent::Settled {
            id: id.clone(),
            status: status.as_str().to_owned(),
            // Whoever wrote the outcome file chose this name: one visible line.
            answered_by: inbox_protocol::text::one_line(answered_by).into_owned(),
        }),
        Event::Cancelled { id } => Some(UiEvent::Cancelled { id: id.clone() }),
        // Things the operator must know even when looking elsewhere: an answer waiting for
        // the spool, or a loop waiting out a failure.
        Event::Unwritten { .. } | Event::Trouble { .. } => Some(UiEvent::Error {
            message: inbox_protocol::text::one_line(&event.log_line()).into_owned(),
        }),
        // A broken policy file holds requests for a person until it is fixed: the window
        // says so for as long as it lasts, not once.
        Event::PolicyTrouble { message } => Some(UiEvent::Policy {
            trouble: Some(inbox_protocol::text::one_line(message).into_owned()),
        }),
        Event::PolicyChanged { .. } => Some(UiEvent::Policy { trouble: None }),
        _ => None,
    }
}
