//! Opening a spool: its root and four directories as handles, or a refusal before anything
//! is touched.
//!
//! The root and `questions/`, `answers/`, `cancel/`, `tmp/` are each opened once with
//! `O_DIRECTORY | O_NOFOLLOW`, and every later operation goes through those handles
//! (`openat`, `linkat`, `unlinkat`, ...): a directory swapped for a link after the check is
//! never followed, and a path is never resolved again.
//!
//! A directory is taken as a spool only if it holds nothing but those four directories and
//! the marker file [`MARKER`] (written by whoever creates the spool, in a new or empty
//! directory). Anything else (a project's files, a home directory) is refused with
//! [`SpoolError::NotASpool`] and left exactly as it was: nothing is created in it and
//! nothing in it is reaped.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{Area, SpoolError};
use crate::facts::Facts;
use crate::trust::{Policy, Trust};

pub use crate::error::MARKER;

/// What the marker says to a person who finds it.
const MARKER_TEXT: &str = "This directory is an Answer Inbox spool: requests in questions/, \
answers in answers/, withdrawals in cancel/, files being written in tmp/.\n\
Nothing else belongs here; the inbox refuses a directory that holds anything else.\n";

/// The spool's directories, in the order they are created.
pub(crate) const SUBDIRS: [&str; 4] = ["tmp", "questions", "answers", "cancel"];

/// A directory a spool may hold, made only when first needed: `approvals/`, for requests
/// whose rule needs several people (docs/TEAMS.md).
pub(crate) const LATER_DIRS: [&str; 1] = [inbox_protocol::approval::APPROVALS_DIR];

/// The team's policy file a team spool may hold in its root (docs/TEAMS.md): read by every
/// member's inbox, only if the spool's owner wrote it and nobody else may.
pub const TEAM_POLICY: &str = "team-policy.toml";

/// The open handles of a spool.
#[derive(Debug)]
pub(crate) struct Handles {
    pub root: OwnedFd,
    pub tmp: OwnedFd,
    pub questions: OwnedFd,
    pub answers: OwnedFd,
    pub cancel: OwnedFd,
}

impl Handles {
    pub(crate) fn area(&self, area: Area) -> BorrowedFd<'_> {
        match area {
            Area::Questions => self.questions.as_fd(),
            Area::Answers => self.answers.as_fd(),
            Area::Cancel => self.cancel.as_fd(),
        }
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Opens (creating what is missing) the spool at `root`. `trust`: the inbox's explicit
/// choice; `None` for an asker, who follows what the spool already is.
pub(crate) fn open(root: &Path, trust: Option<&Trust>) -> Result<(Handles, Policy), SpoolError> {
    // An unknown team group is refused before anything exists.
    let given = trust.map(Policy::resolve).transpose()?;
    let (root_fd, created) = open_root(root, given.as_ref())?;
    let policy = match given {
        Some(policy) => policy,
        None if created => Policy::private(),
        None => Policy::detect(&fstat(&root_fd, root)?),
    };
    if created {
        policy
            .apply(&root_fd, policy.dir_mode(), &fstat(&root_fd, root)?)
            .map_err(io_at(root))?;
    }

    // Everything is checked before anything is created.
    let present = check_contents(&root_fd, root)?;
    if created || present.is_empty() {
        write_marker(&root_fd, root, &policy)?;
    }
    let open_subdir = |name: &str| -> Result<OwnedFd, SpoolError> {
        let path = root.join(name);
        let made = if present.iter().any(|p| p == name) {
            false
        } else {
            match rustix::fs::mkdirat(&root_fd, name, Mode::from_raw_mode(policy.dir_mode())) {
                Ok(()) => true,
                // Another process created it meanwhile: open it like any existing one.
                Err(Errno::EXIST) => false,
                Err(errno) => return Err(io_at(&path)(errno.into())),
            }
        };
        let fd = open_dir_at(&root_fd, name, &path)?;
        if made {
            policy
                .apply(&fd, policy.dir_mode(), &fstat(&fd, &path)?)
                .map_err(io_at(&path))?;
        }
        Ok(fd)
    };
    let handles = Handles {
        tmp: open_subdir("tmp")?,
        questions: open_subdir("questions")?,
        answers: open_subdir("answers")?,
        cancel: open_subdir("cancel")?,
        root: root_fd,
    };
    Ok((handles, policy))
}

/// Opens the root without following a link at its last component, creating it (and its
/// parents, which are not the spool's) when it does not exist. Returns whether it was
/// created here.
fn open_root(root: &Path, policy: Option<&Policy>) -> Result<(OwnedFd, bool), SpoolError> {
    // `a/b/`, `a/b/.`: the name is `b`; `/`, `.` and `..` have none and cannot be links.
    let Some(name) = root.file_name() else {
        let fd = rustix::fs::open(root, DIR_FLAGS, Mode::empty())
            .map_err(|errno| dir_open_error(root, errno))?;
        return Ok((fd, false));
    };
    let parent = match root.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let parent_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let parent_fd = match rustix::fs::open(parent, parent_flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => {
            // The spool cannot exist either. Its parents (the data directory, by default)
            // are made the operator's alone whatever the umask, or, for a team's spool,
            // open for its members to pass through (see `Policy::parent_mode`).
            let mode = policy.map_or(crate::locations::PRIVATE_DIR_MODE, Policy::parent_mode);
            crate::locations::create_private_dirs(parent, mode).map_err(io_at(parent))?;
            rustix::fs::open(parent, parent_flags, Mode::empty())
                .map_err(|errno| io_at(parent)(errno.into()))?
        }
        Err(errno) => return Err(io_at(parent)(errno.into())),
    };
    let created = match rustix::fs::statat(&parent_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            refuse_unless_dir(root, &Facts::from(&stat))?;
            false
        }
        Err(Errno::NOENT) => {
            let mode = policy.map_or(0o700, Policy::dir_mode);
            match rustix::fs::mkdirat(&parent_fd, name, Mode::from_raw_mode(mode)) {
                Ok(()) => true,
                Err(Errno::EXIST) => false,
                Err(errno) => return Err(io_at(root)(errno.into())),
            }
        }
        Err(errno) => return Err(io_at(root)(errno.into())),
    };
    Ok((open_dir_at(&parent_fd, name, root)?, created))
}

