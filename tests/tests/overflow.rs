//! Lost watcher events cost nothing: a burst placed while every inotify event is dropped (the
//! engine's `watcher.event` fault point, which reports each loss as the kernel reports a full
//! queue) is still ingested in full, through the rescans the losses trigger. The harness is
//! crates/harness/src/overflow.rs; `inbox-bench overflow` runs it at 50,000 requests and with a real
//! tiny kernel queue.

use std::time::Duration;

use inbox_harness::overflow::{self, Config, Loss};

use crate::util;

/// Enough for the daemon to fall behind and rescan many times, small enough for a debug
/// build on a shared two-core machine to finish in seconds.
const REQUESTS: usize = 5_000;

#[test]
fn a_burst_with_every_event_lost_is_ingested_by_rescans() {
    let mut config = Config::new(util::faults_binary(), REQUESTS, Loss::FaultPoint);
    // Two writers: the burst is denser than one asker makes it.
    config.writers = 2;
    config.patience = Duration::from_secs(40);
    let report = overflow::run(&config).unwrap_or_else(|error| panic!("{error}"));
    eprintln!("{report:#?}");

    assert_eq!(
        report.pending, REQUESTS,
        "every request pending in the database"
    );
    assert_eq!(report.listed, REQUESTS, "and listed by `list --json`");
    assert!(report.rescans >= 1, "{report:?}");
    // Every event was dropped, so every rescan is the fault point's: no other path can have
    // ingested anything.
    assert!(
        report
            .rescan_reasons
            .keys()
            .all(|reason| reason.contains(Loss::FaultPoint.rescan_reason())),
        "{:?}",
        report.rescan_reasons
    );
}
