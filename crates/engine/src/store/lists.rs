//! The lists front ends show: pending requests (not those snoozed), snoozed ones, the
//! count, history, rejections, one request in full, and the pending requests' normalised
//! form.
//!
//! Apart because it only reads: nothing here changes a row, and the summary and detail
//! queries (`summaries`, `details`) serve most of the lists.

use chrono::{DateTime, Utc};
use inbox_protocol::Request;

use super::rows::{detail_from_json, summary_from_row, SUMMARY_COLUMNS, SUMMARY_FROM};
use super::{from_ms, ms, RequestDetail, RequestSummary, Store, StoreError};

impl Store {
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
    pub(super) fn details<P: rusqlite::Params>(
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

    pub(super) fn summaries<P: rusqlite::Params>(
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
}
