//! Several inboxes on one spool: every request is raced by several writers, and exactly one
//! outcome may come out, which every inbox then agrees on.
//!
//! N `answer-inbox watch --no-notify` daemons (optionally `--poll`) run on ONE spool, each
//! with its own database. Requests are placed as files; for each one, N `answer-inbox
//! answer` commands (one per daemon's database, answerer k answering `pick=e<k>`) are
//! started at the same moment, against the daemons' own policies. Every answerer runs as
//! the same OS account, so every person's outcome says `operator:<account>`; which
//! answerer won is told by the answer it carries:
//! - interactive requests: the answerers start once every daemon has reported the request,
//!   so they race each other only, and every daemon must log the winner;
//! - autonomous requests with defaults: the answerers start as soon as the file is in place
//!   (with `--poll`, at a random moment within one poll interval), racing N autonomous
//!   policies (and the daemons' ingest);
//! - requests with `timeout_seconds: 1` (with a default, or without): the answerers start
//!   around the deadline, racing N expiry timers.
//!
//! Then [`run`] checks: one outcome file per request, from a racer allowed to settle it
//! (a person's answer attributed to this process's account, carrying one answerer's pick,
//! written by that answerer's database); every daemon's database holds that outcome (the
//! database checks are those of [`crate::crash`]); every answerer that lost exited 3 naming
//! the real winner (and the standing answer is not its own), and the one that won printed
//! the standing outcome, its own answer; every settle a daemon logs names the winner, and
//! a daemon logs the settle of every request it logged as ingested. (A daemon logs nothing
//! about a request it never saw pending, because the answerer sharing its database
//! recorded it, settled, first: [`Report::unlogged`] counts those.) The CI test
//! (tests/tests/race.rs) and the hand-run benchmark (`inbox-bench race`) both call [`run`].

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::fs;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::crash::{check_db, command, failure, settled_named, tail, wait_for, Snapshot};
use crate::process::Running;

/// What to run. [`Config::new`] gives the defaults for the rest.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `answer-inbox` binary under test.
    pub binary: PathBuf,
    /// Daemons on the one spool, each with its own database and its own answerer.
    pub engines: usize,
    pub requests: usize,
    /// `watch --poll` (the polling watcher, for network filesystems) instead of inotify.
    pub poll: bool,
    /// Seeds the request mix and the answerers' timing around deadlines.
    pub seed: u64,
    /// Threads starting answerers; each starts `engines` commands at once.
    pub workers: usize,
    /// Requests placed but not yet raced, at most: keeps the answerers close behind the
    /// placing, so that autonomous requests are raced while their policy runs.
    pub in_flight: usize,
    /// Progress lines on standard error.
    pub verbose: bool,
}

