//! The spool directory: the wire between askers and inboxes, and the source of truth.
//!
//! Owns every file operation on the spool. A spool is opened once, safely or not at all
//! ([`crate::dir`]); afterwards every operation goes through the handles of its root and
//! four directories, never through a path, so no link swapped in later is ever followed.
//! Files appear atomically (written in `tmp/`, fsynced, then linked into place, then the
//! directory fsynced), are never rewritten, and are read defensively ([`crate::read`]): no
//! symlinks followed, regular files only, one name only, from a trusted owner, at most
//! [`MAX_FILE_BYTES`] read. Names are only ever built from validated ids, never from request
//! content.
//!
//! [`MAX_FILE_BYTES`]: inbox_protocol::limits::MAX_FILE_BYTES

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use inbox_protocol::{is_valid_id, request_id_from_file_name};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::dir::{self, fstat, io_at, Handles};
pub use crate::error::{Area, SpoolError};
use crate::facts::Facts;
use crate::faults;
use crate::trust::{Policy, Trust};

pub use crate::read::{read_capped, read_capped_with_time, ReadError, SpoolFile};

/// How long a file may sit in `tmp/` before it counts as a crashed writer's leftover.
pub const TMP_MAX_AGE: Duration = Duration::from_secs(36 * 3600);

/// How long a `tmp/` file with a second name may stay: a placement links the temp file into
/// place and removes the temp name microseconds later, so after this its writer died in
/// between. Removing the temp name then is safe (the placed file keeps its content) and lets
/// the placed file be read (a file with two names is not).
pub const TMP_LINKED_MAX_AGE: Duration = Duration::from_secs(60);

/// A file in the spool that is not what its directory holds, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoolProblem {
    pub path: PathBuf,
    pub reason: String,
}

/// A file that names a valid id, with what a scan learns about it without opening it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub path: PathBuf,
}

/// One pass over the spool's directories.
#[derive(Debug, Default)]
pub struct Listing {
    pub requests: Vec<Entry>,
    pub outcomes: Vec<Entry>,
    pub tombstones: Vec<Entry>,
    pub problems: Vec<SpoolProblem>,
}

/// What became of an attempt to write an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// This writer's file is the outcome.
    Written,
    /// Another writer got there first; its file stands.
    AlreadyThere,
}

