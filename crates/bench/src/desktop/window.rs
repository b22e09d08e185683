//! With N pending requests: the time from launch to a painted list, and from a keystroke in
//! the search box to the updated list.
//!
//! **Launch.** tauri-driver (WebKitWebDriver) starts the app for a new WebDriver session.
//! The clock starts just before the session is requested, once tauri-driver is listening,
//! on the wall clock; it stops at the page's own `inbox:list-painted` mark, which the UI
//! sets in the animation frame after its first render of a non-empty Pending list, read as
//! `performance.timeOrigin + mark.startTime` (also the wall clock, epoch ms). The baseline is
//! the same launch on an inbox of 10 requests, alternating with the large one run by run:
//! the difference is what the size of the list costs. For diagnosis, the page's own
//! milestones on the way are read too, the `list_pending` IPC call is repeated from the page
//! once the list is painted, and what that command does in Rust is timed in this process.
//!
//! **Keystroke.** In the page (one `execute_async` script, so no WebDriver round trip is
//! timed): the search box's value is set and an `input` event dispatched, as a keystroke
//! does; the clock stops when the list's `data-count` shows the filtered count and a forced
//! layout (`offsetHeight`) is done; again in a task queued from the next animation frame
//! (that frame, which shows the new list, has been rendered); and at the animation frame
//! after that (double `requestAnimationFrame`). Each keystroke starts from an idle page (two
//! frames after the previous one), 0-16 ms into a frame, as real keys land anywhere in one.
//! `performance.now()` in WebKit has a 1 ms resolution. A first pass over the queries, not
//! timed, learns each query's count and warms the page's JIT; queries whose count equals the
//! one before are then left out, since an unchanged `data-count` cannot show that the list
//! was updated.

use std::time::{Duration, Instant};

use anyhow::Context;
use inbox_harness::desktop::{AppDirs, Driver};
use serde_json::{json, Value};

use super::{epoch_ms, from_ms, p50_p95_max, DesktopBench, Inbox, START, USER};
use crate::harness::Scratch;
use crate::stats::{median, ms, table, thousands, verdict};

const RUNS: usize = 7;
/// The small inbox whose launches are the baseline of the large one's.
const SMALL: usize = 10;

/// Launch figures of one run, in ms from requesting the session.
struct Launch {
    /// The page's time origin: the app is up and its webview has begun loading the page.
    origin: f64,
    /// The page's DOMContentLoaded is done (the UI's script has run).
    loaded: Option<f64>,
    /// `inbox:list-painted`.
    painted: f64,
    /// The page's first contentful paint (the window's frame, before the list).
    first_paint: Option<f64>,
    /// The WebDriver session request returned (for reference: WebDriver's own overhead).
    session: f64,
    /// Diagnosis, after the paint: the `list_pending` command called from the page, until
    /// its N rows are parsed objects in JavaScript (median of 3).
    ipc_round_trip: f64,
    /// Diagnosis, at the end: the page reloaded in the running app, from its new time
    /// origin to the list painted again (the app and WebKit are warm, the page is new).
    reload: Option<f64>,
}

