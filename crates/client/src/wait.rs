//! Waiting for one request's outcome: blocking on a thread, or as a future.
//!
//! Both loops look at the files the same way (outcome first, then tombstone: an outcome that
//! exists always stands), and sleep until a file event, a cancel, the next re-check or the
//! deadline. Events only wake the loop; the files decide. Re-checks every
//! [`RECHECK`] cover filesystems whose events never arrive
//! (network mounts), and when no watcher can be had at all (the inotify limits are reached)
//! the loop polls every [`POLL`] instead.

use std::time::{Duration, Instant};

use inbox_protocol::Outcome;
use inbox_spool::ReadError;
use inbox_spool::{Area, Spool};
use notify::{RecursiveMode, Watcher};

use crate::{AskError, AskOptions, Reply};

/// How often the files are checked when no event arrives.
pub const RECHECK: Duration = Duration::from_secs(1);

/// How often the files are read when no watcher could be started.
pub const POLL: Duration = Duration::from_millis(250);

/// Blocks until `id` has an outcome, is cancelled, or the options' timeout passes. Its
/// outcome is checked against `expected`: the request as placed, when the asker placed it;
/// else (`None`) the request file as the wait first reads it.
pub(crate) fn wait_blocking(
    spool: &Spool,
    id: &str,
    options: &AskOptions,
    expected: Option<Expected>,
) -> Result<Reply, AskError> {
    let started = Instant::now();
    let expected = expected.unwrap_or_else(|| Expected::of(spool, id));
    let (wake, woken) = std::sync::mpsc::channel::<()>();
    // Watch first, then look: a file placed in between is seen either way.
    let wakers = Wakers::start(spool, options, {
        let wake = wake.clone();
        move || {
            let _ = wake.send(());
        }
    });
    let recheck = wakers.recheck();
    loop {
        if let Some(reply) = look(spool, id, &expected)? {
            return Ok(reply);
        }
        if let Some(reason) = options.cancel.as_ref().and_then(|token| token.reason()) {
            return withdraw(spool, id, &reason, &expected);
        }
        let Some(pause) = pause(started, options.timeout, recheck) else {
            return Ok(Reply::TimedOut { id: id.to_owned() });
        };
        // `wake` is still held here, so the channel never disconnects and this really waits.
        if woken.recv_timeout(pause).is_ok() {
            // Drain the rest of a burst before looking again.
            while woken.try_recv().is_ok() {}
        }
    }
}

/// [`wait_blocking`] as a future: file reads and the tombstone's fsync run on Tokio's
/// blocking pool, so a slow (network) filesystem never stalls the runtime's workers.
pub(crate) async fn wait_async(
    spool: &Spool,
    id: &str,
    options: &AskOptions,
    expected: Option<Expected>,
) -> Result<Reply, AskError> {
    let started = Instant::now();
    let expected = match expected {
        Some(expected) => std::sync::Arc::new(expected),
        None => {
            let (spool, id) = (spool.clone(), id.to_owned());
            std::sync::Arc::new(off_runtime(move || Expected::of(&spool, &id)).await?)
        }
    };
    let (wake, mut woken) = tokio::sync::mpsc::unbounded_channel::<()>();
    let wakers = Wakers::start(spool, options, {
        let wake = wake.clone();
        move || {
            let _ = wake.send(());
        }
    });
    let recheck = wakers.recheck();
    loop {
        let (looking, at, expecting) = (spool.clone(), id.to_owned(), expected.clone());
        if let Some(reply) = off_runtime(move || look(&looking, &at, &expecting)).await?? {
            return Ok(reply);
        }
        if let Some(reason) = options.cancel.as_ref().and_then(|token| token.reason()) {
            let (spool, id, expected) = (spool.clone(), id.to_owned(), expected.clone());
            return off_runtime(move || withdraw(&spool, &id, &reason, &expected)).await?;
        }
        let Some(pause) = pause(started, options.timeout, recheck) else {
            return Ok(Reply::TimedOut { id: id.to_owned() });
        };
        // `wake` is still held here, so `recv` never returns `None`.
        if let Ok(Some(())) = tokio::time::timeout(pause, woken.recv()).await {
            while woken.try_recv().is_ok() {}
        }
    }
}

/// Runs blocking file work on Tokio's blocking pool. A panic there is the caller's panic.
pub(crate) async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, AskError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => Ok(value),
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => Err(AskError::RuntimeShutDown),
    }
}

/// How long to sleep before looking again, or `None` when the timeout has passed.
/// What wakes a wait: file events in `answers/` and `cancel/`, and the options' cancel
/// token. Keep it alive while waiting; dropping it stops both.
struct Wakers {
    watcher: Option<notify::RecommendedWatcher>,
    _listening: Option<crate::cancel::Listening>,
}

impl Wakers {
    fn start(
        spool: &Spool,
        options: &AskOptions,
        wake: impl Fn() + Clone + Send + 'static,
    ) -> Wakers {
        Wakers {
            watcher: watch(spool, wake.clone()),
            _listening: options.cancel.as_ref().map(|token| token.on_cancel(wake)),
        }
    }

