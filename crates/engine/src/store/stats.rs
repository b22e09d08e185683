//! What `answer-inbox stats` reads: the requests settled in a period, each with its outcome
//! and judgement (its team's assignees), for counts and times to answer per source and per
//! operator. Read only; the counting is the caller's.

use chrono::{DateTime, Utc};

use super::{ms, RequestDetail, Store, StoreError};

impl Store {
    /// Requests settled (or cancelled) at or after `since`, oldest settled first; not those
    /// rejected as invalid, which nobody was asked.
    pub fn settled_since(&self, since: DateTime<Utc>) -> Result<Vec<RequestDetail>, StoreError> {
        self.details(
            "WHERE r.status NOT IN ('pending', 'rejected') AND r.settled_at >= ?1
             ORDER BY r.settled_at",
            [ms(since)],
        )
    }
}
