//! Lost file-system events cost nothing: the overflow harness.
//!
//! N requests are placed in one burst into a spool watched by `answer-inbox watch
//! --no-notify`, with events lost on purpose, and the run proves that every one was ingested
//! through the rescans the loss triggers: the watch log (stderr, `RUST_LOG=info`) shows
//! "full rescan" lines giving the loss as their reason, the daemon's stdout reports N distinct
//! ingests, its database holds N pending requests, and `list --json` lists them all.
//!
//! Two ways to lose events:
//! - [`Loss::FaultPoint`]: `FAILPOINTS="watcher.event=return"` makes the watcher drop every
//!   event and report each loss as a rescan hint, as the kernel does with `IN_Q_OVERFLOW`.
//!   Needs a binary with the engine's fault points compiled in (`answer-inbox-faults`: `cargo
//!   build -p answer-inbox --bin answer-inbox-faults --features failpoints`). Deterministic:
//!   CI uses it.
//! - [`Loss::KernelQueue`]: a real kernel overflow. The kernel sizes an inotify instance's
//!   queue from `/proc/sys/fs/inotify/max_queued_events` when the instance is created, so the
//!   limit is set tiny only until the daemon's inotify descriptor exists, then restored by a
//!   guard ([`QueueLimit`]) that also restores on panic. The setting is machine-wide for
//!   those milliseconds, so only the hand-run benchmark (`inbox-bench overflow --queue N`)
//!   uses it, never a CI test. Needs root.
//!
//! The daemon and one-shot helpers here ([`Daemon`], [`run_with_timeout`]) are shared with the
//! hostile-input test, which needs the same things: stderr kept, every wait bounded.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::process::Running;

/// The kernel's per-instance inotify queue length, read when an instance is created.
pub const MAX_QUEUED_EVENTS: &str = "/proc/sys/fs/inotify/max_queued_events";

/// How events are lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// The engine's `watcher.event` fault point drops every event.
    FaultPoint,
    /// The kernel's queue for the daemon's inotify instance holds this many events.
    KernelQueue { max_queued_events: u32 },
}

impl Loss {
    /// The words the daemon logs after "full rescan: " for this kind of loss.
    pub fn rescan_reason(self) -> &'static str {
        match self {
            // watcher.rs: the fault point's hint.
            Loss::FaultPoint => "fault point watcher.event",
            // watcher.rs: notify turns IN_Q_OVERFLOW into an event flagged `Rescan`.
            Loss::KernelQueue { .. } => "the watcher asked for a rescan",
        }
    }

    pub fn describe(self) -> String {
        match self {
            Loss::FaultPoint => "fault point watcher.event=return".to_owned(),
            Loss::KernelQueue { max_queued_events } => {
                format!("kernel queue of {max_queued_events} events")
            }
        }
    }
}

/// One run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `answer-inbox` binary.
    pub binary: PathBuf,
    pub requests: usize,
    pub loss: Loss,
    /// Threads renaming files into `questions/` during the burst.
    pub writers: usize,
    /// The longest the burst may take to be ingested; a hang fails the run instead of
    /// blocking it.
    pub patience: Duration,
}

impl Config {
    pub fn new(binary: PathBuf, requests: usize, loss: Loss) -> Config {
        Config {
            binary,
            requests,
            loss,
            writers: 1,
            patience: Duration::from_secs(120),
        }
    }
}

/// What a run measured. Every figure comes from a run that met every check.
#[derive(Debug, Clone)]
pub struct Report {
    pub requests: usize,
    pub loss: Loss,
    pub writers: usize,
    /// Spawning the daemon to its `ready` line.
    pub time_to_ready: Duration,
    /// The burst itself: first rename to last rename.
    pub placing: Duration,
    /// First rename to the N-th distinct "ingested" line.
    pub ingesting: Duration,
    /// Last rename to the N-th "ingested" line: what the rescans added after the burst.
    pub after_last_placement: Duration,
    /// "full rescan" lines in the daemon's log.
    pub rescans: usize,
    /// Each distinct reason after "full rescan: ", with its count.
    pub rescan_reasons: BTreeMap<String, usize>,
    /// Pending requests in the daemon's database once it stopped.
    pub pending: usize,
    /// Rows of `answer-inbox list --json` afterwards.
    pub listed: usize,
    pub list_time: Duration,
    /// With a kernel queue: how long the machine-wide limit was lowered.
    pub queue_window: Option<Duration>,
}

