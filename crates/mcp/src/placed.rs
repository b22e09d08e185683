//! The requests `ask_operator_start` placed, for `ask_operator_wait` to check their outcomes
//! by, as `inbox_client` checks an outcome it waits for: against the request as placed (its
//! SHA-256 and its questions).
//!
//! `ask_operator_wait` reads an outcome only for a request this server placed: an agent must
//! not read, by naming its id, the answer to a question another asker put to the operator (a
//! pipeline's deploy gate, another agent's question). Anyone who can write to the spool can
//! write any `source`, so what a request file says about its asker proves nothing. What
//! proves it is this server's own record:
//!
//! - in memory, for the requests placed in this process;
//! - in this account's ledger, `$XDG_STATE_HOME/answer-inbox/mcp-placed/<id>.json`, for the
//!   requests an earlier `answer-inbox mcp` placed: a host may restart the server between
//!   the two calls. The ledger is outside the spool (no other asker writes there), a
//!   directory no other account may write to, each entry the request's exact bytes. An entry
//!   counts only for the same spool and the same agent as far as the server can tell: the
//!   same client name, host, working directory and project (the session differs after a
//!   restart, by design). The outcome is then checked against those bytes, not against
//!   whatever `questions/` holds by then.
//!
//! Entries older than [`KEPT_FOR`] are removed when a new one is written.

use std::collections::HashMap;
use std::fs::{DirBuilder, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use inbox_protocol::{Expiry, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long a ledger entry is kept: an agent that waits longer than this for an answer
/// asks again.
pub const KEPT_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// The largest ledger entry read: a request is at most a few hundred KiB.
const MAX_ENTRY_BYTES: u64 = 4 * 1024 * 1024;

/// The source keys that must be equal for a ledger entry to count: who asked, from where.
const SAME_AGENT: &[&str] = &["app", "host", "cwd", "project"];

/// One placed request.
#[derive(Debug)]
pub struct Placed {
    /// The request as placed; its `sha256` is that of the placed bytes.
    pub request: Request,
    /// What the server did otherwise than the call asked, said again with the outcome.
    pub notices: Vec<String>,
    /// When it was placed, from which its `timeout_seconds` runs.
    pub placed_at: SystemTime,
}

impl Placed {
    /// When a wait stops waiting for an inbox to expire the request and withdraws it:
    /// `grace` past its expiry. `None` when it does not expire.
    pub fn give_up_at(&self, grace: Duration) -> Option<SystemTime> {
        let expires = match self.request.expiry? {
            Expiry::After { seconds } => self.placed_at + Duration::from_secs(seconds),
            Expiry::At(at) => SystemTime::from(at),
        };
        Some(expires + grace)
    }
}

/// A ledger entry as written.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// The spool the request was placed in.
    spool: PathBuf,
    /// Seconds since the epoch.
    placed_at: f64,
    notices: Vec<String>,
    /// The request file's bytes, exactly as placed (it is JSON text).
    request: String,
}

/// The requests this server placed, by id. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PlacedRequests {
    by_id: Arc<Mutex<HashMap<String, Arc<Placed>>>>,
    /// The ledger's directory; `None` when there is no state directory (no `$HOME`): then
    /// only this process's requests can be waited for.
    ledger: Option<PathBuf>,
}

impl PlacedRequests {
    /// Remembering in memory and in `ledger`.
    pub fn new(ledger: Option<PathBuf>) -> PlacedRequests {
        PlacedRequests {
            by_id: Arc::default(),
            ledger,
        }
    }

    /// This account's ledger: `$XDG_STATE_HOME/answer-inbox/mcp-placed`.
    pub fn ledger_in_state_dir() -> Option<PathBuf> {
        dirs::state_dir().map(|dir| dir.join("answer-inbox").join("mcp-placed"))
    }

