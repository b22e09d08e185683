//! Several inboxes on one spool, short version: 2 and 4 `watch` daemons (inotify and
//! `--poll`), each with its own database, race their answerers, autonomous policies and
//! expiry timers over 150 requests; exactly one outcome per request, and every database,
//! answerer and log agrees on it (see `inbox_harness::race`). The long run is
//! `inbox-bench race --engines 4 --requests 1000 [--poll]`.

use inbox_harness::race;

use crate::util;

const REQUESTS: usize = 150;

fn race_and_check(engines: usize, poll: bool) {
    let mut config = race::Config::new(util::binary(), engines, REQUESTS, poll);
    // A failure names its seed; INBOX_TEST_SEED replays the same request mix.
    if let Some(seed) = std::env::var("INBOX_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        config.seed = seed;
    }
    let report = race::run(&config).unwrap_or_else(|message| panic!("{message}"));
    eprintln!("{report}");
    assert_eq!(report.requests, REQUESTS);
    assert_eq!(report.answerers, REQUESTS * engines);
    assert_eq!(
        report.answerers_lost + report.answerers_won,
        report.answerers
    );
    // Every kind of racer won somewhere, so each race really happened.
    for racer in ["answerer", "policy:autonomous", "policy:expiry"] {
        assert!(
            report.wins.get(racer).copied().unwrap_or(0) > 0,
            "{racer} never won: {report}"
        );
    }
}

#[test]
fn two_inboxes_with_inotify() {
    race_and_check(2, false);
}

#[test]
fn four_inboxes_with_inotify() {
    race_and_check(4, false);
}

#[test]
fn two_inboxes_polling() {
    race_and_check(2, true);
}

#[test]
fn four_inboxes_polling() {
    race_and_check(4, true);
}
