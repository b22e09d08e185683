//! The asker's side: block until one request has its outcome (or is cancelled).
//!
//! Watches `answers/` and `cancel/` and wakes on the first event; a slow re-check every
//! [`RECHECK`] covers filesystems whose events do not arrive (network mounts).

use std::time::{Duration, Instant};

use inbox_protocol::Outcome;
use notify::{RecursiveMode, Watcher};

use crate::spool::{Area, ReadError, Spool};

/// How often the files are checked when no event arrives.
pub const RECHECK: Duration = Duration::from_secs(1);

/// How a wait ended.
// Returned once per wait, never stored in bulk: boxing the outcome would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    Settled(Outcome),
    Cancelled,
    TimedOut,
}

#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    #[error("file watcher: {0}")]
    Watch(#[from] notify::Error),
    #[error("the outcome file of \"{id}\" cannot be used: {reason}")]
    BadOutcome { id: String, reason: String },
}

/// Waits for `id`'s outcome, at most `timeout` (forever when `None`).
pub fn wait_for_outcome(
    spool: &Spool,
    id: &str,
    timeout: Option<Duration>,
) -> Result<Waited, WaitError> {
    let started = Instant::now();
    let (tx, events) = crossbeam_channel::unbounded();
    let mut watcher = notify::recommended_watcher(move |_event| {
        let _ = tx.send(());
    })?;
    // Watch first, then look: an outcome placed in between is seen either way.
    watcher.watch(&spool.dir(Area::Answers), RecursiveMode::NonRecursive)?;
    watcher.watch(&spool.dir(Area::Cancel), RecursiveMode::NonRecursive)?;
    loop {
        match spool.read(Area::Answers, id) {
            Ok(bytes) => {
                return Outcome::from_file_bytes(&bytes)
                    .map(Waited::Settled)
                    .map_err(|reason| WaitError::BadOutcome {
                        id: id.to_owned(),
                        reason,
                    })
            }
            Err(ReadError::Missing) => {}
            Err(error) => {
                return Err(WaitError::BadOutcome {
                    id: id.to_owned(),
                    reason: error.to_string(),
                })
            }
        }
        if spool.exists(Area::Cancel, id) {
            return Ok(Waited::Cancelled);
        }
        let mut pause = RECHECK;
        if let Some(timeout) = timeout {
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Ok(Waited::TimedOut);
            }
            pause = pause.min(left);
        }
        if events.recv_timeout(pause).is_ok() {
            // Drain the rest of a burst before looking again.
            while events.try_recv().is_ok() {}
        }
    }
}
