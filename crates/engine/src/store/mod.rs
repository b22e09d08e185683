//! The operator's index and memory: a SQLite database in WAL mode.
//!
//! Holds requests, their questions, outcomes, an event log of every state change, and the
//! spool problems seen. The spool stays the truth: everything here except the event history
//! can be rebuilt by scanning it, so the database is never inside the spool (WAL is unsafe on
//! network filesystems) and losing it loses no decision.
//!
//! One [`Store`], its methods by table or use, one file each:
//! - this file: opening (migrations, WAL, a private file), batches (one transaction per
//!   burst, and what it remembers for its later rows: the log's newest entry, whether
//!   `unwritten` is empty), [`StoreError`], the instance id;
//! - `schema.rs`: the migrations, append only;
//! - `rows.rs`: the shared row types ([`State`], [`RequestSummary`], [`RequestDetail`]) and
//!   how a row becomes one;
//! - `requests.rs`: requests and their states (ingested, rejected, cancelled, blocked);
//! - `lists.rs`: the lists front ends show (pending, snoozed, history, one request);
//! - `outcomes.rs`: recorded outcomes, and those the spool refused ([`Unwritten`]);
//! - `judging.rs`: what policies read ([`PendingFacts`] by [`Due`]) and keep
//!   (judgements, the next deadline);
//! - `snoozes.rs`: the operator's snoozes; `notices.rs`: what the operator was told;
//! - `events.rs`: the event log, appended as a hash chain ([`crate::audit`]);
//! - `problems.rs`: spool problems seen;
//! - `stats.rs`: the settled requests of a period, for `answer-inbox stats`.

mod events;
mod judging;
mod lists;
mod notices;
mod outcomes;
mod problems;
mod requests;
mod rows;
mod schema;
mod snoozes;
mod stats;
#[cfg(test)]
mod tests;

pub use events::LoggedEvent;
pub use judging::{Due, PendingFacts};
pub use outcomes::Unwritten;
pub use rows::{RequestDetail, RequestSummary, State};

use std::path::Path;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use inbox_spool::{faults, locations};

use schema::migrations;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(rusqlite::Error),
    /// Another process holds a write lock for longer than [`BUSY_TIMEOUT`].
    #[error(
        "the database is locked by another process (waited {} s for it); \
         nothing was changed",
        BUSY_TIMEOUT.as_secs()
    )]
    Locked,
    #[error("database migration: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    #[error("database holds a malformed record for {id}: {message}")]
    Corrupt { id: String, message: String },
    /// The file is not one the operator alone could have written or placed (a link,
    /// another account's, writable by others), or its directory cannot be made: the
    /// message names the path and how to fix it.
    #[error("{0}")]
    Untrusted(String),
}

/// How often opening the database tries to set it up (see `Store::setup`): with the growing
/// pauses, about two seconds in all.
const SETUP_ATTEMPTS: u64 = 12;

/// How long a write waits for another process's lock before giving up.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Locked
            }
            _ => StoreError::Sqlite(error),
        }
    }
}

/// A fault point in the store fails as SQLite does when the disk fails: `SQLITE_IOERR`.
fn fault_point(name: &str) -> Result<(), StoreError> {
    faults::io_point(name).map_err(|error| {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
            Some(format!("{error} (at {name})")),
        ))
    })
}

pub struct Store {
    conn: Connection,
    /// Nesting of [`Store::batch_begin`] inside an open transaction.
    depth: u32,
    /// What the open write transaction already knows, so that a batch does not ask the
    /// database again for each row (see [`Memo`]).
    memo: Memo,
}

/// Facts a write transaction learnt or made, kept for its later statements. `BEGIN
/// IMMEDIATE` holds the database's write lock until the transaction ends, so no other
/// process changes them meanwhile; they are forgotten whenever a transaction begins or ends
/// ([`Store::forget_memo`]), and used only while one is open.
#[derive(Debug, Default)]
struct Memo {
    /// The audit log's newest entry, `(seq, hash)`, as this transaction appended it: the
    /// next entry chains to it without reading it back (events.rs).
    head: Option<(i64, String)>,
    /// Whether `unwritten` holds nothing, as this transaction found it; false once it
    /// keeps an outcome there (outcomes.rs). Nearly always empty, so recording an outcome
    /// need not delete a kept one.
    unwritten_empty: Option<bool>,
}

