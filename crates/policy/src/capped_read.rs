//! Reading a local file that a person named or the program keeps (the policy, settings.json,
//! an audit export, an answers file, a token, a TLS certificate and key, a hook's session
//! memory) without letting the file decide how long or how much is read.
//!
//! A name can stand for something that is not a file of text: a FIFO, whose open waits
//! forever for a writer and whose read waits forever for data; a device such as `/dev/zero`,
//! which never ends and fills memory; or a file far larger than any real one. So every such
//! read goes through here: the path must lead to a plain (regular) file, which is checked
//! before opening (opening some devices does something by itself, `/dev/watchdog` arms the
//! watchdog) and again on what was opened (the name may have changed in between); the open
//! does not block (a FIFO put there in between opens at once and is then refused); and at
//! most the caller's cap is read, a file over it refused with the cap named. Links are
//! followed: these are the operator's own names, unlike files in a spool.
//!
//! It lives in inbox-policy, the lowest of our crates that may do I/O and that every reader
//! of such files can reach (the command line, the app and the web server through
//! inbox-engine's re-export), so the policy loader and every other surface share one reader.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::OFlags;

/// Why a file (or a stream) was not read. Its [`Display`](std::fmt::Display) names what was
/// read and the problem; [`ReadError::problem`] is the problem alone, for a caller that
/// names the file itself.
#[derive(Debug)]
pub struct ReadError {
    /// The path as given, or a stream's name (`standard input`).
    name: String,
    problem: Problem,
}

/// What was wrong.
#[derive(Debug)]
pub enum Problem {
    /// The system's own error: not there, no permission, ...
    Io(io::Error),
    /// Not a plain file: what it is instead (`a FIFO`, `a character device`...).
    NotPlain(&'static str),
    /// Over the cap. The size is known when the file said it up front, not when it grew while
    /// being read or is a stream.
    TooLarge { size: Option<u64>, cap: u64 },
    /// Read as text, but not UTF-8.
    NotText,
}

impl ReadError {
    fn new(name: impl Into<String>, problem: Problem) -> ReadError {
        ReadError {
            name: name.into(),
            problem,
        }
    }

    /// Whether there is simply no file there (callers often fall back to defaults then).
    pub fn is_missing(&self) -> bool {
        matches!(&self.problem, Problem::Io(error) if error.kind() == io::ErrorKind::NotFound)
    }

    /// What was wrong.
    pub fn kind(&self) -> &Problem {
        &self.problem
    }

    /// The system's own error, if that is what it was; otherwise the error itself.
    pub fn into_io(self) -> Result<io::Error, ReadError> {
        match self.problem {
            Problem::Io(error) => Ok(error),
            problem => Err(ReadError { problem, ..self }),
        }
    }

    /// The problem without the file's name: `it is a FIFO, not a plain file: ...`.
    pub fn problem(&self) -> String {
        match &self.problem {
            Problem::Io(error) => error.to_string(),
            Problem::NotPlain(what) => format!(
                "it is {what}, not a plain file: reading it could wait forever or never end"
            ),
            Problem::TooLarge { size, cap } => {
                let limit = match human(*cap) {
                    Some(human) => format!("the limit of {cap} bytes ({human})"),
                    None => format!("the limit of {cap} bytes"),
                };
                match size {
                    Some(size) => format!("it is {size} bytes, larger than {limit}"),
                    None => format!("it is larger than {limit}"),
                }
            }
            Problem::NotText => "it is not UTF-8 text".to_owned(),
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read {}: {}", self.name, self.problem())
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.problem {
            Problem::Io(error) => Some(error),
            _ => None,
        }
    }
}

/// The bytes of the plain file at `path`, at most `cap` of them.
pub fn read_bytes(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open_plain(path)?;
    read_opened(file, &meta, &path.display().to_string(), cap)
}

/// The text of the plain file at `path`, at most `cap` bytes of UTF-8.
pub fn read_text(path: &Path, cap: u64) -> Result<String, ReadError> {
    let bytes = read_bytes(path, cap)?;
    text(bytes, &path.display().to_string())
}

/// At most `cap` bytes of UTF-8 from a stream such as standard input, which a person chose
/// to pipe in (so it may be a pipe), named `name` in errors.
pub fn read_stream_text(stream: impl Read, name: &str, cap: u64) -> Result<String, ReadError> {
    let bytes = read_capped(stream, name, cap, 0)?;
    text(bytes, name)
}

/// `path` opened for reading without blocking, if it is a plain file, with what `fstat`
/// said about it: for a caller that checks more (the policy loader checks its owner) before
/// [`read_opened`].
pub(crate) fn open_plain(path: &Path) -> Result<(File, Metadata), ReadError> {
    let name = || path.display().to_string();
    // First by name, so that a device is refused without being opened at all.
    let before =
        std::fs::metadata(path).map_err(|error| ReadError::new(name(), Problem::Io(error)))?;
    refuse_unless_plain(&before, &name())?;
    let file = OpenOptions::new()
        .read(true)
        // If a FIFO took the name since, it opens at once instead of waiting for a writer,
        // and is refused just below. (On a plain file the flag changes nothing.)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
        .open(path)
        .map_err(|error| ReadError::new(name(), Problem::Io(error)))?;
    // Then what was opened, which is what is read.
    let meta = file
        .metadata()
        .map_err(|error| ReadError::new(name(), Problem::Io(error)))?;
    refuse_unless_plain(&meta, &name())?;
    Ok((file, meta))
}

/// At most `cap` bytes of a file [`open_plain`] opened, named `name` in errors.
pub(crate) fn read_opened(
    file: File,
    meta: &Metadata,
    name: &str,
    cap: u64,
) -> Result<Vec<u8>, ReadError> {
    if meta.len() > cap {
        return Err(ReadError::new(
            name,
            Problem::TooLarge {
                size: Some(meta.len()),
                cap,
            },
        ));
    }
    read_capped(file, name, cap, meta.len())
}

fn refuse_unless_plain(meta: &Metadata, name: &str) -> Result<(), ReadError> {
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    };
    Err(ReadError::new(name, Problem::NotPlain(what)))
}

/// Reads one byte past `cap`, to tell a source exactly at the cap from one over it (a file
/// that grew after it was measured, or a stream).
fn read_capped(
    source: impl Read,
    name: &str,
    cap: u64,
    size_hint: u64,
) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::with_capacity(size_hint.min(cap) as usize);
    source
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| ReadError::new(name, Problem::Io(error)))?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::new(name, Problem::TooLarge { size: None, cap }));
    }
    Ok(bytes)
}

fn text(bytes: Vec<u8>, name: &str) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|_| ReadError::new(name, Problem::NotText))
}

/// `cap` for people, when it is a round number of MiB or KiB: `1 MiB`, `64 KiB`.
fn human(cap: u64) -> Option<String> {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if cap >= MIB && cap.is_multiple_of(MIB) {
        Some(format!("{} MiB", cap / MIB))
    } else if cap >= KIB && cap.is_multiple_of(KIB) {
        Some(format!("{} KiB", cap / KIB))
    } else {
        None
    }
}
