//! Issue 24, "as fast as the agent's own prompt": the keys an operator presses in the real
//! window, from the Pending list with the request selected to its written outcome, and the
//! time from the last key to the outcome file, for an agent's permission request placed by
//! the real `answer-inbox hook claude-code` (Allow once), a single confirm, a single choice of
//! three and a batch of five questions.
//!
//! The app is launched directly (no WebDriver) on an empty inbox in the private session, its
//! window given the keyboard focus once with `xdotool windowfocus` (there is no window
//! manager), and every key is a real X key event: `xdotool key --delay 0 <key>`, through
//! XTEST, into the focused window, as a keyboard's would be. Nothing is read from the page.
//! `xdotool` runs under `chrt -f` (real-time FIFO scheduling) where the machine allows it:
//! on 2 cores the app, woken by the key, would otherwise often preempt `xdotool` before it
//! exits, and its exit would be stamped late. That changes nothing in the app's path (a
//! keyboard's events come from the kernel, not from a process of the operator's).
//!
//! Each repetition places one request (renamed into `questions/` as an asker does, or by the
//! hook, started with a recorded Claude Code payload on its standard input as Claude Code
//! starts it). It is the only pending request, so the list selects it. The benchmark waits
//! for the window's title to count it (the app sets the title when its engine has the
//! request; the row follows within milliseconds), then a fixed [`READ`] (1.0 s), which is
//! past the reading pane's arming (keys act 700 ms after the request is shown, and the pane
//! shows it 40 ms after the selection rests plus its fetch). A key pressed before arming is
//! ignored, not queued: then no outcome would come, and the benchmark stops with an error
//! rather than press again, so every repetition counted took exactly the keys listed.
//!
//! The clock starts when the `xdotool` that pressed the last key has returned (its events
//! are with the X server by then, so this is a lower bound: the key went out a little
//! earlier) and stops when inotify reports `answers/<id>.json` to a watcher in this process.
//! The same from that `xdotool`'s spawn (an upper bound: it includes its start-up) is
//! reported beside; the time of the key is between the two.
//! For the hook, a second clock stops when its decision appears on its standard output.
//! Every outcome is checked: answered by the operator in the window, with exactly the
//! answers the keys chose (and the hook's decision is Allow).
//!
//! A batch opens with Enter, then takes a key per question (a key that answers a yes/no or a
//! single choice moves on to the next question, and after the last to the review step) and
//! Ctrl+Enter to submit. Its keys are paced like a brisk operator's
//! ([`OPENED`] after Enter, for the form to load and be read, [`PACE`] between the others),
//! and only the time from its last key is measured. Esc then goes back to the list (not
//! counted: it is after the outcome).

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use inbox_engine::{Area, Spool};
use inbox_harness::desktop::AppDirs;
use serde_json::{json, Value};

use super::{app_title, p50_p95_max, DesktopBench, Inbox, Launched, USER};
use crate::fixtures::Staged;
use crate::harness::{BareWatcher, Scratch};
use crate::stats::{ms, table, verdict};

/// Measured repetitions per row.
pub const DEFAULT_N: usize = 20;
/// Repetitions before the measured ones (first fetches, first bubble, JIT).
const WARMUP: usize = 2;
/// After the request's row appears, before the first key: past the 700 ms arming.
const READ: Duration = Duration::from_millis(1000);
/// After Enter opens a batch: its form loads and the operator reads the first question.
const OPENED: Duration = Duration::from_millis(1000);
/// Between a batch's other keys.
const PACE: Duration = Duration::from_millis(250);
/// The control's early key: after the title counted the request, well before arming.
const EARLY: Duration = Duration::from_millis(300);
/// After an outcome and the list emptied, before the next request.
const IDLE: Duration = Duration::from_millis(300);
/// How long the window's title may take to show a change.
const TITLE_PATIENCE: Duration = Duration::from_secs(20);
/// How long the hook may take to print its decision once its outcome is written.
const HOOK_PATIENCE: Duration = Duration::from_secs(20);
/// How `xdotool` is run where the machine allows it: `chrt` with real-time FIFO scheduling.
const REALTIME: [&str; 2] = ["-f", "50"];
/// The recorded PermissionRequest the hook is given (its Bash command, with a suggested
/// "don't ask again" rule saved to local settings: the decision offers 1 Allow once, 2 Deny,
/// then the rule for this session and the rule saved).
const HOOK_PAYLOAD: &str = "permission-request-bash.json";

