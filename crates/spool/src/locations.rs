//! Where the spool and the database live by default, and opening the spool safely. Shared
//! by the CLI, the desktop app and askers (`inbox-client`), so all find the same inbox.
//!
//! The database must never be inside the spool: a spool may sit on a network filesystem,
//! where SQLite's WAL mode is unsafe, and the spool belongs to the askers (they may delete
//! settled files). So that is refused before anything is opened.
//!
//! The database holds every answer and the audit log, so it is used only if no other
//! account could have written it or put it there, the rule the spool's files and the policy
//! file follow too: the path is not a link (a link could lead into the spool's `tmp/`, or to
//! a file of another account's), the file is the operator's own and writable by nobody
//! else ([`open_database_file`]). The directories the inbox makes for its data are the
//! operator's alone whatever the umask ([`create_private_dirs`]).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::OFlags;

use crate::accounts::{current_account, current_uid, describe_account};
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
/// The mode of the directories made for the operator's own data: theirs alone.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Creates `path` and each missing directory above it with `mode`, whatever the umask:
/// `mkdir` asks for the mode, then each directory made here is given it explicitly (a umask
/// only takes bits away, but an odd one can take the owner's too) and checked. Directories
/// that already exist are left as they are.
pub fn create_private_dirs(path: &Path, mode: u32) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        match std::fs::metadata(current) {
            Ok(_) => break,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                missing.push(current);
                match current.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => current = parent,
                    _ => break,
                }
            }
            Err(error) => return Err(error),
        }
    }
    for dir in missing.into_iter().rev() {
        match DirBuilder::new().mode(mode).create(dir) {
            Ok(()) => {}
            // Made meanwhile by another process: its maker gives it its mode.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
        // Through a handle that does not follow a link: only the directory made here.
        let handle = OpenOptions::new()
            .read(true)
            .custom_flags((OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC).bits() as i32)
            .open(dir)?;
        handle.set_permissions(std::fs::Permissions::from_mode(mode))?;
        let made = handle.metadata()?.mode() & 0o7777;
        if made != mode {
            return Err(io::Error::other(format!(
                "{} was made with mode {made:04o}, not {mode:04o}",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The database file, opened and checked before SQLite opens it ([`open_database_file`]).
/// Kept open until SQLite has it, so that [`DatabaseFile::still_there`] can tell whether the
/// name still leads to the file that was checked.
#[derive(Debug)]
pub struct DatabaseFile {
    file: File,
    real: PathBuf,
}

impl DatabaseFile {
    /// The path to give SQLite: the file's, with every directory on the way resolved, so
    /// that SQLite may refuse any link it meets (SQLITE_OPEN_NOFOLLOW).
    pub fn path(&self) -> &Path {
        &self.real
    }

    /// Fails when the path no longer names the file that was checked: it was replaced
    /// between the check and SQLite's open.
    pub fn still_there(&self) -> Result<(), LocationError> {
        let checked = self.file.metadata();
        let now = std::fs::symlink_metadata(&self.real);
        match (checked, now) {
            (Ok(a), Ok(b)) if a.dev() == b.dev() && a.ino() == b.ino() => Ok(()),
            _ => Err(LocationError(format!(
                "the database {} was replaced while it was being opened; try again, and \
                 check who else can write to {}",
                self.real.display(),
                self.real.parent().unwrap_or(Path::new("/")).display()
            ))),
        }
    }
}

/// Opens the database file, creating it (mode 0600) when it does not exist, if no other
/// account could have written it or put it there: not a link, a regular file owned by this
/// account, writable by nobody else. One others may only read is made private (`fchmod` on
/// the opened file, never through a path). Otherwise the error names the file and how to
/// fix it; nothing is changed.
pub fn open_database_file(path: &Path) -> Result<DatabaseFile, LocationError> {
    let shown = path.display();
    let flags = (OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC).bits();
    let open = |write: bool| {
        OpenOptions::new()
            .read(true)
            .write(write)
            .create(write)
            .mode(0o600)
            .custom_flags(flags as i32)
            .open(path)
    };
    // A database this account may only read (an export's copy) is still read.
    let opened = match open(true) {
        Err(error) if error.kind() == io::ErrorKind::PermissionDenied => open(false),
        other => other,
    };
    let file = match opened {
        Ok(file) => file,
        Err(error) if error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            let target = std::fs::read_link(path)
                .map(|target| format!(" to {}", target.display()))
                .unwrap_or_default();
            return Err(LocationError(format!(
                "the database {shown} is a symbolic link{target}: the inbox never opens its \
                 database through a link, which could lead into the spool or to another \
                 account's file; give the file's own path (--db FILE or ANSWER_INBOX_DB)"
            )));
        }
        Err(error) => {
            return Err(LocationError(format!(
                "cannot open the database {shown}: {error}"
            )))
        }
    };
    let meta = file
        .metadata()
        .map_err(|error| LocationError(format!("cannot check the database {shown}: {error}")))?;
    if !meta.file_type().is_file() {
        return Err(LocationError(format!(
            "the database {shown} is not a regular file (a directory, FIFO or device)"
        )));
    }
    if meta.uid() != current_uid() {
        return Err(LocationError(format!(
            "the database {shown} belongs to {}, not to {}: that account could have put \
             its own history and answers in it, so it is not used. Use a database of your \
             own (move this one away and a new one is made, or give --db FILE), or, if it is \
             yours, run: chown {} {shown}",
            describe_account(meta.uid()),
            current_account(),
            current_account(),
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(LocationError(format!(
            "the database {shown} is writable by other accounts (mode {mode:04o}): they could \
             change its history and answers, so it is not used. Make it yours alone: chmod \
             600 {shown}"
        )));
    }
    if mode & 0o077 != 0 {
        // It holds every answer: readable by this account alone.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|error| {
                LocationError(format!("cannot make the database {shown} private: {error}"))
            })?;
    }
    let real = resolve_existing(&std::path::absolute(path).map_err(|error| {
        LocationError(format!("cannot resolve the database path {shown}: {error}"))
    })?);
    Ok(DatabaseFile { file, real })
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
