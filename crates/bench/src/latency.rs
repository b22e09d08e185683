//! 1. Ingest latency: a request renamed into `questions/` until its row is committed and
//! `Event::Ingested` is received, next to a bare `notify` watcher's event latency.
//!
//! Drops are sequential and interleaved (one to the bare watcher, one to the engine, ...), so
//! both sides see the same machine load. Each file is written in an unwatched `tmp/` first and
//! the clock starts just before the `rename` that places it, as an asker places a request.

use std::fs;
use std::time::{Duration, Instant};

use inbox_engine::{Area, Event};

use crate::fixtures::{self, Staged};
use crate::harness::{BareWatcher, RunningEngine, Scratch};
use crate::stats::{ms, ratio, table, verdict, Summary};

pub const DEFAULT_N: usize = 1000;
/// Drops before the measured ones (first inotify use, SQLite page cache, statement cache).
const WARMUP: usize = 20;

pub fn run(n: usize) -> anyhow::Result<()> {
    println!("## 1. Ingest latency ({n} sequential drops)\n");

    let bare_dirs = Scratch::new("latency-bare")?;
    let (watched, staging) = (bare_dirs.path("watched"), bare_dirs.path("tmp"));
    fs::create_dir_all(&watched)?;
    fs::create_dir_all(&staging)?;
    let bare = BareWatcher::watch(std::slice::from_ref(&watched))?;

    let engine_dirs = Scratch::new("latency-engine")?;
    let mut engine = RunningEngine::start(&engine_dirs.spool_dir(), &engine_dirs.db())?;
    let tmp = engine.spool.tmp_dir();

    let mut bare_samples = Vec::with_capacity(n);
    let mut engine_samples = Vec::with_capacity(n);
    for i in 0..WARMUP + n {
        let id = fixtures::id("lat", i);
        let body = fixtures::interactive_request(&id);

        let staged = Staged::write(&staging, watched.join(format!("{id}.json")), &body)?;
        bare.drain();
        let started = Instant::now();
        staged.place()?;
        let seen = bare.wait_for(&staged.to)?;
        let bare_latency = seen.saturating_duration_since(started);

        let staged = Staged::write(&tmp, engine.spool.path(Area::Questions, &id), &body)?;
        let started = Instant::now();
        staged.place()?;
        let ingested =
            engine.wait_for(|e| matches!(e, Event::Ingested { id: got, .. } if *got == id))?;
        let engine_latency = ingested - started;
        // The loop's iteration ends with the operator notification: wait for it, so the next
        // drop meets an idle engine, as a drop some time later would.
        engine.wait_for(|e| matches!(e, Event::Notified { ids } if ids.contains(&id)))?;

        if i >= WARMUP {
            bare_samples.push(bare_latency);
            engine_samples.push(engine_latency);
        }
    }
    engine.stop()?;

    report(&Summary::of(&bare_samples), &Summary::of(&engine_samples));
    Ok(())
}

fn report(bare: &Summary, engine: &Summary) {
    table(
        &["side", "drops", "p50", "p99", "max"],
        &[
            row("bare `notify` watcher: rename → event callback", bare),
            row(
                "engine: rename → row committed, `Event::Ingested` received",
                engine,
            ),
        ],
    );
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

fn row(label: &str, summary: &Summary) -> Vec<String> {
    vec![
        label.into(),
        summary.n.to_string(),
        ms(summary.p50),
        ms(summary.p99),
        ms(summary.max),
    ]
}
