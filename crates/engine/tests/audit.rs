//! The audit log's hash chain: a log written through the store verifies, and each way of
//! rewriting it quietly (an entry edited, deleted, moved, re-linked, or the whole tail
//! rewritten with fresh hashes) is caught, naming the first broken entry.

use chrono::{TimeZone, Utc};
use inbox_engine::audit::{self, Broken, Entry, Fault};
use inbox_engine::Store;
use rusqlite::{params, Connection};

/// A database with `count` events written through the store, and its path.
fn logged(count: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("inbox.sqlite3");
    let mut store = Store::open(&db).unwrap();
    for n in 0..count {
        let at = Utc
            .timestamp_millis_opt(1_700_000_000_000 + n as i64)
            .unwrap();
        store
            .record_problem(&format!("questions/{n}.json"), &format!("reason {n}"), at)
            .unwrap();
    }
    (dir, db)
}

fn entries(db: &std::path::Path) -> Vec<Entry> {
    Store::open(db).unwrap().audit_entries().unwrap()
}

fn verify(db: &std::path::Path) -> Result<audit::Intact, Broken> {
    Store::open(db).unwrap().audit_verify().unwrap()
}

fn broken(seq: i64, fault: Fault) -> Result<audit::Intact, Broken> {
    Err(Broken { seq, fault })
}

#[test]
fn a_log_written_through_the_store_is_an_intact_chain() {
    let (_dir, db) = logged(5);
    let all = entries(&db);
    assert_eq!(all.len(), 5);
    assert_eq!(all[0].seq, 1);
    assert_eq!(all[0].prev_hash, audit::GENESIS);
    for pair in all.windows(2) {
        assert_eq!(
            pair[1].prev_hash, pair[0].hash,
            "each entry names the one before"
        );
        assert_eq!(pair[1].seq, pair[0].seq + 1);
    }
    let intact = verify(&db).unwrap();
    assert_eq!(intact.entries, 5);
    assert_eq!(intact.head, all[4].hash);
}

#[test]
fn an_empty_log_is_intact_with_the_genesis_head() {
    let intact = audit::verify(&[]).unwrap();
    assert_eq!((intact.entries, intact.head.as_str()), (0, audit::GENESIS));
}

#[test]
fn an_edited_entry_is_caught_and_named() {
    let (_dir, db) = logged(5);
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE events SET detail = '{\"path\":\"questions/2.json\",\"reason\":\"fine\"}'
             WHERE seq = 3",
            [],
        )
        .unwrap();
    assert_eq!(verify(&db), broken(3, Fault::Edited));

    // Its time or its request count as much as its detail.
    let (_dir, db) = logged(5);
    Connection::open(&db)
        .unwrap()
        .execute("UPDATE events SET at = at + 1 WHERE seq = 4", [])
        .unwrap();
    assert_eq!(verify(&db), broken(4, Fault::Edited));
}

#[test]
fn a_deleted_entry_is_caught_and_named() {
    let (_dir, db) = logged(5);
    Connection::open(&db)
        .unwrap()
        .execute("DELETE FROM events WHERE seq = 2", [])
        .unwrap();
    assert_eq!(verify(&db), broken(2, Fault::Deleted));

    let (_dir, db) = logged(3);
    Connection::open(&db)
        .unwrap()
        .execute("DELETE FROM events WHERE seq = 1", [])
        .unwrap();
    assert_eq!(
        verify(&db),
        broken(1, Fault::Deleted),
        "the first entry too"
    );
}

/// Swaps two rows' records; with `chain_too` their hashes move with them.
fn swap(db: &std::path::Path, a: i64, b: i64, chain_too: bool) {
    let columns = if chain_too {
        "at, request_id, kind, detail, prev_hash, hash"
    } else {
        "at, request_id, kind, detail"
    };
    let conn = Connection::open(db).unwrap();
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE moved AS SELECT seq, {columns} FROM events WHERE seq IN ({a}, {b});"
    ))
    .unwrap();
    for column in columns.split(", ") {
        conn.execute(
            &format!(
                "UPDATE events SET {column} = (SELECT {column} FROM temp.moved
                 WHERE moved.seq = (?1 + ?2 - events.seq)) WHERE seq IN (?1, ?2)"
            ),
            params![a, b],
        )
        .unwrap();
    }
}

#[test]
fn reordered_entries_are_caught_and_named() {
    let (_dir, db) = logged(5);
    swap(&db, 2, 4, true);
    assert_eq!(verify(&db), broken(2, Fault::Reordered { holds: 4 }));

    let (_dir, db) = logged(5);
    swap(&db, 3, 4, false);
    assert_eq!(verify(&db), broken(3, Fault::Reordered { holds: 4 }));
}

