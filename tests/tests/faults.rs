//! Environment faults, against the real binary: no notification service, an answers
//! directory that is read-only or full, a database locked by another process, and a
//! database deleted while the inbox runs. In each, nothing blocks and no answer is lost.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use inbox_harness::read_only::ReadOnly;
use inbox_harness::session::Session;
use serde_json::Value;

use crate::util::{self, code, eventually, stderr, Inbox, Running};

const CONFIRM: &str = r#"{"inbox":1,"title":"Deploy?","questions":[
    {"id":"go","question":"Deploy now?","type":"confirm","required":true}]}"#;

/// `answer-inbox watch` with its standard error in a file, so the log can be read.
struct Watch {
    running: Running,
    log: PathBuf,
}

impl Watch {
    fn start(inbox: &Inbox, args: &[&str], configure: impl FnOnce(&mut Command)) -> Watch {
        let log = inbox
            .dir
            .path()
            .join(format!("watch-{}.log", fastrand::u32(..)));
        // The build with fault points: some tests turn them on through FAILPOINTS.
        let mut cmd = inbox.faults_cmd(&[&["watch"], args].concat());
        cmd.env("RUST_LOG", "info");
        configure(&mut cmd);
        let mut running = Running::spawn_with_stderr(cmd, File::create(&log).unwrap());
        running.wait_line("ready:");
        Watch { running, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_log(&self, needle: &str) {
        eventually(&format!("`{needle}` in the watch log"), || {
            self.log().contains(needle)
        });
    }
}

#[test]
fn watch_says_notifications_are_unavailable_when_no_service_is_on_the_bus() {
    let inbox = Inbox::new();
    // A real session bus with nobody owning org.freedesktop.Notifications.
    let session = Session::start(&inbox.dir.path().join("session"), false);
    let mut watch = Watch::start(&inbox, &[], |cmd| session.apply(cmd));
    watch.wait_log("desktop notifications are unavailable");
    // Nothing blocks: a request placed now is ingested and listed at once.
    inbox.place("deploy-1", CONFIRM);
    watch.running.wait_line("ingested deploy-1");
    let listed = inbox.run(&["list", "--json"]);
    assert_eq!(code(&listed), 0);
    assert!(util::stdout(&listed).contains("deploy-1"));
}

#[test]
fn an_answer_to_a_read_only_answers_directory_is_kept_and_written_later() {
    let inbox = Inbox::new();
    inbox.place("deploy-1", CONFIRM);
    assert_eq!(code(&inbox.run(&["list"])), 0);

    let answers = inbox.spool().join("answers");
    let read_only = ReadOnly::make(&answers);
    let out = inbox.run(&["answer", "deploy-1", "--set", "go=yes"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("could not be written to the spool"), "{said}");
    assert!(said.contains("kept"), "{said}");
    assert!(!inbox.outcome_path("deploy-1").exists());

    // The operator sees it in the list, and cannot answer twice meanwhile.
    let listed = inbox.run(&["list"]);
    assert!(util::stdout(&listed).contains("[answer not yet written]"));
    assert!(
        stderr(&listed).contains("kept for retry"),
        "{}",
        stderr(&listed)
    );
    let again = inbox.run(&["answer", "deploy-1", "--set", "go=no"]);
    assert_eq!(code(&again), 4, "{}", stderr(&again));

    // The inbox keeps trying; once the directory takes files, the kept answer is written.
    // Its start-up scan has already tried once more, and failed.
    let mut watch = Watch::start(&inbox, &["--no-notify"], |_| {});
    assert!(!inbox.outcome_path("deploy-1").exists());
    drop(read_only);
    watch
        .running
        .wait_line(&format!("answered deploy-1 by {}", util::operator()));
    let outcome = inbox.outcome("deploy-1");
    assert_eq!(outcome["status"], "answered");
    assert_eq!(outcome["answers"]["go"], Value::Bool(true));
    let listed = util::stdout(&inbox.run(&["list"]));
    assert!(!listed.contains("deploy-1"), "{listed}");
}

/// Only `answer-inbox-faults` has fault points: the binary a plain build makes (and the
/// packages ship) ignores `FAILPOINTS`, so no environment variable can make it fail a write.
#[test]
fn the_plain_binary_has_no_fault_points() {
    let inbox = Inbox::new();
    inbox.place("deploy-1", CONFIRM);
    let out = inbox
        .cmd(&["answer", "deploy-1", "--set", "go=yes"])
        .env("FAILPOINTS", "spool.link=return(enospc)")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(inbox.outcome("deploy-1")["status"], "answered");
}

#[test]
fn a_full_disk_keeps_the_answer_and_the_policies_wait() {
    let inbox = Inbox::new();
    inbox.place("deploy-1", CONFIRM);
    // A deadline already past: the loop will want to expire it.
    inbox.place(
        "expiring",
        r#"{"inbox":1,"title":"Soon","timeout_seconds":1,"questions":[
            {"id":"go","question":"Go?","type":"confirm","required":true}]}"#,
    );
    assert_eq!(code(&inbox.run(&["list"])), 0);

    // ENOSPC at the link step, as on a full file system, for this command only.
    let out = inbox
        .faults_cmd(&["answer", "deploy-1", "--set", "go=no"])
        .env("FAILPOINTS", "spool.link=return(enospc)")
        .output()
        .unwrap();
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("No space left on device"),
        "{}",
        stderr(&out)
    );

