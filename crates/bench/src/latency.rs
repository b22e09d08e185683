//! Benchmark 1, ingest latency: a request renamed into `questions/` until its row is
//! committed and `Event::Ingested` is received, next to a bare `notify` watcher's event
//! latency.
//!
//! Drops are sequential and interleaved (one to the bare watcher, one to the engine, ...), so
//! both sides see the same machine load. Each file is written in an unwatched `tmp/` first and
//! the clock starts just before the `rename` that places it, as an asker places a request.
//!
//! The bare watcher is timed twice: in its callback (the earliest moment any code can know)
//! and when the benchmark thread receives the event over a channel, which is where the
//! engine's `Event` is received too; the latter is the like-for-like baseline. For
//! diagnosis, the engine's work alone is timed as well: `Engine::turn(Wake::Paths)` on a renamed
//! file, called directly on this thread (no watcher, no thread hops), and `parse_request`.

use std::fs;
use std::time::{Duration, Instant};

use inbox_engine::{Area, Engine, Event, Spool, Store, Wake};
use inbox_protocol::parse_request;

use crate::fixtures::{self, Staged};
use crate::harness::{BareWatcher, RunningEngine, Scratch};
use crate::stats::{ms, ratio, table, verdict, Summary};

pub const DEFAULT_N: usize = 1000;
/// Drops before the measured ones (first inotify use, SQLite page cache, statement cache).
const WARMUP: usize = 20;

#[derive(Default)]
struct Samples {
    bare_callback: Vec<Duration>,
    bare_received: Vec<Duration>,
    engine: Vec<Duration>,
    work: Vec<Duration>,
    parse: Vec<Duration>,
}

pub fn run(n: usize) -> anyhow::Result<()> {
    println!("## 1. Ingest latency ({n} sequential drops)\n");

    let bare_dirs = Scratch::new("latency-bare")?;
    let (watched, staging) = (bare_dirs.path("watched"), bare_dirs.path("tmp"));
    fs::create_dir_all(&watched)?;
    fs::create_dir_all(&staging)?;
    let bare = BareWatcher::watch(std::slice::from_ref(&watched))?;

    let engine_dirs = Scratch::new("latency-engine")?;
    let mut engine = RunningEngine::start(&engine_dirs.spool_dir(), &engine_dirs.db())?;

    let direct_dirs = Scratch::new("latency-direct")?;
    let direct_spool = Spool::open(direct_dirs.spool_dir())?;
    let mut direct = Engine::new(direct_spool.clone(), Store::open(&direct_dirs.db())?)?;

    let mut samples = Samples::default();
    for i in 0..WARMUP + n {
        let id = fixtures::id("lat", i);
        let body = fixtures::interactive_request(&id);

        // The baseline.
        let staged = Staged::write(&staging, watched.join(format!("{id}.json")), &body)?;
        bare.drain();
        let bare_started = Instant::now();
        staged.place()?;
        let (callback, received) = bare.wait_for_both(&staged.to)?;

        // The engine's loop.
        let engine_latency = engine_drop(&mut engine, &id, &body)?;

        // Diagnosis: the same work without the watcher and the threads.
        let staged = Staged::write(
            &direct_spool.tmp_dir(),
            direct_spool.path(Area::Questions, &id),
            &body,
        )?;
        staged.place()?;
        let work_started = Instant::now();
        direct.turn(Wake::Paths(vec![staged.to.clone()]))?;
        let work = work_started.elapsed();
        let parse_started = Instant::now();
        let parsed = parse_request(&body, Some(&id));
        let parse = parse_started.elapsed();
        anyhow::ensure!(parsed.is_ok(), "the fixture does not parse");

        if i >= WARMUP {
            samples.bare_callback.push(callback - bare_started);
            samples.bare_received.push(received - bare_started);
            samples.engine.push(engine_latency);
            samples.work.push(work);
            samples.parse.push(parse);
        }
    }
    engine.stop()?;
    anyhow::ensure!(
        direct.queries().pending_count()? == WARMUP + n,
        "the direct engine did not ingest every drop"
    );

    let bare = Summary::of(&samples.bare_received);
    let engine = Summary::of(&samples.engine);
    table(
        &["side", "drops", "p50", "p99", "max"],
        &[
            Summary::row(
                "bare `notify` watcher: rename → event received by the consumer thread",
                &bare,
            ),
            Summary::row(
                "engine: rename → row committed, `Event::Ingested` received",
                &engine,
            ),
            Summary::row(
                "(reference) bare watcher: rename → its callback runs",
                &Summary::of(&samples.bare_callback),
            ),
            Summary::row(
                "(diagnosis) engine work alone: `Engine::turn(Wake::Paths)` on this thread",
                &Summary::of(&samples.work),
            ),
            Summary::row(
                "(diagnosis) of which `parse_request` of the body",
                &Summary::of(&samples.parse),
            ),
        ],
    );
    targets(&bare, &engine);
    Ok(())
}

/// One drop into the running engine: `body` renamed into `questions/` as `id`, timed until
/// `Event::Ingested` for it is received. Returns once the loop's iteration has ended too.
pub fn engine_drop(engine: &mut RunningEngine, id: &str, body: &[u8]) -> anyhow::Result<Duration> {
    let staged = Staged::write(
        &engine.spool.tmp_dir(),
        engine.spool.path(Area::Questions, id),
        body,
    )?;
    let started = Instant::now();
    staged.place()?;
    let ingested =
        engine.wait_for(|e| matches!(e, Event::Ingested { id: got, .. } if got == id))?;
    // The loop's turn ends with the notices: wait for them (the benchmarks' notifier reports
    // them as `Notified`, see harness::EndOfTurn), so the next drop meets an idle engine, as
    // a drop some time later would.
    engine.wait_for(|e| matches!(e, Event::Notified { ids, .. } if ids.iter().any(|i| i == id)))?;
    Ok(ingested - started)
}

fn targets(bare: &Summary, engine: &Summary) {
    let p50_ratio = ratio(engine.p50, bare.p50);
    let p99_limit = Duration::from_millis(20);
    table(
        &["target", "measured", "verdict"],
        &[
            vec![
                "engine p50 ≤ 2× bare p50".into(),
                format!("{p50_ratio:.2}× ({} vs {})", ms(engine.p50), ms(bare.p50)),
                verdict(p50_ratio <= 2.0).into(),
            ],
            vec![
                "engine p99 < 20 ms".into(),
                ms(engine.p99),
                verdict(engine.p99 < p99_limit).into(),
            ],
        ],
    );
}
