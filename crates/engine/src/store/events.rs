//! The event log (`events`): every state change, with who, appended as a hash chain
//! ([`crate::audit`]) so it cannot be rewritten quietly; read back per request or whole,
//! for `answer-inbox audit`.
//!
//! Apart because every write of the store logs through here, and the chain must be
//! extended in exactly one place.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::{from_ms, ms, Store, StoreError};
use crate::audit;

/// One entry of the event log.
#[derive(Debug, Clone, Serialize)]
pub struct LoggedEvent {
    pub at: DateTime<Utc>,
    pub request_id: Option<String>,
    pub kind: String,
    pub detail: serde_json::Value,
}

impl Store {
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
    /// of its own), so two processes cannot both extend the same entry. Within a batch the
    /// newest entry is the one the batch appended last, remembered rather than read again.
    pub(super) fn log(
        &mut self,
        id: Option<&str>,
        kind: &str,
        detail: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let own_transaction = !self.in_transaction();
        if own_transaction {
            self.forget_memo();
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
        }
        let appended = self.append_event(id, kind, detail, now);
        if own_transaction {
            self.forget_memo();
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
        // The entry this transaction appended last, if it did: a batch reads the newest entry
        // once, not once per row. Taken, so that a failed insert leaves nothing behind.
        let remembered = self.memo.head.take().filter(|_| self.in_transaction());
        let newest = match remembered {
            Some((seq, hash)) => Some((seq, Some(hash))),
            None => self
                .conn
                .prepare_cached("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")?
                .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?,
        };
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
        if self.in_transaction() {
            self.memo.head = Some((seq, hash));
        }
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
