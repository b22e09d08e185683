//! The two things every side-by-side needs: the engine's loop running on a thread, and a
//! bare `notify` watcher (the baseline: the fastest any watcher-based inbox could react).

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use inbox_engine::notifier::{Announcement, Notifier};
use inbox_engine::{Engine, Event, Spool, Store, WatchOptions};
use notify::{RecursiveMode, Watcher};

/// How long any single expected event may take before the benchmark gives up.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// `inbox_engine::run` on its own thread, as `answer-inbox watch` runs it, with a notifier
/// that shows nothing and reports the end of every turn that announced something
/// ([`EndOfTurn`]).
pub struct RunningEngine {
    pub spool: Spool,
    pub events: Receiver<Event>,
    /// From spawning the thread (store opening included) to `Event::Ready`.
    pub time_to_ready: Duration,
    /// Events the start-up scan emitted before `Ready` (ingests, settlements, ...).
    pub events_before_ready: usize,
    /// `/proc/<pid>/task/<tid>/schedstat` of the engine thread, when readable.
    schedstat: Option<PathBuf>,
    shutdown: Option<Sender<()>>,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
}

/// Scheduler accounting of one thread (Linux `schedstat`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadTimes {
    /// Time spent running on a CPU.
    pub on_cpu: Duration,
    /// Time spent runnable but waiting for a CPU.
    pub waiting: Duration,
}

impl std::ops::Sub for ThreadTimes {
    type Output = ThreadTimes;
    fn sub(self, earlier: ThreadTimes) -> ThreadTimes {
        ThreadTimes {
            on_cpu: self.on_cpu.saturating_sub(earlier.on_cpu),
            waiting: self.waiting.saturating_sub(earlier.waiting),
        }
    }
}

impl RunningEngine {
    /// Opens the spool at `spool_dir` and the database at `db`, starts the loop with
    /// `WatchOptions::default()` and returns once it is ready.
    pub fn start(spool_dir: &Path, db: &Path) -> anyhow::Result<RunningEngine> {
        let spool = Spool::open(spool_dir)?;
        let (event_tx, events) = crossbeam_channel::unbounded();
        let (shutdown, shutdown_rx) = crossbeam_channel::bounded::<()>(1);
        let (tid_tx, tid) = crossbeam_channel::bounded(1);
        let (spool_dir, db) = (spool_dir.to_owned(), db.to_owned());
        let started = Instant::now();
        let thread = std::thread::Builder::new().name("engine".into()).spawn(
            move || -> anyhow::Result<()> {
                let _ = tid_tx.send(std::fs::read_link("/proc/thread-self").ok());
                let store = Store::open(&db)?;
                let mut engine = Engine::new(Spool::open(spool_dir)?, store)?
                    .with_events(event_tx.clone())
                    .with_notifier(Box::new(EndOfTurn(event_tx)));
                inbox_engine::run(&mut engine, &WatchOptions::default(), &shutdown_rx)?;
                Ok(())
            },
        )?;
        let schedstat = tid
            .recv()
            .ok()
            .flatten()
            .map(|task| Path::new("/proc").join(task).join("schedstat"));
        let mut running = RunningEngine {
            schedstat,
            spool,
            events,
            time_to_ready: Duration::ZERO,
            events_before_ready: 0,
            shutdown: Some(shutdown),
            thread: Some(thread),
        };
        loop {
            match running.next_event()? {
                Event::Ready { .. } => break,
                other => {
                    check_not_broken(&other)?;
                    running.events_before_ready += 1;
                }
            }
        }
        running.time_to_ready = started.elapsed();
        Ok(running)
    }

    /// The engine thread's scheduler accounting so far, if the kernel exposes it.
    pub fn thread_times(&self) -> Option<ThreadTimes> {
        let text = std::fs::read_to_string(self.schedstat.as_ref()?).ok()?;
        let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
        Some(ThreadTimes {
            on_cpu: Duration::from_nanos(fields.next()??),
            waiting: Duration::from_nanos(fields.next()??),
        })
    }

    /// The next event, within [`PATIENCE`].
    pub fn next_event(&mut self) -> anyhow::Result<Event> {
        match self.events.recv_timeout(PATIENCE) {
            Ok(event) => Ok(event),
            Err(RecvTimeoutError::Timeout) => bail!("no engine event within {PATIENCE:?}"),
            Err(RecvTimeoutError::Disconnected) => {
                let ended = self.shutdown_and_join();
                bail!("the engine loop stopped early: {ended:?}")
            }
        }
    }

