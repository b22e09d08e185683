//! Opening the inbox: the spool (its default place and checks live in
//! [`inbox_spool::locations`], re-exported here) and the database, as one engine.

use std::path::{Path, PathBuf};

pub use inbox_spool::locations::*;

use inbox_spool::{Spool, Trust};

use crate::{Engine, Store};

/// Opens the spool (private to this account) and the database as an engine, without
/// events or notifications.
pub fn open_engine(spool: &Path, db: &Path) -> Result<Engine, LocationError> {
    open_engine_with(spool, db, Trust::Private)
}

/// [`open_engine`] for a spool of the given [`Trust`] (a team's, see docs/SECURITY.md).
/// Refuses a directory that is not a spool (it holds other things) before touching it.
pub fn open_engine_with(spool: &Path, db: &Path, trust: Trust) -> Result<Engine, LocationError> {
    let spool = Spool::open_with(spool, trust)
        .map_err(|e| LocationError(format!("cannot open the spool {}: {e}", spool.display())))?;
    refuse_db_inside_spool(db, spool.root())?;
    let store = Store::open(db)
        .map_err(|e| LocationError(format!("cannot open the database {}: {e}", db.display())))?;
    Engine::new(spool, store)
        .map_err(|e| LocationError(format!("cannot use the database {}: {e}", db.display())))
}

/// Where the operator's policy file is by default: `<XDG config dir>/answer-inbox/policy.toml`
/// (shared by the CLI and the desktop app). It need not exist: then the shipped policy
/// applies.
pub fn default_policy() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("answer-inbox").join("policy.toml"))
}
