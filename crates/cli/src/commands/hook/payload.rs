//! The JSON Claude Code writes on a hook's standard input, read strictly enough that a
//! payload we do not understand is refused (and Claude Code keeps its own prompt) rather
//! than guessed at.
//!
//! The contract relied on: Claude Code's hooks reference, <https://code.claude.com/docs/en/hooks>
//! ("PermissionRequest input", "Permission update entries", "Elicitation input"), read on
//! 2026-12-05 through the mirror github.com/thevibeworks/claude-code-docs
//! (content/en/docs/claude-code/hooks.md, snapshot of 2026-08-22). PermissionRequest carries
//! an optional `permission_suggestions` array (the dialog's "always allow" options, entries
//! of the same shape `updatedPermissions` takes); Elicitation carries `mcp_server_name`,
//! `message` and optional `mode` (`form` or `url`), `url`, `elicitation_id` and
//! `requested_schema` besides the common fields.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The tool-call events this command answers. Both are about one tool call waiting for a
/// permission; Elicitation is read into its own type ([`Form`]); every
/// other event is refused, as it expects different output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    PreToolUse,
    PermissionRequest,
}

impl HookEvent {
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }
}

/// Which agent runs the hook. Codex's hooks take Claude Code's schema (the same input
/// fields, and for PermissionRequest the same `decision` output); only who is named, and
/// where session allowances are kept, differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
}

impl Agent {
    /// As people call it: "Claude Code", "Codex".
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
        }
    }

    /// The request's source app: `claude-code`, `codex`.
    pub fn app(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }
}

/// One tool call an agent asks about.
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub agent: Agent,
    pub event: HookEvent,
    pub session_id: String,
    /// The agent's working directory, when given.
    pub cwd: Option<String>,
    pub tool_name: String,
    /// The tool's arguments, always an object (Claude Code's tools take named arguments).
    pub tool_input: Map<String, Value>,
    /// Claude Code's permission mode (`default`, `plan`, `acceptEdits`, ...), when given.
    pub permission_mode: Option<String>,
    /// PermissionRequest's `permission_suggestions` as written (Claude Code only); each is
    /// read strictly when the choices are made, and one that is not understood is not shown.
    pub suggestions: Vec<Value>,
}

/// One Elicitation payload.
#[derive(Debug, Clone)]
pub struct Form {
    pub session_id: String,
    pub cwd: Option<String>,
    pub server: String,
    pub message: String,
    /// `form` when not given.
    pub mode: String,
    pub requested_schema: Option<Value>,
}

impl Form {
    fn read(raw: Raw) -> Result<Form> {
        let session_id = given(raw.session_id, "the hook input has no session_id")?;
        let server = given(
            raw.mcp_server_name,
            "the Elicitation input has no mcp_server_name",
        )?;
        let Some(message) = raw.message else {
            bail!("the Elicitation input has no message");
        };
        Ok(Form {
            session_id,
            cwd: raw.cwd.filter(|cwd| !cwd.is_empty()),
            server,
            message,
            mode: raw.mode.unwrap_or_else(|| "form".to_owned()),
            requested_schema: raw.requested_schema,
        })
    }
}

/// What a hook payload asks about.
#[derive(Debug, Clone)]
pub enum Payload {
    Tool(ToolCall),
    Elicitation(Form),
}

/// The fields as written; unknown ones (transcript_path, tool_use_id, an elicitation's url
/// and elicitation_id, ...) are ignored, so newer Claude Code versions still work.
#[derive(Deserialize)]
struct Raw {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<Value>,
    permission_mode: Option<String>,
    permission_suggestions: Option<Value>,
    mcp_server_name: Option<String>,
    message: Option<String>,
    mode: Option<String>,
    requested_schema: Option<Value>,
}

/// Reads a Claude Code tool-call payload, or says what is wrong with it.
#[cfg(test)]
pub fn parse(bytes: &[u8]) -> Result<ToolCall> {
    match parse_for(Agent::ClaudeCode, bytes)? {
        Payload::Tool(call) => Ok(call),
        Payload::Elicitation(_) => bail!("an Elicitation payload, not a tool call"),
    }
}

