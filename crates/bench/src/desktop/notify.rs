//! The time from a request file landing in the spool to its desktop notification (the
//! `Notify` call on the session bus, as dbus-monitor stamps it), for both front ends: the
//! CLI daemon (`answer-inbox watch`, next to this binary) and the desktop app, one after
//! the other in the same private session with dunst. Next to it, measured in the same run
//! and interleaved request by request, the engine's ingest latency (benchmark 1's engine
//! side: rename → `Event::Ingested`, on an engine loop in this process).
//!
//! Each request is placed as an asker places it (written in `tmp/`, renamed into
//! `questions/`), one second after the previous one was placed, the clock starting just
//! before the rename, on the wall clock that dbus-monitor's `time=` uses. A request that
//! lands when no bubble went out within the notifier's quiet window (300 ms) is shown at
//! once on a bubble of its own (its title as the summary), so every request should get
//! one: the benchmark counts the bubbles titled with a request's title, and the summaries
//! ("N new requests need an answer"), against the requests placed. Every bubble is closed
//! once seen (`dunstctl close-all`), so none pile up.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use inbox_engine::notifier::MIN_GAP;
use inbox_harness::desktop::AppDirs;
use inbox_harness::process::Running;

use super::{app_title, epoch_ms, from_ms, p50_p95_max, DesktopBench, Inbox, USER};
use crate::fixtures::{self, Staged};
use crate::harness::{RunningEngine, Scratch};
use crate::latency::engine_drop;
use crate::stats::{ms, table, verdict};

pub const DEFAULT_N: usize = 30;
/// Requests before the measured ones (the first bubble: dunst's first window; the first
/// ingest). They are counted in the bubbles-per-request check all the same.
const WARMUP: usize = 2;
/// From one request's rename to the next one's.
const SPACING: Duration = Duration::from_secs(1);
/// How long a request's own bubble may take before the benchmark stops waiting for it (and
/// counts it as missing).
const BUBBLE_PATIENCE: Duration = Duration::from_secs(5);
/// The target: the bubble within the engine's ingest latency + this (p50).
const SLACK: Duration = Duration::from_millis(10);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Front {
    Daemon,
    App,
}

impl Front {
    fn label(self) -> &'static str {
        match self {
            Front::Daemon => "CLI daemon (`answer-inbox watch`)",
            Front::App => "desktop app",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Front::Daemon => "cli",
            Front::App => "app",
        }
    }
}

/// One front end's run.
struct Run {
    front: Front,
    placed: usize,
    /// Rename → `Notify`, for the measured requests that got their own bubble.
    to_notify: Vec<Duration>,
    /// The engine's ingest of the same requests, in this process.
    to_ingest: Vec<Duration>,
    /// `Notify` calls titled with one of this run's requests.
    own_bubbles: usize,
    /// Summary bubbles during the run.
    summaries: usize,
}

