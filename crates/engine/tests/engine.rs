//! The engine against a real spool directory and a real SQLite file.

use std::fs;
use std::time::Duration;

use chrono::Utc;
use crossbeam_channel::{Receiver, Sender};
use inbox_engine::spool::Area;
use inbox_engine::{Command, Engine, Event, SettleError, Spool, State, Store, Wake, WatchOptions};
use inbox_protocol::{DecidedBy, Outcome, OutcomeStatus, Surface, Trigger};
use serde_json::{json, Map, Value};

struct Fixture {
    dir: tempfile::TempDir,
    spool: Spool,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path().join("spool")).unwrap();
        Fixture { dir, spool }
    }

    fn engine(&self) -> (Engine, Receiver<Event>) {
        self.engine_with_db("inbox.sqlite3")
    }

    fn engine_with_db(&self, name: &str) -> (Engine, Receiver<Event>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        let store = Store::open(&self.dir.path().join(name)).unwrap();
        (
            Engine::new(self.spool.clone(), store)
                .unwrap()
                .with_events(tx),
            rx,
        )
    }

    /// Places a file the way a careless asker might: written directly in questions/.
    fn drop_raw(&self, name: &str, bytes: &[u8]) {
        fs::write(self.spool.dir(Area::Questions).join(name), bytes).unwrap();
    }

    fn outcome(&self, id: &str) -> Outcome {
        Outcome::from_file_bytes(&self.spool.read(Area::Answers, id).unwrap()).unwrap()
    }

    /// The version of a request as a front end shows it: its file's SHA-256.
    fn version(&self, id: &str) -> String {
        inbox_protocol::sha256_hex(&self.spool.read(Area::Questions, id).unwrap())
    }
}

/// How a person's answer through these engines is recorded: the account the tests run as.
fn me() -> String {
    inbox_engine::operator::answered_by(&inbox_engine::operator::account())
}

fn confirm_request(id: &str, extra: Value) -> Vec<u8> {
    let mut body = json!({"inbox": 1, "id": id, "title": "Deploy",
        "questions": [{"id": "go", "question": "Ship it?", "type": "confirm"}]});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    body.to_string().into_bytes()
}

fn answers(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn drain(events: &Receiver<Event>) -> Vec<Event> {
    events.try_iter().collect()
}

#[test]
fn a_request_is_ingested_answered_once_and_recorded() {
    let fx = Fixture::new();
    fx.spool
        .place_request("r1", &confirm_request("r1", json!({})))
        .unwrap();
    let (mut engine, events) = fx.engine();
    engine.sync().unwrap();
    assert!(matches!(&drain(&events)[..], [Event::Ingested { id, .. }] if id == "r1"));

    let outcome = engine
        .answer("r1", &answers(json!({"go": true})), None, Surface::Cli)
        .unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Answered);
    let on_disk = fx.outcome("r1");
    assert_eq!(on_disk.answers["go"], json!(true));
    assert_eq!(on_disk.answered_by, me());
    // Who decided, where, and how long after the request was placed.
    assert_eq!(on_disk.decided_by, Some(DecidedBy::Person));
    assert_eq!(on_disk.surface, Some(Surface::Cli));
    assert_eq!(on_disk.rule, None);
    assert!(on_disk.decision_ms.is_some());
    assert_eq!(
        on_disk.request_sha256.as_deref(),
        Some(inbox_protocol::sha256_hex(&confirm_request("r1", json!({}))).as_str())
    );
    assert!(matches!(
        &drain(&events)[..],
        [Event::Settled {
            status: OutcomeStatus::Answered,
            ..
        }]
    ));

    match engine.answer("r1", &answers(json!({"go": false})), None, Surface::Cli) {
        Err(SettleError::AlreadySettled(first)) => assert_eq!(first.answered_by, me()),
        other => panic!("expected AlreadySettled, got {other:?}"),
    }
    assert_eq!(
        fx.outcome("r1").answers["go"],
        json!(true),
        "the first outcome stands"
    );
    let kinds: Vec<String> = engine
        .queries()
        .events_of("r1")
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["ingested", "answered"]);
}