    /// Waits for the first event matching `wanted` (dropping the others) and returns when it
    /// was received. A problem or a rejection is a broken benchmark, not a result.
    pub fn wait_for(&mut self, wanted: impl Fn(&Event) -> bool) -> anyhow::Result<Instant> {
        loop {
            let event = self.next_event()?;
            if wanted(&event) {
                return Ok(Instant::now());
            }
            check_not_broken(&event)?;
        }
    }

    /// Stops the loop and reports how it ended.
    pub fn stop(mut self) -> anyhow::Result<()> {
        self.shutdown_and_join()
    }

    fn shutdown_and_join(&mut self) -> anyhow::Result<()> {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| anyhow!("the engine thread panicked"))?
                .context("the engine loop failed"),
            None => Ok(()),
        }
    }
}

impl Drop for RunningEngine {
    fn drop(&mut self) {
        let _ = self.shutdown_and_join();
    }
}

/// The notifier of the benchmarks' engine: no bubble, but `Event::Notified` for every
/// announcement, on the engine's thread as the turn ends (the notices are a turn's last
/// step). It tells a benchmark that a turn which ingested something is over, as the engine's
/// own `Notified` did before the notifier took over reporting it; only a real bubble's
/// sender reports it now, and the `Silent` notifier never does.
struct EndOfTurn(Sender<Event>);

impl Notifier for EndOfTurn {
    fn announce(&self, fresh: Vec<Announcement>) {
        let ids = fresh.into_iter().map(|a| a.summary.id).collect();
        let _ = self.0.send(Event::Notified { ids, merged: false });
    }
}

/// Fails on events that mean the benchmark's own input was wrong.
pub fn check_not_broken(event: &Event) -> anyhow::Result<()> {
    match event {
        Event::Problem { path, reason } => {
            bail!(
                "the engine reported a problem: {}: {reason}",
                path.display()
            )
        }
        Event::Rejected { id, errors } => bail!("the engine rejected {id}: {errors:?}"),
        _ => Ok(()),
    }
}

/// A bare `RecommendedWatcher` (inotify on Linux): the baseline. Each event is timestamped
/// in the watcher's own callback, the earliest moment any code can know of it, and again
/// when the benchmark's thread receives it over a channel, as any consumer would.
pub struct BareWatcher {
    _watcher: notify::RecommendedWatcher,
    events: Receiver<(Instant, Vec<PathBuf>)>,
}

impl BareWatcher {
    pub fn watch(dirs: &[PathBuf]) -> anyhow::Result<BareWatcher> {
        let (tx, events) = crossbeam_channel::unbounded();
        let mut watcher =
            notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
                let at = Instant::now();
                if let Ok(event) = result {
                    let _ = tx.send((at, event.paths));
                }
            })?;
        for dir in dirs {
            watcher.watch(dir, RecursiveMode::NonRecursive)?;
        }
        Ok(BareWatcher {
            _watcher: watcher,
            events,
        })
    }

    /// Waits for an event naming `path` and returns when the watcher's callback ran.
    pub fn wait_for(&self, path: &Path) -> anyhow::Result<Instant> {
        Ok(self.wait_for_both(path)?.0)
    }

    /// Waits for an event naming `path` and returns when the watcher's callback ran and when
    /// this thread received the event.
    pub fn wait_for_both(&self, path: &Path) -> anyhow::Result<(Instant, Instant)> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.events.recv_deadline(deadline) {
                Ok((at, paths)) if paths.iter().any(|p| p == path) => {
                    return Ok((at, Instant::now()))
                }
                Ok(_) => {}
                Err(_) => bail!(
                    "no watcher event for {} within {PATIENCE:?}",
                    path.display()
                ),
            }
        }
    }

    /// Drops events already delivered.
    pub fn drain(&self) {
        while self.events.try_recv().is_ok() {}
    }
}

/// Directories for a benchmark, removed when dropped.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new(label: &str) -> anyhow::Result<Scratch> {
        Ok(Scratch {
            dir: tempfile::Builder::new()
                .prefix(&format!("inbox-bench-{label}-"))
                .tempdir()?,
        })
    }

    pub fn spool_dir(&self) -> PathBuf {
        self.dir.path().join("spool")
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("inbox.db")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}