impl Config {
    pub fn new(binary: PathBuf, engines: usize, requests: usize, poll: bool) -> Config {
        Config {
            binary,
            engines,
            requests,
            poll,
            seed: fastrand::u64(..),
            workers: 4,
            in_flight: 24,
            verbose: false,
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub engines: usize,
    pub poll: bool,
    pub seed: u64,
    pub requests: usize,
    /// From placing the first request to the end of the checks.
    pub elapsed: Duration,
    /// Requests by their shape.
    pub kinds: BTreeMap<&'static str, usize>,
    /// Standing outcomes by racer kind: `answerer`, `policy:autonomous`, `policy:expiry`.
    pub wins: BTreeMap<String, usize>,
    /// Standing outcomes by the database whose instance wrote them (daemon and answerer
    /// of one database share its instance id).
    pub wins_by_engine: Vec<usize>,
    /// Outcome statuses.
    pub statuses: BTreeMap<String, usize>,
    /// `answer` commands run, that won (exit 0), and that lost (exit 3, winner named).
    pub answerers: usize,
    pub answerers_won: usize,
    pub answerers_lost: usize,
    /// Settle lines in the daemons' logs, all naming the winner.
    pub settles_logged: usize,
    /// Per daemon: requests its log never mentions, because the answerer sharing its
    /// database recorded them, settled, before the daemon saw the file.
    pub unlogged: Vec<usize>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} daemons ({}), {} requests, seed {}: {:.1} s",
            self.engines,
            if self.poll { "--poll" } else { "inotify" },
            self.requests,
            self.seed,
            self.elapsed.as_secs_f64()
        )?;
        writeln!(f, "requests: {}", crate::tally(&self.kinds))?;
        writeln!(f, "winners: {}", crate::tally(&self.wins))?;
        writeln!(
            f,
            "outcomes written per database: {:?}",
            self.wins_by_engine
        )?;
        writeln!(f, "statuses: {}", crate::tally(&self.statuses))?;
        writeln!(
            f,
            "answerers: {} run, {} won, {} lost (exit 3, naming the winner)",
            self.answerers, self.answerers_won, self.answerers_lost
        )?;
        writeln!(
            f,
            "daemon logs: {} settle lines, all naming the winner; requests a daemon never \
             logged (its database's answerer recorded them first): {:?}",
            self.settles_logged, self.unlogged
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Interactive,
    Autonomous,
    ExpiresDefaulted,
    ExpiresBare,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Interactive => "interactive",
            Kind::Autonomous => "autonomous with defaults",
            Kind::ExpiresDefaulted => "expiring with defaults",
            Kind::ExpiresBare => "expiring without defaults",
        }
    }

    fn pick(rng: &mut fastrand::Rng) -> Kind {
        match rng.u32(0..100) {
            0..=24 => Kind::Interactive,
            25..=59 => Kind::Autonomous,
            60..=79 => Kind::ExpiresDefaulted,
            _ => Kind::ExpiresBare,
        }
    }

    /// Who may settle a request of this kind (as [`racer_of`] names them): the answerers, as `operator` (this
    /// process's `operator:<account>`), and the policy the kind has.
    fn may_win(self, by: &str, operator: &str) -> bool {
        by == operator
            || match self {
                Kind::Interactive => false,
                Kind::Autonomous => by == "policy:autonomous",
                Kind::ExpiresDefaulted | Kind::ExpiresBare => by == "policy:expiry",
            }
    }

    /// One choice question: answerer k picks `e<k>`; the default, where there is one, is
    /// `auto`.
    fn body(self, id: &str, engines: usize) -> String {
        let mut options: Vec<String> = (0..engines).map(|k| format!("e{k}")).collect();
        options.push("auto".to_owned());
        let mut pick = json!({"id": "pick", "question": "Which inbox answers?", "type": "choice",
            "options": options});
        if matches!(self, Kind::Autonomous | Kind::ExpiresDefaulted) {
            pick["default"] = json!("auto");
        }
        let mut body = json!({"inbox": 1, "id": id, "title": format!("race {id}"),
            "source": {"app": "race-harness"}, "questions": [pick]});
        match self {
            Kind::Autonomous => body["mode"] = json!("autonomous"),
            Kind::ExpiresDefaulted | Kind::ExpiresBare => body["timeout_seconds"] = json!(1),
            Kind::Interactive => {}
        }
        body.to_string()
    }
}

/// When a request's answerers start.
#[derive(Debug, Clone, Copy)]
enum Fire {
    At(Instant),
    /// Once every daemon has logged the request as ingested.
    AllIngested {
        since: Instant,
    },
}

#[derive(Debug, Clone)]
struct Job {
    id: String,
    kind: Kind,
    fire: Fire,
}

