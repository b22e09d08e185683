//! Desktop notifications on a real session bus, shown by a real notification daemon (dunst
//! on a private Xvfb display), observed with dbus-monitor. Each test starts its own X server,
//! bus and daemon and stops exactly those, by PID.

use std::time::{Duration, Instant};

use inbox_harness::session::Session;

use crate::util::{self, eventually, Inbox, Running};

const CONFIRM: &str = r#"{"inbox": 1, "title": "Deploy SPEC-042", "source": {"app": "planu", "run": "run-7f3a"},
  "questions": [{"id": "go", "question": "Deploy to production?", "type": "confirm"}]}"#;

fn watch(inbox: &Inbox, bus_address: &str) -> Running {
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut cmd = inbox.cmd(&["watch"]);
    cmd.env("DBUS_SESSION_BUS_ADDRESS", bus_address);
    let mut watch = Running::spawn(cmd);
    watch.wait_line("ready");
    watch
}

#[test]
fn a_new_request_raises_one_notification_and_a_burst_one_summary() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox.dir.path().join("session"), true);
    let mut watch = watch(&inbox, &session.bus_address);

    inbox.place("deploy", CONFIRM);
    watch.wait_line("notified: deploy");
    eventually("the Notify call on the bus", || {
        session.notify_calls().len() == 1
    });
    let call = &session.notify_calls()[0];
    assert_eq!(
        call.summary, "Deploy SPEC-042",
        "the title is shown: {}",
        call.raw
    );
    assert!(
        call.body.contains("planu / run-7f3a"),
        "the source is shown: {}",
        call.raw
    );

    for i in 0..40 {
        inbox.place(&format!("burst-{i:02}"), CONFIRM);
    }
    for i in 0..40 {
        watch.wait_line(&format!("ingested burst-{i:02}"));
    }
    // Wait out the coalescing window, then count bubbles.
    std::thread::sleep(Duration::from_secs(3));
    let calls = session.notify_calls();
    let summaries: Vec<&str> = calls
        .iter()
        .map(|c| c.summary.as_str())
        .filter(|s| s.contains("new requests need an answer"))
        .collect();
    assert!(
        calls.len() <= 3,
        "a burst of 40 gives a summary, not 40 bubbles: {} calls",
        calls.len()
    );
    assert!(
        !summaries.is_empty(),
        "a summary was shown: {:?}",
        calls.iter().map(|c| &c.summary).collect::<Vec<_>>()
    );
    watch.stop();
}

#[test]
fn without_a_notification_daemon_ingest_and_answers_do_not_wait() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox.dir.path().join("session"), false);
    let mut watch = watch(&inbox, &session.bus_address);
    let started = Instant::now();
    for i in 0..5 {
        inbox.place(&format!("quiet-{i}"), CONFIRM);
    }
    watch.wait_line("ingested quiet-4");
    let out = inbox.run(&["answer", "quiet-0", "--set", "go=yes"]);
    assert_eq!(util::code(&out), 0);
    watch.wait_line("answered quiet-0");
    // A blocked D-Bus call would take its 25 s timeout.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    watch.stop();
}
