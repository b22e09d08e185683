//! A private desktop session for one test or benchmark run: an X display (Xvfb), a session
//! bus, optionally a real notification daemon (dunst, with a configuration of its own) and a
//! bus monitor that logs every notification call and signal. Everything is started here and
//! stopped by PID, in reverse order, when the session is dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::process::{eventually, terminate_pid, Running};
use crate::set_mode;

pub struct Session {
    /// `:N`, chosen by Xvfb itself (`-displayfd`), so parallel tests never clash.
    pub display: String,
    pub bus_address: String,
    bus_pid: u32,
    /// Where this session keeps its files: the bus log, dunst's configuration.
    pub dir: PathBuf,
    monitor_log: PathBuf,
    // Stopped in reverse order of starting, by `Drop`.
    dunst: Option<Running>,
    monitor: Option<Running>,
    xvfb: Option<Running>,
}

/// One `Notify` call seen on the bus.
#[derive(Debug, Clone)]
pub struct NotifyCall {
    pub app_name: String,
    pub summary: String,
    pub body: String,
    /// (key, label) pairs, in the order given.
    pub actions: Vec<(String, String)>,
    /// When dbus-monitor saw the call: its `time=` stamp, seconds since the Unix epoch
    /// (wall clock, microsecond resolution), for latencies measured from outside.
    pub seen_at: Option<f64>,
    /// The call as dbus-monitor printed it.
    pub raw: String,
}

impl NotifyCall {
    pub fn action_keys(&self) -> Vec<&str> {
        self.actions.iter().map(|(key, _)| key.as_str()).collect()
    }
}

