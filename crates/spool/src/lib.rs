//! The spool: the wire between askers and inboxes, and the source of truth.
//!
//! Every file operation on a spool lives here, for both sides of it: the asker's
//! (`inbox-client`: place a request, read its outcome, place a tombstone) and the inbox's
//! (`inbox-engine`: scan, read defensively, link outcomes first-writer-wins, reap `tmp/`).
//!
//! - [`spool`]: atomic placement, first-writer-wins outcomes, safe reads, scans, reaping.
//! - [`locations`]: the default spool and database paths, and opening a spool safely.
//! - [`faults`]: fault points for the reliability tests (compiled out by default).
//!
//! It depends on the protocol's plain data (ids, limits) only: no SQLite, no D-Bus, no
//! async runtime, so an asker that links it stays small.

pub mod faults;
pub mod locations;
pub mod spool;

pub use spool::{
    classify, read_capped, read_capped_with_time, Area, Entry, Listing, Placed, ReadError, Spool,
    SpoolError, SpoolProblem, TMP_MAX_AGE,
};
