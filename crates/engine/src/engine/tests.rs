//! Ingest when the loop relies on its watcher's events ([`Engine::rely_on_events`]): a
//! request from a `questions/` event skips looking for its outcome or tombstone, unless one
//! was seen while the request was unknown; an outcome or tombstone that comes later in the
//! same batch keeps the policy from deciding it again.
//!
//! Each test drives the engine turn by turn, as the loop does, giving it the paths the
//! watcher would: deterministic, whatever the machine's load.

use std::path::PathBuf;

use chrono::Utc;
use inbox_protocol::{parse_request, Outcome, OutcomeStatus};
use inbox_spool::{Area, Spool};

use super::{Completeness, Engine, Wake};
use crate::store::{State, Store};

const AUTONOMOUS: &str = r#"{"inbox": 1, "mode": "autonomous", "questions": [
    {"id": "go", "question": "Go?", "type": "confirm", "default": true}]}"#;

const INTERACTIVE: &str = r#"{"inbox": 1, "title": "Deploy", "questions": [
    {"id": "go", "question": "Ship it?", "type": "confirm"}]}"#;

struct Fixture {
    _dir: tempfile::TempDir,
    spool: Spool,
    engine: Engine,
}

fn spool() -> (tempfile::TempDir, Spool) {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::open(dir.path().join("spool")).unwrap();
    (dir, spool)
}

/// An engine on this spool after its loop's first turn, relying on a watcher that is
/// complete or not.
fn start(dir: tempfile::TempDir, spool: Spool, complete: bool) -> Fixture {
    let mut engine = Engine::new(spool.clone(), Store::open_in_memory().unwrap()).unwrap();
    engine.rely_on_events(Completeness::new(complete));
    engine.turn(Wake::Start).unwrap();
    Fixture {
        _dir: dir,
        spool,
        engine,
    }
}

fn started(complete: bool) -> Fixture {
    let (dir, spool) = spool();
    start(dir, spool, complete)
}

/// Another inbox's outcome for a request with this body: declined by the operator (the
/// account the tests run as, who owns the file, as an outcome's author must).
fn outcome_by_another(spool: &Spool, id: &str, body: &str) -> PathBuf {
    let request = parse_request(body.as_bytes(), Some(id)).unwrap();
    let operator = crate::operator::answered_by(&crate::operator::account());
    let outcome = Outcome::new(id, OutcomeStatus::Declined, operator, "other/1", Utc::now())
        .with_reason("not today")
        .with_request_sha256(Some(request.sha256.clone()));
    spool.write_outcome(id, &outcome.to_file_bytes()).unwrap();
    spool.path(Area::Answers, id)
}

fn tombstone(spool: &Spool, id: &str) -> PathBuf {
    spool.place_tombstone(id, "not needed").unwrap();
    spool.path(Area::Cancel, id)
}

impl Fixture {
    fn place(&self, id: &str, body: &str) -> PathBuf {
        self.spool.place_request(id, body.as_bytes()).unwrap()
    }

    fn paths(&mut self, paths: &[&PathBuf]) {
        let paths = paths.iter().map(|p| (*p).clone()).collect();
        self.engine.turn(Wake::Paths(paths)).unwrap();
    }

    fn state(&self, id: &str) -> Option<State> {
        self.engine.store.state(id).unwrap()
    }

    fn has_outcome(&self, id: &str) -> bool {
        self.spool.exists(Area::Answers, id)
    }
}

/// The work the look saves is really not done: an outcome whose event has not come yet is
/// recorded when it comes.
#[test]
fn a_request_from_an_event_skips_the_look_and_its_outcome_is_recorded_by_its_own_event() {
    let mut fx = started(true);
    let request = fx.place("r", INTERACTIVE);
    let outcome = outcome_by_another(&fx.spool, "r", INTERACTIVE);
    fx.paths(&[&request]);
    assert_eq!(fx.state("r"), Some(State::Pending));
    fx.paths(&[&outcome]);
    assert_eq!(fx.state("r"), Some(State::Settled(OutcomeStatus::Declined)));
}

/// Without a complete watch (polling, a watch that ended, one-shot use) nothing is skipped.
#[test]
fn without_a_complete_watch_the_request_is_looked_for() {
    let mut fx = started(false);
    let request = fx.place("r", INTERACTIVE);
    outcome_by_another(&fx.spool, "r", INTERACTIVE);
    fx.paths(&[&request]);
    assert_eq!(fx.state("r"), Some(State::Settled(OutcomeStatus::Declined)));
}

/// An outcome whose event came before its request existed: no later event will report it,
/// so the request's own event looks for it.
#[test]
fn an_outcome_seen_before_its_request_settles_the_request_at_once() {
    let mut fx = started(true);
    let outcome = outcome_by_another(&fx.spool, "early", INTERACTIVE);
    fx.paths(&[&outcome]);
    assert_eq!(fx.state("early"), None);
    let request = fx.place("early", INTERACTIVE);
    fx.paths(&[&request]);
    assert_eq!(
        fx.state("early"),
        Some(State::Settled(OutcomeStatus::Declined))
    );
}

/// The same for a tombstone, with an autonomous request the policy would otherwise answer.
#[test]
fn a_tombstone_seen_before_its_request_cancels_it_and_nothing_is_written() {
    let mut fx = started(true);
    let tombstone = tombstone(&fx.spool, "early");
    fx.paths(&[&tombstone]);
    let request = fx.place("early", AUTONOMOUS);
    fx.paths(&[&request]);
    assert_eq!(fx.state("early"), Some(State::Cancelled));
    assert!(!fx.has_outcome("early"));
}

/// An outcome or tombstone already there when the loop starts is found by its first scan,
/// which remembers it for a request that comes later.
#[test]
fn an_outcome_or_tombstone_there_at_start_is_looked_for_when_its_request_comes() {
    let (dir, spool) = spool();
    outcome_by_another(&spool, "answered", INTERACTIVE);
    tombstone(&spool, "withdrawn");
    let mut fx = start(dir, spool, true);
    let answered = fx.place("answered", INTERACTIVE);
    let withdrawn = fx.place("withdrawn", AUTONOMOUS);
    fx.paths(&[&answered, &withdrawn]);
    assert_eq!(
        fx.state("answered"),
        Some(State::Settled(OutcomeStatus::Declined))
    );
    assert_eq!(fx.state("withdrawn"), Some(State::Cancelled));
    assert!(!fx.has_outcome("withdrawn"));
}

/// A tombstone placed right after an autonomous request, both in one batch: the request is
/// cancelled by the tombstone's event before the policy runs, and the policy leaves it be.
#[test]
fn a_tombstone_later_in_the_same_batch_keeps_the_policy_from_answering() {
    let mut fx = started(true);
    let request = fx.place("quick", AUTONOMOUS);
    let tombstone = tombstone(&fx.spool, "quick");
    fx.paths(&[&request, &tombstone]);
    assert_eq!(fx.state("quick"), Some(State::Cancelled));
    assert!(!fx.has_outcome("quick"));
}

/// An autonomous request with nothing else there is answered in the turn its event comes,
/// as before.
#[test]
fn an_autonomous_request_is_still_answered_in_its_turn() {
    let mut fx = started(true);
    let request = fx.place("auto", AUTONOMOUS);
    fx.paths(&[&request]);
    assert_eq!(
        fx.state("auto"),
        Some(State::Settled(OutcomeStatus::Defaulted))
    );
}
