//! The spool directory: the wire between askers and inboxes, and the source of truth.
//!
//! Owns every file operation on the spool. Files appear atomically (written in `tmp/`,
//! fsynced, then linked or renamed into place, then the directory fsynced), are never
//! rewritten, and are read defensively: no symlinks followed, regular files only, at most
//! [`MAX_FILE_BYTES`] read. Paths are only ever built from validated ids, never from request
//! content.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use inbox_protocol::limits::MAX_FILE_BYTES;
use inbox_protocol::{is_valid_id, request_id_from_file_name};

use crate::faults;

/// How long a file may sit in `tmp/` before it counts as a crashed writer's leftover.
pub const TMP_MAX_AGE: Duration = Duration::from_secs(36 * 3600);

/// Where a file lives in the spool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    Questions,
    Answers,
    Cancel,
}

impl Area {
    pub fn dir_name(self) -> &'static str {
        match self {
            Area::Questions => "questions",
            Area::Answers => "answers",
            Area::Cancel => "cancel",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("\"{0}\" is not a valid id (letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 characters)")]
    InvalidId(String),
    #[error("a request with id \"{0}\" is already in the spool")]
    RequestExists(String),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> SpoolError + '_ {
    move |source| SpoolError::Io {
        path: path.to_owned(),
        source,
    }
}

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
    #[error("{0}")]
    Io(io::Error),
}

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

