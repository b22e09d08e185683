//! One module per command. Each `run` returns the exit code for the outcomes the command
//! reports itself; an `Err` is a failure (exit 1), printed by `main`.

pub mod answer;
pub mod ask;
pub mod audit;
pub mod cancel;
pub mod check;
pub mod config;
pub mod demo;
pub mod devices;
pub mod hook;
pub mod list;
pub mod mcp;
pub mod policy;
pub mod schema;
pub mod serve;
pub mod service;
pub mod show;
pub mod snooze;
pub mod stats;
pub mod watch;

use anyhow::{bail, Result};

/// Refuses an id that cannot name a request, before it is used to build a path.
pub fn ensure_valid_id(id: &str) -> Result<()> {
    if !inbox_protocol::is_valid_id(id) {
        // The refused id is quoted on one line: it may hold anything, newlines included.
        let id = inbox_protocol::text::one_line(id);
        bail!(
            "\"{id}\" is not a valid request id (letters, digits, '.', '_' or '-', starting \
             with a letter or digit, at most 128 characters), so there is no such request"
        );
    }
    Ok(())
}
