//! Team mode on a real shared filesystem, short version: two operators (the OS accounts
//! `inbox-op-a` and `inbox-op-b`, each with its own inbox and database) answer one spool
//! through sshfs over a loopback OpenSSH server, with `watch --poll`, requests placed on
//! either side and every request raced by both: exactly one outcome per request, attributed
//! to the account that wrote it, nothing lost, and a request from an account outside the
//! team refused (see `inbox_harness::team`). The long run is `inbox-bench team --requests
//! 500`.
//!
//! It needs root (accounts, mounts) and FUSE. Where either is missing it says so on
//! standard error and passes: the only skip the suite allows (scripts/setup installs sshfs
//! and the OpenSSH server; the CI runs as root).

use inbox_harness::team;

use crate::util;

/// The accounts of the tests about who wrote an outcome file, shared with the client's
/// corpus test (one list of them, not one per crate).
#[path = "../../crates/client/tests/accounts.rs"]
pub(crate) mod accounts;

const REQUESTS: usize = 60;

#[test]
fn two_operators_over_sshfs() {
    if let Some(reason) = team::unavailable() {
        eprintln!("SKIPPED: team mode over sshfs needs FUSE, root and sshfs ({reason})");
        return;
    }
    let mut config = team::Config::new(util::binary(), REQUESTS);
    // A failure names its seed; INBOX_TEST_SEED replays the same placing.
    if let Some(seed) = std::env::var("INBOX_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        config.seed = seed;
    }
    let report = team::run(&config).unwrap_or_else(|message| panic!("{message}"));
    eprintln!("{report}");
    assert_eq!(report.requests, REQUESTS);
    assert_eq!(report.wins[0] + report.wins[1], REQUESTS);
    assert_eq!(report.losers_told, REQUESTS);
    // Both sides placed and both won somewhere, so the races really were races.
    assert!(report.placed_by.iter().all(|&n| n > 0), "{report}");
    assert!(report.wins.iter().all(|&n| n > 0), "{report}");
    assert!(!report.outsider_refusals.is_empty(), "{report}");
}