/// A spool rooted at a directory: its path (for messages and the file watcher) and the
/// handles every operation goes through, shared by its clones.
#[derive(Debug, Clone)]
pub struct Spool {
    root: PathBuf,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    handles: Handles,
    policy: Policy,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Spool {
    /// Opens a spool as an asker does, creating it or its missing directories. A new spool
    /// is private; an existing team directory (setgid, group rwx) gets group-readable files
    /// so the team's inboxes can read them. Refuses, touching nothing, a link, a
    /// non-directory, or a directory that holds anything a spool does not
    /// ([`SpoolError::Unsafe`], [`SpoolError::NotASpool`]).
    pub fn open(root: impl Into<PathBuf>) -> Result<Spool, SpoolError> {
        let root = root.into();
        let (handles, policy) = dir::open(&root, None)?;
        Ok(Spool::from_parts(root, handles, policy))
    }

    /// Opens a spool as an inbox does, under an explicit trust model: the modes of what it
    /// creates, and whose files it reads. [`Spool::open`]'s refusals apply; a team whose
    /// group does not exist is [`SpoolError::UnknownGroup`].
    pub fn open_with(root: impl Into<PathBuf>, trust: Trust) -> Result<Spool, SpoolError> {
        let root = root.into();
        let (handles, policy) = dir::open(&root, Some(&trust))?;
        Ok(Spool::from_parts(root, handles, policy))
    }

    fn from_parts(root: PathBuf, handles: Handles, policy: Policy) -> Spool {
        Spool {
            root,
            shared: Arc::new(Shared { handles, policy }),
        }
    }

    /// The trust model this spool was opened under (for [`Spool::open`]: as detected).
    pub fn trust(&self) -> Trust {
        self.shared.policy.trust()
    }

    /// What is unsafe about the spool's directories as they are now (writable by others,
    /// group-writable in a private spool, owned by another account, not set up for the
    /// team), each naming the directory and the command that fixes it. Empty when all is
    /// well.
    pub fn warnings(&self) -> Vec<String> {
        let handles = &self.shared.handles;
        let dirs: [(PathBuf, BorrowedFd<'_>); 5] = [
            (self.root.clone(), handles.root.as_fd()),
            (self.tmp_dir(), handles.tmp.as_fd()),
            (self.dir(Area::Questions), handles.questions.as_fd()),
            (self.dir(Area::Answers), handles.answers.as_fd()),
            (self.dir(Area::Cancel), handles.cancel.as_fd()),
        ];
        let mut warnings = Vec::new();
        for (path, fd) in dirs {
            match fstat(fd, &path) {
                Ok(facts) => warnings.extend(self.shared.policy.warnings(&path, &facts)),
                Err(error) => warnings.push(format!("cannot check {}: {error}", path.display())),
            }
        }
        warnings
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    pub fn dir(&self, area: Area) -> PathBuf {
        self.root.join(area.dir_name())
    }

    /// The path of a request, outcome or tombstone, for messages and the file watcher; the
    /// spool's own operations never go through it. Callers pass validated ids only.
    pub fn path(&self, area: Area, id: &str) -> PathBuf {
        debug_assert!(is_valid_id(id));
        self.dir(area).join(file_name(area, id))
    }

    fn area_fd(&self, area: Area) -> BorrowedFd<'_> {
        self.shared.handles.area(area)
    }

    /// Places a request file atomically. Fails if the id is taken: requests are immutable.
    pub fn place_request(&self, id: &str, bytes: &[u8]) -> Result<PathBuf, SpoolError> {
        check_id(id)?;
        match self.place(Area::Questions, id, bytes)? {
            Placed::Written => Ok(self.path(Area::Questions, id)),
            Placed::AlreadyThere => Err(SpoolError::RequestExists(id.to_owned())),
        }
    }

    /// Writes an outcome if none exists. `link()` refuses to replace a file, so of several
    /// writers (threads, processes, inboxes on one shared spool) exactly one wins.
    pub fn write_outcome(&self, id: &str, bytes: &[u8]) -> Result<Placed, SpoolError> {
        check_id(id)?;
        self.place(Area::Answers, id, bytes)
    }

    /// Places a cancel tombstone; `AlreadyThere` if the request was already cancelled.
    pub fn place_tombstone(&self, id: &str, reason: &str) -> Result<Placed, SpoolError> {
        check_id(id)?;
        self.place(Area::Cancel, id, reason.as_bytes())
    }

    /// Whether `area` has an entry for `id`, of any kind (a link is not followed).
    pub fn exists(&self, area: Area, id: &str) -> bool {
        is_valid_id(id)
            && rustix::fs::statat(
                self.area_fd(area),
                file_name(area, id),
                AtFlags::SYMLINK_NOFOLLOW,
            )
            .is_ok()
    }

    /// Reads a spool file defensively: [`Spool::read_file`]'s bytes.
    pub fn read(&self, area: Area, id: &str) -> Result<Vec<u8>, ReadError> {
        self.read_file(area, id).map(|file| file.bytes)
    }

    /// Reads a spool file defensively, with when it was written and who owns it. Never
    /// follows a link; refuses what is not a regular file, a file with more than one name
    /// ([`ReadError::HardLinked`]), a file of an account the spool does not trust
    /// ([`ReadError::ForeignOwner`]) and one over the size limit.
    pub fn read_file(&self, area: Area, id: &str) -> Result<SpoolFile, ReadError> {
        if !is_valid_id(id) {
            // No name is ever built from an id that is not one.
            return Err(ReadError::Missing);
        }
        crate::read::read_at(
            self.area_fd(area),
            &file_name(area, id),
            &self.shared.policy,
        )
    }

    /// The spool's `approvals/` directory (made when the first approval is placed).
    pub fn approvals_dir(&self) -> PathBuf {
        self.root.join(inbox_protocol::approval::APPROVALS_DIR)
    }

    /// Makes `approvals/` if it is missing, with the spool's directory mode and group, so
    /// that an inbox can watch it before the first approval is placed.
    pub fn ensure_approvals_dir(&self) -> Result<(), SpoolError> {
        self.approvals_fd(true).map(drop)
    }

    /// The path of `account`'s approval of `id`, for messages; `None` when the account's
    /// name cannot be part of a file name.
    pub fn approval_path(&self, id: &str, account: &str) -> Option<PathBuf> {
        inbox_protocol::approval::approval_file_name(id, account)
            .map(|name| self.approvals_dir().join(name))
    }

    /// `approvals/`, opened like the other directories (never through a link), and made
    /// with the spool's directory mode and group when `create` says so and it is missing.
    /// `None` when it does not exist and was not to be made.
    fn approvals_fd(&self, create: bool) -> Result<Option<OwnedFd>, SpoolError> {
        let name = inbox_protocol::approval::APPROVALS_DIR;
        let path = self.approvals_dir();
        let root = self.shared.handles.root.as_fd();
        let policy = &self.shared.policy;
        let open = || {
            rustix::fs::openat(
                root,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
        };
        match open() {
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(root, name, Mode::from_raw_mode(policy.dir_mode())) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(errno) => return Err(io_at(&path)(errno.into())),
                }
                let fd = open().map_err(|errno| io_at(&path)(errno.into()))?;
                let facts = fstat(fd.as_fd(), &path)?;
                if facts.uid == crate::accounts::current_uid() {
                    policy
                        .apply(&fd, policy.dir_mode(), &facts)
                        .map_err(io_at(&path))?;
                }
                Ok(Some(fd))
            }
            Err(Errno::NOENT) => Ok(None),
            Err(Errno::LOOP | Errno::NOTDIR) => Err(SpoolError::Unsafe {
                path,
                reason: "it is not a directory (or is a symbolic link)".to_owned(),
            }),
            Err(errno) => Err(io_at(&path)(errno.into())),
        }
    }

    /// Places this account's approval of `id` atomically, as an outcome is placed: written
    /// in `tmp/`, made durable, linked without replacing. `AlreadyThere` when the account
    /// approved before: an account's approval counts once, and its first one stands.
    pub fn place_approval(
        &self,
        id: &str,
        account: &str,
        bytes: &[u8],
    ) -> Result<Placed, SpoolError> {
        check_id(id)?;
        let Some(target) = inbox_protocol::approval::approval_file_name(id, account) else {
            return Err(SpoolError::Unsafe {
                path: self.approvals_dir(),
                reason: format!("the account name {account:?} cannot name an approval file"),
            });
        };
        let dir = self.approvals_fd(true)?.expect("made when missing");
        let tmp = unique_tmp_name(id);
        let tmp_fd = self.shared.handles.tmp.as_fd();
        let tmp_path = self.tmp_dir().join(&tmp);
        let file = self.write_tmp(&tmp, bytes).map_err(io_at(&tmp_path))?;
        let synced = file.sync_all();
        drop(file);
        let linked = synced.and_then(|()| link(tmp_fd, &tmp, dir.as_fd(), &target));
        let _ = rustix::fs::unlinkat(tmp_fd, &tmp, AtFlags::empty());
        let target_path = self.approvals_dir().join(&target);
        match linked.map_err(io_at(&target_path))? {
            Step::Placed(Placed::Written) => {
                rustix::fs::fsync(&dir).map_err(|errno| io_at(&target_path)(errno.into()))?;
                Ok(Placed::Written)
            }
            Step::Placed(placed) => Ok(placed),
            Step::Todo | Step::Written => unreachable!("a link places or fails"),
        }
    }

    /// Every approval file of `id`: the account its name gives, and the file read as
    /// [`Spool::read_file`] reads (never through a link, only a trusted account's). Files
    /// in `approvals/` that are no approval of `id` are left out.
    pub fn approvals_of(&self, id: &str) -> Result<Vec<(String, SpoolFile)>, SpoolError> {
        Ok(self
            .approvals_read(id)?
            .into_iter()
            .filter_map(|(account, file)| file.ok().map(|file| (account, file)))
            .collect())
    }

    /// [`Spool::approvals_of`] with the files that could not be read and why (a link,
    /// another account's file): problems to show.
    pub fn approvals_read(&self, id: &str) -> Result<Vec<ApprovalRead>, SpoolError> {
        let Some(dir) = self.approvals_fd(false)? else {
            return Ok(Vec::new());
        };
        let path = self.approvals_dir();
        let mut found = Vec::new();
        for item in Dir::read_from(&dir).map_err(|errno| io_at(&path)(errno.into()))? {
            let item = item.map_err(|errno| io_at(&path)(errno.into()))?;
            let Ok(name) = std::str::from_utf8(item.file_name().to_bytes()) else {
                continue;
            };
            let Some((of, account)) = inbox_protocol::approval::parse_approval_file_name(name)
            else {
                continue;
            };
            if of == id {
                let read = crate::read::read_at(dir.as_fd(), name, &self.shared.policy);
                found.push((account.to_owned(), read));
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }

    /// `account`'s approval of `id` as an outcome's reader checks it
    /// (`inbox_protocol::approval::verify_approvals`): parsed, with its owner.
    pub fn approval_as_read(
        &self,
        id: &str,
        account: &str,
    ) -> inbox_protocol::approval::ReadApproval {
        let file = self
            .read_approval(id, account)
            .map_err(|error| error.to_string())?;
        let approval = inbox_protocol::approval::Approval::from_file_bytes(&file.bytes)?;
        Ok((approval, crate::account_name(file.owner), file.owner))
    }

    /// `account`'s approval of `id`, read as [`Spool::read_file`] reads.
    pub fn read_approval(&self, id: &str, account: &str) -> Result<SpoolFile, ReadError> {
        let Some(name) = inbox_protocol::approval::approval_file_name(id, account) else {
            return Err(ReadError::Missing);
        };
        match self.approvals_fd(false) {
            Ok(Some(dir)) => crate::read::read_at(dir.as_fd(), &name, &self.shared.policy),
            Ok(None) => Err(ReadError::Missing),
            Err(SpoolError::Io { source, .. }) => Err(ReadError::Io(source)),
            Err(_) => Err(ReadError::NotRegular),
        }
    }

    /// Write to `tmp/`, fsync, link into place, remove the temp name, fsync the directory.
    /// Writes several outcomes at once, each unless one exists (as [`Spool::write_outcome`]),
    /// with one flush to disk for the whole batch instead of one per file: every file is
    /// written into `tmp/`, then one `syncfs` makes all their bytes durable, then each is
    /// linked into place, then `answers/` is synced once. No guarantee is weaker than one at
    /// a time: a file is linked (visible) only after its bytes are durable, and the caller
    /// records a batch only after the directory sync made its names durable. One result per
    /// item, in order.
    pub fn write_outcomes(&self, batch: &[(&str, &[u8])]) -> Vec<Result<Placed, SpoolError>> {
        let items: Vec<Item<'_>> = batch
            .iter()
            .map(|&(id, bytes)| match check_id(id) {
                Ok(()) => Item::new(Area::Answers, id, bytes),
                // No name is ever built from a refused id.
                Err(error) => Item {
                    tmp: OsString::new(),
                    target: String::new(),
                    bytes,
                    state: Err(error),
                },
            })
            .collect();
        self.place_all(Area::Answers, items)
    }

    fn place(&self, area: Area, id: &str, bytes: &[u8]) -> Result<Placed, SpoolError> {
        self.place_all(area, vec![Item::new(area, id, bytes)])
            .pop()
            .expect("one result per item")
    }

    /// Write, make durable, link, sync the directory: the steps of an atomic placement, each
    /// done for every item before the next (see [`Spool::write_outcomes`]).
    fn place_all(&self, area: Area, mut items: Vec<Item<'_>>) -> Vec<Result<Placed, SpoolError>> {
        let tmp_fd = self.shared.handles.tmp.as_fd();
        let area_fd = self.area_fd(area);
        let mut written: Vec<File> = Vec::new();
        for item in &mut items {
            let Ok(Step::Todo) = item.state else { continue };
            let tmp_path = self.tmp_dir().join(&item.tmp);
            item.state = match self.write_tmp(&item.tmp, item.bytes) {
                Ok(file) => {
                    written.push(file);
                    Ok(Step::Written)
                }
                Err(error) => Err(io_at(&tmp_path)(error)),
            };
        }
        // One file: its own fsync. Several: one `syncfs` for all, which costs about what one
        // fsync does, whatever the batch's size.
        let durable =
            faults::io_point(faults::SPOOL_FSYNC).and_then(|()| match written.as_slice() {
                [] => Ok(()),
                [one] => one.sync_all(),
                [first, ..] => rustix::fs::syncfs(first).map_err(io::Error::from),
            });
        drop(written);
        for item in &mut items {
            let Ok(Step::Written) = item.state else {
                continue;
            };
            item.state = match &durable {
                Ok(()) => link(tmp_fd, &item.tmp, area_fd, &item.target)
                    .map_err(|error| io_at(&self.dir(area).join(&item.target))(error)),
                Err(error) => Err(io_at(&self.tmp_dir().join(&item.tmp))(io::Error::new(
                    error.kind(),
                    error.to_string(),
                ))),
            };
            // At once, not after the batch: while both names exist a reader sees a file
            // with two links, which it waits out only briefly.
            let _ = rustix::fs::unlinkat(tmp_fd, &item.tmp, AtFlags::empty());
        }
        let mut linked_any = false;
        for item in &items {
            match &item.state {
                Ok(Step::Placed(Placed::Written)) => linked_any = true,
                // A refused id never made a temp file (nor may its name build a path); a
                // write that failed half-way may have left one.
                Err(SpoolError::InvalidId(_)) => {}
                Err(_) => {
                    let _ = rustix::fs::unlinkat(tmp_fd, &item.tmp, AtFlags::empty());
                }
                Ok(_) => {}
            }
        }
        let synced = if linked_any {
            faults::io_point(faults::SPOOL_DIR_FSYNC)
                .and_then(|()| rustix::fs::fsync(area_fd).map_err(io::Error::from))
                .map_err(|error| error.to_string())
        } else {
            Ok(())
        };
        items
            .into_iter()
            .map(|item| match item.state? {
                Step::Placed(Placed::Written) => match &synced {
                    Ok(()) => Ok(Placed::Written),
                    Err(message) => Err(SpoolError::Io {
                        path: self.dir(area),
                        source: io::Error::other(message.clone()),
                    }),
                },
                Step::Placed(placed) => Ok(placed),
                Step::Todo | Step::Written => unreachable!("every item was linked or failed"),
            })
            .collect()
    }

    /// Creates a new file in `tmp/` with the spool's file mode (whatever the umask) and
    /// group, and writes `bytes` into it.
    fn write_tmp(&self, name: &OsStr, bytes: &[u8]) -> io::Result<File> {
        let policy = &self.shared.policy;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd: OwnedFd = rustix::fs::openat(
            &self.shared.handles.tmp,
            name,
            flags,
            Mode::from_raw_mode(policy.file_mode()),
        )?;
        let facts = Facts::from(&rustix::fs::fstat(&fd)?);
        policy.apply(&fd, policy.file_mode(), &facts)?;
        let mut file = File::from(fd);
        faults::io_point(faults::SPOOL_WRITE).and_then(|()| file.write_all(bytes))?;
        Ok(file)
    }

    /// Lists the spool's directories without opening any file.
    pub fn scan(&self) -> Result<Listing, SpoolError> {
        let mut listing = Listing::default();
        listing.requests = self.scan_area(Area::Questions, &mut listing.problems)?;
        listing.outcomes = self.scan_area(Area::Answers, &mut listing.problems)?;
        listing.tombstones = self.scan_area(Area::Cancel, &mut listing.problems)?;
        Ok(listing)
    }

    fn scan_area(
        &self,
        area: Area,
        problems: &mut Vec<SpoolProblem>,
    ) -> Result<Vec<Entry>, SpoolError> {
        let dir = self.dir(area);
        let fd = self.area_fd(area);
        let mut entries = Vec::new();
        for item in Dir::read_from(fd).map_err(|errno| io_at(&dir)(errno.into()))? {
            let item = item.map_err(|errno| io_at(&dir)(errno.into()))?;
            let name = OsStr::from_bytes(item.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let path = dir.join(name);
            match classify(area, name) {
                // d_type from readdir: no stat per file on the start-up path, except on a
                // filesystem that does not fill it in.
                Ok(id) => match kind_of(fd, name, item.file_type()) {
                    Ok(FileType::RegularFile) => entries.push(Entry { id, path }),
                    Ok(FileType::Symlink) => problems.push(SpoolProblem {
                        path,
                        reason: ReadError::Symlink.to_string(),
                    }),
                    // Gone since it was listed: nothing to report.
                    Err(Errno::NOENT) => {}
                    Ok(_) => problems.push(SpoolProblem {
                        path,
                        reason: ReadError::NotRegular.to_string(),
                    }),
                    Err(errno) => problems.push(SpoolProblem {
                        path,
                        reason: io::Error::from(errno).to_string(),
                    }),
                },
                Err(reason) => problems.push(SpoolProblem { path, reason }),
            }
        }
        Ok(entries)
    }

    /// Removes what crashed writers left in `tmp/`: regular files older than `max_age`, and
    /// temp names of files already placed (two links) older than [`TMP_LINKED_MAX_AGE`].
    /// Only regular files in the real `tmp/` are ever removed: never through a link, never a
    /// directory (`unlinkat` without `AT_REMOVEDIR` cannot remove one anyway).
    pub fn reap_tmp(&self, max_age: Duration) -> Result<usize, SpoolError> {
        let dir = self.tmp_dir();
        let fd = self.shared.handles.tmp.as_fd();
        let now = SystemTime::now();
        let mut reaped = 0;
        for item in Dir::read_from(fd).map_err(|errno| io_at(&dir)(errno.into()))? {
            let item = item.map_err(|errno| io_at(&dir)(errno.into()))?;
            let name = item.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let Ok(stat) = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let facts = Facts::from(&stat);
            if facts.kind != FileType::RegularFile {
                continue;
            }
            let Ok(age) = now.duration_since(facts.modified) else {
                continue;
            };
            let limit = if facts.nlink > 1 {
                TMP_LINKED_MAX_AGE.min(max_age)
            } else {
                max_age
            };
            if age > limit && rustix::fs::unlinkat(fd, name, AtFlags::empty()).is_ok() {
                reaped += 1;
            }
        }
        Ok(reaped)
    }
}

/// The kind of a directory entry: readdir's `d_type`, or `statat` where it is unknown.
fn kind_of(dir: BorrowedFd<'_>, name: &OsStr, listed: FileType) -> Result<FileType, Errno> {
    match listed {
        FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|stat| Facts::from(&stat).kind),
        known => Ok(known),
    }
}

/// What id a file in `area` names, or why it is not a spool file.
pub fn classify(area: Area, name: &std::ffi::OsStr) -> Result<String, String> {
    match area {
        Area::Cancel => match name.to_str() {
            Some(id) if is_valid_id(id) => Ok(id.to_owned()),
            _ => Err("a tombstone's name must be a valid request id".to_owned()),
        },
        _ => request_id_from_file_name(name)
            .map(str::to_owned)
            .map_err(|p| p.to_string()),
    }
}

/// The file name of `id` in `area`: `<id>.json`, or the bare id for a tombstone.
fn file_name(area: Area, id: &str) -> String {
    match area {
        Area::Cancel => id.to_owned(),
        _ => format!("{id}.json"),
    }
}

fn check_id(id: &str) -> Result<(), SpoolError> {
    if is_valid_id(id) {
        Ok(())
    } else {
        Err(SpoolError::InvalidId(id.to_owned()))
    }
}

/// A temp name no other writer uses: pid, a counter and the time, so two processes or
/// threads never collide, and a stale file's origin is visible.
fn unique_tmp_name(id: &str) -> OsString {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{id}.{}.{n}.{nanos}.tmp", std::process::id()).into()
}

/// One file on its way into the spool: its name in `tmp/` and in its area.
struct Item<'a> {
    tmp: OsString,
    target: String,
    bytes: &'a [u8],
    state: Result<Step, SpoolError>,
}

impl<'a> Item<'a> {
    fn new(area: Area, id: &str, bytes: &'a [u8]) -> Item<'a> {
        Item {
            tmp: unique_tmp_name(id),
            target: file_name(area, id),
            bytes,
            state: Ok(Step::Todo),
        }
    }
}

/// How far an [`Item`] got.
enum Step {
    Todo,
    Written,
    Placed(Placed),
}

/// Links a durable temp file to its final name; `link()` refuses to replace a file, so the
/// first writer wins.
fn link(
    tmp_dir: BorrowedFd<'_>,
    tmp: &OsStr,
    area_dir: BorrowedFd<'_>,
    target: &str,
) -> io::Result<Step> {
    let linked = faults::io_point(faults::SPOOL_LINK).and_then(|()| {
        rustix::fs::linkat(tmp_dir, tmp, area_dir, target, AtFlags::empty())
            .map_err(io::Error::from)
    });
    match linked {
        Ok(()) => Ok(Step::Placed(Placed::Written)),
        // Whatever the error, a target that exists now means a writer got there: EEXIST
        // locally, but over sshfs a lost race arrives as EPERM (OpenSSH's SFTP server reports
        // EEXIST as a generic failure). Over NFS a link can succeed yet report EEXIST when
        // the reply is lost; the temp file's link count tells whose it is (as Maildir does).
        Err(error)
            if error.kind() == io::ErrorKind::AlreadyExists
                || rustix::fs::statat(area_dir, target, AtFlags::SYMLINK_NOFOLLOW).is_ok() =>
        {
            match rustix::fs::statat(tmp_dir, tmp, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) if Facts::from(&stat).nlink == 2 => Ok(Step::Placed(Placed::Written)),
                _ => Ok(Step::Placed(Placed::AlreadyThere)),
            }
        }
        Err(error) => Err(error),
    }
}

/// One approval file as read: the account it names, and its content or why it was refused.
pub type ApprovalRead = (String, Result<SpoolFile, ReadError>);

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_protocol::limits::MAX_FILE_BYTES;
    use std::fs;

    fn spool() -> (tempfile::TempDir, Spool) {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path().join("spool")).unwrap();
        (dir, spool)
    }

