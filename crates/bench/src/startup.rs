//! Benchmark 3, start-up over a spool of N settled requests whose database already knows
//! them: time to ready, next to a plain listing of the spool's directories.
//!
//! The listing is the least any start-up that looks at the spool must do. Time to ready is
//! what `inbox_engine::run` does before it can emit `Ready`, minus the watcher: open the
//! store, open the spool, `Engine::new`, `Engine::sync`. The full `run` until `Event::Ready`
//! (with the inotify watcher and the post-scan policy steps) is measured too. Rounds are
//! interleaved; medians count. The page cache is warm for both sides.

use std::ffi::OsString;
use std::fs;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use inbox_engine::watcher::watch_spool;
use inbox_engine::{Area, Engine, Event, Spool, Store, Wake, WatchOptions};

use crate::fixtures;
use crate::harness::{check_not_broken, RunningEngine, Scratch};
use crate::stats::{median, ms, per_second, ratio, table, thousands, verdict};

pub const DEFAULT_N: usize = 100_000;
const ROUNDS: usize = 7;

pub fn run(n: usize) -> anyhow::Result<()> {
    println!("## 3. Start-up over {n} settled requests ({ROUNDS} rounds, medians)\n");
    let dirs = Scratch::new("startup")?;
    let spool = Spool::open(dirs.spool_dir())?;

    eprintln!("startup: writing {n} requests and their outcomes");
    let started = Instant::now();
    for i in 0..n {
        let id = fixtures::id("settled", i);
        fs::write(
            spool.path(Area::Questions, &id),
            fixtures::interactive_request(&id),
        )?;
        fs::write(
            spool.path(Area::Answers, &id),
            fixtures::answered_outcome(&id),
        )?;
    }
    let placing = started.elapsed();

    eprintln!("startup: first sync (builds the database)");
    let (events_tx, events) = unbounded();
    let started = Instant::now();
    let mut engine = Engine::new(spool.clone(), Store::open(&dirs.db())?)?.with_events(events_tx);
    engine.sync()?;
    let building = started.elapsed();
    drop(engine);
    let (mut ingested, mut settled) = (0, 0);
    for event in events.try_iter() {
        check_not_broken(&event)?;
        match event {
            Event::Ingested { .. } => ingested += 1,
            Event::Settled { .. } => settled += 1,
            _ => {}
        }
    }
    anyhow::ensure!(
        ingested == n && settled == n,
        "the first sync ingested {ingested} and settled {settled} of {n}"
    );

    let mut listings = Vec::new();
    let mut readies = Vec::new();
    let mut runs = Vec::new();
    let mut reparsed = 0;
    let mut breakdown = Breakdown::default();
    // Round 0 warms caches and is not counted.
    for round in 0..=ROUNDS {
        eprintln!("startup: round {round}/{ROUNDS}");
        let listing = list(&spool, 2 * n)?;
        let (ready, events) = time_to_ready(&dirs)?;
        let running = RunningEngine::start(&dirs.spool_dir(), &dirs.db())?;
        let full_run = running.time_to_ready;
        let events_before_ready = running.events_before_ready;
        running.stop()?;
        breakdown.measure(&dirs)?;
        if round > 0 {
            listings.push(listing);
            readies.push(ready);
            runs.push(full_run);
            reparsed += events + events_before_ready;
        }
    }

    let (listing, ready, full_run) = (median(&listings), median(&readies), median(&runs));
    table(
        &["measure", "median", "min", "max"],
        &[
            span(
                "plain listing: `read_dir` of questions/, answers/, cancel/ collecting names",
                &listings,
            ),
            span(
                "time to ready: `Store::open` + `Spool::open` + `Engine::new` + `Engine::sync`",
                &readies,
            ),
            span(
                "full `inbox_engine::run` until `Event::Ready` (adds the watcher and policies)",
                &runs,
            ),
        ],
    );
    table(
        &["time-to-ready breakdown (medians)", "time"],
        &[
            vec![
                "`Store::open` (+ migrations check)".into(),
                ms(median(&breakdown.open)),
            ],
            vec![
                "`Engine::new` (instance id)".into(),
                ms(median(&breakdown.new)),
            ],
            vec![
                "`Spool::scan` (listing + name checks)".into(),
                ms(median(&breakdown.scan)),
            ],
            vec![
                "`Store::known` (ids and states from SQLite)".into(),
                ms(median(&breakdown.known)),
            ],
            vec![
                "`Engine::sync` as a whole (the above two, the transaction, reaping tmp/)".into(),
                ms(median(&breakdown.sync)),
            ],
            vec![
                "`run` only: `watch_spool` (inotify on the three directories)".into(),
                ms(median(&breakdown.watch)),
            ],
            vec![
                "`run` only: its first turn, `Wake::Start` (a sync as above, then autonomous, expiry, notify), and the pending count".into(),
                ms(median(&breakdown.after_scan)),
            ],
        ],
    );
    println!(
        "Setup, not measured against a target: placing {} files took {}; the first sync that \
         built the database read and parsed them at {} requests/s ({}).\n",
        thousands(2.0 * n as f64),
        ms(placing),
        thousands(per_second(n, building)),
        ms(building),
    );
    let sync_ratio = ratio(ready, listing);
    let run_ratio = ratio(full_run, listing);
    table(
        &["target", "measured", "verdict"],
        &[
            vec![
                "time to ready ≤ 3× plain listing".into(),
                format!(
                    "{sync_ratio:.2}× ({} vs {}); full `run` until `Ready`: {run_ratio:.2}×",
                    ms(ready),
                    ms(listing)
                ),
                verdict(sync_ratio <= 3.0).into(),
            ],
            vec![
                "files already known are not parsed again".into(),
                format!(
                    "{reparsed} events from {} re-syncs and runs over {n} known requests",
                    2 * ROUNDS
                ),
                verdict(reparsed == 0).into(),
            ],
        ],
    );
    Ok(())
}

