//! What the integration tests share: requests as the engine announces them, waiting for
//! `Event::Notified`, and a private bus with a stand-in notification daemon of our own (for
//! what dunst cannot be made to do on cue: appear late, lose its bus, read no markup).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use crossbeam_channel::Receiver;
use inbox_engine::notifier::Announcement;
use inbox_engine::Event;
use zbus::zvariant::OwnedValue;

/// A pending request as the engine hands it over: `json` is the request file's bytes.
pub fn announcement(id: &str, json: &str) -> Announcement {
    let request =
        inbox_protocol::parse_request(json.as_bytes(), Some(id)).expect("a valid request");
    Announcement::pending(id, request, Utc::now())
}

/// A one-question confirm request titled `title`, from `app`.
pub fn confirm(title: &str, app: &str) -> String {
    serde_json::json!({
        "inbox": 1,
        "title": title,
        "source": {"app": app, "run": "run-7f3a"},
        "questions": [{"id": "go", "question": "Deploy to production?", "type": "confirm"}],
    })
    .to_string()
}

/// Notifications as the app sends them on `bus` (answer buttons on, presses ignored),
/// reporting each bubble shown on the returned channel.
pub fn app_notifications(
    bus: &Arc<inbox_notifications::NotificationBus>,
) -> (inbox_notifications::Notifications, Receiver<Event>) {
    let (events_tx, events) = crossbeam_channel::unbounded();
    let notifications = inbox_notifications::Notifications::builder("Answer Inbox")
        .bus(Arc::clone(bus))
        .events(events_tx)
        .answer_buttons()
        .on_choice(|_| {})
        .start()
        .unwrap();
    (notifications, events)
}

/// The next `Notified` event: its ids and whether it was a summary.
pub fn next_notified(events: &Receiver<Event>) -> (Vec<String>, bool) {
    match events.recv_timeout(Duration::from_secs(20)) {
        Ok(Event::Notified { ids, merged }) => (ids, merged),
        Ok(other) => panic!("expected Notified, got {other:?}"),
        Err(error) => panic!("no Notified event: {error}"),
    }
}

/// A session bus of our own, listening on a fixed socket so that a second one can take
/// its place; no service files, so nothing is started on demand. Stopped by its PID (it is
/// our child) when dropped.
pub struct PrivateBus {
    child: Child,
    pub address: String,
}

impl PrivateBus {
    pub fn start(dir: &Path) -> PrivateBus {
        let socket: PathBuf = dir.join("bus.socket");
        // A bus stopped by SIGKILL leaves its socket file behind.
        let _ = std::fs::remove_file(&socket);
        let config = dir.join("bus.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                socket.display()
            ),
        )
        .unwrap();
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon is installed");
        // It prints its address once it listens.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(!line.trim().is_empty(), "dbus-daemon did not start");
        PrivateBus {
            child,
            address: format!("unix:path={}", socket.display()),
        }
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the stand-in daemon was asked to show: (summary, body).
pub type Shown = Arc<Mutex<Vec<(String, String)>>>;

/// Whose bubbles the stand-in daemon was asked to show: (app_icon, the `desktop-entry` hint).
pub type Attributed = Arc<Mutex<Vec<(String, Option<String>)>>>;

struct StandIn {
    markup: bool,
    /// Whether it claims to show action buttons.
    actions: bool,
    shown: Shown,
    attributed: Attributed,
    next_id: u32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl StandIn {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &mut self,
        _app_name: String,
        _replaces_id: u32,
        app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        self.shown.lock().unwrap().push((summary, body));
        let desktop_entry = hints
            .get("desktop-entry")
            .and_then(|value| String::try_from(value.try_clone().ok()?).ok());
        self.attributed
            .lock()
            .unwrap()
            .push((app_icon, desktop_entry));
        self.next_id += 1;
        self.next_id
    }

    fn close_notification(&self, _id: u32) {}

    fn get_capabilities(&self) -> Vec<String> {
        let mut capabilities = vec!["body".to_owned()];
        if self.actions {
            capabilities.push("actions".into());
        }
        if self.markup {
            capabilities.push("body-markup".into());
        }
        capabilities
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "stand-in".into(),
            "answer-inbox tests".into(),
            "1".into(),
            "1.2".into(),
        )
    }
}

/// Serves `org.freedesktop.Notifications` on the bus at `address` until dropped; `markup`
/// says whether it claims to read bodies as markup.
pub fn stand_in_daemon(address: &str, markup: bool) -> (zbus::blocking::Connection, Shown) {
    let (connection, shown, _) = stand_in_daemon_attributing(address, markup);
    (connection, shown)
}

/// [`stand_in_daemon`] as a daemon that shows no action buttons (no `actions` capability).
pub fn stand_in_daemon_without_actions(address: &str) -> (zbus::blocking::Connection, Shown) {
    let (connection, shown, _) = serve_stand_in(address, false, false);
    (connection, shown)
}

/// [`stand_in_daemon`], also recording each bubble's icon and desktop entry.
pub fn stand_in_daemon_attributing(
    address: &str,
    markup: bool,
) -> (zbus::blocking::Connection, Shown, Attributed) {
    serve_stand_in(address, markup, true)
}

fn serve_stand_in(
    address: &str,
    markup: bool,
    actions: bool,
) -> (zbus::blocking::Connection, Shown, Attributed) {
    let shown = Shown::default();
    let attributed = Attributed::default();
    let daemon = StandIn {
        markup,
        actions,
        shown: Arc::clone(&shown),
        attributed: Arc::clone(&attributed),
        next_id: 0,
    };
    let connection = zbus::blocking::connection::Builder::address(address)
        .unwrap()
        .serve_at("/org/freedesktop/Notifications", daemon)
        .unwrap()
        .name("org.freedesktop.Notifications")
        .unwrap()
        .build()
        .expect("the stand-in daemon owns the name");
    (connection, shown, attributed)
}
