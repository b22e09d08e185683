//! The one D-Bus connection to the notification service (`org.freedesktop.Notifications`).
//!
//! The library used before opened a new bus connection for every bubble and parked a thread
//! per bubble to wait for its action. Here a [`NotificationBus`] holds one connection for the
//! life of the process, opened when first needed, and one listener thread per connection
//! reads the service's signals: `ActionInvoked` runs the handler registered for that
//! notification id, `NotificationClosed` forgets it. If the bus itself goes away (a session
//! bus restarted under us), the call that notices opens one new connection and is tried
//! once more on it; with no bus at all every call tries to connect again, so a bus or a
//! daemon that appears later is used as soon as it is there.
//!
//! Bubbles go to the daemon whose capabilities were asked, by its unique bus name, with the
//! body escaped or not for what that daemon reads; if it has gone, whoever holds the
//! service name now is asked, and the bubble sent to it. (Sent to the well-known name, a
//! bubble worded for a plain-text daemon could reach a markup-reading one that had just
//! taken the name, and have its tags obeyed.)
//!
//! Everything here blocks (up to [`CALL_TIMEOUT`]); call it from a thread of your own, never
//! from the engine's.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::ErrorKind;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Duration;

use zbus::blocking::connection::Builder;
use zbus::blocking::{Connection, MessageIterator};
use zbus::message::Type as MessageType;
use zbus::zvariant::Value;
use zbus::{MatchRule, Message};

use crate::markup::escape_body;

/// The well-known name, and the interface, of the notification service.
pub const SERVICE: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";

/// The longest a call to the service may take. A hung daemon would otherwise hold the
/// sender for the bus's own 25 s per bubble (and a stopping `watch` for as long); ten
/// seconds still lets the bus start a daemon on demand (D-Bus activation) on a slow machine.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Notifications whose action is still awaited, at most. Bubbles that stay on screen until
/// acted on may never be closed; their handlers must not pile up for the life of the app.
const MAX_AWAITED: usize = 256;

/// Actions for ids not (yet) registered that are remembered: one can arrive in the instant
/// between the service's reply to `Notify` and the handler going in.
const MAX_EARLY: usize = 16;

/// Why talking to the notification service failed.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// No session bus to talk to: none running, or its address is unusable.
    #[error("cannot connect to the session bus: {0}")]
    Connect(Box<zbus::Error>),
    /// The bus is there, but the call to the service failed: nobody owns the name, the
    /// daemon refused, or it did not answer within [`CALL_TIMEOUT`].
    #[error("{method} failed: {source}")]
    Call {
        method: &'static str,
        source: Box<zbus::Error>,
    },
    /// A thread (the bus listener or the notification sender) could not be started.
    #[error("cannot start the {what} thread: {source}")]
    Spawn {
        what: &'static str,
        source: std::io::Error,
    },
}

/// How urgent a bubble is; the daemon decides what that means (critical ones usually stay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    Low,
    Normal,
    Critical,
}

impl Urgency {
    fn level(self) -> u8 {
        match self {
            Urgency::Low => 0,
            Urgency::Normal => 1,
            Urgency::Critical => 2,
        }
    }
}

/// One bubble, as plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bubble {
    pub app_name: String,
    /// The title line; plain text by the specification (no daemon may read it as markup),
    /// so sent as it is.
    pub summary: String,
    /// Plain text: escaped on the way for a daemon that reads bodies as markup, sent as it
    /// is to one that does not.
    pub body: String,
    /// A freedesktop icon name or an absolute path (see [`crate::identity`]).
    pub icon: String,
    /// The `desktop-entry` hint: the sending app's desktop entry, without `.desktop`.
    pub desktop_entry: Option<String>,
    /// `(key, label)` pairs, in order. The key [`crate::OPEN_ACTION`] is a click on the
    /// bubble itself.
    pub actions: Vec<(String, String)>,
    pub urgency: Urgency,
}

impl Bubble {
    /// A normal bubble with the question-mark icon and no actions.
    pub fn new(
        app_name: impl Into<String>,
        summary: impl Into<String>,
        body: impl Into<String>,
    ) -> Bubble {
        Bubble {
            app_name: app_name.into(),
            summary: summary.into(),
            body: body.into(),
            icon: "dialog-question".into(),
            desktop_entry: None,
            actions: Vec::new(),
            urgency: Urgency::Normal,
        }
    }
}

