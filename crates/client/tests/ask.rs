//! The asker's side against a real spool directory: the outcome, the tombstone and the
//! timeout end a wait, blocking or async; a cancel withdraws the request promptly; an
//! outcome file that does not answer the request as placed is reported, never taken.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use inbox_client::{AskError, AskOptions, Asker, CancelToken, Outcome, OutcomeStatus, Reply};
use inbox_spool::{Area, Placed, Spool};

fn request(id: &str) -> String {
    format!(
        r#"{{"inbox": 1, "id": "{id}", "questions": [{{"id": "go", "question": "Go?", "type": "confirm"}}]}}"#
    )
}

/// The outcome an inbox writes for a person's answer to [`request`] `id`: bound to the
/// request file as placed (its SHA-256) and attributed to the account this test runs as.
fn valid_outcome(spool: &Spool, id: &str, status: OutcomeStatus) -> Outcome {
    let placed = spool.read(Area::Questions, id).unwrap();
    let by = format!("operator:{}", inbox_spool::current_account());
    let mut outcome = Outcome::new(id, status, by, "test/1", chrono::Utc::now());
    outcome.request_sha256 = Some(inbox_protocol::sha256_hex(&placed));
    match status {
        OutcomeStatus::Answered => {
            outcome.answers.insert("go".into(), true.into());
        }
        OutcomeStatus::Declined => outcome.reason = Some("not now".into()),
        _ => {}
    }
    outcome
}

fn outcome(spool: &Spool, id: &str, status: OutcomeStatus) -> Vec<u8> {
    valid_outcome(spool, id, status).to_file_bytes()
}

/// Plays the operator: once `id` is placed, writes its outcome.
fn answer_when_placed(spool: &Spool, id: &str, status: OutcomeStatus) -> thread::JoinHandle<()> {
    let (spool, id) = (spool.clone(), id.to_owned());
    thread::spawn(move || {
        wait_for(&spool.path(Area::Questions, &id));
        assert_eq!(
            spool
                .write_outcome(&id, &outcome(&spool, &id, status))
                .unwrap(),
            Placed::Written
        );
    })
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        thread::sleep(Duration::from_millis(5));
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_blocking_ask_returns_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    for (id, status) in [
        ("a1", OutcomeStatus::Answered),
        ("d1", OutcomeStatus::Declined),
    ] {
        let operator = answer_when_placed(asker.spool(), id, status);
        let reply = asker.ask(request(id), &AskOptions::default()).unwrap();
        operator.join().unwrap();
        let Reply::Settled(outcome) = reply else {
            panic!("{reply:?}")
        };
        assert_eq!((outcome.id.as_str(), outcome.status), (id, status));
    }
}

#[test]
fn a_timeout_leaves_the_request_pending_and_a_later_wait_gets_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    let started = Instant::now();
    let options = AskOptions::default().with_timeout(Duration::from_millis(300));
    let reply = asker.ask(request("t1"), &options).unwrap();
    assert_eq!(reply, Reply::TimedOut { id: "t1".into() });
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(asker.spool().exists(Area::Questions, "t1"));
    assert!(!asker.spool().exists(Area::Cancel, "t1"));

    asker
        .spool()
        .write_outcome("t1", &outcome(asker.spool(), "t1", OutcomeStatus::Answered))
        .unwrap();
    let reply = asker.wait("t1", &options).unwrap();
    assert_eq!(reply.outcome().unwrap().status, OutcomeStatus::Answered);
}

#[test]
fn a_tombstone_placed_by_anyone_ends_the_wait_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    let id = asker.place(request("c1"), None).unwrap();
    let other = asker.clone();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(50));
        other.withdraw("c1", "not needed\n").unwrap()
    });
    let reply = asker.wait(&id, &AskOptions::default()).unwrap();
    let expected = Reply::CancelledByAsker {
        id: "c1".into(),
        reason: Some("not needed".into()),
    };
    assert_eq!(reply, expected);
    assert_eq!(canceller.join().unwrap(), expected);
}

