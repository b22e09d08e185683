//! Opening the inbox: the spool (its default place and checks live in
//! [`inbox_spool::locations`], re-exported here) and the database, as one engine.

use std::path::Path;

pub use inbox_spool::locations::*;

use crate::{Engine, Store};

/// Opens the spool and the database as an engine, without events or notifications.
pub fn open_engine(spool: &Path, db: &Path) -> Result<Engine, LocationError> {
    let spool = open_spool(spool)?;
    refuse_db_inside_spool(db, spool.root())?;
    let store = Store::open(db)
        .map_err(|e| LocationError(format!("cannot open the database {}: {e}", db.display())))?;
    Engine::new(spool, store)
        .map_err(|e| LocationError(format!("cannot use the database {}: {e}", db.display())))
}
