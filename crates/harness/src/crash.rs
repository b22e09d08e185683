//! Crash consistency: `answer-inbox watch` is SIGKILLed at random moments under a mixed
//! workload, and nothing may be lost, rewritten, settled twice or left disagreeing.
//!
//! The daemon runs on a private spool and database. Worker threads place requests (with
//! `answer-inbox ask`, and as plain files written to `tmp/` and renamed), answer and decline
//! them with `answer-inbox answer` (on the daemon's database), and cancel them with
//! `answer-inbox cancel`. Some requests expire after a second or three, some are autonomous.
//! A monitor thread keeps the bytes of every outcome file the first time it sees one. The
//! killer SIGKILLs the daemon at random moments and starts it again. At the end the daemon
//! runs once more, cleanly, until every due expiry has happened, and is stopped; then
//! [`run`] checks the spool, the database and what every command reported against each
//! other (see [`Report`] for the figures). The short CI test (tests/tests/crash.rs) and the
//! long hand-run benchmark (`inbox-bench crash`) both call [`run`].
//!
//! The spool and database checks at the bottom of this file are shared with [`crate::race`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Value};

use crate::process::Running;

/// What to run. [`Config::new`] gives the CI defaults apart from the kill count.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `answer-inbox` binary under test.
    pub binary: PathBuf,
    /// SIGKILLs to deliver to the daemon before the workload stops.
    pub kills: usize,
    /// Worker threads, each running one command at a time.
    pub workers: usize,
    /// Seeds every random choice: the request mix, the operations, their targets, the kill
    /// moments. Process timing still varies, so a seed narrows a failure down; it does not
    /// replay it exactly.
    pub seed: u64,
    /// The longest the daemon lives before it is killed. A third of the kills fall within
    /// the first 300 ms (start-up scan, autonomous pass, expiry pass), the rest later.
    pub max_life: Duration,
    /// Give up, with an error, when the kills have not all happened by then.
    pub limit: Duration,
    /// Whether the workload cancels requests. Off, a run leaves out cancels racing answers
    /// and policies, to tell a failure there from the others.
    pub cancels: bool,
    /// Progress lines on standard error.
    pub verbose: bool,
}

impl Config {
    pub fn new(binary: PathBuf, kills: usize) -> Config {
        Config {
            binary,
            kills,
            workers: 3,
            seed: fastrand::u64(..),
            max_life: Duration::from_millis(1200),
            limit: Duration::from_secs(30 * 60),
            cancels: true,
            verbose: false,
        }
    }
}

/// The figures of one run. Every figure is counted, not estimated.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub seed: u64,
    /// Whether the workload cancelled requests ([`Config::cancels`]).
    pub cancels: bool,
    /// SIGKILLs that hit a running daemon.
    pub kills: usize,
    /// From the first start of the daemon to the end of the checks.
    pub elapsed: Duration,
    pub placed_by_ask: usize,
    pub placed_as_files: usize,
    /// Requests by their shape, e.g. `autonomous with defaults`.
    pub kinds: BTreeMap<&'static str, usize>,
    /// Final state of every request: an outcome status, `cancelled` or `pending`.
    pub states: BTreeMap<String, usize>,
    /// Final outcomes by who settled them (`operator`, `policy:autonomous`, ...).
    pub settled_by: BTreeMap<String, usize>,
    /// `answer` (answers and declines) that exited 0 and whose outcome stands.
    pub answers_written: usize,
    /// `answer` that exited 3 naming the outcome that stands.
    pub answers_refused_settled: usize,
    /// `answer` that exited 3 because the request was cancelled.
    pub answers_refused_cancelled: usize,
    /// `cancel` that exited 0 and no outcome stands.
    pub cancels_placed: usize,
    /// `cancel` that exited 0, but an outcome written at the same moment stands (the
    /// protocol lets an outcome win over a tombstone).
    pub cancels_overtaken: usize,
    /// `cancel` that exited 3 naming the outcome that stands.
    pub cancels_refused: usize,
    /// Commands run by the workers.
    pub commands: usize,
    /// Outcome files the monitor recorded while the workload ran (all checked unchanged).
    pub outcomes_monitored: usize,
    /// Settle-type events in the database (one per settled or cancelled request).
    pub settle_events: usize,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "seed: {}{}",
            self.seed,
            if self.cancels { "" } else { " (no cancels)" }
        )?;
        writeln!(
            f,
            "kills: {} (SIGKILL, each followed by a restart) in {:.1} s",
            self.kills,
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "requests: {} ({} by `ask`, {} as files): {}",
            self.placed_by_ask + self.placed_as_files,
            self.placed_by_ask,
            self.placed_as_files,
            crate::tally(&self.kinds)
        )?;
        writeln!(f, "final states: {}", crate::tally(&self.states))?;
        writeln!(f, "settled by: {}", crate::tally(&self.settled_by))?;
        writeln!(
            f,
            "answer: {} written and standing, {} refused (already settled, winner named), {} refused (cancelled)",
            self.answers_written, self.answers_refused_settled, self.answers_refused_cancelled
        )?;
        writeln!(
            f,
            "cancel: {} placed, {} placed but overtaken by an outcome, {} refused (already settled)",
            self.cancels_placed, self.cancels_overtaken, self.cancels_refused
        )?;
        writeln!(
            f,
            "commands run: {}; outcome files monitored and unchanged: {}; settle events: {}",
            self.commands, self.outcomes_monitored, self.settle_events
        )
    }
}