/// Reads `agent`'s hook payload, or says what is wrong with it.
pub fn parse_for(agent: Agent, bytes: &[u8]) -> Result<Payload> {
    let raw: Raw = serde_json::from_slice(bytes).with_context(|| {
        format!(
            "the hook input on standard input is not a JSON object of {}'s hook fields",
            agent.name()
        )
    })?;
    let event = match raw.hook_event_name.as_deref() {
        Some("Elicitation") if agent == Agent::ClaudeCode => {
            return Form::read(raw).map(Payload::Elicitation)
        }
        // Codex's PreToolUse hook can only block a call, not allow one: its approvals go
        // through PermissionRequest.
        Some("PreToolUse") if agent == Agent::Codex => bail!(
            "Codex's PreToolUse hook can only block a call; configure this command as its \
             PermissionRequest hook (examples/codex/config.toml)"
        ),
        Some("PreToolUse") => HookEvent::PreToolUse,
        Some("PermissionRequest") => HookEvent::PermissionRequest,
        Some(other) => bail!(
            "hook_event_name \"{}\" is not one this command answers (PreToolUse, \
             PermissionRequest, and for Claude Code Elicitation); configure it only for those \
             events",
            inbox_protocol::text::one_line(other)
        ),
        None => bail!("the hook input has no hook_event_name"),
    };
    let tool_name = given(
        raw.tool_name,
        "the hook input has no tool_name, so there is nothing to ask about",
    )?;
    let session_id = given(raw.session_id, "the hook input has no session_id")?;
    let tool_input = match raw.tool_input {
        Some(Value::Object(input)) => input,
        Some(_) => bail!("the hook input's tool_input is not a JSON object"),
        None => bail!("the hook input has no tool_input"),
    };
    // Only Claude Code's PermissionRequest offers its own choices; a list that is not a list
    // offers none (the operator can still allow once or deny).
    let suggestions = match (agent, event, raw.permission_suggestions) {
        (Agent::ClaudeCode, HookEvent::PermissionRequest, Some(Value::Array(list))) => list,
        _ => Vec::new(),
    };
    Ok(Payload::Tool(ToolCall {
        agent,
        event,
        session_id,
        cwd: raw.cwd.filter(|cwd| !cwd.is_empty()),
        tool_name,
        tool_input,
        permission_mode: raw.permission_mode,
        suggestions,
    }))
}

/// A text field that is there and not blank, or `missing` as the error.
fn given(field: Option<String>, missing: &str) -> Result<String> {
    match field {
        Some(text) if !text.trim().is_empty() => Ok(text),
        _ => bail!("{missing}"),
    }
}

impl ToolCall {
    /// A string argument of the tool, when present.
    pub fn input_str(&self, key: &str) -> Option<&str> {
        self.tool_input.get(key).and_then(Value::as_str)
    }

    /// The shell command, for the Bash tool.
    pub fn bash_command(&self) -> Option<&str> {
        (self.tool_name == "Bash")
            .then(|| self.input_str("command"))
            .flatten()
    }

    /// The project: the last component of the working directory.
    pub fn project(&self) -> Option<String> {
        let cwd = self.cwd.as_deref()?;
        std::path::Path::new(cwd)
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pre_tool_use_payload_is_read() {
        let call = parse(
            br#"{"session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/home/d/shop",
                "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}"#,
        )
        .unwrap();
        assert_eq!(call.event, HookEvent::PreToolUse);
        assert_eq!(call.bash_command(), Some("ls"));
        assert_eq!(call.project().as_deref(), Some("shop"));
    }

    #[test]
    fn payloads_without_what_is_needed_are_refused() {
        let no_tool = br#"{"session_id": "s", "hook_event_name": "PreToolUse", "tool_input": {}}"#;
        assert!(format!("{:#}", parse(no_tool).unwrap_err()).contains("tool_name"));
        let other = br#"{"session_id": "s", "hook_event_name": "Stop", "tool_name": "Bash",
            "tool_input": {}}"#;
        assert!(format!("{:#}", parse(other).unwrap_err()).contains("\"Stop\""));
        assert!(parse(b"not json").is_err());
    }
}
