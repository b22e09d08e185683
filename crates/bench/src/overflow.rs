//! `overflow`: a burst of requests into a spool whose watcher loses events, ingested in full
//! through the rescans the losses trigger (the issue's "prove it holds", watcher overflow).
//!
//! ```text
//! inbox-bench overflow [--requests N=50000] [--queue EVENTS] [--writers W=1]
//! ```
//!
//! Without `--queue`, the engine's fault point drops every event (FAILPOINTS=
//! "watcher.event=return"); it runs `answer-inbox-faults` next to this binary, the command
//! line with the fault points compiled in: `cargo build --release -p answer-inbox --bin
//! answer-inbox-faults --features failpoints`. With
//! `--queue EVENTS`, the kernel's own queue overflows: /proc/sys/fs/inotify/max_queued_events
//! is set to EVENTS only until the daemon has created its inotify instance, then restored
//! (root only; machine-wide for those milliseconds, which is why no CI test does this). The
//! harness, and every check behind the figures, is inbox_harness::overflow.

use std::time::Duration;

use anyhow::{bail, Context};
use inbox_harness::overflow::{Config, Loss, Report};

use crate::stats::{ms, table, thousands};

pub const DEFAULT_REQUESTS: usize = 50_000;

const USAGE: &str =
    "usage: inbox-bench overflow [--requests N=50000] [--queue EVENTS] [--writers W=1]";

/// `args` is the whole command line after the program name (for the header); `flags` is what
/// follows `overflow`.
pub fn run(args: &[String], flags: &[String]) -> anyhow::Result<()> {
    let mut requests = DEFAULT_REQUESTS;
    let mut queue = None;
    let mut writers = 1;
    let mut flags = flags.iter();
    while let Some(flag) = flags.next() {
        let mut value = || -> anyhow::Result<usize> {
            let text = flags
                .next()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))?;
            text.replace('_', "")
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .with_context(|| format!("{flag} must be a positive number: {text}"))
        };
        match flag.as_str() {
            "--requests" => requests = value()?,
            "--queue" => queue = Some(u32::try_from(value()?).context("--queue is too large")?),
            "--writers" => writers = value()?,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => bail!("unknown argument {flag}\n{USAGE}"),
        }
    }
    let exe = std::env::current_exe()?;
    let binary = exe
        .parent()
        .context("no directory around this binary")?
        .join("answer-inbox-faults");
    if !binary.is_file() {
        bail!(
            "{} is missing: run `cargo build --release -p answer-inbox --bin \
             answer-inbox-faults --features failpoints` first (the same profile as this \
             benchmark)",
            binary.display()
        );
    }
    let loss = match queue {
        Some(max_queued_events) => Loss::KernelQueue { max_queued_events },
        None => Loss::FaultPoint,
    };
    let mut config = Config::new(binary, requests, loss);
    config.writers = writers;
    config.patience = Duration::from_secs(600);

    crate::header(args);
    println!(
        "## Watcher overflow ({} requests in one burst, {}, {writers} writer(s))\n",
        thousands(requests as f64),
        loss.describe()
    );
    eprintln!("overflow: writing {requests} requests, then the burst");
    let report = inbox_harness::overflow::run(&config).map_err(anyhow::Error::msg)?;
    print_report(&report);
    crate::footer();
    Ok(())
}

fn print_report(report: &Report) {
    let reasons = report
        .rescan_reasons
        .iter()
        .map(|(reason, count)| format!("{count} × \"{reason}\""))
        .collect::<Vec<_>>()
        .join("; ");
    table(
        &["Figure", "Value"],
        &[
            vec!["requests placed".into(), thousands(report.requests as f64)],
            vec!["watch start → ready".into(), ms(report.time_to_ready)],
            vec!["burst (first → last rename)".into(), ms(report.placing)],
            vec![
                "placement rate".into(),
                format!("{} requests/s", thousands(report.placement_rate())),
            ],
            vec![
                "time to ingest all (first rename → last `ingested`)".into(),
                ms(report.ingesting),
            ],
            vec![
                "of which after the last rename".into(),
                ms(report.after_last_placement),
            ],
            vec![
                "ingest rate".into(),
                format!("{} requests/s", thousands(report.ingest_rate())),
            ],
            vec!["full rescans logged".into(), report.rescans.to_string()],
            vec!["rescan reasons".into(), reasons],
            vec![
                "pending in the daemon's database".into(),
                thousands(report.pending as f64),
            ],
            vec![
                "rows of `list --json`".into(),
                format!(
                    "{} (in {})",
                    thousands(report.listed as f64),
                    ms(report.list_time)
                ),
            ],
        ],
    );
    if let Some(window) = report.queue_window {
        println!(
            "The machine-wide `max_queued_events` was lowered for {} (spawn → the daemon's \
             inotify descriptor exists), then restored.\n",
            ms(window)
        );
    }
    println!(
        "Every request was ingested ({} distinct `ingested` lines, {} pending in the database, \
         {} listed), and the log shows the loss as the rescans' reason.\n",
        report.requests, report.pending, report.listed
    );
}