/// One row of the table.
struct Case {
    label: &'static str,
    /// For request ids.
    slug: &'static str,
    /// Keys for the agent's own prompt (the baseline); `None` where it has no counterpart.
    agent: Option<usize>,
    /// The target, in keys.
    target: usize,
    /// How the target is stated.
    target_text: &'static str,
    /// Each key (an xdotool key name) and the pause before it (the first one's is [`READ`]).
    keys: Vec<(&'static str, Duration)>,
    /// The request's body for an id (`None`: the hook places it).
    body: Option<fn(&str) -> Vec<u8>>,
    /// The answers the keys choose, as the outcome must hold them.
    answers: Value,
}

fn cases() -> Vec<Case> {
    let batch_keys = vec![
        ("Return", Duration::ZERO),
        ("y", OPENED),
        ("2", PACE),
        ("n", PACE),
        ("3", PACE),
        ("y", PACE),
        ("ctrl+Return", PACE),
    ];
    vec![
        Case {
            label: "Claude Code permission (hook), Allow once",
            slug: "hook",
            agent: Some(1),
            target: 1,
            target_text: "1 key",
            keys: vec![("1", Duration::ZERO)],
            body: None,
            answers: json!({"decision": inbox_protocol::decision::ALLOW_ONCE}),
        },
        Case {
            label: "single confirm",
            slug: "confirm",
            agent: Some(1),
            target: 1,
            target_text: "1 key",
            keys: vec![("y", Duration::ZERO)],
            body: Some(confirm_request),
            answers: json!({"go": true}),
        },
        Case {
            label: "single choice of three",
            slug: "choice",
            agent: Some(1),
            target: 1,
            target_text: "1 key",
            keys: vec![("2", Duration::ZERO)],
            body: Some(choice_request),
            answers: json!({"target": "production"}),
        },
        Case {
            label: "batch of five",
            slug: "batch",
            agent: None,
            target: 2 * 5 + 1,
            target_text: "≤ 2 keys per question + 1 = 11",
            keys: batch_keys,
            body: Some(batch_request),
            answers: json!({
                "tests": true,
                "channel": "beta",
                "notes": false,
                "window": "tomorrow",
                "announce": true,
            }),
        },
    ]
}

fn confirm_request(id: &str) -> Vec<u8> {
    envelope(
        id,
        "Deploy to staging",
        json!([{"id": "go", "question": "Deploy build 4217 to staging now?", "type": "confirm"}]),
    )
}

fn choice_request(id: &str) -> Vec<u8> {
    envelope(
        id,
        "Pick the environment",
        json!([{"id": "target", "question": "Which environment should build 4217 go to?",
                "type": "choice", "options": ["staging", "production", "canary"]}]),
    )
}

fn batch_request(id: &str) -> Vec<u8> {
    envelope(
        id,
        "Release checklist",
        json!([
            {"id": "tests", "question": "Did the release tests pass?", "type": "confirm"},
            {"id": "channel", "question": "Which channel?", "type": "choice",
             "options": ["stable", "beta", "nightly"]},
            {"id": "notes", "question": "Publish the release notes now?", "type": "confirm"},
            {"id": "window", "question": "When should it go out?", "type": "choice",
             "options": ["now", "tonight", "tomorrow"]},
            {"id": "announce", "question": "Announce it in the team channel?", "type": "confirm"},
        ]),
    )
}

fn envelope(id: &str, title: &str, questions: Value) -> Vec<u8> {
    let request = json!({
        "inbox": 1,
        "id": id,
        "title": format!("{title} ({id})"),
        "source": {"app": "bench", "run": "keys", "tool": "deploy"},
        "questions": questions,
    });
    serde_json::to_vec_pretty(&request).expect("a JSON value serialises")
}

/// One measured repetition.
struct Sample {
    /// The last key's `xdotool` was spawned...
    spawned: Instant,
    /// ...and returned.
    returned: Instant,
    /// The outcome file appeared (inotify).
    outcome: Instant,
    /// The hook's decision appeared on its standard output.
    hook: Option<Instant>,
}

pub fn run(bench: &DesktopBench, n: usize) -> anyhow::Result<()> {
    println!(
        "## Issue 24: keys per answer in the window, and last key → outcome ({n} repetitions \
         per row, real X key events)\n"
    );
    let cases = cases();
    for case in &cases {
        if let Some(body) = case.body {
            inbox_protocol::parse_request(&body("keys-check"), Some("keys-check"))
                .map_err(|errors| anyhow::anyhow!("the {} fixture: {errors:?}", case.label))?;
        }
    }
    let hook_binary = bench
        .app
        .with_file_name("answer-inbox")
        .canonicalize()
        .context("answer-inbox is missing next to this binary: build it with the same profile")?;
    let payload_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/claude-code")
        .join(HOOK_PAYLOAD);
    let payload = std::fs::read(&payload_path)
        .with_context(|| format!("the recorded payload {}", payload_path.display()))?;

    let inbox = Inbox::with_pending(0)?;
    let spool = Spool::open(&inbox.spool)?;
    let mut launched = bench.launch(&bench.app, &inbox, "desktop-keys")?;
    bench.wait_title(&mut launched, &app_title(0))?;
    let window = focus_window(bench)?;
    eprintln!("desktop keys: window {window} focused");
    // Whatever the launch still does (the first list, the focus's re-arming) settles first.
    std::thread::sleep(Duration::from_secs(2));
    let realtime = Command::new("chrt")
        .args(REALTIME)
        .arg("true")
        .status()
        .is_ok_and(|status| status.success());
    let watcher = BareWatcher::watch(&[spool.dir(Area::Answers)])?;
    let hooks = Scratch::new("desktop-keys-hook")?;
    let mut rig = Rig {
        bench,
        launched: &mut launched,
        spool: &spool,
        inbox: &inbox,
        watcher: &watcher,
        hook_binary: &hook_binary,
        payload: &payload,
        hooks: &hooks,
        realtime,
    };

    eprintln!("desktop keys: the control (an early key is ignored)");
    rig.early_key_ignored(&cases[1])
        .context("the control: a key before arming")?;
    let mut results = Vec::new();
    for case in &cases {
        let mut samples = Vec::new();
        for i in 0..WARMUP + n {
            eprintln!("desktop keys: {} {}/{}", case.slug, i + 1, WARMUP + n);
            let sample = rig
                .once(case, i)
                .with_context(|| format!("{}, repetition {}", case.label, i + 1))?;
            if i >= WARMUP {
                samples.push(sample);
            }
        }
        results.push(samples);
    }

    report(&cases, &results, n, realtime);
    println!(
        "Control, before the measured rows: `{}` pressed {} ms after the title counted a \
         single confirm was ignored (no outcome {} s later), and the same key pressed then \
         answered it: the keys reach the reading pane, and its arming is in force.\n",
        cases[1].keys[0].0,
        EARLY.as_millis(),
        (READ + READ / 2).as_secs_f64(),
    );
    Ok(())
}

/// Everything one repetition uses.
struct Rig<'a> {
    bench: &'a DesktopBench,
    launched: &'a mut Launched,
    spool: &'a Spool,
    inbox: &'a Inbox,
    watcher: &'a BareWatcher,
    hook_binary: &'a Path,
    payload: &'a [u8],
    hooks: &'a Scratch,
    /// `xdotool` runs under [`REALTIME`].
    realtime: bool,
}

