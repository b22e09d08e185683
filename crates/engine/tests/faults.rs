//! Recovery from every fault point (crates/engine/src/faults.rs): each write, fsync, link and
//! commit step is made to fail, and then to crash, while the operator answers and while an
//! invalid request is rejected. Afterwards a fresh engine on the same spool and database
//! must find a consistent inbox: the decision is either whole (outcome file and record
//! agree) or absent (still pending, and answerable exactly once), and never lost.
//!
//! Runs only with the `failpoints` feature (the workspace's test build turns it on through
//! the inbox-harness crate).
#![cfg(feature = "failpoints")]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use inbox_engine::faults::POINTS;
use inbox_engine::{Area, Engine, SettleError, Spool, State, Store, Wake};
use inbox_protocol::{OutcomeStatus, Surface};
use serde_json::{json, Map, Value};

const CONFIRM: &str = r#"{"inbox":1,"title":"Deploy?","questions":[
    {"id":"go","question":"Deploy now?","type":"confirm","required":true}]}"#;

fn open(dir: &Path) -> Engine {
    let spool = Spool::open(dir.join("spool")).unwrap();
    let store = Store::open(&dir.join("inbox.sqlite3")).unwrap();
    Engine::new(spool, store).unwrap()
}

fn yes() -> Map<String, Value> {
    json!({"go": true}).as_object().unwrap().clone()
}

/// How a fault point is turned on, and what the step then does.
const ACTIONS: [&str; 2] = ["return(eio)", "panic"];

/// Runs `during` with `point` set to `action`; a panic (the simulated crash) is caught, and
/// the engine is dropped right after, as a killed process would leave things.
fn with_fault(point: &str, action: &str, engine: Engine, during: impl FnOnce(&mut Engine)) {
    fail::cfg(point, action).unwrap();
    let mut engine = engine;
    let crashed = catch_unwind(AssertUnwindSafe(|| during(&mut engine))).is_err();
    fail::cfg(point, "off").unwrap();
    assert_eq!(
        crashed,
        action == "panic",
        "{point}={action}: the step should {}",
        if action == "panic" {
            "crash"
        } else {
            "fail without crashing"
        }
    );
    drop(engine);
}

/// The request's outcome file, if any, as JSON.
fn outcome_file(spool: &Spool, id: &str) -> Option<Value> {
    spool
        .read(Area::Answers, id)
        .ok()
        .map(|bytes| serde_json::from_slice(&bytes).expect("an outcome file is whole JSON"))
}

#[test]
fn an_answer_survives_a_fault_at_every_step() {
    for_every_fault(|point, action, dir| {
        let mut engine = open(dir);
        engine
            .spool()
            .place_request("deploy", CONFIRM.as_bytes())
            .unwrap();
        engine.sync().unwrap();

        with_fault(point, action, engine, |engine| {
            let result = engine.answer("deploy", &yes(), None, Surface::Cli);
            assert!(
                result.is_err(),
                "{point}={action}: the operator hears of it"
            );
            // Failing before the file is linked keeps the answer for a retry; failing
            // at the store's commit is an error, with the file possibly in place.
            if let Err(error) = &result {
                assert!(
                    matches!(
                        error,
                        SettleError::Unwritten { .. } | SettleError::Engine(_)
                    ),
                    "{point}={action}: {error}"
                );
            }
        });

        // Restart: a fresh engine on the same spool and database.
        let mut engine = open(dir);
        engine.sync().unwrap();
        let state = engine.queries().state("deploy").unwrap();
        let file = outcome_file(engine.spool(), "deploy");
        let kept = engine.queries().unwritten("deploy").unwrap();
        match (&file, state) {
            (Some(file), Some(State::Settled(_))) => {
                assert_eq!(file["answered_by"], me(), "{point}={action}");
                let recorded = engine.queries().detail("deploy").unwrap().unwrap();
                assert_eq!(
                    serde_json::to_value(recorded.outcome.unwrap()).unwrap()["answered_at"],
                    file["answered_at"],
                    "{point}={action}: the store records the file's outcome"
                );
            }
            (None, Some(State::Pending)) if kept.is_some() => {
                // Kept: the next retry writes exactly what was decided.
                engine.turn(Wake::RetryUnwritten).unwrap();
                assert!(
                    engine.queries().unwritten("deploy").unwrap().is_none(),
                    "{point}={action}"
                );
                let file = outcome_file(engine.spool(), "deploy").unwrap();
                assert_eq!(file["answered_by"], me());
                assert_eq!(file["answers"]["go"], true);
            }
            (None, Some(State::Pending)) => {
                // Nothing was decided durably: the operator can answer, exactly once.
                engine.answer("deploy", &yes(), None, Surface::Cli).unwrap();
                assert!(matches!(
                    engine.answer("deploy", &yes(), None, Surface::Cli),
                    Err(SettleError::AlreadySettled(_))
                ));
            }
            other => panic!("{point}={action}: inconsistent after restart: {other:?}"),
        }
        assert_settled_as(
            &engine,
            dir,
            "deploy",
            OutcomeStatus::Answered,
            &format!("{point}={action}"),
        );
    });
}

