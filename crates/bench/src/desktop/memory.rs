//! Resident memory of the desktop app with an empty inbox and with N pending requests, next
//! to the bare Tauri window (`inbox-bare-window`: one static page, the same Tauri features),
//! each with WebKit's accelerated compositing as the app decides it and the other way.
//!
//! Each is started directly in the private session, and its whole process tree is measured:
//! the app and WebKit's WebKitWebProcess and WebKitNetworkProcess. The figure is PSS
//! (`/proc/PID/smaps_rollup`): shared pages are divided among the processes that map them,
//! so a tree's sum does not count a library twice. Once the window is shown (for the app
//! with requests: once its title shows the pending count), the tree is left until its PSS
//! stops growing (within 1% over 3 s, at most 60 s), then read 5 times 1 s apart; the
//! median counts. The launches alternate over 3 rounds, and the round medians' median is
//! reported. WebKit processes outside the tree (another app's, a test's: other people use
//! this machine) share the libraries' pages and so lower the tree's PSS: before its readings
//! a launch waits up to 60 s for them to end, and the rounds read beside them are counted.
//!
//! **Compositing both ways.** The app turns WebKit's compositing off where there is no GPU
//! (`inbox_desk::rendering`), and says so in its log, which is quoted. It leaves a
//! `WEBKIT_DISABLE_COMPOSITING_MODE` it was started with alone, and WebKit reads `0` as
//! "compositing on", so the app is also launched with `=0`: compositing on whatever the
//! machine. The bare window decides nothing: it runs with WebKit's default and with `=1`.
//! Each ratio compares the app with the bare window in the same mode.

use std::time::{Duration, Instant};

use inbox_harness::process::descendants;

use super::{app_title, DesktopBench, Inbox, Launched};
use crate::stats::{table, thousands, verdict};

const ROUNDS: usize = 3;
const READINGS: usize = 5;
const STEADY_WINDOW: Duration = Duration::from_secs(3);
const STEADY_CAP: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(500);
/// How long a launch waits for other WebKit processes to end before its readings.
const ALONE_CAP: Duration = Duration::from_secs(60);
/// Issue 23's target for the app's tree with 10,000 pending, as shipped.
const TARGET_MIB: f64 = 300.0;
/// WebKit's switch, and what the app writes in its log about it.
const DISABLE_VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
const LOG_MARK: &str = "WebKit compositing";

/// Memory of one process tree at one moment, in KiB.
#[derive(Debug, Clone, Default)]
pub(super) struct TreeMemory {
    pub(super) pss: u64,
    rss: u64,
    /// The sum of each process's own peak RSS (`VmHWM`); the peaks need not coincide.
    hwm: u64,
    /// PSS by program name, largest first.
    by_name: Vec<(String, u64)>,
}

/// One launch's result.
struct Reading {
    memory: TreeMemory,
    /// From the launch until the window (title) was shown.
    shown_after: Duration,
    /// From the window being shown until PSS was steady; `None` if it never was (capped).
    steady_after: Option<Duration>,
    /// The app's log line about compositing, if it wrote one.
    compositing: Option<String>,
    /// The most WebKit processes outside the tree during the readings.
    strangers: usize,
}

/// One kind of launch.
struct Side<'a> {
    label: String,
    binary: &'a std::path::Path,
    inbox: &'a Inbox,
    title: String,
    env: &'static [(&'static str, &'static str)],
}

const ON: &[(&str, &str)] = &[(DISABLE_VAR, "0")];
const OFF: &[(&str, &str)] = &[(DISABLE_VAR, "1")];

