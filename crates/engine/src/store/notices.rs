//! What the operator has been told (`requests.notified`): the pending requests not
//! announced yet, and marking them told, announced or silently.
//!
//! Apart because only the loop's notices read and write the `notified` flag.

use chrono::{DateTime, Utc};

use super::{ms, RequestDetail, Store, StoreError};

impl Store {
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
}
