//! Issue 14: the resident memory of `answer-inbox serve` with open pages that do nothing,
//! per page.
//!
//! The server (the binary next to this one) runs on an inbox of 10 pending requests; one
//! device is paired and fetches the list once, as a page does when it opens. One request is
//! placed before the first reading, so that what the server's first ingest brings into
//! memory once (code pages, SQLite's caches) is in every reading, not in the pages' share.
//! Then its memory is read with no page connected, with N event streams open
//! (`GET /api/events`, the page's one long-lived connection), and with 2N, each after the
//! pages have been idle for a few seconds. The figure is `VmRSS` of the process
//! (`/proc/PID/status`); `RssAnon` (its heap and stacks, without the mapped binary), the
//! thread count and the open file descriptors (one socket per page) are shown beside it.
//! Each reading is the median of 5, 1 s apart.
//!
//! All pages belong to one device (its cookie): the server's cost of a page is its
//! connection and its subscription to the feed, which does not depend on whose page it is.
//! To show that every page is really live, one request is then placed and each of the 2N
//! streams must carry its `changed` event; the memory is read again after that, and once
//! more after every page has closed and the server's keep-alive (15 s) has noticed.

use std::time::{Duration, Instant};

use anyhow::Context;
use inbox_engine::{Area, Spool};

use super::{Page, ProcessStatus, Served};
use crate::desktop::Inbox;
use crate::fixtures::{self, Staged};
use crate::harness::PATIENCE;
use crate::stats::{ms, percentile, table, thousands, verdict};

pub const DEFAULT_N: usize = 50;
/// Pending requests in the inbox, as in the live benchmark.
const PENDING: usize = 10;
/// How long pages stay idle before the memory is read.
const IDLE: Duration = Duration::from_secs(5);
const READINGS: usize = 5;
const READING_GAP: Duration = Duration::from_secs(1);
/// After the pages close: the server's keep-alive interval (inbox-web's `KEEP_ALIVE`, 15 s:
/// a closed stream is noticed when the next comment cannot be written), and some margin.
const AFTER_CLOSE: Duration = Duration::from_secs(20);
/// "A few hundred KiB" per idle page, taken as 300.
const TARGET_KIB: f64 = 300.0;

pub fn run(n: usize) -> anyhow::Result<()> {
    println!(
        "## Issue 14: memory of `answer-inbox serve` per idle open page ({n} and {} pages)\n",
        2 * n
    );
    let inbox = Inbox::with_pending(PENDING)?;
    let mut server = Served::start(&inbox.spool, &inbox.db, "web-idle")?;
    eprintln!("web-idle-pages: serving at {}", server.base);
    let device = server.pair()?;
    anyhow::ensure!(device.list_pending()?.len() == PENDING, "the list is wrong");
    let pid = server.pid();
    let spool = Spool::open(&inbox.spool)?;
    place(&spool, &fixtures::id("web-idle-warmup", 0))?;
    // The start-up's own `changed:` line may come first.
    let (deadline, listed) = (
        Instant::now() + PATIENCE,
        format!("{} pending", PENDING + 1),
    );
    while server.line_starting("changed: ", deadline)?.1 != listed {}
    anyhow::ensure!(
        device.list_pending()?.len() == PENDING + 1,
        "the warm-up request is not listed"
    );

    eprintln!("web-idle-pages: no page open");
    std::thread::sleep(IDLE);
    let none = reading(pid)?;
    let mut pages: Vec<Page> = Vec::with_capacity(2 * n);
    let mut steps = Vec::new();
    for step in 1..=2 {
        eprintln!("web-idle-pages: opening pages to {}", step * n);
        for _ in 0..n {
            pages.push(device.open_page()?);
        }
        std::thread::sleep(IDLE);
        server.check_running()?;
        steps.push(reading(pid)?);
    }
    let (at_n, at_2n) = (steps[0], steps[1]);

    eprintln!("web-idle-pages: one change to all {} pages", pages.len());
    let opened = pages.len();
    let (heard, pages) = one_change(&spool, pages)?;
    anyhow::ensure!(
        heard.len() == opened,
        "only {} of {opened} open pages heard the change",
        heard.len()
    );
    std::thread::sleep(IDLE);
    let after_change = reading(pid)?;

    eprintln!("web-idle-pages: closing every page");
    drop(pages);
    std::thread::sleep(AFTER_CLOSE);
    server.check_running()?;
    let closed = reading(pid)?;

    let growth = |from: &ProcessStatus, to: &ProcessStatus| to.rss as f64 - from.rss as f64;
    let per_page_first = growth(&none, &at_n) / n as f64;
    let per_page_both = growth(&none, &at_2n) / (2 * n) as f64;
    let per_page_second = growth(&at_n, &at_2n) / n as f64;
    let row = |label: String, status: &ProcessStatus, growth: String, per_page: String| {
        vec![
            label,
            kib(status.rss),
            kib(status.anon),
            status.threads.to_string(),
            status.fds.to_string(),
            growth,
            per_page,
        ]
    };
    table(
        &[
            "pages open",
            "VmRSS",
            "RssAnon",
            "threads",
            "open fds",
            "VmRSS growth",
            "per page",
        ],
        &[
            row(
                "0 (paired, list fetched, one request ingested)".into(),
                &none,
                "–".into(),
                "–".into(),
            ),
            row(
                format!("{n}, idle {} s", IDLE.as_secs()),
                &at_n,
                signed_kib(growth(&none, &at_n)),
                format!("**{per_page_first:.1} KiB**"),
            ),
            row(
                format!("{}, idle {} s", 2 * n, IDLE.as_secs()),
                &at_2n,
                format!(
                    "{} ({} over {n})",
                    signed_kib(growth(&none, &at_2n)),
                    signed_kib(growth(&at_n, &at_2n))
                ),
                format!("**{per_page_both:.1} KiB** (the second {n}: {per_page_second:.1} KiB)"),
            ),
            row(
                format!("{}, after one change reached each", 2 * n),
                &after_change,
                format!(
                    "{} ({} over idle)",
                    signed_kib(growth(&none, &after_change)),
                    signed_kib(growth(&at_2n, &after_change))
                ),
                format!("{:.1} KiB", growth(&none, &after_change) / (2 * n) as f64),
            ),
            row(
                format!("0 again, {} s after all closed", AFTER_CLOSE.as_secs()),
                &closed,
                signed_kib(growth(&none, &closed)),
                "–".into(),
            ),
        ],
    );
    println!(
        "The change placed with {} pages open reached every page: rename → `event: inbox` on \
         the page's stream, p50 {} and max {} over the pages.\n",
        2 * n,
        ms(percentile(&heard, 50.0)),
        ms(heard[heard.len() - 1]),
    );
    let worst = per_page_first.max(per_page_second);
    table(
        &["target", "measured", "verdict"],
        &[vec![
            format!(
                "an idle page grows the server's memory by at most a few hundred KiB (taken \
                 as ≤ {TARGET_KIB:.0} KiB)"
            ),
            format!(
                "{per_page_first:.1} KiB per page for the first {n}, {per_page_second:.1} KiB \
                 for the next {n}"
            ),
            verdict(worst <= TARGET_KIB).into(),
        ]],
    );
    Ok(())
}

