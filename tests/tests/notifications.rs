//! Desktop notifications on a real session bus, shown by a real notification daemon (dunst
//! on a private Xvfb display), observed with dbus-monitor. Each test starts its own X server,
//! bus and daemon and stops exactly those, by PID.
//!
//! The rule under test (inbox-engine's `notifier::Coalescer`): a request that arrives when no
//! bubble went out within the last 300 ms is shown at once, on its own; what arrives inside
//! that window is shown together when it ends, one summary for several. `watch` logs
//! "notified" only for a bubble actually sent.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use inbox_harness::desktop::AppDirs;
use inbox_harness::process::Tree;
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

/// `watch` with its log in a file, which the test reads as often as it likes.
struct LoggedWatch {
    _running: Running,
    log: PathBuf,
}

/// One "notified" line: the requests of one bubble, and whether it was a summary.
#[derive(Debug, Clone, PartialEq)]
struct Notified {
    ids: Vec<String>,
    summary: bool,
}

impl LoggedWatch {
    fn start(inbox: &Inbox, bus_address: &str, log: &Path) -> LoggedWatch {
        std::fs::create_dir_all(inbox.spool()).unwrap();
        let mut cmd = inbox.cmd(&["watch"]);
        cmd.env("DBUS_SESSION_BUS_ADDRESS", bus_address)
            .stdout(File::create(log).unwrap())
            .stderr(File::create(log.with_extension("err")).unwrap());
        let watch = LoggedWatch {
            _running: Running::adopt(cmd.spawn().unwrap()),
            log: log.to_owned(),
        };
        eventually("watch to be ready", || watch.log().contains(" ready: "));
        watch
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every bubble `watch` reported, in order.
    fn notified(&self) -> Vec<Notified> {
        self.log()
            .lines()
            .filter_map(|line| line.split_once(' ').map(|(_time, what)| what))
            .filter_map(|what| {
                let (summary, ids) = match what.strip_prefix("notified (one summary): ") {
                    Some(ids) => (true, ids),
                    None => (false, what.strip_prefix("notified: ")?),
                };
                let ids = ids.split(", ").map(str::to_owned).collect();
                Some(Notified { ids, summary })
            })
            .collect()
    }

    /// Waits until `id` was part of a bubble; returns that bubble.
    fn wait_notified(&self, id: &str) -> Notified {
        let mut found = None;
        eventually(&format!("a bubble for {id}"), || {
            found = self
                .notified()
                .into_iter()
                .find(|n| n.ids.iter().any(|i| i == id));
            found.is_some()
        });
        found.unwrap()
    }
}

#[test]
fn a_new_request_raises_its_own_notification_and_a_burst_one_summary() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox.dir.path().join("session"), true);
    let watch = LoggedWatch::start(
        &inbox,
        &session.bus_address,
        &inbox.dir.path().join("watch.log"),
    );

    inbox.place("deploy", CONFIRM);
    assert_eq!(
        watch.wait_notified("deploy"),
        Notified {
            ids: vec!["deploy".into()],
            summary: false
        }
    );
    eventually("the Notify call on the bus", || {
        session.notify_calls().len() == 1
    });
    let call = &session.notify_calls()[0];
    assert_eq!(
        call.summary, "Deploy SPEC-042",
        "the title is shown: {}",
        call.raw
    );
    // Who asks, then the question itself; `watch` takes no presses, so no buttons.
    assert_eq!(
        call.body, "planu / run-7f3a\nDeploy to production?",
        "the source and the question are shown: {}",
        call.raw
    );
    assert!(call.actions.is_empty(), "{}", call.raw);

    let burst: Vec<String> = (0..40).map(|i| format!("burst-{i:02}")).collect();
    for id in &burst {
        inbox.place(id, CONFIRM);
    }
    for id in &burst {
        watch.wait_notified(id);
    }
    let bubbles = watch.notified();
    let for_burst: Vec<&Notified> = bubbles
        .iter()
        .filter(|n| n.ids.iter().any(|id| id.starts_with("burst-")))
        .collect();
    // Placed within milliseconds, the burst is its first request's bubble (unless that
    // came within 300 ms of the last one) and one summary; a machine slow enough to spread
    // the ingest over more than one window may add a summary, never forty bubbles.
    assert!(
        for_burst.len() <= 3,
        "a burst of 40 gives a summary, not 40 bubbles: {for_burst:?}"
    );
    assert!(
        for_burst.iter().filter(|n| !n.summary).count() <= 1,
        "only the first of a burst is shown on its own: {for_burst:?}"
    );
    let summarised: usize = for_burst
        .iter()
        .filter(|n| n.summary)
        .map(|n| n.ids.len())
        .sum();
    assert!(
        summarised >= 39,
        "the summaries stand for the rest of the burst: {for_burst:?}"
    );
    // Each "notified" is a bubble on the bus.
    eventually("a Notify call per reported bubble", || {
        session.notify_calls().len() == bubbles.len()
    });
    let summaries: Vec<String> = session
        .notify_calls()
        .iter()
        .map(|c| c.summary.clone())
        .filter(|s| s.contains("new requests need an answer"))
        .collect();
    assert_eq!(
        summaries.len(),
        bubbles.iter().filter(|n| n.summary).count(),
        "{summaries:?}"
    );
}

