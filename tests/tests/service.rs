//! `answer-inbox service install | uninstall | status` and the shipped systemd user unit,
//! black-box: the real binary, the real `systemctl` and `systemd-analyze`, with the home and
//! config directories in a temporary directory.
//!
//! No systemd user manager runs in these tests. One cannot run here: `systemd --user` refuses
//! to start unless systemd is PID 1 ("Trying to run as user instance, but the system has not
//! been booted with systemd"), which it is not in a container. And where one does run (a
//! developer's desktop), the tests must not enable anything in it: every command gets a
//! private, empty XDG_RUNTIME_DIR and no session bus, so the real systemctl finds no manager
//! ("Failed to connect to bus") and the tests cover what the command does then. Enabling
//! links are real too: `systemctl --user enable` works on the files without a manager.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::util::{self, code, stderr, stdout, Inbox};

const UNIT: &str = "answer-inbox.service";
const MARKER: &str = "# Written by `answer-inbox service install`";
const LATER: &str =
    "systemctl --user daemon-reload && systemctl --user enable --now answer-inbox.service";
/// The exit code for "the file is written, no user manager took it" (crates/cli/src/exit.rs).
const NO_SERVICE_MANAGER: i32 = 7;

/// An inbox whose commands see no systemd user manager, as in a container.
struct Home {
    inbox: Inbox,
}

impl Home {
    fn new() -> Home {
        let home = Home {
            inbox: Inbox::new(),
        };
        std::fs::create_dir_all(home.runtime_dir()).unwrap();
        home
    }

    /// Empty: no manager's socket, no bus.
    fn runtime_dir(&self) -> PathBuf {
        self.inbox.dir.path().join("runtime")
    }

    /// Where `service install` writes: the user unit directory under XDG_CONFIG_HOME.
    fn unit_path(&self) -> PathBuf {
        self.inbox
            .dir
            .path()
            .join("xdg-config/systemd/user")
            .join(UNIT)
    }

    fn enabling_link(&self) -> PathBuf {
        self.unit_path()
            .with_file_name("default.target.wants")
            .join(UNIT)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.inbox.cmd(args);
        self.no_manager(&mut cmd);
        cmd
    }

    /// [`Home::cmd`] for another copy of the binary.
    fn cmd_of(&self, program: &Path, args: &[&str]) -> Command {
        let template = self.cmd(args);
        let mut cmd = Command::new(program);
        cmd.args(args);
        for (key, value) in template.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }

    fn no_manager(&self, cmd: &mut Command) {
        cmd.env("XDG_RUNTIME_DIR", self.runtime_dir())
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("ANSWER_INBOX_TEAM");
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// The real `systemctl --user ARGS` on this home's files.
    fn systemctl(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("systemctl");
        cmd.arg("--user")
            .args(args)
            .env("HOME", self.inbox.dir.path())
            .env("XDG_CONFIG_HOME", self.inbox.dir.path().join("xdg-config"));
        self.no_manager(&mut cmd);
        cmd.output().expect("systemctl runs (the systemd package)")
    }

    fn unit(&self) -> String {
        std::fs::read_to_string(self.unit_path()).unwrap()
    }

    fn status(&self) -> Value {
        let out = self.run(&["service", "status", "--json"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    }
}

/// `systemd-analyze --user verify` on a unit file: it must exit 0 and say nothing, as it
/// prints problems it only warns about (an unknown setting, a bad value) with exit 0.
/// Offline, it needs only a runtime directory; `--man=no` leaves out running `man` for the
/// Documentation= page, which [`the_unit_documentation_is_a_committed_man_page`] checks.
fn verify(unit: &Path, runtime_dir: &Path) {
    let out = Command::new("systemd-analyze")
        .args(["--user", "verify", "--man=no"])
        .arg(unit)
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .output()
        .expect("systemd-analyze runs (the systemd package)");
    assert!(
        out.status.success() && out.stderr.is_empty() && out.stdout.is_empty(),
        "systemd-analyze --user verify {}: exit {:?}\n{}{}\n{}",
        unit.display(),
        out.status.code(),
        stdout(&out),
        stderr(&out),
        std::fs::read_to_string(unit).unwrap_or_default()
    );
}

fn shipped_unit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/cli/assets/systemd/answer-inbox.service")
}

/// The ExecStart= line of a unit.
fn exec_start(unit: &str) -> String {
    let lines: Vec<&str> = unit
        .lines()
        .filter(|line| line.starts_with("ExecStart="))
        .collect();
    assert_eq!(lines.len(), 1, "{unit}");
    lines[0].to_owned()
}

/// The packaged units on this machine (the .deb test may have installed one), in systemd's
/// order: `status` reports them, so the tests expect what is there.
fn system_units() -> Vec<String> {
    [
        "/etc/xdg/systemd/user",
        "/etc/systemd/user",
        "/usr/local/lib/systemd/user",
        "/usr/lib/systemd/user",
    ]
    .iter()
    .map(|dir| format!("{dir}/{UNIT}"))
    .filter(|path| Path::new(path).exists())
    .collect()
}

#[test]
fn the_shipped_unit_verifies_clean() {
    let home = Home::new();
    let shipped = std::fs::read_to_string(shipped_unit()).unwrap();
    assert_eq!(
        exec_start(&shipped),
        "ExecStart=/usr/bin/answer-inbox watch"
    );
    // verify checks that the program exists; the .deb puts it at /usr/bin/answer-inbox,
    // which this machine may not have, so a copy names the built binary instead: the same
    // file but for that path (the package test runs the installed one).
    let copy = home.inbox.dir.path().join(UNIT);
    let built = util::binary();
    std::fs::write(
        &copy,
        shipped.replace(
            "ExecStart=/usr/bin/answer-inbox ",
            &format!("ExecStart={} ", built.to_str().unwrap()),
        ),
    )
    .unwrap();
    verify(&copy, &home.runtime_dir());
}

#[test]
fn the_unit_documentation_is_a_committed_man_page() {
    let shipped = std::fs::read_to_string(shipped_unit()).unwrap();
    assert!(shipped
        .lines()
        .any(|line| line == "Documentation=man:answer-inbox-watch(1)"));
    let page =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/cli/assets/man/answer-inbox-watch.1");
    assert!(page.is_file(), "{} is missing", page.display());
}

#[test]
fn install_writes_a_clean_unit_for_this_binary_and_says_what_to_run_without_a_manager() {
    let home = Home::new();
    let out = home.run(&["service", "install"]);
    let err = stderr(&out);
    assert_eq!(code(&out), NO_SERVICE_MANAGER, "{err}");
    assert!(
        err.contains(&format!("wrote {}", home.unit_path().display())),
        "{err}"
    );
    assert!(
        err.contains("cannot reach your systemd user manager")
            && err.contains("Failed to connect to bus"),
        "says plainly what happened: {err}"
    );
    assert!(err.contains(LATER), "the exact command to run later: {err}");

    let unit = home.unit();
    assert!(unit.starts_with(MARKER), "{unit}");
    // The locations it was given (here by ANSWER_INBOX_DIR and ANSWER_INBOX_DB) go with it,
    // so the service watches the same spool.
    assert_eq!(
        exec_start(&unit),
        format!(
            "ExecStart={} watch --spool {} --db {}",
            util::binary().display(),
            home.inbox.spool().display(),
            home.inbox.db().display()
        )
    );
    verify(&home.unit_path(), &home.runtime_dir());
    assert!(
        !home.enabling_link().exists(),
        "nothing is enabled behind the user's back"
    );

    // Again: the same file, nothing to rewrite, the same advice.
    let out = home.run(&["service", "install", "--no-start", "--poll", "--no-notify"]);
    let err = stderr(&out);
    assert_eq!(code(&out), NO_SERVICE_MANAGER, "{err}");
    assert!(
        err.ends_with("\n  systemctl --user daemon-reload\n"),
        "--no-start: only the reload is left to do: {err}"
    );
    assert!(
        exec_start(&home.unit()).contains(" watch --poll --no-notify --spool "),
        "{}",
        home.unit()
    );
}

#[test]
fn a_binary_and_a_spool_with_spaces_quotes_and_specifiers_reach_systemd_intact() {
    let home = Home::new();
    // `$` and `%` mean something to systemd, spaces split words: verify finds the program
    // only if its path was written so that systemd reads it back as it is.
    let dir = home.inbox.dir.path().join("my apps/100% $HOME");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("answer-inbox");
    // A hard link: the binary is large, and the kernel names the running program by the
    // path it was started with.
    if std::fs::hard_link(util::binary(), &exe).is_err() {
        std::fs::copy(util::binary(), &exe).unwrap();
    }
    let spool = home.inbox.dir.path().join("the \"team's\" spool\\%h $USER");
    let out = home
        .cmd_of(&exe, &["service", "install"])
        .env("ANSWER_INBOX_DIR", &spool)
        .env_remove("ANSWER_INBOX_DB")
        .output()
        .unwrap();
    assert_eq!(code(&out), NO_SERVICE_MANAGER, "{}", stderr(&out));
    let line = exec_start(&home.unit());
    assert_eq!(
        line,
        format!(
            "ExecStart=\"{}/my apps/100%% $HOME/answer-inbox\" watch --spool \
             \"{}/the \\\"team's\\\" spool\\\\%%h $$USER\"",
            home.inbox.dir.path().display(),
            home.inbox.dir.path().display()
        )
    );
    verify(&home.unit_path(), &home.runtime_dir());

    // A path systemd refuses to start at all is refused here, with the reason.
    let bad = home.inbox.dir.path().join("it's");
    std::fs::create_dir_all(&bad).unwrap();
    let bad_exe = bad.join("answer-inbox");
    if std::fs::hard_link(util::binary(), &bad_exe).is_err() {
        std::fs::copy(util::binary(), &bad_exe).unwrap();
    }
    let before = home.unit();
    let out = home
        .cmd_of(&bad_exe, &["service", "install"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("systemd cannot start a program whose path holds '\\''"),
        "{}",
        stderr(&out)
    );
    assert_eq!(home.unit(), before, "nothing written");
}

#[test]
fn a_unit_install_did_not_write_is_left_alone_unless_forced() {
    let home = Home::new();
    let mine = "[Unit]\nDescription=my own inbox\n\n[Service]\nExecStart=/bin/true\n";
    std::fs::create_dir_all(home.unit_path().parent().unwrap()).unwrap();
    std::fs::write(home.unit_path(), mine).unwrap();

    let out = home.run(&["service", "install"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was not written by `answer-inbox service install`")
            && stderr(&out).contains("--force"),
        "{}",
        stderr(&out)
    );
    assert_eq!(home.unit(), mine);

    let out = home.run(&["service", "uninstall"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("left alone"), "{}", stderr(&out));
    assert_eq!(home.unit(), mine);

    let out = home.run(&["service", "install", "--force"]);
    assert_eq!(code(&out), NO_SERVICE_MANAGER, "{}", stderr(&out));
    assert!(home.unit().starts_with(MARKER));
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(home.unit_path().parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, [UNIT], "{names:?}");
}

#[test]
fn uninstall_removes_its_unit_and_the_enabling_link() {
    let home = Home::new();
    let out = home.run(&["service", "uninstall"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing to uninstall"),
        "{}",
        stderr(&out)
    );

    assert_eq!(code(&home.run(&["service", "install"])), NO_SERVICE_MANAGER);
    // Enabled as the user would once a manager runs: the real systemctl makes the link
    // in default.target.wants/ from the files alone.
    let out = home.systemctl(&["enable", UNIT]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(home.enabling_link().exists());

    let out = home.run(&["service", "uninstall"]);
    let err = stderr(&out);
    assert_eq!(code(&out), NO_SERVICE_MANAGER, "{err}");
    assert!(
        err.contains(&format!("removed {}", home.unit_path().display())),
        "{err}"
    );
    assert!(
        err.contains(
            "systemctl --user daemon-reload && systemctl --user stop answer-inbox.service"
        ),
        "what to run where a manager of this user runs it: {err}"
    );
    assert!(!home.unit_path().exists());
    assert!(
        std::fs::symlink_metadata(home.enabling_link()).is_err(),
        "no dangling link left in default.target.wants/"
    );
}

#[test]
fn status_says_which_unit_is_in_effect_and_that_no_manager_answers() {
    let home = Home::new();
    let packaged = system_units();

    let status = home.status();
    assert_eq!(status["unit"], UNIT);
    assert_eq!(
        status["user_unit"]["path"],
        home.unit_path().to_str().unwrap()
    );
    assert_eq!(status["user_unit"]["exists"], false);
    assert_eq!(status["system_units"], serde_json::json!(packaged));
    assert_eq!(
        status["in_effect"],
        packaged
            .first()
            .map_or(Value::Null, |path| path.as_str().into()),
        "without a user unit, the packaged one (if any) is in effect"
    );
    assert_eq!(status["manager"]["reachable"], false);
    assert!(
        status["manager"]["problem"]
            .as_str()
            .unwrap()
            .contains("cannot reach your systemd user manager"),
        "{status}"
    );
    assert_eq!(status["active"], Value::Null);
    assert_eq!(status["logs"], "journalctl --user -u answer-inbox.service");

    assert_eq!(code(&home.run(&["service", "install"])), NO_SERVICE_MANAGER);
    let status = home.status();
    assert_eq!(status["user_unit"]["exists"], true);
    assert_eq!(status["user_unit"]["written_by_install"], true);
    assert_eq!(
        status["in_effect"],
        home.unit_path().to_str().unwrap(),
        "a user unit overrides a packaged one of the same name"
    );
    // is-enabled reads the files: it answers without a manager.
    assert_eq!(status["enabled"], "disabled");
    assert!(home.systemctl(&["enable", UNIT]).status.success());
    assert_eq!(home.status()["enabled"], "enabled");

    let out = home.run(&["service", "status"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for expected in [
        format!("user unit:  {}", home.unit_path().display()),
        "written by `answer-inbox service install`".to_owned(),
        format!("in effect:  {}", home.unit_path().display()),
        "enabled:    enabled".to_owned(),
        "active:     unknown: systemctl cannot reach your systemd user manager".to_owned(),
        "journalctl --user -u answer-inbox.service".to_owned(),
    ] {
        assert!(text.contains(&expected), "{expected:?} in:\n{text}");
    }
    for unit in &packaged {
        assert!(
            text.contains(&format!("packaged:   {unit} (overridden by the user unit)")),
            "{text}"
        );
    }
}

#[test]
fn without_systemctl_the_unit_is_written_and_the_command_says_so() {
    let home = Home::new();
    // A PATH with no systemctl on it: a system without systemd.
    let empty = home.inbox.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let out = home
        .cmd(&["service", "install"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), NO_SERVICE_MANAGER, "{err}");
    assert!(err.contains("systemctl is not installed"), "{err}");
    assert!(err.contains(LATER), "{err}");
    assert!(home.unit().starts_with(MARKER));
}
