//! `inbox-bench`: the Speed section of the foundation issue, each engine figure next to its
//! baseline measured in the same run. See docs/BENCHMARKS.md for what each one means.
//!
//! ```text
//! inbox-bench ingest-latency [N=1000]
//! inbox-bench burst [N=10000]
//! inbox-bench startup [N=100000]
//! inbox-bench round-trip [N=200]
//! inbox-bench all
//! inbox-bench autonomous-burst [N=3000]   (issue 11: group commit, next to a bare responder)
//! inbox-bench overflow [--requests N=50000] [--queue EVENTS] [--writers W]
//! inbox-bench crash [--kills N=200] [--workers N] [--seed S] [--no-cancel]
//! inbox-bench race [--engines N=4] [--requests N=1000] [--poll] [--seed S]
//! inbox-bench team [--requests N=500] [--workers N=2] [--seed S]   (root, FUSE: sshfs)
//! inbox-bench desktop [N=10000]         (not part of `all`: about 10 minutes)
//! inbox-bench desktop-memory [N=10000]
//! inbox-bench desktop-window [N=10000]
//! inbox-bench desktop-notify [N=30]
//! inbox-bench desktop-visible [N=10000]           (issue 11: placed → row in the window)
//! inbox-bench desktop-memory-breakdown [N=10000]  (issue 11: PSS by process and mapping)
//! inbox-bench notify-close [N=30]      (issue 24: settled elsewhere → bubble closed)
//! inbox-bench desktop-keys [N=20]       (issue 24: keys per answer, last key → outcome)
//! inbox-bench web-live [N=200]          (issue 14: placed → visible on an open web page)
//! inbox-bench web-idle-pages [N=50]     (issue 14: the server's memory per idle page)
//! ```
//!
//! Results go to stdout as markdown; progress goes to stderr. Build with `--release`.

mod autonomous_burst;
mod burst;
mod close;
mod desktop;
mod fixtures;
mod harness;
mod latency;
mod overflow;
mod reliability;
mod roundtrip;
mod startup;
mod stats;
mod team;
mod web;

use std::process::{Command, ExitCode};