/// One answerer's result.
#[derive(Debug, Clone)]
struct Answered {
    engine: usize,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A daemon's standard output: every line, and the ids it reported ingested.
#[derive(Default)]
struct EngineLog {
    lines: Vec<String>,
    ingested: HashSet<String>,
}

struct Daemon {
    running: Running,
    log: Arc<Mutex<EngineLog>>,
    reader: Option<JoinHandle<()>>,
    db: PathBuf,
    stderr: PathBuf,
}

struct Shared<'a> {
    config: &'a Config,
    /// `answered_by` of every answerer's outcome: `operator:<the account running them>`.
    operator: String,
    root: PathBuf,
    spool: PathBuf,
    logs: Vec<Arc<Mutex<EngineLog>>>,
    dbs: Vec<PathBuf>,
    queue: Mutex<Vec<Job>>,
    placing_done: AtomicBool,
    in_flight: AtomicUsize,
    results: Mutex<BTreeMap<String, (Kind, Vec<Answered>)>>,
    violations: Mutex<Vec<String>>,
}

/// Runs the race and its checks. `Err` names every violated invariant (up to a limit).
pub fn run(config: &Config) -> Result<Report, String> {
    let dir = tempfile::Builder::new()
        .prefix("inbox-race-")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let label = format!(
        "race harness ({} daemons, {}, {} requests, seed {})",
        config.engines,
        if config.poll { "--poll" } else { "inotify" },
        config.requests,
        config.seed
    );
    let result = run_in(config, dir.path());
    result.map_err(|message| {
        // Kept, so that the files behind the message can be looked at.
        let kept = dir.keep();
        format!(
            "{label}: {message}\n(spool, databases and daemon logs kept in {})",
            kept.display()
        )
    })
}