pub fn run(bench: &DesktopBench, n: usize) -> anyhow::Result<()> {
    println!("## Desktop app: resident memory (PSS of the process tree)\n");
    let empty = Inbox::with_pending(0)?;
    let full = Inbox::with_pending(n)?;
    let pending = thousands(n as f64);
    let side = |label: String, binary, inbox, title, env| Side {
        label,
        binary,
        inbox,
        title,
        env,
    };
    let sides = [
        side(
            "bare Tauri window (`inbox-bare-window`), WebKit's default".into(),
            &bench.bare,
            &empty,
            "Bare window".into(),
            &[],
        ),
        side(
            format!("bare Tauri window, `{DISABLE_VAR}=1`"),
            &bench.bare,
            &empty,
            "Bare window".into(),
            OFF,
        ),
        side(
            "app, empty inbox, as shipped".into(),
            &bench.app,
            &empty,
            app_title(0),
            &[],
        ),
        side(
            format!("app, {pending} pending, as shipped"),
            &bench.app,
            &full,
            app_title(n),
            &[],
        ),
        side(
            format!("app, empty inbox, `{DISABLE_VAR}=0` (compositing on)"),
            &bench.app,
            &empty,
            app_title(0),
            ON,
        ),
        side(
            format!("app, {pending} pending, `{DISABLE_VAR}=0` (compositing on)"),
            &bench.app,
            &full,
            app_title(n),
            ON,
        ),
    ];
    let mut readings: Vec<Vec<Reading>> = (0..sides.len()).map(|_| Vec::new()).collect();
    for round in 1..=ROUNDS {
        for (i, side) in sides.iter().enumerate() {
            eprintln!("desktop memory: round {round}/{ROUNDS}: {}", side.label);
            let mut launched =
                bench.launch_with(side.binary, side.inbox, "desktop-memory", side.env)?;
            let shown_after = bench.wait_title(&mut launched, &side.title)?;
            let steady_after = wait_steady(&mut launched)?;
            wait_alone(launched.pid());
            let mut samples = Vec::with_capacity(READINGS);
            let mut strangers = 0;
            for _ in 0..READINGS {
                samples.push(tree_memory(launched.pid()));
                strangers = strangers.max(other_webkit_processes(launched.pid()));
                std::thread::sleep(Duration::from_secs(1));
            }
            samples.sort_by_key(|m| m.pss);
            let memory = samples[(samples.len() - 1) / 2].clone();
            eprintln!(
                "desktop memory: round {round}/{ROUNDS}: {}: PSS {} ({}); other WebKit \
                 processes: {strangers}",
                side.label,
                mib(memory.pss),
                by_process(&memory)
            );
            readings[i].push(Reading {
                memory,
                shown_after,
                steady_after,
                compositing: compositing_line(&launched),
                strangers,
            });
            drop(launched);
        }
    }
    println!("- load average at the end: {}\n", load_average());

    let mut medians = Vec::new();
    let mut rows = Vec::new();
    for (side, runs) in sides.iter().zip(&mut readings) {
        runs.sort_by_key(|r| r.memory.pss);
        let median = &runs[(runs.len() - 1) / 2];
        let (low, high) = (runs[0].memory.pss, runs[runs.len() - 1].memory.pss);
        let steady: Vec<String> = runs
            .iter()
            .map(|r| {
                let shown = r.shown_after.as_secs_f64();
                match r.steady_after {
                    Some(after) => format!("{shown:.1} s + {:.1} s", after.as_secs_f64()),
                    None => format!("{shown:.1} s + not steady in {}", STEADY_CAP.as_secs()),
                }
            })
            .collect();
        let compositing = match (&median.compositing, side.env) {
            (Some(line), _) => short(line),
            (None, []) => "WebKit's default".to_owned(),
            (None, [(_, value)]) => format!("`{DISABLE_VAR}={value}`"),
            (None, _) => "?".to_owned(),
        };
        rows.push(vec![
            side.label.clone(),
            compositing,
            runs.len().to_string(),
            format!("**{}**", mib(median.memory.pss)),
            format!("{} – {}", mib(low), mib(high)),
            mib(median.memory.rss),
            mib(median.memory.hwm),
            by_process(&median.memory),
            steady.join(", "),
            runs.iter().filter(|r| r.strangers > 0).count().to_string(),
        ]);
        medians.push(median.memory.pss);
    }
    table(
        &[
            "launch",
            "compositing (the app's log, or the variable)",
            "rounds",
            "PSS, median round",
            "PSS, min – max round",
            "RSS sum (reference)",
            "sum of VmHWM (reference)",
            "PSS by process (median round)",
            "window shown + PSS steady, per round",
            "rounds read beside other WebKit processes",
        ],
        &rows,
    );
    let shipped = &readings[3][(readings[3].len() - 1) / 2];
    let shipped_off = shipped
        .compositing
        .as_deref()
        .is_some_and(|line| line.contains("compositing off"));
    if let Some(line) = &shipped.compositing {
        println!("The app's log, as shipped: `{line}`\n");
    }

    let (bare_default, bare_off) = (medians[0], medians[1]);
    let (app_full, app_full_on) = (medians[3], medians[5]);
    // The bare window in the mode the app chose.
    let (bare_same, bare_same_label) = if shipped_off {
        (bare_off, format!("`{DISABLE_VAR}=1`"))
    } else {
        (bare_default, "WebKit's default".to_owned())
    };
    let ratio = |app: u64, bare: u64| app as f64 / bare as f64;
    let shipped_mib = app_full as f64 / 1024.0;
    table(
        &["target", "measured", "verdict"],
        &[
            vec![
                format!("app with {pending} pending, as shipped: PSS ≤ {TARGET_MIB:.0} MiB"),
                mib(app_full),
                verdict(shipped_mib <= TARGET_MIB).into(),
            ],
            vec![
                format!(
                    "app with {pending} pending, as shipped, ≤ 1.5× the bare window \
                     ({bare_same_label})"
                ),
                format!(
                    "{:.2}× ({} vs {})",
                    ratio(app_full, bare_same),
                    mib(app_full),
                    mib(bare_same)
                ),
                verdict(ratio(app_full, bare_same) <= 1.5).into(),
            ],
            vec![
                format!(
                    "app with {pending} pending, compositing on, ≤ 1.5× the bare window \
                     (WebKit's default)"
                ),
                format!(
                    "{:.2}× ({} vs {})",
                    ratio(app_full_on, bare_default),
                    mib(app_full_on),
                    mib(bare_default)
                ),
                verdict(ratio(app_full_on, bare_default) <= 1.5).into(),
            ],
        ],
    );
    println!(
        "Compositing on costs the app with {pending} pending {} (PSS {} against {}).\n",
        mib(app_full_on.saturating_sub(app_full)),
        mib(app_full_on),
        mib(app_full)
    );
    Ok(())
}

