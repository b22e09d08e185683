//! Notifications shown by a real daemon: dunst on a private Xvfb display with a private
//! session bus (inbox-harness's `Session`, stopped by PID), observed with dbus-monitor.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{announcement, app_notifications, confirm, next_notified};
use inbox_engine::notifier::{Gone, Notifier};
use inbox_harness::process::{eventually, Running};
use inbox_harness::session::Session;
use inbox_notifications::{Chosen, NotificationBus, Notifications};
use serde_json::{json, Map, Value};

/// A connection to the bus at `address` for the test's own questions.
fn ask(address: &str) -> zbus::blocking::Connection {
    zbus::blocking::connection::Builder::address(address)
        .unwrap()
        .build()
        .unwrap()
}

/// The unique bus names this process holds on the bus at `address`, apart from the
/// connection that asks.
fn our_connections(address: &str) -> usize {
    let asking = ask(address);
    let dbus = zbus::blocking::fdo::DBusProxy::new(&asking).unwrap();
    let ours = std::process::id();
    let asker = asking.unique_name().unwrap().to_string();
    dbus.list_names()
        .unwrap()
        .into_iter()
        .filter(|name| name.starts_with(':') && name.as_str() != asker)
        .filter(|name| {
            dbus.get_connection_unix_process_id(name.as_ref())
                .is_ok_and(|pid| pid == ours)
        })
        .count()
}

/// Whether somebody owns the notification name on the bus at `address` (asked without
/// making the bus start a daemon on demand).
fn daemon_on(address: &str) -> bool {
    let asking = ask(address);
    zbus::blocking::fdo::DBusProxy::new(&asking)
        .unwrap()
        .name_has_owner("org.freedesktop.Notifications".try_into().unwrap())
        .unwrap_or(false)
}

/// dunst as most desktops' daemons are: reading bodies as markup (`markup = full`; the
/// session's own dunst keeps dunst's default, plain text). Stopped by PID when dropped.
fn dunst_reading_markup(session: &Session) -> Running {
    let config = session.dir.join("dunstrc-markup");
    std::fs::write(
        &config,
        "[global]\n    markup = full\n    idle_threshold = 0\n    font = DejaVu Sans 9\n\
         [urgency_normal]\n    timeout = 0\n[urgency_critical]\n    timeout = 0\n",
    )
    .unwrap();
    let mut dunst = session.command("dunst");
    dunst
        .arg("-config")
        .arg(&config)
        .env("XDG_CONFIG_HOME", session.dir.join("dunst-config"));
    let dunst = Running::spawn_quiet(dunst);
    eventually("dunst to own org.freedesktop.Notifications", || {
        daemon_on(&session.bus_address)
    });
    dunst
}

