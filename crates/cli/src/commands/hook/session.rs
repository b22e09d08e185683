//! "Allow for this session": what the operator allowed for one Claude Code session, kept in
//! `<XDG state dir>/answer-inbox/claude-code-sessions/<session_id>.json` (private to the
//! account, written atomically) so the same call later in that session is allowed without
//! asking again.
//!
//! What is remembered: for Bash, the exact command (allowing `Bash` would allow any command);
//! for any other tool, the tool name. Claude Code says nothing to hooks when a session ends,
//! so an entry lasts 24 hours: older ones are ignored and removed.
//!
//! Two hook calls of one session finishing at the same moment may each rewrite the file;
//! one entry can then be lost, and that call is simply asked again. Nothing is ever allowed
//! that the operator did not allow.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::payload::ToolCall;

/// How long an allowance lasts: a stand-in for the session's end.
const LIFETIME_HOURS: i64 = 24;

/// What one allowance covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowance {
    pub tool: String,
    /// For Bash: the exact command; `None` for other tools (the whole tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub allowed_at: DateTime<Utc>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SessionFile {
    session_id: String,
    allowed: Vec<Allowance>,
}

/// One session's allowances on disk.
pub struct SessionMemory {
    path: PathBuf,
    session_id: String,
}

impl SessionMemory {
    /// The memory of `session_id`, under `root` (the `claude-code-sessions` directory).
    pub fn open(root: &Path, session_id: &str) -> Result<SessionMemory> {
        // The id names a file: only what cannot climb out of the directory or hide.
        if !inbox_protocol::is_valid_id(session_id) {
            bail!(
                "session_id \"{}\" cannot name a file (letters, digits, '.', '_' or '-', \
                 starting with a letter or digit, at most 128 characters)",
                inbox_protocol::text::one_line(session_id)
            );
        }
        Ok(SessionMemory {
            path: root.join(format!("{session_id}.json")),
            session_id: session_id.to_owned(),
        })
    }

    /// The default directory: `<XDG state dir>/answer-inbox/<agent>-sessions`
    /// (`claude-code-sessions`, `codex-sessions`; the data dir where the platform has no
    /// state dir).
    pub fn default_root(agent: super::payload::Agent) -> Result<PathBuf> {
        dirs::state_dir()
            .or_else(dirs::data_dir)
            .map(|dir| {
                dir.join("answer-inbox")
                    .join(format!("{}-sessions", agent.app()))
            })
            .context("cannot find the user's state directory (is HOME set?)")
    }

    /// Whether the operator allowed `call` for this session within the last 24 hours.
    /// Expired entries are removed on the way.
    pub fn allows(&self, call: &ToolCall, now: DateTime<Utc>) -> Result<bool> {
        let (file, expired) = self.load(now)?;
        if expired {
            self.store(&file)?;
        }
        let wanted = key(call);
        Ok(file
            .allowed
            .iter()
            .any(|entry| (entry.tool.as_str(), entry.command.as_deref()) == wanted))
    }

    /// Records that the operator allowed `call` for this session.
    pub fn remember(&self, call: &ToolCall, now: DateTime<Utc>) -> Result<()> {
        let (mut file, _) = self.load(now)?;
        let (tool, command) = key(call);
        file.allowed
            .retain(|entry| (entry.tool.as_str(), entry.command.as_deref()) != (tool, command));
        file.allowed.push(Allowance {
            tool: tool.to_owned(),
            command: command.map(str::to_owned),
            allowed_at: now,
        });
        self.store(&file)
    }

    /// The file's live entries, and whether any expired ones were dropped. A missing file is
    /// an empty memory; an unreadable or damaged one is an error (it is never taken as an
    /// allowance, and the caller asks instead).
    fn load(&self, now: DateTime<Utc>) -> Result<(SessionFile, bool)> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok((
                    SessionFile {
                        session_id: self.session_id.clone(),
                        allowed: Vec::new(),
                    },
                    false,
                ))
            }
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", self.path.display()))
            }
        };
        let mut file: SessionFile = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a session memory file", self.path.display()))?;
        let before = file.allowed.len();
        let oldest = now - Duration::hours(LIFETIME_HOURS);
        // An entry from the future (a clock set back) is not trusted either.
        file.allowed
            .retain(|entry| entry.allowed_at > oldest && entry.allowed_at <= now);
        let expired = file.allowed.len() != before;
        Ok((file, expired))
    }

    /// Writes the file whole or not at all ([`inbox_app::atomic_file`]), mode 0600 in a 0700
    /// directory; an empty memory removes the file.
    fn store(&self, file: &SessionFile) -> Result<()> {
        if file.allowed.is_empty() {
            return match fs::remove_file(&self.path) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                    Err(error).with_context(|| format!("cannot remove {}", self.path.display()))
                }
                _ => Ok(()),
            };
        }
        let dir = self
            .path
            .parent()
            .context("the session file has no directory")?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let bytes = serde_json::to_vec_pretty(file).context("cannot serialise the allowances")?;
        inbox_app::atomic_file::write_atomically(&self.path, &bytes, 0o600)
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// What an allowance is matched on: the tool, and for Bash the exact command.
fn key(call: &ToolCall) -> (&str, Option<&str>) {
    (call.tool_name.as_str(), call.bash_command())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hook::payload;

    fn bash(command: &str) -> ToolCall {
        payload::parse(
            serde_json::json!({"session_id": "s-1", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": command}})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn an_allowance_covers_the_same_command_for_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let memory = SessionMemory::open(dir.path(), "s-1").unwrap();
        let now = Utc::now();
        memory.remember(&bash("cargo test"), now).unwrap();
        assert!(memory.allows(&bash("cargo test"), now).unwrap());
        assert!(!memory.allows(&bash("cargo test; rm -rf ~"), now).unwrap());
        let mode = fs::metadata(dir.path().join("s-1.json")).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
        let later = now + Duration::hours(LIFETIME_HOURS) + Duration::seconds(1);
        assert!(!memory.allows(&bash("cargo test"), later).unwrap());
        assert!(
            !dir.path().join("s-1.json").exists(),
            "the expired entry is removed"
        );
    }

    #[test]
    fn a_session_id_that_is_not_a_file_name_is_refused() {
        assert!(SessionMemory::open(Path::new("/tmp"), "../../etc/passwd").is_err());
    }
}
