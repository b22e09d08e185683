//! Where the spool and the database live by default, and opening the spool safely. Shared
//! by the CLI, the desktop app and askers (`inbox-client`), so all find the same inbox.
//!
//! The database must never be inside the spool: a spool may sit on a network filesystem,
//! where SQLite's WAL mode is unsafe, and the spool belongs to the askers (they may delete
//! settled files). So that is refused before anything is opened.

use std::path::{Component, Path, PathBuf};

use crate::Spool;

/// The directory under the XDG data dir that holds the defaults.
const APP_DIR: &str = "answer-inbox";

/// Why the inbox could not be opened; the message names the path and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LocationError(pub String);

/// The default spool: `$XDG_DATA_HOME/answer-inbox/spool`.
pub fn default_spool() -> Option<PathBuf> {
    dirs::data_dir().map(|data| data.join(APP_DIR).join("spool"))
}

/// The default database: `$XDG_DATA_HOME/answer-inbox/inbox.sqlite3`.
pub fn default_db() -> Option<PathBuf> {
    dirs::data_dir().map(|data| data.join(APP_DIR).join("inbox.sqlite3"))
}

/// Opens (creating if needed) the spool.
pub fn open_spool(path: &Path) -> Result<Spool, LocationError> {
    Spool::open(path)
        .map_err(|e| LocationError(format!("cannot open the spool {}: {e}", path.display())))
}

/// Fails when `db` is the spool or lies under it, symlinks resolved as far as the path
/// exists (the spool exists by now; the database may not yet). Nothing is created.
pub fn refuse_db_inside_spool(db: &Path, spool: &Path) -> Result<(), LocationError> {
    let spool_real = spool
        .canonicalize()
        .map_err(|e| LocationError(format!("cannot resolve the spool {}: {e}", spool.display())))?;
    let db_abs = std::path::absolute(db).map_err(|e| {
        LocationError(format!(
            "cannot resolve the database path {}: {e}",
            db.display()
        ))
    })?;
    if resolve_existing(&db_abs).starts_with(&spool_real) {
        return Err(LocationError(format!(
            "the database {} is inside the spool {}; put it elsewhere (--db FILE or \
             ANSWER_INBOX_DB): the spool may be on a network filesystem, where SQLite's WAL \
             mode is unsafe",
            db.display(),
            spool.display()
        )));
    }
    Ok(())
}
/// `path` with `.` and `..` resolved and its longest existing prefix canonicalised.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    let mut rest = Vec::new();
    let mut base = lexical.as_path();
    loop {
        if let Ok(real) = base.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                base = parent;
            }
            _ => return lexical,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_inside_the_spool_is_refused() {
        let dir = std::env::temp_dir().join(format!("answer-inbox-loc-{}", std::process::id()));
        let spool = dir.join("spool");
        std::fs::create_dir_all(&spool).unwrap();
        assert!(refuse_db_inside_spool(&spool.join("inbox.sqlite3"), &spool).is_err());
        assert!(refuse_db_inside_spool(&spool.join("sub/../x.db"), &spool).is_err());
        assert!(refuse_db_inside_spool(&spool.join("a/b/x.db"), &spool).is_err());
        assert!(refuse_db_inside_spool(&spool.join("../x.db"), &spool).is_ok());
        assert!(!spool.join("a").exists(), "nothing is created");
        std::os::unix::fs::symlink(&spool, dir.join("link")).unwrap();
        assert!(refuse_db_inside_spool(&dir.join("link/x.db"), &spool).is_err());
        assert!(refuse_db_inside_spool(&dir.join("inbox.sqlite3"), &spool).is_ok());
        // A sibling whose name merely starts like the spool is fine.
        assert!(refuse_db_inside_spool(&dir.join("spool2/x.db"), &spool).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