/// What `GetServerInformation` says about the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInformation {
    pub name: String,
    pub vendor: String,
    pub version: String,
    pub spec_version: String,
}

/// Runs once, on the listener thread, with the key of the action invoked on its bubble.
/// Must not block for long: the next signal waits for it.
pub type ActionHandler = Box<dyn FnOnce(&str) + Send>;

/// A connection to the session bus for notifications, opened lazily and kept.
pub struct NotificationBus {
    /// `None`: the session bus the environment names (`DBUS_SESSION_BUS_ADDRESS`).
    address: Option<String>,
    link: Mutex<Option<Link>>,
    awaited: Arc<Mutex<Awaited>>,
    connections_made: AtomicUsize,
}

/// The open connection and what was learnt about the daemon over it.
struct Link {
    connection: Connection,
    /// The daemon bubbles go to, once asked.
    daemon: Option<Daemon>,
}

/// One notification daemon, as its capabilities described it.
#[derive(Clone)]
struct Daemon {
    /// Its unique bus name (`:1.42`). Bubbles are addressed to it rather than to the
    /// well-known name, so a body escaped (or not) for this daemon is never delivered to
    /// another one that took the name in between: a daemon that reads markup never gets a
    /// body worded for one that does not.
    name: String,
    /// Whether it reads bodies as markup (advertises `body-markup`).
    markup: bool,
    /// Whether it shows action buttons (advertises `actions`).
    actions: bool,
}

impl Link {
    /// One call to the service under its well-known name, as it is: no reconnecting here
    /// (see `on_link`).
    fn call<B>(&self, method: &'static str, body: &B) -> Result<Message, NotifyError>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        self.call_to(SERVICE, method, body)
    }

    /// One call to the service at the bus name `destination`.
    fn call_to<B>(
        &self,
        destination: &str,
        method: &'static str,
        body: &B,
    ) -> Result<Message, NotifyError>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        self.connection
            .call_method(Some(destination), PATH, Some(SERVICE), method, body)
            .map_err(|source| NotifyError::Call {
                method,
                source: Box::new(source),
            })
    }

    fn capabilities(&self) -> Result<(Vec<String>, String), NotifyError> {
        const METHOD: &str = "GetCapabilities";
        let reply = self.call(METHOD, &())?;
        Ok((decode(&reply, METHOD)?, sender(&reply)))
    }

    /// The daemon that owns the service name and whether it reads bodies as markup, asked
    /// once per connection and daemon. Most do (then `&`, `<` and `>` in a request's words
    /// must be escaped); one that does not shows the body as it is, so escaping would show
    /// the entities.
    fn daemon(&mut self) -> Result<Daemon, NotifyError> {
        if let Some(daemon) = &self.daemon {
            return Ok(daemon.clone());
        }
        let (capabilities, name) = self.capabilities()?;
        let daemon = Daemon {
            name,
            markup: capabilities.iter().any(|c| c == "body-markup"),
            actions: capabilities.iter().any(|c| c == "actions"),
        };
        self.daemon = Some(daemon.clone());
        Ok(daemon)
    }
}

impl NotifyError {
    /// Whether the call went to a bus name that nobody holds any more: the daemon it was
    /// addressed to has gone (and another may have taken the service name since).
    fn daemon_gone(&self) -> bool {
        const GONE: [&str; 2] = [
            "org.freedesktop.DBus.Error.ServiceUnknown",
            "org.freedesktop.DBus.Error.NameHasNoOwner",
        ];
        matches!(self, NotifyError::Call { source, .. }
            if matches!(&**source, zbus::Error::MethodError(name, ..) if GONE.contains(&name.as_str())))
    }

    /// Whether this means the connection itself is gone (rather than the daemon refusing
    /// or being slow), so that a new connection may succeed.
    fn broke(&self, connection: &Connection) -> bool {
        let NotifyError::Call { source, .. } = self else {
            return false;
        };
        connection.is_closed()
            || matches!(&**source, zbus::Error::InputOutput(io) if io.kind() != ErrorKind::TimedOut)
    }
}

