//! "Allow for this session" where the inbox keeps the allowance itself (PreToolUse, and
//! Codex, whose output has no rules to return): what the operator allowed for one session,
//! kept in `<XDG state dir>/answer-inbox/<agent>-sessions/<session_id>.json` (private to the
//! account, written atomically) so the same call later in that session is allowed without
//! asking again.
//!
//! What is remembered is as narrow as the agent's own prompt would make it, and the choice's
//! label says which ([`label`]): for Bash the exact command; for the file tools (Write, Edit,
//! MultiEdit, NotebookEdit) the tool and the exact file path, never the whole tool; for any
//! other tool the exact arguments. Claude Code says nothing to hooks when a session ends,
//! so an entry lasts 24 hours: older ones are ignored and removed, and so are entries of the
//! earlier format that allowed a whole tool.
//!
//! Two hook calls of one session finishing at the same moment may each rewrite the file;
//! one entry can then be lost, and that call is simply asked again. Nothing is ever allowed
//! that the operator did not allow.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Duration, Utc};
use inbox_engine::inbox_policy::capped_read;
use serde::{Deserialize, Serialize};

use super::payload::ToolCall;

/// How long an allowance lasts: a stand-in for the session's end.
const LIFETIME_HOURS: i64 = 24;

/// The largest session file read. An entry is its tool, its scope (one command, path or
/// set of arguments, each from a request of at most 1 MiB) and a time, and entries last a
/// day; 16 MiB holds thousands of them. Past it the file is refused and the call is asked
/// again, as with any unreadable file.
const MAX_SESSION_BYTES: u64 = 16 * 1024 * 1024;

/// Past this, a command or path is not repeated in a choice's label (the request's
/// description shows it whole); the label then names it as "this exact" one.
const MAX_SCOPE_IN_LABEL: usize = 300;

/// What one allowance covers, besides its tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Bash: this exact command.
    Command(String),
    /// A file tool: this exact path.
    FilePath(String),
    /// Any other tool: these exact arguments (compact JSON).
    Input(String),
}

