//! Benchmark 2, burst: N requests placed at once, files/s until all are ingested, next to
//! the same read + parse + validate + insert loop without a watcher.
//!
//! The loop without a watcher is `Engine::sync` on a spool whose N files were there before the
//! engine opened: one directory listing, then exactly the per-file work (read, parse,
//! validate, insert, in one transaction). The watcher side runs `inbox_engine::run` on an
//! empty spool; the N files are written to `tmp/` first and then renamed into `questions/`
//! as fast as one thread can; the clock runs from the first rename to the N-th
//! `Event::Ingested`. Rounds alternate between the two sides; the median round counts.
//!
//! For diagnosis, each round also times what the loop does beyond `sync`, on this thread and
//! without a watcher: the notices after the sync (the loop sends them after every
//! batch), and `Engine::turn(Wake::Paths)` over the N paths (the loop's
//! own work for one batch of N, minus the watcher thread and the renaming).

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use inbox_engine::{Area, Engine, Event, Spool, Store, Wake};

use crate::fixtures::{self, Staged};
use crate::harness::{check_not_broken, RunningEngine, Scratch, ThreadTimes};
use crate::stats::{median, ms, per_second, table, thousands, verdict};

pub const DEFAULT_N: usize = 10_000;
const ROUNDS: usize = 5;

/// One round of both sides.
struct Round {
    /// `Engine::sync` over the N files.
    sync: Duration,
    /// The notices right after that sync.
    notify: Duration,
    /// `Engine::turn(Wake::Paths)` over the N paths, on a fresh store.
    paths: Duration,
    /// First rename to the N-th `Ingested`, with the engine loop running.
    watched: Duration,
    /// How long the N renames themselves took.
    renaming: Duration,
    /// Loop iterations that ingested something (one `Notified` each).
    batches: usize,
    /// The engine thread's CPU time and run-queue wait during the burst.
    engine_thread: Option<ThreadTimes>,
}

pub fn run(n: usize) -> anyhow::Result<()> {
    println!("## 2. Burst ({n} requests placed at once, {ROUNDS} rounds)\n");
    let mut rounds = Vec::new();
    for round in 1..=ROUNDS {
        eprintln!("burst: round {round}/{ROUNDS}");
        let (sync, notify) = without_watcher(n)?;
        let paths = handle_paths_directly(n)?;
        let burst = with_watcher(n)?;
        rounds.push(Round {
            sync,
            notify,
            paths,
            ..burst
        });
    }

    let rate = |d: Duration| format!("{} files/s ({})", thousands(per_second(n, d)), ms(d));
    let mut rows: Vec<Vec<String>> = rounds
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                (i + 1).to_string(),
                rate(r.sync),
                rate(r.watched),
                ms(r.notify),
                rate(r.paths),
                ms(r.renaming),
                r.batches.to_string(),
                thread_times(r.engine_thread),
            ]
        })
        .collect();
    let median_of =
        |field: fn(&Round) -> Duration| median(&rounds.iter().map(field).collect::<Vec<_>>());
    let (sync, watched) = (median_of(|r| r.sync), median_of(|r| r.watched));
    rows.push(vec![
        "**median**".into(),
        format!("**{}**", rate(sync)),
        format!("**{}**", rate(watched)),
        ms(median_of(|r| r.notify)),
        rate(median_of(|r| r.paths)),
        ms(median_of(|r| r.renaming)),
        String::new(),
        String::new(),
    ]);
    table(
        &[
            "round",
            "loop without watcher: `Engine::sync`",
            "engine loop with watcher: first rename → N-th `Ingested`",
            "(diagnosis) the notices after the sync",
            "(diagnosis) `turn(Wake::Paths)` over N paths, no watcher",
            "(diagnosis) renaming N files took",
            "(diagnosis) engine batches",
            "(diagnosis) engine thread during the burst: on CPU / waiting for a CPU",
        ],
        &rows,
    );

    let (sync_rate, watched_rate) = (per_second(n, sync), per_second(n, watched));
    let share = watched_rate / sync_rate;
    table(
        &["target", "measured", "verdict"],
        &[
            vec![
                "with watcher ≥ 70% of the loop".into(),
                format!(
                    "{:.0}% ({} vs {} files/s)",
                    share * 100.0,
                    thousands(watched_rate),
                    thousands(sync_rate)
                ),
                verdict(share >= 0.7).into(),
            ],
            vec![
                "with watcher ≥ 5,000 files/s".into(),
                format!("{} files/s", thousands(watched_rate)),
                verdict(watched_rate >= 5000.0).into(),
            ],
        ],
    );
    Ok(())
}

