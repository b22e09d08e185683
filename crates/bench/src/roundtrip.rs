//! Benchmark 4, autonomous round trip and `ask --wait` wake-up, next to the bare watcher.
//!
//! (a) The engine loop runs. An autonomous request whose questions all have defaults is
//! renamed into `questions/`; the round trip ends when `answers/<id>.json` exists, as seen by
//! a bare watcher on `questions/` and `answers/`. The same watcher's event for the request
//! itself is the bare latency of the same drop.
//!
//! (b) No engine. `inbox_client::Asker::wait` (what `ask --wait` runs) waits on its own thread; then
//! `Spool::write_outcome` places the outcome (temp file, fsync, link, directory fsync). The
//! wake-up ends when the wait has returned the parsed outcome; a bare watcher on `answers/`
//! times the same placement.

use std::time::{Duration, Instant};

use inbox_client::{AskOptions, Asker, Reply};
use inbox_engine::{Area, Event, Placed, Spool};

use crate::fixtures::{self, Staged};
use crate::harness::{BareWatcher, RunningEngine, Scratch, PATIENCE};
use crate::stats::{ms, table, Summary};

pub const DEFAULT_N: usize = 200;
const WARMUP: usize = 10;
/// Idle time between sequential drops, so each one meets a settled engine.
const GAP: Duration = Duration::from_millis(2);
/// Time given to the waiting thread to set up its watcher before the outcome is placed.
const WAITER_SETUP: Duration = Duration::from_millis(20);

pub fn run(n: usize) -> anyhow::Result<()> {
    println!("## 4. Autonomous round trip and `ask --wait` wake-up ({n} sequential drops each)\n");
    let (bare_a, round_trip, settled) = autonomous(n)?;
    let (bare_b, wake_up, writing) = wake_up(n)?;
    table(
        &["measure", "samples", "p50", "p99", "max"],
        &[
            Summary::row("(a) bare watcher: request rename → event", &bare_a),
            Summary::row(
                "(a) round trip: request rename → `defaulted` outcome on disk (watcher event)",
                &round_trip,
            ),
            Summary::row(
                "(a) for reference: request rename → `Event::Settled` received",
                &settled,
            ),
            Summary::row(
                "(b) bare watcher: `write_outcome` called → outcome event",
                &bare_b,
            ),
            Summary::row(
                "(b) `ask --wait` wake-up: `write_outcome` called → `Asker::wait` returned",
                &wake_up,
            ),
            Summary::row(
                "(b) for reference: the `write_outcome` call itself (2 fsyncs)",
                &writing,
            ),
        ],
    );
    println!(
        "No numeric target: the issue asks for these next to the bare watcher. Engine share of \
         the round trip (p50 round trip − p50 bare): {}; the wait's share of the wake-up \
         (p50 wake-up − p50 bare): {}.\n",
        ms(round_trip.p50.saturating_sub(bare_a.p50)),
        ms(wake_up.p50.saturating_sub(bare_b.p50)),
    );
    Ok(())
}

fn autonomous(n: usize) -> anyhow::Result<(Summary, Summary, Summary)> {
    let dirs = Scratch::new("roundtrip")?;
    let mut engine = RunningEngine::start(&dirs.spool_dir(), &dirs.db())?;
    let spool = engine.spool.clone();
    let bare = BareWatcher::watch(&[spool.dir(Area::Questions), spool.dir(Area::Answers)])?;
    let (mut bare_samples, mut trips, mut settles) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARMUP + n {
        let id = fixtures::id("auto", i);
        let staged = Staged::write(
            &spool.tmp_dir(),
            spool.path(Area::Questions, &id),
            &fixtures::autonomous_request(&id),
        )?;
        bare.drain();
        let started = Instant::now();
        staged.place()?;
        let request_seen = bare.wait_for(&staged.to)?;
        let outcome_seen = bare.wait_for(&spool.path(Area::Answers, &id))?;
        let settled = engine.wait_for(|e| {
            matches!(e, Event::Settled { id: got, answered_by, .. }
                if *got == id && answered_by == "policy:rule:file-askers")
        })?;
        if i >= WARMUP {
            bare_samples.push(request_seen - started);
            trips.push(outcome_seen - started);
            settles.push(settled - started);
        }
        std::thread::sleep(GAP);
    }
    engine.stop()?;
    Ok((
        Summary::of(&bare_samples),
        Summary::of(&trips),
        Summary::of(&settles),
    ))
}

fn wake_up(n: usize) -> anyhow::Result<(Summary, Summary, Summary)> {
    let dirs = Scratch::new("wakeup")?;
    let spool = Spool::open(dirs.spool_dir())?;
    let bare = BareWatcher::watch(&[spool.dir(Area::Answers)])?;
    let (mut bare_samples, mut wakes, mut writes) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARMUP + n {
        let id = fixtures::id("wait", i);
        let waiter = {
            let (asker, id) = (Asker::from_spool(spool.clone()), id.clone());
            std::thread::spawn(move || {
                let waited = asker.wait(&id, &AskOptions::default().with_timeout(PATIENCE));
                (Instant::now(), waited)
            })
        };
        std::thread::sleep(WAITER_SETUP);
        anyhow::ensure!(
            !waiter.is_finished(),
            "the wait returned before the outcome"
        );
        let bytes = fixtures::answered_outcome(&id);
        bare.drain();
        let started = Instant::now();
        let placed = spool.write_outcome(&id, &bytes)?;
        let written = Instant::now();
        anyhow::ensure!(placed == Placed::Written, "outcome of {id} already there");
        let seen = bare.wait_for(&spool.path(Area::Answers, &id))?;
        let (returned, waited) = waiter
            .join()
            .map_err(|_| anyhow::anyhow!("the waiting thread panicked"))?;
        match waited? {
            Reply::Settled(outcome) if outcome.id == id => {}
            other => anyhow::bail!("the wait for {id} ended with {other:?}"),
        }
        if i >= WARMUP {
            bare_samples.push(seen - started);
            wakes.push(returned - started);
            writes.push(written - started);
        }
    }
    Ok((
        Summary::of(&bare_samples),
        Summary::of(&wakes),
        Summary::of(&writes),
    ))
}
