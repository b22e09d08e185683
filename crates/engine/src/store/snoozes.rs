//! The operator's snoozes (`requests.snoozed_until`): set, and ended when due or by hand.
//! A policy step the snooze put off is due again when it ends.
//!
//! Apart because a snooze is the operator's own: it changes when a request is shown, not
//! its state.

use chrono::{DateTime, Utc};
use rusqlite::params;

use super::{ms, Store, StoreError};

impl Store {
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
}
