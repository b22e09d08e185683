//! Reading the policy file only if it is the operator's own. The policy decides which
//! requests settle without a person and which programs an escalation runs, as the
//! operator's account: a file another account could have written would let that account
//! approve requests or run programs as the operator. So, as the spool's trust rule does for
//! every file the inbox acts on, the file (after following links) must be a regular file
//! owned by the operator or root and writable by nobody else, and each link on the way must
//! be the operator's or root's too. It is opened without blocking (a FIFO never hangs the
//! reader) and read up to [`MAX_POLICY_BYTES`] (a huge file, or `/dev/zero`, is refused, not
//! read to the end).

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest policy file read: rules are a few lines each.
pub const MAX_POLICY_BYTES: u64 = 1024 * 1024;

/// How many links are followed before the path is given up on.
const MAX_LINKS: usize = 16;

/// Why the file was not read.
#[derive(Debug)]
pub enum ReadRefusal {
    /// The file cannot be read (not there, no permission): the system's own error.
    Io(std::io::Error),
    /// The file is not one the operator alone could have written, or not a plain file.
    Untrusted(String),
}

/// The file's text, if it is the operator's own plain file of sensible size.
pub fn read_trusted(path: &Path) -> Result<String, ReadRefusal> {
    let me = rustix::process::geteuid().as_raw();
    let trusted_owner = |uid: u32| uid == me || uid == 0;
    let target = follow_links(path, &trusted_owner)?;
    let file = OpenOptions::new()
        .read(true)
        // A FIFO opens at once instead of waiting for a writer; what it is is checked next.
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(&target)
        .map_err(ReadRefusal::Io)?;
    let meta = file.metadata().map_err(ReadRefusal::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadRefusal::Untrusted(
            "it is not a plain file (a FIFO, a device or a directory)".into(),
        ));
    }
    if !trusted_owner(meta.uid()) {
        return Err(ReadRefusal::Untrusted(format!(
            "it is owned by another account (uid {}), which could change what the policy \
             allows; only your own file, or root's, is read",
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(ReadRefusal::Untrusted(format!(
            "other accounts may write to it (mode {:o}); make it yours alone: chmod go-w {}",
            meta.mode() & 0o7777,
            target.display()
        )));
    }
    read_capped(file)
}

/// `path` with every symbolic link on it followed, each link owned by a trusted account.
fn follow_links(path: &Path, trusted: &dyn Fn(u32) -> bool) -> Result<PathBuf, ReadRefusal> {
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS {
        let meta = std::fs::symlink_metadata(&current).map_err(ReadRefusal::Io)?;
        if !meta.file_type().is_symlink() {
            return Ok(current);
        }
        if !trusted(meta.uid()) {
            return Err(ReadRefusal::Untrusted(format!(
                "it is reached through the link {}, which another account (uid {}) owns",
                current.display(),
                meta.uid()
            )));
        }
        let link = std::fs::read_link(&current).map_err(ReadRefusal::Io)?;
        current = match current.parent() {
            Some(dir) => dir.join(link),
            None => link,
        };
    }
    Err(ReadRefusal::Untrusted(format!(
        "more than {MAX_LINKS} links lead to it"
    )))
}

fn read_capped(file: File) -> Result<String, ReadRefusal> {
    let mut bytes = Vec::new();
    file.take(MAX_POLICY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadRefusal::Io)?;
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return Err(ReadRefusal::Untrusted(format!(
            "it is larger than {MAX_POLICY_BYTES} bytes"
        )));
    }
    String::from_utf8(bytes).map_err(|_| ReadRefusal::Untrusted("it is not UTF-8 text".into()))
}