    /// An account's approval is placed once (its first stands), read back with the account
    /// its name gives, and a spool holding `approvals/` and the team's policy file is still a
    /// spool.
    #[test]
    fn approvals_are_placed_once_per_account_and_listed_per_request() {
        let (_dir, spool) = spool();
        assert!(
            spool.approvals_of("r").unwrap().is_empty(),
            "no directory yet"
        );
        assert_eq!(
            spool.place_approval("r", "ann", b"first").unwrap(),
            Placed::Written
        );
        assert_eq!(
            spool.place_approval("r", "ann", b"again").unwrap(),
            Placed::AlreadyThere
        );
        spool.place_approval("r", "bob", b"bob's").unwrap();
        spool
            .place_approval("r.2", "ann", b"other request")
            .unwrap();
        let found = spool.approvals_of("r").unwrap();
        let found: Vec<(&str, &[u8])> = found
            .iter()
            .map(|(account, file)| (account.as_str(), file.bytes.as_slice()))
            .collect();
        assert_eq!(found, [("ann", &b"first"[..]), ("bob", &b"bob's"[..])]);
        assert_eq!(spool.read_approval("r", "bob").unwrap().bytes, b"bob's");
        assert!(spool.place_approval("r", "../x", b"x").is_err());
        fs::write(spool.root().join(crate::TEAM_POLICY), "").unwrap();
        Spool::open(spool.root()).expect("approvals/ and the team policy are a spool's own");
    }