/// A spool holding N requests in `questions/`, written directly (placement is not measured).
fn filled_spool(dirs: &Scratch, n: usize) -> anyhow::Result<(Spool, Vec<PathBuf>)> {
    let spool = Spool::open(dirs.spool_dir())?;
    let mut paths = Vec::with_capacity(n);
    for i in 0..n {
        let id = fixtures::id("burst", i);
        let path = spool.path(Area::Questions, &id);
        fs::write(&path, fixtures::interactive_request(&id))?;
        paths.push(path);
    }
    Ok((spool, paths))
}

/// `Engine::sync` over N files placed before the engine opened, then a turn with nothing new
/// (the notices the loop sends after every batch).
fn without_watcher(n: usize) -> anyhow::Result<(Duration, Duration)> {
    let dirs = Scratch::new("burst-loop")?;
    let (spool, _) = filled_spool(&dirs, n)?;
    let (events_tx, events) = unbounded();
    let mut engine = Engine::new(spool, Store::open(&dirs.db())?)?.with_events(events_tx);

    let started = Instant::now();
    engine.sync()?;
    let sync = started.elapsed();
    let started = Instant::now();
    engine.turn(Wake::RetryUnwritten)?;
    let notify = started.elapsed();

    let mut ingested = 0;
    for event in events.try_iter() {
        check_not_broken(&event)?;
        ingested += matches!(event, Event::Ingested { .. }) as usize;
    }
    anyhow::ensure!(ingested == n, "sync ingested {ingested} of {n} requests");
    Ok((sync, notify))
}

/// The loop's work for one batch of N paths, called directly: no watcher, no other thread.
fn handle_paths_directly(n: usize) -> anyhow::Result<Duration> {
    let dirs = Scratch::new("burst-paths")?;
    let (spool, paths) = filled_spool(&dirs, n)?;
    let (events_tx, events) = unbounded();
    let mut engine = Engine::new(spool, Store::open(&dirs.db())?)?.with_events(events_tx);

    let started = Instant::now();
    engine.turn(Wake::Paths(paths))?;
    let elapsed = started.elapsed();

    let ingested = events
        .try_iter()
        .filter(|e| matches!(e, Event::Ingested { .. }))
        .count();
    anyhow::ensure!(ingested == n, "the turn ingested {ingested} of {n}");
    Ok(elapsed)
}

fn thread_times(times: Option<ThreadTimes>) -> String {
    match times {
        Some(t) => format!("{} / {}", ms(t.on_cpu), ms(t.waiting)),
        None => "n/a".into(),
    }
}

/// The engine loop on an empty spool, then N renames at once (fills the watcher fields).
fn with_watcher(n: usize) -> anyhow::Result<Round> {
    let dirs = Scratch::new("burst-watch")?;
    let mut engine = RunningEngine::start(&dirs.spool_dir(), &dirs.db())?;
    let tmp = engine.spool.tmp_dir();
    let staged = (0..n)
        .map(|i| {
            let id = fixtures::id("burst", i);
            let body = fixtures::interactive_request(&id);
            Staged::write(&tmp, engine.spool.path(Area::Questions, &id), &body)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;

    let before = engine.thread_times();
    let started = Instant::now();
    for file in &staged {
        file.place()?;
    }
    let renaming = started.elapsed();

    let (mut ingested, mut batches) = (0, 0);
    let (mut done, mut after) = (started, None);
    while ingested < n {
        let event = engine.next_event()?;
        check_not_broken(&event)?;
        match event {
            Event::Ingested { .. } => {
                ingested += 1;
                if ingested == n {
                    done = Instant::now();
                    after = engine.thread_times();
                }
            }
            Event::Notified { .. } => batches += 1,
            _ => {}
        }
    }
    // The last batch's notification follows its ingests.
    engine.wait_for(|e| matches!(e, Event::Notified { .. }))?;
    batches += 1;
    engine.stop()?;
    Ok(Round {
        sync: Duration::ZERO,
        notify: Duration::ZERO,
        paths: Duration::ZERO,
        watched: done - started,
        renaming,
        batches,
        engine_thread: after.zip(before).map(|(after, before)| after - before),
    })
}
