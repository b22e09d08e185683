//! The schema's history: every migration since the first, applied in order by
//! `rusqlite_migration` when the database opens. Append only: a released migration is never
//! edited, so it lives apart from the code that reads and writes the tables.

use rusqlite::params;
use rusqlite_migration::{Migrations, M};

use crate::audit;

/// Schema history. Append only: a released migration is never edited.
pub(super) fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE requests (
             id TEXT PRIMARY KEY,
             status TEXT NOT NULL,           -- pending, cancelled, or an outcome status
             title TEXT NOT NULL,
             source_json TEXT NOT NULL,
             priority INTEGER NOT NULL,      -- 0 low .. 3 critical
             mode TEXT NOT NULL,
             question_count INTEGER NOT NULL,
             placed_at INTEGER NOT NULL,     -- ms since the epoch, from the file's mtime
             ingested_at INTEGER NOT NULL,
             deadline INTEGER,
             request_json TEXT,              -- the normalised request; NULL when rejected
             sha256 TEXT,
             notified INTEGER NOT NULL DEFAULT 0,
             settled_at INTEGER
         );
         CREATE INDEX requests_by_status ON requests (status, priority, placed_at);
         CREATE INDEX requests_deadline ON requests (deadline) WHERE status = 'pending';
         CREATE TABLE questions (
             request_id TEXT NOT NULL REFERENCES requests (id),
             position INTEGER NOT NULL,
             question_id TEXT NOT NULL,
             type TEXT NOT NULL,
             question TEXT NOT NULL,
             required INTEGER NOT NULL,
             PRIMARY KEY (request_id, position)
         );
         CREATE TABLE outcomes (
             request_id TEXT PRIMARY KEY REFERENCES requests (id),
             status TEXT NOT NULL,
             answered_by TEXT NOT NULL,
             answered_at TEXT NOT NULL,
             instance TEXT NOT NULL,
             outcome_json TEXT NOT NULL
         );
         CREATE TABLE events (
             seq INTEGER PRIMARY KEY,
             at INTEGER NOT NULL,
             request_id TEXT,
             kind TEXT NOT NULL,
             detail TEXT NOT NULL
         );
         CREATE INDEX events_by_request ON events (request_id);
         CREATE TABLE problems (
             path TEXT PRIMARY KEY,
             reason TEXT NOT NULL,
             first_seen INTEGER NOT NULL
         );",
        ),
        // Finding the requests not announced yet must not scan every pending row: with
        // thousands pending, the loop asks after every batch.
        M::up(
            "CREATE INDEX requests_unnotified ON requests (priority, placed_at)
             WHERE status = 'pending' AND notified = 0 AND request_json IS NOT NULL;",
        ),
        // Outcomes decided but not yet in the spool (its answers directory was read-only or
        // full): kept here and retried until written, so no answer is lost. The request stays
        // pending until the file exists; policies leave it alone meanwhile.
        M::up(
            "CREATE TABLE unwritten (
                 request_id TEXT PRIMARY KEY REFERENCES requests (id),
                 outcome_json TEXT NOT NULL,
                 kept_at INTEGER NOT NULL,
                 attempts INTEGER NOT NULL,
                 last_error TEXT NOT NULL
             );",
        ),
        // A pending request nobody may answer here, and why: its file changed after it was
        // placed, or an invalid outcome file stands in its place. Policies leave it alone.
        M::up("ALTER TABLE requests ADD COLUMN blocked TEXT;"),
        // The event log becomes a hash chain (crate::audit): each entry carries the hash of
        // the one before. Entries already written are chained here, in the migration's
        // transaction, so the chain covers all history from entry 1 on; from now on
        // `Store::log` extends it as it appends.
        M::up_with_hook(
            "ALTER TABLE events ADD COLUMN prev_hash TEXT;
             ALTER TABLE events ADD COLUMN hash TEXT;",
            |tx: &rusqlite::Transaction| -> rusqlite_migration::HookResult {
                chain_existing_events(tx)?;
                Ok(())
            },
        ),
        // The operator's policy (crate::rules): who placed the file (a rule may match on
        // the account), what the policy made of the request (`judgement`, JSON), when its
        // next timed step is due and how many such steps were taken; and the operator's
        // snooze.
        M::up(
            "ALTER TABLE requests ADD COLUMN placed_by TEXT;
             ALTER TABLE requests ADD COLUMN judgement TEXT;
             ALTER TABLE requests ADD COLUMN policy_due INTEGER;
             ALTER TABLE requests ADD COLUMN policy_step INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE requests ADD COLUMN snoozed_until INTEGER;",
        ),
    ])
}

/// The migration's half of the chain: the events written before it, chained in order.
fn chain_existing_events(tx: &rusqlite::Transaction) -> Result<(), rusqlite::Error> {
    let mut stmt =
        tx.prepare("SELECT seq, at, request_id, kind, detail FROM events ORDER BY seq")?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut prev_hash = audit::GENESIS.to_owned();
    for (position, (seq, at, request_id, kind, detail)) in rows.into_iter().enumerate() {
        // The chain numbers entries from 1 without gaps; the old log never deleted any, but
        // renumber to be sure (seq is only an order, nothing refers to it).
        let chained_seq = position as i64 + 1;
        let detail = serde_json::from_str(&detail).unwrap_or(serde_json::Value::String(detail));
        let hash = audit::hash_of(
            chained_seq,
            at,
            request_id.as_deref(),
            &kind,
            &detail,
            &prev_hash,
        );
        tx.execute(
            "UPDATE events SET seq = ?1, detail = ?2, prev_hash = ?3, hash = ?4 WHERE seq = ?5",
            params![chained_seq, detail.to_string(), prev_hash, hash, seq],
        )?;
        prev_hash = hash;
    }
    Ok(())
}
