//! A second launch hands over to the app already running, before it starts anything of its
//! own. Tauri's single-instance plugin does the same handover from inside Tauri's setup, but
//! by then GTK is half started, and the plugin's `exit(0)` there has crashed the second
//! process under load (a segfault in GTK's teardown, after the handover had succeeded).
//! Asking first, before Tauri is built, leaves the plugin only the rare case of two launches
//! at the same moment, which it still handles.
//!
//! The contract is the plugin's: the running app owns `<identifier>.SingleInstance` on the
//! session bus and serves `org.SingleInstance.DBus.ExecuteCallback(argv, cwd)` at the name's
//! path (dots to slashes, dashes to underscores). The desktop test of a second launch keeps
//! the two sides in step.

/// What a launch found on the session bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handover {
    /// A running app took the launch's arguments; this process should end now.
    HandedOver,
    /// No app runs (or there is no bus to ask): start normally.
    StartHere,
}

/// The running app's well-known name on the session bus.
pub fn bus_name(identifier: &str) -> String {
    format!("{identifier}.SingleInstance")
}

/// The object path the running app serves its handover at.
pub fn object_path(identifier: &str) -> String {
    format!(
        "/{}",
        bus_name(identifier).replace('.', "/").replace('-', "_")
    )
}

/// Hands `argv` and `cwd` to a running app with this identifier, on the session bus.
pub fn hand_over(identifier: &str, argv: &[String], cwd: &str) -> Handover {
    match zbus::blocking::Connection::session() {
        Ok(connection) => hand_over_on(&connection, identifier, argv, cwd),
        Err(error) => {
            tracing::debug!("no session bus to find a running app on: {error}");
            Handover::StartHere
        }
    }
}

/// [`hand_over`] on a given connection.
pub fn hand_over_on(
    connection: &zbus::blocking::Connection,
    identifier: &str,
    argv: &[String],
    cwd: &str,
) -> Handover {
    let name = bus_name(identifier);
    let owned = zbus::blocking::fdo::DBusProxy::new(connection).and_then(|bus| {
        let name = zbus::names::BusName::try_from(name.as_str()).map_err(zbus::Error::from)?;
        Ok(bus.name_has_owner(name)?)
    });
    match owned {
        Ok(true) => {}
        Ok(false) => return Handover::StartHere,
        Err(error) => {
            tracing::debug!("cannot ask the session bus for a running app: {error}");
            return Handover::StartHere;
        }
    }
    let called = connection.call_method(
        Some(name.as_str()),
        object_path(identifier).as_str(),
        Some("org.SingleInstance.DBus"),
        "ExecuteCallback",
        &(argv, cwd),
    );
    match called {
        Ok(_) => Handover::HandedOver,
        // The owner went away in between, or does not answer: starting here lets the
        // single-instance plugin decide, as it would have without this step.
        Err(error) => {
            tracing::warn!("the running app did not take the launch: {error}");
            Handover::StartHere
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::private_bus::PrivateBus;
    use std::sync::{Arc, Mutex};

    #[test]
    fn the_name_and_path_are_the_single_instance_plugins() {
        assert_eq!(
            bus_name("dev.answer-inbox.desktop"),
            "dev.answer-inbox.desktop.SingleInstance"
        );
        assert_eq!(
            object_path("dev.answer-inbox.desktop"),
            "/dev/answer_inbox/desktop/SingleInstance"
        );
    }

    /// The launches a running app was handed: argv and working directory.
    type Heard = Arc<Mutex<Vec<(Vec<String>, String)>>>;

    /// What a running app serves, as far as a launch can tell.
    struct Running {
        heard: Heard,
    }

    #[zbus::interface(name = "org.SingleInstance.DBus")]
    impl Running {
        fn execute_callback(&mut self, argv: Vec<String>, cwd: String) {
            self.heard.lock().unwrap().push((argv, cwd));
        }
    }

    #[test]
    fn a_launch_starts_here_when_nothing_runs_and_hands_over_when_an_app_does() {
        let bus = PrivateBus::start();
        let launch = bus.connect();
        let argv = vec!["answer-inbox-desktop".to_owned(), "--at-login".to_owned()];
        assert_eq!(
            hand_over_on(&launch, "dev.example.app", &argv, "/work"),
            Handover::StartHere
        );

        let heard = Heard::default();
        let _running = zbus::blocking::connection::Builder::address(bus.address())
            .unwrap()
            .name(bus_name("dev.example.app").as_str())
            .unwrap()
            .serve_at(
                object_path("dev.example.app").as_str(),
                Running {
                    heard: heard.clone(),
                },
            )
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(
            hand_over_on(&launch, "dev.example.app", &argv, "/work"),
            Handover::HandedOver
        );
        assert_eq!(
            *heard.lock().unwrap(),
            vec![(argv.clone(), "/work".to_owned())]
        );
        // Another app's name is not this one's.
        assert_eq!(
            hand_over_on(&launch, "dev.example.other", &argv, "/work"),
            Handover::StartHere
        );
    }
}