/// Every cancel must wake the wait: without the wake-up, a wait would only notice at its next
/// re-check (every second), and five rounds all under 300 ms would be a 1 in 400 fluke.
const ROUNDS: usize = 5;
const PROMPT: Duration = Duration::from_millis(300);

#[test]
fn cancelling_the_token_interrupts_a_blocking_wait_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    for round in 0..ROUNDS {
        let id = format!("w{round}");
        let token = CancelToken::new();
        let options = AskOptions::default().with_cancel(token.clone());
        let cancelled_at = thread::spawn({
            let placed = asker.spool().path(Area::Questions, &id);
            move || {
                wait_for(&placed);
                // Past the first look, so the wait is asleep when the cancel comes.
                thread::sleep(Duration::from_millis(50 + 37 * round as u64));
                token.cancel("gave up");
                Instant::now()
            }
        });
        let reply = asker.ask(request(&id), &options).unwrap();
        let latency = cancelled_at.join().unwrap().elapsed();
        assert!(latency < PROMPT, "round {round} took {latency:?}");
        assert!(matches!(reply, Reply::CancelledByAsker { .. }), "{reply:?}");
        let tombstone = std::fs::read(asker.spool().path(Area::Cancel, &id)).unwrap();
        assert_eq!(tombstone, b"gave up");
    }
}

#[test]
fn an_outcome_written_before_the_cancel_stands() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    asker.place(request("s1"), None).unwrap();
    asker
        .spool()
        .write_outcome("s1", &outcome(asker.spool(), "s1", OutcomeStatus::Answered))
        .unwrap();
    let reply = asker.withdraw("s1", "too late").unwrap();
    assert_eq!(reply.outcome().unwrap().status, OutcomeStatus::Answered);
    assert!(!asker.spool().exists(Area::Cancel, "s1"), "no tombstone");
}

#[test]
fn a_token_cancelled_beforehand_places_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    let token = CancelToken::new();
    token.cancel("");
    let reply = asker
        .ask(request("n1"), &AskOptions::default().with_cancel(token))
        .unwrap();
    assert_eq!(
        reply,
        Reply::CancelledByAsker {
            id: "n1".into(),
            reason: None
        }
    );
    assert!(!asker.spool().exists(Area::Questions, "n1"));
}

#[test]
// Refusals before placing are the `validate` feature's (the workspace's build has it).
#[cfg(feature = "validate")]
fn refusals_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    let Err(AskError::Invalid(problems)) = asker.place("{}", None) else {
        panic!("an empty object was accepted")
    };
    assert!(problems.iter().any(|p| p.message.contains("questions")));
    asker.place(request("x1"), None).unwrap();
    let error = asker.place(request("x1"), None).unwrap_err();
    assert!(matches!(error, AskError::Exists { .. }), "{error}");
    assert!(matches!(
        asker.wait("../x", &AskOptions::default()),
        Err(AskError::InvalidId(_))
    ));
}

/// Writes `bytes` as `id`'s outcome and waits for it: the wait must end at once with
/// [`AskError::BadOutcome`], whose message is returned.
fn refused_outcome(asker: &Asker, id: &str, bytes: &[u8]) -> String {
    asker.spool().write_outcome(id, bytes).unwrap();
    let options = AskOptions::default().with_timeout(Duration::from_secs(20));
    match asker.wait(id, &options) {
        Err(error @ AskError::BadOutcome { .. }) => error.to_string(),
        other => panic!("{id}: a forged outcome was not refused: {other:?}"),
    }
}