/// Records what the engine takes back from its notifier.
#[derive(Clone, Default)]
struct Withdrawn(std::sync::Arc<std::sync::Mutex<Vec<inbox_engine::notifier::Gone>>>);

impl inbox_engine::notifier::Notifier for Withdrawn {
    fn announce(&self, _fresh: Vec<inbox_engine::notifier::Announcement>) {}

    fn withdraw(&self, gone: Vec<inbox_engine::notifier::Gone>) {
        self.0.lock().unwrap().extend(gone);
    }
}

/// A request that leaves the pending list, whoever settles or withdraws it, has its bubble
/// taken back: answered here, withdrawn by its asker, or answered by another process; and
/// the notifier hears why, to say so where a push stays on a phone.
#[test]
fn the_notifier_takes_back_what_left_the_pending_list() {
    let fx = Fixture::new();
    for id in ["here", "withdrawn", "elsewhere", "still"] {
        fx.spool
            .place_request(id, &confirm_request(id, json!({})))
            .unwrap();
    }
    let (engine, _events) = fx.engine();
    let withdrawn = Withdrawn::default();
    let mut engine = engine.with_notifier(Box::new(withdrawn.clone()));
    // As the loop runs it: what it reported open, it reports settled once.
    engine.turn(Wake::Start).unwrap();
    engine
        .answer("here", &answers(json!({"go": true})), None, Surface::Cli)
        .unwrap();
    fx.spool.place_tombstone("withdrawn", "not needed").unwrap();
    let (mut other, _) = fx.engine();
    other.sync().unwrap();
    other
        .answer(
            "elsewhere",
            &answers(json!({"go": false})),
            None,
            Surface::Cli,
        )
        .unwrap();
    engine.turn(Wake::Rescan).unwrap();
    let mut gone: Vec<(String, String)> = withdrawn
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|g| (g.id.clone(), g.why.line()))
        .collect();
    gone.sort();
    let me = inbox_engine::operator::account();
    assert_eq!(
        gone,
        [
            ("elsewhere".to_owned(), format!("Answered by {me}")),
            ("here".to_owned(), format!("Answered by {me}")),
            (
                "withdrawn".to_owned(),
                "Withdrawn: its asker stopped waiting".to_owned()
            ),
        ]
    );
}