/// The names in the root, once each is known to be a spool directory or the marker.
fn check_contents(root_fd: &OwnedFd, root: &Path) -> Result<Vec<String>, SpoolError> {
    let mut present = Vec::new();
    let mut strays: Vec<Vec<u8>> = Vec::new();
    let listing = Dir::read_from(root_fd).map_err(|errno| io_at(root)(errno.into()))?;
    for entry in listing {
        let entry = entry.map_err(|errno| io_at(root)(errno.into()))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let text = std::str::from_utf8(name).ok();
        match text {
            Some(dir) if SUBDIRS.contains(&dir) || LATER_DIRS.contains(&dir) => {
                let path = root.join(dir);
                let facts = facts_at(root_fd, dir, &path)?;
                refuse_unless_dir(&path, &facts)?;
                present.push(dir.to_owned());
            }
            Some(MARKER) => {
                let path = root.join(MARKER);
                if facts_at(root_fd, MARKER, &path)?.kind != FileType::RegularFile {
                    return Err(SpoolError::Unsafe {
                        path,
                        reason: "the spool's marker is not a regular file".to_owned(),
                    });
                }
                present.push(MARKER.to_owned());
            }
            // Whether it may be used is the policy's to say (it is read by path, held to
            // the rule of a policy file); here it only is no stray.
            Some(TEAM_POLICY) => present.push(TEAM_POLICY.to_owned()),
            _ => strays.push(name.to_vec()),
        }
    }
    strays.sort();
    if let Some(first) = strays.first() {
        return Err(SpoolError::NotASpool {
            root: root.to_owned(),
            entry: OsStr::from_bytes(first).to_string_lossy().into_owned(),
        });
    }
    Ok(present)
}

fn write_marker(root_fd: &OwnedFd, root: &Path, policy: &Policy) -> Result<(), SpoolError> {
    let path = root.join(MARKER);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mode = policy.file_mode();
    match rustix::fs::openat(root_fd, MARKER, flags, Mode::from_raw_mode(mode)) {
        Ok(fd) => {
            policy
                .apply(&fd, mode, &fstat(&fd, &path)?)
                .map_err(io_at(&path))?;
            std::fs::File::from(fd)
                .write_all(MARKER_TEXT.as_bytes())
                .map_err(io_at(&path))
        }
        // Another creator wrote it first.
        Err(Errno::EXIST) => Ok(()),
        Err(errno) => Err(io_at(&path)(errno.into())),
    }
}

fn open_dir_at(dir: &OwnedFd, name: impl AsRef<OsStr>, path: &Path) -> Result<OwnedFd, SpoolError> {
    rustix::fs::openat(dir, name.as_ref(), DIR_FLAGS, Mode::empty())
        .map_err(|errno| dir_open_error(path, errno))
}

/// A refusal for what `O_DIRECTORY | O_NOFOLLOW` refused, in words.
fn dir_open_error(path: &Path, errno: Errno) -> SpoolError {
    match errno {
        Errno::LOOP => unsafe_link(path),
        Errno::NOTDIR => match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => unsafe_link(path),
            _ => not_a_directory(path),
        },
        other => io_at(path)(other.into()),
    }
}

fn refuse_unless_dir(path: &Path, facts: &Facts) -> Result<(), SpoolError> {
    match facts.kind {
        FileType::Directory => Ok(()),
        FileType::Symlink => Err(unsafe_link(path)),
        _ => Err(not_a_directory(path)),
    }
}

fn unsafe_link(path: &Path) -> SpoolError {
    SpoolError::Unsafe {
        path: path.to_owned(),
        reason: "it is a symbolic link, and a spool is never reached through a link (it could \
                 lead the inbox to read or delete files elsewhere); use the real directory"
            .to_owned(),
    }
}

fn not_a_directory(path: &Path) -> SpoolError {
    SpoolError::Unsafe {
        path: path.to_owned(),
        reason: "it is not a directory".to_owned(),
    }
}

fn facts_at(dir: &OwnedFd, name: &str, path: &Path) -> Result<Facts, SpoolError> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map(|stat| Facts::from(&stat))
        .map_err(|errno| io_at(path)(errno.into()))
}

pub(crate) fn fstat(fd: impl AsFd, path: &Path) -> Result<Facts, SpoolError> {
    rustix::fs::fstat(fd)
        .map(|stat| Facts::from(&stat))
        .map_err(|errno| io_at(path)(errno.into()))
}

pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> SpoolError + '_ {
    move |source| SpoolError::Io {
        path: PathBuf::from(path),
        source,
    }
}
