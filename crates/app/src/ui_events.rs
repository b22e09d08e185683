//! The app's one engine loop in the background ([`Background`], over the [`LoopHost`]), and
//! the translation of its events into what the window and the phone page need to hear.
//!
//! "The lists changed" carries what changed in the Pending list (send the change, not the
//! list): the rows of the requests the engine's events name, read from the database once
//! the events are in, each as `list_pending` shows it, and the ids that left. Whatever the
//! events cannot describe exactly (a start, a new or broken policy, a recovery, a burst of
//! more than [`DELTA_CAP`] requests, a database that cannot be read) is the refetch form.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use inbox_engine::notifier::Notifier;
use inbox_engine::{Command, Engine, Event, Reader, State, StoreError, WatchOptions};

use crate::host::LoopHost;
use crate::views::{PendingDelta, RowView, UiEvent};

/// The least time between two "the lists changed" refreshes of the window. The first change
/// after a quiet spell is sent at once (a request placed alone is listed within
/// milliseconds); what follows within this window is gathered into one refresh, so a burst
/// of a thousand files becomes a handful of refreshes, not a thousand.
pub const REFRESH_GATHER: Duration = Duration::from_millis(40);

/// The most requests one `changed` event describes row by row (a row is about half a
/// kilobyte). A burst naming more is sent as the refetch form: the window fetches the list.
pub const DELTA_CAP: usize = 200;

/// How long a `changed` waits for the policy's judgement of a request that just arrived.
/// The engine judges what it ingested right after the ingest's commit, in the same turn,
/// and says nothing when the judgement holds nothing, so a row read at once would lack it.
pub const JUDGE_WAIT: Duration = Duration::from_millis(20);
/// How often the row waited for is read again (an event wakes the wait sooner).
const JUDGE_POLL: Duration = Duration::from_micros(500);
/// A row sent without its judgement (the loop was slow, or waits out a failure) is read
/// again after this, then twice as long each time up to [`RECHECK_MAX`], for
/// [`RECHECK_FOR`] at most, and sent again once judged.
const RECHECK_FIRST: Duration = Duration::from_millis(100);
const RECHECK_MAX: Duration = Duration::from_secs(2);
const RECHECK_FOR: Duration = Duration::from_secs(300);

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

/// Passes settle and cancel events on at once, and sends a `changed` at most once per
/// [`REFRESH_GATHER`], the first change after a quiet spell at once, with what changed in
/// the Pending list when that can be told exactly.
fn forward(events: &Receiver<Event>, db_path: &Path, sink: &(dyn Fn(UiEvent) + Send + Sync)) {
    let mut forwarder = Forwarder {
        reader: Reader::open(db_path).ok(),
        events,
        sink,
        watch: Watch::default(),
        members: None,
        verify_at: None,
    };
    let mut last_refresh: Option<Instant> = None;
    loop {
        // An event, or the time to look again at a row sent before it was judged, or to
        // check the count once things are quiet.
        let due = [forwarder.watch.next_due(), forwarder.verify_at]
            .into_iter()
            .flatten()
            .min();
        let first = match due {
            None => match events.recv() {
                Ok(event) => Some(event),
                Err(_) => return,
            },
            Some(due) => match events.recv_deadline(due) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            },
        };
        let mut gathered = Gathered::default();
        if let Some(first) = first {
            gathered.take(first, sink);
        }
        // Everything the same committed batch sent is already queued: one refresh for it.
        for event in events.try_iter() {
            gathered.take(event, sink);
        }
        let now = Instant::now();
        let rechecks = forwarder.watch.due(now);
        if !gathered.changed && rechecks.is_empty() {
            if forwarder.verify_at.is_some_and(|at| at <= now) {
                forwarder.verify_count();
            }
            continue;
        }
        // A change after a quiet spell is shown at once; changes that follow it within
        // REFRESH_GATHER wait for the window to close, and are shown together.
        if let Some(last) = last_refresh.filter(|last| last.elapsed() < REFRESH_GATHER) {
            let deadline = last + REFRESH_GATHER;
            while let Ok(event) = events.recv_deadline(deadline) {
                gathered.take(event, sink);
            }
        }
        if let Some(event) = forwarder.describe(gathered, &rechecks) {
            sink(event);
            last_refresh = Some(Instant::now());
        }
    }
}

/// Once changes stop for this long, the count the last `changed` carried is checked against
/// the database's.
const VERIFY_AFTER: Duration = Duration::from_secs(2);