fn run_in(config: &Config, root: &Path) -> Result<Report, String> {
    let spool = root.join("spool");
    for area in ["tmp", "questions", "answers", "cancel"] {
        fs::create_dir_all(spool.join(area)).map_err(|e| e.to_string())?;
    }
    let mut daemons = Vec::new();
    for k in 0..config.engines {
        daemons.push(start_daemon(config, root, &spool, k)?);
    }
    for (k, daemon) in daemons.iter().enumerate() {
        let ready = wait_for(Duration::from_secs(60), || {
            daemon
                .log
                .lock()
                .unwrap()
                .lines
                .iter()
                .any(|l| l.contains(" ready: "))
        });
        if !ready {
            return Err(format!(
                "daemon {k} did not get ready; its stderr:\n{}",
                tail(&daemon.stderr)
            ));
        }
    }
    let shared = Shared {
        config,
        operator: inbox_engine::operator::answered_by(&inbox_engine::operator::account()),
        root: root.to_owned(),
        spool: spool.clone(),
        logs: daemons.iter().map(|d| d.log.clone()).collect(),
        dbs: daemons.iter().map(|d| d.db.clone()).collect(),
        queue: Mutex::new(Vec::new()),
        placing_done: AtomicBool::new(false),
        in_flight: AtomicUsize::new(0),
        results: Mutex::new(BTreeMap::new()),
        violations: Mutex::new(Vec::new()),
    };
    let started = Instant::now();
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut placed: Vec<(String, Kind)> = Vec::new();
    std::thread::scope(|scope| -> Result<(), String> {
        // Ends the workers' loops if placing fails half-way.
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let done = Done(&shared.placing_done);
        let workers: Vec<_> = (0..config.workers)
            .map(|_| scope.spawn(|| race_worker(&shared)))
            .collect();
        let mut rng = fastrand::Rng::with_seed(config.seed);
        for n in 0..config.requests {
            while shared.in_flight.load(Ordering::SeqCst) >= config.in_flight {
                std::thread::sleep(Duration::from_millis(1));
            }
            let kind = Kind::pick(&mut rng);
            let id = format!("q{n:05}");
            let tmp = spool.join("tmp").join(format!("{id}.harness"));
            fs::write(&tmp, kind.body(&id, config.engines)).map_err(|e| e.to_string())?;
            fs::rename(&tmp, spool.join("questions").join(format!("{id}.json")))
                .map_err(|e| e.to_string())?;
            let now = Instant::now();
            let fire = match kind {
                Kind::Interactive => Fire::AllIngested { since: now },
                // With inotify a daemon sees the file at once, so the answerers race its
                // ingest and policy by starting at once too. A polling daemon sees it at
                // the next poll (every 2 s), so they start at a random moment over one
                // poll interval: otherwise they would always be first.
                Kind::Autonomous if config.poll => {
                    Fire::At(now + Duration::from_millis(rng.u64(0..2500)))
                }
                Kind::Autonomous => Fire::At(now),
                // Around the deadline, mostly just before it: each answerer needs a few
                // milliseconds to start and check the request.
                Kind::ExpiresDefaulted | Kind::ExpiresBare => {
                    Fire::At(now + Duration::from_millis(800 + rng.u64(0..250)))
                }
            };
            shared.in_flight.fetch_add(1, Ordering::SeqCst);
            shared.queue.lock().unwrap().push(Job {
                id: id.clone(),
                kind,
                fire,
            });
            *kinds.entry(kind.name()).or_default() += 1;
            placed.push((id, kind));
            if config.verbose && (n + 1) % 200 == 0 {
                eprintln!(
                    "race: {} placed, {:.0} s",
                    n + 1,
                    started.elapsed().as_secs_f64()
                );
            }
        }
        drop(done);
        for worker in workers {
            worker
                .join()
                .map_err(|_| "an answering worker panicked".to_owned())?;
        }
        Ok(())
    })?;

    // Every daemon has logged the settle of every request it logged as ingested.
    let outcomes_in = wait_for(Duration::from_secs(60), || {
        placed
            .iter()
            .all(|(id, _)| spool.join("answers").join(format!("{id}.json")).exists())
    });
    let logs_complete = wait_for(Duration::from_secs(60), || {
        shared.logs.iter().all(|log| {
            let log = log.lock().unwrap();
            let settled = settle_lines(&log.lines);
            log.ingested.iter().all(|id| settled.contains_key(id))
        })
    });
    for (k, daemon) in daemons.iter_mut().enumerate() {
        let code = daemon.running.stop();
        if code != Some(0) {
            shared.violations.lock().unwrap().push(format!(
                "daemon {k} did not stop with exit 0 on SIGTERM but {code:?}; its stderr:\n{}",
                tail(&daemon.stderr)
            ));
        }
        if let Some(reader) = daemon.reader.take() {
            let _ = reader.join();
        }
        // The log as a file too, for a failure's kept directory.
        let lines = daemon.log.lock().unwrap().lines.join("\n");
        let _ = fs::write(root.join(format!("engine-{k}.out")), lines + "\n");
    }
    let mut violations = std::mem::take(&mut *shared.violations.lock().unwrap());
    if !outcomes_in {
        violations.push("not every request had an outcome file 60 s after the race".to_owned());
    }
    if !logs_complete {
        violations.push(
            "60 s after the race, a daemon had still not logged the settle of a request it \
             logged as ingested"
                .to_owned(),
        );
    }

    let mut report = Report {
        engines: config.engines,
        poll: config.poll,
        seed: config.seed,
        requests: placed.len(),
        kinds,
        wins_by_engine: vec![0; config.engines],
        unlogged: vec![0; config.engines],
        ..Report::default()
    };
    let snapshot = Snapshot::read(&spool)?;
    let instances = instance_ids(&shared.dbs)?;
    check_outcomes(
        &shared,
        &placed,
        &snapshot,
        &instances,
        &mut report,
        &mut violations,
    );
    check_answerers(&shared, &snapshot, &mut report, &mut violations);
    for (k, db) in shared.dbs.iter().enumerate() {
        check_db(db, &snapshot, &format!("database {k}"), &mut violations)?;
    }
    check_logs(&shared, &placed, &snapshot, &mut report, &mut violations);
    report.elapsed = started.elapsed();
    if violations.is_empty() {
        Ok(report)
    } else {
        Err(failure(&violations, root, &report))
    }
}

