//! `answer-inbox audit`, black-box: real requests go through the command, the log they leave
//! is exported and verifies, and each quiet rewrite of it (an entry edited, deleted, two
//! swapped, in the database or in an export) makes `verify` fail, naming the entry.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use crate::util::{code, stderr, stdout, Inbox};

const CONFIRM: &str = r#"{"inbox": 1, "title": "Deploy", "questions": [{"id": "go", "question": "Ship?", "type": "confirm"}]}"#;

/// An inbox whose log holds an ingest, an answer, a decline, a cancel and a rejection.
fn busy_inbox() -> Inbox {
    let inbox = Inbox::new();
    for id in ["a1", "d1", "c1"] {
        let out = inbox.run_with_stdin(&["ask", "--id", id, "-"], CONFIRM.as_bytes());
        assert_eq!(code(&out), 0, "ask {id}: {}", stderr(&out));
    }
    let runs: [&[&str]; 3] = [
        &["answer", "a1", "--set", "go=yes"],
        &["answer", "d1", "--decline", "change freeze"],
        &["cancel", "c1"],
    ];
    for args in runs {
        let out = inbox.run(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    }
    inbox.place("bad1", r#"{"inbox": 1, "questions": "not a list"}"#);
    let out = inbox.run(&["list"]);
    assert_eq!(code(&out), 0, "list: {}", stderr(&out));
    inbox
}

fn export(inbox: &Inbox, db: &Path) -> Vec<Value> {
    let out = inbox.run(&["--db", db.to_str().unwrap(), "audit", "export"]);
    assert_eq!(code(&out), 0, "export: {}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON entry"))
        .collect()
}

/// A copy of the inbox's database to tamper with, written whole by SQLite itself.
fn copy_db(inbox: &Inbox, name: &str) -> PathBuf {
    let copy = inbox.dir.path().join(name);
    Connection::open(inbox.db())
        .unwrap()
        .execute("VACUUM INTO ?1", [copy.to_str().unwrap()])
        .unwrap();
    copy
}

/// `audit verify` on a database (or, with `file`, an export): its exit code and message.
fn verify(inbox: &Inbox, db: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["--db", db.to_str().unwrap(), "audit", "verify"];
    args.extend_from_slice(extra);
    let out = inbox.run(&args);
    (code(&out), stdout(&out) + &stderr(&out))
}

fn seq_of(entries: &[Value], kind: &str) -> i64 {
    entries
        .iter()
        .find(|entry| entry["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} entry in {entries:?}"))["seq"]
        .as_i64()
        .unwrap()
}

#[test]
fn every_event_is_exported_as_a_chain_that_verifies() {
    let inbox = busy_inbox();
    let entries = export(&inbox, &inbox.db());
    let kinds: Vec<&str> = entries
        .iter()
        .map(|entry| entry["kind"].as_str().unwrap())
        .collect();
    for kind in ["ingested", "answered", "declined", "cancelled", "rejected"] {
        assert!(kinds.contains(&kind), "{kind} is logged: {kinds:?}");
    }
    for (index, entry) in entries.iter().enumerate() {
        assert_eq!(entry["seq"], index as i64 + 1);
        if index > 0 {
            assert_eq!(entry["prev_hash"], entries[index - 1]["hash"]);
        }
    }

    let (status, message) = verify(&inbox, &inbox.db(), &[]);
    assert_eq!(status, 0, "{message}");
    let head = entries.last().unwrap()["hash"].as_str().unwrap();
    assert!(message.contains("intact"), "{message}");
    assert!(
        message.contains(head),
        "verify prints the head hash: {message}"
    );

    // The kept head still verifies once the log has grown.
    let out = inbox.run_with_stdin(&["ask", "--id", "later", "-"], CONFIRM.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (status, message) = verify(&inbox, &inbox.db(), &["--head", head]);
    assert_eq!(status, 0, "{message}");
}

#[test]
fn an_edited_entry_is_named_by_verify() {
    let inbox = busy_inbox();
    let entries = export(&inbox, &inbox.db());
    let answered = seq_of(&entries, "answered");
    let db = copy_db(&inbox, "edited.sqlite3");
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE events SET detail = replace(detail, 'operator:', 'policy:') WHERE seq = ?1",
            [answered],
        )
        .unwrap();
    let (status, message) = verify(&inbox, &db, &[]);
    assert_eq!(status, 1, "{message}");
    assert!(
        message.contains(&format!("entry {answered} was edited")),
        "{message}"
    );
}

#[test]
fn a_deleted_entry_is_named_by_verify() {
    let inbox = busy_inbox();
    let entries = export(&inbox, &inbox.db());
    let declined = seq_of(&entries, "declined");
    assert!(declined < entries.len() as i64, "not the newest entry");
    let db = copy_db(&inbox, "deleted.sqlite3");
    Connection::open(&db)
        .unwrap()
        .execute("DELETE FROM events WHERE seq = ?1", [declined])
        .unwrap();
    let (status, message) = verify(&inbox, &db, &[]);
    assert_eq!(status, 1, "{message}");
    assert!(
        message.contains(&format!("entry {declined} was deleted")),
        "{message}"
    );
}

#[test]
fn swapped_entries_are_named_by_verify() {
    let inbox = busy_inbox();
    let entries = export(&inbox, &inbox.db());
    let (first, second) = (seq_of(&entries, "answered"), seq_of(&entries, "cancelled"));
    assert!(first < second);
    let db = copy_db(&inbox, "swapped.sqlite3");
    // Rows keep their sequence numbers (the key); their records trade places.
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "UPDATE events SET seq = -1 WHERE seq = {first};
         UPDATE events SET seq = {first} WHERE seq = {second};
         UPDATE events SET seq = {second} WHERE seq = -1;"
    ))
    .unwrap();
    drop(conn);
    let (status, message) = verify(&inbox, &db, &[]);
    assert_eq!(status, 1, "{message}");
    assert!(
        message.contains(&format!("entry {first} was reordered")),
        "{message}"
    );
}

