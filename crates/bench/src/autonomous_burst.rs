//! Issue 11, group commit: a burst of N autonomous requests (every required question has a
//! default, so each is settled at once), outcomes per second from the first placement until
//! the N-th outcome file exists, next to a *bare responder* measured the same way in the same
//! run, on the same disk.
//!
//! - **The engine** is the real daemon: `answer-inbox watch --no-notify`, the binary next to
//!   this one, its own process, on a fresh spool and database. Its group commit writes each
//!   turn's outcomes into `tmp/`, makes them durable with one `syncfs`, links each and syncs
//!   `answers/` once (`Spool::write_outcomes`), in one SQLite transaction.
//! - **The bare responder** is this binary (`inbox-bench bare-responder SPOOL`), its own
//!   process too: a `notify` watcher on `questions/`; for each request file, read it, parse
//!   it with `serde_json`, build the `defaulted` outcome from the questions' defaults, write
//!   it into `tmp/`, fsync it, `link` it into `answers/`. No database, no validation, no
//!   directory fsync: the least any responder that makes each outcome durable must do.
//!
//! Both sides get the same N files, staged in the spool's `tmp/` and flushed to disk
//! (`syncfs`) before the clock starts, as askers fsync a request before placing it
//! (docs/PROTOCOL.md); the clock starts just before the first `rename` into `questions/`
//! and stops when a `notify` watcher in this process has seen the N-th outcome file appear
//! in `answers/`. Rounds alternate sides (and which goes first); the median round counts.
//! Spool and database live on a real disk: `$TMPDIR` unless it is a tmpfs, else /var/tmp.
//!
//! For diagnosis, in this process without a watcher: one `Engine::turn(Wake::Paths)` over
//! the N placed requests (ingest, autonomous policy, group commit, in one go), the same
//! engine's next turn over its own N outcome files (the loop sees its own links come back),
//! and the unit costs on this disk: one outcome the responder's way (fsync), creating one
//! small file, one `syncfs`. Every spool is kept until the end of the run, then removed.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use inbox_engine::{Area, Engine, Spool, Store, Wake};
use inbox_harness::process::Running;
use notify::{EventKind, RecursiveMode, Watcher};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::fixtures::{self, Staged};
use crate::stats::{median, ms, per_second, table, thousands, verdict};

pub const DEFAULT_N: usize = 3000;
const ROUNDS: usize = 5;
/// The whole burst must be over within this.
const BURST_PATIENCE: Duration = Duration::from_secs(300);
/// Samples of the unit costs (one fsync'd outcome, one syncfs).
const UNIT_SAMPLES: usize = 50;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Engine,
    Responder,
}

impl Side {
    fn label(self) -> &'static str {
        match self {
            Side::Engine => "engine (`answer-inbox watch`)",
            Side::Responder => "bare responder (fsync per outcome)",
        }
    }
}

/// One burst on one side.
struct Burst {
    /// First rename → N-th outcome file seen.
    total: Duration,
    /// First rename → first outcome file seen.
    first: Duration,
    /// First rename → outcome N/2 seen.
    half: Duration,
    /// How long the N renames took.
    renaming: Duration,
    /// CPU time of the side's process (all its threads) during the burst.
    cpu: Duration,
    /// Engine only: turns that settled something (runs of `defaulted` lines in its log).
    settle_turns: Option<usize>,
}

