//! The spool's watch (src/watcher.rs): inotify with only the events the engine acts on. A
//! file placed or taken away is a hint; the engine's own reads of a request are not (notify's
//! backend woke its thread for every `IN_OPEN`); a watch that ends asks for a rescan; and
//! dropping the watch ends its thread.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use inbox_engine::watcher::{watch_spool, Hint};
use inbox_engine::{Area, Spool, WatchOptions};

/// Long enough for an event the kernel queued to reach the channel, on a loaded machine.
const QUIET: Duration = Duration::from_millis(300);

fn spool() -> (tempfile::TempDir, Spool) {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::open(dir.path().join("spool")).unwrap();
    (dir, spool)
}

/// The paths of the hints that arrive within `QUIET`, and the rescans asked for.
fn hints_within(hints: &Receiver<Hint>, wait: Duration) -> (Vec<PathBuf>, Vec<String>) {
    let deadline = Instant::now() + wait;
    let (mut paths, mut rescans) = (Vec::new(), Vec::new());
    while let Ok(hint) = hints.recv_deadline(deadline) {
        match hint {
            Hint::Paths(more) => paths.extend(more),
            Hint::Rescan(reason) => rescans.push(reason),
        }
    }
    (paths, rescans)
}

/// Waits for the hint naming `path`; the paths seen on the way are returned too.
fn wait_for_path(hints: &Receiver<Hint>, path: &PathBuf) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    loop {
        match hints.recv_deadline(deadline) {
            Ok(Hint::Paths(paths)) => {
                let found = paths.contains(path);
                seen.extend(paths);
                if found {
                    return seen;
                }
            }
            Ok(Hint::Rescan(reason)) => panic!("unexpected rescan: {reason}"),
            Err(_) => panic!("no hint for {} (saw {seen:?})", path.display()),
        }
    }
}

#[test]
fn placing_and_removing_files_are_hints_and_reading_them_is_not() {
    let (_dir, spool) = spool();
    let (tx, hints) = crossbeam_channel::unbounded();
    let watcher = watch_spool(&spool, &WatchOptions::default(), tx).unwrap();
    assert!(watcher.completeness().holds());

    // Renamed into place, as askers do.
    let request = spool.path(Area::Questions, "placed");
    let staged = spool.tmp_dir().join("placed.partial");
    fs::write(&staged, b"{}").unwrap();
    fs::rename(&staged, &request).unwrap();
    wait_for_path(&hints, &request);

    // Written in place: the hint comes when the file is complete (closed), at the latest.
    let written = spool.path(Area::Answers, "written");
    fs::write(&written, b"{}").unwrap();
    wait_for_path(&hints, &written);
    let (more, rescans) = hints_within(&hints, QUIET);
    assert!(more.iter().all(|p| *p == written), "{more:?}");
    assert!(rescans.is_empty(), "{rescans:?}");

    // Linked, as outcomes are.
    let staged = spool.tmp_dir().join("linked.partial");
    fs::write(&staged, b"{}").unwrap();
    let linked = spool.path(Area::Cancel, "linked");
    fs::hard_link(&staged, &linked).unwrap();
    wait_for_path(&hints, &linked);

    // What the engine does with a request it ingests: open it, read it, look at it. None of
    // it is a hint (notify's backend raised IN_OPEN and IN_CLOSE_NOWRITE for each).
    for _ in 0..20 {
        assert_eq!(fs::read(&request).unwrap(), b"{}");
        fs::metadata(&request).unwrap();
    }
    let (paths, rescans) = hints_within(&hints, QUIET);
    assert!(paths.is_empty(), "reading raised hints: {paths:?}");
    assert!(rescans.is_empty(), "{rescans:?}");

    // Taken away: deleted, or renamed out.
    fs::remove_file(&request).unwrap();
    wait_for_path(&hints, &request);
    let moved_out = spool.tmp_dir().join("linked.gone");
    fs::rename(&linked, &moved_out).unwrap();
    wait_for_path(&hints, &linked);

    // Outside the three areas: nothing.
    fs::write(spool.tmp_dir().join("elsewhere"), b"{}").unwrap();
    let (paths, rescans) = hints_within(&hints, QUIET);
    assert!(
        paths.is_empty() && rescans.is_empty(),
        "{paths:?} {rescans:?}"
    );
    assert!(watcher.completeness().holds());
}

#[test]
fn a_watch_that_ends_asks_for_a_rescan_and_is_relied_on_no_more() {
    let (_dir, spool) = spool();
    let (tx, hints) = crossbeam_channel::unbounded();
    let watcher = watch_spool(&spool, &WatchOptions::default(), tx).unwrap();
    let (cancel, request) = (
        spool.dir(Area::Cancel),
        spool.path(Area::Questions, "still"),
    );
    // The spool holds its directories open, which keeps a removed one alive, watch and all
    // (the engine goes on using it): only once nothing holds it does the watch end.
    drop(spool);
    fs::remove_dir(&cancel).unwrap();

    let deadline = Instant::now() + Duration::from_secs(20);
    let reason = loop {
        match hints.recv_deadline(deadline) {
            Ok(Hint::Rescan(reason)) => break reason,
            Ok(Hint::Paths(_)) => continue,
            Err(_) => panic!("no rescan after the watched directory went"),
        }
    };
    assert!(reason.contains("cancel"), "{reason}");
    assert!(!watcher.completeness().holds());

    // The other watches go on.
    fs::write(&request, b"{}").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match hints.recv_deadline(deadline) {
            Ok(Hint::Paths(paths)) if paths.contains(&request) => break,
            Ok(_) => continue,
            Err(_) => panic!("the questions/ watch ended with the cancel/ one"),
        }
    }
}

#[test]
fn dropping_the_watch_ends_its_thread() {
    let (_dir, spool) = spool();
    let (tx, hints) = crossbeam_channel::unbounded();
    let watcher = watch_spool(&spool, &WatchOptions::default(), tx).unwrap();
    let completeness = watcher.completeness();
    fs::write(spool.path(Area::Questions, "before"), b"{}").unwrap();
    drop(watcher);
    assert!(!completeness.holds(), "nothing is watched any more");
    // Every sender is gone once the reader thread has ended: after the hints already sent,
    // the channel is disconnected rather than waiting.
    let end = loop {
        match hints.recv_timeout(Duration::from_secs(20)) {
            Ok(_) => continue,
            Err(end) => break end,
        }
    };
    assert_eq!(end, crossbeam_channel::RecvTimeoutError::Disconnected);
}

#[test]
fn polling_is_not_relied_on_for_every_event() {
    let (_dir, spool) = spool();
    let (tx, hints) = crossbeam_channel::unbounded();
    let options = WatchOptions {
        poll: true,
        poll_interval: Duration::from_millis(50),
        ..WatchOptions::default()
    };
    let watcher = watch_spool(&spool, &options, tx).unwrap();
    assert!(!watcher.completeness().holds());
    let request = spool.path(Area::Questions, "polled");
    fs::write(&request, b"{}").unwrap();
    wait_for_path(&hints, &request);
}
