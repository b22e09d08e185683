//! [`CancelToken`]: how an asker withdraws a question it is waiting on.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A cheap, clonable switch that withdraws a waiting [`ask`](crate::Asker::ask).
///
/// Give a clone to [`AskOptions::cancel`](crate::AskOptions::cancel) and keep another; calling
/// [`cancel`](CancelToken::cancel) from any thread or task wakes the waiting call at once. The
/// call then places the request's tombstone (`cancel/<id>`, holding the reason), so the
/// operator's inbox takes the question off the list, and returns
/// [`Reply::CancelledByAsker`](crate::Reply::CancelledByAsker), unless an outcome was already
/// written: that one stands and is returned instead.
///
/// A token is cancelled once; the first reason is kept. One token may serve several calls
/// (cancelling it withdraws all of them).
///
/// ```
/// use inbox_client::CancelToken;
///
/// let token = CancelToken::new();
/// let handle = token.clone();
/// std::thread::spawn(move || handle.cancel("the build was aborted")).join().unwrap();
/// assert!(token.is_cancelled());
/// assert_eq!(token.reason().as_deref(), Some("the build was aborted"));
/// assert!(!token.cancel("a second reason"), "only the first cancel counts");
/// ```
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    reason: Option<String>,
    next_key: u64,
    /// Wake-ups of the calls waiting on this token, run once when it is cancelled.
    listeners: Vec<(u64, Box<dyn FnOnce() + Send>)>,
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels, recording `reason` (written into the tombstone and shown in the inbox's
    /// history; may be empty). Returns `false` if the token was already cancelled.
    pub fn cancel(&self, reason: impl Into<String>) -> bool {
        let listeners = {
            let mut state = self.lock();
            if state.reason.is_some() {
                return false;
            }
            state.reason = Some(reason.into());
            std::mem::take(&mut state.listeners)
        };
        // Outside the lock: a wake-up may take it again (a listener dropping its guard).
        for (_, wake) in listeners {
            wake();
        }
        true
    }

    pub fn is_cancelled(&self) -> bool {
        self.lock().reason.is_some()
    }

    /// The reason given to [`cancel`](CancelToken::cancel), once cancelled.
    pub fn reason(&self) -> Option<String> {
        self.lock().reason.clone()
    }

    /// Resolves once the token is cancelled (at once if it already is).
    pub async fn cancelled(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let _listening = self.on_cancel(move || {
            let _ = tx.send(());
        });
        // The sender lives in the listener until the token is cancelled, so an error here
        // cannot happen while `_listening` is held.
        let _ = rx.await;
    }

    /// Runs `wake` when the token is cancelled, or now if it already is. The wake-up is
    /// forgotten when the returned guard is dropped, so finished calls leave nothing behind.
    pub(crate) fn on_cancel(&self, wake: impl FnOnce() + Send + 'static) -> Listening {
        let mut state = self.lock();
        if state.reason.is_some() {
            drop(state);
            wake();
            return Listening {
                token: None,
                key: 0,
            };
        }
        let key = state.next_key;
        state.next_key += 1;
        state.listeners.push((key, Box::new(wake)));
        Listening {
            token: Some(self.clone()),
            key,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked: each change is one assignment.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("CancelToken")
            .field("reason", &state.reason)
            .field("waiting", &state.listeners.len())
            .finish()
    }
}

/// Keeps a wake-up registered with a [`CancelToken`]; dropping it unregisters it.
pub(crate) struct Listening {
    token: Option<CancelToken>,
    key: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(token) = &self.token {
            token.lock().listeners.retain(|(key, _)| *key != self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn listeners_run_once_and_dropped_ones_never() {
        let token = CancelToken::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = |runs: &Arc<AtomicUsize>| {
            let runs = runs.clone();
            move || {
                runs.fetch_add(1, Ordering::SeqCst);
            }
        };
        let kept = token.on_cancel(counter(&runs));
        drop(token.on_cancel(counter(&runs)));
        assert!(token.cancel("stop"));
        assert!(!token.cancel("again"));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        drop(kept);
        // Registered after the fact: runs at once.
        let _late = token.on_cancel(counter(&runs));
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert_eq!(token.reason().as_deref(), Some("stop"));
        assert!(token.lock().listeners.is_empty());
    }

    #[test]
    fn cancelled_resolves_when_another_thread_cancels() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let token = CancelToken::new();
        let other = token.clone();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            other.cancel("")
        });
        runtime.block_on(token.cancelled());
        assert!(thread.join().unwrap());
        runtime.block_on(token.cancelled());
    }
}