pub fn run(n: usize) -> anyhow::Result<()> {
    let answer_inbox = sibling("answer-inbox")?;
    let base = disk_dir()?;
    println!(
        "## Issue 11: autonomous burst ({} requests placed at once, {ROUNDS} rounds)\n",
        thousands(n as f64)
    );
    println!(
        "Spool and database: under {} ({}).\n",
        base.display(),
        crate::filesystem_of(&base)
    );

    // Every spool stays until the end: deleting thousands of files between rounds would
    // slow the next round's file creation (see `kept` below).
    let mut kept = Vec::new();
    let mut bursts: Vec<(Side, Burst)> = Vec::new();
    for round in 0..ROUNDS {
        let order = if round % 2 == 0 {
            [Side::Responder, Side::Engine]
        } else {
            [Side::Engine, Side::Responder]
        };
        for side in order {
            eprintln!(
                "autonomous-burst: round {}/{ROUNDS}: {}",
                round + 1,
                side.label()
            );
            let (burst, dir) = burst_once(side, n, &base, &answer_inbox)
                .with_context(|| format!("round {}, {}", round + 1, side.label()))?;
            kept.push(dir);
            bursts.push((side, burst));
        }
    }

    let of = |side: Side| -> Vec<&Burst> {
        bursts
            .iter()
            .filter(|(s, _)| *s == side)
            .map(|(_, b)| b)
            .collect()
    };
    let (engine, responder) = (of(Side::Engine), of(Side::Responder));
    let rate = |d: Duration| format!("{} outcomes/s ({})", thousands(per_second(n, d)), ms(d));
    let mut rows = Vec::new();
    for round in 0..ROUNDS {
        let (e, r) = (engine[round], responder[round]);
        rows.push(vec![
            (round + 1).to_string(),
            rate(r.total),
            rate(e.total),
            format!("{:.2}×", r.total.as_secs_f64() / e.total.as_secs_f64()),
            format!("{} / {}", ms(r.first), ms(e.first)),
            format!("{} / {}", ms(r.half), ms(e.half)),
            format!("{} / {}", ms(r.renaming), ms(e.renaming)),
            format!("{} / {}", ms(r.cpu), ms(e.cpu)),
            e.settle_turns.map_or("?".into(), |t| t.to_string()),
        ]);
    }
    let median_of = |bursts: &[&Burst], pick: fn(&Burst) -> Duration| {
        median(&bursts.iter().map(|b| pick(b)).collect::<Vec<_>>())
    };
    let (engine_total, responder_total) = (
        median_of(&engine, |b| b.total),
        median_of(&responder, |b| b.total),
    );
    let ratio = responder_total.as_secs_f64() / engine_total.as_secs_f64();
    rows.push(vec![
        "**median**".into(),
        format!("**{}**", rate(responder_total)),
        format!("**{}**", rate(engine_total)),
        format!("**{ratio:.2}×**"),
        format!(
            "{} / {}",
            ms(median_of(&responder, |b| b.first)),
            ms(median_of(&engine, |b| b.first))
        ),
        format!(
            "{} / {}",
            ms(median_of(&responder, |b| b.half)),
            ms(median_of(&engine, |b| b.half))
        ),
        format!(
            "{} / {}",
            ms(median_of(&responder, |b| b.renaming)),
            ms(median_of(&engine, |b| b.renaming))
        ),
        format!(
            "{} / {}",
            ms(median_of(&responder, |b| b.cpu)),
            ms(median_of(&engine, |b| b.cpu))
        ),
        String::new(),
    ]);
    table(
        &[
            "round",
            "bare responder: first rename → N-th outcome",
            "engine (`answer-inbox watch`): first rename → N-th outcome",
            "engine rate / responder rate",
            "(diagnosis) first outcome after, responder / engine",
            "(diagnosis) N/2-th outcome after, responder / engine",
            "(diagnosis) renaming N files took, responder / engine run",
            "(diagnosis) CPU of the process during the burst, responder / engine",
            "(diagnosis) engine turns that settled a batch",
        ],
        &rows,
    );

    eprintln!("autonomous-burst: diagnosis in this process");
    diagnosis(n, &base, &mut kept)?;
    eprintln!("autonomous-burst: removing the spools");
    drop(kept);

    let (engine_rate, responder_rate) =
        (per_second(n, engine_total), per_second(n, responder_total));
    table(
        &["target", "measured", "verdict"],
        &[vec![
            "engine ≥ 3× the bare responder's outcome rate".into(),
            format!(
                "{ratio:.2}× ({} vs {} outcomes/s)",
                thousands(engine_rate),
                thousands(responder_rate)
            ),
            verdict(ratio >= 3.0).into(),
        ]],
    );
    Ok(())
}

/// A binary next to this one.
fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let path = exe
        .parent()
        .context("no directory around this binary")?
        .join(name);
    anyhow::ensure!(
        path.is_file(),
        "{} is missing: run `cargo build --release -p {name}` first (the same profile as \
         this benchmark)",
        path.display()
    );
    Ok(path)
}

/// Where the spools go: `$TMPDIR` when it is on a disk, /var/tmp when it is a tmpfs (fsync
/// costs nothing there, which would make the comparison meaningless).
fn disk_dir() -> anyhow::Result<PathBuf> {
    let temp = std::env::temp_dir();
    let kind = crate::filesystem_type(&temp);
    if matches!(kind.as_deref(), Some("tmpfs" | "ramfs")) {
        let fallback = PathBuf::from("/var/tmp");
        let fallback_kind = crate::filesystem_type(&fallback);
        if matches!(fallback_kind.as_deref(), Some("tmpfs" | "ramfs")) {
            bail!("both $TMPDIR and /var/tmp are in memory: set TMPDIR to a directory on a disk");
        }
        return Ok(fallback);
    }
    Ok(temp)
}