#[test]
fn a_forged_outcome_is_refused_not_taken_as_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();

    asker.place(request("g1"), None).unwrap();
    let error = refused_outcome(&asker, "g1", b"{ this is not an outcome");
    assert!(error.contains("\"g1\""), "names the request: {error}");

    asker.place(request("v1"), None).unwrap();
    let mut forged = valid_outcome(asker.spool(), "v1", OutcomeStatus::Answered);
    forged.request_sha256 = Some(inbox_protocol::sha256_hex(b"another version of v1"));
    let error = refused_outcome(&asker, "v1", &forged.to_file_bytes());
    assert!(error.contains("request_sha256"), "says why: {error}");

    asker.place(request("n1"), None).unwrap();
    let mut forged = valid_outcome(asker.spool(), "n1", OutcomeStatus::Answered);
    forged.request_sha256 = None;
    refused_outcome(&asker, "n1", &forged.to_file_bytes());

    asker.place(request("i1"), None).unwrap();
    let mut forged = valid_outcome(asker.spool(), "i1", OutcomeStatus::Answered);
    forged.id = "someone-else".into();
    refused_outcome(&asker, "i1", &forged.to_file_bytes());

    asker.place(request("b1"), None).unwrap();
    let mut forged = valid_outcome(asker.spool(), "b1", OutcomeStatus::Answered);
    forged.answered_by = "the boss".into();
    let error = refused_outcome(&asker, "b1", &forged.to_file_bytes());
    assert!(error.contains("answered_by"), "says why: {error}");

    // The async wait refuses the same way.
    asker.place(request("a1"), None).unwrap();
    asker.spool().write_outcome("a1", b"[]").unwrap();
    let reply = runtime().block_on(asker.wait_async("a1", &AskOptions::default()));
    assert!(
        matches!(reply, Err(AskError::BadOutcome { .. })),
        "{reply:?}"
    );
}

/// With `validate` the asker knows the questions, so answers that do not fit them are
/// refused as an inbox refuses them (without it, only the outcome's own fields are checked).
#[test]
#[cfg(feature = "validate")]
fn an_outcome_whose_answers_do_not_fit_the_questions_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    let cases: [(&str, serde_json::Value); 3] = [
        ("wrong-type", "yes please".into()),
        (
            "unknown-question",
            serde_json::json!({"go": true, "rm": true}),
        ),
        ("missing", serde_json::Value::Null),
    ];
    for (id, answers) in cases {
        asker.place(request(id), None).unwrap();
        let mut forged = valid_outcome(asker.spool(), id, OutcomeStatus::Answered);
        match answers {
            serde_json::Value::Null => forged.answers.clear(),
            serde_json::Value::Object(map) => forged.answers = map.into_iter().collect(),
            value => {
                forged.answers.insert("go".into(), value);
            }
        }
        let error = refused_outcome(&asker, id, &forged.to_file_bytes());
        assert!(error.contains("answers"), "{id}: says why: {error}");
    }
    // A policy may default it, but never "answer" it as a person would.
    asker.place(request("policy"), None).unwrap();
    let mut forged = valid_outcome(asker.spool(), "policy", OutcomeStatus::Answered);
    forged.answered_by = "policy:autonomous".into();
    refused_outcome(&asker, "policy", &forged.to_file_bytes());
}

#[test]
fn async_asks_run_side_by_side_without_blocking_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    let operators = [
        answer_when_placed(asker.spool(), "p1", OutcomeStatus::Answered),
        answer_when_placed(asker.spool(), "p2", OutcomeStatus::Declined),
    ];
    // One thread for everything: if a wait blocked it, the ticker could not tick.
    let (first, second, ticks) = runtime().block_on(async {
        let ticker = tokio::spawn(async {
            let mut ticks = 0;
            while ticks < 5 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                ticks += 1;
            }
            ticks
        });
        let options = AskOptions::default();
        let (first, second) = tokio::join!(
            asker.ask_async(request("p1"), &options),
            asker.ask_async(request("p2"), &options)
        );
        (first, second, ticker.await.unwrap())
    });
    for operator in operators {
        operator.join().unwrap();
    }
    assert_eq!(ticks, 5);
    assert_eq!(
        first.unwrap().outcome().unwrap().status,
        OutcomeStatus::Answered
    );
    assert_eq!(
        second.unwrap().outcome().unwrap().status,
        OutcomeStatus::Declined
    );
}