    // A loop whose disk is full: the expiry is kept too, and the loop does not stop.
    let mut full = Watch::start(&inbox, &["--no-notify"], |cmd| {
        cmd.env("FAILPOINTS", "spool.link=return(enospc)");
    });
    full.wait_log("cannot write the outcome of expiring");
    assert!(!inbox.outcome_path("expiring").exists());
    assert_eq!(
        full.running.child.try_wait().unwrap(),
        None,
        "still running"
    );
    full.running.stop();

    // Space again: both are written, each exactly as decided.
    let mut watch = Watch::start(&inbox, &["--no-notify"], |_| {});
    watch
        .running
        .wait_line(&format!("answered deploy-1 by {}", util::operator()));
    watch.running.wait_line("expired expiring");
    assert_eq!(
        inbox.outcome("deploy-1")["answers"]["go"],
        Value::Bool(false)
    );
    assert_eq!(inbox.outcome("expiring")["status"], "expired");
}

#[test]
fn a_database_locked_by_another_process_is_waited_out() {
    let inbox = Inbox::new();
    inbox.place("first", CONFIRM);
    let mut watch = Watch::start(&inbox, &["--no-notify"], |_| {});
    watch.running.wait_line("ingested first");

    let mut holder = Command::new(util::sibling_binary("inbox-hold-db-lock"))
        .arg(inbox.db())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut holder_out = BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    holder_out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "locked");
    let holder_stdin = holder.stdin.take().unwrap();
    let holder = Running::adopt(holder);

    // A request arrives while the lock is held: the loop reports the trouble and waits.
    inbox.place("second", CONFIRM);
    // The CLI cannot write either; it says why, and writes nothing.
    let out = inbox.run(&["answer", "first", "--set", "go=yes"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("locked by another process"),
        "{}",
        stderr(&out)
    );
    assert!(!inbox.outcome_path("first").exists());
    watch.running.wait_line("trouble: ");
    assert!(watch
        .running
        .seen
        .iter()
        .any(|l| l.contains("locked by another process")));

    // Released: the loop recovers by itself and nothing was lost.
    drop(holder_stdin);
    drop(holder);
    watch.running.wait_line("recovered");
    watch.running.wait_line("ingested second");
    let out = inbox.run(&["answer", "first", "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    watch
        .running
        .wait_line(&format!("answered first by {}", util::operator()));
}

#[test]
fn a_database_deleted_while_the_inbox_runs_is_rebuilt_from_the_spool() {
    let inbox = Inbox::new();
    let mut watch = Watch::start(&inbox, &["--no-notify"], |_| {});
    for id in ["answered-1", "cancelled-1", "pending-1"] {
        inbox.place(id, CONFIRM);
        watch.running.wait_line(&format!("ingested {id}"));
    }
    let out = inbox.run(&["answer", "answered-1", "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&inbox.run(&["cancel", "cancelled-1"])), 0);
    watch.running.wait_line("cancelled cancelled-1");

    for suffix in ["", "-wal", "-shm"] {
        let mut path = inbox.db().into_os_string();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
    // The running loop goes on (on the deleted file) and the spool still gets every file.
    inbox.place("pending-2", CONFIRM);
    watch.running.wait_line("ingested pending-2");
    watch.running.stop();

    // On restart the database is rebuilt from the spool alone.
    let mut restarted = Watch::start(&inbox, &["--no-notify"], |_| {});
    restarted.running.wait_line("ready: 2 pending");
    let listed: Value =
        serde_json::from_str(&util::stdout(&inbox.run(&["list", "--all", "--json"]))).unwrap();
    let state_of = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["id"] == id)
            .map(|row| (row["state"].clone(), row["answered_by"].clone()))
            .unwrap_or_else(|| panic!("{id} is not listed: {listed}"))
    };
    assert_eq!(
        state_of("answered-1"),
        ("answered".into(), util::operator().into())
    );
    assert_eq!(state_of("cancelled-1").0, "cancelled");
    assert_eq!(state_of("pending-1").0, "pending");
    assert_eq!(state_of("pending-2").0, "pending");
}
