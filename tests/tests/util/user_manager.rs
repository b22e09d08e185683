//! A real systemd user manager for one test's home: `systemd --user`, started for the test
//! and stopped by PID (SIGTERM: it stops its units, then exits).
//!
//! A user manager starts only on a machine "booted with systemd" (it looks for
//! `/run/systemd/system`), which a container is not; so it runs in a private mount namespace
//! with a tmpfs of its own on /run that has that directory, and the machine's /run is not
//! touched. Everything else is systemd's: unit loading, cgroups, restarts, and
//! `systemctl --user` over the manager's private socket in its runtime directory. A mount
//! namespace needs root, as installing the .deb does (tests/tests/package.rs); the CI runs
//! as root. There is no journald.

use std::collections::BTreeMap;
use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use inbox_harness::process::Running;

use super::{stdout, Inbox};

/// The headless inbox's unit, as the .deb ships it and `service install` writes it.
pub const UNIT: &str = "answer-inbox.service";

/// `systemd --user` for one test's home, in a mount namespace of its own.
pub struct UserManager {
    process: Running,
    runtime_dir: PathBuf,
    log: PathBuf,
}

impl UserManager {
    pub fn start(inbox: &Inbox) -> UserManager {
        let id = Command::new("id").arg("-u").output().unwrap();
        assert_eq!(
            stdout(&id).trim(),
            "0",
            "a systemd user manager of the test's own needs a private mount namespace: run \
             the tests as root"
        );
        let systemd = ["/usr/lib/systemd/systemd", "/lib/systemd/systemd"]
            .into_iter()
            .map(PathBuf::from)
            .find(|path| path.exists())
            .expect("systemd is installed (the systemd package)");
        let root = inbox.dir.path();
        let runtime_dir = root.join("manager-runtime");
        std::fs::create_dir_all(&runtime_dir).unwrap();
        std::fs::set_permissions(&runtime_dir, Permissions::from_mode(0o700)).unwrap();
        let log = root.join("manager.log");
        let mut cmd = Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p /run/systemd/system && exec "$0" --user"#)
            .arg(&systemd);
        home_env(inbox, &mut cmd, &runtime_dir);
        let process = Running::spawn_with_stderr(cmd, std::fs::File::create(&log).unwrap());
        let manager = UserManager {
            process,
            runtime_dir,
            log,
        };
        let started = wait_for(Duration::from_secs(30), || {
            // Not `is-system-running`: outside the namespace systemctl sees no
            // /run/systemd/system and says "offline" without asking the manager.
            let state = manager.systemctl(inbox, &["show", "--value", "-p", "SystemState"]);
            matches!(stdout(&state).trim(), "running" | "degraded")
        });
        assert!(
            started,
            "the user manager did not start:\n{}",
            manager.log_text()
        );
        manager
    }

    /// The real `systemctl --user ARGS`, talking to this manager.
    pub fn systemctl(&self, inbox: &Inbox, args: &[&str]) -> Output {
        let mut cmd = Command::new("systemctl");
        cmd.arg("--user").args(args);
        home_env(inbox, &mut cmd, &self.runtime_dir);
        cmd.stdin(Stdio::null()).output().unwrap()
    }

    /// One property of the unit, as `systemctl --user show` gives it.
    pub fn property(&self, inbox: &Inbox, name: &str) -> String {
        let out = self.systemctl(inbox, &["show", "--value", "-p", name, UNIT]);
        stdout(&out).trim().to_owned()
    }

    /// Several properties of the unit, read at one moment.
    pub fn properties(&self, inbox: &Inbox, names: &[&str]) -> BTreeMap<String, String> {
        let mut args = vec!["show"];
        for name in names {
            args.extend(["-p", name]);
        }
        args.push(UNIT);
        let out = self.systemctl(inbox, &args);
        stdout(&out)
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect()
    }

    /// `answer-inbox ARGS` as the user of this manager runs it.
    pub fn answer_inbox(&self, inbox: &Inbox, args: &[&str]) -> Output {
        let mut cmd = inbox.cmd(args);
        home_env(inbox, &mut cmd, &self.runtime_dir);
        cmd.output().unwrap()
    }

    /// `program`, run as the user of this manager: its home, its runtime directory.
    pub fn user_command(&self, inbox: &Inbox, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        home_env(inbox, &mut cmd, &self.runtime_dir);
        cmd
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for UserManager {
    fn drop(&mut self) {
        // SIGTERM: the manager stops its units, then exits; its namespace and /run go with it.
        self.process.stop();
    }
}

/// The home the manager, systemctl and the CLI share: the test's own directories, the
/// manager's runtime directory, and no session bus of the account running the tests.
fn home_env(inbox: &Inbox, cmd: &mut Command, runtime_dir: &Path) {
    let root = inbox.dir.path();
    cmd.env("HOME", root)
        .env("XDG_CONFIG_HOME", root.join("xdg-config"))
        .env("XDG_DATA_HOME", root.join("xdg"))
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("ANSWER_INBOX_TEAM")
        .env_remove("ANSWER_INBOX_POLICY");
}

/// Whether `done` came true within `timeout`.
pub fn wait_for(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    true
}
