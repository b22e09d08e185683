//! Fault points: named places where a test can make a write, fsync, link, rename or commit
//! fail, or crash the process, to prove that recovery works (docs/RELIABILITY.md).
//!
//! Built on the `fail` crate. Without the `failpoints` feature every point compiles to
//! nothing, and `fail` is not even a dependency (an asker linking `inbox-client` pays
//! nothing). With it, a point is off until a test turns it on, in-process with `fail::cfg`
//! or for a whole process with `FAILPOINTS="spool.link=return(enospc)"`:
//! - `return(KIND)` fails the step with the I/O error a failing disk gives: `eio` (the
//!   default), `enospc` (disk full), `erofs` (read-only file system) or `eacces`;
//! - `panic` stops right there, as a crash would (nothing after the point runs);
//! - `sleep(MS)`, `pause` and the rest of `fail`'s actions work as documented there.

use std::io;

/// Every fault point, in the order a settle passes them. Tests iterate over this list so a
/// new point cannot go untested.
pub const POINTS: &[&str] = &[
    SPOOL_WRITE,
    SPOOL_FSYNC,
    SPOOL_LINK,
    SPOOL_DIR_FSYNC,
    STORE_COMMIT,
    STORE_COMMITTED,
];

/// Writing a spool file's bytes into `tmp/`.
pub const SPOOL_WRITE: &str = "spool.write";
/// Syncing that temp file to disk.
pub const SPOOL_FSYNC: &str = "spool.fsync";
/// Linking the temp file to its final name (the step that decides who wins).
pub const SPOOL_LINK: &str = "spool.link";
/// Syncing the directory, which makes the new name durable.
pub const SPOOL_DIR_FSYNC: &str = "spool.dir_fsync";
/// Just before the store commits a batch.
pub const STORE_COMMIT: &str = "store.commit";
/// Just after the store committed a batch, before its events are sent.
pub const STORE_COMMITTED: &str = "store.committed";
/// Each file-system event the watcher receives; `return` drops the event, as a full kernel
/// queue would (the engine's watcher).
pub const WATCHER_EVENT: &str = "watcher.event";

/// `Ok(())` unless the fault point `name` is turned on.
pub fn io_point(name: &str) -> io::Result<()> {
    let _ = name; // unused when the points are compiled out
    #[cfg(feature = "failpoints")]
    fail::fail_point!(name, |kind: Option<String>| Err(injected(kind.as_deref())));
    Ok(())
}

/// True when the fault point `name` says to drop what it guards.
pub fn drop_point(name: &str) -> bool {
    let _ = name;
    #[cfg(feature = "failpoints")]
    fail::fail_point!(name, |_| true);
    false
}

/// The error a fault point injects: the errno a real failure carries, so the code under test
/// cannot tell the difference.
#[cfg_attr(not(feature = "failpoints"), allow(dead_code))]
fn injected(kind: Option<&str>) -> io::Error {
    let errno = match kind.map(str::trim) {
        Some("enospc") => libc::ENOSPC,
        Some("erofs") => libc::EROFS,
        Some("eacces") => libc::EACCES,
        _ => libc::EIO,
    };
    io::Error::from_raw_os_error(errno)
}

#[cfg(all(test, feature = "failpoints"))]
mod tests {
    use super::*;

    #[test]
    fn a_point_injects_the_errno_it_names() {
        let scenario = fail::FailScenario::setup();
        fail::cfg(SPOOL_LINK, "return(enospc)").unwrap();
        let error = io_point(SPOOL_LINK).unwrap_err();
        assert!(
            error.to_string().contains("No space left on device"),
            "{error}"
        );
        assert_eq!(error.raw_os_error(), Some(libc::ENOSPC));
        fail::cfg(SPOOL_LINK, "off").unwrap();
        assert!(io_point(SPOOL_LINK).is_ok());
        scenario.teardown();
    }
}