#[test]
fn requests_a_second_apart_each_get_a_bubble_of_their_own_at_once() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox.dir.path().join("session"), true);
    let watch = LoggedWatch::start(
        &inbox,
        &session.bus_address,
        &inbox.dir.path().join("watch.log"),
    );
    let mut next = Instant::now();
    for i in 0..4 {
        // Spaced as a pipeline asking now and then would be, well apart from the window.
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        next = Instant::now() + Duration::from_secs(1);
        let id = format!("spaced-{i}");
        let placed = Instant::now();
        inbox.place(&id, CONFIRM);
        let bubble = watch.wait_notified(&id);
        let took = placed.elapsed();
        assert_eq!(
            bubble,
            Notified {
                ids: vec![id.clone()],
                summary: false
            }
        );
        // Nothing holds a lone request back (the former coalescing waited 250 ms for
        // company, and up to 1.5 s after a previous bubble); the bound is loose for slow
        // machines.
        assert!(took < Duration::from_secs(1), "{id} took {took:?}");
    }
    eventually("four Notify calls on the bus", || {
        session.notify_calls().len() == 4
    });
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
    // Nothing was shown, so nothing is reported as notified.
    assert!(
        !watch.seen.iter().any(|line| line.contains(" notified")),
        "{:?}",
        watch.seen
    );
    watch.stop();
}

/// The desktop app on `inbox`, in `session`, without a WebDriver (no window is driven: only
/// its bubbles). Stopped with everything it started (WebKit's helpers), by PID, when dropped.
struct App {
    running: Running,
    tree: Tree,
}

impl App {
    fn start(inbox: &Inbox, session: &Session) -> App {
        let dirs = AppDirs::create(&inbox.dir.path().join("app"));
        std::fs::create_dir_all(inbox.spool()).unwrap();
        let log = dirs.logs().join("app.log");
        let mut cmd = session.command(util::sibling_binary("answer-inbox-desktop"));
        dirs.apply(&mut cmd, &inbox.spool(), &inbox.db(), "e2e");
        cmd.stdout(File::create(&log).unwrap())
            .stderr(File::create(log.with_extension("err")).unwrap());
        App {
            running: Running::adopt(cmd.spawn().unwrap()),
            tree: Tree::default(),
        }
    }
}

impl Drop for App {
    fn drop(&mut self) {
        self.tree.remember(self.running.child.id());
        self.running.stop();
        self.tree.terminate(Duration::from_secs(5));
    }
}