fn start_daemon(config: &Config, root: &Path, spool: &Path, k: usize) -> Result<Daemon, String> {
    let db = root.join(format!("data/engine-{k}.sqlite3"));
    let stderr = root.join(format!("engine-{k}.err"));
    let mut args = vec!["watch", "--no-notify"];
    if config.poll {
        args.push("--poll");
    }
    let mut cmd = command(&config.binary, spool, &db, root, &args);
    cmd.stdout(Stdio::piped()).stderr(Stdio::from(
        fs::File::create(&stderr).map_err(|e| e.to_string())?,
    ));
    let mut child: Child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", config.binary.display()))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let running = Running::adopt(child);
    let log = Arc::new(Mutex::new(EngineLog::default()));
    let sink = log.clone();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let mut log = sink.lock().unwrap();
            if let Some(id) = ingested_id(&line) {
                log.ingested.insert(id.to_owned());
            }
            log.lines.push(line);
        }
    });
    Ok(Daemon {
        running,
        log,
        reader: Some(reader),
        db,
        stderr,
    })
}

/// `<time> ingested ID: "title" ...` → ID.
fn ingested_id(line: &str) -> Option<&str> {
    let rest = line.split_once(' ')?.1.strip_prefix("ingested ")?;
    Some(rest.split_once(':')?.0)
}

/// `<time> STATUS ID by WHO` lines (see `Event::log_line`), by id: (status, who) each.
fn settle_lines(lines: &[String]) -> BTreeMap<String, Vec<(String, String)>> {
    let mut settles: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in lines {
        let words: Vec<&str> = line.split(' ').collect();
        if let [_, status, id, "by", who] = words.as_slice() {
            if matches!(
                *status,
                "answered" | "defaulted" | "declined" | "expired" | "rejected"
            ) {
                settles
                    .entry((*id).to_owned())
                    .or_default()
                    .push(((*status).to_owned(), (*who).to_owned()));
            }
        }
    }
    settles
}

