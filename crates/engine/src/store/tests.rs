//! The store's own tests: records, notices, the instance id, the migrations.

use chrono::Utc;
use inbox_protocol::{parse_request, Outcome, OutcomeStatus, Request};
use rusqlite::{params, Connection};

use super::schema::migrations;
use super::*;

fn sample(id: &str) -> Request {
    let body = format!(
        r#"{{"inbox": 1, "id": "{id}", "title": "Deploy", "timeout_seconds": 60,
            "questions": [{{"id": "go", "question": "Ship?", "type": "confirm"}}]}}"#
    );
    parse_request(body.as_bytes(), Some(id)).unwrap()
}

#[test]
fn migrations_are_valid() {
    migrations().validate().unwrap();
}

#[test]
fn outcomes_are_recorded_once_and_logged() {
    let mut store = Store::open_in_memory().unwrap();
    let now = Utc::now();
    store
        .insert_pending("r1", &sample("r1"), now, None, now)
        .unwrap();
    assert_eq!(store.known().unwrap().get("r1"), Some(&true));
    assert_eq!(
        store.next_deadline().unwrap().map(|d| d.timestamp_millis()),
        Some(now.timestamp_millis() + 60_000)
    );

    let outcome = Outcome::new("r1", OutcomeStatus::Answered, "operator:ann", "h/i", now);
    assert!(store.record_outcome(&outcome, now).unwrap());
    assert!(
        !store.record_outcome(&outcome, now).unwrap(),
        "second record is a no-op"
    );
    assert!(!store.mark_cancelled("r1", "late", now).unwrap());

    let detail = store.detail("r1").unwrap().unwrap();
    assert_eq!(
        detail.summary.state,
        State::Settled(OutcomeStatus::Answered)
    );
    assert_eq!(detail.summary.answered_by.as_deref(), Some("operator:ann"));
    assert_eq!(detail.outcome.unwrap().answered_by, "operator:ann");
    let kinds: Vec<String> = store
        .events_of("r1")
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["ingested", "answered"]);
    assert!(store.pending().unwrap().is_empty());
    assert_eq!(store.history(10).unwrap().len(), 1);
}

#[test]
fn a_request_is_told_about_once_and_not_while_snoozed() {
    let mut store = Store::open_in_memory().unwrap();
    let now = Utc::now();
    store
        .insert_pending("a", &sample("a"), now, None, now)
        .unwrap();
    store
        .insert_pending("b", &sample("b"), now, None, now)
        .unwrap();
    let later = now + chrono::Duration::minutes(10);
    store
        .snooze("b", later, &serde_json::json!({"for": "10m"}), now)
        .unwrap();
    let due: Vec<String> = store
        .unnotified(now)
        .unwrap()
        .into_iter()
        .map(|d| d.summary.id)
        .collect();
    assert_eq!(due, ["a"]);
    store.mark_notified(&["a"], true, now).unwrap();
    assert!(store.unnotified(now).unwrap().is_empty());
    // Once the snooze is over, the snoozed request is due.
    assert_eq!(store.unnotified(later).unwrap().len(), 1);
}

#[test]
fn instance_id_is_stable() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.instance_id().unwrap(), store.instance_id().unwrap());
}

