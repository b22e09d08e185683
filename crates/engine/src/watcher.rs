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

use crate::engine::{Engine, EngineError};
use crate::event::Event;
use crate::faults;
use crate::spool::{Area, Spool};

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

/// Runs the engine until `shutdown` receives a message or is dropped.
pub fn run(
    engine: &mut Engine,
    options: &WatchOptions,
    shutdown: &Receiver<()>,
) -> Result<(), EngineError> {
    let (hint_tx, hints) = crossbeam_channel::unbounded();
    // Watch before the first scan, so a file placed during the scan is not missed.
    let _watcher = watch_spool(engine.spool(), options, hint_tx)?;
    engine.track_open()?;
    engine.sync()?;
    engine.apply_autonomous_to_pending()?;
    engine.take_fresh();
    engine.expire_due(Utc::now())?;
    engine.notify_new()?;
    let pending = engine.store().pending()?.len();
    engine.emit_external(Event::Ready { pending });

    let rescan = crossbeam_channel::tick(options.rescan_every);
    loop {
        let until_deadline = match engine.next_deadline()? {
            Some(deadline) => (deadline - Utc::now()).to_std().unwrap_or(Duration::ZERO),
            None => options.rescan_every,
        };
        // A deadline tick past the rescan interval is caught by the rescan anyway.
        let expiry = crossbeam_channel::after(until_deadline.min(options.rescan_every));
        select! {
            recv(shutdown) -> _ => return Ok(()),
            recv(hints) -> hint => {
                let Ok(first) = hint else { return Ok(()) };
                let mut paths = Vec::new();
                let mut rescan_reason = None;
                for hint in std::iter::once(first).chain(hints.try_iter()) {
                    match hint {
                        Hint::Paths(more) => paths.extend(more),
                        Hint::Rescan(reason) => rescan_reason = Some(reason),
                    }
                }
                if let Some(reason) = rescan_reason {
                    tracing::info!("full rescan: {reason}");
                    engine.sync()?;
                } else {
                    engine.handle_paths(&paths)?;
                }
            }
            recv(expiry) -> _ => engine.expire_due(Utc::now())?,
            recv(rescan) -> _ => {
                engine.sync()?;
                engine.expire_due(Utc::now())?;
            }
        }
        let fresh = engine.take_fresh();
        if !fresh.is_empty() {
            engine.apply_autonomous(&fresh)?;
        }
        engine.notify_new()?;
    }
}