impl Rig<'_> {
    fn once(&mut self, case: &Case, i: usize) -> anyhow::Result<Sample> {
        let (mut hook, id) = self.place(case, &format!("{i:03}"))?;
        std::thread::sleep(READ);

        let mut last = None;
        for (key, pause) in &case.keys {
            std::thread::sleep(*pause);
            last = Some(self.press(key)?);
        }
        let (spawned, returned) = last.context("a case without keys")?;
        let outcome = self.outcome(&id, &case.answers)?;
        let hook = match hook.as_mut() {
            Some(hook) => Some(hook.decision()?),
            None => None,
        };
        self.back_to_empty_list(case)?;
        Ok(Sample {
            spawned,
            returned,
            outcome,
            hook,
        })
    }

    /// The control: `case`'s one key pressed [`EARLY`] after the title counted the request
    /// (before arming) must be ignored, and the same key, pressed once armed, answer it. So
    /// the keys reach the reading pane and its arming is in force, and [`READ`] is needed.
    fn early_key_ignored(&mut self, case: &Case) -> anyhow::Result<()> {
        let [(key, _)] = case.keys.as_slice() else {
            anyhow::bail!("the control takes a one-key case");
        };
        let (_, id) = self.place(case, "early")?;
        std::thread::sleep(EARLY);
        self.press(key)?;
        std::thread::sleep(READ + READ / 2);
        let path = self.spool.path(Area::Answers, &id);
        anyhow::ensure!(
            !path.exists(),
            "`{key}` pressed {EARLY:?} after the title counted the request answered it: \
             arming is not in force, or the title came late"
        );
        self.press(key)?;
        self.outcome(&id, &case.answers)?;
        self.back_to_empty_list(case)
    }

    /// Places `case`'s request (or starts the hook that places it), waits until the
    /// window's title counts it, and returns the hook (if any) and the request's id.
    fn place(&mut self, case: &Case, suffix: &str) -> anyhow::Result<(Option<Hook>, String)> {
        self.watcher.drain();
        let before = self.pending_ids()?;
        let hook = match case.body {
            Some(body) => {
                let id = format!("keys-{}-{suffix}", case.slug);
                let staged = Staged::write(
                    &self.spool.tmp_dir(),
                    self.spool.path(Area::Questions, &id),
                    &body(&id),
                )?;
                staged.place()?;
                None
            }
            None => Some(self.start_hook(suffix)?),
        };
        self.wait_title(&app_title(1))?;
        Ok((hook, self.new_request(&before)?))
    }

    /// Waits for `id`'s outcome (inotify) and checks it holds `answers`; when it appeared.
    fn outcome(&self, id: &str, answers: &Value) -> anyhow::Result<Instant> {
        let path = self.spool.path(Area::Answers, id);
        let at = self.watcher.wait_for(&path).with_context(|| {
            format!(
                "no outcome for {id}: was a key ignored? The app's log:\n{}",
                self.launched.log_tail()
            )
        })?;
        check_outcome(&path, answers)?;
        Ok(at)
    }

    /// After an outcome: the window back on an empty Pending list, and a pause.
    fn back_to_empty_list(&mut self, case: &Case) -> anyhow::Result<()> {
        if case.keys.len() > 1 {
            // The batch's view stays on its outcome: back to the list for the next request.
            std::thread::sleep(PACE);
            self.press("Escape")?;
        }
        self.wait_title(&app_title(0))?;
        std::thread::sleep(IDLE);
        Ok(())
    }

    /// One real key press into the focused window; when `xdotool` was spawned and returned.
    fn press(&self, key: &str) -> anyhow::Result<(Instant, Instant)> {
        let mut cmd = if self.realtime {
            let mut cmd = self.bench.session.command("chrt");
            cmd.args(REALTIME).arg("xdotool");
            cmd
        } else {
            self.bench.session.command("xdotool")
        };
        cmd.args(["key", "--delay", "0", key]);
        let spawned = Instant::now();
        let status = cmd.stdout(Stdio::null()).status().context("run xdotool")?;
        let returned = Instant::now();
        anyhow::ensure!(status.success(), "xdotool key {key}: {status}");
        Ok((spawned, returned))
    }

    fn wait_title(&mut self, title: &str) -> anyhow::Result<()> {
        let started = Instant::now();
        while !self.bench.window_titled(title) {
            self.launched.check_running()?;
            anyhow::ensure!(
                started.elapsed() < TITLE_PATIENCE,
                "the window's title is not {title:?} within {TITLE_PATIENCE:?}; the app's \
                 log:\n{}",
                self.launched.log_tail()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// The ids of the requests in `questions/` with no outcome yet.
    fn pending_ids(&self) -> anyhow::Result<Vec<String>> {
        let dir = self.spool.dir(Area::Questions);
        let mut ids = Vec::new();
        for entry in std::fs::read_dir(&dir).with_context(|| dir.display().to_string())? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(".json") {
                if !self.spool.path(Area::Answers, id).exists() {
                    ids.push(id.to_owned());
                }
            }
        }
        Ok(ids)
    }

    /// The one request placed since `before` was listed.
    fn new_request(&self, before: &[String]) -> anyhow::Result<String> {
        let new: Vec<String> = self
            .pending_ids()?
            .into_iter()
            .filter(|id| !before.contains(id))
            .collect();
        match new.as_slice() {
            [id] => Ok(id.clone()),
            _ => anyhow::bail!("expected one new request in questions/, found {new:?}"),
        }
    }

    /// `answer-inbox hook claude-code` on the app's spool, the recorded payload on its
    /// standard input, as Claude Code starts it (tests/tests/util/waiting_hook.rs does the
    /// same). Started from this thread, which lives on: the hook takes its parent's end
    /// (of the thread that started it) as the agent stopping.
    fn start_hook(&self, suffix: &str) -> anyhow::Result<Hook> {
        let root = self.hooks.path(&format!("hook-{suffix}"));
        let dirs = AppDirs::create(&root);
        let mut cmd = Command::new(self.hook_binary);
        cmd.args(["hook", "claude-code", "--timeout", "120s"]);
        self.bench.session.apply(&mut cmd);
        dirs.apply(&mut cmd, &self.inbox.spool, &self.inbox.db, USER);
        // Session allowances go to this repetition's own directory.
        cmd.env("XDG_STATE_HOME", root.join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().context("start answer-inbox hook claude-code")?;
        use std::io::Write;
        let mut stdin = child.stdin.take().context("the hook's stdin")?;
        stdin.write_all(self.payload)?;
        drop(stdin);
        let stdout = child.stdout.take().context("the hook's stdout")?;
        // Read on a thread of its own, stamped as the first bytes arrive.
        let (tx, printed) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            let mut stdout = stdout;
            let (mut first, mut text, mut chunk) = (None, Vec::new(), [0u8; 4096]);
            while let Ok(read @ 1..) = stdout.read(&mut chunk) {
                first.get_or_insert_with(Instant::now);
                text.extend_from_slice(&chunk[..read]);
            }
            let _ = tx.send((first, text));
        });
        Ok(Hook { child, printed })
    }
}

