//! What lets a browser on another device act for the operator: paired devices, the one-time
//! pairing codes that pair them, and the one-time action URLs a push notification carries.
//!
//! All of it lives in one SQLite file beside the engine's database, private to the operator
//! (mode 0600). Every secret handed out (a device token, a pairing code, an action token) is
//! 32 random bytes from the operating system, base64url without padding, and only its SHA-256
//! is stored: a copy of the file (a backup, a stray sync) lets nobody act as a device. The
//! CSRF token is stored as it is: it is not a credential on its own, only proof that a request
//! came from the page that holds the device's cookie.
//!
//! Tokens are compared by looking up their hash in a unique index rather than with a
//! constant-time comparison: what a lookup's timing could reveal is a prefix of a SHA-256,
//! which brings an attacker no closer to a token that hashes to it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::{DateTime, Duration, Utc};
use inbox_protocol::sha256_hex;
use inbox_protocol::text::is_hidden;
use inbox_spool::locations;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use rusqlite_migration::{Migrations, M};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long a write waits for another connection's lock before giving up.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// `last_seen_at` is written at most this often, so that authenticating every request of a
/// busy page stays a read.
const LAST_SEEN_EVERY: Duration = Duration::minutes(1);

/// Used and expired pairing codes and actions are kept this long, so that a late attempt is
/// told "already used" or "expired" rather than "unknown"; after that they are deleted when a
/// new one is made.
const KEEP_SPENT: Duration = Duration::days(1);

/// The longest device name, in characters.
pub const MAX_DEVICE_NAME: usize = 40;

/// Why a pairing code was refused: each is a `DeviceError::PairingRefused`.
pub const PAIRING_UNKNOWN: &str = "unknown pairing code";
pub const PAIRING_USED: &str = "this pairing code was already used";
pub const PAIRING_EXPIRED: &str = "this pairing code expired";

/// Why an action token was refused: each is a `DeviceError::ActionRefused`.
pub const ACTION_UNKNOWN: &str = "unknown answer link";
pub const ACTION_USED: &str = "this answer link was already used";
pub const ACTION_EXPIRED: &str = "this answer link expired";

#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The file could not be opened, read or written; the message names it.
    #[error("{0}")]
    Storage(String),
    #[error("{0}")]
    PairingRefused(&'static str),
    #[error("{0}")]
    BadName(String),
    #[error("no device has the id {0:?}")]
    UnknownDevice(String),
    #[error("{0}")]
    ActionRefused(&'static str),
}

/// A paired device as the operator sees it; never its token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Device {
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A device just paired: `token` is its secret, returned this once (it goes into the cookie)
/// and never stored.
#[derive(Clone)]
pub struct Session {
    pub device: Device,
    pub token: String,
    pub csrf: String,
}

// By hand, so that a debug log of a session never holds the token.
impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("device", &self.device)
            .field("token", &"<secret>")
            .field("csrf", &self.csrf)
            .finish()
    }
}

/// A request made with a valid device token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub device: Device,
    pub csrf: String,
}

/// What a one-time action URL does when it is used: answer `request_id`, as it was at
/// `version`, with `answers`. `label` is what the button said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingAction {
    pub request_id: String,
    pub version: String,
    pub answers: serde_json::Map<String, Value>,
    pub label: String,
}

/// The device store: one connection behind a mutex, shared by the server's handlers.
pub struct DeviceStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

/// Schema history. Append only: a released migration is never edited.
fn migrations() -> Migrations<'static> {
    Migrations::new(vec![M::up(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE devices (
             id TEXT PRIMARY KEY,
             name TEXT NOT NULL,
             token_hash TEXT NOT NULL UNIQUE,  -- hex SHA-256 of the token, never the token
             csrf TEXT NOT NULL,
             created_at INTEGER NOT NULL,      -- ms since the epoch
             last_seen_at INTEGER,
             revoked_at INTEGER
         );
         CREATE TABLE pairing_codes (
             code_hash TEXT PRIMARY KEY,       -- hex SHA-256 of the code
             created_at INTEGER NOT NULL,
             expires_at INTEGER NOT NULL,
             used_at INTEGER
         );
         CREATE TABLE actions (
             token_hash TEXT PRIMARY KEY,      -- hex SHA-256 of the token
             request_id TEXT NOT NULL,
             version TEXT NOT NULL,
             answers TEXT NOT NULL,            -- a JSON object
             label TEXT NOT NULL,
             created_at INTEGER NOT NULL,
             expires_at INTEGER NOT NULL,
             used_at INTEGER
         );",
    )])
}

