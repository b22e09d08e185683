//! Outcomes: the `outcomes` table, recorded once per request, and `unwritten`: outcomes
//! decided while the spool would not take a file (read-only, full), kept until written so
//! no decision is lost.
//!
//! Apart because both tables answer "what was decided", and recording an outcome is
//! what clears a kept one.

use chrono::{DateTime, Utc};
use inbox_protocol::{Outcome, OutcomeStatus};
use rusqlite::params;

use super::{from_ms, ms, Store, StoreError};

/// An outcome kept in the store because the spool would not take it yet.
#[derive(Debug, Clone)]
pub struct Unwritten {
    pub outcome: Outcome,
    pub kept_at: DateTime<Utc>,
    pub attempts: u32,
    pub last_error: String,
}

impl Store {
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
        if self.in_transaction() {
            self.memo.unwritten_empty = Some(false);
        }
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

    /// Drops the outcome kept for `id`, if any. Within a batch, once `unwritten` was found
    /// empty, there is nothing to drop for the rest of it.
    pub(super) fn forget_unwritten(&mut self, id: &str) -> Result<(), StoreError> {
        if self.in_transaction() {
            let empty = match self.memo.unwritten_empty {
                Some(empty) => empty,
                None => {
                    let empty = !self
                        .conn
                        .prepare_cached("SELECT EXISTS (SELECT 1 FROM unwritten)")?
                        .query_row([], |r| r.get::<_, bool>(0))?;
                    self.memo.unwritten_empty = Some(empty);
                    empty
                }
            };
            if empty {
                return Ok(());
            }
        }
        self.conn
            .prepare_cached("DELETE FROM unwritten WHERE request_id = ?1")?
            .execute([id])?;
        Ok(())
    }
}