impl Report {
    /// Requests renamed into place per second during the burst.
    pub fn placement_rate(&self) -> f64 {
        per_second(self.requests, self.placing)
    }

    /// Requests ingested per second, from the first rename to the last ingest.
    pub fn ingest_rate(&self) -> f64 {
        per_second(self.requests, self.ingesting)
    }
}

fn per_second(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// Places `config.requests` requests in one burst into a watched spool with events lost as
/// `config.loss` says, and checks that every one was ingested by the rescans. `Err` names
/// the first check that failed, with the daemon's log.
pub fn run(config: &Config) -> Result<Report, String> {
    if config.requests == 0 || config.writers == 0 {
        return Err("requests and writers must be at least 1".into());
    }
    let dir = tempfile::Builder::new()
        .prefix("inbox-overflow-")
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?;
    let spool = dir.path().join("spool");
    let db = dir.path().join("data/inbox.sqlite3");
    // Outside the spool but on its filesystem: the files are complete before the burst, which
    // is then nothing but renames, as dense as a burst gets. Not tmp/: the daemon's every
    // rescan looks at tmp/ for stale files, which would slow it for a reason no asker causes.
    let staging = dir.path().join("staging");
    let questions = spool.join("questions");
    for d in [&staging, &questions] {
        fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let ids: Vec<String> = (0..config.requests)
        .map(|n| format!("burst-{n:06}"))
        .collect();
    for id in &ids {
        let path = staging.join(format!("{id}.json"));
        fs::write(&path, request_body(id)).map_err(|e| format!("{}: {e}", path.display()))?;
    }

    let mut cmd = inbox_command(&config.binary, &spool, &db, dir.path());
    cmd.args(["watch", "--no-notify"]).env("RUST_LOG", "info");
    match config.loss {
        Loss::FaultPoint => cmd.env("FAILPOINTS", "watcher.event=return"),
        Loss::KernelQueue { .. } => cmd.env_remove("FAILPOINTS"),
    };
    let log = dir.path().join("watch.log");
    let started = Instant::now();
    let mut queue_window = None;
    let mut daemon = match config.loss {
        Loss::FaultPoint => Daemon::start(cmd, &log)?,
        Loss::KernelQueue { max_queued_events } => {
            let limit = QueueLimit::set(max_queued_events)?;
            let set_at = Instant::now();
            let mut daemon = Daemon::start(cmd, &log)?;
            // The queue length is fixed when the instance is created: restore the global
            // setting as soon as the daemon's inotify descriptor exists.
            let created = daemon.wait_for_inotify(Duration::from_secs(20));
            drop(limit);
            queue_window = Some(set_at.elapsed());
            created?;
            daemon
        }
    };
    daemon.wait_line("ready", Duration::from_secs(30))?;
    let time_to_ready = started.elapsed();

    let (burst, ingested_at) = std::thread::scope(|scope| {
        let burst_start = Instant::now();
        let writers: Vec<_> = (0..config.writers)
            .map(|w| {
                let (ids, staging, questions) = (&ids, &staging, &questions);
                scope.spawn(move || -> Result<Instant, String> {
                    for id in ids.iter().skip(w).step_by(config.writers) {
                        let name = format!("{id}.json");
                        fs::rename(staging.join(&name), questions.join(&name))
                            .map_err(|e| format!("placing {name}: {e}"))?;
                    }
                    Ok(Instant::now())
                })
            })
            .collect();
        let ingested = count_ingests(&mut daemon, &ids, burst_start + config.patience);
        let mut last_placed = burst_start;
        for writer in writers {
            let finished = writer
                .join()
                .map_err(|_| "a writer thread panicked".to_owned())??;
            last_placed = last_placed.max(finished);
        }
        Ok::<_, String>(((burst_start, last_placed), ingested))
    })?;
    let (burst_start, last_placed) = burst;
    let all_ingested = match ingested_at {
        Ok(at) => at,
        Err(error) => return Err(format!("{error}\n{}", daemon.log_tail())),
    };

    let code = daemon.stop();
    let log_text = daemon.log_text();
    if code != Some(0) {
        return Err(format!(
            "watch exited with {code:?} after the burst\n{}",
            daemon.log_tail()
        ));
    }
    let mut rescan_reasons = BTreeMap::new();
    let mut rescans = 0;
    for line in log_text.lines() {
        if let Some((_, reason)) = line.split_once("full rescan: ") {
            rescans += 1;
            *rescan_reasons.entry(reason.trim().to_owned()).or_insert(0) += 1;
        }
    }
    let wanted = config.loss.rescan_reason();
    if !rescan_reasons.keys().any(|r| r.contains(wanted)) {
        let hint = match config.loss {
            Loss::FaultPoint => {
                "; was the binary built with the engine's fault points? (`cargo build -p \
                 answer-inbox --bin answer-inbox-faults --features failpoints`)"
            }
            Loss::KernelQueue { .. } => {
                "; the kernel queue never overflowed: try a smaller --queue, more requests or \
                 more writers"
            }
        };
        return Err(format!(
            "no \"full rescan: ...{wanted}...\" line in the watch log, so no loss was proven \
             (rescans seen: {rescan_reasons:?}){hint}\n{}",
            tail(&log_text)
        ));
    }

    // The daemon's own database, read without a scan: what the watcher ingested.
    let store = inbox_engine::Store::open(&db).map_err(|e| format!("opening the store: {e}"))?;
    let pending = store
        .pending()
        .map_err(|e| format!("reading the store: {e}"))?;
    drop(store);
    let expected: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let in_db: HashSet<&str> = pending.iter().map(|r| r.id.as_str()).collect();
    if in_db != expected {
        let missing: Vec<&&str> = expected.difference(&in_db).take(5).collect();
        return Err(format!(
            "the database holds {} pending requests, not the {} placed (missing e.g. {missing:?})",
            in_db.len(),
            expected.len()
        ));
    }

    let list_started = Instant::now();
    let mut list = inbox_command(&config.binary, &spool, &db, dir.path());
    list.args(["list", "--json"]);
    let out = run_with_timeout(list, Duration::from_secs(120))?;
    let list_time = list_started.elapsed();
    if !out.status.success() {
        return Err(format!(
            "list --json failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("list --json printed no JSON array: {e}"))?;
    let listed: HashSet<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    if listed != expected || rows.len() != ids.len() {
        return Err(format!(
            "list --json shows {} rows, not the {} placed",
            rows.len(),
            ids.len()
        ));
    }

    Ok(Report {
        requests: config.requests,
        loss: config.loss,
        writers: config.writers,
        time_to_ready,
        placing: last_placed - burst_start,
        ingesting: all_ingested - burst_start,
        after_last_placement: all_ingested.saturating_duration_since(last_placed),
        rescans,
        rescan_reasons,
        pending: in_db.len(),
        listed: rows.len(),
        list_time,
        queue_window,
    })
}

/// A small valid request, ~150 bytes: the figures are about events, not parsing.
fn request_body(id: &str) -> String {
    format!(
        r#"{{"inbox": 1, "id": "{id}", "title": "Burst request {id}",
  "questions": [{{"id": "go", "question": "Go ahead?", "type": "confirm"}}]}}
"#
    )
}

/// Reads the daemon's stdout until every id has an "ingested" line; returns when the last
/// one arrived. Fails on a rejection, on the daemon's exit, or at `deadline`.
fn count_ingests(
    daemon: &mut Daemon,
    ids: &[String],
    deadline: Instant,
) -> Result<Instant, String> {
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut seen: HashSet<String> = HashSet::with_capacity(ids.len());
    while seen.len() < wanted.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(line) = daemon.next_line(left)? else {
            return Err(format!(
                "only {} of {} requests were ingested before the deadline",
                seen.len(),
                wanted.len()
            ));
        };
        // `<time> <what happened>`; only the event word matters here.
        let what = line.split_once(' ').map_or("", |(_, rest)| rest);
        if let Some(rest) = what.strip_prefix("ingested ") {
            let id = rest.split(':').next().unwrap_or_default();
            if wanted.contains(id) {
                seen.insert(id.to_owned());
            }
        } else if what.starts_with("rejected ") || what.starts_with("problem ") {
            return Err(format!("the daemon refused a burst file: {line}"));
        }
    }
    Ok(Instant::now())
}

/// `answer-inbox` with a private spool, database and home, and no desktop session.
pub fn inbox_command(binary: &Path, spool: &Path, db: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(binary);
    cmd.env("ANSWER_INBOX_DIR", spool)
        .env("ANSWER_INBOX_DB", db)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("xdg"))
        .env("USER", "tester")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("FAILPOINTS")
        .stdin(Stdio::null());
    cmd
}

/// Sets `max_queued_events` and puts the old value back when dropped, on panic too.
pub struct QueueLimit {
    original: String,
}

impl QueueLimit {
    pub fn set(value: u32) -> Result<QueueLimit, String> {
        let original = fs::read_to_string(MAX_QUEUED_EVENTS)
            .map_err(|e| format!("{MAX_QUEUED_EVENTS}: {e}"))?
            .trim()
            .to_owned();
        fs::write(MAX_QUEUED_EVENTS, value.to_string())
            .map_err(|e| format!("setting {MAX_QUEUED_EVENTS} (needs root): {e}"))?;
        Ok(QueueLimit { original })
    }
}

impl Drop for QueueLimit {
    fn drop(&mut self) {
        if let Err(error) = fs::write(MAX_QUEUED_EVENTS, &self.original) {
            eprintln!(
                "COULD NOT RESTORE {MAX_QUEUED_EVENTS} to {}: {error}; set it by hand",
                self.original
            );
        }
    }
}

/// A daemon (`answer-inbox watch`) whose stdout lines are read as they come and whose
/// stderr goes to a file; stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Daemon {
    running: Running,
    lines: Receiver<String>,
    log: PathBuf,
    /// Stdout lines read so far.
    pub seen: Vec<String>,
}