    /// How long to sleep between looks when nothing wakes the wait.
    fn recheck(&self) -> Duration {
        if self.watcher.is_some() {
            RECHECK
        } else {
            POLL
        }
    }
}

fn pause(started: Instant, timeout: Option<Duration>, recheck: Duration) -> Option<Duration> {
    match timeout {
        None => Some(recheck),
        Some(timeout) => {
            let left = timeout.saturating_sub(started.elapsed());
            (!left.is_zero()).then(|| recheck.min(left))
        }
    }
}

/// A watcher on `answers/` and `cancel/` that calls `wake` on every event, or `None` when
/// none can be had (the loop then polls).
fn watch(spool: &Spool, wake: impl Fn() + Send + 'static) -> Option<notify::RecommendedWatcher> {
    let started = (|| {
        let mut watcher =
            notify::recommended_watcher(move |_: notify::Result<notify::Event>| wake())?;
        for area in [Area::Answers, Area::Cancel] {
            watcher.watch(&spool.dir(area), RecursiveMode::NonRecursive)?;
        }
        Ok::<_, notify::Error>(watcher)
    })();
    match started {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::warn!(
                "cannot watch the spool {} ({error}); polling every {} ms instead",
                spool.root().display(),
                POLL.as_millis()
            );
            None
        }
    }
}

/// What the asker knows of the request it waits on, to check its outcome by: the
/// version it placed (the request file's SHA-256) and, with the `validate` feature, the
/// request itself, so that the answers are checked against its questions as the inbox
/// checks an operator's.
#[derive(Debug, Default)]
pub(crate) struct Expected {
    sha256: Option<String>,
    #[cfg(feature = "validate")]
    request: Option<inbox_protocol::Request>,
}

impl Expected {
    /// Read from the request file in `questions/` as it is now: for a wait on an id this
    /// asker did not just place. A request that is not there (already removed by its asker)
    /// is checked by the outcome's own fields only.
    pub(crate) fn of(spool: &Spool, id: &str) -> Expected {
        match spool.read(Area::Questions, id) {
            Ok(bytes) => Expected::placed(&bytes, id),
            Err(_) => Expected::default(),
        }
    }

    /// The request as this asker placed it: its outcome is checked against these bytes
    /// whatever `questions/` holds later, so a spool member who replaces or deletes the file
    /// cannot change what the outcome must answer.
    pub(crate) fn placed(bytes: &[u8], id: &str) -> Expected {
        // The id names the request to parse, with `validate`; without, only the hash counts.
        #[cfg(not(feature = "validate"))]
        let _ = id;
        Expected {
            sha256: Some(inbox_protocol::sha256_hex(bytes)),
            #[cfg(feature = "validate")]
            request: inbox_protocol::parse_request(bytes, Some(id)).ok(),
        }
    }

    /// Whether an outcome's dialect `reply` is checked against its answers: only with the
    /// request itself (the `validate` feature, and a request that could be read).
    fn checks_reply(&self) -> bool {
        #[cfg(feature = "validate")]
        return self.request.is_some();
        #[cfg(not(feature = "validate"))]
        false
    }

    /// Whether `outcome` may be trusted as the answer to this request.
    fn check(&self, outcome: &Outcome, id: &str) -> Result<(), String> {
        #[cfg(feature = "validate")]
        if let Some(request) = &self.request {
            return inbox_protocol::verify_outcome_for(outcome, request);
        }
        inbox_protocol::verify_outcome(outcome, id, self.sha256.as_deref())
    }
}

/// What the files say about `id` now: its outcome, its tombstone, or nothing yet. An
/// outcome file that does not answer this request (see [`Expected::check`]), or that says a
/// person answered who does not own it (`inbox_protocol::verify::verify_owner`, the rule
/// the inbox applies), is an error, never an answer. The spool's read rule has already
/// refused a file whose owner may not write into the spool at all.
pub(crate) fn look(
    spool: &Spool,
    id: &str,
    expected: &Expected,
) -> Result<Option<Reply>, AskError> {
    match spool.read_file(Area::Answers, id) {
        Ok(file) => {
            let owner = inbox_spool::account_name(file.owner);
            return Outcome::from_file_bytes(&file.bytes)
                .and_then(|outcome| expected.check(&outcome, id).map(|()| outcome))
                .and_then(|outcome| {
                    inbox_protocol::verify::verify_owner(&outcome, owner.as_deref(), file.owner)
                        .map(|()| outcome)
                })
                // Every approval it lists: a distinct account's own file, for this version
                // and these answers (the inbox's check too).
                .and_then(|outcome| {
                    inbox_protocol::approval::verify_approvals(&outcome, |account| {
                        spool.approval_as_read(id, account)
                    })
                    .map(|()| outcome)
                })
                // A reply nothing could check is not handed out: an agent acts on `reply`.
                .map(|mut outcome| {
                    if !expected.checks_reply() {
                        outcome.reply = None;
                    }
                    Some(Reply::Settled(outcome))
                })
                .map_err(|reason| AskError::BadOutcome {
                    id: id.to_owned(),
                    reason,
                });
        }
        Err(ReadError::Missing) => {}
        Err(error) => {
            return Err(AskError::BadOutcome {
                id: id.to_owned(),
                reason: error.to_string(),
            })
        }
    }
    if let Ok(tombstone) = spool.read_file(Area::Cancel, id) {
        // Only the request's placer withdraws it, as the inbox decides (inbox-engine's
        // withdrawal rule): the account that owns the request file, or this asker's own once
        // that file is gone. Another member's tombstone, or one the spool's read rule refuses
        // (a link, another account's in a private spool), leaves the request pending in the
        // inbox, so the asker goes on waiting for its outcome.
        let placer = spool
            .read_file(Area::Questions, id)
            .map(|request| request.owner)
            .unwrap_or_else(|_| inbox_spool::accounts::current_uid());
        if tombstone.owner == placer {
            let reason = Some(String::from_utf8_lossy(&tombstone.bytes).trim().to_owned())
                .filter(|reason| !reason.is_empty());
            return Ok(Some(Reply::CancelledByAsker {
                id: id.to_owned(),
                reason,
            }));
        }
    }
    Ok(None)
}