/// What dunst rendered for each bubble, closed first so that its history holds them all:
/// the Pango markup it drew ("message": its format applied, the summary quoted by dunst,
/// the body as it was received, read as markup), in the order shown.
fn rendered_by_dunst(session: &Session, bubbles: usize) -> Vec<String> {
    let history = || -> Vec<String> {
        let out = session.command("dunstctl").arg("history").output().unwrap();
        assert!(out.status.success(), "dunstctl history failed");
        let history: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut messages: Vec<(i64, String)> = history["data"][0]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| {
                let id = n["id"]["data"].as_i64().unwrap_or_default();
                (
                    id,
                    n["message"]["data"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        messages.sort();
        messages.into_iter().map(|(_, message)| message).collect()
    };
    let closed = session
        .command("dunstctl")
        .arg("close-all")
        .status()
        .unwrap();
    assert!(closed.success(), "dunstctl close-all failed");
    eventually("dunst's history to hold every bubble", || {
        history().len() == bubbles
    });
    history()
}

fn has_body_markup(bus: &NotificationBus) -> bool {
    bus.capabilities()
        .unwrap()
        .iter()
        .any(|capability| capability == "body-markup")
}

/// Notifications as `watch` sends them (no buttons) on the session's bus, reporting each
/// bubble shown on the returned channel.
fn watch_notifications(
    session: &Session,
) -> (
    Arc<NotificationBus>,
    Notifications,
    crossbeam_channel::Receiver<inbox_engine::Event>,
) {
    let bus = NotificationBus::at(&session.bus_address);
    let (events_tx, events) = crossbeam_channel::unbounded();
    let notifications = Notifications::builder("Answer Inbox")
        .bus(Arc::clone(&bus))
        .events(events_tx)
        .start()
        .unwrap();
    (bus, notifications, events)
}

#[test]
fn two_bubbles_go_through_one_connection_with_their_bodies_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(&dir.path().join("session"), false);
    // Declared after the session: stopped before its bus.
    let _dunst = dunst_reading_markup(&session);
    let (bus, notifications, events) = watch_notifications(&session);
    assert!(has_body_markup(&bus));

    // Three at once: the first is shown at once on its own, the other two as one summary
    // when the quiet window ends.
    notifications.announce(vec![
        announcement("first", &confirm("Ship <b>it</b> & go", "planu <i>ops</i>")),
        announcement("second", &confirm("Drop <script>x</script>", "planu")),
        announcement("third", &confirm("Rotate keys & certs", "planu")),
    ]);
    assert_eq!(next_notified(&events), (vec!["first".to_owned()], false));
    assert_eq!(
        next_notified(&events),
        (vec!["second".to_owned(), "third".to_owned()], true)
    );

    eventually("both Notify calls on the bus", || {
        session.notify_calls().len() == 2
    });
    let calls = session.notify_calls();
    // The summary line is plain text by the specification: sent as it is.
    assert_eq!(calls[0].summary, "Ship <b>it</b> & go", "{}", calls[0].raw);
    // Who asks, then the question; no buttons, so no options listed.
    assert_eq!(
        calls[0].body, "planu &lt;i&gt;ops&lt;/i&gt; / run-7f3a\nDeploy to production?",
        "{}",
        calls[0].raw
    );
    assert_eq!(calls[1].summary, "2 new requests need an answer");
    assert_eq!(
        calls[1].body,
        "• Drop &lt;script&gt;x&lt;/script&gt;\n• Rotate keys &amp; certs"
    );
    assert!(!calls[1].raw.contains("<script>"), "{}", calls[1].raw);
    // Addressed to the daemon whose capabilities were asked, not to whoever holds the name.
    assert!(
        calls.iter().all(
            |call| call.raw.contains("destination=:") && !call.raw.contains("destination=org.")
        ),
        "{}",
        calls[0].raw
    );
    // `watch` passes no buttons and no handler: bubbles carry no actions.
    assert!(calls.iter().all(|call| call.actions.is_empty()));

    assert_eq!(bus.connections_made(), 1);
    assert_eq!(our_connections(&session.bus_address), 1);
}

#[test]
fn pressing_a_button_on_the_bubble_reaches_on_choice() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(&dir.path().join("session"), true);
    let bus = NotificationBus::at(&session.bus_address);
    let (events_tx, events) = crossbeam_channel::unbounded();
    let (chosen_tx, chosen) = crossbeam_channel::unbounded();
    let notifications = Notifications::builder("Answer Inbox")
        .bus(Arc::clone(&bus))
        .events(events_tx)
        .answer_buttons()
        .on_choice(move |choice| {
            let _ = chosen_tx.send(choice);
        })
        .start()
        .unwrap();

    let deploy = announcement("deploy", &confirm("Deploy SPEC-042", "planu <ops> & co"));
    let version = deploy.request.as_ref().unwrap().sha256.clone();
    notifications.announce(vec![deploy]);
    assert_eq!(next_notified(&events), (vec!["deploy".to_owned()], false));
    let call = session.wait_notify("Deploy SPEC-042");
    assert_eq!(
        call.actions,
        [
            ("default", "Open"),
            ("answer:yes", "Yes"),
            ("answer:no", "No")
        ]
        .map(|(key, label)| (key.to_owned(), label.to_owned())),
        "{}",
        call.raw
    );
    // This dunst reads bodies as plain text (no `body-markup`): they go as they are, since
    // escaping would show the entities. The body shows the question the buttons answer.
    assert!(!has_body_markup(&bus));
    assert_eq!(
        call.body,
        "planu <ops> & co / run-7f3a\nDeploy to production?\n• Yes\n• No"
    );
    assert_eq!(bus.awaiting_action(), 1);

    session.press_action("Deploy SPEC-042", "answer:yes");
    let choice = chosen
        .recv_timeout(Duration::from_secs(20))
        .expect("the press reaches on_choice");
    let mut answers = Map::new();
    answers.insert("go".into(), json!(true));
    // The press carries the version of the request the bubble showed.
    assert_eq!(
        choice,
        Chosen::Answer {
            id: "deploy".into(),
            answers,
            version
        }
    );
    // Answered: the handler is gone; the bus listener ran it, no thread of its own.
    assert_eq!(bus.awaiting_action(), 0);
    assert_eq!(bus.connections_made(), 1);
}

/// The reported case, on a daemon that reads markup, as the app shows it: a harmless title
/// over a destructive question. The bubble with buttons shows the question and what each
/// button answers, markup from the request is text, hidden characters are shown escaped;
/// a high-priority request and one too long to show whole get no answer buttons, only the
/// click that opens the window.
#[test]
fn a_bubble_with_buttons_shows_what_they_answer_and_urgent_or_long_ones_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(&dir.path().join("session"), false);
    let _dunst = dunst_reading_markup(&session);
    let bus = NotificationBus::at(&session.bus_address);
    assert!(has_body_markup(&bus));
    let (notifications, events) = app_notifications(&bus);
    let request = |title: &str, question: &str, priority: &str| {
        json!({"inbox": 1, "title": title, "priority": priority,
               "source": {"app": "planu <i>ops</i>",
                          "run": "<a href=\"https://evil.example\">run-9</a>\u{200b}"},
               "questions": [{"id": "go", "type": "confirm", "question": question}]})
        .to_string()
    };
    // One at a time: each its own bubble, not a summary.
    let cases = [
        (
            "tests",
            request(
                "Run unit tests?",
                "Force-push main and delete the production database?",
                "normal",
            ),
        ),
        (
            "urgent",
            request("Rotate\u{202e}keys", "Rotate the signing keys?", "high"),
        ),
        (
            "long",
            request("Long one", &"Really proceed? ".repeat(30), "normal"),
        ),
    ];
    for (id, json) in &cases {
        notifications.announce(vec![announcement(id, json)]);
        assert_eq!(next_notified(&events), (vec![(*id).to_owned()], false));
    }
    eventually("three Notify calls on the bus", || {
        session.notify_calls().len() == 3
    });
    let calls = session.notify_calls();
    let source = "planu &lt;i&gt;ops&lt;/i&gt; / \
                  &lt;a href=\"https://evil.example\"&gt;run-9&lt;/a&gt;\\u{200b}";

    assert_eq!(calls[0].summary, "Run unit tests?");
    assert_eq!(
        calls[0].body,
        format!("{source}\nForce-push main and delete the production database?\n• Yes\n• No"),
        "{}",
        calls[0].raw
    );
    assert_eq!(
        calls[0].action_keys(),
        ["default", "answer:yes", "answer:no"]
    );

    // High priority: opened in the window, never approved from the bubble.
    assert_eq!(calls[1].summary, "Rotate\\u{202e}keys", "{}", calls[1].raw);
    assert_eq!(
        calls[1].body,
        format!(
            "{source}\nRotate the signing keys?\n\
             Click to answer in the window (high priority)."
        )
    );
    assert_eq!(calls[1].action_keys(), ["default"]);

    // Too long to show whole: no buttons; the question is cut, and says so.
    assert_eq!(calls[2].action_keys(), ["default"]);
    assert!(
        calls[2]
            .body
            .ends_with("…\nClick to answer in the window (too long for a bubble)."),
        "{}",
        calls[2].raw
    );
    for call in &calls {
        assert!(!call.raw.contains("<a href"), "{}", call.raw);
        assert!(!call.raw.contains('\u{200b}') && !call.raw.contains('\u{202e}'));
    }

    // And what dunst drew: its own markup (the bold summary) around the request's words,
    // whose tags are entities, so they are shown as text and never obeyed.
    let rendered = rendered_by_dunst(&session, 3);
    assert!(
        rendered[0].contains(
            "&lt;a href=\"https://evil.example\"&gt;run-9&lt;/a&gt;\\u{200b}\n\
             Force-push main and delete the production database?\n• Yes\n• No"
        ),
        "{rendered:?}"
    );
    for message in &rendered {
        assert!(
            message.contains("planu &lt;i&gt;ops&lt;/i&gt;"),
            "{message}"
        );
        assert!(
            !message.contains("<a ") && !message.contains("<i>"),
            "{message}"
        );
    }
}