/// The shapes of request the workload places, and what must become of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Waits for the operator forever.
    Interactive,
    /// Expires after `timeout_seconds`; its default answers it (`defaulted`).
    ExpiresDefaulted(u64),
    /// Expires after `timeout_seconds` with no default (`expired`).
    ExpiresBare(u64),
    /// Autonomous with a default for every required question: settled at once.
    Autonomous,
    /// Autonomous without a default: waits like an interactive one, maybe with a timeout.
    AutonomousBlocked(Option<u64>),
    /// Fails validation: a `rejected` outcome. Only placed as a file (`ask` refuses it).
    Invalid,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Interactive => "interactive",
            Kind::ExpiresDefaulted(_) => "expiring with defaults",
            Kind::ExpiresBare(_) => "expiring without defaults",
            Kind::Autonomous => "autonomous with defaults",
            Kind::AutonomousBlocked(None) => "autonomous without defaults",
            Kind::AutonomousBlocked(Some(_)) => "autonomous without defaults, expiring",
            Kind::Invalid => "invalid",
        }
    }

    fn timeout(self) -> Option<u64> {
        match self {
            Kind::ExpiresDefaulted(t) | Kind::ExpiresBare(t) => Some(t),
            Kind::AutonomousBlocked(t) => t,
            _ => None,
        }
    }

    fn pick(rng: &mut fastrand::Rng) -> Kind {
        let timeout = rng.u64(1..=3);
        match rng.u32(0..100) {
            0..=24 => Kind::Interactive,
            25..=39 => Kind::ExpiresDefaulted(timeout),
            40..=54 => Kind::ExpiresBare(timeout),
            55..=74 => Kind::Autonomous,
            75..=91 => Kind::AutonomousBlocked(rng.bool().then_some(timeout)),
            _ => Kind::Invalid,
        }
    }

    /// The request file: a required yes/no `go` (with a default where the kind needs one)
    /// and an optional text `note` that answers use to carry a unique token.
    fn body(self, id: &str) -> String {
        if self == Kind::Invalid {
            // A choice without options: rejected by validation.
            return json!({"inbox": 1, "id": id, "questions": [
                {"id": "pick", "question": "Which?", "type": "choice", "options": []}]})
            .to_string();
        }
        let mut go = json!({"id": "go", "question": "Go ahead?", "type": "confirm"});
        if matches!(self, Kind::ExpiresDefaulted(_) | Kind::Autonomous) {
            go["default"] = json!(true);
        }
        let mut body = json!({
            "inbox": 1,
            "id": id,
            "title": format!("crash test {id}"),
            "source": {"app": "crash-harness"},
            "questions": [go, {"id": "note", "question": "Why?", "type": "text", "required": false}],
        });
        if matches!(self, Kind::Autonomous | Kind::AutonomousBlocked(_)) {
            body["mode"] = json!("autonomous");
        }
        if let Some(seconds) = self.timeout() {
            body["timeout_seconds"] = json!(seconds);
        }
        body.to_string()
    }
}

#[derive(Debug, Clone)]
struct PlacedRequest {
    id: String,
    kind: Kind,
}

