//! Reading the policy file only if it is the operator's own. The policy decides which
//! requests settle without a person and which programs an escalation runs, as the
//! operator's account: a file another account could have written would let that account
//! approve requests or run programs as the operator. So, as the spool's trust rule does for
//! every file the inbox acts on, the file (after following links) must be a regular file
//! owned by the operator or root and writable by nobody else, and each link on the way must
//! be the operator's or root's too. It is opened without blocking (a FIFO never hangs the
//! reader) and read up to [`MAX_POLICY_BYTES`] (a huge file, or `/dev/zero`, is refused, not
//! read to the end).

use std::os::unix::fs::MetadataExt;
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

/// The file's text, if it is a plain file of sensible size that `owner` (or root) alone
/// could have written: the operator for their own file, the spool's owner for a team's
/// policy file.
pub fn read_trusted_by(path: &Path, owner: u32) -> Result<String, ReadRefusal> {
    let trusted_owner = |uid: u32| uid == owner || uid == 0;
    let target = follow_links(path, &trusted_owner)?;
    // Without blocking on a FIFO, a plain file only (capped_read.rs).
    let (file, meta) = crate::capped_read::open_plain(&target).map_err(refusal)?;
    if !trusted_owner(meta.uid()) {
        return Err(ReadRefusal::Untrusted(format!(
            "it is owned by another account (uid {}), which could change what the policy \
             allows; only {}, or root's, is read",
            meta.uid(),
            if owner == rustix::process::geteuid().as_raw() {
                "your own file".to_owned()
            } else {
                format!("the file of uid {owner}")
            }
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(ReadRefusal::Untrusted(format!(
            "other accounts may write to it (mode {:o}); make it yours alone: chmod go-w {}",
            meta.mode() & 0o7777,
            target.display()
        )));
    }
    let bytes = crate::capped_read::read_opened(
        file,
        &meta,
        &target.display().to_string(),
        MAX_POLICY_BYTES,
    )
    .map_err(refusal)?;
    String::from_utf8(bytes).map_err(|_| ReadRefusal::Untrusted("it is not UTF-8 text".into()))
}

/// The system's error as the system's; any other reason not to read as a reason.
fn refusal(error: crate::capped_read::ReadError) -> ReadRefusal {
    match error.into_io() {
        Ok(error) => ReadRefusal::Io(error),
        Err(error) => ReadRefusal::Untrusted(error.problem()),
    }
}

/// The text of the policy file at `path` to show it (the Settings editor), whoever wrote it:
/// read as [`read_trusted`] reads (without blocking, a plain file only, at most
/// [`MAX_POLICY_BYTES`]) but without its owner and mode checks, which say whether the inbox
/// uses it, not whether the operator may see it. `Ok(None)` when there is no file.
pub fn read_to_show(path: &Path) -> Result<Option<String>, String> {
    match crate::capped_read::read_text(path, MAX_POLICY_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.is_missing() => Ok(None),
        Err(error) => Err(error.problem()),
    }
}

/// Whether `program`, which an escalation step runs as the operator, is the operator's to
/// run: named by its absolute path (a bare name runs whatever comes first on PATH), reached
/// only through links the operator or root owns, a plain file the operator or root owns
/// and nobody else may write, in folders nobody else may write (or sticky ones, where
/// nobody else can replace it). Otherwise another account could change what runs.
pub fn check_program(program: &str) -> Result<(), String> {
    let path = Path::new(program);
    if !path.is_absolute() {
        return Err(format!(
            "its program {program} is not an absolute path: a bare name runs whatever comes \
             first on PATH; give the program's full path"
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    let trusted = |uid: u32| uid == me || uid == 0;
    let said = |refusal: ReadRefusal| match refusal {
        ReadRefusal::Io(error) => format!("its program {program} cannot be checked: {error}"),
        ReadRefusal::Untrusted(reason) => format!("its program {program}: {reason}"),
    };
    let target = follow_links(path, &trusted).map_err(said)?;
    let meta = std::fs::metadata(&target).map_err(|error| said(ReadRefusal::Io(error)))?;
    if !meta.file_type().is_file() {
        return Err(format!("its program {program} is not a plain file"));
    }
    if !trusted(meta.uid()) {
        return Err(format!(
            "its program {program} is owned by another account (uid {}), which could change \
             what runs as you",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "other accounts may change its program {program} (mode {:o}): chmod go-w {}",
            meta.mode() & 0o7777,
            target.display()
        ));
    }
    for dir in target.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        let shared = meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0;
        if !trusted(meta.uid()) || shared {
            return Err(format!(
                "its program {program} is in {}, which another account may change (owner uid \
                 {}, mode {:o}), so it could be replaced",
                dir.display(),
                meta.uid(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
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
