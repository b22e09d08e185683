//! The one way the inbox writes a small file of its own (settings, the policy, the web
//! server's certificate and key, the systemd unit, an agent session's allowances): whole or
//! not at all, with its mode from the first byte on.
//!
//! A temporary file is created beside the target under a name nobody else uses (`O_EXCL`,
//! so a planted file or link there is never opened), given its mode before any byte is
//! written (the umask does not decide it, and a secret is never readable by others even for
//! a moment), written, flushed to disk, renamed over the target, and then the directory is
//! flushed so the rename itself survives a crash. A crash leaves the old file or the new
//! one, never half of one; a failure removes the temporary file.

use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` atomically with permission bits `mode` (e.g. `0o600`). The
/// directory must exist. A link at `path` is replaced by the file, never followed.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let tmp = temporary_name(path);
    let result = write_then_rename(&tmp, path, bytes, mode);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    // The rename is durable only once the directory is: best effort, as some filesystems
    // (network ones) refuse to sync a directory.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn write_then_rename(tmp: &Path, path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(tmp)?;
    // The umask may have taken bits away (or, under umask 000, given none extra): the file
    // gets exactly `mode` before it holds anything.
    file.set_permissions(Permissions::from_mode(mode))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(tmp, path)
}

/// `.<name>.<pid>.<n>.tmp` beside `path`: unique within this process by the counter, and
/// between processes by the pid; hidden, and never a name the inbox reads.
fn temporary_name(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().mode() & 0o7777
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_the_bytes_with_exactly_the_mode_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        write_atomically(&path, b"{\"a\": 1}", 0o600).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\": 1}");
        assert_eq!(mode_of(&path), 0o600);
        // A second write replaces the file whole, and a public mode is kept exactly.
        write_atomically(&path, b"two", 0o644).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(mode_of(&path), 0o644);
        assert_eq!(entries(dir.path()), ["settings.json"]);
    }

    #[test]
    fn a_link_at_the_target_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "keep me").unwrap();
        let path = dir.path().join("policy.toml");
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        write_atomically(&path, b"new", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep me");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("unit.service");
        std::fs::write(&path, "old").unwrap();
        // A directory where the file should go: the rename fails after the temporary file
        // was written.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("inside"), "x").unwrap();
        assert!(write_atomically(&blocked, b"new", 0o644).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(entries(dir.path()), ["blocked", "unit.service"]);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/settings.json");
        let error = write_atomically(&path, b"x", 0o600).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }
}
