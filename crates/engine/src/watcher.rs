//! The engine's loop: file-system events as hints, full scans as the guarantee.
//!
//! Events only say "look here"; they can be lost (queue overflow, network filesystems, a
//! watcher error). So the loop also scans everything at start-up, after an overflow or
//! rescan hint, after any watcher error, and every [`RESCAN_EVERY`]. Files are handled as
//! soon as their event arrives: askers rename complete files into place, so there is nothing
//! to debounce.
//!
//! On Linux the spool is watched with inotify directly ([`watch_spool`]), for the changes
//! the engine acts on only. `notify`'s inotify backend always adds `IN_OPEN` (and
//! `IN_MODIFY`, `IN_ATTRIB`) to its mask, so every request the engine itself opened queued an
//! event and woke the watcher thread, which then dropped it: about a tenth of the engine's
//! time in a burst (docs/BENCHMARKS.md, issue 11). `--poll` keeps `notify`'s `PollWatcher`.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::Utc;
use crossbeam_channel::{select, Receiver, Sender};
use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::command::Command;
use crate::engine::{Completeness, Engine, Wake};
use crate::event::Event;
use crate::results::EngineError;
use inbox_spool::faults;
use inbox_spool::{Area, Spool};

/// How often a full scan runs even when events keep coming.
pub const RESCAN_EVERY: Duration = Duration::from_secs(30);

/// How the loop watches the spool.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Poll the directories instead of using inotify: for NFS, SMB and other network
    /// filesystems, where change events do not cross machines.
    pub poll: bool,
    pub poll_interval: Duration,
    pub rescan_every: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            poll: false,
            poll_interval: Duration::from_secs(2),
            rescan_every: RESCAN_EVERY,
        }
    }
}

/// What the watcher tells the loop.
#[derive(Debug)]
pub enum Hint {
    Paths(Vec<PathBuf>),
    /// Events may have been lost: scan everything.
    Rescan(String),
}

/// The changes in a spool directory the engine acts on: a file placed (renamed in, linked,
/// or created and closed after writing), or taken away (deleted, renamed out); and the
/// directory itself deleted or moved away from its path. Not
/// `IN_OPEN`, `IN_CLOSE_NOWRITE`, `IN_MODIFY` or `IN_ATTRIB`: the engine's own reads would
/// raise the first two for every request, and a file is only complete when it is closed or
/// renamed into place. The kernel adds `IN_Q_OVERFLOW`, `IN_IGNORED` and `IN_UNMOUNT` to
/// every watch.
pub const INOTIFY_MASK: WatchMask = WatchMask::CREATE
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::DELETE)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF);

/// Room for a few hundred events per `read`: a burst is taken in few reads and sent to the
/// loop as few hints.
const READ_BUFFER: usize = 64 * 1024;

/// The pause after a failed `read` of the inotify descriptor before the next, so that a
/// lasting failure does not spin.
const READ_ERROR_PAUSE: Duration = Duration::from_millis(200);

/// The reason given for a rescan when the kernel's event queue overflowed. The overflow
/// harness (crates/harness/src/overflow.rs) looks for these words.
pub const OVERFLOW_REASON: &str =
    "the watcher asked for a rescan (the kernel's inotify queue overflowed)";

/// The spool's watch, by inotify or by polling; dropping it stops watching.
pub struct SpoolWatcher {
    _poll: Option<notify::PollWatcher>,
    _inotify: Option<InotifyWatch>,
    completeness: Completeness,
}

impl SpoolWatcher {
    /// Whether every change is delivered or its loss reported ([`Completeness`]).
    pub fn completeness(&self) -> Completeness {
        self.completeness.clone()
    }
}

