//! Child processes that are always stopped, and processes that are not our children (forked
//! daemons, grandchildren) named by PID and start time so a reused PID is left alone.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Polls `check` for up to 20 s (generous: CI machines are shared and slow).
pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out waiting for {what}");
}

/// A child process that is stopped (SIGTERM, then SIGKILL) when dropped, and whose stdout
/// lines can be awaited.
pub struct Running {
    pub child: Child,
    lines: Option<Receiver<String>>,
    pub seen: Vec<String>,
}

impl Running {
    pub fn spawn(cmd: Command) -> Running {
        Running::spawn_with_stderr(cmd, Stdio::null())
    }

    /// Like [`Running::spawn`], sending standard error to `stderr` (a log file to read).
    pub fn spawn_with_stderr(mut cmd: Command, stderr: impl Into<Stdio>) -> Running {
        let mut child = cmd.stdout(Stdio::piped()).stderr(stderr).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines: Some(rx),
            seen: Vec::new(),
        }
    }

    /// Like [`Running::spawn`], for a process whose output is not read.
    pub fn spawn_quiet(mut cmd: Command) -> Running {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Running {
            child,
            lines: None,
            seen: Vec::new(),
        }
    }

    /// Takes charge of a child started elsewhere, so that it is stopped when dropped.
    pub fn adopt(child: Child) -> Running {
        Running {
            child,
            lines: None,
            seen: Vec::new(),
        }
    }

    /// Waits for a stdout line containing `needle`; returns it.
    pub fn wait_line(&mut self, needle: &str) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        let lines = self.lines.as_ref().expect("output is read");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    panic!("no line with {needle:?}; saw:\n{}", self.seen.join("\n"))
                }
            }
        }
    }

    /// Stops the process politely and waits for it.
    pub fn stop(&mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// A process that is not our child (a forked daemon, a grandchild), named by its PID and
/// its start time, so that a PID the kernel has since given to someone else is left alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: u32,
    start: u64,
}

impl ProcessId {
    pub fn of(pid: u32) -> Option<ProcessId> {
        let (_, start, state) = stat(pid)?;
        (state != 'Z').then_some(ProcessId { pid, start })
    }

    /// Still running (not gone, not a zombie), and still the same process.
    pub fn alive(&self) -> bool {
        matches!(stat(self.pid), Some((_, start, state)) if start == self.start && state != 'Z')
    }

    /// SIGTERM, then SIGKILL after `grace`; returns once it is gone.
    pub fn terminate(&self, grace: Duration) {
        if !self.alive() {
            return;
        }
        signal(self.pid, "TERM");
        let deadline = Instant::now() + grace;
        while self.alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if self.alive() {
            signal(self.pid, "KILL");
            let deadline = Instant::now() + Duration::from_secs(5);
            while self.alive() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// Stops a process that is not our child by its PID (see [`ProcessId::terminate`]).
pub fn terminate_pid(pid: u32, grace: Duration) {
    if let Some(process) = ProcessId::of(pid) {
        process.terminate(grace);
    }
}

fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// (parent pid, start time, state) from /proc/PID/stat.
fn stat(pid: u32) -> Option<(u32, u64, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces or parentheses.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let parent = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((parent, start, state))
}

/// Every living descendant of `pid` (children, their children, ...), parents first.
pub fn descendants(pid: u32) -> Vec<ProcessId> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some((parent, _, _)) = stat(child) {
                parents.push((child, parent));
            }
        }
    }
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(child, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if let Some(process) = ProcessId::of(child) {
                if !found.contains(&process) {
                    found.push(process);
                    frontier.push(child);
                }
            }
        }
    }
    found
}

/// The process tree under one root, as seen so far: kept so that whatever outlives the root
/// (WebKit's helpers, an app whose driver was stopped) can still be stopped by PID.
#[derive(Debug, Default)]
pub struct Tree {
    seen: Vec<ProcessId>,
}

impl Tree {
    /// Adds the living descendants of `root` to those seen before; returns them.
    pub fn remember(&mut self, root: u32) -> Vec<ProcessId> {
        let now = descendants(root);
        for process in &now {
            if !self.seen.contains(process) {
                self.seen.push(*process);
            }
        }
        now
    }

    /// Stops every process seen that is still running (see [`ProcessId::terminate`]).
    pub fn terminate(&mut self, grace: Duration) {
        for process in self.seen.drain(..) {
            process.terminate(grace);
        }
    }
}
