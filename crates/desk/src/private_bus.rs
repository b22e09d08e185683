//! A private session bus for this crate's tests: a `dbus-daemon` of the test's own, stopped
//! when dropped, so a test never talks to the developer's desktop.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub(crate) struct PrivateBus {
    daemon: Child,
    address: String,
}

impl PrivateBus {
    pub(crate) fn start() -> PrivateBus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon (scripts/setup installs dbus)");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        PrivateBus {
            daemon,
            address: address.trim().to_owned(),
        }
    }

    pub(crate) fn address(&self) -> &str {
        &self.address
    }

    pub(crate) fn connect(&self) -> zbus::blocking::Connection {
        zbus::blocking::connection::Builder::address(self.address.as_str())
            .unwrap()
            .build()
            .unwrap()
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