#[test]
fn invalid_answers_write_nothing() {
    let fx = Fixture::new();
    fx.spool
        .place_request("r1", &confirm_request("r1", json!({})))
        .unwrap();
    let (mut engine, _events) = fx.engine();
    match engine.answer(
        "r1",
        &answers(json!({"go": "maybe", "nope": 1})),
        None,
        Surface::Cli,
    ) {
        Err(SettleError::Invalid(problems)) => assert_eq!(problems.len(), 2, "{problems:?}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(!fx.spool.exists(Area::Answers, "r1"));
    assert_eq!(engine.queries().state("r1").unwrap(), Some(State::Pending));
}

#[test]
fn malformed_requests_get_rejected_outcomes_and_the_engine_goes_on() {
    let fx = Fixture::new();
    let deep = "[".repeat(100);
    let cases: &[(&str, &[u8])] = &[
        ("not-json", b"{nope"),
        ("not-utf8", b"\xff\xfe"),
        ("empty", b""),
        ("too-deep", deep.as_bytes()),
        ("wrong-types", br#"{"inbox": 1, "questions": [{"question": 1, "type": "confirm"}]}"#),
        ("unknown-type", br#"[{"question": "x", "type": "dropdown"}]"#),
        ("no-options", br#"[{"question": "x", "type": "choice"}]"#),
        ("bad-default", br#"[{"question": "x", "type": "choice", "options": ["a"], "default": "b"}]"#),
        ("dup-ids", br#"[{"id": "a", "question": "x", "type": "confirm"}, {"id": "a", "question": "y", "type": "confirm"}]"#),
        ("bad-pattern", br#"[{"question": "x", "type": "text", "pattern": "("}]"#),
        ("id-mismatch", br#"{"inbox": 1, "id": "other", "questions": [{"question": "x", "type": "confirm"}]}"#),
        ("empty-batch", br#"{"inbox": 1, "questions": []}"#),
    ];
    for (id, bytes) in cases {
        fx.drop_raw(&format!("{id}.json"), bytes);
    }
    fx.drop_raw("oversized.json", &vec![b' '; 1024 * 1024 + 10]);
    fx.spool
        .place_request("good", &confirm_request("good", json!({})))
        .unwrap();

    let (mut engine, events) = fx.engine();
    engine.sync().unwrap();
    for id in cases.iter().map(|(id, _)| *id).chain(["oversized"]) {
        let outcome = fx.outcome(id);
        assert_eq!(outcome.status, OutcomeStatus::Rejected, "{id}");
        let errors = outcome.errors.unwrap_or_default();
        assert!(!errors.is_empty(), "{id} has errors");
        assert_eq!(outcome.answered_by, "policy:validation");
    }
    assert!(!fx.spool.exists(Area::Answers, "good"));
    let events = drain(&events);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Rejected { .. }))
            .count(),
        cases.len() + 1
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Ingested { .. }))
            .count(),
        1
    );
}

#[test]
fn files_that_are_not_requests_are_never_read_and_logged_once() {
    let fx = Fixture::new();
    let questions = fx.spool.dir(Area::Questions);
    fs::write(
        fx.dir.path().join("secret.json"),
        confirm_request("link", json!({})),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        fx.dir.path().join("secret.json"),
        questions.join("link.json"),
    )
    .unwrap();
    fs::create_dir(questions.join("dir.json")).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(questions.join("fifo.json"))
        .status()
        .unwrap()
        .success());
    fx.drop_raw("not an id.json", b"[]");
    fx.drop_raw("README.txt", b"hello");

    let (mut engine, events) = fx.engine();
    engine.sync().unwrap();
    engine.sync().unwrap();
    let problems: Vec<Event> = drain(&events);
    assert_eq!(problems.len(), 5, "{problems:?}");
    assert!(problems.iter().all(|e| matches!(e, Event::Problem { .. })));
    for id in ["link", "dir", "fifo"] {
        assert!(
            !fx.spool.exists(Area::Answers, id),
            "{id} must not get an outcome"
        );
    }
    assert_eq!(engine.queries().problems().unwrap().len(), 5);
}

#[test]
fn autonomous_requests_with_defaults_are_answered_at_once() {
    let fx = Fixture::new();
    let auto = br#"{"inbox": 1, "mode": "autonomous", "questions": [
        {"id": "prune", "question": "Prune?", "type": "confirm", "default": true},
        {"id": "keep", "question": "Keep?", "type": "choice", "options": ["7d", "30d"], "default": "30d", "required": false}]}"#;
    fx.spool.place_request("auto", auto).unwrap();
    fx.spool
        .place_request(
            "blocked",
            &confirm_request("blocked", json!({"mode": "autonomous"})),
        )
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.turn(Wake::Rescan).unwrap();

    let outcome = fx.outcome("auto");
    assert_eq!(outcome.status, OutcomeStatus::Defaulted);
    // The shipped policy's rule for file askers honours autonomous mode, and says so.
    assert_eq!(outcome.answered_by, "policy:rule:file-askers");
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(outcome.rule.as_deref(), Some("policy:rule:file-askers"));
    assert_eq!(outcome.trigger, Some(Trigger::Autonomous));
    assert_eq!(outcome.surface, Some(Surface::Policy));
    assert!(outcome.decision_ms.is_some());
    assert_eq!(outcome.answers["keep"], json!("30d"));
    assert_eq!(outcome.defaulted, ["prune", "keep"]);
    assert!(
        !fx.spool.exists(Area::Answers, "blocked"),
        "a required question without default waits"
    );
}

#[test]
fn expiry_defaults_or_expires() {
    let fx = Fixture::new();
    let past = "2020-01-01T00:00:00Z";
    fx.spool
        .place_request(
            "no-default",
            &confirm_request("no-default", json!({"expires_at": past})),
        )
        .unwrap();
    let with_default = json!({"inbox": 1, "expires_at": past,
        "questions": [{"id": "go", "question": "Go?", "type": "confirm", "default": false}]});
    fx.spool
        .place_request("with-default", with_default.to_string().as_bytes())
        .unwrap();
    fx.spool
        .place_request(
            "later",
            &confirm_request("later", json!({"timeout_seconds": 3600})),
        )
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.turn(Wake::Rescan).unwrap();

    let expired = fx.outcome("no-default");
    assert_eq!(expired.status, OutcomeStatus::Expired);
    assert_eq!(expired.answered_by, "policy:rule:file-askers");
    assert_eq!(expired.decided_by, Some(DecidedBy::Policy));
    assert_eq!(expired.rule.as_deref(), Some("policy:rule:file-askers"));
    assert_eq!(expired.trigger, Some(Trigger::Expiry));
    assert_eq!(expired.surface, Some(Surface::Policy));
    assert_eq!(fx.outcome("with-default").status, OutcomeStatus::Defaulted);
    assert!(!fx.spool.exists(Area::Answers, "later"));
    let next = engine.queries().next_deadline().unwrap().unwrap();
    assert!(next > Utc::now() + chrono::TimeDelta::minutes(59));
}

#[test]
fn decline_needs_a_reason_and_cancel_withdraws() {
    let fx = Fixture::new();
    fx.spool
        .place_request("d", &confirm_request("d", json!({})))
        .unwrap();
    fx.spool
        .place_request("c", &confirm_request("c", json!({})))
        .unwrap();
    let (mut engine, _events) = fx.engine();
    assert!(matches!(
        engine.decline("d", "  ", None, Surface::Cli),
        Err(SettleError::Invalid(_))
    ));
    let declined = engine
        .decline("d", "not during the freeze", None, Surface::Cli)
        .unwrap();
    assert_eq!(declined.status, OutcomeStatus::Declined);
    assert_eq!(declined.decided_by, Some(DecidedBy::Person));
    assert_eq!(declined.surface, Some(Surface::Cli));
    assert_eq!(
        fx.outcome("d").reason.as_deref(),
        Some("not during the freeze")
    );

    engine.cancel("c", "superseded").unwrap();
    assert_eq!(engine.queries().state("c").unwrap(), Some(State::Cancelled));
    assert!(matches!(
        engine.answer("c", &answers(json!({"go": true})), None, Surface::Cli),
        Err(SettleError::Cancelled(_))
    ));
    assert!(matches!(
        engine.cancel("d", "late"),
        Err(SettleError::AlreadySettled(_))
    ));
    assert!(matches!(
        engine.answer("nope", &answers(json!({})), None, Surface::Cli),
        Err(SettleError::NotFound(_))
    ));
}

#[test]
fn a_lost_database_is_rebuilt_from_the_spool() {
    let fx = Fixture::new();
    for id in ["a", "b", "c"] {
        fx.spool
            .place_request(id, &confirm_request(id, json!({})))
            .unwrap();
    }
    {
        let (mut engine, _events) = fx.engine();
        engine
            .answer("a", &answers(json!({"go": true})), None, Surface::Cli)
            .unwrap();
        engine.cancel("b", "").unwrap();
    }
    let (mut rebuilt, _events) = fx.engine_with_db("new.sqlite3");
    rebuilt.sync().unwrap();
    let store = rebuilt.queries();
    assert_eq!(
        store.state("a").unwrap(),
        Some(State::Settled(OutcomeStatus::Answered))
    );
    assert_eq!(store.state("b").unwrap(), Some(State::Cancelled));
    assert_eq!(store.state("c").unwrap(), Some(State::Pending));
    assert_eq!(
        store
            .detail("a")
            .unwrap()
            .unwrap()
            .summary
            .answered_by
            .as_deref(),
        Some(me().as_str())
    );
}

#[test]
fn two_engines_on_one_spool_settle_each_request_once() {
    let fx = Fixture::new();
    let auto = br#"{"inbox": 1, "mode": "autonomous", "questions": [{"id": "go", "question": "Go?", "type": "confirm", "default": true}]}"#;
    for i in 0..20 {
        fx.spool.place_request(&format!("r{i}"), auto).unwrap();
    }
    let (mut first, first_events) = fx.engine_with_db("one.sqlite3");
    let (mut second, second_events) = fx.engine_with_db("two.sqlite3");
    std::thread::scope(|scope| {
        for engine in [&mut first, &mut second] {
            scope.spawn(move || {
                engine.turn(Wake::Rescan).unwrap();
            });
        }
    });
    let settled = |events: &Receiver<Event>| {
        drain(events)
            .into_iter()
            .filter(|e| matches!(e, Event::Settled { .. }))
            .count()
    };
    // Each engine records all 20 outcomes, whichever instance wrote them.
    assert_eq!(settled(&first_events), 20);
    assert_eq!(settled(&second_events), 20);
    let instances: std::collections::HashSet<String> = (0..20)
        .map(|i| fx.outcome(&format!("r{i}")).instance)
        .collect();
    assert!(!instances.is_empty() && instances.len() <= 2);
    assert_eq!(fs::read_dir(fx.spool.tmp_dir()).unwrap().count(), 0);
}

/// Runs the engine loop on a thread; returns its events and a handle to stop it.
fn run_loop(
    fx: &Fixture,
    options: WatchOptions,
) -> (Receiver<Event>, Sender<()>, std::thread::JoinHandle<()>) {
    let (mut engine, events) = fx.engine();
    let (stop, shutdown) = crossbeam_channel::bounded(1);
    let handle =
        std::thread::spawn(move || inbox_engine::run(&mut engine, &options, &shutdown).unwrap());
    (events, stop, handle)
}

fn wait_for(events: &Receiver<Event>, what: impl Fn(&Event) -> bool) -> Event {
    loop {
        match events.recv_timeout(Duration::from_secs(20)) {
            Ok(event) if what(&event) => return event,
            Ok(_) => continue,
            Err(_) => panic!("the awaited event never came"),
        }
    }
}

fn place_by_rename(spool: &Spool, id: &str, bytes: &[u8]) {
    let tmp = spool.tmp_dir().join(format!("{id}.partial"));
    fs::write(&tmp, bytes).unwrap();
    fs::rename(&tmp, spool.dir(Area::Questions).join(format!("{id}.json"))).unwrap();
}

fn loop_picks_up_requests_outcomes_and_cancels(options: WatchOptions) {
    let fx = Fixture::new();
    let (events, stop, handle) = run_loop(&fx, options);
    wait_for(&events, |e| matches!(e, Event::Ready { pending: 0 }));

    place_by_rename(&fx.spool, "live", &confirm_request("live", json!({})));
    wait_for(
        &events,
        |e| matches!(e, Event::Ingested { id, .. } if id == "live"),
    );

    // Another process (the CLI) answers: the loop records it.
    let (mut cli, _cli_events) = fx.engine_with_db("cli.sqlite3");
    cli.answer("live", &answers(json!({"go": true})), None, Surface::Cli)
        .unwrap();
    wait_for(
        &events,
        |e| matches!(e, Event::Settled { id, answered_by, .. } if id == "live" && *answered_by == me()),
    );

    place_by_rename(
        &fx.spool,
        "withdrawn",
        &confirm_request("withdrawn", json!({})),
    );
    wait_for(
        &events,
        |e| matches!(e, Event::Ingested { id, .. } if id == "withdrawn"),
    );
    fx.spool
        .place_tombstone("withdrawn", "no longer needed")
        .unwrap();
    wait_for(
        &events,
        |e| matches!(e, Event::Cancelled { id } if id == "withdrawn"),
    );

    let auto = br#"{"inbox": 1, "mode": "autonomous", "questions": [{"id": "go", "question": "Go?", "type": "confirm", "default": true}]}"#;
    place_by_rename(&fx.spool, "auto", auto);
    wait_for(
        &events,
        |e| matches!(e, Event::Settled { id, status: OutcomeStatus::Defaulted, .. } if id == "auto"),
    );

    fx.drop_raw("bad name.json", b"[]");
    wait_for(&events, |e| matches!(e, Event::Problem { .. }));

    stop.send(()).unwrap();
    handle.join().unwrap();
}

#[test]
fn the_loop_reacts_to_events() {
    loop_picks_up_requests_outcomes_and_cancels(WatchOptions::default());
}

#[test]
fn the_loop_works_by_polling() {
    loop_picks_up_requests_outcomes_and_cancels(WatchOptions {
        poll: true,
        poll_interval: Duration::from_millis(100),
        ..WatchOptions::default()
    });
}

#[test]
fn the_loop_expires_requests_on_time() {
    let fx = Fixture::new();
    let (events, stop, handle) = run_loop(&fx, WatchOptions::default());
    wait_for(&events, |e| matches!(e, Event::Ready { .. }));
    place_by_rename(
        &fx.spool,
        "short",
        &confirm_request("short", json!({"timeout_seconds": 1})),
    );
    wait_for(
        &events,
        |e| matches!(e, Event::Settled { id, status: OutcomeStatus::Expired, .. } if id == "short"),
    );
    stop.send(()).unwrap();
    handle.join().unwrap();
}

/// The loop skips looking for an outcome or tombstone when a request's event comes, unless
/// one was seen before the request: then no later event reports it, and without the look
/// the request would wait for the next full scan (an hour away here).
#[test]
fn the_loop_settles_a_request_whose_outcome_or_tombstone_came_first() {
    let fx = Fixture::new();
    let (events, stop, handle) = run_loop(
        &fx,
        WatchOptions {
            rescan_every: Duration::from_secs(3600),
            ..WatchOptions::default()
        },
    );
    wait_for(&events, |e| matches!(e, Event::Ready { pending: 0 }));

    let body = confirm_request("early", json!({}));
    let request = inbox_protocol::parse_request(&body, Some("early")).unwrap();
    let outcome = Outcome::new(
        "early",
        OutcomeStatus::Declined,
        me(),
        "other/1",
        Utc::now(),
    )
    .with_reason("not today")
    .with_request_sha256(Some(request.sha256.clone()));
    fx.spool
        .write_outcome("early", &outcome.to_file_bytes())
        .unwrap();
    fx.spool.place_tombstone("withdrawn", "not needed").unwrap();
    // Events come in order: once this one is ingested, the loop has seen the two above.
    place_by_rename(&fx.spool, "marker", &confirm_request("marker", json!({})));
    wait_for(
        &events,
        |e| matches!(e, Event::Ingested { id, .. } if id == "marker"),
    );

    place_by_rename(&fx.spool, "early", &body);
    wait_for(
        &events,
        |e| matches!(e, Event::Settled { id, status: OutcomeStatus::Declined, .. } if id == "early"),
    );
    let auto = br#"{"inbox": 1, "mode": "autonomous", "questions": [{"id": "go", "question": "Go?", "type": "confirm", "default": true}]}"#;
    place_by_rename(&fx.spool, "withdrawn", auto);
    wait_for(
        &events,
        |e| matches!(e, Event::Cancelled { id } if id == "withdrawn"),
    );
    stop.send(()).unwrap();
    handle.join().unwrap();
    assert!(!fx.spool.exists(Area::Answers, "withdrawn"));
}

/// One-shot CLI commands share the loop's database and record what they do there first; the
/// loop must still report each change once, and apply its policies to requests the CLI
/// ingested before the loop saw them (likely when polling).
#[test]
fn the_loop_reports_changes_recorded_by_others_in_its_database() {
    let fx = Fixture::new();
    let (events, stop, handle) = run_loop(
        &fx,
        WatchOptions {
            poll: true,
            poll_interval: Duration::from_millis(200),
            ..WatchOptions::default()
        },
    );
    wait_for(&events, |e| matches!(e, Event::Ready { .. }));
    let (mut cli, _cli_events) = fx.engine();

    let auto = br#"{"inbox": 1, "mode": "autonomous", "questions": [{"id": "go", "question": "Go?", "type": "confirm", "default": true}]}"#;
    place_by_rename(&fx.spool, "auto", auto);
    cli.sync().unwrap();
    wait_for(
        &events,
        |e| matches!(e, Event::Ingested { id, .. } if id == "auto"),
    );
    wait_for(
        &events,
        |e| matches!(e, Event::Settled { id, status: OutcomeStatus::Defaulted, .. } if id == "auto"),
    );

    place_by_rename(&fx.spool, "live", &confirm_request("live", json!({})));
    cli.sync().unwrap();
    wait_for(
        &events,
        |e| matches!(e, Event::Ingested { id, .. } if id == "live"),
    );
    cli.answer("live", &answers(json!({"go": true})), None, Surface::Cli)
        .unwrap();
    wait_for(
        &events,
        |e| matches!(e, Event::Settled { id, answered_by, .. } if id == "live" && *answered_by == me()),
    );

    place_by_rename(&fx.spool, "gone", &confirm_request("gone", json!({})));
    wait_for(
        &events,
        |e| matches!(e, Event::Ingested { id, .. } if id == "gone"),
    );
    cli.cancel("gone", "not needed").unwrap();
    wait_for(
        &events,
        |e| matches!(e, Event::Cancelled { id } if id == "gone"),
    );

    stop.send(()).unwrap();
    handle.join().unwrap();
    let settled: Vec<Event> = drain(&events)
        .into_iter()
        .filter(|e| matches!(e, Event::Settled { .. } | Event::Cancelled { .. }))
        .collect();
    assert!(
        settled.is_empty(),
        "each change is reported once: {settled:?}"
    );
}

/// A writer that raced the asker's cancel may link its outcome after the tombstone. The
/// outcome file stands (a rebuild from the spool says so), so the live database must say
/// the same, whichever of the two it saw first.
#[test]
fn an_outcome_linked_after_the_tombstone_stands() {
    let f = Fixture::new();
    let (mut engine, events) = f.engine();
    f.spool
        .place_request("raced", &confirm_request("raced", json!({})))
        .unwrap();
    engine.sync().unwrap();
    engine.cancel("raced", "not needed").unwrap();
    assert_eq!(
        engine.queries().state("raced").unwrap(),
        Some(State::Cancelled)
    );

    // Another inbox that had read the request before the tombstone appeared.
    let bytes = f.spool.read(Area::Questions, "raced").unwrap();
    let request = inbox_protocol::parse_request(&bytes, Some("raced")).unwrap();
    let set = inbox_protocol::check_answers(&request, &answers(json!({"go": true}))).unwrap();
    let late = Outcome::new(
        "raced",
        OutcomeStatus::Answered,
        me(),
        "other/1",
        Utc::now(),
    )
    .with_answers(set)
    .with_request_sha256(Some(request.sha256.clone()));
    f.spool
        .write_outcome("raced", &late.to_file_bytes())
        .unwrap();
    drain(&events);
    engine.sync().unwrap();
    assert_eq!(
        engine.queries().state("raced").unwrap(),
        Some(State::Settled(OutcomeStatus::Answered))
    );
    assert!(drain(&events).iter().any(|e| matches!(e,
        Event::Settled { id, answered_by, .. } if id == "raced" && *answered_by == me())));

    // A database rebuilt from the spool agrees.
    let (mut rebuilt, _) = f.engine_with_db("rebuilt.sqlite3");
    rebuilt.sync().unwrap();
    assert_eq!(
        rebuilt.queries().state("raced").unwrap(),
        Some(State::Settled(OutcomeStatus::Answered))
    );
}

/// Requests in another dialect get their answer back in that dialect's own shape (`reply`),
/// whoever settles them: the operator, a decline, autonomous mode.
#[test]
fn outcomes_carry_the_reply_of_the_askers_dialect() {
    let f = Fixture::new();
    let (mut engine, _events) = f.engine();
    f.spool
        .place_request(
            "elicit",
            br#"{"message": "Name the service", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}, "replicas": {"type": "integer"},
                               "public": {"type": "boolean"}},
                "required": ["name", "replicas", "public"]}}"#,
        )
        .unwrap();
    f.spool
        .place_request(
            "interrupt",
            br#"{"action_request": {"action": "send_email", "args": {"to": "ann"}},
                "config": {"allow_ignore": true, "allow_respond": false, "allow_edit": false,
                           "allow_accept": true},
                "description": "Send it?"}"#,
        )
        .unwrap();
    engine.sync().unwrap();
    let request = engine
        .queries()
        .detail("elicit")
        .unwrap()
        .unwrap()
        .request
        .unwrap();
    let ids: Vec<String> = request.questions.iter().map(|q| q.id.clone()).collect();
    let given =
        answers(json!({ids[0].clone(): "billing", ids[1].clone(): "3", ids[2].clone(): true}));
    engine.answer("elicit", &given, None, Surface::Cli).unwrap();
    let reply = f
        .outcome("elicit")
        .reply
        .expect("an elicitation gets a reply");
    assert_eq!(reply["action"], "accept", "{reply}");
    assert_eq!(
        reply["content"],
        json!({"name": "billing", "replicas": 3, "public": true})
    );

    engine
        .decline("interrupt", "not to this customer", None, Surface::Cli)
        .unwrap();
    let reply = f
        .outcome("interrupt")
        .reply
        .expect("an interrupt gets a reply");
    assert_eq!(reply["type"], "ignore", "{reply}");
}

