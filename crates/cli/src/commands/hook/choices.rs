//! The decision's choices past Allow once and Deny: for Claude Code's PermissionRequest, the
//! agent's own suggestions (Claude Code keeps what they allow); everywhere else, the inbox's
//! own "for this session", scoped as narrowly as the agent's prompt would scope it.

use super::payload::{Agent, HookEvent, ToolCall};
use super::session;
use super::suggestions::{self, Update};

/// What choosing an option does besides allowing the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extra {
    /// The inbox remembers the call's scope for the session ([`session::scope`]).
    Remember,
    /// Claude Code is handed this entry as `updatedPermissions`.
    Permissions(Update),
}

/// One option: its exact text, and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub label: String,
    pub extra: Extra,
}

/// The options `call` offers after Allow once and Deny.
pub fn for_call(call: &ToolCall) -> Vec<Choice> {
    if call.agent == Agent::ClaudeCode && call.event == HookEvent::PermissionRequest {
        // Claude Code's own choices, or none: where its dialog would offer no "don't ask
        // again", neither does the inbox.
        return suggestions::choices(call)
            .into_iter()
            .map(|suggested| Choice {
                label: suggested.label,
                extra: Extra::Permissions(suggested.update),
            })
            .collect();
    }
    vec![Choice {
        label: session::label(call),
        extra: Extra::Remember,
    }]
}

/// Whether the inbox's own session memory applies to `call` (it does not where Claude Code
/// keeps the allowances itself).
pub fn uses_memory(call: &ToolCall) -> bool {
    !(call.agent == Agent::ClaudeCode && call.event == HookEvent::PermissionRequest)
}
