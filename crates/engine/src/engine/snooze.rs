//! Snooze: the operator puts a pending request aside for a while. It leaves the pending
//! list and the count, never reaches past the request's own expiry, puts off its
//! escalation, and is announced again when it ends, on time or by hand. Nothing is
//! answered.
//!
//! Apart because a snooze is neither an answer nor a policy step: it only changes when the
//! operator is told.

use chrono::{DateTime, Utc};
use inbox_protocol::Problem;

use super::Engine;
use crate::event::Event;
use crate::results::{EngineError, SettleError, Snoozed};
use crate::store::State;

impl Engine {
    /// Snoozes a pending request for `duration`: it leaves the pending list and the count,
    /// and is announced again when the snooze ends. A snooze never reaches past the
    /// request's own expiry: it is cut to end there, and the result says so. Nothing is
    /// answered.
    pub fn snooze(
        &mut self,
        id: &str,
        duration: std::time::Duration,
    ) -> Result<Snoozed, SettleError> {
        self.ensure_known(id)?;
        let now = Utc::now();
        let detail = match self.store.detail(id)? {
            Some(detail) if detail.summary.state == State::Pending => detail,
            Some(detail) => match detail.outcome {
                Some(outcome) => return Err(SettleError::AlreadySettled(Box::new(outcome))),
                None => return Err(SettleError::Cancelled(id.to_owned())),
            },
            None => return Err(SettleError::NotFound(id.to_owned())),
        };
        let wanted = chrono::Duration::from_std(duration)
            .ok()
            .and_then(|d| now.checked_add_signed(d))
            .ok_or_else(|| {
                SettleError::Invalid(vec![Problem::new("/duration", "the snooze is too long")])
            })?;
        let (until, capped) = match detail.summary.deadline {
            Some(expiry) if expiry < wanted => (expiry, true),
            _ => (wanted, false),
        };
        let record = serde_json::json!({
            "until": until,
            "capped_at_expiry": capped,
        });
        self.in_batch(|engine| {
            if engine.store.snooze(id, until, &record, now)? {
                engine.outbox.push(Event::Snoozed {
                    id: id.to_owned(),
                    until,
                    capped,
                });
            }
            Ok(())
        })?;
        Ok(Snoozed { until, capped })
    }

    /// Ends a request's snooze now: it is pending again and announced anew. False if it
    /// was not snoozed.
    pub fn unsnooze(&mut self, id: &str) -> Result<bool, SettleError> {
        self.ensure_known(id)?;
        let ended = self.in_batch(|engine| {
            let ended = engine.store.end_snoozes(Utc::now(), Some(id))?;
            for id in &ended {
                engine.outbox.push(Event::SnoozeEnded { id: id.clone() });
            }
            Ok(!ended.is_empty())
        })?;
        Ok(ended)
    }

    /// Ends the snoozes due by `now`: those requests are pending and announced again.
    pub(super) fn end_snoozes(&mut self, now: DateTime<Utc>) -> Result<(), EngineError> {
        self.in_batch(|engine| {
            for id in engine.store.end_snoozes(now, None)? {
                engine.outbox.push(Event::SnoozeEnded { id });
            }
            Ok(())
        })
    }
}
