//! Desktop notifications on a real session bus, shown by a real notification daemon (dunst
//! on a private Xvfb display), observed with dbus-monitor. Each test starts its own X server,
//! bus and daemon and stops exactly those, by PID.

mod util;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use util::{eventually, Inbox, Running};

const CONFIRM: &str = r#"{"inbox": 1, "title": "Deploy SPEC-042", "source": {"app": "planu", "run": "run-7f3a"},
  "questions": [{"id": "go", "question": "Deploy to production?", "type": "confirm"}]}"#;

/// A private desktop session: X display, session bus, optionally dunst, and a bus monitor.
struct Session {
    bus_address: String,
    bus_pid: u32,
    monitor_log: PathBuf,
    _children: Vec<Running>,
}

impl Session {
    fn start(dir: &std::path::Path, with_daemon: bool) -> Session {
        let mut children = Vec::new();
        let display = free_display();
        children.push(Running::spawn_quiet({
            let mut cmd = Command::new("Xvfb");
            cmd.args([&display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"]);
            cmd
        }));
        let lock = format!("/tmp/.X{}-lock", &display[1..]);
        eventually("Xvfb to start", || std::path::Path::new(&lock).exists());

        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--fork", "--print-address=1", "--print-pid=1"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(bus.stdout.take().unwrap()).lines();
        let bus_address = lines.next().unwrap().unwrap();
        let bus_pid: u32 = lines.next().unwrap().unwrap().trim().parse().unwrap();
        bus.wait().unwrap();

        let env = |cmd: &mut Command| {
            cmd.env("DISPLAY", &display)
                .env("DBUS_SESSION_BUS_ADDRESS", &bus_address);
        };
        let monitor_log = dir.join("bus.log");
        let log = std::fs::File::create(&monitor_log).unwrap();
        let mut monitor = Command::new("dbus-monitor");
        monitor.args(["--session", "interface='org.freedesktop.Notifications'"]);
        env(&mut monitor);
        let monitor = monitor.stdout(log).stderr(Stdio::null()).spawn().unwrap();
        children.push(Running::adopt(monitor));

        if with_daemon {
            let mut dunst = Command::new("dunst");
            env(&mut dunst);
            children.push(Running::spawn_quiet(dunst));
            // Ready when it owns the notification name on our bus.
            eventually("dunst to own org.freedesktop.Notifications", || {
                let mut probe = Command::new("dbus-send");
                env(&mut probe);
                probe
                    .args([
                        "--session",
                        "--print-reply",
                        "--dest=org.freedesktop.DBus",
                        "/org/freedesktop/DBus",
                        "org.freedesktop.DBus.NameHasOwner",
                        "string:org.freedesktop.Notifications",
                    ])
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).contains("boolean true"))
                    .unwrap_or(false)
            });
        }
        Session {
            bus_address,
            bus_pid,
            monitor_log,
            _children: children,
        }
    }

    fn notify_calls(&self) -> Vec<String> {
        let log = std::fs::read_to_string(&self.monitor_log).unwrap_or_default();
        log.split("method call")
            .filter(|c| c.contains("member=Notify"))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Children stop themselves when dropped; the forked bus is stopped by its PID.
        let _ = Command::new("kill")
            .args(["-TERM", &self.bus_pid.to_string()])
            .status();
    }
}

/// An X display number nobody uses.
fn free_display() -> String {
    let start = 100 + std::process::id() % 500;
    (start..start + 200)
        .find(|n| !std::path::Path::new(&format!("/tmp/.X{n}-lock")).exists())
        .map(|n| format!(":{n}"))
        .unwrap()
}

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
    let session = Session::start(inbox.dir.path(), true);
    let mut watch = watch(&inbox, &session.bus_address);

    inbox.place("deploy", CONFIRM);
    watch.wait_line("notified: deploy");
    eventually("the Notify call on the bus", || {
        session.notify_calls().len() == 1
    });
    let call = &session.notify_calls()[0];
    assert!(
        call.contains("Deploy SPEC-042"),
        "the title is shown: {call}"
    );
    assert!(
        call.contains("planu / run-7f3a"),
        "the source is shown: {call}"
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
    let summaries: Vec<&String> = calls
        .iter()
        .filter(|c| c.contains("new requests need an answer"))
        .collect();
    assert!(
        calls.len() <= 3,
        "a burst of 40 gives a summary, not 40 bubbles: {} calls",
        calls.len()
    );
    assert!(!summaries.is_empty(), "a summary was shown: {calls:?}");
    watch.stop();
}

#[test]
fn without_a_notification_daemon_ingest_and_answers_do_not_wait() {
    let inbox = Inbox::new();
    let session = Session::start(inbox.dir.path(), false);
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
