//! The spool: the wire between askers and inboxes, and the source of truth.
//!
//! Every file operation on a spool lives here, for both sides of it: the asker's
//! (`inbox-client`: place a request, read its outcome, place a tombstone) and the inbox's
//! (`inbox-engine`: scan, read defensively, link outcomes first-writer-wins, reap `tmp/`).
//!
//! A spool is opened safely or not at all. Its root and four directories (`questions/`,
//! `answers/`, `cancel/`, `tmp/`) are opened once with `O_DIRECTORY | O_NOFOLLOW` and every
//! later operation goes through those handles, so no symbolic link is ever followed. A
//! directory that holds anything else than those and the marker file
//! `.answer-inbox-spool` is not a spool, and is refused before anything in it is touched.
//! Files are read only when they are regular, have one name, and belong to an account the
//! spool trusts ([`Trust`]): its own (private, the default) or its team group's members.
//!
//! - [`spool`]: the [`Spool`]: atomic placement, first-writer-wins outcomes, scans, reaping.
//! - [`dir`]: opening a spool: the checks, the marker, creating what is missing.
//! - [`read`]: defensive reads, and the path-based [`read_capped`] for files outside a spool.
//! - [`trust`]: private and team spools: modes, whose files are read, warnings.
//! - [`accounts`]: account and group names and membership.
//! - [`locations`]: the default spool and database paths, and opening a spool safely.
//! - [`faults`]: fault points for the reliability tests (compiled out by default).
//!
//! It depends on the protocol's plain data (ids, limits) only: no SQLite, no D-Bus, no
//! async runtime, so an asker that links it stays small.

pub mod accounts;
pub mod dir;
mod error;
mod facts;
pub mod faults;
pub mod locations;
pub mod read;
pub mod spool;
pub mod trust;

#[cfg(test)]
mod safety_tests;

pub use accounts::{account_name, current_account};
pub use dir::{MARKER, TEAM_POLICY};
pub use read::{read_capped, read_capped_with_time, ReadError, SpoolFile};
pub use spool::{
    classify, Area, Entry, Listing, Placed, Spool, SpoolError, SpoolProblem, TMP_LINKED_MAX_AGE,
    TMP_MAX_AGE,
};
pub use trust::Trust;