    /// Remembers a request just placed in `spool` as `bytes`. A ledger that cannot be
    /// written is logged: this session can still wait for it, a restarted one cannot.
    pub fn remember(&self, spool: &Path, request: Request, bytes: &[u8], notices: Vec<String>) {
        let id = request.id.clone().expect("a prepared request has its id");
        let placed_at = SystemTime::now();
        if let Some(ledger) = &self.ledger {
            let entry = Entry {
                spool: spool.to_owned(),
                placed_at: placed_at
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs_f64(),
                notices: notices.clone(),
                request: String::from_utf8_lossy(bytes).into_owned(),
            };
            if let Err(error) = write_entry(ledger, &id, &entry) {
                tracing::warn!(
                    %id,
                    "cannot record the request in {}: {error}; a restarted server cannot \
                     wait for it",
                    ledger.display()
                );
            }
            prune(ledger, placed_at);
        }
        let placed = Placed {
            request,
            notices,
            placed_at,
        };
        self.lock().insert(id, Arc::new(placed));
    }

    /// The request `id`, if this server placed it: in this process, else (per its ledger)
    /// an earlier server for the same agent (`source`: what this server writes now) in
    /// `spool`. The error says why not.
    pub fn recall(&self, spool: &Path, source: &Value, id: &str) -> Result<Arc<Placed>, String> {
        if let Some(placed) = self.lock().get(id) {
            return Ok(placed.clone());
        }
        if !inbox_protocol::is_valid_id(id) {
            return Err(format!(
                "\"{id}\" is not a request id: use the request_id that ask_operator_start \
                 returned"
            ));
        }
        let refused = |why: &str| {
            format!(
                "ask_operator_wait refuses request \"{id}\": {why}. It waits only for requests \
                 that ask_operator_start placed, in this session or in an earlier one of the \
                 same agent (the same client, host and working directory) on this spool, so \
                 that nobody reads, by naming its id, the answer to a question someone else \
                 asked. Use the request_id ask_operator_start returned to you, or ask again."
            )
        };
        let Some(ledger) = &self.ledger else {
            return Err(refused(
                "this server did not place it, and without a state directory it keeps no \
                 record of what earlier servers placed",
            ));
        };
        let entry = match read_entry(ledger, id) {
            Ok(Some(entry)) => entry,
            Ok(None) => return Err(refused("this server did not place it")),
            Err(error) => {
                return Err(refused(&format!(
                    "its record in {} cannot be used: {error}",
                    ledger.display()
                )))
            }
        };
        if entry.spool != spool {
            return Err(refused(&format!(
                "it was placed in another spool ({})",
                entry.spool.display()
            )));
        }
        let request = inbox_protocol::parse_request(entry.request.as_bytes(), Some(id))
            .map_err(|_| refused("its record is not a request"))?;
        let placed_source = serde_json::to_value(&request.source).unwrap_or_default();
        if let Some(key) = SAME_AGENT
            .iter()
            .find(|key| placed_source.get(**key) != source.get(**key))
        {
            return Err(refused(&format!(
                "it was placed for another agent (its source {key} differs)"
            )));
        }
        let placed = Arc::new(Placed {
            request,
            notices: entry.notices,
            placed_at: SystemTime::UNIX_EPOCH
                + Duration::try_from_secs_f64(entry.placed_at).unwrap_or_default(),
        });
        Ok(self.lock().entry(id.to_owned()).or_insert(placed).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Placed>>> {
        // The map is only ever inserted into; a panic elsewhere leaves it whole.
        self.by_id
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The ledger directory, made if missing (0700), and checked to be a real directory that no
/// other account may write to: only then do its entries say what this account placed.
fn ledger_dir(ledger: &Path) -> std::io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(ledger)?;
    let meta = std::fs::symlink_metadata(ledger)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("it is not a directory"));
    }
    mine_alone(&meta)
}

/// Owned by this account, and no group or world write bit.
fn mine_alone(meta: &std::fs::Metadata) -> std::io::Result<()> {
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(std::io::Error::other(format!(
            "it belongs to account {}, not to this one ({me})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(std::io::Error::other(format!(
            "other accounts may write to it (mode {:o})",
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

fn entry_path(ledger: &Path, id: &str) -> PathBuf {
    ledger.join(format!("{id}.json"))
}

/// Writes the entry whole (a private temporary file renamed into place).
fn write_entry(ledger: &Path, id: &str, entry: &Entry) -> std::io::Result<()> {
    ledger_dir(ledger)?;
    let bytes = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    let tmp = ledger.join(format!(".{id}.{}.tmp", std::process::id()));
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(&bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, entry_path(ledger, id)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The entry for `id`, `None` if there is none. A link, a non-regular file, or a file or
/// directory others could have written is an error, never an entry.
fn read_entry(ledger: &Path, id: &str) -> std::io::Result<Option<Entry>> {
    let meta = match std::fs::symlink_metadata(ledger) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    if !meta.is_dir() {
        return Err(std::io::Error::other("the ledger is not a directory"));
    }
    mine_alone(&meta)?;
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(entry_path(ledger, id))
    {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("the entry is not a plain file"));
    }
    mine_alone(&meta)?;
    let mut bytes = Vec::new();
    file.take(MAX_ENTRY_BYTES).read_to_end(&mut bytes)?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(std::io::Error::other)
}

/// Removes entries (and leftover temporary files) older than [`KEPT_FOR`]; best effort.
fn prune(ledger: &Path, now: SystemTime) {
    let Ok(entries) = std::fs::read_dir(ledger) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| now.duration_since(modified).is_ok_and(|age| age > KEPT_FOR));
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn request(id: &str, app: &str) -> (Request, Vec<u8>) {
        let bytes = serde_json::to_vec(&serde_json::json!({
            "inbox": 1, "id": id, "timeout_seconds": 60,
            "source": {"app": app, "tool": "ask_operator", "host": "box", "cwd": "/w"},
            "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]
        }))
        .unwrap();
        (
            inbox_protocol::parse_request(&bytes, Some(id)).unwrap(),
            bytes,
        )
    }

    fn source(app: &str) -> Value {
        serde_json::json!({"app": app, "tool": "ask_operator", "host": "box", "cwd": "/w",
                           "run": "another session"})
    }

    #[test]
    fn a_restarted_server_knows_its_own_requests_and_no_others() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("state/answer-inbox/mcp-placed");
        let spool = dir.path().join("spool");
        let first = PlacedRequests::new(Some(ledger.clone()));
        let (placed, bytes) = request("01MINE", "claude-code");
        first.remember(&spool, placed, &bytes, vec!["a notice".into()]);
        let mode = std::fs::metadata(&ledger).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);

        let second = PlacedRequests::new(Some(ledger.clone()));
        let recalled = second
            .recall(&spool, &source("claude-code"), "01MINE")
            .unwrap();
        assert_eq!(recalled.request.sha256, inbox_protocol::sha256_hex(&bytes));
        assert_eq!(recalled.notices, ["a notice"]);
        assert!(recalled.give_up_at(Duration::ZERO).is_some());

        let third = PlacedRequests::new(Some(ledger.clone()));
        for (spool, source, id, why) in [
            (
                &spool,
                source("claude-code"),
                "01NOTMINE",
                "did not place it",
            ),
            (
                &spool,
                source("other-agent"),
                "01MINE",
                "source app differs",
            ),
            (
                &dir.path().join("elsewhere"),
                source("claude-code"),
                "01MINE",
                "another spool",
            ),
        ] {
            let refused = third.recall(spool, &source, id).unwrap_err();
            assert!(refused.contains(why), "{refused}");
            assert!(refused.contains("someone else asked"), "{refused}");
        }

        // An entry others could have written is not taken.
        let entry = entry_path(&ledger, "01MINE");
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
        let refused = third
            .recall(&spool, &source("claude-code"), "01MINE")
            .unwrap_err();
        assert!(refused.contains("other accounts may write"), "{refused}");
        // Nor without a ledger at all.
        let nowhere = PlacedRequests::new(None);
        let refused = nowhere
            .recall(&spool, &source("claude-code"), "01MINE")
            .unwrap_err();
        assert!(refused.contains("no record"), "{refused}");
    }
}
