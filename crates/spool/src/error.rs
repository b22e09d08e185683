//! The spool's names and its errors: the three areas a file lives in, the marker file that
//! says a directory is a spool, and [`SpoolError`]. A leaf module, so the modules that open,
//! read and trust a spool share them without importing each other.

use std::io;
use std::path::PathBuf;

/// The file that marks a directory as a spool, written by whoever creates it.
pub const MARKER: &str = ".answer-inbox-spool";

/// Where a file lives in the spool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    Questions,
    Answers,
    Cancel,
}

impl Area {
    pub fn dir_name(self) -> &'static str {
        match self {
            Area::Questions => "questions",
            Area::Answers => "answers",
            Area::Cancel => "cancel",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("\"{0}\" is not a valid id (letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 characters)")]
    InvalidId(String),
    #[error("a request with id \"{0}\" is already in the spool")]
    RequestExists(String),
    /// The root or one of its directories cannot be used safely (a symbolic link, not a
    /// directory). Nothing was touched.
    #[error("{path} cannot be used as a spool: {reason}. Nothing was touched.")]
    Unsafe { path: PathBuf, reason: String },
    /// The directory holds something a spool never does: it is somebody's directory, not a
    /// spool. Nothing was touched.
    #[error(
        "{root} is not a spool: it holds {entry:?}, and a spool holds only questions/, \
         answers/, cancel/, tmp/ and {marker}. Nothing was touched (nothing created, nothing \
         deleted). Choose a new or empty directory, or an existing spool.",
        marker = MARKER
    )]
    NotASpool { root: PathBuf, entry: String },
    /// Team mode names a group the system does not know.
    #[error(
        "there is no group {group:?} on this machine, so a team spool cannot use it: create \
         it (groupadd {group}) and add the team's accounts (usermod -aG {group} ACCOUNT), or \
         name an existing group"
    )]
    UnknownGroup { group: String },
}
