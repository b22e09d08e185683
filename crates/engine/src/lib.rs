//! The Answer Inbox engine: everything between the spool directory and a front end.
//!
//! - [`spool`], [`faults`]: the spool's file operations and fault points, from `inbox-spool`
//!   (re-exported: the engine's API takes and gives its types).
//! - [`store`]: the SQLite index and event log (rebuildable from the spool), one file per
//!   table or use.
//! - [`engine`]: the [`Engine`] and its loop step [`Engine::turn`]; ingest, integrity checks,
//!   settling, the operator's writes and snoozes, one file each; emits [`Event`]s.
//! - `results`: what the engine's calls give back ([`EngineError`], [`SettleError`],
//!   [`Snoozed`]), a leaf module so the engine and [`command`] do not import each other.
//! - [`watcher`]: the loop that keeps the store in step with the spool, one
//!   [`Engine::turn`] at a time.
//! - [`command`]: the closed set of writes a front end sends into the loop, with replies.
//! - [`query`]: the read side of the database, for front ends.
//! - [`policy`]: all of the engine's policy handling: the operator's policy applied to one
//!   request (autonomous mode, expiry, a rule's delay, escalation) as pure decisions; the
//!   engine's steps that judge requests and take timed steps; [`policy::source`]: the
//!   policy file, kept in force and noticed when it changes; [`policy::escalation`]:
//!   running an escalation command.
//! - [`notifier`]: telling the operator, without ever blocking the engine.
//! - [`alike`]: requests that ask the same questions, as groups.
//! - [`audit`]: the event log as a hash chain.
//! - [`event`]: the events front ends consume.
//! - [`demo`]: demo requests to try the inbox with.
//! - [`operator`]: who the operator is, as `answered_by` records it.
//! - [`locations`]: the default spool and database, opened safely as one engine.
//!
//! No GUI dependency lives here: the CLI and the desktop shell are thin layers over it.

pub mod alike;
pub mod audit;
pub mod command;
pub mod demo;
pub mod engine;
pub mod event;
pub mod locations;
pub mod notifier;
pub mod operator;
pub mod policy;
pub mod query;
mod results;
pub mod store;
pub mod watcher;

pub use command::Command;
pub use engine::{Engine, Wake, MIN_VERSION_PREFIX};
pub use event::Event;
pub use inbox_policy;
pub use inbox_spool::{
    account_name, faults, spool, Area, Placed, Spool, SpoolError, Trust, TEAM_POLICY,
};
pub use policy::source::{PolicyChange, PolicySource};
pub use query::{Queries, Reader};
pub use results::{EngineError, SettleError, Snoozed};
pub use store::{PendingFacts, RequestDetail, RequestSummary, State, Store, StoreError};
pub use watcher::{run, run_with_commands, WatchOptions};