fn scratch(base: &Path, label: &str) -> anyhow::Result<tempfile::TempDir> {
    Ok(tempfile::Builder::new()
        .prefix(&format!("inbox-bench-{label}-"))
        .tempdir_in(base)?)
}

/// One burst of N requests into a fresh spool served by `side`; returns the spool's
/// directory too, for the caller to remove when it is done.
fn burst_once(
    side: Side,
    n: usize,
    base: &Path,
    answer_inbox: &Path,
) -> anyhow::Result<(Burst, tempfile::TempDir)> {
    let dir = scratch(base, "autoburst")?;
    let spool = Spool::open(dir.path().join("spool"))?;
    let db = dir.path().join("inbox.db");
    let log = dir.path().join("stdout.log");

    let mut cmd = match side {
        Side::Engine => {
            let mut cmd = Command::new(answer_inbox);
            cmd.args(["watch", "--no-notify"])
                .env("ANSWER_INBOX_DIR", spool.root())
                .env("ANSWER_INBOX_DB", &db)
                .env("RUST_LOG", "warn");
            cmd
        }
        Side::Responder => {
            let mut cmd = Command::new(std::env::current_exe()?);
            cmd.arg("bare-responder").arg(spool.root());
            cmd
        }
    };
    // No desktop session: nothing to notify, and no bus to find.
    cmd.env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .stdout(File::create(&log)?)
        .stderr(File::create(dir.path().join("stderr.log"))?);
    let mut running = Running::adopt(cmd.spawn().context("start the responding process")?);
    let ready = match side {
        Side::Engine => "ready:",
        Side::Responder => "ready",
    };
    wait_for_line(&mut running, &log, ready, &dir.path().join("stderr.log"))?;

    let staged = (0..n)
        .map(|i| {
            let id = fixtures::id("autoburst", i);
            Staged::write(
                &spool.tmp_dir(),
                spool.path(Area::Questions, &id),
                &fixtures::autonomous_request(&id),
            )
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // The requests are on disk before they are placed, as askers fsync them (PROTOCOL.md):
    // neither side's first flush pays for them.
    syncfs(spool.root())?;

    let outcomes = OutcomeWatcher::watch(&spool.dir(Area::Answers))?;
    let pid = running.child.id();
    let cpu_before = process_cpu(pid);
    let started = Instant::now();
    for file in &staged {
        file.place()?;
    }
    let renaming = started.elapsed();
    let seen = outcomes.wait_for(n, started + BURST_PATIENCE, || {
        match running.child.try_wait() {
            Ok(Some(status)) => Some(format!("the process exited ({status})")),
            _ => None,
        }
    })?;
    let cpu = process_cpu(pid).saturating_sub(cpu_before);
    drop(outcomes);
    running.stop();

    check_outcomes(&spool, n, side)?;
    let settle_turns = (side == Side::Engine).then(|| settle_runs(&log));
    let burst = Burst {
        total: seen[n - 1] - started,
        first: seen[0] - started,
        half: seen[n / 2] - started,
        renaming,
        cpu,
        settle_turns,
    };
    Ok((burst, dir))
}

/// Waits until `log` has a line containing `needle`.
fn wait_for_line(
    running: &mut Running,
    log: &Path,
    needle: &str,
    stderr: &Path,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains(needle))
        {
            return Ok(());
        }
        if let Ok(Some(status)) = running.child.try_wait() {
            bail!(
                "the process exited ({status}) before {needle:?}: {}",
                fs::read_to_string(stderr).unwrap_or_default()
            );
        }
        anyhow::ensure!(Instant::now() < deadline, "no {needle:?} line within 30 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every outcome is there, and is the `defaulted` one.
fn check_outcomes(spool: &Spool, n: usize, side: Side) -> anyhow::Result<()> {
    let mut count = 0;
    for entry in fs::read_dir(spool.dir(Area::Answers))? {
        let entry = entry?;
        let outcome: Value = serde_json::from_slice(&fs::read(entry.path())?)
            .with_context(|| format!("{} is not JSON", entry.path().display()))?;
        anyhow::ensure!(
            outcome["status"] == "defaulted"
                && outcome["answered_by"] == "policy:rule:file-askers"
                && outcome["answers"]["prune"] == true,
            "{:?}: unexpected outcome {outcome}",
            side
        );
        count += 1;
    }
    anyhow::ensure!(count == n, "{side:?}: {count} outcomes for {n} requests");
    Ok(())
}

/// The number of runs of consecutive `defaulted` lines in the daemon's log: each turn logs
/// its ingests, then (after its one group commit) its settlements.
fn settle_runs(log: &Path) -> usize {
    let text = fs::read_to_string(log).unwrap_or_default();
    let mut runs = 0;
    let mut in_run = false;
    for line in text.lines() {
        let settled = line.contains(" defaulted ") && line.contains("by policy:rule:file-askers");
        if settled && !in_run {
            runs += 1;
        }
        in_run = settled;
    }
    runs
}

/// The CPU time of every thread of `pid` so far (`schedstat`, nanoseconds).
fn process_cpu(pid: u32) -> Duration {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Duration::ZERO;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| text.split_whitespace().next()?.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .sum()
}

/// `syncfs` of the filesystem holding `dir`.
fn syncfs(dir: &Path) -> anyhow::Result<()> {
    let file = File::open(dir)?;
    rustix::fs::syncfs(&file)?;
    Ok(())
}

/// A `notify` watcher on `answers/`, noting when each outcome file first appears.
struct OutcomeWatcher {
    _watcher: notify::RecommendedWatcher,
    events: crossbeam_channel::Receiver<(Instant, Vec<PathBuf>)>,
}

impl OutcomeWatcher {
    fn watch(answers: &Path) -> anyhow::Result<OutcomeWatcher> {
        let (tx, events) = crossbeam_channel::unbounded();
        let mut watcher =
            notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
                let at = Instant::now();
                if let Ok(event) = result {
                    if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_)) {
                        let _ = tx.send((at, event.paths));
                    }
                }
            })?;
        watcher.watch(answers, RecursiveMode::NonRecursive)?;
        Ok(OutcomeWatcher {
            _watcher: watcher,
            events,
        })
    }

    /// Waits for `n` distinct outcome files; returns when each was seen, in order.
    fn wait_for(
        &self,
        n: usize,
        deadline: Instant,
        mut gone: impl FnMut() -> Option<String>,
    ) -> anyhow::Result<Vec<Instant>> {
        let mut names = HashSet::with_capacity(n);
        let mut times = Vec::with_capacity(n);
        while times.len() < n {
            match self.events.recv_timeout(
                Duration::from_millis(500).min(deadline.saturating_duration_since(Instant::now())),
            ) {
                Ok((at, paths)) => {
                    for path in paths {
                        if path.extension().is_some_and(|e| e == "json") && names.insert(path) {
                            times.push(at);
                        }
                    }
                }
                Err(_) => {
                    if let Some(why) = gone() {
                        bail!("{why} after {} of {n} outcomes", times.len());
                    }
                    anyhow::ensure!(
                        Instant::now() < deadline,
                        "{} of {n} outcomes within {BURST_PATIENCE:?}",
                        times.len()
                    );
                }
            }
        }
        Ok(times)
    }
}

