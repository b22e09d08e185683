//! A directory that takes no new files, even for root, for the environment-fault tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// While alive, `dir` refuses new entries: the immutable attribute when running as root
/// (root writes through permission bits), else its write bits dropped. Undone on drop, so a
/// failing test still leaves a directory its temporary root can remove.
pub struct ReadOnly(PathBuf);

impl ReadOnly {
    pub fn make(dir: &Path) -> ReadOnly {
        if is_root() {
            let status = Command::new("chattr").arg("+i").arg(dir).status().unwrap();
            assert!(status.success(), "chattr +i {}", dir.display());
        } else {
            crate::set_mode(dir, 0o555);
        }
        ReadOnly(dir.to_owned())
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if is_root() {
            let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
        } else {
            crate::set_mode(&self.0, 0o755);
        }
    }
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}