/// Handlers by notification id, and actions that came before their handler.
#[derive(Default)]
struct Awaited {
    by_id: BTreeMap<u32, Waiting>,
    early: VecDeque<(String, u32, String)>,
}

struct Waiting {
    /// The unique bus name of the daemon that showed the bubble: only its signals count.
    daemon: String,
    on_action: ActionHandler,
}

impl Awaited {
    /// Takes the handler of `id` if `daemon` showed that bubble.
    fn take(&mut self, daemon: &str, id: u32) -> Option<ActionHandler> {
        if self.by_id.get(&id)?.daemon != daemon {
            return None;
        }
        self.by_id.remove(&id).map(|waiting| waiting.on_action)
    }

    /// Registers a handler, unless its action already came: then returns that key.
    fn insert(&mut self, id: u32, waiting: Waiting) -> Option<(ActionHandler, String)> {
        let early = self
            .early
            .iter()
            .position(|(daemon, early_id, _)| *early_id == id && *daemon == waiting.daemon);
        if let Some((_, _, key)) = early.and_then(|index| self.early.remove(index)) {
            return Some((waiting.on_action, key));
        }
        self.by_id.insert(id, waiting);
        while self.by_id.len() > MAX_AWAITED {
            self.by_id.pop_first();
        }
        None
    }

