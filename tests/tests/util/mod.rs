//! Helpers for black-box tests: the built `answer-inbox` binary and a private spool and
//! database per test. Processes and desktop sessions come from the `inbox-harness` library
//! (crates/harness), which the benchmarks share.

pub mod browser;
pub mod desktop;
pub mod requests;
pub mod waiting_hook;
pub mod webdriver;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use inbox_harness::process::{eventually, Running};

/// The `answer-inbox` binary next to this test's target directory. `scripts/test` builds
/// it first (`cargo build --workspace --bins`).
pub fn binary() -> PathBuf {
    sibling_binary("answer-inbox")
}

/// `answer-inbox-faults`: the command line with the engine's fault points compiled in, for
/// the tests that turn them on through `FAILPOINTS`. No other build has them; `scripts/test`
/// builds this one.
pub fn faults_binary() -> PathBuf {
    let bin = sibling_binary_path("answer-inbox-faults");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build -p answer-inbox --bin answer-inbox-faults --features \
         failpoints` first",
        bin.display()
    );
    bin
}

/// A binary of this workspace, built next to the test binaries' directory.
pub fn sibling_binary(name: &str) -> PathBuf {
    let bin = sibling_binary_path(name);
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --workspace --bins` first",
        bin.display()
    );
    bin
}

fn sibling_binary_path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    dir.join(name)
}

/// A private spool, database and home for one test.
pub struct Inbox {
    pub dir: tempfile::TempDir,
}

impl Inbox {
    pub fn new() -> Inbox {
        Inbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn spool(&self) -> PathBuf {
        self.dir.path().join("spool")
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("data/inbox.sqlite3")
    }

    /// Where this inbox's commands look for the operator's policy (the default place under
    /// its own XDG config dir). Without a file there, the shipped policy applies.
    pub fn policy_file(&self) -> PathBuf {
        self.dir.path().join("xdg-config/answer-inbox/policy.toml")
    }

    /// A command with this inbox's spool and database, and no desktop session.
    pub fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_of(binary(), args)
    }

    /// [`Inbox::cmd`] for `answer-inbox-faults`, whose fault points `FAILPOINTS` turns on.
    pub fn faults_cmd(&self, args: &[&str]) -> Command {
        self.cmd_of(faults_binary(), args)
    }

    fn cmd_of(&self, program: PathBuf, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("ANSWER_INBOX_DIR", self.spool())
            .env("ANSWER_INBOX_DB", self.db())
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            // The policy comes from this inbox's own config dir ([`Inbox::policy_file`]),
            // never from the account running the tests.
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg-config"))
            .env_remove("ANSWER_INBOX_POLICY")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            // Not the account: a person's answer is attributed to the OS account
            // ([`operator`]), never to $USER, and the tests would see it if it were.
            .env("USER", "tester")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Runs with `stdin` fed to the command.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &[u8]) -> Output {
        use std::io::Write;
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    }

    /// Places a request file atomically, as a well-behaved asker does.
    pub fn place(&self, id: &str, body: &str) {
        self.place_file(&format!("{id}.json"), body.as_bytes());
    }

    /// Places any file in `questions/` atomically: written in `tmp/`, then renamed.
    pub fn place_file(&self, name: &str, bytes: &[u8]) {
        let tmp = self.spool().join("tmp").join(format!("{name}.writing"));
        std::fs::create_dir_all(tmp.parent().unwrap()).unwrap();
        std::fs::create_dir_all(self.spool().join("questions")).unwrap();
        std::fs::write(&tmp, bytes).unwrap();
        std::fs::rename(&tmp, self.spool().join("questions").join(name)).unwrap();
    }

    pub fn outcome_path(&self, id: &str) -> PathBuf {
        self.spool().join("answers").join(format!("{id}.json"))
    }

    pub fn outcome(&self, id: &str) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.outcome_path(id)).unwrap()).unwrap()
    }

    /// Waits until the outcome file exists.
    pub fn wait_outcome(&self, id: &str) -> serde_json::Value {
        let path = self.outcome_path(id);
        eventually(&format!("{} to appear", path.display()), || path.exists());
        self.outcome(id)
    }
}

/// `answered_by` of a person's answer given by these tests: `operator:<the OS account the
/// tests run as>`, whatever $USER says.
pub fn operator() -> String {
    inbox_engine::operator::answered_by(&inbox_engine::operator::account())
}

pub fn code(output: &Output) -> i32 {
    output.status.code().expect("exited normally")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
