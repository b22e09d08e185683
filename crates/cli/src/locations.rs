//! Where the spool and the database are, and opening them.
//!
//! The database must never be inside the spool: a spool may sit on a network filesystem,
//! where SQLite's WAL mode is unsafe, and the spool belongs to the askers (they may delete
//! settled files). So that is refused before anything is opened.

use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};
use inbox_engine::{Engine, Spool, Store};

use crate::args::LocationArgs;

/// The directory under the XDG data dir that holds the defaults.
const APP_DIR: &str = "answer-inbox";

/// The spool directory: `--spool`, `ANSWER_INBOX_DIR`, or the default.
pub fn spool_path(args: &LocationArgs) -> Result<PathBuf> {
    given_or_default(
        args.spool.as_deref(),
        "spool",
        "--spool DIR or ANSWER_INBOX_DIR",
    )
}

/// The database file: `--db`, `ANSWER_INBOX_DB`, or the default.
pub fn db_path(args: &LocationArgs) -> Result<PathBuf> {
    given_or_default(
        args.db.as_deref(),
        "inbox.sqlite3",
        "--db FILE or ANSWER_INBOX_DB",
    )
}

fn given_or_default(given: Option<&Path>, default_name: &str, how: &str) -> Result<PathBuf> {
    // An empty variable (`ANSWER_INBOX_DIR=`) means "not set", as it does for most tools.
    match given.filter(|path| !path.as_os_str().is_empty()) {
        Some(path) => Ok(path.to_owned()),
        None => match dirs::data_dir() {
            Some(data) => Ok(data.join(APP_DIR).join(default_name)),
            None => bail!("cannot find the user's data directory (is HOME set?); give {how}"),
        },
    }
}

/// Opens (creating if needed) the spool.
pub fn open_spool(args: &LocationArgs) -> Result<Spool> {
    let path = spool_path(args)?;
    Spool::open(&path).with_context(|| format!("cannot open the spool {}", path.display()))
}

/// Opens the spool and the database as an engine, without events or notifications.
pub fn open_engine(args: &LocationArgs) -> Result<Engine> {
    let spool = open_spool(args)?;
    let db = db_path(args)?;
    refuse_db_inside_spool(&db, spool.root())?;
    let store =
        Store::open(&db).with_context(|| format!("cannot open the database {}", db.display()))?;
    Engine::new(spool, store).with_context(|| format!("cannot use the database {}", db.display()))
}

/// Fails when `db` is the spool or lies under it, symlinks resolved as far as the path
/// exists (the spool exists by now; the database may not yet). Nothing is created.
fn refuse_db_inside_spool(db: &Path, spool: &Path) -> Result<()> {
    let spool_real = spool
        .canonicalize()
        .with_context(|| format!("cannot resolve the spool {}", spool.display()))?;
    let db_abs = std::path::absolute(db)
        .with_context(|| format!("cannot resolve the database path {}", db.display()))?;
    if resolve_existing(&db_abs).starts_with(&spool_real) {
        bail!(
            "the database {} is inside the spool {}; put it elsewhere (--db FILE or \
             ANSWER_INBOX_DB): the spool may be on a network filesystem, where SQLite's WAL \
             mode is unsafe",
            db.display(),
            spool.display()
        );
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