pub fn run(bench: &DesktopBench, n: usize) -> anyhow::Result<()> {
    println!(
        "## Request file → desktop notification, CLI daemon and app ({n} requests each, \
         placed {} s apart)\n",
        SPACING.as_secs_f64()
    );
    anyhow::ensure!(SPACING > MIN_GAP, "the spacing must exceed the bubble gap");
    let engine_dirs = Scratch::new("desktop-notify-engine")?;
    let mut engine = RunningEngine::start(&engine_dirs.spool_dir(), &engine_dirs.db())?;
    let mut runs = Vec::new();
    for front in [Front::Daemon, Front::App] {
        eprintln!("desktop notify: {}", front.label());
        runs.push(one_front(bench, front, n, &mut engine).with_context(|| front.label())?);
    }
    engine.stop()?;

    let mut rows = Vec::new();
    let mut targets = Vec::new();
    for run in &runs {
        let [ingest50, ingest95, ingest_max] = p50_p95_max(&run.to_ingest);
        let row = |label: String, samples: &[Duration]| {
            let [p50, p95, max] = p50_p95_max(samples);
            vec![label, samples.len().to_string(), ms(p50), ms(p95), ms(max)]
        };
        if run.to_notify.is_empty() {
            rows.push(vec![
                format!(
                    "**{}: rename → `Notify` call on the bus**",
                    run.front.label()
                ),
                "0".into(),
                "–".into(),
                "–".into(),
                "–".into(),
            ]);
        } else {
            rows.push(row(
                format!(
                    "**{}: rename → `Notify` call on the bus**",
                    run.front.label()
                ),
                &run.to_notify,
            ));
        }
        rows.push(vec![
            format!(
                "{}, same run: engine in this process, rename → `Event::Ingested`",
                run.front.label()
            ),
            run.to_ingest.len().to_string(),
            ms(ingest50),
            ms(ingest95),
            ms(ingest_max),
        ]);
        let notify50 = (!run.to_notify.is_empty()).then(|| p50_p95_max(&run.to_notify)[0]);
        targets.push(vec![
            format!(
                "{}: rename → `Notify` p50 ≤ ingest p50 + 10 ms",
                run.front.label()
            ),
            match notify50 {
                Some(p50) => format!(
                    "{} vs {} + 10 ms (beyond ingest: {})",
                    ms(p50),
                    ms(ingest50),
                    ms(p50.saturating_sub(ingest50))
                ),
                None => "no bubble of its own".into(),
            },
            verdict(notify50.is_some_and(|p50| p50 <= ingest50 + SLACK)).into(),
        ]);
        targets.push(vec![
            format!(
                "{}: requests {} s apart each get their own bubble",
                run.front.label(),
                SPACING.as_secs_f64()
            ),
            format!(
                "{} of {} own bubbles, {} summaries",
                run.own_bubbles, run.placed, run.summaries
            ),
            verdict(run.own_bubbles == run.placed && run.summaries == 0).into(),
        ]);
    }
    table(&["measure", "requests", "p50", "p95", "max"], &rows);
    table(&["target", "measured", "verdict"], &targets);
    Ok(())
}

/// A front end started in the session on an empty inbox; stopped when dropped.
enum Started {
    Daemon {
        running: Running,
        log: std::path::PathBuf,
        _scratch: Scratch,
    },
    App(super::Launched),
}

impl Started {
    fn check_running(&mut self) -> anyhow::Result<()> {
        match self {
            Started::Daemon { running, log, .. } => {
                if let Ok(Some(status)) = running.child.try_wait() {
                    anyhow::bail!(
                        "the daemon exited ({status}); its log:\n{}",
                        std::fs::read_to_string(log).unwrap_or_default()
                    );
                }
                Ok(())
            }
            Started::App(app) => app.check_running(),
        }
    }
}

