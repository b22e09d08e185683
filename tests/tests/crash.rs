//! Crash consistency, short version: the `watch` daemon is SIGKILLed about 15 times under a
//! mixed workload, then every outcome, tombstone, command result and database row must
//! agree (see `inbox_harness::crash`). The long run is `inbox-bench crash --kills 200`.

use std::process::Stdio;
use std::time::Duration;

use inbox_harness::crash;

use crate::util;

#[test]
fn sigkill_at_random_moments_loses_and_duplicates_nothing() {
    let mut config = crash::Config::new(util::binary(), 15);
    // A failure names its seed; INBOX_TEST_SEED replays the same choices.
    if let Some(seed) = std::env::var("INBOX_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        config.seed = seed;
    }
    config.limit = Duration::from_secs(50);
    let report = crash::run(&config).unwrap_or_else(|message| panic!("{message}"));
    eprintln!("{report}");
    assert_eq!(report.kills, 15);
    // The workload really ran: requests were answered, defaulted and cancelled.
    for state in ["answered", "defaulted", "cancelled"] {
        assert!(
            report.states.get(state).copied().unwrap_or(0) > 0,
            "no request ended {state}: {report}"
        );
    }
    assert!(
        report.answers_written > 0 && report.answers_refused_settled > 0,
        "{report}"
    );
}

// Two defects the harness above found, each reduced to a direct reproduction that fails
// while the defect is there.

/// Commands that find no database at the same moment each create and migrate it; none may
/// fail ("table meta already exists"), since a daemon, the desktop app and one-shot
/// commands are all started independently.
#[test]
fn concurrent_first_opens_of_a_new_database_all_succeed() {
    for round in 0..10 {
        let inbox = util::Inbox::new();
        let children: Vec<util::Running> = (0..3)
            .map(|n| {
                let log = std::fs::File::create(inbox.dir.path().join(format!("{n}.err"))).unwrap();
                let mut cmd = inbox.cmd(&["list"]);
                cmd.stdout(Stdio::null()).stderr(Stdio::from(log));
                util::Running::adopt(cmd.spawn().unwrap())
            })
            .collect();
        for (n, mut child) in children.into_iter().enumerate() {
            let status = child.child.wait().unwrap();
            let log = std::fs::read_to_string(inbox.dir.path().join(format!("{n}.err"))).unwrap();
            assert!(
                status.success(),
                "round {round}, command {n}: {status}: {log}"
            );
        }
    }
}

/// An `answer` that checked for a tombstone just before `cancel` placed one, and reached the
/// database just after the cancel was recorded, still writes its outcome (the link succeeds:
/// there is no outcome yet). That outcome stands, as the protocol says, so the database must
/// say so too; it must not keep `cancelled` (and a later scan never looks at it again).
/// A third connection holds the database's write lock so that both commands queue for it
/// with their file checks done; which one gets it first is up to SQLite, so this tries
/// several times.
#[test]
fn an_outcome_written_as_a_cancel_is_recorded_is_what_the_database_says() {
    let inbox = util::Inbox::new();
    for attempt in 0..10 {
        let id = format!("race-{attempt}");
        inbox.place(
            &id,
            r#"{"inbox": 1, "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#,
        );
        assert_eq!(
            util::code(&inbox.run(&["list"])),
            0,
            "the request is ingested"
        );
        let lock = rusqlite::Connection::open(inbox.db()).unwrap();
        lock.execute_batch("BEGIN IMMEDIATE").unwrap();
        let spawn = |args: &[&str], name: &str| {
            let log = std::fs::File::create(inbox.dir.path().join(name)).unwrap();
            let mut cmd = inbox.cmd(args);
            cmd.stdout(Stdio::null()).stderr(Stdio::from(log));
            util::Running::adopt(cmd.spawn().unwrap())
        };
        let mut answer = spawn(&["answer", &id, "--set", "go=yes"], "answer.err");
        // Time for `answer` to find no tombstone and queue for the lock (if it is slower,
        // it sees the tombstone and refuses: that attempt proves nothing, and fails nothing).
        std::thread::sleep(Duration::from_millis(500));
        let mut cancel = spawn(&["cancel", &id], "cancel.err");
        let tombstone = inbox.spool().join("cancel").join(&id);
        util::eventually("the tombstone", || tombstone.exists());
        std::thread::sleep(Duration::from_millis(100));
        lock.execute_batch("ROLLBACK").unwrap();
        let answered = answer.child.wait().unwrap();
        let cancelled = cancel.child.wait().unwrap();

        let spool_says = if inbox.outcome_path(&id).exists() {
            inbox.outcome(&id)["status"].as_str().unwrap().to_owned()
        } else {
            "cancelled".to_owned()
        };
        let db_says: String = lock
            .query_row("SELECT status FROM requests WHERE id = ?1", [&id], |r| {
                r.get(0)
            })
            .unwrap();
        let log = |name: &str| std::fs::read_to_string(inbox.dir.path().join(name)).unwrap();
        assert_eq!(
            db_says,
            spool_says,
            "attempt {attempt}: the database disagrees with the spool; answer {answered}: {}; \
             cancel {cancelled}: {}",
            log("answer.err").trim(),
            log("cancel.err").trim()
        );
    }
}