/// One allowance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowance {
    pub tool: String,
    /// `None` only in files of the earlier format, where it meant the whole tool: such an
    /// entry allows nothing and is dropped.
    #[serde(default)]
    pub scope: Option<Scope>,
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
        let wanted = scope(call);
        Ok(file
            .allowed
            .iter()
            .any(|entry| entry.tool == call.tool_name && entry.scope.as_ref() == Some(&wanted)))
    }

    /// Records that the operator allowed `call` for this session.
    pub fn remember(&self, call: &ToolCall, now: DateTime<Utc>) -> Result<()> {
        let (mut file, _) = self.load(now)?;
        let scope = scope(call);
        file.allowed.retain(|entry| {
            !(entry.tool == call.tool_name && entry.scope.as_ref() == Some(&scope))
        });
        file.allowed.push(Allowance {
            tool: call.tool_name.clone(),
            scope: Some(scope),
            allowed_at: now,
        });
        self.store(&file)
    }

    /// The file's live entries, and whether any expired ones were dropped. A missing file is
    /// an empty memory; an unreadable or damaged one is an error (it is never taken as an
    /// allowance, and the caller asks instead).
    fn load(&self, now: DateTime<Utc>) -> Result<(SessionFile, bool)> {
        // A plain file only, opened without blocking, at most MAX_SESSION_BYTES
        // (inbox_policy::capped_read): the hook runs before every tool call, so a FIFO or a
        // device at this name must not stall the agent.
        let bytes = match capped_read::read_bytes(&self.path, MAX_SESSION_BYTES) {
            Ok(bytes) => bytes,
            Err(error) if error.is_missing() => {
                return Ok((
                    SessionFile {
                        session_id: self.session_id.clone(),
                        allowed: Vec::new(),
                    },
                    false,
                ))
            }
            Err(error) => return Err(error.into()),
        };
        let mut file: SessionFile = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a session memory file", self.path.display()))?;
        let before = file.allowed.len();
        let oldest = now - Duration::hours(LIFETIME_HOURS);
        // An entry from the future (a clock set back) is not trusted either, nor one without
        // a scope (the earlier format's whole-tool allowance).
        file.allowed.retain(|entry| {
            entry.allowed_at > oldest && entry.allowed_at <= now && entry.scope.is_some()
        });
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

/// The file tools, whose allowance is one file path.
const FILE_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// What allowing `call` for the session covers, besides its tool.
pub fn scope(call: &ToolCall) -> Scope {
    if let Some(command) = call.bash_command() {
        // The command alone names what was allowed only when nothing else in the call
        // changes how it runs: the same command outside the sandbox, in the background or
        // with a field this hook does not know is another call, allowed only exactly.
        let only_the_command = call
            .tool_input
            .keys()
            .all(|key| BASH_FIELDS_OF_THE_COMMAND.contains(&key.as_str()));
        if only_the_command {
            return Scope::Command(command.to_owned());
        }
    }
    if FILE_TOOLS.contains(&call.tool_name.as_str()) {
        if let Some(path) = call
            .input_str("file_path")
            .or_else(|| call.input_str("notebook_path"))
        {
            return Scope::FilePath(path.to_owned());
        }
    }
    let input = serde_json::to_string(&call.tool_input).expect("JSON values serialise");
    Scope::Input(input)
}

/// Bash's fields that say nothing about how the command runs beyond the command itself
/// (its note to the operator, its time limit); any other field makes an allowance exact.
const BASH_FIELDS_OF_THE_COMMAND: [&str; 3] = ["command", "description", "timeout"];

/// The "for this session" choice's text, naming what it covers: the command, the tool and
/// the file, or this exact call. A command or path that cannot be shown whole on one line in
/// a label is named as "this exact" one (the description above shows it whole).
pub fn label(call: &ToolCall) -> String {
    let tool = inbox_protocol::text::one_line(&call.tool_name);
    let inline = |text: &str| {
        super::suggestions::shown_whole(text)
            .filter(|text| text.chars().count() <= MAX_SCOPE_IN_LABEL)
            .map(str::to_owned)
    };
    match scope(call) {
        Scope::Command(command) => match inline(&command) {
            Some(command) => format!("Allow this command for this session: {command}"),
            None => "Allow this exact command for this session".to_owned(),
        },
        Scope::FilePath(path) => match inline(&path) {
            Some(path) => format!("Allow {tool} on {path} for this session"),
            None => format!("Allow {tool} on this exact file for this session"),
        },
        Scope::Input(_) => format!("Allow this exact {tool} call for this session"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hook::payload;

    fn bash(command: &str) -> ToolCall {
        tool("Bash", serde_json::json!({ "command": command }))
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

    /// A FIFO or an oversized file at the session's name is an error at once (the call is
    /// then asked), never a wait for a writer before every tool call, nor read to its end.
    #[test]
    fn a_fifo_or_an_oversized_session_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s-1.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let (sender, receiver) = std::sync::mpsc::channel();
        let root = dir.path().to_owned();
        std::thread::spawn(move || {
            let memory = SessionMemory::open(&root, "s-1").unwrap();
            let allowed = memory.allows(&bash("cargo test"), Utc::now());
            sender.send(allowed.map_err(|error| error.to_string()))
        });
        let error = receiver
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the session file blocked")
            .unwrap_err();
        assert!(
            error.contains("s-1.json") && error.contains("a FIFO, not a plain file"),
            "{error}"
        );

        fs::remove_file(&path).unwrap();
        fs::File::create(&path)
            .unwrap()
            .set_len(MAX_SESSION_BYTES + 1)
            .unwrap();
        let memory = SessionMemory::open(dir.path(), "s-1").unwrap();
        let error = memory
            .allows(&bash("cargo test"), Utc::now())
            .unwrap_err()
            .to_string();
        assert!(error.contains("larger than the limit of"), "{error}");
    }

    /// The same command outside the sandbox, in the background, or with a field unknown
    /// here is not what the operator allowed "for this session".
    #[test]
    fn a_command_allowance_does_not_cover_it_run_another_way() {
        let dir = tempfile::tempdir().unwrap();
        let memory = SessionMemory::open(dir.path(), "s-1").unwrap();
        let now = Utc::now();
        memory.remember(&bash("cargo test"), now).unwrap();
        let noted = tool(
            "Bash",
            serde_json::json!({"command": "cargo test", "description": "Run the tests", "timeout": 60000}),
        );
        assert!(memory.allows(&noted, now).unwrap());
        for (field, value) in [
            ("dangerouslyDisableSandbox", serde_json::json!(true)),
            ("run_in_background", serde_json::json!(true)),
            ("shell", serde_json::json!("/bin/zsh")),
        ] {
            let other = tool(
                "Bash",
                serde_json::json!({"command": "cargo test", field: value}),
            );
            assert!(!memory.allows(&other, now).unwrap(), "{field}");
            assert!(label(&other).contains("exact"), "{}", label(&other));
        }
    }

    fn tool(name: &str, input: serde_json::Value) -> ToolCall {
        payload::parse(
            serde_json::json!({"session_id": "s-1", "hook_event_name": "PreToolUse",
                "tool_name": name, "tool_input": input})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    }

    /// Allowing one Write to README.md for the session allows Writes to that file only:
    /// never a Write to another file, nor an Edit of the same one.
    #[test]
    fn a_file_tools_allowance_covers_one_path_of_one_tool() {
        let dir = tempfile::tempdir().unwrap();
        let memory = SessionMemory::open(dir.path(), "s-1").unwrap();
        let now = Utc::now();
        let readme = |content: &str| {
            tool(
                "Write",
                serde_json::json!({"file_path": "/home/d/shop/README.md", "content": content}),
            )
        };
        memory.remember(&readme("# Shop\n"), now).unwrap();
        assert!(memory.allows(&readme("# Shop, again\n"), now).unwrap());
        let bashrc = tool(
            "Write",
            serde_json::json!({"file_path": "/home/d/.bashrc", "content": "curl x | sh\n"}),
        );
        assert!(!memory.allows(&bashrc, now).unwrap());
        let edit = tool(
            "Edit",
            serde_json::json!({"file_path": "/home/d/shop/README.md",
                "old_string": "a", "new_string": "b"}),
        );
        assert!(!memory.allows(&edit, now).unwrap());
        assert_eq!(
            label(&readme("x")),
            "Allow Write on /home/d/shop/README.md for this session"
        );
        assert_eq!(
            label(&bash("cargo test")),
            "Allow this command for this session: cargo test"
        );
        assert_eq!(
            label(&bash("cargo test\nrm -rf ~")),
            "Allow this exact command for this session"
        );
        // Any other tool: its exact arguments.
        let fetch = |url: &str| tool("WebFetch", serde_json::json!({"url": url, "prompt": "p"}));
        memory.remember(&fetch("https://a.example/"), now).unwrap();
        assert!(memory.allows(&fetch("https://a.example/"), now).unwrap());
        assert!(!memory.allows(&fetch("https://b.example/"), now).unwrap());
        assert_eq!(
            label(&fetch("x")),
            "Allow this exact WebFetch call for this session"
        );
    }

    /// The earlier format remembered a whole tool (`{"tool": "Write"}`): such an entry
    /// allows nothing now, and is dropped.
    #[test]
    fn a_whole_tool_entry_of_the_earlier_format_allows_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let now = Utc::now();
        let file = serde_json::json!({"session_id": "s-1", "allowed": [
            {"tool": "Write", "allowed_at": now.to_rfc3339()}]});
        fs::write(dir.path().join("s-1.json"), file.to_string()).unwrap();
        let memory = SessionMemory::open(dir.path(), "s-1").unwrap();
        let write = tool(
            "Write",
            serde_json::json!({"file_path": "/home/d/.bashrc", "content": "x"}),
        );
        assert!(!memory.allows(&write, now).unwrap());
        assert!(
            !dir.path().join("s-1.json").exists(),
            "the entry is dropped"
        );
    }

    #[test]
    fn a_session_id_that_is_not_a_file_name_is_refused() {
        assert!(SessionMemory::open(Path::new("/tmp"), "../../etc/passwd").is_err());
    }
}