pub fn run(bench: &DesktopBench, n: usize) -> anyhow::Result<()> {
    println!(
        "## Desktop app: launch to painted list, keystroke to updated list ({} pending)\n",
        thousands(n as f64)
    );
    anyhow::ensure!(
        n > 0,
        "the list is painted only when it has rows: N must be > 0"
    );
    let inbox = Inbox::with_pending(n)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;

    let small = Inbox::with_pending(SMALL)?;
    let (mut launches, mut small_launches) = (Vec::new(), Vec::new());
    let mut keys: Vec<Keystroke> = Vec::new();
    let mut counts = Vec::new();
    for round in 1..=RUNS {
        eprintln!("desktop window: run {round}/{RUNS}");
        // The baseline first, then the large inbox with its keystrokes.
        let (launch, _, _) = launch_once(bench, &runtime, &small, SMALL, false)
            .with_context(|| format!("run {round}, {SMALL} pending"))?;
        small_launches.push(launch);
        let (launch, seen, run_keys) = launch_once(bench, &runtime, &inbox, n, true)
            .with_context(|| format!("run {round}, {n} pending"))?;
        launches.push(launch);
        counts = seen;
        keys.extend(run_keys);
    }

    let series = |launches: &[Launch], pick: &dyn Fn(&Launch) -> Option<f64>| {
        let values: Vec<Duration> = launches.iter().filter_map(pick).map(from_ms).collect();
        (values.len() == launches.len()).then(|| {
            let mut sorted = values.clone();
            sorted.sort_unstable();
            format!(
                "{} ({} – {})",
                ms(median(&values)),
                ms(sorted[0]),
                ms(sorted[sorted.len() - 1])
            )
        })
    };
    let mut rows = Vec::new();
    for (label, pick) in [
        (
            "launch → the page's time origin (app up, webview loading the page)",
            &(|l: &Launch| Some(l.origin)) as &dyn Fn(&Launch) -> Option<f64>,
        ),
        (
            "launch → DOMContentLoaded (the UI's script has run)",
            &|l: &Launch| l.loaded,
        ),
        (
            "launch → first contentful paint (the window's frame, no list yet)",
            &|l: &Launch| l.first_paint,
        ),
        (
            "**launch → list painted** (`inbox:list-painted`)",
            &|l: &Launch| Some(l.painted),
        ),
        (
            "(reference) launch → WebDriver session returned",
            &|l: &Launch| Some(l.session),
        ),
        (
            "(diagnosis, after the paint) `list_pending` called from the page → rows parsed",
            &|l: &Launch| Some(l.ipc_round_trip),
        ),
        (
            "(diagnosis, at the end) page reloaded in the running app: time origin → list painted",
            &|l: &Launch| l.reload,
        ),
    ] {
        if let (Some(large), Some(baseline)) =
            (series(&launches, pick), series(&small_launches, pick))
        {
            rows.push(vec![label.into(), large, baseline]);
        }
    }
    let runs = format!("{RUNS} runs each, median (min – max)");
    table(
        &[
            &runs,
            &format!("{} pending", thousands(n as f64)),
            &format!("baseline: {SMALL} pending"),
        ],
        &rows,
    );
    list_pending_alone(&inbox, n)?;

    let pick = |of: fn(&Keystroke) -> Duration, rows: &dyn Fn(usize) -> bool| -> Vec<Duration> {
        keys.iter().filter(|k| rows(k.rows)).map(of).collect()
    };
    let any = |_: usize| true;
    let listed = pick(|k| k.listed, &any);
    let [list50, list95, list_max] = p50_p95_max(&listed);
    // A row per series; a bucket no query fell into has none.
    let row = |label: &str, samples: &[Duration]| {
        (!samples.is_empty()).then(|| {
            let [p50, p95, max] = p50_p95_max(samples);
            vec![
                label.into(),
                samples.len().to_string(),
                ms(p50),
                ms(p95),
                ms(max),
            ]
        })
    };
    let rows: Vec<Vec<String>> = [
        row(
            "**list updated**: `data-count` shows the filtered count, layout done",
            &listed,
        ),
        row(
            "frame rendered: the next `requestAnimationFrame`, then a task after it",
            &pick(|k| k.rendered, &any),
        ),
        row(
            "second frame: the `requestAnimationFrame` after that",
            &pick(|k| k.framed, &any),
        ),
        row(
            &format!("(diagnosis) list updated, the box cleared: all {n} rows"),
            &pick(|k| k.listed, &|rows| rows == n),
        ),
        row(
            "(diagnosis) list updated, 1,000 or more rows left",
            &pick(|k| k.listed, &|rows| (1000..n).contains(&rows)),
        ),
        row(
            "(diagnosis) list updated, fewer than 1,000 rows left",
            &pick(|k| k.listed, &|rows| rows < 1000),
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    table(
        &["keystroke → ...", "keystrokes", "p50", "p95", "max"],
        &rows,
    );
    println!(
        "{} timed keystrokes per run × {RUNS} runs. The queries in order, with the rows each \
         left (those marked * were timed; the others left as many rows as the query before):\n\n{}\n",
        keys.len() / RUNS,
        counts
            .iter()
            .map(|(query, count, timed)| {
                format!("`{query}` {count}{}", if *timed { "*" } else { "" })
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    let target = Duration::from_millis(16);
    table(
        &["target", "measured", "verdict"],
        &[vec![
            "keystroke → updated list < 16 ms".into(),
            format!(
                "p50 {}, p95 {}, max {}",
                ms(list50),
                ms(list95),
                ms(list_max)
            ),
            verdict(list95 < target).into(),
        ]],
    );
    println!("(The keystroke verdict is taken at p95.)\n");
    Ok(())
}

/// One timed keystroke: the rows it left, and the times to the updated list, to the rendered
/// frame and to the second frame.
struct Keystroke {
    rows: usize,
    listed: Duration,
    rendered: Duration,
    framed: Duration,
}

/// Each query, the rows it left, and whether it was timed.
type Counts = Vec<(&'static str, usize, bool)>;

/// The page's milestones once `inbox:list-painted` is set, in a page whose time origin is
/// not `stale` (after a reload, the old page's answers do not count).
pub(super) async fn wait_painted(
    client: &fantoccini::Client,
    stale: Option<f64>,
) -> anyhow::Result<Value> {
    let script = r#"
        const mark = performance.getEntriesByName('inbox:list-painted')[0];
        if (!mark) return null;
        const nav = performance.getEntriesByType('navigation')[0];
        const list = document.querySelector('[data-testid=pending-list]');
        const paint = performance.getEntriesByName('first-contentful-paint')[0];
        return {
            first_paint: paint ? performance.timeOrigin + paint.startTime : null,
            origin: performance.timeOrigin,
            painted: performance.timeOrigin + mark.startTime,
            loaded: nav ? performance.timeOrigin + nav.domContentLoadedEventEnd : null,
            count: list ? Number(list.dataset.count) : null,
        };
    "#;
    let started = Instant::now();
    loop {
        match client.execute(script, Vec::new()).await {
            Ok(Value::Null) | Err(_) => {}
            Ok(found) if found["origin"].as_f64() != stale => return Ok(found),
            Ok(_) => {}
        }
        anyhow::ensure!(
            started.elapsed() < START,
            "no inbox:list-painted mark within {START:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reloads the page in the running app and returns ms from the new page's time origin to
/// its painted list.
async fn reload(client: &fantoccini::Client, n: usize) -> anyhow::Result<f64> {
    let old = client
        .execute("return performance.timeOrigin", Vec::new())
        .await?
        .as_f64();
    // From a timer, so that the script returns before the page goes.
    client
        .execute("setTimeout(() => location.reload(), 0)", Vec::new())
        .await?;
    let marks = wait_painted(client, old).await?;
    anyhow::ensure!(
        marks["count"].as_f64() == Some(n as f64),
        "the reloaded list does not hold the {n} requests: {marks}"
    );
    let at = |key: &str| marks[key].as_f64().unwrap_or_default();
    Ok(at("painted") - at("origin"))
}

/// One launch of the app on `inbox` (`n` pending) through tauri-driver, with the keystroke
/// passes when `keystrokes`; everything started is stopped before it returns.
fn launch_once(
    bench: &DesktopBench,
    runtime: &tokio::runtime::Runtime,
    inbox: &Inbox,
    n: usize,
    keystrokes: bool,
) -> anyhow::Result<(Launch, Counts, Vec<Keystroke>)> {
    let scratch = Scratch::new("desktop-window")?;
    let dirs = AppDirs::create(scratch.dir.path());
    let log = dirs.logs().join("tauri-driver.log");
    let mut driver = Driver::start(&bench.session, &log, |cmd| {
        dirs.apply(cmd, &inbox.spool, &inbox.db, USER)
    });
    let result = runtime.block_on(one_run(&mut driver, &bench.app, n, keystrokes));
    driver.stop();
    result.with_context(|| {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        format!("tauri-driver's log:\n{log}")
    })
}

/// Diagnosis: what the app's `list_pending` command does for the first list, timed in this
/// process on the same inbox: what `inbox_app::Inbox::pending` does (the rows from SQLite
/// through a `Reader`, as views) and their JSON, which is what crosses the IPC bridge to the
/// page.
fn list_pending_alone(inbox: &Inbox, n: usize) -> anyhow::Result<()> {
    let reader = inbox_engine::Reader::open(&inbox.db)?;
    let (mut query, mut json, mut bytes) = (Vec::new(), Vec::new(), 0);
    for _ in 0..RUNS {
        let started = Instant::now();
        let rows: Vec<inbox_app::RowView> = reader
            .queries()
            .pending()?
            .iter()
            .map(inbox_app::RowView::of)
            .collect();
        query.push(started.elapsed());
        anyhow::ensure!(rows.len() == n, "{} rows, {n} expected", rows.len());
        let started = Instant::now();
        bytes = serde_json::to_vec(&rows)?.len();
        json.push(started.elapsed());
    }
    table(
        &[
            "(diagnosis) the first list's data, timed in this process",
            "runs",
            "median",
        ],
        &[
            vec![
                "`inbox_app::Inbox::pending`: the rows from SQLite, as views".into(),
                RUNS.to_string(),
                ms(median(&query)),
            ],
            vec![
                format!(
                    "the rows as JSON, as they cross to the page ({:.1} MB)",
                    bytes as f64 / 1e6
                ),
                RUNS.to_string(),
                ms(median(&json)),
            ],
        ],
    );
    Ok(())
}

/// One launch: session, painted list, then the keystrokes. Returns the launch figures, the
/// queries' counts and, in ms per timed keystroke, the times to the updated list, to the
/// rendered frame and to the second frame.
async fn one_run(
    driver: &mut Driver,
    app: &std::path::Path,
    n: usize,
    keystrokes: bool,
) -> anyhow::Result<(Launch, Counts, Vec<Keystroke>)> {
    driver
        .wait_listening(START)
        .await
        .map_err(anyhow::Error::msg)?;
    let launched = epoch_ms();
    let client = driver
        .connect(app, START)
        .await
        .map_err(anyhow::Error::msg)?;
    let session = epoch_ms() - launched;

    let marks = wait_painted(&client, None).await?;
    let number = |key: &str| marks[key].as_f64();
    anyhow::ensure!(
        number("count") == Some(n as f64),
        "the painted list does not hold the {n} requests: {marks}"
    );
    let mut launch = Launch {
        origin: number("origin").context("timeOrigin")? - launched,
        loaded: number("loaded").map(|at| at - launched),
        painted: number("painted").context("the mark")? - launched,
        first_paint: number("first_paint").map(|at| at - launched),
        session,
        ipc_round_trip: 0.0,
        reload: None,
    };

    let mut trips = Vec::new();
    for _ in 0..3 {
        let trip = client.execute_async(IPC_ROUND_TRIP, Vec::new()).await?;
        anyhow::ensure!(trip[1].as_u64() == Some(n as u64), "list_pending: {trip}");
        trips.push(from_ms(trip[0].as_f64().unwrap_or_default()));
    }
    launch.ipc_round_trip = median(&trips).as_secs_f64() * 1e3;
    if !keystrokes {
        launch.reload = Some(reload(&client, n).await?);
        let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
        return Ok((launch, Vec::new(), Vec::new()));
    }

    // The untimed pass: each query's count, and a warm page.
    let counts: Vec<usize> = serde_json::from_value(
        client
            .execute_async(KEYSTROKES, vec![json!(QUERIES.as_slice()), Value::Null])
            .await?,
    )
    .context("the untimed pass")?;
    let count_of = |query: &str| QUERIES.iter().position(|q| *q == query).map(|i| counts[i]);
    anyhow::ensure!(
        count_of("") == Some(n) && count_of("desk-004217") == Some(usize::from(n > 4217)),
        "the search does not filter as expected: {counts:?}"
    );
    // Only queries whose count differs from the one before (the last untimed one first).
    let mut previous = counts.last().copied();
    let mut seen: Counts = Vec::new();
    let mut timed: Vec<(&str, usize)> = Vec::new();
    for (query, &count) in QUERIES.iter().zip(&counts) {
        let differs = Some(count) != previous;
        if differs {
            timed.push((query, count));
            previous = Some(count);
        }
        seen.push((query, count, differs));
    }
    let (texts, expected): (Vec<&str>, Vec<usize>) = timed.into_iter().unzip();
    let result = client
        .execute_async(KEYSTROKES, vec![json!(texts), json!(expected)])
        .await?;
    let times: Vec<(f64, f64, f64)> = serde_json::from_value(result.clone())
        .with_context(|| format!("the timed pass: {result}"))?;
    let keys = expected
        .into_iter()
        .zip(times)
        .map(|(rows, (listed, rendered, framed))| Keystroke {
            rows,
            listed: from_ms(listed),
            rendered: from_ms(rendered),
            framed: from_ms(framed),
        })
        .collect();
    launch.reload = Some(reload(&client, n).await?);
    let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
    Ok((launch, seen, keys))
}

/// The UI's first fetch again, from the page: Tauri's IPC bridge (`__TAURI_INTERNALS__`,
/// which the UI's `invoke` wraps) calling `list_pending`, until the rows are JavaScript
/// objects. Returns [ms, rows].
const IPC_ROUND_TRIP: &str = r#"
    const done = arguments[arguments.length - 1];
    const start = performance.now();
    window.__TAURI_INTERNALS__.invoke('list_pending')
        .then((rows) => done([performance.now() - start, rows.length]))
        .catch((error) => done([null, String(error)]));
"#;

/// Types each of `arguments[0]` into the search box in turn. Without expected counts
/// (`arguments[1]` null) returns each query's count once two frames have passed; with them,
/// returns for each [ms to the updated list, ms to a task after the next frame's rendering,
/// ms to the second `requestAnimationFrame`].
const KEYSTROKES: &str = r#"
    const done = arguments[arguments.length - 1];
    const [queries, expected] = arguments;
    const input = document.querySelector('[data-testid=search]');
    const count = () => {
        const list = document.querySelector('[data-testid=pending-list]');
        return list ? list.dataset.count : null;
    };
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
    // Resolves as soon as the list shows `want` rows: checked now, then after every DOM
    // change (observer callbacks run as microtasks, right after the UI's update).
    const shows = (want) => new Promise((resolve) => {
        if (count() === want) return resolve();
        const observer = new MutationObserver(() => {
            if (count() === want) {
                observer.disconnect();
                resolve();
            }
        });
        observer.observe(document.body, {
            subtree: true, childList: true, attributes: true, attributeFilter: ['data-count'],
        });
    });
    // A task after the next frame's rendering: the frame that shows the update is done.
    const rendered = () => new Promise((resolve) =>
        requestAnimationFrame(() => setTimeout(resolve, 0)));
    const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    (async () => {
        const out = [];
        for (let i = 0; i < queries.length; i++) {
            await frame();
            await frame();
            // Keys come at any point of a frame: spread the starts over 0-16 ms after one.
            await pause((i * 7) % 17);
            const start = performance.now();
            input.value = queries[i];
            input.dispatchEvent(new Event('input', { bubbles: true }));
            if (!expected) {
                await frame();
                await frame();
                out.push(Number(count()));
                continue;
            }
            await shows(String(expected[i]));
            void document.querySelector('[data-testid=pending-list]').offsetHeight;
            const listed = performance.now() - start;
            await rendered();
            const shown = performance.now() - start;
            await frame();
            out.push([listed, shown, performance.now() - start]);
        }
        done(out);
    })().catch((error) => done({ error: String(error) }));
"#;

/// About 50 searches as an operator types them, over the titles and sources of
/// [`crate::fixtures::varied_request`]: words typed letter by letter, ids narrowed to one
/// request, a run, a source app, a search matching nothing, and the box cleared back to all.
const QUERIES: [&str; 51] = [
    "a",
    "ap",
    "app",
    "appr",
    "approve",
    "approve b",
    "approve bi",
    "approve bil",
    "approve billing",
    "",
    "m",
    "mi",
    "mig",
    "migrate",
    "migrate c",
    "migrate crush",
    "",
    "desk-00",
    "desk-004",
    "desk-0042",
    "desk-00421",
    "desk-004217",
    "desk-00421",
    "desk-0042",
    "",
    "run-1",
    "run-12",
    "run-123",
    "run-12",
    "",
    "ops",
    "ops-pipeline",
    "ops-pipeline rotate",
    "ops-pipeline rotate auth",
    "",
    "s",
    "se",
    "sea",
    "search",
    "search i",
    "search index",
    "search index release",
    "",
    "zzz",
    "",
    "payments",
    "payments deploy",
    "",
    "docs",
    "docs site planu",
    "",
];
