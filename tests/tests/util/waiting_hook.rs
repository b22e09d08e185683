//! `answer-inbox hook claude-code` run against the desktop's spool, as Claude Code runs it,
//! for the tests that answer agents' prompts in the real window.

use serde_json::Value;

use crate::util::desktop::{self, Desktop, STEP};

/// `answer-inbox hook claude-code` while it waits for the operator: its standard output is
/// read once it ends, and it is killed (by its own PID) if the test fails before that.
pub struct WaitingHook(std::process::Child);

impl WaitingHook {
    /// Starts the real hook on the desktop's spool with a recorded Claude Code payload
    /// (tests/data/claude-code/`fixture`) on its standard input, as Claude Code does.
    pub fn start(d: &Desktop, fixture: &str) -> WaitingHook {
        use std::io::Write;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/claude-code")
            .join(fixture);
        let payload = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut cmd = std::process::Command::new(crate::util::binary());
        cmd.args(["hook", "claude-code", "--timeout", "120s"]);
        d.apply_app_env(&mut cmd);
        // Session allowances go to the test's own directory, never the account's.
        cmd.env("XDG_STATE_HOME", d.root().join("xdg-state"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("start answer-inbox hook claude-code");
        child.stdin.take().unwrap().write_all(&payload).unwrap();
        WaitingHook(child)
    }

    /// Stops the hook as its host does when the operator answers in the terminal or the
    /// session ends (SIGTERM, to its own PID), and returns its exit code and what it printed.
    pub fn terminate(mut self) -> (Option<i32>, String) {
        // The child is not reaped yet, so its PID is still its own.
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "SIGTERM to the hook");
        let status = self.0.wait().unwrap();
        let mut out = String::new();
        std::io::Read::read_to_string(&mut self.0.stdout.take().unwrap(), &mut out).unwrap();
        (status.code(), out)
    }

    /// Waits for the hook to end, checks it ended well, and returns the decision it printed.
    pub async fn decision(mut self) -> Value {
        let status = desktop::eventually("the hook to print its decision", STEP, || {
            // Asked now, not in the future: the child is borrowed only for the call.
            let ended = self.0.try_wait().unwrap();
            async move { ended }
        })
        .await;
        let mut out = String::new();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut self.0.stdout.take().unwrap(), &mut out).unwrap();
        std::io::Read::read_to_string(&mut self.0.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(0), "the hook failed: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?} ({err})"))
    }
}

impl Drop for WaitingHook {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// The Pending row the hook placed: the one id listed that is not `answered`.
pub async fn hook_request_id(d: &Desktop, answered: &[String]) -> String {
    desktop::eventually("the hook's request in the Pending list", STEP, || async {
        d.row_ids()
            .await
            .into_iter()
            .find(|id| !answered.contains(id))
    })
    .await
}