impl Session {
    /// Starts Xvfb, a bus, the monitor and (with `with_daemon`) dunst. Files go under `dir`.
    pub fn start(dir: &Path, with_daemon: bool) -> Session {
        let dir = dir.to_owned();
        std::fs::create_dir_all(&dir).unwrap();

        // `-displayfd 1`: Xvfb picks a free display and prints its number once it accepts
        // connections, so there is neither a race for a number nor a wait for a lock file.
        let mut xvfb = Running::spawn({
            let mut cmd = Command::new("Xvfb");
            cmd.args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ]);
            cmd
        });
        let number = xvfb.wait_line("");
        let display = format!(":{}", number.trim());

        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--fork", "--print-address=1", "--print-pid=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon is installed");
        let mut lines = BufReader::new(bus.stdout.take().unwrap()).lines();
        let bus_address = lines.next().unwrap().unwrap();
        let bus_pid: u32 = lines.next().unwrap().unwrap().trim().parse().unwrap();
        bus.wait().unwrap();

        let mut session = Session {
            display,
            bus_address,
            bus_pid,
            monitor_log: dir.join("bus.log"),
            dir,
            dunst: None,
            monitor: None,
            xvfb: Some(xvfb),
        };

        let log = std::fs::File::create(&session.monitor_log).unwrap();
        let mut monitor = session.command("dbus-monitor");
        monitor.args(["--session", "interface='org.freedesktop.Notifications'"]);
        let monitor = monitor.stdout(log).stderr(Stdio::null()).spawn().unwrap();
        session.monitor = Some(Running::adopt(monitor));

        if with_daemon {
            session.start_dunst();
        }
        session
    }

    /// A command that runs inside this session: its display and its bus.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.apply(&mut cmd);
        cmd
    }

    /// Points `cmd` at this session's display and bus.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus_address)
            .env_remove("WAYLAND_DISPLAY")
            // No accessibility bus: GTK would start one more helper per test.
            .env("NO_AT_BRIDGE", "1")
            .env("GTK_A11Y", "none");
    }

    /// dunst with a configuration of its own: bubbles stay until acted on, and its context
    /// menu ("dmenu") is a script that picks the action named in `dmenu-choice`.
    fn start_dunst(&mut self) {
        let config = self.dir.join("dunstrc");
        let script = self.dir.join("dmenu.sh");
        std::fs::write(
            &script,
            format!(
                r##"#!/bin/sh
# Stands in for dmenu in dunst's context menu: prints the line of the wanted action.
# dunst lists one line per action: "#<label> (<summary>) [<notification id>,<action key>]".
dir='{dir}'
input=$(cat)
printf '%s\n--\n' "$input" >> "$dir/dmenu-input.log"
key=$(sed -n 1p "$dir/dmenu-choice")
summary=$(sed -n 2p "$dir/dmenu-choice")
printf '%s\n' "$input" | grep -F -- "($summary)" | grep -F -m1 -- ",$key]"
"##,
                dir = self.dir.display()
            ),
        )
        .unwrap();
        set_mode(&script, 0o755);
        std::fs::write(
            &config,
            format!(
                "[global]\n\
                 \x20   dmenu = {script}\n\
                 \x20   browser = /bin/true\n\
                 \x20   notification_limit = 0\n\
                 \x20   idle_threshold = 0\n\
                 \x20   show_indicators = no\n\
                 \x20   font = DejaVu Sans 9\n\
                 [urgency_low]\n\
                 \x20   timeout = 0\n\
                 [urgency_normal]\n\
                 \x20   timeout = 0\n\
                 [urgency_critical]\n\
                 \x20   timeout = 0\n",
                script = script.display()
            ),
        )
        .unwrap();
        let mut dunst = self.command("dunst");
        dunst
            .arg("-config")
            .arg(&config)
            .env("XDG_CONFIG_HOME", self.dir.join("dunst-config"));
        self.dunst = Some(Running::spawn_quiet(dunst));
        // Ready when it owns the notification name on our bus.
        eventually("dunst to own org.freedesktop.Notifications", || {
            self.command("dbus-send")
                .args([
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.Notifications",
                ])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).contains("boolean true"))
                .unwrap_or(false)
        });
    }

    /// Everything dbus-monitor has logged so far.
    pub fn bus_log(&self) -> String {
        std::fs::read_to_string(&self.monitor_log).unwrap_or_default()
    }

    /// Every `Notify` call seen so far, in order.
    pub fn notify_calls(&self) -> Vec<NotifyCall> {
        messages(&self.bus_log())
            .into_iter()
            .filter(|m| m.starts_with("method call") && m.contains("member=Notify"))
            .map(|m| parse_notify(&m))
            .collect()
    }

    /// The action keys of every `ActionInvoked` signal seen so far, in order.
    pub fn actions_invoked(&self) -> Vec<String> {
        messages(&self.bus_log())
            .into_iter()
            .filter(|m| m.starts_with("signal") && m.contains("member=ActionInvoked"))
            .filter_map(|m| top_level_strings(&m).into_iter().next())
            .collect()
    }

    /// The bubble ids of every `CloseNotification` call seen so far, in order.
    pub fn close_calls(&self) -> Vec<u32> {
        messages(&self.bus_log())
            .into_iter()
            .filter(|m| m.starts_with("method call") && m.contains("member=CloseNotification"))
            .filter_map(|m| {
                m.lines()
                    .find_map(|line| line.trim().strip_prefix("uint32 "))
                    .and_then(|id| id.trim().parse().ok())
            })
            .collect()
    }

    /// Waits for a `Notify` call whose summary is `summary`; returns it.
    pub fn wait_notify(&self, summary: &str) -> NotifyCall {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let calls = self.notify_calls();
            if let Some(call) = calls.iter().find(|c| c.summary == summary) {
                return call.clone();
            }
            if Instant::now() > deadline {
                panic!(
                    "no notification with summary {summary:?}; seen: {:?}",
                    calls.iter().map(|c| &c.summary).collect::<Vec<_>>()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Presses the button `key` on the notification whose summary is `summary`, the way a
    /// person does through dunst's context menu; waits until dunst has sent the
    /// `ActionInvoked` signal. (A bubble only just sent may not be on screen yet, so the menu
    /// is opened again until it offers the button.)
    pub fn press_action(&self, summary: &str, key: &str) {
        assert!(
            self.dunst.is_some(),
            "this session has no notification daemon"
        );
        let invoked = || self.actions_invoked().iter().filter(|k| *k == key).count();
        let before = invoked();
        std::fs::write(self.dir.join("dmenu-choice"), format!("{key}\n{summary}\n")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.command("dunstctl").arg("context").output().unwrap();
            assert!(
                out.status.success(),
                "dunstctl context failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let retry = Instant::now() + Duration::from_secs(2);
            while Instant::now() < retry {
                if invoked() > before {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if Instant::now() > deadline {
                let menu =
                    std::fs::read_to_string(self.dir.join("dmenu-input.log")).unwrap_or_default();
                panic!("dunst did not invoke {key:?} on {summary:?}; its menus offered:\n{menu}");
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(mut dunst) = self.dunst.take() {
            dunst.stop();
        }
        if let Some(mut monitor) = self.monitor.take() {
            monitor.stop();
        }
        // The forked bus is not our child: stop it by its PID and wait until it is gone.
        terminate_pid(self.bus_pid, Duration::from_secs(5));
        if let Some(mut xvfb) = self.xvfb.take() {
            xvfb.stop();
        }
    }
}

/// Splits dbus-monitor's output into messages: each starts with an unindented header line
/// ("method call", "signal", ...). A string argument of several lines (a bubble's body) is
/// printed raw, so its later lines are unindented too, and belong to the message.
fn messages(log: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = ["method call ", "method return ", "signal ", "error "];
    let mut out: Vec<String> = Vec::new();
    for line in log.lines() {
        if HEADERS.iter().any(|header| line.starts_with(header)) || out.is_empty() {
            out.push(String::new());
        }
        if let Some(current) = out.last_mut() {
            current.push_str(line);
            current.push('\n');
        }
    }
    out
}

/// The string arguments of a message at the top level (not inside arrays or dicts); one of
/// several lines runs on to the line that ends with the closing quote.
fn top_level_strings(message: &str) -> Vec<String> {
    let mut strings = Vec::new();
    let mut open: Option<String> = None;
    for line in message.lines() {
        let text = match open.take() {
            Some(mut so_far) => {
                so_far.push('\n');
                so_far.push_str(line);
                so_far
            }
            None => match line.strip_prefix("   string \"") {
                Some(rest) => rest.to_owned(),
                None => continue,
            },
        };
        match text.strip_suffix('"') {
            Some(whole) => strings.push(whole.to_owned()),
            None => open = Some(text),
        }
    }
    strings
}

/// Notify(app_name, replaces_id, icon, summary, body, actions, hints, timeout).
fn parse_notify(message: &str) -> NotifyCall {
    let strings = top_level_strings(message);
    let field = |i: usize| strings.get(i).cloned().unwrap_or_default();
    // The first top-level array is the actions: key, label, key, label...
    let mut flat = Vec::new();
    let mut in_actions = false;
    for line in message.lines() {
        if !in_actions {
            if line == "   array [" {
                in_actions = true;
            }
            continue;
        }
        if line.starts_with("   ]") {
            break;
        }
        if let Some(value) = line
            .strip_prefix("      string \"")
            .and_then(|rest| rest.strip_suffix('"'))
        {
            flat.push(value.to_owned());
        }
    }
    let actions = flat
        .chunks(2)
        .map(|pair| (pair[0].clone(), pair.get(1).cloned().unwrap_or_default()))
        .collect();
    let seen_at = message
        .lines()
        .next()
        .and_then(|first| first.split(' ').find_map(|word| word.strip_prefix("time=")))
        .and_then(|time| time.parse().ok());
    NotifyCall {
        seen_at,
        app_name: field(0),
        summary: field(2),
        body: field(3),
        actions,
        raw: message.to_owned(),
    }
}
