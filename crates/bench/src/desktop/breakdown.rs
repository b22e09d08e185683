//! Issue 11: where the app's memory with N pending goes, and what changes it.
//!
//! The app is launched directly (as in memory.rs) on the inbox of N pending, once per
//! variant of its environment per round, the variants alternating over the rounds. Once its
//! title shows the pending count and the tree's PSS is steady, its process tree is read: PSS
//! per process (the app, WebKitWebProcess, WebKitNetworkProcess), and per process by kind of
//! mapping from `/proc/PID/smaps`: the heap (`brk`), anonymous mappings (malloc arenas and
//! large allocations in the app; JavaScriptCore's heap, bmalloc and the like in the web
//! process), stacks, shared memory (memfd, /dev/shm: buffers shared between processes),
//! the GPU device, the program itself, WebKit's and JavaScriptCore's libraries, the other
//! libraries, other files. The environment variables are set on the app and inherited by
//! WebKit's processes, which it starts. After the readings, for the diagnosis, glibc in the
//! app process is asked through gdb to give back the memory it holds free
//! (`malloc_trim(0)`), and the app is read again: what that frees was not live data.

use std::collections::BTreeMap;
use std::time::Duration;

use inbox_harness::process::descendants;

use super::memory::{mib, tree_memory, wait_steady};
use super::{app_title, DesktopBench, Inbox};
use crate::stats::{table, thousands};

const ROUNDS: usize = 3;
const READINGS: usize = 3;

/// A variant: its label, the environment it adds, and whether the inbox is the full one.
struct Variant {
    label: &'static str,
    env: &'static [(&'static str, &'static str)],
    full: bool,
}

const VARIANTS: &[Variant] = &[
    Variant {
        label: "as shipped",
        env: &[],
        full: true,
    },
    Variant {
        label: "as shipped, empty inbox (reference)",
        env: &[],
        full: false,
    },
    Variant {
        label: "`MALLOC_ARENA_MAX=2`",
        env: &[("MALLOC_ARENA_MAX", "2")],
        full: true,
    },
    Variant {
        label: "`WEBKIT_DISABLE_COMPOSITING_MODE=1`",
        env: &[("WEBKIT_DISABLE_COMPOSITING_MODE", "1")],
        full: true,
    },
    Variant {
        label: "`MALLOC_MMAP_THRESHOLD_=131072` (large buffers mmapped, returned when freed)",
        env: &[("MALLOC_MMAP_THRESHOLD_", "131072")],
        full: true,
    },
    Variant {
        label: "`WEBKIT_DISABLE_COMPOSITING_MODE=1`, empty inbox (reference)",
        env: &[("WEBKIT_DISABLE_COMPOSITING_MODE", "1")],
        full: false,
    },
    Variant {
        label: "`WEBKIT_DISABLE_COMPOSITING_MODE=1` + `MALLOC_ARENA_MAX=2` + \
                `MALLOC_MMAP_THRESHOLD_=131072`",
        env: &[
            ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
            ("MALLOC_ARENA_MAX", "2"),
            ("MALLOC_MMAP_THRESHOLD_", "131072"),
        ],
        full: true,
    },
];

/// One process's PSS by kind of mapping, in KiB.
type Kinds = BTreeMap<&'static str, u64>;

/// One reading of the tree: total PSS, and per program its PSS and its kinds.
#[derive(Clone, Default)]
struct Reading {
    pss: u64,
    processes: Vec<(String, u64, Kinds)>,
    /// After the readings: the app process's PSS and the tree's once glibc was asked to give
    /// back the memory it holds free (`malloc_trim(0)`, called through gdb), if gdb could.
    trimmed: Option<(u64, u64)>,
    /// WebKit processes outside this tree during the reading (another app's, a test's):
    /// they share the libraries' pages, which lowers this tree's PSS.
    strangers: usize,
}