impl Daemon {
    pub fn start(mut cmd: Command, log: &Path) -> Result<Daemon, String> {
        let stderr = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("starting {cmd:?}: {e}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Daemon {
            running: Running::adopt(child),
            lines,
            log: log.to_owned(),
            seen: Vec::new(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.running.child.id()
    }

    /// The next stdout line, `None` after `timeout`; `Err` once the daemon has exited.
    pub fn next_line(&mut self, timeout: Duration) -> Result<Option<String>, String> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                self.seen.push(line.clone());
                Ok(Some(line))
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                // try_wait: a daemon that closed its stdout may still run.
                std::thread::sleep(Duration::from_millis(50));
                let status = self.running.child.try_wait().ok().flatten();
                Err(format!(
                    "the daemon closed its stdout (exit status: {status:?})\n{}",
                    self.log_tail()
                ))
            }
        }
    }

    /// Waits for a stdout line containing `needle`.
    pub fn wait_line(&mut self, needle: &str, timeout: Duration) -> Result<String, String> {
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return Ok(line.clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_line(left)? {
                Some(line) if line.contains(needle) => return Ok(line),
                Some(_) => {}
                None => {
                    return Err(format!(
                        "no line with {needle:?} within {timeout:?}; stdout so far:\n{}\n{}",
                        tail(&self.seen.join("\n")),
                        self.log_tail()
                    ))
                }
            }
        }
    }

    /// Waits until the daemon holds an inotify descriptor.
    pub fn wait_for_inotify(&mut self, timeout: Duration) -> Result<(), String> {
        let fds = PathBuf::from(format!("/proc/{}/fd", self.pid()));
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.running.child.try_wait() {
                return Err(format!("the daemon exited ({status})\n{}", self.log_tail()));
            }
            let found = fs::read_dir(&fds)
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| {
                    fs::read_link(fd.path())
                        .is_ok_and(|target| target.as_os_str() == "anon_inode:inotify")
                });
            if found {
                return Ok(());
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Err(format!(
            "the daemon opened no inotify descriptor within {timeout:?}"
        ))
    }

    /// True while the process runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.running.child.try_wait(), Ok(None))
    }

    /// SIGTERM, then SIGKILL after 10 s; the exit code.
    pub fn stop(&mut self) -> Option<i32> {
        self.running.stop()
    }

    pub fn log_text(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = fs::File::open(&self.log) {
            let _ = file.read_to_string(&mut text);
        }
        text
    }

    /// The end of the stderr log, for failure messages.
    pub fn log_tail(&self) -> String {
        format!(
            "watch log (stderr), last lines:\n{}",
            tail(&self.log_text())
        )
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(30);
    lines[from..]
        .iter()
        .map(|line| line.chars().take(300).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a one-shot command to completion, killing it (and failing) after `limit`: a hang
/// is a failure, never a stuck test.
pub fn run_with_timeout(mut cmd: Command, limit: Duration) -> Result<Output, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {cmd:?}: {e}"))?;
    // Read both pipes on threads: a child filling one pipe must not block on us.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let stdout = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = out.read_to_end(&mut bytes);
        bytes
    });
    let stderr = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = err.read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{cmd:?} did not finish within {limit:?}: killed"));
            }
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}
