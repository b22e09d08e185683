//! Reading request files named on the command line (or standard input), with the protocol's
//! size cap. A symlink named explicitly is followed: the operator chose it, unlike a file
//! that merely appears in the spool.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use inbox_protocol::limits::MAX_FILE_BYTES;

/// Why a file's bytes could not be had.
#[derive(Debug)]
pub enum ReadFailure {
    /// Over the protocol's cap: a validation problem, not an I/O one. The size is known for
    /// regular files, not for pipes.
    TooLarge(Option<u64>),
    /// Missing, a directory, no permission, ...
    Io(io::Error),
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFailure::TooLarge(Some(size)) => write!(
                f,
                "the file is {size} bytes, over the limit of {MAX_FILE_BYTES} bytes (1 MiB)"
            ),
            ReadFailure::TooLarge(None) => write!(
                f,
                "the input is over the limit of {MAX_FILE_BYTES} bytes (1 MiB)"
            ),
            ReadFailure::Io(error) => write!(f, "{error}"),
        }
    }
}

/// Whether `path` means standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How a file given on the command line is named in messages.
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        "(stdin)".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Reads at most the cap (plus one byte, to notice a file over it) from `path` or stdin.
pub fn read_request(path: &Path) -> Result<Vec<u8>, ReadFailure> {
    if is_stdin(path) {
        return read_capped(io::stdin().lock(), None);
    }
    let file = File::open(path).map_err(ReadFailure::Io)?;
    let meta = file.metadata().map_err(ReadFailure::Io)?;
    if meta.is_dir() {
        return Err(ReadFailure::Io(io::Error::other("it is a directory")));
    }
    if meta.is_file() && meta.len() > MAX_FILE_BYTES {
        return Err(ReadFailure::TooLarge(Some(meta.len())));
    }
    read_capped(file, Some(meta.len()))
}

fn read_capped(source: impl Read, size_hint: Option<u64>) -> Result<Vec<u8>, ReadFailure> {
    let mut bytes = Vec::with_capacity(size_hint.unwrap_or(0).min(MAX_FILE_BYTES) as usize);
    source
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadFailure::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        // A pipe or a growing file: the true size is unknown, only that it is too large.
        return Err(ReadFailure::TooLarge(None));
    }
    Ok(bytes)
}