pub fn run(bench: &DesktopBench, n: usize) -> anyhow::Result<()> {
    println!(
        "## Issue 11: the app's memory with {} pending, by process and by mapping\n",
        thousands(n as f64)
    );
    let full = Inbox::with_pending(n)?;
    let empty = Inbox::with_pending(0)?;
    let mut readings: Vec<Vec<Reading>> = VARIANTS.iter().map(|_| Vec::new()).collect();
    for round in 1..=ROUNDS {
        for (variant, out) in VARIANTS.iter().zip(&mut readings) {
            eprintln!(
                "desktop memory breakdown: round {round}/{ROUNDS}: {}",
                variant.label
            );
            let (inbox, title) = if variant.full {
                (&full, app_title(n))
            } else {
                (&empty, app_title(0))
            };
            let mut launched =
                bench.launch_with(&bench.app, inbox, "desktop-breakdown", variant.env)?;
            bench.wait_title(&mut launched, &title)?;
            wait_steady(&mut launched)?;
            let mut samples = Vec::new();
            for _ in 0..READINGS {
                launched.tree.remember(launched.pid());
                samples.push(read_tree(launched.pid()));
                std::thread::sleep(Duration::from_secs(1));
            }
            samples.sort_by_key(|r| r.pss);
            let mut reading = samples[(samples.len() - 1) / 2].clone();
            reading.trimmed = malloc_trim(launched.pid());
            out.push(reading);
            drop(launched);
        }
    }

    // Per variant: the median round, by process.
    let mut rows = Vec::new();
    let mut medians = Vec::new();
    for (i, (variant, runs)) in VARIANTS.iter().zip(&mut readings).enumerate() {
        runs.sort_by_key(|r| r.pss);
        let median = runs[(runs.len() - 1) / 2].clone();
        let pss_of = |name: &str| {
            median
                .processes
                .iter()
                .filter(|(p, _, _)| p == name)
                .map(|(_, pss, _)| *pss)
                .sum::<u64>()
        };
        rows.push(vec![
            format!("({}) {}", i + 1, variant.label),
            format!(
                "**{}** ({} – {})",
                mib(median.pss),
                mib(runs[0].pss),
                mib(runs[runs.len() - 1].pss)
            ),
            mib(pss_of("answer-inbox-desktop")),
            mib(pss_of("WebKitWebProcess")),
            mib(pss_of("WebKitNetworkProcess")),
            median.trimmed.map_or("–".into(), |(app, tree)| {
                format!("{} (tree {})", mib(app), mib(tree))
            }),
        ]);
        medians.push(median);
    }
    table(
        &[
            &format!("variant ({ROUNDS} rounds, median)"),
            "PSS of the tree (min – max)",
            "answer-inbox-desktop",
            "WebKitWebProcess",
            "WebKitNetworkProcess",
            "(diagnosis) answer-inbox-desktop after `malloc_trim(0)` (gdb)",
        ],
        &rows,
    );

    // By kind of mapping, per process: every variant's median round.
    let mut kinds: Vec<&'static str> = Vec::new();
    for reading in &medians {
        for (_, _, by_kind) in &reading.processes {
            for kind in by_kind.keys() {
                if !kinds.contains(kind) {
                    kinds.push(*kind);
                }
            }
        }
    }
    let kib_of = |reading: &Reading, program: &str, kind: &str| -> u64 {
        reading
            .processes
            .iter()
            .filter(|(p, _, _)| p == program)
            .filter_map(|(_, _, k)| k.get(kind))
            .sum()
    };
    let labels: Vec<String> = (1..=VARIANTS.len()).map(|i| format!("({i})")).collect();
    for program in [
        "answer-inbox-desktop",
        "WebKitWebProcess",
        "WebKitNetworkProcess",
    ] {
        let mut rows = Vec::new();
        for kind in &kinds {
            let values: Vec<u64> = medians.iter().map(|m| kib_of(m, program, kind)).collect();
            if values.iter().all(|&v| v < 512) {
                continue; // under 0.5 MiB everywhere
            }
            let mut row = vec![(*kind).to_owned()];
            row.extend(values.into_iter().map(mib));
            rows.push(row);
        }
        let title = format!("{program}: PSS by mapping, variant");
        let mut headers: Vec<&str> = vec![&title];
        headers.extend(labels.iter().map(String::as_str));
        table(&headers, &rows);
    }
    let shared: usize = readings
        .iter()
        .flatten()
        .filter(|r| r.strangers > 0)
        .count();
    println!(
        "Readings taken while other WebKit processes ran on the machine (their shared pages \
         lower PSS): {shared} of {}.\n",
        readings.iter().map(Vec::len).sum::<usize>()
    );
    println!(
        "Variants: {}.\n",
        VARIANTS
            .iter()
            .enumerate()
            .map(|(i, v)| format!("({}) {}", i + 1, v.label))
            .collect::<Vec<_>>()
            .join("; ")
    );
    Ok(())
}

