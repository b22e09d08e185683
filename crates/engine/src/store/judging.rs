//! What the policy reads and keeps: pending requests as it judges them ([`PendingFacts`],
//! chosen by [`Due`]), the judgement kept with each, when its next timed step is due, and
//! the earliest deadline of all (the loop's next timer).
//!
//! Apart because these columns (`judgement`, `policy_due`, `policy_step`) are the
//! policy's: only its steps write them.

use chrono::{DateTime, Utc};
use inbox_protocol::Request;
use rusqlite::params;

use super::{from_ms, ms, Store, StoreError};
use crate::policy::Judgement;

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

impl Store {
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

    /// Replaces a pending request's judgement alone (its approvals so far changed).
    pub fn set_judgement_only(
        &mut self,
        id: &str,
        judgement: &Judgement,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "UPDATE requests SET judgement = ?2 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![
                id,
                serde_json::to_string(judgement).expect("judgements serialise")
            ])?;
        Ok(())
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
}
