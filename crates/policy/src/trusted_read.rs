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
/// could have written: the spool's owner for a team's policy file. Its folder is not looked
/// at: a team's file lives in the spool root, which the team may write (docs/TEAMS.md says
/// how a removed team file is treated as broken, never as none).
pub fn read_trusted_by(path: &Path, owner: u32) -> Result<String, ReadRefusal> {
    read_checked(path, owner, false)
}

/// The operator's own policy file's text: [`read_trusted_by`] the operator, and in folders
/// only the operator or root may change, as an escalation program's (sticky ones too, where
/// nobody else can remove or rename it). Otherwise another account could remove the file,
/// and the shipped policy would quietly stand in for the operator's stricter one, or put
/// its own link or file in its place. Checked before the file is looked for, so a missing
/// file in such a folder is refused, never taken for "no file".
pub fn read_own(path: &Path) -> Result<String, ReadRefusal> {
    read_checked(path, rustix::process::geteuid().as_raw(), true)
}

/// [`read_trusted_by`], and with `folders` the folders of the path and of every link's
/// target held to [`changeable_folder`].
fn read_checked(path: &Path, owner: u32, folders: bool) -> Result<String, ReadRefusal> {
    let trusted_owner = |uid: u32| uid == owner || uid == 0;
    let target = follow_links(path, &trusted_owner, folders)?;
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
/// read as [`read_own`] reads (without blocking, a plain file only, at most
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
    let target = follow_links(path, &trusted, false).map_err(said)?;
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
    match changeable_folder(&target, &trusted) {
        Some(folder) => Err(format!("its program {program} {folder}")),
        None => Ok(()),
    }
}

/// The first folder that holds `path` (its own and each above it, as named and as it
/// really is behind links) that an account not `trusted` could change: one such an account
/// owns, or one others may write that is not sticky (in a sticky folder, like /tmp, only a
/// file's owner may remove or rename it). Said as "is in DIR, which ...". A folder that
/// does not exist is passed over: whoever makes it there makes it in the folder above.
fn changeable_folder(path: &Path, trusted: &dyn Fn(u32) -> bool) -> Option<String> {
    // A relative path's folders are the working directory's.
    let named = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let folder = named.parent()?;
    let real = std::fs::canonicalize(folder).ok();
    std::iter::once(folder)
        .chain(real.as_deref())
        .flat_map(Path::ancestors)
        .find_map(|dir| {
            let meta = std::fs::metadata(dir).ok()?;
            let shared = meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0;
            (!trusted(meta.uid()) || shared).then(|| {
                let fix = if trusted(meta.uid()) {
                    format!(": chmod go-w {}", dir.display())
                } else {
                    String::new()
                };
                format!(
                    "is in {}, which another account may change (owner uid {}, mode {:o}), so \
                     it could be removed or replaced{fix}",
                    dir.display(),
                    meta.uid(),
                    meta.mode() & 0o7777
                )
            })
        })
}

/// `path` with every symbolic link on it followed, each link owned by a trusted account;
/// with `folders`, each step's folders held to [`changeable_folder`] before it is looked
/// at (a link in a folder others share could be removed as well as the file).
fn follow_links(
    path: &Path,
    trusted: &dyn Fn(u32) -> bool,
    folders: bool,
) -> Result<PathBuf, ReadRefusal> {
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS {
        if let Some(folder) = folders
            .then(|| changeable_folder(&current, trusted))
            .flatten()
        {
            let it = if current == path {
                "it".to_owned()
            } else {
                format!("the file it links to, {},", current.display())
            };
            return Err(ReadRefusal::Untrusted(format!("{it} {folder}")));
        }
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