/// Watches the spool's three directories, sending hints to `hints`. Keep the returned
/// watcher alive for as long as hints are wanted.
pub fn watch_spool(
    spool: &Spool,
    options: &WatchOptions,
    hints: Sender<Hint>,
) -> Result<SpoolWatcher, EngineError> {
    let mut dirs: Vec<PathBuf> = [Area::Questions, Area::Answers, Area::Cancel]
        .map(|area| spool.dir(area))
        .into();
    // Another member's approval (team rules with `approvals = N`) should reach this inbox
    // when it is placed, not at the next rescan: in a team spool approvals/ is made now if
    // missing, and wherever it exists it is watched (its events wake the loop, which reads
    // the approvals again).
    if matches!(spool.trust(), inbox_spool::Trust::Team { .. }) {
        if let Err(error) = spool.ensure_approvals_dir() {
            tracing::debug!("cannot make approvals/ to watch it: {error}");
        }
    }
    if spool.approvals_dir().is_dir() {
        dirs.push(spool.approvals_dir());
    }
    if options.poll {
        let config = notify::Config::default().with_poll_interval(options.poll_interval);
        let mut watcher = notify::PollWatcher::new(poll_handler(hints), config)?;
        for dir in &dirs {
            watcher.watch(dir, RecursiveMode::NonRecursive)?;
        }
        return Ok(SpoolWatcher {
            _poll: Some(watcher),
            _inotify: None,
            // Polling compares listings; the engine does not rely on it for more.
            completeness: Completeness::new(false),
        });
    }
    let completeness = Completeness::new(true);
    let watch = InotifyWatch::start(&dirs, hints, completeness.clone())?;
    Ok(SpoolWatcher {
        _poll: None,
        _inotify: Some(watch),
        completeness,
    })
}

/// The poll watcher's events as hints.
fn poll_handler(hints: Sender<Hint>) -> impl Fn(notify::Result<notify::Event>) + Send + 'static {
    move |result: notify::Result<notify::Event>| {
        // A fault point for the overflow tests: the event is lost, and the loop is told so,
        // as the kernel does with IN_Q_OVERFLOW when its queue is full.
        if faults::drop_point(faults::WATCHER_EVENT) {
            let _ = hints.send(Hint::Rescan(
                "events were lost (fault point watcher.event)".into(),
            ));
            return;
        }
        let hint = match result {
            Ok(event) if event.need_rescan() => {
                Hint::Rescan("the watcher asked for a rescan".into())
            }
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
            Ok(event) => Hint::Paths(event.paths),
            Err(error) => Hint::Rescan(format!("watcher error: {error}")),
        };
        let _ = hints.send(hint);
    }
}

/// An inotify instance watching the spool's directories, read by a thread of its own.
struct InotifyWatch {
    watches: Watches,
    descriptors: Vec<WatchDescriptor>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
    /// Lost when the watch is dropped: nothing is watched any more.
    completeness: Completeness,
    /// Keeps the loop's channel open for as long as the watch is kept, even after the
    /// reader ended because every watch did: the loop ends when its hints' senders are gone.
    _hints: Sender<Hint>,
}