/// Places `id`'s tombstone unless it is settled, and says what stands afterwards.
pub(crate) fn withdraw(
    spool: &Spool,
    id: &str,
    reason: &str,
    expected: &Expected,
) -> Result<Reply, AskError> {
    if let Some(reply) = look(spool, id, expected)? {
        return Ok(reply);
    }
    spool
        .place_tombstone(id, reason)
        .map_err(|error| AskError::Withdraw {
            id: id.to_owned(),
            error,
        })?;
    // An inbox may have linked its outcome between the look and the tombstone; if so, that
    // outcome stands (docs/PROTOCOL.md), and the next look returns it.
    Ok(
        look(spool, id, expected)?.unwrap_or_else(|| Reply::CancelledByAsker {
            id: id.to_owned(),
            reason: Some(reason.to_owned()).filter(|r| !r.is_empty()),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A yes/no request whose bytes differ by its question.
    fn request(question: &str) -> Vec<u8> {
        serde_json::json!({"inbox": 1, "questions": [
            {"id": "go", "type": "confirm", "question": question}]})
        .to_string()
        .into_bytes()
    }

    /// An operator's answer to the request `bytes`, as its outcome file.
    fn outcome(bytes: &[u8], reply: Option<serde_json::Value>) -> Vec<u8> {
        let mut outcome = serde_json::json!({
            "inbox": 1, "id": "r1", "status": "answered", "answers": {"go": true},
            "answered_by": format!("operator:{}", inbox_spool::current_account()),
            "answered_at": "2026-12-06T00:00:00Z", "instance": "test/1",
            "request_sha256": inbox_protocol::sha256_hex(bytes),
        });
        if let Some(reply) = reply {
            outcome["reply"] = reply;
        }
        outcome.to_string().into_bytes()
    }

    /// A spool member who replaces the request file after it was placed cannot make an
    /// outcome for their own version count: the wait of the asker that placed it checks
    /// against the bytes it placed.
    #[test]
    fn an_outcome_for_a_replaced_request_does_not_answer_the_one_placed() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path()).unwrap();
        let placed = request("Deploy to staging?");
        spool.place_request("r1", &placed).unwrap();
        let expected = Expected::placed(&placed, "r1");

        let replaced = request("Deploy to production?");
        std::fs::write(spool.dir(Area::Questions).join("r1.json"), &replaced).unwrap();
        spool
            .write_outcome("r1", &outcome(&replaced, None))
            .unwrap();
        // Read as the file is now, the forged outcome would pass.
        assert!(matches!(
            look(&spool, "r1", &Expected::of(&spool, "r1")),
            Ok(Some(Reply::Settled(_)))
        ));
        match look(&spool, "r1", &expected) {
            Err(AskError::BadOutcome { reason, .. }) => {
                assert!(reason.contains("version"), "{reason}")
            }
            other => panic!("the forged outcome was taken: {other:?}"),
        }
    }

    /// A dialect `reply` nothing could check (the request is gone, or the client has no
    /// `validate`) is not handed out: an agent would act on it.
    #[test]
    fn a_reply_nothing_checked_is_not_handed_out() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path()).unwrap();
        let placed = request("Send the email?");
        spool.place_request("r1", &placed).unwrap();
        let forged = serde_json::json!({"decisions": [{"type": "approve"}]});
        spool
            .write_outcome("r1", &outcome(&placed, Some(forged)))
            .unwrap();
        std::fs::remove_file(spool.dir(Area::Questions).join("r1.json")).unwrap();
        match look(&spool, "r1", &Expected::of(&spool, "r1")) {
            Ok(Some(Reply::Settled(outcome))) => assert_eq!(outcome.reply, None),
            other => panic!("{other:?}"),
        }
    }
}