const USAGE: &str =
    "usage: inbox-bench <ingest-latency [N] | burst [N] | startup [N] | round-trip [N] | all
                    | desktop [N] | desktop-memory [N] | desktop-window [N] | desktop-notify [N]
                    | autonomous-burst [N] | desktop-visible [N] | desktop-memory-breakdown [N]
                    | notify-close [N]
                    | desktop-keys [N] | web-live [N] | web-idle-pages [N]>

  ingest-latency [N=1000]  rename into questions/ → Event::Ingested, next to a bare notify watcher
  burst [N=10000]          N files at once with the watcher, next to Engine::sync without one
  startup [N=100000]       time to ready over N settled requests, next to a plain listing
  round-trip [N=200]       autonomous round trip and ask --wait wake-up, next to a bare watcher
  overflow [--requests N=50000] [--queue EVENTS] [--writers W]
                           a burst with watcher events lost (fault point, or a kernel queue of
                           EVENTS) ingested in full by rescans; needs answer-inbox-faults
                           (--bin answer-inbox-faults --features failpoints) next to it
  all                      all four with their default sizes
  autonomous-burst [N=3000]
                           N autonomous requests at once: outcomes/s of `answer-inbox watch`
                           (next to this binary) next to a bare responder that fsyncs each
                           outcome, both from outside, on a disk (not a tmpfs)
  notify-close [N=30]      a request answered by another instance → its bubble closed
                           (`CloseNotification` on the bus) by `answer-inbox watch` (next to
                           this binary) in a private session with dunst; Xvfb, dbus-daemon,
                           dbus-monitor and dunst installed

  The desktop app (release builds of answer-inbox-desktop and inbox-bare-window next to this
  binary; Xvfb, dbus-daemon, dbus-monitor, dunst, xdotool and tauri-driver installed):
  desktop [N=10000]        the three below, N pending requests (about 10 minutes)
  desktop-memory [N=10000] PSS of the app's process tree, empty and with N pending, next to a
                           bare Tauri window
  desktop-window [N=10000] launch → painted list, keystroke in search → updated list
  desktop-notify [N=30]    request file → Notify call on the bus, for the CLI daemon (answer-inbox
                           next to this binary) and the app, N requests 1 s apart each, next to
                           the engine's ingest; counts bubbles against requests
  desktop-visible [N=10000]
                           request placed → its row in the window's Pending list (WebDriver,
                           a MutationObserver), on 10 and on N pending, next to the engine's
                           ingest latency
  desktop-memory-breakdown [N=10000]
                           the app's PSS with N pending by process and by mapping, and under
                           variants of its environment (MALLOC_ARENA_MAX, WebKit compositing)
  desktop-keys [N=20]      keys from the Pending list to a written outcome (real X key events,
                           xdotool) for an agent's permission request (`answer-inbox hook
                           claude-code`, answer-inbox next to this binary), a confirm, a choice
                           of three and a batch of five, and last key → outcome file, N each

  The web page (`answer-inbox serve`, answer-inbox built next to this binary):
  web-live [N=200]         request placed → `changed` on an open page's event stream, and → the
                           page's `list_pending` holding it, next to the engine's ingest
  web-idle-pages [N=50]    the server's VmRSS with 0, N and 2N idle pages (event streams) open";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("inbox-bench: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> anyhow::Result<()> {
    // Takes flags rather than one size, so it parses its own arguments.
    if let Some((command, flags)) = args.split_first() {
        if command == "overflow" {
            return overflow::run(args, flags);
        }
        if command == "team" {
            return team::run(args, flags);
        }
    }
    // The baseline process of `autonomous-burst`: no header, it runs until killed.
    if let Some(("bare-responder", rest)) = args.split_first().map(|(c, r)| (c.as_str(), r)) {
        return autonomous_burst::bare_responder(rest);
    }
    // `crash` and `race` take flags too (reliability.rs).
    if let Some(result) = reliability::dispatch(args) {
        return result;
    }
    let (command, size) = match args {
        [command] => (command.as_str(), None),
        [command, size] => (
            command.as_str(),
            Some(
                size.replace('_', "")
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| anyhow::anyhow!("N must be a positive number: {size}"))?,
            ),
        ),
        _ => anyhow::bail!("{USAGE}"),
    };
    let bench: fn(usize) -> anyhow::Result<()> = match command {
        "ingest-latency" => latency::run,
        "burst" => burst::run,
        "startup" => startup::run,
        "round-trip" => roundtrip::run,
        "autonomous-burst" => autonomous_burst::run,
        "notify-close" => close::run,
        "desktop" => desktop::run,
        "desktop-memory" => desktop::run_memory,
        "desktop-window" => desktop::run_window,
        "desktop-notify" => desktop::run_notify,
        "desktop-visible" => desktop::run_visible,
        "desktop-memory-breakdown" => desktop::run_breakdown,
        "desktop-keys" => desktop::run_keys,
        "web-live" => web::run_live,
        "web-idle-pages" => web::run_idle,
        "all" if size.is_none() => {
            return all(args);
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}\n{}\n{}", reliability::USAGE, team::USAGE);
            return Ok(());
        }
        _ => anyhow::bail!("{USAGE}"),
    };
    let default = match command {
        "ingest-latency" => latency::DEFAULT_N,
        "burst" => burst::DEFAULT_N,
        "startup" => startup::DEFAULT_N,
        "autonomous-burst" => autonomous_burst::DEFAULT_N,
        "notify-close" => close::DEFAULT_N,
        "desktop"
        | "desktop-memory"
        | "desktop-window"
        | "desktop-visible"
        | "desktop-memory-breakdown" => desktop::DEFAULT_N,
        "desktop-notify" => desktop::DEFAULT_NOTIFY_N,
        "desktop-keys" => desktop::DEFAULT_KEYS_N,
        "web-live" => web::DEFAULT_LIVE_N,
        "web-idle-pages" => web::DEFAULT_IDLE_N,
        _ => roundtrip::DEFAULT_N,
    };
    fixtures::check_fixtures()?;
    header(args);
    bench(size.unwrap_or(default))?;
    footer();
    Ok(())
}

fn all(args: &[String]) -> anyhow::Result<()> {
    fixtures::check_fixtures()?;
    header(args);
    latency::run(latency::DEFAULT_N)?;
    burst::run(burst::DEFAULT_N)?;
    startup::run(startup::DEFAULT_N)?;
    roundtrip::run(roundtrip::DEFAULT_N)?;
    footer();
    Ok(())
}

/// Date, commit, machine and the exact command, so a table can be traced to its run.
fn header(args: &[String]) {
    let profile = if cfg!(debug_assertions) {
        "debug build: figures are NOT representative, use --release"
    } else {
        "release build"
    };
    println!("# Answer Inbox benchmarks\n");
    println!(
        "- date: {}",
        chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
    );
    println!("- commit: {}", commit());
    println!(
        "- command: `cargo run --release -p inbox-bench -- {}` ({profile})",
        args.join(" ")
    );
    println!("- machine: {}", machine());
    println!("- temp dirs: {}", temp_filesystem());
    println!("- load average at start: {}", load_average());
    let tuning: Vec<String> = std::env::vars()
        .filter(|(name, _)| {
            ["WEBKIT_", "MALLOC_", "JSC_"]
                .iter()
                .any(|p| name.starts_with(p))
        })
        .map(|(name, value)| format!("`{name}={value}`"))
        .collect();
    if !tuning.is_empty() {
        println!(
            "- environment (inherited by the apps started): {}",
            tuning.join(", ")
        );
    }
    println!();
}

fn footer() {
    println!("Load average at the end: {}.", load_average());
}

fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn commit() -> String {
    let Some(hash) = output("git", &["rev-parse", "--short", "HEAD"]) else {
        return "unknown (not a git checkout)".into();
    };
    match output("git", &["status", "--porcelain"]) {
        Some(changes) if !changes.is_empty() => format!("{hash} (with uncommitted changes)"),
        _ => hash,
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown CPU".into());
    let kernel = read("/proc/sys/kernel/osrelease");
    let memory = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|kb| kb.trim().trim_end_matches(" kB").parse::<f64>().ok())
        .map(|kb| format!("{:.1} GiB RAM", kb / 1024.0 / 1024.0))
        .unwrap_or_default();
    let rustc = output("rustc", &["--version"]).unwrap_or_default();
    format!(
        "{cpus} CPUs ({model}), Linux {}, {memory}; {rustc}",
        kernel.trim()
    )
}

/// The filesystem under the temp directory (fsync and inotify costs depend on it).
fn temp_filesystem() -> String {
    let temp = std::env::temp_dir();
    format!("{} on {}", temp.display(), filesystem_of(&temp))
}

/// The mount holding `path`: (mount point, type, device).
fn mount_of(path: &std::path::Path) -> Option<(String, String, String)> {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    read("/proc/mounts")
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.len() >= 3 && path.starts_with(fields[1])).then(|| {
                (
                    fields[1].to_owned(),
                    fields[2].to_owned(),
                    fields[0].to_owned(),
                )
            })
        })
        .max_by_key(|(mount, _, _)| mount.len())
}

/// "ext4 (/dev/vda mounted at /)" for the filesystem holding `path`.
pub fn filesystem_of(path: &std::path::Path) -> String {
    match mount_of(path) {
        Some((mount, kind, device)) => format!("{kind} ({device} mounted at {mount})"),
        None => "an unknown filesystem".into(),
    }
}

/// The type of the filesystem holding `path` ("ext4", "tmpfs", ...).
pub fn filesystem_type(path: &std::path::Path) -> Option<String> {
    mount_of(path).map(|(_, kind, _)| kind)
}

fn load_average() -> String {
    read("/proc/loadavg")
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
