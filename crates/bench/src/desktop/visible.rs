//! Issue 11: a request placed → visible in the running app's window, next to the engine's
//! ingest latency (placed → `Event::Ingested`) in the same run.
//!
//! The app runs under tauri-driver, as in the launch benchmark (window.rs). Once its list is
//! painted, a script installed in the page (`execute_script`) keeps a `MutationObserver` on
//! the document: whenever the DOM changes, it looks at the Pending list's rows and notes
//! `Date.now()` the first time a row titled `Visible probe <id>` is there, and again in the
//! animation frame after (the frame that paints it). The same script also notes, for the
//! diagnosis, when the window hears the app's `inbox` event (`changed`), whether that event
//! carried the row (its delta) or asked for a refetch, and when each `list_pending` call the
//! window makes starts and returns (Tauri's `invoke`, wrapped). Since the window patches its
//! Pending list with the delta, a probe normally makes no `list_pending` call at all.
//!
//! Each probe is a `critical` request (so it sorts to the top of the list, in view),
//! written in `tmp/` and renamed into `questions/`; the clock starts just before the rename,
//! on the wall clock (`SystemTime`, epoch ms), which is what `Date.now()` in the page reads:
//! both sides use the same clock, at 1 ms resolution in the page. The benchmark then waits
//! (one `execute_async` per probe, no polling) for the page to report the row, withdraws the
//! probe (its cancel tombstone, as its asker would) so that it leaves the list again, waits
//! until its row is gone, and pauses, so every probe meets an idle app and the same list. Between two probes, the same
//! request is renamed into an engine loop in this process and timed until `Event::Ingested`
//! (benchmark 1's engine side), interleaved probe by probe.
//!
//! It runs twice: on an inbox of 10 pending requests and on one of N (10,000 by default).

use std::time::Duration;

use anyhow::Context;
use inbox_engine::{Area, Spool};
use inbox_harness::desktop::{AppDirs, Driver};
use serde_json::json;

use super::{epoch_ms, from_ms, p50_p95_max, DesktopBench, Inbox, START, USER};
use crate::fixtures::{self, Staged};
use crate::harness::{RunningEngine, Scratch};
use crate::latency::engine_drop;
use crate::stats::{ms, table, thousands, verdict};

pub const DEFAULT_PROBES: usize = 40;
/// Probes before the measured ones (first ingest, first event, JIT of the observer).
const WARMUP: usize = 3;
/// The small inbox.
const SMALL: usize = 10;
/// Idle time after a probe has left the list again.
const PAUSE: Duration = Duration::from_millis(300);
const TARGET: Duration = Duration::from_millis(50);

/// One probe's figures, in ms after the rename (wall clock).
#[derive(Debug, Default, Clone)]
struct Probe {
    /// The row is in the DOM (the observer's callback).
    dom: f64,
    /// The animation frame after that.
    frame: Option<f64>,
    /// The window heard the `changed` event.
    changed: Option<f64>,
    /// That event carried a delta (the window patches its list instead of fetching it).
    delta: Option<bool>,
    /// The `list_pending` call made after it started...
    fetch_start: Option<f64>,
    /// ...and returned its rows.
    fetch_end: Option<f64>,
    /// The engine's ingest of the same request, in this process (rename → `Ingested`).
    ingest: Duration,
}

