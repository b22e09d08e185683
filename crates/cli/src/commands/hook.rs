//! `hook claude-code`: Claude Code's permission hook. Claude Code runs it before a tool call
//! (PreToolUse), when it would show its permission dialog (PermissionRequest), or when an MCP
//! server asks the user to fill in a form (Elicitation, see `hook/elicitation.rs`); it asks
//! the operator through the inbox and prints the answer.
//!
//! # What Claude Code sends and expects
//!
//! From Claude Code's hooks reference, <https://code.claude.com/docs/en/hooks> (formerly
//! docs.anthropic.com/en/docs/claude-code/hooks), checked against its issue tracker
//! (anthropics/claude-code#41261 quotes the decision summary) and the hook libraries built
//! on it (the Go `hookshot/claude` types, the Elixir `claude_code` hook outputs):
//!
//! - Input, one JSON object on standard input. Every event: `session_id`, `transcript_path`,
//!   `cwd`, `permission_mode` (`default`, `plan`, `acceptEdits`, `bypassPermissions`, ...),
//!   `hook_event_name`. PreToolUse adds `tool_name`, `tool_input` (the tool's arguments:
//!   Bash `command`, `description`, `timeout`; Edit `file_path`, `old_string`, `new_string`,
//!   `replace_all`; MultiEdit `file_path`, `edits`; Write `file_path`, `content`; file paths
//!   absolute) and `tool_use_id`. PermissionRequest adds `tool_name`, `tool_input` and
//!   `permission_suggestions`.
//! - PreToolUse output: `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//!   "permissionDecision": "allow" | "deny" | "ask", "permissionDecisionReason": "..."}}`.
//!   `allow` skips the permission prompt (deny and ask rules in settings still apply); `deny`
//!   stops the call and the reason is shown to Claude; `ask` shows the normal prompt, with
//!   the reason shown to the user.
//! - PermissionRequest output: `{"hookSpecificOutput": {"hookEventName":
//!   "PermissionRequest", "decision": {"behavior": "allow" | "deny", "message": "..."}}}`
//!   (`message` for deny, told to Claude; `updatedPermissions` for allow, the entry of
//!   `permission_suggestions` the operator chose, see `hook/suggestions.rs`; also
//!   `updatedInput` and `interrupt`, unused here). There is no "ask": a hook that prints no
//!   decision leaves the dialog to show as usual. Rechecked against the reference on
//!   2026-12-05 (through the mirror github.com/thevibeworks/claude-code-docs, snapshot of
//!   2026-08-22).
//! - Exit codes: 0 = success, standard output parsed as JSON (JSON is read only on exit 0);
//!   2 = blocking error, standard error fed to Claude, and for PreToolUse the call is
//!   blocked; any other code = non-blocking error, standard error shown to the user and the
//!   normal permission flow goes on.
//! - A hook has a time limit of its own (`timeout` in the settings, in seconds); past it
//!   Claude Code goes on without the hook. The example settings give it more than
//!   `--timeout`.
//!
//! # What this command does with it
//!
//! Only a person's answer allows. A timeout, an expired or withdrawn request, a spool that
//! cannot be used, a damaged session memory: all fall back to Claude Code's own prompt
//! (exit 0, `ask` for PreToolUse, nothing for PermissionRequest). Input this command cannot
//! read prints nothing on standard output and exits 1 (never 2, which would block a call
//! the operator never saw): Claude Code then asks as usual.

mod choices;
mod decision;
mod diff;
mod elicitation;
mod payload;
mod request;
mod session;
mod stopped;
mod suggestions;
mod wait;

use std::io::Read;

use anyhow::{Context, Result};
use inbox_client::{prepare, Outcome, OutcomeStatus};

use crate::args::{AgentHookArgs, HookAgent, HookArgs, LocationArgs};
use crate::{exit, output};

use choices::{Choice, Extra};
use decision::Decision;
use payload::{Agent, Payload, ToolCall};
use session::SessionMemory;
use wait::Waited;

/// Hook input is a tool call's arguments: a Write of a large file is the biggest. Anything
/// past this is not a payload to judge here.
const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

pub fn run(locations: &LocationArgs, args: &HookArgs) -> Result<u8> {
    match &args.agent {
        HookAgent::ClaudeCode(args) => answer_hook(locations, args, Agent::ClaudeCode),
        HookAgent::Codex(args) => answer_hook(locations, args, Agent::Codex),
    }
}

fn answer_hook(locations: &LocationArgs, args: &AgentHookArgs, agent: Agent) -> Result<u8> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut input)
        .context("cannot read the hook input from standard input")?;
    if input.len() as u64 > MAX_INPUT_BYTES {
        anyhow::bail!("the hook input is larger than {MAX_INPUT_BYTES} bytes; not asking");
    }
    // Bad input is an error: exit 1, nothing on standard output, Claude Code asks itself.
    let call = match payload::parse_for(agent, &input)? {
        Payload::Tool(call) => call,
        Payload::Elicitation(form) => return elicitation::answer(locations, args, &form),
    };
    let memory = SessionMemory::open(&SessionMemory::default_root(agent)?, &call.session_id)?;

    let decision = decide(locations, args, &call, &memory);
    if let Some(json) = decision::output(call.event, &decision) {
        output::json_text(&format!("{json}\n"))?;
    }
    if let Decision::Fallback { reason } = &decision {
        output::stderr(&format!("answer-inbox: {reason}"));
    }
    Ok(exit::OK)
}