/// PSS of the tree rooted at `root`, per process and by kind of mapping.
fn read_tree(root: u32) -> Reading {
    let mut pids = vec![root];
    pids.extend(descendants(root).iter().map(|p| p.pid));
    let mut reading = Reading {
        pss: tree_memory(root).pss,
        processes: Vec::new(),
        trimmed: None,
        strangers: 0,
    };
    for pid in pids {
        let Ok(smaps) = std::fs::read_to_string(format!("/proc/{pid}/smaps")) else {
            continue;
        };
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .and_then(|line| {
                let program = line.split(|&b| b == 0).next()?;
                let program = String::from_utf8_lossy(program).into_owned();
                Some(program.rsplit('/').next()?.to_owned())
            })
            .unwrap_or_default();
        let kinds = by_kind(&smaps, &exe);
        let pss = kinds.values().sum();
        reading.processes.push((name, pss, kinds));
    }
    reading.strangers = webkit_processes().saturating_sub(
        reading
            .processes
            .iter()
            .filter(|(name, _, _)| name.starts_with("WebKit"))
            .count(),
    );
    reading
}

/// WebKit processes on the machine, ours included.
fn webkit_processes() -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .filter(|comm| comm.starts_with("WebKit"))
        .count()
}

/// Sums `Pss:` of each mapping in `smaps` by its kind.
fn by_kind(smaps: &str, exe: &str) -> Kinds {
    let mut kinds = Kinds::new();
    let mut kind = "other";
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            // A mapping's header: range, perms, offset, device, inode, [name].
            let name: Vec<&str> = fields.skip(4).collect();
            kind = kind_of(&name.join(" "), exe);
        } else if first == "Pss:" {
            let kib: u64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            *kinds.entry(kind).or_default() += kib;
        }
    }
    kinds
}

fn kind_of(name: &str, exe: &str) -> &'static str {
    let library = name.contains(".so");
    match name {
        "" => "anonymous (malloc arenas, large allocations; in WebKit: the JS heap, bmalloc)",
        "[heap]" => "heap (brk)",
        "[stack]" => "main stack",
        _ if name.starts_with("[stack:") => "thread stacks",
        _ if name.starts_with("[anon:") => "anonymous, named",
        _ if name.starts_with('[') => "kernel ([vdso], [vvar], ...)",
        _ if name.starts_with("/memfd:")
            || name.starts_with("/dev/shm")
            || name.contains("SYSV") =>
        {
            "shared memory (memfd, /dev/shm)"
        }
        _ if name.starts_with("/dev/dri") => "GPU device (/dev/dri)",
        _ if name == exe => "the program's own file",
        _ if library && (name.contains("libwebkit") || name.contains("libjavascriptcore")) => {
            "WebKit and JavaScriptCore libraries"
        }
        _ if library
            && (name.contains("libLLVM") || name.contains("/dri/") || name.contains("gallium")) =>
        {
            "Mesa and LLVM (software GL)"
        }
        _ if library && name.contains("libicudata") => "ICU data",
        _ if library => "other libraries",
        _ => "other files (fonts, caches, locale)",
    }
}

/// Asks glibc in process `pid` to return the free memory it holds to the kernel:
/// `malloc_trim(0)`, called through gdb (from outside: the workspace has no unsafe code to
/// call it from inside). Returns the app process's PSS and the tree's afterwards, or `None`
/// when gdb is missing or failed.
fn malloc_trim(pid: u32) -> Option<(u64, u64)> {
    let status = std::process::Command::new("gdb")
        .args(["-p", &pid.to_string(), "-batch", "-nx"])
        .args(["-ex", "call (int) malloc_trim(0)", "-ex", "detach"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    std::thread::sleep(Duration::from_secs(1));
    let app = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("Pss:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())?;
    Some((app, tree_memory(pid).pss))
}
