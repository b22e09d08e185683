//! The connection's life on a private bus with a stand-in notification daemon: a daemon
//! that appears after the first bubble, a bus that restarts under a running sender, a
//! daemon that reads no markup.

use std::sync::Arc;

use crate::common::{
    announcement, app_notifications, confirm, next_notified, stand_in_daemon,
    stand_in_daemon_attributing, stand_in_daemon_without_actions, PrivateBus,
};
use inbox_engine::notifier::Notifier;
use inbox_harness::process::eventually;
use inbox_notifications::{
    AppIdentity, Availability, Bubble, NotificationBus, Notifications, NotifyError, NotifySwitches,
    DESKTOP_ENTRY,
};

#[test]
fn a_daemon_that_comes_later_and_a_bus_that_restarts_are_both_used() {
    let dir = tempfile::tempdir().unwrap();
    let first_bus = PrivateBus::start(dir.path());
    let bus = NotificationBus::at(&first_bus.address);
    let bubble = Bubble::new("Answer Inbox", "Deploy?", "a < b & c");

    // Nobody owns the name yet: the call fails, and says so, without waiting.
    let error = bus.notify(&bubble, None).unwrap_err();
    assert!(
        matches!(error, NotifyError::Call { .. }) && error.to_string().contains("ServiceUnknown"),
        "{error}"
    );

    // A daemon that reads no markup gets the body as it is.
    let (_daemon, shown) = stand_in_daemon(&first_bus.address, false);
    bus.notify(&bubble, None).unwrap();
    assert_eq!(
        shown.lock().unwrap().as_slice(),
        [("Deploy?".to_owned(), "a < b & c".to_owned())]
    );
    assert_eq!(bus.connections_made(), 1);

    // The bus goes away and another takes its address; its daemon reads markup.
    drop(first_bus);
    let second_bus = PrivateBus::start(dir.path());
    let (_daemon, shown) = stand_in_daemon(&second_bus.address, true);
    bus.notify(&bubble, None).unwrap();
    assert_eq!(
        shown.lock().unwrap().as_slice(),
        [("Deploy?".to_owned(), "a &lt; b &amp; c".to_owned())]
    );
    assert_eq!(
        bus.connections_made(),
        2,
        "one new connection for the new bus"
    );
    assert_eq!(bus.server_information().unwrap().name, "stand-in");
    assert!(bus
        .capabilities()
        .unwrap()
        .contains(&"body-markup".to_owned()));
}

#[test]
fn a_sender_says_when_the_daemon_is_missing_and_when_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let private = PrivateBus::start(dir.path());
    let switches = NotifySwitches::new(true, false);
    let (events_tx, events) = crossbeam_channel::unbounded();
    let notifications = Notifications::builder("Answer Inbox")
        .bus(NotificationBus::at(&private.address))
        .switches(Arc::clone(&switches))
        .events(events_tx)
        .start()
        .unwrap();
    // The sender asks at start, before any request.
    eventually("the missing daemon to be noticed", || {
        switches.availability() == Availability::Unavailable
    });
    assert_eq!(switches.describe(), "unavailable");

    let (_daemon, shown) = stand_in_daemon(&private.address, true);
    notifications.announce(vec![announcement("heard", &confirm("Heard", "planu"))]);
    assert_eq!(next_notified(&events), (vec!["heard".to_owned()], false));
    assert_eq!(shown.lock().unwrap().len(), 1);
    assert_eq!(switches.availability(), Availability::Available);
}

#[test]
fn a_daemon_that_takes_the_name_gets_a_body_escaped_for_itself() {
    let dir = tempfile::tempdir().unwrap();
    let private = PrivateBus::start(dir.path());
    let bus = NotificationBus::at(&private.address);
    let bubble = Bubble::new("Answer Inbox", "Deploy?", "planu <i>ops</i> & co");

    // A daemon that reads no markup is asked once, and gets the body as it is.
    let (plain, plain_shown) = stand_in_daemon(&private.address, false);
    bus.notify(&bubble, None).unwrap();
    assert_eq!(plain_shown.lock().unwrap()[0].1, "planu <i>ops</i> & co");

    // It goes; one that reads markup takes the name on the same bus and connection. The
    // next bubble, worded for the first, must not reach the second unescaped: it is
    // addressed to the first by its unique name, which is gone, so the new one is asked.
    plain.close().unwrap();
    let (_markup, markup_shown) = stand_in_daemon(&private.address, true);
    bus.notify(&bubble, None).unwrap();
    assert_eq!(
        markup_shown.lock().unwrap().as_slice(),
        [(
            "Deploy?".to_owned(),
            "planu &lt;i&gt;ops&lt;/i&gt; &amp; co".to_owned()
        )]
    );
    assert_eq!(plain_shown.lock().unwrap().len(), 1);
    assert_eq!(bus.connections_made(), 1, "the same connection throughout");
}

#[test]
fn bubbles_carry_the_apps_desktop_entry_and_icon() {
    let dir = tempfile::tempdir().unwrap();
    let private = PrivateBus::start(dir.path());
    let (_daemon, _shown, attributed) = stand_in_daemon_attributing(&private.address, false);
    let (events_tx, events) = crossbeam_channel::unbounded();
    let icon = dir
        .path()
        .join("answer-inbox-desktop.png")
        .display()
        .to_string();
    let notifications = Notifications::builder("Answer Inbox")
        .bus(NotificationBus::at(&private.address))
        .identity(AppIdentity {
            desktop_entry: DESKTOP_ENTRY.to_owned(),
            icon: icon.clone(),
        })
        .events(events_tx)
        .start()
        .unwrap();
    notifications.announce(vec![announcement("whose", &confirm("Whose", "planu"))]);
    assert_eq!(next_notified(&events), (vec!["whose".to_owned()], false));
    assert_eq!(
        attributed.lock().unwrap().as_slice(),
        [(icon, Some(DESKTOP_ENTRY.to_owned()))],
        "the daemon groups and attributes the bubble by these"
    );

    // A bubble made by hand names no entry, and sends no hint for it.
    NotificationBus::at(&private.address)
        .notify(&Bubble::new("Answer Inbox", "Plain", "body"), None)
        .unwrap();
    assert_eq!(
        attributed.lock().unwrap()[1],
        ("dialog-question".to_owned(), None)
    );
}

/// A daemon that shows no action buttons gets no bubble listing the answers of buttons it
/// would not show: the bubble only tells, as `watch`'s do.
#[test]
fn a_daemon_without_actions_gets_no_answers_listed() {
    let dir = tempfile::tempdir().unwrap();
    let private = PrivateBus::start(dir.path());
    let (_daemon, shown) = stand_in_daemon_without_actions(&private.address);
    let bus = NotificationBus::at(&private.address);
    assert!(!bus.shows_actions().unwrap());
    let (notifications, events) = app_notifications(&bus);
    notifications.announce(vec![announcement("deploy", &confirm("Deploy?", "planu"))]);
    assert_eq!(next_notified(&events), (vec!["deploy".to_owned()], false));
    assert_eq!(
        shown.lock().unwrap().as_slice(),
        [(
            "Deploy?".to_owned(),
            "planu / run-7f3a\nDeploy to production?".to_owned()
        )]
    );
    assert_eq!(bus.awaiting_action(), 1, "a click still opens the window");
}
