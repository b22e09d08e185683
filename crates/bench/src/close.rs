//! `inbox-bench notify-close [N=30]`: a request settled elsewhere → its desktop bubble
//! closed (issue 24, "never stale"). The CLI daemon (`answer-inbox watch`, next to this
//! binary) runs in a private desktop session with dunst (inbox-harness's `Session`); each
//! request is placed, its bubble waited for, and then answered by another instance (the
//! same binary with a database of its own, as a second machine on a shared spool would):
//! the daemon sees the outcome file, records the request settled, and its notifier closes
//! the bubble. Measured from the outcome file's modification time (the wall clock at its
//! write) to dbus-monitor's stamp of the `CloseNotification` call (the same wall clock).
//! Requests are placed one second apart, past the notifier's quiet window, so that each
//! has a bubble of its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, UNIX_EPOCH};

use anyhow::Context;
use inbox_engine::notifier::MIN_GAP;
use inbox_harness::desktop::AppDirs;
use inbox_harness::process::Running;
use inbox_harness::session::Session;

use crate::fixtures::{self, Staged};
use crate::harness::Scratch;
use crate::stats::{ms, percentile, table};

pub const DEFAULT_N: usize = 30;
/// Requests before the measured ones (dunst's first window; the daemon's first close).
const WARMUP: usize = 2;
/// From one request's placing to the next one's.
const SPACING: Duration = Duration::from_secs(1);
/// How long a bubble, or its closing, may take before the run stops.
const PATIENCE: Duration = Duration::from_secs(10);

pub fn run(n: usize) -> anyhow::Result<()> {
    println!(
        "## Settled elsewhere → bubble closed, CLI daemon ({n} requests, placed {} s apart)\n",
        SPACING.as_secs_f64()
    );
    anyhow::ensure!(SPACING > MIN_GAP, "the spacing must exceed the bubble gap");
    let binary = sibling("answer-inbox")?;
    let scratch = Scratch::new("notify-close")?;
    let session = Session::start(&scratch.path("session"), true);
    let (spool, db, elsewhere) = (
        scratch.spool_dir(),
        scratch.db(),
        scratch.path("elsewhere.db"),
    );
    for area in ["tmp", "questions"] {
        std::fs::create_dir_all(spool.join(area))?;
    }
    let dirs = AppDirs::create(&scratch.path("watch"));
    let log = dirs.logs().join("watch.log");
    let mut cmd = session.command(&binary);
    cmd.arg("watch");
    dirs.apply(&mut cmd, &spool, &db, "bench");
    cmd.stdout(std::fs::File::create(&log)?)
        .stderr(std::fs::File::create(dirs.logs().join("watch.err"))?);
    let mut daemon = Running::adopt(cmd.spawn().context("start answer-inbox watch")?);
    wait_for("the daemon to be ready", || {
        Ok(std::fs::read_to_string(&log)?.contains("ready:"))
    })?;
    // Its notification thread asks for the daemon once at start; let it.
    std::thread::sleep(Duration::from_secs(2));

    let mut samples = Vec::new();
    let mut next = Instant::now();
    for i in 0..WARMUP + n {
        if i % 10 == 0 {
            eprintln!("notify-close: request {i}/{}", WARMUP + n);
        }
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        next = Instant::now() + SPACING;
        let id = fixtures::id("close", i);
        let title = format!("Deploy build {id}");
        let target = spool.join("questions").join(format!("{id}.json"));
        Staged::write(
            &spool.join("tmp"),
            target,
            &fixtures::interactive_request(&id),
        )?
        .place()?;
        wait_for(&format!("the bubble for {id}"), || {
            Ok(session.notify_calls().iter().any(|c| c.summary == title))
        })?;
        let closed_before = close_stamps(&session).len();

        let answered = Command::new(&binary)
            .arg("--spool")
            .arg(&spool)
            .arg("--db")
            .arg(&elsewhere)
            .args([
                "answer",
                &id,
                "--set",
                "target=staging",
                "--set",
                "migrate=yes",
            ])
            .env("HOME", scratch.path("elsewhere-home"))
            .output()?;
        anyhow::ensure!(
            answered.status.success(),
            "answering {id} elsewhere failed: {}",
            String::from_utf8_lossy(&answered.stderr)
        );
        let written = written_at(&spool.join("answers").join(format!("{id}.json")))?;
        let mut closed = None;
        wait_for(&format!("the bubble of {id} to close"), || {
            closed = close_stamps(&session).get(closed_before).copied();
            Ok(closed.is_some())
        })?;
        if let (Some(closed), true) = (closed, i >= WARMUP) {
            samples.push(Duration::from_secs_f64((closed - written).max(0.0)));
        }
        if let Ok(Some(status)) = daemon.child.try_wait() {
            anyhow::bail!("the daemon exited ({status})");
        }
    }
    daemon.stop();

    samples.sort_unstable();
    table(
        &["measure", "requests", "p50", "p95", "max"],
        &[vec![
            "**outcome written elsewhere → `CloseNotification` on the bus** (CLI daemon)".into(),
            samples.len().to_string(),
            ms(percentile(&samples, 50.0)),
            ms(percentile(&samples, 95.0)),
            ms(*samples.last().context("no samples")?),
        ]],
    );
    Ok(())
}

/// dbus-monitor's stamps (seconds since the epoch) of every `CloseNotification` call so far.
fn close_stamps(session: &Session) -> Vec<f64> {
    session
        .bus_log()
        .lines()
        .filter(|line| {
            line.starts_with("method call ") && line.contains("member=CloseNotification")
        })
        .filter_map(|line| line.split(' ').find_map(|word| word.strip_prefix("time=")))
        .filter_map(|time| time.parse().ok())
        .collect()
}

/// When `path` was last written, in seconds since the epoch.
fn written_at(path: &Path) -> anyhow::Result<f64> {
    let modified = std::fs::metadata(path)
        .with_context(|| format!("no outcome at {}", path.display()))?
        .modified()?;
    Ok(modified.duration_since(UNIX_EPOCH)?.as_secs_f64())
}

fn wait_for(what: &str, mut done: impl FnMut() -> anyhow::Result<bool>) -> anyhow::Result<()> {
    let deadline = Instant::now() + PATIENCE;
    while !done().unwrap_or(false) {
        anyhow::ensure!(Instant::now() < deadline, "waited {PATIENCE:?} for {what}");
        // The stamps are dbus-monitor's: polling slowly costs no precision.
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let path = std::env::current_exe()?
        .parent()
        .context("no directory around this binary")?
        .join(name);
    anyhow::ensure!(
        path.is_file(),
        "{} is missing: `cargo build --release -p answer-inbox` first",
        path.display()
    );
    Ok(path)
}