/// The hook while it waits; killed (by its PID) if the benchmark fails first.
struct Hook {
    child: Child,
    printed: crossbeam_channel::Receiver<(Option<Instant>, Vec<u8>)>,
}

impl Hook {
    /// When the hook printed its decision, once it has ended well and the decision is Allow.
    fn decision(&mut self) -> anyhow::Result<Instant> {
        let (first, text) = self
            .printed
            .recv_timeout(HOOK_PATIENCE)
            .context("the hook printed nothing and did not end")?;
        let status = self.child.wait()?;
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut err);
        }
        let text = String::from_utf8_lossy(&text);
        anyhow::ensure!(status.success(), "the hook failed ({status}): {err}");
        let printed: Value = serde_json::from_str(&text)
            .with_context(|| format!("the hook's output is not JSON: {text:?} ({err})"))?;
        anyhow::ensure!(
            printed["hookSpecificOutput"]["decision"] == json!({"behavior": "allow"}),
            "the hook did not allow the call: {printed}"
        );
        first.context("no output")
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The outcome was written by the operator in the window with exactly `answers`.
fn check_outcome(path: &Path, answers: &Value) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let outcome: Value = serde_json::from_str(&text)?;
    anyhow::ensure!(
        outcome["status"] == "answered"
            && outcome["surface"] == "window"
            && &outcome["answers"] == answers
            && outcome["answered_by"]
                .as_str()
                .is_some_and(|by| by.starts_with("operator:")),
        "the outcome is not the keys' answers ({answers}) from the window: {text}"
    );
    Ok(())
}

