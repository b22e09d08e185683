//! What `stat` says about a spool file or directory, in the types the rest of the crate
//! uses. `rustix::fs::Stat` is the kernel's struct, whose field widths differ between
//! architectures; the casts live here, once.

use std::time::{Duration, SystemTime};

use rustix::fs::{FileType, Stat};

/// The set-group-ID bit: on a directory, new entries inherit its group.
pub(crate) const SETGID: u32 = 0o2000;

/// The facts of one `stat`/`fstat`/`statat`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    pub kind: FileType,
    /// Permission bits, with setuid/setgid/sticky: `st_mode` without the file type.
    pub mode: u32,
    pub nlink: u64,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub modified: SystemTime,
}

impl From<&Stat> for Facts {
    // `st_nlink` and the times are `u32`/`i64` on some architectures and `u64`/`c_long` on
    // others: a plain widening cast is right on all of them.
    #[allow(clippy::unnecessary_cast)]
    fn from(stat: &Stat) -> Facts {
        let raw_mode = stat.st_mode as u32;
        let seconds = stat.st_mtime as i64;
        let nanos = stat.st_mtime_nsec as u32;
        let modified = if seconds >= 0 {
            SystemTime::UNIX_EPOCH + Duration::new(seconds as u64, nanos)
        } else {
            SystemTime::UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs())
        };
        Facts {
            kind: FileType::from_raw_mode(raw_mode as _),
            mode: raw_mode & 0o7777,
            nlink: stat.st_nlink as u64,
            uid: stat.st_uid as u32,
            gid: stat.st_gid as u32,
            size: stat.st_size.max(0) as u64,
            modified,
        }
    }
}
