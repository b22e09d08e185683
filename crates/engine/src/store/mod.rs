//! The operator's index and memory: a SQLite database in WAL mode.
//!
//! Holds requests, their questions, outcomes, an event log of every state change, and the
//! spool problems seen. The spool stays the truth: everything here except the event history
//! can be rebuilt by scanning it, so the database is never inside the spool (WAL is unsafe on
//! network filesystems) and losing it loses no decision.

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use chrono::{DateTime, Utc};
use inbox_protocol::{Mode, Outcome, OutcomeStatus, Priority, Problem, Request, Source};
use rusqlite::{params, Connection, OptionalExtension};
use rusqlite_migration::{Migrations, M};
use serde::Serialize;

use inbox_spool::faults;

use crate::audit;
use crate::policy::Judgement;

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

/// Schema history. Append only: a released migration is never edited.
fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE requests (
             id TEXT PRIMARY KEY,
             status TEXT NOT NULL,           -- pending, cancelled, or an outcome status
             title TEXT NOT NULL,
             source_json TEXT NOT NULL,
             priority INTEGER NOT NULL,      -- 0 low .. 3 critical
             mode TEXT NOT NULL,
             question_count INTEGER NOT NULL,
             placed_at INTEGER NOT NULL,     -- ms since the epoch, from the file's mtime
             ingested_at INTEGER NOT NULL,
             deadline INTEGER,
             request_json TEXT,              -- the normalised request; NULL when rejected
             sha256 TEXT,
             notified INTEGER NOT NULL DEFAULT 0,
             settled_at INTEGER
         );
         CREATE INDEX requests_by_status ON requests (status, priority, placed_at);
         CREATE INDEX requests_deadline ON requests (deadline) WHERE status = 'pending';
         CREATE TABLE questions (
             request_id TEXT NOT NULL REFERENCES requests (id),
             position INTEGER NOT NULL,
             question_id TEXT NOT NULL,
             type TEXT NOT NULL,
             question TEXT NOT NULL,
             required INTEGER NOT NULL,
             PRIMARY KEY (request_id, position)
         );
         CREATE TABLE outcomes (
             request_id TEXT PRIMARY KEY REFERENCES requests (id),
             status TEXT NOT NULL,
             answered_by TEXT NOT NULL,
             answered_at TEXT NOT NULL,
             instance TEXT NOT NULL,
             outcome_json TEXT NOT NULL
         );
         CREATE TABLE events (
             seq INTEGER PRIMARY KEY,
             at INTEGER NOT NULL,
             request_id TEXT,
             kind TEXT NOT NULL,
             detail TEXT NOT NULL
         );
         CREATE INDEX events_by_request ON events (request_id);
         CREATE TABLE problems (
             path TEXT PRIMARY KEY,
             reason TEXT NOT NULL,
             first_seen INTEGER NOT NULL
         );",
        ),
        // Finding the requests not announced yet must not scan every pending row: with
        // thousands pending, the loop asks after every batch.
        M::up(
            "CREATE INDEX requests_unnotified ON requests (priority, placed_at)
             WHERE status = 'pending' AND notified = 0 AND request_json IS NOT NULL;",
        ),
        // Outcomes decided but not yet in the spool (its answers directory was read-only or
        // full): kept here and retried until written, so no answer is lost. The request stays
        // pending until the file exists; policies leave it alone meanwhile.
        M::up(
            "CREATE TABLE unwritten (
                 request_id TEXT PRIMARY KEY REFERENCES requests (id),
                 outcome_json TEXT NOT NULL,
                 kept_at INTEGER NOT NULL,
                 attempts INTEGER NOT NULL,
                 last_error TEXT NOT NULL
             );",
        ),
        // A pending request nobody may answer here, and why: its file changed after it was
        // placed, or an invalid outcome file stands in its place. Policies leave it alone.
        M::up("ALTER TABLE requests ADD COLUMN blocked TEXT;"),
        // The event log becomes a hash chain (crate::audit): each entry carries the hash of
        // the one before. Entries already written are chained here, in the migration's
        // transaction, so the chain covers all history from entry 1 on; from now on
        // `Store::log` extends it as it appends.
        M::up_with_hook(
            "ALTER TABLE events ADD COLUMN prev_hash TEXT;
             ALTER TABLE events ADD COLUMN hash TEXT;",
            |tx: &rusqlite::Transaction| -> rusqlite_migration::HookResult {
                chain_existing_events(tx)?;
                Ok(())
            },
        ),
        // The operator's policy (crate::rules): who placed the file (a rule may match on
        // the account), what the policy made of the request (`judgement`, JSON), when its
        // next timed step is due and how many such steps were taken; and the operator's
        // snooze.
        M::up(
            "ALTER TABLE requests ADD COLUMN placed_by TEXT;
             ALTER TABLE requests ADD COLUMN judgement TEXT;
             ALTER TABLE requests ADD COLUMN policy_due INTEGER;
             ALTER TABLE requests ADD COLUMN policy_step INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE requests ADD COLUMN snoozed_until INTEGER;",
        ),
    ])
}

