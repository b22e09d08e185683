//! The engine's loop on a thread of its own: the one way a long-running front end runs it.
//! The desktop app (through [`crate::Background`]) and `answer-inbox watch` both host their
//! loop here, so they start it, stop it between two batches and hear of a loop that failed
//! alike.

use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use inbox_engine::{Command, Engine, EngineError, WatchOptions};

/// A running loop. [`LoopHost::wait`] waits for it to end; dropping the host stops it and
/// waits for it.
pub struct LoopHost {
    stop: Stopper,
    thread: Option<JoinHandle<Result<(), EngineError>>>,
}

/// Stops a hosted loop between two batches, never inside one. Cheap to clone, and safe to
/// call from a signal handler's thread.
#[derive(Clone)]
pub struct Stopper(Sender<()>);

impl Stopper {
    pub fn stop(&self) {
        // A full channel means a stop is already on its way.
        let _ = self.0.try_send(());
    }
}

impl LoopHost {
    /// Runs `engine`'s loop (its events and notifier already given to it) on a thread named
    /// `engine`, doing the `commands` it is sent; `crossbeam_channel::never()` for none.
    /// `on_failure` hears the error of a loop that ended by itself (only a watcher that
    /// cannot start ends it: everything else is waited out inside the loop).
    pub fn start(
        mut engine: Engine,
        options: WatchOptions,
        commands: Receiver<Command>,
        on_failure: impl FnOnce(&EngineError) + Send + 'static,
    ) -> std::io::Result<LoopHost> {
        let (stop, stopped) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new()
            .name("engine".into())
            .spawn(move || {
                let result =
                    inbox_engine::run_with_commands(&mut engine, &options, &commands, &stopped);
                if let Err(error) = &result {
                    tracing::error!("the engine stopped: {error}");
                    on_failure(error);
                }
                // The engine is dropped here, before the thread ends: that closes its event
                // channel, which is how its listeners learn that it is gone.
                drop(engine);
                result
            })?;
        Ok(LoopHost {
            stop: Stopper(stop),
            thread: Some(thread),
        })
    }

    /// A handle that stops this loop from elsewhere (a signal handler).
    pub fn stopper(&self) -> Stopper {
        self.stop.clone()
    }

    /// Waits until the loop ends, by a [`Stopper`] or by a failure, and says which.
    pub fn wait(mut self) -> Result<(), EngineError> {
        self.join()
    }

    fn join(&mut self) -> Result<(), EngineError> {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            // The loop panicked: the panic was already printed; there is nothing to return.
            Some(Err(_)) => Ok(()),
            None => Ok(()),
        }
    }
}

impl Drop for LoopHost {
    fn drop(&mut self) {
        self.stop.stop();
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_hosted_loop_runs_until_stopped_and_reports_ready() {
        let dir = tempfile::tempdir().unwrap();
        let engine = inbox_engine::locations::open_engine(
            &dir.path().join("spool"),
            &dir.path().join("inbox.db"),
        )
        .unwrap();
        let (events_tx, events) = crossbeam_channel::unbounded();
        let engine = engine.with_events(events_tx);
        let host = LoopHost::start(
            engine,
            WatchOptions::default(),
            crossbeam_channel::never(),
            |_| panic!("the loop must not fail"),
        )
        .unwrap();
        let ready = events.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(
            matches!(ready, inbox_engine::Event::Ready { pending: 0 }),
            "{ready:?}"
        );
        host.stopper().stop();
        host.wait().unwrap();
        // The engine is gone with its loop: its event channel is closed, not just quiet.
        assert_eq!(
            events.recv_timeout(Duration::from_secs(30)),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        );
    }
}
