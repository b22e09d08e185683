//! The time from a request file landing in the desktop app's spool to its desktop
//! notification: the `Notify` call on the session bus, as dbus-monitor stamps it. Next to it,
//! measured in the same run and interleaved drop by drop, the engine's ingest latency
//! (benchmark 1's engine side: rename → `Event::Ingested`, on an in-process engine).
//!
//! The app runs directly (no WebDriver) in the private session with dunst. Each request is
//! placed as an asker places it (written in `tmp/`, renamed into `questions/`), the clock
//! starting just before the rename, on the wall clock that dbus-monitor's `time=` uses.
//! Requests are spaced beyond the notifier's 1.5 s minimum gap between bubbles, so each one
//! gets a bubble of its own (its title as the summary) and never waits for that gap. Every
//! bubble is closed once seen (`dunstctl close-all`), so none pile up.

use std::time::{Duration, Instant};

use inbox_engine::notifier::{GATHER, MIN_GAP};

use super::{app_title, epoch_ms, from_ms, p50_p95_max, DesktopBench, Inbox};
use crate::fixtures::{self, Staged};
use crate::harness::{RunningEngine, Scratch, PATIENCE};
use crate::latency::engine_drop;
use crate::stats::{ms, table};

pub const DEFAULT_N: usize = 100;
/// Drops before the measured ones (first notification: the bus connection, dunst's first
/// bubble; first ingest).
const WARMUP: usize = 3;
/// How long after one notification the next request lands: past the minimum gap.
const SPACING: Duration = Duration::from_millis(1700);

pub fn run(bench: &DesktopBench, n: usize) -> anyhow::Result<()> {
    println!("## Desktop app: request file → desktop notification ({n} requests)\n");
    anyhow::ensure!(SPACING > MIN_GAP, "the spacing must exceed the bubble gap");
    let inbox = Inbox::with_pending(0)?;
    let mut app = bench.launch(&bench.app, &inbox, "desktop-notify")?;
    bench.wait_title(&mut app, &app_title(0))?;
    // The notification thread checks for the daemon once at start; let it.
    std::thread::sleep(Duration::from_secs(2));

    let engine_dirs = Scratch::new("desktop-notify-engine")?;
    let mut engine = RunningEngine::start(&engine_dirs.spool_dir(), &engine_dirs.db())?;

    let tmp = inbox.spool.join("tmp");
    let questions = inbox.spool.join("questions");
    let (mut to_notify, mut to_ingest) = (Vec::new(), Vec::new());
    let mut next_drop = Instant::now();
    for i in 0..WARMUP + n {
        if i % 10 == 0 {
            eprintln!("desktop notify: request {i}/{}", WARMUP + n);
        }
        let id = fixtures::id("note", i);
        let body = fixtures::interactive_request(&id);
        let title = format!("Deploy build {id}");

        // The app.
        let staged = Staged::write(&tmp, questions.join(format!("{id}.json")), &body)?;
        std::thread::sleep(next_drop.saturating_duration_since(Instant::now()));
        let landed = epoch_ms();
        staged.place()?;
        let seen = wait_notify(bench, &mut app, &title)?;
        next_drop = Instant::now() + SPACING;
        close_bubbles(bench);

        // The engine, in the gap.
        let ingest = engine_drop(&mut engine, &id, &body)?;

        if i >= WARMUP {
            to_notify.push(from_ms(seen - landed));
            to_ingest.push(ingest);
        }
    }
    engine.stop()?;
    let calls = bench.session.notify_calls();
    let ours = calls
        .iter()
        .filter(|c| c.summary.starts_with("Deploy build note-"))
        .count();
    anyhow::ensure!(
        ours == WARMUP + n && calls.iter().all(|c| !c.summary.contains("new requests")),
        "expected one bubble per request and no summaries, saw {} calls",
        calls.len()
    );
    drop(app);

    let [notify50, notify95, notify_max] = p50_p95_max(&to_notify);
    let [ingest50, ingest95, ingest_max] = p50_p95_max(&to_ingest);
    let beyond: Vec<Duration> = to_notify.iter().map(|d| d.saturating_sub(GATHER)).collect();
    let [beyond50, beyond95, beyond_max] = p50_p95_max(&beyond);
    let row = |label: &str, [p50, p95, max]: [Duration; 3]| {
        vec![label.into(), n.to_string(), ms(p50), ms(p95), ms(max)]
    };
    table(
        &["measure", "requests", "p50", "p95", "max"],
        &[
            row(
                "**app: rename into `questions/` → `Notify` call on the bus**",
                [notify50, notify95, notify_max],
            ),
            row(
                "(diagnosis) the same, less the 250 ms gather window",
                [beyond50, beyond95, beyond_max],
            ),
            row(
                "engine, same run: rename → `Event::Ingested` received",
                [ingest50, ingest95, ingest_max],
            ),
        ],
    );
    Ok(())
}

/// Waits for the `Notify` call titled `title`; returns dbus-monitor's stamp of it (epoch ms).
fn wait_notify(
    bench: &DesktopBench,
    app: &mut super::Launched,
    title: &str,
) -> anyhow::Result<f64> {
    let deadline = Instant::now() + PATIENCE;
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
            return Ok(at * 1e3);
        }
        app.check_running()?;
        anyhow::ensure!(
            Instant::now() < deadline,
            "no notification {title:?} within {PATIENCE:?}"
        );
        // The stamp is dbus-monitor's, so polling slowly costs no precision, only CPU that
        // the app would otherwise get.
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn close_bubbles(bench: &DesktopBench) {
    let _ = bench
        .session
        .command("dunstctl")
        .arg("close-all")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}
