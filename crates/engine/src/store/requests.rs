//! The `requests` table and its `questions`: a request recorded as it arrives (pending, or
//! rejected when invalid), and the changes of its state that are not outcomes: cancelled
//! by its asker, blocked and unblocked. Which requests are known, and in what state, for
//! scans.
//!
//! Apart from `lists.rs`: this is what ingest and the engine's state changes need, not
//! what front ends show.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use inbox_protocol::{Problem, Request};
use rusqlite::{params, OptionalExtension};

use super::rows::priority_rank;
use super::{ms, State, Store, StoreError};

impl Store {
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

    /// The ids of every pending request, snoozed or not.
    pub fn open_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM requests WHERE status = 'pending'")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
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

    /// Blocks a pending request (see [`RequestSummary::blocked`]); true if it was not
    /// blocked for this reason before.
    ///
    /// [`RequestSummary::blocked`]: super::RequestSummary::blocked
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
}
