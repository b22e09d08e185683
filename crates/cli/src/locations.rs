//! Where the spool and the database are, from the command line or the defaults the desktop
//! app shares (`inbox_engine::locations`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use inbox_engine::{locations, Engine, Spool};

use crate::args::LocationArgs;

/// The spool directory: `--spool`, `ANSWER_INBOX_DIR`, or the default.
pub fn spool_path(args: &LocationArgs) -> Result<PathBuf> {
    given_or_default(
        args.spool.as_deref(),
        locations::default_spool,
        "--spool DIR or ANSWER_INBOX_DIR",
    )
}

/// The database file: `--db`, `ANSWER_INBOX_DB`, or the default.
pub fn db_path(args: &LocationArgs) -> Result<PathBuf> {
    given_or_default(
        args.db.as_deref(),
        locations::default_db,
        "--db FILE or ANSWER_INBOX_DB",
    )
}

fn given_or_default(
    given: Option<&Path>,
    default: fn() -> Option<PathBuf>,
    how: &str,
) -> Result<PathBuf> {
    // An empty variable (`ANSWER_INBOX_DIR=`) means "not set", as it does for most tools.
    match given.filter(|path| !path.as_os_str().is_empty()) {
        Some(path) => Ok(path.to_owned()),
        None => default().with_context(|| {
            format!("cannot find the user's data directory (is HOME set?); give {how}")
        }),
    }
}

/// Opens (creating if needed) the spool.
pub fn open_spool(args: &LocationArgs) -> Result<Spool> {
    Ok(locations::open_spool(&spool_path(args)?)?)
}

/// Opens the spool and the database as an engine, without events or notifications.
pub fn open_engine(args: &LocationArgs) -> Result<Engine> {
    Ok(locations::open_engine(&spool_path(args)?, &db_path(args)?)?)
}