fn race_worker(shared: &Shared) {
    loop {
        let job = take_ready(shared);
        match job {
            Some(job) => {
                let answered = race(shared, &job);
                shared
                    .results
                    .lock()
                    .unwrap()
                    .insert(job.id.clone(), (job.kind, answered));
                shared.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
            None => {
                if shared.placing_done.load(Ordering::SeqCst)
                    && shared.queue.lock().unwrap().is_empty()
                {
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

/// The first job whose moment has come, taken off the queue.
fn take_ready(shared: &Shared) -> Option<Job> {
    let mut queue = shared.queue.lock().unwrap();
    let now = Instant::now();
    let position = queue.iter().position(|job| match job.fire {
        Fire::At(at) => at <= now,
        Fire::AllIngested { since } => {
            let all = shared
                .logs
                .iter()
                .all(|log| log.lock().unwrap().ingested.contains(&job.id));
            if !all && since.elapsed() > Duration::from_secs(40) {
                shared.violations.lock().unwrap().push(format!(
                    "not every daemon logged {} as ingested within 40 s",
                    job.id
                ));
                return true;
            }
            all
        }
    })?;
    Some(queue.remove(position))
}

/// Starts one answerer per database at once, each with its own answer (`pick=e<k>`, which
/// tells the winner apart: they all answer as the same account); waits for all.
fn race(shared: &Shared, job: &Job) -> Vec<Answered> {
    let mut children = Vec::new();
    for (k, db) in shared.dbs.iter().enumerate() {
        let mut cmd = command(
            &shared.config.binary,
            &shared.spool,
            db,
            &shared.root,
            &["answer", &job.id, "--set", &format!("pick=e{k}")],
        );
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        match cmd.spawn() {
            Ok(child) => children.push((k, child)),
            Err(e) => shared
                .violations
                .lock()
                .unwrap()
                .push(format!("cannot start answerer {k} for {}: {e}", job.id)),
        }
    }
    children
        .into_iter()
        .map(|(engine, child)| match child.wait_with_output() {
            Ok(out) => Answered {
                engine,
                code: out.status.code(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
            Err(e) => Answered {
                engine,
                code: None,
                stdout: String::new(),
                stderr: format!("cannot wait: {e}"),
            },
        })
        .collect()
}

/// Each database's instance id (`meta.instance`): the part after `/` in its outcomes'
/// `instance`.
fn instance_ids(dbs: &[PathBuf]) -> Result<Vec<String>, String> {
    dbs.iter()
        .map(|db| {
            rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|c| {
                    c.query_row("SELECT value FROM meta WHERE key = 'instance'", [], |r| {
                        r.get(0)
                    })
                })
                .map_err(|e| format!("{}: {e}", db.display()))
        })
        .collect()
}

/// Which answerer's answer an outcome carries: `k` for exactly `{"pick": "e<k>"}`, one of
/// the racing answerers.
fn answerer_of(outcome: &Value, engines: usize) -> Option<usize> {
    (0..engines).find(|k| outcome["answers"] == json!({"pick": format!("e{k}")}))
}

/// Exactly one outcome per request, from a racer allowed to settle it.
fn check_outcomes(
    shared: &Shared,
    placed: &[(String, Kind)],
    snapshot: &Snapshot,
    instances: &[String],
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    let ids: HashSet<&str> = placed.iter().map(|(id, _)| id.as_str()).collect();
    for id in snapshot.outcomes.keys() {
        if !ids.contains(id.as_str()) {
            violations.push(format!("answers/{id}.json answers no placed request"));
        }
    }
    if !snapshot.tombstones.is_empty() {
        violations.push(format!("tombstones appeared: {:?}", snapshot.tombstones));
    }
    for (id, kind) in placed {
        let Some(outcome) = snapshot.outcome(id) else {
            violations.push(format!("request {id} ({}) has no outcome", kind.name()));
            continue;
        };
        let by = racer_of(outcome);
        let status = outcome["status"].as_str().unwrap_or_default();
        *report.statuses.entry(status.to_owned()).or_default() += 1;
        if !kind.may_win(by, &shared.operator) {
            violations.push(format!(
                "request {id} ({}) was settled by {by}, who may not settle it",
                kind.name()
            ));
        }
        let racer = if by == shared.operator {
            "answerer"
        } else {
            by
        };
        *report.wins.entry(racer.to_owned()).or_default() += 1;
        let instance = outcome["instance"].as_str().unwrap_or_default();
        match instances
            .iter()
            .position(|i| instance.ends_with(&format!("/{i}")))
        {
            Some(k) => {
                report.wins_by_engine[k] += 1;
                if by == shared.operator {
                    match answerer_of(outcome, shared.config.engines) {
                        Some(answerer) if answerer != k => violations.push(format!(
                            "request {id}: answered with answerer {answerer}'s pick but \
                             written by database {k}'s instance"
                        )),
                        Some(_) if status != "answered" => violations.push(format!(
                            "request {id}: an answerer won but the outcome is {outcome}"
                        )),
                        Some(_) => {}
                        None => violations.push(format!(
                            "request {id}: answered by {by} with answers no answerer gave: \
                             {outcome}"
                        )),
                    }
                }
            }
            None => violations.push(format!(
                "request {id}: outcome from an unknown instance {instance}"
            )),
        }
        let expected_sha = inbox_protocol::sha256_hex(&snapshot.requests[id.as_str()].0);
        if outcome["request_sha256"] != json!(expected_sha) {
            violations.push(format!("answers/{id}.json names another request's sha256"));
        }
    }
}

/// The answerer that won printed the standing outcome; every other exited 3 naming it.
fn check_answerers(
    shared: &Shared,
    snapshot: &Snapshot,
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    let results = shared.results.lock().unwrap();
    for (id, (_, answered)) in results.iter() {
        let Some(outcome) = snapshot.outcome(id) else {
            continue; // reported by check_outcomes
        };
        let winner = outcome["answered_by"].as_str().unwrap_or_default();
        let status = outcome["status"].as_str().unwrap_or_default();
        // The answerer whose answer stands, when an answerer's does.
        let winning_answerer = if winner == shared.operator {
            answerer_of(outcome, shared.config.engines)
        } else {
            None
        };
        let mut won = 0;
        for a in answered {
            report.answerers += 1;
            let mine = winning_answerer == Some(a.engine);
            let said = format!(
                "answerer {} for {id} exited {:?} (stderr: {})",
                a.engine,
                a.code,
                a.stderr.trim()
            );
            match a.code {
                Some(0) => {
                    won += 1;
                    report.answerers_won += 1;
                    let printed: Value = serde_json::from_str(&a.stdout).unwrap_or(Value::Null);
                    if !mine || printed != *outcome {
                        violations.push(format!(
                            "{said}, printing {}, but the standing outcome is {outcome}",
                            a.stdout.trim()
                        ));
                    }
                }
                Some(3) => match settled_named(&a.stderr) {
                    Some((named_status, named)) if named == winner && named_status == status => {
                        report.answerers_lost += 1;
                        if mine {
                            violations.push(format!("{said}: it lost to itself"));
                        }
                    }
                    _ => violations.push(format!(
                        "{said}, but the standing outcome is {status} by {winner}"
                    )),
                },
                _ => violations.push(format!("{said}: only 0 (won) or 3 (lost) are allowed")),
            }
        }
        if won > 1 {
            violations.push(format!("{won} answerers were told they won {id}"));
        }
        if winner == shared.operator && won != 1 {
            violations.push(format!(
                "{id} was answered by {winner} but {won} answerers exited 0"
            ));
        }
    }
}

/// Each daemon logs at most one settle per request, with the winner, and one for every
/// request it logged as ingested.
fn check_logs(
    shared: &Shared,
    placed: &[(String, Kind)],
    snapshot: &Snapshot,
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    for (k, log) in shared.logs.iter().enumerate() {
        let log = log.lock().unwrap();
        let settles = settle_lines(&log.lines);
        for line in &log.lines {
            if line.contains(" cancelled ") || line.contains(" rejected ") {
                violations.push(format!("daemon {k} logged: {line}"));
            }
        }
        for (id, kind) in placed {
            let Some(outcome) = snapshot.outcome(id) else {
                continue;
            };
            let winner = (
                outcome["status"].as_str().unwrap_or_default().to_owned(),
                outcome["answered_by"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
            match settles.get(id.as_str()).map(Vec::as_slice) {
                Some([one]) if *one == winner => report.settles_logged += 1,
                Some(lines) if !lines.is_empty() => violations.push(format!(
                    "daemon {k} logged the settle of {id} as {lines:?}; the outcome is {} by {}",
                    winner.0, winner.1
                )),
                _ if log.ingested.contains(id) => violations.push(format!(
                    "daemon {k} logged {id} as ingested but never its settle ({} by {})",
                    winner.0, winner.1
                )),
                _ if *kind == Kind::Interactive => violations.push(format!(
                    "daemon {k} never logged {id}, an interactive request raced after every \
                     daemon logged it"
                )),
                _ => report.unlogged[k] += 1,
            }
        }
    }
}

/// Who settled an outcome, as the report counts racers: `answered_by`, except that a policy
/// rule's settlement is named by what set it off (`policy:autonomous`, `policy:expiry`), so
/// the two policy racers stay apart whichever rule of the operator's policy decided.
fn racer_of(outcome: &Value) -> &str {
    let by = outcome["answered_by"].as_str().unwrap_or_default();
    if !by.starts_with("policy:rule:") {
        return by;
    }
    match outcome["trigger"].as_str() {
        Some("autonomous") => "policy:autonomous",
        Some("expiry") => "policy:expiry",
        _ => by,
    }
}
