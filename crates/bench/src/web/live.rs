//! Issue 14: a request placed → visible on an open web page, next to the engine's ingest
//! latency in the same run.
//!
//! `answer-inbox serve` (the binary next to this one) runs on an inbox of 10 pending
//! requests, and one paired device keeps one page open: its event stream
//! (`GET /api/events`), read raw on a thread of its own that stamps each event when its
//! first line (`event: inbox`) arrives. The page's part is played as the page plays it: on
//! a `changed` event it fetches the list again (`POST /api/list_pending`, with the cookie,
//! the Origin and the CSRF token, over a kept-alive connection); the request is *visible*
//! when a list holding it has been read and parsed. A list without it (an event for
//! something else) means waiting for the next `changed`, as the page would.
//!
//! Each probe is a small interactive request, written in the spool's `tmp/` and renamed
//! into `questions/`; the clock starts just before the rename (`Instant`, the same clock
//! the reader thread stamps with). Once visible, the probe is declined from the page
//! (`open_request`, `decline_request`), the benchmark waits for its `settled` event and
//! pauses, so every probe meets an idle server and the same list. Between probes, the same
//! request is renamed into an engine loop in this process and timed until
//! `Event::Ingested` (benchmark 1's engine side), interleaved probe by probe. For the diagnosis, the server's own `changed:` line on
//! its standard output (printed just before the event goes to the pages) is stamped too.

use std::time::{Duration, Instant};

use anyhow::Context;
use crossbeam_channel::Receiver;
use inbox_engine::{Area, Spool};

use super::{Device, Served, SseEvent};
use crate::desktop::Inbox;
use crate::fixtures::{self, Staged};
use crate::harness::{RunningEngine, Scratch, PATIENCE};
use crate::latency::engine_drop;
use crate::stats::{ms, percentile, table, thousands, verdict};

pub const DEFAULT_N: usize = 200;
/// Probes before the measured ones (first ingest, first event, the connection's warm-up).
const WARMUP: usize = 5;
/// Pending requests in the inbox the page shows.
const PENDING: usize = 10;
/// Idle time after a probe has left the list again (longer than the server's 40 ms
/// gathering window, so the next change is sent at once).
const PAUSE: Duration = Duration::from_millis(300);
const TARGET: Duration = Duration::from_millis(100);

/// One probe's figures, after the rename.
struct Probe {
    /// The first `event: inbox` on the page's stream.
    event: Duration,
    /// A `list_pending` holding the request has been read.
    visible: Duration,
    /// That fetch alone (call → rows parsed).
    fetch: Duration,
    /// `list_pending` calls until the request was in the list.
    fetches: usize,
    /// The server printed `changed:` (read from its standard output).
    logged: Duration,
    /// The engine's ingest of the same request, in this process (rename → `Ingested`).
    ingest: Duration,
}

