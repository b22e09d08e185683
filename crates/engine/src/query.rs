//! The read side: what front ends may ask of the inbox's database, and nothing that changes
//! it. [`Queries`] borrows a connection (the engine's own, for one-shot CLI commands after a
//! scan); a [`Reader`] owns one, so a window can read beside the running loop (SQLite's WAL
//! lets readers and the one writer work at once) while every write goes through the loop
//! ([`crate::command::Command`]).

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use inbox_protocol::Request;

use crate::store::{LoggedEvent, RequestDetail, RequestSummary, State, Store, StoreError};

/// Read-only queries over a borrowed store connection.
#[derive(Clone, Copy)]
pub struct Queries<'a> {
    store: &'a Store,
}

impl<'a> Queries<'a> {
    pub(crate) fn new(store: &'a Store) -> Queries<'a> {
        Queries { store }
    }

    /// Pending requests, most urgent first, then oldest first.
    pub fn pending(&self) -> Result<Vec<RequestSummary>, StoreError> {
        self.store.pending()
    }

    pub fn pending_count(&self) -> Result<usize, StoreError> {
        self.store.pending_count()
    }

    /// Pending requests the operator snoozed, the soonest back first (not in
    /// [`Queries::pending`] until their snooze ends).
    pub fn snoozed(&self) -> Result<Vec<RequestSummary>, StoreError> {
        self.store.snoozed()
    }

    /// Pending requests that may be acted on now (not blocked, no outcome waiting to be
    /// written), each normalised, with when its file was placed; in no particular order.
    pub fn pending_requests(&self) -> Result<Vec<(Request, DateTime<Utc>)>, StoreError> {
        self.store.pending_requests(None)
    }

    /// Settled and cancelled requests, newest first.
    pub fn history(&self, limit: usize) -> Result<Vec<RequestSummary>, StoreError> {
        self.store.history(limit)
    }

    /// [`Queries::history`] with each request's questions and outcome.
    pub fn history_detailed(&self, limit: usize) -> Result<Vec<RequestDetail>, StoreError> {
        self.store.history_detailed(limit)
    }

    /// Requests refused as invalid, with their `rejected` outcomes, newest first.
    pub fn rejected_detailed(&self, limit: usize) -> Result<Vec<RequestDetail>, StoreError> {
        self.store.rejected_detailed(limit)
    }

    /// One request with its questions and, once settled, its outcome.
    pub fn detail(&self, id: &str) -> Result<Option<RequestDetail>, StoreError> {
        self.store.detail(id)
    }

    pub fn state(&self, id: &str) -> Result<Option<State>, StoreError> {
        self.store.state(id)
    }

    /// Every request id the store knows, with whether it is still pending.
    pub fn known(&self) -> Result<HashMap<String, bool>, StoreError> {
        self.store.known()
    }

    /// Files that are not requests: (path, reason, first seen).
    pub fn problems(&self) -> Result<Vec<(String, String, DateTime<Utc>)>, StoreError> {
        self.store.problems()
    }

    /// The earliest deadline of a pending request.
    pub fn next_deadline(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        self.store.next_deadline()
    }

    /// The outcome kept for `id` because the spool would not take it, with the last error.
    pub fn unwritten(&self, id: &str) -> Result<Option<crate::store::Unwritten>, StoreError> {
        self.store.unwritten(id)
    }

    /// Requests settled or cancelled at or after `since` (not rejected ones), each with its
    /// outcome and judgement, oldest settled first: what `answer-inbox stats` counts.
    pub fn settled_since(&self, since: DateTime<Utc>) -> Result<Vec<RequestDetail>, StoreError> {
        self.store.settled_since(since)
    }

    /// The event log of one request, oldest first.
    pub fn events_of(&self, id: &str) -> Result<Vec<LoggedEvent>, StoreError> {
        self.store.events_of(id)
    }
}

/// A connection of its own to the inbox's database, for reading only.
pub struct Reader {
    store: Store,
}

impl Reader {
    /// Opens the database (it must be the one a loop runs on; opening creates and migrates
    /// it when it is new, as the loop would).
    pub fn open(db: &Path) -> Result<Reader, StoreError> {
        Ok(Reader {
            store: Store::open(db)?,
        })
    }

    pub fn queries(&self) -> Queries<'_> {
        Queries::new(&self.store)
    }
}