/// An agent's permission prompt, placed by the real `answer-inbox hook claude-code` for a
/// Bash call, raises a bubble in the real app that shows the command whole and carries the
/// window's choices as buttons, in its order; pressing Deny in dunst answers it (the
/// decision alone, no reason), and the hook tells Claude Code to deny the call.
#[test]
fn deny_on_an_agents_decision_bubble_writes_the_decision_and_the_hook_denies() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox.dir.path().join("session"), true);
    let _app = App::start(&inbox, &session);

    let mut hook = claude_code_hook(&inbox, "pre-tool-use-bash.json");

    let command = "git push --force-with-lease origin feature/checkout-v2";
    let title = format!("Claude Code wants to run: {command}");
    let call = session.wait_notify(&title);
    assert_eq!(
        call.action_keys(),
        ["default", "answer:0", "answer:1", "answer:2"],
        "{}",
        call.raw
    );
    let labels: Vec<&str> = call.actions[1..].iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels[..2], ["1. Allow once", "2. Deny"], "{}", call.raw);
    assert!(labels[2].starts_with("3. Allow this command for this session"));
    // The command whole, on a line of its own, above the options the buttons give.
    let lines: Vec<&str> = call.body.lines().collect();
    let at = lines.iter().position(|l| *l == command).expect(&call.body);
    let options = lines.iter().position(|l| l.starts_with("• 1. ")).unwrap();
    assert!(at < options, "{}", call.body);
    assert_eq!(lines[options..].len(), 3, "{}", call.body);

    session.press_action(&title, "answer:1");
    let printed = hook_printed(&mut hook);
    let specific = &printed["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny", "{printed}");
    let answers: Vec<_> = std::fs::read_dir(inbox.spool().join("answers"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    let [outcome] = answers.as_slice() else {
        panic!("one outcome, not {answers:?}");
    };
    let outcome: serde_json::Value =
        serde_json::from_slice(&std::fs::read(outcome).unwrap()).unwrap();
    assert_eq!(outcome["status"], "answered", "{outcome}");
    assert_eq!(
        outcome["answers"],
        serde_json::json!({"decision": "Deny"}),
        "{outcome}"
    );
    assert_eq!(
        outcome["answered_by"],
        util::operator().as_str(),
        "{outcome}"
    );
}

/// Claude Code's usual PermissionRequest, as recorded: a Bash call whose suggestion saves a
/// rule to local settings, so four choices (Allow once, Deny, the rule for this session, the
/// rule saved). Its bubble carries all four, numbered as the window's keys; pressing the
/// fourth sends the saved rule back to Claude Code as `updatedPermissions`.
#[test]
fn claude_codes_four_choices_are_four_bubble_buttons_and_the_saved_rule_goes_back() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox.dir.path().join("session"), true);
    let _app = App::start(&inbox, &session);
    let mut hook = claude_code_hook(&inbox, "permission-request-bash.json");

    let title = "Claude Code wants to run: rm -rf target/ && cargo build --release";
    let call = session.wait_notify(title);
    assert_eq!(
        call.action_keys(),
        ["default", "answer:0", "answer:1", "answer:2", "answer:3"],
        "{}",
        call.raw
    );
    let labels: Vec<&str> = call.actions[1..].iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels[..2], ["1. Allow once", "2. Deny"], "{}", call.raw);
    assert!(labels[2].starts_with("3. ") && labels[2].contains("this session"));
    assert!(labels[3].starts_with("4. ") && labels[3].contains("cargo build"));

    session.press_action(title, "answer:3");
    let printed = hook_printed(&mut hook);
    let decision = &printed["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], "allow", "{printed}");
    assert_eq!(
        decision["updatedPermissions"],
        serde_json::json!([{"type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "cargo build:*"}],
            "behavior": "allow", "destination": "localSettings"}]),
        "{printed}"
    );
}

/// `answer-inbox hook claude-code` run on a recorded payload (tests/data/claude-code), as
/// Claude Code runs it: the payload on standard input, the decision read from standard
/// output.
fn claude_code_hook(inbox: &Inbox, payload: &str) -> Running {
    let payload = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/claude-code")
            .join(payload),
    )
    .unwrap();
    let mut hook = inbox.cmd(&["hook", "claude-code", "--timeout", "120s"]);
    // Session allowances go to the test's own directory, never the account's.
    hook.env("XDG_STATE_HOME", inbox.dir.path().join("xdg-state"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut hook = Running::adopt(hook.spawn().unwrap());
    std::io::Write::write_all(&mut hook.child.stdin.take().unwrap(), &payload).unwrap();
    hook
}

/// What the hook printed, as JSON, once it ends.
fn hook_printed(hook: &mut Running) -> serde_json::Value {
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut hook.child.stdout.take().unwrap(), &mut stdout).unwrap();
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: the hook printed {stdout:?}"))
}