/// A spool rooted at a directory.
#[derive(Debug, Clone)]
pub struct Spool {
    root: PathBuf,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Spool {
    /// Opens a spool, creating its directories if needed.
    pub fn open(root: impl Into<PathBuf>) -> Result<Spool, SpoolError> {
        let spool = Spool { root: root.into() };
        for dir in [
            spool.tmp_dir(),
            spool.dir(Area::Questions),
            spool.dir(Area::Answers),
            spool.dir(Area::Cancel),
        ] {
            fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        }
        Ok(spool)
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

    /// The path of a request, outcome or tombstone. Callers pass validated ids only.
    pub fn path(&self, area: Area, id: &str) -> PathBuf {
        debug_assert!(is_valid_id(id));
        match area {
            Area::Cancel => self.dir(area).join(id),
            _ => self.dir(area).join(format!("{id}.json")),
        }
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

    pub fn exists(&self, area: Area, id: &str) -> bool {
        fs::symlink_metadata(self.path(area, id)).is_ok()
    }

    /// Reads a spool file defensively (see [`read_capped`]).
    pub fn read(&self, area: Area, id: &str) -> Result<Vec<u8>, ReadError> {
        read_capped(&self.path(area, id))
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
                Ok(()) => Item {
                    tmp: self.tmp_dir().join(unique_tmp_name(id)),
                    target: self.path(Area::Answers, id),
                    bytes,
                    state: Ok(Step::Todo),
                },
                // No path is ever built from a refused id.
                Err(error) => Item {
                    tmp: PathBuf::new(),
                    target: PathBuf::new(),
                    bytes,
                    state: Err(error),
                },
            })
            .collect();
        self.place_all(Area::Answers, items)
    }

    fn place(&self, area: Area, id: &str, bytes: &[u8]) -> Result<Placed, SpoolError> {
        let item = Item {
            tmp: self.tmp_dir().join(unique_tmp_name(id)),
            target: self.path(area, id),
            bytes,
            state: Ok(Step::Todo),
        };
        self.place_all(area, vec![item])
            .pop()
            .expect("one result per item")
    }

    /// Write, make durable, link, sync the directory: the steps of an atomic placement, each
    /// done for every item before the next (see [`Spool::write_outcomes`]).
    fn place_all(&self, area: Area, mut items: Vec<Item<'_>>) -> Vec<Result<Placed, SpoolError>> {
        let mut written: Vec<File> = Vec::new();
        for item in &mut items {
            let Ok(Step::Todo) = item.state else { continue };
            let result = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(&item.tmp)
                .and_then(|mut file| {
                    faults::io_point(faults::SPOOL_WRITE)
                        .and_then(|()| file.write_all(item.bytes))?;
                    Ok(file)
                });
            item.state = match result {
                Ok(file) => {
                    written.push(file);
                    Ok(Step::Written)
                }
                Err(error) => Err(SpoolError::Io {
                    path: item.tmp.clone(),
                    source: error,
                }),
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
                Ok(()) => link(&item.tmp, &item.target),
                Err(error) => Err(SpoolError::Io {
                    path: item.tmp.clone(),
                    source: io::Error::new(error.kind(), error.to_string()),
                }),
            };
        }
        let mut linked_any = false;
        for item in &items {
            // A refused id never made a temp file (nor may its name build a path).
            if !matches!(&item.state, Err(SpoolError::InvalidId(_))) {
                let _ = fs::remove_file(&item.tmp);
            }
            linked_any |= matches!(item.state, Ok(Step::Placed(Placed::Written)));
        }
        let synced = if linked_any {
            sync_dir(&self.dir(area)).map_err(|error| error.to_string())
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
        let mut entries = Vec::new();
        for item in fs::read_dir(&dir).map_err(io_error(&dir))? {
            let Ok(item) = item else { continue };
            let name = item.file_name();
            let path = item.path();
            match classify(area, &name) {
                Ok(id) => {
                    // d_type from readdir: no stat per file on the start-up path.
                    match item.file_type() {
                        Ok(kind) if kind.is_file() => entries.push(Entry { id, path }),
                        Ok(kind) if kind.is_symlink() => problems.push(SpoolProblem {
                            path,
                            reason: ReadError::Symlink.to_string(),
                        }),
                        Ok(_) => problems.push(SpoolProblem {
                            path,
                            reason: ReadError::NotRegular.to_string(),
                        }),
                        Err(error) => problems.push(SpoolProblem {
                            path,
                            reason: error.to_string(),
                        }),
                    }
                }
                Err(reason) => problems.push(SpoolProblem { path, reason }),
            }
        }
        Ok(entries)
    }

    /// Removes files in `tmp/` older than `max_age`: what a crashed writer left behind.
    pub fn reap_tmp(&self, max_age: Duration) -> Result<usize, SpoolError> {
        let dir = self.tmp_dir();
        let now = SystemTime::now();
        let mut reaped = 0;
        for item in fs::read_dir(&dir).map_err(io_error(&dir))?.flatten() {
            let Ok(meta) = item.path().symlink_metadata() else {
                continue;
            };
            let age = meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok());
            if meta.is_file()
                && age.is_some_and(|age| age > max_age)
                && fs::remove_file(item.path()).is_ok()
            {
                reaped += 1;
            }
        }
        Ok(reaped)
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

/// Makes a directory entry durable: without it a crash can lose a file whose data was synced.
/// One file on its way into the spool.
struct Item<'a> {
    tmp: PathBuf,
    target: PathBuf,
    bytes: &'a [u8],
    state: Result<Step, SpoolError>,
}

/// How far an [`Item`] got.
enum Step {
    Todo,
    Written,
    Placed(Placed),
}

/// Links a durable temp file to its final name; `link()` refuses to replace a file, so the
/// first writer wins.
fn link(tmp: &Path, target: &Path) -> Result<Step, SpoolError> {
    match faults::io_point(faults::SPOOL_LINK).and_then(|()| fs::hard_link(tmp, target)) {
        Ok(()) => Ok(Step::Placed(Placed::Written)),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            // Over NFS a link can succeed yet report EEXIST when the reply is lost; the temp
            // file's link count tells the truth (as Maildir does).
            match fs::metadata(tmp) {
                Ok(meta) if meta.nlink() == 2 => Ok(Step::Placed(Placed::Written)),
                _ => Ok(Step::Placed(Placed::AlreadyThere)),
            }
        }
        Err(error) => Err(SpoolError::Io {
            path: target.to_owned(),
            source: error,
        }),
    }
}

fn sync_dir(dir: &Path) -> Result<(), SpoolError> {
    faults::io_point(faults::SPOOL_DIR_FSYNC)
        .and_then(|()| File::open(dir))
        .and_then(|d| d.sync_all())
        .map_err(io_error(dir))
}

/// Opens without following symlinks and without blocking on a FIFO, checks the file is
/// regular and under the cap, and reads at most cap + 1 bytes in case it grows meanwhile.
pub fn read_capped(path: &Path) -> Result<Vec<u8>, ReadError> {
    read_capped_with_time(path).map(|(bytes, _)| bytes)
}

/// [`read_capped`], also returning the file's modification time: when it was placed.
pub fn read_capped_with_time(path: &Path) -> Result<(Vec<u8>, SystemTime), ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|error| match error.raw_os_error() {
            Some(libc::ELOOP) => ReadError::Symlink,
            Some(libc::ENOENT) => ReadError::Missing,
            // A socket (ENXIO) or a device without a driver (ENODEV): not a file, and no
            // retry will make it one.
            Some(libc::ENXIO | libc::ENODEV) => ReadError::NotRegular,
            _ => ReadError::Io(error),
        })?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge { size: meta.len() });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
        });
    }
    Ok((bytes, meta.modified().unwrap_or_else(|_| SystemTime::now())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spool() -> (tempfile::TempDir, Spool) {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path().join("spool")).unwrap();
        (dir, spool)
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