/// A request settled, withdrawn or expired anywhere takes its bubble off the screen: the
/// bubble is closed once every request it stands for is gone, and a request that leaves
/// while its summary is still held is never shown at all.
#[test]
fn a_bubble_is_closed_when_its_requests_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(&dir.path().join("session"), true);
    let (_bus, notifications, events) = watch_notifications(&session);

    notifications.announce(vec![
        announcement("first", &confirm("Deploy build 7?", "planu")),
        announcement("second", &confirm("Rotate keys?", "planu")),
        announcement("third", &confirm("Drop the cache?", "planu")),
        announcement("fourth", &confirm("Restart the queue?", "planu")),
    ]);
    // Settled at once, while its summary is held for the quiet window: never shown.
    notifications.withdraw(vec![Gone::withdrawn("fourth")]);
    assert_eq!(next_notified(&events), (vec!["first".to_owned()], false));
    assert_eq!(
        next_notified(&events),
        (vec!["second".to_owned(), "third".to_owned()], true)
    );
    eventually("both bubbles on the bus", || {
        session.notify_calls().len() == 2
    });
    assert!(session.close_calls().is_empty());

    notifications.withdraw(vec![Gone::withdrawn("first")]);
    eventually("the first bubble closed", || {
        session.close_calls().len() == 1
    });
    // The summary still stands for "third".
    notifications.withdraw(vec![Gone::withdrawn("second")]);
    notifications.withdraw(vec![Gone::withdrawn("third")]);
    eventually("the summary closed", || session.close_calls().len() == 2);
    let closed = session.close_calls();
    assert_ne!(
        closed[0], closed[1],
        "two bubbles, each closed once: {closed:?}"
    );
    // Withdrawing what was never shown closes nothing.
    notifications.withdraw(vec![Gone::withdrawn("unknown")]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(session.close_calls().len(), 2);
    assert_eq!(session.notify_calls().len(), 2);
}