/// The events written before the log became a chain are chained by the migration, from
/// entry 1, and new events extend that chain.
#[test]
fn migration_chains_the_events_already_written() {
    let mut conn = Connection::open_in_memory().unwrap();
    // Version 4: the schema just before the audit chain.
    migrations().to_version(&mut conn, 4).unwrap();
    for (at, kind) in [(1_000, "ingested"), (2_000, "answered"), (3_000, "problem")] {
        conn.execute(
            "INSERT INTO events (at, request_id, kind, detail) VALUES (?1, 'r1', ?2, ?3)",
            params![at, kind, r#"{"b":1,"a":"x"}"#],
        )
        .unwrap();
    }
    migrations().to_latest(&mut conn).unwrap();
    let mut store = Store {
        conn,
        depth: 0,
        memo: Memo::default(),
    };
    let intact = store.audit_verify().unwrap().unwrap();
    assert_eq!(intact.entries, 3);

    store
        .record_problem("questions/x.json", "bad", Utc::now())
        .unwrap();
    let entries = store.audit_entries().unwrap();
    let intact = store.audit_verify().unwrap().unwrap();
    assert_eq!(intact.entries, 4);
    assert_eq!(entries[3].prev_hash, entries[2].hash);
    assert_eq!(intact.head, entries[3].hash);
}

/// A batch chains its log entries to the one it appended last without reading it back
/// (`Memo`); what another process appends between two batches, and what a rolled-back batch
/// appended, must still leave one intact chain.
#[test]
fn batches_keep_the_audit_chain_whole_next_to_another_writer_and_after_a_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inbox.sqlite3");
    let mut ours = Store::open(&path).unwrap();
    let mut theirs = Store::open(&path).unwrap();
    let now = Utc::now();

    ours.batch_begin().unwrap();
    for id in ["a", "b", "c"] {
        ours.insert_pending(id, &sample(id), now, None, now)
            .unwrap();
    }
    ours.batch_commit().unwrap();
    // Another process (a CLI command) appends between our batches.
    theirs
        .insert_pending("d", &sample("d"), now, None, now)
        .unwrap();
    theirs.batch_begin().unwrap();
    theirs
        .record_outcome(&outcome("d", OutcomeStatus::Answered), now)
        .unwrap();
    theirs.batch_commit().unwrap();

    ours.batch_begin().unwrap();
    for id in ["a", "b"] {
        assert!(ours
            .record_outcome(&outcome(id, OutcomeStatus::Defaulted), now)
            .unwrap());
    }
    ours.batch_commit().unwrap();

    // A batch that fails is rolled back, log entries and all; the next starts from the
    // chain as the database has it.
    ours.batch_begin().unwrap();
    assert!(ours
        .record_outcome(&outcome("c", OutcomeStatus::Defaulted), now)
        .unwrap());
    ours.batch_rollback();
    ours.batch_begin().unwrap();
    assert!(ours
        .record_outcome(&outcome("c", OutcomeStatus::Declined), now)
        .unwrap());
    ours.batch_commit().unwrap();
    // And outside a batch, one entry at a time.
    ours.record_problem("questions/x.json", "bad", now).unwrap();

    for store in [&ours, &theirs] {
        let intact = store.audit_verify().unwrap().unwrap();
        assert_eq!(
            intact.entries,
            4 + 4 + 1,
            "4 ingested, 4 settled, 1 problem"
        );
    }
    let kinds: Vec<String> = ours
        .events_of("c")
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["ingested", "declined"]);
}

/// Recording an outcome drops the one kept for it (the spool would not take it before),
/// also when the batch has just kept it, after finding `unwritten` empty (`Memo`).
#[test]
fn an_outcome_kept_earlier_in_the_same_batch_is_dropped_when_recorded() {
    let mut store = Store::open_in_memory().unwrap();
    let now = Utc::now();
    for id in ["a", "b"] {
        store
            .insert_pending(id, &sample(id), now, None, now)
            .unwrap();
    }
    store.batch_begin().unwrap();
    // Finds the table empty: nothing to drop.
    assert!(store
        .record_outcome(&outcome("a", OutcomeStatus::Answered), now)
        .unwrap());
    let kept = outcome("b", OutcomeStatus::Answered);
    assert!(store.keep_unwritten(&kept, "read-only", now).unwrap());
    assert!(store.unwritten("b").unwrap().is_some());
    assert!(store.record_outcome(&kept, now).unwrap());
    assert!(store.unwritten("b").unwrap().is_none());
    store.batch_commit().unwrap();
    assert!(store.all_unwritten().unwrap().is_empty());

    // A kept outcome from an earlier batch: a new batch does not trust the old finding.
    store
        .insert_pending("c", &sample("c"), now, None, now)
        .unwrap();
    let kept = outcome("c", OutcomeStatus::Answered);
    store.keep_unwritten(&kept, "full", now).unwrap();
    store.batch_begin().unwrap();
    assert!(store.record_outcome(&kept, now).unwrap());
    store.batch_commit().unwrap();
    assert!(store.all_unwritten().unwrap().is_empty());
    assert!(store.audit_verify().unwrap().is_ok());
}

fn outcome(id: &str, status: OutcomeStatus) -> Outcome {
    Outcome::new(id, status, "operator:ann", "h/i", Utc::now()).with_reason("because")
}