/// The decision for `call`: from the session's memory, else from the operator. Every error
/// becomes a fallback, never an allow.
fn decide(
    locations: &LocationArgs,
    args: &AgentHookArgs,
    call: &ToolCall,
    memory: &SessionMemory,
) -> Decision {
    if choices::uses_memory(call) {
        match memory.allows(call, chrono::Utc::now()) {
            Ok(true) => {
                return Decision::Allow {
                    reason: "allowed for this session in Answer Inbox".into(),
                    permissions: Vec::new(),
                }
            }
            Ok(false) => {}
            // A memory that cannot be read allows nothing; the operator is asked as usual.
            Err(error) => output::stderr(&format!("answer-inbox: warning: {error:#}")),
        }
    }
    match ask(locations, args, call, memory) {
        Ok(decision) => decision,
        Err(error) => Decision::Fallback {
            reason: format!("could not ask through Answer Inbox: {error:#}"),
        },
    }
}

/// Places the request, waits, and reads the operator's answer.
fn ask(
    locations: &LocationArgs,
    args: &AgentHookArgs,
    call: &ToolCall,
    memory: &SessionMemory,
) -> Result<Decision> {
    if !request::shows_whole(call) {
        // An answer to the part the operator saw would allow the whole call.
        return Ok(Decision::Fallback {
            reason: format!(
                "this {} call is too long to show in full in Answer Inbox; asking in the terminal",
                call.tool_name
            ),
        });
    }
    let offered = choices::for_call(call);
    let labels: Vec<&str> = offered.iter().map(|choice| choice.label.as_str()).collect();
    let body = request::build(call, args.timeout, &labels);
    let prepared = prepare(serde_json::to_vec(&body)?, None)?;
    Ok(
        match wait::place_and_wait(locations, args, &prepared, call.agent)? {
            Waited::Settled(outcome) => from_outcome(call, memory, &offered, &outcome),
            Waited::Nothing(reason) => Decision::Fallback { reason },
        },
    )
}

/// The decision an outcome carries. Only an option that was offered, matched by its exact
/// text, allows anything.
fn from_outcome(
    call: &ToolCall,
    memory: &SessionMemory,
    offered: &[Choice],
    outcome: &Outcome,
) -> Decision {
    let id = &outcome.id;
    match outcome.status {
        OutcomeStatus::Declined => Decision::Deny {
            message: match outcome.reason.as_deref().map(str::trim) {
                Some(reason) if !reason.is_empty() => reason.to_owned(),
                _ => "The operator declined this in Answer Inbox.".into(),
            },
        },
        OutcomeStatus::Answered => {
            let chosen = outcome
                .answers
                .get(request::DECISION_ID)
                .and_then(serde_json::Value::as_str);
            let by = &outcome.answered_by;
            let extra = chosen.and_then(|chosen| offered.iter().find(|c| c.label == chosen));
            match (chosen, extra) {
                (Some(request::ALLOW_ONCE), _) => Decision::Allow {
                    reason: format!("allowed once by {by} in Answer Inbox"),
                    permissions: Vec::new(),
                },
                (Some(request::DENY), _) => Decision::Deny {
                    message: match outcome
                        .answers
                        .get(request::REASON_ID)
                        .and_then(serde_json::Value::as_str)
                        .map(str::trim)
                    {
                        Some(reason) if !reason.is_empty() => reason.to_owned(),
                        _ => format!("{by} denied this in Answer Inbox."),
                    },
                },
                (_, Some(choice)) => match &choice.extra {
                    Extra::Remember => {
                        if let Err(error) = memory.remember(call, chrono::Utc::now()) {
                            // This call is still allowed; later ones are asked again.
                            output::stderr(&format!(
                                "answer-inbox: warning: cannot remember the allowance: {error:#}"
                            ));
                        }
                        Decision::Allow {
                            reason: format!("{by} chose \"{}\" in Answer Inbox", choice.label),
                            permissions: Vec::new(),
                        }
                    }
                    Extra::Permissions(update) => Decision::Allow {
                        reason: format!("{by} chose \"{}\" in Answer Inbox", choice.label),
                        permissions: vec![update.clone()],
                    },
                },
                _ => Decision::Fallback {
                    reason: format!("request {id} has no decision Answer Inbox understands"),
                },
            }
        }
        OutcomeStatus::Expired => Decision::Fallback {
            reason: format!("request {id} expired unanswered; asking in the terminal"),
        },
        OutcomeStatus::Defaulted | OutcomeStatus::Rejected => Decision::Fallback {
            reason: format!(
                "request {id} was {} by {}, not decided by a person",
                outcome.status, outcome.answered_by
            ),
        },
    }
}
