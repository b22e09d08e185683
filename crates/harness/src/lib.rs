//! The reliability harnesses, and the test helpers the black-box tests and the benchmarks
//! share.
//!
//! Each harness is run short by a test in `tests/` and long by inbox-bench
//! (docs/RELIABILITY.md):
//!
//! - [`crash`]: SIGKILL under load; nothing is lost, rewritten or settled twice.
//! - [`race`]: several engines racing on one spool; one outcome per request, which every
//!   engine agrees on.
//! - [`overflow`]: lost watcher events; the rescans they trigger still ingest every request.
//! - [`team`]: two operators (two OS accounts) in team mode on one spool over sshfs; one
//!   outcome per request, attributed to the account that wrote it.
//!
//! Beside them, the helpers the black-box tests (tests/tests) and the desktop benchmarks
//! share: child processes that are always stopped ([`process`]), a private desktop session
//! with a notification daemon and a bus monitor ([`session`]), the desktop app started
//! directly or through tauri-driver ([`desktop`]), and a directory that refuses new files
//! ([`read_only`]). The bin `inbox-hold-db-lock` holds a database lock for the fault tests.

pub mod crash;
pub mod desktop;
pub mod overflow;
pub mod process;
pub mod race;
pub mod read_only;
pub mod session;
pub mod team;

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
