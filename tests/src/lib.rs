//! The harness shared by the black-box tests (tests/tests) and the desktop benchmarks
//! (inbox-bench): child processes that are always stopped ([`process`]), a private desktop
//! session with a notification daemon and a bus monitor ([`session`]), and the desktop app
//! started directly or through tauri-driver ([`desktop`]).

pub mod crash;
pub mod desktop;
pub mod overflow;
pub mod process;
pub mod race;
pub mod read_only;
pub mod session;

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::Path;

/// Sets a file's permission bits (a script to run, a directory only its owner may enter).
pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Counts by name as one line, "answer 12, cancel 3", for the harnesses' reports.
pub fn tally<K: Display>(counts: &BTreeMap<K, usize>) -> String {
    counts
        .iter()
        .map(|(name, count)| format!("{name} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}
