//! Which requests come from agents, and why their own timeout never answers for them.
//!
//! An agent chooses its questions, their defaults and its timeout. Were a rule's
//! `on_expiry = "default"` to reach its request, the agent could approve its own proposal
//! by asking with a one-second timeout and a default of yes: nobody would have decided
//! anything. So expiry defaults reach an agent's request only when the rule that matched it
//! says so explicitly, by naming `min_timeout`, and only when the request allowed at least
//! that long ([`crate::Verdict::expiry_refusal`]). Every other rule lets an agent's request
//! expire without answers.
//!
//! An agent is known by what its front doors write into `source`, which the agent itself
//! does not choose there: `answer-inbox mcp` writes `tool = "ask_operator"` into every
//! request (crates/mcp/src/origin.rs), and the agent hooks write the agent as `app`
//! (crates/cli/src/commands/hook/payload.rs). A file asker that claims to be an agent only
//! gives up expiry defaults; an agent that writes its own request files, with a shell and
//! write access to the spool, is a file asker the policy cannot tell apart (docs/POLICY.md,
//! "What an agent can and cannot get without a person").

use inbox_protocol::Request;

/// `source.tool` values that mark an agent's request: the MCP server's tool.
pub const AGENT_TOOLS: &[&str] = &["ask_operator"];

/// `source.app` values that mark an agent's request: the agents the hooks ask for.
pub const AGENT_APPS: &[&str] = &["claude-code", "codex"];

/// What marks `request` as an agent's, in words (`source tool "ask_operator"`), or `None`
/// for any other asker. Compared as rule globs compare, without regard to case.
pub fn agent_marker(request: &Request) -> Option<String> {
    let source = &request.source;
    let named = |value: Option<&str>, markers: &[&str]| {
        let value = value?.trim();
        markers
            .iter()
            .any(|marker| marker.eq_ignore_ascii_case(value))
            .then(|| value.to_owned())
    };
    if let Some(tool) = named(source.tool.as_deref(), AGENT_TOOLS) {
        return Some(format!("source tool {tool:?}"));
    }
    named(source.app.as_deref(), AGENT_APPS).map(|app| format!("source app {app:?}"))
}

/// Whether `request` comes from an agent (see [`agent_marker`]).
pub fn is_agent(request: &Request) -> bool {
    agent_marker(request).is_some()
}
