//! The headless inbox as a user service, run by a real systemd user manager: `answer-inbox
//! service install` enables and starts it, the service answers a pipeline by the operator's
//! policy, systemd restarts it when it dies, and `service uninstall` stops it cleanly.
//!
//! The manager is systemd's own `systemd --user`, started for this test with the test's home
//! and stopped by PID. It starts only on a machine "booted with systemd" (it looks for
//! `/run/systemd/system`), which a container is not; so it runs in a private mount namespace
//! with a tmpfs of its own on /run that has that directory, and the machine's /run is not
//! touched. Everything else is systemd's: unit loading, cgroups, restarts, and
//! `systemctl --user` over the manager's private socket in its runtime directory. A mount
//! namespace needs root, as installing the .deb does (tests/tests/package.rs); the CI runs
//! as root.
//!
//! tests/tests/service.rs covers the commands where no manager answers.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use inbox_harness::process::{ProcessId, Running};
use serde_json::Value;

use crate::util::{code, stderr, stdout, Inbox};

const UNIT: &str = "answer-inbox.service";

/// `systemd --user` for one test's home, in a mount namespace of its own.
struct UserManager {
    process: Running,
    runtime_dir: PathBuf,
    log: PathBuf,
}

impl UserManager {
    fn start(inbox: &Inbox) -> UserManager {
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
    fn systemctl(&self, inbox: &Inbox, args: &[&str]) -> Output {
        let mut cmd = Command::new("systemctl");
        cmd.arg("--user").args(args);
        home_env(inbox, &mut cmd, &self.runtime_dir);
        cmd.stdin(Stdio::null()).output().unwrap()
    }

    /// One property of the unit, as `systemctl --user show` gives it.
    fn property(&self, inbox: &Inbox, name: &str) -> String {
        let out = self.systemctl(inbox, &["show", "--value", "-p", name, UNIT]);
        stdout(&out).trim().to_owned()
    }

    /// `answer-inbox ARGS` as the user of this manager runs it.
    fn answer_inbox(&self, inbox: &Inbox, args: &[&str]) -> Output {
        let mut cmd = inbox.cmd(args);
        home_env(inbox, &mut cmd, &self.runtime_dir);
        cmd.output().unwrap()
    }

    fn log_text(&self) -> String {
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

#[test]
fn a_real_user_manager_runs_the_installed_service_restarts_it_and_uninstall_stops_it() {
    let inbox = Inbox::new();
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let manager = UserManager::start(&inbox);

    // The service's output in a file the test reads (there is no journald here); the rest of
    // the unit is what `service install` writes.
    let service_log = inbox.dir.path().join("service.log");
    let drop_in = inbox
        .dir
        .path()
        .join("xdg-config/systemd/user")
        .join(format!("{UNIT}.d"));
    std::fs::create_dir_all(&drop_in).unwrap();
    std::fs::write(
        drop_in.join("test-output.conf"),
        format!(
            "[Service]\nStandardOutput=append:{}\nStandardError=inherit\n",
            service_log.display()
        ),
    )
    .unwrap();

    let out = manager.answer_inbox(&inbox, &["service", "install"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("enabled and started answer-inbox.service"),
        "{}",
        stderr(&out)
    );
    assert_eq!(manager.property(&inbox, "ActiveState"), "active");
    assert_eq!(manager.property(&inbox, "UnitFileState"), "enabled");
    let status = service_status(&manager, &inbox);
    assert_eq!(status["manager"]["reachable"], true, "{status}");
    assert_eq!(status["active"], "active", "{status}");
    assert_eq!(status["enabled"], "enabled", "{status}");
    let first = main_pid(&manager, &inbox);

    // The service is the inbox: a pipeline's autonomous request is settled by the shipped
    // policy with its defaults, with nothing else running.
    let request = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nightly-cleanup-autonomous.json"),
    )
    .unwrap();
    let out = inbox.run_with_stdin(
        &["ask", "--wait", "--timeout", "30", "-"],
        request.as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}\n{}", stderr(&out), log_of(&service_log));
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["status"], "defaulted", "{outcome}");
    assert_eq!(outcome["answered_by"], "policy:rule:file-askers");
    let log = log_of(&service_log);
    assert!(
        log.contains(&format!("watching {}", inbox.spool().display())),
        "{log}"
    );
    let id = outcome["id"].as_str().unwrap();
    assert!(
        log.contains(&format!("defaulted {id} by policy:rule:file-askers")),
        "the service settled it: {log}"
    );
    assert!(
        !log.contains('\u{1b}'),
        "no colour codes in the log: {log:?}"
    );

    // Killed: systemd starts it again (Restart=on-failure, after RestartSec=10s).
    // (SIGKILL: on SIGTERM `watch` ends cleanly, with exit 0, and is rightly not restarted.)
    let kill = Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let restarted = wait_for(Duration::from_secs(40), || {
        manager.property(&inbox, "ActiveState") == "active"
            && main_pid_or_zero(&manager, &inbox) != 0
            && main_pid_or_zero(&manager, &inbox) != first
    });
    assert!(
        restarted,
        "the killed service was not restarted: {:?}\n{}",
        service_status(&manager, &inbox),
        log_of(&service_log)
    );
    assert_eq!(manager.property(&inbox, "NRestarts"), "1");
    let second = main_pid(&manager, &inbox);

    // Uninstall: stopped with SIGTERM (watch ends cleanly, saying so), disabled, removed.
    let out = manager.answer_inbox(&inbox, &["service", "uninstall"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let gone = wait_for(Duration::from_secs(20), || ProcessId::of(second).is_none());
    assert!(gone, "the service's process {second} is still running");
    let state = manager.systemctl(&inbox, &["is-active", UNIT]);
    assert_eq!(stdout(&state).trim(), "inactive", "{}", stderr(&state));
    assert!(
        log_of(&service_log).trim_end().ends_with("stopped"),
        "watch stopped cleanly on SIGTERM:\n{}",
        log_of(&service_log)
    );
    let units = inbox.dir.path().join("xdg-config/systemd/user");
    assert!(!units.join(UNIT).exists());
    assert!(std::fs::symlink_metadata(units.join("default.target.wants").join(UNIT)).is_err());
}

fn service_status(manager: &UserManager, inbox: &Inbox) -> Value {
    let out = manager.answer_inbox(inbox, &["service", "status", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn main_pid_or_zero(manager: &UserManager, inbox: &Inbox) -> u32 {
    manager.property(inbox, "MainPID").parse().unwrap_or(0)
}

fn main_pid(manager: &UserManager, inbox: &Inbox) -> u32 {
    let pid = main_pid_or_zero(manager, inbox);
    assert_ne!(pid, 0, "the service has no main process");
    pid
}

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Whether `done` came true within `timeout`.
fn wait_for(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    true
}
