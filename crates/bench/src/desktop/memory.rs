//! Resident memory of the desktop app with an empty inbox and with N pending requests, next
//! to the bare Tauri window (`inbox-bare-window`: one static page, the same Tauri features).
//!
//! Each is started directly in the private session, and its whole process tree is measured:
//! the app and WebKit's WebKitWebProcess and WebKitNetworkProcess. The figure is PSS
//! (`/proc/PID/smaps_rollup`): shared pages are divided among the processes that map them,
//! so a tree's sum does not count a library twice. Once the window is shown (for the app
//! with requests: once its title shows the pending count), the tree is left until its PSS
//! stops growing (within 1% over 3 s, at most 60 s), then read 5 times 1 s apart; the
//! median counts. The three launches alternate over 3 rounds, and the round medians' median
//! is reported.

use std::time::{Duration, Instant};

use inbox_harness::process::descendants;

use super::{app_title, DesktopBench, Inbox, Launched};
use crate::stats::{table, thousands, verdict};

const ROUNDS: usize = 3;
const READINGS: usize = 5;
const STEADY_WINDOW: Duration = Duration::from_secs(3);
const STEADY_CAP: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(500);

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
}

pub fn run(bench: &DesktopBench, n: usize) -> anyhow::Result<()> {
    println!("## Desktop app: resident memory (PSS of the process tree)\n");
    let empty = Inbox::with_pending(0)?;
    let full = Inbox::with_pending(n)?;
    let sides: [(String, &std::path::Path, &Inbox, String); 3] = [
        (
            "bare Tauri window (`inbox-bare-window`)".into(),
            &bench.bare,
            &empty,
            "Bare window".into(),
        ),
        ("app, empty inbox".into(), &bench.app, &empty, app_title(0)),
        (
            format!("app, {} pending", thousands(n as f64)),
            &bench.app,
            &full,
            app_title(n),
        ),
    ];
    let mut readings: Vec<Vec<Reading>> = (0..sides.len()).map(|_| Vec::new()).collect();
    for round in 1..=ROUNDS {
        for (i, (label, binary, inbox, title)) in sides.iter().enumerate() {
            eprintln!("desktop memory: round {round}/{ROUNDS}: {label}");
            let mut launched = bench.launch(binary, inbox, "desktop-memory")?;
            let shown_after = bench.wait_title(&mut launched, title)?;
            let steady_after = wait_steady(&mut launched)?;
            let mut samples = Vec::with_capacity(READINGS);
            for _ in 0..READINGS {
                samples.push(tree_memory(launched.pid()));
                std::thread::sleep(Duration::from_secs(1));
            }
            samples.sort_by_key(|m| m.pss);
            readings[i].push(Reading {
                memory: samples[(samples.len() - 1) / 2].clone(),
                shown_after,
                steady_after,
            });
            drop(launched);
        }
    }

    let mut medians = Vec::new();
    let mut rows = Vec::new();
    for ((label, _, _, _), runs) in sides.iter().zip(&mut readings) {
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
        rows.push(vec![
            label.clone(),
            runs.len().to_string(),
            format!("**{}**", mib(median.memory.pss)),
            format!("{} – {}", mib(low), mib(high)),
            mib(median.memory.rss),
            mib(median.memory.hwm),
            median
                .memory
                .by_name
                .iter()
                .map(|(name, pss)| format!("{name} {}", mib(*pss)))
                .collect::<Vec<_>>()
                .join("; "),
            steady.join(", "),
        ]);
        medians.push(median.memory.pss);
    }
    table(
        &[
            "launch",
            "rounds",
            "PSS, median round",
            "PSS, min – max round",
            "RSS sum (reference)",
            "sum of VmHWM (reference)",
            "PSS by process (median round)",
            "window shown + PSS steady, per round",
        ],
        &rows,
    );

    let (bare, app_full) = (medians[0], medians[2]);
    let share = app_full as f64 / bare as f64;
    table(
        &["target", "measured", "verdict"],
        &[vec![
            format!(
                "app with {} pending ≤ 1.5× the bare window",
                thousands(n as f64)
            ),
            format!("{share:.2}× ({} vs {})", mib(app_full), mib(bare)),
            verdict(share <= 1.5).into(),
        ]],
    );
    Ok(())
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