#[test]
fn a_tampered_export_is_named_by_verify() {
    let inbox = busy_inbox();
    let file = inbox.dir.path().join("audit.jsonl");
    let out = inbox.run(&["audit", "export", "--output", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let (status, message) = verify(&inbox, &inbox.db(), &["--file", file.to_str().unwrap()]);
    assert_eq!(status, 0, "the export verifies as written: {message}");

    let lines: Vec<&str> = text.lines().collect();
    let check = |lines: &[&str]| {
        std::fs::write(&file, lines.join("\n")).unwrap();
        verify(&inbox, &inbox.db(), &["--file", file.to_str().unwrap()])
    };

    let mut forged: Value = serde_json::from_str(lines[1]).unwrap();
    forged["detail"] = serde_json::json!({"forged": true});
    let edited_line = forged.to_string();
    let mut edited = lines.clone();
    edited[1] = &edited_line;
    let (status, message) = check(&edited);
    assert_eq!(status, 1, "{message}");
    assert!(message.contains("entry 2 was edited"), "{message}");

    let mut deleted = lines.clone();
    deleted.remove(2);
    let (status, message) = check(&deleted);
    assert_eq!(status, 1, "{message}");
    assert!(message.contains("entry 3 was deleted"), "{message}");

    let mut swapped = lines.clone();
    swapped.swap(0, 1);
    let (status, message) = check(&swapped);
    assert_eq!(status, 1, "{message}");
    assert!(message.contains("entry 1 was reordered"), "{message}");
}

/// An export's `at` is the time people read, and a field the format does not know can say
/// anything: an edit of the one or an added other must fail `verify --file`, naming the
/// entry and the field (issue 25). An untouched export still verifies.
#[test]
fn an_export_with_an_edited_time_or_an_added_field_is_named_by_verify() {
    let inbox = busy_inbox();
    let file = inbox.dir.path().join("audit.jsonl");
    let out = inbox.run(&["audit", "export", "--output", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let check = |index: usize, change: &dyn Fn(&mut Value)| {
        let mut entry: Value = serde_json::from_str(lines[index]).unwrap();
        change(&mut entry);
        let mut changed: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
        changed[index] = entry.to_string();
        std::fs::write(&file, changed.join("\n")).unwrap();
        verify(&inbox, &inbox.db(), &["--file", file.to_str().unwrap()])
    };

    type Change = fn(&mut Value);
    let cases: [(usize, Change, &str, &str); 3] = [
        (
            1,
            |entry| entry["at"] = Value::from("2020-01-01T00:00:00Z"),
            "entry 2",
            "`at`",
        ),
        (
            2,
            |entry| entry["approved_by"] = Value::from("the security team"),
            "entry 3",
            "approved_by",
        ),
        (
            0,
            |entry| {
                entry.as_object_mut().unwrap().remove("at");
            },
            "entry 1",
            "`at`",
        ),
    ];
    for (index, change, entry, field) in cases {
        let (status, message) = check(index, &change);
        assert_eq!(status, 1, "{entry}, {field}: {message}");
        assert!(
            message.contains(entry) && message.contains(field),
            "{message}"
        );
    }

    let (status, message) = check(0, &|_| {});
    assert_eq!(status, 0, "the export as written verifies: {message}");
}