/// `inbox-bench bare-responder SPOOL`: the baseline. Watches `SPOOL/questions/`; answers
/// every request with its defaults, one durable outcome file at a time. Prints `ready` once
/// watching; runs until killed.
pub fn bare_responder(args: &[String]) -> anyhow::Result<()> {
    let [spool] = args else {
        bail!("usage: inbox-bench bare-responder SPOOL");
    };
    let spool = PathBuf::from(spool);
    let (questions, answers, tmp) = (
        spool.join("questions"),
        spool.join("answers"),
        spool.join("tmp"),
    );
    let (tx, paths) = crossbeam_channel::unbounded::<Vec<PathBuf>>();
    let mut watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
        if let Ok(event) = result {
            if !matches!(event.kind, EventKind::Access(_) | EventKind::Remove(_)) {
                let _ = tx.send(event.paths);
            }
        }
    })?;
    watcher.watch(&questions, RecursiveMode::NonRecursive)?;
    let mut out = std::io::stdout();
    writeln!(out, "ready")?;
    out.flush()?;

    let instance = format!("bare-responder/{}", std::process::id());
    let mut answered: HashSet<String> = HashSet::new();
    for batch in paths {
        for path in batch {
            let Some(id) = path
                .file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| name.strip_suffix(".json"))
            else {
                continue;
            };
            if answered.contains(id) {
                continue;
            }
            let Ok(bytes) = fs::read(&path) else {
                continue; // gone again
            };
            let Ok(request) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            let outcome = defaulted_outcome(id, &request, &bytes, &instance)?;
            let staged = tmp.join(format!("{id}.{}.outcome", std::process::id()));
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&staged)?;
            file.write_all(&outcome)?;
            file.sync_all()?;
            drop(file);
            match fs::hard_link(&staged, answers.join(format!("{id}.json"))) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e.into()),
            }
            fs::remove_file(&staged)?;
            answered.insert(id.to_owned());
        }
    }
    Ok(())
}