    fn remember_early(&mut self, daemon: &str, id: u32, key: String) {
        self.early.push_back((daemon.to_owned(), id, key));
        while self.early.len() > MAX_EARLY {
            self.early.pop_front();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking handler must not take notifications down with it.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl NotificationBus {
    /// The process's connection to its session bus: every front end and every notifier
    /// in this process shares it.
    pub fn shared() -> Arc<NotificationBus> {
        static SHARED: OnceLock<Arc<NotificationBus>> = OnceLock::new();
        Arc::clone(SHARED.get_or_init(|| Arc::new(NotificationBus::new(None))))
    }

    /// A connection of its own to the bus at `address` (a D-Bus address such as
    /// `unix:path=/run/user/1000/bus`): for tests, and for a private session.
    pub fn at(address: impl Into<String>) -> Arc<NotificationBus> {
        Arc::new(NotificationBus::new(Some(address.into())))
    }

    fn new(address: Option<String>) -> NotificationBus {
        NotificationBus {
            address,
            link: Mutex::new(None),
            awaited: Arc::default(),
            connections_made: AtomicUsize::new(0),
        }
    }

    /// How many bus connections this has opened so far: one, unless the bus went away.
    pub fn connections_made(&self) -> usize {
        self.connections_made.load(Ordering::Relaxed)
    }

    /// Bubbles whose action is still awaited.
    pub fn awaiting_action(&self) -> usize {
        lock(&self.awaited).by_id.len()
    }

    /// Shows `bubble`; returns the id the daemon gave it. `on_action` runs when one of its
    /// actions is invoked (at most once); it is forgotten when the bubble is closed.
    pub fn notify(
        &self,
        bubble: &Bubble,
        on_action: Option<ActionHandler>,
    ) -> Result<u32, NotifyError> {
        let (id, daemon) = self.on_link(|link| {
            let actions: Vec<&str> = bubble
                .actions
                .iter()
                .flat_map(|(key, label)| [key.as_str(), label.as_str()])
                .collect();
            let mut asked_again = false;
            loop {
                // Asked again on a new connection: the daemon behind it may be another.
                let daemon = link.daemon()?;
                let body = if daemon.markup {
                    escape_body(&bubble.body)
                } else {
                    bubble.body.clone()
                };
                let mut hints = HashMap::from([("urgency", Value::U8(bubble.urgency.level()))]);
                if let Some(entry) = &bubble.desktop_entry {
                    hints.insert("desktop-entry", Value::from(entry.as_str()));
                }
                let args = (
                    bubble.app_name.as_str(),
                    0u32, // replaces no earlier bubble
                    bubble.icon.as_str(),
                    bubble.summary.as_str(),
                    body.as_str(),
                    actions.clone(),
                    hints,
                    -1i32, // the daemon's own expiry
                );
                match link.call_to(&daemon.name, "Notify", &args) {
                    Ok(reply) => return Ok((decode::<u32>(&reply, "Notify")?, daemon.name)),
                    // That daemon is gone: ask whoever holds the name now, once.
                    Err(error) if !asked_again && error.daemon_gone() => {
                        link.daemon = None;
                        asked_again = true;
                    }
                    Err(error) => return Err(error),
                }
            }
        })?;
        if let Some(on_action) = on_action {
            let early = lock(&self.awaited).insert(id, Waiting { daemon, on_action });
            if let Some((on_action, key)) = early {
                on_action(&key);
            }
        }
        Ok(id)
    }

    /// Closes a bubble this process showed.
    pub fn close(&self, id: u32) -> Result<(), NotifyError> {
        self.on_link(|link| link.call("CloseNotification", &id).map(drop))
    }

    /// Asks the daemon who it is; the cheapest way to learn whether one is there.
    pub fn server_information(&self) -> Result<ServerInformation, NotifyError> {
        const METHOD: &str = "GetServerInformation";
        let (name, vendor, version, spec_version) =
            self.on_link(|link| decode(&link.call(METHOD, &())?, METHOD))?;
        Ok(ServerInformation {
            name,
            vendor,
            version,
            spec_version,
        })
    }

    /// Whether the daemon bubbles go to shows action buttons (its `actions` capability),
    /// asked once per daemon. A bubble whose body lists the answers of its buttons is worded
    /// only for a daemon that shows them.
    pub fn shows_actions(&self) -> Result<bool, NotifyError> {
        self.on_link(|link| link.daemon().map(|daemon| daemon.actions))
    }

    /// The optional features the daemon has (`actions`, `body-markup`, ...).
    pub fn capabilities(&self) -> Result<Vec<String>, NotifyError> {
        self.on_link(|link| link.capabilities().map(|(capabilities, _)| capabilities))
    }

    /// Runs `operation` on the connection, opening it first if there is none (or it
    /// closed). If the operation fails because the connection broke, opens one new
    /// connection and runs it once more, from the start.
    fn on_link<T>(
        &self,
        operation: impl Fn(&mut Link) -> Result<T, NotifyError>,
    ) -> Result<T, NotifyError> {
        let mut link = lock(&self.link);
        let mut retried = false;
        loop {
            let open = match &mut *link {
                Some(open) if !open.connection.is_closed() => open,
                stale => stale.insert(self.connect()?),
            };
            match operation(open) {
                Err(error) if !retried && error.broke(&open.connection) => {
                    tracing::info!("the session bus connection broke ({error}); reconnecting");
                    *link = None;
                    retried = true;
                }
                result => return result,
            }
        }
    }

    fn connect(&self) -> Result<Link, NotifyError> {
        let builder = match &self.address {
            Some(address) => Builder::address(address.as_str()),
            None => Builder::session(),
        };
        let connection = builder
            .and_then(|builder| builder.method_timeout(CALL_TIMEOUT).build())
            .map_err(|error| NotifyError::Connect(Box::new(error)))?;
        // Subscribed before the first bubble goes out, so no action on it can be missed.
        let signals = MatchRule::builder()
            .msg_type(MessageType::Signal)
            .interface(SERVICE)
            .and_then(|rule| rule.path(PATH))
            .and_then(|rule| MessageIterator::for_match_rule(rule.build(), &connection, None))
            .map_err(|error| NotifyError::Connect(Box::new(error)))?;
        let awaited = Arc::downgrade(&self.awaited);
        std::thread::Builder::new()
            .name("notification-signals".into())
            .spawn(move || listen(signals, &awaited))
            .map_err(|source| NotifyError::Spawn {
                what: "notification listener",
                source,
            })?;
        self.connections_made.fetch_add(1, Ordering::Relaxed);
        Ok(Link {
            connection,
            daemon: None,
        })
    }
}

impl Drop for NotificationBus {
    fn drop(&mut self) {
        // Closing ends the listener's signal stream, and so its thread.
        let link = self
            .link
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(link) = link {
            let _ = link.connection.close();
        }
    }
}

/// The body of a reply to `method`.
fn decode<T>(reply: &Message, method: &'static str) -> Result<T, NotifyError>
where
    T: for<'de> zbus::zvariant::DynamicDeserialize<'de>,
{
    reply
        .body()
        .deserialize()
        .map_err(|source| NotifyError::Call {
            method,
            source: Box::new(source),
        })
}

/// The unique bus name that sent `message`.
fn sender(message: &Message) -> String {
    message
        .header()
        .sender()
        .map(|name| name.to_string())
        .unwrap_or_default()
}

/// The listener thread: one per connection, for as long as it is open.
fn listen(signals: MessageIterator, awaited: &Weak<Mutex<Awaited>>) {
    for message in signals {
        // An error ends the stream (the connection is gone); the next call opens a new
        // connection, with a listener of its own.
        let Ok(message) = message else { break };
        let Some(awaited) = awaited.upgrade() else {
            break;
        };
        let header = message.header();
        let Some(daemon) = header.sender().map(|name| name.as_str()) else {
            continue;
        };
        match header.member().map(|member| member.as_str()) {
            Some("ActionInvoked") => {
                let Ok((id, key)) = message.body().deserialize::<(u32, String)>() else {
                    continue;
                };
                let handler = {
                    let mut awaited = lock(&awaited);
                    let handler = awaited.take(daemon, id);
                    if handler.is_none() {
                        awaited.remember_early(daemon, id, key.clone());
                    }
                    handler
                };
                // Outside the lock: the handler may take its time, or show another bubble.
                if let Some(on_action) = handler {
                    on_action(&key);
                }
            }
            Some("NotificationClosed") => {
                if let Ok((id, _reason)) = message.body().deserialize::<(u32, u32)>() {
                    let _ = lock(&awaited).take(daemon, id);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn recorder() -> (ActionHandler, mpsc::Receiver<String>) {
        let (tx, rx) = mpsc::channel();
        let handler: ActionHandler = Box::new(move |key: &str| {
            let _ = tx.send(key.to_owned());
        });
        (handler, rx)
    }

    #[test]
    fn an_action_reaches_its_handler_once_and_only_from_the_daemon_that_showed_it() {
        let mut awaited = Awaited::default();
        let (handler, keys) = recorder();
        assert!(awaited
            .insert(
                7,
                Waiting {
                    daemon: ":1.5".into(),
                    on_action: handler
                }
            )
            .is_none());
        assert!(awaited.take(":1.9", 7).is_none(), "another sender");
        let handler = awaited.take(":1.5", 7).expect("registered");
        handler("answer:yes");
        assert_eq!(keys.recv().unwrap(), "answer:yes");
        assert!(awaited.take(":1.5", 7).is_none(), "taken once");
    }

    #[test]
    fn an_action_before_its_handler_is_kept_for_it() {
        let mut awaited = Awaited::default();
        awaited.remember_early(":1.5", 3, "default".into());
        let (handler, _keys) = recorder();
        let (_, key) = awaited
            .insert(
                3,
                Waiting {
                    daemon: ":1.5".into(),
                    on_action: handler,
                },
            )
            .expect("the early action");
        assert_eq!(key, "default");
        assert!(awaited.by_id.is_empty());
    }

    #[test]
    fn handlers_of_bubbles_never_closed_do_not_pile_up() {
        let mut awaited = Awaited::default();
        for id in 0..(MAX_AWAITED as u32 + 10) {
            let (handler, _keys) = recorder();
            awaited.insert(
                id,
                Waiting {
                    daemon: ":1.5".into(),
                    on_action: handler,
                },
            );
        }
        assert_eq!(awaited.by_id.len(), MAX_AWAITED);
        assert!(awaited.take(":1.5", 0).is_none(), "the oldest went first");
        for id in 0..100 {
            awaited.remember_early(":1.5", 100_000 + id, "default".into());
        }
        assert_eq!(awaited.early.len(), MAX_EARLY);
    }

    #[test]
    fn without_a_bus_calls_fail_at_once_and_open_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let address = format!("unix:path={}", dir.path().join("no-bus").display());
        let bus = NotificationBus::at(address);
        let error = bus
            .notify(&Bubble::new("Answer Inbox", "Deploy?", "body"), None)
            .unwrap_err();
        assert!(matches!(error, NotifyError::Connect(_)), "{error}");
        assert!(bus.server_information().is_err());
        assert_eq!(bus.connections_made(), 0);
    }
}