/// The median of [`READINGS`] readings (by VmRSS), [`READING_GAP`] apart.
fn reading(pid: u32) -> anyhow::Result<ProcessStatus> {
    let mut readings = Vec::with_capacity(READINGS);
    for i in 0..READINGS {
        if i > 0 {
            std::thread::sleep(READING_GAP);
        }
        readings.push(ProcessStatus::read(pid)?);
    }
    readings.sort_by_key(|status| status.rss);
    Ok(readings[(READINGS - 1) / 2])
}

/// Places one request and reads every page's stream, each on a thread, until its
/// `changed` event. Returns rename → event for every page that heard it (sorted), and the
/// pages that did, still open.
fn one_change(spool: &Spool, pages: Vec<Page>) -> anyhow::Result<(Vec<Duration>, Vec<Page>)> {
    let staged = stage(spool, &fixtures::id("web-idle", 0))?;
    let (tx, heard) = crossbeam_channel::unbounded();
    let count = pages.len();
    for (i, mut page) in pages.into_iter().enumerate() {
        let tx = tx.clone();
        std::thread::Builder::new()
            .name(format!("page-{i}"))
            .spawn(move || loop {
                match page.next_event() {
                    Ok(event) if event.kind().as_deref() == Some("changed") => {
                        let _ = tx.send((event.at, page));
                        return;
                    }
                    Ok(_) => {}
                    Err(_) => return,
                }
            })
            .context("a thread for a page")?;
    }
    drop(tx);
    let placed = Instant::now();
    staged.place()?;
    let deadline = placed + PATIENCE;
    let (mut times, mut pages) = (Vec::with_capacity(count), Vec::with_capacity(count));
    while pages.len() < count {
        let Ok((at, page)) = heard.recv_deadline(deadline) else {
            break;
        };
        times.push(at.saturating_duration_since(placed));
        pages.push(page);
    }
    times.sort_unstable();
    Ok((times, pages))
}

/// A small interactive request written in `tmp/`, to be renamed into `questions/`.
fn stage(spool: &Spool, id: &str) -> anyhow::Result<Staged> {
    Staged::write(
        &spool.tmp_dir(),
        spool.path(Area::Questions, id),
        &fixtures::interactive_request(id),
    )
}

fn place(spool: &Spool, id: &str) -> anyhow::Result<()> {
    stage(spool, id)?.place()
}

fn kib(value: u64) -> String {
    format!("{} KiB", thousands(value as f64))
}

fn signed_kib(value: f64) -> String {
    let sign = if value < 0.0 { "−" } else { "+" };
    format!("{sign}{} KiB", thousands(value.abs()))
}