    #[test]
    fn first_outcome_wins_and_is_never_replaced() {
        let (_dir, spool) = spool();
        assert_eq!(
            spool.write_outcome("r1", b"first").unwrap(),
            Placed::Written
        );
        assert_eq!(
            spool.write_outcome("r1", b"second").unwrap(),
            Placed::AlreadyThere
        );
        assert_eq!(spool.read(Area::Answers, "r1").unwrap(), b"first");
        assert_eq!(
            fs::read_dir(spool.tmp_dir()).unwrap().count(),
            0,
            "no temp files left"
        );
    }

    #[test]
    fn a_batch_places_each_outcome_once_and_keeps_the_standing_ones() {
        let (_dir, spool) = spool();
        spool.write_outcome("b", b"theirs").unwrap();
        let results =
            spool.write_outcomes(&[("a", b"1"), ("b", b"2"), ("../x", b"3"), ("c", b"4")]);
        assert!(matches!(results[0], Ok(Placed::Written)));
        assert!(matches!(results[1], Ok(Placed::AlreadyThere)));
        assert!(matches!(results[2], Err(SpoolError::InvalidId(_))));
        assert!(matches!(results[3], Ok(Placed::Written)));
        assert_eq!(spool.read(Area::Answers, "a").unwrap(), b"1");
        assert_eq!(spool.read(Area::Answers, "b").unwrap(), b"theirs");
        assert_eq!(spool.read(Area::Answers, "c").unwrap(), b"4");
        assert_eq!(
            fs::read_dir(spool.tmp_dir()).unwrap().count(),
            0,
            "no temp files left"
        );
    }