/// The app's window, given the keyboard focus (no window manager does it here). Focused
/// once: the page re-arms its keys whenever the window gains focus.
fn focus_window(bench: &DesktopBench) -> anyhow::Result<String> {
    let out = bench
        .session
        .command("xdotool")
        .args(["search", "--onlyvisible", "--name", "^Answer Inbox"])
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let windows: Vec<&str> = text.split_whitespace().collect();
    let [window] = windows.as_slice() else {
        anyhow::bail!("expected one visible Answer Inbox window, found {windows:?}");
    };
    let status = bench
        .session
        .command("xdotool")
        .args(["windowfocus", "--sync", window])
        .status()?;
    anyhow::ensure!(status.success(), "xdotool windowfocus {window}: {status}");
    Ok((*window).to_owned())
}

fn report(cases: &[Case], results: &[Vec<Sample>], n: usize, realtime: bool) {
    let mut headers = vec![String::new()];
    headers.extend(cases.iter().map(|case| case.label.to_owned()));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let cell = |f: &dyn Fn(&Case, &[Sample]) -> String| -> Vec<String> {
        cases
            .iter()
            .zip(results)
            .map(|(case, samples)| f(case, samples))
            .collect()
    };
    let row = |label: &str, cells: Vec<String>| {
        let mut row = vec![label.to_owned()];
        row.extend(cells);
        row
    };
    let p50 = |samples: &[Duration]| {
        let [p50, p95, max] = p50_p95_max(samples);
        format!("{} (p95 {}, max {})", ms(p50), ms(p95), ms(max))
    };
    // `to` of each sample after `from`, as "p50 (p95, max)"; n/a where no sample has it.
    let between = |from: fn(&Sample) -> Instant, to: fn(&Sample) -> Option<Instant>| {
        move |_: &Case, s: &[Sample]| {
            let times: Vec<Duration> = s
                .iter()
                .filter_map(|s| Some(to(s)?.saturating_duration_since(from(s))))
                .collect();
            if times.is_empty() {
                "n/a".to_owned()
            } else {
                p50(&times)
            }
        }
    };
    let returned = |s: &Sample| s.returned;
    let spawned = |s: &Sample| s.spawned;
    let outcome = |s: &Sample| Some(s.outcome);
    let hook = |s: &Sample| s.hook;
    let rows = vec![
        row(
            "the agent's own prompt (baseline): keys",
            cell(&|case, _| {
                case.agent
                    .map_or_else(|| "n/a".to_owned(), |keys| keys.to_string())
            }),
        ),
        row(
            "**the window: keys from the list to the outcome**",
            cell(&|case, _| format!("**{}**", case.keys.len())),
        ),
        row(
            "the keys",
            cell(&|case, _| {
                case.keys
                    .iter()
                    .map(|(key, _)| format!("`{key}`"))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
        ),
        row("target", cell(&|case, _| case.target_text.to_owned())),
        row(
            "keys verdict",
            cell(&|case, _| verdict(case.keys.len() <= case.target).to_owned()),
        ),
        row(
            &format!("**last key → outcome file**, p50 of {n} (from `xdotool`'s exit)"),
            cell(&between(returned, outcome)),
        ),
        row(
            "(upper bound) the same from `xdotool`'s spawn",
            cell(&between(spawned, outcome)),
        ),
        row(
            &format!("last key → the hook prints its decision, p50 of {n}"),
            cell(&between(returned, hook)),
        ),
        row(
            "(upper bound) the same from `xdotool`'s spawn",
            cell(&between(spawned, hook)),
        ),
        row(
            "(reference) the last key's `xdotool`, spawn → exit",
            cell(&between(spawned, |s| Some(s.returned))),
        ),
    ];
    table(&header_refs, &rows);
    println!(
        "Each repetition: the request is the only one pending and selected in the list; the \
         first key {} s after the window's title counted it (past the 700 ms arming); a \
         batch's keys {} ms apart, {} s after Enter. {WARMUP} repetitions per row before the \
         measured ones. Every outcome was checked: `answered` in the window by the operator, \
         with the answers the keys chose. `xdotool` ran {}.\n",
        READ.as_secs_f64(),
        PACE.as_millis(),
        OPENED.as_secs_f64(),
        if realtime {
            format!("under `chrt {}`", REALTIME.join(" "))
        } else {
            "with normal scheduling (`chrt -f` was refused here)".to_owned()
        },
    );
}