/// A front end's writes go into the running loop: the answer is written by the loop's own
/// engine, replied to the sender, and reported once, even though its file event comes back
/// to the same loop afterwards. Dropping the command sender ends the loop.
#[test]
fn commands_are_done_by_the_loop_and_reported_once() {
    let fx = Fixture::new();
    let (mut engine, events) = fx.engine();
    let (commands, inbox) = crossbeam_channel::unbounded();
    let (_stop, shutdown) = crossbeam_channel::bounded::<()>(1);
    let handle = std::thread::spawn(move || {
        inbox_engine::run_with_commands(&mut engine, &WatchOptions::default(), &inbox, &shutdown)
            .unwrap()
    });
    wait_for(&events, |e| matches!(e, Event::Ready { pending: 0 }));

    let (demo, placed) = Command::place_demo();
    commands.send(demo).unwrap();
    let ids = placed
        .recv_timeout(Duration::from_secs(20))
        .unwrap()
        .unwrap();
    assert!(!ids.is_empty());

    place_by_rename(&fx.spool, "cmd", &confirm_request("cmd", json!({})));
    wait_for(
        &events,
        |e| matches!(e, Event::Ingested { id, .. } if id == "cmd"),
    );
    let (answer, reply) = Command::answer(
        "cmd",
        answers(json!({"go": true})),
        &fx.version("cmd"),
        Surface::Window,
    );
    commands.send(answer).unwrap();
    let outcome = reply
        .recv_timeout(Duration::from_secs(20))
        .unwrap()
        .unwrap();
    assert_eq!(outcome.answered_by, me());
    assert_eq!(fx.outcome("cmd").answered_by, me());
    // The command carries where the operator answered into the outcome.
    assert_eq!(fx.outcome("cmd").surface, Some(Surface::Window));
    assert_eq!(fx.outcome("cmd").decided_by, Some(DecidedBy::Person));

    let (again, second) = Command::answer(
        "cmd",
        answers(json!({"go": false})),
        &fx.version("cmd"),
        Surface::Window,
    );
    commands.send(again).unwrap();
    assert!(matches!(
        second.recv_timeout(Duration::from_secs(20)).unwrap(),
        Err(SettleError::AlreadySettled(winner)) if winner.answered_by == me()
    ));

    // The loop ends when its front end goes away; every event it sent is in the channel.
    drop(commands);
    handle.join().unwrap();
    let settled = events
        .try_iter()
        .filter(|e| matches!(e, Event::Settled { id, .. } if id == "cmd"))
        .count();
    assert_eq!(settled, 1, "the loop's own answer is reported exactly once");
}