/// A request's state in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Pending,
    Cancelled,
    Settled(OutcomeStatus),
}

impl State {
    /// `pending`, `cancelled`, or the outcome status.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Cancelled => "cancelled",
            State::Settled(status) => status.as_str(),
        }
    }

    fn parse(text: &str) -> Option<State> {
        match text {
            "pending" => Some(State::Pending),
            "cancelled" => Some(State::Cancelled),
            other => OutcomeStatus::parse(other).map(State::Settled),
        }
    }
}

impl Serialize for State {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A summary row, for lists.
#[derive(Debug, Clone, Serialize)]
pub struct RequestSummary {
    pub id: String,
    pub state: State,
    pub title: String,
    pub source: Source,
    pub priority: Priority,
    /// `autonomous` requests that are still pending are blocked on a person.
    pub mode: Mode,
    pub question_count: usize,
    pub placed_at: DateTime<Utc>,
    pub deadline: Option<DateTime<Utc>>,
    pub settled_at: Option<DateTime<Utc>>,
    pub answered_by: Option<String>,
    /// Set while an outcome decided for this pending request waits to be written to the
    /// spool: why the last attempt failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unwritten: Option<String>,
    /// Set while a pending request is blocked: nobody may answer it here, and why (its file
    /// changed after it was placed, or an invalid outcome file stands in its place).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// The OS account that owns the request file (who placed it), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placed_by: Option<String>,
    /// What the operator's policy made of a pending request: which rule, whether its
    /// autonomous mode was held and why, what happens next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judgement: Option<Judgement>,
    /// Set while the operator has snoozed the request: it is out of the pending list until
    /// then, and announced again when the snooze ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snoozed_until: Option<DateTime<Utc>>,
}

/// A pending request as the policy judges it (see [`Store::pending_facts`]).
#[derive(Debug, Clone)]
pub struct PendingFacts {
    pub request: Request,
    pub placed_at: DateTime<Utc>,
    pub placed_by: Option<String>,
    /// How many of its policy's timed steps were taken.
    pub policy_step: u32,
    pub snoozed_until: Option<DateTime<Utc>>,
    /// What the policy made of it last time, if it was judged.
    pub judgement: Option<Judgement>,
}

/// Which pending requests [`Store::pending_facts`] gives.
#[derive(Debug, Clone, Copy)]
pub enum Due {
    All,
    /// Those whose policy's next timed step is due by then.
    Step(DateTime<Utc>),
    /// Those whose own expiry passed by then.
    Expiry(DateTime<Utc>),
    /// Those no policy has judged yet: taken in by another process (a CLI command syncs,
    /// and leaves the policy to the running inbox).
    Unjudged,
}

/// An outcome kept in the store because the spool would not take it yet.
#[derive(Debug, Clone)]
pub struct Unwritten {
    pub outcome: Outcome,
    pub kept_at: DateTime<Utc>,
    pub attempts: u32,
    pub last_error: String,
}

/// Everything known about one request.
#[derive(Debug, Clone, Serialize)]
pub struct RequestDetail {
    #[serde(flatten)]
    pub summary: RequestSummary,
    pub request: Option<Request>,
    pub outcome: Option<Outcome>,
}

/// One entry of the event log.
#[derive(Debug, Clone, Serialize)]
pub struct LoggedEvent {
    pub at: DateTime<Utc>,
    pub request_id: Option<String>,
    pub kind: String,
    pub detail: serde_json::Value,
}

pub struct Store {
    conn: Connection,
    /// Nesting of [`Store::batch_begin`] inside an open transaction.
    depth: u32,
}

fn ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

fn priority_rank(priority: Priority) -> i64 {
    match priority {
        Priority::Low => 0,
        Priority::Normal => 1,
        Priority::High => 2,
        Priority::Critical => 3,
    }
}

fn priority_of(rank: i64) -> Priority {
    match rank {
        0 => Priority::Low,
        2 => Priority::High,
        3 => Priority::Critical,
        _ => Priority::Normal,
    }
}

const SUMMARY_COLUMNS: &str = "r.id, r.status, r.title, r.source_json, r.priority, \
     r.question_count, r.placed_at, r.deadline, r.settled_at, o.answered_by, r.mode, \
     u.last_error, r.blocked, r.placed_by, r.judgement, r.snoozed_until";

/// The tables every summary reads from.
const SUMMARY_FROM: &str = "requests r LEFT JOIN outcomes o ON o.request_id = r.id \
     LEFT JOIN unwritten u ON u.request_id = r.id";

impl Store {
    /// Opens (creating if needed) the database and brings its schema up to date.
    /// The file is private to its account (0600, whatever the umask): it holds every
    /// answer. SQLite gives its `-wal` and `-shm` files the same mode.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent() {
            if !parent.as_os_str().is_empty() && !parent.exists() {
                let _ = std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent);
            }
        }
        let conn = Connection::open(path)?;
        make_private(path);
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
                Ok(()) => return Ok(Store { conn, depth: 0 }),
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
        fault_point(faults::STORE_COMMIT)?;
        self.conn.execute_batch("COMMIT")?;
        fault_point(faults::STORE_COMMITTED)?;
        Ok(())
    }

    pub fn batch_rollback(&mut self) {
        self.depth = 0;
        let _ = self.conn.execute_batch("ROLLBACK");
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

    /// Every known request id and whether it is still pending: what a scan compares the
    /// spool against, so known files are not read again.
    pub fn known(&self) -> Result<HashMap<String, bool>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, status = 'pending' FROM requests")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ids of cancelled requests: a scan still looks for their outcome files.
    pub fn cancelled_ids(&self) -> Result<std::collections::HashSet<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM requests WHERE status = 'cancelled'")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn state(&self, id: &str) -> Result<Option<State>, StoreError> {
        let status: Option<String> = self
            .conn
            .prepare_cached("SELECT status FROM requests WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        Ok(status.as_deref().and_then(State::parse))
    }

    /// Records a valid request as pending.
    pub fn insert_pending(
        &mut self,
        id: &str,
        request: &Request,
        placed_at: DateTime<Utc>,
        placed_by: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let request_json = serde_json::to_string(request).expect("requests serialise");
        let source_json = serde_json::to_string(&request.source).expect("sources serialise");
        let deadline = request.deadline(placed_at).map(ms);
        self.conn
            .prepare_cached(
                "INSERT INTO requests (id, status, title, source_json, priority, mode,
                     question_count, placed_at, ingested_at, deadline, request_json, sha256,
                     placed_by)
                 VALUES (?1, 'pending', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?
            .execute(params![
                id,
                request.display_title(),
                source_json,
                priority_rank(request.priority),
                serde_json::to_value(request.mode)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned)),
                request.questions.len() as i64,
                ms(placed_at),
                ms(now),
                deadline,
                request_json,
                request.sha256,
                placed_by,
            ])?;
        let mut insert_question = self.conn.prepare_cached(
            "INSERT INTO questions (request_id, position, question_id, type, question, required)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (position, question) in request.questions.iter().enumerate() {
            insert_question.execute(params![
                id,
                position as i64,
                question.id,
                question.wire_type.as_str(),
                question.question,
                question.required,
            ])?;
        }
        drop(insert_question);
        self.log(
            Some(id),
            "ingested",
            &serde_json::json!({"title": request.display_title()}),
            now,
        )
    }

    /// Records a request that could not be accepted; its outcome follows via
    /// [`Store::record_outcome`].
    pub fn insert_rejected(
        &mut self,
        id: &str,
        errors: &[Problem],
        placed_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO requests (id, status, title, source_json, priority, mode,
                     question_count, placed_at, ingested_at)
                 VALUES (?1, 'pending', ?2, '{}', 1, 'interactive', 0, ?3, ?4)",
            )?
            .execute(params![
                id,
                format!("(invalid request {id})"),
                ms(placed_at),
                ms(now)
            ])?;
        self.log(
            Some(id),
            "rejected",
            &serde_json::json!({ "errors": errors }),
            now,
        )
    }

    /// Records an outcome for a pending request, or for a cancelled one whose outcome a
    /// racing writer linked after the tombstone (the outcome file stands). Returns false,
    /// changing nothing, when the request is unknown or already settled: outcomes are
    /// recorded once.
    pub fn record_outcome(
        &mut self,
        outcome: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE requests SET status = ?2, settled_at = ?3
                 WHERE id = ?1 AND status IN ('pending', 'cancelled')",
            )?
            .execute(params![outcome.id, outcome.status.as_str(), ms(now)])?;
        if changed == 0 {
            return Ok(false);
        }
        self.forget_unwritten(&outcome.id)?;
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO outcomes
                     (request_id, status, answered_by, answered_at, instance, outcome_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                outcome.id,
                outcome.status.as_str(),
                outcome.answered_by,
                outcome.answered_at.to_rfc3339(),
                outcome.instance,
                serde_json::to_string(outcome).expect("outcomes serialise"),
            ])?;
        // "rejected" was logged with the errors at ingest; the rest are logged here with who.
        if outcome.status != OutcomeStatus::Rejected {
            let mut detail = serde_json::json!({
                "answered_by": outcome.answered_by,
                "instance": outcome.instance,
                "reason": outcome.reason,
            });
            // Where, when the outcome says: the log names the paired device an answer came
            // from, so a stolen phone's answers can be found.
            if let Some(surface) = outcome.surface {
                detail["surface"] = surface.as_str().into();
            }
            if let Some(device) = &outcome.device {
                detail["device"] = device.as_str().into();
            }
            self.log(Some(&outcome.id), outcome.status.as_str(), &detail, now)?;
        }
        Ok(true)
    }

    /// Marks a pending request cancelled by its asker. False if it was not pending.
    pub fn mark_cancelled(
        &mut self,
        id: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE requests SET status = 'cancelled', settled_at = ?2
                 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![id, ms(now)])?;
        if changed > 0 {
            // An answer still waiting to be written never reached the asker: the cancel wins.
            self.forget_unwritten(id)?;
            self.log(
                Some(id),
                "cancelled",
                &serde_json::json!({ "reason": reason }),
                now,
            )?;
        }
        Ok(changed > 0)
    }

    /// Pending requests the operator has not been told about yet, with their normalised
    /// request (a notification's answer buttons need its questions); not those snoozed.
    pub fn unnotified(&self, now: DateTime<Utc>) -> Result<Vec<RequestDetail>, StoreError> {
        self.details(
            "WHERE r.status = 'pending' AND r.notified = 0 AND r.request_json IS NOT NULL
               AND (r.snoozed_until IS NULL OR r.snoozed_until <= ?1)
             ORDER BY r.priority DESC, r.placed_at",
            [ms(now)],
        )
    }

    /// Marks requests as told about (announced, or silent by the policy). `announced`:
    /// whether a notice goes out, which the log says.
    pub fn mark_notified(
        &mut self,
        ids: &[&str],
        announced: bool,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut mark = self
            .conn
            .prepare_cached("UPDATE requests SET notified = 1 WHERE id = ?1")?;
        for id in ids {
            mark.execute([id])?;
        }
        drop(mark);
        let detail = if announced {
            serde_json::json!({ "ids": ids })
        } else {
            serde_json::json!({ "ids": ids, "silent": true })
        };
        self.log(None, "notified", &detail, now)
    }

    /// Keeps an outcome the spool would not take. True the first time for this request;
    /// later calls count the attempt and remember the newest error.
    pub fn keep_unwritten(
        &mut self,
        outcome: &Outcome,
        error: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let updated = self
            .conn
            .prepare_cached(
                "UPDATE unwritten SET attempts = attempts + 1, last_error = ?2
                 WHERE request_id = ?1",
            )?
            .execute(params![outcome.id, error])?;
        if updated > 0 {
            return Ok(false);
        }
        self.conn
            .prepare_cached(
                "INSERT INTO unwritten (request_id, outcome_json, kept_at, attempts, last_error)
                 VALUES (?1, ?2, ?3, 1, ?4)",
            )?
            .execute(params![
                outcome.id,
                serde_json::to_string(outcome).expect("outcomes serialise"),
                ms(now),
                error
            ])?;
        self.log(
            Some(&outcome.id),
            "unwritten",
            &serde_json::json!({
                "status": outcome.status.as_str(),
                "answered_by": outcome.answered_by,
                "error": error,
            }),
            now,
        )?;
        Ok(true)
    }

    /// The outcome kept for a request, if one waits to be written.
    pub fn unwritten(&self, id: &str) -> Result<Option<Unwritten>, StoreError> {
        Ok(self
            .unwritten_where("WHERE request_id = ?1", [id])?
            .into_iter()
            .next())
    }

    /// Every outcome waiting to be written, oldest first.
    pub fn all_unwritten(&self) -> Result<Vec<Unwritten>, StoreError> {
        self.unwritten_where("ORDER BY kept_at", [])
    }

    fn unwritten_where<P: rusqlite::Params>(
        &self,
        tail: &str,
        params: P,
    ) -> Result<Vec<Unwritten>, StoreError> {
        let sql = format!(
            "SELECT request_id, outcome_json, kept_at, attempts, last_error FROM unwritten {tail}"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params, |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        let mut kept = Vec::new();
        for row in rows {
            let (id, json, kept_at, attempts, last_error) = row?;
            let outcome = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                id,
                message: e.to_string(),
            })?;
            kept.push(Unwritten {
                outcome,
                kept_at: from_ms(kept_at),
                attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
                last_error,
            });
        }
        Ok(kept)
    }

    fn forget_unwritten(&mut self, id: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM unwritten WHERE request_id = ?1")?
            .execute([id])?;
        Ok(())
    }

    /// Pending requests, most urgent first, then oldest first; not those the operator
    /// snoozed (see [`Store::snoozed`]).
    pub fn pending(&self) -> Result<Vec<RequestSummary>, StoreError> {
        self.summaries(
            "WHERE r.status = 'pending'
               AND (r.snoozed_until IS NULL OR r.snoozed_until <= ?1)
             ORDER BY r.priority DESC, r.placed_at",
            [ms(Utc::now())],
        )
    }

    /// Pending requests the operator snoozed, the soonest back first.
    pub fn snoozed(&self) -> Result<Vec<RequestSummary>, StoreError> {
        self.summaries(
            "WHERE r.status = 'pending' AND r.snoozed_until > ?1 ORDER BY r.snoozed_until",
            [ms(Utc::now())],
        )
    }

    /// The ids of every pending request, snoozed or not.
    pub fn open_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM requests WHERE status = 'pending'")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many requests are pending (the tray's count): not those snoozed.
    pub fn pending_count(&self) -> Result<usize, StoreError> {
        let count: i64 = self.conn.query_row(
            "SELECT count(*) FROM requests WHERE status = 'pending'
               AND (snoozed_until IS NULL OR snoozed_until <= ?1)",
            [ms(Utc::now())],
            |row| row.get(0),
        )?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// Settled and cancelled requests, newest first.
    pub fn history(&self, limit: usize) -> Result<Vec<RequestSummary>, StoreError> {
        self.summaries(
            "WHERE r.status != 'pending' ORDER BY r.settled_at DESC LIMIT ?1",
            [limit as i64],
        )
    }

    /// Settled and cancelled requests, newest first, each with its outcome and (when it was
    /// valid) its normalised request, for a history view that shows the answers.
    pub fn history_detailed(&self, limit: usize) -> Result<Vec<RequestDetail>, StoreError> {
        self.details(
            "WHERE r.status != 'pending' ORDER BY r.settled_at DESC LIMIT ?1",
            [limit as i64],
        )
    }

    /// Requests whose file was invalid (a `rejected` outcome), newest first.
    pub fn rejected_detailed(&self, limit: usize) -> Result<Vec<RequestDetail>, StoreError> {
        self.details(
            "WHERE r.status = 'rejected' ORDER BY r.settled_at DESC LIMIT ?1",
            [limit as i64],
        )
    }

    /// Summaries with the stored request and outcome, for the rows `tail` selects.
    fn details<P: rusqlite::Params>(
        &self,
        tail: &str,
        params: P,
    ) -> Result<Vec<RequestDetail>, StoreError> {
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS}, r.request_json, o.outcome_json FROM {SUMMARY_FROM} {tail}"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params, |r| {
            Ok((
                summary_from_row(r)?,
                r.get::<_, Option<String>>(16)?,
                r.get::<_, Option<String>>(17)?,
            ))
        })?;
        let mut details = Vec::new();
        for row in rows {
            let (summary, request_json, outcome_json) = row?;
            details.push(detail_from_json(summary, request_json, outcome_json)?);
        }
        Ok(details)
    }

    fn summaries<P: rusqlite::Params>(
        &self,
        tail: &str,
        params: P,
    ) -> Result<Vec<RequestSummary>, StoreError> {
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM {SUMMARY_FROM} {tail}");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params, summary_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn detail(&self, id: &str) -> Result<Option<RequestDetail>, StoreError> {
        Ok(self.details("WHERE r.id = ?1", [id])?.into_iter().next())
    }

    /// Pending requests with their normalised form and placement time, for policies; only
    /// those whose deadline has passed when `due_by` is given.
    pub fn pending_requests(
        &self,
        due_by: Option<DateTime<Utc>>,
    ) -> Result<Vec<(Request, DateTime<Utc>)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, request_json, placed_at FROM requests
             WHERE status = 'pending' AND request_json IS NOT NULL
               AND (?1 IS NULL OR deadline <= ?1) AND blocked IS NULL
               AND id NOT IN (SELECT request_id FROM unwritten)",
        )?;
        let rows = stmt.query_map([due_by.map(ms)], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, json, placed_at) = row?;
            let request = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                id,
                message: e.to_string(),
            })?;
            out.push((request, from_ms(placed_at)));
        }
        Ok(out)
    }

    /// The earliest time something is due for a pending request: its expiry, its policy's
    /// next timed step, the end of its snooze.
    pub fn next_deadline(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let next: Option<i64> = self
            .conn
            .prepare_cached(
                // The least of the three that are set: each is first in one COALESCE, and
                // every COALESCE gives one of those set (SQLite's min() of several values
                // is NULL if any is).
                "SELECT MIN(MIN(COALESCE(deadline, policy_due, snoozed_until),
                                COALESCE(policy_due, deadline, snoozed_until),
                                COALESCE(snoozed_until, deadline, policy_due)))
                 FROM requests WHERE status = 'pending'
                 AND blocked IS NULL AND id NOT IN (SELECT request_id FROM unwritten)",
            )?
            .query_row([], |r| r.get(0))?;
        Ok(next.map(from_ms))
    }

    /// Pending requests for the policy to judge (every one, or those whose next timed
    /// step is due by `due_by`), with what a rule may match on and how far its timed
    /// steps went. Blocked requests and those whose outcome waits to be written are left
    /// alone.
    pub fn pending_facts(&self, due: Due) -> Result<Vec<PendingFacts>, StoreError> {
        let (step_due, expiry_due, unjudged) = match due {
            Due::All => (None, None, false),
            Due::Step(now) => (Some(ms(now)), None, false),
            Due::Expiry(now) => (None, Some(ms(now)), false),
            Due::Unjudged => (None, None, true),
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, request_json, placed_at, placed_by, policy_step, snoozed_until, judgement
             FROM requests
             WHERE status = 'pending' AND request_json IS NOT NULL
               AND (?1 IS NULL OR policy_due <= ?1) AND (?2 IS NULL OR deadline <= ?2)
               AND (?3 = 0 OR judgement IS NULL)
               AND blocked IS NULL AND id NOT IN (SELECT request_id FROM unwritten)
             ORDER BY placed_at",
        )?;
        let rows = stmt.query_map(params![step_due, expiry_due, unjudged], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, Option<String>>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, json, placed_at, placed_by, step, snoozed_until, judgement) = row?;
            let request = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                id,
                message: e.to_string(),
            })?;
            out.push(PendingFacts {
                request,
                placed_at: from_ms(placed_at),
                placed_by,
                policy_step: u32::try_from(step).unwrap_or(0),
                snoozed_until: snoozed_until.map(from_ms),
                judgement: judgement.and_then(|json| serde_json::from_str(&json).ok()),
            });
        }
        Ok(out)
    }

    /// Records what the policy made of a pending request, when its next timed step is due
    /// and how many it took.
    pub fn set_judgement(
        &mut self,
        id: &str,
        judgement: &Judgement,
        due: Option<DateTime<Utc>>,
        step: u32,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "UPDATE requests SET judgement = ?2, policy_due = ?3, policy_step = ?4
                 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![
                id,
                serde_json::to_string(judgement).expect("judgements serialise"),
                due.map(ms),
                step
            ])?;
        Ok(())
    }

    /// Snoozes a pending request until `until`: out of the pending list and the count,
    /// announced again then. False if it is not pending.
    pub fn snooze(
        &mut self,
        id: &str,
        until: DateTime<Utc>,
        detail: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE requests SET snoozed_until = ?2 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![id, ms(until)])?;
        if changed > 0 {
            self.log(Some(id), "snoozed", detail, now)?;
        }
        Ok(changed > 0)
    }

    /// Ends every snooze due by `now` (or the one of `only`, at once): the requests are
    /// pending again and announced anew. Returns their ids.
    pub fn end_snoozes(
        &mut self,
        now: DateTime<Utc>,
        only: Option<&str>,
    ) -> Result<Vec<String>, StoreError> {
        let ids: Vec<String> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id FROM requests WHERE status = 'pending'
                   AND snoozed_until IS NOT NULL
                   AND (?1 IS NULL AND snoozed_until <= ?2 OR id = ?1)",
            )?;
            let rows = stmt.query_map(params![only, ms(now)], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        for id in &ids {
            self.conn
                // A policy step put off by the snooze is due again now (a later one is
                // simply checked again on the next turn and put back).
                .prepare_cached(
                    "UPDATE requests SET snoozed_until = NULL, notified = 0,
                            policy_due = MIN(policy_due, ?2)
                      WHERE id = ?1",
                )?
                .execute(params![id, ms(now)])?;
            let why = if only.is_some() {
                "ended by the operator"
            } else {
                "its time is up"
            };
            self.log(
                Some(id),
                "snooze_ended",
                &serde_json::json!({ "why": why }),
                now,
            )?;
        }
        Ok(ids)
    }

    /// Appends an event the engine decided (a hold, an escalation step, a policy change)
    /// to the audit log.
    pub fn log_event(
        &mut self,
        id: Option<&str>,
        kind: &str,
        detail: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.log(id, kind, detail, now)
    }

    /// Blocks a pending request (see [`RequestSummary::blocked`]); true if it was not
    /// blocked for this reason before.
    pub fn mark_blocked(
        &mut self,
        id: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE requests SET blocked = ?2
             WHERE id = ?1 AND status = 'pending' AND blocked IS NOT ?2",
            )?
            .execute(params![id, reason])?;
        if changed > 0 {
            self.log(
                Some(id),
                "blocked",
                &serde_json::json!({ "reason": reason }),
                now,
            )?;
        }
        Ok(changed > 0)
    }

    /// Lifts a block whose cause is gone (an invalid outcome file was removed).
    pub fn clear_blocked(&mut self, id: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("UPDATE requests SET blocked = NULL WHERE id = ?1")?
            .execute([id])?;
        Ok(())
    }

    /// Remembers a spool problem; true the first time this path is seen with this reason.
    pub fn record_problem(
        &mut self,
        path: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let existing: Option<String> = self
            .conn
            .prepare_cached("SELECT reason FROM problems WHERE path = ?1")?
            .query_row([path], |r| r.get(0))
            .optional()?;
        if existing.as_deref() == Some(reason) {
            return Ok(false);
        }
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO problems (path, reason, first_seen) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![path, reason, ms(now)])?;
        self.log(
            None,
            "problem",
            &serde_json::json!({ "path": path, "reason": reason }),
            now,
        )?;
        Ok(true)
    }

    /// Spool problems seen, newest first.
    pub fn problems(&self) -> Result<Vec<(String, String, DateTime<Utc>)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path, reason, first_seen FROM problems ORDER BY first_seen DESC",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, from_ms(r.get(2)?))))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The event log of one request, oldest first.
    pub fn events_of(&self, id: &str) -> Result<Vec<LoggedEvent>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT at, request_id, kind, detail FROM events WHERE request_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(LoggedEvent {
                at: from_ms(r.get(0)?),
                request_id: r.get(1)?,
                kind: r.get(2)?,
                detail: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Appends an event to the log, chained to the newest entry (crate::audit). The newest
    /// entry is read and the new one written in one write transaction (the caller's, or one
    /// of its own), so two processes cannot both extend the same entry.
    fn log(
        &mut self,
        id: Option<&str>,
        kind: &str,
        detail: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let own_transaction = self.conn.is_autocommit();
        if own_transaction {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
        }
        let appended = self.append_event(id, kind, detail, now);
        if own_transaction {
            match appended {
                Ok(()) => self.conn.execute_batch("COMMIT")?,
                Err(_) => {
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
            }
        }
        appended
    }

    fn append_event(
        &mut self,
        id: Option<&str>,
        kind: &str,
        detail: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let newest: Option<(i64, Option<String>)> = self
            .conn
            .prepare_cached("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (seq, prev_hash) = match newest {
            Some((seq, hash)) => (seq + 1, hash.unwrap_or_default()),
            None => (1, audit::GENESIS.to_owned()),
        };
        let hash = audit::hash_of(seq, ms(now), id, kind, detail, &prev_hash);
        self.conn
            .prepare_cached(
                "INSERT INTO events (seq, at, request_id, kind, detail, prev_hash, hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                seq,
                ms(now),
                id,
                kind,
                detail.to_string(),
                prev_hash,
                hash
            ])?;
        Ok(())
    }

    /// The whole audit log, oldest first, as stored: [`audit::verify`] checks it and
    /// `answer-inbox audit export` writes it out.
    pub fn audit_entries(&self) -> Result<Vec<audit::Entry>, StoreError> {
        read_audit_entries(&self.conn)
    }

    /// Checks the audit log's chain; see [`audit::verify`].
    pub fn audit_verify(&self) -> Result<Result<audit::Intact, audit::Broken>, StoreError> {
        Ok(audit::verify(&self.audit_entries()?))
    }
}

/// Every event, oldest first, with its chain columns (empty when missing: such an entry fails
/// verification, as it should).
fn read_audit_entries(conn: &Connection) -> Result<Vec<audit::Entry>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, at, request_id, kind, detail, prev_hash, hash FROM events ORDER BY seq",
    )?;
    let rows = stmt.query_map([], |r| {
        let detail: String = r.get(4)?;
        Ok(audit::Entry {
            seq: r.get(0)?,
            at_ms: r.get(1)?,
            at: None,
            request_id: r.get(2)?,
            kind: r.get(3)?,
            // Not JSON (written by hand): kept as a string, which no longer hashes right.
            detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::String(detail)),
            prev_hash: r.get::<_, Option<String>>(5)?.unwrap_or_default(),
            hash: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The migration's half of the chain: the events written before it, chained in order.
fn chain_existing_events(tx: &rusqlite::Transaction) -> Result<(), rusqlite::Error> {
    let mut stmt =
        tx.prepare("SELECT seq, at, request_id, kind, detail FROM events ORDER BY seq")?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut prev_hash = audit::GENESIS.to_owned();
    for (position, (seq, at, request_id, kind, detail)) in rows.into_iter().enumerate() {
        // The chain numbers entries from 1 without gaps; the old log never deleted any, but
        // renumber to be sure (seq is only an order, nothing refers to it).
        let chained_seq = position as i64 + 1;
        let detail = serde_json::from_str(&detail).unwrap_or(serde_json::Value::String(detail));
        let hash = audit::hash_of(
            chained_seq,
            at,
            request_id.as_deref(),
            &kind,
            &detail,
            &prev_hash,
        );
        tx.execute(
            "UPDATE events SET seq = ?1, detail = ?2, prev_hash = ?3, hash = ?4 WHERE seq = ?5",
            params![chained_seq, detail.to_string(), prev_hash, hash, seq],
        )?;
        prev_hash = hash;
    }
    Ok(())
}

/// Restricts the database file to its owner. A file that cannot be changed (another
/// account's) is left as it is, with a warning: refusing to start would help nobody.
fn make_private(path: &Path) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_file() && meta.mode() & 0o077 != 0 {
        if let Err(error) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
            tracing::warn!(
                "the database {} is readable by other accounts and cannot be made private: {error}",
                path.display()
            );
        }
    }
}

fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RequestSummary> {
    let status: String = r.get(1)?;
    let source_json: String = r.get(3)?;
    Ok(RequestSummary {
        id: r.get(0)?,
        state: State::parse(&status).unwrap_or(State::Pending),
        title: r.get(2)?,
        source: serde_json::from_str(&source_json).unwrap_or_default(),
        priority: priority_of(r.get(4)?),
        question_count: r.get::<_, i64>(5)? as usize,
        placed_at: from_ms(r.get(6)?),
        deadline: r.get::<_, Option<i64>>(7)?.map(from_ms),
        settled_at: r.get::<_, Option<i64>>(8)?.map(from_ms),
        answered_by: r.get(9)?,
        mode: if r.get::<_, String>(10)? == "autonomous" {
            Mode::Autonomous
        } else {
            Mode::Interactive
        },
        unwritten: r.get(11)?,
        blocked: r.get(12)?,
        placed_by: r.get(13)?,
        judgement: r
            .get::<_, Option<String>>(14)?
            .and_then(|json| serde_json::from_str(&json).ok()),
        snoozed_until: r.get::<_, Option<i64>>(15)?.map(from_ms),
    })
}

/// Builds a [`RequestDetail`] from a summary and the stored JSON of its request and outcome.
fn detail_from_json(
    summary: RequestSummary,
    request_json: Option<String>,
    outcome_json: Option<String>,
) -> Result<RequestDetail, StoreError> {
    let corrupt = |message: String| StoreError::Corrupt {
        id: summary.id.clone(),
        message,
    };
    let request = request_json
        .map(|json| serde_json::from_str(&json).map_err(|e| corrupt(e.to_string())))
        .transpose()?;
    let outcome = outcome_json
        .map(|json| serde_json::from_str(&json).map_err(|e| corrupt(e.to_string())))
        .transpose()?;
    Ok(RequestDetail {
        summary,
        request,
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_protocol::parse_request;

    fn sample(id: &str) -> Request {
        let body = format!(
            r#"{{"inbox": 1, "id": "{id}", "title": "Deploy", "timeout_seconds": 60,
                "questions": [{{"id": "go", "question": "Ship?", "type": "confirm"}}]}}"#
        );
        parse_request(body.as_bytes(), Some(id)).unwrap()
    }

    #[test]
    fn migrations_are_valid() {
        migrations().validate().unwrap();
    }

    #[test]
    fn outcomes_are_recorded_once_and_logged() {
        let mut store = Store::open_in_memory().unwrap();
        let now = Utc::now();
        store
            .insert_pending("r1", &sample("r1"), now, None, now)
            .unwrap();
        assert_eq!(store.known().unwrap().get("r1"), Some(&true));
        assert_eq!(
            store.next_deadline().unwrap().map(|d| d.timestamp_millis()),
            Some(now.timestamp_millis() + 60_000)
        );

        let outcome = Outcome::new("r1", OutcomeStatus::Answered, "operator:ann", "h/i", now);
        assert!(store.record_outcome(&outcome, now).unwrap());
        assert!(
            !store.record_outcome(&outcome, now).unwrap(),
            "second record is a no-op"
        );
        assert!(!store.mark_cancelled("r1", "late", now).unwrap());

        let detail = store.detail("r1").unwrap().unwrap();
        assert_eq!(
            detail.summary.state,
            State::Settled(OutcomeStatus::Answered)
        );
        assert_eq!(detail.summary.answered_by.as_deref(), Some("operator:ann"));
        assert_eq!(detail.outcome.unwrap().answered_by, "operator:ann");
        let kinds: Vec<String> = store
            .events_of("r1")
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds, ["ingested", "answered"]);
        assert!(store.pending().unwrap().is_empty());
        assert_eq!(store.history(10).unwrap().len(), 1);
    }

    #[test]
    fn a_request_is_told_about_once_and_not_while_snoozed() {
        let mut store = Store::open_in_memory().unwrap();
        let now = Utc::now();
        store
            .insert_pending("a", &sample("a"), now, None, now)
            .unwrap();
        store
            .insert_pending("b", &sample("b"), now, None, now)
            .unwrap();
        let later = now + chrono::Duration::minutes(10);
        store
            .snooze("b", later, &serde_json::json!({"for": "10m"}), now)
            .unwrap();
        let due: Vec<String> = store
            .unnotified(now)
            .unwrap()
            .into_iter()
            .map(|d| d.summary.id)
            .collect();
        assert_eq!(due, ["a"]);
        store.mark_notified(&["a"], true, now).unwrap();
        assert!(store.unnotified(now).unwrap().is_empty());
        // Once the snooze is over, the snoozed request is due.
        assert_eq!(store.unnotified(later).unwrap().len(), 1);
    }

    #[test]
    fn instance_id_is_stable() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.instance_id().unwrap(), store.instance_id().unwrap());
    }

    /// The events written before the log became a chain are chained by the migration, from
    /// entry 1, and new events extend that chain.
    #[test]
    fn migration_chains_the_events_already_written() {
        let mut conn = Connection::open_in_memory().unwrap();
        // Version 4: the schema just before the audit chain.
        migrations().to_version(&mut conn, 4).unwrap();
        for (at, kind) in [(1_000, "ingested"), (2_000, "answered"), (3_000, "problem")] {
            conn.execute(
                "INSERT INTO events (at, request_id, kind, detail) VALUES (?1, 'r1', ?2, ?3)",
                params![at, kind, r#"{"b":1,"a":"x"}"#],
            )
            .unwrap();
        }
        migrations().to_latest(&mut conn).unwrap();
        let mut store = Store { conn, depth: 0 };
        let intact = store.audit_verify().unwrap().unwrap();
        assert_eq!(intact.entries, 3);

        store
            .record_problem("questions/x.json", "bad", Utc::now())
            .unwrap();
        let entries = store.audit_entries().unwrap();
        let intact = store.audit_verify().unwrap().unwrap();
        assert_eq!(intact.entries, 4);
        assert_eq!(entries[3].prev_hash, entries[2].hash);
        assert_eq!(intact.head, entries[3].hash);
    }
}