fn ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// A new secret: 32 random bytes from the operating system, base64url without padding.
fn new_secret() -> Result<String, DeviceError> {
    random_text::<32>()
}

fn random_text<const N: usize>() -> Result<String, DeviceError> {
    Ok(URL_SAFE_NO_PAD.encode(random_bytes::<N>()?))
}

fn random_bytes<const N: usize>() -> Result<[u8; N], DeviceError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|error| {
        DeviceError::Storage(format!(
            "the operating system gave no random bytes for a new secret: {error}"
        ))
    })?;
    Ok(bytes)
}

/// What is stored in place of a token or code.
fn secret_hash(secret: &str) -> String {
    sha256_hex(secret.as_bytes())
}

/// The name a device is shown under: trimmed, 1 to 40 characters, nothing a person cannot
/// see (controls, bidirectional overrides, zero-width and other format characters), so that
/// a name in the device list cannot pose as another or reorder the text around it.
pub fn check_device_name(name: &str) -> Result<String, DeviceError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(DeviceError::BadName("a device name cannot be empty".into()));
    }
    let length = name.chars().count();
    if length > MAX_DEVICE_NAME {
        return Err(DeviceError::BadName(format!(
            "a device name can be at most {MAX_DEVICE_NAME} characters; this one has {length}"
        )));
    }
    if let Some(hidden) = name.chars().find(|&c| is_hidden(c)) {
        return Err(DeviceError::BadName(format!(
            "a device name cannot hold control, bidirectional or invisible characters \
             (it holds {})",
            hidden.escape_unicode()
        )));
    }
    Ok(name.to_owned())
}

impl DeviceStore {
    /// The default file: beside the engine's database.
    pub fn path_beside(db_path: &Path) -> PathBuf {
        db_path.with_file_name("devices.sqlite3")
    }

    /// Opens the store at `path`, making the file (mode 0600) and its directory (0700) when
    /// they do not exist yet, and bringing the schema up to date; refuses a file that is a
    /// link, another account's, or writable by others (`inbox_spool::locations`).
    pub fn open(path: &Path) -> Result<DeviceStore, DeviceError> {
        let failed = |what: &str, error: &dyn fmt::Display| {
            DeviceError::Storage(format!(
                "the device store {}: {what}: {error}",
                path.display()
            ))
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            locations::create_private_dirs(parent, 0o700)
                .map_err(|error| failed("cannot make its directory", &error))?;
        }
        // The engine database's rule, for the same reason: the device tokens' hashes decide
        // who may answer, so a file another account could have written or linked is refused,
        // and the file is never opened or chmodded through a link.
        let file =
            locations::open_database_file(path).map_err(|error| DeviceError::Storage(error.0))?;
        let flags = OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn = Connection::open_with_flags(file.path(), flags)
            .map_err(|error| failed("cannot open", &error))?;
        file.still_there()
            .map_err(|error| DeviceError::Storage(error.0))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .and_then(|()| conn.pragma_update(None, "journal_mode", "WAL"))
            .and_then(|()| conn.pragma_update(None, "synchronous", "NORMAL"))
            .map_err(|error| failed("cannot set it up", &error))?;
        migrations()
            .to_latest(&mut conn)
            .map_err(|error| failed("cannot bring its schema up to date", &error))?;
        Ok(DeviceStore {
            path: path.to_owned(),
            conn: Mutex::new(conn),
        })
    }

