//! The Answer Inbox engine: everything between the spool directory and a front end.
//!
//! - [`spool`]: atomic file placement, first-writer-wins outcomes, defensive reads.
//! - [`store`]: the SQLite index and event log (rebuildable from the spool).
//! - [`engine`]: ingest, settle, answer/decline/cancel; emits [`Event`]s.
//! - [`watcher`]: the loop that keeps the store in step with the spool.
//! - [`policy`]: autonomous mode and expiry, as pure decisions.
//! - [`notifier`]: telling the operator, without ever blocking the engine.
//! - [`faults`]: fault points for the reliability tests (compiled out by default).
//! - [`demo`]: demo requests to try the inbox with.
//! - [`locations`]: the default spool and database, opened safely.
//!
//! No GUI dependency lives here: the CLI and the desktop shell are thin layers over it.

pub mod demo;
pub mod engine;
pub mod event;
pub mod faults;
pub mod locations;
pub mod notifier;
pub mod policy;
pub mod spool;
pub mod store;
pub mod watcher;

pub use engine::{Engine, EngineError, SettleError};
pub use event::Event;
pub use spool::{Area, Placed, Spool, SpoolError};
pub use store::{RequestDetail, RequestSummary, State, Store, StoreError};
pub use watcher::{run, WatchOptions};
