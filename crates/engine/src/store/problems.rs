//! Spool problems (`problems`): files that are not requests, outcomes or tombstones, or
//! that may not be read, remembered once per path and reason.
//!
//! Apart because problems are about files, not requests: a table of their own.

use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension};

use super::{from_ms, ms, Store, StoreError};

impl Store {
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
}