    /// A database error, naming the file.
    fn storage(&self, error: rusqlite::Error) -> DeviceError {
        let path = self.path.display();
        match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                DeviceError::Storage(format!(
                    "the device store {path} is locked by another process (waited {} s for \
                     it); nothing was changed",
                    BUSY_TIMEOUT.as_secs()
                ))
            }
            _ => DeviceError::Storage(format!("the device store {path}: {error}")),
        }
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A handler that panicked while holding the lock left no half-done write behind (a
        // dropped transaction rolls back), so the connection is still good to use.
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new one-time pairing code, valid for `ttl` from `now`. The code itself is returned
    /// and never stored.
    pub fn new_pairing_code(
        &self,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<String, DeviceError> {
        let code = new_secret()?;
        let conn = self.conn();
        conn.execute(
            "DELETE FROM pairing_codes WHERE expires_at < ?1 OR used_at < ?1",
            [ms(now - KEEP_SPENT)],
        )
        .and_then(|_| {
            conn.execute(
                "INSERT INTO pairing_codes (code_hash, created_at, expires_at) VALUES (?1, ?2, ?3)",
                params![secret_hash(&code), ms(now), ms(now + ttl)],
            )
        })
        .map_err(|error| self.storage(error))?;
        Ok(code)
    }

    /// Pairs a device with a pairing code: the code is marked used in the same transaction
    /// that creates the device (taken with BEGIN IMMEDIATE, so no other connection reads the
    /// code in between), so two browsers racing with one code get one device between them.
    /// A bad name is refused before the code is spent.
    pub fn pair(&self, code: &str, name: &str, now: DateTime<Utc>) -> Result<Session, DeviceError> {
        let name = check_device_name(name)?;
        let code_hash = secret_hash(code);
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|error| self.storage(error))?;
        let found: Option<(i64, Option<i64>)> = tx
            .query_row(
                "SELECT expires_at, used_at FROM pairing_codes WHERE code_hash = ?1",
                [&code_hash],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(|error| self.storage(error))?;
        match found {
            None => return Err(DeviceError::PairingRefused(PAIRING_UNKNOWN)),
            Some((_, Some(_))) => return Err(DeviceError::PairingRefused(PAIRING_USED)),
            Some((expires_at, None)) if expires_at <= ms(now) => {
                return Err(DeviceError::PairingRefused(PAIRING_EXPIRED))
            }
            Some(_) => {}
        }
        let spent = tx
            .execute(
                "UPDATE pairing_codes SET used_at = ?2 WHERE code_hash = ?1 AND used_at IS NULL",
                params![code_hash, ms(now)],
            )
            .map_err(|error| self.storage(error))?;
        if spent != 1 {
            return Err(DeviceError::PairingRefused(PAIRING_USED));
        }
        let token = new_secret()?;
        let csrf = new_secret()?;
        // Short, for URLs and the device list; 48 random bits are plenty among the handful of
        // devices one operator pairs, and a clash would fail the insert, not merge devices.
        // Hex, so an id never starts with `-` and reads as an option on a command line.
        let id = random_bytes::<6>()?
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        tx.execute(
            "INSERT INTO devices (id, name, token_hash, csrf, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, name, secret_hash(&token), csrf, ms(now)],
        )
        .and_then(|_| tx.commit())
        .map_err(|error| self.storage(error))?;
        Ok(Session {
            device: Device {
                id,
                name,
                created_at: from_ms(ms(now)),
                last_seen_at: None,
                revoked_at: None,
            },
            token,
            csrf,
        })
    }

    /// The device a token belongs to, or None for an unknown or revoked token. Notes when the
    /// device was last seen, at most once a minute.
    pub fn authenticate(
        &self,
        token: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Authenticated>, DeviceError> {
        let token_hash = secret_hash(token);
        let conn = self.conn();
        let found = conn
            .query_row(
                &format!("SELECT {DEVICE_COLUMNS}, csrf FROM devices WHERE token_hash = ?1"),
                [&token_hash],
                |row| Ok((device_from_row(row)?, row.get::<_, String>(5)?)),
            )
            .optional()
            .map_err(|error| self.storage(error))?;
        let Some((mut device, csrf)) = found else {
            return Ok(None);
        };
        if device.revoked_at.is_some() {
            return Ok(None);
        }
        let stale = device
            .last_seen_at
            .is_none_or(|seen| now - seen >= LAST_SEEN_EVERY);
        if stale {
            conn.execute(
                "UPDATE devices SET last_seen_at = ?2 WHERE id = ?1",
                params![device.id, ms(now)],
            )
            .map_err(|error| self.storage(error))?;
            device.last_seen_at = Some(from_ms(ms(now)));
        }
        Ok(Some(Authenticated { device, csrf }))
    }

    /// Every device ever paired, revoked ones too, newest first.
    pub fn list(&self) -> Result<Vec<Device>, DeviceError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {DEVICE_COLUMNS} FROM devices ORDER BY created_at DESC, id"
            ))
            .map_err(|error| self.storage(error))?;
        let rows = stmt
            .query_map([], device_from_row)
            .map_err(|error| self.storage(error))?;
        rows.collect::<Result<_, _>>()
            .map_err(|error| self.storage(error))
    }

    fn device(&self, conn: &Connection, id: &str) -> Result<Device, DeviceError> {
        conn.query_row(
            &format!("SELECT {DEVICE_COLUMNS} FROM devices WHERE id = ?1"),
            [id],
            device_from_row,
        )
        .optional()
        .map_err(|error| self.storage(error))?
        .ok_or_else(|| DeviceError::UnknownDevice(id.to_owned()))
    }

    pub fn rename(&self, id: &str, name: &str) -> Result<Device, DeviceError> {
        let name = check_device_name(name)?;
        let conn = self.conn();
        let changed = conn
            .execute(
                "UPDATE devices SET name = ?2 WHERE id = ?1",
                params![id, name],
            )
            .map_err(|error| self.storage(error))?;
        if changed == 0 {
            return Err(DeviceError::UnknownDevice(id.to_owned()));
        }
        self.device(&conn, id)
    }

    /// Revokes a device: its token authenticates nothing from now on. Revoking twice keeps
    /// the first time.
    pub fn revoke(&self, id: &str, now: DateTime<Utc>) -> Result<Device, DeviceError> {
        let conn = self.conn();
        let changed = conn
            .execute(
                "UPDATE devices SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1",
                params![id, ms(now)],
            )
            .map_err(|error| self.storage(error))?;
        if changed == 0 {
            return Err(DeviceError::UnknownDevice(id.to_owned()));
        }
        self.device(&conn, id)
    }

    /// A new one-time action token for `action`, usable until `expires_at`. The token is
    /// returned and never stored.
    pub fn new_action(
        &self,
        action: &PendingAction,
        expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<String, DeviceError> {
        let token = new_secret()?;
        let answers = Value::Object(action.answers.clone()).to_string();
        let conn = self.conn();
        conn.execute(
            "DELETE FROM actions WHERE expires_at < ?1 OR used_at < ?1",
            [ms(now - KEEP_SPENT)],
        )
        .and_then(|_| {
            conn.execute(
                "INSERT INTO actions
                     (token_hash, request_id, version, answers, label, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    secret_hash(&token),
                    action.request_id,
                    action.version,
                    answers,
                    action.label,
                    ms(now),
                    ms(expires_at),
                ],
            )
        })
        .map_err(|error| self.storage(error))?;
        Ok(token)
    }

    /// Spends an action token and returns what it does. One-time: the token is marked used
    /// by a single `UPDATE ... WHERE used_at IS NULL`, so of two redeems racing (on any
    /// connection) exactly one gets the action, and the other is told it was already used.
    pub fn redeem_action(
        &self,
        token: &str,
        now: DateTime<Utc>,
    ) -> Result<PendingAction, DeviceError> {
        let token_hash = secret_hash(token);
        let conn = self.conn();
        let spent = conn
            .query_row(
                "UPDATE actions SET used_at = ?2
                 WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2
                 RETURNING request_id, version, answers, label",
                params![token_hash, ms(now)],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|error| self.storage(error))?;
        let Some((request_id, version, answers, label)) = spent else {
            // Nothing spent: say why.
            let found: Option<Option<i64>> = conn
                .query_row(
                    "SELECT used_at FROM actions WHERE token_hash = ?1",
                    [&token_hash],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|error| self.storage(error))?;
            return Err(DeviceError::ActionRefused(match found {
                None => ACTION_UNKNOWN,
                Some(Some(_)) => ACTION_USED,
                Some(None) => ACTION_EXPIRED,
            }));
        };
        let answers = match serde_json::from_str(&answers) {
            Ok(Value::Object(answers)) => answers,
            _ => {
                return Err(DeviceError::Storage(format!(
                    "the device store {} holds malformed answers for an action on {request_id}",
                    self.path.display()
                )))
            }
        };
        Ok(PendingAction {
            request_id,
            version,
            answers,
            label,
        })
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), DeviceError> {
        self.conn()
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )
            .map_err(|error| self.storage(error))?;
        Ok(())
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>, DeviceError> {
        self.conn()
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| {
                row.get(0)
            })
            .optional()
            .map_err(|error| self.storage(error))
    }
}

/// The columns `device_from_row` reads, in its order.
const DEVICE_COLUMNS: &str = "id, name, created_at, last_seen_at, revoked_at";

fn device_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Device> {
    Ok(Device {
        id: row.get(0)?,
        name: row.get(1)?,
        created_at: from_ms(row.get(2)?),
        last_seen_at: row.get::<_, Option<i64>>(3)?.map(from_ms),
        revoked_at: row.get::<_, Option<i64>>(4)?.map(from_ms),
    })
}

#[cfg(test)]
mod tests;