pub fn run(n: usize) -> anyhow::Result<()> {
    println!(
        "## Issue 14: request placed → visible on an open web page ({} probes, {PENDING} \
         pending)\n",
        thousands(n as f64)
    );
    let inbox = Inbox::with_pending(PENDING)?;
    let mut server = Served::start(&inbox.spool, &inbox.db, "web-live")?;
    eprintln!("web-live: serving at {}", server.base);
    let device = server.pair()?;
    let events = device.open_page()?.listen()?;
    // What the page does once open: fetch the list.
    let shown = device.list_pending()?;
    anyhow::ensure!(
        shown.len() == PENDING,
        "the page lists {} requests, not the {PENDING} pending",
        shown.len()
    );
    let engine_dirs = Scratch::new("web-live-engine")?;
    let mut engine = RunningEngine::start(&engine_dirs.spool_dir(), &engine_dirs.db())?;
    // The server's own start-up work (the first scan, its first announcements) is over.
    std::thread::sleep(Duration::from_secs(1));

    let spool = Spool::open(&inbox.spool)?;
    let mut probes = Vec::with_capacity(n);
    for i in 0..WARMUP + n {
        if i % 50 == 0 {
            eprintln!("web-live: probe {i}/{}", WARMUP + n);
        }
        let id = fixtures::id("web", i);
        let body = fixtures::interactive_request(&id);
        let probe = probe_once(&mut server, &device, &events, &spool, &id, &body)
            .with_context(|| format!("probe {id}"))?;
        // The engine, in the gap: the same request, into its own spool.
        let ingest = engine_drop(&mut engine, &id, &body)?;
        std::thread::sleep(PAUSE / 3);
        if i >= WARMUP {
            probes.push(Probe { ingest, ..probe });
        }
    }
    engine.stop()?;
    server.check_running()?;

    let series = |pick: fn(&Probe) -> Duration| -> Vec<Duration> {
        let mut values: Vec<Duration> = probes.iter().map(pick).collect();
        values.sort_unstable();
        values
    };
    let row = |label: &str, sorted: &[Duration]| {
        vec![
            label.to_owned(),
            sorted.len().to_string(),
            ms(percentile(sorted, 50.0)),
            ms(percentile(sorted, 95.0)),
            ms(percentile(sorted, 99.0)),
            ms(sorted[sorted.len() - 1]),
        ]
    };
    let visible = series(|p| p.visible);
    let refetched = probes.iter().filter(|p| p.fetches > 1).count();
    table(
        &["measure", "probes", "p50", "p95", "p99", "max"],
        &[
            row(
                "**rename → `event: inbox` read on the page's stream**",
                &series(|p| p.event),
            ),
            row(
                "**rename → the page's `list_pending` after it holds the request (visible)**",
                &visible,
            ),
            row(
                "same run: engine in this process, rename → `Event::Ingested` received",
                &series(|p| p.ingest),
            ),
            row(
                "(diagnosis) rename → the server prints `changed:` (just before the event goes \
                 to the pages)",
                &series(|p| p.logged),
            ),
            row(
                "(diagnosis) the `list_pending` that showed it: call → rows parsed",
                &series(|p| p.fetch),
            ),
            row(
                "(diagnosis) event read → visible",
                &series(|p| p.visible.saturating_sub(p.event)),
            ),
        ],
    );
    println!(
        "Probes whose first refetch did not hold the request yet (visible at a later \
         `changed`): {refetched} of {}.\n",
        probes.len()
    );
    let p50 = percentile(&visible, 50.0);
    table(
        &["target", "measured", "verdict"],
        &[vec![
            "placed → visible on an open page (SSE), p50 < 100 ms".into(),
            format!("p50 {}", ms(p50)),
            verdict(p50 < TARGET).into(),
        ]],
    );
    Ok(())
}

/// Places one request, follows the page until it is visible, settles it again and waits
/// until the page has heard so.
fn probe_once(
    server: &mut Served,
    device: &Device,
    events: &Receiver<SseEvent>,
    spool: &Spool,
    id: &str,
    body: &[u8],
) -> anyhow::Result<Probe> {
    let staged = Staged::write(&spool.tmp_dir(), spool.path(Area::Questions, id), body)?;
    while events.try_recv().is_ok() {}
    server.drain_lines();
    let placed = Instant::now();
    staged.place()?;
    let deadline = placed + PATIENCE;

    let mut first_event = None;
    let mut fetches = 0;
    let (visible, fetch) = loop {
        let event = events
            .recv_deadline(deadline)
            .map_err(|_| anyhow::anyhow!("the page heard no change within {PATIENCE:?}"))?;
        if event.at < placed {
            continue;
        }
        first_event.get_or_insert(event.at);
        if event.kind().as_deref() != Some("changed") {
            continue;
        }
        let asked = Instant::now();
        let ids = device.list_pending()?;
        let read = Instant::now();
        fetches += 1;
        if ids.iter().any(|shown| shown == id) {
            break (read, read - asked);
        }
    };
    let logged = loop {
        let (at, _) = server.line_starting("changed: ", deadline)?;
        if at >= placed {
            break at;
        }
    };

    // The probe leaves the list again: declined from the page, as the operator would.
    device.decline(id)?;
    loop {
        let event = events
            .recv_deadline(deadline)
            .map_err(|_| anyhow::anyhow!("the page never heard that {id} was settled"))?;
        if event.kind().as_deref() == Some("settled") && event.id().as_deref() == Some(id) {
            break;
        }
    }
    std::thread::sleep(PAUSE);

    Ok(Probe {
        event: first_event.unwrap_or(visible) - placed,
        visible: visible - placed,
        fetch,
        fetches,
        logged: logged - placed,
        ingest: Duration::ZERO,
    })
}