/// Lists the three directories as plainly as possible.
fn list(spool: &Spool, expected: usize) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut names: Vec<OsString> = Vec::with_capacity(expected);
    for area in [Area::Questions, Area::Answers, Area::Cancel] {
        for entry in fs::read_dir(spool.dir(area))? {
            names.push(entry?.file_name());
        }
    }
    let elapsed = started.elapsed();
    anyhow::ensure!(
        names.len() == expected,
        "listed {} names, expected {expected}",
        names.len()
    );
    Ok(elapsed)
}

/// Opens everything fresh and syncs; returns the time and how many events the sync emitted.
fn time_to_ready(dirs: &Scratch) -> anyhow::Result<(Duration, usize)> {
    let (events_tx, events) = unbounded();
    let started = Instant::now();
    let store = Store::open(&dirs.db())?;
    let spool = Spool::open(dirs.spool_dir())?;
    let mut engine = Engine::new(spool, store)?.with_events(events_tx);
    engine.sync()?;
    let elapsed = started.elapsed();
    drop(engine);
    Ok((elapsed, events.try_iter().count()))
}

/// Where time to ready goes, step by step (diagnosis only).
#[derive(Default)]
struct Breakdown {
    open: Vec<Duration>,
    new: Vec<Duration>,
    scan: Vec<Duration>,
    known: Vec<Duration>,
    sync: Vec<Duration>,
    watch: Vec<Duration>,
    after_scan: Vec<Duration>,
}

impl Breakdown {
    fn measure(&mut self, dirs: &Scratch) -> anyhow::Result<()> {
        let started = Instant::now();
        let store = Store::open(&dirs.db())?;
        let spool = Spool::open(dirs.spool_dir())?;
        self.open.push(started.elapsed());
        let started = Instant::now();
        let mut engine = Engine::new(spool, store)?;
        self.new.push(started.elapsed());
        let started = Instant::now();
        let listing = engine.spool().scan()?;
        self.scan.push(started.elapsed());
        let started = Instant::now();
        let known = engine.queries().known()?;
        self.known.push(started.elapsed());
        anyhow::ensure!(known.len() == listing.requests.len());
        let started = Instant::now();
        engine.sync()?;
        self.sync.push(started.elapsed());

        let (hints, _unused) = unbounded();
        let started = Instant::now();
        let watcher = watch_spool(engine.spool(), &WatchOptions::default(), hints)?;
        self.watch.push(started.elapsed());
        drop(watcher);

        // What else `run` does before `Ready`: its first turn. `Wake::Start` syncs again
        // (the spool may have changed while the watch was being set up), so this row holds
        // one more sync; `run` until `Ready` is about the watch plus this turn.
        let started = Instant::now();
        engine.turn(Wake::Start)?;
        let pending = engine.queries().pending_count()?;
        self.after_scan.push(started.elapsed());
        anyhow::ensure!(pending == 0, "{pending} requests still pending");
        Ok(())
    }
}

fn span(label: &str, samples: &[Duration]) -> Vec<String> {
    vec![
        label.into(),
        ms(median(samples)),
        ms(*samples.iter().min().expect("samples")),
        ms(*samples.iter().max().expect("samples")),
    ]
}