/// The forwarding thread's state between two `changed` events.
struct Forwarder<'a> {
    reader: Option<Reader>,
    events: &'a Receiver<Event>,
    sink: &'a (dyn Fn(UiEvent) + Send + Sync),
    watch: Watch,
    /// The ids in the Pending list, as the rows read for the deltas left it: their number
    /// is the count a `changed` carries. Counting in SQLite costs tens of milliseconds with
    /// 10,000 pending (every row is read for its snooze), more than all the rest of a
    /// change; this set costs one read of the list after each refetch form. None until then.
    members: Option<HashSet<String>>,
    /// When to check [`Forwarder::members`]' count against the database's, once quiet.
    verify_at: Option<Instant>,
}

impl Forwarder<'_> {
    /// The count as the database has it (or as the loop last said), for the refetch form.
    fn counted(&self, gathered: &Gathered) -> u32 {
        let count = self
            .reader
            .as_ref()
            .and_then(|r| r.queries().pending_count().ok())
            .or(gathered.ready_count)
            .unwrap_or(0);
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// The refetch form: the window reads everything again, so what was watched and known
    /// is read again too.
    fn refetch(&mut self, gathered: &Gathered) -> Option<UiEvent> {
        self.watch.clear();
        self.members = None;
        self.verify_at = None;
        Some(UiEvent::refetch(self.counted(gathered)))
    }

    /// Once quiet: the count sent is the database's, or the window fetches everything (a
    /// change the events did not describe; it does not happen, but a count must not drift).
    fn verify_count(&mut self) {
        self.verify_at = None;
        let (Some(reader), Some(members)) = (&self.reader, &self.members) else {
            return;
        };
        match reader.queries().pending_count() {
            Ok(count) if count == members.len() => {}
            counted => {
                tracing::warn!(
                    "the window refetches: {} pending known, the database counts {counted:?}",
                    members.len()
                );
                if let Some(event) = self.refetch(&Gathered::default()) {
                    (self.sink)(event);
                }
            }
        }
    }

    /// The `changed` event for what was gathered: the Pending list's delta, read from the
    /// database now, or the refetch form. None when only rows looked at again were gathered
    /// and none of them changed.
    fn describe(&mut self, mut gathered: Gathered, rechecks: &[String]) -> Option<UiEvent> {
        if self.reader.is_none() || gathered.refetch {
            return self.refetch(&gathered);
        }
        // Rows looked at again that no event named meanwhile.
        let rechecks: Vec<String> = rechecks
            .iter()
            .filter(|id| !gathered.seen.contains(*id))
            .cloned()
            .collect();
        if gathered.order.len() + rechecks.len() > DELTA_CAP {
            return self.refetch(&gathered);
        }
        let members = match self.members.take() {
            Some(members) => members,
            None => match self.read_members() {
                Ok(members) => members,
                Err(error) => {
                    tracing::warn!("the window refetches: cannot read the pending list: {error}");
                    return self.refetch(&gathered);
                }
            },
        };
        let places = match self.read_places(&mut gathered, &rechecks) {
            Ok(places) => places,
            Err(error) => {
                tracing::warn!("the window refetches: cannot read a request: {error}");
                return self.refetch(&gathered);
            }
        };
        if gathered.refetch || gathered.order.len() + rechecks.len() > DELTA_CAP {
            return self.refetch(&gathered);
        }
        self.delta(&gathered, &rechecks, places, members)
    }

    /// The ids in the Pending list now.
    fn read_members(&self) -> Result<HashSet<String>, StoreError> {
        let reader = self.reader.as_ref().expect("checked by the caller");
        Ok(reader
            .queries()
            .pending()?
            .into_iter()
            .map(|summary| summary.id)
            .collect())
    }

    /// Where each request gathered (and each looked at again) stands now. A request that
    /// arrived is read once the policy judged it, if that comes within [`JUDGE_WAIT`]; the
    /// events that come meanwhile are gathered too.
    fn read_places(
        &self,
        gathered: &mut Gathered,
        rechecks: &[String],
    ) -> Result<HashMap<String, Place>, StoreError> {
        let reader = self.reader.as_ref().expect("checked by the caller");
        let mut places: HashMap<String, Place> = HashMap::new();
        let mut dirty: Vec<String> = gathered.order.iter().chain(rechecks).cloned().collect();
        gathered.named.clear();
        let deadline = Instant::now() + JUDGE_WAIT;
        loop {
            for id in dirty.drain(..) {
                let place = read_place(reader, &id)?;
                places.insert(id, place);
            }
            // Requests the events named that are listed but not judged yet: the policy is
            // judging them now. Wait for it (a little), or a row would lack its judgement.
            let unjudged: Vec<String> = gathered
                .order
                .iter()
                .filter(|id| places.get(*id).is_some_and(Place::awaits_judgement))
                .cloned()
                .collect();
            let Some(sentinel) = unjudged.last() else {
                break;
            };
            if Instant::now() >= deadline {
                break;
            }
            match self.events.recv_timeout(JUDGE_POLL) {
                Ok(event) => {
                    gathered.take(event, self.sink);
                    for event in self.events.try_iter() {
                        gathered.take(event, self.sink);
                    }
                    if gathered.refetch {
                        break;
                    }
                    dirty = std::mem::take(&mut gathered.named);
                }
                Err(RecvTimeoutError::Timeout) => {
                    // One judging commit covers all of a turn's requests: when the newest
                    // is judged, read the others again.
                    if !read_place(reader, sentinel)?.awaits_judgement() {
                        dirty = unjudged;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        Ok(places)
    }

    /// The delta of the places read; None when only rows looked at again were read and none
    /// of them has news.
    fn delta(
        &mut self,
        gathered: &Gathered,
        rechecks: &[String],
        mut places: HashMap<String, Place>,
        mut members: HashSet<String>,
    ) -> Option<UiEvent> {
        let now = Instant::now();
        let mut delta = PendingDelta {
            rows: Vec::new(),
            gone: Vec::new(),
            snoozed: gathered.snoozed,
        };
        for id in gathered.order.iter().chain(rechecks) {
            let Some(place) = places.remove(id) else {
                continue;
            };
            if matches!(place, Place::Listed(_)) {
                members.insert(id.clone());
            } else {
                members.remove(id);
            }
            let named = gathered.seen.contains(id);
            if place.awaits_judgement() {
                if named {
                    self.watch.add(id, now);
                } else {
                    // Looked at again, still not judged: nothing new to say yet.
                    self.watch.again(id, now);
                    continue;
                }
            } else {
                self.watch.remove(id);
            }
            match place {
                Place::Listed(row) => delta.rows.push(*row),
                Place::Snoozed => {
                    delta.gone.push(id.clone());
                    delta.snoozed = true;
                }
                Place::Out => delta.gone.push(id.clone()),
            }
        }
        let pending = u32::try_from(members.len()).unwrap_or(u32::MAX);
        self.members = Some(members);
        if !gathered.changed && delta.rows.is_empty() && delta.gone.is_empty() {
            return None;
        }
        self.verify_at = Some(now + VERIFY_AFTER);
        Some(UiEvent::Changed {
            pending,
            delta: Some(delta),
        })
    }
}

/// Where a request stands for the Pending list, read now.
#[derive(Debug)]
enum Place {
    /// In the list, as `list_pending` shows it.
    Listed(Box<RowView>),
    /// Pending, but snoozed: in the Snoozed list instead.
    Snoozed,
    /// Settled, withdrawn, rejected, or not known.
    Out,
}

impl Place {
    /// Listed, and the policy has not judged it yet (it judges every request that is not
    /// blocked and has no answer waiting for the spool).
    fn awaits_judgement(&self) -> bool {
        matches!(self, Place::Listed(row)
            if row.judgement.is_none() && row.blocked.is_none() && row.unwritten.is_none())
    }
}

/// Reads one request as the Pending list would show it: the same summary `list_pending`
/// reads, through the same view, with the list's own rule for snoozes (snoozed until a
/// time not yet reached, to the millisecond).
fn read_place(reader: &Reader, id: &str) -> Result<Place, StoreError> {
    let Some(detail) = reader.queries().detail(id)? else {
        return Ok(Place::Out);
    };
    let summary = &detail.summary;
    if summary.state != State::Pending {
        return Ok(Place::Out);
    }
    let now = chrono::Utc::now().timestamp_millis();
    if summary
        .snoozed_until
        .is_some_and(|until| until.timestamp_millis() > now)
    {
        return Ok(Place::Snoozed);
    }
    Ok(Place::Listed(Box::new(RowView::of(summary))))
}

/// What the forwarder has seen since its last refresh.
#[derive(Default)]
struct Gathered {
    /// Something changed that a list shows.
    changed: bool,
    ready_count: Option<usize>,
    /// What changed cannot be told row by row: the window fetches the lists again.
    refetch: bool,
    /// The requests the events named, in the order first named.
    order: Vec<String>,
    seen: HashSet<String>,
    /// Named since the last read (again, or for the first time).
    named: Vec<String>,
    /// The Snoozed list changed.
    snoozed: bool,
}

impl Gathered {
    fn take(&mut self, event: Event, sink: &(dyn Fn(UiEvent) + Send + Sync)) {
        if let Event::Ready { pending } = &event {
            self.ready_count = Some(*pending);
        }
        self.changed |= changes_lists(&event);
        self.snoozed |= matches!(event, Event::Snoozed { .. } | Event::SnoozeEnded { .. });
        match pending_effect(&event) {
            PendingEffect::Nothing => {}
            PendingEffect::Refetch => self.overflow(),
            PendingEffect::Request(id) => self.name(id),
        }
        if let Some(ui) = immediate(&event) {
            sink(ui);
        }
    }

    fn name(&mut self, id: &str) {
        if self.refetch {
            return;
        }
        if !self.seen.contains(id) {
            if self.order.len() == DELTA_CAP {
                // More than one event should carry: the window fetches the list.
                self.overflow();
                return;
            }
            self.seen.insert(id.to_owned());
            self.order.push(id.to_owned());
        }
        self.named.push(id.to_owned());
    }

    fn overflow(&mut self) {
        self.refetch = true;
        self.order = Vec::new();
        self.seen = HashSet::new();
        self.named = Vec::new();
    }
}

/// Rows sent before the policy judged them, looked at again until it has.
#[derive(Default)]
struct Watch {
    rows: HashMap<String, Watched>,
}

struct Watched {
    since: Instant,
    every: Duration,
    due: Instant,
}

impl Watch {
    fn add(&mut self, id: &str, now: Instant) {
        self.rows.entry(id.to_owned()).or_insert(Watched {
            since: now,
            every: RECHECK_FIRST,
            due: now + RECHECK_FIRST,
        });
    }

    /// Still not judged: looked at again later, or given up on after [`RECHECK_FOR`].
    fn again(&mut self, id: &str, now: Instant) {
        let Some(watched) = self.rows.get_mut(id) else {
            return;
        };
        if now.duration_since(watched.since) >= RECHECK_FOR {
            tracing::debug!("request {id} is still not judged; no longer looked at");
            self.rows.remove(id);
            return;
        }
        watched.every = (watched.every * 2).min(RECHECK_MAX);
        watched.due = now + watched.every;
    }

    fn remove(&mut self, id: &str) {
        self.rows.remove(id);
    }

    fn clear(&mut self) {
        self.rows.clear();
    }

    fn next_due(&self) -> Option<Instant> {
        self.rows.values().map(|w| w.due).min()
    }

    /// The rows due for another look, in no particular order.
    fn due(&self, now: Instant) -> Vec<String> {
        self.rows
            .iter()
            .filter(|(_, w)| w.due <= now)
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// What an engine event does to the Pending list, as far as the forwarder can tell.
#[derive(Debug, PartialEq, Eq)]
pub enum PendingEffect<'a> {
    /// Nothing the list shows.
    Nothing,
    /// This request may have arrived, changed or left: its row is read again.
    Request(&'a str),
    /// Any number of requests may have changed (a start, a new or broken policy judging
    /// everything again, a recovery after a failure): the list is fetched again.
    Refetch,
}

/// What `event` does to the Pending list.
pub fn pending_effect(event: &Event) -> PendingEffect<'_> {
    match event {
        Event::Ingested { id, .. }
        | Event::Rejected { id, .. }
        | Event::Settled { id, .. }
        | Event::Unwritten { id, .. }
        | Event::Cancelled { id }
        | Event::Blocked { id, .. }
        | Event::Held { id, .. }
        | Event::Escalated { id, .. }
        | Event::Snoozed { id, .. }
        | Event::SnoozeEnded { id }
        | Event::Approved { id, .. } => PendingEffect::Request(id),
        Event::Ready { .. }
        | Event::Recovered
        | Event::PolicyChanged { .. }
        | Event::PolicyTrouble { .. } => PendingEffect::Refetch,
        Event::Problem { .. } | Event::Trouble { .. } | Event::Notified { .. } => {
            PendingEffect::Nothing
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

#[cfg(test)]
mod tests;
