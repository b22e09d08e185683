//! Reading spool files defensively.
//!
//! A file is opened relative to its directory's handle without following a link and without
//! blocking on a FIFO, then judged by `fstat` on what was opened (never by a second lookup of
//! the name): a regular file, owned by an account the spool trusts, with one name only, and
//! at most [`MAX_FILE_BYTES`]. Anything else is a [`ReadError`], which the inbox records as a
//! problem and never reads as content.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::BorrowedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use inbox_protocol::limits::MAX_FILE_BYTES;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::accounts;
use crate::facts::Facts;
use crate::trust::Policy;

/// Why a spool file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the file does not exist")]
    Missing,
    #[error("the file is a symbolic link; links are never followed")]
    Symlink,
    #[error("the file is not a regular file (a directory, FIFO, socket or device)")]
    NotRegular,
    #[error("the file is {size} bytes, over the limit of {MAX_FILE_BYTES} bytes (1 MiB)")]
    TooLarge { size: u64 },
    /// More than one name: a hard link can make any file of the inbox's own account (a
    /// secret) appear in the spool, so such a file is never read.
    #[error(
        "the file has {links} hard links; a spool file must have exactly one name (another \
         name could be a private file of this account linked into the spool), so it is not \
         read: remove the extra links, or place the file again by writing a new one"
    )]
    HardLinked { links: u64 },
    /// Owned by an account this spool does not take files from.
    #[error(
        "the file belongs to {}, an account this spool does not take files from (a private \
         spool reads only its own account's files, a team spool only its group members'), so \
         it is not read",
        match account { Some(name) => format!("{name} (uid {uid})"), None => format!("uid {uid}") }
    )]
    ForeignOwner { uid: u32, account: Option<String> },
    #[error("{0}")]
    Io(io::Error),
}

/// A spool file's content and what `fstat` said about it when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoolFile {
    pub bytes: Vec<u8>,
    /// When it was written: for a request, when it was placed.
    pub modified: SystemTime,
    /// The uid of the account that owns it (that wrote it).
    pub owner: u32,
}

/// A placement is `link(tmp, target)` then `unlink(tmp)`, so for a few microseconds a new
/// file has two names. A second name is a problem only if it is still there after this.
const LINK_SETTLE_CHECKS: u32 = 10;
const LINK_SETTLE_PAUSE: Duration = Duration::from_millis(2);

/// Reads `name` in the directory `dir` under `policy` (see the module docs).
pub(crate) fn read_at(
    dir: BorrowedFd<'_>,
    name: &str,
    policy: &Policy,
) -> Result<SpoolFile, ReadError> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        // Unreadable: if that is because another account owns it, say so, not "EACCES".
        Err(Errno::ACCESS) => {
            return Err(
                match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) if !policy.allows(Facts::from(&stat).uid) => {
                        foreign(Facts::from(&stat).uid)
                    }
                    _ => ReadError::Io(Errno::ACCESS.into()),
                },
            )
        }
        Err(errno) => return Err(open_error(errno)),
    };
    let mut facts = fstat(&fd)?;
    if facts.kind != FileType::RegularFile {
        return Err(ReadError::NotRegular);
    }
    if !policy.allows(facts.uid) {
        return Err(foreign(facts.uid));
    }
    for _ in 0..LINK_SETTLE_CHECKS {
        if facts.nlink <= 1 {
            break;
        }
        std::thread::sleep(LINK_SETTLE_PAUSE);
        facts = fstat(&fd)?;
    }
    if facts.nlink > 1 {
        return Err(ReadError::HardLinked { links: facts.nlink });
    }
    let bytes = read_capped_from(File::from(fd), facts.size)?;
    Ok(SpoolFile {
        bytes,
        modified: facts.modified,
        owner: facts.uid,
    })
}

fn foreign(uid: u32) -> ReadError {
    ReadError::ForeignOwner {
        uid,
        account: accounts::account_name(uid),
    }
}

fn fstat(fd: &std::os::fd::OwnedFd) -> Result<Facts, ReadError> {
    rustix::fs::fstat(fd)
        .map(|stat| Facts::from(&stat))
        .map_err(|errno| ReadError::Io(errno.into()))
}

fn open_error(errno: Errno) -> ReadError {
    match errno {
        Errno::LOOP => ReadError::Symlink,
        Errno::NOENT => ReadError::Missing,
        // A socket (ENXIO) or a device without a driver (ENODEV): not a file, and no retry
        // will make it one.
        Errno::NXIO | Errno::NODEV => ReadError::NotRegular,
        other => ReadError::Io(other.into()),
    }
}

/// Refuses a file over the cap, and reads at most cap + 1 bytes in case it grows meanwhile.
fn read_capped_from(file: File, size: u64) -> Result<Vec<u8>, ReadError> {
    if size > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge { size });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// Opens a file by path without following a symlink at its last component and without
/// blocking on a FIFO, checks it is regular and under the cap, and reads it. For files
/// outside a spool (a request file given on the command line); spool files are read through
/// [`crate::Spool::read_file`], which also checks owner and links.
pub fn read_capped(path: &Path) -> Result<Vec<u8>, ReadError> {
    read_capped_with_time(path).map(|(bytes, _)| bytes)
}

/// [`read_capped`], also returning the file's modification time.
pub fn read_capped_with_time(path: &Path) -> Result<(Vec<u8>, SystemTime), ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|error| match error.raw_os_error() {
            Some(code) => open_error(Errno::from_raw_os_error(code)),
            None => ReadError::Io(error),
        })?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    let modified = meta.modified().unwrap_or_else(|_| SystemTime::now());
    Ok((read_capped_from(file, meta.len())?, modified))
}
