//! What closing the window does. With a tray host on the session bus (a StatusNotifierItem
//! watcher: KDE, most desktops with a panel, GNOME with the AppIndicator extension) the tray
//! icon brings the window back and has Quit, so closing only hides the window. Without one
//! (stock GNOME, a bare window manager) a hidden app could be neither seen nor quit, so
//! closing quits; the first time, the window says so and lets the operator keep it open.

use std::path::{Path, PathBuf};

/// The well-known name of the StatusNotifierItem watcher: present while a tray host runs.
pub const TRAY_WATCHER: &str = "org.kde.StatusNotifierWatcher";

/// What a click on the window's close button does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnClose {
    /// Hide the window; the tray icon brings it back.
    Hide,
    /// Quit the app.
    Quit,
    /// Keep the window and say that closing quits, this once.
    Explain,
}

/// The rule: hide when the tray can bring the window back; otherwise explain once, then quit.
pub fn on_close(tray_host: bool, explained_before: bool) -> OnClose {
    match (tray_host, explained_before) {
        (true, _) => OnClose::Hide,
        (false, false) => OnClose::Explain,
        (false, true) => OnClose::Quit,
    }
}

/// Whether a tray host owns its name on the session bus. No bus, or one that does not
/// answer, counts as no host: the safe side, since the app then quits rather than hides.
pub fn tray_host_present() -> bool {
    match zbus::blocking::Connection::session() {
        Ok(connection) => tray_host_on(&connection),
        Err(error) => {
            tracing::debug!("no session bus to look for a tray on: {error}");
            false
        }
    }
}

/// [`tray_host_present`] on a given connection.
pub fn tray_host_on(connection: &zbus::blocking::Connection) -> bool {
    let asked = zbus::blocking::fdo::DBusProxy::new(connection).and_then(|bus| {
        let name = zbus::names::BusName::try_from(TRAY_WATCHER).map_err(zbus::Error::from)?;
        Ok(bus.name_has_owner(name)?)
    });
    asked.unwrap_or_else(|error| {
        tracing::debug!("cannot ask the session bus for a tray host: {error}");
        false
    })
}

/// Remembers that the window has said "closing quits", so it says it once, not at every
/// close: an empty file in the state directory.
#[derive(Debug, Clone)]
pub struct Explained {
    marker: PathBuf,
}

impl Explained {
    /// `$XDG_STATE_HOME/answer-inbox/closing-quits-explained`.
    pub fn in_state_dir() -> Option<Explained> {
        dirs::state_dir().map(|dir| Explained::at(&dir.join("answer-inbox")))
    }

    /// The marker in `dir`.
    pub fn at(dir: &Path) -> Explained {
        Explained {
            marker: dir.join("closing-quits-explained"),
        }
    }

    pub fn before(&self) -> bool {
        self.marker.exists()
    }

    /// Notes that it was said. A marker that cannot be written only means the window says
    /// it again next time.
    pub fn remember(&self) {
        let written = self
            .marker
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&self.marker, b""));
        if let Err(error) = written {
            tracing::warn!("cannot note {}: {error}", self.marker.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::private_bus::PrivateBus;

    #[test]
    fn closing_hides_only_where_a_tray_can_bring_the_window_back() {
        assert_eq!(on_close(true, false), OnClose::Hide);
        assert_eq!(on_close(true, true), OnClose::Hide);
        assert_eq!(on_close(false, false), OnClose::Explain);
        assert_eq!(on_close(false, true), OnClose::Quit);
    }

    #[test]
    fn the_explanation_is_remembered_in_its_directory() {
        let root = tempfile::tempdir().unwrap();
        let explained = Explained::at(&root.path().join("state/answer-inbox"));
        assert!(!explained.before());
        explained.remember();
        assert!(explained.before());
        assert!(Explained::at(&root.path().join("state/answer-inbox")).before());
    }

    #[test]
    fn a_tray_host_is_seen_while_it_owns_the_watchers_name() {
        let bus = PrivateBus::start();
        let app = bus.connect();
        assert!(!tray_host_on(&app), "nobody owns the name yet");

        let host = zbus::blocking::connection::Builder::address(bus.address())
            .unwrap()
            .name(TRAY_WATCHER)
            .unwrap()
            .build()
            .unwrap();
        assert!(tray_host_on(&app));

        drop(host);
        // The bus releases the name when its owner disconnects; give it a moment.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while tray_host_on(&app) {
            assert!(
                std::time::Instant::now() < deadline,
                "the name stayed owned"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