#[test]
fn an_async_wait_ends_promptly_on_cancel_and_on_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    for round in 0..ROUNDS {
        let id = format!("ac{round}");
        let token = CancelToken::new();
        let options = AskOptions::default().with_cancel(token.clone());
        let latency = runtime().block_on(async {
            let canceller = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100 + 37 * round as u64)).await;
                token.cancel("stop");
                Instant::now()
            });
            let reply = asker.ask_async(request(&id), &options).await.unwrap();
            assert!(matches!(reply, Reply::CancelledByAsker { .. }), "{reply:?}");
            canceller.await.unwrap().elapsed()
        });
        assert!(latency < PROMPT, "round {round} took {latency:?}");
        assert!(asker.spool().exists(Area::Cancel, &id));
    }

    let options = AskOptions::default().with_timeout(Duration::from_millis(200));
    let reply = runtime()
        .block_on(asker.ask_async(request("at1"), &options))
        .unwrap();
    assert_eq!(reply, Reply::TimedOut { id: "at1".into() });
}

/// A request in autonomous mode whose one question has a default: what a policy may settle.
fn autonomous_request(id: &str) -> String {
    format!(
        r#"{{"inbox": 1, "id": "{id}", "mode": "autonomous", "questions": [{{"id": "go", "question": "Go?", "type": "confirm", "default": true}}]}}"#
    )
}

/// The outcome a policy writes for [`autonomous_request`] `id`: its default taken for the
/// answer, in autonomous mode (with the decision fields) or as an older inbox wrote it.
fn policy_outcome(spool: &Spool, id: &str, by: &str, with_decision: bool) -> Vec<u8> {
    let placed = spool.read(Area::Questions, id).unwrap();
    let now = chrono::Utc::now();
    let mut outcome = Outcome::new(id, OutcomeStatus::Defaulted, by, "test/1", now);
    outcome.request_sha256 = Some(inbox_protocol::sha256_hex(&placed));
    outcome.answers.insert("go".into(), true.into());
    outcome.defaulted.push("go".into());
    if with_decision {
        outcome = outcome
            .with_decision(inbox_client::Surface::Policy, now)
            .with_trigger(inbox_protocol::Trigger::Autonomous);
    }
    outcome.to_file_bytes()
}

#[test]
fn requiring_a_person_refuses_what_a_policy_settled() {
    let dir = tempfile::tempdir().unwrap();
    let asker = Asker::open(dir.path()).unwrap();
    let required = AskOptions::default().with_require_person();
    // With the decision fields, and as an older inbox writes it: without them,
    // `answered_by` says a policy decided.
    for (id, by, with_decision) in [
        ("auto", "policy:rule:file-askers", true),
        ("old-expiry", "policy:expiry", false),
    ] {
        let placed = asker.place(autonomous_request(id), None).unwrap();
        asker
            .spool()
            .write_outcome(
                id,
                &policy_outcome(asker.spool(), &placed, by, with_decision),
            )
            .unwrap();
        match asker.wait(id, &required) {
            Err(AskError::SettledByPolicy { outcome }) => {
                assert_eq!(outcome.answered_by, by);
                assert_eq!(outcome.status, OutcomeStatus::Defaulted);
            }
            other => panic!("{id}: {other:?}"),
        }
        // Without the option, the defaults are the answer, as before.
        let reply = asker.wait(id, &AskOptions::default()).unwrap();
        assert!(matches!(reply, Reply::Settled(o) if o.answered_by == by));
    }

    // The async wait refuses it too.
    let refused = runtime().block_on(asker.wait_async("auto", &required));
    assert!(
        matches!(refused, Err(AskError::SettledByPolicy { .. })),
        "{refused:?}"
    );

    // A person's answer is what was required.
    let operator = answer_when_placed(asker.spool(), "person", OutcomeStatus::Answered);
    let reply = asker.ask(request("person"), &required).unwrap();
    operator.join().unwrap();
    assert!(matches!(reply, Reply::Settled(o) if o.status == OutcomeStatus::Answered));
}