impl InotifyWatch {
    fn start(
        dirs: &[PathBuf],
        hints: Sender<Hint>,
        completeness: Completeness,
    ) -> Result<InotifyWatch, EngineError> {
        let inotify = Inotify::init().map_err(notify::Error::io)?;
        let mut watches = inotify.watches();
        let mut descriptors = Vec::new();
        let mut dir_of = HashMap::new();
        for dir in dirs {
            let descriptor = watches
                .add(dir, INOTIFY_MASK)
                .map_err(|error| notify::Error::io(error).add_path(dir.clone()))?;
            dir_of.insert(descriptor.get_watch_descriptor_id(), dir.clone());
            descriptors.push(descriptor);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let reader = Reader {
            inotify,
            dir_of,
            hints: hints.clone(),
            stop: stop.clone(),
            completeness: completeness.clone(),
        };
        let reader = std::thread::Builder::new()
            .name("spool-watcher".into())
            .spawn(move || reader.run())
            .map_err(notify::Error::io)?;
        Ok(InotifyWatch {
            watches,
            descriptors,
            stop,
            reader: Some(reader),
            completeness,
            _hints: hints,
        })
    }
}

impl Drop for InotifyWatch {
    /// Removes the watches, which wakes the reader (each removal queues an `IN_IGNORED`;
    /// a watch the kernel already ended queued one then), and waits for it to end.
    fn drop(&mut self) {
        self.completeness.lost();
        self.stop.store(true, Ordering::Release);
        for descriptor in self.descriptors.drain(..) {
            let _ = self.watches.remove(descriptor);
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// The thread that reads the inotify descriptor and sends each read's events as hints.
struct Reader {
    inotify: Inotify,
    /// The directory of each live watch, by its descriptor's number.
    dir_of: HashMap<i32, PathBuf>,
    hints: Sender<Hint>,
    stop: Arc<AtomicBool>,
    completeness: Completeness,
}

impl Reader {
    fn run(mut self) {
        let mut buffer = vec![0u8; READ_BUFFER];
        // Once no watch is left, nothing more can come.
        while !self.dir_of.is_empty() {
            let read = self.inotify.read_events_blocking(&mut buffer);
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            let events = match read {
                Ok(events) => events,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    // Whatever was queued stays queued, but say so, and rely on it no more.
                    self.completeness.lost();
                    let _ = self
                        .hints
                        .send(Hint::Rescan(format!("watcher error: {error}")));
                    std::thread::sleep(READ_ERROR_PAUSE);
                    continue;
                }
            };
            let mut paths = Vec::new();
            let mut rescan = None;
            for event in events {
                if let Some(reason) = self.take(event.wd, event.mask, event.name, &mut paths) {
                    rescan = Some(reason);
                }
            }
            if !paths.is_empty() {
                let _ = self.hints.send(Hint::Paths(paths));
            }
            // After the paths: the loop takes both in one turn, and the rescan wins.
            if let Some(reason) = rescan {
                let _ = self.hints.send(Hint::Rescan(reason));
            }
        }
    }

    /// One event: its path into `paths`, or why everything must be scanned.
    fn take(
        &mut self,
        wd: WatchDescriptor,
        mask: EventMask,
        name: Option<&OsStr>,
        paths: &mut Vec<PathBuf>,
    ) -> Option<String> {
        // A fault point for the overflow tests: the event is lost, and the loop is told so,
        // as the kernel does with IN_Q_OVERFLOW when its queue is full.
        if faults::drop_point(faults::WATCHER_EVENT) {
            return Some("events were lost (fault point watcher.event)".into());
        }
        if mask.contains(EventMask::Q_OVERFLOW) {
            return Some(OVERFLOW_REASON.into());
        }
        let id = wd.get_watch_descriptor_id();
        if mask.contains(EventMask::IGNORED) {
            // The watch ended: its directory is gone (or was unmounted), and nothing in
            // it will be reported any more.
            let dir = self.dir_of.remove(&id)?;
            self.completeness.lost();
            return Some(format!("the watch on {} ended", dir.display()));
        }
        let dir = self.dir_of.get(&id)?;
        if mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF | EventMask::UNMOUNT) {
            // A moved directory's events would come under its old name.
            self.completeness.lost();
            return Some(format!("{} was moved, deleted or unmounted", dir.display()));
        }
        if let Some(name) = name {
            paths.push(dir.join(name));
        }
        None
    }
}

/// How soon kept outcomes (the engine's `retry_unwritten`) are tried again.
pub const RETRY_UNWRITTEN_EVERY: Duration = Duration::from_secs(2);

/// The first and the longest wait after a failure the loop waits out.
const TROUBLE_BACKOFF: (Duration, Duration) = (Duration::from_millis(500), Duration::from_secs(30));

/// Runs the engine until `shutdown` receives a message or is dropped.
///
/// Only a watcher that cannot be set up ends it with an error. Anything else that fails (a
/// database locked by another process, a spool directory that cannot be read, a disk
/// error) is reported as [`Event::Trouble`] and waited out with growing pauses; the batch
/// that failed was rolled back, so the loop then rescans everything and goes on, and says
/// [`Event::Recovered`]. No file is lost meanwhile: the spool keeps them.
pub fn run(
    engine: &mut Engine,
    options: &WatchOptions,
    shutdown: &Receiver<()>,
) -> Result<(), EngineError> {
    run_with_commands(engine, options, &crossbeam_channel::never(), shutdown)
}

/// [`run`], also doing the [`Command`]s a front end sends, each in its turn between two
/// batches of file events, so the front end needs no engine of its own. Dropping every
/// sender of `commands` stops the loop, as `shutdown` does.
pub fn run_with_commands(
    engine: &mut Engine,
    options: &WatchOptions,
    commands: &Receiver<Command>,
    shutdown: &Receiver<()>,
) -> Result<(), EngineError> {
    let (hint_tx, hints) = crossbeam_channel::unbounded();
    // Watch before the first scan, so a file placed during the scan is not missed.
    let watcher = watch_spool(engine.spool(), options, hint_tx)?;
    engine.rely_on_events(watcher.completeness());
    let mut trouble = Trouble::default();
    while let Err(error) = engine.turn(Wake::Start) {
        if !trouble.wait_out(engine, &error, shutdown) {
            return Ok(());
        }
    }
    trouble.recovered(engine);
    let pending = engine.queries().pending_count()?;
    engine.emit_external(Event::Ready { pending });

    let rescan = crossbeam_channel::tick(options.rescan_every);
    // Always ticking: another process sharing the database (a CLI command, the app's own
    // commands) may keep an outcome at any time, and its retry must not wait for a rescan.
    let retry = crossbeam_channel::tick(RETRY_UNWRITTEN_EVERY);
    loop {
        let result = if trouble.active() {
            // The batch that failed was rolled back, and the hints it held are gone: look at
            // everything again, without waiting for another event.
            engine.turn(Wake::Rescan)
        } else {
            match next_wake(engine, options, shutdown, &hints, commands, &rescan, &retry) {
                Ok(Some(wake)) => engine.turn(wake),
                Ok(None) => return Ok(()),
                Err(error) => Err(error),
            }
        };
        match result {
            Ok(()) => trouble.recovered(engine),
            Err(error) => {
                if !trouble.wait_out(engine, &error, shutdown) {
                    return Ok(());
                }
            }
        }
    }
}

/// Waits for the next reason to work; `None` on shutdown.
fn next_wake(
    engine: &Engine,
    options: &WatchOptions,
    shutdown: &Receiver<()>,
    hints: &Receiver<Hint>,
    commands: &Receiver<Command>,
    rescan: &Receiver<std::time::Instant>,
    retry: &Receiver<std::time::Instant>,
) -> Result<Option<Wake>, EngineError> {
    let until_deadline = match engine.next_deadline()? {
        Some(deadline) => (deadline - Utc::now()).to_std().unwrap_or(Duration::ZERO),
        None => options.rescan_every,
    };
    // A deadline tick past the rescan interval is caught by the rescan anyway.
    let expiry = crossbeam_channel::after(until_deadline.min(options.rescan_every));
    Ok(select! {
        recv(shutdown) -> _ => None,
        recv(hints) -> hint => {
            let Ok(first) = hint else { return Ok(None) };
            let mut paths = Vec::new();
            let mut rescan_reason = None;
            for hint in std::iter::once(first).chain(hints.try_iter()) {
                match hint {
                    Hint::Paths(more) => paths.extend(more),
                    Hint::Rescan(reason) => rescan_reason = Some(reason),
                }
            }
            match rescan_reason {
                Some(reason) => {
                    tracing::info!("full rescan: {reason}");
                    Some(Wake::Rescan)
                }
                None => Some(Wake::Paths(paths)),
            }
        }
        // A front end that drops its sender is gone: the loop ends with it.
        recv(commands) -> command => command.ok().map(Wake::Command),
        recv(expiry) -> _ => Some(Wake::Deadline(Utc::now())),
        recv(rescan) -> _ => Some(Wake::Rescan),
        recv(retry) -> _ => Some(Wake::RetryUnwritten),
    })
}

/// The loop's memory of a failure it is waiting out.
#[derive(Default)]
struct Trouble {
    /// The last message reported, so a failure that repeats is reported once.
    reported: Option<String>,
    pause: Duration,
}

impl Trouble {
    fn active(&self) -> bool {
        self.reported.is_some()
    }

    /// Reports the failure (once per distinct message) and pauses, longer each time.
    /// False if shutdown was asked for meanwhile.
    fn wait_out(&mut self, engine: &Engine, error: &EngineError, shutdown: &Receiver<()>) -> bool {
        let message = error.to_string();
        if self.reported.as_deref() != Some(message.as_str()) {
            tracing::warn!("{message}; retrying");
            engine.emit_external(Event::Trouble {
                message: message.clone(),
            });
            self.reported = Some(message);
        }
        self.pause = (self.pause * 2).clamp(TROUBLE_BACKOFF.0, TROUBLE_BACKOFF.1);
        select! {
            recv(shutdown) -> _ => false,
            default(self.pause) => true,
        }
    }

    fn recovered(&mut self, engine: &Engine) {
        if self.reported.take().is_some() {
            tracing::info!("recovered");
            engine.emit_external(Event::Recovered);
        }
        self.pause = Duration::ZERO;
    }
}