/// PSS by program, largest first: `WebKitWebProcess 121.3 MiB; ...`.
fn by_process(memory: &TreeMemory) -> String {
    memory
        .by_name
        .iter()
        .map(|(name, pss)| format!("{name} {}", mib(*pss)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The app's log line about compositing (`inbox_desk::rendering`), from its mark on.
fn compositing_line(launched: &Launched) -> Option<String> {
    let log = std::fs::read_to_string(&launched.log).ok()?;
    log.lines()
        .find_map(|line| line.find(LOG_MARK).map(|at| line[at..].to_owned()))
}

/// The decision without its reasons: up to the first colon.
fn short(line: &str) -> String {
    let decided = line.split(':').next().unwrap_or(line).trim();
    format!("app: {}", decided.trim_start_matches(LOG_MARK).trim())
}

/// Waits, up to [`ALONE_CAP`], until no WebKit process runs outside the tree at `root`.
fn wait_alone(root: u32) {
    let started = Instant::now();
    while other_webkit_processes(root) > 0 && started.elapsed() < ALONE_CAP {
        std::thread::sleep(POLL);
    }
}

/// WebKit processes on the machine outside the tree at `root`.
fn other_webkit_processes(root: u32) -> usize {
    let ours: Vec<u32> = descendants(root).iter().map(|p| p.pid).collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| !ours.contains(pid))
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).ok())
        .filter(|comm| comm.starts_with("WebKit"))
        .count()
}

/// `/proc/loadavg`'s three averages (1, 5, 15 minutes); other people build on this machine.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| "?".to_owned())
}

/// Waits until the tree's PSS has stayed within 1% for [`STEADY_WINDOW`]; `None` when it
/// has not within [`STEADY_CAP`].
pub(super) fn wait_steady(launched: &mut Launched) -> anyhow::Result<Option<Duration>> {
    let started = Instant::now();
    let window = (STEADY_WINDOW.as_millis() / POLL.as_millis()) as usize + 1;
    let mut history: Vec<u64> = Vec::new();
    while started.elapsed() < STEADY_CAP {
        launched.check_running()?;
        launched.tree.remember(launched.pid());
        history.push(tree_memory(launched.pid()).pss);
        if history.len() >= window {
            let recent = &history[history.len() - window..];
            let (low, high) = (
                *recent.iter().min().unwrap_or(&0),
                *recent.iter().max().unwrap_or(&0),
            );
            if high - low <= high / 100 {
                return Ok(Some(started.elapsed()));
            }
        }
        std::thread::sleep(POLL);
    }
    Ok(None)
}

/// PSS, RSS and peak RSS of `root` and all its descendants.
pub(super) fn tree_memory(root: u32) -> TreeMemory {
    let mut pids = vec![root];
    pids.extend(descendants(root).iter().map(|p| p.pid));
    let mut memory = TreeMemory::default();
    for pid in pids {
        let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"));
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
        let (Ok(rollup), Ok(status)) = (rollup, status) else {
            continue; // gone since the listing
        };
        let pss = kib(&rollup, "Pss:");
        memory.pss += pss;
        memory.rss += kib(&rollup, "Rss:");
        memory.hwm += kib(&status, "VmHWM:");
        // The program's file name (`comm` cuts names at 15 characters).
        let name = std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .and_then(|line| {
                let program = line.split(|&b| b == 0).next()?;
                let program = String::from_utf8_lossy(program).into_owned();
                Some(program.rsplit('/').next()?.to_owned())
            })
            .unwrap_or_default();
        match memory.by_name.iter_mut().find(|(n, _)| *n == name) {
            Some((_, sum)) => *sum += pss,
            None => memory.by_name.push((name, pss)),
        }
    }
    memory
        .by_name
        .sort_by_key(|(_, pss)| std::cmp::Reverse(*pss));
    memory
}

/// The value of a `Name:   1234 kB` line.
fn kib(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|line| line.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap_or(0)
}

pub(super) fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}