/// One `answer` or `cancel` and what it said.
#[derive(Debug, Clone)]
struct Attempt {
    id: String,
    op: Op,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Every `answer` runs as this process's account, so every person's outcome says the same
/// `operator:<account>`: an attempt's unique `token` (`w<worker>-<serial>`), carried in its
/// answers or its reason, tells whose outcome stands.
#[derive(Debug, Clone)]
enum Op {
    /// `answer --set go=... --set note=TOKEN`: these answers.
    Answer {
        answers: Value,
    },
    /// `answer --decline "declined by TOKEN"`.
    Decline {
        token: String,
    },
    Cancel,
}

impl Op {
    /// Whether `outcome` is this attempt's own: its answers or its decline reason.
    fn wrote(&self, outcome: &Value) -> bool {
        match self {
            Op::Answer { answers } => {
                outcome["status"] == json!("answered") && outcome["answers"] == *answers
            }
            Op::Decline { token } => {
                outcome["status"] == json!("declined")
                    && outcome["reason"] == json!(decline_reason(token))
            }
            Op::Cancel => false,
        }
    }
}

/// The reason an attempt declines with, which names it.
fn decline_reason(token: &str) -> String {
    format!("declined by {token}")
}

/// State shared by the workers, the monitor and the checks.
struct Shared {
    binary: PathBuf,
    /// `answered_by` of every person's outcome: `operator:<the account running the
    /// commands>`.
    operator: String,
    cancels: bool,
    root: PathBuf,
    spool: PathBuf,
    db: PathBuf,
    stop: AtomicBool,
    next_id: AtomicUsize,
    commands: AtomicUsize,
    placed: Mutex<Vec<PlacedRequest>>,
    by_ask: AtomicUsize,
    as_files: AtomicUsize,
    attempts: Mutex<Vec<Attempt>>,
    /// Commands that failed in a way no invariant allows (exit 1, a crash, a failed ask).
    failures: Mutex<Vec<String>>,
    /// Outcome file name → its bytes when the monitor first saw it.
    seen: Mutex<HashMap<String, Vec<u8>>>,
}

/// Sets the stop flag when dropped, so that a panic in the main thread still ends the
/// worker and monitor loops and the scope around them can finish.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs the harness: workload, kills, clean restart, checks. `Err` names every violated
/// invariant (up to a limit) with the seed.
pub fn run(config: &Config) -> Result<Report, String> {
    let dir = tempfile::Builder::new()
        .prefix("inbox-crash-")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let root = dir.path().to_owned();
    let shared = Shared {
        binary: config.binary.clone(),
        operator: inbox_engine::operator::answered_by(&inbox_engine::operator::account()),
        cancels: config.cancels,
        spool: root.join("spool"),
        db: root.join("data/inbox.sqlite3"),
        root: root.clone(),
        stop: AtomicBool::new(false),
        next_id: AtomicUsize::new(0),
        commands: AtomicUsize::new(0),
        placed: Mutex::new(Vec::new()),
        by_ask: AtomicUsize::new(0),
        as_files: AtomicUsize::new(0),
        attempts: Mutex::new(Vec::new()),
        failures: Mutex::new(Vec::new()),
        seen: Mutex::new(HashMap::new()),
    };
    for area in ["tmp", "questions", "answers", "cancel"] {
        fs::create_dir_all(shared.spool.join(area)).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(root.join("bodies")).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let result = run_in(config, &shared, started);
    result.map_err(|message| {
        // Kept, so that the files behind the message can be looked at.
        let kept = dir.keep();
        format!(
            "crash harness (seed {}, kills asked {}): {message}\n(spool, database and daemon \
             logs kept in {})",
            config.seed,
            config.kills,
            kept.display()
        )
    })
}

fn run_in(config: &Config, shared: &Shared, started: Instant) -> Result<Report, String> {
    // The database is created before the workload starts: two processes opening a new
    // database at the same moment can fail to migrate it, a separate problem (see the
    // first-open test in tests/tests/crash.rs) that would hide what this harness looks for.
    let mut first = start_ready(shared, "engine-init")?;
    if first.stop() != Some(0) {
        return Err("the first daemon did not stop with exit 0 on SIGTERM".to_owned());
    }
    let mut killer_rng = fastrand::Rng::with_seed(config.seed);
    let mut kills = 0;
    let mut restarts = 0;
    std::thread::scope(|scope| -> Result<(), String> {
        let _stop = StopOnDrop(&shared.stop);
        let mut handles = Vec::new();
        for worker in 0..config.workers {
            let seed = config.seed.wrapping_add(1 + worker as u64);
            handles.push(scope.spawn(move || work(shared, worker, seed)));
        }
        let monitor = scope.spawn(move || monitor(shared));
        while kills < config.kills {
            if started.elapsed() > config.limit {
                return Err(format!(
                    "only {kills} of {} kills within {:?}",
                    config.kills, config.limit
                ));
            }
            let mut engine = start_engine(shared, restarts)?;
            restarts += 1;
            // Kill at a random moment: a third early, during the start-up scan and policy
            // passes, the rest while the loop handles the workload.
            let max = config.max_life.as_millis() as u64;
            let life = if killer_rng.u32(0..3) == 0 {
                killer_rng.u64(0..=max.min(300))
            } else {
                killer_rng.u64(max.min(300)..=max)
            };
            std::thread::sleep(Duration::from_millis(life));
            match engine.child.try_wait() {
                Ok(None) => {
                    engine
                        .child
                        .kill()
                        .map_err(|e| format!("cannot kill: {e}"))?;
                    let _ = engine.child.wait();
                    kills += 1;
                }
                Ok(Some(status)) => {
                    return Err(format!(
                        "the daemon (start #{restarts}) exited by itself with {status} after \
                         {life} ms; its stderr:\n{}",
                        tail(&shared.root.join(format!("engine-{}.err", restarts - 1)))
                    ))
                }
                Err(e) => return Err(format!("cannot check the daemon: {e}")),
            }
            if config.verbose && kills % 25 == 0 {
                eprintln!(
                    "crash: {kills} kills, {} requests, {:.0} s",
                    shared.placed.lock().unwrap().len(),
                    started.elapsed().as_secs_f64()
                );
            }
            // Sometimes leave the daemon down for a moment: commands then run without it.
            std::thread::sleep(Duration::from_millis(killer_rng.u64(0..60)));
        }
        shared.stop.store(true, Ordering::SeqCst);
        for handle in handles {
            handle.join().map_err(|_| "a worker panicked".to_owned())?;
        }
        monitor
            .join()
            .map_err(|_| "the monitor panicked".to_owned())?;
        Ok(())
    })?;

    // The workload has stopped: a clean run settles whatever is due, then stops politely.
    let last_deadline = finish_cleanly(shared, restarts)?;
    // The monitor's last look, with nothing running: outcomes the final run wrote.
    monitor_pass(shared);

    let mut report = Report {
        seed: config.seed,
        cancels: config.cancels,
        kills,
        placed_by_ask: shared.by_ask.load(Ordering::SeqCst),
        placed_as_files: shared.as_files.load(Ordering::SeqCst),
        commands: shared.commands.load(Ordering::SeqCst),
        ..Report::default()
    };
    let mut violations = Vec::new();
    violations.extend(shared.failures.lock().unwrap().iter().cloned());
    let snapshot = Snapshot::read(&shared.spool)?;
    check_spool(
        shared,
        &snapshot,
        last_deadline,
        &mut report,
        &mut violations,
    );
    check_monitored(shared, &snapshot, &mut report, &mut violations);
    check_attempts(shared, &snapshot, &mut report, &mut violations);
    let figures = check_db(&shared.db, &snapshot, "database", &mut violations)?;
    report.settle_events = figures.settle_events;
    report.elapsed = started.elapsed();
    if violations.is_empty() {
        Ok(report)
    } else {
        Err(failure(&violations, &shared.root, &report))
    }
}

/// `answer-inbox watch --no-notify` with its output in files (kept for the error message).
fn start_engine(shared: &Shared, number: usize) -> Result<Running, String> {
    let out = fs::File::create(shared.root.join(format!("engine-{number}.out")))
        .map_err(|e| e.to_string())?;
    let err = fs::File::create(shared.root.join(format!("engine-{number}.err")))
        .map_err(|e| e.to_string())?;
    let mut cmd = cli(shared, &["watch", "--no-notify"]);
    cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", shared.binary.display()))?;
    Ok(Running::adopt(child))
}

/// A command of the binary under test on this run's spool and database, isolated from the
/// caller's environment (no notifications, no fault points, no logging settings).
fn cli(shared: &Shared, args: &[&str]) -> Command {
    command(
        &shared.binary,
        &shared.spool,
        &shared.db,
        &shared.root,
        args,
    )
}

pub(crate) fn command(
    binary: &Path,
    spool: &Path,
    db: &Path,
    home: &Path,
    args: &[&str],
) -> Command {
    let mut cmd = Command::new(binary);
    cmd.args(args)
        .arg("--spool")
        .arg(spool)
        .arg("--db")
        .arg(db)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("xdg"))
        // Not the account: attribution must come from the account, never from $USER.
        .env("USER", "harness")
        .env_remove("ANSWER_INBOX_DIR")
        .env_remove("ANSWER_INBOX_DB")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("FAILPOINTS")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    cmd
}

fn run_cli(shared: &Shared, args: &[&str]) -> Result<Output, String> {
    shared.commands.fetch_add(1, Ordering::SeqCst);
    cli(shared, args)
        .output()
        .map_err(|e| format!("cannot run {} {args:?}: {e}", shared.binary.display()))
}

/// One worker: random operations until told to stop.
fn work(shared: &Shared, worker: usize, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut serial = 0;
    while !shared.stop.load(Ordering::SeqCst) {
        serial += 1;
        let target = pick_target(shared, &mut rng);
        // Without cancels, their share goes to answers.
        let roll = match rng.u32(0..100) {
            80.. if !shared.cancels => rng.u32(35..75),
            roll => roll,
        };
        let result = match (roll, target) {
            (0..=34, _) | (_, None) => place(shared, &mut rng),
            (35..=74, Some(id)) => answer(shared, &mut rng, &id, worker, serial),
            (75..=79, Some(id)) => decline(shared, &id, worker, serial),
            (_, Some(id)) => cancel(shared, &id, worker, serial),
        };
        if let Err(message) = result {
            shared.failures.lock().unwrap().push(message);
        }
    }
}

/// Mostly one of the newest requests, so that answers, cancels and policies meet on the
/// same request; sometimes any request.
fn pick_target(shared: &Shared, rng: &mut fastrand::Rng) -> Option<String> {
    let placed = shared.placed.lock().unwrap();
    if placed.is_empty() {
        return None;
    }
    let index = if rng.u32(0..4) == 0 {
        rng.usize(0..placed.len())
    } else {
        placed.len() - 1 - rng.usize(0..placed.len().min(12))
    };
    Some(placed[index].id.clone())
}

fn place(shared: &Shared, rng: &mut fastrand::Rng) -> Result<(), String> {
    let kind = Kind::pick(rng);
    let id = format!("r{:06}", shared.next_id.fetch_add(1, Ordering::SeqCst));
    let body = kind.body(&id);
    if kind != Kind::Invalid && rng.bool() {
        let file = shared.root.join("bodies").join(format!("{id}.json"));
        fs::write(&file, &body).map_err(|e| e.to_string())?;
        let out = run_cli(shared, &["ask", file.to_str().unwrap()])?;
        if out.status.code() != Some(0) || String::from_utf8_lossy(&out.stdout).trim() != id {
            return Err(format!(
                "ask {id} exited {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        shared.by_ask.fetch_add(1, Ordering::SeqCst);
    } else {
        // As a script would: the whole file in tmp/, then renamed into place.
        let tmp = shared.spool.join("tmp").join(format!("{id}.harness"));
        fs::write(&tmp, &body).map_err(|e| e.to_string())?;
        fs::rename(
            &tmp,
            shared.spool.join("questions").join(format!("{id}.json")),
        )
        .map_err(|e| e.to_string())?;
        shared.as_files.fetch_add(1, Ordering::SeqCst);
    }
    shared
        .placed
        .lock()
        .unwrap()
        .push(PlacedRequest { id, kind });
    Ok(())
}

fn answer(
    shared: &Shared,
    rng: &mut fastrand::Rng,
    id: &str,
    worker: usize,
    serial: usize,
) -> Result<(), String> {
    // A unique note per attempt: the standing outcome then says whose it is.
    let token = format!("w{worker}-{serial}");
    let go = rng.bool();
    let out = run_cli(
        shared,
        &[
            "answer",
            id,
            "--set",
            &format!("go={}", if go { "yes" } else { "no" }),
            "--set",
            &format!("note={token}"),
        ],
    )?;
    record(
        shared,
        id,
        Op::Answer {
            answers: json!({"go": go, "note": token}),
        },
        &out,
    );
    Ok(())
}

fn decline(shared: &Shared, id: &str, worker: usize, serial: usize) -> Result<(), String> {
    let token = format!("w{worker}-{serial}");
    let out = run_cli(
        shared,
        &["answer", id, "--decline", &decline_reason(&token)],
    )?;
    record(shared, id, Op::Decline { token }, &out);
    Ok(())
}

fn cancel(shared: &Shared, id: &str, worker: usize, serial: usize) -> Result<(), String> {
    let reason = format!("withdrawn by w{worker}-{serial}");
    let out = run_cli(shared, &["cancel", id, "--reason", &reason])?;
    record(shared, id, Op::Cancel, &out);
    Ok(())
}

fn record(shared: &Shared, id: &str, op: Op, out: &Output) {
    shared.attempts.lock().unwrap().push(Attempt {
        id: id.to_owned(),
        op,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    });
}

fn monitor(shared: &Shared) {
    while !shared.stop.load(Ordering::SeqCst) {
        monitor_pass(shared);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Records the bytes of every outcome file not seen before. Outcomes are linked into place
/// whole, so a name that exists has its final content.
fn monitor_pass(shared: &Shared) {
    let Ok(entries) = fs::read_dir(shared.spool.join("answers")) else {
        return;
    };
    let names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    let mut seen = shared.seen.lock().unwrap();
    for name in names {
        if let std::collections::hash_map::Entry::Vacant(entry) = seen.entry(name) {
            if let Ok(bytes) = fs::read(shared.spool.join("answers").join(entry.key())) {
                entry.insert(bytes);
            }
        }
    }
}

/// Starts the daemon to run without being killed, waits until every expiry due has
/// happened, and stops it with SIGTERM. Returns the latest deadline of any request.
fn finish_cleanly(shared: &Shared, number: usize) -> Result<SystemTime, String> {
    let mut engine =
        start_ready(shared, "engine-final").map_err(|e| format!("after {number} restarts: {e}"))?;
    let placed = shared.placed.lock().unwrap().clone();
    let deadlines: Vec<(String, SystemTime)> = placed
        .iter()
        .filter_map(|p| Some((p.id.clone(), deadline_of(shared, &p.id, p.kind)?)))
        .collect();
    let last = deadlines
        .iter()
        .map(|(_, d)| *d)
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    // Quiet: every deadline has passed and each of those requests is settled or withdrawn;
    // every autonomous request with defaults is settled or withdrawn.
    let answers = shared.spool.join("answers");
    let cancel = shared.spool.join("cancel");
    let open = |id: &str| !answers.join(format!("{id}.json")).exists() && !cancel.join(id).exists();
    let quiet = wait_for(Duration::from_secs(60), || {
        SystemTime::now() > last
            && deadlines.iter().all(|(id, _)| !open(id))
            && placed
                .iter()
                .filter(|p| p.kind == Kind::Autonomous)
                .all(|p| !open(&p.id))
    });
    if !quiet {
        let late: Vec<&str> = deadlines
            .iter()
            .filter(|(id, d)| *d < SystemTime::now() && open(id))
            .map(|(id, _)| id.as_str())
            .collect();
        return Err(format!(
            "after the clean restart these requests are still open past their deadline: {late:?}"
        ));
    }
    match engine.stop() {
        Some(0) => Ok(last),
        other => Err(format!(
            "the clean daemon did not stop with exit 0 on SIGTERM but {other:?}; its stderr:\n{}",
            tail(&shared.root.join("engine-final.err"))
        )),
    }
}

/// Starts the daemon with its standard output read, and waits for its `ready` line (the
/// start-up scan and policy passes done). Standard error goes to `<name>.err`.
fn start_ready(shared: &Shared, name: &str) -> Result<Running, String> {
    let err_path = shared.root.join(format!("{name}.err"));
    let err = fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let mut cmd = cli(shared, &["watch", "--no-notify"]);
    cmd.stderr(Stdio::from(err)).stdout(Stdio::piped());
    let child = cmd.spawn().map_err(|e| e.to_string())?;
    let mut engine = Running::adopt(child);
    let lines = read_lines(engine.child.stdout.take().unwrap());
    let ready = wait_for(Duration::from_secs(60), || {
        lines.lock().unwrap().iter().any(|l| l.contains(" ready: "))
    });
    if ready {
        Ok(engine)
    } else {
        Err(format!(
            "the daemon did not get ready; its stderr:\n{}",
            tail(&err_path)
        ))
    }
}

/// When a request with a timeout expires: its file's modification time plus the timeout.
fn deadline_of(shared: &Shared, id: &str, kind: Kind) -> Option<SystemTime> {
    let seconds = kind.timeout()?;
    let placed = fs::metadata(shared.spool.join("questions").join(format!("{id}.json")))
        .and_then(|m| m.modified())
        .ok()?;
    Some(placed + Duration::from_secs(seconds))
}

/// Every placed request has exactly one fate, and fates match the request's shape.
fn check_spool(
    shared: &Shared,
    snapshot: &Snapshot,
    last_deadline: SystemTime,
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    let placed = shared.placed.lock().unwrap();
    let ids: BTreeSet<&str> = placed.iter().map(|p| p.id.as_str()).collect();
    for id in snapshot.requests.keys() {
        if !ids.contains(id.as_str()) {
            violations.push(format!(
                "questions/{id}.json was never placed by the workload"
            ));
        }
    }
    for id in snapshot.outcomes.keys() {
        if !snapshot.requests.contains_key(id) {
            violations.push(format!("answers/{id}.json has no request"));
        }
    }
    let now = SystemTime::now();
    for request in placed.iter() {
        *report.kinds.entry(request.kind.name()).or_default() += 1;
        let id = &request.id;
        if !snapshot.requests.contains_key(id) {
            violations.push(format!("request {id} was placed but its file is gone"));
            continue;
        }
        let state = match snapshot.state(id) {
            Ok(state) => state,
            Err(message) => {
                violations.push(message);
                continue;
            }
        };
        *report.states.entry(state.clone()).or_default() += 1;
        if let Some(outcome) = snapshot.outcome(id) {
            let by = outcome["answered_by"].as_str().unwrap_or("?");
            let who = if by == shared.operator {
                "operator"
            } else {
                if by.starts_with("operator:") {
                    violations.push(format!(
                        "answers/{id}.json is attributed to {by}, not to the account that \
                         answered ({})",
                        shared.operator
                    ));
                }
                by
            };
            *report.settled_by.entry(who.to_owned()).or_default() += 1;
            let expected_sha = inbox_protocol::sha256_hex(&snapshot.requests[id].0);
            if outcome["request_sha256"] != json!(expected_sha) {
                violations.push(format!(
                    "answers/{id}.json names request_sha256 {} but the request's is {expected_sha}",
                    outcome["request_sha256"]
                ));
            }
        }
        let allowed: &[&str] = match request.kind {
            Kind::Invalid => &["rejected"],
            Kind::Autonomous => &["answered", "declined", "defaulted", "cancelled"],
            Kind::ExpiresDefaulted(_) => &["answered", "declined", "defaulted", "cancelled"],
            Kind::ExpiresBare(_) | Kind::AutonomousBlocked(Some(_)) => {
                &["answered", "declined", "expired", "cancelled"]
            }
            Kind::Interactive | Kind::AutonomousBlocked(None) => {
                &["answered", "declined", "cancelled", "pending"]
            }
        };
        if !allowed.contains(&state.as_str()) {
            violations.push(format!(
                "request {id} ({}) ended {state}; expected one of {allowed:?}",
                request.kind.name()
            ));
        }
        if state == "pending" {
            if let Some(deadline) = deadline_of(shared, id, request.kind) {
                if deadline < now {
                    violations.push(format!(
                        "request {id} is still pending {:?} after its deadline",
                        now.duration_since(deadline).unwrap_or_default()
                    ));
                }
            }
        }
    }
    if last_deadline > now {
        violations.push("checked before the last deadline had passed".to_owned());
    }
}

/// No outcome the monitor saw was lost or rewritten.
fn check_monitored(
    shared: &Shared,
    snapshot: &Snapshot,
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    let seen = shared.seen.lock().unwrap();
    report.outcomes_monitored = seen.len();
    for (name, bytes) in seen.iter() {
        let Some(id) = name.strip_suffix(".json") else {
            violations.push(format!("answers/{name} is not an outcome file name"));
            continue;
        };
        match snapshot.outcomes.get(id) {
            None => violations.push(format!(
                "answers/{name} was seen during the run and is gone"
            )),
            Some((now, _)) if now != bytes => violations.push(format!(
                "answers/{name} was rewritten: first seen as {}, now {}",
                String::from_utf8_lossy(bytes).trim(),
                String::from_utf8_lossy(now).trim()
            )),
            Some(_) => {}
        }
    }
    for id in snapshot.outcomes.keys() {
        if !seen.contains_key(&format!("{id}.json")) {
            violations.push(format!(
                "answers/{id}.json exists but the monitor never saw it (its last pass was after the final run)"
            ));
        }
    }
}

/// What each `answer` and `cancel` said agrees with the outcome that stands.
fn check_attempts(
    shared: &Shared,
    snapshot: &Snapshot,
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    let attempts = shared.attempts.lock().unwrap();
    for attempt in attempts.iter() {
        let id = &attempt.id;
        let outcome = snapshot.outcome(id);
        let cancelled = snapshot.tombstones.contains(id);
        let what = match &attempt.op {
            Op::Answer { answers } => format!("answer {id} with {answers}"),
            Op::Decline { token } => format!("answer {id} --decline {:?}", decline_reason(token)),
            Op::Cancel => format!("cancel {id}"),
        };
        let said = format!(
            "{what} exited {:?} (stderr: {})",
            attempt.code,
            attempt.stderr.trim()
        );
        match (&attempt.op, attempt.code) {
            (Op::Answer { .. } | Op::Decline { .. }, Some(0)) => {
                let Some(outcome) = outcome else {
                    violations.push(format!("{said}, but there is no outcome file"));
                    continue;
                };
                let printed: Value = serde_json::from_str(&attempt.stdout).unwrap_or(Value::Null);
                if outcome["answered_by"] != json!(shared.operator) || printed != *outcome {
                    violations.push(format!(
                        "{said}, printing {}, but the standing outcome is {outcome}",
                        attempt.stdout.trim()
                    ));
                    continue;
                }
                let expected_status = match &attempt.op {
                    Op::Answer { answers } => {
                        if outcome["answers"] != *answers {
                            violations.push(format!(
                                "{said}: its answers {answers} are not the outcome's {}",
                                outcome["answers"]
                            ));
                        }
                        "answered"
                    }
                    Op::Decline { token } => {
                        if outcome["reason"] != json!(decline_reason(token)) {
                            violations.push(format!(
                                "{said}: its reason is not the outcome's {}",
                                outcome["reason"]
                            ));
                        }
                        "declined"
                    }
                    Op::Cancel => unreachable!("matched above"),
                };
                if outcome["status"] != json!(expected_status) {
                    violations.push(format!("{said}, but the outcome is {outcome}"));
                }
                report.answers_written += 1;
            }
            (Op::Answer { .. } | Op::Decline { .. }, Some(3)) => {
                if attempt.stderr.contains("was cancelled by its asker") {
                    if cancelled {
                        report.answers_refused_cancelled += 1;
                    } else {
                        violations.push(format!("{said}, but there is no tombstone"));
                    }
                    continue;
                }
                match settled_named(&attempt.stderr) {
                    Some((status, winner)) => {
                        let standing =
                            outcome.map(|o| (o["status"].clone(), o["answered_by"].clone()));
                        if outcome.is_some_and(|o| attempt.op.wrote(o)) {
                            violations.push(format!("{said}: the outcome that stands is its own"));
                        } else if standing != Some((json!(status), json!(winner))) {
                            violations.push(format!(
                                "{said}: it names {status} by {winner}, but the file says {:?}",
                                outcome.map(|o| o.to_string())
                            ));
                        } else {
                            report.answers_refused_settled += 1;
                        }
                    }
                    None => violations.push(format!("{said}: it names no winner")),
                }
            }
            (Op::Cancel, Some(0)) => {
                if !cancelled {
                    violations.push(format!("{said}, but there is no tombstone"));
                } else if outcome.is_some() {
                    report.cancels_overtaken += 1;
                } else {
                    report.cancels_placed += 1;
                }
            }
            (Op::Cancel, Some(3)) => match settled_named(&attempt.stderr) {
                Some((status, winner)) => {
                    let standing = outcome.map(|o| (o["status"].clone(), o["answered_by"].clone()));
                    if standing != Some((json!(status), json!(winner))) {
                        violations.push(format!(
                            "{said}: it names {status} by {winner}, but the file says {:?}",
                            outcome.map(|o| o.to_string())
                        ));
                    } else {
                        report.cancels_refused += 1;
                    }
                }
                None => violations.push(format!("{said}: it names no winner")),
            },
            _ => violations.push(format!("{said}: an exit code no invariant allows")),
        }
    }
}

/// `... already settled: STATUS by ANSWERED_BY at TIME` → (STATUS, ANSWERED_BY).
pub(crate) fn settled_named(stderr: &str) -> Option<(String, String)> {
    let rest = stderr.split("already settled: ").nth(1)?;
    let (status, rest) = rest.split_once(" by ")?;
    let winner = rest.split_whitespace().next()?;
    let winner = winner.trim_end_matches(';');
    Some((status.trim().to_owned(), winner.to_owned()))
}

/// Polls `check` every 20 ms until it holds or `patience` has passed; whether it held.
pub(crate) fn wait_for(patience: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + patience;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Collects a child's output lines on a thread, as they come.
pub(crate) fn read_lines(
    stream: impl std::io::Read + Send + 'static,
) -> std::sync::Arc<Mutex<Vec<String>>> {
    use std::io::BufRead;
    let lines = std::sync::Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stream)
            .lines()
            .map_while(Result::ok)
        {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

/// The last lines of a log file, for error messages.
pub(crate) fn tail(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// The message of a failed run: the first violations, the figures of the run, and every
/// violation in `violations.txt` in the kept directory.
pub(crate) fn failure(violations: &[String], root: &Path, report: &dyn fmt::Display) -> String {
    let all = root.join("violations.txt");
    let _ = fs::write(&all, violations.join("\n") + "\n");
    format!(
        "{}\n(every violation is in {})\nfigures of the run:\n{report}",
        violations_message(violations),
        all.display()
    )
}

/// The first violations (all of them would drown the message), and how many there were.
fn violations_message(violations: &[String]) -> String {
    let shown: Vec<&str> = violations.iter().take(25).map(String::as_str).collect();
    format!(
        "{} violation(s):\n  {}{}",
        violations.len(),
        shown.join("\n  "),
        if violations.len() > shown.len() {
            "\n  ..."
        } else {
            ""
        }
    )
}

// ---- The spool and the database, as they are at the end: shared with `race`. ----

/// The spool's files: requests (bytes, placed time), outcomes (bytes, parsed), tombstones.
pub(crate) struct Snapshot {
    pub requests: BTreeMap<String, (Vec<u8>, SystemTime)>,
    pub outcomes: BTreeMap<String, (Vec<u8>, Value)>,
    pub tombstones: BTreeSet<String>,
}

impl Snapshot {
    pub fn read(spool: &Path) -> Result<Snapshot, String> {
        let names = |area: &str| -> Result<Vec<String>, String> {
            let dir = spool.join(area);
            let mut names = Vec::new();
            for entry in fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
                let entry = entry.map_err(|e| e.to_string())?;
                names.push(
                    entry
                        .file_name()
                        .into_string()
                        .map_err(|n| format!("{n:?} in {area}/ is not UTF-8"))?,
                );
            }
            Ok(names)
        };
        let mut snapshot = Snapshot {
            requests: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            tombstones: BTreeSet::new(),
        };
        for name in names("questions")? {
            let id = name
                .strip_suffix(".json")
                .ok_or_else(|| format!("questions/{name}: not a request file name"))?;
            let path = spool.join("questions").join(&name);
            let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let placed = fs::metadata(&path)
                .and_then(|m| m.modified())
                .map_err(|e| e.to_string())?;
            snapshot.requests.insert(id.to_owned(), (bytes, placed));
        }
        for name in names("answers")? {
            let id = name
                .strip_suffix(".json")
                .ok_or_else(|| format!("answers/{name}: not an outcome file name"))?;
            let bytes = fs::read(spool.join("answers").join(&name)).map_err(|e| e.to_string())?;
            let value: Value = serde_json::from_slice(&bytes)
                .map_err(|e| format!("answers/{name} is not JSON: {e}"))?;
            if value["id"] != json!(id) {
                return Err(format!("answers/{name} names id {}", value["id"]));
            }
            snapshot.outcomes.insert(id.to_owned(), (bytes, value));
        }
        snapshot.tombstones = names("cancel")?.into_iter().collect();
        Ok(snapshot)
    }

    pub fn outcome(&self, id: &str) -> Option<&Value> {
        self.outcomes.get(id).map(|(_, value)| value)
    }

    /// What the spool says of a request: its outcome's status (an outcome stands, even
    /// over a tombstone), else `cancelled` when a tombstone exists, else `pending`.
    pub fn state(&self, id: &str) -> Result<String, String> {
        match self.outcome(id) {
            Some(outcome) => outcome["status"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("answers/{id}.json has no status")),
            None if self.tombstones.contains(id) => Ok("cancelled".to_owned()),
            None => Ok("pending".to_owned()),
        }
    }
}

/// Event kinds that settle a request: the outcome statuses and `cancelled`.
pub(crate) const SETTLE_KINDS: &[&str] = &[
    "answered",
    "defaulted",
    "declined",
    "expired",
    "rejected",
    "cancelled",
];

pub(crate) struct DbFigures {
    pub settle_events: usize,
}

/// A database, opened read-only, against the spool: integrity; one row per request with
/// the spool's state; the stored outcome equal to the file; at most one outcome event per
/// request (never settled twice), and events that lead to the row's state (none for a
/// pending request).
pub(crate) fn check_db(
    db: &Path,
    snapshot: &Snapshot,
    label: &str,
    violations: &mut Vec<String>,
) -> Result<DbFigures, String> {
    let fail = |e: rusqlite::Error| format!("{label} {}: {e}", db.display());
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(fail)?;
    let integrity: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(fail)?;
    if integrity != ["ok"] {
        violations.push(format!("{label}: integrity_check says {integrity:?}"));
    }
    let rows: BTreeMap<String, String> = conn
        .prepare("SELECT id, status FROM requests")
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .map_err(fail)?;
    let stored: BTreeMap<String, String> = conn
        .prepare("SELECT request_id, outcome_json FROM outcomes")
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .map_err(fail)?;
    let mut events: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let placeholders = SETTLE_KINDS
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut settle_events = 0;
    conn.prepare(&format!(
        "SELECT request_id, kind FROM events WHERE kind IN ({placeholders}) ORDER BY seq"
    ))
    .and_then(|mut s| {
        let found: Vec<(Option<String>, String)> = s
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (id, kind) in found {
            settle_events += 1;
            events.entry(id.unwrap_or_default()).or_default().push(kind);
        }
        Ok(())
    })
    .map_err(fail)?;

    for id in snapshot.requests.keys() {
        let Ok(expected) = snapshot.state(id) else {
            continue; // reported by the caller's spool check
        };
        match rows.get(id) {
            None => violations.push(format!("{label}: no row for request {id}")),
            Some(status) if *status != expected => {
                violations.push(format!(
                "{label}: request {id} is {status} in the database but {expected} in the spool \
                 (outcome file: {}, tombstone: {})",
                snapshot.outcome(id).map_or("none".to_owned(), |o| o.to_string()),
                snapshot.tombstones.contains(id)
            ))
            }
            Some(_) => {}
        }
        match (snapshot.outcome(id), stored.get(id)) {
            (Some(file), Some(json)) => {
                let in_db: Value = serde_json::from_str(json).unwrap_or(Value::Null);
                if in_db != *file {
                    violations.push(format!(
                        "{label}: the stored outcome of {id} differs from the file: {json} vs {file}"
                    ));
                }
            }
            (None, Some(json)) => violations.push(format!(
                "{label}: an outcome is stored for {id} but the spool has none: {json}"
            )),
            (Some(_), None) if rows.contains_key(id) => {
                violations.push(format!("{label}: no stored outcome for {id}"))
            }
            _ => {}
        }
        let kinds = events.get(id).map(Vec::as_slice).unwrap_or_default();
        let status = rows.get(id).map(String::as_str).unwrap_or("pending");
        // One outcome event at most (never settled twice), of the row's status. A cancel
        // may be logged before it only when a racing writer linked the outcome after the
        // tombstone: both files exist, and the outcome stands.
        let fine = match (status, kinds) {
            ("pending", []) => true,
            (status, [kind]) => kind == status,
            (status, [first, kind]) => {
                first == "cancelled"
                    && kind == status
                    && status != "cancelled"
                    && snapshot.tombstones.contains(id)
            }
            _ => false,
        };
        if !fine {
            violations.push(format!(
                "{label}: request {id} is {status} with settle events {kinds:?} (expected one \
                 of its status, or `cancelled` then its outcome status when an outcome \
                 overtook the tombstone)"
            ));
        }
    }
    for id in rows.keys() {
        if !snapshot.requests.contains_key(id) {
            violations.push(format!(
                "{label}: a row for {id}, whose request file is gone"
            ));
        }
    }
    if let Some(kinds) = events.get("") {
        violations.push(format!(
            "{label}: settle events without a request: {kinds:?}"
        ));
    }
    Ok(DbFigures { settle_events })
}