#[test]
fn an_entry_relinked_with_a_fresh_hash_of_its_own_is_caught() {
    // Entry 3 replaced by a record whose hash is right for itself, but which names a
    // previous hash other than entry 2's.
    let (_dir, db) = logged(5);
    let mut forged = entries(&db)[2].clone();
    forged.detail = serde_json::json!({"path": "questions/2.json", "reason": "forged"});
    forged.prev_hash = "ab".repeat(32);
    forged.hash = forged.computed_hash();
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE events SET detail = ?1, prev_hash = ?2, hash = ?3 WHERE seq = 3",
            params![forged.detail.to_string(), forged.prev_hash, forged.hash],
        )
        .unwrap();
    assert_eq!(verify(&db), broken(3, Fault::WrongPrevious));
}

#[test]
fn a_whole_rewritten_tail_is_caught_only_against_a_kept_head() {
    let (_dir, db) = logged(5);
    let kept_head = verify(&db).unwrap().head;

    // Rewrite entry 3 and re-hash everything after it: the chain holds on its own.
    let mut all = entries(&db);
    all[2].detail = serde_json::json!({"path": "questions/2.json", "reason": "rewritten"});
    for index in 2..all.len() {
        all[index].prev_hash = all[index - 1].hash.clone();
        all[index].hash = all[index].computed_hash();
    }
    let conn = Connection::open(&db).unwrap();
    for entry in &all[2..] {
        conn.execute(
            "UPDATE events SET detail = ?1, prev_hash = ?2, hash = ?3 WHERE seq = ?4",
            params![
                entry.detail.to_string(),
                entry.prev_hash,
                entry.hash,
                entry.seq
            ],
        )
        .unwrap();
    }
    assert!(verify(&db).is_ok(), "a full rewrite is consistent");
    let against_head = audit::verify_with_head(&entries(&db), &kept_head);
    assert!(
        matches!(
            against_head,
            Err(Broken { fault: Fault::HeadMissing { ref head }, .. }) if *head == kept_head
        ),
        "{against_head:?}"
    );

    // An honest log that grew since still holds its old head.
    let (_dir, db) = logged(3);
    let old_head = verify(&db).unwrap().head;
    Store::open(&db)
        .unwrap()
        .record_problem("questions/later.json", "later", Utc::now())
        .unwrap();
    assert!(audit::verify_with_head(&entries(&db), &old_head).is_ok());
}

#[test]
fn an_export_round_trips_and_its_tampering_is_caught() {
    let (_dir, db) = logged(5);
    let text = audit::to_json_lines(&entries(&db));
    assert_eq!(text.lines().count(), 5);
    let parsed = audit::parse_export(&text).unwrap();
    assert_eq!(audit::verify(&parsed).unwrap(), verify(&db).unwrap());

    let lines: Vec<&str> = text.lines().collect();
    let rejoin = |lines: &[&str]| audit::verify(&audit::parse_export(&lines.join("\n")).unwrap());

    let mut reordered = lines.clone();
    reordered.swap(1, 3);
    assert_eq!(
        rejoin(&reordered),
        broken(2, Fault::OutOfOrder { found: 4 })
    );

    let mut deleted = lines.clone();
    deleted.remove(3);
    assert_eq!(rejoin(&deleted), broken(4, Fault::Deleted));

    let edited_line = lines[2].replace("reason 2", "reason X");
    let mut edited = lines.clone();
    edited[2] = &edited_line;
    assert_eq!(rejoin(&edited), broken(3, Fault::Edited));

    assert!(audit::parse_export("{\"seq\": 1}\n")
        .unwrap_err()
        .contains("line 1"));
}

#[test]
fn logging_inside_a_batch_extends_the_chain_once_committed() {
    let (_dir, db) = logged(2);
    let mut store = Store::open(&db).unwrap();
    store.batch_begin().unwrap();
    store.record_problem("a", "one", Utc::now()).unwrap();
    store.record_problem("b", "two", Utc::now()).unwrap();
    store.batch_commit().unwrap();
    assert_eq!(verify(&db).unwrap().entries, 4);

    store.batch_begin().unwrap();
    store
        .record_problem("c", "rolled back", Utc::now())
        .unwrap();
    store.batch_rollback();
    store.record_problem("d", "after", Utc::now()).unwrap();
    assert_eq!(verify(&db).unwrap().entries, 5);
}
