//! The engine's loop: file-system events as hints, full scans as the guarantee.
//!
//! `notify` events only say "look here"; they can be lost (queue overflow, network
//! filesystems, a watcher error). So the loop also scans everything at start-up, after an
//! overflow or rescan event, after any watcher error, and every [`RESCAN_EVERY`]. Files are
//! handled as soon as their event arrives: askers rename complete files into place, so there
//! is nothing to debounce.

use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use crossbeam_channel::{select, Receiver, Sender};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::command::Command;
use crate::engine::{Engine, Wake};
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

/// Watches the spool's three directories, sending hints to `hints`. Keep the returned
/// watcher alive for as long as hints are wanted.
pub fn watch_spool(
    spool: &Spool,
    options: &WatchOptions,
    hints: Sender<Hint>,
) -> Result<Box<dyn Watcher + Send>, EngineError> {
    let handler = move |result: notify::Result<notify::Event>| {
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
    };
    let mut watcher: Box<dyn Watcher + Send> = if options.poll {
        let config = notify::Config::default().with_poll_interval(options.poll_interval);
        Box::new(notify::PollWatcher::new(handler, config)?)
    } else {
        Box::new(notify::RecommendedWatcher::new(
            handler,
            notify::Config::default(),
        )?)
    };
    for area in [Area::Questions, Area::Answers, Area::Cancel] {
        watcher.watch(&spool.dir(area), RecursiveMode::NonRecursive)?;
    }
    Ok(watcher)
}

/// How soon kept outcomes ([`Engine::retry_unwritten`]) are tried again.
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
    let _watcher = watch_spool(engine.spool(), options, hint_tx)?;
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