#[test]
fn an_invalid_request_is_rejected_once_despite_a_fault_at_every_step() {
    for_every_fault(|point, action, dir| {
        let engine = open(dir);
        engine
            .spool()
            .place_request("broken", br#"{"inbox":1,"questions":[]}"#)
            .unwrap();

        with_fault(point, action, engine, |engine| {
            // The loop goes on after an error; only a crash stops it.
            let _ = engine.sync();
        });

        let mut engine = open(dir);
        engine.sync().unwrap();
        if engine.queries().unwritten("broken").unwrap().is_some() {
            engine.turn(Wake::RetryUnwritten).unwrap();
        }
        assert_settled_as(
            &engine,
            dir,
            "broken",
            OutcomeStatus::Rejected,
            &format!("{point}={action}"),
        );
    });
}

#[test]
fn an_expiry_survives_a_fault_at_every_step() {
    for_every_fault(|point, action, dir| {
        let mut engine = open(dir);
        engine
            .spool()
            .place_request(
                "soon",
                br#"{"inbox":1,"timeout_seconds":1,"questions":[
                    {"id":"go","question":"Go?","type":"confirm","required":true}]}"#,
            )
            .unwrap();
        engine.sync().unwrap();
        let later = chrono::Utc::now() + chrono::Duration::seconds(5);

        with_fault(point, action, engine, |engine| {
            let _ = engine.turn(Wake::Deadline(later));
        });

        let mut engine = open(dir);
        engine.sync().unwrap();
        engine.turn(Wake::RetryUnwritten).unwrap();
        engine.turn(Wake::Deadline(later)).unwrap();
        assert_settled_as(
            &engine,
            dir,
            "soon",
            OutcomeStatus::Expired,
            &format!("{point}={action}"),
        );
    });
}

/// Runs `case` once for every fault point and action, each in a fresh directory, inside one
/// fail scenario (which keeps the fault-point registry to this test while it runs).
fn for_every_fault(mut case: impl FnMut(&str, &str, &Path)) {
    let scenario = fail::FailScenario::setup();
    for point in POINTS {
        for action in ACTIONS {
            let dir = tempfile::tempdir().unwrap();
            case(point, action, dir.path());
        }
    }
    scenario.teardown();
}

/// After recovery, `id`'s outcome file and the database agree that it is settled as `status`,
/// and the database is intact.
fn assert_settled_as(engine: &Engine, dir: &Path, id: &str, status: OutcomeStatus, case: &str) {
    let file = outcome_file(engine.spool(), id)
        .unwrap_or_else(|| panic!("{case}: no outcome for {id} after restart"));
    assert_eq!(file["status"], status.as_str(), "{case}");
    assert_eq!(
        engine.queries().state(id).unwrap(),
        Some(State::Settled(status)),
        "{case}"
    );
    assert_integrity(dir);
}

fn assert_integrity(dir: &Path) {
    let conn = rusqlite::Connection::open(dir.join("inbox.sqlite3")).unwrap();
    let verdict: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(verdict, "ok");
}

/// How a person's answer through these engines is recorded: the account the tests run as.
fn me() -> String {
    inbox_engine::operator::answered_by(&inbox_engine::operator::account())
}