pub fn run(bench: &DesktopBench, probes: usize, n: usize) -> anyhow::Result<()> {
    println!(
        "## Issue 11: request placed → visible in the app's window ({probes} probes on {SMALL} \
         and on {} pending)\n",
        thousands(n as f64)
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let engine_dirs = Scratch::new("desktop-visible-engine")?;
    let mut engine = RunningEngine::start(&engine_dirs.spool_dir(), &engine_dirs.db())?;

    let mut results = Vec::new();
    for pending in [SMALL, n] {
        eprintln!("desktop visible: {pending} pending");
        let inbox = Inbox::with_pending(pending)?;
        let samples = launch_and_probe(bench, &runtime, &inbox, pending, probes, &mut engine)
            .with_context(|| format!("{pending} pending"))?;
        results.push((pending, samples));
    }
    engine.stop()?;

    let mut rows = Vec::new();
    let mut verdicts = Vec::new();
    for (pending, samples) in &results {
        let series = |pick: &dyn Fn(&Probe) -> Option<f64>| -> Option<[Duration; 3]> {
            let values: Vec<Duration> = samples.iter().filter_map(pick).map(from_ms).collect();
            (values.len() == samples.len()).then(|| p50_p95_max(&values))
        };
        let row = |label: String, figures: Option<[Duration; 3]>| {
            figures.map(|[p50, p95, max]| {
                vec![label, samples.len().to_string(), ms(p50), ms(p95), ms(max)]
            })
        };
        let pending = thousands(*pending as f64);
        let visible = series(&|p: &Probe| Some(p.dom));
        rows.extend(
            [
                row(
                    format!("**{pending} pending: rename → row in the Pending list's DOM**"),
                    visible,
                ),
                row(
                    format!("{pending} pending: rename → the animation frame after (painted)"),
                    series(&|p: &Probe| p.frame),
                ),
                row(
                    format!(
                        "{pending} pending, same run: engine in this process, rename → \
                         `Event::Ingested` received"
                    ),
                    series(&|p: &Probe| Some(p.ingest.as_secs_f64() * 1e3)),
                ),
                row(
                    format!("(diagnosis) {pending} pending: rename → the window hears `changed`"),
                    series(&|p: &Probe| p.changed),
                ),
                row(
                    format!(
                        "(diagnosis) {pending} pending: `changed` heard → row in the DOM \
                         (the UI's patch and render)"
                    ),
                    series(&|p: &Probe| Some(p.dom - p.changed?)),
                ),
                row(
                    format!(
                        "(diagnosis) {pending} pending: rename → the window's `list_pending` \
                         call returned"
                    ),
                    series(&|p: &Probe| p.fetch_end),
                ),
                row(
                    format!(
                        "(diagnosis) {pending} pending: the `list_pending` round trip \
                         (call → response body read)"
                    ),
                    series(&|p: &Probe| Some(p.fetch_end? - p.fetch_start?)),
                ),
                row(
                    format!(
                        "(diagnosis) {pending} pending: rows returned → row in the DOM \
                         (the UI's update)"
                    ),
                    series(&|p: &Probe| Some(p.dom - p.fetch_end?)),
                ),
            ]
            .into_iter()
            .flatten(),
        );
        if let Some([p50, _, _]) = visible {
            verdicts.push(vec![
                format!("placed → visible, p50 < 50 ms ({pending} pending)"),
                format!("p50 {}", ms(p50)),
                verdict(p50 < TARGET).into(),
            ]);
        }
    }
    table(&["measure", "probes", "p50", "p95", "max"], &rows);
    for (pending, samples) in &results {
        let deltas = samples.iter().filter(|p| p.delta == Some(true)).count();
        let fetches = samples.iter().filter(|p| p.fetch_start.is_some()).count();
        println!(
            "- {} pending: the first `changed` after the rename carried a delta in {deltas} of \
             {} probes; the window called `list_pending` after the rename in {fetches}.",
            thousands(*pending as f64),
            samples.len()
        );
    }
    println!();
    table(&["target", "measured", "verdict"], &verdicts);
    Ok(())
}

/// Launches the app on `inbox` under tauri-driver and times `probes` probes (after the
/// warm-up ones). Everything started is stopped before it returns.
fn launch_and_probe(
    bench: &DesktopBench,
    runtime: &tokio::runtime::Runtime,
    inbox: &Inbox,
    pending: usize,
    probes: usize,
    engine: &mut RunningEngine,
) -> anyhow::Result<Vec<Probe>> {
    let scratch = Scratch::new("desktop-visible")?;
    let dirs = AppDirs::create(scratch.dir.path());
    let log = dirs.logs().join("tauri-driver.log");
    let mut driver = Driver::start(&bench.session, &log, |cmd| {
        dirs.apply(cmd, &inbox.spool, &inbox.db, USER)
    });
    let result = runtime.block_on(probe_all(
        &mut driver,
        bench,
        inbox,
        pending,
        probes,
        engine,
    ));
    driver.stop();
    result.with_context(|| {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        format!("tauri-driver's log:\n{log}")
    })
}

async fn probe_all(
    driver: &mut Driver,
    bench: &DesktopBench,
    inbox: &Inbox,
    pending: usize,
    probes: usize,
    engine: &mut RunningEngine,
) -> anyhow::Result<Vec<Probe>> {
    driver
        .wait_listening(START)
        .await
        .map_err(anyhow::Error::msg)?;
    let client = driver
        .connect(&bench.app, START)
        .await
        .map_err(anyhow::Error::msg)?;
    let marks = super::window::wait_painted(&client, None).await?;
    anyhow::ensure!(
        marks["count"].as_f64() == Some(pending as f64),
        "the painted list does not hold the {pending} requests: {marks}"
    );
    let installed = client.execute(INSTALL, Vec::new()).await?;
    anyhow::ensure!(installed == json!(true), "the observer: {installed}");
    // The app's own start-up work (the engine's first scan, its first announcements) is over.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let spool = Spool::open(&inbox.spool)?;
    let mut samples = Vec::new();
    for i in 0..WARMUP + probes {
        if i % 10 == 0 {
            eprintln!("desktop visible: probe {i}/{}", WARMUP + probes);
        }
        let id = fixtures::id(&format!("vis{pending}"), i);
        let body = fixtures::visible_probe(&id);
        let title = fixtures::probe_title(&id);
        let staged = Staged::write(&spool.tmp_dir(), spool.path(Area::Questions, &id), &body)?;
        let placed = epoch_ms();
        staged.place()?;
        let seen = client
            .execute_async(WAIT_SEEN, vec![json!(title), json!(placed)])
            .await?;
        anyhow::ensure!(
            seen["dom"].is_number(),
            "probe {id} not seen in the window: {seen}"
        );
        if i == WARMUP {
            eprintln!(
                "desktop visible: what the page recorded for the first measured probe: {seen}"
            );
        }
        let after = |key: &str| seen[key].as_f64().map(|at| at - placed);
        let mut probe = Probe {
            dom: after("dom").unwrap_or_default(),
            frame: after("frame"),
            changed: after("changed"),
            delta: seen["delta"].as_bool(),
            fetch_start: after("fetch_start"),
            fetch_end: after("fetch_end"),
            ingest: Duration::ZERO,
        };

        // The probe leaves the list again: its asker withdraws it. (An outcome written here
        // would not do: it names no version of the request and no account that owns it,
        // and the inbox blocks a request with an outcome it cannot trust.)
        spool.place_tombstone(&id, "benchmark probe measured")?;
        let gone = client.execute_async(WAIT_GONE, vec![json!(title)]).await?;
        anyhow::ensure!(gone == json!(true), "probe {id} stayed in the list: {gone}");
        close_bubbles(bench);
        tokio::time::sleep(PAUSE).await;

        // The engine, in the gap: the same request, into its own spool.
        probe.ingest = engine_drop(engine, &id, &body)?;
        tokio::time::sleep(PAUSE / 3).await;
        if i >= WARMUP {
            samples.push(probe);
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
    Ok(samples)
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

/// Installs the page's recorder once: the observer on the Pending list's rows, a listener
/// for the app's `inbox` event, and a wrapper around Tauri's `invoke` that notes every
/// `list_pending` call. Returns true.
const INSTALL: &str = r#"
    if (window.__bench) return true;
    const bench = { seen: {}, gone: {}, changed: [], deltas: [], fetches: [], waiters: [] };
    window.__bench = bench;
    const titles = () => Array.from(
        document.querySelectorAll('[data-testid=pending-list] [data-testid=row] .title'),
        (node) => node.textContent,
    );
    const look = () => {
        const now = Date.now();
        const shown = new Set(titles());
        for (const title of shown) {
            if (title.startsWith('Visible probe ') && !bench.seen[title]) {
                const record = { dom: now, frame: null };
                bench.seen[title] = record;
                requestAnimationFrame(() => { record.frame = Date.now(); });
            }
        }
        for (const title of Object.keys(bench.seen)) {
            if (!shown.has(title) && !bench.gone[title]) bench.gone[title] = now;
        }
        for (const waiter of bench.waiters.splice(0)) waiter();
    };
    new MutationObserver(look).observe(document.body, {
        subtree: true, childList: true, characterData: true,
    });
    const internals = window.__TAURI_INTERNALS__;
    const invoke = internals.invoke.bind(internals);
    const wrapper = (command, ...rest) => {
        if (command !== 'list_pending') return invoke(command, ...rest);
        const fetch = { start: Date.now(), end: null };
        bench.fetches.push(fetch);
        const call = invoke(command, ...rest);
        call.then(() => { fetch.end = Date.now(); }, () => { fetch.end = Date.now(); });
        return call;
    };
    try { internals.invoke = wrapper; } catch (error) { /* read-only */ }
    bench.wrapped = internals.invoke === wrapper;
    if (!bench.wrapped) {
        // Tauri's IPC on Linux is a fetch of ipc://localhost/<command>: wrap fetch instead.
        const plain = window.fetch.bind(window);
        window.fetch = (input, ...rest) => {
            const url = String(input && input.url ? input.url : input);
            if (!url.includes('list_pending')) return plain(input, ...rest);
            const fetch = { start: Date.now(), end: null };
            bench.fetches.push(fetch);
            return plain(input, ...rest).then(async (response) => {
                const body = await response.clone().arrayBuffer();
                fetch.end = Date.now();
                fetch.bytes = body.byteLength;
                return response;
            });
        };
        bench.wrapped = 'fetch';
    }
    try {
        const handler = internals.transformCallback((event) => {
            if (event && event.payload && event.payload.kind === 'changed') {
                bench.changed.push(Date.now());
                bench.deltas.push(event.payload.delta != null);
            }
        });
        invoke('plugin:event|listen', { event: 'inbox', target: { kind: 'Any' }, handler })
            .catch(() => { bench.noEvents = true; });
    } catch (error) {
        bench.noEvents = true;
    }
    look();
    return true;
"#;

/// Waits (up to 10 s) until the row titled `arguments[0]` has been seen; returns its times,
/// with the first `changed` event (and whether it carried a delta) and the first
/// `list_pending` call after `arguments[1]` (the placement, epoch ms) for the diagnosis.
const WAIT_SEEN: &str = r#"
    const [title, placed, done] = arguments;
    const bench = window.__bench;
    const finish = () => {
        const record = bench.seen[title];
        const after = (list) => list.find((at) => at >= placed - 1);
        const heard = bench.changed.findIndex((at) => at >= placed - 1);
        let fetch = bench.fetches.find((f) => f.start >= placed - 1 && f.end !== null);
        if (!fetch) {
            // Tauri's IPC is a fetch of ipc://localhost/<command>: its resource timing.
            const origin = performance.timeOrigin;
            const entry = performance.getEntriesByType('resource').find((e) =>
                e.name.includes('list_pending') && origin + e.startTime >= placed - 1);
            if (entry) fetch = { start: origin + entry.startTime, end: origin + entry.responseEnd };
        }
        done({
            wrapped: bench.wrapped,
            dom: record.dom,
            frame: record.frame,
            changed: after(bench.changed) ?? null,
            delta: heard === -1 ? null : bench.deltas[heard],
            fetch_start: fetch ? fetch.start : null,
            fetch_end: fetch ? fetch.end : null,
        });
    };
    const check = () => {
        const record = bench.seen[title];
        if (record && record.frame !== null) return finish();
        if (record) return requestAnimationFrame(() => setTimeout(check, 0));
        if (Date.now() - placed > 10000) return done({ error: 'timeout', seen: Object.keys(bench.seen).length });
        bench.waiters.push(check);
        setTimeout(() => {
            const at = bench.waiters.indexOf(check);
            if (at !== -1) { bench.waiters.splice(at, 1); check(); }
        }, 200);
    };
    check();
"#;

/// Waits (up to 10 s) until the row titled `arguments[0]` has left the list; returns true.
const WAIT_GONE: &str = r#"
    const [title, done] = arguments;
    const bench = window.__bench;
    const started = Date.now();
    const check = () => {
        if (bench.gone[title]) return done(true);
        if (Date.now() - started > 10000) return done({ error: 'still listed' });
        bench.waiters.push(check);
        setTimeout(() => {
            const at = bench.waiters.indexOf(check);
            if (at !== -1) { bench.waiters.splice(at, 1); check(); }
        }, 200);
    };
    check();
"#;

#[cfg(test)]
mod tests {
    #[test]
    fn the_probe_is_critical() {
        let body = String::from_utf8(crate::fixtures::visible_probe("vis-1")).unwrap();
        assert!(body.contains(r#""priority": "critical""#), "{body}");
    }
}