fn start(bench: &DesktopBench, front: Front, inbox: &Inbox) -> anyhow::Result<Started> {
    match front {
        Front::App => {
            let mut app = bench.launch(&bench.app, inbox, "desktop-notify")?;
            bench.wait_title(&mut app, &app_title(0))?;
            Ok(Started::App(app))
        }
        Front::Daemon => {
            let binary = sibling_daemon()?;
            let scratch = Scratch::new("desktop-notify-daemon")?;
            let dirs = AppDirs::create(scratch.dir.path());
            let log = dirs.logs().join("watch.log");
            let mut cmd = bench.session.command(&binary);
            cmd.arg("watch");
            dirs.apply(&mut cmd, &inbox.spool, &inbox.db, USER);
            cmd.stdout(std::fs::File::create(&log)?)
                .stderr(std::fs::File::create(dirs.logs().join("watch.err"))?);
            let running = Running::adopt(cmd.spawn().context("start answer-inbox watch")?);
            let mut started = Started::Daemon {
                running,
                log: log.clone(),
                _scratch: scratch,
            };
            let deadline = Instant::now() + super::START;
            while !std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("ready:")
            {
                started.check_running()?;
                anyhow::ensure!(Instant::now() < deadline, "the daemon never became ready");
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(started)
        }
    }
}

fn sibling_daemon() -> anyhow::Result<std::path::PathBuf> {
    let exe = std::env::current_exe()?;
    let path = exe
        .parent()
        .context("no directory around this binary")?
        .join("answer-inbox");
    anyhow::ensure!(
        path.is_file(),
        "{} is missing: `cargo build --release -p answer-inbox` first",
        path.display()
    );
    Ok(path)
}

fn one_front(
    bench: &DesktopBench,
    front: Front,
    n: usize,
    engine: &mut RunningEngine,
) -> anyhow::Result<Run> {
    let inbox = Inbox::with_pending(0)?;
    let mut started = start(bench, front, &inbox)?;
    // The notification thread looks for the daemon once at start; let it.
    std::thread::sleep(Duration::from_secs(2));
    let calls_before = bench.session.notify_calls().len();

    let tmp = inbox.spool.join("tmp");
    let questions = inbox.spool.join("questions");
    let (mut to_notify, mut to_ingest) = (Vec::new(), Vec::new());
    let mut next_drop = Instant::now();
    let prefix = format!("Deploy build note-{}", front.prefix());
    for i in 0..WARMUP + n {
        if i % 10 == 0 {
            eprintln!(
                "desktop notify: {} request {i}/{}",
                front.label(),
                WARMUP + n
            );
        }
        let id = fixtures::id(&format!("note-{}", front.prefix()), i);
        let body = fixtures::interactive_request(&id);
        let title = format!("Deploy build {id}");

        let staged = Staged::write(&tmp, questions.join(format!("{id}.json")), &body)?;
        std::thread::sleep(next_drop.saturating_duration_since(Instant::now()));
        next_drop = Instant::now() + SPACING;
        let landed = epoch_ms();
        staged.place()?;
        let seen = wait_notify(bench, &mut started, &title)?;
        close_bubbles(bench);

        // The engine, in the gap.
        let ingest = engine_drop(engine, &id, &body)?;

        if i >= WARMUP {
            if let Some(seen) = seen {
                to_notify.push(from_ms(seen - landed));
            }
            to_ingest.push(ingest);
        }
    }
    // Whatever was held back goes out within the quiet window.
    std::thread::sleep(MIN_GAP * 2);
    started.check_running()?;
    drop(started);
    let calls = bench.session.notify_calls();
    let calls = &calls[calls_before.min(calls.len())..];
    Ok(Run {
        front,
        placed: WARMUP + n,
        to_notify,
        to_ingest,
        own_bubbles: calls
            .iter()
            .filter(|c| c.summary.starts_with(&prefix))
            .count(),
        summaries: calls
            .iter()
            .filter(|c| c.summary.contains("new requests"))
            .count(),
    })
}

/// Waits for the `Notify` call titled `title`; returns dbus-monitor's stamp of it (epoch
/// ms), or `None` if none came within [`BUBBLE_PATIENCE`] (it may have gone into a summary).
fn wait_notify(
    bench: &DesktopBench,
    started: &mut Started,
    title: &str,
) -> anyhow::Result<Option<f64>> {
    let deadline = Instant::now() + BUBBLE_PATIENCE;
    loop {
        if let Some(call) = bench
            .session
            .notify_calls()
            .into_iter()
            .find(|c| c.summary == title)
        {
            let at = call
                .seen_at
                .ok_or_else(|| anyhow::anyhow!("no time stamp on {}", call.raw))?;
            return Ok(Some(at * 1e3));
        }
        started.check_running()?;
        if Instant::now() > deadline {
            eprintln!("desktop notify: no bubble of its own for {title:?}");
            return Ok(None);
        }
        // The stamp is dbus-monitor's, so polling slowly costs no precision, only CPU that
        // the front end would otherwise get.
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn close_bubbles(bench: &DesktopBench) {
    let _ = bench
        .session
        .command("dunstctl")
        .arg("close-all")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}