/// The outcome the engine's autonomous policy writes, built with `serde_json` alone.
fn defaulted_outcome(
    id: &str,
    request: &Value,
    bytes: &[u8],
    instance: &str,
) -> anyhow::Result<Vec<u8>> {
    let mut answers = Map::new();
    let mut defaulted = Vec::new();
    for question in request["questions"].as_array().into_iter().flatten() {
        if let (Some(qid), Some(default)) = (question["id"].as_str(), question.get("default")) {
            answers.insert(qid.to_owned(), default.clone());
            defaulted.push(qid.to_owned());
        }
    }
    let digest = Sha256::digest(bytes);
    let sha: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let outcome = json!({
        "inbox": 1,
        "id": id,
        "status": "defaulted",
        "answers": answers,
        "custom": [],
        "defaulted": defaulted,
        "answered_by": "policy:rule:file-askers",
        "answered_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "request_sha256": sha,
        "instance": instance,
    });
    let mut out = serde_json::to_vec_pretty(&outcome)?;
    out.push(b'\n');
    Ok(out)
}

/// In this process, no watcher: the engine's own work for the whole burst as one turn, the
/// turn over its own outcomes that follows, and the unit costs of the two ways to flush.
fn diagnosis(n: usize, base: &Path, kept: &mut Vec<tempfile::TempDir>) -> anyhow::Result<()> {
    let dir = scratch(base, "autoburst-direct")?;
    let spool = Spool::open(dir.path().join("spool"))?;
    let mut requests = Vec::with_capacity(n);
    for i in 0..n {
        let id = fixtures::id("direct", i);
        let path = spool.path(Area::Questions, &id);
        fs::write(&path, fixtures::autonomous_request(&id))?;
        requests.push(path);
    }
    syncfs(spool.root())?;
    let mut engine = Engine::new(spool.clone(), Store::open(&dir.path().join("inbox.db"))?)?;
    let started = Instant::now();
    engine.turn(Wake::Paths(requests))?;
    let one_turn = started.elapsed();
    let answers: Vec<PathBuf> = fs::read_dir(spool.dir(Area::Answers))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    anyhow::ensure!(answers.len() == n, "{} outcomes of {n}", answers.len());
    let started = Instant::now();
    engine.turn(Wake::Paths(answers))?;
    let own_outcomes = started.elapsed();

    // The unit costs, alternating: one outcome the responder's way, one syncfs.
    kept.push(dir);
    let unit_dir = scratch(base, "autoburst-unit")?;
    let (tmp, answers) = (unit_dir.path().join("tmp"), unit_dir.path().join("answers"));
    fs::create_dir_all(&tmp)?;
    fs::create_dir_all(&answers)?;
    let (mut creates, mut fsyncs, mut syncfses) = (Vec::new(), Vec::new(), Vec::new());
    let body = fixtures::answered_outcome("unit-1");
    for i in 0..UNIT_SAMPLES {
        let staged = tmp.join(format!("unit-{i}"));
        let started = Instant::now();
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&staged)?;
        file.write_all(&body)?;
        file.sync_all()?;
        drop(file);
        fs::hard_link(&staged, answers.join(format!("unit-{i}.json")))?;
        fs::remove_file(&staged)?;
        fsyncs.push(started.elapsed());

        let started = Instant::now();
        fs::write(tmp.join(format!("dirty-{i}")), &body)?;
        creates.push(started.elapsed());
        let started = Instant::now();
        syncfs(&tmp)?;
        syncfses.push(started.elapsed());
    }

    kept.push(unit_dir);
    table(
        &["(diagnosis) in this process, no watcher", "time"],
        &[
            vec![
                format!(
                    "one `turn(Wake::Paths)` over the {} placed requests: ingest, autonomous \
                     policy, one group commit",
                    thousands(n as f64)
                ),
                format!(
                    "{} ({} outcomes/s)",
                    ms(one_turn),
                    thousands(per_second(n, one_turn))
                ),
            ],
            vec![
                "the next turn, over the engine's own outcome files (the loop sees its links \
                 come back)"
                    .into(),
                ms(own_outcomes),
            ],
            vec![
                format!(
                    "one outcome the responder's way: write, fsync, link (median of \
                     {UNIT_SAMPLES})"
                ),
                ms(median(&fsyncs)),
            ],
            vec![
                format!(
                    "creating and writing one small file, no fsync (median of \
                     {UNIT_SAMPLES})"
                ),
                ms(median(&creates)),
            ],
            vec![
                format!("one `syncfs` after one small write (median of {UNIT_SAMPLES})"),
                ms(median(&syncfses)),
            ],
        ],
    );
    Ok(())
}