    #[test]
    fn concurrent_writers_produce_exactly_one_outcome() {
        let (_dir, spool) = spool();
        let wins: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let spool = spool.clone();
                    scope.spawn(move || {
                        spool
                            .write_outcome("race", format!("{i}").as_bytes())
                            .unwrap()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| (h.join().unwrap() == Placed::Written) as usize)
                .sum()
        });
        assert_eq!(wins, 1);
    }

    #[test]
    fn requests_are_immutable_and_ids_validated() {
        let (_dir, spool) = spool();
        spool.place_request("r1", b"{}").unwrap();
        assert!(matches!(
            spool.place_request("r1", b"[]"),
            Err(SpoolError::RequestExists(_))
        ));
        assert!(matches!(
            spool.place_request("../x", b"[]"),
            Err(SpoolError::InvalidId(_))
        ));
    }

    #[test]
    fn reads_refuse_symlinks_fifos_directories_and_big_files() {
        let (dir, spool) = spool();
        let q = spool.dir(Area::Questions);
        fs::write(dir.path().join("target.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(dir.path().join("target.json"), q.join("link.json")).unwrap();
        fs::create_dir(q.join("dir.json")).unwrap();
        let fifo = q.join("fifo.json");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        fs::write(q.join("big.json"), vec![b' '; MAX_FILE_BYTES as usize + 1]).unwrap();

        assert!(matches!(
            read_capped(&q.join("link.json")),
            Err(ReadError::Symlink)
        ));
        assert!(matches!(
            read_capped(&q.join("dir.json")),
            Err(ReadError::NotRegular)
        ));
        assert!(matches!(read_capped(&fifo), Err(ReadError::NotRegular)));
        assert!(matches!(
            read_capped(&q.join("big.json")),
            Err(ReadError::TooLarge { .. })
        ));
        assert!(matches!(
            read_capped(&q.join("none.json")),
            Err(ReadError::Missing)
        ));
        // Through the spool's handles, the same verdicts.
        for (id, expected) in [
            ("link", "link"),
            ("dir", "other"),
            ("fifo", "other"),
            ("big", "big"),
            ("none", "missing"),
        ] {
            let got = match spool.read_file(Area::Questions, id) {
                Err(ReadError::Symlink) => "link",
                Err(ReadError::NotRegular) => "other",
                Err(ReadError::TooLarge { .. }) => "big",
                Err(ReadError::Missing) => "missing",
                other => panic!("{id}: {other:?}"),
            };
            assert_eq!(got, expected, "{id}");
        }

        let listing = spool.scan().unwrap();
        let ids: Vec<&str> = listing.requests.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["big"], "only the regular file is a candidate request");
        assert_eq!(listing.problems.len(), 3);
    }

    #[test]
    fn scan_reports_names_that_are_not_ids() {
        let (_dir, spool) = spool();
        let q = spool.dir(Area::Questions);
        fs::write(q.join("notes.txt"), b"x").unwrap();
        fs::write(q.join("bad name.json"), b"x").unwrap();
        fs::write(spool.dir(Area::Cancel).join("-x"), b"").unwrap();
        let listing = spool.scan().unwrap();
        assert!(listing.requests.is_empty());
        assert_eq!(listing.problems.len(), 3, "{:?}", listing.problems);
    }

    #[test]
    fn stale_temp_files_are_reaped() {
        let (_dir, spool) = spool();
        fs::write(spool.tmp_dir().join("old.tmp"), b"x").unwrap();
        assert_eq!(spool.reap_tmp(Duration::from_secs(3600)).unwrap(), 0);
        assert_eq!(spool.reap_tmp(Duration::ZERO).unwrap(), 1);
    }
}