fn ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

impl Store {
    /// Opens (creating if needed) the database and brings its schema up to date.
    /// The file is private to its account (0600, whatever the umask): it holds every
    /// answer. SQLite gives its `-wal` and `-shm` files the same mode. A database another
    /// account could have written or placed (a link, another account's file, one others may
    /// write) is refused ([`StoreError::Untrusted`]); missing directories are made 0700.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent() {
            if !parent.as_os_str().is_empty() {
                locations::create_private_dirs(parent, locations::PRIVATE_DIR_MODE).map_err(
                    |error| {
                        StoreError::Untrusted(format!(
                            "cannot make the database's directory {}: {error}",
                            parent.display()
                        ))
                    },
                )?;
            }
        }
        let untrusted = |error: locations::LocationError| StoreError::Untrusted(error.0);
        let file = locations::open_database_file(path).map_err(untrusted)?;
        // The checked file's own path, every directory resolved: SQLite refuses any link
        // on it, so nothing swapped in after the check is followed.
        let flags = OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(file.path(), flags)?;
        file.still_there().map_err(untrusted)?;
        Self::setup(conn)
    }

    /// A private database, for tests and one-shot checks.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(mut conn: Connection) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Several processes may open a new database at the same moment (a CLI command
        // starting next to the daemon). SQLite answers some of the steps below with "busy" at
        // once rather than waiting (switching a new file to WAL; upgrading a read of the
        // schema version to a write), and two migrators may both read version 0, so that the
        // loser fails on "table already exists". Each step is harmless to repeat, and the
        // next attempt sees what the winner did: retry a few times before calling it an error.
        let mut attempt = 1;
        loop {
            match Self::prepare(&mut conn) {
                Ok(()) => {
                    return Ok(Store {
                        conn,
                        depth: 0,
                        memo: Memo::default(),
                    })
                }
                Err(_) if attempt < SETUP_ATTEMPTS => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(25 * attempt));
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// The connection's settings and the schema, brought up to date.
    fn prepare(conn: &mut Connection) -> Result<(), StoreError> {
        // WAL lets the CLI read while a daemon writes; NORMAL sync is safe against crashes of
        // the process, and a power cut can only lose rows the spool still has.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations().to_latest(conn)?;
        Ok(())
    }

    /// Starts a transaction: a burst of files is committed once, not per file. Nested calls
    /// join the open transaction.
    pub fn batch_begin(&mut self) -> Result<(), StoreError> {
        if self.conn.is_autocommit() {
            self.forget_memo();
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
        } else {
            self.depth += 1;
        }
        Ok(())
    }

    pub fn batch_commit(&mut self) -> Result<(), StoreError> {
        if self.depth > 0 {
            self.depth -= 1;
            return Ok(());
        }
        // Whether or not the commit succeeds, this transaction's facts end with it.
        self.forget_memo();
        fault_point(faults::STORE_COMMIT)?;
        self.conn.execute_batch("COMMIT")?;
        fault_point(faults::STORE_COMMITTED)?;
        Ok(())
    }

    pub fn batch_rollback(&mut self) {
        self.depth = 0;
        self.forget_memo();
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    /// Forgets what the last transaction knew ([`Memo`]): at every transaction's start and
    /// end.
    fn forget_memo(&mut self) {
        self.memo = Memo::default();
    }

    /// Whether a write transaction is open, so that [`Memo`] may be used and kept. SQLite
    /// rolls a transaction back by itself on some errors (a full disk, I/O): then this is
    /// false, and every statement is its own transaction again.
    fn in_transaction(&self) -> bool {
        !self.conn.is_autocommit()
    }

    /// This database's instance id, created on first use.
    pub fn instance_id(&self) -> Result<String, StoreError> {
        let existing: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'instance'", [], |r| {
                r.get(0)
            })
            .optional()?;
        if let Some(id) = existing {
            return Ok(id);
        }
        let id = ulid::Ulid::new().to_string();
        self.conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('instance', ?1)",
            [&id],
        )?;
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'instance'", [], |r| {
                r.get(0)
            })?)
    }
}
