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
    let mut store = Store { conn, depth: 0 };
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
